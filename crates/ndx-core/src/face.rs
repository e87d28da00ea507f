//! Face identifiers and next hops.

use core::fmt;

/// A face: one link to a neighbour or a local application. Ids are assigned by the router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
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

/// Per-face values a shard keeps (forwarding properties, pending Interests), looked up
/// several times per packet: a dense array indexed by the id for the small ids the router
/// assigns (a bounds check and a load), a [`FaceMap`] beyond [`DENSE_FACES`].
#[derive(Debug, Clone)]
pub(crate) struct FaceTable<V> {
    dense: Vec<Option<V>>,
    sparse: FaceMap<V>,
}

/// Face ids below this are kept in [`FaceTable`]'s array (at most this many slots, grown
/// only as far as the largest id seen).
pub(crate) const DENSE_FACES: u32 = 1 << 12;

impl<V> Default for FaceTable<V> {
    fn default() -> Self {
        Self {
            dense: Vec::new(),
            sparse: FaceMap::default(),
        }
    }
}

impl<V> FaceTable<V> {
    /// The value of `face`, if it has one.
    #[inline]
    pub(crate) fn get(&self, face: &FaceId) -> Option<&V> {
        if face.0 < DENSE_FACES {
            self.dense.get(face.0 as usize)?.as_ref()
        } else {
            self.sparse.get(face)
        }
    }

    /// The value of `face`, mutably, if it has one.
    #[inline]
    pub(crate) fn get_mut(&mut self, face: &FaceId) -> Option<&mut V> {
        if face.0 < DENSE_FACES {
            self.dense.get_mut(face.0 as usize)?.as_mut()
        } else {
            self.sparse.get_mut(face)
        }
    }

    /// The value of `face`, first set to `default()` if it has none.
    #[inline]
    pub(crate) fn get_or_insert_with(
        &mut self,
        face: FaceId,
        default: impl FnOnce() -> V,
    ) -> &mut V {
        if face.0 >= DENSE_FACES {
            return self.sparse.entry(face).or_insert_with(default);
        }
        let i = face.0 as usize;
        if i >= self.dense.len() {
            self.dense.resize_with(i + 1, || None);
        }
        self.dense[i].get_or_insert_with(default)
    }

    /// Sets the value of `face`.
    #[cfg(test)]
    pub(crate) fn insert(&mut self, face: FaceId, value: V) {
        if face.0 >= DENSE_FACES {
            self.sparse.insert(face, value);
            return;
        }
        let i = face.0 as usize;
        if i >= self.dense.len() {
            self.dense.resize_with(i + 1, || None);
        }
        self.dense[i] = Some(value);
    }

    /// Every (face, value).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (FaceId, &V)> {
        self.dense
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((FaceId(i as u32), v.as_ref()?)))
            .chain(self.sparse.iter().map(|(k, v)| (*k, v)))
    }

    /// Removes the value of `face`, returning it.
    pub(crate) fn remove(&mut self, face: &FaceId) -> Option<V> {
        if face.0 < DENSE_FACES {
            self.dense.get_mut(face.0 as usize)?.take()
        } else {
            self.sparse.remove(face)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table behaves as a map, on both sides of the dense bound.
    #[test]
    fn face_table_is_a_map() {
        let mut t: FaceTable<u32> = FaceTable::default();
        let mut model: std::collections::BTreeMap<FaceId, u32> = Default::default();
        let ids = [
            0,
            1,
            7,
            DENSE_FACES - 1,
            DENSE_FACES,
            DENSE_FACES + 5,
            u32::MAX,
        ];
        for (step, &id) in ids.iter().cycle().take(60).enumerate() {
            let f = FaceId(id);
            match step % 4 {
                0 => {
                    t.insert(f, step as u32);
                    model.insert(f, step as u32);
                }
                1 => {
                    *t.get_or_insert_with(f, || 100) += 1;
                    *model.entry(f).or_insert(100) += 1;
                }
                2 => assert_eq!(t.remove(&f), model.remove(&f), "remove {id}"),
                _ => {
                    if let (Some(a), Some(b)) = (t.get_mut(&f), model.get_mut(&f)) {
                        *a += 3;
                        *b += 3;
                    }
                }
            }
            for &other in &ids {
                let g = FaceId(other);
                assert_eq!(t.get(&g), model.get(&g), "step {step}, face {other}");
            }
        }
        assert!(t.dense.len() <= DENSE_FACES as usize);
    }
}
