//! The seed 002 experiments (Cluster-based Scalable Router, §4) on the namespace topology of
//! [`crate::cluster`], for `ndx-lab cluster-load`, `cluster-weights` and `cluster-scaling`.
//! Root only; run by hand, not in CI.
//!
//! Traffic: one `ndx gen` (a fixed window of Interests for unique names `/t/dK/r<run>/<n>`,
//! never repeated across runs, so every Interest misses every content store and the routers
//! forward all of it) against one
//! `ndx serve /t/dK` (8000-byte Data, NDNLPv2-fragmented on the 1500-byte links) per
//! download, each producer on its own UDP port; or, for the scaling run, `ndx get
//! --max-retries 0` of large objects served by `ndx put`.
//!
//! Measurements over a window (after a warm-up), as deltas of:
//! - the consumers' Data counts (per second, from `ndx gen`'s report): payload throughput;
//! - the consumer host's `eth0` received bytes: IP throughput towards the consumers;
//! - the front end's per-router counters (`ndx lb status --json`): `interests_dispatched`
//!   (the share) and `bytes_from_router` (IP bytes the router sent: its Data to the
//!   consumers and its Interests to the producers);
//! - each internal router's process CPU time (`/proc/PID/stat`) plus, for ndx routers, the
//!   run time of their own XDP program;
//! - the front end's XDP program: `run_time_ns` and `run_cnt` from `bpftool prog show`
//!   (statistics enabled during the run with a `BPF_ENABLE_STATS` descriptor): CPU share and ns per packet;
//! - the whole machine's busy time (`/proc/stat`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cluster::{IrKind, Tools, Topo, cpu_of, ir_name};
use crate::report::Table;

/// Mbit/s of `bytes` over `secs`.
fn mbps(bytes: f64, secs: f64) -> f64 {
    bytes * 8.0 / secs.max(1e-9) / 1e6
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// Online CPUs.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The kernel's per-program run time statistics, enabled while this lives: a
/// `BPF_ENABLE_STATS` file descriptor (reference-counted by the kernel, so it neither depends
/// on nor disturbs `kernel.bpf_stats_enabled`, which other users may toggle).
#[derive(Debug)]
pub struct BpfStats {
    _fd: std::os::fd::OwnedFd,
}

impl BpfStats {
    /// Enables the statistics until dropped.
    pub fn enable() -> Result<Self, String> {
        aya::sys::enable_stats(aya::sys::Stats::RunTime)
            .map(|fd| Self { _fd: fd })
            .map_err(|e| format!("bpf(BPF_ENABLE_STATS): {e}"))
    }
}

/// `(run_time_ns, run_cnt)` summed over programs `ids` (bpftool).
fn prog_stats(ids: &[u64]) -> (u64, u64) {
    let mut total = (0, 0);
    for id in ids {
        let Ok(out) = Command::new("bpftool")
            .args(["prog", "show", "id", &id.to_string(), "--json"])
            .output()
        else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<Value>(&out.stdout) else {
            continue;
        };
        total.0 += v["run_time_ns"].as_u64().unwrap_or(0);
        total.1 += v["run_cnt"].as_u64().unwrap_or(0);
    }
    total
}

/// The front end's XDP program ids (`ndx_lb` or `ndx_lb_frags`) on its interfaces.
fn lb_prog_ids(t: &Topo) -> Result<Vec<u64>, String> {
    let ids = t.xdp_prog_ids("lb")?;
    let mine: Vec<u64> = ids
        .into_iter()
        .filter(|id| {
            Command::new("bpftool")
                .args(["prog", "show", "id", &id.to_string(), "--json"])
                .output()
                .ok()
                .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
                .and_then(|v| v["name"].as_str().map(|n| n.starts_with("ndx_lb")))
                .unwrap_or(false)
        })
        .collect();
    if mine.is_empty() {
        return Err("no ndx_lb XDP program attached in the front end's namespace".into());
    }
    Ok(mine)
}

/// `(busy, softirq, total)` jiffies of the whole machine, from /proc/stat.
fn machine_jiffies() -> (u64, u64, u64) {
    let s = fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> = s
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let total: u64 = f.iter().take(8).sum();
    let idle = f.get(3).copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0);
    (
        total.saturating_sub(idle),
        f.get(6).copied().unwrap_or(0),
        total,
    )
}

/// A router's counter in a front-end status (0 when absent).
fn rc(status: &Value, name: &str, counter: &str) -> u64 {
    router(status, name)
        .and_then(|r| r["counters"][counter].as_u64())
        .unwrap_or(0)
}

fn router<'a>(status: &'a Value, name: &str) -> Option<&'a Value> {
    status["routers"]
        .as_array()?
        .iter()
        .find(|r| r["name"] == name)
}

/// A global counter of the front end (0 when absent).
fn gc(status: &Value, counter: &str) -> u64 {
    status["counters"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c[0] == counter))
        .and_then(|c| c[1].as_u64())
        .unwrap_or(0)
}

/// Routers taking new Interests (a share of the hash space above 0).
fn active_routers(status: &Value) -> Vec<String> {
    status["routers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["share"].as_f64().unwrap_or(0.0) > 0.0)
        .filter_map(|r| r["name"].as_str().map(str::to_owned))
        .collect()
}

/// Everything read at one instant.
#[derive(Debug, Clone)]
struct Snapshot {
    at: Instant,
    lb: Value,
    /// Per router (index k - 1): process CPU and its XDP program's run time.
    ir_cpu: Vec<Duration>,
    ir_xdp_ns: Vec<u64>,
    lb_xdp: (u64, u64),
    machine: (u64, u64, u64),
    c_rx: u64,
    /// CPU time of the end hosts' processes (consumers and producers).
    ends: Duration,
    /// CPU time of the front end's process (`ndx lb run`: its control loop).
    lb_proc: Duration,
}

/// What the measured programs are, to take snapshots.
struct Probe {
    irs: usize,
    ir_pids: Vec<Option<u32>>,
    ir_progs: Vec<Vec<u64>>,
    lb_progs: Vec<u64>,
}

impl Probe {
    fn new(t: &Topo, irs: usize) -> Result<Self, String> {
        let mut ir_progs = Vec::new();
        for k in 1..=irs {
            // ndnd routers have no XDP program; ndx ones have their own.
            ir_progs.push(t.xdp_prog_ids(&ir_name(k)).unwrap_or_default());
        }
        Ok(Self {
            irs,
            ir_pids: (1..=irs).map(|k| t.ir_pid(k)).collect(),
            ir_progs,
            lb_progs: lb_prog_ids(t)?,
        })
    }

    fn snap(&self, t: &Topo, ends: &[u32]) -> Result<Snapshot, String> {
        let lb = t.lb_status()?;
        let at = Instant::now();
        Ok(Snapshot {
            at,
            lb,
            ir_cpu: self
                .ir_pids
                .iter()
                .map(|p| p.map_or(Duration::ZERO, cpu_of))
                .collect(),
            ir_xdp_ns: self.ir_progs.iter().map(|ids| prog_stats(ids).0).collect(),
            lb_xdp: prog_stats(&self.lb_progs),
            machine: machine_jiffies(),
            c_rx: t.rx_bytes("c")?,
            ends: t
                .producers
                .iter()
                .map(|p| p.pid())
                .chain(ends.iter().copied())
                .map(cpu_of)
                .sum(),
            lb_proc: t.lb.as_ref().map_or(Duration::ZERO, |p| p.cpu()),
        })
    }
}

/// One internal router over a window.
#[derive(Debug, Clone, Default)]
pub struct RouterWindow {
    /// Interests the front end dispatched to it.
    pub exchanges: u64,
    /// Its share of the Interests dispatched.
    pub share: f64,
    /// Mbit/s of IP bytes it sent (through the front end).
    pub mbps: f64,
    /// Its process CPU time / wall time (1.0 = one core).
    pub cpu: f64,
    /// Its XDP program's run time / wall time (ndx routers).
    pub xdp: f64,
}

impl RouterWindow {
    /// CPU-ns (process + its XDP program) per exchange.
    pub fn ns_per_exchange(&self, secs: f64) -> Option<f64> {
        (self.exchanges > 0).then(|| (self.cpu + self.xdp) * secs * 1e9 / self.exchanges as f64)
    }
}

/// The deltas between two snapshots.
#[derive(Debug, Clone, Default)]
pub struct Window {
    /// Its length.
    pub secs: f64,
    /// Per router (index k - 1).
    pub routers: Vec<RouterWindow>,
    /// Interests into the front end on the well-known port.
    pub interests_in: u64,
    /// The front end's XDP program: run time (ns) and runs (packets).
    pub lb_ns: u64,
    /// Packets the front end's program ran on.
    pub lb_packets: u64,
    /// Consumer host's received IP throughput.
    pub consumer_ip_mbps: f64,
    /// Whole-machine busy CPUs (0..=cores) and softirq CPUs.
    pub machine_busy: f64,
    /// Of which softirq.
    pub machine_softirq: f64,
    /// CPUs used by the consumers' and producers' processes.
    pub ends_cpu: f64,
    /// CPUs busy outside softirq and outside every process of the experiment: other jobs
    /// on the machine (noise).
    pub other_cpu: f64,
}

impl Window {
    fn between(a: &Snapshot, b: &Snapshot, irs: usize) -> Self {
        let secs = b.at.duration_since(a.at).as_secs_f64();
        let d = |n: &str, c: &str| rc(&b.lb, n, c).saturating_sub(rc(&a.lb, n, c));
        let total: u64 = (1..=irs)
            .map(|k| d(&ir_name(k), "interests_dispatched"))
            .sum();
        let routers = (1..=irs)
            .map(|k| {
                let n = ir_name(k);
                let exchanges = d(&n, "interests_dispatched");
                RouterWindow {
                    exchanges,
                    share: exchanges as f64 / total.max(1) as f64,
                    mbps: mbps(d(&n, "bytes_from_router") as f64, secs),
                    cpu: b.ir_cpu[k - 1]
                        .saturating_sub(a.ir_cpu[k - 1])
                        .as_secs_f64()
                        / secs,
                    xdp: b.ir_xdp_ns[k - 1].saturating_sub(a.ir_xdp_ns[k - 1]) as f64 / 1e9 / secs,
                }
            })
            .collect();
        let jiffies = b.machine.2.saturating_sub(a.machine.2).max(1) as f64;
        let cores = cpus() as f64;
        Window {
            secs,
            routers,
            interests_in: gc(&b.lb, "interests-in").saturating_sub(gc(&a.lb, "interests-in")),
            lb_ns: b.lb_xdp.0.saturating_sub(a.lb_xdp.0),
            lb_packets: b.lb_xdp.1.saturating_sub(a.lb_xdp.1),
            consumer_ip_mbps: mbps(b.c_rx.saturating_sub(a.c_rx) as f64, secs),
            machine_busy: b.machine.0.saturating_sub(a.machine.0) as f64 / jiffies * cores,
            machine_softirq: b.machine.1.saturating_sub(a.machine.1) as f64 / jiffies * cores,
            ends_cpu: b.ends.saturating_sub(a.ends).as_secs_f64() / secs,
            other_cpu: 0.0,
        }
        .with_other(a, b)
    }

    fn with_other(mut self, a: &Snapshot, b: &Snapshot) -> Self {
        let ours: f64 = self.routers.iter().map(|r| r.cpu).sum::<f64>()
            + self.ends_cpu
            + b.lb_proc.saturating_sub(a.lb_proc).as_secs_f64() / self.secs.max(1e-9);
        self.other_cpu = (self.machine_busy - self.machine_softirq - ours).max(0.0);
        self
    }

    /// The front end's program CPU share (1.0 = one core).
    pub fn lb_cpu(&self) -> f64 {
        self.lb_ns as f64 / 1e9 / self.secs.max(1e-9)
    }

    /// The front end's ns per packet.
    pub fn lb_ns_per_packet(&self) -> f64 {
        self.lb_ns as f64 / self.lb_packets.max(1) as f64
    }
}

/// What one `ndx gen` reported.
#[derive(Debug, Clone, Default)]
pub struct GenResult {
    /// Data in each second of its run.
    pub per_second: Vec<u64>,
    /// Interests that timed out.
    pub timeouts: u64,
    /// Nacks.
    pub nacks: u64,
}

/// Parses `ndx gen`'s report.
pub fn parse_gen(text: &str) -> Option<GenResult> {
    let mut r = GenResult::default();
    let first = text.lines().find(|l| l.starts_with("Sent "))?;
    // "... N Nacks, M timeouts"
    let words: Vec<&str> = first.split_whitespace().collect();
    for w in words.windows(2) {
        if w[1].starts_with("Nacks") {
            r.nacks = w[0].parse().ok()?;
        }
        if w[1].starts_with("timeouts") {
            r.timeouts = w[0].parse().ok()?;
        }
    }
    let per = text.lines().find(|l| l.starts_with("Data/s:"))?;
    let list = per.split_once('[')?.1.split_once(']')?.0;
    r.per_second = list
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| x.trim().parse().unwrap_or(0))
        .collect();
    Some(r)
}

/// Settings shared by the experiments.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The programs.
    pub tools: Tools,
    /// Scratch directory (configurations, logs, sockets).
    pub scratch: PathBuf,
    /// Data payload bytes.
    pub payload: usize,
    /// Interests in flight per download.
    pub window: usize,
    /// Warm-up before each measurement, seconds.
    pub warmup: u64,
    /// Measurement window, seconds.
    pub duration: u64,
    /// Longest wait for a quiet machine before each run, seconds (0: never wait nor
    /// measure again).
    pub wait_quiet: u64,
}

/// The producer port of download `d` (from 1).
fn producer_port(d: usize) -> u16 {
    6400 + d as u16
}

/// `/t/d<d>`.
fn download_prefix(d: usize) -> String {
    format!("/t/d{d}")
}

fn routes(downloads: usize) -> Vec<(String, u16)> {
    (1..=downloads)
        .map(|d| (download_prefix(d), producer_port(d)))
        .collect()
}

/// Starts internal router `k` with a route per download.
fn start_ir(t: &mut Topo, k: usize, kind: IrKind, downloads: usize) -> Result<(), String> {
    let r = routes(downloads);
    let r: Vec<(&str, u16)> = r.iter().map(|(p, port)| (p.as_str(), *port)).collect();
    t.start_ir_routes(k, kind, &r, (k - 1) % cpus())
}

/// Starts one `ndx serve` per download.
fn start_producers(t: &mut Topo, s: &Setup, downloads: usize) -> Result<(), String> {
    for d in 1..=downloads {
        t.start_serve(
            &download_prefix(d),
            s.payload,
            producer_port(d),
            &["--freshness-ms", "0"],
        )?;
    }
    Ok(())
}

/// One measured run: `downloads` generators for warm-up + duration (+1 s of tail), a window
/// of `duration` after the warm-up; returns the window and the generators' payload Mbit/s
/// over the window, timeouts and Nacks.
fn measure(
    t: &Topo,
    probe: &Probe,
    s: &Setup,
    downloads: usize,
) -> Result<(Window, f64, u64, u64), String> {
    // The machine is shared: wait until other jobs leave it, and measure again when they
    // came back during the run.
    let mut attempt = 0;
    loop {
        attempt += 1;
        wait_quiet(t, probe, s)?;
        let r = measure_once(t, probe, s, downloads)?;
        if r.0.other_cpu <= NOISY || attempt >= 3 || s.wait_quiet == 0 {
            return Ok(r);
        }
        progress(&format!(
            "other jobs used {:.2} CPUs during the run: measuring again",
            r.0.other_cpu
        ));
    }
}

/// CPUs of other jobs above which a run is measured again.
const NOISY: f64 = 0.15;

/// Waits (up to `s.wait_quiet` seconds) until other jobs use less than [`NOISY`] CPUs over
/// one second.
fn wait_quiet(t: &Topo, probe: &Probe, s: &Setup) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(s.wait_quiet);
    let mut said = false;
    loop {
        let a = probe.snap(t, &[])?;
        std::thread::sleep(Duration::from_secs(1));
        let b = probe.snap(t, &[])?;
        let other = Window::between(&a, &b, probe.irs).other_cpu;
        if other <= NOISY || Instant::now() >= deadline {
            if other > NOISY {
                progress(&format!(
                    "other jobs still use {other:.2} CPUs after {} s: measuring anyway",
                    s.wait_quiet
                ));
            }
            return Ok(());
        }
        if !said {
            progress(&format!(
                "other jobs use {other:.2} CPUs: waiting for a quiet machine"
            ));
            said = true;
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}

fn measure_once(
    t: &Topo,
    probe: &Probe,
    s: &Setup,
    downloads: usize,
) -> Result<(Window, f64, u64, u64), String> {
    // Names never repeat across runs on one topology (a content store would answer them).
    static RUN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let run = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let run_secs = s.warmup + s.duration + 1;
    let mut gens: Vec<(Child, PathBuf)> = Vec::new();
    for d in 1..=downloads {
        let out = s.scratch.join(format!("gen{d}.out"));
        let f = fs::File::create(&out).map_err(|e| e.to_string())?;
        let child = t
            .generator(
                &format!("{}/r{run}", download_prefix(d)),
                &[
                    "-w",
                    &s.window.to_string(),
                    "-d",
                    &run_secs.to_string(),
                    "--lifetime-ms",
                    "2000",
                ],
            )
            .stdin(Stdio::null())
            .stdout(f)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("ndx gen: {e}"))?;
        gens.push((child, out));
    }
    let pids: Vec<u32> = gens.iter().map(|(c, _)| c.id()).collect();
    std::thread::sleep(Duration::from_secs(s.warmup));
    let a = probe.snap(t, &pids)?;
    std::thread::sleep(Duration::from_secs(s.duration));
    let b = probe.snap(t, &pids)?;
    let w = Window::between(&a, &b, probe.irs);
    if std::env::var_os("NDX_LAB_DEBUG").is_some() {
        let mut line = String::new();
        for c in b.lb["counters"].as_array().into_iter().flatten() {
            let n = c[0].as_str().unwrap_or("");
            let dv = gc(&b.lb, n).saturating_sub(gc(&a.lb, n));
            if dv > 0 {
                line.push_str(&format!("{n}={dv} "));
            }
        }
        eprintln!("     lb counters: {line}; prog runs {}", w.lb_packets);
        for k in 1..=probe.irs {
            let n = ir_name(k);
            let mut l = String::new();
            if let Some(c) = router(&b.lb, &n).and_then(|r| r["counters"].as_object()) {
                for (name, v) in c {
                    let dv = v.as_u64().unwrap_or(0).saturating_sub(rc(&a.lb, &n, name));
                    l.push_str(&format!("{name}={dv} "));
                }
            }
            eprintln!("     {n}: {l}");
        }
    }
    let (mut data, mut timeouts, mut nacks) = (0u64, 0u64, 0u64);
    for (mut child, out) in gens {
        let _ = child.wait();
        let text = fs::read_to_string(&out).unwrap_or_default();
        let r = parse_gen(&text).ok_or_else(|| {
            format!(
                "ndx gen {} gave no report: {text}\n{}",
                out.display(),
                t.logs()
            )
        })?;
        let lo = s.warmup as usize;
        let hi = (s.warmup + s.duration) as usize;
        data += r.per_second.iter().take(hi).skip(lo).sum::<u64>();
        timeouts += r.timeouts;
        nacks += r.nacks;
    }
    let payload_mbps = mbps((data * s.payload as u64) as f64, s.duration as f64);
    Ok((w, payload_mbps, timeouts, nacks))
}

fn progress(s: &str) {
    eprintln!("  .. {s}");
}

fn fmt_list(v: impl Iterator<Item = String>) -> String {
    v.collect::<Vec<_>>().join("/")
}

/// The tables of `cluster-load`.
#[derive(Debug)]
pub struct LoadResult {
    /// Measured rows.
    pub measured: Table,
    /// Cost model rows.
    pub model: Table,
    /// How the model's inputs were obtained.
    pub notes: Vec<String>,
}

/// `cluster-load` (Fig. 6, 7, 8): for each number of internal routers (ndx, pinned round
/// robin) and of downloads, the aggregated throughput, each router's share and CPU, the front
/// end's program CPU; then the per-router cost model for `model_irs` routers.
pub fn cluster_load(
    s: &Setup,
    irs: &[usize],
    downloads: &[usize],
    model_irs: usize,
) -> Result<LoadResult, String> {
    let _stats = BpfStats::enable()?;
    let max_irs = irs.iter().copied().max().unwrap_or(1);
    let max_d = downloads.iter().copied().max().unwrap_or(1);
    let mut headers: Vec<String> = [
        "n_ir",
        "downloads",
        "payload_mbps",
        "consumer_ip_mbps",
        "timeouts",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    for k in 1..=max_irs {
        headers.push(format!("ir{k}_share"));
        headers.push(format!("ir{k}_mbps"));
        headers.push(format!("ir{k}_cpu"));
    }
    headers.extend(
        [
            "ir_ns_per_exch",
            "lb_cpu",
            "lb_ns_per_pkt",
            "lb_pkts_per_exch",
            "ends_cpu",
            "other_cpu",
            "machine_busy",
            "machine_softirq",
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    let hdr: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new(&hdr);
    // Model inputs.
    let (mut ir_ns, mut ir_exch, mut ir_min) = (0.0f64, 0u64, f64::INFINITY);
    let (mut lb_ns, mut lb_pkts, mut lb_exch) = (0u64, 0u64, 0u64);
    let mut best_payload = 0.0f64;
    let mut loss_notes: Vec<String> = Vec::new();
    for &n in irs {
        let dir = s.scratch.join(format!("load-{n}"));
        let mut t = Topo::new(s.tools.clone(), n, &dir)?;
        for k in 1..=n {
            start_ir(&mut t, k, IrKind::Ndx, max_d)?;
        }
        let all: Vec<(usize, u32)> = (1..=n).map(|k| (k, 1)).collect();
        t.start_lb(&all, "")?;
        start_producers(&mut t, s, max_d)?;
        let probe = Probe::new(&t, n)?;
        for &d in downloads {
            let (w, payload, timeouts, nacks) = measure(&t, &probe, s, d)?;
            let secs = w.secs;
            let (ns_sum, ex_sum) = w.routers.iter().fold((0.0, 0u64), |(a, b), r| {
                (a + (r.cpu + r.xdp) * secs * 1e9, b + r.exchanges)
            });
            let ir_npe = ns_sum / ex_sum.max(1) as f64;
            ir_ns += ns_sum;
            ir_exch += ex_sum;
            for r in &w.routers {
                if r.exchanges >= 1000
                    && let Some(x) = r.ns_per_exchange(secs)
                {
                    ir_min = ir_min.min(x);
                }
            }
            lb_ns += w.lb_ns;
            lb_pkts += w.lb_packets;
            lb_exch += w.interests_in;
            best_payload = best_payload.max(payload);
            if std::env::var_os("NDX_LAB_DEBUG").is_some() {
                eprintln!(
                    "     interests-in {}, dispatched {}, lb runs {}, lb ns {}, payload {payload}",
                    w.interests_in, ex_sum, w.lb_packets, w.lb_ns
                );
            }
            progress(&format!(
                "{n} IR, {d} downloads: {payload:.0} Mbit/s payload, shares {}, CPU {}, lb {:.1}% at {:.0} ns/pkt, {timeouts} timeouts, {nacks} Nacks",
                fmt_list(w.routers.iter().map(|r| format!("{:.2}", r.share))),
                fmt_list(w.routers.iter().map(|r| format!("{:.2}", r.cpu + r.xdp))),
                w.lb_cpu() * 100.0,
                w.lb_ns_per_packet()
            ));
            let mut row = vec![
                n.to_string(),
                d.to_string(),
                format!("{payload:.0}"),
                format!("{:.0}", w.consumer_ip_mbps),
                (timeouts + nacks).to_string(),
            ];
            for k in 0..max_irs {
                match w.routers.get(k) {
                    Some(r) => {
                        row.push(format!("{:.3}", r.share));
                        row.push(format!("{:.0}", r.mbps));
                        row.push(format!("{:.2}", r.cpu + r.xdp));
                    }
                    None => row.extend(["".into(), "".into(), "".into()]),
                }
            }
            row.push(format!("{ir_npe:.0}"));
            row.push(format!("{:.3}", w.lb_cpu()));
            row.push(format!("{:.0}", w.lb_ns_per_packet()));
            row.push(format!(
                "{:.1}",
                w.lb_packets as f64 / w.interests_in.max(1) as f64
            ));
            row.push(format!("{:.2}", w.ends_cpu));
            row.push(format!("{:.2}", w.other_cpu));
            row.push(format!("{:.2}", w.machine_busy));
            row.push(format!("{:.2}", w.machine_softirq));
            table.push(row);
        }
        let losses = loss_counters(&t, n);
        if !losses.is_empty() {
            loss_notes.push(format!("{n} IR: {}", losses.join(", ")));
        }
    }
    // The model: a router of one core forwards 1e9 / ir_ns exchanges per second; the front
    // end's core runs 1e9 / (lb_ns_per_pkt * pkts_per_exchange).
    // The busiest router is the closest to saturation: its cost per exchange carries the
    // least idle polling (ndx routers with idle = "park" poll 64 turns before sleeping).
    let ir_avg = ir_ns / ir_exch.max(1) as f64;
    let ir_npe = if ir_min.is_finite() { ir_min } else { ir_avg };
    let lb_npp = lb_ns as f64 / lb_pkts.max(1) as f64;
    let ppe = lb_pkts as f64 / lb_exch.max(1) as f64;
    let bits = s.payload as f64 * 8.0;
    let r_router = 1e9 / ir_npe.max(1e-9) * bits / 1e6;
    let r_fe = 1e9 / (lb_npp * ppe).max(1e-9) * bits / 1e6;
    let mut model = Table::new(&[
        "n_ir",
        "routers_mbps",
        "frontend_mbps",
        "predicted_mbps",
        "bottleneck",
    ]);
    for n in 1..=model_irs {
        let routers = n as f64 * r_router;
        let p = routers.min(r_fe);
        model.push(vec![
            n.to_string(),
            format!("{routers:.0}"),
            format!("{r_fe:.0}"),
            format!("{p:.0}"),
            if routers <= r_fe {
                "routers".into()
            } else {
                "front end".into()
            },
        ]);
    }
    let mut notes = vec![
        format!(
            "payload_mbps: Data content bytes ({} B per Data) counted by the consumers over the {} s window after {} s of warm-up; consumer_ip_mbps: IP bytes received by the consumer host (headers and fragmentation included); unique names /t/dK/r<run>/<n> (every Interest misses every content store: no cache hits; lb_pkts_per_exch = 14 = 1 + 1 Interest + 6 + 6 Data fragments confirms it)",
            s.payload, s.duration, s.warmup
        ),
        "irK_share: Interests the front end dispatched to it; irK_mbps: IP bytes it sent out (Data to the consumers + Interests to the producers); irK_cpu: its process CPU time + its XDP program's run time, per wall second (1.0 = one core)".into(),
        "lb_cpu: the front end's XDP program run time per wall second (BPF_ENABLE_STATS; excludes the veth transmit and the kernel's own receive path); ends_cpu: CPUs used by the consumers' and producers' processes (ndx gen, ndx serve); other_cpu: CPUs busy outside softirq and outside every process of the experiment (other jobs: noise; a row with other_cpu > 0.2 is unreliable); machine_busy/softirq: CPUs busy over the whole machine".into(),
        format!(
            "model inputs: internal router {ir_npe:.0} CPU-ns per exchange (the lowest of any router in any run; mean over all runs {ir_avg:.0}: the routers never saturate here, so their CPU includes idle polling and this is an upper bound on the cost; the kernel's AF_XDP receive copy on veth runs in softirq and is not counted) -> {r_router:.0} Mbit/s of payload per core; front end {lb_npp:.0} ns per packet x {ppe:.1} packets per exchange -> {r_fe:.0} Mbit/s on one core; predicted(N) = min(N x router, front end)"
        ),
        format!(
            "this machine has {} CPUs: measured scaling stops there (best measured: {best_payload:.0} Mbit/s); every row of the model beyond it is an extrapolation",
            cpus()
        ),
    ];
    notes.push(if loss_notes.is_empty() {
        "loss counters at the end of each topology (UDP errors, interface drops, router and front-end drops): all 0".into()
    } else {
        format!(
            "loss counters not 0 at the end of each topology (timeouts above come from these): {}",
            loss_notes.join("; ")
        )
    });
    Ok(LoadResult {
        measured: table,
        model,
        notes,
    })
}

/// Options of `cluster-weights`.
#[derive(Debug, Clone)]
pub struct WeightsOptions {
    /// What internal router 3 (the unlimited one) runs.
    pub ir3: IrKind,
    /// The egress rate limit of routers 1 and 2, Mbit/s.
    pub limit_mbit: u32,
    /// The weighted split.
    pub weights: [u32; 3],
    /// Download counts.
    pub downloads: Vec<usize>,
}

/// The tables of `cluster-weights`.
#[derive(Debug)]
pub struct WeightsResult {
    /// Each router alone (calibration).
    pub capacity: Table,
    /// Uniform vs weighted rows.
    pub measured: Table,
    /// Notes.
    pub notes: Vec<String>,
}

/// Shapes `role`'s eth0 egress to `mbit` Mbit/s (tbf; deep enough for every window in
/// flight, so it delays rather than drops).
fn shape(t: &Topo, role: &str, mbit: u32) -> Result<(), String> {
    t.run(
        role,
        &[
            "tc",
            "qdisc",
            "replace",
            "dev",
            "eth0",
            "root",
            "tbf",
            "rate",
            &format!("{mbit}mbit"),
            "burst",
            "64kb",
            "latency",
            "400ms",
        ],
    )
    .map(drop)
}

/// `(sent, dropped, overlimits)` of `role`'s eth0 root qdisc.
fn qdisc_stats(t: &Topo, role: &str) -> (u64, u64, u64) {
    let Ok(out) = t.run(role, &["tc", "-s", "-j", "qdisc", "show", "dev", "eth0"]) else {
        return (0, 0, 0);
    };
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let q = v
        .as_array()
        .and_then(|a| a.iter().find(|q| q["kind"] == "tbf"))
        .cloned()
        .unwrap_or(Value::Null);
    (
        q["bytes"].as_u64().unwrap_or(0),
        q["drops"].as_u64().unwrap_or(0),
        q["overlimits"].as_u64().unwrap_or(0),
    )
}

/// `cluster-weights` (Fig. 9): three routers, 1 and 2 limited by `tc tbf` on their egress;
/// uniform vs weighted hash space, throughput vs downloads.
pub fn cluster_weights(s: &Setup, o: &WeightsOptions) -> Result<WeightsResult, String> {
    let _stats = BpfStats::enable()?;
    let max_d = o.downloads.iter().copied().max().unwrap_or(1);
    let mut t = Topo::new(s.tools.clone(), 3, &s.scratch.join("weights"))?;
    let kinds = [IrKind::Ndnd, IrKind::Ndnd, o.ir3];
    for (i, &kind) in kinds.iter().enumerate() {
        start_ir(&mut t, i + 1, kind, max_d)?;
    }
    for k in [1, 2] {
        shape(&t, &ir_name(k), o.limit_mbit)?;
    }
    t.start_lb(&[(1, 1), (2, 1), (3, 1)], "")?;
    start_producers(&mut t, s, max_d)?;
    let probe = Probe::new(&t, 3)?;
    let set = |w: [u32; 3]| -> Result<(), String> {
        // Raise before lowering so some router always takes Interests.
        let mut order: Vec<usize> = (0..3).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(w[i]));
        for i in order {
            t.lb_weight(i + 1, w[i])?;
        }
        Ok(())
    };
    let row_for = |label: &str,
                   w: [u32; 3],
                   d: usize,
                   win: &Window,
                   payload: f64,
                   lost: u64|
     -> Vec<String> {
        let mut row = vec![
            label.to_owned(),
            fmt_list(w.iter().map(u32::to_string)),
            d.to_string(),
            format!("{payload:.0}"),
            lost.to_string(),
        ];
        for r in &win.routers {
            row.push(format!("{:.3}", r.share));
            row.push(format!("{:.0}", r.mbps));
            row.push(format!("{:.2}", r.cpu + r.xdp));
        }
        row.push(format!("{:.2}", win.other_cpu));
        row
    };
    let headers = [
        "mode",
        "weights",
        "downloads",
        "payload_mbps",
        "timeouts",
        "ir1_share",
        "ir1_mbps",
        "ir1_cpu",
        "ir2_share",
        "ir2_mbps",
        "ir2_cpu",
        "ir3_share",
        "ir3_mbps",
        "ir3_cpu",
        "other_cpu",
    ];
    // 1. Each router alone, with the most downloads: its capacity.
    let mut capacity = Table::new(&headers);
    let mut caps = [0.0f64; 3];
    for k in 0..3 {
        let mut w = [0; 3];
        w[k] = 1;
        set(w)?;
        let q0 = qdisc_stats(&t, &ir_name(k + 1));
        let (win, payload, lost, nacks) = measure(&t, &probe, s, max_d)?;
        let q1 = qdisc_stats(&t, &ir_name(k + 1));
        caps[k] = payload;
        progress(&format!(
            "ir{} alone ({}), {max_d} downloads: {payload:.0} Mbit/s payload, {:.0} Mbit/s out of it, qdisc drops {}, {} timeouts",
            k + 1,
            kinds[k],
            win.routers[k].mbps,
            q1.1.saturating_sub(q0.1),
            lost + nacks
        ));
        capacity.push(row_for("alone", w, max_d, &win, payload, lost + nacks));
    }
    // 2. Uniform vs weighted.
    let mut measured = Table::new(&headers);
    for (label, w) in [("uniform", [1, 1, 1]), ("weighted", o.weights)] {
        set(w)?;
        for &d in &o.downloads {
            let (win, payload, lost, nacks) = measure(&t, &probe, s, d)?;
            progress(&format!(
                "{label} {w:?}, {d} downloads: {payload:.0} Mbit/s payload, router Mbit/s {}, {} timeouts",
                fmt_list(win.routers.iter().map(|r| format!("{:.0}", r.mbps))),
                lost + nacks
            ));
            measured.push(row_for(label, w, d, &win, payload, lost + nacks));
        }
    }
    let total: f64 = caps.iter().sum();
    let matching: Vec<String> = caps
        .iter()
        .map(|c| format!("{:.2}", c / total.max(1e-9)))
        .collect();
    let limit_bound = |w: [u32; 3]| {
        // The routers' capacities bound the total at min over k of cap_k / share_k.
        let sum: u32 = w.iter().sum();
        (0..3)
            .filter(|&k| w[k] > 0)
            .map(|k| caps[k] * f64::from(sum) / f64::from(w[k]))
            .fold(f64::INFINITY, f64::min)
    };
    let losses = loss_counters(&t, 3);
    let notes = vec![
        format!(
            "ir1, ir2: ndnd fw, eth0 egress shaped by tc tbf {} Mbit/s (the LB-IR links of the paper's Fig. 9, 170 Mbit/s there); ir3: {} unshaped",
            o.limit_mbit, o.ir3
        ),
        format!(
            "capacities alone ({max_d} downloads): {:.0} / {:.0} / {:.0} Mbit/s payload; matching weights would be {}",
            caps[0],
            caps[1],
            caps[2],
            matching.join(":")
        ),
        format!(
            "bound min_k(cap_k / share_k): uniform {:.0} Mbit/s, weighted {:?} {:.0} Mbit/s (each router at its own capacity; the routers share 2 CPUs, so running together they reach less)",
            limit_bound([1, 1, 1]),
            o.weights,
            limit_bound(o.weights)
        ),
        format!(
            "payload_mbps: Data content over the window ({} B Data, window {} per download, unique names); irK_mbps: IP bytes out of router K (through the front end); other_cpu: CPUs used by other jobs on the machine (noise)",
            s.payload, s.window
        ),
        if losses.is_empty() {
            "loss counters at the end (UDP errors, interface drops, front-end drops): all 0".into()
        } else {
            format!("loss counters not 0 at the end: {}", losses.join(", "))
        },
    ];
    Ok(WeightsResult {
        capacity,
        measured,
        notes,
    })
}

/// Options of `cluster-scaling`.
#[derive(Debug, Clone)]
pub struct ScalingOptions {
    /// Concurrent downloads.
    pub downloads: usize,
    /// Seconds between two changes of the router set.
    pub step_secs: f64,
    /// Sampling period, seconds.
    pub sample_secs: f64,
    /// Object size per download, MB (10^6 bytes).
    pub object_mb: usize,
    /// Largest congestion window of each `ndx get`.
    pub max_cwnd: u32,
    /// The front end's drain time (ms) for removed routers.
    pub drain_ms: u64,
    /// Smallest retransmission timeout of each `ndx get`.
    pub min_rto_ms: u64,
    /// Retransmissions of one segment each `ndx get` allows (0: one loss fails it).
    pub max_retries: u32,
    /// What the internal routers run.
    pub kind: IrKind,
    /// Egress limit of every internal router (tc tbf; ndnd routers only), Mbit/s; 0: none.
    pub limit_mbit: u32,
}

/// What one `ndx get` reported.
#[derive(Debug, Clone)]
pub struct GetOutcome {
    /// Exit status success.
    pub ok: bool,
    /// Its goodput line, retransmission line or error.
    pub summary: String,
}

/// The tables of `cluster-scaling`.
#[derive(Debug)]
pub struct ScalingResult {
    /// (time, routers, throughput) samples.
    pub samples: Table,
    /// Each download's outcome.
    pub downloads: Vec<GetOutcome>,
    /// Notes.
    pub notes: Vec<String>,
}

/// Every counter of a loss along the path that is not zero: UDP receive-buffer and other
/// errors of the end hosts' kernels, the ndx routers' drop and ring counters, the front end's
/// drops, and the interfaces' dropped counts.
pub fn loss_counters(t: &Topo, irs: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut roles = vec!["c".to_owned(), "p".to_owned(), "lb".to_owned()];
    roles.extend((1..=irs).map(ir_name));
    for role in &roles {
        // UDP: InErrors, RcvbufErrors, SndbufErrors, MemErrors from /proc/net/snmp.
        if let Ok(o) = t.run(role, &["cat", "/proc/net/snmp"]) {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            let udp: Vec<&str> = text.lines().filter(|l| l.starts_with("Udp:")).collect();
            if let [names, values] = udp[..] {
                for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
                    if n.ends_with("Errors") && v != "0" {
                        out.push(format!("{role} udp {n} {v}"));
                    }
                }
            }
        }
        let script = "for i in /sys/class/net/*; do n=${i##*/}; [ $n = lo ] && continue; \
                      echo $n $(cat $i/statistics/rx_dropped) $(cat $i/statistics/tx_dropped); done";
        if let Ok(o) = t.run(role, &["sh", "-c", script]) {
            for l in String::from_utf8_lossy(&o.stdout).lines() {
                let f: Vec<&str> = l.split_whitespace().collect();
                if f.len() == 3 && (f[1] != "0" || f[2] != "0") {
                    out.push(format!(
                        "{role} {} rx_dropped {} tx_dropped {}",
                        f[0], f[1], f[2]
                    ));
                }
            }
        }
    }
    for k in 1..=irs {
        let Ok(st) = t.ir_status(k) else { continue };
        if let Some(c) = st["counters"].as_object() {
            for (n, v) in c {
                let v = v.as_u64().unwrap_or(0);
                let lossy = n.starts_with("drop_")
                    || n.contains("full")
                    || n.contains("starved")
                    || n.contains("dropped")
                    || n == "unresolved_face";
                if lossy && v > 0 {
                    out.push(format!("ir{k} {n} {v}"));
                }
            }
        }
    }
    if let Ok(st) = t.lb_status() {
        for c in st["counters"].as_array().into_iter().flatten() {
            let (Some(n), Some(v)) = (c[0].as_str(), c[1].as_u64()) else {
                continue;
            };
            let benign = matches!(
                n,
                "passed"
                    | "interests-in"
                    | "port-mapped"
                    | "from-routers"
                    | "fragments"
                    | "tx"
                    | "redirected"
            );
            if !benign && v > 0 {
                out.push(format!("lb {n} {v}"));
            }
        }
    }
    out
}

/// A UDP counter of `role`'s kernel (`/proc/net/snmp`), 0 when unreadable.
pub fn udp_counter(t: &Topo, role: &str, name: &str) -> u64 {
    let Ok(o) = t.run(role, &["cat", "/proc/net/snmp"]) else {
        return 0;
    };
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let udp: Vec<&str> = text.lines().filter(|l| l.starts_with("Udp:")).collect();
    let [names, values] = udp[..] else { return 0 };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// `len` pseudo-random bytes in `path` (xorshift; content is irrelevant, only its size).
fn write_object(path: &Path, len: usize, seed: u64) -> Result<(), String> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ seed;
    let mut data = Vec::with_capacity(len + 8);
    while data.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        data.extend_from_slice(&x.to_le_bytes());
    }
    data.truncate(len);
    fs::write(path, &data).map_err(|e| format!("{}: {e}", path.display()))
}

/// `cluster-scaling` (Fig. 14): downloads run while routers are added every `step_secs`
/// (1 -> 2 -> 3) and then removed (3 -> 2 -> 1); the consumer host's received throughput is
/// sampled every `sample_secs`.
pub fn cluster_scaling(s: &Setup, o: &ScalingOptions) -> Result<ScalingResult, String> {
    if o.limit_mbit > 0 && o.kind == IrKind::Ndx {
        return Err("tc shapes only kernel-socket senders: --limit-mbit needs --ir ndnd".into());
    }
    let mut t = Topo::new(s.tools.clone(), 3, &s.scratch.join("scaling"))?;
    for k in 1..=3 {
        start_ir(&mut t, k, o.kind, o.downloads)?;
        if o.limit_mbit > 0 {
            shape(&t, &ir_name(k), o.limit_mbit)?;
        }
    }
    t.start_lb(&[(1, 1)], &format!("drain_ms = {}", o.drain_ms))?;
    let len = o.object_mb * 1_000_000;
    for d in 1..=o.downloads {
        let file = s.scratch.join(format!("object{d}.bin"));
        write_object(&file, len, d as u64)?;
        progress(&format!("ndx put /t/d{d}: {} MB", o.object_mb));
        t.start_put_on(
            &download_prefix(d),
            &file,
            1,
            producer_port(d),
            &["--segment-size", &s.payload.to_string()],
        )?;
        // The producer holds the encoded segments: the file is no longer needed.
        let _ = fs::remove_file(&file);
    }
    wait_quiet(&t, &Probe::new(&t, 3)?, s)?;
    let mut gets: Vec<(Child, PathBuf)> = Vec::new();
    for d in 1..=o.downloads {
        let log = s.scratch.join(format!("get{d}.log"));
        let f = fs::File::create(&log).map_err(|e| e.to_string())?;
        // To standard output, thrown away: `ndx get -o FILE` removes FILE when the fetch
        // fails, which must never be /dev/null.
        let mut cmd = t.exec("c", &s.tools.ndx);
        cmd.args([
            "get",
            &format!("{}/v=1", download_prefix(d)),
            "-t",
            &format!("{}:6363", crate::cluster::VIP_CONSUMER),
            "--no-progress",
            "--max-retries",
            &o.max_retries.to_string(),
            "--lifetime-ms",
            "2000",
            "--min-rto-ms",
            &o.min_rto_ms.to_string(),
            "--max-cwnd",
            &o.max_cwnd.to_string(),
        ]);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(f)
            .spawn()
            .map_err(|e| format!("ndx get: {e}"))?;
        gets.push((child, log));
    }
    // The schedule: (time, action) with 1 -> 2 -> 3 -> 2 -> 1 routers; one more step at 1.
    let step = o.step_secs;
    let plan: [(f64, &str, usize); 4] = [
        (step, "add", 2),
        (2.0 * step, "add", 3),
        (3.0 * step, "remove", 3),
        (4.0 * step, "remove", 2),
    ];
    let end = 5.0 * step;
    let mut samples = Table::new(&[
        "t_s",
        "routers",
        "consumer_mbps",
        "c_udp_csum_errors",
        "event",
    ]);
    let start = Instant::now();
    let mut last = (start, t.rx_bytes("c")?);
    let mut next_sample = o.sample_secs;
    let mut next_action = 0;
    let mut event = String::new();
    while start.elapsed().as_secs_f64() < end {
        let now = start.elapsed().as_secs_f64();
        if next_action < plan.len() && now >= plan[next_action].0 {
            let (_, what, k) = plan[next_action];
            match what {
                "add" => t.lb_add(k, 1)?,
                _ => t.lb_remove(k)?,
            }
            event = format!("{what} ir{k}");
            progress(&format!("{now:.2} s: {event}"));
            next_action += 1;
        }
        if now >= next_sample {
            let rx = t.rx_bytes("c")?;
            let at = Instant::now();
            let status = t.lb_status()?;
            let secs = at.duration_since(last.0).as_secs_f64();
            let rate = mbps(rx.saturating_sub(last.1) as f64, secs);
            last = (at, rx);
            let active = active_routers(&status);
            samples.push(vec![
                format!("{:.2}", at.duration_since(start).as_secs_f64()),
                active.len().to_string(),
                format!("{rate:.0}"),
                udp_counter(&t, "c", "InCsumErrors").to_string(),
                std::mem::take(&mut event),
            ]);
            next_sample += o.sample_secs;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Let the downloads finish (or fail); report.
    let mut outcomes = Vec::new();
    let mut finished_early = 0;
    for (mut child, log) in gets {
        let deadline = Instant::now() + Duration::from_secs(600);
        let status = loop {
            if let Ok(Some(st)) = child.try_wait() {
                break Some(st);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let text = fs::read_to_string(&log).unwrap_or_default();
        let elapsed: Option<f64> = text
            .lines()
            .find_map(|l| l.strip_prefix("Time elapsed: "))
            .and_then(|x| x.trim_end_matches(" s").parse().ok());
        if elapsed.is_some_and(|e| e < end) {
            finished_early += 1;
        }
        let summary: Vec<&str> = text
            .lines()
            .filter(|l| {
                l.starts_with("Time elapsed")
                    || l.starts_with("Goodput")
                    || l.starts_with("Retransmissions")
                    || l.contains("rror")
            })
            .collect();
        outcomes.push(GetOutcome {
            ok: status.is_some_and(|s| s.success()),
            summary: if summary.is_empty() {
                text.trim().to_owned()
            } else {
                summary.join("; ")
            },
        });
    }
    let final_status = t.lb_status()?;
    let losses = loss_counters(&t, 3);
    let mut notes = vec![
        format!(
            "{} downloads of {} MB objects ({} B segments) by ndx get --max-retries {} --max-cwnd {} --lifetime-ms 2000 --min-rto-ms {} (with --max-retries 0 one lost packet, or one later than the RTO, fails a download)",
            o.downloads, o.object_mb, s.payload, o.max_retries, o.max_cwnd, o.min_rto_ms
        ),
        format!(
            "routers: {}{}, added at {step} s and {} s, removed (two-stage, drain {} ms) at {} s and {} s; routers = those with a share of the hash space; consumer_mbps = IP bytes received by the consumer host per sample",
            o.kind,
            if o.limit_mbit > 0 {
                format!(
                    " with eth0 egress shaped to {} Mbit/s each (tc tbf)",
                    o.limit_mbit
                )
            } else {
                String::new()
            },
            2.0 * step,
            o.drain_ms,
            3.0 * step,
            4.0 * step
        ),
        format!(
            "front end at the end: interests-in {}, no-router {}, frag-miss-in {}, malformed {}",
            gc(&final_status, "interests-in"),
            gc(&final_status, "no-router"),
            gc(&final_status, "frag-miss-in"),
            gc(&final_status, "malformed")
        ),
    ];
    notes.push(if losses.is_empty() {
        "loss counters (UDP errors, interface drops, ndx router drops, front-end drops): all 0"
            .into()
    } else {
        format!("loss counters not 0: {}", losses.join(", "))
    });
    if finished_early > 0 {
        notes.push(format!(
            "{finished_early} download(s) finished before the schedule ended: the throughput at the end counts fewer downloads (raise --object-mb)"
        ));
    }
    Ok(ScalingResult {
        samples,
        downloads: outcomes,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_gen_report() {
        let text = "Sent 100 Interests in 3.001 s: 98 Data (98 Interests satisfied), 1 Nacks, 2 timeouts\n\
                    Data/s: 33 average, per second [10, 40, 48]\nRTT min/avg/max = 0.1/0.2/0.3 ms\n";
        let r = parse_gen(text).unwrap();
        assert_eq!(r.per_second, [10, 40, 48]);
        assert_eq!(r.timeouts, 2);
        assert_eq!(r.nacks, 1);
    }
}
