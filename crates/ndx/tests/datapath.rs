//! ndx's data path end to end, as root: every test builds its own consumer ── router ──
//! producer line of network namespaces and veth pairs, starts `ndx run` (AF_XDP) in the
//! router namespace with a generated configuration, runs real traffic through it with the ndx
//! tools (or a python-ndn Ethernet peer), and checks both the bytes delivered and ndx's
//! counters (`ndx status --json`).
//!
//! Without root (or BPF) the tests print `skipping: <reason>`; with `NDX_REQUIRE_ROOT_TESTS=1`
//! (CI) they fail instead.

mod support;
mod topo;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use support::{Proc, python, skip, stdout_lines, wait_for};
use topo::{
    Family, Line, get_retransmissions as retransmissions, get_segments as segments, has_xdp, ok,
    per_shard, spawn_logged, total, xdp,
};

/// Asserts the fetched file equals the served bytes.
fn same_bytes(out: &PathBuf, want: &[u8]) {
    let got = std::fs::read(out).expect("ndx get wrote its output");
    assert_eq!(got.len(), want.len(), "fetched object has the wrong length");
    assert!(got == want, "fetched object differs from the served one");
}

/// `ndx get` of `prefix` into the scratch file `file`: asserts it succeeded (`what` names
/// it) and fetched `want`; returns its output (for the segment counts).
fn fetch(line: &Line, prefix: &str, file: &str, want: &[u8], what: &str) -> Output {
    fetch_with(line, prefix, file, &[], want, what)
}

/// The second [`fetch`] of `prefix` (into `got2`), its producer stopped.
fn fetch_again(line: &Line, prefix: &str, want: &[u8]) -> Output {
    fetch(
        line,
        prefix,
        "got2",
        want,
        "second ndx get (producer stopped)",
    )
}

/// [`fetch`] with more `ndx get` arguments (`extra`).
fn fetch_with(
    line: &Line,
    prefix: &str,
    file: &str,
    extra: &[&str],
    want: &[u8],
    what: &str,
) -> Output {
    let out = line.scratch.path(file);
    let got = line.get(prefix, &out, extra);
    ok(&got, what);
    same_bytes(&out, want);
    got
}

/// `ndx put` of `file` as version `version` of `prefix` in 1000-byte segments, fresh for ten
/// minutes.
fn put_version(line: &Line, prefix: &str, file: &Path, version: &str) -> Proc {
    line.put(
        prefix,
        file,
        &[
            "-f",
            "600000",
            "--version",
            version,
            "--segment-size",
            "1000",
        ],
    )
}

/// `[router]` keys `before`, then a CS of `capacity` 2048-byte slots with an L2 whose
/// `[cs.l2]` keys (after `enabled = true`) are `l2`.
fn l2_toml(before: &str, capacity: u32, l2: &str) -> String {
    format!("{before}[cs]\ncapacity = {capacity}\nslot_size = 2048\n[cs.l2]\nenabled = true\n{l2}")
}

/// The `[cs.l2]` keys of a file store in `dir` of `size` in batches of 8, then `more`.
fn l2_files(dir: &Path, size: &str, more: &str) -> String {
    format!(
        "dirs = [\"{}\"]\nsize = \"{size}\"\nbatch = 8\n{more}",
        dir.display()
    )
}

/// The start of the L2 tests: `None` when they skip; else a line of `shards` queues and an
/// object of `segments` 1000-byte segments (`seed`).
fn l2_line(shards: u32, segments: usize, seed: u64) -> Option<(Line, PathBuf, Vec<u8>)> {
    if skip() {
        return None;
    }
    let line = Line::new(Family::V4, shards, 1500);
    let (file, data) = line.content("obj", segments * 1000, seed);
    Some((line, file, data))
}

/// Starts a router of `shards` with the producer's UDP face and [`l2_toml`]`(before,
/// capacity, l2)`; returns its configuration (to start it again) and the router.
fn start_with_l2(
    line: &Line,
    shards: u32,
    before: &str,
    capacity: u32,
    l2: &str,
) -> (String, topo::Router) {
    let config = line.udp_config(shards, &l2_toml(before, capacity, l2));
    let router = line.start_router(&config);
    (config, router)
}

/// An object evicted to L2 is served again with its producer gone: fetches `prefix` (served
/// by `producer`, 1024 segments), waits for the evicted batches to be written, stops the
/// producer, fetches again and asserts no Interest left. Returns the status after the second
/// fetch.
fn served_again_from_l2(
    line: &Line,
    router: &topo::Router,
    producer: Proc,
    prefix: &str,
    data: &[u8],
) -> serde_json::Value {
    fetch(line, prefix, "got1", data, "first ndx get");
    let before = router.settle(|s| total(s, "l2_writes_ok") >= (1024 - 64) / 8);
    drop(producer);
    fetch_again(line, prefix, data);
    let after = router.settle(|s| total(s, "cs_hits") >= 1024);
    assert_eq!(
        total(&after, "interests_out"),
        total(&before, "interests_out"),
        "{}",
        after["counters"]
    );
    after
}

/// Starts python-ndn's AF_PACKET producer of `file` under `prefix` on the producer's eth0
/// (more arguments in `extra`); returns it, the lines it prints and its first one ("ready
/// MAC").
fn ether_producer(
    line: &Line,
    py: &str,
    prefix: &str,
    file: &Path,
    extra: &[&str],
) -> (Proc, Receiver<String>, String) {
    let mut cmd = line.p.cmd(py);
    cmd.arg(script("tests/peers/ether_producer.py"))
        .args(["eth0", prefix])
        .arg(file)
        .arg("1000")
        .args(extra);
    let mut producer = Proc::spawn(cmd, "ether_producer.py");
    let lines = stdout_lines(&mut producer);
    let ready = lines
        .recv_timeout(Duration::from_secs(30))
        .expect("the Ethernet producer did not start");
    (producer, lines, ready)
}

/// One fetch of a multi-megabyte object over UDP through ndx; bytes and counters checked.
fn forward_over_udp(family: Family) {
    if skip() {
        return;
    }
    let line = Line::new(family, 1, 1500);
    let (file, data) = line.content("obj", 3 << 20, 1);
    let router = line.start_udp_router("");
    let _producer = line.put("/t/obj", &file, &[]);
    let got = fetch(&line, "/t/obj", "got", &data, "ndx get");
    let n = segments(&got);
    assert_eq!(n, (3u64 << 20).div_ceil(8000));
    let s = router.settle(|s| total(s, "data_out") >= n);
    // Every segment went to the producer and came back (retransmissions may add a few).
    assert!(total(&s, "interests_out") >= n, "{}", s["counters"]);
    assert!(total(&s, "data_in") >= n, "{}", s["counters"]);
    assert!(total(&s, "data_out") >= n, "{}", s["counters"]);
    assert_eq!(total(&s, "drop_no_route"), 0);
    assert_eq!(total(&s, "drop_malformed"), 0);
    let proto = match family {
        Family::V4 => "udp4",
        Family::V6 => "udp6",
    };
    assert!(xdp(&s, proto) >= 2 * n, "XDP saw no {proto}: {}", s["xdp"]);
    assert!(xdp(&s, "redirected") >= 2 * n, "{}", s["xdp"]);
    // One shard, `xdp_classify = "auto"`: NDN is redirected unparsed.
    assert!(xdp(&s, "unclassified") >= 2 * n, "{}", s["xdp"]);
    assert_eq!(xdp(&s, "interest") + xdp(&s, "by-name"), 0, "{}", s["xdp"]);
    // The banner reports the tables' memory; the CS slab (65536 x 9000 B by default) is
    // mapped by the huge-page allocator.
    let log = router.log();
    let line = log
        .lines()
        .find(|l| l.starts_with("ndx: tables: "))
        .unwrap_or_else(|| panic!("no memory line in the banner:\n{log}"));
    let mapped: u64 = line["ndx: tables: ".len()..]
        .split(' ')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(mapped >= 512, "{line}");
}

#[test]
fn forwards_over_udp_ipv4() {
    forward_over_udp(Family::V4);
}

#[test]
fn forwards_over_udp_ipv6() {
    forward_over_udp(Family::V6);
}

/// A script of ours or of ndx-app's interop tests.
fn script(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// ndx get (UDP) → ndx → Ethernet face (EtherType 0x8624) → python-ndn AF_PACKET producer.
fn forward_over_ethernet(echo_token: bool) {
    if skip() {
        return;
    }
    let Some(py) = python() else { return };
    let line = Line::new(Family::V4, 1, 1500);
    let (file, data) = line.content("obj", 300_000, 2);
    let extra: &[&str] = if echo_token { &[] } else { &["--no-token"] };
    let (producer, lines, ready) = ether_producer(&line, &py, "/t/eth", &file, extra);
    let mut w = ready.split_whitespace();
    assert_eq!(w.next(), Some("ready"), "{ready}");
    let mac = w.next().expect("mac").to_owned();
    // XDP classification on with one shard: the XDP program's per-kind counters are checked.
    let router =
        line.start_router(&line.config(1, &format!("ether://{mac}"), "xdp_classify = \"always\""));
    let got = fetch(&line, "/t/eth", "got", &data, "ndx get");
    let n = segments(&got);
    assert_eq!(n, 300);
    let s = router.settle(|s| total(s, "data_out") >= n);
    assert!(xdp(&s, "ether") >= n, "XDP saw no Ethernet: {}", s["xdp"]);
    assert!(total(&s, "data_in") >= n, "{}", s["counters"]);
    assert!(total(&s, "interests_out") >= n, "{}", s["counters"]);
    // A Data is unsolicited only when it answers an Interest twice: after a consumer
    // retransmission ndx forwarded again (the python producer is slow on a loaded machine).
    let retx = retransmissions(&got);
    assert!(
        total(&s, "drop_unsolicited") <= retx,
        "{retx} retransmissions: {}",
        s["counters"]
    );
    if echo_token {
        assert!(
            xdp(&s, "by-token") >= n,
            "echoed PIT tokens must steer the Data: {}",
            s["xdp"]
        );
    } else {
        // Bare Data carry no token: ndx found their PIT entries by name.
        assert_eq!(xdp(&s, "by-token"), 0, "{}", s["xdp"]);
    }
    drop(producer);
    // The producer is gone: its stdout is closed, every line it printed is in the channel.
    let interests: Vec<String> = lines.iter().collect();
    let seen = interests
        .iter()
        .filter(|l| l.starts_with("interest "))
        .count() as u64;
    assert!(
        seen >= n,
        "the producer saw {seen} Interests: {interests:?}"
    );
    // ndx wraps what it forwards in an LpPacket carrying its PIT token.
    assert!(
        interests
            .iter()
            .all(|l| !l.starts_with("interest ") || l.ends_with("token=1")),
        "an Interest arrived without a PitToken: {interests:?}"
    );
    assert!(
        !interests.iter().any(|l| l.starts_with("undecodable")),
        "{interests:?}"
    );
}

#[test]
fn forwards_over_ethernet_with_pit_token_echo() {
    forward_over_ethernet(true);
}

#[test]
fn forwards_over_ethernet_bare_data_matched_by_name() {
    forward_over_ethernet(false);
}

#[test]
fn an_ethernet_face_added_at_run_time_forwards_at_once() {
    if skip() {
        return;
    }
    let Some(py) = python() else { return };
    let line = Line::new(Family::V4, 1, 1500);
    let (file, data) = line.content("obj", 100_000, 4);
    // The lines kept to the end: the producer prints a line per Interest.
    let (producer, lines, ready) = ether_producer(&line, &py, "/e/rt", &file, &[]);
    let mac = ready.split_whitespace().nth(1).expect("mac").to_owned();
    let router = line.start_udp_router("");
    // Added by command, not by the configuration: its path is known at once (it used to stay
    // unresolved, every packet counted unresolved_face).
    router.ctl(&[
        "face",
        "add",
        "eprod",
        &format!("ether://{mac}"),
        "--interface",
        "p0",
    ]);
    let face = router.face("name", "eprod").expect("the face");
    assert_eq!(face["resolved"], true, "{face}");
    // A second face of that name is refused, as the configuration refuses it.
    assert!(!router.try_ctl(&["face", "add", "eprod", "udp://10.0.2.7:6363"]));
    router.ctl(&["route", "add", "/e", "eprod"]);
    let out = line.scratch.path("got");
    let o = line.get("/e/rt", &out, &[]);
    assert!(o.status.success(), "{o:?}\n{}", router.status());
    assert_eq!(std::fs::read(&out).unwrap(), data);
    let s = router.status();
    assert_eq!(total(&s, "unresolved_face"), 0, "{}", s["counters"]);
    drop(producer);
    assert!(lines.iter().any(|l| l.starts_with("interest ")));
}

#[test]
fn second_fetch_is_served_from_the_content_store() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let (file, data) = line.content("obj", 1 << 20, 3);
    let router = line.start_udp_router("");
    // Fresh for a minute: the second fetch's discovery (MustBeFresh) is answered by the CS
    // however slow the machine.
    let producer = line.put("/t/cs", &file, &["-f", "60000", "--version", "5"]);
    let got = fetch(&line, "/t/cs", "got1", &data, "first ndx get");
    let n = segments(&got);
    let before = router.settle(|s| total(s, "data_out") >= n);
    // The producer is gone: only ndx's CS can answer now.
    drop(producer);
    // The versioned name: no discovery, whose RDR metadata Interest may legitimately go to
    // the (dead) producer once the metadata packet's 1 s freshness has passed.
    fetch_again(&line, "/t/cs/v=5", &data);
    let after = router.settle(|s| total(s, "cs_hits") >= total(&before, "cs_hits") + n);
    let hits = total(&after, "cs_hits") - total(&before, "cs_hits");
    assert!(
        hits >= n,
        "{hits} CS hits for {n} segments: {}",
        after["counters"]
    );
    assert_eq!(
        total(&after, "interests_out"),
        total(&before, "interests_out"),
        "the second fetch forwarded Interests: {}",
        after["counters"]
    );
    assert!(total(&after, "cs_entries") >= n);
}

/// Zero-copy admission through the AF_XDP data path: the CS keeps the UMEM frames Data
/// arrive in, serves later Interests from them, copies once it holds its bound of a port's
/// frames, and gives each frame back to the fill ring when its Data is evicted. With 1024
/// frames, 768 receive and the CS may keep 384; the CS has 1024 slots, so the bound is what
/// stops the keeping, and only frames coming back let it resume. At the stop every kept frame
/// goes back before the sockets close.
#[test]
fn the_content_store_keeps_receive_frames_and_gives_them_back() {
    if skip() {
        return;
    }
    const KEEP_MAX: u64 = 384;
    let line = Line::new(Family::V4, 1, 1500);
    let router = line.start_udp_router("frames = 1024\n[cs]\ncapacity = 1024\nslot_size = 2048\n");
    // `Line::get` keeps at most 32 Data in flight: with 384 receive frames left to the
    // kernel the fill ring never runs dry.
    // 200 segments: all stay in the CS, each in the frame it arrived in.
    let (small, small_data) = line.content("small", 200 * 1000, 5);
    let producer = put_version(&line, "/t/keep", &small, "1");
    let got = fetch(&line, "/t/keep/v=1", "got1", &small_data, "first ndx get");
    let n = segments(&got);
    let first = router.settle(|s| total(s, "cs_kept") >= n);
    let c = &first["counters"];
    assert!(total(&first, "cs_kept") >= n, "Data not kept: {c}");
    assert_eq!(
        total(&first, "cs_kept"),
        total(&first, "cs_insertions"),
        "every Data kept its frame: {c}"
    );
    assert_eq!(
        total(&first, "cs_frames_held"),
        total(&first, "cs_entries"),
        "{c}"
    );
    drop(producer);
    // Served from the kept frames alone.
    fetch_again(&line, "/t/keep/v=1", &small_data);
    let second = router.settle(|s| total(s, "cs_hits") >= total(&first, "cs_hits") + n);
    let c = &second["counters"];
    assert!(
        total(&second, "cs_hits") >= total(&first, "cs_hits") + n,
        "{c}"
    );
    assert_eq!(
        total(&second, "interests_out"),
        total(&first, "interests_out"),
        "the second fetch forwarded Interests: {c}"
    );

    // 2048 segments: the CS reaches its bound of kept frames and copies, then keeps again
    // as evictions give frames back.
    let (big, big_data) = line.content("big", 2048 * 1000, 6);
    let _producer = put_version(&line, "/t/keep", &big, "2");
    let got = fetch(&line, "/t/keep/v=2", "got3", &big_data, "third ndx get");
    let m = segments(&got);
    assert_eq!(m, 2048);
    let third = router.settle(|s| total(s, "cs_insertions") >= total(&second, "cs_insertions") + m);
    let c = &third["counters"];
    eprintln!("after 2248 Data through a CS of 1024 keeping at most 384 frames: {c}");
    let (kept, inserted) = (total(&third, "cs_kept"), total(&third, "cs_insertions"));
    assert!(inserted >= n + m, "{c}");
    assert!(kept < inserted, "the bound never made the CS copy: {c}");
    assert!(
        kept >= KEEP_MAX + 128,
        "evicted Data's frames did not come back to be kept again: {c}"
    );
    assert!(
        total(&third, "cs_frames_held") <= KEEP_MAX,
        "bound exceeded: {c}"
    );
    assert_eq!(total(&third, "xsk_fill_starved"), 0, "{c}");
    // A clean stop: every kept frame goes back before the sockets close (the worker reports
    // any that did not).
    let text = router.stop_cleanly();
    assert!(!text.contains("kept frames not returned"), "{text}");
}

#[test]
fn interest_without_route_gets_nack_no_route() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let router = line.start_udp_router("");
    let out = line.scratch.path("got");
    let got = line.get("/unrouted/obj", &out, &["--discovery-retries", "0"]);
    assert!(!got.status.success(), "ndx get succeeded without a route");
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(
        err.contains("Nack") && err.contains("NoRoute"),
        "ndx get did not report a Nack NoRoute: {err}"
    );
    let s = router.settle(|s| total(s, "drop_no_route") >= 1);
    assert!(total(&s, "drop_no_route") >= 1, "{}", s["counters"]);
    assert!(total(&s, "nacks_out") >= 1, "{}", s["counters"]);
    assert_eq!(total(&s, "interests_out"), 0, "{}", s["counters"]);
}

/// Sends `frame` (raw bytes) in one UDP datagram from the consumer namespace to the router.
fn send_from_consumer(line: &Line, frame: &[u8]) {
    let escaped: String = frame.iter().map(|b| format!("\\x{b:02x}")).collect();
    let ip = line.ip(1, 2);
    line.c.run(&[
        "bash",
        "-c",
        &format!("printf '{escaped}' > /dev/udp/{ip}/6363"),
    ]);
}

/// Fragment 0 of 3 of a packet whose other fragments never come: an LpPacket with Sequence
/// 5, FragIndex 0, FragCount 3 and a 3-byte Fragment.
const LONE_FRAGMENT: [u8; 23] = [
    0x64, 21, 0x51, 8, 0, 0, 0, 0, 0, 0, 0, 5, 0x52, 1, 0, 0x53, 1, 3, 0x50, 3, b'a', b'b', b'c',
];

/// An incomplete fragment set is dropped when its reassembly times out (500 ms), and
/// `ndx status` counts it: with one shard the shard's own reassembler held it, with several
/// the worker's (fragments are steered by source).
fn incomplete_fragment_set_times_out(shards: u32) {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let router = line.start_router(&line.udp_config(shards, ""));
    let sent = std::time::Instant::now();
    send_from_consumer(&line, &LONE_FRAGMENT);
    let s = router.settle(|s| total(s, "rx_frames") >= 1);
    // Not timed out on arrival: checked when the status came back well inside the 500 ms
    // timeout (a loaded machine may take longer to answer; the set must then still time out
    // exactly once, below).
    if sent.elapsed() < Duration::from_millis(300) {
        assert_eq!(total(&s, "reassembly_timeouts"), 0, "{}", s["counters"]);
    }
    std::thread::sleep(Duration::from_millis(600));
    let s = router.settle(|s| total(s, "reassembly_timeouts") >= 1);
    assert_eq!(total(&s, "reassembly_timeouts"), 1, "{}", s["counters"]);
    assert_eq!(total(&s, "reassembly_errors"), 0, "{}", s["counters"]);
    assert_eq!(total(&s, "interests_in") + total(&s, "data_in"), 0);
    // The human-readable status lists it (non-zero counters are shown).
    let text = router.status_table();
    assert!(
        text.lines().any(|l| l.starts_with("reassembly_timeouts")),
        "{text}"
    );
}

#[test]
fn an_incomplete_fragment_set_times_out_in_the_shard() {
    incomplete_fragment_set_times_out(1);
}

#[test]
fn an_incomplete_fragment_set_times_out_in_the_worker() {
    incomplete_fragment_set_times_out(2);
}

/// Sends `sig` to a process.
fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status();
}

/// Sets its flag when dropped.
struct StopOnDrop(std::sync::Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[test]
fn concurrent_consumers_are_aggregated() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let (file, data) = line.content("obj", 1 << 20, 4);
    let router = line.start_udp_router("");
    let producer = line.put("/t/agg", &file, &["--version", "7", "-s", "4000"]);
    // A slow producer (no netem here): it is paused and resumed every 100 ms while the two
    // consumers fetch the same versioned object, so both have the same segments pending in
    // ndx at once.
    let pid = producer.pid();
    let done = std::sync::Arc::new(AtomicBool::new(false));
    // Stops the toggling also when the test fails half-way.
    let _stop = StopOnDrop(done.clone());
    let toggler = {
        let done = done.clone();
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                signal(pid, "STOP");
                std::thread::sleep(Duration::from_millis(100));
                signal(pid, "CONT");
                std::thread::sleep(Duration::from_millis(30));
            }
            signal(pid, "CONT");
        })
    };
    let outs = [line.scratch.path("got1"), line.scratch.path("got2")];
    let consumers: Vec<_> = outs
        .iter()
        .map(|o| {
            line.get_cmd("/t/agg/v=7", o, &[])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("ndx get")
        })
        .collect();
    let results: Vec<Output> = consumers
        .into_iter()
        .map(|c| c.wait_with_output().expect("ndx get"))
        .collect();
    done.store(true, Ordering::Relaxed);
    toggler.join().unwrap();
    for (r, o) in results.iter().zip(&outs) {
        ok(r, "ndx get");
        same_bytes(o, &data);
    }
    let n = segments(&results[0]);
    let s = router.settle(|s| total(s, "data_out") >= 2 * n);
    eprintln!("{}", s["counters"]);
    let (ins, outs) = (total(&s, "interests_in"), total(&s, "interests_out"));
    assert!(
        total(&s, "aggregated") > 0,
        "nothing aggregated: {}",
        s["counters"]
    );
    assert!(outs < ins, "{outs} Interests out for {ins} in");
    // The producer saw each segment about once, not once per consumer.
    assert!(
        outs < 2 * n,
        "{outs} Interests forwarded for {n} segments fetched twice: {}",
        s["counters"]
    );
    assert!(total(&s, "data_out") >= 2 * n);
}

#[test]
fn jumbo_data_crosses_in_single_multi_buffer_frames() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 9000);
    let (file, data) = line.content("obj", 2 << 20, 5);
    // XDP classification on: the frags program parses and counts the jumbo Data.
    let router = line.start_udp_router("xdp_classify = \"always\"");
    let _producer = line.put("/t/jumbo", &file, &["-s", "8800", "--mtu", "9000"]);
    let got = fetch_with(
        &line,
        "/t/jumbo",
        "got",
        &["--mtu", "9000"],
        &data,
        "ndx get",
    );
    let n = segments(&got);
    assert_eq!(n, (2u64 << 20).div_ceil(8800));
    let s = router.settle(|s| total(s, "data_out") >= n);
    eprintln!("{}\n{}", s["counters"], s["xdp"]);
    // Each Data came as one frame of more than 8800 bytes (no NDNLPv2 fragments), so the
    // frags program and multi-buffer AF_XDP carried frames larger than a 4 KiB UMEM frame.
    assert_eq!(xdp(&s, "fragment"), 0, "Data was fragmented: {}", s["xdp"]);
    assert!(xdp(&s, "data") >= n, "{}", s["xdp"]);
    let (frames, bytes) = (total(&s, "rx_frames"), total(&s, "rx_bytes"));
    let (ins, din) = (total(&s, "interests_in"), total(&s, "data_in"));
    assert!(din >= n && frames <= ins + din + 16, "{}", s["counters"]);
    assert!(bytes >= 8800 * n, "{bytes} bytes in {frames} frames");
    assert!(
        bytes / din.max(1) > 4096,
        "frames of {} bytes on average",
        bytes / din.max(1)
    );
    assert_eq!(total(&s, "tx_too_big"), 0);
}

/// Data that arrive whole in one frame from a 9000-byte link and leave on a 1500-byte one:
/// the router sends them from the frame they came in (lent to the pipeline, with the
/// downstream's PitToken header written apart) and, too big for the link, splits them into
/// NDNLPv2 fragments on the way out; the consumer reassembles them.
#[test]
fn data_larger_than_the_downstream_mtu_leave_in_fragments() {
    if skip() {
        return;
    }
    let line = Line::with_mtus(Family::V4, 1, 1500, 9000);
    let (file, data) = line.content("obj", 300_000, 6);
    let router = line.start_udp_router("");
    // 3000-byte segments: one 4 KiB UMEM frame each on the producer link.
    let _producer = line.put("/t/mixed", &file, &["-s", "3000", "--mtu", "9000"]);
    let got = fetch(&line, "/t/mixed", "got", &data, "ndx get");
    let n = segments(&got);
    assert_eq!(n, 300_000u64.div_ceil(3000));
    let s = router.settle(|s| total(s, "data_out") >= n);
    eprintln!("{}", s["counters"]);
    // Every Data came in one single-buffer frame (so it was lent) and left as at least
    // three frames of at most 1500 bytes.
    let (rx, din) = (total(&s, "rx_frames"), total(&s, "data_in"));
    assert!(
        din >= n && rx <= total(&s, "interests_in") + din + 16,
        "{}",
        s["counters"]
    );
    let (tx, iout) = (total(&s, "tx_frames"), total(&s, "interests_out"));
    assert!(tx >= iout + 3 * n, "{tx} frames sent: {}", s["counters"]);
    assert_eq!(total(&s, "tx_too_big"), 0);
}

#[test]
fn ping_and_tcp_still_work_through_the_attached_interface() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let router = line.start_udp_router("");
    assert!(has_xdp(&line.r, "c0"), "no XDP program on c0");
    let ping = line
        .c
        .try_run(&["ping", "-c", "3", "-i", "0.2", "-W", "5", "10.0.1.2"]);
    ok(&ping, "ping through an XDP-attached interface");
    // TCP: an HTTP server in the router namespace, fetched from the consumer namespace.
    let page = line.scratch.path("page.txt");
    std::fs::write(&page, "hello through ndx's XDP program\n").unwrap();
    let mut server = line.r.cmd("python3");
    server
        .args([
            "-m",
            "http.server",
            "8080",
            "--bind",
            "10.0.1.2",
            "--directory",
        ])
        .arg(&line.scratch.0);
    let _server = spawn_logged(server, "http.server", &line.scratch.path("http.log"));
    let script = "import sys, urllib.request\nfor _ in range(100):\n    try:\n        \
                 print(urllib.request.urlopen('http://10.0.1.2:8080/page.txt', timeout=5).read().decode(), end='')\n        \
                 sys.exit(0)\n    except OSError:\n        import time; time.sleep(0.1)\nsys.exit(1)";
    let got = line.c.try_run(&["python3", "-c", script]);
    ok(&got, "TCP (HTTP) through an XDP-attached interface");
    assert_eq!(
        String::from_utf8_lossy(&got.stdout),
        "hello through ndx's XDP program\n"
    );
    // The router's NDN traffic still flows next to it.
    let (file, data) = line.content("obj", 200_000, 6);
    let _producer = line.put("/t/side", &file, &[]);
    fetch(&line, "/t/side", "got", &data, "ndx get");
    let s = router.status();
    assert!(
        xdp(&s, "passed-not-ndn") >= 6,
        "ICMP and TCP must be passed to the kernel: {}",
        s["xdp"]
    );
}

/// Starts ndx, checks its XDP programs are attached, stops it with `sig`, and checks no XDP
/// program is left on either interface.
fn xdp_detached_after(sig: &str) {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let router = line.start_udp_router("");
    for i in ["c0", "p0"] {
        assert!(has_xdp(&line.r, i), "no XDP program on {i} while ndx runs");
    }
    let log = router.log.clone();
    let out = router.proc.stop(sig);
    if sig == "INT" {
        assert!(out.status.success(), "ndx run exited with {}", out.status);
        assert!(topo::read(&log).contains("ndx: stopped after"));
    }
    for i in ["c0", "p0"] {
        assert!(
            wait_for(5, || !has_xdp(&line.r, i)),
            "an XDP program is left on {i} after SIG{sig}: {}",
            String::from_utf8_lossy(&line.r.try_run(&["ip", "link", "show", i]).stdout)
        );
    }
}

#[test]
fn no_xdp_program_left_after_sigint() {
    xdp_detached_after("INT");
}

#[test]
fn no_xdp_program_left_after_sigkill() {
    xdp_detached_after("KILL");
}

/// Asserted: with 2 shards on 2-queue veths and `batch:4` dispatch (the segments of one object
/// spread over both shards), after a fetch of unfragmented Data
/// - every shard forwarded Interests (the spread is real),
/// - on every shard, the Data received back equal the Interests it forwarded (each Data came
///   back to the shard that holds its PIT entry; Interests counted as unresolved_face, sent
///   before ndx resolved the producer's MAC, never left and are subtracted),
/// - no Data was dropped as unsolicited (none reached a shard without its PIT entry),
/// - the XDP program steered at least one Data per segment by PIT token.
#[test]
fn two_shards_steer_data_back_by_pit_token() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 2, 1500);
    let (file, data) = line.content("obj", 600_000, 7);
    let router = line.start_router(&line.udp_config(2, "dispatch = \"batch:4\""));
    let _producer = line.put("/t/shards", &file, &["-s", "1200", "--version", "3"]);
    let got = fetch(&line, "/t/shards", "got", &data, "ndx get");
    let n = segments(&got);
    let s = router.settle(|s| total(s, "data_out") >= n);
    eprintln!("{}\n{}", s["shards"], s["xdp"]);
    let sent = per_shard(&s, "interests_out");
    let back = per_shard(&s, "data_in");
    assert_eq!(sent.len(), 2);
    assert!(
        sent.iter().all(|&x| x > 0),
        "a shard forwarded nothing: {sent:?}"
    );
    // ndx may start forwarding before its first next-hop resolution: an Interest sent to a
    // not yet resolved face is counted in interests_out and unresolved_face but never leaves
    // (the consumer retransmits it). Those aside, every forwarded Interest got its Data back
    // on the shard that sent it.
    let unresolved = per_shard(&s, "unresolved_face");
    let left: Vec<u64> = sent.iter().zip(&unresolved).map(|(s, u)| s - u).collect();
    let retx = retransmissions(&got);
    if retx <= unresolved.iter().sum::<u64>() {
        assert_eq!(left, back, "per-shard Interests sent vs Data in");
    } else {
        // A consumer timeout (noisy machine) may have made a shard forward an Interest twice;
        // still no shard may receive more Data than it asked for.
        eprintln!("{retx} retransmissions: checking Data in <= Interests out per shard");
        assert!(
            left.iter().zip(&back).all(|(s, b)| b <= s),
            "{left:?} vs {back:?}"
        );
    }
    // Unsolicited Data would mean a Data reached a shard without its PIT entry (only a
    // duplicate answer to a retransmission may be).
    assert!(total(&s, "drop_unsolicited") <= retx, "{}", s["counters"]);
    assert_eq!(xdp(&s, "fragment"), 0, "{}", s["xdp"]);
    assert!(xdp(&s, "by-token") >= n, "{}", s["xdp"]);
}

/// The very first Interests ndx forwards to a configured UDP face must leave: the face is
/// resolved (`ndx status` says `"resolved": true`, the neighbour is REACHABLE) long before.
#[test]
fn first_interests_to_a_resolved_face_are_sent() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let (file, data) = line.content("obj", 100_000, 8);
    let router = line.start_udp_router("");
    let _producer = line.put("/t/first", &file, &[]);
    assert!(
        wait_for(10, || router.status()["faces"][0]["resolved"] == true),
        "the producer face never resolved: {}",
        router.status()["faces"]
    );
    let got = fetch(&line, "/t/first", "got", &data, "ndx get");
    let s = router.settle(|s| total(s, "data_out") >= segments(&got));
    assert_eq!(total(&s, "unresolved_face"), 0, "{}", s["counters"]);
    assert_eq!(retransmissions(&got), 0);
}

/// The hierarchical content store through the AF_XDP data path: an L1 of 64 Data evicts a
/// 2048-segment object into the L2 (io_uring on a file) in batches of 8; with the producer
/// gone the object is served again from L2 (each missed batch read back, the Interests parked
/// on the read answered from it), and again after a restart, from the recovered files.
#[test]
fn evicted_data_are_served_from_l2_also_after_a_restart() {
    // 2048 segments of 1000 bytes: 256 whole batches of 8.
    let Some((line, file, data)) = l2_line(1, 2048, 11) else {
        return;
    };
    let l2dir = line.scratch.path("l2");
    let l2 = l2_files(&l2dir, "32MiB", "queue_depth = 16\n");
    let (config, router) = start_with_l2(&line, 1, "", 64, &l2);
    let producer = put_version(&line, "/t/l2", &file, "5");
    let got = fetch(&line, "/t/l2/v=5", "got1", &data, "first ndx get");
    let n = segments(&got);
    assert_eq!(n, 2048);
    // All but the batches still in L1 are written to L2 (the stage timeout flushes any
    // incomplete one within a second).
    let before = router.settle(|s| total(s, "l2_writes_ok") >= (n - 64) / 8);
    assert!(
        total(&before, "l2_writes_ok") >= (n - 64) / 8,
        "evicted batches not written: {}",
        before["counters"]
    );
    assert_eq!(total(&before, "l2_io_errors"), 0);
    assert!(l2dir.join("shard-0.l2").exists() && l2dir.join("ndx-l2.layout").exists());
    drop(producer);

    // Second fetch: the producer is gone; L1 holds only the object's tail.
    fetch_again(&line, "/t/l2/v=5", &data);
    let after = router.settle(|s| total(s, "cs_hits") >= total(&before, "cs_hits") + n);
    let c = &after["counters"];
    eprintln!("second fetch (from L2): {c}");
    assert_eq!(
        total(&after, "interests_out"),
        total(&before, "interests_out"),
        "the second fetch forwarded Interests: {c}"
    );
    let reads = total(&after, "l2_reads_ok") - total(&before, "l2_reads_ok");
    assert!(reads >= (n - 64) / 8, "{reads} batch reads: {c}");
    assert!(total(&after, "l2_served") > 0, "{c}");
    assert_eq!(total(&after, "l2_corrupt"), 0, "{c}");
    assert_eq!(total(&after, "l2_read_failures"), 0, "{c}");
    // Stop cleanly, then start again on the same files.
    router.stop_cleanly();
    let router = line.start_router(&config);
    let start = router.settle(|s| total(s, "l2_indexed") >= n / 8);
    assert!(
        total(&start, "l2_indexed") >= n / 8,
        "recovered index: {}\n{}",
        start["counters"],
        router.log()
    );
    fetch(
        &line,
        "/t/l2/v=5",
        "got3",
        &data,
        "third ndx get (after a restart, producer stopped)",
    );
    let end = router.settle(|s| total(s, "cs_hits") >= n);
    eprintln!("after the restart: {}", end["counters"]);
    assert_eq!(
        total(&end, "interests_out"),
        0,
        "after the restart every Interest was answered here: {}",
        end["counters"]
    );
    assert!(total(&end, "l2_reads_ok") >= n / 8, "{}", end["counters"]);
    assert!(
        router.log().contains("batches recovered"),
        "recovery logged: {}",
        router.log()
    );
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: PathBuf, size: &str) -> Self {
        std::fs::create_dir_all(&at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "ndx-test"])
            .arg(&at)
            .output()
            .expect("mount runs");
        ok(&out, "mount tmpfs");
        Self(at)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A full disk under the L2: the first write that does not fit fails with ENOSPC (counted in
/// `l2_enospc`), the router logs one line and stops writing, but keeps serving the batches
/// that were written and keeps forwarding; nothing crashes.
#[test]
fn a_full_l2_disk_stops_writes_and_keeps_serving_what_was_written() {
    let Some((line, file, data)) = l2_line(1, 1024, 12) else {
        return;
    };
    // 32 MiB of log on a 512 KiB file system (tmpfs also refuses O_DIRECT: buffered I/O).
    let disk = Tmpfs::mount(line.scratch.path("small"), "512k");
    let l2 = l2_files(&disk.0, "32MiB", "");
    let (_, router) = start_with_l2(&line, 1, "", 64, &l2);
    let _producer = put_version(&line, "/t/full", &file, "1");
    fetch(
        &line,
        "/t/full/v=1",
        "got1",
        &data,
        "ndx get while the L2 fills up",
    );
    let s = router.settle(|s| total(s, "l2_writes_stopped") == 1);
    let c = &s["counters"];
    assert_eq!(total(&s, "l2_writes_stopped"), 1, "{c}");
    assert_eq!(total(&s, "l2_degraded"), 0, "{c}");
    assert!(total(&s, "l2_enospc") >= 1, "{c}");
    assert_eq!(total(&s, "l2_write_errors"), 0, "{c}");
    assert!(total(&s, "l2_writes_ok") >= 1, "some batches fit: {c}");
    let log = router.log();
    assert!(
        log.contains("L2 writes stopped, the "),
        "one clear log line: {log}"
    );
    // Still forwarding, and the batches that fit are still served from L2.
    fetch(
        &line,
        "/t/full/v=1",
        "got2",
        &data,
        "ndx get after the L2 filled up",
    );
    assert!(!router.exited(), "ndx must not crash: {}", router.log());
    let end = router.settle(|e| total(e, "l2_served") > 0);
    let c = &end["counters"];
    assert!(total(&end, "l2_reads_ok") > total(&s, "l2_reads_ok"), "{c}");
    assert!(total(&end, "l2_served") > 0, "{c}");
    assert_eq!(total(&end, "l2_corrupt"), 0, "{c}");
    drop(router);
}

/// The records of an L2 file, in file order: (offset, length, batch), found by their headers
/// (magic `NDXL`, length at byte 8, batch at byte 40; ndx-hcs `record.rs`).
fn l2_records(path: &std::path::Path) -> Vec<(u64, u64, u64)> {
    let bytes = std::fs::read(path).expect("read the L2 file");
    let mut out = Vec::new();
    let mut off = 0usize;
    while off + 4096 <= bytes.len() {
        let b = &bytes[off..];
        if &b[..4] == b"NDXL" {
            let len = u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize;
            let batch = u64::from_le_bytes(b[40..48].try_into().unwrap());
            out.push((off as u64, len as u64, batch));
            off += len.max(4096);
        } else {
            off += 4096;
        }
    }
    out
}

/// Waits until the router's L2 writes stop (staged batches go out within the stage timeout,
/// 200 ms in the test below, then complete); returns the status then.
fn l2_writes_settled(router: &topo::Router) -> serde_json::Value {
    std::thread::sleep(Duration::from_millis(500));
    let mut last = router.status();
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(400));
        let now = router.status();
        if total(&now, "l2_writes_ok") == total(&last, "l2_writes_ok")
            && total(&now, "l2_write_backlog") == 0
        {
            return now;
        }
        last = now;
    }
    panic!("L2 writes never settled: {}", last["counters"]);
}

/// Flips every bit of one byte of `path` at `offset` behind the router's back.
fn damage_byte(path: &std::path::Path, offset: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, offset).unwrap();
    f.write_all_at(&[!b[0]], offset).unwrap();
    f.sync_all().unwrap();
}

/// Storage faults under a running router (issue 34): an object is served from L2, then bytes
/// of ten records are flipped on disk and, later, the file is cut short, while ndx runs.
/// Every fetch still delivers the right bytes (`ndx get` checks them; each damaged batch comes
/// from the producer instead), every fault is counted in `ndx status` (JSON and table), and a
/// restart recovers exactly the records the running store still held.
#[test]
fn l2_records_damaged_on_disk_are_never_served_and_a_restart_recovers_the_rest() {
    // 1024 segments of 1000 bytes: 128 batches of 8.
    let n = 1024;
    let Some((line, file, data)) = l2_line(1, n as usize, 16) else {
        return;
    };
    let l2dir = line.scratch.path("l2");
    let l2 = l2_files(
        &l2dir,
        "32MiB",
        "queue_depth = 16\nstage_timeout_ms = 200\n",
    );
    let (config, router) = start_with_l2(&line, 1, "", 64, &l2);
    let _producer = put_version(&line, "/t/fault", &file, "7");
    fetch(&line, "/t/fault/v=7", "got1", &data, "first ndx get");
    router.settle(|s| total(s, "l2_writes_ok") >= (n - 64) / 8);
    // Served from L2 (the producer is still there; Interests parked on a read never leave).
    fetch(&line, "/t/fault/v=7", "got2", &data, "ndx get from L2");
    let s = router.settle(|s| total(s, "l2_reads_ok") >= (n - 64) / 8);
    let c = &s["counters"];
    assert!(total(&s, "l2_reads_ok") >= (n - 64) / 8, "{c}");
    assert!(total(&s, "l2_served") > 0, "{c}");
    for k in [
        "l2_checksum_errors",
        "l2_short_reads",
        "l2_read_errors",
        "l2_truncated",
    ] {
        assert_eq!(total(&s, k), 0, "{k}: {c}");
    }

    // 1. Bit flips: one byte in the frames of each of the records of batches 0..10.
    let path = l2dir.join("shard-0.l2");
    let records = l2_records(&path);
    assert!(records.len() as u64 >= (n - 64) / 8, "{records:?}");
    for b in 0..10 {
        let &(off, len, _) = records
            .iter()
            .find(|r| r.2 == b)
            .unwrap_or_else(|| panic!("no record of batch {b}"));
        damage_byte(&path, off + len / 2);
    }
    fetch(
        &line,
        "/t/fault/v=7",
        "got3",
        &data,
        "ndx get over bit flips",
    );
    let a = router.settle(|a| total(a, "l2_checksum_errors") >= 10);
    let c = &a["counters"];
    assert_eq!(total(&a, "l2_checksum_errors"), 10, "{c}");
    assert!(total(&a, "l2_read_failures") >= 10, "{c}");
    assert!(
        total(&a, "interests_out") >= total(&s, "interests_out") + 80,
        "the damaged batches were fetched upstream: {c}"
    );
    assert!(total(&a, "l2_served") > total(&s, "l2_served"), "{c}");
    assert_eq!(total(&a, "l2_degraded") + total(&a, "l2_writes_stopped"), 0);
    let table = router.status_table();
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("l2_checksum_errors") && l.contains(" 10")),
        "{table}"
    );

    // 2. The file cut short inside the record of batch 100 (and everything after it), once
    // the refetched batches are written: a write after the cut would extend the file again
    // and hide the cut from the file check (the records lost in the hole would then fail
    // their checksum at read time instead: never served either way).
    l2_writes_settled(&router);
    let records = l2_records(&path);
    let &(off, _, _) = records.iter().find(|r| r.2 == 100).expect("batch 100");
    let lost = records.iter().filter(|r| r.0 >= off).count() as u64;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(off + 4096 + 100)
        .unwrap();
    // The file check (once a second) drops them from the index: no read even tries.
    let t = router.settle(|t| total(t, "l2_truncated") > 0);
    assert!(
        total(&t, "l2_truncated") + total(&t, "l2_short_reads") >= lost.min(20),
        "{lost} records cut off: {}",
        t["counters"]
    );
    fetch(
        &line,
        "/t/fault/v=7",
        "got4",
        &data,
        "ndx get over a cut file",
    );
    let end = l2_writes_settled(&router);
    assert!(total(&end, "l2_writes_ok") > total(&t, "l2_writes_ok"));
    let c = &end["counters"];
    assert!(!router.exited(), "{}", router.log());
    assert_eq!(total(&end, "l2_degraded"), 0, "{c}");
    assert!(
        total(&end, "interests_out") > total(&t, "interests_out"),
        "{c}"
    );
    eprintln!("before the restart: {c}");
    let log = router.log();
    assert!(log.contains("is corrupt"), "{log}");
    assert!(log.contains("was cut short"), "{log}");

    // 3. Restart: exactly the records the store still indexed come back.
    let indexed = total(&end, "l2_indexed");
    router.stop_cleanly();
    let router = line.start_router(&config);
    let r = router.settle(|r| total(r, "l2_indexed") >= indexed);
    assert_eq!(total(&r, "l2_indexed"), indexed, "{}", router.log());
    assert!(
        total(&r, "l2_truncated") + total(&r, "l2_corrupt") >= 1,
        "the record cut in the middle: {}",
        r["counters"]
    );
    fetch(
        &line,
        "/t/fault/v=7",
        "got5",
        &data,
        "ndx get after the restart",
    );
    let e = router.settle(|e| total(e, "l2_reads_ok") > 0);
    assert!(total(&e, "l2_reads_ok") > 0, "{}", e["counters"]);
    assert_eq!(total(&e, "l2_checksum_errors"), 0, "{}", e["counters"]);
}

/// The emulated L2 (DRAM with a device delay, seed 000 §3.2) through the same data path.
#[test]
fn the_emulated_l2_serves_evicted_data() {
    let Some((line, file, data)) = l2_line(1, 1024, 13) else {
        return;
    };
    let emulated = "backend = \"emulated\"\ntau_gbps = 4\nsize = \"16MiB\"\nbatch = 8\n";
    let (_, router) = start_with_l2(&line, 1, "", 64, emulated);
    let producer = put_version(&line, "/t/emu", &file, "2");
    let after = served_again_from_l2(&line, &router, producer, "/t/emu/v=2", &data);
    assert!(total(&after, "l2_reads_ok") >= (1024 - 64) / 8);
    assert!(router.log().contains("L2 emulated"), "{}", router.log());
}

/// Two shards, objects spread over them by batch (seed 000's H=Batch, with the dispatch batch
/// equal to the L2 batch): each shard writes its own batches to its own file and serves them
/// back.
#[test]
fn two_shards_each_serve_their_batches_from_their_own_l2() {
    let Some((line, file, data)) = l2_line(2, 1024, 14) else {
        return;
    };
    let l2dir = line.scratch.path("l2");
    let l2 = l2_files(&l2dir, "16MiB", "");
    let (_, router) = start_with_l2(&line, 2, "dispatch = \"batch:8\"\n", 32, &l2);
    let producer = put_version(&line, "/t/l2s", &file, "4");
    let after = served_again_from_l2(&line, &router, producer, "/t/l2s/v=4", &data);
    eprintln!("{}", after["shards"]);
    let reads = per_shard(&after, "l2_reads_ok");
    let writes = per_shard(&after, "l2_writes_ok");
    assert!(
        reads.iter().all(|&r| r > 0) && writes.iter().all(|&w| w > 0),
        "both shards use their L2: reads {reads:?}, writes {writes:?}"
    );
    assert!(l2dir.join("shard-0.l2").exists() && l2dir.join("shard-1.l2").exists());
    assert_eq!(
        total(&after, "l2_read_failures"),
        0,
        "{}",
        after["counters"]
    );
}

/// A clean stop writes the batches still being staged (here an incomplete one, with the stage
/// timeout off), so the restarted router finds them.
#[test]
fn a_clean_stop_writes_the_staged_batches() {
    // 1020 segments; L1 keeps the last 64, so 956 are evicted: 119 whole batches of 8 and
    // segments 952..=955 of batch 119, staged and incomplete.
    let Some((line, file, data)) = l2_line(1, 1020, 15) else {
        return;
    };
    let l2dir = line.scratch.path("l2");
    let l2 = l2_files(&l2dir, "16MiB", "stage_timeout_ms = 0\n");
    let (config, router) = start_with_l2(&line, 1, "", 64, &l2);
    let _producer = put_version(&line, "/t/stop", &file, "6");
    fetch(&line, "/t/stop/v=6", "got", &data, "ndx get");
    let s = router.settle(|s| total(s, "l2_writes_ok") >= 119);
    assert_eq!(total(&s, "l2_writes_ok"), 119, "{}", s["counters"]);
    router.stop_cleanly();
    let router = line.start_router(&config);
    let s = router.settle(|s| total(s, "l2_indexed") >= 120);
    assert_eq!(
        total(&s, "l2_indexed"),
        120,
        "the incomplete batch was written at the stop: {}",
        s["counters"]
    );
}
