//! Small end-to-end runs of the experiments, with bounds that a wrong simulator, model or
//! service loop would break.

use std::time::Duration;

use ndx_core::{DispatchMode, Replacement};
use ndx_hcs::{DelayMode, MemoryMode};
use ndx_lab::catalogue::Catalogue;
use ndx_lab::hcs::{self, HcsConfig};
use ndx_lab::hitratio::{self, Design, HitRatioConfig};
use ndx_lab::shards;
use ndx_lab::workload::{Kind, WorkloadConfig};

fn small() -> WorkloadConfig {
    WorkloadConfig {
        kind: Kind::Real,
        contents: 200,
        chunks_per_content: 50,
        ..WorkloadConfig::default()
    }
}

#[test]
fn hit_ratio_matches_model() {
    let w = small();
    let cat = Catalogue::build(w.contents, w.chunks_per_content, Some(16)).expect("catalogue");
    for (replacement, real_bound) in [(Replacement::Fifo, 6e-3), (Replacement::Lru, 1e-2)] {
        let cfg = HitRatioConfig {
            workload: w,
            kinds: Kind::ALL.to_vec(),
            batch: 10,
            l1_sizes: vec![200, 1000, 5000],
            replacement,
            design: Design::Serial,
            measure: 30_000,
        };
        let rows = hitratio::run(&cfg, &cat, &mut |_| {});
        assert_eq!(rows.len(), 9);
        let seq = hitratio::rmse_of(&rows, Kind::Seq);
        let real = hitratio::rmse_of(&rows, Kind::Real);
        let unif = hitratio::rmse_of(&rows, Kind::Unif);
        assert!(seq < 1e-9, "{replacement:?} seq {seq}");
        assert!(real < real_bound, "{replacement:?} real {real}");
        assert!(unif < 1e-2, "{replacement:?} unif {unif}");
        // The Real hit ratio grows with L1.
        let real_rows: Vec<f64> = rows
            .iter()
            .filter(|r| r.kind == Kind::Real)
            .map(|r| r.measured)
            .collect();
        assert!(real_rows.windows(2).all(|p| p[1] > p[0]), "{real_rows:?}");
    }
}

#[test]
fn prefetch_design_matches_its_model() {
    let w = small();
    let cat = Catalogue::build(w.contents, w.chunks_per_content, Some(16)).expect("catalogue");
    let cfg = HitRatioConfig {
        workload: w,
        kinds: vec![Kind::Seq, Kind::Real],
        batch: 10,
        l1_sizes: vec![500, 2000],
        replacement: Replacement::Fifo,
        design: Design::Prefetch,
        measure: 30_000,
    };
    let rows = hitratio::run(&cfg, &cat, &mut |_| {});
    assert!(hitratio::rmse_of(&rows, Kind::Seq) < 1e-9);
    assert!(hitratio::rmse_of(&rows, Kind::Real) < 5e-3);
    // Prefetching misses only a download's first batch: far above serial's 1 - 1/B.
    assert!(rows.iter().all(|r| r.measured > 0.95), "{rows:?}");
}

fn hcs_cfg(design: Design, delay: DelayMode, memory: MemoryMode) -> HcsConfig {
    HcsConfig {
        workload: WorkloadConfig {
            contents: 30,
            chunks_per_content: 40,
            ..WorkloadConfig::default()
        },
        batch: 10,
        l1: 120,
        replacement: Replacement::Fifo,
        tau_bps: 64e9,
        delay,
        memory,
        design,
        measure: 3000,
        max_time: Duration::from_secs(60),
        shard: None,
    }
}

#[test]
fn hcs_loop_serves_everything_from_l1_or_l2() {
    let cat = Catalogue::build(30, 40, Some(1024)).expect("catalogue");
    let serial = hcs::run(
        &hcs_cfg(Design::Serial, DelayMode::BusyWait, MemoryMode::Static),
        &cat,
    )
    .expect("serial");
    let prefetch = hcs::run(
        &hcs_cfg(Design::Prefetch, DelayMode::BusyWait, MemoryMode::Dynamic),
        &cat,
    )
    .expect("prefetch");
    for r in [&serial, &prefetch] {
        assert_eq!(r.served, 3000);
        assert_eq!(r.l2_misses, 0, "|L2| = |C|: every batch is in L2");
        assert!(
            r.l2_reads > 0 && r.hit_ratio > 0.5 && r.hit_ratio < 1.0,
            "{r:?}"
        );
    }
    // Serial: every miss is exactly one batch read (the request's own).
    let misses = (serial.served as f64 * (1.0 - serial.hit_ratio)).round() as u64;
    assert_eq!(serial.l2_reads, misses);
    // Prefetch turns most first-chunk misses into hits.
    assert!(
        prefetch.hit_ratio > serial.hit_ratio,
        "{prefetch:?} vs {serial:?}"
    );
    // Emulation never delivers faster than tau (a lower bound on waiting, not a timing race).
    assert!(serial.observed_l2_gbps() <= 64.0 * 1.000_001, "{serial:?}");
}

#[test]
fn batch_dispatch_balances_better_than_content() {
    let w = WorkloadConfig {
        contents: 100,
        chunks_per_content: 400,
        ..WorkloadConfig::default()
    };
    let cat = Catalogue::build(w.contents, w.chunks_per_content, None).expect("names");
    let content =
        shards::shard_loads(&w, &cat, DispatchMode::Content, 16, 1024, 100_000).expect("content");
    let batch =
        shards::shard_loads(&w, &cat, DispatchMode::Batch(10), 16, 1024, 100_000).expect("batch");
    assert_eq!(content.per_shard.iter().sum::<u64>(), 100_000);
    assert_eq!(batch.per_shard.iter().sum::<u64>(), 100_000);
    assert!(
        batch.imbalance() < content.imbalance(),
        "batch {} content {}",
        batch.imbalance(),
        content.imbalance()
    );
    assert!(
        content.imbalance() > 1.5,
        "Zipf(1) by content is skewed: {}",
        content.imbalance()
    );
}

#[test]
fn sharded_hcs_serves_its_share_and_prefetch_hints_work() {
    use ndx_core::Dispatch;
    let cat = Catalogue::build(30, 40, Some(1024)).expect("catalogue");
    let mut hit = Vec::new();
    for design in [Design::Serial, Design::Prefetch] {
        let mut cfg = hcs_cfg(design, DelayMode::BusyWait, MemoryMode::Static);
        cfg.measure = 2000;
        cfg.shard = Some(hcs::ShardFilter {
            dispatch: Dispatch::new(ndx_lab::catalogue::LAB_KEY, DispatchMode::Batch(10), 2, 64)
                .expect("dispatch"),
            shard: 1,
        });
        let r = hcs::run(&cfg, &cat).expect("run");
        assert_eq!(r.served, 2000);
        assert_eq!(r.l2_misses, 0);
        hit.push(r.hit_ratio);
    }
    // Serial misses the first chunk of most batches; prefetching leaves only a download's
    // first batch to miss, which needs the cross-shard hints: without them half of the next
    // batches (a batch's successor is usually owned by the other shard) would not be prefetched and the
    // hit ratio would land about halfway between the two.
    assert!(hit[0] < 0.96, "{hit:?}");
    assert!(hit[1] > 0.97 && hit[1] > hit[0] + 0.015, "{hit:?}");
}
