//! `ndx gen`: a traffic generator. Keeps a window of Interests in flight for unique names
//! (`/prefix/<n>`, each a forwarder miss) or for a fixed set of names (`/prefix/<n mod k>`,
//! content store hits after the first round), and counts the Data that come back per second.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ndx_codec::{InterestRepr, NameBuf, Packet};

use crate::addr::{Endpoint, parse_endpoint, parse_udp_endpoint};
use crate::error::AppError;
use crate::face::Face;
use crate::get::DEFAULT_TARGET;
use crate::mtu::LinkMtu;
use crate::rtt::{RttStats, RttStatsBuilder};
use ndx_codec::rng::Rng;

/// Options of `ndx gen`.
#[derive(Debug, Clone, clap::Args)]
pub struct GenOptions {
    /// Name prefix; Interests are named `/prefix/<n>` (n in decimal).
    #[arg(value_name = "PREFIX")]
    pub prefix: NameBuf,
    /// Forwarder or producer to send Interests to (UDP forms as `get`'s, or
    /// `unix:///run/nfd/nfd.sock`).
    #[arg(short, long, default_value = DEFAULT_TARGET, value_parser = parse_endpoint)]
    pub target: Endpoint,
    /// Local UDP address to send from (unused with a Unix socket).
    #[arg(long, value_parser = parse_udp_endpoint)]
    pub bind: Option<SocketAddr>,
    /// Interests in flight at once.
    #[arg(short, long, default_value_t = 64)]
    pub window: usize,
    /// How long to run, in seconds.
    #[arg(short, long, default_value_t = 10)]
    pub duration: u64,
    /// Stop after sending this many Interests.
    #[arg(short = 'c', long)]
    pub count: Option<u64>,
    /// Cycle through this many names instead of unique ones (content store hits).
    #[arg(long, value_name = "K")]
    pub distinct: Option<u64>,
    /// InterestLifetime, in milliseconds; an unanswered Interest frees its window slot then.
    #[arg(long, default_value_t = 1000)]
    pub lifetime_ms: u64,
    /// Set MustBeFresh on the Interests.
    #[arg(long)]
    pub must_be_fresh: bool,
    /// Link MTU in bytes, or `auto`: the path MTU towards the target.
    #[arg(long, default_value_t = LinkMtu::Auto)]
    pub mtu: LinkMtu,
}

impl GenOptions {
    /// Options with every default, for `prefix` through `target` (a UDP address or an
    /// [`Endpoint`]).
    pub fn new(prefix: NameBuf, target: impl Into<Endpoint>) -> Self {
        Self {
            prefix,
            target: target.into(),
            bind: None,
            window: 64,
            duration: 10,
            count: None,
            distinct: None,
            lifetime_ms: 1000,
            must_be_fresh: false,
            mtu: LinkMtu::Auto,
        }
    }
}

/// What a generator run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenReport {
    /// Interests sent.
    pub sent: u64,
    /// Data received.
    pub data: u64,
    /// Interests answered by those Data (several when the same name was in flight twice).
    pub satisfied: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Interests that got nothing within their lifetime.
    pub timeouts: u64,
    /// How long it ran.
    pub elapsed: Duration,
    /// Data received in each second of the run.
    pub data_per_second: Vec<u64>,
    /// Interest-to-Data round-trip times.
    pub rtt: RttStats,
}

impl GenReport {
    /// Average Data per second over the run.
    pub fn data_rate(&self) -> f64 {
        self.data as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl std::fmt::Display for GenReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "Sent {} Interests in {:.3} s: {} Data ({} Interests satisfied), {} Nacks, {} timeouts",
            self.sent,
            self.elapsed.as_secs_f64(),
            self.data,
            self.satisfied,
            self.nacks,
            self.timeouts
        )?;
        writeln!(
            f,
            "Data/s: {:.0} average, per second {:?}",
            self.data_rate(),
            self.data_per_second
        )?;
        write!(
            f,
            "RTT min/avg/max = {:.3}/{:.3}/{:.3} ms",
            self.rtt.min.as_secs_f64() * 1e3,
            self.rtt.avg.as_secs_f64() * 1e3,
            self.rtt.max.as_secs_f64() * 1e3
        )
    }
}

/// Runs the generator until the duration has passed or `count` Interests were sent and
/// answered (or timed out).
pub fn generate(opts: &GenOptions) -> Result<GenReport, AppError> {
    if opts.window == 0 {
        return Err(AppError::InvalidOption(
            "the window must be at least 1".into(),
        ));
    }
    if opts.distinct == Some(0) {
        return Err(AppError::InvalidOption(
            "--distinct must be at least 1".into(),
        ));
    }
    let (mut face, peer) = Face::open(&opts.target, opts.bind, opts.mtu)?;
    let mut rng = Rng::from_entropy();
    let lifetime = Duration::from_millis(opts.lifetime_ms);
    let start = Instant::now();
    let end = start + Duration::from_secs(opts.duration);
    let mut report = GenReport::default();
    let mut stats = RttStatsBuilder::default();
    // Interest id -> (sent, name bytes); name bytes -> ids in flight; FIFO of expiry times.
    let mut in_flight: HashMap<u64, (Instant, Vec<u8>)> = HashMap::new();
    let mut by_name: HashMap<Vec<u8>, Vec<u64>> = HashMap::new();
    let mut expiry: VecDeque<(Instant, u64)> = VecDeque::new();
    let mut seq = 0u64;
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        while let Some(&(deadline, id)) = expiry.front() {
            if deadline > now {
                break;
            }
            expiry.pop_front();
            if let Some((_, key)) = in_flight.remove(&id) {
                report.timeouts += 1;
                if let Some(ids) = by_name.get_mut(&key) {
                    ids.retain(|&i| i != id);
                    if ids.is_empty() {
                        by_name.remove(&key);
                    }
                }
            }
        }
        let may_send = opts.count.is_none_or(|c| report.sent < c);
        if !may_send && in_flight.is_empty() {
            break;
        }
        while may_send
            && in_flight.len() < opts.window
            && opts.count.is_none_or(|c| report.sent < c)
        {
            let n = opts.distinct.map_or(seq, |k| seq % k);
            let mut name = opts.prefix.clone();
            name.push_generic(n.to_string().as_bytes());
            let mut i = InterestRepr::new(name);
            i.must_be_fresh = opts.must_be_fresh;
            i.nonce = Some(rng.next_u32());
            i.lifetime_ms = Some(opts.lifetime_ms);
            face.send(peer, &i.to_vec()?, None, None)?;
            let key = i.name.as_name().as_bytes().to_vec();
            in_flight.insert(seq, (now, key.clone()));
            by_name.entry(key).or_default().push(seq);
            expiry.push_back((now + lifetime, seq));
            seq += 1;
            report.sent += 1;
        }
        let wait = expiry
            .front()
            .map_or(Duration::from_millis(10), |(d, _)| {
                d.saturating_duration_since(now)
            })
            .min(Duration::from_millis(10))
            .min(end.saturating_duration_since(now));
        let Some(pkt) = face.recv(wait)? else {
            continue;
        };
        match Packet::decode(&pkt.packet) {
            Ok(Packet::Data(d)) => {
                let key = d.name().as_bytes();
                let Some(ids) = by_name.remove(key) else {
                    continue;
                };
                report.data += 1;
                let second = start.elapsed().as_secs() as usize;
                if report.data_per_second.len() <= second {
                    report.data_per_second.resize(second + 1, 0);
                }
                report.data_per_second[second] += 1;
                for id in ids {
                    if let Some((sent, _)) = in_flight.remove(&id) {
                        report.satisfied += 1;
                        stats.add(sent.elapsed());
                    }
                }
            }
            Ok(Packet::Interest(i)) if pkt.lp.nack.is_some() => {
                let key = i.name().as_bytes().to_vec();
                let Some(ids) = by_name.get_mut(&key) else {
                    continue;
                };
                report.nacks += 1;
                if !ids.is_empty() {
                    let id = ids.remove(0);
                    in_flight.remove(&id);
                }
                if ids.is_empty() {
                    by_name.remove(&key);
                }
            }
            _ => {}
        }
    }
    report.elapsed = start.elapsed();
    report.rtt = stats.stats();
    Ok(report)
}
