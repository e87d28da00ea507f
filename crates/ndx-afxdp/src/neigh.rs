//! Next-hop resolution over rtnetlink (hand-rolled, a few hundred bytes of
//! protocol): route lookup, neighbour (ARP/NDP) lookup with non-blocking
//! resolution, and the interface's own MAC, MTU and addresses.
//!
//! [`Resolver::resolve`] never blocks on the network and never guesses a MAC:
//! when the neighbour is not known yet it asks the kernel to resolve it
//! (`RTM_NEWNEIGH` with `NTF_USE`, or failing that one UDP datagram to the
//! discard port) and answers [`Resolution::Pending`]; call again later.
#![allow(unsafe_code)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Errors of the netlink layer.
#[derive(Debug, thiserror::Error)]
pub enum NeighError {
    /// A socket call failed.
    #[error("netlink {op}: {source}")]
    Io {
        /// The operation.
        op: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The kernel answered with an error code.
    #[error("netlink request refused: {0}")]
    Kernel(std::io::Error),
    /// The kernel's answer could not be parsed.
    #[error("malformed netlink answer")]
    Malformed,
}

/// A route to a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Output interface index.
    pub ifindex: u32,
    /// Preferred source address, if the route has one.
    pub src: Option<IpAddr>,
    /// Gateway, or `None` when the destination is on-link.
    pub gateway: Option<IpAddr>,
}

/// An interface's own parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkInfo {
    /// Interface index.
    pub ifindex: u32,
    /// Name.
    pub name: String,
    /// Hardware address (all zeros if none).
    pub mac: [u8; 6],
    /// MTU.
    pub mtu: u32,
    /// Addresses configured on it.
    pub addrs: Vec<IpAddr>,
}

/// Everything needed to address a frame to a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextHop {
    /// Output interface index.
    pub ifindex: u32,
    /// Our MAC on that interface.
    pub src_mac: [u8; 6],
    /// The neighbour's MAC (the gateway's when routed).
    pub dst_mac: [u8; 6],
    /// Our source address for that destination.
    pub src_ip: Option<IpAddr>,
    /// The gateway, if any.
    pub gateway: Option<IpAddr>,
    /// MTU of the output interface.
    pub mtu: u32,
}

/// A kernel neighbour-table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neighbour {
    /// `NUD_*` state bits (e.g. 0x02 reachable, 0x04 stale, 0x20 failed, 0x80 permanent).
    pub state: u16,
    /// Link-layer address, if known.
    pub mac: Option<[u8; 6]>,
}

/// Outcome of [`Resolver::resolve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// The next hop is known.
    Ready(NextHop),
    /// Resolution was triggered (or is in progress); ask again later.
    Pending,
    /// The kernel gave up resolving the neighbour (NUD_FAILED); a later call
    /// triggers a new attempt.
    Failed,
    /// No route to the destination.
    NoRoute,
}

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const RTM_NEWLINK: u16 = 16;
const RTM_GETLINK: u16 = 18;
const RTM_NEWADDR: u16 = 20;
const RTM_GETADDR: u16 = 22;
const RTM_NEWROUTE: u16 = 24;
const RTM_GETROUTE: u16 = 26;
const RTM_NEWNEIGH: u16 = 28;
const RTM_GETNEIGH: u16 = 30;
const F_REQUEST: u16 = 1;
const F_ACK: u16 = 4;
const F_REPLACE: u16 = 0x100;
const F_DUMP: u16 = 0x300;
const F_CREATE: u16 = 0x400;
const NTF_USE: u8 = 1;
const IFLA_NUM_RX_QUEUES: u16 = 32;
const NUD_INCOMPLETE: u16 = 0x01;
const NUD_FAILED: u16 = 0x20;
const NUD_NOARP: u16 = 0x40;
const NUD_VALID: u16 = 0x02 | 0x04 | 0x08 | 0x10 | 0x40 | 0x80;

/// A route netlink socket.
#[derive(Debug)]
pub struct Resolver {
    fd: OwnedFd,
    seq: u32,
}

fn attr(buf: &mut Vec<u8>, ty: u16, data: &[u8]) {
    let len = 4 + data.len();
    buf.extend_from_slice(&(len as u16).to_ne_bytes());
    buf.extend_from_slice(&ty.to_ne_bytes());
    buf.extend_from_slice(data);
    buf.resize(buf.len().next_multiple_of(4), 0);
}

/// Iterates `(type, payload)` over netlink attributes; stops at malformed ones.
fn attrs(mut b: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let len = usize::from(u16::from_ne_bytes([*b.first()?, *b.get(1)?]));
        let ty = u16::from_ne_bytes([*b.get(2)?, *b.get(3)?]) & 0x3fff;
        if len < 4 || len > b.len() {
            return None;
        }
        let data = &b[4..len];
        b = b.get(len.next_multiple_of(4)..).unwrap_or(&[]);
        Some((ty, data))
    })
}

fn ip_of(family: u8, d: &[u8]) -> Option<IpAddr> {
    match (i32::from(family), d.len()) {
        (libc::AF_INET, 4) => Some(IpAddr::V4(Ipv4Addr::new(d[0], d[1], d[2], d[3]))),
        (libc::AF_INET6, 16) => {
            let a: [u8; 16] = d.try_into().ok()?;
            Some(IpAddr::V6(Ipv6Addr::from(a)))
        }
        _ => None,
    }
}

fn family(ip: &IpAddr) -> u8 {
    match ip {
        IpAddr::V4(_) => libc::AF_INET as u8,
        IpAddr::V6(_) => libc::AF_INET6 as u8,
    }
}

fn octets(ip: &IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

fn u32_of(d: &[u8]) -> Option<u32> {
    Some(u32::from_ne_bytes(d.get(..4)?.try_into().ok()?))
}

impl Resolver {
    /// Opens a `NETLINK_ROUTE` socket in the calling thread's network namespace.
    pub fn new() -> Result<Resolver, NeighError> {
        // SAFETY: plain socket(2) call.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            )
        };
        if fd < 0 {
            return Err(NeighError::Io {
                op: "socket",
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Resolver { fd, seq: 1 })
    }

    /// Sends one request (`body` after the netlink header) and collects the
    /// payloads of the answers of type `want` until DONE or the ACK.
    fn request(
        &mut self,
        ty: u16,
        flags: u16,
        body: &[u8],
        want: u16,
    ) -> Result<Vec<Vec<u8>>, NeighError> {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let mut msg = Vec::with_capacity(16 + body.len());
        msg.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
        msg.extend_from_slice(&ty.to_ne_bytes());
        msg.extend_from_slice(&(flags | F_REQUEST | F_ACK).to_ne_bytes());
        msg.extend_from_slice(&seq.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes());
        msg.extend_from_slice(body);
        // SAFETY: zeroed sockaddr_nl is valid; nl_family set below (kernel = pid 0).
        let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        sa.nl_family = libc::AF_NETLINK as u16;
        // SAFETY: msg and sa are valid for the given lengths.
        let r = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                msg.as_ptr().cast(),
                msg.len(),
                0,
                (&raw const sa).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if r < 0 {
            return Err(NeighError::Io {
                op: "sendto",
                source: std::io::Error::last_os_error(),
            });
        }
        let mut out = Vec::new();
        let mut buf = vec![0u8; 65536];
        loop {
            // SAFETY: buf is valid for writes of its length.
            let n =
                unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                return Err(NeighError::Io {
                    op: "recv",
                    source: std::io::Error::last_os_error(),
                });
            }
            let mut b = &buf[..n as usize];
            while b.len() >= 16 {
                let len = u32_of(b).ok_or(NeighError::Malformed)? as usize;
                if len < 16 || len > b.len() {
                    return Err(NeighError::Malformed);
                }
                let mty = u16::from_ne_bytes([b[4], b[5]]);
                let mseq = u32_of(&b[8..]).ok_or(NeighError::Malformed)?;
                let payload = &b[16..len];
                b = b.get(len.next_multiple_of(4)..).unwrap_or(&[]);
                if mseq != seq {
                    continue;
                }
                match mty {
                    NLMSG_DONE => return Ok(out),
                    NLMSG_ERROR => {
                        let code = u32_of(payload).ok_or(NeighError::Malformed)? as i32;
                        if code == 0 {
                            return Ok(out);
                        }
                        return Err(NeighError::Kernel(std::io::Error::from_raw_os_error(-code)));
                    }
                    t if t == want => out.push(payload.to_vec()),
                    _ => {}
                }
            }
        }
    }

    /// Looks up the route the kernel would use to reach `dst`
    /// (`None`: unreachable / no route).
    pub fn route(&mut self, dst: IpAddr) -> Result<Option<Route>, NeighError> {
        let mut body = vec![
            family(&dst),
            if dst.is_ipv4() { 32 } else { 128 },
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        body.extend_from_slice(&0u32.to_ne_bytes());
        attr(&mut body, 1, &octets(&dst)); // RTA_DST
        let answers = match self.request(RTM_GETROUTE, 0, &body, RTM_NEWROUTE) {
            Ok(a) => a,
            Err(NeighError::Kernel(e))
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENETUNREACH | libc::EHOSTUNREACH | libc::EINVAL)
                ) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let Some(a) = answers.first() else {
            return Ok(None);
        };
        let fam = *a.first().ok_or(NeighError::Malformed)?;
        let rtype = *a.get(7).ok_or(NeighError::Malformed)?;
        if rtype != 1 && rtype != 2 {
            // Not RTN_UNICAST/RTN_LOCAL: blackhole, unreachable, prohibit...
            return Ok(None);
        }
        let mut r = Route {
            ifindex: 0,
            src: None,
            gateway: None,
        };
        for (ty, d) in attrs(a.get(12..).ok_or(NeighError::Malformed)?) {
            match ty {
                4 => r.ifindex = u32_of(d).ok_or(NeighError::Malformed)?,
                5 => r.gateway = ip_of(fam, d),
                7 => r.src = ip_of(fam, d),
                _ => {}
            }
        }
        Ok((r.ifindex != 0).then_some(r))
    }

    /// The neighbour entry for `ip` on `ifindex`, if the kernel has one.
    pub fn neighbour(&mut self, ifindex: u32, ip: IpAddr) -> Result<Option<Neighbour>, NeighError> {
        let mut body = vec![family(&ip), 0, 0, 0];
        body.extend_from_slice(&(ifindex as i32).to_ne_bytes());
        body.extend_from_slice(&[0, 0, 0, 0]);
        let want = octets(&ip);
        for a in self.request(RTM_GETNEIGH, F_DUMP, &body, RTM_NEWNEIGH)? {
            if a.len() < 12 || u32_of(&a[4..]) != Some(ifindex) {
                continue;
            }
            let state = u16::from_ne_bytes([a[8], a[9]]);
            let mut dst = None;
            let mut mac = None;
            for (ty, d) in attrs(&a[12..]) {
                match ty {
                    1 => dst = Some(d.to_vec()),
                    2 => mac = <[u8; 6]>::try_from(d).ok(),
                    _ => {}
                }
            }
            if dst.as_deref() == Some(&want[..]) {
                return Ok(Some(Neighbour { state, mac }));
            }
        }
        Ok(None)
    }

    /// Asks the kernel to resolve `ip` on `ifindex` without sending data.
    fn trigger(&mut self, ifindex: u32, ip: IpAddr, dst: IpAddr) {
        let mut body = vec![family(&ip), 0, 0, 0];
        body.extend_from_slice(&(ifindex as i32).to_ne_bytes());
        body.extend_from_slice(&NUD_INCOMPLETE.to_ne_bytes());
        body.extend_from_slice(&[NTF_USE, 0]);
        attr(&mut body, 1, &octets(&ip));
        if self
            .request(RTM_NEWNEIGH, F_CREATE | F_REPLACE, &body, 0)
            .is_err()
        {
            // Fallback: one datagram to the discard port makes the kernel resolve.
            let bind: IpAddr = if dst.is_ipv4() {
                Ipv4Addr::UNSPECIFIED.into()
            } else {
                Ipv6Addr::UNSPECIFIED.into()
            };
            if let Ok(s) = UdpSocket::bind((bind, 0)) {
                let _ = s.set_nonblocking(true);
                let _ = s.send_to(&[], (dst, 9));
            }
        }
    }

    /// An interface's MAC, MTU, name and addresses.
    pub fn link(&mut self, ifindex: u32) -> Result<LinkInfo, NeighError> {
        let mut body = vec![0u8, 0, 0, 0];
        body.extend_from_slice(&(ifindex as i32).to_ne_bytes());
        body.extend_from_slice(&[0; 8]);
        let answers = self.request(RTM_GETLINK, 0, &body, RTM_NEWLINK)?;
        let a = answers.first().ok_or(NeighError::Malformed)?;
        let mut info = LinkInfo {
            ifindex,
            name: String::new(),
            mac: [0; 6],
            mtu: 0,
            addrs: Vec::new(),
        };
        for (ty, d) in attrs(a.get(16..).ok_or(NeighError::Malformed)?) {
            match ty {
                1 => {
                    if let Ok(m) = <[u8; 6]>::try_from(d) {
                        info.mac = m;
                    }
                }
                3 => info.name = String::from_utf8_lossy(d).trim_end_matches('\0').to_owned(),
                4 => info.mtu = u32_of(d).ok_or(NeighError::Malformed)?,
                _ => {}
            }
        }
        let body = vec![0u8; 8];
        for a in self.request(RTM_GETADDR, F_DUMP, &body, RTM_NEWADDR)? {
            if a.len() < 8 || u32_of(&a[4..]) != Some(ifindex) {
                continue;
            }
            let fam = a[0];
            let mut addr = None;
            for (ty, d) in attrs(&a[8..]) {
                // IFA_LOCAL wins over IFA_ADDRESS (they differ on point-to-point links).
                if ty == 2 || (ty == 1 && addr.is_none()) {
                    addr = ip_of(fam, d);
                }
            }
            info.addrs.extend(addr);
        }
        Ok(info)
    }

    /// The number of receive queues of an interface (`IFLA_NUM_RX_QUEUES`; read over netlink,
    /// so it answers for the calling thread's namespace, which sysfs may not).
    pub fn rx_queues(&mut self, ifindex: u32) -> Result<u32, NeighError> {
        let mut body = vec![0u8, 0, 0, 0];
        body.extend_from_slice(&(ifindex as i32).to_ne_bytes());
        body.extend_from_slice(&[0; 8]);
        let answers = self.request(RTM_GETLINK, 0, &body, RTM_NEWLINK)?;
        let a = answers.first().ok_or(NeighError::Malformed)?;
        attrs(a.get(16..).ok_or(NeighError::Malformed)?)
            .find(|&(ty, _)| ty == IFLA_NUM_RX_QUEUES)
            .and_then(|(_, d)| u32_of(d))
            .ok_or(NeighError::Malformed)
    }

    /// Resolves the next hop towards `dst` (see the module docs).
    pub fn resolve(&mut self, dst: IpAddr) -> Result<Resolution, NeighError> {
        let Some(route) = self.route(dst)? else {
            return Ok(Resolution::NoRoute);
        };
        let hop = route.gateway.unwrap_or(dst);
        let link = self.link(route.ifindex)?;
        let src_ip = route.src.or_else(|| {
            link.addrs
                .iter()
                .copied()
                .find(|a| a.is_ipv4() == dst.is_ipv4())
        });
        let ready = |dst_mac| {
            Resolution::Ready(NextHop {
                ifindex: route.ifindex,
                src_mac: link.mac,
                dst_mac,
                src_ip,
                gateway: route.gateway,
                mtu: link.mtu,
            })
        };
        match self.neighbour(route.ifindex, hop)? {
            Some(Neighbour {
                state,
                mac: Some(mac),
            }) if state & NUD_VALID != 0 => Ok(ready(mac)),
            Some(Neighbour { state, .. }) if state & NUD_NOARP != 0 => Ok(ready([0; 6])),
            Some(Neighbour { state, .. }) if state & NUD_FAILED != 0 => {
                self.trigger(route.ifindex, hop, dst);
                Ok(Resolution::Failed)
            }
            Some(Neighbour { state, .. }) if state & NUD_INCOMPLETE != 0 => Ok(Resolution::Pending),
            _ => {
                self.trigger(route.ifindex, hop, dst);
                Ok(Resolution::Pending)
            }
        }
    }
}
