//! The FIB: longest-prefix match on name components, shared by all shards, read without locks.
//!
//! # Layout
//! A hash table of prefixes (Augustus, seed 001 §3.1) keyed by the keyed hash of the prefix's
//! component bytes, split into [`CHUNKS`] chunks by the hash's top bits. Each chunk is an
//! open-addressing table of 64-byte buckets holding 7 (tag, index) slots, probed linearly by
//! bucket, with entries in a chunk-local array (no allocation per entry). An entry is two
//! cache lines: the first holds what a probe reads (depth, and the name itself when it
//! is at most 44 bytes, as most routes are) and the first next hop, the second the other
//! next hops; longer names live in a chunk-local byte array. A probe therefore costs two
//! cache misses (bucket, entry) at most, and [`Shard::process_burst`](crate::Shard::process_burst)
//! overlaps them across a burst by prefetching buckets, then entries, before the lookups run
//! ([`FibSnapshot::prefetch`]). A bucket records which of its entries have more than one
//! next hop: only for those is the second line prefetched too, so a single-next-hop route
//! costs one line, not two (at 10^6 routes the random lines a burst fetches, not the
//! instructions, bound the lookup). The entries' hashes, which only the writer needs, are
//! kept apart. The tables are plain arrays, one set per chunk. A chunk's
//! arrays stay below 2 MiB up to about 10^7 routes (10^6 routes: about 128 KiB of entries per
//! chunk): the `ndx` binary's allocator (`ndx_mem::HugePages`) serves them as blocks of
//! shared 2 MiB huge-page regions.
//!
//! # Lookup
//! The two-stage lookup of So et al. (as NDN-DPDK): every prefix deeper than `M` components
//! leaves a marker at its `M`-component prefix recording the deepest prefix below it. A lookup
//! of a name longer than `M` reads the name's `M`-prefix marker first, then probes from
//! `min(max depth, name length)` down to 1, longest first, then the root `/`. The number of
//! probes is bounded by the marker, not by the FIB size, so lookup cost stays flat as the FIB
//! grows (seed 001 Fig. 8).
//!
//! Unlike NDN-DPDK, markers are not entries of the route table: each chunk keeps them in a
//! table of their own, one 8-byte word per `M`-prefix (the prefix's hash with the depth in its
//! low byte), with no name. Markers are far fewer than routes (15,600 for the 10^6 routes of
//! the benchmark: 250 KB that stay in cache), so a lookup that starts at the marker's depth
//! reads two random lines of the route table (bucket, entry) instead of four. Two `M`-prefixes
//! whose hashes agree in their top 56 bits share a word holding the deeper depth, which can
//! only start a lookup deeper than needed: every probe compares names.
//!
//! # Updates (RCU style)
//! The control plane owns the [`Fib`] and mutates a private copy; chunks are reference-counted
//! and copied on first write after a publish, so [`Fib::publish`] only copies the chunk-pointer
//! table plus the chunks touched since the last publish. Readers ([`FibReader`]) load the
//! current [`FibSnapshot`] with one atomic operation and never block the writer or each other.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use ndx_codec::{Name, NameBuf};

use crate::face::{FaceId, NextHop};
use crate::hash::{HashKey, NameHashes, prefix_hashes};

/// Number of chunks (a power of two).
pub const CHUNKS: usize = 1024;
const CHUNK_BITS: u32 = CHUNKS.trailing_zeros();
/// Slots per 64-byte bucket.
const SLOTS: usize = 7;
/// Deepest prefix the FIB accepts, in components.
pub const MAX_PREFIX_DEPTH: usize = 32;
/// Next hops per route.
pub const MAX_NEXTHOPS: usize = 8;

/// A strategy chosen for a prefix (an index into the router's strategy table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StrategyId(pub u8);

/// Why a FIB update was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FibError {
    /// The prefix has more components than [`MAX_PREFIX_DEPTH`].
    #[error("prefix has {0} components; the FIB accepts at most {MAX_PREFIX_DEPTH}")]
    TooDeep(usize),
    /// The route already has [`MAX_NEXTHOPS`] next hops.
    #[error("a route holds at most {MAX_NEXTHOPS} next hops")]
    TooManyNextHops,
    /// The prefix's encoding is longer than [`MAX_PREFIX_BYTES`].
    #[error("prefix is {0} bytes long; the FIB accepts at most {MAX_PREFIX_BYTES}")]
    TooLong(usize),
}

/// Longest prefix encoding the FIB accepts, in bytes (a packet is at most 8800).
pub const MAX_PREFIX_BYTES: usize = u16::MAX as usize;

#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Bucket {
    tags: [u32; SLOTS],
    index: [u32; SLOTS],
    /// Set when an insertion passed this bucket while it was full: lookups continue past it.
    overflow: u32,
    used: u16,
    /// Bit `s` set when slot `s`'s entry is [wide](Entry::wide): the burst prefetch then
    /// fetches both of its lines, else only the first.
    wide: u16,
}

impl Bucket {
    fn set_wide(&mut self, slot: usize, wide: bool) {
        let bit = 1u16 << slot;
        if wide {
            self.wide |= bit;
        } else {
            self.wide &= !bit;
        }
    }
}

/// Name bytes kept inside the entry's first cache line; longer names live in the chunk's
/// name array (one more cache miss per probe).
const INLINE_NAME: usize = 44;

/// One prefix. Two cache lines: everything a probe reads (hash, depth, marker, short name) in
/// the first, next hops in the second, read only on a match.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Entry {
    name_off: u32,
    name_len: u16,
    depth: u8,
    is_route: bool,
    strategy: StrategyId,
    hops_len: u8,
    _pad: [u8; 2],
    /// The name when it is at most [`INLINE_NAME`] bytes long.
    inline: [u8; INLINE_NAME],
    /// Next hops, in the order they were added: the first ends the entry's first cache line,
    /// the others fill the second, so a route with one next hop (and a marker) is read whole
    /// from one line.
    hops: [NextHop; MAX_NEXTHOPS],
}

impl Entry {
    /// An entry with no route and no name yet.
    const BLANK: Entry = Entry {
        name_off: 0,
        name_len: 0,
        depth: 0,
        is_route: false,
        strategy: StrategyId(0),
        hops_len: 0,
        _pad: [0; 2],
        inline: [0; INLINE_NAME],
        hops: [NO_HOP; MAX_NEXTHOPS],
    };

    /// Whether a match reads beyond the entry's first cache line: it has a second next hop.
    fn wide(&self) -> bool {
        self.hops_len > 1
    }
}

const NO_HOP: NextHop = NextHop {
    face: FaceId(u32::MAX),
    cost: u32::MAX,
};

/// 64-byte bucket of the stage-1 marker table: 7 marker words, probed like [`Bucket`].
///
/// A word is the stage-1 prefix's hash with its low 8 bits replaced by the deepest route below
/// that prefix (0 for an empty slot; a marker's depth is at least 2). No name is kept: a
/// marker only tells a lookup how deep to start, and every probe from there compares names,
/// so two prefixes whose hashes agree in their top 56 bits share one word holding the deeper
/// of the two depths (the writer counts them together), which can only cost extra probes.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct MarkerBucket {
    words: [u64; SLOTS],
    /// Set when an insertion passed this bucket while it was full: lookups continue past it.
    overflow: u64,
}

/// The marker word's key part: the hash without its low 8 bits.
const MARKER_KEY: u64 = !0xFF;

/// One of the [`CHUNKS`] tables. Laid out so that the fields a lookup reads (the bucket, marker
/// and entry arrays' addresses and lengths) fill the first cache line of the chunk, which is
/// what [`FibSnapshot::prefetch_chunk`] fetches; `align(64)` puts that line on a line boundary
/// inside the `Arc`'s allocation.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct Chunk {
    buckets: Box<[Bucket]>,
    /// The stage-1 markers of the prefixes whose hashes pick this chunk, apart from the routes:
    /// at 10^6 routes under 15,600 stage-1 prefixes they are 250 KB that stay in cache, where
    /// as entries of the route table each lookup paid two more random lines (bucket, entry).
    markers: Box<[MarkerBucket]>,
    entries: Vec<Entry>,
    /// Each entry's hash (by entry index), for the writer's removals and rebuilds: lookups
    /// match on the bucket's tag and the name, so the entry's first line need not hold it.
    hashes: Vec<u64>,
    free: Vec<u32>,
    names: Vec<u8>,
    live: usize,
    garbage_bytes: usize,
    markers_live: usize,
}

fn tag_of(hash: u64) -> u32 {
    ((hash >> 20) as u32) | 1
}

impl Chunk {
    fn new(buckets: usize) -> Self {
        Self {
            buckets: vec![Bucket::default(); buckets].into_boxed_slice(),
            markers: vec![MarkerBucket::default(); 1].into_boxed_slice(),
            entries: Vec::new(),
            hashes: Vec::new(),
            free: Vec::new(),
            names: Vec::new(),
            live: 0,
            garbage_bytes: 0,
            markers_live: 0,
        }
    }

    /// The marker of the stage-1 prefix whose hash is `hash`: the depth of the deepest route
    /// below it, or 0 when it has none (or the route table's depth bound was not recorded).
    #[inline]
    fn marker(&self, hash: u64) -> u8 {
        let mask = self.markers.len() - 1;
        let want = hash & MARKER_KEY;
        let mut b = (hash >> 8) as usize & mask;
        for _ in 0..self.markers.len() {
            let Some(bucket) = self.markers.get(b) else {
                return 0;
            };
            for &w in &bucket.words {
                if w & MARKER_KEY == want && w != 0 {
                    return w as u8;
                }
            }
            if bucket.overflow == 0 {
                return 0;
            }
            b = (b + 1) & mask;
        }
        0
    }

    /// Prefetches the home bucket of the stage-1 prefix whose hash is `hash` in the marker
    /// table.
    #[inline]
    fn prefetch_marker(&self, hash: u64) {
        let mask = self.markers.len() - 1;
        if let Some(b) = self.markers.get((hash >> 8) as usize & mask) {
            ndx_mem::prefetch(b);
        }
    }

    /// Records `depth` as the marker of the stage-1 prefix hash `hash` (0 removes it); grows
    /// the marker table when 85% full.
    fn set_marker(&mut self, hash: u64, depth: u8) {
        let key = hash & MARKER_KEY;
        let mask = self.markers.len() - 1;
        let mut b = (hash >> 8) as usize & mask;
        for _ in 0..self.markers.len() {
            let bucket = &mut self.markers[b];
            if let Some(w) = bucket
                .words
                .iter_mut()
                .find(|w| **w != 0 && **w & MARKER_KEY == key)
            {
                if depth == 0 {
                    *w = 0;
                    self.markers_live -= 1;
                } else {
                    *w = key | u64::from(depth);
                }
                return;
            }
            if bucket.overflow == 0 {
                break;
            }
            b = (b + 1) & mask;
        }
        if depth == 0 {
            return;
        }
        if (self.markers_live + 1) * 100 > self.markers.len() * SLOTS * 85 {
            self.rebuild_markers(self.markers.len() * 2);
        }
        self.place_marker(key | u64::from(depth));
        self.markers_live += 1;
    }

    fn place_marker(&mut self, word: u64) {
        let mask = self.markers.len() - 1;
        let mut b = (word >> 8) as usize & mask;
        loop {
            let bucket = &mut self.markers[b];
            if let Some(w) = bucket.words.iter_mut().find(|w| **w == 0) {
                *w = word;
                return;
            }
            bucket.overflow = 1;
            b = (b + 1) & mask;
        }
    }

    /// Rebuilds the marker table with `buckets` buckets (clears overflow marks).
    fn rebuild_markers(&mut self, buckets: usize) {
        let old = std::mem::replace(
            &mut self.markers,
            vec![MarkerBucket::default(); buckets].into_boxed_slice(),
        );
        for w in old.iter().flat_map(|b| b.words) {
            if w != 0 {
                self.place_marker(w);
            }
        }
    }

    fn name_of<'e>(&'e self, e: &'e Entry) -> &'e [u8] {
        let len = usize::from(e.name_len);
        if len <= INLINE_NAME {
            return &e.inline[..len];
        }
        let off = e.name_off as usize;
        self.names.get(off..off + len).unwrap_or(&[])
    }

    /// Prefetches `hash`'s home bucket.
    #[inline]
    fn prefetch(&self, hash: u64) {
        let mask = self.buckets.len() - 1;
        if let Some(b) = self.buckets.get(hash as usize & mask) {
            ndx_mem::prefetch(b);
        }
    }

    /// Prefetches every entry whose tag matches in `hash`'s home bucket: its first line (what
    /// a probe reads, and a single next hop), and its second too when the slot says the entry
    /// is [wide](Entry::wide) (reads the bucket, which should be in cache by now: see
    /// [`prefetch`](Self::prefetch)). Without the second line, every lookup that matched a
    /// route of several next hops paid one full miss at 10^6 routes; fetching it for the
    /// usual single next hop would spend a miss for nothing.
    #[inline]
    fn prefetch_entries(&self, hash: u64) {
        let mask = self.buckets.len() - 1;
        let tag = tag_of(hash);
        let Some(bucket) = self.buckets.get(hash as usize & mask) else {
            return;
        };
        let mut hits = ndx_mem::eq_mask7(&bucket.tags, tag);
        while hits != 0 {
            let s = hits.trailing_zeros() as usize;
            hits &= hits - 1;
            if let Some(e) = self.entries.get(bucket.index[s] as usize) {
                ndx_mem::prefetch(e);
                if bucket.wide & (1 << s) != 0 {
                    ndx_mem::prefetch(&e.hops[MAX_NEXTHOPS - 1]);
                }
            }
        }
    }

    fn find(&self, hash: u64, name: &[u8]) -> Option<u32> {
        let mask = self.buckets.len() - 1;
        let tag = tag_of(hash);
        let mut b = hash as usize & mask;
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            for s in 0..SLOTS {
                if bucket.tags[s] == tag {
                    let i = bucket.index[s];
                    if let Some(e) = self.entries.get(i as usize)
                        && self.name_of(e) == name
                    {
                        return Some(i);
                    }
                }
            }
            if bucket.overflow == 0 {
                return None;
            }
            b = (b + 1) & mask;
        }
        None
    }

    fn get(&self, hash: u64, name: &[u8]) -> Option<&Entry> {
        self.find(hash, name)
            .and_then(|i| self.entries.get(i as usize))
    }

    /// Inserts a new entry (the caller checked it is absent); grows the chunk when 85% full.
    fn insert(&mut self, hash: u64, name: &[u8], depth: u8) -> u32 {
        if (self.live + 1) * 100 > self.buckets.len() * SLOTS * 85 {
            self.rebuild(self.buckets.len() * 2);
        }
        let mut entry = Entry {
            name_off: self.names.len() as u32,
            name_len: name.len() as u16,
            depth,
            ..Entry::BLANK
        };
        if name.len() <= INLINE_NAME {
            entry.inline[..name.len()].copy_from_slice(name);
            entry.name_off = 0;
        } else {
            self.names.extend_from_slice(name);
        }
        let wide = entry.wide();
        let index = match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = entry;
                self.hashes[i as usize] = hash;
                i
            }
            None => {
                self.entries.push(entry);
                self.hashes.push(hash);
                (self.entries.len() - 1) as u32
            }
        };
        self.place(hash, index, wide);
        self.live += 1;
        index
    }

    fn place(&mut self, hash: u64, index: u32, wide: bool) {
        let mask = self.buckets.len() - 1;
        let mut b = hash as usize & mask;
        loop {
            let bucket = &mut self.buckets[b];
            if let Some(s) = bucket.tags.iter().position(|&t| t == 0) {
                bucket.tags[s] = tag_of(hash);
                bucket.index[s] = index;
                bucket.used += 1;
                bucket.set_wide(s, wide);
                return;
            }
            bucket.overflow = 1;
            b = (b + 1) & mask;
        }
    }

    /// The bucket and slot holding entry `index` (whose hash is `hash`).
    fn slot_of(&self, hash: u64, index: u32) -> Option<(usize, usize)> {
        let mask = self.buckets.len() - 1;
        let mut b = hash as usize & mask;
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            for s in 0..SLOTS {
                if bucket.tags[s] != 0 && bucket.index[s] == index {
                    return Some((b, s));
                }
            }
            b = (b + 1) & mask;
        }
        None
    }

    /// Brings entry `index`'s slot flag in line with the entry after an edit (a next hop
    /// added or removed).
    fn sync_wide(&mut self, index: u32) {
        let (Some(e), Some(&hash)) = (
            self.entries.get(index as usize),
            self.hashes.get(index as usize),
        ) else {
            return;
        };
        let wide = e.wide();
        if let Some((b, s)) = self.slot_of(hash, index) {
            self.buckets[b].set_wide(s, wide);
        }
    }

    fn remove(&mut self, index: u32) {
        let (Some(e), Some(&hash)) = (
            self.entries.get(index as usize).copied(),
            self.hashes.get(index as usize),
        ) else {
            return;
        };
        if let Some((b, s)) = self.slot_of(hash, index) {
            let bucket = &mut self.buckets[b];
            bucket.tags[s] = 0;
            bucket.used -= 1;
            bucket.set_wide(s, false);
        }
        self.free.push(index);
        self.live -= 1;
        if usize::from(e.name_len) > INLINE_NAME {
            self.garbage_bytes += usize::from(e.name_len);
        }
        if self.garbage_bytes > 4096 && self.garbage_bytes > self.names.len() / 2 {
            self.rebuild(self.buckets.len());
        }
    }

    /// Rebuilds with `buckets` buckets: compacts entries and names, clears overflow marks.
    fn rebuild(&mut self, buckets: usize) {
        let mut old = std::mem::replace(self, Chunk::new(buckets));
        self.markers = std::mem::take(&mut old.markers);
        self.markers_live = old.markers_live;
        let free: std::collections::HashSet<u32> = old.free.iter().copied().collect();
        for (i, e) in old.entries.iter().enumerate() {
            if free.contains(&(i as u32)) {
                continue;
            }
            let mut moved = *e;
            if usize::from(e.name_len) > INLINE_NAME {
                moved.name_off = self.names.len() as u32;
                self.names.extend_from_slice(old.name_of(e));
            }
            let hash = old.hashes[i];
            self.entries.push(moved);
            self.hashes.push(hash);
            let index = (self.entries.len() - 1) as u32;
            self.place(hash, index, moved.wide());
            self.live += 1;
        }
    }
}

/// Whether the FIB can hold the `k`-component prefix of the name `hashes` was built for
/// (`1..=min(len, MAX_PREFIX_DEPTH)`); the prefetches do nothing for other depths.
#[inline]
fn prefetchable(hashes: &NameHashes<'_>, k: usize) -> bool {
    k != 0 && k <= hashes.name().len().min(MAX_PREFIX_DEPTH)
}

/// A published, immutable view of the FIB. Cheap to hold for a burst of lookups.
#[derive(Debug)]
pub struct FibSnapshot {
    key: HashKey,
    stage1: usize,
    chunks: Vec<Arc<Chunk>>,
    generation: u64,
    root: Option<Entry>,
}

/// The result of a longest-prefix match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FibMatch<'s> {
    /// Components in the matched prefix.
    pub prefix_len: usize,
    /// Next hops, in the order they were added.
    pub nexthops: &'s [NextHop],
    /// The prefix's strategy.
    pub strategy: StrategyId,
}

impl FibSnapshot {
    fn chunk(&self, hash: u64) -> &Chunk {
        &self.chunks[(hash >> (64 - CHUNK_BITS)) as usize]
    }

    /// How many times the FIB has been published before this snapshot.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Longest-prefix match of `name`, whose prefix hashes the caller computed with
    /// [`prefix_hashes`] (`hashes[k - 1]` is the hash of the first `k` components; the shard
    /// computes them once per packet and reuses them for the PIT and the CS).
    pub fn lpm<'s>(&'s self, name: &Name<'_>, hashes: &[u64]) -> Option<FibMatch<'s>> {
        let n = name.len().min(hashes.len()).min(MAX_PREFIX_DEPTH);
        let bytes = name.as_bytes();
        let mut ends = [0usize; MAX_PREFIX_DEPTH + 1];
        for (k, c) in name.components().take(n).enumerate() {
            ends[k + 1] = ends[k] + c.wire().len();
        }
        let probe = |k: usize| -> Option<&'s Entry> {
            let h = hashes[k - 1];
            self.chunk(h).get(h, bytes.get(..ends[k]).unwrap_or(&[]))
        };
        let start = self.start_depth(n, |k| hashes[k - 1]);
        for k in (1..=start).rev() {
            if let Some(e) = probe(k).filter(|e| e.is_route) {
                return Some(self.matched(e));
            }
        }
        self.root.as_ref().map(|e| self.matched(e))
    }

    /// Longest-prefix match of the name `hashes` was built for, hashing prefixes only as the
    /// lookup reaches them (the stage-1 prefix and the marker's depth in the common case).
    /// Build `hashes` with this snapshot's key and [`stage1`](Self::stage1).
    #[inline]
    pub fn lpm_hashed<'s>(&'s self, hashes: &mut NameHashes<'_>) -> Option<FibMatch<'s>> {
        let probe = |k: usize, h: &mut NameHashes<'_>| -> Option<&'s Entry> {
            let hash = h.prefix(k);
            self.chunk(hash).get(hash, h.prefix_bytes(k))
        };
        let start = self.start_depth(hashes.name().len(), |k| hashes.prefix(k));
        for k in (1..=start).rev() {
            if let Some(e) = probe(k, hashes).filter(|e| e.is_route) {
                return Some(self.matched(e));
            }
        }
        self.root.as_ref().map(|e| self.matched(e))
    }

    /// The depth the second stage starts at for a name of `len` components whose prefix
    /// hashes `prefix` gives: the stage-1 marker's depth when the name is longer than stage 1
    /// (clamped to `stage1..=len`), else the name's length (bounded by [`MAX_PREFIX_DEPTH`]).
    #[inline]
    fn start_depth(&self, len: usize, prefix: impl FnOnce(usize) -> u64) -> usize {
        let n = len.min(MAX_PREFIX_DEPTH);
        let m = self.stage1.min(n);
        if n > m {
            let h = prefix(m);
            usize::from(self.chunk(h).marker(h)).clamp(m, n)
        } else {
            n
        }
    }

    /// The depth [`lpm_hashed`](Self::lpm_hashed) will probe first for the name `hashes` was
    /// built for, read from the stage-1 marker (prefetch it with
    /// [`prefetch_marker`](Self::prefetch_marker) a pass before): a burst prefetches that
    /// depth's bucket and entries. Uses the stage-1 hash if computed, else reports stage 1.
    #[inline]
    pub fn lpm_start(&self, hashes: &NameHashes<'_>) -> usize {
        let len = hashes.name().len();
        let m = self.stage1.min(len.min(MAX_PREFIX_DEPTH));
        match hashes.cached(m) {
            Some(h) => self.start_depth(len, |_| h),
            None => m,
        }
    }

    /// Prefetches the stage-1 marker's bucket for the name `hashes` was built for (nothing
    /// when the name is not longer than stage 1: no marker is read). Hashes the stage-1 prefix
    /// if it was not.
    #[inline]
    pub fn prefetch_marker(&self, hashes: &mut NameHashes<'_>) {
        let n = hashes.name().len().min(MAX_PREFIX_DEPTH);
        if n > self.stage1 {
            let h = hashes.prefix(self.stage1);
            self.chunk(h).prefetch_marker(h);
        }
    }

    /// Prefetches the descriptor of the chunk holding the name's `k`-component prefix (the
    /// `Vec` headers a bucket's address is computed from; one of [`CHUNKS`] lines, which a
    /// large FIB's buckets push out of cache). Call a pass before [`prefetch`](Self::prefetch):
    /// the bucket's address depends on this line. The prefix is hashed now if it was not.
    #[inline]
    pub fn prefetch_chunk(&self, hashes: &mut NameHashes<'_>, k: usize) {
        if !prefetchable(hashes, k) {
            return;
        }
        let h = hashes.prefix(k);
        ndx_mem::prefetch(self.chunk(h));
    }

    /// Prefetches the home bucket of the name's `k`-component prefix (`1..=min(len, 32)`;
    /// other depths prefetch nothing): the prefetches of a burst overlap their cache misses.
    /// The stage-1 prefix's hash is already computed; other depths are hashed now.
    #[inline]
    pub fn prefetch(&self, hashes: &mut NameHashes<'_>, k: usize) {
        if !prefetchable(hashes, k) {
            return;
        }
        let h = hashes.prefix(k);
        self.chunk(h).prefetch(h);
    }

    /// Prefetches the entries the home bucket of the `k`-component prefix points to (after
    /// [`prefetch`](Self::prefetch) has brought the bucket in).
    #[inline]
    pub fn prefetch_entries(&self, hashes: &NameHashes<'_>, k: usize) {
        if !prefetchable(hashes, k) {
            return;
        }
        if let Some(h) = hashes.cached(k) {
            self.chunk(h).prefetch_entries(h);
        }
    }

    /// Components in the first lookup stage (build [`NameHashes`] with it).
    pub fn stage1(&self) -> usize {
        self.stage1
    }

    fn matched<'s>(&'s self, e: &'s Entry) -> FibMatch<'s> {
        FibMatch {
            prefix_len: usize::from(e.depth),
            nexthops: &e.hops[..usize::from(e.hops_len)],
            strategy: e.strategy,
        }
    }

    /// The hash key this snapshot's hashes must be computed with.
    pub fn key(&self) -> &HashKey {
        &self.key
    }
}

/// A shard's handle on the FIB: loads the current snapshot without locking.
#[derive(Debug, Clone)]
pub struct FibReader {
    shared: Arc<ArcSwap<FibSnapshot>>,
}

impl FibReader {
    /// The current snapshot (one atomic load and a reference-count increment).
    pub fn snapshot(&self) -> Arc<FibSnapshot> {
        self.shared.load_full()
    }

    /// The current snapshot without touching its reference count (arc-swap's fast path):
    /// for one packet or one burst, not to be held long.
    pub fn guard(&self) -> arc_swap::Guard<Arc<FibSnapshot>> {
        self.shared.load()
    }
}

/// A route as the control plane sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The prefix.
    pub prefix: NameBuf,
    /// Next hops.
    pub nexthops: Vec<NextHop>,
    /// Strategy.
    pub strategy: StrategyId,
}

/// The FIB's writer side, owned by the control plane.
#[derive(Debug)]
pub struct Fib {
    key: HashKey,
    stage1: usize,
    chunks: Vec<Arc<Chunk>>,
    root: Option<Entry>,
    /// For each `M`-prefix marker key (its hash's top 56 bits), how many routes lie at each
    /// depth below it (depth > M). Prefixes whose keys collide are counted together, as they
    /// share their marker word.
    deep: HashMap<u64, [u32; MAX_PREFIX_DEPTH + 1]>,
    shared: Arc<ArcSwap<FibSnapshot>>,
    generation: u64,
    routes: usize,
}

impl Fib {
    /// An empty FIB with the two-stage lookup's first stage at `stage1` components (NDN-DPDK
    /// uses 2; choose the depth most prefixes have), and its first reader.
    pub fn new(key: HashKey, stage1: usize) -> (Self, FibReader) {
        let stage1 = stage1.clamp(1, MAX_PREFIX_DEPTH);
        let chunks: Vec<Arc<Chunk>> = (0..CHUNKS).map(|_| Arc::new(Chunk::new(1))).collect();
        let snapshot = FibSnapshot {
            key,
            stage1,
            chunks: chunks.clone(),
            generation: 0,
            root: None,
        };
        let shared = Arc::new(ArcSwap::from_pointee(snapshot));
        let fib = Fib {
            key,
            stage1,
            chunks,
            root: None,
            deep: HashMap::new(),
            shared: shared.clone(),
            generation: 0,
            routes: 0,
        };
        (fib, FibReader { shared })
    }

    /// Another reader (one per shard).
    pub fn reader(&self) -> FibReader {
        FibReader {
            shared: self.shared.clone(),
        }
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.routes
    }

    /// True when there are no routes.
    pub fn is_empty(&self) -> bool {
        self.routes == 0
    }

    fn chunk_mut(&mut self, hash: u64) -> &mut Chunk {
        Arc::make_mut(&mut self.chunks[(hash >> (64 - CHUNK_BITS)) as usize])
    }

    fn chunk(&self, hash: u64) -> &Chunk {
        &self.chunks[(hash >> (64 - CHUNK_BITS)) as usize]
    }

    /// Finds or creates the entry of `prefix` (depth >= 1) and edits it.
    fn edit<R>(&mut self, prefix: &Name<'_>, f: impl FnOnce(&mut Entry) -> R) -> R {
        let bytes = prefix.as_bytes();
        let hash = self.key.hash(bytes);
        let depth = prefix.len() as u8;
        let chunk = self.chunk_mut(hash);
        let index = match chunk.find(hash, bytes) {
            Some(i) => i,
            None => chunk.insert(hash, bytes, depth),
        };
        let r = f(&mut chunk.entries[index as usize]);
        chunk.sync_wide(index);
        r
    }

    /// Removes `prefix`'s entry if it is no longer a route.
    fn collect(&mut self, prefix: &Name<'_>) {
        let bytes = prefix.as_bytes();
        let hash = self.key.hash(bytes);
        if let Some(i) = self.chunk(hash).find(hash, bytes) {
            let e = self.chunk(hash).entries[i as usize];
            if !e.is_route {
                self.chunk_mut(hash).remove(i);
            }
        }
    }

    /// Adds `nexthop` to the route of `prefix` (creating it), or updates its cost.
    pub fn add_nexthop(&mut self, prefix: &Name<'_>, nexthop: NextHop) -> Result<(), FibError> {
        if prefix.len() > MAX_PREFIX_DEPTH {
            return Err(FibError::TooDeep(prefix.len()));
        }
        if prefix.as_bytes().len() > MAX_PREFIX_BYTES {
            return Err(FibError::TooLong(prefix.as_bytes().len()));
        }
        let mut created = false;
        let mut update = |e: &mut Entry| -> Result<(), FibError> {
            let hops = &mut e.hops[..usize::from(e.hops_len)];
            if let Some(h) = hops.iter_mut().find(|h| h.face == nexthop.face) {
                h.cost = nexthop.cost;
            } else if usize::from(e.hops_len) == MAX_NEXTHOPS {
                return Err(FibError::TooManyNextHops);
            } else {
                e.hops[usize::from(e.hops_len)] = nexthop;
                e.hops_len += 1;
            }
            if !e.is_route {
                e.is_route = true;
                created = true;
            }
            Ok(())
        };
        if prefix.is_empty() {
            let root = self.root.get_or_insert(Entry::BLANK);
            update(root)?;
        } else {
            self.edit(prefix, update)?;
        }
        if created {
            self.routes += 1;
            self.mark(prefix, 1);
        }
        Ok(())
    }

    /// Sets the strategy of an existing route; false if there is no route at `prefix`.
    pub fn set_strategy(&mut self, prefix: &Name<'_>, strategy: StrategyId) -> bool {
        if prefix.is_empty() {
            return self.root.as_mut().is_some_and(|r| {
                r.strategy = strategy;
                true
            });
        }
        let bytes = prefix.as_bytes();
        let hash = self.key.hash(bytes);
        let Some(i) = self.chunk(hash).find(hash, bytes) else {
            return false;
        };
        if !self.chunk(hash).entries[i as usize].is_route {
            return false;
        }
        self.chunk_mut(hash).entries[i as usize].strategy = strategy;
        true
    }

    /// Removes one next hop; the route goes when its last next hop does. Returns whether the
    /// next hop existed.
    pub fn remove_nexthop(&mut self, prefix: &Name<'_>, face: FaceId) -> bool {
        let strip = |e: &mut Entry| -> (bool, bool) {
            let n = usize::from(e.hops_len);
            let Some(pos) = e.hops[..n].iter().position(|h| h.face == face) else {
                return (false, false);
            };
            e.hops.copy_within(pos + 1..n, pos);
            e.hops[n - 1] = NO_HOP;
            e.hops_len -= 1;
            let gone = e.hops_len == 0 && e.is_route;
            if gone {
                e.is_route = false;
                e.strategy = StrategyId::default();
            }
            (true, gone)
        };
        let (found, gone) = if prefix.is_empty() {
            let r = self.root.as_mut().map_or((false, false), strip);
            if r.1 {
                self.root = None;
            }
            r
        } else {
            let bytes = prefix.as_bytes();
            let hash = self.key.hash(bytes);
            if self.chunk(hash).find(hash, bytes).is_none() {
                return false;
            }
            self.edit(prefix, strip)
        };
        if gone {
            self.routes -= 1;
            self.mark(prefix, -1);
            if !prefix.is_empty() {
                self.collect(prefix);
            }
        }
        found
    }

    /// Removes the route at `prefix` with all its next hops; false if there was none.
    pub fn remove_route(&mut self, prefix: &Name<'_>) -> bool {
        let faces: Vec<FaceId> = self
            .route(prefix)
            .map(|r| r.nexthops.iter().map(|h| h.face).collect())
            .unwrap_or_default();
        for f in &faces {
            self.remove_nexthop(prefix, *f);
        }
        !faces.is_empty()
    }

    /// Maintains the `M`-prefix marker for a route at `prefix` being added (+1) or removed (-1).
    fn mark(&mut self, prefix: &Name<'_>, delta: i32) {
        let depth = prefix.len();
        if depth <= self.stage1 {
            return;
        }
        let hash = self.key.hash(prefix.prefix(self.stage1).as_bytes());
        self.mark_hashed(hash, depth, delta);
    }

    /// [`mark`](Self::mark) for the `M`-prefix whose hash is `hash`.
    fn mark_hashed(&mut self, hash: u64, depth: usize, delta: i32) {
        let key = hash & MARKER_KEY;
        let counts = self.deep.entry(key).or_insert([0; MAX_PREFIX_DEPTH + 1]);
        counts[depth] = counts[depth].saturating_add_signed(delta);
        let max = counts.iter().rposition(|&c| c > 0).unwrap_or(0) as u8;
        if max == 0 {
            self.deep.remove(&key);
        }
        self.chunk_mut(hash).set_marker(hash, max);
    }

    /// The route at exactly `prefix`.
    pub fn route(&self, prefix: &Name<'_>) -> Option<Route> {
        let e = if prefix.is_empty() {
            self.root?
        } else {
            let bytes = prefix.as_bytes();
            let hash = self.key.hash(bytes);
            *self.chunk(hash).get(hash, bytes)?
        };
        e.is_route.then(|| Route {
            prefix: prefix.to_buf(),
            nexthops: e.hops[..usize::from(e.hops_len)].to_vec(),
            strategy: e.strategy,
        })
    }

    /// Every route, in no particular order.
    pub fn routes(&self) -> Vec<Route> {
        let mut out: Vec<Route> = self
            .root
            .iter()
            .filter(|e| e.is_route)
            .map(|e| Route {
                prefix: NameBuf::new(),
                nexthops: e.hops[..usize::from(e.hops_len)].to_vec(),
                strategy: e.strategy,
            })
            .collect();
        for c in &self.chunks {
            let free: std::collections::HashSet<u32> = c.free.iter().copied().collect();
            for (i, e) in c.entries.iter().enumerate() {
                if e.is_route
                    && !free.contains(&(i as u32))
                    && let Ok(prefix) = NameBuf::from_component_bytes(c.name_of(e))
                {
                    out.push(Route {
                        prefix,
                        nexthops: e.hops[..usize::from(e.hops_len)].to_vec(),
                        strategy: e.strategy,
                    });
                }
            }
        }
        out
    }

    /// Makes every change so far visible to readers, atomically.
    pub fn publish(&mut self) {
        self.generation += 1;
        self.shared.store(Arc::new(FibSnapshot {
            key: self.key,
            stage1: self.stage1,
            chunks: self.chunks.clone(),
            generation: self.generation,
            root: self.root,
        }));
    }

    /// Approximate heap bytes used by the tables (buckets, entries, their hashes, names), for
    /// sizing.
    pub fn memory_bytes(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| {
                size_of::<Chunk>()
                    + c.buckets.len() * size_of::<Bucket>()
                    + c.markers.len() * size_of::<MarkerBucket>()
                    + c.entries.capacity() * size_of::<Entry>()
                    + c.hashes.capacity() * size_of::<u64>()
                    + c.names.capacity()
            })
            .sum()
    }

    /// Longest-prefix match against the writer's current (possibly unpublished) state.
    pub fn lpm_unpublished(&self, name: &Name<'_>) -> Option<Route> {
        let mut hashes = [0u64; MAX_PREFIX_DEPTH];
        let n = prefix_hashes(&self.key, name, &mut hashes);
        let snap = FibSnapshot {
            key: self.key,
            stage1: self.stage1,
            chunks: self.chunks.clone(),
            generation: self.generation,
            root: self.root,
        };
        let m = snap.lpm(name, &hashes[..n])?;
        let prefix = name.prefix(m.prefix_len);
        self.route(&prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every live entry has exactly one slot, in its hash's probe sequence with its tag, and
    /// the bucket's wide bit of the slot says whether the entry has more than one next hop;
    /// every marker the writer counts is in its chunk's marker table with the deepest depth
    /// counted, and nothing else is.
    fn check_slots(fib: &Fib) {
        for (&key, counts) in &fib.deep {
            let max = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
            assert!(max > fib.stage1, "a marker below stage 1");
            assert_eq!(
                usize::from(fib.chunk(key).marker(key)),
                max,
                "marker {key:x}"
            );
        }
        let live: usize = fib.chunks.iter().map(|c| c.markers_live).sum();
        let words = fib
            .chunks
            .iter()
            .flat_map(|c| c.markers.iter().flat_map(|b| b.words))
            .filter(|&w| w != 0)
            .count();
        assert_eq!(
            (live, words),
            (fib.deep.len(), fib.deep.len()),
            "marker words"
        );
        for c in &fib.chunks {
            let free: std::collections::HashSet<u32> = c.free.iter().copied().collect();
            for (i, e) in c.entries.iter().enumerate() {
                let i = i as u32;
                let slots: Vec<u32> = c
                    .buckets
                    .iter()
                    .flat_map(|b| (0..SLOTS).filter(move |&s| b.tags[s] != 0 && b.index[s] == i))
                    .map(|_| 0)
                    .collect();
                if free.contains(&i) {
                    assert!(slots.is_empty(), "a free entry has a slot");
                    continue;
                }
                assert_eq!(slots.len(), 1, "entry {i} has {} slots", slots.len());
                let hash = c.hashes[i as usize];
                assert_eq!(c.find(hash, c.name_of(e)), Some(i), "found by its name");
                let (b, s) = c.slot_of(hash, i).expect("a slot");
                let bucket = &c.buckets[b];
                assert_eq!(bucket.tags[s], tag_of(hash));
                assert_eq!(
                    bucket.wide & (1 << s) != 0,
                    e.hops_len > 1,
                    "wide flag of entry {i}"
                );
            }
        }
    }

    proptest::proptest! {
        /// Next hops added and removed in any order (through one, two and several next hops,
        /// routes that become markers and back) keep every slot's flag and tag right.
        #[test]
        fn slots_follow_their_entries(
            stage1 in 1usize..3,
            ops in proptest::collection::vec((0u8..6, 1usize..4, 0u32..4, proptest::prelude::any::<bool>()), 1..80),
        ) {
            let (mut fib, _reader) = Fib::new(HashKey::new(3, 4), stage1);
            for (p, depth, face, add) in ops {
                let mut n = NameBuf::new();
                for d in 0..depth {
                    n.push_generic(&[b'a' + p, b'0' + d as u8]);
                }
                if add {
                    fib.add_nexthop(&n.as_name(), NextHop { face: FaceId(face), cost: face }).unwrap();
                } else {
                    fib.remove_nexthop(&n.as_name(), FaceId(face));
                }
                check_slots(&fib);
            }
        }
    }

    /// Stage-1 prefixes whose hashes share their top 56 bits share one marker word, which
    /// holds the deeper of their depths while either is counted.
    #[test]
    fn colliding_markers_keep_the_deeper_depth() {
        let (mut fib, _reader) = Fib::new(HashKey::new(3, 4), 2);
        let (a, b) = (0x1234_5678_9abc_de01, 0x1234_5678_9abc_de77);
        fib.mark_hashed(a, 3, 1);
        fib.mark_hashed(b, 5, 1);
        assert_eq!(fib.chunk(a).marker(a), 5);
        assert_eq!(fib.chunk(b).marker(b), 5);
        fib.mark_hashed(b, 5, -1);
        assert_eq!(fib.chunk(b).marker(b), 3);
        fib.mark_hashed(a, 3, -1);
        assert_eq!(fib.chunk(a).marker(a), 0);
        assert!(fib.deep.is_empty());
        check_slots(&fib);
    }

    /// Markers crowded into one chunk and one home bucket spill into the next buckets, grow
    /// the table, and are all found; removed ones are not.
    #[test]
    fn crowded_markers_spill_grow_and_go() {
        let mut chunk = Chunk::new(1);
        // Same chunk (top bits), same home bucket at every size (bits 8.. are 0 below bit 40).
        let hash = |i: u64| 0xABC0_0000_0000_0000 | i << 40;
        for i in 0..100 {
            chunk.set_marker(hash(i), 3 + (i % 20) as u8);
        }
        assert!(chunk.markers.len() > 1, "grew");
        assert!(chunk.markers[0].overflow != 0, "spilled");
        for i in 0..100 {
            assert_eq!(chunk.marker(hash(i)), 3 + (i % 20) as u8, "marker {i}");
        }
        for i in (0..100).step_by(2) {
            chunk.set_marker(hash(i), 0);
        }
        for i in 0..100 {
            let want = if i % 2 == 0 { 0 } else { 3 + (i % 20) as u8 };
            assert_eq!(chunk.marker(hash(i)), want, "marker {i}");
        }
        assert_eq!(chunk.markers_live, 50);
        // Absent keys miss, including one whose key part is zero.
        assert_eq!(chunk.marker(hash(1000)), 0);
        assert_eq!(chunk.marker(0x7), 0);
    }

    #[test]
    fn a_prefix_too_long_is_refused() {
        let (mut fib, _reader) = Fib::new(HashKey::new(3, 4), 2);
        let mut n = NameBuf::new();
        n.push_generic(&vec![b'x'; MAX_PREFIX_BYTES]);
        let hop = NextHop {
            face: FaceId(1),
            cost: 0,
        };
        assert!(matches!(
            fib.add_nexthop(&n.as_name(), hop),
            Err(FibError::TooLong(l)) if l > MAX_PREFIX_BYTES
        ));
        assert!(fib.is_empty());
        let mut ok = NameBuf::new();
        ok.push_generic(&vec![b'x'; 60_000]);
        fib.add_nexthop(&ok.as_name(), hop).unwrap();
        assert_eq!(
            fib.lpm_unpublished(&ok.as_name()).map(|r| r.nexthops),
            Some(vec![hop])
        );
    }

    #[test]
    fn a_probe_reads_one_cache_line_of_an_entry() {
        assert_eq!(size_of::<Bucket>(), 64);
        assert_eq!(size_of::<MarkerBucket>(), 64);
        assert_eq!(size_of::<Entry>(), 128);
        // What a lookup reads of a chunk is in its first line.
        assert!(core::mem::offset_of!(Chunk, entries) + size_of::<Vec<Entry>>() <= 64);
        assert_eq!(align_of::<Chunk>(), 64);
        // Everything a probe compares (depth, marker, inline name) and the first next hop are
        // in line 0; the other next hops are in line 1.
        assert!(core::mem::offset_of!(Entry, inline) + INLINE_NAME <= 64);
        assert_eq!(
            core::mem::offset_of!(Entry, hops) + size_of::<NextHop>(),
            64
        );
    }
}
