//! Forwarding-core benchmarks (issue 3): FIB lookup vs FIB size, the worst-case Interest and
//! Data paths (seed 001's red and blue paths), CS hits, and a per-operation latency table in
//! the form of seed 004's Table I. Bytes per table entry are printed at start-up.
//!
//! `cargo bench -p ndx-benches --bench forwarding`; set `NDX_BENCH_FIB_MAX=1000000` to stop
//! the FIB sweep earlier (10^7 prefixes take ~2 GB and a minute to build).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndx_codec::{DataRepr, InterestRepr, LpHeaders, LpPacket, NameBuf, Packet};
use ndx_core::{
    Actions, Admission, Cs, CsConfig, DeadNonceList, FaceId, FaceInfo, Fib, HashKey,
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

fn shard(reader: ndx_core::FibReader, cs_capacity: usize) -> Shard {
    let cfg = ShardConfig {
        pit_capacity: 1 << 20,
        cs: CsConfig {
            capacity: cs_capacity,
            slot_size: 1200,
            ..CsConfig::default()
        },
        hash_key: KEY,
        ..ShardConfig::default()
    };
    let mut s = Shard::new(cfg, reader, 0);
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

fn pipeline(c: &mut Criterion) {
    ndx_benches::huge_pages_from_env();
    // The seed-001 worst case uses 10^6 prefixes; NDX_BENCH_PIPELINE_FIB changes it.
    let routes: u64 = std::env::var("NDX_BENCH_PIPELINE_FIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let (_fib, reader) = fib_with(routes);
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(5));

    // Worst case (seed 001): every Interest misses the CS and the PIT and does a FIB LPM
    // among 10^6 prefixes; its Data then comes back with our PIT token.
    const N: usize = 1 << 16;
    let names: Vec<NameBuf> = (0..N as u64)
        .map(|j| name_under((j * 2_654_435_761) % routes, j))
        .collect();
    let mut interests: Vec<(Vec<u8>, usize)> = names
        .iter()
        .enumerate()
        .map(|(j, n)| {
            let w = interest(n, j as u32);
            let pattern = [&[0x0a, 0x04][..], &(j as u32).to_be_bytes()].concat();
            let at = w.windows(6).position(|x| x == pattern).expect("Nonce TLV") + 2;
            (w, at)
        })
        .collect();
    let mut datas: Vec<(Vec<u8>, usize)> = names.iter().map(data_with_token).collect();
    let mut s = shard(reader.clone(), 1 << 14);
    let mut out = Actions::new();
    let mut round = 0u32;
    // Criterion calls this closure several times: the position must survive between calls,
    // or nonces would repeat and the loop detector would (rightly) drop the Interests.
    let mut k = 0;
    g.bench_function("exchange_worst_case", |b| {
        b.iter(|| {
            k = (k + 1) % N;
            if k == 0 {
                round += 1;
            }
            // A fresh nonce each round so the dead-nonce list does not flag a loop.
            let (int, nonce_at) = &mut interests[k];
            int[*nonce_at..*nonce_at + 4]
                .copy_from_slice(&(k as u32 ^ round.rotate_left(16)).to_be_bytes());
            out.clear();
            s.process(
                u64::from(round) * 10_000_000_000 + k as u64 * 100,
                DOWN,
                int,
                &mut out,
            );
            let (d, off) = &mut datas[k];
            if let Some(t) = out.sends().next().and_then(|(_, f)| our_token(f)) {
                d[*off..*off + PIT_TOKEN_LEN].copy_from_slice(t);
            }
            out.clear();
            s.process(
                u64::from(round) * 10_000_000_000 + k as u64 * 100 + 50,
                UP,
                d,
                &mut out,
            );
            black_box(out.sends().count())
        })
    });
    eprintln!("worst-case counters: {:?}", s.counters());
    // The Data path measured is the token one (the upstream echoes our PitToken).
    assert_eq!(
        s.counters().by_token,
        s.counters().data_in,
        "Data matched by token"
    );

    // The same exchanges in bursts (`Shard::process_burst`): B Interests, then their B Data.
    for burst in [32usize, 64] {
        let mut s = shard(reader.clone(), 1 << 14);
        let mut k = 0usize;
        let mut round = 0u32;
        g.throughput(Throughput::Elements(burst as u64));
        g.bench_function(BenchmarkId::new("exchange_worst_case_burst", burst), |b| {
            b.iter(|| {
                let first = k;
                for j in 0..burst {
                    let at = (first + j) % N;
                    if at == 0 {
                        round += 1;
                    }
                    let (int, nonce_at) = &mut interests[at];
                    int[*nonce_at..*nonce_at + 4]
                        .copy_from_slice(&(at as u32 ^ round.rotate_left(16)).to_be_bytes());
                }
                k = (first + burst) % N;
                let now = u64::from(round) * 10_000_000_000 + first as u64 * 100;
                let frames: Vec<(FaceId, &[u8])> = (0..burst)
                    .map(|j| (DOWN, interests[(first + j) % N].0.as_slice()))
                    .collect();
                out.clear();
                s.process_burst(now, &frames, &mut out);
                for (j, (_, f)) in out.sends().enumerate().take(burst) {
                    if let Some(t) = our_token(f) {
                        let (d, off) = &mut datas[(first + j) % N];
                        d[*off..*off + PIT_TOKEN_LEN].copy_from_slice(t);
                    }
                }
                let frames: Vec<(FaceId, &[u8])> = (0..burst)
                    .map(|j| (UP, datas[(first + j) % N].0.as_slice()))
                    .collect();
                out.clear();
                s.process_burst(now + 50, &frames, &mut out);
                black_box(out.sends().count())
            })
        });
        let c = s.counters();
        eprintln!(
            "worst-case burst {burst}: {} Interests out, {} Data out of {} in, drops {:?}",
            c.interests_out, c.data_out, c.data_in, c.drops
        );
        assert_eq!(c.by_token, c.data_in, "Data matched by token");
    }
    g.throughput(Throughput::Elements(1));

    // CS hits: Interests for Data already cached.
    let mut s = shard(reader, 1 << 14);
    let hit_names = &names[..1 << 14];
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
    g.bench_function("cs_hit", |b| {
        let mut k = 0;
        b.iter(|| {
            k = (k + 1) & ((1 << 14) - 1);
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
    for burst in [32usize, 64] {
        g.throughput(Throughput::Elements(burst as u64));
        g.bench_function(BenchmarkId::new("cs_hit_burst", burst), |b| {
            let mut k = 0;
            b.iter(|| {
                let frames: Vec<(FaceId, &[u8])> = (0..burst)
                    .map(|j| (DOWN, hit_interests[(k + j) & ((1 << 14) - 1)].as_slice()))
                    .collect();
                k = (k + burst) & ((1 << 14) - 1);
                out.clear();
                s.process_burst(2, &frames, &mut out);
                black_box(out.sends().count())
            })
        });
    }
    eprintln!(
        "cs-hit counters after bursts: cs_hits {} of {} Interests",
        s.counters().cs_hits,
        s.counters().interests_in
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
