//! Hex text to bytes, with errors that say where.

/// Why a hex line was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum HexError {
    /// A character that is neither a hex digit nor white space.
    #[error("column {column}: {found:?} is not a hex digit")]
    BadDigit { column: usize, found: char },
    /// An odd number of hex digits.
    #[error("odd number of hex digits ({0})")]
    OddLength(usize),
}

/// Decodes hex digits, ignoring white space, an optional `0x` prefix and `:` separators.
pub(crate) fn decode(line: &str) -> Result<Vec<u8>, HexError> {
    let body = line.trim_start();
    let skipped = line.len() - body.len();
    let (body, skipped) = match body.strip_prefix("0x") {
        Some(b) => (b, skipped + 2),
        None => (body, skipped),
    };
    let mut out = Vec::with_capacity(body.len() / 2);
    let mut high: Option<u8> = None;
    let mut digits = 0;
    for (i, c) in body.char_indices() {
        if c.is_ascii_whitespace() || c == ':' {
            continue;
        }
        let Some(v) = c.to_digit(16) else {
            return Err(HexError::BadDigit {
                column: skipped + i + 1,
                found: c,
            });
        };
        digits += 1;
        let v = v as u8;
        match high.take() {
            Some(h) => out.push(h << 4 | v),
            None => high = Some(v),
        }
    }
    if high.is_some() {
        return Err(HexError::OddLength(digits));
    }
    Ok(out)
}

/// Lowercase hex of `bytes`.
pub(crate) fn encode(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_with_separators() {
        assert_eq!(decode("05 0b:07").unwrap(), vec![5, 0x0b, 7]);
        assert_eq!(decode("0xAbCd").unwrap(), vec![0xab, 0xcd]);
        assert_eq!(decode("").unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(
            decode("  05zz").unwrap_err(),
            HexError::BadDigit {
                column: 5,
                found: 'z'
            }
        );
        assert_eq!(decode("050").unwrap_err(), HexError::OddLength(3));
    }

    #[test]
    fn round_trip() {
        assert_eq!(encode(&decode("00ff10").unwrap()), "00ff10");
    }
}
