//! The shard's side of the content store's second level (L2, seed 000): which batches the L2
//! holds (a mirror kept from write completions), the reads in flight with the Interests parked
//! on them, and the staging of L1 evictions into whole batches. No I/O: the shard asks for
//! reads and writes through [`Actions`](crate::Actions) and learns their outcome through
//! [`Shard::on_l2_complete`](crate::Shard::on_l2_complete) and
//! [`Shard::on_l2_written`](crate::Shard::on_l2_written).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use crate::pit::PitId;

/// Which batches evicted from L1 are written to L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Admission {
    /// Every batch.
    WriteAll,
    /// A batch the second time it is evicted within the last `window` evicted batches (it
    /// was fetched again after its first eviction).
    SecondHit {
        /// How many first evictions are remembered.
        window: usize,
    },
}

/// L2 configuration of a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Config {
    /// Segments per batch (B), 1..=64.
    pub batch: u64,
    /// A request for segment `b*B + B-2` prefetches batch `b+1` (seed 000's design); false
    /// is the serial design of its §3.2 (a batch is read only when an Interest misses it).
    /// Needs B >= 2.
    pub prefetch: bool,
    /// Write admission.
    pub admission: L2Admission,
    /// Reads in flight at most (the L2's queue depth); beyond it a miss goes upstream.
    pub max_reads: usize,
    /// Interests parked on one read at most; beyond it they go upstream.
    pub max_parked_per_read: usize,
    /// Batches being assembled from L1 evictions at most; the oldest is flushed (written
    /// as is, possibly partial) when a new one needs room.
    pub staging: usize,
    /// Batches remembered as stored in L2 (size it to the L2's capacity in batches); the
    /// oldest is forgotten first, as the L2's FIFO log overwrites it.
    pub index_capacity: usize,
    /// A batch still incomplete this long (ns) after its first Data was staged is written as
    /// it is (the tail of an object, or segments L1 never evicts), so evicted Data are not
    /// held back from L2 for ever; checked by `Shard::on_timer`. 0: never.
    pub stage_timeout_ns: u64,
}

impl Default for L2Config {
    fn default() -> Self {
        Self {
            batch: 16,
            prefetch: true,
            admission: L2Admission::WriteAll,
            max_reads: 32,
            max_parked_per_read: 64,
            staging: 64,
            index_capacity: 1 << 16,
            stage_timeout_ns: 1_000_000_000,
        }
    }
}

/// Why an L2 read produced no batch (every failure is an L2 miss).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum L2Failure {
    /// The batch is no longer in L2 (overwritten since the lookup).
    #[error("the batch was overwritten in L2")]
    Stale,
    /// The record failed validation.
    #[error("the L2 record is corrupt")]
    Corrupt,
    /// The read could not be submitted (queue full) or the device failed.
    #[error("the L2 read could not be done")]
    Io,
}

/// A batch read the I/O layer should submit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Read {
    /// Pass it back to [`Shard::on_l2_complete`](crate::Shard::on_l2_complete).
    pub request: u64,
    /// Keyed hash of the content name (the name without its segment component).
    pub content_key: u64,
    /// Batch number (segment / B).
    pub batch: u64,
}

/// A batch write in an [`Actions`](crate::Actions) list (see `Actions::l2_writes`).
#[derive(Debug, Clone)]
pub(crate) struct L2WriteRec {
    pub(crate) content_key: u64,
    pub(crate) batch: u64,
    pub(crate) name: Range<usize>,
    pub(crate) segments: Range<usize>,
}

/// A batch the I/O layer should write to L2 (then report with
/// [`Shard::on_l2_written`](crate::Shard::on_l2_written)).
#[derive(Debug, Clone, Copy)]
pub struct L2Write<'a> {
    /// Keyed hash of the content name.
    pub content_key: u64,
    /// Batch number.
    pub batch: u64,
    /// The content name's TLV-VALUE (its components).
    pub content_name: &'a [u8],
    pub(crate) segments: &'a [(u64, Range<usize>)],
    pub(crate) bytes: &'a [u8],
}

impl<'a> L2Write<'a> {
    /// The batch's Data packets with their name hashes (the L1 keys), by segment number.
    pub fn segments(&self) -> impl Iterator<Item = (u64, &'a [u8])> + 'a {
        let bytes = self.bytes;
        self.segments
            .iter()
            .map(move |(k, r)| (*k, bytes.get(r.clone()).unwrap_or(&[])))
    }

    /// Number of Data in the batch.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// True for a batch without Data (never emitted).
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }
}

/// L2 counters of a shard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Counters {
    /// Interests parked on an L2 read.
    pub parked: u64,
    /// Reads asked for because an Interest missed L1 and hit the L2 index.
    pub reads: u64,
    /// Reads asked for by prefetch.
    pub prefetches: u64,
    /// Reads that failed (the parked Interests went upstream).
    pub read_failures: u64,
    /// Parked Interests answered from the batch.
    pub served: u64,
    /// Parked Interests sent upstream (failure, or the batch lacked their Data).
    pub fallbacks: u64,
    /// Misses that hit the index but found the read table full (went upstream).
    pub busy: u64,
    /// Batches written.
    pub writes: u64,
    /// Batches refused by the write admission.
    pub rejected: u64,
}

#[derive(Debug)]
struct Read {
    request: u64,
    content_key: u64,
    batch: u64,
    parked: Vec<PitId>,
    /// Each parked Interest's wire, as received (for a fallback upstream).
    spans: Vec<Range<usize>>,
    wire: Vec<u8>,
}

#[derive(Debug, Default)]
struct Stage {
    content_key: u64,
    batch: u64,
    name: Vec<u8>,
    bytes: Vec<u8>,
    /// (segment, name hash, range in `bytes`).
    segments: Vec<(u64, u64, Range<usize>)>,
    mask: u64,
    used: bool,
    /// The admission will refuse this batch (a first eviction under `SecondHit`): only its
    /// segment mask is kept, no name or bytes are copied.
    dry: bool,
    /// When its first Data was staged (ns).
    since: u64,
}

/// The hasher of the L2's (content key, batch) maps. A content key is already a keyed hash
/// of the content name (the shard's secret `HashKey`), so one multiply-fold per word mixes
/// enough; SipHash (the std default) cost about 200 instructions per lookup, several per
/// evicted Data.
#[derive(Default, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        let m = u128::from(self.0 ^ x) * 0x9E37_79B9_7F4A_7C15;
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by (content key, batch).
type KeyMap<V> = HashMap<(u64, u64), V, BuildHasherDefault<KeyHasher>>;

/// A bounded FIFO set of (content key, batch): inserting into a full set drops the oldest
/// key. Removal is O(1): the order queue keeps each key's insertion stamp and skips entries
/// whose stamp is no longer current, and is compacted when stale entries pile up.
#[derive(Debug)]
struct FifoSet {
    set: KeyMap<u64>,
    order: VecDeque<((u64, u64), u64)>,
    cap: usize,
    stamp: u64,
}

impl FifoSet {
    fn new(cap: usize) -> Self {
        let cap = cap.max(1);
        Self {
            set: KeyMap::with_capacity_and_hasher(cap, BuildHasherDefault::default()),
            order: VecDeque::with_capacity(cap),
            cap,
            stamp: 0,
        }
    }

    fn contains(&self, k: (u64, u64)) -> bool {
        self.set.contains_key(&k)
    }

    fn insert(&mut self, k: (u64, u64)) {
        // Inserted first, then the oldest dropped down to the capacity: the same keys go as
        // when room is made first (the new key is the newest), with one lookup for both the
        // membership test and the insertion.
        match self.set.entry(k) {
            Entry::Occupied(_) => return,
            Entry::Vacant(v) => {
                self.stamp += 1;
                v.insert(self.stamp);
            }
        }
        self.order.push_back((k, self.stamp));
        while self.set.len() > self.cap {
            let Some((old, stamp)) = self.order.pop_front() else {
                break;
            };
            if let Entry::Occupied(e) = self.set.entry(old)
                && *e.get() == stamp
            {
                e.remove();
            }
        }
        if self.order.len() > 2 * self.cap + 16 {
            let set = &self.set;
            self.order.retain(|(k, st)| set.get(k) == Some(st));
        }
    }

    fn remove(&mut self, k: (u64, u64)) {
        self.set.remove(&k);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.set.len()
    }
}

impl Read {
    fn park(&mut self, id: PitId, wire: &[u8]) {
        let at = self.wire.len();
        self.wire.extend_from_slice(wire);
        self.parked.push(id);
        self.spans.push(at..self.wire.len());
    }
}

/// The Interests parked on a finished read.
#[derive(Debug, Default)]
pub(crate) struct Parked {
    pub(crate) ids: Vec<PitId>,
    pub(crate) spans: Vec<Range<usize>>,
    pub(crate) wire: Vec<u8>,
}

/// One shard's L2 state.
#[derive(Debug)]
pub(crate) struct L2State {
    pub(crate) cfg: L2Config,
    index: FifoSet,
    ghosts: FifoSet,
    reads: Vec<Read>,
    next_request: u64,
    stages: Vec<Stage>,
    /// The staging slots not in use.
    free_stages: Vec<usize>,
    stage_of: KeyMap<usize>,
    stage_age: VecDeque<usize>,
    pub(crate) counters: L2Counters,
}

/// Outcome of asking to park an Interest on a batch.
pub(crate) enum Park {
    /// Parked on a new read (emit it).
    NewRead(L2Read),
    /// Parked on a read already in flight.
    Joined,
    /// Not parked (batch not in L2, or tables full).
    No,
}

impl L2State {
    pub(crate) fn new(cfg: L2Config) -> Self {
        let cfg = L2Config {
            batch: cfg.batch.clamp(1, 64),
            max_reads: cfg.max_reads.max(1),
            max_parked_per_read: cfg.max_parked_per_read.max(1),
            staging: cfg.staging.max(1),
            ..cfg
        };
        let window = match cfg.admission {
            L2Admission::SecondHit { window } => window,
            L2Admission::WriteAll => 1,
        };
        Self {
            index: FifoSet::new(cfg.index_capacity),
            ghosts: FifoSet::new(window),
            reads: (0..cfg.max_reads)
                .map(|_| Read {
                    request: 0,
                    content_key: 0,
                    batch: 0,
                    parked: Vec::with_capacity(cfg.max_parked_per_read),
                    spans: Vec::with_capacity(cfg.max_parked_per_read),
                    wire: Vec::new(),
                })
                .collect(),
            next_request: 1,
            stages: (0..cfg.staging).map(|_| Stage::default()).collect(),
            free_stages: (0..cfg.staging).rev().collect(),
            stage_of: KeyMap::with_capacity_and_hasher(cfg.staging, BuildHasherDefault::default()),
            stage_age: VecDeque::with_capacity(cfg.staging),
            counters: L2Counters::default(),
            cfg,
        }
    }

    /// Whether the L2 holds (content, batch), as far as write completions told us.
    pub(crate) fn holds(&self, content_key: u64, batch: u64) -> bool {
        self.index.contains((content_key, batch))
    }

    pub(crate) fn written(&mut self, content_key: u64, batch: u64) {
        self.index.insert((content_key, batch));
    }

    pub(crate) fn forget(&mut self, content_key: u64, batch: u64) {
        self.index.remove((content_key, batch));
    }

    fn in_flight(&self, content_key: u64, batch: u64) -> Option<usize> {
        self.reads
            .iter()
            .position(|r| r.request != 0 && r.content_key == content_key && r.batch == batch)
    }

    /// Starts a read of (content, batch) with `park` (if any) on it.
    fn start(
        &mut self,
        content_key: u64,
        batch: u64,
        park: Option<(PitId, &[u8])>,
    ) -> Option<L2Read> {
        let slot = self.reads.iter().position(|r| r.request == 0)?;
        let request = self.next_request;
        self.next_request += 1;
        let r = &mut self.reads[slot];
        r.request = request;
        r.content_key = content_key;
        r.batch = batch;
        r.parked.clear();
        r.spans.clear();
        r.wire.clear();
        if let Some((id, wire)) = park {
            r.park(id, wire);
        }
        Some(L2Read {
            request,
            content_key,
            batch,
        })
    }

    /// Parks `id` (its Interest's wire is `wire`) on a read of (content, batch) if the L2
    /// holds it.
    pub(crate) fn park(&mut self, id: PitId, wire: &[u8], content_key: u64, batch: u64) -> Park {
        if !self.holds(content_key, batch) {
            return Park::No;
        }
        if let Some(i) = self.in_flight(content_key, batch) {
            let r = &mut self.reads[i];
            if r.parked.len() < self.cfg.max_parked_per_read {
                r.park(id, wire);
                self.counters.parked += 1;
                return Park::Joined;
            }
            self.counters.busy += 1;
            return Park::No;
        }
        match self.start(content_key, batch, Some((id, wire))) {
            Some(read) => {
                self.counters.parked += 1;
                self.counters.reads += 1;
                Park::NewRead(read)
            }
            None => {
                self.counters.busy += 1;
                Park::No
            }
        }
    }

    /// Whether a prefetch of (content, batch) would read: in L2, not in flight, a free slot.
    pub(crate) fn may_prefetch(&self, content_key: u64, batch: u64) -> bool {
        self.holds(content_key, batch)
            && self.in_flight(content_key, batch).is_none()
            && self.reads.iter().any(|r| r.request == 0)
    }

    /// Whether entry `id` is parked on a read.
    pub(crate) fn is_parked(&self, id: PitId) -> bool {
        self.reads
            .iter()
            .any(|r| r.request != 0 && r.parked.contains(&id))
    }

    /// A prefetch of (content, batch): a read unless not in L2 or already in flight.
    pub(crate) fn prefetch(&mut self, content_key: u64, batch: u64) -> Option<L2Read> {
        if !self.holds(content_key, batch) || self.in_flight(content_key, batch).is_some() {
            return None;
        }
        let read = self.start(content_key, batch, None)?;
        self.counters.prefetches += 1;
        Some(read)
    }

    /// Ends read `request`, handing its parked entries over in `parked` (with each one's
    /// Interest at `wire[span]`); returns its key. The buffers are swapped, not copied.
    pub(crate) fn finish_read(&mut self, request: u64, parked: &mut Parked) -> Option<(u64, u64)> {
        let r = self
            .reads
            .iter_mut()
            .find(|r| r.request == request && request != 0)?;
        r.request = 0;
        std::mem::swap(&mut parked.ids, &mut r.parked);
        std::mem::swap(&mut parked.spans, &mut r.spans);
        std::mem::swap(&mut parked.wire, &mut r.wire);
        r.parked.clear();
        r.spans.clear();
        r.wire.clear();
        Some((r.content_key, r.batch))
    }

    /// Whether the next Data staged for (content, batch) would have its bytes written, as
    /// far as can be told now: false when the batch is being staged dry, or would start a
    /// dry stage (a first eviction under `SecondHit`). The caller may then stage it with
    /// empty `data` (see [`stage`](Self::stage)) and skip copying it.
    pub(crate) fn wants_bytes(&self, content_key: u64, batch: u64) -> bool {
        let key = (content_key, batch);
        match self.stage_of.get(&key) {
            Some(&s) => !self.stages[s].dry,
            None => !self.refuses(key),
        }
    }

    /// Whether a batch whose staging starts now is sure to be refused: under `SecondHit`,
    /// one with no ghost. (Its ghost can only be added by its own flush, and there is one
    /// stage per batch, so the answer holds until the flush.)
    fn refuses(&self, key: (u64, u64)) -> bool {
        matches!(self.cfg.admission, L2Admission::SecondHit { .. }) && !self.ghosts.contains(key)
    }

    /// Stages an evicted Data (segment `segment` of content `content_name`) at `now`; calls
    /// `emit` with every batch that becomes ready (complete, or flushed for room). A batch
    /// the admission is sure to refuse is staged dry: only which segments it saw is kept,
    /// so `content_name` and `data` may then be empty ([`wants_bytes`](Self::wants_bytes)).
    pub(crate) fn stage(
        &mut self,
        now: u64,
        (content_key, content_name): (u64, &[u8]),
        (segment, name_hash, data): (u64, u64, &[u8]),
        emit: &mut dyn FnMut(&Stage2<'_>),
    ) {
        let b = self.cfg.batch;
        let key = (content_key, segment / b);
        let slot = match self.stage_of.get(&key) {
            Some(&s) => s,
            None => {
                let slot = match self.free_stages.pop() {
                    Some(s) => s,
                    None => {
                        let oldest = self.stage_age.pop_front().unwrap_or(0);
                        self.flush(oldest, emit);
                        self.free_stages.pop().unwrap_or(oldest)
                    }
                };
                let dry = self.refuses(key);
                let s = &mut self.stages[slot];
                s.used = true;
                s.dry = dry;
                s.content_key = content_key;
                s.batch = key.1;
                s.name.clear();
                if !dry {
                    s.name.extend_from_slice(content_name);
                }
                s.bytes.clear();
                s.segments.clear();
                s.mask = 0;
                s.since = now;
                self.stage_of.insert(key, slot);
                self.stage_age.push_back(slot);
                slot
            }
        };
        let s = &mut self.stages[slot];
        let bit = 1u64 << (segment % b);
        if s.mask & bit == 0 {
            s.mask |= bit;
            if !s.dry {
                let at = s.bytes.len();
                s.bytes.extend_from_slice(data);
                s.segments.push((segment, name_hash, at..at + data.len()));
            }
        }
        let full = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
        if s.mask == full {
            self.stage_age.retain(|&x| x != slot);
            self.flush(slot, emit);
        }
    }

    /// Writes (as they are) the batches staged `stage_timeout_ns` or longer ago.
    pub(crate) fn flush_stale(&mut self, now: u64, emit: &mut dyn FnMut(&Stage2<'_>)) {
        let timeout = self.cfg.stage_timeout_ns;
        if timeout != 0 && now >= timeout {
            self.flush_staged_until(now - timeout, emit);
        }
    }

    /// Writes (as they are) every batch being staged.
    pub(crate) fn flush_all(&mut self, emit: &mut dyn FnMut(&Stage2<'_>)) {
        self.flush_staged_until(u64::MAX, emit);
    }

    /// Writes the batches whose first Data was staged at or before `last` (oldest first).
    fn flush_staged_until(&mut self, last: u64, emit: &mut dyn FnMut(&Stage2<'_>)) {
        while let Some(&slot) = self.stage_age.front() {
            if self.stages[slot].since > last {
                break;
            }
            self.stage_age.pop_front();
            self.flush(slot, emit);
        }
    }

    /// Whether any batch is being staged.
    pub(crate) fn staging(&self) -> bool {
        !self.stage_age.is_empty()
    }

    fn flush(&mut self, slot: usize, emit: &mut dyn FnMut(&Stage2<'_>)) {
        let s = &mut self.stages[slot];
        if !s.used {
            return;
        }
        s.used = false;
        self.free_stages.push(slot);
        self.stage_of.remove(&(s.content_key, s.batch));
        s.segments.sort_unstable_by_key(|x| x.0);
        let admit = match self.cfg.admission {
            L2Admission::WriteAll => true,
            // Staged dry: no ghost when it started, none added since (see `refuses`).
            L2Admission::SecondHit { .. } if s.dry => {
                debug_assert!(!self.ghosts.contains((s.content_key, s.batch)));
                self.ghosts.insert((s.content_key, s.batch));
                false
            }
            L2Admission::SecondHit { .. } => {
                let k = (s.content_key, s.batch);
                if self.ghosts.contains(k) {
                    self.ghosts.remove(k);
                    true
                } else {
                    self.ghosts.insert(k);
                    false
                }
            }
        };
        if !admit {
            self.counters.rejected += 1;
            return;
        }
        self.counters.writes += 1;
        emit(&Stage2 {
            content_key: s.content_key,
            batch: s.batch,
            name: &s.name,
            bytes: &s.bytes,
            segments: &s.segments,
        });
    }
}

/// A batch ready to write (borrowed from a staging slot).
pub(crate) struct Stage2<'a> {
    pub(crate) content_key: u64,
    pub(crate) batch: u64,
    pub(crate) name: &'a [u8],
    pub(crate) bytes: &'a [u8],
    pub(crate) segments: &'a [(u64, u64, Range<usize>)],
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(batch: u64, staging: usize, admission: L2Admission) -> L2Config {
        L2Config {
            batch,
            staging,
            admission,
            max_reads: 2,
            max_parked_per_read: 2,
            index_capacity: 3,
            ..L2Config::default()
        }
    }

    /// An emitted write: (content key, batch, [(segment, data)]).
    type Written = (u64, u64, Vec<(u64, Vec<u8>)>);

    /// Stages `segments` of content `ck` and returns the emitted writes: (ck, batch,
    /// [(segment, name hash, data)]).
    fn stage(l2: &mut L2State, ck: u64, segments: &[u64]) -> Vec<Written> {
        let mut out = Vec::new();
        for &s in segments {
            let data = vec![s as u8; 3 + s as usize % 5];
            l2.stage(0, (ck, b"name"), (s, 1000 + s, &data), &mut |st| {
                assert_eq!(st.name, b"name");
                out.push((
                    st.content_key,
                    st.batch,
                    st.segments
                        .iter()
                        .map(|(seg, _, r)| (*seg, st.bytes[r.clone()].to_vec()))
                        .collect(),
                ));
            });
        }
        out
    }

    #[test]
    fn fifo_set_drops_oldest_and_removes_in_constant_time() {
        let mut f = FifoSet::new(3);
        for k in 0..3 {
            f.insert((k, 0));
        }
        f.remove((0, 0));
        f.insert((0, 0)); // re-inserted: now the newest
        f.insert((9, 0)); // full: drops (1, 0), the oldest current key
        assert!(!f.contains((1, 0)));
        assert!(f.contains((0, 0)) && f.contains((2, 0)) && f.contains((9, 0)));
        assert_eq!(f.len(), 3);
        // Many removals and re-insertions keep the order queue bounded.
        for i in 0..10_000 {
            f.remove((0, 0));
            f.insert((0, 0));
            assert!(f.order.len() <= 2 * 3 + 16, "at {i}: {}", f.order.len());
        }
        assert_eq!(f.len(), 3);
        assert!(f.contains((0, 0)));
    }

    #[test]
    fn an_incomplete_batch_is_written_after_the_stage_timeout() {
        let mut l2 = L2State::new(L2Config {
            stage_timeout_ns: 1000,
            ..cfg(4, 4, L2Admission::WriteAll)
        });
        let mut out = Vec::new();
        l2.stage(100, (7, b"name"), (8, 1, b"a"), &mut |_| {
            panic!("incomplete")
        });
        l2.stage(600, (7, b"name"), (0, 2, b"b"), &mut |_| {
            panic!("incomplete")
        });
        assert!(l2.staging());
        l2.flush_stale(1099, &mut |st| out.push((st.batch, st.segments.len())));
        assert!(out.is_empty(), "not stale yet");
        l2.flush_stale(1100, &mut |st| out.push((st.batch, st.segments.len())));
        assert_eq!(out, vec![(2, 1)], "only the batch staged at 100");
        l2.flush_stale(1600, &mut |st| out.push((st.batch, st.segments.len())));
        assert_eq!(out, vec![(2, 1), (0, 1)]);
        assert!(!l2.staging());
        assert_eq!(l2.counters.writes, 2);
    }

    #[test]
    fn a_batch_is_written_when_complete_in_segment_order() {
        let mut l2 = L2State::new(cfg(4, 4, L2Admission::WriteAll));
        assert!(stage(&mut l2, 7, &[5, 7, 4]).is_empty());
        let w = stage(&mut l2, 7, &[6]);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].0, w[0].1), (7, 1));
        let segs: Vec<u64> = w[0].2.iter().map(|x| x.0).collect();
        assert_eq!(segs, vec![4, 5, 6, 7]);
        assert_eq!(w[0].2[1].1, vec![5u8; 3]);
        assert_eq!(l2.counters.writes, 1);
        // A duplicate eviction of a segment does not complete a batch twice.
        assert!(stage(&mut l2, 7, &[0, 0, 1, 2]).is_empty());
    }

    #[test]
    fn the_oldest_partial_batch_is_flushed_for_room() {
        let mut l2 = L2State::new(cfg(4, 2, L2Admission::WriteAll));
        assert!(stage(&mut l2, 1, &[0]).is_empty());
        assert!(stage(&mut l2, 2, &[0, 1]).is_empty());
        let w = stage(&mut l2, 3, &[0]);
        assert_eq!(w.len(), 1, "content 1's batch flushed");
        assert_eq!((w[0].0, w[0].1, w[0].2.len()), (1, 0, 1));
        // Content 2's batch is still staged and completes.
        let w = stage(&mut l2, 2, &[2, 3]);
        assert_eq!((w[0].0, w[0].2.len()), (2, 4));
    }

    #[test]
    fn second_hit_admits_on_the_second_eviction() {
        let mut l2 = L2State::new(cfg(2, 4, L2Admission::SecondHit { window: 4 }));
        assert!(stage(&mut l2, 1, &[0, 1]).is_empty());
        assert_eq!(l2.counters.rejected, 1);
        assert_eq!(stage(&mut l2, 1, &[0, 1]).len(), 1);
        // Admitted once: the ghost is gone, the next eviction is a first one again.
        assert!(stage(&mut l2, 1, &[0, 1]).is_empty());
    }

    #[test]
    fn a_first_eviction_is_staged_dry_and_the_second_written_whole() {
        let mut l2 = L2State::new(cfg(2, 4, L2Admission::SecondHit { window: 4 }));
        // No ghost: the shard may stage it without name or bytes.
        assert!(!l2.wants_bytes(1, 0));
        let mut emitted = 0;
        for s in 0..2 {
            l2.stage(0, (1, b""), (s, 10 + s, b""), &mut |_| emitted += 1);
        }
        assert_eq!((emitted, l2.counters.rejected), (0, 1));
        assert!(!l2.staging());
        // The ghost makes the next eviction of the batch wanted, and it is written whole.
        assert!(l2.wants_bytes(1, 0));
        let w = stage(&mut l2, 1, &[1, 0]);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].2, vec![(0, vec![0u8; 3]), (1, vec![1u8; 4])]);
        assert_eq!(l2.counters.writes, 1);
        // A batch being staged dry stays dry until flushed.
        assert!(stage(&mut l2, 2, &[0]).is_empty());
        assert!(!l2.wants_bytes(2, 0));
    }

    #[test]
    fn a_ghost_that_leaves_the_window_while_its_batch_is_staged_refuses_it() {
        // Window 1: batch (1, 0)'s ghost is pushed out by (2, 0)'s while (1, 0) is being
        // staged the second time; at its flush it is a first eviction again (refused), as
        // before dry staging.
        let mut l2 = L2State::new(cfg(2, 4, L2Admission::SecondHit { window: 1 }));
        assert!(stage(&mut l2, 1, &[0, 1]).is_empty());
        assert!(stage(&mut l2, 1, &[0]).is_empty());
        assert!(
            l2.wants_bytes(1, 0),
            "its ghost is there when its staging starts"
        );
        assert!(stage(&mut l2, 2, &[0, 1]).is_empty());
        assert!(
            stage(&mut l2, 1, &[1]).is_empty(),
            "refused: its ghost is gone"
        );
        assert_eq!((l2.counters.rejected, l2.counters.writes), (3, 0));
        // Its flush left a ghost again: the next eviction is written.
        assert_eq!(stage(&mut l2, 1, &[0, 1]).len(), 1);
    }

    #[test]
    fn index_is_bounded_fifo() {
        let mut l2 = L2State::new(cfg(4, 4, L2Admission::WriteAll));
        for b in 0..4 {
            l2.written(9, b);
        }
        assert!(!l2.holds(9, 0), "oldest forgotten at capacity 3");
        assert!((1..4).all(|b| l2.holds(9, b)));
        l2.forget(9, 2);
        assert!(!l2.holds(9, 2));
        l2.written(9, 4);
        assert!(l2.holds(9, 1) && l2.holds(9, 3) && l2.holds(9, 4));
    }

    #[test]
    fn reads_and_parking_are_bounded() {
        let mut l2 = L2State::new(cfg(4, 4, L2Admission::WriteAll));
        let mut pit = crate::pit::Pit::new(0, 16, 0);
        let name = ndx_codec::NameBuf::from_uri("/x").expect("name");
        let ids: Vec<PitId> = (0..6u64)
            .map(|i| {
                pit.insert(i, &name.as_name(), i % 2 == 0, i % 3 == 0, 1_000)
                    .expect("room")
            })
            .collect();
        assert!(
            matches!(l2.park(ids[0], b"i0", 5, 0), Park::No),
            "not in L2"
        );
        l2.written(5, 0);
        l2.written(5, 1);
        l2.written(5, 2);
        let Park::NewRead(r0) = l2.park(ids[0], b"i0", 5, 0) else {
            panic!("a read")
        };
        assert!(matches!(l2.park(ids[1], b"i1", 5, 0), Park::Joined));
        assert!(
            matches!(l2.park(ids[2], b"i2", 5, 0), Park::No),
            "2 per read"
        );
        assert!(l2.is_parked(ids[1]) && !l2.is_parked(ids[2]));
        assert!(l2.prefetch(5, 0).is_none(), "in flight");
        let r1 = l2.prefetch(5, 1).expect("a free slot");
        assert!(
            !l2.may_prefetch(5, 2) && l2.prefetch(5, 2).is_none(),
            "2 reads"
        );
        assert!(matches!(l2.park(ids[3], b"i3", 5, 2), Park::No));
        assert!(
            matches!(l2.park(ids[4], b"i4", 5, 1), Park::Joined),
            "joins the prefetch"
        );
        let mut parked = Parked::default();
        assert_eq!(l2.finish_read(r0.request, &mut parked), Some((5, 0)));
        assert_eq!(parked.ids, vec![ids[0], ids[1]]);
        let wires: Vec<&[u8]> = parked
            .spans
            .iter()
            .map(|r| &parked.wire[r.clone()])
            .collect();
        assert_eq!(wires, vec![&b"i0"[..], &b"i1"[..]]);
        assert_eq!(l2.finish_read(r0.request, &mut parked), None, "once");
        assert_eq!(l2.finish_read(r1.request, &mut parked), Some((5, 1)));
        assert_eq!(parked.ids, vec![ids[4]]);
        assert_eq!(&parked.wire[parked.spans[0].clone()], b"i4");
        assert_ne!(r0.request, r1.request);
        assert_eq!(
            (l2.counters.reads, l2.counters.prefetches, l2.counters.busy),
            (1, 1, 2)
        );
    }
}
