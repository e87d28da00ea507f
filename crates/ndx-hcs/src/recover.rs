//! Recovery scan: rebuilds a [`Log`] from the record headers found on the lanes (pure logic
//! over a [`LaneReader`], so it runs against files or memory alike).

use std::io;

use crate::log::{FoundRecord, Location, Log};
use crate::record::{BLOCK, RecordError, RecordView, check_header, parse_header};

/// Positional reads from the lanes of a region.
pub trait LaneReader {
    /// Reads up to `buf.len()` bytes of `lane` at `offset`; returns how many were read (0 at
    /// the end of the lane's backing store).
    fn read_at(&mut self, lane: usize, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
}

impl LaneReader for Vec<Vec<u8>> {
    fn read_at(&mut self, lane: usize, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let data = self
            .get(lane)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such lane"))?;
        let start = (offset as usize).min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }
}

/// How much of each record a recovery scan verifies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Verify {
    /// Read every record whole and verify header and frames: corrupt records never enter the
    /// index. Reads the whole region.
    #[default]
    Full,
    /// Read and verify only each record's header block (one 4 KiB read per record, about
    /// 1/36 of the bytes for 16 x 8800-byte batches). A record whose frames are corrupt is
    /// indexed, then found corrupt, counted and dropped by the first read: still never served.
    Header,
}

/// What a recovery scan found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Valid records found (including stale ones later overwritten in the replay).
    pub records: u64,
    /// Records indexed after the replay.
    pub indexed: u64,
    /// Records with a plausible header but a bad checksum or inconsistent lengths (torn or
    /// corrupt): skipped and never served.
    pub corrupt: u64,
    /// Records whose announced length runs past the end of the lane or its file.
    pub truncated: u64,
    /// Blocks holding no record start (never written, or the tail of an overwritten record).
    pub empty_blocks: u64,
    /// Backing files that did not exist (deleted while the store was closed): created empty,
    /// their records are lost. Set by [`Region::recover`](crate::Region::recover).
    pub missing_files: u64,
}

fn fill(
    reader: &mut dyn LaneReader,
    lane: usize,
    offset: u64,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match reader.read_at(lane, offset + done as u64, &mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// A read-ahead window over one lane, so the scan issues large sequential reads.
struct Window {
    lane: usize,
    start: u64,
    len: usize,
    buf: Vec<u8>,
}

impl Window {
    /// Bytes `[off, off + n)` of `lane` (fewer at the end of its backing store); `n` must not
    /// exceed the window size.
    fn get(
        &mut self,
        reader: &mut dyn LaneReader,
        lane: usize,
        off: u64,
        n: usize,
    ) -> io::Result<&[u8]> {
        let at_eof = self.len < self.buf.len();
        let covered = lane == self.lane
            && off >= self.start
            && (off + n as u64 <= self.start + self.len as u64 || at_eof);
        if !covered {
            self.lane = lane;
            self.start = off;
            self.len = fill(reader, lane, off, &mut self.buf)?;
        }
        let from = ((off - self.start) as usize).min(self.len);
        let to = (from + n).min(self.len);
        Ok(&self.buf[from..to])
    }
}

/// Scans every lane from offset 0, block by block: a valid record is taken and the scan jumps
/// past it; anything else is counted and the scan moves one block on. `max_record` bounds the
/// record length (larger headers count as corrupt); `verify` says whether frames are checked
/// now or at read time. [`Verify::Full`] reads through a read-ahead window of at least 1 MiB;
/// [`Verify::Header`] reads one block per record. Then replays the records into a [`Log`]
/// (see [`Log::restore`]). I/O errors abort the scan.
pub fn recover(
    reader: &mut dyn LaneReader,
    lane_capacities: &[u64],
    max_record: usize,
    verify: Verify,
) -> io::Result<(Log, RecoveryReport)> {
    let mut report = RecoveryReport::default();
    let mut found = Vec::new();
    let max_record = max_record.max(BLOCK);
    let mut win = Window {
        lane: usize::MAX,
        start: 0,
        len: 0,
        buf: match verify {
            Verify::Full => vec![0u8; (2 * max_record).max(1 << 20)],
            Verify::Header => vec![0u8; BLOCK],
        },
    };
    for (lane, &cap) in lane_capacities.iter().enumerate() {
        let cap = cap / BLOCK as u64 * BLOCK as u64;
        let mut off = 0u64;
        while off + BLOCK as u64 <= cap {
            let block = win.get(reader, lane, off, BLOCK)?;
            if block.len() < BLOCK {
                // The file ends here (shorter than the lane): nothing more to find.
                report.empty_blocks += (cap - off) / BLOCK as u64;
                break;
            }
            let checked = match verify {
                Verify::Full => parse_header(block),
                Verify::Header => check_header(block),
            };
            let header = match checked {
                Ok(h) => h,
                Err(RecordError::NotARecord) => {
                    report.empty_blocks += 1;
                    off += BLOCK as u64;
                    continue;
                }
                Err(_) => {
                    report.corrupt += 1;
                    off += BLOCK as u64;
                    continue;
                }
            };
            let len = header.record_len as usize;
            if len > max_record {
                report.corrupt += 1;
                off += BLOCK as u64;
                continue;
            }
            if off + len as u64 > cap {
                report.truncated += 1;
                off += BLOCK as u64;
                continue;
            }
            if verify == Verify::Header {
                report.records += 1;
                found.push(FoundRecord {
                    location: Location {
                        lane: lane as u16,
                        offset: off,
                        len: len as u32,
                        seq: header.seq,
                    },
                    content_key: header.content_key,
                    batch: header.batch,
                });
                off += len as u64;
                continue;
            }
            let bytes = win.get(reader, lane, off, len)?;
            match RecordView::parse(bytes) {
                Ok(view) => {
                    report.records += 1;
                    found.push(FoundRecord {
                        location: Location {
                            lane: lane as u16,
                            offset: off,
                            len: len as u32,
                            seq: view.seq(),
                        },
                        content_key: view.content_key(),
                        batch: view.batch(),
                    });
                    off += len as u64;
                }
                Err(RecordError::Truncated { .. }) => {
                    report.truncated += 1;
                    off += BLOCK as u64;
                }
                Err(_) => {
                    report.corrupt += 1;
                    off += BLOCK as u64;
                }
            }
        }
    }
    let log = Log::restore(lane_capacities, &found, max_record / 2);
    report.indexed = log.indexed() as u64;
    Ok((log, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BatchRecord, Segment, encode};
    use proptest::prelude::*;

    /// Writes records through a [`Log`] into in-memory lanes, like the real store does.
    fn write(
        log: &mut Log,
        lanes: &mut [Vec<u8>],
        key: u64,
        batch: u64,
        frame_len: usize,
    ) -> Location {
        let frame = vec![(key * 31 + batch) as u8; frame_len];
        let segs = [Segment {
            name_key: key ^ batch,
            frame: &frame,
        }];
        let rec = BatchRecord {
            content_key: key,
            batch,
            content_name: b"c",
            segments: &segs,
        };
        let loc = log
            .allocate(rec.record_len() as u32, key, batch, |_| {})
            .unwrap();
        let mut buf = vec![0u8; rec.record_len()];
        encode(&mut buf, loc.seq, &rec).unwrap();
        let lane = &mut lanes[usize::from(loc.lane)];
        lane[loc.offset as usize..loc.offset as usize + buf.len()].copy_from_slice(&buf);
        assert!(log.commit(&loc, key, batch));
        loc
    }

    #[test]
    fn corrupt_and_truncated_records_are_counted_and_not_indexed() {
        let caps = [16 * BLOCK as u64];
        let mut log = Log::new(&caps);
        let mut lanes = vec![vec![0u8; caps[0] as usize]];
        let a = write(&mut log, &mut lanes, 1, 0, 5000);
        let b = write(&mut log, &mut lanes, 1, 1, 100);
        let c = write(&mut log, &mut lanes, 1, 2, 9000);
        // Flip a payload byte of b; cut the file in the middle of c.
        lanes[0][b.offset as usize + 100] ^= 0xFF;
        lanes[0].truncate(c.offset as usize + BLOCK);
        let (log2, rep) = recover(&mut lanes, &caps, 4 * BLOCK, Verify::Full).unwrap();
        assert_eq!(log2.lookup(1, 0), Some(a));
        assert_eq!(log2.lookup(1, 1), None);
        assert_eq!(log2.lookup(1, 2), None);
        assert_eq!(rep.corrupt, 1);
        assert_eq!(rep.truncated, 1);
        assert_eq!(rep.records, 1);
        assert_eq!(rep.indexed, 1);
        // A new record goes after the newest valid one.
        assert_eq!(log2.next_seq(), a.seq + 1);
    }

    #[test]
    fn header_scan_indexes_by_headers_and_leaves_frames_to_the_read() {
        let caps = [16 * BLOCK as u64];
        let mut log = Log::new(&caps);
        let mut lanes = vec![vec![0u8; caps[0] as usize]];
        let a = write(&mut log, &mut lanes, 1, 0, 5000);
        let b = write(&mut log, &mut lanes, 1, 1, 9000);
        let c = write(&mut log, &mut lanes, 1, 2, 100);
        lanes[0][b.offset as usize + 6000] ^= 1; // a frame byte of b
        lanes[0][c.offset as usize + 60] ^= 1; // a header byte of c
        let (full, rep_full) = recover(&mut lanes.clone(), &caps, 4 * BLOCK, Verify::Full).unwrap();
        let (fast, rep_fast) = recover(&mut lanes, &caps, 4 * BLOCK, Verify::Header).unwrap();
        assert_eq!((rep_full.records, rep_full.corrupt), (1, 2));
        assert_eq!((rep_fast.records, rep_fast.corrupt), (2, 1));
        assert_eq!(full.lookup(1, 0), Some(a));
        assert_eq!(fast.lookup(1, 0), Some(a));
        assert_eq!(full.lookup(1, 1), None);
        assert_eq!(
            fast.lookup(1, 1),
            Some(b),
            "frames are checked at read time"
        );
        assert!(RecordView::parse(&lanes[0][b.offset as usize..]).is_err());
        assert_eq!(fast.lookup(1, 2), None);
    }

    /// Returns at most 5000 bytes per call, like a file system may.
    struct Dribble(Vec<Vec<u8>>);

    impl LaneReader for Dribble {
        fn read_at(&mut self, lane: usize, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(5000);
            self.0.read_at(lane, offset, &mut buf[..n])
        }
    }

    #[test]
    fn scan_slides_its_window_over_large_lanes_and_partial_reads() {
        // Two 2.4 MiB lanes: larger than the 1 MiB read-ahead window, wrapped once.
        let caps = [600 * BLOCK as u64, 600 * BLOCK as u64];
        let mut log = Log::new(&caps);
        let mut lanes: Vec<Vec<u8>> = caps.iter().map(|&c| vec![0u8; c as usize]).collect();
        for i in 0..900u64 {
            write(
                &mut log,
                &mut lanes,
                i % 97,
                i / 97,
                1 + (i as usize * 7919) % 12000,
            );
        }
        let (rec, rep) = recover(&mut Dribble(lanes), &caps, 4 * BLOCK, Verify::Full).unwrap();
        assert_eq!((rep.corrupt, rep.truncated), (0, 0));
        assert_eq!(rep.indexed as usize, log.indexed());
        for k in 0..97 {
            for b in 0..10 {
                assert_eq!(rec.lookup(k, b), log.lookup(k, b), "key {k} batch {b}");
            }
        }
    }

    proptest! {
        /// Crash-and-restart: write a random sequence (wrapping several times over several
        /// lanes), optionally corrupt one random block, recover, and compare with the live
        /// index: every record the recovered index serves is one the live log serves at the
        /// same location, and without corruption the two indexes are equal.
        #[test]
        fn crash_restart_recovers_the_index(
            caps in proptest::collection::vec(6u64..24, 1..3),
            writes in proptest::collection::vec((0u64..5, 0u64..4, 1usize..12000), 1..80),
            corrupt in proptest::option::of((any::<proptest::sample::Index>(), 0usize..BLOCK)),
            header_only in any::<bool>(),
        ) {
            let verify = if header_only { Verify::Header } else { Verify::Full };
            let caps: Vec<u64> = caps.iter().map(|c| c * BLOCK as u64).collect();
            let mut log = Log::new(&caps);
            let mut lanes: Vec<Vec<u8>> = caps.iter().map(|&c| vec![0u8; c as usize]).collect();
            for &(k, b, len) in &writes {
                write(&mut log, &mut lanes, k, b, len);
            }
            if let Some((lane_pick, byte)) = corrupt {
                let lane = lane_pick.index(lanes.len());
                let blocks = lanes[lane].len() / BLOCK;
                let at = lane_pick.index(blocks) * BLOCK + byte;
                lanes[lane][at] ^= 0x40;
            }
            let (rec, rep) = recover(&mut lanes, &caps, 4 * BLOCK, verify).unwrap();
            for k in 0..5 {
                for b in 0..4 {
                    let (got, want) = (rec.lookup(k, b), log.lookup(k, b));
                    if let Some(l) = got {
                        // Whatever is indexed has an intact header naming (k, b); with a
                        // header-only scan its frames may be corrupt, which the read detects.
                        let lane = &lanes[usize::from(l.lane)];
                        let bytes = &lane[l.offset as usize..(l.offset + u64::from(l.len)) as usize];
                        let h = check_header(bytes).unwrap();
                        prop_assert_eq!((h.content_key, h.batch, h.seq), (k, b, l.seq));
                        if !header_only || corrupt.is_none() {
                            prop_assert!(RecordView::parse(bytes).is_ok());
                        }
                    }
                    if got == want {
                        continue;
                    }
                    // An indexed live record is found again unless it was corrupted.
                    if corrupt.is_none() {
                        prop_assert!(want.is_none());
                    }
                    // The recovered index may also serve an older copy the live index forgot
                    // (its newest copy was overwritten, or lost to the corruption): it must be
                    // a record of (k, b) (checked above).
                }
            }
            if corrupt.is_none() {
                prop_assert_eq!(rep.corrupt + rep.truncated, 0);
            }
        }
    }
}
