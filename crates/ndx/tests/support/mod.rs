//! Throwaway network namespaces and veth pairs for the root-only tests.
//!
//! Every object is named with the test process id and a counter so tests can run in parallel
//! and never collide with a previous run; [`Netns`] deletes its namespace (and with it every
//! interface inside) when dropped, also when the test panics.
#![allow(dead_code, unreachable_pub)]

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A short unique tag for names (interface names are limited to 15 bytes).
pub fn tag() -> String {
    format!(
        "{:x}{}",
        std::process::id() & 0xffff,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Why the root tests cannot run here, or `None` when they can.
pub fn root_tests_unavailable() -> Option<String> {
    // SAFETY-free check: effective uid from /proc.
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
    if !Path::new("/sys/kernel/btf/vmlinux").exists()
        && !Path::new("/proc/sys/net/core/bpf_jit_enable").exists()
    {
        return Some("the kernel has no BPF".into());
    }
    None
}

/// Returns true (after printing `skipping: ...`) when the caller should return early;
/// panics instead when `NDX_REQUIRE_ROOT_TESTS=1` (CI), so CI cannot pass by skipping.
pub fn skip() -> bool {
    match root_tests_unavailable() {
        None => false,
        Some(why) => {
            if std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
                panic!("root tests required (NDX_REQUIRE_ROOT_TESTS=1) but: {why}");
            }
            eprintln!("skipping: {why}");
            true
        }
    }
}

/// Runs a command, panicking with its output when it fails.
pub fn sh(args: &[&str]) -> Output {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(
        out.status.success(),
        "{args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A network namespace, deleted on drop.
#[derive(Debug)]
pub struct Netns {
    pub name: String,
}

impl Netns {
    pub fn new(role: &str) -> Self {
        let name = format!("ndxt-{role}-{}", tag());
        sh(&["ip", "netns", "add", &name]);
        let ns = Self { name };
        ns.run(&["ip", "link", "set", "lo", "up"]);
        ns
    }

    /// A command prepared to run inside the namespace.
    pub fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }

    /// Runs a command inside the namespace, panicking on failure.
    pub fn run(&self, args: &[&str]) -> Output {
        let mut full = vec!["ip", "netns", "exec", self.name.as_str()];
        full.extend_from_slice(args);
        sh(&full)
    }

    /// Runs a command inside the namespace and returns its output whatever the outcome.
    pub fn try_run(&self, args: &[&str]) -> Output {
        self.cmd(args[0]).args(&args[1..]).output().expect("spawn")
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .stderr(Stdio::null())
            .status();
    }
}

/// Connects `a` and `b` with a veth pair (`queues` queues each way) named `ia` / `ib`.
pub fn veth(a: &Netns, ia: &str, b: &Netns, ib: &str, queues: u32) {
    let q = queues.to_string();
    let tmp_a = format!("t{}", tag());
    let tmp_b = format!("t{}", tag());
    sh(&[
        "ip",
        "link",
        "add",
        &tmp_a,
        "numrxqueues",
        &q,
        "numtxqueues",
        &q,
        "type",
        "veth",
        "peer",
        "name",
        &tmp_b,
        "numrxqueues",
        &q,
        "numtxqueues",
        &q,
    ]);
    sh(&["ip", "link", "set", &tmp_a, "netns", &a.name]);
    sh(&["ip", "link", "set", &tmp_b, "netns", &b.name]);
    a.run(&["ip", "link", "set", &tmp_a, "name", ia]);
    b.run(&["ip", "link", "set", &tmp_b, "name", ib]);
    a.run(&["ip", "link", "set", ia, "up"]);
    b.run(&["ip", "link", "set", ib, "up"]);
}

/// Adds an address (`10.0.0.1/24`, `fd00::1/64`) to an interface; IPv6 without DAD so it is
/// usable at once.
pub fn addr(ns: &Netns, ifname: &str, cidr: &str) {
    if cidr.contains(':') {
        ns.run(&["ip", "-6", "addr", "add", cidr, "dev", ifname, "nodad"]);
    } else {
        ns.run(&["ip", "addr", "add", cidr, "dev", ifname]);
    }
}

/// A child process killed (and reaped) on drop.
#[derive(Debug)]
pub struct Proc {
    pub child: Option<Child>,
    pub what: String,
}

impl Proc {
    pub fn spawn(mut cmd: Command, what: &str) -> Self {
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        Self {
            child: Some(child),
            what: what.into(),
        }
    }

    /// Sends a signal and waits for exit, returning the output.
    pub fn stop(mut self, signal: &str) -> Output {
        let child = self.child.take().expect("running");
        let _ = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status();
        child.wait_with_output().expect("wait")
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, |c| c.id())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Waits until `f` returns true, up to `secs` seconds.
pub fn wait_for(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

/// A scratch directory removed on drop.
#[derive(Debug)]
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new() -> Self {
        let p = std::env::temp_dir().join(format!("ndxt-{}", tag()));
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }
    pub fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child's stdout lines on a channel.
pub fn stdout_lines(p: &mut Proc) -> std::sync::mpsc::Receiver<String> {
    let out = p
        .child
        .as_mut()
        .and_then(|c| c.stdout.take())
        .expect("stdout piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

/// Skips (returns `None`) when a tool is missing, or fails under `NDX_REQUIRE_ROOT_TESTS=1`
/// (CI, where `cargo xtask test` installs every tool).
pub fn tool_missing<T>(why: &str) -> Option<T> {
    assert!(
        std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() != Ok("1"),
        "NDX_REQUIRE_ROOT_TESTS=1 but {why} (cargo xtask test installs it)"
    );
    eprintln!("skipping: {why}");
    None
}

/// The python-ndn interpreter (`$NDX_PYTHON`, else `/opt/ndx-interop/venv/bin/python`), or
/// `None` after [`tool_missing`].
pub fn python() -> Option<String> {
    let py =
        std::env::var("NDX_PYTHON").unwrap_or_else(|_| "/opt/ndx-interop/venv/bin/python".into());
    let usable = Command::new(&py)
        .args([
            "-c",
            "import ndn.encoding, ndn.app, ndn.appv2, ndn.app_support.segment_fetcher, \
             ndn.app_support.nfd_mgmt",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if usable {
        Some(py)
    } else {
        tool_missing(&format!("{py} with python-ndn is missing"))
    }
}

/// ndnd (`$NDX_NDND`, else `/opt/ndx-interop/go/ndnd`), or `None` after [`tool_missing`].
pub fn ndnd() -> Option<PathBuf> {
    let p = PathBuf::from(
        std::env::var("NDX_NDND").unwrap_or_else(|_| "/opt/ndx-interop/go/ndnd".into()),
    );
    if p.is_file() {
        Some(p)
    } else {
        tool_missing(&format!("{} is missing", p.display()))
    }
}
