//! Face identifiers and next hops.

use core::fmt;

/// A face: one link to a neighbour or a local application. Ids are assigned by the router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FaceId(pub u32);

impl fmt::Display for FaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "face{}", self.0)
    }
}

/// A FIB next hop: a face and its routing cost (lower is better).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NextHop {
    /// Outgoing face.
    pub face: FaceId,
    /// Routing cost.
    pub cost: u32,
}
