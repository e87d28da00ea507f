//! Building blocks of the straight-line fast paths of the Interest, Data and LpPacket
//! decoders.
//!
//! Each packet decoder first tries a fast path that reads the usual element order in one
//! pass, with every element at a fixed place and in its most common encoding; it returns a
//! view only for an input it has fully validated, and `None` on any doubt (an unknown or
//! out-of-order element, an unusual VAR-NUMBER form, a length it does not handle, an invalid
//! value). The decoder then runs its general loop from the start, which therefore alone
//! decides every error and every unusual packet.
//!
//! The fast paths accept a subset of what the general decoders accept, and build the same
//! view: `fuzz::fast_paths_agree` checks this on every fuzz and property-test input.
//!
//! For the shapes a router sees all the time, a fast path first tries them whole, before
//! reading element by element: an Interest ending in Nonce, a two-byte InterestLifetime and
//! HopLimit (`Interest::usual_ending`), a Data whose MetaInfo holds a two-byte
//! FreshnessPeriod alone and whose SignatureInfo a one-byte SignatureType alone
//! (`Data::usual`), an LpPacket holding a PitToken and a Fragment
//! (`LpPacket::from_tlv_usual`). Fixed TLV-TYPE and TLV-LENGTH pairs are compared two or four
//! bytes at a time ([`pair`], [`quad`]), and nothing is carried across optional elements.
//!
//! The hot entry points ([`Packet::decode`](crate::Packet::decode) and
//! [`LpPacket::network_packet`](crate::LpPacket::network_packet)) read the packet's TLV header
//! with [`packet`] and hand the TLV to [`read_as`], inlined into them: each entry point is one
//! function (with its fast paths, too large for the compiler to inline further) that builds
//! the view straight into the caller's result.

use crate::error::Result;
use crate::tlv::Tlv;
use crate::types as tt;
use crate::view::View;

/// Splits the element of TLV-TYPE `typ` (one byte, 1..=252) off the start of `rest`: its
/// TLV-VALUE and the bytes after it, for a minimal one- or three-byte TLV-LENGTH whose value
/// fits. `None` for another type, another form, or a value past the end of `rest`.
///
/// Callers may treat `None` as "absent" for an optional element: a malformed element of
/// that type is then left unread, and since the fast paths accept a packet only when they
/// have read every byte of it, the packet goes to the general decoder.
#[inline(always)]
pub(crate) fn element(rest: &[u8], typ: u8) -> Option<(&[u8], &[u8])> {
    let (len, tail) = match *rest {
        [t, l @ 0..=252, ref tail @ ..] if t == typ => (usize::from(l), tail),
        [t, 253, hi, lo, ref tail @ ..] if t == typ && (hi != 0 || lo >= 253) => {
            (usize::from(u16::from_be_bytes([hi, lo])), tail)
        }
        _ => return None,
    };
    tail.split_at_checked(len)
}

/// The TLV-VALUE of the element of TLV-TYPE `typ` (one byte, 1..=252) that fills `rest`
/// exactly, for a minimal one- or three-byte TLV-LENGTH: [`element`] followed by nothing.
#[inline(always)]
pub(crate) fn last(rest: &[u8], typ: u8) -> Option<&[u8]> {
    match *rest {
        [t, l @ 0..=252, ref value @ ..] if t == typ && value.len() == usize::from(l) => {
            Some(value)
        }
        [t, 253, hi, lo, ref value @ ..]
            if t == typ
                && (hi != 0 || lo >= 253)
                && value.len() == usize::from(u16::from_be_bytes([hi, lo])) =>
        {
            Some(value)
        }
        _ => None,
    }
}

/// The element at the start of `buf` (at `offset` in the outermost buffer), whatever its
/// type, for a one-byte TLV-TYPE (1..=252) and a minimal one- or three-byte TLV-LENGTH whose
/// value fits: the element, as the crate's [`Reader`](crate::tlv::Reader) reads it (so its
/// value is the tail of its wire, and it is at most 65,539 bytes), and the bytes after it.
#[inline(always)]
pub(crate) fn tlv(buf: &[u8], offset: usize) -> Option<(Tlv<'_>, &[u8])> {
    let (typ, header, len) = match *buf {
        [t @ 1..=252, l @ 0..=252, ..] => (t, 2, usize::from(l)),
        [t @ 1..=252, 253, hi, lo, ..] if hi != 0 || lo >= 253 => {
            (t, 4, usize::from(u16::from_be_bytes([hi, lo])))
        }
        _ => return None,
    };
    let (wire, after) = buf.split_at_checked(header + len)?;
    let value = wire.get(header..)?;
    let t = Tlv {
        typ: u64::from(typ),
        value,
        wire,
        offset,
    };
    Some((t, after))
}

/// The packet TLV (an Interest, Data or LpPacket) at the start of `buf` (at `offset` in the
/// outermost buffer), in the forms of [`tlv`], followed by nothing, or by nothing but zeros
/// (Ethernet padding) when `padded`: what [`Packet::decode`](crate::Packet::decode)
/// (`padded`) and [`LpPacket::network_packet`](crate::LpPacket::network_packet) accept around
/// a packet. `None` for another TLV-TYPE, another header form or other bytes after the
/// packet, valid or not.
#[inline(always)]
pub(crate) fn packet(buf: &[u8], offset: usize, padded: bool) -> Option<Tlv<'_>> {
    if let Some(t) = filling(buf, offset) {
        return Some(t);
    }
    if !padded {
        return None;
    }
    let (t, rest) = tlv(buf, offset)?;
    (is_packet(t.typ) && rest.iter().all(|&b| b == 0)).then_some(t)
}

/// Whether `typ` is that of an Interest, Data or LpPacket.
#[inline(always)]
fn is_packet(typ: u64) -> bool {
    matches!(typ, tt::INTEREST | tt::DATA | tt::LP_PACKET)
}

/// The packet TLV filling `buf` exactly (at `offset` in the outermost buffer), in the forms
/// of [`tlv`]: [`packet`] without padding. The TLV-LENGTH is then `buf`'s length less the
/// header's, so one comparison checks it (and the header's form follows from `buf`'s length).
#[inline(always)]
fn filling(buf: &[u8], offset: usize) -> Option<Tlv<'_>> {
    let n = buf.len();
    let (typ, header) = if n <= 254 {
        // A one-byte TLV-LENGTH: `n - 2`, at most 252.
        match *buf {
            [t, l, ..] if usize::from(l) + 2 == n => (t, 2),
            _ => return None,
        }
    } else if n >= 257 {
        // A three-byte TLV-LENGTH: `n - 4`, at least 253 (minimal).
        match *buf {
            [t, 253, hi, lo, ..] if usize::from(u16::from_be_bytes([hi, lo])) + 4 == n => (t, 4),
            _ => return None,
        }
    } else {
        // 255 or 256 bytes: a one-byte TLV-LENGTH of 253 or 254 is not one, and a three-byte
        // one of 251 or 252 is not minimal.
        return None;
    };
    let typ = u64::from(typ);
    if !is_packet(typ) {
        return None;
    }
    Some(Tlv {
        typ,
        value: buf.get(header..)?,
        wire: buf,
        offset,
    })
}

/// [`from_read_tlv`](crate::view::from_read_tlv) of view `V` for the TLV of type `V::TYPE` with TLV-VALUE `value`, the
/// tail of `wire` (at `offset` in the outermost buffer; at most `u32::MAX` bytes, as [`tlv`]
/// reads it), its view wrapped by `wrap`: the fast path, then the general decoder when the
/// fast path declines.
///
/// Inlined into the entry point, whose result the view's fields are stored into once rather
/// than returned and copied through each `Option` and `Result` on the way. An out-of-line copy
/// per view and wrapper, with the TLV header read in the entry point's caller, took about 15
/// instructions more per Interest/Data exchange (callgrind, `benches/examples/exchange.rs`).
#[inline(always)]
pub(crate) fn read_as<'a, V: View<'a>, R>(
    value: &'a [u8],
    wire: &'a [u8],
    offset: usize,
    wrap: impl FnOnce(V) -> R,
) -> Result<R> {
    debug_assert!(wire.len() <= u32::MAX as usize && wire.ends_with(value));
    let t = Tlv {
        typ: V::TYPE,
        value,
        wire,
        offset,
    };
    match V::fast(&t) {
        Some(v) => Ok(wrap(v)),
        None => V::general(t).map(wrap),
    }
}

/// The bytes after the element at the start of `rest`, whatever its type, for a one-byte
/// TLV-TYPE (1..=252) and a minimal one- or three-byte TLV-LENGTH whose value fits.
#[inline(always)]
pub(crate) fn skip(rest: &[u8]) -> Option<&[u8]> {
    match rest.first() {
        Some(&t @ 1..=252) => element(rest, t).map(|(_, after)| after),
        _ => None,
    }
}

/// Number of components in a Name's TLV-VALUE when every component has a one-byte TLV-TYPE
/// in 3..=252 (neither 0 nor a digest type, so nothing to check beyond bounds) and a one-byte
/// TLV-LENGTH; `None` otherwise.
#[inline(always)]
pub(crate) fn name_count(value: &[u8]) -> Option<usize> {
    if value.len() < SHORT_NAME {
        return short_name_count(value);
    }
    let mut pos = 0;
    let mut count = 0;
    while pos < value.len() - 1 {
        let (Some(&t), Some(&l)) = (value.get(pos), value.get(pos + 1)) else {
            return None;
        };
        if l > 252 || !(3..=252).contains(&t) {
            return None;
        }
        pos += 2 + usize::from(l);
        count += 1;
    }
    (pos == value.len()).then_some(count)
}

/// [`name_count`] for a name shorter than [`SHORT_NAME`], with no test per component: a
/// TLV-TYPE outside 3..=252 moves the walk past the end (its step is `SHORT_NAME`), and so
/// does a TLV-LENGTH that is not one byte (its first byte, 253 to 255, read as a length),
/// which the last check refuses.
#[inline(always)]
fn short_name_count(value: &[u8]) -> Option<usize> {
    debug_assert!(value.len() < SHORT_NAME);
    let Some(last) = value.len().checked_sub(1) else {
        return Some(0);
    };
    // By position rather than by sub-slice: a component running past the end leaves `pos`
    // past it, which ends the loop and fails the last check, so the only bounds check per
    // component is the loop's own (the compiler drops the two `get`s' checks). Two
    // components a round: one count update rather than two.
    let mut pos = 0;
    let mut count = 0;
    while pos < last {
        let (Some(&t), Some(&l)) = (value.get(pos), value.get(pos + 1)) else {
            return None;
        };
        pos += NAME_STEP[usize::from(t)];
        pos += usize::from(l);
        if pos >= last {
            count += 1;
            break;
        }
        let (Some(&t), Some(&l)) = (value.get(pos), value.get(pos + 1)) else {
            return None;
        };
        pos += NAME_STEP[usize::from(t)];
        pos += usize::from(l);
        count += 2;
    }
    (pos == value.len()).then_some(count)
}

/// Names shorter than this take [`name_count`]'s walk without tests.
const SHORT_NAME: usize = 255;

/// [`name_count`]'s step past a component's TLV-LENGTH byte by its one-byte TLV-TYPE: the
/// two header bytes for a type in 3..=252, and past the end of any short name otherwise.
static NAME_STEP: [usize; 256] = {
    let mut t = [SHORT_NAME; 256];
    let mut i = 3;
    while i <= 252 {
        t[i] = 2;
        i += 1;
    }
    t
};

/// Bytes `at` and `at + 1` of `bytes` as one number, to compare a one-byte TLV-TYPE and
/// TLV-LENGTH with a constant pair in one test.
#[inline(always)]
pub(crate) const fn pair<const N: usize>(bytes: &[u8; N], at: usize) -> u16 {
    u16::from_ne_bytes([bytes[at], bytes[at + 1]])
}

/// Bytes `at` to `at + 3` of `bytes` as one number, like [`pair`] for two such pairs.
#[inline(always)]
pub(crate) const fn quad<const N: usize>(bytes: &[u8; N], at: usize) -> u32 {
    u32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// Whether `len` is a NonNegativeInteger's length (1, 2, 4 or 8).
#[inline(always)]
pub(crate) const fn nni_len_ok(len: usize) -> bool {
    // Bits 1, 2, 4 and 8: one test, where `is_power_of_two` takes several.
    len <= 8 && (0b1_0001_0110 >> len) & 1 == 1
}

/// The NonNegativeInteger `value` (`None` unless it is 1, 2, 4 or 8 bytes).
#[inline(always)]
pub(crate) fn nni_value(value: &[u8]) -> Option<u64> {
    Some(match *value {
        [a] => u64::from(a),
        [a, b] => u64::from(u16::from_be_bytes([a, b])),
        [a, b, c, d] => u64::from(u32::from_be_bytes([a, b, c, d])),
        [a, b, c, d, e, f, g, h] => u64::from_be_bytes([a, b, c, d, e, f, g, h]),
        _ => return None,
    })
}

/// Splits a one-byte-TLV-TYPE element of type `typ` holding a NonNegativeInteger off the
/// start of `rest`: its value and the bytes after it. `None` for another type or a bad length.
#[inline(always)]
pub(crate) fn nni(rest: &[u8], typ: u8) -> Option<(u64, &[u8])> {
    match *rest {
        // Two bytes first, the usual length of lifetimes and freshness periods in
        // milliseconds: no dispatch on the length.
        [t, 2, a, b, ref tail @ ..] if t == typ => {
            Some((u64::from(u16::from_be_bytes([a, b])), tail))
        }
        [t, l, ref tail @ ..] if t == typ => {
            let (value, after) = tail.split_at_checked(usize::from(l))?;
            Some((nni_value(value)?, after))
        }
        _ => None,
    }
}

/// Like [`nni`], for an NDNLPv2 field whose TLV-TYPE `typ` (253..=65535) takes three bytes.
#[inline(always)]
pub(crate) fn nni3(rest: &[u8], typ: u16) -> Option<(u64, &[u8])> {
    let [hi, lo] = typ.to_be_bytes();
    match *rest {
        [253, a, b, l, ref tail @ ..] if a == hi && b == lo => {
            let (value, after) = tail.split_at_checked(usize::from(l))?;
            Some((nni_value(value)?, after))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements() {
        let e: &[u8] = &[];
        assert_eq!(element(&[8, 1, 0, 9], 8), Some((&[0][..], &[9][..])));
        assert_eq!(element(&[8, 1, 0], 7), None, "another type");
        assert_eq!(element(&[8, 2, 0], 8), None, "past the end");
        assert_eq!(element(&[8], 8), None, "no length");
        let mut long = vec![21, 253, 1, 0];
        long.resize(4 + 256, 0);
        assert_eq!(element(&long, 21), Some((&long[4..], e)));
        assert_eq!(
            element(&[21, 253, 0, 5, 0, 0, 0, 0, 0], 21),
            None,
            "non-minimal"
        );
        assert_eq!(
            element(&[21, 254, 0, 0, 0, 1, 0], 21),
            None,
            "five-byte length"
        );
        let t = |buf, offset| {
            tlv(buf, offset).map(|(t, after)| (t.typ, t.value, t.wire, t.offset, after))
        };
        assert_eq!(
            t(&[9, 1, 0, 7], 3),
            Some((9, &[0][..], &[9, 1, 0][..], 3, &[7][..]))
        );
        assert_eq!(t(&long, 0), Some((21, &long[4..], &long[..], 0, e)));
        assert_eq!(t(&[9, 2, 0], 0), None, "past the end");
        assert_eq!(t(&[0, 0], 0), None, "type 0");
        assert_eq!(t(&[253, 0, 253, 0], 0), None, "three-byte type");
        assert_eq!(t(&[9, 253, 0, 1, 0], 0), None, "non-minimal");
        assert_eq!(t(&[9, 254, 0, 1, 0, 0], 0), None, "five-byte length");
        assert_eq!(t(&[9], 0), None, "no length");
        let p = |buf, padded| packet(buf, 0, padded).map(|t| t.wire);
        assert_eq!(p(&[5, 0], false), Some(&[5, 0][..]));
        assert_eq!(p(&[5, 0, 0], false), None, "a byte after");
        assert_eq!(p(&[5, 0, 0, 0], true), Some(&[5, 0][..]), "padding");
        assert_eq!(p(&[5, 0, 0, 1], true), None, "not padding");
        assert_eq!(p(&[7, 0], false), None, "not a packet's type");
        assert_eq!(p(&[7, 0, 0], true), None, "not a packet's type, padded");
        assert_eq!(skip(&[9, 1, 0, 7]), Some(&[7][..]));
        assert_eq!(skip(&[0, 0]), None, "type 0");
        assert_eq!(skip(&[253, 0, 253, 0]), None, "three-byte type");
    }

    #[test]
    fn last_elements() {
        let e: &[u8] = &[];
        assert_eq!(last(&[23, 2, 1, 2], 23), Some(&[1, 2][..]));
        assert_eq!(last(&[23, 0], 23), Some(e));
        assert_eq!(last(&[23, 2, 1, 2], 22), None, "another type");
        assert_eq!(last(&[23, 2, 1, 2, 0], 23), None, "a byte after");
        assert_eq!(last(&[23, 2, 1], 23), None, "past the end");
        assert_eq!(last(&[23], 23), None, "no length");
        assert_eq!(last(e, 23), None, "nothing");
        let mut long = vec![23, 253, 0, 253];
        long.resize(4 + 253, 7);
        assert_eq!(
            last(&long, 23),
            Some(&long[4..]),
            "the shortest three-byte length"
        );
        long.push(0);
        assert_eq!(last(&long, 23), None, "a byte after a three-byte length");
        assert_eq!(last(&long[..long.len() - 2], 23), None, "one short");
        let mut non_minimal = vec![23, 253, 0, 252];
        non_minimal.resize(4 + 252, 7);
        assert_eq!(last(&non_minimal, 23), None, "non-minimal");
        assert_eq!(
            last(&[23, 254, 0, 0, 0, 1, 9], 23),
            None,
            "five-byte length"
        );
        assert_eq!(last(&[23, 253, 1], 23), None, "truncated length");
    }

    /// `packet` reads the TLV-LENGTH of a packet filling its buffer from the buffer's length:
    /// the one-byte form up to 254 bytes, the three-byte form from 257, neither in between,
    /// as `tlv` reads them (which the padded path still uses).
    #[test]
    fn packets_filling_their_buffer() {
        let with = |header: &[u8], len: usize| {
            let mut b = header.to_vec();
            b.resize(len, 0x42);
            b
        };
        let cases: [(&str, Vec<u8>, bool); 12] = [
            ("252-byte value", with(&[6, 252], 254), true),
            ("253-byte value", with(&[6, 253, 0, 253], 257), true),
            ("a one-byte length of 253", with(&[6, 253], 255), false),
            ("a one-byte length of 254", with(&[6, 254], 256), false),
            (
                "a three-byte length of 251",
                with(&[6, 253, 0, 251], 255),
                false,
            ),
            (
                "a three-byte length of 252",
                with(&[6, 253, 0, 252], 256),
                false,
            ),
            ("one byte short", with(&[6, 252], 253), false),
            ("three-byte, one short", with(&[6, 253, 0, 253], 256), false),
            ("three-byte, one over", with(&[6, 253, 0, 253], 258), false),
            (
                "the longest three-byte",
                with(&[6, 253, 255, 255], 65_539),
                true,
            ),
            (
                "a five-byte length",
                with(&[6, 254, 0, 1, 0, 0], 65_542),
                false,
            ),
            ("an LpPacket", with(&[100, 253, 1, 0], 260), true),
        ];
        for (what, buf, fills) in cases {
            let general = tlv(&buf, 3)
                .filter(|(_, rest)| rest.is_empty())
                .map(|(t, _)| t);
            assert_eq!(general.is_some(), fills, "{what}");
            assert_eq!(packet(&buf, 3, false), general, "{what}");
            assert_eq!(packet(&buf, 3, true), general, "{what}, padded");
            let mut other = buf.clone();
            other[0] = 7;
            assert_eq!(packet(&other, 3, false), None, "{what}, another type");
        }
        // Padding after packets of every header form: the padded path.
        for (header, len) in [(&[5, 252][..], 254), (&[5, 253, 0, 253], 257), (&[5, 0], 2)] {
            let mut buf = with(header, len);
            buf.extend([0; 3]);
            let t = packet(&buf, 0, true).expect("padded");
            assert_eq!(t.wire.len(), len);
            assert_eq!(packet(&buf, 0, false), None, "padding, not allowed");
        }
    }

    #[test]
    fn pairs_and_quads() {
        let x = [10, 4, 12, 2, 34];
        assert_eq!(pair(&x, 0), pair(&[10, 4], 0));
        assert_ne!(pair(&x, 0), pair(&[10, 5], 0));
        assert_ne!(pair(&x, 0), pair(&[11, 4], 0));
        assert_ne!(pair(&x, 0), pair(&[4, 10], 0));
        assert_eq!(pair(&x, 3), pair(&[2, 34], 0));
        assert_eq!(quad(&x, 1), quad(&[4, 12, 2, 34], 0));
        for i in 0..4 {
            let mut y = [4, 12, 2, 34];
            y[i] ^= 1;
            assert_ne!(quad(&x, 1), quad(&y, 0), "byte {i}");
        }
    }

    #[test]
    fn name_counts() {
        assert_eq!(name_count(&[]), Some(0));
        assert_eq!(name_count(&[8, 1, b'a', 8, 0]), Some(2));
        assert_eq!(name_count(&[8, 2, b'a']), None, "past the end");
        assert_eq!(name_count(&[8, 0, 8]), None, "a lone byte");
        assert_eq!(name_count(&[1, 0]), None, "digest type");
        assert_eq!(name_count(&[8, 253, 0, 253]), None, "three-byte length");
        assert_eq!(name_count(&[8]), None, "only a lone byte");
        assert_eq!(
            name_count(&[8, 0, 8, 1, 1, 8]),
            None,
            "a lone byte after two"
        );
        assert_eq!(name_count(&[8, 3, 1, 1]), None, "past the end by two");
        assert_eq!(name_count(&[252, 0, 3, 1, 0]), Some(2), "the edge types");
        assert_eq!(name_count(&[2, 0]), None, "a ParametersSha256Digest type");
        assert_eq!(name_count(&[253, 0]), None, "a three-byte type");
        assert_eq!(
            name_count(&[8, 252]),
            None,
            "the longest short length, past the end"
        );
        // Short names (under 255 bytes) take the walk without tests: every refusal must come
        // from the step past the end.
        for t in [0, 1, 2, 253, 254, 255] {
            assert_eq!(name_count(&[8, 0, t, 0]), None, "type {t}");
            assert_eq!(name_count(&[t, 0, 8, 0]), None, "type {t} first");
        }
        for l in [253, 254, 255] {
            let mut v = vec![8, l];
            v.resize(usize::from(l) + 2, 0);
            assert_eq!(name_count(&v[..254]), None, "length byte {l}");
            assert_eq!(name_count(&v), None, "length byte {l}, long name");
        }
        let mut v = vec![8, 250];
        v.resize(252, 0);
        v.extend([8, 0]);
        assert_eq!(name_count(&v), Some(2), "254 bytes, the longest short name");
        v.extend([8, 0]);
        assert_eq!(name_count(&v), Some(3), "256 bytes, a long name");
        v.extend([1, 0]);
        assert_eq!(name_count(&v), None, "a long name with a digest type");
        v.truncate(256);
        v.extend([8, 253, 0, 0]);
        assert_eq!(name_count(&v), None, "a long name with a three-byte length");
        v.truncate(256);
        v.push(8);
        assert_eq!(name_count(&v), None, "a long name with a lone byte");
        // Names of one to seven components (the walk takes two a round), with a bad
        // component, or a lone byte, at each place.
        for n in 1..=7 {
            let good: Vec<u8> = (0..n).flat_map(|i| [8, 1, i]).collect();
            assert_eq!(name_count(&good), Some(usize::from(n)), "{n} components");
            let mut lone = good.clone();
            lone.push(8);
            assert_eq!(name_count(&lone), None, "{n} components and a lone byte");
            assert_eq!(
                name_count(&good[..good.len() - 1]),
                None,
                "{n}, the last cut"
            );
            for k in 0..usize::from(n) {
                for bad in [[0, 1], [2, 1], [253, 1], [8, 2], [8, 253]] {
                    let mut v = good.clone();
                    v[3 * k..3 * k + 2].copy_from_slice(&bad);
                    let general = crate::name::Name::from_value(&v).ok().map(|n| n.len());
                    let fast = name_count(&v);
                    assert!(fast.is_none() || fast == general, "{v:?}");
                    assert_eq!(fast, None, "{v:?}");
                }
            }
        }
        // Against the general decoder, on every name of two bytes-long components.
        for t in 0..=255u8 {
            for l in 0..=255u8 {
                for v in [&[t, l][..], &[8, 0, t, l], &[t, l, 8, 0]] {
                    let general = crate::name::Name::from_value(v).ok().map(|n| n.len());
                    let fast = name_count(v);
                    assert!(
                        fast.is_none() || fast == general,
                        "{v:?}: {fast:?} {general:?}"
                    );
                    if matches!(t, 3..=252) && l == 0 {
                        assert_eq!(fast, general, "{v:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn nnis() {
        assert!((0..=100).all(|l| nni_len_ok(l) == matches!(l, 1 | 2 | 4 | 8)));
        assert!(!nni_len_ok(usize::MAX) && !nni_len_ok(1 << 40));
        assert_eq!(nni(&[12, 2, 1, 0, 9], 12), Some((256, &[9][..])));
        assert_eq!(nni(&[12, 3, 1, 0, 0], 12), None);
        assert_eq!(nni(&[12, 4, 1, 0], 12), None);
        assert_eq!(nni(&[13, 1, 1], 12), None);
        assert_eq!(nni(&[13, 2, 1, 0], 12), None, "another type, two bytes");
        assert_eq!(nni(&[12, 2, 1], 12), None, "two bytes past the end");
        assert_eq!(nni(&[12, 1, 7], 12), Some((7, &[][..])));
        assert_eq!(nni(&[12, 4, 0, 1, 0, 0], 12), Some((1 << 16, &[][..])));
        assert_eq!(nni3(&[253, 3, 0x30, 1, 7], 0x330), Some((7, &[][..])));
        assert_eq!(nni3(&[253, 3, 0x31, 1, 7], 0x330), None);
    }
}
