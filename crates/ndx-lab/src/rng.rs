//! The workloads' randomness: the workspace's seeded PRNG ([`Rng`], xoshiro256** seeded by
//! SplitMix64, from `ndx_codec::rng`) and a Zipf sampler. Every workload is a pure function of
//! its seed.

pub use ndx_codec::rng::Rng;

/// Zipf(alpha) over ranks `0..n` (rank 0 most popular): `p_i ∝ 1 / (i + 1)^alpha`.
#[derive(Debug, Clone)]
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    /// The distribution over `n >= 1` items with skew `alpha >= 0`.
    pub fn new(n: usize, alpha: f64) -> Self {
        let mut cdf = Vec::with_capacity(n.max(1));
        let mut acc = 0.0;
        for i in 0..n.max(1) {
            acc += 1.0 / ((i + 1) as f64).powf(alpha);
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        Self { cdf }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.cdf.len()
    }

    /// Always false (at least one item).
    pub fn is_empty(&self) -> bool {
        self.cdf.is_empty()
    }

    /// Probability of rank `i`.
    pub fn pmf(&self, i: usize) -> f64 {
        match i {
            0 => self.cdf[0],
            _ => self.cdf.get(i).map_or(0.0, |c| c - self.cdf[i - 1]),
        }
    }

    /// All probabilities, by rank.
    pub fn probabilities(&self) -> Vec<f64> {
        (0..self.len()).map(|i| self.pmf(i)).collect()
    }

    /// Draws a rank.
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.next_f64();
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len() - 1)
    }
}
