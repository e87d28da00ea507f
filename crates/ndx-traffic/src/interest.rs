//! Pre-encoded Interest templates: a name component and the Nonce are patched in place.

use ndx_codec::{Interest, InterestRepr, NameBuf};

use crate::Error;

/// An encoded Interest for `<prefix>/<8-byte id>`, with the id and the Nonce at known offsets.
#[derive(Debug, Clone)]
pub struct InterestTemplate {
    wire: Vec<u8>,
    id_at: usize,
    nonce_at: usize,
}

const ID_MARK: [u8; 8] = [0xa5, 0x5a, 0xc3, 0x3c, 0x96, 0x69, 0x0f, 0xf0];
const NONCE_MARK: u32 = 0x7e57_ab1e;

impl InterestTemplate {
    /// Encodes the template for `prefix` (an NDN URI) with this InterestLifetime. The id is the
    /// last name component (GenericNameComponent, 8 bytes, big-endian).
    pub fn new(prefix: &str, lifetime_ms: u64) -> Result<Self, Error> {
        let mut name =
            NameBuf::from_uri(prefix).map_err(|e| Error::Prefix(prefix.into(), e.to_string()))?;
        name.push_generic(&ID_MARK);
        let mut repr = InterestRepr::new(name);
        repr.nonce = Some(NONCE_MARK);
        repr.lifetime_ms = Some(lifetime_ms);
        let wire = repr.to_vec()?;
        let i = Interest::decode(&wire)?;
        let last = i
            .name()
            .last()
            .ok_or(Error::Template("no last component"))?;
        let id_at = offset_in(&wire, last.value()).ok_or(Error::Template("id not in wire"))?;
        let mark = [[0x0a, 0x04].as_slice(), &NONCE_MARK.to_be_bytes()].concat();
        let nonce_at = wire
            .windows(6)
            .position(|w| w == mark.as_slice())
            .ok_or(Error::Template("nonce not found"))?
            + 2;
        Ok(Self {
            wire,
            id_at,
            nonce_at,
        })
    }

    /// Writes id and nonce into the template; returns the Interest bytes.
    pub fn patch(&mut self, id: u64, nonce: u32) -> &[u8] {
        self.wire[self.id_at..self.id_at + 8].copy_from_slice(&id.to_be_bytes());
        self.wire[self.nonce_at..self.nonce_at + 4].copy_from_slice(&nonce.to_be_bytes());
        &self.wire
    }

    /// Length of the encoded Interest.
    pub fn len(&self) -> usize {
        self.wire.len()
    }

    /// Always false (an Interest has a name).
    pub fn is_empty(&self) -> bool {
        self.wire.is_empty()
    }
}

/// Where `part` (a subslice of `whole`) starts in `whole`.
pub(crate) fn offset_in(whole: &[u8], part: &[u8]) -> Option<usize> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then_some(start)
}

/// The id carried by a name built from a template: its last component, if it is 8 bytes.
pub fn id_of(name: &ndx_codec::Name<'_>) -> Option<u64> {
    let v = name.last()?.value();
    Some(u64::from_be_bytes(v.try_into().ok()?))
}

/// Nonces that do not repeat for 2^32 Interests: an odd-multiplier sequence from a seed.
#[derive(Debug, Clone)]
pub struct Nonces(u32);

impl Nonces {
    /// Starts from a seed (e.g. the time, so runs differ).
    pub fn new(seed: u32) -> Self {
        Self(seed)
    }

    /// The next nonce.
    pub fn next_nonce(&mut self) -> u32 {
        // A counter times an odd constant: a bijection on u32, so no repeat for 2^32 calls.
        self.0 = self.0.wrapping_add(1);
        self.0.wrapping_mul(0x85eb_ca6b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patched_template_decodes_with_id_and_nonce() {
        let mut t = InterestTemplate::new("/bench/a", 1000).unwrap();
        for (id, nonce) in [(0u64, 1u32), (u64::MAX, 0xdead_beef), (42, 7)] {
            let w = t.patch(id, nonce).to_vec();
            let i = Interest::decode(&w).unwrap();
            assert_eq!(id_of(&i.name()), Some(id));
            assert_eq!(i.nonce(), Some(nonce));
            assert_eq!(i.lifetime_ms(), Some(1000));
            assert_eq!(i.name().len(), 3);
        }
    }

    #[test]
    fn nonces_do_not_repeat_soon() {
        let mut n = Nonces::new(12345);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            assert!(seen.insert(n.next_nonce()));
        }
    }
}
