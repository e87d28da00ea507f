//! The crate's error types: what failed, with enough context to be the message itself.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

use ndx_codec::NackReason;

use crate::addr::Endpoint;

/// Why `put`, `serve`, `get` or `gen` failed.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The UDP socket could not be bound.
    #[error("cannot bind a UDP socket to {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        source: io::Error,
    },
    /// A send, receive or socket option call failed.
    #[error("UDP socket error while {what}: {source}")]
    Socket {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The forwarder's Unix socket could not be connected to.
    #[error("cannot connect to the forwarder's socket unix://{}: {source} (is the forwarder running, with its Unix socket there?)", path.display())]
    Connect {
        /// The socket's path.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A send, receive or option call on the forwarder's Unix socket failed.
    #[error("Unix socket error while {what}: {source}")]
    Stream {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The forwarder closed its end of the Unix socket.
    #[error("the forwarder closed the connection on unix://{}", path.display())]
    Closed {
        /// The socket's path.
        path: PathBuf,
    },
    /// The byte stream from the forwarder is not NDN packets back to back.
    #[error("broken packet framing on the forwarder's socket: {0}")]
    Framing(String),
    /// The forwarder refused to register the prefix (rib/register answered other than 200).
    #[error("the forwarder refused to register {prefix}: status {code} {text:?}")]
    Registration {
        /// The prefix.
        prefix: String,
        /// The ControlResponse's StatusCode.
        code: u32,
        /// Its StatusText.
        text: String,
    },
    /// The forwarder's answer to rib/register is not a ControlResponse.
    #[error("the forwarder's answer to rib/register for {prefix} is malformed: {reason}")]
    BadResponse {
        /// The prefix.
        prefix: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The input file (or stdin) could not be read.
    #[error("cannot read {path}: {source}")]
    ReadInput {
        /// The file (`-` for stdin).
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The fetched object could not be written out.
    #[error("cannot write the fetched object: {source}")]
    WriteOutput {
        /// The OS error.
        source: io::Error,
    },
    /// An option has a value that cannot work.
    #[error("invalid option: {0}")]
    InvalidOption(String),
    /// A packet could not be encoded (e.g. a name too long for the segment size).
    #[error("cannot encode a packet: {0}")]
    Encode(#[from] ndx_codec::Error),
    /// No Data came back for an Interest, even after every retransmission.
    #[error(
        "no Data for {name} after {attempts} attempts sending to {target} \
         (is a forwarder or producer listening there, with a route for this prefix?)"
    )]
    Timeout {
        /// The Interest's name.
        name: String,
        /// Times it was sent (for discovery: rounds, each with the CanBePrefix and the RDR Interest).
        attempts: u32,
        /// Where they were sent.
        target: Endpoint,
    },
    /// The network answered with Nack NoRoute: no forwarder on the way (or the producer) has
    /// a route for the name. Not retried.
    #[error("no route to {name} at {target} (Nack NoRoute)")]
    NoRoute {
        /// The Interest's name.
        name: String,
        /// Where the Interest was sent.
        target: Endpoint,
    },
    /// Every retransmission of an Interest, each after a longer backoff, was answered with
    /// Nack Congestion.
    #[error(
        "Nack Congestion from {target} for {name} after {attempts} attempts, retried with \
         backoff (the path is overloaded: try again later)"
    )]
    Congestion {
        /// The Interest's name.
        name: String,
        /// Times it was sent.
        attempts: u32,
        /// Who sent the Nacks.
        target: Endpoint,
    },
    /// The network answered an Interest with a Nack the consumer cannot retry (no reason or
    /// an unknown one), or with Nack Duplicate to every retransmission.
    #[error("Interest {name} was Nacked ({reason:?}) by {target}")]
    Nack {
        /// The Interest's name.
        name: String,
        /// The Nack's reason.
        reason: NackReason,
        /// Who sent it.
        target: Endpoint,
    },
    /// A Data failed verification; the fetch is aborted.
    #[error("Data {name} failed verification: {reason}")]
    Verify {
        /// The Data's name.
        name: String,
        /// What is wrong with it.
        reason: VerifyError,
    },
}

/// What is wrong with a Data the consumer received.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The DigestSha256 SignatureValue is not the SHA-256 of the signed portion.
    #[error("DigestSha256 signature value does not match the packet (corrupted or forged)")]
    BadDigest,
    /// The Data is not signed with DigestSha256 (the only signature the tool checks).
    #[error("signature type {0} is not DigestSha256 (0); pass --no-verify to accept it unchecked")]
    UnsupportedSignature(u64),
    /// The Data does not decode.
    #[error("malformed Data: {0}")]
    Malformed(ndx_codec::Error),
    /// An RDR metadata packet whose content is not a versioned name under the prefix.
    #[error("bad RDR metadata packet: {0}")]
    BadMetadata(String),
    /// The name's last component is not a segment number.
    #[error("the name does not end with a segment number (seg=N)")]
    NotSegmented,
    /// The first segment carries no FinalBlockId, so the object's length is unknown.
    #[error("no FinalBlockId on the first segment: the object's length is unknown")]
    MissingFinalBlockId,
    /// FinalBlockId is not a segment number component.
    #[error("FinalBlockId {0} is not a segment number")]
    FinalBlockIdNotSegment(String),
    /// FinalBlockId differs from the one the first segment carried.
    #[error("FinalBlockId changed from seg={first} to seg={now}")]
    FinalBlockIdChanged {
        /// The first FinalBlockId seen.
        first: u64,
        /// This Data's.
        now: u64,
    },
    /// The FinalBlockId announces more segments than the consumer accepts.
    #[error("FinalBlockId seg={last} announces more than {max} segments")]
    TooManySegments {
        /// The FinalBlockId.
        last: u64,
        /// The limit.
        max: u64,
    },
    /// A segment number past the FinalBlockId.
    #[error("segment {seg} is past the final segment {last}")]
    PastFinalBlock {
        /// The segment number.
        seg: u64,
        /// The FinalBlockId.
        last: u64,
    },
}
