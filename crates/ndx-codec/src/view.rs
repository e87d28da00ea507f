//! Compact positions for the zero-copy views.
//!
//! A view ([`Interest`](crate::Interest), [`Data`](crate::Data),
//! [`LpPacket`](crate::LpPacket)) keeps one `&[u8]` (its whole TLV) and locates its fields
//! with `u32` offsets and lengths relative to it, rather than one 16-byte slice per field: the
//! views are built, returned through `Result`s and copied into burst slots on the forwarding
//! hot path, so their size is paid on every packet. Accessors rebuild the slices (one bounds
//! check each). A view's TLV therefore cannot exceed `u32::MAX` bytes; the decoders refuse a
//! longer one with [`ErrorKind::BadLength`].

use crate::error::{Element, ErrorKind, Result};
use crate::tlv::Tlv;

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
