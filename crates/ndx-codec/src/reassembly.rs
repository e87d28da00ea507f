//! Sans-IO reassembly of NDNLPv2 fragments.
//!
//! A [`Reassembler`] takes decoded [`LpPacket`]s with the time and the peer they came from
//! ([`Reassembler::push`]) and hands back each network packet once all its fragments are in
//! ([`Reassembled`]). It does no I/O and reads no clock: the caller passes `now_ns`, and may
//! ask [`Reassembler::next_expiry`] when to call [`Reassembler::expire`].
//!
//! The design (bounded memory, eviction, expiry) is described on [`Reassembler`].

use std::collections::HashMap;

use crate::lp::{CachePolicy, LpHeaders, LpPacket, MAX_PIT_TOKEN_LEN, NackReason};

/// Limits of a [`Reassembler`]; they fix its memory use (see [`Reassembler::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReassemblerConfig {
    /// Most fragment sets in progress at once; a new set beyond this evicts the oldest.
    pub max_partials: usize,
    /// Largest reassembled packet, in bytes (the sum of its fragments' payloads).
    pub max_packet_len: usize,
    /// Largest FragCount accepted.
    pub max_frag_count: u64,
    /// A set still incomplete this long after its first fragment arrived is dropped.
    pub timeout_ns: u64,
}

impl Default for ReassemblerConfig {
    /// 256 partial sets of up to 16384 bytes in at most 64 fragments, 500 ms timeout
    /// (about 4 MiB of buffers).
    fn default() -> Self {
        Self {
            max_partials: 256,
            max_packet_len: 16384,
            max_frag_count: 64,
            timeout_ns: 500_000_000,
        }
    }
}

/// Why a fragment (and the set it belonged to) was dropped. `Copy` and allocation-free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReassemblyError {
    /// A fragment (FragCount > 1) without Sequence: its set cannot be identified.
    #[error("fragment without Sequence")]
    MissingSequence,
    /// A fragment without a Fragment element, or with an empty one.
    #[error("fragment {index} carries no payload")]
    EmptyFragment {
        /// Its FragIndex.
        index: u64,
    },
    /// FragIndex is not below FragCount.
    #[error("FragIndex {index} is not below FragCount {count}")]
    FragIndexOutOfRange {
        /// The FragIndex.
        index: u64,
        /// The FragCount.
        count: u64,
    },
    /// FragCount above [`ReassemblerConfig::max_frag_count`].
    #[error("FragCount {count} exceeds the limit of {max}")]
    FragCountTooLarge {
        /// The FragCount.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// A fragment whose FragCount differs from that of earlier fragments of its set.
    #[error("FragCount {found} differs from {expected} in earlier fragments of the set")]
    InconsistentFragCount {
        /// The set's FragCount.
        expected: u64,
        /// This fragment's FragCount.
        found: u64,
    },
    /// The fragments add up to more than [`ReassemblerConfig::max_packet_len`] bytes.
    #[error("reassembled packet would exceed {max} bytes")]
    TooLarge {
        /// The limit.
        max: usize,
    },
}

/// What a [`Reassembler`] has seen, for statistics. Every field only ever grows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReassemblyCounters {
    /// LpPackets pushed that were fragments (FragCount > 1), valid or not.
    pub fragments_received: u64,
    /// Fragmented packets fully reassembled.
    pub packets_completed: u64,
    /// Fragments dropped because their piece had already arrived.
    pub duplicates: u64,
    /// Sets dropped because they did not complete within the timeout.
    pub expired: u64,
    /// Sets dropped to make room for a new set when every slot was in use.
    pub evicted: u64,
    /// Fragments rejected as malformed or inconsistent (their set is dropped).
    pub invalid: u64,
    /// Fragments rejected for FragCount or total size over the limits (their set is dropped).
    pub too_large: u64,
}

/// The header fields of fragment 0 (or of an unfragmented LpPacket) that matter to the
/// forwarder, owned, so they outlive the frames they came in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReassembledHeaders {
    pit_token: [u8; MAX_PIT_TOKEN_LEN],
    pit_token_len: u8,
    /// Nack.
    pub nack: Option<NackReason>,
    /// CongestionMark.
    pub congestion_mark: Option<u64>,
    /// IncomingFaceId.
    pub incoming_face_id: Option<u64>,
    /// NextHopFaceId.
    pub next_hop_face_id: Option<u64>,
    /// CachePolicy.
    pub cache_policy: Option<CachePolicy>,
}

impl ReassembledHeaders {
    /// Copies the fields out of `h` (a PitToken longer than 32 bytes, which decoding never
    /// yields, is dropped).
    pub fn from_headers(h: &LpHeaders<'_>) -> Self {
        let mut out = Self {
            nack: h.nack,
            congestion_mark: h.congestion_mark,
            incoming_face_id: h.incoming_face_id,
            next_hop_face_id: h.next_hop_face_id,
            cache_policy: h.cache_policy,
            ..Self::default()
        };
        if let Some(token) = h.pit_token
            && let Some(dst) = out.pit_token.get_mut(..token.len())
        {
            dst.copy_from_slice(token);
            out.pit_token_len = token.len() as u8;
        }
        out
    }

    /// PitToken.
    pub fn pit_token(&self) -> Option<&[u8]> {
        match self.pit_token_len {
            0 => None,
            n => self.pit_token.get(..usize::from(n)),
        }
    }

    /// These fields as [`LpHeaders`], e.g. to forward them in an outgoing LpPacket.
    pub fn as_lp_headers(&self) -> LpHeaders<'_> {
        LpHeaders {
            pit_token: self.pit_token(),
            nack: self.nack,
            congestion_mark: self.congestion_mark,
            incoming_face_id: self.incoming_face_id,
            next_hop_face_id: self.next_hop_face_id,
            cache_policy: self.cache_policy,
            ..LpHeaders::default()
        }
    }
}

/// A whole network packet out of a [`Reassembler`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reassembled<'a> {
    /// The network packet (an Interest or Data TLV, when the sender was honest): the
    /// fragments' payloads in FragIndex order, or the unfragmented LpPacket's Fragment.
    pub packet: &'a [u8],
    /// Fragment 0's header fields.
    pub headers: ReassembledHeaders,
}

/// Identifies a fragment set: the face it came from and the Sequence of its fragment 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    peer: u64,
    base: u64,
}

/// Where one received piece sits in its slot's buffer; `len == 0` means not received
/// (empty pieces are rejected).
#[derive(Debug, Clone, Copy, Default)]
struct Piece {
    offset: u32,
    len: u32,
}

/// One partial set's bookkeeping; its bytes live in `Reassembler::bufs`.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    key: Option<Key>,
    created_ns: u64,
    frag_count: u64,
    received: u64,
    used: usize,
    headers: ReassembledHeaders,
    /// Previous (older) and next (newer) slot in the FIFO of slots in use.
    prev: Option<usize>,
    next: Option<usize>,
}

/// The outcome of storing a fragment, computed before borrowing the result.
enum Stored {
    Pending,
    Complete { slot: usize, len: usize },
}

/// Reassembles NDNLPv2 fragments from many peers in bounded, preallocated memory.
///
/// Every method is O(1) per call (amortised over expired sets), except [`Reassembler::new`]
/// and [`Reassembler::remove_peer`].
///
/// # Design: bounded memory, eviction, expiry
///
/// All memory is allocated once, in [`Reassembler::new`]: `max_partials` slot buffers of
/// `max_packet_len` bytes, a table of `max_frag_count` (offset, length) entries per slot, one
/// output buffer of `max_packet_len` bytes, and a hash index from (peer, base sequence) to slot
/// reserved at twice `max_partials` entries, so inserts and removals never grow it. A fragment
/// set is keyed by its peer and `Sequence - FragIndex` (NDNLPv2 numbers fragment `i` of a packet
/// `base + i`), so peers never mix and a set is found in O(1). Each piece is copied into its
/// slot as it arrives, in arrival order, and its (offset, length) recorded under its FragIndex;
/// on completion the pieces are returned in place when they arrived in order, or copied once,
/// in FragIndex order, into the output buffer. Slots in use form a FIFO list by creation time:
/// when all `max_partials` slots are busy, a new set evicts the oldest set of the peer that
/// holds the most sets (its own oldest if that is the new set's peer; counted in
/// [`ReassemblyCounters::evicted`]), so a peer spraying first fragments can only churn its own
/// sets, never grow the table or push out the sets of peers that hold fewer; and a set that has not completed `timeout_ns` after its first
/// fragment arrived is dropped ([`ReassemblyCounters::expired`]), lazily on every
/// [`Reassembler::push`] and on [`Reassembler::expire`], popping from the head of the same
/// list, so expiry costs O(1) per expired set. Malformed or oversized input drops the whole set
/// and returns a [`ReassemblyError`]; nothing on the input path panics or allocates.
pub struct Reassembler {
    config: ReassemblerConfig,
    /// Width of each slot's piece table (the effective `max_frag_count`).
    frag_slots: usize,
    slots: Vec<Slot>,
    /// `max_partials` buffers of `max_packet_len` bytes, back to back.
    bufs: Vec<u8>,
    /// `max_partials` tables of `frag_slots` pieces, back to back.
    pieces: Vec<Piece>,
    /// Where out-of-order pieces are put in order.
    out: Vec<u8>,
    index: HashMap<Key, usize>,
    free: Vec<usize>,
    /// Oldest and newest slot in use.
    head: Option<usize>,
    tail: Option<usize>,
    in_use: usize,
    /// Sets in progress per peer (peers with none are absent).
    per_peer: HashMap<u64, u32>,
    counters: ReassemblyCounters,
}

impl core::fmt::Debug for Reassembler {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Reassembler")
            .field("config", &self.config)
            .field("partials", &self.in_use)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl Reassembler {
    /// A reassembler with all its memory allocated up front: about
    /// `max_partials * (max_packet_len + 8 * max_frag_count)` bytes, plus `max_packet_len`.
    ///
    /// Limits are brought into range: `max_partials` at least 1, `max_packet_len` at most
    /// `u32::MAX`, and `max_frag_count` at most `max_packet_len` (every piece carries at least
    /// one byte, so more pieces could never fit). [`Reassembler::config`] returns the values in
    /// force.
    pub fn new(config: ReassemblerConfig) -> Self {
        let max_packet_len = config.max_packet_len.min(u32::MAX as usize);
        let max_frag_count = config.max_frag_count.min(max_packet_len as u64);
        let config = ReassemblerConfig {
            max_partials: config.max_partials.max(1),
            max_packet_len,
            max_frag_count,
            timeout_ns: config.timeout_ns,
        };
        let partials = config.max_partials;
        let frag_slots = max_frag_count as usize;
        Self {
            config,
            frag_slots,
            slots: vec![Slot::default(); partials],
            bufs: vec![0; partials.saturating_mul(max_packet_len)],
            pieces: vec![Piece::default(); partials.saturating_mul(frag_slots)],
            out: vec![0; max_packet_len],
            // Twice the entries ever held: hashbrown then always rehashes its tombstones in
            // place instead of growing.
            index: HashMap::with_capacity(partials.saturating_mul(2)),
            free: (0..partials).rev().collect(),
            head: None,
            tail: None,
            in_use: 0,
            per_peer: HashMap::with_capacity(partials.saturating_mul(2)),
            counters: ReassemblyCounters::default(),
        }
    }

    /// The limits in force.
    pub fn config(&self) -> &ReassemblerConfig {
        &self.config
    }

    /// The counters so far.
    pub fn counters(&self) -> ReassemblyCounters {
        self.counters
    }

    /// Fragment sets in progress.
    pub fn partials(&self) -> usize {
        self.in_use
    }

    /// When the oldest set in progress expires (for the caller's timer); `None` when there is
    /// none.
    pub fn next_expiry(&self) -> Option<u64> {
        let slot = self.slots.get(self.head?)?;
        Some(slot.created_ns.saturating_add(self.config.timeout_ns))
    }

    /// Drops every set whose first fragment arrived `timeout_ns` or more before `now_ns`.
    ///
    /// `now_ns` should not go backwards; if it does, sets expire late, never early.
    pub fn expire(&mut self, now_ns: u64) {
        while let Some(h) = self.head {
            let Some(slot) = self.slots.get(h) else { break };
            if now_ns < slot.created_ns.saturating_add(self.config.timeout_ns) {
                break;
            }
            self.release(h);
            self.counters.expired += 1;
        }
    }

    /// Drops every set in progress from `peer` (e.g. when its face closes). O(max_partials).
    pub fn remove_peer(&mut self, peer: u64) {
        for s in 0..self.slots.len() {
            if self.slots.get(s).and_then(|slot| slot.key).map(|k| k.peer) == Some(peer) {
                self.release(s);
            }
        }
    }

    /// Takes one LpPacket received at `now_ns` from `peer` (any number identifying the face or
    /// link, so that two peers' sequences never mix).
    ///
    /// - An unfragmented LpPacket (FragCount absent or 1) is returned at once, borrowing `lp`'s
    ///   Fragment, with its headers; an IDLE one (no Fragment) gives `Ok(None)`.
    /// - A fragment is stored; `Ok(None)` until the last piece of its set arrives, then the
    ///   whole packet, borrowing the reassembler's buffers until the next call. A duplicate
    ///   piece is counted and dropped (`Ok(None)`).
    /// - A malformed, inconsistent or oversized fragment is counted, drops its set, and is
    ///   reported as a [`ReassemblyError`].
    ///
    /// Sets that timed out are expired first. Never panics and never allocates.
    pub fn push<'a>(
        &'a mut self,
        now_ns: u64,
        peer: u64,
        lp: &LpPacket<'a>,
    ) -> Result<Option<Reassembled<'a>>, ReassemblyError> {
        self.expire(now_ns);
        if !lp.is_fragment() {
            return Ok(lp.fragment().map(|packet| Reassembled {
                packet,
                headers: ReassembledHeaders::from_headers(&lp.headers()),
            }));
        }
        self.counters.fragments_received += 1;
        let Some(sequence) = lp.sequence() else {
            self.counters.invalid += 1;
            return Err(ReassemblyError::MissingSequence);
        };
        let index = lp.frag_index();
        let key = Key {
            peer,
            base: sequence.wrapping_sub(index),
        };
        match self.store(now_ns, key, lp) {
            Ok(Stored::Pending) => Ok(None),
            Ok(Stored::Complete { slot, len }) => Ok(Some(self.assemble(slot, len))),
            Err(e) => {
                if let Some(&s) = self.index.get(&key) {
                    self.release(s);
                }
                match e {
                    ReassemblyError::FragCountTooLarge { .. }
                    | ReassemblyError::TooLarge { .. } => {
                        self.counters.too_large += 1;
                    }
                    _ => self.counters.invalid += 1,
                }
                Err(e)
            }
        }
    }

    /// Checks a fragment and copies it into its set's slot. On error the caller drops the set.
    fn store(
        &mut self,
        now_ns: u64,
        key: Key,
        lp: &LpPacket<'_>,
    ) -> Result<Stored, ReassemblyError> {
        let (index, count) = (lp.frag_index(), lp.frag_count());
        if index >= count {
            return Err(ReassemblyError::FragIndexOutOfRange { index, count });
        }
        let payload = match lp.fragment() {
            Some(p) if !p.is_empty() => p,
            _ => return Err(ReassemblyError::EmptyFragment { index }),
        };
        let max = self.config.max_frag_count;
        if count > max {
            return Err(ReassemblyError::FragCountTooLarge { count, max });
        }
        let too_large = ReassemblyError::TooLarge {
            max: self.config.max_packet_len,
        };
        if payload.len() > self.config.max_packet_len {
            return Err(too_large);
        }
        let s = match self.index.get(&key) {
            Some(&s) => s,
            None => self.open(now_ns, key, count),
        };
        let Some(slot) = self.slots.get(s).copied() else {
            return Err(too_large);
        };
        if slot.frag_count != count {
            return Err(ReassemblyError::InconsistentFragCount {
                expected: slot.frag_count,
                found: count,
            });
        }
        // index < count <= max_frag_count == frag_slots, so this is in the slot's table.
        let piece_at = s * self.frag_slots + index as usize;
        let Some(piece) = self.pieces.get(piece_at).copied() else {
            return Err(ReassemblyError::FragIndexOutOfRange { index, count });
        };
        if piece.len != 0 {
            self.counters.duplicates += 1;
            return Ok(Stored::Pending);
        }
        let end = slot.used + payload.len();
        if end > self.config.max_packet_len {
            return Err(too_large);
        }
        let buf_at = s * self.config.max_packet_len;
        let Some(dst) = self.bufs.get_mut(buf_at + slot.used..buf_at + end) else {
            return Err(too_large);
        };
        dst.copy_from_slice(payload);
        if let Some(p) = self.pieces.get_mut(piece_at) {
            // Both fit in u32: max_packet_len <= u32::MAX.
            *p = Piece {
                offset: slot.used as u32,
                len: payload.len() as u32,
            };
        }
        let Some(slot) = self.slots.get_mut(s) else {
            return Err(too_large);
        };
        slot.used = end;
        slot.received += 1;
        if index == 0 {
            slot.headers = ReassembledHeaders::from_headers(&lp.headers());
        }
        if slot.received < count {
            return Ok(Stored::Pending);
        }
        self.release(s);
        self.counters.packets_completed += 1;
        Ok(Stored::Complete { slot: s, len: end })
    }

    /// The completed (already released) set in slot `s`: in place when its pieces arrived in
    /// order, else copied in FragIndex order into the output buffer.
    fn assemble(&mut self, s: usize, len: usize) -> Reassembled<'_> {
        let slot = self.slots.get(s).copied().unwrap_or_default();
        let buf_at = s * self.config.max_packet_len;
        let src = self.bufs.get(buf_at..buf_at + len).unwrap_or(&[]);
        let table_at = s * self.frag_slots;
        let table = self
            .pieces
            .get(table_at..table_at + slot.frag_count as usize)
            .unwrap_or(&[]);
        let mut in_order = true;
        let mut at = 0usize;
        for p in table {
            in_order &= p.offset as usize == at;
            at += p.len as usize;
        }
        if in_order {
            return Reassembled {
                packet: src,
                headers: slot.headers,
            };
        }
        let mut at = 0usize;
        for p in table {
            let (offset, n) = (p.offset as usize, p.len as usize);
            if let (Some(dst), Some(piece)) =
                (self.out.get_mut(at..at + n), src.get(offset..offset + n))
            {
                dst.copy_from_slice(piece);
            }
            at += n;
        }
        Reassembled {
            packet: self.out.get(..len).unwrap_or(&[]),
            headers: slot.headers,
        }
    }

    /// Takes a slot for a new set (evicting the oldest set when none is free) and returns it.
    fn open(&mut self, now_ns: u64, key: Key, count: u64) -> usize {
        let s = match self.free.pop() {
            Some(s) => s,
            None => {
                // No slot free means every slot is in use, so the FIFO has a head.
                let victim = self.victim(key.peer).unwrap_or(self.head.unwrap_or(0));
                self.release(victim);
                self.counters.evicted += 1;
                self.free.pop().unwrap_or(victim)
            }
        };
        let table_at = s * self.frag_slots;
        let width = (count as usize).min(self.frag_slots);
        if let Some(table) = self.pieces.get_mut(table_at..table_at + width) {
            table.fill(Piece::default());
        }
        let prev = self.tail;
        if let Some(slot) = self.slots.get_mut(s) {
            *slot = Slot {
                key: Some(key),
                created_ns: now_ns,
                frag_count: count,
                received: 0,
                used: 0,
                headers: ReassembledHeaders::default(),
                prev,
                next: None,
            };
        }
        match prev.and_then(|p| self.slots.get_mut(p)) {
            Some(p) => p.next = Some(s),
            None => self.head = Some(s),
        }
        self.tail = Some(s);
        self.index.insert(key, s);
        *self.per_peer.entry(key.peer).or_insert(0) += 1;
        self.in_use += 1;
        s
    }

    /// The set to evict for a new set from `peer` when every slot is busy: the oldest set of
    /// the peer holding the most (`peer` itself on a tie). O(max_partials), only when full.
    fn victim(&self, peer: u64) -> Option<usize> {
        let own = self.per_peer.get(&peer).copied().unwrap_or(0);
        let (heaviest, most) = self
            .per_peer
            .iter()
            .max_by_key(|&(_, &n)| n)
            .map(|(&p, &n)| (p, n))?;
        let target = if own >= most { peer } else { heaviest };
        let mut at = self.head;
        while let Some(s) = at {
            let slot = self.slots.get(s)?;
            if slot.key.map(|k| k.peer) == Some(target) {
                return Some(s);
            }
            at = slot.next;
        }
        None
    }

    /// Frees slot `s` (no-op when it is not in use): out of the index and the FIFO, onto the
    /// free list. Its bytes stay until the slot is reused.
    fn release(&mut self, s: usize) {
        let Some(slot) = self.slots.get_mut(s) else {
            return;
        };
        let Some(key) = slot.key.take() else { return };
        let (prev, next) = (slot.prev.take(), slot.next.take());
        match prev.and_then(|p| self.slots.get_mut(p)) {
            Some(p) => p.next = next,
            None => self.head = next,
        }
        match next.and_then(|n| self.slots.get_mut(n)) {
            Some(n) => n.prev = prev,
            None => self.tail = prev,
        }
        self.index.remove(&key);
        if let Some(n) = self.per_peer.get_mut(&key.peer) {
            *n -= 1;
            if *n == 0 {
                self.per_peer.remove(&key.peer);
            }
        }
        self.free.push(s);
        self.in_use = self.in_use.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fragment::Fragmenter;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    /// Encodes `packet` as LpPacket fragments.
    fn fragments(packet: &[u8], mtu: usize, headers: &LpHeaders<'_>, seq: u64) -> Vec<Vec<u8>> {
        let f = Fragmenter::new(mtu).unwrap();
        let mut frags = f.fragment(packet, headers, seq).unwrap();
        let mut out = vec![0u8; mtu];
        let mut v = Vec::new();
        while let Some(n) = frags.next_into(&mut out) {
            v.push(out[..n.unwrap()].to_vec());
        }
        v
    }

    /// One hand-made fragment.
    fn frag(seq: Option<u64>, index: u64, count: u64, payload: &[u8]) -> Vec<u8> {
        let h = LpHeaders {
            sequence: seq,
            frag_index: Some(index),
            frag_count: Some(count),
            ..LpHeaders::default()
        };
        let mut out = vec![0u8; h.encoded_len(Some(payload.len()))];
        h.encode(Some(payload), &mut out).unwrap();
        out
    }

    /// Pushes `wire` and returns the reassembled packet, if any.
    fn push(
        r: &mut Reassembler,
        now: u64,
        peer: u64,
        wire: &[u8],
    ) -> Result<Option<(Vec<u8>, ReassembledHeaders)>, ReassemblyError> {
        let lp = LpPacket::decode(wire).unwrap();
        r.push(now, peer, &lp)
            .map(|o| o.map(|d| (d.packet.to_vec(), d.headers)))
    }

    fn small() -> ReassemblerConfig {
        ReassemblerConfig {
            max_partials: 4,
            max_packet_len: 1000,
            max_frag_count: 16,
            timeout_ns: 100 * MS,
        }
    }

    fn feed(r: &mut Reassembler, order: &[usize], lps: &[Vec<u8>]) -> Vec<u8> {
        let mut done = None;
        for (k, &i) in order.iter().enumerate() {
            let got = push(r, 0, 1, &lps[i]).unwrap();
            if k + 1 < order.len() {
                assert!(got.is_none());
            } else {
                done = got;
            }
        }
        done.unwrap().0
    }

    #[test]
    fn in_order_reverse_and_shuffled() {
        let packet = pattern(900, 1);
        let lps = fragments(&packet, 100, &LpHeaders::default(), 40);
        let n = lps.len();
        assert!(n > 9);
        let mut r = Reassembler::new(small());
        let forward: Vec<usize> = (0..n).collect();
        let reverse: Vec<usize> = (0..n).rev().collect();
        let shuffled: Vec<usize> = (0..n).map(|i| (i * 7) % n).collect();
        assert!(!n.is_multiple_of(7));
        for order in [&forward, &reverse, &shuffled] {
            assert_eq!(feed(&mut r, order, &lps), packet);
            assert_eq!(r.partials(), 0);
        }
        let c = r.counters();
        assert_eq!(c.packets_completed, 3);
        assert_eq!(c.fragments_received, 3 * n as u64);
    }

    #[test]
    fn unfragmented_passes_through() {
        let token = [5u8; 3];
        let h = LpHeaders {
            pit_token: Some(&token),
            congestion_mark: Some(2),
            ..LpHeaders::default()
        };
        let packet = pattern(50, 2);
        let lps = fragments(&packet, 1500, &h, 0);
        assert_eq!(lps.len(), 1);
        let mut r = Reassembler::new(small());
        let (p, hh) = push(&mut r, 0, 1, &lps[0]).unwrap().unwrap();
        assert_eq!(p, packet);
        assert_eq!(hh.pit_token(), Some(&token[..]));
        assert_eq!(hh.congestion_mark, Some(2));
        // IDLE packet: nothing.
        assert_eq!(push(&mut r, 0, 1, &[100, 0]).unwrap(), None);
        assert_eq!(r.counters(), ReassemblyCounters::default());
    }

    #[test]
    fn first_fragment_headers_are_kept() {
        let token = [1u8; 32];
        let h = LpHeaders {
            pit_token: Some(&token),
            nack: Some(NackReason::Duplicate),
            incoming_face_id: Some(7),
            next_hop_face_id: Some(8),
            cache_policy: Some(CachePolicy::NoCache),
            congestion_mark: Some(1),
            ..LpHeaders::default()
        };
        let packet = pattern(700, 3);
        let lps = fragments(&packet, 200, &h, 0);
        let mut r = Reassembler::new(small());
        let order: Vec<usize> = (0..lps.len()).rev().collect();
        let mut done = None;
        for &i in &order {
            done = push(&mut r, 0, 1, &lps[i]).unwrap();
        }
        let (p, got) = done.unwrap();
        assert_eq!(p, packet);
        assert_eq!(got, ReassembledHeaders::from_headers(&h));
        assert_eq!(got.as_lp_headers(), h);
    }

    /// `frag` with a PitToken (and, on fragment 0, a CongestionMark), as a sender of its
    /// choice writes it: `omit_index_0` leaves FragIndex out of fragment 0, as NDNts does.
    fn tokened_frag(
        seq: u64,
        index: u64,
        count: u64,
        token: Option<&[u8]>,
        omit_index_0: bool,
        payload: &[u8],
    ) -> Vec<u8> {
        let h = LpHeaders {
            sequence: Some(seq + index),
            frag_index: (index > 0 || !omit_index_0).then_some(index),
            frag_count: Some(count),
            pit_token: token,
            congestion_mark: (index == 0).then_some(1),
            ..LpHeaders::default()
        };
        let mut out = vec![0u8; h.encoded_len(Some(payload.len()))];
        h.encode(Some(payload), &mut out).unwrap();
        out
    }

    #[test]
    fn token_on_every_fragment_or_on_the_first_only() {
        let token = [0x11u8, 0x22, 0x33, 0x44, 0x55, 0x66];
        let pieces: [&[u8]; 3] = [b"abc", b"def", b"gh"];
        // (token on later fragments, FragIndex omitted on fragment 0): ndx and ndnd put the
        // token on every fragment, NDNts on the first only and omits its FragIndex.
        for (later, omit) in [(true, false), (false, true), (false, false), (true, true)] {
            // Fragment 0 first, in the middle and last.
            for order in [[0, 1, 2], [1, 0, 2], [2, 1, 0]] {
                let mut r = Reassembler::new(small());
                let mut done = None;
                for (k, &i) in order.iter().enumerate() {
                    let t = (i == 0 || later).then_some(&token[..]);
                    let w = tokened_frag(500, i as u64, 3, t, omit, pieces[i]);
                    let got = push(&mut r, 0, 1, &w).unwrap();
                    assert_eq!(got.is_some(), k == 2, "{later} {omit} {order:?}");
                    done = got;
                }
                let (p, h) = done.unwrap();
                assert_eq!(p, b"abcdefgh");
                assert_eq!(h.pit_token(), Some(&token[..]), "{later} {omit} {order:?}");
                assert_eq!(h.congestion_mark, Some(1), "fragment 0's fields");
            }
        }
    }

    #[test]
    fn fragment_0s_token_wins_over_a_later_ones() {
        let mut r = Reassembler::new(small());
        let other = [9u8; 4];
        let w1 = tokened_frag(0, 1, 2, Some(&other), false, b"yz");
        let w0 = tokened_frag(0, 0, 2, Some(b"first"), false, b"wx");
        assert!(push(&mut r, 0, 1, &w0).unwrap().is_none());
        let (p, h) = push(&mut r, 0, 1, &w1).unwrap().unwrap();
        assert_eq!(p, b"wxyz");
        assert_eq!(h.pit_token(), Some(&b"first"[..]));
    }

    #[test]
    fn two_peers_same_sequences_interleaved() {
        let a = pattern(800, 10);
        let b = pattern(750, 20);
        let la = fragments(&a, 150, &LpHeaders::default(), 7);
        let lb = fragments(&b, 150, &LpHeaders::default(), 7);
        let mut r = Reassembler::new(small());
        let mut got = Vec::new();
        for i in 0..la.len().max(lb.len()) {
            if let Some(w) = la.get(i)
                && let Some((p, _)) = push(&mut r, 0, 1, w).unwrap()
            {
                got.push((1, p));
            }
            if let Some(w) = lb.get(i)
                && let Some((p, _)) = push(&mut r, 0, 2, w).unwrap()
            {
                got.push((2, p));
            }
        }
        got.sort();
        assert_eq!(got, vec![(1, a), (2, b)]);
    }

    #[test]
    fn duplicates_are_dropped() {
        let packet = pattern(500, 4);
        let lps = fragments(&packet, 200, &LpHeaders::default(), 0);
        assert_eq!(lps.len(), 3);
        let mut r = Reassembler::new(small());
        assert!(push(&mut r, 0, 1, &lps[1]).unwrap().is_none());
        assert!(push(&mut r, 0, 1, &lps[1]).unwrap().is_none());
        assert!(push(&mut r, 0, 1, &lps[0]).unwrap().is_none());
        assert!(push(&mut r, 0, 1, &lps[0]).unwrap().is_none());
        let (p, _) = push(&mut r, 0, 1, &lps[2]).unwrap().unwrap();
        assert_eq!(p, packet);
        assert_eq!(r.counters().duplicates, 2);
        // After completion, a late duplicate starts a new set that later expires.
        assert!(push(&mut r, 0, 1, &lps[2]).unwrap().is_none());
        assert_eq!(r.partials(), 1);
    }

    #[test]
    fn expiry_on_virtual_time() {
        let packet = pattern(500, 5);
        let lps = fragments(&packet, 200, &LpHeaders::default(), 0);
        let mut r = Reassembler::new(small());
        push(&mut r, 10 * MS, 1, &lps[0]).unwrap();
        assert_eq!(r.next_expiry(), Some(110 * MS));
        push(&mut r, 50 * MS, 1, &lps[1]).unwrap();
        r.expire(109 * MS);
        assert_eq!(r.partials(), 1);
        // The last piece comes too late: its set expired, so it starts a new one.
        assert!(push(&mut r, 110 * MS, 1, &lps[2]).unwrap().is_none());
        assert_eq!(r.counters().expired, 1);
        assert_eq!(r.partials(), 1);
        r.expire(210 * MS);
        assert_eq!(r.partials(), 0);
        assert_eq!(r.counters().expired, 2);
        assert_eq!(r.next_expiry(), None);
        // Within the timeout it completes.
        push(&mut r, 300 * MS, 1, &lps[0]).unwrap();
        push(&mut r, 350 * MS, 1, &lps[1]).unwrap();
        let (p, _) = push(&mut r, 399 * MS, 1, &lps[2]).unwrap().unwrap();
        assert_eq!(p, packet);
    }

    #[test]
    fn a_peer_spraying_first_fragments_evicts_only_its_own_sets() {
        let mut r = Reassembler::new(small());
        let legit = fragments(&pattern(300, 9), 200, &LpHeaders::default(), 5000);
        // The legitimate peer's first fragment, then a flood of first fragments from peer 2.
        push(&mut r, 0, 1, &legit[0]).unwrap();
        for k in 0..100u64 {
            let set = fragments(&pattern(300, k as u8), 200, &LpHeaders::default(), k * 100);
            push(&mut r, 1 + k, 2, &set[0]).unwrap();
        }
        assert_eq!(r.partials(), 4);
        assert_eq!(r.counters().evicted, 97);
        // Peer 1's set survived the flood and completes.
        assert_eq!(
            push(&mut r, 200, 1, &legit[1]).unwrap().unwrap().0,
            pattern(300, 9)
        );
        // A third peer's new set takes room from the heaviest peer, not from peer 1's next.
        let again = fragments(&pattern(300, 7), 200, &LpHeaders::default(), 9000);
        push(&mut r, 201, 1, &again[0]).unwrap();
        let third = fragments(&pattern(300, 8), 200, &LpHeaders::default(), 1);
        push(&mut r, 202, 3, &third[0]).unwrap();
        assert_eq!(
            push(&mut r, 203, 1, &again[1]).unwrap().unwrap().0,
            pattern(300, 7)
        );
        assert_eq!(
            push(&mut r, 204, 3, &third[1]).unwrap().unwrap().0,
            pattern(300, 8)
        );
    }

    #[test]
    fn oldest_set_is_evicted_when_full() {
        let mut r = Reassembler::new(small());
        let sets: Vec<Vec<Vec<u8>>> = (0..6)
            .map(|k| fragments(&pattern(300, k as u8), 200, &LpHeaders::default(), k * 100))
            .collect();
        for (k, set) in sets.iter().enumerate() {
            push(&mut r, k as u64, 1, &set[0]).unwrap();
        }
        assert_eq!(r.partials(), 4);
        assert_eq!(r.counters().evicted, 2);
        // Sets 0 and 1 were evicted: their second pieces start new sets (evicting 2 and 3).
        assert!(push(&mut r, 10, 1, &sets[0][1]).unwrap().is_none());
        assert!(push(&mut r, 10, 1, &sets[1][1]).unwrap().is_none());
        assert_eq!(r.counters().evicted, 4);
        // Sets 4 and 5 survive and complete.
        assert_eq!(
            push(&mut r, 10, 1, &sets[4][1]).unwrap().unwrap().0,
            pattern(300, 4)
        );
        assert_eq!(
            push(&mut r, 10, 1, &sets[5][1]).unwrap().unwrap().0,
            pattern(300, 5)
        );
        assert_eq!(r.partials(), 2);
    }

    #[test]
    fn oversize_is_rejected() {
        let mut r = Reassembler::new(small());
        // FragCount over the limit.
        let e = push(&mut r, 0, 1, &frag(Some(0), 0, 17, &[1; 10])).unwrap_err();
        assert_eq!(e, ReassemblyError::FragCountTooLarge { count: 17, max: 16 });
        // Total over max_packet_len (1000), detected on the piece that crosses it.
        assert!(
            push(&mut r, 0, 1, &frag(Some(0), 0, 3, &[1; 400]))
                .unwrap()
                .is_none()
        );
        assert!(
            push(&mut r, 0, 1, &frag(Some(1), 1, 3, &[1; 400]))
                .unwrap()
                .is_none()
        );
        let e = push(&mut r, 0, 1, &frag(Some(2), 2, 3, &[1; 400])).unwrap_err();
        assert_eq!(e, ReassemblyError::TooLarge { max: 1000 });
        assert_eq!(r.partials(), 0);
        // A single piece over the limit.
        let e = push(&mut r, 0, 1, &frag(Some(5), 0, 2, &[1; 1001])).unwrap_err();
        assert_eq!(e, ReassemblyError::TooLarge { max: 1000 });
        assert_eq!(r.partials(), 0);
        assert_eq!(r.counters().too_large, 3);
    }

    #[test]
    fn inconsistent_frag_count_drops_the_set() {
        let mut r = Reassembler::new(small());
        assert!(
            push(&mut r, 0, 1, &frag(Some(10), 0, 3, b"abc"))
                .unwrap()
                .is_none()
        );
        let e = push(&mut r, 0, 1, &frag(Some(11), 1, 4, b"def")).unwrap_err();
        assert_eq!(
            e,
            ReassemblyError::InconsistentFragCount {
                expected: 3,
                found: 4
            }
        );
        assert_eq!(r.partials(), 0);
        assert_eq!(r.counters().invalid, 1);
    }

    #[test]
    fn missing_sequence_and_empty_fragment() {
        let mut r = Reassembler::new(small());
        let e = push(&mut r, 0, 1, &frag(None, 0, 2, b"abc")).unwrap_err();
        assert_eq!(e, ReassemblyError::MissingSequence);
        let e = push(&mut r, 0, 1, &frag(Some(0), 1, 2, b"")).unwrap_err();
        assert_eq!(e, ReassemblyError::EmptyFragment { index: 1 });
        let h = LpHeaders {
            sequence: Some(0),
            frag_index: Some(0),
            frag_count: Some(2),
            ..LpHeaders::default()
        };
        let mut buf = [0u8; 64];
        let n = h.encode(None, &mut buf).unwrap();
        let e = push(&mut r, 0, 1, &buf[..n]).unwrap_err();
        assert_eq!(e, ReassemblyError::EmptyFragment { index: 0 });
        assert_eq!(r.counters().invalid, 3);
        assert_eq!(r.counters().fragments_received, 3);
    }

    #[test]
    fn remove_peer_drops_its_sets() {
        let mut r = Reassembler::new(small());
        push(&mut r, 0, 1, &frag(Some(0), 0, 2, b"a")).unwrap();
        push(&mut r, 0, 2, &frag(Some(0), 0, 2, b"b")).unwrap();
        r.remove_peer(1);
        assert_eq!(r.partials(), 1);
        assert!(
            push(&mut r, 0, 1, &frag(Some(1), 1, 2, b"c"))
                .unwrap()
                .is_none()
        );
        let (p, _) = push(&mut r, 0, 2, &frag(Some(1), 1, 2, b"d"))
            .unwrap()
            .unwrap();
        assert_eq!(p, b"bd");
    }

    #[test]
    fn no_growth_after_churn() {
        let mut r = Reassembler::new(small());
        let caps = |r: &Reassembler| {
            (
                r.index.capacity(),
                r.free.capacity(),
                r.bufs.capacity(),
                r.pieces.capacity(),
                r.out.capacity(),
            )
        };
        let before = caps(&r);
        for i in 0..10_000u64 {
            let w = frag(Some(i), i % 3, 3, &[i as u8; 10]);
            let _ = push(&mut r, i, i % 5, &w);
        }
        assert_eq!(caps(&r), before);
        assert!(r.partials() <= 4);
    }

    #[test]
    fn config_is_clamped() {
        let r = Reassembler::new(ReassemblerConfig {
            max_partials: 0,
            max_packet_len: 10,
            max_frag_count: u64::MAX,
            timeout_ns: 1,
        });
        assert_eq!(r.config().max_partials, 1);
        assert_eq!(r.config().max_frag_count, 10);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn fragment_then_reassemble_any_order(
            packet in proptest::collection::vec(any::<u8>(), 1..20000),
            mtu in 100usize..9000,
            seq in any::<u64>(),
            token in proptest::collection::vec(any::<u8>(), 1..=32),
            mark in proptest::option::of(any::<u64>()),
            keys in proptest::collection::vec(any::<u64>(), 800),
        ) {
            let h = LpHeaders {
                pit_token: Some(&token),
                congestion_mark: mark,
                ..LpHeaders::default()
            };
            let lps = fragments(&packet, mtu, &h, seq);
            // A random permutation: sort indices by random keys.
            let mut order: Vec<usize> = (0..lps.len()).collect();
            order.sort_by_key(|&i| keys.get(i).copied().unwrap_or(0));
            let mut r = Reassembler::new(ReassemblerConfig {
                max_partials: 4,
                max_packet_len: 20000,
                max_frag_count: 1024,
                timeout_ns: 1,
            });
            let mut done = None;
            for (k, &i) in order.iter().enumerate() {
                let got = push(&mut r, 0, 3, &lps[i]).unwrap();
                prop_assert_eq!(got.is_some(), k + 1 == order.len());
                done = got;
            }
            let (p, got) = done.unwrap();
            prop_assert_eq!(p, packet);
            prop_assert_eq!(got, ReassembledHeaders::from_headers(&h));
            prop_assert_eq!(r.partials(), 0);
        }

        #[test]
        fn arbitrary_pushes_never_panic(
            ops in proptest::collection::vec(
                (
                    0u64..3,
                    proptest::option::of(0u64..12),
                    0u64..6,
                    0u64..7,
                    0usize..40,
                    0u64..30,
                ),
                0..300,
            ),
        ) {
            let config = ReassemblerConfig {
                max_partials: 3,
                max_packet_len: 64,
                max_frag_count: 5,
                timeout_ns: 50,
            };
            let mut r = Reassembler::new(config);
            let mut now = 0u64;
            for (peer, seq, index, count, len, dt) in ops {
                now += dt;
                let h = LpHeaders {
                    sequence: seq,
                    frag_index: Some(index),
                    frag_count: Some(count),
                    ..LpHeaders::default()
                };
                let payload = vec![len as u8; len];
                let mut buf = vec![0u8; 128];
                // FragIndex >= FragCount does not encode (nor decode): skip those.
                let Ok(n) = h.encode(Some(&payload), &mut buf) else { continue };
                let Ok(lp) = LpPacket::decode(&buf[..n]) else { continue };
                if let Ok(Some(d)) = r.push(now, peer, &lp) {
                    prop_assert!(d.packet.len() <= 64);
                }
                prop_assert!(r.partials() <= 3);
                if now.is_multiple_of(7) {
                    r.expire(now);
                }
            }
            let c = r.counters();
            prop_assert!(c.packets_completed + c.invalid + c.too_large <= c.fragments_received);
        }

        #[test]
        fn arbitrary_bytes_never_panic(
            frames in proptest::collection::vec(
                proptest::collection::vec(any::<u8>(), 0..80),
                0..50,
            ),
        ) {
            let mut r = Reassembler::new(ReassemblerConfig {
                max_partials: 2,
                max_packet_len: 100,
                max_frag_count: 4,
                timeout_ns: 10,
            });
            for (t, mut f) in frames.into_iter().enumerate() {
                // Mostly well-framed LpPackets with arbitrary contents.
                if f.len() >= 2 && t % 4 != 0 {
                    f[0] = 100;
                    f[1] = (f.len() - 2).min(252) as u8;
                    f.truncate(2 + usize::from(f[1]));
                }
                if let Ok(lp) = LpPacket::decode(&f) {
                    let _ = r.push(t as u64, (t % 2) as u64, &lp);
                }
            }
        }
    }
}
