//! Runs N worst-case Interest/Data exchanges through one shard (CS miss, PIT insert, FIB LPM
//! among `NDX_EXAMPLE_FIB` routes, default 10^3; Data echoing our PIT token) and prints the
//! time spent inside the shard per exchange, the fastest and the median of
//! `NDX_EXAMPLE_REPEAT` passes. `NDX_EXAMPLE_FIB` may list several sizes
//! (`1000,1000000`): each gets its own shard and exchanges, and their passes alternate, so
//! that a shared host's noise falls on every size alike.
//!
//! The Data echo the PitToken the router put on each forwarded Interest, as NFD, ndnd and
//! NDN-DPDK producers and forwarders do, so the router finds the PIT entry in O(1);
//! `NDX_EXAMPLE_TOKENS=0` sends bare Data instead (an upstream that does not speak NDNLPv2),
//! which the router matches by name.
//!
//! Frames are built beforehand. Before each burst they are copied into a small receive ring,
//! as the kernel copies a frame into the UMEM just before the router reads it, so the shard
//! finds them in cache as it would in the data path; `NDX_EXAMPLE_COLD=1` reads them where
//! they were built instead (from DRAM once N is large). Only the `Shard` calls are timed:
//! the ring copies and writing each returned token into its Data are not.
//!
//! Instruction counts, which unlike wall time are repeatable on a shared machine:
//!
//! ```sh
//! cargo build --release -p ndx-benches --example exchange
//! valgrind --tool=callgrind --toggle-collect='*Shard::process*' \
//!     --callgrind-out-file=/tmp/cg.out target/release/examples/exchange 20000 [BURST]
//! callgrind_annotate /tmp/cg.out | grep 'PROGRAM TOTALS'
//! ```
//! Divide the total by the number of exchanges (`BURST` > 1 uses `Shard::process_burst`).

use ndx_benches::{FramePool, PoolFrame, data_with_token, exchange_pair};
use ndx_codec::{LpPacket, NameBuf};
use ndx_core::{
    Actions, CsConfig, FaceId, FaceInfo, Fib, HashKey, Lent, NextHop, PIT_TOKEN_LEN, Replacement,
    Shard, ShardConfig,
};

/// The router's allocator: large tables on transparent huge pages (`NDX_BENCH_HUGE=0` gives
/// them base pages, the reference).
#[global_allocator]
static ALLOC: ndx_mem::HugePages = ndx_mem::HugePages;

fn name(i: u64) -> NameBuf {
    let mut n = NameBuf::new();
    n.push_generic(b"net")
        .push_generic(format!("site{}", i / 64).as_bytes())
        .push_generic(format!("host{i}").as_bytes());
    n
}

/// An Interest, and its Data: in an LpPacket whose PitToken (a placeholder until the Interest
/// is forwarded) starts at the given offset, or bare.
type Exchange = (Vec<u8>, Vec<u8>, Option<usize>);

/// Where the shard reads its frames from.
struct Rx {
    /// Read the frames where they were built (`NDX_EXAMPLE_COLD=1`): with 10^5 exchanges
    /// (110 MB of Data) every frame comes from DRAM.
    cold: bool,
    /// Otherwise each burst is first copied into these buffers, as the kernel copies a
    /// received frame into the UMEM just before the router reads it (untimed).
    /// One ring for the Interests, one for the Data.
    rings: [Vec<Vec<u8>>; 2],
    /// Lend the Data frames to the shard (`Shard::process_burst_lent`), as the router's
    /// worker does, so each Data is sent down from its frame; `NDX_EXAMPLE_LEND=0` has the
    /// shard copy it into the action list instead (the reference).
    lend: bool,
    /// Let the CS keep the Data frames it admits (`Shard::process_burst_keeping`) instead
    /// of copying the Data into its slab, as the router's worker keeps its UMEM frames;
    /// `NDX_EXAMPLE_KEEP=0` copies (the reference, and the worker with
    /// `cs.keep_frames = false`). The Data are then received into frames of `pool`.
    keep: bool,
    /// The frames the CS may keep (empty unless it keeps them).
    pool: FramePool,
}

/// The CS's slots (each exchange evicts once it is full).
const CS_SLOTS: usize = 1 << 12;

impl Rx {
    fn new(burst: usize) -> Self {
        Self {
            cold: std::env::var("NDX_EXAMPLE_COLD").is_ok_and(|v| v == "1"),
            rings: [(); 2].map(|_| (0..burst).map(|_| Vec::with_capacity(2048)).collect()),
            lend: std::env::var("NDX_EXAMPLE_LEND").map_or(true, |v| v != "0"),
            keep: std::env::var("NDX_EXAMPLE_KEEP").map_or(true, |v| v != "0"),
            pool: FramePool::new(0),
        }
    }

    /// Whether the Data frames are received into frames the CS may keep.
    fn keeping(&self, burst: usize) -> bool {
        self.keep && self.lend && !self.cold && burst > 1
    }

    /// The burst `frames`, received on `face`: copied into ring `ring`, or where they are.
    fn receive<'a>(
        &'a mut self,
        ring: usize,
        face: FaceId,
        frames: impl Iterator<Item = &'a [u8]>,
    ) -> Vec<(FaceId, &'a [u8])> {
        if self.cold {
            return frames.map(|f| (face, f)).collect();
        }
        let ring = &mut self.rings[ring];
        let mut n = 0;
        for (buf, f) in ring.iter_mut().zip(frames) {
            buf.clear();
            buf.extend_from_slice(f);
            n += 1;
        }
        ring[..n].iter().map(|b| (face, &b[..])).collect()
    }
}

/// The exchange loop; returns the nanoseconds spent inside the shard on the Interests and on
/// the Data. The Data frames are
/// built beforehand; only the token the router gave each forwarded Interest is written into
/// its Data here, as a producer would echo it. Each burst's Data come back `lag` bursts
/// after its Interests (0: at once), so that `lag` bursts of Interests are pending.
#[inline(never)]
fn run(
    shard: &mut Shard<PoolFrame>,
    frames: &mut [Exchange],
    burst: usize,
    t0: u64,
    rx: &mut Rx,
    lag: usize,
) -> [u128; 2] {
    let mut out = Actions::new();
    let mut lent: Lent<usize> = Lent::with_capacity(burst);
    let mut inside = [0; 2];
    let mut timed = |part: usize, f: &mut dyn FnMut()| {
        let t = std::time::Instant::now();
        f();
        inside[part] += t.elapsed().as_nanos();
    };
    let groups = frames.len().div_ceil(burst);
    let n = frames.len();
    let range = |g: usize| g * burst..((g + 1) * burst).min(n);
    for g in 0..groups + lag {
        let t = t0 + g as u64 * 1000;
        if g < groups {
            let group = &mut frames[range(g)];
            let interests = rx.receive(0, FaceId(1), group.iter().map(|(i, _, _)| &i[..]));
            out.clear();
            timed(0, &mut || {
                if burst == 1 {
                    shard.process(t, interests[0].0, interests[0].1, &mut out);
                } else {
                    shard.process_burst(t, &interests, &mut out);
                }
            });
            // Echo each forwarded Interest's token in its Data (untimed, as the producer
            // does).
            for ((_, f), (_, data, off)) in out.sends().zip(group.iter_mut()) {
                let lp = LpPacket::decode(f).expect("Interest forwarded in an LpPacket");
                let token = lp.pit_token().expect("with our token");
                if let Some(off) = *off {
                    data[off..off + PIT_TOKEN_LEN].copy_from_slice(token);
                }
            }
        }
        let Some(d) = g.checked_sub(lag) else {
            continue;
        };
        let group = &frames[range(d)];
        let lend = rx.lend;
        if rx.keeping(burst) {
            let data = rx
                .pool
                .receive(FaceId(2), group.iter().map(|(_, d, _)| &d[..]));
            out.clear();
            lent.extend(0..data.len());
            timed(1, &mut || {
                shard.process_burst_keeping(t + 500, &data, &mut lent, &mut out)
            });
            let down = lent.sends(&out, |&k| data[k].1).count();
            assert_eq!(down, data.len(), "every Data sent down");
            drop(data);
            let pool = &mut rx.pool;
            timed(1, &mut || pool.hand_over(shard, &mut lent));
            rx.pool.recycle();
            continue;
        }
        let data = rx.receive(1, FaceId(2), group.iter().map(|(_, d, _)| &d[..]));
        out.clear();
        if lend {
            lent.extend(0..data.len());
        }
        timed(1, &mut || match (burst, lend) {
            (1, true) => shard.process_lent(t + 500, data[0].0, data[0].1, &mut lent, &mut out),
            (1, false) => shard.process(t + 500, data[0].0, data[0].1, &mut out),
            (_, true) => shard.process_burst_lent(t + 500, &data, &mut lent, &mut out),
            (_, false) => shard.process_burst(t + 500, &data, &mut out),
        });
        // Each Data went down, from the frame it came in (untimed: the worker's copy into
        // its transmit frame, which it makes either way).
        let down = lent.sends(&out, |&k| data[k].1).count();
        assert_eq!(down, data.len(), "every Data sent down");
        shard.return_lent(&mut lent, |_, _| None);
    }
    inside
}

/// Interests for the Data the last pass cached, in bursts; prints the fastest pass.
/// `NDX_EXAMPLE_TX=1` also copies each frame to send into a transmit buffer, as the worker's
/// I/O layer does (timed): the hit as the router serves it.
fn cs_hits(shard: &mut Shard<PoolFrame>, frames: &[Exchange], burst: usize, repeat: u32) {
    let cached = &frames[frames.len().saturating_sub(4096)..];
    let tx_copy = std::env::var("NDX_EXAMPLE_TX").is_ok_and(|v| v == "1");
    let mut tx: Vec<Vec<u8>> = (0..burst).map(|_| Vec::with_capacity(2048)).collect();
    let mut out = Actions::new();
    let mut best = f64::MAX;
    let before = shard.counters().cs_hits;
    for r in 0..repeat.max(1) {
        let t0 = std::time::Instant::now();
        for group in cached.chunks(burst) {
            out.clear();
            if burst == 1 {
                shard.process(
                    1_000_000_000_000 + u64::from(r),
                    FaceId(1),
                    &group[0].0,
                    &mut out,
                );
            } else {
                let batch: Vec<(FaceId, &[u8])> = group
                    .iter()
                    .map(|(i, _, _)| (FaceId(1), i.as_slice()))
                    .collect();
                shard.process_burst(1_000_000_000_000 + u64::from(r), &batch, &mut out);
            }
            if tx_copy {
                for (j, o) in Lent::<()>::new().sends(&out, |_| &[]).enumerate() {
                    o.copy_to(&mut tx[j]);
                }
            }
        }
        best = best.min(t0.elapsed().as_nanos() as f64 / cached.len() as f64);
    }
    let hits = shard.counters().cs_hits - before;
    assert_eq!(
        hits,
        cached.len() as u64 * u64::from(repeat.max(1)),
        "all hits"
    );
    eprintln!(
        "CS hits: fastest of {repeat}: {best:.0} ns per hit ({:.2} M/s), burst {burst}{}",
        1e3 / best,
        if tx_copy {
            ", each copied to a transmit buffer"
        } else {
            ""
        }
    );
}

/// One FIB size's fixture: its shard (with its own FIB) and its exchanges.
struct Setup {
    routes: u64,
    shard: Shard<PoolFrame>,
    frames: Vec<Exchange>,
    /// Each pass's time per exchange: total, Interests, Data (ns).
    passes: Vec<[f64; 3]>,
}

/// The shard and `n` exchanges for a FIB of `routes` routes.
fn setup(routes: u64, n: u64, env: &Env) -> Setup {
    let key = HashKey::new(1, 2);
    let (mut fib, reader) = Fib::new(key, 2);
    for i in 0..routes {
        fib.add_nexthop(
            &name(i).as_name(),
            NextHop {
                face: FaceId(2),
                cost: 1,
            },
        )
        .expect("route");
    }
    fib.publish();
    let cfg = ShardConfig {
        pit_capacity: env.pit_capacity,
        cs: CsConfig {
            capacity: CS_SLOTS,
            slot_size: 1200,
            replacement: env.replacement,
            ..CsConfig::default()
        },
        hash_key: key,
        ..ShardConfig::default()
    };
    // Its CS may keep the Vec frames the Data are received into (`Rx::keep`).
    let mut shard = Shard::with_frames::<PoolFrame>(cfg, reader, 0);
    shard.add_face(FaceId(1), FaceInfo::default());
    shard.add_face(FaceId(2), FaceInfo::default());
    let frames = (0..n)
        .map(|j| {
            let mut nm = name(j.wrapping_mul(2_654_435_761) % routes);
            nm.push_generic(b"video")
                .push_generic(format!("obj{j}").as_bytes())
                .push_segment(j % 1000);
            let (i, d) = exchange_pair(nm, j as u32);
            let (d, off) = if env.tokens {
                let (lp, off) = data_with_token(&d);
                (lp, Some(off))
            } else {
                (d, None)
            };
            (i, d, off)
        })
        .collect();
    Setup {
        routes,
        shard,
        frames,
        passes: Vec::new(),
    }
}

/// The example's settings from the environment.
struct Env {
    /// `NDX_EXAMPLE_CS_POLICY`: lru (the default), fifo or clock; every exchange evicts once
    /// the store is full.
    replacement: Replacement,
    /// `NDX_EXAMPLE_PENDING=p`: each Data comes back once p more Interests have arrived (in
    /// whole bursts), as over a link whose round trip holds p Interests; their PIT entries
    /// are then that old when the Data reads them (default 0: at once, entries still in
    /// cache).
    pending: usize,
    pit_capacity: usize,
    /// `NDX_EXAMPLE_TOKENS=0`: bare Data, matched by name.
    tokens: bool,
}

impl Env {
    fn from_env() -> Self {
        let replacement = match std::env::var("NDX_EXAMPLE_CS_POLICY").as_deref() {
            Err(_) | Ok("lru") => Replacement::Lru,
            Ok("fifo") => Replacement::Fifo,
            Ok("clock") => Replacement::Clock,
            Ok(other) => panic!("NDX_EXAMPLE_CS_POLICY={other}: expected lru, fifo or clock"),
        };
        let pending: usize = std::env::var("NDX_EXAMPLE_PENDING")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Self {
            replacement,
            pending,
            pit_capacity: (1 << 16).max((4 * pending).next_power_of_two()),
            tokens: std::env::var("NDX_EXAMPLE_TOKENS").map_or(true, |v| v != "0"),
        }
    }
}

/// The median of `xs` (sorted in place; the upper one of an even count).
fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    ndx_benches::huge_pages_from_env();
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    // Routes (default 1000; NDX_EXAMPLE_FIB=1000000 for the seed-001 worst case). Several
    // sizes, comma-separated, build one shard each and alternate their passes, so that the
    // host's noise falls on all of them alike.
    let sizes: Vec<u64> = std::env::var("NDX_EXAMPLE_FIB")
        .unwrap_or_else(|_| "1000".into())
        .split(',')
        .map(|v| {
            v.trim()
                .parse()
                .unwrap_or_else(|_| panic!("NDX_EXAMPLE_FIB={v}: expected route counts"))
        })
        .collect();
    let burst: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1)
        .max(1);
    // NDX_EXAMPLE_REPEAT=k: time k passes (per FIB size) and print the fastest and median.
    let repeat: u32 = std::env::var("NDX_EXAMPLE_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let env = Env::from_env();
    let lag = env.pending.div_ceil(burst);
    assert!(
        lag * burst < env.pit_capacity,
        "NDX_EXAMPLE_PENDING={}: more than the PIT holds ({})",
        env.pending,
        env.pit_capacity
    );
    let mut setups: Vec<Setup> = sizes.iter().map(|&r| setup(r, n, &env)).collect();
    let mut rx = Rx::new(burst);
    if rx.keeping(burst) {
        // Every shard's CS may hold a frame per slot, and a burst is in flight.
        rx.pool = FramePool::new(setups.len() * CS_SLOTS + 2 * burst);
    }
    for r in 0..repeat {
        for st in &mut setups {
            // Passes 10 s apart: the dead-nonce list (6 s) has forgotten the previous pass.
            let inside = run(
                &mut st.shard,
                &mut st.frames,
                burst,
                u64::from(r) * 10_000_000_000,
                &mut rx,
                lag,
            );
            let [i, d] = inside.map(|ns| ns as f64 / n as f64);
            st.passes.push([i + d, i, d]);
        }
    }
    let admission = if rx.keeping(burst) {
        "frames kept"
    } else {
        "Data copied"
    };
    for st in &setups {
        let best = st
            .passes
            .iter()
            .copied()
            .min_by(|a, b| a[0].total_cmp(&b[0]))
            .expect("a pass");
        let mut totals: Vec<f64> = st.passes.iter().map(|p| p[0]).collect();
        eprintln!(
            "fastest of {repeat}: {:.0} ns per exchange ({:.2} M/s), burst {burst}, {} routes \
             (Interests {:.0} ns, Data {:.0} ns); median {:.0} ns; CS: {admission}",
            best[0],
            1e3 / best[0],
            st.routes,
            best[1],
            best[2],
            median(&mut totals),
        );
    }
    let st = &mut setups[0];
    if std::env::var_os("NDX_EXAMPLE_CS_HIT").is_some() {
        cs_hits(&mut st.shard, &st.frames, burst, repeat);
        return;
    }
    for st in &setups {
        let c = st.shard.counters();
        assert_eq!(
            (c.interests_out, c.data_out),
            (n * u64::from(repeat), n * u64::from(repeat)),
            "every exchange completed"
        );
        // Which path the Data took: by our token (O(1)) or, without tokens, by name.
        let expect_by_token = if env.tokens { c.data_in } else { 0 };
        assert_eq!(c.by_token, expect_by_token, "Data matched by token");
        let cs = st.shard.cs().counters();
        if rx.keeping(burst) {
            // Zero-copy admission: every Data stored in the frame it came in, and the store
            // holds no more frames than slots.
            assert_eq!(cs.kept, cs.insertions, "every admitted Data kept its frame");
            assert!(st.shard.cs().frames_held() <= st.shard.cs().len());
        } else {
            assert_eq!(cs.kept, 0, "no frame kept");
        }
        eprintln!("{n} exchanges, {} routes: {c:?}; {cs:?}", st.routes);
    }
}
