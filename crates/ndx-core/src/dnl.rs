//! The dead-nonce list: (name, Nonce) pairs of Interests whose PIT entry is gone, remembered
//! for a while so a looping Interest that comes back later is still recognised (NFD's
//! DeadNonceList). Bounded, FIFO, allocation-free after construction.

use crate::index::HashIndex;

/// A bounded set of recently dead (name, nonce) pairs.
#[derive(Debug)]
pub struct DeadNonceList {
    ring: Vec<(u64, u64)>,
    head: usize,
    len: usize,
    index: HashIndex,
    lifetime: u64,
}

/// How many evictions ahead [`DeadNonceList::evict_oldest`] prefetches.
const EVICT_AHEAD: usize = 8;

fn key(name_hash: u64, nonce: u32) -> u64 {
    (name_hash ^ u64::from(nonce).wrapping_mul(0xD6E8_FEB8_6659_FD93)) | 1
}

impl DeadNonceList {
    /// A list of at most `capacity` pairs, each kept for `lifetime` ns.
    pub fn new(capacity: usize, lifetime: u64) -> Self {
        let capacity = capacity.clamp(1, u32::MAX as usize - 1);
        Self {
            ring: vec![(0, 0); capacity],
            head: 0,
            len: 0,
            index: HashIndex::new(capacity),
            lifetime,
        }
    }

    /// Pairs held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn evict_oldest(&mut self) {
        let tail = (self.head + self.ring.len() - self.len) % self.ring.len();
        let (k, _) = self.ring[tail];
        self.index.remove(k, tail as u32);
        self.len -= 1;
        // The pairs leave in ring order, so the index bucket of one that leaves a few
        // evictions from now is known: prefetch it (a large list's buckets are out of cache,
        // and each removal would otherwise wait on its miss).
        if self.len > EVICT_AHEAD {
            let (k, _) = self.ring[(tail + EVICT_AHEAD) % self.ring.len()];
            self.index.prefetch(k);
        }
    }

    fn expire(&mut self, now: u64) {
        while self.len > 0 {
            let tail = (self.head + self.ring.len() - self.len) % self.ring.len();
            if self.ring[tail].1.saturating_add(self.lifetime) > now {
                break;
            }
            self.evict_oldest();
        }
    }

    /// Prefetches the index bucket of (`name_hash`, `nonce`) (see the shard's burst path).
    #[inline]
    pub fn prefetch(&self, name_hash: u64, nonce: u32) {
        self.index.prefetch(key(name_hash, nonce));
    }

    /// Records a dead pair at `now` (ns); the oldest pair makes room when full.
    pub fn insert(&mut self, now: u64, name_hash: u64, nonce: u32) {
        self.expire(now);
        if self.contains(now, name_hash, nonce) {
            return;
        }
        if self.len == self.ring.len() {
            self.evict_oldest();
        }
        let k = key(name_hash, nonce);
        self.ring[self.head] = (k, now);
        self.index.insert(k, self.head as u32);
        self.head = (self.head + 1) % self.ring.len();
        self.len += 1;
    }

    /// Whether the pair died less than `lifetime` ago.
    #[inline]
    pub fn contains(&self, now: u64, name_hash: u64, nonce: u32) -> bool {
        let k = key(name_hash, nonce);
        // Most Interests are not looping: settle the common miss before the probe loop.
        self.index.may_hold(k) && self.probe(now, k)
    }

    /// [`contains`](Self::contains)'s probe of the index for key `k`.
    #[inline(never)]
    fn probe(&self, now: u64, k: u64) -> bool {
        self.index.find(k, |i| {
            let (stored, at) = self.ring[i as usize];
            stored == k && at.saturating_add(self.lifetime) > now
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_for_a_lifetime_and_stays_bounded() {
        let mut d = DeadNonceList::new(3, 100);
        d.insert(0, 1, 7);
        assert!(d.contains(99, 1, 7));
        assert!(!d.contains(100, 1, 7));
        assert!(!d.contains(50, 1, 8));
        assert!(!d.contains(50, 2, 7));
        for n in 0..10 {
            d.insert(10, 5, n);
        }
        assert_eq!(d.len(), 3);
        assert!(d.contains(11, 5, 9) && d.contains(11, 5, 7) && !d.contains(11, 5, 6));
        d.insert(500, 9, 9);
        assert_eq!(d.len(), 1, "expired pairs are dropped on insert");
    }
}
