//! L2 tier of the ndx hierarchical content store (seeds 000 and 003): one shard's region of
//! batch records on files, read and written with io_uring, and an emulated DRAM L2 for
//! experiments.
//!
//! # Layers
//! | module | what | I/O |
//! |---|---|---|
//! | [`record`](BatchRecord) | record format: header (magic, version, keys, per-segment name key + length, XXH3-64 checksum) + frames, padded to 4096 | none |
//! | [`Log`] | FIFO placement over lanes (files) with wrap-around, (content, batch) → [`Location`] index | none |
//! | [`recover()`] | rebuilds a [`Log`] by scanning headers; skips and counts corrupt/truncated records | a [`LaneReader`] |
//! | [`Region`] | the file store: registered files and buffers, `O_DIRECT`, non-blocking submit/poll | io_uring (the one `unsafe` module) |
//! | [`EmulatedL2`] | seed 000's emulated L2: DRAM, delay `B|c|/tau` (deadline, busy wait, sleep), static or dynamic memory | none |
//!
//! Both stores implement [`L2Backend`], the interface the shard loop drives.
//!
//! # Driving it from a shard loop
//! ```no_run
//! use ndx_hcs::{BatchRecord, Completion, L2Backend, Region, RegionConfig, Segment};
//!
//! let cfg = RegionConfig::new(vec!["/var/lib/ndx/l2-shard0".into()], 1 << 30, 16, 8800);
//! let mut l2 = Region::recover(cfg)?; // or Region::create (empties the files)
//! # let (content_key, batch, frames): (u64, u64, Vec<(u64, Vec<u8>)>) = (1, 0, vec![]);
//! // L1 miss: is the batch in L2? Park the Interest under a request id and read it.
//! if let Some(loc) = l2.lookup(content_key, batch) {
//!     let _ = l2.submit_read(loc, 42); // Err(Busy/Degraded/Stale): treat as an L2 miss
//! }
//! // L1 evicted a whole batch: write it (Err: drop it, it is only a cache).
//! let segs: Vec<Segment<'_>> =
//!     frames.iter().map(|(k, f)| Segment { name_key: *k, frame: f }).collect();
//! let rec = BatchRecord { content_key, batch, content_name: b"", segments: &segs };
//! let _ = l2.submit_write(&rec, 7);
//! // Once per loop iteration: submit what is queued, drain completions, never block.
//! l2.poll(&mut |c| match c {
//!     Completion::Read { request_id, result: Ok(batch), .. } => {
//!         for seg in batch.segments() {
//!             // insert seg.frame into L1 under seg.name_key, then re-run the Interests
//!             // parked under request_id
//!             let _ = (request_id, seg);
//!         }
//!     }
//!     Completion::Read { request_id, result: Err(_), .. } => {
//!         // forward the parked Interests upstream
//!         let _ = request_id;
//!     }
//!     Completion::Write { .. } => {}
//! });
//! # Ok::<(), ndx_hcs::OpenError>(())
//! ```
mod aligned;
mod backend;
mod emulated;
mod log;
mod record;
mod recover;
mod region;
mod uring;
pub use backend::*;
pub use emulated::*;
pub use log::*;
pub use record::*;
pub use recover::*;
pub use region::*;
