//! The NDN URI scheme (packet format v0.3, "NDN URI Scheme"), with the naming-conventions
//! rev. 3 aliases: `seg=`, `off=`, `v=`, `t=`, `seq=`, plus `sha256digest=` and
//! `params-sha256=` for the two digest components.

use core::fmt;

use crate::component::DIGEST_LEN;
use crate::name::NameBuf;
use crate::tlv::{nni_len, read_nni};
use crate::types as tt;

/// Why a URI was refused, and the byte position in the string where the problem starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid NDN URI at byte {position}: {kind}")]
pub struct UriError {
    /// What is wrong.
    pub kind: UriErrorKind,
    /// Byte index into the string.
    pub position: usize,
}

/// What is wrong with a URI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UriErrorKind {
    /// A name URI must start with `/` (optionally after `ndn:`).
    #[error("a name must start with '/'")]
    MissingSlash,
    /// `//` inside a name: an empty component is written `...`.
    #[error("empty component (write an empty component as '...')")]
    EmptyComponent,
    /// `%` not followed by two hex digits.
    #[error("'%' must be followed by two hex digits")]
    BadPercent,
    /// A component whose value is `.` or `..` (reserved by the URI scheme).
    #[error("'.' and '..' are not valid components")]
    DotComponent,
    /// A typed component `N=...` whose N is 0, above 65535, or not a number.
    #[error("component type must be 1..=65535")]
    BadType,
    /// `seg=`, `v=` etc. need a decimal number that fits in 64 bits.
    #[error("expected a decimal number below 2^64")]
    BadNumber,
    /// `sha256digest=` and `params-sha256=` need exactly 64 hex digits.
    #[error("expected 64 hex digits")]
    BadDigest,
}

/// Components whose URI form is `alias=<decimal>`.
const NUMERIC_ALIASES: [(&str, u64); 5] = [
    ("seg", tt::SEGMENT_NAME_COMPONENT),
    ("off", tt::BYTE_OFFSET_NAME_COMPONENT),
    ("v", tt::VERSION_NAME_COMPONENT),
    ("t", tt::TIMESTAMP_NAME_COMPONENT),
    ("seq", tt::SEQUENCE_NUM_NAME_COMPONENT),
];

const HEX: &[u8; 16] = b"0123456789abcdef";

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Writes a component's URI form.
pub(crate) fn fmt_component(f: &mut fmt::Formatter<'_>, typ: u16, value: &[u8]) -> fmt::Result {
    let t = u64::from(typ);
    if t == tt::IMPLICIT_SHA256_DIGEST_COMPONENT || t == tt::PARAMETERS_SHA256_DIGEST_COMPONENT {
        if value.len() == DIGEST_LEN {
            let alias = if t == tt::IMPLICIT_SHA256_DIGEST_COMPONENT {
                "sha256digest="
            } else {
                "params-sha256="
            };
            f.write_str(alias)?;
            for b in value {
                write!(
                    f,
                    "{}{}",
                    HEX[usize::from(b >> 4)] as char,
                    HEX[usize::from(b & 15)] as char
                )?;
            }
            return Ok(());
        }
    } else if let Some((alias, _)) = NUMERIC_ALIASES.iter().find(|(_, ty)| *ty == t)
        && let Some(n) = read_nni(value)
        // Only the shortest encoding prints as `alias=N`: `seg=3` parses back to one byte,
        // so printing `50=%00%03` that way would give two names the same URI.
        && nni_len(n) == value.len()
    {
        return write!(f, "{alias}={n}");
    }
    if t != tt::GENERIC_NAME_COMPONENT {
        write!(f, "{typ}=")?;
    }
    if value.iter().all(|&b| b == b'.') {
        // Empty and all-period values get three more periods, so "", ".", ".." stay distinct.
        for _ in 0..value.len() + 3 {
            f.write_str(".")?;
        }
        return Ok(());
    }
    for &b in value {
        if is_unreserved(b) {
            write!(f, "{}", b as char)?;
        } else {
            write!(f, "%{:02X}", b)?;
        }
    }
    Ok(())
}

/// Parses an NDN URI into a name.
pub(crate) fn parse(s: &str) -> Result<NameBuf, UriError> {
    let err = |kind, position| UriError { kind, position };
    let (rest, mut pos) = match s.strip_prefix("ndn:") {
        Some(r) => (r, 4),
        None => (s, 0),
    };
    let Some(mut rest) = rest.strip_prefix('/') else {
        return Err(err(UriErrorKind::MissingSlash, pos));
    };
    pos += 1;
    let mut name = NameBuf::new();
    let mut value = Vec::new();
    while !rest.is_empty() {
        let (comp, next) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let last = next.is_empty() && !rest.ends_with('/');
        if comp.is_empty() {
            // Only the single trailing slash of "/a/" is tolerated (the loop ends before it).
            return Err(err(UriErrorKind::EmptyComponent, pos));
        }
        parse_component(comp, pos, &mut name, &mut value)?;
        pos += comp.len() + 1;
        rest = next;
        if last {
            break;
        }
    }
    Ok(name)
}

fn parse_component(
    comp: &str,
    pos: usize,
    name: &mut NameBuf,
    value: &mut Vec<u8>,
) -> Result<(), UriError> {
    let err = |kind, at: usize| UriError {
        kind,
        position: pos + at,
    };
    let (typ, text, text_at) = match comp.find('=') {
        Some(eq) => {
            let (prefix, text) = (&comp[..eq], &comp[eq + 1..]);
            if prefix == "sha256digest" || prefix == "params-sha256" {
                let typ = if prefix == "sha256digest" {
                    tt::IMPLICIT_SHA256_DIGEST_COMPONENT
                } else {
                    tt::PARAMETERS_SHA256_DIGEST_COMPONENT
                };
                let digest = parse_hex_digest(text).ok_or(err(UriErrorKind::BadDigest, eq + 1))?;
                name.push(typ as u16, &digest)
                    .map_err(|_| err(UriErrorKind::BadDigest, eq + 1))?;
                return Ok(());
            }
            if let Some((_, typ)) = NUMERIC_ALIASES.iter().find(|(a, _)| *a == prefix) {
                let n = parse_decimal(text).ok_or(err(UriErrorKind::BadNumber, eq + 1))?;
                name.push_number(*typ as u16, n)
                    .map_err(|_| err(UriErrorKind::BadNumber, eq + 1))?;
                return Ok(());
            }
            if !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit()) {
                let typ = parse_decimal(prefix)
                    .filter(|&t| (1..=0xFFFF).contains(&t))
                    .ok_or(err(UriErrorKind::BadType, 0))?;
                (typ, text, eq + 1)
            } else {
                (tt::GENERIC_NAME_COMPONENT, comp, 0)
            }
        }
        None => (tt::GENERIC_NAME_COMPONENT, comp, 0),
    };
    value.clear();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = bytes.get(i + 1).and_then(|&b| hex_val(b));
            let lo = bytes.get(i + 2).and_then(|&b| hex_val(b));
            let (Some(hi), Some(lo)) = (hi, lo) else {
                return Err(err(UriErrorKind::BadPercent, text_at + i));
            };
            value.push(hi << 4 | lo);
            i += 3;
        } else {
            value.push(bytes[i]);
            i += 1;
        }
    }
    if value.iter().all(|&b| b == b'.') {
        if value.len() < 3 {
            return Err(err(UriErrorKind::DotComponent, text_at));
        }
        value.truncate(value.len() - 3);
    }
    let is_digest = matches!(
        typ,
        tt::IMPLICIT_SHA256_DIGEST_COMPONENT | tt::PARAMETERS_SHA256_DIGEST_COMPONENT
    );
    name.push(typ as u16, value).map_err(|_| {
        if is_digest {
            err(UriErrorKind::BadDigest, text_at)
        } else {
            err(UriErrorKind::BadType, 0)
        }
    })?;
    Ok(())
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn parse_decimal(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_hex_digest(s: &str) -> Option<[u8; DIGEST_LEN]> {
    let b = s.as_bytes();
    if b.len() != 2 * DIGEST_LEN {
        return None;
    }
    let mut out = [0u8; DIGEST_LEN];
    for (i, o) in out.iter_mut().enumerate() {
        *o = hex_val(b[2 * i])? << 4 | hex_val(b[2 * i + 1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(s: &str) -> String {
        NameBuf::from_uri(s).unwrap().to_string()
    }

    #[test]
    fn generic_and_escapes() {
        assert_eq!(rt("/"), "/");
        assert_eq!(rt("ndn:/a/b"), "/a/b");
        assert_eq!(rt("/a/b/"), "/a/b");
        assert_eq!(rt("/hello%20world/%00%ff"), "/hello%20world/%00%FF");
        assert_eq!(rt("/a b"), "/a%20b");
        assert_eq!(rt("/..."), "/...");
        assert_eq!(rt("/...."), "/....");
        assert_eq!(rt("/%2E%2E%2E%2E%2E"), "/.....");
        assert_eq!(rt("/a=b"), "/a%3Db");
    }

    #[test]
    fn typed_components() {
        assert_eq!(
            rt("/a/seg=3/v=1700000000000/t=5/seq=0/off=4096"),
            "/a/seg=3/v=1700000000000/t=5/seq=0/off=4096"
        );
        assert_eq!(rt("/50=%03"), "/seg=3");
        assert_eq!(rt("/50=%00%00%03"), "/50=%00%00%03");
        assert_eq!(rt("/50=%00%03"), "/50=%00%03");
        assert_eq!(rt("/32=metadata"), "/32=metadata");
        assert_eq!(rt("/8=abc"), "/abc");
        assert_eq!(rt("/9=..."), "/9=...");
        let d = "/sha256digest=".to_string() + &"ab".repeat(32);
        assert_eq!(rt(&d), d);
        let d = "/params-sha256=".to_string() + &"0f".repeat(32);
        assert_eq!(rt(&d), d);
        assert_eq!(
            rt(&("/1=".to_string() + &"%AB".repeat(32))),
            "/sha256digest=".to_string() + &"ab".repeat(32)
        );
    }

    #[test]
    fn errors_with_positions() {
        let e = |s: &str| NameBuf::from_uri(s).unwrap_err();
        assert_eq!(e("a/b").kind, UriErrorKind::MissingSlash);
        assert_eq!(
            e("/a//b"),
            UriError {
                kind: UriErrorKind::EmptyComponent,
                position: 3
            }
        );
        assert_eq!(
            e("/abc/d%4"),
            UriError {
                kind: UriErrorKind::BadPercent,
                position: 6
            }
        );
        assert_eq!(
            e("/."),
            UriError {
                kind: UriErrorKind::DotComponent,
                position: 1
            }
        );
        assert_eq!(e("/a/..").kind, UriErrorKind::DotComponent);
        assert_eq!(e("/0=a").kind, UriErrorKind::BadType);
        assert_eq!(e("/65536=a").kind, UriErrorKind::BadType);
        assert_eq!(e("/seg=x").kind, UriErrorKind::BadNumber);
        assert_eq!(e("/seg=18446744073709551616").kind, UriErrorKind::BadNumber);
        assert_eq!(e("/sha256digest=abc").kind, UriErrorKind::BadDigest);
        assert_eq!(e("/1=abc").kind, UriErrorKind::BadDigest);
    }

    #[test]
    fn only_one_trailing_slash_is_tolerated() {
        assert_eq!(rt("/a/"), "/a");
        for bad in ["/a//", "//", "/a//b"] {
            assert_eq!(
                NameBuf::from_uri(bad).unwrap_err().kind,
                UriErrorKind::EmptyComponent,
                "{bad}"
            );
        }
    }
}
