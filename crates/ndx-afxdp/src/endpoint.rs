//! One AF_XDP socket bound to a (device, queue), driven by one shard thread.

#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use xdpilone::xdp::XdpDesc;
use xdpilone::{CompletionQueue, FillQueue, RingRx, RingTx, User};

use crate::spsc::{Consumer, Producer};
use crate::umem::{Chain, Frame, FrameMut, KeptFrame, MAX_SEGMENTS, Region, RxFrame, Umem};
use crate::wire::{Checksum, UDP_LEN};

/// `XDP_PKT_CONTD`: set on every descriptor of a multi-buffer packet but the last.
pub const XDP_PKT_CONTD: u32 = 1;

/// Software counters of one endpoint (plain integers: one thread owns them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets handed out by [`Endpoint::rx_burst`].
    pub rx_packets: u64,
    /// Bytes of those packets (metadata excluded).
    pub rx_bytes: u64,
    /// RX descriptors consumed (more than packets when multi-buffer).
    pub rx_descs: u64,
    /// RX descriptors with an address/length outside the UMEM (frame recycled or lost).
    pub rx_invalid: u64,
    /// Packets dropped because they spanned more than [`MAX_SEGMENTS`] descriptors (or,
    /// never with the kernel's layout, because their first buffer left no room for the
    /// segment table in front of it).
    pub rx_chain_too_long: u64,
    /// Packets queued for transmission.
    pub tx_packets: u64,
    /// Bytes of those packets.
    pub tx_bytes: u64,
    /// Packets refused because the TX ring was full.
    pub tx_ring_full: u64,
    /// Packets refused because no free TX frame was left.
    pub tx_no_frame: u64,
    /// Packets refused because they need more than [`MAX_SEGMENTS`] frames.
    pub tx_too_long: u64,
    /// TX frames reclaimed from the completion ring (by the owner) or from the owner.
    pub tx_completed: u64,
    /// `sendto` kicks issued (copy mode transmits only inside them).
    pub kicks: u64,
    /// Flushes that issued at least one kick (`kicks / kick_rounds`: `sendto` calls per burst).
    pub kick_rounds: u64,
    /// Kicks skipped because the TX ring did not ask for one (`XDP_USE_NEED_WAKEUP`).
    pub kicks_saved: u64,
    /// Owner only: `poll` calls that woke the kernel's receive side because the fill ring
    /// asked for it (`XDP_USE_NEED_WAKEUP`; zero-copy drivers only, never in copy mode).
    pub fill_wakeups: u64,
    /// Kicks that failed with something other than EAGAIN/EBUSY/ENOBUFS.
    pub kick_errors: u64,
    /// Owner only: times the fill ring could not be topped up because no free frame was left.
    pub fill_starved: u64,
}

/// Kernel-side socket statistics (`XDP_STATISTICS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelStats {
    /// Packets dropped for reasons other than a full RX ring or empty fill ring.
    pub rx_dropped: u64,
    /// Invalid descriptors on the RX ring.
    pub rx_invalid_descs: u64,
    /// Invalid descriptors we put on the TX ring.
    pub tx_invalid_descs: u64,
    /// Packets dropped because our RX ring was full.
    pub rx_ring_full: u64,
    /// Times the kernel found the fill ring empty.
    pub rx_fill_ring_empty_descs: u64,
    /// Times the kernel found the TX ring empty on a kick.
    pub tx_ring_empty_descs: u64,
}

/// Error returned by [`Endpoint::push_tx`] when a packet cannot be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TxError {
    /// The TX ring has no room for the packet's descriptors; flush and retry.
    #[error("TX ring full")]
    RingFull,
    /// No free TX frame; reap completions and retry.
    #[error("no free TX frame")]
    NoFrame,
    /// The packet is empty or needs more than `MAX_SEGMENTS` frames.
    #[error("packet length not sendable")]
    BadLength,
}

/// How frames of a port are split: `[0, rx_frames)` feed the fill ring,
/// then `tx_per_socket` frames per socket, socket by socket.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub(crate) rx_frames: u32,
    pub(crate) tx_per_socket: u32,
    pub(crate) sockets: u32,
}

/// The fill/completion rings of a port, held by its first endpoint.
pub(crate) struct OwnerRings {
    pub(crate) fill: FillQueue,
    pub(crate) comp: CompletionQueue,
    pub(crate) free_rx: Vec<u64>,
    /// RX frames released by the other sockets of the port.
    pub(crate) from_others: Vec<Consumer<u64>>,
    /// Completed TX frames of socket `i` (index 0 unused: ours).
    pub(crate) to_others: Vec<Option<Producer<u64>>>,
}

/// One AF_XDP socket with its RX and TX rings. `Send`: create it with
/// [`crate::Port::open`], move it to its shard thread.
///
/// The first endpoint of a port is its *owner*: it alone touches the fill and
/// completion rings; the others hand released RX frames to it, and it hands
/// their completed TX frames back, over lock-free SPSC rings. Every endpoint
/// must be polled regularly; the owner must be polled for the port to receive.
pub struct Endpoint {
    index: u32,
    queue: u32,
    ifindex: u32,
    rx: RingRx,
    tx: RingTx,
    tx_size: u32,
    owner: Option<Box<OwnerRings>>,
    to_owner: Option<Producer<u64>>,
    tx_back: Option<Consumer<u64>>,
    released: Vec<u64>,
    tx_free: Vec<u64>,
    tx_pending: Vec<XdpDesc>,
    rx_descs: Vec<XdpDesc>,
    partial: Option<Chain>,
    dropping_chain: bool,
    outstanding: u64,
    /// Frames kept here ([`Endpoint::keep`]) less those given back here
    /// ([`Endpoint::release_kept`]); added to the region's balance on drop.
    kept: i64,
    layout: Layout,
    counters: Counters,
    /// Bound with `XDP_USE_NEED_WAKEUP`: kick only when a ring's flags word asks for it.
    need_wakeup: bool,
    user: User,
    // Last: the rings and sockets above must be gone before the memory is unmapped.
    region: Arc<Region>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("port", &self.region.id)
            .field("ifindex", &self.ifindex)
            .field("queue", &self.queue)
            .field("index", &self.index)
            .field("owner", &self.owner.is_some())
            .field("fd", &self.as_raw_fd())
            .finish()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // The port's memory stays mapped while a kept frame may still point into it.
        if self.kept != 0 {
            self.region.kept.fetch_add(self.kept, Ordering::Relaxed);
        }
    }
}

impl AsRawFd for Endpoint {
    /// The socket fd, to put into an XSKMAP (borrowed: do not close it).
    fn as_raw_fd(&self) -> RawFd {
        self.user.as_raw_fd()
    }
}

/// Everything [`crate::Port::open`] prepared for one endpoint.
pub(crate) struct EndpointParts {
    pub(crate) index: u32,
    pub(crate) queue: u32,
    pub(crate) ifindex: u32,
    pub(crate) rx: RingRx,
    pub(crate) tx: RingTx,
    pub(crate) tx_size: u32,
    pub(crate) owner: Option<Box<OwnerRings>>,
    pub(crate) to_owner: Option<Producer<u64>>,
    pub(crate) tx_back: Option<Consumer<u64>>,
    pub(crate) tx_free: Vec<u64>,
    pub(crate) layout: Layout,
    pub(crate) need_wakeup: bool,
    pub(crate) user: User,
    pub(crate) region: Arc<Region>,
}

impl Endpoint {
    pub(crate) fn new(p: EndpointParts) -> Endpoint {
        let mut ep = Endpoint {
            index: p.index,
            queue: p.queue,
            ifindex: p.ifindex,
            rx: p.rx,
            tx: p.tx,
            tx_size: p.tx_size,
            owner: p.owner,
            to_owner: p.to_owner,
            tx_back: p.tx_back,
            released: Vec::with_capacity(256),
            tx_free: p.tx_free,
            tx_pending: Vec::with_capacity(256),
            rx_descs: Vec::with_capacity(256),
            partial: None,
            dropping_chain: false,
            outstanding: 0,
            kept: 0,
            layout: p.layout,
            counters: Counters::default(),
            need_wakeup: p.need_wakeup,
            user: p.user,
            region: p.region,
        };
        ep.recycle();
        ep
    }

    /// Id of the port (and UMEM) this endpoint belongs to.
    pub fn port(&self) -> u32 {
        self.region.id
    }

    /// Index of this socket within its port (0 = owner of fill/completion rings).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Queue id the socket is bound to.
    pub fn queue(&self) -> u32 {
        self.queue
    }

    /// Interface index the socket is bound to.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Whether this endpoint owns the port's fill and completion rings.
    pub fn is_owner(&self) -> bool {
        self.owner.is_some()
    }

    /// A read handle on this port's UMEM (for shards that receive exchanged frames).
    pub fn umem(&self) -> Umem {
        Umem {
            region: self.region.clone(),
        }
    }

    /// Software counters.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Kernel statistics of this socket.
    pub fn kernel_stats(&self) -> Result<KernelStats, crate::Error> {
        let s = self
            .user
            .statistics_v2()
            .map_err(|e| crate::Error::errno("XDP_STATISTICS", &e))?;
        Ok(KernelStats {
            rx_dropped: s.rx_dropped,
            rx_invalid_descs: s.rx_invalid_descs,
            tx_invalid_descs: s.tx_invalid_descs,
            rx_ring_full: s.rx_ring_full,
            rx_fill_ring_empty_descs: s.rx_fill_ring_empty_descs,
            tx_ring_empty_descs: s.tx_ring_empty_descs,
        })
    }

    /// Frames this endpoint holds ready for use: its free TX frames, plus for the
    /// owner the free RX frames and those posted in the fill ring. With no
    /// traffic in flight and all handles released and recycled, the sum over a
    /// port's endpoints equals the port's frame count (a leak check).
    pub fn free_frames(&self) -> usize {
        let mut n = self.tx_free.len();
        if let Some(o) = &self.owner {
            n += o.free_rx.len() + o.fill.pending() as usize;
        }
        n
    }

    /// The port's receive frames (its frames less every socket's transmit frames).
    pub fn rx_frames(&self) -> u32 {
        self.layout.rx_frames
    }

    /// Sockets sharing the port (this one included).
    pub fn sockets(&self) -> u32 {
        self.layout.sockets
    }

    /// Received frames handed out by this endpoint and not yet given back to it.
    pub fn outstanding(&self) -> u64 {
        self.outstanding
    }

    /// Read access to a frame received on this port.
    pub fn frame<'a>(&'a self, frame: &'a RxFrame) -> Frame<'a> {
        assert_eq!(frame.port, self.region.id, "frame of another port");
        Frame::new(&self.region, frame)
    }

    /// Write access to a frame received on this port.
    pub fn frame_mut<'a>(&'a self, frame: &'a mut RxFrame) -> FrameMut<'a> {
        assert_eq!(frame.port, self.region.id, "frame of another port");
        FrameMut::new(&self.region, frame)
    }

    /// Receives up to `max` descriptors' worth of packets, appending them to
    /// `out`; returns the number of packets appended. A multi-buffer packet whose
    /// tail has not arrived yet is kept and completed on a later call.
    pub fn rx_burst(&mut self, out: &mut Vec<RxFrame>, max: usize) -> usize {
        let before = out.len();
        let mut descs = std::mem::take(&mut self.rx_descs);
        descs.clear();
        {
            let mut read = self.rx.receive(max.min(u32::MAX as usize) as u32);
            descs.extend(std::iter::from_fn(|| read.read()));
            read.release();
        }
        for &desc in &descs {
            self.counters.rx_descs += 1;
            if !self.region.valid(desc.addr, desc.len) {
                self.counters.rx_invalid += 1;
                if desc.addr
                    < u64::from(self.region.frame_count) * u64::from(self.region.frame_size)
                {
                    let base = self.region.frame_base(desc.addr);
                    self.give_back_addr(base);
                }
                continue;
            }
            let more = desc.options & XDP_PKT_CONTD != 0;
            let chain = match self.partial.take() {
                Some(mut c) => {
                    if self.dropping_chain || !c.push(desc.addr, desc.len as u16) {
                        self.dropping_chain = true;
                        self.give_back_addr(self.region.frame_base(desc.addr));
                    }
                    c
                }
                None => {
                    // The kernel puts the data at the frame's data offset and any
                    // metadata right before it, without telling its length.
                    let off = (desc.addr % u64::from(self.region.frame_size)) as u32;
                    let meta = if off >= self.region.meta_len {
                        self.region.meta_len
                    } else {
                        0
                    };
                    if !more {
                        // The common case: one buffer, described by the handle alone.
                        self.counters.rx_packets += 1;
                        self.counters.rx_bytes += u64::from(desc.len);
                        self.outstanding += 1;
                        out.push(RxFrame {
                            addr: desc.addr,
                            port: self.region.id,
                            len: desc.len as u16,
                            nseg: 1,
                            meta_len: meta as u8,
                        });
                        continue;
                    }
                    Chain::new(self.region.id, meta as u8, desc.addr, desc.len as u16)
                }
            };
            if more {
                self.partial = Some(chain);
                continue;
            }
            let frame = if std::mem::take(&mut self.dropping_chain) {
                None
            } else {
                // SAFETY: every buffer of the chain was validated above and is ours (just
                // received, handed to nobody); the chain was started on this port.
                unsafe { self.region.chain(&chain) }
            };
            let Some(frame) = frame else {
                self.counters.rx_chain_too_long += 1;
                for &a in chain.addrs() {
                    self.give_back_addr(self.region.frame_base(a));
                }
                continue;
            };
            self.counters.rx_packets += 1;
            self.counters.rx_bytes += frame.len() as u64;
            self.outstanding += 1;
            out.push(frame);
        }
        self.rx_descs = descs;
        out.len() - before
    }

    /// Gives a received frame back (from this endpoint or any endpoint of the
    /// same port; e.g. one returned over an [`crate::Exchange`]). Panics if the
    /// frame belongs to another port.
    pub fn release(&mut self, frame: RxFrame) {
        assert_eq!(frame.port, self.region.id, "frame of another port");
        self.outstanding = self.outstanding.saturating_sub(1);
        if frame.nseg == 1 {
            self.give_back_addr(self.region.frame_base(frame.addr));
            return;
        }
        for i in 0..frame.nseg as usize {
            // SAFETY: the frame is of this port (asserted) and `i` in range.
            let (addr, _) = unsafe { self.region.seg(&frame, i) };
            self.give_back_addr(self.region.frame_base(addr));
        }
    }

    /// Keeps a received single-buffer frame past its burst, as the bytes of its first
    /// segment from `start` on (the NDN packet past the link headers): the content store
    /// holds it instead of copying the Data out. The frame stays out of the pool until
    /// [`Endpoint::release_kept`]. Gives the handle back when the packet spans several
    /// buffers or `start` is not inside it.
    pub fn keep(&mut self, frame: RxFrame, start: usize) -> Result<KeptFrame, RxFrame> {
        assert_eq!(frame.port, self.region.id, "frame of another port");
        let (addr, len) = (frame.addr, u32::from(frame.len));
        if frame.nseg != 1 || start >= len as usize {
            return Err(frame);
        }
        self.kept += 1;
        // SAFETY: the address was validated when the handle was built, `start < len`
        // keeps the range (and its first byte) in the frame, the handle is consumed here (the kept frame takes
        // over its ownership), and `kept` counts it for the region's balance.
        Ok(unsafe {
            KeptFrame::new(
                self.region.ptr(addr + start as u64),
                len - start as u32,
                self.region.id,
            )
        })
    }

    /// Gives a kept frame back (on any endpoint of its port), like [`Endpoint::release`].
    /// Panics if the frame belongs to another port.
    pub fn release_kept(&mut self, frame: KeptFrame) {
        assert_eq!(frame.port(), self.region.id, "frame of another port");
        debug_assert!(self.region.contains(frame.as_ptr()));
        self.kept -= 1;
        self.outstanding = self.outstanding.saturating_sub(1);
        self.give_back_addr(self.region.frame_of(frame.as_ptr()));
    }

    /// Frames kept on this endpoint less those given back to it (over all endpoints of a
    /// port, the kept frames still out).
    pub fn kept(&self) -> i64 {
        self.kept
    }

    fn give_back_addr(&mut self, base: u64) {
        match &mut self.owner {
            Some(o) => o.free_rx.push(base),
            None => self.released.push(base),
        }
    }

    /// Queues a received frame for transmission as is (after editing it with
    /// [`Endpoint::frame_mut`]): zero copy, its frames return to the fill ring
    /// once sent. Gives the frame back if the TX ring is full.
    pub fn forward(&mut self, frame: RxFrame) -> Result<(), RxFrame> {
        assert_eq!(frame.port, self.region.id, "frame of another port");
        let n = frame.nseg as usize;
        if self.tx_room() < n {
            self.counters.tx_ring_full += 1;
            return Err(frame);
        }
        for i in 0..n {
            let options = if i + 1 < n { XDP_PKT_CONTD } else { 0 };
            // SAFETY: the frame is of this port (asserted) and `i` in range.
            let (addr, len) = unsafe { self.region.seg(&frame, i) };
            self.tx_pending.push(XdpDesc { addr, len, options });
        }
        self.outstanding = self.outstanding.saturating_sub(1);
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += frame.len() as u64;
        Ok(())
    }

    fn tx_room(&self) -> usize {
        (self.tx_size as usize).saturating_sub(self.tx.pending() as usize + self.tx_pending.len())
    }

    /// Copies one packet, given as a gather list (e.g. `[headers, ndn_bytes]`),
    /// into free TX frames, as a multi-buffer chain when it exceeds one frame.
    /// Queued locally until [`Endpoint::flush_tx`].
    pub fn push_tx(&mut self, gather: &[&[u8]]) -> Result<(), TxError> {
        self.push(gather, None)
    }

    /// [`Endpoint::push_tx`] for a UDP packet whose checksum is summed during the copy:
    /// `gather[0]` is the headers [`crate::wire::build_udp_header`] wrote (ending with the
    /// UDP header, its checksum field still zero) and `sum` the checksum it returned; the
    /// rest of the gather (the payload) is added to `sum` as it is copied into the frame
    /// ([`crate::wire::Checksum::add_copy`]), and the finished checksum goes into the
    /// frame's copy of the header: no checksum pass over the payload apart from its copy. A first part
    /// shorter than a UDP header or longer than a frame is refused as
    /// [`TxError::BadLength`].
    pub fn push_tx_udp(&mut self, gather: &[&[u8]], sum: Checksum) -> Result<(), TxError> {
        let fs = self.region.frame_size as usize;
        match gather.first() {
            Some(h) if (UDP_LEN..=fs).contains(&h.len()) => self.push(gather, Some(sum)),
            _ => {
                self.counters.tx_too_long += 1;
                Err(TxError::BadLength)
            }
        }
    }

    /// The copy behind [`Endpoint::push_tx`] and [`Endpoint::push_tx_udp`]: with `sum`,
    /// every part after the first is summed as it is copied and the UDP checksum written
    /// into the last two bytes of the first part's copy (callers checked the first part
    /// holds a UDP header and fits the first frame).
    #[inline(always)]
    fn push(&mut self, gather: &[&[u8]], mut sum: Option<Checksum>) -> Result<(), TxError> {
        let total: usize = gather.iter().map(|s| s.len()).sum();
        let fs = self.region.frame_size as usize;
        let nframes = total.div_ceil(fs);
        if total == 0 || nframes > MAX_SEGMENTS {
            self.counters.tx_too_long += 1;
            return Err(TxError::BadLength);
        }
        if self.tx_room() < nframes {
            self.counters.tx_ring_full += 1;
            return Err(TxError::RingFull);
        }
        if self.tx_free.len() < nframes {
            self.counters.tx_no_frame += 1;
            return Err(TxError::NoFrame);
        }
        let ck_at = gather.first().map_or(0, |h| h.len().saturating_sub(2));
        if nframes == 1 {
            // The common case: the whole packet in one frame, each slice copied in place.
            let addr = self.tx_free.pop().unwrap_or_default();
            // SAFETY: as below: a frame from our free list is ours alone and in bounds.
            let buf = unsafe { self.region.bytes_mut(addr, total as u32) };
            let mut at = 0;
            for (i, part) in gather.iter().enumerate() {
                let dst = &mut buf[at..at + part.len()];
                match &mut sum {
                    Some(ck) if i > 0 => ck.add_copy(dst, part),
                    _ => dst.copy_from_slice(part),
                }
                at += part.len();
            }
            if let Some(ck) = sum {
                buf[ck_at..ck_at + 2].copy_from_slice(&ck.finish_udp().to_be_bytes());
            }
            self.tx_pending.push(XdpDesc {
                addr,
                len: total as u32,
                options: 0,
            });
            self.counters.tx_packets += 1;
            self.counters.tx_bytes += total as u64;
            return Ok(());
        }
        let mut parts = gather
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, s)| !s.is_empty());
        let (mut idx, mut cur): (usize, &[u8]) = parts.next().unwrap_or((0, &[]));
        let mut left = total;
        let mut first = 0;
        for k in 0..nframes {
            let addr = self.tx_free.pop().unwrap_or_default();
            if k == 0 {
                first = addr;
            }
            let want = left.min(fs);
            // SAFETY: `addr` came from our free list: the frame is ours alone
            // (not in any ring, no handle refers to it), and a whole frame is in bounds.
            let buf = unsafe { self.region.bytes_mut(addr, want as u32) };
            let mut filled = 0;
            while filled < want {
                if cur.is_empty() {
                    (idx, cur) = parts.next().unwrap_or((0, &[]));
                    continue;
                }
                let n = cur.len().min(want - filled);
                let dst = &mut buf[filled..filled + n];
                match &mut sum {
                    Some(ck) if idx > 0 => ck.add_copy(dst, &cur[..n]),
                    _ => dst.copy_from_slice(&cur[..n]),
                }
                cur = &cur[n..];
                filled += n;
            }
            left -= want;
            let options = if k + 1 < nframes { XDP_PKT_CONTD } else { 0 };
            self.tx_pending.push(XdpDesc {
                addr,
                len: want as u32,
                options,
            });
        }
        if let Some(ck) = sum {
            // SAFETY: the packet's first frame, still ours (queued locally, not yet handed
            // to the kernel); `ck_at + 2` is the first part's length, which fits one frame
            // (checked by `push_tx_udp`).
            let buf = unsafe { self.region.bytes_mut(first, (ck_at + 2) as u32) };
            buf[ck_at..].copy_from_slice(&ck.finish_udp().to_be_bytes());
        }
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += total as u64;
        Ok(())
    }

    /// Publishes queued TX descriptors to the kernel and kicks it (copy mode
    /// sends only inside `sendto`, at most a budget per call, so this kicks until
    /// the ring drains or the kernel stops making progress).
    pub fn flush_tx(&mut self) {
        if !self.tx_pending.is_empty() {
            let mut w = self.tx.transmit(self.tx_pending.len() as u32);
            let n = w.insert(self.tx_pending.iter().copied()) as usize;
            w.commit();
            drop(w);
            self.tx_pending.drain(..n);
        }
        self.kick();
    }

    /// Queues a burst of packets (see [`Endpoint::push_tx`]), then flushes and
    /// kicks; returns how many packets were queued (stops at the first refusal).
    pub fn tx_burst<'g, I>(&mut self, packets: I) -> usize
    where
        I: IntoIterator<Item = &'g [&'g [u8]]>,
    {
        let mut n = 0;
        for g in packets {
            if self.push_tx(g).is_err() {
                break;
            }
            n += 1;
        }
        self.flush_tx();
        n
    }

    /// Wakes the kernel's transmit path with `sendto` while descriptors remain.
    ///
    /// Copy mode transmits only inside `sendto`, at most the socket's TX budget per call
    /// (32 frames unless raised with [`crate::PortConfig::tx_budget`]), so a burst larger
    /// than the budget takes several calls: this repeats until the ring drains or a call
    /// makes no progress (at most 64 calls). Bound with `XDP_USE_NEED_WAKEUP`, it kicks
    /// only while the ring's flags word asks for it (always, in copy mode; a zero-copy
    /// driver clears it while its NAPI loop is sending anyway).
    pub fn kick(&mut self) {
        let fd = self.user.as_raw_fd();
        let mut last = u32::MAX;
        let mut kicked = false;
        for _ in 0..64 {
            let pending = self.tx.pending();
            if pending == 0 || pending == last && last != u32::MAX {
                break;
            }
            if self.need_wakeup && !self.tx.needs_wakeup() {
                self.counters.kicks_saved += 1;
                break;
            }
            last = pending;
            self.counters.kicks += 1;
            kicked = true;
            // SAFETY: a zero-length sendto on our own socket fd; no buffers passed.
            let r = unsafe {
                libc::sendto(
                    fd,
                    std::ptr::null(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null(),
                    0,
                )
            };
            if r < 0 {
                let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                if e != libc::EAGAIN && e != libc::EBUSY && e != libc::ENOBUFS {
                    self.counters.kick_errors += 1;
                    break;
                }
            }
        }
        self.counters.kick_rounds += u64::from(kicked);
    }

    /// Reclaims transmitted frames: the owner drains the completion ring (keeping
    /// its own TX frames and RX frames sent by `forward`, passing other sockets'
    /// TX frames back to them); the others collect what the owner passed back.
    /// Returns the number of frames reclaimed here.
    pub fn complete(&mut self) -> usize {
        let mut n = 0;
        if let Some(o) = &mut self.owner {
            let lay = self.layout;
            let fs = u64::from(self.region.frame_size);
            let mut rd = o.comp.complete(u32::MAX);
            while let Some(addr) = rd.read() {
                let base = addr & !(fs - 1);
                let idx = (base / fs) as u32;
                if idx < lay.rx_frames {
                    o.free_rx.push(base);
                } else {
                    let s = ((idx - lay.rx_frames) / lay.tx_per_socket).min(lay.sockets - 1);
                    if s == 0 {
                        self.tx_free.push(base);
                        n += 1;
                    } else if let Some(p) = o.to_others[s as usize].as_mut() {
                        // Capacity >= that socket's TX frames: cannot be full.
                        let _ = p.push(base);
                    }
                }
            }
            rd.release();
        }
        if let Some(c) = &mut self.tx_back {
            while let Some(a) = c.pop() {
                self.tx_free.push(a);
                n += 1;
            }
        }
        self.counters.tx_completed += n as u64;
        n
    }

    /// Returns released RX frames towards the fill ring: the owner collects the
    /// other sockets' returns and tops up the fill ring; the others publish their
    /// releases to the owner.
    pub fn recycle(&mut self) {
        if let Some(o) = &mut self.owner {
            for c in &mut o.from_others {
                while let Some(a) = c.pop() {
                    o.free_rx.push(a);
                }
            }
            if o.free_rx.is_empty() {
                if o.fill.pending() == 0 {
                    self.counters.fill_starved += 1;
                }
                return;
            }
            let mut w = o.fill.fill(o.free_rx.len() as u32);
            let cap = w.capacity() as usize;
            let start = o.free_rx.len() - cap.min(o.free_rx.len());
            for &a in &o.free_rx[start..] {
                // SAFETY: frames on the free list are ours until committed below.
                unsafe { self.region.clear_meta(a) };
            }
            let n = w.insert(o.free_rx[start..].iter().copied()) as usize;
            w.commit();
            drop(w);
            o.free_rx.truncate(o.free_rx.len() - n);
            // A zero-copy driver that ran out of fill entries sleeps until woken; copy mode
            // never sets the flag (the sender's softirq receives).
            if n > 0 && self.need_wakeup && o.fill.needs_wakeup() {
                self.counters.fill_wakeups += 1;
                o.fill.wake();
            }
        } else if let Some(p) = &mut self.to_owner {
            // Capacity >= all RX frames of the port: cannot be full.
            for a in self.released.drain(..) {
                let _ = p.push(a);
            }
        }
    }

    /// One housekeeping step: [`Endpoint::flush_tx`], [`Endpoint::complete`],
    /// [`Endpoint::recycle`].
    pub fn poll(&mut self) {
        self.flush_tx();
        self.complete();
        self.recycle();
    }
}
