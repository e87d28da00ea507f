//! The HCS service loop of one shard (seed 000 §3.2): L1 = `ndx_core::Cs`, L2 =
//! `ndx_hcs::EmulatedL2` holding the whole catalogue as batch records of real Data packets.
//!
//! - **Serial** (NFD-HCS): an L1 miss reads its batch from L2, waits for it (the delay
//!   technique decides how: busy wait, sleep, or spinning on a deadline), inserts the B chunks
//!   into L1, then serves the chunk.
//! - **Prefetch** (the optimised design): additionally, the request for the penultimate chunk
//!   of a batch starts reading the next batch without waiting (deadline mode: the device works
//!   while the loop serves other requests); completions are inserted when polled, and a miss
//!   on a batch already in flight waits only for the rest of its transfer.
//!
//! Before measuring, L1 is warmed with `10 |L1|` requests (plus the Real ramp) served straight
//! from the catalogue, so warm-up costs no emulated device time.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use ndx_codec::Data;
use ndx_core::{Cs, Dispatch, Replacement};
use ndx_hcs::{
    BatchRecord, Completion, DelayMode, EmulatedConfig, EmulatedL2, L2Backend, MemoryMode, Segment,
};

use crate::catalogue::{Catalogue, LAB_KEY};
use crate::hitratio::{Design, L1Sim};
use crate::workload::{Request, WorkloadConfig};

/// Why an HCS run could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum HcsError {
    /// The catalogue has no Data packets.
    #[error("the catalogue was built without Data packets")]
    NoData,
    /// A batch could not be written to the emulated L2.
    #[error("writing batch {batch} of content {content} to L2: {reason}")]
    L2Write {
        /// Content index.
        content: u32,
        /// Batch index.
        batch: u32,
        /// The backend's error.
        reason: String,
    },
    /// The emulated L2 is too small for the catalogue.
    #[error("L2 holds {indexed} of {batches} batches: capacity too small")]
    L2TooSmall {
        /// Batches indexed.
        indexed: u64,
        /// Batches written.
        batches: u64,
    },
}

/// Serve only the requests that a dispatcher sends to one shard (one process per core on a
/// many-core machine reproduces a multi-shard HCS, each shard with its own L1 and L2).
#[derive(Debug, Clone)]
pub struct ShardFilter {
    /// The dispatcher (mode, shard count).
    pub dispatch: Dispatch,
    /// This shard.
    pub shard: u8,
}

/// Parameters of one HCS run.
#[derive(Debug, Clone)]
pub struct HcsConfig {
    /// Workload (usually Real).
    pub workload: WorkloadConfig,
    /// Batch size B.
    pub batch: u32,
    /// L1 size in chunks.
    pub l1: u64,
    /// L1 replacement.
    pub replacement: Replacement,
    /// L2 throughput tau in bit/s.
    pub tau_bps: f64,
    /// Delay technique (forced to `Deadline` for the prefetch design, which must not block).
    pub delay: DelayMode,
    /// Memory technique.
    pub memory: MemoryMode,
    /// Read design.
    pub design: Design,
    /// Measured requests (after warm-up).
    pub measure: u64,
    /// Stop measuring after this long even if fewer requests were served.
    pub max_time: Duration,
    /// Serve one shard's share of the workload only (None: all of it).
    pub shard: Option<ShardFilter>,
}

/// What one run measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HcsResult {
    /// Requests served during the measurement.
    pub served: u64,
    /// Wall time of the measurement, seconds.
    pub seconds: f64,
    /// L1 hit ratio during the measurement.
    pub hit_ratio: f64,
    /// L2 batch reads completed.
    pub l2_reads: u64,
    /// Bytes read from L2.
    pub l2_bytes: u64,
    /// Time the loop spent waiting for L2 reads (from the miss to the batch's arrival, L1
    /// insertion excluded), seconds.
    pub l2_wait: f64,
    /// Misses that found their batch already being prefetched.
    pub joined_prefetch: u64,
    /// Requests whose batch L2 did not hold (0 when `|L2| = |C|`).
    pub l2_misses: u64,
    /// Share of the measurement's wall time this thread was on a CPU (from
    /// `/proc/thread-self/stat`, 10 ms resolution; 1 on an idle machine, NaN if unavailable). On a shared
    /// VM, below 1 means other tasks took the core, and every wall-clock number is deflated.
    pub cpu_share: f64,
}

/// CPU time (user + system) this thread has used, in seconds, from `/proc/thread-self/stat`
/// (clock ticks of 10 ms), if available.
pub fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state is field 3, utime field 14, stime field 15.
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

impl HcsResult {
    /// Chunks served per second.
    pub fn chunks_per_s(&self) -> f64 {
        self.served as f64 / self.seconds.max(1e-12)
    }

    /// Gbit/s of chunk payload (`|c|` bytes per chunk).
    pub fn gbps(&self, chunk_bytes: usize) -> f64 {
        self.chunks_per_s() * chunk_bytes as f64 * 8.0 / 1e9
    }

    /// Observed L2 throughput: bytes read over the time spent waiting for them (serial design;
    /// seed 000 Fig. 4), Gbit/s.
    pub fn observed_l2_gbps(&self) -> f64 {
        self.l2_bytes as f64 * 8.0 / self.l2_wait.max(1e-12) / 1e9
    }
}

/// Builds an emulated L2 holding every batch of `cat` (content key = content index).
pub fn preload_l2(
    cat: &Catalogue,
    batch: u32,
    tau_bps: f64,
    delay: DelayMode,
    memory: MemoryMode,
) -> Result<EmulatedL2, HcsError> {
    if !cat.has_data() {
        return Err(HcsError::NoData);
    }
    let per_content = cat.chunks_per_content().div_ceil(batch);
    let batches = u64::from(cat.contents()) * u64::from(per_content);
    let record_of = |m: u32, b: u32, f: &mut dyn FnMut(&BatchRecord<'_>)| {
        let first = b * batch;
        let last = (first + batch).min(cat.chunks_per_content());
        let segs: Vec<Segment<'_>> = (first..last)
            .map(|k| {
                let i = cat.index(m, k);
                Segment {
                    name_key: cat.hash(i),
                    frame: cat.data_wire(i),
                }
            })
            .collect();
        f(&BatchRecord {
            content_key: u64::from(m),
            batch: u64::from(b),
            content_name: b"",
            segments: &segs,
        });
    };
    let mut max_record = 0;
    record_of(0, 0, &mut |r| max_record = r.record_len());
    let mut l2 = EmulatedL2::new(EmulatedConfig {
        capacity: (batches + 2) * max_record as u64,
        max_record,
        tau_bps,
        delay,
        memory,
        read_depth: 16,
        write_depth: 16,
    });
    for m in 0..cat.contents() {
        for b in 0..per_content {
            let mut res = Ok(());
            record_of(m, b, &mut |r| {
                res = l2.submit_write(r, 0).map(|_| ()).map_err(|e| e.to_string());
            });
            res.map_err(|reason| HcsError::L2Write {
                content: m,
                batch: b,
                reason,
            })?;
            l2.poll(&mut |_| {});
        }
    }
    let indexed = l2.counters().indexed;
    if indexed < batches {
        return Err(HcsError::L2TooSmall { indexed, batches });
    }
    Ok(l2)
}

fn insert_completion(cs: &mut Cs, c: Completion<'_>, done: &mut Vec<(u64, Instant)>) {
    if let Completion::Read {
        request_id, result, ..
    } = c
    {
        let arrived = Instant::now();
        if let Ok(view) = result {
            for seg in view.segments() {
                if let Ok(d) = Data::decode(seg.frame) {
                    cs.insert_hashed(0, &d, seg.name_key, None);
                }
            }
        }
        done.push((request_id, arrived));
    }
}

/// One step of the measured loop.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Serve this request; `true`: it is a penultimate chunk whose next batch this shard owns.
    Serve(Request, bool),
    /// Another shard served the penultimate chunk of (content, batch - 1): prefetch the batch.
    Hint(u32, u32),
}

/// Starts reading the batch whose first chunk is `first` of `content` (request id `id` =
/// content << 32 | batch) unless it is in L1 or already in flight; a full read queue skips the
/// prefetch.
fn prefetch_batch(
    cat: &Catalogue,
    cs: &mut Cs,
    l2: &mut EmulatedL2,
    in_flight: &mut HashSet<u64>,
    content: u32,
    first: u32,
    id: u64,
) {
    if in_flight.contains(&id) {
        return;
    }
    let j = cat.index(content, first);
    let name = cat.name(j);
    let present = cs.lookup(0, &name, cat.hash(j), false, false).is_some();
    if !present
        && let Some(loc) = l2.lookup(u64::from(content), id & 0xffff_ffff)
        && l2.submit_read(loc, id).is_ok()
    {
        in_flight.insert(id);
    }
}

/// Runs the HCS loop on `cat` (built with Data packets) and measures it.
pub fn run(cfg: &HcsConfig, cat: &Catalogue) -> Result<HcsResult, HcsError> {
    let design = cfg.design;
    let delay = if design == Design::Prefetch {
        DelayMode::Deadline
    } else {
        cfg.delay
    };
    let mut l2 = preload_l2(cat, cfg.batch, cfg.tau_bps, delay, cfg.memory)?;
    let b = cfg.batch.max(1);
    // Warm L1 through the same Cs, filled from the catalogue without device time. A shard
    // warms with the serial design: its L1Sim cannot tell which next batches it owns.
    let warm_design = if cfg.shard.is_some() {
        Design::Serial
    } else {
        design
    };
    let mut warm = L1Sim::new(cat, cfg.l1 as usize, cfg.replacement, b, warm_design);
    let owns = |content: u32, chunk: u32| {
        cfg.shard
            .as_ref()
            .is_none_or(|f| f.dispatch.shard(&cat.name(cat.index(content, chunk)), None) == f.shard)
    };
    let l = cat.chunks_per_content();
    let mut raw = cfg.workload.requests();
    let mut warmed = 0u64;
    let warm_n = 10 * cfg.l1 + cfg.workload.ramp_requests();
    while warmed < warm_n {
        let Some(r) = raw.next() else { break };
        if owns(r.content, r.chunk) {
            warm.request(r);
            warmed += 1;
        }
    }
    // The measured steps are generated (and dispatched) before the clock starts, as the paper
    // preloads its workload. With prefetching, the penultimate chunk of batch j prefetches
    // batch j+1 in the shard that owns j+1: a shard also receives a prefetch hint when
    // another shard serves the penultimate chunk of a batch whose successor it owns.
    let mut steps: Vec<Step> = Vec::with_capacity(cfg.measure.min(1 << 24) as usize);
    let mut count = 0u64;
    while count < cfg.measure {
        let Some(r) = raw.next() else { break };
        let penultimate = design == Design::Prefetch && b >= 2 && r.chunk % b == b - 2;
        let next = r.chunk / b + 1;
        let hint = penultimate && next * b < l && owns(r.content, next * b);
        if owns(r.content, r.chunk) {
            steps.push(Step::Serve(r, hint));
            count += 1;
        } else if hint {
            steps.push(Step::Hint(r.content, next));
        }
    }
    let mut cs = warm.into_cs();

    let key = |m: u32, batch: u32| (u64::from(m) << 32) | u64::from(batch);
    let mut in_flight: HashSet<u64> = HashSet::new();
    let mut done: Vec<(u64, Instant)> = Vec::with_capacity(16);
    let mut res = HcsResult::default();
    let mut hits = 0u64;
    let mut served_bytes = 0u64;
    let cpu0 = thread_cpu_seconds();
    let t0 = Instant::now();
    for (n, &step) in steps.iter().enumerate() {
        if n % 1024 == 0 && t0.elapsed() > cfg.max_time {
            break;
        }
        if design == Design::Prefetch && !in_flight.is_empty() {
            l2.poll(&mut |c| insert_completion(&mut cs, c, &mut done));
            for (id, _) in done.drain(..) {
                in_flight.remove(&id);
            }
        }
        let (r, prefetch) = match step {
            Step::Serve(r, hint) => (r, hint.then_some(r.chunk / b + 1)),
            Step::Hint(content, next) => {
                let id = key(content, next);
                prefetch_batch(cat, &mut cs, &mut l2, &mut in_flight, content, next * b, id);
                continue;
            }
        };
        let i = cat.index(r.content, r.chunk);
        let name = cat.name(i);
        let h = LAB_KEY.name(&name);
        let hit = match cs.lookup(0, &name, h, false, false) {
            Some(d) => {
                served_bytes += d.data.len() as u64;
                true
            }
            None => false,
        };
        if !hit {
            let bi = r.chunk / b;
            let id = key(r.content, bi);
            let w0 = Instant::now();
            let mut arrived = None;
            if in_flight.contains(&id) {
                res.joined_prefetch += 1;
            } else if let Some(loc) = l2.lookup(u64::from(r.content), u64::from(bi)) {
                // A full queue (prefetches) drains first.
                while l2.submit_read(loc, id).is_err() {
                    l2.poll(&mut |c| insert_completion(&mut cs, c, &mut done));
                    for (x, _) in done.drain(..) {
                        in_flight.remove(&x);
                    }
                }
                in_flight.insert(id);
            } else {
                res.l2_misses += 1;
            }
            while in_flight.contains(&id) {
                l2.poll(&mut |c| insert_completion(&mut cs, c, &mut done));
                for (x, at) in done.drain(..) {
                    in_flight.remove(&x);
                    if x == id {
                        arrived = Some(at);
                    }
                }
            }
            // Time from the request to the batch's arrival, L1 insertion excluded.
            res.l2_wait += arrived.map_or(0.0, |at| (at - w0).as_secs_f64());
            if let Some(d) = cs.lookup(0, &name, h, false, false) {
                served_bytes += d.data.len() as u64;
            }
        }
        if let Some(next) = prefetch {
            let id = key(r.content, next);
            prefetch_batch(
                cat,
                &mut cs,
                &mut l2,
                &mut in_flight,
                r.content,
                next * b,
                id,
            );
        }
        hits += u64::from(hit);
        res.served += 1;
    }
    res.seconds = t0.elapsed().as_secs_f64();
    res.cpu_share = match (cpu0, thread_cpu_seconds()) {
        (Some(a), Some(b)) => (b - a) / res.seconds.max(1e-12),
        _ => f64::NAN,
    };
    std::hint::black_box(served_bytes);
    let c = l2.counters();
    res.l2_reads = c.reads_ok;
    res.l2_bytes = c.read_bytes;
    res.hit_ratio = hits as f64 / res.served.max(1) as f64;
    Ok(res)
}

/// Measured per-operation L1 costs (seed 000 Table 4's `d_L1.lookup`, `d_L1.insert`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L1Costs {
    /// One lookup that hits (name hash included), seconds.
    pub lookup: f64,
    /// Inserting one batch of B chunks (decode included), seconds.
    pub insert_batch: f64,
}

/// Times L1 lookups and batch inserts on a full L1 of `l1` chunks.
pub fn calibrate(cat: &Catalogue, l1: u64, batch: u32, replacement: Replacement) -> L1Costs {
    let b = batch.max(1);
    let mut sim = L1Sim::new(cat, l1 as usize, replacement, b, Design::Serial);
    let per_content = cat.chunks_per_content().div_ceil(b);
    let all: Vec<(u32, u32)> = (0..cat.contents())
        .flat_map(|m| (0..per_content).map(move |x| (m, x)))
        .collect();
    // Fill, then time inserting batches that evict.
    let t0 = Instant::now();
    let mut inserted = 0u64;
    for &(m, x) in all
        .iter()
        .cycle()
        .take(all.len().max(2 * l1 as usize / b as usize))
    {
        sim.insert_batch(m, x);
        inserted += 1;
    }
    let insert_batch = t0.elapsed().as_secs_f64() / inserted as f64;
    // Lookups of chunks present in L1.
    let cs = sim.into_cs();
    let present: Vec<usize> = (0..cat.contents() as usize * cat.chunks_per_content() as usize)
        .filter(|&i| {
            let n = cat.name(i);
            cs.may_hold(LAB_KEY.name(&n))
        })
        .take(4096)
        .collect();
    let mut cs = cs;
    let rounds = 50_000usize;
    let t0 = Instant::now();
    let mut found = 0u64;
    for k in 0..rounds {
        let i = present[k % present.len().max(1)];
        let n = cat.name(i);
        let h = LAB_KEY.name(&n);
        found += u64::from(cs.lookup(0, &n, h, false, false).is_some());
    }
    let lookup = t0.elapsed().as_secs_f64() / rounds as f64;
    std::hint::black_box(found);
    L1Costs {
        lookup,
        insert_batch,
    }
}
