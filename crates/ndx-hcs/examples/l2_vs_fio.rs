//! Batch-read throughput of the io_uring L2 against `fio` on the same file, same block size
//! (one batch record) and same queue depth, run back to back and alternated; prints the ratio.
//!
//! ```text
//! cargo run --release -p ndx-hcs --example l2_vs_fio -- [--dir /var/tmp] [--size-mib 1024]
//!     [--batch 16] [--frame 8800] [--qd 16] [--backlog Q[,N...]] [--seconds 5] [--rounds 3]
//!     [--wait spin|yield|block] [--wait-min 1] [--pages huge[,4k]] [--fio 4k[,huge]]
//! ```
//! The store keeps at most Q reads at the device, like fio's `iodepth`. `--backlog N` (default
//! Q) lets it accept N more reads (`Region::with_read_backlog`), which `poll` hands to the
//! device as reads finish, before checksumming those; `--backlog 0` is the store without a
//! backlog (the device then waits for each finished batch's validation before its next read).
//! `--pages huge` (default) is the store as opened (buffers in transparent huge pages), `4k`
//! the same store in base pages (`Region::with_huge_pages(false)`). One store per (backlog,
//! pages) pair is measured in every round, next to each fio run, in a rotating order: paired
//! numbers on a device and a machine whose speed drifts. `--fio 4k` is fio's default buffers;
//! `huge` gives fio hugetlb buffers (`--mem=mmaphuge`: reserve a few first, e.g.
//! `echo 8 > /proc/sys/vm/nr_hugepages`), the fair reference for the store's huge pages.
//! When a poll delivered nothing, `--wait spin` (default) polls again at once, like a shard
//! loop; `yield` yields the core first; `block` waits in the kernel for `--wait-min`
//! completions (`Region::wait`), which is what fio does. On a loaded machine a busy-polling
//! loop shares its core with other runnable tasks and loses time slices; `block` compares like
//! with like (and `chrt -f 10` keeps other tasks from delaying either).
//!
//! Per run it prints, besides the rates: `depth(store)`, the reads at the device as the store
//! counts them (time-weighted mean) and `time at Q`, the share of the time with exactly Q;
//! from `/proc/diskstats` for the disk holding the file (so fio and the store are measured
//! alike, other processes' reads included): `depth(dev)`, the mean read requests in flight at
//! the block layer, `dev ms/req`, the mean time per request there, and `req/batch`, requests
//! per batch read (1.00: a read is never split); `steal%`, the vCPU time the hypervisor took.
//! Needs `fio` (Debian package `fio`). The file is filled once through the store (so reads hit
//! real records and are validated: checksum + header) and deleted at the end.

use std::process::Command;
use std::time::{Duration, Instant};

use ndx_hcs::{BatchRecord, Completion, L2Backend, Location, Region, RegionConfig, Segment};

#[derive(Debug)]
struct Args {
    dir: String,
    size_mib: u64,
    batch: usize,
    frame: usize,
    qd: usize,
    backlogs: Option<Vec<usize>>,
    seconds: u64,
    rounds: usize,
    wait: Wait,
    /// `--wait block`: completions to wait for (`Region::wait`'s `min`).
    wait_min: usize,
    /// fio's runs: `4k` (its default buffers) and/or `huge` (hugetlb buffers).
    fios: Vec<String>,
    /// The stores' buffers: in huge pages (`huge`, the default) and/or base pages (`4k`).
    pages: Vec<String>,
}

/// What the read loop does when a poll delivered nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Poll again at once (the shard loop's behaviour).
    Spin,
    /// Yield the core, then poll again.
    Yield,
    /// Block in the kernel for one completion (`Region::wait`, as fio does).
    Block,
}

fn parse_args() -> Args {
    let mut a = Args {
        dir: "/var/tmp".into(),
        size_mib: 1024,
        batch: 16,
        frame: 8800,
        qd: 16,
        backlogs: None,
        seconds: 5,
        rounds: 3,
        wait: Wait::Spin,
        pages: vec!["huge".into()],
        fios: vec!["4k".into()],
        wait_min: 1,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let v = argv.get(i + 1).cloned().unwrap_or_default();
        match argv[i].as_str() {
            "--dir" => a.dir = v,
            "--size-mib" => a.size_mib = v.parse().expect("--size-mib N"),
            "--batch" => a.batch = v.parse().expect("--batch N"),
            "--frame" => a.frame = v.parse().expect("--frame N"),
            "--qd" => a.qd = v.parse().expect("--qd N"),
            "--backlog" => {
                a.backlogs = Some(
                    v.split(',')
                        .map(|n| n.parse().expect("--backlog N[,N...]"))
                        .collect(),
                )
            }
            "--seconds" => a.seconds = v.parse().expect("--seconds N"),
            "--rounds" => a.rounds = v.parse().expect("--rounds N"),
            "--wait" => {
                a.wait = match v.as_str() {
                    "spin" => Wait::Spin,
                    "yield" => Wait::Yield,
                    "block" => Wait::Block,
                    _ => panic!("--wait spin|yield|block"),
                }
            }
            "--wait-min" => a.wait_min = v.parse().expect("--wait-min N"),
            "--fio" => a.fios = v.split(',').map(str::to_owned).collect(),
            "--pages" => {
                a.pages = v.split(',').map(str::to_owned).collect();
                assert!(
                    a.pages.iter().all(|p| p == "huge" || p == "4k"),
                    "--pages huge,4k"
                );
            }
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    a
}

/// Fills the region once; returns the locations of every record.
fn fill(r: &mut Region, a: &Args) -> Vec<Location> {
    let frames: Vec<Vec<u8>> = (0..a.batch)
        .map(|i| vec![i as u8 ^ 0xA5; a.frame])
        .collect();
    let segs: Vec<Segment<'_>> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| Segment {
            name_key: i as u64,
            frame: f,
        })
        .collect();
    let probe = BatchRecord {
        content_key: 0,
        batch: 0,
        content_name: b"/bench",
        segments: &segs,
    };
    let n = r.config().file_size / probe.record_len() as u64;
    let mut b = 0;
    while b < n {
        let rec = BatchRecord { batch: b, ..probe };
        match r.submit_write(&rec, b) {
            Ok(_) => b += 1,
            Err(ndx_hcs::SubmitError::Busy) => {
                r.poll(&mut |_| {});
            }
            Err(e) => panic!("fill: {e}"),
        }
    }
    while r.in_flight() > 0 {
        r.poll(&mut |c| {
            if let Completion::Write { result: Err(e), .. } = c {
                panic!("fill: {e}");
            }
        });
    }
    (0..n).filter_map(|b| r.lookup(0, b)).collect()
}

/// Read-side block-layer counters of the disk that holds the L2 file (`/proc/diskstats`):
/// what reached the device, whoever asked (fio or the store), so both are measured alike.
#[derive(Debug, Clone, Copy, Default)]
struct Disk {
    /// Read requests completed.
    ios: u64,
    /// Milliseconds spent by read requests between dispatch and completion, summed.
    ticks_ms: u64,
    /// CPU time stolen by the hypervisor from every vCPU (`/proc/stat`), clock ticks.
    steal: u64,
    /// When sampled.
    at: Option<Instant>,
}

/// `major:minor` of the block device that holds `path`.
fn dev_of(path: &std::path::Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let d = std::fs::metadata(path).map_or(0, |m| m.dev());
    (libc::major(d) as u64, libc::minor(d) as u64)
}

fn disk(dev: (u64, u64)) -> Disk {
    let mut out = Disk {
        at: Some(Instant::now()),
        ..Disk::default()
    };
    let stats = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    for line in stats.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 7 && f[0].parse() == Ok(dev.0) && f[1].parse() == Ok(dev.1) {
            out.ios = f[3].parse().unwrap_or(0);
            out.ticks_ms = f[6].parse().unwrap_or(0);
        }
    }
    if let Some(cpu) = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| s.lines().next().map(str::to_owned))
    {
        out.steal = cpu
            .split_whitespace()
            .nth(8)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
    }
    out
}

/// What the device saw between two samples.
#[derive(Debug, Clone, Copy, Default)]
struct DiskDelta {
    /// Read requests.
    ios: u64,
    /// Mean read requests in flight at the device (Little: summed time / wall time).
    depth: f64,
    /// Mean time per read request at the device, ms.
    ms_per_io: f64,
    /// Share of the 2 vCPUs stolen by the hypervisor (clock ticks at 100 Hz).
    steal: f64,
}

fn delta(a: Disk, b: Disk) -> DiskDelta {
    let (Some(t0), Some(t1)) = (a.at, b.at) else {
        return DiskDelta::default();
    };
    let wall_ms = t1.duration_since(t0).as_secs_f64() * 1e3;
    let ios = b.ios.saturating_sub(a.ios);
    let ticks = b.ticks_ms.saturating_sub(a.ticks_ms) as f64;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    DiskDelta {
        ios,
        depth: ticks / wall_ms,
        ms_per_io: ticks / ios.max(1) as f64,
        steal: b.steal.saturating_sub(a.steal) as f64 * 10.0 / (wall_ms * cpus),
    }
}

/// What one timed run through the store measured.
#[derive(Debug, Clone, Copy, Default)]
struct L2Run {
    batches_per_s: f64,
    bytes_per_s: f64,
    /// Batch reads delivered.
    reads: u64,
    /// `io_uring_enter` calls made meanwhile (submissions, completion pickups, waits).
    enters: u64,
    /// CPU time of the reading thread (user + system), seconds.
    cpu: f64,
    /// Mean reads at the device as the store counts them (pushed and not reaped), weighted
    /// by time.
    store_depth: f64,
    /// Share of the time with exactly Q reads at the device (store's view): the top bucket
    /// of the time-weighted histogram of its in-flight count.
    at_q: f64,
    /// What the block layer saw.
    disk: DiskDelta,
}

/// CPU time this thread has used so far, seconds (`/proc/thread-self/schedstat`; 0 without
/// it).
fn thread_cpu() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 * 1e-9)
}

/// Random batch reads at queue depth Q for `secs`.
fn run_l2(
    r: &mut Region,
    locs: &[Location],
    secs: u64,
    wait: Wait,
    qd: usize,
    wait_min: usize,
    dev: (u64, u64),
) -> L2Run {
    // A fast deterministic generator for the random record picks.
    let mut rng = ndx_codec::rng::Rng::new(0x9E37_79B9_7F4A_7C15);
    let enters0 = r.counters().ring_enters;
    let cpu0 = thread_cpu();
    let (mut batches, mut bytes, mut bad) = (0u64, 0u64, 0u64);
    let d0 = disk(dev);
    let t0 = Instant::now();
    // Time-weighted reads at the device (store's view), sampled after every poll.
    let (mut last, mut depth_ns) = (t0, 0f64);
    let mut depth_now = 0usize;
    // hist[k]: nanoseconds spent with k reads at the device.
    let mut hist = vec![0f64; qd + 1];
    let end = t0 + Duration::from_secs(secs);
    let mut id = 0;
    loop {
        let now = Instant::now();
        if now < end {
            while r.free_read_slots() > 0 {
                let loc = locs[rng.below(locs.len() as u64) as usize];
                r.submit_read(loc, id).expect("submit read");
                id += 1;
            }
            // The fairness condition: never more reads at the device than fio's iodepth.
            assert!(r.device_reads() <= qd, "more than Q reads at the device");
        } else if r.in_flight() == 0 {
            break;
        }
        let mut on_done = |c: Completion<'_>| {
            if let Completion::Read {
                result, location, ..
            } = c
            {
                match result {
                    Ok(v) => {
                        batches += 1;
                        bytes += u64::from(location.len);
                        std::hint::black_box(v.len());
                    }
                    Err(_) => bad += 1,
                }
            }
        };
        let done = r.poll(&mut on_done);
        if done == 0 {
            match wait {
                Wait::Spin => {}
                Wait::Yield => std::thread::yield_now(),
                Wait::Block => {
                    r.wait(wait_min, &mut on_done);
                }
            }
        }
        let t = Instant::now();
        let ns = t.duration_since(last).as_nanos() as f64;
        depth_ns += depth_now as f64 * ns;
        hist[depth_now.min(qd)] += ns;
        (last, depth_now) = (t, r.device_reads());
    }
    let d1 = disk(dev);
    assert_eq!(bad, 0, "reads failed");
    let dt = t0.elapsed().as_secs_f64();
    L2Run {
        batches_per_s: batches as f64 / dt,
        bytes_per_s: bytes as f64 / dt,
        reads: batches,
        enters: r.counters().ring_enters - enters0,
        cpu: thread_cpu() - cpu0,
        store_depth: depth_ns / (dt * 1e9),
        at_q: hist[qd] / hist.iter().sum::<f64>().max(1.0),
        disk: delta(d0, d1),
    }
}

/// What one fio run measured.
#[derive(Debug, Clone, Copy, Default)]
struct FioRun {
    batches_per_s: f64,
    bytes_per_s: f64,
    /// fio's completion latency (submission to reaping), mean, ms.
    clat_ms: f64,
    /// fio's CPU (user + system) per read, us.
    cpu_us: f64,
    /// What the block layer saw.
    disk: DiskDelta,
}

/// The same workload through fio (io_uring engine, O_DIRECT, registered files and buffers,
/// `extra` arguments first).
fn run_fio(
    path: &str,
    bs: usize,
    size: u64,
    qd: usize,
    secs: u64,
    dev: (u64, u64),
    extra: &[&str],
) -> FioRun {
    let d0 = disk(dev);
    let out = Command::new("fio")
        .args(extra)
        .args([
            "--name=l2",
            &format!("--filename={path}"),
            "--rw=randread",
            &format!("--bs={bs}"),
            &format!("--size={size}"),
            &format!("--iodepth={qd}"),
            "--ioengine=io_uring",
            "--direct=1",
            "--fixedbufs",
            "--registerfiles",
            "--norandommap",
            "--time_based",
            &format!("--runtime={secs}"),
            "--output-format=json",
        ])
        .output()
        .expect("run fio (apt-get install fio)");
    assert!(
        out.status.success(),
        "fio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d1 = disk(dev);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fio JSON");
    let job = &v["jobs"][0];
    let read = &job["read"];
    let iops = read["iops"].as_f64().unwrap_or(0.0);
    let cpu = job["usr_cpu"].as_f64().unwrap_or(0.0) + job["sys_cpu"].as_f64().unwrap_or(0.0);
    let mut disk = delta(d0, d1);
    // The reads happened during fio's runtime, not its start-up and exit.
    if let Some(ms) = job["job_runtime"].as_f64().filter(|&ms| ms > 0.0) {
        disk.depth = disk.ms_per_io * disk.ios as f64 / ms;
    }
    FioRun {
        batches_per_s: iops,
        bytes_per_s: read["bw_bytes"].as_f64().unwrap_or(0.0),
        clat_ms: read["clat_ns"]["mean"].as_f64().unwrap_or(0.0) * 1e-6,
        cpu_us: cpu * 1e4 / iops.max(1.0),
        disk,
    }
}

fn main() {
    let a = parse_args();
    let dir = tempfile::Builder::new()
        .prefix("ndx-l2-bench-")
        .tempdir_in(&a.dir)
        .expect("bench dir");
    let path = dir.path().join("l2.dat");
    let mut cfg = RegionConfig::new(vec![path.clone()], a.size_mib << 20, a.batch, a.frame);
    cfg.read_depth = a.qd;
    cfg.write_depth = 8;
    // One store per (backlog, pages) pair.
    let mut kinds: Vec<(usize, bool)> = Vec::new();
    for &b in &a.backlogs.clone().unwrap_or_else(|| vec![a.qd]) {
        for p in &a.pages {
            kinds.push((b, p == "huge"));
        }
    }
    let labels: Vec<String> = kinds
        .iter()
        .map(|&(b, huge)| format!("b{b} {}", if huge { "huge" } else { "4k" }))
        .collect();
    let mut r = Region::create(cfg)
        .and_then(|r| r.with_read_backlog(kinds[0].0))
        .and_then(|r| r.with_huge_pages(kinds[0].1))
        .expect("create region");
    println!(
        "L2 file {} ({} MiB), B={} frames of {} bytes, Q={}, stores {labels:?}, O_DIRECT={}, \
         registered buffers={}",
        path.display(),
        a.size_mib,
        a.batch,
        a.frame,
        a.qd,
        r.direct_io(),
        r.registered_buffers()
    );
    let t = Instant::now();
    let locs = fill(&mut r, &a);
    let bs = locs[0].len as usize;
    let used = locs.len() as u64 * bs as u64;
    println!(
        "filled {} records of {} bytes in {:.1} s",
        locs.len(),
        bs,
        t.elapsed().as_secs_f64()
    );
    // One store per kind, over the same file (the others rebuild the index from headers).
    let cfg = r.config().clone();
    let mut stores = vec![(r, locs)];
    for &(b, huge) in &kinds[1..] {
        let r = Region::recover(RegionConfig {
            verify: ndx_hcs::Verify::Header,
            ..cfg.clone()
        })
        .and_then(|r| r.with_read_backlog(b))
        .and_then(|r| r.with_huge_pages(huge))
        .expect("open a second store");
        let locs: Vec<Location> = (0..stores[0].1.len() as u64)
            .filter_map(|b| r.lookup(0, b))
            .collect();
        assert_eq!(locs, stores[0].1, "the recovered index differs");
        stores.push((r, locs));
    }
    for (l, (r, _)) in labels.iter().zip(&stores) {
        println!(
            "{l}: {} MiB of buffers in huge pages",
            r.huge_page_bytes() >> 20
        );
    }
    let dev = dev_of(&path);
    println!(
        "round  run          batches/s   MiB/s  ratio  enters/read  cpu us/read  depth(store)  \
         depth(dev)  dev ms/req  req/batch  steal%  time at Q"
    );
    let nf = a.fios.len();
    let fio_args = |name: &str| -> &'static [&'static str] {
        match name {
            "4k" => &[],
            "huge" => &["--mem=mmaphuge", "--hugepage-size=2m"],
            other => panic!("--fio 4k,huge: unknown {other}"),
        }
    };
    // ratios[store][fio variant]: one per round.
    let mut ratios = vec![vec![Vec::new(); nf]; stores.len()];
    let mut fio_totals = vec![0.0; nf];
    let mut l2_totals = vec![0.0; stores.len()];
    let mut l2_counts = vec![(0u64, 0u64, 0.0f64); stores.len()];
    // Warm-up (discarded): the freshly written file's metadata settles first.
    for (r, locs) in &mut stores {
        run_l2(r, locs, 1, a.wait, a.qd, a.wait_min, dev);
    }
    for round in 0..a.rounds {
        // Rotate the order (each fio, then each store) so a drifting device favours none.
        let n = stores.len() + nf;
        let (mut fio, mut l2) = (
            vec![FioRun::default(); nf],
            vec![L2Run::default(); stores.len()],
        );
        for k in 0..n {
            let i = (k + round) % n;
            if i < nf {
                let extra = fio_args(&a.fios[i]);
                fio[i] = run_fio(
                    path.to_str().unwrap(),
                    bs,
                    used,
                    a.qd,
                    a.seconds,
                    dev,
                    extra,
                );
            } else {
                let (r, locs) = &mut stores[i - nf];
                l2[i - nf] = run_l2(r, locs, a.seconds, a.wait, a.qd, a.wait_min, dev);
            }
        }
        let secs = a.seconds as f64;
        for (f, run) in fio.iter().enumerate() {
            fio_totals[f] += run.batches_per_s;
            println!(
                "{round:>5}  fio {:<6}  {:>10.0}  {:>6.1}  {:>5.2}  {:>11}  {:>11.1}  {:>12}  \
                 {:>10.2}  {:>10.2}  {:>9.2}  {:>6.1}   (fio clat {:.2} ms)",
                a.fios[f],
                run.batches_per_s,
                run.bytes_per_s / 1048576.0,
                run.batches_per_s / fio[0].batches_per_s,
                "-",
                run.cpu_us,
                "-",
                run.disk.depth,
                run.disk.ms_per_io,
                run.disk.ios as f64 / (run.batches_per_s * secs).max(1.0),
                run.disk.steal * 100.0,
                run.clat_ms,
            );
        }
        for (i, run) in l2.iter().enumerate() {
            for (f, fr) in fio.iter().enumerate() {
                ratios[i][f].push(run.batches_per_s / fr.batches_per_s);
            }
            l2_totals[i] += run.batches_per_s;
            l2_counts[i].0 += run.reads;
            l2_counts[i].1 += run.enters;
            l2_counts[i].2 += run.cpu;
            println!(
                "{round:>5}  {:<10}  {:>10.0}  {:>6.1}  {:>5.2}  {:>11.2}  {:>11.1}  \
                 {:>12.2}  {:>10.2}  {:>10.2}  {:>9.2}  {:>6.1}  {:>8.1}%",
                labels[i],
                run.batches_per_s,
                run.bytes_per_s / 1048576.0,
                run.batches_per_s / fio[0].batches_per_s,
                run.enters as f64 / run.reads.max(1) as f64,
                run.cpu * 1e6 / run.reads.max(1) as f64,
                run.store_depth,
                run.disk.depth,
                run.disk.ms_per_io,
                run.disk.ios as f64 / run.reads.max(1) as f64,
                run.disk.steal * 100.0,
                run.at_q * 100.0,
            );
        }
    }
    for (i, (r, _)) in stores.iter().enumerate() {
        let c = r.counters();
        let (reads, enters, cpu) = l2_counts[i];
        let mut vs = String::new();
        for (f, name) in a.fios.iter().enumerate() {
            let rs = &mut ratios[i][f];
            rs.sort_by(f64::total_cmp);
            vs += &format!(
                "vs fio {name}: median {:.2} (min {:.2}, max {:.2}), ratio of means {:.2}; ",
                rs[rs.len() / 2],
                rs[0],
                rs[rs.len() - 1],
                l2_totals[i] / fio_totals[f]
            );
        }
        println!(
            "{}: {vs}(target >= 1.0); io_uring_enter per batch read {:.2} ({enters} for {reads} \
             timed reads; target <= 2), CPU {:.1} us per batch read; all reads {} ok {} corrupt \
             {} io_errors {}, io_uring_enter calls {} (fill and warm-up included)",
            labels[i],
            enters as f64 / reads.max(1) as f64,
            cpu * 1e6 / reads.max(1) as f64,
            c.reads,
            c.reads_ok,
            c.corrupt,
            c.io_errors,
            c.ring_enters,
        );
    }
    drop(stores);
    // Restart: rebuild the index from the file, verifying whole records, then headers only.
    for verify in [ndx_hcs::Verify::Full, ndx_hcs::Verify::Header] {
        let t = Instant::now();
        let r = Region::recover(RegionConfig {
            verify,
            ..cfg.clone()
        })
        .expect("recover region");
        let rep = r.recovery_report();
        println!(
            "restart ({verify:?}): scanned {} MiB in {:.2} s: {} records, {} indexed, {} corrupt, {} truncated",
            a.size_mib,
            t.elapsed().as_secs_f64(),
            rep.records,
            rep.indexed,
            rep.corrupt,
            rep.truncated
        );
    }
}
