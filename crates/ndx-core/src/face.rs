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

/// Hasher for maps keyed by [`FaceId`]: face ids are assigned by the router, not chosen by
/// remote senders, so a multiply-shift hash is safe and costs a few instructions instead of
/// SipHash's ~100 (the pipelines look faces up several times per packet).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FaceHasher(u64);

impl core::hash::Hasher for FaceHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0 ^ u64::from(v)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 ^= self.0 >> 29;
    }
}

/// A map keyed by face, with [`FaceHasher`].
pub(crate) type FaceMap<V> =
    std::collections::HashMap<FaceId, V, core::hash::BuildHasherDefault<FaceHasher>>;
