//! A UDP "face" for the tools: one std socket, NDNLPv2 fragmentation on send and reassembly on
//! receive, PitToken and Nack headers carried through.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use ndx_codec::{
    Fragmenter, LpHeaders, NackReason, Packet, ReassembledHeaders, Reassembler, ReassemblerConfig,
};

use crate::error::AppError;

/// IPv4 (20) plus UDP (8) header bytes.
const V4_OVERHEAD: usize = 28;
/// IPv6 (40) plus UDP (8) header bytes.
const V6_OVERHEAD: usize = 48;
/// Largest UDP payload.
const MAX_DATAGRAM: usize = 65_507;

/// A network packet (Interest or Data TLV) that came in, with its LP headers.
#[derive(Debug)]
pub(crate) struct Incoming {
    /// The sender.
    pub(crate) from: SocketAddr,
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

/// One UDP socket with LP fragmentation and reassembly.
#[derive(Debug)]
pub(crate) struct Face {
    sock: UdpSocket,
    fragmenter: Fragmenter,
    reassembler: Reassembler,
    next_sequence: u64,
    rx: Vec<u8>,
    tx: Vec<u8>,
    epoch: Instant,
    timeout: Option<Duration>,
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

impl Face {
    /// Wraps `sock`; `link_mtu` is the IP MTU of the path (the largest LpPacket is that minus
    /// the IP and UDP headers of the socket's family).
    pub(crate) fn new(sock: UdpSocket, link_mtu: usize) -> Result<Self, AppError> {
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
        let payload = link_mtu.saturating_sub(overhead).min(MAX_DATAGRAM);
        let fragmenter = Fragmenter::new(payload).map_err(|_| {
            AppError::InvalidOption(format!(
                "MTU {link_mtu} is too small (at least {} needed)",
                Fragmenter::MIN_MTU + overhead
            ))
        })?;
        Ok(Self {
            sock,
            fragmenter,
            reassembler: Reassembler::new(ReassemblerConfig {
                max_partials: 128,
                max_packet_len: 1 << 17,
                max_frag_count: 1 << 10,
                timeout_ns: 2_000_000_000,
            }),
            next_sequence: 0,
            rx: vec![0; MAX_DATAGRAM + 1],
            tx: vec![0; payload],
            epoch: Instant::now(),
            timeout: None,
            counters: FaceCounters::default(),
        })
    }

    /// The socket's local address.
    pub(crate) fn local_addr(&self) -> Result<SocketAddr, AppError> {
        self.sock.local_addr().map_err(|source| AppError::Socket {
            what: "reading the local address",
            source,
        })
    }

    /// Sends `packet` (an Interest or Data TLV) to `to`: bare when it fits and no header is
    /// needed, else in one LpPacket or in NDNLPv2 fragments carrying `pit_token` and `nack`.
    pub(crate) fn send(
        &mut self,
        to: SocketAddr,
        packet: &[u8],
        pit_token: Option<&[u8]>,
        nack: Option<NackReason>,
    ) -> Result<(), AppError> {
        let headers = LpHeaders {
            pit_token,
            nack,
            ..LpHeaders::default()
        };
        if headers.is_empty() && packet.len() <= self.fragmenter.mtu() {
            return self.send_datagram(to, packet, false);
        }
        let mut frags = self
            .fragmenter
            .fragment(packet, &headers, self.next_sequence)?;
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

    fn send_datagram(&mut self, to: SocketAddr, d: &[u8], fragment: bool) -> Result<(), AppError> {
        match self.sock.send_to(d, to) {
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

    /// Waits up to `timeout` for one datagram; returns the network packet it completes, or
    /// `None` on timeout or when the datagram was a non-final fragment, an IDLE packet or
    /// malformed (counted).
    pub(crate) fn recv(&mut self, timeout: Duration) -> Result<Option<Incoming>, AppError> {
        let timeout = timeout.max(Duration::from_micros(100));
        if self.timeout != Some(timeout) {
            self.sock
                .set_read_timeout(Some(timeout))
                .map_err(|source| AppError::Socket {
                    what: "setting the receive timeout",
                    source,
                })?;
            self.timeout = Some(timeout);
        }
        let (n, from) = match self.sock.recv_from(&mut self.rx) {
            Ok(r) => r,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock
                        | ErrorKind::TimedOut
                        | ErrorKind::Interrupted
                        | ErrorKind::ConnectionRefused
                ) =>
            {
                return Ok(None);
            }
            Err(source) => {
                return Err(AppError::Socket {
                    what: "receiving",
                    source,
                });
            }
        };
        self.counters.datagrams_received += 1;
        let frame = &self.rx[..n];
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
        match self.reassembler.push(now_ns, peer_id(from), &lp) {
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

/// A number identifying a peer for the reassembler.
fn peer_id(a: SocketAddr) -> u64 {
    let mut h = DefaultHasher::new();
    a.hash(&mut h);
    h.finish()
}
