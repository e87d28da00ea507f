//! ndx as the host's forwarder, as root with real NDN software: local applications on ndx's
//! app socket (python-ndn, ndnd's tools, ndx's own tools), NFD management (python-ndn's
//! management client), bad management input, connection churn, and the interop fixes found
//! with real peers (IP-fragmented UDP, long names).
//!
//! The peers are the scripts in `tests/peers/` (see its README) on python-ndn
//! (`$NDX_PYTHON`, else `/opt/ndx-interop/venv/bin/python`) and ndnd (`$NDX_NDND`, else
//! `/opt/ndx-interop/go/ndnd`); a missing tool prints `skipping: <reason>`, and fails under
//! `NDX_REQUIRE_ROOT_TESTS=1` (CI).

mod support;
mod topo;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::{Netns, Proc, skip, stdout_lines, wait_for};
use topo::{Family, Line, Router, total};

/// Skips (returns `None`) when a tool is missing, or fails under `NDX_REQUIRE_ROOT_TESTS=1`.
fn tool_missing<T>(why: &str) -> Option<T> {
    assert!(
        std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() != Ok("1"),
        "NDX_REQUIRE_ROOT_TESTS=1 but {why} (cargo xtask test installs it)"
    );
    eprintln!("skipping: {why}");
    None
}

fn python() -> Option<String> {
    let py =
        std::env::var("NDX_PYTHON").unwrap_or_else(|_| "/opt/ndx-interop/venv/bin/python".into());
    let usable = Command::new(&py)
        .args(["-c", "import ndn.appv2, ndn.app_support.nfd_mgmt"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if usable {
        Some(py)
    } else {
        tool_missing(&format!("{py} with python-ndn is missing"))
    }
}

fn ndnd() -> Option<PathBuf> {
    let p = PathBuf::from(
        std::env::var("NDX_NDND").unwrap_or_else(|_| "/opt/ndx-interop/go/ndnd".into()),
    );
    if p.is_file() {
        Some(p)
    } else {
        tool_missing(&format!("{} is missing", p.display()))
    }
}

/// A peer script of `tests/peers/`.
fn peer(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
}

/// `unix://` URI of a socket path.
fn unix(p: &Path) -> String {
    format!("unix://{}", p.display())
}

/// Runs a peer script in `ns` on `transport`, to completion.
fn run_peer(ns: &Netns, py: &str, script: &str, transport: &str, args: &[&str]) -> Output {
    ns.cmd(py)
        .arg(peer(script))
        .args(args)
        .env("NDN_CLIENT_TRANSPORT", transport)
        .stdin(Stdio::null())
        .output()
        .expect("python runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn describe(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A python-ndn producer on the router's app socket serving `file` under `prefix`; returns
/// once it printed `ready` (its registration answered 200).
fn app_producer(line: &Line, py: &str, prefix: &str, file: &Path, extra: &[&str]) -> Proc {
    let mut cmd = line.r.cmd(py);
    cmd.arg(peer("app_producer.py"))
        .args([prefix, "--file"])
        .arg(file)
        .args(extra)
        .env("NDN_CLIENT_TRANSPORT", unix(&line.app_socket()));
    let mut p = Proc::spawn(cmd, "app_producer.py");
    let ready = stdout_lines(&mut p)
        .recv_timeout(Duration::from_secs(30))
        .expect("the python-ndn producer did not register within 30 s");
    assert!(ready.starts_with("ready "), "producer said: {ready}");
    p
}

/// The RIB's routes for `prefix` as (face, origin) pairs, from `ndx route list`'s JSON.
fn rib_routes(router: &Router, prefix: &str) -> Vec<(u64, String)> {
    let v = router_routes(router);
    v["rib"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["prefix"] == prefix)
        .flat_map(|e| e["routes"].as_array().cloned().unwrap_or_default())
        .map(|r| {
            (
                r["face"].as_u64().unwrap_or(0),
                r["origin"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn router_routes(router: &Router) -> Value {
    router.routes()
}

fn app_faces(router: &Router) -> usize {
    router.status()["faces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["origin"] == "app")
        .count()
}

#[test]
fn python_ndn_producer_on_the_app_socket_is_fetched_over_udp_and_its_route_goes_with_it() {
    if skip() {
        return;
    }
    let Some(py) = python() else { return };
    let line = Line::new(Family::V4, 1, 1500);
    let (file, data) = line.content("obj", 300_000, 7);
    let router =
        line.start_router(&line.config(1, &format!("udp://{}", line.producer_endpoint()), ""));
    let mut producer = app_producer(&line, &py, "/app/py", &file, &[]);
    let routes = rib_routes(&router, "/app/py");
    assert_eq!(routes.len(), 1, "one route: {routes:?}");
    assert_eq!(routes[0].1, "app");
    assert_eq!(app_faces(&router), 1);

    // A consumer in another namespace, over UDP: 8000-byte segments reach it in NDNLPv2
    // fragments (ndx get reassembles them).
    let out = line.scratch.path("got");
    let o = line.get("/app/py", &out, &[]);
    assert!(o.status.success(), "ndx get: {}", describe(&o));
    assert_eq!(std::fs::read(&out).unwrap(), data, "bytes differ");

    // The producer disconnects: its face and route go, and the next Interest is Nacked.
    let _ = producer.stop("TERM");
    let gone = wait_for(10, || {
        rib_routes(&router, "/app/py").is_empty() && app_faces(&router) == 0
    });
    assert!(gone, "route or face left: {}", router_routes(&router));
    let to = format!("udp://{}", line.router_target());
    let o = run_peer(
        &line.c,
        &py,
        "fetch.py",
        &to,
        &["--one", "/app/py/x", "--timeout", "20"],
    );
    assert!(
        stdout(&o).contains("nack") && stdout(&o).contains("NoRoute"),
        "{}",
        describe(&o)
    );
    let st = router.status();
    assert!(total(&st, "drop_no_route") >= 1);
}
