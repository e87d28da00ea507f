//! Building the producer's answer: a small, DigestSha256-signed Data for any name, inside an
//! LpPacket carrying the Interest's PitToken when there was one.

use ndx_codec::types as tt;
use sha2::{Digest, Sha256};

use ndx_codec::{push_header, push_tlv, tlv_len};

/// How the producer signs its Data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signing {
    /// A real DigestSha256 over each Data's signed portion.
    Digest,
    /// DigestSha256 SignatureType with a fixed (wrong) 32-byte value: well-formed, not valid.
    Fixed,
}

/// Encodes Data answers into a reused buffer.
#[derive(Debug, Clone)]
pub struct DataBuilder {
    content: Vec<u8>,
    freshness_ms: u64,
    signing: Signing,
    buf: Vec<u8>,
    signed: Vec<u8>,
}

const SIG_INFO: [u8; 3] = [tt::SIGNATURE_TYPE as u8, 1, 0];

impl DataBuilder {
    /// Data with `content_len` bytes of content and this FreshnessPeriod.
    pub fn new(content_len: usize, freshness_ms: u64, signing: Signing) -> Self {
        Self {
            content: (0..content_len).map(|i| b'a' + (i % 26) as u8).collect(),
            freshness_ms,
            signing,
            buf: Vec::with_capacity(512 + content_len),
            signed: Vec::with_capacity(512 + content_len),
        }
    }

    /// Encodes the answer for an Interest named `name_value` (the Name's TLV-VALUE), wrapped in
    /// an LpPacket with `pit_token` when given. The bytes stay valid until the next call.
    pub fn build(&mut self, name_value: &[u8], pit_token: Option<&[u8]>) -> &[u8] {
        // Signed portion: Name, MetaInfo, Content, SignatureInfo.
        let s = &mut self.signed;
        s.clear();
        push_tlv(s, tt::NAME, name_value);
        let fresh = self.freshness_ms.to_be_bytes();
        let skip = fresh.iter().take_while(|&&b| b == 0).count().min(7);
        // NonNegativeInteger: 1, 2, 4 or 8 bytes.
        let nni: &[u8] = match 8 - skip {
            1 => &fresh[7..],
            2 => &fresh[6..],
            3 | 4 => &fresh[4..],
            _ => &fresh[..],
        };
        push_header(s, tt::META_INFO, tlv_len(tt::FRESHNESS_PERIOD, nni.len()));
        push_tlv(s, tt::FRESHNESS_PERIOD, nni);
        push_tlv(s, tt::CONTENT, &self.content);
        push_tlv(s, tt::SIGNATURE_INFO, &SIG_INFO);
        let digest: [u8; 32] = match self.signing {
            Signing::Digest => Sha256::digest(&s[..]).into(),
            Signing::Fixed => [0x5a; 32],
        };
        let data_value = s.len() + tlv_len(tt::SIGNATURE_VALUE, 32);
        let data_len = tlv_len(tt::DATA, data_value);
        let b = &mut self.buf;
        b.clear();
        if let Some(tok) = pit_token {
            let lp_value =
                tlv_len(tt::LP_PIT_TOKEN, tok.len()) + tlv_len(tt::LP_FRAGMENT, data_len);
            push_header(b, tt::LP_PACKET, lp_value);
            push_tlv(b, tt::LP_PIT_TOKEN, tok);
            push_header(b, tt::LP_FRAGMENT, data_len);
        }
        push_header(b, tt::DATA, data_value);
        b.extend_from_slice(s);
        push_tlv(b, tt::SIGNATURE_VALUE, &digest);
        &self.buf
    }

    /// The bytes of the last [`DataBuilder::build`].
    pub fn last(&self) -> &[u8] {
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndx_codec::{NameBuf, Packet};

    fn name_value(uri: &str) -> Vec<u8> {
        let n = NameBuf::from_uri(uri).unwrap();
        n.as_name().as_bytes().to_vec()
    }

    #[test]
    fn bare_data_is_valid_and_signed() {
        let mut b = DataBuilder::new(100, 10_000, Signing::Digest);
        let nv = name_value("/bench/x/y");
        let w = b.build(&nv, None).to_vec();
        let Packet::Data(d) = Packet::decode(&w).unwrap() else {
            panic!("not a Data")
        };
        assert_eq!(d.name().as_bytes(), nv.as_slice());
        assert_eq!(d.content().len(), 100);
        assert_eq!(d.freshness_ms(), Some(10_000));
        assert!(d.digest_signature_ok());
    }

    #[test]
    fn lp_wrapped_data_carries_the_token() {
        let mut b = DataBuilder::new(10, 1, Signing::Fixed);
        let nv = name_value("/a");
        let tok = [1, 2, 3, 4, 5, 6, 7, 8];
        let w = b.build(&nv, Some(&tok)).to_vec();
        let Packet::Lp(lp) = Packet::decode(&w).unwrap() else {
            panic!("not an LpPacket")
        };
        assert_eq!(lp.pit_token(), Some(tok.as_slice()));
        let Some(Packet::Data(d)) = lp.network_packet().unwrap() else {
            panic!("no Data inside")
        };
        assert_eq!(d.name().as_bytes(), nv.as_slice());
        assert!(!d.digest_signature_ok());
    }
}
