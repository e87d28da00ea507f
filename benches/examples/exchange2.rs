//! Multi-shard scaling of the engine (issue 37, part 4): worst-case exchanges, as
//! `exchange.rs` runs them, through 1 shard on one thread and S shards on S pinned threads,
//! a share of each shard's Data arriving at another shard and handed to its owner over the
//! router's exchange ring (`ndx_benches::scaling` has the model). Prints, for each
//! configuration, the aggregate rate, each shard's engine time per exchange, the hand-offs,
//! and the ratio to one shard; then the per-core cost model and its extrapolation.
//!
//! ```sh
//! cargo build --release -p ndx-benches --example exchange2
//! # 1 shard and 2 shards, half the Data crossing, 10^6 routes, best of 5 passes
//! NDX_EXAMPLE_FIB=1000000 NDX_EXAMPLE_REPEAT=5 target/release/examples/exchange2 100000 32
//! # the cost model: hand-off share 0, 50 and 100 %
//! NDX_EXAMPLE_CROSS=0,50,100 target/release/examples/exchange2 100000 32
//! ```
//!
//! Arguments: exchanges per shard per pass (default 20000), burst (default 32, the
//! worker's). Settings: `NDX_EXAMPLE_FIB` routes (default 1000), `NDX_EXAMPLE_SHARDS`
//! shard counts (default `1,2`), `NDX_EXAMPLE_CROSS` shares of Data handed over, in percent
//! (default `50`), `NDX_EXAMPLE_REPEAT` passes (default 3; the fastest and the median are
//! printed; the configurations' passes alternate so that a shared host's noise falls on all
//! alike), `NDX_EXAMPLE_HANDOFF` `burst` (default: handed-over Data drained into bursts
//! for `Shard::process_burst_lent`, as the router's worker does) or `frame` (each through
//! `Shard::process`, as the worker did before: the reference) or `merged` (a loop turn's
//! handed-over Data join its own Data's burst: `Handoff::Merged`), `NDX_EXAMPLE_FIB_SHARED=0` (a
//! FIB per shard instead of the router's one shared FIB), `NDX_EXAMPLE_PIN=0` (no pinning),
//! `NDX_EXAMPLE_UNPREEMPT=1` (subtract from each timed section the time the shard's thread
//! waited for its CPU meanwhile, from `/proc/thread-self/schedstat`: for a loaded machine),
//! `NDX_EXAMPLE_COLD=1` (every received frame leaves the receiving core's caches once written,
//! as when another CPU or a device writes it, as in the router: `Config::cold`).

use ndx_benches::scaling::{Bench, Config, Fixture, Handoff, Pass, load_average};

/// The router's allocator: large tables on transparent huge pages (`NDX_BENCH_HUGE=0` gives
/// them base pages, the reference).
#[global_allocator]
static ALLOC: ndx_mem::HugePages = ndx_mem::HugePages;

/// A setting from the environment, or its default; a value that does not parse is an error
/// naming the variable.
fn env<T: std::str::FromStr>(var: &str, default: T) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    match std::env::var(var) {
        Err(_) => Ok(default),
        Ok(v) => v.trim().parse().map_err(|e| format!("{var}={v}: {e}")),
    }
}

/// A comma-separated list from the environment, or its default.
fn env_list<T: std::str::FromStr>(var: &str, default: &str) -> Result<Vec<T>, String>
where
    T::Err: std::fmt::Display,
{
    let v = std::env::var(var).unwrap_or_else(|_| default.into());
    v.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|e| format!("{var}={v}: {x:?}: {e}"))
        })
        .collect()
}

/// A positional argument, or its default.
fn arg<T: std::str::FromStr>(i: usize, what: &str, default: T) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    match std::env::args().nth(i) {
        None => Ok(default),
        Some(a) => a.parse().map_err(|e| format!("{what} {a:?}: {e}")),
    }
}

/// The median of `xs` (the upper one of an even count).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// One configuration's passes.
struct Runs<'f> {
    bench: Bench<'f>,
    passes: Vec<Pass>,
}

impl Runs<'_> {
    /// The fastest pass (by aggregate engine rate).
    fn best(&self) -> &Pass {
        self.passes
            .iter()
            .max_by(|a, b| a.engine_rate().total_cmp(&b.engine_rate()))
            .expect("a pass")
    }

    fn median_rate(&self) -> f64 {
        median(self.passes.iter().map(Pass::engine_rate).collect())
    }

    /// Engine ns per exchange per shard, the median over passes (the cost model's input).
    fn median_ns(&self) -> f64 {
        median(self.passes.iter().map(Pass::ns_per_exchange).collect())
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("exchange2: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    ndx_benches::huge_pages_from_env();
    let n: usize = arg(1, "exchanges per shard", 20_000)?;
    let burst: usize = arg(2, "burst", 32)?;
    let routes: u64 = env("NDX_EXAMPLE_FIB", 1000)?;
    let shard_counts: Vec<usize> = env_list("NDX_EXAMPLE_SHARDS", "1,2")?;
    let crosses: Vec<u32> = env_list("NDX_EXAMPLE_CROSS", "50")?;
    let repeat: u32 = env("NDX_EXAMPLE_REPEAT", 3)?;
    let handoff: Handoff = env("NDX_EXAMPLE_HANDOFF", Handoff::Burst)?;
    let shared_fib = env("NDX_EXAMPLE_FIB_SHARED", 1u8)? != 0;
    let pin = env("NDX_EXAMPLE_PIN", 1u8)? != 0;
    let unpreempt = env("NDX_EXAMPLE_UNPREEMPT", 0u8)? != 0;
    let cold = env("NDX_EXAMPLE_COLD", 0u8)? != 0;
    if repeat == 0 {
        return Err("NDX_EXAMPLE_REPEAT=0: expected at least one pass".into());
    }
    let most = shard_counts.iter().copied().max().unwrap_or(1);
    let cpus = core_affinity::get_core_ids().map_or(0, |c| c.len());
    if most > cpus {
        eprintln!(
            "warning: {most} shards on {cpus} CPUs: shards share CPUs, the rates do not scale"
        );
    }
    // Every configuration: one shard once (the share does not apply), more for each share.
    let mut configs = Vec::new();
    for &s in &shard_counts {
        for (i, &cross) in crosses.iter().enumerate() {
            if s == 1 && i > 0 {
                break;
            }
            configs.push(Config {
                shards: s,
                exchanges: n,
                burst,
                cross_percent: if s == 1 { 0 } else { cross },
                handoff,
                pin,
                unpreempt,
                cold,
            });
        }
    }
    for c in &configs {
        c.validate()?;
    }
    let load0 = load_average();
    eprintln!(
        "{n} exchanges per shard per pass, burst {burst}, {routes} routes ({} FIB), hand-off \
         by {handoff}, {repeat} passes, {cpus} CPUs, pinned: {pin}, CPU waits subtracted: \
         {unpreempt}, frames cold: {cold}; load average {}",
        if shared_fib {
            "one shared"
        } else {
            "a private"
        },
        fmt_load(load0)
    );
    let fixture = Fixture::new(routes, n, most, shared_fib);
    let mut runs: Vec<Runs<'_>> = configs
        .iter()
        .map(|&c| {
            Ok(Runs {
                bench: Bench::new(c, &fixture)?,
                passes: Vec::new(),
            })
        })
        .collect::<Result<_, String>>()?;
    for _ in 0..repeat {
        for r in &mut runs {
            let p = r.bench.pass();
            check(r.bench.config(), &p)?;
            r.passes.push(p);
        }
    }
    let load1 = load_average();
    let one = runs
        .iter()
        .find(|r| r.bench.config().shards == 1)
        .map(|r| (r.best().engine_rate(), r.median_rate()));
    println!(
        "| shards | Data handed over | engine M/s (fastest) | median | per shard ns/exchange (median) | wall M/s | hand-offs per pass | x 1 shard (fastest, median) | preempted (fastest) | Data per burst, handed per burst |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in &runs {
        let c = r.bench.config();
        let best = r.best();
        let ratio = one.map_or("".into(), |(b, m)| {
            format!(
                "{:.2}x, {:.2}x",
                best.engine_rate() / b,
                r.median_rate() / m
            )
        });
        let (per_burst, handed_per_burst) = best.burst_sizes();
        println!(
            "| {} | {}% | {:.2} | {:.2} | {:.0} | {:.2} | {} | {} | {} | {per_burst:.1}, {handed_per_burst:.1} |",
            c.shards,
            c.cross_percent,
            best.engine_rate() / 1e6,
            r.median_rate() / 1e6,
            r.median_ns(),
            best.wall_rate() / 1e6,
            best.handoffs(),
            ratio,
            best.preempted().map_or("?".into(), |p| format!(
                "{:.1}%{}",
                p * 100.0,
                if c.unpreempt {
                    format!(" ({:.1}% subtracted)", best.subtracted() * 100.0)
                } else {
                    String::new()
                }
            )),
        );
    }
    eprintln!(
        "CPUs of the fastest passes: {}",
        runs.iter()
            .map(|r| format!(
                "{}:{:?}",
                r.bench.config().shards,
                r.best().shards.iter().map(|s| s.cpu).collect::<Vec<_>>()
            ))
            .collect::<Vec<_>>()
            .join(" ")
    );
    cost_model(&runs);
    eprintln!("load average at the end {}", fmt_load(load1));
    Ok(())
}

/// The pass's counts, as the test asserts them: a bench that lost a packet is no bench.
fn check(c: &Config, p: &Pass) -> Result<(), String> {
    let n = c.exchanges as u64;
    for (s, r) in p.shards.iter().enumerate() {
        if (r.interests_forwarded, r.data_in, r.by_token, r.data_down) != (n, n, n, n)
            || r.handoffs_in != c.expected_handoffs()
        {
            return Err(format!("{c:?}: shard {s} counts wrong: {r:?}"));
        }
    }
    Ok(())
}

fn fmt_load(l: Option<[f64; 3]>) -> String {
    l.map_or("unknown".into(), |[a, b, c]| {
        format!("{a:.2} {b:.2} {c:.2}")
    })
}

/// The per-core cost model from the medians: c1 (one shard), the shared-cache term
/// δ = c(S, 0 %) − c1, the hand-off h = (c(S, 100 %) − c(S, 0 %)) per handed-over Data,
/// and R(S') = S' / (c1 + δ + h·(S'−1)/S') for S' shards fed by a uniform RSS hash over S'
/// queues (a share (S'−1)/S' of the Data crosses).
fn cost_model(runs: &[Runs<'_>]) {
    let ns = |shards: usize, cross: u32| {
        runs.iter()
            .find(|r| r.bench.config().shards == shards && r.bench.config().cross_percent == cross)
            .map(Runs::median_ns)
    };
    let Some(c1) = ns(1, 0) else {
        return;
    };
    let Some(s) = runs
        .iter()
        .map(|r| r.bench.config().shards)
        .filter(|&s| s > 1)
        .min()
    else {
        return;
    };
    eprintln!("cost model (medians): c1 = {c1:.1} ns per exchange on one shard");
    let Some(c0) = ns(s, 0) else {
        eprintln!("  (add NDX_EXAMPLE_CROSS=0,50,100 for the shared-cache and hand-off terms)");
        return;
    };
    let delta = c0 - c1;
    eprintln!(
        "  delta = c({s}, 0%) - c1 = {c0:.1} - {c1:.1} = {delta:.1} ns (shared cache, shared FIB)"
    );
    let Some(c100) = ns(s, 100) else {
        return;
    };
    let h = c100 - c0;
    eprintln!("  h = c({s}, 100%) - c({s}, 0%) = {c100:.1} - {c0:.1} = {h:.1} ns per hand-off");
    if let Some(c50) = ns(s, 50) {
        eprintln!(
            "  linearity: c({s}, 50%) = {c50:.1} ns measured, {:.1} ns predicted (c0 + h/2)",
            c0 + h / 2.0
        );
    }
    for shards in [2usize, 4, 8, 16] {
        let x = (shards - 1) as f64 / shards as f64;
        let c = c1 + delta + h * x;
        eprintln!(
            "  R({shards}) = {shards} / ({c1:.1} + {delta:.1} + {h:.1} x {x:.3}) = {:.2} M/s ({:.2}x one shard)",
            shards as f64 * 1e3 / c,
            shards as f64 * c1 / c
        );
    }
}
