//! Hierarchical content store benchmarks (issue 5):
//!
//! - `l1/{lookup,lookup_hashing,lookup_burst32,insert}/N`: the L1 (`ndx_core::Cs`) filled with N = 10^3 …
//!   10^7 small Data (one point per decade, 128-byte slots so 10^7 entries take ~2.2 GB), then
//!   lookups that hit (hash precomputed, or computed with the router's keyed hash
//!   `ndx_core::HashKey`, or in bursts of 32 with the shard's touch-then-lookup prefetch,
//!   elem/s counting lookups), and inserts of new names that each evict one entry (LRU, the
//!   router's default).
//! - `l1_batch_insert/16`: one batch of B = 16 Data of 8192 bytes inserted into a full L1
//!   of 8 KB slots, as an L2 read completion does (`Data::decode` + `Cs::insert_hashed` of
//!   each (name hash, frame)); time per batch, elem/s per Data.
//! - `hcs/{serial,prefetch}/tau{4,32}`: the ndx-lab HCS service loop (L1 `Cs` + emulated
//!   L2, `ndx_lab::hcs::run`) on seed 000's Real workload, scaled: 200 contents × 100 chunks
//!   of |c| = 8192 B, |L1| = 0.1 |C|, |L2| = |C|, B = 10; elem/s = chunks served per second.
//!   The Gbit/s and the ratio to seed 000's ~4 Gbit/s single-thread NFD-HCS are printed.
//!
//! `cargo bench -p ndx-benches --bench hcs`; `NDX_BENCH_L1_MAX=1000000` stops the L1 sweep
//! earlier (10^7 entries take ~2.2 GB and several seconds to fill).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use ndx_codec::{Data, DataRepr, Name, NameBuf};
use ndx_core::{Admission, Cs, CsConfig, HashKey, Replacement};
use ndx_hcs::{DelayMode, MemoryMode};
use ndx_lab::catalogue::Catalogue;
use ndx_lab::hcs::{self, HcsConfig};
use ndx_lab::hitratio::Design;
use ndx_lab::workload::{Kind, WorkloadConfig};

/// The router's allocator: large tables on transparent huge pages (`NDX_BENCH_HUGE=0` gives
/// them base pages, the reference).
#[global_allocator]
static ALLOC: ndx_mem::HugePages = ndx_mem::HugePages;

const KEY: HashKey = HashKey::new(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);

/// Slot size of the L1 sweep: the ~80-byte Data below fit, and 10^7 slots stay ~2.2 GB.
const SMALL_SLOT: usize = 128;
/// Marker id in the templates, replaced by each entry's id.
const MARK: [u8; 8] = [0xA5; 8];
/// Lookups cycle over at most this many distinct names (beyond the CPU caches at 10^6+).
const MAX_PROBES: u64 = 1 << 20;
/// Lookups per burst in `lookup_burst32` (the shard's burst size).
const BURST: usize = 32;
/// Stride (odd, not a multiple of 5: coprime with every 10^d) scattering probes over ids.
const STRIDE: u64 = 2_654_435_761;

/// Chunk payload |c| of the HCS benches (seed 000).
const CHUNK_BYTES: usize = 8192;
/// Seed 000's single-thread NFD-HCS at tau = 4 Gbit/s (§4.4, §6): "close to 4 Gbps".
const PAPER_GBPS: f64 = 4.0;

/// A Data named `/<prefix>/<8-byte id>` with `content_len` bytes of content, the byte offset
/// of the id in the wire, and the name TLV's offset and length.
struct Template {
    wire: Vec<u8>,
    id_at: usize,
    name_at: usize,
    name_len: usize,
}

impl Template {
    fn new(prefix: &[u8], content_len: usize) -> Self {
        let mut name = NameBuf::new();
        name.push_generic(prefix).push_generic(&MARK);
        let mut d = DataRepr::new(name.clone(), vec![0x42; content_len]);
        d.freshness_ms = Some(10_000);
        let wire = d.to_vec().expect("Data");
        let tlv = name.to_tlv();
        let name_at = wire
            .windows(tlv.len())
            .position(|w| w == tlv.as_slice())
            .expect("name in Data");
        Self {
            id_at: name_at + tlv.len() - MARK.len(),
            name_at,
            name_len: tlv.len(),
            wire,
        }
    }

    /// Writes the Data of entry `id` into `out` (as long as the template).
    fn write(&self, id: u64, out: &mut [u8]) {
        out.copy_from_slice(&self.wire);
        self.patch(id, out);
    }

    /// Sets the id of a frame already holding this template.
    fn patch(&self, id: u64, frame: &mut [u8]) {
        frame[self.id_at..self.id_at + 8].copy_from_slice(&id.to_be_bytes());
    }

    /// The name TLV of entry `id`.
    fn name_tlv(&self, id: u64, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&self.wire[self.name_at..self.name_at + self.name_len]);
        let at = start + self.name_len - 8;
        out[at..].copy_from_slice(&id.to_be_bytes());
    }

    /// The keyed hash of `frame`'s name (a frame written by [`write`](Self::write)).
    fn hash_of(&self, frame: &[u8]) -> u64 {
        let n = Name::decode(&frame[self.name_at..self.name_at + self.name_len]).expect("Name");
        KEY.name(&n)
    }
}

fn env_u64(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The L1 sweep's replacement policy: `NDX_BENCH_L1_POLICY` = `lru` (default, the
/// router's), `fifo` or `clock`.
fn l1_policy() -> Replacement {
    match std::env::var("NDX_BENCH_L1_POLICY").as_deref() {
        Ok("fifo") => Replacement::Fifo,
        Ok("clock") => Replacement::Clock,
        Ok("lru") | Err(_) => Replacement::Lru,
        Ok(other) => panic!("NDX_BENCH_L1_POLICY={other}: expected lru, fifo or clock"),
    }
}

/// An L1 holding entries `0..n`, and the next fresh id for inserts.
struct L1Fixture {
    cs: Cs,
    next: u64,
}

fn fill_l1(t: &Template, n: u64) -> L1Fixture {
    let t0 = Instant::now();
    let mut cs = Cs::new(
        CsConfig {
            capacity: n as usize,
            slot_size: SMALL_SLOT,
            replacement: l1_policy(),
            admission: Admission::Always,
            seed: 1,
        },
        KEY,
    );
    let mut wire = t.wire.clone();
    for id in 0..n {
        t.patch(id, &mut wire);
        let d = Data::decode(&wire).expect("Data");
        cs.insert_hashed(0, &d, t.hash_of(&wire), None);
    }
    assert_eq!(cs.len() as u64, n, "every entry stored");
    eprintln!(
        "l1 {n} ({:?}): filled in {:.1} s, {} bytes per entry ({SMALL_SLOT}-byte slots, Data {} bytes), {} MB, {} MB of the process on huge pages",
        l1_policy(),
        t0.elapsed().as_secs_f64(),
        cs.bytes_per_entry(),
        t.wire.len(),
        (cs.bytes_per_entry() as u64 * n) >> 20,
        ndx_mem::huge_bytes().unwrap_or(0) >> 20
    );
    L1Fixture { cs, next: n }
}

/// L1 lookup (hit) and insert (with eviction) vs the number of entries.
fn l1(c: &mut Criterion) {
    ndx_benches::huge_pages_from_env();
    let max = env_u64("NDX_BENCH_L1_MAX", 10_000_000);
    let t = Template::new(b"bench", 16);
    let mut g = c.benchmark_group("l1");
    g.throughput(Throughput::Elements(1));
    let mut n = 1_000u64;
    while n <= max {
        // Probe names: entries scattered over 0..n, name TLVs and hashes precomputed.
        let probes = n.min(MAX_PROBES);
        let mut tlvs = Vec::with_capacity(probes as usize * t.name_len);
        for k in 0..probes {
            t.name_tlv(k.wrapping_mul(STRIDE) % n, &mut tlvs);
        }
        let names: Vec<Name<'_>> = tlvs
            .chunks(t.name_len)
            .map(|c| Name::decode(c).expect("Name"))
            .collect();
        let hashes: Vec<u64> = names.iter().map(|n| KEY.name(n)).collect();
        // Filled on first use, so a filter that skips this size skips the fill.
        let mut fix: Option<L1Fixture> = None;
        let mut k = 0usize;
        g.bench_function(BenchmarkId::new("lookup", n), |b| {
            let f = fix.get_or_insert_with(|| fill_l1(&t, n));
            b.iter(|| {
                k += 1;
                if k == names.len() {
                    k = 0;
                }
                black_box(f.cs.lookup(0, &names[k], hashes[k], false, false).is_some())
            })
        });
        g.bench_function(BenchmarkId::new("lookup_hashing", n), |b| {
            let f = fix.get_or_insert_with(|| fill_l1(&t, n));
            b.iter(|| {
                k += 1;
                if k == names.len() {
                    k = 0;
                }
                let name = &names[k];
                black_box(f.cs.lookup(0, name, KEY.name(name), false, false).is_some())
            })
        });
        // The shard's burst path (`Shard::process_burst`, 32 packets): prefetch the index
        // buckets of the whole burst, then the slots of likely hits, then (LRU) their list
        // neighbours, then look up, so the
        // cache misses of the burst overlap. Throughput counts lookups.
        g.throughput(Throughput::Elements(BURST as u64));
        g.bench_function(BenchmarkId::new("lookup_burst32", n), |b| {
            let f = fix.get_or_insert_with(|| fill_l1(&t, n));
            b.iter(|| {
                let mut idx = [0usize; BURST];
                for x in &mut idx {
                    *x = k;
                    k += 1;
                    if k == names.len() {
                        k = 0;
                    }
                }
                for &i in &idx {
                    f.cs.prefetch(hashes[i]);
                }
                for &i in &idx {
                    f.cs.prefetch_entries(hashes[i]);
                }
                for &i in &idx {
                    f.cs.prefetch_hit(hashes[i], false);
                }
                let mut hits = 0;
                for &i in &idx {
                    hits +=
                        usize::from(f.cs.lookup(0, &names[i], hashes[i], false, false).is_some());
                }
                black_box(hits)
            })
        });
        g.throughput(Throughput::Elements(1));
        if let Some(f) = &fix {
            let cn = f.cs.counters();
            eprintln!("l1 {n} lookups: {} hits, {} misses", cn.hits, cn.misses);
            assert_eq!(cn.misses, 0, "every probe is stored");
        }
        g.bench_function(BenchmarkId::new("insert", n), |b| {
            let f = fix.get_or_insert_with(|| fill_l1(&t, n));
            // Fresh names, 4096 at a time: built, decoded and hashed off the clock (an L2
            // completion or the shard has them decoded and hashed), then inserted.
            const CHUNK: u64 = 4096;
            let w = t.wire.len();
            let mut wires = vec![0u8; CHUNK as usize * w];
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let m = left.min(CHUNK);
                    for (j, out) in wires.chunks_mut(w).take(m as usize).enumerate() {
                        t.write(f.next + j as u64, out);
                    }
                    f.next += m;
                    left -= m;
                    let batch: Vec<(Data<'_>, u64)> = wires
                        .chunks(w)
                        .take(m as usize)
                        .map(|x| (Data::decode(x).expect("Data"), t.hash_of(x)))
                        .collect();
                    let t0 = Instant::now();
                    for (d, h) in &batch {
                        black_box(f.cs.insert_hashed(0, d, *h, None));
                    }
                    total += t0.elapsed();
                }
                total
            })
        });
        if let Some(f) = &fix {
            let cn = f.cs.counters();
            eprintln!(
                "l1 {n} inserts: {} insertions, {} evictions, {} entries",
                cn.insertions - n,
                cn.evictions,
                f.cs.len()
            );
        }
        drop(fix);
        n *= 10;
    }
    g.finish();
}

/// One batch of B = 16 Data of 8192 bytes into a full L1, as an L2 read completion does.
fn batch_insert(c: &mut Criterion) {
    ndx_benches::huge_pages_from_env();
    const B: usize = 16;
    // 2^15 slots of ~8.3 KB (~270 MB): far beyond the CPU caches, like a real L1.
    let slots: usize = env_u64("NDX_BENCH_BATCH_L1", 1 << 15) as usize;
    let t = Template::new(b"hcs", CHUNK_BYTES);
    let w = t.wire.len();
    let mut g = c.benchmark_group("l1_batch_insert");
    g.throughput(Throughput::Elements(B as u64));
    let mut fix: Option<(Cs, u64)> = None;
    g.bench_function(BenchmarkId::from_parameter(B), |b| {
        let (cs, next) = fix.get_or_insert_with(|| {
            let mut cs = Cs::new(
                CsConfig {
                    capacity: slots,
                    slot_size: w.next_multiple_of(64),
                    replacement: Replacement::Lru,
                    admission: Admission::Always,
                    seed: 1,
                },
                KEY,
            );
            let mut wire = t.wire.clone();
            for id in 0..slots as u64 {
                t.patch(id, &mut wire);
                cs.insert_hashed(
                    0,
                    &Data::decode(&wire).expect("Data"),
                    t.hash_of(&wire),
                    None,
                );
            }
            eprintln!(
                "l1_batch_insert: L1 of {slots} slots of {} bytes full (Data {w} bytes, {} MB)",
                w.next_multiple_of(64),
                (cs.bytes_per_entry() * slots) >> 20
            );
            (cs, slots as u64)
        });
        // The batch record's frames, contiguous like the segments of an L2 read; the name
        // hashes come with the record (`Segment::name_key`).
        let mut record = vec![0u8; B * w];
        for (j, f) in record.chunks_mut(w).enumerate() {
            t.write(j as u64, f);
        }
        let mut keys = [0u64; B];
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for (j, f) in record.chunks_mut(w).enumerate() {
                    t.patch(*next + j as u64, f);
                    keys[j] = t.hash_of(f);
                }
                *next += B as u64;
                let t0 = Instant::now();
                for (f, &h) in record.chunks(w).zip(&keys) {
                    if let Ok(d) = Data::decode(f) {
                        cs.insert_hashed(0, &d, h, None);
                    }
                }
                total += t0.elapsed();
            }
            black_box(cs.len());
            total
        })
    });
    if let Some((cs, _)) = &fix {
        let cn = cs.counters();
        eprintln!(
            "l1_batch_insert: {} insertions, {} evictions, {} too large",
            cn.insertions - slots as u64,
            cn.evictions,
            cn.too_large
        );
    }
    g.finish();
}

/// Totals over every `hcs::run` of one benchmark.
#[derive(Default)]
struct Totals {
    served: u64,
    seconds: f64,
    hits: f64,
    cpu: f64,
    runs: u32,
}

/// HCS service rate: the ndx-lab loop (L1 Cs + emulated L2) on seed 000's Real workload.
fn hcs_service(c: &mut Criterion) {
    ndx_benches::huge_pages_from_env();
    // seed 000 Table 3 scaled as ndx-lab's `throughput` (README): 200 × 100 chunks of 8 KB
    // (|C| = |L2| = 20,000 chunks, 164 MB), |L1| = 0.1 |C| (paper: 1 GB / 10 GB), B = 10.
    let workload = WorkloadConfig {
        kind: Kind::Real,
        contents: env_u64("NDX_BENCH_HCS_CONTENTS", 200) as u32,
        chunks_per_content: 100,
        ..WorkloadConfig::default()
    };
    let l1 = (workload.catalogue() / 10).max(10);
    // Each `hcs::run` builds a fresh L2 and warms L1 (~0.2 s, off the run's clock but inside
    // criterion's wall-clock warm-up estimate, so criterion asks for few iterations per
    // sample): a run serves at least MIN_RUN requests and its time is scaled to `iters`.
    // Each sample is then one run of max(iters, MIN_RUN) requests.
    const MIN_RUN: u64 = 32_768;
    let mut cat: Option<Catalogue> = None;
    let mut g = c.benchmark_group("hcs");
    g.throughput(Throughput::Elements(1));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    for tau in [4.0f64, 32.0] {
        for design in [Design::Serial, Design::Prefetch] {
            let mut tot = Totals::default();
            let id = BenchmarkId::new(design.to_string(), format!("tau{tau}"));
            g.bench_function(id, |b| {
                let cat = cat.get_or_insert_with(|| {
                    let t0 = Instant::now();
                    let cat = Catalogue::build(
                        workload.contents,
                        workload.chunks_per_content,
                        Some(CHUNK_BYTES),
                    )
                    .expect("catalogue");
                    eprintln!(
                        "hcs: catalogue of {} chunks of {CHUNK_BYTES} B built in {:.1} s",
                        workload.catalogue(),
                        t0.elapsed().as_secs_f64()
                    );
                    cat
                });
                b.iter_custom(|iters| {
                    let cfg = HcsConfig {
                        workload,
                        batch: 10,
                        l1,
                        replacement: Replacement::Fifo,
                        tau_bps: tau * 1e9,
                        delay: DelayMode::BusyWait,
                        memory: MemoryMode::Static,
                        design,
                        measure: iters.max(MIN_RUN),
                        max_time: Duration::from_secs(120),
                        shard: None,
                    };
                    let r = hcs::run(&cfg, cat).expect("HCS run");
                    assert!(r.served > 0 && r.l2_misses == 0, "{r:?}");
                    tot.served += r.served;
                    tot.seconds += r.seconds;
                    tot.hits += r.hit_ratio * r.served as f64;
                    tot.cpu += r.cpu_share * r.seconds;
                    tot.runs += 1;
                    Duration::from_secs_f64(r.seconds * iters as f64 / r.served as f64)
                })
            });
            if tot.served > 0 {
                let rate = tot.served as f64 / tot.seconds;
                let gbps = rate * CHUNK_BYTES as f64 * 8.0 / 1e9;
                eprintln!(
                    "hcs/{design}/tau{tau}: {:.1} kchunks/s = {gbps:.2} Gbit/s (|c| = {CHUNK_BYTES} B) = {:.2}x seed 000's ~{PAPER_GBPS} Gbit/s NFD-HCS; hit {:.4}, cpu_share {:.2} ({} runs, {} requests)",
                    rate / 1e3,
                    gbps / PAPER_GBPS,
                    tot.hits / tot.served as f64,
                    tot.cpu / tot.seconds,
                    tot.runs,
                    tot.served
                );
            }
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = l1, batch_insert, hcs_service
}
criterion_main!(benches);
