//! AIMD congestion window, as ndncatchunks' AIMD pipeline: slow start up to ssthresh, then
//! additive increase; multiplicative decrease on a timeout, a congestion mark or a congestion
//! Nack, at most once per window of Interests (conservative window adaptation).

/// The congestion window, in Interests.
#[derive(Debug, Clone)]
pub(crate) struct Aimd {
    cwnd: f64,
    ssthresh: f64,
    min_cwnd: f64,
    max_cwnd: f64,
    /// Transmissions numbered at or below this were in flight at the last decrease: their
    /// losses are part of the same congestion event.
    recovery_point: Option<u64>,
    decreases: u64,
}

/// Additive increase per window of acknowledged Interests.
const AI_STEP: f64 = 1.0;
/// Multiplicative decrease factor.
const MD_COEF: f64 = 0.5;

impl Aimd {
    pub(crate) fn new(init: f64, max: f64) -> Self {
        let min_cwnd = 1.0;
        let max_cwnd = max.max(min_cwnd);
        Self {
            cwnd: init.clamp(min_cwnd, max_cwnd),
            ssthresh: f64::INFINITY,
            min_cwnd,
            max_cwnd,
            recovery_point: None,
            decreases: 0,
        }
    }

    /// Interests allowed in flight now.
    pub(crate) fn window(&self) -> usize {
        self.cwnd.floor() as usize
    }

    pub(crate) fn cwnd(&self) -> f64 {
        self.cwnd
    }

    pub(crate) fn decreases(&self) -> u64 {
        self.decreases
    }

    /// One Data arrived for an Interest that was not marked.
    pub(crate) fn on_data(&mut self) {
        if self.cwnd < self.ssthresh {
            self.cwnd += AI_STEP;
        } else {
            self.cwnd += AI_STEP / self.cwnd;
        }
        self.cwnd = self.cwnd.min(self.max_cwnd);
    }

    /// A loss signal (timeout, congestion mark, congestion Nack) for transmission `tx`;
    /// `highest_tx` is the highest transmission number sent so far. Returns whether this
    /// started a new congestion event (the window was decreased).
    pub(crate) fn on_congestion(&mut self, tx: u64, highest_tx: u64) -> bool {
        if self.recovery_point.is_some_and(|r| tx <= r) {
            return false;
        }
        self.ssthresh = (self.cwnd * MD_COEF).max(self.min_cwnd);
        self.cwnd = self.ssthresh;
        self.recovery_point = Some(highest_tx);
        self.decreases += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_then_halve_once_per_window() {
        let mut w = Aimd::new(2.0, 1000.0);
        for _ in 0..6 {
            w.on_data();
        }
        assert_eq!(w.window(), 8);
        assert!(w.on_congestion(5, 20));
        assert_eq!(w.window(), 4);
        // Same congestion event: no second decrease.
        assert!(!w.on_congestion(19, 20));
        assert_eq!(w.window(), 4);
        assert_eq!(w.decreases(), 1);
        // Congestion avoidance: +1 per window.
        for _ in 0..4 {
            w.on_data();
        }
        assert_eq!(w.window(), 4);
        assert!(w.cwnd() > 4.9 && w.cwnd() < 5.0);
        w.on_congestion(21, 30);
        assert_eq!(w.window(), 2);
        w.on_congestion(31, 40);
        w.on_congestion(41, 50);
        assert_eq!(w.window(), 1);
        let mut w = Aimd::new(2.0, 3.0);
        for _ in 0..10 {
            w.on_data();
        }
        assert_eq!(w.window(), 3);
    }
}
