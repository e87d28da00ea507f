//! Helpers shared by the tests that run real NDN software against ndx (`app_face`,
//! `interop_router`): the scripts of this folder, ndx-app's python-ndn interop scripts, ndnd's
//! client tools, and what their output says. Needs the test's `support` and `topo` modules.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use crate::support::{Netns, Proc, ndnd, python, skip, stdout_lines};
use crate::topo::{Family, Line, total};

/// The one-router line (IPv4, MTU 1500) that every test here runs on, after the root check
/// ([`skip`]); `None` when the test should return.
pub fn line() -> Option<Line> {
    if skip() {
        return None;
    }
    Some(Line::new(Family::V4, 1, 1500))
}

/// python-ndn's interpreter and the [`line`], or `None` (after [`skip`] or a missing tool).
pub fn py_line() -> Option<(String, Line)> {
    if skip() {
        return None;
    }
    let py = python()?;
    Some((py, Line::new(Family::V4, 1, 1500)))
}

/// ndnd's binary and the [`line`], or `None` (after [`skip`] or a missing tool).
pub fn ndnd_line() -> Option<(PathBuf, Line)> {
    if skip() {
        return None;
    }
    let bin = ndnd()?;
    Some((bin, Line::new(Family::V4, 1, 1500)))
}

/// A peer script of `tests/peers/`.
pub fn peer(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
}

/// One of ndx-app's python-ndn interop scripts (`crates/ndx-app/tests/interop/`).
pub fn pyndn_script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../ndx-app/tests/interop/{name}"))
}

/// `unix://` URI of a socket path.
pub fn unix(p: &Path) -> String {
    format!("unix://{}", p.display())
}

/// Runs a peer script in `ns` on `transport`, to completion.
pub fn run_peer(ns: &Netns, py: &str, script: &str, transport: &str, args: &[&str]) -> Output {
    ns.cmd(py)
        .arg(peer(script))
        .args(args)
        .env("NDN_CLIENT_TRANSPORT", transport)
        .stdin(Stdio::null())
        .output()
        .expect("python runs")
}

/// Starts python script `script` (a path) in `ns` on `transport`, in the background.
pub fn spawn_script(ns: &Netns, py: &str, script: &Path, transport: &str, args: &[&str]) -> Proc {
    let mut cmd = ns.cmd(py);
    cmd.arg(script)
        .args(args)
        .env("NDN_CLIENT_TRANSPORT", transport);
    let what = script.file_name().map_or_else(
        || script.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Proc::spawn(cmd, &what)
}

/// The first stdout line of `p` within `secs` seconds; panics with `what` otherwise.
pub fn first_line(p: &mut Proc, secs: u64, what: &str) -> String {
    stdout_lines(p)
        .recv_timeout(Duration::from_secs(secs))
        .expect(what)
}

/// Runs ndnd's client tool (`ndnd ARGS`) in `ns` on `transport`, to completion.
pub fn ndnd_tool(ns: &Netns, bin: &Path, transport: &str, args: &[&str]) -> Output {
    ns.cmd(bin)
        .args(args)
        .env("NDN_CLIENT_TRANSPORT", transport)
        .stdin(Stdio::null())
        .output()
        .expect("ndnd runs")
}

/// ndx-app's python-ndn producer (`pyndn_producer.py`) in the producer namespace, straight
/// over UDP to ndx's address (no forwarder of its own), serving `file` under `prefix` in
/// `seg`-byte segments. Returns it with the two words after `ready`: its `IP:PORT` and the
/// versioned name.
pub fn pyndn_udp_producer(
    line: &Line,
    py: &str,
    prefix: &str,
    file: &Path,
    seg: usize,
) -> (Proc, String, String) {
    let to_ndx = format!("udp://{}", line.endpoint(2, 2, 6363));
    let file = file.to_str().expect("UTF-8 path");
    let seg = seg.to_string();
    let mut producer = spawn_script(
        &line.p,
        py,
        &pyndn_script("pyndn_producer.py"),
        &to_ndx,
        &[to_ndx.as_str(), prefix, file, &seg],
    );
    let ready = first_line(&mut producer, 30, "the python-ndn producer did not start");
    let mut w = ready.split_whitespace();
    assert_eq!(w.next(), Some("ready"), "{ready}");
    let local = w.next().expect("address").to_owned();
    let versioned = w.next().expect("name").to_owned();
    (producer, local, versioned)
}

/// A process's stdout, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Status, stdout and stderr of a process, for a failed assertion.
pub fn describe(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Asserts that the process succeeded and its stdout contains `text`.
pub fn assert_ok_saying(o: &Output, text: &str) {
    assert!(
        o.status.success() && stdout(o).contains(text),
        "{}",
        describe(o)
    );
}

/// Asserts each of `counters` totals at least `n` in status `s`, and no packet was dropped as
/// malformed.
pub fn assert_forwarded(s: &serde_json::Value, counters: &[&str], n: u64) {
    for c in counters {
        assert!(total(s, c) >= n, "{c}: {}", s["counters"]);
    }
    assert_eq!(total(s, "drop_malformed"), 0, "{}", s["counters"]);
}
