//! Experiment "hit ratio vs model" (seed 000 §4.3.1, Fig. 5a): the real L1
//! (`ndx_core::Cs`, real Data packets) fed by a workload, with every L1 miss served by an L2
//! that holds the whole catalogue (`|C| = |L2|`, as in the paper) and inserts the missed
//! chunk's whole batch into L1. L2 delay plays no part in the hit ratio, so it is not emulated
//! here (the throughput experiment does).

use std::fmt;
use std::str::FromStr;

use ndx_core::{Admission, Cs, CsConfig, Replacement};

use crate::catalogue::{Catalogue, LAB_KEY};
use crate::model::{self, Policy};
use crate::rng::Zipf;
use crate::workload::{Kind, Request, WorkloadConfig};

/// HCS read design (§3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Design {
    /// A miss reads its batch; nothing else (NFD-HCS).
    Serial,
    /// Also: a request for the penultimate chunk of a batch prefetches the next batch.
    Prefetch,
}

impl fmt::Display for Design {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Design::Serial => "serial",
            Design::Prefetch => "prefetch",
        })
    }
}

/// An unknown design name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown design {0:?}: expected serial or prefetch")]
pub struct UnknownDesign(pub String);

impl FromStr for Design {
    type Err = UnknownDesign;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "serial" => Ok(Design::Serial),
            "prefetch" => Ok(Design::Prefetch),
            _ => Err(UnknownDesign(s.to_owned())),
        }
    }
}

/// Parses a replacement policy name (`fifo`, `lru`, `clock`).
pub fn parse_replacement(s: &str) -> Result<Replacement, model::UnknownPolicy> {
    match s.to_ascii_lowercase().as_str() {
        "fifo" => Ok(Replacement::Fifo),
        "lru" => Ok(Replacement::Lru),
        "clock" => Ok(Replacement::Clock),
        _ => Err(model::UnknownPolicy(s.to_owned())),
    }
}

/// The form of Che's approximation used for a replacement policy: FIFO's for FIFO, LRU's for
/// LRU. CLOCK gets FIFO's: with batch fills, the download that brings a batch in hits its other
/// chunks right away, so every chunk's reference bit is set once regardless of popularity and
/// the hand gives every batch one second chance, which is FIFO with a longer queue (measured:
/// RMSE_real 2e-3 with the FIFO form, 5.7e-3 with the LRU form).
pub fn model_policy(r: Replacement) -> Policy {
    match r {
        Replacement::Fifo | Replacement::Clock => Policy::Fifo,
        Replacement::Lru => Policy::Lru,
    }
}

/// One L1 fed by requests, with batch fills from an L2 that holds everything.
#[derive(Debug)]
pub struct L1Sim<'c> {
    cat: &'c Catalogue,
    cs: Cs,
    batch: u32,
    design: Design,
    hits: u64,
    requests: u64,
}

impl<'c> L1Sim<'c> {
    /// An L1 of `capacity` chunks over `cat` (built with Data packets).
    pub fn new(
        cat: &'c Catalogue,
        capacity: usize,
        replacement: Replacement,
        batch: u32,
        design: Design,
    ) -> Self {
        let cs = Cs::new(
            CsConfig {
                capacity,
                slot_size: cat.max_data_len().next_multiple_of(64),
                replacement,
                admission: Admission::Always,
                seed: 1,
            },
            LAB_KEY,
        );
        Self {
            cat,
            cs,
            batch: batch.max(1),
            design,
            hits: 0,
            requests: 0,
        }
    }

    /// Inserts batch `b` of `content` into L1 (what an L2 read completion does).
    pub fn insert_batch(&mut self, content: u32, b: u32) {
        let l = self.cat.chunks_per_content();
        let first = b * self.batch;
        for k in first..(first + self.batch).min(l) {
            let i = self.cat.index(content, k);
            if let Some(d) = self.cat.data(i) {
                self.cs.insert_hashed(0, &d, self.cat.hash(i), None);
            }
        }
    }

    fn lookup(&mut self, i: usize) -> bool {
        let name = self.cat.name(i);
        let h = LAB_KEY.name(&name);
        self.cs.lookup(0, &name, h, false, false).is_some()
    }

    /// Serves one request; true on an L1 hit.
    pub fn request(&mut self, r: Request) -> bool {
        let i = self.cat.index(r.content, r.chunk);
        let hit = self.lookup(i);
        if !hit {
            self.insert_batch(r.content, r.chunk / self.batch);
        }
        if self.design == Design::Prefetch
            && self.batch >= 2
            && r.chunk % self.batch == self.batch - 2
        {
            let next = r.chunk / self.batch + 1;
            let first = next * self.batch;
            if first < self.cat.chunks_per_content()
                && !self.lookup(self.cat.index(r.content, first))
            {
                self.insert_batch(r.content, next);
            }
        }
        self.requests += 1;
        self.hits += u64::from(hit);
        hit
    }

    /// Forgets the hit and request counts (end of warm-up).
    pub fn reset_counts(&mut self) {
        self.hits = 0;
        self.requests = 0;
    }

    /// Hit ratio since the last reset.
    pub fn hit_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.hits as f64 / self.requests as f64
        }
    }

    /// The L1.
    pub fn cs(&self) -> &Cs {
        &self.cs
    }

    /// Gives the L1 away (to continue with it elsewhere).
    pub fn into_cs(self) -> Cs {
        self.cs
    }
}

/// Parameters of the hit-ratio experiment.
#[derive(Debug, Clone)]
pub struct HitRatioConfig {
    /// Workload parameters (the kind is taken from `kinds`).
    pub workload: WorkloadConfig,
    /// Workloads to run.
    pub kinds: Vec<Kind>,
    /// Batch size B in chunks.
    pub batch: u32,
    /// L1 sizes in chunks.
    pub l1_sizes: Vec<u64>,
    /// L1 replacement policy.
    pub replacement: Replacement,
    /// Read design.
    pub design: Design,
    /// Measured requests per point (after a warm-up of `10 |L1|` requests plus the Real
    /// workload's ramp).
    pub measure: u64,
}

/// One point: measured and model hit ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HitRatioRow {
    /// Workload.
    pub kind: Kind,
    /// L1 size in chunks.
    pub l1: u64,
    /// Measured L1 hit ratio.
    pub measured: f64,
    /// Model (eq. 2, 3 or 4-6).
    pub model: f64,
}

/// The model's hit ratio for one point.
pub fn model_hit_ratio(
    kind: Kind,
    w: &WorkloadConfig,
    l1: u64,
    batch: u32,
    policy: Policy,
    design: Design,
) -> f64 {
    let c = w.catalogue() as f64;
    let l1 = l1 as f64;
    match (kind, design) {
        (Kind::Unif, _) => model::p_unif(l1, c),
        (Kind::Seq, Design::Serial) => model::p_seq(l1, c, batch),
        (Kind::Seq, Design::Prefetch) => {
            if l1 >= c {
                1.0
            } else {
                1.0 - 1.0 / f64::from(w.chunks_per_content.max(1))
            }
        }
        (Kind::Real, _) => {
            let pop = Zipf::new(w.contents as usize, w.alpha).probabilities();
            let classes = model::real_classes(&pop, w.arrival_rate, w.chunks_per_content, batch);
            let first = model::p_real_first(policy, &classes, l1, batch);
            match design {
                Design::Serial => model::p_real(first, batch),
                Design::Prefetch => model::p_real_prefetch(first, w.chunks_per_content),
            }
        }
    }
}

/// Runs the sweep; `progress` receives one line per point.
pub fn run(
    cfg: &HitRatioConfig,
    cat: &Catalogue,
    progress: &mut dyn FnMut(&str),
) -> Vec<HitRatioRow> {
    let mut rows = Vec::new();
    let policy = model_policy(cfg.replacement);
    for &kind in &cfg.kinds {
        let w = WorkloadConfig {
            kind,
            ..cfg.workload
        };
        for &l1 in &cfg.l1_sizes {
            let mut sim = L1Sim::new(cat, l1 as usize, cfg.replacement, cfg.batch, cfg.design);
            let mut reqs = w.requests();
            let warmup = 10 * l1 + w.ramp_requests();
            for r in reqs.by_ref().take(warmup as usize) {
                sim.request(r);
            }
            sim.reset_counts();
            for r in reqs.take(cfg.measure as usize) {
                sim.request(r);
            }
            let row = HitRatioRow {
                kind,
                l1,
                measured: sim.hit_ratio(),
                model: model_hit_ratio(kind, &w, l1, cfg.batch, policy, cfg.design),
            };
            progress(&format!(
                "{kind} |L1|={l1}: measured {:.4} model {:.4}",
                row.measured, row.model
            ));
            rows.push(row);
        }
    }
    rows
}

/// RMSE between measured and model over the rows of one workload.
pub fn rmse_of(rows: &[HitRatioRow], kind: Kind) -> f64 {
    let pairs: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| (r.measured, r.model))
        .collect();
    model::rmse(&pairs)
}
