//! Per-shard counters that other threads can read while the shard runs.
//!
//! A shard worker keeps its counters in plain local integers and copies them into its
//! [`ShardStats`] every few milliseconds with relaxed atomic stores: no lock, no contended
//! cache line on the packet path. Readers (the control socket, the exit report) see values at
//! most one publication old.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use ndx_codec::ReassemblyCounters;
use ndx_core::{DropReason, FaceLoads, ShardCounters};

/// Counter names, in [`ShardStats`] order.
pub const COUNTERS: &[&str] = &[
    "rx_frames",
    "rx_bytes",
    "tx_frames",
    "tx_bytes",
    "tx_ring_full",
    "exchanged_out",
    "exchanged_in",
    "exchange_full",
    "unresolved_face",
    "unknown_face",
    "faces_created",
    "faces_refused",
    "loops",
    "rx_unparsed",
    "tx_too_big",
    "xsk_rx_dropped",
    "xsk_rx_ring_full",
    "xsk_fill_ring_empty",
    "xsk_fill_starved",
    "host_in",
    "host_out",
    "host_queue_full",
    "interests_in",
    "data_in",
    "nacks_in",
    "interests_out",
    "data_out",
    "nacks_out",
    "cs_hits",
    "aggregated",
    "suppressed",
    "by_token",
    "nacks_limited",
    "data_late",
    "drop_malformed",
    "drop_reassembly",
    "drop_hop_limit",
    "drop_loop",
    "drop_no_route",
    "drop_pit_full",
    "drop_pit_quota",
    "drop_unsolicited",
    "drop_nack_unmatched",
    "drop_idle",
    "drop_scope",
    "pit_entries",
    "cs_entries",
    "cs_lookup_hits",
    "cs_lookup_misses",
    "cs_insertions",
    "cs_evictions",
    "cs_kept",
    "cs_frames_held",
    "l2_parked",
    "l2_reads",
    "l2_prefetches",
    "l2_read_failures",
    "l2_served",
    "l2_fallbacks",
    "l2_busy",
    "l2_writes",
    "l2_rejected",
    "l2_reads_ok",
    "l2_read_bytes",
    "l2_writes_ok",
    "l2_write_bytes",
    "l2_corrupt",
    "l2_stale",
    "l2_io_errors",
    "l2_evicted",
    "l2_indexed",
    "l2_degraded",
    "l2_write_backlog",
    "l2_writes_dropped",
    "reassembly_timeouts",
    "reassembly_evicted",
    "reassembly_errors",
    "l2_checksum_errors",
    "l2_short_reads",
    "l2_read_errors",
    "l2_write_errors",
    "l2_enospc",
    "l2_truncated",
    "l2_files_lost",
    "l2_writes_stopped",
    "tx_link_down",
    "tx_errors",
];

/// Indexes into [`COUNTERS`] for the I/O layer's own counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Io {
    /// Frames received on this shard's sockets.
    RxFrames = 0,
    /// Bytes received.
    RxBytes,
    /// Frames sent.
    TxFrames,
    /// Bytes sent.
    TxBytes,
    /// Frames dropped because the TX ring or frame pool was full.
    TxRingFull,
    /// Frames handed to their owner shard.
    ExchangedOut,
    /// Frames received from another shard.
    ExchangedIn,
    /// Frames dropped because an exchange ring was full.
    ExchangeFull,
    /// Frames not sent because the face's next hop is not resolved yet.
    UnresolvedFace,
    /// Frames dropped because they came from an unknown peer and on-demand faces are off.
    UnknownFace,
    /// On-demand faces created.
    FacesCreated,
    /// Frames from new peers refused an on-demand face (`[udp]`'s bounds; one per frame).
    FacesRefused,
    /// Worker loop iterations.
    Loops,
    /// Frames whose link headers could not be parsed (not Ethernet/IP/UDP NDN).
    RxUnparsed,
    /// Packets that could not be fragmented to fit the outgoing link.
    TxTooBig,
    /// Kernel: frames dropped on our sockets for other reasons (XDP_STATISTICS).
    XskRxDropped,
    /// Kernel: frames dropped because an RX ring was full.
    XskRxRingFull,
    /// Kernel: times a fill ring was found empty.
    XskFillRingEmpty,
    /// Times the fill ring could not be topped up for lack of free frames.
    XskFillStarved,
    /// Packets the host thread handed in (from app faces, management, kernel UDP).
    HostIn,
    /// Packets sent to host faces (app connections, management).
    HostOut,
    /// Packets for host faces dropped because the host's queue was full.
    HostQueueFull,
    /// Packets not sent because their interface is down or was deleted.
    TxLinkDown = L2_FAULT_BASE + 8,
    /// Kernel: transmit kicks (`sendto`) that failed with something other than "try again"
    /// (ENETDOWN while the interface is down, ENXIO once it is deleted).
    TxErrors,
}

const CORE_BASE: usize = 22;
const L2_BASE: usize = CORE_BASE + 31;
const REASSEMBLY_BASE: usize = L2_BASE + 21;
/// The L2 store's faults, one counter per class (ndx-hcs README, "Storage faults").
const L2_FAULT_BASE: usize = REASSEMBLY_BASE + 3;

/// One shard's published counters.
#[derive(Debug)]
pub struct ShardStats {
    values: Vec<AtomicU64>,
    /// Per-face loads and the PIT share, published less often (a list, behind a lock the
    /// packet path never takes).
    faces: Mutex<FacesSnapshot>,
}

/// A shard's per-face loads ([`ndx_core::FaceLoad`]) and the PIT share each face is held to.
#[derive(Debug, Clone, Default)]
pub struct FacesSnapshot {
    /// The PIT share each face is held to now.
    pub pit_share: u32,
    /// Every face the shard has seen, with its load.
    pub loads: FaceLoads,
}

impl Default for ShardStats {
    fn default() -> Self {
        Self {
            values: COUNTERS.iter().map(|_| AtomicU64::new(0)).collect(),
            faces: Mutex::new(FacesSnapshot::default()),
        }
    }
}

/// A shard's counters as plain numbers (the worker's local copy, or a reader's snapshot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot(pub Vec<u64>);

impl Default for Snapshot {
    fn default() -> Self {
        Self(vec![0; COUNTERS.len()])
    }
}

impl Snapshot {
    /// Adds to an I/O counter.
    #[inline]
    pub fn add(&mut self, c: Io, n: u64) {
        self.0[c as usize] += n;
    }

    /// Sets an I/O counter (values read from elsewhere, such as the kernel's).
    pub fn set(&mut self, c: Io, v: u64) {
        self.0[c as usize] = v;
    }

    /// An I/O counter.
    pub fn io(&self, c: Io) -> u64 {
        self.0[c as usize]
    }

    /// A counter by name.
    pub fn get(&self, name: &str) -> Option<u64> {
        COUNTERS.iter().position(|&n| n == name).map(|i| self.0[i])
    }

    /// Copies the forwarding core's counters in.
    pub fn set_core(
        &mut self,
        c: &ShardCounters,
        pit: usize,
        cs_len: usize,
        cs: ndx_core::CsCounters,
        frames_held: usize,
    ) {
        let v = [
            c.interests_in,
            c.data_in,
            c.nacks_in,
            c.interests_out,
            c.data_out,
            c.nacks_out,
            c.cs_hits,
            c.aggregated,
            c.suppressed,
            c.by_token,
            c.nacks_limited,
            c.data_late,
            c.dropped(DropReason::Malformed),
            c.dropped(DropReason::Reassembly),
            c.dropped(DropReason::HopLimit),
            c.dropped(DropReason::Loop),
            c.dropped(DropReason::NoRoute),
            c.dropped(DropReason::PitFull),
            c.dropped(DropReason::PitQuota),
            c.dropped(DropReason::Unsolicited),
            c.dropped(DropReason::NackUnmatched),
            c.dropped(DropReason::Idle),
            c.dropped(DropReason::Scope),
            pit as u64,
            cs_len as u64,
            cs.hits,
            cs.misses,
            cs.insertions,
            cs.evictions,
            cs.kept,
            frames_held as u64,
        ];
        self.0[CORE_BASE..CORE_BASE + v.len()].copy_from_slice(&v);
    }

    /// Copies the L2 counters in: the shard's side (parked Interests, reads asked for, ...)
    /// and the store's (reads done, bytes, corrupt records, ...). Zero without an L2.
    /// `backlog` is (batches waiting for a write slot, batches dropped for lack of room).
    pub fn set_l2(
        &mut self,
        core: Option<ndx_core::L2Counters>,
        io: Option<ndx_hcs::L2Counters>,
        backlog: (usize, u64),
    ) {
        let c = core.unwrap_or_default();
        let s = io.unwrap_or_default();
        let v = [
            c.parked,
            c.reads,
            c.prefetches,
            c.read_failures,
            c.served,
            c.fallbacks,
            c.busy,
            c.writes,
            c.rejected,
            s.reads_ok,
            s.read_bytes,
            s.writes_ok,
            s.write_bytes,
            s.corrupt,
            s.stale,
            s.io_errors,
            s.evicted,
            s.indexed,
            u64::from(s.degraded),
            backlog.0 as u64,
            backlog.1,
        ];
        self.0[L2_BASE..L2_BASE + v.len()].copy_from_slice(&v);
        let f = [
            s.checksum_errors,
            s.short_reads,
            s.read_errors,
            s.write_errors,
            s.enospc,
            s.truncated,
            s.files_lost,
            u64::from(s.writes_stopped),
        ];
        self.0[L2_FAULT_BASE..L2_FAULT_BASE + f.len()].copy_from_slice(&f);
    }

    /// Copies the NDNLPv2 reassemblers' counters in, summed over `reassemblers` (the shard's
    /// own and the worker's): fragment sets dropped incomplete after their timeout
    /// (`reassembly_timeouts`) or to make room for a new set (`reassembly_evicted`), and
    /// fragments refused as malformed, inconsistent or oversized (`reassembly_errors`; the
    /// shard's also count in `drop_reassembly`).
    pub fn set_reassembly(&mut self, reassemblers: &[ReassemblyCounters]) {
        let sum = |f: fn(&ReassemblyCounters) -> u64| reassemblers.iter().map(f).sum::<u64>();
        let v = [
            sum(|c| c.expired),
            sum(|c| c.evicted),
            sum(|c| c.invalid + c.too_large),
        ];
        self.0[REASSEMBLY_BASE..REASSEMBLY_BASE + v.len()].copy_from_slice(&v);
    }

    /// Adds another snapshot (totals over shards).
    pub fn accumulate(&mut self, other: &Snapshot) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a += b;
        }
    }

    /// (name, value) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        COUNTERS.iter().copied().zip(self.0.iter().copied())
    }
}

impl ShardStats {
    /// Publishes a worker's local counters.
    pub fn publish(&self, s: &Snapshot) {
        for (a, &v) in self.values.iter().zip(&s.0) {
            a.store(v, Ordering::Relaxed);
        }
    }

    /// Publishes a worker's per-face loads.
    pub fn publish_faces(&self, f: FacesSnapshot) {
        *self.faces.lock().unwrap_or_else(|p| p.into_inner()) = f;
    }

    /// The last published per-face loads.
    pub fn read_faces(&self) -> FacesSnapshot {
        self.faces.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Reads the last published values.
    pub fn read(&self) -> Snapshot {
        Snapshot(
            self.values
                .iter()
                .map(|a| a.load(Ordering::Relaxed))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_counters_land_under_their_names() {
        let mut s = Snapshot::default();
        let mut c = ShardCounters {
            interests_in: 7,
            cs_hits: 3,
            by_token: 6,
            ..Default::default()
        };
        c.drops[DropReason::NoRoute as usize] = 2;
        c.drops[DropReason::Idle as usize] = 9;
        let cs = ndx_core::CsCounters {
            evictions: 5,
            kept: 4,
            ..Default::default()
        };
        s.set_core(&c, 11, 12, cs, 3);
        s.add(Io::RxFrames, 4);
        s.add(Io::Loops, 1);
        assert_eq!(s.get("interests_in"), Some(7));
        assert_eq!(s.get("cs_hits"), Some(3));
        assert_eq!(s.get("by_token"), Some(6));
        assert_eq!(s.get("drop_no_route"), Some(2));
        assert_eq!(s.get("drop_idle"), Some(9));
        assert_eq!(s.get("pit_entries"), Some(11));
        assert_eq!(s.get("cs_entries"), Some(12));
        assert_eq!(s.get("cs_evictions"), Some(5));
        assert_eq!(s.get("cs_kept"), Some(4));
        assert_eq!(s.get("cs_frames_held"), Some(3));
        assert_eq!(s.get("rx_frames"), Some(4));
        assert_eq!(s.get("loops"), Some(1));
        assert_eq!(s.get("cs_lookup_hits"), Some(0));
        s.set_l2(
            Some(ndx_core::L2Counters {
                parked: 6,
                rejected: 8,
                ..Default::default()
            }),
            Some(ndx_hcs::L2Counters {
                reads_ok: 4,
                degraded: true,
                checksum_errors: 5,
                enospc: 2,
                files_lost: 1,
                writes_stopped: true,
                ..Default::default()
            }),
            (2, 3),
        );
        assert_eq!(s.get("l2_write_backlog"), Some(2));
        assert_eq!(s.get("l2_writes_dropped"), Some(3));
        assert_eq!(s.get("l2_parked"), Some(6));
        assert_eq!(s.get("l2_rejected"), Some(8));
        assert_eq!(s.get("l2_reads_ok"), Some(4));
        assert_eq!(s.get("l2_degraded"), Some(1));
        assert_eq!(
            s.get("cs_evictions"),
            Some(5),
            "L2 block after the core block"
        );
        s.set_reassembly(&[
            ReassemblyCounters {
                expired: 2,
                evicted: 1,
                invalid: 4,
                ..Default::default()
            },
            ReassemblyCounters {
                expired: 3,
                too_large: 5,
                ..Default::default()
            },
        ]);
        assert_eq!(s.get("reassembly_timeouts"), Some(5));
        assert_eq!(s.get("reassembly_evicted"), Some(1));
        assert_eq!(s.get("reassembly_errors"), Some(9));
        assert_eq!(s.get("l2_writes_dropped"), Some(3), "after the L2 block");
        assert_eq!(s.get("l2_checksum_errors"), Some(5));
        assert_eq!(s.get("l2_enospc"), Some(2));
        assert_eq!(s.get("l2_files_lost"), Some(1));
        assert_eq!(s.get("l2_writes_stopped"), Some(1));
        assert_eq!(s.get("l2_read_errors"), Some(0));
        s.add(Io::TxLinkDown, 2);
        s.set(Io::TxErrors, 5);
        assert_eq!(s.get("tx_link_down"), Some(2));
        assert_eq!(s.get("tx_errors"), Some(5));
        assert_eq!(s.get("reassembly_errors"), Some(9));
        assert_eq!(
            s.get("l2_writes_stopped"),
            Some(1),
            "the link block follows the fault block"
        );
        assert_eq!(
            COUNTERS.len(),
            Io::TxErrors as usize + 1,
            "tx_errors ends the counters"
        );
        let stats = ShardStats::default();
        stats.publish(&s);
        let mut total = stats.read();
        total.accumulate(&s);
        assert_eq!(total.get("interests_in"), Some(14));
    }
}
