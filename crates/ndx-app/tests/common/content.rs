//! Deterministic test content (also included by path from `crates/ndx/tests/apps_unix.rs`).

/// `len` pseudo-random bytes from `seed` (xorshift64; an even seed is made odd).
pub fn content(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
