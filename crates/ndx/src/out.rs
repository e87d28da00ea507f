//! Standard output and error for the commands, and what a closed pipe means.
//!
//! `ndx face list | head` closes the pipe while ndx still writes. Rust ignores SIGPIPE, so the
//! write fails with `EPIPE` (and `println!` panics on it). Commands therefore write through
//! [`print()`], which reports failures as [`OutputError`], and `main` ends the command quietly,
//! with status 0, when standard output was a pipe its reader closed ([`is_closed_pipe`]): the
//! reader has what it wanted, as it would with a tool killed by SIGPIPE. Messages to standard
//! error go through [`eprint()`], which never fails.

use std::error::Error;
use std::fmt;
use std::io::{self, Write};

/// Standard output could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write output: {0}")]
pub(crate) struct OutputError(#[from] pub(crate) io::Error);

/// Writes `text` to standard output and flushes it.
pub(crate) fn print(text: impl fmt::Display) -> Result<(), OutputError> {
    let mut out = io::stdout().lock();
    write!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// Writes `text` and a newline to standard output.
pub(crate) fn println(text: impl fmt::Display) -> Result<(), OutputError> {
    print(format_args!("{text}\n"))
}

/// Writes `text` and a newline to standard error; a closed or failing standard error is
/// ignored (there is nowhere left to report it).
pub(crate) fn eprint(text: impl fmt::Display) {
    let _ = writeln!(io::stderr().lock(), "{text}");
}

/// Whether `e` says standard output is a pipe whose reader went away. Only errors known to
/// come from writing the command's output count: a broken control socket is a real failure.
pub(crate) fn is_closed_pipe(e: &(dyn Error + 'static)) -> bool {
    let io = if let Some(OutputError(io)) = e.downcast_ref() {
        io
    } else if let Some(crate::dissect::DissectError::Write(io)) = e.downcast_ref() {
        io
    } else if let Some(ndx_app::AppError::WriteOutput { source }) = e.downcast_ref() {
        source
    } else {
        return false;
    };
    io.kind() == io::ErrorKind::BrokenPipe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_output_errors_are_a_closed_pipe() {
        let pipe = || io::Error::from(io::ErrorKind::BrokenPipe);
        let output: Box<dyn Error> = Box::new(OutputError(pipe()));
        assert!(is_closed_pipe(output.as_ref()));
        let dissect: Box<dyn Error> = Box::new(crate::dissect::DissectError::Write(pipe()));
        assert!(is_closed_pipe(dissect.as_ref()));
        let other: Box<dyn Error> = Box::new(OutputError(io::Error::other("disk full")));
        assert!(!is_closed_pipe(other.as_ref()));
        // The control socket's broken pipe is the router's, not the reader's.
        let socket: Box<dyn Error> = Box::new(ndx_router::client::ClientError::from(pipe()));
        assert!(!is_closed_pipe(socket.as_ref()));
    }
}
