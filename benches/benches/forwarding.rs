//! Forwarding-core benchmarks (issue 3): FIB lookup vs FIB size, the worst-case Interest and
//! Data paths (seed 001's red and blue paths), CS hits, and a per-operation latency table in
//! the form of seed 004's Table I. Bytes per table entry are printed at start-up.
//!
//! `cargo bench -p ndx-benches --bench forwarding`; set `NDX_BENCH_FIB_MAX=1000000` to stop
//! the FIB sweep earlier (10^7 prefixes take ~2 GB and a minute to build).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndx_benches::{FramePool, PoolFrame};
use ndx_codec::{DataRepr, InterestRepr, LpHeaders, LpPacket, NameBuf, Packet};
use ndx_core::{
    Actions, Admission, Cs, CsConfig, DeadNonceList, FaceId, FaceInfo, Fib, HashKey, Lent,
    MAX_PREFIX_DEPTH, NextHop, PIT_TOKEN_LEN, Pit, Replacement, Shard, ShardConfig, pit_key,
    prefix_hashes,
};

/// The router's allocator: large tables on transparent huge pages (`NDX_BENCH_HUGE=0` gives
/// them base pages, the reference).
#[global_allocator]
static ALLOC: ndx_mem::HugePages = ndx_mem::HugePages;

const KEY: HashKey = HashKey::new(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);
const DOWN: FaceId = FaceId(1);
const UP: FaceId = FaceId(2);

/// Route `i`: /net/site<i/64>/host<i> (3 components), like a large routing table.
fn route(i: u64) -> NameBuf {
    let mut n = NameBuf::new();
    n.push_generic(b"net")
        .push_generic(format!("site{}", i / 64).as_bytes())
        .push_generic(format!("host{i}").as_bytes());
    n
}

/// A name under route `i`: /net/site/host/app/object<j>/seg=<s> (6 components, ~50 bytes).
fn name_under(i: u64, j: u64) -> NameBuf {
    let mut n = route(i);
    n.push_generic(b"video")
        .push_generic(format!("obj{j}").as_bytes())
        .push_segment(j % 1000);
    n
}

fn fib_with(routes: u64) -> (Fib, ndx_core::FibReader) {
    let (mut fib, reader) = Fib::new(KEY, 2);
    for i in 0..routes {
        fib.add_nexthop(&route(i).as_name(), NextHop { face: UP, cost: 10 })
            .expect("route");
    }
    fib.publish();
    (fib, reader)
}

fn interest(name: &NameBuf, nonce: u32) -> Vec<u8> {
    let mut i = InterestRepr::new(name.clone());
    i.nonce = Some(nonce);
    i.lifetime_ms = Some(4000);
    i.hop_limit = Some(64);
    i.to_vec().expect("Interest")
}

fn data(name: &NameBuf) -> Vec<u8> {
    let mut d = DataRepr::new(name.clone(), vec![0x42; 1000]);
    d.freshness_ms = Some(10_000);
    d.to_vec().expect("Data")
}

/// Data in an LpPacket with a PitToken placeholder of our tokens' length at a known offset.
fn data_with_token(name: &NameBuf) -> (Vec<u8>, usize) {
    let d = data(name);
    let h = LpHeaders {
        pit_token: Some(&[0; PIT_TOKEN_LEN]),
        ..LpHeaders::default()
    };
    let mut out = vec![0; h.encoded_len(Some(d.len()))];
    let n = h.encode(Some(&d), &mut out).expect("LpPacket");
    out.truncate(n);
    let lp = LpPacket::decode(&out).expect("decodes");
    let token = lp.pit_token().expect("token");
    let off = token.as_ptr() as usize - out.as_ptr() as usize;
    (out, off)
}

/// The PitToken of an Interest the router forwarded, read where it is rather than by decoding
/// the frame, so only the router's work is timed: the shard writes `64 LL 62 06 <token> ...`
/// (LL one byte, or `FD` and two).
fn our_token(f: &[u8]) -> Option<&[u8]> {
    let at = match f.get(1)? {
        0..=252 => 2,
        253 => 4,
        _ => return None,
    };
    match f.get(at..at + 2)? {
        [0x62, len] if usize::from(*len) == PIT_TOKEN_LEN => f.get(at + 2..at + 2 + PIT_TOKEN_LEN),
        _ => None,
    }
}

fn shard(reader: ndx_core::FibReader, cs_capacity: usize) -> Shard<PoolFrame> {
    shard_with(reader, cs_capacity, 1 << 20)
}

fn shard_with(
    reader: ndx_core::FibReader,
    cs_capacity: usize,
    pit_capacity: usize,
) -> Shard<PoolFrame> {
    shard_keeping(reader, cs_capacity, pit_capacity, false)
}

/// A shard whose CS keeps the frames its Data arrive in ([`PoolFrame`]s) when `keeps`.
fn shard_keeping(
    reader: ndx_core::FibReader,
    cs_capacity: usize,
    pit_capacity: usize,
    keeps: bool,
) -> Shard<PoolFrame> {
    let cfg = ShardConfig {
        pit_capacity,
        cs: CsConfig {
            capacity: cs_capacity,
            slot_size: 1200,
            ..CsConfig::default()
        },
        hash_key: KEY,
        ..ShardConfig::default()
    };
    let mut s = if keeps {
        Shard::with_frames::<PoolFrame>(cfg, reader, 0)
    } else {
        Shard::copying::<PoolFrame>(cfg, reader, 0)
    };
    s.add_face(DOWN, FaceInfo::default());
    s.add_face(UP, FaceInfo::default());
    s
}

fn report_sizes() {
    let (fib, _) = fib_with(100_000);
    let pit = Pit::new(0, 1 << 16, 0);
    let cs = Cs::new(
        CsConfig {
            capacity: 1 << 16,
            slot_size: 1200,
            ..CsConfig::default()
        },
        KEY,
    );
    eprintln!(
        "bytes per entry: FIB {} (100k routes incl. index and names), PIT {} (names to {} bytes in place), CS {} (1200-byte slots)",
        fib.memory_bytes() / fib.len(),
        pit.fixed_bytes_per_entry(),
        ndx_core::PIT_NAME_INLINE,
        cs.bytes_per_entry()
    );
}

fn fib_lookup(c: &mut Criterion) {
    ndx_benches::huge_pages_from_env();
    report_sizes();
    let max: u64 = std::env::var("NDX_BENCH_FIB_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let mut g = c.benchmark_group("fib_lookup");
    g.throughput(Throughput::Elements(1));
    let mut size = 1_000;
    while size <= max {
        let (_fib, reader) = fib_with(size);
        let snap = reader.snapshot();
        // 4096 names under random routes, hashes precomputed as the shard does once per packet.
        let names: Vec<NameBuf> = (0..4096u64)
            .map(|j| name_under((j * 2_654_435_761) % size, j))
            .collect();
        let hashes: Vec<[u64; MAX_PREFIX_DEPTH]> = names
            .iter()
            .map(|n| {
                let mut h = [0u64; MAX_PREFIX_DEPTH];
                prefix_hashes(&KEY, &n.as_name(), &mut h);
                h
            })
            .collect();
        g.bench_with_input(BenchmarkId::from_parameter(size), &size, |b, _| {
            let mut k = 0;
            b.iter(|| {
                k = (k + 1) & 4095;
                let n = names[k].as_name();
                black_box(snap.lpm(&n, &hashes[k][..n.len()]).map(|m| m.prefix_len))
            })
        });
        size *= 10;
    }
    g.finish();
}

/// The worst case's CS: 4,096 Data in 1,200-byte slots (seed 001 used 8,154 entries; it
/// never hits), evicting one per exchange once full.
const WORST_CS: usize = 1 << 12;
/// The worst case's PIT (its entries are erased as their Data return).
const WORST_PIT: usize = 1 << 16;
/// Exchanges in the worst-case fixture: enough that a name comes back only long after the
/// CS evicted its Data.
const WORST_N: usize = 1 << 16;

/// Where the worst case's shard reads its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rx {
    /// Each burst is first copied (untimed) into a receive ring, as the kernel copies a
    /// received frame into the UMEM just before the worker reads it; the Data are lent to
    /// the shard, as the worker lends its UMEM frames (`Shard::process_burst_lent`).
    Ring,
    /// Every frame is read where it was built (WORST_N exchanges are 78 MB, so from DRAM),
    /// and the Data are copied into the action list.
    Cold,
    /// As [`Rx::Ring`], but the Data are received into frames from a pool (2 KiB pieces of
    /// one region, as a UMEM's frames are) that the CS keeps instead of copying the Data
    /// (`Shard::process_burst_keeping`, then `return_lent`, as the router's worker does);
    /// the frames it does not keep, and those it lets go, go back to the pool.
    Kept,
}

/// A burst of the frames `built[i]` for `i` in `ids`, received on `face`: copied into `ring`
/// first ([`Rx::Ring`]), or where they were built ([`Rx::Cold`]).
fn receive<'a>(
    rx: Rx,
    ring: &'a mut [Vec<u8>],
    built: &'a [(Vec<u8>, usize)],
    ids: impl Iterator<Item = usize>,
    face: FaceId,
) -> Vec<(FaceId, &'a [u8])> {
    match rx {
        Rx::Ring => {
            let mut n = 0;
            for (buf, i) in ring.iter_mut().zip(ids) {
                buf.clear();
                buf.extend_from_slice(&built[i].0);
                n += 1;
            }
            ring[..n].iter().map(|b| (face, b.as_slice())).collect()
        }
        Rx::Cold => ids.map(|i| (face, built[i].0.as_slice())).collect(),
        Rx::Kept => unreachable!("kept frames are received by `WorstCase::receive_kept`"),
    }
}

/// The worst-case exchanges (seed 001's red and blue paths): Interests under random routes
/// among the FIB's, each with a fresh nonce per round, and their Data, which echo the token
/// the shard gave the forwarded Interest, as an NDNLPv2 upstream does.
struct WorstCase {
    interests: Vec<(Vec<u8>, usize)>,
    datas: Vec<(Vec<u8>, usize)>,
    /// The next exchange; kept between criterion's calls so that nonces never repeat within
    /// a round (the loop detector would rightly drop the Interests).
    k: usize,
    round: u32,
    /// Receive rings for [`Rx::Ring`]: Interests, Data.
    rings: [Vec<Vec<u8>>; 2],
    out: Actions,
    /// The lent frames' indices in their burst.
    lent: Lent<usize>,
    /// [`Rx::Kept`]'s receive frames.
    pool: FramePool,
}

impl WorstCase {
    fn new(routes: u64) -> Self {
        let names: Vec<NameBuf> = (0..WORST_N as u64)
            .map(|j| name_under((j * 2_654_435_761) % routes, j))
            .collect();
        let interests = names
            .iter()
            .enumerate()
            .map(|(j, n)| {
                let w = interest(n, j as u32);
                let pattern = [&[0x0a, 0x04][..], &(j as u32).to_be_bytes()].concat();
                let at = w.windows(6).position(|x| x == pattern).expect("Nonce TLV") + 2;
                (w, at)
            })
            .collect();
        let datas = names.iter().map(data_with_token).collect();
        Self {
            interests,
            datas,
            k: 0,
            round: 0,
            rings: [(); 2].map(|_| (0..64).map(|_| Vec::with_capacity(2048)).collect()),
            out: Actions::new(),
            lent: Lent::with_capacity(64),
            pool: FramePool::new(WORST_CS + 2 * 64),
        }
    }

    /// Runs `iters` bursts of `burst` exchanges (B Interests, then their B Data) through
    /// `s`; returns the time spent inside the shard. A burst of 1 is `Shard::process` on the
    /// Interest, then on its Data (echoing the token inside the timed region: a 6-byte copy),
    /// timed in groups of 64 exchanges.
    fn run(&mut self, s: &mut Shard<PoolFrame>, iters: u64, burst: usize, rx: Rx) -> Duration {
        if burst == 1 {
            return self.one_at_a_time(s, iters, rx);
        }
        assert!(burst <= self.rings[0].len(), "bursts of at most 64");
        let mut inside = Duration::ZERO;
        for _ in 0..iters {
            let (first, now) = self.take(burst);
            let at = |j: usize| (first + j) % WORST_N;
            let irx = if rx == Rx::Kept { Rx::Ring } else { rx };
            let frames = receive(
                irx,
                &mut self.rings[0],
                &self.interests,
                (0..burst).map(at),
                DOWN,
            );
            self.out.clear();
            let t = Instant::now();
            s.process_burst(now, &frames, &mut self.out);
            inside += t.elapsed();
            self.echo_tokens(first);
            if rx == Rx::Kept {
                inside += self.data_kept(s, now + 50, (0..burst).map(at));
                continue;
            }
            inside += self.data_burst(s, now + 50, first, burst, rx);
        }
        inside
    }

    /// A mixed load: bursts of 64 Interests of which `hits` ask for Data the CS holds
    /// (`hit_frames`, taken in turn from `next_hit` on, spread evenly through the burst) and
    /// the rest are worst-case exchanges, whose Data then come back in one burst (received and
    /// lent as [`Rx::Ring`]). Returns the time spent inside the shard.
    fn run_mixed(
        &mut self,
        s: &mut Shard<PoolFrame>,
        iters: u64,
        hit_frames: &[Vec<u8>],
        hits: usize,
        next_hit: &mut usize,
    ) -> Duration {
        let misses = 64 - hits;
        let mut inside = Duration::ZERO;
        for _ in 0..iters {
            let (first, now) = self.take(misses);
            let mut m = 0;
            for (j, buf) in self.rings[0].iter_mut().enumerate() {
                buf.clear();
                if (j + 1) * hits / 64 != j * hits / 64 {
                    buf.extend_from_slice(&hit_frames[*next_hit]);
                    *next_hit = (*next_hit + 1) % hit_frames.len();
                } else {
                    buf.extend_from_slice(&self.interests[(first + m) % WORST_N].0);
                    m += 1;
                }
            }
            let frames: Vec<(FaceId, &[u8])> =
                self.rings[0].iter().map(|b| (DOWN, b.as_slice())).collect();
            self.out.clear();
            let t = Instant::now();
            s.process_burst(now, &frames, &mut self.out);
            inside += t.elapsed();
            // The hits' Data go down bare: only the misses were forwarded with our tokens.
            assert_eq!(self.echo_tokens(first), misses, "every miss forwarded");
            inside += self.data_burst(s, now + 50, first, misses, Rx::Ring);
        }
        inside
    }

    /// The upstream echoes each forwarded Interest's token (the sends in `self.out` that
    /// carry one, in order) in the Data of exchanges `first`, `first + 1`, ... (untimed);
    /// returns how many.
    fn echo_tokens(&mut self, first: usize) -> usize {
        let mut n = 0;
        for (_, f) in self.out.sends() {
            if let Some(tok) = our_token(f) {
                let (d, off) = &mut self.datas[(first + n) % WORST_N];
                d[*off..*off + PIT_TOKEN_LEN].copy_from_slice(tok);
                n += 1;
            }
        }
        n
    }

    /// The Data of exchanges `first..first + n` in one burst, received as `rx` says
    /// ([`Rx::Ring`]: lent; [`Rx::Cold`]: copied); returns the time spent inside the shard.
    fn data_burst(
        &mut self,
        s: &mut Shard<PoolFrame>,
        now: u64,
        first: usize,
        n: usize,
        rx: Rx,
    ) -> Duration {
        let ids = (0..n).map(|j| (first + j) % WORST_N);
        let frames = receive(rx, &mut self.rings[1], &self.datas, ids, UP);
        self.out.clear();
        if rx == Rx::Ring {
            self.lent.extend(0..frames.len());
        }
        let t = Instant::now();
        match rx {
            Rx::Ring => s.process_burst_lent(now, &frames, &mut self.lent, &mut self.out),
            Rx::Cold => s.process_burst(now, &frames, &mut self.out),
            Rx::Kept => unreachable!("kept Data go through `data_kept`"),
        }
        let inside = t.elapsed();
        black_box(self.lent.sends(&self.out, |&k| frames[k].1).count());
        s.return_lent(&mut self.lent, |_, _| None);
        inside
    }

    /// A Data burst received into pool frames that the CS keeps; returns the time spent
    /// inside the shard: the pipeline and the handover (`return_lent`, collecting the
    /// frames it let go).
    fn data_kept(
        &mut self,
        s: &mut Shard<PoolFrame>,
        now: u64,
        ids: impl Iterator<Item = usize>,
    ) -> Duration {
        let datas = &self.datas;
        let frames = self.pool.receive(UP, ids.map(|i| datas[i].0.as_slice()));
        self.out.clear();
        self.lent.extend(0..frames.len());
        let t = Instant::now();
        s.process_burst_keeping(now, &frames, &mut self.lent, &mut self.out);
        let mut inside = t.elapsed();
        black_box(self.lent.sends(&self.out, |&k| frames[k].1).count());
        drop(frames);
        let t = Instant::now();
        self.pool.hand_over(s, &mut self.lent);
        inside += t.elapsed();
        self.pool.recycle();
        inside
    }

    /// Takes the next `n` exchanges, giving their Interests fresh nonces (a new round each
    /// time the fixture wraps, so the dead-nonce list does not flag a loop); returns the
    /// first one's index and the time to process them at.
    fn take(&mut self, n: usize) -> (usize, u64) {
        let first = self.k;
        for j in 0..n {
            let at = (first + j) % WORST_N;
            if at == 0 {
                self.round += 1;
            }
            let (int, nonce_at) = &mut self.interests[at];
            int[*nonce_at..*nonce_at + 4]
                .copy_from_slice(&(at as u32 ^ self.round.rotate_left(16)).to_be_bytes());
        }
        self.k = (first + n) % WORST_N;
        (
            first,
            u64::from(self.round) * 10_000_000_000 + first as u64 * 100,
        )
    }

    /// `iters` exchanges through `Shard::process`, in timed groups of up to 64 (one at a
    /// time, nothing is kept: [`Rx::Kept`] receives as [`Rx::Ring`]).
    fn one_at_a_time(&mut self, s: &mut Shard<PoolFrame>, iters: u64, rx: Rx) -> Duration {
        let mut inside = Duration::ZERO;
        let mut left = iters as usize;
        while left > 0 {
            let group = left.min(64);
            left -= group;
            let (first, now) = self.take(group);
            let at = |j: usize| (first + j) % WORST_N;
            let [ring_i, ring_d] = &mut self.rings;
            if rx != Rx::Cold {
                for j in 0..group {
                    ring_i[j].clear();
                    ring_i[j].extend_from_slice(&self.interests[at(j)].0);
                    ring_d[j].clear();
                    ring_d[j].extend_from_slice(&self.datas[at(j)].0);
                }
            }
            let t = Instant::now();
            for j in 0..group {
                let off = self.datas[at(j)].1;
                let (int, d) = match rx {
                    Rx::Ring | Rx::Kept => (ring_i[j].as_slice(), ring_d[j].as_mut_slice()),
                    Rx::Cold => (
                        self.interests[at(j)].0.as_slice(),
                        self.datas[at(j)].0.as_mut_slice(),
                    ),
                };
                self.out.clear();
                s.process(now + j as u64, DOWN, int, &mut self.out);
                if let Some(tok) = self.out.sends().next().and_then(|(_, f)| our_token(f)) {
                    d[off..off + PIT_TOKEN_LEN].copy_from_slice(tok);
                }
                self.out.clear();
                match rx {
                    Rx::Ring | Rx::Kept => {
                        self.lent.push(0);
                        s.process_lent(now + j as u64 + 50, UP, d, &mut self.lent, &mut self.out)
                    }
                    Rx::Cold => s.process(now + j as u64 + 50, UP, d, &mut self.out),
                }
                black_box(self.lent.sends(&self.out, |_| &*d).count());
                s.return_lent(&mut self.lent, |_, _| None);
            }
            inside += t.elapsed();
        }
        inside
    }
}

fn pipeline(c: &mut Criterion) {
    ndx_benches::huge_pages_from_env();
    // The seed-001 worst case uses 10^6 prefixes; NDX_BENCH_PIPELINE_FIB changes it.
    let routes: u64 = std::env::var("NDX_BENCH_PIPELINE_FIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let (_fib, reader) = fib_with(routes);
    let hit_reader = reader.clone();
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(5));

    // Worst case (seed 001): every Interest misses the CS and the PIT and does a FIB LPM
    // among 10^6 prefixes; its Data then comes back with our PIT token and is cached,
    // evicting one (see `WorstCase`). Only the shard's calls are timed.
    let mut wc = WorstCase::new(routes);
    for (id, burst, rx) in [
        (BenchmarkId::new("exchange_worst_case", 1), 1, Rx::Ring),
        (
            BenchmarkId::new("exchange_worst_case_burst", 32),
            32,
            Rx::Ring,
        ),
        (
            BenchmarkId::new("exchange_worst_case_burst", 64),
            64,
            Rx::Ring,
        ),
        (
            BenchmarkId::new("exchange_worst_case_burst_kept", 64),
            64,
            Rx::Kept,
        ),
        (
            BenchmarkId::new("exchange_worst_case_burst_cold", 64),
            64,
            Rx::Cold,
        ),
    ] {
        let mut s = shard_keeping(reader.clone(), WORST_CS, WORST_PIT, rx == Rx::Kept);
        g.throughput(Throughput::Elements(burst as u64));
        g.bench_function(id, |b| {
            b.iter_custom(|iters| wc.run(&mut s, iters, burst, rx))
        });
        let c = s.counters();
        if c.data_in == 0 {
            continue; // filtered out
        }
        eprintln!(
            "worst case, bursts of {burst}, {rx:?}: {} Interests out, {} Data out of {} in, \
             CS hits {}, drops {:?}",
            c.interests_out, c.data_out, c.data_in, c.cs_hits, c.drops
        );
        assert_eq!(c.cs_hits, 0, "the worst case never hits the CS");
        assert_eq!(c.interests_out, c.interests_in, "every Interest forwarded");
        assert_eq!(c.by_token, c.data_in, "Data matched by token");
        assert_eq!(c.data_out, c.data_in, "every Data sent down");
        let cs = s.cs().counters();
        if rx == Rx::Kept {
            assert_eq!(cs.kept, cs.insertions, "every admitted Data kept its frame");
        } else {
            assert_eq!(cs.kept, 0);
        }
    }

    // Mixed loads: 25, 50, 75 or 90 % of each burst's Interests are CS hits
    // (1,024 Data the CS keeps, being touched more often than the misses' Data push them
    // out), the rest worst-case exchanges. Throughput counts Interests.
    let mixed_names: Vec<NameBuf> = (0..1024u64)
        .map(|j| name_under((j * 40_503) % routes, (WORST_N as u64) + j))
        .collect();
    let mixed_frames: Vec<Vec<u8>> = mixed_names
        .iter()
        .enumerate()
        .map(|(j, n)| interest(n, 2_000_000 + j as u32))
        .collect();
    for pct in [25, 50, 75, 90] {
        let hits = 64 * pct / 100;
        let mut s = shard_with(reader.clone(), WORST_CS, WORST_PIT);
        let mut o = Actions::new();
        for (j, n) in mixed_names.iter().enumerate() {
            o.clear();
            s.process(0, DOWN, &interest(n, j as u32), &mut o);
            s.process(1, UP, &data(n), &mut o);
        }
        let preload = s.counters();
        let mut next_hit = 0;
        g.throughput(Throughput::Elements(64));
        g.bench_function(
            BenchmarkId::new("mixed_burst_64", format!("hits{pct}")),
            |b| {
                b.iter_custom(|iters| {
                    wc.run_mixed(&mut s, iters, &mixed_frames, hits, &mut next_hit)
                })
            },
        );
        let c = s.counters();
        let interests = c.interests_in - preload.interests_in;
        if interests == 0 {
            continue; // filtered out
        }
        eprintln!(
            "mixed, {pct}% hits: {interests} Interests, CS hits {}, {} forwarded, drops {:?}",
            c.cs_hits,
            c.interests_out - preload.interests_out,
            c.drops
        );
        assert_eq!(
            c.cs_hits * 64,
            interests * hits as u64,
            "every hit Interest hit"
        );
        assert_eq!(
            c.cs_hits + c.interests_out - preload.interests_out,
            interests
        );
        assert_eq!(
            c.data_out - preload.data_out,
            c.data_in - preload.data_in + c.cs_hits
        );
    }

    // CS hits: Interests for Data already cached, `NDX_BENCH_HITS` of them: by default 2^14,
    // 20 MB of Data, which this host's 32 MB L3 may hold; 2^16 (78 MB) is from DRAM.
    let hits: usize = std::env::var("NDX_BENCH_HITS")
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("NDX_BENCH_HITS={v}: expected a count of Data"))
        })
        .unwrap_or(1 << 14)
        .max(64);
    let mut out = Actions::new();
    let mut s = shard(reader, hits);
    let hit_names: Vec<NameBuf> = (0..hits as u64)
        .map(|j| name_under((j * 2_654_435_761) % routes, j))
        .collect();
    for (j, n) in hit_names.iter().enumerate() {
        let mut o = Actions::new();
        s.process(0, DOWN, &interest(n, j as u32), &mut o);
        s.process(1, UP, &data(n), &mut o);
    }
    let hit_interests: Vec<Vec<u8>> = hit_names
        .iter()
        .enumerate()
        .map(|(j, n)| interest(n, 1_000_000 + j as u32))
        .collect();
    // One hit per iteration (the group's throughput was the bursts' before).
    g.throughput(Throughput::Elements(1));
    g.bench_function("cs_hit", |b| {
        let mut k = 0;
        b.iter(|| {
            k = (k + 1) % hits;
            out.clear();
            s.process(2, DOWN, &hit_interests[k], &mut out);
            black_box(out.sends().count())
        })
    });
    eprintln!(
        "cs-hit counters: cs_hits {} of {} Interests",
        s.counters().cs_hits,
        s.counters().interests_in
    );
    // Each sent frame copied into a transmit frame, as the worker's I/O layer does (the
    // `_tx` rows): the hit as the router serves it.
    let mut tx: Vec<Vec<u8>> = (0..64).map(|_| Vec::with_capacity(2048)).collect();
    // The next `burst` hit Interests from the `k`-th on (wrapping), and `k` moved past them.
    let hit_burst = |k: &mut usize, burst: usize| -> Vec<(FaceId, &[u8])> {
        let frames = (0..burst)
            .map(|j| (DOWN, hit_interests[(*k + j) % hits].as_slice()))
            .collect();
        *k = (*k + burst) % hits;
        frames
    };
    for (burst, sent) in [(32usize, false), (64, false), (64, true)] {
        let id = if sent {
            "cs_hit_burst_tx"
        } else {
            "cs_hit_burst"
        };
        g.throughput(Throughput::Elements(burst as u64));
        g.bench_function(BenchmarkId::new(id, burst), |b| {
            let mut k = 0;
            b.iter(|| {
                let frames = hit_burst(&mut k, burst);
                out.clear();
                s.process_burst(2, &frames, &mut out);
                if sent {
                    for (j, o) in Lent::<()>::new().sends(&out, |_| &[]).enumerate() {
                        o.copy_to(&mut tx[j % 64]);
                    }
                }
                black_box(out.sends().count())
            })
        });
    }
    // The reference: the same Data in the same slots, copied out in the same order with the
    // same prefetching, and nothing else (no decode, no lookup): what copying the hits'
    // bytes alone costs on this machine.
    let slab: Vec<u8> = {
        let mut v = vec![0u8; hits * 1200];
        for (j, n) in hit_names.iter().enumerate() {
            let d = data(n);
            v[j * 1200..j * 1200 + d.len()].copy_from_slice(&d);
        }
        v
    };
    let dlen = data(&hit_names[0]).len();
    g.throughput(Throughput::Elements(64));
    g.bench_function(BenchmarkId::new("cs_hit_copy_floor", 64), |b| {
        let mut k = 0;
        let mut arena: Vec<u8> = Vec::with_capacity(1 << 16);
        b.iter(|| {
            arena.clear();
            for j in 0..64 {
                let next = ((k + j + 1) % hits) * 1200;
                ndx_mem::prefetch_lines(&slab[next], dlen);
                let at = ((k + j) % hits) * 1200;
                arena.extend_from_slice(&slab[at..at + dlen]);
            }
            k = (k + 64) % hits;
            black_box(arena.len())
        })
    });
    eprintln!(
        "cs-hit counters after bursts: cs_hits {} of {} Interests",
        s.counters().cs_hits,
        s.counters().interests_in
    );
    drop(s);

    // The same hits from a CS that keeps the frames its Data came in, in keeping bursts
    // followed by the handover, as the router's workers run them.
    let mut s = shard_keeping(hit_reader, hits, 1 << 20, true);
    let mut pool = FramePool::new(hits + 2 * 64);
    for (c, chunk) in hit_names.chunks(64).enumerate() {
        let now = 1 + c as u64;
        let ints: Vec<Vec<u8>> = chunk
            .iter()
            .enumerate()
            .map(|(j, n)| interest(n, (c * 64 + j) as u32))
            .collect();
        out.clear();
        let refs: Vec<(FaceId, &[u8])> = ints.iter().map(|i| (DOWN, i.as_slice())).collect();
        s.process_burst(now, &refs, &mut out);
        let datas: Vec<Vec<u8>> = chunk.iter().map(data).collect();
        let frames = pool.receive(UP, datas.iter().map(Vec::as_slice));
        out.clear();
        let mut lent = Lent::new();
        lent.extend(0..frames.len());
        s.process_burst_keeping(now, &frames, &mut lent, &mut out);
        drop(frames);
        pool.hand_over(&mut s, &mut lent);
        pool.recycle();
    }
    assert_eq!(s.cs().frames_held(), hits, "every hit Data in a kept frame");
    for sent in [false, true] {
        let id = if sent {
            "cs_hit_burst_kept_tx"
        } else {
            "cs_hit_burst_kept"
        };
        g.throughput(Throughput::Elements(64));
        g.bench_function(BenchmarkId::new(id, 64), |b| {
            let mut k = 0;
            let mut lent = Lent::with_capacity(64);
            b.iter(|| {
                let frames = hit_burst(&mut k, 64);
                out.clear();
                lent.extend(0..frames.len());
                s.process_burst_keeping(2, &frames, &mut lent, &mut out);
                let mut n = 0;
                for (j, o) in lent.sends(&out, |&i| frames[i].1).enumerate() {
                    if sent {
                        o.copy_to(&mut tx[j % 64]);
                    }
                    n += o.len();
                }
                // Sent: the handover (no Data to keep).
                s.return_lent(&mut lent, |_, _| None);
                black_box(n)
            })
        });
    }
    let c = s.counters();
    eprintln!(
        "cs-hit counters, kept frames: cs_hits {} of {} Interests",
        c.cs_hits, c.interests_in
    );
    assert_eq!(
        c.cs_hits,
        c.interests_in - hits as u64,
        "every Interest but the setup's hit"
    );
    g.finish();
}

/// Per-operation latencies, the rows of seed 004's Table I.
fn operations(c: &mut Criterion) {
    ndx_benches::huge_pages_from_env();
    let mut g = c.benchmark_group("operation");
    g.throughput(Throughput::Elements(1));
    let names: Vec<NameBuf> = (0..4096u64)
        .map(|j| name_under(j * 7919 % 1_000_000, j))
        .collect();
    let wires: Vec<Vec<u8>> = names
        .iter()
        .enumerate()
        .map(|(j, n)| interest(n, j as u32))
        .collect();
    g.bench_function("parse_interest", |b| {
        let mut k = 0;
        b.iter(|| {
            k = (k + 1) & 4095;
            black_box(Packet::decode(&wires[k]).is_ok())
        })
    });
    g.bench_function("name_prefix_hashes", |b| {
        let mut k = 0;
        let mut h = [0u64; MAX_PREFIX_DEPTH];
        b.iter(|| {
            k = (k + 1) & 4095;
            black_box(prefix_hashes(&KEY, &names[k].as_name(), &mut h))
        })
    });
    let mut dnl = DeadNonceList::new(1 << 16, u64::MAX / 2);
    for j in 0..(1u32 << 16) {
        dnl.insert(0, u64::from(j) * 0x9E37_79B9, j);
    }
    g.bench_function("nonce_lookup", |b| {
        let mut k = 0u32;
        b.iter(|| {
            k = k.wrapping_add(1);
            black_box(dnl.contains(1, u64::from(k) * 0x9E37_79B9, k))
        })
    });
    let mut pit = Pit::new(0, 1 << 16, 0);
    g.bench_function("pit_insert_find_erase", |b| {
        let mut k = 0;
        b.iter(|| {
            k = (k + 1) & 4095;
            let n = names[k].as_name();
            let key = pit_key(KEY.name(&n), false, false);
            let id = pit
                .insert(key, &n, false, false, 4_000_000_000)
                .expect("room");
            black_box(pit.find(key, &n, false, false));
            pit.erase(id)
        })
    });
    // Heavy fixtures are built on first use, so a name filter that skips a bench skips them.
    let fib = std::cell::OnceCell::new();
    let hashes: Vec<[u64; MAX_PREFIX_DEPTH]> = names
        .iter()
        .map(|n| {
            let mut h = [0u64; MAX_PREFIX_DEPTH];
            prefix_hashes(&KEY, &n.as_name(), &mut h);
            h
        })
        .collect();
    g.bench_function("fib_lpm_1e6", |b| {
        let snap = fib.get_or_init(|| fib_with(1_000_000).1).snapshot();
        let mut k = 0;
        b.iter(|| {
            k = (k + 1) & 4095;
            let n = names[k].as_name();
            black_box(snap.lpm(&n, &hashes[k][..n.len()]).is_some())
        })
    });
    // CS lookup among 10^7 entries (small slots so it fits in memory).
    let cs_entries: usize = std::env::var("NDX_BENCH_CS_ENTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let cs_fixture = std::cell::OnceCell::new();
    g.bench_function(BenchmarkId::new("cs_lookup", cs_entries), |b| {
        let (cs, probe, probe_hashes) = cs_fixture.get_or_init(|| big_cs(cs_entries));
        let mut cs = cs.borrow_mut();
        let mut k = 0;
        b.iter(|| {
            k = (k + 1) % probe.len();
            black_box(
                cs.lookup(0, &probe[k].as_name(), probe_hashes[k], false, false)
                    .is_some(),
            )
        })
    });
    g.finish();
}

/// A CS holding `entries` small Data, and 4096 of their names (with hashes) to look up.
fn big_cs(entries: usize) -> (std::cell::RefCell<Cs>, Vec<NameBuf>, Vec<u64>) {
    let mut cs = Cs::new(
        CsConfig {
            capacity: entries,
            slot_size: 160,
            replacement: Replacement::Lru,
            admission: Admission::Always,
            seed: 1,
        },
        KEY,
    );
    let mut probe = Vec::with_capacity(4096);
    for j in 0..entries as u64 {
        let mut n = NameBuf::new();
        n.push_generic(b"c")
            .push_generic(&j.to_be_bytes())
            .push_segment(j & 7);
        let d = DataRepr::new(n.clone(), vec![1; 16])
            .to_vec()
            .expect("Data");
        cs.insert(0, &ndx_codec::Data::decode(&d).expect("Data"), None);
        if j % (entries as u64 / 4096).max(1) == 0 && probe.len() < 4096 {
            probe.push(n);
        }
    }
    let hashes = probe.iter().map(|n| KEY.name(&n.as_name())).collect();
    (std::cell::RefCell::new(cs), probe, hashes)
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = fib_lookup, pipeline, operations
}
criterion_main!(benches);
