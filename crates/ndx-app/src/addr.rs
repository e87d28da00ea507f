//! UDP endpoint syntax: `udp://IP:port`, `udp4://…`, `udp6://[v6]:port`, `IP:port`, `[v6]:port`,
//! `host:port`; the port defaults to 6363 (the NDN UDP port).

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// The NDN UDP port.
pub const NDN_PORT: u16 = 6363;

/// Why an endpoint string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid UDP endpoint {input:?}: {reason}")]
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
}
