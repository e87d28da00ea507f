//! NDNLPv2 LpPacket: a zero-copy view ([`LpPacket`]) and a header encoder ([`LpHeaders`]).

use core::fmt;

use crate::error::{Element, Error, ErrorKind, Result};
use crate::fast;
use crate::packet::Packet;
use crate::tlv::{Reader, Tlv, Writer, nni_tlv_len, tlv_len};
use crate::types::{self as tt, lp_is_ignorable};
use crate::view::{self, Span};

/// Longest PitToken NDNLPv2 allows.
pub const MAX_PIT_TOKEN_LEN: usize = 32;

/// A Nack's reason (NDNLPv2 "Network NACK").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NackReason {
    /// No NackReason element, or an unknown code (NDNLPv2: treat as unspecified).
    Unspecified,
    /// Congestion (50).
    Congestion,
    /// Duplicate (100): a looping Interest.
    Duplicate,
    /// NoRoute (150).
    NoRoute,
}

impl NackReason {
    /// The wire code (`Unspecified` has none).
    pub const fn code(self) -> Option<u64> {
        match self {
            Self::Unspecified => None,
            Self::Congestion => Some(50),
            Self::Duplicate => Some(100),
            Self::NoRoute => Some(150),
        }
    }

    /// From a wire code; unknown codes are `Unspecified`.
    pub const fn from_code(code: u64) -> Self {
        match code {
            50 => Self::Congestion,
            100 => Self::Duplicate,
            150 => Self::NoRoute,
            _ => Self::Unspecified,
        }
    }
}

/// CachePolicy (NDNLPv2): only NoCache (1) is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CachePolicy {
    /// NoCache: downstream nodes should not cache this Data.
    NoCache,
    /// Another CachePolicyType code.
    Other(u64),
}

impl CachePolicy {
    fn code(self) -> u64 {
        match self {
            Self::NoCache => 1,
            Self::Other(c) => c,
        }
    }
}

/// An LpPacket, borrowed from the frame.
///
/// Compact (80 bytes), as it is built, returned and matched on for every frame the router
/// receives: the whole TLV, the fields the forwarding path reads (Sequence, FragIndex,
/// FragCount, PitToken, Nack, NextHopFaceId, and the Fragment's `u32` position; see the `view`
/// module) decoded, and the rarer header fields re-read from the TLV by
/// [`headers`](LpPacket::headers) when there are any.
///
/// Decoding rules (NDNLPv2): header fields precede Fragment; known fields other than Ack
/// appear at most once; an unknown field is skipped when ignorable (800..=959 with the low two
/// bits 00) and rejected otherwise; FragIndex < FragCount; PitToken is 1..=32 bytes.
#[derive(Clone, Copy)]
pub struct LpPacket<'a> {
    wire: &'a [u8],
    offset: usize,
    /// Sequence (meaningful with `SEQUENCE`).
    sequence: u64,
    /// FragIndex, 0 when absent.
    frag_index: u64,
    /// FragCount, 1 when absent.
    frag_count: u64,
    /// NextHopFaceId (meaningful with `NEXT_HOP`).
    next_hop_face_id: u64,
    /// The Fragment's TLV-VALUE, relative to `wire` (meaningful with `FRAGMENT`).
    fragment: Span,
    /// PitToken's value, relative to `wire`; empty when absent (a PitToken never is).
    pit_token: Span,
    /// Nack.
    nack: Option<NackReason>,
    /// Presence bits (`SEQUENCE`…`OTHER`).
    flags: u8,
}

/// [`LpPacket::flags`] bits.
const SEQUENCE: u8 = 1;
const FRAG_INDEX: u8 = 1 << 1;
const FRAG_COUNT: u8 = 1 << 2;
const NEXT_HOP: u8 = 1 << 3;
/// A Fragment is present (an IDLE packet has none).
const FRAGMENT: u8 = 1 << 4;
/// An Ack field is present ([`LpPacket::acks`] re-reads them from the wire).
const ACKS: u8 = 1 << 5;
/// A header field not kept in the view is present ([`LpPacket::headers`] re-reads them).
const OTHER: u8 = 1 << 6;

view::entry_points!(LpPacket, tt::LP_PACKET, Element::LpPacket, "an LpPacket");

impl<'a> LpPacket<'a> {
    /// The fast path of [`from_tlv`](Self::from_tlv), for an LpPacket TLV checked by
    /// `view::check_len`: optionally Sequence, FragIndex, FragCount, PitToken, Nack (empty
    /// or one NackReason), NextHopFaceId, IncomingFaceId, CongestionMark and Fragment (with a
    /// minimal one- or three-byte TLV-LENGTH), in this order (the order [`LpHeaders::encode`]
    /// writes them in), and nothing else. `None` for any other LpPacket, valid or not.
    #[inline(always)]
    pub(crate) fn from_tlv_fast(t: &Tlv<'a>) -> Option<Self> {
        if let Some(lp) = Self::from_tlv_usual(t) {
            return Some(lp);
        }
        let mut lp = LpPacket::empty(t);
        let mut rest = t.value;
        // Sequence, FragIndex and FragCount (consecutive TLV-TYPEs): most packets have none,
        // and skip the three checks at once.
        if let [typ, ..] = *rest
            && (tt::LP_SEQUENCE as u8..=tt::LP_FRAG_COUNT as u8).contains(&typ)
        {
            if let Some((v, tail)) = fast::nni(rest, tt::LP_SEQUENCE as u8) {
                lp.sequence = v;
                lp.flags |= SEQUENCE;
                rest = tail;
            }
            if let Some((v, tail)) = fast::nni(rest, tt::LP_FRAG_INDEX as u8) {
                lp.frag_index = v;
                lp.flags |= FRAG_INDEX;
                rest = tail;
            }
            if let Some((v, tail)) = fast::nni(rest, tt::LP_FRAG_COUNT as u8) {
                lp.frag_count = v;
                lp.flags |= FRAG_COUNT;
                rest = tail;
            }
        }
        if let [98, l @ 1..=32, ref tail @ ..] = *rest {
            let (token, after) = tail.split_at_checked(usize::from(l))?;
            lp.pit_token = Span::within(t.wire, token);
            rest = after;
        }
        // Nack: empty, or one NackReason.
        if let [253, 3, 0x20, len @ 0..=252, ref tail @ ..] = *rest {
            let (value, after) = tail.split_at_checked(usize::from(len))?;
            lp.nack = Some(if value.is_empty() {
                NackReason::Unspecified
            } else {
                let (code, none) = fast::nni3(value, tt::LP_NACK_REASON as u16)?;
                if !none.is_empty() {
                    return None;
                }
                NackReason::from_code(code)
            });
            rest = after;
        }
        if let Some((v, tail)) = fast::nni3(rest, tt::LP_NEXT_HOP_FACE_ID as u16) {
            lp.next_hop_face_id = v;
            lp.flags |= NEXT_HOP;
            rest = tail;
        }
        // Valid, but kept out of the view: `headers` re-reads them.
        for typ in [tt::LP_INCOMING_FACE_ID, tt::LP_CONGESTION_MARK] {
            if let Some((_, tail)) = fast::nni3(rest, typ as u16) {
                lp.flags |= OTHER;
                rest = tail;
            }
        }
        if let Some((fragment, after)) = fast::element(rest, tt::LP_FRAGMENT as u8) {
            lp.fragment = Span::within(t.wire, fragment);
            lp.flags |= FRAGMENT;
            rest = after;
        }
        if !rest.is_empty() || lp.frag_count == 0 || lp.frag_index >= lp.frag_count {
            return None;
        }
        Some(lp)
    }

    /// The fast path for the usual LpPacket, a PitToken and a Fragment and nothing else (the
    /// router's Interests and the Data answering them): no test for the fields that may come
    /// between. `None` for any other LpPacket, valid or not.
    #[inline(always)]
    pub(crate) fn from_tlv_usual(t: &Tlv<'a>) -> Option<Self> {
        let [98, l @ 1..=32, ref tail @ ..] = *t.value else {
            return None;
        };
        let (token, after) = tail.split_at_checked(usize::from(l))?;
        let (fragment, []) = fast::element(after, tt::LP_FRAGMENT as u8)? else {
            return None;
        };
        let mut lp = LpPacket::empty(t);
        lp.pit_token = Span::within(t.wire, token);
        lp.fragment = Span::within(t.wire, fragment);
        lp.flags = FRAGMENT;
        Some(lp)
    }

    /// An LpPacket view of `t` with no field.
    #[inline(always)]
    fn empty(t: &Tlv<'a>) -> Self {
        LpPacket {
            wire: t.wire,
            offset: t.offset,
            sequence: 0,
            frag_index: 0,
            frag_count: 1,
            next_hop_face_id: 0,
            fragment: Span::default(),
            pit_token: Span::default(),
            nack: None,
            flags: 0,
        }
    }

    /// The general decoder: every field order, every encoding, every error.
    #[inline(never)]
    pub(crate) fn from_tlv_general(t: Tlv<'a>) -> Result<Self> {
        view::outer::<Self>(&t)?;
        let (h, fragment, has_acks) = Self::fields(&t)?;
        let count = h.frag_count.unwrap_or(1);
        if count == 0 {
            return Err(t.error(ErrorKind::Invalid(Element::FragCount)));
        }
        if h.frag_index.unwrap_or(0) >= count {
            return Err(t.error(ErrorKind::Invalid(Element::FragIndex)));
        }
        let mut lp = LpPacket::empty(&t);
        let mut set = |bit: u8, v: Option<u64>, to: &mut u64| {
            if let Some(v) = v {
                *to = v;
                lp.flags |= bit;
            }
        };
        set(SEQUENCE, h.sequence, &mut lp.sequence);
        set(FRAG_INDEX, h.frag_index, &mut lp.frag_index);
        set(FRAG_COUNT, h.frag_count, &mut lp.frag_count);
        set(NEXT_HOP, h.next_hop_face_id, &mut lp.next_hop_face_id);
        if let Some(token) = h.pit_token {
            lp.pit_token = Span::within(t.wire, token);
        }
        lp.nack = h.nack;
        if let Some(f) = fragment {
            lp.fragment = Span::within(t.wire, f);
            lp.flags |= FRAGMENT;
        }
        if has_acks {
            lp.flags |= ACKS;
        }
        let kept = LpHeaders {
            sequence: h.sequence,
            frag_index: h.frag_index,
            frag_count: h.frag_count,
            pit_token: h.pit_token,
            nack: h.nack,
            next_hop_face_id: h.next_hop_face_id,
            ..LpHeaders::default()
        };
        if h != kept {
            lp.flags |= OTHER;
        }
        Ok(lp)
    }

    /// Reads and checks the fields of the LpPacket `t`: its headers (without the acks), its
    /// Fragment's value, and whether it has Ack fields.
    fn fields(t: &Tlv<'a>) -> Result<(LpHeaders<'a>, Option<&'a [u8]>, bool)> {
        let mut h = LpHeaders::default();
        let mut fragment = None;
        let mut has_acks = false;
        let mut seen: u32 = 0;
        for e in t.children() {
            let e = e?;
            let bit = match e.typ {
                tt::LP_FRAGMENT => 0,
                tt::LP_SEQUENCE => 1,
                tt::LP_FRAG_INDEX => 2,
                tt::LP_FRAG_COUNT => 3,
                tt::LP_PIT_TOKEN => 4,
                tt::LP_NACK => 5,
                tt::LP_NEXT_HOP_FACE_ID => 6,
                tt::LP_INCOMING_FACE_ID => 7,
                tt::LP_CACHE_POLICY => 8,
                tt::LP_CONGESTION_MARK => 9,
                tt::LP_TX_SEQUENCE => 10,
                tt::LP_NON_DISCOVERY => 11,
                tt::LP_PREFIX_ANNOUNCEMENT => 12,
                tt::LP_HOP_COUNT_TAG => 13,
                tt::LP_ACK => 14,
                typ if lp_is_ignorable(typ) => continue,
                typ => {
                    return Err(e.error(ErrorKind::UnknownCritical {
                        typ,
                        context: Element::LpPacket,
                    }));
                }
            };
            if fragment.is_some() {
                // Nothing but ignorable fields may follow the Fragment.
                return Err(e.error(ErrorKind::UnknownCritical {
                    typ: e.typ,
                    context: Element::Fragment,
                }));
            }
            if bit != 14 && seen & (1 << bit) != 0 {
                return Err(e.error(ErrorKind::UnknownCritical {
                    typ: e.typ,
                    context: Element::LpPacket,
                }));
            }
            seen |= 1 << bit;
            match e.typ {
                tt::LP_FRAGMENT => fragment = Some(e.value),
                tt::LP_SEQUENCE => h.sequence = Some(e.nni(Element::Sequence)?),
                tt::LP_FRAG_INDEX => h.frag_index = Some(e.nni(Element::FragIndex)?),
                tt::LP_FRAG_COUNT => h.frag_count = Some(e.nni(Element::FragCount)?),
                tt::LP_PIT_TOKEN => {
                    if e.value.is_empty() || e.value.len() > MAX_PIT_TOKEN_LEN {
                        return Err(e.bad_length(Element::PitToken));
                    }
                    h.pit_token = Some(e.value);
                }
                tt::LP_NACK => h.nack = Some(decode_nack(e)?),
                tt::LP_NEXT_HOP_FACE_ID => {
                    h.next_hop_face_id = Some(e.nni(Element::NextHopFaceId)?);
                }
                tt::LP_INCOMING_FACE_ID => {
                    h.incoming_face_id = Some(e.nni(Element::IncomingFaceId)?);
                }
                tt::LP_CACHE_POLICY => h.cache_policy = Some(decode_cache_policy(e)?),
                tt::LP_CONGESTION_MARK => {
                    h.congestion_mark = Some(e.nni(Element::CongestionMark)?);
                }
                tt::LP_TX_SEQUENCE => h.tx_sequence = Some(e.nni(Element::TxSequence)?),
                tt::LP_NON_DISCOVERY => {
                    e.expect_len(Element::NonDiscovery, 0)?;
                    h.non_discovery = true;
                }
                tt::LP_PREFIX_ANNOUNCEMENT => h.prefix_announcement = Some(e.value),
                tt::LP_HOP_COUNT_TAG => h.hop_count = Some(e.nni(Element::NonNegativeInteger)?),
                _ => {
                    e.nni(Element::Ack)?;
                    has_acks = true;
                }
            }
        }
        Ok((h, fragment, has_acks))
    }

    /// Whether flag `bit` is set.
    #[inline(always)]
    fn has(&self, bit: u8) -> bool {
        self.flags & bit != 0
    }

    /// The header fields (acks are read with [`LpPacket::acks`]), by value: the view keeps
    /// the usual ones and re-reads the others from the wire, only when there are any. The
    /// accessors below read one field without building the rest.
    #[inline]
    pub fn headers(&self) -> LpHeaders<'a> {
        let mut h = if self.has(OTHER) {
            self.reread_headers()
        } else {
            LpHeaders::default()
        };
        h.sequence = self.sequence();
        h.frag_index = self.has(FRAG_INDEX).then_some(self.frag_index);
        h.frag_count = self.has(FRAG_COUNT).then_some(self.frag_count);
        h.pit_token = self.pit_token();
        h.nack = self.nack;
        h.next_hop_face_id = self.next_hop_face_id();
        h
    }

    /// All the header fields, read again from the wire.
    #[cold]
    #[inline(never)]
    fn reread_headers(&self) -> LpHeaders<'a> {
        // The whole LpPacket was decoded already, so reading it again cannot fail.
        crate::tlv::read_one(self.wire)
            .and_then(|t| Self::fields(&t))
            .map(|(h, _, _)| h)
            .unwrap_or_default()
    }

    /// Sequence.
    #[inline]
    pub fn sequence(&self) -> Option<u64> {
        self.has(SEQUENCE).then_some(self.sequence)
    }

    /// FragIndex (0 when absent).
    #[inline]
    pub fn frag_index(&self) -> u64 {
        self.frag_index
    }

    /// FragCount (1 when absent).
    #[inline]
    pub fn frag_count(&self) -> u64 {
        self.frag_count
    }

    /// True when this LpPacket carries one piece of a fragmented packet.
    #[inline]
    pub fn is_fragment(&self) -> bool {
        self.frag_count > 1
    }

    /// PitToken.
    #[inline]
    pub fn pit_token(&self) -> Option<&'a [u8]> {
        (!self.pit_token.is_empty()).then(|| self.pit_token.of(self.wire))
    }

    /// Nack, when this LpPacket carries a Nack of the Interest in its Fragment.
    #[inline]
    pub fn nack(&self) -> Option<NackReason> {
        self.nack
    }

    /// NextHopFaceId (the same as `headers().next_hop_face_id`, without building the
    /// headers).
    #[inline]
    pub fn next_hop_face_id(&self) -> Option<u64> {
        self.has(NEXT_HOP).then_some(self.next_hop_face_id)
    }

    /// The Fragment's bytes (a whole network packet, or one piece of it); `None` for an IDLE
    /// packet.
    #[inline]
    pub fn fragment(&self) -> Option<&'a [u8]> {
        self.has(FRAGMENT).then(|| self.fragment.of(self.wire))
    }

    /// Offset of the Fragment's first byte in the outermost decoded buffer.
    #[inline]
    pub fn fragment_offset(&self) -> Option<usize> {
        self.has(FRAGMENT)
            .then(|| self.offset + self.fragment.start())
    }

    /// The Ack values, in order.
    pub fn acks(&self) -> impl Iterator<Item = u64> + 'a {
        // The whole LpPacket was decoded already, so reading it again cannot fail.
        let (value, base) = match crate::tlv::read_one(self.wire) {
            Ok(t) if self.has(ACKS) => (t.value, self.offset + t.value_offset()),
            _ => (&[][..], 0),
        };
        Reader::with_base(value, base)
            .map_while(|e| e.ok())
            .filter(|e| e.typ == tt::LP_ACK)
            .filter_map(|e| e.nni(Element::Ack).ok())
    }

    /// The network-layer packet in the Fragment, when the LpPacket is not fragmented.
    ///
    /// `Ok(None)` for IDLE packets and for pieces of a fragmented packet (feed those to a
    /// [`Reassembler`](crate::Reassembler)). A Nack must carry an Interest.
    ///
    /// The usual packets are read by the fast paths of [`Packet::decode`]; anything else (and
    /// every error) by the general decoder, from the start.
    // `#[inline]` for the reason given at `Packet::decode`.
    #[inline]
    pub fn network_packet(&self) -> Result<Option<Packet<'a>>> {
        if let Some(t) = self.fast_network_tlv() {
            let (value, wire, offset) = (t.value, t.wire, t.offset);
            match t.typ {
                tt::INTEREST => {
                    return fast::read_as(value, wire, offset, |i| Some(Packet::Interest(i)));
                }
                tt::DATA if self.nack.is_none() => {
                    return fast::read_as(value, wire, offset, |d| Some(Packet::Data(d)));
                }
                _ => {}
            }
        }
        self.network_packet_general()
    }

    /// The packet TLV (an Interest, Data or LpPacket) filling the Fragment of a whole (not
    /// fragmented) packet, when its header is in the forms of `fast::tlv` (`fast::packet`):
    /// [`network_packet`](Self::network_packet) hands it straight to its decoder (which tries
    /// its fast path first) when it is an Interest, or a Data outside a Nack. The general path
    /// would read the same TLV and hand it to the same decoder.
    #[inline(always)]
    pub(crate) fn fast_network_tlv(&self) -> Option<Tlv<'a>> {
        if !self.has(FRAGMENT) || self.is_fragment() {
            return None;
        }
        let value = self.wire.get(self.fragment.start()..self.fragment.end())?;
        fast::packet(value, self.offset + self.fragment.start(), false)
    }

    /// The general path of [`network_packet`](Self::network_packet): every packet, every
    /// error.
    #[inline(never)]
    pub(crate) fn network_packet_general(&self) -> Result<Option<Packet<'a>>> {
        if !self.has(FRAGMENT) {
            return Ok(None);
        }
        let (value, offset) = (
            self.fragment.of(self.wire),
            self.offset + self.fragment.start(),
        );
        if self.is_fragment() {
            return Ok(None);
        }
        let mut r = Reader::with_base(value, offset);
        let t = r.read()?;
        if !r.is_empty() {
            return Err(Error::new(
                ErrorKind::TrailingBytes(r.remaining().len()),
                r.offset(),
            ));
        }
        match t.typ {
            tt::INTEREST => {
                view::from_read_tlv::<crate::Interest<'_>>(t).map(|i| Some(Packet::Interest(i)))
            }
            tt::DATA if self.nack.is_none() => {
                view::from_read_tlv::<crate::Data<'_>>(t).map(|d| Some(Packet::Data(d)))
            }
            tt::DATA => Err(t.error(ErrorKind::Unexpected {
                expected: Element::Interest,
                found: tt::DATA,
            })),
            typ => Err(t.error(ErrorKind::NotAPacket(typ))),
        }
    }
}

impl fmt::Debug for LpPacket<'_> {
    /// The fields as the accessors return them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LpPacket")
            .field("wire", &self.wire)
            .field("offset", &self.offset)
            .field("headers", &self.headers())
            .field("has_acks", &self.has(ACKS))
            .field("fragment", &self.fragment().zip(self.fragment_offset()))
            .finish()
    }
}

fn decode_nack(e: Tlv<'_>) -> Result<NackReason> {
    let mut reason = NackReason::Unspecified;
    for f in e.children() {
        let f = f?;
        if f.typ == tt::LP_NACK_REASON {
            reason = NackReason::from_code(f.nni(Element::NackReason)?);
        } else if tt::is_critical(f.typ) {
            return Err(f.error(ErrorKind::UnknownCritical {
                typ: f.typ,
                context: Element::Nack,
            }));
        }
    }
    Ok(reason)
}

fn decode_cache_policy(e: Tlv<'_>) -> Result<CachePolicy> {
    let mut policy = None;
    for f in e.children() {
        let f = f?;
        if f.typ == tt::LP_CACHE_POLICY_TYPE {
            policy = Some(match f.nni(Element::CachePolicyType)? {
                1 => CachePolicy::NoCache,
                c => CachePolicy::Other(c),
            });
        } else if tt::is_critical(f.typ) {
            return Err(f.error(ErrorKind::UnknownCritical {
                typ: f.typ,
                context: Element::CachePolicy,
            }));
        }
    }
    policy.ok_or(e.error(ErrorKind::Missing(Element::CachePolicyType)))
}

/// NDNLPv2 header fields, borrowed: what a face puts in front of a network packet.
///
/// `Copy` and allocation-free, for the forwarding hot path: encode with
/// [`LpHeaders::encode`] straight into a TX buffer. Fields are written in increasing
/// TLV-TYPE order and the Fragment last, as NFD does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LpHeaders<'a> {
    /// Sequence (written as 8 fixed bytes, like NFD and NDNts).
    pub sequence: Option<u64>,
    /// FragIndex.
    pub frag_index: Option<u64>,
    /// FragCount.
    pub frag_count: Option<u64>,
    /// HopCountTag.
    pub hop_count: Option<u64>,
    /// PitToken (1..=32 bytes).
    pub pit_token: Option<&'a [u8]>,
    /// Nack (the Fragment must then be an Interest).
    pub nack: Option<NackReason>,
    /// NextHopFaceId.
    pub next_hop_face_id: Option<u64>,
    /// IncomingFaceId.
    pub incoming_face_id: Option<u64>,
    /// CachePolicy.
    pub cache_policy: Option<CachePolicy>,
    /// CongestionMark.
    pub congestion_mark: Option<u64>,
    /// Ack values.
    pub acks: &'a [u64],
    /// TxSequence (8 fixed bytes).
    pub tx_sequence: Option<u64>,
    /// NonDiscovery.
    pub non_discovery: bool,
    /// PrefixAnnouncement's value (a Data packet), opaque.
    pub prefix_announcement: Option<&'a [u8]>,
}

impl LpHeaders<'_> {
    /// True when no field is set: the packet can go bare, without an LpPacket.
    pub fn is_empty(&self) -> bool {
        *self == LpHeaders::default()
    }

    fn nack_len(&self) -> usize {
        self.nack.map_or(0, |r| {
            r.code().map_or(0, |c| nni_tlv_len(tt::LP_NACK_REASON, c))
        })
    }

    fn cache_policy_len(&self) -> usize {
        self.cache_policy
            .map_or(0, |p| nni_tlv_len(tt::LP_CACHE_POLICY_TYPE, p.code()))
    }

    /// Size of the header fields alone.
    pub fn fields_len(&self) -> usize {
        let mut n = 0;
        n += self.sequence.map_or(0, |_| tlv_len(tt::LP_SEQUENCE, 8));
        n += self
            .frag_index
            .map_or(0, |v| nni_tlv_len(tt::LP_FRAG_INDEX, v));
        n += self
            .frag_count
            .map_or(0, |v| nni_tlv_len(tt::LP_FRAG_COUNT, v));
        n += self
            .hop_count
            .map_or(0, |v| nni_tlv_len(tt::LP_HOP_COUNT_TAG, v));
        n += self
            .pit_token
            .map_or(0, |t| tlv_len(tt::LP_PIT_TOKEN, t.len()));
        n += self
            .nack
            .map_or(0, |_| tlv_len(tt::LP_NACK, self.nack_len()));
        n += self
            .next_hop_face_id
            .map_or(0, |v| nni_tlv_len(tt::LP_NEXT_HOP_FACE_ID, v));
        n += self
            .incoming_face_id
            .map_or(0, |v| nni_tlv_len(tt::LP_INCOMING_FACE_ID, v));
        n += self
            .cache_policy
            .map_or(0, |_| tlv_len(tt::LP_CACHE_POLICY, self.cache_policy_len()));
        n += self
            .congestion_mark
            .map_or(0, |v| nni_tlv_len(tt::LP_CONGESTION_MARK, v));
        n += self
            .acks
            .iter()
            .map(|&a| nni_tlv_len(tt::LP_ACK, a))
            .sum::<usize>();
        n += self
            .tx_sequence
            .map_or(0, |_| tlv_len(tt::LP_TX_SEQUENCE, 8));
        n += if self.non_discovery {
            tlv_len(tt::LP_NON_DISCOVERY, 0)
        } else {
            0
        };
        n += self
            .prefix_announcement
            .map_or(0, |p| tlv_len(tt::LP_PREFIX_ANNOUNCEMENT, p.len()));
        n
    }

    /// Size of the LpPacket carrying `fragment_len` bytes of Fragment (None: no Fragment).
    pub fn encoded_len(&self, fragment_len: Option<usize>) -> usize {
        let f = fragment_len.map_or(0, |l| tlv_len(tt::LP_FRAGMENT, l));
        tlv_len(tt::LP_PACKET, self.fields_len() + f)
    }

    /// Encodes an LpPacket with these headers and `fragment` (no allocation); returns the
    /// number of bytes written.
    pub fn encode(&self, fragment: Option<&[u8]>, out: &mut [u8]) -> Result<usize> {
        if let Some(t) = self.pit_token
            && (t.is_empty() || t.len() > MAX_PIT_TOKEN_LEN)
        {
            return Err(Error::new(
                ErrorKind::Unencodable("PitToken must be 1..=32 bytes"),
                0,
            ));
        }
        if self.frag_index.unwrap_or(0) >= self.frag_count.unwrap_or(1) {
            return Err(Error::new(
                ErrorKind::Unencodable("FragIndex must be below FragCount"),
                0,
            ));
        }
        let need = self.encoded_len(fragment.map(<[u8]>::len));
        let mut w = Writer::new(out, need)?;
        let f = fragment.map_or(0, |f| tlv_len(tt::LP_FRAGMENT, f.len()));
        w.header(tt::LP_PACKET, self.fields_len() + f)?;
        if let Some(s) = self.sequence {
            w.u64_tlv(tt::LP_SEQUENCE, s)?;
        }
        if let Some(v) = self.frag_index {
            w.nni_tlv(tt::LP_FRAG_INDEX, v)?;
        }
        if let Some(v) = self.frag_count {
            w.nni_tlv(tt::LP_FRAG_COUNT, v)?;
        }
        if let Some(v) = self.hop_count {
            w.nni_tlv(tt::LP_HOP_COUNT_TAG, v)?;
        }
        if let Some(t) = self.pit_token {
            w.tlv(tt::LP_PIT_TOKEN, t)?;
        }
        if let Some(r) = self.nack {
            w.header(tt::LP_NACK, self.nack_len())?;
            if let Some(c) = r.code() {
                w.nni_tlv(tt::LP_NACK_REASON, c)?;
            }
        }
        if let Some(v) = self.incoming_face_id {
            w.nni_tlv(tt::LP_INCOMING_FACE_ID, v)?;
        }
        if let Some(v) = self.next_hop_face_id {
            w.nni_tlv(tt::LP_NEXT_HOP_FACE_ID, v)?;
        }
        if let Some(p) = self.cache_policy {
            w.header(tt::LP_CACHE_POLICY, self.cache_policy_len())?;
            w.nni_tlv(tt::LP_CACHE_POLICY_TYPE, p.code())?;
        }
        if let Some(v) = self.congestion_mark {
            w.nni_tlv(tt::LP_CONGESTION_MARK, v)?;
        }
        for &a in self.acks {
            w.nni_tlv(tt::LP_ACK, a)?;
        }
        if let Some(s) = self.tx_sequence {
            w.u64_tlv(tt::LP_TX_SEQUENCE, s)?;
        }
        if self.non_discovery {
            w.header(tt::LP_NON_DISCOVERY, 0)?;
        }
        if let Some(p) = self.prefix_announcement {
            w.tlv(tt::LP_PREFIX_ANNOUNCEMENT, p)?;
        }
        if let Some(f) = fragment {
            w.tlv(tt::LP_FRAGMENT, f)?;
        }
        Ok(w.len())
    }
}
