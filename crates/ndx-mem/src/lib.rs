//! Transparent huge pages for the router's large tables.
//!
//! The forwarding tables (CS slab, slot metadata, hash indexes, PIT) are single large
//! allocations read at random; the FIB is 1,024 chunks of medium-sized arrays. With 4 KiB pages every random read of a multi-gigabyte table
//! also misses the TLB, and the page walk itself misses the cache: on the reference VM a
//! dependent random read over 2 GB costs 355–435 ns with 4 KiB pages and 210–260 ns with
//! 2 MiB pages. Debian ships THP in `madvise` mode, so a table gets huge pages only if
//! somebody asks for them.
//!
//! [`HugePages`] is a [`GlobalAlloc`] that asks: every allocation of at least
//! [`HUGE_THRESHOLD`] bytes is its own 2 MiB-aligned anonymous mapping advised with
//! `MADV_HUGEPAGE` before it is first touched. Medium allocations, from
//! [`MEDIUM_THRESHOLD`] (4 KiB, one base page) to 1 MiB, are blocks of the next power of two carved from
//! shared 2 MiB regions mapped the same way: the FIB is 1,024 chunks whose arrays stay below
//! 2 MiB even at 10^7 routes (so that a route change copies one small chunk), and the system
//! allocator would give each its own base-page mapping. Freed medium blocks are kept on a
//! free list per size for the next table that grows (regions are never unmapped). Smaller
//! allocations go to the system allocator unchanged. The tables stay plain `Vec`s in safe
//! code (`ndx-core` has no `unsafe`); the binary chooses the allocator:
//!
//! ```
//! #[global_allocator]
//! static ALLOC: ndx_mem::HugePages = ndx_mem::HugePages;
//!
//! let table = vec![0u64; 1 << 20]; // 8 MiB: its own mapping, 2 MiB aligned
//! assert_eq!(table.as_ptr() as usize % ndx_mem::HUGE_PAGE, 0);
//! ```
//!
//! When the kernel has THP disabled (`never`) the advice is ignored and the tables get
//! 4 KiB pages, as with the system allocator; [`thp_mode`] tells which. [`huge_bytes`] reads
//! how much of the process is backed by huge pages (`AnonHugePages` in
//! `/proc/self/smaps_rollup`), which `ndx` prints at start-up.
//!
//! The crate also holds the other small platform pieces of the hot paths: [`prefetch`]
//! (one `PREFETCHT0`) and [`LoopClock`] (the shard workers' clock, from the invariant
//! time-stamp counter).

#![allow(unsafe_code)]

mod clock;
pub use clock::LoopClock;

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Huge page size on x86-64 and aarch64 with 4 KiB base pages.
pub const HUGE_PAGE: usize = 2 << 20;

/// Allocations of at least this many bytes get their own huge-page mapping.
pub const HUGE_THRESHOLD: usize = HUGE_PAGE;

/// Allocations of at least this many bytes, and below [`HUGE_THRESHOLD`], are blocks of a
/// power-of-two size carved from shared huge-page regions (see [`HugePages`]).
pub const MEDIUM_THRESHOLD: usize = 4 << 10;

/// Block sizes of the medium classes: 4 KiB, 8 KiB, … 1 MiB (a larger medium allocation
/// takes a whole region).
const MEDIUM_CLASSES: usize =
    (HUGE_PAGE.trailing_zeros() - MEDIUM_THRESHOLD.trailing_zeros()) as usize;

/// Per medium class, the address of the first free block (0: none); each free block holds
/// the address of the next in its first word. Taken only when a medium block is allocated
/// or freed (table growth, the control plane), never per packet.
static FREE: std::sync::Mutex<[usize; MEDIUM_CLASSES]> = std::sync::Mutex::new([0; MEDIUM_CLASSES]);

/// Bytes currently mapped by [`HugePages`] for large allocations.
static MAPPED: AtomicUsize = AtomicUsize::new(0);

/// Whether new large mappings are advised `MADV_HUGEPAGE` ([`set_huge_pages`]).
static ADVISE: AtomicBool = AtomicBool::new(true);

/// Turns the huge-page advice for later large allocations on or off (on by default). Off,
/// large allocations are still separate mappings but get base pages: the reference point of
/// the benches, and `tables.huge_pages = false` in the router's configuration.
pub fn set_huge_pages(on: bool) {
    ADVISE.store(on, Ordering::Relaxed);
}

/// A global allocator giving large allocations transparent huge pages (see the crate docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct HugePages;

fn round_up(n: usize, to: usize) -> Option<usize> {
    n.checked_add(to - 1).map(|m| m & !(to - 1))
}

/// Maps `size` bytes (a multiple of [`HUGE_PAGE`]) at a [`HUGE_PAGE`]-aligned address and
/// advises huge pages; null on failure.
fn map_huge(size: usize) -> *mut u8 {
    let Some(span) = size.checked_add(HUGE_PAGE) else {
        return ptr::null_mut();
    };
    // SAFETY: an anonymous private mapping of `span` bytes at an address of the kernel's
    // choosing; no existing memory is affected.
    let raw = unsafe {
        libc::mmap(
            ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return ptr::null_mut();
    }
    let start = raw as usize;
    let aligned = (start + HUGE_PAGE - 1) & !(HUGE_PAGE - 1);
    let head = aligned - start;
    let tail = span - head - size;
    // SAFETY: both ranges lie inside the mapping made above, outside [aligned, aligned+size),
    // and nothing refers to them; unmapping page-aligned sub-ranges of a mapping is allowed.
    unsafe {
        if head > 0 {
            libc::munmap(raw, head);
        }
        if tail > 0 {
            libc::munmap((aligned + size) as *mut libc::c_void, tail);
        }
        // Advice only: without THP the mapping works with base pages.
        let advice = if ADVISE.load(Ordering::Relaxed) {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        libc::madvise(aligned as *mut libc::c_void, size, advice);
    }
    MAPPED.fetch_add(size, Ordering::Relaxed);
    aligned as *mut u8
}

/// Whether `layout` is served by [`map_huge`], and the mapping's size.
fn huge_size(layout: Layout) -> Option<usize> {
    if layout.size() >= HUGE_THRESHOLD && layout.align() <= HUGE_PAGE {
        round_up(layout.size(), HUGE_PAGE)
    } else {
        None
    }
}

/// Where [`HugePages`] serves a layout from: a pure function of the layout, so that `alloc`
/// and `dealloc` agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// The system allocator.
    System,
    /// A block of medium class `c` (`MEDIUM_THRESHOLD << c` bytes, aligned to its size), or
    /// with `c == MEDIUM_CLASSES` a whole region of its own.
    Medium(usize),
    /// Its own mapping of this many bytes.
    Huge(usize),
}

fn route(layout: Layout) -> Route {
    if let Some(size) = huge_size(layout) {
        return Route::Huge(size);
    }
    let size = layout.size();
    // Small, or large with an alignment beyond 2 MiB (`huge_size` declined it).
    if !(MEDIUM_THRESHOLD..HUGE_THRESHOLD).contains(&size) {
        return Route::System;
    }
    // Below 2 MiB here: the class's block is the next power of two, at least 4 KiB.
    let block = size.next_power_of_two();
    if layout.align() > block {
        return Route::System;
    }
    let c = (block.trailing_zeros() - MEDIUM_THRESHOLD.trailing_zeros()) as usize;
    if c >= MEDIUM_CLASSES {
        Route::Huge(HUGE_PAGE)
    } else {
        Route::Medium(c)
    }
}

/// A block of medium class `c`: the head of its free list, else a fresh region cut into
/// blocks of the class (the first returned, the rest listed). Null when no region can be
/// mapped. The block's contents are unspecified (zero when it comes from a fresh region,
/// except for its first word).
fn medium_alloc(c: usize) -> *mut u8 {
    let block = MEDIUM_THRESHOLD << c;
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    let head = free[c];
    if head != 0 {
        // SAFETY: `head` is a free block of this class (only `medium_dealloc` and the refill
        // below list blocks, with the lock held), whose first word holds the next one's
        // address; blocks are at least 4 KiB and aligned to their size, so the word is in
        // bounds and aligned.
        free[c] = unsafe { (head as *const usize).read() };
        return head as *mut u8;
    }
    let region = map_huge(HUGE_PAGE);
    if region.is_null() {
        return region;
    }
    let base = region as usize;
    // Listed from the region's end, so that blocks are handed out in address order.
    let mut next = 0usize;
    for i in (1..HUGE_PAGE / block).rev() {
        let b = base + i * block;
        // SAFETY: `b` lies inside the region just mapped (readable and writable, ours alone)
        // and is aligned to `block` (at least 4 KiB), so its first word is too.
        unsafe { (b as *mut usize).write(next) };
        next = b;
    }
    free[c] = next;
    region
}

/// Returns a block of medium class `c` to its free list (the region is never unmapped: the
/// tables that shrink grow again).
///
/// # Safety
/// `ptr` must be a block of class `c` from [`medium_alloc`] that is no longer in use.
unsafe fn medium_dealloc(ptr: *mut u8, c: usize) {
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the caller hands the block back: it is ours, at least 4 KiB, and aligned to
    // its size, so its first word can hold the link.
    unsafe { ptr.cast::<usize>().write(free[c]) };
    free[c] = ptr as usize;
}

// SAFETY: large layouts get a fresh, exclusive, zero-filled mapping aligned to 2 MiB (which
// satisfies every alignment up to 2 MiB, checked in `huge_size`) of at least `size` bytes,
// released by `dealloc` with the same rounded size. Medium layouts get an exclusive block of
// their class, at least as large as the layout and aligned to its own size, which `route`
// checked is at least the layout's alignment; `alloc_zeroed` zeroes it. `route` is a pure
// function of the layout, so `dealloc` and `realloc` find the allocator that made a block.
// Everything else is `System`'s.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match route(layout) {
            Route::Huge(size) => map_huge(size),
            Route::Medium(c) => medium_alloc(c),
            // SAFETY: forwarded with the caller's (valid, non-zero-size) layout.
            Route::System => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match route(layout) {
            // Fresh anonymous memory is zero: no pages are touched (vec![0; n] stays lazy).
            Route::Huge(size) => map_huge(size),
            Route::Medium(c) => {
                let p = medium_alloc(c);
                if !p.is_null() {
                    // SAFETY: the block is ours and at least `layout.size()` bytes long.
                    unsafe { ptr::write_bytes(p, 0, layout.size()) };
                }
                p
            }
            // SAFETY: forwarded with the caller's layout.
            Route::System => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match route(layout) {
            Route::Huge(size) => {
                // SAFETY: `ptr` came from `map_huge(size)` for this layout (the caller's
                // contract), so [ptr, ptr+size) is exactly that mapping.
                unsafe { libc::munmap(ptr.cast(), size) };
                MAPPED.fetch_sub(size, Ordering::Relaxed);
            }
            // SAFETY: `ptr` came from `medium_alloc(c)` for this layout (the caller's
            // contract) and is no longer used.
            Route::Medium(c) => unsafe { medium_dealloc(ptr, c) },
            // SAFETY: `ptr` came from `System` with this layout.
            Route::System => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size`, rounded to the alignment, is valid.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (route(layout), route(new_layout)) {
            // SAFETY: small to small stays with `System`, which owns `ptr`.
            (Route::System, Route::System) => unsafe { System.realloc(ptr, layout, new_size) },
            // Same mapping size or the same block class: nothing to move.
            (Route::Huge(a), Route::Huge(b)) if a == b => ptr,
            (Route::Medium(a), Route::Medium(b)) if a == b => ptr,
            _ => {
                // SAFETY: `new_layout` is valid (above); a fresh block, then the common
                // prefix copied and the old block released with its own layout.
                unsafe {
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

/// Asks the CPU to bring the cache line holding `*r` into all cache levels, without waiting
/// for it: a hint that never faults and has no effect on program semantics. The burst paths
/// of the forwarding tables issue one per bucket or entry they are about to read, so the
/// misses of a whole burst overlap. (A plain load would do the same in safe code, but each
/// one holds its instruction in the reorder buffer until the line arrives, which caps the
/// misses in flight at a handful; a prefetch retires at once.) A no-op on targets without a
/// prefetch instruction here.
#[inline(always)]
pub fn prefetch<T: ?Sized>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults, writes nothing, and `r` is a valid
    // reference besides. SSE is part of the x86-64 baseline, so the target feature is present.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            (r as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// [`prefetch`] of every 64-byte line of `*r` (of a type whose size is a few lines, aligned
/// to 64 bytes so that each line is its own: a table entry read whole): [`prefetch_lines`]
/// over the value's bytes.
#[inline(always)]
pub fn prefetch_whole<T>(r: &T) {
    prefetch_span((r as *const T).cast::<u8>(), size_of::<T>());
}

/// [`prefetch`] of every 64-byte line a span of `len` bytes from `*first` on starts one in
/// (offsets 0, 64, 128, … below `len`): 16 lines per step while a kilobyte remains, then one
/// line per step. The span is given by its first byte and length rather than as a slice, and
/// the address arithmetic has no bounds checks: a prefetch never faults, so a span that
/// runs past the end of `first`'s allocation only wastes the hints past it. (A loop over a
/// slice's chunks in safe code has a longer set-up than the loop itself for a packet-sized
/// span.) A no-op on targets without a prefetch instruction here.
#[inline(always)]
pub fn prefetch_lines(first: &u8, len: usize) {
    prefetch_span(first, len);
}

/// Writes back and evicts from every cache level each 64-byte line of `bytes` (`CLFLUSH`):
/// the next read of them misses to memory, as a read of bytes a device or another CPU wrote.
/// For benchmarks that model received frames (`benches/src/scaling.rs`); never on a hot path.
/// A no-op on targets without it.
pub fn flush_lines(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = bytes.as_ptr();
        let mut off = 0;
        while off < bytes.len() {
            // SAFETY: CLFLUSH of an address inside a live slice changes no value, only where
            // its line lives; SSE2 is part of the x86-64 baseline.
            unsafe { core::arch::x86_64::_mm_clflush(p.add(off)) };
            off += 64;
        }
        if let Some(last) = bytes.last() {
            // SAFETY: as above (the last line, when the slice does not start on a line).
            unsafe { core::arch::x86_64::_mm_clflush(last) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// The loops of [`prefetch_lines`] and [`prefetch_whole`], from any address.
#[inline(always)]
fn prefetch_span(first: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p = first.cast::<i8>();
        let mut off = 0;
        // SAFETY: PREFETCHT0 is a hint: it never faults and writes nothing, whatever the
        // address (computed with wrapping arithmetic, never dereferenced). SSE is part of
        // the x86-64 baseline, so the target feature is present.
        unsafe {
            while len - off >= 1024 {
                let q = p.wrapping_add(off);
                _mm_prefetch::<_MM_HINT_T0>(q);
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(64));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(128));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(192));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(256));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(320));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(384));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(448));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(512));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(576));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(640));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(704));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(768));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(832));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(896));
                _mm_prefetch::<_MM_HINT_T0>(q.wrapping_add(960));
                off += 1024;
            }
            while off < len {
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off));
                off += 64;
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (first, len);
}

/// Bit `i` set for each `lanes[i] == x`: the tag match of a 7-slot hash bucket (the PIT, CS
/// and dead-nonce indexes). Two 4-lane SSE2 compares over lanes 0..4 and 3..7 on x86-64,
/// instead of seven scalar compares, shifts and ors; a scalar loop elsewhere.
#[inline(always)]
pub fn eq_mask7(lanes: &[u32; 7], x: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            __m128i, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_ps,
            _mm_set1_epi32,
        };
        // SAFETY: both unaligned 16-byte loads stay inside `lanes` (28 bytes: lanes 0..4 and
        // 3..7); the rest only computes on values. SSE2 is part of the x86-64 baseline, so
        // the target feature is present.
        let (lo, hi) = unsafe {
            let want = _mm_set1_epi32(x as i32);
            let p = lanes.as_ptr();
            let lo = _mm_loadu_si128(p.cast::<__m128i>());
            let hi = _mm_loadu_si128(p.add(3).cast::<__m128i>());
            (
                _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(lo, want))),
                _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(hi, want))),
            )
        };
        (lo as u32) | (hi as u32) << 3
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (0..7).fold(0u32, |m, i| m | (u32::from(lanes[i] == x) << i))
    }
}

/// Bytes of large allocations currently mapped by [`HugePages`] (0 when it is not the
/// global allocator).
pub fn mapped_bytes() -> usize {
    MAPPED.load(Ordering::Relaxed)
}

/// The kernel's THP mode: `always`, `madvise` or `never` (`None` if the kernel has no THP).
pub fn thp_mode() -> Option<String> {
    let s = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    let start = s.find('[')?;
    let end = s[start..].find(']')? + start;
    Some(s[start + 1..end].to_string())
}

/// Bytes of this process's anonymous memory backed by huge pages (`AnonHugePages` of
/// `/proc/self/smaps_rollup`), if the kernel reports it.
pub fn huge_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    let line = s.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_lines_takes_any_span() {
        // A hint with no observable effect: every length (blocks of a kilobyte, single
        // lines, none) and a span past the end of the buffer run without a fault.
        let buf = vec![0u8; 3000];
        for len in [0, 1, 63, 64, 65, 1023, 1024, 1025, 2100, 3000, 8192] {
            prefetch_lines(&buf[0], len);
            prefetch_lines(&buf[2999], len);
        }
    }

    #[test]
    fn eq_mask7_matches_each_lane() {
        // Every pattern of equal and unequal lanes (lane 3 is in both vector halves), with
        // the unequal lanes differing from `x` in one high or one low bit.
        for pattern in 0u32..128 {
            for x in [0, 1, 0x8000_0000, 0xDEAD_BEEF, u32::MAX] {
                let lanes: [u32; 7] = core::array::from_fn(|i| {
                    if pattern >> i & 1 == 1 {
                        x
                    } else if i % 2 == 0 {
                        x ^ 0x8000_0000
                    } else {
                        x ^ 1
                    }
                });
                assert_eq!(eq_mask7(&lanes, x), pattern, "lanes {lanes:x?}, x {x:x}");
            }
        }
    }

    #[test]
    fn small_and_large_layouts_are_routed() {
        assert_eq!(huge_size(Layout::from_size_align(4096, 8).unwrap()), None);
        assert_eq!(
            huge_size(Layout::from_size_align(HUGE_PAGE, 64).unwrap()),
            Some(HUGE_PAGE)
        );
        assert_eq!(
            huge_size(Layout::from_size_align(HUGE_PAGE + 1, 64).unwrap()),
            Some(2 * HUGE_PAGE)
        );
        // An alignment beyond 2 MiB is left to the system allocator.
        assert_eq!(
            huge_size(Layout::from_size_align(8 * HUGE_PAGE, 4 * HUGE_PAGE).unwrap()),
            None
        );
    }

    #[test]
    fn each_size_has_one_route() {
        let at = |size: usize, align: usize| route(Layout::from_size_align(size, align).unwrap());
        assert_eq!(at(MEDIUM_THRESHOLD - 1, 8), Route::System);
        assert_eq!(at(MEDIUM_THRESHOLD, 8), Route::Medium(0));
        assert_eq!(at(MEDIUM_THRESHOLD + 1, 64), Route::Medium(1));
        assert_eq!(at(2 * MEDIUM_THRESHOLD, 4096), Route::Medium(1));
        // The FIB's chunk tables at 10^5 routes (256 slots of 32 bytes).
        assert_eq!(at(8 << 10, 32), Route::Medium(1));
        assert_eq!(at(1 << 20, 8), Route::Medium(MEDIUM_CLASSES - 1));
        // Above 1 MiB: a region (2 MiB) of its own, then mappings rounded to 2 MiB.
        assert_eq!(at((1 << 20) + 1, 8), Route::Huge(HUGE_PAGE));
        assert_eq!(at(HUGE_PAGE - 1, 8), Route::Huge(HUGE_PAGE));
        assert_eq!(at(HUGE_PAGE, 8), Route::Huge(HUGE_PAGE));
        assert_eq!(at(HUGE_PAGE + 1, 8), Route::Huge(2 * HUGE_PAGE));
        // An alignment beyond the block's size is the system allocator's.
        assert_eq!(at(MEDIUM_THRESHOLD, 2 * MEDIUM_THRESHOLD), Route::System);
        assert_eq!(at(8 * HUGE_PAGE, 4 * HUGE_PAGE), Route::System);
        assert_eq!(MEDIUM_THRESHOLD << MEDIUM_CLASSES, HUGE_PAGE);
    }

    #[test]
    fn thp_mode_is_one_of_the_kernel_words() {
        if let Some(m) = thp_mode() {
            assert!(["always", "madvise", "never"].contains(&m.as_str()), "{m}");
        }
    }
}
