//! A segmented object: content cut into DigestSha256-signed Data packets named
//! `/prefix/v=<version>/seg=<n>`, each carrying FinalBlockId, plus its RDR metadata packet
//! (`/prefix/32=metadata/v=<version>/seg=0`, whose content is the versioned name and the
//! FinalBlockId), which NFD's ndncatchunks and `ndnd cat` use to discover the version.

use std::time::{SystemTime, UNIX_EPOCH};

use ndx_codec::{ComponentBuf, DataRepr, NameBuf, tlv_len, types as tt};

use crate::error::AppError;

/// The encoded segments of one version of an object.
#[derive(Debug, Clone)]
pub(crate) struct SegmentedObject {
    /// `/prefix/v=<version>`.
    pub(crate) versioned: NameBuf,
    /// `versioned` as TLV-VALUE bytes (the component TLVs), to compare names fast.
    versioned_bytes: Vec<u8>,
    /// Each segment's Data TLV.
    pub(crate) segments: Vec<Vec<u8>>,
    /// Content bytes in all.
    pub(crate) content_len: u64,
    /// `/prefix/32=metadata/v=<version>/seg=0`.
    metadata_name: NameBuf,
    /// The RDR metadata Data TLV.
    pub(crate) metadata: Vec<u8>,
}

/// The RDR keyword (a KeywordNameComponent).
const METADATA_KEYWORD: &[u8] = b"metadata";

/// The current time in milliseconds since the Unix epoch: the version ndnputchunks and
/// `ndnd put` use.
pub(crate) fn timestamp_version() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl SegmentedObject {
    /// Cuts `content` into segments of `segment_size` bytes (at least one segment, empty for
    /// empty content) under `prefix/v=version`.
    pub(crate) fn new(
        prefix: &NameBuf,
        version: u64,
        content: &[u8],
        segment_size: usize,
        freshness_ms: u64,
    ) -> Result<Self, AppError> {
        if segment_size == 0 {
            return Err(AppError::InvalidOption(
                "segment size must be at least 1 byte".into(),
            ));
        }
        let mut versioned = prefix.clone();
        versioned.push_version(version);
        let count = content.len().div_ceil(segment_size).max(1);
        let last = ComponentBuf::segment(count as u64 - 1);
        let mut segments = Vec::with_capacity(count);
        for i in 0..count {
            let start = i * segment_size;
            let end = (start + segment_size).min(content.len());
            let mut name = versioned.clone();
            name.push_segment(i as u64);
            let mut d = DataRepr::new(name, content[start.min(end)..end].to_vec());
            d.freshness_ms = Some(freshness_ms);
            d.final_block_id = Some(last.clone());
            segments.push(d.to_vec()?);
        }
        let mut metadata_name = prefix.clone();
        metadata_name
            .push(tt::KEYWORD_NAME_COMPONENT as u16, METADATA_KEYWORD)?
            .push_version(version)
            .push_segment(0);
        // Content: the versioned Name TLV, then FinalBlockId (as ndnd writes it; NFD's tools
        // read the Name and skip the rest).
        let mut md_content = versioned.to_tlv();
        let fbi = last.as_component().wire().to_vec();
        let mut fbi_tlv = vec![0; tlv_len(tt::FINAL_BLOCK_ID, fbi.len())];
        let need = fbi_tlv.len();
        ndx_codec::Writer::new(&mut fbi_tlv, need)?.tlv(tt::FINAL_BLOCK_ID, &fbi)?;
        md_content.extend_from_slice(&fbi_tlv);
        let mut md = DataRepr::new(metadata_name.clone(), md_content);
        md.freshness_ms = Some(freshness_ms.min(1000));
        md.final_block_id = Some(ComponentBuf::segment(0));
        Ok(Self {
            metadata: md.to_vec()?,
            metadata_name,
            versioned_bytes: versioned.as_name().as_bytes().to_vec(),
            versioned,
            segments,
            content_len: content.len() as u64,
        })
    }

    /// The segment an Interest asks for, given its name's component bytes and CanBePrefix:
    /// an exact `/prefix/v=V/seg=N`, or any prefix of segment 0's name with CanBePrefix
    /// (version discovery).
    pub(crate) fn lookup(&self, interest: &ndx_codec::Name<'_>, can_be_prefix: bool) -> Lookup {
        let ours = self.versioned.as_name();
        if interest.len() == ours.len() + 1
            && interest.prefix(ours.len()).as_bytes() == self.versioned_bytes
        {
            return match interest.last().and_then(|c| c.as_segment()) {
                Some(n) if n < self.segments.len() as u64 => Lookup::Segment(n as usize),
                _ => Lookup::NotFound,
            };
        }
        if can_be_prefix && interest.is_prefix_of(&ours) {
            return Lookup::Segment(0);
        }
        let md = self.metadata_name.as_name();
        if (can_be_prefix && interest.is_prefix_of(&md)) || *interest == md {
            return Lookup::Metadata;
        }
        Lookup::NotFound
    }
}

/// What [`SegmentedObject::lookup`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// This segment answers it.
    Segment(usize),
    /// The RDR metadata packet answers it.
    Metadata,
    /// Nothing does.
    NotFound,
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndx_codec::Data;

    #[test]
    fn segments_carry_final_block_and_digest() {
        let prefix: NameBuf = "/a/b".parse().unwrap();
        let content: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let o = SegmentedObject::new(&prefix, 7, &content, 1000, 500).unwrap();
        assert_eq!(o.segments.len(), 3);
        let mut joined = Vec::new();
        for (i, s) in o.segments.iter().enumerate() {
            let d = Data::decode(s).unwrap();
            assert!(d.digest_signature_ok());
            assert_eq!(d.final_block_id().unwrap().as_segment(), Some(2));
            assert_eq!(d.freshness_ms(), Some(500));
            assert_eq!(d.name().to_string(), format!("/a/b/v=7/seg={i}"));
            joined.extend_from_slice(d.content());
        }
        assert_eq!(joined, content);
        let n: NameBuf = "/a/b/v=7/seg=2".parse().unwrap();
        assert_eq!(o.lookup(&n.as_name(), false), Lookup::Segment(2));
        let n: NameBuf = "/a/b/v=7/seg=3".parse().unwrap();
        assert_eq!(o.lookup(&n.as_name(), false), Lookup::NotFound);
        let n: NameBuf = "/a".parse().unwrap();
        assert_eq!(o.lookup(&n.as_name(), true), Lookup::Segment(0));
        assert_eq!(o.lookup(&n.as_name(), false), Lookup::NotFound);
        let n: NameBuf = "/a/b/v=8".parse().unwrap();
        assert_eq!(o.lookup(&n.as_name(), true), Lookup::NotFound);
        let n: NameBuf = "/a/b/32=metadata".parse().unwrap();
        assert_eq!(o.lookup(&n.as_name(), true), Lookup::Metadata);
        assert_eq!(o.lookup(&n.as_name(), false), Lookup::NotFound);
        let d = Data::decode(&o.metadata).unwrap();
        assert!(d.digest_signature_ok());
        assert_eq!(d.name().to_string(), "/a/b/32=metadata/v=7/seg=0");
        let mut r = ndx_codec::Reader::new(d.content());
        let name_tlv = r.read().unwrap();
        let inner = ndx_codec::Name::decode(name_tlv.wire).unwrap();
        assert_eq!(inner.to_string(), "/a/b/v=7");
        let fbi = r.read().unwrap();
        assert_eq!(fbi.typ, tt::FINAL_BLOCK_ID);
        assert_eq!(fbi.value, ComponentBuf::segment(2).as_component().wire());
    }

    #[test]
    fn empty_content_is_one_empty_segment() {
        let prefix: NameBuf = "/e".parse().unwrap();
        let o = SegmentedObject::new(&prefix, 1, &[], 8000, 0).unwrap();
        assert_eq!(o.segments.len(), 1);
        let d = Data::decode(&o.segments[0]).unwrap();
        assert!(d.content().is_empty());
        assert_eq!(d.final_block_id().unwrap().as_segment(), Some(0));
    }
}
