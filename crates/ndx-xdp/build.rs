//! Compiles the XDP programs of ../../xdp-prog (ndx.c, the router's classifier, and lb.c, the
//! cluster front end; both include ndn.h and util.h) with clang into OUT_DIR/{ndx,lb}.o, embedded by
//! src/loader.rs and src/lb.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../../xdp-prog");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    for header in ["ndn.h", "util.h"] {
        println!("cargo:rerun-if-changed={}", dir.join(header).display());
    }
    println!("cargo:rerun-if-env-changed=CLANG");
    for name in ["ndx", "lb"] {
        compile(
            &dir.join(format!("{name}.c")),
            &out_dir.join(format!("{name}.o")),
        );
    }
}

fn compile(src: &Path, out: &Path) {
    println!("cargo:rerun-if-changed={}", src.display());
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    // Debian puts asm/types.h under the multiarch directory of the host.
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_else(|_| "x86_64".into());
    let multiarch = format!("-I/usr/include/{arch}-linux-gnu");
    let output = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg(&multiarch)
        .arg("-c")
        .arg(src)
        .arg("-o")
        .arg(out)
        .output();
    match output {
        Err(e) => panic!(
            "ndx-xdp: cannot run `{clang}` ({e}). The XDP program is C compiled by clang: run the \
             setup (`apt-get install -y clang llvm libbpf-dev linux-libc-dev`) or set CLANG=/path/to/clang"
        ),
        Ok(o) if !o.status.success() => panic!(
            "ndx-xdp: `{clang}` failed to compile {}:\n{}\n(missing headers? run the setup: \
             `apt-get install -y clang llvm libbpf-dev linux-libc-dev`)",
            src.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(_) => {}
    }
}
