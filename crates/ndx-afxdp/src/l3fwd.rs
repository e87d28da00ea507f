//! An AF_XDP layer-3 forwarder between two interfaces: the ceiling of ndx's unique-name path.
//!
//! A UDP frame received on one side leaves on the other with the headers ndx writes when it
//! sends a packet to a UDP face (`send_one` in ndx-router's worker, through
//! [`wire::build_udp_header`] and [`Endpoint::push_tx_udp`]): our MAC and address on the out
//! interface, the next hop's MAC and address, our UDP port (6363) as the source and the
//! peer's as the destination, TTL 64, and the IPv4 header and UDP checksums computed over the
//! whole datagram (the UDP one summed during the payload's copy, as ndx does). The payload is
//! copied into a TX frame of the out interface's UMEM, as ndx copies it (one UMEM per (device, queue):
//! a frame cannot leave in place on another device). Nothing past the UDP header is read;
//! anything that is not UDP over IP (ARP, ICMP, bare NDN over Ethernet) is dropped and counted.
//!
//! The sockets are driven the way ndx's worker drives them with its defaults: copy mode (the
//! kernel's choice), 8192 UMEM frames, 2048-entry rings, RX bursts of 64, every queue of both
//! interfaces served by one thread, packets for an interface queued on its first queue's
//! socket, and one [`Endpoint::poll`] (flush with `sendto` kicks, completions, fill ring) per
//! socket per loop turn; the loop spins when idle. Behind the `redirect` feature: a benchmark
//! baseline, never part of the router.

use std::ffi::CString;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use xdpilone::IfInfo;

use crate::neigh::{Resolution, Resolver};
use crate::wire::{self, Encap, UdpHeaders};
use crate::xdp::RedirectProgram;
use crate::{Endpoint, Error, KernelStats, MAX_SEGMENTS, Port, PortConfig, RxFrame, TxError};

/// One side of the forwarder: an interface and the peer frames leave towards on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// Interface name (every queue of it is served).
    pub ifname: String,
    /// The peer on that interface: frames received on the other side go to this address and
    /// port, through its neighbour entry (resolved once, at start).
    pub peer: SocketAddr,
}

/// Tuning of a [`L3Fwd`]; the defaults are ndx's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Most packets taken per RX burst (ndx's `router.burst`, 64).
    pub burst: usize,
    /// UMEM frames per (interface, queue) (ndx's `router.frames`, 8192).
    pub frames: u32,
    /// Our UDP port, the source port of every frame sent (ndx's, 6363).
    pub udp_port: u16,
    /// How long to wait for a neighbour the kernel does not know yet, at start.
    pub resolve_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            burst: 64,
            frames: 8192,
            udp_port: 6363,
            resolve_timeout: Duration::from_secs(3),
        }
    }
}

/// Why a received frame was not forwarded by [`rewrite`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Reject {
    /// Not UDP over IPv4/IPv6 (or malformed, truncated, an IP fragment).
    #[error("not UDP over IP")]
    NotUdp,
    /// The payload does not fit in one datagram of the out family, or the headers do not fit
    /// in the buffer.
    #[error("headers cannot be built: {0}")]
    Build(#[from] wire::BuildError),
}

/// The UDP payload of a received packet, as slices of its segments (trailing Ethernet
/// padding excluded).
#[derive(Debug, Clone, Copy)]
pub struct Payload<'a> {
    parts: [&'a [u8]; MAX_SEGMENTS],
    n: usize,
}

impl<'a> Payload<'a> {
    /// The pieces, in order (one for a single-buffer packet; none for an empty datagram).
    pub fn parts(&self) -> &[&'a [u8]] {
        &self.parts[..self.n]
    }

    /// Total payload bytes.
    pub fn len(&self) -> usize {
        self.parts().iter().map(|p| p.len()).sum()
    }

    /// Whether the datagram is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The rewrite of one packet: reads the Ethernet/IP/UDP headers of the packet given as its
/// `segments` (the first holds the headers), writes the outgoing headers `to` into `hdr` (62
/// bytes cover IPv6, the UDP checksum field zero), and returns their length, the checksum
/// over them to finish over the payload during its copy ([`Endpoint::push_tx_udp`]), and
/// the payload to send after them. The packet's own addresses, ports and checksums are not
/// read (ndx answers from its face table, not from the packet). Never panics on any input.
pub fn rewrite<'a>(
    segments: &[&'a [u8]],
    to: &UdpHeaders,
    hdr: &mut [u8],
) -> Result<(usize, wire::Checksum, Payload<'a>), Reject> {
    let first = segments.first().ok_or(Reject::NotUdp)?;
    let total: usize = segments.iter().map(|s| s.len()).sum();
    let p = wire::parse(first, total).ok_or(Reject::NotUdp)?;
    if !matches!(p.encap, Encap::UdpV4 | Encap::UdpV6) {
        return Err(Reject::NotUdp);
    }
    let mut payload = Payload {
        parts: [&[]; MAX_SEGMENTS],
        n: 0,
    };
    let mut at = 0;
    for s in segments.iter().take(MAX_SEGMENTS) {
        let (lo, hi) = (
            p.payload.start.clamp(at, at + s.len()),
            p.payload.end.clamp(at, at + s.len()),
        );
        if lo < hi {
            payload.parts[payload.n] = &s[lo - at..hi - at];
            payload.n += 1;
        }
        at += s.len();
    }
    let plen = payload.parts().iter().map(|p| p.len()).sum();
    let (hlen, sum) = wire::build_udp_header(hdr, to, plen)?;
    Ok((hlen, sum, payload))
}

/// Counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirStats {
    /// Packets received on the in side.
    pub rx: u64,
    /// Packets queued for transmission on the out side.
    pub forwarded: u64,
    /// Dropped: not UDP over IP.
    pub not_udp: u64,
    /// Dropped: headers could not be built (payload too long for the out family).
    pub too_long: u64,
    /// Dropped: no TX ring slot or TX frame on the out side, even after a flush.
    pub tx_full: u64,
}

impl DirStats {
    /// Every packet dropped.
    pub fn dropped(&self) -> u64 {
        self.not_udp + self.too_long + self.tx_full
    }
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FwdStats {
    /// Side A to side B (e.g. Interests, consumer to producer).
    pub a_to_b: DirStats,
    /// Side B to side A (e.g. Data, producer to consumer).
    pub b_to_a: DirStats,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Kernel statistics of side A's sockets, summed over its queues.
    pub kernel_a: KernelStats,
    /// Kernel statistics of side B's sockets, summed over its queues.
    pub kernel_b: KernelStats,
    /// The longest time 256 loop turns took: a turn is a few microseconds, so a long one
    /// means the thread did not run (a shared CPU) or a kick took that long.
    pub slowest_256_turns: Duration,
}

struct Leg {
    ifname: String,
    /// One socket per queue; the first sends.
    eps: Vec<Endpoint>,
    /// Headers of frames leaving on this side.
    out: UdpHeaders,
}

/// The forwarder: both interfaces' sockets and their redirect programs (detached on drop).
pub struct L3Fwd {
    legs: [Leg; 2],
    cfg: Config,
    // Declared last: the sockets close before the programs go.
    _progs: [RedirectProgram; 2],
}

impl std::fmt::Debug for L3Fwd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("L3Fwd")
            .field("a", &self.legs[0].ifname)
            .field("b", &self.legs[1].ifname)
            .field("a_out", &self.legs[0].out)
            .field("b_out", &self.legs[1].out)
            .finish_non_exhaustive()
    }
}

fn neigh_err(e: crate::neigh::NeighError) -> Error {
    Error::Config(format!("next-hop lookup: {e}"))
}

/// Resolves the next hop towards `side.peer`, which must leave through `ifindex`.
fn headers(
    side: &Side,
    ifindex: u32,
    cfg: &Config,
    res: &mut Resolver,
) -> Result<UdpHeaders, Error> {
    let peer = side.peer;
    let deadline = Instant::now() + cfg.resolve_timeout;
    let hop = loop {
        match res.resolve(peer.ip()).map_err(neigh_err)? {
            Resolution::Ready(h) => break h,
            Resolution::NoRoute => {
                return Err(Error::Config(format!("no route to {}", peer.ip())));
            }
            Resolution::Pending | Resolution::Failed if Instant::now() >= deadline => {
                return Err(Error::Config(format!(
                    "no neighbour entry for {} on {} after {:?} (add a static one: the \
                     forwarder takes every frame, ARP included)",
                    peer.ip(),
                    side.ifname,
                    cfg.resolve_timeout
                )));
            }
            Resolution::Pending | Resolution::Failed => {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    };
    if hop.ifindex != ifindex {
        return Err(Error::Config(format!(
            "{} is reached through interface index {}, not {} ({ifindex})",
            peer.ip(),
            hop.ifindex,
            side.ifname
        )));
    }
    let src_ip: IpAddr = hop.src_ip.ok_or_else(|| {
        Error::Config(format!(
            "{} has no address of {}'s family",
            side.ifname,
            peer.ip()
        ))
    })?;
    Ok(UdpHeaders {
        src_mac: hop.src_mac,
        dst_mac: hop.dst_mac,
        src: SocketAddr::new(src_ip, cfg.udp_port),
        dst: peer,
        ttl: 64,
    })
}

fn open_leg(side: &Side, cfg: &Config, res: &mut Resolver) -> Result<Leg, Error> {
    let no_if = || Error::NoInterface(side.ifname.clone());
    let name = CString::new(side.ifname.as_str()).map_err(|_| no_if())?;
    let mut info = IfInfo::invalid();
    info.from_name(&name).map_err(|_| no_if())?;
    let ifindex = info.ifindex();
    // Netlink, not sysfs: it answers for this thread's namespace.
    let mtu = res.link(ifindex).map_err(neigh_err)?.mtu;
    let queues = res.rx_queues(ifindex).map_err(neigh_err)?.max(1);
    // Before any socket: a closed socket leaves its queue busy for a moment (the kernel
    // releases it from a work queue), so a refused start should not have bound any.
    let out = headers(side, ifindex, cfg, res)?;
    let mut pc = PortConfig {
        // ndx's `frags = "auto"`: multi-buffer only above a 3000-byte MTU.
        multi_buffer: mtu > 3000,
        ..PortConfig::default()
    };
    pc.umem.frame_count = cfg.frames;
    // The redirect program writes no metadata: nothing to clear on refill.
    pc.umem.meta_len = 0;
    let mut eps = Vec::new();
    for q in 0..queues {
        eps.extend(Port::open(&side.ifname, q, &pc)?.into_endpoints());
    }
    Ok(Leg {
        ifname: side.ifname.clone(),
        eps,
        out,
    })
}

impl L3Fwd {
    /// Opens every queue of both interfaces, resolves each side's next hop (in the calling
    /// thread's network namespace; it must be in the neighbour table or resolve within
    /// `cfg.resolve_timeout`), then attaches the redirect program to both: from then on every
    /// frame arriving on them is ours.
    pub fn open(a: &Side, b: &Side, cfg: Config) -> Result<L3Fwd, Error> {
        if a.ifname == b.ifname {
            return Err(Error::Config(format!(
                "both sides are {}: give two interfaces",
                a.ifname
            )));
        }
        if cfg.burst == 0 || cfg.burst > 1024 {
            return Err(Error::Config(format!(
                "burst = {}: between 1 and 1024",
                cfg.burst
            )));
        }
        let mut res = Resolver::new().map_err(neigh_err)?;
        let legs = [open_leg(a, &cfg, &mut res)?, open_leg(b, &cfg, &mut res)?];
        let attach = |leg: &Leg| -> Result<RedirectProgram, Error> {
            let mut prog = RedirectProgram::attach(&leg.ifname, 1, false)?;
            for ep in &leg.eps {
                prog.insert(ep.queue(), 0, &ep.as_raw_fd())?;
            }
            Ok(prog)
        };
        let progs = [attach(&legs[0])?, attach(&legs[1])?];
        Ok(L3Fwd {
            legs,
            cfg,
            _progs: progs,
        })
    }

    /// The headers written on frames leaving on side A (index 0) or B (1).
    pub fn headers(&self, side: usize) -> &UdpHeaders {
        &self.legs[side].out
    }

    /// Forwards until `stop` is set or `deadline` passes (checked every 256 loop turns).
    pub fn run(&mut self, stop: &AtomicBool, deadline: Option<Instant>) -> FwdStats {
        let start = Instant::now();
        let mut st = [DirStats::default(); 2];
        let mut rx: Vec<RxFrame> = Vec::with_capacity(self.cfg.burst);
        let mut hdr = [0u8; 64];
        let mut turns = 0u32;
        let mut mark = start;
        let mut slowest = Duration::ZERO;
        while !stop.load(Ordering::Relaxed) {
            turns = turns.wrapping_add(1);
            if turns.is_multiple_of(256) {
                let now = Instant::now();
                slowest = slowest.max(now - mark);
                mark = now;
                if deadline.is_some_and(|d| now >= d) {
                    break;
                }
            }
            for (s, dir) in st.iter_mut().enumerate() {
                let (l, r) = self.legs.split_at_mut(1);
                let (inp, out) = if s == 0 {
                    (&mut l[0], &mut r[0])
                } else {
                    (&mut r[0], &mut l[0])
                };
                for ep in &mut inp.eps {
                    let n = ep.rx_burst(&mut rx, self.cfg.burst);
                    dir.rx += n as u64;
                    for f in rx.drain(..) {
                        forward_one(ep, &f, out, &mut hdr, dir);
                        ep.release(f);
                    }
                }
            }
            for leg in &mut self.legs {
                for ep in &mut leg.eps {
                    ep.poll();
                }
            }
        }
        // What is still queued leaves before the counters are read.
        for leg in &mut self.legs {
            for ep in &mut leg.eps {
                ep.poll();
            }
        }
        let kernel = |leg: &Leg| {
            leg.eps.iter().fold(KernelStats::default(), |mut k, ep| {
                let s = ep.kernel_stats().unwrap_or_default();
                k.rx_dropped += s.rx_dropped;
                k.rx_invalid_descs += s.rx_invalid_descs;
                k.tx_invalid_descs += s.tx_invalid_descs;
                k.rx_ring_full += s.rx_ring_full;
                k.rx_fill_ring_empty_descs += s.rx_fill_ring_empty_descs;
                k.tx_ring_empty_descs += s.tx_ring_empty_descs;
                k
            })
        };
        FwdStats {
            a_to_b: st[0],
            b_to_a: st[1],
            elapsed: start.elapsed(),
            kernel_a: kernel(&self.legs[0]),
            kernel_b: kernel(&self.legs[1]),
            slowest_256_turns: slowest,
        }
    }
}

/// Rewrites one received frame for `out` and queues it on `out`'s first socket; on a full
/// ring or no free frame, flushes, reaps completions and tries once more (as ndx does).
fn forward_one(ep: &Endpoint, f: &RxFrame, out: &mut Leg, hdr: &mut [u8], st: &mut DirStats) {
    let fr = ep.frame(f);
    let mut segs: [&[u8]; MAX_SEGMENTS] = [&[]; MAX_SEGMENTS];
    let n = f.segments().min(MAX_SEGMENTS);
    for (i, s) in segs.iter_mut().enumerate().take(n) {
        *s = fr.segment(i);
    }
    let (hlen, sum, payload) = match rewrite(&segs[..n], &out.out, hdr) {
        Ok(x) => x,
        Err(Reject::NotUdp) => {
            st.not_udp += 1;
            return;
        }
        Err(Reject::Build(_)) => {
            st.too_long += 1;
            return;
        }
    };
    let mut gather: [&[u8]; MAX_SEGMENTS + 1] = [&[]; MAX_SEGMENTS + 1];
    gather[0] = &hdr[..hlen];
    let parts = payload.parts();
    gather[1..=parts.len()].copy_from_slice(parts);
    let gather = &gather[..=parts.len()];
    let tx = &mut out.eps[0];
    // The UDP checksum is summed while the payload is copied, as ndx's worker sends.
    let mut r = tx.push_tx_udp(gather, sum);
    if matches!(r, Err(TxError::RingFull | TxError::NoFrame)) {
        tx.flush_tx();
        tx.complete();
        r = tx.push_tx_udp(gather, sum);
    }
    match r {
        Ok(()) => st.forwarded += 1,
        Err(TxError::BadLength) => st.too_long += 1,
        Err(_) => st.tx_full += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C_MAC: [u8; 6] = [2, 0, 0, 0, 1, 1];
    const RC_MAC: [u8; 6] = [2, 0, 0, 0, 1, 2];
    const RP_MAC: [u8; 6] = [2, 0, 0, 0, 2, 2];
    const P_MAC: [u8; 6] = [2, 0, 0, 0, 2, 1];

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    /// What the consumer puts on the wire: Ethernet + IPv4/UDP to the router, then `payload`.
    fn consumer_frame(payload: &[u8], ttl: u8) -> Vec<u8> {
        let h = UdpHeaders {
            src_mac: C_MAC,
            dst_mac: RC_MAC,
            src: sa("10.77.1.1:40000"),
            dst: sa("10.77.1.2:6363"),
            ttl,
        };
        let mut f = vec![0u8; 62];
        let n = wire::build_udp(&mut f, &h, &[payload]).unwrap();
        f.truncate(n);
        f.extend_from_slice(payload);
        f
    }

    fn to_producer() -> UdpHeaders {
        UdpHeaders {
            src_mac: RP_MAC,
            dst_mac: P_MAC,
            src: sa("10.77.2.2:6363"),
            dst: sa("10.77.2.1:6363"),
            ttl: 64,
        }
    }

    /// The frame `forward_one` sends: the headers, the payload behind them, and the UDP
    /// checksum finished over the payload as `Endpoint::push_tx_udp` does during its copy.
    fn assemble(hdr: &[u8], sum: wire::Checksum, p: &Payload<'_>) -> Vec<u8> {
        let mut v = hdr.to_vec();
        let mut sum = sum;
        for part in p.parts() {
            let at = v.len();
            v.resize(at + part.len(), 0);
            sum.add_copy(&mut v[at..], part);
        }
        let ck = hdr.len() - 2;
        v[ck..ck + 2].copy_from_slice(&sum.finish_udp().to_be_bytes());
        v
    }

    #[test]
    fn rewrite_writes_ndx_headers_and_keeps_the_payload() {
        let payload: Vec<u8> = (0..977u32).map(|i| (i * 7 + 3) as u8).collect();
        let frame = consumer_frame(&payload, 17);
        let to = to_producer();
        let mut hdr = [0u8; 64];
        let (hl, sum, p) = rewrite(&[&frame], &to, &mut hdr).unwrap();
        assert_eq!(hl, 42);
        let out = assemble(&hdr[..hl], sum, &p);
        let q = wire::parse(&out, out.len()).unwrap();
        assert_eq!(q.encap, Encap::UdpV4);
        assert_eq!((q.src_mac, q.dst_mac), (RP_MAC, P_MAC));
        assert_eq!(q.src, Some(sa("10.77.2.2:6363")));
        assert_eq!(q.dst, Some(sa("10.77.2.1:6363")));
        assert_eq!(out[14 + 8], 64, "TTL set to 64 like ndx, not decremented");
        assert_eq!(&out[q.payload.clone()], &payload[..]);
        assert!(
            wire::checksums_ok(&out, &q),
            "IPv4 header and UDP checksums"
        );
        assert_ne!(out[40..42], [0, 0], "a real UDP checksum, not zero");
        // Byte for byte what ndx's send_one builds for this payload.
        let mut ndx = [0u8; 64];
        let n = wire::build_udp(&mut ndx, &to, &[&payload]).unwrap();
        assert_eq!(&out[..n], &ndx[..n]);
    }

    #[test]
    fn rewrite_drops_ethernet_padding_and_spans_segments() {
        // A 5-byte payload in a frame padded to 60 bytes: the padding is not forwarded.
        let mut frame = consumer_frame(b"hello", 64);
        frame.resize(60, 0);
        let mut hdr = [0u8; 64];
        let (hl, sum, p) = rewrite(&[&frame], &to_producer(), &mut hdr).unwrap();
        assert_eq!(p.parts(), &[&b"hello"[..]]);
        let out = assemble(&hdr[..hl], sum, &p);
        assert_eq!(out.len(), 42 + 5);
        assert!(wire::checksums_ok(
            &out,
            &wire::parse(&out, out.len()).unwrap()
        ));

        // A multi-buffer packet: headers in the first segment, payload across three.
        let payload: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let frame = consumer_frame(&payload, 64);
        let segs = [&frame[..3840], &frame[3840..4000], &frame[4000..]];
        let (hl, sum, p) = rewrite(&segs, &to_producer(), &mut hdr).unwrap();
        assert_eq!(p.parts().len(), 3);
        assert_eq!(p.len(), payload.len());
        let out = assemble(&hdr[..hl], sum, &p);
        let q = wire::parse(&out, out.len()).unwrap();
        assert_eq!(&out[q.payload.clone()], &payload[..]);
        assert!(wire::checksums_ok(&out, &q));
    }

    #[test]
    fn rewrite_changes_family_to_the_out_side() {
        // IPv6 in, IPv4 out (the out side's headers decide, as a face's address does in ndx).
        let h6 = UdpHeaders {
            src_mac: C_MAC,
            dst_mac: RC_MAC,
            src: sa("[fd00::1]:6363"),
            dst: sa("[fd00::2]:6363"),
            ttl: 64,
        };
        let mut f = vec![0u8; 62];
        let n = wire::build_udp(&mut f, &h6, &[b"ndn"]).unwrap();
        f.truncate(n);
        f.extend_from_slice(b"ndn");
        let mut hdr = [0u8; 64];
        let (hl, sum, p) = rewrite(&[&f], &to_producer(), &mut hdr).unwrap();
        let out = assemble(&hdr[..hl], sum, &p);
        let q = wire::parse(&out, out.len()).unwrap();
        assert_eq!(
            (q.encap, &out[q.payload.clone()]),
            (Encap::UdpV4, &b"ndn"[..])
        );
        // And the other way: an IPv6 out side writes a 62-byte header.
        let mut to6 = to_producer();
        to6.src = sa("[fd00:2::2]:6363");
        to6.dst = sa("[fd00:2::1]:6363");
        let frame = consumer_frame(b"ndn", 64);
        let (hl, sum, p) = rewrite(&[&frame], &to6, &mut hdr).unwrap();
        assert_eq!(hl, 62);
        let out = assemble(&hdr[..hl], sum, &p);
        let q = wire::parse(&out, out.len()).unwrap();
        assert_eq!(q.encap, Encap::UdpV6);
        assert!(wire::checksums_ok(&out, &q));
    }

    #[test]
    fn rewrite_rejects_what_is_not_udp_over_ip() {
        let to = to_producer();
        let mut hdr = [0u8; 64];
        // ARP request.
        let mut arp = vec![0xff; 6];
        arp.extend_from_slice(&C_MAC);
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.resize(60, 0);
        assert_eq!(rewrite(&[&arp], &to, &mut hdr).unwrap_err(), Reject::NotUdp);
        // Bare NDN over Ethernet.
        let mut ndn = RC_MAC.to_vec();
        ndn.extend_from_slice(&C_MAC);
        ndn.extend_from_slice(&[0x86, 0x24, 0x05, 0x01, 0x00]);
        assert_eq!(rewrite(&[&ndn], &to, &mut hdr).unwrap_err(), Reject::NotUdp);
        // ICMP: protocol 1 instead of 17.
        let mut icmp = consumer_frame(b"ping", 64);
        icmp[14 + 9] = 1;
        assert_eq!(
            rewrite(&[&icmp], &to, &mut hdr).unwrap_err(),
            Reject::NotUdp
        );
        // Truncated, empty, nothing.
        let f = consumer_frame(b"abcdef", 64);
        assert_eq!(
            rewrite(&[&f[..30]], &to, &mut hdr).unwrap_err(),
            Reject::NotUdp
        );
        assert_eq!(rewrite(&[&[]], &to, &mut hdr).unwrap_err(), Reject::NotUdp);
        assert_eq!(rewrite(&[], &to, &mut hdr).unwrap_err(), Reject::NotUdp);
        // A header buffer too small is an error, not a panic.
        assert_eq!(
            rewrite(&[&f], &to, &mut [0u8; 20]).unwrap_err(),
            Reject::Build(wire::BuildError::BufferTooSmall)
        );
    }

    #[test]
    fn open_refuses_one_interface_twice_and_a_bad_burst() {
        let side = |ifname: &str| Side {
            ifname: ifname.into(),
            peer: sa("10.77.1.1:6363"),
        };
        let e = L3Fwd::open(&side("c0"), &side("c0"), Config::default()).unwrap_err();
        assert!(e.to_string().contains("both sides are c0"), "{e}");
        for burst in [0, 1025] {
            let cfg = Config {
                burst,
                ..Config::default()
            };
            let e = L3Fwd::open(&side("c0"), &side("p0"), cfg).unwrap_err();
            assert!(e.to_string().contains("between 1 and 1024"), "{e}");
        }
    }
}
