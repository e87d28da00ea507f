//! TLV primitives: VAR-NUMBER, NonNegativeInteger, a checked reader and a bounded writer.
//!
//! Every function here works on caller-provided slices, never allocates, never panics and
//! never reads or writes outside the slice it is given.

use crate::error::{Element, Error, ErrorKind, Result};

/// Largest valid TLV-TYPE (packet format v0.3 limits types to 32 bits).
pub const MAX_TYPE: u64 = u32::MAX as u64;

/// Reads a VAR-NUMBER at the start of `buf`. Returns the value and how many bytes it used.
///
/// The encoding must be minimal (`FD` only for values >= 253, `FE` only above `0xFFFF`, `FF`
/// only above `0xFFFF_FFFF`); a longer form is rejected as [`ErrorKind::NonMinimalVarNumber`],
/// so that equal values always have equal bytes (names compare bytewise).
/// Errors carry offsets relative to `buf`.
pub fn read_varnum(buf: &[u8]) -> Result<(u64, usize)> {
    let Some(&first) = buf.first() else {
        return Err(Error::new(ErrorKind::TruncatedVarNumber, 0));
    };
    let (len, min) = match first {
        0..=252 => return Ok((u64::from(first), 1)),
        253 => (2, 253),
        254 => (4, 0x1_0000),
        255 => (8, 0x1_0000_0000),
    };
    let Some(bytes) = buf.get(1..1 + len) else {
        return Err(Error::new(ErrorKind::TruncatedVarNumber, buf.len()));
    };
    let value = be_uint(bytes);
    if value < min {
        return Err(Error::new(ErrorKind::NonMinimalVarNumber, 0));
    }
    Ok((value, 1 + len))
}

/// Number of bytes the VAR-NUMBER encoding of `v` takes.
pub const fn varnum_len(v: u64) -> usize {
    if v < 253 {
        1
    } else if v <= 0xFFFF {
        3
    } else if v <= 0xFFFF_FFFF {
        5
    } else {
        9
    }
}

/// Writes the VAR-NUMBER `v` at the start of `buf`; returns its length (1, 3, 5 or 9), or
/// `None` (nothing written) when `buf` is shorter. The one VAR-NUMBER writer: [`Writer`],
/// the `push_*` appenders and the router's hot-path headers all use it.
#[inline(always)]
pub fn put_varnum(buf: &mut [u8], v: u64) -> Option<usize> {
    match v {
        0..=252 => {
            *buf.first_mut()? = v as u8;
            Some(1)
        }
        253..=0xFFFF => {
            let d = buf.get_mut(..3)?;
            d[0] = 253;
            d[1..].copy_from_slice(&(v as u16).to_be_bytes());
            Some(3)
        }
        0x1_0000..=0xFFFF_FFFF => {
            let d = buf.get_mut(..5)?;
            d[0] = 254;
            d[1..].copy_from_slice(&(v as u32).to_be_bytes());
            Some(5)
        }
        _ => {
            let d = buf.get_mut(..9)?;
            d[0] = 255;
            d[1..].copy_from_slice(&v.to_be_bytes());
            Some(9)
        }
    }
}

/// Appends the VAR-NUMBER `v` to `out`.
#[inline]
pub fn push_varnum(out: &mut Vec<u8>, v: u64) {
    let mut b = [0u8; 9];
    let n = put_varnum(&mut b, v).unwrap_or(0);
    out.extend_from_slice(&b[..n]);
}

/// Appends a TLV-TYPE and TLV-LENGTH to `out`.
#[inline]
pub fn push_header(out: &mut Vec<u8>, typ: u64, len: usize) {
    push_varnum(out, typ);
    push_varnum(out, len as u64);
}

/// Appends a whole TLV element to `out`.
#[inline]
pub fn push_tlv(out: &mut Vec<u8>, typ: u64, value: &[u8]) {
    push_header(out, typ, value.len());
    out.extend_from_slice(value);
}

/// Appends a TLV whose value is the shortest NonNegativeInteger encoding of `v` to `out`.
#[inline]
pub fn push_nni_tlv(out: &mut Vec<u8>, typ: u64, v: u64) {
    let n = nni_len(v);
    push_header(out, typ, n);
    out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
}

/// Total encoded size of a TLV with a value of `value_len` bytes.
pub const fn tlv_len(typ: u64, value_len: usize) -> usize {
    varnum_len(typ) + varnum_len(value_len as u64) + value_len
}

/// Decodes a NonNegativeInteger value (1, 2, 4 or 8 bytes, big-endian).
#[inline]
pub fn read_nni(value: &[u8]) -> Option<u64> {
    match *value {
        [a] => Some(u64::from(a)),
        [a, b] => Some(u64::from(u16::from_be_bytes([a, b]))),
        [a, b, c, d] => Some(u64::from(u32::from_be_bytes([a, b, c, d]))),
        [a, b, c, d, e, f, g, h] => Some(u64::from_be_bytes([a, b, c, d, e, f, g, h])),
        _ => None,
    }
}

/// Bytes the shortest NonNegativeInteger encoding of `v` takes.
pub const fn nni_len(v: u64) -> usize {
    if v <= 0xFF {
        1
    } else if v <= 0xFFFF {
        2
    } else if v <= 0xFFFF_FFFF {
        4
    } else {
        8
    }
}

/// Big-endian unsigned integer of up to 8 bytes (longer input keeps the low 8 bytes).
pub(crate) fn be_uint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// One TLV element, borrowed from the buffer it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    /// TLV-TYPE.
    pub typ: u64,
    /// TLV-VALUE.
    pub value: &'a [u8],
    /// The whole element: TLV-TYPE, TLV-LENGTH and TLV-VALUE.
    pub wire: &'a [u8],
    /// Offset of the element's first byte, relative to the outermost decoded buffer.
    pub offset: usize,
}

impl<'a> Tlv<'a> {
    /// Offset of the first TLV-VALUE byte, relative to the outermost decoded buffer.
    #[inline]
    pub fn value_offset(&self) -> usize {
        self.offset + (self.wire.len() - self.value.len())
    }

    /// A reader over this element's TLV-VALUE (its children).
    #[inline]
    pub fn children(&self) -> Reader<'a> {
        Reader::with_base(self.value, self.value_offset())
    }

    /// The value as a NonNegativeInteger, or `Invalid(what)` at this element.
    #[inline]
    pub fn nni(&self, what: Element) -> Result<u64> {
        read_nni(self.value).ok_or(Error::new(
            ErrorKind::BadLength {
                what,
                len: self.value.len(),
            },
            self.offset,
        ))
    }

    /// Checks that the value is `len` bytes long.
    #[inline]
    pub fn expect_len(&self, what: Element, len: usize) -> Result<()> {
        if self.value.len() == len {
            Ok(())
        } else {
            Err(self.bad_length(what))
        }
    }

    /// A `BadLength` error for this element.
    pub fn bad_length(&self, what: Element) -> Error {
        Error::new(
            ErrorKind::BadLength {
                what,
                len: self.value.len(),
            },
            self.offset,
        )
    }

    /// An error of `kind` located at this element.
    pub fn error(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.offset)
    }

    /// The child this element's value must start with, of TLV-TYPE `typ` (`what` in errors:
    /// [`ErrorKind::Missing`] at this element when the value is empty,
    /// [`ErrorKind::Unexpected`] at the child for another type), and a reader over the
    /// children after it.
    #[inline]
    pub(crate) fn first_child(&self, typ: u64, what: Element) -> Result<(Tlv<'a>, Reader<'a>)> {
        let mut r = self.children();
        if r.is_empty() {
            return Err(self.error(ErrorKind::Missing(what)));
        }
        let first = r.read()?;
        if first.typ != typ {
            return Err(first.error(ErrorKind::Unexpected {
                expected: what,
                found: first.typ,
            }));
        }
        Ok((first, r))
    }
}

/// A cursor over a sequence of TLV elements. Each element read is fully bounds-checked.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, reporting offsets relative to `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self::with_base(buf, 0)
    }

    /// A reader over `buf`, which starts at offset `base` of the outermost buffer.
    pub fn with_base(buf: &'a [u8], base: usize) -> Self {
        Self { buf, pos: 0, base }
    }

    /// True when every element has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The bytes not yet read.
    pub fn remaining(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// Offset of the next byte, relative to the outermost buffer.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// TLV-TYPE of the next element without consuming it; `None` at the end.
    pub fn peek_type(&self) -> Option<u64> {
        read_varnum(self.remaining()).ok().map(|(t, _)| t)
    }

    /// Reads the next element. At the end of input this is an error; check [`is_empty`] first.
    ///
    /// [`is_empty`]: Reader::is_empty
    #[inline(always)]
    pub fn read(&mut self) -> Result<Tlv<'a>> {
        let start = self.pos;
        let rest = self.remaining();
        // Fast paths: one-byte TLV-TYPE with a one-byte TLV-LENGTH (the common case in NDN
        // packets) or a minimal three-byte one (Data with a payload, LpPacket, Fragment).
        // Only the header is parsed out of line otherwise, so that the element itself is built
        // in registers on every path.
        let (typ, header, len) = match rest {
            [t @ 1..=252, l @ 0..=252, ..] => (u64::from(*t), 2, usize::from(*l)),
            [t @ 1..=252, 253, hi, lo, ..] if *hi != 0 || *lo >= 253 => (
                u64::from(*t),
                4,
                usize::from(u16::from_be_bytes([*hi, *lo])),
            ),
            _ => self.header_slow(rest)?,
        };
        let (Some(wire), Some(value)) = (rest.get(..header + len), rest.get(header..header + len))
        else {
            return Err(self.past_end(len as u64, rest.len().saturating_sub(header)));
        };
        self.pos = start + header + len;
        Ok(Tlv {
            typ,
            value,
            wire,
            offset: self.base + start,
        })
    }

    /// The TLV-TYPE, header size and TLV-LENGTH of the element at the start of `rest` (the
    /// bytes at `self.pos`), in any VAR-NUMBER form, with the checks of every form.
    #[inline(never)]
    fn header_slow(&self, rest: &[u8]) -> Result<(u64, usize, usize)> {
        let start = self.base + self.pos;
        let (typ, tn) = read_varnum(rest).map_err(|e| Error::new(e.kind, start + e.offset))?;
        if typ == 0 || typ > MAX_TYPE {
            return Err(Error::new(ErrorKind::InvalidType(typ), start));
        }
        let after_type = rest.get(tn..).unwrap_or(&[]);
        let (len, ln) =
            read_varnum(after_type).map_err(|e| Error::new(e.kind, start + tn + e.offset))?;
        let header = tn + ln;
        let remaining = rest.len() - header;
        if len > remaining as u64 {
            return Err(self.past_end(len, remaining));
        }
        Ok((typ, header, len as usize))
    }

    /// A [`ErrorKind::LengthPastEnd`] for the element at `self.pos`.
    #[cold]
    #[inline(never)]
    fn past_end(&self, length: u64, remaining: usize) -> Error {
        Error::new(
            ErrorKind::LengthPastEnd { length, remaining },
            self.base + self.pos,
        )
    }

    /// Reads the next element only if its TLV-TYPE is `typ`.
    pub fn read_if(&mut self, typ: u64) -> Result<Option<Tlv<'a>>> {
        if self.peek_type() == Some(typ) {
            self.read().map(Some)
        } else {
            Ok(None)
        }
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<Tlv<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.is_empty() {
            return None;
        }
        let item = self.read();
        if item.is_err() {
            // Framing is lost: stop after reporting the error.
            self.pos = self.buf.len();
        }
        Some(item)
    }
}

/// A bounded writer into a caller-provided buffer. Every write is checked; running out of
/// room yields [`ErrorKind::BufferTooSmall`] with the size the whole encoding needs.
#[derive(Debug)]
pub struct Writer<'b> {
    buf: &'b mut [u8],
    pos: usize,
    need: usize,
}

impl<'b> Writer<'b> {
    /// A writer at the start of `buf`; `need` is the total size reported if `buf` is too small.
    pub fn new(buf: &'b mut [u8], need: usize) -> Result<Self> {
        if buf.len() < need {
            return Err(Error::new(ErrorKind::BufferTooSmall { need }, 0));
        }
        Ok(Self { buf, pos: 0, need })
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.pos
    }

    /// True when nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.pos == 0
    }

    /// Appends raw bytes.
    #[inline]
    pub fn bytes(&mut self, b: &[u8]) -> Result<()> {
        let end = self.pos + b.len();
        let need = self.need;
        let dst = self
            .buf
            .get_mut(self.pos..end)
            .ok_or(Error::new(ErrorKind::BufferTooSmall { need }, end))?;
        dst.copy_from_slice(b);
        self.pos = end;
        Ok(())
    }

    /// Appends a VAR-NUMBER (one bounds check for its 1, 3, 5 or 9 bytes).
    #[inline]
    pub fn varnum(&mut self, v: u64) -> Result<()> {
        let need = self.need;
        let pos = self.pos;
        let n = self
            .buf
            .get_mut(pos..)
            .and_then(|rest| put_varnum(rest, v))
            .ok_or(Error::new(
                ErrorKind::BufferTooSmall { need },
                pos + varnum_len(v),
            ))?;
        self.pos = pos + n;
        Ok(())
    }

    /// Appends a TLV-TYPE and TLV-LENGTH.
    #[inline]
    pub fn header(&mut self, typ: u64, len: usize) -> Result<()> {
        self.varnum(typ)?;
        self.varnum(len as u64)
    }

    /// Appends a whole TLV element.
    #[inline]
    pub fn tlv(&mut self, typ: u64, value: &[u8]) -> Result<()> {
        self.header(typ, value.len())?;
        self.bytes(value)
    }

    /// Appends a TLV whose value is the shortest NonNegativeInteger encoding of `v`.
    pub fn nni_tlv(&mut self, typ: u64, v: u64) -> Result<()> {
        let n = nni_len(v);
        self.header(typ, n)?;
        let be = v.to_be_bytes();
        self.bytes(&be[8 - n..])
    }

    /// Appends a TLV whose value is `v` as 8 fixed-width big-endian bytes.
    pub fn u64_tlv(&mut self, typ: u64, v: u64) -> Result<()> {
        self.tlv(typ, &v.to_be_bytes())
    }
}

/// Reads the single TLV that fills `wire` exactly; trailing bytes are an error.
pub(crate) fn read_one(wire: &[u8]) -> Result<Tlv<'_>> {
    let mut r = Reader::new(wire);
    let t = r.read()?;
    if !r.is_empty() {
        return Err(Error::new(
            ErrorKind::TrailingBytes(r.remaining().len()),
            r.offset(),
        ));
    }
    Ok(t)
}

/// Encoded size of a TLV holding the shortest NonNegativeInteger encoding of `v`.
pub const fn nni_tlv_len(typ: u64, v: u64) -> usize {
    tlv_len(typ, nni_len(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_varnum_writers_agree_with_the_reader() {
        for v in [
            0,
            252,
            253,
            0xFFFF,
            0x1_0000,
            0xFFFF_FFFF,
            0x1_0000_0000,
            u64::MAX,
        ] {
            let n = varnum_len(v);
            let mut b = [0u8; 9];
            assert_eq!(put_varnum(&mut b, v), Some(n), "{v}");
            assert_eq!(read_varnum(&b[..n]).unwrap(), (v, n), "{v}");
            // One byte short: nothing written, None.
            let mut short = vec![0xAA; n - 1];
            assert_eq!(put_varnum(&mut short, v), None, "{v}");
            assert!(short.iter().all(|&x| x == 0xAA));
            let mut pushed = Vec::new();
            push_varnum(&mut pushed, v);
            assert_eq!(pushed, &b[..n]);
            // The appenders write what the slice Writer writes.
            let mut appended = Vec::new();
            push_nni_tlv(&mut appended, v, v);
            push_tlv(&mut appended, 7, b"abc");
            let need = nni_tlv_len(v, v) + tlv_len(7, 3);
            let mut written = vec![0u8; need];
            let mut w = Writer::new(&mut written, need).unwrap();
            w.nni_tlv(v, v).unwrap();
            w.tlv(7, b"abc").unwrap();
            assert_eq!(w.len(), need);
            assert_eq!(appended, written, "{v}");
        }
    }

    #[test]
    fn varnum_forms() {
        assert_eq!(read_varnum(&[0]).unwrap(), (0, 1));
        assert_eq!(read_varnum(&[252]).unwrap(), (252, 1));
        assert_eq!(read_varnum(&[253, 0, 253]).unwrap(), (253, 3));
        assert_eq!(read_varnum(&[253, 0xFF, 0xFF]).unwrap(), (0xFFFF, 3));
        assert_eq!(read_varnum(&[254, 0, 1, 0, 0]).unwrap(), (0x1_0000, 5));
        assert_eq!(
            read_varnum(&[255, 0, 0, 0, 1, 0, 0, 0, 0]).unwrap(),
            (0x1_0000_0000, 9)
        );
        assert_eq!(read_varnum(&[255; 9]).unwrap(), (u64::MAX, 9));
    }

    #[test]
    fn varnum_rejects_non_minimal_and_truncated() {
        for bad in [
            &[253, 0, 5][..],
            &[253, 0, 252][..],
            &[254, 0, 0, 0xFF, 0xFF][..],
            &[255, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF][..],
        ] {
            assert_eq!(
                read_varnum(bad).unwrap_err().kind,
                ErrorKind::NonMinimalVarNumber
            );
        }
        for bad in [&[][..], &[253, 1][..], &[254, 0, 1, 0][..], &[255, 1][..]] {
            assert_eq!(
                read_varnum(bad).unwrap_err().kind,
                ErrorKind::TruncatedVarNumber
            );
        }
    }

    #[test]
    fn writer_round_trips_every_form() {
        for v in [
            0,
            1,
            252,
            253,
            254,
            0xFFFF,
            0x1_0000,
            0xFFFF_FFFF,
            0x1_0000_0000,
            u64::MAX,
        ] {
            let mut buf = [0u8; 9];
            let mut w = Writer::new(&mut buf, 9).unwrap();
            w.varnum(v).unwrap();
            let n = w.len();
            assert_eq!(n, varnum_len(v));
            assert_eq!(read_varnum(&buf[..n]).unwrap(), (v, n));
        }
    }

    #[test]
    fn reader_reports_absolute_offsets() {
        // Two elements, the second claims 5 bytes but has 1.
        let buf = [8, 1, b'a', 8, 5, b'b'];
        let mut r = Reader::with_base(&buf, 100);
        let a = r.read().unwrap();
        assert_eq!(
            (a.typ, a.value, a.offset, a.value_offset()),
            (8, &b"a"[..], 100, 102)
        );
        let e = r.read().unwrap_err();
        assert_eq!(e.offset, 103);
        assert_eq!(
            e.kind,
            ErrorKind::LengthPastEnd {
                length: 5,
                remaining: 1
            }
        );
    }

    #[test]
    fn reader_errors_are_the_same_on_every_header_form() {
        // (bytes, kind, offset) with the reader based at 10.
        let past_end = |length, remaining| ErrorKind::LengthPastEnd { length, remaining };
        let cases: [(&[u8], ErrorKind, usize); 7] = [
            // One-byte length, three-byte length, and a long TLV-TYPE: value too short.
            (&[8, 3, 1], past_end(3, 1), 10),
            (&[8, 253, 1, 0, 0], past_end(256, 1), 10),
            (&[253, 1, 0, 2, 0], past_end(2, 1), 10),
            // Non-minimal and truncated TLV-LENGTH, non-minimal TLV-TYPE, no TLV-LENGTH.
            (&[8, 253, 0, 5], ErrorKind::NonMinimalVarNumber, 11),
            (&[8, 254, 0], ErrorKind::TruncatedVarNumber, 13),
            (&[253, 0, 8, 0], ErrorKind::NonMinimalVarNumber, 10),
            (&[8], ErrorKind::TruncatedVarNumber, 11),
        ];
        for (bytes, kind, offset) in cases {
            let e = Reader::with_base(bytes, 10).read().unwrap_err();
            assert_eq!((e.kind, e.offset), (kind, offset), "{bytes:?}");
        }
        // A long-form header that fits reads like any other.
        let t = Reader::with_base(&[253, 1, 0, 1, 7], 10).read().unwrap();
        assert_eq!((t.typ, t.value, t.value_offset()), (256, &[7][..], 14));
    }

    #[test]
    fn reader_rejects_type_zero_and_huge_types() {
        assert_eq!(
            Reader::new(&[0, 0]).read().unwrap_err().kind,
            ErrorKind::InvalidType(0)
        );
        let huge = [255, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        assert_eq!(
            Reader::new(&huge).read().unwrap_err().kind,
            ErrorKind::InvalidType(0x1_0000_0000)
        );
    }

    #[test]
    fn nni_lengths() {
        assert_eq!(read_nni(&[5]), Some(5));
        assert_eq!(read_nni(&[1, 0]), Some(256));
        assert_eq!(read_nni(&[0, 0, 1]), None);
        assert_eq!(read_nni(&[]), None);
        assert_eq!(read_nni(&[0; 8]), Some(0));
        for v in [0, 0xFF, 0x100, 0xFFFF, 0x1_0000, 0xFFFF_FFFF, 0x1_0000_0000] {
            let mut buf = [0u8; 16];
            let mut w = Writer::new(&mut buf, 16).unwrap();
            w.nni_tlv(50, v).unwrap();
            let n = w.len();
            let t = Reader::new(&buf[..n]).read().unwrap();
            assert_eq!(t.value.len(), nni_len(v));
            assert_eq!(read_nni(t.value), Some(v));
            assert_eq!(n, nni_tlv_len(50, v));
        }
    }

    #[test]
    fn writer_refuses_small_buffers() {
        let mut buf = [0u8; 2];
        assert_eq!(
            Writer::new(&mut buf, 3).unwrap_err().kind,
            ErrorKind::BufferTooSmall { need: 3 }
        );
    }
}
