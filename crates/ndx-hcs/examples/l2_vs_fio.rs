//! Batch-read throughput of the io_uring L2 against `fio` on the same file, same block size
//! (one batch record) and same queue depth, run back to back and alternated; prints the ratio.
//!
//! ```text
//! cargo run --release -p ndx-hcs --example l2_vs_fio -- [--dir /var/tmp] [--size-mib 1024]
//!     [--batch 16] [--frame 8800] [--qd 16] [--seconds 5] [--rounds 3]
//!     [--wait spin|yield|block]
//! ```
//! When a poll delivered nothing, `--wait spin` (default) polls again at once, like a shard
//! loop; `yield` yields the core first; `block` waits in the kernel for one completion
//! (`Region::wait`), which is what fio does. On a loaded machine a busy-polling loop shares
//! its core with other runnable tasks and loses time slices; `block` compares like with like.
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
    seconds: u64,
    rounds: usize,
    wait: Wait,
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
        seconds: 5,
        rounds: 3,
        wait: Wait::Spin,
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
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    a
}

/// xorshift64*: a fast deterministic generator for the random record picks.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
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

/// Random batch reads at queue depth Q for `secs`; returns (batches/s, bytes/s).
fn run_l2(r: &mut Region, locs: &[Location], secs: u64, wait: Wait) -> (f64, f64) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut batches, mut bytes, mut bad) = (0u64, 0u64, 0u64);
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs(secs);
    let mut id = 0;
    loop {
        let now = Instant::now();
        if now < end {
            while r.free_read_slots() > 0 {
                let loc = locs[(rng.next() % locs.len() as u64) as usize];
                r.submit_read(loc, id).expect("submit read");
                id += 1;
            }
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
                    r.wait(1, &mut on_done);
                }
            }
        }
    }
    assert_eq!(bad, 0, "reads failed");
    let dt = t0.elapsed().as_secs_f64();
    (batches as f64 / dt, bytes as f64 / dt)
}

/// The same workload through fio (io_uring engine, O_DIRECT, registered files and buffers).
fn run_fio(path: &str, bs: usize, size: u64, qd: usize, secs: u64) -> (f64, f64) {
    let out = Command::new("fio")
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
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fio JSON");
    let read = &v["jobs"][0]["read"];
    (
        read["iops"].as_f64().unwrap_or(0.0),
        read["bw_bytes"].as_f64().unwrap_or(0.0),
    )
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
    let mut r = Region::create(cfg).expect("create region");
    println!(
        "L2 file {} ({} MiB), B={} frames of {} bytes, Q={}, O_DIRECT={}, registered buffers={}",
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
    println!("round  fio batches/s  fio MiB/s  ndx batches/s  ndx MiB/s  ratio");
    let mut ratios = Vec::new();
    let (mut fio_total, mut l2_total) = (0.0, 0.0);
    // Warm-up (discarded): the freshly written file's metadata settles first.
    run_l2(&mut r, &locs, 1, a.wait);
    for round in 0..a.rounds {
        // Alternate which one goes first so a drifting device favours neither.
        let (fio_iops, fio_bw, l2_iops, l2_bw);
        if round % 2 == 0 {
            (fio_iops, fio_bw) = run_fio(path.to_str().unwrap(), bs, used, a.qd, a.seconds);
            (l2_iops, l2_bw) = run_l2(&mut r, &locs, a.seconds, a.wait);
        } else {
            (l2_iops, l2_bw) = run_l2(&mut r, &locs, a.seconds, a.wait);
            (fio_iops, fio_bw) = run_fio(path.to_str().unwrap(), bs, used, a.qd, a.seconds);
        }
        let ratio = l2_iops / fio_iops;
        fio_total += fio_iops;
        l2_total += l2_iops;
        ratios.push(ratio);
        println!(
            "{round:>5}  {fio_iops:>13.0}  {:>9.1}  {l2_iops:>13.0}  {:>9.1}  {ratio:>5.2}",
            fio_bw / 1048576.0,
            l2_bw / 1048576.0
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "median ndx/fio ratio: {:.2}, ratio of means: {:.2} (target >= 0.9)",
        ratios[ratios.len() / 2],
        l2_total / fio_total
    );
    let c = r.counters();
    println!(
        "counters: reads {} ok {} corrupt {} io_errors {}",
        c.reads, c.reads_ok, c.corrupt, c.io_errors
    );
    // Restart: rebuild the index from the file, verifying whole records, then headers only.
    let cfg = r.config().clone();
    drop(r);
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
