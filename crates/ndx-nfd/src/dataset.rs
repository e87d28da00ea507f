//! Status datasets: the Data segments that carry one, and the decoding of their Content.

use ndx_codec::{ComponentBuf, DataRepr, Name, Tlv};

use crate::MgmtError;
use crate::wire::Fields;

/// FreshnessPeriod of dataset segments and command responses, in milliseconds (what NFD's
/// dispatcher and ndnd's management thread use: 1 s).
pub const MGMT_FRESHNESS_MS: u64 = 1000;

/// Segment size NFD uses for datasets (half of the 8800-byte maximum packet size), a good
/// `seg_size` for [`dataset_segments`].
pub const DATASET_SEGMENT_SIZE: usize = 4400;

/// The Data packets of a status dataset: `prefix/v=<version>/seg=<n>` (naming conventions
/// rev. 3: VersionNameComponent, type 54; SegmentNameComponent, type 50), each with up to
/// `seg_size` bytes of `content` (at least 1), FinalBlockId = the last segment on every
/// segment, FreshnessPeriod 1 s, signed DigestSha256. An empty dataset is one segment with
/// empty Content.
///
/// `prefix` is the dataset's name as requested (e.g. `/localhost/nfd/faces/list`); the
/// version is the caller's (NFD uses a timestamp, ndnd a counter).
pub fn dataset_segments(
    prefix: &Name<'_>,
    version: u64,
    content: &[u8],
    seg_size: usize,
) -> Vec<Vec<u8>> {
    let seg_size = seg_size.max(1);
    let chunks: Vec<&[u8]> = if content.is_empty() {
        vec![&[][..]]
    } else {
        content.chunks(seg_size).collect()
    };
    let last = chunks.len() as u64 - 1;
    let mut base = prefix.to_buf();
    base.push_version(version);
    chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let mut name = base.clone();
            name.push_segment(i as u64);
            let mut d = DataRepr::new(name, chunk.to_vec());
            d.freshness_ms = Some(MGMT_FRESHNESS_MS);
            d.final_block_id = Some(ComponentBuf::segment(last));
            d.to_vec()
                .expect("a DigestSha256 Data encodes into a buffer of its own size")
        })
        .collect()
}

/// The elements of type `typ` in a dataset's Content; unknown non-critical elements between
/// them are skipped, anything else is an error.
pub(crate) fn decode_all<T>(
    content: &[u8],
    typ: u64,
    what: &'static str,
    decode: fn(&Tlv<'_>) -> Result<T, MgmtError>,
) -> Result<Vec<T>, MgmtError> {
    let mut f = Fields::over(content, 0, what);
    let mut out = Vec::new();
    while let Some(e) = f.next()? {
        if e.typ == typ {
            out.push(decode(&e)?);
        } else {
            f.unknown(&e)?;
        }
    }
    Ok(out)
}
