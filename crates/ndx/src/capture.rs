//! Capture files: classic pcap and pcapng readers over the file's bytes, and link-layer
//! decapsulation down to the NDN payload (EtherType 0x8624, or UDP on the NDN ports over
//! IPv4/IPv6) through the router's own header walker (`ndx_afxdp::wire::walk`, lenient rules). Zero-copy and panic-free on any input: every read is bounds-checked and every
//! malformed record is reported with its file offset.

use std::net::IpAddr;

use ndx_afxdp::wire::{self, Carrier, Link, Rules, Stop};

/// Link types (LINKTYPE_*) understood by [`decapsulate`].
pub(crate) mod linktype {
    pub(crate) const NULL: u32 = 0;
    pub(crate) const ETHERNET: u32 = 1;
    pub(crate) const RAW: u32 = 101;
    pub(crate) const LINUX_SLL: u32 = 113;
    pub(crate) const IPV4: u32 = 228;
    pub(crate) const IPV6: u32 = 229;
    pub(crate) const LINUX_SLL2: u32 = 276;
}

/// Why a capture (or one of its records) could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CaptureError {
    /// The file does not start with a pcap or pcapng magic number.
    #[error("not a pcap or pcapng file")]
    NotACapture,
    /// The file ends inside a header or record.
    #[error("truncated {what} at offset {offset}")]
    Truncated { what: &'static str, offset: usize },
    /// A length field that cannot be right.
    #[error("bad {what} ({value}) at offset {offset}")]
    Bad {
        what: &'static str,
        value: u64,
        offset: usize,
    },
}

/// One captured frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame<'a> {
    /// 1-based packet number.
    pub(crate) number: u64,
    /// Nanoseconds since the Unix epoch, when the capture says.
    pub(crate) timestamp_ns: Option<u64>,
    /// The link type of the frame's interface.
    pub(crate) link_type: u32,
    /// Captured bytes.
    pub(crate) data: &'a [u8],
    /// Length on the wire (may exceed `data.len()` when the snap length cut it).
    pub(crate) orig_len: u32,
}

/// Whether `bytes` starts like a pcap or pcapng file.
pub(crate) fn is_capture(bytes: &[u8]) -> bool {
    matches!(
        bytes.get(..4),
        Some(
            [0xd4, 0xc3, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0xc3, 0xd4]
                | [0x4d, 0x3c, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0x3c, 0x4d]
                | [0x0a, 0x0d, 0x0d, 0x0a]
        )
    )
}

fn u16_at(b: &[u8], at: usize, be: bool) -> Option<u16> {
    let x: [u8; 2] = b.get(at..at + 2)?.try_into().ok()?;
    Some(if be {
        u16::from_be_bytes(x)
    } else {
        u16::from_le_bytes(x)
    })
}

fn u32_at(b: &[u8], at: usize, be: bool) -> Option<u32> {
    let x: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(if be {
        u32::from_be_bytes(x)
    } else {
        u32::from_le_bytes(x)
    })
}

/// Largest record accepted (a sanity bound against corrupt lengths).
const MAX_RECORD: usize = 1 << 24;

/// Reads every frame of a capture. Errors in one record end the reading (the framing of a
/// capture file cannot be recovered), after the frames before it.
pub(crate) fn frames(bytes: &[u8]) -> (Vec<Frame<'_>>, Option<CaptureError>) {
    let mut out = Vec::new();
    let err = match bytes.get(..4) {
        Some([0x0a, 0x0d, 0x0d, 0x0a]) => pcapng(bytes, &mut out).err(),
        _ if is_capture(bytes) => pcap(bytes, &mut out).err(),
        _ => Some(CaptureError::NotACapture),
    };
    (out, err)
}

fn pcap<'a>(b: &'a [u8], out: &mut Vec<Frame<'a>>) -> Result<(), CaptureError> {
    let (be, nanos) = match b.get(..4) {
        Some([0xd4, 0xc3, 0xb2, 0xa1]) => (false, false),
        Some([0xa1, 0xb2, 0xc3, 0xd4]) => (true, false),
        Some([0x4d, 0x3c, 0xb2, 0xa1]) => (false, true),
        Some([0xa1, 0xb2, 0x3c, 0x4d]) => (true, true),
        _ => return Err(CaptureError::NotACapture),
    };
    let link_type = u32_at(b, 20, be).ok_or(CaptureError::Truncated {
        what: "pcap file header",
        offset: 0,
    })? & 0x0FFF_FFFF;
    let mut at = 24;
    let mut number = 0;
    while at < b.len() {
        let trunc = CaptureError::Truncated {
            what: "pcap record header",
            offset: at,
        };
        let secs = u32_at(b, at, be).ok_or(trunc.clone())?;
        let frac = u32_at(b, at + 4, be).ok_or(trunc.clone())?;
        let caplen = u32_at(b, at + 8, be).ok_or(trunc.clone())? as usize;
        let orig_len = u32_at(b, at + 12, be).ok_or(trunc)?;
        if caplen > MAX_RECORD {
            return Err(CaptureError::Bad {
                what: "captured length",
                value: caplen as u64,
                offset: at + 8,
            });
        }
        let data = b
            .get(at + 16..at + 16 + caplen)
            .ok_or(CaptureError::Truncated {
                what: "pcap record",
                offset: at,
            })?;
        number += 1;
        let frac_ns = if nanos {
            u64::from(frac)
        } else {
            u64::from(frac) * 1000
        };
        out.push(Frame {
            number,
            timestamp_ns: Some(u64::from(secs) * 1_000_000_000 + frac_ns),
            link_type,
            data,
            orig_len,
        });
        at += 16 + caplen;
    }
    Ok(())
}

/// An interface of a pcapng section: link type and timestamp resolution (ns per unit).
#[derive(Debug, Clone, Copy)]
struct Interface {
    link_type: u32,
    ns_per_unit: Option<u64>,
}

fn pcapng<'a>(b: &'a [u8], out: &mut Vec<Frame<'a>>) -> Result<(), CaptureError> {
    let mut at = 0;
    let mut be = false;
    let mut ifaces: Vec<Interface> = Vec::new();
    let mut number = 0;
    while at < b.len() {
        let trunc = CaptureError::Truncated {
            what: "pcapng block",
            offset: at,
        };
        let raw_type = b.get(at..at + 4).ok_or(trunc.clone())?;
        if raw_type == [0x0a, 0x0d, 0x0d, 0x0a] {
            // Section Header Block: its byte-order magic decides the section's endianness.
            be = match b.get(at + 8..at + 12) {
                Some([0x1a, 0x2b, 0x3c, 0x4d]) => true,
                Some([0x4d, 0x3c, 0x2b, 0x1a]) => false,
                _ => return Err(trunc),
            };
            ifaces.clear();
        }
        let block_type = u32_at(b, at, be).ok_or(trunc.clone())?;
        let len = u32_at(b, at + 4, be).ok_or(trunc.clone())? as usize;
        if len < 12 || !len.is_multiple_of(4) || len > MAX_RECORD {
            return Err(CaptureError::Bad {
                what: "block length",
                value: len as u64,
                offset: at + 4,
            });
        }
        let block = b.get(at..at + len).ok_or(trunc)?;
        if u32_at(block, len - 4, be) != Some(len as u32) {
            return Err(CaptureError::Bad {
                what: "trailing block length",
                value: u64::from(u32_at(block, len - 4, be).unwrap_or(0)),
                offset: at + len - 4,
            });
        }
        let body = &block[8..len - 4];
        match block_type {
            1 => ifaces.push(interface(body, be)),
            6 => {
                // Enhanced Packet Block.
                let bad = |what| CaptureError::Truncated { what, offset: at };
                let iface = u32_at(body, 0, be).ok_or(bad("enhanced packet block"))? as usize;
                let ts = (u64::from(u32_at(body, 4, be).ok_or(bad("enhanced packet block"))?)
                    << 32)
                    | u64::from(u32_at(body, 8, be).ok_or(bad("enhanced packet block"))?);
                let caplen = u32_at(body, 12, be).ok_or(bad("enhanced packet block"))? as usize;
                let orig_len = u32_at(body, 16, be).ok_or(bad("enhanced packet block"))?;
                let data = body
                    .get(20..20 + caplen)
                    .ok_or(bad("enhanced packet data"))?;
                let info = ifaces.get(iface).copied().ok_or(CaptureError::Bad {
                    what: "interface id",
                    value: iface as u64,
                    offset: at + 8,
                })?;
                number += 1;
                out.push(Frame {
                    number,
                    timestamp_ns: info.ns_per_unit.map(|n| ts.saturating_mul(n)),
                    link_type: info.link_type,
                    data,
                    orig_len,
                });
            }
            3 => {
                // Simple Packet Block: interface 0, no timestamp.
                let orig_len = u32_at(body, 0, be).unwrap_or(0);
                let info = ifaces.first().copied().ok_or(CaptureError::Bad {
                    what: "interface id",
                    value: 0,
                    offset: at + 8,
                })?;
                let data = body.get(4..).unwrap_or(&[]);
                let data = data
                    .get(..(orig_len as usize).min(data.len()))
                    .unwrap_or(data);
                number += 1;
                out.push(Frame {
                    number,
                    timestamp_ns: None,
                    link_type: info.link_type,
                    data,
                    orig_len,
                });
            }
            _ => {} // Name resolution, statistics, custom blocks...: skipped.
        }
        at += len;
    }
    Ok(())
}

fn interface(body: &[u8], be: bool) -> Interface {
    let link_type = u32::from(u16_at(body, 0, be).unwrap_or(0));
    let mut ns_per_unit = Some(1_000); // default resolution: microseconds
    let mut at = 8;
    while let (Some(code), Some(len)) = (u16_at(body, at, be), u16_at(body, at + 2, be)) {
        if code == 0 {
            break;
        }
        if code == 9
            && len == 1
            && let Some(&r) = body.get(at + 4)
        {
            // if_tsresol: 10^-r or 2^-r seconds.
            ns_per_unit = if r & 0x80 == 0 {
                10u64
                    .checked_pow(9u32.saturating_sub(u32::from(r)))
                    .filter(|_| r <= 9)
            } else {
                None
            };
        }
        at += 4 + usize::from(len).div_ceil(4) * 4;
    }
    Interface {
        link_type,
        ns_per_unit,
    }
}

/// How an NDN payload was carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Encap {
    /// NDN over UDP.
    Udp {
        src: (IpAddr, u16),
        dst: (IpAddr, u16),
    },
    /// NDN directly over Ethernet (EtherType 0x8624).
    Ethernet { src: [u8; 6], dst: [u8; 6] },
}

impl std::fmt::Display for Encap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mac = |m: &[u8; 6]| {
            m.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":")
        };
        match self {
            Encap::Udp { src, dst } => {
                let ep = |(ip, port): &(IpAddr, u16)| match ip {
                    IpAddr::V4(a) => format!("{a}:{port}"),
                    IpAddr::V6(a) => format!("[{a}]:{port}"),
                };
                write!(f, "udp {} > {}", ep(src), ep(dst))
            }
            Encap::Ethernet { src, dst } => write!(f, "ether {} > {}", mac(src), mac(dst)),
        }
    }
}

/// The NDN payload of a frame.
#[derive(Debug, Clone)]
pub(crate) struct Payload<'a> {
    pub(crate) bytes: &'a [u8],
    /// Offset of `bytes` in the frame.
    pub(crate) offset: usize,
    pub(crate) encap: Encap,
    /// The snap length cut the payload short.
    pub(crate) truncated: bool,
}

/// Why a frame's headers could not be walked ("malformed IPv4 header at frame offset 14").
pub(crate) type DecapError = wire::Malformed;

/// Finds the NDN payload of a frame: `Ok(None)` for other traffic (and for IP fragments
/// after the first, which carry no UDP header). The headers are walked by
/// [`wire::walk`] with [`Rules::LENIENT`]; UDP counts when either port is in `udp_ports`.
pub(crate) fn decapsulate<'a>(
    frame: &Frame<'a>,
    udp_ports: &[u16],
) -> Result<Option<Payload<'a>>, DecapError> {
    let link = match frame.link_type {
        linktype::ETHERNET => Link::Ethernet,
        linktype::LINUX_SLL => Link::LinuxSll,
        linktype::LINUX_SLL2 => Link::LinuxSll2,
        linktype::NULL => Link::Null,
        linktype::RAW | linktype::IPV4 | linktype::IPV6 => Link::Raw,
        _ => return Ok(None),
    };
    let d = frame.data;
    let layers = match wire::walk(d, frame.orig_len as usize, link, &Rules::LENIENT) {
        Ok(l) => l,
        Err(Stop::Malformed(e)) => return Err(e),
        Err(Stop::Skipped(_)) => return Ok(None),
    };
    let encap = match layers.carrier {
        Carrier::Ether => {
            let m = layers.macs.unwrap_or(wire::Macs {
                dst: [0; 6],
                src: [0; 6],
            });
            Encap::Ethernet {
                src: m.src,
                dst: m.dst,
            }
        }
        Carrier::Udp { src, dst } => {
            if !udp_ports.contains(&src.port()) && !udp_ports.contains(&dst.port()) {
                return Ok(None);
            }
            Encap::Udp {
                src: (src.ip(), src.port()),
                dst: (dst.ip(), dst.port()),
            }
        }
    };
    let p = layers.payload;
    Ok(Some(Payload {
        bytes: d.get(p.start..p.end.min(d.len())).unwrap_or(&[]),
        offset: p.start,
        encap,
        truncated: layers.truncated,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn udp4_frame(payload: &[u8], sport: u16, dport: u16) -> Vec<u8> {
        let mut f = vec![0xaa; 6];
        f.extend([0xbb; 6]);
        f.extend([0x08, 0x00]);
        let total = 20 + 8 + payload.len();
        f.extend([
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            17,
            0,
            0,
        ]);
        f.extend([10, 0, 0, 1, 10, 0, 0, 2]);
        let ulen = 8 + payload.len();
        f.extend(sport.to_be_bytes());
        f.extend(dport.to_be_bytes());
        f.extend([(ulen >> 8) as u8, ulen as u8, 0, 0]);
        f.extend(payload);
        f
    }

    fn pcap_file(be: bool, frames: &[Vec<u8>]) -> Vec<u8> {
        let w32 = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let w16 = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut f = Vec::new();
        f.extend(w32(0xa1b2c3d4));
        f.extend(w16(2));
        f.extend(w16(4));
        f.extend([0; 8]);
        f.extend(w32(65535));
        f.extend(w32(1));
        for (i, fr) in frames.iter().enumerate() {
            f.extend(w32(100 + i as u32));
            f.extend(w32(5));
            f.extend(w32(fr.len() as u32));
            f.extend(w32(fr.len() as u32));
            f.extend(fr);
        }
        f
    }

    #[test]
    fn pcap_both_byte_orders_and_udp() {
        let frame = udp4_frame(&[0x05, 0x00], 56000, 6363);
        for be in [false, true] {
            let file = pcap_file(be, &[frame.clone(), udp4_frame(&[1], 53, 53)]);
            assert!(is_capture(&file));
            let (frames, err) = frames(&file);
            assert_eq!(err, None);
            assert_eq!(frames.len(), 2);
            assert_eq!(frames[0].timestamp_ns, Some(100_000_005_000));
            let p = decapsulate(&frames[0], &[6363]).unwrap().unwrap();
            assert_eq!(p.bytes, &[0x05, 0x00]);
            assert_eq!(p.offset, 42);
            assert_eq!(p.encap.to_string(), "udp 10.0.0.1:56000 > 10.0.0.2:6363");
            assert!(decapsulate(&frames[1], &[6363]).unwrap().is_none());
        }
    }

    #[test]
    fn truncated_and_corrupt_files() {
        let file = pcap_file(false, &[udp4_frame(&[5, 0], 1, 6363)]);
        let (f, e) = frames(&file[..file.len() - 1]);
        assert!(f.is_empty());
        assert_eq!(
            e,
            Some(CaptureError::Truncated {
                what: "pcap record",
                offset: 24
            })
        );
        assert_eq!(frames(b"hello").1, Some(CaptureError::NotACapture));
        let mut bad = file.clone();
        bad[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            frames(&bad).1,
            Some(CaptureError::Bad {
                what: "captured length",
                ..
            })
        ));
    }

    #[test]
    fn ethernet_ndn_vlan_and_ipv6() {
        let mut eth = vec![
            1, 0, 0x5e, 0, 0x17, 0xaa, 2, 2, 2, 2, 2, 2, 0x81, 0x00, 0, 5, 0x86, 0x24,
        ];
        eth.extend([0x05, 0x00]);
        let f = Frame {
            number: 1,
            timestamp_ns: None,
            link_type: linktype::ETHERNET,
            data: &eth,
            orig_len: eth.len() as u32,
        };
        let p = decapsulate(&f, &[6363]).unwrap().unwrap();
        assert_eq!((p.bytes, p.offset), (&[5u8, 0][..], 18));
        assert_eq!(
            p.encap.to_string(),
            "ether 02:02:02:02:02:02 > 01:00:5e:00:17:aa"
        );

        // Raw IPv6 with a hop-by-hop header, then UDP to 6363.
        let mut v6 = vec![0x60, 0, 0, 0, 0, 18, 0, 64];
        v6.extend([0u8; 15]);
        v6.push(1);
        v6.extend([0u8; 15]);
        v6.push(2);
        v6.extend([17, 0, 0, 0, 0, 0, 0, 0]);
        v6.extend([0x1a, 0x0b, 0x18, 0xdb, 0, 10, 0, 0, 0x05, 0x00]);
        let f = Frame {
            number: 1,
            timestamp_ns: None,
            link_type: linktype::RAW,
            data: &v6,
            orig_len: v6.len() as u32,
        };
        let p = decapsulate(&f, &[6363]).unwrap().unwrap();
        assert_eq!(p.bytes, &[5, 0]);
        assert_eq!(p.encap.to_string(), "udp [::1]:6667 > [::2]:6363");
        assert!(!p.truncated);
        let short = &v6[..v6.len() - 1];
        let f = Frame { data: short, ..f };
        assert!(decapsulate(&f, &[6363]).unwrap().unwrap().truncated);
    }

    #[test]
    fn never_panics_on_garbage() {
        let mut seed = 7u64;
        for len in 0..400 {
            let mut buf: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed as u8
                })
                .collect();
            if len >= 4 {
                let magic: [&[u8]; 2] = [&[0xd4, 0xc3, 0xb2, 0xa1], &[0x0a, 0x0d, 0x0d, 0x0a]];
                buf[..4].copy_from_slice(magic[len % 2]);
            }
            let (fs, _) = frames(&buf);
            for lt in [0, 1, 101, 113, 228, 229, 276] {
                let f = Frame {
                    number: 1,
                    timestamp_ns: None,
                    link_type: lt,
                    data: &buf,
                    orig_len: 0,
                };
                let _ = decapsulate(&f, &[6363]);
            }
            for f in fs {
                let _ = decapsulate(&f, &[6363]);
            }
        }
    }

    #[test]
    fn bundled_samples_hold_ndn() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        for file in ["sample.pcap", "sample-v6.pcapng"] {
            let bytes = std::fs::read(dir.join(file)).unwrap();
            let (fs, err) = frames(&bytes);
            assert_eq!(err, None, "{file}");
            let ndn = fs
                .iter()
                .filter(|f| matches!(decapsulate(f, &[6363]), Ok(Some(_))))
                .count();
            assert!(ndn >= 10, "{file}: {ndn} NDN frames");
        }
    }

    /// `decapsulate` as it was before the shared walker (frozen: the oracle for "same output").
    mod before {
        use super::super::{Encap, Frame, Payload, linktype, u16_at, u32_at};
        use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

        #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
        #[error("malformed {what} header at frame offset {offset}")]
        pub(super) struct DecapError {
            what: &'static str,
            offset: usize,
        }

        const ETHERTYPE_NDN: u16 = 0x8624;

        pub(super) fn decapsulate<'a>(
            frame: &Frame<'a>,
            udp_ports: &[u16],
        ) -> Result<Option<Payload<'a>>, DecapError> {
            let d = frame.data;
            let err = |what, offset| DecapError { what, offset };
            let (ethertype, at, macs) = match frame.link_type {
                linktype::ETHERNET => {
                    let mut et = u16_at(d, 12, true).ok_or(err("Ethernet", 0))?;
                    let mut at = 14;
                    while et == 0x8100 || et == 0x88a8 {
                        et = u16_at(d, at + 2, true).ok_or(err("VLAN", at))?;
                        at += 4;
                    }
                    let dst: [u8; 6] = d
                        .get(0..6)
                        .and_then(|m| m.try_into().ok())
                        .ok_or(err("Ethernet", 0))?;
                    let src: [u8; 6] = d
                        .get(6..12)
                        .and_then(|m| m.try_into().ok())
                        .ok_or(err("Ethernet", 0))?;
                    (et, at, Some((src, dst)))
                }
                linktype::LINUX_SLL => (u16_at(d, 14, true).ok_or(err("SLL", 0))?, 16, None),
                linktype::LINUX_SLL2 => (u16_at(d, 0, true).ok_or(err("SLL2", 0))?, 20, None),
                linktype::NULL => {
                    let family = u32_at(d, 0, false).ok_or(err("loopback", 0))?;
                    let family = if family > 0xFFFF {
                        family.swap_bytes()
                    } else {
                        family
                    };
                    let et = match family {
                        2 => 0x0800,
                        10 | 24 | 28 | 30 => 0x86dd,
                        _ => return Ok(None),
                    };
                    (et, 4, None)
                }
                linktype::RAW | linktype::IPV4 | linktype::IPV6 => {
                    let et = match d.first().map(|b| b >> 4) {
                        Some(4) => 0x0800,
                        Some(6) => 0x86dd,
                        _ => return Ok(None),
                    };
                    (et, 0, None)
                }
                _ => return Ok(None),
            };
            match ethertype {
                ETHERTYPE_NDN => {
                    let (src, dst) = macs.unwrap_or(([0; 6], [0; 6]));
                    let bytes = d.get(at..).unwrap_or(&[]);
                    Ok(Some(Payload {
                        bytes,
                        offset: at,
                        encap: Encap::Ethernet { src, dst },
                        truncated: frame.orig_len as usize > d.len(),
                    }))
                }
                0x0800 => ipv4(d, at, udp_ports),
                0x86dd => ipv6(d, at, udp_ports),
                _ => Ok(None),
            }
        }

        fn ipv4<'a>(
            d: &'a [u8],
            at: usize,
            ports: &[u16],
        ) -> Result<Option<Payload<'a>>, DecapError> {
            let err = |offset| DecapError {
                what: "IPv4",
                offset,
            };
            let vihl = *d.get(at).ok_or(err(at))?;
            let ihl = usize::from(vihl & 0x0F) * 4;
            if vihl >> 4 != 4 || ihl < 20 {
                return Err(err(at));
            }
            let total = usize::from(u16_at(d, at + 2, true).ok_or(err(at))?);
            let frag = u16_at(d, at + 6, true).ok_or(err(at))?;
            let proto = *d.get(at + 9).ok_or(err(at))?;
            let src = Ipv4Addr::from(
                <[u8; 4]>::try_from(d.get(at + 12..at + 16).ok_or(err(at))?)
                    .map_err(|_| err(at))?,
            );
            let dst = Ipv4Addr::from(
                <[u8; 4]>::try_from(d.get(at + 16..at + 20).ok_or(err(at))?)
                    .map_err(|_| err(at))?,
            );
            if proto != 17 || frag & 0x1FFF != 0 {
                return Ok(None);
            }
            let end = (at + total).max(at + ihl);
            udp(d, at + ihl, end, IpAddr::V4(src), IpAddr::V4(dst), ports)
        }

        fn ipv6<'a>(
            d: &'a [u8],
            at: usize,
            ports: &[u16],
        ) -> Result<Option<Payload<'a>>, DecapError> {
            let err = |offset| DecapError {
                what: "IPv6",
                offset,
            };
            if d.get(at).map(|b| b >> 4) != Some(6) {
                return Err(err(at));
            }
            let payload_len = usize::from(u16_at(d, at + 4, true).ok_or(err(at))?);
            let mut next = *d.get(at + 6).ok_or(err(at))?;
            let src = Ipv6Addr::from(
                <[u8; 16]>::try_from(d.get(at + 8..at + 24).ok_or(err(at))?)
                    .map_err(|_| err(at))?,
            );
            let dst = Ipv6Addr::from(
                <[u8; 16]>::try_from(d.get(at + 24..at + 40).ok_or(err(at))?)
                    .map_err(|_| err(at))?,
            );
            let end = at + 40 + payload_len;
            let mut h = at + 40;
            // Extension headers: hop-by-hop, routing, destination options, fragment.
            for _ in 0..8 {
                match next {
                    0 | 43 | 60 => {
                        let n = *d.get(h).ok_or(err(h))?;
                        let len = (usize::from(*d.get(h + 1).ok_or(err(h))?) + 1) * 8;
                        next = n;
                        h += len;
                    }
                    44 => {
                        let n = *d.get(h).ok_or(err(h))?;
                        let off = u16_at(d, h + 2, true).ok_or(err(h))?;
                        if off & 0xFFF8 != 0 {
                            return Ok(None); // not the first fragment
                        }
                        next = n;
                        h += 8;
                    }
                    _ => break,
                }
            }
            if next != 17 {
                return Ok(None);
            }
            udp(d, h, end, IpAddr::V6(src), IpAddr::V6(dst), ports)
        }

        fn udp<'a>(
            d: &'a [u8],
            at: usize,
            ip_end: usize,
            src_ip: IpAddr,
            dst_ip: IpAddr,
            ports: &[u16],
        ) -> Result<Option<Payload<'a>>, DecapError> {
            let err = DecapError {
                what: "UDP",
                offset: at,
            };
            let sport = u16_at(d, at, true).ok_or(err.clone())?;
            let dport = u16_at(d, at + 2, true).ok_or(err.clone())?;
            let len = usize::from(u16_at(d, at + 4, true).ok_or(err.clone())?);
            if len < 8 {
                return Err(err);
            }
            if !ports.contains(&sport) && !ports.contains(&dport) {
                return Ok(None);
            }
            let want_end = (at + len).min(ip_end.max(at + 8));
            let end = want_end.min(d.len());
            let bytes = d.get(at + 8..end).unwrap_or(&[]);
            Ok(Some(Payload {
                bytes,
                offset: at + 8,
                encap: Encap::Udp {
                    src: (src_ip, sport),
                    dst: (dst_ip, dport),
                },
                truncated: end < want_end,
            }))
        }
    }

    /// Seeds for the differential test: one frame per link type and encapsulation.
    fn seeds() -> Vec<(u32, Vec<u8>)> {
        let v4 = udp4_frame(&[0x05, 0x02, 0x07, 0x00], 56000, 6363);
        let ip4 = v4[14..].to_vec();
        let mut qinq = v4[..12].to_vec();
        qinq.extend([0x88, 0xa8, 0, 3, 0x81, 0x00, 0, 5]);
        qinq.extend(&v4[12..]);
        let mut ndn = vec![
            1, 0, 0x5e, 0, 0x17, 0xaa, 2, 2, 2, 2, 2, 2, 0x86, 0x24, 5, 0,
        ];
        ndn.extend([0; 4]);
        let mut v6 = vec![0x60, 0, 0, 0, 0, 26, 0, 64];
        v6.extend([0u8; 15]);
        v6.push(1);
        v6.extend([0u8; 15]);
        v6.push(2);
        v6.extend([44, 0, 0, 0, 0, 0, 0, 0]); // hop-by-hop, then a first fragment
        v6.extend([17, 0, 0, 1, 0, 0, 0, 9]);
        v6.extend([0x1a, 0x0b, 0x18, 0xdb, 0, 10, 0, 0, 0x05, 0x00]);
        let mut eth6 = vec![0x33, 0x33, 0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 0x86, 0xdd];
        eth6.extend(&v6);
        let mut null = 30u32.to_le_bytes().to_vec();
        null.extend(&v6);
        let mut sll = vec![0; 14];
        sll.extend([0x08, 0x00]);
        sll.extend(&ip4);
        let mut sll2 = vec![0x86, 0xdd];
        sll2.extend([0; 18]);
        sll2.extend(&v6);
        // IPv4 total length shorter than its UDP header: payloads clamp to nothing.
        let mut short = v4.clone();
        short[16..18].copy_from_slice(&24u16.to_be_bytes());
        vec![
            (linktype::ETHERNET, short),
            (linktype::ETHERNET, v4),
            (linktype::ETHERNET, qinq),
            (linktype::ETHERNET, ndn),
            (linktype::ETHERNET, eth6),
            (linktype::RAW, ip4),
            (linktype::IPV6, v6),
            (linktype::NULL, null),
            (linktype::LINUX_SLL, sll),
            (linktype::LINUX_SLL2, sll2),
        ]
    }

    fn same(
        new: Result<Option<Payload<'_>>, DecapError>,
        old: Result<Option<Payload<'_>>, before::DecapError>,
    ) -> Result<(), String> {
        match (new, old) {
            (Ok(None), Ok(None)) => Ok(()),
            (Ok(Some(n)), Ok(Some(o)))
                if (n.bytes, n.offset, &n.encap, n.truncated)
                    == (o.bytes, o.offset, &o.encap, o.truncated) =>
            {
                Ok(())
            }
            (Err(n), Err(o)) if n.to_string() == o.to_string() => Ok(()),
            (n, o) => Err(format!("now {n:?}, before {o:?}")),
        }
    }

    #[test]
    fn seeds_decapsulate_as_before() {
        for (lt, data) in seeds() {
            let f = Frame {
                number: 1,
                timestamp_ns: None,
                link_type: lt,
                data: &data,
                orig_len: data.len() as u32,
            };
            let now = decapsulate(&f, &[6363]);
            assert!(matches!(now, Ok(Some(_))), "link type {lt}: {now:?}");
            same(now, before::decapsulate(&f, &[6363])).unwrap();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Same payload, offset, encapsulation, truncation flag and error text as before the
        /// shared walker, on mutated, cut and re-typed frames.
        #[test]
        fn decapsulate_matches_the_walker_it_replaced(
            seed in any::<prop::sample::Index>(),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in 0usize..80,
            extra in prop_oneof![Just(0u32), 0u32..100],
            retype in prop_oneof![
                3 => Just(None),
                1 => prop::sample::select(vec![0u32, 1, 101, 113, 228, 229, 276, 147]).prop_map(Some),
            ],
        ) {
            let all = seeds();
            let (lt, mut data) = all[seed.index(all.len())].clone();
            for (i, x) in &flips {
                let i = i.index(data.len());
                data[i] ^= x;
            }
            let orig_len = data.len() as u32 + extra;
            data.truncate(data.len().saturating_sub(cut));
            let f = Frame {
                number: 1,
                timestamp_ns: None,
                link_type: retype.unwrap_or(lt),
                data: &data,
                orig_len,
            };
            for ports in [&[6363u16][..], &[56000], &[]] {
                let r = same(decapsulate(&f, ports), before::decapsulate(&f, ports));
                prop_assert!(r.is_ok(), "{:?}", r);
            }
        }
    }
}
