//! Test vectors: packets captured from independent NDN software (python-ndn, NDNts, ndnd),
//! each with the field values that software reported, plus bad vectors that must be refused.
//!
//! Files (one JSON object per line; see `vectors/capture/README.md` for how they were made):
//! - `vectors/captured.jsonl`: `{"id", "source", "kind", "hex", "expect": {...}}`, must decode
//!   and match `expect`;
//! - `vectors/bad.jsonl`: same shape with `"expect": {"error": "..."}`, must be refused.

use std::path::Path;

use ndx_codec::{
    Data, Interest, LpPacket, NackReason, Name, Packet, Reassembler, ReassemblerConfig,
};
use serde_json::Value;

fn load(file: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l}: {e}")))
        .collect()
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn check_name(id: &str, name: Name<'_>, expect: &Value) {
    if let Some(uri) = expect.get("name").and_then(Value::as_str) {
        assert_eq!(name.to_string(), uri, "{id}: name URI");
    }
    if let Some(comps) = expect.get("name_components").and_then(Value::as_array) {
        let got: Vec<(u64, String)> = name
            .components()
            .map(|c| (u64::from(c.typ()), hex(c.value())))
            .collect();
        let want: Vec<(u64, String)> = comps
            .iter()
            .map(|c| {
                (
                    c[0].as_u64().expect("component type"),
                    c[1].as_str().expect("component hex").to_lowercase(),
                )
            })
            .collect();
        assert_eq!(got, want, "{id}: name components");
    }
}

fn opt_u64(v: &Value, key: &str) -> Option<Option<u64>> {
    v.get(key).map(Value::as_u64)
}

fn check_interest(id: &str, i: &Interest<'_>, e: &Value) {
    check_name(id, i.name(), e);
    if let Some(b) = e.get("can_be_prefix").and_then(Value::as_bool) {
        assert_eq!(i.can_be_prefix(), b, "{id}: CanBePrefix");
    }
    if let Some(b) = e.get("must_be_fresh").and_then(Value::as_bool) {
        assert_eq!(i.must_be_fresh(), b, "{id}: MustBeFresh");
    }
    if let Some(n) = opt_u64(e, "nonce") {
        assert_eq!(i.nonce().map(u64::from), n, "{id}: Nonce");
    }
    if let Some(l) = opt_u64(e, "lifetime_ms") {
        assert_eq!(i.lifetime_ms(), l, "{id}: InterestLifetime");
    }
    if let Some(h) = opt_u64(e, "hop_limit") {
        assert_eq!(i.hop_limit().map(u64::from), h, "{id}: HopLimit");
    }
    if let Some(p) = e.get("app_params_hex") {
        assert_eq!(
            i.app_params().map(hex),
            p.as_str().map(str::to_lowercase),
            "{id}: ApplicationParameters"
        );
        if i.app_params().is_some() {
            assert!(i.params_digest_ok(), "{id}: parameters digest");
        }
    }
    if let Some(fh) = e.get("forwarding_hint").and_then(Value::as_array) {
        let got: Vec<String> = i
            .forwarding_hint()
            .map(|f| f.names().map(|n| n.to_string()).collect())
            .unwrap_or_default();
        let want: Vec<String> = fh.iter().map(|v| v.as_str().unwrap().to_owned()).collect();
        assert_eq!(got, want, "{id}: ForwardingHint");
    }
    if let Some(s) = e.get("signed").and_then(Value::as_bool) {
        assert_eq!(i.signature_info().is_some(), s, "{id}: signed");
    }
    // Whatever real software sent, our encoder reproduces it (field for field; byte for
    // byte unless the sender used an encoding freedom, e.g. a longer NonNegativeInteger).
    let again = i.to_repr().to_vec().unwrap();
    assert_eq!(
        Interest::decode(&again).unwrap().to_repr(),
        i.to_repr(),
        "{id}: re-encoding"
    );
}

fn check_data(id: &str, d: &Data<'_>, e: &Value) {
    check_name(id, d.name(), e);
    if let Some(c) = e.get("content_hex").and_then(Value::as_str) {
        assert_eq!(hex(d.content()), c.to_lowercase(), "{id}: Content");
    }
    // A number is compared with the effective value (absent ContentType means BLOB = 0,
    // absent FreshnessPeriod means 0: some decoders report those defaults); null means absent.
    match opt_u64(e, "content_type") {
        Some(Some(c)) => assert_eq!(d.content_type().unwrap_or(0), c, "{id}: ContentType"),
        Some(None) => assert_eq!(d.content_type(), None, "{id}: ContentType"),
        None => {}
    }
    match opt_u64(e, "freshness_ms") {
        Some(Some(f)) => assert_eq!(d.freshness_ms().unwrap_or(0), f, "{id}: FreshnessPeriod"),
        Some(None) => assert_eq!(d.freshness_ms(), None, "{id}: FreshnessPeriod"),
        None => {}
    }
    if let Some(f) = e.get("final_block_id") {
        assert_eq!(
            d.final_block_id().map(|c| c.to_string()),
            f.as_str().map(str::to_owned),
            "{id}: FinalBlockId"
        );
    }
    if let Some(t) = e.get("signature_type").and_then(Value::as_u64) {
        assert_eq!(d.signature_type(), t, "{id}: SignatureType");
        if t == 0 {
            assert!(d.digest_signature_ok(), "{id}: DigestSha256 signature");
        }
    }
    if let Some(g) = e.get("implicit_digest").and_then(Value::as_str) {
        assert_eq!(
            hex(&d.implicit_digest()),
            g.to_lowercase(),
            "{id}: implicit digest"
        );
        assert!(
            d.matches_name(&d.full_name().as_name(), false),
            "{id}: full name"
        );
    }
    // Field for field (python-ndn sends an empty MetaInfo, which the repr does not keep).
    let again = d.to_repr().to_vec().unwrap();
    assert_eq!(
        Data::decode(&again).unwrap().to_repr(),
        d.to_repr(),
        "{id}: re-encoding"
    );
}

fn check_lp(id: &str, lp: &LpPacket<'_>, e: &Value) {
    if let Some(t) = e.get("pit_token_hex") {
        assert_eq!(
            lp.pit_token().map(hex),
            t.as_str().map(str::to_lowercase),
            "{id}: PitToken"
        );
    }
    if let Some(s) = opt_u64(e, "sequence") {
        assert_eq!(lp.sequence(), s, "{id}: Sequence");
    }
    if let Some(i) = e.get("frag_index").and_then(Value::as_u64) {
        assert_eq!(lp.frag_index(), i, "{id}: FragIndex");
    }
    if let Some(c) = e.get("frag_count").and_then(Value::as_u64) {
        assert_eq!(lp.frag_count(), c, "{id}: FragCount");
    }
    match e.get("nack").and_then(Value::as_bool) {
        Some(false) => assert_eq!(lp.nack(), None, "{id}: no Nack"),
        Some(true) => {
            let want = e
                .get("nack_reason")
                .and_then(Value::as_u64)
                .map_or(NackReason::Unspecified, NackReason::from_code);
            assert_eq!(lp.nack(), Some(want), "{id}: Nack");
        }
        None => {}
    }
    if let Some(m) = opt_u64(e, "congestion_mark") {
        assert_eq!(lp.headers().congestion_mark, m, "{id}: CongestionMark");
    }
    if lp.is_fragment() {
        // A piece of a larger packet: nothing to decode inside (the first piece's kind names
        // what the whole packet is); reassembly is tested separately.
        assert!(lp.fragment().is_some(), "{id}: fragment without payload");
        return;
    }
    let inner = lp
        .network_packet()
        .unwrap_or_else(|err| panic!("{id}: inner packet: {err}"));
    match (e.get("fragment_kind").and_then(Value::as_str), inner) {
        (Some("interest"), Some(Packet::Interest(i))) => {
            if let Some(x) = e.get("inner") {
                check_interest(id, &i, x);
            }
        }
        (Some("data"), Some(Packet::Data(d))) => {
            if let Some(x) = e.get("inner") {
                check_data(id, &d, x);
            }
        }
        (Some("none"), None) => assert!(lp.fragment().is_none(), "{id}: IDLE"),
        (Some("partial"), None) => assert!(lp.is_fragment(), "{id}: partial fragment"),
        (None, _) => {}
        (k, p) => panic!("{id}: expected fragment kind {k:?}, decoded {p:?}"),
    }
}

#[test]
fn captured_vectors_decode_as_their_software_says() {
    let vectors = load("captured.jsonl");
    assert!(vectors.len() >= 20, "too few vectors: {}", vectors.len());
    let failures: Vec<String> = vectors
        .iter()
        .filter_map(|v| {
            std::panic::catch_unwind(|| check_vector(v))
                .err()
                .map(|e| panic_message(&e))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn panic_message(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn check_vector(v: &Value) {
    {
        let id = v["id"].as_str().expect("id");
        let bytes = unhex(v["hex"].as_str().expect("hex"));
        let e = &v["expect"];
        let p = Packet::decode(&bytes).unwrap_or_else(|err| panic!("{id}: {err}"));
        match (v["kind"].as_str().expect("kind"), p) {
            ("interest", Packet::Interest(i)) => check_interest(id, &i, e),
            ("data", Packet::Data(d)) => check_data(id, &d, e),
            ("lp", Packet::Lp(lp)) => check_lp(id, &lp, e),
            (k, p) => panic!("{id}: expected {k}, decoded {p:?}"),
        }
    }
}

#[test]
fn bad_vectors_are_refused_with_an_offset_inside_the_packet() {
    let vectors = load("bad.jsonl");
    assert!(
        vectors.len() >= 10,
        "too few bad vectors: {}",
        vectors.len()
    );
    for v in &vectors {
        let id = v["id"].as_str().expect("id");
        let bytes = unhex(v["hex"].as_str().expect("hex"));
        let result = match v["kind"].as_str().expect("kind") {
            "lp" => Packet::decode(&bytes).and_then(|p| match p {
                Packet::Lp(lp) => lp.network_packet().map(|_| ()),
                _ => Ok(()),
            }),
            _ => Packet::decode(&bytes).map(|_| ()),
        };
        let err = result.expect_err(id);
        assert!(
            err.offset <= bytes.len(),
            "{id}: offset {} past the end",
            err.offset
        );
    }
}

#[test]
fn captured_fragments_reassemble() {
    // Every fragmented set in the captures reassembles into a packet that decodes.
    let vectors = load("captured.jsonl");
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let mut completed = 0;
    for v in &vectors {
        let bytes = unhex(v["hex"].as_str().unwrap());
        let Ok(Packet::Lp(lp)) = Packet::decode(&bytes) else {
            continue;
        };
        if !lp.is_fragment() {
            continue;
        }
        if let Ok(Some(done)) = r.push(0, 1, &lp) {
            Packet::decode(done.packet).expect("reassembled packet decodes");
            completed += 1;
        }
    }
    let fragmented = vectors
        .iter()
        .filter(|v| v["expect"].get("fragment_kind").and_then(Value::as_str) == Some("partial"))
        .count();
    if fragmented > 0 {
        assert!(
            completed > 0,
            "{fragmented} fragments but nothing reassembled"
        );
    }
}

/// NDNLPv2's TLV-TYPE numbers for the local-field headers, as NFD (ndn-cxx `lp/tlv.hpp`) and
/// ndnd (`spec_2022` LpPacket) assign them: IncomingFaceId 812 (0x032C), NextHopFaceId 816
/// (0x0330), in that order. ndx wrote IncomingFaceId as 817 until issue 38: ndnd's apps
/// refused every packet carrying it ("unrecognized critical type 817").
#[test]
fn local_field_headers_have_ndnlpv2_numbers() {
    let h = ndx_codec::LpHeaders {
        incoming_face_id: Some(7),
        next_hop_face_id: Some(9),
        ..ndx_codec::LpHeaders::default()
    };
    let mut out = vec![0; h.encoded_len(None)];
    let n = h.encode(None, &mut out).unwrap();
    assert_eq!(
        &out[..n],
        &[
            0x64, 0x0a, 0xfd, 0x03, 0x2c, 0x01, 0x07, 0xfd, 0x03, 0x30, 0x01, 0x09
        ][..]
    );
    let lp = ndx_codec::LpPacket::decode(&out[..n]).unwrap();
    assert_eq!(lp.headers().incoming_face_id, Some(7));
    assert_eq!(lp.next_hop_face_id(), Some(9));
}
