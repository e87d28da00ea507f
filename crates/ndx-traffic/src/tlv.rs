//! Minimal TLV writing for the hot path (appends to a reused `Vec<u8>`).

/// Appends an NDN VAR-NUMBER.
pub fn put_varnum(out: &mut Vec<u8>, v: u64) {
    if v < 253 {
        out.push(v as u8);
    } else if v <= 0xffff {
        out.push(253);
        out.extend_from_slice(&(v as u16).to_be_bytes());
    } else if v <= 0xffff_ffff {
        out.push(254);
        out.extend_from_slice(&(v as u32).to_be_bytes());
    } else {
        out.push(255);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Size of a VAR-NUMBER.
pub fn varnum_len(v: u64) -> usize {
    match v {
        0..=252 => 1,
        253..=0xffff => 3,
        0x1_0000..=0xffff_ffff => 5,
        _ => 9,
    }
}

/// Size of a TLV whose value is `len` bytes.
pub fn tlv_len(typ: u64, len: usize) -> usize {
    varnum_len(typ) + varnum_len(len as u64) + len
}

/// Appends a TLV header (type and length).
pub fn put_header(out: &mut Vec<u8>, typ: u64, len: usize) {
    put_varnum(out, typ);
    put_varnum(out, len as u64);
}

/// Appends a whole TLV.
pub fn put_tlv(out: &mut Vec<u8>, typ: u64, value: &[u8]) {
    put_header(out, typ, value.len());
    out.extend_from_slice(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varnum_sizes_match_encoding() {
        for v in [0, 1, 252, 253, 0xffff, 0x1_0000, 0xffff_ffff, 0x1_0000_0000] {
            let mut out = Vec::new();
            put_varnum(&mut out, v);
            assert_eq!(out.len(), varnum_len(v), "{v}");
            assert_eq!(ndx_codec::read_varnum(&out).unwrap(), (v, out.len()));
        }
    }
}
