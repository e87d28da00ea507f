//! Fairness under Interest flooding: a face that floods unique names gets at most its share of
//! the PIT and a bounded rate of Nacks, and the other faces keep forwarding.

use ndx_codec::{InterestRepr, NackReason, NameBuf, Packet};
use ndx_core::{Actions, DropReason, FaceId, FaceInfo, Fairness, Fib, NextHop, Shard, ShardConfig};

const ATTACKER: FaceId = FaceId(1);
const LEGIT: FaceId = FaceId(2);
const UPSTREAM: FaceId = FaceId(3);

fn interest(prefix: &str, i: u64, lifetime_ms: u64) -> Vec<u8> {
    let mut n = NameBuf::from_uri(prefix).unwrap();
    n.push_generic(&i.to_be_bytes());
    let mut r = InterestRepr::new(n);
    r.nonce = Some(i as u32 ^ 0x5a5a_0000);
    r.lifetime_ms = Some(lifetime_ms);
    r.to_vec().unwrap()
}

fn shard(capacity: usize, fairness: Fairness) -> Shard {
    let cfg = ShardConfig {
        pit_capacity: capacity,
        fairness,
        ..ShardConfig::default()
    };
    let (mut fib, reader) = Fib::new(cfg.hash_key, 2);
    fib.add_nexthop(
        &NameBuf::from_uri("/routable").unwrap().as_name(),
        NextHop {
            face: UPSTREAM,
            cost: 1,
        },
    )
    .unwrap();
    fib.publish();
    let mut s = Shard::new(cfg, reader, 0);
    for f in [ATTACKER, LEGIT, UPSTREAM] {
        s.add_face(f, FaceInfo::default());
    }
    s
}

/// (Interests forwarded upstream, Nack Congestion sent back) among `out`'s sends.
fn tally(out: &Actions) -> (usize, usize) {
    let (mut fwd, mut congestion) = (0, 0);
    for (face, bytes) in out.sends() {
        if face == UPSTREAM {
            fwd += 1;
        } else if let Ok(Packet::Lp(lp)) = Packet::decode(bytes)
            && lp.nack() == Some(NackReason::Congestion)
        {
            congestion += 1;
        }
    }
    (fwd, congestion)
}

#[test]
fn a_flooding_face_gets_its_share_and_the_others_keep_forwarding() {
    let capacity = 4096;
    let fairness = Fairness {
        nack_rate: 1000,
        nack_burst: 50,
        ..Fairness::default()
    };
    let mut s = shard(capacity, fairness);
    let mut out = Actions::new();
    let mut now = 1_000_000_000;
    // The attacker floods 20,000 unique names that nobody answers, 4 s lifetimes.
    let (mut fwd, mut nacked) = (0, 0);
    for i in 0..20_000 {
        out.clear();
        s.process(
            now,
            ATTACKER,
            &interest("/routable/flood", i, 4000),
            &mut out,
        );
        let (f, n) = tally(&out);
        fwd += f;
        nacked += n;
        now += 1_000; // 1 M Interests/s
    }
    let share = capacity / 2;
    assert_eq!(fwd, share, "alone, the attacker gets half the PIT");
    assert_eq!(s.pit().len(), share);
    let load = s.face_load(ATTACKER);
    assert_eq!(load.pit_entries as usize, share);
    assert_eq!(load.pit_quota, 20_000 - share as u64);
    assert_eq!(load.interests, 20_000);
    assert_eq!(load.drops, load.pit_quota);
    // Nacks: the bucket's depth, then 1000/s over the 20 ms the flood lasted.
    assert!((50..=50 + 25).contains(&nacked), "{nacked} Nacks");
    assert_eq!(load.nacks_limited, load.pit_quota - nacked as u64);
    assert_eq!(
        s.counters().dropped(DropReason::PitQuota),
        20_000 - share as u64
    );

    // A legitimate consumer arrives while the flood goes on: every one of its Interests is
    // forwarded, interleaved with the attacker's refused ones.
    let mut legit_fwd = 0;
    for i in 0..1000 {
        out.clear();
        s.process(now, LEGIT, &interest("/routable/video", i, 4000), &mut out);
        legit_fwd += tally(&out).0;
        out.clear();
        s.process(
            now,
            ATTACKER,
            &interest("/routable/flood", 100_000 + i, 4000),
            &mut out,
        );
        assert_eq!(tally(&out).0, 0, "the attacker stays at its share");
        now += 1_000;
    }
    assert_eq!(legit_fwd, 1000);
    assert_eq!(s.face_load(LEGIT).pit_entries, 1000);
    assert_eq!(s.face_load(LEGIT).drops, 0);
    // Two active faces: the share is now a third.
    assert_eq!(s.pit_share() as usize, capacity / 3);

    // The flood's entries expire: the attacker's share comes back, the accounting is exact.
    now += 5_000_000_000;
    out.clear();
    s.on_timer(now, &mut out);
    assert_eq!(s.pit().len(), 0);
    assert_eq!(s.face_load(ATTACKER).pit_entries, 0);
    assert_eq!(s.face_load(LEGIT).pit_entries, 0);
    out.clear();
    s.process(
        now,
        ATTACKER,
        &interest("/routable/flood", 999_999, 4000),
        &mut out,
    );
    assert_eq!(tally(&out).0, 1);
}

#[test]
fn a_flood_to_an_unroutable_prefix_gets_rate_limited_nacks() {
    let fairness = Fairness {
        nack_rate: 1000,
        nack_burst: 10,
        ..Fairness::default()
    };
    let mut s = shard(1024, fairness);
    let mut out = Actions::new();
    let mut now = 1_000_000_000;
    let mut nacks = 0;
    for i in 0..10_000 {
        out.clear();
        s.process(now, ATTACKER, &interest("/nowhere", i, 4000), &mut out);
        nacks += out
            .sends()
            .filter(|(_, b)| {
                matches!(Packet::decode(b), Ok(Packet::Lp(lp)) if lp.nack() == Some(NackReason::NoRoute))
            })
            .count();
        now += 1_000;
    }
    // 10 ms of flood: the burst of 10, and 1000/s after it.
    assert!((10..=10 + 11).contains(&nacks), "{nacks}");
    assert_eq!(s.counters().dropped(DropReason::NoRoute), 10_000);
    assert_eq!(s.counters().nacks_limited, 10_000 - nacks as u64);
    assert_eq!(s.pit().len(), 0, "a NoRoute Interest leaves no entry");
    // The legitimate face's own Nacks are not limited by the attacker's.
    out.clear();
    s.process(now, LEGIT, &interest("/nowhere", 1, 4000), &mut out);
    assert_eq!(out.sends().count(), 1);
}

/// The attacker sends Interests `from..from + n` for `/routable/x` at one instant.
fn attacker_floods(s: &mut Shard, from: u64, n: u64) {
    let mut out = Actions::new();
    for i in from..from + n {
        out.clear();
        s.process(
            1_000_000_000,
            ATTACKER,
            &interest("/routable/x", i, 4000),
            &mut out,
        );
    }
}

#[test]
fn shares_off_lets_one_face_fill_the_pit() {
    let fairness = Fairness {
        pit_shares: false,
        ..Fairness::default()
    };
    let mut s = shard(256, fairness);
    attacker_floods(&mut s, 0, 300);
    assert_eq!(s.pit().len(), 256);
    assert_eq!(s.counters().dropped(DropReason::PitFull), 44);
    assert_eq!(s.counters().dropped(DropReason::PitQuota), 0);
}

#[test]
fn retune_turns_shares_on_while_the_shard_runs() {
    let off = Fairness {
        pit_shares: false,
        ..Fairness::default()
    };
    let mut s = shard(256, off);
    attacker_floods(&mut s, 0, 100);
    assert_eq!(s.pit().len(), 100, "no share while off");
    // A reload turns shares on: one active face of 256 entries with one reserved share gets
    // 128, so the 100 it holds stay and it may create 28 more.
    s.retune(Fairness::default(), 120_000, s.config().unsolicited);
    attacker_floods(&mut s, 100, 100);
    assert_eq!(s.pit().len(), 128, "the PIT entries in flight stay");
    assert_eq!(s.counters().dropped(DropReason::PitQuota), 72);
    assert_eq!(s.config().fairness, Fairness::default());
}
