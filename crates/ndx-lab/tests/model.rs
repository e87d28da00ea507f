//! Models: known values, monotonicity, limits.

use ndx_lab::model::{self, Delays, Policy, RateClass};
use ndx_lab::rng::Zipf;
use proptest::prelude::*;

fn zipf_classes(n: usize, alpha: f64) -> Vec<RateClass> {
    Zipf::new(n, alpha)
        .probabilities()
        .into_iter()
        .map(|p| RateClass {
            rate: p,
            count: 1.0,
        })
        .collect()
}

#[test]
fn equal_rates_give_closed_forms() {
    // N objects of equal rate: hit = C / N for both forms; FIFO T solves N x/(1+x) = C.
    let classes = [RateClass {
        rate: 2.0,
        count: 100.0,
    }];
    for policy in [Policy::Fifo, Policy::Lru] {
        let h = model::che_hit_ratio(policy, &classes, 25.0);
        assert!((h - 0.25).abs() < 1e-9, "{policy}: {h}");
    }
    let t = model::characteristic_time(Policy::Fifo, &classes, 25.0);
    // x = lambda T = C / (N - C) = 1/3.
    assert!((2.0 * t - 1.0 / 3.0).abs() < 1e-9, "{t}");
    let t = model::characteristic_time(Policy::Lru, &classes, 25.0);
    assert!((2.0 * t - (4.0f64 / 3.0).ln()).abs() < 1e-9, "{t}");
}

#[test]
fn limits() {
    let c = zipf_classes(1000, 0.8);
    for p in [Policy::Fifo, Policy::Lru] {
        assert_eq!(model::che_hit_ratio(p, &c, 0.0), 0.0);
        assert_eq!(model::che_hit_ratio(p, &c, 1000.0), 1.0);
        assert_eq!(model::characteristic_time(p, &c, 5000.0), f64::INFINITY);
    }
    assert_eq!(model::p_seq(10.0, 10.0, 10), 1.0);
    assert!((model::p_seq(5.0, 10.0, 10) - 0.9).abs() < 1e-12);
    assert_eq!(model::p_unif(20.0, 10.0), 1.0);
    assert!((model::p_real(0.0, 10) - 0.9).abs() < 1e-12);
    assert_eq!(model::p_real(1.0, 10), 1.0);
    assert!((model::p_real_prefetch(0.0, 100) - 0.99).abs() < 1e-12);
}

#[test]
fn lru_beats_fifo_under_skew() {
    // Under IRM with skewed popularity LRU's hit ratio exceeds FIFO's (Martina et al.).
    let c = zipf_classes(10_000, 1.0);
    for cap in [10.0, 100.0, 1000.0] {
        let f = model::che_hit_ratio(Policy::Fifo, &c, cap);
        let l = model::che_hit_ratio(Policy::Lru, &c, cap);
        assert!(l > f, "cap {cap}: lru {l} fifo {f}");
    }
}

#[test]
fn known_values() {
    // Zipf(0.8), N = 10^4, C = 100, reference values from an independent Python bisection:
    // LRU T = 110.7908457, h = 0.1566246358; FIFO T = 115.4234168, h = 0.1336246771.
    let c = zipf_classes(10_000, 0.8);
    let t = model::characteristic_time(Policy::Lru, &c, 100.0);
    assert!((t - 110.790_845_7).abs() < 1e-5, "{t}");
    let h = model::che_hit_ratio(Policy::Lru, &c, 100.0);
    assert!((h - 0.156_624_635_8).abs() < 1e-9, "{h}");
    let t = model::characteristic_time(Policy::Fifo, &c, 100.0);
    assert!((t - 115.423_416_8).abs() < 1e-5, "{t}");
    let h = model::che_hit_ratio(Policy::Fifo, &c, 100.0);
    assert!((h - 0.133_624_677_1).abs() < 1e-9, "{h}");
}

#[test]
fn rmse_and_throughput() {
    assert!((model::rmse(&[(1.0, 0.0), (0.0, 1.0)]) - 1.0).abs() < 1e-12);
    assert_eq!(model::rmse(&[]), 0.0);
    // eq. 1: 10 x 8192 B at 4 Gbit/s = 163.84 us.
    assert!((model::l2_read_delay(10, 8192.0, 4e9) - 163.84e-6).abs() < 1e-12);
    let d = Delays {
        l1_lookup: 1e-6,
        l1_insert: 1e-6,
        l2_read: 1e-6,
    };
    // Equal components: parallel gains the paper's maximum (3x faster miss).
    let s = model::throughput_chunks(0.0, d, false);
    let p = model::throughput_chunks(0.0, d, true);
    assert!((p / s - 3.0).abs() < 1e-9);
    assert!((model::throughput_chunks(1.0, d, false) - 1e6).abs() < 1e-3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn hit_ratio_increases_with_cache_size(
        n in 10usize..2000, alpha in 0.0f64..1.6, a in 0.0f64..1.0, b in 0.0f64..1.0, lru in any::<bool>(),
    ) {
        let policy = if lru { Policy::Lru } else { Policy::Fifo };
        let c = zipf_classes(n, alpha);
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        let h_lo = model::che_hit_ratio(policy, &c, lo * n as f64);
        let h_hi = model::che_hit_ratio(policy, &c, hi * n as f64);
        prop_assert!((0.0..=1.0).contains(&h_lo) && (0.0..=1.0).contains(&h_hi));
        prop_assert!(h_hi >= h_lo - 1e-9);
        // The solved T satisfies eq. 6 whenever the cache is smaller than the catalogue.
        let cap = hi * n as f64;
        let t = model::characteristic_time(policy, &c, cap);
        if t.is_finite() && t > 0.0 {
            let occ: f64 = c.iter().map(|k| policy.occupancy(k.rate, t)).sum();
            prop_assert!((occ - cap).abs() < 1e-6 * cap.max(1.0), "{} vs {}", occ, cap);
        }
        // Chebyshev: rates and occupancies are similarly ordered, so hit >= C / N.
        prop_assert!(h_hi >= hi - 1e-9);
    }

    #[test]
    fn more_skew_more_hits(n in 50usize..1000, frac in 0.01f64..0.5) {
        let cap = frac * n as f64;
        let h0 = model::che_hit_ratio(Policy::Fifo, &zipf_classes(n, 0.5), cap);
        let h1 = model::che_hit_ratio(Policy::Fifo, &zipf_classes(n, 1.2), cap);
        prop_assert!(h1 > h0);
    }
}
