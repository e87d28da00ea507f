//! Names and packets: request parsing, command Interests, response Data, dataset segments.

use ndx_codec::{Data, Interest, NameBuf, signature_type};
use ndx_nfd::*;

mod common;
use common::{name, register_interest};

/// `/scope/nfd/module/verb` followed by `arg` as a GenericNameComponent.
fn with_arg(prefix: &str, arg: &[u8]) -> NameBuf {
    let mut n = name(prefix);
    n.push_generic(arg);
    n
}

#[test]
fn management_prefixes() {
    for (uri, want) in [
        ("/localhost/nfd/rib/list", Some(Scope::Localhost)),
        ("/localhop/nfd/rib/register", Some(Scope::Localhop)),
        ("/localhost/nfd", Some(Scope::Localhost)),
        ("/localhost/nfdx/rib/list", None),
        ("/localhost", None),
        ("/", None),
        ("/example/nfd/rib/list", None),
        ("/nfd/localhost/rib/list", None),
        // Typed components with the right bytes are not the management prefix.
        ("/localhost/32=nfd/rib/list", None),
    ] {
        assert_eq!(is_management(&name(uri).as_name()), want, "{uri}");
    }
}

#[test]
fn requests() {
    let r = parse_request(&name("/localhost/nfd/faces/list").as_name()).unwrap();
    assert_eq!(
        r,
        Request {
            scope: Scope::Localhost,
            module: "faces".into(),
            verb: "list".into(),
            params: None,
            filter: None,
        }
    );
    // A dataset's later segment: no argument.
    let r = parse_request(&name("/localhost/nfd/rib/list/v=7/seg=2").as_name()).unwrap();
    assert_eq!(
        (r.module.as_str(), r.verb.as_str(), r.params),
        ("rib", "list", None)
    );
    // A command with ControlParameters.
    let p = ControlParameters {
        name: Some(name("/a")),
        ..ControlParameters::default()
    };
    let n = with_arg("/localhop/nfd/rib/register", &p.encode());
    let r = parse_request(&n.as_name()).unwrap();
    assert_eq!((r.scope, r.params), (Scope::Localhop, Some(p.clone())));
    // The pre-v0.3 signed form: four more components after the parameters.
    let mut old = n.clone();
    for c in [&[0u8; 8][..], &[1; 8], &[0x16, 3, 0x1b, 1, 0], &[0x17, 0]] {
        old.push_generic(c);
    }
    assert_eq!(parse_request(&old.as_name()).unwrap().params, Some(p));
    // faces/query with a FaceQueryFilter.
    let q = FaceQueryFilter {
        uri_scheme: Some("udp4".into()),
        ..FaceQueryFilter::default()
    };
    let r = parse_request(&with_arg("/localhost/nfd/faces/query", &q.encode()).as_name()).unwrap();
    assert_eq!((r.params, r.filter), (None, Some(q)));
}

#[test]
fn bad_requests() {
    assert_eq!(
        parse_request(&name("/example/a/b/c").as_name()).unwrap_err(),
        MgmtError::NotManagement
    );
    assert_eq!(
        parse_request(&name("/localhost/nfd/rib").as_name()).unwrap_err(),
        MgmtError::TooShort(3)
    );
    assert_eq!(
        parse_request(&name("/localhost/nfd/seg=1/list").as_name()).unwrap_err(),
        MgmtError::BadComponent("module")
    );
    let mut n = name("/localhost/nfd/rib");
    n.push_generic(&[0xff]);
    assert_eq!(
        parse_request(&n.as_name()).unwrap_err(),
        MgmtError::BadComponent("verb")
    );
    // An argument that is not a ControlParameters: wrong type, empty, malformed, bad field.
    let resp = ControlResponse::new(200, "OK").encode();
    assert!(matches!(
        parse_request(&with_arg("/localhost/nfd/rib/register", &resp).as_name()).unwrap_err(),
        MgmtError::WrongType {
            expected: "ControlParameters",
            found: 0x65,
            ..
        }
    ));
    assert!(matches!(
        parse_request(&with_arg("/localhost/nfd/rib/register", &[]).as_name()).unwrap_err(),
        MgmtError::Tlv(_)
    ));
    assert!(matches!(
        parse_request(&with_arg("/localhost/nfd/rib/register", b"hello").as_name()).unwrap_err(),
        MgmtError::Tlv(_) | MgmtError::WrongType { .. }
    ));
    assert!(matches!(
        parse_request(&with_arg("/localhost/nfd/rib/register", &[0x68, 3, 0x72, 0]).as_name())
            .unwrap_err(),
        MgmtError::Tlv(_)
    ));
    assert!(matches!(
        parse_request(
            &with_arg("/localhost/nfd/rib/register", &[0x68, 3, 0x6a, 1, 1, 0]).as_name()
        )
        .unwrap_err(),
        MgmtError::TrailingBytes { .. }
    ));
}

#[test]
fn command_interests_are_signed_v03_interests() {
    let (p, wire) = register_interest("/videos", 7);
    let i = Interest::decode(&wire).unwrap();
    assert!(command_signature_ok(&i));
    assert!(i.params_digest_ok());
    assert_eq!(i.app_params(), Some(&[][..]));
    assert_eq!(i.lifetime_ms(), Some(COMMAND_LIFETIME_MS));
    assert_eq!(i.nonce(), Some(7));
    // SignatureInfo: DigestSha256, SignatureNonce, SignatureTime.
    let info = i.signature_info().unwrap();
    assert_eq!(&info[..3], &[0x1b, 1, 0]);
    assert_eq!(&info[3..9], &[0x26, 4, 0, 0, 0, 7]);
    assert_eq!(&info[9..], &[0x28, 8, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0]);
    assert_eq!(i.signature_value().unwrap().len(), 32);
    let r = parse_request(&i.name()).unwrap();
    assert_eq!((r.module.as_str(), r.verb.as_str()), ("rib", "register"));
    assert_eq!(r.params, Some(p.clone()));
    // Another time or nonce gives another name (the digest covers the signature).
    let other = command_interest(
        Scope::Localhost,
        "rib",
        "register",
        &p,
        7,
        1_700_000_000_001,
    );
    assert_ne!(Interest::decode(&other).unwrap().name(), i.name());
    // localhop.
    let hop = command_interest(Scope::Localhop, "rib", "register", &p, 7, 1);
    let hop = Interest::decode(&hop).unwrap();
    assert_eq!(is_management(&hop.name()), Some(Scope::Localhop));
    // Unsigned or tampered Interests fail the check.
    let mut unsigned = i.to_repr();
    unsigned.signature_info = None;
    unsigned.signature_value = None;
    unsigned.update_params_digest();
    let w = unsigned.to_vec().unwrap();
    assert!(!command_signature_ok(&Interest::decode(&w).unwrap()));
    let mut tampered = i.to_repr();
    tampered.signature_value = Some(vec![0; 32]);
    tampered.update_params_digest();
    let w = tampered.to_vec().unwrap();
    assert!(!command_signature_ok(&Interest::decode(&w).unwrap()));
    let mut other_type = i.to_repr();
    other_type.signature_info = Some(vec![0x1b, 1, 3]);
    other_type.update_params_digest();
    let w = other_type.to_vec().unwrap();
    assert!(!command_signature_ok(&Interest::decode(&w).unwrap()));
}

#[test]
fn command_response_data_answers_the_interest() {
    let wire = command_interest(
        Scope::Localhost,
        "rib",
        "register",
        &ControlParameters::default(),
        1,
        2,
    );
    let i = Interest::decode(&wire).unwrap();
    let resp = ControlResponse::new(status::BAD_PARAMS, "ControlParameters is incorrect");
    let d = command_response_data(&i.name(), &resp);
    let d = Data::decode(&d).unwrap();
    assert_eq!(d.name(), i.name());
    assert!(d.matches_name(&i.name(), false));
    assert_eq!(d.freshness_ms(), Some(MGMT_FRESHNESS_MS));
    assert_eq!(d.signature_type(), signature_type::DIGEST_SHA256);
    assert!(d.digest_signature_ok());
    assert_eq!(parse_command_response(d.content()).unwrap(), resp);
}

#[test]
fn dataset_segmentation() {
    let prefix = name("/localhost/nfd/faces/list");
    // Empty: one empty segment.
    let segs = dataset_segments(&prefix.as_name(), 3, &[], DATASET_SEGMENT_SIZE);
    assert_eq!(segs.len(), 1);
    let d = Data::decode(&segs[0]).unwrap();
    assert_eq!(d.name().to_string(), "/localhost/nfd/faces/list/v=3/seg=0");
    assert!(d.has_content() && d.content().is_empty());
    assert_eq!(d.final_block_id().unwrap().as_segment(), Some(0));
    // 10 bytes in 4-byte segments: 4 + 4 + 2.
    let content: Vec<u8> = (0..10).collect();
    let segs = dataset_segments(&prefix.as_name(), 1_700_000_000_000, &content, 4);
    assert_eq!(segs.len(), 3);
    let mut joined = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let d = Data::decode(s).unwrap();
        let n = d.name();
        assert!(prefix.as_name().is_prefix_of(&n));
        assert_eq!(n.len(), prefix.len() + 2);
        assert_eq!(
            n.get(prefix.len()).unwrap().as_version(),
            Some(1_700_000_000_000)
        );
        assert_eq!(n.last().unwrap().as_segment(), Some(i as u64));
        assert_eq!(d.final_block_id().unwrap().as_segment(), Some(2));
        assert_eq!(d.freshness_ms(), Some(1000));
        assert!(d.digest_signature_ok());
        joined.extend_from_slice(d.content());
    }
    assert_eq!(joined, content);
    // Exact multiple: no empty trailing segment; seg_size 0 is treated as 1.
    assert_eq!(dataset_segments(&prefix.as_name(), 1, &content, 5).len(), 2);
    assert_eq!(
        dataset_segments(&prefix.as_name(), 1, &content[..3], 0).len(),
        3
    );
    // A real dataset round trip through segments.
    let faces: Vec<FaceStatus> = (1..=100)
        .map(|id| FaceStatus {
            face_id: id,
            uri: format!("udp4://192.0.2.{id}:6363"),
            local_uri: "udp4://192.0.2.254:6363".into(),
            ..FaceStatus::default()
        })
        .collect();
    let mut content = Vec::new();
    faces.iter().for_each(|f| f.encode_into(&mut content));
    let segs = dataset_segments(&prefix.as_name(), 9, &content, 1000);
    let joined: Vec<u8> = segs
        .iter()
        .flat_map(|s| Data::decode(s).unwrap().content().to_vec())
        .collect();
    assert_eq!(FaceStatus::decode_all(&joined).unwrap(), faces);
}
