//! `ndx dissect` end to end: the real binary on the bundled captures of ndnd traffic, on the
//! codec's real-software test vectors, and on broken input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn ndx(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ndx"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ndx runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("ndx finishes")
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

fn hex_of_vectors(file: &str) -> (String, usize) {
    let path = format!(
        "{}/../ndx-codec/tests/vectors/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("vectors");
    let hexes: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("JSON")["hex"]
                .as_str()
                .expect("hex")
                .to_owned()
        })
        .collect();
    (hexes.join("\n"), hexes.len())
}

#[test]
fn sample_captures_decode_and_reassemble() {
    for file in ["testdata/sample.pcap", "testdata/sample-v6.pcapng"] {
        let out = ndx(&["dissect", "--json", file], b"");
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let entries = json_lines(&out);
        assert!(entries.len() >= 40, "{file}: {} entries", entries.len());
        assert!(
            entries.iter().all(|e| e["error"].is_null()),
            "{file}: a packet failed"
        );
        let kinds = |k: &str| entries.iter().filter(|e| e["kind"] == k).count();
        assert!(
            kinds("interest") >= 5 && kinds("data") >= 5 && kinds("fragment") >= 10,
            "{file}"
        );
        // Every complete fragment set yields a reassembled 8 KB Data naming its pieces.
        let whole: Vec<&Value> = entries
            .iter()
            .filter(|e| e["source"]["reassembled_from"].is_array())
            .collect();
        assert!(whole.len() >= 4, "{file}: {} reassembled", whole.len());
        for w in &whole {
            assert_eq!(w["kind"], "data");
            assert!(w["data"]["content_len"].as_u64().unwrap() >= 6000);
            let from = w["source"]["reassembled_from"].as_array().unwrap();
            assert!(from.len() >= 5);
            for i in from {
                let piece = &entries[i.as_u64().unwrap() as usize - 1];
                assert_eq!(piece["kind"], "fragment");
            }
        }
        // UDP endpoints are reported, names are URIs, tree offsets lie inside the packet.
        let first = &entries[0];
        assert!(
            first["source"]["encap"]
                .as_str()
                .unwrap()
                .starts_with("udp ")
        );
        assert!(first["name"].as_str().unwrap().starts_with("/ndx/obj"));
        for e in &entries {
            let len = e["length"].as_u64().unwrap();
            for n in e["tree"].as_array().unwrap() {
                assert!(n["offset"].as_u64().unwrap() < len);
            }
        }
    }
    let text = ndx(&["dissect", "testdata/sample.pcap"], b"");
    let s = String::from_utf8_lossy(&text.stdout);
    assert!(s.contains("PitToken (98) @2 len=6"));
    assert!(s.contains("KeywordNameComponent (32)"));
    assert!(s.contains("reassembled from #4 #5 #6 #7 #8 #9"));
    assert!(
        s.contains("SegmentNameComponent (50) @60 len=1: seg=4"),
        "FinalBlockId's component"
    );
    assert!(
        !s.contains(" ? ("),
        "every element of real traffic has a name"
    );
    assert!(s.trim_end().ends_with("0 malformed"));
}

#[test]
fn every_real_software_vector_dissects_cleanly() {
    let (hex, n) = hex_of_vectors("captured.jsonl");
    let out = ndx(&["dissect", "--json"], hex.as_bytes());
    assert!(out.status.success());
    let entries = json_lines(&out);
    assert!(
        entries.len() > n,
        "fragments of the vectors reassemble into extra entries"
    );
    assert!(entries.iter().all(|e| e["error"].is_null()));
}

#[test]
fn bad_packets_are_reported_with_offsets_and_the_rest_still_printed() {
    let (bad, n) = hex_of_vectors("bad.jsonl");
    let input = format!("{bad}\nnot hex\n05050703080161\n");
    let out = ndx(&["dissect", "--json"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let entries = json_lines(&out);
    assert_eq!(entries.len(), n + 2);
    for e in &entries[..n] {
        assert_eq!(e["kind"], "invalid", "{e}");
        let offset = e["error"]["offset"].as_u64().expect("offset");
        assert!(offset <= e["length"].as_u64().unwrap());
        assert!(!e["error"]["message"].as_str().unwrap().is_empty());
    }
    assert!(
        entries[n]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a hex digit")
    );
    assert_eq!(entries[n + 1]["name"], "/a");
    assert!(entries[n + 1]["error"].is_null());
}

#[test]
fn broken_captures_and_missing_files() {
    let path = format!("{}/testdata/sample.pcap", env!("CARGO_MANIFEST_DIR"));
    let mut bytes = std::fs::read(path).unwrap();
    bytes.truncate(bytes.len() - 100);
    let out = ndx(&["dissect", "--summary"], &bytes);
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("truncated pcap record"), "{s}");
    assert!(
        s.contains("Interest /ndx/obj"),
        "packets before the break are printed"
    );

    let out = ndx(&["dissect", "/nonexistent/capture.pcap"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/capture.pcap"));
}
