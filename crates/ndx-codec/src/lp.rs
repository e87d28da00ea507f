//! NDNLPv2 LpPacket: a zero-copy view ([`LpPacket`]) and a header encoder ([`LpHeaders`]).

use core::fmt;

use crate::error::{Element, Error, ErrorKind, Result};
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
/// Beside its [`LpHeaders`], it keeps the whole TLV and the Fragment's `u32` position in it
/// (see the `view` module).
#[derive(Clone, Copy)]
pub struct LpPacket<'a> {
    headers: LpHeaders<'a>,
    wire: &'a [u8],
    offset: usize,
    /// The Fragment's TLV-VALUE, relative to `wire` (meaningful when `has_fragment`).
    fragment: Span,
    /// Whether a Fragment is present (an IDLE packet has none).
    has_fragment: bool,
    /// Whether an Ack field is present ([`LpPacket::acks`] re-reads them from `wire`).
    has_acks: bool,
}

impl<'a> LpPacket<'a> {
    /// Decodes an LpPacket TLV that fills `wire` exactly.
    pub fn decode(wire: &'a [u8]) -> Result<Self> {
        let t = crate::tlv::read_one(wire)?;
        Self::from_tlv(t)
    }

    /// Decodes an LpPacket from an already-framed TLV.
    ///
    /// Rules (NDNLPv2): header fields precede Fragment; known fields other than Ack appear at
    /// most once; an unknown field is skipped when ignorable (800..=959 with the low two bits
    /// 00) and rejected otherwise; FragIndex < FragCount; PitToken is 1..=32 bytes.
    #[inline]
    pub fn from_tlv(t: Tlv<'a>) -> Result<Self> {
        if t.typ != tt::LP_PACKET {
            return Err(t.error(ErrorKind::Unexpected {
                expected: Element::LpPacket,
                found: t.typ,
            }));
        }
        view::check_len(&t, Element::LpPacket)?;
        let mut lp = LpPacket {
            headers: LpHeaders::default(),
            wire: t.wire,
            offset: t.offset,
            fragment: Span::default(),
            has_fragment: false,
            has_acks: false,
        };
        let h = &mut lp.headers;
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
            if lp.has_fragment {
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
                tt::LP_FRAGMENT => {
                    lp.fragment = Span::within(t.wire, e.value);
                    lp.has_fragment = true;
                }
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
                    lp.has_acks = true;
                }
            }
        }
        let count = h.frag_count.unwrap_or(1);
        if count == 0 {
            return Err(t.error(ErrorKind::Invalid(Element::FragCount)));
        }
        if h.frag_index.unwrap_or(0) >= count {
            return Err(t.error(ErrorKind::Invalid(Element::FragIndex)));
        }
        Ok(lp)
    }

    /// The whole LpPacket TLV.
    #[inline]
    pub fn wire(&self) -> &'a [u8] {
        self.wire
    }

    /// Offset of the LpPacket in the outermost decoded buffer.
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The header fields (acks are read with [`LpPacket::acks`]).
    #[inline]
    pub fn headers(&self) -> &LpHeaders<'a> {
        &self.headers
    }

    /// Sequence.
    #[inline]
    pub fn sequence(&self) -> Option<u64> {
        self.headers.sequence
    }

    /// FragIndex (0 when absent).
    #[inline]
    pub fn frag_index(&self) -> u64 {
        self.headers.frag_index.unwrap_or(0)
    }

    /// FragCount (1 when absent).
    #[inline]
    pub fn frag_count(&self) -> u64 {
        self.headers.frag_count.unwrap_or(1)
    }

    /// True when this LpPacket carries one piece of a fragmented packet.
    #[inline]
    pub fn is_fragment(&self) -> bool {
        self.frag_count() > 1
    }

    /// PitToken.
    #[inline]
    pub fn pit_token(&self) -> Option<&'a [u8]> {
        self.headers.pit_token
    }

    /// Nack, when this LpPacket carries a Nack of the Interest in its Fragment.
    #[inline]
    pub fn nack(&self) -> Option<NackReason> {
        self.headers.nack
    }

    /// The Fragment's bytes (a whole network packet, or one piece of it); `None` for an IDLE
    /// packet.
    #[inline]
    pub fn fragment(&self) -> Option<&'a [u8]> {
        self.has_fragment.then(|| self.fragment.of(self.wire))
    }

    /// Offset of the Fragment's first byte in the outermost decoded buffer.
    #[inline]
    pub fn fragment_offset(&self) -> Option<usize> {
        self.has_fragment
            .then(|| self.offset + self.fragment.start())
    }

    /// The Ack values, in order.
    pub fn acks(&self) -> impl Iterator<Item = u64> + 'a {
        // The whole LpPacket was decoded already, so reading it again cannot fail.
        let (value, base) = match crate::tlv::read_one(self.wire) {
            Ok(t) if self.has_acks => (t.value, self.offset + t.value_offset()),
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
    pub fn network_packet(&self) -> Result<Option<Packet<'a>>> {
        if !self.has_fragment {
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
            tt::INTEREST => crate::Interest::from_tlv(t).map(|i| Some(Packet::Interest(i))),
            tt::DATA if self.headers.nack.is_none() => {
                crate::Data::from_tlv(t).map(|d| Some(Packet::Data(d)))
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
            .field("headers", &self.headers)
            .field("has_acks", &self.has_acks)
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
        if let Some(v) = self.next_hop_face_id {
            w.nni_tlv(tt::LP_NEXT_HOP_FACE_ID, v)?;
        }
        if let Some(v) = self.incoming_face_id {
            w.nni_tlv(tt::LP_INCOMING_FACE_ID, v)?;
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
