//! Property tests: encode→decode identity for every packet type, panic-freedom on arbitrary
//! input, URI round trips, and canonical order against a reference model.

use std::cmp::Ordering;

use ndx_codec::{
    CachePolicy, ComponentBuf, DataRepr, InterestRepr, LpHeaders, LpPacket, NackReason, Name,
    NameBuf, Packet, Signature, tree, types,
};
use proptest::prelude::*;

fn arb_component() -> impl Strategy<Value = (u16, Vec<u8>)> {
    prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..12).prop_map(|v| (8, v)),
        1 => proptest::collection::vec(any::<u8>(), 32).prop_map(|v| (1, v)),
        1 => (prop_oneof![Just(50u16), Just(52), Just(54), Just(56), Just(58)], any::<u64>())
            .prop_map(|(t, n)| {
                let be = n.to_be_bytes();
                let len = ndx_codec::nni_len(n);
                (t, be[8 - len..].to_vec())
            }),
        1 => (3u16..=0xFFFF, proptest::collection::vec(any::<u8>(), 0..6))
            .prop_filter("digest types need 32 bytes", |(t, _)| *t != 1 && *t != 2),
        1 => proptest::collection::vec(prop_oneof![Just(b'.'), Just(b'a')], 0..5).prop_map(|v| (8, v)),
    ]
}

fn arb_name() -> impl Strategy<Value = NameBuf> {
    proptest::collection::vec(arb_component(), 0..7).prop_map(|cs| {
        let mut n = NameBuf::new();
        for (t, v) in cs {
            n.push(t, &v).expect("valid component");
        }
        n
    })
}

fn arb_interest() -> impl Strategy<Value = InterestRepr> {
    (
        arb_name(),
        any::<(bool, bool)>(),
        proptest::collection::vec(arb_name(), 0..3),
        proptest::option::of(any::<u32>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u8>()),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
        proptest::option::of((
            proptest::collection::vec(any::<u8>(), 0..10),
            proptest::collection::vec(any::<u8>(), 0..10),
        )),
    )
        .prop_map(|(name, (cbp, mbf), fh, nonce, life, hop, params, sig)| {
            let mut name = name;
            if name.is_empty() {
                name.push_generic(b"x");
            }
            let mut i = InterestRepr::new(name);
            // Digest components in a name without parameters are not allowed: strip them.
            i.app_params = None;
            i.update_params_digest();
            i.can_be_prefix = cbp;
            i.must_be_fresh = mbf;
            i.forwarding_hint = fh;
            i.nonce = nonce;
            i.lifetime_ms = life;
            i.hop_limit = hop;
            if let Some(p) = params {
                if let Some((si, sv)) = sig {
                    i.signature_info = Some(si);
                    i.signature_value = Some(sv);
                }
                i.set_app_params(p);
            }
            i
        })
}

fn arb_data() -> impl Strategy<Value = DataRepr> {
    (
        arb_name(),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300)),
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(
            |(name, ct, fresh, fbi, content, digest_sig, sigval)| DataRepr {
                name,
                content_type: ct,
                freshness_ms: fresh,
                final_block_id: fbi.map(ComponentBuf::segment),
                content,
                signature: if digest_sig {
                    Signature::DigestSha256
                } else {
                    // SignatureType 3 (ECDSA) + a KeyLocator-ish opaque element.
                    Signature::Raw {
                        info: vec![0x1b, 0x01, 0x03, 0x1c, 0x02, 0x1d, 0x00],
                        value: sigval,
                    }
                },
            },
        )
}

#[derive(Debug, Clone)]
struct OwnedLp {
    sequence: Option<u64>,
    frag: Option<(u64, u64)>,
    pit_token: Option<Vec<u8>>,
    nack: Option<NackReason>,
    congestion_mark: Option<u64>,
    incoming: Option<u64>,
    next_hop: Option<u64>,
    cache_policy: Option<CachePolicy>,
    acks: Vec<u64>,
    tx_sequence: Option<u64>,
    non_discovery: bool,
    fragment: Option<Vec<u8>>,
}

impl OwnedLp {
    fn headers(&self) -> LpHeaders<'_> {
        LpHeaders {
            sequence: self.sequence,
            frag_index: self.frag.map(|f| f.0),
            frag_count: self.frag.map(|f| f.1),
            pit_token: self.pit_token.as_deref(),
            nack: self.nack,
            congestion_mark: self.congestion_mark,
            incoming_face_id: self.incoming,
            next_hop_face_id: self.next_hop,
            cache_policy: self.cache_policy,
            acks: &self.acks,
            tx_sequence: self.tx_sequence,
            non_discovery: self.non_discovery,
            ..LpHeaders::default()
        }
    }
}

fn arb_lp() -> impl Strategy<Value = OwnedLp> {
    (
        (
            proptest::option::of(any::<u64>()),
            proptest::option::of((1u64..64).prop_flat_map(|c| (0..c, Just(c)))),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 1..=32)),
            proptest::option::of(prop_oneof![
                Just(NackReason::Unspecified),
                Just(NackReason::Congestion),
                Just(NackReason::Duplicate),
                Just(NackReason::NoRoute),
            ]),
            proptest::option::of(any::<u64>()),
            proptest::option::of(any::<u64>()),
        ),
        (
            proptest::option::of(any::<u64>()),
            proptest::option::of(prop_oneof![
                Just(CachePolicy::NoCache),
                (2u64..1000).prop_map(CachePolicy::Other)
            ]),
            proptest::collection::vec(any::<u64>(), 0..3),
            proptest::option::of(any::<u64>()),
            any::<bool>(),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..200)),
        ),
    )
        .prop_map(
            |(
                (sequence, frag, pit_token, nack, congestion_mark, incoming),
                (next_hop, cache_policy, acks, tx_sequence, non_discovery, fragment),
            )| OwnedLp {
                sequence,
                frag,
                pit_token,
                nack,
                congestion_mark,
                incoming,
                next_hop,
                cache_policy,
                acks,
                tx_sequence,
                non_discovery,
                fragment,
            },
        )
}

/// Reference canonical order: (type, length, bytes) per component, shorter name first.
fn reference_cmp(a: &NameBuf, b: &NameBuf) -> Ordering {
    let key = |n: &NameBuf| {
        n.as_name()
            .components()
            .map(|c| (c.typ(), c.value().len(), c.value().to_vec()))
            .collect::<Vec<_>>()
    };
    key(a).cmp(&key(b))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn interest_round_trip(i in arb_interest()) {
        let wire = i.to_vec().unwrap();
        prop_assert_eq!(wire.len(), i.encoded_len());
        let Packet::Interest(v) = Packet::decode(&wire).unwrap() else { panic!("not an Interest") };
        prop_assert_eq!(v.to_repr(), i.clone());
        prop_assert!(v.params_digest_ok());
        // Encoding into a buffer one byte short fails cleanly.
        let mut small = vec![0; wire.len() - 1];
        prop_assert!(i.encode(&mut small).is_err());
    }

    #[test]
    fn data_round_trip(d in arb_data()) {
        let wire = d.to_vec().unwrap();
        prop_assert_eq!(wire.len(), d.encoded_len());
        let Packet::Data(v) = Packet::decode(&wire).unwrap() else { panic!("not a Data") };
        let back = v.to_repr();
        prop_assert_eq!(&back.name, &d.name);
        prop_assert_eq!(back.content_type, d.content_type);
        prop_assert_eq!(back.freshness_ms, d.freshness_ms);
        prop_assert_eq!(&back.final_block_id, &d.final_block_id);
        prop_assert_eq!(&back.content, &d.content);
        match &d.signature {
            Signature::DigestSha256 => prop_assert!(v.digest_signature_ok()),
            raw => prop_assert_eq!(&back.signature, raw),
        }
        // Re-encoding the decoded repr reproduces the bytes exactly.
        prop_assert_eq!(back.to_vec().unwrap(), wire.clone());
        // The full name matches by implicit digest, a wrong digest does not.
        let full = v.full_name();
        prop_assert!(v.matches_name(&full.as_name(), false));
        let mut wrong = d.name.clone();
        wrong.push(1, &[0u8; 32]).unwrap();
        prop_assert!(!v.matches_name(&wrong.as_name(), false) || v.implicit_digest() == [0; 32]);
    }

    #[test]
    fn lp_round_trip(lp in arb_lp()) {
        let h = lp.headers();
        let mut buf = vec![0; h.encoded_len(lp.fragment.as_ref().map(Vec::len))];
        let n = h.encode(lp.fragment.as_deref(), &mut buf).unwrap();
        prop_assert_eq!(n, buf.len());
        let v = LpPacket::decode(&buf).unwrap();
        let mut got = v.headers();
        let acks: Vec<u64> = v.acks().collect();
        prop_assert_eq!(&acks, &lp.acks);
        got.acks = &[];
        let mut want = h;
        want.acks = &[];
        prop_assert_eq!(got, want);
        prop_assert_eq!(v.fragment(), lp.fragment.as_deref());
    }

    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let len = bytes.len();
        for r in [
            Packet::decode(&bytes).err(),
            Name::decode(&bytes).err(),
            tree::walk(&bytes, &mut |_| {}).err(),
        ].into_iter().flatten() {
            prop_assert!(r.offset <= len, "offset {} past {}", r.offset, len);
        }
    }

    #[test]
    fn mutated_packets_never_panic(i in arb_interest(), at in any::<prop::sample::Index>(), b in any::<u8>()) {
        let mut wire = i.to_vec().unwrap();
        let k = at.index(wire.len());
        wire[k] = b;
        let _ = Packet::decode(&wire);
        let _ = tree::walk(&wire, &mut |_| {});
        wire.truncate(k);
        prop_assert!(Packet::decode(&wire).is_err());
    }

    #[test]
    fn uri_round_trip(n in arb_name()) {
        let s = n.to_string();
        let back = NameBuf::from_uri(&s).unwrap();
        prop_assert_eq!(&back, &n, "uri {}", s);
        prop_assert_eq!(back.to_string(), s);
    }

    #[test]
    fn uri_parse_never_panics(s in "\\PC{0,40}") {
        if let Ok(n) = NameBuf::from_uri(&s) {
            prop_assert_eq!(NameBuf::from_uri(&n.to_string()).unwrap(), n);
        }
    }

    #[test]
    fn canonical_order_matches_reference(a in arb_name(), b in arb_name(), c in arb_name()) {
        let (na, nb, nc) = (a.as_name(), b.as_name(), c.as_name());
        prop_assert_eq!(na.cmp(&nb), reference_cmp(&a, &b));
        prop_assert_eq!(na.cmp(&nb), nb.cmp(&na).reverse());
        prop_assert_eq!(na.cmp(&nb) == Ordering::Equal, na == nb);
        if na <= nb && nb <= nc {
            prop_assert!(na <= nc);
        }
    }

    #[test]
    fn prefixes(n in arb_name(), k in 0usize..8) {
        let name = n.as_name();
        let p = name.prefix(k);
        prop_assert_eq!(p.len(), k.min(name.len()));
        prop_assert!(p.is_prefix_of(&name));
        prop_assert!(p <= name);
        prop_assert_eq!(p.components().collect::<Vec<_>>(), name.components().take(k).collect::<Vec<_>>());
    }

    #[test]
    fn split_last_is_prefix_and_last(n in arb_name()) {
        let name = n.as_name();
        match name.split_last() {
            None => prop_assert!(name.is_empty()),
            Some((head, last)) => {
                prop_assert_eq!(head, name.prefix(name.len() - 1));
                prop_assert_eq!(head.len(), name.len() - 1);
                prop_assert_eq!(Some(last), name.last());
            }
        }
    }
}

#[test]
fn nack_must_carry_an_interest() {
    let d = DataRepr::new(NameBuf::from_uri("/a").unwrap(), vec![1])
        .to_vec()
        .unwrap();
    let h = LpHeaders {
        nack: Some(NackReason::NoRoute),
        ..LpHeaders::default()
    };
    let mut buf = vec![0; h.encoded_len(Some(d.len()))];
    h.encode(Some(&d), &mut buf).unwrap();
    let lp = LpPacket::decode(&buf).unwrap();
    assert!(lp.network_packet().is_err());
    assert_eq!(types::type_name(0, types::LP_PACKET), Some("LpPacket"));
}

#[test]
fn raw_signature_info_must_start_with_signature_type() {
    let mut d = DataRepr::new(NameBuf::from_uri("/a").unwrap(), vec![]);
    d.signature = Signature::Raw {
        info: vec![0x1c, 0x00],
        value: vec![1],
    };
    assert!(matches!(
        d.to_vec().unwrap_err().kind,
        ndx_codec::ErrorKind::Unencodable(_)
    ));
}
