//! Interest packets: a zero-copy view ([`Interest`]) and an owned encoder ([`InterestRepr`]).

use sha2::{Digest, Sha256};

use crate::component::ComponentKind;
use crate::error::{Element, Error, ErrorKind, Result};
use crate::name::{Name, NameBuf};
use crate::order::Order;
use crate::tlv::{Reader, Tlv, Writer, nni_tlv_len, tlv_len};
use crate::types as tt;

/// Default InterestLifetime when the element is absent (packet format v0.3).
pub const DEFAULT_LIFETIME_MS: u64 = 4000;

/// An Interest, borrowed from the frame it was decoded from.
#[derive(Clone, Copy, Debug)]
pub struct Interest<'a> {
    wire: &'a [u8],
    offset: usize,
    name: Name<'a>,
    can_be_prefix: bool,
    must_be_fresh: bool,
    forwarding_hint: Option<ForwardingHint<'a>>,
    nonce: Option<u32>,
    lifetime: Option<u64>,
    hop_limit: Option<(u8, usize)>,
    app_params: Option<&'a [u8]>,
    params_start: usize,
    signature_info: Option<&'a [u8]>,
    signature_value: Option<&'a [u8]>,
}

impl<'a> Interest<'a> {
    /// Decodes an Interest TLV that fills `wire` exactly.
    pub fn decode(wire: &'a [u8]) -> Result<Self> {
        let t = crate::tlv::read_one(wire)?;
        Self::from_tlv(t)
    }

    /// Decodes an Interest from an already-framed TLV (offsets stay those of the outer buffer).
    #[inline]
    pub fn from_tlv(t: Tlv<'a>) -> Result<Self> {
        if t.typ != tt::INTEREST {
            return Err(t.error(ErrorKind::Unexpected {
                expected: Element::Interest,
                found: t.typ,
            }));
        }
        let mut r = t.children();
        if r.is_empty() {
            return Err(t.error(ErrorKind::Missing(Element::Name)));
        }
        let first = r.read()?;
        if first.typ != tt::NAME {
            return Err(first.error(ErrorKind::Unexpected {
                expected: Element::Name,
                found: first.typ,
            }));
        }
        let (name, digests) = Name::from_components_counting(first.value, first.value_offset())?;
        if name.is_empty() {
            // ndn-cxx and NFD refuse Interests for the empty name.
            return Err(first.error(ErrorKind::Invalid(Element::Name)));
        }
        let mut i = Interest {
            wire: t.wire,
            offset: t.offset,
            name,
            can_be_prefix: false,
            must_be_fresh: false,
            forwarding_hint: None,
            nonce: None,
            lifetime: None,
            hop_limit: None,
            app_params: None,
            params_start: 0,
            signature_info: None,
            signature_value: None,
        };
        let mut order = Order::new(Element::Interest);
        while !r.is_empty() {
            let e = r.read()?;
            // One dispatch on the TLV-TYPE: each arm first claims its rank in the element
            // order; an element that cannot (repeated or out of order) is unrecognised.
            match e.typ {
                tt::CAN_BE_PREFIX if order.advance(1) => {
                    e.expect_len(Element::CanBePrefix, 0)?;
                    i.can_be_prefix = true;
                }
                tt::MUST_BE_FRESH if order.advance(2) => {
                    e.expect_len(Element::MustBeFresh, 0)?;
                    i.must_be_fresh = true;
                }
                tt::FORWARDING_HINT if order.advance(3) => {
                    i.forwarding_hint = Some(ForwardingHint::from_tlv(e)?);
                }
                tt::NONCE if order.advance(4) => {
                    let n =
                        <[u8; 4]>::try_from(e.value).map_err(|_| e.bad_length(Element::Nonce))?;
                    i.nonce = Some(u32::from_be_bytes(n));
                }
                tt::INTEREST_LIFETIME if order.advance(5) => {
                    i.lifetime = Some(e.nni(Element::InterestLifetime)?);
                }
                tt::HOP_LIMIT if order.advance(6) => {
                    let [h] = e.value else {
                        return Err(e.bad_length(Element::HopLimit));
                    };
                    i.hop_limit = Some((*h, e.value_offset()));
                }
                tt::APPLICATION_PARAMETERS if order.advance(7) => {
                    i.app_params = Some(e.value);
                    i.params_start = e.offset - t.offset;
                }
                tt::INTEREST_SIGNATURE_INFO if order.advance(8) => {
                    if i.app_params.is_none() {
                        return Err(e.error(ErrorKind::Missing(Element::ApplicationParameters)));
                    }
                    i.signature_info = Some(e.value);
                }
                tt::INTEREST_SIGNATURE_VALUE if order.advance(9) => {
                    if i.signature_info.is_none() {
                        return Err(e.error(ErrorKind::Missing(Element::InterestSignatureInfo)));
                    }
                    i.signature_value = Some(e.value);
                }
                _ => order.unrecognised(&e)?,
            }
        }
        if i.signature_info.is_some() && i.signature_value.is_none() {
            return Err(Error::new(
                ErrorKind::Missing(Element::InterestSignatureValue),
                t.offset,
            ));
        }
        if (i.app_params.is_some() && digests != 1) || digests > 1 {
            return Err(Error::new(
                ErrorKind::Invalid(Element::ApplicationParameters),
                t.offset,
            ));
        }
        Ok(i)
    }

    /// The whole Interest TLV.
    pub fn wire(&self) -> &'a [u8] {
        self.wire
    }

    /// Offset of the Interest TLV in the outermost decoded buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The Name.
    pub fn name(&self) -> Name<'a> {
        self.name
    }

    /// CanBePrefix.
    pub fn can_be_prefix(&self) -> bool {
        self.can_be_prefix
    }

    /// MustBeFresh.
    pub fn must_be_fresh(&self) -> bool {
        self.must_be_fresh
    }

    /// ForwardingHint, if present.
    pub fn forwarding_hint(&self) -> Option<ForwardingHint<'a>> {
        self.forwarding_hint
    }

    /// Nonce as a big-endian number.
    pub fn nonce(&self) -> Option<u32> {
        self.nonce
    }

    /// InterestLifetime in milliseconds, if present.
    pub fn lifetime_ms(&self) -> Option<u64> {
        self.lifetime
    }

    /// InterestLifetime, or the spec's default of 4 s when absent.
    pub fn effective_lifetime_ms(&self) -> u64 {
        self.lifetime.unwrap_or(DEFAULT_LIFETIME_MS)
    }

    /// HopLimit, if present.
    pub fn hop_limit(&self) -> Option<u8> {
        self.hop_limit.map(|(v, _)| v)
    }

    /// Offset of the HopLimit value byte in the outermost buffer, so a forwarder can
    /// decrement it in place without re-encoding.
    pub fn hop_limit_offset(&self) -> Option<usize> {
        self.hop_limit.map(|(_, o)| o)
    }

    /// ApplicationParameters' value, if present.
    pub fn app_params(&self) -> Option<&'a [u8]> {
        self.app_params
    }

    /// InterestSignatureInfo's value (opaque), if the Interest is signed.
    pub fn signature_info(&self) -> Option<&'a [u8]> {
        self.signature_info
    }

    /// InterestSignatureValue's value (opaque), if the Interest is signed.
    pub fn signature_value(&self) -> Option<&'a [u8]> {
        self.signature_value
    }

    /// Whether the ParametersSha256DigestComponent equals SHA-256 of everything from
    /// ApplicationParameters to the end of the Interest. `true` when there are no parameters.
    pub fn params_digest_ok(&self) -> bool {
        if self.app_params.is_none() {
            return true;
        }
        let Some(covered) = self.wire.get(self.params_start..) else {
            return false;
        };
        let digest = Sha256::digest(covered);
        self.name.components().any(|c| match c.kind() {
            ComponentKind::ParamsDigest(d) => d[..] == digest[..],
            _ => false,
        })
    }

    /// An owned copy of the fields, for re-encoding.
    pub fn to_repr(&self) -> InterestRepr {
        InterestRepr {
            name: self.name.to_buf(),
            can_be_prefix: self.can_be_prefix,
            must_be_fresh: self.must_be_fresh,
            forwarding_hint: self
                .forwarding_hint
                .map(|f| f.names().map(|n| n.to_buf()).collect())
                .unwrap_or_default(),
            nonce: self.nonce,
            lifetime_ms: self.lifetime,
            hop_limit: self.hop_limit(),
            app_params: self.app_params.map(<[u8]>::to_vec),
            signature_info: self.signature_info.map(<[u8]>::to_vec),
            signature_value: self.signature_value.map(<[u8]>::to_vec),
        }
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
    fn from_tlv(t: Tlv<'a>) -> Result<Self> {
        let mut len = 0;
        for e in t.children() {
            let e = e?;
            Self::name_of(e)?;
            len += 1;
        }
        if len == 0 {
            return Err(t.error(ErrorKind::Missing(Element::Name)));
        }
        Ok(Self {
            value: t.value,
            base: t.value_offset(),
            len,
        })
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
