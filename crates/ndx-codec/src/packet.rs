//! The outermost decoder: what a frame's payload is.

use crate::data::Data;
use crate::error::{Element, Error, ErrorKind, Result};
use crate::fast;
use crate::interest::Interest;
use crate::lp::LpPacket;
use crate::tlv::{Reader, Tlv};
use crate::types as tt;
use crate::view;

/// A frame in one of the shapes a router receives nearly always, read by
/// [`Packet::decode_usual`] in one pass: a bare Interest or Data, or one in an LpPacket whose
/// only header is a PitToken.
#[derive(Clone, Copy, Debug)]
pub enum Usual<'a> {
    /// An Interest, and the PitToken of the LpPacket around it (`None`: a bare Interest).
    Interest(Interest<'a>, Option<&'a [u8]>),
    /// A Data, and the PitToken of the LpPacket around it (`None`: a bare Data).
    Data(Data<'a>, Option<&'a [u8]>),
}

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

    /// The frame's Interest or Data and the PitToken around it, read in one pass, when the
    /// frame is in a usual shape: a bare Interest or Data, or an LpPacket holding a PitToken
    /// (1 to 32 bytes) and a Fragment and nothing else, whose Fragment is one whole Interest
    /// or Data; every TLV header in the forms of the `fast` module, zero padding after the
    /// frame's packet as [`decode`](Self::decode) allows, and the Interest or Data in the
    /// forms its own fast path reads. `None` for anything else, valid or not: decode it with
    /// [`decode`](Self::decode), which alone reports errors.
    ///
    /// What it returns is exactly what [`decode`](Self::decode) (then
    /// [`LpPacket::network_packet`] and [`LpPacket::pit_token`] for an LpPacket) returns for
    /// the same frame; such an LpPacket has no Nack, NextHopFaceId or fragmentation. The
    /// LpPacket's own view is never built and the Fragment's TLV header is read once
    /// (`fuzz::fast_paths_agree` checks the equivalence). Never panics.
    #[inline]
    pub fn decode_usual(frame: &'a [u8]) -> Option<Usual<'a>> {
        let t = Self::fast_tlv(frame)?;
        let (t, token) = match t.typ {
            tt::LP_PACKET => {
                let [98, l @ 1..=32, ref tail @ ..] = *t.value else {
                    return None;
                };
                let (token, after) = tail.split_at_checked(usize::from(l))?;
                let (fragment, []) = fast::element(after, tt::LP_FRAGMENT as u8)? else {
                    return None;
                };
                let at = view::pos(t.wire, fragment);
                (fast::packet(fragment, t.offset + at, false)?, Some(token))
            }
            _ => (t, None),
        };
        match t.typ {
            tt::INTEREST => Interest::from_tlv_fast(&t).map(|i| Usual::Interest(i, token)),
            tt::DATA => Data::from_tlv_fast(&t).map(|d| Usual::Data(d, token)),
            _ => None,
        }
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
