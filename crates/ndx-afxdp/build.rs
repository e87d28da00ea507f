//! Compiles bpf/redirect.c with clang into OUT_DIR/redirect.o.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("redirect.o");
    println!("cargo:rerun-if-changed=bpf/redirect.c");
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    println!("cargo:rerun-if-env-changed=CLANG");
    let status = Command::new(&clang)
        .args([
            "-O2",
            "-g",
            "-target",
            "bpf",
            "-I/usr/include/x86_64-linux-gnu",
            "-c",
        ])
        .arg("bpf/redirect.c")
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("running {clang} (apt-get install clang libbpf-dev): {e}"));
    assert!(status.success(), "{clang} failed to compile bpf/redirect.c");
}
