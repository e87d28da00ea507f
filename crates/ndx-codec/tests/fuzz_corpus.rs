//! Replays the fuzz corpus (`fuzz/corpus/<target>/*`) through the same harness functions the
//! cargo-fuzz targets call, so every seed and every saved crash input is checked by
//! `cargo test` on stable.
//!
//! The seeds themselves are written by the ignored test `write_seed_corpus`:
//! `cargo test -p ndx-codec --test fuzz_corpus -- --ignored write_seed_corpus`.

use std::fs;
use std::path::{Path, PathBuf};

use ndx_codec::{
    CachePolicy, ComponentBuf, DataRepr, Fragmenter, InterestRepr, LpHeaders, NackReason, NameBuf,
    Signature, fuzz,
};

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target)
}

/// Runs `harness` on every file of `target`'s corpus; returns how many there were.
fn replay(target: &str, harness: fn(&[u8])) -> usize {
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for f in &files {
        let bytes = fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let outcome = std::panic::catch_unwind(|| harness(&bytes));
        assert!(
            outcome.is_ok(),
            "{target}: {} fails its harness",
            f.display()
        );
    }
    assert!(
        !files.is_empty(),
        "no corpus files for {target} in {}",
        dir.display()
    );
    files.len()
}

macro_rules! replay_tests {
    ($($target:ident),* $(,)?) => {
        $(
            #[test]
            fn $target() {
                let n = replay(stringify!($target), fuzz::$target);
                eprintln!("{}: replayed {n} corpus files", stringify!($target));
            }
        )*
    };
}

replay_tests!(
    packet,
    interest,
    data,
    lp_packet,
    name_uri,
    name_tlv,
    tree,
    reassembler,
);

// ---------------------------------------------------------------------------------------
// Seed corpus generation.

fn name(uri: &str) -> NameBuf {
    NameBuf::from_uri(uri).expect("seed URI")
}

fn interests() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let mut add = |label, i: &InterestRepr| out.push((label, i.to_vec().expect("seed Interest")));

    add("interest-minimal", &InterestRepr::new(name("/a")));

    let mut i = InterestRepr::new(name("/ndn/edu/ucla/ping/12345"));
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.nonce = Some(0x0102_0304);
    i.lifetime_ms = Some(4000);
    i.hop_limit = Some(64);
    add("interest-typical", &i);

    let mut i = InterestRepr::new(name(
        "/example/testApp/v=7/seg=0/32=metadata/t=1700000000/seq=9",
    ));
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.forwarding_hint = vec![name("/telia/terabits"), name("/ucla/%00%FF/...")];
    i.nonce = Some(u32::MAX);
    i.lifetime_ms = Some(u64::MAX);
    i.hop_limit = Some(0);
    i.signature_info = Some(vec![0x1b, 0x01, 0x03, 0x26, 0x08, 1, 2, 3, 4, 5, 6, 7, 8]);
    i.signature_value = Some(vec![0xAB; 64]);
    i.set_app_params(b"hello parameters".to_vec());
    add("interest-every-field", &i);

    let mut i = InterestRepr::new(name(
        "/cmd/params-sha256=0000000000000000000000000000000000000000000000000000000000000000/tail",
    ));
    i.set_app_params(Vec::new());
    add("interest-params-digest-mid", &i);

    let mut i = InterestRepr::new(name(
        "/data/sha256digest=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ));
    i.lifetime_ms = Some(300);
    add("interest-implicit-digest", &i);
    out
}

fn datas() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let mut add = |label, d: &DataRepr| out.push((label, d.to_vec().expect("seed Data")));

    add("data-empty", &DataRepr::new(name("/a"), Vec::new()));
    let mut d = DataRepr::new(name("/ndn/edu/ucla/video/v=3/seg=0"), vec![0x5A; 100]);
    d.freshness_ms = Some(10_000);
    add("data-100", &d);
    let mut d = DataRepr::new(name("/ndn/edu/ucla/video/v=3/seg=1"), vec![0xA5; 1200]);
    d.content_type = Some(0);
    d.freshness_ms = Some(4000);
    d.final_block_id = Some(ComponentBuf::segment(6));
    add("data-1200", &d);
    add(
        "data-8000",
        &DataRepr::new(
            name("/ndn/edu/ucla/video/v=3/seg=2"),
            (0..8000).map(|i| i as u8).collect(),
        ),
    );
    let mut d = DataRepr::new(name("/key/KEY/%01%02/self/v=1"), vec![1, 2, 3]);
    d.content_type = Some(2);
    d.freshness_ms = Some(u64::MAX);
    d.final_block_id = Some(ComponentBuf::new(8, b"last").expect("component"));
    d.signature = Signature::Raw {
        // SignatureType 3, KeyLocator { Name { "key" } }, ValidityPeriod-ish opaque element.
        info: vec![0x1b, 0x01, 0x03, 0x1c, 0x05, 0x07, 0x03, 0x08, 0x01, b'k'],
        value: vec![0x30; 72],
    };
    add("data-every-field", &d);
    let mut d = DataRepr::new(name("/no/content"), Vec::new());
    d.content = None;
    add("data-no-content", &d);
    out
}

/// LP packets: every header, Nacks, fragments, IDLE with acks.
fn lps(interest: &[u8], data: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let mut add = |label, h: &LpHeaders<'_>, frag: Option<&[u8]>| {
        let mut buf = vec![0; h.encoded_len(frag.map(<[u8]>::len))];
        let n = h.encode(frag, &mut buf).expect("seed LpPacket");
        buf.truncate(n);
        out.push((label, buf));
    };
    add("lp-bare-interest", &LpHeaders::default(), Some(interest));
    add(
        "lp-pit-token",
        &LpHeaders {
            pit_token: Some(&[0xA1, 0xB2, 0xC3, 0xD4, 0, 0, 0, 7]),
            ..LpHeaders::default()
        },
        Some(interest),
    );
    add(
        "lp-every-header",
        &LpHeaders {
            sequence: Some(0x0123_4567_89AB_CDEF),
            hop_count: Some(3),
            pit_token: Some(&[9; 32]),
            next_hop_face_id: Some(300),
            incoming_face_id: Some(257),
            cache_policy: Some(CachePolicy::NoCache),
            congestion_mark: Some(1),
            acks: &[1, 2, 0xFFFF_FFFF_FFFF],
            tx_sequence: Some(42),
            non_discovery: true,
            prefix_announcement: Some(data),
            ..LpHeaders::default()
        },
        Some(data),
    );
    for (label, reason) in [
        ("lp-nack-unspecified", NackReason::Unspecified),
        ("lp-nack-congestion", NackReason::Congestion),
        ("lp-nack-duplicate", NackReason::Duplicate),
        ("lp-nack-noroute", NackReason::NoRoute),
    ] {
        add(
            label,
            &LpHeaders {
                nack: Some(reason),
                pit_token: Some(&[1, 2, 3, 4]),
                ..LpHeaders::default()
            },
            Some(interest),
        );
    }
    add(
        "lp-idle-acks",
        &LpHeaders {
            acks: &[7, 8, 9],
            tx_sequence: Some(10),
            ..LpHeaders::default()
        },
        None,
    );
    add(
        "lp-cache-policy-other",
        &LpHeaders {
            cache_policy: Some(CachePolicy::Other(77)),
            ..LpHeaders::default()
        },
        Some(data),
    );
    // Three fragments of `data`, as indexed fragmentation sends them.
    let third = data.len().div_ceil(3);
    for (i, (label, piece)) in ["lp-frag-0", "lp-frag-1", "lp-frag-2"]
        .into_iter()
        .zip(data.chunks(third))
        .enumerate()
    {
        add(
            label,
            &LpHeaders {
                sequence: Some(1000 + i as u64),
                frag_index: Some(i as u64),
                frag_count: Some(3),
                ..LpHeaders::default()
            },
            Some(piece),
        );
    }
    out
}

fn uris() -> Vec<(&'static str, Vec<u8>)> {
    [
        ("uri-root", "/"),
        ("uri-scheme", "ndn:/a/b/"),
        ("uri-typical", "/ndn/edu/ucla/ping/12345"),
        ("uri-conventions", "/a/seg=3/v=1700000000000/t=5/seq=0/off=4096/32=metadata"),
        ("uri-escapes", "/hello%20world/%00%FF/a%3Db/~_-."),
        ("uri-dots", "/.../..../....."),
        ("uri-typed", "/9=.../65535=x/50=%00%00%03/50=%00%03"),
        (
            "uri-digests",
            "/sha256digest=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08/params-sha256=0000000000000000000000000000000000000000000000000000000000000000",
        ),
        ("uri-bad-percent", "/abc/d%4"),
        ("uri-empty-component", "/a//b"),
    ]
    .into_iter()
    .map(|(l, s)| (l, s.as_bytes().to_vec()))
    .collect()
}

fn hex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Packets captured from real NDN software (`tests/vectors/captured.jsonl`), when present.
fn captured() -> Vec<Vec<u8>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/captured.jsonl");
    let Ok(text) = fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut out: Vec<Vec<u8>> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| hex(v.get("hex")?.as_str()?))
        .filter(|b| !b.is_empty() && b.len() <= 9000)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Reassembler scripts (see `ndx_codec::fuzz::reassembler` for the record format).
fn reassembler_scripts(data: &[u8], interest: &[u8]) -> Vec<(String, Vec<u8>)> {
    // Fragments of `data` as a real sender writes them.
    let fragments = |mtu: usize, first_sequence: u64| -> Vec<Vec<u8>> {
        let f = Fragmenter::new(mtu).expect("MTU");
        let headers = LpHeaders {
            pit_token: Some(&[7, 7, 7, 7]),
            ..LpHeaders::default()
        };
        let mut plan = f.fragment(data, &headers, first_sequence).expect("plan");
        let mut out = Vec::new();
        let mut buf = vec![0; plan.max_len()];
        while let Some(n) = plan.next_into(&mut buf) {
            out.push(buf[..n.expect("fits")].to_vec());
        }
        out
    };
    let raw = |script: &mut Vec<u8>, peer: u8, dt: u8, lp: &[u8]| {
        script.extend_from_slice(&[0, peer, dt]);
        script.extend_from_slice(&(lp.len() as u16).to_be_bytes());
        script.extend_from_slice(lp);
    };
    let built = |script: &mut Vec<u8>, peer: u8, dt: u8, seq: u8, index: u8, count: u8| {
        script.extend_from_slice(&[1, peer, dt, seq, index, count, 5]);
    };
    let roomy = [7, 0x3F, 0xFF, 19];
    let mut out = Vec::new();

    let mut s = roomy.to_vec();
    for f in fragments(400, 100) {
        raw(&mut s, 1, 1, &f);
    }
    let mut whole = vec![0; LpHeaders::default().encoded_len(Some(interest.len()))];
    let n = LpHeaders::default()
        .encode(Some(interest), &mut whole)
        .expect("fits");
    raw(&mut s, 1, 1, &whole[..n]);
    out.push(("in-order".to_string(), s));

    let mut s = roomy.to_vec();
    let mut frags = fragments(300, u64::MAX - 1);
    frags.reverse();
    for f in &frags {
        raw(&mut s, 2, 0, f);
    }
    raw(&mut s, 2, 0, &frags[0]);
    out.push(("reversed-wrapping-duplicate".to_string(), s));

    let mut s = roomy.to_vec();
    for (i, f) in fragments(300, 5).iter().enumerate() {
        raw(&mut s, (i % 2) as u8, 40, f);
    }
    s.extend_from_slice(&[2, 0, 0x7F]);
    out.push(("two-peers-expiring".to_string(), s));

    let mut s = vec![1, 0, 200, 3];
    for (seq, index) in [(12, 2), (10, 0), (11, 1), (20, 0), (30, 0), (31, 1)] {
        built(&mut s, 3, 1, seq, index, 3);
    }
    built(&mut s, 3, 0x81, 32, 2, 3);
    s.extend_from_slice(&[3, 3, 0]);
    built(&mut s, 4, 1, 40, 0, 2);
    built(&mut s, 4, 1, 41, 1, 4);
    out.push(("built-evict-remove".to_string(), s));
    out
}

fn write_seeds(target: &str, seeds: &[(String, Vec<u8>)]) {
    let dir = corpus_dir(target);
    fs::create_dir_all(&dir).expect("corpus directory");
    for (label, bytes) in seeds {
        fs::write(dir.join(format!("seed-{label}")), bytes).expect("write seed");
    }
}

#[test]
#[ignore = "writes fuzz/corpus; run by hand after changing the seeds"]
fn write_seed_corpus() {
    let own = |v: Vec<(&'static str, Vec<u8>)>| -> Vec<(String, Vec<u8>)> {
        v.into_iter().map(|(l, b)| (l.to_string(), b)).collect()
    };
    let interests = own(interests());
    let datas = own(datas());
    let typical_interest = interests[2].1.clone();
    let small_data = datas[1].1.clone();
    let data_1200 = datas[2].1.clone();
    let lps = own(lps(&typical_interest, &small_data));

    let mut captured_i = Vec::new();
    let mut captured_d = Vec::new();
    let mut captured_l = Vec::new();
    let mut captured_all = Vec::new();
    for (n, b) in captured().into_iter().enumerate() {
        let label = format!("captured-{n:03}");
        match b[0] {
            0x05 => captured_i.push((label.clone(), b.clone())),
            0x06 => captured_d.push((label.clone(), b.clone())),
            0x64 => captured_l.push((label.clone(), b.clone())),
            _ => {}
        }
        captured_all.push((label, b));
    }

    let mut padded = interests[0].1.clone();
    padded.resize(60, 0);
    let mut packets: Vec<(String, Vec<u8>)> = [&interests, &datas, &lps, &captured_all]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    packets.push(("interest-ethernet-padding".into(), padded));

    let names: Vec<(String, Vec<u8>)> = [
        ("name-root", "/"),
        ("name-typical", "/ndn/edu/ucla/ping/12345"),
        (
            "name-conventions",
            "/a/seg=3/v=1700000000000/t=5/seq=0/off=4096/32=metadata",
        ),
        ("name-escapes", "/hello%20world/%00%FF/.../9=..."),
        (
            "name-digest",
            "/x/sha256digest=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        ),
    ]
    .into_iter()
    .map(|(l, u)| (l.to_string(), name(u).to_tlv()))
    .collect();
    let mut several = Vec::new();
    for (_, n) in &names {
        several.extend_from_slice(n);
    }
    let mut name_seeds = names.clone();
    name_seeds.push(("names-several".into(), several));

    write_seeds("interest", &[interests, captured_i].concat());
    write_seeds("data", &[datas, captured_d].concat());
    write_seeds("lp_packet", &[lps, captured_l].concat());
    write_seeds("packet", &packets);
    write_seeds("tree", &packets);
    write_seeds("name_tlv", &name_seeds);
    write_seeds("name_uri", &own(uris()));
    write_seeds(
        "reassembler",
        &reassembler_scripts(&data_1200, &typical_interest),
    );
}
