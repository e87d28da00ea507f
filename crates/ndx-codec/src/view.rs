//! Compact positions for the zero-copy views.
//!
//! A view ([`Interest`](crate::Interest), [`Data`](crate::Data),
//! [`LpPacket`](crate::LpPacket)) keeps one `&[u8]` (its whole TLV) and locates its fields
//! with `u32` offsets and lengths relative to it, rather than one 16-byte slice per field: the
//! views are built, returned through `Result`s and copied into burst slots on the forwarding
//! hot path, so their size is paid on every packet. Accessors rebuild the slices (one bounds
//! check each). A view's TLV therefore cannot exceed `u32::MAX` bytes; the decoders refuse a
//! longer one with [`ErrorKind::BadLength`].
//!
//! The views' decoders share their entry scaffolding, written once here: [`View`] is what a
//! decoder states (its TLV-TYPE, its [`Element`], its fast path and its general decoder), and
//! [`decode`], [`from_tlv`], [`from_read_tlv`], [`outer`] and [`named`] are the reading of
//! the outer TLV, the checks of its type and length, the choice between the fast path and the
//! general decoder, and the leading Name of an Interest or a Data, with their errors.

use crate::error::{Element, ErrorKind, Result};
use crate::tlv::{Reader, Tlv};
use crate::types as tt;

/// A view with a fast path and a general decoder ([`Interest`](crate::Interest),
/// [`Data`](crate::Data), [`LpPacket`](crate::LpPacket)): what its decoder states; the entry
/// points below and `fast::read_as` are the rest.
pub(crate) trait View<'a>: Sized {
    /// The TLV-TYPE of the packets it decodes.
    const TYPE: u64;

    /// The element it decodes, as errors name it.
    const ELEMENT: Element;

    /// The fast path, for a TLV of type [`TYPE`](Self::TYPE) checked by [`check_len`]: the
    /// view of a usual packet it has fully validated, `None` on any doubt.
    fn fast(t: &Tlv<'a>) -> Option<Self>;

    /// The general decoder: every element order, every encoding, every error (from any TLV,
    /// starting with [`outer`]).
    fn general(t: Tlv<'a>) -> Result<Self>;
}

/// A view's public entry points (`decode` and `from_tlv`), the accessors of the TLV it was
/// decoded from (`wire` and `offset`, its fields of the same names) and its [`View`] impl,
/// from what its decoder states: the view type, its TLV-TYPE and [`Element`], how the docs
/// name it, and its `from_tlv_fast` and `from_tlv_general`.
macro_rules! entry_points {
    ($view:ident, $typ:expr, $element:expr, $what:literal) => {
        impl<'a> $view<'a> {
            #[doc = concat!("Decodes ", $what, " TLV that fills `wire` exactly.")]
            pub fn decode(wire: &'a [u8]) -> $crate::Result<Self> {
                $crate::view::decode(wire)
            }

            #[doc = concat!("Decodes ", $what, " from an already-framed TLV (offsets stay those")]
            /// of the outer buffer).
            ///
            /// The usual element order is read by a straight-line fast path; anything else
            /// (and every error) by the general decoder, from the start (see the `fast`
            /// module).
            #[inline(always)]
            pub fn from_tlv(t: $crate::Tlv<'a>) -> $crate::Result<Self> {
                $crate::view::from_tlv(t)
            }

            #[doc = concat!("The whole TLV of ", $what, ".")]
            #[inline]
            pub fn wire(&self) -> &'a [u8] {
                self.wire
            }

            #[doc = concat!("Offset of ", $what, " TLV in the outermost decoded buffer.")]
            #[inline]
            pub fn offset(&self) -> usize {
                self.offset
            }
        }

        impl<'a> $crate::view::View<'a> for $view<'a> {
            const TYPE: u64 = $typ;
            const ELEMENT: $crate::Element = $element;

            #[inline(always)]
            fn fast(t: &$crate::Tlv<'a>) -> Option<Self> {
                Self::from_tlv_fast(t)
            }

            #[inline(always)]
            fn general(t: $crate::Tlv<'a>) -> $crate::Result<Self> {
                Self::from_tlv_general(t)
            }
        }
    };
}
pub(crate) use entry_points;

/// Decodes the view `V` from a TLV that fills `wire` exactly (trailing bytes are an error).
#[inline(always)]
pub(crate) fn decode<'a, V: View<'a>>(wire: &'a [u8]) -> Result<V> {
    from_read_tlv(crate::tlv::read_one(wire)?)
}

/// Decodes the view `V` from an already-framed TLV, perhaps hand-built (offsets stay those of
/// the outer buffer): one that fails [`check_len`] goes straight to the general decoder,
/// which reports it; a checked one is as good as one the crate's reader produced.
#[inline(always)]
pub(crate) fn from_tlv<'a, V: View<'a>>(t: Tlv<'a>) -> Result<V> {
    if check_len(&t, V::ELEMENT).is_ok() {
        from_read_tlv(t)
    } else {
        V::general(t)
    }
}

/// [`from_tlv`] for a TLV read by the crate's [`Reader`], whose value is the tail of its wire
/// (of the checks of [`check_len`], only the 4 GiB bound can fail): the fast path when the
/// type is `V`'s, then the general decoder, from the start, when the fast path declines.
#[inline(always)]
pub(crate) fn from_read_tlv<'a, V: View<'a>>(t: Tlv<'a>) -> Result<V> {
    if t.typ == V::TYPE
        && t.wire.len() <= u32::MAX as usize
        && let Some(v) = V::fast(&t)
    {
        return Ok(v);
    }
    V::general(t)
}

/// The general decoder's checks of the outer TLV: `V`'s TLV-TYPE
/// ([`ErrorKind::Unexpected`]), then [`check_len`].
#[inline(always)]
pub(crate) fn outer<'a, V: View<'a>>(t: &Tlv<'a>) -> Result<()> {
    if t.typ != V::TYPE {
        return Err(t.error(ErrorKind::Unexpected {
            expected: V::ELEMENT,
            found: t.typ,
        }));
    }
    check_len(t, V::ELEMENT)
}

/// [`outer`], then the Name an Interest or a Data starts with ([`ErrorKind::Missing`] when
/// the value is empty, [`ErrorKind::Unexpected`] for another first element): the Name's TLV
/// and a reader over the elements after it.
#[inline(always)]
pub(crate) fn named<'a, V: View<'a>>(t: &Tlv<'a>) -> Result<(Tlv<'a>, Reader<'a>)> {
    outer::<V>(t)?;
    t.first_child(tt::NAME, Element::Name)
}

/// A byte range of a view's wire: `start..start + len`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// The range of `len` bytes at `start` (both within a wire checked by [`check_len`]).
    #[inline(always)]
    pub(crate) const fn new(start: usize, len: usize) -> Self {
        Self {
            start: start as u32,
            len: len as u32,
        }
    }

    /// The range's bytes in `wire` (empty if out of bounds, which a decoder never builds).
    #[inline(always)]
    pub(crate) fn of(self, wire: &[u8]) -> &[u8] {
        let start = self.start as usize;
        wire.get(start..start + self.len as usize).unwrap_or(&[])
    }

    /// Where `inner`, a sub-slice of `wire` (a child element's value), lies in it.
    #[inline(always)]
    pub(crate) fn within(wire: &[u8], inner: &[u8]) -> Self {
        Self::new(pos(wire, inner), inner.len())
    }

    /// Offset of the first byte, relative to the wire.
    #[inline(always)]
    pub(crate) const fn start(self) -> usize {
        self.start as usize
    }

    /// Offset just past the last byte, relative to the wire.
    #[inline(always)]
    pub(crate) const fn end(self) -> usize {
        self.start as usize + self.len as usize
    }

    /// Whether the range is empty.
    #[inline(always)]
    pub(crate) const fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// Where `inner`, a sub-slice of `wire`, starts in it: one subtraction, where the elements'
/// offsets would take several (for a slice that is not in `wire`, which no decoder passes, the
/// result is meaningless but harmless: the views read with checked `get`).
#[inline(always)]
pub(crate) fn pos(wire: &[u8], inner: &[u8]) -> usize {
    inner.as_ptr().addr().wrapping_sub(wire.as_ptr().addr())
}

/// Refuses an element too long for a view's `u32` positions (only possible in a buffer over
/// 4 GiB), and a hand-built [`Tlv`] whose `value` is not the tail of its `wire` (the views
/// locate fields by their position in the wire; the crate's reader never builds one).
#[inline(always)]
pub(crate) fn check_len(t: &Tlv<'_>, what: Element) -> Result<()> {
    if t.wire.len() > u32::MAX as usize {
        return Err(t.error(ErrorKind::BadLength {
            what,
            len: t.value.len(),
        }));
    }
    let at = pos(t.wire, t.value);
    if at > t.wire.len() || t.wire.len() - at != t.value.len() {
        return Err(t.error(ErrorKind::Invalid(what)));
    }
    Ok(())
}
