//! `cargo xtask`: the project's only build glue (aya's convention).
//!
//! - `cargo xtask demo`: build ndx and show it working on the bundled sample capture.
//! - `cargo xtask test`: install what the tests need (when missing), then run every check CI
//!   runs: rustfmt, clippy with `-D warnings`, rustdoc with `-D warnings`, the systemd unit
//!   files' checks, and all tests.
//! - `cargo xtask doclinks`: fail when a document names a repository file that does not exist
//!   (also part of `cargo xtask test`).
//! - `cargo xtask systemd`: check `configs/systemd/` (also part of `cargo xtask test`).
//! - `cargo xtask fuzz [SECONDS]`: install cargo-fuzz if needed and run every fuzz target.
//! - `cargo xtask bpf [--check]`: rebuild the committed BPF objects from their C (or check
//!   that they match it).
//! - `cargo xtask install-check`: build `ndx` in a fresh directory with clang hidden.
//! - `cargo xtask dist [--release]`: build ndx, then write its shell completions and man pages
//!   under `target/dist/` (generated from its clap definition by `ndx completions` and
//!   `ndx man`).

mod bpf;
mod doclinks;
mod install;

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

pub(crate) type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("demo") => demo(),
        Some("test") => test(),
        Some("doclinks") => doclinks::check(),
        Some("fuzz") => fuzz(args.get(1).map(String::as_str)),
        Some("bpf") => match args.get(1).map(String::as_str) {
            None => bpf::build(),
            Some("--check") => bpf::check(),
            Some(other) => Err(format!("bpf: unknown argument {other:?} (only --check)")),
        },
        Some("install-check") => install::check(),
        Some("dist") => dist(&args[1..]),
        Some("systemd") => run(&cargo(), &["build", "-p", "ndx", "--locked"], &[])
            .and_then(|()| verify_systemd(&target_dir().join("debug/ndx"))),
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
  demo            build ndx, then forward a file through it in throwaway network namespaces (root)
  test            install missing test prerequisites, then fmt + clippy + doc + all tests
  doclinks        fail when a doc links to (or backticks) a repository file that does not exist
  systemd         build ndx, then check configs/systemd (systemd-analyze verify, sysusers, tmpfiles)
  fuzz [SECONDS]  run every cargo-fuzz target for SECONDS each (default 60; needs nightly)
  bpf             rebuild the committed BPF objects (crates/*/bpf/*.o) from their C with clang
  bpf --check     fail when a committed BPF object differs from what its source compiles to
  install-check   build ndx in a fresh target directory with clang hidden from PATH
  dist [--release]
                  build ndx, write shell completions and man pages under target/dist/";

pub(crate) fn root() -> PathBuf {
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

/// Debian packages the build and the root tests need, each with a file that proves it is
/// installed: clang/LLVM/libbpf headers rebuild the XDP programs for `cargo xtask bpf --check`
/// (building ndx itself needs none of them: the objects are committed), iproute2/ethtool make the
/// throwaway topologies, ping checks that other traffic still crosses an XDP-attached
/// interface, fio is the L2 store's reference, python3-venv hosts python-ndn, systemd's
/// tools check the unit files (`verify_systemd`), setpriv runs ndx unprivileged and curl
/// scrapes the metrics endpoint.
const APT_PACKAGES: &[(&str, &str)] = &[
    ("clang", "/usr/bin/clang"),
    ("llvm", "/usr/bin/llvm-strip"),
    ("libbpf-dev", "/usr/include/bpf/bpf_helpers.h"),
    ("linux-libc-dev", "/usr/include/linux/if_xdp.h"),
    ("libelf-dev", "/usr/include/libelf.h"),
    ("zlib1g-dev", "/usr/include/zlib.h"),
    ("pkg-config", "/usr/bin/pkg-config"),
    ("m4", "/usr/bin/m4"),
    ("iproute2", "/usr/sbin/ip"),
    ("ethtool", "/usr/sbin/ethtool"),
    ("iputils-ping", "/usr/bin/ping"),
    ("fio", "/usr/bin/fio"),
    ("python3-venv", "/usr/share/doc/python3-venv"),
    ("systemd", "/usr/bin/systemd-analyze"),
    ("util-linux", "/usr/bin/setpriv"),
    ("curl", "/usr/bin/curl"),
];

/// Where the independent NDN software for the interop tests is installed.
fn interop_dir() -> PathBuf {
    env::var_os("NDX_INTEROP_DIR").map_or_else(|| PathBuf::from("/opt/ndx-interop"), PathBuf::from)
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// Installs what the test suite needs and is missing: the toolchain components named in
/// rust-toolchain.toml, the Debian packages above (as root), and python-ndn and ndnd for the
/// interop tests (pinned versions, from PyPI and the Go module proxy).
fn setup() -> Result {
    let cargo = cargo();
    for (component, probe) in [("rustfmt", "fmt"), ("clippy", "clippy")] {
        if !works(&cargo, &[probe, "--version"]) {
            println!("setup: installing the {component} component");
            run("rustup", &["component", "add", component], &[])?;
        }
    }
    setup_packages()?;
    setup_interop()
}

/// Installs the missing Debian packages (as root; otherwise says which to install).
fn setup_packages() -> Result {
    let missing: Vec<&str> = APT_PACKAGES
        .iter()
        .filter(|(_, probe)| !Path::new(probe).exists())
        .map(|(p, _)| *p)
        .collect();
    if !missing.is_empty() {
        if !is_root() {
            return Err(format!(
                "missing packages; run as root: apt-get install -y {}",
                missing.join(" ")
            ));
        }
        println!("setup: installing {}", missing.join(" "));
        run("apt-get", &["update", "-q"], &[])?;
        let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
        args.extend(&missing);
        run("apt-get", &args, &[("DEBIAN_FRONTEND", "noninteractive")])?;
    }
    Ok(())
}

/// Installs python-ndn and ndnd for the interop tests, when missing.
fn setup_interop() -> Result {
    let dir = interop_dir();
    let py = dir.join("venv/bin/python");
    if !works(py.to_str().unwrap_or("python"), &["-c", "import ndn"]) {
        println!("setup: installing python-ndn 0.5.2 into {}", dir.display());
        let venv = dir.join("venv");
        run(
            "/usr/bin/python3",
            &["-m", "venv", venv.to_str().ok_or("non-UTF-8 path")?],
            &[],
        )?;
        run(
            dir.join("venv/bin/pip").to_str().unwrap_or("pip"),
            &["install", "-q", "python-ndn==0.5.2"],
            &[],
        )?;
    }
    let ndnd = dir.join("go/ndnd");
    if !ndnd.exists() {
        if !works("go", &["version"]) {
            return Err("the interop tests need Go (to build ndnd): install it from go.dev or apt-get install golang".into());
        }
        println!("setup: building ndnd v1.5.3 into {}", ndnd.display());
        let go = dir.join("go");
        std::fs::create_dir_all(&go).map_err(|e| format!("{}: {e}", go.display()))?;
        std::fs::write(
            go.join("go.mod"),
            "module w\n\ngo 1.23\n\nrequire github.com/named-data/ndnd v1.5.3\n",
        )
        .map_err(|e| e.to_string())?;
        std::fs::write(
            go.join("tools.go"),
            "//go:build tools\n\npackage w\n\nimport _ \"github.com/named-data/ndnd/cmd/ndnd\"\n",
        )
        .map_err(|e| e.to_string())?;
        let in_go = |args: &[&str]| -> Result {
            let status = Command::new("go")
                .args(args)
                .current_dir(&go)
                .status()
                .map_err(|e| format!("cannot run go: {e}"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("`go {}` failed", args.join(" ")))
            }
        };
        in_go(&["mod", "tidy"])?;
        in_go(&["build", "-o", "ndnd", "github.com/named-data/ndnd/cmd/ndnd"])?;
    }
    Ok(())
}

fn test() -> Result {
    setup()?;
    let cargo = cargo();
    run(&cargo, &["fmt", "--all", "--", "--check"], &[])?;
    doclinks::check()?;
    bpf::check()?;
    install::check()?;
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
    run(&cargo, &["build", "-p", "ndx", "--locked"], &[])?;
    verify_systemd(&target_dir().join("debug/ndx"))?;
    run(&cargo, &["test", "--workspace", "--locked"], &[])?;
    Ok(())
}

/// Checks `configs/systemd/`: `systemd-analyze verify` of `ndx.service` (a copy whose
/// commands name the freshly built `ndx`, since verify wants them to exist), failing on any
/// complaint, as unknown keys are only warnings there; then `ndx.sysusers` and
/// `ndx.tmpfiles` applied to a scratch root must create the user, the directories and the
/// `/run/nfd` link.
fn verify_systemd(ndx: &Path) -> Result {
    let dir = root().join("configs/systemd");
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f)).map_err(|e| format!("configs/systemd/{f}: {e}"))
    };
    let unit = read("ndx.service")?;
    if !unit.contains("/usr/local/bin/ndx ") {
        return Err("ndx.service: expected its commands to run /usr/local/bin/ndx".into());
    }
    let scratch = env::temp_dir().join(format!("ndx-xtask-systemd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(scratch.join("root/etc")).map_err(|e| e.to_string())?;
    let result = (|| {
        let copy = scratch.join("ndx.service");
        let bin = ndx.display().to_string();
        std::fs::write(
            &copy,
            unit.replace("/usr/local/bin/ndx ", &format!("{bin} ")),
        )
        .map_err(|e| e.to_string())?;
        let copy = copy.display().to_string();
        quiet("systemd-analyze", &["verify", &copy])?;
        let r = scratch.join("root").display().to_string();
        let users = dir.join("ndx.sysusers").display().to_string();
        let tmpfiles = dir.join("ndx.tmpfiles").display().to_string();
        run("systemd-sysusers", &[&format!("--root={r}"), &users], &[])?;
        run(
            "systemd-tmpfiles",
            &["--create", &format!("--root={r}"), &tmpfiles],
            &[],
        )?;
        let passwd = std::fs::read_to_string(scratch.join("root/etc/passwd")).unwrap_or_default();
        if !passwd.lines().any(|l| l.starts_with("ndx:")) {
            return Err("ndx.sysusers created no user ndx".into());
        }
        let link = std::fs::read_link(scratch.join("root/run/nfd"))
            .map_err(|e| format!("ndx.tmpfiles made no /run/nfd link: {e}"))?;
        for d in ["root/run/ndx", "root/var/lib/ndx/l2", "root/etc/ndx"] {
            if !scratch.join(d).is_dir() {
                return Err(format!("ndx.tmpfiles created no /{}", &d[5..]));
            }
        }
        if link != Path::new("/run/ndx") {
            return Err(format!(
                "/run/nfd links to {}, not /run/ndx",
                link.display()
            ));
        }
        println!("systemd: ndx.service verified, sysusers and tmpfiles entries apply");
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// Runs a command that must succeed and print nothing (echoing it, and its output when it
/// complains).
fn quiet(program: &str, args: &[&str]) -> Result {
    println!("+ {program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() && text.trim().is_empty() {
        Ok(())
    } else {
        Err(format!(
            "`{program} {}` complained ({}):\n{text}",
            args.join(" "),
            out.status
        ))
    }
}

/// The end-to-end demo: builds ndx (release), then `scripts/demo.sh` creates a throwaway
/// topology of network namespaces (consumer - ndx on AF_XDP - producer), fetches a file through
/// ndx twice (the second time from its content store), verifies the bytes, prints throughput
/// and ndx's counters, and removes everything it created, also when interrupted. Without
/// root, it shows `ndx dissect` on the bundled capture instead and says why.
fn demo() -> Result {
    setup_packages()?;
    let cargo = cargo();
    run(
        &cargo,
        &["build", "--release", "--locked", "-p", "ndx"],
        &[],
    )?;
    let ndx = target_dir().join("release/ndx");
    let ndx = ndx.to_str().ok_or("non-UTF-8 target path")?;
    if !is_root() {
        println!(
            "\nThe forwarding demo needs root (network namespaces, XDP, AF_XDP): run `sudo -E cargo xtask demo`.\nMeanwhile, here is ndx decoding a capture of real NDN traffic:\n"
        );
        return dissect_demo(ndx);
    }
    run("bash", &["scripts/demo.sh"], &[("NDX", ndx)])
}

/// Where cargo puts build outputs (honours CARGO_TARGET_DIR).
pub(crate) fn target_dir() -> PathBuf {
    env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

fn dissect_demo(ndx: &str) -> Result {
    let sample = "crates/ndx/testdata/sample.pcap";
    println!("\n== every NDN packet in {sample}, one line each ==");
    run(ndx, &["dissect", "--summary", sample], &[])?;
    println!("\n(`ndx dissect FILE` prints the TLV trees; `--json` one JSON object per packet)");
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

/// Shells `ndx completions` knows, and the file name each one's script is installed under
/// (bash-completion, zsh `fpath`, fish `completions/`, elvish module, PowerShell script).
const COMPLETIONS: &[(&str, &str)] = &[
    ("bash", "ndx.bash"),
    ("zsh", "_ndx"),
    ("fish", "ndx.fish"),
    ("elvish", "ndx.elv"),
    ("powershell", "_ndx.ps1"),
];

/// `cargo xtask dist`: builds ndx (debug, or `--release`), then writes
/// `target/dist/completions/{ndx.bash,_ndx,ndx.fish,ndx.elv,_ndx.ps1}` and
/// `target/dist/man/ndx.1` plus one page per subcommand (`ndx-face-add.1`, ...).
fn dist(args: &[String]) -> Result {
    let release = match args {
        [] => false,
        [a] if a == "--release" => true,
        _ => {
            return Err(format!(
                "dist takes only --release, not {args:?}\n\n{USAGE}"
            ));
        }
    };
    let cargo = cargo();
    let mut build = vec!["build", "--locked", "-p", "ndx", "--bin", "ndx"];
    if release {
        build.push("--release");
    }
    run(&cargo, &build, &[])?;
    let ndx = target_dir().join(if release { "release/ndx" } else { "debug/ndx" });
    let dist = target_dir().join("dist");
    let completions = dist.join("completions");
    std::fs::create_dir_all(&completions)
        .map_err(|e| format!("cannot create {}: {e}", completions.display()))?;
    for (shell, file) in COMPLETIONS {
        let out = Command::new(&ndx)
            .args(["completions", shell])
            .output()
            .map_err(|e| format!("cannot run {}: {e}", ndx.display()))?;
        if !out.status.success() || out.stdout.is_empty() {
            return Err(format!(
                "`ndx completions {shell}` failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let path = completions.join(file);
        std::fs::write(&path, &out.stdout)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("{}", path.display());
    }
    let man = dist.join("man");
    let man = man.to_str().ok_or("non-UTF-8 target path")?;
    let ndx = ndx.to_str().ok_or("non-UTF-8 target path")?;
    run(ndx, &["man", man], &[])
}
