//! The link MTU a UDP face fragments to: fixed, or the kernel's path MTU towards each peer.
//!
//! With [`LinkMtu::Auto`] (the default) a face asks the kernel for the path MTU of every peer it
//! sends to (a throwaway UDP socket connected to the peer, `IP_MTU`/`IPV6_MTU`): the MTU of the
//! route's interface, lowered by any ICMP "packet too big" the kernel has learned. So `ndx put`
//! on a 9000-MTU link sends 8800-byte segments whole and on a 1500-MTU link in NDNLPv2
//! fragments, without being told, and a producer serving peers behind links of different MTUs
//! fragments for each one. The answer is cached per peer for [`PATH_MTU_TTL`], so a learned
//! lower path MTU is picked up within that time.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::str::FromStr;
use std::time::{Duration, Instant};

use ndx_codec::Fragmenter;

/// The MTU assumed when the path MTU cannot be read (no route to the peer yet, say).
pub const DEFAULT_MTU: usize = 1500;

/// How long a peer's path MTU is trusted before it is read again.
pub const PATH_MTU_TTL: Duration = Duration::from_secs(10);

/// Peers whose path MTU a face remembers; past this the cache starts over (a producer
/// answering very many consumers reads each one's path MTU again, about 10 µs).
const MAX_PEERS: usize = 4096;

/// The IP MTU a UDP face sends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LinkMtu {
    /// The kernel's path MTU towards each peer (`--mtu auto`, the default).
    #[default]
    Auto,
    /// This MTU, in bytes, towards every peer (`--mtu 9000`).
    Fixed(usize),
}

impl FromStr for LinkMtu {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        match s.parse::<usize>() {
            Ok(n) if n > 0 => Ok(Self::Fixed(n)),
            _ => Err(format!(
                "invalid MTU `{s}`: expected `auto` or a number of bytes (such as 1500 or 9000)"
            )),
        }
    }
}

impl fmt::Display for LinkMtu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Fixed(n) => write!(f, "{n}"),
        }
    }
}

/// Reads the kernel's path MTU towards `peer`: the IP MTU, headers included.
pub fn path_mtu(peer: SocketAddr) -> io::Result<usize> {
    let sock = UdpSocket::bind(crate::face::any_addr_for(peer))?;
    sock.connect(peer)?;
    let mtu = match peer {
        SocketAddr::V4(_) => rustix::net::sockopt::ip_mtu(&sock)?,
        SocketAddr::V6(_) => rustix::net::sockopt::ipv6_mtu(&sock)?,
    };
    Ok(mtu as usize)
}

/// The fragmenters of a face with [`LinkMtu::Auto`]: one per peer, from its path MTU.
#[derive(Debug)]
pub(crate) struct PathMtus {
    /// IP and UDP header bytes of the face's socket family.
    overhead: usize,
    /// The largest datagram the face sends.
    max_datagram: usize,
    peers: HashMap<SocketAddr, (Fragmenter, Instant)>,
}

impl PathMtus {
    pub(crate) fn new(overhead: usize, max_datagram: usize) -> Self {
        Self {
            overhead,
            max_datagram,
            peers: HashMap::new(),
        }
    }

    /// The fragmenter for `peer`, reading its path MTU when unknown or older than
    /// [`PATH_MTU_TTL`] ([`DEFAULT_MTU`] when the kernel cannot tell).
    pub(crate) fn fragmenter(&mut self, peer: SocketAddr, now: Instant) -> Fragmenter {
        if let Some((f, at)) = self.peers.get(&peer)
            && now.duration_since(*at) < PATH_MTU_TTL
        {
            return *f;
        }
        let mtu = path_mtu(peer).unwrap_or(DEFAULT_MTU);
        let f = self.for_mtu(mtu);
        if self.peers.len() >= MAX_PEERS {
            self.peers.clear();
        }
        self.peers.insert(peer, (f, now));
        f
    }

    /// The fragmenter for an IP MTU of `mtu` bytes (the smallest one the codec accepts when a
    /// kernel reports something absurdly small).
    fn for_mtu(&self, mtu: usize) -> Fragmenter {
        let payload = mtu
            .saturating_sub(self.overhead)
            .clamp(Fragmenter::MIN_MTU, self.max_datagram);
        Fragmenter::new(payload).expect("payload clamped to at least Fragmenter::MIN_MTU")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_auto_and_numbers_and_rejects_the_rest() {
        assert_eq!("auto".parse(), Ok(LinkMtu::Auto));
        assert_eq!("AUTO".parse(), Ok(LinkMtu::Auto));
        assert_eq!("9000".parse(), Ok(LinkMtu::Fixed(9000)));
        for bad in ["", "0", "-1", "1.5k", "jumbo"] {
            let err = bad.parse::<LinkMtu>().unwrap_err();
            assert!(err.contains("expected `auto` or a number"), "{bad}: {err}");
        }
        assert_eq!(LinkMtu::Auto.to_string(), "auto");
        assert_eq!(LinkMtu::Fixed(1500).to_string(), "1500");
    }

    #[test]
    fn loopback_path_mtu_is_the_loopback_devices() {
        let lo = std::fs::read_to_string("/sys/class/net/lo/mtu")
            .expect("reading lo's MTU")
            .trim()
            .parse::<usize>()
            .unwrap();
        // An IPv4 packet cannot be longer than 65,535 bytes, whatever the device says (IPv6
        // reports the device's MTU).
        assert_eq!(
            path_mtu("127.0.0.1:6363".parse().unwrap()).unwrap(),
            lo.min(65_535)
        );
        assert_eq!(path_mtu("[::1]:6363".parse().unwrap()).unwrap(), lo);
        // A dual-stack producer sees IPv4 consumers as IPv4-mapped addresses.
        assert_eq!(
            path_mtu("[::ffff:127.0.0.1]:6363".parse().unwrap()).unwrap(),
            lo.min(65_535)
        );
    }

    #[test]
    fn the_fragmenter_follows_the_path_mtu_minus_headers_and_is_cached() {
        let mut p = PathMtus::new(28, 65_507);
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let t0 = Instant::now();
        let lo = path_mtu(peer).unwrap();
        assert_eq!(p.fragmenter(peer, t0).mtu(), (lo - 28).min(65_507));
        assert_eq!(p.peers.len(), 1);
        // A stale entry is read again; a fresh one is not (its stamp stays).
        p.peers.insert(peer, (p.for_mtu(1500), t0));
        assert_eq!(p.fragmenter(peer, t0).mtu(), 1472);
        let later = t0 + PATH_MTU_TTL;
        assert_eq!(p.fragmenter(peer, later).mtu(), (lo - 28).min(65_507));
        assert_eq!(p.peers[&peer].1, later);
        // Absurd MTUs are clamped to what the codec can fragment to.
        assert_eq!(p.for_mtu(0).mtu(), Fragmenter::MIN_MTU);
        assert_eq!(p.for_mtu(1 << 20).mtu(), 65_507);
    }
}
