//! Seed 000's analytical models of the L1 hit ratio (eq. 2-6) and of the HCS throughput
//! (eq. 7-11), with Che's approximation for FIFO/RANDOM and for LRU.
//!
//! Che's approximation: a cache of `C` objects, object `i` requested by a Poisson process of
//! rate `lambda_i`, has a characteristic time `T` solving `sum_i h_i(T) = C`, with
//! - FIFO and RANDOM (Martina et al.; seed 000 eq. 5-6): `h_i = lambda_i T / (1 + lambda_i T)`;
//! - LRU (Che et al.): `h_i = 1 - exp(-lambda_i T)`;
//!
//! and the hit ratio is the request-weighted mean `sum_i lambda_i h_i / sum_i lambda_i`.
//! `T` is found by bracketing and bisection on `log T` (the sum is increasing in `T`), so it
//! converges for any rates, any skew and any cache size.

use std::fmt;
use std::str::FromStr;

/// Which form of Che's approximation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    /// FIFO (and RANDOM, which has the same approximation).
    Fifo,
    /// LRU.
    Lru,
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Fifo => "fifo",
            Policy::Lru => "lru",
        })
    }
}

/// An unknown policy name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown policy {0:?}: expected fifo, lru or clock")]
pub struct UnknownPolicy(pub String);

impl FromStr for Policy {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fifo" | "rnd" | "random" => Ok(Policy::Fifo),
            "lru" => Ok(Policy::Lru),
            _ => Err(UnknownPolicy(s.to_owned())),
        }
    }
}

impl Policy {
    /// Probability that an object of rate `rate` is in a cache of characteristic time `t`.
    pub fn occupancy(self, rate: f64, t: f64) -> f64 {
        if t.is_infinite() {
            return 1.0;
        }
        let x = rate * t;
        match self {
            Policy::Fifo => x / (1.0 + x),
            Policy::Lru => -(-x).exp_m1(),
        }
    }
}

/// A class of `count` objects that share the request rate `rate`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateClass {
    /// Poisson request rate of each object.
    pub rate: f64,
    /// Number of objects with that rate.
    pub count: f64,
}

fn occupied(policy: Policy, classes: &[RateClass], t: f64) -> f64 {
    classes
        .iter()
        .map(|c| c.count * policy.occupancy(c.rate, t))
        .sum()
}

/// Che's characteristic time `T` for a cache of `capacity` objects; `f64::INFINITY` when every
/// object with a positive rate fits, 0 for an empty cache.
pub fn characteristic_time(policy: Policy, classes: &[RateClass], capacity: f64) -> f64 {
    let objects: f64 = classes
        .iter()
        .filter(|c| c.rate > 0.0)
        .map(|c| c.count)
        .sum();
    if capacity <= 0.0 {
        return 0.0;
    }
    if capacity >= objects {
        return f64::INFINITY;
    }
    // Bracket on a log scale: occupied(T) increases from 0 to `objects`.
    let (mut lo, mut hi) = (1e-12_f64, 1.0_f64);
    while occupied(policy, classes, hi) < capacity {
        lo = hi;
        hi *= 16.0;
        if hi > 1e300 {
            return f64::INFINITY;
        }
    }
    while occupied(policy, classes, lo) > capacity && lo > 1e-300 {
        hi = lo;
        lo /= 16.0;
    }
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if occupied(policy, classes, mid) < capacity {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi / lo < 1.0 + 1e-13 {
            break;
        }
    }
    (lo * hi).sqrt()
}

/// Request-weighted hit ratio of a cache of `capacity` objects (Che's approximation).
pub fn che_hit_ratio(policy: Policy, classes: &[RateClass], capacity: f64) -> f64 {
    let t = characteristic_time(policy, classes, capacity);
    let total: f64 = classes.iter().map(|c| c.count * c.rate).sum();
    if total <= 0.0 {
        return 0.0;
    }
    classes
        .iter()
        .map(|c| c.count * c.rate * policy.occupancy(c.rate, t))
        .sum::<f64>()
        / total
}

/// Eq. 2: uniform requests, `|L1| / |C|` (capped at 1).
pub fn p_unif(l1: f64, catalogue: f64) -> f64 {
    (l1 / catalogue).clamp(0.0, 1.0)
}

/// Eq. 3: sequential requests, `1 - 1/B`, or 1 when the catalogue fits L1.
pub fn p_seq(l1: f64, catalogue: f64, batch: u32) -> f64 {
    if l1 >= catalogue {
        1.0
    } else {
        1.0 - 1.0 / f64::from(batch)
    }
}

/// The batch-level rate classes of the Real workload: each content `m` of popularity `p_m`
/// has `ceil(L / B)` batches, each requested (first chunk) by a Poisson process of rate
/// `lambda * p_m` (a download asks for batch `j` a constant `j B / r` after it starts).
pub fn real_classes(
    popularity: &[f64],
    arrival_rate: f64,
    chunks_per_content: u32,
    batch: u32,
) -> Vec<RateClass> {
    let per_content = f64::from(chunks_per_content.div_ceil(batch.max(1)));
    popularity
        .iter()
        .map(|p| RateClass {
            rate: arrival_rate * p,
            count: per_content,
        })
        .collect()
}

/// Eq. 5-6: probability that the first chunk of a batch is in L1 (`|L1|` in chunks; the cache
/// holds `|L1| / B` batches).
pub fn p_real_first(policy: Policy, classes: &[RateClass], l1: f64, batch: u32) -> f64 {
    che_hit_ratio(policy, classes, l1 / f64::from(batch.max(1)))
}

/// Eq. 4: Real hit ratio of the serial design, `1 - (1 - P1st) / B`.
pub fn p_real(p_first: f64, batch: u32) -> f64 {
    1.0 - (1.0 - p_first) / f64::from(batch.max(1))
}

/// The optimised design (§3.2, footnote 4): the penultimate chunk of a batch prefetches the
/// next one, so only a download's first batch can miss: `1 - (1 - P1st) / L`.
pub fn p_real_prefetch(p_first: f64, chunks_per_content: u32) -> f64 {
    1.0 - (1.0 - p_first) / f64::from(chunks_per_content.max(1))
}

/// Root mean square error between paired values.
pub fn rmse(pairs: &[(f64, f64)]) -> f64 {
    if pairs.is_empty() {
        return 0.0;
    }
    (pairs.iter().map(|(a, b)| (a - b).powi(2)).sum::<f64>() / pairs.len() as f64).sqrt()
}

/// Per-operation delays of eq. 9-11, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delays {
    /// One L1 lookup (`d_L1.lookup`).
    pub l1_lookup: f64,
    /// Inserting one batch into L1 (`d_L1.insert`).
    pub l1_insert: f64,
    /// One L2 batch read, `B|c| / tau` (eq. 1).
    pub l2_read: f64,
}

/// Eq. 1: the emulated L2 read delay of a batch of `batch` chunks of `chunk_bytes` at `tau_bps`.
pub fn l2_read_delay(batch: u32, chunk_bytes: f64, tau_bps: f64) -> f64 {
    f64::from(batch) * chunk_bytes * 8.0 / tau_bps
}

/// Eq. 7-10 (serial) or 7-9 + 11 (fully parallel): expected throughput in chunks/s.
pub fn throughput_chunks(p_hit: f64, d: Delays, parallel: bool) -> f64 {
    let d_hit = d.l1_lookup;
    let d_miss = if parallel {
        d.l1_lookup.max(d.l1_insert).max(d.l2_read)
    } else {
        d.l1_lookup + d.l2_read + d.l1_insert
    };
    1.0 / (p_hit * d_hit + (1.0 - p_hit) * d_miss)
}
