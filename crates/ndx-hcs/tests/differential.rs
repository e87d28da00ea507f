//! The io_uring file store and the emulated DRAM store run the same random operations and
//! must agree on every placement, lookup and batch read; and a restart of the file store at a
//! random point recovers the same index.

use ndx_hcs::{
    BatchRecord, Completion, DelayMode, EmulatedConfig, EmulatedL2, L2Backend, MemoryMode, Region,
    RegionConfig, Segment, Verify,
};
use proptest::prelude::*;

const CAP: u64 = 64 * 4096;
const MAX_RECORD: usize = 16 * 4096;

#[derive(Debug, Clone)]
enum Op {
    Write {
        key: u64,
        batch: u64,
        segs: usize,
        len: usize,
    },
    Read {
        key: u64,
        batch: u64,
    },
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..4, 0u64..4, 1usize..8, 1usize..7000)
            .prop_map(|(key, batch, segs, len)| Op::Write { key, batch, segs, len }),
        4 => (0u64..4, 0u64..4).prop_map(|(key, batch)| Op::Read { key, batch }),
        1 => Just(Op::Restart),
    ]
}

type Batch = Vec<(u64, Vec<u8>)>;

/// Runs every queued operation to completion; returns the batches read.
fn drain(l2: &mut dyn L2Backend) -> Vec<Result<Batch, String>> {
    let mut out = Vec::new();
    let mut spins = 0u64;
    while l2.in_flight() > 0 {
        l2.poll(&mut |c| {
            if let Completion::Read { result, .. } = c {
                out.push(
                    result
                        .map(|v| {
                            v.segments()
                                .map(|s| (s.name_key, s.frame.to_vec()))
                                .collect()
                        })
                        .map_err(|e| e.to_string()),
                );
            }
        });
        spins += 1;
        assert!(spins < 100_000_000, "operations never completed");
    }
    out
}

mod common;
use common::open;

fn region_cfg(path: &std::path::Path) -> RegionConfig {
    RegionConfig {
        files: vec![path.to_path_buf()],
        file_size: CAP,
        max_record: MAX_RECORD,
        read_depth: 4,
        write_depth: 2,
        direct: true,
        verify: Verify::Full,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn file_store_and_emulated_store_agree(ops in proptest::collection::vec(op(), 1..60)) {
        let dir = tempfile::Builder::new().prefix("ndx-hcs-diff-").tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("l2");
        let Some(mut file) = open(Region::create, region_cfg(&path)) else { return Ok(()) };
        let mut emu = EmulatedL2::new(EmulatedConfig {
            capacity: CAP,
            max_record: MAX_RECORD,
            tau_bps: 1e15,
            delay: DelayMode::Deadline,
            memory: MemoryMode::Dynamic,
            read_depth: 4,
            write_depth: 2,
        });
        let mut restarted = false;
        for op in ops {
            match op {
                Op::Write { key, batch, segs, len } => {
                    let frames: Vec<Vec<u8>> = (0..segs)
                        .map(|i| vec![(key * 16 + batch * 4 + i as u64) as u8; len + i])
                        .collect();
                    let segments: Vec<Segment<'_>> = frames
                        .iter()
                        .enumerate()
                        .map(|(i, f)| Segment { name_key: key << 8 | i as u64, frame: f })
                        .collect();
                    let rec = BatchRecord { content_key: key, batch, content_name: b"x", segments: &segments };
                    let a = file.submit_write(&rec, 0);
                    let b = emu.submit_write(&rec, 0);
                    // After a restart the file log's sequence numbers continue from the
                    // recovered log and may differ from the emulator's; placement does not.
                    prop_assert_eq!(a.map(|l| (l.lane, l.offset, l.len)), b.map(|l| (l.lane, l.offset, l.len)));
                    drain(&mut file);
                    drain(&mut emu);
                }
                Op::Read { key, batch } => {
                    let (a, b) = (file.lookup(key, batch), emu.lookup(key, batch));
                    prop_assert_eq!(a.map(|l| (l.offset, l.len)), b.map(|l| (l.offset, l.len)));
                    if let (Some(a), Some(b)) = (a, b) {
                        file.submit_read(a, 1).unwrap();
                        emu.submit_read(b, 1).unwrap();
                        let (ra, rb) = (drain(&mut file), drain(&mut emu));
                        prop_assert_eq!(ra.len(), 1);
                        prop_assert!(ra[0].is_ok(), "{:?}", ra[0].as_ref().err());
                        prop_assert_eq!(ra, rb);
                    }
                }
                Op::Restart => {
                    drop(file);
                    file = open(Region::recover, region_cfg(&path)).unwrap();
                    let rep = file.recovery_report();
                    prop_assert_eq!(rep.corrupt + rep.truncated, 0);
                    restarted = true;
                }
            }
            for key in 0..4 {
                for batch in 0..4 {
                    let (a, b) = (file.lookup(key, batch), emu.lookup(key, batch));
                    prop_assert_eq!(a.map(|l| (l.offset, l.len)), b.map(|l| (l.offset, l.len)),
                        "key {} batch {} restarted {}", key, batch, restarted);
                }
            }
        }
        let (cf, ce) = (file.counters(), emu.counters());
        prop_assert_eq!(cf.indexed, ce.indexed);
        prop_assert_eq!(cf.corrupt, 0);
    }
}
