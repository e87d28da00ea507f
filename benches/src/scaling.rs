//! Multi-shard scaling of the forwarding engine (issue 37, part 4): S shards
//! (`ndx_core::Shard`), each on its own pinned thread, run worst-case exchanges as
//! `examples/exchange.rs` does (CS miss, PIT insert, FIB LPM; Data echoing the PIT token),
//! and a configurable share of each shard's Data arrives at another shard, which hands it to
//! its owner as the router's workers do.
//!
//! What is modelled, and from where:
//! - **One FIB for all shards** (`runtime.rs` gives every shard a clone of one `FibReader`);
//!   [`Fixture::new`] with `shared_fib = false` gives each shard its own copy instead, to
//!   separate the shared-FIB effect from the rest of the shared cache.
//! - **The hand-off** (`worker.rs`, `Worker::steer` and `Worker::on_exchanged`): the shard that
//!   receives a Data reads who owns it (the XDP program's metadata names the shard in the PIT
//!   token; here the token itself is read) and pushes the frame's handle into that shard's
//!   ring, an [`ndx_afxdp::Exchange`] of capacity [`RING`] (the router's own type and size;
//!   only the handle moves, the bytes stay where they were received). The owner reads the
//!   frame in place, processes it and gives the handle back; the receiver reaps it and
//!   recycles the frame. [`Handoff::Burst`] drains the rings into bursts for
//!   `Shard::process_burst_lent`, reads their sends once and gives the frames back in order,
//!   as `on_exchanged` does; [`Handoff::Frame`] processes each handed-over frame on its own
//!   with `Shard::process`, as the worker did before (the reference).
//! - **The wire**: which shard a Data arrives at is decided per exchange (a share of
//!   `cross_percent`, spread evenly; default half, as a uniform RSS hash over two queues
//!   gives). Such a Data is announced to the receiving shard over a second ring (index and
//!   token, untimed), which copies it into one of its own frames (untimed: the kernel's copy
//!   into the UMEM, done on the receiving side), so the owner reads bytes another core wrote.
//!
//! Time: each shard thread measures the time it spends in the engine (the `Shard` calls,
//! steering, and the hand-off rings: push, drain, give back, reap), as `exchange.rs` times
//! only the `Shard` calls; the copies that stand for the kernel and the producer are not
//! counted. The aggregate rate is the sum over shards of each shard's exchanges divided by
//! its engine time; the wall-clock rate (everything, harness included) is reported as well.

use std::collections::VecDeque;
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ndx_afxdp::{Exchange, ExchangeReceiver, ExchangeSender};
use ndx_codec::{LpPacket, NameBuf};
use ndx_core::{
    Actions, CsConfig, FaceId, FaceInfo, Fib, FibReader, HashKey, Lent, NextHop, PIT_TOKEN_LEN,
    Shard, ShardConfig, token_shard,
};

/// Frames in flight per hand-off ring, as the router's `Exchange::new(4096)`.
pub const RING: usize = 4096;

/// How long a shard may go without progress (its own or handing frames over) before the
/// pass is declared stuck.
const STALL: Duration = Duration::from_secs(60);

/// Bytes per receive frame.
const FRAME: usize = 2048;

/// The CS's slots per shard (each exchange evicts once it is full), as in `exchange.rs`.
const CS_SLOTS: usize = 1 << 12;

/// The face the Interests arrive on (and the Data go down to).
const DOWN: FaceId = FaceId(1);
/// The face the Interests go up to (and the Data arrive on).
const UP: FaceId = FaceId(2);

/// How the owner processes the Data handed to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handoff {
    /// One frame at a time with `Shard::process`, as the router's worker did before it
    /// batched the hand-off (the reference).
    Frame,
    /// Drained into bursts for `Shard::process_burst_lent` (each Data sent from its frame),
    /// as the router's `Worker::on_exchanged` does.
    Burst,
    /// As [`Burst`](Self::Burst), but handed-over Data join the burst of the shard's own
    /// Data, so both go through ONE pipeline burst (hoping it overlaps more misses than two
    /// half bursts): what a turn drains is held for the next turn's own burst, unless a
    /// whole burst waits or it was already held a turn (then it runs alone); the own burst
    /// also drains more while it has room. A merged burst holds at most a burst of our own
    /// and a burst less one held over. (An experiment: it bought nothing measurable, and
    /// the router's worker runs its own and handed-over frames in separate bursts.)
    Merged,
}

impl std::str::FromStr for Handoff {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "frame" => Ok(Self::Frame),
            "burst" => Ok(Self::Burst),
            "merged" => Ok(Self::Merged),
            other => Err(format!("{other:?}: expected frame, burst or merged")),
        }
    }
}

impl std::fmt::Display for Handoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Frame => "frame",
            Self::Burst => "burst",
            Self::Merged => "merged",
        })
    }
}

/// One configuration of the scaling bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Shards, one thread each (at most 255: the PIT token names the shard in one byte).
    pub shards: usize,
    /// Exchanges per shard per pass.
    pub exchanges: usize,
    /// Frames per burst (the router's worker: 32).
    pub burst: usize,
    /// Share (percent) of each shard's Data that arrive at another shard and are handed to
    /// it; ignored with one shard.
    pub cross_percent: u32,
    /// How handed-over Data are processed.
    pub handoff: Handoff,
    /// Pin shard thread `s` to CPU `s` (modulo the CPUs this process may use).
    pub pin: bool,
    /// Subtract from each timed section the time the thread waited for its CPU meanwhile
    /// (read from `/proc/thread-self/schedstat` around each section: two reads of about a
    /// microsecond each, not charged): for a shared, loaded machine.
    pub unpreempt: bool,
    /// Every received frame (Interests, a shard's own Data and those it hands over) leaves
    /// the receiving core's caches once written (untimed `CLFLUSH` of its lines), as in the
    /// router, where another CPU (the kernel's copy on veth) or a device (DMA) writes every
    /// frame: the shard reads its own frames cold too, not only those handed to it. `false`
    /// (the model before): the receiving core writes its frames just before it reads them,
    /// so only handed-over Data arrive cold.
    pub cold: bool,
}

impl Config {
    /// Checks the settings, naming the one that is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.shards == 0 || self.shards > 255 {
            return Err(format!("shards = {}: expected 1 to 255", self.shards));
        }
        if self.exchanges == 0 || self.exchanges > u32::MAX as usize {
            return Err(format!(
                "exchanges = {}: expected at least 1 (and below 2^32)",
                self.exchanges
            ));
        }
        if self.burst == 0 || self.burst > 256 {
            return Err(format!("burst = {}: expected 1 to 256", self.burst));
        }
        if self.cross_percent > 100 {
            return Err(format!(
                "cross share = {}%: expected 0 to 100",
                self.cross_percent
            ));
        }
        Ok(())
    }

    /// The share of Data that cross in this configuration (none with one shard).
    fn cross(&self) -> u64 {
        if self.shards > 1 {
            u64::from(self.cross_percent)
        } else {
            0
        }
    }

    /// Where the Data of exchange `j` of shard `me` arrives: at `me`, or (for a share of
    /// `cross_percent`, spread evenly: exchange j crosses when ⌊(j+1)·p/100⌋ > ⌊j·p/100⌋) at
    /// the other shards in turn.
    pub fn arrives_at(&self, me: usize, j: usize) -> usize {
        let p = self.cross();
        let (a, b) = (j as u64 * p / 100, (j as u64 + 1) * p / 100);
        if b == a {
            return me;
        }
        (me + 1 + (a as usize) % (self.shards - 1)) % self.shards
    }

    /// Hand-offs each shard should receive (its Data that arrive elsewhere) per pass:
    /// ⌊exchanges · p / 100⌋.
    pub fn expected_handoffs(&self) -> u64 {
        self.exchanges as u64 * self.cross() / 100
    }
}

/// Name `i` of the FIB, as in `exchange.rs`: `/net/site{i/64}/host{i}`.
fn route(i: u64) -> NameBuf {
    let mut n = NameBuf::new();
    n.push_generic(b"net")
        .push_generic(format!("site{}", i / 64).as_bytes())
        .push_generic(format!("host{i}").as_bytes());
    n
}

/// What every configuration reads: the routes, one FIB (as the router shares one) or a copy
/// per shard, and each shard's exchanges (the same for every configuration, each of which
/// runs them through shards of its own).
#[derive(Debug)]
pub struct Fixture {
    /// Routes in each FIB.
    pub routes: u64,
    key: HashKey,
    /// The writers stay alive with their readers.
    _writers: Vec<Fib>,
    readers: Vec<FibReader>,
    packets: Vec<Vec<Packets>>,
}

impl Fixture {
    /// A FIB of `routes` routes (`/net/site{i/64}/host{i}` to the upstream face), shared by
    /// every shard, or (`shared_fib = false`) one copy per shard; `exchanges` exchanges for
    /// each of up to `shards` shards.
    pub fn new(routes: u64, exchanges: usize, shards: usize, shared_fib: bool) -> Self {
        let key = HashKey::new(1, 2);
        let routes = routes.max(1);
        let copies = if shared_fib { 1 } else { shards.max(1) };
        let (writers, readers) = (0..copies)
            .map(|_| {
                let (mut fib, reader) = Fib::new(key, 2);
                for i in 0..routes {
                    fib.add_nexthop(&route(i).as_name(), NextHop { face: UP, cost: 1 })
                        .expect("route");
                }
                fib.publish();
                (fib, reader)
            })
            .unzip();
        Self {
            routes,
            key,
            _writers: writers,
            readers,
            packets: (0..shards)
                .map(|me| packets(me, exchanges, routes))
                .collect(),
        }
    }

    fn reader(&self, shard: usize) -> FibReader {
        self.readers[shard % self.readers.len()].clone()
    }
}

/// One exchange's packets: the Interest, its Data in an LpPacket whose PitToken (a
/// placeholder, filled in with the forwarded Interest's token) starts at `token_at`. The
/// name's fourth component (5 bytes, `video` as built) is where each pass writes its own
/// tag ([`pass_tag`]), in the Interest at `tag_at.0` and in the Data at `tag_at.1`, so that
/// no pass finds the Data of another in the CS (the names keep `exchange.rs`'s lengths).
#[derive(Debug)]
struct Packets {
    interest: Vec<u8>,
    data: Vec<u8>,
    token_at: usize,
    tag_at: (usize, usize),
}

/// Bytes of a pass's name tag.
const TAG: usize = 5;

/// The tag of pass `p`, written over the name's fourth component: `v` and four hex digits.
fn pass_tag(p: u32) -> [u8; TAG] {
    let s = format!("v{:04x}", p & 0xffff);
    s.as_bytes().try_into().expect("5 bytes")
}

/// Where `video` is in `bytes` (once in each packet: in its name).
fn tag_offset(bytes: &[u8]) -> usize {
    bytes
        .windows(TAG)
        .position(|w| w == b"video")
        .expect("the name's fourth component")
}

/// The exchanges of shard `shard`: names distinct from every other shard's.
fn packets(shard: usize, n: usize, routes: u64) -> Vec<Packets> {
    (0..n)
        .map(|j| {
            let k = (shard * n + j) as u64;
            let mut nm = route(k.wrapping_mul(2_654_435_761) % routes);
            nm.push_generic(b"video")
                .push_generic(format!("obj{k}").as_bytes())
                .push_segment(k % 1000);
            let (interest, d) = crate::exchange_pair(nm, k as u32);
            let (data, token_at) = crate::data_with_token(&d);
            Packets {
                tag_at: (tag_offset(&interest), tag_offset(&data)),
                interest,
                data,
                token_at,
            }
        })
        .collect()
}

/// A received frame: a buffer of the receiving shard's pool (its "UMEM"), the packet's
/// length, and where its PitToken is (standing for the XDP metadata that names the owner),
/// padded to the size of the router's handle ([`ndx_afxdp::RxFrame`], 16 bytes), so that
/// the rings and queues move as many bytes per frame.
struct RxBuf {
    buf: Box<[u8; FRAME]>,
    len: u32,
    token_at: u32,
    _descriptor: [u8; DESCRIPTOR_PAD],
}

/// Bytes [`RxBuf`] adds to reach the size of an [`ndx_afxdp::RxFrame`].
const DESCRIPTOR_PAD: usize = std::mem::size_of::<ndx_afxdp::RxFrame>()
    .saturating_sub(std::mem::size_of::<(Box<[u8; FRAME]>, u32, u32)>());

// The bench's handle moves through its rings as the router's does: a change to `RxFrame`
// that the padding cannot absorb (a smaller frame handle) stops the build.
const _: () = assert!(std::mem::size_of::<RxBuf>() == std::mem::size_of::<ndx_afxdp::RxFrame>());

impl std::fmt::Debug for RxBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxBuf").field("len", &self.len).finish()
    }
}

impl RxBuf {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

/// Bytes of a handed-over frame prefetched as it is drained: as the worker's
/// `prefetch_headers` (its first 128 bytes; the bench has no metadata line).
const PREFETCH_HEAD: usize = 128;

/// Asks the cache for a handed-over frame's first lines.
#[inline]
fn prefetch_head(f: &RxBuf) {
    ndx_mem::prefetch_lines(&f.buf[0], (f.len as usize).min(PREFETCH_HEAD));
}

/// A Data announced on the wire to the shard it arrives at: exchange `j` of the sender,
/// with the token the sender's forwarded Interest carried.
#[derive(Debug)]
struct Wire {
    j: u32,
    token: [u8; PIT_TOKEN_LEN],
}

/// One shard's state that lasts across passes: the shard, its frames and its rings.
#[derive(Debug)]
struct Engine {
    shard: Shard,
    pool: Vec<RxBuf>,
    /// Hand-offs to each owner (`None` at our own index), and from each other shard.
    hand_tx: Vec<Option<ExchangeSender<RxBuf>>>,
    hand_rx: Vec<ExchangeReceiver<RxBuf>>,
    /// The wire to each shard our Data may arrive at, and from each other shard (with the
    /// sender's index).
    wire_tx: Vec<Option<ExchangeSender<Wire>>>,
    wire_rx: Vec<(usize, ExchangeReceiver<Wire>)>,
}

/// What one shard did in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShardPass {
    /// Its exchanges.
    pub exchanges: u64,
    /// Interests it forwarded (one send per Interest of its own).
    pub interests_forwarded: u64,
    /// Data of its own exchanges it sent down (each once, by the owner).
    pub data_down: u64,
    /// Its shard's counters over the pass: Data in, matched by token, Interests out.
    pub data_in: u64,
    /// Data matched by their PIT token.
    pub by_token: u64,
    /// Interests the shard counted as sent.
    pub interests_out: u64,
    /// Data sent by the shard (its counter).
    pub data_out: u64,
    /// Frames it handed to other shards (Data that arrived here and belong elsewhere).
    pub handoffs_out: u64,
    /// Frames handed to it (its Data that arrived elsewhere).
    pub handoffs_in: u64,
    /// Hand-offs that found the ring full and waited (the router would drop them).
    pub ring_full: u64,
    /// Pipeline bursts that carried Data (its own, handed over or both): `data_in` over
    /// this is the mean Data per burst.
    pub data_bursts: u64,
    /// Pipeline bursts (or, by frame, single-frame runs) that carried handed-over Data:
    /// `handoffs_in` over this is the mean size of the bursts hand-offs are processed in.
    pub handed_bursts: u64,
    /// Nanoseconds spent in the engine (see the module docs).
    pub engine_ns: u64,
    /// Nanoseconds from the start barrier to the end of its loop.
    pub wall_ns: u64,
    /// Nanoseconds of waiting for the CPU subtracted from its engine time
    /// ([`Config::unpreempt`]).
    pub unpreempted_ns: u64,
    /// Nanoseconds it waited on a run queue during its loop (`/proc/thread-self/schedstat`;
    /// `None` where the kernel does not say): time another task had its CPU, which a pass
    /// on a shared machine should show near zero.
    pub waited_ns: Option<u64>,
    /// The CPU it was pinned to.
    pub cpu: Option<usize>,
}

/// One pass of every shard.
#[derive(Debug, Clone, PartialEq)]
pub struct Pass {
    /// Per shard.
    pub shards: Vec<ShardPass>,
}

impl Pass {
    /// Exchanges of all shards.
    pub fn exchanges(&self) -> u64 {
        self.shards.iter().map(|s| s.exchanges).sum()
    }

    /// The aggregate rate (exchanges/s): the sum over shards of each shard's exchanges per
    /// second of engine time.
    pub fn engine_rate(&self) -> f64 {
        self.shards
            .iter()
            .map(|s| s.exchanges as f64 * 1e9 / s.engine_ns.max(1) as f64)
            .sum()
    }

    /// Engine nanoseconds per exchange, averaged over the shards (cost per exchange per core).
    pub fn ns_per_exchange(&self) -> f64 {
        let ns: u64 = self.shards.iter().map(|s| s.engine_ns).sum();
        ns as f64 / self.exchanges().max(1) as f64
    }

    /// Exchanges per second of wall-clock time (every thread's whole loop, harness
    /// included).
    pub fn wall_rate(&self) -> f64 {
        let wall = self.shards.iter().map(|s| s.wall_ns).max().unwrap_or(0);
        self.exchanges() as f64 * 1e9 / wall.max(1) as f64
    }

    /// Hand-offs over all shards.
    pub fn handoffs(&self) -> u64 {
        self.shards.iter().map(|s| s.handoffs_in).sum()
    }

    /// The mean number of Data per pipeline burst that carried Data, and of handed-over
    /// Data per burst that carried any (0 when none did), over all shards.
    pub fn burst_sizes(&self) -> (f64, f64) {
        let sum = |f: fn(&ShardPass) -> u64| self.shards.iter().map(f).sum::<u64>() as f64;
        let per = |n: f64, d: f64| if d > 0.0 { n / d } else { 0.0 };
        (
            per(sum(|s| s.data_in), sum(|s| s.data_bursts)),
            per(sum(|s| s.handoffs_in), sum(|s| s.handed_bursts)),
        )
    }

    /// The share of the measured engine time that was waiting for the CPU and subtracted
    /// ([`Config::unpreempt`]; 0 without it).
    pub fn subtracted(&self) -> f64 {
        let stolen: u64 = self.shards.iter().map(|s| s.unpreempted_ns).sum();
        let engine: u64 = self.shards.iter().map(|s| s.engine_ns).sum();
        stolen as f64 / (stolen + engine).max(1) as f64
    }

    /// The largest share of its loop a shard spent waiting for its CPU (0 to 1; `None`
    /// where the kernel does not say).
    pub fn preempted(&self) -> Option<f64> {
        self.shards
            .iter()
            .map(|s| Some(s.waited_ns? as f64 / s.wall_ns.max(1) as f64))
            .try_fold(0f64, |m, x| Some(m.max(x?)))
    }
}

/// This thread's time waiting on a run queue so far (ns), from `/proc/thread-self/schedstat`
/// ("on-CPU ns, waiting ns, time slices").
fn waited_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().nth(1)?.parse().ok()
}

/// A configuration's shards with their exchanges, run pass after pass.
#[derive(Debug)]
pub struct Bench<'f> {
    cfg: Config,
    engines: Vec<Engine>,
    packets: &'f [Vec<Packets>],
    passes: u32,
}

impl<'f> Bench<'f> {
    /// Builds the shards (reading `fixture`'s FIB and exchanges), their frames and rings.
    pub fn new(cfg: Config, fixture: &'f Fixture) -> Result<Self, String> {
        cfg.validate()?;
        let have = (
            fixture.packets.len(),
            fixture.packets.first().map_or(0, Vec::len),
        );
        if cfg.shards > have.0 || cfg.exchanges > have.1 {
            return Err(format!(
                "{} shards of {} exchanges: the fixture has {} shards of {}",
                cfg.shards, cfg.exchanges, have.0, have.1
            ));
        }
        let s = cfg.shards;
        // The PIT holds every exchange that may be outstanding: the rings' and a few bursts.
        let pit_capacity =
            (1usize << 16).max((4 * s * (2 * RING + 4 * cfg.burst)).next_power_of_two());
        // A frame for each hand-off in flight, the wire's arrivals and a few bursts.
        let frames = (s - 1) * (RING + 2 * cfg.burst) + 4 * cfg.burst * s + 64;
        let mut engines: Vec<Engine> = (0..s)
            .map(|me| {
                let sc = ShardConfig {
                    shard: me as u8,
                    pit_capacity,
                    cs: CsConfig {
                        capacity: CS_SLOTS,
                        slot_size: 1200,
                        ..CsConfig::default()
                    },
                    hash_key: fixture.key,
                    ..ShardConfig::default()
                };
                let mut shard = Shard::new(sc, fixture.reader(me), 0);
                shard.add_face(DOWN, FaceInfo::default());
                shard.add_face(UP, FaceInfo::default());
                Engine {
                    shard,
                    pool: (0..frames)
                        .map(|_| RxBuf {
                            buf: Box::new([0u8; FRAME]),
                            len: 0,
                            token_at: 0,
                            _descriptor: [0; DESCRIPTOR_PAD],
                        })
                        .collect(),
                    hand_tx: (0..s).map(|_| None).collect(),
                    hand_rx: Vec::new(),
                    wire_tx: (0..s).map(|_| None).collect(),
                    wire_rx: Vec::new(),
                }
            })
            .collect();
        // Full meshes, as `runtime.rs` builds the exchange rings.
        for a in 0..s {
            for b in 0..s {
                if a != b {
                    let (tx, rx) = Exchange::of::<RxBuf>(RING);
                    engines[a].hand_tx[b] = Some(tx);
                    engines[b].hand_rx.push(rx);
                    let (tx, rx) = Exchange::of::<Wire>(RING);
                    engines[a].wire_tx[b] = Some(tx);
                    engines[b].wire_rx.push((a, rx));
                }
            }
        }
        Ok(Self {
            cfg,
            engines,
            packets: &fixture.packets,
            passes: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Runs one pass: every shard's exchanges, the shards on their threads at once.
    pub fn pass(&mut self) -> Pass {
        // Passes 10 s apart: the dead-nonce list (6 s) has forgotten the previous pass.
        let t0 = u64::from(self.passes) * 10_000_000_000;
        let tag = pass_tag(self.passes);
        self.passes += 1;
        let cfg = self.cfg;
        let packets = self.packets;
        let barrier = Barrier::new(cfg.shards);
        let done = AtomicUsize::new(0);
        let cpus = if cfg.pin {
            core_affinity::get_core_ids().unwrap_or_default()
        } else {
            Vec::new()
        };
        let shards = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .engines
                .iter_mut()
                .enumerate()
                .map(|(me, eng)| {
                    let (barrier, done) = (&barrier, &done);
                    let cpu = (!cpus.is_empty()).then(|| cpus[me % cpus.len()]);
                    std::thread::Builder::new()
                        .name(format!("shard{me}"))
                        .spawn_scoped(scope, move || {
                            let pinned = cpu.filter(|&c| core_affinity::set_for_current(c));
                            let mut r = run(&cfg, me, eng, packets, (t0, tag), barrier, done);
                            r.cpu = pinned.map(|c| c.id);
                            r
                        })
                        .expect("a shard thread")
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("shard thread"))
                .collect()
        });
        Pass { shards }
    }
}

/// The engine time a shard is charged, and how it is measured.
#[derive(Debug)]
struct Clock {
    busy: Duration,
    /// With `unpreempt`: this thread's run-queue wait (`/proc/thread-self/schedstat`), read
    /// around each timed section, and the total subtracted.
    schedstat: Option<std::fs::File>,
    stolen: Duration,
}

impl Clock {
    fn new(unpreempt: bool) -> Self {
        Self {
            busy: Duration::ZERO,
            schedstat: unpreempt
                .then(|| std::fs::File::open("/proc/thread-self/schedstat").ok())
                .flatten(),
            stolen: Duration::ZERO,
        }
    }

    /// This thread's run-queue wait so far (ns), when asked to subtract it.
    fn waited(&self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let f = self.schedstat.as_ref()?;
        let mut buf = [0u8; 96];
        let n = f.read_at(&mut buf, 0).ok()?;
        let s = std::str::from_utf8(&buf[..n]).ok()?;
        s.split_whitespace().nth(1)?.parse().ok()
    }

    /// Adds the time `f` took when it did something (it returns whether it did), so a shard
    /// that only polls empty rings while it waits for the others is not charged; with
    /// `unpreempt`, less the time the thread waited for its CPU meanwhile (the kernel
    /// accounts a preemption when the thread runs again, so it is in the second reading).
    /// Never inlined, so that callgrind can count the engine's instructions alone
    /// (`--toggle-collect='*scaling::Clock::timed*'`).
    #[inline(never)]
    fn timed(&mut self, f: impl FnOnce() -> bool) {
        let w0 = self.waited();
        let t = Instant::now();
        if f() {
            let el = t.elapsed();
            let waited = w0.zip(self.waited()).map_or(Duration::ZERO, |(a, b)| {
                Duration::from_nanos(b.saturating_sub(a))
            });
            let waited = waited.min(el);
            self.busy += el - waited;
            self.stolen += waited;
        }
    }
}

/// One shard's loop for one pass.
fn run(
    cfg: &Config,
    me: usize,
    eng: &mut Engine,
    packets: &[Vec<Packets>],
    (t0, tag): (u64, [u8; TAG]),
    barrier: &Barrier,
    done: &AtomicUsize,
) -> ShardPass {
    let (n, b, s) = (cfg.exchanges, cfg.burst, cfg.shards);
    let before = eng.shard.counters();
    let mut r = ShardPass {
        exchanges: n as u64,
        ..ShardPass::default()
    };
    let mut out = Actions::new();
    // The frames lent to the pipeline in a burst (their indices in the batch).
    let mut ledger: Lent<usize> = Lent::with_capacity(b);
    let mut clock = Clock::new(cfg.unpreempt);
    // Data arriving here, in the order of arrival: ours, then those from the wire.
    let mut rx: Vec<RxBuf> = Vec::with_capacity(b * s);
    let mut mine: Vec<RxBuf> = Vec::with_capacity(b * s);
    // Frames handed over to us, each with the index of its ring.
    let mut inbox: Vec<(usize, RxBuf)> = Vec::with_capacity(b);
    // Our Data to announce on the wire, and frames waiting for room in a hand-off ring.
    let mut to_wire: Vec<VecDeque<Wire>> = (0..s).map(|_| VecDeque::new()).collect();
    let mut to_hand: Vec<VecDeque<RxBuf>> = (0..s).map(|_| VecDeque::new()).collect();
    let mut own: Vec<(usize, [u8; PIT_TOKEN_LEN])> = Vec::with_capacity(b);
    let groups = n.div_ceil(b);
    let (mut g, mut finished) = (0, false);
    // A pass that stops moving is a bug (a lost frame or message): fail, do not hang.
    let mut moved = (0u64, Instant::now());
    barrier.wait();
    let waited = waited_ns();
    let start = Instant::now();
    loop {
        // The shard's clock: 1 µs per burst of Interests, as in `exchange.rs` (not per loop
        // turn: a shard that spins while it waits must not age its PIT entries).
        let now = t0 + g as u64 * 1000 + 500;
        // 1. A burst of our Interests, while the wire and our frames have room.
        if g < groups && eng.pool.len() >= 2 * b && to_wire.iter().all(|q| q.len() < b) {
            let range = g * b..((g + 1) * b).min(n);
            let mut frames: Vec<RxBuf> = eng.pool.drain(eng.pool.len() - range.len()..).collect();
            for (f, p) in frames.iter_mut().zip(&packets[me][range.clone()]) {
                f.buf[..p.interest.len()].copy_from_slice(&p.interest);
                f.buf[p.tag_at.0..p.tag_at.0 + TAG].copy_from_slice(&tag);
                f.len = p.interest.len() as u32;
                if cfg.cold {
                    ndx_mem::flush_lines(f.bytes());
                }
            }
            {
                let batch: Vec<(FaceId, &[u8])> =
                    frames.iter().map(|f| (DOWN, f.bytes())).collect();
                out.clear();
                clock.timed(|| {
                    eng.shard.process_burst(now, &batch, &mut out);
                    true
                });
            }
            // The producer echoes each forwarded Interest's token in its Data (untimed).
            let mut sent = 0;
            for ((_, f), j) in out.sends().zip(range.clone()) {
                let lp = LpPacket::decode(f).expect("Interest forwarded in an LpPacket");
                let token: [u8; PIT_TOKEN_LEN] = lp
                    .pit_token()
                    .and_then(|t| t.try_into().ok())
                    .expect("with our token");
                match cfg.arrives_at(me, j) {
                    at if at == me => own.push((j, token)),
                    at => to_wire[at].push_back(Wire { j: j as u32, token }),
                }
                sent += 1;
            }
            assert_eq!(sent, range.len(), "every Interest forwarded");
            r.interests_forwarded += sent as u64;
            eng.pool.append(&mut frames);
            g += 1;
        }
        // The wire (untimed): announce our Data to the shards they arrive at.
        for (at, q) in to_wire.iter_mut().enumerate() {
            if let Some(tx) = eng.wire_tx[at].as_mut() {
                while tx.reap().is_some() {}
                while let Some(w) = q.pop_front() {
                    if let Err(w) = tx.send(w) {
                        q.push_front(w);
                        break;
                    }
                }
            }
        }
        // 2. Data arrive (the kernel's copy into our frames, untimed): ours, then other
        // shards' from the wire while we have frames to spare.
        for (j, token) in own.drain(..) {
            let mut f = eng
                .pool
                .pop()
                .expect("frames for our Data (checked with the Interests)");
            fill(&mut f, &packets[me][j], &token, &tag, cfg.cold);
            rx.push(f);
        }
        for (from, wire) in &mut eng.wire_rx {
            while eng.pool.len() > 2 * b && rx.len() < b * s {
                let Some(w) = wire.recv() else { break };
                let mut f = eng.pool.pop().expect("checked");
                fill(
                    &mut f,
                    &packets[*from][w.j as usize],
                    &w.token,
                    &tag,
                    cfg.cold,
                );
                wire.give_back(w);
                rx.push(f);
            }
        }
        // Steering (each frame to its owner's ring) and our Data through the pipeline.
        if !rx.is_empty() {
            let (mut lent, mut merged) = (0, 0);
            clock.timed(|| {
                for f in rx.drain(..) {
                    let owner = if s == 1 {
                        me
                    } else {
                        let at = f.token_at as usize;
                        token_shard(&f.buf[at..at + PIT_TOKEN_LEN]).map_or(me, usize::from)
                    };
                    if owner == me {
                        mine.push(f);
                        continue;
                    }
                    r.handoffs_out += 1;
                    let tx = eng.hand_tx[owner]
                        .as_mut()
                        .expect("a ring to every other shard");
                    if to_hand[owner].is_empty() {
                        match tx.stage(f) {
                            Ok(()) => continue,
                            Err(f) => to_hand[owner].push_back(f),
                        }
                    } else {
                        to_hand[owner].push_back(f);
                    }
                    r.ring_full += 1;
                }
                // The burst's hand-offs go out together, as `Worker::on_burst` publishes them.
                for tx in eng.hand_tx.iter_mut().flatten() {
                    tx.publish();
                }
                // Merged: the frames handed to us since the last turn join our own burst.
                // (Those held from the last turn first; more if the burst has room.)
                if cfg.handoff == Handoff::Merged && !mine.is_empty() {
                    let room = b.saturating_sub(mine.len());
                    drain_handed(&mut eng.hand_rx, 0, room, &mut inbox);
                }
                if !mine.is_empty() {
                    let batch: Vec<(FaceId, &[u8])> = mine
                        .iter()
                        .chain(inbox.iter().map(|(_, f)| f))
                        .map(|f| (UP, f.bytes()))
                        .collect();
                    out.clear();
                    ledger.extend(0..batch.len());
                    eng.shard
                        .process_burst_lent(now, &batch, &mut ledger, &mut out);
                    lent = ledger.sends(&out, |&k| batch[k].1).count();
                    eng.shard.return_lent(&mut ledger, |_, _| None);
                    merged = inbox.len();
                    // Back in order, each ring's run published at once.
                    ExchangeReceiver::give_back_runs(&mut eng.hand_rx, inbox.drain(..));
                }
                true
            });
            assert_eq!(
                lent,
                mine.len() + merged,
                "every Data of the burst sent down"
            );
            r.data_bursts += u64::from(lent > 0);
            r.handed_bursts += u64::from(merged > 0);
            r.handoffs_in += merged as u64;
            r.data_down += lent as u64;
            eng.pool.append(&mut mine);
        }
        // 3. Our Data handed to us by the shards they arrived at; back go their handles.
        // (Polling an empty ring is not charged: only a drain that found a frame is.)
        let (mut got, mut bursts) = (0, 0u64);
        match cfg.handoff {
            Handoff::Frame => {
                for from in 0..eng.hand_rx.len() {
                    let Some(first) = eng.hand_rx[from].recv() else {
                        continue;
                    };
                    let hrx = &mut eng.hand_rx[from];
                    let shard = &mut eng.shard;
                    clock.timed(|| {
                        let mut next = Some(first);
                        while let Some(f) = next.take().or_else(|| hrx.recv()) {
                            out.clear();
                            shard.process(now, UP, f.bytes(), &mut out);
                            got += out.sends().count();
                            bursts += 1;
                            hrx.give_back(f);
                        }
                        true
                    });
                }
            }
            // As `Worker::on_exchanged`: the rings drained in turn into bursts of up to `b`,
            // each lent to the pipeline at once, its sends read once, its frames given back
            // in order.
            Handoff::Burst => {
                while let Some((k0, first)) = eng
                    .hand_rx
                    .iter_mut()
                    .enumerate()
                    .find_map(|(k, r)| r.recv().map(|f| (k, f)))
                {
                    let (hrx, shard) = (&mut eng.hand_rx, &mut eng.shard);
                    clock.timed(|| {
                        // Another core wrote these frames: their first lines are asked for
                        // as they are drained, ahead of the pipeline (as the worker does
                        // ahead of its classification).
                        prefetch_head(&first);
                        inbox.push((k0, first));
                        drain_handed(hrx, k0, b, &mut inbox);
                        got += run_handed(shard, hrx, now, &mut inbox, (&mut ledger, &mut out));
                        bursts += 1;
                        true
                    });
                }
            }
            // Merged: what arrived is drained (and its first lines prefetched) but held for
            // the next turn's burst of our own Data, unless a whole burst waits or it was
            // already held a turn (a deadline of one loop turn).
            Handoff::Merged => {
                let held = !inbox.is_empty();
                let hrx = &mut eng.hand_rx;
                // (As with `Burst`, polling empty rings is not charged.)
                let first = hrx
                    .iter_mut()
                    .enumerate()
                    .take_while(|_| inbox.len() < b)
                    .find_map(|(k, r)| r.recv().map(|f| (k, f)));
                if let Some((k0, first)) = first {
                    clock.timed(|| {
                        prefetch_head(&first);
                        inbox.push((k0, first));
                        drain_handed(hrx, k0, b, &mut inbox);
                        true
                    });
                }
                if !inbox.is_empty() && (held || inbox.len() >= b) {
                    let shard = &mut eng.shard;
                    clock.timed(|| {
                        got += run_handed(shard, hrx, now, &mut inbox, (&mut ledger, &mut out));
                        bursts += 1;
                        true
                    });
                }
            }
        }
        r.handoffs_in += got as u64;
        r.data_down += got as u64;
        r.data_bursts += bursts;
        r.handed_bursts += bursts;
        // 4. Handles given back to us: their frames return to our pool; waiting frames go.
        for (owner, q) in to_hand.iter_mut().enumerate() {
            let Some(tx) = eng.hand_tx[owner].as_mut() else {
                continue;
            };
            let first = tx.reap();
            // Nothing came back, and nothing waits or the ring is still full: not charged.
            if first.is_none() && (q.is_empty() || tx.in_flight() >= RING) {
                continue;
            }
            let pool = &mut eng.pool;
            clock.timed(|| {
                pool.extend(first);
                tx.reap_many(|f| pool.push(f));
                while let Some(f) = q.pop_front() {
                    if let Err(f) = tx.send(f) {
                        q.push_front(f);
                        break;
                    }
                }
                true
            });
        }
        if !finished && r.data_down == n as u64 {
            finished = true;
            done.fetch_add(1, Ordering::AcqRel);
        }
        // Done when every shard has all its Data and every frame and message is back.
        if finished
            && done.load(Ordering::Acquire) == s
            && to_hand.iter().all(VecDeque::is_empty)
            && eng.hand_tx.iter().flatten().all(|t| t.in_flight() == 0)
            && eng.wire_tx.iter().flatten().all(|t| t.in_flight() == 0)
        {
            break;
        }
        if finished {
            std::hint::spin_loop();
        }
        let progress = r.interests_forwarded + r.data_down + r.handoffs_out;
        // (A shard that is done waits for the others as long as they take.)
        if progress != moved.0 || finished {
            moved = (progress, Instant::now());
        } else if moved.1.elapsed() > STALL {
            panic!(
                "shard {me}: no progress for {STALL:?} ({} of {n} Data down, {} shards done): {r:?}",
                r.data_down,
                done.load(Ordering::Acquire)
            );
        }
    }
    r.wall_ns = start.elapsed().as_nanos() as u64;
    r.waited_ns = waited.zip(waited_ns()).map(|(a, b)| b.saturating_sub(a));
    r.engine_ns = clock.busy.as_nanos() as u64;
    r.unpreempted_ns = clock.stolen.as_nanos() as u64;
    let c = eng.shard.counters();
    r.data_in = c.data_in - before.data_in;
    r.by_token = c.by_token - before.by_token;
    r.interests_out = c.interests_out - before.interests_out;
    r.data_out = c.data_out - before.data_out;
    r
}

/// Drains the hand-off rings from ring `k0` on into `inbox` until it holds `b` frames,
/// asking for each frame's first lines as it comes (another core wrote them).
fn drain_handed(
    rings: &mut [ExchangeReceiver<RxBuf>],
    k0: usize,
    b: usize,
    inbox: &mut Vec<(usize, RxBuf)>,
) {
    for (k, ring) in rings.iter_mut().enumerate().skip(k0) {
        let room = b.saturating_sub(inbox.len());
        if room == 0 {
            break;
        }
        ring.recv_many(room, |f| {
            prefetch_head(&f);
            inbox.push((k, f));
        });
    }
}

/// Runs the handed-over frames in `inbox` through one pipeline burst, as
/// `Worker::on_exchanged`: each Data sent from its frame, the sends read once, the frames
/// given back to their rings in order; returns the Data sent.
fn run_handed(
    shard: &mut Shard,
    rings: &mut [ExchangeReceiver<RxBuf>],
    now: u64,
    inbox: &mut Vec<(usize, RxBuf)>,
    (ledger, out): (&mut Lent<usize>, &mut Actions),
) -> usize {
    let batch: Vec<(FaceId, &[u8])> = inbox.iter().map(|(_, f)| (UP, f.bytes())).collect();
    out.clear();
    ledger.extend(0..batch.len());
    shard.process_burst_lent(now, &batch, ledger, out);
    let sent = ledger.sends(out, |&k| batch[k].1).count();
    shard.return_lent(ledger, |_, _| None);
    // Back in order, each ring's run published at once.
    ExchangeReceiver::give_back_runs(rings, inbox.drain(..));
    sent
}

/// Receives the Data of `p` into frame `f`, with `token` echoed and the pass's `tag`; then,
/// when `cold`, evicts its lines (written elsewhere, as in the router).
fn fill(f: &mut RxBuf, p: &Packets, token: &[u8; PIT_TOKEN_LEN], tag: &[u8; TAG], cold: bool) {
    f.buf[..p.data.len()].copy_from_slice(&p.data);
    f.buf[p.tag_at.1..p.tag_at.1 + TAG].copy_from_slice(tag);
    f.buf[p.token_at..p.token_at + PIT_TOKEN_LEN].copy_from_slice(token);
    f.len = p.data.len() as u32;
    f.token_at = p.token_at as u32;
    if cold {
        ndx_mem::flush_lines(f.bytes());
    }
}

/// The machine's load averages (1, 5, 15 minutes), from `/proc/loadavg`.
pub fn load_average() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = s.split_whitespace().map(|v| v.parse().ok());
    Some([it.next()??, it.next()??, it.next()??])
}
