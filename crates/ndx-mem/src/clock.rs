//! A cheap monotonic nanosecond clock for poll loops.
//!
//! A shard worker reads the time once per loop turn. `Instant::now()` is a vDSO
//! `clock_gettime`: about 29 ns on the reference VM, against 10 ns for one `RDTSC`. Under
//! load a turn carries one or two frames, so the difference is about 1% of a CS hit's cost.
//!
//! [`LoopClock`] reads the time-stamp counter and converts ticks to nanoseconds with a rate
//! measured against `Instant`: first over a short start-up interval, then over the whole
//! life of the clock each time the owner calls [`LoopClock::recalibrate`] (the worker does
//! it every 10 ms), so the error shrinks as the baseline grows. Readings never go
//! backwards. It uses the counter only when the CPU says it is invariant (constant rate in
//! every P- and C-state, CPUID leaf 0x8000_0007, the `nonstop_tsc` flag in
//! `/proc/cpuinfo`); otherwise, and on other architectures, it reads `Instant`.

use std::time::{Duration, Instant};

/// Fixed-point shift of the nanoseconds-per-tick rate.
const SHIFT: u32 = 32;

/// How long [`LoopClock::new`] measures the tick rate before the first reading.
const FIRST_CALIBRATION: Duration = Duration::from_millis(2);

/// A monotonic clock in nanoseconds since its creation, read from the time-stamp counter
/// where that is invariant. One per thread (it is `&mut self` to read: the last reading
/// keeps it monotonic).
#[derive(Debug, Clone)]
pub struct LoopClock {
    origin: Instant,
    /// The counter is invariant: readings come from it.
    tsc: bool,
    /// The counter at `origin` (the calibration baseline).
    tsc0: u64,
    /// A reading the conversion continues from: counter and nanoseconds.
    base_tsc: u64,
    base_ns: u64,
    /// Nanoseconds per tick, `<< SHIFT`; 0 when reading `Instant` instead.
    rate: u64,
    last: u64,
}

impl LoopClock {
    /// A clock starting at 0 now. With an invariant counter it spends about 2 ms measuring
    /// the tick rate first.
    pub fn new() -> Self {
        let origin = Instant::now();
        let mut c = LoopClock {
            origin,
            tsc: false,
            tsc0: 0,
            base_tsc: 0,
            base_ns: 0,
            rate: 0,
            last: 0,
        };
        if let Some(t) = invariant_tsc() {
            c.tsc = true;
            c.tsc0 = t;
            c.base_tsc = t;
            while origin.elapsed() < FIRST_CALIBRATION {
                std::hint::spin_loop();
            }
            c.recalibrate();
        }
        c
    }

    /// True when readings come from the time-stamp counter (else from `Instant`).
    pub fn uses_tsc(&self) -> bool {
        self.rate != 0
    }

    /// Nanoseconds since the clock was created; never less than the previous reading.
    #[inline]
    pub fn now(&mut self) -> u64 {
        let ns = match read_tsc() {
            Some(t) if self.rate != 0 => {
                let ticks = t.wrapping_sub(self.base_tsc);
                self.base_ns + ((u128::from(ticks) * u128::from(self.rate)) >> SHIFT) as u64
            }
            _ => self.origin.elapsed().as_nanos() as u64,
        };
        self.last = self.last.max(ns);
        self.last
    }

    /// Measures the tick rate again over the clock's whole life and continues from the
    /// current reading, or from `Instant`'s if that is ahead. A no-op without a counter.
    pub fn recalibrate(&mut self) {
        if !self.tsc {
            return;
        }
        let Some(t) = read_tsc() else { return };
        let ns = self.origin.elapsed().as_nanos() as u64;
        let ticks = t.wrapping_sub(self.tsc0);
        if ticks == 0 {
            return;
        }
        let current = if self.rate == 0 { 0 } else { self.now() };
        self.rate = ((u128::from(ns) << SHIFT) / u128::from(ticks)) as u64;
        // A zero rate would mean "no counter": a counter faster than 2^32 per ns is not real.
        self.rate = self.rate.max(1);
        self.base_tsc = t;
        self.base_ns = current.max(ns);
    }
}

impl Default for LoopClock {
    fn default() -> Self {
        Self::new()
    }
}

/// The counter, when the CPU declares it invariant.
fn invariant_tsc() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // Leaf 0x8000_0000 reports the highest extended leaf; ask for 0x8000_0007 only when
        // it exists.
        if core::arch::x86_64::__cpuid(0x8000_0000).eax < 0x8000_0007 {
            return None;
        }
        let edx = core::arch::x86_64::__cpuid(0x8000_0007).edx;
        if edx & (1 << 8) == 0 {
            return None;
        }
        read_tsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[inline]
fn read_tsc() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions on x86-64 (user mode may read it unless the
        // kernel set CR4.TSD, which Linux does not do for ordinary processes).
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_close_to_instant() {
        let mut c = LoopClock::new();
        let start = Instant::now();
        let first = c.now();
        let mut prev = first;
        for i in 0..2_000_000u32 {
            let t = c.now();
            assert!(t >= prev, "went back from {prev} to {t}");
            prev = t;
            if i % 100_000 == 0 {
                c.recalibrate();
            }
        }
        std::thread::sleep(Duration::from_millis(30));
        c.recalibrate();
        let ours = c.now() - first;
        let real = start.elapsed().as_nanos() as u64;
        // Readings track Instant within a few percent (generous: the machine is shared).
        let diff = ours.abs_diff(real);
        assert!(
            diff < real / 10 + 2_000_000,
            "clock says {ours} ns, Instant {real} ns (tsc: {})",
            c.uses_tsc()
        );
    }

    #[test]
    fn detects_the_invariant_counter_the_kernel_reports() {
        // The kernel sets `nonstop_tsc` from the same CPUID bit.
        let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let kernel_says = flags
            .lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|f| f == "nonstop_tsc"));
        if cfg!(target_arch = "x86_64") && !flags.is_empty() {
            assert_eq!(LoopClock::new().uses_tsc(), kernel_says);
        } else if !cfg!(target_arch = "x86_64") {
            assert!(!LoopClock::new().uses_tsc());
        }
    }

    #[test]
    fn recalibration_never_goes_back() {
        let mut c = LoopClock::new();
        let mut prev = c.now();
        for _ in 0..200 {
            c.recalibrate();
            let t = c.now();
            assert!(t >= prev);
            prev = t;
        }
    }
}
