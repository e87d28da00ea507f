//! Endpoint syntax. UDP: `udp://IP:port`, `udp4://…`, `udp6://[v6]:port`, `IP:port`,
//! `[v6]:port`, `host:port`; the port defaults to 6363 (the NDN UDP port). A local
//! forwarder's Unix stream socket: `unix://PATH` (`unix:///run/nfd/nfd.sock`); `unix://` alone
//! is [`DEFAULT_FORWARDER_SOCKET`].

use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::str::FromStr;

/// The NDN UDP port.
pub const NDN_PORT: u16 = 6363;

/// The application socket NFD (and ndnd, configured so) listen on.
pub const DEFAULT_FORWARDER_SOCKET: &str = "/run/nfd/nfd.sock";

/// Where the tools send packets: a UDP address (a forwarder or a producer), or a local
/// forwarder's Unix stream socket (its application face).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// A UDP address.
    Udp(SocketAddr),
    /// The path of a forwarder's Unix stream socket.
    Unix(PathBuf),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Udp(a) => write!(f, "udp://{a}"),
            Self::Unix(p) => write!(f, "unix://{}", p.display()),
        }
    }
}

impl From<SocketAddr> for Endpoint {
    fn from(a: SocketAddr) -> Self {
        Self::Udp(a)
    }
}

impl FromStr for Endpoint {
    type Err = AddrError;

    fn from_str(s: &str) -> Result<Self, AddrError> {
        parse_endpoint(s)
    }
}

/// Parses `unix://PATH` or any UDP form (see the module docs). Usable as a clap
/// `value_parser`.
pub fn parse_endpoint(input: &str) -> Result<Endpoint, AddrError> {
    if input.starts_with("unix:") {
        parse_unix_endpoint(input).map(Endpoint::Unix)
    } else {
        parse_udp_endpoint(input).map(Endpoint::Udp)
    }
}

/// Parses `unix://PATH` (`unix://` alone: [`DEFAULT_FORWARDER_SOCKET`]). Usable as a clap
/// `value_parser`.
pub fn parse_unix_endpoint(input: &str) -> Result<PathBuf, AddrError> {
    let Some(path) = input.strip_prefix("unix://") else {
        return Err(AddrError {
            input: input.to_owned(),
            reason: "expected unix://PATH (e.g. unix:///run/nfd/nfd.sock)".to_owned(),
        });
    };
    Ok(PathBuf::from(if path.is_empty() {
        DEFAULT_FORWARDER_SOCKET
    } else {
        path
    }))
}

/// Why an endpoint string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid endpoint {input:?}: {reason}")]
pub struct AddrError {
    /// The string given.
    pub input: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Parses a UDP endpoint (see the module docs); a host name is resolved, preferring its first
/// address. Usable as a clap `value_parser`.
pub fn parse_udp_endpoint(input: &str) -> Result<SocketAddr, AddrError> {
    let err = |reason: &str| AddrError {
        input: input.to_owned(),
        reason: reason.to_owned(),
    };
    let rest = ["udp://", "udp4://", "udp6://"]
        .iter()
        .find_map(|s| input.strip_prefix(s))
        .unwrap_or(input)
        .trim_end_matches('/');
    if rest.is_empty() {
        return Err(err("empty address"));
    }
    if let Ok(a) = rest.parse::<SocketAddr>() {
        return Ok(a);
    }
    // No port: a bare IPv4/IPv6 address, bracketed or not.
    let bare = rest
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(rest);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, NDN_PORT));
    }
    let with_port = if rest.contains(':') {
        rest.to_owned()
    } else {
        format!("{rest}:{NDN_PORT}")
    };
    let mut addrs = with_port
        .to_socket_addrs()
        .map_err(|e| err(&format!("cannot resolve: {e}")))?;
    addrs.next().ok_or_else(|| err("host has no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let v4: SocketAddr = "127.0.0.1:6363".parse().unwrap();
        let v6: SocketAddr = "[::1]:7000".parse().unwrap();
        assert_eq!(parse_udp_endpoint("udp://127.0.0.1:6363").unwrap(), v4);
        assert_eq!(parse_udp_endpoint("udp4://127.0.0.1").unwrap(), v4);
        assert_eq!(parse_udp_endpoint("127.0.0.1").unwrap(), v4);
        assert_eq!(parse_udp_endpoint("udp6://[::1]:7000").unwrap(), v6);
        assert_eq!(parse_udp_endpoint("[::1]:7000").unwrap(), v6);
        assert_eq!(
            parse_udp_endpoint("[::1]").unwrap(),
            "[::1]:6363".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(parse_udp_endpoint("localhost:9").unwrap().port(), 9);
        assert!(parse_udp_endpoint("udp://").is_err());
        assert!(parse_udp_endpoint("udp://127.0.0.1:99999").is_err());
    }

    #[test]
    fn unix_forms() {
        let p = |s: &str| parse_endpoint(s).unwrap();
        assert_eq!(
            p("unix:///run/nfd/nfd.sock"),
            Endpoint::Unix("/run/nfd/nfd.sock".into())
        );
        assert_eq!(
            p("unix://"),
            Endpoint::Unix(DEFAULT_FORWARDER_SOCKET.into())
        );
        assert_eq!(p("unix://fw.sock"), Endpoint::Unix("fw.sock".into()));
        assert_eq!(
            p("udp://127.0.0.1"),
            Endpoint::Udp("127.0.0.1:6363".parse().unwrap())
        );
        assert!(parse_endpoint("unix:/x").is_err());
        assert!(parse_unix_endpoint("udp://127.0.0.1").is_err());
        for s in ["unix:///tmp/a b", "udp://[::1]:7000"] {
            assert_eq!(p(s).to_string(), s);
        }
    }
}
