//! Tests of the decoders' fast paths (`fast` module): they are taken for the usual packets,
//! and on valid packets, mutated packets and arbitrary bytes they change no result (checked
//! by `fuzz::fast_paths_agree`, which compares each fast path with its general decoder).

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use crate::fuzz::{FastPaths, fast_paths_agree};
use crate::tlv::{Reader, Writer, tlv_len};
use crate::types as tt;
use crate::{
    CachePolicy, ComponentBuf, Data, DataRepr, Interest, InterestRepr, LpHeaders, LpPacket,
    NackReason, NameBuf, Packet, Signature,
};

fn name(uri: &str) -> NameBuf {
    NameBuf::from_uri(uri).unwrap()
}

/// `fragment` in an LpPacket with headers `h`.
fn lp(h: &LpHeaders<'_>, fragment: Option<&[u8]>) -> Vec<u8> {
    let mut out = vec![0; h.encoded_len(fragment.map(<[u8]>::len))];
    let n = h.encode(fragment, &mut out).unwrap();
    out.truncate(n);
    out
}

/// The fast paths taken for `frame`, after checking they agree with the general decoders.
fn taken(frame: &[u8]) -> FastPaths {
    assert!(Packet::decode(frame).is_ok(), "{frame:02x?} is valid");
    fast_paths_agree(frame)
}

/// The packets the router sees all the time take the fast paths (so a guard that refuses
/// them by mistake, and silently leaves everything to the general decoders, fails here).
#[test]
fn usual_packets_take_the_fast_paths() {
    let interest = |f: &dyn Fn(&mut InterestRepr)| {
        let mut i = InterestRepr::new(name("/net/site1/host77"));
        f(&mut i);
        i.to_vec().unwrap()
    };
    let interests = [
        interest(&|_| {}),
        interest(&|i| i.nonce = Some(0x0102_0304)),
        interest(&|i| {
            i.can_be_prefix = true;
            i.must_be_fresh = true;
            i.nonce = Some(7);
            i.lifetime_ms = Some(4000);
            i.hop_limit = Some(64);
        }),
        interest(&|i| i.lifetime_ms = Some(1)),
        interest(&|i| i.lifetime_ms = Some(1 << 20)),
        interest(&|i| i.lifetime_ms = Some(1 << 40)),
        interest(&|i| {
            i.name = name("/a/seg=3/v=1/32=kw");
            i.nonce = Some(1);
        }),
        // Names of 254 and 256 bytes: the longest walked without tests per component, and
        // one walked with them.
        interest(&|i| i.name = name(&format!("/{}/ab", "x".repeat(248)))),
        interest(&|i| i.name = name(&format!("/{}/abcd", "x".repeat(248)))),
    ];
    let data = |f: &dyn Fn(&mut DataRepr)| {
        let mut d = DataRepr::new(name("/net/site1/host77"), vec![0x42; 1000]);
        f(&mut d);
        d.to_vec().unwrap()
    };
    let datas = [
        data(&|_| {}),
        data(&|d| d.freshness_ms = Some(10_000)),
        data(&|d| {
            d.content_type = Some(crate::content_type::KEY);
            d.freshness_ms = Some(1 << 33);
            d.final_block_id = Some(ComponentBuf::segment(9));
            d.content = Some(vec![1; 100]);
        }),
        data(&|d| d.content = None),
        data(&|d| d.content = Some(vec![])),
        data(&|d| {
            d.signature = Signature::Raw {
                info: vec![0x1B, 1, 3, 0x1C, 4, 0x1D, 2, 0xAB, 0xCD],
                value: vec![0xEE; 64],
            }
        }),
        data(&|d| d.name = NameBuf::new()),
        // FreshnessPeriod alone in other lengths than the usual two bytes, and with a
        // FinalBlockId.
        data(&|d| d.freshness_ms = Some(1)),
        data(&|d| d.freshness_ms = Some(1 << 20)),
        data(&|d| {
            d.freshness_ms = Some(1000);
            d.final_block_id = Some(ComponentBuf::segment(9));
        }),
        data(&|d| d.name = name(&format!("/{}/abcd", "x".repeat(248)))),
    ];
    for wire in &interests {
        let t = taken(wire);
        assert!(t.interest && t.frame && t.usual, "Interest {wire:02x?}");
    }
    for wire in &datas {
        let t = taken(wire);
        assert!(t.data && t.frame && t.usual, "Data {wire:02x?}");
    }
    // Ethernet padding after a short packet.
    let mut padded = interests[0].clone();
    padded.resize(60, 0);
    let t = taken(&padded);
    assert!(
        t.interest && t.frame && t.usual,
        "padded Interest {padded:02x?}"
    );
    let token = [9; 6];
    let h = |f: &dyn Fn(&mut LpHeaders<'static>)| {
        let mut h = LpHeaders::default();
        f(&mut h);
        h
    };
    let with_token = LpHeaders {
        pit_token: Some(&token),
        ..LpHeaders::default()
    };
    let lps = [
        // Data echoing a PitToken, Interest with one, Nack, NextHopFaceId, a fragment, IDLE.
        lp(&with_token, Some(&datas[1])),
        lp(&with_token, Some(&interests[2])),
        lp(
            &LpHeaders {
                nack: Some(NackReason::NoRoute),
                ..with_token
            },
            Some(&interests[2]),
        ),
        lp(
            &h(&|h| h.nack = Some(NackReason::Unspecified)),
            Some(&interests[1]),
        ),
        lp(&h(&|h| h.next_hop_face_id = Some(300)), Some(&interests[1])),
        lp(
            &h(&|h| {
                h.sequence = Some(1 << 40);
                h.frag_index = Some(1);
                h.frag_count = Some(3);
            }),
            Some(&datas[0][..500]),
        ),
        lp(&h(&|h| h.sequence = Some(5)), None),
        lp(
            &h(&|h| {
                h.incoming_face_id = Some(4);
                h.congestion_mark = Some(1);
            }),
            Some(&datas[1]),
        ),
    ];
    // `Packet::decode_usual` reads the first two (a PitToken alone) and no other.
    for (k, wire) in lps.iter().enumerate() {
        let t = taken(wire);
        assert!(t.lp && t.frame, "LpPacket {wire:02x?}");
        assert_eq!(t.usual, k < 2, "decode_usual, LpPacket {k}: {wire:02x?}");
        let lp = LpPacket::decode(wire).unwrap();
        if let Ok(Some(p)) = lp.network_packet() {
            let inner = matches!(p, Packet::Interest(_)) && t.interest
                || matches!(p, Packet::Data(_)) && t.data;
            assert!(inner && t.fragment, "the packet in {wire:02x?}");
        }
    }
}

/// Frames and Fragments at the edge of the TLV-header guards of `Packet::decode` and
/// `LpPacket::network_packet` (`fast::packet`): whether the packet's TLV goes straight to its
/// decoder, and whether it is valid; the results are the general paths' either way.
#[test]
fn packet_headers_at_the_edge_of_the_fast_forms() {
    let interest = InterestRepr::new(name("/a/b")).to_vec().unwrap();
    let data = |len: usize| DataRepr::new(name("/a/b"), vec![7; len]).to_vec().unwrap();
    let with = |head: &[u8], value: &[u8], tail: &[u8]| [head, value, tail].concat();
    let ilen = interest.len() as u8;
    let value = &interest[2..];
    let frames: Vec<(&str, Vec<u8>, bool, bool)> = vec![
        // (what, frame, taken straight to its decoder, valid)
        ("an Interest", interest.clone(), true, true),
        ("zero padding", with(&interest, &[], &[0; 3]), true, true),
        (
            "a non-zero byte after",
            with(&interest, &[], &[0, 1]),
            false,
            false,
        ),
        (
            "a non-minimal TLV-LENGTH",
            with(&[5, 253, 0, ilen - 2], value, &[]),
            false,
            false,
        ),
        (
            "a truncated Interest",
            interest[..interest.len() - 1].to_vec(),
            false,
            false,
        ),
        ("a three-byte TLV-LENGTH", data(300), true, true),
        ("a five-byte TLV-LENGTH", data(70_000), false, true),
        ("a three-byte TLV-TYPE", vec![253, 0, 253, 0], false, false),
        (
            "another TLV-TYPE",
            with(&[9, ilen - 2], value, &[]),
            false,
            false,
        ),
        ("nothing", vec![], false, false),
    ];
    for (what, frame, straight, valid) in frames {
        let t = fast_paths_agree(&frame);
        assert_eq!(t.frame, straight, "{what}");
        assert_eq!(Packet::decode(&frame).is_ok(), valid, "{what}");
    }
    let h = LpHeaders::default();
    let nack = LpHeaders {
        nack: Some(NackReason::NoRoute),
        ..h
    };
    let piece = LpHeaders {
        frag_index: Some(0),
        frag_count: Some(2),
        ..h
    };
    let fragments: Vec<(&str, Vec<u8>, bool, bool)> = vec![
        // (what, LpPacket, its packet taken straight to its decoder, valid)
        ("an Interest", lp(&h, Some(&interest)), true, true),
        ("a Data", lp(&h, Some(&data(10))), true, true),
        ("a Nack", lp(&nack, Some(&interest)), true, true),
        ("a Data in a Nack", lp(&nack, Some(&data(10))), false, false),
        (
            "a zero byte after",
            lp(&h, Some(&with(&interest, &[], &[0]))),
            false,
            false,
        ),
        (
            "a non-minimal TLV-LENGTH",
            lp(&h, Some(&with(&[5, 253, 0, ilen - 2], value, &[]))),
            false,
            false,
        ),
        ("another TLV-TYPE", lp(&h, Some(&[9, 0])), false, false),
        ("an empty Fragment", lp(&h, Some(&[])), false, false),
        ("a piece", lp(&piece, Some(&interest)), false, true),
        ("an IDLE packet", lp(&h, None), false, true),
    ];
    for (what, frame, straight, valid) in fragments {
        let t = fast_paths_agree(&frame);
        assert!(t.frame && t.lp, "{what}: the LpPacket");
        assert_eq!(t.fragment, straight, "{what}");
        let lp = LpPacket::decode(&frame).unwrap();
        assert_eq!(lp.network_packet().is_ok(), valid, "{what}");
    }
}

/// The view built by a fast path and kept compact: the rarer LpPacket fields are re-read.
#[test]
fn lp_headers_kept_and_reread() {
    let data = DataRepr::new(name("/a"), vec![1]).to_vec().unwrap();
    let acks = [1, 2];
    let h = LpHeaders {
        sequence: Some(1),
        pit_token: Some(&[1, 2, 3]),
        nack: None,
        next_hop_face_id: Some(9),
        incoming_face_id: Some(4),
        congestion_mark: Some(1),
        cache_policy: Some(CachePolicy::NoCache),
        tx_sequence: Some(77),
        acks: &acks,
        ..LpHeaders::default()
    };
    let wire = lp(&h, Some(&data));
    let v = LpPacket::decode(&wire).unwrap();
    assert_eq!(v.headers(), LpHeaders { acks: &[], ..h });
    assert_eq!(v.acks().collect::<Vec<_>>(), acks);
    assert_eq!(v.next_hop_face_id(), Some(9));
    let only = LpHeaders {
        incoming_face_id: Some(4),
        congestion_mark: Some(1),
        ..LpHeaders::default()
    };
    let wire = lp(&only, Some(&data));
    let t = Reader::new(&wire).read().unwrap();
    let fast = LpPacket::from_tlv_fast(&t).expect("the fast path reads these fields");
    assert_eq!(fast.headers(), only);
    assert_eq!(fast.next_hop_face_id(), None);
}

/// A TLV of type `typ` holding the concatenation of `parts`.
fn tlv(typ: u64, parts: &[&[u8]]) -> Vec<u8> {
    let value = parts.concat();
    let mut out = vec![0; tlv_len(typ, value.len())];
    let need = out.len();
    Writer::new(&mut out, need)
        .unwrap()
        .tlv(typ, &value)
        .unwrap();
    out
}

/// Packets at the edge of each fast-path guard, valid (then decoded by the general decoder)
/// or not: no fast path takes them, and the results are the general decoders'.
#[test]
fn unusual_packets_go_to_the_general_decoders() {
    let name = tlv(7, &[&[8, 1, b'a', 8, 1, b'b']]);
    let nonce: &[u8] = &[10, 4, 1, 2, 3, 4];
    let interest = |rest: &[&[u8]]| tlv(5, &[&[&name[..]][..], rest].concat());
    let sig_info = tlv(22, &[&[27, 1, 0]]);
    let sig_value = tlv(23, &[&[0xEE; 4]]);
    let data = |elems: &[&[u8]]| tlv(6, &[&[&name[..]][..], elems].concat());
    let content = tlv(21, &[b"hi"]);
    let d = data(&[&content, &sig_info, &sig_value]);
    let lp = |fields: &[&[u8]]| tlv(100, fields);
    let fragment = tlv(80, &[&d]);
    let token: &[u8] = &[98, 2, 7, 7];
    let nack = |v: &[u8]| [&[253, 3, 0x20, v.len() as u8][..], v].concat();
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        // (what, packet, whether it is valid)
        (
            "a ParamsDigest component too short",
            tlv(5, &[&tlv(7, &[&[2, 2, 0, 0]]), nonce]),
            false,
        ),
        (
            "an ImplicitDigest component",
            tlv(5, &[&tlv(7, &[&[1, 32], &[0; 32]]), nonce]),
            true,
        ),
        (
            "a type-0 component",
            tlv(5, &[&tlv(7, &[&[0, 0]]), nonce]),
            false,
        ),
        (
            "a component with a long TLV-TYPE",
            tlv(5, &[&tlv(7, &[&[253, 1, 0, 0]]), nonce]),
            true,
        ),
        ("an empty Name", tlv(5, &[&[7, 0], nonce]), false),
        (
            "a non-minimal Name length",
            tlv(5, &[&[7, 253, 0, 6], &name[2..], nonce]),
            false,
        ),
        ("a Nonce of 3 bytes", interest(&[&[10, 3, 1, 2, 3]]), false),
        (
            "an InterestLifetime of 3 bytes",
            interest(&[nonce, &[12, 3, 0, 0, 1]]),
            false,
        ),
        (
            "a HopLimit of 2 bytes",
            interest(&[nonce, &[34, 2, 0, 1]]),
            false,
        ),
        (
            "a CanBePrefix with a value",
            interest(&[&[33, 1, 0], nonce]),
            false,
        ),
        (
            "a non-critical element",
            interest(&[nonce, &[200, 0]]),
            true,
        ),
        ("a critical element", interest(&[nonce, &[201, 0]]), false),
        (
            "a Nonce before CanBePrefix",
            interest(&[nonce, &[33, 0]]),
            false,
        ),
        (
            "a ForwardingHint",
            interest(&[&tlv(30, &[&name]), nonce]),
            true,
        ),
        ("a stray byte", interest(&[nonce, &[1]]), false),
        (
            "a FinalBlockId component past its end",
            data(&[
                &tlv(20, &[&[26, 3, 8, 3, 0], &[200, 0]]),
                &sig_info,
                &sig_value,
            ]),
            false,
        ),
        (
            "a FinalBlockId with a three-byte TLV-LENGTH",
            data(&[
                &tlv(20, &[&[26, 253, 8, 251], &[0; 251]]),
                &sig_info,
                &sig_value,
            ]),
            false,
        ),
        (
            "a FinalBlockId of two components",
            data(&[
                &tlv(20, &[&tlv(26, &[&[8, 0, 8, 0]])]),
                &sig_info,
                &sig_value,
            ]),
            false,
        ),
        (
            "a ContentType of 3 bytes",
            data(&[&tlv(20, &[&[24, 3, 0, 0, 1]]), &sig_info, &sig_value]),
            false,
        ),
        (
            "an unknown MetaInfo element",
            data(&[&tlv(20, &[&[200, 0]]), &sig_info, &sig_value]),
            true,
        ),
        (
            "a FreshnessPeriod of 3 bytes",
            data(&[&tlv(20, &[&[25, 3, 0, 0, 1]]), &sig_info, &sig_value]),
            false,
        ),
        (
            "a FreshnessPeriod of 2 bytes then an unknown MetaInfo element",
            data(&[&tlv(20, &[&[25, 2, 0, 1, 200, 0]]), &sig_info, &sig_value]),
            true,
        ),
        (
            "a FreshnessPeriod of 2 bytes then a critical MetaInfo element",
            data(&[&tlv(20, &[&[25, 2, 0, 1, 201, 0]]), &sig_info, &sig_value]),
            false,
        ),
        (
            "a FreshnessPeriod of 2 bytes past the MetaInfo's end",
            data(&[&tlv(20, &[&[25, 2, 0]]), &sig_info, &sig_value]),
            false,
        ),
        (
            "a component with a long TLV-TYPE, at the end of a long name",
            tlv(
                5,
                &[&tlv(7, &[&[8, 250], &[0; 250], &[253, 1, 0, 0]]), nonce],
            ),
            true,
        ),
        (
            "a type-0 component, at the end of a long name",
            tlv(5, &[&tlv(7, &[&[8, 252], &[0; 252], &[0, 0]]), nonce]),
            false,
        ),
        (
            "a component with a three-byte TLV-LENGTH in a long name",
            tlv(
                5,
                &[
                    &tlv(7, &[&[8, 2, 0, 0], &[8, 253, 0, 253], &[0; 253]]),
                    nonce,
                ],
            ),
            true,
        ),
        (
            "a component with a long TLV-TYPE in a short name",
            tlv(5, &[&tlv(7, &[&[8, 1, 0, 253, 1, 0, 0]]), nonce]),
            true,
        ),
        (
            "a ParamsDigest component in a short name",
            tlv(5, &[&tlv(7, &[&[8, 0, 2, 32], &[0; 32]]), nonce]),
            true,
        ),
        (
            "a SignatureType of 3 bytes",
            data(&[&tlv(22, &[&[27, 3, 0, 0, 1, 28, 0]]), &sig_value]),
            false,
        ),
        (
            "an empty SignatureType",
            data(&[&tlv(22, &[&[27, 0]]), &sig_value]),
            false,
        ),
        (
            "a KeyLocator with a long TLV-LENGTH",
            data(&[&tlv(22, &[&[27, 1, 0, 28, 253, 0, 0]]), &sig_value]),
            false,
        ),
        (
            "a non-minimal Content length",
            data(&[&[21, 253, 0, 2, b'h', b'i'], &sig_info, &sig_value]),
            false,
        ),
        (
            "an element after SignatureValue",
            data(&[&sig_info, &sig_value, &[200, 0]]),
            true,
        ),
        (
            "Content after SignatureInfo",
            data(&[&sig_info, &content, &sig_value]),
            false,
        ),
        ("no SignatureValue", data(&[&content, &sig_info]), false),
        (
            "FragIndex = FragCount",
            lp(&[&[82, 1, 2], &[83, 1, 2], &fragment]),
            false,
        ),
        ("FragCount 0", lp(&[&[83, 1, 0], &fragment]), false),
        ("an empty PitToken", lp(&[&[98, 0], &fragment]), false),
        (
            "a PitToken of 33 bytes",
            lp(&[&tlv(98, &[&[1; 33]]), &fragment]),
            false,
        ),
        ("two PitTokens", lp(&[token, token, &fragment]), false),
        (
            "Sequence after PitToken",
            lp(&[token, &[81, 1, 1], &fragment]),
            true,
        ),
        (
            "a byte after NackReason",
            lp(&[
                &nack(&[253, 3, 0x21, 1, 150, 0]),
                &tlv(80, &[&interest(&[nonce])]),
            ]),
            false,
        ),
        (
            "a NackReason of 3 bytes",
            lp(&[&nack(&[253, 3, 0x21, 3, 0, 0, 150]), &fragment]),
            false,
        ),
        (
            "an unknown Nack element",
            lp(&[&nack(&[253, 3, 0x22, 0]), &tlv(80, &[&interest(&[nonce])])]),
            true,
        ),
        (
            "a NextHopFaceId of 3 bytes",
            lp(&[&[253, 3, 0x30, 3, 0, 0, 1], &fragment]),
            false,
        ),
        (
            "a field after the Fragment",
            lp(&[&fragment, &[253, 3, 0x24, 0]]),
            true,
        ),
        (
            "a TxSequence",
            lp(&[&tlv(0x348, &[&[0; 8]]), &fragment]),
            true,
        ),
        (
            "a non-minimal Fragment length",
            lp(&[&[80, 253, 0, d.len() as u8], &d]),
            false,
        ),
    ];
    for (what, wire, valid) in cases {
        let t = Reader::new(&wire).read().unwrap();
        let fast = match t.typ {
            tt::INTEREST => Interest::from_tlv_fast(&t).is_some(),
            tt::DATA => Data::from_tlv_fast(&t).is_some(),
            _ => LpPacket::from_tlv_fast(&t).is_some(),
        };
        assert!(!fast, "{what}: taken by the fast path");
        let decoded = Packet::decode(&wire).and_then(|p| match p {
            Packet::Lp(l) => l.network_packet().map(|_| ()),
            _ => Ok(()),
        });
        assert_eq!(decoded.is_ok(), valid, "{what}: {decoded:?}");
        fast_paths_agree(&wire);
    }
}

/// The one-test paths for the usual packets (`Interest::usual_ending`, `Data::usual`,
/// `LpPacket::from_tlv_usual`), on each side of each of their checks: they take the usual
/// packets, with the general decoder's view, and leave any other to the rest of the fast path
/// or the general decoder, with the same result as before.
#[test]
fn usual_paths_at_their_edges() {
    let name_tlv = tlv(7, &[&[8, 1, b'a', 50, 1, 3]]);

    // Interests: the ending after the Name.
    let usual: [u8; 13] = [10, 4, 1, 2, 3, 4, 12, 2, 0x0F, 0xA0, 34, 1, 64];
    assert_eq!(Interest::usual_ending(&usual), Some((0x0102_0304, 4000)));
    let frame = tlv(5, &[&name_tlv, &usual]);
    assert!(taken(&frame).interest);
    let Ok(Packet::Interest(i)) = Packet::decode(&frame) else {
        panic!("an Interest")
    };
    let got = (
        i.nonce(),
        i.lifetime_ms(),
        i.hop_limit(),
        i.hop_limit_offset(),
    );
    assert_eq!(
        got,
        (
            Some(0x0102_0304),
            Some(4000),
            Some(64),
            Some(frame.len() - 1)
        )
    );
    assert_eq!(
        format!("{i:?}"),
        format!("{:?}", Interest::decode(&frame).unwrap())
    );
    // (what, ending, valid and taken by the rest of the fast path)
    let mut endings: Vec<(String, Vec<u8>, bool)> = vec![
        ("one byte short".into(), usual[..12].to_vec(), false),
        ("no HopLimit".into(), usual[..10].to_vec(), true),
        ("a byte after".into(), [&usual[..], &[0]].concat(), false),
        (
            "a non-critical element after".into(),
            [&usual[..], &[200, 0]].concat(),
            false,
        ),
        (
            "CanBePrefix first".into(),
            [&[33, 0][..], &usual].concat(),
            true,
        ),
        (
            "a one-byte InterestLifetime".into(),
            vec![10, 4, 1, 2, 3, 4, 12, 1, 9, 34, 1, 64, 0],
            false,
        ),
        (
            "a one-byte InterestLifetime, 12 bytes".into(),
            vec![10, 4, 1, 2, 3, 4, 12, 1, 9, 34, 1, 64],
            true,
        ),
        (
            "a four-byte InterestLifetime".into(),
            vec![10, 4, 1, 2, 3, 4, 12, 4, 0, 0, 0x0F, 0xA0, 34, 1, 64],
            true,
        ),
    ];
    for at in [0, 1, 6, 7, 10, 11] {
        for delta in [1, 255] {
            let mut e = usual.to_vec();
            e[at] = e[at].wrapping_add(delta);
            endings.push((format!("byte {at} changed by {delta}"), e, false));
        }
    }
    for (what, ending, chain) in endings {
        assert_eq!(Interest::usual_ending(&ending), None, "{what}");
        let frame = tlv(5, &[&name_tlv, &ending]);
        let t = fast_paths_agree(&frame);
        if chain {
            assert!(t.interest, "{what}: the rest of the fast path");
        }
    }

    // Data: what follows the Name.
    let data = |f: &dyn Fn(&mut DataRepr)| {
        let mut d = DataRepr::new(name("/a/seg=3"), vec![0x42; 1000]);
        d.freshness_ms = Some(10_000);
        f(&mut d);
        d.to_vec().unwrap()
    };
    let raw = |info: &[u8], len: usize| Signature::Raw {
        info: info.to_vec(),
        value: vec![0xEE; len],
    };
    fn usual_data(wire: &[u8]) -> Option<Data<'_>> {
        let t = Reader::new(wire).read().unwrap();
        let (name, rest) = crate::fast::element(t.value, 7)?;
        let count = crate::fast::name_count(name)?;
        Data::named(&t, name, count).usual(rest)
    }
    let d = data(&|_| {});
    let meta_at = 2 + 2 + name("/a/seg=3").as_name().as_bytes().len() + 2;
    let info_at = d.len() - 34 - 5;
    assert_eq!(&d[meta_at..meta_at + 4], &[20, 4, 25, 2]);
    assert_eq!(&d[info_at..info_at + 4], &[22, 3, 27, 1]);
    // (what, Data, taken by `Data::usual`)
    let mut datas: Vec<(String, Vec<u8>, bool)> = vec![
        ("the usual".into(), d.clone(), true),
        (
            "a short Content".into(),
            data(&|d| d.content = Some(vec![1; 9])),
            true,
        ),
        (
            "an empty Content".into(),
            data(&|d| d.content = Some(vec![])),
            true,
        ),
        (
            "Content of 253 bytes".into(),
            data(&|d| d.content = Some(vec![1; 253])),
            true,
        ),
        ("no Content".into(), data(&|d| d.content = None), false),
        (
            "FreshnessPeriod of 0xFFFF".into(),
            data(&|d| d.freshness_ms = Some(0xFFFF)),
            true,
        ),
        (
            "a one-byte FreshnessPeriod".into(),
            data(&|d| d.freshness_ms = Some(0xFF)),
            false,
        ),
        (
            "a four-byte FreshnessPeriod".into(),
            data(&|d| d.freshness_ms = Some(0x1_0000)),
            false,
        ),
        (
            "no MetaInfo".into(),
            data(&|d| d.freshness_ms = None),
            false,
        ),
        (
            "a ContentType too".into(),
            data(&|d| d.content_type = Some(0)),
            false,
        ),
        (
            "a FinalBlockId too".into(),
            data(&|d| d.final_block_id = Some(ComponentBuf::segment(3))),
            false,
        ),
        (
            "another one-byte SignatureType".into(),
            data(&|d| d.signature = raw(&[27, 1, 3], 64)),
            true,
        ),
        (
            "a two-byte SignatureType".into(),
            data(&|d| d.signature = raw(&[27, 2, 0, 3], 64)),
            false,
        ),
        (
            "a KeyLocator".into(),
            data(&|d| d.signature = raw(&[27, 1, 3, 28, 0], 64)),
            false,
        ),
        (
            "a 300-byte SignatureValue".into(),
            data(&|d| d.signature = raw(&[27, 1, 1], 300)),
            true,
        ),
        (
            "an empty SignatureValue".into(),
            data(&|d| d.signature = raw(&[27, 1, 1], 0)),
            true,
        ),
        (
            "an element after SignatureValue".into(),
            tlv(6, &[&d[4..], &[200, 0]]),
            false,
        ),
    ];
    for at in (meta_at..meta_at + 4).chain(info_at..info_at + 4) {
        for delta in [1, 255] {
            let mut v = d.clone();
            v[at] = v[at].wrapping_add(delta);
            datas.push((format!("byte {at} changed by {delta}"), v, false));
        }
    }
    for (what, wire, usual) in datas {
        let u = usual_data(&wire);
        assert_eq!(u.is_some(), usual, "{what}");
        let t = fast_paths_agree(&wire);
        if let Some(u) = u {
            assert!(t.data, "{what}");
            let g = Data::from_tlv_general(Reader::new(&wire).read().unwrap()).unwrap();
            assert_eq!(format!("{u:?}"), format!("{g:?}"), "{what}");
            assert_eq!(u.signed_portion(), g.signed_portion(), "{what}");
        }
    }

    // LpPackets.
    let fragment = tlv(80, &[&d]);
    let short = tlv(80, &[&tlv(5, &[&name_tlv, &usual])]);
    let token = |n: usize| tlv(98, &[&vec![7; n]]);
    let lp = |fields: &[&[u8]]| tlv(100, fields);
    // (what, LpPacket, taken by `LpPacket::from_tlv_usual`)
    let lps: Vec<(&str, Vec<u8>, bool)> = vec![
        ("a PitToken", lp(&[&token(6), &fragment]), true),
        ("a one-byte PitToken", lp(&[&token(1), &fragment]), true),
        ("a 32-byte PitToken", lp(&[&token(32), &fragment]), true),
        ("a 33-byte PitToken", lp(&[&token(33), &fragment]), false),
        ("an empty PitToken", lp(&[&token(0), &fragment]), false),
        ("a short Fragment", lp(&[&token(6), &short]), true),
        ("no PitToken", lp(&[&fragment]), false),
        ("no Fragment", lp(&[&token(6)]), false),
        (
            "a Nack between",
            lp(&[&token(6), &[253, 3, 0x20, 0], &short]),
            false,
        ),
        (
            "a Sequence first",
            lp(&[&[81, 1, 1], &token(6), &fragment]),
            false,
        ),
        (
            "a field after the Fragment",
            lp(&[&token(6), &fragment, &[253, 3, 0x24, 0]]),
            false,
        ),
        (
            "a non-minimal Fragment length",
            lp(&[&token(6), &[80, 253, 0, short.len() as u8 - 2], &short[2..]]),
            false,
        ),
        ("a PitToken past the end", lp(&[&[98, 9, 1, 2]]), false),
    ];
    for (what, wire, usual) in lps {
        let t = Reader::new(&wire).read().unwrap();
        let u = LpPacket::from_tlv_usual(&t);
        assert_eq!(u.is_some(), usual, "{what}");
        let taken = fast_paths_agree(&wire);
        if let Some(u) = u {
            assert!(taken.lp && taken.fragment, "{what}");
            let g = LpPacket::from_tlv_general(t).unwrap();
            assert_eq!(format!("{u:?}"), format!("{g:?}"), "{what}");
            assert_eq!(u.pit_token(), g.pit_token(), "{what}");
        }
    }
}

/// A TLV tree, for structural mutations.
#[derive(Clone, Debug)]
enum Node {
    Leaf(u64, Vec<u8>),
    Branch(u64, Vec<Node>),
    /// An element encoded by a mutation, possibly with a wrong or non-minimal TLV-LENGTH.
    Raw(Vec<u8>),
}

/// Elements that hold elements (Interest, Data, Name, MetaInfo, SignatureInfo,
/// FinalBlockId, ForwardingHint, Fragment, LpPacket, Nack).
const CONTAINERS: [u64; 10] = [5, 6, 7, 20, 22, 26, 30, 80, 100, 800];

fn parse(buf: &[u8]) -> Option<Vec<Node>> {
    let mut nodes = Vec::new();
    for t in Reader::new(buf) {
        let t = t.ok()?;
        let children = CONTAINERS
            .contains(&t.typ)
            .then(|| parse(t.value))
            .flatten();
        nodes.push(match children {
            Some(c) => Node::Branch(t.typ, c),
            None => Node::Leaf(t.typ, t.value.to_vec()),
        });
    }
    Some(nodes)
}

/// A node's TLV-TYPE and TLV-VALUE (`None` for a raw one).
fn parts(n: &Node) -> Option<(u64, Vec<u8>)> {
    match n {
        Node::Leaf(t, v) => Some((*t, v.clone())),
        Node::Branch(t, c) => {
            let mut v = Vec::new();
            encode(c, &mut v);
            Some((*t, v))
        }
        Node::Raw(_) => None,
    }
}

fn varnum(v: u64) -> Vec<u8> {
    let mut buf = [0; 9];
    let mut w = Writer::new(&mut buf, 9).unwrap();
    w.varnum(v).unwrap();
    let n = w.len();
    buf[..n].to_vec()
}

fn encode(nodes: &[Node], out: &mut Vec<u8>) {
    for n in nodes {
        let Some((typ, value)) = parts(n) else {
            if let Node::Raw(b) = n {
                out.extend_from_slice(b);
            }
            continue;
        };
        let mut buf = vec![0; tlv_len(typ, value.len())];
        let need = buf.len();
        Writer::new(&mut buf, need)
            .unwrap()
            .tlv(typ, &value)
            .unwrap();
        out.extend_from_slice(&buf);
    }
}

/// One change to an encoded packet.
#[derive(Clone, Debug)]
enum Mutation {
    /// Sets one byte.
    Flip(Index, u8),
    /// Cuts the frame short.
    Truncate(Index),
    /// Inserts an element of type `typ` and `len` bytes into a container (chosen by the first
    /// index), before the child chosen by the second.
    Insert(Index, Index, u64, u8),
    /// Removes a child of a container.
    Remove(Index, Index),
    /// Swaps two neighbouring children of a container.
    Swap(Index, Index),
    /// Repeats a child of a container.
    Duplicate(Index, Index),
    /// Changes the TLV-TYPE of a child of a container.
    Retype(Index, Index, u64),
    /// Changes the TLV-LENGTH of a child of a container by `delta`, keeping its value.
    Misframe(Index, Index, i8),
    /// Writes the TLV-LENGTH of a child of a container in the three-byte form (non-minimal
    /// below 253) or, when `true`, the five-byte form.
    LongLength(Index, Index, bool),
    /// Replaces the value of a child of a container with these bytes.
    Revalue(Index, Index, Vec<u8>),
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    // Unknown critical and non-critical types, known types out of place, LP fields (ignorable
    // or not), and long TLV-TYPEs.
    let typ = prop_oneof![
        1u64..=40,
        Just(tt::IMPLICIT_SHA256_DIGEST_COMPONENT),
        Just(tt::PARAMETERS_SHA256_DIGEST_COMPONENT),
        Just(200u64),
        Just(252),
        Just(253),
        Just(0x1000),
        Just(0x1001),
        Just(0u64),
        Just(tt::GENERIC_NAME_COMPONENT),
        Just(tt::LP_PIT_TOKEN),
        Just(tt::LP_FRAGMENT),
        Just(tt::LP_SEQUENCE),
        Just(tt::LP_NACK),
        Just(tt::LP_NEXT_HOP_FACE_ID),
        Just(804),
        Just(900),
        Just(901),
    ];
    prop_oneof![
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        3 => (any::<Index>(), any::<Index>(), typ.clone(), 0u8..=8)
            .prop_map(|(c, i, t, l)| Mutation::Insert(c, i, t, l)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(c, i)| Mutation::Remove(c, i)),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(c, i)| Mutation::Swap(c, i)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(c, i)| Mutation::Duplicate(c, i)),
        2 => (any::<Index>(), any::<Index>(), typ.clone())
            .prop_map(|(c, i, t)| Mutation::Retype(c, i, t)),
        2 => (any::<Index>(), any::<Index>(), -3i8..=3)
            .prop_map(|(c, i, d)| Mutation::Misframe(c, i, d)),
        1 => (any::<Index>(), any::<Index>(), any::<bool>())
            .prop_map(|(c, i, five)| Mutation::LongLength(c, i, five)),
        3 => (any::<Index>(), any::<Index>(), proptest::collection::vec(any::<u8>(), 0..10))
            .prop_map(|(c, i, v)| Mutation::Revalue(c, i, v)),
    ]
}

fn count_containers(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Branch(_, c) => 1 + count_containers(c),
            Node::Leaf(..) | Node::Raw(_) => 0,
        })
        .sum()
}

/// Applies `m` to `frame` (a structural mutation of a frame that does not parse as a tree
/// leaves it as it is).
fn mutate(frame: &mut Vec<u8>, m: &Mutation) {
    let (c, i, typ, len) = match *m {
        Mutation::Flip(at, b) => {
            if !frame.is_empty() {
                let i = at.index(frame.len());
                frame[i] = b;
            }
            return;
        }
        Mutation::Truncate(at) => {
            frame.truncate(at.index(frame.len() + 1));
            return;
        }
        Mutation::Insert(c, i, typ, len) => (c, i, typ, len),
        Mutation::Retype(c, i, typ) => (c, i, typ, 0),
        Mutation::Remove(c, i)
        | Mutation::Swap(c, i)
        | Mutation::Duplicate(c, i)
        | Mutation::Misframe(c, i, _)
        | Mutation::LongLength(c, i, _)
        | Mutation::Revalue(c, i, _) => (c, i, 0, 0),
    };
    let Some(mut tree) = parse(frame) else {
        return;
    };
    let n = count_containers(&tree);
    if n == 0 {
        return;
    }
    edit(&mut tree, &mut c.index(n), m, &i, typ, len);
    frame.clear();
    encode(&tree, frame);
}

/// Applies the structural mutation `m` to the `k`-th container of `nodes`.
fn edit(nodes: &mut [Node], k: &mut usize, m: &Mutation, i: &Index, typ: u64, len: u8) -> bool {
    for n in nodes {
        if let Node::Branch(_, c) = n {
            if *k == 0 {
                let at = i.index(c.len() + 1);
                match m {
                    Mutation::Insert(..) => {
                        let value = (0..len).map(|b| b.wrapping_mul(37)).collect();
                        c.insert(at, Node::Leaf(typ, value));
                    }
                    Mutation::Remove(..) if at < c.len() => {
                        c.remove(at);
                    }
                    Mutation::Swap(..) if at + 1 < c.len() => c.swap(at, at + 1),
                    Mutation::Duplicate(..) if at < c.len() => {
                        let copy = c[at].clone();
                        c.insert(at, copy);
                    }
                    Mutation::Retype(..) if at < c.len() => match &mut c[at] {
                        Node::Leaf(t, _) | Node::Branch(t, _) => *t = typ,
                        Node::Raw(_) => {}
                    },
                    Mutation::Misframe(_, _, delta) if at < c.len() => {
                        if let Some((t, v)) = parts(&c[at]) {
                            let len = v.len().saturating_add_signed(isize::from(*delta));
                            let mut raw = varnum(t);
                            raw.extend(varnum(len as u64));
                            raw.extend(v);
                            c[at] = Node::Raw(raw);
                        }
                    }
                    Mutation::Revalue(_, _, v) if at < c.len() => match &c[at] {
                        Node::Leaf(t, _) | Node::Branch(t, _) => c[at] = Node::Leaf(*t, v.clone()),
                        Node::Raw(_) => {}
                    },
                    Mutation::LongLength(_, _, five) if at < c.len() => {
                        if let Some((t, v)) = parts(&c[at]) {
                            let mut raw = varnum(t);
                            if *five {
                                raw.push(254);
                                raw.extend((v.len() as u32).to_be_bytes());
                            } else {
                                raw.push(253);
                                raw.extend((v.len() as u16).to_be_bytes());
                            }
                            raw.extend(v);
                            c[at] = Node::Raw(raw);
                        }
                    }
                    _ => {}
                }
                return true;
            }
            *k -= 1;
            if edit(c, k, m, i, typ, len) {
                return true;
            }
        }
    }
    false
}

/// A name component: mostly short generic ones, sometimes a digest, a number, a long TLV-TYPE,
/// or a value long enough for a three-byte TLV-LENGTH.
fn arb_component() -> impl Strategy<Value = (u16, Vec<u8>)> {
    prop_oneof![
        12 => proptest::collection::vec(any::<u8>(), 0..12).prop_map(|v| (8, v)),
        1 => proptest::collection::vec(any::<u8>(), 32).prop_map(|v| (1, v)),
        1 => (50u16..=58, 0u8..=255).prop_map(|(t, n)| (t, vec![n])),
        1 => (253u16..=0xFFFF, proptest::collection::vec(any::<u8>(), 0..4)).prop_map(|(t, v)| (t, v)),
        1 => (253usize..300).prop_map(|n| (8, vec![b'x'; n])),
    ]
}

fn arb_name(max: usize) -> impl Strategy<Value = NameBuf> {
    proptest::collection::vec(arb_component(), 0..max).prop_map(|cs| {
        let mut n = NameBuf::new();
        for (t, v) in cs {
            n.push(t, &v).unwrap();
        }
        n
    })
}

fn arb_interest() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![8 => arb_name(6), 1 => arb_name(40)],
        any::<(bool, bool)>(),
        prop_oneof![6 => Just(vec![]), 1 => proptest::collection::vec(arb_name(3), 1..3)],
        proptest::option::weighted(0.8, any::<u32>()),
        proptest::option::of(prop_oneof![0u64..300, any::<u64>()]),
        proptest::option::of(any::<u8>()),
        proptest::option::weighted(0.15, proptest::collection::vec(any::<u8>(), 0..20)),
        any::<bool>(),
    )
        .prop_map(|(name, (cbp, mbf), fh, nonce, life, hop, params, signed)| {
            let mut i = InterestRepr::new(name);
            if i.name.is_empty() {
                i.name.push_generic(b"x");
            }
            i.app_params = None;
            i.update_params_digest();
            i.can_be_prefix = cbp;
            i.must_be_fresh = mbf;
            i.forwarding_hint = fh;
            i.nonce = nonce;
            i.lifetime_ms = life;
            i.hop_limit = hop;
            if let Some(p) = params {
                if signed {
                    i.signature_info = Some(vec![0x1B, 1, 3]);
                    i.signature_value = Some(vec![7; 8]);
                }
                i.set_app_params(p);
            }
            i.to_vec().unwrap()
        })
}

fn arb_data() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![8 => arb_name(6), 1 => arb_name(40)],
        proptest::option::weighted(0.2, any::<u64>()),
        proptest::option::of(prop_oneof![0u64..70_000, any::<u64>()]),
        proptest::option::weighted(0.2, arb_component()),
        prop_oneof![
            1 => Just(None),
            6 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Some),
            2 => (250usize..1500).prop_map(|n| Some(vec![0x42; n])),
            1 => (65_536usize..65_600).prop_map(|n| Some(vec![0x42; n])),
        ],
        prop_oneof![
            3 => Just(Signature::DigestSha256),
            1 => proptest::collection::vec(any::<u8>(), 0..70).prop_map(|value| Signature::Raw {
                info: vec![0x1B, 0x01, 0x03, 0x1C, 0x02, 0x1D, 0x00],
                value,
            }),
            1 => Just(Signature::Raw {
                info: vec![0x1B, 0x02, 0x00, 0x05, 0xFD, 0x01, 0x00, 0x00],
                value: vec![1; 3],
            }),
        ],
    )
        .prop_map(|(name, ct, fresh, fbi, content, signature)| {
            let final_block_id = fbi.and_then(|(t, v)| {
                let mut n = NameBuf::new();
                n.push(t, &v).ok()?;
                n.as_name().get(0).map(ComponentBuf::from)
            });
            DataRepr {
                name,
                content_type: ct,
                freshness_ms: fresh,
                final_block_id,
                content,
                signature,
            }
            .to_vec()
            .unwrap()
        })
}

/// The rarer LP header fields: CachePolicy, TxSequence, HopCountTag, NonDiscovery, Acks.
type Rare = (
    Option<CachePolicy>,
    Option<u64>,
    Option<u64>,
    bool,
    Vec<u64>,
);

/// Optional LP header fields, mostly the usual ones.
#[derive(Clone, Debug)]
struct Lp {
    sequence: Option<u64>,
    frag: Option<(u64, u64)>,
    pit_token: Option<Vec<u8>>,
    nack: Option<NackReason>,
    next_hop: Option<u64>,
    incoming: Option<u64>,
    congestion_mark: Option<u64>,
    rare: Option<Rare>,
}

fn arb_lp() -> impl Strategy<Value = Lp> {
    let nack = prop_oneof![
        Just(NackReason::Unspecified),
        Just(NackReason::Congestion),
        Just(NackReason::Duplicate),
        Just(NackReason::NoRoute),
    ];
    (
        proptest::option::weighted(0.2, any::<u64>()),
        proptest::option::weighted(0.25, (1u64..5).prop_flat_map(|c| (0..c, Just(c)))),
        proptest::option::weighted(0.7, proptest::collection::vec(any::<u8>(), 1..=32)),
        proptest::option::weighted(0.2, nack),
        proptest::option::weighted(0.2, prop_oneof![0u64..300, any::<u64>()]),
        proptest::option::weighted(0.1, any::<u64>()),
        proptest::option::weighted(0.1, 0u64..3),
        proptest::option::weighted(
            0.1,
            (
                proptest::option::of(Just(CachePolicy::NoCache)),
                proptest::option::of(any::<u64>()),
                proptest::option::of(0u64..10),
                any::<bool>(),
                proptest::collection::vec(any::<u64>(), 0..3),
            ),
        ),
    )
        .prop_map(
            |(sequence, frag, pit_token, nack, next_hop, incoming, congestion_mark, rare)| Lp {
                sequence,
                frag,
                pit_token,
                nack,
                next_hop,
                incoming,
                congestion_mark,
                rare,
            },
        )
}

impl Lp {
    fn encode(&self, fragment: Option<&[u8]>) -> Vec<u8> {
        let (cache_policy, tx_sequence, hop_count, non_discovery, acks) =
            self.rare.clone().unwrap_or_default();
        let h = LpHeaders {
            sequence: self.sequence,
            frag_index: self.frag.map(|f| f.0),
            frag_count: self.frag.map(|f| f.1),
            pit_token: self.pit_token.as_deref(),
            nack: self.nack,
            next_hop_face_id: self.next_hop,
            incoming_face_id: self.incoming,
            congestion_mark: self.congestion_mark,
            cache_policy,
            tx_sequence,
            hop_count,
            non_discovery,
            acks: &acks,
            ..LpHeaders::default()
        };
        lp(&h, fragment)
    }
}

/// A valid frame: a bare Interest or Data, one in an LpPacket, or an IDLE LpPacket.
fn arb_frame() -> impl Strategy<Value = Vec<u8>> {
    let packet = prop_oneof![arb_interest(), arb_data()];
    prop_oneof![
        2 => packet.clone(),
        3 => (arb_lp(), packet).prop_map(|(h, p)| h.encode(Some(&p))),
        1 => arb_lp().prop_map(|h| h.encode(None)),
    ]
}

/// A frame, valid or mutated (structurally and bytewise), possibly with trailing bytes.
fn arb_input() -> impl Strategy<Value = Vec<u8>> {
    (
        arb_frame(),
        proptest::collection::vec(arb_mutation(), 0..4),
        prop_oneof![6 => Just(vec![]), 1 => proptest::collection::vec(0u8..2, 1..4)],
    )
        .prop_map(|(mut frame, mutations, tail)| {
            for m in &mutations {
                mutate(&mut frame, m);
            }
            frame.extend_from_slice(&tail);
            frame
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Valid and mutated packets: every decoder returns what its general decoder does.
    #[test]
    fn fast_paths_agree_on_mutated_packets(frame in arb_input()) {
        fast_paths_agree(&frame);
    }

    /// Arbitrary bytes behind a plausible first byte.
    #[test]
    fn fast_paths_agree_on_arbitrary_bytes(
        first in prop_oneof![Just(5u8), Just(6), Just(100)],
        rest in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut frame = vec![first, rest.len() as u8];
        frame.extend_from_slice(&rest);
        fast_paths_agree(&frame);
    }
}

/// The inputs of `fast_paths_agree_on_mutated_packets` reach both sides of the fast paths'
/// guards: for each of Interest, Data and LpPacket, many are taken by the fast path, many
/// valid ones are left to the general decoder, and many are rejected.
#[test]
fn mutated_packets_reach_both_sides_of_the_guards() {
    let mut runner = TestRunner::deterministic();
    let strategy = arb_input();
    // [taken, valid but general, invalid] for Interest, Data, LpPacket.
    let mut seen = [[0usize; 3]; 3];
    // [straight to a decoder, not] for the frames' and Fragments' TLV headers.
    let mut headers = [[0usize; 2]; 2];
    // [read by `Packet::decode_usual`, valid but not] for the frames that decode.
    let mut usual = [0usize; 2];
    let n = 3000;
    for _ in 0..n {
        let frame = strategy.new_tree(&mut runner).unwrap().current();
        let taken = fast_paths_agree(&frame);
        headers[0][usize::from(!taken.frame)] += 1;
        if Packet::decode(&frame).is_ok() {
            usual[usize::from(!taken.usual)] += 1;
        }
        if let Ok(Packet::Lp(lp)) = Packet::decode(&frame)
            && lp.fragment().is_some()
        {
            headers[1][usize::from(!taken.fragment)] += 1;
        }
        let Ok(t) = Reader::new(&frame).read() else {
            continue;
        };
        let (kind, fast, ok) = match t.typ {
            tt::INTEREST => (0, taken.interest, Interest::from_tlv(t).is_ok()),
            tt::DATA => (1, taken.data, Data::from_tlv(t).is_ok()),
            tt::LP_PACKET => (2, taken.lp, LpPacket::from_tlv(t).is_ok()),
            _ => continue,
        };
        seen[kind][if fast {
            0
        } else if ok {
            1
        } else {
            2
        }] += 1;
    }
    for (kind, counts) in ["Interest", "Data", "LpPacket"].iter().zip(seen) {
        assert!(
            counts.iter().all(|&c| c >= n / 50),
            "{kind}: [fast, general, rejected] = {counts:?}"
        );
    }
    assert!(
        usual.iter().all(|&c| c >= n / 50),
        "frames: [read by decode_usual, not] = {usual:?}"
    );
    for (kind, counts) in ["frame", "Fragment"].iter().zip(headers) {
        assert!(
            counts.iter().all(|&c| c >= n / 50),
            "{kind} headers: [straight, general] = {counts:?}"
        );
    }
}
