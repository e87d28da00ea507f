//! `Shard::process_burst` does exactly what `Shard::process` does frame by frame: the same
//! sends (faces and bytes, in order), drops, counters and PIT, on random traffic (Interests,
//! Data with and without our tokens, Nacks, fragments, garbage) cut into random bursts (up to
//! 100 frames: one group of 8 or several). The lent calls (`process_lent`,
//! `process_burst_lent`) send the same frames too, read back with `Lent::sends`.

use ndx_codec::{InterestRepr, LpHeaders};
use ndx_core::{Actions, FaceId, FaceInfo, Fib, Lent, NextHop, Shard, ShardConfig};
use proptest::prelude::*;

mod common;
use common::{encode, frame, name, our_token};

type Sent = (Vec<(FaceId, Vec<u8>)>, Vec<(FaceId, ndx_core::DropReason)>);

fn shard() -> Shard {
    let cfg = ShardConfig {
        pit_capacity: 32,
        ..ShardConfig::default()
    };
    let (mut fib, reader) = Fib::new(cfg.hash_key, 2);
    fib.add_nexthop(
        &name(1).as_name(),
        NextHop {
            face: FaceId(1),
            cost: 1,
        },
    )
    .unwrap();
    fib.add_nexthop(
        &name(3).as_name(),
        NextHop {
            face: FaceId(2),
            cost: 2,
        },
    )
    .unwrap();
    fib.publish();
    // Dropping the writer leaves the published routes to the readers.
    drop(fib);
    let mut s = Shard::new(cfg, reader, 0);
    for f in 0..3 {
        s.add_face(
            FaceId(f),
            FaceInfo {
                local: f == 0,
                multi_access: f == 2,
                ..FaceInfo::default()
            },
        );
    }
    s
}

fn collect(out: &Actions) -> Sent {
    (
        out.sends().map(|(f, b)| (f, b.to_vec())).collect(),
        out.drops().to_vec(),
    )
}

/// The sends of an action list whose frames were lent (`frames`, by index), whole.
fn collect_lent(out: &Actions, lent: &Lent<usize>, frames: &[(FaceId, Vec<u8>)]) -> Sent {
    let sends = lent
        .sends(out, |&k| frames[k].1.as_slice())
        .map(|o| {
            let mut b = Vec::new();
            o.copy_to(&mut b);
            (o.face, b)
        })
        .collect();
    (sends, out.drops().to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn burst_equals_one_by_one(
        traffic in proptest::collection::vec(
            proptest::collection::vec((0u32..4, frame(), any::<prop::sample::Index>(), any::<u8>(), any::<bool>()), 1..100),
            1..12),
        gaps in proptest::collection::vec(0u64..20_000_000, 12),
    ) {
        let mut one = shard();
        let mut burst = shard();
        let mut lent = shard();
        let mut out_one = Actions::new();
        let mut out_burst = Actions::new();
        let mut out_lent = Actions::new();
        let mut now = 0;
        let mut last_token: Option<[u8; ndx_core::PIT_TOKEN_LEN]> = None;
        for (group, gap) in traffic.iter().zip(&gaps) {
            now += gap;
            let mut frames: Vec<(FaceId, Vec<u8>)> = Vec::new();
            for (face, f, at, byte, mutate) in group {
                for mut wire in encode(f, last_token) {
                    if *mutate && !wire.is_empty() {
                        let k = at.index(wire.len());
                        wire[k] = *byte;
                    }
                    frames.push((FaceId(*face), wire));
                }
            }
            out_one.clear();
            for (face, wire) in &frames {
                one.process(now, *face, wire, &mut out_one);
            }
            out_burst.clear();
            let refs: Vec<(FaceId, &[u8])> = frames.iter().map(|(f, w)| (*f, w.as_slice())).collect();
            burst.process_burst(now, &refs, &mut out_burst);
            let (a, b) = (collect(&out_one), collect(&out_burst));
            prop_assert_eq!(&a, &b);
            // Lent: in one burst, or one by one (alternately).
            out_lent.clear();
            let mut ledger = Lent::new();
            if now % 2 == 0 {
                ledger.extend(0..frames.len());
                lent.process_burst_lent(now, &refs, &mut ledger, &mut out_lent);
            } else {
                for (k, (face, wire)) in frames.iter().enumerate() {
                    ledger.push(k);
                    lent.process_lent(now, *face, wire, &mut ledger, &mut out_lent);
                }
            }
            prop_assert_eq!(ledger.len(), frames.len());
            prop_assert_eq!(&a, &collect_lent(&out_lent, &ledger, &frames));
            // Every lent frame comes back once, in order (none kept: the shard copies).
            let mut back = Vec::new();
            lent.return_lent(&mut ledger, |k, keep| {
                back.push((k, keep));
                None
            });
            prop_assert_eq!(back, (0..frames.len()).map(|k| (k, false)).collect::<Vec<_>>());
            for (_, sent) in &a.0 {
                if let Some(t) = our_token(sent) {
                    last_token = Some(t);
                }
            }
            out_one.clear();
            out_burst.clear();
            out_lent.clear();
            one.on_timer(now, &mut out_one);
            burst.on_timer(now, &mut out_burst);
            lent.on_timer(now, &mut out_lent);
            prop_assert_eq!(collect(&out_one), collect(&out_lent));
            prop_assert_eq!(one.counters(), burst.counters());
            prop_assert_eq!(one.counters(), lent.counters());
            prop_assert_eq!(one.pit().len(), burst.pit().len());
            prop_assert_eq!(one.pit().len(), lent.pit().len());
        }
    }
}

/// Frames the shard sends carry the same bytes the codec's own encoder writes (the shard
/// writes PitToken-only LpPackets itself).
#[test]
fn forwarded_frames_decode_with_the_codec() {
    let mut s = shard();
    let mut out = Actions::new();
    for (j, size) in [10usize, 200, 300, 70_000].into_iter().enumerate() {
        let mut i = InterestRepr::new(name(3));
        i.nonce = Some(j as u32);
        i.set_app_params(vec![3; size]);
        let wire = i.to_vec().unwrap();
        out.clear();
        s.process(j as u64, FaceId(0), &wire, &mut out);
        let (face, sent) = out.sends().next().expect("forwarded");
        assert_eq!(face, FaceId(2));
        let lp = ndx_codec::LpPacket::decode(sent).expect("LpPacket");
        let token = lp.pit_token().expect("token");
        let h = LpHeaders {
            pit_token: Some(token),
            ..LpHeaders::default()
        };
        let mut want = vec![0; h.encoded_len(Some(wire.len()))];
        let n = h.encode(Some(&wire), &mut want).unwrap();
        // Local downstream: the HopLimit is not touched, so the bytes are the codec's.
        assert_eq!(sent, &want[..n], "size {size}");
    }
}
