//! A forwarding shard: the Interest, Data and Nack pipelines over one shard's PIT and CS and
//! the shared FIB, sans-IO.
//!
//! [`Shard::process`] takes the time, the face a frame came from and its bytes, and appends
//! what to do to an [`Actions`] list: frames to send (encoded into the list's reusable byte
//! arena) and drops with a reason. [`Shard::on_timer`] expires PIT entries. Nothing here reads
//! a clock, touches a socket or allocates per packet once the arenas have grown to their
//! working size.
mod actions;
mod burst;
mod data;
mod interest;
mod nack;
mod parking;
#[cfg(test)]
mod tests;

use actions::LentPart;
pub use actions::{Actions, Outgoing, Send};
use burst::Speculate;
use parking::push_l2_write;

use std::ops::Range;

use ndx_codec::{
    Data, Interest, LpHeaders, LpPacket, NackReason, Name, Packet, Reassembler, ReassemblerConfig,
    Usual, Writer, types,
};

use crate::cs::{Cs, CsConfig, Frame, NoFrame};
use crate::dispatch::content_of;
use crate::dnl::DeadNonceList;
use crate::face::{FaceId, FaceTable};
use crate::fair::{FaceLoad, FaceLoads, Fairness, NackBucket, PitShares};
use crate::fib::{FibReader, FibSnapshot};
use crate::hash::{HashKey, NameHashes};
use crate::l2::{
    L2Config, L2Counters, L2Failure, L2Read, L2State, L2Write, L2WriteRec, Park, Parked,
};
use crate::lent::Lent;
use crate::pit::{InRecord, OutRecord, PIT_TOKEN_LEN, Pit, PitFull, PitId, TokenBuf, pit_key};
use crate::strategy::{self, Ctx, Decision, StrategyKind};

/// What the shard does with Data nobody asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsolicited {
    /// Drop it (counted). The default, as in NFD.
    Drop,
    /// Offer it to the CS.
    Cache,
}

/// How a face behaves, as far as forwarding is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FaceInfo {
    /// A local application (no HopLimit decrement; may set NextHopFaceId).
    pub local: bool,
    /// A multi-access link (Ethernet multicast): the same Nonce from the same face is a loop,
    /// and loops are dropped rather than Nacked.
    pub multi_access: bool,
    /// Interests sent to this face carry an NDNLPv2 IncomingFaceId (NFD's local fields; the
    /// router's management face uses it to learn who sent a command).
    pub local_fields: bool,
}

/// What a shard keeps per face: its properties and its load.
#[derive(Debug, Clone, Copy, Default)]
struct FaceState {
    info: FaceInfo,
    load: FaceLoad,
    bucket: NackBucket,
}

/// Where a forwarded Interest came from, for the checks and headers of each send.
#[derive(Debug, Clone, Copy)]
struct Forward {
    /// The downstream (an IncomingFaceId for faces with local fields).
    from: FaceId,
    /// Only local faces may receive it: the name is under `/localhost`, or under `/localhop`
    /// and it came from a non-local face (NFD's scope rules).
    local_only: bool,
}

/// The first component of every `/localhop` name, as it is on the wire.
const LOCALHOP: &[u8] = b"\x08\x08localhop";

/// True when `name` is under `/localhop`, which a router does not forward from one non-local
/// face to another.
#[inline]
pub fn is_localhop(name: &Name<'_>) -> bool {
    let b = name.as_bytes();
    b.get(1) == Some(&8) && b.starts_with(LOCALHOP)
}

/// The first component of every `/localhost` name, as it is on the wire.
const LOCALHOST: &[u8] = b"\x08\x09localhost";

/// True when `name` is under `/localhost`, which only local faces may send or receive.
#[inline]
pub fn is_localhost(name: &Name<'_>) -> bool {
    let b = name.as_bytes();
    // The first component's length byte first: nearly every name fails that one compare
    // (a plain `starts_with` cost the worst-case exchange ~10 ns).
    b.get(1) == Some(&9) && b.starts_with(LOCALHOST)
}

/// Shard configuration.
#[derive(Debug, Clone, Copy)]
pub struct ShardConfig {
    /// Shard number (byte 0 of our PIT tokens).
    pub shard: u8,
    /// PIT capacity (hard bound).
    pub pit_capacity: usize,
    /// CS L1 configuration.
    pub cs: CsConfig,
    /// Dead-nonce list capacity.
    pub dnl_capacity: usize,
    /// How long a dead nonce is remembered (ns).
    pub dnl_lifetime_ns: u64,
    /// Longest InterestLifetime honoured (ms); longer ones are capped.
    pub max_lifetime_ms: u64,
    /// Unsolicited Data policy.
    pub unsolicited: Unsolicited,
    /// Key for every name hash.
    pub hash_key: HashKey,
    /// Seed of the shard's generator, which the adaptive strategy draws from and which gives
    /// a Nonce to Interests that arrive without one (they leave with it). Mixed with `shard`,
    /// so the shards of one router draw apart; a router should pick it at random, or routers
    /// would send the same nonces.
    pub seed: u64,
    /// The content store's second level (None: L1 only).
    pub l2: Option<L2Config>,
    /// What one face may take of the shard (PIT share, Nack rate).
    pub fairness: Fairness,
}

impl Default for ShardConfig {
    fn default() -> Self {
        Self {
            shard: 0,
            pit_capacity: 1 << 16,
            cs: CsConfig::default(),
            dnl_capacity: 1 << 16,
            dnl_lifetime_ns: 6_000_000_000,
            max_lifetime_ms: 120_000,
            unsolicited: Unsolicited::Drop,
            hash_key: HashKey::new(0x6e64_785f_6b65_7930, 0x6e64_785f_6b65_7931),
            seed: 0x1234_5678,
            l2: None,
            fairness: Fairness::default(),
        }
    }
}

/// Why a packet was dropped (each has a counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Not a valid NDN packet.
    Malformed,
    /// A fragment rejected by reassembly (malformed, inconsistent or oversized: its set is
    /// dropped). Sets that time out or are evicted incomplete are in
    /// [`Shard::reassembly_counters`].
    Reassembly,
    /// HopLimit was 0 on arrival.
    HopLimit,
    /// A looping Interest (Nonce seen); Nack Duplicate sent on point-to-point faces.
    Loop,
    /// No FIB match; Nack NoRoute sent.
    NoRoute,
    /// PIT full; Nack Congestion sent.
    PitFull,
    /// The face held its share of the PIT ([`Fairness`]); Nack Congestion sent.
    PitQuota,
    /// Data that no PIT entry asked for.
    Unsolicited,
    /// A Nack that matches no pending Interest.
    NackUnmatched,
    /// An LpPacket with no fragment (IDLE) or only link-level fields.
    Idle,
    /// A `/localhost` packet from a non-local face (NFD's scope rule).
    Scope,
}

const DROP_REASONS: usize = 11;

fn drop_index(r: DropReason) -> usize {
    r as usize
}

/// Per-shard counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShardCounters {
    /// Interests received.
    pub interests_in: u64,
    /// Data received.
    pub data_in: u64,
    /// Nacks received.
    pub nacks_in: u64,
    /// Interests sent.
    pub interests_out: u64,
    /// Data sent.
    pub data_out: u64,
    /// Nacks sent.
    pub nacks_out: u64,
    /// Interests answered from the CS.
    pub cs_hits: u64,
    /// Interests that joined a pending entry.
    pub aggregated: u64,
    /// Retransmissions suppressed.
    pub suppressed: u64,
    /// Data and Nacks whose PIT entry was found by the PitToken they echoed, in O(1); the
    /// others were looked up by name (an upstream that does not echo tokens).
    pub by_token: u64,
    /// Nacks not sent because their face was past its Nack rate ([`Fairness`]).
    pub nacks_limited: u64,
    /// Data that satisfied pending entries none of whose downstreams was still waiting
    /// (their in-records had expired): cached (if admitted), sent nowhere.
    pub data_late: u64,
    /// Drops, by [`DropReason`] (index = `reason as usize`).
    pub drops: [u64; DROP_REASONS],
}

impl ShardCounters {
    /// Drops for one reason.
    pub fn dropped(&self, r: DropReason) -> u64 {
        self.drops[drop_index(r)]
    }
}

/// One forwarding shard, whose CS may keep receive frames of type `F`.
///
/// # Lending frames
/// A caller that receives into buffers of its own lends them to the shard rather than
/// having their Data copied: it pushes its handle on each frame onto a [`Lent`] ledger,
/// runs the burst with [`process_burst_lent`](Self::process_burst_lent) (or
/// [`process_burst_keeping`](Self::process_burst_keeping), which lets the CS keep the
/// frames its Data arrived in), sends with [`Lent::sends`], then ends the lending with
/// [`return_lent`](Self::return_lent), which hands each handle back once, saying whether
/// the CS takes that frame. Frames the CS lets go later come back, as `F`, from
/// [`released_frames`](Self::released_frames).
///
/// ```
/// use ndx_core::{Actions, FaceId, Fib, HashKey, Lent, Shard, ShardConfig};
/// let (_fib, reader) = Fib::new(HashKey::new(1, 2), 2);
/// let mut shard = Shard::with_frames::<Vec<u8>>(ShardConfig::default(), reader, 0);
/// // The caller's receive buffers; the handles are their indices.
/// let mut rx: Vec<Option<Vec<u8>>> = vec![Some(vec![0x05, 0x00])];
/// let (mut lent, mut out) = (Lent::new(), Actions::new());
/// {
///     let batch: Vec<(FaceId, &[u8])> =
///         rx.iter().map(|b| (FaceId(1), b.as_deref().unwrap())).collect();
///     lent.extend(0..batch.len());
///     shard.process_burst_keeping(0, &batch, &mut lent, &mut out);
///     for send in lent.sends(&out, |&i| batch[i].1) {
///         let _ = send; // transmit
///     }
/// }
/// out.clear();
/// let mut returned = 0;
/// shard.return_lent(&mut lent, |i, keep| {
///     returned += 1;
///     if keep { rx[i].take() } else { None }
/// });
/// assert_eq!(returned, 1); // every lent frame comes back, once
/// let back: Vec<Vec<u8>> = shard.released_frames().collect();
/// assert!(back.is_empty());
/// ```
///
/// A shard made with [`Shard::new`] keeps no frames: it cannot be handed one.
///
/// ```compile_fail
/// use ndx_core::{Fib, HashKey, Lent, Shard, ShardConfig};
/// let (_fib, reader) = Fib::new(HashKey::new(1, 2), 2);
/// let mut shard = Shard::new(ShardConfig::default(), reader, 0);
/// let mut lent: Lent<usize> = Lent::new();
/// shard.return_lent(&mut lent, |_, _| Some(vec![0u8]));
/// ```
#[derive(Debug)]
pub struct Shard<F = NoFrame> {
    cfg: ShardConfig,
    pit: Pit,
    cs: Cs<F>,
    dnl: DeadNonceList,
    fib: FibReader,
    reassembler: Reassembler,
    faces: FaceTable<FaceState>,
    pending: FaceTable<u32>,
    shares: PitShares,
    counters: ShardCounters,
    rng: u64,
    /// How far bursts prefetch the FIB (see [`Speculate`]); follows the share of likely CS
    /// hits among the last 8 frames a burst tallied.
    speculate: Speculate,
    scratch: Vec<u8>,
    /// An Interest that arrived without a Nonce, re-encoded with the one it is forwarded with.
    nonced: Vec<u8>,
    matched: Vec<PitId>,
    l2: Option<L2State>,
    parked: Parked,
    l2_name: Vec<u8>,
    /// Whether the burst running lends its frames for the CS to keep.
    keep_lent: bool,
}

/// A network-layer packet with the LP fields the pipelines need.
#[derive(Clone, Copy)]
struct Incoming<'a> {
    token: Option<&'a [u8]>,
    nack: Option<NackReason>,
    next_hop: Option<u64>,
}

impl<'a> Incoming<'a> {
    const fn bare() -> Self {
        Self::tokened(None)
    }

    /// A packet whose only LP field is `token` (if any).
    const fn tokened(token: Option<&'a [u8]>) -> Self {
        Self {
            token,
            nack: None,
            next_hop: None,
        }
    }
}

impl Shard {
    /// A shard reading routes from `fib`; all tables are allocated now. Its CS copies every
    /// Data it stores (see [`with_frames`](Self::with_frames)).
    pub fn new(cfg: ShardConfig, fib: FibReader, now: u64) -> Self {
        Self::with_cs(cfg, fib, now, Cs::new(cfg.cs, cfg.hash_key))
    }

    /// [`new`](Self::new), for a shard whose CS may keep the receive frames, of type `F`,
    /// that Data arrive in (see [`process_burst_keeping`](Shard::process_burst_keeping)).
    pub fn with_frames<F: Frame>(cfg: ShardConfig, fib: FibReader, now: u64) -> Shard<F> {
        Shard::with_cs(cfg, fib, now, Cs::with_frames::<F>(cfg.cs, cfg.hash_key))
    }

    /// [`new`](Self::new) with the frame type `F`, its CS copying every Data nonetheless:
    /// for a caller that can turn keeping off but has one shard type for both cases.
    pub fn copying<F: Frame>(cfg: ShardConfig, fib: FibReader, now: u64) -> Shard<F> {
        Shard::with_cs(cfg, fib, now, Cs::copying::<F>(cfg.cs, cfg.hash_key))
    }
}

impl<F: Frame> Shard<F> {
    fn with_cs(cfg: ShardConfig, fib: FibReader, now: u64, mut cs: Cs<F>) -> Self {
        cs.set_eviction_log(cfg.l2.is_some());
        Self {
            pit: Pit::new(cfg.shard, cfg.pit_capacity, now),
            cs,
            dnl: DeadNonceList::new(cfg.dnl_capacity, cfg.dnl_lifetime_ns),
            fib,
            reassembler: Reassembler::new(ReassemblerConfig::default()),
            faces: FaceTable::default(),
            pending: FaceTable::default(),
            shares: PitShares::new(cfg.pit_capacity, &cfg.fairness),
            counters: ShardCounters::default(),
            // Shard 0 keeps the seed as given; xorshift is a bijection, so shards whose states
            // differ never draw the same value at the same step.
            rng: (cfg.seed ^ u64::from(cfg.shard).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1,
            speculate: Speculate::Deep,
            scratch: Vec::with_capacity(9000),
            nonced: Vec::new(),
            matched: Vec::with_capacity(16),
            l2: cfg.l2.map(L2State::new),
            parked: Parked::default(),
            l2_name: Vec::new(),
            keep_lent: false,
            cfg,
        }
    }

    /// Declares a face (unknown faces are treated as remote point-to-point links).
    pub fn add_face(&mut self, face: FaceId, info: FaceInfo) {
        self.faces.get_or_insert_with(face, FaceState::default).info = info;
        self.pending.get_or_insert_with(face, || 0);
    }

    /// Forgets a face (its in/out-records expire normally; the entries it created no longer
    /// count against anyone's share).
    pub fn remove_face(&mut self, face: FaceId) {
        if self
            .faces
            .remove(&face)
            .is_some_and(|f| f.load.pit_entries > 0)
        {
            self.shares.face_idle(&self.cfg.fairness);
        }
        self.pending.remove(&face);
        self.reassembler.remove_peer(u64::from(face.0));
    }

    /// Applies the settings a configuration reload may change while the shard runs: the
    /// fairness knobs (the PIT share is recomputed at once; Nack buckets keep their tokens),
    /// the longest InterestLifetime and what unsolicited Data get. Entries already in the
    /// PIT keep their expiry.
    pub fn retune(&mut self, fairness: Fairness, max_lifetime_ms: u64, unsolicited: Unsolicited) {
        self.cfg.fairness = fairness;
        self.cfg.max_lifetime_ms = max_lifetime_ms;
        self.cfg.unsolicited = unsolicited;
        self.shares.update(&self.cfg.fairness);
    }

    /// The shard's settings.
    pub fn config(&self) -> &ShardConfig {
        &self.cfg
    }

    /// Counters.
    pub fn counters(&self) -> ShardCounters {
        self.counters
    }

    /// The counters of the shard's NDNLPv2 reassembler: among them the fragment sets dropped
    /// incomplete when they timed out ([`on_timer`](Self::on_timer) expires them) or were
    /// evicted to make room, which no [`DropReason`] counts.
    pub fn reassembly_counters(&self) -> ndx_codec::ReassemblyCounters {
        self.reassembler.counters()
    }

    /// The PIT (read-only).
    pub fn pit(&self) -> &Pit {
        &self.pit
    }

    /// Maps the CS slab's memory now ([`Cs::prefault`]), so that no insert takes a page
    /// fault; call it on the thread that runs the shard, before its loop. Returns the bytes.
    pub fn prefault(&mut self) -> usize {
        self.cs.prefault()
    }

    /// The CS (read-only).
    pub fn cs(&self) -> &Cs<F> {
        &self.cs
    }

    /// Interests pending on `face` (what the adaptive strategy weighs).
    pub fn pending_on(&self, face: FaceId) -> u32 {
        self.pending.get(&face).copied().unwrap_or(0)
    }

    /// Each face's load and counters (faces that sent nothing included).
    pub fn face_loads(&self) -> FaceLoads {
        self.faces.iter().map(|(id, f)| (id, f.load)).collect()
    }

    /// One face's load and counters.
    pub fn face_load(&self, face: FaceId) -> FaceLoad {
        self.faces.get(&face).map(|f| f.load).unwrap_or_default()
    }

    /// The PIT share each face is held to now ([`Fairness`]).
    pub fn pit_share(&self) -> u32 {
        self.shares.quota()
    }

    fn face_info(&self, face: FaceId) -> FaceInfo {
        self.faces.get(&face).map(|f| f.info).unwrap_or_default()
    }

    fn dropped(&mut self, out: &mut Actions, face: FaceId, reason: DropReason) {
        self.counters.drops[drop_index(reason)] += 1;
        if let Some(f) = self.faces.get_mut(&face) {
            f.load.drops += 1;
        }
        out.drop_packet(face, reason);
    }

    /// Like [`process`](Self::process), but the frame is lent: the caller pushed its handle
    /// on the frame onto `lent` (see [`Lent`]) and keeps the frame's bytes unchanged until
    /// it has sent the actions (read with [`Lent::sends`]) and cleared them. A Data in it is
    /// then sent down from where it is, with only the NDNLPv2 header that carries each
    /// downstream's PitToken written into the action list, instead of being copied there
    /// whole (the I/O layer copies it once, straight into its transmit frame).
    ///
    /// # Panics
    /// If `lent` does not hold one more handle than `out` has lent frames.
    #[inline(never)]
    pub fn process_lent<L>(
        &mut self,
        now: u64,
        face: FaceId,
        frame: &[u8],
        lent: &mut Lent<L>,
        out: &mut Actions,
    ) {
        lent.check(out, 1);
        out.lend(frame);
        self.process(now, face, frame, out);
        out.input = None;
    }

    /// Like [`process_burst`](Self::process_burst), but the frames are lent, as with
    /// [`process_lent`](Self::process_lent): the caller pushed a handle onto `lent` for each
    /// of `frames`, in order.
    ///
    /// # Panics
    /// If `lent` does not hold `frames.len()` more handles than `out` has lent frames.
    #[inline(never)]
    pub fn process_burst_lent<L>(
        &mut self,
        now: u64,
        frames: &[(FaceId, &[u8])],
        lent: &mut Lent<L>,
        out: &mut Actions,
    ) {
        lent.check(out, frames.len());
        self.burst(now, frames, out, true);
    }

    /// Like [`process_burst_lent`](Self::process_burst_lent), and the caller can part with
    /// the frames: a Data the CS admits is not copied, its frame is kept instead (zero-copy
    /// admission, as seed 001 and NDN-DPDK keep the packet buffer). A shard made with
    /// [`Shard::new`] copies as [`process_burst_lent`](Self::process_burst_lent) does.
    ///
    /// Once it has sent the actions, and before it lends frames again, the caller calls
    /// [`return_lent`](Self::return_lent), which gives the CS the frames it chose (until
    /// then their Data are indexed but not served) and hands every other back; the frames
    /// [`released_frames`](Self::released_frames) hands back as the CS lets them go are the
    /// caller's again.
    ///
    /// # Panics
    /// As [`process_burst_lent`](Self::process_burst_lent).
    #[inline(never)]
    pub fn process_burst_keeping<L>(
        &mut self,
        now: u64,
        frames: &[(FaceId, &[u8])],
        lent: &mut Lent<L>,
        out: &mut Actions,
    ) {
        lent.check(out, frames.len());
        // A new action list with slots still pending: their frames will never come.
        if out.lent == 0 && self.cs.has_pending() {
            self.cs.discard_pending();
        }
        self.keep_lent = true;
        self.burst(now, frames, out, true);
        self.keep_lent = false;
    }

    /// Ends a lending (after the sends went out): every handle in `lent` comes back once, in
    /// order, as `back(handle, keep)`; `keep` says the CS wants that frame (return it, or
    /// `None` if the caller cannot part with it after all: its Data is then dropped from
    /// the CS); otherwise the frame stays the caller's (return `None`). See
    /// [`Cs::return_lent`].
    #[inline(never)]
    pub fn return_lent<L>(&mut self, lent: &mut Lent<L>, back: impl FnMut(L, bool) -> Option<F>) {
        self.cs.return_lent(lent, back);
    }

    /// The kept frames the CS let go since the last call (their Data evicted or replaced),
    /// for the caller to recycle.
    pub fn released_frames(&mut self) -> impl Iterator<Item = F> + '_ {
        self.cs.released()
    }

    /// Removes every Data the CS holds in a kept frame, so that
    /// [`released_frames`](Self::released_frames) hands them all back (see
    /// [`Cs::let_go_frames`]).
    pub fn let_go_frames(&mut self) {
        self.cs.let_go_frames();
    }

    /// Handles one frame received on `face` at `now` (ns): a burst of one.
    #[inline(never)]
    pub fn process(&mut self, now: u64, face: FaceId, frame: &[u8], out: &mut Actions) {
        // No staging: with nothing to prefetch for, the packet goes straight to its pipeline
        // (the same pipelines, as the burst path's equivalence test checks).
        let snap = self.fib.guard();
        match &Packet::decode(frame) {
            Ok(Packet::Interest(i)) => {
                let mut hashes = NameHashes::new(&self.cfg.hash_key, &i.name(), snap.stage1());
                self.on_interest(now, face, i, &Incoming::bare(), &mut hashes, &snap, out)
            }
            Ok(Packet::Data(d)) => self.on_data(now, face, d, None, &snap, out),
            Ok(Packet::Lp(lp)) => self.on_lp(now, face, lp, &snap, out),
            Err(_) => self.dropped(out, face, DropReason::Malformed),
        }
    }

    /// Handles a burst of frames received at `now` (ns), in order, with the same result as
    /// calling [`process`](Self::process) on each: each frame is decoded and its name hashed,
    /// and its PIT, CS, dead-nonce and FIB lines prefetched, a few frames before its pipeline
    /// runs, so its cache misses overlap the work on the frames ahead of it.
    /// The FIB snapshot is loaded once per burst. Bursts of 16 to 64 frames work best.
    #[inline(never)]
    pub fn process_burst(&mut self, now: u64, frames: &[(FaceId, &[u8])], out: &mut Actions) {
        self.burst(now, frames, out, false);
    }

    fn on_lp(
        &mut self,
        now: u64,
        face: FaceId,
        lp: &LpPacket<'_>,
        snap: &FibSnapshot,
        out: &mut Actions,
    ) {
        if lp.is_fragment() {
            let done = match self.reassembler.push(now, u64::from(face.0), lp) {
                Ok(Some(r)) => {
                    self.scratch.clear();
                    self.scratch.extend_from_slice(r.packet);
                    Some(r.headers)
                }
                Ok(None) => None,
                Err(_) => return self.dropped(out, face, DropReason::Reassembly),
            };
            let Some(h) = done else { return };
            let whole = std::mem::take(&mut self.scratch);
            let token = TokenBuf::new(h.pit_token());
            let inc = Incoming {
                token: token.get(),
                nack: h.nack,
                next_hop: h.next_hop_face_id,
            };
            let packet = match Packet::decode(&whole) {
                Ok(p @ (Packet::Interest(_) | Packet::Data(_))) => Ok(Some(p)),
                Ok(Packet::Lp(_)) => Err(()),
                Err(_) => Err(()),
            };
            self.on_network(now, face, packet, &inc, snap, out);
            self.scratch = whole;
            return;
        }
        let inc = Incoming {
            token: lp.pit_token(),
            nack: lp.nack(),
            next_hop: lp.next_hop_face_id(),
        };
        let packet = lp.network_packet().map_err(|_| ());
        self.on_network(now, face, packet, &inc, snap, out);
    }

    /// Routes a network-layer packet (from an LpPacket or a reassembly) to its pipeline.
    fn on_network(
        &mut self,
        now: u64,
        face: FaceId,
        packet: Result<Option<Packet<'_>>, ()>,
        inc: &Incoming<'_>,
        snap: &FibSnapshot,
        out: &mut Actions,
    ) {
        let key = self.cfg.hash_key;
        match packet {
            Ok(Some(Packet::Interest(i))) => {
                let mut hashes = NameHashes::new(&key, &i.name(), snap.stage1());
                if inc.nack.is_some() {
                    self.on_nack(now, face, &i, inc, &mut hashes, snap, out)
                } else {
                    self.on_interest(now, face, &i, inc, &mut hashes, snap, out)
                }
            }
            Ok(Some(Packet::Data(d))) => self.on_data(now, face, &d, inc.token, snap, out),
            Ok(_) => self.dropped(out, face, DropReason::Idle),
            Err(()) => self.dropped(out, face, DropReason::Malformed),
        }
    }

    /// Expires PIT entries whose lifetime ended by `now` (ns). Call it at least every
    /// millisecond or so; it costs nothing when nothing expires.
    pub fn on_timer(&mut self, now: u64, out: &mut Actions) {
        while let Some(id) = self.pit.next_expired(now) {
            self.finish(now, id);
        }
        if let Some(l2) = self.l2.as_mut()
            && l2.staging()
        {
            l2.flush_stale(now, &mut |st| push_l2_write(out, st));
        }
        self.reassembler.expire(now);
    }
}

fn lpm<'s>(
    snapshot: &'s FibSnapshot,
    key: &HashKey,
    name: &Name<'_>,
) -> Option<crate::fib::FibMatch<'s>> {
    snapshot.lpm_hashed(&mut NameHashes::new(key, name, snapshot.stage1()))
}

/// A FIB match's next hops (borrowed from the snapshot) and strategy.
fn hops<'s>(m: crate::fib::FibMatch<'s>) -> (&'s [crate::face::NextHop], StrategyKind) {
    (m.nexthops, StrategyKind::from_id(m.strategy))
}

/// Whether `data` satisfies the pending Interest `e` by name, when the names differ (a
/// CanBePrefix entry, or one naming the Data's implicit digest).
fn entry_matches(e: &crate::pit::PitEntry, data: &Data<'_>) -> bool {
    Name::from_value(e.name_bytes()).is_ok_and(|n| data.matches_name(&n, e.can_be_prefix()))
}
