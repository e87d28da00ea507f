//! A fixed-capacity hash index: 64-byte buckets of 7 (tag, slot) pairs, probed linearly by
//! bucket (Augustus, seed 001 §3.1). It maps a 64-bit keyed hash to candidate slot numbers;
//! the table that owns the slots confirms the key. Used by the PIT, the CS and the dead-nonce
//! list. All memory is allocated in [`HashIndex::new`].

const SLOTS: usize = 7;

#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Bucket {
    tags: [u32; SLOTS],
    slots: [u32; SLOTS],
    /// How many entries live past this bucket although their home is at or before it:
    /// lookups continue to the next bucket while this is non-zero.
    overflow: u32,
    _pad: u32,
}

/// Tag of a hash: 32 bits that do not overlap the bucket-selection bits, never 0.
fn tag_of(hash: u64) -> u32 {
    ((hash >> 32) as u32) | 1
}

/// The first step of a probe for a hash ([`HashIndex::home_probe`]): which slots of its home
/// bucket carry its tag, and whether entries from that bucket overflowed further on. One
/// word: it goes from an inlined miss test to an out-of-line probe in a register.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HomeProbe {
    /// Bits 0..7: bit `s` set when slot `s` of the home bucket carries the tag. Bits 8..32:
    /// the caller's ([`with_flags`](Self::with_flags)), zero from [`HashIndex::home_probe`].
    /// High 32 bits: the home bucket's `overflow` (not zero: the probe continues past it).
    /// Zero exactly when nothing can be stored under the hash (and no flags are set).
    bits: u64,
}

/// [`HomeProbe::bits`] of the home bucket's tag matches.
const TAG_BITS: u32 = (1 << SLOTS) - 1;

impl HomeProbe {
    /// True when nothing can be stored under the hash (no tag match in its home bucket and no
    /// overflow past it): the opposite of [`HashIndex::may_hold`]. Only for a probe without
    /// flags.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// The probe carrying `flags` (at most 24 bits) for its caller, in the same word: for a
    /// caller that passes the probe and a few booleans on to an out-of-line function, in one
    /// register. [`HashIndex::find_from`] ignores them.
    #[inline(always)]
    pub(crate) fn with_flags(self, flags: u32) -> Self {
        debug_assert!(flags < 1 << 24, "flags past 24 bits");
        Self {
            bits: self.bits | u64::from(flags) << 8,
        }
    }

    /// The flags of [`with_flags`](Self::with_flags).
    #[inline(always)]
    pub(crate) fn flags(self) -> u32 {
        (self.bits as u32) >> 8
    }
}

/// A fixed-capacity hash → slot index.
#[derive(Debug, Clone)]
pub(crate) struct HashIndex {
    buckets: Vec<Bucket>,
    mask: usize,
    len: usize,
    capacity: usize,
}

impl HashIndex {
    /// An index for `capacity` entries, with buckets at most ~70% full.
    pub(crate) fn new(capacity: usize) -> Self {
        let buckets = (capacity * 10 / 7 / SLOTS + 1).next_power_of_two().max(2);
        Self {
            buckets: vec![Bucket::default(); buckets],
            mask: buckets - 1,
            len: 0,
            capacity,
        }
    }

    /// Entries stored.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Bytes of index memory.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.buckets.len() * size_of::<Bucket>()
    }

    /// Adds `slot` under `hash`; false when the index is at capacity.
    pub(crate) fn insert(&mut self, hash: u64, slot: u32) -> bool {
        self.insert_pos(hash, slot).is_some()
    }

    /// Adds `slot` under `hash` and returns where it went, for [`remove_pos`](Self::remove_pos);
    /// `None` when the index is at capacity. Entries never move once placed: in the first
    /// vacant position from the home bucket on. A home bucket with room (the usual case) is
    /// settled inline; the walk past it is out of line.
    #[inline]
    pub(crate) fn insert_pos(&mut self, hash: u64, slot: u32) -> Option<u32> {
        if self.len >= self.capacity {
            return None;
        }
        let b = hash as usize & self.mask;
        if let Some(pos) = self.place_in(b, hash, slot) {
            return Some(pos);
        }
        self.insert_past_home(hash, slot)
    }

    /// [`insert_pos`](Self::insert_pos) for a table that never stores more entries than the
    /// index's capacity (the CS: at most a name and an alias per slot; the PIT: one entry per
    /// taken slot), without testing for it; `NO_POS` (`u32::MAX`, past every bucket) if the
    /// index is full all the same.
    #[inline]
    pub(crate) fn insert_pos_within(&mut self, hash: u64, slot: u32) -> u32 {
        debug_assert!(self.len < self.capacity, "insert_pos_within at capacity");
        let b = hash as usize & self.mask;
        if let Some(pos) = self.place_in(b, hash, slot) {
            return pos;
        }
        self.insert_past_home(hash, slot).unwrap_or(u32::MAX)
    }

    /// Puts `slot` under `hash` in bucket `b`'s first vacant position and returns it; `None`
    /// when the bucket is full.
    #[inline(always)]
    fn place_in(&mut self, b: usize, hash: u64, slot: u32) -> Option<u32> {
        let bucket = self.buckets.get_mut(b)?;
        let empty = ndx_mem::eq_mask7(&bucket.tags, 0);
        if empty == 0 {
            return None;
        }
        let s = empty.trailing_zeros() as usize;
        bucket.tags[s] = tag_of(hash);
        bucket.slots[s] = slot;
        self.len += 1;
        Some((b as u32) << 3 | s as u32)
    }

    /// [`insert_pos`](Self::insert_pos) when the home bucket is full: walks on to the first
    /// bucket with room, marking each full one passed (the home bucket included) as
    /// overflowed.
    #[inline(never)]
    fn insert_past_home(&mut self, hash: u64, slot: u32) -> Option<u32> {
        let mut b = hash as usize & self.mask;
        for _ in 0..self.buckets.len() {
            if let Some(pos) = self.place_in(b, hash, slot) {
                return Some(pos);
            }
            self.buckets[b].overflow += 1;
            b = (b + 1) & self.mask;
        }
        None
    }

    /// Removes the entry [`insert_pos`](Self::insert_pos) put at `pos` under `hash`, without
    /// searching for it.
    #[inline]
    pub(crate) fn remove_pos(&mut self, hash: u64, pos: u32) {
        let b = (pos >> 3) as usize;
        let Some(bucket) = self.buckets.get_mut(b) else {
            return;
        };
        let Some(tag) = bucket.tags.get_mut((pos & 7) as usize) else {
            return;
        };
        debug_assert_eq!(*tag, tag_of(hash), "remove_pos of a vacant position");
        *tag = 0;
        self.len -= 1;
        // Undo the overflow marks this entry left on its way from home.
        let mut o = hash as usize & self.mask;
        while o != b {
            self.buckets[o].overflow -= 1;
            o = (o + 1) & self.mask;
        }
    }

    /// Removes `slot` stored under `hash`; false if it was not there.
    pub(crate) fn remove(&mut self, hash: u64, slot: u32) -> bool {
        let tag = tag_of(hash);
        let home = hash as usize & self.mask;
        let mut b = home;
        for _ in 0..self.buckets.len() {
            let bucket = &mut self.buckets[b];
            if let Some(s) = (0..SLOTS).find(|&s| bucket.tags[s] == tag && bucket.slots[s] == slot)
            {
                bucket.tags[s] = 0;
                self.len -= 1;
                // Undo the overflow marks this entry left on its way from home.
                let mut o = home;
                while o != b {
                    self.buckets[o].overflow -= 1;
                    o = (o + 1) & self.mask;
                }
                return true;
            }
            if bucket.overflow == 0 {
                return false;
            }
            b = (b + 1) & self.mask;
        }
        false
    }

    /// Prefetches `hash`'s home bucket (the prefetches of a burst overlap their misses).
    #[inline]
    pub(crate) fn prefetch(&self, hash: u64) {
        if let Some(b) = self.buckets.get(hash as usize & self.mask) {
            ndx_mem::prefetch(b);
        }
    }

    /// Slots in `hash`'s home bucket whose tag matches (for the burst path's second-level
    /// prefetches). One branch-free pass over the tags, then one step per match.
    #[inline]
    pub(crate) fn home_candidates(&self, hash: u64) -> impl Iterator<Item = u32> + '_ {
        let tag = tag_of(hash);
        let bucket = self.buckets.get(hash as usize & self.mask);
        let mut mask = bucket.map_or(0, |b| ndx_mem::eq_mask7(&b.tags, tag));
        std::iter::from_fn(move || {
            if mask == 0 {
                return None;
            }
            let s = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            bucket.map(|b| b.slots[s])
        })
    }

    /// False when nothing can be stored under `hash`: no tag match in its home bucket and no
    /// overflow past it (a cheap first test before [`find`](Self::find), whose probe loop
    /// costs a set-up even when it misses).
    #[inline(always)]
    pub(crate) fn may_hold(&self, hash: u64) -> bool {
        self.buckets
            .get(hash as usize & self.mask)
            .is_none_or(|b| b.overflow != 0 || ndx_mem::eq_mask7(&b.tags, tag_of(hash)) != 0)
    }

    /// The home bucket's part of a probe for `hash`, for a caller that settles the common
    /// miss ([`HomeProbe::is_empty`]) before the probe loop and then goes on with
    /// [`find_from`](Self::find_from) without repeating it.
    #[inline(always)]
    pub(crate) fn home_probe(&self, hash: u64) -> HomeProbe {
        let b = hash as usize & self.mask;
        let bits = self.buckets.get(b).map_or(0, |bucket| {
            u64::from(ndx_mem::eq_mask7(&bucket.tags, tag_of(hash)))
                | u64::from(bucket.overflow) << 32
        });
        HomeProbe { bits }
    }

    /// [`find`](Self::find) from `home`, the [`home_probe`](Self::home_probe) of `hash` (with
    /// the index unchanged since; its flags, if any, are ignored): the home bucket's matches,
    /// then the rest of the chain.
    #[inline(always)]
    pub(crate) fn find_from(
        &self,
        hash: u64,
        home: HomeProbe,
        mut f: impl FnMut(u32) -> bool,
    ) -> bool {
        let home_bucket = hash as usize & self.mask;
        let Some(bucket) = self.buckets.get(home_bucket) else {
            return false;
        };
        let mut mask = home.bits as u32 & TAG_BITS;
        while mask != 0 {
            let s = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if f(bucket.slots[s]) {
                return true;
            }
        }
        if home.bits >> 32 == 0 {
            return false;
        }
        // The rest of the chain, as `find` walks it.
        let next = (home_bucket + 1) & self.mask;
        self.scan(next, self.buckets.len() - 1, tag_of(hash), f)
    }

    /// Calls `f` with each slot stored under a hash with the same tag as `hash`, until `f`
    /// returns true (found); returns whether it did. Always inlined: each caller's closure
    /// then folds into its probe loop instead of being called through captured references.
    #[inline(always)]
    pub(crate) fn find(&self, hash: u64, f: impl FnMut(u32) -> bool) -> bool {
        self.scan(
            hash as usize & self.mask,
            self.buckets.len(),
            tag_of(hash),
            f,
        )
    }

    /// `find`'s walk: up to `buckets` buckets from bucket `b` on, calling `f` with each slot
    /// tagged `tag`, until `f` returns true or a bucket no insertion passed ends the chain.
    #[inline(always)]
    fn scan(&self, mut b: usize, buckets: usize, tag: u32, mut f: impl FnMut(u32) -> bool) -> bool {
        for _ in 0..buckets {
            let bucket = &self.buckets[b];
            let mut mask = ndx_mem::eq_mask7(&bucket.tags, tag);
            while mask != 0 {
                let s = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                if f(bucket.slots[s]) {
                    return true;
                }
            }
            if bucket.overflow == 0 {
                return false;
            }
            b = (b + 1) & self.mask;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// Where an insertion under `hash` must go: the first vacant position from its home bucket
    /// on (a slow, obvious walk).
    fn first_vacant(idx: &HashIndex, hash: u64) -> Option<u32> {
        (0..idx.buckets.len())
            .map(|d| (hash as usize + d) & idx.mask)
            .find_map(|b| {
                let s = idx.buckets[b].tags.iter().position(|&t| t == 0)?;
                Some((b as u32) << 3 | s as u32)
            })
    }

    /// Each bucket's overflow mark, recomputed from where the entries are: one for every
    /// entry stored past the bucket whose walk from its home crossed it.
    fn overflow_marks(idx: &HashIndex, entries: &HashMap<(u64, u32), u32>) -> Vec<u32> {
        let mut marks = vec![0; idx.buckets.len()];
        for (&(hash, _), &pos) in entries {
            let mut b = hash as usize & idx.mask;
            while b != (pos >> 3) as usize {
                marks[b] += 1;
                b = (b + 1) & idx.mask;
            }
        }
        marks
    }

    proptest! {
        /// Model-based: the index finds exactly the (hash, slot) pairs a set holds, including
        /// under heavy collisions (few distinct bucket bits) and at capacity; an insertion
        /// takes the first vacant position from the home bucket on (inline or past a full
        /// home bucket; by `insert_pos` or, below capacity, `insert_pos_within`), the
        /// overflow marks match where entries are, and a probe from
        /// `home_probe` (with or without a caller's flags) agrees with `find` and `may_hold`.
        #[test]
        fn behaves_like_a_set(ops in proptest::collection::vec((any::<bool>(), any::<bool>(), 0u64..40, 0u32..8, any::<bool>()), 1..400)) {
            let mut idx = HashIndex::new(60);
            // (hash, slot) -> the position `insert_pos` gave it.
            let mut model: HashMap<(u64, u32), u32> = HashMap::new();
            for (insert, by_pos, h, slot, within) in ops {
                // Spread tags but crowd buckets: the low bits repeat every 40 keys.
                let hash = h.wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0xFFFF_FFFF_0000_0000 | (h % 5);
                if insert {
                    if model.contains_key(&(hash, slot)) { continue; }
                    let want = first_vacant(&idx, hash);
                    // `insert_pos_within` where the caller keeps below capacity, as the CS.
                    let pos = if within && model.len() < 60 {
                        Some(idx.insert_pos_within(hash, slot))
                    } else {
                        idx.insert_pos(hash, slot)
                    };
                    prop_assert_eq!(pos.is_some(), model.len() < 60);
                    if let Some(pos) = pos {
                        prop_assert_eq!(Some(pos), want);
                        model.insert((hash, slot), pos);
                    }
                } else if by_pos {
                    // Removing by position: only entries that are there.
                    if let Some(pos) = model.remove(&(hash, slot)) {
                        idx.remove_pos(hash, pos);
                    }
                } else {
                    prop_assert_eq!(idx.remove(hash, slot), model.remove(&(hash, slot)).is_some());
                }
                prop_assert_eq!(idx.len(), model.len());
                for &(h2, s2) in model.keys() {
                    prop_assert!(idx.may_hold(h2));
                    prop_assert!(idx.find(h2, |s| s == s2), "lost ({h2:x}, {s2})");
                    let home = idx.home_probe(h2);
                    prop_assert!(!home.is_empty());
                    prop_assert!(idx.find_from(h2, home, |s| s == s2), "lost from home ({h2:x}, {s2})");
                    // A caller's flags ride along and change nothing of the probe.
                    let flagged = home.with_flags(0xFF_FFFF ^ s2);
                    prop_assert_eq!(flagged.flags(), 0xFF_FFFF ^ s2);
                    prop_assert!(idx.find_from(h2, flagged, |s| s == s2), "lost with flags ({h2:x}, {s2})");
                }
                let marks = overflow_marks(&idx, &model);
                prop_assert!(idx.buckets.iter().zip(&marks).all(|(b, &m)| b.overflow == m));
                // A hash nothing is stored under is never found, and `may_hold` is false
                // exactly when its home bucket has no matching tag and no overflow.
                let absent = 0x5555_5555_0000_0000 | (h % 5);
                prop_assert!(!idx.find(absent, |_| true));
                prop_assert!(!idx.find_from(absent, idx.home_probe(absent), |_| true));
                prop_assert!(!idx.find_from(absent, idx.home_probe(absent).with_flags(0xFF_FFFF), |_| true));
                prop_assert_eq!(idx.home_probe(absent).is_empty(), !idx.may_hold(absent));
                let b = &idx.buckets[absent as usize & idx.mask];
                prop_assert_eq!(idx.may_hold(absent), b.overflow != 0 || b.tags.contains(&tag_of(absent)));
            }
            // Every overflow mark is accounted for once the index is empty again.
            for (h, s) in model.keys().copied().collect::<Vec<_>>() { idx.remove(h, s); }
            prop_assert!(idx.buckets.iter().all(|b| b.overflow == 0 && b.tags.iter().all(|&t| t == 0)));
        }
    }

    proptest! {
        /// The vector tag match agrees with a slot-by-slot compare, duplicates included.
        #[test]
        fn tag_mask_matches_each_slot(tags in proptest::array::uniform7(0u32..4), tag in 0u32..4) {
            let want = (0..SLOTS).fold(0u32, |m, s| m | (u32::from(tags[s] == tag) << s));
            prop_assert_eq!(ndx_mem::eq_mask7(&tags, tag), want);
        }
    }

    #[test]
    fn bucket_is_one_cache_line() {
        assert_eq!(size_of::<Bucket>(), 64);
    }
}
