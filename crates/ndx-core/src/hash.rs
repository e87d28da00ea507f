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
    #[inline]
    pub fn hash(&self, bytes: &[u8]) -> u64 {
        let mut s = Sip::new(self);
        let full = bytes.len() & !7;
        let mut at = 0;
        while at < full {
            s.compress(word_at(bytes, at));
            at += 8;
        }
        s.finish_word(tail_word(bytes, at, bytes.len()), bytes.len())
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
#[derive(Clone, Copy, Debug)]
struct Sip {
    v0: u64,
    v1: u64,
    v2: u64,
    v3: u64,
}

impl Sip {
    const fn new(k: &HashKey) -> Self {
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

    fn finish(self, tail: &[u8], total_len: usize) -> u64 {
        let mut last = 0;
        for (i, &b) in tail.iter().enumerate().take(7) {
            last |= u64::from(b) << (8 * i);
        }
        self.finish_word(last, total_len)
    }

    /// Finalises with the last (0..=7) message bytes already packed little-endian in `tail`.
    #[inline]
    fn finish_word(mut self, tail: u64, total_len: usize) -> u64 {
        let last = tail | (total_len as u64 & 0xFF) << 56;
        self.compress(last);
        self.v2 ^= 0xFF;
        self.round();
        self.round();
        self.round();
        self.v0 ^ self.v1 ^ self.v2 ^ self.v3
    }
}

/// The little-endian word at `bytes[at..at + 8]` (0 if out of range, which callers avoid).
#[inline]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
        .map_or(0, u64::from_le_bytes)
}

/// `bytes[from..to]` (fewer than 8 bytes) packed little-endian: one 8-byte load and a mask
/// when the buffer extends far enough, else byte by byte.
#[inline]
fn tail_word(bytes: &[u8], from: usize, to: usize) -> u64 {
    let n = to - from;
    if n == 0 {
        return 0;
    }
    if from + 8 <= bytes.len() {
        return word_at(bytes, from) & (u64::MAX >> (64 - 8 * n as u32));
    }
    let mut w = 0;
    for (i, &b) in bytes
        .get(from..to)
        .unwrap_or(&[])
        .iter()
        .enumerate()
        .take(7)
    {
        w |= u64::from(b) << (8 * i);
    }
    w
}

/// A VAR-NUMBER at `at` in an already validated name: (value, next offset).
#[inline]
fn varnum(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let b = *bytes.get(at)?;
    let wide = |n: usize| -> Option<(usize, usize)> {
        let mut v = 0usize;
        for &x in bytes.get(at + 1..at + 1 + n)? {
            v = v << 8 | usize::from(x);
        }
        Some((v, at + 1 + n))
    };
    match b {
        0..=252 => Some((usize::from(b), at + 1)),
        253 => wide(2),
        254 => wide(4),
        255 => wide(8),
    }
}

/// Writes the hash of every prefix of `name` (lengths 1..=len) into `out[0..len]` and returns
/// how many were written (at most `out.len()`).
///
/// One pass over the name: full 8-byte words are compressed once and shared by all prefixes;
/// each prefix only pays for its finalisation. The pipelines use [`NameHashes`], which
/// finalises only the prefixes a lookup asks for.
pub fn prefix_hashes(key: &HashKey, name: &Name<'_>, out: &mut [u64]) -> usize {
    let bytes = name.as_bytes();
    let mut s = Sip::new(key);
    let mut consumed = 0; // bytes compressed into `s`
    let mut end = 0;
    let mut n = 0;
    for slot in out.iter_mut() {
        let Some(next) = component_end(bytes, end) else {
            break;
        };
        end = next;
        while consumed + 8 <= end {
            s.compress(word_at(bytes, consumed));
            consumed += 8;
        }
        *slot = s.finish_word(tail_word(bytes, consumed, end), end);
        n += 1;
    }
    n
}

/// End offset of the component TLV starting at `at` (None at the end of the name).
#[inline]
fn component_end(bytes: &[u8], at: usize) -> Option<usize> {
    let rest = bytes.get(at..)?;
    // The usual component: one-byte TLV-TYPE and TLV-LENGTH.
    if let [0..=252, l @ 0..=252, ..] = rest {
        let end = at + 2 + usize::from(*l);
        return (end <= bytes.len()).then_some(end);
    }
    if rest.is_empty() {
        return None;
    }
    let (_, after_type) = varnum(bytes, at)?;
    let (len, value) = varnum(bytes, after_type)?;
    let end = value.checked_add(len)?;
    (end <= bytes.len()).then_some(end)
}

/// Deepest prefix whose hash [`NameHashes`] keeps (as deep as the FIB goes).
pub const HASHED_DEPTH: usize = 32;

/// The keyed hashes of one name's prefixes, computed once per packet and only as deep as the
/// tables ask. [`NameHashes::new`] hashes the whole name in one SipHash pass and keeps the
/// SipHash state at the last whole word before the end of the `stage1`-component prefix (the
/// FIB's first stage), so a prefix hash resumes from it instead of starting over. Component
/// boundaries are found only as far as asked: a CS hit, which needs the whole name's hash
/// alone, walks no further than `stage1` components and finalises no prefix hash. Every value
/// equals [`HashKey::hash`] of the prefix's bytes.
#[derive(Clone, Debug)]
pub struct NameHashes<'a> {
    key: HashKey,
    name: Name<'a>,
    /// Components whose end offsets are in `ends` so far (see `walk_to`).
    walked: usize,
    /// True once the walk can go no further (the end of the name, `HASHED_DEPTH`, or an
    /// offset beyond 16 bits: deeper prefixes take the slow path).
    walk_done: bool,
    /// `ends[k]`: byte length of the `k`-component prefix, for `k <= walked`.
    ends: [u16; HASHED_DEPTH + 1],
    /// Prefix hashes computed so far, direct-mapped by depth (`k % MEMO`): depth (`NO_DEPTH`
    /// when empty) and hash. A lookup is one compare; depths `MEMO` apart evict each other
    /// (a FIB lookup asks for consecutive depths, which never do).
    memo_k: [u8; MEMO],
    memo_h: [u64; MEMO],
    full: u64,
    /// SipHash state after the whole words of the `ckpt_at`-byte prefix (a resume point).
    ckpt: Sip,
    ckpt_at: usize,
}

/// Prefix hashes remembered per name (a FIB lookup asks for two or three).
const MEMO: usize = 4;
const NO_DEPTH: u8 = u8::MAX;

impl<'a> NameHashes<'a> {
    /// The hashes of the empty name under a zero key: a placeholder for
    /// [`reset`](Self::reset) to overwrite.
    pub const EMPTY: NameHashes<'static> = NameHashes::empty();

    /// [`EMPTY`](Self::EMPTY), built where it is written: a burst slot gets a few stores
    /// (zeros, mostly), where copying the 200-byte constant in is a `memcpy` call.
    #[inline(always)]
    pub const fn empty() -> NameHashes<'static> {
        NameHashes {
            key: HashKey::new(0, 0),
            name: Name::EMPTY,
            walked: 0,
            walk_done: true,
            ends: [0; HASHED_DEPTH + 1],
            // The empty name is its only prefix: the memo and the resume point are never read
            // (every depth answers with `full`).
            memo_k: [0; MEMO],
            memo_h: [0; MEMO],
            full: 0,
            ckpt: Sip {
                v0: 0,
                v1: 0,
                v2: 0,
                v3: 0,
            },
            ckpt_at: 0,
        }
    }

    /// Hashes `name` whole, and prepares its `stage1`-component prefix (walked, hashed on
    /// first use from a state kept on the way).
    pub fn new(key: &HashKey, name: &Name<'a>, stage1: usize) -> Self {
        let mut h = NameHashes::empty();
        h.reset(key, name, stage1);
        h
    }

    /// Makes these the hashes of `name` (as [`new`](Self::new) would), in place: the burst
    /// path rewrites its slots rather than building 200 bytes and copying them in.
    #[inline]
    pub fn reset(&mut self, key: &HashKey, name: &Name<'a>, stage1: usize) {
        let bytes = name.as_bytes();
        self.key = *key;
        self.name = *name;
        self.walked = 0;
        self.walk_done = false;
        // `ends[0]` is the empty prefix; deeper ends are written before they are read.
        self.ends[0] = 0;
        self.memo_k = [NO_DEPTH; MEMO];
        // The checkpoint: the last word boundary at or before the stage-1 prefix's end.
        let m = stage1.min(name.len().saturating_sub(1));
        let mut ckpt_at = 0;
        if m > 0 {
            self.walk_to(m);
            if self.walked >= m {
                ckpt_at = usize::from(self.ends[m]) & !7;
            }
        }
        let mut s = Sip::new(key);
        let mut consumed = 0;
        while consumed + 8 <= ckpt_at {
            s.compress(word_at(bytes, consumed));
            consumed += 8;
        }
        self.ckpt = s;
        self.ckpt_at = consumed;
        let total = bytes.len();
        while consumed + 8 <= total {
            s.compress(word_at(bytes, consumed));
            consumed += 8;
        }
        self.full = s.finish_word(tail_word(bytes, consumed, total), total);
    }

    /// Records component ends until `k` components are walked or the walk is done.
    #[inline]
    fn walk_to(&mut self, k: usize) {
        let target = k.min(HASHED_DEPTH);
        if self.walked >= target || self.walk_done {
            return;
        }
        // In locals, written back once.
        let bytes = self.name.as_bytes();
        let mut walked = self.walked;
        let mut end = usize::from(self.ends[walked]);
        while walked < target {
            match component_end(bytes, end).and_then(|n| u16::try_from(n).ok().map(|s| (n, s))) {
                Some((next, short)) => {
                    end = next;
                    walked += 1;
                    self.ends[walked] = short;
                }
                None => {
                    self.walk_done = true;
                    break;
                }
            }
        }
        self.walked = walked;
    }

    #[inline]
    fn remember(&mut self, k: usize, hash: u64) {
        let i = k % MEMO;
        self.memo_k[i] = k as u8;
        self.memo_h[i] = hash;
    }

    /// The name.
    pub fn name(&self) -> &Name<'a> {
        &self.name
    }

    /// Hash of the whole name.
    #[inline]
    pub fn full(&self) -> u64 {
        self.full
    }

    /// Components whose prefixes are cheap to hash here (at most [`HASHED_DEPTH`]; prefix
    /// hashes beyond it hash the prefix's bytes from the start).
    pub fn depth(&mut self) -> usize {
        self.walk_to(HASHED_DEPTH);
        self.walked
    }

    /// The bytes of the first `k` components (the whole name when `k >= len`).
    #[inline]
    pub fn prefix_bytes(&self, k: usize) -> &'a [u8] {
        if k > self.walked {
            return self.name.prefix(k).as_bytes();
        }
        let bytes = self.name.as_bytes();
        bytes.get(..usize::from(self.ends[k])).unwrap_or(bytes)
    }

    /// Hash of the first `k` components (the whole name when `k >= len`), computed on first
    /// use.
    #[inline]
    pub fn prefix(&mut self, k: usize) -> u64 {
        if let Some(h) = self.cached(k) {
            return h;
        }
        self.walk_to(k);
        if k > self.walked {
            return self.key.name(&self.name.prefix(k));
        }
        let h = self.compute(k);
        self.remember(k, h);
        h
    }

    /// The hash of prefix `k` if it is already computed.
    #[inline]
    pub fn cached(&self, k: usize) -> Option<u64> {
        if k >= self.name.len() {
            return Some(self.full);
        }
        // Only depths up to `HASHED_DEPTH` are remembered (`NO_DEPTH` is not one of them).
        let i = k % MEMO;
        (k <= HASHED_DEPTH && usize::from(self.memo_k[i]) == k).then_some(self.memo_h[i])
    }

    fn compute(&self, k: usize) -> u64 {
        let bytes = self.name.as_bytes();
        let end = usize::from(self.ends[k]);
        let (mut s, mut consumed) = if self.ckpt_at <= end {
            (self.ckpt, self.ckpt_at)
        } else {
            (Sip::new(&self.key), 0)
        };
        while consumed + 8 <= end {
            s.compress(word_at(bytes, consumed));
            consumed += 8;
        }
        s.finish_word(tail_word(bytes, consumed, end), end)
    }
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

    proptest::proptest! {
        /// Every prefix hash of [`NameHashes`], asked for in any order, equals the hash of the
        /// prefix's bytes, for names of any depth (beyond `HASHED_DEPTH` too).
        #[test]
        fn name_hashes_equal_hashes_of_prefixes(
            k0: u64,
            k1: u64,
            comps in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20), 0..40),
            stage1 in 0usize..6,
            order in proptest::collection::vec(0usize..42, 0..12),
        ) {
            let key = HashKey::new(k0, k1);
            let mut name = NameBuf::new();
            for c in &comps {
                name.push_generic(c);
            }
            let n = name.as_name();
            // Built fresh, and reset in place over the hashes of another name (its memo and
            // component ends filled in) under another key, as a burst slot is reused.
            let mut other = NameBuf::new();
            for c in comps.iter().rev().take(5) {
                other.push_generic(&[c.as_slice(), b"x"].concat());
            }
            let o = other.as_name();
            let mut reused = NameHashes::new(&HashKey::new(k1, k0), &o, 1);
            for k in 0..8 {
                reused.prefix(k);
            }
            reused.reset(&key, &n, stage1);
            for mut h in [NameHashes::new(&key, &n, stage1), reused] {
                proptest::prop_assert_eq!(h.full(), key.name(&n));
                for &k in &order {
                    proptest::prop_assert_eq!(h.prefix(k), key.name(&n.prefix(k)), "prefix {}", k);
                    proptest::prop_assert_eq!(h.prefix_bytes(k), n.prefix(k).as_bytes());
                }
            }
            let mut all = [0u64; 40];
            let got = prefix_hashes(&key, &n, &mut all);
            proptest::prop_assert_eq!(got, n.len().min(40));
            for (i, v) in all[..got].iter().enumerate() {
                proptest::prop_assert_eq!(*v, key.name(&n.prefix(i + 1)));
            }
        }
    }

    #[test]
    fn depth_255_is_not_mistaken_for_an_empty_memo_slot() {
        // The memo marks empty slots with depth 255: a prefix of exactly 255 components (a
        // CanBePrefix match walks every depth of a long Data name) is hashed, not read from it.
        let key = HashKey::new(5, 6);
        let mut name = NameBuf::new();
        for _ in 0..300 {
            name.push_generic(b"c");
        }
        let n = name.as_name();
        let mut h = NameHashes::new(&key, &n, 2);
        for k in [255, 254, 256, 3, 255] {
            assert_eq!(h.prefix(k), key.name(&n.prefix(k)), "prefix {k}");
        }
    }

    #[test]
    fn name_hashes_of_a_huge_name() {
        // Offsets beyond 16 bits leave the fast path; hashes stay right.
        let key = HashKey::new(3, 4);
        let mut name = NameBuf::new();
        name.push_generic(b"a")
            .push_generic(&vec![7u8; 70_000])
            .push_generic(b"b")
            .push_generic(b"c");
        let n = name.as_name();
        let mut h = NameHashes::new(&key, &n, 2);
        assert_eq!(h.depth(), 1);
        for k in [3, 0, 1, 2, 4, 9] {
            assert_eq!(h.prefix(k), key.name(&n.prefix(k)), "prefix {k}");
            assert_eq!(h.prefix_bytes(k), n.prefix(k).as_bytes());
        }
        assert_eq!(h.full(), key.name(&n));
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
