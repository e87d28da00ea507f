//! The simulator's in-memory L2: it carries out a router's L2 reads and writes the way the
//! I/O layer would with `ndx-hcs` (batches stored by (content key, batch), reads completed
//! after a fixed delay), so scenarios exercise the shard's L2 protocol on virtual time.

use std::collections::HashMap;

use crate::l2::{L2Failure, L2Read};
use crate::shard::{Actions, Shard};

/// What a router's L2 did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct L2Log {
    /// Reads submitted: (content key, batch), in order.
    pub reads: Vec<(u64, u64)>,
    /// Writes: (content key, batch, Data in the batch), in order.
    pub writes: Vec<(u64, u64, usize)>,
    /// Reads completed (successfully or not).
    pub completed: u64,
}

/// A stored batch: (name hash, Data packet) by segment.
type Batch = Vec<(u64, Vec<u8>)>;

/// An in-memory L2 attached to one simulated router.
#[derive(Debug, Default)]
pub(crate) struct SimL2 {
    store: HashMap<(u64, u64), Batch>,
    pending: Vec<(u64, L2Read)>,
    pub(crate) delay_ns: u64,
    pub(crate) failing: bool,
    pub(crate) log: L2Log,
}

impl SimL2 {
    /// Carries out the L2 requests in `actions` issued at `now`.
    pub(crate) fn carry_out(&mut self, now: u64, actions: &Actions, shard: &mut Shard) {
        for w in actions.l2_writes() {
            let batch: Batch = w.segments().map(|(k, f)| (k, f.to_vec())).collect();
            self.log.writes.push((w.content_key, w.batch, batch.len()));
            self.store.insert((w.content_key, w.batch), batch);
            shard.on_l2_written(w.content_key, w.batch, true);
        }
        for r in actions.l2_reads() {
            self.log.reads.push((r.content_key, r.batch));
            self.pending.push((now + self.delay_ns, *r));
        }
    }

    /// Drops a stored batch (an overwrite the shard does not hear about).
    pub(crate) fn drop_batch(&mut self, key: (u64, u64)) {
        self.store.remove(&key);
    }

    /// When the next read completes.
    pub(crate) fn next_due(&self) -> Option<u64> {
        self.pending.iter().map(|(at, _)| *at).min()
    }

    /// Completes the first read due by `now` into `shard`; false when none is due.
    pub(crate) fn complete_one(&mut self, now: u64, shard: &mut Shard, out: &mut Actions) -> bool {
        let Some(i) = self.pending.iter().position(|(at, _)| *at <= now) else {
            return false;
        };
        let (_, read) = self.pending.remove(i);
        self.log.completed += 1;
        let result = match self.store.get(&(read.content_key, read.batch)) {
            _ if self.failing => Err(L2Failure::Io),
            Some(batch) => Ok(batch.iter().map(|(k, f)| (*k, f.as_slice()))),
            None => Err(L2Failure::Stale),
        };
        shard.on_l2_complete(now, read.request, result, out);
        true
    }
}
