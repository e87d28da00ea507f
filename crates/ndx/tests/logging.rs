//! The router's log under systemd, end to end (root: network namespaces, XDP, AF_XDP): with
//! standard error on the stream `JOURNAL_STREAM` names, `ndx run` writes sd-daemon `<N>`
//! priority prefixes (journald records the level) and no `ndx: ` prefix; `--log-level warn`
//! leaves out the info lines. Skipped without root (failing under `NDX_REQUIRE_ROOT_TESTS=1`).

mod support;
mod topo;

use std::os::unix::fs::MetadataExt;

use support::{skip, wait_for};
use topo::{Family, Line, NDX, Router, spawn_logged};

/// Starts `ndx [--log-level FLAG] run` with `JOURNAL_STREAM` naming its log file, waits until
/// it answers, stops it with SIGINT and returns its log.
fn run_under_journal(line: &Line, tag: &str, flag: Option<&str>) -> String {
    let cfg = line.scratch.path(&format!("{tag}.toml"));
    let text = line.config(1, &format!("udp://{}", line.producer_endpoint()), "");
    std::fs::write(&cfg, text).unwrap();
    let log = line.scratch.path(&format!("{tag}.log"));
    // spawn_logged truncates the file: its device and inode stay.
    std::fs::write(&log, "").unwrap();
    let meta = std::fs::metadata(&log).unwrap();
    let mut cmd = line.r.cmd(NDX);
    if let Some(f) = flag {
        cmd.args(["--log-level", f]);
    }
    cmd.arg("run")
        .arg("-c")
        .arg(&cfg)
        .env("JOURNAL_STREAM", format!("{}:{}", meta.dev(), meta.ino()));
    let router = Router {
        proc: spawn_logged(cmd, "ndx run", &log),
        sock: line.scratch.path("ndx.sock"),
        log: log.clone(),
    };
    let up = wait_for(30, || {
        router.exited() || (router.sock.exists() && router.try_status().is_some())
    });
    assert!(
        up && !router.exited(),
        "ndx run did not start:\n{}",
        router.log()
    );
    let out = router.proc.stop("INT");
    assert!(out.status.success(), "ndx run exited with {}", out.status);
    topo::read(&log)
}

#[test]
fn under_journald_the_router_logs_priorities_and_the_flag_filters_them() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let log = run_under_journal(&line, "info", None);
    assert!(
        log.contains("<6>forwarding; SIGINT or SIGTERM stops, SIGHUP reloads the configuration\n"),
        "{log}"
    );
    assert!(log.contains("<6>stopped after "), "{log}");
    assert!(log.contains("<6>c0 (ifindex "), "{log}");
    for l in log.lines() {
        let prio = l
            .strip_prefix('<')
            .and_then(|r| r.split_once('>'))
            .map(|(n, _)| n);
        assert!(
            matches!(prio, Some("3" | "4" | "6" | "7")),
            "a line without a priority: {l:?}\n{log}"
        );
        assert!(!l.contains(">ndx: "), "{l:?}");
    }

    let log = run_under_journal(&line, "warn", Some("warn"));
    assert!(
        !log.lines()
            .any(|l| l.starts_with("<6>") || l.starts_with("<7>")),
        "--log-level warn printed info lines:\n{log}"
    );
}
