//! The loaded XDP program, run by the kernel (BPF_PROG_TEST_RUN) on thousands of generated
//! frames, picks the same shard and hash as `ndx_core::Dispatch`, classifies the same kind,
//! and passes non-NDN frames untouched. Root only.

mod common;

use common::*;
use ndx_codec::{DataRepr, Fragmenter, InterestRepr, LpHeaders, NackReason, NameBuf};
use ndx_core::{Dispatch, DispatchMode, HashKey};
use ndx_xdp::{Encap, How, Kind, NdxXdp, XdpConfig, XdpMeta, verdict};

const PORT: u16 = 6363;

fn random_name(rng: &mut Rng) -> NameBuf {
    let mut n = NameBuf::new();
    let comps = 1 + rng.below(10);
    push_random_components(rng, &mut n, comps, 40);
    push_random_last(rng, &mut n);
    n
}

#[derive(Clone, Copy, Debug)]
enum Net {
    Bare,
    Udp4,
    Udp6,
    Ether,
}

struct Case {
    frame: Vec<u8>,
    source: Vec<u8>,
    ndn_off: usize,
    encap: Encap,
}

fn wrap(rng: &mut Rng, net: Net, payload: &[u8]) -> Case {
    let vlan = rng.chance(5);
    let l2 = if vlan { 18 } else { 14 };
    match net {
        Net::Udp4 | Net::Bare => {
            let src = [10, 1, rng.next() as u8, rng.next() as u8];
            let sport = rng.next() as u16 | 1;
            let mut source = src.to_vec();
            source.extend_from_slice(&sport.to_be_bytes());
            Case {
                frame: udp4(src, sport, PORT, 17, vlan, payload),
                source,
                ndn_off: l2 + 28,
                encap: Encap::Udp4,
            }
        }
        Net::Udp6 => {
            let mut src = [0u8; 16];
            src[0] = 0xfd;
            src[8..].copy_from_slice(&rng.next().to_be_bytes());
            let sport = rng.next() as u16 | 1;
            let mut source = src.to_vec();
            source.extend_from_slice(&sport.to_be_bytes());
            Case {
                frame: udp6(src, sport, PORT, vlan, payload),
                source,
                ndn_off: l2 + 48,
                encap: Encap::Udp6,
            }
        }
        Net::Ether => {
            let mut mac = rng.bytes(6);
            mac[0] &= 0xfe;
            let dst = if rng.chance(2) { NDN_GROUP } else { MAC_A };
            let mut frame = eth(dst, mac.clone().try_into().unwrap(), 0x8624, vlan);
            frame.extend_from_slice(payload);
            if frame.len() < 60 {
                frame.resize(60, 0); // NFD pads short Ethernet frames with zeros
            }
            Case {
                frame,
                source: mac,
                ndn_off: l2,
                encap: Encap::Ether,
            }
        }
    }
}

struct Expect {
    kind: Kind,
    how: How,
    hash: u64,
    shard: u8,
}

fn by_name(d: &Dispatch, name: &NameBuf, kind: Kind) -> Expect {
    let hash = d.hash(&name.as_name());
    Expect {
        kind,
        how: How::Name,
        hash,
        shard: d.shard(&name.as_name(), None),
    }
}

/// One random NDN payload (possibly several frames for fragments) and what Dispatch says.
fn random_ndn(rng: &mut Rng, d: &Dispatch, key: &HashKey, net: Net) -> Vec<(Case, Expect)> {
    let name = random_name(rng);
    let which = rng.below(10);
    let (packet, kind) = if which < 4 {
        let mut i = InterestRepr::new(name.clone());
        i.nonce = Some(rng.next() as u32);
        i.can_be_prefix = rng.chance(2);
        (i.to_vec().unwrap(), Kind::Interest)
    } else if which < 8 {
        let content = {
            let n = rng.below(300) as usize;
            rng.bytes(n)
        };
        (
            DataRepr::new(name.clone(), content).to_vec().unwrap(),
            Kind::Data,
        )
    } else {
        let i = InterestRepr::new(name.clone());
        (i.to_vec().unwrap(), Kind::Nack)
    };
    // Our length (ndx_core::PIT_TOKEN_LEN), and a foreign one.
    let mut token = [0u8; ndx_core::PIT_TOKEN_LEN];
    token.copy_from_slice(&rng.bytes(ndx_core::PIT_TOKEN_LEN));
    token[0] = rng.below(12) as u8; // sometimes a shard we have, sometimes not
    let foreign_token = rng.bytes(8);
    let acks = [rng.next(), rng.next()];
    let mut h = LpHeaders::default();
    match rng.below(4) {
        0 => h.pit_token = Some(&token),
        1 => h.pit_token = Some(&foreign_token),
        _ => {}
    }
    if rng.chance(4) {
        h.congestion_mark = Some(1);
    }
    if rng.chance(4) {
        h.acks = &acks;
    }
    if kind == Kind::Nack {
        h.nack = Some(NackReason::NoRoute);
    }
    let bare = kind != Kind::Nack && h.is_empty() && rng.chance(2);
    // Fragments: a small MTU splits the packet.
    if !bare && rng.chance(6) && packet.len() > 60 {
        let mtu = 100 + rng.below(60) as usize;
        let f = Fragmenter::new(mtu).unwrap();
        let mut frags = f.fragment(&packet, &h, rng.next()).unwrap();
        let mut out = Vec::new();
        let mut buf = vec![0u8; 2048];
        while let Some(n) = frags.next_into(&mut buf) {
            let n = n.unwrap();
            let case = wrap(rng, net, &buf[..n]);
            let e = Expect {
                kind: Kind::Fragment,
                how: How::Source,
                hash: key.hash(&case.source),
                shard: d.source_shard(&case.source),
            };
            out.push((case, e));
        }
        if out.len() > 1 {
            return out;
        }
    }
    let payload = if bare {
        packet
    } else {
        let mut buf = vec![0u8; h.encoded_len(Some(packet.len()))];
        let n = h.encode(Some(&packet), &mut buf).unwrap();
        buf.truncate(n);
        buf
    };
    let case = wrap(rng, net, &payload);
    let e = match h.pit_token {
        Some(t)
            if kind != Kind::Interest
                && t.len() == ndx_core::PIT_TOKEN_LEN
                && usize::from(t[0]) < d.shards() =>
        {
            Expect {
                kind,
                how: How::Token,
                hash: 0,
                shard: t[0],
            }
        }
        _ => by_name(d, &name, kind),
    };
    vec![(case, e)]
}

fn setup(rng: &mut Rng, mode: DispatchMode, frags: bool) -> (NdxXdp, Dispatch, HashKey) {
    let (k0, k1) = (rng.next(), rng.next());
    let shards = 1 + rng.below(8) as usize;
    let key = HashKey::new(k0, k1);
    let mut d = Dispatch::new(key, mode, shards, 256).unwrap();
    for i in 0..256 {
        assert!(d.set_entry(i, rng.below(shards as u64) as u8));
    }
    let mut config = XdpConfig::for_dispatch(&d, k0, k1);
    config.udp_ports = vec![5000, PORT];
    config.frags = frags;
    // The classification under test, with one shard too (where the router turns it off).
    config.classify = true;
    let xdp = NdxXdp::load(&config).unwrap_or_else(|e| panic!("{e}"));
    (xdp, d, key)
}

fn check(xdp: &NdxXdp, case: &Case, e: &Expect, what: &str) {
    let r = xdp.test_run(&case.frame, 0, 0).unwrap();
    assert_eq!(
        r.verdict,
        verdict::PASS,
        "{what}: no socket, so the redirect falls back to PASS"
    );
    let m: XdpMeta = r
        .meta()
        .unwrap_or_else(|| panic!("{what}: no metadata (meta_len {})", r.meta_len));
    assert_eq!(r.frame(), &case.frame[..], "{what}: frame changed");
    assert_eq!(m.kind, e.kind, "{what}");
    assert_eq!(m.how, e.how, "{what}");
    assert_eq!(m.hash, e.hash, "{what}: hash");
    assert_eq!(m.shard, e.shard, "{what}: shard");
    assert_eq!(m.encap, case.encap, "{what}");
    assert_eq!(usize::from(m.ndn_off), case.ndn_off, "{what}");
}

fn agree(mode: DispatchMode, seed: u64, frags: bool) {
    let mut rng = Rng::new(seed);
    let (xdp, d, key) = setup(&mut rng, mode, frags);
    let mut kinds = [0u64; 6];
    let mut hows = [0u64; 4];
    for i in 0..1500 {
        let net = [Net::Bare, Net::Udp4, Net::Udp6, Net::Ether][i % 4];
        for (case, e) in random_ndn(&mut rng, &d, &key, net) {
            check(&xdp, &case, &e, &format!("{mode:?} case {i} {net:?}"));
            kinds[e.kind as usize] += 1;
            hows[e.how as usize] += 1;
        }
    }
    let c = xdp.counters().unwrap();
    assert_eq!(
        [
            c.malformed,
            c.interest,
            c.data,
            c.nack,
            c.fragment,
            c.lp_other
        ],
        kinds,
        "{c}"
    );
    assert_eq!(
        [c.by_token, c.by_name, c.by_source],
        [hows[1], hows[2], hows[3]],
        "{c}"
    );
    assert!(
        kinds[1] > 100 && kinds[2] > 100 && kinds[3] > 20 && kinds[4] > 20,
        "{kinds:?}"
    );
    assert!(
        hows[1] > 10,
        "some Data/Nacks were dispatched by token: {hows:?}"
    );
    assert_eq!(c.redirected, 0);
    assert_eq!(c.redirect_failed, kinds.iter().sum::<u64>(), "{c}");
    println!("{mode:?}: {kinds:?} {hows:?}\n{c}");
}

#[test]
fn agrees_with_dispatch_in_prefix_mode() {
    if !root_or_skip("agrees_with_dispatch_in_prefix_mode") {
        return;
    }
    for k in [1, 2, 3, 5] {
        agree(DispatchMode::Prefix(k), 100 + k as u64, false);
    }
}

#[test]
fn agrees_with_dispatch_in_content_mode() {
    if !root_or_skip("agrees_with_dispatch_in_content_mode") {
        return;
    }
    agree(DispatchMode::Content, 7, false);
}

#[test]
fn agrees_with_dispatch_in_batch_mode() {
    if !root_or_skip("agrees_with_dispatch_in_batch_mode") {
        return;
    }
    for b in [1, 16, 64] {
        agree(DispatchMode::Batch(b), 300 + b, false);
    }
}

#[test]
fn frags_variant_agrees_on_jumbo_data() {
    if !root_or_skip("frags_variant_agrees_on_jumbo_data") {
        return;
    }
    let mut rng = Rng::new(99);
    let (xdp, d, _) = setup(&mut rng, DispatchMode::Batch(16), true);
    for i in 0..200 {
        let name = random_name(&mut rng);
        let data = DataRepr::new(name.clone(), {
            let n = 8000 + rng.below(800) as usize;
            rng.bytes(n)
        })
        .to_vec()
        .unwrap();
        let net = [Net::Udp4, Net::Udp6, Net::Ether][i % 3];
        let case = wrap(&mut rng, net, &data);
        assert!(case.frame.len() > 8000);
        check(
            &xdp,
            &case,
            &by_name(&d, &name, Kind::Data),
            &format!("jumbo {i}"),
        );
    }
    // Small frames through the same variant.
    agree_small_with(&xdp, &d, &mut rng);
}

fn agree_small_with(xdp: &NdxXdp, d: &Dispatch, rng: &mut Rng) {
    let key = HashKey::new(0, 0); // unused: no fragments here
    let _ = key;
    for i in 0..200 {
        let name = random_name(rng);
        let interest = InterestRepr::new(name.clone()).to_vec().unwrap();
        let case = wrap(rng, Net::Udp4, &interest);
        check(
            xdp,
            &case,
            &by_name(d, &name, Kind::Interest),
            &format!("small {i}"),
        );
    }
}

#[test]
fn non_ndn_frames_pass_untouched() {
    if !root_or_skip("non_ndn_frames_pass_untouched") {
        return;
    }
    let mut rng = Rng::new(5);
    let (mut xdp, _, _) = setup(&mut rng, DispatchMode::Content, false);
    let interest = InterestRepr::new(NameBuf::from_uri("/a/b").unwrap())
        .to_vec()
        .unwrap();
    let mut arp = eth([0xff; 6], MAC_B, 0x0806, false);
    arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    arp.resize(60, 0);
    let mut ndn_bcast = eth([0xff; 6], MAC_B, 0x8624, false);
    ndn_bcast.extend_from_slice(&interest);
    let mut other_mcast = eth([0x33, 0x33, 0, 0, 0, 1], MAC_B, 0x8624, false);
    other_mcast.extend_from_slice(&interest);
    let frames: Vec<(&str, Vec<u8>)> = vec![
        ("tcp", udp4([10, 0, 0, 2], 40000, PORT, 6, false, &interest)),
        ("icmp", udp4([10, 0, 0, 2], 0, 0, 1, false, &[8, 0, 0, 0])),
        (
            "udp other port",
            udp4([10, 0, 0, 2], 40000, 6364, 17, false, &interest),
        ),
        (
            "udp6 other port",
            udp6([1; 16], 40000, 53, false, &interest),
        ),
        ("arp", arp),
        ("ndn to broadcast", ndn_bcast),
        ("ndn to another multicast group", other_mcast),
        ("runt", vec![0u8; 14]),
    ];
    for (what, f) in &frames {
        let r = xdp.test_run(f, 0, 0).unwrap();
        assert_eq!(r.verdict, verdict::PASS, "{what}");
        assert_eq!(r.meta_len, 0, "{what}: metadata written");
        assert_eq!(&r.out, f, "{what}: frame changed");
    }
    let c = xdp.counters().unwrap();
    assert_eq!(c.passed_not_ndn, frames.len() as u64, "{c}");
    assert_eq!(c.udp4 + c.udp6 + c.ether, 0, "{c}");

    // Ethernet off: a unicast NDN Ethernet frame passes too.
    let mut config = XdpConfig::new(1, 2, DispatchMode::Content, 2, 2);
    config.ethernet = false;
    xdp.reconfigure(&config).unwrap();
    let mut unicast = eth(MAC_A, MAC_B, 0x8624, false);
    unicast.extend_from_slice(&interest);
    let r = xdp.test_run(&unicast, 0, 0).unwrap();
    assert_eq!(
        (r.verdict, r.meta_len, &r.out),
        (verdict::PASS, 0, &unicast)
    );
}

#[test]
fn one_shard_sends_ndn_unparsed_and_passes_the_rest() {
    if !root_or_skip("one_shard_sends_ndn_unparsed_and_passes_the_rest") {
        return;
    }
    let d = Dispatch::new(HashKey::new(1, 2), DispatchMode::Content, 1, 16).unwrap();
    let mut config = XdpConfig::for_dispatch(&d, 1, 2);
    assert!(
        !config.classify,
        "one shard: nothing to classify by default"
    );
    config.udp_ports = vec![PORT];
    let xdp = NdxXdp::load(&config).unwrap_or_else(|e| panic!("{e}"));
    let mut rng = Rng::new(11);
    let interest = InterestRepr::new(NameBuf::from_uri("/a/b").unwrap())
        .to_vec()
        .unwrap();
    // NDN in every encapsulation, well-formed or not: redirected (PASS without a socket),
    // no metadata, frame unchanged.
    let mut ndn = Vec::new();
    for net in [Net::Udp4, Net::Udp6, Net::Ether] {
        ndn.push(wrap(&mut rng, net, &interest).frame);
        ndn.push(wrap(&mut rng, net, &[0x05, 0x7f, 0x07]).frame);
    }
    for (i, f) in ndn.iter().enumerate() {
        let r = xdp.test_run(f, 0, 0).unwrap();
        assert_eq!(
            (r.verdict, r.meta_len, &r.out),
            (verdict::PASS, 0, f),
            "NDN frame {i}"
        );
    }
    // Not NDN: passed untouched, as with classification.
    let tcp = udp4([10, 0, 0, 2], 40000, PORT, 6, false, &interest);
    let other_port = udp4([10, 0, 0, 2], 40000, 6364, 17, false, &interest);
    for f in [&tcp, &other_port] {
        let r = xdp.test_run(f, 0, 0).unwrap();
        assert_eq!((r.verdict, r.meta_len, &r.out), (verdict::PASS, 0, f));
    }
    let c = xdp.counters().unwrap();
    let n = ndn.len() as u64;
    assert_eq!(c.unclassified, n, "{c}");
    assert_eq!(c.udp4 + c.udp6 + c.ether, n, "{c}");
    assert_eq!(c.redirect_failed, n, "no socket bound: {c}");
    assert_eq!(c.passed_not_ndn, 2, "{c}");
    assert_eq!(
        c.interest + c.data + c.malformed + c.by_name + c.by_source + c.by_token,
        0,
        "nothing parsed: {c}"
    );
}

#[test]
fn malformed_ndn_goes_by_source() {
    if !root_or_skip("malformed_ndn_goes_by_source") {
        return;
    }
    let mut rng = Rng::new(11);
    let (xdp, d, key) = setup(&mut rng, DispatchMode::Prefix(2), false);
    let bad: Vec<Vec<u8>> = vec![
        vec![0x05, 0x10, 0x07],                   // Interest longer than the frame
        vec![0x42, 0x02, 0x00, 0x00],             // not an NDN packet type
        vec![0x05, 0x04, 0x08, 0x02, b'a', b'b'], // Interest without a Name first
        vec![0x64, 0x03, 0x50, 0x05, 0x00],       // Fragment past the LpPacket
        vec![0x05, 0x05, 0x07, 0x03, 0x08, 0x05, 0x61], // component past the Name
        vec![0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0],    // 8-byte TLV-TYPE
        vec![],                                   // empty UDP payload
    ];
    for (i, p) in bad.iter().enumerate() {
        let case = wrap(&mut rng, Net::Udp4, p);
        let e = Expect {
            kind: Kind::Malformed,
            how: How::Source,
            hash: key.hash(&case.source),
            shard: d.source_shard(&case.source),
        };
        check(&xdp, &case, &e, &format!("malformed {i}"));
    }
    // An IDLE LpPacket (acks only) goes by source as LpOther.
    let acks = [1u64, 2];
    let h = LpHeaders {
        acks: &acks,
        ..LpHeaders::default()
    };
    let mut buf = vec![0u8; h.encoded_len(None)];
    h.encode(None, &mut buf).unwrap();
    let case = wrap(&mut rng, Net::Udp6, &buf);
    let e = Expect {
        kind: Kind::LpOther,
        how: How::Source,
        hash: key.hash(&case.source),
        shard: d.source_shard(&case.source),
    };
    check(&xdp, &case, &e, "idle");
    assert_eq!(xdp.counters().unwrap().malformed, bad.len() as u64);
}

#[test]
fn program_stays_far_below_the_verifier_limit() {
    if !root_or_skip("program_stays_far_below_the_verifier_limit") {
        return;
    }
    for frags in [false, true] {
        let mut config = XdpConfig::new(1, 2, DispatchMode::Content, 4, 64);
        config.frags = frags;
        let xdp = NdxXdp::load(&config).unwrap();
        let s = xdp.program_stats().unwrap();
        println!("frags={frags}: {s:?}");
        if let Some(n) = s.verified_insns {
            assert!(n < 200_000, "verifier processed {n} instructions");
        }
    }
}

#[test]
fn table_rewrites_and_raw_mode_take_effect() {
    if !root_or_skip("table_rewrites_and_raw_mode_take_effect") {
        return;
    }
    let mut rng = Rng::new(21);
    let mut config = XdpConfig::new(9, 10, DispatchMode::Content, 4, 16);
    let mut xdp = NdxXdp::load(&config).unwrap();
    let interest = InterestRepr::new(NameBuf::from_uri("/rebalance/me/seg=3").unwrap())
        .to_vec()
        .unwrap();
    let case = wrap(&mut rng, Net::Udp4, &interest);
    let m = xdp.test_run(&case.frame, 0, 0).unwrap().meta().unwrap();
    let entry = (m.hash & 15) as usize;
    let moved = (m.shard + 1) % 4;
    xdp.set_table_entry(entry, moved).unwrap();
    assert_eq!(
        xdp.test_run(&case.frame, 0, 0)
            .unwrap()
            .meta()
            .unwrap()
            .shard,
        moved
    );
    assert!(
        xdp.set_table_entry(16, 0).is_err(),
        "index beyond the table"
    );
    assert!(
        xdp.set_table_entry(0, 4).is_err(),
        "shard beyond the shard count"
    );
    assert!(xdp.set_socket(64, 0, 0).is_err(), "queue beyond the XSKMAP");

    config.redirect_all = true;
    xdp.reconfigure(&config).unwrap();
    let r = xdp.test_run(&case.frame, 0, 0).unwrap();
    assert_eq!(
        (r.verdict, r.meta_len),
        (verdict::PASS, 0),
        "raw mode: no metadata, no socket"
    );
    let c = xdp.counters().unwrap();
    assert_eq!((c.raw, c.interest), (1, 2), "{c}");
}
