//! Wire codec: vectors, round trips, and checksums against a reference.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use ndx_afxdp::wire::{self, Encap, UdpHeaders};
use proptest::prelude::*;

/// Straightforward RFC 1071 reference: concatenate, pad, sum 16-bit words.
fn reference_sum(parts: &[&[u8]]) -> u16 {
    let mut all: Vec<u8> = parts.concat();
    if all.len() % 2 == 1 {
        all.push(0);
    }
    let mut s: u32 = 0;
    for w in all.chunks(2) {
        s += u32::from(w[0]) << 8 | u32::from(w[1]);
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn reference_udp_checksum(frame: &[u8], v6: bool) -> u16 {
    // Recompute over a copy with the checksum field zeroed.
    let (ip, udp_at) = if v6 { (14, 54) } else { (14, 34) };
    let mut f = frame.to_vec();
    f[udp_at + 6] = 0;
    f[udp_at + 7] = 0;
    let udp = &f[udp_at..];
    let len = (udp.len() as u32).to_be_bytes();
    let c = if v6 {
        reference_sum(&[&f[ip + 8..ip + 40], &len, &[0, 0, 0, 17], udp])
    } else {
        reference_sum(&[&f[ip + 12..ip + 20], &[0, 17], &len[2..], udp])
    };
    if c == 0 { 0xffff } else { c }
}

fn v4h() -> UdpHeaders {
    UdpHeaders {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: [2, 0, 0, 0, 0, 2],
        src: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 1), 6363)),
        dst: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(198, 51, 100, 7), 56000)),
        ttl: 64,
    }
}

fn v6h() -> UdpHeaders {
    UdpHeaders {
        src: SocketAddr::V6(SocketAddrV6::new(
            "2001:db8::1".parse::<Ipv6Addr>().unwrap(),
            6363,
            0,
            0,
        )),
        dst: SocketAddr::V6(SocketAddrV6::new(
            "2001:db8::2".parse::<Ipv6Addr>().unwrap(),
            6363,
            0,
            0,
        )),
        ..v4h()
    }
}

/// `payload` cut at the (sorted) positions `cuts` pick: one part more than cuts, empty
/// parts included.
fn split_at<'a>(payload: &'a [u8], cuts: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut idx: Vec<usize> = cuts.iter().map(|c| c.index(payload.len() + 1)).collect();
    idx.sort_unstable();
    let mut parts = Vec::new();
    let mut last = 0;
    for i in idx {
        parts.push(&payload[last..i]);
        last = i;
    }
    parts.push(&payload[last..]);
    parts
}

fn frame_of(h: &UdpHeaders, parts: &[&[u8]]) -> Vec<u8> {
    let mut hdr = [0u8; 62];
    let n = wire::build_udp(&mut hdr, h, parts).unwrap();
    let mut f = hdr[..n].to_vec();
    for p in parts {
        f.extend_from_slice(p);
    }
    f
}

/// An IPv4/UDP frame computed independently (Python, RFC 1071):
/// 10.0.0.1:5000 -> 10.0.0.2:6363, DF, TTL 64, payload "hi".
const V4_VECTOR: &str = "02000000000202000000000108004500001e00004000401126cd\
0a0000010a000002138818db000a570b6869";

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn parses_ipv4_vector() {
    let f = hex(V4_VECTOR);
    let p = wire::parse(&f, f.len()).unwrap();
    assert_eq!(p.encap, Encap::UdpV4);
    assert_eq!(p.src.unwrap(), "10.0.0.1:5000".parse().unwrap());
    assert_eq!(p.dst.unwrap(), "10.0.0.2:6363".parse().unwrap());
    assert_eq!(p.src_mac, [2, 0, 0, 0, 0, 1]);
    assert_eq!(&f[p.payload.clone()], b"hi");
}

#[test]
fn builds_known_ipv4_header_checksum() {
    // Same addresses as the vector: the IPv4 header must match byte for byte
    // except the ID/flags we choose (DF, id 0 — same as the vector).
    let h = UdpHeaders {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: [2, 0, 0, 0, 0, 2],
        src: "10.0.0.1:5000".parse().unwrap(),
        dst: "10.0.0.2:6363".parse().unwrap(),
        ttl: 64,
    };
    let f = frame_of(&h, &[b"hi"]);
    let v = hex(V4_VECTOR);
    assert_eq!(f, v);
    assert_eq!(
        reference_udp_checksum(&f, false),
        u16::from_be_bytes([f[40], f[41]])
    );
}

#[test]
fn vlan_and_ether_and_rejects() {
    let mut f = frame_of(&v4h(), &[b"abc"]);
    // Insert a VLAN tag 0x8100 / vid 42.
    let mut tagged = f[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 42]);
    tagged.extend_from_slice(&f[12..]);
    let p = wire::parse(&tagged, tagged.len()).unwrap();
    assert_eq!(p.vlan, Some(42));
    assert_eq!(&tagged[p.payload.clone()], b"abc");
    assert!(wire::checksums_ok(&tagged, &p));

    let mut e = [0u8; 14];
    wire::build_ether(&mut e, [1, 0, 0x5e, 0, 0x17, 0xaa], [2, 0, 0, 0, 0, 1]).unwrap();
    let mut ef = e.to_vec();
    ef.extend_from_slice(&[5, 1, 0]);
    let p = wire::parse(&ef, ef.len()).unwrap();
    assert_eq!(p.encap, Encap::Ether);
    assert_eq!(p.payload, 14..17);

    // TCP, truncated, fragment, bad IHL: rejected.
    f[23] = 6;
    assert!(wire::parse(&f, f.len()).is_none());
    f[23] = 17;
    assert!(wire::parse(&f[..40], 40).is_none());
    f[20] = 0x20; // MF
    assert!(wire::parse(&f, f.len()).is_none());
    f[20] = 0x40;
    f[14] = 0x44;
    assert!(wire::parse(&f, f.len()).is_none());
}

#[test]
fn ipv4_options_are_skipped() {
    let f = frame_of(&v4h(), &[b"xyz"]);
    // Rebuild with IHL 6 (4 bytes of NOP options), fixing lengths and checksum.
    let mut g = f[..34].to_vec();
    g.extend_from_slice(&[1, 1, 1, 1]);
    g.extend_from_slice(&f[34..]);
    g[14] = 0x46;
    let tot = u16::from_be_bytes([g[16], g[17]]) + 4;
    g[16..18].copy_from_slice(&tot.to_be_bytes());
    g[24] = 0;
    g[25] = 0;
    let c = reference_sum(&[&g[14..38]]);
    g[24..26].copy_from_slice(&c.to_be_bytes());
    let p = wire::parse(&g, g.len()).unwrap();
    assert_eq!(&g[p.payload.clone()], b"xyz");
    assert!(wire::checksums_ok(&g, &p));
}

#[test]
fn swap_turns_frame_around_keeping_checksums() {
    for h in [v4h(), v6h()] {
        let mut f = frame_of(&h, &[b"hello ndn"]);
        let n = f.len();
        assert!(wire::swap_in_place(&mut f, n));
        let p = wire::parse(&f, f.len()).unwrap();
        assert_eq!(p.src.unwrap(), h.dst);
        assert_eq!(p.dst.unwrap(), h.src);
        assert_eq!(p.src_mac, h.dst_mac);
        assert!(wire::checksums_ok(&f, &p));
    }
}

#[test]
fn padding_is_excluded_from_ip_payload() {
    let mut f = frame_of(&v4h(), &[b"a"]);
    f.resize(60, 0);
    let p = wire::parse(&f, f.len()).unwrap();
    assert_eq!(&f[p.payload.clone()], b"a");
}

#[test]
fn buffer_errors() {
    let mut small = [0u8; 41];
    assert_eq!(
        wire::build_udp(&mut small, &v4h(), &[]),
        Err(wire::BuildError::BufferTooSmall)
    );
    let mixed = UdpHeaders {
        dst: v6h().dst,
        ..v4h()
    };
    let mut b = [0u8; 62];
    assert_eq!(
        wire::build_udp(&mut b, &mixed, &[]),
        Err(wire::BuildError::MixedFamilies)
    );
    let big = vec![0u8; 70_000];
    assert_eq!(
        wire::build_udp(&mut b, &v4h(), &[&big]),
        Err(wire::BuildError::TooLong)
    );
}

/// `build_udp_header` + `Checksum::add_copy` into a frame, as `Endpoint::push_tx_udp` does.
fn fused_frame_of(h: &UdpHeaders, parts: &[&[u8]], shift: usize) -> Vec<u8> {
    let plen: usize = parts.iter().map(|p| p.len()).sum();
    // `shift` bytes of slack in front move the frame's alignment.
    let mut buf = vec![0xa5u8; shift + 62 + plen];
    let (n, mut sum) = wire::build_udp_header(&mut buf[shift..], h, plen).unwrap();
    let mut at = shift + n;
    for p in parts {
        sum.add_copy(&mut buf[at..], p);
        at += p.len();
    }
    buf[shift + n - 2..shift + n].copy_from_slice(&sum.finish_udp().to_be_bytes());
    buf.truncate(at);
    buf.split_off(shift)
}

/// Payload bytes (`body`, of even length, then two adjustable bytes) whose UDP checksum
/// computes to zero under `h`.
fn zero_sum_payload(h: &UdpHeaders, body: &[u8]) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&[0, 0]);
    let f = frame_of(h, &[&p]);
    let at = if h.src.is_ipv6() { 60 } else { 40 };
    let mut f0 = f.clone();
    f0[at..at + 2].copy_from_slice(&[0, 0]);
    // With the field zero, the sum is !c; adding the word c makes it 0xffff, whose
    // complement is 0.
    let c = reference_udp_checksum(&f0, h.src.is_ipv6());
    let n = p.len();
    p[n - 2..].copy_from_slice(&c.to_be_bytes());
    p
}

#[test]
fn a_zero_udp_checksum_is_sent_as_all_ones_over_both_families() {
    for h in [v4h(), v6h()] {
        for body in [&b""[..], b"ndn!", &[0xffu8; 64][..]] {
            let p = zero_sum_payload(&h, body);
            let at = if h.src.is_ipv6() { 60 } else { 40 };
            for f in [
                frame_of(&h, &[&p]),
                fused_frame_of(&h, &[&p[..1], &p[1..]], 3),
            ] {
                assert_eq!(f[at..at + 2], [0xff, 0xff], "{h:?} {body:?}");
                let parsed = wire::parse(&f, f.len()).unwrap();
                assert!(wire::checksums_ok(&f, &parsed));
                // Zero on the wire: "no checksum" over IPv4, invalid over IPv6.
                let mut z = f.clone();
                z[at..at + 2].copy_from_slice(&[0, 0]);
                assert_eq!(wire::checksums_ok(&z, &parsed), !h.src.is_ipv6());
            }
        }
    }
}

proptest! {
    /// `add_copy` copies exactly and sums like `add` and like RFC 1071 done plainly, for any
    /// lengths, source and destination alignments and splits, mixed with plain `add`s.
    #[test]
    fn add_copy_copies_and_sums_like_the_reference(
        data in proptest::collection::vec(any::<u8>(), 0..2100),
        src_shift in 0usize..8,
        dst_shift in 0usize..8,
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        plain in any::<u8>(),
    ) {
        let src = &data[src_shift.min(data.len())..];
        let mut idx: Vec<usize> = cuts.iter().map(|c| c.index(src.len() + 1)).collect();
        idx.sort_unstable();
        idx.push(src.len());
        let mut dst = vec![0u8; dst_shift + src.len()];
        let (mut fused, mut added) = (wire::Checksum::new(), wire::Checksum::new());
        let mut last = 0;
        for (k, i) in idx.into_iter().enumerate() {
            let piece = &src[last..i];
            added.add(piece);
            if plain >> (k % 8) & 1 == 1 {
                fused.add(piece);
                dst[dst_shift + last..dst_shift + i].copy_from_slice(piece);
            } else {
                fused.add_copy(&mut dst[dst_shift + last..], piece);
            }
            last = i;
        }
        prop_assert_eq!(&dst[dst_shift..], src);
        let want = reference_sum(&[src]);
        prop_assert_eq!(fused.finish(), want);
        prop_assert_eq!(added.finish(), want);
        prop_assert_eq!(fused.finish_udp(), if want == 0 { 0xffff } else { want });
    }

    /// A frame built with the checksum summed during the copy is byte for byte the one
    /// `build_udp` makes, over IPv4 and IPv6, any payload split and frame alignment.
    #[test]
    fn fused_frames_equal_built_frames(
        payload in proptest::collection::vec(any::<u8>(), 0..2100),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
        shift in 0usize..8,
        v6 in any::<bool>(),
    ) {
        let parts = split_at(&payload, &cuts);
        let h = if v6 { v6h() } else { v4h() };
        let f = fused_frame_of(&h, &parts, shift);
        prop_assert_eq!(&f, &frame_of(&h, &parts));
        let p = wire::parse(&f, f.len()).unwrap();
        prop_assert!(wire::checksums_ok(&f, &p));
    }

    #[test]
    fn checksum_matches_reference_over_any_split(
        payload in proptest::collection::vec(any::<u8>(), 0..3000),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
        v6 in any::<bool>(),
    ) {
        let parts = split_at(&payload, &cuts);
        let h = if v6 { v6h() } else { v4h() };
        let f = frame_of(&h, &parts);
        let at = if v6 { 60 } else { 40 };
        prop_assert_eq!(u16::from_be_bytes([f[at], f[at + 1]]), reference_udp_checksum(&f, v6));
        if !v6 {
            prop_assert_eq!(reference_sum(&[&f[14..34]]), 0);
        }
        let p = wire::parse(&f, f.len()).unwrap();
        prop_assert!(wire::checksums_ok(&f, &p));
        prop_assert_eq!(&f[p.payload.clone()], &payload[..]);
        prop_assert_eq!(p.encap, if v6 { Encap::UdpV6 } else { Encap::UdpV4 });
    }

    #[test]
    fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), extra in 0usize..100) {
        let _ = wire::parse(&bytes, bytes.len() + extra);
        let mut b = bytes.clone();
        let _ = wire::swap_in_place(&mut b, extra);
    }

    #[test]
    fn corrupting_a_byte_breaks_a_checksum(payload in proptest::collection::vec(any::<u8>(), 1..500), pos in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let mut f = frame_of(&v4h(), &[&payload]);
        let i = 14 + pos.index(f.len() - 14);
        // Skip bytes whose change parse() itself rejects or that are length fields.
        f[i] ^= flip;
        // (A zeroed IPv4 UDP checksum means "none" and is valid by definition.)
        if let Some(p) = wire::parse(&f, f.len()).filter(|p| p.payload.len() == payload.len() && f[40..42] != [0, 0]) {
            prop_assert!(!wire::checksums_ok(&f, &p));
        }
    }
}
