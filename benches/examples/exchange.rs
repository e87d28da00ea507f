//! Runs N worst-case Interest/Data exchanges through one shard (CS miss, PIT insert, FIB LPM
//! among 10^3 routes; Data echoing our PIT token), for instruction counting with callgrind,
//! which, unlike wall time, is repeatable on a shared machine:
//!
//! ```sh
//! cargo build --release -p ndx-benches --example exchange
//! valgrind --tool=callgrind --toggle-collect='*Shard::process*' \
//!     --callgrind-out-file=/tmp/cg.out target/release/examples/exchange 20000 [BURST]
//! callgrind_annotate /tmp/cg.out | grep 'PROGRAM TOTALS'
//! ```
//! Divide the total by the number of exchanges (`BURST` > 1 uses `Shard::process_burst`).

use ndx_codec::{DataRepr, InterestRepr, LpHeaders, NameBuf};
use ndx_core::{Actions, CsConfig, FaceId, FaceInfo, Fib, HashKey, NextHop, Shard, ShardConfig};

/// The router's allocator: large tables on transparent huge pages (`NDX_BENCH_HUGE=0` gives
/// them base pages, the reference).
#[global_allocator]
static ALLOC: ndx_mem::HugePages = ndx_mem::HugePages;

fn name(i: u64) -> NameBuf {
    let mut n = NameBuf::new();
    n.push_generic(b"net")
        .push_generic(format!("site{}", i / 64).as_bytes())
        .push_generic(format!("host{i}").as_bytes());
    n
}

/// The exchange loop.
#[inline(never)]
fn run(shard: &mut Shard, frames: &[(Vec<u8>, Vec<u8>)], burst: usize, t0: u64) {
    let mut out = Actions::new();
    let mut lps: Vec<Vec<u8>> = vec![vec![0u8; 2048]; burst];
    for (g, group) in frames.chunks(burst).enumerate() {
        let t = t0 + g as u64 * 1000;
        out.clear();
        if burst == 1 {
            shard.process(t, FaceId(1), &group[0].0, &mut out);
        } else {
            let batch: Vec<(FaceId, &[u8])> = group
                .iter()
                .map(|(i, _)| (FaceId(1), i.as_slice()))
                .collect();
            shard.process_burst(t, &batch, &mut out);
        }
        // Each forwarded Interest is `64 LL 62 08 <token> 50 ...`.
        let mut lens = Vec::with_capacity(group.len());
        for ((_, f), ((_, data), lp)) in out.sends().zip(group.iter().zip(lps.iter_mut())) {
            let token: [u8; 8] = f
                .get(4..12)
                .and_then(|t| t.try_into().ok())
                .expect("Interest forwarded with a token");
            let h = LpHeaders {
                pit_token: Some(&token),
                ..LpHeaders::default()
            };
            lens.push(h.encode(Some(data), lp).expect("LpPacket"));
        }
        out.clear();
        if burst == 1 {
            shard.process(t + 500, FaceId(2), &lps[0][..lens[0]], &mut out);
        } else {
            let batch: Vec<(FaceId, &[u8])> = lps
                .iter()
                .zip(&lens)
                .map(|(lp, &len)| (FaceId(2), &lp[..len]))
                .collect();
            shard.process_burst(t + 500, &batch, &mut out);
        }
    }
}

/// Interests for the Data the last pass cached, in bursts; prints the fastest pass.
fn cs_hits(shard: &mut Shard, frames: &[(Vec<u8>, Vec<u8>)], burst: usize, repeat: u32) {
    let cached = &frames[frames.len().saturating_sub(4096)..];
    let mut out = Actions::new();
    let mut best = f64::MAX;
    let before = shard.counters().cs_hits;
    for r in 0..repeat.max(1) {
        let t0 = std::time::Instant::now();
        for group in cached.chunks(burst) {
            out.clear();
            if burst == 1 {
                shard.process(
                    1_000_000_000_000 + u64::from(r),
                    FaceId(1),
                    &group[0].0,
                    &mut out,
                );
            } else {
                let batch: Vec<(FaceId, &[u8])> = group
                    .iter()
                    .map(|(i, _)| (FaceId(1), i.as_slice()))
                    .collect();
                shard.process_burst(1_000_000_000_000 + u64::from(r), &batch, &mut out);
            }
        }
        best = best.min(t0.elapsed().as_nanos() as f64 / cached.len() as f64);
    }
    let hits = shard.counters().cs_hits - before;
    assert_eq!(
        hits,
        cached.len() as u64 * u64::from(repeat.max(1)),
        "all hits"
    );
    eprintln!(
        "CS hits: fastest of {repeat}: {best:.0} ns per hit ({:.2} M/s), burst {burst}",
        1e3 / best
    );
}

fn main() {
    ndx_benches::huge_pages_from_env();
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    // Routes (default 1000; NDX_EXAMPLE_FIB=1000000 for the seed-001 worst case).
    let routes: u64 = std::env::var("NDX_EXAMPLE_FIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let key = HashKey::new(1, 2);
    let (mut fib, reader) = Fib::new(key, 2);
    for i in 0..routes {
        fib.add_nexthop(
            &name(i).as_name(),
            NextHop {
                face: FaceId(2),
                cost: 1,
            },
        )
        .expect("route");
    }
    fib.publish();
    let cfg = ShardConfig {
        pit_capacity: 1 << 16,
        cs: CsConfig {
            capacity: 1 << 12,
            slot_size: 1200,
            ..CsConfig::default()
        },
        hash_key: key,
        ..ShardConfig::default()
    };
    let mut shard = Shard::new(cfg, reader, 0);
    shard.add_face(FaceId(1), FaceInfo::default());
    shard.add_face(FaceId(2), FaceInfo::default());
    let frames: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
        .map(|j| {
            let mut nm = name(j.wrapping_mul(2_654_435_761) % routes);
            nm.push_generic(b"video")
                .push_generic(format!("obj{j}").as_bytes())
                .push_segment(j % 1000);
            let mut i = InterestRepr::new(nm.clone());
            i.nonce = Some(j as u32);
            i.lifetime_ms = Some(4000);
            i.hop_limit = Some(64);
            let mut d = DataRepr::new(nm, vec![0x42; 1000]);
            d.freshness_ms = Some(10_000);
            (i.to_vec().expect("Interest"), d.to_vec().expect("Data"))
        })
        .collect();
    let burst: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1)
        .max(1);
    // NDX_EXAMPLE_REPEAT=k: time k passes and print the fastest.
    let repeat: u32 = std::env::var("NDX_EXAMPLE_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let mut best = f64::MAX;
    for r in 0..repeat {
        // Passes 10 s apart: the dead-nonce list (6 s) has forgotten the previous pass.
        let t0 = std::time::Instant::now();
        run(&mut shard, &frames, burst, u64::from(r) * 10_000_000_000);
        best = best.min(t0.elapsed().as_nanos() as f64 / n as f64);
    }
    eprintln!(
        "fastest of {repeat}: {best:.0} ns per exchange ({:.2} M/s), burst {burst}, {routes} routes",
        1e3 / best
    );
    if std::env::var_os("NDX_EXAMPLE_CS_HIT").is_some() {
        cs_hits(&mut shard, &frames, burst, repeat);
        return;
    }
    let c = shard.counters();
    assert_eq!(
        (c.interests_out, c.data_out),
        (n * u64::from(repeat), n * u64::from(repeat)),
        "every exchange completed"
    );
    eprintln!("{n} exchanges: {c:?}");
}
