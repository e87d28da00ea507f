//! The io_uring engine: the only module with `unsafe` code.
//!
//! It owns the ring, the registered files and the buffers. A buffer is *busy* from the moment
//! an operation on it is pushed until its completion is reaped; a busy buffer is never handed
//! out, and dropping the engine waits for every busy buffer first, so the kernel never writes
//! into memory Rust can see or has freed.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use io_uring::{IoUring, opcode, types};

use crate::aligned::{HUGE_PAGE, Layout, huge_bytes_at};

/// The engine's buffers: one private anonymous mapping laid out by a [`Layout`]. With huge
/// pages, the data region is [`HUGE_PAGE`]-aligned and advised `MADV_HUGEPAGE` before any
/// page is touched, then touched once so every page (huge where the kernel could) is in
/// place before the buffers are registered.
struct Arena {
    /// Start of the mapping.
    map: NonNull<u8>,
    map_len: usize,
    /// Start of the data region within the mapping.
    data: usize,
    layout: Layout,
    /// Bytes of the data region in huge pages after the first touch.
    huge_bytes: usize,
    /// Never unmap (the kernel may still write into the buffers).
    leak: bool,
}

// SAFETY: the arena owns its mapping exclusively (like a `Box<[u8]>`); it hands out slices
// only through `&self`/`&mut self`, so moving it to another thread or sharing `&Arena` is as
// safe as for a boxed slice.
unsafe impl Send for Arena {}
// SAFETY: as above: `&Arena` only gives shared slices.
unsafe impl Sync for Arena {}

impl Arena {
    fn new(layout: Layout) -> io::Result<Self> {
        let align = if layout.huge { HUGE_PAGE } else { 0 };
        let map_len = layout.data_len + align;
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let map = NonNull::new(p.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        // The first huge page boundary in the mapping (mmap returns page-aligned addresses).
        let data = if layout.huge {
            (HUGE_PAGE - map.as_ptr() as usize % HUGE_PAGE) % HUGE_PAGE
        } else {
            0
        };
        let mut arena = Self {
            map,
            map_len,
            data,
            layout,
            huge_bytes: 0,
            leak: false,
        };
        // Asked for, or kept out of, huge pages: with THP `always` the kernel would otherwise
        // give base-page buffers huge pages too.
        let advice = if arena.layout.huge {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        // SAFETY: the range lies inside our own mapping (data + data_len <= map_len); the
        // advice only changes how its pages are backed, not their contents.
        let r =
            unsafe { libc::madvise(map.as_ptr().add(data).cast(), arena.layout.data_len, advice) };
        if r != 0 {
            // No THP in this kernel: base pages either way.
            tracing::debug!(
                "L2 buffers: madvise({advice}) refused ({})",
                io::Error::last_os_error()
            );
        }
        // Touch every page once (zero them: a fresh mapping reads as zeroes anyway).
        arena.data_mut().fill(0);
        // What the kernel gave, measured in both cases.
        arena.huge_bytes =
            huge_bytes_at(arena.map.as_ptr() as usize + data).min(arena.layout.data_len);
        Ok(arena)
    }

    fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: `data..data + data_len` lies inside the live mapping, which we own; the
        // returned borrow is tied to `&mut self`.
        unsafe {
            std::slice::from_raw_parts_mut(self.map.as_ptr().add(self.data), self.layout.data_len)
        }
    }

    fn len(&self) -> usize {
        self.layout.offsets.len()
    }

    fn buf(&self, i: usize) -> &[u8] {
        let o = self.data + self.layout.offsets[i];
        // SAFETY: every buffer lies inside the data region (`Layout` guarantees
        // offset + buf_len <= data_len); the borrow is tied to `&self`.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(o), self.layout.buf_len) }
    }

    fn buf_mut(&mut self, i: usize) -> &mut [u8] {
        let o = self.data + self.layout.offsets[i];
        // SAFETY: as in `buf`, with `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_ptr().add(o), self.layout.buf_len) }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        if self.leak {
            return;
        }
        // SAFETY: unmaps exactly the mapping made in `new`; no borrow of it outlives `self`,
        // and the engine waits for every in-flight operation before dropping the arena (or
        // sets `leak`).
        unsafe {
            libc::munmap(self.map.as_ptr().cast(), self.map_len);
        }
    }
}

/// Direction of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
}

/// Why an operation could not be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PushError {
    /// The submission queue is full.
    QueueFull,
    /// No such buffer, or the buffer is busy, or the length exceeds it.
    BadBuffer,
}

/// An io_uring over registered files with a fixed set of (possibly registered) buffers.
pub(crate) struct Engine {
    ring: IoUring,
    bufs: Arena,
    busy: Vec<bool>,
    fixed_bufs: bool,
    in_flight: usize,
    queued: usize,
    /// Empty [`Engine::submit`] calls (nothing queued, nothing flagged) since the last
    /// progress (a completion reaped or a kernel entry).
    idle_calls: u32,
    /// When the safety net first looked at the clock in the current idle run.
    idle_since: Option<Instant>,
    enters: u64,
}

/// Submission errors that only mean "try again later" (CQ overflow, memory pressure, signal).
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EBUSY | libc::EAGAIN | libc::EINTR)
    )
}

/// Empty `submit` calls (nothing queued, operations in flight) between two looks at the clock
/// by the safety net.
const IDLE_CHECK: u32 = 64;

/// The safety net: with operations in flight, nothing queued, no flag raised and no
/// completion reaped for this long, `submit` enters the kernel once anyway (then again after
/// as long). Never needed on a kernel that honours `TASKRUN_FLAG`; it bounds the damage if
/// a flag were ever missed, at one entry per interval instead of one per spin.
const SAFETY_NET: Duration = Duration::from_millis(2);

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("buffers", &self.bufs.len())
            .field("fixed_bufs", &self.fixed_bufs)
            .field("in_flight", &self.in_flight)
            .field("queued", &self.queued)
            .finish()
    }
}

impl Engine {
    /// A ring of `entries` slots over `fds` (registered as fixed files) and buffers placed by
    /// `layout` in one mapping (registered as fixed buffers when the memlock limit or
    /// CAP_IPC_LOCK allows it; otherwise plain reads and writes are used, with a log line).
    pub(crate) fn new(fds: &[RawFd], layout: Layout, entries: u32) -> io::Result<Self> {
        let entries = entries.max(1).next_power_of_two();
        // COOP_TASKRUN: completions do not interrupt the polling thread with an IPI (costly
        // in a VM); TASKRUN_FLAG: the kernel flags the SQ ring when completion work is
        // pending, so `submit` enters the kernel only then. Older kernels: plain ring.
        let ring = match IoUring::builder()
            .setup_coop_taskrun()
            .setup_taskrun_flag()
            .build(entries)
        {
            Ok(r) => r,
            Err(_) => IoUring::builder().build(entries)?,
        };
        ring.submitter().register_files(fds)?;
        let mut bufs = Arena::new(layout)?;
        let iovecs: Vec<libc::iovec> = (0..bufs.len())
            .map(|i| {
                let s = bufs.buf_mut(i);
                libc::iovec {
                    iov_base: s.as_mut_ptr().cast(),
                    iov_len: s.len(),
                }
            })
            .collect();
        // SAFETY: every iovec points into the arena's live mapping, which the engine keeps
        // (never remapped or freed) until after the ring is dropped; the kernel may only
        // access a buffer during an operation we push, and we never hand out a buffer while
        // such an operation is in flight.
        let fixed_bufs = match unsafe { ring.submitter().register_buffers(&iovecs) } {
            Ok(()) => true,
            Err(e) => {
                let total = bufs.len() * bufs.layout.buf_len;
                tracing::warn!(
                    "io_uring: cannot register {total} bytes of buffers ({e}); using unregistered \
                     reads/writes (grant CAP_IPC_LOCK or raise RLIMIT_MEMLOCK)"
                );
                false
            }
        };
        let n = bufs.len();
        tracing::debug!(
            "L2 buffers: {n} of {} bytes, {} of {} bytes in huge pages",
            bufs.layout.buf_len,
            bufs.huge_bytes,
            bufs.layout.data_len
        );
        Ok(Self {
            ring,
            bufs,
            busy: vec![false; n],
            fixed_bufs,
            in_flight: 0,
            queued: 0,
            idle_calls: 0,
            idle_since: None,
            enters: 0,
        })
    }

    /// Bytes of the buffers' mapping backed by transparent huge pages (0 in base pages).
    pub(crate) fn huge_page_bytes(&self) -> usize {
        self.bufs.huge_bytes
    }

    /// Whether the buffers are registered (ReadFixed/WriteFixed) or not.
    pub(crate) fn fixed_buffers(&self) -> bool {
        self.fixed_bufs
    }

    /// Operations pushed and not yet reaped.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Operations pushed and not yet handed to the kernel.
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.queued
    }

    /// `io_uring_enter` calls made so far (submissions and waits).
    pub(crate) fn enters(&self) -> u64 {
        self.enters
    }

    /// Buffer `i`'s bytes, unless an operation on it is in flight.
    pub(crate) fn buf(&self, i: usize) -> Option<&[u8]> {
        if *self.busy.get(i)? {
            return None;
        }
        Some(self.bufs.buf(i))
    }

    /// Buffer `i`'s bytes, mutably, unless an operation on it is in flight.
    pub(crate) fn buf_mut(&mut self, i: usize) -> Option<&mut [u8]> {
        if *self.busy.get(i)? {
            return None;
        }
        Some(self.bufs.buf_mut(i))
    }

    /// Queues one read or write of `len` bytes between buffer `buf` and registered file
    /// `file` at `offset`; the completion will carry `buf` back. Nothing reaches the kernel
    /// until [`Engine::submit`].
    pub(crate) fn push(
        &mut self,
        op: Op,
        file: u32,
        offset: u64,
        buf: usize,
        len: u32,
    ) -> Result<(), PushError> {
        if self.busy.get(buf).is_none_or(|&b| b) || len as usize > self.bufs.layout.buf_len {
            return Err(PushError::BadBuffer);
        }
        let ptr = self.bufs.buf_mut(buf).as_mut_ptr();
        let fd = types::Fixed(file);
        let entry = match (op, self.fixed_bufs) {
            (Op::Read, true) => opcode::ReadFixed::new(fd, ptr, len, buf as u16)
                .offset(offset)
                .build(),
            (Op::Write, true) => opcode::WriteFixed::new(fd, ptr, len, buf as u16)
                .offset(offset)
                .build(),
            (Op::Read, false) => opcode::Read::new(fd, ptr, len).offset(offset).build(),
            (Op::Write, false) => opcode::Write::new(fd, ptr, len).offset(offset).build(),
        }
        .user_data(buf as u64);
        // SAFETY: the entry points at `len` bytes inside buffer `buf` (checked above), which
        // stays allocated until the engine is dropped (Drop waits for in-flight operations) and
        // is marked busy below so no reference to it is handed out until its completion.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            return Err(PushError::QueueFull);
        }
        self.busy[buf] = true;
        self.in_flight += 1;
        self.queued += 1;
        Ok(())
    }

    /// Hands the queued operations to the kernel in one `io_uring_enter` (never waits), and
    /// lets the kernel post the completions it holds. With nothing queued it enters only when
    /// the ring flags pending completion work (`IORING_SQ_TASKRUN`: a completion arrived while
    /// the thread ran in user space on another CPU, its CQE is posted at the thread's next
    /// kernel entry) or a CQ overflow, and, as a safety net, once per [`SAFETY_NET`] of
    /// operations in flight without any progress. Completions that arrive while the thread
    /// is on its own CPU are posted when an interrupt returns to it, and reaped without a
    /// system call.
    pub(crate) fn submit(&mut self) -> io::Result<usize> {
        if self.queued == 0 {
            if self.in_flight == 0 {
                return Ok(0);
            }
            let flagged = {
                let sq = self.ring.submission();
                sq.taskrun() || sq.cq_overflow()
            };
            if !flagged && !self.safety_net_due() {
                return Ok(0);
            }
        }
        self.progress();
        self.enters += 1;
        match self.ring.submit() {
            Ok(n) => {
                self.queued = self.queued.saturating_sub(n);
                Ok(n)
            }
            Err(e) if is_transient(&e) => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// One more empty `submit` call: whether the safety net enters the kernel now (one look
    /// at the clock every [`IDLE_CHECK`] calls).
    fn safety_net_due(&mut self) -> bool {
        self.idle_calls += 1;
        if !self.idle_calls.is_multiple_of(IDLE_CHECK) {
            return false;
        }
        let now = Instant::now();
        match self.idle_since {
            None => {
                self.idle_since = Some(now);
                false
            }
            Some(t) => now.duration_since(t) >= SAFETY_NET,
        }
    }

    /// Something happened (a completion, a kernel entry): the idle run starts again.
    fn progress(&mut self) {
        self.idle_calls = 0;
        self.idle_since = None;
    }

    /// Submits what is queued and blocks until at least `min` operations have completed
    /// (capped at the number in flight).
    pub(crate) fn submit_and_wait(&mut self, min: usize) -> io::Result<usize> {
        let want = min.min(self.in_flight);
        self.enters += 1;
        match self.ring.submit_and_wait(want) {
            Ok(n) => {
                self.queued = self.queued.saturating_sub(n);
                self.progress();
                Ok(n)
            }
            Err(e) if is_transient(&e) => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// Drains the completion queue without blocking: `f(buffer, result)` per completion
    /// (result = bytes transferred, or a negative errno). Returns how many were reaped.
    pub(crate) fn reap(&mut self, mut f: impl FnMut(usize, i32)) -> usize {
        let mut n = 0;
        let mut done: [(usize, i32); 64] = [(0, 0); 64];
        loop {
            let mut k = 0;
            {
                let mut cq = self.ring.completion();
                cq.sync();
                for cqe in cq.by_ref().take(done.len()) {
                    done[k] = (cqe.user_data() as usize, cqe.result());
                    k += 1;
                }
            }
            for &(buf, res) in &done[..k] {
                if let Some(b) = self.busy.get_mut(buf) {
                    *b = false;
                }
                self.in_flight = self.in_flight.saturating_sub(1);
                f(buf, res);
            }
            n += k;
            if k > 0 {
                self.progress();
            }
            if k < done.len() {
                return n;
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Wait for every in-flight operation so the kernel is done with the buffers before
        // they are unmapped. If waiting fails, leak the mapping rather than free memory the
        // kernel may still write.
        while self.in_flight > 0 {
            if self.ring.submit_and_wait(1).is_err() {
                self.bufs.leak = true;
                return;
            }
            self.reap(|_, _| {});
        }
    }
}
