//! ndx under systemd, as root, in throwaway namespace topologies:
//! - the notification protocol end to end: a fake abstract `NOTIFY_SOCKET` in the router's
//!   namespace (abstract Unix names are per network namespace, like systemd's own in a
//!   container) with `WATCHDOG_USEC`: `READY=1` arrives once the interfaces are attached,
//!   `WATCHDOG=1` keeps arriving, and after a shard worker is frozen on purpose (the
//!   test-only `NDX_TEST_FREEZE_SHARD` hook) no `WATCHDOG=1` arrives for a generous window
//!   while the process lives on; `STOPPING=1` on SIGTERM;
//! - `ndx run` as an unprivileged user with exactly `configs/systemd/ndx.service`'s ambient
//!   capabilities (setpriv): it forwards a fetch and answers on its control socket; and with
//!   any one of them missing it refuses to start with an error naming the capability.
//!
//! Without root (or BPF) the tests print `skipping: <reason>`; with `NDX_REQUIRE_ROOT_TESTS=1`
//! (CI) they fail instead.

mod support;
mod topo;

use std::os::fd::AsFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use support::{Netns, skip, tag, wait_for};
use topo::{Family, Line, NDX, Router, has_xdp, ok, read};

/// The unprivileged user the tests run ndx as.
const NOBODY: u32 = 65534;

/// Binds an abstract datagram socket `name` inside `ns` (from a thread that enters the
/// namespace and ends), and forwards every datagram it receives to the returned channel.
fn notify_listener(ns: &Netns, name: &str) -> Receiver<String> {
    let path = PathBuf::from(format!("/run/netns/{}", ns.name));
    let name = name.to_owned();
    let sock = std::thread::spawn(move || {
        let f = std::fs::File::open(&path).expect("namespace file");
        rustix::thread::move_into_link_name_space(
            f.as_fd(),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )
        .expect("setns");
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        UnixDatagram::bind_addr(&addr).expect("bind the fake notify socket")
    })
    .join()
    .expect("listener thread");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = sock.recv(&mut buf) {
            if tx
                .send(String::from_utf8_lossy(&buf[..n]).into_owned())
                .is_err()
            {
                break;
            }
        }
    });
    rx
}

/// Waits (up to `secs`) for a message that `f` accepts, returning it and what came before.
fn wait_msg(
    rx: &Receiver<String>,
    secs: u64,
    mut f: impl FnMut(&str) -> bool,
) -> Option<(String, Vec<String>)> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut before = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(m) if f(&m) => return Some((m, before)),
            Ok(m) => before.push(m),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// Starts `ndx run` in the router namespace with `cfg` and the environment `env`, waiting
/// for its control socket.
/// `prefix`, when not empty, is the command that runs ndx (ending with its path).
fn start(line: &Line, cfg: &str, env: &[(&str, &str)], prefix: &[&str]) -> Router {
    let sock = cfg
        .lines()
        .find_map(|l| l.strip_prefix("control_socket = \""))
        .and_then(|l| l.strip_suffix('"'))
        .map(PathBuf::from)
        .expect("control_socket in the configuration");
    let path = line.scratch.path("ndx.toml");
    std::fs::write(&path, cfg).unwrap();
    let log = line.scratch.path("ndx.log");
    let mut cmd = if prefix.is_empty() {
        line.r.cmd(NDX)
    } else {
        let mut c = line.r.cmd(prefix[0]);
        c.args(&prefix[1..]);
        c
    };
    cmd.arg("run").arg("-c").arg(&path);
    cmd.envs(env.iter().copied());
    Router::launch(cmd, sock, log, 60)
}

/// The start of every test here: `None` when it skips; else a line of `shards` queues whose
/// producer's MAC is in the router namespace's neighbour table (ndx learns next hops there),
/// and its router's configuration: idle shards park, `extra` TOML follows under `[router]`.
fn parked_line(shards: u32, extra: &str) -> Option<(Line, String)> {
    if skip() {
        return None;
    }
    let line = Line::new(Family::V4, shards, 1500);
    let _ = line
        .r
        .try_run(&["ping", "-4", "-c", "1", "-W", "5", &line.ip(2, 1)]);
    let cfg = line.udp_config(shards, &format!("idle = \"park\"\n{extra}"));
    Some((line, cfg))
}

#[test]
fn ready_after_attach_then_watchdog_until_a_shard_freezes() {
    let Some((line, cfg)) = parked_line(2, "") else {
        return;
    };
    let name = format!("ndxt-notify-{}", tag());
    let rx = notify_listener(&line.r, &name);
    let freeze = line.scratch.path("freeze-now");
    let notify = format!("@{name}");
    let hook = format!("1:{}", freeze.display());
    let router = start(
        &line,
        &cfg,
        &[
            ("NOTIFY_SOCKET", notify.as_str()),
            // A ping every second (half of it).
            ("WATCHDOG_USEC", "2000000"),
            ("NDX_TEST_FREEZE_SHARD", hook.as_str()),
        ],
        &[],
    );
    let (ready, before) = wait_msg(&rx, 60, |m| m.contains("READY=1"))
        .unwrap_or_else(|| panic!("no READY=1:\n{}", router.log()));
    // Nothing claims to be up before that, and by then both interfaces carry the program.
    assert!(
        before.iter().all(|m| !m.contains("WATCHDOG=1")),
        "{before:?}"
    );
    assert!(has_xdp(&line.r, "c0") && has_xdp(&line.r, "p0"));
    assert!(
        ready.contains("STATUS=forwarding: 2 shard(s)"),
        "READY=1 without the status line: {ready:?}"
    );
    // Pings keep coming while both shards poll.
    for i in 0..3 {
        assert!(
            wait_msg(&rx, 30, |m| m == "WATCHDOG=1").is_some(),
            "WATCHDOG=1 number {} did not arrive:\n{}",
            i + 1,
            router.log()
        );
    }
    // Freeze shard 1: the warning names it, and the pings stop.
    std::fs::write(&freeze, b"").unwrap();
    let stuck = wait_for(30, || {
        router
            .log()
            .contains("shard 1 made no progress for 1000 ms: withholding the systemd watchdog")
    });
    assert!(stuck, "no stuck-shard warning:\n{}", router.log());
    assert!(router.log().contains("shard 1: frozen on purpose"));
    while rx.try_recv().is_ok() {}
    // A generous window (six ping intervals): no ping, the process lives, its control thread
    // still answers.
    let late = wait_msg(&rx, 6, |m| m.contains("WATCHDOG=1"));
    assert!(late.is_none(), "a ping while shard 1 is frozen: {late:?}");
    assert!(!router.exited(), "ndx exited:\n{}", router.log());
    assert!(router.try_status().is_some());
    assert!(
        !router.log().contains("shard 0 made no progress"),
        "shard 0 was blamed too:\n{}",
        router.log()
    );
    // SIGTERM still stops it cleanly (the frozen worker honours the stop flag).
    let out = router.proc.stop("TERM");
    assert!(out.status.success(), "{}", read(&router.log));
    assert!(
        wait_msg(&rx, 10, |m| m.contains("STOPPING=1")).is_some(),
        "no STOPPING=1"
    );
}

#[test]
fn an_unusable_notify_socket_is_a_warning() {
    let Some((line, cfg)) = parked_line(1, "") else {
        return;
    };
    let nobody_there = format!("@ndxt-nobody-listens-{}", tag());
    let router = start(
        &line,
        &cfg,
        &[("NOTIFY_SOCKET", nobody_there.as_str())],
        &[],
    );
    let log = router.log();
    assert!(
        log.contains(
            "ndx: warning: systemd notification disabled: NOTIFY_SOCKET=\"@ndxt-nobody-listens-"
        ),
        "{log}"
    );
    // It forwards anyway.
    assert!(router.try_status().is_some());
}

/// The unit's `AmbientCapabilities=`, as written there (`CAP_NET_ADMIN`, ...).
fn unit_capabilities() -> Vec<String> {
    let unit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/systemd/ndx.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    let list = |key: &str| -> Vec<String> {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("ndx.service sets {key}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    let caps = list("AmbientCapabilities=");
    let bounding = list("CapabilityBoundingSet=");
    assert_eq!(caps, bounding, "the bounding set is the ambient set");
    caps
}

/// The ndx binary, or a copy in the line's scratch directory when [`NOBODY`] cannot run it
/// where it is (a target directory under a private home).
fn ndx_for_nobody(line: &Line) -> PathBuf {
    let runs = Command::new("setpriv")
        .args([&format!("--reuid={NOBODY}"), &format!("--regid={NOBODY}")])
        .arg("--clear-groups")
        .args([NDX, "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if runs {
        return PathBuf::from(NDX);
    }
    let copy = line.scratch.path("ndx");
    std::fs::copy(NDX, &copy).unwrap();
    copy
}

/// The command that runs `ndx` as [`NOBODY`] with exactly `caps`.
fn setpriv(caps: &[String], ndx: &Path) -> Vec<String> {
    let list: Vec<String> = caps
        .iter()
        .map(|c| format!("+{}", c.trim_start_matches("CAP_").to_lowercase()))
        .collect();
    let set = format!("-all,{}", list.join(","));
    vec![
        "setpriv".into(),
        format!("--reuid={NOBODY}"),
        format!("--regid={NOBODY}"),
        "--clear-groups".into(),
        format!("--inh-caps={set}"),
        format!("--ambient-caps={set}"),
        format!("--bounding-set={set}"),
        ndx.display().to_string(),
    ]
}

/// The capability bits of a `CAP_*` name (the ones ndx.service may use).
fn cap_bit(name: &str) -> u64 {
    let n = match name {
        "CAP_NET_ADMIN" => 12,
        "CAP_NET_RAW" => 13,
        "CAP_IPC_LOCK" => 14,
        "CAP_SYS_NICE" => 23,
        "CAP_SYS_RESOURCE" => 24,
        "CAP_PERFMON" => 38,
        "CAP_BPF" => 39,
        other => panic!("unexpected capability {other} in ndx.service"),
    };
    1 << n
}

/// A line laid out as the unit lays out the filesystem: the scratch directory stays root's
/// (ProtectSystem=); `run/` belongs to the user (RuntimeDirectory=) and holds the control
/// socket; `nfd` links to it (ndx.tmpfiles' `/run/nfd`) and the app socket is configured
/// through the link. Returns the line and the configuration (`extra` under `[router]`), or
/// `None` when the test skips.
fn unprivileged_line(extra: &str) -> Option<(Line, String)> {
    let (line, cfg) = parked_line(1, extra)?;
    let run = line.scratch.path("run");
    std::fs::create_dir(&run).unwrap();
    std::os::unix::fs::chown(&run, Some(NOBODY), Some(NOBODY)).unwrap();
    std::os::unix::fs::symlink(&run, line.scratch.path("nfd")).unwrap();
    let path = |p: PathBuf| p.display().to_string();
    let cfg = cfg
        .replace(
            &path(line.scratch.path("ndx.sock")),
            &path(run.join("ndx.sock")),
        )
        .replace(
            &path(line.app_socket()),
            &path(line.scratch.path("nfd/nfd.sock")),
        );
    Some((line, cfg))
}

/// The start of the tests of the unit's capabilities: `None` when they skip (no root, no
/// setpriv); else the unit's capabilities and [`unprivileged_line`] (`extra` under `[router]`).
fn unprivileged_setup(extra: &str) -> Option<(Vec<String>, Line, String)> {
    if skip() {
        return None;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        return support::tool_missing("setpriv (util-linux) is missing");
    }
    let caps = unit_capabilities();
    let (line, cfg) = unprivileged_line(extra)?;
    Some((caps, line, cfg))
}

#[test]
fn forwards_as_an_unprivileged_user_with_the_units_capabilities() {
    // The L2 store too (io_uring buffers are locked memory as well), in a directory the user
    // owns, as StateDirectory= gives it.
    let Some((caps, line, cfg)) = unprivileged_setup("") else {
        return;
    };
    let l2 = line.scratch.path("l2");
    std::fs::create_dir(&l2).unwrap();
    std::os::unix::fs::chown(&l2, Some(NOBODY), Some(NOBODY)).unwrap();
    let cfg = format!(
        "{cfg}[cs.l2]\nenabled = true\ndirs = [\"{}\"]\nsize = \"64MiB\"\n",
        l2.display()
    );
    let prefix = setpriv(&caps, &ndx_for_nobody(&line));
    let prefix: Vec<&str> = prefix.iter().map(String::as_str).collect();
    let router = start(&line, &cfg, &[], &prefix);
    // It runs as that user with exactly those capabilities.
    let status = std::fs::read_to_string(format!("/proc/{}/status", router.proc.pid())).unwrap();
    let field = |k: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no {k} in {status}"))
            .to_owned()
    };
    assert!(
        field("Uid:").starts_with(&format!("{NOBODY}\t")),
        "{}",
        field("Uid:")
    );
    let want: u64 = caps.iter().map(|c| cap_bit(c)).sum();
    assert_eq!(
        u64::from_str_radix(&field("CapEff:"), 16).unwrap(),
        want,
        "effective capabilities"
    );
    assert_eq!(u64::from_str_radix(&field("CapAmb:"), 16).unwrap(), want);
    // Its sockets belong to that user.
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&router.sock).unwrap().uid(), NOBODY);
    // The app socket, configured through the link, is in the user's directory.
    let app = line.scratch.path("run/nfd.sock");
    assert_eq!(std::fs::metadata(&app).unwrap().uid(), NOBODY);
    assert!(std::os::unix::net::UnixStream::connect(line.scratch.path("nfd/nfd.sock")).is_ok());
    // A fetch through it, verified byte for byte; the counters move on the control socket.
    let (file, data) = line.content("obj", 1 << 20, 7);
    let _producer = line.put("/t/obj", &file, &[]);
    let out = line.scratch.path("got");
    let got = line.get("/t/obj", &out, &[]);
    ok(&got, "ndx get through the unprivileged router");
    assert!(std::fs::read(&out).unwrap() == data, "fetched bytes differ");
    let s = router.settle(|s| topo::total(s, "data_out") >= 100);
    assert!(topo::total(&s, "data_out") >= (1u64 << 20).div_ceil(8000));
    let log = router.log();
    assert!(
        !log.lines().any(|l| l.starts_with("ndx: warning")
            || l.starts_with("ndx: error")
            || l.contains("netlink unavailable")),
        "{log}"
    );
    let stopped = router.proc.stop("TERM");
    assert!(stopped.status.success(), "{}", read(&router.log));
}

#[test]
fn each_of_the_units_capabilities_is_needed() {
    let Some((caps, line, cfg)) = unprivileged_setup("") else {
        return;
    };
    let path = line.scratch.path("ndx.toml");
    std::fs::write(&path, &cfg).unwrap();
    let ndx = ndx_for_nobody(&line);
    for missing in &caps {
        let fewer: Vec<String> = caps.iter().filter(|c| *c != missing).cloned().collect();
        let prefix = setpriv(&fewer, &ndx);
        let out = line
            .r
            .cmd(&prefix[0])
            .args(&prefix[1..])
            .arg("run")
            .arg("-c")
            .arg(&path)
            .output()
            .expect("setpriv runs");
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "ndx run started without {missing}: {text}"
        );
        // The error says which capability to grant.
        assert!(
            text.contains(missing.as_str()),
            "without {missing}, the error does not name it: {text}"
        );
        assert!(
            !has_xdp(&line.r, "c0"),
            "XDP left attached after a failed start"
        );
    }
}
