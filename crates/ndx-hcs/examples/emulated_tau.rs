//! Seed 000 §4.2 (Fig. 4) on the emulated L2: observed L2 read throughput against the target
//! tau, for each delay technique (deadline, busy wait, sleep) and memory technique (static,
//! dynamic). B = 10 chunks of 8 KB, as in the paper.
//!
//! ```text
//! cargo run --release -p ndx-hcs --example emulated_tau -- [--millis 300]
//! ```

use std::time::{Duration, Instant};

use ndx_hcs::{
    BatchRecord, Completion, DelayMode, EmulatedConfig, EmulatedL2, L2Backend, MemoryMode, Segment,
};

const B: usize = 10;
const CHUNK: usize = 8192;
const BATCHES: u64 = 256;

fn main() {
    let mut millis = 300u64;
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("--millis") {
        millis = argv
            .get(1)
            .and_then(|v| v.parse().ok())
            .expect("--millis N");
    }
    let frames: Vec<Vec<u8>> = (0..B).map(|i| vec![i as u8; CHUNK]).collect();
    let segs: Vec<Segment<'_>> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| Segment {
            name_key: i as u64,
            frame: f,
        })
        .collect();
    let probe = BatchRecord {
        content_key: 1,
        batch: 0,
        content_name: b"",
        segments: &segs,
    };
    let rec_len = probe.record_len();
    println!(
        "record {rec_len} bytes (B={B} x {CHUNK}), {BATCHES} batches in L2, {millis} ms per point"
    );
    println!(
        "{:>8} {:>8} {:>8} {:>12}",
        "tau Gb/s", "delay", "memory", "observed Gb/s"
    );
    for delay in [DelayMode::Deadline, DelayMode::BusyWait, DelayMode::Sleep] {
        for memory in [MemoryMode::Static, MemoryMode::Dynamic] {
            for tau_gbps in [1.0, 4.0, 16.0, 64.0] {
                let mut l2 = EmulatedL2::new(EmulatedConfig {
                    capacity: BATCHES * rec_len as u64,
                    max_record: rec_len,
                    tau_bps: tau_gbps * 1e9,
                    delay,
                    memory,
                    read_depth: 16,
                    write_depth: 16,
                });
                let mut locs = Vec::new();
                for b in 0..BATCHES {
                    let rec = BatchRecord { batch: b, ..probe };
                    locs.push(l2.submit_write(&rec, b).expect("write"));
                    l2.poll(&mut |_| {});
                }
                let (mut bytes, mut i) = (0u64, 0usize);
                let t0 = Instant::now();
                while t0.elapsed() < Duration::from_millis(millis) {
                    while l2.submit_read(locs[i % locs.len()], i as u64).is_ok() {
                        i += 1;
                    }
                    l2.poll(&mut |c| {
                        if let Completion::Read { result: Ok(v), .. } = c {
                            // Touch every frame, as an L1 insert would.
                            for s in v.segments() {
                                bytes += s.frame.len() as u64;
                            }
                        }
                    });
                }
                let gbps = bytes as f64 * 8.0 / t0.elapsed().as_secs_f64() / 1e9;
                println!(
                    "{tau_gbps:>8.0} {:>8} {:>8} {gbps:>12.2}",
                    format!("{delay:?}"),
                    format!("{memory:?}")
                );
            }
        }
    }
}
