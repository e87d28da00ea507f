//! [`Region`]: one shard's L2 on files, read and written with io_uring.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::aligned::Layout;
use crate::backend::{Completion, L2Backend, L2Counters, ReadFailure, SubmitError, WriteFailure};
use crate::log::{Location, Log};
use crate::record::{BLOCK, BatchRecord, RecordView, encode, pad_to_block};
use crate::recover::{LaneReader, RecoveryReport, Verify, recover};
use crate::uring::{Engine, Op, PushError};

/// Reads failing with a device error one after another (no good read in between) after which
/// the device is taken for dead and the region degrades to L1-only.
pub const READ_ERROR_LIMIT: u32 = 32;

/// One finished device operation, as a [`FaultHook`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceOp {
    /// A write (else a read).
    pub write: bool,
    /// Where.
    pub location: Location,
    /// What the kernel returned: bytes transferred, or a negative errno.
    pub result: i32,
}

/// Injects device faults into a [`Region`] (tests and fault drills): called with every read
/// and write completion before the region looks at it, returns the result the region should
/// see instead (`op.result` to leave it alone; `-libc::EIO` for an I/O error,
/// `-libc::ENOSPC` for a full disk, fewer bytes than `op.location.len` for a short transfer).
/// The region then handles it exactly as a real fault. See [`Region::set_fault_hook`].
pub type FaultHook = Box<dyn FnMut(&DeviceOp) -> i32 + Send>;

struct Faults(Option<FaultHook>);

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Some(hook)"
        } else {
            "None"
        })
    }
}

/// Configuration of a [`Region`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionConfig {
    /// Backing files, one lane each (put them on different devices to add bandwidth).
    /// Regular files are created if missing and sized to `file_size`.
    pub files: Vec<PathBuf>,
    /// Bytes of log per file (rounded down to 4096).
    pub file_size: u64,
    /// Largest record (header block + B frames, padded); sizes the buffers.
    pub max_record: usize,
    /// Q: reads in flight at the device at most (one registered buffer each, plus one per
    /// read of the backlog: see [`Region::with_read_backlog`]).
    pub read_depth: usize,
    /// Writes in flight at most (one registered buffer each).
    pub write_depth: usize,
    /// Try `O_DIRECT` (falls back to buffered I/O with a log line if the file system refuses).
    pub direct: bool,
    /// What [`Region::recover`] verifies: whole records, or headers only (faster restart;
    /// frames are then verified by the first read).
    pub verify: Verify,
}

impl RegionConfig {
    /// A configuration for batches of `batch_size` frames of at most `max_frame` bytes:
    /// queue depth 16 for reads and 4 for writes, `O_DIRECT` on, full verification on recovery.
    pub fn new(files: Vec<PathBuf>, file_size: u64, batch_size: usize, max_frame: usize) -> Self {
        Self {
            files,
            file_size,
            max_record: BLOCK + pad_to_block(batch_size * max_frame),
            read_depth: 16,
            write_depth: 4,
            direct: true,
            verify: Verify::Full,
        }
    }
}

/// Why a region cannot be opened.
#[derive(Debug, Error)]
pub enum OpenError {
    /// A backing file cannot be opened, sized or scanned.
    #[error("L2 file {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// io_uring setup failed.
    #[error("io_uring setup: {0}")]
    Uring(io::Error),
    /// The configuration is unusable.
    #[error("invalid L2 configuration: {0}")]
    Config(&'static str),
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Free,
    Read {
        request_id: u64,
        loc: Location,
    },
    Write {
        request_id: u64,
        loc: Location,
        content_key: u64,
        batch: u64,
    },
}

/// One shard's L2: a FIFO log of batch records over one or more files, driven through
/// io_uring with registered files and buffers, `O_DIRECT` where the file system allows it.
///
/// Buffers `0..Q + backlog` receive reads (Q = `read_depth`, backlog: see
/// [`Region::with_read_backlog`], 0 by default); the next `write_depth` hold encoded writes.
/// A read lands straight in its registered buffer and the completion lends the validated
/// frames from it. See [`L2Backend`] for the calling contract.
///
/// At most Q reads are at the device (handed to the kernel and not yet reaped), like fio's
/// `iodepth`. With a backlog, [`submit_read`](L2Backend::submit_read) accepts up to
/// Q + backlog reads; the ones beyond Q wait in a FIFO. [`poll`](L2Backend::poll) reaps the
/// finished reads, hands waiting reads to the device in their place (one `io_uring_enter`),
/// and only then validates (checksum) and delivers the finished ones, so the device keeps Q
/// reads while the CPU checks records.
#[derive(Debug)]
pub struct Region {
    cfg: RegionConfig,
    // The engine owns the buffers and waits for in-flight operations when dropped; it is
    // declared before `files` so the files are closed after it.
    engine: Engine,
    /// Keeps the registered file descriptors open (a new engine registers them again).
    files: Vec<File>,
    direct: Vec<bool>,
    log: Log,
    slots: Vec<Slot>,
    free_reads: Vec<usize>,
    /// Reads accepted beyond the Q at the device, at most (one more read buffer each).
    read_backlog: usize,
    /// Buffers asked for in huge pages ([`Region::with_huge_pages`]).
    huge_pages: bool,
    /// Accepted reads waiting for a device slot, oldest first (their slots are `Slot::Read`).
    pending: VecDeque<usize>,
    /// Reads pushed to the ring and not yet reaped (<= Q).
    device_reads: usize,
    /// Completions reaped this turn, to deliver (kept for its allocation).
    ready: Vec<(usize, i32)>,
    /// Test probe, per read validated: (reads handed to the kernel, reads waiting) then.
    #[cfg(test)]
    device_at_validation: Vec<(usize, usize)>,
    free_writes: Vec<usize>,
    counters: L2Counters,
    recovery: RecoveryReport,
    /// Reads failed by the device since the last good one.
    read_error_run: u32,
    /// Files already counted as deleted while open.
    lost: Vec<bool>,
    faults: Faults,
}

fn open_file(path: &Path, direct: bool, create: bool) -> io::Result<(File, bool)> {
    let mut opts = OpenOptions::new();
    opts.read(true).write(true).create(create);
    if direct {
        match opts.clone().custom_flags(libc::O_DIRECT).open(path) {
            Ok(f) => return Ok((f, true)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                tracing::warn!(
                    "L2 file {}: the file system refuses O_DIRECT; using buffered I/O",
                    path.display()
                );
            }
            Err(e) => return Err(e),
        }
    }
    Ok((opts.open(path)?, false))
}

struct FileReader<'a>(&'a [File]);

impl LaneReader for FileReader<'_> {
    fn read_at(&mut self, lane: usize, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.0[lane].read_at(buf, offset)
    }
}

impl Region {
    /// Creates an empty region: the files are emptied (any old log is discarded) and sized.
    pub fn create(cfg: RegionConfig) -> Result<Self, OpenError> {
        Self::open(cfg, false)
    }

    /// Opens the files as they are and rebuilds the index by scanning the record headers;
    /// corrupt and truncated records are skipped and counted (see
    /// [`Region::recovery_report`]). Missing files are created empty.
    pub fn recover(cfg: RegionConfig) -> Result<Self, OpenError> {
        Self::open(cfg, true)
    }

    fn open(cfg: RegionConfig, keep: bool) -> Result<Self, OpenError> {
        if cfg.files.is_empty() || cfg.files.len() > usize::from(u16::MAX) {
            return Err(OpenError::Config("need between 1 and 65535 files"));
        }
        if cfg.read_depth == 0 || cfg.write_depth == 0 || cfg.read_depth + cfg.write_depth > 4096 {
            return Err(OpenError::Config(
                "read and write depths must be 1..4096 in total",
            ));
        }
        if cfg.max_record < 2 * BLOCK || cfg.max_record as u64 > cfg.file_size {
            return Err(OpenError::Config(
                "max_record must be at least 8192 bytes and fit in a file",
            ));
        }
        let ferr = |path: &Path| {
            let path = path.to_path_buf();
            move |source| OpenError::File { path, source }
        };
        let mut files = Vec::new();
        let mut direct = Vec::new();
        let mut missing = 0u64;
        for path in &cfg.files {
            if keep && std::fs::symlink_metadata(path).is_err() {
                tracing::warn!(
                    "L2 file {} is missing (deleted?): created empty, its records are lost",
                    path.display()
                );
                missing += 1;
            }
            let (f, d) = open_file(path, cfg.direct, true).map_err(ferr(path))?;
            let meta = f.metadata().map_err(ferr(path))?;
            if meta.is_file() && !keep {
                f.set_len(0).map_err(ferr(path))?;
                f.set_len(cfg.file_size).map_err(ferr(path))?;
            }
            files.push(f);
            direct.push(d);
        }
        let caps = vec![cfg.file_size; files.len()];
        let (log, recovery) = if keep {
            // Scan with buffered handles: the scan's buffer is not block-aligned.
            let plain: Vec<File> = cfg
                .files
                .iter()
                .map(|p| open_file(p, false, false).map(|(f, _)| f).map_err(ferr(p)))
                .collect::<Result<_, _>>()?;
            let (log, mut report) =
                recover(&mut FileReader(&plain), &caps, cfg.max_record, cfg.verify)
                    .map_err(ferr(&cfg.files[0]))?;
            report.missing_files = missing;
            tracing::info!(
                "L2 recovered {} records ({} indexed), skipped {} corrupt and {} truncated",
                report.records,
                report.indexed,
                report.corrupt,
                report.truncated
            );
            // Only now extend short files, so a file cut short shows as truncated records.
            for (f, path) in files.iter().zip(&cfg.files) {
                let meta = f.metadata().map_err(ferr(path))?;
                if meta.is_file() && meta.len() < cfg.file_size {
                    f.set_len(cfg.file_size).map_err(ferr(path))?;
                }
            }
            (log, report)
        } else {
            (
                Log::with_expected_record(&caps, cfg.max_record / 2),
                RecoveryReport::default(),
            )
        };
        let counters = L2Counters {
            corrupt: recovery.corrupt,
            truncated: recovery.truncated,
            files_lost: recovery.missing_files,
            indexed: log.indexed() as u64,
            ..L2Counters::default()
        };
        Self::assemble(cfg, files, direct, log, counters, recovery, 0, true)
    }

    /// Sets up the ring and the buffers (Q + `backlog` for reads, then `write_depth` for
    /// writes, in huge pages if `huge_pages`) over the open files and wraps them into an idle
    /// region.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        cfg: RegionConfig,
        files: Vec<File>,
        direct: Vec<bool>,
        log: Log,
        counters: L2Counters,
        recovery: RecoveryReport,
        backlog: usize,
        huge_pages: bool,
    ) -> Result<Self, OpenError> {
        let read_bufs = cfg.read_depth + backlog;
        let nbufs = read_bufs + cfg.write_depth;
        let layout = Layout::new(cfg.max_record, nbufs, huge_pages);
        let fds: Vec<i32> = files.iter().map(AsRawFd::as_raw_fd).collect();
        let engine = Engine::new(&fds, layout, nbufs as u32).map_err(OpenError::Uring)?;
        Ok(Self {
            huge_pages,
            read_error_run: 0,
            lost: vec![false; files.len()],
            faults: Faults(None),
            free_reads: (0..read_bufs).rev().collect(),
            free_writes: (read_bufs..nbufs).rev().collect(),
            slots: vec![Slot::Free; nbufs],
            read_backlog: backlog,
            pending: VecDeque::with_capacity(backlog),
            device_reads: 0,
            ready: Vec::with_capacity(nbufs),
            #[cfg(test)]
            device_at_validation: Vec::new(),
            cfg,
            engine,
            files,
            direct,
            log,
            counters,
            recovery,
        })
    }

    /// Lets [`submit_read`](L2Backend::submit_read) accept `reads` reads beyond the Q =
    /// `read_depth` at the device (default 0: `Busy` as soon as Q reads are outstanding).
    /// They wait in order in a buffer of their own, and `poll` hands them to the device the
    /// moment reads finish, *before* validating those: the device keeps Q reads while the CPU
    /// checksums records, as fio keeps its `iodepth` (which has no checksum to compute).
    /// Never more than Q reads are at the device. A backlog of Q costs Q more buffers of
    /// `max_record` bytes (registered ones count against `RLIMIT_MEMLOCK` without
    /// `CAP_IPC_LOCK`; past it the region falls back to unregistered I/O, with a log line).
    ///
    /// Call it right after [`Region::create`] or [`Region::recover`]: it sets up the ring and
    /// buffers again, so the region must be idle (`in_flight() == 0`), and a failure drops the
    /// region (the files stay as they are).
    pub fn with_read_backlog(self, reads: usize) -> Result<Self, OpenError> {
        if reads == self.read_backlog {
            return Ok(self);
        }
        if self.cfg.read_depth + reads + self.cfg.write_depth > 4096 {
            return Err(OpenError::Config(
                "read depth, read backlog and write depth must be 4096 in total at most",
            ));
        }
        let huge = self.huge_pages;
        self.rebuild(reads, huge)
    }

    /// Whether the I/O buffers are to be in transparent huge pages (default: yes) and no
    /// buffer crosses a huge page boundary. A read into a huge page is one physically
    /// contiguous segment for the device instead of one per 4 KiB page, which a virtio disk
    /// serves about twice as fast for 140 KiB reads (`benches/results/hcs.md`). Buffers that
    /// need less than 1 MiB in total stay in base pages. Whether the kernel gave huge pages
    /// (THP `enabled` = `always` or `madvise`, and free memory) shows in
    /// [`Region::huge_page_bytes`]. Same rules as [`Region::with_read_backlog`]: call it while
    /// idle, right after opening.
    pub fn with_huge_pages(self, on: bool) -> Result<Self, OpenError> {
        if on == self.huge_pages {
            return Ok(self);
        }
        let backlog = self.read_backlog;
        self.rebuild(backlog, on)
    }

    /// Bytes of the I/O buffers the kernel backed with transparent huge pages (0 with
    /// [`Region::with_huge_pages`] off: those buffers are advised out of them).
    pub fn huge_page_bytes(&self) -> usize {
        self.engine.huge_page_bytes()
    }

    /// The same region over new buffers and a new ring.
    fn rebuild(self, backlog: usize, huge_pages: bool) -> Result<Self, OpenError> {
        if self.in_flight() > 0 {
            return Err(OpenError::Config(
                "the read backlog and the buffers can only change while nothing is in flight",
            ));
        }
        let Self {
            cfg,
            engine,
            files,
            direct,
            log,
            counters,
            recovery,
            ..
        } = self;
        // Free the old buffers (and their registration) first: both sets at once could pass
        // RLIMIT_MEMLOCK.
        drop(engine);
        Self::assemble(
            cfg, files, direct, log, counters, recovery, backlog, huge_pages,
        )
    }

    /// What the recovery scan found (all zero for a created region).
    pub fn recovery_report(&self) -> RecoveryReport {
        self.recovery
    }

    /// Whether every file is open with `O_DIRECT`.
    pub fn direct_io(&self) -> bool {
        self.direct.iter().all(|&d| d)
    }

    /// Whether the buffers are registered with io_uring (else plain reads/writes are used).
    pub fn registered_buffers(&self) -> bool {
        self.engine.fixed_buffers()
    }

    /// The configuration.
    pub fn config(&self) -> &RegionConfig {
        &self.cfg
    }

    /// The log (placement and index).
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// How many more reads [`submit_read`](L2Backend::submit_read) accepts now (Q + backlog
    /// at most, see [`Region::with_read_backlog`]).
    pub fn free_read_slots(&self) -> usize {
        self.free_reads.len()
    }

    /// Reads accepted beyond the Q at the device, at most (see [`Region::with_read_backlog`]).
    pub fn read_backlog(&self) -> usize {
        self.read_backlog
    }

    /// Reads at the device: handed to the kernel (or queued for it in the ring, until the next
    /// `poll` or `flush`) and not yet reaped. Never more than Q = `read_depth`.
    pub fn device_reads(&self) -> usize {
        self.device_reads
    }

    /// Reads accepted and waiting for a device slot (`poll` hands them over as reads finish).
    pub fn waiting_reads(&self) -> usize {
        self.pending.len()
    }

    /// `io_uring_enter` system calls made so far (submissions and waits): a cost figure.
    pub fn ring_enters(&self) -> u64 {
        self.engine.enters()
    }

    /// Moves waiting reads to the ring while fewer than Q are at the device; returns how many.
    fn start_waiting_reads(&mut self) -> usize {
        let mut n = 0;
        while self.device_reads < self.cfg.read_depth {
            let Some(&buf) = self.pending.front() else {
                break;
            };
            let Slot::Read { loc, .. } = self.slots[buf] else {
                // Never happens: a waiting buffer always holds a read.
                self.pending.pop_front();
                continue;
            };
            if self
                .engine
                .push(Op::Read, u32::from(loc.lane), loc.offset, buf, loc.len)
                .is_err()
            {
                // The ring is full (it is sized for every buffer, so not expected): retry at
                // the next poll.
                break;
            }
            self.pending.pop_front();
            self.device_reads += 1;
            n += 1;
        }
        n
    }

    /// **Blocks** until at least `min` operations have completed (after submitting what is
    /// queued), then delivers completions like [`L2Backend::poll`]; returns at once when a
    /// `poll` delivers something. For a dedicated I/O thread, an idle loop or a benchmark: a
    /// forwarding shard must call `poll` instead. At most one blocking `io_uring_enter`, on top
    /// of the (at most one) of each of the two polls around it.
    pub fn wait(&mut self, min: usize, on_done: &mut dyn FnMut(Completion<'_>)) -> usize {
        let n = self.poll(on_done);
        if n > 0 || self.engine.in_flight() == 0 {
            return n;
        }
        self.start_waiting_reads();
        if let Err(e) = self.engine.submit_and_wait(min) {
            self.counters.io_errors += 1;
            self.degrade("submit", e.raw_os_error().unwrap_or(libc::EIO));
        }
        n + self.poll(on_done)
    }

    /// Reaps the completions the kernel has posted into `out` (no system call); the reads
    /// among them leave the device.
    fn reap_into(&mut self, out: &mut Vec<(usize, i32)>) -> usize {
        let start = out.len();
        let n = self.engine.reap(|buf, res| out.push((buf, res)));
        for &(buf, _) in &out[start..] {
            if matches!(self.slots[buf], Slot::Read { .. }) {
                self.device_reads = self.device_reads.saturating_sub(1);
            }
        }
        n
    }

    /// Installs (or removes) a [`FaultHook`] that rewrites the results of the device
    /// operations completing from now on: I/O errors, a full disk, short transfers, injected
    /// where no device-mapper `error`/`flakey` target is at hand. Not for production. Set it
    /// after [`Region::with_read_backlog`], which builds the region anew without it.
    pub fn set_fault_hook(&mut self, hook: Option<FaultHook>) {
        self.faults = Faults(hook);
    }

    /// Stops writes after a full disk or a write error; reads go on serving the records.
    fn stop_writes(&mut self, what: &str, errno: i32) {
        self.counters.io_errors += 1;
        if errno == libc::ENOSPC {
            self.counters.enospc += 1;
        } else {
            self.counters.write_errors += 1;
        }
        if !self.counters.writes_stopped {
            self.counters.writes_stopped = true;
            tracing::error!(
                "L2 {what} failed ({}): L2 writes stopped, the {} records written are still \
                 served",
                io::Error::from_raw_os_error(errno),
                self.log.indexed()
            );
        }
    }

    fn degrade(&mut self, what: &str, errno: i32) {
        if !self.counters.degraded {
            self.counters.degraded = true;
            tracing::error!(
                "L2 {what} failed ({}): L2 disabled, the content store runs L1-only",
                io::Error::from_raw_os_error(errno)
            );
        }
    }

    /// The result the region acts on: the device's, or the fault hook's.
    fn inject(&mut self, write: bool, location: Location, result: i32) -> i32 {
        match self.faults.0.as_mut() {
            None => result,
            Some(hook) => hook(&DeviceOp {
                write,
                location,
                result,
            }),
        }
    }

    fn complete(&mut self, buf: usize, res: i32, on_done: &mut dyn FnMut(Completion<'_>)) {
        let slot = std::mem::replace(&mut self.slots[buf], Slot::Free);
        match slot {
            Slot::Free => {}
            Slot::Read { request_id, loc } => {
                #[cfg(test)]
                self.device_at_validation.push((
                    self.device_reads - self.engine.queued().min(self.device_reads),
                    self.pending.len(),
                ));
                self.free_reads.push(buf);
                let res = self.inject(false, loc, res);
                let result = if res < 0 {
                    self.counters.io_errors += 1;
                    self.counters.read_errors += 1;
                    self.read_error_run += 1;
                    if self.read_error_run >= READ_ERROR_LIMIT {
                        self.degrade("read (device failing)", -res);
                    } else if self.read_error_run == 1 {
                        tracing::warn!(
                            "L2 read at lane {} offset {} failed ({}); record dropped",
                            loc.lane,
                            loc.offset,
                            io::Error::from_raw_os_error(-res)
                        );
                    }
                    Err(ReadFailure::Io(-res))
                } else if (res as u32) < loc.len {
                    self.counters.io_errors += 1;
                    self.counters.short_reads += 1;
                    tracing::warn!(
                        "L2 short read at lane {} offset {} ({res} of {} bytes: file cut \
                         short?); record dropped",
                        loc.lane,
                        loc.offset,
                        loc.len
                    );
                    Err(ReadFailure::Short {
                        got: res as u32,
                        want: loc.len,
                    })
                } else {
                    Ok(())
                };
                let bytes = self
                    .engine
                    .buf(buf)
                    .and_then(|b| b.get(..loc.len as usize))
                    .unwrap_or(&[]);
                let result = result.and_then(|()| match RecordView::parse(bytes) {
                    Ok(v) if v.seq() == loc.seq => Ok(v),
                    Ok(_) => Err(ReadFailure::Stale),
                    Err(_) if !self.log.is_live(&loc) => Err(ReadFailure::Stale),
                    Err(e) => Err(ReadFailure::Corrupt(e)),
                });
                match &result {
                    Ok(_) => {
                        self.read_error_run = 0;
                        self.counters.reads_ok += 1;
                        self.counters.read_bytes += u64::from(loc.len);
                    }
                    Err(ReadFailure::Stale) => self.counters.stale += 1,
                    Err(ReadFailure::Corrupt(e)) => {
                        self.counters.corrupt += 1;
                        self.counters.checksum_errors += 1;
                        tracing::warn!(
                            "L2 record at lane {} offset {} is corrupt ({e}); dropped",
                            loc.lane,
                            loc.offset
                        );
                    }
                    Err(_) => {}
                }
                if let Err(
                    ReadFailure::Corrupt(_) | ReadFailure::Io(_) | ReadFailure::Short { .. },
                ) = result
                {
                    // Never read it again: the next Interest for it goes upstream at once.
                    self.log.invalidate_location(&loc);
                }
                on_done(Completion::Read {
                    request_id,
                    location: loc,
                    result,
                });
            }
            Slot::Write {
                request_id,
                loc,
                content_key,
                batch,
            } => {
                self.free_writes.push(buf);
                let res = self.inject(true, loc, res);
                let result = if res < 0 {
                    self.stop_writes("write", -res);
                    Err(WriteFailure::Io(-res))
                } else if (res as u32) < loc.len {
                    self.stop_writes("write (short: disk full?)", libc::ENOSPC);
                    Err(WriteFailure::Short {
                        got: res as u32,
                        want: loc.len,
                    })
                } else {
                    self.counters.writes_ok += 1;
                    self.counters.write_bytes += u64::from(loc.len);
                    self.log.commit(&loc, content_key, batch);
                    Ok(())
                };
                on_done(Completion::Write {
                    request_id,
                    location: loc,
                    result,
                });
            }
        }
    }
}

impl L2Backend for Region {
    fn lookup(&self, content_key: u64, batch: u64) -> Option<Location> {
        if self.counters.degraded {
            return None;
        }
        self.log.lookup(content_key, batch)
    }

    fn submit_read(&mut self, location: Location, request_id: u64) -> Result<(), SubmitError> {
        if self.counters.degraded {
            return Err(SubmitError::Degraded);
        }
        if location.len as usize > self.cfg.max_record || !self.log.is_live(&location) {
            return Err(SubmitError::Stale);
        }
        let Some(buf) = self.free_reads.pop() else {
            self.counters.busy += 1;
            return Err(SubmitError::Busy);
        };
        if self.device_reads >= self.cfg.read_depth || !self.pending.is_empty() {
            // Q reads at the device: wait (in order) for one to finish.
            self.slots[buf] = Slot::Read {
                request_id,
                loc: location,
            };
            self.pending.push_back(buf);
            self.counters.reads += 1;
            return Ok(());
        }
        match self.engine.push(
            Op::Read,
            u32::from(location.lane),
            location.offset,
            buf,
            location.len,
        ) {
            Ok(()) => {
                self.slots[buf] = Slot::Read {
                    request_id,
                    loc: location,
                };
                self.device_reads += 1;
                self.counters.reads += 1;
                Ok(())
            }
            Err(PushError::QueueFull | PushError::BadBuffer) => {
                self.free_reads.push(buf);
                self.counters.busy += 1;
                Err(SubmitError::Busy)
            }
        }
    }

    fn submit_write(
        &mut self,
        batch: &BatchRecord<'_>,
        request_id: u64,
    ) -> Result<Location, SubmitError> {
        if self.counters.degraded {
            return Err(SubmitError::Degraded);
        }
        if self.counters.writes_stopped {
            return Err(SubmitError::WritesStopped);
        }
        let len = batch.check(self.cfg.max_record)?;
        let Some(&buf) = self.free_writes.last() else {
            self.counters.busy += 1;
            return Err(SubmitError::Busy);
        };
        let seq = self.log.next_seq();
        let dst = self.engine.buf_mut(buf).ok_or(SubmitError::Busy)?;
        encode(dst, seq, batch)?;
        let loc = self
            .log
            .allocate(len as u32, batch.content_key, batch.batch, |_| {})?;
        debug_assert_eq!(loc.seq, seq);
        self.free_writes.pop();
        match self
            .engine
            .push(Op::Write, u32::from(loc.lane), loc.offset, buf, loc.len)
        {
            Ok(()) => {
                self.slots[buf] = Slot::Write {
                    request_id,
                    loc,
                    content_key: batch.content_key,
                    batch: batch.batch,
                };
                self.counters.writes += 1;
                Ok(loc)
            }
            Err(_) => {
                // The space is allocated but nothing is written: it stays a hole that the log
                // never indexes.
                self.free_writes.push(buf);
                self.counters.busy += 1;
                Err(SubmitError::Busy)
            }
        }
    }

    fn flush(&mut self) {
        self.start_waiting_reads();
        if let Err(e) = self.engine.submit() {
            self.counters.io_errors += 1;
            self.degrade("submit", e.raw_os_error().unwrap_or(libc::EIO));
        }
    }

    fn poll(&mut self, on_done: &mut dyn FnMut(Completion<'_>)) -> usize {
        // One loop turn, at most one `io_uring_enter`:
        // 1. the completions already posted (no system call); waiting reads take the
        //    finished ones' places at the device;
        let mut ready = std::mem::take(&mut self.ready);
        self.reap_into(&mut ready);
        // 2. one entry hands everything queued to the kernel (those refills, and the reads
        //    and writes submitted since the last turn) and lets it post the completions it
        //    holds; none if nothing is queued and the ring flags no pending completion;
        self.flush();
        // 3. the completions that entry posted, unless reads wait for the device: their
        //    places could only be refilled by a second entry, so they stay in the completion
        //    ring for the next turn (the device keeps Q reads while any read is validated);
        if self.pending.is_empty() {
            self.reap_into(&mut ready);
        }
        // 4. validate and deliver.
        let n = ready.len();
        for (buf, res) in ready.drain(..) {
            self.complete(buf, res, on_done);
        }
        self.ready = ready;
        n
    }

    fn index_log(&self) -> &Log {
        &self.log
    }

    fn index_log_mut(&mut self) -> &mut Log {
        &mut self.log
    }

    fn in_flight(&self) -> usize {
        self.engine.in_flight() + self.pending.len()
    }

    fn own_counters(&self) -> L2Counters {
        L2Counters {
            ring_enters: self.engine.enters(),
            ..self.counters
        }
    }

    fn check_files(&mut self) {
        for lane in 0..self.files.len() {
            let Ok(meta) = self.files[lane].metadata() else {
                continue;
            };
            if meta.nlink() == 0 && !self.lost[lane] {
                self.lost[lane] = true;
                self.counters.files_lost += 1;
                tracing::warn!(
                    "L2 file {} was deleted while open: its records are served until ndx \
                     stops, then lost (the space is freed when ndx closes the file)",
                    self.cfg.files[lane].display()
                );
            }
            if meta.is_file() && meta.len() < self.cfg.file_size {
                let gone = self.log.invalidate_beyond(lane, meta.len());
                if gone > 0 {
                    self.counters.truncated += gone as u64;
                    tracing::warn!(
                        "L2 file {} was cut short to {} bytes: {gone} records dropped",
                        self.cfg.files[lane].display(),
                        meta.len()
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::record::Segment;

    const SEGS: usize = 4;
    const FRAME: usize = 3000;
    /// One record: header, entries, name and 12000 bytes of frames, padded to 4096.
    const RECORD: u64 = 12288;

    fn tempdir() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("ndx-hcs-unit-")
            .tempdir_in("/var/tmp")
            .expect("temp dir in /var/tmp")
    }

    /// A region of `records` record slots with queue depth `q` and read backlog `backlog`, or
    /// `None` (test skipped) when io_uring is unavailable, unless NDX_REQUIRE_ROOT_TESTS=1.
    fn region(dir: &Path, records: u64, q: usize, backlog: usize) -> Option<Region> {
        let mut cfg = RegionConfig::new(vec![dir.join("l2")], records * RECORD, SEGS, FRAME);
        cfg.read_depth = q;
        cfg.write_depth = 2;
        match Region::create(cfg).and_then(|r| r.with_read_backlog(backlog)) {
            Ok(r) => Some(r),
            Err(OpenError::Uring(e))
                if std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() != Ok("1") =>
            {
                eprintln!("skipping: io_uring unavailable: {e}");
                None
            }
            Err(e) => panic!("open region: {e}"),
        }
    }

    fn frame(batch: u64, seg: usize) -> Vec<u8> {
        (0..FRAME)
            .map(|i| (batch as usize * 31 + seg * 7 + i) as u8)
            .collect()
    }

    fn write(r: &mut Region, batch: u64) -> Result<Location, SubmitError> {
        let frames: Vec<Vec<u8>> = (0..SEGS).map(|i| frame(batch, i)).collect();
        let segs: Vec<Segment<'_>> = frames
            .iter()
            .enumerate()
            .map(|(i, f)| Segment {
                name_key: batch * 100 + i as u64,
                frame: f,
            })
            .collect();
        let rec = BatchRecord {
            content_key: 9,
            batch,
            content_name: b"/unit",
            segments: &segs,
        };
        let loc = r.submit_write(&rec, batch)?;
        assert_eq!(loc.len as u64, RECORD);
        Ok(loc)
    }

    /// One poll, checking the device depth and the kernel entries; returns the reads
    /// delivered as (request id, the batch read with its frames checked, or the failure).
    fn poll_checked(r: &mut Region) -> Vec<(u64, Result<u64, ReadFailure>)> {
        let mut out = Vec::new();
        let enters = r.ring_enters();
        r.poll(&mut |c| {
            if let Completion::Read {
                request_id, result, ..
            } = c
            {
                out.push((
                    request_id,
                    result.map(|v| {
                        for (i, seg) in v.segments().enumerate() {
                            assert_eq!(seg.name_key, v.batch() * 100 + i as u64);
                            assert_eq!(seg.frame, frame(v.batch(), i));
                        }
                        v.batch()
                    }),
                ));
            }
        });
        assert!(
            r.ring_enters() - enters <= 1,
            "one io_uring_enter per poll at most"
        );
        assert!(r.device_reads() <= r.config().read_depth);
        out
    }

    fn drain(r: &mut Region) -> Vec<(u64, Result<u64, ReadFailure>)> {
        let mut out = Vec::new();
        let mut spins = 0u64;
        while r.in_flight() > 0 {
            out.extend(poll_checked(r));
            spins += 1;
            if spins.is_multiple_of(1000) {
                std::thread::yield_now();
            }
            assert!(spins < 100_000_000, "io_uring operations never completed");
        }
        out
    }

    fn fill(r: &mut Region, batches: u64) -> Vec<Location> {
        (0..batches)
            .map(|b| {
                let loc = write(r, b).unwrap();
                drain(r);
                loc
            })
            .collect()
    }

    #[test]
    fn without_a_backlog_reads_are_refused_at_the_queue_depth() {
        let dir = tempdir();
        let Some(mut r) = region(dir.path(), 8, 2, 0) else {
            return;
        };
        assert_eq!(r.read_backlog(), 0);
        let locs = fill(&mut r, 2);
        r.submit_read(locs[0], 0).unwrap();
        r.submit_read(locs[1], 1).unwrap();
        assert_eq!(r.submit_read(locs[0], 2), Err(SubmitError::Busy));
        assert_eq!((r.device_reads(), r.waiting_reads()), (2, 0));
        let mut got = drain(&mut r);
        got.sort_by_key(|g| g.0);
        assert_eq!(got, vec![(0, Ok(0)), (1, Ok(1))]);
        assert_eq!(r.counters().busy, 1);
    }

    #[test]
    fn backlog_reads_wait_and_reach_the_device_before_finished_reads_are_validated() {
        let dir = tempdir();
        let Some(mut r) = region(dir.path(), 8, 2, 3) else {
            return;
        };
        let locs = fill(&mut r, 6);
        for (i, loc) in locs.iter().take(5).enumerate() {
            r.submit_read(*loc, i as u64).unwrap();
        }
        assert_eq!(r.free_read_slots(), 0);
        assert_eq!(r.submit_read(locs[5], 5), Err(SubmitError::Busy));
        assert_eq!((r.device_reads(), r.waiting_reads()), (2, 3));
        assert_eq!(r.in_flight(), 5);
        let mut got = drain(&mut r);
        got.sort_by_key(|g| g.0);
        let want: Vec<(u64, Result<u64, ReadFailure>)> = (0..5).map(|b| (b, Ok(b))).collect();
        assert_eq!(got, want);
        let c = r.counters();
        assert_eq!((c.reads, c.reads_ok, c.busy), (5, 5, 1));
        // Whenever reads were still waiting, the device already held Q reads, handed to the
        // kernel, while a finished one was being validated; the first validation found the
        // device refilled.
        let probe = &r.device_at_validation;
        assert_eq!(probe.len(), 5);
        assert_eq!(probe[0].0, 2);
        for &(device, waiting) in probe {
            assert!(waiting == 0 || device == 2, "{probe:?}");
        }
        assert_eq!(
            (r.device_reads(), r.waiting_reads(), r.free_read_slots()),
            (0, 0, 5)
        );
    }

    /// Counts read results: a batch equal to the one asked for, or a stale read.
    fn tally(
        asked: &HashMap<u64, u64>,
        results: Vec<(u64, Result<u64, ReadFailure>)>,
        ok: &mut u64,
        stale: &mut u64,
    ) {
        for (rid, res) in results {
            match res {
                Ok(b) => {
                    assert_eq!(b, asked[&rid]);
                    *ok += 1;
                }
                Err(ReadFailure::Stale) => *stale += 1,
                Err(e) => panic!("read {rid}: {e}"),
            }
        }
    }

    #[test]
    fn the_device_never_holds_more_than_q_reads_and_overwritten_waiting_reads_are_stale() {
        let dir = tempdir();
        // 16 record slots: the writes below wrap the log many times.
        let Some(mut r) = region(dir.path(), 16, 3, 4) else {
            return;
        };
        r.track_dropped(true);
        let mut next_batch = 16;
        let locs = fill(&mut r, next_batch);
        let mut live: Vec<(u64, Location)> = locs
            .into_iter()
            .enumerate()
            .map(|(b, l)| (b as u64, l))
            .collect();
        let mut asked = HashMap::new();
        let (mut ok, mut stale, mut id, mut rng) = (0u64, 0u64, 0u64, 0x2545_F491_4F6C_DD1Du64);
        while id < 400 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Fill the queue and the backlog with reads of live records...
            while r.free_read_slots() > 0 && id < 400 {
                let (b, loc) = live[(rng % live.len() as u64) as usize];
                rng = rng.rotate_left(7);
                match r.submit_read(loc, id) {
                    Ok(()) => {
                        asked.insert(id, b);
                        id += 1;
                    }
                    Err(SubmitError::Stale) => break,
                    Err(e) => panic!("submit read: {e}"),
                }
            }
            assert!(r.device_reads() <= 3 && r.waiting_reads() <= 4);
            // ... and overwrite some, possibly while reads of them wait.
            if rng % 3 == 0 && write(&mut r, next_batch).is_ok() {
                next_batch += 1;
            }
            tally(&asked, poll_checked(&mut r), &mut ok, &mut stale);
            let mut dropped = Vec::new();
            r.drain_dropped(&mut |_, b| dropped.push(b));
            live.retain(|(b, _)| !dropped.contains(b));
            for b in live.last().map_or(0, |l| l.0 + 1)..next_batch {
                if let Some(loc) = r.lookup(9, b) {
                    live.push((b, loc));
                }
            }
        }
        tally(&asked, drain(&mut r), &mut ok, &mut stale);
        assert_eq!(ok + stale, 400);
        assert!(ok > 0);
        let c = r.counters();
        assert_eq!(
            (c.reads, c.reads_ok, c.stale, c.corrupt),
            (400, ok, stale, 0)
        );
        assert!(r.device_at_validation.iter().all(|&(d, _)| d <= 3));
    }

    #[test]
    fn the_backlog_changes_only_while_idle_and_keeps_the_log() {
        let dir = tempdir();
        let Some(mut r) = region(dir.path(), 8, 2, 0) else {
            return;
        };
        let locs = fill(&mut r, 3);
        r.submit_read(locs[0], 0).unwrap();
        assert!(matches!(r.with_read_backlog(2), Err(OpenError::Config(_))));
        let Some(r) = region(dir.path(), 8, 2, 0) else {
            return;
        };
        assert!(matches!(
            r.with_read_backlog(5000),
            Err(OpenError::Config(_))
        ));
        let Some(mut r) = region(dir.path(), 8, 2, 0) else {
            return;
        };
        let locs = fill(&mut r, 3);
        let mut r = r.with_read_backlog(2).unwrap();
        assert_eq!((r.read_backlog(), r.free_read_slots()), (2, 4));
        assert_eq!(r.lookup(9, 2), Some(locs[2]));
        for (i, loc) in locs.iter().enumerate() {
            r.submit_read(*loc, i as u64).unwrap();
        }
        r.submit_read(locs[0], 3).unwrap();
        assert_eq!(r.waiting_reads(), 2);
        let mut got = drain(&mut r);
        got.sort_by_key(|g| g.0);
        assert_eq!(got, vec![(0, Ok(0)), (1, Ok(1)), (2, Ok(2)), (3, Ok(0))]);
        // Writes still use their own buffers.
        write(&mut r, 3).unwrap();
        drain(&mut r);
        assert!(r.lookup(9, 3).is_some());
    }
}
