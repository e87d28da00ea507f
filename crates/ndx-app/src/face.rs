//! The tools' "face": one link, a UDP socket or a local forwarder's Unix stream socket, with
//! NDNLPv2 fragmentation on send and reassembly on receive (a stream needs neither: its
//! packets always fit in one frame), PitToken and Nack headers carried through.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use ndx_codec::{
    Fragmenter, LpHeaders, NackReason, Packet, ReassembledHeaders, Reassembler, ReassemblerConfig,
};

use crate::addr::Endpoint;
use crate::error::AppError;
use crate::mtu::{LinkMtu, PathMtus};
use crate::stream::{MAX_FRAME, StreamLink};

/// IPv4 (20) plus UDP (8) header bytes.
const V4_OVERHEAD: usize = 28;
/// IPv6 (40) plus UDP (8) header bytes.
const V6_OVERHEAD: usize = 48;
/// Largest UDP payload.
const MAX_DATAGRAM: usize = 65_507;

/// Who a packet comes from or goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peer {
    /// A UDP address.
    Udp(SocketAddr),
    /// The other end of the face's stream (the local forwarder).
    Stream,
}

impl Peer {
    /// The same peer (for UDP: the same address, IPv4-mapped or not, and port).
    pub(crate) fn same(self, other: Peer) -> bool {
        let canon = |a: SocketAddr| (a.ip().to_canonical(), a.port());
        match (self, other) {
            (Peer::Udp(a), Peer::Udp(b)) => canon(a) == canon(b),
            (Peer::Stream, Peer::Stream) => true,
            _ => false,
        }
    }
}

/// A network packet (Interest or Data TLV) that came in, with its LP headers.
#[derive(Debug)]
pub(crate) struct Incoming {
    /// The sender.
    pub(crate) from: Peer,
    /// The Interest or Data TLV (reassembled when it came in fragments).
    pub(crate) packet: Vec<u8>,
    /// PitToken, Nack, CongestionMark of the (first) LpPacket; default when bare.
    pub(crate) lp: ReassembledHeaders,
}

/// Counters kept by a [`Face`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FaceCounters {
    pub(crate) datagrams_sent: u64,
    pub(crate) datagrams_received: u64,
    pub(crate) fragments_sent: u64,
    pub(crate) malformed: u64,
    pub(crate) send_dropped: u64,
}

/// What carries the face's frames.
#[derive(Debug)]
enum Link {
    /// A UDP socket, its receive buffer and current receive timeout.
    Udp {
        sock: UdpSocket,
        rx: Vec<u8>,
        timeout: Option<Duration>,
    },
    /// A local forwarder's Unix stream socket.
    Stream(StreamLink),
}

/// One link with LP fragmentation and reassembly.
#[derive(Debug)]
pub(crate) struct Face {
    link: Link,
    /// The fragmenter of every peer (a stream, or a UDP face with a fixed MTU).
    fragmenter: Fragmenter,
    /// Per-peer fragmenters from the path MTU (a UDP face with [`LinkMtu::Auto`]).
    path_mtus: Option<PathMtus>,
    reassembler: Reassembler,
    next_sequence: u64,
    tx: Vec<u8>,
    epoch: Instant,
    pub(crate) counters: FaceCounters,
}

/// The unspecified address of `peer`'s family, port 0.
pub(crate) fn any_addr_for(peer: SocketAddr) -> SocketAddr {
    match peer {
        SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    }
}

/// Socket buffer size asked for (the kernel caps it at `net.core.rmem_max`/`wmem_max`).
const SOCKET_BUFFER: usize = 4 << 20;

/// Binds a UDP socket.
pub(crate) fn bind(addr: SocketAddr) -> Result<UdpSocket, AppError> {
    UdpSocket::bind(addr).map_err(|source| AppError::Bind { addr, source })
}

/// Enlarges the socket's buffers, best effort: a window of fragmented segments arrives as a
/// burst of datagrams, and a small receive buffer turns that burst into loss.
fn enlarge_buffers(sock: &UdpSocket) {
    let s = socket2::SockRef::from(sock);
    let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = s.set_send_buffer_size(SOCKET_BUFFER);
}

/// The reassembler's limits (a stream never needs it for more than single LpPackets).
fn reassembler() -> Reassembler {
    Reassembler::new(ReassemblerConfig {
        max_partials: 128,
        max_packet_len: 1 << 17,
        max_frag_count: 1 << 10,
        timeout_ns: 2_000_000_000,
    })
}

impl Face {
    /// Opens a face towards `target`: a UDP socket bound to `bind` (default: any address of
    /// the target's family), or a connection to a forwarder's Unix socket (`bind` unused).
    /// Returns the face and the peer to send to.
    pub(crate) fn open(
        target: &Endpoint,
        bind_addr: Option<SocketAddr>,
        link_mtu: LinkMtu,
    ) -> Result<(Self, Peer), AppError> {
        match target {
            Endpoint::Udp(a) => {
                let sock = bind(bind_addr.unwrap_or_else(|| any_addr_for(*a)))?;
                Ok((Self::new(sock, link_mtu)?, Peer::Udp(*a)))
            }
            Endpoint::Unix(path) => Ok((Self::connect(path)?, Peer::Stream)),
        }
    }

    /// Connects to a local forwarder's Unix stream socket.
    pub(crate) fn connect(path: &std::path::Path) -> Result<Self, AppError> {
        let link = StreamLink::connect(path)?;
        Ok(Self {
            link: Link::Stream(link),
            fragmenter: Fragmenter::new(MAX_FRAME).map_err(AppError::Encode)?,
            path_mtus: None,
            reassembler: reassembler(),
            next_sequence: 0,
            tx: vec![0; MAX_FRAME],
            epoch: Instant::now(),
            counters: FaceCounters::default(),
        })
    }

    /// Wraps `sock`; `link_mtu` is the IP MTU of the path (the largest LpPacket is that minus
    /// the IP and UDP headers of the socket's family), or [`LinkMtu::Auto`]: each peer's path
    /// MTU as the kernel knows it.
    pub(crate) fn new(sock: UdpSocket, link_mtu: LinkMtu) -> Result<Self, AppError> {
        let local = sock.local_addr().map_err(|source| AppError::Socket {
            what: "reading the local address",
            source,
        })?;
        let overhead = if local.is_ipv4() {
            V4_OVERHEAD
        } else {
            V6_OVERHEAD
        };
        enlarge_buffers(&sock);
        let (fragmenter, path_mtus) = match link_mtu {
            LinkMtu::Fixed(mtu) => {
                let payload = mtu.saturating_sub(overhead).min(MAX_DATAGRAM);
                let fragmenter = Fragmenter::new(payload).map_err(|_| {
                    AppError::InvalidOption(format!(
                        "MTU {mtu} is too small (at least {} needed)",
                        Fragmenter::MIN_MTU + overhead
                    ))
                })?;
                (fragmenter, None)
            }
            LinkMtu::Auto => (
                Fragmenter::new(MAX_DATAGRAM).map_err(AppError::Encode)?,
                Some(PathMtus::new(overhead, MAX_DATAGRAM)),
            ),
        };
        Ok(Self {
            link: Link::Udp {
                sock,
                rx: vec![0; MAX_DATAGRAM + 1],
                timeout: None,
            },
            tx: vec![0; fragmenter.mtu()],
            fragmenter,
            path_mtus,
            reassembler: reassembler(),
            next_sequence: 0,
            epoch: Instant::now(),
            counters: FaceCounters::default(),
        })
    }

    /// The fragmenter for packets to `to`.
    fn fragmenter_for(&mut self, to: Peer) -> Fragmenter {
        match (&mut self.path_mtus, to) {
            (Some(p), Peer::Udp(a)) => p.fragmenter(a, Instant::now()),
            _ => self.fragmenter,
        }
    }

    /// Where the face is attached: its UDP socket's local address, or the forwarder's
    /// socket path.
    pub(crate) fn local_endpoint(&self) -> Result<Endpoint, AppError> {
        match &self.link {
            Link::Udp { sock, .. } => {
                sock.local_addr()
                    .map(Endpoint::Udp)
                    .map_err(|source| AppError::Socket {
                        what: "reading the local address",
                        source,
                    })
            }
            Link::Stream(s) => Ok(Endpoint::Unix(s.path().to_path_buf())),
        }
    }

    /// Sends `packet` (an Interest or Data TLV) to `to`: bare when it fits and no header is
    /// needed, else in one LpPacket or in NDNLPv2 fragments carrying `pit_token` and `nack`
    /// (on a stream, `to` is [`Peer::Stream`] and packets always fit in one frame).
    pub(crate) fn send(
        &mut self,
        to: Peer,
        packet: &[u8],
        pit_token: Option<&[u8]>,
        nack: Option<NackReason>,
    ) -> Result<(), AppError> {
        let headers = LpHeaders {
            pit_token,
            nack,
            ..LpHeaders::default()
        };
        let fragmenter = self.fragmenter_for(to);
        if headers.is_empty() && packet.len() <= fragmenter.mtu() {
            return self.send_datagram(to, packet, false);
        }
        let mut frags = fragmenter.fragment(packet, &headers, self.next_sequence)?;
        let fragmented = frags.is_fragmented();
        if fragmented {
            self.next_sequence = self.next_sequence.wrapping_add(frags.count());
        }
        let mut tx = std::mem::take(&mut self.tx);
        let mut result = Ok(());
        while let Some(n) = frags.next_into(&mut tx) {
            match n {
                Ok(n) => {
                    if let Err(e) = self.send_datagram(to, &tx[..n], fragmented) {
                        result = Err(e);
                        break;
                    }
                }
                Err(e) => {
                    result = Err(e.into());
                    break;
                }
            }
        }
        self.tx = tx;
        result
    }

    fn send_datagram(&mut self, to: Peer, d: &[u8], fragment: bool) -> Result<(), AppError> {
        let (sock, to) = match (&mut self.link, to) {
            (Link::Udp { sock, .. }, Peer::Udp(to)) => (sock, to),
            (Link::Stream(s), Peer::Stream) => {
                s.send(d)?;
                self.counters.datagrams_sent += 1;
                return Ok(());
            }
            _ => {
                return Err(AppError::InvalidOption(format!(
                    "cannot send to {to:?} on this face"
                )));
            }
        };
        match sock.send_to(d, to) {
            Ok(_) => {
                self.counters.datagrams_sent += 1;
                self.counters.fragments_sent += u64::from(fragment);
                Ok(())
            }
            // A full socket buffer or an ICMP error from an earlier datagram: the packet is
            // lost, as on any link; the protocol's retransmissions deal with it.
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock
                        | ErrorKind::ConnectionRefused
                        | ErrorKind::HostUnreachable
                        | ErrorKind::NetworkUnreachable
                ) || e.raw_os_error() == Some(105) =>
            {
                self.counters.send_dropped += 1;
                Ok(())
            }
            Err(source) => Err(AppError::Socket {
                what: "sending",
                source,
            }),
        }
    }

    /// Waits up to `timeout` for one datagram or stream frame; returns the network packet it
    /// completes, or `None` on timeout or when it was a non-final fragment, an IDLE packet or
    /// malformed (counted). A broken stream is an error.
    pub(crate) fn recv(&mut self, timeout: Duration) -> Result<Option<Incoming>, AppError> {
        let (frame, from) = match &mut self.link {
            Link::Udp {
                sock,
                rx,
                timeout: t,
            } => match udp_recv(sock, rx, t, timeout)? {
                Some((n, from)) => (&rx[..n], Peer::Udp(from)),
                None => return Ok(None),
            },
            Link::Stream(s) => match s.recv(timeout)? {
                Some(frame) => (frame, Peer::Stream),
                None => return Ok(None),
            },
        };
        self.counters.datagrams_received += 1;
        let lp = match Packet::decode(frame) {
            Ok(Packet::Lp(lp)) => lp,
            Ok(p) => {
                return Ok(Some(Incoming {
                    from,
                    packet: p.wire().to_vec(),
                    lp: ReassembledHeaders::default(),
                }));
            }
            Err(_) => {
                self.counters.malformed += 1;
                return Ok(None);
            }
        };
        let now_ns = self.epoch.elapsed().as_nanos() as u64;
        let peer = match from {
            Peer::Udp(a) => peer_id(a),
            Peer::Stream => 0,
        };
        match self.reassembler.push(now_ns, peer, &lp) {
            Ok(Some(r)) => Ok(Some(Incoming {
                from,
                packet: r.packet.to_vec(),
                lp: r.headers,
            })),
            Ok(None) => Ok(None),
            Err(_) => {
                self.counters.malformed += 1;
                Ok(None)
            }
        }
    }
}

/// One datagram within `timeout` (`None` on timeout); `current` caches the socket's timeout.
fn udp_recv(
    sock: &UdpSocket,
    rx: &mut [u8],
    current: &mut Option<Duration>,
    timeout: Duration,
) -> Result<Option<(usize, SocketAddr)>, AppError> {
    let timeout = timeout.max(Duration::from_micros(100));
    if *current != Some(timeout) {
        sock.set_read_timeout(Some(timeout))
            .map_err(|source| AppError::Socket {
                what: "setting the receive timeout",
                source,
            })?;
        *current = Some(timeout);
    }
    match sock.recv_from(rx) {
        Ok(r) => Ok(Some(r)),
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::WouldBlock
                    | ErrorKind::TimedOut
                    | ErrorKind::Interrupted
                    | ErrorKind::ConnectionRefused
            ) =>
        {
            Ok(None)
        }
        Err(source) => Err(AppError::Socket {
            what: "receiving",
            source,
        }),
    }
}

/// A number identifying a peer for the reassembler.
fn peer_id(a: SocketAddr) -> u64 {
    let mut h = DefaultHasher::new();
    a.hash(&mut h);
    h.finish()
}
