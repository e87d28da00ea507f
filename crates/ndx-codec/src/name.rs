//! Names: a borrowed view ([`Name`]) and an owned, encoded buffer ([`NameBuf`]).

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};

use crate::component::Component;
use crate::error::{Element, Error, ErrorKind, Result};
use crate::tlv::{Reader, Tlv, Writer, nni_len, tlv_len};
use crate::types as tt;
use crate::uri::{self, UriError};

/// A Name borrowed from a packet: the concatenated component TLVs, validated at decode time.
///
/// Because VAR-NUMBERs are minimal and components are contiguous, two names are equal exactly
/// when their component bytes are equal, and the first `k` components of a name are a prefix
/// of its bytes ([`Name::prefix`] is free). Hashing a name hashes those bytes.
#[derive(Clone, Copy)]
pub struct Name<'a> {
    value: &'a [u8],
    len: usize,
}

impl<'a> Name<'a> {
    /// The empty name `/`.
    pub const EMPTY: Name<'static> = Name { value: &[], len: 0 };

    /// Decodes a whole Name TLV (`07 LL …`); trailing bytes are an error.
    pub fn decode(wire: &'a [u8]) -> Result<Self> {
        let t = crate::tlv::read_one(wire)?;
        if t.typ != tt::NAME {
            return Err(t.error(ErrorKind::Unexpected {
                expected: Element::Name,
                found: t.typ,
            }));
        }
        Self::from_tlv(t)
    }

    /// A name from its TLV-VALUE (the concatenated component TLVs), validated.
    pub fn from_value(value: &'a [u8]) -> Result<Self> {
        Self::from_components(value, 0)
    }

    /// A name from parts already validated (by a packet's decode): `value` holds `len`
    /// components.
    #[inline(always)]
    pub(crate) const fn from_validated(value: &'a [u8], len: usize) -> Self {
        Self { value, len }
    }

    /// Validates the components of a Name TLV.
    pub(crate) fn from_tlv(t: Tlv<'a>) -> Result<Self> {
        Self::from_components(t.value, t.value_offset())
    }

    /// Validates a sequence of component TLVs located at `base` in the outermost buffer.
    pub(crate) fn from_components(value: &'a [u8], base: usize) -> Result<Self> {
        Self::from_components_counting(value, base).map(|(n, _)| n)
    }

    /// Like [`from_components`](Self::from_components), also counting the
    /// ParametersSha256DigestComponents (the Interest decoder needs that count, and one pass
    /// over the name is cheaper than two).
    #[inline]
    pub(crate) fn from_components_counting(value: &'a [u8], base: usize) -> Result<(Self, usize)> {
        let mut len = 0;
        let mut params_digests = 0;
        let mut pos = 0;
        while let Some(rest) = value.get(pos..)
            && !rest.is_empty()
        {
            len += 1;
            // Fast path, one pass: a one-byte TLV-TYPE that needs no further check (neither 0
            // nor a digest type) and a one-byte TLV-LENGTH that fits.
            if let [3..=252, l @ 0..=252, ..] = rest {
                let end = 2 + usize::from(*l);
                if end <= rest.len() {
                    pos += end;
                    continue;
                }
            }
            let (n, digest) = Self::check_component(rest, base + pos)?;
            params_digests += usize::from(digest);
            pos += n;
        }
        Ok((Self { value, len }, params_digests))
    }

    /// The full checks of the component at the start of `rest` (at `base` in the outermost
    /// buffer), with the errors and offsets they report: its size, and whether it is a
    /// ParametersSha256DigestComponent.
    #[inline(never)]
    fn check_component(rest: &[u8], base: usize) -> Result<(usize, bool)> {
        let t = Reader::with_base(rest, base).read()?;
        let c = Component::from_tlv(t)?;
        let digest = u64::from(c.typ()) == tt::PARAMETERS_SHA256_DIGEST_COMPONENT;
        Ok((t.wire.len(), digest))
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for the empty name `/`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The concatenated component TLVs (the Name's TLV-VALUE).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.value
    }

    /// The components in order.
    pub fn components(&self) -> Components<'a> {
        Components { rest: self.value }
    }

    /// Component `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<Component<'a>> {
        self.components().nth(i)
    }

    /// The last component.
    pub fn last(&self) -> Option<Component<'a>> {
        self.components().last()
    }

    /// The name without its last component, and that component (None for `/`), in one
    /// pass over the components (`prefix(len - 1)` and `last()` take two).
    pub fn split_last(&self) -> Option<(Name<'a>, Component<'a>)> {
        let mut end = 0;
        let mut last = None;
        for c in self.components() {
            if let Some(prev) = last.replace(c) {
                end += prev.wire().len();
            }
        }
        let last = last?;
        let prefix = Name {
            value: self.value.get(..end).unwrap_or(&[]),
            len: self.len - 1,
        };
        Some((prefix, last))
    }

    /// The first `k` components (all of them when `k >= len`).
    pub fn prefix(&self, k: usize) -> Name<'a> {
        if k >= self.len {
            return *self;
        }
        let end = self
            .components()
            .take(k)
            .map(|c| c.wire().len())
            .sum::<usize>();
        Name {
            value: self.value.get(..end).unwrap_or(&[]),
            len: k,
        }
    }

    /// Whether `self` is a prefix of `other` (every name is a prefix of itself).
    pub fn is_prefix_of(&self, other: &Name<'_>) -> bool {
        self.len <= other.len && other.value.starts_with(self.value)
    }

    /// Size of the Name TLV.
    pub fn encoded_len(&self) -> usize {
        tlv_len(tt::NAME, self.value.len())
    }

    /// Writes the Name TLV.
    pub fn encode(&self, w: &mut Writer<'_>) -> Result<()> {
        w.tlv(tt::NAME, self.value)
    }

    /// An owned copy.
    pub fn to_buf(&self) -> NameBuf {
        NameBuf {
            value: self.value.to_vec(),
            len: self.len,
        }
    }
}

impl PartialEq for Name<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for Name<'_> {}

impl Hash for Name<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl Ord for Name<'_> {
    /// Canonical order: component by component; a proper prefix sorts first.
    fn cmp(&self, other: &Self) -> Ordering {
        let mut a = self.components();
        let mut b = other.components();
        loop {
            match (a.next(), b.next()) {
                (None, None) => return Ordering::Equal,
                (None, Some(_)) => return Ordering::Less,
                (Some(_), None) => return Ordering::Greater,
                (Some(x), Some(y)) => match x.cmp(&y) {
                    Ordering::Equal => {}
                    o => return o,
                },
            }
        }
    }
}

impl PartialOrd for Name<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Name<'_> {
    /// NDN URI form: `/a/b/seg=3`; the empty name is `/`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("/");
        }
        for c in self.components() {
            f.write_str("/")?;
            fmt::Display::fmt(&c, f)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({self})")
    }
}

/// Iterator over the components of a [`Name`].
#[derive(Debug, Clone)]
pub struct Components<'a> {
    /// The components not yet returned.
    rest: &'a [u8],
}

impl<'a> Iterator for Components<'a> {
    type Item = Component<'a>;

    #[inline]
    fn next(&mut self) -> Option<Component<'a>> {
        // The name was validated on decode, so a component with one-byte TLV-TYPE and
        // TLV-LENGTH needs no checks beyond the bounds (digest lengths were checked then).
        let rest = self.rest;
        if let [t @ 1..=252, l @ 0..=252, ..] = rest {
            let end = 2 + usize::from(*l);
            if let (Some(wire), Some(after)) = (rest.get(..end), rest.get(end..)) {
                self.rest = after;
                return Some(Component::from_validated(
                    u16::from(*t),
                    wire.get(2..).unwrap_or(&[]),
                    wire,
                ));
            }
        }
        self.next_slow()
    }
}

impl<'a> Components<'a> {
    /// Longer TLV-TYPE or TLV-LENGTH forms: the full checks. Neither can fail on a validated
    /// name; stop if one does anyway.
    #[inline(never)]
    fn next_slow(&mut self) -> Option<Component<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let r = Reader::new(self.rest).read().and_then(Component::from_tlv);
        match r {
            Ok(c) => {
                self.rest = self.rest.get(c.wire().len()..).unwrap_or(&[]);
                Some(c)
            }
            Err(_) => {
                self.rest = &[];
                None
            }
        }
    }
}

/// An owned name: the encoded component TLVs, ready to copy into a packet.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct NameBuf {
    value: Vec<u8>,
    len: usize,
}

impl NameBuf {
    /// The empty name.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses an NDN URI (`/a/b/seg=3`, `ndn:/a`, percent-encoding, typed components).
    pub fn from_uri(s: &str) -> Result<Self, UriError> {
        uri::parse(s)
    }

    /// Builds from already-encoded component TLVs, validating them.
    pub fn from_component_bytes(value: &[u8]) -> Result<Self> {
        let n = Name::from_components(value, 0)?;
        Ok(n.to_buf())
    }

    /// A borrowed view.
    pub fn as_name(&self) -> Name<'_> {
        Name {
            value: &self.value,
            len: self.len,
        }
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for the empty name.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a component of type `typ` (1..=65535) with `value`.
    ///
    /// Digest components (types 1 and 2) must be 32 bytes.
    pub fn push(&mut self, typ: u16, value: &[u8]) -> Result<&mut Self> {
        if typ == 0 {
            return Err(Error::new(ErrorKind::InvalidType(0), self.value.len()));
        }
        let t = u64::from(typ);
        if matches!(
            t,
            tt::IMPLICIT_SHA256_DIGEST_COMPONENT | tt::PARAMETERS_SHA256_DIGEST_COMPONENT
        ) && value.len() != crate::component::DIGEST_LEN
        {
            return Err(Error::new(
                ErrorKind::BadLength {
                    what: Element::NameComponent,
                    len: value.len(),
                },
                self.value.len(),
            ));
        }
        let need = tlv_len(t, value.len());
        let start = self.value.len();
        self.value.resize(start + need, 0);
        let mut w = Writer::new(&mut self.value[start..], need)?;
        w.tlv(t, value)?;
        self.len += 1;
        Ok(self)
    }

    /// Appends a GenericNameComponent.
    pub fn push_generic(&mut self, value: &[u8]) -> &mut Self {
        self.push(tt::GENERIC_NAME_COMPONENT as u16, value)
            .expect("generic components accept any value")
    }

    /// Appends a component whose value is the NonNegativeInteger `n` (e.g. a segment number:
    /// `push_number(50, 3)`).
    pub fn push_number(&mut self, typ: u16, n: u64) -> Result<&mut Self> {
        let be = n.to_be_bytes();
        self.push(typ, &be[8 - nni_len(n)..])
    }

    /// Appends a SegmentNameComponent.
    pub fn push_segment(&mut self, n: u64) -> &mut Self {
        self.push_number(tt::SEGMENT_NAME_COMPONENT as u16, n)
            .expect("segment numbers are valid component values")
    }

    /// Appends a VersionNameComponent.
    pub fn push_version(&mut self, n: u64) -> &mut Self {
        self.push_number(tt::VERSION_NAME_COMPONENT as u16, n)
            .expect("versions are valid component values")
    }

    /// Appends an existing component.
    pub fn push_component(&mut self, c: Component<'_>) -> &mut Self {
        self.value.extend_from_slice(c.wire());
        self.len += 1;
        self
    }

    /// Removes the last component.
    pub fn pop(&mut self) -> bool {
        let Some(last) = self.as_name().last() else {
            return false;
        };
        let n = last.wire().len();
        self.value.truncate(self.value.len() - n);
        self.len -= 1;
        true
    }

    /// The Name TLV, as a new vector.
    pub fn to_tlv(&self) -> Vec<u8> {
        let n = self.as_name();
        let mut out = vec![0; n.encoded_len()];
        let need = out.len();
        let mut w = Writer::new(&mut out, need).expect("sized above");
        n.encode(&mut w).expect("sized above");
        out
    }
}

impl core::str::FromStr for NameBuf {
    type Err = UriError;

    fn from_str(s: &str) -> Result<Self, UriError> {
        uri::parse(s)
    }
}

impl fmt::Display for NameBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_name(), f)
    }
}

impl fmt::Debug for NameBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NameBuf({self})")
    }
}

impl Ord for NameBuf {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_name().cmp(&other.as_name())
    }
}

impl PartialOrd for NameBuf {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<'a> From<Name<'a>> for NameBuf {
    fn from(n: Name<'a>) -> Self {
        n.to_buf()
    }
}
