//! TLV helpers shared by the elements: appending encoders over a `Vec`, and a field reader
//! that enforces the rules every decoder here follows.
//!
//! Decoding rules: elements may come in any order (as ndn-cxx and ndnd accept them), a
//! recognised element may not repeat, an unrecognised one is skipped when non-critical and
//! refused when critical (TLV-TYPE below 32 or odd, packet format v0.3 "evolvability").
//! Encoders write the order NFD (ndn-cxx) writes.

use ndx_codec::types::{self as tt, is_critical};
use ndx_codec::{Name, NameBuf, Reader, Tlv, push_nni_tlv, push_tlv, read_nni};

use crate::MgmtError;

/// Appends an optional NonNegativeInteger TLV.
pub(crate) fn put_opt_nni(out: &mut Vec<u8>, typ: u64, v: Option<u64>) {
    if let Some(v) = v {
        push_nni_tlv(out, typ, v);
    }
}

/// Appends a Name TLV.
pub(crate) fn put_name(out: &mut Vec<u8>, name: &NameBuf) {
    let n = name.as_name();
    push_tlv(out, tt::NAME, n.as_bytes());
}

/// Appends a TLV whose value `fill` writes.
pub(crate) fn put_nested(out: &mut Vec<u8>, typ: u64, fill: impl FnOnce(&mut Vec<u8>)) {
    let mut inner = Vec::new();
    fill(&mut inner);
    push_tlv(out, typ, &inner);
}

/// The single TLV that fills `wire`, which must be of type `typ` (`what` in messages).
pub(crate) fn read_outer<'a>(
    wire: &'a [u8],
    typ: u64,
    what: &'static str,
) -> Result<Tlv<'a>, MgmtError> {
    let mut r = Reader::new(wire);
    let t = r.read()?;
    if t.typ != typ {
        return Err(MgmtError::WrongType {
            expected: what,
            expected_type: typ,
            found: t.typ,
            offset: t.offset,
        });
    }
    if !r.is_empty() {
        return Err(MgmtError::TrailingBytes {
            what,
            len: r.remaining().len(),
        });
    }
    Ok(t)
}

/// The children of one element, read under the rules above.
pub(crate) struct Fields<'a> {
    reader: Reader<'a>,
    context: &'static str,
}

impl<'a> Fields<'a> {
    /// The children of `t`, an element called `context` in messages.
    pub(crate) fn of(t: &Tlv<'a>, context: &'static str) -> Self {
        Self {
            reader: t.children(),
            context,
        }
    }

    /// Elements in `buf` (a dataset's Content), which starts at `base` in the caller's buffer.
    pub(crate) fn over(buf: &'a [u8], base: usize, context: &'static str) -> Self {
        Self {
            reader: Reader::with_base(buf, base),
            context,
        }
    }

    /// The next element, `None` at the end.
    pub(crate) fn next(&mut self) -> Result<Option<Tlv<'a>>, MgmtError> {
        if self.reader.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.reader.read()?))
    }

    /// An element nobody recognised: skipped if non-critical, an error otherwise.
    pub(crate) fn unknown(&self, t: &Tlv<'a>) -> Result<(), MgmtError> {
        if is_critical(t.typ) {
            Err(MgmtError::UnknownCritical {
                typ: t.typ,
                context: self.context,
                offset: t.offset,
            })
        } else {
            Ok(())
        }
    }

    /// Stores `value` (decoded from `t`, called `what`) in an empty slot; a full slot means
    /// the element repeats.
    pub(crate) fn set<T>(
        &self,
        slot: &mut Option<T>,
        t: &Tlv<'a>,
        what: &'static str,
        value: T,
    ) -> Result<(), MgmtError> {
        if slot.is_some() {
            return Err(MgmtError::Duplicate {
                what,
                context: self.context,
                offset: t.offset,
            });
        }
        *slot = Some(value);
        Ok(())
    }

    /// Stores the NonNegativeInteger in `t` (see [`Fields::set`]).
    pub(crate) fn set_nni(
        &self,
        slot: &mut Option<u64>,
        t: &Tlv<'a>,
        what: &'static str,
    ) -> Result<(), MgmtError> {
        let v = nni(t, what)?;
        self.set(slot, t, what, v)
    }

    /// Stores the UTF-8 string in `t` (see [`Fields::set`]).
    pub(crate) fn set_string(
        &self,
        slot: &mut Option<String>,
        t: &Tlv<'a>,
        what: &'static str,
    ) -> Result<(), MgmtError> {
        let v = string(t, what)?;
        self.set(slot, t, what, v)
    }

    /// Stores the Name `t` (see [`Fields::set`]).
    pub(crate) fn set_name(
        &self,
        slot: &mut Option<NameBuf>,
        t: &Tlv<'a>,
    ) -> Result<(), MgmtError> {
        let v = name(t)?;
        self.set(slot, t, "Name", v)
    }

    /// The value of a required field, or `Missing`.
    pub(crate) fn required<T>(&self, slot: Option<T>, what: &'static str) -> Result<T, MgmtError> {
        slot.ok_or(MgmtError::Missing {
            what,
            context: self.context,
        })
    }
}

/// The NonNegativeInteger in `t`.
pub(crate) fn nni(t: &Tlv<'_>, what: &'static str) -> Result<u64, MgmtError> {
    read_nni(t.value).ok_or(MgmtError::BadInteger {
        what,
        len: t.value.len(),
        offset: t.offset,
    })
}

/// The UTF-8 string in `t`.
pub(crate) fn string(t: &Tlv<'_>, what: &'static str) -> Result<String, MgmtError> {
    core::str::from_utf8(t.value)
        .map(str::to_owned)
        .map_err(|_| MgmtError::NotUtf8 {
            what,
            offset: t.offset,
        })
}

/// The Name `t` (a whole Name TLV), validated; error offsets stay absolute.
pub(crate) fn name(t: &Tlv<'_>) -> Result<NameBuf, MgmtError> {
    Name::decode(t.wire).map(|n| n.to_buf()).map_err(|e| {
        MgmtError::Tlv(ndx_codec::Error {
            kind: e.kind,
            offset: e.offset + t.offset,
        })
    })
}
