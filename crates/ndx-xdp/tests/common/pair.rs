//! Two namespaces joined by a veth pair, for the attach and AF_XDP tests.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use ndx_xdp::{NdxXdp, XdpCounters};

use super::Netns;

/// Two namespaces joined by a veth pair: `xa` (10.77.0.1) in `a`, `xb` (10.77.0.2) in `b`.
pub struct Pair {
    pub a: Netns,
    pub b: Netns,
}

impl Pair {
    /// `queues` RX/TX queues on each side.
    pub fn new(mtu: u32, queues: u32) -> Self {
        let q = queues.to_string();
        let a = Netns::new();
        let b = Netns::new();
        a.ip(&[
            "link",
            "add",
            "xa",
            "numrxqueues",
            &q,
            "numtxqueues",
            &q,
            "type",
            "veth",
            "peer",
            "name",
            "xb",
            "numrxqueues",
            &q,
            "numtxqueues",
            &q,
            "netns",
            &b.name,
        ]);
        let mtu = mtu.to_string();
        a.ip(&["link", "set", "xa", "mtu", &mtu, "up"]);
        b.ip(&["link", "set", "xb", "mtu", &mtu, "up"]);
        a.ip(&["addr", "add", "10.77.0.1/24", "dev", "xa"]);
        b.ip(&["addr", "add", "10.77.0.2/24", "dev", "xb"]);
        Self { a, b }
    }

    pub fn xdp_attached(&self) -> bool {
        self.a
            .ip(&["link", "show", "dev", "xa"])
            .contains("prog/xdp")
    }

    /// Whether the program is gone, polling for up to 5 s: a process forked by a parallel
    /// test (every `ip` command) holds a copy of our link fd until it execs, which can delay
    /// the release by a moment. The assertion is on the outcome, not the time.
    pub fn xdp_detached(&self) -> bool {
        let start = Instant::now();
        while self.xdp_attached() {
            if start.elapsed() > Duration::from_secs(5) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// Sends UDP datagrams from `b` to `a`:6363 (from a thread that enters `b`).
    pub fn send(&self, payload: &[u8], count: usize) {
        let ns = self.b.name.clone();
        let payload = payload.to_vec();
        std::thread::spawn(move || {
            let b = Netns { name: ns };
            b.enter();
            std::mem::forget(b); // the namespace belongs to the Pair
            let s = UdpSocket::bind("10.77.0.2:0").unwrap();
            for _ in 0..count {
                s.send_to(&payload, "10.77.0.1:6363").unwrap();
            }
        })
        .join()
        .unwrap();
    }
}

/// Polls the counters until `ok` holds (up to 5 s; the assertion is on the value, not the
/// time it took).
pub fn wait_for(xdp: &NdxXdp, ok: impl Fn(&XdpCounters) -> bool) -> XdpCounters {
    let start = Instant::now();
    loop {
        let c = xdp.counters().unwrap();
        if ok(&c) || start.elapsed() > Duration::from_secs(5) {
            return c;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `f` on a fresh thread that has entered namespace `a` of a new pair.
pub fn in_pair(mtu: u32, queues: u32, f: impl FnOnce(&Pair) + Send + 'static) {
    std::thread::spawn(move || {
        let pair = Pair::new(mtu, queues);
        pair.a.enter();
        f(&pair);
    })
    .join()
    .unwrap_or_else(|e| std::panic::resume_unwind(e));
}
