//! A one-line progress bar on stderr, redrawn at most ten times a second.

use std::io::Write;
use std::time::{Duration, Instant};

const WIDTH: usize = 30;
const REDRAW: Duration = Duration::from_millis(100);

/// Draws `[#####.....]  45%  3.2/7.0 MB  120.5 Mbit/s` on stderr, or nothing when disabled.
#[derive(Debug)]
pub(crate) struct Progress {
    enabled: bool,
    start: Instant,
    last: Option<Instant>,
}

impl Progress {
    pub(crate) fn new(enabled: bool) -> Self {
        Self {
            enabled,
            start: Instant::now(),
            last: None,
        }
    }

    /// Redraws when due: `done` of `total` segments, `bytes` received so far.
    pub(crate) fn update(&mut self, done: u64, total: u64, bytes: u64) {
        if !self.enabled || self.last.is_some_and(|l| l.elapsed() < REDRAW) {
            return;
        }
        self.last = Some(Instant::now());
        let line = render(done, total, bytes, self.start.elapsed());
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r{line}");
        let _ = e.flush();
    }

    /// Draws the final state and ends the line.
    pub(crate) fn finish(&mut self, done: u64, total: u64, bytes: u64) {
        if !self.enabled {
            return;
        }
        let line = render(done, total, bytes, self.start.elapsed());
        let mut e = std::io::stderr().lock();
        let _ = writeln!(e, "\r{line}");
    }
}

/// The bar's text.
pub(crate) fn render(done: u64, total: u64, bytes: u64, elapsed: Duration) -> String {
    let frac = if total == 0 {
        0.0
    } else {
        done as f64 / total as f64
    };
    let filled = ((frac * WIDTH as f64) as usize).min(WIDTH);
    let secs = elapsed.as_secs_f64().max(1e-9);
    format!(
        "[{}{}] {:3.0}%  {done}/{total} segments  {:.1} MB  {:.1} Mbit/s ",
        "#".repeat(filled),
        ".".repeat(WIDTH - filled),
        frac * 100.0,
        bytes as f64 / 1e6,
        bytes as f64 * 8.0 / secs / 1e6,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_fraction_and_rate() {
        let s = render(5, 10, 1_000_000, Duration::from_secs(1));
        assert!(
            s.starts_with("[###############...............]  50%"),
            "{s}"
        );
        assert!(s.contains("8.0 Mbit/s"), "{s}");
        assert!(render(0, 0, 0, Duration::ZERO).contains("0%"));
    }
}
