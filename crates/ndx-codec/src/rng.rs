//! The workspace's one small non-cryptographic PRNG: xoshiro256** seeded through SplitMix64.
//!
//! [`Rng::new`] makes the whole output a pure function of the seed (`ndx-lab`'s workloads and
//! experiments, whose recorded results depend on it); [`Rng::from_entropy`] seeds it from the
//! process's `RandomState` keys, the clock and the process id (`ndx-app`'s Interest nonces,
//! which must differ between runs and processes). Neither is fit for secrets.
//!
//! It lives in `ndx-codec` because that is the crate every other one already depends on (the
//! generator has nothing to do with TLV); it uses only `std` and no `unsafe`.

use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

/// SplitMix64: a 64-bit state advanced by the golden-ratio increment, each output a bijective
/// mix of the state. Seeds [`Rng`]; usable alone where 8 bytes of state matter.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed` (any value, 0 included).
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// xoshiro256** (Blackman and Vigna), its 256-bit state filled by [`SplitMix64`] from a seed.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut seeder = SplitMix64::new(seed);
        Self {
            s: [
                seeder.next_u64(),
                seeder.next_u64(),
                seeder.next_u64(),
                seeder.next_u64(),
            ],
        }
    }

    /// A generator seeded so that two processes, or two calls in one, almost surely differ:
    /// std's per-process random hash keys (from the OS), mixed with the clock and the
    /// process id.
    pub fn from_entropy() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        // Each `RandomState::new` in a thread gets different keys (the first drawn from the
        // OS, the next ones incremented), so two calls in one process differ as well.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(nanos);
        h.write_u32(std::process::id());
        Self::new(h.finish())
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }

    /// The next 32 random bits (the high half of [`next_u64`](Self::next_u64), the better
    /// one of xoshiro's output).
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (`n > 0`), without modulo bias worth measuring (128-bit multiply).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Exponential with the given rate (mean `1 / rate`).
    pub fn exp(&mut self, rate: f64) -> f64 {
        -(1.0 - self.next_f64()).ln() / rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The outputs of the generator `ndx-lab` had before it moved here: its recorded results
    /// (benches/results) are functions of these streams, so they must never change.
    #[test]
    fn seeded_streams_are_those_of_the_lab_generator() {
        let cases: [(u64, [u64; 4]); 3] = [
            (
                0,
                [
                    0x99ec_5f36_cb75_f2b4,
                    0xbf6e_1f78_4956_452a,
                    0x1a5f_849d_4933_e6e0,
                    0x6aa5_94f1_262d_2d2c,
                ],
            ),
            (
                42,
                [
                    0x1578_0b2e_0c2e_c716,
                    0x6104_d986_6d11_3a7e,
                    0xae17_5332_39e4_99a1,
                    0xecb8_ad47_03b3_60a1,
                ],
            ),
            (
                u64::MAX,
                [
                    0x8f55_20d5_2a7e_ad08,
                    0xc476_a018_caa1_802d,
                    0x81de_31c0_d260_469e,
                    0xbf65_8d7e_065f_3c2f,
                ],
            ),
        ];
        for (seed, want) in cases {
            let mut r = Rng::new(seed);
            assert_eq!(want.map(|_| r.next_u64()), want, "seed {seed}");
        }
        let mut r = Rng::new(7);
        assert_eq!(r.next_f64(), 0.700_576_482_179_689_6);
        assert_eq!(r.below(1000), 278);
        assert_eq!(r.exp(2.0), 0.915_127_903_456_732_8);
    }

    /// SplitMix64's reference outputs for seed 0 (Vigna's splitmix64.c).
    #[test]
    fn splitmix64_matches_the_reference() {
        let mut s = SplitMix64::new(0);
        assert_eq!(s.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(s.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn entropy_seeded_generators_differ() {
        let (mut a, mut b) = (Rng::from_entropy(), Rng::from_entropy());
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_ne!(xs, ys);
    }

    #[test]
    fn below_stays_below_and_next_u32_is_the_high_half() {
        let mut r = Rng::new(1);
        for n in [1, 2, 3, 1000, u64::MAX] {
            for _ in 0..1000 {
                assert!(r.below(n) < n);
            }
        }
        let (mut a, mut b) = (Rng::new(9), Rng::new(9));
        assert_eq!(u64::from(a.next_u32()), b.next_u64() >> 32);
    }
}
