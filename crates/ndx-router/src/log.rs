//! Log lines of the libraries the router uses (`tracing` events, e.g. the L2 store's "L2
//! write failed ...: L2 disabled") printed on stderr like the router's own lines: `ndx: ...`.
//! Info and above by default; `NDX_LOG=debug` (or `trace`, `warn`, `error`) changes the level.

use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// A subscriber that prints events on stderr.
#[derive(Debug)]
pub struct StderrLog {
    max: Level,
    /// Where lines go instead of stderr (tests).
    capture: Option<Arc<Mutex<Vec<String>>>>,
}

impl StderrLog {
    /// Events up to `max` (by verbosity: `Level::INFO` prints info, warn and error).
    pub fn new(max: Level) -> Self {
        Self { max, capture: None }
    }

    /// Like [`StderrLog::new`], keeping the lines in `lines` instead of printing them.
    pub fn capturing(max: Level, lines: Arc<Mutex<Vec<String>>>) -> Self {
        Self {
            max,
            capture: Some(lines),
        }
    }

    /// The level `NDX_LOG` asks for (default info).
    pub fn from_env() -> Self {
        let max = match std::env::var("NDX_LOG").as_deref() {
            Ok("error") => Level::ERROR,
            Ok("warn") => Level::WARN,
            Ok("debug") => Level::DEBUG,
            Ok("trace") => Level::TRACE,
            _ => Level::INFO,
        };
        Self::new(max)
    }

    /// The line printed for an event (without the trailing newline).
    pub fn format(level: Level, fields: &str) -> String {
        match level {
            Level::ERROR => format!("ndx: error: {fields}"),
            Level::WARN => format!("ndx: warning: {fields}"),
            _ => format!("ndx: {fields}"),
        }
    }
}

/// Installs [`StderrLog::from_env`] as the process's subscriber (once; later calls and a
/// subscriber installed by someone else win silently).
pub fn install() {
    let _ = tracing::subscriber::set_global_default(StderrLog::from_env());
}

#[derive(Default)]
struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, "{}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            if !self.0.is_empty() {
                self.0.push(' ');
            }
            self.0.push_str(value);
        } else {
            self.record_debug(field, &value);
        }
    }
}

impl Subscriber for StderrLog {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.max
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let line = Self::format(*event.metadata().level(), &f.0);
        match &self.capture {
            Some(lines) => lines.lock().unwrap_or_else(|e| e.into_inner()).push(line),
            None => eprintln!("{line}"),
        }
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_formatted_and_filtered() {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let log = StderrLog::capturing(Level::INFO, lines.clone());
        tracing::subscriber::with_default(log, || {
            tracing::error!(
                "L2 write failed ({}): L2 disabled",
                "No space left on device"
            );
            tracing::warn!(file = "a.l2", "refuses O_DIRECT");
            tracing::info!("L2 recovered 3 records");
            tracing::debug!("not shown at info");
        });
        assert_eq!(
            *lines.lock().unwrap(),
            vec![
                "ndx: error: L2 write failed (No space left on device): L2 disabled",
                "ndx: warning: refuses O_DIRECT file=\"a.l2\"",
                "ndx: L2 recovered 3 records",
            ]
        );
    }
}
