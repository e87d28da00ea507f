//! Runs `examples/embed.rs` (root only): a router embedded in a program, with an in-process
//! producer, fetched from over a veth pair between two throwaway network namespaces.
//!
//! Skipped (with a message) when not root, unless `NDX_REQUIRE_ROOT_TESTS=1`, which makes a
//! skip a failure.

use std::path::PathBuf;
use std::process::Command;

/// Why the test cannot run here, if it cannot.
fn unavailable() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        .unwrap_or("1");
    if euid != "0" {
        return Some("not running as root".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("the ip command (iproute2) is missing".into());
    }
    None
}

fn skip() -> bool {
    match unavailable() {
        None => false,
        Some(why) => {
            assert!(
                std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() != Ok("1"),
                "root tests required (NDX_REQUIRE_ROOT_TESTS=1) but: {why}"
            );
            eprintln!("skipping: {why}");
            true
        }
    }
}

/// The example's binary, built (or brought up to date) with this test's cargo and profile.
fn example() -> PathBuf {
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .to_path_buf();
    let release = dir.file_name().is_some_and(|n| n == "release");
    let mut build = Command::new(env!("CARGO"));
    build.args(["build", "-p", "ndx-router", "--example", "embed"]);
    if release {
        build.arg("--release");
    }
    let st = build.status().expect("run cargo");
    assert!(st.success(), "cargo build --example embed failed");
    dir.join("examples").join("embed")
}

#[test]
fn the_embed_example_fetches_from_its_in_process_producer_over_veth() {
    if skip() {
        return;
    }
    let out = Command::new(example()).output().expect("run the example");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "embed failed:\n{stdout}\n{stderr}");
    assert!(
        stdout
            .lines()
            .any(|l| l == "fetched /example/hello: hello from an in-process producer"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l == "fetched in process /example/local: hello from an in-process producer"),
        "an in-process consumer fetches through the router too: {stdout}\n{stderr}"
    );
    // The router counted the Interest from the wire and the Data back to it; the producer
    // answered through its in-process face.
    let line = stdout
        .lines()
        .find(|l| l.starts_with("router: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("the producer answered 2"), "{line}");
    assert!(!line.starts_with("router: 0 Interests"), "{line}");
}
