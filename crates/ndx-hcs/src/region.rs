//! [`Region`]: one shard's L2 on files, read and written with io_uring.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::aligned::AlignedBuf;
use crate::backend::{Completion, L2Backend, L2Counters, ReadFailure, SubmitError, WriteFailure};
use crate::log::{Location, Log};
use crate::record::{BLOCK, BatchRecord, RecordView, encode, pad_to_block};
use crate::recover::{LaneReader, RecoveryReport, Verify, recover};
use crate::uring::{Engine, Op, PushError};

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
    /// Q: reads in flight at most (one registered buffer each).
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
/// Buffers `0..read_depth` receive reads; the next `write_depth` hold encoded writes. A read
/// lands straight in its registered buffer and the completion lends the validated frames from
/// it. See [`L2Backend`] for the calling contract.
#[derive(Debug)]
pub struct Region {
    cfg: RegionConfig,
    // The engine owns the buffers and waits for in-flight operations when dropped; it is
    // declared before `files` so the files are closed after it.
    engine: Engine,
    #[expect(dead_code, reason = "keeps the registered file descriptors open")]
    files: Vec<File>,
    direct: Vec<bool>,
    log: Log,
    slots: Vec<Slot>,
    free_reads: Vec<usize>,
    free_writes: Vec<usize>,
    counters: L2Counters,
    recovery: RecoveryReport,
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
        for path in &cfg.files {
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
            let (log, report) = recover(&mut FileReader(&plain), &caps, cfg.max_record, cfg.verify)
                .map_err(ferr(&cfg.files[0]))?;
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
        let nbufs = cfg.read_depth + cfg.write_depth;
        let bufs = (0..nbufs)
            .map(|_| AlignedBuf::new(cfg.max_record))
            .collect();
        let fds: Vec<i32> = files.iter().map(AsRawFd::as_raw_fd).collect();
        let engine = Engine::new(&fds, bufs, nbufs as u32).map_err(OpenError::Uring)?;
        let counters = L2Counters {
            corrupt: recovery.corrupt,
            truncated: recovery.truncated,
            indexed: log.indexed() as u64,
            ..L2Counters::default()
        };
        Ok(Self {
            free_reads: (0..cfg.read_depth).rev().collect(),
            free_writes: (cfg.read_depth..nbufs).rev().collect(),
            slots: vec![Slot::Free; nbufs],
            cfg,
            engine,
            files,
            direct,
            log,
            counters,
            recovery,
        })
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

    /// Reads in flight can take this many more.
    pub fn free_read_slots(&self) -> usize {
        self.free_reads.len()
    }

    /// **Blocks** until at least `min` operations have completed (after submitting what is
    /// queued), then delivers completions like [`L2Backend::poll`]. For a dedicated I/O thread,
    /// an idle loop or a benchmark: a forwarding shard must call `poll` instead.
    pub fn wait(&mut self, min: usize, on_done: &mut dyn FnMut(Completion<'_>)) -> usize {
        if let Err(e) = self.engine.submit_and_wait(min) {
            self.degrade("submit", e.raw_os_error().unwrap_or(libc::EIO));
        }
        self.poll(on_done)
    }

    fn degrade(&mut self, what: &str, errno: i32) {
        self.counters.io_errors += 1;
        if !self.counters.degraded {
            self.counters.degraded = true;
            tracing::error!(
                "L2 {what} failed ({}): L2 disabled, the content store runs L1-only",
                io::Error::from_raw_os_error(errno)
            );
        }
    }

    fn complete(&mut self, buf: usize, res: i32, on_done: &mut dyn FnMut(Completion<'_>)) {
        let slot = std::mem::replace(&mut self.slots[buf], Slot::Free);
        match slot {
            Slot::Free => {}
            Slot::Read { request_id, loc } => {
                self.free_reads.push(buf);
                let result = if res < 0 {
                    self.degrade("read", -res);
                    Err(ReadFailure::Io(-res))
                } else if (res as u32) < loc.len {
                    self.counters.io_errors += 1;
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
                        self.counters.reads_ok += 1;
                        self.counters.read_bytes += u64::from(loc.len);
                    }
                    Err(ReadFailure::Stale) => self.counters.stale += 1,
                    Err(ReadFailure::Corrupt(e)) => {
                        self.counters.corrupt += 1;
                        tracing::warn!(
                            "L2 record at lane {} offset {} is corrupt ({e}); dropped",
                            loc.lane,
                            loc.offset
                        );
                    }
                    Err(_) => {}
                }
                if let Err(ReadFailure::Corrupt(_)) = result {
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
                let result = if res < 0 {
                    self.degrade("write", -res);
                    Err(WriteFailure::Io(-res))
                } else if (res as u32) < loc.len {
                    self.degrade("write (short: disk full?)", libc::ENOSPC);
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
        if let Err(e) = self.engine.submit() {
            self.degrade("submit", e.raw_os_error().unwrap_or(libc::EIO));
        }
    }

    fn poll(&mut self, on_done: &mut dyn FnMut(Completion<'_>)) -> usize {
        self.flush();
        let mut done = Vec::<(usize, i32)>::new();
        let mut n = 0;
        // Reap into a small stack list so completions can borrow `self` mutably.
        loop {
            let mut batch = [(0usize, 0i32); 32];
            let mut k = 0;
            let reaped = self.engine.reap(|buf, res| {
                if k < batch.len() {
                    batch[k] = (buf, res);
                    k += 1;
                } else {
                    done.push((buf, res));
                }
            });
            for &(buf, res) in batch[..k].iter().chain(done.iter()) {
                self.complete(buf, res, on_done);
            }
            done.clear();
            n += reaped;
            if reaped == 0 {
                break;
            }
        }
        n
    }

    fn track_dropped(&mut self, on: bool) {
        self.log.track_dropped(on);
    }

    fn drain_dropped(&mut self, f: &mut dyn FnMut(u64, u64)) {
        self.log.drain_dropped(f);
    }

    fn for_each_indexed(&self, f: &mut dyn FnMut(u64, u64)) {
        for (k, b) in self.log.indexed_keys() {
            f(k, b);
        }
    }

    fn in_flight(&self) -> usize {
        self.engine.in_flight()
    }

    fn counters(&self) -> L2Counters {
        L2Counters {
            indexed: self.log.indexed() as u64,
            evicted: self.log.evicted(),
            ..self.counters
        }
    }
}
