//! Cross-checked vectors: encodings produced by python-ndn (`ndn.app_support.nfd_mgmt`),
//! decoded by us and, where python-ndn writes NFD's field order, re-encoded byte for byte.
//!
//! Every `PY_*` constant is one line of the output of
//! `/opt/ndx-interop/venv/bin/python crates/ndx-nfd/tests/vectors/gen_pyndn.py` (python-ndn
//! 0.4, the script says which model and values build each one). The `OURS_*` constants are
//! our encodings, which the same script's `--check` mode parses with python-ndn (see the
//! README's "What is verified where").

use ndx_codec::{Interest, Packet};
use ndx_nfd::*;

mod common;
use common::{name, register_interest};

fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The elements `each` appends, one after another, in hex.
fn encoded_hex<T>(elements: &[T], each: fn(&T, &mut Vec<u8>)) -> String {
    let mut ours = Vec::new();
    elements.iter().for_each(|e| each(e, &mut ours));
    to_hex(&ours)
}

/// Asserts that `decode_all` reads the python-ndn dataset `py` as `want`, and that `want`'s
/// elements encode (with `encode_into`) to `py` byte for byte.
fn assert_dataset<T: PartialEq + std::fmt::Debug>(
    py: &str,
    want: &[T],
    decode_all: fn(&[u8]) -> Result<Vec<T>, MgmtError>,
    encode_into: fn(&T, &mut Vec<u8>),
) {
    assert_eq!(decode_all(&hex(py)).unwrap(), want);
    assert_eq!(encoded_hex(want, encode_into), py);
}

/// Asserts that `decode` reads the python-ndn vector `py` as `want`, and that `want` encodes
/// (with `encode_into`) to `py` byte for byte.
fn assert_vector<T: PartialEq + std::fmt::Debug>(
    py: &str,
    want: &T,
    decode: fn(&[u8]) -> Result<T, MgmtError>,
    encode_into: fn(&T, &mut Vec<u8>),
) {
    assert_eq!(decode(&hex(py)).unwrap(), *want);
    assert_eq!(encoded_hex(std::slice::from_ref(want), encode_into), py);
}

const PY_CP_REGISTER: &str = "681b07060801610801626902012c6f01006a010a6c01016d040036ee80";
const PY_CP_ALL: &str = "689107030801786901077215756470343a2f2f3139322e302e322e313a363336338113756470343a2f2f302e302e302e303a363336336f01ff6a040001000083080000000100000000840103870405f5e100880400010000890222606c01057001076b28072608096c6f63616c686f737408036e666408087374726174656779080a626573742d726f7574656d0203e8850102";
const PY_CP_EMPTY: &str = "6800";
const PY_RESP_OK: &str = "651e6601c867024f4b681507060801610801626902012c6f01006a010a6c0101";
const PY_RESP_404: &str = "651466020194670e46616365206e6f7420666f756e64";
const PY_FACES: &str = "8055690101720766643a2f2f31378118756e69783a2f2f2f72756e2f6e66642f6e66642e736f636b8401018501018601009001019101029701039202012c9304000111709801009408000000012a05f2009501066c01018075690201027215756470343a2f2f3139322e302e322e313a363336338115756470343a2f2f3139322e302e322e323a363336336d027530840100850101860100870405f5e100880400010000890205c09001019101029701039202012c9304000111709801009408000000012a05f2009501066c0101";
const PY_RIB: &str = "80110700810d690201026f01ff6a010a6c01018034070e08076578616d706c65080361707081136902012c6f01006a01006c01016d040036ee80810d6902012d6f01416a01056c0102";
const PY_FIB: &str = "801a071008096c6f63616c686f737408036e666481066901016a0100801d070908076578616d706c658107690201026a010a8107690201036a0114";
const PY_STRATEGIES: &str = "802f07006b2b072908096c6f63616c686f737408036e666408087374726174656779080a626573742d726f7574653601058039070b08096c6f63616c686f73746b2a072808096c6f63616c686f737408036e66640808737472617465677908096d756c746963617374360104";
const PY_GENERAL: &str = "8009302e312e302d6e647881080000018bcfe5680082080000018bcfe74a4083010a840103850102860100870203e89001019101029701039201049301059801069901079a0108";
const PY_CS_INFO: &str = "80168304000100006c0103870203e881040001e240820107";
const PY_FACE_EVENT: &str = "c041c10101690201027215756470343a2f2f3139322e302e322e313a363336338115756470343a2f2f3139322e302e322e323a363336338401008501008601016c0100";
const PY_QUERY_FILTER: &str = "9609830475647034840100";
const PY_COMMAND: &str = "05a6075b08096c6f63616c686f737408036e666408037269620808726567697374657208186816070e08076578616d706c6508036170706f01006a01000220902a28dfa2065dc30eb5acaddffca0af96b5a479869fd837cb2f5e152222490912000a04010203040c020fa024002c171b01002608d7a0b7793e27d1062808000001a21e0907f82e20d3f3df7519762a0c244aba57014be1b0b0a68ebfcefbf7077d203169ff254b63";

#[test]
fn control_parameters_register() {
    let wire = hex(PY_CP_REGISTER);
    let want = ControlParameters {
        name: Some(name("/a/b")),
        face_id: Some(300),
        origin: Some(origin::APP),
        cost: Some(10),
        flags: Some(route_flags::CHILD_INHERIT),
        expiration_period: Some(3_600_000),
        ..ControlParameters::default()
    };
    assert_eq!(ControlParameters::decode(&wire).unwrap(), want);
    assert_eq!(to_hex(&want.encode()), PY_CP_REGISTER);
}

fn cp_all() -> ControlParameters {
    ControlParameters {
        name: Some(name("/x")),
        face_id: Some(7),
        uri: Some("udp4://192.0.2.1:6363".into()),
        local_uri: Some("udp4://0.0.0.0:6363".into()),
        origin: Some(origin::STATIC),
        cost: Some(65536),
        capacity: Some(1 << 32),
        count: Some(3),
        flags: Some(5),
        mask: Some(7),
        strategy: Some(name("/localhost/nfd/strategy/best-route")),
        expiration_period: Some(1000),
        face_persistency: Some(face_persistency::PERMANENT),
        base_congestion_marking_interval: Some(100_000_000),
        default_congestion_threshold: Some(65536),
        mtu: Some(8800),
    }
}

/// python-ndn writes the three congestion/MTU fields before Flags, NFD and ndnd after
/// FacePersistency: we read either order and write NFD's (same bytes, other order).
#[test]
fn control_parameters_every_field() {
    let want = cp_all();
    assert_eq!(ControlParameters::decode(&hex(PY_CP_ALL)).unwrap(), want);
    let ours = want.encode();
    assert_eq!(ours.len(), hex(PY_CP_ALL).len());
    assert_eq!(ControlParameters::decode(&ours).unwrap(), want);
    assert_eq!(to_hex(&ours), OURS_CP_ALL);
}

/// Our encoding of [`cp_all`], in NFD's order (`gen_pyndn.py --check` shows python-ndn
/// refusing it: its models require their own field order and 0x87 is critical; ndn-cxx and
/// ndnd read any order).
const OURS_CP_ALL: &str = "689107030801786901077215756470343a2f2f3139322e302e322e313a363336338113756470343a2f2f302e302e302e303a363336336f01ff6a0400010000830800000001000000008401036c01057001076b28072608096c6f63616c686f737408036e666408087374726174656779080a626573742d726f7574656d0203e8850102870405f5e10088040001000089022260";

#[test]
fn control_parameters_empty() {
    assert_eq!(
        ControlParameters::decode(&hex(PY_CP_EMPTY)).unwrap(),
        ControlParameters::default()
    );
    assert_eq!(to_hex(&ControlParameters::default().encode()), PY_CP_EMPTY);
}

#[test]
fn control_responses() {
    let ok = ControlResponse::ok(ControlParameters {
        name: Some(name("/a/b")),
        face_id: Some(300),
        origin: Some(0),
        cost: Some(10),
        flags: Some(1),
        ..ControlParameters::default()
    });
    assert_eq!(parse_command_response(&hex(PY_RESP_OK)).unwrap(), ok);
    assert_eq!(to_hex(&ok.encode()), PY_RESP_OK);
    let nf = ControlResponse::new(status::FACE_NOT_FOUND, "Face not found");
    assert_eq!(
        ControlResponse::decode(&hex(PY_RESP_404)).unwrap().code,
        404
    );
    let nf404 = ControlResponse { code: 404, ..nf };
    assert_eq!(to_hex(&nf404.encode()), PY_RESP_404);
}

fn faces() -> Vec<FaceStatus> {
    let base = FaceStatus {
        face_id: 1,
        uri: "fd://17".into(),
        local_uri: "unix:///run/nfd/nfd.sock".into(),
        face_scope: face_scope::LOCAL,
        face_persistency: face_persistency::ON_DEMAND,
        link_type: link_type::POINT_TO_POINT,
        n_in_interests: 1,
        n_in_data: 2,
        n_in_nacks: 3,
        n_out_interests: 300,
        n_out_data: 70000,
        n_out_nacks: 0,
        n_in_bytes: 5_000_000_000,
        n_out_bytes: 6,
        flags: face_flags::LOCAL_FIELDS_ENABLED,
        ..FaceStatus::default()
    };
    let udp = FaceStatus {
        face_id: 258,
        uri: "udp4://192.0.2.1:6363".into(),
        local_uri: "udp4://192.0.2.2:6363".into(),
        expiration_period: Some(30000),
        face_scope: face_scope::NON_LOCAL,
        base_congestion_marking_interval: Some(100_000_000),
        default_congestion_threshold: Some(65536),
        mtu: Some(1472),
        ..base.clone()
    };
    vec![base, udp]
}

#[test]
fn face_status_dataset() {
    let want = faces();
    assert_dataset(
        PY_FACES,
        &want,
        FaceStatus::decode_all,
        FaceStatus::encode_into,
    );
    // One element alone.
    let mut one = Vec::new();
    want[1].encode_into(&mut one);
    assert_eq!(FaceStatus::decode(&one).unwrap(), want[1]);
}

#[test]
fn rib_dataset() {
    let want = vec![
        RibEntry {
            name: name("/"),
            routes: vec![Route {
                face_id: 258,
                origin: origin::STATIC,
                cost: 10,
                flags: route_flags::CHILD_INHERIT,
                expiration_period: None,
            }],
        },
        RibEntry {
            name: name("/example/app"),
            routes: vec![
                Route {
                    face_id: 300,
                    origin: origin::APP,
                    cost: 0,
                    flags: route_flags::CHILD_INHERIT,
                    expiration_period: Some(3_600_000),
                },
                Route {
                    face_id: 301,
                    origin: origin::CLIENT,
                    cost: 5,
                    flags: route_flags::CAPTURE,
                    expiration_period: None,
                },
            ],
        },
    ];
    assert_dataset(PY_RIB, &want, RibEntry::decode_all, RibEntry::encode_into);
}

#[test]
fn fib_dataset() {
    let want = vec![
        FibEntry {
            name: name("/localhost/nfd"),
            nexthops: vec![(1, 0)],
        },
        FibEntry {
            name: name("/example"),
            nexthops: vec![(258, 10), (259, 20)],
        },
    ];
    assert_dataset(PY_FIB, &want, FibEntry::decode_all, FibEntry::encode_into);
}

#[test]
fn strategy_choice_dataset() {
    let want = vec![
        StrategyChoice {
            name: name("/"),
            strategy: name("/localhost/nfd/strategy/best-route/v=5"),
        },
        StrategyChoice {
            name: name("/localhost"),
            strategy: name("/localhost/nfd/strategy/multicast/v=4"),
        },
    ];
    assert_dataset(
        PY_STRATEGIES,
        &want,
        StrategyChoice::decode_all,
        StrategyChoice::encode_into,
    );
}

#[test]
fn general_status() {
    let want = ForwarderStatus {
        nfd_version: "0.1.0-ndx".into(),
        start_timestamp: 1_700_000_000_000,
        current_timestamp: 1_700_000_123_456,
        n_name_tree_entries: 10,
        n_fib_entries: 3,
        n_pit_entries: 2,
        n_measurements_entries: 0,
        n_cs_entries: 1000,
        n_in_interests: 1,
        n_in_data: 2,
        n_in_nacks: 3,
        n_out_interests: 4,
        n_out_data: 5,
        n_out_nacks: 6,
        n_satisfied_interests: 7,
        n_unsatisfied_interests: 8,
    };
    assert_vector(
        PY_GENERAL,
        &want,
        ForwarderStatus::decode,
        ForwarderStatus::encode_into,
    );
}

#[test]
fn cs_info() {
    let want = CsInfo {
        capacity: 65536,
        flags: cs_flags::ENABLE_ADMIT | cs_flags::ENABLE_SERVE,
        n_cs_entries: 1000,
        n_hits: 123_456,
        n_misses: 7,
    };
    assert_vector(PY_CS_INFO, &want, CsInfo::decode, CsInfo::encode_into);
}

#[test]
fn face_event_notification() {
    let want = FaceEventNotification {
        kind: face_event_kind::CREATED,
        face_id: 258,
        uri: "udp4://192.0.2.1:6363".into(),
        local_uri: "udp4://192.0.2.2:6363".into(),
        face_scope: face_scope::NON_LOCAL,
        face_persistency: face_persistency::PERSISTENT,
        link_type: link_type::MULTI_ACCESS,
        flags: 0,
    };
    assert_vector(
        PY_FACE_EVENT,
        &want,
        FaceEventNotification::decode,
        FaceEventNotification::encode_into,
    );
}

#[test]
fn face_query_filter() {
    let want = FaceQueryFilter {
        uri_scheme: Some("udp4".into()),
        face_scope: Some(face_scope::NON_LOCAL),
        ..FaceQueryFilter::default()
    };
    assert_eq!(
        FaceQueryFilter::decode(&hex(PY_QUERY_FILTER)).unwrap(),
        want
    );
    assert_eq!(to_hex(&want.encode()), PY_QUERY_FILTER);
    assert!(want.matches(&faces()[1]));
    assert!(!want.matches(&faces()[0]));
}

/// python-ndn's v0.3 signed command Interest: we parse it as a request and accept its
/// DigestSha256 signature.
#[test]
fn python_ndn_command_interest() {
    let wire = hex(PY_COMMAND);
    let i = Interest::decode(&wire).unwrap();
    assert!(command_signature_ok(&i));
    let r = parse_request(&i.name()).unwrap();
    assert_eq!(
        (r.scope, r.module.as_str(), r.verb.as_str()),
        (Scope::Localhost, "rib", "register")
    );
    let p = r.params.unwrap();
    assert_eq!(p.name, Some(name("/example/app")));
    assert_eq!((p.cost, p.origin), (Some(0), Some(0)));
    // A flipped signature bit is refused.
    let mut bad = wire.clone();
    let n = bad.len();
    bad[n - 1] ^= 1;
    let Ok(Packet::Interest(i)) = Packet::decode(&bad) else {
        panic!("still an Interest");
    };
    assert!(!command_signature_ok(&i));
}

/// Ours, with a fixed nonce and time: `gen_pyndn.py --check` parses it with python-ndn's
/// `parse_interest` and validates it with python-ndn's `params_sha256_checker` and the
/// DigestSha256 computation of `DigestSha256Signer`.
#[test]
fn our_command_interest() {
    let (p, wire) = register_interest("/example/app", 0x0102_0304);
    assert_eq!(to_hex(&wire), OURS_COMMAND);
    let i = Interest::decode(&wire).unwrap();
    assert!(command_signature_ok(&i));
    assert!(i.must_be_fresh());
    assert_eq!(i.nonce(), Some(0x0102_0304));
    let r = parse_request(&i.name()).unwrap();
    assert_eq!(r.params, Some(p));
    assert_eq!(i.name().len(), 6);
}

const OURS_COMMAND: &str = "05a2075b08096c6f63616c686f737408036e666408037269620808726567697374657208186816070e08076578616d706c6508036170706f01006a0100022084d7052792299ce8d2f573ca0f59d769603e025f508f4381420b3781f68c5b4b12000a04010203040c020fa024002c131b010026040102030428080000018bcfe568002e20682c6f8c75d0dbb6e0c4a2a1bbddf4b3552508a020f775a0513b854a01ea502d";

/// ndnd v1.5.3's answer to [`OURS_COMMAND`] (with another Interest Nonce, which the signature
/// does not cover), captured from `ndnd fw run` on a unix socket (the README's "Checked by
/// hand" says how): 200 OK, the route as created, DigestSha256; ndnd writes ContentType 0
/// and FreshnessPeriod 0.
const NDND_REGISTER_RESPONSE: &str = "06b5075b08096c6f63616c686f737408036e666408037269620808726567697374657208186816070e08076578616d706c6508036170706f01006a0100022084d7052792299ce8d2f573ca0f59d769603e025f508f4381420b3781f68c5b4b1406180100190100152765256601c867024f4b681c070e08076578616d706c6508036170706901066f01006a01006c010116031b01001720856d23efa699d2b86cd543d24bb13d9e6249e02ec8d17798aff37764a29f9b5a";

#[test]
fn ndnd_register_response() {
    let wire = hex(NDND_REGISTER_RESPONSE);
    let d = ndx_codec::Data::decode(&wire).unwrap();
    assert!(d.digest_signature_ok());
    let ours = hex(OURS_COMMAND);
    let i = Interest::decode(&ours).unwrap();
    assert!(d.matches_name(&i.name(), false));
    let r = parse_command_response(d.content()).unwrap();
    assert!(r.is_ok());
    assert_eq!(r.text, "OK");
    assert_eq!(
        r.body,
        Some(ControlParameters {
            name: Some(name("/example/app")),
            face_id: Some(6),
            origin: Some(origin::APP),
            cost: Some(0),
            flags: Some(route_flags::CHILD_INHERIT),
            ..ControlParameters::default()
        })
    );
}
