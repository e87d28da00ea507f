//! The consumer: version discovery, then a windowed, AIMD-controlled fetch of every segment,
//! with RFC 6298 retransmission timers, verification and in-order output.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{IsTerminal, Write};
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use ndx_codec::{Data, InterestRepr, NackReason, NameBuf, Packet, ReassembledHeaders};
use sha2::{Digest, Sha256};

use crate::addr::Endpoint;
use crate::error::{AppError, VerifyError};
use crate::face::{Face, Peer};
use crate::get::{Discovery, GetOptions, GetReport};
use crate::progress::Progress;
use crate::rtt::{RttEstimator, RttStatsBuilder};
use crate::window::Aimd;
use ndx_codec::rng::Rng;

mod discovery;

/// Most segments an object may have (the consumer keeps per-segment state).
pub const MAX_SEGMENTS: u64 = 1 << 24;
/// Longest a receive waits before timers are checked again.
const TICK: Duration = Duration::from_millis(20);
/// Longest wait before retrying an Interest answered with Nack Congestion.
const MAX_CONGESTION_BACKOFF: Duration = Duration::from_secs(10);

/// The wait before retry `n` (from 0) of an Interest answered with Nack Congestion: 2^n ms,
/// at most 10 s, as ndncatchunks' fetcher waits.
fn congestion_backoff(n: u32) -> Duration {
    Duration::from_millis(1u64.checked_shl(n).unwrap_or(u64::MAX)).min(MAX_CONGESTION_BACKOFF)
}

/// The error for an Interest (`name`, sent `attempts` times to `target`) whose last answer
/// was a Nack with `reason` that ends the fetch.
fn nack_error(name: String, reason: NackReason, attempts: u32, target: Endpoint) -> AppError {
    match reason {
        NackReason::NoRoute => AppError::NoRoute { name, target },
        NackReason::Congestion => AppError::Congestion {
            name,
            attempts,
            target,
        },
        reason => AppError::Nack {
            name,
            reason,
            target,
        },
    }
}

/// A bound consumer.
#[derive(Debug)]
pub struct Consumer {
    face: Face,
    peer: Peer,
    opts: GetOptions,
    rng: Rng,
}

/// One segment's state.
#[derive(Debug, Clone, Copy)]
enum Seg {
    /// To be sent; `retries` transmissions were lost already.
    Pending {
        retries: u32,
    },
    /// Sent as transmission `tx` at `sent` with `nonce`.
    InFlight {
        tx: u64,
        sent: Instant,
        nonce: u32,
        retries: u32,
    },
    Done,
}

/// The first segment, from discovery.
#[derive(Debug)]
struct Discovered {
    how: Discovery,
    versioned: NameBuf,
    last_seg: u64,
    seg: u64,
    content: Vec<u8>,
}

/// Counters of one fetch.
#[derive(Debug, Default)]
struct Counters {
    retransmissions: u64,
    timeouts: u64,
    nacks: u64,
    marks: u64,
}

impl Consumer {
    /// Binds `opts.bind` (or an ephemeral port of the target's family), or connects to the
    /// target's Unix socket.
    pub fn new(opts: &GetOptions) -> Result<Self, AppError> {
        Self::check(opts)?;
        let (face, peer) = Face::open(&opts.target, opts.bind, opts.mtu)?;
        Ok(Self::with_face(face, peer, opts))
    }

    /// Uses an already-bound socket (e.g. one a peer already sends to); the target must be a
    /// UDP address.
    pub fn with_socket(sock: UdpSocket, opts: &GetOptions) -> Result<Self, AppError> {
        Self::check(opts)?;
        let Endpoint::Udp(target) = opts.target else {
            return Err(AppError::InvalidOption(format!(
                "a UDP socket cannot reach {}",
                opts.target
            )));
        };
        Ok(Self::with_face(
            Face::new(sock, opts.mtu)?,
            Peer::Udp(target),
            opts,
        ))
    }

    fn check(opts: &GetOptions) -> Result<(), AppError> {
        if opts.init_cwnd == 0 || opts.max_cwnd == 0 {
            return Err(AppError::InvalidOption(
                "the congestion window must be at least 1".into(),
            ));
        }
        Ok(())
    }

    fn with_face(face: Face, peer: Peer, opts: &GetOptions) -> Self {
        Self {
            face,
            peer,
            opts: opts.clone(),
            rng: Rng::from_entropy(),
        }
    }

    /// The local UDP address Interests are sent from (an error on a Unix socket).
    pub fn local_addr(&self) -> Result<SocketAddr, AppError> {
        match self.face.local_endpoint()? {
            Endpoint::Udp(a) => Ok(a),
            other => Err(AppError::InvalidOption(format!(
                "the consumer is attached to {other}, not to a UDP address"
            ))),
        }
    }

    /// Where Interests are sent from: a UDP address, or the forwarder's Unix socket.
    pub fn local_endpoint(&self) -> Result<Endpoint, AppError> {
        self.face.local_endpoint()
    }

    /// Discovers the version, fetches every segment and writes the object to `out` in order.
    pub fn fetch(&mut self, out: &mut dyn Write) -> Result<GetReport, AppError> {
        let start = Instant::now();
        let o = &self.opts;
        let mut f = Fetch {
            rtt: RttEstimator::new(
                Duration::from_millis(o.initial_rto_ms),
                Duration::from_millis(o.min_rto_ms),
                Duration::from_millis(o.max_rto_ms),
            ),
            window: Aimd::new(f64::from(o.init_cwnd), f64::from(o.max_cwnd)),
            stats: RttStatsBuilder::default(),
            counters: Counters::default(),
            consumer: self,
        };
        let first = f.discover()?;
        let mut progress =
            Progress::new(!f.consumer.opts.no_progress && std::io::stderr().is_terminal());
        let report = f.fetch_all(first, out, &mut progress, start)?;
        Ok(report)
    }

    fn send_interest(
        &mut self,
        name: &NameBuf,
        can_be_prefix: bool,
        must_be_fresh: bool,
    ) -> Result<u32, AppError> {
        let nonce = self.rng.next_u32();
        let mut i = InterestRepr::new(name.clone());
        i.can_be_prefix = can_be_prefix;
        i.must_be_fresh = must_be_fresh;
        i.nonce = Some(nonce);
        i.lifetime_ms = Some(self.opts.lifetime_ms);
        let wire = i.to_vec()?;
        self.face.send(self.peer, &wire, None, None)?;
        Ok(nonce)
    }

    /// Receives one packet from the target, if any within `wait`.
    fn recv(&mut self, wait: Duration) -> Result<Option<(Vec<u8>, ReassembledHeaders)>, AppError> {
        let Some(p) = self.face.recv(wait)? else {
            return Ok(None);
        };
        if !p.from.same(self.peer) {
            return Ok(None);
        }
        Ok(Some((p.packet, p.lp)))
    }
}

/// The state of one fetch.
struct Fetch<'c> {
    consumer: &'c mut Consumer,
    rtt: RttEstimator,
    window: Aimd,
    stats: RttStatsBuilder,
    counters: Counters,
}

/// What a received packet is to the fetch.
enum Reply<'p> {
    Data(Data<'p>),
    Nack {
        name: NameBuf,
        nonce: Option<u32>,
        reason: NackReason,
    },
    Other,
}

fn classify<'p>(packet: &'p [u8], lp: &ReassembledHeaders) -> Reply<'p> {
    match Packet::decode(packet) {
        Ok(Packet::Data(d)) => Reply::Data(d),
        Ok(Packet::Interest(i)) if lp.nack.is_some() => Reply::Nack {
            name: i.name().to_buf(),
            nonce: i.nonce(),
            reason: lp.nack.unwrap_or(NackReason::Unspecified),
        },
        _ => Reply::Other,
    }
}

impl Fetch<'_> {
    fn verify_err(name: &Data<'_>, reason: VerifyError) -> AppError {
        AppError::Verify {
            name: name.name().to_string(),
            reason,
        }
    }

    /// Checks the DigestSha256 signature (unless `--no-verify`).
    fn check_signature(&self, d: &Data<'_>) -> Result<(), AppError> {
        if !self.consumer.opts.no_verify {
            if d.signature_type() != ndx_codec::signature_type::DIGEST_SHA256 {
                return Err(Self::verify_err(
                    d,
                    VerifyError::UnsupportedSignature(d.signature_type()),
                ));
            }
            if !d.digest_signature_ok() {
                return Err(Self::verify_err(d, VerifyError::BadDigest));
            }
        }
        Ok(())
    }

    /// Checks the signature and returns (segment number, FinalBlockId segment if present).
    fn check(&self, d: &Data<'_>) -> Result<(u64, Option<u64>), AppError> {
        self.check_signature(d)?;
        let seg = d
            .name()
            .last()
            .and_then(|c| c.as_segment())
            .ok_or_else(|| Self::verify_err(d, VerifyError::NotSegmented))?;
        let fbi = match d.final_block_id() {
            None => None,
            Some(c) => Some(c.as_segment().ok_or_else(|| {
                Self::verify_err(d, VerifyError::FinalBlockIdNotSegment(c.to_string()))
            })?),
        };
        Ok((seg, fbi))
    }

    fn fetch_all(
        &mut self,
        first: Discovered,
        out: &mut dyn Write,
        progress: &mut Progress,
        start: Instant,
    ) -> Result<GetReport, AppError> {
        let total = first
            .last_seg
            .checked_add(1)
            .filter(|&t| t <= MAX_SEGMENTS)
            .ok_or_else(|| AppError::Verify {
                name: first.versioned.to_string(),
                reason: VerifyError::TooManySegments {
                    last: first.last_seg,
                    max: MAX_SEGMENTS,
                },
            })?;
        let versioned = first.versioned.clone();
        let vbytes = versioned.as_name().as_bytes().to_vec();
        let vlen = versioned.len();
        let mut segs = vec![Seg::Pending { retries: 0 }; total as usize];
        let mut contents: Vec<Option<Vec<u8>>> = vec![None; total as usize];
        let mut done = 0u64;
        let mut bytes = 0u64;
        let mut next_write = 0usize;
        let mut hasher = Sha256::new();
        let write = |contents: &mut Vec<Option<Vec<u8>>>,
                     next_write: &mut usize,
                     hasher: &mut Sha256,
                     out: &mut dyn Write|
         -> Result<(), AppError> {
            while let Some(c) = contents.get_mut(*next_write).and_then(Option::take) {
                hasher.update(&c);
                out.write_all(&c)
                    .map_err(|source| AppError::WriteOutput { source })?;
                *next_write += 1;
            }
            Ok(())
        };
        segs[first.seg as usize] = Seg::Done;
        bytes += first.content.len() as u64;
        contents[first.seg as usize] = Some(first.content);
        done += 1;
        write(&mut contents, &mut next_write, &mut hasher, out)?;

        let mut retx: VecDeque<u64> = VecDeque::new();
        // Segments Nacked for congestion, each waiting for its backoff before `retx`.
        let mut delayed: BinaryHeap<Reverse<(Instant, u64)>> = BinaryHeap::new();
        let mut next_new = 0u64;
        let mut timers: BinaryHeap<Reverse<(Instant, u64, u64)>> = BinaryHeap::new();
        let mut in_flight = 0usize;
        let mut tx_counter = 0u64;
        let max_retries = self.consumer.opts.max_retries;
        let seg_name = |seg: u64| {
            let mut n = versioned.clone();
            n.push_segment(seg);
            n
        };

        while done < total {
            let now = Instant::now();
            // Expired retransmission timers.
            while let Some(&Reverse((deadline, tx, seg))) = timers.peek() {
                if deadline > now {
                    break;
                }
                timers.pop();
                if let Seg::InFlight { tx: t, retries, .. } = segs[seg as usize]
                    && t == tx
                {
                    self.counters.timeouts += 1;
                    in_flight -= 1;
                    // One RTO backoff per congestion event, as ndncatchunks: the timers
                    // of one window expire together.
                    if self.window.on_congestion(tx, tx_counter) {
                        self.rtt.backoff();
                    }
                    if retries >= max_retries {
                        return Err(AppError::Timeout {
                            name: seg_name(seg).to_string(),
                            attempts: retries + 1,
                            target: self.consumer.opts.target.clone(),
                        });
                    }
                    segs[seg as usize] = Seg::Pending {
                        retries: retries + 1,
                    };
                    retx.push_back(seg);
                }
            }
            while let Some(&Reverse((at, seg))) = delayed.peek() {
                if at > now {
                    break;
                }
                delayed.pop();
                retx.push_back(seg);
            }
            // Fill the window: retransmissions first, then new segments in order.
            while in_flight < self.window.window() {
                let seg = if let Some(s) = retx.pop_front() {
                    s
                } else if next_new < total {
                    next_new += 1;
                    next_new - 1
                } else {
                    break;
                };
                let Seg::Pending { retries } = segs[seg as usize] else {
                    continue;
                };
                tx_counter += 1;
                let nonce = self.consumer.send_interest(&seg_name(seg), false, false)?;
                if retries > 0 {
                    self.counters.retransmissions += 1;
                }
                segs[seg as usize] = Seg::InFlight {
                    tx: tx_counter,
                    sent: now,
                    nonce,
                    retries,
                };
                in_flight += 1;
                timers.push(Reverse((now + self.rtt.rto(), tx_counter, seg)));
            }
            let wait = timers
                .peek()
                .map(|Reverse((d, _, _))| *d)
                .into_iter()
                .chain(delayed.peek().map(|Reverse((d, _))| *d))
                .min()
                .map_or(TICK, |d| d.saturating_duration_since(now))
                .min(TICK);
            let Some((packet, lp)) = self.consumer.recv(wait)? else {
                continue;
            };
            match classify(&packet, &lp) {
                Reply::Data(d) => {
                    let n = d.name();
                    if n.len() != vlen + 1 || n.prefix(vlen).as_bytes() != vbytes {
                        continue;
                    }
                    let Some(seg) = n.last().and_then(|c| c.as_segment()) else {
                        continue;
                    };
                    let Some(state) = segs.get(seg as usize).copied() else {
                        continue;
                    };
                    if matches!(state, Seg::Done) {
                        continue;
                    }
                    let (_, fbi) = self.check(&d)?;
                    if let Some(f) = fbi
                        && f != first.last_seg
                    {
                        return Err(Self::verify_err(
                            &d,
                            VerifyError::FinalBlockIdChanged {
                                first: first.last_seg,
                                now: f,
                            },
                        ));
                    }
                    if let Seg::InFlight {
                        tx, sent, retries, ..
                    } = state
                    {
                        in_flight -= 1;
                        if retries == 0 {
                            let rtt = sent.elapsed();
                            self.rtt.sample(rtt);
                            self.stats.add(rtt);
                        }
                        if lp.congestion_mark.is_some_and(|m| m > 0) {
                            self.counters.marks += 1;
                            let _ = self.window.on_congestion(tx, tx_counter);
                        } else {
                            self.window.on_data();
                        }
                    }
                    segs[seg as usize] = Seg::Done;
                    bytes += d.content().len() as u64;
                    contents[seg as usize] = Some(d.content().to_vec());
                    done += 1;
                    write(&mut contents, &mut next_write, &mut hasher, out)?;
                    progress.update(done, total, bytes);
                }
                Reply::Nack {
                    name,
                    nonce: nack_nonce,
                    reason,
                } => {
                    let n = name.as_name();
                    if n.len() != vlen + 1 || n.prefix(vlen).as_bytes() != vbytes {
                        continue;
                    }
                    let Some(seg) = n.last().and_then(|c| c.as_segment()) else {
                        continue;
                    };
                    let Some(Seg::InFlight {
                        tx, nonce, retries, ..
                    }) = segs.get(seg as usize).copied()
                    else {
                        continue;
                    };
                    if nack_nonce != Some(nonce) {
                        continue;
                    }
                    self.counters.nacks += 1;
                    in_flight -= 1;
                    let target = self.consumer.opts.target.clone();
                    // Congestion: a window decrease and a retry after a growing backoff;
                    // Duplicate: a retry at once (with a new nonce, as every transmission);
                    // both at most `max_retries` times. NoRoute (or no reason): the end.
                    match reason {
                        NackReason::Congestion | NackReason::Duplicate if retries < max_retries => {
                            segs[seg as usize] = Seg::Pending {
                                retries: retries + 1,
                            };
                            if reason == NackReason::Congestion {
                                let _ = self.window.on_congestion(tx, tx_counter);
                                let at = Instant::now() + congestion_backoff(retries);
                                delayed.push(Reverse((at, seg)));
                            } else {
                                retx.push_back(seg);
                            }
                        }
                        _ => return Err(nack_error(name.to_string(), reason, retries + 1, target)),
                    }
                }
                Reply::Other => {}
            }
        }
        progress.finish(done, total, bytes);
        Ok(GetReport {
            version: versioned.as_name().last().and_then(|c| c.as_version()),
            discovery: first.how,
            name: versioned.to_string(),
            bytes,
            segments: total,
            elapsed: start.elapsed(),
            retransmissions: self.counters.retransmissions,
            timeouts: self.counters.timeouts,
            nacks: self.counters.nacks,
            congestion_marks: self.counters.marks,
            window_decreases: self.window.decreases(),
            final_cwnd: self.window.cwnd(),
            rtt: self.stats.stats(),
            sha256: hasher.finalize().into(),
        })
    }
}
