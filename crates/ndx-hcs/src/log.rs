//! Placement and index of the batch log (pure code: no I/O).
//!
//! A [`Log`] spans one or more *lanes* (one per file or device). Each lane is a FIFO ring of
//! records: a write goes at the lane's head, wraps to offset 0 when it does not fit before the
//! end, and overwrites the oldest records, whose index entries are dropped at that moment.
//! Writes are spread over the lanes round-robin so that several devices add their bandwidth.
//! The index maps (content key, batch number) to the [`Location`] of the newest record.
//!
//! A record is placed by [`Log::allocate`] (before its write is issued) and becomes visible
//! to [`Log::lookup`] only after [`Log::commit`] (when the write completed), so a read is never
//! issued for bytes that are not on the device yet.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use crate::record::BLOCK;

/// Where a record lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    /// Lane (file) number.
    pub lane: u16,
    /// Byte offset in the lane (a multiple of [`BLOCK`]).
    pub offset: u64,
    /// Padded record length in bytes.
    pub len: u32,
    /// Log sequence number of the record (checked against the header on read).
    pub seq: u64,
}

/// A record found on a device by a recovery scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoundRecord {
    /// Where it is.
    pub location: Location,
    /// Its content key.
    pub content_key: u64,
    /// Its batch number.
    pub batch: u64,
}

/// Why a record cannot be placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// Longer than every lane (or zero / not block-aligned).
    #[error("record of {0} bytes cannot be placed in any lane")]
    TooLarge(u32),
}

/// The keys are already hashes: mix them cheaply instead of SipHashing them again.
#[derive(Debug, Default, Clone, Copy)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Index = HashMap<(u64, u64), Location, BuildHasherDefault<KeyHasher>>;

#[derive(Debug, Clone, Copy)]
struct Live {
    offset: u64,
    len: u32,
    seq: u64,
    content_key: u64,
    batch: u64,
}

#[derive(Debug)]
struct Lane {
    capacity: u64,
    head: u64,
    /// Records in the lane, oldest first (sequence numbers increase).
    live: VecDeque<Live>,
}

/// Placement, FIFO eviction and index of a batch log.
#[derive(Debug)]
pub struct Log {
    lanes: Vec<Lane>,
    index: Index,
    next_seq: u64,
    next_lane: usize,
    evicted: u64,
    /// Keys whose index entry was removed (overwritten or invalidated), when tracked.
    dropped: Option<Vec<(u64, u64)>>,
}

impl Log {
    /// An empty log over lanes of the given capacities (rounded down to [`BLOCK`]), with
    /// room preallocated for as many one-block records as fit.
    pub fn new(lane_capacities: &[u64]) -> Self {
        Self::with_expected_record(lane_capacities, BLOCK)
    }

    /// An empty log that preallocates its index and FIFO for records of about
    /// `expected_len` bytes (e.g. half a full batch); more records only make them grow.
    pub fn with_expected_record(lane_capacities: &[u64], expected_len: usize) -> Self {
        let per = expected_len.max(BLOCK) as u64;
        let lanes: Vec<Lane> = lane_capacities
            .iter()
            .map(|&c| Lane {
                capacity: c / BLOCK as u64 * BLOCK as u64,
                head: 0,
                live: VecDeque::with_capacity((c / per) as usize + 1),
            })
            .collect();
        let records: u64 = lanes.iter().map(|l| l.capacity / per + 1).sum();
        Self {
            lanes,
            index: Index::with_capacity_and_hasher(records as usize, Default::default()),
            next_seq: 1,
            next_lane: 0,
            evicted: 0,
            dropped: None,
        }
    }

    /// Rebuilds a log from the records a recovery scan found (any order, possibly stale or
    /// overlapping): records are replayed in sequence order, a record overwrites those it
    /// overlaps, each lane's head is put after its newest record and the index points at the
    /// newest record of each (content, batch).
    /// `expected_len` sizes the preallocation as in [`Log::with_expected_record`].
    pub fn restore(lane_capacities: &[u64], found: &[FoundRecord], expected_len: usize) -> Self {
        let mut log = Self::with_expected_record(lane_capacities, expected_len);
        let mut sorted: Vec<FoundRecord> = found
            .iter()
            .copied()
            .filter(|f| {
                log.lanes
                    .get(usize::from(f.location.lane))
                    .is_some_and(|l| {
                        f.location.offset + u64::from(f.location.len) <= l.capacity
                            && f.location.len > 0
                    })
            })
            .collect();
        sorted.sort_by_key(|f| f.location.seq);
        sorted.dedup_by_key(|f| f.location.seq);
        let mut per_lane: Vec<BTreeMap<u64, FoundRecord>> = vec![BTreeMap::new(); log.lanes.len()];
        let mut heads = vec![0u64; log.lanes.len()];
        for f in &sorted {
            let lane = usize::from(f.location.lane);
            let map = &mut per_lane[lane];
            let start = f.location.offset;
            let end = start + u64::from(f.location.len);
            let head = heads[lane];
            // Replay the writer: a record at or after the head overwrote [head, end) (a gap
            // means records that were lost, which overwrote that space); a record before the
            // head wrapped, which dropped everything from the head to the end of the lane.
            if start >= head {
                clear_range(map, head, end);
            } else {
                clear_range(map, head, u64::MAX);
                clear_range(map, 0, end);
            }
            map.insert(start, *f);
            heads[lane] = end;
        }
        for (lane_no, map) in per_lane.into_iter().enumerate() {
            let lane = &mut log.lanes[lane_no];
            let Some(newest) = map.values().max_by_key(|f| f.location.seq).copied() else {
                continue;
            };
            lane.head = newest.location.offset + u64::from(newest.location.len);
            // Keep the lane a FIFO: in overwrite order (circular, starting at the head) the
            // sequence numbers must increase. A record that breaks this is an old one whose
            // bytes happen to be intact again (rewritten with identical content); drop it.
            let head = lane.head;
            let mut recs: Vec<FoundRecord> = map
                .range(head..)
                .chain(map.range(..head))
                .map(|(_, f)| *f)
                .collect();
            let mut max_seq = 0;
            recs.retain(|f| {
                let keep = f.location.seq > max_seq;
                if keep {
                    max_seq = f.location.seq;
                }
                keep
            });
            for f in recs {
                lane.live.push_back(Live {
                    offset: f.location.offset,
                    len: f.location.len,
                    seq: f.location.seq,
                    content_key: f.content_key,
                    batch: f.batch,
                });
                let key = (f.content_key, f.batch);
                match log.index.get(&key) {
                    Some(old) if old.seq > f.location.seq => {}
                    _ => {
                        log.index.insert(key, f.location);
                    }
                }
            }
        }
        log.next_seq = sorted.last().map_or(1, |f| f.location.seq + 1);
        if let Some(last) = sorted.last() {
            log.next_lane = (usize::from(last.location.lane) + 1) % log.lanes.len().max(1);
        }
        log
    }

    /// Number of lanes.
    pub fn lanes(&self) -> usize {
        self.lanes.len()
    }

    /// Capacity of `lane` in bytes.
    pub fn lane_capacity(&self, lane: usize) -> u64 {
        self.lanes.get(lane).map_or(0, |l| l.capacity)
    }

    /// The newest committed record of (content, batch), if still in the log.
    pub fn lookup(&self, content_key: u64, batch: u64) -> Option<Location> {
        self.index.get(&(content_key, batch)).copied()
    }

    /// Indexed (committed and not yet overwritten) records.
    pub fn indexed(&self) -> usize {
        self.index.len()
    }

    /// Records overwritten so far (committed or not).
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// The sequence number the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Places a record of `len` bytes (a multiple of [`BLOCK`]) for (content, batch): picks
    /// the next lane round-robin, overwrites the oldest records in the way (dropping their
    /// index entries; `on_evict` sees each), and returns the new record's location. The
    /// record is not visible to [`Log::lookup`] until [`Log::commit`].
    pub fn allocate(
        &mut self,
        len: u32,
        content_key: u64,
        batch: u64,
        mut on_evict: impl FnMut(&Location),
    ) -> Result<Location, AllocError> {
        if len == 0 || !(len as usize).is_multiple_of(BLOCK) {
            return Err(AllocError::TooLarge(len));
        }
        let n = self.lanes.len();
        let lane_no = (0..n)
            .map(|i| (self.next_lane + i) % n)
            .find(|&i| u64::from(len) <= self.lanes[i].capacity)
            .ok_or(AllocError::TooLarge(len))?;
        self.next_lane = (lane_no + 1) % n;
        let lane = &mut self.lanes[lane_no];
        let (index, dropped, evicted) = (&mut self.index, &mut self.dropped, &mut self.evicted);
        // Evicts the records at the lane's front whose offsets lie in `from..to`.
        let mut evict_in = |lane: &mut Lane, from: u64, to: u64| {
            while let Some(front) = lane.live.front().copied() {
                if front.offset < from || front.offset >= to {
                    break;
                }
                Self::evict(index, dropped, lane_no, front, &mut on_evict);
                *evicted += 1;
                lane.live.pop_front();
            }
        };
        let mut start = lane.head;
        if start + u64::from(len) > lane.capacity {
            // Wrap: everything from the head to the end of the lane is the oldest data.
            evict_in(lane, start, u64::MAX);
            start = 0;
        }
        let end = start + u64::from(len);
        evict_in(lane, start, end);
        let seq = self.next_seq;
        self.next_seq += 1;
        lane.head = end;
        lane.live.push_back(Live {
            offset: start,
            len,
            seq,
            content_key,
            batch,
        });
        Ok(Location {
            lane: lane_no as u16,
            offset: start,
            len,
            seq,
        })
    }

    fn evict(
        index: &mut Index,
        dropped: &mut Option<Vec<(u64, u64)>>,
        lane: usize,
        rec: Live,
        on_evict: &mut impl FnMut(&Location),
    ) {
        let key = (rec.content_key, rec.batch);
        if index.get(&key).is_some_and(|l| l.seq == rec.seq) {
            index.remove(&key);
            if let Some(d) = dropped.as_mut() {
                d.push(key);
            }
        }
        on_evict(&Location {
            lane: lane as u16,
            offset: rec.offset,
            len: rec.len,
            seq: rec.seq,
        });
    }

    /// True while the record at `loc` has not been overwritten.
    pub fn is_live(&self, loc: &Location) -> bool {
        self.lanes
            .get(usize::from(loc.lane))
            .and_then(|l| {
                let i = l.live.partition_point(|r| r.seq < loc.seq);
                l.live.get(i)
            })
            .is_some_and(|r| r.seq == loc.seq && r.offset == loc.offset)
    }

    /// Makes an allocated record visible once its write completed. Returns false (and indexes
    /// nothing) if it was overwritten meanwhile.
    pub fn commit(&mut self, loc: &Location, content_key: u64, batch: u64) -> bool {
        if !self.is_live(loc) {
            return false;
        }
        let key = (content_key, batch);
        match self.index.get(&key) {
            Some(old) if old.seq > loc.seq => {}
            _ => {
                self.index.insert(key, *loc);
            }
        }
        true
    }

    /// Forgets whatever (content, batch) is indexed at `loc` (its read found it corrupt).
    pub fn invalidate_location(&mut self, loc: &Location) {
        let Some(lane) = self.lanes.get(usize::from(loc.lane)) else {
            return;
        };
        let i = lane.live.partition_point(|r| r.seq < loc.seq);
        if let Some(r) = lane.live.get(i).filter(|r| r.seq == loc.seq) {
            let (k, b) = (r.content_key, r.batch);
            self.invalidate(k, b, loc);
        }
    }

    /// Forgets every indexed record of `lane` that does not end by `end` (its file was cut
    /// short there); returns how many left the index.
    pub fn invalidate_beyond(&mut self, lane: usize, end: u64) -> usize {
        let Some(l) = self.lanes.get(lane) else {
            return 0;
        };
        let gone: Vec<Live> = l
            .live
            .iter()
            .filter(|r| r.offset + u64::from(r.len) > end)
            .copied()
            .collect();
        let before = self.index.len();
        for r in gone {
            let loc = Location {
                lane: lane as u16,
                offset: r.offset,
                len: r.len,
                seq: r.seq,
            };
            self.invalidate(r.content_key, r.batch, &loc);
        }
        before - self.index.len()
    }

    /// Forgets (content, batch) if it is indexed at `loc` (e.g. its read found it corrupt).
    pub fn invalidate(&mut self, content_key: u64, batch: u64, loc: &Location) {
        let key = (content_key, batch);
        if self.index.get(&key).is_some_and(|l| l == loc) {
            self.index.remove(&key);
            if let Some(d) = self.dropped.as_mut() {
                d.push(key);
            }
        }
    }

    /// Starts (or stops) remembering the keys whose index entry is removed (their record was
    /// overwritten or found corrupt), for [`Log::drain_dropped`]. Off by default: a caller
    /// that turns it on must drain regularly.
    pub fn track_dropped(&mut self, on: bool) {
        self.dropped = on.then(Vec::new);
    }

    /// Hands every (content key, batch) dropped from the index since the last call to `f`,
    /// oldest first (nothing unless [`Log::track_dropped`] is on).
    pub fn drain_dropped(&mut self, mut f: impl FnMut(u64, u64)) {
        if let Some(d) = self.dropped.as_mut() {
            for (k, b) in d.drain(..) {
                f(k, b);
            }
        }
    }

    /// Every indexed (content key, batch), in no particular order.
    pub fn indexed_keys(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.index.keys().copied()
    }
}

/// Removes from `map` (keyed by start offset) every record overlapping `[start, end)`.
fn clear_range(map: &mut BTreeMap<u64, FoundRecord>, start: u64, end: u64) {
    let inside: Vec<u64> = map.range(start..end).map(|(&k, _)| k).collect();
    for k in inside {
        map.remove(&k);
    }
    if let Some((&k, prev)) = map.range(..start).next_back()
        && k + u64::from(prev.location.len) > start
    {
        map.remove(&k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap as Map;

    const B: u32 = BLOCK as u32;

    #[test]
    fn dropped_keys_are_reported_once_tracked() {
        let mut log = Log::new(&[6 * BLOCK as u64]);
        let mut got = Vec::new();
        log.drain_dropped(|k, b| got.push((k, b)));
        assert!(got.is_empty());
        log.track_dropped(true);
        for i in 0..3 {
            let l = log.allocate(2 * B, 7, i, |_| {}).unwrap();
            assert!(log.commit(&l, 7, i));
        }
        let mut keys: Vec<_> = log.indexed_keys().collect();
        keys.sort_unstable();
        assert_eq!(keys, vec![(7, 0), (7, 1), (7, 2)]);
        // Wrapping overwrites batch 0; a rewrite of batch 2 elsewhere later supersedes the
        // old record without reporting it (the key stays indexed).
        let l = log.allocate(2 * B, 7, 3, |_| {}).unwrap();
        assert!(log.commit(&l, 7, 3));
        log.drain_dropped(|k, b| got.push((k, b)));
        assert_eq!(got, vec![(7, 0)]);
        got.clear();
        let corrupt = log.lookup(7, 1).unwrap();
        log.invalidate_location(&corrupt);
        log.drain_dropped(|k, b| got.push((k, b)));
        assert_eq!(got, vec![(7, 1)]);
        got.clear();
        log.drain_dropped(|k, b| got.push((k, b)));
        assert!(got.is_empty(), "drained once");
    }

    #[test]
    fn fifo_wraps_and_drops_oldest() {
        let mut log = Log::new(&[10 * BLOCK as u64]);
        let mut evicted = Vec::new();
        let mut locs = Vec::new();
        for i in 0..3 {
            let l = log.allocate(3 * B, 1, i, |e| evicted.push(*e)).unwrap();
            assert!(log.commit(&l, 1, i));
            locs.push(l);
        }
        assert_eq!(locs[2].offset, 6 * BLOCK as u64);
        assert!(evicted.is_empty());
        // 9 blocks used; a 3-block record wraps to 0 and overwrites batch 0 only.
        let l = log.allocate(3 * B, 1, 3, |e| evicted.push(*e)).unwrap();
        assert_eq!(l.offset, 0);
        assert_eq!(evicted, vec![locs[0]]);
        assert_eq!(log.lookup(1, 0), None);
        assert_eq!(log.lookup(1, 1), Some(locs[1]));
        // Not visible before commit.
        assert_eq!(log.lookup(1, 3), None);
        assert!(log.commit(&l, 1, 3));
        assert_eq!(log.lookup(1, 3), Some(l));
        assert_eq!(
            log.allocate(11 * B, 1, 9, |_| {}),
            Err(AllocError::TooLarge(11 * B))
        );
    }

    #[test]
    fn commit_after_overwrite_is_refused() {
        let mut log = Log::new(&[2 * BLOCK as u64]);
        let a = log.allocate(2 * B, 5, 0, |_| {}).unwrap();
        let b = log.allocate(2 * B, 5, 1, |_| {}).unwrap();
        assert!(!log.commit(&a, 5, 0));
        assert!(log.commit(&b, 5, 1));
        assert_eq!(log.lookup(5, 0), None);
    }

    #[test]
    fn lanes_round_robin() {
        let mut log = Log::new(&[4 * BLOCK as u64, 4 * BLOCK as u64]);
        let a = log.allocate(B, 1, 0, |_| {}).unwrap();
        let b = log.allocate(B, 1, 1, |_| {}).unwrap();
        let c = log.allocate(B, 1, 2, |_| {}).unwrap();
        assert_eq!((a.lane, b.lane, c.lane), (0, 1, 0));
        assert_eq!(c.offset, BLOCK as u64);
    }

    /// Reference model: a list of (lane, start, end, seq, key) byte ranges; a write removes
    /// every overlapping range. The index is the newest committed live record per key.
    /// A live byte range: (lane, start, end, seq, key).
    type Range = (u16, u64, u64, u64, (u64, u64));

    struct Model {
        caps: Vec<u64>,
        heads: Vec<u64>,
        /// Live byte ranges: (lane, start, end, seq, key).
        ranges: Vec<Range>,
        /// Key -> seq of its newest committed record (dropped when that record is overwritten).
        indexed: Map<(u64, u64), u64>,
    }

    impl Model {
        fn new(caps: &[u64]) -> Self {
            Self {
                caps: caps.to_vec(),
                heads: vec![0; caps.len()],
                ranges: Vec::new(),
                indexed: Map::new(),
            }
        }
        fn drop_where(&mut self, gone: impl Fn(&Range) -> bool) {
            let (dead, keep): (Vec<Range>, Vec<Range>) = self.ranges.iter().partition(|r| gone(r));
            for r in dead {
                if self.indexed.get(&r.4) == Some(&r.3) {
                    self.indexed.remove(&r.4);
                }
            }
            self.ranges = keep;
        }
        /// Checks where the log put the record, then applies the write.
        fn place(&mut self, l: &Location, key: (u64, u64)) -> Result<(), TestCaseError> {
            let lane = usize::from(l.lane);
            let head = self.heads[lane];
            let (s, e) = (l.offset, l.offset + u64::from(l.len));
            if head + u64::from(l.len) <= self.caps[lane] {
                prop_assert_eq!(s, head);
            } else {
                prop_assert_eq!(s, 0);
                self.drop_where(|r| r.0 == l.lane && r.1 >= head);
            }
            self.drop_where(|r| r.0 == l.lane && r.2 > s && r.1 < e);
            self.ranges.push((l.lane, s, e, l.seq, key));
            self.heads[lane] = e;
            Ok(())
        }
        /// Commits `seq`; returns whether it was still live.
        fn commit(&mut self, seq: u64) -> bool {
            let Some(r) = self.ranges.iter().find(|r| r.3 == seq).copied() else {
                return false;
            };
            if self.indexed.get(&r.4).is_none_or(|&s| s < seq) {
                self.indexed.insert(r.4, seq);
            }
            true
        }
        fn lookup(&self, key: (u64, u64)) -> Option<u64> {
            self.indexed.get(&key).copied()
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Write { blocks: u32, key: u8, batch: u8 },
        Commit(usize),
        Invalidate(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (1u32..5, 0u8..6, 0u8..4).prop_map(|(blocks, key, batch)| Op::Write { blocks, key, batch }),
            3 => any::<usize>().prop_map(Op::Commit),
            1 => any::<usize>().prop_map(Op::Invalidate),
        ]
    }

    proptest! {
        #[test]
        fn log_matches_reference_model(
            caps in proptest::collection::vec(4u64..20, 1..4),
            ops in proptest::collection::vec(op(), 1..200),
        ) {
            let caps: Vec<u64> = caps.iter().map(|c| c * BLOCK as u64).collect();
            let mut log = Log::new(&caps);
            let mut model = Model::new(&caps);
            let mut pending: Vec<(Location, (u64, u64))> = Vec::new();
            for op in ops {
                match op {
                    Op::Write { blocks, key, batch } => {
                        let k = (u64::from(key), u64::from(batch));
                        let l = log.allocate(blocks * B, k.0, k.1, |_| {}).unwrap();
                        prop_assert!(l.offset + u64::from(l.len) <= caps[usize::from(l.lane)]);
                        model.place(&l, k)?;
                        pending.push((l, k));
                    }
                    Op::Commit(i) if !pending.is_empty() => {
                        let (l, k) = pending.remove(i % pending.len());
                        let live = model.commit(l.seq);
                        prop_assert_eq!(log.commit(&l, k.0, k.1), live);
                    }
                    Op::Invalidate(i) if !model.ranges.is_empty() => {
                        let key = model.ranges[i % model.ranges.len()].4;
                        if let Some(l) = log.lookup(key.0, key.1) {
                            log.invalidate(key.0, key.1, &l);
                            model.indexed.remove(&key);
                        }
                    }
                    _ => {}
                }
                for key in 0..6u64 {
                    for batch in 0..4u64 {
                        prop_assert_eq!(log.lookup(key, batch).map(|l| l.seq), model.lookup((key, batch)));
                    }
                }
                prop_assert_eq!(log.indexed(), model.indexed.len());
                // Live ranges never overlap and stay inside their lane.
                for (i, a) in model.ranges.iter().enumerate() {
                    prop_assert!(a.2 <= caps[usize::from(a.0)]);
                    for b in &model.ranges[i + 1..] {
                        prop_assert!(a.0 != b.0 || a.2 <= b.1 || b.2 <= a.1);
                    }
                }
            }
        }

        #[test]
        fn restore_rebuilds_the_same_index(
            caps in proptest::collection::vec(4u64..20, 1..4),
            writes in proptest::collection::vec((1u32..5, 0u8..6, 0u8..4), 1..120),
            more in proptest::collection::vec((1u32..5, 0u8..6, 0u8..4), 0..40),
        ) {
            let caps: Vec<u64> = caps.iter().map(|c| c * BLOCK as u64).collect();
            let mut log = Log::new(&caps);
            let mut found = Vec::new();
            for (blocks, key, batch) in writes {
                let (k, b) = (u64::from(key), u64::from(batch));
                let l = log.allocate(blocks * B, k, b, |_| {}).unwrap();
                log.commit(&l, k, b);
                found.push(FoundRecord { location: l, content_key: k, batch: b });
            }
            // A scan finds every record whose header survived: the live ones plus stale ones
            // whose start was not overwritten. Feed all of them, shuffled by reversing.
            found.reverse();
            let restored = Log::restore(&caps, &found, BLOCK);
            for key in 0..6u64 {
                for batch in 0..4u64 {
                    match (restored.lookup(key, batch), log.lookup(key, batch)) {
                        (got, Some(want)) => prop_assert_eq!(got, Some(want)),
                        // The live log forgets a key when its newest copy is overwritten even
                        // if an older copy survives in another lane; a restart finds that copy.
                        (Some(got), None) => {
                            prop_assert!(log.is_live(&got));
                            prop_assert!(found.iter().any(|f| f.location == got
                                && (f.content_key, f.batch) == (key, batch)));
                        }
                        (None, None) => {}
                    }
                }
            }
            prop_assert_eq!(restored.next_seq(), log.next_seq());
            // The restored log carries on exactly like the live one: same placements, same
            // records overwritten.
            let mut restored = restored;
            for (i, &(blocks, key, batch)) in more.iter().enumerate() {
                let (k, b) = (u64::from(key), u64::from(batch));
                let mut gone_live = Vec::new();
                let mut gone_restored = Vec::new();
                let a = log.allocate(blocks * B, k, b, |l| gone_live.push(*l)).unwrap();
                let r = restored.allocate(blocks * B, k, b, |l| gone_restored.push(*l)).unwrap();
                prop_assert_eq!(a, r, "write {} after restart", i);
                prop_assert_eq!(gone_live, gone_restored);
                log.commit(&a, k, b);
                restored.commit(&r, k, b);
                prop_assert_eq!(restored.lookup(k, b), Some(r));
            }
        }
    }
}
