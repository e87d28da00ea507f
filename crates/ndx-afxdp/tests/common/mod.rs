//! Throwaway network namespaces with a veth pair, for root-only tests.
#![allow(unsafe_code, dead_code, unreachable_pub)]

use std::net::UdpSocket;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// True when the test may run; prints `skipping: ...` otherwise (and panics
/// when NDX_REQUIRE_ROOT_TESTS=1).
pub fn root_or_skip() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        assert!(
            std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() != Ok("1"),
            "root tests required but not root"
        );
        println!("skipping: not root");
    }
    root
}

fn sh(args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .expect("spawn");
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace deleted on drop.
pub struct Netns(pub String);

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

static N: AtomicU32 = AtomicU32::new(0);

/// Two namespaces `a` and `b` joined by veth `a0` (10.99.0.1, 02:00:00:00:00:01)
/// and `b0` (10.99.0.2, 02:00:00:00:00:02), 2 RX/TX queues each. `a` has a
/// permanent neighbour entry for b0 (b0's frames all go to AF_XDP, so ARP would
/// never be answered), checksum offload off, and XPS steering every CPU to
/// TX queue 0 so frames land on b0's RX queue 0.
pub struct Pair {
    pub a: Netns,
    pub b: Netns,
}

pub const A_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
pub const B_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
pub const A_IP: &str = "10.99.0.1";
pub const B_IP: &str = "10.99.0.2";
pub const A_IP6: &str = "fd00:99::1";
pub const B_IP6: &str = "fd00:99::2";

impl Pair {
    pub fn new(mtu: u32) -> Pair {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let a = Netns(format!("ndxt-{pid}-{n}-a"));
        let b = Netns(format!("ndxt-{pid}-{n}-b"));
        sh(&["ip", "netns", "add", &a.0]);
        sh(&["ip", "netns", "add", &b.0]);
        let mtu = mtu.to_string();
        sh(&[
            "ip",
            "link",
            "add",
            "a0",
            "netns",
            &a.0,
            "numrxqueues",
            "2",
            "numtxqueues",
            "2",
            "address",
            "02:00:00:00:00:01",
            "mtu",
            &mtu,
            "type",
            "veth",
            "peer",
            "name",
            "b0",
            "netns",
            &b.0,
            "numrxqueues",
            "2",
            "numtxqueues",
            "2",
            "address",
            "02:00:00:00:00:02",
            "mtu",
            &mtu,
        ]);
        sh(&["ip", "-n", &a.0, "addr", "add", "10.99.0.1/24", "dev", "a0"]);
        sh(&["ip", "-n", &b.0, "addr", "add", "10.99.0.2/24", "dev", "b0"]);
        sh(&[
            "ip",
            "-n",
            &a.0,
            "addr",
            "add",
            "fd00:99::1/64",
            "dev",
            "a0",
            "nodad",
        ]);
        sh(&[
            "ip",
            "-n",
            &b.0,
            "addr",
            "add",
            "fd00:99::2/64",
            "dev",
            "b0",
            "nodad",
        ]);
        sh(&["ip", "-n", &a.0, "link", "set", "a0", "up"]);
        sh(&["ip", "-n", &b.0, "link", "set", "b0", "up"]);
        sh(&["ip", "-n", &a.0, "link", "set", "lo", "up"]);
        sh(&["ip", "-n", &b.0, "link", "set", "lo", "up"]);
        sh(&[
            "ip",
            "-n",
            &a.0,
            "neigh",
            "replace",
            B_IP,
            "lladdr",
            "02:00:00:00:00:02",
            "dev",
            "a0",
            "nud",
            "permanent",
        ]);
        sh(&[
            "ip", "netns", "exec", &a.0, "ethtool", "-K", "a0", "tx", "off",
        ]);
        // A mask naming a CPU the machine cannot have is refused (EIO), so the mask is
        // built from the possible CPUs; `set -e` makes a refused write fail the set-up.
        let xps = format!(
            "set -e; echo {} > /sys/class/net/a0/queues/tx-0/xps_cpus; \
             echo 0 > /sys/class/net/a0/queues/tx-1/xps_cpus",
            possible_cpus_mask()
        );
        sh(&["ip", "netns", "exec", &a.0, "sh", "-c", &xps]);
        Pair { a, b }
    }
}

/// The `xps_cpus` mask of every possible CPU (`/sys/devices/system/cpu/possible`, a list of
/// CPUs and ranges such as `0-1` or `0,2-7`): hexadecimal, in comma-separated 32-bit words,
/// the most significant first.
fn possible_cpus_mask() -> String {
    let list = std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .expect("read /sys/devices/system/cpu/possible");
    let mut words: Vec<u32> = Vec::new();
    for item in list.trim().split(',') {
        let cpu = |x: &str| -> usize {
            x.parse()
                .unwrap_or_else(|_| panic!("possible CPUs {list:?}: {x:?} is not a number"))
        };
        let (first, last) = match item.split_once('-') {
            Some((a, b)) => (cpu(a), cpu(b)),
            None => (cpu(item), cpu(item)),
        };
        for c in first..=last {
            if words.len() <= c / 32 {
                words.resize(c / 32 + 1, 0);
            }
            words[c / 32] |= 1 << (c % 32);
        }
    }
    assert!(!words.is_empty(), "no possible CPU in {list:?}");
    words
        .iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Moves the calling thread into namespace `ns`.
pub fn enter(ns: &str) {
    let path = std::ffi::CString::new(format!("/var/run/netns/{ns}")).unwrap();
    // SAFETY: plain open(2) of a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    assert!(
        fd >= 0,
        "open netns {ns}: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: fd is a namespace fd we own; setns affects only this thread.
    let r = unsafe { libc::setns(fd, libc::CLONE_NEWNET) };
    let err = std::io::Error::last_os_error();
    // SAFETY: closing the fd we opened.
    unsafe { libc::close(fd) };
    assert_eq!(r, 0, "setns {ns}: {err}");
}

/// Runs `f` on a new thread inside namespace `ns`.
pub fn spawn_in<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let ns = ns.to_owned();
    std::thread::spawn(move || {
        enter(&ns);
        f()
    })
}

/// A UDP socket in the current namespace bound to A_IP:port.
pub fn udp_a(port: u16) -> UdpSocket {
    let s = UdpSocket::bind((A_IP, port)).expect("bind");
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    s
}

/// Loops `f` until it returns true or `secs` elapse; returns whether it did.
pub fn wait_until(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::yield_now();
    }
    false
}

/// Three namespaces in a line, like the benchmark's consumer — router — producer:
///
/// ```text
/// c: eth0 10.98.1.1 ──veth── c0 10.98.1.2  r  p0 10.98.2.2 ──veth── eth0 10.98.2.1 :p
/// ```
///
/// Fixed MACs ([`Line::C_MAC`]...), 2 RX/TX queues per end, IPv6 off (no kernel chatter),
/// permanent neighbour entries everywhere (an AF_XDP end takes every frame, ARP included),
/// checksum offload off on the two kernel ends.
pub struct Line {
    pub c: Netns,
    pub r: Netns,
    pub p: Netns,
}

impl Line {
    pub const C_MAC: [u8; 6] = [2, 0, 0, 0, 1, 1];
    pub const RC_MAC: [u8; 6] = [2, 0, 0, 0, 1, 2];
    pub const RP_MAC: [u8; 6] = [2, 0, 0, 0, 2, 2];
    pub const P_MAC: [u8; 6] = [2, 0, 0, 0, 2, 1];
    pub const C_IP: &str = "10.98.1.1";
    pub const RC_IP: &str = "10.98.1.2";
    pub const RP_IP: &str = "10.98.2.2";
    pub const P_IP: &str = "10.98.2.1";

    pub fn new() -> Line {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let ns = |x: &str| Netns(format!("ndxt-{pid}-{n}-{x}"));
        let (c, r, p) = (ns("c"), ns("r"), ns("p"));
        for x in [&c, &r, &p] {
            sh(&["ip", "netns", "add", &x.0]);
            sh(&[
                "ip",
                "netns",
                "exec",
                &x.0,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ]);
            sh(&["ip", "-n", &x.0, "link", "set", "lo", "up"]);
        }
        let mac = |m: [u8; 6]| {
            m.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":")
        };
        let ends = [
            (
                &c,
                "eth0",
                Self::C_MAC,
                Self::C_IP,
                &r,
                "c0",
                Self::RC_MAC,
                Self::RC_IP,
            ),
            (
                &p,
                "eth0",
                Self::P_MAC,
                Self::P_IP,
                &r,
                "p0",
                Self::RP_MAC,
                Self::RP_IP,
            ),
        ];
        for (ns1, if1, mac1, ip1, ns2, if2, mac2, ip2) in ends {
            let (m1, m2) = (mac(mac1), mac(mac2));
            sh(&[
                "ip",
                "link",
                "add",
                if1,
                "netns",
                &ns1.0,
                "numrxqueues",
                "2",
                "numtxqueues",
                "2",
                "address",
                &m1,
                "type",
                "veth",
                "peer",
                "name",
                if2,
                "netns",
                &ns2.0,
                "numrxqueues",
                "2",
                "numtxqueues",
                "2",
                "address",
                &m2,
            ]);
            for (ns, ifn, ip, peer_ip, peer_mac) in
                [(ns1, if1, ip1, ip2, &m2), (ns2, if2, ip2, ip1, &m1)]
            {
                sh(&[
                    "ip",
                    "-n",
                    &ns.0,
                    "addr",
                    "add",
                    &format!("{ip}/24"),
                    "dev",
                    ifn,
                ]);
                sh(&["ip", "-n", &ns.0, "link", "set", ifn, "up"]);
                sh(&[
                    "ip",
                    "-n",
                    &ns.0,
                    "neigh",
                    "replace",
                    peer_ip,
                    "lladdr",
                    peer_mac,
                    "dev",
                    ifn,
                    "nud",
                    "permanent",
                ]);
            }
            sh(&[
                "ip", "netns", "exec", &ns1.0, "ethtool", "-K", if1, "tx", "off",
            ]);
        }
        Line { c, r, p }
    }
}
