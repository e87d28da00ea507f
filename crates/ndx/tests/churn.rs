//! Churn under load (issue 34, part 5), as root: while `ndx gen` fetches continuously on a
//! stable prefix through `ndx run` (AF_XDP), a client drives the control socket as fast as
//! it answers for ~10 s:
//! - route adds and removes on other prefixes (`route-add`/`route-remove`);
//! - faces coming and going (`face-add`, a `route-add` through it, `face-remove`).
//!
//! Asserted: every request acknowledged (`ok`), no exchange lost on the stable prefix
//! (`ndx gen`: no timeout, no Nack), no routing drop in the router, and the tables back to
//! where they started. The achieved rates are printed (`--nocapture`), not asserted (the
//! machine is noisy); `benches/results/churn.md` records them.
//!
//! The client pipelines: one connection, up to `WINDOW` requests written ahead of their
//! answers (the control socket answers a connection's requests in order).
//!
//! Without root (or BPF) the tests print `skipping: <reason>`; with `NDX_REQUIRE_ROOT_TESTS=1`
//! (CI) they fail instead.

mod support;
mod topo;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Proc, skip};
use topo::{Family, Line, NDX, Router, face_table, gen_report, ok, spawn_logged, total};

/// Requests written ahead of their answers.
const WINDOW: u64 = 256;

/// How long the churn lasts (the generator starts 1 s before and stops a lifetime after).
const CHURN: Duration = Duration::from_secs(10);

/// What a churn client achieved.
#[derive(Debug)]
struct Churn {
    ops: u64,
    failed: Vec<String>,
    elapsed: Duration,
}

impl Churn {
    fn rate(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }
}

/// Sends the requests `next(i)` (i = 0, 1, ...) over one control connection for `dur`,
/// about `WINDOW` in flight, stopping at a multiple of `cycle` requests, and collects the
/// answers.
fn churn(
    sock: &Path,
    dur: Duration,
    cycle: u64,
    next: impl Fn(u64) -> Value + Send + Sync,
) -> Churn {
    let stream = UnixStream::connect(sock).expect("control socket");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut w = stream.try_clone().unwrap();
    let answered = AtomicU64::new(0);
    let written = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut sent = 0u64;
            let mut buf = String::new();
            while start.elapsed() < dur {
                let room = WINDOW.saturating_sub(sent - answered.load(Ordering::Acquire));
                if room == 0 {
                    std::thread::yield_now();
                    continue;
                }
                buf.clear();
                let mut k = 0;
                while k < room.min(64) || !sent.is_multiple_of(cycle) {
                    buf.push_str(&next(sent).to_string());
                    buf.push('\n');
                    sent += 1;
                    k += 1;
                }
                w.write_all(buf.as_bytes()).expect("write a request");
                written.store(sent, Ordering::Release);
            }
            done.store(true, Ordering::Release);
        });
        let mut r = BufReader::new(&stream);
        let mut failed = Vec::new();
        let mut line = String::new();
        let mut n = 0u64;
        loop {
            let finished = done.load(Ordering::Acquire);
            if n < written.load(Ordering::Acquire) {
                line.clear();
                match r.read_line(&mut line) {
                    Ok(0) => panic!("the control socket closed the connection"),
                    Ok(_) => check(&line, &mut failed),
                    Err(e) => panic!("reading an answer: {e}"),
                }
                n += 1;
                answered.store(n, Ordering::Release);
            } else if finished {
                return Churn {
                    ops: n,
                    failed,
                    elapsed: start.elapsed(),
                };
            } else {
                std::thread::yield_now();
            }
        }
    })
}

fn check(line: &str, failed: &mut Vec<String>) {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    if v["ok"] != true && failed.len() < 10 {
        failed.push(line.trim().to_owned());
    }
}

/// The line, its router, `ndx serve /t/gen` in the producer namespace.
fn setup() -> (Line, Router, Proc) {
    let line = Line::new(Family::V4, 1, 1500);
    let log = line.scratch.path("serve.log");
    let mut cmd = line.p.cmd(NDX);
    cmd.args(["serve", "/t/gen", "-n", "1000", "-b"])
        .arg(line.producer_endpoint());
    let serve = spawn_logged(cmd, "ndx serve", &log);
    let router = line.start_udp_router("");
    (line, router, serve)
}

/// The generator's InterestLifetime: long enough that a process the machine does not
/// schedule for a while (2 CPUs shared by everything) does not count as a loss; an Interest
/// lost in the router still times out before the generator stops.
const LIFETIME_MS: u64 = 4000;

/// `ndx gen` on the stable prefix from a fixed port (one consumer face for the warm-up and
/// the run), for `secs` seconds or `count` Interests.
fn gen_cmd(line: &Line, secs: u64, count: Option<u64>) -> Command {
    let mut cmd: Command = line.c.cmd(NDX);
    cmd.args(["gen", "/t/gen", "-t", &line.router_target(), "-w", "64"])
        .args(["--bind", &line.endpoint(1, 1, 7001)])
        .args(["--lifetime-ms", &LIFETIME_MS.to_string()])
        .args(["-d", &secs.to_string()]);
    if let Some(c) = count {
        cmd.args(["-c", &c.to_string()]);
    }
    cmd
}

/// Runs `ndx gen` on the stable prefix from 1 s before `client` starts until a lifetime
/// after the churn's end (so an Interest lost during the churn is counted as a timeout);
/// returns gen's output and the churn.
fn under_load(line: &Line, client: impl FnOnce() -> Churn + Send) -> (Output, Churn) {
    let secs = 1 + CHURN.as_secs() + LIFETIME_MS / 1000 + 1;
    let mut cmd = gen_cmd(line, secs, None);
    std::thread::scope(|s| {
        let generator = s.spawn(move || cmd.output().expect("ndx gen runs"));
        std::thread::sleep(Duration::from_secs(1));
        let c = client();
        (generator.join().expect("gen"), c)
    })
}

/// A few exchanges first: the consumer's face exists before the tables are compared.
fn warm_up(line: &Line) {
    let g = gen_cmd(line, 10, Some(10)).output().unwrap();
    ok(&g, "ndx gen (warm-up)");
    assert!(
        String::from_utf8_lossy(&g.stdout).contains("(10 Interests satisfied)"),
        "{}",
        String::from_utf8_lossy(&g.stdout)
    );
}

/// Asserts what every churn test asserts, and prints the numbers.
fn verify(what: &str, router: &Router, gen_out: &Output, c: &Churn, before: &Value) {
    ok(gen_out, "ndx gen");
    let (sent, satisfied, nacks, timeouts) = gen_report(gen_out);
    println!(
        "{what}: {} requests in {:.2} s = {:.0} ops/s acknowledged; ndx gen: {sent} Interests, \
         {satisfied} satisfied ({:.0}/s), {nacks} Nacks, {timeouts} timeouts",
        c.ops,
        c.elapsed.as_secs_f64(),
        c.rate(),
        satisfied as f64 / (2 + CHURN.as_secs() + LIFETIME_MS / 1000) as f64,
    );
    let s = router.status();
    println!("{}", String::from_utf8_lossy(&gen_out.stdout));
    println!("{}", s["counters"]);
    assert!(
        c.failed.is_empty(),
        "{what}: refused requests: {:?}",
        c.failed
    );
    assert!(c.ops > 0);
    assert_eq!(
        (nacks, timeouts),
        (0, 0),
        "{what}: exchanges lost on /t/gen"
    );
    assert!(
        satisfied + 64 >= sent && satisfied > 0,
        "{what}: {sent} sent, {satisfied} answered"
    );
    for c in [
        "drop_no_route",
        "drop_pit_full",
        "tx_ring_full",
        "tx_link_down",
        "exchange_full",
        "host_queue_full",
    ] {
        assert_eq!(total(&s, c), 0, "{what}: {c}: {}", s["counters"]);
    }
    assert_eq!(s["routes"], before["routes"], "{what}: routes left behind");
    assert_eq!(
        face_table(&s),
        face_table(before),
        "{what}: faces left behind"
    );
}

#[test]
fn route_churn_under_load_loses_nothing() {
    if skip() {
        return;
    }
    let (line, router, _serve) = setup();
    warm_up(&line);
    let before = router.status();
    let sock = router.sock.clone();
    let (gen_out, c) = under_load(&line, || {
        churn(&sock, CHURN, 2, |i| {
            // Pairs: add /churn/<k>/<i/2>, then remove it.
            let prefix = format!("/churn/{}/{}", (i / 2) % 997, i / 2);
            if i % 2 == 0 {
                json!({"cmd": "route-add", "prefix": prefix, "face": "producer", "cost": 1})
            } else {
                json!({"cmd": "route-remove", "prefix": prefix, "face": "producer"})
            }
        })
    });
    verify("route churn", &router, &gen_out, &c, &before);
}

#[test]
fn face_churn_under_load_loses_nothing() {
    if skip() {
        return;
    }
    let (line, router, _serve) = setup();
    warm_up(&line);
    let before = router.status();
    let sock = router.sock.clone();
    let remote = line.ip(2, 1);
    let (gen_out, c) = under_load(&line, || {
        churn(&sock, CHURN, 3, |i| {
            // Triples: a face to the producer's address on its own port, a route through
            // it, its removal (which takes the route with it).
            let k = i / 3;
            let name = format!("churn{k}");
            match i % 3 {
                0 => json!({
                    "cmd": "face-add",
                    "name": name,
                    "remote": format!("udp://{remote}:{}", 10_000 + k % 50_000),
                }),
                1 => json!({"cmd": "route-add", "prefix": format!("/churnf/{k}"), "face": name}),
                _ => json!({"cmd": "face-remove", "face": name}),
            }
        })
    });
    verify("face churn", &router, &gen_out, &c, &before);
}
