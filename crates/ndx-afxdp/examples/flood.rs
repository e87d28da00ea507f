//! Traffic source for the reflector baseline:
//! `flood <ifname> <queue> <seconds> <dst_mac> <src_ip:port> <dst_ip:port> [size]`.
//!
//! Sends UDP frames from an AF_XDP socket as fast as the TX ring drains, and
//! counts frames coming back on the same queue (the reflected ones). Prints
//! sent and received pps.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ndx_afxdp::neigh::Resolver;
use ndx_afxdp::wire::{self, UdpHeaders};
use ndx_afxdp::xdp::RedirectProgram;
use ndx_afxdp::{Port, PortConfig};

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let v: Vec<u8> = s
        .split(':')
        .filter_map(|x| u8::from_str_radix(x, 16).ok())
        .collect();
    v.try_into().ok()
}

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 7 {
        eprintln!(
            "usage: flood <ifname> <queue> <seconds> <dst_mac> <src_ip:port> <dst_ip:port> [size]"
        );
        return ExitCode::from(2);
    }
    let (Ok(queue), Ok(secs), Some(dst_mac), Ok(src), Ok(dst)) = (
        a[2].parse::<u32>(),
        a[3].parse::<f64>(),
        parse_mac(&a[4]),
        a[5].parse::<SocketAddr>(),
        a[6].parse::<SocketAddr>(),
    ) else {
        eprintln!("bad arguments");
        return ExitCode::from(2);
    };
    let size: usize = a.get(7).and_then(|s| s.parse().ok()).unwrap_or(64);
    match run(
        &a[1],
        queue,
        Duration::from_secs_f64(secs),
        dst_mac,
        src,
        dst,
        size,
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flood: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    ifname: &str,
    queue: u32,
    dur: Duration,
    dst_mac: [u8; 6],
    src: SocketAddr,
    dst: SocketAddr,
    size: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut cfg = PortConfig::default();
    cfg.umem.meta_len = 0;
    let port = Port::open(ifname, queue, &cfg)?;
    let mut ep = port.into_endpoints().remove(0);
    let link = Resolver::new()?.link(ep.ifindex())?;
    let mut prog = RedirectProgram::attach(ifname, 1, false)?;
    prog.insert(queue, 0, &ep.as_raw_fd())?;
    let h = UdpHeaders {
        src_mac: link.mac,
        dst_mac,
        src,
        dst,
        ttl: 64,
    };
    let hl = if src.is_ipv4() { 42 } else { 62 };
    let payload = vec![0x5a_u8; size.saturating_sub(hl).max(1)];
    let mut hdr = [0u8; 62];
    let hl = wire::build_udp(&mut hdr, &h, &[&payload])?;
    let frame: [&[u8]; 2] = [&hdr[..hl], &payload];
    let mut rx = Vec::with_capacity(256);
    let (mut sent, mut got) = (0u64, 0u64);
    let start = Instant::now();
    while start.elapsed() < dur {
        for _ in 0..64 {
            if ep.push_tx(&frame).is_err() {
                break;
            }
            sent += 1;
        }
        ep.flush_tx();
        ep.complete();
        rx.clear();
        got += ep.rx_burst(&mut rx, 256) as u64;
        for f in rx.drain(..) {
            ep.release(f);
        }
        ep.recycle();
    }
    let t = start.elapsed().as_secs_f64();
    println!(
        "sent {sent} ({:.0} pps), received back {got} ({:.0} pps) in {t:.2}s; {:?}",
        sent as f64 / t,
        got as f64 / t,
        ep.kernel_stats()?
    );
    Ok(())
}
