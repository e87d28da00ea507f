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
    let mut rest = value;
    let mut count = 0;
    while let [t, l, ref tail @ ..] = *rest {
        if !(3..=252).contains(&t) || l > 252 {
            return None;
        }
        rest = tail.get(usize::from(l)..)?;
        count += 1;
    }
    rest.is_empty().then_some(count)
}

/// Whether `len` is a NonNegativeInteger's length (1, 2, 4 or 8).
#[inline(always)]
pub(crate) const fn nni_len_ok(len: usize) -> bool {
    len.is_power_of_two() && len <= 8
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
        assert_eq!(skip(&[9, 1, 0, 7]), Some(&[7][..]));
        assert_eq!(skip(&[0, 0]), None, "type 0");
        assert_eq!(skip(&[253, 0, 253, 0]), None, "three-byte type");
    }

    #[test]
    fn name_counts() {
        assert_eq!(name_count(&[]), Some(0));
        assert_eq!(name_count(&[8, 1, b'a', 8, 0]), Some(2));
        assert_eq!(name_count(&[8, 2, b'a']), None, "past the end");
        assert_eq!(name_count(&[8, 0, 8]), None, "a lone byte");
        assert_eq!(name_count(&[1, 0]), None, "digest type");
        assert_eq!(name_count(&[8, 253, 0, 253]), None, "three-byte length");
    }

    #[test]
    fn nnis() {
        assert!((1..=8).all(|l| nni_len_ok(l) == matches!(l, 1 | 2 | 4 | 8)) && !nni_len_ok(0));
        assert_eq!(nni(&[12, 2, 1, 0, 9], 12), Some((256, &[9][..])));
        assert_eq!(nni(&[12, 3, 1, 0, 0], 12), None);
        assert_eq!(nni(&[12, 4, 1, 0], 12), None);
        assert_eq!(nni(&[13, 1, 1], 12), None);
        assert_eq!(nni3(&[253, 3, 0x30, 1, 7], 0x330), Some((7, &[][..])));
        assert_eq!(nni3(&[253, 3, 0x31, 1, 7], 0x330), None);
    }
}
