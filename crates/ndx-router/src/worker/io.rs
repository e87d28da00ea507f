//! The worker's I/O seam: what a shard worker asks of its sockets ([`Socket`]) and of a
//! port's memory ([`PortMem`]), and the received-frame handles they deal in ([`RxHandle`]).
//!
//! The worker is generic over [`Socket`] and monomorphised: the production build
//! instantiates it once, with the AF_XDP [`Endpoint`] (its frames [`RxFrame`] and
//! [`KeptFrame`], its memory [`Umem`]), so every per-frame call is a direct, inlinable call
//! into `ndx-afxdp`, no vtable. The unit tests instantiate it with an in-memory fake
//! (`worker::fake`) that records every frame it hands out and asserts each comes back once.
//!
//! The traits live here rather than in `ndx-afxdp` because they are the router's view of a
//! socket (what `worker` calls, nothing more); `ndx-afxdp` stays unaware of the router.

use ndx_afxdp::wire::Checksum;
use ndx_afxdp::{Counters, Endpoint, KeptFrame, KernelStats, RxFrame, TxError, Umem};

/// A received packet's handle: the unique owner of its frame(s) until it is released, kept
/// or handed to another shard (over an `ndx_afxdp::Exchange`, hence `Send`).
pub(crate) trait RxHandle: Send + std::fmt::Debug {
    /// The port (memory) the frame belongs to.
    fn port(&self) -> u32;
    /// Total packet length (all segments, metadata excluded).
    fn len(&self) -> usize;
    /// Number of buffers (1 unless a multi-buffer chain).
    fn segments(&self) -> usize;
}

/// A received frame the content store keeps past its burst (see [`Socket::keep`]).
pub(crate) trait KeptHandle: ndx_core::Frame {
    /// The port the frame belongs to.
    fn port(&self) -> u32;
}

/// Read access to one port's received frames, from any shard (a cheap clone).
pub(crate) trait PortMem: Clone + std::fmt::Debug {
    /// The frames it reads.
    type Rx: RxHandle;
    /// The port's id (equals [`RxHandle::port`] of its frames).
    fn port(&self) -> u32;
    /// The frame's first (often only) buffer; `None` when it belongs to another port.
    fn first<'a>(&'a self, frame: &'a Self::Rx) -> Option<&'a [u8]>;
    /// The XDP program's metadata in front of the frame, if the port reserves room for it.
    fn meta<'a>(&'a self, frame: &'a Self::Rx) -> Option<&'a [u8]>;
    /// Copies the whole packet (every buffer) into `out`; false when the frame belongs to
    /// another port.
    fn copy_to(&self, frame: &Self::Rx, out: &mut Vec<u8>) -> bool;
}

/// One shard's socket on one port: receive bursts, frame lending and keeping, transmission,
/// and the housekeeping that returns frames to the port.
pub(crate) trait Socket: std::fmt::Debug {
    /// Its received frames.
    type Rx: RxHandle;
    /// A received frame the content store keeps past its burst.
    type Kept: KeptHandle;
    /// Its port's memory.
    type Mem: PortMem<Rx = Self::Rx>;

    /// The port's id.
    fn port(&self) -> u32;
    /// A reader of the port's frames.
    fn mem(&self) -> Self::Mem;
    /// The port's receive frames (shared by its sockets).
    fn rx_frames(&self) -> u32;
    /// Sockets sharing the port (this one included).
    fn sockets(&self) -> u32;
    /// Appends up to `max` received packets to `out`; returns how many.
    fn rx_burst(&mut self, out: &mut Vec<Self::Rx>, max: usize) -> usize;
    /// Gives a received frame back to the port (any socket of its port).
    fn release(&mut self, frame: Self::Rx);
    /// Keeps a single-buffer frame past its burst as its bytes from `start` on; gives the
    /// handle back when it cannot.
    fn keep(&mut self, frame: Self::Rx, start: usize) -> Result<Self::Kept, Self::Rx>;
    /// Gives a kept frame back to the port.
    fn release_kept(&mut self, frame: Self::Kept);
    /// Frames kept on this socket less those given back to it.
    fn kept(&self) -> i64;
    /// Queues one packet, given as a gather list, for transmission.
    fn push_tx(&mut self, gather: &[&[u8]]) -> Result<(), TxError>;
    /// Queues one UDP packet: `gather[0]` the headers from `wire::build_udp_header`, `sum`
    /// their checksum, to which the payload (the rest) is added while it is copied.
    fn push_tx_udp(&mut self, gather: &[&[u8]], sum: Checksum) -> Result<(), TxError>;
    /// Hands what is queued to the kernel.
    fn flush_tx(&mut self);
    /// Reclaims transmitted frames; returns how many.
    fn complete(&mut self) -> usize;
    /// Returns released frames towards the port's fill ring.
    fn recycle(&mut self);
    /// One housekeeping step: flush, complete, recycle.
    fn poll(&mut self);
    /// Software counters.
    fn counters(&self) -> Counters;
    /// The kernel's statistics of the socket.
    fn kernel_stats(&self) -> Result<KernelStats, ndx_afxdp::Error>;
}

impl RxHandle for RxFrame {
    #[inline]
    fn port(&self) -> u32 {
        RxFrame::port(self)
    }
    #[inline]
    fn len(&self) -> usize {
        RxFrame::len(self)
    }
    #[inline]
    fn segments(&self) -> usize {
        RxFrame::segments(self)
    }
}

impl KeptHandle for KeptFrame {
    #[inline]
    fn port(&self) -> u32 {
        KeptFrame::port(self)
    }
}

impl PortMem for Umem {
    type Rx = RxFrame;
    #[inline]
    fn port(&self) -> u32 {
        Umem::port(self)
    }
    #[inline]
    fn first<'a>(&'a self, frame: &'a RxFrame) -> Option<&'a [u8]> {
        self.frame(frame).map(|f| f.first())
    }
    #[inline]
    fn meta<'a>(&'a self, frame: &'a RxFrame) -> Option<&'a [u8]> {
        self.frame(frame).and_then(|f| f.meta())
    }
    #[inline]
    fn copy_to(&self, frame: &RxFrame, out: &mut Vec<u8>) -> bool {
        self.frame(frame).map(|f| f.copy_to(out)).is_some()
    }
}

impl Socket for Endpoint {
    type Rx = RxFrame;
    type Kept = KeptFrame;
    type Mem = Umem;

    #[inline]
    fn port(&self) -> u32 {
        Endpoint::port(self)
    }
    #[inline]
    fn mem(&self) -> Umem {
        self.umem()
    }
    #[inline]
    fn rx_frames(&self) -> u32 {
        Endpoint::rx_frames(self)
    }
    #[inline]
    fn sockets(&self) -> u32 {
        Endpoint::sockets(self)
    }
    #[inline]
    fn rx_burst(&mut self, out: &mut Vec<RxFrame>, max: usize) -> usize {
        Endpoint::rx_burst(self, out, max)
    }
    #[inline]
    fn release(&mut self, frame: RxFrame) {
        Endpoint::release(self, frame);
    }
    #[inline]
    fn keep(&mut self, frame: RxFrame, start: usize) -> Result<KeptFrame, RxFrame> {
        Endpoint::keep(self, frame, start)
    }
    #[inline]
    fn release_kept(&mut self, frame: KeptFrame) {
        Endpoint::release_kept(self, frame);
    }
    #[inline]
    fn kept(&self) -> i64 {
        Endpoint::kept(self)
    }
    #[inline]
    fn push_tx(&mut self, gather: &[&[u8]]) -> Result<(), TxError> {
        Endpoint::push_tx(self, gather)
    }
    #[inline]
    fn push_tx_udp(&mut self, gather: &[&[u8]], sum: Checksum) -> Result<(), TxError> {
        Endpoint::push_tx_udp(self, gather, sum)
    }
    #[inline]
    fn flush_tx(&mut self) {
        Endpoint::flush_tx(self);
    }
    #[inline]
    fn complete(&mut self) -> usize {
        Endpoint::complete(self)
    }
    #[inline]
    fn recycle(&mut self) {
        Endpoint::recycle(self);
    }
    #[inline]
    fn poll(&mut self) {
        Endpoint::poll(self);
    }
    #[inline]
    fn counters(&self) -> Counters {
        Endpoint::counters(self)
    }
    fn kernel_stats(&self) -> Result<KernelStats, ndx_afxdp::Error> {
        Endpoint::kernel_stats(self)
    }
}
