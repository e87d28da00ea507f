//! Where the engine's I/O buffers lie in their one mapping (safe code; the mapping itself is
//! made in `uring.rs`).
//!
//! Every buffer is [`BLOCK`]-aligned for `O_DIRECT`. With huge pages, the mapping is advised
//! `MADV_HUGEPAGE` and no buffer crosses a [`HUGE_PAGE`] boundary (when it fits in one): a
//! read then lands in physically contiguous memory, which the block layer hands to the device
//! as one segment instead of one per 4 KiB page. On a virtio disk that halves the time the
//! device takes per 140 KiB read (`benches/results/hcs.md`, "Buffers in huge pages").

use crate::record::BLOCK;

/// The transparent huge page size (x86-64 and arm64 with 4 KiB base pages).
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Buffers needing less than this in total stay in base pages: a huge page would cost more
/// memory than it saves in segments.
pub(crate) const HUGE_MIN: usize = HUGE_PAGE / 2;

/// The placement of `n` buffers of `buf_len` bytes in one mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Length of each buffer (a multiple of [`BLOCK`]).
    pub(crate) buf_len: usize,
    /// Offset of each buffer from the start of the data region.
    pub(crate) offsets: Vec<usize>,
    /// Length of the data region (a multiple of [`HUGE_PAGE`] when `huge`).
    pub(crate) data_len: usize,
    /// Whether the data region is to be [`HUGE_PAGE`]-aligned and advised for huge pages.
    pub(crate) huge: bool,
}

impl Layout {
    /// `n` buffers of at least `len` bytes; in huge pages if `huge` is asked for and the
    /// buffers need at least [`HUGE_MIN`] bytes.
    pub(crate) fn new(len: usize, n: usize, huge: bool) -> Self {
        let buf_len = len.div_ceil(BLOCK).max(1) * BLOCK;
        let n = n.max(1);
        let huge = huge && buf_len * n >= HUGE_MIN;
        if !huge {
            return Self {
                buf_len,
                offsets: (0..n).map(|i| i * buf_len).collect(),
                data_len: n * buf_len,
                huge,
            };
        }
        // As many whole buffers per huge page as fit; a buffer larger than a huge page is
        // laid out back to back with the next one (it spans pages anyway).
        let per = (HUGE_PAGE / buf_len).max(1);
        let offsets: Vec<usize> = if buf_len <= HUGE_PAGE {
            (0..n)
                .map(|i| (i / per) * HUGE_PAGE + (i % per) * buf_len)
                .collect()
        } else {
            (0..n).map(|i| i * buf_len).collect()
        };
        let end = offsets.last().map_or(0, |o| o + buf_len);
        Self {
            buf_len,
            offsets,
            data_len: end.div_ceil(HUGE_PAGE) * HUGE_PAGE,
            huge,
        }
    }
}

/// Bytes of the mapping that contains `addr` backed by transparent huge pages, from
/// `/proc/self/smaps` (`AnonHugePages`); 0 if it cannot be read.
pub(crate) fn huge_bytes_at(addr: usize) -> usize {
    std::fs::read_to_string("/proc/self/smaps").map_or(0, |s| huge_bytes_in(&s, addr))
}

/// [`huge_bytes_at`] on the text of an `smaps` file.
fn huge_bytes_in(smaps: &str, addr: usize) -> usize {
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-')
            && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            inside = (a..b).contains(&addr);
            continue;
        }
        if inside && let Some(kb) = line.strip_prefix("AnonHugePages:") {
            return kb
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<usize>()
                .map_or(0, |k| k * 1024);
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_buffers_stay_in_base_pages_back_to_back() {
        let l = Layout::new(12_000, 6, true);
        assert!(!l.huge);
        assert_eq!(l.buf_len, 12_288);
        assert_eq!(l.offsets, (0..6).map(|i| i * 12_288).collect::<Vec<_>>());
        assert_eq!(l.data_len, 6 * 12_288);
        let l = Layout::new(1, 1, false);
        assert_eq!((l.buf_len, l.data_len), (BLOCK, BLOCK));
    }

    #[test]
    fn huge_page_buffers_never_cross_a_huge_page_boundary() {
        // The benchmark's buffers: 36 of 147,456 bytes, 14 per huge page.
        for (len, n) in [
            (147_456, 36),
            (143_360, 32),
            (1 << 20, 5),
            (4096, 600),
            (700_000, 9),
        ] {
            let l = Layout::new(len, n, true);
            assert!(l.huge);
            assert_eq!(l.data_len % HUGE_PAGE, 0);
            for w in l.offsets.windows(2) {
                assert!(w[1] >= w[0] + l.buf_len, "overlap in {l:?}");
            }
            for &o in &l.offsets {
                assert_eq!(o % BLOCK, 0);
                assert_eq!(o / HUGE_PAGE, (o + l.buf_len - 1) / HUGE_PAGE, "{len}: {o}");
                assert!(o + l.buf_len <= l.data_len);
            }
            // No huge page is wasted.
            assert!(l.data_len - l.offsets[n - 1] - l.buf_len < HUGE_PAGE);
        }
        assert_eq!(Layout::new(147_456, 36, true).data_len, 3 * HUGE_PAGE);
    }

    #[test]
    fn buffers_larger_than_a_huge_page_lie_back_to_back() {
        let l = Layout::new(3 << 20, 3, true);
        assert_eq!(l.offsets, vec![0, 3 << 20, 6 << 20]);
        assert_eq!(l.data_len, 10 << 20);
    }

    #[test]
    fn smaps_gives_the_huge_bytes_of_the_mapping_holding_the_address() {
        let smaps = "\
7f0000000000-7f0000600000 rw-p 00000000 00:00 0
Size:               6144 kB
AnonHugePages:      4096 kB
7f0000600000-7f0000601000 rw-p 00000000 00:00 0
Size:                  4 kB
AnonHugePages:         0 kB
";
        assert_eq!(huge_bytes_in(smaps, 0x7f00_0000_0000), 4 << 20);
        assert_eq!(huge_bytes_in(smaps, 0x7f00_005f_ffff), 4 << 20);
        assert_eq!(huge_bytes_in(smaps, 0x7f00_0060_0000), 0);
        assert_eq!(huge_bytes_in(smaps, 0x1000), 0);
        assert_eq!(huge_bytes_in("garbage\nAnonHugePages: 8 kB\n", 5), 0);
        // The live file parses (an address in no mapping gives 0).
        assert_eq!(huge_bytes_at(0), 0);
    }
}
