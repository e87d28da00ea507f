//! Block-aligned heap buffers for `O_DIRECT` I/O, in safe code: over-allocate and use the
//! aligned window.

use crate::record::BLOCK;

/// A zeroed heap buffer whose start is aligned to [`BLOCK`] bytes. The bytes never move while
/// the buffer lives (moving the struct moves only the pointer), so it can be registered with
/// io_uring.
#[derive(Debug)]
pub(crate) struct AlignedBuf {
    raw: Box<[u8]>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// A buffer of `len` bytes rounded up to a multiple of [`BLOCK`].
    pub(crate) fn new(len: usize) -> Self {
        let len = len.div_ceil(BLOCK).max(1) * BLOCK;
        let raw = vec![0u8; len + BLOCK].into_boxed_slice();
        let start = raw.as_ptr().align_offset(BLOCK);
        Self { raw, start, len }
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The aligned bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }

    /// The aligned bytes, mutably.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_rounded() {
        for len in [1, BLOCK, BLOCK + 1, 150_000] {
            let mut b = AlignedBuf::new(len);
            assert_eq!(b.len() % BLOCK, 0);
            assert!(b.len() >= len);
            assert_eq!(b.as_slice().as_ptr() as usize % BLOCK, 0);
            b.as_mut_slice()[len - 1] = 7;
            assert_eq!(b.as_slice()[len - 1], 7);
        }
    }
}
