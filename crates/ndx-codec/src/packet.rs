//! The outermost decoder: what a frame's payload is.

use crate::data::Data;
use crate::error::{Element, Error, ErrorKind, Result};
use crate::fast;
use crate::interest::Interest;
use crate::lp::LpPacket;
use crate::tlv::{Reader, Tlv};
use crate::types as tt;
use crate::view;

/// An NDN packet as found on a link: a bare Interest or Data, or an LpPacket.
#[derive(Clone, Copy, Debug)]
pub enum Packet<'a> {
    /// A bare Interest.
    Interest(Interest<'a>),
    /// A bare Data.
    Data(Data<'a>),
    /// An NDNLPv2 LpPacket (which may carry an Interest, Data, Nack or a fragment).
    Lp(LpPacket<'a>),
}

impl<'a> Packet<'a> {
    /// Decodes the packet at the start of `frame`.
    ///
    /// Bytes after the packet are accepted only when they are all zero (Ethernet padding to
    /// the 60-byte minimum, as NFD's Ethernet faces send); anything else is
    /// [`ErrorKind::TrailingBytes`].
    ///
    /// The usual packets (a one-byte TLV-TYPE and a minimal one- or three-byte TLV-LENGTH,
    /// then the element order the fast paths of the `fast` module read) are decoded in one
    /// straight-line pass; anything else (and every error) by the general decoder, from the
    /// start.
    // `#[inline]` so that it is compiled in the caller's crate (a direct call, and about 6
    // instructions fewer per exchange than `#[inline(never)]` here); with the three fast paths
    // in it, it is too large to be inlined, and builds the view straight into the caller's
    // result.
    #[inline]
    pub fn decode(frame: &'a [u8]) -> Result<Self> {
        if let Some(t) = Self::fast_tlv(frame) {
            let (value, wire) = (t.value, t.wire);
            return match t.typ {
                tt::INTEREST => fast::read_as(value, wire, 0, Packet::Interest),
                tt::DATA => fast::read_as(value, wire, 0, Packet::Data),
                _ => fast::read_as(value, wire, 0, Packet::Lp),
            };
        }
        Self::decode_general(frame)
    }

    /// The packet TLV that [`decode`](Self::decode) hands straight to its decoder (which
    /// tries its fast path first): an Interest, Data or LpPacket whose TLV header is in the
    /// forms of `fast::tlv`, followed by nothing but zeros. The general decoder would read
    /// the same TLV, accept the same padding and hand the TLV to the same decoder.
    #[inline(always)]
    pub(crate) fn fast_tlv(frame: &'a [u8]) -> Option<Tlv<'a>> {
        fast::packet(frame, 0, true)
    }

    /// The general path of [`decode`](Self::decode): every frame, every error.
    #[inline(never)]
    pub(crate) fn decode_general(frame: &'a [u8]) -> Result<Self> {
        if frame.is_empty() {
            return Err(Error::new(ErrorKind::Missing(Element::Packet), 0));
        }
        let mut r = Reader::new(frame);
        let t = r.read()?;
        let rest = r.remaining();
        if rest.iter().any(|&b| b != 0) {
            return Err(Error::new(ErrorKind::TrailingBytes(rest.len()), r.offset()));
        }
        match t.typ {
            tt::INTEREST => view::from_read_tlv::<Interest<'_>>(t).map(Packet::Interest),
            tt::DATA => view::from_read_tlv::<Data<'_>>(t).map(Packet::Data),
            tt::LP_PACKET => view::from_read_tlv::<LpPacket<'_>>(t).map(Packet::Lp),
            typ => Err(t.error(ErrorKind::NotAPacket(typ))),
        }
    }

    /// The packet's TLV bytes.
    pub fn wire(&self) -> &'a [u8] {
        match self {
            Packet::Interest(i) => i.wire(),
            Packet::Data(d) => d.wire(),
            Packet::Lp(l) => l.wire(),
        }
    }
}
