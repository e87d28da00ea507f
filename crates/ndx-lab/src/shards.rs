//! Experiment "dispatch by content vs by batch" (seed 000 §5.2, Fig. 8a): the Real workload's
//! requests, as real names, spread over N shards by `ndx_core::Dispatch` in
//! `DispatchMode::Content` and `DispatchMode::Batch(B)`; the load of a shard is the number of
//! requests it receives, and imbalance is the most loaded shard over the mean.

use ndx_core::{Dispatch, DispatchError, DispatchMode};

use crate::catalogue::{Catalogue, LAB_KEY};
use crate::workload::WorkloadConfig;

/// Load of each shard under one dispatch mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardLoad {
    /// The mode.
    pub mode: DispatchMode,
    /// Requests per shard.
    pub per_shard: Vec<u64>,
}

impl ShardLoad {
    /// Most loaded shard / mean load (1 = perfect balance).
    pub fn imbalance(&self) -> f64 {
        let total: u64 = self.per_shard.iter().sum();
        let max = self.per_shard.iter().copied().max().unwrap_or(0);
        if total == 0 {
            return 0.0;
        }
        max as f64 * self.per_shard.len() as f64 / total as f64
    }

    /// Least loaded shard / mean load.
    pub fn min_ratio(&self) -> f64 {
        let total: u64 = self.per_shard.iter().sum();
        let min = self.per_shard.iter().copied().min().unwrap_or(0);
        if total == 0 {
            return 0.0;
        }
        min as f64 * self.per_shard.len() as f64 / total as f64
    }
}

/// Dispatches `requests` requests of the workload (after its ramp) over `shards` shards with
/// an indirection table of `table_len` entries.
pub fn shard_loads(
    w: &WorkloadConfig,
    cat: &Catalogue,
    mode: DispatchMode,
    shards: usize,
    table_len: usize,
    requests: u64,
) -> Result<ShardLoad, DispatchError> {
    let d = Dispatch::new(LAB_KEY, mode, shards, table_len)?;
    let mut per_shard = vec![0u64; shards];
    for r in w
        .requests()
        .skip(w.ramp_requests() as usize)
        .take(requests as usize)
    {
        let name = cat.name(cat.index(r.content, r.chunk));
        per_shard[usize::from(d.shard(&name, None))] += 1;
    }
    Ok(ShardLoad { mode, per_shard })
}
