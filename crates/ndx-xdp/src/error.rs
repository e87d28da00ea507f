//! Errors of the loader.

/// What went wrong loading, configuring or attaching the XDP program.
#[derive(Debug, thiserror::Error)]
pub enum XdpError {
    /// The configuration is inconsistent (see the message).
    #[error("invalid XDP configuration: {0}")]
    Config(String),
    /// The kernel refused the program; `log` is the verifier's output.
    #[error("the verifier rejected the XDP program ({io_error}):\n{log}")]
    Verifier {
        /// The errno of BPF_PROG_LOAD.
        io_error: std::io::Error,
        /// The verifier log.
        log: String,
    },
    /// Parsing the ELF, creating the maps or another aya step failed.
    #[error("loading the XDP object: {0}")]
    Ebpf(#[from] aya::EbpfError),
    /// A program operation (load, attach, info) failed.
    #[error("XDP program: {0}")]
    Program(#[from] aya::programs::ProgramError),
    /// A map operation failed.
    #[error("XDP map: {0}")]
    Map(#[from] aya::maps::MapError),
    /// The kernel attached through netlink instead of a bpf_link, which would outlive the
    /// process; the attachment was undone.
    #[error("bpf_link attachment unavailable on this kernel (netlink fallback refused)")]
    NoBpfLink,
    /// No interface of that name.
    #[error("no network interface named {0:?}")]
    UnknownInterface(String),
    /// An index (queue, shard, table entry) is out of range.
    #[error("{what} {value} out of range (limit {limit})")]
    OutOfRange {
        /// Which index.
        what: &'static str,
        /// The value given.
        value: usize,
        /// The exclusive upper bound.
        limit: usize,
    },
    /// BPF_PROG_TEST_RUN failed.
    #[error("BPF_PROG_TEST_RUN: {0}")]
    TestRun(std::io::Error),
}
