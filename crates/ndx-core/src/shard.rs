//! A forwarding shard: the Interest, Data and Nack pipelines over one shard's PIT and CS and
//! the shared FIB, sans-IO.
//!
//! [`Shard::process`] takes the time, the face a frame came from and its bytes, and appends
//! what to do to an [`Actions`] list: frames to send (encoded into the list's reusable byte
//! arena) and drops with a reason. [`Shard::on_timer`] expires PIT entries. Nothing here reads
//! a clock, touches a socket or allocates per packet once the arenas have grown to their
//! working size.

use std::ops::Range;

use ndx_codec::{
    Data, Interest, LpHeaders, LpPacket, NackReason, Name, Packet, Reassembler, ReassemblerConfig,
    Writer, types,
};

use crate::cs::{Cs, CsConfig, Frame};
use crate::dispatch::content_of;
use crate::dnl::DeadNonceList;
use crate::face::{FaceId, FaceTable};
use crate::fair::{FaceLoad, FaceLoads, Fairness, NackBucket, PitShares};
use crate::fib::{FibReader, FibSnapshot};
use crate::hash::{HashKey, NameHashes};
use crate::l2::{
    L2Config, L2Counters, L2Failure, L2Read, L2State, L2Write, L2WriteRec, Park, Parked,
};
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

/// The longest LpPacket head [`Actions::push_head`] writes: three TLV-TYPEs, two lengths of
/// up to 5 bytes, the token's length and the token.
const LP_HEAD_MAX: usize = 2 * 5 + 4 + ndx_codec::MAX_PIT_TOKEN_LEN;

/// One frame to send: `range` of the action list's byte arena, then, when the frame's
/// packet was received in a lent frame, that packet's bytes where they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Send {
    /// Outgoing face.
    pub face: FaceId,
    range: Range<usize>,
    lent: Option<Lent>,
}

/// Bytes of a lent input frame: frame `input` (counted from 0 since the action list was
/// last cleared, in the order the `*_lent` calls were given them), `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lent {
    input: u32,
    start: u32,
    end: u32,
}

/// The lent frame the pipeline is working on: its number and where its bytes are (the
/// address is only compared, never read through).
#[derive(Debug, Clone, Copy)]
struct Input {
    number: u32,
    addr: usize,
    len: usize,
}

/// One frame to send, from [`Actions::sends_with`]: `head` then `body` (either may be
/// empty); the frame is their concatenation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outgoing<'a> {
    /// Outgoing face.
    pub face: FaceId,
    /// The frame's first bytes (for a Data sent from a lent frame, its NDNLPv2 header).
    pub head: &'a [u8],
    /// The rest, read from a lent input frame (empty when the frame is all `head`).
    pub body: &'a [u8],
}

impl Outgoing<'_> {
    /// The frame's length.
    pub fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// True when the frame is empty (never for a frame the shard asked to send).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frame's bytes as a gather list.
    pub fn parts(&self) -> [&[u8]; 2] {
        [self.head, self.body]
    }

    /// The frame's bytes, copied into `out` (cleared first).
    pub fn copy_to(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(self.head);
        out.extend_from_slice(self.body);
    }
}

/// What [`Shard::process`] and [`Shard::on_timer`] ask the I/O layer to do.
#[derive(Debug, Default)]
pub struct Actions {
    bytes: Vec<u8>,
    sends: Vec<Send>,
    drops: Vec<(FaceId, DropReason)>,
    l2_reads: Vec<L2Read>,
    l2_writes: Vec<L2WriteRec>,
    l2_segments: Vec<(u64, Range<usize>)>,
    l2_bytes: Vec<u8>,
    /// Frames lent since the last clear.
    lent: u32,
    /// The lent frame being processed, if the current call lent its frames.
    input: Option<Input>,
}

impl Actions {
    /// Empty action lists (they keep their capacity across [`clear`](Self::clear)).
    pub fn new() -> Self {
        Self {
            bytes: Vec::with_capacity(1 << 16),
            sends: Vec::with_capacity(64),
            drops: Vec::with_capacity(64),
            l2_reads: Vec::new(),
            l2_writes: Vec::new(),
            l2_segments: Vec::new(),
            l2_bytes: Vec::new(),
            lent: 0,
            input: None,
        }
    }

    /// Forgets every action, keeping the memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.sends.clear();
        self.drops.clear();
        self.l2_reads.clear();
        self.l2_writes.clear();
        self.l2_segments.clear();
        self.l2_bytes.clear();
        self.lent = 0;
        self.input = None;
    }

    /// Frames lent by [`Shard::process_lent`] and [`Shard::process_burst_lent`] since the
    /// last [`clear`](Self::clear): the next lent frame is number `lent()`.
    pub fn lent(&self) -> u32 {
        self.lent
    }

    /// L2 batch reads to submit (then report each with [`Shard::on_l2_complete`]).
    pub fn l2_reads(&self) -> &[L2Read] {
        &self.l2_reads
    }

    /// L2 batch writes to submit (then report each with [`Shard::on_l2_written`]).
    pub fn l2_writes(&self) -> impl Iterator<Item = L2Write<'_>> {
        self.l2_writes.iter().map(|w| L2Write {
            content_key: w.content_key,
            batch: w.batch,
            content_name: self.l2_bytes.get(w.name.clone()).unwrap_or(&[]),
            segments: self.l2_segments.get(w.segments.clone()).unwrap_or(&[]),
            bytes: &self.l2_bytes,
        })
    }

    /// Frames to send, in order, when no frame was lent since the last clear (after a
    /// `*_lent` call, read them with [`sends_with`](Self::sends_with): the frames that
    /// refer to a lent frame are left out here).
    pub fn sends(&self) -> impl Iterator<Item = (FaceId, &[u8])> {
        debug_assert!(
            self.lent == 0 || self.sends.iter().all(|s| s.lent.is_none()),
            "frames were lent: read the sends with sends_with"
        );
        self.sends
            .iter()
            .filter(|s| s.lent.is_none())
            .map(|s| (s.face, self.bytes.get(s.range.clone()).unwrap_or(&[])))
    }

    /// Frames to send, in order, each as a head from the action list and a body from a lent
    /// frame: `lent(k)` must give the bytes lent frame `k` had when it was given to the
    /// shard (the caller keeps its lent frames unchanged until it has sent, then clears).
    /// Frames that lent nothing come whole as their head, so this serves every action list.
    pub fn sends_with<'a, F>(&'a self, lent: F) -> impl Iterator<Item = Outgoing<'a>> + 'a
    where
        F: Fn(u32) -> &'a [u8] + 'a,
    {
        self.sends.iter().map(move |s| Outgoing {
            face: s.face,
            head: self.bytes.get(s.range.clone()).unwrap_or(&[]),
            body: s.lent.map_or(&[][..], |l| {
                lent(l.input)
                    .get(l.start as usize..l.end as usize)
                    .unwrap_or(&[])
            }),
        })
    }

    /// Makes `frame` the lent frame being processed, numbered [`lent`](Self::lent).
    #[inline(always)]
    fn lend(&mut self, frame: &[u8]) {
        self.input = Some(Input {
            number: self.lent,
            addr: frame.as_ptr() as usize,
            len: frame.len(),
        });
        self.lent += 1;
    }

    /// The part of the lent frame being processed that `bytes` is, if it is one.
    fn lent_part(&self, bytes: &[u8]) -> Option<Lent> {
        let input = self.input?;
        let at = (bytes.as_ptr() as usize).wrapping_sub(input.addr);
        if at > input.len || bytes.len() > input.len - at {
            return None;
        }
        Some(Lent {
            input: input.number,
            start: u32::try_from(at).ok()?,
            end: u32::try_from(at + bytes.len()).ok()?,
        })
    }

    /// Packets dropped, with the face they came from and why.
    pub fn drops(&self) -> &[(FaceId, DropReason)] {
        &self.drops
    }

    /// True when there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty()
            && self.drops.is_empty()
            && self.l2_reads.is_empty()
            && self.l2_writes.is_empty()
    }

    /// A Data to send down, with `token` (see [`push_tokened`](Self::push_tokened)): when
    /// the Data lies in the lent frame being processed, only its LpPacket header is written
    /// (nothing for a bare Data) and the Data is sent from where it is; else the whole packet
    /// is written.
    fn push_data(&mut self, token: Option<&[u8]>, data: &[u8]) -> (Range<usize>, Option<Lent>) {
        if let Some(lent) = self.lent_part(data) {
            let start = self.bytes.len();
            match token.filter(|t| !t.is_empty()) {
                None => return (start..start, Some(lent)),
                Some(t) => {
                    if let Some(head) = self.push_head(t, data.len()) {
                        return (head, Some(lent));
                    }
                }
            }
        }
        (self.push_tokened(token, data), None)
    }

    /// Appends `fragment` (an Interest or Data) in an LpPacket whose only header is the
    /// PitToken `token`, or bare without one: the hot case (every forwarded Interest, every
    /// Data sent down). The same bytes as [`LpHeaders::encode`], with the headers assembled
    /// on the stack and appended in one copy; returns the byte range written.
    fn push_tokened(&mut self, token: Option<&[u8]>, fragment: &[u8]) -> Range<usize> {
        let start = self.bytes.len();
        let Some(t) = token.filter(|t| !t.is_empty()) else {
            self.bytes.extend_from_slice(fragment);
            return start..self.bytes.len();
        };
        let flen = fragment.len();
        self.bytes.reserve(LP_HEAD_MAX + flen);
        if self.push_head(t, flen).is_none() {
            // A token longer than NDNLPv2 allows (never one we decoded or issued), or a
            // fragment no frame carries: the general encoder.
            let headers = LpHeaders {
                pit_token: Some(t),
                ..LpHeaders::default()
            };
            return self.push_packet(&headers, fragment);
        }
        self.bytes.extend_from_slice(fragment);
        start..self.bytes.len()
    }

    /// Appends the head of an LpPacket whose only header is the PitToken `t` and whose
    /// fragment is `flen` bytes long (the fragment itself is not written); returns its range,
    /// or `None` (nothing written) for a token longer than NDNLPv2 allows or a fragment no
    /// frame carries.
    #[inline(always)]
    fn push_head(&mut self, t: &[u8], flen: usize) -> Option<Range<usize>> {
        if t.len() > ndx_codec::MAX_PIT_TOKEN_LEN || flen > u32::MAX as usize / 2 {
            return None;
        }
        let start = self.bytes.len();
        // LpPacket (type 100), PitToken (98) and Fragment (80) headers and the token, written
        // straight: every TLV-TYPE is one byte, the token's length too (at most 32), and the
        // two other lengths take 1, 3 or 5 bytes.
        let mut head = [0u8; LP_HEAD_MAX];
        let value = 2 + t.len() + 1 + ndx_codec::varnum_len(flen as u64) + flen;
        head[0] = types::LP_PACKET as u8;
        let mut at = 1 + put_short_varnum(&mut head[1..], value);
        head[at] = types::LP_PIT_TOKEN as u8;
        head[at + 1] = t.len() as u8;
        at += 2;
        match <&[u8; PIT_TOKEN_LEN]>::try_from(t) {
            // Our own tokens (every forwarded Interest): a fixed-size copy, no call.
            Ok(ours) => head[at..at + PIT_TOKEN_LEN].copy_from_slice(ours),
            Err(_) => head[at..at + t.len()].copy_from_slice(t),
        }
        at += t.len();
        head[at] = types::LP_FRAGMENT as u8;
        at += 1;
        at += put_short_varnum(&mut head[at..], flen);
        // The whole fixed-size head is appended then cut back: a copy of known size.
        self.bytes.extend_from_slice(&head);
        self.bytes.truncate(start + at);
        Some(start..self.bytes.len())
    }

    /// Appends an LpPacket (`headers` + `fragment`), or the bare fragment when `headers` is
    /// empty; returns the byte range written.
    fn push_packet(&mut self, headers: &LpHeaders<'_>, fragment: &[u8]) -> Range<usize> {
        let start = self.bytes.len();
        if headers.is_empty() {
            self.bytes.extend_from_slice(fragment);
        } else {
            let need = headers.encoded_len(Some(fragment.len()));
            self.bytes.resize(start + need, 0);
            let n = headers
                .encode(Some(fragment), &mut self.bytes[start..])
                .unwrap_or(0);
            self.bytes.truncate(start + n);
        }
        start..self.bytes.len()
    }

    fn send(&mut self, face: FaceId, range: Range<usize>) {
        self.sends.push(Send {
            face,
            range,
            lent: None,
        });
    }

    /// Sends `range` then, if any, the lent bytes `lent`.
    fn send_parts(&mut self, face: FaceId, (range, lent): (Range<usize>, Option<Lent>)) {
        self.sends.push(Send { face, range, lent });
    }

    fn drop_packet(&mut self, face: FaceId, reason: DropReason) {
        self.drops.push((face, reason));
    }
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

/// One forwarding shard.
#[derive(Debug)]
pub struct Shard {
    cfg: ShardConfig,
    pit: Pit,
    cs: Cs,
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

/// How many frames apart a burst's pipeline stages are: a frame's first-level prefetches are
/// issued `LEAD` frames before its second level reads them, and so on (see `Shard::burst`).
/// Prefetches spread one frame's worth at a time among other frames' work hide a random DRAM
/// line where a group of 8 issued back to back did not (benches/README.md, twelfth pass).
const LEAD: usize = 1;
/// How many frames ahead of its decode a frame's first bytes are prefetched: a frame the
/// NIC wrote by DMA (AF_XDP zero-copy) or that waited in a ring is not in cache, and a decode
/// that waits for it stalls the whole pipeline.
const FRAME_AHEAD: usize = 2;
/// The bytes of a frame prefetched [`FRAME_AHEAD`] frames ahead: an Interest whole (its
/// name, Nonce and lifetime), a Data's name and MetaInfo.
const FRAME_HEAD: usize = 128;

/// Slots of a burst's pipeline ring: at least the `3 * LEAD + 1` frames in flight.
const RING: usize = 4;

/// Frames between revisions of the FIB speculation (see [`Speculate`]).
const REVISE: usize = 8;

const _: () = assert!(RING > 3 * LEAD);

/// How far a burst's first passes prefetch the FIB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Speculate {
    /// Nothing at the first level; at the second, for a likely CS miss alone, the stage-1
    /// chunk descriptor, marker and route slot (while nearly every Interest is a CS hit,
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
    fn after(hits: usize, interests: usize) -> Self {
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
enum Staged<'f> {
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
    fn set_interest(&mut self, interest: Interest<'f>, inc: Incoming<'f>) {
        match self {
            Staged::Interest(i, incoming, _) => {
                *i = interest;
                *incoming = inc;
            }
            _ => *self = Staged::Interest(interest, inc, NameHashes::empty()),
        }
    }
}

/// A network-layer packet with the LP fields the pipelines need.
#[derive(Clone, Copy)]
struct Incoming<'a> {
    token: Option<&'a [u8]>,
    nack: Option<NackReason>,
    next_hop: Option<u64>,
}

impl Shard {
    /// A shard reading routes from `fib`; all tables are allocated now. Its CS copies every
    /// Data it stores (see [`with_frames`](Self::with_frames)).
    pub fn new(cfg: ShardConfig, fib: FibReader, now: u64) -> Self {
        Self::with_cs(cfg, fib, now, Cs::new(cfg.cs, cfg.hash_key))
    }

    /// [`new`](Self::new), for a shard whose CS may keep the receive frames, of type `F`,
    /// that Data arrive in (see [`process_burst_keeping`](Self::process_burst_keeping)).
    pub fn with_frames<F: Frame>(cfg: ShardConfig, fib: FibReader, now: u64) -> Self {
        Self::with_cs(cfg, fib, now, Cs::with_frames::<F>(cfg.cs, cfg.hash_key))
    }

    fn with_cs(cfg: ShardConfig, fib: FibReader, now: u64, mut cs: Cs) -> Self {
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

    /// The CS (read-only).
    pub fn cs(&self) -> &Cs {
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

    /// Like [`process`](Self::process), but the frame is lent: the caller keeps its bytes
    /// unchanged until it has sent the actions (read with [`Actions::sends_with`], where it
    /// is lent frame number [`Actions::lent`] as it was before this call) and cleared them.
    /// A Data in it is then sent down from where it is, with only the NDNLPv2 header that
    /// carries each downstream's PitToken written into the action list, instead of being
    /// copied there whole (the I/O layer copies it once, straight into its transmit frame).
    pub fn process_lent(&mut self, now: u64, face: FaceId, frame: &[u8], out: &mut Actions) {
        out.lend(frame);
        self.process(now, face, frame, out);
        out.input = None;
    }

    /// Like [`process_burst`](Self::process_burst), but the frames are lent, as with
    /// [`process_lent`](Self::process_lent): frame `i` of `frames` is lent frame number
    /// [`Actions::lent`]` + i`, counting from its value before this call.
    pub fn process_burst_lent(&mut self, now: u64, frames: &[(FaceId, &[u8])], out: &mut Actions) {
        self.burst(now, frames, out, true);
    }

    /// Like [`process_burst_lent`](Self::process_burst_lent), and the caller can part with
    /// the frames: a Data the CS admits is not copied, its frame is kept instead (zero-copy
    /// admission, as seed 001 and NDN-DPDK keep the packet buffer). A shard made with
    /// [`Shard::new`] copies as [`process_burst_lent`](Self::process_burst_lent) does.
    ///
    /// Once it has sent the actions, and before it lends frames again, the caller calls
    /// [`keep_frames`](Self::keep_frames), which takes over the frames the CS chose (until
    /// then their Data are indexed but not served); it recycles the others, and those that
    /// [`released_frames`](Self::released_frames) hands back as the CS lets them go.
    pub fn process_burst_keeping(
        &mut self,
        now: u64,
        frames: &[(FaceId, &[u8])],
        out: &mut Actions,
    ) {
        // A new action list with slots still pending: their frames will never come.
        if out.lent == 0 && self.cs.has_pending() {
            self.cs.discard_pending();
        }
        self.keep_lent = true;
        self.burst(now, frames, out, true);
        self.keep_lent = false;
    }

    /// Hands the CS the frames it chose to keep in the bursts since the last call:
    /// `take(n)` gives lent frame number `n` (as in [`Actions::sends_with`]), or None if the
    /// caller cannot part with it after all (its Data is then dropped from the CS). `F` is
    /// the type the shard was made with ([`with_frames`](Self::with_frames)).
    pub fn keep_frames<F: Frame>(&mut self, take: impl FnMut(u32) -> Option<F>) {
        self.cs.keep_frames(take);
    }

    /// The kept frames the CS let go since the last call (their Data evicted or replaced),
    /// for the caller to recycle.
    pub fn released_frames<F: Frame>(&mut self) -> impl Iterator<Item = F> + '_ {
        self.cs.released()
    }

    /// Removes every Data the CS holds in a kept frame, so that
    /// [`released_frames`](Self::released_frames) hands them all back (see
    /// [`Cs::let_go_frames`]).
    pub fn let_go_frames(&mut self) {
        self.cs.let_go_frames();
    }

    /// Handles one frame received on `face` at `now` (ns): a burst of one.
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
    pub fn process_burst(&mut self, now: u64, frames: &[(FaceId, &[u8])], out: &mut Actions) {
        self.burst(now, frames, out, false);
    }

    /// The burst path, for lent frames or not: one copy of the code (the passes inline into
    /// it once). A sliding pipeline: while frame `t` is decoded, hashed and its buckets
    /// prefetched (level 1), frame `t - LEAD` has its second level prefetched, frame
    /// `t - 2 * LEAD` its third, and frame `t - 3 * LEAD` runs through its pipeline, so each
    /// prefetch is spread among other frames' work instead of issued with a whole group's.
    /// (One loop: splitting off the drain duplicated the inlined passes, and the compiler
    /// then called the stage and run passes out of line, 63 instructions more per exchange.)
    #[inline(never)]
    fn burst(&mut self, now: u64, frames: &[(FaceId, &[u8])], out: &mut Actions, lend: bool) {
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
                self.stage(frame, &snap, spec[s], &mut ring[s]);
                self.prefetch_buckets(&mut ring[s], &snap, spec[s]);
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
    /// changes). Written into the burst's slot, in place.
    fn stage<'f>(
        &self,
        frame: &'f [u8],
        snap: &FibSnapshot,
        speculate: Speculate,
        slot: &mut Staged<'f>,
    ) {
        // Matched by reference: the view is not moved out of the `Result`, and goes straight
        // into the slot.
        match &Packet::decode(frame) {
            Ok(Packet::Interest(i)) => slot.set_interest(*i, Incoming::bare()),
            Ok(Packet::Data(d)) => return *slot = Staged::Data(*d, None),
            Ok(Packet::Lp(lp)) if !lp.is_fragment() => match lp.network_packet() {
                Ok(Some(Packet::Interest(i))) => slot.set_interest(
                    i,
                    Incoming {
                        token: lp.pit_token(),
                        nack: lp.nack(),
                        next_hop: lp.next_hop_face_id(),
                    },
                ),
                Ok(Some(Packet::Data(d))) => return *slot = Staged::Data(d, lp.pit_token()),
                _ => return *slot = Staged::Other,
            },
            _ => return *slot = Staged::Other,
        }
        let Staged::Interest(interest, _, hashes) = slot else {
            return;
        };
        let m = snap.stage1();
        // The chunk prefetches below ask for these prefixes' hashes: finalised in the pass.
        hashes.reset(
            &self.cfg.hash_key,
            &interest.name(),
            m,
            speculate == Speculate::Deep,
        );
        // The FIB chunk descriptors of the stage-1 prefix (and, when speculating deep, one
        // level deeper: the marker's usual target) are prefetched here, a whole pass before
        // their buckets are.
        match speculate {
            Speculate::Late => {}
            Speculate::Shallow => snap.prefetch_chunk(hashes, m),
            Speculate::Deep => {
                snap.prefetch_chunk(hashes, m);
                snap.prefetch_chunk(hashes, m + 1);
            }
        }
    }

    /// A frame's first prefetch level: the CS bucket, the FIB's stage-1 marker, and the
    /// FIB's route slot where the lookup likely starts: one level past stage 1 (where the
    /// marker usually sends it) when speculating deep, stage 1 when shallow, neither
    /// marker nor slot when late (see [`Speculate`]). A Data's PIT entry, by
    /// its token. (An Interest's PIT and dead-nonce buckets wait for the next level, which
    /// knows whether the CS is likely to answer it without them.)
    #[inline(always)]
    fn prefetch_buckets(&self, st: &mut Staged<'_>, snap: &FibSnapshot, speculate: Speculate) {
        let m = snap.stage1();
        match st {
            Staged::Interest(_, _, hashes) => {
                self.cs.prefetch(hashes.full());
                let guess = match speculate {
                    Speculate::Late => return,
                    Speculate::Shallow => m,
                    Speculate::Deep => m + 1,
                };
                snap.prefetch_marker(hashes);
                snap.prefetch(hashes, guess);
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
    fn prefetch_entries(
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
                snap.prefetch_chunk(hashes, m);
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
    fn run(
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

    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's inputs for one packet"
    )]
    fn on_interest(
        &mut self,
        now: u64,
        face: FaceId,
        interest: &Interest<'_>,
        inc: &Incoming<'_>,
        hashes: &mut NameHashes<'_>,
        snapshot: &FibSnapshot,
        out: &mut Actions,
    ) {
        self.counters.interests_in += 1;
        let state = self.faces.get_or_insert_with(face, FaceState::default);
        state.load.interests += 1;
        let (info, held) = (state.info, state.load.pit_entries);
        if interest.hop_limit() == Some(0) && !info.local {
            return self.dropped(out, face, DropReason::HopLimit);
        }
        let name = interest.name();
        let localhost = is_localhost(&name);
        if localhost && !info.local {
            return self.dropped(out, face, DropReason::Scope);
        }
        let name_hash = hashes.full();
        let (cbp, mbf) = (interest.can_be_prefix(), interest.must_be_fresh());

        // Content store first, as NDN-DPDK's PIT-CS lookup: a hit is answered whatever the
        // PIT and dead-nonce list hold (see ARCHITECTURE.md, "Interest pipeline order").
        if let Some(hit) = self.cs.lookup(now, &name, name_hash, cbp, mbf) {
            self.counters.cs_hits += 1;
            self.counters.data_out += 1;
            let range = out.push_tokened(inc.token, hit.data);
            out.send(face, range);
            if self.l2.is_some() {
                self.l2_prefetch(&name, out);
            }
            return;
        }

        let nonce = interest.nonce().unwrap_or_else(|| {
            // A Nonce-less Interest (allowed on local faces) gets one.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.rng as u32
        });
        let key = pit_key(name_hash, cbp, mbf);

        // Loop detection: the dead-nonce list, then the pending entry's records.
        let existing = self.pit.find(key, &name, cbp, mbf);
        let looped = self.dnl.contains(now, name_hash, nonce)
            || existing.and_then(|id| self.pit.get(id)).is_some_and(|e| {
                let same_face_same_nonce =
                    e.in_record(face).is_some_and(|r| r.nonce == nonce) && info.multi_access;
                e.has_nonce_elsewhere(nonce, face) || same_face_same_nonce
            });
        if looped {
            if !info.multi_access {
                self.nack_interest(now, face, interest, inc.token, NackReason::Duplicate, out);
            }
            return self.dropped(out, face, DropReason::Loop);
        }

        if self.l2.is_some() {
            self.l2_prefetch(&name, out);
        }

        let lifetime_ms = interest
            .effective_lifetime_ms()
            .min(self.cfg.max_lifetime_ms);
        let expiry = now + lifetime_ms * 1_000_000;
        let (id, fresh) = match existing {
            Some(id) => (id, false),
            None => {
                // The face's share of the PIT (fair.rs); joining an entry is always allowed.
                if !self.shares.allows(held) {
                    if let Some(f) = self.faces.get_mut(&face) {
                        f.load.pit_quota += 1;
                    }
                    self.nack_interest(now, face, interest, inc.token, NackReason::Congestion, out);
                    return self.dropped(out, face, DropReason::PitQuota);
                }
                match self.pit.insert_owned(key, &name, cbp, mbf, expiry, face) {
                    Ok(id) => {
                        if let Some(f) = self.faces.get_mut(&face) {
                            f.load.pit_entries += 1;
                            if f.load.pit_entries == 1 {
                                self.shares.face_active(&self.cfg.fairness);
                            }
                        }
                        (id, true)
                    }
                    Err(PitFull(_)) => {
                        self.nack_interest(
                            now,
                            face,
                            interest,
                            inc.token,
                            NackReason::Congestion,
                            out,
                        );
                        return self.dropped(out, face, DropReason::PitFull);
                    }
                }
            }
        };
        // In-record: one per downstream face.
        let record = InRecord {
            face,
            nonce,
            expiry,
            token: TokenBuf::new(inc.token),
        };
        let retransmission;
        {
            let Some(e) = self.pit.get_mut(id) else {
                return;
            };
            match e.in_records.iter_mut().find(|r| r.face == face) {
                Some(r) => {
                    *r = record;
                    retransmission = true;
                }
                None => {
                    e.in_records.push(record);
                    retransmission = false;
                }
            }
        }
        // A new entry's only in-record is this one: `insert` already set its expiry.
        if !fresh {
            let entry_expiry = self.pit.get(id).map_or(expiry, |e| {
                e.in_records
                    .iter()
                    .map(|r| r.expiry)
                    .max()
                    .unwrap_or(expiry)
            });
            self.pit.set_expiry(id, entry_expiry);
        }
        if !fresh && !retransmission {
            // Another downstream for a pending Interest: aggregate.
            self.pit.note_aggregated();
            self.counters.aggregated += 1;
            return;
        }
        if !fresh && self.l2.as_ref().is_some_and(|l| l.is_parked(id)) {
            // A retransmission of an Interest parked on an L2 read: the read answers it.
            self.counters.suppressed += 1;
            return;
        }
        // L1 missed: if the L2 holds the batch, park the entry on a batch read.
        if fresh && self.l2.is_some() && self.l2_park(id, &name, interest.wire(), out) {
            return;
        }

        // FIB: a ForwardingHint's delegations first, then the name itself. The next hops are
        // borrowed from the snapshot, which outlives the packet.
        let mut found: Option<(&[crate::face::NextHop], StrategyKind)> = None;
        if let Some(hint) = interest.forwarding_hint() {
            found = hint
                .names()
                .find_map(|h| lpm(snapshot, &self.cfg.hash_key, &h))
                .map(hops);
        }
        if found.is_none() {
            found = snapshot.lpm_hashed(hashes).map(hops);
        }
        // NextHopFaceId from a local application overrides the FIB.
        let chosen;
        if let Some(nh) = inc.next_hop.filter(|_| info.local) {
            chosen = [crate::face::NextHop {
                face: FaceId(nh as u32),
                cost: 0,
            }];
            found = Some((&chosen, StrategyKind::BestRoute));
        }
        let Some((nexthops, kind)) = found else {
            self.nack_interest(now, face, interest, inc.token, NackReason::NoRoute, out);
            self.finish(now, id);
            return self.dropped(out, face, DropReason::NoRoute);
        };
        let mut ctx = Ctx {
            now,
            ingress: face,
            nexthops,
            pending: &self.pending,
            rng: &mut self.rng,
        };
        let Some(e) = self.pit.get_mut(id) else {
            return;
        };
        let decision = strategy::after_receive_interest(kind, &mut ctx, e, fresh);
        match decision {
            Decision::Forward(faces) => {
                let fwd = Forward {
                    from: face,
                    local_only: localhost || (!info.local && is_localhop(&name)),
                };
                self.forward_to(now, id, faces.as_slice(), interest, nonce, fwd, out);
            }
            Decision::Suppress => self.counters.suppressed += 1,
            Decision::Nack(reason) => {
                self.nack_interest(now, face, interest, inc.token, reason, out);
                self.finish(now, id);
                self.dropped(out, face, DropReason::NoRoute);
            }
        }
    }

    /// Sends `interest` to each of `faces` for entry `id`, with `nonce` in the out-records.
    /// An Interest that carries a Nonce leaves as received (HopLimit decremented); one that
    /// arrived without (allowed from local applications) leaves with `nonce`, the one its
    /// in-record holds, added (see [`Shard::forward_nonced`]).
    #[inline(always)]
    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's state for one send"
    )]
    fn forward_to(
        &mut self,
        now: u64,
        id: PitId,
        faces: &[FaceId],
        interest: &Interest<'_>,
        nonce: u32,
        fwd: Forward,
        out: &mut Actions,
    ) {
        if interest.nonce().is_none() {
            return self.forward_nonced(now, id, faces, interest, nonce, fwd, out);
        }
        let hop_patch = interest.hop_limit_offset().map(|o| o - interest.offset());
        for &up in faces {
            self.forward_interest(now, id, up, interest.wire(), hop_patch, nonce, fwd, out);
        }
    }

    /// [`Shard::forward_to`] for an Interest without a Nonce: re-encoded once with `nonce`
    /// (as NFD does; ndnd drops Interests without one), then sent like any other. The nonce is
    /// the one generated on arrival and kept in the in-record, so it lands in the out-records
    /// and, when the entry ends, in the dead-nonce list: a copy that loops back is caught.
    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's state for one send"
    )]
    #[cold]
    #[inline(never)]
    fn forward_nonced(
        &mut self,
        now: u64,
        id: PitId,
        faces: &[FaceId],
        interest: &Interest<'_>,
        nonce: u32,
        fwd: Forward,
        out: &mut Actions,
    ) {
        let mut buf = std::mem::take(&mut self.nonced);
        buf.clear();
        buf.resize(interest.with_nonce_len(), 0);
        match interest.encode_with_nonce(nonce, &mut buf) {
            Ok(n) => {
                buf.truncate(n);
                // The Interest decoded before, so its re-encoding does: only to find HopLimit.
                let hop_patch = Interest::decode(&buf)
                    .ok()
                    .and_then(|i| i.hop_limit_offset());
                for &up in faces {
                    self.forward_interest(now, id, up, &buf, hop_patch, nonce, fwd, out);
                }
            }
            // Unreachable for a decoded Interest; dropped (counted) rather than sent bare.
            Err(_) => self.counters.drops[drop_index(DropReason::Malformed)] += 1,
        }
        self.nonced = buf;
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's state for one send"
    )]
    fn forward_interest(
        &mut self,
        now: u64,
        id: PitId,
        up: FaceId,
        wire: &[u8],
        hop_patch: Option<usize>,
        nonce: u32,
        fwd: Forward,
        out: &mut Actions,
    ) {
        let token = self.pit.token(id);
        let up_info = self.face_info(up);
        let local_up = up_info.local;
        if fwd.local_only && !local_up {
            // `/localhost` never leaves the machine, and `/localhop` goes one hop, whatever
            // the FIB says.
            return;
        }
        let range = if up_info.local_fields {
            let headers = LpHeaders {
                pit_token: Some(&token),
                incoming_face_id: Some(u64::from(fwd.from.0)),
                ..LpHeaders::default()
            };
            out.push_packet(&headers, wire)
        } else {
            out.push_tokened(Some(&token), wire)
        };
        if let Some(off) = hop_patch
            && !local_up
        {
            // The Interest is the LpPacket's last element: patch its HopLimit in place.
            let at = range.end - wire.len() + off;
            if let Some(b) = out.bytes.get_mut(at) {
                *b = b.saturating_sub(1);
            }
        }
        out.send(up, range);
        self.counters.interests_out += 1;
        let Some(e) = self.pit.get_mut(id) else {
            return;
        };
        let rec = OutRecord {
            face: up,
            nonce,
            sent_at: now,
            nacked: None,
        };
        match e.out_records.iter_mut().find(|o| o.face == up) {
            Some(o) => *o = rec,
            None => {
                e.out_records.push(rec);
                *self.pending.get_or_insert_with(up, || 0) += 1;
            }
        }
    }

    /// Sends a Nack carrying `interest` back to `face`.
    /// Answers `interest` from `face` with a Nack, unless the face is past its Nack rate
    /// ([`Fairness`]; counted).
    fn nack_interest(
        &mut self,
        now: u64,
        face: FaceId,
        interest: &Interest<'_>,
        token: Option<&[u8]>,
        reason: NackReason,
        out: &mut Actions,
    ) {
        if let Some(f) = self.faces.get_mut(&face)
            && !f.bucket.take_nack(now, &self.cfg.fairness)
        {
            f.load.nacks_limited += 1;
            self.counters.nacks_limited += 1;
            return;
        }
        let headers = LpHeaders {
            pit_token: token,
            nack: Some(reason),
            ..LpHeaders::default()
        };
        let range = out.push_packet(&headers, interest.wire());
        out.send(face, range);
        self.counters.nacks_out += 1;
    }

    fn on_data(
        &mut self,
        now: u64,
        face: FaceId,
        data: &Data<'_>,
        token: Option<&[u8]>,
        snap: &FibSnapshot,
        out: &mut Actions,
    ) {
        self.counters.data_in += 1;
        let name = data.name();
        let state = self.faces.get_or_insert_with(face, FaceState::default);
        state.load.data += 1;
        if is_localhost(&name) && !state.info.local {
            return self.dropped(out, face, DropReason::Scope);
        }
        let key = self.cfg.hash_key;
        // Name hashes only when needed: a Data echoing our token for an exact-name entry
        // takes its name hash from the entry.
        let mut hashes: Option<NameHashes<'_>> = None;
        let mut name_hash: Option<u64> = None;
        self.matched.clear();
        // By our PIT token: O(1), then check the Data really answers that entry.
        if let Some(id) = token.and_then(|t| self.pit.by_token(t))
            && let Some(e) = self.pit.get(id)
            && let exact = e.name_bytes() == name.as_bytes()
            && (exact || entry_matches(e, data))
        {
            if exact {
                name_hash = Some(e.name_hash());
            }
            self.matched.push(id);
            self.counters.by_token += 1;
        }
        // By name, unless our token already found the entry: every Interest we forward
        // carries its own token, so a Data that echoes it needs no name search (NDN-DPDK's
        // rule). Upstreams that do not echo tokens are matched by name: exact entries, and
        // CanBePrefix entries at every prefix; variants no pending entry has are skipped.
        if self.matched.is_empty() {
            let h = hashes.insert(NameHashes::new(&key, &name, snap.stage1()));
            let full_hash = h.full();
            name_hash = Some(full_hash);
            let cbp_any = self.pit.has_can_be_prefix();
            let mbf_any = self.pit.has_must_be_fresh();
            for (cbp, mbf) in [(false, false), (false, true), (true, false), (true, true)] {
                if (cbp && !cbp_any) || (mbf && !mbf_any) {
                    continue;
                }
                if let Some(id) = self.pit.find(pit_key(full_hash, cbp, mbf), &name, cbp, mbf)
                    && !self.matched.contains(&id)
                {
                    self.matched.push(id);
                }
            }
            for k in 1..name.len() {
                if !cbp_any {
                    break;
                }
                let prefix = name.prefix(k);
                let prefix_hash = hashes
                    .get_or_insert_with(|| NameHashes::new(&key, &name, snap.stage1()))
                    .prefix(k);
                for mbf in [false, true] {
                    if mbf && !mbf_any {
                        continue;
                    }
                    let key = pit_key(prefix_hash, true, mbf);
                    if let Some(id) = self.pit.find(key, &prefix, true, mbf)
                        && !self.matched.contains(&id)
                    {
                        self.matched.push(id);
                    }
                }
            }
        }
        if self.matched.is_empty() {
            if self.cfg.unsolicited == Unsolicited::Cache {
                let h = name_hash.unwrap_or_else(|| key.name(&name));
                self.cs.insert_hashed(now, data, h, None);
                self.l2_drain(now, out);
            }
            return self.dropped(out, face, DropReason::Unsolicited);
        }
        // Cache, indexed also under the shortest CanBePrefix Interest it satisfies (none
        // unless some pending entry has CanBePrefix).
        let alias = if self.pit.has_can_be_prefix() {
            self.matched
                .iter()
                .filter_map(|&id| self.pit.get(id))
                .filter(|e| e.can_be_prefix() && e.name_len() < name.len())
                .map(|e| e.name_len())
                .min()
        } else {
            None
        };
        let alias = alias.map(|k| {
            let h = hashes
                .get_or_insert_with(|| NameHashes::new(&key, &name, snap.stage1()))
                .prefix(k);
            (name.prefix(k), h)
        });
        let name_hash = name_hash.unwrap_or_else(|| key.name(&name));
        let alias = alias.as_ref().map(|(p, h)| (p, *h));
        let keep = if self.keep_lent {
            out.lent_part(data.wire())
        } else {
            None
        };
        let cached = match keep {
            Some(l) => self
                .cs
                .insert_kept(now, data, name_hash, alias, l.input, l.start as usize),
            None => self.cs.insert_hashed(now, data, name_hash, alias),
        };
        self.l2_drain(now, out);
        // Send to every downstream, echoing its PitToken; tokenless downstreams share bytes.
        // A Data received in a lent frame is sent from there: only the heads are written.
        let mut bare: Option<(Range<usize>, Option<Lent>)> = None;
        let sent_before = self.counters.data_out;
        for &id in &self.matched {
            let Some(e) = self.pit.get(id) else { continue };
            for r in &e.in_records {
                if r.face == face || r.expiry < now {
                    continue;
                }
                let parts = match r.token.get() {
                    Some(t) => out.push_data(Some(t), data.wire()),
                    None => bare
                        .get_or_insert_with(|| out.push_data(None, data.wire()))
                        .clone(),
                };
                out.send_parts(r.face, parts);
                self.counters.data_out += 1;
            }
        }
        if self.counters.data_out == sent_before {
            self.counters.data_late += 1;
        }
        // NFD's rule for the dead-nonce list on satisfaction: a looping copy of an Interest
        // this Data satisfied finds the Data in the CS, so its nonces need remembering only
        // when the CS cannot answer it: the Data was not cached, or the Interest wants fresh
        // Data and this Data goes stale before the list would forget the nonce.
        let fresh_ns = data.freshness_ms().unwrap_or(0).saturating_mul(1_000_000);
        // By index: `finish_with` borrows the whole shard, and leaves `matched` alone.
        for i in 0..self.matched.len() {
            let id = self.matched[i];
            let remember = !cached
                || self
                    .pit
                    .get(id)
                    .is_some_and(|e| e.must_be_fresh() && fresh_ns < self.cfg.dnl_lifetime_ns);
            self.finish_with(now, id, remember);
        }
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "the pipeline's inputs for one packet"
    )]
    fn on_nack(
        &mut self,
        now: u64,
        face: FaceId,
        interest: &Interest<'_>,
        inc: &Incoming<'_>,
        hashes: &mut NameHashes<'_>,
        snapshot: &FibSnapshot,
        out: &mut Actions,
    ) {
        self.counters.nacks_in += 1;
        let reason = inc.nack.unwrap_or(NackReason::Unspecified);
        let name = interest.name();
        let by_token = inc.token.and_then(|t| self.pit.by_token(t));
        let id = by_token.or_else(|| {
            let h = hashes.full();
            let (cbp, mbf) = (interest.can_be_prefix(), interest.must_be_fresh());
            self.pit.find(pit_key(h, cbp, mbf), &name, cbp, mbf)
        });
        // The Nack must answer what we sent that upstream (same Nonce).
        let Some(id) = id.filter(|&id| {
            self.pit.get(id).is_some_and(|e| {
                e.out_record(face)
                    .is_some_and(|o| Some(o.nonce) == interest.nonce() && o.nacked.is_none())
            })
        }) else {
            return self.dropped(out, face, DropReason::NackUnmatched);
        };
        if by_token == Some(id) {
            self.counters.by_token += 1;
        }
        if let Some(e) = self.pit.get_mut(id)
            && let Some(o) = e.out_records.iter_mut().find(|o| o.face == face)
        {
            o.nacked = Some(reason);
        }
        if let Some(p) = self.pending.get_mut(&face) {
            *p = p.saturating_sub(1);
        }
        // Strategy of the Interest's FIB entry.
        let (nexthops, kind) = snapshot
            .lpm_hashed(hashes)
            .map_or((&[][..], StrategyKind::BestRoute), hops);
        let Some(e) = self.pit.get(id) else { return };
        let downstream = e.in_records.first().map_or(face, |r| r.face);
        let mut ctx = Ctx {
            now,
            ingress: downstream,
            nexthops,
            pending: &self.pending,
            rng: &mut self.rng,
        };
        let Some(e) = self.pit.get_mut(id) else {
            return;
        };
        let decision = strategy::after_receive_nack(kind, &mut ctx, e);
        let nonce = e.out_records.first().map_or(0, |o| o.nonce);
        self.carry_out(now, id, decision, interest, nonce, out);
    }

    /// Carries out a strategy's decision for entry `id`: forwards `interest` (with `nonce`
    /// in the out-records) to the chosen faces, or Nacks the downstreams and ends the entry.
    fn carry_out(
        &mut self,
        now: u64,
        id: PitId,
        decision: Decision,
        interest: &Interest<'_>,
        nonce: u32,
        out: &mut Actions,
    ) {
        match decision {
            Decision::Forward(faces) => {
                let from = self
                    .pit
                    .get(id)
                    .and_then(|e| e.in_records.first())
                    .map_or(FaceId(0), |r| r.face);
                let name = interest.name();
                let fwd = Forward {
                    from,
                    local_only: is_localhost(&name)
                        || (!self.face_info(from).local && is_localhop(&name)),
                };
                self.forward_to(now, id, faces.as_slice(), interest, nonce, fwd, out);
            }
            Decision::Suppress => {}
            Decision::Nack(reason) => {
                self.nack_downstreams(id, reason, out);
                self.finish(now, id);
            }
        }
    }

    /// Nacks every downstream of entry `id`, rebuilding each one's Interest (its Nonce).
    fn nack_downstreams(&mut self, id: PitId, reason: NackReason, out: &mut Actions) {
        let Some(e) = self.pit.get(id) else { return };
        for r in &e.in_records {
            encode_interest(
                &mut self.scratch,
                e.name_bytes(),
                e.can_be_prefix(),
                e.must_be_fresh(),
                r.nonce,
            );
            let headers = LpHeaders {
                pit_token: r.token.get(),
                nack: Some(reason),
                ..LpHeaders::default()
            };
            let range = out.push_packet(&headers, &self.scratch);
            out.send(r.face, range);
            self.counters.nacks_out += 1;
        }
    }

    /// Erases entry `id`, remembering its nonces as dead and releasing pending counts.
    fn finish(&mut self, now: u64, id: PitId) {
        self.finish_with(now, id, true);
    }

    /// Erases entry `id` and releases its pending counts; remembers its out-record nonces in
    /// the dead-nonce list if `remember_nonces`. Inlined: every satisfied Interest ends here.
    #[inline(always)]
    fn finish_with(&mut self, now: u64, id: PitId, remember_nonces: bool) {
        let Some(e) = self.pit.get(id) else { return };
        let name_hash = e.name_hash();
        let owner = e.owner();
        for o in &e.out_records {
            if remember_nonces {
                self.dnl.insert(now, name_hash, o.nonce);
            }
            if o.nacked.is_none()
                && let Some(p) = self.pending.get_mut(&o.face)
            {
                *p = p.saturating_sub(1);
            }
        }
        self.pit.erase(id);
        if let Some(f) = self.faces.get_mut(&owner)
            && f.load.pit_entries > 0
        {
            f.load.pit_entries -= 1;
            if f.load.pit_entries == 0 {
                self.shares.face_idle(&self.cfg.fairness);
            }
        }
    }

    /// L2 counters (None without an L2).
    pub fn l2_counters(&self) -> Option<L2Counters> {
        self.l2.as_ref().map(|l| l.counters)
    }

    /// Whether the shard believes the L2 holds batch `batch` of content `content_key`.
    pub fn l2_holds(&self, content_key: u64, batch: u64) -> bool {
        self.l2
            .as_ref()
            .is_some_and(|l| l.holds(content_key, batch))
    }

    /// The content key of a name (keyed hash of the name without its segment component) and
    /// its batch number, as used in L2 requests; None without an L2 or a segment component.
    pub fn l2_key(&self, name: &Name<'_>) -> Option<(u64, u64)> {
        let l2 = self.l2.as_ref()?;
        let (content, seg) = content_of(name);
        Some((self.cfg.hash_key.name(&content), seg? / l2.cfg.batch))
    }

    /// Reports an L2 write asked for in [`Actions::l2_writes`]: `ok` makes the batch
    /// readable (Interests that miss L1 for it are then parked on a read).
    pub fn on_l2_written(&mut self, content_key: u64, batch: u64, ok: bool) {
        if let Some(l2) = self.l2.as_mut() {
            if ok {
                l2.written(content_key, batch);
            } else {
                l2.forget(content_key, batch);
            }
        }
    }

    /// Emits every batch being staged as an L2 write, complete or not (a clean stop, so
    /// the Data L1 evicted last are not lost).
    pub fn l2_flush_staged(&mut self, out: &mut Actions) {
        if let Some(l2) = self.l2.as_mut() {
            l2.flush_all(&mut |st| push_l2_write(out, st));
        }
    }

    /// Forgets that the L2 holds a batch (the I/O layer's log overwrote it).
    pub fn l2_forget(&mut self, content_key: u64, batch: u64) {
        if let Some(l2) = self.l2.as_mut() {
            l2.forget(content_key, batch);
        }
    }

    /// Completes L2 read `request` (from [`Actions::l2_reads`]) at `now` (ns): on success the
    /// batch's `(name hash, Data packet)` pairs go into L1 and the Interests parked on the read
    /// are answered from L1; those it cannot answer, and all of them on failure, are forwarded
    /// upstream as an ordinary CS miss. Parked entries that expired meanwhile are gone.
    pub fn on_l2_complete<'a, I>(
        &mut self,
        now: u64,
        request: u64,
        result: Result<I, L2Failure>,
        out: &mut Actions,
    ) where
        I: IntoIterator<Item = (u64, &'a [u8])>,
    {
        let mut parked = std::mem::take(&mut self.parked);
        let Some(l2) = self.l2.as_mut() else { return };
        let Some((content_key, batch)) = l2.finish_read(request, &mut parked) else {
            self.parked = parked;
            return;
        };
        match result {
            Ok(segments) => {
                for (name_hash, frame) in segments {
                    if let Ok(d) = Data::decode(frame) {
                        self.cs.insert_hashed(now, &d, name_hash, None);
                    }
                }
            }
            Err(e) => {
                l2.counters.read_failures += 1;
                if matches!(e, L2Failure::Stale | L2Failure::Corrupt) {
                    l2.forget(content_key, batch);
                }
            }
        }
        self.l2_drain(now, out);
        for (&id, span) in parked.ids.iter().zip(&parked.spans) {
            let wire = parked.wire.get(span.clone()).unwrap_or(&[]);
            self.answer_parked(now, id, wire, out);
        }
        parked.ids.clear();
        parked.spans.clear();
        parked.wire.clear();
        self.parked = parked;
    }

    /// Issues a prefetch of batch b+1 for a request of segment b*B + B-2.
    fn l2_prefetch(&mut self, name: &Name<'_>, out: &mut Actions) {
        let Some(l2) = self.l2.as_ref() else { return };
        let b = l2.cfg.batch;
        if !l2.cfg.prefetch || b < 2 {
            return;
        }
        let (content, Some(seg)) = content_of(name) else {
            return;
        };
        if seg % b != b - 2 {
            return;
        }
        let next = seg / b + 1;
        let content_key = self.cfg.hash_key.name(&content);
        if !self
            .l2
            .as_ref()
            .is_some_and(|l| l.may_prefetch(content_key, next))
        {
            return;
        }
        // Not when L1 already holds the next batch's first segment.
        self.l2_name.clear();
        self.l2_name.extend_from_slice(content.as_bytes());
        put_segment(&mut self.l2_name, next * b);
        if let Ok(first) = Name::from_value(&self.l2_name)
            && self.cs.holds(&first, self.cfg.hash_key.name(&first))
        {
            return;
        }
        if let Some(l2) = self.l2.as_mut()
            && let Some(read) = l2.prefetch(content_key, next)
        {
            out.l2_reads.push(read);
        }
    }

    /// Parks entry `id` on a read of its batch if the L2 holds it; true when parked.
    fn l2_park(&mut self, id: PitId, name: &Name<'_>, wire: &[u8], out: &mut Actions) -> bool {
        let Some((content_key, batch)) = self.l2_key(name) else {
            return false;
        };
        let Some(l2) = self.l2.as_mut() else {
            return false;
        };
        match l2.park(id, wire, content_key, batch) {
            Park::NewRead(read) => {
                out.l2_reads.push(read);
                true
            }
            Park::Joined => true,
            Park::No => false,
        }
    }

    /// Stages the Data L1 evicted into batches and emits the batches that are ready.
    fn l2_drain(&mut self, now: u64, out: &mut Actions) {
        if !self.cs.has_evicted() {
            return;
        }
        let Some(l2) = self.l2.as_mut() else { return };
        let key = self.cfg.hash_key;
        self.cs.drain_evicted(|hash, bytes| {
            let Ok(d) = Data::decode(bytes) else { return };
            let name = d.name();
            let (content, Some(seg)) = content_of(&name) else {
                return;
            };
            let content_key = key.name(&content);
            if l2.holds(content_key, seg / l2.cfg.batch) {
                // Came from the L2 (or was written already): nothing to write.
                return;
            }
            l2.stage(
                now,
                (content_key, content.as_bytes()),
                (seg, hash, bytes),
                &mut |st| push_l2_write(out, st),
            );
        });
    }

    /// Answers a parked entry from L1, or forwards it upstream (`wire`: its Interest).
    fn answer_parked(&mut self, now: u64, id: PitId, wire: &[u8], out: &mut Actions) {
        let Some(e) = self.pit.get(id) else { return };
        let Ok(name) = Name::from_value(e.name_bytes()) else {
            return;
        };
        let hit = self.cs.lookup(
            now,
            &name,
            e.name_hash(),
            e.can_be_prefix(),
            e.must_be_fresh(),
        );
        let Some(hit) = hit else {
            return self.forward_parked(now, id, wire, out);
        };
        for r in &e.in_records {
            if r.expiry < now {
                continue;
            }
            let range = out.push_tokened(r.token.get(), hit.data);
            out.send(r.face, range);
            self.counters.data_out += 1;
        }
        self.counters.cs_hits += 1;
        if let Some(l2) = self.l2.as_mut() {
            l2.counters.served += 1;
        }
        self.finish(now, id);
    }

    /// Forwards a parked entry upstream as the CS miss would have been: its Interest as
    /// received (`received`), through the ForwardingHint or the FIB and the strategy.
    fn forward_parked(&mut self, now: u64, id: PitId, received: &[u8], out: &mut Actions) {
        let Some(e) = self.pit.get(id) else { return };
        let Some((ingress, nonce)) = e.in_records.first().map(|r| (r.face, r.nonce)) else {
            return;
        };
        // The wire was decoded as this Interest when it was parked.
        let Ok(Packet::Interest(interest)) = Packet::decode(received) else {
            return;
        };
        // The out-record must carry the Nonce of the bytes sent (a retransmission may have
        // changed the in-record's).
        let nonce = interest.nonce().unwrap_or(nonce);
        if let Some(l2) = self.l2.as_mut() {
            l2.counters.fallbacks += 1;
        }
        let snap = self.fib.guard();
        let key = self.cfg.hash_key;
        let found = interest
            .forwarding_hint()
            .and_then(|f| f.names().find_map(|hint| lpm(&snap, &key, &hint)))
            .or_else(|| lpm(&snap, &key, &interest.name()))
            .map(hops);
        let decision = match found {
            None => Decision::Nack(NackReason::NoRoute),
            Some((nexthops, kind)) => {
                let mut ctx = Ctx {
                    now,
                    ingress,
                    nexthops,
                    pending: &self.pending,
                    rng: &mut self.rng,
                };
                match self.pit.get_mut(id) {
                    Some(e) => strategy::after_receive_interest(kind, &mut ctx, e, true),
                    None => Decision::Suppress,
                }
            }
        };
        self.carry_out(now, id, decision, &interest, nonce, out);
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

/// Appends a batch ready for L2 to the action list.
fn push_l2_write(out: &mut Actions, st: &crate::l2::Stage2<'_>) {
    let name_at = out.l2_bytes.len();
    out.l2_bytes.extend_from_slice(st.name);
    let base = out.l2_bytes.len();
    out.l2_bytes.extend_from_slice(st.bytes);
    let seg_at = out.l2_segments.len();
    for (_, h, r) in st.segments {
        out.l2_segments.push((*h, base + r.start..base + r.end));
    }
    out.l2_writes.push(L2WriteRec {
        content_key: st.content_key,
        batch: st.batch,
        name: name_at..base,
        segments: seg_at..out.l2_segments.len(),
    });
}

impl Incoming<'_> {
    const fn bare() -> Self {
        Self {
            token: None,
            nack: None,
            next_hop: None,
        }
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

/// Appends a SegmentNameComponent (NonNegativeInteger value, shortest encoding).
fn put_segment(buf: &mut Vec<u8>, n: u64) {
    let len = match n {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFFFF_FFFF => 4,
        _ => 8,
    };
    put_header(buf, types::SEGMENT_NAME_COMPONENT, len);
    buf.extend_from_slice(&n.to_be_bytes()[8 - len..]);
}

/// Appends a TLV header (type and length VAR-NUMBERs).
fn put_header(buf: &mut Vec<u8>, typ: u64, len: usize) {
    put_varnum(buf, typ);
    put_varnum(buf, len as u64);
}

/// Writes VAR-NUMBER `v` (at most `u32::MAX`) at the start of `buf` (at least 5 bytes) and
/// returns its length.
#[inline(always)]
fn put_short_varnum(buf: &mut [u8], v: usize) -> usize {
    debug_assert!(v <= u32::MAX as usize && buf.len() >= 5);
    if v < 253 {
        buf[0] = v as u8;
        1
    } else if v <= 0xFFFF {
        buf[0] = 253;
        buf[1..3].copy_from_slice(&(v as u16).to_be_bytes());
        3
    } else {
        buf[0] = 254;
        buf[1..5].copy_from_slice(&(v as u32).to_be_bytes());
        5
    }
}

fn put_varnum(buf: &mut Vec<u8>, v: u64) {
    match v {
        0..=252 => buf.push(v as u8),
        253..=0xFFFF => {
            buf.push(253);
            buf.extend_from_slice(&(v as u16).to_be_bytes());
        }
        0x1_0000..=0xFFFF_FFFF => {
            buf.push(254);
            buf.extend_from_slice(&(v as u32).to_be_bytes());
        }
        _ => {
            buf.push(255);
            buf.extend_from_slice(&v.to_be_bytes());
        }
    }
}

/// Encodes a minimal Interest (name, selectors, nonce) into `buf`, for a Nack to a
/// downstream whose own Interest bytes are no longer at hand.
fn encode_interest(buf: &mut Vec<u8>, name: &[u8], cbp: bool, mbf: bool, nonce: u32) {
    let name_tlv = ndx_codec::tlv_len(types::NAME, name.len());
    let value = name_tlv + 2 * usize::from(cbp) + 2 * usize::from(mbf) + 6;
    let total = ndx_codec::tlv_len(types::INTEREST, value);
    buf.clear();
    buf.resize(total, 0);
    if let Ok(mut w) = Writer::new(buf, total) {
        let _ = w.header(types::INTEREST, value);
        let _ = w.tlv(types::NAME, name);
        if cbp {
            let _ = w.header(types::CAN_BE_PREFIX, 0);
        }
        if mbf {
            let _ = w.header(types::MUST_BE_FRESH, 0);
        }
        let _ = w.tlv(types::NONCE, &nonce.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fib, NextHop};
    use ndx_codec::{DataRepr, InterestRepr, LpPacket, NameBuf};

    /// A shard with `cfg` routing `/net` to face 2; faces 1 and 2.
    fn routed(cfg: ShardConfig) -> Shard {
        let (mut fib, reader) = Fib::new(cfg.hash_key, 2);
        let hop = NextHop {
            face: FaceId(2),
            cost: 1,
        };
        fib.add_nexthop(&NameBuf::from_uri("/net").expect("name").as_name(), hop)
            .expect("route");
        fib.publish();
        let mut s = Shard::new(cfg, reader, 0);
        s.add_face(FaceId(1), FaceInfo::default());
        s.add_face(FaceId(2), FaceInfo::default());
        s
    }

    /// A routed shard, and a twin fed one frame at a time.
    fn twins() -> (Shard, Shard) {
        (
            routed(ShardConfig::default()),
            routed(ShardConfig::default()),
        )
    }

    /// The PitToken of a frame we forwarded (an LpPacket), as an upstream echoes it.
    fn our_token(fwd: &[u8]) -> Vec<u8> {
        let lp = LpPacket::decode(fwd).expect("forwarded in an LpPacket");
        let token = lp.pit_token().expect("with our token");
        assert_eq!(token.len(), crate::pit::PIT_TOKEN_LEN);
        token.to_vec()
    }

    fn object(i: u32) -> NameBuf {
        NameBuf::from_uri(&format!("/net/site/host/obj{i}")).expect("name")
    }

    /// Sends the Interests for `objs` in one burst to `burst` and one by one to `one`, checks
    /// both forward or answer the same bytes, then (for forwarded ones) returns their Data
    /// with our tokens the same two ways.
    fn fetch(burst: &mut Shard, one: &mut Shard, now: u64, objs: std::ops::Range<u32>) {
        let interests: Vec<Vec<u8>> = objs
            .clone()
            .map(|i| {
                let mut r = InterestRepr::new(object(i));
                r.nonce = Some(now as u32 ^ i);
                r.to_vec().expect("Interest")
            })
            .collect();
        let (mut out_b, mut out_o) = (Actions::new(), Actions::new());
        let frames: Vec<(FaceId, &[u8])> = interests.iter().map(|i| (FaceId(1), &i[..])).collect();
        burst.process_burst(now, &frames, &mut out_b);
        for i in &interests {
            one.process(now, FaceId(1), i, &mut out_o);
        }
        let sent: Vec<_> = out_b.sends().map(|(f, b)| (f, b.to_vec())).collect();
        assert_eq!(
            sent,
            out_o
                .sends()
                .map(|(f, b)| (f, b.to_vec()))
                .collect::<Vec<_>>()
        );
        // Forwarded Interests (face 2) carry our token: answer them.
        let mut data = Vec::new();
        for ((face, fwd), i) in sent.iter().zip(objs) {
            if *face != FaceId(2) {
                continue;
            }
            let token = our_token(fwd);
            let d = DataRepr::new(object(i), vec![7; 100])
                .to_vec()
                .expect("Data");
            let h = LpHeaders {
                pit_token: Some(&token),
                ..LpHeaders::default()
            };
            let mut lp = vec![0; h.encoded_len(Some(d.len()))];
            let n = h.encode(Some(&d), &mut lp).expect("LpPacket");
            lp.truncate(n);
            data.push(lp);
        }
        let (mut out_b, mut out_o) = (Actions::new(), Actions::new());
        let frames: Vec<(FaceId, &[u8])> = data.iter().map(|d| (FaceId(2), &d[..])).collect();
        let by_token = (burst.counters().by_token, one.counters().by_token);
        burst.process_burst(now + 1, &frames, &mut out_b);
        for d in &data {
            one.process(now + 1, FaceId(2), d, &mut out_o);
        }
        // Every Data echoed our token, and the token found its entry.
        let n = data.len() as u64;
        assert_eq!(burst.counters().by_token, by_token.0 + n);
        assert_eq!(one.counters().by_token, by_token.1 + n);
        assert!(
            out_b
                .sends()
                .map(|(f, b)| (f, b.to_vec()))
                .eq(out_o.sends().map(|(f, b)| (f, b.to_vec())))
        );
    }

    #[test]
    fn an_incomplete_fragment_set_that_times_out_is_counted() {
        let mut s = routed(ShardConfig::default());
        let mut r = InterestRepr::new(object(4));
        r.nonce = Some(4);
        r.lifetime_ms = Some(4000);
        let wire = r.to_vec().expect("Interest");
        let f = ndx_codec::Fragmenter::new(ndx_codec::Fragmenter::MIN_MTU).expect("MTU");
        let mut frags = f
            .fragment(&wire, &LpHeaders::default(), 77)
            .expect("fragments");
        assert!(frags.count() > 1);
        let mut first = vec![0; frags.max_len()];
        let n = frags.next_into(&mut first).expect("one").expect("written");
        let mut out = Actions::new();
        s.process(0, FaceId(1), &first[..n], &mut out);
        assert_eq!(s.reassembly_counters().expired, 0);
        // Not yet: the default timeout is 500 ms.
        s.on_timer(499_000_000, &mut out);
        assert_eq!(s.reassembly_counters().expired, 0);
        s.on_timer(500_000_000, &mut out);
        let c = s.reassembly_counters();
        assert_eq!((c.fragments_received, c.expired), (1, 1));
        assert_eq!(s.counters().interests_in, 0);
    }

    /// The Interest inside a frame we forwarded.
    fn forwarded_interest(frame: &[u8]) -> ndx_codec::InterestRepr {
        let lp = LpPacket::decode(frame).expect("forwarded in an LpPacket");
        Interest::decode(lp.fragment().expect("a fragment"))
            .expect("an Interest")
            .to_repr()
    }

    #[test]
    fn an_interest_without_nonce_leaves_with_the_nonce_it_was_given() {
        let mut s = routed(ShardConfig::default());
        s.add_face(FaceId(3), FaceInfo::default());
        let mut r = InterestRepr::new(object(1));
        r.can_be_prefix = true;
        r.lifetime_ms = Some(1000);
        r.hop_limit = Some(10);
        let bare = r.to_vec().expect("Interest");
        let mut out = Actions::new();
        s.process(0, FaceId(1), &bare, &mut out);
        let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0, FaceId(2));
        let fwd = forwarded_interest(&sent[0].1);
        let nonce = fwd.nonce.expect("forwarded with a Nonce");
        // Nothing else changed but the HopLimit.
        let mut want = r.clone();
        want.nonce = Some(nonce);
        want.hop_limit = Some(9);
        assert_eq!(fwd, want);
        // The nonce is the out-record's: the same Interest looping back on face 3 is caught.
        out.clear();
        s.process(1, FaceId(3), &want.to_vec().expect("Interest"), &mut out);
        assert_eq!(s.counters().dropped(DropReason::Loop), 1);
        let nack: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
        assert_eq!(nack.len(), 1, "Nack Duplicate to face 3");
        assert_eq!(nack[0].0, FaceId(3));
        let lp = LpPacket::decode(&nack[0].1).expect("Nack");
        assert_eq!(lp.nack(), Some(NackReason::Duplicate));
        // The downstream retransmits (still without a Nonce) once retransmissions are no longer
        // suppressed: a fresh nonce goes upstream.
        out.clear();
        s.process(20_000_000, FaceId(1), &bare, &mut out);
        let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
        assert_eq!(sent.len(), 1);
        let again = forwarded_interest(&sent[0].1).nonce.expect("a Nonce");
        assert_ne!(again, nonce);
        // An Interest with a Nonce leaves with it, byte for byte but the HopLimit.
        let mut with = InterestRepr::new(object(2));
        with.nonce = Some(0x0A0B_0C0D);
        with.hop_limit = Some(5);
        out.clear();
        s.process(
            30_000_000,
            FaceId(1),
            &with.to_vec().expect("Interest"),
            &mut out,
        );
        let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
        with.hop_limit = Some(4);
        assert_eq!(forwarded_interest(&sent[0].1), with);
    }

    #[test]
    fn shards_with_one_seed_give_different_nonces() {
        let bare = InterestRepr::new(object(5)).to_vec().expect("Interest");
        let nonce_of = |shard: u8| {
            let mut s = routed(ShardConfig {
                shard,
                ..ShardConfig::default()
            });
            let mut out = Actions::new();
            s.process(0, FaceId(1), &bare, &mut out);
            let sent: Vec<_> = out.sends().map(|(_, b)| b.to_vec()).collect();
            forwarded_interest(&sent[0]).nonce.expect("a Nonce")
        };
        let nonces: Vec<u32> = (0..4).map(nonce_of).collect();
        let mut distinct = nonces.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{nonces:x?}");
        // And a shard draws the same nonce from the same seed: the core stays deterministic.
        assert_eq!(nonce_of(2), nonces[2]);
    }

    #[test]
    fn a_nonce_less_interest_retried_after_a_nack_keeps_its_nonce() {
        // Two routes: the Nack from the first upstream sends the Interest (the Nack's copy,
        // which carries our nonce) to the second one, with the same nonce.
        let key = ShardConfig::default().hash_key;
        let (mut fib, reader) = Fib::new(key, 2);
        let prefix = NameBuf::from_uri("/net").expect("name");
        for (face, cost) in [(2, 1), (3, 2)] {
            fib.add_nexthop(
                &prefix.as_name(),
                NextHop {
                    face: FaceId(face),
                    cost,
                },
            )
            .expect("route");
        }
        fib.publish();
        let mut s = Shard::new(ShardConfig::default(), reader, 0);
        for f in 1..=3 {
            s.add_face(FaceId(f), FaceInfo::default());
        }
        let bare = InterestRepr::new(object(3)).to_vec().expect("Interest");
        let mut out = Actions::new();
        s.process(0, FaceId(1), &bare, &mut out);
        let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0, FaceId(2));
        let token = our_token(&sent[0].1);
        let fwd = forwarded_interest(&sent[0].1);
        let nonce = fwd.nonce.expect("a Nonce");
        // Face 2 answers with a Nack NoRoute carrying the Interest it got.
        let h = LpHeaders {
            pit_token: Some(&token),
            nack: Some(NackReason::NoRoute),
            ..LpHeaders::default()
        };
        let inner = fwd.to_vec().expect("Interest");
        let mut nack = vec![0; h.encoded_len(Some(inner.len()))];
        let n = h.encode(Some(&inner), &mut nack).expect("Nack");
        nack.truncate(n);
        out.clear();
        s.process(1, FaceId(2), &nack, &mut out);
        let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert_eq!(sent[0].0, FaceId(3));
        assert_eq!(forwarded_interest(&sent[0].1).nonce, Some(nonce));
    }

    /// `fragment` in an LpPacket whose only header is the PitToken `token`.
    fn tokened(token: &[u8], fragment: &[u8]) -> Vec<u8> {
        let h = LpHeaders {
            pit_token: Some(token),
            ..LpHeaders::default()
        };
        let mut lp = vec![0; h.encoded_len(Some(fragment.len()))];
        let n = h.encode(Some(fragment), &mut lp).expect("LpPacket");
        lp.truncate(n);
        lp
    }

    #[test]
    fn data_in_lent_frames_is_sent_from_where_it_is() {
        let mut s = routed(ShardConfig::default());
        let mut copy = routed(ShardConfig::default());
        for x in [&mut s, &mut copy] {
            x.add_face(FaceId(3), FaceInfo::default());
        }
        // Two downstreams, one with its own PitToken and one without, aggregated.
        let interest = |nonce| {
            let mut r = InterestRepr::new(object(9));
            r.nonce = Some(nonce);
            r.to_vec().expect("Interest")
        };
        let first = tokened(&[0xAA, 0xBB, 0xCC], &interest(1));
        let second = interest(2);
        let mut out = Actions::new();
        let mut out_copy = Actions::new();
        for (x, o) in [(&mut s, &mut out), (&mut copy, &mut out_copy)] {
            x.process(1_000, FaceId(1), &first, o);
            x.process(1_000, FaceId(3), &second, o);
        }
        let (face, fwd) = out.sends().next().expect("forwarded once");
        assert_eq!((face, out.sends().count()), (FaceId(2), 1));
        let token = our_token(fwd);
        // The Data, and a third Interest for it that the CS answers, in one lent burst.
        let data = tokened(
            &token,
            &DataRepr::new(object(9), vec![7; 1000])
                .to_vec()
                .expect("Data"),
        );
        let third = interest(3);
        let frames = [(FaceId(2), &data[..]), (FaceId(1), &third[..])];
        out.clear();
        out_copy.clear();
        s.process_burst_lent(2_000, &frames, &mut out);
        copy.process_burst(2_000, &frames, &mut out_copy);
        assert_eq!(out.lent(), 2);
        let lent: Vec<Outgoing<'_>> = out.sends_with(|k| frames[k as usize].1).collect();
        let whole: Vec<_> = out_copy.sends().collect();
        assert_eq!(lent.len(), 3, "two downstreams and one CS hit");
        for (l, (face, bytes)) in lent.iter().zip(&whole) {
            let mut b = Vec::new();
            l.copy_to(&mut b);
            assert_eq!((l.face, &b[..]), (*face, *bytes));
        }
        // The Data inside the received LpPacket, sent from there: with the token of face 1
        // in a new head, bare (no head) to face 3.
        let inner = LpPacket::decode(&data)
            .expect("LpPacket")
            .fragment()
            .expect("fragment");
        for l in &lent[..2] {
            assert_eq!(l.body.as_ptr(), inner.as_ptr(), "lent, not copied");
            assert_eq!(l.body.len(), inner.len());
        }
        assert_eq!(lent[0].face, FaceId(1));
        let head = LpPacket::decode(&[lent[0].head, lent[0].body].concat())
            .expect("LpPacket")
            .pit_token()
            .map(<[u8]>::to_vec);
        assert_eq!(head.as_deref(), Some(&[0xAA, 0xBB, 0xCC][..]));
        assert!(lent[1].head.is_empty() && lent[1].face == FaceId(3));
        // The CS hit is copied out of the store (a later insert may overwrite its slot).
        assert!(lent[2].body.is_empty() && !lent[2].head.is_empty());
        assert_eq!(s.counters(), copy.counters());
        // Cleared: numbering starts again.
        out.clear();
        assert_eq!(out.lent(), 0);
    }

    /// One Interest from face 1 (forwarded to face 2), answered with a Data of `freshness_ms`
    /// that echoes our token; then the same Interest, same nonce, comes back (a loop). Returns
    /// the dead-nonce list's length after the Data, and whether the looped copy got the Data
    /// back (else a Nack Duplicate).
    fn satisfy_then_loop(
        s: &mut Shard,
        obj: u32,
        must_be_fresh: bool,
        freshness_ms: Option<u64>,
    ) -> (usize, bool) {
        let i = interest_for(obj, obj, must_be_fresh);
        let mut out = Actions::new();
        s.process(1_000, FaceId(1), &i, &mut out);
        let (face, fwd) = out.sends().next().expect("forwarded");
        assert_eq!(face, FaceId(2));
        let lp = data_for(obj, freshness_ms, &our_token(fwd));
        out.clear();
        let by_token = s.counters().by_token;
        s.process(2_000, FaceId(2), &lp, &mut out);
        assert_eq!(out.sends().count(), 1, "Data sent downstream");
        assert_eq!(s.counters().by_token, by_token + 1, "matched by our token");
        let dead = s.dnl.len();
        out.clear();
        s.process(3_000, FaceId(1), &i, &mut out);
        let (_, answer) = out.sends().next().expect("an answer to the looped copy");
        let got_data = match sent(answer) {
            Sent::Data => true,
            Sent::Nack(_) => false,
            Sent::Interest => panic!("the looped copy was forwarded"),
        };
        (dead, got_data)
    }

    #[test]
    fn localhost_stays_on_local_faces_and_local_fields_name_the_sender() {
        let (mut fib, reader) = Fib::new(ShardConfig::default().hash_key, 2);
        let to = |face| NextHop {
            face: FaceId(face),
            cost: 1,
        };
        let name = |s: &str| NameBuf::from_uri(s).expect("name");
        // /localhost/nfd leads to the management face (9, local fields on); "/" leads to a
        // remote face (2) and a local one (3).
        fib.add_nexthop(&name("/localhost/nfd").as_name(), to(9))
            .expect("route");
        fib.add_nexthop(&name("/").as_name(), to(2)).expect("route");
        fib.add_nexthop(&name("/").as_name(), to(3)).expect("route");
        fib.set_strategy(&name("/").as_name(), StrategyKind::Multicast.id());
        fib.publish();
        let mut s = Shard::new(ShardConfig::default(), reader, 0);
        let local = FaceInfo {
            local: true,
            ..FaceInfo::default()
        };
        s.add_face(FaceId(1), FaceInfo::default());
        s.add_face(FaceId(2), FaceInfo::default());
        s.add_face(FaceId(3), local);
        s.add_face(FaceId(4), local);
        s.add_face(
            FaceId(9),
            FaceInfo {
                local: true,
                local_fields: true,
                ..FaceInfo::default()
            },
        );
        let interest = |uri: &str, nonce| {
            let mut r = InterestRepr::new(name(uri));
            r.nonce = Some(nonce);
            r.to_vec().expect("Interest")
        };
        let mut out = Actions::new();
        // From a remote face: dropped and counted, nothing sent.
        s.process(
            1_000,
            FaceId(1),
            &interest("/localhost/nfd/faces/list", 1),
            &mut out,
        );
        assert_eq!(out.sends().count(), 0);
        assert_eq!(s.counters().dropped(DropReason::Scope), 1);
        // From a local face: to the management face, with the sender's IncomingFaceId.
        s.process(
            1_000,
            FaceId(4),
            &interest("/localhost/nfd/faces/list", 2),
            &mut out,
        );
        let sent: Vec<(FaceId, Vec<u8>)> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0, FaceId(9));
        let lp = LpPacket::decode(&sent[0].1).expect("LpPacket");
        assert_eq!(lp.headers().incoming_face_id, Some(4));
        assert!(lp.pit_token().is_some());
        out.clear();
        // Another /localhost name matching only "/": the local next hop gets it, the remote
        // one never does.
        s.process(1_000, FaceId(4), &interest("/localhost/app/x", 3), &mut out);
        let faces: Vec<FaceId> = out.sends().map(|(f, _)| f).collect();
        assert_eq!(faces, vec![FaceId(3)]);
        out.clear();
        // /localhop from a remote face reaches local faces only; from a local face it goes
        // to the remote next hop too.
        s.process(1_000, FaceId(1), &interest("/localhop/x", 5), &mut out);
        let faces: Vec<FaceId> = out.sends().map(|(f, _)| f).collect();
        assert_eq!(faces, vec![FaceId(3)]);
        out.clear();
        s.process(1_000, FaceId(4), &interest("/localhop/y", 6), &mut out);
        let mut faces: Vec<FaceId> = out.sends().map(|(f, _)| f).collect();
        faces.sort_by_key(|f| f.0);
        assert_eq!(faces, vec![FaceId(2), FaceId(3)]);
        out.clear();
        // A /localhost Data from a remote face is dropped too.
        let data = DataRepr::new(name("/localhost/app/x"), vec![1])
            .to_vec()
            .expect("Data");
        s.process(2_000, FaceId(2), &data, &mut out);
        assert_eq!(out.sends().count(), 0);
        assert_eq!(s.counters().dropped(DropReason::Scope), 2);
        // Everything else is untouched by the scope rule.
        s.process(2_000, FaceId(1), &interest("/net/a", 4), &mut out);
        assert_eq!(out.sends().count(), 2, "multicast to both next hops of /");
    }

    #[test]
    fn satisfied_nonces_are_remembered_only_when_the_cs_cannot_answer_a_loop() {
        let mut s = routed(ShardConfig::default());
        // Cached, no MustBeFresh: the CS answers the loop; nothing to remember.
        assert_eq!(satisfy_then_loop(&mut s, 1, false, None), (0, true));
        // MustBeFresh, fresh longer than the list's lifetime: the CS still answers.
        assert_eq!(satisfy_then_loop(&mut s, 2, true, Some(60_000)), (0, true));
        // MustBeFresh and Data stale at once: the CS cannot answer, the nonce is dead.
        assert_eq!(satisfy_then_loop(&mut s, 3, true, Some(0)), (1, false));
        // Not cached (slots too small for it): remembered whatever the selectors.
        let mut small = routed(ShardConfig {
            cs: crate::CsConfig {
                slot_size: 64,
                ..crate::CsConfig::default()
            },
            ..ShardConfig::default()
        });
        assert_eq!(satisfy_then_loop(&mut small, 4, false, None), (1, false));
    }

    /// What a frame the shard sent is: a Data (bare or in an LpPacket), a Nack with its
    /// reason, or an Interest.
    #[derive(Debug, PartialEq)]
    enum Sent {
        Data,
        Nack(NackReason),
        Interest,
    }

    fn sent(frame: &[u8]) -> Sent {
        match Packet::decode(frame).expect("decodes") {
            Packet::Data(_) => Sent::Data,
            Packet::Interest(_) => Sent::Interest,
            Packet::Lp(lp) => match (lp.nack(), lp.network_packet()) {
                (Some(reason), _) => Sent::Nack(reason),
                (None, Ok(Some(Packet::Data(_)))) => Sent::Data,
                (None, Ok(Some(Packet::Interest(_)))) => Sent::Interest,
                other => panic!("unexpected LpPacket: {other:?}"),
            },
        }
    }

    /// Processes one frame; returns what was sent where.
    fn exchange(s: &mut Shard, now: u64, face: u32, frame: &[u8]) -> Vec<(FaceId, Vec<u8>)> {
        let mut out = Actions::new();
        s.process(now, FaceId(face), frame, &mut out);
        out.sends().map(|(f, b)| (f, b.to_vec())).collect()
    }

    fn interest_for(obj: u32, nonce: u32, must_be_fresh: bool) -> Vec<u8> {
        let mut i = InterestRepr::new(object(obj));
        i.nonce = Some(nonce);
        i.must_be_fresh = must_be_fresh;
        i.to_vec().expect("Interest")
    }

    /// The Data of `obj` with FreshnessPeriod `freshness_ms`, echoing `token`.
    fn data_for(obj: u32, freshness_ms: Option<u64>, token: &[u8]) -> Vec<u8> {
        let mut d = DataRepr::new(object(obj), vec![7; 100]);
        d.freshness_ms = freshness_ms;
        tokened(token, &d.to_vec().expect("Data"))
    }

    /// A FreshnessPeriod that outlasts a test.
    const MINUTE: Option<u64> = Some(60_000);

    #[test]
    fn the_cs_answers_an_interest_whose_entry_is_pending() {
        let mut s = routed(ShardConfig::default());
        s.add_face(FaceId(3), FaceInfo::default());
        s.add_face(FaceId(4), FaceInfo::default());
        // Two entries for one name: without and with MustBeFresh, each forwarded with its
        // own token.
        let plain = exchange(&mut s, 1_000, 1, &interest_for(1, 1, false));
        let fresh = exchange(&mut s, 1_000, 3, &interest_for(1, 2, true));
        assert_eq!((plain.len(), fresh.len()), (1, 1));
        assert_eq!((plain[0].0, fresh[0].0), (FaceId(2), FaceId(2)));
        // The Data echoes the first token: it satisfies that entry alone (matched by token,
        // no name search) and is cached; the MustBeFresh entry stays pending.
        let down = exchange(
            &mut s,
            2_000,
            2,
            &data_for(1, MINUTE, &our_token(&plain[0].1)),
        );
        assert_eq!(down.len(), 1);
        assert_eq!((down[0].0, sent(&down[0].1)), (FaceId(1), Sent::Data));
        assert_eq!(s.pit().len(), 1, "the MustBeFresh entry is still pending");
        // Another MustBeFresh Interest: the fresh Data in the CS answers it at once, where
        // NFD's order would have aggregated it into the pending entry.
        let before = s.counters();
        let hit = exchange(&mut s, 3_000, 4, &interest_for(1, 3, true));
        assert_eq!(hit.len(), 1);
        assert_eq!((hit[0].0, sent(&hit[0].1)), (FaceId(4), Sent::Data));
        let after = s.counters();
        assert_eq!(after.cs_hits, before.cs_hits + 1);
        assert_eq!(after.aggregated, before.aggregated, "not aggregated");
        // The pending entry still answers its own downstream, and only it.
        let late = exchange(
            &mut s,
            4_000,
            2,
            &data_for(1, MINUTE, &our_token(&fresh[0].1)),
        );
        let faces: Vec<FaceId> = late.iter().map(|(f, _)| *f).collect();
        assert_eq!(faces, [FaceId(3)]);
        assert!(s.pit().is_empty());
    }

    #[test]
    fn the_cs_answers_a_looping_interest_whose_nonce_is_dead() {
        // Object 1's Interest with nonce 7 expires upstream (the nonce is dead), then another
        // Interest brings its Data; finally nonce 7 comes back. Returns what answers it.
        fn dead_then_loop(mut s: Shard) -> Sent {
            let fwd = exchange(&mut s, 1_000, 1, &interest_for(1, 7, false));
            assert_eq!(fwd.len(), 1, "forwarded");
            let mut out = Actions::new();
            let later = 5_000_000_000;
            s.on_timer(later, &mut out);
            assert!(s.pit().is_empty(), "expired");
            assert_eq!(s.dnl.len(), 1, "its nonce is dead");
            let fwd = exchange(&mut s, later, 1, &interest_for(1, 8, false));
            let down = exchange(
                &mut s,
                later + 1,
                2,
                &data_for(1, MINUTE, &our_token(&fwd[0].1)),
            );
            assert_eq!(down.len(), 1, "Data sent down");
            let answer = exchange(&mut s, later + 2, 1, &interest_for(1, 7, false));
            assert_eq!(answer.len(), 1);
            assert_eq!(answer[0].0, FaceId(1));
            sent(&answer[0].1)
        }
        // Cached: the CS answers before the dead-nonce list is asked.
        assert_eq!(dead_then_loop(routed(ShardConfig::default())), Sent::Data);
        // Not cached (slots too small for it): the dead nonce is a loop.
        let small = routed(ShardConfig {
            cs: crate::CsConfig {
                slot_size: 64,
                ..crate::CsConfig::default()
            },
            ..ShardConfig::default()
        });
        assert_eq!(dead_then_loop(small), Sent::Nack(NackReason::Duplicate));
    }

    #[test]
    fn bursts_prefetch_the_fib_deeper_only_while_most_interests_miss_the_cs() {
        let (mut burst, mut one) = twins();
        assert_eq!(burst.speculate, Speculate::Deep, "deep by default");
        fetch(&mut burst, &mut one, 1_000, 0..8);
        assert_eq!(burst.speculate, Speculate::Deep, "all missed");
        assert_eq!(burst.counters().data_out, 8);
        // The same names again: CS hits, answered from the store; the next burst leaves the
        // FIB to the likely misses.
        fetch(&mut burst, &mut one, 2_000, 0..8);
        assert_eq!(burst.counters().cs_hits, 8);
        assert_eq!(burst.speculate, Speculate::Late, "all hit");
        // Late speculation forwards misses exactly as before (checked against `one`).
        fetch(&mut burst, &mut one, 3_000, 1..9);
        assert_eq!(burst.counters().cs_hits, 15);
        assert_eq!(burst.speculate, Speculate::Late, "7 hits of 8");
        fetch(&mut burst, &mut one, 4_000, 4..12);
        assert_eq!(burst.counters().cs_hits, 20);
        assert_eq!(burst.speculate, Speculate::Shallow, "5 hits of 8");
        // Shallow speculation forwards misses exactly as before too.
        fetch(&mut burst, &mut one, 5_000, 8..16);
        assert_eq!(burst.counters().cs_hits, 24);
        assert_eq!(
            burst.speculate,
            Speculate::Shallow,
            "4 hits of 8 are not a minority"
        );
        fetch(&mut burst, &mut one, 6_000, 20..28);
        assert_eq!(burst.speculate, Speculate::Deep, "all missed again");
        assert_eq!(burst.counters(), one.counters());
    }

    #[test]
    fn the_speculation_follows_the_share_of_likely_hits() {
        for (hits, interests, want) in [
            (0, 8, Speculate::Deep),
            (3, 8, Speculate::Deep),
            (4, 8, Speculate::Shallow),
            (6, 8, Speculate::Shallow),
            (7, 8, Speculate::Late),
            (8, 8, Speculate::Late),
            (1, 1, Speculate::Late),
            (0, 1, Speculate::Deep),
            (2, 3, Speculate::Shallow),
        ] {
            assert_eq!(
                Speculate::after(hits, interests),
                want,
                "{hits} of {interests}"
            );
        }
    }

    #[test]
    fn tokened_packets_match_the_codec() {
        for token_len in [0, 1, 6, 8, ndx_codec::MAX_PIT_TOKEN_LEN] {
            for frag_len in [1, 200, 240, 252, 253, 300, 0xFFFF, 0x1_0000] {
                let token: Vec<u8> = (0..token_len as u8).collect();
                let fragment = vec![0x5A; frag_len];
                let headers = LpHeaders {
                    pit_token: (token_len > 0).then_some(&token[..]),
                    ..LpHeaders::default()
                };
                // Without a token the fragment goes bare.
                let (want, n) = if headers.is_empty() {
                    (fragment.clone(), frag_len)
                } else {
                    let mut want = vec![0; headers.encoded_len(Some(frag_len))];
                    let n = headers.encode(Some(&fragment), &mut want).expect("encodes");
                    (want, n)
                };
                let mut out = Actions::new();
                out.bytes.push(0xEE);
                let range = out.push_tokened(headers.pit_token, &fragment);
                assert_eq!(range.start, 1);
                assert_eq!(
                    &out.bytes[range],
                    &want[..n],
                    "token {token_len}, fragment {frag_len}"
                );
            }
        }
    }

    #[test]
    fn put_segment_matches_the_codec() {
        for n in [
            0,
            1,
            255,
            256,
            65_535,
            65_536,
            u64::from(u32::MAX),
            1 << 40,
            u64::MAX,
        ] {
            let mut want = NameBuf::from_uri("/a/b").expect("name");
            want.push_segment(n);
            let mut got = NameBuf::from_uri("/a/b")
                .expect("name")
                .as_name()
                .as_bytes()
                .to_vec();
            put_segment(&mut got, n);
            assert_eq!(got, want.as_name().as_bytes(), "segment {n}");
        }
    }
}
