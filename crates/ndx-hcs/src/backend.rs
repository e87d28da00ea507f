//! The interface a shard loop drives: [`L2Backend`], its completions, errors and counters.

use thiserror::Error;

use crate::log::{AllocError, Location, Log};
use crate::record::{BatchRecord, EncodeError, RecordError, RecordView};

/// Why a read or write could not be queued (the caller keeps serving from L1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SubmitError {
    /// Every buffer of that kind is in flight (queue depth reached): retry after a `poll`.
    #[error("L2 queue depth reached")]
    Busy,
    /// The store stopped after a failing device (or its ring failed); the router runs L1-only.
    #[error("L2 degraded: running L1-only")]
    Degraded,
    /// Writes stopped after a full disk or a write error; reads still serve what was written.
    #[error("L2 writes stopped (disk full or write error)")]
    WritesStopped,
    /// The location was overwritten since it was looked up.
    #[error("L2 record was overwritten")]
    Stale,
    /// The batch cannot be encoded (empty, header or record too large).
    #[error("cannot encode batch: {0}")]
    Encode(#[from] EncodeError),
    /// The record is larger than a lane.
    #[error("cannot place batch: {0}")]
    Alloc(#[from] AllocError),
}

/// Why a queued read failed. The batch is never served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ReadFailure {
    /// The device returned an error (negative errno from io_uring).
    #[error("L2 read failed: errno {0}")]
    Io(i32),
    /// Fewer bytes than the record's length came back.
    #[error("L2 short read: {got} of {want} bytes")]
    Short {
        /// Bytes read.
        got: u32,
        /// Bytes asked for.
        want: u32,
    },
    /// The bytes are not the record the index promised (overwritten meanwhile).
    #[error("L2 record was overwritten during the read")]
    Stale,
    /// The record failed validation (checksum, header): counted as corrupt and dropped from
    /// the index.
    #[error("L2 record corrupt: {0}")]
    Corrupt(RecordError),
}

/// Why a queued write failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WriteFailure {
    /// The device returned an error (negative errno from io_uring; `ENOSPC` = disk full).
    #[error("L2 write failed: errno {0}")]
    Io(i32),
    /// Fewer bytes than the record's length were written (a full disk, typically).
    #[error("L2 short write: {got} of {want} bytes")]
    Short {
        /// Bytes written.
        got: u32,
        /// Bytes asked for.
        want: u32,
    },
}

/// One finished operation, handed to the `poll` callback. The frames of a read borrow the
/// backend's buffer, which is recycled when the callback returns: copy what you keep (into L1).
#[derive(Debug)]
pub enum Completion<'a> {
    /// A read finished.
    Read {
        /// The id given to `submit_read`.
        request_id: u64,
        /// Where the record was read from.
        location: Location,
        /// The validated record (its segments are the (name key, frame) pairs), or why not.
        result: Result<RecordView<'a>, ReadFailure>,
    },
    /// A write finished; on success the batch is now visible to `lookup`.
    Write {
        /// The id given to `submit_write`.
        request_id: u64,
        /// Where the record was written.
        location: Location,
        /// Success or why not.
        result: Result<(), WriteFailure>,
    },
}

/// Counters of one L2 backend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Counters {
    /// Reads queued.
    pub reads: u64,
    /// Reads that returned a valid batch.
    pub reads_ok: u64,
    /// Bytes of valid batches read.
    pub read_bytes: u64,
    /// Writes queued.
    pub writes: u64,
    /// Writes completed.
    pub writes_ok: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Submissions refused because the queue depth was reached.
    pub busy: u64,
    /// Corrupt records met by reads (plus those the recovery scan skipped).
    pub corrupt: u64,
    /// Records lost to a file cut short: skipped by the recovery scan, or dropped from the
    /// index when [`L2Backend::check_files`] found their file shorter than them.
    pub truncated: u64,
    /// Reads whose record failed validation (checksum, header, lengths): bit flips and torn
    /// records. Never served; the record leaves the index. (Also counted in `corrupt`.)
    pub checksum_errors: u64,
    /// Reads that returned fewer bytes than the record (its file was cut short under it).
    /// The record leaves the index.
    pub short_reads: u64,
    /// Reads the device failed (negative errno). The record leaves the index.
    pub read_errors: u64,
    /// Writes that failed with an error other than `ENOSPC`; writes stop.
    pub write_errors: u64,
    /// Writes refused for lack of space (`ENOSPC`, or a short write); writes stop.
    pub enospc: u64,
    /// Backing files found deleted while open, or missing at start-up.
    pub files_lost: u64,
    /// True once writes stopped (full disk, write error); reads still serve the records.
    pub writes_stopped: bool,
    /// Reads that found their record overwritten.
    pub stale: u64,
    /// I/O errors (reads, writes, submissions).
    pub io_errors: u64,
    /// Records overwritten by the FIFO log.
    pub evicted: u64,
    /// Records currently indexed.
    pub indexed: u64,
    /// True once the backend degraded to L1-only.
    pub degraded: bool,
    /// `io_uring_enter` system calls made (submissions, completion pickups and waits): the
    /// store's kernel crossings, at most one per `poll`. Always 0 for the emulated store.
    pub ring_enters: u64,
}

/// An L2 store driven by one single-threaded shard loop. No method blocks (except the
/// emulated L2's `Sleep`/`BusyWait` delay modes, which model a synchronous device on purpose).
///
/// The loop's contract:
/// 1. On an L1 miss, [`lookup`](L2Backend::lookup) the (content, batch); on a hit, park the
///    Interest under a request id and [`submit_read`](L2Backend::submit_read).
/// 2. When L1 evicts a whole batch, [`submit_write`](L2Backend::submit_write) it.
/// 3. Once per loop iteration, [`poll`](L2Backend::poll): it hands the queued operations to
///    the device in one batch and delivers every finished one to the callback.
/// 4. A [`SubmitError`] never needs handling beyond counting: the Interest is forwarded
///    upstream (or the evicted batch dropped) as if L2 had missed.
pub trait L2Backend {
    /// The newest record of (content, batch), if written and not overwritten. Always `None`
    /// when degraded.
    fn lookup(&self, content_key: u64, batch: u64) -> Option<Location>;

    /// Queues a read of the record at `location`; `request_id` comes back in the completion.
    fn submit_read(&mut self, location: Location, request_id: u64) -> Result<(), SubmitError>;

    /// Encodes `batch` into a write buffer and queues its write at the log's head (which may
    /// overwrite the oldest records). Returns where it will live; it becomes visible to
    /// `lookup` when its completion is polled.
    fn submit_write(
        &mut self,
        batch: &BatchRecord<'_>,
        request_id: u64,
    ) -> Result<Location, SubmitError>;

    /// Hands queued operations to the device now (`poll` does it too).
    fn flush(&mut self);

    /// Submits what is queued, then delivers every finished operation to `on_done` without
    /// waiting. Returns the number delivered.
    fn poll(&mut self, on_done: &mut dyn FnMut(Completion<'_>)) -> usize;

    /// Operations queued or in flight.
    fn in_flight(&self) -> usize;

    /// Checks the backing files (about once a second, never on the packet path): a file
    /// deleted while open is counted (`files_lost`; its records are still served until the
    /// store closes), and indexed records beyond the end of a file cut short leave the index
    /// (`truncated`; tracked with [`track_dropped`](L2Backend::track_dropped)). A no-op for
    /// stores without files.
    fn check_files(&mut self) {}

    /// Counters: the backend's own, with the index's `indexed` and `evicted`.
    fn counters(&self) -> L2Counters {
        let log = self.index_log();
        L2Counters {
            indexed: log.indexed() as u64,
            evicted: log.evicted(),
            ..self.own_counters()
        }
    }

    /// The counters the backend keeps itself (`indexed` and `evicted` come from the index).
    fn own_counters(&self) -> L2Counters;

    /// True once the backend degraded to L1-only.
    fn is_degraded(&self) -> bool {
        self.counters().degraded
    }

    /// Starts remembering the (content key, batch) pairs that leave the index (overwritten
    /// by the log, or found corrupt), for [`drain_dropped`](L2Backend::drain_dropped): a
    /// caller that mirrors the index (the shard) forgets them. Drain regularly once on.
    fn track_dropped(&mut self, on: bool) {
        self.index_log_mut().track_dropped(on);
    }

    /// Hands the pairs dropped from the index since the last call to `f`, oldest first.
    fn drain_dropped(&mut self, f: &mut dyn FnMut(u64, u64)) {
        self.index_log_mut().drain_dropped(f);
    }

    /// Calls `f` with every indexed (content key, batch), e.g. to refill a mirror of the
    /// index after a recovery.
    fn for_each_indexed(&self, f: &mut dyn FnMut(u64, u64)) {
        for (k, b) in self.index_log().indexed_keys() {
            f(k, b);
        }
    }

    /// The backend's placement and index.
    fn index_log(&self) -> &Log;

    /// The backend's placement and index, mutably (for the methods above).
    fn index_log_mut(&mut self) -> &mut Log;
}
