//! Name components: the generic one, the two digests, keyword, and naming conventions rev. 3.

use core::cmp::Ordering;
use core::fmt;

use crate::error::{Element, ErrorKind, Result};
use crate::tlv::{Tlv, read_nni};
use crate::types as tt;
use crate::uri;

/// Length of an ImplicitSha256Digest or ParametersSha256Digest component's value.
pub const DIGEST_LEN: usize = 32;

/// One name component, borrowed from the packet.
///
/// Its type is in `1..=65535` and digest components hold exactly 32 bytes: both checked when
/// the component was decoded, so every accessor here is infallible.
#[derive(Clone, Copy, Debug)]
pub struct Component<'a> {
    typ: u16,
    value: &'a [u8],
    wire: &'a [u8],
}

/// What a component means, by its TLV-TYPE (and value, for the numeric conventions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComponentKind<'a> {
    /// GenericNameComponent (8).
    Generic,
    /// ImplicitSha256DigestComponent (1): SHA-256 of the whole Data packet.
    ImplicitDigest(&'a [u8; DIGEST_LEN]),
    /// ParametersSha256DigestComponent (2).
    ParamsDigest(&'a [u8; DIGEST_LEN]),
    /// KeywordNameComponent (32).
    Keyword,
    /// SegmentNameComponent (50) with a NonNegativeInteger value.
    Segment(u64),
    /// ByteOffsetNameComponent (52).
    ByteOffset(u64),
    /// VersionNameComponent (54).
    Version(u64),
    /// TimestampNameComponent (56), microseconds since the Unix epoch.
    Timestamp(u64),
    /// SequenceNumNameComponent (58).
    SequenceNum(u64),
    /// Any other type (including a convention type whose value is not a NonNegativeInteger).
    Other(u16),
}

impl<'a> Component<'a> {
    /// Decodes one component TLV that fills `wire` exactly.
    pub fn decode(wire: &'a [u8]) -> Result<Self> {
        let t = crate::tlv::read_one(wire)?;
        Self::from_tlv(t)
    }

    /// Validates a TLV as a name component.
    pub(crate) fn from_tlv(t: Tlv<'a>) -> Result<Self> {
        let Ok(typ) = u16::try_from(t.typ) else {
            return Err(t.error(ErrorKind::Invalid(Element::NameComponent)));
        };
        if matches!(
            t.typ,
            tt::IMPLICIT_SHA256_DIGEST_COMPONENT | tt::PARAMETERS_SHA256_DIGEST_COMPONENT
        ) && t.value.len() != DIGEST_LEN
        {
            return Err(t.bad_length(Element::NameComponent));
        }
        Ok(Self {
            typ,
            value: t.value,
            wire: t.wire,
        })
    }

    /// A component from parts already validated (by a Name's decode): `wire` is the whole
    /// TLV of type `typ` and `value` its TLV-VALUE.
    #[inline]
    pub(crate) fn from_validated(typ: u16, value: &'a [u8], wire: &'a [u8]) -> Self {
        Self { typ, value, wire }
    }

    /// TLV-TYPE.
    pub fn typ(&self) -> u16 {
        self.typ
    }

    /// TLV-VALUE.
    pub fn value(&self) -> &'a [u8] {
        self.value
    }

    /// The whole TLV (type, length and value).
    pub fn wire(&self) -> &'a [u8] {
        self.wire
    }

    /// The component's meaning.
    pub fn kind(&self) -> ComponentKind<'a> {
        let digest = || <&[u8; DIGEST_LEN]>::try_from(self.value).ok();
        let nni = || read_nni(self.value);
        let kind = match u64::from(self.typ) {
            tt::GENERIC_NAME_COMPONENT => Some(ComponentKind::Generic),
            tt::IMPLICIT_SHA256_DIGEST_COMPONENT => digest().map(ComponentKind::ImplicitDigest),
            tt::PARAMETERS_SHA256_DIGEST_COMPONENT => digest().map(ComponentKind::ParamsDigest),
            tt::KEYWORD_NAME_COMPONENT => Some(ComponentKind::Keyword),
            tt::SEGMENT_NAME_COMPONENT => nni().map(ComponentKind::Segment),
            tt::BYTE_OFFSET_NAME_COMPONENT => nni().map(ComponentKind::ByteOffset),
            tt::VERSION_NAME_COMPONENT => nni().map(ComponentKind::Version),
            tt::TIMESTAMP_NAME_COMPONENT => nni().map(ComponentKind::Timestamp),
            tt::SEQUENCE_NUM_NAME_COMPONENT => nni().map(ComponentKind::SequenceNum),
            _ => None,
        };
        kind.unwrap_or(ComponentKind::Other(self.typ))
    }

    /// The segment number, if this is a SegmentNameComponent.
    pub fn as_segment(&self) -> Option<u64> {
        match self.kind() {
            ComponentKind::Segment(n) => Some(n),
            _ => None,
        }
    }

    /// The version number, if this is a VersionNameComponent.
    pub fn as_version(&self) -> Option<u64> {
        match self.kind() {
            ComponentKind::Version(n) => Some(n),
            _ => None,
        }
    }
}

impl PartialEq for Component<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.typ == other.typ && self.value == other.value
    }
}

impl Eq for Component<'_> {}

impl core::hash::Hash for Component<'_> {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.typ.hash(state);
        self.value.hash(state);
    }
}

impl Ord for Component<'_> {
    /// Canonical order (packet format v0.3 "Canonical Order"): by TLV-TYPE, then by
    /// TLV-LENGTH, then bytewise by TLV-VALUE.
    fn cmp(&self, other: &Self) -> Ordering {
        self.typ
            .cmp(&other.typ)
            .then(self.value.len().cmp(&other.value.len()))
            .then_with(|| self.value.cmp(other.value))
    }
}

impl PartialOrd for Component<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Component<'_> {
    /// The NDN URI form of the component (`seg=3`, `sha256digest=…`, `%00a`, `...`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        uri::fmt_component(f, self.typ, self.value)
    }
}

/// An owned name component (its encoded TLV).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ComponentBuf {
    wire: Vec<u8>,
}

impl ComponentBuf {
    /// A component of type `typ` with `value`; fails on type 0 or a digest that is not 32 bytes.
    pub fn new(typ: u16, value: &[u8]) -> Result<Self> {
        let mut n = crate::NameBuf::new();
        n.push(typ, value)?;
        Ok(Self {
            wire: n.as_name().as_bytes().to_vec(),
        })
    }

    /// A SegmentNameComponent.
    pub fn segment(n: u64) -> Self {
        let mut name = crate::NameBuf::new();
        name.push_segment(n);
        Self {
            wire: name.as_name().as_bytes().to_vec(),
        }
    }

    /// A borrowed view.
    pub fn as_component(&self) -> Component<'_> {
        let t = crate::tlv::Reader::new(&self.wire)
            .read()
            .expect("ComponentBuf holds one valid component");
        Component::from_tlv(t).expect("ComponentBuf holds one valid component")
    }
}

impl fmt::Display for ComponentBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_component(), f)
    }
}

impl fmt::Debug for ComponentBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ComponentBuf({self})")
    }
}

impl From<Component<'_>> for ComponentBuf {
    fn from(c: Component<'_>) -> Self {
        Self {
            wire: c.wire().to_vec(),
        }
    }
}
