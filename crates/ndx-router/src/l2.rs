//! The content store's second level (L2) as a shard worker drives it: one store per shard
//! (files read and written with io_uring, or the emulated L2), opened at start-up, and the
//! glue between the forwarding core's L2 requests (`Actions::l2_reads`/`l2_writes`) and the
//! store's non-blocking submit/poll interface (seed 000 §2.3: a lock-free HCS per shard).
//!
//! The store keys its index with the router's name hashes, so a store kept across restarts is
//! only valid under the same hash key and the same sharding. A small layout file next to the
//! first directory's files (`ndx-l2.layout`) records them: with `hash_key = "random"` the
//! router adopts the recorded key, and when the layout changed it empties the store (one log
//! line says why) rather than serve from records it cannot find.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use ndx_core::{Actions, Frame, L2Failure, L2Read, Shard};
use ndx_hcs::{
    BatchRecord, Completion, DelayMode, EmulatedConfig, EmulatedL2, L2Backend, MemoryMode,
    ReadFailure, Region, RegionConfig, Segment, SubmitError, Verify,
};

use crate::config::{Config, L2Kind, L2OnStart, L2Settings};

/// The layout file's name (in the first L2 directory).
pub(crate) const LAYOUT_FILE: &str = "ndx-l2.layout";

/// Why the L2 cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum L2OpenError {
    /// A directory or the layout file cannot be created or written.
    #[error("L2 {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A shard's store cannot be opened.
    #[error("L2 of shard {shard}: {source}")]
    Store {
        /// The shard.
        shard: usize,
        /// The error.
        source: ndx_hcs::OpenError,
    },
}

/// The file of shard `shard` in directory `dir`.
pub(crate) fn shard_file(dir: &Path, shard: usize) -> PathBuf {
    dir.join(format!("shard-{shard}.l2"))
}

/// What the layout file records.
fn layout_text(cfg: &Config, l2: &L2Settings) -> String {
    let (k0, k1) = cfg.hash_key_halves;
    let mut s = String::from(
        "# ndx L2 store layout, written by ndx at start-up. Records are keyed by these\n\
         # settings: when one changes, ndx empties the store. Do not edit.\n",
    );
    let batch = cfg.shard.l2.map_or(0, |c| c.batch);
    let _ = writeln!(s, "version = 1");
    let _ = writeln!(s, "hash_key = \"{k0:016x}{k1:016x}\"");
    let _ = writeln!(s, "shards = {}", cfg.shards);
    let _ = writeln!(s, "dispatch = \"{:?}\"", cfg.dispatch);
    let _ = writeln!(s, "dispatch_table = {}", cfg.dispatch_table);
    let _ = writeln!(s, "batch = {batch}");
    let _ = writeln!(s, "max_frame = {}", l2.max_frame);
    let _ = writeln!(s, "dirs = {}", l2.dirs.len());
    let _ = writeln!(s, "size = {}", l2.size);
    s
}

/// The `hash_key` line of a layout file.
fn layout_key(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("hash_key = "))?;
    let hex = line.trim_start_matches("hash_key = ").trim_matches('"');
    if hex.len() != 32 {
        return None;
    }
    Some((
        u64::from_str_radix(&hex[..16], 16).ok()?,
        u64::from_str_radix(&hex[16..], 16).ok()?,
    ))
}

/// Decides whether the files on disk can be kept, adopting the recorded hash key when the
/// configuration asks for a random one, and writes the layout of this run. Returns true when
/// the store must be emptied.
fn settle_layout(cfg: &mut Config, l2: &L2Settings) -> Result<bool, L2OpenError> {
    let ioerr = |path: &Path| {
        let path = path.to_path_buf();
        move |source| L2OpenError::Io { path, source }
    };
    for d in &l2.dirs {
        std::fs::create_dir_all(d).map_err(ioerr(d))?;
    }
    let path = l2.dirs[0].join(LAYOUT_FILE);
    let old = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(ioerr(&path)(e)),
    };
    let mut clear = l2.on_start == L2OnStart::Clear;
    match &old {
        Some(text) if !clear => {
            if cfg.hash_key_random
                && let Some((k0, k1)) = layout_key(text)
            {
                cfg.set_hash_key(k0, k1);
            }
            let now = layout_text(cfg, l2);
            if *text != now {
                let changed: Vec<&str> = now
                    .lines()
                    .filter(|l| !l.starts_with('#') && !text.lines().any(|o| o == *l))
                    .map(|l| l.split(" = ").next().unwrap_or(l))
                    .collect();
                tracing::warn!(
                    "L2 layout changed ({}; see {}): emptying the L2 store",
                    changed.join(", "),
                    path.display()
                );
                clear = true;
            }
        }
        Some(_) => {}
        None => {
            // Files without a layout were not written under a known key: start empty.
            clear = true;
        }
    }
    let tmp = path.with_extension("layout.tmp");
    std::fs::write(&tmp, layout_text(cfg, l2)).map_err(ioerr(&tmp))?;
    std::fs::rename(&tmp, &path).map_err(ioerr(&path))?;
    Ok(clear)
}

/// Opens every shard's store (files: recovering or emptying them as configured and as the
/// layout allows; emulated: empty). May replace a random hash key in `cfg` by the one the
/// stored records were written with, so call it before anything uses the key.
pub(crate) fn open(cfg: &mut Config) -> Result<Vec<ShardL2>, L2OpenError> {
    let Some(l2) = cfg.l2.clone() else {
        return Ok(Vec::new());
    };
    let max_record = l2.max_record;
    let mut out = Vec::with_capacity(cfg.shards);
    match l2.kind {
        L2Kind::Emulated { tau_bps } => {
            for _ in 0..cfg.shards {
                let e = EmulatedL2::new(EmulatedConfig {
                    capacity: l2.size,
                    max_record,
                    tau_bps,
                    delay: DelayMode::Deadline,
                    memory: MemoryMode::Static,
                    // The emulated device serves reads one after another anyway; accept as
                    // many as the shard asks for (Q + the backlog a file store has).
                    read_depth: 2 * l2.queue_depth,
                    write_depth: l2.write_depth,
                });
                out.push(ShardL2::new(Box::new(e), l2.write_backlog));
            }
            tracing::info!(
                "L2 emulated: {} MiB per shard at {:.1} Gbit/s",
                l2.size >> 20,
                tau_bps / 1e9
            );
        }
        L2Kind::Files => {
            let clear = settle_layout(cfg, &l2)?;
            for shard in 0..cfg.shards {
                let files = l2.dirs.iter().map(|d| shard_file(d, shard)).collect();
                let rc = RegionConfig {
                    files,
                    file_size: l2.size,
                    max_record,
                    read_depth: l2.queue_depth,
                    write_depth: l2.write_depth,
                    direct: l2.direct_io,
                    verify: if l2.verify_full {
                        Verify::Full
                    } else {
                        Verify::Header
                    },
                };
                let region = if clear {
                    Region::create(rc)
                } else {
                    Region::recover(rc)
                }
                // As many reads again may wait in the region: the device keeps Q reads while
                // finished ones are validated (the shard asks for up to 2Q).
                .and_then(|r| r.with_read_backlog(l2.queue_depth))
                .map_err(|source| L2OpenError::Store { shard, source })?;
                let r = region.recovery_report();
                tracing::info!(
                    "L2 shard {shard}: {} x {} MiB, O_DIRECT {}, {} batches recovered \
                     ({} corrupt, {} truncated records skipped, {} files missing)",
                    l2.dirs.len(),
                    l2.size >> 20,
                    if region.direct_io() { "on" } else { "off" },
                    r.indexed,
                    r.corrupt,
                    r.truncated,
                    r.missing_files
                );
                out.push(ShardL2::new(Box::new(region), l2.write_backlog));
            }
        }
    }
    Ok(out)
}

/// Default of `[cs.l2] write_backlog`: batches waiting for a free write slot at most, per
/// shard (each a copy of up to B Data).
pub(crate) const WRITE_BACKLOG: usize = 256;

/// A batch waiting for a write slot (owned copy; the buffers are reused).
#[derive(Debug, Default)]
struct Pending {
    content_key: u64,
    batch: u64,
    name: Vec<u8>,
    bytes: Vec<u8>,
    segments: Vec<(u64, std::ops::Range<usize>)>,
}

/// One shard's L2 store and the bookkeeping between it and the forwarding core.
pub(crate) struct ShardL2 {
    store: Box<dyn L2Backend + Send>,
    /// Batches the store had no write slot for yet, oldest first.
    backlog: std::collections::VecDeque<Pending>,
    spare: Vec<Pending>,
    /// Batches dropped because the backlog was full.
    dropped_writes: u64,
    /// Most batches in `backlog`.
    backlog_limit: usize,
    /// Writes in flight: request id → (content key, batch).
    writes: HashMap<u64, (u64, u64)>,
    next_write: u64,
    /// How much of the current action list was executed already.
    reads_done: usize,
    writes_done: usize,
    reads: Vec<L2Read>,
    refused: Vec<(u64, u64)>,
    /// When to check the store's files next (ns, the worker's clock).
    next_check: u64,
    /// Reads in flight: request id → submission time (ns, the worker's clock).
    read_started: HashMap<u64, u64>,
    /// Submission-to-completion times of the reads ([`crate::stats::L2_READ_LATENCY`]).
    read_latency: crate::stats::Histogram,
}

impl std::fmt::Debug for ShardL2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardL2")
            .field("in_flight", &self.store.in_flight())
            .field("counters", &self.store.counters())
            .finish()
    }
}

impl ShardL2 {
    fn new(mut store: Box<dyn L2Backend + Send>, backlog_limit: usize) -> Self {
        store.track_dropped(true);
        Self {
            store,
            backlog: std::collections::VecDeque::with_capacity(backlog_limit.min(1024)),
            backlog_limit,
            spare: Vec::new(),
            dropped_writes: 0,
            writes: HashMap::with_capacity(256),
            next_write: 0,
            reads_done: 0,
            writes_done: 0,
            reads: Vec::with_capacity(64),
            refused: Vec::with_capacity(64),
            next_check: 0,
            read_started: HashMap::with_capacity(256),
            read_latency: crate::stats::Histogram::default(),
        }
    }

    /// Tells the shard which batches the store holds (after a recovery).
    pub(crate) fn refill<F: Frame>(&self, shard: &mut Shard<F>) -> usize {
        let mut n = 0;
        self.store.for_each_indexed(&mut |k, b| {
            shard.on_l2_written(k, b, true);
            n += 1;
        });
        n
    }

    /// About once a second (call it as often as you like): checks the store's files
    /// (`L2Backend::check_files`: deleted while open, cut short) and tells the shard which
    /// batches left the store's index.
    pub(crate) fn maintain<F: Frame>(&mut self, now: u64, shard: &mut Shard<F>) {
        if now < self.next_check {
            return;
        }
        self.next_check = now + 1_000_000_000;
        self.store.check_files();
        self.store.drain_dropped(&mut |k, b| shard.l2_forget(k, b));
    }

    /// Submission-to-completion times of the reads so far.
    pub(crate) fn read_latency(&self) -> &crate::stats::Histogram {
        &self.read_latency
    }

    /// The store's counters.
    pub(crate) fn counters(&self) -> ndx_hcs::L2Counters {
        self.store.counters()
    }

    /// Operations queued or in flight.
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> usize {
        self.store.in_flight()
    }

    /// Batches waiting for a write slot, and batches dropped because too many waited.
    pub(crate) fn write_backlog(&self) -> (usize, u64) {
        (self.backlog.len(), self.dropped_writes)
    }

    /// Submits one batch write; `Err(true)` when the store is busy (retry later).
    fn submit(
        store: &mut dyn L2Backend,
        writes: &mut HashMap<u64, (u64, u64)>,
        next_write: &mut u64,
        content_key: u64,
        batch: u64,
        content_name: &[u8],
        frames: &mut dyn Iterator<Item = (u64, &[u8])>,
    ) -> Result<(), bool> {
        let mut segs = [Segment {
            name_key: 0,
            frame: &[],
        }; 64];
        let mut n = 0;
        for (k, frame) in frames.take(segs.len()) {
            segs[n] = Segment { name_key: k, frame };
            n += 1;
        }
        let rec = BatchRecord {
            content_key,
            batch,
            content_name,
            segments: &segs[..n],
        };
        let id = *next_write;
        match store.submit_write(&rec, id) {
            Ok(_) => {
                *next_write = next_write.wrapping_add(1);
                writes.insert(id, (content_key, batch));
                Ok(())
            }
            Err(SubmitError::Busy) => Err(true),
            Err(_) => Err(false),
        }
    }

    /// Submits waiting batches while the store has write slots.
    fn drain_backlog<F: Frame>(&mut self, shard: &mut Shard<F>) {
        while let Some(p) = self.backlog.front() {
            let mut frames = p
                .segments
                .iter()
                .map(|(k, r)| (*k, p.bytes.get(r.clone()).unwrap_or(&[])));
            match Self::submit(
                &mut *self.store,
                &mut self.writes,
                &mut self.next_write,
                p.content_key,
                p.batch,
                &p.name,
                &mut frames,
            ) {
                Err(true) => break,
                Err(false) => shard.on_l2_written(p.content_key, p.batch, false),
                Ok(()) => {}
            }
            if let Some(p) = self.backlog.pop_front() {
                self.spare.push(p);
            }
        }
    }

    /// Submits the reads and writes the action list asked for since the last call (reads
    /// that cannot be submitted complete at once as failures, which may add actions; they
    /// are executed too). Call before the action list is sent and cleared.
    pub(crate) fn execute<F: Frame>(
        &mut self,
        now: u64,
        shard: &mut Shard<F>,
        actions: &mut Actions,
    ) {
        let mut submitted = false;
        loop {
            let mut progressed = false;
            for w in actions.l2_writes().skip(self.writes_done) {
                progressed = true;
                self.writes_done += 1;
                let busy = if self.backlog.is_empty() {
                    match Self::submit(
                        &mut *self.store,
                        &mut self.writes,
                        &mut self.next_write,
                        w.content_key,
                        w.batch,
                        w.content_name,
                        &mut w.segments(),
                    ) {
                        Ok(()) => continue,
                        Err(busy) => busy,
                    }
                } else {
                    true
                };
                if !busy {
                    self.refused.push((w.content_key, w.batch));
                } else if self.backlog.len() >= self.backlog_limit {
                    self.dropped_writes += 1;
                    self.refused.push((w.content_key, w.batch));
                } else {
                    // Keep a copy until a write slot frees up.
                    let mut p = self.spare.pop().unwrap_or_default();
                    p.content_key = w.content_key;
                    p.batch = w.batch;
                    p.name.clear();
                    p.name.extend_from_slice(w.content_name);
                    p.bytes.clear();
                    p.segments.clear();
                    for (k, frame) in w.segments() {
                        let at = p.bytes.len();
                        p.bytes.extend_from_slice(frame);
                        p.segments.push((k, at..p.bytes.len()));
                    }
                    self.backlog.push_back(p);
                }
            }
            for (k, b) in self.refused.drain(..) {
                shard.on_l2_written(k, b, false);
            }
            let reads = actions.l2_reads();
            if self.reads_done < reads.len() {
                progressed = true;
                self.reads.clear();
                self.reads.extend_from_slice(&reads[self.reads_done..]);
                self.reads_done = reads.len();
            }
            let mut reads = std::mem::take(&mut self.reads);
            for r in reads.drain(..) {
                let failure = match self.store.lookup(r.content_key, r.batch) {
                    None => {
                        shard.l2_forget(r.content_key, r.batch);
                        Some(L2Failure::Stale)
                    }
                    Some(loc) => match self.store.submit_read(loc, r.request) {
                        Ok(()) => {
                            self.read_started.insert(r.request, now);
                            None
                        }
                        Err(SubmitError::Stale) => {
                            shard.l2_forget(r.content_key, r.batch);
                            Some(L2Failure::Stale)
                        }
                        Err(SubmitError::Degraded) => {
                            shard.l2_forget(r.content_key, r.batch);
                            Some(L2Failure::Io)
                        }
                        Err(_) => Some(L2Failure::Io),
                    },
                };
                if let Some(e) = failure {
                    shard.on_l2_complete(now, r.request, Err::<[(u64, &[u8]); 0], _>(e), actions);
                }
            }
            self.reads = reads;
            if !progressed {
                break;
            }
            submitted = true;
        }
        // Into the device now (with nothing submitted, no call at all: this runs after
        // every burst).
        if submitted {
            self.store.flush();
        }
    }

    /// A clean stop: writes every staged batch (complete or not) and waits, up to `limit`,
    /// for the writes in flight and in the backlog to finish, so a restart finds them.
    /// Leaves whatever the completions produced in `actions` (the caller clears it).
    pub(crate) fn finish<F: Frame>(
        &mut self,
        now: u64,
        shard: &mut Shard<F>,
        actions: &mut Actions,
        limit: std::time::Duration,
    ) {
        shard.l2_flush_staged(actions);
        self.execute(now, shard, actions);
        let t0 = std::time::Instant::now();
        while (self.store.in_flight() > 0 || !self.backlog.is_empty()) && t0.elapsed() < limit {
            if self.poll(now, shard, actions) == 0 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            self.execute(now, shard, actions);
        }
    }

    /// The action list was sent and cleared.
    pub(crate) fn reset(&mut self) {
        self.reads_done = 0;
        self.writes_done = 0;
    }

    /// Delivers finished reads and writes to the shard (answers from a read land in
    /// `actions`) and tells it which batches the store dropped. Never blocks. Returns the
    /// number of operations completed.
    pub(crate) fn poll<F: Frame>(
        &mut self,
        now: u64,
        shard: &mut Shard<F>,
        actions: &mut Actions,
    ) -> usize {
        if self.store.in_flight() == 0 && self.backlog.is_empty() {
            // Nothing can complete (every loop turn comes here); drops only follow writes and
            // failed reads, which are in flight until their completion is polled (and file
            // checks, drained by `maintain`).
            return 0;
        }
        let writes = &mut self.writes;
        let (started, latency) = (&mut self.read_started, &mut self.read_latency);
        let n = self.store.poll(&mut |c| match c {
            Completion::Read {
                request_id, result, ..
            } => {
                if let Some(t) = started.remove(&request_id) {
                    latency.observe(crate::stats::L2_READ_LATENCY.shift, now.saturating_sub(t));
                }
                let result = result
                    .map(|v| v.segments().map(|s| (s.name_key, s.frame)))
                    .map_err(|e| match e {
                        ReadFailure::Stale => L2Failure::Stale,
                        ReadFailure::Corrupt(_) => L2Failure::Corrupt,
                        ReadFailure::Io(_) | ReadFailure::Short { .. } => L2Failure::Io,
                    });
                shard.on_l2_complete(now, request_id, result, actions);
            }
            Completion::Write {
                request_id, result, ..
            } => {
                if let Some((k, b)) = writes.remove(&request_id) {
                    shard.on_l2_written(k, b, result.is_ok());
                }
            }
        });
        self.store.drain_dropped(&mut |k, b| shard.l2_forget(k, b));
        if !self.backlog.is_empty() {
            self.drain_backlog(shard);
            self.store.flush();
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> Config {
        Config::parse(text, Path::new("t.toml")).unwrap()
    }

    fn l2_conf(dir: &Path, extra: &str) -> String {
        format!(
            "[router]\nhash_key = \"random\"\n{extra}\n[cs]\nslot_size = 2048\n[cs.l2]\n\
             enabled = true\ndirs = [\"{}\"]\nsize = \"1MiB\"\nbatch = 4\ndirect_io = false\n",
            dir.display()
        )
    }

    #[test]
    fn layout_adopts_the_recorded_key_and_clears_on_change() {
        let dir = std::env::temp_dir().join(format!("ndx-l2-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut a = cfg(&l2_conf(&dir, ""));
        let l2 = a.l2.clone().unwrap();
        assert!(
            settle_layout(&mut a, &l2).unwrap(),
            "no layout yet: start empty"
        );
        let key = a.hash_key_halves;
        // A restart with a random key adopts the recorded one and keeps the files.
        let mut b = cfg(&l2_conf(&dir, ""));
        assert_ne!(b.hash_key_halves, key);
        assert!(!settle_layout(&mut b, &l2).unwrap());
        assert_eq!(b.hash_key_halves, key);
        assert_eq!(b.shard.hash_key, a.shard.hash_key);
        // Another shard count changes where contents live: the store is emptied.
        let mut c = cfg(&l2_conf(&dir, "shards = 2"));
        assert!(settle_layout(&mut c, &l2).unwrap());
        // An explicit key that differs from the recorded one: emptied too.
        let mut d = cfg(&l2_conf(
            &dir,
            "shards = 2\nhash_key = \"000102030405060708090a0b0c0d0e0f\"",
        )
        .replace("hash_key = \"random\"\n", ""));
        assert!(settle_layout(&mut d, &l2).unwrap());
        assert_eq!(d.hash_key_halves, (0x0001020304050607, 0x08090a0b0c0d0e0f));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod fault_tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use ndx_codec::{DataRepr, InterestRepr, NameBuf, Packet};
    use ndx_core::{CsConfig, FaceId, FaceInfo, Fib, L2Config, NextHop, ShardConfig};

    use super::*;

    const B: u64 = 4;

    fn seg(s: u64) -> NameBuf {
        let mut n = NameBuf::new();
        n.push_generic(b"p").push_generic(b"c").push_segment(s);
        n
    }

    fn interest(s: u64, nonce: u32) -> Vec<u8> {
        let mut i = InterestRepr::new(seg(s));
        i.nonce = Some(nonce);
        i.to_vec().unwrap()
    }

    /// A shard with an L1 of one batch and an L2 of batches of `B`, routing `/p` to face 2
    /// (the producer); face 1 is the consumer.
    /// A 1 MiB region in a fresh directory (buffered I/O; `tweak` adjusts its configuration),
    /// or `None` after `skipping:` when io_uring is unavailable, unless NDX_REQUIRE_ROOT_TESTS=1.
    fn test_region(
        what: &str,
        tweak: impl FnOnce(&mut RegionConfig),
    ) -> Option<(std::path::PathBuf, Region)> {
        let dir = std::env::temp_dir().join(format!("ndx-l2-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rc = RegionConfig::new(vec![dir.join("shard-0.l2")], 1 << 20, B as usize, 2048);
        rc.direct = false;
        tweak(&mut rc);
        match Region::create(rc) {
            Ok(r) => Some((dir, r)),
            Err(ndx_hcs::OpenError::Uring(e))
                if std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() != Ok("1") =>
            {
                eprintln!("skipping: io_uring unavailable: {e}");
                None
            }
            Err(e) => panic!("{e}"),
        }
    }

    fn l2_shard() -> Shard {
        let cfg = ShardConfig {
            cs: CsConfig {
                capacity: B as usize,
                slot_size: 2048,
                ..CsConfig::default()
            },
            l2: Some(L2Config {
                batch: B,
                prefetch: false,
                ..L2Config::default()
            }),
            ..ShardConfig::default()
        };
        let (mut fib, reader) = Fib::new(cfg.hash_key, 2);
        let mut p = NameBuf::new();
        p.push_generic(b"p");
        fib.add_nexthop(
            &p.as_name(),
            NextHop {
                face: FaceId(2),
                cost: 1,
            },
        )
        .unwrap();
        fib.publish();
        drop(fib);
        let mut shard = Shard::new(cfg, reader, 0);
        for f in 1..=2 {
            shard.add_face(FaceId(f), FaceInfo::default());
        }
        shard
    }

    /// Runs one frame through the shard and the L2 glue as the worker does; returns the
    /// frames sent, by face.
    fn step(
        now: u64,
        shard: &mut Shard,
        l2: &mut ShardL2,
        face: u32,
        frame: Option<&[u8]>,
    ) -> Vec<(FaceId, Vec<u8>)> {
        let mut actions = Actions::new();
        if let Some(f) = frame {
            shard.process(now, FaceId(face), f, &mut actions);
        }
        l2.execute(now, shard, &mut actions);
        let mut spins = 0u32;
        while l2.in_flight() > 0 {
            l2.poll(now, shard, &mut actions);
            l2.execute(now, shard, &mut actions);
            spins += 1;
            assert!(spins < 10_000_000, "L2 operations never completed");
        }
        let sent = actions.sends().map(|(f, b)| (f, b.to_vec())).collect();
        actions.clear();
        l2.reset();
        sent
    }

    /// A read the device fails (EIO, injected into the real io_uring store) through the
    /// worker's glue: the Interest parked on it goes upstream as received, the batch leaves the
    /// store and the shard's mirror, and the next Interest for it goes upstream at once.
    #[test]
    fn a_failed_l2_read_sends_the_parked_interest_upstream() {
        let mut shard = l2_shard();
        let Some((dir, mut region)) = test_region("fault", |_| {}) else {
            return;
        };
        let failing = Arc::new(AtomicBool::new(false));
        let f = Arc::clone(&failing);
        region.set_fault_hook(Some(Box::new(move |op: &ndx_hcs::DeviceOp| {
            if f.load(Ordering::Relaxed) && !op.write {
                -5
            } else {
                op.result
            }
        })));
        let mut l2 = ShardL2::new(Box::new(region), 16);
        // Fetch 2B segments through the producer face: L1 (B Data) evicts batch 0 into L2.
        let mut now = 1_000_000;
        for s in 0..2 * B {
            now += 1_000_000;
            let out = step(now, &mut shard, &mut l2, 1, Some(&interest(s, s as u32)));
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].0, FaceId(2));
            let data = DataRepr::new(seg(s), vec![s as u8; 100]).to_vec().unwrap();
            let out = step(now, &mut shard, &mut l2, 2, Some(&data));
            assert_eq!(out[0].0, FaceId(1));
        }
        let (key, batch) = shard.l2_key(&seg(0).as_name()).unwrap();
        assert_eq!(batch, 0);
        assert!(shard.l2_holds(key, 0), "batch 0 written to L2");
        assert_eq!(l2.counters().writes_ok, 1);

        // The device fails the read: the parked Interest goes upstream (same name, same
        // nonce).
        failing.store(true, Ordering::Relaxed);
        now += 1_000_000;
        let out = step(now, &mut shard, &mut l2, 1, Some(&interest(0, 100)));
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].0, FaceId(2));
        let lp = match Packet::decode(&out[0].1) {
            Ok(Packet::Lp(lp)) => lp.fragment().map(<[u8]>::to_vec),
            _ => None,
        };
        match Packet::decode(lp.as_deref().unwrap_or(&out[0].1)) {
            Ok(Packet::Interest(i)) => {
                assert_eq!(i.name(), seg(0).as_name());
                assert_eq!(i.nonce(), Some(100));
            }
            other => panic!("not the Interest: {other:?}"),
        }
        let c = l2.counters();
        assert_eq!((c.read_errors, c.io_errors, c.reads_ok), (1, 1, 0), "{c:?}");
        assert!(!c.degraded);
        let k = shard.l2_counters().unwrap();
        assert_eq!((k.reads, k.read_failures, k.fallbacks), (1, 1, 1), "{k:?}");
        // The read's submission-to-completion time was observed (the same `now` here).
        assert_eq!(l2.read_latency().count(), 1);
        assert_eq!(l2.read_latency().buckets[0], 1);
        assert!(!shard.l2_holds(key, 0), "the mirror forgot the batch");
        // The next Interest for the batch goes upstream without touching the disk.
        now += 1_000_000;
        let out = step(now, &mut shard, &mut l2, 1, Some(&interest(1, 101)));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, FaceId(2));
        assert_eq!(l2.counters().reads, 1);
        drop(l2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The write backlog is bounded: with the store's one write slot taken and never
    /// completed, evicted batches wait in the backlog up to its limit, then are dropped and
    /// counted, and the shard is told so (its mirror does not claim them).
    #[test]
    fn writes_past_the_backlog_are_dropped_and_counted() {
        let mut shard = l2_shard();
        let Some((dir, region)) = test_region("backlog", |rc| rc.write_depth = 1) else {
            return;
        };
        let mut l2 = ShardL2::new(Box::new(region), 2);
        // 7 batches through an L1 of one batch: 6 evicted batches to write. No poll: the
        // first write never completes, so its slot stays taken.
        let mut now = 1_000_000;
        let mut actions = Actions::new();
        for s in 0..7 * B {
            now += 1_000_000;
            for (face, frame) in [
                (1, interest(s, s as u32)),
                (
                    2,
                    DataRepr::new(seg(s), vec![s as u8; 100]).to_vec().unwrap(),
                ),
            ] {
                shard.process(now, FaceId(face), &frame, &mut actions);
                l2.execute(now, &mut shard, &mut actions);
                actions.clear();
                l2.reset();
            }
        }
        let (waiting, dropped) = l2.write_backlog();
        assert_eq!(waiting, 2, "the backlog holds its limit");
        assert_eq!(
            dropped,
            6 - 1 - 2,
            "one in flight, two waiting, the rest dropped"
        );
        let (key, _) = shard.l2_key(&seg(0).as_name()).unwrap();
        assert!(
            !(3..6).any(|b| shard.l2_holds(key, b)),
            "dropped batches are not in the mirror"
        );
        drop(l2);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
