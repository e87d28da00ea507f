//! Errors of the traffic tools.

/// What can go wrong while setting up a generator or responder.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// AF_XDP or XDP setup failed.
    #[error("AF_XDP: {0}")]
    Afxdp(#[from] ndx_afxdp::Error),
    /// Reading the interface (MAC address) over rtnetlink failed.
    #[error("interface lookup: {0}")]
    Neigh(#[from] ndx_afxdp::neigh::NeighError),
    /// The prefix is not an NDN URI.
    #[error("bad prefix {0:?}: {1}")]
    Prefix(String, String),
    /// Encoding the Interest template failed.
    #[error("encoding: {0}")]
    Codec(#[from] ndx_codec::Error),
    /// The template is not as expected (internal).
    #[error("template: {0}")]
    Template(&'static str),
    /// Building headers failed.
    #[error("headers: {0}")]
    Wire(#[from] ndx_afxdp::wire::BuildError),
    /// An option is out of range.
    #[error("invalid option: {0}")]
    Option(String),
}
