//! Per-shard counters that other threads can read while the shard runs, and the one
//! definition of every counter the router reports.
//!
//! A shard worker keeps its counters in plain local integers and copies them into its
//! [`ShardStats`] every few milliseconds with relaxed atomic stores: no lock, no contended
//! cache line on the packet path. Readers (the control socket, the metrics endpoint, the exit
//! report) see values at most one publication old.
//!
//! Every counter is defined once, in a table ([`COUNTERS`] for the shards' counters,
//! [`HOST_COUNTERS`] for the host thread's, [`FACE_LOADS`] for the per-face loads): its
//! name (the status JSON field), help text, kind and unit. `ndx status`, the control socket's
//! `status` answer and the Prometheus exposition ([`crate::metrics`]) all derive from these
//! tables, so a counter added here shows up everywhere.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use ndx_codec::ReassemblyCounters;
use ndx_core::{DropReason, FaceLoad, FaceLoads, ShardCounters};

/// Whether a counter only goes up or is a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (since start).
    Counter,
    /// A level that goes up and down (PIT entries, CS occupancy, a flag).
    Gauge,
}

/// The unit of a counter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A count of things (frames, packets, events, entries).
    Count,
    /// Bytes.
    Bytes,
}

/// One counter's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Def {
    /// Its name: the status JSON field and, with `ndx_` (and `_total` for counters), the
    /// Prometheus metric.
    pub name: &'static str,
    help: &'static str,
    /// Counter or gauge.
    pub kind: Kind,
    /// What its value counts.
    pub unit: Unit,
}

impl Def {
    /// One line on what it counts.
    pub fn help(&self) -> &'static str {
        self.help.trim()
    }
}

/// The shard counters: `Counter` (an index into [`Snapshot`]) and [`COUNTERS`] (their
/// definitions, in the same order), from one list.
macro_rules! shard_counters {
    ($($(#[doc = $doc:literal])+ $variant:ident = $name:literal, $kind:ident, $unit:ident;)+) => {
        /// A shard counter: its place in a [`Snapshot`] and in [`COUNTERS`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(usize)]
        pub enum Counter {
            $($(#[doc = $doc])+ $variant,)+
        }

        /// Every shard counter's definition, in [`Counter`] order (the status JSON's order).
        pub const COUNTERS: &[Def] = &[
            $(Def { name: $name, help: concat!($($doc),+), kind: Kind::$kind, unit: Unit::$unit },)+
        ];
    };
}

shard_counters! {
    /// Frames received on this shard's sockets.
    RxFrames = "rx_frames", Counter, Count;
    /// Bytes received on this shard's sockets.
    RxBytes = "rx_bytes", Counter, Bytes;
    /// Frames sent.
    TxFrames = "tx_frames", Counter, Count;
    /// Bytes sent.
    TxBytes = "tx_bytes", Counter, Bytes;
    /// Frames dropped because the TX ring or frame pool was full.
    TxRingFull = "tx_ring_full", Counter, Count;
    /// Frames handed to their owner shard.
    ExchangedOut = "exchanged_out", Counter, Count;
    /// Frames received from another shard.
    ExchangedIn = "exchanged_in", Counter, Count;
    /// Frames dropped because an exchange ring was full.
    ExchangeFull = "exchange_full", Counter, Count;
    /// Frames not sent because the face's next hop is not resolved yet.
    UnresolvedFace = "unresolved_face", Counter, Count;
    /// Frames dropped because they came from an unknown peer and on-demand faces are off.
    UnknownFace = "unknown_face", Counter, Count;
    /// On-demand faces created.
    FacesCreated = "faces_created", Counter, Count;
    /// Frames from new peers refused an on-demand face (`[udp]`'s bounds; one per frame).
    FacesRefused = "faces_refused", Counter, Count;
    /// Worker loop iterations.
    Loops = "loops", Counter, Count;
    /// Frames whose link headers could not be parsed (not Ethernet/IP/UDP NDN).
    RxUnparsed = "rx_unparsed", Counter, Count;
    /// Packets that could not be fragmented to fit the outgoing link.
    TxTooBig = "tx_too_big", Counter, Count;
    /// Kernel: frames dropped on our sockets for other reasons (XDP_STATISTICS).
    XskRxDropped = "xsk_rx_dropped", Counter, Count;
    /// Kernel: frames dropped because an RX ring was full.
    XskRxRingFull = "xsk_rx_ring_full", Counter, Count;
    /// Kernel: times a fill ring was found empty.
    XskFillRingEmpty = "xsk_fill_ring_empty", Counter, Count;
    /// Times the fill ring could not be topped up for lack of free frames.
    XskFillStarved = "xsk_fill_starved", Counter, Count;
    /// Transmit wakeups (`sendto`): copy mode transmits only inside them, up to a budget
    /// of frames per call.
    XskTxKicks = "xsk_tx_kicks", Counter, Count;
    /// Flushes that kicked at least once (`xsk_tx_kicks` / this: `sendto` calls per burst).
    XskTxKickRounds = "xsk_tx_kick_rounds", Counter, Count;
    /// Fill-ring wakeups (`poll`) the kernel asked for (zero-copy drivers only).
    XskFillWakeups = "xsk_fill_wakeups", Counter, Count;
    /// Packets the host thread handed in (from app faces, management, kernel UDP).
    HostIn = "host_in", Counter, Count;
    /// Packets sent to host faces (app connections, management).
    HostOut = "host_out", Counter, Count;
    /// Packets for host faces dropped because the host's queue was full.
    HostQueueFull = "host_queue_full", Counter, Count;
    /// Interests received.
    InterestsIn = "interests_in", Counter, Count;
    /// Data received.
    DataIn = "data_in", Counter, Count;
    /// Nacks received.
    NacksIn = "nacks_in", Counter, Count;
    /// Interests sent.
    InterestsOut = "interests_out", Counter, Count;
    /// Data sent.
    DataOut = "data_out", Counter, Count;
    /// Nacks sent.
    NacksOut = "nacks_out", Counter, Count;
    /// Interests answered from the CS.
    CsHits = "cs_hits", Counter, Count;
    /// Interests that joined a pending entry.
    Aggregated = "aggregated", Counter, Count;
    /// Retransmissions suppressed.
    Suppressed = "suppressed", Counter, Count;
    /// Data and Nacks whose PIT entry was found by the PIT token they echoed.
    ByToken = "by_token", Counter, Count;
    /// Nacks not sent because their face was past its Nack rate.
    NacksLimited = "nacks_limited", Counter, Count;
    /// Data that satisfied pending entries none of whose downstreams was still waiting.
    DataLate = "data_late", Counter, Count;
    /// Packets dropped as malformed.
    DropMalformed = "drop_malformed", Counter, Count;
    /// Packets dropped by NDNLPv2 reassembly.
    DropReassembly = "drop_reassembly", Counter, Count;
    /// Interests dropped for an exhausted HopLimit.
    DropHopLimit = "drop_hop_limit", Counter, Count;
    /// Interests dropped as looping (duplicate nonce).
    DropLoop = "drop_loop", Counter, Count;
    /// Interests dropped for want of a route.
    DropNoRoute = "drop_no_route", Counter, Count;
    /// Interests dropped because the PIT was full.
    DropPitFull = "drop_pit_full", Counter, Count;
    /// Interests dropped because their face held its PIT share.
    DropPitQuota = "drop_pit_quota", Counter, Count;
    /// Data dropped as unsolicited.
    DropUnsolicited = "drop_unsolicited", Counter, Count;
    /// Nacks dropped for want of a matching pending Interest.
    DropNackUnmatched = "drop_nack_unmatched", Counter, Count;
    /// Packets dropped because their face was idle or gone.
    DropIdle = "drop_idle", Counter, Count;
    /// Packets dropped for leaving their scope (/localhost, /localhop).
    DropScope = "drop_scope", Counter, Count;
    /// PIT entries pending now.
    PitEntries = "pit_entries", Gauge, Count;
    /// Data in the CS now.
    CsEntries = "cs_entries", Gauge, Count;
    /// CS lookups that found a usable Data.
    CsLookupHits = "cs_lookup_hits", Counter, Count;
    /// CS lookups that did not.
    CsLookupMisses = "cs_lookup_misses", Counter, Count;
    /// Data stored in the CS.
    CsInsertions = "cs_insertions", Counter, Count;
    /// Data evicted from the CS to make room.
    CsEvictions = "cs_evictions", Counter, Count;
    /// Data the CS kept in their receive frame instead of copying them.
    CsKept = "cs_kept", Counter, Count;
    /// Receive frames the CS holds now.
    CsFramesHeld = "cs_frames_held", Gauge, Count;
    /// Interests parked on an L2 read.
    L2Parked = "l2_parked", Counter, Count;
    /// L2 reads asked for because an Interest missed L1 and hit the L2 index.
    L2Reads = "l2_reads", Counter, Count;
    /// L2 reads asked for by prefetch.
    L2Prefetches = "l2_prefetches", Counter, Count;
    /// L2 reads that failed (the parked Interests went upstream).
    L2ReadFailures = "l2_read_failures", Counter, Count;
    /// Parked Interests answered from an L2 batch.
    L2Served = "l2_served", Counter, Count;
    /// Parked Interests sent upstream (failure, or the batch lacked their Data).
    L2Fallbacks = "l2_fallbacks", Counter, Count;
    /// Misses that hit the L2 index but found the read table full.
    L2Busy = "l2_busy", Counter, Count;
    /// Batches written to L2.
    L2Writes = "l2_writes", Counter, Count;
    /// Batches refused by the L2 write admission.
    L2Rejected = "l2_rejected", Counter, Count;
    /// L2 reads that returned a valid batch.
    L2ReadsOk = "l2_reads_ok", Counter, Count;
    /// Bytes of valid batches read from L2.
    L2ReadBytes = "l2_read_bytes", Counter, Bytes;
    /// L2 writes completed.
    L2WritesOk = "l2_writes_ok", Counter, Count;
    /// Bytes written to L2.
    L2WriteBytes = "l2_write_bytes", Counter, Bytes;
    /// Corrupt L2 records met by reads or the recovery scan.
    L2Corrupt = "l2_corrupt", Counter, Count;
    /// L2 reads that found their record overwritten.
    L2Stale = "l2_stale", Counter, Count;
    /// L2 I/O errors (reads, writes, submissions).
    L2IoErrors = "l2_io_errors", Counter, Count;
    /// L2 records overwritten by the FIFO log.
    L2Evicted = "l2_evicted", Counter, Count;
    /// L2 records indexed.
    L2Indexed = "l2_indexed", Counter, Count;
    /// 1 while the L2 store is degraded.
    L2Degraded = "l2_degraded", Gauge, Count;
    /// L2 batches waiting for a write slot now.
    L2WriteBacklog = "l2_write_backlog", Gauge, Count;
    /// L2 batches dropped because the write backlog was full.
    L2WritesDropped = "l2_writes_dropped", Counter, Count;
    /// NDNLPv2 fragment sets dropped incomplete after their timeout.
    ReassemblyTimeouts = "reassembly_timeouts", Counter, Count;
    /// NDNLPv2 fragment sets dropped to make room for a new set.
    ReassemblyEvicted = "reassembly_evicted", Counter, Count;
    /// NDNLPv2 fragments refused as malformed, inconsistent or oversized.
    ReassemblyErrors = "reassembly_errors", Counter, Count;
    /// NDNLPv2 fragments received (LpPackets with FragCount > 1, valid or not).
    FragmentsIn = "fragments_in", Counter, Count;
    /// Packets reassembled whole from NDNLPv2 fragments.
    Reassembled = "reassembled", Counter, Count;
    /// NDNLPv2 fragments sent: packets larger than their link's MTU, split on the way out.
    FragmentsOut = "fragments_out", Counter, Count;
    /// L2 reads whose record failed validation (checksum, header, lengths).
    L2ChecksumErrors = "l2_checksum_errors", Counter, Count;
    /// L2 reads that returned fewer bytes than the record.
    L2ShortReads = "l2_short_reads", Counter, Count;
    /// L2 reads the device failed.
    L2ReadErrors = "l2_read_errors", Counter, Count;
    /// L2 writes that failed with an error other than ENOSPC.
    L2WriteErrors = "l2_write_errors", Counter, Count;
    /// L2 writes refused for lack of space.
    L2Enospc = "l2_enospc", Counter, Count;
    /// L2 records lost to a file cut short.
    L2Truncated = "l2_truncated", Counter, Count;
    /// L2 backing files found deleted while open, or missing at start-up.
    L2FilesLost = "l2_files_lost", Counter, Count;
    /// 1 once L2 writes stopped (full disk, write error).
    L2WritesStopped = "l2_writes_stopped", Gauge, Count;
    /// Packets not sent because their interface is down or was deleted.
    TxLinkDown = "tx_link_down", Counter, Count;
    /// Kernel: transmit kicks (`sendto`) that failed with something other than "try again"
    /// (ENETDOWN while the interface is down, ENXIO once it is deleted).
    TxErrors = "tx_errors", Counter, Count;
}

impl Counter {
    /// Its definition.
    pub fn def(self) -> &'static Def {
        &COUNTERS[self as usize]
    }

    /// Its name (the status JSON field).
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// The name the worker (the I/O layer) uses for [`Counter`] (kept so its many `add` calls
/// read as before).
pub(crate) use self::Counter as Io;

/// The counters `ndx status` shows first, in this order (the others follow when non-zero).
pub const HEADLINE: &[Counter] = &[
    Counter::RxFrames,
    Counter::TxFrames,
    Counter::InterestsIn,
    Counter::DataIn,
    Counter::NacksIn,
    Counter::InterestsOut,
    Counter::DataOut,
    Counter::NacksOut,
    Counter::CsHits,
    Counter::Aggregated,
    Counter::PitEntries,
    Counter::CsEntries,
    Counter::ExchangedIn,
    Counter::UnresolvedFace,
];

/// The host thread's counters: a struct with one `u64` field per counter and
/// [`HOST_COUNTERS`] (their definitions, in field order), from one list.
macro_rules! host_counters {
    ($($(#[doc = $doc:literal])+ $field:ident, $kind:ident;)+) => {
        /// The host thread's counters (in `ndx status` under `host`), with the app faces and
        /// kernel sockets open now.
        #[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
        pub struct HostCounters {
            $($(#[doc = $doc])+ pub $field: u64,)+
        }

        /// Every host counter's definition, in [`HostCounters`] field order.
        pub const HOST_COUNTERS: &[Def] = &[
            $(Def { name: stringify!($field), help: concat!($($doc),+), kind: Kind::$kind, unit: Unit::Count },)+
        ];

        impl HostCounters {
            /// (definition, value) pairs, in [`HOST_COUNTERS`] order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static Def, u64)> + '_ {
                HOST_COUNTERS.iter().zip([$(self.$field),+])
            }
        }
    };
}

host_counters! {
    /// App faces connected now.
    app_faces, Gauge;
    /// App connections accepted.
    app_accepted, Counter;
    /// App connections refused (at `max_connections`).
    app_refused, Counter;
    /// App connections closed for a broken frame.
    app_bad_frames, Counter;
    /// Packets received from apps.
    app_rx, Counter;
    /// Packets written to apps.
    app_tx, Counter;
    /// Packets for apps dropped because their queue was full.
    app_queue_dropped, Counter;
    /// Kernel UDP sockets open (for IP-fragmented NDN).
    udp_kernel_sockets, Gauge;
    /// Datagrams received on the kernel UDP sockets (IP-fragmented NDN).
    udp_kernel_rx, Counter;
    /// Datagrams from the kernel UDP sockets that are not NDN.
    udp_kernel_bad, Counter;
    /// Datagrams too large for their link sent through the kernel (IP fragments).
    udp_kernel_tx, Counter;
    /// Such datagrams the kernel refused (or no kernel socket of the family).
    udp_kernel_tx_failed, Counter;
    /// Packets not handed to a shard because its queue was full.
    shard_queue_full, Counter;
    /// Management Interests answered.
    mgmt_requests, Counter;
    /// Client routes readvertised to (or withdrawn from) a routing daemon.
    readvertised, Counter;
    /// Management commands refused (bad signature, parameters or authorization).
    mgmt_commands_refused, Counter;
}

/// A per-face load: its definition and how to read it from a [`FaceLoad`].
#[derive(Debug, Clone, Copy)]
pub struct FaceLoadDef {
    /// The definition (`name` is the field in the status JSON's `faces`).
    pub def: Def,
    /// Its column title in `ndx status`.
    pub column: &'static str,
    /// Its value.
    pub get: fn(&FaceLoad) -> u64,
}

/// Every per-face load ([`ndx_core::FaceLoad`], summed over shards), in `ndx status` column
/// order.
pub const FACE_LOADS: &[FaceLoadDef] = &[
    FaceLoadDef {
        def: Def {
            name: "interests_in",
            help: "Interests received from the face.",
            kind: Kind::Counter,
            unit: Unit::Count,
        },
        column: "interests",
        get: |l| l.interests,
    },
    FaceLoadDef {
        def: Def {
            name: "data_in",
            help: "Data received from the face.",
            kind: Kind::Counter,
            unit: Unit::Count,
        },
        column: "data",
        get: |l| l.data,
    },
    FaceLoadDef {
        def: Def {
            name: "pit_entries",
            help: "PIT entries the face's Interests created that are pending now.",
            kind: Kind::Gauge,
            unit: Unit::Count,
        },
        column: "pit",
        get: |l| u64::from(l.pit_entries),
    },
    FaceLoadDef {
        def: Def {
            name: "drops",
            help: "Packets from the face dropped, whatever the reason.",
            kind: Kind::Counter,
            unit: Unit::Count,
        },
        column: "drops",
        get: |l| l.drops,
    },
    FaceLoadDef {
        def: Def {
            name: "drop_pit_quota",
            help: "Interests from the face refused because it held its PIT share.",
            kind: Kind::Counter,
            unit: Unit::Count,
        },
        column: "pit quota",
        get: |l| l.pit_quota,
    },
    FaceLoadDef {
        def: Def {
            name: "nacks_limited",
            help: "Nacks to the face not sent because it was past its Nack rate.",
            kind: Kind::Counter,
            unit: Unit::Count,
        },
        column: "nacks lim.",
        get: |l| l.nacks_limited,
    },
];

/// Buckets per histogram (the last one is `+Inf`).
pub const BUCKETS: usize = 16;

/// A histogram's definition: bucket `i` (below the last) holds values up to
/// `2^(shift + i)` in the value's raw unit, `scale` converts the raw unit to the exposed one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistogramDef {
    /// The Prometheus metric, without `ndx_` and the unit.
    pub name: &'static str,
    /// One line on what it measures.
    pub help: &'static str,
    /// The exposed unit (`seconds`, `frames`).
    pub unit: &'static str,
    /// log2 of the first bucket's upper bound, in the raw unit.
    pub shift: u32,
    /// Raw unit to exposed unit (nanoseconds to seconds: 1e-9).
    pub scale: f64,
}

impl HistogramDef {
    /// The upper bound of every bucket but the last (`+Inf`), in the exposed unit.
    pub fn bounds(&self) -> impl Iterator<Item = f64> + '_ {
        (0..BUCKETS - 1).map(|i| (1u64 << (self.shift + i as u32)) as f64 * self.scale)
    }
}

/// RX burst sizes: frames per non-empty `rx_burst` call.
pub const RX_BURST: HistogramDef = HistogramDef {
    name: "rx_burst",
    help: "Frames per non-empty receive burst.",
    unit: "frames",
    shift: 0,
    scale: 1.0,
};

/// Sizes of the bursts that frames handed over by other shards go through the pipeline in:
/// frames per non-empty drain of the hand-off rings (at most a burst, 32). Small bursts
/// overlap fewer of their misses in the pipeline.
pub const EXCHANGED_BURST: HistogramDef = HistogramDef {
    name: "exchanged_burst",
    help: "Frames per burst handed over by other shards.",
    unit: "frames",
    shift: 0,
    scale: 1.0,
};

/// L2 read latency: io_uring submission to completion, as the worker sees it (its loop
/// clock, nanoseconds).
pub const L2_READ_LATENCY: HistogramDef = HistogramDef {
    name: "l2_read_latency",
    help: "L2 reads from submission to completion, as the shard worker saw them.",
    unit: "seconds",
    shift: 12,
    scale: 1e-9,
};

/// A histogram's local state: plain integers, owned by one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Histogram {
    /// Observations per bucket (not cumulative; the last is `+Inf`).
    pub buckets: [u64; BUCKETS],
    /// Sum of the observed values, in the raw unit.
    pub sum: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            buckets: [0; BUCKETS],
            sum: 0,
        }
    }
}

impl Histogram {
    /// Records one value (raw unit) for a histogram whose first bucket is `2^shift`: a
    /// leading-zero count, an add and two stores.
    #[inline]
    pub fn observe(&mut self, shift: u32, v: u64) {
        let bits = 64 - v.saturating_sub(1).leading_zeros();
        let i = (bits.saturating_sub(shift) as usize).min(BUCKETS - 1);
        self.buckets[i] += 1;
        self.sum = self.sum.wrapping_add(v);
    }

    /// Observations in all.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// Adds another histogram (totals over shards).
    pub fn accumulate(&mut self, other: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
        self.sum = self.sum.wrapping_add(other.sum);
    }
}

/// A shard's histograms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Histograms {
    /// [`RX_BURST`].
    pub rx_burst: Histogram,
    /// [`EXCHANGED_BURST`].
    pub exchanged_burst: Histogram,
    /// [`L2_READ_LATENCY`].
    pub l2_read_latency: Histogram,
}

impl Histograms {
    /// Adds another shard's.
    pub fn accumulate(&mut self, other: &Histograms) {
        self.rx_burst.accumulate(&other.rx_burst);
        self.exchanged_burst.accumulate(&other.exchanged_burst);
        self.l2_read_latency.accumulate(&other.l2_read_latency);
    }

    /// (definition, histogram) pairs.
    pub fn iter(&self) -> [(&'static HistogramDef, &Histogram); 3] {
        [
            (&RX_BURST, &self.rx_burst),
            (&EXCHANGED_BURST, &self.exchanged_burst),
            (&L2_READ_LATENCY, &self.l2_read_latency),
        ]
    }
}

/// Atomics for one [`Histogram`].
#[derive(Debug, Default)]
struct SharedHistogram {
    buckets: [AtomicU64; BUCKETS],
    sum: AtomicU64,
}

impl SharedHistogram {
    fn store(&self, h: &Histogram) {
        for (a, &v) in self.buckets.iter().zip(&h.buckets) {
            a.store(v, Ordering::Relaxed);
        }
        self.sum.store(h.sum, Ordering::Relaxed);
    }

    fn load(&self) -> Histogram {
        Histogram {
            buckets: std::array::from_fn(|i| self.buckets[i].load(Ordering::Relaxed)),
            sum: self.sum.load(Ordering::Relaxed),
        }
    }
}

/// One shard's published counters.
#[derive(Debug)]
pub(crate) struct ShardStats {
    values: Vec<AtomicU64>,
    rx_burst: SharedHistogram,
    exchanged_burst: SharedHistogram,
    l2_read_latency: SharedHistogram,
    /// Per-face loads and the PIT share, published less often (a list, behind a lock the
    /// packet path never takes).
    faces: Mutex<FacesSnapshot>,
}

/// A shard's per-face loads ([`ndx_core::FaceLoad`]) and the PIT share each face is held to.
#[derive(Debug, Clone, Default)]
pub(crate) struct FacesSnapshot {
    /// The PIT share each face is held to now.
    pub pit_share: u32,
    /// Every face the shard has seen, with its load.
    pub loads: FaceLoads,
}

impl Default for ShardStats {
    fn default() -> Self {
        Self {
            values: COUNTERS.iter().map(|_| AtomicU64::new(0)).collect(),
            rx_burst: SharedHistogram::default(),
            exchanged_burst: SharedHistogram::default(),
            l2_read_latency: SharedHistogram::default(),
            faces: Mutex::new(FacesSnapshot::default()),
        }
    }
}

/// A shard's counters as plain numbers (the worker's local copy, or a reader's snapshot),
/// indexed by [`Counter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot(pub Vec<u64>);

impl Default for Snapshot {
    fn default() -> Self {
        Self(vec![0; COUNTERS.len()])
    }
}

impl Snapshot {
    /// Adds to a counter.
    #[inline]
    pub fn add(&mut self, c: Counter, n: u64) {
        self.0[c as usize] += n;
    }

    /// Sets a counter (values read from elsewhere, such as the kernel's or the core's).
    #[inline]
    pub fn set(&mut self, c: Counter, v: u64) {
        self.0[c as usize] = v;
    }

    /// A counter's value.
    pub fn value(&self, c: Counter) -> u64 {
        self.0[c as usize]
    }

    /// A counter by name.
    pub fn get(&self, name: &str) -> Option<u64> {
        COUNTERS
            .iter()
            .position(|d| d.name == name)
            .map(|i| self.0[i])
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
        use Counter as K;
        for (k, v) in [
            (K::InterestsIn, c.interests_in),
            (K::DataIn, c.data_in),
            (K::NacksIn, c.nacks_in),
            (K::InterestsOut, c.interests_out),
            (K::DataOut, c.data_out),
            (K::NacksOut, c.nacks_out),
            (K::CsHits, c.cs_hits),
            (K::Aggregated, c.aggregated),
            (K::Suppressed, c.suppressed),
            (K::ByToken, c.by_token),
            (K::NacksLimited, c.nacks_limited),
            (K::DataLate, c.data_late),
            (K::DropMalformed, c.dropped(DropReason::Malformed)),
            (K::DropReassembly, c.dropped(DropReason::Reassembly)),
            (K::DropHopLimit, c.dropped(DropReason::HopLimit)),
            (K::DropLoop, c.dropped(DropReason::Loop)),
            (K::DropNoRoute, c.dropped(DropReason::NoRoute)),
            (K::DropPitFull, c.dropped(DropReason::PitFull)),
            (K::DropPitQuota, c.dropped(DropReason::PitQuota)),
            (K::DropUnsolicited, c.dropped(DropReason::Unsolicited)),
            (K::DropNackUnmatched, c.dropped(DropReason::NackUnmatched)),
            (K::DropIdle, c.dropped(DropReason::Idle)),
            (K::DropScope, c.dropped(DropReason::Scope)),
            (K::PitEntries, pit as u64),
            (K::CsEntries, cs_len as u64),
            (K::CsLookupHits, cs.hits),
            (K::CsLookupMisses, cs.misses),
            (K::CsInsertions, cs.insertions),
            (K::CsEvictions, cs.evictions),
            (K::CsKept, cs.kept),
            (K::CsFramesHeld, frames_held as u64),
        ] {
            self.set(k, v);
        }
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
        use Counter as K;
        let c = core.unwrap_or_default();
        let s = io.unwrap_or_default();
        for (k, v) in [
            (K::L2Parked, c.parked),
            (K::L2Reads, c.reads),
            (K::L2Prefetches, c.prefetches),
            (K::L2ReadFailures, c.read_failures),
            (K::L2Served, c.served),
            (K::L2Fallbacks, c.fallbacks),
            (K::L2Busy, c.busy),
            (K::L2Writes, c.writes),
            (K::L2Rejected, c.rejected),
            (K::L2ReadsOk, s.reads_ok),
            (K::L2ReadBytes, s.read_bytes),
            (K::L2WritesOk, s.writes_ok),
            (K::L2WriteBytes, s.write_bytes),
            (K::L2Corrupt, s.corrupt),
            (K::L2Stale, s.stale),
            (K::L2IoErrors, s.io_errors),
            (K::L2Evicted, s.evicted),
            (K::L2Indexed, s.indexed),
            (K::L2Degraded, u64::from(s.degraded)),
            (K::L2WriteBacklog, backlog.0 as u64),
            (K::L2WritesDropped, backlog.1),
            (K::L2ChecksumErrors, s.checksum_errors),
            (K::L2ShortReads, s.short_reads),
            (K::L2ReadErrors, s.read_errors),
            (K::L2WriteErrors, s.write_errors),
            (K::L2Enospc, s.enospc),
            (K::L2Truncated, s.truncated),
            (K::L2FilesLost, s.files_lost),
            (K::L2WritesStopped, u64::from(s.writes_stopped)),
        ] {
            self.set(k, v);
        }
    }

    /// Copies the NDNLPv2 reassemblers' counters in, summed over `reassemblers` (the shard's
    /// own and the worker's): fragment sets dropped incomplete after their timeout
    /// (`reassembly_timeouts`) or to make room for a new set (`reassembly_evicted`), and
    /// fragments refused as malformed, inconsistent or oversized (`reassembly_errors`; the
    /// shard's also count in `drop_reassembly`); fragments received (`fragments_in`) and
    /// packets completed from them (`reassembled`).
    pub fn set_reassembly(&mut self, reassemblers: &[ReassemblyCounters]) {
        let sum = |f: fn(&ReassemblyCounters) -> u64| reassemblers.iter().map(f).sum::<u64>();
        self.set(Counter::ReassemblyTimeouts, sum(|c| c.expired));
        self.set(Counter::ReassemblyEvicted, sum(|c| c.evicted));
        self.set(Counter::ReassemblyErrors, sum(|c| c.invalid + c.too_large));
        self.set(Counter::FragmentsIn, sum(|c| c.fragments_received));
        self.set(Counter::Reassembled, sum(|c| c.packets_completed));
    }

    /// Adds another snapshot (totals over shards).
    pub fn accumulate(&mut self, other: &Snapshot) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a += b;
        }
    }

    /// (name, value) pairs, in [`COUNTERS`] order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        COUNTERS.iter().map(|d| d.name).zip(self.0.iter().copied())
    }
}

impl ShardStats {
    /// Publishes a worker's local counters.
    pub(crate) fn publish(&self, s: &Snapshot) {
        for (a, &v) in self.values.iter().zip(&s.0) {
            a.store(v, Ordering::Relaxed);
        }
    }

    /// Publishes a worker's local histograms.
    pub(crate) fn publish_histograms(&self, h: &Histograms) {
        self.rx_burst.store(&h.rx_burst);
        self.exchanged_burst.store(&h.exchanged_burst);
        self.l2_read_latency.store(&h.l2_read_latency);
    }

    /// The last published histograms.
    pub(crate) fn read_histograms(&self) -> Histograms {
        Histograms {
            rx_burst: self.rx_burst.load(),
            exchanged_burst: self.exchanged_burst.load(),
            l2_read_latency: self.l2_read_latency.load(),
        }
    }

    /// Publishes a worker's per-face loads.
    pub(crate) fn publish_faces(&self, f: FacesSnapshot) {
        *self.faces.lock().unwrap_or_else(|p| p.into_inner()) = f;
    }

    /// The last published per-face loads.
    pub(crate) fn read_faces(&self) -> FacesSnapshot {
        self.faces.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Reads the last published values.
    pub(crate) fn read(&self) -> Snapshot {
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
        s.add(Counter::RxFrames, 4);
        s.add(Counter::Loops, 1);
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
                fragments_received: 7,
                packets_completed: 2,
                ..Default::default()
            },
        ]);
        assert_eq!(s.get("fragments_in"), Some(7));
        assert_eq!(s.get("reassembled"), Some(2));
        assert_eq!(s.get("reassembly_timeouts"), Some(5));
        assert_eq!(s.get("reassembly_evicted"), Some(1));
        assert_eq!(s.get("reassembly_errors"), Some(9));
        assert_eq!(s.get("l2_writes_dropped"), Some(3), "after the L2 block");
        assert_eq!(s.get("l2_checksum_errors"), Some(5));
        assert_eq!(s.get("l2_enospc"), Some(2));
        assert_eq!(s.get("l2_files_lost"), Some(1));
        assert_eq!(s.get("l2_writes_stopped"), Some(1));
        assert_eq!(s.get("l2_read_errors"), Some(0));
        s.add(Counter::TxLinkDown, 2);
        s.set(Counter::TxErrors, 5);
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
            Counter::TxErrors as usize + 1,
            "tx_errors ends the counters"
        );
        let stats = ShardStats::default();
        stats.publish(&s);
        let mut total = stats.read();
        total.accumulate(&s);
        assert_eq!(total.get("interests_in"), Some(14));
    }
}
