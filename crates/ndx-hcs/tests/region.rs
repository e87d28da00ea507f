//! The io_uring file store on real files (in /var/tmp: a disk-backed directory, so O_DIRECT
//! is exercised as in production).

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use ndx_hcs::{
    BLOCK, BatchRecord, Completion, L2Backend, Location, ReadFailure, Region, RegionConfig,
    SubmitError, WriteFailure,
};

mod common;
use common::open;

const B: usize = 16;
const FRAME: usize = 8800;

fn tempdir() -> tempfile::TempDir {
    common::tempdir("ndx-hcs-test-")
}

fn cfg(files: &[PathBuf], file_size: u64) -> RegionConfig {
    RegionConfig::new(files.to_vec(), file_size, B, FRAME)
}

/// A new region on one file of `file_size` bytes in a fresh directory (keep the directory
/// as long as the region), or `None` when the test skips ([`open`]).
fn fresh_region(file_size: u64) -> Option<(tempfile::TempDir, Region)> {
    let dir = tempdir();
    let files = [dir.path().join("l2")];
    let r = open(Region::create, cfg(&files, file_size))?;
    Some((dir, r))
}

/// Deterministic frame bytes for (content, segment).
fn frame(content: u64, seg: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (content.wrapping_mul(131) ^ seg.wrapping_mul(7) ^ i as u64) as u8)
        .collect()
}

fn batch_frames(content: u64, batch: u64, n: usize, len: usize) -> Vec<Vec<u8>> {
    (0..n as u64)
        .map(|i| frame(content, batch * B as u64 + i, len))
        .collect()
}

fn write(r: &mut Region, content: u64, batch: u64, n: usize, len: usize) -> Location {
    let frames = batch_frames(content, batch, n, len);
    let segs = common::segments(&frames, |i| content ^ (batch * B as u64 + i));
    let rec = BatchRecord {
        content_key: content,
        batch,
        content_name: b"/ndx/test",
        segments: &segs,
    };
    r.submit_write(&rec, content << 32 | batch)
        .expect("submit write")
}

/// A read completion: request id, and the (name key, frame) pairs or the failure.
type ReadDone = (u64, Result<Vec<(u64, Vec<u8>)>, ReadFailure>);
/// A write completion: request id and result.
type WriteDone = (u64, Result<(), WriteFailure>);

/// Polls until nothing is in flight, collecting completions.
fn drain(r: &mut Region) -> (Vec<ReadDone>, Vec<WriteDone>) {
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    let mut spins = 0u64;
    while r.in_flight() > 0 {
        r.poll(&mut |c| match c {
            Completion::Read {
                request_id, result, ..
            } => reads.push((
                request_id,
                result.map(|v| {
                    v.segments()
                        .map(|s| (s.name_key, s.frame.to_vec()))
                        .collect()
                }),
            )),
            Completion::Write {
                request_id, result, ..
            } => writes.push((request_id, result)),
        });
        spins += 1;
        if spins.is_multiple_of(1000) {
            std::thread::yield_now();
        }
        assert!(spins < 100_000_000, "io_uring operations never completed");
    }
    (reads, writes)
}

fn check_batch(got: &[(u64, Vec<u8>)], content: u64, batch: u64, n: usize, len: usize) {
    assert_eq!(got.len(), n);
    for (i, (key, bytes)) in got.iter().enumerate() {
        assert_eq!(*key, content ^ (batch * B as u64 + i as u64));
        assert_eq!(bytes, &frame(content, batch * B as u64 + i as u64, len));
    }
}

#[test]
fn write_then_read_batches_on_two_files() {
    let dir = tempdir();
    let files = [dir.path().join("l2-a"), dir.path().join("l2-b")];
    let Some(mut r) = open(Region::create, cfg(&files, 16 << 20)) else {
        return;
    };
    // /var/tmp is ext4 here: O_DIRECT must be accepted.
    assert!(
        r.direct_io(),
        "O_DIRECT refused on {}",
        dir.path().display()
    );
    let mut locs = Vec::new();
    for b in 0..4 {
        locs.push(write(&mut r, 7, b, B, FRAME - b as usize));
    }
    assert_eq!(
        r.lookup(7, 0),
        None,
        "not visible before the write completes"
    );
    let (_, writes) = drain(&mut r);
    assert_eq!(writes.len(), 4);
    assert!(writes.iter().all(|w| w.1.is_ok()));
    assert_eq!(
        locs.iter().map(|l| l.lane).collect::<Vec<_>>(),
        vec![0, 1, 0, 1]
    );
    for (b, loc) in locs.iter().enumerate() {
        assert_eq!(r.lookup(7, b as u64), Some(*loc));
        r.submit_read(*loc, 100 + b as u64).unwrap();
    }
    let (mut reads, _) = drain(&mut r);
    reads.sort_by_key(|x| x.0);
    assert_eq!(reads.len(), 4);
    for (b, (id, res)) in reads.iter().enumerate() {
        assert_eq!(*id, 100 + b as u64);
        check_batch(res.as_ref().unwrap(), 7, b as u64, B, FRAME - b);
    }
    let c = r.counters();
    assert_eq!((c.reads, c.reads_ok, c.writes, c.writes_ok), (4, 4, 4, 4));
    assert_eq!(
        c.read_bytes,
        locs.iter().map(|l| u64::from(l.len)).sum::<u64>()
    );
    assert!(!c.degraded);
}

#[test]
fn queue_depth_refuses_then_recovers() {
    let dir = tempdir();
    let files = [dir.path().join("l2")];
    let mut c = cfg(&files, 8 << 20);
    c.read_depth = 2;
    let Some(mut r) = open(Region::create, c) else {
        return;
    };
    let loc = write(&mut r, 1, 0, 4, 1000);
    drain(&mut r);
    r.submit_read(loc, 1).unwrap();
    r.submit_read(loc, 2).unwrap();
    assert_eq!(r.submit_read(loc, 3), Err(SubmitError::Busy));
    let (reads, _) = drain(&mut r);
    assert_eq!(reads.len(), 2);
    r.submit_read(loc, 3).unwrap();
    let (reads, _) = drain(&mut r);
    check_batch(reads[0].1.as_ref().unwrap(), 1, 0, 4, 1000);
    assert_eq!(r.counters().busy, 1);
}

#[test]
fn fifo_log_wraps_and_forgets_overwritten_batches() {
    // Records of 16 x 8800 bytes take 36 blocks; a 1 MiB file (256 blocks) holds 7.
    let Some((_dir, mut r)) = fresh_region(1 << 20) else {
        return;
    };
    let mut locs = Vec::new();
    for b in 0..20 {
        locs.push(write(&mut r, 3, b, B, FRAME));
        drain(&mut r);
    }
    for b in 0..13 {
        assert_eq!(r.lookup(3, b), None, "batch {b} should be overwritten");
    }
    for b in 13..20 {
        assert_eq!(r.lookup(3, b), Some(locs[b as usize]));
    }
    assert_eq!(r.submit_read(locs[0], 1), Err(SubmitError::Stale));
    r.submit_read(locs[19], 19).unwrap();
    let (reads, _) = drain(&mut r);
    check_batch(reads[0].1.as_ref().unwrap(), 3, 19, B, FRAME);
    assert_eq!(r.counters().evicted, 13);
}

#[test]
fn restart_rebuilds_the_index_and_serves_the_data() {
    let dir = tempdir();
    let files = [dir.path().join("l2-a"), dir.path().join("l2-b")];
    let mut want = Vec::new();
    {
        let Some(mut r) = open(Region::create, cfg(&files, 2 << 20)) else {
            return;
        };
        for content in 0..5u64 {
            for b in 0..3 {
                write(
                    &mut r,
                    content,
                    b,
                    1 + (content as usize * 3 + b as usize) % B,
                    5000,
                );
            }
            drain(&mut r);
        }
        for content in 0..5u64 {
            for b in 0..3 {
                want.push(((content, b), r.lookup(content, b)));
            }
        }
        // Dropped without any shutdown step: the "crash".
    }
    let Some(mut r) = open(Region::recover, cfg(&files, 2 << 20)) else {
        return;
    };
    let rep = r.recovery_report();
    assert_eq!((rep.corrupt, rep.truncated), (0, 0));
    assert_eq!(
        rep.indexed as usize,
        want.iter().filter(|w| w.1.is_some()).count()
    );
    for ((content, b), loc) in &want {
        assert_eq!(r.lookup(*content, *b), *loc);
    }
    for (i, ((content, b), loc)) in want.iter().enumerate() {
        if let Some(loc) = loc {
            r.submit_read(*loc, i as u64).unwrap();
            let (reads, _) = drain(&mut r);
            let n = 1 + (*content as usize * 3 + *b as usize) % B;
            check_batch(reads[0].1.as_ref().unwrap(), *content, *b, n, 5000);
        }
    }
    // New writes go after the recovered log and do not clobber what is indexed.
    let loc = write(&mut r, 99, 0, 2, 100);
    drain(&mut r);
    assert!(
        loc.seq
            > want
                .iter()
                .filter_map(|w| w.1)
                .map(|l| l.seq)
                .max()
                .unwrap()
    );
    assert_eq!(r.lookup(4, 2), want.last().unwrap().1);
}

fn corrupt_byte(path: &Path, offset: u64) {
    common::xor_byte(path, offset, 0x5A);
}

#[test]
fn corrupt_and_truncated_records_are_detected_counted_and_never_served() {
    let dir = tempdir();
    let files = [dir.path().join("l2")];
    let (a, b, c);
    {
        let Some(mut r) = open(Region::create, cfg(&files, 4 << 20)) else {
            return;
        };
        a = write(&mut r, 1, 0, B, FRAME);
        b = write(&mut r, 1, 1, B, FRAME);
        c = write(&mut r, 1, 2, B, FRAME);
        drain(&mut r);
        // Corrupt b on disk while the region is open: the read must refuse it.
        corrupt_byte(&files[0], b.offset + 3 * BLOCK as u64 + 17);
        r.submit_read(b, 1).unwrap();
        let (reads, _) = drain(&mut r);
        assert!(
            matches!(reads[0].1, Err(ReadFailure::Corrupt(_))),
            "{:?}",
            reads[0].1.as_ref().err()
        );
        assert_eq!(r.lookup(1, 1), None, "a corrupt record leaves the index");
        assert_eq!(r.counters().corrupt, 1);
        assert!(!r.counters().degraded, "corruption is not an I/O failure");
    }
    // Cut the file in the middle of c, then restart.
    let f = OpenOptions::new().write(true).open(&files[0]).unwrap();
    f.set_len(c.offset + 2 * BLOCK as u64).unwrap();
    drop(f);
    let Some(mut r) = open(Region::recover, cfg(&files, 4 << 20)) else {
        return;
    };
    let rep = r.recovery_report();
    assert_eq!(
        (rep.records, rep.corrupt, rep.truncated, rep.indexed),
        (1, 1, 1, 1)
    );
    assert_eq!(r.lookup(1, 0), Some(a));
    assert_eq!(r.lookup(1, 1), None);
    assert_eq!(r.lookup(1, 2), None);
    assert_eq!(r.counters().corrupt, 1);
    assert_eq!(r.counters().truncated, 1);
    r.submit_read(a, 0).unwrap();
    let (reads, _) = drain(&mut r);
    check_batch(reads[0].1.as_ref().unwrap(), 1, 0, B, FRAME);
}

#[test]
fn disk_full_stops_writes() {
    // /dev/full accepts the open and io_uring, and fails every write with ENOSPC.
    let Some(mut r) = open(Region::create, cfg(&[PathBuf::from("/dev/full")], 4 << 20)) else {
        return;
    };
    write(&mut r, 5, 0, 4, 1000);
    let (_, writes) = drain(&mut r);
    assert_eq!(writes.len(), 1);
    match writes[0].1 {
        Err(WriteFailure::Io(e)) => assert_eq!(e, libc_enospc()),
        Err(WriteFailure::Short { .. }) => {}
        Ok(()) => panic!("a write to /dev/full succeeded"),
    }
    let c = r.counters();
    assert!(c.writes_stopped && !c.degraded, "{c:?}");
    assert_eq!((c.io_errors, c.enospc, c.write_errors), (1, 1, 0));
    assert_eq!(r.lookup(5, 0), None);
    assert_eq!(
        common::submit_tiny(&mut r, 5, 1, 1),
        Err(SubmitError::WritesStopped)
    );
    assert!(!r.is_degraded());
}

fn libc_enospc() -> i32 {
    28
}

#[test]
fn buffered_mode_works_too() {
    let dir = tempdir();
    let files = [dir.path().join("l2")];
    let mut c = cfg(&files, 4 << 20);
    c.direct = false;
    let Some(mut r) = open(Region::create, c) else {
        return;
    };
    assert!(!r.direct_io());
    let loc = write(&mut r, 8, 0, 3, 7000);
    drain(&mut r);
    r.submit_read(loc, 0).unwrap();
    let (reads, _) = drain(&mut r);
    check_batch(reads[0].1.as_ref().unwrap(), 8, 0, 3, 7000);
}

#[test]
fn poll_never_blocks_when_idle() {
    let Some((_dir, mut r)) = fresh_region(4 << 20) else {
        return;
    };
    assert_eq!(r.poll(&mut |_| panic!("no completion expected")), 0);
    assert_eq!(r.in_flight(), 0);
    assert!(r.registered_buffers());
}

#[test]
fn region_moves_to_a_shard_thread_and_drops_with_io_in_flight() {
    fn assert_send<T: Send>() {}
    assert_send::<Region>();
    assert_send::<ndx_hcs::EmulatedL2>();
    let dir = tempdir();
    let files = [dir.path().join("l2")];
    let Some(mut r) = open(Region::create, cfg(&files, 8 << 20)) else {
        return;
    };
    let loc = write(&mut r, 4, 0, B, FRAME);
    drain(&mut r);
    // Created here, driven and dropped on another thread with reads still in flight: the
    // drop waits for the kernel to finish with the buffers.
    std::thread::spawn(move || {
        for i in 0..16 {
            r.submit_read(loc, i).unwrap();
        }
        r.flush();
        assert_eq!(r.in_flight(), 16);
        drop(r);
    })
    .join()
    .unwrap();
    // The file is intact for the next owner.
    let Some(mut r) = open(Region::recover, cfg(&files, 8 << 20)) else {
        return;
    };
    assert_eq!(r.lookup(4, 0), Some(loc));
    r.submit_read(loc, 0).unwrap();
    let (reads, _) = drain(&mut r);
    check_batch(reads[0].1.as_ref().unwrap(), 4, 0, B, FRAME);
}

#[test]
fn header_only_recovery_still_never_serves_corrupt_frames() {
    let dir = tempdir();
    let files = [dir.path().join("l2")];
    let (a, b);
    {
        let Some(mut r) = open(Region::create, cfg(&files, 4 << 20)) else {
            return;
        };
        a = write(&mut r, 2, 0, B, FRAME);
        b = write(&mut r, 2, 1, B, FRAME);
        drain(&mut r);
    }
    corrupt_byte(&files[0], b.offset + 20 * BLOCK as u64 + 5);
    let mut c = cfg(&files, 4 << 20);
    c.verify = ndx_hcs::Verify::Header;
    let Some(mut r) = open(Region::recover, c) else {
        return;
    };
    let rep = r.recovery_report();
    assert_eq!((rep.records, rep.corrupt, rep.indexed), (2, 0, 2));
    assert_eq!(
        r.lookup(2, 1),
        Some(b),
        "the header scan cannot see frame damage"
    );
    r.submit_read(b, 1).unwrap();
    r.submit_read(a, 0).unwrap();
    let (mut reads, _) = drain(&mut r);
    reads.sort_by_key(|x| x.0);
    check_batch(reads[0].1.as_ref().unwrap(), 2, 0, B, FRAME);
    assert!(matches!(reads[1].1, Err(ReadFailure::Corrupt(_))));
    assert_eq!(r.lookup(2, 1), None);
    assert_eq!(r.counters().corrupt, 1);
}

/// Whether this kernel gives an `madvise(MADV_HUGEPAGE)` region huge pages at fault time,
/// compacting memory if it must (THP enabled, direct compaction for advised regions).
fn thp_at_fault() -> bool {
    let read =
        |f: &str| std::fs::read_to_string(format!("/sys/kernel/mm/transparent_hugepage/{f}"));
    let (Ok(enabled), Ok(defrag)) = (read("enabled"), read("defrag")) else {
        return false;
    };
    !enabled.contains("[never]")
        && ["[always]", "[madvise]", "[defer+madvise]"]
            .iter()
            .any(|m| defrag.contains(m))
}

#[test]
fn buffers_in_huge_pages_and_in_base_pages_serve_the_same_records() {
    // Q = 16 and a backlog of 16 (as the router opens it): 36 buffers of 144 KiB, laid out
    // over three huge pages; every read buffer is used below.
    let Some((_dir, r)) = fresh_region(64 << 20) else {
        return;
    };
    let mut r = r.with_read_backlog(16).expect("backlog");
    let huge = r.huge_page_bytes();
    if thp_at_fault() {
        assert!(
            huge >= 2 << 20,
            "no huge pages for the buffers: {huge} bytes"
        );
    }
    let locs: Vec<Location> = (0..32)
        .map(|b| {
            let loc = write(&mut r, 3, b, B, FRAME - b as usize);
            drain(&mut r);
            loc
        })
        .collect();
    for pass in 0..2 {
        // All 32 reads at once: 16 at the device, 16 waiting, each in its own buffer.
        for (b, loc) in locs.iter().enumerate() {
            r.submit_read(*loc, b as u64).unwrap();
        }
        let (mut reads, _) = drain(&mut r);
        reads.sort_by_key(|x| x.0);
        assert_eq!(reads.len(), 32);
        for (b, (_, res)) in reads.iter().enumerate() {
            check_batch(res.as_ref().unwrap(), 3, b as u64, B, FRAME - b);
        }
        if pass == 0 {
            r = r.with_huge_pages(false).expect("base pages");
            assert_eq!(r.huge_page_bytes(), 0);
            assert_eq!(r.read_backlog(), 16, "the backlog is kept");
        }
    }
    let c = r.counters();
    assert_eq!((c.reads_ok, c.corrupt), (64, 0));
    // Small buffers (under 1 MiB in all) stay in base pages even when asked for.
    let dir = tempdir();
    let mut small = RegionConfig::new(vec![dir.path().join("l2")], 1 << 20, 2, 1000);
    small.read_depth = 4;
    let Some(r) = open(Region::create, small) else {
        return;
    };
    assert_eq!(r.huge_page_bytes(), 0);
}
