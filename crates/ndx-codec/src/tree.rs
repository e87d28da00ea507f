//! A generic, depth-bounded walk over a packet's TLV tree, for dissectors and debugging.
//!
//! Unlike the packet decoders, the walk does not enforce packet semantics: it shows every
//! element it can frame, and knows from the enclosing element which ones nest further.

use crate::error::{Error, ErrorKind, Result};
use crate::tlv::{Reader, Tlv};
use crate::types as tt;

/// Deepest nesting the walk follows; deeper input yields [`ErrorKind::TooDeep`].
pub const MAX_DEPTH: u8 = 16;

/// How an element's TLV-VALUE should be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// The value is a sequence of TLV elements, walked as children.
    Nested,
    /// A Name: children are components.
    Name,
    /// One name component (shown in URI form).
    Component,
    /// A NonNegativeInteger.
    Number,
    /// A zero-length flag (CanBePrefix, MustBeFresh, NonDiscovery).
    Flag,
    /// Opaque bytes (Nonce, Content, signature bits, PitToken, a partial Fragment).
    Bytes,
}

/// The display kind of element `typ` inside `parent` (0 at the top level).
pub fn value_kind(parent: u64, typ: u64) -> ValueKind {
    match (parent, typ) {
        (_, tt::NAME) => ValueKind::Name,
        (tt::NAME | tt::FINAL_BLOCK_ID, _) => ValueKind::Component,
        (0 | tt::LP_FRAGMENT, tt::INTEREST | tt::DATA | tt::LP_PACKET) => ValueKind::Nested,
        (tt::INTEREST, tt::FORWARDING_HINT | tt::INTEREST_SIGNATURE_INFO)
        | (tt::FORWARDING_HINT, tt::LEGACY_DELEGATION)
        | (tt::DATA, tt::META_INFO | tt::SIGNATURE_INFO)
        | (tt::META_INFO, tt::FINAL_BLOCK_ID)
        | (
            tt::SIGNATURE_INFO | tt::INTEREST_SIGNATURE_INFO,
            tt::KEY_LOCATOR | tt::VALIDITY_PERIOD,
        )
        | (tt::LP_PACKET, tt::LP_NACK | tt::LP_CACHE_POLICY) => ValueKind::Nested,
        (tt::INTEREST, tt::CAN_BE_PREFIX | tt::MUST_BE_FRESH)
        | (tt::LP_PACKET, tt::LP_NON_DISCOVERY) => ValueKind::Flag,
        (tt::INTEREST, tt::INTEREST_LIFETIME | tt::HOP_LIMIT)
        | (tt::META_INFO, tt::CONTENT_TYPE | tt::FRESHNESS_PERIOD)
        | (
            tt::SIGNATURE_INFO | tt::INTEREST_SIGNATURE_INFO,
            tt::SIGNATURE_TYPE | tt::SIGNATURE_TIME | tt::SIGNATURE_SEQ_NUM,
        )
        | (tt::LEGACY_DELEGATION, 30)
        | (
            tt::LP_PACKET,
            tt::LP_SEQUENCE
            | tt::LP_FRAG_INDEX
            | tt::LP_FRAG_COUNT
            | tt::LP_HOP_COUNT_TAG
            | tt::LP_NEXT_HOP_FACE_ID
            | tt::LP_INCOMING_FACE_ID
            | tt::LP_CONGESTION_MARK
            | tt::LP_ACK
            | tt::LP_TX_SEQUENCE,
        )
        | (tt::LP_NACK, tt::LP_NACK_REASON)
        | (tt::LP_CACHE_POLICY, tt::LP_CACHE_POLICY_TYPE) => ValueKind::Number,
        (tt::LP_PACKET, tt::LP_FRAGMENT) => ValueKind::Nested,
        _ => ValueKind::Bytes,
    }
}

/// One element met by [`walk`].
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    /// The element.
    pub tlv: Tlv<'a>,
    /// TLV-TYPE of the enclosing element (0 at the top).
    pub parent: u64,
    /// Nesting depth (0 at the top).
    pub depth: u8,
    /// How to show its value. A Fragment that holds only part of a packet is `Bytes`.
    pub kind: ValueKind,
}

/// Walks every element of `buf` depth-first, parents before children, calling `visit` on each.
///
/// Stops at the first framing error and returns it (with its absolute offset); the elements
/// visited before it are still reported, so a dissector can show how far the packet is sound.
pub fn walk<'a>(buf: &'a [u8], visit: &mut dyn FnMut(Node<'a>)) -> Result<()> {
    walk_level(Reader::new(buf), 0, 0, visit)
}

fn walk_level<'a>(
    r: Reader<'a>,
    parent: u64,
    depth: u8,
    visit: &mut dyn FnMut(Node<'a>),
) -> Result<()> {
    if depth >= MAX_DEPTH {
        return Err(Error::new(ErrorKind::TooDeep(MAX_DEPTH), r.offset()));
    }
    for t in r {
        let t = t?;
        let mut kind = value_kind(parent, t.typ);
        if t.typ == tt::LP_FRAGMENT && parent == tt::LP_PACKET && !is_whole_packet(t.value) {
            kind = ValueKind::Bytes;
        }
        visit(Node {
            tlv: t,
            parent,
            depth,
            kind,
        });
        if matches!(kind, ValueKind::Nested | ValueKind::Name) {
            walk_level(t.children(), t.typ, depth + 1, visit)?;
        }
    }
    Ok(())
}

/// Whether `value` is exactly one packet TLV (a whole network packet, or a nested LpPacket,
/// which is invalid but worth showing).
fn is_whole_packet(value: &[u8]) -> bool {
    let mut r = Reader::new(value);
    matches!(r.read(), Ok(t) if matches!(t.typ, tt::INTEREST | tt::DATA | tt::LP_PACKET))
        && r.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_nested_lp_interest() {
        // LpPacket { PitToken(2), Fragment { Interest { Name { "a" }, Nonce } } }
        let pkt = [
            0x64, 0x13, 0x62, 0x02, 0xAA, 0xBB, 0x50, 0x0D, 0x05, 0x0B, 0x07, 0x03, 0x08, 0x01,
            b'a', 0x0A, 0x04, 1, 2, 3, 4,
        ];
        let mut seen = Vec::new();
        walk(&pkt, &mut |n| seen.push((n.tlv.typ, n.depth, n.kind))).unwrap();
        assert_eq!(
            seen,
            vec![
                (tt::LP_PACKET, 0, ValueKind::Nested),
                (tt::LP_PIT_TOKEN, 1, ValueKind::Bytes),
                (tt::LP_FRAGMENT, 1, ValueKind::Nested),
                (tt::INTEREST, 2, ValueKind::Nested),
                (tt::NAME, 3, ValueKind::Name),
                (8, 4, ValueKind::Component),
                (tt::NONCE, 3, ValueKind::Bytes),
            ]
        );
    }

    #[test]
    fn partial_fragment_is_opaque_and_errors_keep_prefix() {
        let pkt = [0x64, 0x06, 0x50, 0x04, 0x05, 0x20, 0x07, 0x00];
        let mut kinds = Vec::new();
        walk(&pkt, &mut |n| kinds.push(n.kind)).unwrap();
        assert_eq!(kinds, vec![ValueKind::Nested, ValueKind::Bytes]);

        let bad = [0x05, 0x05, 0x07, 0x03, 0x08, 0x05, b'a'];
        let mut n = 0;
        let e = walk(&bad, &mut |_| n += 1).unwrap_err();
        assert_eq!(n, 2);
        assert_eq!(e.offset, 4);
    }

    #[test]
    fn depth_is_bounded() {
        // LpPacket { Fragment { LpPacket { Fragment { ... } } } }, 40 levels deep.
        let mut v: Vec<u8> = vec![0x64, 0x00];
        for _ in 0..20 {
            let inner = v.clone();
            let mut frag = vec![0x50, inner.len() as u8];
            frag.extend_from_slice(&inner);
            v = vec![0x64, frag.len() as u8];
            v.extend_from_slice(&frag);
        }
        let e = walk(&v, &mut |_| {}).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooDeep(MAX_DEPTH));
    }
}
