//! `cargo xtask`: the project's only build glue (aya's convention).
//!
//! - `cargo xtask demo`: build ndx and show it working on the bundled sample capture.
//! - `cargo xtask test`: install what the tests need (when missing), then run every check CI
//!   runs: rustfmt, clippy with `-D warnings`, rustdoc with `-D warnings`, and all tests.
//! - `cargo xtask fuzz [SECONDS]`: install cargo-fuzz if needed and run every fuzz target.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("demo") => demo(),
        Some("test") => test(),
        Some("fuzz") => fuzz(args.get(1).map(String::as_str)),
        Some("help" | "--help" | "-h") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown task {other:?}\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: cargo xtask <task>

tasks:
  demo            build ndx and dissect the bundled sample capture
  test            install missing test prerequisites, then fmt + clippy + doc + all tests
  fuzz [SECONDS]  run every cargo-fuzz target for SECONDS each (default 60; needs nightly)";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Runs a command in the workspace root, echoing it; fails on a non-zero exit.
fn run(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result {
    println!("+ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

/// Whether a command runs successfully (quietly).
fn works(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .is_ok_and(|o| o.status.success())
}

fn cargo() -> String {
    // The rustup proxy, not $CARGO: it honours rust-toolchain.toml for every sub-command.
    "cargo".into()
}

/// Installs what the test suite needs and is missing: the toolchain components named in
/// rust-toolchain.toml (rustup normally adds them on first use; a toolchain installed
/// without them is repaired here).
fn setup() -> Result {
    let cargo = cargo();
    for (component, probe) in [("rustfmt", "fmt"), ("clippy", "clippy")] {
        if !works(&cargo, &[probe, "--version"]) {
            println!("setup: installing the {component} component");
            run("rustup", &["component", "add", component], &[])?;
        }
    }
    Ok(())
}

fn test() -> Result {
    setup()?;
    let cargo = cargo();
    run(&cargo, &["fmt", "--all", "--", "--check"], &[])?;
    run(
        &cargo,
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    run(
        &cargo,
        &["doc", "--workspace", "--no-deps", "--locked"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    run(&cargo, &["test", "--workspace", "--locked"], &[])?;
    Ok(())
}

fn demo() -> Result {
    let cargo = cargo();
    run(
        &cargo,
        &["build", "--release", "--locked", "-p", "ndx"],
        &[],
    )?;
    let ndx = root().join("target/release/ndx");
    let ndx = ndx.to_str().ok_or("non-UTF-8 target path")?;
    let sample = "crates/ndx/testdata/sample.pcap";
    println!("\n== every NDN packet in {sample}, one line each ==");
    run(ndx, &["dissect", "--summary", sample], &[])?;
    println!("\n== the TLV tree of the first packets ==");
    let out = Command::new(ndx)
        .args(["dissect", sample])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cannot run ndx: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines().take(40) {
        println!("{line}");
    }
    println!("\n(see `ndx dissect --help`; `--json` prints one JSON object per packet)");
    Ok(())
}

fn fuzz(seconds: Option<&str>) -> Result {
    let seconds: u32 = seconds
        .unwrap_or("60")
        .parse()
        .map_err(|_| "SECONDS must be a whole number".to_string())?;
    let cargo = cargo();
    if !works(&cargo, &["+nightly", "--version"]) {
        return Err("fuzzing needs a nightly toolchain: rustup toolchain install nightly".into());
    }
    if !works(&cargo, &["fuzz", "--version"]) {
        run(&cargo, &["install", "cargo-fuzz", "--locked"], &[])?;
    }
    let dir = root().join("crates/ndx-codec/fuzz/fuzz_targets");
    let mut targets: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    targets.sort();
    let time = format!("-max_total_time={seconds}");
    for t in &targets {
        println!("\n== fuzz target {t} ({seconds} s) ==");
        let status = Command::new(&cargo)
            .args(["+nightly", "fuzz", "run", t, "--", &time])
            .current_dir(root().join("crates/ndx-codec"))
            .status()
            .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
        if !status.success() {
            return Err(format!(
                "fuzz target {t} found a failure (see fuzz/artifacts/{t})"
            ));
        }
    }
    Ok(())
}
