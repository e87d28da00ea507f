//! The transmit copy of a UDP packet, without a socket: headers built, payload copied into a
//! frame-sized buffer, UDP checksum summed, as `Endpoint::push_tx` / `push_tx_udp` do it.
//! For deterministic instruction counts under callgrind (the work is in `two_pass` and
//! `fused`, one call a packet):
//!
//! ```text
//! cargo build --release -p ndx-afxdp --example udp_copy
//! valgrind --tool=callgrind --toggle-collect='udp_copy::two_pass' target/release/examples/udp_copy two-pass 20000 1000
//! valgrind --tool=callgrind --toggle-collect='udp_copy::fused' target/release/examples/udp_copy fused 20000 1000
//! ```
//!
//! `two-pass` is the checksum over the payload, then its copy (`wire::build_udp` then
//! `push_tx`); `fused` sums it during the copy (`wire::build_udp_header` then `push_tx_udp`).
//! Arguments: mode, packets (default 20000), payload bytes (default 1000).

use std::hint::black_box;
use std::net::SocketAddr;

use ndx_afxdp::wire::{self, UdpHeaders};

#[inline(never)]
fn two_pass(frame: &mut [u8], h: &UdpHeaders, payload: &[&[u8]]) -> usize {
    let mut hdr = [0u8; 62];
    let hl = wire::build_udp(&mut hdr, h, payload).unwrap();
    frame[..hl].copy_from_slice(&hdr[..hl]);
    let mut at = hl;
    for p in payload {
        frame[at..at + p.len()].copy_from_slice(p);
        at += p.len();
    }
    at
}

#[inline(never)]
fn fused(frame: &mut [u8], h: &UdpHeaders, payload: &[&[u8]]) -> usize {
    let mut hdr = [0u8; 62];
    let plen = payload.iter().map(|p| p.len()).sum();
    let (hl, mut sum) = wire::build_udp_header(&mut hdr, h, plen).unwrap();
    frame[..hl].copy_from_slice(&hdr[..hl]);
    let mut at = hl;
    for p in payload {
        sum.add_copy(&mut frame[at..], p);
        at += p.len();
    }
    frame[hl - 2..hl].copy_from_slice(&sum.finish_udp().to_be_bytes());
    at
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("fused", String::as_str);
    let n: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let len: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let f: fn(&mut [u8], &UdpHeaders, &[&[u8]]) -> usize = match mode {
        "two-pass" => two_pass,
        "fused" => fused,
        other => {
            eprintln!("usage: udp_copy two-pass|fused [packets] [payload bytes] (not {other:?})");
            std::process::exit(2);
        }
    };
    if len > 1400 {
        eprintln!("payload of at most 1400 bytes (one 2048-byte frame)");
        std::process::exit(2);
    }
    let h = UdpHeaders {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: [2, 0, 0, 0, 0, 2],
        src: SocketAddr::from(([10, 0, 0, 1], 6363)),
        dst: SocketAddr::from(([10, 0, 0, 2], 56000)),
        ttl: 64,
    };
    // A Data as the worker sends a CS hit: an LP header (PIT token) and the Data's bytes.
    let data: Vec<u8> = (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let lp = [0x64u8, 0x0c, 0x62, 0x08, 1, 2, 3, 4, 5, 6, 7, 8];
    let split = lp.len().min(len);
    let mut frame = vec![0u8; 2048];
    let mut check = 0u64;
    for _ in 0..n {
        let parts: [&[u8]; 2] = [&lp[..split], &data[split..]];
        let at = f(black_box(&mut frame), black_box(&h), black_box(&parts));
        check = check.wrapping_add((u64::from(frame[40]) << 8) | u64::from(frame[41])) + at as u64;
    }
    let p = wire::parse(&frame, len + 42).expect("a UDP frame");
    assert!(wire::checksums_ok(&frame[..len + 42], &p), "checksum");
    println!("{mode}: {n} packets of {len} bytes, check {check}");
}
