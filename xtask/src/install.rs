//! `cargo xtask install-check`: proves that `cargo install --path crates/ndx` needs only the
//! Rust toolchain.
//!
//! It runs `cargo install --path crates/ndx --debug` into a fresh target directory and a fresh
//! install root with clang and every LLVM tool hidden from `PATH` (a directory of links to
//! everything else on `PATH`) and `CLANG` unset, then runs the installed binary: `ndx
//! --version`, and `ndx check` of the shipped configuration, which loads nothing but proves the
//! binary starts. The XDP objects it embeds are the committed ones (`cargo xtask bpf --check`
//! proves they match their sources). `--debug` keeps CI time down; the dependency graph and
//! the build scripts are those of the release build.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, root, target_dir};

/// Tools hidden from the build: any of them on PATH would let a build script compile C for BPF.
fn hidden(name: &str) -> bool {
    name.starts_with("clang") || name.starts_with("llc") || name.starts_with("llvm")
}

/// A directory of symlinks to every executable on `PATH` except the hidden ones.
fn filtered_path(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut seen = HashSet::new();
    for d in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(n) = name.to_str() else { continue };
            if hidden(n) || !seen.insert(n.to_owned()) {
                continue;
            }
            std::os::unix::fs::symlink(e.path(), dir.join(n))
                .map_err(|err| format!("link {}: {err}", e.path().display()))?;
        }
    }
    Ok(())
}

pub(crate) fn check() -> Result {
    let scratch = target_dir().join("install-check");
    let _ = std::fs::remove_dir_all(&scratch);
    let bin = scratch.join("bin-without-clang");
    filtered_path(&bin)?;
    // The proof that clang is really out of reach of the build.
    let which = Command::new(bin.join("sh"))
        .args(["-c", "command -v clang llc; exit 0"])
        .env("PATH", &bin)
        .output()
        .map_err(|e| format!("sh: {e}"))?;
    let found = String::from_utf8_lossy(&which.stdout).trim().to_owned();
    if !found.is_empty() {
        return Err(format!(
            "install-check: clang still on the filtered PATH: {found}"
        ));
    }
    let install_root = scratch.join("root");
    let target = scratch.join("target");
    let args = [
        "install",
        "--path",
        "crates/ndx",
        "--debug",
        "--locked",
        "--root",
        install_root.to_str().ok_or("non-UTF-8 path")?,
        "--target-dir",
        target.to_str().ok_or("non-UTF-8 path")?,
    ];
    println!(
        "+ PATH=<PATH without clang/llvm> cargo {} (fresh target directory)",
        args.join(" ")
    );
    let status = Command::new(bin.join("cargo"))
        .args(args)
        .current_dir(root())
        .env("PATH", &bin)
        .env_remove("CLANG")
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`cargo install --path crates/ndx` failed without clang ({status})"
        ));
    }
    let ndx: PathBuf = install_root.join("bin/ndx");
    for args in [vec!["--version"], vec!["check", "-c", "configs/ndx.toml"]] {
        let out = Command::new(&ndx)
            .args(&args)
            .current_dir(root())
            .output()
            .map_err(|e| format!("{}: {e}", ndx.display()))?;
        if !out.status.success() {
            return Err(format!(
                "the installed ndx failed `ndx {}`:\n{}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    println!(
        "install-check: `cargo install --path crates/ndx` built a working ndx with no clang on PATH"
    );
    // The fresh target directory is large; the check is what mattered.
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
