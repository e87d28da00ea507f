//! The AF_XDP flood: unique-name Interests as fast as the TX ring drains, no window, optionally
//! from many source ports (and addresses); what comes back is only counted.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ndx_afxdp::RxFrame;
use ndx_afxdp::wire::{self, UdpHeaders};
use ndx_codec::{NackReason, Packet};
use serde::Serialize;

use crate::Error;
use crate::interest::{InterestTemplate, Nonces};
use crate::link::Link;

/// What the flood does.
#[derive(Debug, Clone)]
pub struct FloodConfig {
    /// Interface to send and receive on.
    pub iface: String,
    /// Queue to transmit on.
    pub tx_queue: u32,
    /// Queues to receive on (empty: all of the interface's).
    pub rx_queues: Vec<u32>,
    /// Next hop's MAC address.
    pub dst_mac: [u8; 6],
    /// The first source address and port.
    pub src: SocketAddr,
    /// The target's address and UDP port.
    pub dst: SocketAddr,
    /// Source ports cycled over, from `src`'s port up.
    pub src_ports: u32,
    /// Source IPv4 addresses cycled over, from `src`'s address up (each with every port).
    pub src_addrs: u32,
    /// Name prefix (NDN URI); a counter component is appended.
    pub prefix: String,
    /// InterestLifetime put in the Interests.
    pub lifetime_ms: u64,
    /// Measured duration.
    pub duration: Duration,
    /// Unmeasured warm-up before it.
    pub warmup: Duration,
    /// Most Interests queued per loop turn.
    pub burst: usize,
    /// UMEM frames per queue.
    pub frames: u32,
}

/// The result line.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FloodReport {
    /// Measured seconds.
    pub seconds: f64,
    /// Distinct sources cycled over (ports × addresses).
    pub sources: u64,
    /// Interests sent in the measured period.
    pub sent: u64,
    /// Interests sent per second.
    pub pps: f64,
    /// Nacks received in the measured period, by reason.
    pub nack_congestion: u64,
    /// Nack NoRoute.
    pub nack_no_route: u64,
    /// Nack Duplicate.
    pub nack_duplicate: u64,
    /// Nack without (or with an unknown) reason.
    pub nack_other: u64,
    /// Data received.
    pub data: u64,
    /// Frames that were neither (ARP, IPv6 neighbour discovery, Interests, garbage).
    pub other_frames: u64,
    /// The frame size of an Interest on the wire.
    pub interest_frame_bytes: usize,
    /// CPU seconds (user + system) the process used in the measured period; the flood's
    /// includes the receiver's XDP program, which veth runs inside the sender's `sendto`.
    pub cpu_s: f64,
    /// The XDP socket's kernel counters at the end (debug text).
    pub kernel_stats: String,
}

/// Builds the flood's frames: `<prefix>/<counter>` with a fresh Nonce, the source cycling
/// over `ports` consecutive ports (fastest) and `addrs` consecutive IPv4 addresses.
#[derive(Debug)]
pub struct FloodFrames {
    tpl: InterestTemplate,
    nonces: Nonces,
    h: UdpHeaders,
    first: SocketAddr,
    ports: u32,
    sources: u64,
    count: u64,
    hdr: [u8; 64],
}

impl FloodFrames {
    /// The frames for `cfg` (its MACs, addresses, prefix, lifetime, sources); `seed` starts the
    /// Nonces.
    pub fn new(cfg: &FloodConfig, src_mac: [u8; 6], seed: u32) -> Result<Self, Error> {
        let ports = cfg.src_ports.max(1);
        let addrs = cfg.src_addrs.max(1);
        if u32::from(cfg.src.port()) + ports - 1 > u32::from(u16::MAX) {
            return Err(Error::Option(format!(
                "{ports} source ports from {} pass 65535 (use --src-addrs for more sources)",
                cfg.src.port()
            )));
        }
        if addrs > 1 {
            let IpAddr::V4(a) = cfg.src.ip() else {
                return Err(Error::Option("--src-addrs needs IPv4".into()));
            };
            if u64::from(u32::from(a)) + u64::from(addrs) - 1 > u64::from(u32::MAX) {
                return Err(Error::Option(format!("{addrs} addresses from {a}")));
            }
        }
        Ok(Self {
            tpl: InterestTemplate::new(&cfg.prefix, cfg.lifetime_ms)?,
            nonces: Nonces::new(seed),
            h: UdpHeaders {
                src_mac,
                dst_mac: cfg.dst_mac,
                src: cfg.src,
                dst: cfg.dst,
                ttl: 64,
            },
            first: cfg.src,
            ports,
            sources: u64::from(ports) * u64::from(addrs),
            count: 0,
            hdr: [0; 64],
        })
    }

    /// Distinct sources cycled over.
    pub fn sources(&self) -> u64 {
        self.sources
    }

    /// The source of the `n`-th Interest.
    pub fn source(&self, n: u64) -> SocketAddr {
        let i = n % self.sources;
        let port = self.first.port() + (i % u64::from(self.ports)) as u16;
        let step = (i / u64::from(self.ports)) as u32;
        let ip = match self.first.ip() {
            IpAddr::V4(a) => IpAddr::V4(Ipv4Addr::from(u32::from(a) + step)),
            v6 => v6,
        };
        SocketAddr::new(ip, port)
    }

    /// Frames built so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Builds the next frame as a gather list: headers, Interest. The name's last component is
    /// the frame's number, so names do not repeat for 2^64 frames.
    pub fn next_frame(&mut self) -> Result<[&[u8]; 2], Error> {
        self.h.src = self.source(self.count);
        let interest = self.tpl.patch(self.count, self.nonces.next_nonce());
        let hl = wire::build_udp(&mut self.hdr, &self.h, &[interest])?;
        self.count += 1;
        Ok([&self.hdr[..hl], interest])
    }

    /// Length of an Interest frame.
    pub fn frame_len(&self) -> usize {
        self.tpl.len() + if self.first.is_ipv4() { 42 } else { 62 }
    }
}

#[derive(Default)]
struct Tally {
    sent: u64,
    congestion: u64,
    no_route: u64,
    duplicate: u64,
    nack_other: u64,
    data: u64,
    other: u64,
}

impl Tally {
    fn count(&mut self, payload: &[u8]) {
        match Packet::decode(payload) {
            Ok(Packet::Data(_)) => self.data += 1,
            Ok(Packet::Lp(lp)) => match (lp.nack(), lp.network_packet()) {
                (Some(NackReason::Congestion), _) => self.congestion += 1,
                (Some(NackReason::NoRoute), _) => self.no_route += 1,
                (Some(NackReason::Duplicate), _) => self.duplicate += 1,
                (Some(NackReason::Unspecified), _) => self.nack_other += 1,
                (None, Ok(Some(Packet::Data(_)))) => self.data += 1,
                _ => self.other += 1,
            },
            _ => self.other += 1,
        }
    }
}

/// Runs the flood until the duration elapses or `stop` becomes true; returns its report.
pub fn run(cfg: &FloodConfig, stop: &AtomicBool) -> Result<FloodReport, Error> {
    let (mut link, tx_idx) =
        Link::open_with_tx(&cfg.iface, cfg.tx_queue, &cfg.rx_queues, cfg.frames)?;
    let seed = crate::link::clock_seed();
    let mut frames = FloodFrames::new(cfg, link.mac, seed)?;
    let mut rx: Vec<RxFrame> = Vec::with_capacity(256);
    let mut t = Tally::default();
    let start = Instant::now();
    let end = cfg.warmup + cfg.duration;
    let mut measuring = false;
    let mut cpu0 = crate::cpu::cpu_seconds();
    loop {
        let el = start.elapsed();
        if el >= end || stop.load(Ordering::Relaxed) {
            break;
        }
        if !measuring && el >= cfg.warmup {
            measuring = true;
            cpu0 = crate::cpu::cpu_seconds();
            t = Tally::default();
        }
        let ep = &mut link.endpoints[tx_idx];
        ep.complete();
        for _ in 0..cfg.burst {
            // The same frame is rebuilt until the ring takes it: the counter moves on only
            // for frames sent, so names and sources stay consecutive.
            let n = frames.count();
            let g = frames.next_frame()?;
            if ep.push_tx(&g).is_err() {
                frames.count = n;
                break;
            }
            t.sent += 1;
        }
        ep.flush_tx();
        for ep in &mut link.endpoints {
            rx.clear();
            ep.rx_burst(&mut rx, 256);
            for f in rx.drain(..) {
                {
                    let fr = ep.frame(&f);
                    let seg = fr.first();
                    match wire::parse(seg, f.len()).filter(|p| p.payload.end <= seg.len()) {
                        Some(p) => t.count(&seg[p.payload]),
                        None => t.other += 1,
                    }
                }
                ep.release(f);
            }
            ep.recycle();
        }
    }
    let secs = (start.elapsed().saturating_sub(cfg.warmup))
        .as_secs_f64()
        .max(1e-9);
    let cpu_s = match (cpu0, crate::cpu::cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => 0.0,
    };
    let kernel = link.endpoints[tx_idx]
        .kernel_stats()
        .map(|k| format!("{k:?}"))
        .unwrap_or_default();
    Ok(FloodReport {
        seconds: secs,
        sources: frames.sources(),
        sent: t.sent,
        pps: t.sent as f64 / secs,
        nack_congestion: t.congestion,
        nack_no_route: t.no_route,
        nack_duplicate: t.duplicate,
        nack_other: t.nack_other,
        data: t.data,
        other_frames: t.other,
        interest_frame_bytes: frames.frame_len(),
        cpu_s,
        kernel_stats: kernel,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndx_codec::{Interest, InterestRepr, LpHeaders, NameBuf};

    fn cfg(src: &str, ports: u32, addrs: u32) -> FloodConfig {
        FloodConfig {
            iface: "x".into(),
            tx_queue: 0,
            rx_queues: vec![],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src: src.parse().unwrap(),
            dst: "10.0.0.2:6363".parse().unwrap(),
            src_ports: ports,
            src_addrs: addrs,
            prefix: "/dark".into(),
            lifetime_ms: 4000,
            duration: Duration::from_secs(1),
            warmup: Duration::ZERO,
            burst: 64,
            frames: 2048,
        }
    }

    #[test]
    fn frames_carry_unique_names_lifetime_and_cycled_sources() {
        let mut f = FloodFrames::new(&cfg("10.0.0.1:1000", 3, 2), [2, 0, 0, 0, 0, 1], 7).unwrap();
        assert_eq!(f.sources(), 6);
        let mut seen = Vec::new();
        for n in 0..13u64 {
            let g = f.next_frame().unwrap();
            let frame = [g[0], g[1]].concat();
            assert_eq!(frame.len(), f.frame_len());
            let p = wire::parse(&frame, frame.len()).unwrap();
            assert!(wire::checksums_ok(&frame, &p), "frame {n}");
            let i = Interest::decode(&frame[p.payload.clone()]).unwrap();
            assert_eq!(crate::interest::id_of(&i.name()), Some(n));
            assert_eq!(i.lifetime_ms(), Some(4000));
            assert_eq!(i.name().len(), 2, "/dark/<counter>");
            seen.push(p.src.unwrap());
        }
        let want: Vec<SocketAddr> = [
            "10.0.0.1:1000",
            "10.0.0.1:1001",
            "10.0.0.1:1002",
            "10.0.0.2:1000",
            "10.0.0.2:1001",
            "10.0.0.2:1002",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        assert_eq!(&seen[..6], &want[..]);
        assert_eq!(&seen[6..12], &want[..], "the cycle repeats");
        assert_eq!(seen[12], want[0]);
        assert_eq!(f.count(), 13);
    }

    #[test]
    fn a_hundred_thousand_sources_and_bounds() {
        let f = FloodFrames::new(&cfg("10.0.0.1:10000", 50_000, 2), [0; 6], 1).unwrap();
        assert_eq!(f.sources(), 100_000);
        assert_eq!(f.source(49_999), "10.0.0.1:59999".parse().unwrap());
        assert_eq!(f.source(50_000), "10.0.0.2:10000".parse().unwrap());
        assert_eq!(f.source(100_000), "10.0.0.1:10000".parse().unwrap());
        assert!(FloodFrames::new(&cfg("10.0.0.1:10000", 60_000, 1), [0; 6], 1).is_err());
        assert!(FloodFrames::new(&cfg("10.0.0.1:1", 65_535, 1), [0; 6], 1).is_ok());
        assert!(FloodFrames::new(&cfg("[fe80::1]:1", 1, 2), [0; 6], 1).is_err());
        let one = FloodFrames::new(&cfg("10.0.0.1:6363", 1, 1), [0; 6], 1).unwrap();
        assert_eq!(one.source(12345), "10.0.0.1:6363".parse().unwrap());
    }

    #[test]
    fn replies_are_counted_by_kind_and_reason() {
        let i = InterestRepr::new(NameBuf::from_uri("/dark/x").unwrap())
            .to_vec()
            .unwrap();
        let mut t = Tally::default();
        for reason in [
            NackReason::Congestion,
            NackReason::Congestion,
            NackReason::NoRoute,
            NackReason::Duplicate,
            NackReason::Unspecified,
        ] {
            let h = LpHeaders {
                nack: Some(reason),
                ..LpHeaders::default()
            };
            let mut out = vec![0; h.encoded_len(Some(i.len()))];
            h.encode(Some(&i), &mut out).unwrap();
            t.count(&out);
        }
        t.count(&i);
        t.count(&[1, 2, 3]);
        assert_eq!(
            (
                t.congestion,
                t.no_route,
                t.duplicate,
                t.nack_other,
                t.data,
                t.other
            ),
            (2, 1, 1, 1, 0, 2)
        );
    }
}
