//! The Pending Interest Table of one shard: a fixed-capacity slab under a cache-line hash
//! index, keyed by (name, CanBePrefix, MustBeFresh), with in- and out-records per face,
//! expiry by a timing wheel (no scans), and PIT tokens that locate an entry in O(1).
//!
//! # PIT tokens
//! Every Interest the router forwards carries a 6-byte NDNLPv2 PitToken naming its entry:
//! byte 0 is the shard (the XDP program steers the returning Data or Nack on it, as NDN-DPDK
//! does), bytes 1-3 the slot, bytes 4-5 the low 16 bits of the slot's reuse count, so a token
//! of an entry that has since been erased and reused is recognised as stale (and a Data is
//! still checked against the entry's name). Six bytes because ndnd (YaNFD) refuses to echo
//! any other length: with 8-byte tokens an ndnd upstream crashes.
//!
//! # Bound
//! The table never grows: when all `capacity` slots are taken, [`Pit::insert`] fails with
//! [`PitFull`] and the pipeline answers Nack Congestion (counted).

use ndx_codec::{MAX_PIT_TOKEN_LEN, Name};

use crate::face::FaceId;
use crate::index::HashIndex;
use crate::timer::TimerWheel;

/// Length of the PIT tokens this router issues.
pub const PIT_TOKEN_LEN: usize = 6;

/// Most PIT entries per shard (the token has 24 bits of slot).
pub const MAX_PIT_CAPACITY: usize = 1 << 24;

/// An issued PIT token.
pub type PitToken = [u8; PIT_TOKEN_LEN];

/// The shard a token of ours names (byte 0), as the XDP program reads it.
pub fn token_shard(token: &[u8]) -> Option<u8> {
    (token.len() == PIT_TOKEN_LEN).then(|| token[0])
}

/// Identifies a live PIT entry; stale ids (erased entries) are refused by every accessor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PitId {
    slot: u32,
    /// The slot's generation while the entry lives (always odd).
    generation: u32,
}

/// The PIT is at capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("PIT full ({0} entries)")]
pub struct PitFull(pub usize);

/// A downstream PitToken kept to echo back (up to 32 bytes, NDNLPv2's limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenBuf {
    len: u8,
    bytes: [u8; MAX_PIT_TOKEN_LEN],
}

impl TokenBuf {
    /// Copies `token` (`None` and tokens longer than 32 bytes are kept as "no token").
    #[inline]
    pub fn new(token: Option<&[u8]>) -> Self {
        let mut t = Self::default();
        if let Some(src) = token.filter(|s| s.len() <= MAX_PIT_TOKEN_LEN) {
            t.bytes[..src.len()].copy_from_slice(src);
            t.len = src.len() as u8;
        }
        t
    }

    /// The token, if there is one.
    #[inline]
    pub fn get(&self) -> Option<&[u8]> {
        (self.len > 0).then(|| &self.bytes[..usize::from(self.len)])
    }
}

/// A downstream that asked for this Interest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InRecord {
    /// The downstream face.
    pub face: FaceId,
    /// Nonce of its latest Interest.
    pub nonce: u32,
    /// When its latest Interest expires (ns).
    pub expiry: u64,
    /// The PitToken it sent, to echo back on the Data or Nack.
    pub token: TokenBuf,
}

/// An upstream the Interest was forwarded to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutRecord {
    /// The upstream face.
    pub face: FaceId,
    /// Nonce sent.
    pub nonce: u32,
    /// When it was last sent (ns).
    pub sent_at: u64,
    /// Whether the upstream answered with a Nack (and which).
    pub nacked: Option<ndx_codec::NackReason>,
}

/// A short list kept inside its owner: up to `N` items in place, so reading them is no
/// pointer chase to another line; past `N` the whole list moves to the heap (whose capacity
/// is kept for the next entry in the slot). A PIT entry's name and its in- and out-records
/// are these: an entry is then one run of adjacent lines that a Data's prefetch brings in
/// whole, instead of a slot and three separate allocations (each a dependent miss once the
/// entry is a round-trip time old).
#[derive(Debug, Clone)]
pub struct InlineVec<T, const N: usize> {
    len: u32,
    inline: [T; N],
    heap: Vec<T>,
}

impl<T: Copy + Default, const N: usize> InlineVec<T, N> {
    /// An empty list.
    pub fn new() -> Self {
        Self {
            len: 0,
            inline: [T::default(); N],
            heap: Vec::new(),
        }
    }

    /// Whether the items are in place (not moved to the heap).
    pub fn is_inline(&self) -> bool {
        self.len as usize <= N
    }

    /// Appends `item`.
    pub fn push(&mut self, item: T) {
        let n = self.len as usize;
        if n < N {
            self.inline[n] = item;
        } else {
            if n == N {
                self.heap.clear();
                self.heap.extend_from_slice(&self.inline);
            }
            self.heap.push(item);
        }
        self.len += 1;
    }

    /// Replaces the items with `items`.
    pub fn set(&mut self, items: &[T]) {
        match self.inline.get_mut(..items.len()) {
            Some(place) => place.copy_from_slice(items),
            None => {
                self.heap.clear();
                self.heap.extend_from_slice(items);
            }
        }
        self.len = items.len() as u32;
    }

    /// Removes every item (the heap's capacity stays).
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

impl<T: Copy + Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const N: usize> std::ops::Deref for InlineVec<T, N> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        let n = self.len as usize;
        match self.inline.get(..n) {
            Some(items) => items,
            None => &self.heap,
        }
    }
}

impl<T, const N: usize> std::ops::DerefMut for InlineVec<T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        let n = self.len as usize;
        match self.inline.get_mut(..n) {
            Some(items) => items,
            None => &mut self.heap,
        }
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a InlineVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a mut InlineVec<T, N> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// Name bytes a PIT entry keeps in place (longer names go to the heap): room for the usual
/// name of a few short components, and the whole entry stays five lines.
pub const PIT_NAME_INLINE: usize = 96;

/// One pending Interest: five whole cache lines (64-byte aligned, 320 bytes), its name
/// (up to [`PIT_NAME_INLINE`] bytes) and first in- and out-record among them.
#[derive(Debug, Clone)]
#[repr(align(64))]
pub struct PitEntry {
    /// Bumped on insert and on erase: odd while the entry lives, so a [`PitId`] check is
    /// one compare and a slot's reuse is told from its former entry.
    generation: u32,
    /// Where the index holds this entry ([`HashIndex::insert_pos_within`]).
    index_pos: u32,
    /// While the slot is free: the next free slot ([`NO_SLOT`] for none), the free list
    /// being threaded through the slab.
    next_free: u32,
    /// The face whose Interest created the entry (held against its PIT share).
    owner: FaceId,
    hash: u64,
    name: InlineVec<u8, PIT_NAME_INLINE>,
    /// Name components (a name of at most 64 KiB has fewer than 2^32).
    components: u32,
    /// CanBePrefix (bit 0) and MustBeFresh (bit 1), [`selectors`]: one byte to write, test
    /// and compare.
    selectors: u8,
    expiry: u64,
    /// Downstreams, one record per face (the first in place).
    pub in_records: InlineVec<InRecord, 1>,
    /// Upstreams, one record per face (the first in place).
    pub out_records: InlineVec<OutRecord, 1>,
    /// Scratch space for the entry's strategy (e.g. the index of the next hop tried last).
    pub strategy_state: u64,
}

impl PitEntry {
    fn empty(next_free: u32) -> Self {
        Self {
            generation: 0,
            index_pos: 0,
            next_free,
            owner: FaceId(0),
            hash: 0,
            name: InlineVec::new(),
            components: 0,
            selectors: 0,
            expiry: 0,
            in_records: InlineVec::new(),
            out_records: InlineVec::new(),
            strategy_state: 0,
        }
    }

    /// The face whose Interest created the entry.
    pub fn owner(&self) -> FaceId {
        self.owner
    }

    /// The Interest name's component bytes.
    pub fn name_bytes(&self) -> &[u8] {
        &self.name
    }

    /// Number of name components.
    pub fn name_len(&self) -> usize {
        self.components as usize
    }

    /// CanBePrefix of the pending Interest.
    pub fn can_be_prefix(&self) -> bool {
        self.selectors & CAN_BE_PREFIX != 0
    }

    /// MustBeFresh of the pending Interest.
    pub fn must_be_fresh(&self) -> bool {
        self.selectors & MUST_BE_FRESH != 0
    }

    /// When the entry expires (ns): the latest in-record expiry.
    pub fn expiry(&self) -> u64 {
        self.expiry
    }

    /// The in-record of `face`.
    pub fn in_record(&self, face: FaceId) -> Option<&InRecord> {
        self.in_records.iter().find(|r| r.face == face)
    }

    /// The out-record of `face`.
    pub fn out_record(&self, face: FaceId) -> Option<&OutRecord> {
        self.out_records.iter().find(|r| r.face == face)
    }

    /// The keyed hash of the entry's name (its key without the selectors mixed in).
    pub fn name_hash(&self) -> u64 {
        self.hash ^ selector_mix(self.can_be_prefix(), self.must_be_fresh())
    }

    /// Whether `nonce` was seen from or sent to a face other than `except` (a loop), or on
    /// `except`'s out-record.
    pub fn has_nonce_elsewhere(&self, nonce: u32, except: FaceId) -> bool {
        self.in_records
            .iter()
            .any(|r| r.nonce == nonce && r.face != except)
            || self.out_records.iter().any(|r| r.nonce == nonce)
    }
}

/// PIT counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PitCounters {
    /// Entries created.
    pub inserted: u64,
    /// Interests that joined an existing entry.
    pub aggregated: u64,
    /// Entries erased because they expired.
    pub expired: u64,
    /// Insertions refused because the table was full.
    pub full: u64,
}

/// Mixes the selectors into a name hash, so each (name, CanBePrefix, MustBeFresh) has its
/// own entry.
pub fn pit_key(name_hash: u64, can_be_prefix: bool, must_be_fresh: bool) -> u64 {
    name_hash ^ selector_mix(can_be_prefix, must_be_fresh)
}

/// [`PitEntry::selectors`] of CanBePrefix.
const CAN_BE_PREFIX: u8 = 1;
/// [`PitEntry::selectors`] of MustBeFresh.
const MUST_BE_FRESH: u8 = 2;

/// The selectors byte of (CanBePrefix, MustBeFresh).
#[inline(always)]
fn selectors(can_be_prefix: bool, must_be_fresh: bool) -> u8 {
    u8::from(can_be_prefix) | u8::from(must_be_fresh) << 1
}

#[inline]
fn selector_mix(can_be_prefix: bool, must_be_fresh: bool) -> u64 {
    let flags = u64::from(can_be_prefix) | u64::from(must_be_fresh) << 1;
    (flags.wrapping_add(1))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17)
}

/// The PIT of one shard.
#[derive(Debug)]
pub struct Pit {
    shard: u8,
    index: HashIndex,
    entries: Vec<PitEntry>,
    /// The first free slot ([`NO_SLOT`] when the table is full); each free entry names the
    /// next ([`PitEntry::next_free`]). Taken and given back at the front, as a stack.
    free_head: u32,
    /// Timer `i` is slot `i`'s. Erasing an entry leaves its timer running: reusing the slot
    /// moves it, and a timer that fires for an erased entry is ignored.
    timers: TimerWheel,
    counters: PitCounters,
    /// Live entries with CanBePrefix / MustBeFresh, so Data lookups skip impossible variants.
    cbp_live: usize,
    mbf_live: usize,
}

impl Pit {
    /// A PIT for shard `shard` holding at most `capacity` entries (at most
    /// [`MAX_PIT_CAPACITY`]).
    pub fn new(shard: u8, capacity: usize, now: u64) -> Self {
        let capacity = capacity.clamp(1, MAX_PIT_CAPACITY);
        Self {
            shard,
            index: HashIndex::new(capacity),
            // Slot 0 first, then 1, 2, ...
            entries: (1..=capacity)
                .map(|next| {
                    PitEntry::empty(if next < capacity {
                        next as u32
                    } else {
                        NO_SLOT
                    })
                })
                .collect(),
            free_head: 0,
            timers: TimerWheel::new(capacity, now / TICK_NS),
            counters: PitCounters::default(),
            cbp_live: 0,
            mbf_live: 0,
        }
    }

    /// Live entries.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when no Interest is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counters.
    pub fn counters(&self) -> PitCounters {
        self.counters
    }

    /// Whether any pending entry has CanBePrefix.
    pub fn has_can_be_prefix(&self) -> bool {
        self.cbp_live > 0
    }

    /// Whether any pending entry has MustBeFresh.
    pub fn has_must_be_fresh(&self) -> bool {
        self.mbf_live > 0
    }

    /// Approximate bytes per entry of fixed memory (slab, through which the free list is
    /// threaded, + index + timer). An entry holds a name of up to [`PIT_NAME_INLINE`] bytes
    /// and its first in- and out-record in place; only longer names and further records
    /// take heap memory (kept per slot, for reuse).
    pub fn fixed_bytes_per_entry(&self) -> usize {
        let n = self.entries.len().max(1);
        (self.entries.len() * size_of::<PitEntry>() + self.index.memory_bytes()) / n
            + self.timers.bytes_per_timer()
    }

    /// Prefetches the index bucket of `key` (see the shard's burst path).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        self.index.prefetch(key);
    }

    /// Prefetches the entry a token of ours names: all its lines, which the Data reads (the
    /// name to compare, the in-records to answer, the out-records to settle).
    #[inline]
    pub fn prefetch_token(&self, token: &[u8]) {
        let Some(t) = token.get(..PIT_TOKEN_LEN) else {
            return;
        };
        let slot = u32::from_be_bytes([0, t[1], t[2], t[3]]);
        if let Some(e) = self.entries.get(slot as usize) {
            ndx_mem::prefetch_whole(e);
        }
    }

    /// The entry for (`name`, selectors), whose [`pit_key`] is `key`, if pending.
    #[inline]
    pub fn find(&self, key: u64, name: &Name<'_>, cbp: bool, mbf: bool) -> Option<PitId> {
        // Most Interests start a new entry: settle the common miss before the probe loop.
        if !self.index.may_hold(key) {
            return None;
        }
        self.probe(key, name, cbp, mbf)
    }

    /// [`find`](Self::find)'s probe of the index.
    #[inline(never)]
    fn probe(&self, key: u64, name: &Name<'_>, cbp: bool, mbf: bool) -> Option<PitId> {
        let mut found = None;
        let bytes = name.as_bytes();
        self.index.find(key, |slot| {
            let e = &self.entries[slot as usize];
            let hit = e.generation & 1 == 1
                && e.hash == key
                && e.selectors == selectors(cbp, mbf)
                && *e.name == *bytes;
            if hit {
                found = Some(PitId {
                    slot,
                    generation: e.generation,
                });
            }
            hit
        });
        found
    }

    /// Creates the entry for (`name`, selectors) expiring at `expiry` (ns); the caller checked
    /// with [`find`](Self::find) that it does not exist.
    #[inline]
    pub fn insert(
        &mut self,
        key: u64,
        name: &Name<'_>,
        cbp: bool,
        mbf: bool,
        expiry: u64,
    ) -> Result<PitId, PitFull> {
        self.insert_owned(key, name, cbp, mbf, expiry, FaceId(0))
    }

    /// [`insert`](Self::insert), for an Interest from `owner`, the face the entry is held
    /// against ([`PitEntry::owner`]).
    #[inline]
    pub fn insert_owned(
        &mut self,
        key: u64,
        name: &Name<'_>,
        cbp: bool,
        mbf: bool,
        expiry: u64,
        owner: FaceId,
    ) -> Result<PitId, PitFull> {
        // The work out of line, its answer in a register rather than through memory.
        let id = self.insert_packed(key, name, cbp, mbf, expiry, owner, None);
        self.unpack(id)
    }

    /// [`insert_owned`](Self::insert_owned) for the Interest `record` describes, whose face
    /// owns the entry: the entry expires with it and has it as its in-record, written with
    /// the entry (no second lookup of the entry to add it).
    #[inline]
    pub fn insert_recorded(
        &mut self,
        key: u64,
        name: &Name<'_>,
        cbp: bool,
        mbf: bool,
        record: &InRecord,
    ) -> Result<PitId, PitFull> {
        let id = self.insert_packed(
            key,
            name,
            cbp,
            mbf,
            record.expiry,
            record.face,
            Some(record),
        );
        self.unpack(id)
    }

    /// The id [`insert_packed`](Self::insert_packed) packed.
    #[inline(always)]
    fn unpack(&self, id: u64) -> Result<PitId, PitFull> {
        match id {
            0 => Err(PitFull(self.entries.len())),
            id => Ok(PitId {
                slot: id as u32,
                generation: (id >> 32) as u32,
            }),
        }
    }

    /// [`insert`](Self::insert)'s work: the new entry's id packed as `generation << 32 | slot`,
    /// or 0 (never an id: a live entry's generation is odd) when the table is full. The
    /// entry's in-records are `first` alone, or none.
    #[inline(never)]
    #[expect(
        clippy::too_many_arguments,
        reason = "an entry's fields, passed in registers to the one out-of-line insertion"
    )]
    fn insert_packed(
        &mut self,
        key: u64,
        name: &Name<'_>,
        cbp: bool,
        mbf: bool,
        expiry: u64,
        owner: FaceId,
        first: Option<&InRecord>,
    ) -> u64 {
        let slot = self.free_head;
        let Some(e) = self.entries.get_mut(slot as usize) else {
            self.counters.full += 1;
            return 0;
        };
        self.free_head = e.next_free;
        // The index holds one entry per taken slot and has room for all of them: with a slot
        // free it is below its capacity.
        let index_pos = self.index.insert_pos_within(key, slot);
        schedule(&mut self.timers, slot, expiry);
        if cbp | mbf {
            self.cbp_live += usize::from(cbp);
            self.mbf_live += usize::from(mbf);
        }
        self.counters.inserted += 1;
        e.generation = e.generation.wrapping_add(1);
        let id = u64::from(e.generation) << 32 | u64::from(slot);
        e.index_pos = index_pos;
        e.owner = owner;
        e.hash = key;
        e.components = name.len() as u32;
        e.selectors = selectors(cbp, mbf);
        e.in_records.clear();
        if let Some(r) = first {
            e.in_records.push(*r);
        }
        e.out_records.clear();
        e.strategy_state = 0;
        e.expiry = expiry;
        // The name copy (a call) last: less to keep across it.
        e.name.set(name.as_bytes());
        id
    }

    /// Counts an Interest that joined an existing entry.
    pub fn note_aggregated(&mut self) {
        self.counters.aggregated += 1;
    }

    /// The entry, if `id` is still live.
    #[inline]
    pub fn get(&self, id: PitId) -> Option<&PitEntry> {
        self.entries
            .get(id.slot as usize)
            .filter(|e| e.generation == id.generation)
    }

    /// The entry, mutably, if `id` is still live.
    #[inline]
    pub fn get_mut(&mut self, id: PitId) -> Option<&mut PitEntry> {
        self.entries
            .get_mut(id.slot as usize)
            .filter(|e| e.generation == id.generation)
    }

    /// Moves the entry's expiry to `expiry` (ns), rescheduling its timer.
    pub fn set_expiry(&mut self, id: PitId, expiry: u64) {
        let scheduled = self.timers.is_scheduled(id.slot);
        let Some(e) = self.get_mut(id) else { return };
        if e.expiry == expiry && scheduled {
            return;
        }
        e.expiry = expiry;
        schedule(&mut self.timers, id.slot, expiry);
    }

    /// Erases the entry (satisfied, Nacked or expired).
    pub fn erase(&mut self, id: PitId) -> bool {
        let Some(e) = self
            .entries
            .get_mut(id.slot as usize)
            .filter(|e| e.generation == id.generation)
        else {
            return false;
        };
        e.generation = e.generation.wrapping_add(1);
        e.next_free = self.free_head;
        self.free_head = id.slot;
        let (hash, index_pos) = (e.hash, e.index_pos);
        if e.selectors != 0 {
            self.cbp_live -= usize::from(e.can_be_prefix());
            self.mbf_live -= usize::from(e.must_be_fresh());
        }
        // The timer keeps running (see `timers`).
        self.index.remove_pos(hash, index_pos);
        true
    }

    /// Advances time to `now` (ns) and returns the next entry that expired, if any; the
    /// caller handles it (e.g. records nonces in the dead-nonce list) and then erases it.
    pub fn next_expired(&mut self, now: u64) -> Option<PitId> {
        self.timers.advance(now / TICK_NS);
        while let Some(slot) = self.timers.pop_expired() {
            // An erased entry's timer fires too: skip it.
            if let Some(e) = self.entries.get(slot as usize)
                && e.generation & 1 == 1
            {
                self.counters.expired += 1;
                return Some(PitId {
                    slot,
                    generation: e.generation,
                });
            }
        }
        None
    }

    /// The token naming entry `id`.
    #[inline]
    pub fn token(&self, id: PitId) -> PitToken {
        let mut t = [0u8; PIT_TOKEN_LEN];
        t[0] = self.shard;
        t[1..4].copy_from_slice(&id.slot.to_be_bytes()[1..]);
        t[4..6].copy_from_slice(&(id.generation >> 1).to_be_bytes()[2..]);
        t
    }

    /// The live entry a token of ours names; `None` for other shards', foreign or stale
    /// tokens.
    pub fn by_token(&self, token: &[u8]) -> Option<PitId> {
        let t: &PitToken = token.try_into().ok()?;
        if t[0] != self.shard {
            return None;
        }
        let slot = u32::from_be_bytes([0, t[1], t[2], t[3]]);
        let e = self.entries.get(slot as usize)?;
        // Live (odd) and the same generation in the token's 16 bits.
        let generation = u32::from_be_bytes([0, 0, t[4], t[5]]) << 1 | 1;
        (e.generation & 0x1_FFFF == generation).then_some(PitId {
            slot,
            generation: e.generation,
        })
    }
}

/// [`Pit::free_head`] and [`PitEntry::next_free`] when no slot follows: past every slot
/// (the capacity is at most [`MAX_PIT_CAPACITY`]).
const NO_SLOT: u32 = u32::MAX;

/// (Re)starts `timers`' timer of `slot` for `expiry` (ns), rounded up to the next tick: an
/// entry never expires early. (A function of the wheel alone, so that an insertion can call it
/// while it holds the entry.)
#[inline]
fn schedule(timers: &mut TimerWheel, slot: u32, expiry: u64) {
    // `div_ceil` without its remainder test; saturating only ~584 years from the epoch.
    let tick = expiry.saturating_add(TICK_NS - 1) / TICK_NS;
    timers.schedule(slot, tick);
}

/// Granularity of PIT expiry: 1 ms (InterestLifetime is in milliseconds).
pub const TICK_NS: u64 = 1_000_000;

#[cfg(test)]
mod tests {
    use super::*;
    use ndx_codec::NameBuf;

    fn n(s: &str) -> NameBuf {
        NameBuf::from_uri(s).unwrap()
    }

    /// An entry is whole lines, and a Data's prefetch of it (`prefetch_token`, all its lines)
    /// covers its name and first records: no allocation is reached through it for a usual
    /// name with one downstream and one upstream.
    #[test]
    fn entries_are_whole_lines_holding_a_usual_name_and_first_records() {
        assert_eq!(align_of::<PitEntry>(), 64);
        assert_eq!(size_of::<PitEntry>() % 64, 0);
        assert!(size_of::<PitEntry>() <= 5 * 64, "{}", size_of::<PitEntry>());
        let mut pit = Pit::new(1, 4, 0);
        let name = n("/net/site1/host77/video/obj12345/seg=7");
        let id = pit
            .insert(7, &name.as_name(), false, false, 1_000_000)
            .unwrap();
        let e = pit.get_mut(id).unwrap();
        e.in_records.push(InRecord::default());
        e.out_records.push(OutRecord::default());
        assert_eq!(e.name_bytes(), name.as_name().as_bytes());
        let at =
            e as *const PitEntry as usize..e as *const PitEntry as usize + size_of::<PitEntry>();
        for inner in [
            e.name_bytes().as_ptr() as usize,
            e.in_records.as_ptr() as usize,
            e.out_records.as_ptr() as usize,
        ] {
            assert!(at.contains(&inner), "kept out of the entry");
        }
        // A second downstream moves the in-records to the heap; the name past the inline
        // room is kept there too, and both read back whole.
        let e = pit.get_mut(id).unwrap();
        let second = InRecord {
            face: FaceId(9),
            ..InRecord::default()
        };
        e.in_records.push(second);
        assert_eq!(e.in_records.len(), 2);
        assert_eq!(e.in_records[1], second);
        let long = n(&format!("/{}", "a".repeat(PIT_NAME_INLINE + 10)));
        let id2 = pit
            .insert(8, &long.as_name(), false, false, 1_000_000)
            .unwrap();
        assert_eq!(
            pit.get(id2).unwrap().name_bytes(),
            long.as_name().as_bytes()
        );
    }

    #[test]
    fn selectors_make_separate_entries_and_tokens_find_them() {
        let mut pit = Pit::new(3, 8, 0);
        let name = n("/a/b");
        let h = 42;
        let plain = pit
            .insert(
                pit_key(h, false, false),
                &name.as_name(),
                false,
                false,
                10_000_000,
            )
            .unwrap();
        assert_eq!(
            pit.find(pit_key(h, true, false), &name.as_name(), true, false),
            None
        );
        let cbp = pit
            .insert(
                pit_key(h, true, false),
                &name.as_name(),
                true,
                false,
                10_000_000,
            )
            .unwrap();
        assert_ne!(plain, cbp);
        assert_eq!(
            pit.find(pit_key(h, false, false), &name.as_name(), false, false),
            Some(plain)
        );
        let tok = pit.token(cbp);
        assert_eq!(token_shard(&tok), Some(3));
        assert_eq!(pit.by_token(&tok), Some(cbp));
        // Another shard's token, a short token and a stale token are refused.
        let mut other = tok;
        other[0] = 4;
        assert_eq!(pit.by_token(&other), None);
        assert_eq!(pit.by_token(&tok[..5]), None);
        assert!(pit.erase(cbp));
        assert_eq!(pit.by_token(&tok), None);
        assert!(!pit.erase(cbp));
        let again = pit
            .insert(pit_key(h, true, false), &name.as_name(), true, false, 1)
            .unwrap();
        assert_eq!(pit.by_token(&tok), None, "reused slot, new generation");
        assert_eq!(pit.by_token(&pit.token(again)), Some(again));
    }

    #[test]
    fn full_pit_refuses_and_counts() {
        let mut pit = Pit::new(0, 2, 0);
        for i in 0..2u8 {
            let name = n(&format!("/{i}"));
            pit.insert(u64::from(i), &name.as_name(), false, false, 5)
                .unwrap();
        }
        let name = n("/x");
        assert_eq!(
            pit.insert(9, &name.as_name(), false, false, 5),
            Err(PitFull(2))
        );
        assert_eq!(pit.counters().full, 1);
    }

    #[test]
    fn an_erased_entrys_timer_neither_fires_nor_disturbs_its_slots_next_entry() {
        let mut pit = Pit::new(0, 1, 0);
        let (a, b, c) = (n("/a"), n("/b"), n("/c"));
        let ia = pit
            .insert(1, &a.as_name(), false, false, 5_000_000)
            .unwrap();
        assert!(pit.erase(ia));
        // The freed slot's timer (5 ms) still runs; reused with a later expiry, it moves.
        let ib = pit
            .insert(2, &b.as_name(), false, false, 90_000_000)
            .unwrap();
        assert_eq!(ib.slot, ia.slot);
        assert_eq!(pit.next_expired(10_000_000), None);
        assert_eq!(pit.next_expired(89_999_999), None);
        assert_eq!(pit.next_expired(90_000_000), Some(ib));
        assert!(pit.erase(ib));
        // Reused with an earlier expiry than the erased entry's, it fires at its own.
        let ic = pit.insert(3, &c.as_name(), true, true, 95_000_000).unwrap();
        assert!(pit.erase(ic));
        let id = pit
            .insert(4, &a.as_name(), false, false, 91_000_000)
            .unwrap();
        assert_eq!(pit.next_expired(90_999_999), None);
        assert_eq!(pit.next_expired(91_000_000), Some(id));
        assert!(pit.erase(id));
        // Left free, the erased entry's timer fires unseen.
        assert_eq!(pit.next_expired(200_000_000), None);
        assert_eq!(pit.counters().expired, 2);
        assert!(!pit.has_can_be_prefix() && !pit.has_must_be_fresh());
        // An erased entry whose timer already fired (expired, not yet popped) is skipped too.
        let ie = pit
            .insert(5, &b.as_name(), false, false, 201_000_000)
            .unwrap();
        pit.timers.advance(205);
        assert!(pit.erase(ie));
        assert_eq!(pit.next_expired(210_000_000), None);
        assert!(pit.is_empty());
    }

    #[test]
    fn crafted_tokens_naming_free_slots_are_refused() {
        let mut pit = Pit::new(2, 8, 0);
        let name = n("/x");
        let id = pit.insert(1, &name.as_name(), false, false, 1).unwrap();
        let token = pit.token(id);
        assert!(pit.erase(id));
        // Every reuse count of the erased slot and of a never-used one (slot 5).
        for generation in 0..4u8 {
            let mut t = token;
            t[5] = generation;
            assert_eq!(pit.by_token(&t), None, "erased slot, {t:?}");
            let t = [2, 0, 0, 5, 0, generation];
            assert_eq!(pit.by_token(&t), None, "never-used slot, {t:?}");
        }
    }

    #[test]
    fn stale_ids_and_tokens_after_many_reuses() {
        let mut pit = Pit::new(7, 1, 0);
        let name = n("/x");
        let first = pit.insert(1, &name.as_name(), false, false, 1).unwrap();
        let first_token = pit.token(first);
        assert!(pit.erase(first));
        let mut last = first;
        for i in 1..=70_000u32 {
            last = pit.insert(1, &name.as_name(), false, false, 1).unwrap();
            assert!(pit.get(first).is_none());
            if i < 65_536 {
                assert_eq!(pit.by_token(&first_token), None, "reuse {i}");
            } else if i == 65_536 {
                // The token's 16 bits of reuse count wrap: the name check takes over.
                assert_eq!(pit.by_token(&first_token), Some(last));
            }
            assert_eq!(pit.by_token(&pit.token(last)), Some(last));
            assert!(pit.erase(last));
            assert!(pit.get(last).is_none() && pit.by_token(&pit.token(last)).is_none());
        }
        assert_ne!(first, last);
    }

    proptest::proptest! {
        /// `InlineVec` holds what a `Vec` would under any sequence of pushes, whole
        /// replacements (short and long), clears and in-place edits, across the move from
        /// its inline items to the heap and back.
        #[test]
        fn inline_vec_matches_a_vec(ops in proptest::collection::vec((0u8..4, 0usize..12, proptest::prelude::any::<u8>()), 1..120)) {
            let mut v: InlineVec<u8, 3> = InlineVec::new();
            let mut model: Vec<u8> = Vec::new();
            for (op, len, x) in ops {
                match op {
                    0 => {
                        v.push(x);
                        model.push(x);
                    }
                    1 => {
                        let items: Vec<u8> = (0..len as u8).map(|i| i.wrapping_add(x)).collect();
                        v.set(&items);
                        model = items;
                    }
                    2 if len < 2 => {
                        v.clear();
                        model.clear();
                    }
                    _ => {
                        for (a, b) in (&mut v).into_iter().zip(model.iter_mut()) {
                            *a ^= x;
                            *b ^= x;
                        }
                    }
                }
                proptest::prop_assert_eq!(&*v, &model[..]);
                proptest::prop_assert_eq!(v.is_inline(), model.len() <= 3);
                proptest::prop_assert_eq!((&v).into_iter().count(), model.len());
            }
        }

        /// The free list threaded through the slab hands out slots exactly as a stack of free
        /// slot numbers (slot 0 first) would: the most recently erased first, `PitFull` when
        /// none is left, and an erased slot's entry is gone while the others stay.
        #[test]
        fn free_slots_are_reused_last_erased_first(ops in proptest::collection::vec((proptest::prelude::any::<bool>(), 0usize..64), 1..200)) {
            const CAP: usize = 6;
            let mut pit = Pit::new(1, CAP, 0);
            let mut stack: Vec<u32> = (0..CAP as u32).rev().collect();
            let mut live: Vec<PitId> = Vec::new();
            let name = n("/x");
            for (i, (insert, k)) in ops.into_iter().enumerate() {
                if insert {
                    let got = pit.insert(i as u64, &name.as_name(), false, false, 1_000_000);
                    match stack.pop() {
                        Some(slot) => {
                            let id = got.unwrap();
                            proptest::prop_assert_eq!(id.slot, slot);
                            live.push(id);
                        }
                        None => proptest::prop_assert_eq!(got, Err(PitFull(CAP))),
                    }
                } else if !live.is_empty() {
                    let id = live.swap_remove(k % live.len());
                    proptest::prop_assert!(pit.erase(id));
                    proptest::prop_assert!(!pit.erase(id));
                    stack.push(id.slot);
                }
                proptest::prop_assert_eq!(pit.len(), live.len());
                for &id in &live {
                    proptest::prop_assert!(pit.get(id).is_some());
                }
            }
        }
    }

    #[test]
    fn expiry_by_timer_never_early() {
        let mut pit = Pit::new(0, 4, 0);
        let (a, b) = (n("/a"), n("/b"));
        let ia = pit
            .insert(1, &a.as_name(), false, false, 4_000_000_000)
            .unwrap();
        let ib = pit
            .insert(2, &b.as_name(), false, false, 1_500_000)
            .unwrap();
        assert_eq!(pit.next_expired(1_499_999), None);
        assert_eq!(pit.next_expired(2_000_000), Some(ib));
        pit.erase(ib);
        // Extending a's lifetime moves its timer.
        pit.set_expiry(ia, 9_000_000_000);
        assert_eq!(pit.next_expired(5_000_000_000), None);
        assert_eq!(pit.next_expired(9_000_000_000), Some(ia));
        assert_eq!(pit.counters().expired, 2);
    }
}
