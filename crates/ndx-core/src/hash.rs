//! Keyed name hashing: SipHash-1-3 over the component bytes, computed for every prefix in one
//! pass.
//!
//! Every table (FIB, PIT, CS) and the shard dispatch hash names with a per-router random key,
//! so a remote sender cannot aim collisions at one bucket (DESIGN.md, "Tables"). Because a
//! name's first `k` components are a byte prefix of its encoding (see `ndx_codec::Name`),
//! the hash of prefix `k` is the hash of those bytes, and [`prefix_hashes`] produces all of
//! them while reading the name once.

use ndx_codec::Name;

/// A 128-bit SipHash key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashKey {
    k0: u64,
    k1: u64,
}

impl HashKey {
    /// A key from two 64-bit halves (the router draws them from the OS at start-up).
    pub const fn new(k0: u64, k1: u64) -> Self {
        Self { k0, k1 }
    }

    /// Hashes `bytes` with SipHash-1-3.
    pub fn hash(&self, bytes: &[u8]) -> u64 {
        let mut s = Sip::new(self);
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            s.compress(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        s.finish(chunks.remainder(), bytes.len())
    }

    /// Hash of a whole name.
    pub fn name(&self, name: &Name<'_>) -> u64 {
        self.hash(name.as_bytes())
    }

    /// Hash of the concatenation of `parts`, without copying them together.
    pub fn hash_parts(&self, parts: &[&[u8]]) -> u64 {
        let mut s = Sip::new(self);
        let mut word = [0u8; 8];
        let mut fill = 0;
        let mut total = 0;
        for part in parts {
            for &b in *part {
                word[fill] = b;
                fill += 1;
                if fill == 8 {
                    s.compress(u64::from_le_bytes(word));
                    fill = 0;
                }
            }
            total += part.len();
        }
        s.finish(&word[..fill], total)
    }
}

/// SipHash state (c = 1 compression round, d = 3 finalisation rounds).
#[derive(Clone, Copy)]
struct Sip {
    v0: u64,
    v1: u64,
    v2: u64,
    v3: u64,
}

impl Sip {
    fn new(k: &HashKey) -> Self {
        Self {
            v0: k.k0 ^ 0x736f_6d65_7073_6575,
            v1: k.k1 ^ 0x646f_7261_6e64_6f6d,
            v2: k.k0 ^ 0x6c79_6765_6e65_7261,
            v3: k.k1 ^ 0x7465_6462_7974_6573,
        }
    }

    #[inline]
    fn round(&mut self) {
        self.v0 = self.v0.wrapping_add(self.v1);
        self.v1 = self.v1.rotate_left(13) ^ self.v0;
        self.v0 = self.v0.rotate_left(32);
        self.v2 = self.v2.wrapping_add(self.v3);
        self.v3 = self.v3.rotate_left(16) ^ self.v2;
        self.v0 = self.v0.wrapping_add(self.v3);
        self.v3 = self.v3.rotate_left(21) ^ self.v0;
        self.v2 = self.v2.wrapping_add(self.v1);
        self.v1 = self.v1.rotate_left(17) ^ self.v2;
        self.v2 = self.v2.rotate_left(32);
    }

    #[inline]
    fn compress(&mut self, m: u64) {
        self.v3 ^= m;
        self.round();
        self.v0 ^= m;
    }

    fn finish(mut self, tail: &[u8], total_len: usize) -> u64 {
        let mut last = (total_len as u64 & 0xFF) << 56;
        for (i, &b) in tail.iter().enumerate().take(7) {
            last |= u64::from(b) << (8 * i);
        }
        self.compress(last);
        self.v2 ^= 0xFF;
        self.round();
        self.round();
        self.round();
        self.v0 ^ self.v1 ^ self.v2 ^ self.v3
    }
}

/// Writes the hash of every prefix of `name` (lengths 1..=len) into `out[0..len]` and returns
/// how many were written (at most `out.len()`).
///
/// One pass over the name: full 8-byte words are compressed once and shared by all prefixes;
/// each prefix only pays for its finalisation.
pub fn prefix_hashes(key: &HashKey, name: &Name<'_>, out: &mut [u64]) -> usize {
    let bytes = name.as_bytes();
    let mut s = Sip::new(key);
    let mut consumed = 0; // bytes compressed into `s`
    let mut end = 0;
    let mut n = 0;
    for (slot, c) in out.iter_mut().zip(name.components()) {
        end += c.wire().len();
        while consumed + 8 <= end {
            let w = bytes.get(consumed..consumed + 8).unwrap_or(&[0; 8]);
            s.compress(u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
            consumed += 8;
        }
        *slot = s.finish(bytes.get(consumed..end).unwrap_or(&[]), end);
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndx_codec::NameBuf;

    #[test]
    fn matches_published_siphash13_vector() {
        // SipHash-1-3, key 00 01 .. 0f, empty input.
        let key = HashKey::new(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);
        assert_eq!(key.hash(&[]), 0xabac_0158_050f_c4dc);
    }

    proptest::proptest! {
        #[test]
        fn matches_reference_siphash13(k0: u64, k1: u64, bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100)) {
            use core::hash::Hasher;
            let mut reference = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
            reference.write(&bytes);
            proptest::prop_assert_eq!(HashKey::new(k0, k1).hash(&bytes), reference.finish());
        }
    }

    #[test]
    fn prefix_hashes_equal_hashes_of_prefixes() {
        let key = HashKey::new(1, 2);
        let name =
            NameBuf::from_uri("/a/bb/ccccccccccccccccccc/d/seg=77/%00%01%02%03%04%05%06").unwrap();
        let n = name.as_name();
        let mut out = [0u64; 8];
        let k = prefix_hashes(&key, &n, &mut out);
        assert_eq!(k, n.len());
        for (i, h) in out[..k].iter().enumerate() {
            assert_eq!(*h, key.name(&n.prefix(i + 1)), "prefix {}", i + 1);
        }
        // A shorter output buffer stops early.
        assert_eq!(prefix_hashes(&key, &n, &mut out[..2]), 2);
    }

    #[test]
    fn hash_parts_equals_hash_of_concatenation() {
        let key = HashKey::new(5, 6);
        let whole: Vec<u8> = (0u8..40).collect();
        for cut in [0, 1, 7, 8, 9, 23, 40] {
            let (a, b) = whole.split_at(cut);
            assert_eq!(key.hash_parts(&[a, b]), key.hash(&whole), "cut {cut}");
        }
        assert_eq!(key.hash_parts(&[]), key.hash(&[]));
    }

    #[test]
    fn keys_change_hashes() {
        let n = NameBuf::from_uri("/a/b").unwrap();
        assert_ne!(
            HashKey::new(1, 2).name(&n.as_name()),
            HashKey::new(2, 1).name(&n.as_name())
        );
    }
}
