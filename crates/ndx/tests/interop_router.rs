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

mod peers;
mod support;
mod topo;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use peers::{
    assert_forwarded, first_line, ndnd_line, ndnd_tool, py_line, pyndn_script, pyndn_udp_producer,
    spawn_script, unix,
};
use support::{Proc, wait_for};
use topo::{Line, spawn_logged, total};

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
    let Some((py, line)) = py_line() else { return };
    let (file, data) = line.content("obj", 200_000, 31);
    let router = line.start_udp_router("");
    // The producer's "forwarder" is ndx: its UDP socket is connected to ndx's address (its
    // prefix registration gets no answer from ndx, which python-ndn logs and goes on).
    let (_producer, local, versioned) = pyndn_udp_producer(&line, &py, "/py/obj", &file, 1000);
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
    let mut consumer = spawn_script(
        &line.c,
        &py,
        &pyndn_script("pyndn_consumer.py"),
        &to_router,
        &[
            to_router.as_str(),
            "/py/obj",
            out.to_str().expect("UTF-8 path"),
        ],
    );
    let result = first_line(
        &mut consumer,
        120,
        "the python-ndn consumer printed nothing",
    );
    assert_eq!(
        result,
        format!("ok {} {}", data.len(), sha256_hex(&file)),
        "python-ndn consumer through ndx"
    );
    assert!(std::fs::read(&out).unwrap() == data);
    let n = 200;
    let s = router.settle(|s| total(s, "data_out") >= n);
    assert_forwarded(&s, &["interests_out", "data_in", "data_out"], n);
    eprintln!("fetched {versioned} through ndx: {}", s["counters"]);
}

/// Starts `ndnd fw` in `ns` (UDP 6363, unix socket `<name>.sock` in the scratch directory) and
/// waits for its socket.
fn ndnd_fw(bin: &Path, line: &Line, ns: &support::Netns, name: &str) -> (Proc, PathBuf) {
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
    let Some((bin, line)) = ndnd_line() else {
        return;
    };
    let (file, data) = line.content("obj", 400_000, 33);
    let router = line.start_udp_router("");
    let _producer = line.put("/t/cat", &file, &[]);
    let (_fw, sock) = ndnd_fw(&bin, &line, &line.c, "fw");
    let client = unix(&sock);
    let face = format!("face=udp://{}", line.router_target());
    let route = ndnd_tool(
        &line.c,
        &bin,
        &client,
        &[
            "fw",
            "route-add",
            "prefix=/t",
            &face,
            "persistency=permanent",
        ],
    );
    assert!(route.status.success(), "ndnd route-add: {route:?}");
    // `ndnd cat` gives up after a few short retries of its first Interest; on a loaded machine
    // (and with ndx dropping the very first Interest to a face, see the datapath test
    // first_interests_to_a_resolved_face_are_sent) it may need another go.
    let mut cat = None;
    for _ in 0..3 {
        let out = ndnd_tool(&line.c, &bin, &client, &["cat", "/t/cat"]);
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
    assert_forwarded(&s, &["data_in", "data_out"], n);
}

/// `ndx get` → ndx → `ndnd fw` (producer namespace) → `ndnd put`.
#[test]
fn ndx_get_through_ndx_and_ndnd_from_ndnd_put() {
    let Some((bin, line)) = ndnd_line() else {
        return;
    };
    let (_, data) = line.content("obj", 1_000_000, 32);
    // ndnd's forwarder in the producer namespace, on UDP 6363 and a private unix socket.
    let (_fw, sock) = ndnd_fw(&bin, &line, &line.p, "fw");
    let mut put = line.p.cmd(&bin);
    put.args(["put", "/t/nd"])
        .env("NDN_CLIENT_TRANSPORT", unix(&sock))
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
    assert_forwarded(&s, &["data_in", "interests_out"], 1);
    eprintln!("{}\n{}", String::from_utf8_lossy(&got.stderr), s["xdp"]);
    drop(put);
}
