//! `put`, `serve`, `get` and `generate` against each other over loopback UDP.

mod common;

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Relay, Running, content};
use ndx_app::{
    AppError, Consumer, Discovery, GenOptions, GetOptions, LinkMtu, NackReason, Producer,
    PutOptions, ServeOptions, VerifyError, generate,
};
use ndx_codec::{Data, InterestRepr, LpHeaders, NameBuf, Packet};
use sha2::{Digest, Sha256};

fn name(s: &str) -> NameBuf {
    s.parse().unwrap()
}

fn v4_any() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn fetch(opts: &GetOptions) -> Result<(Vec<u8>, ndx_app::GetReport), AppError> {
    let mut out = Vec::new();
    let r = Consumer::new(opts)?.fetch(&mut out)?;
    Ok((out, r))
}

#[test]
fn multi_megabyte_object_with_fragmentation() {
    let data = content(3 * 1024 * 1024 + 123, 1);
    let mut opts = PutOptions::new(name("/ndx/test/big"), v4_any());
    assert_eq!(opts.segment_size, 8000);
    // Loopback's path MTU (64 KiB) would carry every segment whole.
    opts.mtu = LinkMtu::Fixed(1500);
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    let mut g = GetOptions::new(name("/ndx/test/big"), producer.addr);
    g.no_progress = true;
    let (out, report) = fetch(&g).unwrap();
    assert!(out == data, "fetched object differs");
    assert_eq!(report.bytes, data.len() as u64);
    assert_eq!(report.segments, data.len().div_ceil(8000) as u64);
    assert_eq!(report.sha256, <[u8; 32]>::from(Sha256::digest(&data)));
    assert!(
        report.name.starts_with("/ndx/test/big/v="),
        "{}",
        report.name
    );
    assert!(report.rtt.samples > 0 && report.rtt.min <= report.rtt.max);
    assert!(report.throughput_mbps() > 0.0);
    let p = producer.finish();
    // 8000-byte segments do not fit a 1500-byte MTU: every Data went out in fragments.
    assert!(p.fragments_sent >= 6 * (report.segments - 1), "{p:?}");
    assert!(p.data_sent >= report.segments);
    eprintln!("{report}");
}

#[test]
fn the_path_mtu_is_used_by_default() {
    // Loopback's path MTU is 64 KiB: 8000-byte segments go whole, with no `--mtu`.
    let data = content(200_000, 3);
    let opts = PutOptions::new(name("/ndx/test/pmtu"), v4_any());
    assert_eq!(opts.mtu, LinkMtu::Auto);
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    let mut g = GetOptions::new(name("/ndx/test/pmtu"), producer.addr);
    g.no_progress = true;
    let (out, report) = fetch(&g).unwrap();
    assert!(out == data, "fetched object differs");
    let p = producer.finish();
    assert!(p.data_sent >= report.segments, "{p:?}");
    assert_eq!(p.fragments_sent, 0, "{p:?}");
}

#[test]
fn retransmissions_recover_from_five_percent_loss() {
    let data = content(1024 * 1024, 2);
    let producer = Running::start(
        Producer::put(&PutOptions::new(name("/ndx/test/lossy"), v4_any()), &data).unwrap(),
    );
    let relay = Relay::start(producer.addr, 50, None);
    let mut g = GetOptions::new(name("/ndx/test/lossy"), relay.addr);
    g.no_progress = true;
    g.discovery_retries = 10;
    // Loopback RTTs are far below the default 200 ms floor; a lower one keeps the test short.
    g.min_rto_ms = 30;
    let (out, report) = fetch(&g).unwrap();
    assert!(out == data, "fetched object differs");
    assert!(relay.dropped.load(std::sync::atomic::Ordering::Relaxed) > 0);
    assert!(
        report.timeouts > 0 && report.retransmissions > 0,
        "{report:?}"
    );
    assert!(report.window_decreases > 0, "{report:?}");
    eprintln!("{report}");
}

#[test]
fn ipv6_loopback() {
    let data = content(100_000, 3);
    let producer = Running::start(
        Producer::put(
            &PutOptions::new(name("/ndx/test/v6"), "[::1]:0".parse().unwrap()),
            &data,
        )
        .unwrap(),
    );
    assert!(producer.addr.is_ipv6());
    let mut g = GetOptions::new(name("/ndx/test/v6"), producer.addr);
    g.no_progress = true;
    let (out, _) = fetch(&g).unwrap();
    assert!(out == data);
}

#[test]
fn discovery_finds_the_version_and_an_explicit_version_skips_it() {
    let data = content(20_000, 4);
    let mut opts = PutOptions::new(name("/ndx/test/disc/obj"), v4_any());
    opts.version = Some(42);
    opts.segment_size = 1000;
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    // The unversioned prefix discovers the version.
    let mut g = GetOptions::new(name("/ndx/test/disc/obj"), producer.addr);
    g.no_progress = true;
    let (out, report) = fetch(&g).unwrap();
    assert!(out == data);
    assert_eq!(report.version, Some(42));
    assert_ne!(report.discovery, Discovery::Explicit);
    assert_eq!(report.name, "/ndx/test/disc/obj/v=42");
    assert_eq!(report.segments, 20);
    // Versioned prefix: straight to seg=0.
    g.prefix = name("/ndx/test/disc/obj/v=42");
    let (out, report) = fetch(&g).unwrap();
    assert!(out == data);
    assert_eq!(report.discovery, Discovery::Explicit);
    // A version nobody serves is Nacked by the producer.
    g.prefix = name("/ndx/test/disc/obj/v=43");
    match fetch(&g) {
        Err(AppError::NoRoute { name, target }) => {
            assert_eq!(name, "/ndx/test/disc/obj/v=43/seg=0");
            assert_eq!(target, ndx_app::Endpoint::Udp(producer.addr));
        }
        other => panic!("expected Nack NoRoute, got {other:?}"),
    }
    let p = producer.finish();
    assert_eq!(p.nacks_sent, 1);
    assert_eq!(p.object_bytes, 20_000);
}

#[test]
fn corrupted_segment_is_rejected() {
    let data = content(10_000, 5);
    let mut opts = PutOptions::new(name("/ndx/test/corrupt"), v4_any());
    opts.segment_size = 1000;
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    // Flip the last byte (in the SignatureValue) of segment 3.
    let relay = Relay::start(
        producer.addr,
        0,
        Some(Box::new(|d: &mut Vec<u8>| {
            let is_seg3 = matches!(Packet::decode(d), Ok(Packet::Data(x))
                if x.name().last().and_then(|c| c.as_segment()) == Some(3));
            if is_seg3 && let Some(b) = d.last_mut() {
                *b ^= 0x55;
            }
        })),
    );
    let mut g = GetOptions::new(name("/ndx/test/corrupt"), relay.addr);
    g.no_progress = true;
    let err = fetch(&g).unwrap_err();
    match &err {
        AppError::Verify { name, reason } => {
            assert!(name.ends_with("/seg=3"), "{name}");
            assert_eq!(*reason, VerifyError::BadDigest);
        }
        other => panic!("expected a verification error, got {other:?}"),
    }
    assert!(
        err.to_string().contains("signature value does not match"),
        "{err}"
    );
    // Without verification the corrupted signature goes unnoticed (the content is intact).
    g.no_verify = true;
    let (out, _) = fetch(&g).unwrap();
    assert!(out == data);
}

#[test]
fn no_producer_times_out_with_a_clear_error() {
    // A socket that never answers (so no ICMP port-unreachable either).
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut g = GetOptions::new(name("/ndx/test/nobody"), silent.local_addr().unwrap());
    g.no_progress = true;
    g.discovery_retries = 1;
    g.initial_rto_ms = 100;
    g.min_rto_ms = 50;
    g.max_rto_ms = 200;
    let err = fetch(&g).unwrap_err();
    match &err {
        AppError::Timeout { name, attempts, .. } => {
            assert_eq!(name, "/ndx/test/nobody");
            assert_eq!(*attempts, 2);
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("no Data for /ndx/test/nobody after 2 attempts"),
        "{msg}"
    );
    // The silent socket got two rounds of discovery: the prefix and its RDR metadata name,
    // both CanBePrefix + MustBeFresh.
    silent
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut buf = [0u8; 2048];
    let mut names = Vec::new();
    for _ in 0..4 {
        let n = silent.recv(&mut buf).unwrap();
        let Ok(Packet::Interest(i)) = Packet::decode(&buf[..n]) else {
            panic!("not an Interest")
        };
        assert!(i.can_be_prefix() && i.must_be_fresh());
        names.push(i.name().to_string());
    }
    names.sort();
    assert_eq!(
        names,
        [
            "/ndx/test/nobody",
            "/ndx/test/nobody",
            "/ndx/test/nobody/32=metadata",
            "/ndx/test/nobody/32=metadata"
        ]
    );
}

#[test]
fn rdr_metadata_discovery() {
    let data = content(5_000, 7);
    let mut opts = PutOptions::new(name("/ndx/test/rdr"), v4_any());
    opts.version = Some(9);
    opts.segment_size = 1000;
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    // Lose the first reply carrying segment 0 (the answer to the CanBePrefix Interest), so
    // the metadata packet answers discovery; segment 0 is then asked for by its name.
    let dropped_seg0 = std::sync::atomic::AtomicBool::new(false);
    let relay = Relay::start(
        producer.addr,
        0,
        Some(Box::new(move |d: &mut Vec<u8>| {
            let is_seg0 = matches!(Packet::decode(d), Ok(Packet::Data(x))
                if x.name().to_string() == "/ndx/test/rdr/v=9/seg=0");
            if is_seg0 && !dropped_seg0.swap(true, std::sync::atomic::Ordering::Relaxed) {
                d.clear();
            }
        })),
    );
    let mut g = GetOptions::new(name("/ndx/test/rdr"), relay.addr);
    g.no_progress = true;
    let (out, report) = fetch(&g).unwrap();
    assert!(out == data);
    assert_eq!(report.discovery, Discovery::Metadata);
    assert_eq!(report.name, "/ndx/test/rdr/v=9");
}

#[test]
fn pit_token_is_echoed_and_large_data_fragmented() {
    let data = content(3000, 6);
    let mut opts = PutOptions::new(name("/ndx/test/token"), v4_any());
    opts.version = Some(7);
    opts.segment_size = 2500;
    opts.mtu = LinkMtu::Fixed(1500);
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = vec![0u8; 65536];
    let token = [1u8, 2, 3, 4, 5, 6];
    let ask = |seg: u64, buf: &mut Vec<u8>| -> Vec<Vec<u8>> {
        let mut n = name("/ndx/test/token/v=7");
        n.push_segment(seg);
        let mut i = InterestRepr::new(n);
        i.nonce = Some(seg as u32);
        let wire = i.to_vec().unwrap();
        let h = LpHeaders {
            pit_token: Some(&token),
            ..LpHeaders::default()
        };
        let mut lp = vec![0; h.encoded_len(Some(wire.len()))];
        h.encode(Some(&wire), &mut lp).unwrap();
        sock.send_to(&lp, producer.addr).unwrap();
        let mut frames = Vec::new();
        loop {
            let n = sock.recv(buf).unwrap();
            frames.push(buf[..n].to_vec());
            let Ok(Packet::Lp(lp)) = Packet::decode(&buf[..n]) else {
                panic!("reply not in an LpPacket")
            };
            if lp.frag_index() + 1 == lp.frag_count() {
                return frames;
            }
        }
    };
    // Segment 1 (500 bytes) fits: one LpPacket carrying the token.
    let frames = ask(1, &mut buf);
    assert_eq!(frames.len(), 1);
    let Ok(Packet::Lp(lp)) = Packet::decode(&frames[0]) else {
        unreachable!()
    };
    assert_eq!(lp.pit_token(), Some(&token[..]));
    assert!(!lp.is_fragment());
    let d = Data::decode(lp.fragment().unwrap()).unwrap();
    assert_eq!(d.content(), &data[2500..]);
    // Segment 0 (2500 bytes) does not: fragments, each with the token (ndnd needs it on the
    // fragment that completes the set, whichever that is).
    let frames = ask(0, &mut buf);
    assert!(frames.len() >= 2);
    let mut whole = Vec::new();
    for (k, f) in frames.iter().enumerate() {
        let Ok(Packet::Lp(lp)) = Packet::decode(f) else {
            unreachable!()
        };
        assert!(f.len() <= 1500 - 28);
        assert_eq!(lp.frag_index(), k as u64);
        assert_eq!(lp.pit_token(), Some(&token[..]), "fragment {k}");
        whole.extend_from_slice(lp.fragment().unwrap());
    }
    let d = Data::decode(&whole).unwrap();
    assert!(d.digest_signature_ok());
    assert_eq!(d.content(), &data[..2500]);
    assert_eq!(producer.finish().pit_tokens_echoed, 2);
}

#[test]
fn serve_and_generate() {
    let mut s = ServeOptions::new(name("/ndx/test/gen"), v4_any());
    s.payload_size = 300;
    let server = Running::start(Producer::serve(&s).unwrap());
    let mut g = GenOptions::new(name("/ndx/test/gen"), server.addr);
    g.count = Some(500);
    g.window = 16;
    let r = generate(&g).unwrap();
    assert_eq!(
        (r.sent, r.data, r.satisfied, r.timeouts),
        (500, 500, 500, 0)
    );
    assert_eq!(r.data_per_second.iter().sum::<u64>(), 500);
    eprintln!("{r}");
    // A fixed set of names; outside the prefix nothing answers (timeouts).
    g.count = Some(50);
    g.distinct = Some(5);
    g.window = 4;
    let r = generate(&g).unwrap();
    assert_eq!(r.satisfied, 50);
    g.prefix = name("/elsewhere");
    g.count = Some(3);
    g.lifetime_ms = 100;
    let r = generate(&g).unwrap();
    assert_eq!((r.sent, r.data, r.timeouts), (3, 0, 3));
    let p = server.finish();
    assert_eq!(p.ignored, 3);
    assert_eq!(p.data_sent, 550);
}

#[test]
fn get_writes_the_output_file_and_removes_it_on_failure() {
    let data = content(50_000, 8);
    let producer = Running::start(
        Producer::put(&PutOptions::new(name("/ndx/test/file"), v4_any()), &data).unwrap(),
    );
    let path = std::env::temp_dir().join(format!("ndx-app-get-{}", std::process::id()));
    let mut g = GetOptions::new(name("/ndx/test/file"), producer.addr);
    g.no_progress = true;
    g.output = Some(path.clone());
    let report = ndx_app::get(&g).unwrap();
    assert_eq!(report.bytes, 50_000);
    assert!(std::fs::read(&path).unwrap() == data);
    // A failed fetch leaves no partial file.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    g.target = silent.local_addr().unwrap().into();
    g.discovery_retries = 0;
    g.initial_rto_ms = 50;
    g.min_rto_ms = 50;
    assert!(matches!(ndx_app::get(&g), Err(AppError::Timeout { .. })));
    assert!(!path.exists());
    // Only a regular file is removed: an output that is something else (here a symbolic
    // link; `-o /dev/null` as root was the case found) survives a failed fetch.
    let link = path.with_extension("link");
    std::fs::write(&path, b"kept").unwrap();
    std::os::unix::fs::symlink(&path, &link).unwrap();
    g.output = Some(link.clone());
    assert!(matches!(ndx_app::get(&g), Err(AppError::Timeout { .. })));
    assert!(
        std::fs::symlink_metadata(&link).is_ok(),
        "the link was removed"
    );
    let _ = std::fs::remove_file(&link);
    let _ = std::fs::remove_file(&path);
}

/// A Nack with `reason` for the Interest in datagram `d` (`None` when it holds none).
fn nack(d: &[u8], reason: NackReason) -> Option<Vec<u8>> {
    let Ok(Packet::Interest(i)) = Packet::decode(d) else {
        return None;
    };
    let h = LpHeaders {
        nack: Some(reason),
        ..LpHeaders::default()
    };
    let mut out = vec![0; h.encoded_len(Some(i.wire().len()))];
    let n = h.encode(Some(i.wire()), &mut out).unwrap();
    out.truncate(n);
    Some(out)
}

/// The name and nonce of the Interest in datagram `d`.
fn name_and_nonce(d: &[u8]) -> Option<(String, u32)> {
    match Packet::decode(d) {
        Ok(Packet::Interest(i)) => Some((i.name().to_string(), i.nonce()?)),
        _ => None,
    }
}

/// (name, nonce, when) of every Interest a relay saw.
type Seen = Arc<Mutex<Vec<(String, u32, Instant)>>>;

/// A relay in front of `producer` that Nacks with `reason` the Interests `pick` chooses
/// (given the name and how many Interests for it came before), and records them all.
fn nacking_relay(
    producer: SocketAddr,
    reason: NackReason,
    pick: fn(&str, usize) -> bool,
) -> (Relay, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let relay = Relay::answering(
        producer,
        Box::new(move |d| {
            let (name, nonce) = name_and_nonce(d)?;
            let mut log = log.lock().unwrap();
            let before = log.iter().filter(|(n, _, _)| *n == name).count();
            log.push((name.clone(), nonce, Instant::now()));
            if pick(&name, before) {
                nack(d, reason)
            } else {
                None
            }
        }),
    );
    (relay, seen)
}

fn small_object(prefix: &str, seed: u64) -> (Vec<u8>, Running) {
    let data = content(20_000, seed);
    let mut opts = PutOptions::new(name(prefix), v4_any());
    opts.segment_size = 1000;
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    (data, producer)
}

#[test]
fn nack_congestion_on_discovery_is_retried_with_backoff_then_reported() {
    let (_, producer) = small_object("/ndx/test/congested", 31);
    let (relay, seen) = nacking_relay(producer.addr, NackReason::Congestion, |_, _| true);
    let mut g = GetOptions::new(name("/ndx/test/congested"), relay.addr);
    g.no_progress = true;
    g.discovery_retries = 3;
    let err = fetch(&g).unwrap_err();
    match &err {
        AppError::Congestion {
            name,
            attempts,
            target,
        } => {
            assert_eq!(name, "/ndx/test/congested");
            assert_eq!(*attempts, 4);
            assert_eq!(*target, ndx_app::Endpoint::Udp(relay.addr));
        }
        other => panic!("expected Nack Congestion, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("Nack Congestion from udp://{}", relay.addr)),
        "{msg}"
    );
    assert!(!msg.contains("listening"), "not a silent target: {msg}");
    // Four rounds of two Interests (the prefix and its RDR name), every one with a new nonce,
    // the rounds 1, 2 and 4 ms apart at least.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 8, "{seen:?}");
    let mut nonces: Vec<u32> = seen.iter().map(|s| s.1).collect();
    nonces.sort_unstable();
    nonces.dedup();
    assert_eq!(nonces.len(), 8);
    let round = |k: usize| seen[2 * k].2;
    for (k, ms) in [(1, 1), (2, 2), (3, 4)] {
        let gap = round(k) - round(k - 1);
        assert!(gap >= Duration::from_millis(ms), "round {k} after {gap:?}");
    }
}

#[test]
fn nack_congestion_on_segments_backs_off_and_recovers_or_is_reported() {
    // The first two Interests for each segment are Nacked: the fetch completes anyway.
    let (data, producer) = small_object("/ndx/test/busy", 32);
    let (relay, _seen) = nacking_relay(producer.addr, NackReason::Congestion, |n, before| {
        n.contains("/seg=") && before < 2
    });
    let mut g = GetOptions::new(name("/ndx/test/busy"), relay.addr);
    g.no_progress = true;
    let (out, report) = fetch(&g).unwrap();
    assert!(out == data);
    // Segment 0 came with discovery; 19 more, two Nacks each.
    assert_eq!(report.nacks, 2 * 19, "{report:?}");
    assert!(report.window_decreases > 0, "{report:?}");
    // Segment 3 Nacked every time: reported after max_retries + 1 attempts.
    let (relay, seen) = nacking_relay(producer.addr, NackReason::Congestion, |n, _| {
        n.ends_with("/seg=3")
    });
    g.target = ndx_app::Endpoint::Udp(relay.addr);
    g.max_retries = 4;
    match fetch(&g) {
        Err(AppError::Congestion { name, attempts, .. }) => {
            assert!(name.ends_with("/seg=3"), "{name}");
            assert_eq!(attempts, 5);
        }
        other => panic!("expected Nack Congestion, got {other:?}"),
    }
    let seen = seen.lock().unwrap();
    let tries: Vec<Instant> = seen
        .iter()
        .filter(|s| s.0.ends_with("/seg=3"))
        .map(|s| s.2)
        .collect();
    assert_eq!(tries.len(), 5);
    // Backoffs of 1, 2, 4 and 8 ms between the tries.
    assert!(
        tries[4] - tries[0] >= Duration::from_millis(15),
        "{tries:?}"
    );
}

#[test]
fn nack_no_route_ends_the_fetch_at_once() {
    let (_, producer) = small_object("/ndx/test/noroute", 33);
    let (relay, seen) = nacking_relay(producer.addr, NackReason::NoRoute, |_, _| true);
    let mut g = GetOptions::new(name("/ndx/test/noroute"), relay.addr);
    g.no_progress = true;
    let err = fetch(&g).unwrap_err();
    assert!(matches!(err, AppError::NoRoute { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "no route to /ndx/test/noroute at udp://{} (Nack NoRoute)",
            relay.addr
        )
    );
    // One round (the prefix and its RDR name), no retry.
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[test]
fn nack_duplicate_is_retransmitted_with_a_new_nonce() {
    let (data, producer) = small_object("/ndx/test/dup", 34);
    // The first Interest for every name is Nacked Duplicate.
    let (relay, seen) = nacking_relay(producer.addr, NackReason::Duplicate, |_, before| {
        before == 0
    });
    let mut g = GetOptions::new(name("/ndx/test/dup"), relay.addr);
    g.no_progress = true;
    let (out, report) = fetch(&g).unwrap();
    assert!(out == data);
    let seen = seen.lock().unwrap();
    let mut by_name: HashMap<&str, Vec<u32>> = HashMap::new();
    for (n, nonce, _) in seen.iter() {
        by_name.entry(n).or_default().push(*nonce);
    }
    // Discovery's two names, then segments 1 to 19: each Nacked once and sent again.
    assert_eq!(report.nacks, 2 + 19, "{report:?}");
    for (n, nonces) in &by_name {
        if n.ends_with("/seg=0") {
            continue; // answered during discovery, never asked by its own name
        }
        assert!(nonces.len() >= 2, "{n}: {nonces:?}");
        assert_ne!(
            nonces[0], nonces[1],
            "{n}: the retransmission has a new nonce"
        );
    }
    assert_eq!(report.window_decreases, 0, "a Duplicate is not congestion");
}
