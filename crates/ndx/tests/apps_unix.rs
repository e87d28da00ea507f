//! The `ndx` binary's tools on a local forwarder's Unix socket, no root needed: ndnd v1.5.3's
//! forwarder (`ndnd fw run`) with its socket in a private directory;
//!
//! - `ndx put --forwarder unix://SOCK` registers its prefix (it prints its ready line only
//!   after ndnd answered 200) and `ndx get -t unix://SOCK` fetches the object through ndnd,
//!   bytes compared;
//! - `ndx serve --forwarder unix://SOCK` and `ndx gen -t unix://SOCK`, every Interest answered;
//! - with no forwarder at the path, `ndx put` exits 2 with a message naming the socket.
//!
//! The forwarder is `$NDX_NDND`, else `/opt/ndx-interop/go/ndnd`; when it is absent the tests
//! print `skipping: <reason>`, and fail instead under `NDX_REQUIRE_ROOT_TESTS=1` (CI).

// Test content and ndnd's forwarder in a private directory, shared with ndx-app's tests.
#[allow(unreachable_pub, reason = "a module of ndx-app's test fixtures")]
#[path = "../../ndx-app/tests/common/content.rs"]
mod content;
#[allow(dead_code, unreachable_pub, reason = "ndx-app's tests use the rest")]
#[path = "../../ndx-app/tests/common/ndnd_fw.rs"]
mod ndnd_fw;
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use content::content;
use ndnd_fw::{Forwarder, Kill};
use support::ndnd;

const NDX: &str = env!("CARGO_BIN_EXE_ndx");

/// Starts `ndx args...` and waits (up to 20 s) for a stderr line starting with `ready`;
/// panics with what it printed otherwise.
fn spawn_until_ready(args: &[&str], ready: &str) -> Kill {
    let mut child = Command::new(NDX)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let child = Kill(child);
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if line.starts_with(ready) {
            return child;
        }
        seen.push(line);
    }
    panic!("ndx {args:?} never printed {ready:?}; it printed {seen:?}");
}

#[test]
fn put_registers_and_get_fetches_through_ndnd_unix_socket() {
    let Some(bin) = ndnd() else { return };
    let fw = Forwarder::start(&bin, "cli-unix-putget", false);
    let data = content(2_500_000, 0x2545_f491_4f6c_dd1d);
    let input = fw.dir.join("object.bin");
    let output = fw.dir.join("fetched.bin");
    std::fs::write(&input, &data).unwrap();
    let url = fw.url();
    let _put = spawn_until_ready(
        &[
            "put",
            "/ndx/cli/unix",
            "-i",
            input.to_str().unwrap(),
            "--forwarder",
            &url,
        ],
        "serving /ndx/cli/unix/v=",
    );
    let out = Command::new(NDX)
        .args(["get", "/ndx/cli/unix", "-t", &url, "--no-progress", "-o"])
        .arg(&output)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ndx get failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read(&output).unwrap() == data,
        "object fetched through ndnd's unix socket differs"
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn serve_and_gen_through_ndnd_unix_socket() {
    let Some(bin) = ndnd() else { return };
    let fw = Forwarder::start(&bin, "cli-unix-servegen", false);
    let url = fw.url();
    let _serve = spawn_until_ready(
        &["serve", "/ndx/cli/serve", "-n", "1200", "--forwarder", &url],
        "answering under /ndx/cli/serve",
    );
    let out = Command::new(NDX)
        .args([
            "gen",
            "/ndx/cli/serve",
            "-t",
            &url,
            "-c",
            "300",
            "-w",
            "16",
            "-d",
            "20",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ndx gen failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Sent 300 Interests")
            && stdout.contains("(300 Interests satisfied), 0 Nacks, 0 timeouts"),
        "{stdout}"
    );
}

#[test]
fn put_without_a_forwarder_fails_clearly() {
    // No external tool needed.
    let dir = std::env::temp_dir().join(format!("ndx-cli-unix-none-{}", std::process::id()));
    let sock = dir.join("absent.sock");
    let out = Command::new(NDX)
        .args(["put", "/ndx/cli/none", "-i", "/dev/null", "--forwarder"])
        .arg(format!("unix://{}", sock.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot connect to the forwarder's socket") && err.contains("absent.sock"),
        "{err}"
    );
}
