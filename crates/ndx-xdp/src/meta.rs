//! The metadata the program writes in front of every frame it redirects, and the limits of
//! the XSKMAP layout (the data-path contract, described in `crates/ndx-xdp/bpf/README.md`).

/// Receive queues addressed by the XSKMAP.
pub const MAX_QUEUES: usize = 64;
/// Shards addressed by the XSKMAP (entry `queue * MAX_SHARDS + shard`).
pub const MAX_SHARDS: usize = 64;
/// Largest indirection table.
pub const MAX_TABLE: usize = 65536;
/// UDP ports the program can match.
pub const MAX_PORTS: usize = 8;
/// Size of [`XdpMeta`] on the wire.
pub const META_LEN: usize = 16;
/// `magic` of valid metadata.
pub const META_MAGIC: u16 = 0x4e44;
/// Longest name (TLV-VALUE bytes) the program hashes; longer names go by source.
pub const MAX_NAME_BYTES: usize = 2048;
/// Most name components the program walks; longer names go by source.
pub const MAX_COMPONENTS: usize = 128;

/// What the frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Unparseable NDN: sent by source; user space drops it with a reason.
    Malformed = 0,
    /// An Interest (bare or in an LpPacket).
    Interest = 1,
    /// A Data.
    Data = 2,
    /// A Nack (LpPacket with a Nack header around an Interest).
    Nack = 3,
    /// A piece of a fragmented packet (FragCount > 1).
    Fragment = 4,
    /// An LpPacket without a Fragment (IDLE, acks only).
    LpOther = 5,
}

/// How the shard was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum How {
    /// Byte 0 of our 6-byte PIT token.
    Token = 1,
    /// The dispatch hash of the name.
    Name = 2,
    /// The hash of the source address (fragments, IDLE packets, malformed packets, names
    /// too long to hash in XDP: user space re-dispatches those by name).
    Source = 3,
}

/// The encapsulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Encap {
    /// UDP over IPv4.
    Udp4 = 1,
    /// UDP over IPv6.
    Udp6 = 2,
    /// Ethernet, EtherType 0x8624.
    Ether = 3,
}

/// The 16 bytes in front of a redirected frame (host byte order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XdpMeta {
    /// Dispatch hash of the name (mode-dependent), of the source for [`How::Source`], 0 for
    /// [`How::Token`].
    pub hash: u64,
    /// The shard the frame belongs to.
    pub shard: u8,
    /// What the frame carries.
    pub kind: Kind,
    /// How the shard was chosen.
    pub how: How,
    /// The encapsulation.
    pub encap: Encap,
    /// Offset of the first NDN TLV from the start of the frame.
    pub ndn_off: u16,
}

impl XdpMeta {
    /// Parses the 16 bytes that precede the frame; `None` unless they are valid metadata
    /// (magic, known kind/how/encap). Never panics.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let b: &[u8; META_LEN] = bytes.get(..META_LEN)?.try_into().ok()?;
        if u16::from_ne_bytes([b[14], b[15]]) != META_MAGIC {
            return None;
        }
        let kind = match b[9] {
            0 => Kind::Malformed,
            1 => Kind::Interest,
            2 => Kind::Data,
            3 => Kind::Nack,
            4 => Kind::Fragment,
            5 => Kind::LpOther,
            _ => return None,
        };
        let how = match b[10] {
            1 => How::Token,
            2 => How::Name,
            3 => How::Source,
            _ => return None,
        };
        let encap = match b[11] {
            1 => Encap::Udp4,
            2 => Encap::Udp6,
            3 => Encap::Ether,
            _ => return None,
        };
        let mut hash = [0; 8];
        hash.copy_from_slice(&b[..8]);
        Some(Self {
            hash: u64::from_ne_bytes(hash),
            shard: b[8],
            kind,
            how,
            encap,
            ndn_off: u16::from_ne_bytes([b[12], b[13]]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_valid_and_refuses_invalid_metadata() {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&0x1122_3344_5566_7788u64.to_ne_bytes());
        b[8] = 7;
        b[9] = 2;
        b[10] = 2;
        b[11] = 1;
        b[12..14].copy_from_slice(&42u16.to_ne_bytes());
        b[14..16].copy_from_slice(&META_MAGIC.to_ne_bytes());
        let m = XdpMeta::parse(&b).unwrap();
        assert_eq!(m.hash, 0x1122_3344_5566_7788);
        assert_eq!(
            (m.shard, m.kind, m.how, m.encap, m.ndn_off),
            (7, Kind::Data, How::Name, Encap::Udp4, 42)
        );
        let mut bad = b;
        bad[15] ^= 1;
        assert_eq!(XdpMeta::parse(&bad), None, "magic");
        let mut bad = b;
        bad[10] = 9;
        assert_eq!(XdpMeta::parse(&bad), None, "how");
        assert_eq!(XdpMeta::parse(&b[..15]), None, "short");
    }
}
