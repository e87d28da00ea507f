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
        s.compress_words(bytes.as_chunks().0);
        s.finish_word(tail_word(bytes, bytes.len()), bytes.len())
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

    /// Compresses whole little-endian words.
    #[inline]
    fn compress_words(&mut self, words: &[[u8; 8]]) {
        for w in words {
            self.compress(u64::from_le_bytes(*w));
        }
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

/// The message bytes after the last whole word of `bytes[..to]` (`bytes[to & !7..to]`, 0 to 7
/// of them) packed little-endian, as SipHash's last block takes them: one 8-byte load ending
/// at `to` and a shift (or, when `to < 8`, one starting at 0 and a mask) when `bytes` holds 8
/// bytes there, else byte by byte. `to <= bytes.len()`.
#[inline]
fn tail_word(bytes: &[u8], to: usize) -> u64 {
    let n = to & 7;
    if n == 0 {
        return 0;
    }
    let unused = 64 - 8 * n as u32;
    if to >= 8 {
        // The word ending at `to`: the tail is its last `n` bytes, the high ones.
        return word_at(bytes, to - 8) >> unused;
    }
    if bytes.len() >= 8 {
        return word_at(bytes, 0) & (u64::MAX >> unused);
    }
    let mut w = 0;
    for (i, &b) in bytes.get(..to).unwrap_or(&[]).iter().enumerate().take(7) {
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
        *slot = s.finish_word(tail_word(bytes, end), end);
        n += 1;
    }
    n
}

/// End offset of the component TLV starting at `at` (None at the end of the name).
#[inline]
fn component_end(bytes: &[u8], at: usize) -> Option<usize> {
    // The usual component: one-byte TLV-TYPE and TLV-LENGTH.
    if let Some([0..=252, l @ 0..=252, ..]) = bytes.get(at..) {
        let end = at + 2 + usize::from(*l);
        return (end <= bytes.len()).then_some(end);
    }
    wide_component_end(bytes, at)
}

/// [`component_end`] for a component with a multi-byte TLV-TYPE or TLV-LENGTH (or none: the
/// end of the name).
#[inline(never)]
fn wide_component_end(bytes: &[u8], at: usize) -> Option<usize> {
    let (_, after_type) = varnum(bytes, at)?;
    let (len, value) = varnum(bytes, after_type)?;
    let end = value.checked_add(len)?;
    (end <= bytes.len()).then_some(end)
}

/// Deepest prefix whose hash [`NameHashes`] keeps (as deep as the FIB goes).
pub const HASHED_DEPTH: usize = 32;

/// The keyed hashes of one name's prefixes, computed once per packet and only as deep as the
/// tables ask. [`NameHashes::new`] hashes the whole name in one SipHash pass, walks the
/// `stage1`-component prefix (the FIB's first stage) and keeps the SipHash state at its last
/// whole word, so a prefix hash resumes from it instead of starting over.
/// [`NameHashes::reset`] (the burst path, which prefetches those prefixes' FIB chunks next)
/// also finalises in that pass the stage-1 prefix's hash and, with `deeper`, that of the
/// prefix one component longer, keeping the state at the deeper one. Component boundaries are
/// found only as far as asked: a CS hit, which needs the whole name's hash alone, walks no
/// further than `stage1` components (one more with `deeper`), and after `new` finalises no
/// prefix hash. Every value equals [`HashKey::hash`] of the prefix's bytes.
#[derive(Clone, Debug)]
pub struct NameHashes<'a> {
    key: HashKey,
    name: Name<'a>,
    /// Components whose end offsets are in `ends` so far (see `walk_to`).
    walked: usize,
    /// True once the walk can go no further (the end of the name, or an offset beyond 16
    /// bits: deeper prefixes take the slow path).
    walk_done: bool,
    /// `ends[k]`: byte length of the `k`-component prefix, for `k <= walked`.
    ends: [u16; HASHED_DEPTH + 1],
    /// Prefix hashes computed so far, direct-mapped by depth (`k % MEMO`): depth and hash.
    /// Slot `i` holds a depth `k < name.len()` with `k % MEMO == i`, or `EMPTY_MEMO[i]`, which
    /// no depth looked up there equals. A lookup is one compare; depths `MEMO` apart evict
    /// each other (a FIB lookup asks for consecutive depths, which never do).
    memo_k: [u8; MEMO],
    memo_h: [u64; MEMO],
    full: u64,
    /// SipHash state after the whole words of the `ckpt_at`-byte prefix (a resume point).
    ckpt: Sip,
    ckpt_at: usize,
    /// The FIB lookup's start depth (its stage-1 marker, read by
    /// [`FibSnapshot::lpm_start`](crate::FibSnapshot::lpm_start)) and the generation of the
    /// snapshot it was read from ([`NO_HINT`] for none): the burst reads the marker a pass
    /// before the lookup, which then does not read it again.
    fib_start: u8,
    fib_generation: u64,
}

/// `NameHashes::fib_generation` when no FIB start depth is noted.
const NO_HINT: u64 = u64::MAX;

/// Prefix hashes remembered per name (a FIB lookup asks for two or three).
const MEMO: usize = 4;
/// The memo's empty tags: slot `i` holds `i + 1`, which is not `i` modulo `MEMO`.
const EMPTY_MEMO: [u8; MEMO] = [1, 2, 3, 4];

/// Compresses the whole words of `bytes[*at..to]` into `s` (`*at` a multiple of 8) and moves
/// `at` past them.
#[inline(always)]
fn compress_to(s: &mut Sip, bytes: &[u8], at: &mut usize, to: usize) {
    while *at + 8 <= to {
        s.compress(word_at(bytes, *at));
        *at += 8;
    }
}

/// [`compress_to`] `end`, then the hash of `bytes[..end]` (finalised from a copy of `s`).
#[inline(always)]
fn finish_at(s: &mut Sip, bytes: &[u8], at: &mut usize, end: usize) -> u64 {
    compress_to(s, bytes, at, end);
    s.finish_word(tail_word(bytes, end), end)
}

/// The end of the component at `at` if it ends within `limit` (at most the name's length).
#[inline(always)]
fn next_end(bytes: &[u8], at: usize, limit: usize) -> Option<usize> {
    let end = match usual_end(bytes, at) {
        Some(end) => end,
        None => wide_component_end(bytes, at)?,
    };
    (end <= limit).then_some(end)
}

/// The end of the component at `at` if its TLV-TYPE and TLV-LENGTH take a byte each (the
/// usual component; None for others, and at the end of the name). It may lie beyond `bytes`.
#[inline(always)]
fn usual_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at..at + 2) {
        Some(&[0..=252, l @ 0..=252]) => Some(at + 2 + usize::from(l)),
        _ => None,
    }
}

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
            // The empty name is its only prefix: every depth answers with `full`, the resume
            // point is never read.
            memo_k: EMPTY_MEMO,
            memo_h: [0; MEMO],
            full: 0,
            ckpt: Sip {
                v0: 0,
                v1: 0,
                v2: 0,
                v3: 0,
            },
            ckpt_at: 0,
            fib_start: 0,
            fib_generation: NO_HINT,
        }
    }

    /// Hashes `name` whole, and prepares its `stage1`-component prefix (walked, hashed on
    /// first use from a state kept on the way).
    #[inline]
    pub fn new(key: &HashKey, name: &Name<'a>, stage1: usize) -> Self {
        let mut h = NameHashes::empty();
        let _ = h.fill(key, name, stage1, false, false);
        h
    }

    /// Makes these the hashes of `name`, in place (the burst path rewrites its slots rather
    /// than building 200 bytes and copying them in), as [`new`](Self::new) would, and
    /// finalises during the pass the hash of the `stage1`-component prefix and, with `deeper`,
    /// of the prefix one component longer (those shorter than the name): the prefixes whose
    /// FIB chunks the burst path prefetches next, the second where the stage-1 marker usually
    /// sends the lookup. With `deeper` the resume point is kept at the deeper prefix.
    /// Returns those two hashes, each when it was finalised in the pass (the burst path
    /// prefetches with them at once, without asking the memo for them).
    #[inline]
    pub fn reset(
        &mut self,
        key: &HashKey,
        name: &Name<'a>,
        stage1: usize,
        deeper: bool,
    ) -> [Option<u64>; 2] {
        self.fill(key, name, stage1, true, deeper)
    }

    /// Makes these the hashes of `name`, in place, hashing the whole name alone: no component
    /// is walked and no prefix finalised (what a likely CS hit needs, the burst path's late
    /// speculation). A prefix asked for later is walked to and hashed from the start.
    #[inline]
    pub fn reset_whole(&mut self, key: &HashKey, name: &Name<'a>) {
        // Nothing walked and nothing staged: `fill`'s walk and eager prefixes fold away.
        let _ = self.fill(key, name, 0, false, false);
    }

    /// [`new`](Self::new) in place; `stage`, `deeper`: see [`reset`](Self::reset).
    #[inline(always)]
    fn fill(
        &mut self,
        key: &HashKey,
        name: &Name<'a>,
        stage1: usize,
        stage: bool,
        deeper: bool,
    ) -> [Option<u64>; 2] {
        let bytes = name.as_bytes();
        self.key = *key;
        self.name = *name;
        self.memo_k = EMPTY_MEMO;
        self.fib_generation = NO_HINT;
        self.walk_done = false;
        // `ends[0]` is the empty prefix; deeper ends are written before they are read.
        self.ends[0] = 0;
        // Walked now: the stage-1 prefix (the last-but-one component's end when the name is
        // not longer), with `deeper` one component further. The resume point is the last
        // word boundary of the deepest prefix walked.
        let last = name.len().saturating_sub(1).min(HASHED_DEPTH);
        let target = (stage1.min(HASHED_DEPTH) + usize::from(deeper)).min(last);
        let limit = bytes.len().min(usize::from(u16::MAX));
        let (mut walked, mut end) = (0, 0);
        while walked < target {
            match usual_end(bytes, end) {
                Some(next) if next <= limit => {
                    end = next;
                    walked += 1;
                    self.ends[walked] = end as u16;
                }
                _ => break,
            }
        }
        self.walked = walked;
        if walked < target {
            // A component with a wider TLV-TYPE or TLV-LENGTH, or an end beyond 16 bits: the
            // general way (which stops the walk for good at the latter).
            self.walk_on(target);
            walked = self.walked;
            end = self.ends.get(walked).map_or(0, |&e| usize::from(e));
        }
        let mut s = Sip::new(key);
        let mut at = 0; // bytes compressed into `s`
        // The eager prefixes are shorter than the name (`walked < len`).
        let mut eager = [None; 2];
        if stage && stage1 > 0 && stage1 <= walked {
            let h = finish_at(&mut s, bytes, &mut at, usize::from(self.ends[stage1]));
            self.memo_k[stage1 % MEMO] = stage1 as u8;
            self.memo_h[stage1 % MEMO] = h;
            eager[0] = Some(h);
        }
        if deeper && stage1 < walked {
            let deep = stage1 + 1;
            let h = finish_at(&mut s, bytes, &mut at, usize::from(self.ends[deep]));
            self.memo_k[deep % MEMO] = deep as u8;
            self.memo_h[deep % MEMO] = h;
            eager[1] = Some(h);
        }
        compress_to(&mut s, bytes, &mut at, end);
        self.ckpt = s;
        self.ckpt_at = at;
        let total = bytes.len();
        compress_to(&mut s, bytes, &mut at, total);
        self.full = s.finish_word(tail_word(bytes, total), total);
        eager
    }

    /// Records component ends until `k` components are walked or the walk is done.
    #[inline]
    fn walk_to(&mut self, k: usize) {
        let target = k.min(HASHED_DEPTH);
        if self.walked < target && !self.walk_done {
            self.walk_on(target);
        }
    }

    /// [`walk_to`](Self::walk_to) `target` (at most [`HASHED_DEPTH`]) from `walked`.
    #[inline(never)]
    fn walk_on(&mut self, target: usize) {
        // In locals, written back once.
        let bytes = self.name.as_bytes();
        let limit = bytes.len().min(usize::from(u16::MAX));
        let mut walked = self.walked;
        let mut end = usize::from(self.ends[walked]);
        while walked < target {
            let Some(next) = next_end(bytes, end, limit) else {
                self.walk_done = true;
                break;
            };
            end = next;
            walked += 1;
            self.ends[walked] = end as u16;
        }
        self.walked = walked;
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

    /// Notes `start` as the FIB lookup's start depth for this name in the snapshot of
    /// generation `generation` (see [`fib_start`](Self::fib_start)).
    #[inline(always)]
    pub(crate) fn note_fib_start(&mut self, generation: u64, start: usize) {
        // Start depths are at most `MAX_PREFIX_DEPTH` (32); a generation of `NO_HINT` is
        // never noted (it reads as none).
        if generation != NO_HINT
            && let Ok(start) = u8::try_from(start)
        {
            self.fib_start = start;
            self.fib_generation = generation;
        }
    }

    /// The FIB lookup's start depth noted for the snapshot of generation `generation`, if
    /// any. Rebuilding or resetting these hashes forgets it.
    #[inline(always)]
    pub(crate) fn fib_start(&self, generation: u64) -> Option<usize> {
        (self.fib_generation == generation).then_some(usize::from(self.fib_start))
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
    #[inline(always)]
    pub fn prefix(&mut self, k: usize) -> u64 {
        match self.cached(k) {
            Some(h) => h,
            None => self.uncached(k),
        }
    }

    /// The hash of prefix `k` if it is already computed.
    #[inline]
    pub fn cached(&self, k: usize) -> Option<u64> {
        let i = k % MEMO;
        if usize::from(self.memo_k[i]) == k {
            return Some(self.memo_h[i]);
        }
        (k >= self.name.len()).then_some(self.full)
    }

    /// [`prefix`](Self::prefix) of a `k < len` not in the memo: walks to it (a prefix one
    /// usual component past the walk right here, others in [`walk_on`](Self::walk_on)),
    /// hashes it from the resume point and remembers it; a prefix beyond the walk's reach
    /// (deeper than [`HASHED_DEPTH`], or past 16-bit offsets) is hashed from the start.
    #[inline(never)]
    fn uncached(&mut self, k: usize) -> u64 {
        if k > self.walked && !self.step_to(k) {
            self.walk_to(k);
            if k > self.walked {
                return self.key.name(&self.name.prefix(k));
            }
        }
        let h = self.compute(k);
        // `k <= walked <= HASHED_DEPTH` and `k < len` (else the memo lookup answered).
        let i = k % MEMO;
        self.memo_k[i] = k as u8;
        self.memo_h[i] = h;
        h
    }

    /// Walks one component, to `k`, if `k` is the next one and its TLV-TYPE and TLV-LENGTH
    /// take a byte each; false (nothing walked) otherwise.
    #[inline(always)]
    fn step_to(&mut self, k: usize) -> bool {
        let w = self.walked;
        if k != w + 1 || k > HASHED_DEPTH || self.walk_done {
            return false;
        }
        let bytes = self.name.as_bytes();
        let Some(end) = usual_end(bytes, usize::from(self.ends[w])) else {
            return false;
        };
        if end > bytes.len().min(usize::from(u16::MAX)) {
            return false;
        }
        self.ends[k] = end as u16;
        self.walked = k;
        true
    }

    /// The hash of prefix `k <= walked`, from the checkpoint (from the start when the prefix
    /// ends before it).
    #[inline(always)]
    fn compute(&self, k: usize) -> u64 {
        let bytes = self.name.as_bytes();
        let end = usize::from(self.ends[k]);
        let (mut s, mut at) = if self.ckpt_at <= end {
            (self.ckpt, self.ckpt_at)
        } else {
            (Sip::new(&self.key), 0)
        };
        while at + 8 <= end {
            s.compress(word_at(bytes, at));
            at += 8;
        }
        s.finish_word(tail_word(bytes, end), end)
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

    /// Appends a component: `kind` 0 gives it a three-byte TLV-TYPE, 1 a three-byte
    /// TLV-LENGTH (`value` padded past 252 bytes), others the usual one byte each.
    fn push_component(name: &mut NameBuf, kind: u8, value: &[u8]) {
        match kind {
            0 => {
                name.push(300, value).unwrap();
            }
            1 => {
                name.push_generic(&[value, &[0x5a; 260]].concat());
            }
            _ => {
                name.push_generic(value);
            }
        }
    }

    /// The ways a pipeline builds [`NameHashes`]: `new`, `reset` without and with `deeper`, and `reset_whole`
    /// over the hashes of another name (its memo and component ends filled in) under another
    /// key, as a burst slot is reused.
    fn built<'a>(key: &HashKey, n: &Name<'a>, stage1: usize) -> [NameHashes<'a>; 4] {
        static OTHER: std::sync::OnceLock<NameBuf> = std::sync::OnceLock::new();
        let o = OTHER
            .get_or_init(|| NameBuf::from_uri("/o/th/er/na/me/x/y/z").unwrap())
            .as_name();
        let mut built = [
            NameHashes::new(key, n, stage1),
            NameHashes::EMPTY,
            NameHashes::EMPTY,
            NameHashes::EMPTY,
        ];
        for (way, h) in built[1..].iter_mut().enumerate() {
            let mut stale = NameHashes::new(&HashKey::new(7, 7), &o, 1);
            for k in 0..8 {
                stale.prefix(k);
            }
            if way < 2 {
                let eager = stale.reset(key, n, stage1, way == 1);
                // What `reset` returns is what it finalised in the pass: the memo's values.
                for (i, (k, e)) in [stage1, stage1 + 1].into_iter().zip(eager).enumerate() {
                    // Finalised: a prefix shorter than the name within the walk's reach
                    // (the deeper one with `deeper` alone).
                    let finalised = (i == 0 || way == 1)
                        && k > 0
                        && k < n.len()
                        && k <= HASHED_DEPTH
                        && n.prefix(k).as_bytes().len() <= 0xFFFF;
                    let want = finalised.then(|| key.name(&n.prefix(k)));
                    assert_eq!(e, want, "way {way}, prefix {k}");
                    if e.is_some() {
                        assert_eq!(stale.cached(k), e, "prefix {k} in the memo");
                    }
                }
            } else {
                stale.reset_whole(key, n);
            }
            *h = stale;
        }
        built
    }

    /// Asks every depth of `n` (and beyond it) of each way of building its hashes, in
    /// ascending and in descending order, and checks them against the hashes of the prefixes'
    /// bytes.
    fn assert_every_prefix(key: &HashKey, n: &Name<'_>, stage1: usize) {
        let depths: Vec<usize> = (0..=n.len() + 2).collect();
        // Hashed in the pass by `reset`: the stage-1 prefix, and with `deeper` the next, when
        // shorter than the name and within the walk's reach.
        let eager = |k: usize| {
            k > 0 && k < n.len() && k <= HASHED_DEPTH && n.prefix(k).as_bytes().len() <= 0xFFFF
        };
        for order in [depths.clone(), depths.iter().rev().copied().collect()] {
            for (way, mut h) in built(key, n, stage1).into_iter().enumerate() {
                assert_eq!(h.full(), key.name(n));
                for (k, hashed) in [(stage1, way == 1 || way == 2), (stage1 + 1, way == 2)] {
                    if eager(k) {
                        let want = hashed.then(|| key.name(&n.prefix(k)));
                        assert_eq!(h.cached(k), want, "way {way}, prefix {k}");
                    }
                }
                for &k in &order {
                    let want = key.name(&n.prefix(k));
                    assert_eq!(h.prefix(k), want, "prefix {k} of {n:?}, stage 1 = {stage1}");
                    // Remembered unless beyond the walk (hashed from the start each time).
                    let kept = k >= n.len() || k <= h.walked;
                    assert_eq!(h.cached(k), kept.then_some(want), "prefix {k}");
                    assert_eq!(h.prefix_bytes(k), n.prefix(k).as_bytes());
                }
            }
        }
    }

    proptest::proptest! {
        /// Every prefix hash of [`NameHashes`], asked for in any order, equals the hash of the
        /// prefix's bytes, for names of any depth (beyond `HASHED_DEPTH` too), with wide
        /// components anywhere; `reset` has the stage-1 prefix (and with `deeper` the next)
        /// hashed before any is asked for, `new` none.
        #[test]
        fn name_hashes_equal_hashes_of_prefixes(
            k0: u64,
            k1: u64,
            comps in proptest::collection::vec(
                (0u8..12, proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20)),
                0..40,
            ),
            stage1 in 0usize..6,
            order in proptest::collection::vec(0usize..42, 0..12),
        ) {
            let key = HashKey::new(k0, k1);
            let mut name = NameBuf::new();
            for (kind, value) in &comps {
                push_component(&mut name, *kind, value);
            }
            let n = name.as_name();
            let len = n.len();
            for (way, mut h) in built(&key, &n, stage1).into_iter().enumerate() {
                proptest::prop_assert_eq!(h.full(), key.name(&n));
                // Computed in the pass: by `reset` the stage-1 prefix, and with `deeper` the
                // next, when shorter than the name.
                for k in 0..len {
                    let eager = ((way == 1 || way == 2) && k == stage1 && k > 0)
                        || (way == 2 && k == stage1 + 1);
                    let want = eager.then(|| key.name(&n.prefix(k)));
                    proptest::prop_assert_eq!(h.cached(k), want, "way {}, depth {}", way, k);
                }
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
    fn names_shorter_than_equal_to_and_longer_than_stage1() {
        // Stage 1 = 2: names of 0 to 6 components; `reset` hashes prefix 2 in the pass only
        // when the name is longer (prefix 2 of a 2-component name is the whole name), and
        // with `deeper` prefix 3 only when the name has more than 3 components.
        let key = HashKey::new(11, 12);
        let mut name = NameBuf::new();
        for len in 0..=6 {
            let n = name.as_name();
            let [fresh, shallow, deep, whole] = built(&key, &n, 2);
            for k in 1..len {
                assert_eq!(whole.cached(k), None, "{len}");
            }
            assert_eq!(fresh.cached(1), (len <= 1).then(|| key.name(&n)));
            assert_eq!(fresh.cached(2), (len <= 2).then(|| key.name(&n)));
            assert_eq!(shallow.cached(2), Some(key.name(&n.prefix(2))), "{len}");
            assert_eq!(shallow.cached(3), (len <= 3).then(|| key.name(&n)), "{len}");
            assert_eq!(deep.cached(2), Some(key.name(&n.prefix(2))), "{len}");
            assert_eq!(deep.cached(3), Some(key.name(&n.prefix(3))), "{len}");
            assert_eq!(deep.cached(4), (len <= 4).then(|| key.name(&n)), "{len}");
            assert_eq!(deep.cached(1), (len <= 1).then(|| key.name(&n)), "{len}");
            assert_every_prefix(&key, &n, 2);
            name.push_generic(format!("comp{len}").as_bytes());
        }
    }

    #[test]
    fn reset_whole_hashes_the_whole_name_alone() {
        // The burst path's late speculation: nothing walked, no prefix finalised in the pass;
        // every prefix is still right on first use, and remembered after it.
        let key = HashKey::new(21, 22);
        let name = NameBuf::from_uri("/net/site3/host197/video/obj12/seg=7").unwrap();
        let n = name.as_name();
        let mut h = NameHashes::new(&HashKey::new(9, 9), &n, 2);
        h.prefix(2);
        h.reset_whole(&key, &n);
        assert_eq!(h.walked, 0);
        assert_eq!(h.full(), key.name(&n));
        for k in 1..n.len() {
            assert_eq!(h.cached(k), None, "prefix {k} not hashed in the pass");
        }
        for k in [2, 3, 1, 6, 5] {
            assert_eq!(h.prefix(k), key.name(&n.prefix(k)), "prefix {k}");
            assert_eq!(
                h.cached(k),
                Some(key.name(&n.prefix(k))),
                "prefix {k} remembered"
            );
        }
        for stage1 in 0..=3 {
            assert_every_prefix(&key, &n, stage1);
        }
    }

    #[test]
    fn prefixes_ending_on_word_boundaries() {
        // Components of 8 bytes with their TLV header: every prefix ends on a word boundary,
        // so the eager prefixes and the whole name have no tail bytes and the resume point is
        // their end; then a 4-byte component moves the later ends off the boundary.
        let key = HashKey::new(13, 14);
        for uri in [
            "/abcdef/ghijkl/mnopqr/stuvwx",
            "/abcdef/ghijkl/mnopqr/stuvwx/yz/abcdef",
            "/abcdef/ghijkl",
        ] {
            let name = NameBuf::from_uri(uri).unwrap();
            let n = name.as_name();
            for stage1 in 0..=4 {
                assert_every_prefix(&key, &n, stage1);
            }
        }
        let name = NameBuf::from_uri("/abcdef/ghijkl/mnopqr").unwrap();
        let mut h = NameHashes::EMPTY;
        h.reset(&key, &name.as_name(), 1, true);
        assert_eq!((h.ends[1], h.ends[2], h.ckpt_at), (8, 16, 16));
    }

    #[test]
    fn tails_before_the_first_word() {
        // Prefixes ending before byte 8, in names shorter than a word (the bytes packed one by
        // one) and longer (one load, masked).
        let key = HashKey::new(15, 16);
        for uri in [
            "/",
            "/a",
            "/a/b",
            "/abcde",
            "/a/b/c",
            "/a/b/cdefghijkl",
            "/ab/cdefghijklmnop",
        ] {
            let name = NameBuf::from_uri(uri).unwrap();
            for stage1 in 0..=3 {
                assert_every_prefix(&key, &name.as_name(), stage1);
            }
        }
    }

    #[test]
    fn wide_components() {
        // A component with a three-byte TLV-TYPE or TLV-LENGTH at each position of a
        // 5-component name, before, at and after the stage-1 prefix: the walk takes the
        // general way there.
        let key = HashKey::new(17, 18);
        for kind in [0, 1] {
            for at in 0..5 {
                let mut name = NameBuf::new();
                for i in 0..5u8 {
                    push_component(&mut name, if i == at { kind } else { 2 }, &[b'a' + i; 3]);
                }
                let n = name.as_name();
                for stage1 in 1..=3 {
                    assert_every_prefix(&key, &n, stage1);
                }
                assert_eq!(NameHashes::new(&key, &n, 2).depth(), 5);
            }
        }
    }

    #[test]
    fn names_deeper_than_hashed_depth() {
        // Prefixes past `HASHED_DEPTH` are hashed from the start; the walk stops there.
        let key = HashKey::new(19, 20);
        let mut name = NameBuf::new();
        for i in 0..40 {
            name.push_generic(format!("c{i}").as_bytes());
        }
        let n = name.as_name();
        for stage1 in [2, 31, 32, 33] {
            assert_every_prefix(&key, &n, stage1);
        }
        for mut h in built(&key, &n, 2) {
            assert_eq!(h.depth(), HASHED_DEPTH);
        }
    }

    #[test]
    fn depth_255_is_not_mistaken_for_an_empty_memo_slot() {
        // The memo keeps depths in a byte: a prefix of 255 components or more (a CanBePrefix
        // match walks every depth of a long Data name) is hashed, not read from it.
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
        for mut h in built(&key, &n, 2) {
            assert_eq!(h.depth(), 1);
            for k in [3, 0, 1, 2, 4, 9] {
                assert_eq!(h.prefix(k), key.name(&n.prefix(k)), "prefix {k}");
                assert_eq!(h.prefix_bytes(k), n.prefix(k).as_bytes());
            }
            assert_eq!(h.full(), key.name(&n));
        }
        for stage1 in 0..=3 {
            assert_every_prefix(&key, &n, stage1);
        }
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
