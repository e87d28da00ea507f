//! Errors of the AF_XDP layer.

/// What went wrong opening or driving a port, or loading the XDP program.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value is unusable.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The interface does not exist.
    #[error("no such interface: {0}")]
    NoInterface(String),
    /// A system call failed.
    #[error("{op} failed: {source}")]
    Sys {
        /// The operation.
        op: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// Loading or attaching the XDP program failed.
    #[error("XDP program: {0}")]
    Bpf(String),
}

impl Error {
    /// A `Sys` error from `errno`.
    pub(crate) fn sys(op: &'static str) -> Error {
        Error::Sys {
            op,
            source: std::io::Error::last_os_error(),
        }
    }

    pub(crate) fn errno(op: &'static str, e: &xdpilone::Errno) -> Error {
        let raw = e.get_raw();
        Error::Sys {
            op,
            source: std::io::Error::from_raw_os_error(raw.abs()),
        }
    }
}
