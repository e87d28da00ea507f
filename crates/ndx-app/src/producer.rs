//! The producer: `put` serves one segmented object, `serve` answers every Interest under a
//! prefix with a synthetic Data. Both reply to whoever sent the Interest, echoing its PitToken.
//! They listen on a UDP address, or connect to a local forwarder's Unix socket and register
//! their prefix there (`--forwarder`).

use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ndx_codec::{DataRepr, Interest, NackReason, NameBuf, Packet};

use crate::addr::{Endpoint, parse_udp_endpoint, parse_unix_endpoint};
use crate::error::AppError;
use crate::face::{Face, Peer, bind};
use crate::mtu::LinkMtu;
use crate::object::{Lookup, SegmentedObject, timestamp_version};
use crate::register::register;

/// Default content bytes per segment (as ndnputchunks and `ndnd put`).
pub const DEFAULT_SEGMENT_SIZE: usize = 8000;
/// Default FreshnessPeriod of served Data, in milliseconds.
pub const DEFAULT_FRESHNESS_MS: u64 = 10_000;
/// Default address the producers listen on.
pub const DEFAULT_PRODUCER_BIND: &str = "[::]:6363";

/// How often a running producer checks its stop flag.
const POLL: Duration = Duration::from_millis(50);

/// Options of `ndx put`: serve a file (or stdin) as a versioned, segmented object.
#[derive(Debug, Clone, clap::Args)]
pub struct PutOptions {
    /// Name prefix to serve the object under (`/prefix/v=<version>/seg=<n>`).
    #[arg(value_name = "PREFIX")]
    pub prefix: NameBuf,
    /// File to serve; `-` or absent reads standard input.
    #[arg(short, long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// UDP address to listen on (a forwarder routes the prefix to it).
    #[arg(short, long, default_value = DEFAULT_PRODUCER_BIND, value_parser = parse_udp_endpoint)]
    pub bind: SocketAddr,
    /// Connect to a local forwarder's Unix socket instead of listening on UDP, and register
    /// the prefix there (rib/register, origin app, cost 0) before serving: `unix://PATH`;
    /// given last without a value, unix:///run/nfd/nfd.sock.
    #[arg(
        long,
        value_name = "unix://PATH",
        num_args = 0..=1,
        default_missing_value = "unix://",
        value_parser = parse_unix_endpoint,
        conflicts_with = "bind"
    )]
    pub forwarder: Option<PathBuf>,
    /// Content bytes per segment.
    #[arg(short, long, default_value_t = DEFAULT_SEGMENT_SIZE)]
    pub segment_size: usize,
    /// FreshnessPeriod of each segment, in milliseconds.
    #[arg(short, long, default_value_t = DEFAULT_FRESHNESS_MS)]
    pub freshness_ms: u64,
    /// Version number (default: the current time in milliseconds since the Unix epoch).
    #[arg(long)]
    pub version: Option<u64>,
    /// Link MTU in bytes, or `auto`: the kernel's path MTU towards each peer (the route's
    /// interface MTU, lowered by any ICMP "packet too big"). Data longer than fits in one UDP
    /// datagram of that MTU is sent as NDNLPv2 fragments.
    #[arg(long, default_value_t = LinkMtu::Auto)]
    pub mtu: LinkMtu,
    /// Stop after this many seconds (default: run until killed).
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<u64>,
}

impl PutOptions {
    /// Options with every default, serving `prefix` on `bind` (content is passed separately
    /// to [`Producer::put`]; `input` is only read by [`put`]).
    pub fn new(prefix: NameBuf, bind: SocketAddr) -> Self {
        Self {
            prefix,
            input: None,
            bind,
            forwarder: None,
            segment_size: DEFAULT_SEGMENT_SIZE,
            freshness_ms: DEFAULT_FRESHNESS_MS,
            version: None,
            mtu: LinkMtu::Auto,
            duration: None,
        }
    }
}

/// Options of `ndx serve`: answer every Interest under a prefix with a Data of N bytes
/// (a traffic sink for benchmarks).
#[derive(Debug, Clone, clap::Args)]
pub struct ServeOptions {
    /// Name prefix to answer for.
    #[arg(value_name = "PREFIX")]
    pub prefix: NameBuf,
    /// UDP address to listen on.
    #[arg(short, long, default_value = DEFAULT_PRODUCER_BIND, value_parser = parse_udp_endpoint)]
    pub bind: SocketAddr,
    /// Connect to a local forwarder's Unix socket instead of listening on UDP, and register
    /// the prefix there (rib/register, origin app, cost 0) before serving: `unix://PATH`;
    /// given last without a value, unix:///run/nfd/nfd.sock.
    #[arg(
        long,
        value_name = "unix://PATH",
        num_args = 0..=1,
        default_missing_value = "unix://",
        value_parser = parse_unix_endpoint,
        conflicts_with = "bind"
    )]
    pub forwarder: Option<PathBuf>,
    /// Content bytes of each Data.
    #[arg(short = 'n', long, default_value_t = 1000)]
    pub payload_size: usize,
    /// FreshnessPeriod of each Data, in milliseconds.
    #[arg(short, long, default_value_t = DEFAULT_FRESHNESS_MS)]
    pub freshness_ms: u64,
    /// Link MTU in bytes, or `auto`: each peer's path MTU (larger Data is fragmented).
    #[arg(long, default_value_t = LinkMtu::Auto)]
    pub mtu: LinkMtu,
    /// Stop after this many seconds (default: run until killed).
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<u64>,
}

impl ServeOptions {
    /// Options with every default, answering under `prefix` on `bind`.
    pub fn new(prefix: NameBuf, bind: SocketAddr) -> Self {
        Self {
            prefix,
            bind,
            forwarder: None,
            payload_size: 1000,
            freshness_ms: DEFAULT_FRESHNESS_MS,
            mtu: LinkMtu::Auto,
            duration: None,
        }
    }
}

/// What a producer did while it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerReport {
    /// The versioned name served (`put` only).
    pub versioned_name: Option<String>,
    /// Segments of the object (`put` only).
    pub segments: u64,
    /// Content bytes of the object (`put` only).
    pub object_bytes: u64,
    /// Interests received.
    pub interests: u64,
    /// Data packets sent (each may take several fragments).
    pub data_sent: u64,
    /// Bytes of Data TLVs sent.
    pub data_bytes: u64,
    /// Of those, Interests that carried a PitToken (echoed back).
    pub pit_tokens_echoed: u64,
    /// Datagrams sent that were NDNLPv2 fragments.
    pub fragments_sent: u64,
    /// Nacks (NoRoute) sent for Interests under the prefix that nothing answers.
    pub nacks_sent: u64,
    /// Interests outside the prefix, and Data, ignored.
    pub ignored: u64,
    /// Datagrams that did not decode, or fragments that failed reassembly.
    pub malformed: u64,
    /// How long it ran.
    pub elapsed: Duration,
}

/// What answers Interests.
#[derive(Debug)]
enum Responder {
    Object(SegmentedObject),
    Synthetic { content: Vec<u8>, freshness_ms: u64 },
}

/// A producer's face: a bound UDP socket, or a connection to a forwarder's Unix socket on
/// which `prefix` is registered.
fn producer_face(
    bind_addr: SocketAddr,
    forwarder: Option<&Path>,
    mtu: LinkMtu,
    prefix: &NameBuf,
) -> Result<(Face, Endpoint), AppError> {
    let face = match forwarder {
        Some(path) => {
            let mut face = Face::connect(path)?;
            register(&mut face, prefix)?;
            face
        }
        None => Face::new(bind(bind_addr)?, mtu)?,
    };
    let local = face.local_endpoint()?;
    Ok((face, local))
}

/// A bound producer; [`Producer::run`] answers Interests until told to stop.
#[derive(Debug)]
pub struct Producer {
    face: Face,
    local: Endpoint,
    responder: Responder,
    prefix: NameBuf,
    stop_after: Option<Duration>,
    report: ProducerReport,
}

impl Producer {
    /// Binds `opts.bind` (or connects to `opts.forwarder` and registers the prefix there,
    /// returning once the forwarder answered 200) and prepares `content` as a segmented
    /// object (`opts.input` is ignored).
    pub fn put(opts: &PutOptions, content: &[u8]) -> Result<Self, AppError> {
        let version = opts.version.unwrap_or_else(timestamp_version);
        let object = SegmentedObject::new(
            &opts.prefix,
            version,
            content,
            opts.segment_size,
            opts.freshness_ms,
        )?;
        let (face, local) =
            producer_face(opts.bind, opts.forwarder.as_deref(), opts.mtu, &opts.prefix)?;
        let report = ProducerReport {
            versioned_name: Some(object.versioned.to_string()),
            segments: object.segments.len() as u64,
            object_bytes: object.content_len,
            ..ProducerReport::default()
        };
        Ok(Self {
            face,
            local,
            responder: Responder::Object(object),
            prefix: opts.prefix.clone(),
            stop_after: opts.duration.map(Duration::from_secs),
            report,
        })
    }

    /// Binds `opts.bind` (or connects to `opts.forwarder` and registers the prefix) for
    /// `serve` mode.
    pub fn serve(opts: &ServeOptions) -> Result<Self, AppError> {
        let (face, local) =
            producer_face(opts.bind, opts.forwarder.as_deref(), opts.mtu, &opts.prefix)?;
        let content = (0..opts.payload_size).map(|i| (i % 251) as u8).collect();
        Ok(Self {
            face,
            local,
            responder: Responder::Synthetic {
                content,
                freshness_ms: opts.freshness_ms,
            },
            prefix: opts.prefix.clone(),
            stop_after: opts.duration.map(Duration::from_secs),
            report: ProducerReport::default(),
        })
    }

    /// The UDP address the producer listens on (an error for a producer attached to a
    /// forwarder's Unix socket).
    pub fn local_addr(&self) -> Result<SocketAddr, AppError> {
        match &self.local {
            Endpoint::Udp(a) => Ok(*a),
            Endpoint::Unix(_) => Err(AppError::InvalidOption(format!(
                "the producer is attached to {}, not to a UDP address",
                self.local
            ))),
        }
    }

    /// Where the producer is attached: its UDP address, or the forwarder's Unix socket on
    /// which its prefix is registered.
    pub fn endpoint(&self) -> &Endpoint {
        &self.local
    }

    /// The versioned name served (`/prefix/v=<version>`), in `put` mode.
    pub fn versioned_name(&self) -> Option<&NameBuf> {
        match &self.responder {
            Responder::Object(o) => Some(&o.versioned),
            Responder::Synthetic { .. } => None,
        }
    }

    /// Answers Interests until `stop` is set or the configured duration has passed; returns
    /// what it did.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<ProducerReport, AppError> {
        let start = Instant::now();
        while !stop.load(Ordering::Relaxed) && self.stop_after.is_none_or(|d| start.elapsed() < d) {
            if let Some(pkt) = self.face.recv(POLL)? {
                self.handle(pkt.from, &pkt.packet, pkt.lp.pit_token())?;
            }
        }
        self.report.elapsed = start.elapsed();
        self.report.fragments_sent = self.face.counters.fragments_sent;
        self.report.malformed = self.face.counters.malformed;
        Ok(self.report.clone())
    }

    fn handle(
        &mut self,
        from: Peer,
        packet: &[u8],
        pit_token: Option<&[u8]>,
    ) -> Result<(), AppError> {
        let interest = match Packet::decode(packet) {
            Ok(Packet::Interest(i)) => i,
            Ok(_) => {
                self.report.ignored += 1;
                return Ok(());
            }
            Err(_) => {
                self.report.malformed += 1;
                return Ok(());
            }
        };
        self.report.interests += 1;
        let name = interest.name();
        if !self.prefix.as_name().is_prefix_of(&name) {
            self.report.ignored += 1;
            return Ok(());
        }
        let synthetic;
        let data: &[u8] = match &self.responder {
            Responder::Object(o) => match o.lookup(&name, interest.can_be_prefix()) {
                Lookup::Segment(i) => &o.segments[i],
                Lookup::Metadata => &o.metadata,
                Lookup::NotFound => return self.nack(from, &interest, pit_token),
            },
            Responder::Synthetic {
                content,
                freshness_ms,
            } => {
                let mut d = DataRepr::new(name.to_buf(), content.clone());
                d.freshness_ms = Some(*freshness_ms);
                synthetic = d.to_vec()?;
                &synthetic
            }
        };
        self.face.send(from, data, pit_token, None)?;
        self.report.data_sent += 1;
        self.report.data_bytes += data.len() as u64;
        self.report.pit_tokens_echoed += u64::from(pit_token.is_some());
        Ok(())
    }

    fn nack(
        &mut self,
        to: Peer,
        interest: &Interest<'_>,
        pit_token: Option<&[u8]>,
    ) -> Result<(), AppError> {
        self.face
            .send(to, interest.wire(), pit_token, Some(NackReason::NoRoute))?;
        self.report.nacks_sent += 1;
        Ok(())
    }
}

/// `ndx put`: reads `opts.input` (or stdin), then serves it until the configured duration
/// has passed (or forever). Prints nothing; the caller prints the report.
pub fn put(opts: &PutOptions) -> Result<ProducerReport, AppError> {
    let content = read_input(opts.input.as_deref())?;
    let mut p = Producer::put(opts, &content)?;
    p.run(&AtomicBool::new(false))
}

/// `ndx serve`: answers Interests under the prefix until the configured duration has passed
/// (or forever).
pub fn serve(opts: &ServeOptions) -> Result<ProducerReport, AppError> {
    Producer::serve(opts)?.run(&AtomicBool::new(false))
}

/// Reads a whole file, or standard input for `None` or `-` (what [`put`] serves).
pub fn read_input(path: Option<&std::path::Path>) -> Result<Vec<u8>, AppError> {
    match path {
        Some(p) if p.as_os_str() != "-" => std::fs::read(p).map_err(|source| AppError::ReadInput {
            path: p.to_path_buf(),
            source,
        }),
        _ => {
            let mut v = Vec::new();
            std::io::stdin()
                .read_to_end(&mut v)
                .map_err(|source| AppError::ReadInput {
                    path: "-".into(),
                    source,
                })?;
            Ok(v)
        }
    }
}
