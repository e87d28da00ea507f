//! `cargo xtask bpf [--check]`: the BPF objects the crates embed, built from their C sources.
//!
//! The objects are committed next to their sources, so building or installing ndx needs no C
//! toolchain (aya's convention: the build glue compiles eBPF, the crates ship the object).
//! `cargo xtask bpf` rebuilds them after a change to the C; `cargo xtask bpf --check` (run by
//! `cargo xtask test`, hence CI) rebuilds them into a scratch directory and fails when a
//! committed object differs from what its source compiles to.
//!
//! The build is reproducible across checkouts: the compilation directory and the source paths
//! recorded in the debug info are made relative (`-fdebug-compilation-dir`,
//! `-ffile-prefix-map`), so only the compiler's version changes the bytes. That version is
//! recorded in `CLANG_VERSION` next to the objects; the check needs the same one.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, root};

/// One BPF object: its source and the object path, both relative to the workspace root.
struct Object {
    src: &'static str,
    obj: &'static str,
}

/// Every BPF object of the workspace. `ndx.c` and `lb.c` are the router's and the cluster
/// front end's programs; `redirect.c` is ndx-afxdp's test/baseline program (behind its
/// `redirect` feature, never in the router).
const OBJECTS: &[Object] = &[
    Object {
        src: "crates/ndx-xdp/bpf/ndx.c",
        obj: "crates/ndx-xdp/bpf/ndx.o",
    },
    Object {
        src: "crates/ndx-xdp/bpf/lb.c",
        obj: "crates/ndx-xdp/bpf/lb.o",
    },
    Object {
        src: "crates/ndx-afxdp/bpf/redirect.c",
        obj: "crates/ndx-afxdp/bpf/redirect.o",
    },
];

/// The file that records the compiler the committed objects were built with.
const VERSION_FILE: &str = "crates/ndx-xdp/bpf/CLANG_VERSION";

fn clang() -> String {
    std::env::var("CLANG").unwrap_or_else(|_| "clang".into())
}

/// The first line of `clang --version`.
fn clang_version(clang: &str) -> Result<String> {
    let out = Command::new(clang).arg("--version").output().map_err(|e| {
        format!(
            "cannot run `{clang}` ({e}): building the BPF objects needs clang \
             (apt-get install -y clang llvm libbpf-dev linux-libc-dev, or set CLANG=/path/to/clang)"
        )
    })?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_owned())
}

/// The Debian multiarch include directory (asm/types.h lives there), from the compiler's
/// own target triple: no architecture is written down here.
fn multiarch_include(clang: &str) -> Result<String> {
    let out = Command::new(clang)
        .arg("-print-target-triple")
        .output()
        .map_err(|e| format!("cannot run `{clang}`: {e}"))?;
    let triple = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    // x86_64-pc-linux-gnu → x86_64-linux-gnu (Debian drops the vendor).
    let parts: Vec<&str> = triple.split('-').collect();
    let multiarch = match parts.as_slice() {
        [arch, _vendor, os, env] => format!("{arch}-{os}-{env}"),
        _ => triple.clone(),
    };
    Ok(format!("-I/usr/include/{multiarch}"))
}

/// Compiles `src` to `out` reproducibly.
fn compile(clang: &str, include: &str, src: &Path, out: &Path) -> Result {
    let dir = src.parent().ok_or("source without a directory")?;
    let output = Command::new(clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg(include)
        .arg("-fdebug-compilation-dir=.")
        .arg(format!("-ffile-prefix-map={}=.", dir.display()))
        .arg("-c")
        .arg(src)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| format!("cannot run `{clang}`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`{clang}` failed to compile {}:\n{}(missing headers? apt-get install -y clang llvm \
             libbpf-dev linux-libc-dev)",
            src.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// `cargo xtask bpf`: rebuilds every object in place and records the compiler.
pub(crate) fn build() -> Result {
    let clang = clang();
    let version = clang_version(&clang)?;
    let include = multiarch_include(&clang)?;
    let root = root();
    for o in OBJECTS {
        println!("bpf: {} -> {}", o.src, o.obj);
        compile(&clang, &include, &root.join(o.src), &root.join(o.obj))?;
    }
    std::fs::write(root.join(VERSION_FILE), format!("{version}\n"))
        .map_err(|e| format!("{VERSION_FILE}: {e}"))?;
    println!("bpf: built with {version}; commit the objects and {VERSION_FILE}");
    Ok(())
}

/// `cargo xtask bpf --check`: rebuilds every object into a scratch directory and compares.
pub(crate) fn check() -> Result {
    let clang = clang();
    let version = clang_version(&clang)?;
    let root = root();
    let recorded = std::fs::read_to_string(root.join(VERSION_FILE))
        .map_err(|e| format!("{VERSION_FILE}: {e} (run `cargo xtask bpf`)"))?;
    let recorded = recorded.trim();
    if recorded != version {
        return Err(format!(
            "the committed BPF objects were built with `{recorded}`, this machine has \
             `{version}`: the byte-for-byte check needs the same compiler (or rebuild them all \
             with `cargo xtask bpf`, test, and commit the objects and {VERSION_FILE})"
        ));
    }
    let include = multiarch_include(&clang)?;
    let scratch = scratch_dir()?;
    let mut stale = Vec::new();
    for (i, o) in OBJECTS.iter().enumerate() {
        let out = scratch.join(format!("{i}.o"));
        compile(&clang, &include, &root.join(o.src), &out)?;
        let built = std::fs::read(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let committed = std::fs::read(root.join(o.obj)).unwrap_or_default();
        if built != committed {
            stale.push(o.obj);
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if !stale.is_empty() {
        return Err(format!(
            "committed BPF object(s) differ from what their source compiles to: {}\n\
             run `cargo xtask bpf` and commit the result",
            stale.join(", ")
        ));
    }
    println!(
        "bpf: {} committed object(s) match their sources ({version})",
        OBJECTS.len()
    );
    Ok(())
}

fn scratch_dir() -> Result<PathBuf> {
    let dir = crate::target_dir().join(format!("xtask-bpf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}
