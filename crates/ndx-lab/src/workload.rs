//! Seed 000's workloads (Table 3, §3.3.3): Seq, Unif and Real, as reproducible request
//! streams over a catalogue of `contents × chunks_per_content` chunks.
//!
//! - **Seq**: every chunk of every content in order, content after content, wrapping around.
//! - **Unif**: chunks drawn uniformly from the whole catalogue.
//! - **Real**: contents start being downloaded at the epochs of a Poisson process of rate
//!   `arrival_rate`, each a content drawn from Zipf(`alpha`); a download requests the
//!   content's chunks in order, one every `1 / chunk_rate` seconds, for `chunks_per_content`
//!   chunks; the request stream interleaves the concurrent downloads by time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::str::FromStr;

use crate::rng::{Rng, Zipf};

/// Workload type (seed 000's W).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Sequential: best case.
    Seq,
    /// Uniform random chunks: worst case.
    Unif,
    /// Poisson arrivals of Zipf-popular streams.
    Real,
}

impl Kind {
    /// All three, in the paper's order.
    pub const ALL: [Kind; 3] = [Kind::Seq, Kind::Real, Kind::Unif];
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Seq => "seq",
            Kind::Unif => "unif",
            Kind::Real => "real",
        })
    }
}

/// An unknown workload name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown workload {0:?}: expected seq, unif or real")]
pub struct UnknownKind(pub String);

impl FromStr for Kind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "seq" => Ok(Kind::Seq),
            "unif" | "uniform" => Ok(Kind::Unif),
            "real" => Ok(Kind::Real),
            _ => Err(UnknownKind(s.to_owned())),
        }
    }
}

/// Workload parameters (seed 000 Table 3, right; scaled by the caller).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkloadConfig {
    /// Workload type.
    pub kind: Kind,
    /// Number of contents in the catalogue.
    pub contents: u32,
    /// Chunks per content (= the stream length of Real).
    pub chunks_per_content: u32,
    /// Streaming rate of one Real download, chunks per second (paper: 8).
    pub chunk_rate: f64,
    /// Poisson arrival rate of Real downloads per second (paper: 1).
    pub arrival_rate: f64,
    /// Zipf skew of Real (paper: 1).
    pub alpha: f64,
    /// Seed: the stream is a pure function of it.
    pub seed: u64,
}

impl Default for WorkloadConfig {
    /// Scaled defaults: 1000 contents x 100 chunks (|C| = 1e5 chunks), 8 chunks/s, 1 arrival/s,
    /// alpha = 1.
    fn default() -> Self {
        Self {
            kind: Kind::Real,
            contents: 1000,
            chunks_per_content: 100,
            chunk_rate: 8.0,
            arrival_rate: 1.0,
            alpha: 1.0,
            seed: 1,
        }
    }
}

impl WorkloadConfig {
    /// Catalogue size |C| in chunks.
    pub fn catalogue(&self) -> u64 {
        u64::from(self.contents) * u64::from(self.chunks_per_content)
    }

    /// Requests a Real workload needs before the number of concurrent downloads is stationary
    /// (one stream duration's worth of requests); 0 for the others.
    pub fn ramp_requests(&self) -> u64 {
        match self.kind {
            Kind::Real => {
                let duration = f64::from(self.chunks_per_content) / self.chunk_rate;
                (self.arrival_rate * f64::from(self.chunks_per_content) * duration).ceil() as u64
            }
            _ => 0,
        }
    }

    /// Mean number of concurrent Real downloads (`lambda * L / r`).
    pub fn concurrent_streams(&self) -> f64 {
        self.arrival_rate * f64::from(self.chunks_per_content) / self.chunk_rate
    }

    /// The request stream.
    pub fn requests(&self) -> Requests {
        Requests::new(*self)
    }
}

/// One Interest of the workload: chunk `chunk` of content `content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Request {
    /// Content index (Zipf rank for Real: 0 is the most popular).
    pub content: u32,
    /// Chunk (segment) number inside the content.
    pub chunk: u32,
}

impl Request {
    /// Index of the chunk in the catalogue.
    pub fn global(&self, chunks_per_content: u32) -> u64 {
        u64::from(self.content) * u64::from(chunks_per_content) + u64::from(self.chunk)
    }
}

#[derive(Debug, Clone, Copy)]
struct Stream {
    content: u32,
    next_chunk: u32,
}

/// The endless, reproducible request iterator of a workload.
#[derive(Debug, Clone)]
pub struct Requests {
    cfg: WorkloadConfig,
    rng: Rng,
    zipf: Option<Zipf>,
    seq_pos: u64,
    /// Real: (due time in ns, tie-break id) of each active stream.
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    streams: Vec<Option<Stream>>,
    free: Vec<usize>,
    next_arrival: f64,
    ids: u64,
}

impl Requests {
    fn new(cfg: WorkloadConfig) -> Self {
        let mut rng = Rng::new(cfg.seed);
        let zipf = (cfg.kind == Kind::Real).then(|| Zipf::new(cfg.contents as usize, cfg.alpha));
        let next_arrival = if cfg.kind == Kind::Real {
            rng.exp(cfg.arrival_rate)
        } else {
            0.0
        };
        Self {
            cfg,
            rng,
            zipf,
            seq_pos: 0,
            heap: BinaryHeap::new(),
            streams: Vec::new(),
            free: Vec::new(),
            next_arrival,
            ids: 0,
        }
    }

    fn push(&mut self, due_ns: u64, slot: usize) {
        self.ids += 1;
        // The low 20 bits carry the slot, the high bits the arrival order (FIFO on ties).
        self.heap
            .push(Reverse((due_ns, (self.ids << 20) | slot as u64)));
    }

    fn next_real(&mut self) -> Request {
        let period_ns = (1e9 / self.cfg.chunk_rate) as u64;
        loop {
            let arrival_ns = (self.next_arrival * 1e9) as u64;
            let stream_due = self.heap.peek().map(|Reverse((t, _))| *t);
            if stream_due.is_none_or(|t| arrival_ns < t) {
                // A new download starts now and requests its first chunk at once.
                let zipf = self.zipf.as_ref().expect("real workload has a Zipf");
                let content = zipf.sample(&mut self.rng) as u32;
                self.next_arrival += self.rng.exp(self.cfg.arrival_rate);
                if self.cfg.chunks_per_content > 1 {
                    let s = Stream {
                        content,
                        next_chunk: 1,
                    };
                    let slot = match self.free.pop() {
                        Some(i) => {
                            self.streams[i] = Some(s);
                            i
                        }
                        None => {
                            self.streams.push(Some(s));
                            self.streams.len() - 1
                        }
                    };
                    debug_assert!(slot < (1 << 20));
                    self.push(arrival_ns + period_ns, slot);
                }
                return Request { content, chunk: 0 };
            }
            let Reverse((due, tag)) = self.heap.pop().expect("peeked");
            let slot = (tag & ((1 << 20) - 1)) as usize;
            let Some(s) = self.streams[slot].as_mut() else {
                continue;
            };
            let req = Request {
                content: s.content,
                chunk: s.next_chunk,
            };
            s.next_chunk += 1;
            if s.next_chunk >= self.cfg.chunks_per_content {
                self.streams[slot] = None;
                self.free.push(slot);
            } else {
                self.push(due + period_ns, slot);
            }
            return req;
        }
    }
}

impl Iterator for Requests {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        let l = u64::from(self.cfg.chunks_per_content.max(1));
        let c = self.cfg.catalogue().max(1);
        Some(match self.cfg.kind {
            Kind::Seq => {
                let g = self.seq_pos % c;
                self.seq_pos += 1;
                Request {
                    content: (g / l) as u32,
                    chunk: (g % l) as u32,
                }
            }
            Kind::Unif => {
                let g = self.rng.below(c);
                Request {
                    content: (g / l) as u32,
                    chunk: (g % l) as u32,
                }
            }
            Kind::Real => self.next_real(),
        })
    }
}
