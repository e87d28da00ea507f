//! Shard liveness, for `READY=1` and the systemd watchdog: each shard worker bumps its own
//! heartbeat (a relaxed store, once when it enters its loop and then with every counter
//! publication, every 10 ms; never per packet), and the control thread reads them.
//!
//! - A heartbeat above 0 means the worker entered its loop: `READY=1` waits for all of them.
//! - [`Liveness::stuck`] names the shards whose heartbeat did not move since its last call:
//!   the control thread withholds `WATCHDOG=1` while any is stuck, so systemd restarts a
//!   router whose worker hangs even though its control thread is fine.
//!
//! Test-only hook: `NDX_TEST_FREEZE_SHARD=<shard>[:<file>]` makes that shard's worker stop
//! working (it sleeps, still honouring the stop flag) at its first beat after `<file>`
//! exists; without a file, at its second beat (the first, on entering its loop, is never
//! withheld: the router's start waits for it). It is read once at start and inert when unset; it exists for the watchdog's
//! end-to-end test (`crates/ndx/tests/systemd.rs`) and nothing else.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The environment variable of the test-only freeze hook.
pub(crate) const FREEZE_ENV: &str = "NDX_TEST_FREEZE_SHARD";

/// One heartbeat per shard.
#[derive(Debug)]
pub(crate) struct Heartbeats {
    beats: Box<[AtomicU64]>,
}

impl Heartbeats {
    /// Heartbeats for `shards` shards, all at 0 (not started).
    pub(crate) fn new(shards: usize) -> Arc<Self> {
        Arc::new(Self {
            beats: (0..shards).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// Whether every worker has entered its loop.
    pub(crate) fn all_started(&self) -> bool {
        self.beats.iter().all(|b| b.load(Ordering::Relaxed) > 0)
    }

    /// The current values, in shard order.
    pub(crate) fn read(&self) -> Vec<u64> {
        self.beats
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect()
    }

    /// Shard `shard`'s handle for its worker (with the test-only freeze hook, if set for it).
    pub(crate) fn beat_for(self: &Arc<Self>, shard: usize) -> Beat {
        Beat {
            all: self.clone(),
            shard,
            n: 0,
            freeze: Freeze::from_env(shard),
        }
    }
}

/// A worker's side of its heartbeat.
#[derive(Debug)]
pub(crate) struct Beat {
    all: Arc<Heartbeats>,
    shard: usize,
    n: u64,
    freeze: Option<Freeze>,
}

impl Beat {
    /// Moves the heartbeat (the worker made progress). With the test-only freeze hook due,
    /// blocks instead until `stop` is set, without beating; never on the first beat, which
    /// says the loop started (the router's start waits for it).
    pub(crate) fn beat(&mut self, stop: &AtomicBool) {
        if self.n > 0
            && let Some(f) = &self.freeze
            && f.due()
        {
            tracing::warn!(
                "shard {}: frozen on purpose ({FREEZE_ENV}, a test-only hook)",
                self.shard
            );
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
            }
            self.freeze = None;
            return;
        }
        self.n += 1;
        self.all.beats[self.shard].store(self.n, Ordering::Relaxed);
    }
}

/// The control thread's memory of the heartbeats at its last watchdog check.
#[derive(Debug)]
pub(crate) struct Liveness {
    last: Vec<u64>,
}

impl Liveness {
    /// Starts from the heartbeats' current values.
    pub(crate) fn new(hb: &Heartbeats) -> Self {
        Self { last: hb.read() }
    }

    /// The shards whose heartbeat did not move since the last call (or since [`Liveness::new`]);
    /// empty when every worker made progress.
    pub(crate) fn stuck(&mut self, hb: &Heartbeats) -> Vec<usize> {
        let now = hb.read();
        let stuck = now
            .iter()
            .zip(&self.last)
            .enumerate()
            .filter(|(_, (a, b))| a == b)
            .map(|(i, _)| i)
            .collect();
        self.last = now;
        stuck
    }
}

/// The control thread's side of systemd: `READY=1` once every shard polls, `WATCHDOG=1`
/// only while every shard makes progress, a `STATUS=` line every few seconds, and
/// `STOPPING=1`. Does nothing outside systemd (no `NOTIFY_SOCKET`).
#[derive(Debug)]
pub(crate) struct Supervisor {
    notifier: Option<crate::notify::Notifier>,
    hb: Arc<Heartbeats>,
    live: Liveness,
    ready: bool,
    stuck: bool,
    next_ping: Instant,
    next_status: Instant,
}

/// How often `STATUS=` is refreshed.
const STATUS_EVERY: Duration = Duration::from_secs(5);

impl Supervisor {
    /// Watches `hb` and notifies through `notifier` (`None`: outside systemd).
    pub(crate) fn new(notifier: Option<crate::notify::Notifier>, hb: Arc<Heartbeats>) -> Self {
        let now = Instant::now();
        Self {
            notifier,
            live: Liveness::new(&hb),
            hb,
            ready: false,
            stuck: false,
            next_ping: now,
            next_status: now,
        }
    }

    /// Called on every control-loop turn; `summary` is the one-line `STATUS=` text, built only
    /// when it is sent.
    pub(crate) fn turn(&mut self, now: Instant, summary: impl FnOnce() -> String) {
        let Some(n) = &self.notifier else {
            return;
        };
        if !self.ready {
            if !self.hb.all_started() {
                return;
            }
            self.ready = true;
            self.live = Liveness::new(&self.hb);
            n.send(&format!(
                "READY=1\n{}",
                crate::notify::status_line(&summary())
            ));
            self.next_status = now + STATUS_EVERY;
            self.next_ping = now + n.watchdog_interval().unwrap_or_default();
            tracing::info!("systemd: ready (every interface attached, every shard polling)");
            return;
        }
        if let Some(every) = n.watchdog_interval()
            && now >= self.next_ping
        {
            self.next_ping = now + every;
            let stuck = self.live.stuck(&self.hb);
            if stuck.is_empty() {
                n.send("WATCHDOG=1");
                if std::mem::take(&mut self.stuck) {
                    tracing::warn!("every shard makes progress again; watchdog pings resumed");
                }
            } else {
                self.stuck = true;
                let list: Vec<String> = stuck.iter().map(ToString::to_string).collect();
                n.send(&crate::notify::status_line(&format!(
                    "shard {} stuck: watchdog pings withheld",
                    list.join(", ")
                )));
                tracing::warn!(
                    "shard {} made no progress for {} ms: withholding the systemd watchdog \
                     ping (systemd restarts ndx if it stays stuck)",
                    list.join(", "),
                    every.as_millis()
                );
            }
        }
        if now >= self.next_status {
            self.next_status = now + STATUS_EVERY;
            n.send(&crate::notify::status_line(&summary()));
        }
    }

    /// Sends `STOPPING=1` (when under systemd).
    pub(crate) fn stopping(&self) {
        if let Some(n) = &self.notifier {
            n.send("STOPPING=1");
        }
    }
}

/// The test-only freeze hook of one shard.
#[derive(Debug)]
struct Freeze {
    /// Freeze once this file exists (`None`: at once).
    file: Option<PathBuf>,
}

impl Freeze {
    fn from_env(shard: usize) -> Option<Self> {
        let v = std::env::var(FREEZE_ENV).ok()?;
        Self::parse(&v, shard)
    }

    /// `<shard>[:<file>]`, for `shard`; `None` when it names another shard or is malformed
    /// (a warning then says so).
    fn parse(v: &str, shard: usize) -> Option<Self> {
        let (s, file) = match v.split_once(':') {
            Some((s, f)) => (s, Some(PathBuf::from(f))),
            None => (v, None),
        };
        match s.trim().parse::<usize>() {
            Ok(n) if n == shard => Some(Self { file }),
            Ok(_) => None,
            Err(_) => {
                tracing::warn!("{FREEZE_ENV}={v:?}: expected <shard>[:<file>]; ignored");
                None
            }
        }
    }

    fn due(&self) -> bool {
        self.file.as_ref().is_none_or(|f| f.exists())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_when_every_shard_entered_its_loop() {
        let hb = Heartbeats::new(2);
        let stop = AtomicBool::new(false);
        let mut b0 = hb.beat_for(0);
        let mut b1 = hb.beat_for(1);
        b0.freeze = None;
        b1.freeze = None;
        assert!(!hb.all_started());
        b0.beat(&stop);
        assert!(!hb.all_started());
        b1.beat(&stop);
        assert!(hb.all_started());
    }

    #[test]
    fn a_shard_that_does_not_beat_is_stuck() {
        let hb = Heartbeats::new(3);
        let stop = AtomicBool::new(false);
        let mut beats: Vec<Beat> = (0..3)
            .map(|i| {
                let mut b = hb.beat_for(i);
                b.freeze = None;
                b
            })
            .collect();
        let mut live = Liveness::new(&hb);
        assert_eq!(live.stuck(&hb), vec![0, 1, 2]);
        for b in &mut beats {
            b.beat(&stop);
        }
        assert!(live.stuck(&hb).is_empty());
        beats[0].beat(&stop);
        beats[2].beat(&stop);
        assert_eq!(live.stuck(&hb), vec![1]);
        beats[1].beat(&stop);
        assert_eq!(live.stuck(&hb), vec![0, 2]);
    }

    /// Every datagram waiting on `server`.
    fn drain(server: &std::os::unix::net::UnixDatagram) -> Vec<String> {
        let mut out = Vec::new();
        let mut buf = [0u8; 512];
        while let Ok(n) = server.recv(&mut buf) {
            out.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        out
    }

    #[test]
    fn supervisor_readies_then_pings_only_while_every_shard_beats() {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixDatagram};
        let name = format!("ndx-supervisor-test-{}", std::process::id());
        let server =
            UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap())
                .unwrap();
        server.set_nonblocking(true).unwrap();
        let n =
            crate::notify::Notifier::new(Some(&format!("@{name}")), Some("2000000"), None).unwrap();
        let hb = Heartbeats::new(2);
        let stop = AtomicBool::new(false);
        let mut beats: Vec<Beat> = (0..2)
            .map(|i| {
                let mut b = hb.beat_for(i);
                b.freeze = None;
                b
            })
            .collect();
        let mut sup = Supervisor::new(n, hb.clone());
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        // Shard 1 has not entered its loop: not ready, nothing sent.
        beats[0].beat(&stop);
        sup.turn(at(0), || "s".into());
        assert!(drain(&server).is_empty());
        beats[1].beat(&stop);
        sup.turn(at(10), || "2 shards".into());
        assert_eq!(drain(&server), vec!["READY=1\nSTATUS=2 shards"]);
        // Both beat: a ping every second (half of WATCHDOG_USEC).
        for b in &mut beats {
            b.beat(&stop);
        }
        sup.turn(at(500), || "s".into());
        assert!(drain(&server).is_empty(), "no ping before the interval");
        sup.turn(at(1010), || "s".into());
        assert_eq!(drain(&server), vec!["WATCHDOG=1"]);
        // Shard 1 stops beating: no ping, as long as it stays stuck.
        beats[0].beat(&stop);
        sup.turn(at(2020), || "s".into());
        assert_eq!(
            drain(&server),
            vec!["STATUS=shard 1 stuck: watchdog pings withheld"]
        );
        beats[0].beat(&stop);
        sup.turn(at(3030), || "s".into());
        assert!(!drain(&server).iter().any(|m| m.contains("WATCHDOG")));
        // It moves again: pings resume, and the status line is refreshed (5 s).
        for b in &mut beats {
            b.beat(&stop);
        }
        sup.turn(at(5100), || "later".into());
        assert_eq!(drain(&server), vec!["WATCHDOG=1", "STATUS=later"]);
        sup.stopping();
        assert_eq!(drain(&server), vec!["STOPPING=1"]);
    }

    #[test]
    fn supervisor_without_systemd_does_nothing() {
        let hb = Heartbeats::new(1);
        let mut sup = Supervisor::new(None, hb);
        sup.turn(Instant::now(), || {
            panic!("no status is built outside systemd")
        });
        sup.stopping();
    }

    #[test]
    fn freeze_hook_parsing() {
        assert!(Freeze::parse("0", 0).is_some_and(|f| f.file.is_none() && f.due()));
        assert!(Freeze::parse("1", 0).is_none());
        assert!(Freeze::parse("x", 0).is_none());
        let f = Freeze::parse("2:/nonexistent/ndx-freeze", 2).unwrap();
        assert!(!f.due());
    }

    #[test]
    fn a_frozen_beat_blocks_until_stop_without_beating_after_the_first() {
        let hb = Heartbeats::new(1);
        let stop = Arc::new(AtomicBool::new(false));
        let mut b = hb.beat_for(0);
        b.freeze = Some(Freeze { file: None });
        // The first beat (the loop started) is never withheld: the router's start waits for it.
        b.beat(&stop);
        assert!(hb.all_started());
        let s = stop.clone();
        let t = std::thread::spawn(move || {
            b.beat(&s);
            b
        });
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(hb.read(), vec![1]);
        stop.store(true, Ordering::Relaxed);
        let mut b = t.join().unwrap();
        assert_eq!(hb.read(), vec![1]);
        // The hook fires once; afterwards the worker beats again.
        b.beat(&AtomicBool::new(false));
        assert_eq!(hb.read(), vec![2]);
    }
}
