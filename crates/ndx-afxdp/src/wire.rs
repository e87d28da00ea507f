//! Link, network and transport headers around NDN packets (no `unsafe`).
//!
//! [`walk`] (module [`layers`]) is the one header walker of the project, used by the router
//! (through [`parse`], strict rules) and by `ndx dissect` (lenient rules, capture link types).
//! [`parse`] reads Ethernet (with at most one 802.1Q tag) carrying IPv4/UDP,
//! IPv6/UDP or bare NDN (EtherType 0x8624) and says where the NDN bytes are.
//! The `build_*` functions write outgoing headers into a caller buffer with
//! correct checksums; the payload stays where it is (it may be given as several
//! slices, e.g. LP headers + a Data from the content store). Nothing here
//! panics on untrusted input: parsing is bounds-checked and returns `None`.

use std::net::{IpAddr, SocketAddr};
use std::ops::Range;

pub mod layers;

pub use layers::{
    Carrier, ETHERTYPE_QINQ, Header, Layers, Link, Macs, Malformed, Rules, Skip, Stop, walk,
};

/// EtherType of NDN over Ethernet.
pub const ETHERTYPE_NDN: u16 = 0x8624;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
/// EtherType of an 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// Ethernet header length (no VLAN tag).
pub const ETH_LEN: usize = 14;
/// IPv4 header length without options.
pub const IPV4_LEN: usize = 20;
/// IPv6 header length.
pub const IPV6_LEN: usize = 40;
/// UDP header length.
pub const UDP_LEN: usize = 8;

/// How the NDN packet was carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encap {
    /// UDP over IPv4.
    UdpV4,
    /// UDP over IPv6.
    UdpV6,
    /// Bare Ethernet, EtherType 0x8624.
    Ether,
}

/// What [`parse`] found in a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// Encapsulation.
    pub encap: Encap,
    /// Destination MAC address.
    pub dst_mac: [u8; 6],
    /// Source MAC address.
    pub src_mac: [u8; 6],
    /// VLAN id, if the frame had an 802.1Q tag.
    pub vlan: Option<u16>,
    /// Source IP address and UDP port (UDP encapsulations only).
    pub src: Option<SocketAddr>,
    /// Destination IP address and UDP port (UDP encapsulations only).
    pub dst: Option<SocketAddr>,
    /// Where the NDN bytes are in the frame (trailing Ethernet padding excluded
    /// for IP; for bare Ethernet the rest of the frame, padding included).
    pub payload: Range<usize>,
}

/// Parses a frame; `None` if it is not NDN-carrying Ethernet/IP/UDP as
/// described above, truncated, an IPv4 fragment, or inconsistent.
/// Never panics. `frame` may be just the first segment of a multi-buffer
/// packet as long as it holds the headers; `total_len` is the whole length.
///
/// This is [`walk`] with [`Rules::STRICT`] on an Ethernet frame, any [`Stop`] being `None`.
pub fn parse(frame: &[u8], total_len: usize) -> Option<Parsed> {
    let l = layers::walk_with(frame, total_len, Link::Ethernet, &Rules::STRICT).ok()?;
    let macs = l.macs?;
    // Built per branch: one intermediate (encap, Option, Option) costs ~30 instructions a
    // packet (callgrind) in the copy into `Parsed`.
    let (encap, src, dst) = match l.carrier {
        Carrier::Ether => {
            return Some(Parsed {
                encap: Encap::Ether,
                dst_mac: macs.dst,
                src_mac: macs.src,
                vlan: l.vlan,
                src: None,
                dst: None,
                payload: l.payload,
            });
        }
        Carrier::Udp { src, dst } if src.is_ipv4() => (Encap::UdpV4, src, dst),
        Carrier::Udp { src, dst } => (Encap::UdpV6, src, dst),
    };
    Some(Parsed {
        encap,
        dst_mac: macs.dst,
        src_mac: macs.src,
        vlan: l.vlan,
        src: Some(src),
        dst: Some(dst),
        payload: l.payload,
    })
}

/// One's-complement sum accumulator (RFC 1071) over byte slices of any
/// alignment and length, fed piecewise, optionally while copying them
/// ([`Checksum::add_copy`]).
///
/// The bytes are summed as little-endian 64-bit words into a 128-bit accumulator (one
/// `add`/`adc` pair per 8 bytes, no byte swaps; 16-bit SIMD lanes measured slower under
/// SSE2): the one's-complement sum does not depend on the byte order it is taken in (RFC 1071, 2.B)
/// nor on the word width (2^16 = 1 mod 0xffff), so the result is swapped to network order
/// once, in [`Checksum::finish`]. A piece that
/// starts at an odd offset of the whole has its bytes in the other halves of the 16-bit
/// words: its sum is rotated by 8 bits (a multiplication by 2^8 mod 2^64 - 1, hence mod
/// 0xffff) before it is added.
#[derive(Debug, Clone, Copy, Default)]
pub struct Checksum {
    /// Sum so far, end-around carries folded in (only 0 when every byte was 0).
    sum: u64,
    /// Whether the bytes so far are an odd number.
    odd: bool,
}

/// `a + b` in one's-complement arithmetic on 64 bits (the carry wrapped around).
#[inline(always)]
fn add_carry(a: u64, b: u64) -> u64 {
    let (s, c) = a.overflowing_add(b);
    s + u64::from(c)
}

/// The 128-bit accumulator folded to 64 bits (2^64 = 1 mod 2^64 - 1).
#[inline(always)]
fn fold128(acc: u128) -> u64 {
    add_carry(acc as u64, (acc >> 64) as u64)
}

#[inline(always)]
fn le64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

/// Sum of a 32-byte block's four little-endian words.
#[inline(always)]
fn block32(b: &[u8]) -> u128 {
    u128::from(le64(&b[0..8]))
        + u128::from(le64(&b[8..16]))
        + u128::from(le64(&b[16..24]))
        + u128::from(le64(&b[24..32]))
}

/// Sum of fewer than 32 bytes: whole words, then the rest zero-padded (a trailing odd byte
/// keeps its place, the low half of its 16-bit word).
#[inline(always)]
fn tail(b: &[u8]) -> u128 {
    let mut acc = 0u128;
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        acc += u128::from(le64(w));
    }
    let r = words.remainder();
    if !r.is_empty() {
        let mut w = [0u8; 8];
        w[..r.len()].copy_from_slice(r);
        acc += u128::from(u64::from_le_bytes(w));
    }
    acc
}

/// Sum of the two 16-bit words of a big-endian 32-bit value.
#[inline(always)]
fn words32(x: u32) -> u64 {
    u64::from(x >> 16) + u64::from(x & 0xffff)
}

/// Sum of the eight 16-bit words of a big-endian 128-bit value.
#[inline(always)]
fn words128(x: u128) -> u64 {
    let w = |v: u64| (v >> 48) + (v >> 32 & 0xffff) + (v >> 16 & 0xffff) + (v & 0xffff);
    w((x >> 64) as u64) + w(x as u64)
}

impl Checksum {
    /// An empty sum.
    pub fn new() -> Self {
        Self::default()
    }

    /// The sum of an even number of bytes whose big-endian 16-bit words add up to `s`
    /// (headers summed from their field values rather than their bytes).
    #[inline]
    pub fn from_be_sum(s: u64) -> Self {
        let mut s = s;
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        Self {
            sum: u64::from((s as u16).swap_bytes()),
            odd: false,
        }
    }

    /// The folded (not complemented) 16-bit sum in network order.
    #[inline]
    fn be16(self) -> u16 {
        let mut s = (self.sum & 0xffff_ffff) + (self.sum >> 32);
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        // Summed little-endian: to network order.
        (s as u16).swap_bytes()
    }

    /// Adds the sum `s` of a piece of `len` bytes.
    #[inline(always)]
    fn fold_in(&mut self, s: u64, len: usize) {
        let s = if self.odd { s.rotate_left(8) } else { s };
        self.sum = add_carry(self.sum, s);
        self.odd ^= len & 1 == 1;
    }

    /// Adds bytes (continuing after an odd number of bytes left by the previous calls).
    #[inline]
    pub fn add(&mut self, data: &[u8]) {
        let mut acc = 0u128;
        let mut blocks = data.chunks_exact(32);
        for b in &mut blocks {
            acc += block32(b);
        }
        acc += tail(blocks.remainder());
        self.fold_in(fold128(acc), data.len());
    }

    /// Copies `src` to the start of `dst` and adds it: a payload's checksum taken on its way
    /// into a frame, not in a separate pass (LLVM turns the block copies into one `memcpy`
    /// of the piece, then sums the bytes it just brought into L1). Panics if `dst` is
    /// shorter than `src`.
    #[inline]
    pub fn add_copy(&mut self, dst: &mut [u8], src: &[u8]) {
        let dst = &mut dst[..src.len()];
        let mut acc = 0u128;
        let mut d = dst.chunks_exact_mut(32);
        let mut s = src.chunks_exact(32);
        for (d, s) in (&mut d).zip(&mut s) {
            // As arrays, the 32-byte copy is two vector moves, not a call to `memcpy`.
            let s: &[u8; 32] = s.try_into().expect("32 bytes");
            let d: &mut [u8; 32] = d.try_into().expect("32 bytes");
            *d = *s;
            acc += block32(s);
        }
        let r = s.remainder();
        d.into_remainder().copy_from_slice(r);
        acc += tail(r);
        self.fold_in(fold128(acc), src.len());
    }

    /// The folded, complemented 16-bit checksum.
    pub fn finish(self) -> u16 {
        !self.be16()
    }

    /// [`Checksum::finish`] as UDP sends it: a computed zero becomes all ones (RFC 768; zero
    /// means "no checksum" over IPv4 and is invalid over IPv6, RFC 8200).
    pub fn finish_udp(self) -> u16 {
        match self.finish() {
            0 => 0xffff,
            c => c,
        }
    }
}

/// Addresses of an outgoing UDP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpHeaders {
    /// Source MAC (our interface).
    pub src_mac: [u8; 6],
    /// Destination MAC (the next hop).
    pub dst_mac: [u8; 6],
    /// Source address and port (both v4 or both v6 with `dst`).
    pub src: SocketAddr,
    /// Destination address and port.
    pub dst: SocketAddr,
    /// IPv4 TTL / IPv6 hop limit.
    pub ttl: u8,
}

/// Why headers could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// `out` is shorter than the headers.
    #[error("header buffer too small")]
    BufferTooSmall,
    /// The payload does not fit in one IP packet.
    #[error("payload too long")]
    TooLong,
    /// Source and destination are of different IP families.
    #[error("mixed IPv4/IPv6 addresses")]
    MixedFamilies,
}

fn eth(out: &mut [u8], dst: [u8; 6], src: [u8; 6], ethertype: u16) {
    out[0..6].copy_from_slice(&dst);
    out[6..12].copy_from_slice(&src);
    out[12..14].copy_from_slice(&ethertype.to_be_bytes());
}

/// Writes Ethernet + IPv4 (or IPv6) + UDP headers for a payload given as
/// `payload` slices into `out`; returns the header length (42 or 62). The UDP
/// checksum is computed over the pseudo header, UDP header and payload.
pub fn build_udp(out: &mut [u8], h: &UdpHeaders, payload: &[&[u8]]) -> Result<usize, BuildError> {
    let plen: usize = payload.iter().map(|p| p.len()).sum();
    let (hlen, mut ck) = build_udp_header(out, h, plen)?;
    for p in payload {
        ck.add(p);
    }
    out[hlen - 2..hlen].copy_from_slice(&ck.finish_udp().to_be_bytes());
    Ok(hlen)
}

/// Writes Ethernet + IPv4 (or IPv6) + UDP headers for a payload of `plen` bytes into `out`,
/// the UDP checksum field zero; returns the header length (42 or 62) and the checksum
/// over the pseudo header and the UDP header. The caller adds the payload to it (e.g. with
/// [`Checksum::add_copy`] while copying the payload behind the headers) and writes
/// [`Checksum::finish_udp`] into the header's last two bytes: no pass over the payload of its own.
pub fn build_udp_header(
    out: &mut [u8],
    h: &UdpHeaders,
    plen: usize,
) -> Result<(usize, Checksum), BuildError> {
    let ulen = UDP_LEN + plen;
    let pseudo: u64;
    let hlen = match (h.src, h.dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => {
            let hl = ETH_LEN + IPV4_LEN + UDP_LEN;
            if out.len() < hl {
                return Err(BuildError::BufferTooSmall);
            }
            let tot = IPV4_LEN + ulen;
            let tot16 = u16::try_from(tot).map_err(|_| BuildError::TooLong)?;
            eth(out, h.dst_mac, h.src_mac, ETHERTYPE_IPV4);
            let ip = &mut out[ETH_LEN..ETH_LEN + IPV4_LEN];
            ip[0] = 0x45;
            ip[1] = 0;
            ip[2..4].copy_from_slice(&tot16.to_be_bytes());
            ip[4..6].copy_from_slice(&[0, 0]);
            ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF
            ip[8] = h.ttl;
            ip[9] = 17;
            ip[10..12].copy_from_slice(&[0, 0]);
            ip[12..16].copy_from_slice(&s.ip().octets());
            ip[16..20].copy_from_slice(&d.ip().octets());
            // Sums of the 16-bit words, taken on the values (no pass over the bytes).
            let addrs = words32(s.ip().to_bits()) + words32(d.ip().to_bits());
            let ipsum = 0x4500 + u64::from(tot16) + 0x4000 + (u64::from(h.ttl) << 8 | 17) + addrs;
            let c = !Checksum::from_be_sum(ipsum).be16();
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            pseudo = addrs + 17 + ulen as u64;
            hl
        }
        (SocketAddr::V6(s), SocketAddr::V6(d)) => {
            let hl = ETH_LEN + IPV6_LEN + UDP_LEN;
            if out.len() < hl {
                return Err(BuildError::BufferTooSmall);
            }
            let ulen32 = u32::try_from(ulen).map_err(|_| BuildError::TooLong)?;
            let ulen16 = u16::try_from(ulen).map_err(|_| BuildError::TooLong)?;
            eth(out, h.dst_mac, h.src_mac, ETHERTYPE_IPV6);
            let ip = &mut out[ETH_LEN..ETH_LEN + IPV6_LEN];
            ip[0..4].copy_from_slice(&0x6000_0000u32.to_be_bytes());
            ip[4..6].copy_from_slice(&ulen16.to_be_bytes());
            ip[6] = 17;
            ip[7] = h.ttl;
            ip[8..24].copy_from_slice(&s.ip().octets());
            ip[24..40].copy_from_slice(&d.ip().octets());
            pseudo = words128(s.ip().to_bits()) + words128(d.ip().to_bits()) + words32(ulen32) + 17;
            hl
        }
        _ => return Err(BuildError::MixedFamilies),
    };
    let u = hlen - UDP_LEN;
    let udp = &mut out[u..hlen];
    udp[0..2].copy_from_slice(&h.src.port().to_be_bytes());
    udp[2..4].copy_from_slice(&h.dst.port().to_be_bytes());
    udp[4..6].copy_from_slice(&(ulen as u16).to_be_bytes());
    udp[6..8].copy_from_slice(&[0, 0]);
    let udp_sum = u64::from(h.src.port()) + u64::from(h.dst.port()) + ulen as u64;
    Ok((hlen, Checksum::from_be_sum(pseudo + udp_sum)))
}

/// Writes a bare NDN Ethernet header (EtherType 0x8624); returns 14.
pub fn build_ether(
    out: &mut [u8],
    dst_mac: [u8; 6],
    src_mac: [u8; 6],
) -> Result<usize, BuildError> {
    if out.len() < ETH_LEN {
        return Err(BuildError::BufferTooSmall);
    }
    eth(out, dst_mac, src_mac, ETHERTYPE_NDN);
    Ok(ETH_LEN)
}

/// Offset of the IP header in a parsed frame.
fn l3_start(p: &Parsed) -> usize {
    ETH_LEN + p.vlan.map_or(0, |_| 4)
}

/// Verifies the IPv4 header checksum and the UDP checksum of a parsed UDP frame
/// (`frame` must be the whole packet). A zero UDP checksum counts as valid over IPv4
/// ("none", RFC 768) and invalid over IPv6 (RFC 8200, 8.1).
pub fn checksums_ok(frame: &[u8], p: &Parsed) -> bool {
    let Some((src, dst)) = p.src.zip(p.dst) else {
        return true;
    };
    let u = p.payload.start - UDP_LEN;
    let Some(udp) = frame.get(u..p.payload.end) else {
        return false;
    };
    let mut ck = Checksum::new();
    match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let ip_start = l3_start(p);
            let mut ipck = Checksum::new();
            ipck.add(&frame[ip_start..u]);
            if ipck.finish() != 0 {
                return false;
            }
            if udp[6..8] == [0, 0] {
                return true;
            }
            ck.add(&s.octets());
            ck.add(&d.octets());
            ck.add(&[0, 17]);
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            if udp[6..8] == [0, 0] {
                return false;
            }
            ck.add(&s.octets());
            ck.add(&d.octets());
            ck.add(&[0, 17]);
        }
        _ => return false,
    }
    ck.add(&(udp.len() as u16).to_be_bytes());
    ck.add(udp);
    ck.finish() == 0
}

/// Turns a received UDP frame around in place: swaps MACs, IP addresses and
/// UDP ports. Checksums stay valid (every swapped field is covered by a sum
/// that is order-independent). `frame` may be the first segment of a longer
/// packet of `total_len` bytes. Returns false (MACs still swapped) if the
/// frame is not UDP/IP.
pub fn swap_in_place(frame: &mut [u8], total_len: usize) -> bool {
    if frame.len() < ETH_LEN {
        return false;
    }
    let (d, s) = frame.split_at_mut(6);
    d.swap_with_slice(&mut s[..6]);
    let Some(p) = parse(frame, total_len) else {
        return false;
    };
    let u = p.payload.start - UDP_LEN;
    let (a, alen) = match p.encap {
        Encap::UdpV4 => (l3_start(&p) + 12, 4),
        Encap::UdpV6 => (l3_start(&p) + 8, 16),
        Encap::Ether => return false,
    };
    let (x, y) = frame[a..a + 2 * alen].split_at_mut(alen);
    x.swap_with_slice(y);
    let (x, y) = frame[u..u + 4].split_at_mut(2);
    x.swap_with_slice(y);
    true
}

#[cfg(test)]
mod tests {
    use super::Checksum;

    /// RFC 1071 the plain way: 16-bit big-endian words, a trailing odd byte padded.
    fn reference(data: &[u8]) -> u16 {
        let mut s: u64 = data
            .chunks(2)
            .map(|c| u64::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
            .sum();
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn checksum_matches_the_reference_for_any_length_and_split() {
        let data: Vec<u8> = (0..300u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 0x80)
            .collect();
        for len in 0..data.len() {
            let d = &data[..len];
            for cut in [0, 1, 3, 7, 8, 9, len / 2, len] {
                let cut = cut.min(len);
                let mut ck = Checksum::new();
                ck.add(&d[..cut]);
                ck.add(&d[cut..]);
                assert_eq!(ck.finish(), reference(d), "len {len} cut {cut}");
            }
        }
        let mut ck = Checksum::new();
        ck.add(&[0xff; 9000]);
        assert_eq!(ck.finish(), reference(&[0xff; 9000]));
    }
}
