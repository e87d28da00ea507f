//! Workload generators: reproducible from a seed, and distributed as specified.

use std::collections::HashMap;

use ndx_lab::rng::{Rng, Zipf};
use ndx_lab::workload::{Kind, Request, WorkloadConfig};
use proptest::prelude::*;

fn cfg(kind: Kind, contents: u32, chunks: u32, seed: u64) -> WorkloadConfig {
    WorkloadConfig {
        kind,
        contents,
        chunks_per_content: chunks,
        seed,
        ..WorkloadConfig::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn same_seed_same_stream_other_seed_other_stream(
        seed in any::<u64>(), contents in 2u32..50, chunks in 2u32..40, k in 0usize..3,
    ) {
        let kind = Kind::ALL[k];
        let a: Vec<Request> = cfg(kind, contents, chunks, seed).requests().take(2000).collect();
        let b: Vec<Request> = cfg(kind, contents, chunks, seed).requests().take(2000).collect();
        prop_assert_eq!(&a, &b);
        for r in &a {
            prop_assert!(r.content < contents && r.chunk < chunks);
        }
        if kind != Kind::Seq {
            let c: Vec<Request> =
                cfg(kind, contents, chunks, seed ^ 0xdead_beef).requests().take(2000).collect();
            prop_assert_ne!(a, c);
        }
    }

    #[test]
    fn real_downloads_request_each_chunk_in_order(seed in any::<u64>(), chunks in 2u32..30) {
        // Every download asks chunk 0, 1, ..., L-1: per content, the count of chunk k
        // requests never exceeds the count of chunk k-1 requests.
        let w = cfg(Kind::Real, 20, chunks, seed);
        let mut counts: HashMap<(u32, u32), u64> = HashMap::new();
        for r in w.requests().take(5000) {
            if r.chunk > 0 {
                let prev = counts.get(&(r.content, r.chunk - 1)).copied().unwrap_or(0);
                let cur = counts.get(&(r.content, r.chunk)).copied().unwrap_or(0);
                prop_assert!(cur < prev, "chunk {} of {} before its predecessor", r.chunk, r.content);
            }
            *counts.entry((r.content, r.chunk)).or_default() += 1;
        }
    }

    #[test]
    fn zipf_pmf_sums_to_one_and_decreases(n in 1usize..500, alpha in 0.0f64..2.0) {
        let z = Zipf::new(n, alpha);
        let p = z.probabilities();
        prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        for w in p.windows(2) {
            prop_assert!(w[1] <= w[0] + 1e-15);
        }
    }
}

#[test]
fn seq_walks_the_catalogue_in_order() {
    let r: Vec<Request> = cfg(Kind::Seq, 3, 4, 9).requests().take(13).collect();
    assert_eq!(
        r[0],
        Request {
            content: 0,
            chunk: 0
        }
    );
    assert_eq!(
        r[5],
        Request {
            content: 1,
            chunk: 1
        }
    );
    assert_eq!(
        r[11],
        Request {
            content: 2,
            chunk: 3
        }
    );
    assert_eq!(
        r[12],
        Request {
            content: 0,
            chunk: 0
        }
    );
}

#[test]
fn unif_is_uniform_over_chunks() {
    // 20 cells, 200k draws: each cell's share is within 5 % of 1/20 (about 10 sigma).
    let n = 200_000;
    let mut hist = [0u64; 20];
    for r in cfg(Kind::Unif, 4, 5, 3).requests().take(n) {
        hist[r.global(5) as usize] += 1;
    }
    for h in hist {
        let share = h as f64 / n as f64;
        assert!((share - 0.05).abs() < 0.05 * 0.05, "share {share}");
    }
}

#[test]
fn real_content_popularity_follows_zipf() {
    // Downloads (chunk 0 requests) per content against Zipf(1) over 50 contents.
    let w = cfg(Kind::Real, 50, 4, 11);
    let z = Zipf::new(50, 1.0);
    let mut starts = [0u64; 50];
    let mut total = 0u64;
    for r in w.requests().take(400_000).filter(|r| r.chunk == 0) {
        starts[r.content as usize] += 1;
        total += 1;
    }
    for (i, &s) in starts.iter().enumerate().take(5) {
        let share = s as f64 / total as f64;
        let p = z.pmf(i);
        assert!((share - p).abs() < 0.05 * p, "rank {i}: {share} vs {p}");
    }
    assert!(starts[0] > starts[1] && starts[1] > starts[4]);
}

#[test]
fn real_concurrency_and_arrival_rate_match_parameters() {
    // lambda = 1/s, L = 40 chunks at 8 chunks/s: 5 concurrent downloads on average, so in
    // steady state 5 * 8 = 40 requests/s; chunk-0 requests are 1 in L of them.
    let w = WorkloadConfig {
        kind: Kind::Real,
        contents: 100,
        chunks_per_content: 40,
        ..WorkloadConfig::default()
    };
    assert!((w.concurrent_streams() - 5.0).abs() < 1e-12);
    let reqs: Vec<Request> = w
        .requests()
        .skip(w.ramp_requests() as usize)
        .take(200_000)
        .collect();
    let starts = reqs.iter().filter(|r| r.chunk == 0).count() as f64;
    let expect = reqs.len() as f64 / 40.0;
    assert!(
        (starts - expect).abs() < 0.05 * expect,
        "{starts} vs {expect}"
    );
    // Interleaving: consecutive requests usually belong to different downloads.
    let switches = reqs
        .windows(2)
        .filter(|p| p[0].content != p[1].content)
        .count();
    assert!(
        switches as f64 > 0.5 * reqs.len() as f64,
        "{switches} switches"
    );
}

#[test]
fn rng_exponential_has_the_right_mean() {
    let mut r = Rng::new(5);
    let n = 100_000;
    let mean = (0..n).map(|_| r.exp(4.0)).sum::<f64>() / f64::from(n);
    assert!((mean - 0.25).abs() < 0.01, "{mean}");
}

/// Every workload kind's first 100,000 requests for seed 1 (the CLI's default), digested (FNV-1a
/// over the chunks' global indices): the values the lab produced before its generator moved to
/// `ndx_codec::rng`. The recorded results in `benches/results` are functions of these streams,
/// so a change to the generator, the Zipf sampler or the workloads shows here.
#[test]
fn default_seed_streams_are_the_recorded_ones() {
    let want = [
        (Kind::Seq, 0xc4ca_f0be_c56e_5545u64),
        (Kind::Real, 0x4be7_4164_091c_87cd),
        (Kind::Unif, 0xb8f7_08a7_9670_2c0d),
    ];
    for (kind, digest) in want {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for r in cfg(kind, 1000, 100, 1).requests().take(100_000) {
            h = (h ^ r.global(100)).wrapping_mul(0x100_0000_01b3);
        }
        assert_eq!(h, digest, "{kind:?}");
    }
}
