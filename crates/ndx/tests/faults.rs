//! Process and link faults (issue 34, part 4), as root, on real namespaces, veths, XDP and
//! AF_XDP:
//! - `ndx run` killed with SIGKILL or SIGSEGV leaves no XDP program on its interfaces
//!   (`ip -d link show`, `bpftool net`), and a new `ndx run` on the same interfaces starts
//!   and forwards;
//! - an interface set down while the router forwards on the others: their exchanges
//!   continue without a loss, the router logs and counts it (`interfaces` and
//!   `tx_link_down` in `ndx status --json`), sends nothing there and does not kick its
//!   sockets, and forwards there again once it is up;
//! - an interface deleted: the same, its state `gone`; the router keeps forwarding on the
//!   others, stops cleanly, and a new `ndx run` uses the interface created again;
//! - the producer killed in the middle of a fetch: the consumer times out (ndx sends no Nack
//!   for an Interest that expires), the PIT drains to 0 entries after the Interests'
//!   lifetimes, and neither the face table nor the routes grow; with the route removed the
//!   consumer gets Nack NoRoute at once.
//!
//! Without root (or BPF) the tests print `skipping: <reason>`; with `NDX_REQUIRE_ROOT_TESTS=1`
//! (CI) they fail instead.

mod support;
mod topo;

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use support::{Netns, Proc, addr, skip, veth, wait_for};
use topo::{Family, Line, NDX, Router, gen_report, ok, spawn_logged, total};

/// Whether `ip -d link show IF` or `bpftool net show dev IF` (in `ns`) shows an XDP program.
fn any_xdp(ns: &Netns, ifname: &str) -> bool {
    let link = ns.try_run(&["ip", "-d", "link", "show", ifname]);
    let link = String::from_utf8_lossy(&link.stdout);
    let bpftool = ns.try_run(&["bpftool", "net", "show", "dev", ifname]);
    let bpftool = String::from_utf8_lossy(&bpftool.stdout);
    link.contains("xdp") || bpftool.lines().any(|l| l.contains(ifname))
}

/// Fetches `prefix` (served from `file`) through `line`'s router and checks the bytes.
fn fetch_ok(line: &Line, prefix: &str, want: &[u8], what: &str) {
    let out = line.scratch.path(&format!("got-{}", support::tag()));
    let got = line.get(prefix, &out, &[]);
    ok(&got, what);
    assert!(std::fs::read(&out).unwrap() == want, "{what}: wrong bytes");
}

/// Kills `ndx run` with `sig` and checks it died of that signal, left no XDP program on
/// its interfaces, and that a new `ndx run` on them starts and forwards.
fn crash_and_restart(sig: &str, signo: i32) {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let (file, data) = line.content("obj", 100_000, 3);
    let _producer = line.put("/t/obj", &file, &[]);
    let router = line.start_udp_router("");
    fetch_ok(&line, "/t/obj", &data, "ndx get before the crash");
    for i in ["c0", "p0"] {
        assert!(any_xdp(&line.r, i), "no XDP program on {i} while ndx runs");
    }
    let mut proc = router.proc;
    let mut child = proc.child.take().expect("running");
    let pid = child.id().to_string();
    // No core dump: the mappings (the CS slab among them) take hundreds of MiB. prlimit is
    // util-linux's; without it the machine's own core limit applies.
    let _ = Command::new("prlimit")
        .args(["--pid", &pid, "--core=0:0"])
        .status();
    // Rust's runtime handles SIGSEGV to report stack overflows: a SIGSEGV sent with kill(2)
    // (no fault to repeat) only restores the default action, so a second one kills, as a
    // real fault would at once. Send until the process is gone.
    let status = loop {
        let _ = Command::new("kill")
            .args([&format!("-{sig}"), &pid])
            .status();
        if wait_for(2, || child.try_wait().ok().flatten().is_some()) {
            break child.wait().expect("wait");
        }
    };
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(signo), "ndx run ended with {status}");
    for i in ["c0", "p0"] {
        assert!(
            wait_for(5, || !any_xdp(&line.r, i)),
            "an XDP program is left on {i} after SIG{sig}: {}",
            String::from_utf8_lossy(&line.r.try_run(&["ip", "-d", "link", "show", i]).stdout)
        );
    }
    // The same interfaces, the same control socket path (its stale file is replaced).
    let _again = line.start_udp_router("");
    fetch_ok(&line, "/t/obj", &data, "ndx get after the restart");
}

#[test]
fn sigkill_leaves_no_xdp_program_and_a_new_router_starts() {
    crash_and_restart("KILL", 9);
}

#[test]
fn sigsegv_leaves_no_xdp_program_and_a_new_router_starts() {
    crash_and_restart("SEGV", 11);
}

/// A [`Line`] whose router has a third interface `x0` to a namespace `q` (10.0.3.0/24,
/// producer at 10.0.3.1), face `side` routing `/q` there.
struct Three {
    line: Line,
    q: Netns,
}

impl Three {
    fn new() -> Self {
        let line = Line::new(Family::V4, 1, 1500);
        let q = Netns::new("q");
        Self::link_q(&line, &q);
        Self { line, q }
    }

    /// The veth r:x0 ── q:eth0 and its addresses.
    fn link_q(line: &Line, q: &Netns) {
        veth(&line.r, "x0", q, "eth0", 1);
        addr(&line.r, "x0", "10.0.3.2/24");
        addr(q, "eth0", "10.0.3.1/24");
        let _ = line
            .r
            .try_run(&["ping", "-4", "-c", "1", "-W", "5", "10.0.3.1"]);
    }

    fn start_router(&self) -> Router {
        let cfg = self.line.udp_config(1, "")
            + "[[interface]]\nname = \"x0\"\n\
               [[face]]\nname = \"side\"\nremote = \"udp://10.0.3.1:6363\"\n\
               [[route]]\nprefix = \"/q\"\nface = \"side\"\n";
        self.line.start_router(&cfg)
    }

    /// `ndx put PREFIX` in `q`.
    fn put_q(&self, prefix: &str, file: &std::path::Path) -> Proc {
        let log = self
            .line
            .scratch
            .path(&format!("putq-{}.log", support::tag()));
        let mut cmd = self.q.cmd(NDX);
        cmd.args(["put", prefix, "-i"])
            .arg(file)
            .args(["-b", "10.0.3.1:6363"]);
        let p = spawn_logged(cmd, "ndx put (q)", &log);
        assert!(
            wait_for(20, || topo::read(&log).contains("serving")),
            "ndx put did not start: {}",
            topo::read(&log)
        );
        p
    }

    /// `ndx serve /t/gen` in the producer namespace.
    fn serve(&self) -> Proc {
        let log = self.line.scratch.path("serve.log");
        let mut cmd = self.line.p.cmd(NDX);
        cmd.args(["serve", "/t/gen", "-n", "1000", "-b"])
            .arg(self.line.producer_endpoint());
        let p = spawn_logged(cmd, "ndx serve", &log);
        std::thread::sleep(Duration::from_millis(300));
        p
    }
}

/// `ndx gen`'s InterestLifetime: long enough that a process the loaded 2-CPU machine does
/// not schedule for a second is not a loss. The generator runs at least this long after the
/// fault, so an Interest the router lost still times out before it stops.
const LIFETIME_MS: u64 = 4000;

/// `ndx gen /t/gen` for `secs` seconds from the consumer namespace through the router.
fn gen_cmd(line: &Line, secs: u64) -> Command {
    let mut cmd = line.c.cmd(NDX);
    cmd.args(["gen", "/t/gen", "-t", &line.router_target(), "-w", "32"])
        .args(["--lifetime-ms", &LIFETIME_MS.to_string()])
        .args(["-d", &secs.to_string()]);
    cmd
}

/// Asserts `ndx gen` lost nothing: no timeout, no Nack, every Interest answered but the
/// window still in flight when it stopped.
fn no_loss(out: &Output, what: &str) -> u64 {
    ok(out, what);
    let (sent, satisfied, nacks, timeouts) = gen_report(out);
    eprintln!("{what}: {}", String::from_utf8_lossy(&out.stdout));
    assert_eq!((nacks, timeouts), (0, 0), "{what} lost exchanges");
    assert!(
        satisfied + 32 >= sent && satisfied > 0,
        "{what}: {sent} sent, {satisfied} answered"
    );
    satisfied
}

fn iface(status: &Value, name: &str) -> Value {
    status["interfaces"]
        .as_array()
        .and_then(|a| a.iter().find(|i| i["name"] == name))
        .cloned()
        .unwrap_or_else(|| panic!("no interface {name} in {}", status["interfaces"]))
}

/// A fetch of `/q/obj` that is expected to fail (its interface is down or gone): few
/// retries, short lifetimes.
fn failing_get(line: &Line) -> Output {
    let out = line.scratch.path("never");
    line.get(
        "/q/obj",
        &out,
        &[
            "--discovery-retries",
            "2",
            "--lifetime-ms",
            "300",
            "--initial-rto-ms",
            "300",
        ],
    )
}

/// Waits (up to 5 s) until `ndx status` says `x0`'s state is `state`.
fn wait_x0(router: &Router, state: &str) {
    assert!(
        wait_for(5, || iface(&router.status(), "x0")["state"] == state),
        "{}",
        router.status()["interfaces"]
    );
}

/// The start of the interface tests: `None` when they skip; else a [`Three`] with `/q/obj`
/// (`seed`) served in `q` and `ndx serve` in the producer namespace, its router started and
/// `/q/obj` fetched through `x0` once. Returns it, the object's bytes, the two servers and the
/// router.
fn three_serving(seed: u64) -> Option<(Three, Vec<u8>, [Proc; 2], Router)> {
    if skip() {
        return None;
    }
    let t = Three::new();
    let (file, data) = t.line.content("q", 200_000, seed);
    let servers = [t.put_q("/q/obj", &file), t.serve()];
    let router = t.start_router();
    fetch_ok(&t.line, "/q/obj", &data, "ndx get through x0");
    Some((t, data, servers, router))
}

/// Runs `ndx gen` for `secs` seconds on c0/p0 while `cmd` takes `x0` away (until its state
/// is `state`): traffic for it is dropped and counted, never kicked (`kicks` says where).
/// `then` runs before the generator is joined; returns the generator's output.
fn x0_lost_under_traffic(
    t: &Three,
    router: &Router,
    secs: u64,
    cmd: &[&str],
    state: &str,
    kicks: &str,
    then: impl FnOnce(),
) -> Output {
    std::thread::scope(|s| {
        let generator = s.spawn(|| gen_cmd(&t.line, secs).output().expect("ndx gen runs"));
        std::thread::sleep(Duration::from_secs(1));
        t.line.r.run(cmd);
        wait_x0(router, state);
        // Traffic for the lost interface is dropped and counted, never kicked.
        let _ = failing_get(&t.line);
        let s1 = router.status();
        assert!(total(&s1, "tx_link_down") > 0, "{}", s1["counters"]);
        std::thread::sleep(Duration::from_millis(500));
        let s2 = router.status();
        assert_eq!(total(&s1, "tx_errors"), total(&s2, "tx_errors"), "{kicks}");
        then();
        generator.join().expect("gen thread")
    })
}

#[test]
fn interface_set_down_and_up_while_forwarding_on_the_others() {
    let Some((t, data, _servers, router)) = three_serving(5) else {
        return;
    };
    assert_eq!(iface(&router.status(), "x0")["state"], "up");

    let consumer = x0_lost_under_traffic(
        &t,
        &router,
        10,
        &["ip", "link", "set", "x0", "down"],
        "down",
        "kicks on a down interface",
        || {
            t.line.r.run(&["ip", "link", "set", "x0", "up"]);
            wait_x0(&router, "up");
        },
    );
    no_loss(&consumer, "ndx gen on c0/p0 while x0 went down and up");
    let x0 = iface(&router.status(), "x0");
    assert_eq!(
        (x0["link_down"].as_u64(), x0["link_up"].as_u64()),
        (Some(1), Some(1)),
        "{x0}"
    );
    let log = router.log();
    assert!(
        log.contains("ndx: warning: x0: link down (set down)"),
        "{log}"
    );
    assert!(log.contains("ndx: x0: link up"), "{log}");
    // Up again: x0 forwards, on the same sockets and the face's next hop resolved before.
    fetch_ok(
        &t.line,
        "/q/obj",
        &data,
        "ndx get through x0 after it came back",
    );
    assert!(!router.exited());
}

#[test]
fn interface_deleted_while_forwarding_on_the_others() {
    let Some((t, data, _servers, router)) = three_serving(6) else {
        return;
    };

    let consumer = x0_lost_under_traffic(
        &t,
        &router,
        9,
        &["ip", "link", "del", "x0"],
        "gone",
        "kicks on a deleted interface",
        || {},
    );
    no_loss(&consumer, "ndx gen on c0/p0 while x0 was deleted");
    assert!(!router.exited(), "ndx run exited:\n{}", router.log());
    let x0 = iface(&router.status(), "x0");
    assert_eq!(x0["link_down"], 1, "{x0}");
    let log = router.log();
    assert!(log.contains("ndx: warning: x0: interface deleted"), "{log}");
    // A clean stop still works (the deleted interface's link and sockets are dead).
    assert!(router.stop_cleanly().contains("ndx: stopped after"));
    // The documented way back: create the interface again and restart ndx run.
    Three::link_q(&t.line, &t.q);
    let _router = t.start_router();
    fetch_ok(&t.line, "/q/obj", &data, "ndx get through the new x0");
}

#[test]
fn producer_killed_mid_fetch_pit_drains_and_nothing_grows() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let (file, _data) = line.content("big", 40 << 20, 8);
    let producer = line.put("/t/big", &file, &[]);
    let router = line.start_udp_router("");
    let out = line.scratch.path("partial");
    let mut get = line.get_cmd(
        "/t/big",
        &out,
        &[
            "--lifetime-ms",
            "1000",
            "--max-retries",
            "2",
            "--max-rto-ms",
            "1000",
        ],
    );
    let get = std::thread::spawn(move || get.output().expect("ndx get runs"));
    assert!(
        wait_for(20, || total(&router.status(), "data_in") >= 300),
        "the fetch did not start: {}",
        router.status()["counters"]
    );
    // The tables mid-fetch (the consumer's on-demand face exists by now).
    let before = router.status();
    drop(producer); // SIGKILL
    let got = get.join().expect("get thread");
    assert!(
        !got.status.success(),
        "ndx get cannot finish without its producer"
    );
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(err.contains("no Data for"), "{err}");
    // Every Interest the router still holds expires within its lifetime (1 s).
    let s = router.settle(|s| total(s, "pit_entries") == 0);
    assert_eq!(total(&s, "pit_entries"), 0, "{}", s["counters"]);
    assert_eq!(
        s["faces"].as_array().map(Vec::len),
        before["faces"].as_array().map(Vec::len),
        "faces: {}",
        s["faces"]
    );
    assert_eq!(s["routes"], before["routes"]);
    assert_eq!(total(&s, "nacks_out"), 0, "no Nack for an expired Interest");
    assert!(
        total(&s, "interests_in") > total(&s, "data_out"),
        "{}",
        s["counters"]
    );
    // The configured alternative to waiting: without the route, Nack NoRoute at once.
    router.ctl(&["route", "remove", "/t"]);
    let got = line.get("/t/big", &out, &["--discovery-retries", "1"]);
    assert!(!got.status.success());
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(err.contains("Nack NoRoute"), "{err}");
    let s = router.settle(|s| total(s, "pit_entries") == 0);
    assert_eq!(total(&s, "pit_entries"), 0, "{}", s["counters"]);
    assert!(total(&s, "nacks_out") > 0, "{}", s["counters"]);
    assert!(!router.exited());
}
