//! The FIB: longest-prefix match on name components, shared by all shards, read without locks.
//!
//! # Layout
//! A hash table of prefixes (Augustus, seed 001 §3.1) keyed by the keyed hash of the prefix's
//! component bytes, split into [`CHUNKS`] chunks by the hash's top bits. Each chunk's route
//! table is open addressing with linear probing over 32-byte entries, two to a cache line (no
//! buckets of indices in front of them), a power of two long and at most half full: a route
//! sits in its home slot or the next in 9 cases of 10. An entry holds what a probe compares,
//! the prefix's whole 64-bit keyed hash, and up to two next hops; the next hops of a route
//! with more than two are in a chunk-local array of one-line records. So a lookup at depth
//! `k` reads one random line, whose address the hash alone gives:
//! [`Shard::process_burst`](crate::Shard::process_burst) prefetches it (and the next slot)
//! while earlier frames run ([`FibSnapshot::prefetch`]). Removal shifts the rest of the probe
//! run back (no tombstones). The tables are plain arrays, one set per chunk. A chunk's arrays
//! stay below 2 MiB up to about 10^7 routes (10^6 routes: 64 KiB of slots per chunk): the
//! `ndx` binary's allocator (`ndx_mem::HugePages`) serves them as blocks of shared 2 MiB
//! huge-page regions.
//!
//! # Lookups match on the hash
//! A lookup compares hashes, not names: the names are the writer's, in a chunk-local byte
//! array beside the slots that lookups never read. The writer holds at most one prefix per
//! hash: a route whose prefix's hash equals another held prefix's is refused
//! ([`FibError::HashCollision`]; with SipHash's 64 bits about one pair in 2^64, and another
//! key separates them). A lookup is then wrong only when a name's prefix that is
//! not in the FIB has a held prefix's hash: about 2^-64 per probe, which a sender cannot aim
//! at without the per-router key. What it buys is memory: the slot shrank from one line (a
//! 16-bit tag, a name of up to 36 bytes inline, two next hops) to half of one, so at 10^6
//! routes the route tables take 64 MiB instead of 128. At that size every lookup's line is a
//! DRAM access that the burst's prefetch hides, but on this VM what the prefetches cost
//! grows with the table's span (`benches/results/forwarding-passes.md`, eighteenth pass): the Interests of the
//! worst-case exchange took 212 ns instead of 256.
//!
//! Until the twelfth speed pass a chunk had 64-byte buckets of 7 (tag, index) slots in front
//! of two-line entries: two dependent random lines per lookup, on two pages, and at 10^6
//! routes on this VM each page costs a nested page walk (`benches/results/forwarding-passes.md`).
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
//! reads one random line of the route table instead of two. Two `M`-prefixes whose hashes
//! agree in their top 56 bits share a word holding the deeper depth, which can only start a
//! lookup deeper than needed: every probe from there compares whole hashes.
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
/// Marker words per 64-byte marker bucket.
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
    /// Another prefix in the FIB has the same 64-bit keyed hash (about one chance in 2^64
    /// per pair of prefixes): lookups match on the hash, so the FIB cannot hold both under
    /// this key. Another hash key (the router's `[router] hash_key`) separates them.
    #[error(
        "another prefix in the FIB has this prefix's 64-bit keyed hash; the FIB cannot hold \
         both under this hash key (another [router] hash_key separates them)"
    )]
    HashCollision,
}

/// Longest prefix encoding the FIB accepts, in bytes (a packet is at most 8800).
pub const MAX_PREFIX_BYTES: usize = u16::MAX as usize;

/// Next hops kept inside the entry; a route with more keeps all of them in a record of the
/// chunk's hop array (one more cache miss when it matches).
const INLINE_HOPS: usize = 2;

/// One slot of a chunk's route table, half a cache line: a route, or an empty slot (`depth`
/// 0). What a probe compares (the prefix's whole keyed hash) and a route of up to
/// [`INLINE_HOPS`] next hops are in it; the name is the writer's (see [`Chunk::keys`]).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Entry {
    /// The prefix's keyed hash: a lookup matches on it alone. The writer never holds two
    /// prefixes with one hash in the FIB ([`FibError::HashCollision`]).
    hash: u64,
    /// Components in the prefix; 0 marks an empty slot (the root `/` is kept apart).
    depth: u8,
    is_route: bool,
    strategy: StrategyId,
    hops_len: u8,
    /// Index of the chunk's [`HopRecord`] holding the next hops, when there are more than
    /// [`INLINE_HOPS`].
    more: u32,
    /// The next hops, in the order they were added, when there are at most [`INLINE_HOPS`].
    hops: [NextHop; INLINE_HOPS],
}

impl Entry {
    const EMPTY: Entry = Entry {
        hash: 0,
        depth: 0,
        is_route: false,
        strategy: StrategyId(0),
        hops_len: 0,
        more: 0,
        hops: [NO_HOP; INLINE_HOPS],
    };

    fn is_empty(&self) -> bool {
        self.depth == 0
    }
}

/// The next hops of a route with more than [`INLINE_HOPS`] of them: one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct HopRecord([NextHop; MAX_NEXTHOPS]);

/// What the writer edits of a prefix (the root's, or a decoded entry's): whether it is a
/// route, its strategy and its next hops.
#[derive(Clone, Copy, Debug)]
struct Value {
    is_route: bool,
    strategy: StrategyId,
    hops_len: u8,
    hops: [NextHop; MAX_NEXTHOPS],
}

impl Value {
    const NONE: Value = Value {
        is_route: false,
        strategy: StrategyId(0),
        hops_len: 0,
        hops: [NO_HOP; MAX_NEXTHOPS],
    };

    fn hops(&self) -> &[NextHop] {
        &self.hops[..usize::from(self.hops_len)]
    }
}

const NO_HOP: NextHop = NextHop {
    face: FaceId(u32::MAX),
    cost: u32::MAX,
};

/// 64-byte bucket of the stage-1 marker table: 7 marker words, probed in bucket order.
///
/// A word is the stage-1 prefix's hash with its low 8 bits replaced by the deepest route below
/// that prefix (0 for an empty slot; a marker's depth is at least 2). No name is kept: a
/// marker only tells a lookup how deep to start, and every probe from there compares hashes,
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

/// One of the [`CHUNKS`] tables. A lookup does not read this descriptor (only a route with
/// more than [`INLINE_HOPS`] next hops reads its hop records through it): a snapshot keeps
/// the route and marker arrays' addresses in dense arrays of its own ([`FibSnapshot`]).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct Chunk {
    /// The route table: open addressing with linear probing over half-line entries, a power
    /// of two long and at most half full, so that a route is in its home slot or the next
    /// in 9 cases of 10.
    /// Shared (`Arc`) so that a snapshot keeps the tables of each chunk in a dense array of
    /// its own ([`FibSnapshot`]): a lookup reaches them without the chunk descriptor.
    entries: Arc<[Entry]>,
    /// The stage-1 markers of the prefixes whose hashes pick this chunk, apart from the routes:
    /// at 10^6 routes under 15,600 stage-1 prefixes they are 250 KB that stay in cache, where
    /// as entries of the route table each lookup paid another random line.
    markers: Arc<[MarkerBucket]>,
    /// Next hops of the routes that have more than [`INLINE_HOPS`].
    more: Vec<HopRecord>,
    /// Unused records of `more`.
    more_free: Vec<u32>,
    /// Each slot's name, in `names`: the writer's (to tell prefixes with one hash apart, and
    /// to list routes); lookups never read it.
    keys: Box<[NameKey]>,
    names: Vec<u8>,
    live: usize,
    garbage_bytes: usize,
    markers_live: usize,
}

/// Where a slot's name is in its chunk's name array.
#[derive(Clone, Copy, Debug, Default)]
struct NameKey {
    off: u32,
    len: u16,
}

impl Chunk {
    /// An empty chunk of `slots` route slots (a power of two).
    fn new(slots: usize) -> Self {
        Self {
            entries: vec![Entry::EMPTY; slots].into(),
            markers: vec![MarkerBucket::default(); 1].into(),
            more: Vec::new(),
            more_free: Vec::new(),
            keys: vec![NameKey::default(); slots].into_boxed_slice(),
            names: Vec::new(),
            live: 0,
            garbage_bytes: 0,
            markers_live: 0,
        }
    }

    /// The marker of the stage-1 prefix whose hash is `hash`: the depth of the deepest route
    /// below it, or 0 when it has none (or the route table's depth bound was not recorded).
    #[cfg(test)]
    fn marker(&self, hash: u64) -> u8 {
        marker_in(&self.markers, hash)
    }

    /// The entry of the prefix whose keyed hash is `hash` (what a snapshot's lookup finds).
    #[cfg(test)]
    fn get(&self, hash: u64) -> Option<&Entry> {
        self.probe(hash).map(|i| &self.entries[i])
    }

    /// Records `depth` as the marker of the stage-1 prefix hash `hash` (0 removes it); grows
    /// the marker table when 85% full.
    fn set_marker(&mut self, hash: u64, depth: u8) {
        let key = hash & MARKER_KEY;
        let mask = self.markers.len() - 1;
        let mut b = (hash >> 8) as usize & mask;
        // Found first, so that a snapshot's shared table is copied only for a real write.
        let mut found = None;
        for _ in 0..self.markers.len() {
            let bucket = &self.markers[b];
            if let Some(i) = bucket
                .words
                .iter()
                .position(|w| *w != 0 && *w & MARKER_KEY == key)
            {
                found = Some((b, i));
                break;
            }
            if bucket.overflow == 0 {
                break;
            }
            b = (b + 1) & mask;
        }
        if let Some((b, i)) = found {
            let w = &mut Arc::make_mut(&mut self.markers)[b].words[i];
            if depth == 0 {
                *w = 0;
                self.markers_live -= 1;
            } else {
                *w = key | u64::from(depth);
            }
            return;
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
        let markers = Arc::make_mut(&mut self.markers);
        loop {
            let bucket = &mut markers[b];
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
            vec![MarkerBucket::default(); buckets].into(),
        );
        for w in old.iter().flat_map(|b| b.words) {
            if w != 0 {
                self.place_marker(w);
            }
        }
    }

    /// The name of the prefix in slot `i`.
    fn name_at(&self, i: usize) -> &[u8] {
        let k = self.keys[i];
        let off = k.off as usize;
        self.names.get(off..off + usize::from(k.len)).unwrap_or(&[])
    }

    /// The next hops of the route in `e` (one of this chunk's entries).
    #[inline]
    fn hops_of<'e>(&'e self, e: &'e Entry) -> &'e [NextHop] {
        let n = usize::from(e.hops_len);
        if n <= INLINE_HOPS {
            &e.hops[..n]
        } else {
            self.more
                .get(e.more as usize)
                .map_or(&[], |r| &r.0[..n.min(MAX_NEXTHOPS)])
        }
    }

    /// The slot holding the prefix whose keyed hash is `hash` (see [`probe_in`]).
    #[inline]
    fn probe(&self, hash: u64) -> Option<usize> {
        probe_in(&self.entries, hash)
    }

    /// The slot holding the prefix named `name` (whose hash is `hash`): the writer's lookup,
    /// which also compares the name.
    fn find(&self, hash: u64, name: &[u8]) -> Option<usize> {
        self.probe(hash).filter(|&i| self.name_at(i) == name)
    }

    /// The slot of the prefix named `name` (hash `hash`, `depth` components), inserted as a
    /// prefix with no route if absent; refused when another prefix held has the same hash.
    fn slot_for(&mut self, hash: u64, name: &[u8], depth: u8) -> Result<usize, FibError> {
        match self.probe(hash) {
            Some(i) if self.name_at(i) == name => Ok(i),
            Some(_) => Err(FibError::HashCollision),
            None => Ok(self.insert(hash, name, depth)),
        }
    }

    /// The route data of slot `i`.
    fn value(&self, i: usize) -> Value {
        let e = &self.entries[i];
        let mut v = Value {
            is_route: e.is_route,
            strategy: e.strategy,
            hops_len: e.hops_len,
            ..Value::NONE
        };
        let hops = self.hops_of(e);
        v.hops[..hops.len()].copy_from_slice(hops);
        v
    }

    /// Writes `v` into slot `i`: next hops inline when they fit, else in a hop record (taken
    /// when the route grows past [`INLINE_HOPS`], given back when it shrinks to them).
    fn store(&mut self, i: usize, v: &Value) {
        let e = self.entries[i];
        let had_record = usize::from(e.hops_len) > INLINE_HOPS;
        let n = usize::from(v.hops_len);
        let mut new = Entry {
            is_route: v.is_route,
            strategy: v.strategy,
            hops_len: v.hops_len,
            more: 0,
            hops: [NO_HOP; INLINE_HOPS],
            ..e
        };
        if n <= INLINE_HOPS {
            new.hops[..n].copy_from_slice(v.hops());
            if had_record {
                self.more_free.push(e.more);
            }
        } else {
            let r = if had_record {
                e.more
            } else if let Some(r) = self.more_free.pop() {
                r
            } else {
                self.more.push(HopRecord([NO_HOP; MAX_NEXTHOPS]));
                (self.more.len() - 1) as u32
            };
            self.more[r as usize] = HopRecord(v.hops);
            new.more = r;
        }
        Arc::make_mut(&mut self.entries)[i] = new;
    }

    /// Inserts a new prefix with no route (the caller checked that no prefix with its hash
    /// is held), growing the table first when it would be more than half full; returns its
    /// slot.
    fn insert(&mut self, hash: u64, name: &[u8], depth: u8) -> usize {
        if (self.live + 1) * 2 > self.entries.len() {
            self.rebuild(self.entries.len() * 2);
        }
        let entry = Entry {
            hash,
            depth,
            ..Entry::EMPTY
        };
        let key = self.keep_name(name);
        self.live += 1;
        self.place(entry, key)
    }

    /// Appends `name` to the name array; where it is.
    fn keep_name(&mut self, name: &[u8]) -> NameKey {
        let key = NameKey {
            off: self.names.len() as u32,
            len: name.len() as u16,
        };
        self.names.extend_from_slice(name);
        key
    }

    /// Puts `entry` (named at `key`) in the first empty slot of its hash's probe run.
    fn place(&mut self, entry: Entry, key: NameKey) -> usize {
        let mask = self.entries.len() - 1;
        let mut i = entry.hash as usize & mask;
        while !self.entries[i].is_empty() {
            i = (i + 1) & mask;
        }
        Arc::make_mut(&mut self.entries)[i] = entry;
        self.keys[i] = key;
        i
    }

    /// Empties slot `i`, then moves back the entries of the probe run behind it that may
    /// (backward-shift deletion: no tombstones, so an empty slot still ends every run).
    fn remove(&mut self, i: usize) {
        let e = self.entries[i];
        if e.is_empty() {
            return;
        }
        if usize::from(e.hops_len) > INLINE_HOPS {
            self.more_free.push(e.more);
        }
        self.garbage_bytes += usize::from(self.keys[i].len);
        let entries = Arc::make_mut(&mut self.entries);
        let mask = entries.len() - 1;
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            if entries[j].is_empty() {
                break;
            }
            let home = entries[j].hash as usize & mask;
            // Entry j may fill the hole when its home is not in the (cyclic) range (hole, j].
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                entries[hole] = entries[j];
                self.keys[hole] = self.keys[j];
                hole = j;
            }
        }
        entries[hole] = Entry::EMPTY;
        self.keys[hole] = NameKey::default();
        self.live -= 1;
        if self.garbage_bytes > 4096 && self.garbage_bytes > self.names.len() / 2 {
            self.rebuild(self.entries.len());
        }
    }

    /// Rebuilds the route table with `slots` slots: compacts the names and the hop records.
    fn rebuild(&mut self, slots: usize) {
        let mut old = std::mem::replace(self, Chunk::new(slots));
        self.markers = std::mem::take(&mut old.markers);
        self.markers_live = old.markers_live;
        self.names.reserve(old.names.len() - old.garbage_bytes);
        for (i, e) in old.entries.iter().enumerate() {
            if e.is_empty() {
                continue;
            }
            let mut moved = *e;
            let key = self.keep_name(old.name_at(i));
            if usize::from(e.hops_len) > INLINE_HOPS {
                self.more.push(old.more[e.more as usize]);
                moved.more = (self.more.len() - 1) as u32;
            }
            self.place(moved, key);
            self.live += 1;
        }
    }
}

/// The marker in `markers` (a chunk's marker table) of the stage-1 prefix whose hash is
/// `hash`: the depth of the deepest route below it, or 0 when it has none (or the route
/// table's depth bound was not recorded).
#[inline]
fn marker_in(markers: &[MarkerBucket], hash: u64) -> u8 {
    let mask = markers.len().wrapping_sub(1);
    let want = hash & MARKER_KEY;
    let mut b = (hash >> 8) as usize & mask;
    for _ in 0..markers.len() {
        let Some(bucket) = markers.get(b) else {
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

/// The slot of `entries` (a chunk's route table) holding the prefix whose keyed hash is
/// `hash`: what a lookup reads, matching on the hash alone (at most one prefix per hash is
/// held).
#[inline]
fn probe_in(entries: &[Entry], hash: u64) -> Option<usize> {
    let mask = entries.len().wrapping_sub(1);
    let mut i = hash as usize & mask;
    // The table is at most half full: an empty slot ends every probe run.
    for _ in 0..entries.len() {
        let e = &entries[i];
        if e.is_empty() {
            return None;
        }
        if e.hash == hash {
            return Some(i);
        }
        i = (i + 1) & mask;
    }
    None
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
    /// Each chunk's route table, indexed as `chunks` (the same arrays, shared): a lookup or
    /// a prefetch starts from a 16-byte slice in this dense 16 KiB array, which stays in
    /// cache, instead of from the chunk's descriptor behind its `Arc` (1,024 lines on as many
    /// heap pages: on this VM a prefetch whose address waited for a descriptor, or whose
    /// page missed the TLB, held the burst; `benches/results/engine.md`, eng-d).
    entries: Box<[Arc<[Entry]>]>,
    /// Each chunk's marker table, likewise.
    markers: Box<[Arc<[MarkerBucket]>]>,
    generation: u64,
    root: Option<Value>,
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
    fn new(
        key: HashKey,
        stage1: usize,
        chunks: Vec<Arc<Chunk>>,
        generation: u64,
        root: Option<Value>,
    ) -> Self {
        Self {
            key,
            stage1,
            entries: chunks.iter().map(|c| c.entries.clone()).collect(),
            markers: chunks.iter().map(|c| c.markers.clone()).collect(),
            chunks,
            generation,
            root,
        }
    }

    fn chunk(&self, hash: u64) -> &Chunk {
        &self.chunks[(hash >> (64 - CHUNK_BITS)) as usize]
    }

    /// The route table of `hash`'s chunk.
    #[inline]
    fn entries(&self, hash: u64) -> &[Entry] {
        &self.entries[(hash >> (64 - CHUNK_BITS)) as usize]
    }

    /// The marker table of `hash`'s chunk.
    #[inline]
    fn markers(&self, hash: u64) -> &[MarkerBucket] {
        &self.markers[(hash >> (64 - CHUNK_BITS)) as usize]
    }

    /// The entry of the prefix whose keyed hash is `hash`.
    #[inline]
    fn get(&self, hash: u64) -> Option<&Entry> {
        let t = self.entries(hash);
        probe_in(t, hash).map(|i| &t[i])
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
        let start = self.start_depth(n, |k| hashes[k - 1]);
        for k in (1..=start).rev() {
            let h = hashes[k - 1];
            if let Some(e) = self.get(h)
                && e.is_route
            {
                return Some(self.matched(h, e));
            }
        }
        self.root_match()
    }

    /// Longest-prefix match of the name `hashes` was built for, hashing prefixes only as the
    /// lookup reaches them (the stage-1 prefix and the marker's depth in the common case).
    /// Build `hashes` with this snapshot's key and [`stage1`](Self::stage1).
    #[inline]
    pub fn lpm_hashed<'s>(&'s self, hashes: &mut NameHashes<'_>) -> Option<FibMatch<'s>> {
        // The start depth [`lpm_start`](Self::lpm_start) read a pass before, or the marker now.
        let start = match hashes.fib_start(self.generation) {
            Some(start) => start,
            None => self.start_depth(hashes.name().len(), |k| hashes.prefix(k)),
        };
        for k in (1..=start).rev() {
            let hash = hashes.prefix(k);
            if let Some(e) = self.get(hash)
                && e.is_route
            {
                return Some(self.matched(hash, e));
            }
        }
        self.root_match()
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
            usize::from(marker_in(self.markers(h), h)).clamp(m, n)
        } else {
            n
        }
    }

    /// The depth [`lpm_hashed`](Self::lpm_hashed) will probe first for the name `hashes` was
    /// built for, read from the stage-1 marker (prefetch it with
    /// [`prefetch_marker`](Self::prefetch_marker) a pass before): a burst prefetches that
    /// depth's bucket and entries. Uses the stage-1 hash if computed, else reports stage 1.
    /// A depth read from the marker is noted in `hashes`, and `lpm_hashed` on this snapshot
    /// (or another of its generation) starts there without reading the marker again.
    #[inline]
    pub fn lpm_start(&self, hashes: &mut NameHashes<'_>) -> usize {
        let len = hashes.name().len();
        let m = self.stage1.min(len.min(MAX_PREFIX_DEPTH));
        match hashes.cached(m) {
            Some(h) => {
                let start = self.start_depth(len, |_| h);
                hashes.note_fib_start(self.generation, start);
                start
            }
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
            self.prefetch_marker_of(hashes.prefix(self.stage1));
        }
    }

    /// [`prefetch_marker`](Self::prefetch_marker) for a name longer than stage 1 whose
    /// stage-1 prefix hash `h` the caller holds.
    #[inline]
    pub(crate) fn prefetch_marker_of(&self, h: u64) {
        let t = self.markers(h);
        if let Some(b) = t.get((h >> 8) as usize & t.len().wrapping_sub(1)) {
            ndx_mem::prefetch(b);
        }
    }

    /// [`prefetch`](Self::prefetch) for the prefix (of `1..=min(len, 32)` components) whose
    /// hash `h` the caller holds.
    #[inline]
    pub(crate) fn prefetch_of(&self, h: u64) {
        let t = self.entries(h);
        let i = h as usize & t.len().wrapping_sub(1);
        if let Some(e) = t.get(i) {
            ndx_mem::prefetch(e);
        }
        // The next slot too: a route is in its home slot or the next in 9 cases of 10 (at
        // most half full), and the two lines are usually in one page.
        if let Some(e) = t.get(i + 1) {
            ndx_mem::prefetch(e);
        }
    }

    /// Prefetches the home slot of the name's `k`-component prefix (`1..=min(len, 32)`;
    /// other depths prefetch nothing), the line a lookup of that prefix usually reads alone:
    /// the prefetches of a burst overlap their cache misses.
    /// The stage-1 prefix's hash is already computed; other depths are hashed now.
    #[inline]
    pub fn prefetch(&self, hashes: &mut NameHashes<'_>, k: usize) {
        if !prefetchable(hashes, k) {
            return;
        }
        self.prefetch_of(hashes.prefix(k));
    }

    /// Components in the first lookup stage (build [`NameHashes`] with it).
    pub fn stage1(&self) -> usize {
        self.stage1
    }

    /// The match of `e`, the entry of the prefix whose hash is `hash` (the chunk's hop
    /// records are read only for a route with more than [`INLINE_HOPS`] next hops).
    #[inline]
    fn matched<'s>(&'s self, hash: u64, e: &'s Entry) -> FibMatch<'s> {
        FibMatch {
            prefix_len: usize::from(e.depth),
            nexthops: self.chunk(hash).hops_of(e),
            strategy: e.strategy,
        }
    }

    fn root_match(&self) -> Option<FibMatch<'_>> {
        self.root.as_ref().map(|v| FibMatch {
            prefix_len: 0,
            nexthops: v.hops(),
            strategy: v.strategy,
        })
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
    #[inline]
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
    root: Option<Value>,
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
        let snapshot = FibSnapshot::new(key, stage1, chunks.clone(), 0, None);
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

    /// Finds or creates the entry of `prefix` (depth >= 1) and edits its route data; refused
    /// when another prefix held has its hash.
    fn edit<R>(
        &mut self,
        prefix: &Name<'_>,
        f: impl FnOnce(&mut Value) -> R,
    ) -> Result<R, FibError> {
        let bytes = prefix.as_bytes();
        let hash = self.key.hash(bytes);
        let depth = prefix.len() as u8;
        let chunk = self.chunk_mut(hash);
        let slot = chunk.slot_for(hash, bytes, depth)?;
        let mut v = chunk.value(slot);
        let r = f(&mut v);
        chunk.store(slot, &v);
        Ok(r)
    }

    /// Removes `prefix`'s entry if it is no longer a route.
    fn collect(&mut self, prefix: &Name<'_>) {
        let bytes = prefix.as_bytes();
        let hash = self.key.hash(bytes);
        if let Some(i) = self.chunk(hash).find(hash, bytes)
            && !self.chunk(hash).entries[i].is_route
        {
            self.chunk_mut(hash).remove(i);
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
        let mut update = |e: &mut Value| -> Result<(), FibError> {
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
            let root = self.root.get_or_insert(Value::NONE);
            update(root)?;
        } else {
            self.edit(prefix, update)??;
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
        if !self.chunk(hash).entries[i].is_route {
            return false;
        }
        Arc::make_mut(&mut self.chunk_mut(hash).entries)[i].strategy = strategy;
        true
    }

    /// Removes one next hop; the route goes when its last next hop does. Returns whether the
    /// next hop existed.
    pub fn remove_nexthop(&mut self, prefix: &Name<'_>, face: FaceId) -> bool {
        let strip = |e: &mut Value| -> (bool, bool) {
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
            // Found above, so edited in place (no insertion, no collision).
            self.edit(prefix, strip).unwrap_or((false, false))
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
        let deepest = |c: &[u32; MAX_PREFIX_DEPTH + 1]| c.iter().rposition(|&n| n > 0).unwrap_or(0);
        let before = deepest(counts);
        counts[depth] = counts[depth].saturating_add_signed(delta);
        let max = deepest(counts) as u8;
        if max == 0 {
            self.deep.remove(&key);
        }
        // An unchanged marker leaves the chunk alone (no copy of a published one).
        if usize::from(max) != before {
            self.chunk_mut(hash).set_marker(hash, max);
        }
    }

    /// The route at exactly `prefix`.
    pub fn route(&self, prefix: &Name<'_>) -> Option<Route> {
        let v = if prefix.is_empty() {
            self.root?
        } else {
            let bytes = prefix.as_bytes();
            let hash = self.key.hash(bytes);
            let chunk = self.chunk(hash);
            chunk.value(chunk.find(hash, bytes)?)
        };
        v.is_route.then(|| Route {
            prefix: prefix.to_buf(),
            nexthops: v.hops().to_vec(),
            strategy: v.strategy,
        })
    }

    /// Every route, in no particular order.
    pub fn routes(&self) -> Vec<Route> {
        let mut out: Vec<Route> = self
            .root
            .iter()
            .filter(|v| v.is_route)
            .map(|v| Route {
                prefix: NameBuf::new(),
                nexthops: v.hops().to_vec(),
                strategy: v.strategy,
            })
            .collect();
        for c in &self.chunks {
            for (i, e) in c.entries.iter().enumerate() {
                if e.is_route
                    && let Ok(prefix) = NameBuf::from_component_bytes(c.name_at(i))
                {
                    out.push(Route {
                        prefix,
                        nexthops: c.hops_of(e).to_vec(),
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
        self.shared.store(Arc::new(FibSnapshot::new(
            self.key,
            self.stage1,
            self.chunks.clone(),
            self.generation,
            self.root,
        )));
    }

    /// Approximate heap bytes used by the tables (route slots and where their names are,
    /// markers, hop records, names), for sizing.
    pub fn memory_bytes(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| {
                size_of::<Chunk>()
                    + c.entries.len() * (size_of::<Entry>() + size_of::<NameKey>())
                    + c.markers.len() * size_of::<MarkerBucket>()
                    + c.more.capacity() * size_of::<HopRecord>()
                    + c.more_free.capacity() * size_of::<u32>()
                    + c.names.capacity()
            })
            .sum()
    }

    /// Longest-prefix match against the writer's current (possibly unpublished) state.
    pub fn lpm_unpublished(&self, name: &Name<'_>) -> Option<Route> {
        let mut hashes = [0u64; MAX_PREFIX_DEPTH];
        let n = prefix_hashes(&self.key, name, &mut hashes);
        let snap = FibSnapshot::new(
            self.key,
            self.stage1,
            self.chunks.clone(),
            self.generation,
            self.root,
        );
        let m = snap.lpm(name, &hashes[..n])?;
        let prefix = name.prefix(m.prefix_len);
        self.route(&prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start depth `lpm_start` notes in a name's hashes is used by `lpm_hashed` on a
    /// snapshot of the same generation alone: after a deeper route is published, the new
    /// snapshot reads its own marker; rebuilding the hashes forgets the note.
    #[test]
    fn a_noted_start_depth_serves_its_generation_alone() {
        let key = HashKey::new(3, 9);
        let (mut fib, reader) = Fib::new(key, 2);
        let uri = |s: &str| NameBuf::from_uri(s).unwrap();
        let hop = |f| NextHop {
            face: FaceId(f),
            cost: 1,
        };
        fib.add_nexthop(&uri("/a/b/c").as_name(), hop(1)).unwrap();
        fib.publish();
        let old = reader.snapshot();
        let name = uri("/a/b/c/d/e");
        let n = name.as_name();
        // Without the stage-1 hash computed, `lpm_start` reads no marker and notes nothing.
        let mut h = NameHashes::new(&key, &n, 2);
        assert_eq!(old.lpm_start(&mut h), 2);
        assert_eq!(h.fib_start(old.generation()), None);
        h.reset(&key, &n, 2, true);
        assert_eq!(old.lpm_start(&mut h), 3);
        assert_eq!(h.fib_start(old.generation()), Some(3));
        assert_eq!(old.lpm_hashed(&mut h).map(|m| m.prefix_len), Some(3));
        fib.add_nexthop(&uri("/a/b/c/d").as_name(), hop(2)).unwrap();
        fib.publish();
        let new = reader.snapshot();
        assert_ne!(new.generation(), old.generation());
        let m = new.lpm_hashed(&mut h).expect("a route");
        assert_eq!((m.prefix_len, m.nexthops[0].face), (4, FaceId(2)));
        assert_eq!(old.lpm_hashed(&mut h).map(|m| m.prefix_len), Some(3));
        assert_eq!(new.lpm_start(&mut h), 4);
        assert_eq!(new.lpm_hashed(&mut h).map(|m| m.prefix_len), Some(4));
        h.reset(&key, &n, 2, true);
        assert_eq!(h.fib_start(new.generation()), None);
        let mut fresh = NameHashes::new(&key, &n, 2);
        assert_eq!(fresh.fib_start(new.generation()), None);
        assert_eq!(new.lpm_hashed(&mut fresh).map(|m| m.prefix_len), Some(4));
    }

    /// A snapshot's dense per-chunk arrays are its own chunks' tables, shared, not copies:
    /// an edit after a publish copies the edited chunk's tables for the writer, and the old
    /// snapshot keeps reading the tables it was published with (through the dense arrays, as
    /// the burst's lookups and prefetches do).
    #[test]
    fn a_route_that_leaves_its_marker_unchanged_copies_no_marker_table() {
        let key = HashKey::new(6, 9);
        let (mut fib, reader) = Fib::new(key, 2);
        let uri = |s: &str| NameBuf::from_uri(s).unwrap();
        let hop = NextHop {
            face: FaceId(1),
            cost: 1,
        };
        fib.add_nexthop(&uri("/m/s/deep/er").as_name(), hop)
            .unwrap();
        fib.publish();
        let snap = reader.snapshot();
        let shared = |fib: &Fib| {
            fib.chunks
                .iter()
                .zip(snap.chunks.iter())
                .all(|(w, r)| Arc::ptr_eq(&w.markers, &r.markers))
        };
        assert!(shared(&fib));
        // Same stage-1 prefix (/m/s), shallower than its deepest route: the marker (4)
        // stays, so no chunk's marker table is copied away from the published snapshot.
        fib.add_nexthop(&uri("/m/s/other").as_name(), hop).unwrap();
        assert!(shared(&fib), "an unchanged marker copied a marker table");
        // A deeper one changes the marker: the writer now has its own copy.
        fib.add_nexthop(&uri("/m/s/a/b/c").as_name(), hop).unwrap();
        assert!(
            !shared(&fib),
            "a changed marker must be written (copy on write)"
        );
        fib.publish();
        let n = uri("/m/s/a/b/c/d");
        let mut h = NameHashes::new(&key, &n.as_name(), 2);
        let m = reader.snapshot().lpm_hashed(&mut h).map(|m| m.prefix_len);
        assert_eq!(m, Some(5));
    }

    #[test]
    fn a_snapshot_reads_the_tables_of_its_own_chunks() {
        let key = HashKey::new(5, 8);
        let (mut fib, reader) = Fib::new(key, 2);
        let uri = |s: &str| NameBuf::from_uri(s).unwrap();
        let hop = |f| NextHop {
            face: FaceId(f),
            cost: 1,
        };
        for i in 0..300 {
            fib.add_nexthop(&uri(&format!("/a/s{}/h{i}", i % 7)).as_name(), hop(1))
                .unwrap();
        }
        fib.publish();
        let old = reader.snapshot();
        let same = |snap: &FibSnapshot| {
            snap.chunks.iter().enumerate().all(|(c, chunk)| {
                Arc::ptr_eq(&snap.entries[c], &chunk.entries)
                    && Arc::ptr_eq(&snap.markers[c], &chunk.markers)
            })
        };
        assert!(same(&old));
        let lookup = |snap: &FibSnapshot, s: &str| {
            let name = uri(s);
            let n = name.as_name();
            let mut h = NameHashes::new(&key, &n, 2);
            snap.lpm_hashed(&mut h)
                .map(|m| (m.prefix_len, m.nexthops[0].face))
        };
        assert_eq!(lookup(&old, "/a/s3/h3/x/y"), Some((3, FaceId(1))));
        // A deeper route (a new marker depth, a new slot) and a changed next hop.
        fib.add_nexthop(&uri("/a/s3/h3/x").as_name(), hop(2))
            .unwrap();
        fib.remove_nexthop(&uri("/a/s4/h4").as_name(), FaceId(1));
        fib.add_nexthop(&uri("/a/s4/h4").as_name(), hop(3)).unwrap();
        fib.publish();
        let new = reader.snapshot();
        assert!(same(&new));
        assert_eq!(lookup(&new, "/a/s3/h3/x/y"), Some((4, FaceId(2))));
        assert_eq!(lookup(&new, "/a/s4/h4/x"), Some((3, FaceId(3))));
        assert_eq!(lookup(&old, "/a/s3/h3/x/y"), Some((3, FaceId(1))));
        assert_eq!(lookup(&old, "/a/s4/h4/x"), Some((3, FaceId(1))));
        assert!(
            same(&old),
            "the old snapshot's tables were copied, not edited"
        );
    }

    /// Every entry sits in its hash's probe run (no empty slot between its home and it), is
    /// found by its hash and by its name, and no other entry has its hash; no table is more
    /// than half full; every hop record is
    /// held by exactly one route with more than [`INLINE_HOPS`] next hops or is free; every
    /// marker the writer counts is in its chunk's marker table with the deepest depth counted,
    /// and nothing else is.
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
            check_chunk(c);
        }
    }

    fn check_chunk(c: &Chunk) {
        let mask = c.entries.len() - 1;
        let mut records = vec![0u32; c.more.len()];
        let mut live = 0;
        let mut hashes = std::collections::HashSet::new();
        for (i, e) in c.entries.iter().enumerate() {
            if e.is_empty() {
                continue;
            }
            live += 1;
            let hash = e.hash;
            assert!(hashes.insert(hash), "two entries with hash {hash:x}");
            let mut j = hash as usize & mask;
            while j != i {
                assert!(
                    !c.entries[j].is_empty(),
                    "slot {i} is cut off from its home"
                );
                j = (j + 1) & mask;
            }
            assert_eq!(c.probe(hash), Some(i), "found by its hash");
            assert_eq!(c.find(hash, c.name_at(i)), Some(i), "found by its name");
            if usize::from(e.hops_len) > INLINE_HOPS {
                records[e.more as usize] += 1;
            }
        }
        assert_eq!(live, c.live);
        assert!(c.live * 2 <= c.entries.len(), "more than half full");
        let named: usize = c.keys.iter().map(|k| usize::from(k.len)).sum();
        assert_eq!(named + c.garbage_bytes, c.names.len(), "name bytes");
        for &r in &c.more_free {
            records[r as usize] += 1;
        }
        assert!(records.iter().all(|&n| n == 1), "hop records {records:?}");
    }

    proptest::proptest! {
        /// Next hops added and removed in any order (through one, two and several next hops,
        /// routes that become markers and back) keep every slot's flag and hash right.
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

    /// A second prefix with the hash of one held is refused (lookups could not tell them
    /// apart); the first keeps its route, and once it is gone the second goes in.
    #[test]
    fn a_prefix_whose_hash_is_taken_is_refused() {
        let mut chunk = Chunk::new(1);
        let hash = 0xABC0_0000_1234_5678;
        let a = chunk.slot_for(hash, b"first", 2).unwrap();
        let v = Value {
            is_route: true,
            hops_len: 1,
            ..Value::NONE
        };
        chunk.store(a, &v);
        assert_eq!(chunk.slot_for(hash, b"first", 2), Ok(a));
        assert_eq!(
            chunk.slot_for(hash, b"other", 2),
            Err(FibError::HashCollision)
        );
        assert_eq!(
            chunk.find(hash, b"other"),
            None,
            "the writer tells names apart"
        );
        assert_eq!(chunk.probe(hash), Some(a));
        assert!(chunk.get(hash).is_some_and(|e| e.is_route && e.depth == 2));
        check_chunk(&chunk);
        chunk.remove(a);
        let b = chunk.slot_for(hash, b"other", 3).unwrap();
        assert_eq!(chunk.find(hash, b"other"), Some(b));
        assert_eq!(chunk.find(hash, b"first"), None);
        check_chunk(&chunk);
        assert!(
            FibError::HashCollision.to_string().contains("hash_key"),
            "the error says what to do"
        );
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
    fn a_probe_reads_one_cache_line() {
        assert_eq!(size_of::<MarkerBucket>(), 64);
        assert_eq!(size_of::<HopRecord>(), 64);
        // What a probe compares (the hash) and the inline next hops are in the entry's half
        // line, two entries to a line.
        assert_eq!(size_of::<Entry>(), 32);
        assert_eq!(align_of::<Entry>(), 32);
        assert_eq!(
            core::mem::offset_of!(Entry, hops) + INLINE_HOPS * size_of::<NextHop>(),
            32
        );
        // What a lookup reads of a chunk is in its first line.
        assert!(core::mem::offset_of!(Chunk, more) + size_of::<Vec<HopRecord>>() <= 64);
        assert!(core::mem::offset_of!(Chunk, entries) < 64);
        assert!(core::mem::offset_of!(Chunk, markers) < 64);
        assert_eq!(align_of::<Chunk>(), 64);
    }

    proptest::proptest! {
        /// Prefixes crowded into one chunk and a few home slots (so probe runs grow long, wrap
        /// around the table's end and are cut by removals), with any number of next hops,
        /// against a map: every prefix present is found with its next hops, every removed one
        /// is not, and the table's invariants hold after every step.
        #[test]
        fn crowded_probe_runs_match_a_map(
            ops in proptest::collection::vec((0u64..48, 0u64..4, 0usize..=MAX_NEXTHOPS, proptest::prelude::any::<bool>()), 1..300),
        ) {
            let mut chunk = Chunk::new(1);
            let mut model: HashMap<u64, usize> = HashMap::new();
            // Prefix p: home bits from `home` (few distinct homes, and some near the end of
            // the table so runs wrap), long names for every fifth prefix.
            let name = |p: u64| {
                let len = if p.is_multiple_of(5) { 40 + p as usize } else { 2 + p as usize % 7 };
                (0..len).map(|b| (p as u8).wrapping_mul(31).wrapping_add(b as u8)).collect::<Vec<u8>>()
            };
            let hash_of = |p: u64, home: u64| 0xABC0_0000_0000_0000 | (p << 32) | (home.wrapping_sub(1) & 0xFFFF);
            let mut homes: HashMap<u64, u64> = HashMap::new();
            for (p, home, hops, add) in ops {
                let home = *homes.entry(p).or_insert(home);
                let (h, n) = (hash_of(p, home), name(p));
                if add {
                    let slot = chunk.slot_for(h, &n, 3).unwrap();
                    let mut v = Value { is_route: hops > 0, hops_len: hops as u8, ..Value::NONE };
                    for k in 0..hops {
                        v.hops[k] = NextHop { face: FaceId(p as u32), cost: k as u32 };
                    }
                    chunk.store(slot, &v);
                    model.insert(p, hops);
                } else if let Some(s) = chunk.find(h, &n) {
                    chunk.remove(s);
                    model.remove(&p);
                }
                check_chunk(&chunk);
                for (&q, qh) in &homes {
                    let got = chunk.get(hash_of(q, *qh)).map(|e| chunk.hops_of(e).len());
                    proptest::prop_assert_eq!(got, model.get(&q).copied(), "prefix {}", q);
                    if let Some(i) = chunk.probe(hash_of(q, *qh)) {
                        let e = &chunk.entries[i];
                        proptest::prop_assert_eq!(chunk.name_at(i), &name(q)[..]);
                        let want = |k: usize| NextHop { face: FaceId(q as u32), cost: k as u32 };
                        proptest::prop_assert!(chunk.hops_of(e).iter().enumerate().all(|(k, hop)| *hop == want(k)));
                    }
                }
            }
        }
    }
}
