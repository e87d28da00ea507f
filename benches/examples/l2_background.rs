//! A shard's forwarding rate with L2 reads in the background, against the same shard without
//! an L2: the cost of the io_uring L2 (`ndx_hcs::Region` on a real file, O_DIRECT) to the
//! forwarding core that drives it.
//!
//! ```text
//! cargo run --release -p ndx-benches --example l2_background -- [--exchanges 20000]
//!     [--sweeps 40] [--passes 5] [--burst 32] [--qd 16] [--batch 16] [--payload 8000] [--size-mib 512]
//!     [--dir /var/tmp] [--bg-rate 0]
//! ```
//!
//! One thread runs one shard (ndx-core) as the router's worker does: bursts of unique-name
//! Interests from a consumer face are forwarded upstream (CS miss, PIT insert, FIB lookup) and
//! their Data come back (PIT match by token, CS insert, sent down). Three shards run the same
//! exchanges, their passes alternating so a shared host's noise falls on all alike:
//!
//! - `none`: no L2 (the reference);
//! - `idle`: an L2 attached (region open, the shard's L2 hooks on) but no L2 traffic;
//! - `busy`: the same, with a second consumer asking, between bursts, for the first segment
//!   of random batches that only the L2 holds, keeping the shard's reads at Q + backlog
//!   (the L2's full depth; `--bg-rate R`: at most R such Interests per second). Each such Interest misses L1, hits the shard's L2 index and is
//!   parked; its read goes to the region (`submit_read`), and every loop turn polls the
//!   region (`poll`, at most one `io_uring_enter`), whose completions (checksummed records)
//!   go to `Shard::on_l2_complete`: the B Data into L1, the parked Interest answered. This
//!   is the glue of `ndx-router`'s `l2.rs`, without its write path (L1 evictions are not
//!   written: the admission is "second hit", which unique names never reach).
//!
//! Prints, per mode, the median exchanges/s over the passes (wall time of the whole loop:
//! the shard, the L2 glue, the polls), the ratio to `none`, and for `busy` the background
//! batches/s and `io_uring_enter` calls per batch read.

use std::time::Instant;

use ndx_benches::{data_with_token, exchange_pair};
use ndx_codec::rng::Rng;
use ndx_codec::{DataRepr, InterestRepr, LpPacket, NameBuf};
use ndx_core::{
    Actions, CsConfig, FaceId, FaceInfo, Fib, HashKey, L2Admission, L2Config, L2Failure, NextHop,
    PIT_TOKEN_LEN, Shard, ShardConfig,
};
use ndx_hcs::{BatchRecord, Completion, L2Backend, Region, RegionConfig, Segment};

/// Consumer of the forwarded exchanges, upstream, and the background consumer.
const CONSUMER: FaceId = FaceId(1);
const UPSTREAM: FaceId = FaceId(2);
const BACKGROUND: FaceId = FaceId(3);
/// L1 slots (each exchange evicts once full).
const CS_SLOTS: usize = 1 << 12;

#[derive(Debug, Clone)]
struct Args {
    exchanges: usize,
    sweeps: u64,
    passes: usize,
    burst: usize,
    qd: usize,
    batch: usize,
    payload: usize,
    size_mib: u64,
    dir: String,
    /// Background Interests per second at most (0: as many as keep the L2 at full depth).
    bg_rate: f64,
}

/// Prints `problem` and the arguments to stderr and exits with status 2.
fn usage(problem: &str) -> ! {
    eprintln!(
        "l2_background: {problem}\nusage: l2_background [--exchanges N] [--sweeps N] [--passes N] \
         [--burst N] [--qd N] [--batch N] [--payload BYTES] [--size-mib N] [--dir DIR] \
         [--bg-rate N]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        exchanges: 20_000,
        sweeps: 40,
        passes: 5,
        burst: 32,
        qd: 16,
        batch: 16,
        payload: 8000,
        size_mib: 512,
        dir: "/var/tmp".into(),
        bg_rate: 0.0,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    for pair in argv.chunks(2) {
        let v = pair.get(1).map(String::as_str).unwrap_or_default();
        let num = |what: &str| -> usize {
            v.parse()
                .unwrap_or_else(|_| usage(&format!("{what} expects a number, got {v:?}")))
        };
        match pair[0].as_str() {
            "--exchanges" => a.exchanges = num("--exchanges").max(2 * CS_SLOTS),
            "--sweeps" => a.sweeps = num("--sweeps").max(1) as u64,
            "--passes" => a.passes = num("--passes").max(1),
            "--burst" => a.burst = num("--burst").max(1),
            "--qd" => a.qd = num("--qd").max(1),
            "--batch" => a.batch = num("--batch").clamp(1, 64),
            "--payload" => a.payload = num("--payload").max(1),
            "--size-mib" => a.size_mib = num("--size-mib") as u64,
            "--dir" => a.dir = v.to_string(),
            "--bg-rate" => a.bg_rate = num("--bg-rate") as f64,
            other => usage(&format!("unknown argument {other}")),
        }
    }
    a
}

/// An Interest, its Data in an LpPacket with a PitToken placeholder, and the token's offset.
type Exchange = (Vec<u8>, Vec<u8>, usize);

fn exchanges(n: usize) -> Vec<Exchange> {
    (0..n as u64)
        .map(|j| {
            let mut nm = NameBuf::new();
            nm.push_generic(b"net")
                .push_generic(format!("site{}", j % 1000).as_bytes())
                .push_generic(format!("obj{j}").as_bytes())
                .push_segment(j % 1000);
            let (interest, d) = exchange_pair(nm, j as u32);
            let (lp, off) = data_with_token(&d);
            (interest, lp, off)
        })
        .collect()
}

/// The name of background content `content`.
fn bg_content(content: u64) -> NameBuf {
    let mut nm = NameBuf::new();
    nm.push_generic(b"l2")
        .push_generic(format!("c{content}").as_bytes());
    nm
}

/// The name of segment `seg` of background content `content`.
fn bg_name(content: u64, seg: u64) -> NameBuf {
    let mut nm = bg_content(content);
    nm.push_segment(seg);
    nm
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    None,
    Idle,
    Busy,
}

/// One mode's shard, its L2 and what it measured.
struct Setup {
    mode: Mode,
    shard: Shard,
    l2: Option<Region>,
    /// Background batches: (content, batch) of every record in the region.
    batches: Vec<(u64, u64)>,
    frames: Vec<Exchange>,
    /// Exchanges/s per pass.
    rates: Vec<f64>,
    /// Background batches delivered, io_uring_enter calls, seconds (over all passes).
    bg: (u64, u64, f64),
}

fn shard(l2: bool, batches: usize, batch: usize, payload: usize) -> Shard {
    let key = HashKey::new(1, 2);
    let (mut fib, reader) = Fib::new(key, 2);
    for prefix in [&b"net"[..], b"l2"] {
        let mut nm = NameBuf::new();
        nm.push_generic(prefix);
        fib.add_nexthop(
            &nm.as_name(),
            NextHop {
                face: UPSTREAM,
                cost: 1,
            },
        )
        .expect("route");
    }
    fib.publish();
    let cfg = ShardConfig {
        cs: CsConfig {
            capacity: CS_SLOTS,
            slot_size: payload + 512,
            ..CsConfig::default()
        },
        hash_key: key,
        l2: l2.then(|| L2Config {
            batch: batch as u64,
            prefetch: false,
            admission: L2Admission::SecondHit { window: 64 },
            max_reads: 64,
            index_capacity: batches.max(1),
            ..L2Config::default()
        }),
        ..ShardConfig::default()
    };
    let mut s = Shard::new(cfg, reader, 0);
    for f in [CONSUMER, UPSTREAM, BACKGROUND] {
        s.add_face(f, FaceInfo::default());
    }
    s
}

/// A region on a fresh file in `dir`, filled with background batches the shard is told about.
fn region(a: &Args, dir: &std::path::Path, shard: &mut Shard) -> (Region, Vec<(u64, u64)>) {
    let key = HashKey::new(1, 2);
    let probe = DataRepr::new(bg_name(u64::MAX, 0xFFFF_FFFF), vec![0; a.payload])
        .to_vec()
        .expect("Data")
        .len();
    let mut cfg = RegionConfig::new(vec![dir.join("l2.dat")], a.size_mib << 20, a.batch, probe);
    cfg.read_depth = a.qd;
    cfg.write_depth = 8;
    let mut r = Region::create(cfg)
        .and_then(|r| r.with_read_backlog(a.qd))
        .expect("create region (io_uring)");
    let capacity = (r.config().file_size / r.config().max_record as u64) as usize;
    let mut batches = Vec::new();
    let b = a.batch as u64;
    for i in 0..capacity as u64 {
        let (content, batch) = (i / 4, i % 4);
        let mut frames = Vec::new();
        let mut keys = Vec::new();
        for seg in batch * b..(batch + 1) * b {
            let nm = bg_name(content, seg);
            let mut d = DataRepr::new(nm.clone(), vec![seg as u8; a.payload]);
            d.freshness_ms = Some(10_000);
            frames.push(d.to_vec().expect("Data"));
            keys.push(key.name(&nm.as_name()));
        }
        let segs: Vec<Segment<'_>> = frames
            .iter()
            .zip(&keys)
            .map(|(f, &k)| Segment {
                name_key: k,
                frame: f,
            })
            .collect();
        let (content_key, kb) = shard
            .l2_key(&bg_name(content, batch * b).as_name())
            .expect("an L2 key");
        assert_eq!(kb, batch);
        let content_name = bg_content(content);
        let rec = BatchRecord {
            content_key,
            batch,
            content_name: content_name.as_name().as_bytes(),
            segments: &segs,
        };
        while let Err(e) = r.submit_write(&rec, i) {
            assert_eq!(e, ndx_hcs::SubmitError::Busy, "fill: {e}");
            r.wait(1, &mut |_| {});
        }
        batches.push((content, batch));
    }
    while r.in_flight() > 0 {
        r.wait(1, &mut |c| {
            if let Completion::Write { result, .. } = c {
                result.expect("fill write");
            }
        });
    }
    for &(content, batch) in &batches {
        let (k, b) = shard
            .l2_key(&bg_name(content, batch * a.batch as u64).as_name())
            .expect("key");
        assert!(r.lookup(k, b).is_some(), "batch written");
        shard.on_l2_written(k, b, true);
    }
    (r, batches)
}

/// Carries out the L2 requests in `out`: reads go to the region (a refused one fails at once,
/// the parked Interests then go upstream); writes are dropped (not measured here).
/// Hands a finished L2 read to the shard, as the router's worker does.
fn deliver(shard: &mut Shard, now: u64, c: Completion<'_>, out: &mut Actions) {
    if let Completion::Read {
        request_id, result, ..
    } = c
    {
        let result = result
            .map(|v| v.segments().map(|s| (s.name_key, s.frame)))
            .map_err(|_| L2Failure::Io);
        shard.on_l2_complete(now, request_id, result, out);
    }
}

fn execute(now: u64, shard: &mut Shard, l2: &mut Region, out: &Actions, spill: &mut Actions) {
    for w in out.l2_writes() {
        shard.on_l2_written(w.content_key, w.batch, false);
    }
    for r in out.l2_reads() {
        let ok = l2
            .lookup(r.content_key, r.batch)
            .is_some_and(|loc| l2.submit_read(loc, r.request).is_ok());
        if !ok {
            shard.on_l2_complete(
                now,
                r.request,
                Err::<[(u64, &[u8]); 0], _>(L2Failure::Io),
                spill,
            );
        }
    }
}

/// One pass: `sweeps` times the exchanges (and, `busy`, the background); returns
/// exchanges/s. Sweeps are 10 s of shard time apart (`t0` is the first one's start): the
/// dead-nonce list has forgotten the previous sweep's Interests, and L1 (smaller than a
/// sweep) its Data.
fn pass(st: &mut Setup, a: &Args, sweeps: u64, t0: u64, rng: &mut Rng) -> f64 {
    let (mut out, mut l2out, mut spill) = (Actions::new(), Actions::new(), Actions::new());
    let n = st.frames.len();
    let target = 2 * a.qd;
    let enters0 = st.l2.as_ref().map_or(0, |r| r.counters().ring_enters);
    let mut bg_done = 0u64;
    let mut nonce = 0x8000_0000u32;
    let mut bg_sent = 0u64;
    let start = Instant::now();
    let groups = n.div_ceil(a.burst);
    for step in 0..sweeps as usize * groups {
        let (sweep, g) = (step / groups, step % groups);
        let t = t0 + sweep as u64 * 10_000_000_000 + g as u64 * 1000;
        let group = &mut st.frames[g * a.burst..((g + 1) * a.burst).min(n)];
        let interests: Vec<(FaceId, &[u8])> =
            group.iter().map(|(i, _, _)| (CONSUMER, &i[..])).collect();
        out.clear();
        st.shard.process_burst(t, &interests, &mut out);
        let mut forwarded = 0;
        for ((face, f), (_, data, off)) in out
            .sends()
            .filter(|s| s.0 == UPSTREAM)
            .zip(group.iter_mut())
        {
            debug_assert_eq!(face, UPSTREAM);
            let lp = LpPacket::decode(f).expect("an LpPacket");
            data[*off..*off + PIT_TOKEN_LEN].copy_from_slice(lp.pit_token().expect("token"));
            forwarded += 1;
        }
        assert_eq!(forwarded, group.len(), "every Interest forwarded");
        if let Some(l2) = st.l2.as_mut() {
            execute(t, &mut st.shard, l2, &out, &mut spill);
        }
        let data: Vec<(FaceId, &[u8])> = group.iter().map(|(_, d, _)| (UPSTREAM, &d[..])).collect();
        out.clear();
        st.shard.process_burst(t + 500, &data, &mut out);
        assert_eq!(
            out.sends().filter(|s| s.0 == CONSUMER).count(),
            group.len(),
            "every Data sent down"
        );
        let Some(l2) = st.l2.as_mut() else { continue };
        execute(t + 500, &mut st.shard, l2, &out, &mut spill);
        if st.mode == Mode::Busy {
            // Keep the L2 at its full depth with Interests only it can answer.
            let mut tries = 0;
            let allowed = if a.bg_rate > 0.0 {
                (a.bg_rate * start.elapsed().as_secs_f64()) as u64
            } else {
                u64::MAX
            };
            while l2.in_flight() < target && tries < target && bg_sent < allowed {
                bg_sent += 1;
                tries += 1;
                let (content, batch) = st.batches[rng.below(st.batches.len() as u64) as usize];
                let mut i = InterestRepr::new(bg_name(content, batch * a.batch as u64));
                nonce = nonce.wrapping_add(1);
                i.nonce = Some(nonce);
                i.lifetime_ms = Some(4000);
                let wire = i.to_vec().expect("Interest");
                out.clear();
                st.shard.process(t + 600, BACKGROUND, &wire, &mut out);
                bg_done += out.sends().filter(|s| s.0 == BACKGROUND).count() as u64;
                execute(t + 600, &mut st.shard, l2, &out, &mut spill);
            }
        }
        // The worker's L2 poll: nothing to do (no call) when nothing is in flight.
        if l2.in_flight() > 0 {
            l2out.clear();
            let shard = &mut st.shard;
            l2.poll(&mut |c| deliver(shard, t + 700, c, &mut l2out));
            bg_done += l2out.sends().filter(|s| s.0 == BACKGROUND).count() as u64;
            execute(t + 700, &mut st.shard, l2, &l2out, &mut spill);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    // Drain the background (untimed) so the next pass starts from an idle L2.
    if let Some(l2) = st.l2.as_mut() {
        let shard = &mut st.shard;
        let t = t0 + sweeps * 10_000_000_000;
        while l2.in_flight() > 0 {
            l2.wait(1, &mut |c| deliver(shard, t, c, &mut spill));
            spill.clear();
        }
        let enters = l2.counters().ring_enters - enters0;
        st.bg.0 += bg_done;
        st.bg.1 += enters;
        st.bg.2 += secs;
    }
    (sweeps as usize * n) as f64 / secs
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let a = parse_args();
    let dir = std::path::Path::new(&a.dir).join(format!("ndx-l2-bg-{}", std::process::id()));
    let frames = exchanges(a.exchanges);
    let batches_cap = ((a.size_mib << 20) / 4096) as usize;
    let mut setups = Vec::new();
    for mode in [Mode::None, Mode::Idle, Mode::Busy] {
        let mut shard = shard(mode != Mode::None, batches_cap, a.batch, a.payload);
        let (l2, batches) = if mode == Mode::None {
            (None, Vec::new())
        } else {
            let sub = dir.join(format!("{mode:?}"));
            std::fs::create_dir_all(&sub).expect("mode dir");
            let (r, b) = region(&a, &sub, &mut shard);
            (Some(r), b)
        };
        setups.push(Setup {
            mode,
            shard,
            l2,
            batches,
            frames: frames.clone(),
            rates: Vec::new(),
            bg: (0, 0, 0.0),
        });
    }
    let r = setups[2].l2.as_ref().expect("busy has an L2");
    println!(
        "{} x {} exchanges per pass, burst {}, {} passes; L2: {} batches of {} x {} B Data \
         ({} B records), Q={} + backlog {}, O_DIRECT={}, registered buffers={}",
        a.sweeps,
        a.exchanges,
        a.burst,
        a.passes,
        setups[2].batches.len(),
        a.batch,
        a.payload,
        r.config().max_record,
        a.qd,
        r.read_backlog(),
        r.direct_io(),
        r.registered_buffers()
    );
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    // A warm-up pass each (discarded), then passes in a rotating order.
    for st in &mut setups {
        pass(st, &a, 1, 0, &mut rng);
        st.rates.clear();
        st.bg = (0, 0, 0.0);
    }
    println!("pass  none exch/s  idle exch/s  busy exch/s  busy/none  bg batches/s");
    for p in 0..a.passes {
        let t0 = (1 + p as u64 * a.sweeps) * 10_000_000_000;
        let mut row = [0.0; 3];
        let bg_before = setups[2].bg;
        for k in 0..3 {
            let i = (k + p) % 3;
            row[i] = pass(&mut setups[i], &a, a.sweeps, t0, &mut rng);
            setups[i].rates.push(row[i]);
        }
        let bg = setups[2].bg;
        println!(
            "{p:>4}  {:>11.0}  {:>11.0}  {:>11.0}  {:>9.2}  {:>12.0}",
            row[0],
            row[1],
            row[2],
            row[2] / row[0],
            (bg.0 - bg_before.0) as f64 / (bg.2 - bg_before.2)
        );
    }
    let none = median(&setups[0].rates);
    for st in &setups {
        let m = median(&st.rates);
        print!(
            "{:?}: median {m:.0} exchanges/s, {:.3} of none",
            st.mode,
            m / none
        );
        if st.mode == Mode::Busy {
            let (done, enters, secs) = st.bg;
            print!(
                "; background {:.0} batches/s ({:.0} MiB/s), io_uring_enter per batch read {:.2}",
                done as f64 / secs,
                done as f64 * st.l2.as_ref().map_or(0, |r| r.config().max_record) as f64
                    / secs
                    / 1048576.0,
                enters as f64 / done.max(1) as f64
            );
        }
        println!();
        let c = st.shard.counters();
        if let Some(l2) = st.shard.l2_counters() {
            let io = st.l2.as_ref().map(|r| r.counters()).unwrap_or_default();
            println!(
                "  shard L2: {l2:?}; store: reads {} ok {} corrupt {} busy {}",
                io.reads, io.reads_ok, io.corrupt, io.busy
            );
            assert_eq!(io.corrupt, 0, "no corrupt record");
            if st.mode == Mode::Busy {
                assert!(l2.served > 0, "background Interests answered from L2");
            }
        }
        eprintln!("  shard: {c:?}");
    }
    drop(setups);
    std::fs::remove_dir_all(&dir).expect("remove the bench directory");
}
