//! The burst scheduler: a sliding pipeline that decodes, hashes and prefetches each frame's
//! lines a few frames before its packet runs through its pipeline.

use super::*;

/// How many frames apart a burst's pipeline stages are: a frame's first-level prefetches are
/// issued `LEAD` frames before its second level reads them, and so on (see `Shard::burst`).
/// Prefetches spread one frame's worth at a time among other frames' work hide a random DRAM
/// line where a group of 8 issued back to back did not (`benches/results/forwarding-passes.md`, twelfth pass).
pub(super) const LEAD: usize = 1;

/// How many frames ahead of its decode a frame's first bytes are prefetched: a frame the
/// NIC wrote by DMA (AF_XDP zero-copy) or that waited in a ring is not in cache, and a decode
/// that waits for it stalls the whole pipeline.
pub(super) const FRAME_AHEAD: usize = 2;

/// The bytes of a frame prefetched [`FRAME_AHEAD`] frames ahead: an Interest whole (its
/// name, Nonce and lifetime), a Data's name and MetaInfo.
pub(super) const FRAME_HEAD: usize = 128;

/// Slots of a burst's pipeline ring: at least the `3 * LEAD + 1` frames in flight.
pub(super) const RING: usize = 4;

/// Frames between revisions of the FIB speculation (see [`Speculate`]).
pub(super) const REVISE: usize = 8;

const _: () = assert!(RING > 3 * LEAD);

/// How far a burst's first passes prefetch the FIB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Speculate {
    /// Nothing at the first level; at the second, for a likely CS miss alone, the stage-1
    /// marker and route slot (while nearly every Interest is a CS hit,
    /// which reads no FIB line: the first level's FIB lines, two from DRAM in a large FIB,
    /// would be fetched for nothing, competing with the hits' Data for the memory bus).
    Late,
    /// The stage-1 marker, and the stage-1 prefix's route slot.
    Shallow,
    /// The stage-1 marker, and the route slot one component deeper, where the marker
    /// usually sends the lookup (the default, and while most Interests miss the CS).
    Deep,
}

impl Speculate {
    /// The speculation for the frames to come, after `hits` likely CS hits among
    /// `interests` Interests (`interests > 0`): [`Deep`](Self::Deep) while hits are a
    /// minority, [`Late`](Self::Late) from 7 in 8, else [`Shallow`](Self::Shallow).
    pub(super) fn after(hits: usize, interests: usize) -> Self {
        if hits * 2 < interests {
            Self::Deep
        } else if hits * 8 >= interests * 7 {
            Self::Late
        } else {
            Self::Shallow
        }
    }
}

/// A frame after the burst's first pass. A burst's slots start as [`Other`](Self::Other)
/// (a tag to write, where a slot with the name hashes in it would be 336 bytes to copy per
/// slot and call); an Interest's hashes are reset in place, not built elsewhere and copied in.
#[expect(
    clippy::large_enum_variant,
    reason = "the slots are a fixed array reused in place; boxing the hashes would allocate"
)]
pub(super) enum Staged<'f> {
    /// An Interest or a Nack, with the LP fields (PitToken, Nack, NextHopFaceId) and the
    /// name hashes.
    Interest(Interest<'f>, Incoming<'f>, NameHashes<'f>),
    /// A Data, with the PitToken it echoes.
    Data(Data<'f>, Option<&'f [u8]>),
    /// Anything else (fragments, IDLE packets, malformed frames): decoded again on the
    /// one-packet path.
    Other,
}

impl<'f> Staged<'f> {
    /// Makes the slot an Interest's, keeping its name hashes (stale until reset) if it was one.
    #[inline(always)]
    pub(super) fn set_interest(&mut self, interest: Interest<'f>, inc: Incoming<'f>) {
        match self {
            Staged::Interest(i, incoming, _) => {
                *i = interest;
                *incoming = inc;
            }
            _ => *self = Staged::Interest(interest, inc, NameHashes::empty()),
        }
    }
}

impl<F: Frame> Shard<F> {
    /// The burst path, for lent frames or not: one copy of the code (the passes inline into
    /// it once). A sliding pipeline: while frame `t` is decoded, hashed and its buckets
    /// prefetched (level 1), frame `t - LEAD` has its second level prefetched, frame
    /// `t - 2 * LEAD` its third, and frame `t - 3 * LEAD` runs through its pipeline, so each
    /// prefetch is spread among other frames' work instead of issued with a whole group's.
    /// (One loop: splitting off the drain duplicated the inlined passes, and the compiler
    /// then called the stage and run passes out of line, 63 instructions more per exchange.)
    #[inline(never)]
    pub(super) fn burst(
        &mut self,
        now: u64,
        frames: &[(FaceId, &[u8])],
        out: &mut Actions,
        lend: bool,
    ) {
        let snap = self.fib.guard();
        // One tag per slot (see `Staged`); `[const { .. }; RING]` would copy each slot whole.
        let mut ring: [Staged<'_>; RING] = std::array::from_fn(|_| Staged::Other);
        let mut spec = [Speculate::Deep; RING];
        let mut likely_hit = [false; RING];
        let n = frames.len();
        // Level-2 tallies since the speculation was last revised (every `REVISE` frames).
        let (mut tallied, mut interests, mut hits) = (0, 0, 0);
        for t in 0..n + 3 * LEAD {
            if let Some(&(_, ahead)) = frames.get(t + FRAME_AHEAD)
                && let Some(first) = ahead.first()
            {
                ndx_mem::prefetch_lines(first, ahead.len().min(FRAME_HEAD));
            }
            if let Some(&(_, frame)) = frames.get(t) {
                let s = t % RING;
                spec[s] = self.speculate;
                let eager = self.stage(frame, &snap, spec[s], &mut ring[s]);
                self.prefetch_buckets(&mut ring[s], &snap, spec[s], eager);
            }
            if let Some(u) = t.checked_sub(LEAD)
                && u < n
            {
                let s = u % RING;
                likely_hit[s] = false;
                if let Some(hit) = self.prefetch_entries(&mut ring[s], &snap, spec[s]) {
                    interests += 1;
                    hits += usize::from(hit);
                    likely_hit[s] = hit;
                }
                tallied += 1;
                // Mostly CS misses: the frames staged next prefetch the FIB a level deeper
                // from the start. Mostly hits: they do not (the deeper prefix would be hashed
                // and its lines fetched for nothing). Nearly all hits: they leave the FIB
                // to the second level, for the likely misses alone.
                if tallied == REVISE || u + 1 == n {
                    if interests > 0 {
                        self.speculate = Speculate::after(hits, interests);
                    }
                    (tallied, interests, hits) = (0, 0, 0);
                }
            }
            if let Some(u) = t.checked_sub(2 * LEAD)
                && u < n
                && likely_hit[u % RING]
                && let Staged::Interest(_, _, hashes) = &ring[u % RING]
            {
                self.cs.prefetch_hit(hashes.full(), true);
            }
            if let Some(u) = t.checked_sub(3 * LEAD)
                && let Some(&(face, frame)) = frames.get(u)
            {
                if lend {
                    out.lend(frame);
                }
                self.run(now, face, frame, &mut ring[u % RING], &snap, out);
            }
        }
        out.input = None;
    }

    /// First pass over a burst's frame: decode, and hash an Interest's name (no state
    /// changes). Written into the burst's slot, in place. Returns the hashes of the stage-1
    /// prefix and of the one a component deeper when they were finalised in the pass (see
    /// `NameHashes::reset`), for [`prefetch_buckets`](Self::prefetch_buckets).
    pub(super) fn stage<'f>(
        &self,
        frame: &'f [u8],
        snap: &FibSnapshot,
        speculate: Speculate,
        slot: &mut Staged<'f>,
    ) -> [Option<u64>; 2] {
        // The usual shapes (a bare packet, or one behind a PitToken) in one pass, without
        // the LpPacket's view; matched by reference, the view goes straight into the slot.
        match &Packet::decode_usual(frame) {
            Some(Usual::Interest(i, token)) => slot.set_interest(*i, Incoming::tokened(*token)),
            Some(Usual::Data(d, token)) => {
                *slot = Staged::Data(*d, *token);
                return [None; 2];
            }
            None => {
                if !Self::stage_other(frame, slot) {
                    return [None; 2];
                }
            }
        }
        let Staged::Interest(interest, _, hashes) = slot else {
            return [None; 2];
        };
        let m = snap.stage1();
        // The first level's FIB prefetches ask for these prefixes' hashes: finalised in the
        // pass. A late speculation asks for none here (a likely CS hit never does): the whole
        // name alone is hashed, and a likely miss hashes its FIB prefixes at the next level.
        if speculate == Speculate::Late {
            hashes.reset_whole(&self.cfg.hash_key, &interest.name());
            return [None; 2];
        }
        hashes.reset(
            &self.cfg.hash_key,
            &interest.name(),
            m,
            speculate == Speculate::Deep,
        )
    }

    /// [`stage`](Self::stage)'s decode of a frame in none of the usual shapes (an LpPacket
    /// with other headers, every malformed frame): into `slot`. Whether it is an Interest.
    #[inline(never)]
    pub(super) fn stage_other<'f>(frame: &'f [u8], slot: &mut Staged<'f>) -> bool {
        match &Packet::decode(frame) {
            Ok(Packet::Interest(i)) => slot.set_interest(*i, Incoming::bare()),
            Ok(Packet::Data(d)) => *slot = Staged::Data(*d, None),
            Ok(Packet::Lp(lp)) if !lp.is_fragment() => match lp.network_packet() {
                Ok(Some(Packet::Interest(i))) => slot.set_interest(
                    i,
                    Incoming {
                        token: lp.pit_token(),
                        nack: lp.nack(),
                        next_hop: lp.next_hop_face_id(),
                    },
                ),
                Ok(Some(Packet::Data(d))) => *slot = Staged::Data(d, lp.pit_token()),
                _ => *slot = Staged::Other,
            },
            _ => *slot = Staged::Other,
        }
        matches!(slot, Staged::Interest(..))
    }

    /// A frame's first prefetch level: the CS bucket, the FIB's stage-1 marker, and the
    /// FIB's route slot where the lookup likely starts: one level past stage 1 (where the
    /// marker usually sends it) when speculating deep, stage 1 when shallow, neither
    /// marker nor slot when late (see [`Speculate`]). A Data's PIT entry, by
    /// its token. (An Interest's PIT and dead-nonce buckets wait for the next level, which
    /// knows whether the CS is likely to answer it without them.)
    /// `eager`: [`stage`](Self::stage)'s hashes of those two prefixes, when it finalised them.
    #[inline(always)]
    pub(super) fn prefetch_buckets(
        &self,
        st: &mut Staged<'_>,
        snap: &FibSnapshot,
        speculate: Speculate,
        eager: [Option<u64>; 2],
    ) {
        let m = snap.stage1();
        match st {
            Staged::Interest(_, _, hashes) => {
                self.cs.prefetch(hashes.full());
                let (guess, guessed) = match speculate {
                    Speculate::Late => return,
                    Speculate::Shallow => (m, eager[0]),
                    Speculate::Deep => (m + 1, eager[1]),
                };
                // A finalised stage-1 hash is that of a prefix shorter than the name: its
                // marker is read.
                match eager[0] {
                    Some(h) => snap.prefetch_marker_of(h),
                    None => snap.prefetch_marker(hashes),
                }
                match guessed {
                    Some(h) => snap.prefetch_of(h),
                    None => snap.prefetch(hashes, guess),
                }
            }
            Staged::Data(_, token) => {
                if let Some(t) = token {
                    self.pit.prefetch_token(t);
                }
            }
            Staged::Other => {}
        }
    }

    /// A frame's second prefetch level, reading what the first brought in: a likely CS hit's
    /// slot (a hit reads nothing else: the CS answers before the PIT and dead-nonce list are
    /// asked); else the PIT and dead-nonce buckets and, when the marker says the FIB lookup
    /// starts elsewhere than guessed, the route slot where it will start (a route table of
    /// 10^6 prefixes is far out of cache); when the speculation is late, the stage-1 FIB
    /// lines the first level left out.
    ///
    /// Returns, for an Interest, whether it is a likely CS hit.
    #[inline(always)]
    pub(super) fn prefetch_entries(
        &self,
        st: &mut Staged<'_>,
        snap: &FibSnapshot,
        speculate: Speculate,
    ) -> Option<bool> {
        let Staged::Interest(interest, _, hashes) = st else {
            return None;
        };
        let full = hashes.full();
        if self.cs.may_hold(full) {
            self.cs.prefetch_entries(full);
            return Some(true);
        }
        let (cbp, mbf) = (interest.can_be_prefix(), interest.must_be_fresh());
        self.pit.prefetch(pit_key(full, cbp, mbf));
        if let Some(nonce) = interest.nonce() {
            self.dnl.prefetch(full, nonce);
        }
        let m = snap.stage1();
        let guess = match speculate {
            Speculate::Late => {
                // Nothing of the FIB was asked for yet: the stage-1 lines, one level late.
                snap.prefetch_marker(hashes);
                snap.prefetch(hashes, m);
                return Some(false);
            }
            Speculate::Shallow => m,
            Speculate::Deep => m + 1,
        };
        let start = snap.lpm_start(hashes);
        if start != guess {
            snap.prefetch(hashes, start);
        }
        Some(false)
    }

    /// Third pass: one packet through its pipeline.
    pub(super) fn run(
        &mut self,
        now: u64,
        face: FaceId,
        frame: &[u8],
        staged: &mut Staged<'_>,
        snap: &FibSnapshot,
        out: &mut Actions,
    ) {
        match staged {
            Staged::Interest(interest, inc, hashes) => {
                if inc.nack.is_some() {
                    self.on_nack(now, face, interest, inc, hashes, snap, out)
                } else {
                    self.on_interest(now, face, interest, inc, hashes, snap, out)
                }
            }
            Staged::Data(data, token) => self.on_data(now, face, data, *token, snap, out),
            Staged::Other => match Packet::decode(frame) {
                Ok(Packet::Lp(lp)) => self.on_lp(now, face, &lp, snap, out),
                Ok(_) => self.dropped(out, face, DropReason::Idle),
                Err(_) => self.dropped(out, face, DropReason::Malformed),
            },
        }
    }
}
