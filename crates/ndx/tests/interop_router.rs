//! Other NDN software talking through ndx (AF_XDP, in its own network namespace), as root:
//!
//! - a python-ndn consumer fetches a multi-segment object from a python-ndn producer through
//!   ndx over UDP/IPv4 (ndx-app's interop scripts; 1000-byte segments, python-ndn does not
//!   fragment);
//! - `ndx get` fetches through ndx from `ndnd put`, behind ndnd's forwarder (`ndnd fw`) as
//!   ndx's neighbour router (8000-byte segments: NDNLPv2 fragments from ndnd, reassembled by
//!   ndx, and PitTokens both ways).
//!
//! The tools are `$NDX_PYTHON` (else `/opt/ndx-interop/venv/bin/python`) and `$NDX_NDND` (else
//! `/opt/ndx-interop/go/ndnd`); when one is missing its test prints `skipping: <reason>`, and
//! fails instead under `NDX_REQUIRE_ROOT_TESTS=1` (CI).

mod support;
mod topo;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::{Proc, ndnd, python, skip, stdout_lines, wait_for};
use topo::{Family, Line, spawn_logged, total};

/// ndx-app's python-ndn interop scripts.
fn pyndn_script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../ndx-app/tests/interop/{name}"))
}

fn sha256_hex(path: &std::path::Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn python_ndn_consumer_fetches_from_python_ndn_producer_through_ndx() {
    if skip() {
        return;
    }
    let Some(py) = python() else { return };
    let line = Line::new(Family::V4, 1, 1500);
    let (file, data) = line.content("obj", 200_000, 31);
    let router = line.start_udp_router("");
    // The producer's "forwarder" is ndx: its UDP socket is connected to ndx's address (its
    // prefix registration gets no answer from ndx, which python-ndn logs and goes on).
    let to_ndx = format!("udp://{}", line.endpoint(2, 2, 6363));
    let mut cmd = line.p.cmd(&py);
    cmd.arg(pyndn_script("pyndn_producer.py"))
        .args([to_ndx.as_str(), "/py/obj"])
        .arg(&file)
        .arg("1000")
        .env("NDN_CLIENT_TRANSPORT", &to_ndx);
    let mut producer = Proc::spawn(cmd, "pyndn_producer.py");
    let ready = stdout_lines(&mut producer)
        .recv_timeout(Duration::from_secs(30))
        .expect("the python-ndn producer did not start");
    let mut w = ready.split_whitespace();
    assert_eq!(w.next(), Some("ready"), "{ready}");
    let local = w.next().expect("address").to_owned();
    let versioned = w.next().expect("name").to_owned();
    // The producer's registration Interest already made ndx create an on-demand face for it
    // (named after its address); a face is added only if not.
    let face = if router.try_ctl(&["face", "add", "pyprod", &format!("udp://{local}")]) {
        "pyprod".to_owned()
    } else {
        local.clone()
    };
    router.ctl(&["route", "add", "/py", &face]);

    let out = line.scratch.path("got");
    let to_router = format!("udp://{}", line.router_target());
    let mut cmd = line.c.cmd(&py);
    cmd.arg(pyndn_script("pyndn_consumer.py"))
        .args([to_router.as_str(), "/py/obj"])
        .arg(&out)
        .env("NDN_CLIENT_TRANSPORT", &to_router);
    let mut consumer = Proc::spawn(cmd, "pyndn_consumer.py");
    let result = stdout_lines(&mut consumer)
        .recv_timeout(Duration::from_secs(120))
        .expect("the python-ndn consumer printed nothing");
    assert_eq!(
        result,
        format!("ok {} {}", data.len(), sha256_hex(&file)),
        "python-ndn consumer through ndx"
    );
    assert!(std::fs::read(&out).unwrap() == data);
    let n = 200;
    let s = router.settle(|s| total(s, "data_out") >= n);
    assert!(total(&s, "interests_out") >= n, "{}", s["counters"]);
    assert!(total(&s, "data_in") >= n, "{}", s["counters"]);
    assert!(total(&s, "data_out") >= n, "{}", s["counters"]);
    assert_eq!(total(&s, "drop_malformed"), 0, "{}", s["counters"]);
    eprintln!("fetched {versioned} through ndx: {}", s["counters"]);
}

/// Starts `ndnd fw` in `ns` (UDP 6363, unix socket `<name>.sock` in the scratch directory) and
/// waits for its socket.
fn ndnd_fw(bin: &PathBuf, line: &Line, ns: &support::Netns, name: &str) -> (Proc, PathBuf) {
    let sock = line.scratch.path(&format!("{name}.sock"));
    let yml = line.scratch.path(&format!("{name}.yml"));
    let log = line.scratch.path(&format!("{name}.log"));
    std::fs::write(
        &yml,
        format!(
            "core:\n  log_level: WARN\nfaces:\n  udp:\n    enabled_unicast: true\n    \
             enabled_multicast: false\n    port_unicast: 6363\n    default_mtu: 1420\n  \
             tcp:\n    enabled: false\n  unix:\n    enabled: true\n    socket_path: {}\n  \
             websocket:\n    enabled: false\n",
            sock.display()
        ),
    )
    .unwrap();
    let mut fw = ns.cmd(bin);
    fw.args(["fw", "run"]).arg(&yml);
    let fw = spawn_logged(fw, "ndnd fw", &log);
    assert!(
        wait_for(20, || sock.exists()),
        "ndnd fw did not start: {}",
        topo::read(&log)
    );
    (fw, sock)
}

/// `ndnd cat` → `ndnd fw` (consumer namespace) → ndx → `ndx put`: ndnd's Interests carry
/// its own 6-byte PitTokens, which ndx must echo; ndx's 8000-byte Data reach ndnd as NDNLPv2
/// fragments, which ndnd reassembles.
#[test]
fn ndnd_cat_through_ndnd_and_ndx_from_ndx_put() {
    if skip() {
        return;
    }
    let Some(bin) = ndnd() else { return };
    let line = Line::new(Family::V4, 1, 1500);
    let (file, data) = line.content("obj", 400_000, 33);
    let router = line.start_udp_router("");
    let _producer = line.put("/t/cat", &file, &[]);
    let (_fw, sock) = ndnd_fw(&bin, &line, &line.c, "fw");
    let client = format!("unix://{}", sock.display());
    let route = line
        .c
        .cmd(&bin)
        .args(["fw", "route-add", "prefix=/t"])
        .arg(format!("face=udp://{}", line.router_target()))
        .arg("persistency=permanent")
        .env("NDN_CLIENT_TRANSPORT", &client)
        .output()
        .expect("ndnd fw route-add");
    assert!(route.status.success(), "ndnd route-add: {route:?}");
    // `ndnd cat` gives up after a few short retries of its first Interest; on a loaded machine
    // (and with ndx dropping the very first Interest to a face, see the datapath test
    // first_interests_to_a_resolved_face_are_sent) it may need another go.
    let mut cat = None;
    for _ in 0..3 {
        let out = line
            .c
            .cmd(&bin)
            .args(["cat", "/t/cat"])
            .env("NDN_CLIENT_TRANSPORT", &client)
            .stdin(Stdio::null())
            .output()
            .expect("ndnd cat");
        let done = out.status.success();
        cat = Some(out);
        if done {
            break;
        }
    }
    let cat = cat.expect("ran");
    assert!(
        cat.status.success(),
        "ndnd cat through ndx failed: {}\nndx: {}\nndnd fw: {}",
        String::from_utf8_lossy(&cat.stderr),
        router.status()["counters"],
        topo::read(&line.scratch.path("fw.log"))
    );
    assert!(cat.stdout == data, "ndnd cat got a different object");
    let n = 400_000u64.div_ceil(8000);
    let s = router.settle(|s| total(s, "data_out") >= n);
    assert!(total(&s, "data_in") >= n, "{}", s["counters"]);
    assert!(total(&s, "data_out") >= n, "{}", s["counters"]);
    assert_eq!(total(&s, "drop_malformed"), 0, "{}", s["counters"]);
}

/// `ndx get` → ndx → `ndnd fw` (producer namespace) → `ndnd put`.
#[test]
fn ndx_get_through_ndx_and_ndnd_from_ndnd_put() {
    if skip() {
        return;
    }
    let Some(bin) = ndnd() else { return };
    let line = Line::new(Family::V4, 1, 1500);
    let (_, data) = line.content("obj", 1_000_000, 32);
    // ndnd's forwarder in the producer namespace, on UDP 6363 and a private unix socket.
    let (_fw, sock) = ndnd_fw(&bin, &line, &line.p, "fw");
    let mut put = line.p.cmd(&bin);
    put.args(["put", "/t/nd"])
        .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", sock.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut put = Proc {
        child: Some(put.spawn().expect("ndnd put")),
        what: "ndnd put".into(),
    };
    put.child
        .as_mut()
        .and_then(|c| c.stdin.take())
        .expect("stdin")
        .write_all(&data)
        .unwrap();
    // ndx routes /t to ndnd's forwarder.
    let router = line.start_udp_router("");
    let out = line.scratch.path("got");
    // `ndnd put` registers its prefix asynchronously: allow a few discovery attempts.
    let got = line.get(
        "/t/nd",
        &out,
        &["--discovery-retries", "10", "--initial-rto-ms", "500"],
    );
    if !got.status.success() {
        panic!(
            "ndx get through ndx and ndnd failed: {}\nndx: {}\n{}\nndnd fw: {}",
            String::from_utf8_lossy(&got.stderr),
            router.status()["counters"],
            router.status()["xdp"],
            topo::read(&line.scratch.path("fw.log"))
        );
    }
    assert!(std::fs::read(&out).unwrap() == data, "object differs");
    let s = router.settle(|s| total(s, "data_out") > 0);
    assert!(total(&s, "data_in") > 0, "{}", s["counters"]);
    assert!(total(&s, "interests_out") > 0, "{}", s["counters"]);
    assert_eq!(total(&s, "drop_malformed"), 0, "{}", s["counters"]);
    eprintln!("{}\n{}", String::from_utf8_lossy(&got.stderr), s["xdp"]);
    drop(put);
}
