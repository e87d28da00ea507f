//! `ndx get`'s options and report, and the [`get`] entry point.

use std::fmt;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use ndx_codec::NameBuf;

use crate::addr::{Endpoint, parse_endpoint, parse_udp_endpoint};
use crate::consumer::Consumer;
use crate::error::AppError;
use crate::mtu::LinkMtu;
use crate::rtt::RttStats;

/// Default forwarder (or producer) address of the consumer tools.
pub const DEFAULT_TARGET: &str = "udp://127.0.0.1:6363";

/// Options of `ndx get`: fetch a segmented object.
#[derive(Debug, Clone, clap::Args)]
pub struct GetOptions {
    /// Name prefix of the object; when it ends with a version (`v=N`), discovery is skipped.
    #[arg(value_name = "PREFIX")]
    pub prefix: NameBuf,
    /// Forwarder or producer to send Interests to: `udp://IP:port`, `IP:port`, `[v6]:port`,
    /// or a local forwarder's Unix socket, `unix:///run/nfd/nfd.sock`.
    #[arg(short, long, default_value = DEFAULT_TARGET, value_parser = parse_endpoint)]
    pub target: Endpoint,
    /// Write the object to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Local UDP address to send from (default: any address of the target's family; unused
    /// with a Unix socket).
    #[arg(long, value_parser = parse_udp_endpoint)]
    pub bind: Option<SocketAddr>,
    /// InterestLifetime, in milliseconds.
    #[arg(long, default_value_t = 4000)]
    pub lifetime_ms: u64,
    /// Initial congestion window, in Interests.
    #[arg(long, default_value_t = 2)]
    pub init_cwnd: u32,
    /// Largest congestion window, in Interests.
    #[arg(long, default_value_t = 1024)]
    pub max_cwnd: u32,
    /// Retransmissions of one segment before giving up.
    #[arg(long, default_value_t = 15)]
    pub max_retries: u32,
    /// Retransmissions of the discovery Interest before giving up.
    #[arg(long, default_value_t = 3)]
    pub discovery_retries: u32,
    /// Retransmission timeout before the first RTT sample, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub initial_rto_ms: u64,
    /// Smallest retransmission timeout, in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub min_rto_ms: u64,
    /// Largest retransmission timeout (after backoff), in milliseconds.
    #[arg(long, default_value_t = 4000)]
    pub max_rto_ms: u64,
    /// Link MTU in bytes, or `auto`: the path MTU towards the target (for the rare Interest
    /// that would not fit).
    #[arg(long, default_value_t = LinkMtu::Auto)]
    pub mtu: LinkMtu,
    /// Accept Data without checking their DigestSha256 signature.
    #[arg(long)]
    pub no_verify: bool,
    /// Never draw the progress bar (it is drawn only when stderr is a terminal).
    #[arg(long)]
    pub no_progress: bool,
}

impl GetOptions {
    /// Options with every default, fetching `prefix` through `target` (a UDP address or an
    /// [`Endpoint`]).
    pub fn new(prefix: NameBuf, target: impl Into<Endpoint>) -> Self {
        Self {
            prefix,
            target: target.into(),
            output: None,
            bind: None,
            lifetime_ms: 4000,
            init_cwnd: 2,
            max_cwnd: 1024,
            max_retries: 15,
            discovery_retries: 3,
            initial_rto_ms: 1000,
            min_rto_ms: 200,
            max_rto_ms: 4000,
            mtu: LinkMtu::Auto,
            no_verify: false,
            no_progress: false,
        }
    }
}

/// How `get` found the version it fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discovery {
    /// The prefix given already ended with a version.
    Explicit,
    /// A CanBePrefix + MustBeFresh Interest for the prefix returned a segment.
    CanBePrefix,
    /// The RDR metadata packet (`/prefix/32=metadata`) named the versioned prefix.
    Metadata,
}

/// What a fetch did.
#[derive(Debug, Clone, PartialEq)]
pub struct GetReport {
    /// The versioned name fetched (`/prefix/v=<version>`).
    pub name: String,
    /// The version, when the name ends with one.
    pub version: Option<u64>,
    /// How the version was found.
    pub discovery: Discovery,
    /// Content bytes written.
    pub bytes: u64,
    /// Segments fetched.
    pub segments: u64,
    /// From the first Interest to the last segment.
    pub elapsed: Duration,
    /// Interests sent again (after a timeout or a retryable Nack).
    pub retransmissions: u64,
    /// Interests whose retransmission timer expired.
    pub timeouts: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Data that came with an NDNLPv2 CongestionMark.
    pub congestion_marks: u64,
    /// Times the congestion window was halved.
    pub window_decreases: u64,
    /// The congestion window at the end.
    pub final_cwnd: f64,
    /// RTT of Data whose Interest was sent once.
    pub rtt: RttStats,
    /// SHA-256 of the object.
    pub sha256: [u8; 32],
}

impl GetReport {
    /// Goodput in Mbit/s (content bytes over elapsed time).
    pub fn throughput_mbps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.elapsed.as_secs_f64().max(1e-9) / 1e6
    }

    /// Segments per second.
    pub fn segments_per_sec(&self) -> f64 {
        self.segments as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The SHA-256 as lowercase hex.
    pub fn sha256_hex(&self) -> String {
        self.sha256.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Display for GetReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        writeln!(
            f,
            "Fetched {} ({} segments, {} bytes)",
            self.name, self.segments, self.bytes
        )?;
        writeln!(f, "Version discovery: {:?}", self.discovery)?;
        writeln!(f, "Time elapsed: {:.3} s", self.elapsed.as_secs_f64())?;
        writeln!(
            f,
            "Goodput: {:.3} Mbit/s, {:.1} segments/s",
            self.throughput_mbps(),
            self.segments_per_sec()
        )?;
        writeln!(
            f,
            "Retransmissions: {}, timeouts: {}, Nacks: {}, congestion marks: {}, window decreases: {} (final cwnd {:.1})",
            self.retransmissions,
            self.timeouts,
            self.nacks,
            self.congestion_marks,
            self.window_decreases,
            self.final_cwnd
        )?;
        writeln!(
            f,
            "RTT min/avg/max = {:.3}/{:.3}/{:.3} ms ({} samples)",
            ms(self.rtt.min),
            ms(self.rtt.avg),
            ms(self.rtt.max),
            self.rtt.samples
        )?;
        write!(f, "SHA-256: {}", self.sha256_hex())
    }
}

/// `ndx get`: fetches `opts.prefix` and writes it to `opts.output` (or stdout).
pub fn get(opts: &GetOptions) -> Result<GetReport, AppError> {
    let mut c = Consumer::new(opts)?;
    match &opts.output {
        Some(p) => {
            let file =
                std::fs::File::create(p).map_err(|source| AppError::WriteOutput { source })?;
            let mut w = std::io::BufWriter::new(file);
            let r = c.fetch(&mut w).and_then(|r| {
                w.flush()
                    .map_err(|source| AppError::WriteOutput { source })?;
                Ok(r)
            });
            if r.is_err() {
                // Leave no partial object behind, but only ever remove a regular file:
                // `-o /dev/null` (or a FIFO, a device) must survive a failed fetch.
                drop(w);
                if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file()) {
                    let _ = std::fs::remove_file(p);
                }
            }
            r
        }
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            let r = c.fetch(&mut w)?;
            w.flush()
                .map_err(|source| AppError::WriteOutput { source })?;
            Ok(r)
        }
    }
}
