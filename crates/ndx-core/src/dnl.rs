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
    /// Pairs held per summary slot (a key's top bits pick its slot): a lookup whose slot holds
    /// none settles the miss here, in a table a sixteenth of the list's capacity that stays in
    /// cache, without reading the index bucket (which a large list keeps out of cache). The
    /// list is mostly empty in steady forwarding (a satisfied Interest leaves nothing unless
    /// the CS cannot answer its loop), so most Interests skip the bucket's miss.
    summary: Vec<u32>,
    summary_shift: u32,
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
        let slots = (capacity / 16).next_power_of_two().max(64);
        Self {
            ring: vec![(0, 0); capacity],
            head: 0,
            len: 0,
            index: HashIndex::new(capacity),
            lifetime,
            summary: vec![0; slots],
            summary_shift: 64 - slots.trailing_zeros(),
        }
    }

    /// `k`'s summary slot.
    #[inline(always)]
    fn slot(&self, k: u64) -> usize {
        (k >> self.summary_shift) as usize
    }

    /// False when no pair held shares `k`'s summary slot (so `k` is not held).
    #[inline(always)]
    fn may_hold(&self, k: u64) -> bool {
        self.summary.get(self.slot(k)).is_some_and(|&n| n != 0)
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
        let slot = self.slot(k);
        if let Some(n) = self.summary.get_mut(slot) {
            *n = n.saturating_sub(1);
        }
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
        let k = key(name_hash, nonce);
        if self.may_hold(k) {
            self.index.prefetch(k);
        }
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
        let slot = self.slot(k);
        if let Some(n) = self.summary.get_mut(slot) {
            *n += 1;
        }
        self.head = (self.head + 1) % self.ring.len();
        self.len += 1;
    }

    /// Whether the pair died less than `lifetime` ago.
    #[inline]
    pub fn contains(&self, now: u64, name_hash: u64, nonce: u32) -> bool {
        let k = key(name_hash, nonce);
        // Most Interests are not looping: settle the common miss before the probe loop, in
        // the summary when it can (no index bucket read), else in the home bucket.
        self.may_hold(k) && self.index.may_hold(k) && self.probe(now, k)
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
        assert_eq!(
            d.summary.iter().sum::<u32>(),
            1,
            "the summary counts what is held"
        );
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert { dt: u64, name: u64, nonce: u32 },
        Contains { dt: u64, name: u64, nonce: u32 },
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        // Few names and nonces: repeats, and keys that share summary slots and buckets.
        prop_oneof![
            (0u64..30, 0u64..6, 0u32..6).prop_map(|(dt, name, nonce)| Op::Insert {
                dt,
                name: name.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                nonce
            }),
            (0u64..30, 0u64..6, 0u32..6).prop_map(|(dt, name, nonce)| Op::Contains {
                dt,
                name: name.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                nonce
            }),
        ]
    }

    proptest::proptest! {
        /// Against a reference: the pairs inserted, oldest first, at most `capacity` of
        /// them, each alive for `lifetime` (expired ones leave on the next insert); and the
        /// summary always counts exactly the pairs held.
        #[test]
        fn matches_a_reference_list(
            capacity in 1usize..40,
            ops in proptest::collection::vec(op(), 1..300),
        ) {
            const LIFETIME: u64 = 100;
            let mut d = DeadNonceList::new(capacity, LIFETIME);
            let mut model: std::collections::VecDeque<(u64, u32, u64)> = Default::default();
            let mut now = 0;
            for op in ops {
                match op {
                    Op::Insert { dt, name, nonce } => {
                        now += dt;
                        d.insert(now, name, nonce);
                        while model.front().is_some_and(|&(_, _, at)| at + LIFETIME <= now) {
                            model.pop_front();
                        }
                        if !model.iter().any(|&(n, x, _)| (n, x) == (name, nonce)) {
                            if model.len() == capacity {
                                model.pop_front();
                            }
                            model.push_back((name, nonce, now));
                        }
                    }
                    Op::Contains { dt, name, nonce } => {
                        now += dt;
                        let want = model
                            .iter()
                            .any(|&(n, x, at)| (n, x) == (name, nonce) && at + LIFETIME > now);
                        proptest::prop_assert_eq!(d.contains(now, name, nonce), want);
                    }
                }
                proptest::prop_assert_eq!(d.len(), model.len());
                proptest::prop_assert_eq!(d.summary.iter().map(|&n| n as usize).sum::<usize>(), d.len());
            }
        }
    }
}
