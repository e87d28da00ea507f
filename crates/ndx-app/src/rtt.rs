//! Round-trip time estimation and retransmission timeout (RFC 6298), plus RTT statistics.

use std::time::Duration;

/// RFC 6298 estimator: SRTT, RTTVAR and RTO, with exponential backoff on timeouts.
#[derive(Debug, Clone)]
pub(crate) struct RttEstimator {
    srtt: Option<f64>,
    rttvar: f64,
    rto: f64,
    min_rto: f64,
    max_rto: f64,
}

/// Clock granularity G of RFC 6298, in seconds.
const GRANULARITY: f64 = 0.001;

impl RttEstimator {
    pub(crate) fn new(initial: Duration, min: Duration, max: Duration) -> Self {
        let (min_rto, max_rto) = (min.as_secs_f64(), max.as_secs_f64().max(min.as_secs_f64()));
        Self {
            srtt: None,
            rttvar: 0.0,
            rto: initial.as_secs_f64().clamp(min_rto, max_rto),
            min_rto,
            max_rto,
        }
    }

    /// Takes one sample from an Interest that was not retransmitted (Karn's algorithm).
    pub(crate) fn sample(&mut self, rtt: Duration) {
        let r = rtt.as_secs_f64();
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
        let s = self.srtt.unwrap_or(r);
        self.rto = (s + (4.0 * self.rttvar).max(GRANULARITY)).clamp(self.min_rto, self.max_rto);
    }

    /// Doubles the RTO after a timeout (RFC 6298 5.5), up to the maximum.
    pub(crate) fn backoff(&mut self) {
        self.rto = (self.rto * 2.0).min(self.max_rto);
    }

    pub(crate) fn rto(&self) -> Duration {
        Duration::from_secs_f64(self.rto)
    }
}

/// Minimum, average and maximum of the RTT samples taken.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RttStats {
    /// Samples taken (Data whose Interest was not retransmitted).
    pub samples: u64,
    /// Smallest RTT.
    pub min: Duration,
    /// Mean RTT.
    pub avg: Duration,
    /// Largest RTT.
    pub max: Duration,
}

/// Accumulates [`RttStats`].
#[derive(Debug, Clone, Default)]
pub(crate) struct RttStatsBuilder {
    n: u64,
    sum: Duration,
    min: Option<Duration>,
    max: Duration,
}

impl RttStatsBuilder {
    pub(crate) fn add(&mut self, rtt: Duration) {
        self.n += 1;
        self.sum += rtt;
        self.min = Some(self.min.map_or(rtt, |m| m.min(rtt)));
        self.max = self.max.max(rtt);
    }

    pub(crate) fn stats(&self) -> RttStats {
        RttStats {
            samples: self.n,
            min: self.min.unwrap_or_default(),
            avg: if self.n == 0 {
                Duration::ZERO
            } else {
                self.sum / self.n as u32
            },
            max: self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_first_and_later_samples() {
        let ms = Duration::from_millis;
        let mut e = RttEstimator::new(ms(1000), ms(10), ms(60_000));
        assert_eq!(e.rto(), ms(1000));
        e.sample(ms(100));
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4 * 50.
        assert_eq!(e.rto().as_millis(), 300);
        e.sample(ms(100));
        // RTTVAR = 0.75 * 50 = 37.5, SRTT = 100, RTO = 250.
        assert_eq!(e.rto().as_millis(), 250);
        e.backoff();
        assert_eq!(e.rto().as_millis(), 500);
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(800));
        e.sample(ms(1));
        assert_eq!(e.rto(), ms(200));
        e.backoff();
        e.backoff();
        e.backoff();
        assert_eq!(e.rto(), ms(800));
    }

    #[test]
    fn stats() {
        let mut s = RttStatsBuilder::default();
        assert_eq!(s.stats(), RttStats::default());
        for m in [3, 1, 2] {
            s.add(Duration::from_millis(m));
        }
        let st = s.stats();
        assert_eq!(
            (st.samples, st.min, st.avg, st.max),
            (
                3,
                Duration::from_millis(1),
                Duration::from_millis(2),
                Duration::from_millis(3)
            )
        );
    }
}
