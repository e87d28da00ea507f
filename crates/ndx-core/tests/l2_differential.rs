//! The L2 on random segment traffic, against L1 only:
//! - an L2 that never acknowledges a write (so holds nothing) changes nothing: same sends
//!   (faces and bytes), drops, counters and PIT as `l2: None`, which emits no L2 action;
//! - an L2 that stores every batch and completes every read at once never sends a Data that
//!   is not the one the producer made for that name, and every Data it sends answers an
//!   Interest that was pending on that face.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use ndx_codec::{DataRepr, InterestRepr, LpPacket, NameBuf, Packet};
use ndx_core::{
    Actions, CsConfig, FaceId, Fib, L2Config, NextHop, Replacement, Shard, ShardConfig,
};
use proptest::prelude::*;

const UP: FaceId = FaceId(1);

/// L2 reads completed over all cases of `l2_only_ever_serves_the_right_data`.
static READS: AtomicU64 = AtomicU64::new(0);

fn shard(l2: Option<L2Config>) -> Shard {
    let cfg = ShardConfig {
        pit_capacity: 64,
        cs: CsConfig {
            capacity: 6,
            slot_size: 1024,
            replacement: Replacement::Lru,
            ..CsConfig::default()
        },
        l2,
        ..ShardConfig::default()
    };
    let (mut fib, reader) = Fib::new(cfg.hash_key, 2);
    let p = NameBuf::from_uri("/p").unwrap();
    fib.add_nexthop(&p.as_name(), NextHop { face: UP, cost: 1 })
        .unwrap();
    fib.publish();
    drop(fib);
    let mut s = Shard::new(cfg, reader, 0);
    for f in 1..4 {
        s.add_face(FaceId(f), ndx_core::FaceInfo::default());
    }
    s
}

fn seg_name(c: u8, s: u64) -> NameBuf {
    let mut n = NameBuf::from_uri(&format!("/p/c{c}")).unwrap();
    n.push_segment(s);
    n
}

/// The producer's Data for a name (deterministic).
fn data(name: &NameBuf) -> Vec<u8> {
    let mut d = DataRepr::new(name.clone(), name.to_string().into_bytes());
    d.freshness_ms = Some(1_000_000);
    d.to_vec().unwrap()
}

#[derive(Debug, Clone)]
enum Ev {
    /// Interest from downstream face 2 or 3.
    Interest {
        face: u32,
        c: u8,
        s: u64,
        nonce: u32,
    },
    /// The producer answers the last Interest forwarded for this name (with its token).
    Data { c: u8, s: u64, token: bool },
    /// Time passes (ns).
    Wait(u64),
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        5 => (2u32..4, 0u8..3, 0u64..10, any::<u32>())
            .prop_map(|(face, c, s, nonce)| Ev::Interest { face, c, s, nonce }),
        4 => (0u8..3, 0u64..10, any::<bool>()).prop_map(|(c, s, token)| Ev::Data { c, s, token }),
        1 => (0u64..30_000_000).prop_map(Ev::Wait),
    ]
}

fn frame(e: &Ev, tokens: &HashMap<String, Vec<u8>>) -> Option<(FaceId, Vec<u8>)> {
    match e {
        Ev::Interest { face, c, s, nonce } => {
            let mut i = InterestRepr::new(seg_name(*c, *s));
            i.nonce = Some(*nonce);
            i.lifetime_ms = Some(20);
            Some((FaceId(*face), i.to_vec().unwrap()))
        }
        Ev::Data { c, s, token } => {
            let name = seg_name(*c, *s);
            let d = data(&name);
            let t = tokens.get(&name.to_string()).filter(|_| *token);
            let h = ndx_codec::LpHeaders {
                pit_token: t.map(|t| &t[..]),
                ..Default::default()
            };
            let mut out = vec![0; h.encoded_len(Some(d.len()))];
            let n = h.encode(Some(&d), &mut out).unwrap();
            out.truncate(n);
            Some((UP, out))
        }
        Ev::Wait(_) => None,
    }
}

/// Remembers the token of every Interest sent upstream.
fn note_tokens(out: &Actions, tokens: &mut HashMap<String, Vec<u8>>) {
    for (f, b) in out.sends() {
        if f == UP
            && let Ok(lp) = LpPacket::decode(b)
            && let Ok(Some(Packet::Interest(i))) = lp.network_packet()
            && let Some(t) = lp.pit_token()
        {
            tokens.insert(i.name().to_string(), t.to_vec());
        }
    }
}

/// A stored batch: (name hash, Data).
type Batch = Vec<(u64, Vec<u8>)>;

type Sent = (Vec<(FaceId, Vec<u8>)>, Vec<(FaceId, ndx_core::DropReason)>);

fn collect(out: &Actions) -> Sent {
    (
        out.sends().map(|(f, b)| (f, b.to_vec())).collect(),
        out.drops().to_vec(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn an_empty_l2_changes_nothing(events in proptest::collection::vec(ev(), 1..120)) {
        let mut plain = shard(None);
        let mut l2 = shard(Some(L2Config { batch: 2, ..L2Config::default() }));
        let (mut a, mut b) = (Actions::new(), Actions::new());
        let mut tokens = HashMap::new();
        let mut now = 0;
        let mut writes = 0;
        for e in &events {
            if let Ev::Wait(d) = e {
                now += d;
                a.clear();
                b.clear();
                plain.on_timer(now, &mut a);
                l2.on_timer(now, &mut b);
                continue;
            }
            let Some((face, wire)) = frame(e, &tokens) else { continue };
            a.clear();
            b.clear();
            plain.process(now, face, &wire, &mut a);
            l2.process_burst(now, &[(face, &wire)], &mut b);
            prop_assert_eq!(collect(&a), collect(&b));
            prop_assert!(a.l2_reads().is_empty() && a.l2_writes().next().is_none());
            prop_assert!(b.l2_reads().is_empty(), "nothing acknowledged, nothing read");
            writes += b.l2_writes().count();
            note_tokens(&a, &mut tokens);
            prop_assert_eq!(plain.counters(), l2.counters());
            prop_assert_eq!(plain.pit().len(), l2.pit().len());
        }
        prop_assert_eq!(l2.l2_counters().unwrap().writes, writes as u64);
    }

    /// The property (run by `l2_only_ever_serves_the_right_data`).
    fn l2_only_ever_serves_the_right_data_cases(
        events in proptest::collection::vec(ev(), 1..150),
        prefetch in any::<bool>(),
        batch in 1u64..5,
    ) {
        let mut s = shard(Some(L2Config { batch, prefetch, ..L2Config::default() }));
        let mut out = Actions::new();
        let mut next = Actions::new();
        let mut store: HashMap<(u64, u64), Batch> = HashMap::new();
        let mut tokens = HashMap::new();
        let mut pending: HashMap<(u32, String), u64> = HashMap::new();
        let mut now = 0;
        let mut served_from_l2 = 0;
        for e in &events {
            out.clear();
            match e {
                Ev::Wait(d) => {
                    now += d;
                    s.on_timer(now, &mut out);
                    continue;
                }
                Ev::Interest { face, c, s: seg, .. } => {
                    pending.insert((*face, seg_name(*c, *seg).to_string()), now + 20_000_000);
                }
                Ev::Data { .. } => {}
            }
            let Some((face, wire)) = frame(e, &tokens) else { continue };
            s.process(now, face, &wire, &mut out);
            // Carry out L2 requests until none is left (reads complete at once).
            loop {
                note_tokens(&out, &mut tokens);
                for (f, b) in out.sends() {
                    if f == UP {
                        continue;
                    }
                    let d = match Packet::decode(b) {
                        Ok(Packet::Data(d)) => d,
                        Ok(Packet::Lp(lp)) => match lp.network_packet() {
                            Ok(Some(Packet::Data(d))) => d,
                            other => return Err(TestCaseError::fail(format!("not Data: {other:?}"))),
                        },
                        other => return Err(TestCaseError::fail(format!("not Data: {other:?}"))),
                    };
                    let name = d.name().to_buf();
                    prop_assert_eq!(d.wire(), &data(&name)[..], "the producer's Data");
                    let k = (f.0, name.to_string());
                    prop_assert!(pending.get(&k).is_some_and(|&exp| exp >= now), "asked for on {}", f.0);
                    pending.remove(&k);
                }
                for w in out.l2_writes() {
                    store.insert((w.content_key, w.batch), w.segments().map(|(k, f)| (k, f.to_vec())).collect());
                    s.on_l2_written(w.content_key, w.batch, true);
                }
                let reads: Vec<_> = out.l2_reads().to_vec();
                if reads.is_empty() {
                    break;
                }
                next.clear();
                for r in reads {
                    served_from_l2 += 1;
                    match store.get(&(r.content_key, r.batch)) {
                        Some(b) => s.on_l2_complete(now, r.request, Ok(b.iter().map(|(k, f)| (*k, f.as_slice()))), &mut next),
                        None => s.on_l2_complete(now, r.request, Err::<std::iter::Empty<(u64, &[u8])>, _>(ndx_core::L2Failure::Stale), &mut next),
                    }
                }
                std::mem::swap(&mut out, &mut next);
            }
        }
        READS.fetch_add(served_from_l2, Ordering::Relaxed);
    }
}

/// The property above really exercises the L2 (reads happen in its cases).
#[test]
fn l2_only_ever_serves_the_right_data() {
    l2_only_ever_serves_the_right_data_cases();
    assert!(
        READS.load(Ordering::Relaxed) > 0,
        "the random traffic reached the L2"
    );
}

/// A parked Interest whose read fails goes upstream as it was received (lifetime, HopLimit
/// decremented, Nonce), and the Data then reaches the downstream.
#[test]
fn fallback_forwards_the_interest_as_received() {
    let mut s = shard(Some(L2Config {
        batch: 2,
        ..L2Config::default()
    }));
    let name = seg_name(1, 3);
    let (ck, batch) = s.l2_key(&name.as_name()).expect("segment name");
    assert_eq!(batch, 1);
    s.on_l2_written(ck, batch, true);
    let mut i = InterestRepr::new(name.clone());
    i.nonce = Some(5);
    i.lifetime_ms = Some(1234);
    i.hop_limit = Some(7);
    let wire = i.to_vec().unwrap();
    let mut out = Actions::new();
    s.process(0, FaceId(2), &wire, &mut out);
    assert_eq!(out.sends().count(), 0, "parked, not forwarded");
    let read = *out.l2_reads().first().expect("a batch read");
    assert_eq!((read.content_key, read.batch), (ck, batch));
    let mut back = Actions::new();
    s.on_l2_complete(
        1,
        read.request,
        Err::<std::iter::Empty<(u64, &[u8])>, _>(ndx_core::L2Failure::Io),
        &mut back,
    );
    let sent: Vec<(FaceId, Vec<u8>)> = back.sends().map(|(f, b)| (f, b.to_vec())).collect();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, UP);
    let lp = LpPacket::decode(&sent[0].1).expect("LpPacket");
    let token = lp.pit_token().expect("our token").to_vec();
    let Ok(Some(Packet::Interest(up))) = lp.network_packet() else {
        panic!("an Interest")
    };
    assert_eq!(up.name().to_string(), name.to_string());
    assert_eq!(up.nonce(), Some(5));
    assert_eq!(up.effective_lifetime_ms(), 1234);
    assert_eq!(up.hop_limit(), Some(6));
    let k = s.l2_counters().unwrap();
    assert_eq!((k.read_failures, k.fallbacks), (1, 1));
    // The producer's Data, echoing the token, goes to the downstream.
    let d = data(&name);
    let h = ndx_codec::LpHeaders {
        pit_token: Some(&token),
        ..Default::default()
    };
    let mut frame = vec![0; h.encoded_len(Some(d.len()))];
    let n = h.encode(Some(&d), &mut frame).unwrap();
    out.clear();
    s.process(2, UP, &frame[..n], &mut out);
    let faces: Vec<FaceId> = out.sends().map(|(f, _)| f).collect();
    assert_eq!(faces, vec![FaceId(2)]);
    assert_eq!(s.pit().len(), 0);
}
