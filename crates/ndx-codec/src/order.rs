//! Element-order bookkeeping shared by the Interest, Data and MetaInfo decoders.
//!
//! Packet format v0.3 "Considerations for evolvability": a recognised element that appears
//! out of order or repeated is treated as unrecognised, so it is an error when its TLV-TYPE
//! is critical and skipped otherwise.

use crate::ErrorKind;
use crate::error::{Element, Result};
use crate::tlv::Tlv;
use crate::types::is_critical;

/// Tracks the position of the last accepted element in a fixed element order.
#[derive(Debug)]
pub(crate) struct Order {
    last: usize,
    context: Element,
}

impl Order {
    pub(crate) fn new(context: Element) -> Self {
        Self { last: 0, context }
    }

    /// Claims rank `rank` (1-based) for the element just read: true, and the order advances,
    /// when the rank is past the last accepted one; false when the element is repeated or out
    /// of order, which makes it unrecognised (see [`Order::unrecognised`]).
    #[inline]
    pub(crate) fn advance(&mut self, rank: usize) -> bool {
        if rank > self.last {
            self.last = rank;
            true
        } else {
            false
        }
    }

    /// An unrecognised element `t` (unknown type, or a known one repeated or out of order):
    /// an error when its TLV-TYPE is critical, skipped otherwise.
    #[inline]
    pub(crate) fn unrecognised(&self, t: &Tlv<'_>) -> Result<()> {
        if is_critical(t.typ) {
            Err(t.error(ErrorKind::UnknownCritical {
                typ: t.typ,
                context: self.context,
            }))
        } else {
            Ok(())
        }
    }
}
