//! Data packets: a zero-copy view ([`Data`]) and an owned encoder ([`DataRepr`]).

use core::fmt;

use sha2::{Digest, Sha256};

use crate::component::{Component, ComponentBuf, ComponentKind, DIGEST_LEN};
use crate::error::{Element, Error, ErrorKind, Result};
use crate::fast;
use crate::name::{Name, NameBuf};
use crate::order::Order;
use crate::tlv::{Reader, Tlv, Writer, nni_tlv_len, read_nni, tlv_len, varnum_len};
use crate::types as tt;
use crate::view::{self, Span};

/// SignatureType values (NDN packet format v0.3, "Signature").
pub mod signature_type {
    /// DigestSha256: SHA-256 of the signed portion, no key.
    pub const DIGEST_SHA256: u64 = 0;
    /// SignatureSha256WithRsa.
    pub const SHA256_WITH_RSA: u64 = 1;
    /// SignatureSha256WithEcdsa.
    pub const SHA256_WITH_ECDSA: u64 = 3;
    /// SignatureHmacWithSha256.
    pub const HMAC_WITH_SHA256: u64 = 4;
    /// SignatureEd25519.
    pub const ED25519: u64 = 5;
}

/// ContentType values.
pub mod content_type {
    /// BLOB: the payload (default when absent).
    pub const BLOB: u64 = 0;
    /// LINK.
    pub const LINK: u64 = 1;
    /// KEY.
    pub const KEY: u64 = 2;
    /// NACK (application-level).
    pub const NACK: u64 = 3;
    /// PREFIX_ANN.
    pub const PREFIX_ANN: u64 = 5;
}

/// A Data packet, borrowed from the frame it was decoded from.
///
/// Compact: the whole TLV plus `u32` positions of the fields in it (see the `view` module),
/// so that building, returning and copying one is cheap; accessors rebuild the slices. The
/// rarer ContentType and FinalBlockId are found again in MetaInfo when asked for, and
/// SignatureType at the start of SignatureInfo.
#[derive(Clone, Copy)]
pub struct Data<'a> {
    /// The whole Data TLV; every position below is relative to it.
    wire: &'a [u8],
    /// Offset of the Data TLV in the outermost decoded buffer.
    offset: usize,
    /// FreshnessPeriod (meaningful with `FRESHNESS`).
    freshness: u64,
    /// Length of the Name's TLV-VALUE (which starts at `name_start`).
    name_len: u32,
    /// Number of name components.
    name_count: u32,
    /// MetaInfo's value (empty when absent): the rarer ContentType and FinalBlockId are
    /// read from it again when asked for, rather than located on every decode.
    meta_info: Span,
    /// Content's value (meaningful with `CONTENT`).
    content: Span,
    /// SignatureInfo's value, which starts with the SignatureType element; the signed
    /// portion ends where it does.
    signature_info: Span,
    /// SignatureValue's value.
    signature_value: Span,
    /// Start of the Name's TLV-VALUE: within the Data and Name headers, at most 20 bytes.
    /// The Name TLV, where the signed portion starts, is just before (its header is minimal).
    name_start: u8,
    /// Presence bits (`CONTENT`, `FRESHNESS`).
    flags: u8,
}

/// [`Data::flags`] bits.
const CONTENT: u8 = 1;
const FRESHNESS: u8 = 1 << 1;

view::entry_points!(Data, tt::DATA, Element::Data, "a Data");

impl<'a> Data<'a> {
    /// The fast path of [`from_tlv`](Self::from_tlv), for a Data TLV checked by
    /// `view::check_len`: Name (every component in the short form of [`fast::name_count`]),
    /// optional MetaInfo (see `meta_info_fast`), optional Content, SignatureInfo (SignatureType
    /// first), SignatureValue, and nothing else, each element with a one-byte TLV-TYPE and a
    /// minimal one- or three-byte TLV-LENGTH. `None` for any other Data, valid or not.
    #[inline(always)]
    pub(crate) fn from_tlv_fast(t: &Tlv<'a>) -> Option<Self> {
        let wire = t.wire;
        let at = |inner: &[u8]| Span::within(wire, inner);
        let (name, mut rest) = fast::element(t.value, tt::NAME as u8)?;
        let name_count = fast::name_count(name)?;
        let mut d = Data::named(t, name, name_count);
        if let Some(d) = d.usual(rest) {
            return Some(d);
        }
        if let Some((meta, tail)) = fast::element(rest, tt::META_INFO as u8) {
            d.meta_info_fast(meta)?;
            d.meta_info = at(meta);
            rest = tail;
        }
        if let Some((content, tail)) = fast::element(rest, tt::CONTENT as u8) {
            d.content = at(content);
            d.flags |= CONTENT;
            rest = tail;
        }
        // SignatureInfo: SignatureType, then any elements in the short forms.
        let (info, rest) = fast::element(rest, tt::SIGNATURE_INFO as u8)?;
        let [27, l, ref tail @ ..] = *info else {
            return None;
        };
        let (sig_type, mut others) = tail.split_at_checked(usize::from(l))?;
        if !fast::nni_len_ok(sig_type.len()) {
            return None;
        }
        while !others.is_empty() {
            others = fast::skip(others)?;
        }
        d.signature_info = at(info);
        d.signature_value = at(fast::last(rest, tt::SIGNATURE_VALUE as u8)?);
        Some(d)
    }

    /// The fast path for the usual Data, `self` with its Name, the rest of its TLV-VALUE
    /// being `rest`: MetaInfo holding a two-byte FreshnessPeriod alone, Content, SignatureInfo
    /// holding a one-byte SignatureType alone, SignatureValue, and nothing else. One test for
    /// each of MetaInfo and SignatureInfo, and no state kept across optional elements. `None`
    /// for any other Data, valid or not (the rest of the fast path then reads it).
    #[inline(always)]
    pub(crate) fn usual(mut self, rest: &'a [u8]) -> Option<Self> {
        let (meta, rest) = rest.split_first_chunk::<6>()?;
        let (content, rest) = fast::element(rest, tt::CONTENT as u8)?;
        let (info, rest) = rest.split_first_chunk::<5>()?;
        let value = fast::last(rest, tt::SIGNATURE_VALUE as u8)?;
        let (m, f) = (tt::META_INFO as u8, tt::FRESHNESS_PERIOD as u8);
        let (i, s) = (tt::SIGNATURE_INFO as u8, tt::SIGNATURE_TYPE as u8);
        if fast::quad(meta, 0) != fast::quad(&[m, 4, f, 2], 0)
            || fast::quad(info, 0) != fast::quad(&[i, 3, s, 1], 0)
        {
            return None;
        }
        let at = |inner: &[u8]| Span::within(self.wire, inner);
        self.freshness = u64::from(u16::from_be_bytes([meta[4], meta[5]]));
        self.meta_info = at(&meta[2..]);
        self.content = at(content);
        self.signature_info = at(&info[2..]);
        self.signature_value = at(value);
        self.flags = FRESHNESS | CONTENT;
        Some(self)
    }

    /// The fast path's MetaInfo `meta`: optionally ContentType, FreshnessPeriod and
    /// FinalBlockId (one short-form, non-digest component) in this order, and nothing else.
    #[inline(always)]
    fn meta_info_fast(&mut self, meta: &[u8]) -> Option<()> {
        // The usual MetaInfo, a two-byte FreshnessPeriod alone: one length test.
        if let [25, 2, a, b] = *meta {
            self.freshness = u64::from(u16::from_be_bytes([a, b]));
            self.flags |= FRESHNESS;
            return Some(());
        }
        let mut rest = meta;
        if let [24, l, ref tail @ ..] = *rest {
            let (value, after) = tail.split_at_checked(usize::from(l))?;
            if !fast::nni_len_ok(value.len()) {
                return None;
            }
            rest = after;
        }
        if let Some((v, after)) = fast::nni(rest, tt::FRESHNESS_PERIOD as u8) {
            self.freshness = v;
            self.flags |= FRESHNESS;
            rest = after;
        }
        if let [26, len @ 0..=252, 3..=252, l @ 0..=252, ref tail @ ..] = *rest {
            if usize::from(len) != usize::from(l) + 2 {
                return None;
            }
            rest = tail.get(usize::from(l)..)?;
        }
        rest.is_empty().then_some(())
    }

    /// The general decoder: every element order, every encoding, every error.
    #[inline(never)]
    pub(crate) fn from_tlv_general(t: Tlv<'a>) -> Result<Self> {
        let (first, mut r) = view::named::<Self>(&t)?;
        let name = Name::from_tlv(first)?;
        let mut d = Data::named(&t, first.value, name.len());
        let mut have_sig_info = false;
        let mut have_sig_value = false;
        let mut order = Order::new(Element::Data);
        while !r.is_empty() {
            let e = r.read()?;
            // One dispatch on the TLV-TYPE: each arm first claims its rank in the element
            // order; an element that cannot (repeated or out of order) is unrecognised.
            match e.typ {
                tt::META_INFO if order.advance(1) => {
                    d.decode_meta_info(e)?;
                    d.meta_info = Span::within(t.wire, e.value);
                }
                tt::CONTENT if order.advance(2) => {
                    d.content = Span::within(t.wire, e.value);
                    d.flags |= CONTENT;
                }
                tt::SIGNATURE_INFO if order.advance(3) => {
                    check_signature_info(e)?;
                    d.signature_info = Span::within(t.wire, e.value);
                    have_sig_info = true;
                }
                tt::SIGNATURE_VALUE if order.advance(4) => {
                    if !have_sig_info {
                        return Err(e.error(ErrorKind::Missing(Element::SignatureInfo)));
                    }
                    d.signature_value = Span::within(t.wire, e.value);
                    have_sig_value = true;
                }
                _ => order.unrecognised(&e)?,
            }
        }
        if !have_sig_info {
            return Err(Error::new(
                ErrorKind::Missing(Element::SignatureInfo),
                t.offset,
            ));
        }
        if !have_sig_value {
            return Err(Error::new(
                ErrorKind::Missing(Element::SignatureValue),
                t.offset,
            ));
        }
        Ok(d)
    }

    /// A Data view of `t` with its Name (`name`, the Name's TLV-VALUE, of `count` components)
    /// and no other field yet.
    #[inline(always)]
    pub(crate) fn named(t: &Tlv<'a>, name: &[u8], count: usize) -> Self {
        Data {
            wire: t.wire,
            offset: t.offset,
            freshness: 0,
            name_len: name.len() as u32,
            name_count: count as u32,
            meta_info: Span::default(),
            content: Span::default(),
            signature_info: Span::default(),
            signature_value: Span::default(),
            name_start: view::pos(t.wire, name) as u8,
            flags: 0,
        }
    }

    /// Checks MetaInfo `m` and decodes its FreshnessPeriod.
    #[inline(always)]
    fn decode_meta_info(&mut self, m: Tlv<'a>) -> Result<()> {
        let mut order = Order::new(Element::MetaInfo);
        for e in m.children() {
            let e = e?;
            match e.typ {
                tt::CONTENT_TYPE if order.advance(1) => {
                    e.nni(Element::ContentType)?;
                }
                tt::FRESHNESS_PERIOD if order.advance(2) => {
                    self.freshness = e.nni(Element::FreshnessPeriod)?;
                    self.flags |= FRESHNESS;
                }
                tt::FINAL_BLOCK_ID if order.advance(3) => {
                    let mut r = e.children();
                    let c = r
                        .read()
                        .map_err(|_| e.error(ErrorKind::Invalid(Element::FinalBlockId)))?;
                    if !r.is_empty() {
                        return Err(e.error(ErrorKind::Invalid(Element::FinalBlockId)));
                    }
                    Component::from_tlv(c)?;
                }
                _ => order.unrecognised(&e)?,
            }
        }
        Ok(())
    }

    /// The Name.
    #[inline]
    pub fn name(&self) -> Name<'a> {
        let value = Span::new(usize::from(self.name_start), self.name_len as usize);
        Name::from_validated(value.of(self.wire), self.name_count as usize)
    }

    /// The value of the MetaInfo element of TLV-TYPE `typ`, if there is one (read again from
    /// MetaInfo, which was validated on decode: a known element appears at most once).
    fn meta_info_element(&self, typ: u64) -> Option<&'a [u8]> {
        if self.meta_info.is_empty() {
            return None;
        }
        Reader::new(self.meta_info.of(self.wire))
            .map_while(|e| e.ok())
            .find(|e| e.typ == typ)
            .map(|e| e.value)
    }

    /// ContentType, if present (absent means BLOB). Read from MetaInfo on each call.
    pub fn content_type(&self) -> Option<u64> {
        read_nni(self.meta_info_element(tt::CONTENT_TYPE)?)
    }

    /// FreshnessPeriod in milliseconds, if present (absent means 0: never fresh).
    #[inline]
    pub fn freshness_ms(&self) -> Option<u64> {
        (self.flags & FRESHNESS != 0).then_some(self.freshness)
    }

    /// FinalBlockId, if present. Read from MetaInfo on each call.
    pub fn final_block_id(&self) -> Option<Component<'a>> {
        // One component, validated on decode.
        Name::from_validated(self.meta_info_element(tt::FINAL_BLOCK_ID)?, 1)
            .components()
            .next()
    }

    /// Content's value; empty when Content is absent.
    #[inline]
    pub fn content(&self) -> &'a [u8] {
        self.content.of(self.wire)
    }

    /// Whether a Content element is present (possibly empty).
    #[inline]
    pub fn has_content(&self) -> bool {
        self.flags & CONTENT != 0
    }

    /// SignatureType (read from the start of SignatureInfo).
    #[inline]
    pub fn signature_type(&self) -> u64 {
        // SignatureInfo starts with SignatureType (checked on decode), whose TLV-TYPE and
        // TLV-LENGTH take one byte each: VAR-NUMBERs are minimal, and the value has 1, 2, 4 or
        // 8 bytes.
        match *self.signature_info() {
            [_, l, ref value @ ..] => value.get(..usize::from(l)).and_then(read_nni),
            _ => None,
        }
        .unwrap_or(0)
    }

    /// SignatureInfo's value (opaque past SignatureType).
    #[inline]
    pub fn signature_info(&self) -> &'a [u8] {
        self.signature_info.of(self.wire)
    }

    /// SignatureValue's value.
    #[inline]
    pub fn signature_value(&self) -> &'a [u8] {
        self.signature_value.of(self.wire)
    }

    /// The signed portion: from Name through SignatureInfo.
    #[inline]
    pub fn signed_portion(&self) -> &'a [u8] {
        // The Name TLV's header (TLV-TYPE 7, then the TLV-LENGTH) is minimal.
        let header = 1 + varnum_len(u64::from(self.name_len));
        let start = usize::from(self.name_start).saturating_sub(header);
        self.wire
            .get(start..self.signature_info.end())
            .unwrap_or(&[])
    }

    /// For DigestSha256 Data: whether SignatureValue is the SHA-256 of the signed portion.
    pub fn digest_signature_ok(&self) -> bool {
        self.signature_type() == signature_type::DIGEST_SHA256
            && Sha256::digest(self.signed_portion())[..] == *self.signature_value()
    }

    /// The implicit SHA-256 digest: SHA-256 of the whole Data TLV.
    pub fn implicit_digest(&self) -> [u8; DIGEST_LEN] {
        Sha256::digest(self.wire).into()
    }

    /// The full name: the Name plus its ImplicitSha256DigestComponent.
    pub fn full_name(&self) -> NameBuf {
        let mut n = self.name().to_buf();
        n.push(
            tt::IMPLICIT_SHA256_DIGEST_COMPONENT as u16,
            &self.implicit_digest(),
        )
        .expect("32-byte digest");
        n
    }

    /// Whether this Data satisfies an Interest named `interest_name` by name alone (the
    /// forwarding core applies MustBeFresh): equal names; a proper prefix when CanBePrefix;
    /// or, when the Interest's last component is an implicit digest, equal full names.
    /// The digest is computed only in that last case.
    pub fn matches_name(&self, interest_name: &Name<'_>, can_be_prefix: bool) -> bool {
        let name = self.name();
        if name == *interest_name || (can_be_prefix && interest_name.is_prefix_of(&name)) {
            return true;
        }
        if interest_name.len() != name.len() + 1 {
            return false;
        }
        match interest_name.last().map(|c| c.kind()) {
            Some(ComponentKind::ImplicitDigest(d)) => {
                interest_name.prefix(name.len()) == name && *d == self.implicit_digest()
            }
            _ => false,
        }
    }

    /// An owned copy of the fields, with the signature kept as raw bytes.
    pub fn to_repr(&self) -> DataRepr {
        DataRepr {
            name: self.name().to_buf(),
            content_type: self.content_type(),
            freshness_ms: self.freshness_ms(),
            final_block_id: self.final_block_id().map(ComponentBuf::from),
            content: self.has_content().then(|| self.content().to_vec()),
            signature: Signature::Raw {
                info: self.signature_info().to_vec(),
                value: self.signature_value().to_vec(),
            },
        }
    }
}

impl fmt::Debug for Data<'_> {
    /// The fields as the accessors return them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Data")
            .field("wire", &self.wire)
            .field("offset", &self.offset)
            .field("name", &self.name())
            .field("content_type", &self.content_type())
            .field("freshness", &self.freshness_ms())
            .field("final_block_id", &self.final_block_id())
            .field("content", &self.has_content().then(|| self.content()))
            .field("signature_type", &self.signature_type())
            .field("signature_info", &self.signature_info())
            .field("signature_value", &self.signature_value())
            .finish()
    }
}

/// Checks SignatureInfo `info`: a SignatureType element (a valid NonNegativeInteger) first,
/// then well-formed elements.
fn check_signature_info(info: Tlv<'_>) -> Result<()> {
    let (t, r) = info.first_child(tt::SIGNATURE_TYPE, Element::SignatureType)?;
    t.nni(Element::SignatureType)?;
    for e in r {
        e?;
    }
    Ok(())
}

/// How an encoded Data is signed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signature {
    /// DigestSha256, computed while encoding.
    DigestSha256,
    /// SignatureInfo and SignatureValue values supplied by the caller (the info must start
    /// with a SignatureType element).
    Raw {
        /// SignatureInfo's value.
        info: Vec<u8>,
        /// SignatureValue's value.
        value: Vec<u8>,
    },
}

/// An owned Data, to build and encode packets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataRepr {
    /// Name.
    pub name: NameBuf,
    /// ContentType (None: element absent).
    pub content_type: Option<u64>,
    /// FreshnessPeriod in milliseconds (None: element absent).
    pub freshness_ms: Option<u64>,
    /// FinalBlockId.
    pub final_block_id: Option<ComponentBuf>,
    /// Content's value (None: element absent).
    pub content: Option<Vec<u8>>,
    /// Signature.
    pub signature: Signature,
}

const DIGEST_SIG_INFO: [u8; 3] = [
    tt::SIGNATURE_TYPE as u8,
    1,
    signature_type::DIGEST_SHA256 as u8,
];

impl DataRepr {
    /// A DigestSha256-signed Data with `content`.
    pub fn new(name: NameBuf, content: Vec<u8>) -> Self {
        Self {
            name,
            content_type: None,
            freshness_ms: None,
            final_block_id: None,
            content: Some(content),
            signature: Signature::DigestSha256,
        }
    }

    fn meta_len(&self) -> usize {
        let mut n = self
            .content_type
            .map_or(0, |c| nni_tlv_len(tt::CONTENT_TYPE, c));
        n += self
            .freshness_ms
            .map_or(0, |f| nni_tlv_len(tt::FRESHNESS_PERIOD, f));
        n += self.final_block_id.as_ref().map_or(0, |c| {
            tlv_len(tt::FINAL_BLOCK_ID, c.as_component().wire().len())
        });
        n
    }

    fn sig_parts(&self) -> (&[u8], usize) {
        match &self.signature {
            Signature::DigestSha256 => (&DIGEST_SIG_INFO, DIGEST_LEN),
            Signature::Raw { info, value } => (info, value.len()),
        }
    }

    fn value_len(&self) -> usize {
        let meta = self.meta_len();
        let (info, sig_len) = self.sig_parts();
        let mut n = self.name.as_name().encoded_len();
        if meta > 0 {
            n += tlv_len(tt::META_INFO, meta);
        }
        n += self
            .content
            .as_ref()
            .map_or(0, |c| tlv_len(tt::CONTENT, c.len()));
        n + tlv_len(tt::SIGNATURE_INFO, info.len()) + tlv_len(tt::SIGNATURE_VALUE, sig_len)
    }

    /// Size of the encoded Data TLV.
    pub fn encoded_len(&self) -> usize {
        tlv_len(tt::DATA, self.value_len())
    }

    /// Encodes into `out` (no allocation), signing with DigestSha256 when asked; returns the
    /// number of bytes written.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize> {
        if let Signature::Raw { info, .. } = &self.signature {
            let mut r = Reader::new(info);
            let starts_with_type = matches!(
                r.read(),
                Ok(t) if t.typ == tt::SIGNATURE_TYPE && t.nni(Element::SignatureType).is_ok()
            );
            if !starts_with_type || r.any(|e| e.is_err()) {
                return Err(Error::new(
                    ErrorKind::Unencodable("SignatureInfo must start with a SignatureType element"),
                    0,
                ));
            }
        }
        let need = self.encoded_len();
        let value_len = self.value_len();
        let header = need - value_len;
        let (info, _) = self.sig_parts();
        let mut w = Writer::new(out, need)?;
        w.header(tt::DATA, value_len)?;
        self.name.as_name().encode(&mut w)?;
        let meta = self.meta_len();
        if meta > 0 {
            w.header(tt::META_INFO, meta)?;
            if let Some(c) = self.content_type {
                w.nni_tlv(tt::CONTENT_TYPE, c)?;
            }
            if let Some(f) = self.freshness_ms {
                w.nni_tlv(tt::FRESHNESS_PERIOD, f)?;
            }
            if let Some(c) = &self.final_block_id {
                w.tlv(tt::FINAL_BLOCK_ID, c.as_component().wire())?;
            }
        }
        if let Some(c) = &self.content {
            w.tlv(tt::CONTENT, c)?;
        }
        w.tlv(tt::SIGNATURE_INFO, info)?;
        let signed_end = w.len();
        match &self.signature {
            Signature::Raw { value, .. } => w.tlv(tt::SIGNATURE_VALUE, value)?,
            Signature::DigestSha256 => {
                let digest: [u8; DIGEST_LEN] = Sha256::digest(&out[header..signed_end]).into();
                let mut w = Writer::new(&mut out[signed_end..], need - signed_end)?;
                w.tlv(tt::SIGNATURE_VALUE, &digest)?;
            }
        }
        Ok(need)
    }

    /// Encodes into a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut out = vec![0; self.encoded_len()];
        self.encode(&mut out)?;
        Ok(out)
    }
}
