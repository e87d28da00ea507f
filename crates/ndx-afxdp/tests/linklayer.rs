//! The shared link-layer walker (`wire::walk`): the router's strict rules and the captures'
//! lenient rules on the same frames, precise errors, and `wire::parse` checked bit for bit
//! against a frozen copy of the parser it replaced, on generated and mutated frames.

use std::net::SocketAddr;

use ndx_afxdp::wire::{
    self, Carrier, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_NDN, ETHERTYPE_QINQ, ETHERTYPE_VLAN,
    Encap, Header, Layers, Link, Malformed, Rules, Skip, Stop,
};
use proptest::prelude::*;

/// The router's parser as it was before the walker (frozen: the oracle for "bit for bit").
mod before {
    use ndx_afxdp::wire::{self, ETH_LEN, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_NDN};
    use ndx_afxdp::wire::{ETHERTYPE_VLAN, Encap, IPV4_LEN, IPV6_LEN, UDP_LEN};
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    use std::ops::Range;

    fn be16(b: &[u8], at: usize) -> Option<u16> {
        Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
    }

    fn mac(b: &[u8], at: usize) -> Option<[u8; 6]> {
        b.get(at..at + 6)?.try_into().ok()
    }

    pub(crate) fn parse(frame: &[u8], total_len: usize) -> Option<wire::Parsed> {
        let dst_mac = mac(frame, 0)?;
        let src_mac = mac(frame, 6)?;
        let mut ethertype = be16(frame, 12)?;
        let mut off = ETH_LEN;
        let mut vlan = None;
        if ethertype == ETHERTYPE_VLAN {
            vlan = Some(be16(frame, 14)? & 0x0fff);
            ethertype = be16(frame, 16)?;
            off += 4;
        }
        let total_len = total_len.max(frame.len());
        match ethertype {
            ETHERTYPE_NDN => Some(wire::Parsed {
                encap: Encap::Ether,
                dst_mac,
                src_mac,
                vlan,
                src: None,
                dst: None,
                payload: off..total_len,
            }),
            ETHERTYPE_IPV4 => {
                let ip = frame.get(off..off + IPV4_LEN)?;
                if ip[0] >> 4 != 4 {
                    return None;
                }
                let ihl = usize::from(ip[0] & 0x0f) * 4;
                let tot = usize::from(be16(ip, 2)?);
                let frag = be16(ip, 6)?;
                if ihl < IPV4_LEN || tot < ihl + UDP_LEN || off + tot > total_len || ip[9] != 17 {
                    return None;
                }
                if frag & 0x3fff != 0 {
                    return None; // fragment: MF set or non-zero offset
                }
                let s = Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]);
                let d = Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]);
                let u = off + ihl;
                udp(frame, u, off + tot, IpAddr::V4(s), IpAddr::V4(d)).map(|(src, dst, payload)| {
                    wire::Parsed {
                        encap: Encap::UdpV4,
                        dst_mac,
                        src_mac,
                        vlan,
                        src: Some(src),
                        dst: Some(dst),
                        payload,
                    }
                })
            }
            ETHERTYPE_IPV6 => {
                let ip = frame.get(off..off + IPV6_LEN)?;
                if ip[0] >> 4 != 6 || ip[6] != 17 {
                    return None;
                }
                let plen = usize::from(be16(ip, 4)?);
                let end = off + IPV6_LEN + plen;
                if end > total_len {
                    return None;
                }
                let s: [u8; 16] = ip[8..24].try_into().ok()?;
                let d: [u8; 16] = ip[24..40].try_into().ok()?;
                let (s, d) = (IpAddr::V6(Ipv6Addr::from(s)), IpAddr::V6(Ipv6Addr::from(d)));
                udp(frame, off + IPV6_LEN, end, s, d).map(|(src, dst, payload)| wire::Parsed {
                    encap: Encap::UdpV6,
                    dst_mac,
                    src_mac,
                    vlan,
                    src: Some(src),
                    dst: Some(dst),
                    payload,
                })
            }
            _ => None,
        }
    }

    fn udp(
        frame: &[u8],
        at: usize,
        ip_end: usize,
        s: IpAddr,
        d: IpAddr,
    ) -> Option<(SocketAddr, SocketAddr, Range<usize>)> {
        let sport = be16(frame, at)?;
        let dport = be16(frame, at + 2)?;
        let ulen = usize::from(be16(frame, at + 4)?);
        if ulen < UDP_LEN || at + ulen > ip_end {
            return None;
        }
        Some((
            SocketAddr::new(s, sport),
            SocketAddr::new(d, dport),
            at + UDP_LEN..at + ulen,
        ))
    }
}

/// One frame's recipe: link headers, IP and UDP fields that may disagree, a payload.
#[derive(Debug, Clone)]
struct Recipe {
    tags: Vec<(bool, u16)>,
    l3: u8,
    ihl: u8,
    tot_delta: i16,
    frag: u16,
    proto: u8,
    ext: Vec<u8>,
    ulen_delta: i16,
    payload: Vec<u8>,
    pad: usize,
}

fn recipe() -> impl Strategy<Value = Recipe> {
    // Weighted towards frames that parse, with near misses around every check.
    (
        prop_oneof![
            3 => Just(vec![]),
            1 => proptest::collection::vec((any::<bool>(), any::<u16>()), 1..3),
        ],
        prop_oneof![3 => Just(0u8), 3 => Just(1), 1 => Just(2), 1 => Just(3)],
        prop_oneof![3 => Just(5u8), 1 => 0u8..16],
        prop_oneof![4 => Just(0i16), 1 => Just(1), 1 => Just(-1), 1 => -30i16..30],
        prop_oneof![Just(0u16), Just(0x4000), Just(0x2000), Just(1), any::<u16>()],
        prop_oneof![6 => Just(17u8), 1 => Just(6), 1 => Just(0), 1 => Just(44)],
        prop_oneof![
            3 => Just(vec![]),
            1 => proptest::collection::vec(prop_oneof![Just(0u8), Just(43), Just(60), Just(44)], 1..3),
        ],
        prop_oneof![4 => Just(0i16), 1 => Just(1), 1 => Just(-1), 1 => -10i16..10],
        prop_oneof![1 => Just(vec![]), 4 => proptest::collection::vec(any::<u8>(), 1..64)],
        prop_oneof![Just(0usize), 0usize..20],
    )
        .prop_map(
            |(tags, l3, ihl, tot_delta, frag, proto, ext, ulen_delta, payload, pad)| Recipe {
                tags,
                l3,
                ihl,
                tot_delta,
                frag,
                proto,
                ext,
                ulen_delta,
                payload,
                pad,
            },
        )
}

fn adj(v: usize, d: i16) -> u16 {
    (v as i64 + i64::from(d)).clamp(0, 0xffff) as u16
}

/// Builds an Ethernet frame from a recipe (header fields deliberately unchecked).
fn build(r: &Recipe) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    for (qinq, tci) in &r.tags {
        let t = if *qinq {
            ETHERTYPE_QINQ
        } else {
            ETHERTYPE_VLAN
        };
        f.extend(t.to_be_bytes());
        f.extend(tci.to_be_bytes());
    }
    let et = [ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_NDN, 0x0806][usize::from(r.l3)];
    f.extend(et.to_be_bytes());
    let ulen = adj(UDP + r.payload.len(), r.ulen_delta);
    let mut udp = vec![0xd6, 0xd8, 0x18, 0xdb];
    udp.extend(ulen.to_be_bytes());
    udp.extend([0, 0]);
    udp.extend(&r.payload);
    match et {
        ETHERTYPE_IPV4 => {
            let ihl = usize::from(r.ihl & 0x0f) * 4;
            let tot = adj(ihl.max(20) + udp.len(), r.tot_delta);
            f.extend([0x40 | (r.ihl & 0x0f), 0]);
            f.extend(tot.to_be_bytes());
            f.extend([0, 0]);
            f.extend(r.frag.to_be_bytes());
            f.extend([64, r.proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
            f.extend(std::iter::repeat_n(1, ihl.saturating_sub(20)));
        }
        ETHERTYPE_IPV6 => {
            let mut exts = Vec::new();
            let mut next = r.ext.first().copied().unwrap_or(r.proto);
            for (i, e) in r.ext.iter().enumerate() {
                let after = r.ext.get(i + 1).copied().unwrap_or(r.proto);
                if *e == 44 {
                    exts.extend([after, 0]);
                    exts.extend((r.frag & 0xfff9).to_be_bytes());
                    exts.extend([0, 0, 0, 1]);
                } else {
                    exts.extend([after, 0, 1, 4, 0, 0, 0, 0]);
                }
            }
            if r.ext.is_empty() {
                next = r.proto;
            }
            let plen = adj(exts.len() + udp.len(), r.tot_delta);
            f.extend([0x60, 0, 0, 0]);
            f.extend(plen.to_be_bytes());
            f.extend([next, 64]);
            f.extend([0x20, 0x01, 0x0d, 0xb8]);
            f.extend([0; 11]);
            f.push(1);
            f.extend([0x20, 0x01, 0x0d, 0xb8]);
            f.extend([0; 11]);
            f.push(2);
            f.extend(exts);
        }
        _ => {}
    }
    if et != ETHERTYPE_NDN {
        f.extend(&udp);
    } else {
        f.extend(&r.payload);
    }
    f.extend(std::iter::repeat_n(0, r.pad));
    f
}

const UDP: usize = 8;

fn lenient(f: &[u8]) -> Result<Layers, Stop> {
    wire::walk(f, f.len(), Link::Ethernet, &Rules::LENIENT)
}

fn strict(f: &[u8]) -> Result<Layers, Stop> {
    wire::walk(f, f.len(), Link::Ethernet, &Rules::STRICT)
}

/// The recipe of a plain IPv4/UDP frame (no tag, no options, DF) carrying `payload`.
fn plain_recipe(payload: &[u8]) -> Recipe {
    Recipe {
        tags: vec![],
        l3: 0,
        ihl: 5,
        tot_delta: 0,
        frag: 0x4000,
        proto: 17,
        ext: vec![],
        ulen_delta: 0,
        payload: payload.to_vec(),
        pad: 0,
    }
}

fn plain_udp4(payload: &[u8]) -> Vec<u8> {
    build(&plain_recipe(payload))
}

#[test]
fn both_rules_agree_on_a_plain_frame() {
    let f = plain_udp4(b"ndn");
    let (s, l) = (strict(&f).unwrap(), lenient(&f).unwrap());
    assert_eq!(s, l);
    assert_eq!(&f[s.payload.clone()], b"ndn");
    assert_eq!(s.l3, 14);
    assert!(!s.truncated);
    let want: (SocketAddr, SocketAddr) = (
        "10.0.0.1:55000".parse().unwrap(),
        "10.0.0.2:6363".parse().unwrap(),
    );
    assert_eq!(
        s.carrier,
        Carrier::Udp {
            src: want.0,
            dst: want.1
        }
    );
}

#[test]
fn vlan_tags_one_for_the_router_any_for_captures() {
    let mut r = Recipe {
        tags: vec![(false, 0x2005), (false, 7)],
        ..plain_recipe(b"ndn")
    };
    let f = build(&r);
    assert_eq!(
        strict(&f),
        Err(Stop::Skipped(Skip::EtherType(ETHERTYPE_VLAN)))
    );
    let l = lenient(&f).unwrap();
    assert_eq!((l.vlan, l.vlan_tags, l.l3), (Some(5), 2, 22));
    assert!(wire::parse(&f, f.len()).is_none());
    // 802.1ad outer tag: captures only.
    r.tags = vec![(true, 9)];
    let f = build(&r);
    assert_eq!(
        strict(&f),
        Err(Stop::Skipped(Skip::EtherType(ETHERTYPE_QINQ)))
    );
    assert_eq!(lenient(&f).unwrap().vlan, Some(9));
    // One 802.1Q tag: both.
    r.tags = vec![(false, 42)];
    let f = build(&r);
    assert_eq!(strict(&f).unwrap(), lenient(&f).unwrap());
    assert_eq!(wire::parse(&f, f.len()).unwrap().vlan, Some(42));
    // A tag cut off: an error at the tag's offset.
    assert_eq!(
        lenient(&f[..16]),
        Err(Stop::Malformed(Malformed {
            header: Header::Vlan,
            offset: 14
        }))
    );
}

#[test]
fn fragments_extension_headers_and_lengths() {
    let base = plain_recipe(b"ndn");
    // IPv4 first fragment (MF): captures only; a later fragment: neither.
    let f = build(&Recipe {
        frag: 0x2000,
        ..base.clone()
    });
    assert_eq!(strict(&f), Err(Stop::Skipped(Skip::Fragment)));
    assert!(lenient(&f).is_ok());
    let f = build(&Recipe {
        frag: 0x0010,
        ..base.clone()
    });
    assert_eq!(lenient(&f), Err(Stop::Skipped(Skip::Fragment)));
    // IPv6 hop-by-hop then UDP: captures only.
    let f = build(&Recipe {
        l3: 1,
        ext: vec![0],
        ..base.clone()
    });
    assert_eq!(strict(&f), Err(Stop::Skipped(Skip::Protocol(0))));
    let l = lenient(&f).unwrap();
    assert_eq!(&f[l.payload], b"ndn");
    // UDP length past the IP length: the router refuses, captures clamp to the IP packet.
    let f = build(&Recipe {
        ulen_delta: 4,
        ..base.clone()
    });
    assert_eq!(
        strict(&f),
        Err(Stop::Skipped(Skip::Inconsistent(Header::Udp)))
    );
    assert_eq!(&f[lenient(&f).unwrap().payload], b"ndn");
    // IP total length below IHL + 8: the router refuses.
    let f = build(&Recipe {
        tot_delta: -9,
        ..base.clone()
    });
    assert_eq!(
        strict(&f),
        Err(Stop::Skipped(Skip::Inconsistent(Header::Ipv4)))
    );
    // Cut short (a snap length): the router refuses, captures say truncated.
    let f = build(&base);
    let cut = &f[..f.len() - 1];
    assert_eq!(
        wire::walk(cut, cut.len(), Link::Ethernet, &Rules::STRICT),
        Err(Stop::Skipped(Skip::CutShort))
    );
    let l = wire::walk(cut, f.len(), Link::Ethernet, &Rules::LENIENT).unwrap();
    assert!(l.truncated);
    assert_eq!(l.payload, 42..45);
    // ...but a first segment of a longer packet is fine for the router.
    let l = wire::walk(cut, f.len(), Link::Ethernet, &Rules::STRICT).unwrap();
    assert!(l.truncated);
}

#[test]
fn malformed_headers_say_which_and_where() {
    let f = plain_udp4(b"ndn");
    let m = |header, offset| Err(Stop::Malformed(Malformed { header, offset }));
    assert_eq!(lenient(&f[..13]), m(Header::Ethernet, 0));
    let mut bad = f.clone();
    bad[14] = 0x55; // IPv5
    assert_eq!(lenient(&bad), m(Header::Ipv4, 14));
    assert_eq!(strict(&bad), m(Header::Ipv4, 14));
    let mut bad = f.clone();
    bad[14] = 0x44; // IHL 4
    assert_eq!(lenient(&bad), m(Header::Ipv4, 14));
    assert_eq!(strict(&bad), m(Header::Ipv4, 14));
    // An empty datagram (UDP length 8) is fine; 7 is not.
    let empty = plain_udp4(b"");
    assert_eq!(strict(&empty).unwrap().payload, 42..42);
    let mut bad = empty.clone();
    bad[38..40].copy_from_slice(&[0, 7]);
    assert_eq!(strict(&bad), m(Header::Udp, 34));
    assert!(wire::parse(&bad, bad.len()).is_none());
    let mut bad = f.clone();
    bad[38..40].copy_from_slice(&[0, 7]); // UDP length 7
    assert_eq!(lenient(&bad), m(Header::Udp, 34));
    assert_eq!(lenient(&f[..37]), m(Header::Udp, 34));
    let e = Malformed {
        header: Header::Ipv6,
        offset: 18,
    };
    assert_eq!(e.to_string(), "malformed IPv6 header at frame offset 18");
    assert_eq!(
        Stop::from(Skip::EtherType(0x0806)).to_string(),
        "not NDN: EtherType 0x0806"
    );
}

#[test]
fn capture_link_types() {
    let eth = plain_udp4(b"ndn");
    let ip = &eth[14..];
    // Raw IP, BSD loopback (both byte orders), Linux cooked v1 and v2.
    let mut null_le = 2u32.to_le_bytes().to_vec();
    null_le.extend(ip);
    let mut null_be = 2u32.to_be_bytes().to_vec();
    null_be.extend(ip);
    let mut sll = vec![0; 14];
    sll.extend(ETHERTYPE_IPV4.to_be_bytes());
    sll.extend(ip);
    let mut sll2 = ETHERTYPE_IPV4.to_be_bytes().to_vec();
    sll2.extend([0; 18]);
    sll2.extend(ip);
    for (link, f, l3) in [
        (Link::Raw, ip.to_vec(), 0),
        (Link::Null, null_le, 4),
        (Link::Null, null_be, 4),
        (Link::LinuxSll, sll, 16),
        (Link::LinuxSll2, sll2, 20),
    ] {
        let l = wire::walk(&f, f.len(), link, &Rules::LENIENT).unwrap();
        assert_eq!((l.l3, l.macs), (l3, None), "{link:?}");
        assert_eq!(&f[l.payload], b"ndn", "{link:?}");
    }
    let unix = 1u32.to_le_bytes();
    assert_eq!(
        wire::walk(&unix, 4, Link::Null, &Rules::LENIENT),
        Err(Stop::Skipped(Skip::Family))
    );
    assert_eq!(
        wire::walk(&[], 0, Link::LinuxSll2, &Rules::LENIENT),
        Err(Stop::Malformed(Malformed {
            header: Header::Sll2,
            offset: 0
        }))
    );
}

#[test]
fn parse_is_strict_walk() {
    let f = build(&Recipe {
        l3: 2,
        pad: 3,
        ..plain_recipe(b"ndn")
    });
    let p = wire::parse(&f, f.len()).unwrap();
    assert_eq!((p.encap, p.payload.clone()), (Encap::Ether, 14..20));
    assert_eq!(Some(p), before::parse(&f, f.len()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// `wire::parse` accepts exactly the frames the old parser did, with the same result.
    #[test]
    fn parse_matches_the_parser_it_replaced(
        r in recipe(),
        flips in prop_oneof![
            3 => Just(vec![]),
            1 => proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..3),
        ],
        cut in prop_oneof![Just(1usize), 0usize..100],
        whole in prop_oneof![3 => Just(true), 1 => Just(false)],
        extra in 0usize..80,
    ) {
        let mut f = build(&r);
        for (i, x) in &flips {
            let i = i.index(f.len());
            f[i] ^= x;
        }
        if !whole {
            f.truncate(f.len().saturating_sub(cut));
        }
        for total in [f.len(), f.len() + extra, f.len() + 1, 0] {
            prop_assert_eq!(wire::parse(&f, total), before::parse(&f, total));
        }
    }

    /// Never panics on garbage, for any link type and both rule sets; what it returns is sane.
    #[test]
    fn walk_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), extra in 0usize..100) {
        for link in [Link::Ethernet, Link::LinuxSll, Link::LinuxSll2, Link::Null, Link::Raw] {
            for rules in [Rules::STRICT, Rules::LENIENT] {
                if let Ok(l) = wire::walk(&bytes, bytes.len() + extra, link, &rules) {
                    prop_assert!(l.payload.start <= l.payload.end);
                    let cut = match l.carrier {
                        Carrier::Ether => extra > 0,
                        Carrier::Udp { .. } => l.payload.end > bytes.len(),
                    };
                    prop_assert_eq!(l.truncated, cut);
                    prop_assert!(l.vlan_tags <= rules.max_vlan_tags);
                }
            }
        }
    }
}
