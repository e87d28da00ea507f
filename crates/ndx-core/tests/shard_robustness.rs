//! The shard never panics, whatever arrives: random well-formed and mutated traffic from
//! several faces (deep names, selectors, tokens, Nacks, fragments), with time advancing.

use ndx_core::{Actions, FaceId, FaceInfo, Fairness, Fib, NextHop, Shard, ShardConfig};
use proptest::prelude::*;

mod common;
use common::{encode, frame, name, our_token};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn shard_survives_any_traffic(
        traffic in proptest::collection::vec((0u32..4, frame(), 0u64..20_000_000, any::<prop::sample::Index>(), any::<u8>(), any::<bool>()), 1..120)
    ) {
        // Small PIT shares and Nack buckets, so the fairness paths run too.
        let fairness = Fairness { pit_min: 4, nack_rate: 100, nack_burst: 3, ..Fairness::default() };
        let cfg = ShardConfig { pit_capacity: 32, fairness, ..ShardConfig::default() };
        let (mut fib, reader) = Fib::new(cfg.hash_key, 2);
        fib.add_nexthop(&name(1).as_name(), NextHop { face: FaceId(1), cost: 1 }).unwrap();
        fib.add_nexthop(&name(3).as_name(), NextHop { face: FaceId(2), cost: 2 }).unwrap();
        fib.publish();
        let mut shard = Shard::new(cfg, reader, 0);
        for f in 0..3 {
            shard.add_face(FaceId(f), FaceInfo { local: f == 0, multi_access: f == 2, ..FaceInfo::default() });
        }
        let mut out = Actions::new();
        let mut now = 0;
        let mut last_token: Option<[u8; ndx_core::PIT_TOKEN_LEN]> = None;
        for (face, f, dt, at, byte, mutate) in traffic {
            now += dt;
            for mut wire in encode(&f, last_token) {
                if mutate && !wire.is_empty() {
                    let k = at.index(wire.len());
                    wire[k] = byte;
                }
                out.clear();
                shard.process(now, FaceId(face), &wire, &mut out);
                // Remember a token we issued, to echo it in later Data and Nacks.
                for (_, sent) in out.sends() {
                    if let Some(t) = our_token(sent) {
                        last_token = Some(t);
                    }
                }
            }
            out.clear();
            shard.on_timer(now, &mut out);
            prop_assert!(shard.pit().len() <= 32);
            // Every pending entry is held against exactly one face's share.
            let held: usize = shard.face_loads().iter().map(|(_, l)| l.pit_entries as usize).sum();
            prop_assert_eq!(held, shard.pit().len());
        }
        // Long after everything: the PIT drains.
        shard.on_timer(now + 300_000_000_000, &mut out);
        prop_assert_eq!(shard.pit().len(), 0);
        prop_assert!(shard.face_loads().iter().all(|(_, l)| l.pit_entries == 0));
    }
}
