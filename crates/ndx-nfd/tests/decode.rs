//! Decoders: round trips of every element and every way to refuse input.

use ndx_nfd::*;

mod common;
use common::name;

/// Wraps `value` in a TLV of type `typ` (one-byte header forms only; tests keep values short).
fn tlv(typ: u8, value: &[u8]) -> Vec<u8> {
    assert!(value.len() < 253);
    [&[typ, value.len() as u8][..], value].concat()
}

/// Asserts that `v` encodes (with `encode_into`) to a TLV that `decode` reads back as `v`.
fn assert_round_trip<T: PartialEq + std::fmt::Debug>(
    v: &T,
    encode_into: fn(&T, &mut Vec<u8>),
    decode: fn(&[u8]) -> Result<T, MgmtError>,
) {
    let mut w = Vec::new();
    encode_into(v, &mut w);
    assert_eq!(decode(&w).unwrap(), *v);
}

fn full_params() -> ControlParameters {
    ControlParameters {
        name: Some(name("/a/seg=3")),
        face_id: Some(u64::MAX),
        uri: Some("udp4://[2001:db8::1]:6363".into()),
        local_uri: Some("dev://eth0".into()),
        origin: Some(origin::NLSR),
        cost: Some(0),
        capacity: Some(300),
        count: Some(70000),
        flags: Some(route_flags::CHILD_INHERIT | route_flags::CAPTURE),
        mask: Some(3),
        strategy: Some(name("/localhost/nfd/strategy/multicast/v=4")),
        expiration_period: Some(0),
        face_persistency: Some(face_persistency::ON_DEMAND),
        base_congestion_marking_interval: Some(1),
        default_congestion_threshold: Some(2),
        mtu: Some(9000),
    }
}

#[test]
fn every_element_round_trips() {
    let p = full_params();
    assert_eq!(ControlParameters::decode(&p.encode()).unwrap(), p);
    for r in [
        ControlResponse::ok(p.clone()),
        ControlResponse::new(status::NOT_IMPLEMENTED, "Unknown verb"),
        ControlResponse::new(u32::MAX, "ünïcode"),
        ControlResponse::new(0, ""),
    ] {
        assert_eq!(ControlResponse::decode(&r.encode()).unwrap(), r);
    }
    let f = FaceStatus {
        face_id: 1,
        uri: "internal://".into(),
        local_uri: "internal://".into(),
        n_in_bytes: u64::MAX,
        ..FaceStatus::default()
    };
    assert_round_trip(&f, FaceStatus::encode_into, FaceStatus::decode);
    let e = RibEntry {
        name: name("/"),
        routes: vec![],
    };
    assert_round_trip(&e, RibEntry::encode_into, RibEntry::decode);
    let e = FibEntry {
        name: name("/a"),
        nexthops: vec![],
    };
    assert_round_trip(&e, FibEntry::encode_into, FibEntry::decode);
    let s = StrategyChoice {
        name: name("/a"),
        strategy: name("/s"),
    };
    assert_round_trip(&s, StrategyChoice::encode_into, StrategyChoice::decode);
    assert_round_trip(
        &ForwarderStatus::default(),
        ForwarderStatus::encode_into,
        ForwarderStatus::decode,
    );
    assert_round_trip(&CsInfo::default(), CsInfo::encode_into, CsInfo::decode);
    assert_round_trip(
        &FaceEventNotification::new(face_event_kind::DOWN, &f),
        FaceEventNotification::encode_into,
        FaceEventNotification::decode,
    );
    let q = FaceQueryFilter {
        face_id: Some(9),
        uri: Some("fd://3".into()),
        local_uri: Some("unix:///x".into()),
        face_persistency: Some(1),
        link_type: Some(0),
        ..FaceQueryFilter::default()
    };
    assert_eq!(FaceQueryFilter::decode(&q.encode()).unwrap(), q);
    // Empty datasets.
    assert!(FaceStatus::decode_all(&[]).unwrap().is_empty());
    assert!(RibEntry::decode_all(&[]).unwrap().is_empty());
}

#[test]
fn any_order_is_read() {
    // Cost, then Name, then FaceId.
    let wire = tlv(
        0x68,
        &[tlv(0x6a, &[5]), name("/z").to_tlv(), tlv(0x69, &[1, 0])].concat(),
    );
    let p = ControlParameters::decode(&wire).unwrap();
    assert_eq!((p.cost, p.face_id), (Some(5), Some(256)));
    assert_eq!(p.name, Some(name("/z")));
    // Every NonNegativeInteger width.
    for (v, want) in [
        (&[7][..], 7),
        (&[1, 2], 0x102),
        (&[0, 0, 1, 0], 256),
        (&[0, 0, 0, 1, 0, 0, 0, 0], 1 << 32),
    ] {
        let p = ControlParameters::decode(&tlv(0x68, &tlv(0x89, v))).unwrap();
        assert_eq!(p.mtu, Some(want));
    }
}

#[test]
fn unknown_elements() {
    // Non-critical (even, >= 32) skipped, anywhere.
    let wire = tlv(
        0x68,
        &[tlv(0xfc, b"x"), tlv(0x6a, &[5]), tlv(0x74, &[])].concat(),
    );
    assert_eq!(ControlParameters::decode(&wire).unwrap().cost, Some(5));
    // Critical: odd, or below 32.
    for typ in [0x71, 0x99, 0x0a, 0x1f] {
        let wire = tlv(0x68, &[tlv(0x6a, &[5]), tlv(typ, &[1])].concat());
        assert_eq!(
            ControlParameters::decode(&wire).unwrap_err(),
            MgmtError::UnknownCritical {
                typ: u64::from(typ),
                context: "ControlParameters",
                offset: 5
            }
        );
    }
    // Inside a nested element the context says where.
    let route = tlv(
        0x81,
        &[
            tlv(0x69, &[1]),
            tlv(0x6f, &[0]),
            tlv(0x6a, &[0]),
            tlv(0x6c, &[1]),
            tlv(0x73, &[]),
        ]
        .concat(),
    );
    let entry = tlv(0x80, &[name("/a").to_tlv(), route].concat());
    assert!(matches!(
        RibEntry::decode(&entry).unwrap_err(),
        MgmtError::UnknownCritical {
            typ: 0x73,
            context: "Route",
            ..
        }
    ));
    // ndnd's general-status extensions are skipped, odd ones included.
    let mut g = Vec::new();
    ForwarderStatus::default().encode_into(&mut g);
    g.extend_from_slice(&tlv(0xc9, &[4]));
    g.extend_from_slice(&tlv(0xd0, &[4]));
    assert_eq!(
        ForwarderStatus::decode(&g).unwrap(),
        ForwarderStatus::default()
    );
}

#[test]
fn malformed_input_is_refused() {
    // Empty, truncated, bad VAR-NUMBER, trailing bytes.
    assert!(matches!(
        ControlParameters::decode(&[]).unwrap_err(),
        MgmtError::Tlv(_)
    ));
    let good = full_params().encode();
    for cut in 1..good.len() {
        assert!(
            ControlParameters::decode(&good[..cut]).is_err(),
            "truncated at {cut}"
        );
    }
    assert!(matches!(
        ControlParameters::decode(&[0x68, 0xfd, 0x00, 0x01, 0]).unwrap_err(),
        MgmtError::Tlv(_)
    ));
    assert_eq!(
        ControlParameters::decode(&[0x68, 0, 0]).unwrap_err(),
        MgmtError::TrailingBytes {
            what: "ControlParameters",
            len: 1
        }
    );
    // An inner element running past its parent.
    assert!(matches!(
        ControlParameters::decode(&[0x68, 3, 0x69, 5, 1]).unwrap_err(),
        MgmtError::Tlv(_)
    ));
}

#[test]
fn wrong_outer_type() {
    let resp = ControlResponse::new(200, "OK").encode();
    assert_eq!(
        ControlParameters::decode(&resp).unwrap_err(),
        MgmtError::WrongType {
            expected: "ControlParameters",
            expected_type: 0x68,
            found: 0x65,
            offset: 0
        }
    );
    assert!(matches!(
        ControlResponse::decode(&full_params().encode()).unwrap_err(),
        MgmtError::WrongType {
            expected: "ControlResponse",
            ..
        }
    ));
    assert!(matches!(
        CsInfo::decode(&tlv(0x81, &[])).unwrap_err(),
        MgmtError::WrongType { .. }
    ));
    assert!(matches!(
        FaceEventNotification::decode(&tlv(0x80, &[])).unwrap_err(),
        MgmtError::WrongType { .. }
    ));
}

#[test]
fn bad_values() {
    // NonNegativeInteger of 3 bytes.
    assert_eq!(
        ControlParameters::decode(&tlv(0x68, &tlv(0x6a, &[1, 2, 3]))).unwrap_err(),
        MgmtError::BadInteger {
            what: "Cost",
            len: 3,
            offset: 2
        }
    );
    // Empty NonNegativeInteger.
    assert!(matches!(
        ControlParameters::decode(&tlv(0x68, &tlv(0x69, &[]))).unwrap_err(),
        MgmtError::BadInteger {
            what: "FaceId",
            len: 0,
            ..
        }
    ));
    // Non-UTF-8 Uri and LocalUri.
    assert_eq!(
        ControlParameters::decode(&tlv(0x68, &tlv(0x72, &[0xff, 0xfe]))).unwrap_err(),
        MgmtError::NotUtf8 {
            what: "Uri",
            offset: 2
        }
    );
    assert!(matches!(
        ControlParameters::decode(&tlv(0x68, &tlv(0x81, &[0xc3]))).unwrap_err(),
        MgmtError::NotUtf8 {
            what: "LocalUri",
            ..
        }
    ));
    // A bad Name (component past its end), a Strategy without a Name.
    assert!(matches!(
        ControlParameters::decode(&tlv(0x68, &tlv(0x07, &[8, 5, b'a']))).unwrap_err(),
        MgmtError::Tlv(_)
    ));
    assert_eq!(
        ControlParameters::decode(&tlv(0x68, &tlv(0x6b, &[]))).unwrap_err(),
        MgmtError::Missing {
            what: "Name",
            context: "Strategy"
        }
    );
    // Repeated element.
    assert_eq!(
        ControlParameters::decode(&tlv(0x68, &[tlv(0x6a, &[1]), tlv(0x6a, &[2])].concat()))
            .unwrap_err(),
        MgmtError::Duplicate {
            what: "Cost",
            context: "ControlParameters",
            offset: 5
        }
    );
    // A StatusCode beyond 32 bits.
    let wire = tlv(
        0x65,
        &[tlv(0x66, &[1, 0, 0, 0, 0, 0, 0, 0]), tlv(0x67, b"x")].concat(),
    );
    assert!(matches!(
        ControlResponse::decode(&wire).unwrap_err(),
        MgmtError::OutOfRange {
            what: "StatusCode",
            ..
        }
    ));
}

#[test]
fn control_response_structure() {
    // StatusText missing, StatusCode missing, swapped.
    assert_eq!(
        ControlResponse::decode(&tlv(0x65, &tlv(0x66, &[200]))).unwrap_err(),
        MgmtError::Missing {
            what: "StatusText",
            context: "ControlResponse"
        }
    );
    assert!(matches!(
        ControlResponse::decode(&tlv(0x65, &[])).unwrap_err(),
        MgmtError::Missing {
            what: "StatusCode",
            ..
        }
    ));
    let swapped = tlv(0x65, &[tlv(0x67, b"OK"), tlv(0x66, &[200])].concat());
    assert!(matches!(
        ControlResponse::decode(&swapped).unwrap_err(),
        MgmtError::OutOfOrder {
            what: "StatusCode",
            ..
        }
    ));
    // A body other than ControlParameters: skipped if non-critical, refused if critical.
    let other = tlv(
        0x65,
        &[tlv(0x66, &[200]), tlv(0x67, b"OK"), tlv(0x80, &[])].concat(),
    );
    assert_eq!(ControlResponse::decode(&other).unwrap().body, None);
    let other = tlv(
        0x65,
        &[tlv(0x66, &[200]), tlv(0x67, b"OK"), tlv(0x81, &[])].concat(),
    );
    assert!(ControlResponse::decode(&other).is_err());
    // Two bodies.
    let two = tlv(
        0x65,
        &[
            tlv(0x66, &[200]),
            tlv(0x67, b"OK"),
            tlv(0x68, &[]),
            tlv(0x68, &[]),
        ]
        .concat(),
    );
    assert!(matches!(
        ControlResponse::decode(&two).unwrap_err(),
        MgmtError::Duplicate { .. }
    ));
}

#[test]
fn missing_required_dataset_fields() {
    let mut w = Vec::new();
    FaceStatus::default().encode_into(&mut w);
    // Drop the last element (Flags: 6c 01 00) and fix the outer length.
    let inner = &w[2..w.len() - 3];
    assert_eq!(
        FaceStatus::decode(&tlv(0x80, inner)).unwrap_err(),
        MgmtError::Missing {
            what: "Flags",
            context: "FaceStatus"
        }
    );
    // A NextHopRecord without Cost.
    let e = tlv(
        0x80,
        &[name("/a").to_tlv(), tlv(0x81, &tlv(0x69, &[1]))].concat(),
    );
    assert_eq!(
        FibEntry::decode(&e).unwrap_err(),
        MgmtError::Missing {
            what: "Cost",
            context: "NextHopRecord"
        }
    );
    // A RibEntry without a Name.
    assert!(matches!(
        RibEntry::decode(&tlv(0x80, &[])).unwrap_err(),
        MgmtError::Missing { what: "Name", .. }
    ));
    // The general status without NfdVersion.
    assert!(matches!(
        ForwarderStatus::decode(&[]).unwrap_err(),
        MgmtError::Missing {
            context: "GeneralStatus",
            ..
        }
    ));
    // Unknown critical element between dataset entries.
    let mut w = Vec::new();
    CsInfo::default().encode_into(&mut w);
    assert!(FaceStatus::decode_all(&[tlv(0x81, &[]), tlv(0x82, &[])].concat()).is_err());
    assert!(FaceStatus::decode_all(&tlv(0x82, &[])).unwrap().is_empty());
}

/// Arbitrary bytes never panic any decoder (a cheap sweep; the codec's fuzz targets cover
/// the TLV reader itself).
#[test]
fn no_panics_on_garbage() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let seeds: Vec<Vec<u8>> = vec![
        full_params().encode(),
        ControlResponse::ok(full_params()).encode(),
        {
            let mut w = Vec::new();
            FaceStatus::default().encode_into(&mut w);
            w
        },
    ];
    for s in &seeds {
        for _ in 0..2000 {
            let mut b = s.clone();
            let flips = 1 + next() % 4;
            for _ in 0..flips {
                let i = (next() as usize) % b.len();
                b[i] = next() as u8;
            }
            let _ = ControlParameters::decode(&b);
            let _ = ControlResponse::decode(&b);
            let _ = FaceStatus::decode(&b);
            let _ = FaceStatus::decode_all(&b);
            let _ = RibEntry::decode_all(&b);
            let _ = FibEntry::decode_all(&b);
            let _ = StrategyChoice::decode_all(&b);
            let _ = ForwarderStatus::decode(&b);
            let _ = CsInfo::decode(&b);
            let _ = FaceEventNotification::decode(&b);
            let _ = FaceQueryFilter::decode(&b);
        }
    }
}
