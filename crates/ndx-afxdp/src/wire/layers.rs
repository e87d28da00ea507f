//! The one link-layer walker: Ethernet (802.1Q/802.1ad tags), Linux cooked (SLL, SLL2), BSD
//! loopback (NULL) and raw IP link headers, then IPv4 (with options) or IPv6 (with extension
//! headers), then UDP or bare NDN (EtherType 0x8624). [`walk`] returns the [`Layers`] it found
//! or why it stopped ([`Stop`]: a malformed header with its offset, or not NDN-carrying traffic).
//!
//! Two callers, two sets of [`Rules`] over the same code:
//! - the router's [`parse`](super::parse) walks with [`Rules::STRICT`] (one 802.1Q tag, no
//!   IPv6 extension headers, no fragments at all, lengths consistent and within the packet);
//! - `ndx dissect` walks captures with [`Rules::LENIENT`] (any number of tags, extension
//!   headers, first fragments, lengths clamped to what was captured and reported as
//!   [`Layers::truncated`]).
//!
//! Never panics on any input: every read is bounds-checked.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::ops::Range;

use super::{ETH_LEN, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_NDN, ETHERTYPE_VLAN, IPV4_LEN};
use super::{IPV6_LEN, UDP_LEN};

/// EtherType of an 802.1ad (QinQ) service tag.
pub const ETHERTYPE_QINQ: u16 = 0x88a8;

/// The link header a frame starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// Ethernet II, possibly VLAN-tagged (LINKTYPE_ETHERNET).
    Ethernet,
    /// Linux cooked capture v1, 16 bytes (LINKTYPE_LINUX_SLL).
    LinuxSll,
    /// Linux cooked capture v2, 20 bytes (LINKTYPE_LINUX_SLL2).
    LinuxSll2,
    /// BSD loopback: a 4-byte address family in the capturing host's byte order (LINKTYPE_NULL).
    Null,
    /// Raw IPv4 or IPv6, no link header (LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6).
    Raw,
}

/// What a walk accepts beyond the common core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// How many VLAN tags are stepped over (a further tag's EtherType is "other traffic").
    pub max_vlan_tags: usize,
    /// Whether an 802.1ad tag (0x88a8) counts as a VLAN tag (0x8100 always does).
    pub qinq: bool,
    /// Whether IPv6 hop-by-hop, routing, destination-options and fragment headers are
    /// stepped over (at most eight); otherwise the next header must be UDP.
    pub ipv6_extension_headers: bool,
    /// Whether a first fragment (offset 0, more fragments) is walked; later fragments never are.
    pub first_fragments: bool,
    /// Whether the IP and UDP lengths must agree and the IP packet must end within the packet's
    /// length ([`Skip::Inconsistent`], [`Skip::CutShort`]); otherwise they are clamped and a
    /// payload that runs past the given bytes is reported as [`Layers::truncated`].
    pub whole: bool,
}

impl Rules {
    /// The router's rules: bit for bit what [`parse`](super::parse) has always accepted.
    pub const STRICT: Rules = Rules {
        max_vlan_tags: 1,
        qinq: false,
        ipv6_extension_headers: false,
        first_fragments: false,
        whole: true,
    };
    /// Captures' rules (`ndx dissect`): read as much as can be read.
    pub const LENIENT: Rules = Rules {
        max_vlan_tags: usize::MAX,
        qinq: true,
        ipv6_extension_headers: true,
        first_fragments: true,
        whole: false,
    };
}

/// Ethernet addresses of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Macs {
    /// Destination MAC address.
    pub dst: [u8; 6],
    /// Source MAC address.
    pub src: [u8; 6],
}

/// What carries the NDN bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// Bare Ethernet (or a cooked link header), EtherType 0x8624.
    Ether,
    /// A UDP datagram over IPv4 or IPv6 (any ports: callers filter).
    Udp {
        /// Source address and port.
        src: SocketAddr,
        /// Destination address and port.
        dst: SocketAddr,
    },
}

/// The headers [`walk`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layers {
    /// MAC addresses (Ethernet links only).
    pub macs: Option<Macs>,
    /// VLAN id of the outermost tag.
    pub vlan: Option<u16>,
    /// How many VLAN tags were stepped over.
    pub vlan_tags: usize,
    /// Offset of the network header (of the NDN bytes for [`Carrier::Ether`]).
    pub l3: usize,
    /// What carries the NDN bytes.
    pub carrier: Carrier,
    /// Where the NDN bytes are in the packet. For UDP the datagram's payload (Ethernet padding
    /// excluded); for bare Ethernet the rest of the packet, padding included. May extend past
    /// the bytes given (a first segment, or a capture cut by its snap length).
    pub payload: Range<usize>,
    /// The bytes given end before the payload does.
    pub truncated: bool,
}

/// A header, as named in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// Ethernet II.
    Ethernet,
    /// An 802.1Q/802.1ad tag.
    Vlan,
    /// Linux cooked v1.
    Sll,
    /// Linux cooked v2.
    Sll2,
    /// BSD loopback.
    Loopback,
    /// IPv4 (options included).
    Ipv4,
    /// IPv6 (extension headers included).
    Ipv6,
    /// UDP.
    Udp,
}

impl std::fmt::Display for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Header::Ethernet => "Ethernet",
            Header::Vlan => "VLAN",
            Header::Sll => "SLL",
            Header::Sll2 => "SLL2",
            Header::Loopback => "loopback",
            Header::Ipv4 => "IPv4",
            Header::Ipv6 => "IPv6",
            Header::Udp => "UDP",
        })
    }
}

/// A header that is cut off or cannot be right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed {header} header at frame offset {offset}")]
pub struct Malformed {
    /// Which header.
    pub header: Header,
    /// Where it starts in the frame.
    pub offset: usize,
}

/// Why a well-formed frame carries no NDN bytes (as far as the rules go).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Skip {
    /// The link header names a family other than IPv4/IPv6 (loopback, raw IP).
    #[error("not IP")]
    Family,
    /// EtherType other than NDN, IPv4, IPv6 (or a VLAN tag beyond the rules' limit).
    #[error("EtherType {0:#06x}")]
    EtherType(u16),
    /// IP protocol / next header other than UDP.
    #[error("IP protocol {0}")]
    Protocol(u8),
    /// An IP fragment the rules do not walk.
    #[error("IP fragment")]
    Fragment,
    /// Lengths that disagree (strict rules only).
    #[error("inconsistent {0} length")]
    Inconsistent(Header),
    /// The IP packet ends past the packet's length (strict rules only).
    #[error("cut short")]
    CutShort,
}

/// Why [`walk`] found no NDN bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Stop {
    /// A malformed header: an error to report.
    #[error(transparent)]
    Malformed(#[from] Malformed),
    /// Other traffic: nothing to report.
    #[error("not NDN: {0}")]
    Skipped(#[from] Skip),
}

#[inline(always)]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

#[inline(always)]
fn mal(header: Header, offset: usize) -> Stop {
    Stop::Malformed(Malformed { header, offset })
}

/// Walks the headers of `bytes`, a frame starting with a `link` header whose whole length is
/// `wire_len` (the bytes may be only its first segment, or a capture cut by the snap length;
/// a `wire_len` below `bytes.len()` counts as `bytes.len()`).
pub fn walk(bytes: &[u8], wire_len: usize, link: Link, rules: &Rules) -> Result<Layers, Stop> {
    walk_with(bytes, wire_len, link, rules)
}

/// [`walk`], inlined so that constant rules fold away (the router's per-packet path).
#[inline(always)]
pub(super) fn walk_with(
    bytes: &[u8],
    wire_len: usize,
    link: Link,
    rules: &Rules,
) -> Result<Layers, Stop> {
    let mut macs = None;
    let mut vlan = None;
    let mut vlan_tags = 0;
    let (ethertype, l3) = match link {
        Link::Ethernet => {
            let mut et = be16(bytes, 12).ok_or(mal(Header::Ethernet, 0))?;
            let mut at = ETH_LEN;
            while (et == ETHERTYPE_VLAN || (rules.qinq && et == ETHERTYPE_QINQ))
                && vlan_tags < rules.max_vlan_tags
            {
                let tci = be16(bytes, at).ok_or(mal(Header::Vlan, at))?;
                et = be16(bytes, at + 2).ok_or(mal(Header::Vlan, at))?;
                if vlan_tags == 0 {
                    vlan = Some(tci & 0x0fff);
                }
                vlan_tags += 1;
                at += 4;
            }
            let m = |at: usize| -> Option<[u8; 6]> { bytes.get(at..at + 6)?.try_into().ok() };
            let (Some(dst), Some(src)) = (m(0), m(6)) else {
                return Err(mal(Header::Ethernet, 0));
            };
            macs = Some(Macs { dst, src });
            (et, at)
        }
        Link::LinuxSll => (be16(bytes, 14).ok_or(mal(Header::Sll, 0))?, 16),
        Link::LinuxSll2 => (be16(bytes, 0).ok_or(mal(Header::Sll2, 0))?, 20),
        Link::Null => {
            let family: [u8; 4] = bytes
                .get(..4)
                .and_then(|f| f.try_into().ok())
                .ok_or(mal(Header::Loopback, 0))?;
            let family = u32::from_le_bytes(family);
            // The capturing host's byte order: a small number either way.
            let family = if family > 0xffff {
                family.swap_bytes()
            } else {
                family
            };
            let et = match family {
                2 => ETHERTYPE_IPV4,
                10 | 24 | 28 | 30 => ETHERTYPE_IPV6,
                _ => return Err(Skip::Family.into()),
            };
            (et, 4)
        }
        Link::Raw => {
            let et = match bytes.first().map(|b| b >> 4) {
                Some(4) => ETHERTYPE_IPV4,
                Some(6) => ETHERTYPE_IPV6,
                _ => return Err(Skip::Family.into()),
            };
            (et, 0)
        }
    };
    let wire_len = wire_len.max(bytes.len());
    let (carrier, payload, truncated) = match ethertype {
        ETHERTYPE_NDN => (Carrier::Ether, l3..wire_len.max(l3), wire_len > bytes.len()),
        ETHERTYPE_IPV4 => ipv4(bytes, l3, wire_len, rules)?,
        ETHERTYPE_IPV6 => ipv6(bytes, l3, wire_len, rules)?,
        other => return Err(Skip::EtherType(other).into()),
    };
    Ok(Layers {
        macs,
        vlan,
        vlan_tags,
        l3,
        carrier,
        payload,
        truncated,
    })
}

type Found = (Carrier, Range<usize>, bool);

#[inline(always)]
fn ipv4(b: &[u8], at: usize, wire_len: usize, rules: &Rules) -> Result<Found, Stop> {
    let ip = b.get(at..at + IPV4_LEN).ok_or(mal(Header::Ipv4, at))?;
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    if ip[0] >> 4 != 4 || ihl < IPV4_LEN {
        return Err(mal(Header::Ipv4, at));
    }
    let tot = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let frag = u16::from_be_bytes([ip[6], ip[7]]);
    if ip[9] != 17 {
        return Err(Skip::Protocol(ip[9]).into());
    }
    // Offset non-zero: a later fragment; MF set too: any fragment.
    let fragment_mask = if rules.first_fragments {
        0x1fff
    } else {
        0x3fff
    };
    if frag & fragment_mask != 0 {
        return Err(Skip::Fragment.into());
    }
    if rules.whole {
        if tot < ihl + UDP_LEN {
            return Err(Skip::Inconsistent(Header::Ipv4).into());
        }
        if at + tot > wire_len {
            return Err(Skip::CutShort.into());
        }
    }
    let s = IpAddr::V4(Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]));
    let d = IpAddr::V4(Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]));
    udp(b, at + ihl, (at + tot).max(at + ihl), s, d, rules)
}

#[inline(always)]
fn ipv6(b: &[u8], at: usize, wire_len: usize, rules: &Rules) -> Result<Found, Stop> {
    let ip = b.get(at..at + IPV6_LEN).ok_or(mal(Header::Ipv6, at))?;
    if ip[0] >> 4 != 6 {
        return Err(mal(Header::Ipv6, at));
    }
    let end = at + IPV6_LEN + usize::from(u16::from_be_bytes([ip[4], ip[5]]));
    let mut next = ip[6];
    let mut h = at + IPV6_LEN;
    if rules.ipv6_extension_headers {
        for _ in 0..8 {
            match next {
                // Hop-by-hop, routing, destination options: length in 8-byte units past the first 8.
                0 | 43 | 60 => {
                    let n = *b.get(h).ok_or(mal(Header::Ipv6, h))?;
                    let len = (usize::from(*b.get(h + 1).ok_or(mal(Header::Ipv6, h))?) + 1) * 8;
                    next = n;
                    h += len;
                }
                44 => {
                    let n = *b.get(h).ok_or(mal(Header::Ipv6, h))?;
                    let off = be16(b, h + 2).ok_or(mal(Header::Ipv6, h))?;
                    if off & 0xfff8 != 0 || !rules.first_fragments {
                        return Err(Skip::Fragment.into());
                    }
                    next = n;
                    h += 8;
                }
                _ => break,
            }
        }
    }
    if next != 17 {
        return Err(Skip::Protocol(next).into());
    }
    if rules.whole && end > wire_len {
        return Err(Skip::CutShort.into());
    }
    let s: [u8; 16] = ip[8..24].try_into().unwrap_or_default();
    let d: [u8; 16] = ip[24..40].try_into().unwrap_or_default();
    let (s, d) = (IpAddr::V6(Ipv6Addr::from(s)), IpAddr::V6(Ipv6Addr::from(d)));
    udp(b, h, end, s, d, rules)
}

#[inline(always)]
fn udp(
    b: &[u8],
    at: usize,
    ip_end: usize,
    s: IpAddr,
    d: IpAddr,
    rules: &Rules,
) -> Result<Found, Stop> {
    let (Some(sport), Some(dport), Some(ulen)) = (be16(b, at), be16(b, at + 2), be16(b, at + 4))
    else {
        return Err(mal(Header::Udp, at));
    };
    let ulen = usize::from(ulen);
    if ulen < UDP_LEN {
        return Err(mal(Header::Udp, at));
    }
    if rules.whole && at + ulen > ip_end {
        return Err(Skip::Inconsistent(Header::Udp).into());
    }
    // Lenient: the shorter of the UDP and IP lengths (but never before the UDP header's end).
    let end = (at + ulen).min(ip_end.max(at + UDP_LEN));
    Ok((
        Carrier::Udp {
            src: SocketAddr::new(s, sport),
            dst: SocketAddr::new(d, dport),
        },
        at + UDP_LEN..end,
        end > b.len(),
    ))
}
