//! Per-face fairness: how much of a shard one face may take.
//!
//! A face that floods Interests must not deny service to the others. Two things a flood
//! could exhaust are the shard's to bound:
//! - **PIT entries.** A face may create a new entry only while it holds fewer than its
//!   share: `max(pit_min, capacity / (active + pit_reserve))`, where `active` counts the faces
//!   that hold entries now. The share adapts: one face alone gets `capacity / 2` (with one
//!   reserved share), and every face that becomes active shrinks the others' shares, so a
//!   newcomer always finds room. An Interest over the share is answered with Nack Congestion
//!   and counted ([`DropReason::PitQuota`](crate::DropReason::PitQuota)); joining an entry
//!   another face created (aggregation) takes no entry and is always allowed.
//! - **Nacks the shard originates** (Congestion, NoRoute, Duplicate) towards one face: a
//!   token bucket per face (`nack_rate` per second, `nack_burst` deep); past it the Interest
//!   is still dropped and counted, but unanswered (`nacks_limited`), so a flood does not make
//!   the router spend a transmission per flooding packet.
//!
//! The dead-nonce list, the L2's parked reads and the out-records a face causes all come from
//! its PIT entries, so the PIT share bounds them too. The reassembler bounds fragment sets per
//! peer itself; on-demand faces are bounded by the router (`[udp]`).

use crate::face::FaceId;

/// Fairness settings of a shard (`[fairness]` in the router's configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fairness {
    /// Whether PIT shares are enforced (off: any face may fill the PIT).
    pub pit_shares: bool,
    /// Shares of the PIT held back for faces that hold no entry yet.
    pub pit_reserve: u32,
    /// The smallest share, in entries, whatever the number of active faces.
    pub pit_min: u32,
    /// Nacks the shard originates towards one face per second (0: no limit).
    pub nack_rate: u32,
    /// How many of those may go out at once (the bucket's depth).
    pub nack_burst: u32,
}

impl Default for Fairness {
    fn default() -> Self {
        Self {
            pit_shares: true,
            pit_reserve: 1,
            pit_min: 64,
            nack_rate: 10_000,
            nack_burst: 1_000,
        }
    }
}

/// One face's load on a shard, and its counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceLoad {
    /// Interests received from the face.
    pub interests: u64,
    /// Data received from the face.
    pub data: u64,
    /// PIT entries the face's Interests created that are pending now.
    pub pit_entries: u32,
    /// Packets from the face dropped, whatever the reason.
    pub drops: u64,
    /// Interests refused because the face held its PIT share (Nack Congestion, if the
    /// face's Nack rate allowed one).
    pub pit_quota: u64,
    /// Nacks to the face not sent because it was past its Nack rate.
    pub nacks_limited: u64,
}

/// A face's Nack token bucket ([`Fairness::nack_rate`], [`Fairness::nack_burst`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NackBucket {
    /// Tokens, in thousandths.
    tokens: u64,
    /// When the bucket was last filled (ns); 0: never (a full bucket).
    filled: u64,
}

impl NackBucket {
    /// Takes a Nack token at `now` (ns); false when the face is past its rate.
    pub(crate) fn take_nack(&mut self, now: u64, cfg: &Fairness) -> bool {
        if cfg.nack_rate == 0 {
            return true;
        }
        let depth = u64::from(cfg.nack_burst.max(1)) * 1000;
        if self.filled == 0 {
            self.tokens = depth;
            self.filled = now.max(1);
        }
        // Whole milliseconds since the last fill; at `rate` per second, a millisecond is worth
        // `rate` thousandths of a token. The clock moves by whole milliseconds, so a slow
        // trickle of calls still adds up.
        let ms = now.saturating_sub(self.filled) / 1_000_000;
        if ms > 0 {
            self.tokens = (self.tokens + ms * u64::from(cfg.nack_rate)).min(depth);
            self.filled += ms * 1_000_000;
        }
        if self.tokens >= 1000 {
            self.tokens -= 1000;
            true
        } else {
            false
        }
    }
}

/// The PIT share every face is held to: how many faces hold entries, and the share that
/// gives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PitShares {
    active: u32,
    quota: u32,
    capacity: u32,
}

impl PitShares {
    pub(crate) fn new(capacity: usize, cfg: &Fairness) -> Self {
        let mut s = Self {
            active: 0,
            quota: 0,
            capacity: u32::try_from(capacity).unwrap_or(u32::MAX),
        };
        s.update(cfg);
        s
    }

    pub(crate) fn update(&mut self, cfg: &Fairness) {
        self.quota = if cfg.pit_shares {
            let parts = (self.active + cfg.pit_reserve).max(1);
            (self.capacity / parts).max(cfg.pit_min).max(1)
        } else {
            u32::MAX
        };
    }

    /// Whether a face holding `held` entries may create another.
    #[inline]
    pub(crate) fn allows(&self, held: u32) -> bool {
        held < self.quota
    }

    /// The share now.
    pub(crate) fn quota(&self) -> u32 {
        self.quota
    }

    /// Faces holding entries now.
    #[cfg(test)]
    pub(crate) fn active(&self) -> u32 {
        self.active
    }

    /// A face's entries went from 0 to 1.
    #[inline]
    pub(crate) fn face_active(&mut self, cfg: &Fairness) {
        self.active += 1;
        self.update(cfg);
    }

    /// A face's entries went from 1 to 0 (or a face holding entries was removed).
    #[inline]
    pub(crate) fn face_idle(&mut self, cfg: &Fairness) {
        self.active = self.active.saturating_sub(1);
        self.update(cfg);
    }
}

/// Per-face loads, for reporting.
pub type FaceLoads = Vec<(FaceId, FaceLoad)>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_adapt_to_active_faces_and_keep_room_for_a_newcomer() {
        let cfg = Fairness::default();
        let mut s = PitShares::new(65_536, &cfg);
        // A face holding nothing may always create an entry.
        assert!(s.allows(0));
        s.face_active(&cfg);
        assert_eq!(s.quota(), 32_768, "alone, one share is held back");
        s.face_active(&cfg);
        assert_eq!(s.quota(), 21_845);
        // Every active face at its share still leaves a share free.
        assert!(2 * s.quota() + s.quota() <= 65_536);
        for _ in 0..10_000 {
            s.face_active(&cfg);
        }
        assert_eq!(s.quota(), cfg.pit_min, "never below the floor");
        for _ in 0..10_002 {
            s.face_idle(&cfg);
        }
        assert_eq!(s.active(), 0);
        s.face_active(&cfg);
        assert!(s.allows(32_767) && !s.allows(32_768));
        let off = Fairness {
            pit_shares: false,
            ..cfg
        };
        assert!(PitShares::new(16, &off).allows(1 << 30));
    }

    #[test]
    fn the_nack_bucket_allows_its_burst_then_its_rate() {
        let cfg = Fairness {
            nack_rate: 1000,
            nack_burst: 10,
            ..Fairness::default()
        };
        let mut f = NackBucket::default();
        let t0 = 5_000_000_000;
        let sent = (0..100).filter(|_| f.take_nack(t0, &cfg)).count();
        assert_eq!(sent, 10, "the burst");
        // 1000 per second: one per millisecond, in steps smaller than a millisecond too.
        let mut sent = 0;
        for i in 1..=40 {
            sent += usize::from(f.take_nack(t0 + i * 250_000, &cfg));
        }
        assert_eq!(sent, 10, "10 ms at 1000/s");
        // A long pause refills to the depth only.
        let sent = (0..100)
            .filter(|_| f.take_nack(t0 + 60_000_000_000, &cfg))
            .count();
        assert_eq!(sent, 10);
        let unlimited = Fairness {
            nack_rate: 0,
            ..cfg
        };
        assert!((0..10_000).all(|_| f.take_nack(t0, &unlimited)));
    }
}
