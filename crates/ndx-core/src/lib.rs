//! The ndx forwarding core: PIT, FIB, CS (L1), strategies and the forwarding pipelines,
//! sans-IO and deterministic.
//!
//! A [`Shard`] owns one shard's PIT, CS and dead-nonce list and reads the shared [`Fib`]
//! through a lock-free [`FibReader`]. The I/O layer (AF_XDP workers) calls
//! [`Shard::process`] (or [`Shard::process_burst`]) with the time, the ingress face and the
//! frame, and carries out the returned [`Actions`]; it calls [`Shard::on_timer`] to expire PIT
//! entries. Nothing in this crate reads a clock, opens a socket or file, spawns a thread or
//! uses `unsafe`.
//!
//! | table | structure |
//! |---|---|
//! | [`Pit`] | fixed slab under a cache-line hash index; (name, CanBePrefix, MustBeFresh) keys; in/out-records; expiry by a [`TimerWheel`]; 6-byte PIT tokens (shard in byte 0) |
//! | [`Fib`] | chunked hash table of prefixes, two-stage longest-prefix match, copy-on-write chunks published RCU-style |
//! | [`Cs`] | slab of fixed-size slots, hash index, FIFO/LRU/CLOCK, admission always/LCP/second-hit |
//! | [`DeadNonceList`] | bounded FIFO of recently dead (name, Nonce) pairs |
//!
//! Names are hashed once per packet with keyed SipHash-1-3 ([`NameHashes`]: one pass over
//! the name for the whole-name hash, used by the PIT, the CS and the dead-nonce list, and the
//! FIB's stage-1 prefix, and in a burst of likely CS misses the prefix one component deeper,
//! which the burst prefetches; other prefixes only when the FIB lookup reaches them).
//! [`Shard::process_burst`] decodes and hashes a burst first, prefetches the table buckets
//! of every packet (`ndx_mem::prefetch`: the one audited `unsafe` line lives there), then
//! runs the pipelines. [`sim`] runs whole
//! topologies of shards on virtual time.
mod cs;
mod dispatch;
mod dnl;
mod face;
mod fair;
mod fib;
mod hash;
mod index;
mod l2;
mod lent;
mod pit;
mod shard;
pub mod sim;
mod sim_l2;
mod strategy;
mod timer;
pub use cs::*;
pub use dispatch::*;
pub use dnl::*;
pub use face::*;
pub use fair::{FaceLoad, FaceLoads, Fairness};
pub use fib::*;
pub use hash::*;
pub use l2::{L2Admission, L2Config, L2Counters, L2Failure, L2Read, L2Write};
pub use lent::Lent;
pub use pit::*;
pub use shard::*;
pub use strategy::*;
pub use timer::*;
