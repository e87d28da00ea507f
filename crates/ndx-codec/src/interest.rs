//! Interest packets: a zero-copy view ([`Interest`]) and an owned encoder ([`InterestRepr`]).

use core::fmt;

use sha2::{Digest, Sha256};

use crate::component::ComponentKind;
use crate::error::{Element, Error, ErrorKind, Result};
use crate::fast;
use crate::name::{Name, NameBuf};
use crate::order::Order;
use crate::tlv::{Reader, Tlv, Writer, nni_tlv_len, tlv_len};
use crate::types as tt;
use crate::view::{self, Span};

/// Default InterestLifetime when the element is absent (packet format v0.3).
pub const DEFAULT_LIFETIME_MS: u64 = 4000;

/// An Interest, borrowed from the frame it was decoded from.
///
/// Compact: the whole TLV plus `u32` positions of the fields in it (see the `view` module),
/// so that building, returning and copying one is cheap; accessors rebuild the slices.
#[derive(Clone, Copy)]
pub struct Interest<'a> {
    /// The whole Interest TLV; every position below is relative to it.
    wire: &'a [u8],
    /// Offset of the Interest TLV in the outermost decoded buffer.
    offset: usize,
    /// Length of the Name's TLV-VALUE (which starts at `name_start`).
    name_len: u32,
    /// Number of name components.
    name_count: u32,
    /// InterestLifetime (meaningful with `LIFETIME`).
    lifetime: u64,
    /// ForwardingHint's TLV-VALUE (never empty); empty when there is no ForwardingHint.
    forwarding_hint: Span,
    /// Nonce (meaningful with `NONCE`).
    nonce: u32,
    /// Position of the HopLimit value byte (meaningful with `HOP_LIMIT`).
    hop_limit: u32,
    /// Start of the ApplicationParameters TLV (meaningful with `APP_PARAMS`).
    params_start: u32,
    /// ApplicationParameters' value (meaningful with `APP_PARAMS`).
    app_params: Span,
    /// InterestSignatureInfo's value (meaningful with `SIGNATURE_INFO`).
    signature_info: Span,
    /// InterestSignatureValue's value (meaningful with `SIGNATURE_VALUE`).
    signature_value: Span,
    /// Start of the Name's TLV-VALUE: within the Interest and Name headers, at most 20 bytes.
    name_start: u8,
    /// Presence bits (`CAN_BE_PREFIX`…`LIFETIME`).
    flags: u8,
}

/// [`Interest::flags`] bits.
const CAN_BE_PREFIX: u8 = 1;
const MUST_BE_FRESH: u8 = 1 << 1;
const NONCE: u8 = 1 << 2;
const HOP_LIMIT: u8 = 1 << 3;
const APP_PARAMS: u8 = 1 << 4;
const SIGNATURE_INFO: u8 = 1 << 5;
const SIGNATURE_VALUE: u8 = 1 << 6;
const LIFETIME: u8 = 1 << 7;

view::entry_points!(Interest, tt::INTEREST, Element::Interest, "an Interest");

impl<'a> Interest<'a> {
    /// The fast path of [`from_tlv`](Self::from_tlv), for an Interest TLV checked by
    /// `view::check_len`: a non-empty Name (every component in the short form of
    /// [`fast::name_count`]), then optionally CanBePrefix, MustBeFresh, Nonce,
    /// InterestLifetime and HopLimit in this order, and nothing else. `None` for any other
    /// Interest, valid or not.
    #[inline(always)]
    pub(crate) fn from_tlv_fast(t: &Tlv<'a>) -> Option<Self> {
        let wire = t.wire;
        let (name, mut rest) = fast::element(t.value, tt::NAME as u8)?;
        // Not the empty name (the general decoder refuses it): a non-empty value has at least
        // one component when `name_count` accepts it, so the count needs no check.
        if name.is_empty() {
            return None;
        }
        let name_count = fast::name_count(name)?;
        let named = |flags, nonce, lifetime, hop_limit: usize| Interest {
            wire,
            offset: t.offset,
            name_len: name.len() as u32,
            name_count: name_count as u32,
            lifetime,
            forwarding_hint: Span::default(),
            nonce,
            hop_limit: hop_limit as u32,
            params_start: 0,
            app_params: Span::default(),
            signature_info: Span::default(),
            signature_value: Span::default(),
            name_start: view::pos(wire, name) as u8,
            flags,
        };
        if let Some((nonce, lifetime)) = Self::usual_ending(rest) {
            // HopLimit's value is the last byte.
            let flags = NONCE | LIFETIME | HOP_LIMIT;
            return Some(named(flags, nonce, lifetime, wire.len() - 1));
        }
        let mut flags = 0;
        if let [33, 0, ref tail @ ..] = *rest {
            flags |= CAN_BE_PREFIX;
            rest = tail;
        }
        if let [18, 0, ref tail @ ..] = *rest {
            flags |= MUST_BE_FRESH;
            rest = tail;
        }
        let mut nonce = 0;
        if let [10, 4, a, b, c, d, ref tail @ ..] = *rest {
            nonce = u32::from_be_bytes([a, b, c, d]);
            flags |= NONCE;
            rest = tail;
        }
        let mut lifetime = 0;
        if let Some((v, tail)) = fast::nni(rest, tt::INTEREST_LIFETIME as u8) {
            lifetime = v;
            flags |= LIFETIME;
            rest = tail;
        }
        let mut hop_limit = 0;
        if let [34, 1, _, ref tail @ ..] = *rest {
            hop_limit = wire.len() - rest.len() + 2;
            flags |= HOP_LIMIT;
            rest = tail;
        }
        if !rest.is_empty() {
            return None;
        }
        Some(named(flags, nonce, lifetime, hop_limit))
    }

    /// The usual ending of an Interest, `rest` after its Name: Nonce, a two-byte
    /// InterestLifetime and HopLimit, and nothing else (the fields the fast path reads one by
    /// one otherwise), with one test for its length and one for each TLV-TYPE and TLV-LENGTH
    /// pair. The Nonce and the InterestLifetime; `None` for any other ending.
    #[inline(always)]
    pub(crate) fn usual_ending(rest: &[u8]) -> Option<(u32, u64)> {
        let x = <&[u8; 13]>::try_from(rest).ok()?;
        if fast::pair(x, 0) != fast::pair(&[tt::NONCE as u8, 4], 0)
            || fast::pair(x, 6) != fast::pair(&[tt::INTEREST_LIFETIME as u8, 2], 0)
            || fast::pair(x, 10) != fast::pair(&[tt::HOP_LIMIT as u8, 1], 0)
        {
            return None;
        }
        let nonce = u32::from_be_bytes([x[2], x[3], x[4], x[5]]);
        Some((nonce, u64::from(u16::from_be_bytes([x[8], x[9]]))))
    }

    /// The general decoder: every element order, every encoding, every error.
    #[inline(never)]
    pub(crate) fn from_tlv_general(t: Tlv<'a>) -> Result<Self> {
        let (first, mut r) = view::named::<Self>(&t)?;
        let (name, digests) = Name::from_components_counting(first.value, first.value_offset())?;
        if name.is_empty() {
            // ndn-cxx and NFD refuse Interests for the empty name.
            return Err(first.error(ErrorKind::Invalid(Element::Name)));
        }
        // Positions relative to the Interest TLV.
        let within = |value: &[u8]| Span::within(t.wire, value);
        let mut i = Interest {
            wire: t.wire,
            offset: t.offset,
            name_len: first.value.len() as u32,
            name_count: name.len() as u32,
            lifetime: 0,
            forwarding_hint: Span::default(),
            nonce: 0,
            hop_limit: 0,
            params_start: 0,
            app_params: Span::default(),
            signature_info: Span::default(),
            signature_value: Span::default(),
            name_start: view::pos(t.wire, first.value) as u8,
            flags: 0,
        };
        let mut order = Order::new(Element::Interest);
        while !r.is_empty() {
            let e = r.read()?;
            // One dispatch on the TLV-TYPE: each arm first claims its rank in the element
            // order; an element that cannot (repeated or out of order) is unrecognised.
            match e.typ {
                tt::CAN_BE_PREFIX if order.advance(1) => {
                    e.expect_len(Element::CanBePrefix, 0)?;
                    i.flags |= CAN_BE_PREFIX;
                }
                tt::MUST_BE_FRESH if order.advance(2) => {
                    e.expect_len(Element::MustBeFresh, 0)?;
                    i.flags |= MUST_BE_FRESH;
                }
                tt::FORWARDING_HINT if order.advance(3) => {
                    ForwardingHint::validate(e)?;
                    i.forwarding_hint = within(e.value);
                }
                tt::NONCE if order.advance(4) => {
                    let n =
                        <[u8; 4]>::try_from(e.value).map_err(|_| e.bad_length(Element::Nonce))?;
                    i.nonce = u32::from_be_bytes(n);
                    i.flags |= NONCE;
                }
                tt::INTEREST_LIFETIME if order.advance(5) => {
                    i.lifetime = e.nni(Element::InterestLifetime)?;
                    i.flags |= LIFETIME;
                }
                tt::HOP_LIMIT if order.advance(6) => {
                    if e.value.len() != 1 {
                        return Err(e.bad_length(Element::HopLimit));
                    }
                    i.hop_limit = view::pos(t.wire, e.value) as u32;
                    i.flags |= HOP_LIMIT;
                }
                tt::APPLICATION_PARAMETERS if order.advance(7) => {
                    i.app_params = within(e.value);
                    i.params_start = view::pos(t.wire, e.wire) as u32;
                    i.flags |= APP_PARAMS;
                }
                tt::INTEREST_SIGNATURE_INFO if order.advance(8) => {
                    if i.flags & APP_PARAMS == 0 {
                        return Err(e.error(ErrorKind::Missing(Element::ApplicationParameters)));
                    }
                    i.signature_info = within(e.value);
                    i.flags |= SIGNATURE_INFO;
                }
                tt::INTEREST_SIGNATURE_VALUE if order.advance(9) => {
                    if i.flags & SIGNATURE_INFO == 0 {
                        return Err(e.error(ErrorKind::Missing(Element::InterestSignatureInfo)));
                    }
                    i.signature_value = within(e.value);
                    i.flags |= SIGNATURE_VALUE;
                }
                _ => order.unrecognised(&e)?,
            }
        }
        if i.flags & SIGNATURE_INFO != 0 && i.flags & SIGNATURE_VALUE == 0 {
            return Err(Error::new(
                ErrorKind::Missing(Element::InterestSignatureValue),
                t.offset,
            ));
        }
        if (i.flags & APP_PARAMS != 0 && digests != 1) || digests > 1 {
            return Err(Error::new(
                ErrorKind::Invalid(Element::ApplicationParameters),
                t.offset,
            ));
        }
        Ok(i)
    }

    /// Whether flag `bit` is set.
    #[inline(always)]
    fn has(&self, bit: u8) -> bool {
        self.flags & bit != 0
    }

    /// `span`'s bytes when flag `bit` is set.
    #[inline(always)]
    fn optional(&self, bit: u8, span: Span) -> Option<&'a [u8]> {
        self.has(bit).then(|| span.of(self.wire))
    }

    /// The Name.
    #[inline]
    pub fn name(&self) -> Name<'a> {
        let value = Span::new(usize::from(self.name_start), self.name_len as usize);
        Name::from_validated(value.of(self.wire), self.name_count as usize)
    }

    /// CanBePrefix.
    #[inline]
    pub fn can_be_prefix(&self) -> bool {
        self.has(CAN_BE_PREFIX)
    }

    /// MustBeFresh.
    #[inline]
    pub fn must_be_fresh(&self) -> bool {
        self.has(MUST_BE_FRESH)
    }

    /// ForwardingHint, if present.
    #[inline]
    pub fn forwarding_hint(&self) -> Option<ForwardingHint<'a>> {
        if self.forwarding_hint.is_empty() {
            return None;
        }
        let value = self.forwarding_hint.of(self.wire);
        let base = self.offset + self.forwarding_hint.start();
        // Validated on decode: every element is a delegation name.
        let len = Reader::with_base(value, base).count();
        Some(ForwardingHint { value, base, len })
    }

    /// Nonce as a big-endian number.
    #[inline]
    pub fn nonce(&self) -> Option<u32> {
        self.has(NONCE).then_some(self.nonce)
    }

    /// InterestLifetime in milliseconds, if present.
    #[inline]
    pub fn lifetime_ms(&self) -> Option<u64> {
        self.has(LIFETIME).then_some(self.lifetime)
    }

    /// InterestLifetime, or the spec's default of 4 s when absent.
    #[inline]
    pub fn effective_lifetime_ms(&self) -> u64 {
        self.lifetime_ms().unwrap_or(DEFAULT_LIFETIME_MS)
    }

    /// HopLimit, if present.
    #[inline]
    pub fn hop_limit(&self) -> Option<u8> {
        if !self.has(HOP_LIMIT) {
            return None;
        }
        self.wire.get(self.hop_limit as usize).copied()
    }

    /// Offset of the HopLimit value byte in the outermost buffer, so a forwarder can
    /// decrement it in place without re-encoding.
    #[inline]
    pub fn hop_limit_offset(&self) -> Option<usize> {
        self.has(HOP_LIMIT)
            .then(|| self.offset + self.hop_limit as usize)
    }

    /// ApplicationParameters' value, if present.
    #[inline]
    pub fn app_params(&self) -> Option<&'a [u8]> {
        self.optional(APP_PARAMS, self.app_params)
    }

    /// InterestSignatureInfo's value (opaque), if the Interest is signed.
    #[inline]
    pub fn signature_info(&self) -> Option<&'a [u8]> {
        self.optional(SIGNATURE_INFO, self.signature_info)
    }

    /// InterestSignatureValue's value (opaque), if the Interest is signed.
    #[inline]
    pub fn signature_value(&self) -> Option<&'a [u8]> {
        self.optional(SIGNATURE_VALUE, self.signature_value)
    }

    /// Whether the ParametersSha256DigestComponent equals SHA-256 of everything from
    /// ApplicationParameters to the end of the Interest. `true` when there are no parameters.
    pub fn params_digest_ok(&self) -> bool {
        if !self.has(APP_PARAMS) {
            return true;
        }
        let Some(covered) = self.wire.get(self.params_start as usize..) else {
            return false;
        };
        let digest = Sha256::digest(covered);
        self.name().components().any(|c| match c.kind() {
            ComponentKind::ParamsDigest(d) => d[..] == digest[..],
            _ => false,
        })
    }

    /// Where this Interest's Nonce goes, as a range of its TLV-VALUE: the Nonce element when
    /// there is one, else the empty range where packet format v0.3 orders it (after the Name,
    /// CanBePrefix, MustBeFresh, ForwardingHint and any element unknown to us among them,
    /// before InterestLifetime, HopLimit and the parameters). `None` only for a hand-made view
    /// whose wire does not parse.
    fn nonce_slot(&self) -> Option<(&'a [u8], core::ops::Range<usize>)> {
        let value = crate::tlv::read_one(self.wire).ok()?.value;
        let mut r = Reader::new(value);
        while !r.is_empty() {
            let at = r.offset();
            let e = r.read().ok()?;
            match e.typ {
                tt::NONCE if self.has(NONCE) => return Some((value, at..r.offset())),
                tt::INTEREST_LIFETIME
                | tt::HOP_LIMIT
                | tt::APPLICATION_PARAMETERS
                | tt::INTEREST_SIGNATURE_INFO
                | tt::INTEREST_SIGNATURE_VALUE => return Some((value, at..at)),
                _ => {}
            }
        }
        Some((value, value.len()..value.len()))
    }

    /// Length of the Interest TLV [`encode_with_nonce`](Self::encode_with_nonce) writes.
    pub fn with_nonce_len(&self) -> usize {
        match self.nonce_slot() {
            Some((value, slot)) => tlv_len(tt::INTEREST, value.len() - slot.len() + 6),
            None => 0,
        }
    }

    /// Writes this Interest with `nonce` as its Nonce at the start of `out` and returns the
    /// length written: every other element as received, in the same order; the Nonce
    /// replaced when there is one, else inserted where packet format v0.3 orders it; the
    /// outer TLV-LENGTH recomputed. A forwarder uses it for an Interest that arrived without
    /// a Nonce (which NFD adds and ndnd requires); the signature and the
    /// ParametersSha256DigestComponent do not cover the Nonce, so both stay valid.
    ///
    /// Fails with [`ErrorKind::BufferTooSmall`] when `out` is shorter than
    /// [`with_nonce_len`](Self::with_nonce_len). Never panics and never allocates.
    pub fn encode_with_nonce(&self, nonce: u32, out: &mut [u8]) -> Result<usize> {
        let Some((value, slot)) = self.nonce_slot() else {
            return Err(Error::new(
                ErrorKind::Invalid(Element::Interest),
                self.offset,
            ));
        };
        let (Some(before), Some(after)) = (value.get(..slot.start), value.get(slot.end..)) else {
            return Err(Error::new(
                ErrorKind::Invalid(Element::Interest),
                self.offset,
            ));
        };
        let value_len = before.len() + 6 + after.len();
        let mut w = Writer::new(out, tlv_len(tt::INTEREST, value_len))?;
        w.header(tt::INTEREST, value_len)?;
        w.bytes(before)?;
        w.tlv(tt::NONCE, &nonce.to_be_bytes())?;
        w.bytes(after)?;
        Ok(w.len())
    }

    /// An owned copy of the fields, for re-encoding.
    pub fn to_repr(&self) -> InterestRepr {
        InterestRepr {
            name: self.name().to_buf(),
            can_be_prefix: self.can_be_prefix(),
            must_be_fresh: self.must_be_fresh(),
            forwarding_hint: self
                .forwarding_hint()
                .map(|f| f.names().map(|n| n.to_buf()).collect())
                .unwrap_or_default(),
            nonce: self.nonce(),
            lifetime_ms: self.lifetime_ms(),
            hop_limit: self.hop_limit(),
            app_params: self.app_params().map(<[u8]>::to_vec),
            signature_info: self.signature_info().map(<[u8]>::to_vec),
            signature_value: self.signature_value().map(<[u8]>::to_vec),
        }
    }
}

impl fmt::Debug for Interest<'_> {
    /// The fields as the accessors return them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interest")
            .field("wire", &self.wire)
            .field("offset", &self.offset)
            .field("name", &self.name())
            .field("can_be_prefix", &self.can_be_prefix())
            .field("must_be_fresh", &self.must_be_fresh())
            .field("forwarding_hint", &self.forwarding_hint())
            .field("nonce", &self.nonce())
            .field("lifetime", &self.lifetime_ms())
            .field("hop_limit", &self.hop_limit())
            .field("hop_limit_offset", &self.hop_limit_offset())
            .field("app_params", &self.app_params())
            .field("signature_info", &self.signature_info())
            .field("signature_value", &self.signature_value())
            .finish()
    }
}

/// A ForwardingHint: one or more delegation names. The pre-2021 form (Delegation elements
/// with a Preference) is accepted too; its names are returned in wire order.
#[derive(Clone, Copy, Debug)]
pub struct ForwardingHint<'a> {
    value: &'a [u8],
    base: usize,
    len: usize,
}

impl<'a> ForwardingHint<'a> {
    /// Validates a ForwardingHint element: one or more delegation names.
    fn validate(t: Tlv<'a>) -> Result<()> {
        let mut len = 0;
        for e in t.children() {
            let e = e?;
            Self::name_of(e)?;
            len += 1;
        }
        if len == 0 {
            return Err(t.error(ErrorKind::Missing(Element::Name)));
        }
        Ok(())
    }

    fn name_of(e: Tlv<'a>) -> Result<Name<'a>> {
        match e.typ {
            tt::NAME => Name::from_tlv(e),
            tt::LEGACY_DELEGATION => {
                let mut r = e.children();
                let pref = r.read()?;
                if pref.typ != 30 {
                    return Err(pref.error(ErrorKind::Invalid(Element::ForwardingHint)));
                }
                pref.nni(Element::ForwardingHint)?;
                let n = r.read()?;
                if n.typ != tt::NAME || !r.is_empty() {
                    return Err(n.error(ErrorKind::Invalid(Element::ForwardingHint)));
                }
                Name::from_tlv(n)
            }
            typ => Err(e.error(ErrorKind::Unexpected {
                expected: Element::Name,
                found: typ,
            })),
        }
    }

    /// Number of delegation names.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a ForwardingHint holds at least one name.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The delegation names in wire order.
    pub fn names(self) -> impl Iterator<Item = Name<'a>> + 'a {
        Reader::with_base(self.value, self.base).filter_map(|e| Self::name_of(e.ok()?).ok())
    }
}

/// An owned Interest, to build and encode packets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InterestRepr {
    /// Name; must contain a ParametersSha256DigestComponent when `app_params` is set
    /// ([`InterestRepr::update_params_digest`] maintains it).
    pub name: NameBuf,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// ForwardingHint names (empty: no ForwardingHint).
    pub forwarding_hint: Vec<NameBuf>,
    /// Nonce.
    pub nonce: Option<u32>,
    /// InterestLifetime in milliseconds.
    pub lifetime_ms: Option<u64>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
    /// ApplicationParameters' value.
    pub app_params: Option<Vec<u8>>,
    /// InterestSignatureInfo's value (opaque).
    pub signature_info: Option<Vec<u8>>,
    /// InterestSignatureValue's value (opaque).
    pub signature_value: Option<Vec<u8>>,
}

impl InterestRepr {
    /// An Interest for `name` with no other fields.
    pub fn new(name: NameBuf) -> Self {
        Self {
            name,
            ..Self::default()
        }
    }

    fn params_part_len(&self) -> usize {
        let mut n = 0;
        if let Some(p) = &self.app_params {
            n += tlv_len(tt::APPLICATION_PARAMETERS, p.len());
        }
        if let Some(s) = &self.signature_info {
            n += tlv_len(tt::INTEREST_SIGNATURE_INFO, s.len());
        }
        if let Some(s) = &self.signature_value {
            n += tlv_len(tt::INTEREST_SIGNATURE_VALUE, s.len());
        }
        n
    }

    fn fh_value_len(&self) -> usize {
        self.forwarding_hint
            .iter()
            .map(|n| n.as_name().encoded_len())
            .sum()
    }

    fn value_len(&self) -> usize {
        let mut n = self.name.as_name().encoded_len();
        n += 2 * usize::from(self.can_be_prefix) + 2 * usize::from(self.must_be_fresh);
        if !self.forwarding_hint.is_empty() {
            n += tlv_len(tt::FORWARDING_HINT, self.fh_value_len());
        }
        n += self.nonce.map_or(0, |_| 6);
        n += self
            .lifetime_ms
            .map_or(0, |l| nni_tlv_len(tt::INTEREST_LIFETIME, l));
        n += self.hop_limit.map_or(0, |_| 3);
        n + self.params_part_len()
    }

    /// Size of the encoded Interest TLV.
    pub fn encoded_len(&self) -> usize {
        tlv_len(tt::INTEREST, self.value_len())
    }

    /// Encodes into `out` (no allocation); returns the number of bytes written.
    ///
    /// Refuses combinations that would not decode: signature fields without
    /// ApplicationParameters, or parameters without exactly one ParametersSha256DigestComponent.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize> {
        let unencodable = |why| Err(Error::new(ErrorKind::Unencodable(why), 0));
        if self.name.is_empty() {
            return unencodable("an Interest needs a non-empty Name");
        }
        if self.app_params.is_none() && self.signature_info.is_some() {
            return unencodable("InterestSignatureInfo needs ApplicationParameters");
        }
        if self.signature_info.is_some() != self.signature_value.is_some() {
            return unencodable("InterestSignatureInfo and InterestSignatureValue go together");
        }
        let digests = self
            .name
            .as_name()
            .components()
            .filter(|c| matches!(c.kind(), ComponentKind::ParamsDigest(_)))
            .count();
        if digests > 1 || (self.app_params.is_some() && digests != 1) {
            return unencodable("ApplicationParameters need one ParametersSha256DigestComponent");
        }
        let need = self.encoded_len();
        let mut w = Writer::new(out, need)?;
        w.header(tt::INTEREST, self.value_len())?;
        self.name.as_name().encode(&mut w)?;
        if self.can_be_prefix {
            w.header(tt::CAN_BE_PREFIX, 0)?;
        }
        if self.must_be_fresh {
            w.header(tt::MUST_BE_FRESH, 0)?;
        }
        if !self.forwarding_hint.is_empty() {
            w.header(tt::FORWARDING_HINT, self.fh_value_len())?;
            for n in &self.forwarding_hint {
                n.as_name().encode(&mut w)?;
            }
        }
        if let Some(n) = self.nonce {
            w.tlv(tt::NONCE, &n.to_be_bytes())?;
        }
        if let Some(l) = self.lifetime_ms {
            w.nni_tlv(tt::INTEREST_LIFETIME, l)?;
        }
        if let Some(h) = self.hop_limit {
            w.tlv(tt::HOP_LIMIT, &[h])?;
        }
        self.encode_params_part(&mut w)?;
        Ok(w.len())
    }

    fn encode_params_part(&self, w: &mut Writer<'_>) -> Result<()> {
        if let Some(p) = &self.app_params {
            w.tlv(tt::APPLICATION_PARAMETERS, p)?;
        }
        if let Some(s) = &self.signature_info {
            w.tlv(tt::INTEREST_SIGNATURE_INFO, s)?;
        }
        if let Some(s) = &self.signature_value {
            w.tlv(tt::INTEREST_SIGNATURE_VALUE, s)?;
        }
        Ok(())
    }

    /// Encodes into a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut out = vec![0; self.encoded_len()];
        let n = self.encode(&mut out)?;
        out.truncate(n);
        Ok(out)
    }

    /// Sets ApplicationParameters and recomputes the ParametersSha256DigestComponent.
    pub fn set_app_params(&mut self, params: Vec<u8>) {
        self.app_params = Some(params);
        self.update_params_digest();
    }

    /// Recomputes the ParametersSha256DigestComponent over ApplicationParameters and the
    /// signature fields, replacing the existing one or appending one; removes it when there
    /// are no parameters.
    pub fn update_params_digest(&mut self) {
        let mut rebuilt = NameBuf::new();
        let mut replaced_at = None;
        for (i, c) in self.name.as_name().components().enumerate() {
            if matches!(c.kind(), ComponentKind::ParamsDigest(_)) {
                replaced_at.get_or_insert(i);
            } else {
                rebuilt.push_component(c);
            }
        }
        if self.app_params.is_some() {
            let mut part = vec![0; self.params_part_len()];
            let need = part.len();
            let mut w = Writer::new(&mut part, need).expect("sized above");
            self.encode_params_part(&mut w).expect("sized above");
            let digest: [u8; 32] = Sha256::digest(&part).into();
            // Keep the digest where it was; append it when there was none.
            let at = replaced_at.unwrap_or(rebuilt.len());
            let mut with = NameBuf::new();
            for (i, c) in rebuilt.as_name().components().enumerate() {
                if i == at {
                    with.push(tt::PARAMETERS_SHA256_DIGEST_COMPONENT as u16, &digest)
                        .expect("32-byte digest");
                }
                with.push_component(c);
            }
            if at >= rebuilt.len() {
                with.push(tt::PARAMETERS_SHA256_DIGEST_COMPONENT as u16, &digest)
                    .expect("32-byte digest");
            }
            rebuilt = with;
        }
        self.name = rebuilt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(uri: &str) -> InterestRepr {
        InterestRepr::new(uri.parse().unwrap())
    }

    /// `wire` with `nonce` set by `encode_with_nonce`, decoded; checks the length promised.
    fn with_nonce(wire: &[u8], nonce: u32) -> Vec<u8> {
        let i = Interest::decode(wire).unwrap();
        let mut out = vec![0u8; i.with_nonce_len()];
        let n = i.encode_with_nonce(nonce, &mut out).unwrap();
        assert_eq!(n, out.len());
        out
    }

    #[test]
    fn a_nonce_is_inserted_where_v03_orders_it_and_nothing_else_changes() {
        let mut shapes = Vec::new();
        shapes.push(repr("/a"));
        let mut r = repr("/a/b");
        r.can_be_prefix = true;
        r.must_be_fresh = true;
        shapes.push(r.clone());
        r.lifetime_ms = Some(1500);
        r.hop_limit = Some(9);
        shapes.push(r.clone());
        r.forwarding_hint = vec!["/hint/one".parse().unwrap(), "/h2".parse().unwrap()];
        shapes.push(r.clone());
        r.set_app_params(vec![7; 40]);
        shapes.push(r.clone());
        r.signature_info = Some(vec![0x1b, 0x01, 0x00]);
        r.signature_value = Some(vec![0xAA; 32]);
        r.update_params_digest();
        shapes.push(r.clone());
        // A value just below 253 bytes: the Nonce makes the outer TLV-LENGTH 3 bytes long.
        let mut long = repr("/l");
        long.name.push_generic(&[b'x'; 240]);
        long.hop_limit = Some(3);
        assert!(long.encoded_len() < 255 && long.encoded_len() + 6 > 255);
        shapes.push(long);
        for (k, r) in shapes.iter().enumerate() {
            assert_eq!(r.nonce, None);
            let wire = r.to_vec().unwrap();
            let got = with_nonce(&wire, 0xDEAD_BEEF);
            let i = Interest::decode(&got).unwrap();
            assert_eq!(i.nonce(), Some(0xDEAD_BEEF), "shape {k}");
            let mut want = r.clone();
            want.nonce = Some(0xDEAD_BEEF);
            assert_eq!(
                got,
                want.to_vec().unwrap(),
                "shape {k}: as the encoder writes it"
            );
            assert!(i.params_digest_ok(), "shape {k}");
            if let Some(off) = i.hop_limit_offset() {
                assert_eq!(got[off], r.hop_limit.unwrap());
            }
        }
    }

    #[test]
    fn an_existing_nonce_is_replaced_in_place() {
        let mut r = repr("/a/b");
        r.nonce = Some(1);
        r.lifetime_ms = Some(100);
        let wire = r.to_vec().unwrap();
        let got = with_nonce(&wire, 2);
        assert_eq!(got.len(), wire.len());
        r.nonce = Some(2);
        assert_eq!(got, r.to_vec().unwrap());
    }

    #[test]
    fn unknown_non_critical_elements_stay_where_they_were() {
        // Name, an unknown non-critical element (type 200), InterestLifetime.
        let mut value = Vec::new();
        value.extend_from_slice(&[7, 3, 8, 1, b'a']);
        value.extend_from_slice(&[200, 2, 0xAB, 0xCD]);
        value.extend_from_slice(&[12, 1, 50]);
        let mut wire = vec![5, value.len() as u8];
        wire.extend_from_slice(&value);
        assert_eq!(Interest::decode(&wire).unwrap().nonce(), None);
        let got = with_nonce(&wire, 0x0102_0304);
        let mut want = vec![5, value.len() as u8 + 6];
        want.extend_from_slice(&value[..9]);
        want.extend_from_slice(&[10, 4, 1, 2, 3, 4]);
        want.extend_from_slice(&value[9..]);
        assert_eq!(got, want);
        assert_eq!(Interest::decode(&got).unwrap().lifetime_ms(), Some(50));
    }

    #[test]
    fn a_short_buffer_is_refused() {
        let wire = repr("/a").to_vec().unwrap();
        let i = Interest::decode(&wire).unwrap();
        assert_eq!(i.with_nonce_len(), wire.len() + 6);
        let mut out = vec![0u8; wire.len() + 5];
        let e = i.encode_with_nonce(1, &mut out).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::BufferTooSmall { .. }), "{e:?}");
    }
}
