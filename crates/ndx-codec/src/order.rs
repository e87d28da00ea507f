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

    /// Decides what to do with element `t`, whose rank in the order is `rank` (1-based;
    /// `None` when the type is not recognised here). `Ok(true)`: decode it; `Ok(false)`: skip.
    pub(crate) fn accept(&mut self, t: &Tlv<'_>, rank: Option<usize>) -> Result<bool> {
        match rank {
            Some(r) if r > self.last => {
                self.last = r;
                Ok(true)
            }
            _ if is_critical(t.typ) => Err(t.error(ErrorKind::UnknownCritical {
                typ: t.typ,
                context: self.context,
            })),
            _ => Ok(false),
        }
    }
}
