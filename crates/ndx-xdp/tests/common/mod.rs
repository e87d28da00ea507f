//! Shared helpers of the root-only tests: the root gate, a seeded PRNG, frame builders and
//! throwaway network namespaces.
#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(unreachable_pub, reason = "a test helper module")]
#![allow(unsafe_code, reason = "geteuid and setns, each with a SAFETY comment")]

pub mod pair;

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// True when the test may run; prints `skipping: ...` otherwise. With
/// `NDX_REQUIRE_ROOT_TESTS=1` a skip is a failure.
pub fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        return true;
    }
    assert!(
        std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() != Ok("1"),
        "{test}: needs root and NDX_REQUIRE_ROOT_TESTS=1 forbids skipping"
    );
    println!("skipping: {test} needs root");
    false
}

/// xorshift64*: deterministic test data without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

pub const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0xa];
pub const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0xb];
pub const NDN_GROUP: [u8; 6] = [0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa];

/// Ethernet header (+ one 802.1Q tag when `vlan`).
pub fn eth(dst: [u8; 6], src: [u8; 6], ethertype: u16, vlan: bool) -> Vec<u8> {
    let mut f = Vec::with_capacity(64);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    if vlan {
        f.extend_from_slice(&0x8100u16.to_be_bytes());
        f.extend_from_slice(&0x0005u16.to_be_bytes());
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f
}

/// Ethernet + IPv4 + UDP around `payload`; `proto` other than 17 writes that protocol and
/// puts the UDP-shaped header anyway (a TCP/ICMP look-alike for the pass tests).
pub fn udp4(
    src: [u8; 4],
    sport: u16,
    dport: u16,
    proto: u8,
    vlan: bool,
    payload: &[u8],
) -> Vec<u8> {
    let mut f = eth(MAC_A, MAC_B, 0x0800, vlan);
    let total = (20 + 8 + payload.len()) as u16;
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&total.to_be_bytes());
    f.extend_from_slice(&[0, 1, 0x40, 0, 64, proto, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[10, 0, 0, 1]);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    f
}

/// Ethernet + IPv6 + UDP around `payload`.
pub fn udp6(src: [u8; 16], sport: u16, dport: u16, vlan: bool, payload: &[u8]) -> Vec<u8> {
    let mut f = eth(MAC_A, MAC_B, 0x86dd, vlan);
    f.extend_from_slice(&[0x60, 0, 0, 0]);
    f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[17, 64]);
    f.extend_from_slice(&src);
    let mut dst = [0u8; 16];
    dst[0] = 0xfd;
    dst[15] = 1;
    f.extend_from_slice(&dst);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    f
}

/// Runs a command, panicking with its stderr on failure; returns stdout.
pub fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A throwaway network namespace, deleted on drop (even when the test panics).
pub struct Netns {
    pub name: String,
}

impl Netns {
    pub fn new() -> Self {
        let name = format!(
            "ndxt-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        run("ip", &["netns", "add", &name]);
        run("ip", &["-n", &name, "link", "set", "lo", "up"]);
        Self { name }
    }

    /// Runs `ip -n <ns> args...`.
    pub fn ip(&self, args: &[&str]) -> String {
        let mut a = vec!["-n", self.name.as_str()];
        a.extend_from_slice(args);
        run("ip", &a)
    }

    /// Moves the calling thread into this namespace (network namespaces are per thread).
    pub fn enter(&self) {
        let f = std::fs::File::open(format!("/run/netns/{}", self.name)).expect("netns file");
        use std::os::fd::AsRawFd;
        // SAFETY: setns on a valid namespace fd; affects only the calling thread.
        let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// Appends `comps` random components to `n`: versions, segments not last, keywords and 3-byte
/// TLV-TYPEs, a few longer than 252 bytes (3-byte TLV-LENGTH), else generic ones of up to
/// `generic_max` bytes (12 for the first). The name generators of the agreement and
/// differential tests.
pub fn push_random_components(
    rng: &mut Rng,
    n: &mut ndx_codec::NameBuf,
    comps: u64,
    generic_max: u64,
) {
    for i in 0..comps {
        match rng.below(10) {
            0 => {
                let shift = rng.below(64);
                n.push_version(rng.next() >> shift);
            }
            1 => {
                // A segment component that is not the last one.
                n.push_segment(rng.below(1000));
            }
            2 => {
                // Keyword, or a type of 253 and above (a 3-byte TLV-TYPE).
                let len = rng.below(6) as usize;
                let typ = if rng.chance(2) {
                    32
                } else {
                    253 + rng.below(2000) as u16
                };
                n.push(typ, &rng.bytes(len)).unwrap();
            }
            3 if rng.chance(4) => {
                // Longer than 252 bytes: a 3-byte TLV-LENGTH.
                let len = 253 + rng.below(100) as usize;
                n.push_generic(&rng.bytes(len));
            }
            _ => {
                let len = rng.below(if i == 0 { 12 } else { generic_max }) as usize;
                n.push_generic(&rng.bytes(len));
            }
        }
    }
}

/// Ends `n` with a segment number half of the time, or with a type-50 component whose value
/// is not a NonNegativeInteger (not a segment) now and then.
pub fn push_random_last(rng: &mut Rng, n: &mut ndx_codec::NameBuf) {
    match rng.below(4) {
        0 | 1 => {
            let shift = rng.below(64);
            n.push_segment(rng.next() >> shift);
        }
        2 if rng.chance(3) => {
            n.push(50, &rng.bytes(3)).unwrap();
        }
        _ => {}
    }
}
