//! The content store's DRAM level (L1) of one shard: a slab of fixed-size slots holding Data
//! packets ready to transmit, indexed by name hash, with a replacement policy (FIFO, LRU or
//! CLOCK) and an admission policy (always, probabilistic, second hit).
//!
//! # CanBePrefix
//! Lookups are by exact name (hash tables have no order). A CanBePrefix Interest is served by
//! an *indirect* entry: when a Data satisfies a CanBePrefix PIT entry, the forwarder inserts it
//! with [`Cs::insert`]'s `prefix` argument, which also indexes the Data under that prefix
//! (NDN-DPDK's design). Later CanBePrefix Interests for the same prefix then hit.
//! An Interest whose last component is an implicit digest is looked up by the name without
//! it and the digest checked against the stored packet.

use ndx_codec::{ComponentKind, Data, Name};

use crate::hash::HashKey;
use crate::index::{HashIndex, HomeProbe};
use crate::lent::Lent;

/// Replacement policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    /// Evict the oldest insertion.
    Fifo,
    /// Evict the least recently hit or inserted.
    Lru,
    /// Second chance: a hit sets a reference bit; the hand clears bits and evicts the first
    /// unreferenced slot.
    Clock,
}

/// Admission policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Admission {
    /// Admit every Data.
    Always,
    /// Admit with probability `p` (leave-copy-probabilistically, LCP).
    Probabilistic(f64),
    /// Admit a name the second time it is offered within the last `window` offers.
    SecondHit {
        /// How many recent first offers are remembered.
        window: usize,
    },
}

/// CS configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CsConfig {
    /// Number of slots.
    pub capacity: usize,
    /// Bytes per slot; a larger Data is not cached (counted as `too_large`).
    pub slot_size: usize,
    /// Replacement policy.
    pub replacement: Replacement,
    /// Admission policy.
    pub admission: Admission,
    /// Seed of the probabilistic admission's generator (deterministic for tests).
    pub seed: u64,
}

impl Default for CsConfig {
    fn default() -> Self {
        Self {
            capacity: 1 << 16,
            slot_size: 9000,
            replacement: Replacement::Lru,
            admission: Admission::Always,
            seed: 0x5EED,
        }
    }
}

/// CS counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CsCounters {
    /// Lookups that found a usable Data.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Data stored.
    pub insertions: u64,
    /// Data evicted to make room.
    pub evictions: u64,
    /// Data refused by the admission policy.
    pub rejected: u64,
    /// Data larger than a slot.
    pub too_large: u64,
    /// Data stored in the receive frame they arrived in, which the CS kept instead of
    /// copying the Data into a slot ([`Cs::insert_lent`]).
    pub kept: u64,
}

const NIL: u32 = u32::MAX;

/// [`Meta::src`] of a Data copied into the slot's bytes in the slab.
const SLAB: u32 = u32::MAX;
/// [`Meta::src`] of a Data in a frame the CS holds (`Cs::kept`, at the slot's index).
const HELD: u32 = u32::MAX - 1;

/// [`Meta::name_pos`] or [`Meta::alias_pos`] of an entry the index does not hold: out of
/// the index's range, so [`HashIndex::remove_pos`] ignores it.
const NO_POS: u32 = u32::MAX;

const _: () = assert!(std::mem::size_of::<Meta>() == 64);

/// One slot's metadata: exactly one cache line, aligned to one (a lookup's probe reads a
/// single line, and `prefetch_entries` fetches all of it).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Meta {
    live: bool,
    hash: u64,
    /// Hash of the extra key (a CanBePrefix prefix) this slot is also indexed under, if
    /// `alias_len` is not [`NO_ALIAS`] ([`Meta::alias`]).
    alias_hash: u64,
    /// Length in bytes of the alias prefix, [`NO_ALIAS`] when there is none (two fields
    /// rather than an `Option`, whose tag would push the record past one line).
    alias_len: u32,
    /// Where the index holds the entry under `hash` ([`HashIndex::remove_pos`] takes it out
    /// without searching), [`NO_POS`] if nowhere.
    name_pos: u32,
    /// Where the index holds the entry under the alias, [`NO_POS`] if there is none.
    alias_pos: u32,
    len: u32,
    name_off: u32,
    name_len: u32,
    fresh_until: u64,
    prev: u32,
    next: u32,
    /// Where the Data's bytes are: [`SLAB`], [`HELD`], or the number of the lent frame
    /// they are in, until the caller hands that frame over ([`Cs::return_lent`]): a
    /// *pending* slot, which lookups pass over (its bytes are out of reach).
    src: u32,
    /// Where the Data starts in its frame ([`HELD`] and pending slots).
    off: u16,
    referenced: bool,
}

/// [`Meta::alias_len`] of a slot with no alias.
const NO_ALIAS: u32 = u32::MAX;

impl Meta {
    /// Whether the Data's bytes are within the store's reach (not pending).
    #[inline(always)]
    fn readable(&self) -> bool {
        self.src >= HELD
    }

    /// The CanBePrefix prefix this slot is also indexed under, by hash and length.
    #[inline(always)]
    fn alias(&self) -> Option<(u64, u32)> {
        (self.alias_len != NO_ALIAS).then_some((self.alias_hash, self.alias_len))
    }
}

/// A cache hit: the stored Data packet.
#[derive(Debug, Clone, Copy)]
pub struct CsHit<'c> {
    /// The Data packet's bytes.
    pub data: &'c [u8],
    /// Slot number (stable until evicted).
    pub slot: u32,
}

/// The L1 content store of one shard, which may keep receive frames of type `F`.
///
/// # Kept frames
/// A Data is usually copied into a slot of the slab. A caller that receives into frames it
/// can part with (the UMEM frames of an AF_XDP socket; any owned buffer) may instead let
/// the store keep the frame a Data arrived in (`F`, given to
/// [`with_frames`](Cs::with_frames)): [`insert_lent`](Self::insert_lent) indexes the Data
/// at once but marks its slot *pending*, since the frame is still the caller's (it is
/// sending the Data down from it); [`return_lent`](Self::return_lent) then hands every
/// lent frame back, the store taking over those it chose, and the slots become readable. A
/// frame the store lets go (its Data evicted or replaced) waits in
/// [`released`](Self::released) for the caller to recycle. Seeds 001 and NDN-DPDK keep the
/// packet buffer the same way: a worst-case Data then costs no copy of its bytes and no
/// slab lines brought in to receive them.
///
/// The store is generic over its frame type rather than holding frames behind a trait
/// object: the frames it hands back are of the type it was made with, with no downcast
/// that could come back empty. A store that copies every Data ([`Cs::new`]) has the frame
/// type [`NoFrame`], which has no values.
///
/// ```
/// use ndx_core::{Cs, CsConfig, HashKey, Lent};
/// let mut cs = Cs::with_frames::<Vec<u8>>(CsConfig { capacity: 4, ..CsConfig::default() },
///     HashKey::new(1, 2));
/// let mut lent = Lent::new();
/// // Nothing was lent: returning hands nothing back and the store takes nothing.
/// cs.return_lent(&mut lent, |_: u32, _| None);
/// let released: Vec<Vec<u8>> = cs.released().collect(); // typed: no turbofish to get wrong
/// assert!(released.is_empty());
/// ```
///
/// A store of one frame type cannot take or hand back frames of another:
///
/// ```compile_fail
/// use ndx_core::{Cs, CsConfig, HashKey, Lent};
/// let mut cs = Cs::with_frames::<Vec<u8>>(CsConfig::default(), HashKey::new(1, 2));
/// let mut lent: Lent<u32> = Lent::new();
/// cs.return_lent(&mut lent, |_, _| Some(String::from("another type")));
/// ```
///
/// ```compile_fail
/// use ndx_core::{Cs, CsConfig, HashKey};
/// let mut cs = Cs::with_frames::<Vec<u8>>(CsConfig::default(), HashKey::new(1, 2));
/// let back: Vec<String> = cs.released().collect();
/// ```
#[derive(Debug)]
pub struct Cs<F = NoFrame> {
    cfg: CsConfig,
    key: HashKey,
    slab: Vec<u8>,
    /// The frames of [`HELD`] slots, and those let go (no slots for a store that keeps none).
    kept: KeptFrames<F>,
    /// Whether the store may keep frames ([`Cs::with_frames`]).
    keeps: bool,
    /// Slots waiting for their frame: (lent frame number, slot).
    pending: Vec<(u32, u32)>,
    /// Whether the last insertion kept its frame: the next victim's slab lines are then not
    /// prefetched for a copy.
    keeping: bool,
    meta: Vec<Meta>,
    index: HashIndex,
    free: Vec<u32>,
    /// Recency list head (most recent) and tail (eviction end) for FIFO/LRU.
    head: u32,
    tail: u32,
    hand: u32,
    ghosts: Vec<u64>,
    ghost_pos: usize,
    ghost_index: HashIndex,
    rng: u64,
    counters: CsCounters,
    /// Whether evicted Data are copied out for the L2 ([`Cs::set_eviction_log`]).
    log_evictions: bool,
    evicted_bytes: Vec<u8>,
    /// (name hash, the Data's range in `evicted_bytes`, its Name's TLV-VALUE within it).
    evicted: Vec<(u64, std::ops::Range<usize>, (u32, u32))>,
}

/// A receive frame a store may keep (see [`Cs::with_frames`]): any owned buffer that can
/// move to the shard's thread; for the data path, a handle on one UMEM frame.
pub trait Frame: AsRef<[u8]> + Send + std::fmt::Debug + 'static {}

impl<F: AsRef<[u8]> + Send + std::fmt::Debug + 'static> Frame for F {}

/// The frame type of a store that keeps no frames ([`Cs::new`], `Shard::new`): it has no
/// values, so such a store can neither be handed a frame nor hand one back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFrame {}

impl AsRef<[u8]> for NoFrame {
    fn as_ref(&self) -> &[u8] {
        match *self {}
    }
}

/// The frames of type `F` a store keeps, by slot, and those it let go.
#[derive(Debug)]
struct KeptFrames<F> {
    slots: Vec<Option<F>>,
    /// Slots holding a frame.
    held: usize,
    released: Vec<F>,
}

impl<F: Frame> KeptFrames<F> {
    /// Puts `f` in `slot`.
    fn hold(&mut self, slot: u32, f: F) {
        if let Some(k) = self.slots.get_mut(slot as usize) {
            self.held += usize::from(k.is_none());
            if let Some(old) = k.replace(f) {
                self.released.push(old);
            }
        }
    }

    /// The frame of `slot`.
    #[inline(always)]
    fn frame(&self, slot: u32) -> Option<&[u8]> {
        Some(self.slots.get(slot as usize)?.as_ref()?.as_ref())
    }

    /// Moves `slot`'s frame, if any, to the released ones.
    #[inline(always)]
    fn let_go(&mut self, slot: u32) {
        if let Some(f) = self.slots.get_mut(slot as usize).and_then(Option::take) {
            self.held -= 1;
            self.released.push(f);
        }
    }

    /// Prefetches `slot`'s handle.
    #[inline(always)]
    fn prefetch(&self, slot: u32) {
        if let Some(k) = self.slots.get(slot as usize) {
            ndx_mem::prefetch(k);
        }
    }
}

impl Cs {
    /// A CS with all its memory allocated now, which copies every Data it stores (see
    /// [`with_frames`](Self::with_frames)).
    pub fn new(cfg: CsConfig, key: HashKey) -> Self {
        Cs::build(cfg, key, false)
    }

    /// [`new`](Self::new), for a store that may keep receive frames of type `F` (see
    /// [`insert_lent`](Cs::insert_lent)).
    pub fn with_frames<F: Frame>(cfg: CsConfig, key: HashKey) -> Cs<F> {
        Cs::build(cfg, key, true)
    }

    /// [`new`](Self::new) with the frame type `F`, copying every Data nonetheless: for a
    /// caller that turns keeping off but has one type for both cases.
    pub fn copying<F: Frame>(cfg: CsConfig, key: HashKey) -> Cs<F> {
        Cs::build(cfg, key, false)
    }
}

impl<F: Frame> Cs<F> {
    /// A CS with all its memory allocated now, keeping frames when `keeps`.
    fn build(cfg: CsConfig, key: HashKey, keeps: bool) -> Self {
        let capacity = cfg.capacity.clamp(1, NIL as usize - 1);
        let window = match cfg.admission {
            Admission::SecondHit { window } => window.max(1),
            _ => 1,
        };
        Self {
            cfg: CsConfig { capacity, ..cfg },
            key,
            slab: vec![0; capacity * cfg.slot_size],
            kept: KeptFrames {
                slots: if keeps {
                    std::iter::repeat_with(|| None).take(capacity).collect()
                } else {
                    Vec::new()
                },
                held: 0,
                released: Vec::new(),
            },
            keeps,
            pending: Vec::new(),
            keeping: false,
            meta: vec![
                Meta {
                    live: false,
                    hash: 0,
                    alias_hash: 0,
                    alias_len: NO_ALIAS,
                    name_pos: NO_POS,
                    alias_pos: NO_POS,
                    len: 0,
                    name_off: 0,
                    name_len: 0,
                    fresh_until: 0,
                    prev: NIL,
                    next: NIL,
                    src: SLAB,
                    off: 0,
                    referenced: false,
                };
                capacity
            ],
            // Each slot may be indexed twice (its name and one CanBePrefix alias).
            index: HashIndex::new(capacity * 2),
            free: (0..capacity as u32).rev().collect(),
            head: NIL,
            tail: NIL,
            hand: 0,
            ghosts: vec![0; window],
            ghost_pos: 0,
            ghost_index: HashIndex::new(window),
            rng: cfg.seed | 1,
            counters: CsCounters::default(),
            log_evictions: false,
            evicted_bytes: Vec::new(),
            evicted: Vec::new(),
        }
    }

    /// Maps every page of the slab now: one byte per 4 KiB page is read and written back.
    ///
    /// The slab is allocated zeroed, so the kernel maps its pages only when a Data is first
    /// stored in them: until the store has filled once, inserts would take page faults (a
    /// 2 MiB zeroing each with transparent huge pages) in the forwarding path. The router's
    /// shard worker calls this on its own thread before its loop starts, which also places the
    /// memory on that thread's NUMA node. Harmless on a store in use (it writes back what it
    /// reads). Returns the slab's bytes.
    pub fn prefault(&mut self) -> usize {
        const PAGE: usize = 4096;
        for off in (0..self.slab.len()).step_by(PAGE) {
            // `black_box` keeps the store: written back as an opaque value, it is not elided
            // against the allocation being known to be zero.
            let b = self.slab[off];
            self.slab[off] = std::hint::black_box(b);
        }
        self.slab.len()
    }

    /// Whether the store may keep receive frames ([`with_frames`](Cs::with_frames)).
    pub fn keeps_frames(&self) -> bool {
        self.keeps
    }

    /// Counters.
    pub fn counters(&self) -> CsCounters {
        self.counters
    }

    /// Stored Data.
    pub fn len(&self) -> usize {
        self.cfg.capacity - self.free.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory per slot (payload + metadata + index).
    pub fn bytes_per_entry(&self) -> usize {
        self.cfg.slot_size + size_of::<Meta>() + self.index.memory_bytes() / self.cfg.capacity
    }

    fn slot_bytes(&self, slot: u32) -> &[u8] {
        self.meta
            .get(slot as usize)
            .map_or(&[], |m| self.stored(slot, m))
    }

    /// The Data stored in `slot` (metadata `m`): in the slab, or in a kept frame; empty for
    /// a pending slot.
    #[inline(always)]
    fn stored(&self, slot: u32, m: &Meta) -> &[u8] {
        let len = m.len as usize;
        if m.src == SLAB {
            let start = slot as usize * self.cfg.slot_size;
            return self.slab.get(start..start + len).unwrap_or(&[]);
        }
        self.held(slot, m).unwrap_or(&[])
    }

    /// The Data of a [`HELD`] slot (the router's usual case: its CS keeps the receive frames).
    #[inline]
    fn held(&self, slot: u32, m: &Meta) -> Option<&[u8]> {
        if m.src != HELD {
            return None;
        }
        let off = usize::from(m.off);
        let frame = self.kept.frame(slot)?;
        frame.get(off..off + m.len as usize)
    }

    /// Whether the name of the Data in `slot` (metadata `m`) starts with `bytes`: the stored
    /// bytes from the name's first on, so no end offset to compute and check.
    #[inline(always)]
    fn name_starts_with(&self, slot: u32, m: &Meta, bytes: &[u8]) -> bool {
        bytes.len() <= m.name_len as usize
            && self
                .stored(slot, m)
                .get(m.name_off as usize..)
                .is_some_and(|s| s.starts_with(bytes))
    }

    /// Prefetches the index bucket of `hash` (see the shard's burst path).
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        self.index.prefetch(hash);
    }

    /// Whether `hash`'s home bucket holds an entry with its tag (a hit is likely).
    #[inline]
    pub fn may_hold(&self, hash: u64) -> bool {
        self.index.home_candidates(hash).next().is_some()
    }

    /// Prefetches the metadata and first bytes of the slots `hash`'s home bucket points to
    /// (reads the bucket: call after [`prefetch`](Self::prefetch) has brought it in).
    #[inline]
    pub fn prefetch_entries(&self, hash: u64) {
        for slot in self.index.home_candidates(hash) {
            if let Some(m) = self.meta.get(slot as usize) {
                ndx_mem::prefetch(m);
            }
            // The slab's line: a kept frame's address is in the metadata, not yet at hand.
            if let Some(b) = self.slab.get(slot as usize * self.cfg.slot_size) {
                ndx_mem::prefetch(b);
            }
        }
    }

    /// Whether a hit rewrites other slots' metadata (LRU's recency list).
    #[inline]
    pub fn relinks_on_hit(&self) -> bool {
        self.cfg.replacement == Replacement::Lru
    }

    /// The last level of a likely hit's prefetch (reads the slots' metadata: call after
    /// [`prefetch_entries`](Self::prefetch_entries) has brought it in), for each slot `hash`'s
    /// home bucket points to: with LRU, the two recency-list neighbours a hit relinks (two
    /// more random lines); with `whole_data`, the rest of the stored Data (a hit copies it
    /// out; the first line is already there).
    #[inline]
    pub fn prefetch_hit(&self, hash: u64, whole_data: bool) {
        let lru = self.relinks_on_hit();
        if !lru && !whole_data {
            return;
        }
        for slot in self.index.home_candidates(hash) {
            let Some(m) = self.meta.get(slot as usize) else {
                continue;
            };
            if lru {
                for n in [m.prev, m.next] {
                    if let Some(x) = self.meta.get(n as usize) {
                        ndx_mem::prefetch(x);
                    }
                }
            }
            if whole_data {
                self.prefetch_stored(slot, m);
            }
        }
    }

    /// Prefetches what a hit on `slot` (whose metadata is `m`) reads of its stored Data
    /// beyond what [`prefetch_entries`](Self::prefetch_entries) brought in: a slab slot's
    /// bytes from its second line on; a kept frame's Data whole, its first line (the name a
    /// hit compares) included, since the frame's address was in the metadata, not at hand
    /// then.
    #[inline]
    fn prefetch_stored(&self, slot: u32, m: &Meta) {
        if m.src != SLAB {
            if let Some(d) = self.held(slot, m)
                && let Some(b) = d.first()
            {
                ndx_mem::prefetch_lines(b, d.len());
            }
            return;
        }
        self.prefetch_slab(slot, m.len as usize, 1);
    }

    /// Prefetches `len` bytes of `slot`'s bytes in the slab from its 64-byte line
    /// `first_line` on.
    #[inline]
    fn prefetch_slab(&self, slot: u32, len: usize, first_line: usize) {
        // In range by construction (a slot below the capacity, a Data no larger than a
        // slot), and a prefetch past it would be a wasted hint, not a fault: only the first
        // byte is checked.
        let first = slot as usize * self.cfg.slot_size + first_line * 64;
        if let Some(b) = self.slab.get(first) {
            ndx_mem::prefetch_lines(b, len.saturating_sub(first_line * 64));
        }
    }

    /// Looks up a Data for an Interest named `name` (its hash is `name_hash`).
    ///
    /// `can_be_prefix` also accepts a Data indexed under `name` as a prefix; `must_be_fresh`
    /// refuses Data whose FreshnessPeriod has run out by `now` (ns).
    ///
    /// Inlined into the caller: a miss that the index's home bucket alone proves (no entry
    /// with the name's tag there, none overflowed past it, and no implicit digest to try)
    /// costs a handful of instructions; anything else goes on to the full probe.
    #[inline]
    pub fn lookup(
        &mut self,
        now: u64,
        name: &Name<'_>,
        name_hash: u64,
        can_be_prefix: bool,
        must_be_fresh: bool,
    ) -> Option<CsHit<'_>> {
        // CanBePrefix aliases are indexed under the Interest name's hash too, so the home
        // bucket decides for them as well.
        let home = self.index.home_probe(name_hash);
        if home.is_empty() && !may_end_with_digest(name.as_bytes()) {
            self.counters.misses += 1;
            return None;
        }
        let selectors = u32::from(can_be_prefix) | u32::from(must_be_fresh) << 1;
        self.lookup_probed(now, name, name_hash, home.with_flags(selectors))
    }

    /// [`lookup`](Self::lookup) past its home-bucket test: probes the index from `home`
    /// (then by the implicit digest), counts the outcome and, on a hit, updates recency.
    /// CanBePrefix and MustBeFresh come as `home`'s flags (bits 0 and 1): every argument then
    /// travels in a register.
    #[inline(never)]
    fn lookup_probed(
        &mut self,
        now: u64,
        name: &Name<'_>,
        name_hash: u64,
        home: HomeProbe,
    ) -> Option<CsHit<'_>> {
        let (can_be_prefix, must_be_fresh) = (home.flags() & 1 != 0, home.flags() & 2 != 0);
        let bytes = name.as_bytes();
        let slot = match self.find_from(now, bytes, name_hash, home, can_be_prefix, must_be_fresh) {
            Some(slot) => Some(slot),
            None if may_end_with_digest(bytes) => self.find_by_digest(now, name, must_be_fresh),
            None => None,
        };
        match slot {
            Some(slot) => {
                self.counters.hits += 1;
                // The Data's place, read before `mark_used` writes the metadata.
                let m = self.meta.get(slot as usize).copied();
                self.mark_used(slot);
                let data = match m {
                    // In range by construction (a slot below the capacity, a Data no larger
                    // than a slot): indexing, unlike a checked `get`, needs no select of a
                    // fallback.
                    Some(m) if m.src == SLAB => {
                        &self.slab[slot as usize * self.cfg.slot_size..][..m.len as usize]
                    }
                    Some(m) => self.held(slot, &m).unwrap_or(&[]),
                    None => &[],
                };
                Some(CsHit { data, slot })
            }
            None => {
                self.counters.misses += 1;
                None
            }
        }
    }

    /// Whether a live Data named exactly `name` (hash `name_hash`) is stored; no counters,
    /// no recency update.
    pub fn holds(&self, name: &Name<'_>, name_hash: u64) -> bool {
        self.find(0, name, name_hash, false, false).is_some()
    }

    /// The slot of a live Data that a lookup of `name` (hash `hash`) accepts (see
    /// [`matches`](Self::matches)).
    #[inline(always)]
    fn find(&self, now: u64, name: &Name<'_>, hash: u64, cbp: bool, mbf: bool) -> Option<u32> {
        let home = self.index.home_probe(hash);
        self.find_from(now, name.as_bytes(), hash, home, cbp, mbf)
    }

    /// [`find`](Self::find) of the name `bytes` from `home`, its hash's
    /// [`HomeProbe`].
    #[inline(always)]
    fn find_from(
        &self,
        now: u64,
        bytes: &[u8],
        hash: u64,
        home: HomeProbe,
        cbp: bool,
        mbf: bool,
    ) -> Option<u32> {
        let mut found = None;
        self.index.find_from(
            hash,
            home,
            #[inline(always)]
            |slot| {
                let hit = self.matches(slot, now, bytes, hash, cbp, mbf);
                if hit {
                    found = Some(slot);
                }
                hit
            },
        );
        found
    }

    /// Whether `slot` holds a live Data for a lookup of the name `bytes` (hash `hash`):
    /// named exactly so or, with `cbp`, indexed under it as an alias; with `mbf`, still
    /// fresh at `now`.
    #[inline(always)]
    fn matches(&self, slot: u32, now: u64, bytes: &[u8], hash: u64, cbp: bool, mbf: bool) -> bool {
        let m = &self.meta[slot as usize];
        // Metadata first (hash, lengths), the stored name (another line) only when it may
        // match.
        if !m.live || !m.readable() || (mbf && now >= m.fresh_until) {
            return false;
        }
        (m.hash == hash
            && m.name_len as usize == bytes.len()
            && self.name_starts_with(slot, m, bytes))
            || (cbp
                && m.alias()
                    .is_some_and(|(h, l)| h == hash && l as usize == bytes.len())
                && self.name_starts_with(slot, m, bytes))
    }

    /// The slot of a Data whose implicit digest `name` ends with (the name without it is
    /// looked up exactly). Out of line: [`lookup`](Self::lookup) calls it only when
    /// [`may_end_with_digest`] holds.
    #[cold]
    #[inline(never)]
    fn find_by_digest(&self, now: u64, name: &Name<'_>, mbf: bool) -> Option<u32> {
        if !may_end_with_digest(name.as_bytes()) {
            return None;
        }
        let Some(ComponentKind::ImplicitDigest(digest)) = name.last().map(|c| c.kind()) else {
            return None;
        };
        let data_name = name.prefix(name.len() - 1);
        let slot = self.find(now, &data_name, self.key.name(&data_name), false, mbf)?;
        let data = Data::decode(self.slot_bytes(slot)).ok()?;
        (data.implicit_digest() == *digest).then_some(slot)
    }

    /// Offers a Data for caching at time `now` (ns); `prefix` (with its hash) additionally
    /// indexes it for CanBePrefix Interests of that prefix. Returns whether it was stored.
    pub fn insert(&mut self, now: u64, data: &Data<'_>, prefix: Option<(&Name<'_>, u64)>) -> bool {
        let hash = self.key.name(&data.name());
        self.insert_hashed(now, data, hash, prefix)
    }

    /// [`insert`](Self::insert) for a caller that already has the keyed hash of the Data's
    /// name (`name_hash`, computed with this CS's key).
    pub fn insert_hashed(
        &mut self,
        now: u64,
        data: &Data<'_>,
        name_hash: u64,
        prefix: Option<(&Name<'_>, u64)>,
    ) -> bool {
        self.store(now, data, name_hash, prefix, None)
    }

    /// [`insert_hashed`](Self::insert_hashed) of a Data that the caller received in a
    /// frame it can part with, lent to the store with the caller's `handle` on it (pushed
    /// onto `lent`), the Data starting at byte `offset` of it. The store may keep the frame
    /// instead of copying the Data: the Data is indexed now, its slot pending (lookups pass
    /// over it) until [`return_lent`](Self::return_lent) hands the frame over. An offset
    /// beyond 16 bits, or a store made with [`Cs::new`], copies the Data instead. Whatever
    /// the outcome, `handle` comes back once through [`return_lent`](Self::return_lent).
    #[expect(
        clippy::too_many_arguments,
        reason = "insert_hashed's, and the lent frame's"
    )]
    pub fn insert_lent<L>(
        &mut self,
        now: u64,
        data: &Data<'_>,
        name_hash: u64,
        prefix: Option<(&Name<'_>, u64)>,
        offset: usize,
        lent: &mut Lent<L>,
        handle: L,
    ) -> bool {
        let frame = lent.push_own(handle);
        self.insert_kept(now, data, name_hash, prefix, frame, offset)
    }

    /// [`insert_lent`](Self::insert_lent) of a Data in lent frame number `frame` (the
    /// shard's numbering, which its `Lent` ledger follows). Inlined into the Data pipeline,
    /// its one caller on the hot path.
    #[inline]
    pub(crate) fn insert_kept(
        &mut self,
        now: u64,
        data: &Data<'_>,
        name_hash: u64,
        prefix: Option<(&Name<'_>, u64)>,
        frame: u32,
        offset: usize,
    ) -> bool {
        let keep = self.keep_at(frame, offset);
        self.store(now, data, name_hash, prefix, keep)
    }

    /// Where [`insert_kept`](Self::insert_kept) keeps a Data in lent frame number `frame` at
    /// byte `offset`: `Some((frame, offset))` when the store keeps frames and both fit, else
    /// `None` (the Data is copied).
    #[inline(always)]
    fn keep_at(&self, frame: u32, offset: usize) -> Option<(u32, u16)> {
        match u16::try_from(offset) {
            Ok(off) if frame < HELD && self.keeps => Some((frame, off)),
            _ => None,
        }
    }

    /// The Data pipeline's insertion: [`insert_kept`](Self::insert_kept) when the Data lies
    /// in lent frame `kept` (its number and the Data's offset in it), else
    /// [`insert_hashed`](Self::insert_hashed). One inlined copy of the insertion for both.
    #[inline(always)]
    pub(crate) fn insert_maybe_kept(
        &mut self,
        now: u64,
        data: &Data<'_>,
        name_hash: u64,
        prefix: Option<(&Name<'_>, u64)>,
        kept: Option<(u32, usize)>,
    ) -> bool {
        let keep = kept.and_then(|(frame, offset)| self.keep_at(frame, offset));
        self.store(now, data, name_hash, prefix, keep)
    }

    /// The insertion: a copy into the slot when `keep` is None, else (lent frame number,
    /// offset) of the frame to keep.
    #[inline(always)]
    fn store(
        &mut self,
        now: u64,
        data: &Data<'_>,
        name_hash: u64,
        prefix: Option<(&Name<'_>, u64)>,
        keep: Option<(u32, u16)>,
    ) -> bool {
        if data.wire().len() > self.cfg.slot_size {
            self.counters.too_large += 1;
            return false;
        }
        let hash = name_hash;
        if !self.admit(hash) {
            self.counters.rejected += 1;
            return false;
        }
        // Replace an older copy of the same name. Usually the name's home bucket alone
        // shows there is none, without the probe loop's set-up.
        if self.index.may_hold(hash) {
            self.remove_copy(data.name().as_bytes(), hash);
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => self.evict(),
        };
        // Read from the Data once the slot is settled: less to keep across the eviction.
        let (wire, name_bytes) = (data.wire(), data.name().as_bytes());
        let name_off = name_bytes.as_ptr() as usize - wire.as_ptr() as usize;
        let fresh_until =
            now.saturating_add(data.freshness_ms().unwrap_or(0).saturating_mul(1_000_000));
        let (alias_hash, alias_len) = match prefix {
            Some((p, h)) => alias_of(data, p, h),
            None => (0, NO_ALIAS),
        };
        // Never at capacity: it has room for every slot's name and alias.
        let name_pos = self.index.insert_pos_within(hash, slot);
        let alias_pos = if alias_len != NO_ALIAS {
            self.index.insert_pos_within(alias_hash, slot)
        } else {
            NO_POS
        };
        // Written whole, already linked at the head of the recency list (`push_front` in one
        // pass).
        let links = self.links();
        let head = *links.head;
        if let Some(m) = links.meta.get_mut(slot as usize) {
            *m = Meta {
                live: true,
                hash,
                alias_hash,
                alias_len,
                name_pos,
                alias_pos,
                len: wire.len() as u32,
                name_off: name_off as u32,
                name_len: name_bytes.len() as u32,
                fresh_until,
                prev: NIL,
                next: head,
                src: keep.map_or(SLAB, |(frame, _)| frame),
                off: keep.map_or(0, |(_, off)| off),
                referenced: false,
            };
        }
        match links.meta.get_mut(head as usize) {
            Some(h) => h.prev = slot,
            None => *links.tail = slot,
        }
        *links.head = slot;
        self.counters.insertions += 1;
        self.keeping = keep.is_some();
        if let Some((frame, _)) = keep {
            self.pending.push((frame, slot));
            return true;
        }
        // The copy last: the bookkeeping before it keeps the store's fields in registers
        // (the copy is an opaque call that could write to them, as far as the compiler
        // knows).
        let start = slot as usize * self.cfg.slot_size;
        self.slab[start..start + wire.len()].copy_from_slice(wire);
        true
    }

    /// Removes the Data named `bytes` (hash `hash`, which the index may hold), if stored: the
    /// probe loop of an insertion, out of line (a new name usually settles at the home
    /// bucket).
    #[inline(never)]
    fn remove_copy(&mut self, bytes: &[u8], hash: u64) {
        let home = self.index.home_probe(hash);
        if let Some(old) = self.find_from(0, bytes, hash, home, false, false) {
            self.remove(old);
        }
    }

    /// Turns on (or off) the eviction log: every Data evicted to make room is then copied
    /// out, with its name hash, until [`drain_evicted`](Self::drain_evicted) hands it over
    /// (the shard writes it to the L2). Off by default: eviction then costs nothing more.
    pub fn set_eviction_log(&mut self, on: bool) {
        self.log_evictions = on;
        if on && self.evicted_bytes.capacity() == 0 {
            self.evicted_bytes.reserve(self.cfg.slot_size);
            self.evicted.reserve(4);
        }
    }

    fn log_eviction(&mut self, slot: u32) {
        let m = &self.meta[slot as usize];
        let (hash, name) = (m.hash, (m.name_off, m.name_len));
        let mut log = std::mem::take(&mut self.evicted_bytes);
        let at = log.len();
        // A pending slot's bytes are still the caller's: nothing to log.
        log.extend_from_slice(self.slot_bytes(slot));
        if log.len() > at {
            self.evicted.push((hash, at..log.len(), name));
        }
        self.evicted_bytes = log;
    }

    /// Ends a lending: hands every frame lent since the last call back, once each and in
    /// the order lent, as `back(handle, keep)`. When `keep`, the store chose the frame for a
    /// Data it admitted: `back` returns it (`Some`) for the store to hold, the slot becoming
    /// readable, or `None` if the caller cannot part with it after all (the Data is then
    /// removed). When not `keep`, the frame stays the caller's and `back` returns `None` (a
    /// frame returned anyway goes to [`released`](Self::released)). A frame too short for
    /// its Data goes to [`released`](Self::released) too. `lent` is left empty.
    ///
    /// Call it once the Data have been sent down from those frames, before lending the next.
    pub fn return_lent<L>(
        &mut self,
        lent: &mut Lent<L>,
        mut back: impl FnMut(L, bool) -> Option<F>,
    ) {
        let mut handles = lent.drain();
        // The number of the next handle `handles` yields.
        let mut next = 0u32;
        let mut pending = std::mem::take(&mut self.pending);
        // Pending entries are in lent order, one per frame at most.
        for &(frame, slot) in &pending {
            // The frames lent before this one: the caller's.
            while next < frame {
                let Some(h) = handles.next() else { break };
                next += 1;
                if let Some(f) = back(h, false) {
                    self.kept.released.push(f);
                }
            }
            let handle = if next == frame {
                next += 1;
                handles.next()
            } else {
                None
            };
            let Some(m) = self.meta.get_mut(slot as usize) else {
                continue;
            };
            // The frame's Data may have been evicted or replaced (its slot even reused by a
            // later frame) since it was inserted.
            if !m.live || m.src != frame {
                if let Some(f) = handle.and_then(|h| back(h, false)) {
                    self.kept.released.push(f);
                }
                continue;
            }
            let end = usize::from(m.off) + m.len as usize;
            // A frame the ledger does not hold (only if the caller lent around it): removed.
            match handle.and_then(|h| back(h, true)) {
                Some(f) if f.as_ref().len() >= end => {
                    m.src = HELD;
                    self.kept.hold(slot, f);
                    self.counters.kept += 1;
                }
                Some(f) => {
                    self.kept.released.push(f);
                    self.remove(slot);
                }
                None => self.remove(slot),
            }
        }
        for h in handles {
            if let Some(f) = back(h, false) {
                self.kept.released.push(f);
            }
        }
        pending.clear();
        self.pending = pending;
    }

    /// Removes the Data of slots still pending (their frames will not come: a new action
    /// list began without [`return_lent`](Self::return_lent)).
    pub(crate) fn discard_pending(&mut self) {
        self.return_lent(&mut Lent::<()>::new(), |(), _| None);
    }

    /// Whether slots wait for their frames.
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The frames the store let go (their Data evicted, replaced or removed), for the caller
    /// to recycle.
    pub fn released(&mut self) -> impl Iterator<Item = F> + '_ {
        self.kept.released.drain(..)
    }

    /// Removes every Data that lives in a kept frame (and those still pending), so that
    /// [`released`](Self::released) hands back every frame the store held: for the frames'
    /// owner to take them all back before it goes away (a worker that stops).
    pub fn let_go_frames(&mut self) {
        self.discard_pending();
        if self.frames_held() == 0 {
            return;
        }
        for slot in 0..self.meta.len() {
            let m = &self.meta[slot];
            if m.live && m.src == HELD {
                self.remove(slot as u32);
            }
        }
    }

    /// Frames the store holds.
    pub fn frames_held(&self) -> usize {
        self.kept.held
    }

    /// Lets go of the frame of `slot`, if it holds one.
    #[inline(always)]
    fn let_go(&mut self, slot: u32) {
        self.kept.let_go(slot);
    }

    /// Hands every logged eviction to `f` (name hash, Data packet), oldest first, and
    /// forgets them (the buffers keep their memory).
    pub fn drain_evicted(&mut self, mut f: impl FnMut(u64, &[u8])) {
        self.drain_evicted_named(|hash, _, data| f(hash, data));
    }

    /// [`drain_evicted`](Self::drain_evicted) that also hands over each Data's Name
    /// TLV-VALUE (a slice of the Data, as the store indexed it): `f(name hash, name, Data)`,
    /// so the caller need not decode the Data to learn its name.
    pub fn drain_evicted_named(&mut self, mut f: impl FnMut(u64, &[u8], &[u8])) {
        for (hash, range, (off, len)) in &self.evicted {
            let data = self.evicted_bytes.get(range.clone()).unwrap_or(&[]);
            let name = data
                .get(*off as usize..(*off as usize).saturating_add(*len as usize))
                .unwrap_or(&[]);
            f(*hash, name, data);
        }
        self.evicted.clear();
        self.evicted_bytes.clear();
    }

    /// Whether evictions are waiting for [`drain_evicted`](Self::drain_evicted).
    pub fn has_evicted(&self) -> bool {
        !self.evicted.is_empty()
    }

    /// Whether the admission policy lets the Data named by `hash` in. Inlined for the default
    /// (always): one compare on every insertion; the others out of line.
    #[inline(always)]
    fn admit(&mut self, hash: u64) -> bool {
        matches!(self.cfg.admission, Admission::Always) || self.admit_by_policy(hash)
    }

    /// [`admit`](Self::admit) under a policy other than [`Admission::Always`].
    #[inline(never)]
    fn admit_by_policy(&mut self, hash: u64) -> bool {
        match self.cfg.admission {
            Admission::Always => true,
            Admission::Probabilistic(p) => {
                // xorshift64*
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
                ((r >> 11) as f64 / (1u64 << 53) as f64) < p
            }
            Admission::SecondHit { .. } => {
                let mut seen = false;
                let ghosts = &self.ghosts;
                self.ghost_index.find(hash, |i| {
                    seen = ghosts[i as usize] == hash;
                    seen
                });
                if !seen {
                    let pos = self.ghost_pos;
                    let old = self.ghosts[pos];
                    if old != 0 {
                        self.ghost_index.remove(old, pos as u32);
                    }
                    self.ghosts[pos] = hash | 1;
                    self.ghost_index.insert(hash | 1, pos as u32);
                    self.ghost_pos = (pos + 1) % self.ghosts.len();
                }
                seen
            }
        }
    }

    /// CLOCK's victim: the first live slot from the hand on without a reference bit,
    /// clearing the bits it passes.
    fn clock_victim(&mut self) -> u32 {
        loop {
            let h = self.hand;
            self.hand = (self.hand + 1) % self.cfg.capacity as u32;
            let m = &mut self.meta[h as usize];
            if m.live && !m.referenced {
                return h;
            }
            m.referenced = false;
        }
    }

    fn mark_used(&mut self, slot: u32) {
        match self.cfg.replacement {
            Replacement::Fifo => {}
            // Relinking the head in front of itself changes nothing.
            Replacement::Lru if slot != self.head => {
                let mut links = self.links();
                links.unlink(slot);
                links.push_front(slot);
            }
            Replacement::Lru => {}
            Replacement::Clock => self.meta[slot as usize].referenced = true,
        }
    }

    /// The recency list, borrowed apart from the rest of the store.
    #[inline(always)]
    fn links(&mut self) -> Links<'_> {
        Links {
            meta: &mut self.meta,
            head: &mut self.head,
            tail: &mut self.tail,
        }
    }

    /// Removes the Data in `slot`.
    pub fn remove(&mut self, slot: u32) {
        if self.detach(slot) {
            self.free.push(slot);
        }
    }

    /// Makes room for one Data when no slot is free: evicts the replacement policy's victim
    /// and returns its slot, for the caller to fill (it never goes through the free list).
    /// Inlined into both insertions (the copy and the keep).
    #[inline(always)]
    fn evict(&mut self) -> u32 {
        self.counters.evictions += 1;
        match self.cfg.replacement {
            Replacement::Fifo | Replacement::Lru => self.evict_tail(),
            Replacement::Clock => {
                let victim = self.clock_victim();
                if self.log_evictions {
                    self.log_eviction(victim);
                }
                self.detach(victim);
                self.prefetch_clock_ahead();
                victim
            }
        }
    }

    /// Prefetches the index buckets a slot's removal touches: its name's and its alias's.
    #[inline(always)]
    fn prefetch_index_of(&self, m: &Meta) {
        self.index.prefetch(m.hash);
        if let Some((h, _)) = m.alias() {
            self.index.prefetch(h);
        }
    }

    /// CLOCK's counterpart of [`evict_tail`](Self::evict_tail)'s prefetches: the slot under
    /// the hand is the next victim unless it is referenced or dead (its index buckets, for
    /// the removal), and the slot after it the one after that (its stored Data's lines, for
    /// the copy). A hit sets a reference bit and the hand then skips the slot, so these are
    /// guesses; a wrong one wastes its hints. The metadata the hand reads is sequential.
    #[inline(always)]
    fn prefetch_clock_ahead(&self) {
        let likely_victim = |slot: u32| {
            self.meta
                .get(slot as usize)
                .filter(|m| m.live && !m.referenced)
        };
        if let Some(m) = likely_victim(self.hand) {
            self.prefetch_index_of(m);
        }
        let after = (self.hand + 1) % self.cfg.capacity as u32;
        if let Some(m) = likely_victim(after)
            && !self.keeping
        {
            self.prefetch_slab(after, m.len as usize, 0);
        }
    }

    /// FIFO's and LRU's eviction: [`detach`](Self::detach) of the recency list's tail (live,
    /// as every slot in the list is, and with no successor: one neighbour to relink), whose
    /// slot it returns for the caller to fill at once: the slot's metadata is left as it was
    /// (still marked live), since the caller overwrites all of it before anything reads it.
    ///
    /// Then prefetches what the next evictions will touch: the new tail's index buckets
    /// (their removal, at the next eviction), the slot after it (the copy into it, two
    /// evictions on: a Data's lines take longer than one packet's time to come from DRAM),
    /// and the metadata of the slot after that (read at the next eviction, to size that
    /// prefetch). Without it each insertion into a large store waits on those misses one
    /// after another. Here rather than after the insertion: the new tail's metadata is at
    /// hand, and only a full store evicts. (With a list this short there is less to
    /// prefetch.)
    #[inline(always)]
    fn evict_tail(&mut self) -> u32 {
        let slot = self.tail;
        if self.log_evictions {
            self.log_eviction(slot);
        }
        let Some(m) = self.meta.get(slot as usize) else {
            return slot;
        };
        debug_assert!(m.live, "a dead slot in the recency list");
        let (hash, name_pos, alias_pos, alias_hash) =
            (m.hash, m.name_pos, m.alias_pos, m.alias_hash);
        let prev = m.prev;
        if m.src == HELD {
            self.let_go(slot);
        }
        // The index first: what it needs is then dead before the prefetches.
        self.index.remove_pos(hash, name_pos);
        // Usually no alias: one compare settles it (`remove_pos` would find `NO_POS` past
        // the buckets after computing the bucket number).
        if alias_pos != NO_POS {
            self.index.remove_pos(alias_hash, alias_pos);
        }
        self.tail = prev;
        match self.meta.get_mut(prev as usize) {
            Some(p) => {
                p.next = NIL;
                let p = *p;
                self.prefetch_index_of(&p);
                // Two steps ahead: the slot after the new tail (the copy into it waits on a
                // line per 64 bytes, and one packet's time is not enough to bring them all
                // from DRAM), sized by the Data it holds now, whose metadata the last
                // eviction prefetched. Three ahead: the metadata of the slot after that.
                // Not while frames are kept: the next Data will likely not be copied.
                if let Some(pp) = self.meta.get(p.prev as usize) {
                    if let Some(ppp) = self.meta.get(pp.prev as usize) {
                        ndx_mem::prefetch(ppp);
                    }
                    if !self.keeping {
                        self.prefetch_slab(p.prev, pp.len as usize, 0);
                    } else {
                        // Its frame's handle, which the eviction moves out.
                        self.kept.prefetch(p.prev);
                    }
                }
            }
            None => self.head = NIL,
        }
        slot
    }

    /// Takes the live Data in `slot` out of the recency list and the index and marks the
    /// slot dead, without freeing it; false (and nothing done) if it is not live. Always
    /// inlined: [`evict`](Self::evict)'s copy is on every full insertion's path.
    #[inline(always)]
    fn detach(&mut self, slot: u32) -> bool {
        let mut links = self.links();
        let Some(m) = links.meta.get_mut(slot as usize) else {
            return false;
        };
        if !m.live {
            return false;
        }
        m.live = false;
        let (hash, alias_hash) = (m.hash, m.alias_hash);
        let (name_pos, alias_pos) = (m.name_pos, m.alias_pos);
        let held = m.src == HELD;
        m.src = SLAB;
        links.unlink(slot);
        if held {
            self.let_go(slot);
        }
        // By position: no search of the bucket chains (`remove_pos` ignores `NO_POS`, the
        // alias position of a slot without one).
        self.index.remove_pos(hash, name_pos);
        self.index.remove_pos(alias_hash, alias_pos);
        true
    }
}

/// The recency list of FIFO and LRU (most recent at `head`, next victim at `tail`), linked
/// through [`Meta::prev`] and [`Meta::next`]: the slot metadata as one exclusive slice apart
/// from the ends, so that the compiler knows that writing a link moves neither.
///
/// A neighbour is looked up with `get_mut`: [`NIL`] is past every slot, so one compare both
/// bounds-checks and tests for the list's end.
struct Links<'a> {
    meta: &'a mut [Meta],
    head: &'a mut u32,
    tail: &'a mut u32,
}

impl Links<'_> {
    /// Links `slot` (not in the list) at the head.
    #[inline(always)]
    fn push_front(&mut self, slot: u32) {
        let head = *self.head;
        if let Some(m) = self.meta.get_mut(slot as usize) {
            m.prev = NIL;
            m.next = head;
        }
        match self.meta.get_mut(head as usize) {
            Some(h) => h.prev = slot,
            None => *self.tail = slot,
        }
        *self.head = slot;
    }

    /// Takes `slot` out of the list.
    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let Some(m) = self.meta.get(slot as usize) else {
            return;
        };
        let (prev, next) = (m.prev, m.next);
        match self.meta.get_mut(prev as usize) {
            Some(p) => p.next = next,
            None => *self.head = next,
        }
        match self.meta.get_mut(next as usize) {
            Some(n) => n.prev = prev,
            None => *self.tail = prev,
        }
    }
}

/// The CanBePrefix alias `prefix` (hash `hash`) gives `data`, as ([`Meta::alias_hash`],
/// [`Meta::alias_len`]): none (`(0, NO_ALIAS)`) unless `prefix` is a proper prefix of its
/// name. Out of line, and given the Data rather than its name: most insertions have no
/// prefix, and their path then neither reads nor keeps what only this needs.
#[inline(never)]
fn alias_of(data: &Data<'_>, prefix: &Name<'_>, hash: u64) -> (u64, u32) {
    let name = data.name();
    if prefix.is_prefix_of(&name) && prefix.len() < name.len() {
        (hash, prefix.as_bytes().len() as u32)
    } else {
        (0, NO_ALIAS)
    }
}

/// Cheap necessary condition for a name to end with an implicit digest: its last 34 bytes
/// start with `01 20` (type 1, length 32).
#[inline(always)]
fn may_end_with_digest(b: &[u8]) -> bool {
    b.len() >= 34 && b[b.len() - 34] == 0x01 && b[b.len() - 33] == 0x20
}
