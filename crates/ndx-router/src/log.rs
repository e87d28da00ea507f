//! Log lines of the libraries the router uses (`tracing` events, e.g. the L2 store's "L2
//! write failed ...: L2 disabled") printed on stderr like the router's own lines: `ndx: ...`.
//! Info and above by default; `NDX_LOG=debug` (or `trace`, `warn`, `error`) changes the level.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// A subscriber that prints events on stderr.
#[derive(Debug)]
pub struct StderrLog {
    max: Level,
}

impl StderrLog {
    /// Events up to `max` (by verbosity: `Level::INFO` prints info, warn and error).
    pub fn new(max: Level) -> Self {
        Self { max }
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
        eprintln!("{}", Self::format(*event.metadata().level(), &f.0));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_formatted_and_filtered() {
        assert_eq!(
            StderrLog::format(Level::ERROR, "L2 write failed"),
            "ndx: error: L2 write failed"
        );
        assert_eq!(StderrLog::format(Level::INFO, "x"), "ndx: x");
        let s = StderrLog::new(Level::INFO);
        let sub: &dyn Subscriber = &s;
        let fields = Fields(String::new());
        drop(fields);
        tracing::subscriber::with_default(StderrLog::new(Level::WARN), || {
            assert!(tracing::enabled!(Level::ERROR));
            assert!(!tracing::enabled!(Level::INFO));
        });
        let _ = sub;
    }
}
