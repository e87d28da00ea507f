//! A shard worker: one pinned thread running the busy-poll loop
//! RX burst → pipeline → TX burst (kick) → completions → exchange rings → timers.
//!
//! Nothing on the loop takes a lock, allocates in steady state or blocks: the face table is
//! an RCU snapshot, counters are published with relaxed stores, frames that belong to another
//! shard move over lock-free SPSC exchange rings (only the descriptor moves), and new faces are
//! announced to the control thread with a non-blocking `try_send` on a bounded channel.
//!
//! The worker is generic over its sockets ([`io::Socket`]): the AF_XDP endpoint in the
//! router, an in-memory fake in the unit tests (`fake`, `tests`).

#[cfg(test)]
mod fake;
mod io;
#[cfg(test)]
mod tests;

pub(crate) use io::{KeptHandle, PortMem, RxHandle, Socket};

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};

use ndx_afxdp::wire::{self, Encap, UdpHeaders};
use ndx_afxdp::{Endpoint, ExchangeReceiver, ExchangeSender, KeptFrame, TxError};
use ndx_codec::{Fragmenter, LpHeaders, Packet, Reassembled, Reassembler, ReassemblerConfig};
use ndx_core::{Actions, Dispatch, FaceId, FaceInfo, Lent, Shard, token_shard};
use ndx_xdp::{How, Kind, XdpMeta};

use crate::faces::{Face, FaceReader, FaceTable, L2Path, Link, Origin};
use crate::stats::{Histograms, Io, ShardStats, Snapshot};

/// Empty loop turns before an `idle = "yield"` worker starts yielding.
const IDLE_TURNS: u32 = 64;

/// A handed-over frame's port index when this shard has no view of its port (gone).
const NO_PORT: usize = usize::MAX;

/// Frames per `Shard::process_burst` call.
pub(crate) const BURST: usize = 32;

/// The NDN Ethernet multicast group.
pub(crate) const NDN_MULTICAST: [u8; 6] = [0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa];

/// An interface as the workers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IfaceInfo {
    /// Name.
    pub name: String,
    /// Index.
    pub ifindex: u32,
    /// Our MAC.
    pub mac: [u8; 6],
    /// MTU (bytes of IP packet or Ethernet payload).
    pub mtu: usize,
}

/// A control-plane event from a worker.
#[derive(Debug)]
pub(crate) enum Event {
    /// A face created on demand (already in use by the shard that created it).
    NewFace(Face),
}

/// Worker settings.
#[derive(Debug, Clone)]
pub(crate) struct WorkerConfig {
    /// Most frames per RX burst.
    pub burst: usize,
    /// What to do between empty loop turns.
    pub idle: crate::config::Idle,
    /// Source UDP port of what we send.
    pub udp_port: u16,
    /// Create faces for new peers.
    pub on_demand: bool,
    /// Packets too large for a UDP face's link go to the host thread, whose kernel socket
    /// sends them as IP fragments (`[udp] fragmentation = "ip"`).
    pub ip_fragments: bool,
    /// Interfaces (by ifindex).
    pub ifaces: Arc<Vec<IfaceInfo>>,
    /// Their link states, which the control thread keeps up to date.
    pub links: Arc<crate::iface::LinkStates>,
    /// Settings a configuration reload changes while the worker runs.
    pub live: Arc<crate::reload::Live>,
}

/// One of this shard's sockets.
#[derive(Debug)]
pub(crate) struct Ep<S: Socket = Endpoint> {
    /// The socket.
    pub ep: S,
    /// Its port's memory (read while the socket is borrowed for transmission).
    pub mem: S::Mem,
    /// Its interface.
    pub ifindex: u32,
    /// Most of the port's receive frames this shard's CS may keep (0: Data are copied).
    pub keep_max: usize,
}

impl<S: Socket> Ep<S> {
    /// A socket whose shard's CS may keep up to half of its share of the port's receive
    /// frames when `keep` (the other half keeps the fill ring fed).
    pub(crate) fn new(ep: S, ifindex: u32, keep: bool) -> Self {
        let keep_max = if keep {
            (ep.rx_frames() / ep.sockets() / 2) as usize
        } else {
            0
        };
        Self {
            mem: ep.mem(),
            ep,
            ifindex,
            keep_max,
        }
    }

    /// Whether the CS may keep `n` more of this port's frames.
    fn may_keep(&self, n: usize) -> bool {
        self.ep.kept().max(0) as usize + n <= self.keep_max
    }
}

/// A reassembled packet handed to the shard that owns it (fragments are steered by source,
/// so the shard that reassembles is often not the owner; see DESIGN "The data path").
#[derive(Debug)]
pub(crate) struct Handoff {
    /// The shard that sent it (its buffer goes back there).
    pub from: u8,
    /// The face it arrived on.
    pub face: FaceId,
    /// An unfragmented LpPacket (fragment 0's header fields around the whole packet).
    pub bytes: Vec<u8>,
}

/// The channels that carry reassembled packets between shards, and their buffer pool:
/// buffers travel back to the shard that filled them, so steady state allocates nothing.
#[derive(Debug)]
pub(crate) struct Redispatch {
    /// Our shard's dispatch function (the same one the XDP program mirrors).
    pub dispatch: Dispatch,
    /// To each shard (`None` at our own index).
    pub to: Vec<Option<SyncSender<Handoff>>>,
    /// Packets for us.
    pub inbox: Receiver<Handoff>,
    /// Buffer returns, to each shard.
    pub back: Vec<Option<SyncSender<Vec<u8>>>>,
    /// Buffers returned to us.
    pub returned: Receiver<Vec<u8>>,
}

/// Everything a worker thread owns: its sockets of type `S` (the AF_XDP endpoint but in
/// unit tests).
#[derive(Debug)]
pub(crate) struct Worker<S: Socket = Endpoint> {
    /// Shard number.
    pub me: u8,
    /// This shard's sockets (at least one per interface).
    pub eps: Vec<Ep<S>>,
    /// Every port's UMEM and interface, to read frames handed over by other shards.
    pub ports: Vec<(S::Mem, u32)>,
    /// Rings to each other shard (`None` at our own index).
    pub to: Vec<Option<ExchangeSender<S::Rx>>>,
    /// Rings from the other shards.
    pub from: Vec<ExchangeReceiver<S::Rx>>,
    /// Where counters are published.
    pub stats: Arc<ShardStats>,
    /// The packet-processing state.
    pub core: Core<S::Kept>,
    /// Its heartbeat for the systemd watchdog, moved with every counter publication.
    pub heartbeat: crate::watchdog::Beat,
}

/// A worker's packet-processing state (separate from its sockets so both can be borrowed at
/// once); its CS keeps frames of type `K` (its sockets' [`Socket::Kept`]).
#[derive(Debug)]
pub(crate) struct Core<K: ndx_core::Frame = KeptFrame> {
    /// Shard number.
    pub me: u8,
    /// The forwarding core.
    pub shard: Shard<K>,
    /// Faces.
    pub faces: FaceReader,
    /// Control-plane events.
    pub events: SyncSender<Event>,
    /// Settings.
    pub cfg: WorkerConfig,
    /// Reassembly and hand-off of fragmented packets (several shards only).
    pub redispatch: Option<Redispatch>,
    /// Worker-level reassembler (used with `redispatch`).
    pub reassembler: Reassembler,
    /// The content store's second level, when configured.
    pub l2: Option<crate::l2::ShardL2>,
    /// The queues to and from the host thread (app faces, management, kernel UDP).
    pub host: Option<crate::host::ShardHostLink>,
    /// Faces declared to the shard from the published table (removed when they leave it).
    known: std::collections::HashSet<FaceId>,
    actions: Actions,
    /// The frames lent to the pipeline in the current RX burst (see `Worker::on_burst`):
    /// each one's index in the burst and where its NDN bytes start.
    lent: Lent<(usize, usize)>,
    copy: Vec<u8>,
    frag: Vec<u8>,
    hdr: Vec<u8>,
    pool: Vec<Vec<u8>>,
    local: LocalFaces,
    host_first: Option<Handoff>,
    cache: FaceCache,
    snap: Snapshot,
    /// RX burst sizes and L2 read latencies, published with `snap`.
    hist: Histograms,
    /// Interfaces not up (read from `cfg.links` every publication): nothing is sent there.
    down: Vec<u32>,
    seq: u64,
    /// Publications since start (per-face loads go out every tenth).
    face_publish: u32,
    /// Frames from new peers refused an on-demand face since the last log line, and when the next may
    /// be written.
    refusals: u64,
    refusal_logged: u64,
    /// The loop turn's time (ns since the worker started).
    now: u64,
    /// The generation of `cfg.live` last applied.
    live_seen: u64,
}

/// The last face found for an incoming link and the last face sent to, so a steady flow
/// skips the face table's hash lookups. Valid for one face-table generation (the worker's
/// table changes only with the generation; local faces are only added in between).
#[derive(Debug, Default)]
struct FaceCache {
    generation: u64,
    rx: Option<(Link, FaceId)>,
    tx: Option<(FaceId, Link, Option<L2Path>)>,
}

impl FaceCache {
    fn sync(&mut self, table: &FaceTable) {
        if self.generation != table.generation() {
            *self = FaceCache {
                generation: table.generation(),
                ..FaceCache::default()
            };
        }
    }
}

/// Faces this shard created on demand that the published table does not have yet.
#[derive(Debug, Default)]
struct LocalFaces {
    by_link: HashMap<Link, FaceId>,
    faces: HashMap<FaceId, Face>,
}

/// A burst of single-buffer frames being gathered for the pipeline (see [`Core::gather`]).
struct Gather<'a> {
    batch: [(FaceId, &'a [u8]); BURST],
    n: usize,
    /// Whether the CS may keep the frames it admits Data from.
    keeping: bool,
}

impl Gather<'_> {
    fn new(keeping: bool) -> Self {
        Self {
            batch: [(FaceId(0), &[]); BURST],
            n: 0,
            keeping,
        }
    }
}

impl<K: ndx_core::Frame> Core<K> {
    /// Adds frame `f` (number `at` of the frames being lent) to the burst `g`, running it
    /// when full; a multi-buffer frame runs alone, in its place, from a copy. `verdict`: read
    /// the XDP program's fragment verdict from the frame's metadata (else decode to find out).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn gather<'a, M: PortMem>(
        &mut self,
        g: &mut Gather<'a>,
        now: u64,
        at: usize,
        mem: &'a M,
        f: &'a M::Rx,
        ifindex: u32,
        verdict: bool,
        table: &FaceTable,
    ) {
        if f.segments() > 1 {
            self.run_gathered(g, now);
            let mut copy = std::mem::take(&mut self.copy);
            if let Some(bytes) = whole(mem, f, &mut copy) {
                self.ingest(now, ifindex, bytes, f.len(), table);
            }
            self.copy = copy;
            return;
        }
        let Some(bytes) = mem.first(f) else {
            return;
        };
        let fragment = if verdict {
            mem.meta(f)
                .and_then(XdpMeta::parse)
                .map(|m| m.kind == Kind::Fragment)
        } else {
            None
        };
        if let Some((face, range)) = self.classify(now, ifindex, bytes, f.len(), fragment, table)
            && let Some(ndn) = bytes.get(range.clone())
        {
            g.batch[g.n] = (face, ndn);
            self.lent.push((at, range.start));
            g.n += 1;
            if g.n == BURST {
                self.run_gathered(g, now);
            }
        }
    }

    /// Runs what `g` gathered through the pipeline, if anything.
    #[inline]
    fn run_gathered(&mut self, g: &mut Gather<'_>, now: u64) {
        if g.n > 0 {
            self.burst(now, &g.batch[..g.n], g.keeping);
            g.n = 0;
        }
    }

    /// Packet-processing state for shard `me`.
    pub(crate) fn new(
        me: u8,
        shard: Shard<K>,
        faces: FaceReader,
        events: SyncSender<Event>,
        cfg: WorkerConfig,
        redispatch: Option<Redispatch>,
    ) -> Self {
        let live_seen = cfg.live.generation();
        Self {
            live_seen,
            me,
            shard,
            faces,
            events,
            cfg,
            redispatch,
            reassembler: Reassembler::new(ReassemblerConfig::default()),
            l2: None,
            host: None,
            known: std::collections::HashSet::new(),
            actions: Actions::new(),
            lent: Lent::with_capacity(256),
            copy: Vec::with_capacity(16 * 1024),
            frag: Vec::with_capacity(16 * 1024),
            hdr: vec![0u8; 128],
            pool: Vec::new(),
            local: LocalFaces::default(),
            host_first: None,
            cache: FaceCache::default(),
            snap: Snapshot::default(),
            hist: Histograms::default(),
            down: Vec::new(),
            // The shard in the top byte (shards never share a Sequence), a random start
            // below it (as NFD: routers and restarts never line up either).
            seq: (u64::from(me) << 56) | (crate::config::random_key().0 >> 8),
            face_publish: 0,
            refusals: 0,
            refusal_logged: 0,
            now: 0,
        }
    }

    /// Takes the settings a configuration reload changed (the generation moved).
    fn take_live(&mut self) {
        let g = self.cfg.live.generation();
        if g == self.live_seen {
            return;
        }
        self.live_seen = g;
        let s = self.cfg.live.get();
        self.shard
            .retune(s.fairness, s.max_lifetime_ms, s.unsolicited);
        self.cfg.on_demand = s.on_demand;
        self.cfg.idle = s.idle;
    }

    /// Takes the face table's newest snapshot when it changed: declares its faces to the
    /// shard, forgets those that left it, and drops the local copies it now has.
    fn refresh(&mut self, table: &mut Arc<FaceTable>) {
        let fresh = self.faces.table.load();
        if fresh.generation() == table.generation() {
            return;
        }
        *table = arc_swap::Guard::into_inner(fresh);
        let local = &mut self.local;
        local.faces.retain(|id, _| table.get(*id).is_none());
        local.by_link.retain(|_, id| local.faces.contains_key(id));
        let gone: Vec<FaceId> = self
            .known
            .iter()
            .copied()
            .filter(|id| table.get(*id).is_none() && !self.local.faces.contains_key(id))
            .collect();
        for id in gone {
            self.known.remove(&id);
            self.shard.remove_face(id);
        }
        for f in table.iter() {
            self.shard.add_face(f.id, f.info);
            self.known.insert(f.id);
        }
    }

    /// Processes the packets the host thread handed in (at most a few bursts' worth per
    /// loop turn, so the sockets keep their turn) and sends what they produce.
    fn drain_host<S: Socket>(&mut self, now: u64, eps: &mut [Ep<S>], table: &FaceTable) {
        let mut n = 0;
        while n < 4 * BURST {
            let h = match self.host_first.take() {
                Some(h) => h,
                None => match self.host.as_ref().and_then(|l| l.inbox.try_recv().ok()) {
                    Some(h) => h,
                    None => break,
                },
            };
            n += 1;
            self.snap.add(Io::HostIn, 1);
            self.shard.process(now, h.face, &h.bytes, &mut self.actions);
            if let Some(l) = &self.host {
                let _ = l.back.try_send(h.bytes);
            }
            if n % BURST == 0 {
                self.transmit(eps, table, &|_| &[]);
            }
        }
        self.transmit(eps, table, &|_| &[]);
    }

    fn publish_sockets<S: Socket>(&mut self, eps: &[Ep<S>]) {
        let (mut dropped, mut full, mut empty, mut starved, mut errors) = (0, 0, 0, 0, 0);
        let (mut kicks, mut rounds, mut wakeups) = (0, 0, 0);
        for e in eps {
            let c = e.ep.counters();
            errors += c.kick_errors;
            kicks += c.kicks;
            rounds += c.kick_rounds;
            wakeups += c.fill_wakeups;
            if let Ok(k) = e.ep.kernel_stats() {
                dropped += k.rx_dropped;
                full += k.rx_ring_full;
                empty += k.rx_fill_ring_empty_descs;
            }
            starved += e.ep.counters().fill_starved;
        }
        self.snap.set(Io::XskRxDropped, dropped);
        self.snap.set(Io::XskRxRingFull, full);
        self.snap.set(Io::XskFillRingEmpty, empty);
        self.snap.set(Io::XskFillStarved, starved);
        self.snap.set(Io::TxErrors, errors);
        self.snap.set(Io::XskTxKicks, kicks);
        self.snap.set(Io::XskTxKickRounds, rounds);
        self.snap.set(Io::XskFillWakeups, wakeups);
    }

    fn publish(&mut self, stats: &ShardStats) {
        if let Some(l2) = self.l2.as_mut() {
            l2.maintain(self.now, &mut self.shard);
        }
        let cs = self.shard.cs();
        self.snap.set_core(
            &self.shard.counters(),
            self.shard.pit().len(),
            cs.len(),
            cs.counters(),
            cs.frames_held(),
        );
        self.snap.set_l2(
            self.shard.l2_counters(),
            self.l2.as_ref().map(|l| l.counters()),
            self.l2.as_ref().map_or((0, 0), |l| l.write_backlog()),
        );
        self.snap.set_reassembly(&[
            self.shard.reassembly_counters(),
            self.reassembler.counters(),
        ]);
        if let Some(l2) = self.l2.as_ref() {
            self.hist.l2_read_latency = *l2.read_latency();
        }
        stats.publish(&self.snap);
        stats.publish_histograms(&self.hist);
        // Per-face loads every tenth publication (a list to build and copy).
        self.face_publish = self.face_publish.wrapping_add(1);
        if self.face_publish % 10 == 1 {
            stats.publish_faces(crate::stats::FacesSnapshot {
                pit_share: self.shard.pit_share(),
                loads: self.shard.face_loads(),
            });
        }
    }

    /// Delivers finished L2 reads and writes; true if any finished.
    fn poll_l2(&mut self, now: u64) -> bool {
        self.l2
            .as_mut()
            .is_some_and(|l2| l2.poll(now, &mut self.shard, &mut self.actions) > 0)
    }
}

/// The frame's bytes as one slice: the first segment, or a copy of a multi-buffer chain;
/// `None` when `mem` is not the frame's port.
#[inline]
fn whole<'a, M: PortMem>(mem: &'a M, f: &'a M::Rx, copy: &'a mut Vec<u8>) -> Option<&'a [u8]> {
    if f.segments() == 1 {
        mem.first(f)
    } else {
        mem.copy_to(f, copy).then_some(copy.as_slice())
    }
}

/// The state the worker's loop carries from one turn to the next.
#[derive(Debug)]
pub(crate) struct Turns<R> {
    /// RX burst buffer.
    rx: Vec<R>,
    /// This shard's frames of the burst.
    mine: Vec<R>,
    /// Frames handed over by other shards, each with the index of its ring in `from` and of
    /// its port in `ports` (`NO_PORT`: a port this shard cannot read).
    handed: Vec<(usize, usize, R)>,
    /// The face table's snapshot in use.
    table: Arc<FaceTable>,
    /// When timers run next (ns).
    next_timer: u64,
    /// When counters are published next (ns).
    next_publish: u64,
}

/// What one loop turn did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Turn {
    /// Nothing arrived (no frame, hand-off, host packet or L2 completion).
    pub idle: bool,
    /// Counters were published (every 10 ms).
    pub published: bool,
}

impl<S: Socket> Worker<S> {
    /// Runs until `stop` is set; returns the final counters.
    pub(crate) fn run(mut self, stop: &AtomicBool) -> Snapshot {
        // The time-stamp counter, calibrated against `Instant` (a third of a vDSO call).
        let mut clock = ndx_mem::LoopClock::new();
        let mut turns = self.turns();
        let mut empty_turns = 0u32;
        // The CS slab is mapped here, on the shard's own CPU (and NUMA node), before the loop:
        // otherwise each insert into a fresh page takes a fault in the forwarding path until
        // the store has filled once.
        let started = std::time::Instant::now();
        let bytes = self.core.shard.prefault();
        tracing::debug!(
            shard = self.me,
            bytes,
            ms = started.elapsed().as_millis() as u64,
            "content store memory mapped"
        );
        // The first beat says the loop runs (`READY=1` waits for every shard's).
        self.heartbeat.beat(stop);
        while !stop.load(Ordering::Relaxed) {
            let now = clock.now();
            let t = self.turn(now, &mut turns, stop);
            if t.published {
                clock.recalibrate();
            }
            if t.idle {
                empty_turns += 1;
                // Poll flat out for a while (the next burst usually follows closely; a PAUSE
                // costs up to ~140 cycles), then yield or pause.
                if empty_turns > IDLE_TURNS {
                    self.rest();
                }
            } else {
                empty_turns = 0;
            }
        }
        self.finish()
    }

    /// The loop's state before its first turn.
    pub(crate) fn turns(&self) -> Turns<S::Rx> {
        Turns {
            rx: Vec::with_capacity(self.core.cfg.burst),
            mine: Vec::with_capacity(self.core.cfg.burst),
            handed: Vec::with_capacity(BURST),
            table: self.core.faces.table.load_full(),
            next_timer: 0,
            next_publish: 0,
        }
    }

    /// One turn of the loop at time `now` (ns): RX bursts, hand-offs from other shards,
    /// timers, L2 completions, transmission and frame recycling, host packets, and (every
    /// 10 ms) the counters' publication.
    #[inline]
    pub(crate) fn turn(&mut self, now: u64, st: &mut Turns<S::Rx>, stop: &AtomicBool) -> Turn {
        self.core.now = now;
        self.core.snap.add(Io::Loops, 1);
        let mut idle = true;
        for i in 0..self.eps.len() {
            let n = self.eps[i].ep.rx_burst(&mut st.rx, self.core.cfg.burst);
            if n == 0 {
                continue;
            }
            let shift = crate::stats::RX_BURST.shift;
            self.core.hist.rx_burst.observe(shift, n as u64);
            idle = false;
            self.on_burst(now, i, &mut st.rx, &mut st.mine, &st.table);
        }
        let table = &st.table;
        // Frames handed over by other shards, in bursts.
        while self.drain_exchanged(&mut st.handed) {
            idle = false;
            self.on_exchanged(now, &mut st.handed, table);
        }
        // Reassembled packets handed over by other shards (copied into the action list, so
        // their buffers go back at once; sent once per burst).
        let mut reassembled = 0;
        while let Some(h) = self
            .core
            .redispatch
            .as_ref()
            .and_then(|r| r.inbox.try_recv().ok())
        {
            idle = false;
            self.core.snap.add(Io::ExchangedIn, 1);
            self.core
                .shard
                .process(now, h.face, &h.bytes, &mut self.core.actions);
            if let Some(r) = &self.core.redispatch
                && let Some(Some(back)) = r.back.get(usize::from(h.from))
            {
                let _ = back.try_send(h.bytes);
            }
            reassembled += 1;
            if reassembled % BURST == 0 {
                self.core.transmit(&mut self.eps, table, &|_| &[]);
            }
        }
        if reassembled % BURST != 0 {
            self.core.transmit(&mut self.eps, table, &|_| &[]);
        }
        if let Some(r) = &self.core.redispatch {
            while let Ok(b) = r.returned.try_recv() {
                if self.core.pool.len() < 1024 {
                    self.core.pool.push(b);
                }
            }
        }
        // Frames we handed over that came back: recycle them on their own port.
        for k in 0..self.to.len() {
            if let Some(tx) = self.to[k].as_mut() {
                let eps = &mut self.eps;
                tx.reap_many(|frame| {
                    if let Some(e) = eps.iter_mut().find(|e| e.ep.port() == frame.port()) {
                        e.ep.release(frame);
                    }
                });
            }
        }
        if now >= st.next_timer {
            self.core.shard.on_timer(now, &mut self.core.actions);
            self.core.transmit(&mut self.eps, table, &|_| &[]);
            self.core.reassembler.expire(now);
            st.next_timer = now + 1_000_000;
        }
        if self.core.poll_l2(now) {
            idle = false;
        }
        if !self.core.actions.is_empty() {
            self.core.transmit(&mut self.eps, table, &|_| &[]);
        }
        self.reclaim_frames();
        for e in &mut self.eps {
            if self.core.down.is_empty() || !self.core.down.contains(&e.ifindex) {
                e.ep.poll();
            } else {
                // Down or deleted: no kick (it would fail with ENETDOWN or ENXIO on
                // every turn); what is queued leaves when the link comes back.
                e.ep.complete();
                e.ep.recycle();
            }
        }
        // Packets from the host thread (app faces, management, kernel UDP): the face
        // table first, as the host publishes a new face before its first packet.
        let first = self
            .core
            .host
            .as_ref()
            .and_then(|h| h.inbox.try_recv().ok());
        if first.is_some() {
            self.core.host_first = first;
            idle = false;
            self.core.refresh(&mut st.table);
            self.core.drain_host(now, &mut self.eps, &st.table);
        }
        let published = now >= st.next_publish;
        if published {
            st.next_publish = now + 10_000_000;
            self.core.refresh(&mut st.table);
            self.core.take_live();
            self.core.cfg.links.not_up(&mut self.core.down);
            self.core.publish_sockets(&self.eps);
            self.core.publish(&self.stats);
            self.heartbeat.beat(stop);
        }
        Turn { idle, published }
    }

    /// Yields or pauses between empty turns, as `router.idle` says.
    fn rest(&self) {
        match self.core.cfg.idle {
            crate::config::Idle::Yield => std::thread::yield_now(),
            crate::config::Idle::Park => {
                // The host unparks us when it hands us a packet.
                let bell = self.core.host.as_ref().map(|h| h.shard_bell.clone());
                if let Some(b) = &bell {
                    b.store(true, Ordering::SeqCst);
                }
                std::thread::park_timeout(std::time::Duration::from_micros(
                    crate::config::PARK_MICROS,
                ));
                if let Some(b) = &bell {
                    b.store(false, Ordering::SeqCst);
                }
            }
            crate::config::Idle::Spin => std::hint::spin_loop(),
        }
    }

    /// The clean stop: the L2 receives what it was about to, every kept frame goes back
    /// before the sockets close, and the final counters are published and returned.
    pub(crate) fn finish(&mut self) -> Snapshot {
        // A clean stop keeps what the L2 was about to receive.
        if let Some(l2) = self.core.l2.as_mut() {
            l2.finish(
                self.core.now,
                &mut self.core.shard,
                &mut self.core.actions,
                std::time::Duration::from_secs(2),
            );
            l2.reset();
            self.core.actions.clear();
        }
        // Every kept frame goes back before the sockets close.
        self.core.shard.let_go_frames();
        self.reclaim_frames();
        for e in &self.eps {
            if e.ep.kept() != 0 {
                tracing::warn!(
                    shard = self.me,
                    "shard {}: {} kept frames not returned to port {} (its memory stays \
                     mapped)",
                    self.me,
                    e.ep.kept(),
                    e.ep.port()
                );
            }
        }
        self.core.publish_sockets(&self.eps);
        self.core.publish(&self.stats);
        std::mem::take(&mut self.core.snap)
    }

    /// One RX burst: frames of other shards are handed over; ours go through the pipeline in
    /// groups of [`BURST`] (`Shard::process_burst` overlaps their table misses), multi-buffer
    /// frames one by one; then every frame is released and the burst's output sent.
    fn on_burst(
        &mut self,
        now: u64,
        ep: usize,
        rx: &mut Vec<S::Rx>,
        mine: &mut Vec<S::Rx>,
        table: &FaceTable,
    ) {
        // With no other shard to hand frames to, every frame is ours: no metadata to read.
        let alone = self.to.iter().all(Option::is_none);
        for frame in rx.drain(..) {
            self.core.snap.add(Io::RxFrames, 1);
            self.core.snap.add(Io::RxBytes, frame.len() as u64);
            if alone {
                mine.push(frame);
            } else if let Some(f) = self.steer(ep, frame) {
                mine.push(f);
            }
        }
        // The burst's hand-offs go out together: one shared index write per ring.
        for tx in self.to.iter_mut().flatten() {
            tx.publish();
        }
        let ifindex = self.eps[ep].ifindex;
        // The CS keeps the frames the burst's Data arrived in (rather than copying them)
        // while it holds few enough of this port's.
        let keeping = self.core.shard.cs().keeps_frames() && self.eps[ep].may_keep(mine.len());
        // The single-buffer frames are lent to the pipeline: a Data in one is sent from
        // there, copied once into its transmit frame, so the frames are released only after
        // the burst's output is sent. `core.lent` holds each lent frame's index in `mine`
        // and where its NDN bytes start.
        let mem = self.eps[ep].mem.clone();
        {
            let core = &mut self.core;
            let mut g = Gather::new(keeping);
            // The XDP program already said whether a frame is a fragment: no second decode
            // (only asked with several shards, where the worker reassembles).
            let verdicts = core.redispatch.is_some();
            // The kernel copied the frames in on another CPU: the headers' first touch (the
            // link-layer walk) would miss frame by frame; prefetched a few frames ahead, the
            // misses overlap.
            for f in mine.iter().take(RX_PREFETCH_AHEAD) {
                prefetch_headers(&mem, f);
            }
            for (at, f) in mine.iter().enumerate() {
                if let Some(ahead) = mine.get(at + RX_PREFETCH_AHEAD) {
                    prefetch_headers(&mem, ahead);
                }
                core.gather(&mut g, now, at, &mem, f, ifindex, verdicts, table);
            }
            core.run_gathered(&mut g, now);
        }
        {
            let frames: &[S::Rx] = mine;
            let bytes = |&(at, start): &(usize, usize)| -> &[u8] {
                frames
                    .get(at)
                    .and_then(|f| mem.first(f))
                    .and_then(|f| f.get(start..))
                    .unwrap_or(&[])
            };
            self.core.transmit(&mut self.eps, table, &bytes);
        }
        // The Data are sent: the CS takes the frames it admitted Data from (in the order
        // they were lent, which is `mine`'s; none when the burst did not keep); every other
        // frame goes back.
        let endpoint = &mut self.eps[ep].ep;
        let mut rest = mine.drain(..).enumerate().peekable();
        let core = &mut self.core;
        core.shard.return_lent(&mut core.lent, |(at, start), keep| {
            if !keep {
                return None;
            }
            while let Some((_, f)) = rest.next_if(|&(i, _)| i < at) {
                endpoint.release(f);
            }
            let (_, f) = rest.next_if(|&(i, _)| i == at)?;
            endpoint
                .keep(f, start)
                .map_err(|f| endpoint.release(f))
                .ok()
        });
        for (_, f) in rest {
            endpoint.release(f);
        }
    }

    /// Gives the kept frames the CS let go of (their Data evicted or replaced) back to their
    /// ports: to this shard's socket on the port, the one that kept them (a shard has one
    /// socket per port, so each socket's count of kept frames is exact).
    fn reclaim_frames(&mut self) {
        for f in self.core.shard.released_frames() {
            if let Some(e) = self.eps.iter_mut().find(|e| e.ep.port() == f.port()) {
                e.ep.release_kept(f);
            }
        }
    }

    /// Hands a frame that belongs to another shard to it (or drops it when its ring is full);
    /// returns the frame when it is ours. The hand-off is staged: the caller publishes the
    /// rings once the burst is steered.
    fn steer(&mut self, ep: usize, rx: S::Rx) -> Option<S::Rx> {
        let core = &mut self.core;
        let mem = &self.eps[ep].mem;
        let meta = mem.meta(&rx).and_then(XdpMeta::parse);
        let target = match meta {
            // Names too long for the XDP program are steered by source: dispatch them here.
            Some(m)
                if m.how == How::Source
                    && matches!(m.kind, Kind::Interest | Kind::Data | Kind::Nack) =>
            {
                mem.first(&rx)
                    .and_then(|f| core.owner_of_frame(f, rx.len()))
            }
            Some(m) => Some(m.shard),
            None => None,
        };
        if let Some(t) = target
            && t != core.me
            && let Some(Some(tx)) = self.to.get_mut(usize::from(t))
        {
            match tx.stage(rx) {
                Ok(()) => core.snap.add(Io::ExchangedOut, 1),
                Err(rx) => {
                    core.snap.add(Io::ExchangeFull, 1);
                    self.eps[ep].ep.release(rx);
                }
            }
            return None;
        }
        Some(rx)
    }

    /// Takes up to [`BURST`] frames handed over by other shards into `handed`, each ring's in
    /// the order it holds them (the rings in turn); false when every ring was empty.
    fn drain_exchanged(&mut self, handed: &mut Vec<(usize, usize, S::Rx)>) -> bool {
        let ports = &self.ports;
        for (k, ring) in self.from.iter_mut().enumerate() {
            let room = BURST - handed.len();
            if room == 0 {
                break;
            }
            // Each frame's port is looked up once, here.
            ring.recv_many(room, |f| {
                let p = ports.iter().position(|(m, _)| m.port() == f.port());
                handed.push((k, p.unwrap_or(NO_PORT), f));
            });
        }
        self.core.snap.add(Io::ExchangedIn, handed.len() as u64);
        if handed.is_empty() {
            return false;
        }
        let shift = crate::stats::EXCHANGED_BURST.shift;
        self.core
            .hist
            .exchanged_burst
            .observe(shift, handed.len() as u64);
        true
    }

    /// A burst of frames handed over by other shards (see [`Self::drain_exchanged`]), as
    /// [`Self::on_burst`] runs its own: the single-buffer frames are lent to the pipeline in
    /// one burst (`Shard::process_burst_lent`: a Data is sent from its frame; the CS copies
    /// what it admits, since the frames belong to another shard's socket), multi-buffer ones
    /// go one by one in their place, the burst's output is sent once, and every frame goes
    /// back to the shard that handed it over, in the order received. A frame of a port this
    /// shard cannot read (its port gone) goes back unread.
    fn on_exchanged(
        &mut self,
        now: u64,
        handed: &mut Vec<(usize, usize, S::Rx)>,
        table: &FaceTable,
    ) {
        let ports = &self.ports;
        {
            let core = &mut self.core;
            let mut g = Gather::new(false);
            // Another core wrote these frames: their headers and the XDP metadata line (the
            // verdict is read from it) are fetched a few frames ahead of the classification.
            let prefetch = |at: usize| {
                if let Some((_, p, f)) = handed.get(at)
                    && let Some((mem, _)) = ports.get(*p)
                {
                    if let Some(m) = mem.meta(f).and_then(<[u8]>::first) {
                        ndx_mem::prefetch(m);
                    }
                    prefetch_headers(mem, f);
                }
            };
            (0..RX_PREFETCH_AHEAD).for_each(prefetch);
            for (at, (_, p, f)) in handed.iter().enumerate() {
                prefetch(at + RX_PREFETCH_AHEAD);
                if let Some((mem, ifindex)) = ports.get(*p) {
                    core.gather(&mut g, now, at, mem, f, *ifindex, true, table);
                }
            }
            core.run_gathered(&mut g, now);
        }
        {
            let frames: &[(usize, usize, S::Rx)] = handed;
            let bytes = |&(at, start): &(usize, usize)| -> &[u8] {
                frames
                    .get(at)
                    .and_then(|(_, p, f)| ports.get(*p).and_then(|(m, _)| m.first(f)))
                    .and_then(|f| f.get(start..))
                    .unwrap_or(&[])
            };
            self.core.transmit(&mut self.eps, table, &bytes);
        }
        // Sent: the lending ends (the CS copied what it admitted), and every frame goes back.
        let core = &mut self.core;
        core.shard.return_lent(&mut core.lent, |_, _| None);
        // Back in the order received, each ring's run published at once.
        ExchangeReceiver::give_back_runs(&mut self.from, handed.drain(..).map(|(k, _, f)| (k, f)));
    }
}

impl<K: ndx_core::Frame> Core<K> {
    /// Runs the pipeline on a burst of lent frames (their handles pushed onto `self.lent`),
    /// the CS keeping its Data's frames when `keeping` (then [`Shard::return_lent`] must
    /// follow the transmission).
    #[inline]
    fn burst(&mut self, now: u64, batch: &[(FaceId, &[u8])], keeping: bool) {
        let (lent, out) = (&mut self.lent, &mut self.actions);
        if keeping {
            self.shard.process_burst_keeping(now, batch, lent, out);
        } else {
            self.shard.process_burst_lent(now, batch, lent, out);
        }
    }

    /// Finds (or creates) the face of a frame and runs the pipeline on its NDN bytes.
    fn ingest(&mut self, now: u64, ifindex: u32, bytes: &[u8], total: usize, table: &FaceTable) {
        if let Some((face, ndn)) = self.classify(now, ifindex, bytes, total, None, table)
            && let Some(ndn) = bytes.get(ndn)
        {
            self.shard.process(now, face, ndn, &mut self.actions);
        }
    }

    /// Finds (or creates) the face of a frame and returns it with the range of the NDN bytes
    /// the pipeline should process; `None` when the frame was dealt with here (unparseable,
    /// unknown peer, or a fragment taken by the worker's reassembler). `fragment` is the XDP
    /// program's verdict when there is one (`None`: decode to find out).
    fn classify(
        &mut self,
        now: u64,
        ifindex: u32,
        bytes: &[u8],
        total: usize,
        fragment: Option<bool>,
        table: &FaceTable,
    ) -> Option<(FaceId, std::ops::Range<usize>)> {
        let Some(p) = wire::parse(bytes, total) else {
            self.snap.add(Io::RxUnparsed, 1);
            return None;
        };
        let link = match (p.encap, p.src) {
            (Encap::UdpV4 | Encap::UdpV6, Some(src)) => Link::Udp(src),
            (Encap::Ether, _) if p.dst_mac == NDN_MULTICAST => Link::EtherMulticast { ifindex },
            (Encap::Ether, _) => Link::Ether {
                ifindex,
                mac: p.src_mac,
            },
            _ => {
                self.snap.add(Io::RxUnparsed, 1);
                return None;
            }
        };
        self.cache.sync(table);
        let cached = match self.cache.rx {
            Some((l, f)) if l == link => Some(f),
            _ => None,
        };
        let face = match cached.or_else(|| {
            let f = table
                .lookup(&link)
                .or_else(|| self.local.by_link.get(&link).copied());
            if let Some(f) = f {
                self.cache.rx = Some((link, f));
            }
            f
        }) {
            Some(f) => f,
            None if self.cfg.on_demand && !matches!(link, Link::EtherMulticast { .. }) => {
                let addr = link.on_demand_address();
                if let Err(why) = self.faces.on_demand.take(addr) {
                    self.snap.add(Io::FacesRefused, 1);
                    self.refused_face(now, link, why);
                    return None;
                }
                let Ok(id) = self.faces.ids.next() else {
                    self.faces.on_demand.give_back(addr);
                    self.snap.add(Io::UnknownFace, 1);
                    return None;
                };
                let face = Face {
                    id,
                    name: match link {
                        Link::Udp(a) => a.to_string(),
                        other => other.to_string(),
                    },
                    link,
                    info: FaceInfo::default(),
                    origin: Origin::OnDemand,
                    path: Some(L2Path {
                        ifindex,
                        src_mac: p.dst_mac,
                        dst_mac: p.src_mac,
                        src: p.dst,
                    }),
                };
                self.shard.add_face(id, face.info);
                self.local.by_link.insert(link, id);
                self.local.faces.insert(id, face.clone());
                // The control thread adds it to the published table; until then this shard
                // uses its local copy.
                if self.events.try_send(Event::NewFace(face)).is_err() {
                    // The control thread never hears of it: it stays local to this shard.
                    self.faces.on_demand.give_back(addr);
                }
                self.snap.add(Io::FacesCreated, 1);
                id
            }
            None => {
                self.snap.add(Io::UnknownFace, 1);
                return None;
            }
        };
        let ndn = bytes.get(p.payload.clone()).unwrap_or(&[]);
        if self.redispatch.is_some()
            && fragment != Some(false)
            && let Ok(Packet::Lp(lp)) = Packet::decode(ndn)
            && lp.is_fragment()
        {
            self.reassemble(now, face, &lp);
            return None;
        }
        Some((face, p.payload))
    }

    /// Logs that a new peer was refused an on-demand face (at most every 10 s per shard,
    /// with the number refused meanwhile; the counter `faces_refused` has them all).
    fn refused_face(&mut self, now: u64, link: Link, why: crate::faces::Refusal) {
        self.refusals += 1;
        if now < self.refusal_logged {
            return;
        }
        let limits = self.faces.on_demand.limits();
        let bound = match why {
            crate::faces::Refusal::Total => {
                format!("udp.on_demand_max = {} faces exist", limits.max)
            }
            crate::faces::Refusal::PerAddress => format!(
                "udp.on_demand_per_address = {} faces exist for its address",
                limits.per_address
            ),
        };
        tracing::warn!(
            "shard {}: no on-demand face for {link}: {bound} ({} frames from refused peers in the last 10 s)",
            self.me,
            self.refusals
        );
        self.refusals = 0;
        self.refusal_logged = now + 10_000_000_000;
    }

    /// The shard a whole (unfragmented) packet belongs to, by our dispatch function; `None`
    /// when there is a single shard or the frame does not parse.
    fn owner_of_frame(&self, frame: &[u8], total: usize) -> Option<u8> {
        let rd = self.redispatch.as_ref()?;
        let p = wire::parse(frame, total)?;
        let ndn = frame.get(p.payload)?;
        let (packet, token) = match Packet::decode(ndn).ok()? {
            Packet::Lp(lp) => (lp.network_packet().ok()??, lp.pit_token()),
            other => (other, None),
        };
        if let Some(s) = token.and_then(token_shard)
            && usize::from(s) < rd.dispatch.shards()
        {
            return Some(s);
        }
        match packet {
            Packet::Interest(i) => Some(rd.dispatch.shard(&i.name(), None)),
            Packet::Data(d) => Some(rd.dispatch.shard(&d.name(), None)),
            Packet::Lp(_) => None,
        }
    }

    /// Feeds a fragment to the worker's reassembler; a completed packet is wrapped in one
    /// LpPacket with fragment 0's fields and processed here or handed to its owner shard.
    fn reassemble(&mut self, now: u64, face: FaceId, lp: &ndx_codec::LpPacket<'_>) {
        let Some(rd) = self.redispatch.as_ref() else {
            return;
        };
        // Refused fragments are counted by the reassembler (`reassembly_errors`).
        let Ok(Some(done)) = self.reassembler.push(now, u64::from(face.0), lp) else {
            return;
        };
        let target = owner(&rd.dispatch, &done);
        let mut buf = self.pool.pop().unwrap_or_default();
        let headers = done.headers.as_lp_headers();
        buf.clear();
        buf.resize(headers.encoded_len(Some(done.packet.len())), 0);
        let Ok(n) = headers.encode(Some(done.packet), &mut buf) else {
            self.snap.add(Io::RxUnparsed, 1);
            return;
        };
        buf.truncate(n);
        match rd.to.get(usize::from(target)) {
            Some(Some(tx)) if target != self.me => {
                let h = Handoff {
                    from: self.me,
                    face,
                    bytes: buf,
                };
                match tx.try_send(h) {
                    Ok(()) => self.snap.add(Io::ExchangedOut, 1),
                    Err(e) => {
                        self.snap.add(Io::ExchangeFull, 1);
                        let h = match e {
                            TrySendError::Full(h) | TrySendError::Disconnected(h) => h,
                        };
                        self.pool.push(h.bytes);
                    }
                }
            }
            _ => {
                self.shard.process(now, face, &buf, &mut self.actions);
                self.pool.push(buf);
            }
        }
    }

    /// Submits the L2 reads and writes the pipeline asked for, sends everything it asked
    /// for and clears the action list. `lent(h)` is the NDN bytes of the frame lent to the
    /// pipeline with handle `h` (in `self.lent`; see `Shard::process_burst_lent`).
    fn transmit<'a, S: Socket>(
        &mut self,
        eps: &mut [Ep<S>],
        table: &FaceTable,
        lent: &dyn Fn(&(usize, usize)) -> &'a [u8],
    ) {
        if let Some(l2) = self.l2.as_mut() {
            l2.execute(self.now, &mut self.shard, &mut self.actions);
            l2.reset();
        }
        self.cache.sync(table);
        for out in self.lent.sends(&self.actions, |h| lent(h)) {
            let face = out.face;
            let (link, path) = match self.cache.tx {
                Some((id, link, path)) if id == face => (link, path),
                _ => {
                    let f = table.get(face).or_else(|| self.local.faces.get(&face));
                    let (link, path) = match f {
                        Some(f) => (f.link, f.path),
                        // A face newer than our snapshot (an app that just connected or
                        // registered): the published table has it.
                        None => match self.faces.table.load().get(face) {
                            Some(f) => (f.link, f.path),
                            None => {
                                self.snap.add(Io::UnknownFace, 1);
                                continue;
                            }
                        },
                    };
                    if f.is_some() {
                        self.cache.tx = Some((face, link, path));
                    }
                    (link, path)
                }
            };
            let udp = matches!(link, Link::Udp(_));
            if link.is_host() {
                to_host(&self.host, &mut self.snap, self.me, face, out.parts());
                continue;
            }
            let Some(path) = path else {
                // A UDP face whose next hop is not resolved yet (the control thread resolves
                // it within 200 ms): the host thread's kernel socket sends it meanwhile, the
                // kernel resolving the neighbour itself.
                if !udp || !to_host(&self.host, &mut self.snap, self.me, face, out.parts()) {
                    self.snap.add(Io::UnresolvedFace, 1);
                }
                continue;
            };
            if !self.down.is_empty() && self.down.contains(&path.ifindex) {
                self.snap.add(Io::TxLinkDown, 1);
                continue;
            }
            let Some(ep) = eps.iter_mut().find(|e| e.ifindex == path.ifindex) else {
                self.snap.add(Io::UnresolvedFace, 1);
                continue;
            };
            let mtu = self
                .cfg
                .ifaces
                .iter()
                .find(|i| i.ifindex == path.ifindex)
                .map_or(1500, |i| i.mtu);
            let room = match link {
                Link::Udp(a) if a.is_ipv4() => mtu - wire::IPV4_LEN - wire::UDP_LEN,
                Link::Udp(_) => mtu - wire::IPV6_LEN - wire::UDP_LEN,
                _ => mtu,
            };
            if out.len() <= room {
                send_one(
                    ep,
                    link,
                    &path,
                    &self.cfg,
                    out.parts(),
                    &mut self.hdr,
                    &mut self.snap,
                );
                continue;
            }
            if self.cfg.ip_fragments && udp {
                // Too big for the link: one datagram from the host thread's kernel socket,
                // which the kernel sends as IP fragments.
                to_host(&self.host, &mut self.snap, self.me, face, out.parts());
                continue;
            }
            // Too big for the link: NDNLPv2 fragmentation of the packet inside (whole in
            // one buffer first when it came in two parts).
            let bytes = if out.body.is_empty() {
                out.head
            } else {
                out.copy_to(&mut self.copy);
                &self.copy
            };
            let (inner, headers) = match Packet::decode(bytes) {
                Ok(Packet::Lp(lp)) => (lp.fragment(), lp.headers()),
                _ => (Some(bytes), LpHeaders::default()),
            };
            let (Some(inner), Ok(fr)) = (inner, Fragmenter::new(room)) else {
                self.snap.add(Io::TxTooBig, 1);
                continue;
            };
            let Ok(mut frags) = fr.fragment(inner, &headers, self.seq) else {
                self.snap.add(Io::TxTooBig, 1);
                continue;
            };
            self.seq = self.seq.wrapping_add(frags.count());
            loop {
                self.frag.clear();
                self.frag.resize(room, 0);
                match frags.next_into(&mut self.frag) {
                    Some(Ok(len)) => {
                        self.snap.add(Io::FragmentsOut, 1);
                        send_one(
                            ep,
                            link,
                            &path,
                            &self.cfg,
                            [&self.frag[..len], &[]],
                            &mut self.hdr,
                            &mut self.snap,
                        );
                    }
                    _ => break,
                }
            }
        }
        self.actions.clear();
    }
}

/// How many frames of a received burst ahead of the one being classified have their headers
/// prefetched.
const RX_PREFETCH_AHEAD: usize = 4;

/// Prefetches the first two cache lines of a received frame: its link, IP and UDP headers
/// and the start of the NDN packet (type, name), what the worker reads of it first.
#[inline(always)]
fn prefetch_headers<M: PortMem>(mem: &M, f: &M::Rx) {
    if let Some(b) = mem.first(f)
        && let Some(first) = b.first()
    {
        ndx_mem::prefetch_lines(first, b.len().min(128));
    }
}

/// Queues a packet for the host thread (an app or management face, or the kernel's UDP
/// socket) and counts it sent or dropped; false when the host's queue was full (or there is
/// no host thread).
fn to_host(
    host: &Option<crate::host::ShardHostLink>,
    snap: &mut Snapshot,
    me: u8,
    face: FaceId,
    parts: [&[u8]; 2],
) -> bool {
    let Some(h) = host else {
        return false;
    };
    let sent = h.send(me, face, parts);
    snap.add(if sent { Io::HostOut } else { Io::HostQueueFull }, 1);
    sent
}

/// The shard that owns a reassembled packet: the one named by our PIT token, else the one
/// its name dispatches to.
fn owner(d: &Dispatch, r: &Reassembled<'_>) -> u8 {
    if let Some(s) = r.headers.pit_token().and_then(token_shard)
        && usize::from(s) < d.shards()
    {
        return s;
    }
    match Packet::decode(r.packet) {
        Ok(Packet::Interest(i)) => d.shard(&i.name(), None),
        Ok(Packet::Data(data)) => d.shard(&data.name(), None),
        _ => 0,
    }
}

/// Builds the link headers for one packet and queues it on `ep`.
fn send_one<S: Socket>(
    ep: &mut Ep<S>,
    link: Link,
    path: &L2Path,
    cfg: &WorkerConfig,
    ndn: [&[u8]; 2],
    hdr: &mut [u8],
    snap: &mut Snapshot,
) {
    // With `Some(sum)`, the UDP checksum is summed while the payload is copied into the TX frame.
    let (hlen, sum) = match link {
        Link::Udp(dst) => {
            let src = path.src.unwrap_or_else(|| {
                SocketAddr::new(
                    if dst.is_ipv4() {
                        IpAddr::from([0, 0, 0, 0])
                    } else {
                        IpAddr::from([0u16; 8])
                    },
                    cfg.udp_port,
                )
            });
            let h = UdpHeaders {
                src_mac: path.src_mac,
                dst_mac: path.dst_mac,
                src: SocketAddr::new(src.ip(), cfg.udp_port),
                dst,
                ttl: 64,
            };
            match wire::build_udp_header(hdr, &h, ndn[0].len() + ndn[1].len()) {
                Ok((n, sum)) => (n, Some(sum)),
                Err(_) => {
                    snap.add(Io::TxRingFull, 1);
                    return;
                }
            }
        }
        Link::Ether { mac, .. } => match wire::build_ether(hdr, mac, path.src_mac) {
            Ok(n) => (n, None),
            Err(_) => return,
        },
        Link::EtherMulticast { .. } => match wire::build_ether(hdr, NDN_MULTICAST, path.src_mac) {
            Ok(n) => (n, None),
            Err(_) => return,
        },
        // Served by the host thread (see `Core::transmit`).
        Link::App { .. } | Link::Internal => return,
    };
    let gather = [&hdr[..hlen], ndn[0], ndn[1]];
    let push = |s: &mut S| match sum {
        Some(sum) => s.push_tx_udp(&gather, sum),
        None => s.push_tx(&gather),
    };
    let mut r = push(&mut ep.ep);
    if matches!(r, Err(TxError::RingFull | TxError::NoFrame)) {
        // Burst larger than the ring: push what is queued to the kernel, reclaim completed
        // frames, and try once more.
        ep.ep.flush_tx();
        ep.ep.complete();
        r = push(&mut ep.ep);
    }
    counted(r, hlen + ndn[0].len() + ndn[1].len(), snap);
}

/// Counts one queued packet of `len` bytes, or one refused.
#[inline]
fn counted(r: Result<(), TxError>, len: usize, snap: &mut Snapshot) {
    match r {
        Ok(()) => {
            snap.add(Io::TxFrames, 1);
            snap.add(Io::TxBytes, len as u64);
        }
        Err(_) => snap.add(Io::TxRingFull, 1),
    }
}
