//! The UMEM: one mmap'ed region cut into equal frames, shared with the kernel.
//!
//! Every frame is, at any time, in exactly one place: a fill ring or the
//! kernel, a free list of one [`crate::Endpoint`], a TX ring in flight, or a
//! received [`RxFrame`] handle. Bytes of a received frame are reachable only
//! through its handle (and [`Umem::frame`] / [`Umem::frame_mut`] borrow that
//! handle), which is what makes reading them from safe code sound.

#![allow(unsafe_code)]

use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};

use crate::Error;

/// Bytes the kernel reserves in front of received data in every frame
/// (`XDP_PACKET_HEADROOM`); XDP metadata, when present, sits at its end.
pub const XDP_PACKET_HEADROOM: u32 = 256;

/// Most descriptors one received packet may span (an 8846-byte frame needs 3
/// with 4096-byte frames); longer chains are dropped and counted.
pub const MAX_SEGMENTS: usize = 8;

/// Sizes of a UMEM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UmemConfig {
    /// Bytes per frame: a power of two in 2048..=4096 (the kernel refuses larger
    /// frames here). Default 4096.
    pub frame_size: u32,
    /// Number of frames. Default 8192 (32 MiB: needs CAP_IPC_LOCK above the
    /// 8 MiB memlock limit).
    pub frame_count: u32,
    /// Extra headroom the kernel leaves in each frame before
    /// [`XDP_PACKET_HEADROOM`]. Default 0.
    pub headroom: u32,
    /// Back the region with reserved huge pages (`MAP_HUGETLB`); fails if none are
    /// reserved. Without it the region is 2 MiB-aligned and advised `MADV_HUGEPAGE`:
    /// transparent huge pages where the kernel has them, base pages otherwise.
    pub huge_pages: bool,
    /// Bytes of XDP metadata the program writes in front of each received
    /// packet (ndx's `struct ndx_xdp_meta`: 16). The kernel gives no length,
    /// so [`Frame::meta`] returns this many bytes before the data, which the
    /// port zeroes before a frame goes back to the fill ring: a frame without
    /// metadata reads as zeros (magic 0). Clearing costs one cache-line write
    /// per refilled frame; 0 disables it (and `meta()`). Default 16.
    pub meta_len: u32,
}

impl Default for UmemConfig {
    fn default() -> Self {
        UmemConfig {
            frame_size: 4096,
            frame_count: 8192,
            headroom: 0,
            huge_pages: false,
            meta_len: 16,
        }
    }
}

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// The mapped memory. Unmapped when the last reference goes (after every
/// socket using it, since every endpoint holds a reference).
pub(crate) struct Region {
    pub(crate) id: u32,
    base: NonNull<u8>,
    len: usize,
    pub(crate) frame_size: u32,
    pub(crate) frame_count: u32,
    pub(crate) headroom: u32,
    pub(crate) meta_len: u32,
    /// Frames kept ([`crate::Endpoint::keep`]) and not given back, summed over the
    /// endpoints dropped so far (each adds its own balance when it goes). Non-zero when the
    /// region is dropped: some [`KeptFrame`] may still point into it, so it stays mapped.
    pub(crate) kept: AtomicI64,
}

// SAFETY: `Region` is a raw allocation; all access to its bytes goes through
// frame ownership (handles, free lists) that are themselves moved between
// threads, so sharing the base pointer is sound.
unsafe impl Send for Region {}
// SAFETY: see `Send`; `&Region` exposes no byte access without a handle.
unsafe impl Sync for Region {}

impl Region {
    pub(crate) fn map(cfg: &UmemConfig) -> Result<Region, Error> {
        if !cfg.frame_size.is_power_of_two() || !(2048..=4096).contains(&cfg.frame_size) {
            return Err(Error::Config(format!(
                "frame_size {} must be a power of two in 2048..=4096",
                cfg.frame_size
            )));
        }
        if cfg.frame_count == 0 {
            return Err(Error::Config("frame_count must be > 0".into()));
        }
        if cfg.meta_len > 255 || cfg.meta_len > XDP_PACKET_HEADROOM {
            return Err(Error::Config(format!(
                "meta_len {} must be <= 255",
                cfg.meta_len
            )));
        }
        if cfg.headroom + XDP_PACKET_HEADROOM + 128 > cfg.frame_size {
            return Err(Error::Config(format!(
                "headroom {} too large",
                cfg.headroom
            )));
        }
        let len = cfg.frame_size as usize * cfg.frame_count as usize;
        let ptr = if cfg.huge_pages {
            // SAFETY: anonymous mapping, no existing memory is affected.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE
                        | libc::MAP_ANONYMOUS
                        | libc::MAP_POPULATE
                        | libc::MAP_HUGETLB,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(Error::sys("mmap UMEM"));
            }
            p
        } else {
            map_thp(len)?
        };
        let base = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| Error::sys("mmap UMEM"))?;
        Ok(Region {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            base,
            len,
            frame_size: cfg.frame_size,
            frame_count: cfg.frame_count,
            headroom: cfg.headroom,
            meta_len: cfg.meta_len,
            kept: AtomicI64::new(0),
        })
    }

    /// Whether `ptr` points into the region.
    pub(crate) fn contains(&self, ptr: *const u8) -> bool {
        let base = self.base.as_ptr() as usize;
        (base..base + self.len).contains(&(ptr as usize))
    }

    /// Base address of the frame `ptr` points into (which must be in the region).
    pub(crate) fn frame_of(&self, ptr: *const u8) -> u64 {
        self.frame_base((ptr as usize - self.base.as_ptr() as usize) as u64)
    }

    /// The address of byte `addr` of the region.
    pub(crate) fn ptr(&self, addr: u64) -> NonNull<u8> {
        debug_assert!(addr < self.len as u64);
        // SAFETY: in bounds of the mapping (callers pass validated addresses).
        unsafe { self.base.add(addr as usize) }
    }

    /// The whole area, for registration with the kernel.
    pub(crate) fn area(&self) -> NonNull<[u8]> {
        NonNull::slice_from_raw_parts(self.base, self.len)
    }

    /// Offset of received data inside a frame when no metadata is present.
    pub(crate) fn rx_data_offset(&self) -> u32 {
        XDP_PACKET_HEADROOM + self.headroom
    }

    /// Zeroes the metadata area of the frame at `base` (before it is refilled).
    ///
    /// # Safety
    /// The caller must own the frame (it is on a free list).
    pub(crate) unsafe fn clear_meta(&self, base: u64) {
        if self.meta_len > 0 {
            let at = base + u64::from(self.rx_data_offset() - self.meta_len);
            // SAFETY: inside the frame (meta_len <= XDP_PACKET_HEADROOM), owned (caller).
            unsafe { self.bytes_mut(at, self.meta_len) }.fill(0);
        }
    }

    /// Whether `[addr, addr + len)` lies inside one frame of the region.
    pub(crate) fn valid(&self, addr: u64, len: u32) -> bool {
        let fs = u64::from(self.frame_size);
        addr < self.len as u64 && (addr % fs) + u64::from(len) <= fs
    }

    /// Base address of the frame containing `addr`.
    pub(crate) fn frame_base(&self, addr: u64) -> u64 {
        addr & !(u64::from(self.frame_size) - 1)
    }

    /// Segment `i` of `frame` (address, length): the handle's own fields for a single
    /// buffer, the segment table in its first frame for a chain.
    ///
    /// # Safety
    /// `frame` must be a handle of this region (`frame.port == self.id`) and `i <
    /// frame.nseg`; the handle owns its frames, so nobody writes the table meanwhile.
    #[inline]
    pub(crate) unsafe fn seg(&self, frame: &RxFrame, i: usize) -> (u64, u32) {
        debug_assert_eq!(frame.port, self.id);
        debug_assert!(i < frame.nseg as usize);
        if frame.nseg == 1 {
            return (frame.addr, u32::from(frame.len));
        }
        let base = self.frame_base(frame.addr);
        // SAFETY: `chain` wrote the table at the start of the first frame, below the
        // packet's metadata (so inside the frame and apart from every segment), and the
        // handle, borrowed here, owns that frame (caller).
        let t = unsafe { self.bytes(base, SEG_TABLE) };
        let a = 8 * i;
        let l = 8 * MAX_SEGMENTS + 2 * i;
        let addr = u64::from_le_bytes(t[a..a + 8].try_into().unwrap_or_default());
        let len = u16::from_le_bytes(t[l..l + 2].try_into().unwrap_or_default());
        (addr, u32::from(len))
    }

    /// Completes a multi-buffer packet: writes its segment table into its first frame
    /// ([`SEG_TABLE`]) and returns its 16-byte handle; `None` when the first buffer leaves
    /// no room for the table before its metadata, or the packet is longer than a handle
    /// says (its buffers are then the caller's to give back).
    ///
    /// # Safety
    /// Every buffer of `chain` must be `valid` in this region and owned by the caller
    /// (received, not handed out), and `chain.port == self.id`.
    pub(crate) unsafe fn chain(&self, chain: &Chain) -> Option<RxFrame> {
        let first = chain.addrs[0];
        let base = self.frame_base(first);
        let room = (first - base).checked_sub(u64::from(chain.meta_len))?;
        let total: u32 = chain.lens[..chain.nseg as usize]
            .iter()
            .map(|&l| u32::from(l))
            .sum();
        if room < u64::from(SEG_TABLE) || total > u32::from(u16::MAX) {
            return None;
        }
        // SAFETY: `[base, base + SEG_TABLE)` lies in the first frame before its metadata and
        // packet (checked above), which the caller owns.
        let t = unsafe { self.bytes_mut(base, SEG_TABLE) };
        for i in 0..MAX_SEGMENTS {
            t[8 * i..8 * i + 8].copy_from_slice(&chain.addrs[i].to_le_bytes());
            let l = 8 * MAX_SEGMENTS + 2 * i;
            t[l..l + 2].copy_from_slice(&chain.lens[i].to_le_bytes());
        }
        Some(RxFrame {
            addr: first,
            port: chain.port,
            len: total as u16,
            nseg: chain.nseg,
            meta_len: chain.meta_len,
        })
    }

    /// # Safety
    /// `[addr, addr + len)` must be `valid` and the caller must own the frame
    /// (no other live reference to those bytes, kernel not writing them) for `'a`.
    pub(crate) unsafe fn bytes(&self, addr: u64, len: u32) -> &[u8] {
        debug_assert!(self.valid(addr, len));
        // SAFETY: in bounds (caller), and no writer exists (caller).
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(addr as usize), len as usize) }
    }

    /// # Safety
    /// As [`Region::bytes`], and the caller's ownership must be exclusive.
    #[expect(
        clippy::mut_from_ref,
        reason = "frame ownership, not &self, grants the exclusivity"
    )]
    pub(crate) unsafe fn bytes_mut(&self, addr: u64, len: u32) -> &mut [u8] {
        debug_assert!(self.valid(addr, len));
        // SAFETY: in bounds and exclusively owned (caller).
        unsafe {
            std::slice::from_raw_parts_mut(self.base.as_ptr().add(addr as usize), len as usize)
        }
    }
}

/// Size and alignment of a transparent huge page (x86-64, arm64 with 4 KiB base pages).
const THP_SIZE: usize = 2 << 20;

/// Maps `len` bytes for a UMEM on transparent huge pages where the kernel gives them: the
/// mapping starts on a 2 MiB boundary and is advised `MADV_HUGEPAGE` before its first touch,
/// then populated (`MADV_POPULATE_WRITE`, else a write to each page), as `MAP_POPULATE` did.
/// A 32 MiB UMEM is then 16 TLB entries instead of 8,192: the worker's first read of a
/// frame the kernel copied in, and its copy into a TX frame, no longer walk the page table
/// once per frame. Without THP (mode `never`, or no free 2 MiB page) it is base pages, as
/// before: the advice is never an error.
fn map_thp(len: usize) -> Result<*mut libc::c_void, Error> {
    let span = len + THP_SIZE;
    // SAFETY: anonymous mapping, no existing memory is affected.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return Err(Error::sys("mmap UMEM"));
    }
    let start = raw as usize;
    let aligned = (start + THP_SIZE - 1) & !(THP_SIZE - 1);
    let head = aligned - start;
    // What we keep ends on a page boundary (the tail's `munmap` needs one); `Drop`'s
    // `munmap(base, len)` rounds `len` up to the same page.
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
        .ok()
        .filter(|p| p.is_power_of_two())
        .unwrap_or(4096);
    let keep = len.next_multiple_of(page);
    let tail = span - head - keep;
    let ptr = aligned as *mut libc::c_void;
    // SAFETY: the head and tail lie inside the mapping made above and outside
    // [aligned, aligned + keep), which nothing refers to yet; both are page-aligned
    // sub-ranges of that mapping. The advice and the population act on the range we keep,
    // which is ours alone.
    unsafe {
        if head > 0 {
            let rc = libc::munmap(raw, head);
            debug_assert_eq!(rc, 0, "munmap of the UMEM mapping's head");
        }
        if tail > 0 {
            let rc = libc::munmap((aligned + keep) as *mut libc::c_void, tail);
            debug_assert_eq!(rc, 0, "munmap of the UMEM mapping's tail");
        }
        libc::madvise(ptr, keep, libc::MADV_HUGEPAGE);
        if libc::madvise(ptr, keep, libc::MADV_POPULATE_WRITE) != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINVAL) {
                // Out of memory (or poisoned): an error now, not a SIGBUS or the OOM
                // killer when the kernel first copies a frame in.
                libc::munmap(ptr, keep);
                return Err(Error::Sys {
                    op: "madvise(MADV_POPULATE_WRITE) UMEM",
                    source: err,
                });
            }
            // Before Linux 5.14 (no MADV_POPULATE_WRITE): touch every page instead.
            for off in (0..keep).step_by(page) {
                std::ptr::write_volatile(ptr.cast::<u8>().add(off), 0);
            }
        }
    }
    Ok(ptr)
}

impl Drop for Region {
    fn drop(&mut self) {
        if *self.kept.get_mut() != 0 {
            // A kept frame that never came back may still be read: leave the memory mapped
            // (leaked) rather than let it dangle.
            return;
        }
        // SAFETY: we mapped exactly this range; every socket registered on it
        // is closed (endpoints hold an `Arc<Region>` and drop their rings first).
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// A cheap, cloneable reference to one port's UMEM, used to read frames that
/// another shard handed over (see [`crate::Exchange`]).
#[derive(Clone)]
pub struct Umem {
    pub(crate) region: Arc<Region>,
}

impl std::fmt::Debug for Umem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Umem")
            .field("port", &self.region.id)
            .field("frame_size", &self.region.frame_size)
            .field("frame_count", &self.region.frame_count)
            .finish()
    }
}

impl Umem {
    /// The id of the port that owns this memory (equals [`RxFrame::port`] of its frames).
    pub fn port(&self) -> u32 {
        self.region.id
    }

    /// Frame size in bytes.
    pub fn frame_size(&self) -> u32 {
        self.region.frame_size
    }

    /// Number of frames.
    pub fn frame_count(&self) -> u32 {
        self.region.frame_count
    }

    /// Read access to a received frame, or `None` if it belongs to another port.
    pub fn frame<'a>(&'a self, frame: &'a RxFrame) -> Option<Frame<'a>> {
        (frame.port == self.region.id).then_some(Frame {
            region: &self.region,
            frame,
        })
    }

    /// Write access to a received frame (e.g. to rewrite headers in place before
    /// [`crate::Endpoint::forward`]), or `None` if it belongs to another port.
    pub fn frame_mut<'a>(&'a self, frame: &'a mut RxFrame) -> Option<FrameMut<'a>> {
        (frame.port == self.region.id).then_some(FrameMut {
            region: &self.region,
            frame,
        })
    }
}

/// A received packet: the unique handle to one to [`MAX_SEGMENTS`] UMEM frames.
///
/// `Send` (it is plain data), neither `Clone` nor `Copy`, and 16 bytes, so that a burst of
/// them and the [`crate::Exchange`] rings that hand them between shards move a quarter of a
/// cache line per packet. A single-buffer packet (the common case) is described by the
/// handle alone; a multi-buffer chain (a jumbo frame) keeps its segment table (each buffer's
/// address and length) in the unused headroom of its first frame, before the metadata, so
/// reading its later segments costs one more cache line. Give it back with
/// [`crate::Endpoint::release`] (on any endpoint of the same port) or
/// [`crate::Endpoint::forward`]; dropping it leaks its frames until the port is closed
/// (never unsound).
#[must_use = "release the frame or it leaks from the port's pool"]
#[derive(Debug, PartialEq, Eq)]
pub struct RxFrame {
    /// Address of the packet's first byte (its first buffer's).
    pub(crate) addr: u64,
    pub(crate) port: u32,
    /// Packet length, all segments (at most `MAX_SEGMENTS` × 4096 = 32768).
    pub(crate) len: u16,
    pub(crate) nseg: u8,
    pub(crate) meta_len: u8,
}

impl RxFrame {
    /// Id of the port (UMEM) the frame belongs to.
    pub fn port(&self) -> u32 {
        self.port
    }

    /// Total packet length (all segments, metadata excluded).
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether the packet is empty (never true for a received frame).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of descriptors (1 unless the packet is a multi-buffer chain).
    #[inline]
    pub fn segments(&self) -> usize {
        self.nseg as usize
    }

    /// Length of the metadata area in front of the packet ([`UmemConfig::meta_len`]).
    pub fn meta_len(&self) -> usize {
        self.meta_len as usize
    }
}

/// Bytes at the start of a multi-buffer packet's first frame that hold its segment table:
/// [`MAX_SEGMENTS`] addresses (8 bytes each), then as many lengths (2 bytes each), little
/// endian. The kernel puts the packet after `XDP_PACKET_HEADROOM` (256 bytes), so the room
/// is there; a chain whose first buffer starts too early is dropped ([`Region::chain`]).
pub(crate) const SEG_TABLE: u32 = MAX_SEGMENTS as u32 * 10;

/// A multi-buffer packet whose descriptors are arriving (one endpoint's, between bursts).
#[derive(Debug)]
pub(crate) struct Chain {
    pub(crate) port: u32,
    pub(crate) meta_len: u8,
    pub(crate) nseg: u8,
    pub(crate) lens: [u16; MAX_SEGMENTS],
    pub(crate) addrs: [u64; MAX_SEGMENTS],
}

impl Chain {
    /// A chain starting with the buffer at `addr` of `len` bytes.
    pub(crate) fn new(port: u32, meta_len: u8, addr: u64, len: u16) -> Self {
        let mut c = Chain {
            port,
            meta_len,
            nseg: 1,
            lens: [0; MAX_SEGMENTS],
            addrs: [0; MAX_SEGMENTS],
        };
        c.addrs[0] = addr;
        c.lens[0] = len;
        c
    }

    /// Appends a buffer; false (nothing appended) when the chain has [`MAX_SEGMENTS`].
    pub(crate) fn push(&mut self, addr: u64, len: u16) -> bool {
        let n = self.nseg as usize;
        if n == MAX_SEGMENTS {
            return false;
        }
        self.addrs[n] = addr;
        self.lens[n] = len;
        self.nseg += 1;
        true
    }

    /// The buffers' addresses.
    pub(crate) fn addrs(&self) -> &[u64] {
        &self.addrs[..self.nseg as usize]
    }
}

/// Read view of a received frame, borrowed from its handle and its UMEM.
#[derive(Clone, Copy)]
pub struct Frame<'a> {
    region: &'a Region,
    frame: &'a RxFrame,
}

impl std::fmt::Debug for Frame<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame").field("frame", self.frame).finish()
    }
}

impl<'a> Frame<'a> {
    pub(crate) fn new(region: &'a Region, frame: &'a RxFrame) -> Self {
        debug_assert_eq!(region.id, frame.port);
        Frame { region, frame }
    }

    /// Segment `i` (the first holds the Ethernet header). Panics if `i >= segments()`.
    pub fn segment(&self, i: usize) -> &'a [u8] {
        assert!(i < self.frame.nseg as usize, "segment index out of range");
        // SAFETY: the handle is of this region (`Frame::new`) and `i` is in range.
        let (addr, len) = unsafe { self.region.seg(self.frame, i) };
        // SAFETY: the address was validated when the handle was built; the
        // handle uniquely owns the frame and is borrowed for 'a, so neither the
        // kernel (not in a fill ring) nor safe code writes it meanwhile.
        unsafe { self.region.bytes(addr, len) }
    }

    /// The first (often only) segment.
    pub fn first(&self) -> &'a [u8] {
        self.segment(0)
    }

    /// All segments in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let this = *self;
        (0..self.frame.nseg as usize).map(move |i| this.segment(i))
    }

    /// The [`UmemConfig::meta_len`] bytes in front of the packet: the XDP
    /// program's metadata, or zeros if it wrote none (check its magic).
    /// `None` when `meta_len` is 0.
    pub fn meta(&self) -> Option<&'a [u8]> {
        let m = u32::from(self.frame.meta_len);
        if m == 0 {
            return None;
        }
        let addr = self.frame.addr - u64::from(m);
        // SAFETY: `meta_len` was computed so that `[addr, frame.addr)` lies in the
        // same frame, which the handle owns (see `segment`).
        Some(unsafe { self.region.bytes(addr, m) })
    }

    /// Copies the whole packet into `out` (for multi-buffer packets that must be
    /// parsed contiguously); returns the length.
    pub fn copy_to(&self, out: &mut Vec<u8>) -> usize {
        out.clear();
        for s in self.iter() {
            out.extend_from_slice(s);
        }
        out.len()
    }
}

/// Write view of a received frame.
pub struct FrameMut<'a> {
    region: &'a Region,
    frame: &'a mut RxFrame,
}

impl std::fmt::Debug for FrameMut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameMut")
            .field("frame", &*self.frame)
            .finish()
    }
}

impl<'a> FrameMut<'a> {
    pub(crate) fn new(region: &'a Region, frame: &'a mut RxFrame) -> Self {
        debug_assert_eq!(region.id, frame.port);
        FrameMut { region, frame }
    }

    /// Mutable segment `i`. Panics if `i >= segments()`.
    pub fn segment_mut(&mut self, i: usize) -> &mut [u8] {
        assert!(i < self.frame.nseg as usize, "segment index out of range");
        // SAFETY: the handle is of this region (`FrameMut::new`) and `i` is in range; the
        // table (in front of the metadata) is not part of any segment.
        let (addr, len) = unsafe { self.region.seg(self.frame, i) };
        // SAFETY: validated address; the handle is exclusively borrowed, so this
        // is the only reference to these bytes for the returned lifetime.
        unsafe { self.region.bytes_mut(addr, len) }
    }
}

/// A received frame kept past its burst: the content store holds the Data in it instead of
/// a copy (see `ndx_core::Cs::with_frames`). Made from an [`RxFrame`] by
/// [`crate::Endpoint::keep`], which owns the frame exactly like the handle did (neither the
/// kernel nor the pool touches it) until it comes back through
/// [`crate::Endpoint::release_kept`] on an endpoint of the same port.
///
/// Its bytes are the frame's packet from a start chosen when it was kept (the NDN packet,
/// past the link headers). 16 bytes, `Send`, neither `Clone` nor `Copy`. Dropping one leaks
/// its frame from the port's pool, and then keeps the port's memory mapped when the port
/// closes, since a frame that never came back may still be read (never unsound).
#[must_use = "release the frame or it leaks from the port's pool"]
pub struct KeptFrame {
    ptr: NonNull<u8>,
    len: u32,
    port: u32,
}

// SAFETY: the handle owns its bytes alone (see the type's documentation) and the memory stays
// mapped while it lives, so it may move to another thread like an `RxFrame`.
unsafe impl Send for KeptFrame {}
// SAFETY: `&KeptFrame` only reads the bytes, which nobody writes while the handle lives.
unsafe impl Sync for KeptFrame {}

impl KeptFrame {
    /// # Safety
    /// `[ptr, ptr + len)` must lie in one frame of port `port`'s region, owned by the caller
    /// (taken from an `RxFrame` that is consumed), and the port's kept balance must count it.
    pub(crate) unsafe fn new(ptr: NonNull<u8>, len: u32, port: u32) -> Self {
        KeptFrame { ptr, len, port }
    }

    /// Id of the port (UMEM) the frame belongs to.
    pub fn port(&self) -> u32 {
        self.port
    }

    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }
}

impl AsRef<[u8]> for KeptFrame {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        // SAFETY: in one frame of a region that stays mapped while a kept frame lives (its
        // endpoints counted it; `Region::drop` leaves the memory mapped while the count is
        // not zero); the frame is owned by this handle alone, so nothing writes it.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len as usize) }
    }
}

impl std::fmt::Debug for KeptFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptFrame")
            .field("port", &self.port)
            .field("len", &self.len)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(frame_size: u32, frame_count: u32) -> UmemConfig {
        UmemConfig {
            frame_size,
            frame_count,
            ..UmemConfig::default()
        }
    }

    #[test]
    fn rejects_bad_geometry() {
        for bad in [cfg(8192, 4), cfg(3000, 4), cfg(1024, 4), cfg(4096, 0)] {
            assert!(
                matches!(Region::map(&bad), Err(Error::Config(_))),
                "{bad:?}"
            );
        }
        let meta = UmemConfig {
            meta_len: 300,
            ..cfg(4096, 4)
        };
        assert!(matches!(Region::map(&meta), Err(Error::Config(_))));
    }

    #[test]
    fn frames_and_bounds() {
        let r = Region::map(&cfg(2048, 8)).unwrap();
        assert_eq!(r.area().len(), 2048 * 8);
        assert!(r.valid(2048 + 256, 1792));
        assert!(!r.valid(2048 + 256, 1793), "crosses into the next frame");
        assert!(!r.valid(2048 * 8, 1), "past the end");
        assert_eq!(r.frame_base(3 * 2048 + 300), 3 * 2048);
        let (a, b) = (
            Region::map(&cfg(2048, 1)).unwrap(),
            Region::map(&cfg(2048, 1)).unwrap(),
        );
        assert_ne!(a.id, b.id, "port ids are never reused");
    }

    /// The `VmFlags` of the mapping of this process that contains `addr`.
    /// The `VmFlags` and the `Rss` (bytes) of the mapping that holds `addr`.
    fn vm_flags_and_rss(addr: usize) -> (Vec<String>, usize) {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let (mut inside, mut rss) = (false, None);
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = first.split_once('-')
                && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                inside = (a..b).contains(&addr);
            } else if inside && let Some(kb) = line.strip_prefix("Rss:") {
                rss = kb
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<usize>()
                    .ok();
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                let flags = flags.split_whitespace().map(String::from).collect();
                return (flags, rss.expect("Rss before VmFlags") * 1024);
            }
        }
        panic!("no mapping holds {addr:#x}");
    }

    #[test]
    fn region_is_aligned_advised_for_thp_and_populated() {
        // `MADV_HUGEPAGE` sets the flag in any THP mode; a kernel built without THP refuses it.
        let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists();
        // (2048, 3): a length that is not a whole page (the mapping's tail is trimmed from
        // the next page boundary: `map_thp` asserts each `munmap` succeeds).
        for (fs, n) in [(4096, 8192), (2048, 3), (4096, 513)] {
            let r = Region::map(&cfg(fs, n)).unwrap();
            let base = r.base.as_ptr() as usize;
            assert_eq!(base % THP_SIZE, 0, "{fs} x {n}: 2 MiB-aligned");
            let (flags, rss) = vm_flags_and_rss(base);
            assert!(
                !thp || flags.iter().any(|f| f == "hg"),
                "{fs} x {n}: advised MADV_HUGEPAGE: {flags:?}"
            );
            // Populated at map time: resident before anything touched it.
            assert!(
                rss >= r.len,
                "{fs} x {n}: {rss} bytes resident of {}",
                r.len
            );
            // The whole region is ours, mapped and zeroed (the last byte too).
            let last = fs as u64 * u64::from(n) - 1;
            // SAFETY: test owns every frame of this private region; `last` is in bounds.
            assert_eq!(unsafe { r.bytes(last, 1) }[0], 0);
            assert!(r.contains(r.ptr(last).as_ptr()));
            assert!(!r.contains((base + r.len) as *const u8));
        }
    }

    #[test]
    fn huge_pages_map_or_fail_cleanly() {
        let free = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("HugePages_Free:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .unwrap_or(0);
        let r = Region::map(&UmemConfig {
            huge_pages: true,
            ..cfg(4096, 512)
        });
        if free >= 1 {
            assert!(
                r.is_ok(),
                "{free} huge pages free but mapping failed: {:?}",
                r.err()
            );
        } else {
            assert!(matches!(
                r,
                Err(Error::Sys {
                    op: "mmap UMEM",
                    ..
                })
            ));
        }
    }

    /// Whether `[addr, addr + len)` is mapped (`msync` fails with ENOMEM where it is not).
    fn mapped(addr: usize, len: usize) -> bool {
        // SAFETY: msync only inspects the range; nothing is read or written.
        unsafe { libc::msync(addr as *mut libc::c_void, len, libc::MS_ASYNC) == 0 }
    }

    #[test]
    fn a_region_with_kept_frames_out_stays_mapped() {
        let r = Region::map(&cfg(2048, 16)).unwrap();
        let (addr, len) = (r.base.as_ptr() as usize, r.len);
        assert!(mapped(addr, len));
        drop(r);
        assert!(!mapped(addr, len), "a region with none out is unmapped");
        let r = Region::map(&cfg(2048, 16)).unwrap();
        let (addr, len) = (r.base.as_ptr() as usize, r.len);
        r.kept.store(1, Ordering::Relaxed);
        drop(r);
        assert!(mapped(addr, len), "a kept frame may still point into it");
        // SAFETY: the leaked mapping is ours; nothing refers to it any more.
        unsafe { libc::munmap(addr as *mut libc::c_void, len) };
    }

    #[test]
    fn a_handle_is_a_quarter_of_a_cache_line() {
        assert_eq!(std::mem::size_of::<RxFrame>(), 16);
    }

    /// Fills `len` bytes at `addr` with `byte` (the test owns the region).
    fn put(r: &Region, addr: u64, len: u32, byte: u8) {
        // SAFETY: the test owns every frame of its private region.
        unsafe { r.bytes_mut(addr, len) }.fill(byte);
    }

    #[test]
    fn a_chain_keeps_its_segment_table_in_its_first_frame() {
        let r = Region::map(&cfg(2048, 8)).unwrap();
        let data = r.rx_data_offset();
        // Three buffers out of order in the region, as the kernel hands them out, with
        // 16 bytes of metadata before the first.
        let segs = [
            (5 * 2048, 1700u16, 0xa5u8),
            (2 * 2048, 1700, 0xb6),
            (7 * 2048, 377, 0xc7),
        ];
        put(&r, 5 * 2048 + u64::from(data) - 16, 16, 0x11);
        let mut c = Chain::new(r.id, 16, 5 * 2048 + u64::from(data), 1700);
        for &(base, len, byte) in &segs {
            put(&r, base + u64::from(data), u32::from(len), byte);
        }
        for &(base, len, _) in &segs[1..] {
            assert!(c.push(base + u64::from(data), len));
        }
        // SAFETY: the chain's buffers are valid and ours alone.
        let f = unsafe { r.chain(&c) }.expect("room before the metadata");
        assert_eq!((f.segments(), f.len(), f.meta_len()), (3, 3777, 16));
        let view = Frame::new(&r, &f);
        for (i, &(_, len, byte)) in segs.iter().enumerate() {
            let s = view.segment(i);
            assert_eq!(s.len(), usize::from(len), "segment {i}");
            assert!(s.iter().all(|&b| b == byte), "segment {i}'s own bytes");
        }
        assert_eq!(
            view.meta(),
            Some(&[0x11u8; 16][..]),
            "the table is apart from the metadata"
        );
        let mut whole = Vec::new();
        assert_eq!(view.copy_to(&mut whole), 3777);
        // The handle crosses threads alone: the table travels in the frame.
        let f = std::thread::spawn(move || f).join().unwrap();
        assert_eq!(Frame::new(&r, &f).segment(2).len(), 377);
    }

    #[test]
    fn a_chain_without_room_for_its_table_is_refused_and_a_full_one_grows_no_more() {
        let r = Region::map(&cfg(2048, 8)).unwrap();
        // A first buffer 64 bytes into its frame, 16 of them metadata: 48 < 80 bytes free.
        let mut c = Chain::new(r.id, 16, 2048 + 64, 100);
        assert!(c.push(4096 + 256, 100));
        // SAFETY: as above.
        assert!(unsafe { r.chain(&c) }.is_none());
        for i in 2..MAX_SEGMENTS {
            assert!(c.push(i as u64 * 2048 + 256, 10));
        }
        assert!(!c.push(256, 10), "at most MAX_SEGMENTS buffers");
        assert_eq!(c.addrs().len(), MAX_SEGMENTS);
    }

    #[test]
    fn clear_meta_zeroes_only_the_metadata_area() {
        let r = Region::map(&cfg(2048, 2)).unwrap();
        // SAFETY: test owns every frame of this private region.
        let all = unsafe { r.bytes_mut(2048, 2048) };
        all.fill(0xaa);
        // SAFETY: as above.
        unsafe { r.clear_meta(2048) };
        // SAFETY: as above.
        let all = unsafe { r.bytes(2048, 2048) };
        assert!(all[256 - 16..256].iter().all(|&b| b == 0));
        assert_eq!(all[256 - 17], 0xaa);
        assert_eq!(all[256], 0xaa);
    }
}
