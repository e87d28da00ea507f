//! Fragmentation of an outgoing packet (NDNLPv2 indexed fragmentation).
//!
//! A [`Fragmenter`] knows the link's MTU; [`Fragmenter::fragment`] plans how to cut one network
//! packet and returns [`Fragments`], which writes each LpPacket straight into a buffer the caller
//! provides ([`Fragments::next_into`]). Planning is arithmetic only: nothing is allocated and
//! nothing is copied except into the caller's buffers.

use crate::error::{Error, ErrorKind, Result};
use crate::lp::LpHeaders;
use crate::tlv::{tlv_len, varnum_len};
use crate::types as tt;

/// Splits outgoing packets into NDNLPv2 fragments that fit one link MTU.
///
/// The plan follows NDNLPv2: fragment `i` of `N` carries `Sequence = first_sequence + i`
/// (8 fixed bytes, wrapping), `FragIndex = i` and `FragCount = N`. The caller's PitToken rides
/// on every fragment; its other header fields (Nack, CongestionMark, NextHopFaceId, ...) on
/// fragment 0 only, where NDNLPv2 has the receiver take a fragmented packet's network-layer
/// fields from. The token is repeated because ndnd (v1.5.3) takes a reassembled packet's
/// PitToken from whichever fragment completed it, as it also sends them; NFD and ndx read
/// fragment 0's and ignore the copies. `N` is the smallest count for which every LpPacket fits
/// the MTU, counting the NonNegativeInteger sizes of FragIndex and FragCount and the
/// TLV-LENGTH sizes of LpPacket and Fragment; every fragment but the last is filled to the MTU
/// (or to one or two bytes short of it, where a longer TLV-LENGTH would not pay for itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragmenter {
    mtu: usize,
}

impl Fragmenter {
    /// The smallest MTU accepted: one byte of Fragment with the largest fragmentation headers
    /// (Sequence, and FragIndex and FragCount as 8-byte NonNegativeIntegers).
    pub const MIN_MTU: usize = tlv_len(
        tt::LP_PACKET,
        tlv_len(tt::LP_SEQUENCE, 8)
            + tlv_len(tt::LP_FRAG_INDEX, 8)
            + tlv_len(tt::LP_FRAG_COUNT, 8)
            + tlv_len(tt::LP_FRAGMENT, 1),
    );

    /// A fragmenter for a link whose LpPackets may be at most `mtu` bytes (the UDP payload or
    /// Ethernet payload limit).
    ///
    /// An MTU below [`Fragmenter::MIN_MTU`] is [`ErrorKind::Unencodable`].
    pub fn new(mtu: usize) -> Result<Self> {
        if mtu < Self::MIN_MTU {
            return Err(Error::new(
                ErrorKind::Unencodable("MTU too small to carry one byte of fragment"),
                0,
            ));
        }
        Ok(Self { mtu })
    }

    /// The MTU: no LpPacket written by this fragmenter is longer.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Plans the LpPackets that carry `packet` (a whole network packet) with `headers`.
    ///
    /// When the packet and `headers` fit in one LpPacket of `mtu` bytes, the plan is that one
    /// LpPacket, without Sequence, FragIndex or FragCount (even when `headers` is empty; a
    /// caller that prefers bare packets checks [`LpHeaders::is_empty`] first). Otherwise it is
    /// `N >= 2` fragments numbered from `first_sequence` as described on [`Fragmenter`]. Any
    /// Sequence, FragIndex or FragCount in `headers` is ignored; the PitToken goes on every
    /// fragment, and every other field, link-layer ones (Ack, TxSequence) included, on fragment
    /// 0 only.
    ///
    /// Fails with [`ErrorKind::Unencodable`] when `headers` leave no room for even one byte of
    /// fragment in the MTU. Never panics and never allocates.
    pub fn fragment<'p, 'h>(
        &self,
        packet: &'p [u8],
        headers: &LpHeaders<'h>,
        first_sequence: u64,
    ) -> Result<Fragments<'p, 'h>> {
        let headers = LpHeaders {
            sequence: None,
            frag_index: None,
            frag_count: None,
            ..*headers
        };
        let count = if headers.encoded_len(Some(packet.len())) <= self.mtu {
            1
        } else {
            self.count_fragments(packet.len() as u64, &headers)?
        };
        Ok(Fragments {
            packet,
            headers,
            mtu: self.mtu,
            first_sequence,
            count,
            index: 0,
            offset: 0,
        })
    }

    /// The smallest fragment count `N >= 2` whose fragments, each filled to the MTU, hold `len`
    /// bytes.
    ///
    /// Capacities depend on `N` and on the index only through the NonNegativeInteger sizes of
    /// FragCount and FragIndex, so this walks the (at most 4 x 4) size classes instead of the
    /// fragments. Within one FragCount size class the total capacity grows with `N`, so the first
    /// class holding the packet yields the smallest `N`.
    fn count_fragments(&self, len: u64, headers: &LpHeaders<'_>) -> Result<u64> {
        let no_room = || {
            Error::new(
                ErrorKind::Unencodable("LP headers leave no room for a fragment within the MTU"),
                0,
            )
        };
        for (count_lo, count_hi) in NNI_CLASSES {
            let count_lo = count_lo.max(2);
            let first = fragment_headers(headers, 0, 0, count_lo);
            let cap0 = payload_cap(self.mtu, first.fields_len()).ok_or_else(no_room)?;
            let mut need = len.saturating_sub(cap0 as u64);
            if need == 0 {
                return Ok(count_lo);
            }
            let later = later_headers(headers);
            for (index_lo, index_hi) in NNI_CLASSES {
                if index_lo >= count_hi {
                    break;
                }
                let index_hi = index_hi.min(count_hi - 1);
                let h = fragment_headers(&later, 0, index_lo, count_lo);
                let cap = payload_cap(self.mtu, h.fields_len()).ok_or_else(no_room)? as u64;
                let avail = index_hi - index_lo + 1;
                let used = need.div_ceil(cap);
                if used <= avail {
                    return Ok((index_lo + used).max(count_lo));
                }
                // `used > avail` means `avail * cap < need`: no overflow.
                need -= avail * cap;
            }
        }
        Err(no_room())
    }
}

/// The ranges of values whose shortest NonNegativeInteger encoding is 1, 2, 4 and 8 bytes.
const NNI_CLASSES: [(u64, u64); 4] = [
    (1, 0xFF),
    (0x100, 0xFFFF),
    (0x1_0000, 0xFFFF_FFFF),
    (0x1_0000_0000, u64::MAX),
];

/// The header fields of fragments 1 and beyond: the PitToken alone.
fn later_headers<'h>(headers: &LpHeaders<'h>) -> LpHeaders<'h> {
    LpHeaders {
        pit_token: headers.pit_token,
        ..LpHeaders::default()
    }
}

/// `base` with the fragmentation fields of fragment `index` of `count` set.
fn fragment_headers<'h>(
    base: &LpHeaders<'h>,
    sequence: u64,
    index: u64,
    count: u64,
) -> LpHeaders<'h> {
    LpHeaders {
        sequence: Some(sequence),
        frag_index: Some(index),
        frag_count: Some(count),
        ..*base
    }
}

/// Largest TLV-VALUE length such that the TLV, with a TLV-TYPE of `type_len` bytes, fits in
/// `budget` bytes.
fn max_value_len(budget: usize, type_len: usize) -> Option<usize> {
    // (TLV-LENGTH size, largest length encodable in that size).
    const FORMS: [(usize, u64); 4] = [(1, 252), (3, 0xFFFF), (5, 0xFFFF_FFFF), (9, u64::MAX)];
    let room = budget.checked_sub(type_len)?;
    FORMS
        .iter()
        .filter_map(|&(size, max)| {
            let v = room.checked_sub(size)?;
            Some((v as u64).min(max) as usize)
        })
        .max()
}

/// Most Fragment bytes an LpPacket of at most `mtu` bytes can carry next to `fields_len` bytes
/// of header fields; `None` when not even one byte fits.
fn payload_cap(mtu: usize, fields_len: usize) -> Option<usize> {
    let inner = max_value_len(mtu, varnum_len(tt::LP_PACKET))?;
    let room = inner.checked_sub(fields_len)?;
    max_value_len(room, varnum_len(tt::LP_FRAGMENT)).filter(|&n| n > 0)
}

/// The LpPackets planned for one network packet by [`Fragmenter::fragment`], written one at a
/// time into caller buffers by [`Fragments::next_into`].
#[derive(Clone)]
pub struct Fragments<'p, 'h> {
    packet: &'p [u8],
    headers: LpHeaders<'h>,
    mtu: usize,
    first_sequence: u64,
    count: u64,
    index: u64,
    offset: usize,
}

impl core::fmt::Debug for Fragments<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Fragments")
            .field("packet_len", &self.packet.len())
            .field("headers", &self.headers)
            .field("mtu", &self.mtu)
            .field("first_sequence", &self.first_sequence)
            .field("count", &self.count)
            .field("index", &self.index)
            .field("offset", &self.offset)
            .finish()
    }
}

impl Fragments<'_, '_> {
    /// How many LpPackets the packet takes: 1 when it was not fragmented, else FragCount.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// True when the packet is cut into fragments (`count() > 1`).
    pub fn is_fragmented(&self) -> bool {
        self.count > 1
    }

    /// How many LpPackets are still to be written.
    pub fn remaining(&self) -> u64 {
        self.count.saturating_sub(self.index)
    }

    /// The largest LpPacket [`Fragments::next_into`] writes (the MTU): a buffer this long is
    /// always large enough.
    pub fn max_len(&self) -> usize {
        self.mtu
    }

    /// Writes the next LpPacket at the start of `out` and returns its length; `None` when all
    /// have been written.
    ///
    /// On error (e.g. [`ErrorKind::BufferTooSmall`], or an invalid PitToken in the caller's
    /// headers) nothing is consumed: the same LpPacket is written by the next call.
    pub fn next_into(&mut self, out: &mut [u8]) -> Option<Result<usize>> {
        if self.index >= self.count {
            return None;
        }
        let rest = self.packet.get(self.offset..).unwrap_or(&[]);
        if self.count == 1 {
            let written = self.headers.encode(Some(rest), out);
            if written.is_ok() {
                self.index = 1;
                self.offset = self.packet.len();
            }
            return Some(written);
        }
        let sequence = self.first_sequence.wrapping_add(self.index);
        let base = if self.index == 0 {
            self.headers
        } else {
            later_headers(&self.headers)
        };
        let h = fragment_headers(&base, sequence, self.index, self.count);
        let cap = payload_cap(self.mtu, h.fields_len()).unwrap_or(0);
        let take = cap.min(rest.len());
        let piece = rest.get(..take).unwrap_or(&[]);
        let written = h.encode(Some(piece), out);
        if written.is_ok() {
            self.index += 1;
            self.offset += take;
        }
        Some(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lp::{LpPacket, NackReason};

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    /// Fragments `packet`, checks every invariant, and returns the LpPackets.
    fn check(fragmenter: &Fragmenter, packet: &[u8], headers: &LpHeaders<'_>) -> Vec<Vec<u8>> {
        let mtu = fragmenter.mtu();
        let mut frags = fragmenter.fragment(packet, headers, 1000).unwrap();
        let count = frags.count();
        let mut out = vec![0u8; mtu];
        let mut lps = Vec::new();
        while let Some(n) = frags.next_into(&mut out) {
            let n = n.unwrap();
            assert!(n <= mtu, "{n} > mtu {mtu} (packet {})", packet.len());
            lps.push(out[..n].to_vec());
        }
        assert_eq!(lps.len() as u64, count);
        assert_eq!(frags.remaining(), 0);
        assert!(frags.next_into(&mut out).is_none());

        let mut joined = Vec::new();
        for (i, wire) in lps.iter().enumerate() {
            let lp = LpPacket::decode(wire).unwrap();
            let payload = lp.fragment().unwrap();
            joined.extend_from_slice(payload);
            let h = lp.headers();
            if count == 1 {
                assert_eq!((h.sequence, h.frag_index, h.frag_count), (None, None, None));
                assert_eq!(h.pit_token, headers.pit_token);
                continue;
            }
            assert!(!payload.is_empty());
            assert_eq!(lp.sequence(), Some(1000 + i as u64));
            assert_eq!(lp.frag_index(), i as u64);
            assert_eq!(lp.frag_count(), count);
            let rest = LpHeaders {
                sequence: None,
                frag_index: None,
                frag_count: None,
                ..h
            };
            if i == 0 {
                let want = LpHeaders {
                    sequence: None,
                    frag_index: None,
                    frag_count: None,
                    ..*headers
                };
                assert_eq!(rest, want);
            } else {
                assert_eq!(rest, later_headers(headers), "headers on fragment {i}");
            }
            if i + 1 < lps.len() {
                // As full as possible: one more byte would not fit.
                let more = LpHeaders {
                    frag_index: Some(i as u64),
                    ..h
                };
                assert!(more.encoded_len(Some(payload.len() + 1)) > mtu);
            }
        }
        assert_eq!(joined, packet);
        if count > 2 {
            // Minimal: one fragment fewer could not hold the packet.
            let fewer = count - 1;
            let cap: usize = (0..fewer)
                .map(|i| {
                    let base = if i == 0 {
                        *headers
                    } else {
                        later_headers(headers)
                    };
                    let h = fragment_headers(&base, 0, i, fewer);
                    payload_cap(mtu, h.fields_len()).unwrap_or(0)
                })
                .sum();
            assert!(cap < packet.len());
        }
        lps
    }

    #[test]
    fn rejects_tiny_mtu() {
        assert_eq!(Fragmenter::MIN_MTU, 35);
        let e = Fragmenter::new(Fragmenter::MIN_MTU - 1).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Unencodable(_)));
        let f = Fragmenter::new(Fragmenter::MIN_MTU).unwrap();
        check(&f, &pattern(300), &LpHeaders::default());
    }

    #[test]
    fn small_packet_is_one_lp_packet() {
        let f = Fragmenter::new(1500).unwrap();
        let packet = pattern(100);
        let lps = check(&f, &packet, &LpHeaders::default());
        assert_eq!(lps.len(), 1);
        let token = [1, 2, 3, 4];
        let h = LpHeaders {
            pit_token: Some(&token),
            sequence: Some(9),
            ..LpHeaders::default()
        };
        let lps = check(&f, &packet, &h);
        let lp = LpPacket::decode(&lps[0]).unwrap();
        assert_eq!(lp.pit_token(), Some(&token[..]));
        assert_eq!(lp.sequence(), None);
    }

    #[test]
    fn exact_fit_is_not_fragmented() {
        let f = Fragmenter::new(1500).unwrap();
        for len in 1400..1600 {
            let packet = pattern(len);
            let lps = check(&f, &packet, &LpHeaders::default());
            let whole = LpHeaders::default().encoded_len(Some(len));
            assert_eq!(lps.len() == 1, whole <= 1500, "len {len}");
        }
    }

    #[test]
    fn pit_token_on_every_fragment_other_headers_on_the_first() {
        let f = Fragmenter::new(200).unwrap();
        let token = [7u8; 32];
        let h = LpHeaders {
            pit_token: Some(&token),
            nack: Some(NackReason::NoRoute),
            congestion_mark: Some(1),
            incoming_face_id: Some(300),
            ..LpHeaders::default()
        };
        let lps = check(&f, &pattern(2000), &h);
        assert!(lps.len() > 10);
        for (i, wire) in lps.iter().enumerate() {
            let lp = LpPacket::decode(wire).unwrap();
            assert_eq!(lp.pit_token(), Some(&token[..]), "fragment {i}");
            let first = i == 0;
            assert_eq!(lp.nack().is_some(), first, "Nack on fragment {i}");
            let h = lp.headers();
            assert_eq!(h.congestion_mark.is_some(), first, "fragment {i}");
            assert_eq!(h.incoming_face_id.is_some(), first, "fragment {i}");
        }
        // Without a token, fragments after the first carry only Sequence, FragIndex and
        // FragCount.
        let bare = LpHeaders {
            pit_token: None,
            ..h
        };
        let lps = check(&f, &pattern(2000), &bare);
        let second = LpPacket::decode(&lps[1]).unwrap().headers();
        assert_eq!(second.pit_token, None);
        assert!(
            LpHeaders {
                sequence: None,
                frag_index: None,
                frag_count: None,
                ..second
            }
            .is_empty()
        );
    }

    #[test]
    fn the_longest_token_on_every_fragment_still_fits() {
        // 34 bytes of PitToken TLV on each fragment of a small MTU: about three times as many
        // fragments as without it, none too long (`check`).
        let token = [0xA5u8; 32];
        let h = LpHeaders {
            pit_token: Some(&token),
            ..LpHeaders::default()
        };
        let f = Fragmenter::new(Fragmenter::MIN_MTU + 34).unwrap();
        let with = check(&f, &pattern(600), &h);
        let without = check(&f, &pattern(600), &LpHeaders::default());
        assert!(
            with.len() > 2 * without.len(),
            "{} {}",
            with.len(),
            without.len()
        );
    }

    #[test]
    fn headers_too_big_for_mtu() {
        let f = Fragmenter::new(64).unwrap();
        let pa = [0u8; 60];
        let h = LpHeaders {
            prefix_announcement: Some(&pa),
            ..LpHeaders::default()
        };
        let e = f.fragment(&pattern(100), &h, 0).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Unencodable(_)));
    }

    #[test]
    fn small_buffer_is_reported_and_retried() {
        let f = Fragmenter::new(500).unwrap();
        let packet = pattern(1200);
        let mut frags = f.fragment(&packet, &LpHeaders::default(), 0).unwrap();
        let mut small = [0u8; 10];
        let e = frags.next_into(&mut small).unwrap().unwrap_err();
        assert!(matches!(e.kind, ErrorKind::BufferTooSmall { .. }));
        assert_eq!(frags.remaining(), frags.count());
        let mut out = vec![0u8; frags.max_len()];
        let n = frags.next_into(&mut out).unwrap().unwrap();
        assert_eq!(LpPacket::decode(&out[..n]).unwrap().frag_index(), 0);
    }

    #[test]
    fn sequence_wraps() {
        let f = Fragmenter::new(100).unwrap();
        let packet = pattern(500);
        let mut frags = f
            .fragment(&packet, &LpHeaders::default(), u64::MAX - 1)
            .unwrap();
        let mut out = [0u8; 100];
        let mut seqs = Vec::new();
        while let Some(n) = frags.next_into(&mut out) {
            let n = n.unwrap();
            seqs.push(LpPacket::decode(&out[..n]).unwrap().sequence().unwrap());
        }
        assert_eq!(&seqs[..3], &[u64::MAX - 1, u64::MAX, 0]);
    }

    #[test]
    fn many_fragments_cross_nni_boundary() {
        // More than 255 fragments: FragIndex and FragCount take 2 bytes.
        let f = Fragmenter::new(Fragmenter::MIN_MTU).unwrap();
        for len in [5000, 6000, 9000] {
            let lps = check(&f, &pattern(len), &LpHeaders::default());
            assert!(lps.len() > 255);
        }
    }

    #[test]
    fn sweep_sizes_and_mtus() {
        let token = [9u8; 8];
        let with = LpHeaders {
            pit_token: Some(&token),
            congestion_mark: Some(3),
            ..LpHeaders::default()
        };
        let mut mtu = 64;
        while mtu <= 9000 {
            let f = Fragmenter::new(mtu).unwrap();
            let mut len = 1;
            while len <= 20000 {
                let packet = pattern(len);
                check(&f, &packet, &LpHeaders::default());
                check(&f, &packet, &with);
                len += if len < 600 { 7 } else { 641 };
            }
            mtu += if mtu < 300 { 13 } else { 397 };
        }
    }

    #[test]
    fn every_size_near_length_form_boundaries() {
        // MTUs around 253 + overhead, where TLV-LENGTHs change form.
        for mtu in 250..=275 {
            let f = Fragmenter::new(mtu).unwrap();
            for len in 1..=1200 {
                check(&f, &pattern(len), &LpHeaders::default());
            }
        }
    }

    #[test]
    fn max_value_len_is_exact() {
        for budget in 0..70_000usize {
            let got = max_value_len(budget, 1);
            let brute = (0..=budget).rev().find(|&v| tlv_len(80, v) <= budget);
            assert_eq!(got, brute, "budget {budget}");
        }
    }
}
