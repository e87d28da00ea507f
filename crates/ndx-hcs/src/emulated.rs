//! [`EmulatedL2`]: seed 000's emulated L2 (§3.2): records kept in DRAM, each batch read
//! delayed by `B|c| / tau` (the record's bytes over the configured throughput).
//!
//! Memory (seed 000's M):
//! - [`MemoryMode::Static`]: the whole L2 is one arena allocated and touched up front, and
//!   reads copy into preallocated read buffers (size-restricted, throughput-unrestricted);
//! - [`MemoryMode::Dynamic`]: each record is heap-allocated when written and freed when the
//!   log overwrites it, and every read allocates its own copy (the paper's per-read
//!   allocation, which caps throughput).
//!
//! Delay (seed 000's D), for a device that serves reads one after another at `tau`:
//! - [`DelayMode::Deadline`]: `poll` delivers a read once its due time has passed and never
//!   waits (a non-blocking device model for the busy-polling shard loop);
//! - [`DelayMode::BusyWait`]: `poll` spins until each queued read is due (the paper's busy
//!   wait: accurate, burns the core);
//! - [`DelayMode::Sleep`]: `poll` sleeps until each queued read is due (the paper's sleep:
//!   cheap, inaccurate for short delays).
//!
//! Writes cost no device time and complete at the next `poll`, as in the paper, which only
//! delays reads. The log, index and record format are the same as the file store's.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::backend::{Completion, L2Backend, L2Counters, ReadFailure, SubmitError};
use crate::log::{Location, Log};
use crate::record::{BatchRecord, RecordView, encode};

/// How the read delay is emulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayMode {
    /// Deliver when due, never wait.
    Deadline,
    /// Spin in `poll` until each read is due.
    BusyWait,
    /// Sleep in `poll` until each read is due.
    Sleep,
}

/// How the emulated L2 holds its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryMode {
    /// One arena allocated up front.
    Static,
    /// One allocation per record written and per read.
    Dynamic,
}

/// Configuration of an [`EmulatedL2`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmulatedConfig {
    /// L2 size in bytes (the log's capacity).
    pub capacity: u64,
    /// Largest record in bytes.
    pub max_record: usize,
    /// Throughput tau in bits per second; the delay of a read is `len * 8 / tau`.
    pub tau_bps: f64,
    /// Delay emulation.
    pub delay: DelayMode,
    /// Memory allocation.
    pub memory: MemoryMode,
    /// Reads in flight at most.
    pub read_depth: usize,
    /// Writes queued at most.
    pub write_depth: usize,
}

#[derive(Debug)]
enum Store {
    Static {
        arena: Vec<u8>,
        read_bufs: Vec<Vec<u8>>,
    },
    Dynamic {
        records: HashMap<u64, Box<[u8]>>,
    },
}

#[derive(Debug, Clone, Copy)]
struct PendingRead {
    request_id: u64,
    loc: Location,
    due: Instant,
}

#[derive(Debug, Clone, Copy)]
struct PendingWrite {
    request_id: u64,
    loc: Location,
    content_key: u64,
    batch: u64,
}

/// An L2 in DRAM with an emulated throughput (see the module docs).
#[derive(Debug)]
pub struct EmulatedL2 {
    cfg: EmulatedConfig,
    log: Log,
    store: Store,
    reads: VecDeque<PendingRead>,
    writes: VecDeque<PendingWrite>,
    device_free: Instant,
    counters: L2Counters,
}

impl EmulatedL2 {
    /// An empty emulated L2; a static one allocates and touches all its memory now.
    pub fn new(cfg: EmulatedConfig) -> Self {
        let store = match cfg.memory {
            MemoryMode::Static => {
                let mut arena = vec![0u8; cfg.capacity as usize];
                // Touch every page now so the measurement never pays for a page fault.
                for page in arena.chunks_mut(4096) {
                    page[0] = std::hint::black_box(1);
                    page[0] = 0;
                }
                Store::Static {
                    arena,
                    read_bufs: (0..cfg.read_depth.max(1))
                        .map(|_| vec![0u8; cfg.max_record])
                        .collect(),
                }
            }
            MemoryMode::Dynamic => Store::Dynamic {
                records: HashMap::new(),
            },
        };
        Self {
            log: Log::with_expected_record(&[cfg.capacity], cfg.max_record / 2),
            store,
            reads: VecDeque::with_capacity(cfg.read_depth),
            writes: VecDeque::with_capacity(cfg.write_depth),
            device_free: Instant::now(),
            counters: L2Counters::default(),
            cfg,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EmulatedConfig {
        &self.cfg
    }

    /// The emulated transfer time of `bytes`.
    pub fn delay_of(&self, bytes: u64) -> Duration {
        if self.cfg.tau_bps <= 0.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(bytes as f64 * 8.0 / self.cfg.tau_bps)
    }

    fn wait_until(&self, due: Instant) {
        match self.cfg.delay {
            DelayMode::Deadline => {}
            DelayMode::BusyWait => {
                while Instant::now() < due {
                    std::hint::spin_loop();
                }
            }
            DelayMode::Sleep => {
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
            }
        }
    }

    fn complete_read(&mut self, r: PendingRead, on_done: &mut dyn FnMut(Completion<'_>)) {
        let len = r.loc.len as usize;
        let live = self.log.is_live(&r.loc);
        let mut owned: Vec<u8> = Vec::new();
        let bytes: &[u8] = match &mut self.store {
            Store::Static { arena, read_bufs } => {
                // Each pending read has a buffer of its own: reads complete in order, so the
                // first buffer is always free here.
                let buf = &mut read_bufs[0];
                let off = r.loc.offset as usize;
                buf[..len].copy_from_slice(&arena[off..off + len]);
                &buf[..len]
            }
            Store::Dynamic { records } => {
                if let Some(rec) = records.get(&r.loc.seq) {
                    owned = rec.to_vec();
                }
                &owned
            }
        };
        let result = if !live || bytes.is_empty() {
            Err(ReadFailure::Stale)
        } else {
            match RecordView::parse(bytes) {
                Ok(v) if v.seq() == r.loc.seq => Ok(v),
                Ok(_) => Err(ReadFailure::Stale),
                Err(e) => Err(ReadFailure::Corrupt(e)),
            }
        };
        match &result {
            Ok(_) => {
                self.counters.reads_ok += 1;
                self.counters.read_bytes += u64::from(r.loc.len);
            }
            Err(ReadFailure::Corrupt(_)) => self.counters.corrupt += 1,
            Err(_) => self.counters.stale += 1,
        }
        on_done(Completion::Read {
            request_id: r.request_id,
            location: r.loc,
            result,
        });
    }
}

impl L2Backend for EmulatedL2 {
    fn lookup(&self, content_key: u64, batch: u64) -> Option<Location> {
        self.log.lookup(content_key, batch)
    }

    fn submit_read(&mut self, location: Location, request_id: u64) -> Result<(), SubmitError> {
        if !self.log.is_live(&location) || location.len as usize > self.cfg.max_record {
            return Err(SubmitError::Stale);
        }
        if self.reads.len() >= self.cfg.read_depth {
            self.counters.busy += 1;
            return Err(SubmitError::Busy);
        }
        let now = Instant::now();
        let start = self.device_free.max(now);
        let due = start + self.delay_of(u64::from(location.len));
        self.device_free = due;
        self.reads.push_back(PendingRead {
            request_id,
            loc: location,
            due,
        });
        self.counters.reads += 1;
        Ok(())
    }

    fn submit_write(
        &mut self,
        batch: &BatchRecord<'_>,
        request_id: u64,
    ) -> Result<Location, SubmitError> {
        let len = batch.check(self.cfg.max_record)?;
        if self.writes.len() >= self.cfg.write_depth {
            self.counters.busy += 1;
            return Err(SubmitError::Busy);
        }
        let seq = self.log.next_seq();
        let loc = match &mut self.store {
            Store::Static { .. } => {
                self.log
                    .allocate(len as u32, batch.content_key, batch.batch, |_| {})?
            }
            Store::Dynamic { records } => {
                self.log
                    .allocate(len as u32, batch.content_key, batch.batch, |gone| {
                        records.remove(&gone.seq);
                    })?
            }
        };
        debug_assert_eq!(loc.seq, seq);
        match &mut self.store {
            Store::Static { arena, .. } => {
                let off = loc.offset as usize;
                encode(&mut arena[off..off + len], seq, batch)?;
            }
            Store::Dynamic { records } => {
                let mut rec = vec![0u8; len].into_boxed_slice();
                encode(&mut rec, seq, batch)?;
                records.insert(seq, rec);
            }
        }
        self.writes.push_back(PendingWrite {
            request_id,
            loc,
            content_key: batch.content_key,
            batch: batch.batch,
        });
        self.counters.writes += 1;
        Ok(loc)
    }

    fn flush(&mut self) {}

    fn poll(&mut self, on_done: &mut dyn FnMut(Completion<'_>)) -> usize {
        let mut n = 0;
        while let Some(w) = self.writes.pop_front() {
            self.log.commit(&w.loc, w.content_key, w.batch);
            self.counters.writes_ok += 1;
            self.counters.write_bytes += u64::from(w.loc.len);
            on_done(Completion::Write {
                request_id: w.request_id,
                location: w.loc,
                result: Ok(()),
            });
            n += 1;
        }
        while let Some(r) = self.reads.front().copied() {
            if self.cfg.delay == DelayMode::Deadline && Instant::now() < r.due {
                break;
            }
            self.wait_until(r.due);
            self.reads.pop_front();
            self.complete_read(r, on_done);
            n += 1;
        }
        n
    }

    fn index_log(&self) -> &Log {
        &self.log
    }

    fn index_log_mut(&mut self) -> &mut Log {
        &mut self.log
    }

    fn in_flight(&self) -> usize {
        self.reads.len() + self.writes.len()
    }

    fn own_counters(&self) -> L2Counters {
        self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Segment;

    fn cfg(delay: DelayMode, memory: MemoryMode) -> EmulatedConfig {
        EmulatedConfig {
            capacity: 64 * 4096,
            max_record: 8 * 4096,
            tau_bps: 4e9,
            delay,
            memory,
            read_depth: 4,
            write_depth: 4,
        }
    }

    fn write(l2: &mut EmulatedL2, key: u64, batch: u64) -> Location {
        let frames: Vec<Vec<u8>> = (0..4)
            .map(|i| vec![(key + batch + i) as u8; 4000])
            .collect();
        let segs: Vec<Segment<'_>> = frames
            .iter()
            .enumerate()
            .map(|(i, f)| Segment {
                name_key: i as u64,
                frame: f,
            })
            .collect();
        let rec = BatchRecord {
            content_key: key,
            batch,
            content_name: b"",
            segments: &segs,
        };
        l2.submit_write(&rec, key).unwrap()
    }

    #[test]
    fn every_mode_round_trips_and_evicts() {
        for delay in [DelayMode::Deadline, DelayMode::BusyWait, DelayMode::Sleep] {
            for memory in [MemoryMode::Static, MemoryMode::Dynamic] {
                let mut l2 = EmulatedL2::new(cfg(delay, memory));
                let a = write(&mut l2, 1, 0);
                assert_eq!(l2.lookup(1, 0), None, "visible only after completion");
                let mut writes = 0;
                l2.poll(&mut |c| {
                    writes += usize::from(matches!(c, Completion::Write { result: Ok(()), .. }))
                });
                assert_eq!(writes, 1);
                assert_eq!(l2.lookup(1, 0), Some(a));
                l2.submit_read(a, 77).unwrap();
                let mut got = Vec::new();
                let t0 = Instant::now();
                while got.is_empty() {
                    l2.poll(&mut |c| {
                        if let Completion::Read {
                            request_id,
                            result: Ok(v),
                            ..
                        } = c
                        {
                            got.push((
                                request_id,
                                v.segments().map(|s| s.frame[0]).collect::<Vec<_>>(),
                            ));
                        }
                    });
                }
                // The device model cannot deliver before the transfer time has passed.
                assert!(t0.elapsed() >= l2.delay_of(u64::from(a.len)) / 2);
                assert_eq!(got, vec![(77, vec![1, 2, 3, 4])]);
                // 64 blocks of capacity, 4-block records: the 17th write evicts the first.
                for b in 1..17 {
                    write(&mut l2, 1, b);
                    l2.poll(&mut |_| {});
                }
                assert_eq!(l2.lookup(1, 0), None, "{delay:?} {memory:?}");
                assert!(l2.lookup(1, 16).is_some());
                assert_eq!(l2.submit_read(a, 1), Err(SubmitError::Stale));
                let c = l2.counters();
                assert_eq!((c.reads_ok, c.writes_ok, c.evicted), (1, 17, 1));
                if let Store::Dynamic { records } = &l2.store {
                    assert_eq!(records.len(), 16, "evicted records are freed");
                }
            }
        }
    }

    #[test]
    fn queue_depth_is_enforced() {
        let mut l2 = EmulatedL2::new(EmulatedConfig {
            tau_bps: 1e3,
            ..cfg(DelayMode::Deadline, MemoryMode::Static)
        });
        let a = write(&mut l2, 2, 0);
        l2.poll(&mut |_| {});
        for i in 0..4 {
            l2.submit_read(a, i).unwrap();
        }
        assert_eq!(l2.submit_read(a, 9), Err(SubmitError::Busy));
        // At 1 kbit/s nothing is due yet and Deadline mode does not wait.
        assert_eq!(l2.poll(&mut |_| {}), 0);
        assert_eq!(l2.in_flight(), 4);
        assert_eq!(l2.counters().busy, 1);
    }
}
