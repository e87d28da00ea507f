//! Forwarding strategies: which upstreams an Interest goes to, and what to do on a Nack.
//!
//! - **best-route**: the lowest-cost next hop other than the downstream; a retransmission
//!   from a downstream (new Nonce) after the suppression interval goes to the next untried
//!   next hop (or the least recently used); a Nack moves on to the next untried next hop.
//! - **multicast**: every next hop but the downstream.
//! - **adaptive** (seed 004 §II.E, Carofiglio et al.): one next hop drawn with probability
//!   proportional to `1 / (1 + pending Interests on it)`, so load follows the faster paths.
//!
//! Retransmissions are suppressed exponentially (10 ms doubling to 250 ms), as NFD does.

use ndx_codec::NackReason;

use crate::face::{FaceId, NextHop};
use crate::fib::{MAX_NEXTHOPS, StrategyId};
use crate::pit::PitEntry;

/// The strategies ndx ships, by [`StrategyId`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyKind {
    /// Lowest cost first, next on Nack or retransmission.
    BestRoute,
    /// All next hops.
    Multicast,
    /// Weighted by pending Interests per next hop.
    Adaptive,
}

impl StrategyKind {
    /// The strategy a FIB entry's [`StrategyId`] selects (unknown ids: best-route).
    pub fn from_id(id: StrategyId) -> Self {
        match id.0 {
            1 => Self::Multicast,
            2 => Self::Adaptive,
            _ => Self::BestRoute,
        }
    }

    /// The id to store in the FIB.
    pub fn id(self) -> StrategyId {
        StrategyId(match self {
            Self::BestRoute => 0,
            Self::Multicast => 1,
            Self::Adaptive => 2,
        })
    }

    /// Name as used in configuration (`best-route`, `multicast`, `adaptive`).
    pub fn name(self) -> &'static str {
        match self {
            Self::BestRoute => "best-route",
            Self::Multicast => "multicast",
            Self::Adaptive => "adaptive",
        }
    }
}

/// A small, fixed-capacity list of faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaceList {
    len: usize,
    faces: [FaceId; MAX_NEXTHOPS],
}

impl FaceList {
    pub(crate) const fn new() -> Self {
        Self {
            len: 0,
            faces: [FaceId(0); MAX_NEXTHOPS],
        }
    }

    pub(crate) fn push(&mut self, f: FaceId) {
        if self.len < MAX_NEXTHOPS {
            self.faces[self.len] = f;
            self.len += 1;
        }
    }

    /// The faces.
    #[inline]
    pub fn as_slice(&self) -> &[FaceId] {
        &self.faces[..self.len]
    }
}

/// What a strategy decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Send the Interest to these faces.
    Forward(FaceList),
    /// Do nothing now (aggregated, or a retransmission inside the suppression interval).
    Suppress,
    /// Give up: Nack the downstreams with this reason.
    Nack(NackReason),
}

/// Suppression intervals (ms).
const RETX_INITIAL_MS: u64 = 10;
const RETX_MAX_MS: u64 = 250;

/// Exponential retransmission suppression, kept in the PIT entry's `strategy_state`:
/// high 16 bits the current interval (ms), low 48 bits the last forwarding time (ms).
pub(crate) fn retx_allowed(entry: &mut PitEntry, now: u64) -> bool {
    let now_ms = now / 1_000_000;
    let state = entry.strategy_state;
    let last = state & 0xFFFF_FFFF_FFFF;
    let interval = (state >> 48).max(RETX_INITIAL_MS);
    if state != 0 && now_ms < last + interval {
        return false;
    }
    let next = if state == 0 {
        RETX_INITIAL_MS
    } else {
        (interval * 2).min(RETX_MAX_MS)
    };
    entry.strategy_state = next << 48 | (now_ms & 0xFFFF_FFFF_FFFF);
    true
}

/// Inputs a strategy decides on.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    pub(crate) now: u64,
    pub(crate) ingress: FaceId,
    pub(crate) nexthops: &'a [NextHop],
    pub(crate) pending: &'a crate::face::FaceTable<u32>,
    pub(crate) rng: &'a mut u64,
}

fn usable<'a>(ctx: &'a Ctx<'_>, entry: &'a PitEntry) -> impl Iterator<Item = NextHop> + 'a {
    // Never back to a downstream; never to an upstream that already Nacked.
    ctx.nexthops.iter().copied().filter(move |h| {
        h.face != ctx.ingress
            && entry.in_record(h.face).is_none()
            && entry.out_record(h.face).is_none_or(|o| o.nacked.is_none())
    })
}

/// xorshift64 (13, 7, 17): the core's one-word generator, its state a non-zero `u64` seeded
/// from the configuration (the shard's, for strategies and the Nonces of Nonce-less
/// Interests; the simulator's). Kept apart from `ndx_codec::rng` on purpose: one word of
/// state inside the hot structs, and the seeded streams that tests and simulations rely on.
#[inline]
pub(crate) fn next_random(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

/// A new or retransmitted Interest (`fresh_entry`: the PIT entry was just created).
pub(crate) fn after_receive_interest(
    kind: StrategyKind,
    ctx: &mut Ctx<'_>,
    entry: &mut PitEntry,
    fresh_entry: bool,
) -> Decision {
    // A new entry starts its suppression interval; a retransmission must wait it out.
    if !retx_allowed(entry, ctx.now) && !fresh_entry {
        return Decision::Suppress;
    }
    let mut out = FaceList::new();
    match kind {
        StrategyKind::BestRoute if fresh_entry => {
            debug_assert!(entry.out_records.is_empty() && entry.in_records.len() == 1);
            if let Some(face) = cheapest_other(ctx.nexthops, ctx.ingress) {
                out.push(face);
            }
        }
        StrategyKind::Multicast => {
            for h in usable(ctx, entry) {
                out.push(h.face);
            }
        }
        StrategyKind::BestRoute => {
            if let Some(face) = best_route_pick(ctx, entry) {
                out.push(face);
            }
        }
        StrategyKind::Adaptive => {
            let mut total = 0u64;
            for h in usable(ctx, entry) {
                total += weight(ctx.pending.get(&h.face).copied().unwrap_or(0));
            }
            if total > 0 {
                let mut r = next_random(ctx.rng) % total;
                for h in usable(ctx, entry) {
                    let w = weight(ctx.pending.get(&h.face).copied().unwrap_or(0));
                    if r < w {
                        out.push(h.face);
                        break;
                    }
                    r -= w;
                }
            }
        }
    }
    if out.len == 0 {
        if fresh_entry || entry.out_records.is_empty() {
            return Decision::Nack(NackReason::NoRoute);
        }
        return Decision::Suppress;
    }
    Decision::Forward(out)
}

/// best-route on a new PIT entry (the pipeline's usual case, without the [`Ctx`] and
/// [`Decision`] of [`after_receive_interest`]): starts the entry's suppression interval and
/// returns the next hop to send to, where `after_receive_interest(BestRoute, .., true)`
/// decides `Forward` of that face alone; `None` where it decides `Nack(NoRoute)`.
#[inline]
pub(crate) fn best_route_fresh(
    now: u64,
    ingress: FaceId,
    nexthops: &[NextHop],
    entry: &mut PitEntry,
) -> Option<FaceId> {
    // A new entry starts its suppression interval (always allowed).
    retx_allowed(entry, now);
    cheapest_other(nexthops, ingress)
}

/// The lowest-cost next hop other than `ingress` (the first of equals): best-route's pick for
/// a new entry, whose only record is the ingress's in-record and which has no out-records, so
/// every next hop but the ingress is usable and untried, without reading the records.
#[inline]
fn cheapest_other(nexthops: &[NextHop], ingress: FaceId) -> Option<FaceId> {
    let mut pick: Option<NextHop> = None;
    for &h in nexthops {
        if h.face != ingress && pick.is_none_or(|p| h.cost < p.cost) {
            pick = Some(h);
        }
    }
    pick.map(|h| h.face)
}

/// Best-route's choice among the usable next hops: untried first, lowest cost; then the
/// least recently tried. The first of equals wins (as `min_by_key`), in a plain loop: no fold
/// call per Interest.
fn best_route_pick(ctx: &Ctx<'_>, entry: &PitEntry) -> Option<FaceId> {
    let mut pick: Option<((u8, u32, u64), FaceId)> = None;
    for h in usable(ctx, entry) {
        let rank = match entry.out_record(h.face) {
            None => (0, h.cost, 0),
            Some(o) => (1, 0, o.sent_at),
        };
        if pick.is_none_or(|(best, _)| rank < best) {
            pick = Some((rank, h.face));
        }
    }
    pick.map(|(_, face)| face)
}

/// Weight of a next hop with `pending` Interests outstanding (scaled to stay integral).
fn weight(pending: u32) -> u64 {
    1_000_000 / (1 + u64::from(pending))
}

/// An upstream Nacked the Interest (its out-record is already marked).
pub(crate) fn after_receive_nack(
    kind: StrategyKind,
    ctx: &mut Ctx<'_>,
    entry: &mut PitEntry,
) -> Decision {
    if kind != StrategyKind::Multicast {
        // Try a next hop that has not been tried yet.
        let untried = usable(ctx, entry)
            .filter(|h| entry.out_record(h.face).is_none())
            .min_by_key(|h| h.cost);
        if let Some(h) = untried {
            let mut out = FaceList::new();
            out.push(h.face);
            return Decision::Forward(out);
        }
    }
    if entry.out_records.iter().all(|o| o.nacked.is_some()) {
        // The least severe reason among the upstreams' (NFD): Congestion < Duplicate < NoRoute.
        let reason = entry
            .out_records
            .iter()
            .filter_map(|o| o.nacked)
            .min_by_key(|r| match r {
                NackReason::Congestion => 0,
                NackReason::Duplicate => 1,
                NackReason::NoRoute => 2,
                NackReason::Unspecified => 3,
            })
            .unwrap_or(NackReason::NoRoute);
        return Decision::Nack(reason);
    }
    Decision::Suppress
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::face::FaceTable;
    use crate::pit::{InRecord, Pit, TokenBuf, pit_key};
    use ndx_codec::NameBuf;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_new_entry_goes_to_the_cheapest_next_hop_other_than_the_ingress(
            hops in proptest::collection::vec((0u32..6, 0u32..4), 0..=MAX_NEXTHOPS),
            ingress in 0u32..6,
        ) {
            let nexthops: Vec<NextHop> = hops
                .iter()
                .map(|&(face, cost)| NextHop { face: FaceId(face), cost })
                .collect();
            let mut pit = Pit::new(0, 4, 0);
            let name = NameBuf::from_uri("/a/b").unwrap();
            let id = pit
                .insert(pit_key(7, false, false), &name.as_name(), false, false, 1_000_000)
                .unwrap();
            let entry = pit.get_mut(id).unwrap();
            entry.in_records.push(InRecord {
                face: FaceId(ingress),
                nonce: 1,
                expiry: 1_000_000,
                token: TokenBuf::new(None),
            });
            let pending = FaceTable::default();
            let mut rng = 1;
            let mut ctx = Ctx {
                now: 0,
                ingress: FaceId(ingress),
                nexthops: &nexthops,
                pending: &pending,
                rng: &mut rng,
            };
            // The general ranking, on the same entry before the strategy touches it.
            let general = best_route_pick(&ctx, entry);
            // The pipeline's shortcut for a new entry, on a copy of it.
            let mut copy = entry.clone();
            let fresh = best_route_fresh(0, FaceId(ingress), &nexthops, &mut copy);
            let decision = after_receive_interest(StrategyKind::BestRoute, &mut ctx, entry, true);
            prop_assert_eq!(fresh, general);
            prop_assert_eq!(copy.strategy_state, entry.strategy_state);
            match general {
                Some(face) => prop_assert_eq!(decision, Decision::Forward({
                    let mut l = FaceList::new();
                    l.push(face);
                    l
                })),
                None => prop_assert_eq!(decision, Decision::Nack(NackReason::NoRoute)),
            }
        }
    }
}
