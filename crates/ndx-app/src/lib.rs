//! NDN applications for ndx to demonstrate and measure itself without outside software:
//!
//! - [`put`] / [`Producer::put`]: serve a file as a versioned, segmented object
//!   (`/prefix/v=<ms timestamp>/seg=<n>`, FinalBlockId on every segment, FreshnessPeriod,
//!   DigestSha256), answering CanBePrefix discovery Interests with the first segment,
//!   NDNLPv2-fragmenting Data larger than the path MTU and echoing PitTokens;
//! - [`serve`] / [`Producer::serve`]: answer every Interest under a prefix with an N-byte Data;
//! - [`get`] / [`Consumer::fetch`]: discover the latest version and fetch every segment with an
//!   AIMD window (as ndncatchunks), RFC 6298 retransmission timers, LP reassembly,
//!   verification (DigestSha256, name, FinalBlockId) and a progress bar, returning a
//!   [`GetReport`] (throughput, retransmissions, RTT);
//! - [`generate`]: a windowed Interest generator for benchmarks ([`GenReport`]).
//!
//! Everything runs on plain blocking std sockets with receive timeouts, no async runtime: UDP
//! to a forwarder or producer, or a local forwarder's Unix stream socket (`unix://PATH`, TLV
//! packets back to back), where `put` and `serve` register their prefix (`rib/register`,
//! [`ndx_nfd`]) before reporting ready.
//! The option structs derive [`clap::Args`], so a binary flattens them into subcommands.
mod addr;
mod consumer;
mod error;
mod face;
mod get;
mod mtu;
mod object;
mod producer;
mod progress;
mod register;
mod rtt;
mod stream;
mod traffic;
mod window;

pub use addr::{
    AddrError, DEFAULT_FORWARDER_SOCKET, Endpoint, NDN_PORT, parse_endpoint, parse_udp_endpoint,
    parse_unix_endpoint,
};
pub use consumer::{Consumer, MAX_SEGMENTS};
pub use error::{AppError, VerifyError};
pub use get::{DEFAULT_TARGET, Discovery, GetOptions, GetReport, get};
pub use mtu::{DEFAULT_MTU, LinkMtu, PATH_MTU_TTL, path_mtu};
pub use ndx_codec::{NackReason, NameBuf};
pub use producer::{
    DEFAULT_FRESHNESS_MS, DEFAULT_PRODUCER_BIND, DEFAULT_SEGMENT_SIZE, Producer, ProducerReport,
    PutOptions, ServeOptions, put, read_input, serve,
};
pub use rtt::RttStats;
pub use traffic::{GenOptions, GenReport, generate};
