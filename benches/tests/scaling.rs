//! The scaling bench (`ndx_benches::scaling`, run by `examples/exchange2.rs`), briefly: its
//! counts, never its timings. Every Interest is forwarded, every Data is matched by its
//! token in the shard that owns its PIT entry and sent down once, and the hand-offs are the
//! configured share of each shard's Data.

use ndx_benches::scaling::{Bench, Config, Fixture, Handoff};

const N: usize = 1000;

fn config(shards: usize, cross_percent: u32, handoff: Handoff) -> Config {
    Config {
        shards,
        exchanges: N,
        burst: 32,
        cross_percent,
        handoff,
        pin: true,
        // Exercised here; what it subtracts is not asserted (it depends on the load).
        unpreempt: shards > 1,
        // Both models of where frames are written, alternately.
        cold: cross_percent.is_multiple_of(2),
    }
}

/// The most Data a pipeline burst may carry: a burst, or with `Merged` a burst of our own
/// and up to a burst (less one) held over from the turn before.
fn most(cfg: Config) -> usize {
    match cfg.handoff {
        Handoff::Merged => 2 * cfg.burst - 1,
        _ => cfg.burst,
    }
}

/// Runs two passes of `cfg` and checks every count of both.
fn check(fixture: &Fixture, cfg: Config) {
    let mut bench = Bench::new(cfg, fixture).expect("valid configuration");
    for pass in 0..2 {
        let p = bench.pass();
        assert_eq!(p.shards.len(), cfg.shards);
        let expect = cfg.expected_handoffs();
        let what = format!("{cfg:?}, pass {pass}");
        for (s, r) in p.shards.iter().enumerate() {
            let n = N as u64;
            assert_eq!(r.exchanges, n, "{what}: shard {s}");
            assert_eq!(r.interests_forwarded, n, "{what}: shard {s} forwarded");
            assert_eq!(r.interests_out, n, "{what}: shard {s} Interests out");
            // Each shard matched exactly its own Data, all by token, and sent each down.
            assert_eq!(r.data_in, n, "{what}: shard {s} Data in");
            assert_eq!(r.by_token, n, "{what}: shard {s} by token");
            assert_eq!(r.data_out, n, "{what}: shard {s} Data out");
            assert_eq!(r.data_down, n, "{what}: shard {s} Data down");
            assert_eq!(r.handoffs_in, expect, "{what}: shard {s} hand-offs in");
            assert!(r.engine_ns > 0, "{what}: shard {s} timed");
        }
        let out: u64 = p.shards.iter().map(|r| r.handoffs_out).sum();
        assert_eq!(out, expect * cfg.shards as u64, "{what}: hand-offs out");
        assert_eq!(p.handoffs(), out, "{what}: every hand-off arrived");
        // Every Data went through a pipeline burst (or, by frame, a run of one) of at most
        // the most a burst may carry; so did every hand-off.
        let (per_burst, handed_per_burst) = p.burst_sizes();
        assert!(
            per_burst >= 1.0 && per_burst <= most(cfg) as f64,
            "{what}: {per_burst}"
        );
        if expect > 0 {
            assert!(
                handed_per_burst >= 1.0 && handed_per_burst <= most(cfg) as f64,
                "{what}: {handed_per_burst}"
            );
        } else {
            assert_eq!(handed_per_burst, 0.0, "{what}: nothing handed over");
        }
        for (s, r) in p.shards.iter().enumerate() {
            let fewest = N.div_ceil(most(cfg)) as u64;
            assert!(r.data_bursts >= fewest, "{what}: shard {s} {r:?}");
            if cfg.handoff == Handoff::Frame {
                assert_eq!(r.handed_bursts, r.handoffs_in, "{what}: one run per frame");
            }
        }
        if cfg.shards == 2 {
            // Two shards: what one hands out is what the other receives.
            assert_eq!(p.shards[0].handoffs_out, p.shards[1].handoffs_in, "{what}");
            assert_eq!(p.shards[1].handoffs_out, p.shards[0].handoffs_in, "{what}");
        }
    }
}

#[test]
fn one_shard_forwards_and_matches_everything() {
    let fixture = Fixture::new(1000, N, 1, true);
    // The share is ignored with one shard: nothing to hand to.
    check(&fixture, config(1, 50, Handoff::Frame));
}

#[test]
fn two_shards_hand_off_the_configured_share() {
    let fixture = Fixture::new(1000, N, 2, true);
    for cross in [0, 50, 100, 37] {
        check(&fixture, config(2, cross, Handoff::Burst));
        check(&fixture, config(2, cross, Handoff::Merged));
    }
    check(&fixture, config(2, 50, Handoff::Frame));
}

#[test]
fn three_shards_with_private_fibs_hand_off_round_the_mesh() {
    let fixture = Fixture::new(1000, N, 3, false);
    check(&fixture, config(3, 50, Handoff::Burst));
    check(&fixture, config(3, 100, Handoff::Burst));
    check(&fixture, config(3, 100, Handoff::Frame));
    check(&fixture, config(3, 50, Handoff::Merged));
}

#[test]
fn the_share_is_spread_evenly_and_rounds_down() {
    let cfg = config(2, 37, Handoff::Frame);
    let crossing = (0..N).filter(|&j| cfg.arrives_at(0, j) != 0).count();
    assert_eq!(crossing as u64, cfg.expected_handoffs());
    assert_eq!(cfg.expected_handoffs(), 370);
    // Evenly: every window of 100 exchanges has 37 crossings, give or take one.
    for w in 0..N - 100 {
        let c = (w..w + 100).filter(|&j| cfg.arrives_at(1, j) != 1).count();
        assert!((36..=38).contains(&c), "window {w}: {c}");
    }
    // With three shards the crossings alternate between the other two.
    let cfg = config(3, 100, Handoff::Frame);
    let at: Vec<usize> = (0..4).map(|j| cfg.arrives_at(0, j)).collect();
    assert_eq!(at, vec![1, 2, 1, 2]);
}

#[test]
fn bad_configurations_are_refused_with_the_setting_named() {
    let fixture = Fixture::new(10, 10, 2, true);
    let bad = [
        (
            Config {
                shards: 0,
                ..config(2, 50, Handoff::Frame)
            },
            "shards = 0",
        ),
        (
            Config {
                cross_percent: 101,
                ..config(2, 50, Handoff::Frame)
            },
            "cross share = 101%",
        ),
        (
            Config {
                burst: 0,
                ..config(2, 50, Handoff::Frame)
            },
            "burst = 0",
        ),
        (
            Config {
                exchanges: 10,
                ..config(3, 50, Handoff::Frame)
            },
            "3 shards of 10 exchanges: the fixture has 2 shards of 10",
        ),
    ];
    for (cfg, msg) in bad {
        let e = Bench::new(cfg, &fixture).expect_err("refused");
        assert!(e.contains(msg), "{e:?} names {msg:?}");
    }
    assert!("sideways".parse::<Handoff>().is_err());
    assert_eq!("burst".parse::<Handoff>(), Ok(Handoff::Burst));
    assert_eq!("merged".parse::<Handoff>(), Ok(Handoff::Merged));
    assert_eq!(Handoff::Merged.to_string(), "merged");
}
