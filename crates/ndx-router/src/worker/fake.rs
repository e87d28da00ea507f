//! An in-memory [`Socket`] for the worker's unit tests (in the spirit of aya's
//! `sys/fake.rs`: the real code runs, only the syscalls are replaced).
//!
//! A [`FakePort`] is one port's frame pool and wire, shared by its sockets (one per shard)
//! and the test: the test puts frames on the wire towards a socket ([`FakePort::arrive`]),
//! the worker receives them in bursts, and what the worker transmits is recorded per socket
//! ([`FakePort::take_sent`]). Every frame handed out gets a fresh id and is recorded; giving
//! one back twice, or one never handed out, panics at once, and [`FakePort::assert_settled`]
//! checks that every frame handed out came back or is held by a content store. The pool is
//! bounded like a UMEM's receive frames: while all are out, nothing more is received.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use ndx_afxdp::wire::Checksum;
use ndx_afxdp::{Counters, KernelStats, TxError};

use super::io::{KeptHandle, PortMem, RxHandle, Socket};

/// A received frame: its buffers and the XDP metadata in front of them, owned by the handle.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FakeRx {
    port: u32,
    id: u64,
    segs: Vec<Vec<u8>>,
    meta: Option<Vec<u8>>,
}

impl RxHandle for FakeRx {
    fn port(&self) -> u32 {
        self.port
    }
    fn len(&self) -> usize {
        self.segs.iter().map(Vec::len).sum()
    }
    fn segments(&self) -> usize {
        self.segs.len()
    }
}

/// A frame a content store keeps: the bytes of its first buffer from the kept start on.
#[derive(Debug)]
pub(crate) struct FakeKept {
    port: u32,
    id: u64,
    bytes: Vec<u8>,
}

impl AsRef<[u8]> for FakeKept {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl KeptHandle for FakeKept {
    fn port(&self) -> u32 {
        self.port
    }
}

/// Reads a port's frames (the bytes travel with the handle).
#[derive(Debug, Clone)]
pub(crate) struct FakeMem {
    port: u32,
}

impl PortMem for FakeMem {
    type Rx = FakeRx;
    fn port(&self) -> u32 {
        self.port
    }
    fn first<'a>(&'a self, frame: &'a FakeRx) -> Option<&'a [u8]> {
        (frame.port == self.port).then(|| frame.segs[0].as_slice())
    }
    fn meta<'a>(&'a self, frame: &'a FakeRx) -> Option<&'a [u8]> {
        (frame.port == self.port)
            .then_some(frame.meta.as_deref())
            .flatten()
    }
    fn copy_to(&self, frame: &FakeRx, out: &mut Vec<u8>) -> bool {
        if frame.port != self.port {
            return false;
        }
        out.clear();
        for s in &frame.segs {
            out.extend_from_slice(s);
        }
        true
    }
}

/// What became of a frame (the port's history, in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Handed out by a receive burst.
    Received,
    /// Given back.
    Released,
    /// Kept by a content store.
    Kept,
    /// Given back after being kept.
    KeptReleased,
}

#[derive(Debug)]
struct PortState {
    id: u32,
    /// Receive frames: at most this many out (handed out or kept) at once.
    pool: usize,
    next_id: u64,
    /// Frames on the wire towards each socket, not received yet.
    wire: Vec<VecDeque<FakeRx>>,
    /// Frames handed out and not given back (by id).
    out: BTreeSet<u64>,
    /// Frames kept and not given back.
    kept: BTreeSet<u64>,
    /// Every frame's fates, in order.
    history: Vec<(u64, Fate)>,
    /// What each socket transmitted (whole frames, link headers included).
    sent: Vec<Vec<Vec<u8>>>,
}

impl PortState {
    fn record(&mut self, id: u64, fate: Fate) {
        self.history.push((id, fate));
    }

    /// Takes frame `id` (of `port`) off the handed-out set; panics, saying `what`, when it
    /// is not there or belongs to another port.
    fn take_out(&mut self, port: u32, id: u64, what: &str) {
        assert_eq!(port, self.id, "frame of another port");
        assert!(self.out.remove(&id), "port {}: frame {id} {what}", self.id);
    }
}

/// One port: its frame pool and ledger, shared by its sockets and the test.
#[derive(Debug, Clone)]
pub(crate) struct FakePort(Arc<Mutex<PortState>>);

impl FakePort {
    /// Port `id` with `pool` receive frames and `sockets` sockets.
    pub(crate) fn new(id: u32, pool: usize, sockets: usize) -> Self {
        Self(Arc::new(Mutex::new(PortState {
            id,
            pool,
            next_id: 0,
            wire: (0..sockets).map(|_| VecDeque::new()).collect(),
            out: BTreeSet::new(),
            kept: BTreeSet::new(),
            history: Vec::new(),
            sent: (0..sockets).map(|_| Vec::new()).collect(),
        })))
    }

    fn lock(&self) -> MutexGuard<'_, PortState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Socket `index` of the port, whose transmit ring holds `tx_ring` packets.
    pub(crate) fn socket(&self, index: usize, tx_ring: usize) -> FakeSocket {
        let st = self.lock();
        assert!(
            index < st.wire.len(),
            "the port has {} sockets",
            st.wire.len()
        );
        FakeSocket {
            id: st.id,
            sockets: st.wire.len() as u32,
            pool: st.pool as u32,
            port: self.clone(),
            index,
            tx_ring,
            pending: Vec::new(),
            kept: 0,
            counters: Counters::default(),
        }
    }

    /// A frame arrives for socket `socket`, with XDP metadata `meta` in front of it; returns
    /// its id.
    pub(crate) fn arrive(&self, socket: usize, frame: Vec<u8>, meta: Option<[u8; 16]>) -> u64 {
        self.arrive_segments(socket, vec![frame], meta)
    }

    /// A multi-buffer frame arrives for socket `socket`; returns its id.
    pub(crate) fn arrive_segments(
        &self,
        socket: usize,
        segs: Vec<Vec<u8>>,
        meta: Option<[u8; 16]>,
    ) -> u64 {
        assert!(!segs.is_empty() && segs.iter().all(|s| !s.is_empty()));
        let mut st = self.lock();
        let id = st.next_id;
        st.next_id += 1;
        let port = st.id;
        st.wire[socket].push_back(FakeRx {
            port,
            id,
            segs,
            meta: meta.map(|m| m.to_vec()),
        });
        id
    }

    /// What socket `socket` transmitted since the last call.
    pub(crate) fn take_sent(&self, socket: usize) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.lock().sent[socket])
    }

    /// Frames handed out and not given back (neither released nor kept).
    pub(crate) fn out(&self) -> usize {
        self.lock().out.len()
    }

    /// Frames kept by content stores and not given back.
    pub(crate) fn kept(&self) -> usize {
        self.lock().kept.len()
    }

    /// Frames still on the wire (not received yet).
    pub(crate) fn waiting(&self) -> usize {
        self.lock().wire.iter().map(VecDeque::len).sum()
    }

    /// How many times frames met `fate`.
    pub(crate) fn count(&self, fate: Fate) -> usize {
        self.lock()
            .history
            .iter()
            .filter(|(_, f)| *f == fate)
            .count()
    }

    /// The ids of the frames that met `fate`, in the order they met it.
    pub(crate) fn ids(&self, fate: Fate) -> Vec<u64> {
        self.lock()
            .history
            .iter()
            .filter(|(_, f)| *f == fate)
            .map(|&(id, _)| id)
            .collect()
    }

    /// Every frame received came back exactly once or is held (kept) now: no frame is out,
    /// each id's history is Received, then Released or Kept (then, if kept and let go,
    /// KeptReleased), and the kept ones still held are exactly those without the last step.
    pub(crate) fn assert_settled(&self) {
        let st = self.lock();
        assert!(
            st.out.is_empty(),
            "port {}: frames {:?} handed out and never returned",
            st.id,
            st.out
        );
        let mut by_id = std::collections::BTreeMap::<u64, Vec<Fate>>::new();
        for &(id, fate) in &st.history {
            by_id.entry(id).or_default().push(fate);
        }
        let mut held = BTreeSet::new();
        for (id, fates) in by_id {
            match fates.as_slice() {
                [Fate::Received, Fate::Released]
                | [Fate::Received, Fate::Kept, Fate::KeptReleased] => {}
                [Fate::Received, Fate::Kept] => {
                    held.insert(id);
                }
                other => panic!("port {}: frame {id} went {other:?}", st.id),
            }
        }
        assert_eq!(held, st.kept, "port {}: kept frames", st.id);
    }
}

/// One socket of a [`FakePort`].
#[derive(Debug)]
pub(crate) struct FakeSocket {
    port: FakePort,
    id: u32,
    sockets: u32,
    pool: u32,
    index: usize,
    tx_ring: usize,
    /// Queued for transmission, not flushed yet.
    pending: Vec<Vec<u8>>,
    kept: i64,
    counters: Counters,
}

impl Socket for FakeSocket {
    type Rx = FakeRx;
    type Kept = FakeKept;
    type Mem = FakeMem;

    fn port(&self) -> u32 {
        self.id
    }
    fn mem(&self) -> FakeMem {
        FakeMem { port: self.id }
    }
    fn rx_frames(&self) -> u32 {
        self.pool
    }
    fn sockets(&self) -> u32 {
        self.sockets
    }
    fn rx_burst(&mut self, out: &mut Vec<FakeRx>, max: usize) -> usize {
        let mut st = self.port.lock();
        let mut n = 0;
        while n < max && st.out.len() + st.kept.len() < st.pool {
            let Some(f) = st.wire[self.index].pop_front() else {
                break;
            };
            st.out.insert(f.id);
            st.record(f.id, Fate::Received);
            self.counters.rx_packets += 1;
            self.counters.rx_bytes += f.len() as u64;
            out.push(f);
            n += 1;
        }
        n
    }
    fn release(&mut self, frame: FakeRx) {
        let mut st = self.port.lock();
        st.take_out(
            frame.port,
            frame.id,
            "released but not out (twice, or after being kept)",
        );
        st.record(frame.id, Fate::Released);
    }
    fn keep(&mut self, frame: FakeRx, start: usize) -> Result<FakeKept, FakeRx> {
        if frame.segs.len() != 1 || start >= frame.segs[0].len() {
            return Err(frame);
        }
        let mut st = self.port.lock();
        st.take_out(frame.port, frame.id, "kept but not out");
        st.kept.insert(frame.id);
        st.record(frame.id, Fate::Kept);
        self.kept += 1;
        Ok(FakeKept {
            port: frame.port,
            id: frame.id,
            bytes: frame.segs[0][start..].to_vec(),
        })
    }
    fn release_kept(&mut self, frame: FakeKept) {
        let mut st = self.port.lock();
        assert_eq!(frame.port, st.id, "frame of another port");
        assert!(
            st.kept.remove(&frame.id),
            "port {}: kept frame {} released twice or never kept",
            st.id,
            frame.id
        );
        st.record(frame.id, Fate::KeptReleased);
        self.kept -= 1;
    }
    fn kept(&self) -> i64 {
        self.kept
    }
    fn push_tx(&mut self, gather: &[&[u8]]) -> Result<(), TxError> {
        if gather.iter().all(|g| g.is_empty()) {
            self.counters.tx_too_long += 1;
            return Err(TxError::BadLength);
        }
        if self.pending.len() >= self.tx_ring {
            self.counters.tx_ring_full += 1;
            return Err(TxError::RingFull);
        }
        self.pending.push(gather.concat());
        self.counters.tx_packets += 1;
        Ok(())
    }
    fn push_tx_udp(&mut self, gather: &[&[u8]], sum: Checksum) -> Result<(), TxError> {
        let hlen = gather.first().map_or(0, |h| h.len());
        if hlen < ndx_afxdp::wire::UDP_LEN {
            self.counters.tx_too_long += 1;
            return Err(TxError::BadLength);
        }
        self.push_tx(gather)?;
        // The same fused copy as the AF_XDP endpoint, so the tests see its checksums.
        let frame = self.pending.last_mut().expect("just pushed");
        let mut ck = sum;
        let mut at = hlen;
        for part in &gather[1..] {
            ck.add_copy(&mut frame[at..], part);
            at += part.len();
        }
        frame[hlen - 2..hlen].copy_from_slice(&ck.finish_udp().to_be_bytes());
        Ok(())
    }
    fn flush_tx(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        self.counters.kicks += 1;
        self.counters.kick_rounds += 1;
        let mut st = self.port.lock();
        st.sent[self.index].append(&mut self.pending);
    }
    fn complete(&mut self) -> usize {
        0
    }
    fn recycle(&mut self) {}
    fn poll(&mut self) {
        self.flush_tx();
    }
    fn counters(&self) -> Counters {
        self.counters
    }
    fn kernel_stats(&self) -> Result<KernelStats, ndx_afxdp::Error> {
        Ok(KernelStats::default())
    }
}
