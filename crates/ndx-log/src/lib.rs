//! How ndx's programs log: `tracing` events printed on standard error by a
//! `tracing-subscriber` set up once, by the binary ([`init`]); libraries only emit events.
//!
//! - **Filter**: `--log-level` (any [`EnvFilter`] directive list, e.g. `debug` or
//!   `info,ndx_hcs=debug`) wins over `RUST_LOG`, which wins over the default, `info`. A bad
//!   directive is an error, not silently ignored.
//! - **Format**: plain lines `ndx: message key=value` (`ndx: warning: ...`, `ndx: error: ...`)
//!   normally; under systemd, when standard error is the journal's stream (`JOURNAL_STREAM`
//!   names its device and inode), lines carry sd-daemon `<N>` priority prefixes instead, so
//!   journald records each line's level; no prefix word, no timestamp (journald adds both),
//!   no ANSI colours either way.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;

/// The level shown when neither `--log-level` nor `RUST_LOG` says otherwise.
pub const DEFAULT_LEVEL: &str = "info";

/// Where log lines go and how they look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// `PROGRAM: [warning: |error: ]message fields`: for terminals and log files.
    Plain,
    /// `<N>message fields`, `N` the sd-daemon priority (3 error, 4 warning, 6 info, 7 debug):
    /// for standard error connected to journald.
    Journald,
}

impl Output {
    /// [`Output::Journald`] when standard error is the stream `JOURNAL_STREAM` names (systemd
    /// sets it to `DEVICE:INODE` of the stream it connects), [`Output::Plain`] otherwise: a
    /// child whose standard error was redirected elsewhere (a file, a pipe) prints plain lines
    /// even though it inherited the variable.
    pub fn detect() -> Self {
        match std::env::var("JOURNAL_STREAM") {
            Ok(v) if stderr_is(&v) => Output::Journald,
            _ => Output::Plain,
        }
    }
}

/// Whether standard error is the file `dev_ino` (`DEVICE:INODE`, decimal) names.
fn stderr_is(dev_ino: &str) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let Some((dev, ino)) = dev_ino.split_once(':') else {
        return false;
    };
    let (Ok(dev), Ok(ino)) = (dev.parse::<u64>(), ino.parse::<u64>()) else {
        return false;
    };
    let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd)
        .metadata()
        .is_ok_and(|m| m.dev() == dev && m.ino() == ino)
}

/// The sd-daemon priority of `level` (`<N>` prefixes, syslog numbering).
pub fn priority(level: Level) -> u8 {
    match level {
        Level::ERROR => 3,
        Level::WARN => 4,
        Level::INFO => 6,
        _ => 7,
    }
}

/// A `--log-level` or `RUST_LOG` value that is not a valid directive list.
#[derive(Debug)]
pub struct FilterError {
    /// Where it came from (`--log-level` or `RUST_LOG`).
    pub source_name: &'static str,
    /// The value.
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:?}: {} (a level: error, warn, info, debug, trace, off; or directives such as \
             info,ndx_hcs=debug)",
            self.source_name, self.value, self.reason
        )
    }
}

impl std::error::Error for FilterError {}

/// The filter: `flag` (`--log-level`) if given, else `rust_log` (`RUST_LOG`'s value) if set
/// and not empty, else [`DEFAULT_LEVEL`].
pub fn filter(flag: Option<&str>, rust_log: Option<&str>) -> Result<EnvFilter, FilterError> {
    let (source_name, value) = match (flag, rust_log) {
        (Some(f), _) => ("--log-level", f),
        (None, Some(r)) if !r.trim().is_empty() => ("RUST_LOG", r),
        _ => ("default", DEFAULT_LEVEL),
    };
    let err = |reason: String| FilterError {
        source_name,
        value: value.to_owned(),
        reason,
    };
    // A bare word is a target enabled at every level to EnvFilter; here it must be a level
    // (`deubg` is a typo, not a crate).
    for d in value.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        if !d.contains('=') && !d.contains('[') && d.parse::<LevelFilter>().is_err() {
            return Err(err(format!("{d:?} is not a level (a target needs =LEVEL)")));
        }
    }
    EnvFilter::builder()
        .parse(value)
        .map_err(|e| err(e.to_string()))
}

/// The line format (a [`FormatEvent`]): see the crate documentation.
#[derive(Debug, Clone)]
pub struct Format {
    program: &'static str,
    output: Output,
}

impl Format {
    /// Lines of `program` (the plain format's prefix, e.g. `ndx`) in `output`'s format.
    pub fn new(program: &'static str, output: Output) -> Self {
        Self { program, output }
    }

    /// The line (without its newline) for an event of `level` whose message is `message` and
    /// whose other fields read `fields` (`key=value` separated by spaces, or empty).
    pub fn line(&self, level: Level, message: &str, fields: &str) -> String {
        let mut body = message.to_owned();
        if !fields.is_empty() {
            if !body.is_empty() {
                body.push(' ');
            }
            body.push_str(fields);
        }
        match self.output {
            Output::Plain => {
                let word = match level {
                    Level::ERROR => "error: ",
                    Level::WARN => "warning: ",
                    Level::INFO => "",
                    Level::DEBUG => "debug: ",
                    Level::TRACE => "trace: ",
                };
                format!("{}: {word}{body}", self.program)
            }
            Output::Journald => {
                // Every line of a multi-line message keeps the event's priority.
                let p = format!("<{}>", priority(level));
                let mut s = String::new();
                for (i, l) in body.split('\n').enumerate() {
                    if i > 0 {
                        s.push('\n');
                    }
                    s.push_str(&p);
                    s.push_str(l);
                }
                s
            }
        }
    }
}

/// An event's message and its other fields.
#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            if !self.rest.is_empty() {
                self.rest.push(' ');
            }
            let _ = write!(self.rest, "{}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.record_debug(field, &value);
        }
    }
}

impl<S, N> FormatEvent<S, N> for Format
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut f = Fields::default();
        event.record(&mut f);
        writeln!(
            w,
            "{}",
            self.line(*event.metadata().level(), &f.message, &f.rest)
        )
    }
}

/// The line a program prints on standard error when a command fails (`ndx: message`), with
/// the journal's error priority (`<3>message`) when standard error is the journal: the one
/// line that ends a service should be recorded as an error even though it is not an event.
pub fn fatal(program: &str, e: &dyn fmt::Display) -> String {
    match Output::detect() {
        Output::Plain => format!("{program}: {e}"),
        Output::Journald => format!("<3>{}", e.to_string().replace('\n', "\n<3>")),
    }
}

/// The subscriber [`init`] installs, writing to `writer` (tests capture with it).
pub fn subscriber<W>(
    program: &'static str,
    output: Output,
    filter: EnvFilter,
    writer: W,
) -> impl Subscriber + Send + Sync + 'static
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .event_format(Format::new(program, output))
        .with_env_filter(filter)
        .with_writer(writer)
        .finish()
}

/// Installs the process's subscriber: events of `program` on standard error, filtered by
/// `--log-level` (`flag`) over `RUST_LOG` over `info`, formatted for journald when standard
/// error is the journal ([`Output::detect`]). Only binaries call this; a subscriber already
/// installed (by an embedding program) stays and this returns `Ok`.
pub fn init(program: &'static str, flag: Option<&str>) -> Result<(), FilterError> {
    let rust_log = std::env::var("RUST_LOG").ok();
    let filter = filter(flag, rust_log.as_deref())?;
    let _ = tracing::subscriber::set_global_default(subscriber(
        program,
        Output::detect(),
        filter,
        std::io::stderr,
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer that keeps what it is given.
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Capture {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn capture(output: Output, filter_flag: Option<&str>, rust_log: Option<&str>) -> String {
        let cap = Capture::default();
        let w = cap.clone();
        let sub = subscriber(
            "ndx",
            output,
            filter(filter_flag, rust_log).unwrap(),
            move || w.clone(),
        );
        tracing::subscriber::with_default(sub, || {
            tracing::error!(
                "L2 write failed ({}): L2 disabled",
                "No space left on device"
            );
            tracing::warn!(file = "a.l2", "refuses O_DIRECT");
            tracing::info!(interface = %"x0", "x0: link up; forwarding there again");
            tracing::info!("tables: 1 MiB\nsecond line");
            tracing::debug!("only at debug");
            tracing::debug!(target: "ndx_hcs::region", "hcs detail");
        });
        String::from_utf8(cap.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn plain_lines_keep_the_ndx_prefix_and_level_words() {
        assert_eq!(
            capture(Output::Plain, None, None),
            "ndx: error: L2 write failed (No space left on device): L2 disabled\n\
             ndx: warning: refuses O_DIRECT file=\"a.l2\"\n\
             ndx: x0: link up; forwarding there again interface=x0\n\
             ndx: tables: 1 MiB\nsecond line\n"
        );
    }

    #[test]
    fn journald_lines_carry_priorities_on_every_line() {
        let got = capture(Output::Journald, Some("debug"), None);
        assert_eq!(
            got,
            "<3>L2 write failed (No space left on device): L2 disabled\n\
             <4>refuses O_DIRECT file=\"a.l2\"\n\
             <6>x0: link up; forwarding there again interface=x0\n\
             <6>tables: 1 MiB\n<6>second line\n\
             <7>only at debug\n\
             <7>hcs detail\n"
        );
    }

    #[test]
    fn the_flag_wins_over_rust_log_which_wins_over_info() {
        // RUST_LOG alone: per-target directives.
        let got = capture(Output::Plain, None, Some("warn,ndx_hcs=debug"));
        assert!(!got.contains("link up"), "{got}");
        assert!(got.contains("ndx: debug: hcs detail"), "{got}");
        assert!(!got.contains("only at debug"), "{got}");
        // The flag overrides it entirely.
        let got = capture(Output::Plain, Some("error"), Some("debug"));
        assert_eq!(
            got,
            "ndx: error: L2 write failed (No space left on device): L2 disabled\n"
        );
        // An empty RUST_LOG is the default.
        assert!(capture(Output::Plain, None, Some("")).contains("link up"));
    }

    #[test]
    fn bad_directives_are_errors_naming_their_source() {
        let e = filter(Some("loud"), None).unwrap_err();
        assert_eq!(e.source_name, "--log-level");
        assert!(e.to_string().contains("\"loud\""), "{e}");
        let e = filter(None, Some("ndx=verbose")).unwrap_err();
        assert_eq!(e.source_name, "RUST_LOG");
        assert!(filter(Some("DEBUG"), None).is_ok());
        assert!(filter(Some("off"), None).is_ok());
        assert!(filter(Some("info,ndx_router=trace"), None).is_ok());
    }

    #[test]
    fn journal_stream_must_name_stderr() {
        assert!(!stderr_is("not-a-pair"));
        assert!(!stderr_is("1:x"));
        assert!(!stderr_is("0:0"));
    }
}
