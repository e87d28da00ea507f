//! The on-disk format of one batch record (pure code: no I/O).
//!
//! A record holds the B consecutive segments of one content: a header naming them, then their
//! frame bytes back to back, padded to [`BLOCK`] bytes so that records can be read and written
//! with `O_DIRECT`. All integers are little-endian.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `NDXL` |
//! | 4 | 2 | version (1) |
//! | 6 | 2 | segment count `n` |
//! | 8 | 4 | record length (padded, a multiple of [`BLOCK`]) |
//! | 12 | 4 | header length = payload offset = 56 + 16 n + name length |
//! | 16 | 4 | payload length (sum of the frame lengths) |
//! | 20 | 2 | content name length |
//! | 22 | 2 | reserved (0) |
//! | 24 | 8 | log sequence number |
//! | 32 | 8 | content key |
//! | 40 | 8 | batch number |
//! | 48 | 4 | header checksum: low 32 bits of XXH3-64 of bytes `[56, header length)` seeded with the XXH3-64 of bytes `[0, 48)` |
//! | 52 | 4 | payload checksum: low 32 bits of XXH3-64 of the frames seeded with the header checksum |
//! | 56 | 16 n | per segment: name key (8), frame length (4), reserved (4) |
//! | 56 + 16 n | name length | content name (opaque bytes, e.g. the Name TLV) |
//! | header length | payload length | the frames |
//!
//! The header always fits in the first block, so one block read tells a recovery scan how long
//! the record is, and its own checksum lets a fast scan trust it without reading the frames
//! (the frames are then verified when the record is read). Every parse is bounds-checked and never panics on arbitrary bytes.

use thiserror::Error;

/// Alignment and size granularity of records (the `O_DIRECT` alignment).
pub const BLOCK: usize = 4096;
/// Magic number opening every record.
pub const MAGIC: [u8; 4] = *b"NDXL";
/// Record format version.
pub const VERSION: u16 = 1;
/// Size of the fixed part of the header.
pub const FIXED_HEADER: usize = 56;
/// Size of one per-segment header entry.
pub const ENTRY_LEN: usize = 16;

const HSUM_AT: usize = 48;
const PSUM_AT: usize = 52;

/// Rounds `len` up to a multiple of [`BLOCK`].
pub const fn pad_to_block(len: usize) -> usize {
    len.div_ceil(BLOCK) * BLOCK
}

/// One segment to store: the key of its name (the name hash the L1 uses) and its frame bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment<'a> {
    /// Key of the segment's name (e.g. the L1's name hash).
    pub name_key: u64,
    /// The Data frame, ready to transmit.
    pub frame: &'a [u8],
}

/// A batch to write: the segments of one (content, batch number).
#[derive(Debug, Clone, Copy)]
pub struct BatchRecord<'a> {
    /// Key of the content (e.g. the hash of the name without its segment component).
    pub content_key: u64,
    /// Batch number (segment number / B).
    pub batch: u64,
    /// Opaque content name bytes kept in the header (may be empty); lets an operator or a
    /// restart with another hash key re-derive keys.
    pub content_name: &'a [u8],
    /// The segments, in order.
    pub segments: &'a [Segment<'a>],
}

impl BatchRecord<'_> {
    /// Header length of this batch's record.
    pub fn header_len(&self) -> usize {
        FIXED_HEADER + ENTRY_LEN * self.segments.len() + self.content_name.len()
    }

    /// Sum of the frame lengths.
    pub fn payload_len(&self) -> usize {
        self.segments.iter().map(|s| s.frame.len()).sum()
    }

    /// Padded length of this batch's record on disk.
    pub fn record_len(&self) -> usize {
        pad_to_block(self.header_len() + self.payload_len())
    }

    /// Checks that [`encode`] will succeed into a buffer of `max` bytes; returns the padded
    /// record length.
    pub fn check(&self, max: usize) -> Result<usize, EncodeError> {
        if self.segments.is_empty() || self.segments.len() > usize::from(u16::MAX) {
            return Err(EncodeError::Empty);
        }
        let header_len = self.header_len();
        if header_len > BLOCK || self.content_name.len() > usize::from(u16::MAX) {
            return Err(EncodeError::HeaderTooLarge(header_len));
        }
        let len = self.record_len();
        if len > max || len > u32::MAX as usize {
            return Err(EncodeError::TooLarge { len, max });
        }
        Ok(len)
    }
}

/// Why a batch cannot be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// The header (entries + content name) does not fit in one block.
    #[error("record header of {0} bytes does not fit in one {BLOCK}-byte block")]
    HeaderTooLarge(usize),
    /// The padded record is larger than the buffer it must be written into.
    #[error("record of {len} bytes exceeds the {max}-byte record buffer")]
    TooLarge {
        /// Padded record length.
        len: usize,
        /// Largest record the store accepts.
        max: usize,
    },
    /// A batch without segments.
    #[error("empty batch")]
    Empty,
}

/// Why bytes are not a valid record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum RecordError {
    /// No magic: not the start of a record (unused or overwritten space).
    #[error("no record magic")]
    NotARecord,
    /// Magic present but an unknown version.
    #[error("unknown record version {0}")]
    BadVersion(u16),
    /// Magic present but inconsistent lengths.
    #[error("inconsistent record header")]
    BadHeader,
    /// The bytes end before the record does.
    #[error("record truncated: {have} of {need} bytes")]
    Truncated {
        /// Bytes available.
        have: usize,
        /// Bytes the header announces.
        need: usize,
    },
    /// The checksum does not match: corrupt or torn record.
    #[error("record checksum mismatch")]
    Checksum,
}

/// The fixed header fields of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// Number of segments.
    pub count: u16,
    /// Padded record length.
    pub record_len: u32,
    /// Header length (payload offset).
    pub header_len: u32,
    /// Sum of the frame lengths.
    pub payload_len: u32,
    /// Content name length.
    pub name_len: u16,
    /// Log sequence number.
    pub seq: u64,
    /// Content key.
    pub content_key: u64,
    /// Batch number.
    pub batch: u64,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn header_sum(header: &[u8]) -> u32 {
    let seed = xxhash_rust::xxh3::xxh3_64(&header[..HSUM_AT]);
    xxhash_rust::xxh3::xxh3_64_with_seed(&header[FIXED_HEADER..], seed) as u32
}

fn payload_sum(payload: &[u8], header_sum: u32) -> u32 {
    xxhash_rust::xxh3::xxh3_64_with_seed(payload, u64::from(header_sum)) as u32
}

/// Encodes `batch` with sequence number `seq` at the start of `buf`; returns the padded record
/// length. The padding is zeroed.
pub fn encode(buf: &mut [u8], seq: u64, batch: &BatchRecord<'_>) -> Result<usize, EncodeError> {
    let record_len = batch.check(buf.len())?;
    let header_len = batch.header_len();
    let payload_len = batch.payload_len();
    let b = &mut buf[..record_len];
    b[..4].copy_from_slice(&MAGIC);
    b[4..6].copy_from_slice(&VERSION.to_le_bytes());
    b[6..8].copy_from_slice(&(batch.segments.len() as u16).to_le_bytes());
    b[8..12].copy_from_slice(&(record_len as u32).to_le_bytes());
    b[12..16].copy_from_slice(&(header_len as u32).to_le_bytes());
    b[16..20].copy_from_slice(&(payload_len as u32).to_le_bytes());
    b[20..22].copy_from_slice(&(batch.content_name.len() as u16).to_le_bytes());
    b[22..24].fill(0);
    b[24..32].copy_from_slice(&seq.to_le_bytes());
    b[32..40].copy_from_slice(&batch.content_key.to_le_bytes());
    b[40..48].copy_from_slice(&batch.batch.to_le_bytes());
    b[48..56].fill(0);
    let mut at = FIXED_HEADER;
    for s in batch.segments {
        b[at..at + 8].copy_from_slice(&s.name_key.to_le_bytes());
        b[at + 8..at + 12].copy_from_slice(&(s.frame.len() as u32).to_le_bytes());
        b[at + 12..at + 16].fill(0);
        at += ENTRY_LEN;
    }
    b[at..at + batch.content_name.len()].copy_from_slice(batch.content_name);
    at += batch.content_name.len();
    for s in batch.segments {
        b[at..at + s.frame.len()].copy_from_slice(s.frame);
        at += s.frame.len();
    }
    b[at..].fill(0);
    let hsum = header_sum(&b[..header_len]);
    let psum = payload_sum(&b[header_len..header_len + payload_len], hsum);
    b[HSUM_AT..HSUM_AT + 4].copy_from_slice(&hsum.to_le_bytes());
    b[PSUM_AT..PSUM_AT + 4].copy_from_slice(&psum.to_le_bytes());
    Ok(record_len)
}

/// Parses and sanity-checks the fixed header at the start of `bytes` (at least
/// [`FIXED_HEADER`] bytes; a whole block is best). Does not check the checksum.
pub fn parse_header(bytes: &[u8]) -> Result<RecordHeader, RecordError> {
    if bytes.len() < FIXED_HEADER {
        return Err(RecordError::Truncated {
            have: bytes.len(),
            need: FIXED_HEADER,
        });
    }
    if bytes[..4] != MAGIC {
        return Err(RecordError::NotARecord);
    }
    let version = u16_at(bytes, 4);
    if version != VERSION {
        return Err(RecordError::BadVersion(version));
    }
    let h = RecordHeader {
        count: u16_at(bytes, 6),
        record_len: u32_at(bytes, 8),
        header_len: u32_at(bytes, 12),
        payload_len: u32_at(bytes, 16),
        name_len: u16_at(bytes, 20),
        seq: u64_at(bytes, 24),
        content_key: u64_at(bytes, 32),
        batch: u64_at(bytes, 40),
    };
    let header_len = FIXED_HEADER + ENTRY_LEN * usize::from(h.count) + usize::from(h.name_len);
    let used = header_len as u64 + u64::from(h.payload_len);
    if h.count == 0
        || h.header_len as usize != header_len
        || header_len > BLOCK
        || !(h.record_len as usize).is_multiple_of(BLOCK)
        || u64::from(h.record_len) != (used.div_ceil(BLOCK as u64) * BLOCK as u64)
    {
        return Err(RecordError::BadHeader);
    }
    Ok(h)
}

/// Parses the header at the start of `bytes` (at least the header length; a whole block is
/// best) and verifies the header checksum and that the segment lengths add up. Does not read
/// the frames: [`RecordView::parse`] verifies those.
pub fn check_header(bytes: &[u8]) -> Result<RecordHeader, RecordError> {
    let h = parse_header(bytes)?;
    let header_len = h.header_len as usize;
    if bytes.len() < header_len {
        return Err(RecordError::Truncated {
            have: bytes.len(),
            need: header_len,
        });
    }
    if header_sum(&bytes[..header_len]) != u32_at(bytes, HSUM_AT) {
        return Err(RecordError::Checksum);
    }
    let sum: u64 = (0..usize::from(h.count))
        .map(|i| u64::from(u32_at(bytes, FIXED_HEADER + i * ENTRY_LEN + 8)))
        .sum();
    if sum != u64::from(h.payload_len) {
        return Err(RecordError::BadHeader);
    }
    Ok(h)
}

/// A validated record: header fields plus borrowed frames.
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    header: RecordHeader,
    bytes: &'a [u8],
}

impl<'a> RecordView<'a> {
    /// Validates the record at the start of `bytes`: header consistency, length, checksum and
    /// that the per-segment lengths add up. Never panics.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, RecordError> {
        let header = parse_header(bytes)?;
        let need = header.record_len as usize;
        if bytes.len() < need {
            return Err(RecordError::Truncated {
                have: bytes.len(),
                need,
            });
        }
        let header = check_header(bytes)?;
        let (start, used) = (
            header.header_len as usize,
            header.header_len as usize + header.payload_len as usize,
        );
        if payload_sum(&bytes[start..used], u32_at(bytes, HSUM_AT)) != u32_at(bytes, PSUM_AT) {
            return Err(RecordError::Checksum);
        }
        Ok(Self {
            header,
            bytes: &bytes[..used],
        })
    }

    /// Header fields.
    pub fn header(&self) -> &RecordHeader {
        &self.header
    }

    /// Content key.
    pub fn content_key(&self) -> u64 {
        self.header.content_key
    }

    /// Batch number.
    pub fn batch(&self) -> u64 {
        self.header.batch
    }

    /// Log sequence number.
    pub fn seq(&self) -> u64 {
        self.header.seq
    }

    /// Number of segments.
    pub fn len(&self) -> usize {
        usize::from(self.header.count)
    }

    /// Always false: a valid record has at least one segment.
    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// The opaque content name stored in the header.
    pub fn content_name(&self) -> &'a [u8] {
        let at = FIXED_HEADER + ENTRY_LEN * self.len();
        &self.bytes[at..at + usize::from(self.header.name_len)]
    }

    /// The segments in order: (name key, frame bytes).
    pub fn segments(&self) -> impl Iterator<Item = Segment<'a>> + use<'a> {
        let bytes = self.bytes;
        let count = self.len();
        let mut at = self.header.header_len as usize;
        (0..count).map(move |i| {
            let e = FIXED_HEADER + i * ENTRY_LEN;
            let len = u32_at(bytes, e + 8) as usize;
            let frame = &bytes[at..at + len];
            at += len;
            Segment {
                name_key: u64_at(bytes, e),
                frame,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn batch_bytes(frames: &[Vec<u8>], name: &[u8]) -> Vec<u8> {
        let segs: Vec<Segment<'_>> = frames
            .iter()
            .enumerate()
            .map(|(i, f)| Segment {
                name_key: 1000 + i as u64,
                frame: f,
            })
            .collect();
        let b = BatchRecord {
            content_key: 7,
            batch: 3,
            content_name: name,
            segments: &segs,
        };
        let mut buf = vec![0xAAu8; b.record_len() + BLOCK];
        let n = encode(&mut buf, 42, &b).unwrap();
        assert_eq!(n, b.record_len());
        buf.truncate(n);
        buf
    }

    #[test]
    fn roundtrip_and_padding() {
        let frames = vec![vec![1u8; 8800], vec![2u8; 100], vec![3u8; 1]];
        let buf = batch_bytes(&frames, b"/a/b");
        assert_eq!(buf.len() % BLOCK, 0);
        let v = RecordView::parse(&buf).unwrap();
        assert_eq!(
            (v.content_key(), v.batch(), v.seq(), v.len()),
            (7, 3, 42, 3)
        );
        assert_eq!(v.content_name(), b"/a/b");
        let got: Vec<_> = v
            .segments()
            .map(|s| (s.name_key, s.frame.to_vec()))
            .collect();
        assert_eq!(got.len(), 3);
        for (i, (k, f)) in got.iter().enumerate() {
            assert_eq!(*k, 1000 + i as u64);
            assert_eq!(f, &frames[i]);
        }
        // Padding is zeroed even though the buffer was dirty.
        let used = v.header().header_len as usize + v.header().payload_len as usize;
        assert!(buf[used..].iter().all(|&b| b == 0));
    }

    #[test]
    fn detects_corruption_truncation_and_garbage() {
        let buf = batch_bytes(&[vec![9u8; 5000]], b"");
        let mut bad = buf.clone();
        bad[FIXED_HEADER + ENTRY_LEN + 10] ^= 1;
        assert_eq!(RecordView::parse(&bad).unwrap_err(), RecordError::Checksum);
        assert!(matches!(
            RecordView::parse(&buf[..BLOCK]),
            Err(RecordError::Truncated { .. })
        ));
        assert_eq!(
            RecordView::parse(&[0u8; BLOCK]).unwrap_err(),
            RecordError::NotARecord
        );
        let mut ver = buf.clone();
        ver[4] = 9;
        assert_eq!(
            RecordView::parse(&ver).unwrap_err(),
            RecordError::BadVersion(9)
        );
        let mut len = buf;
        len[8] ^= 0x10;
        assert_eq!(RecordView::parse(&len).unwrap_err(), RecordError::BadHeader);
    }

    #[test]
    fn encode_refuses_oversize() {
        let big = vec![0u8; 3 * BLOCK];
        let segs = [Segment {
            name_key: 1,
            frame: &big,
        }];
        let b = BatchRecord {
            content_key: 1,
            batch: 0,
            content_name: &[],
            segments: &segs,
        };
        let mut buf = vec![0u8; 2 * BLOCK];
        assert!(matches!(
            encode(&mut buf, 1, &b),
            Err(EncodeError::TooLarge { .. })
        ));
        let name = vec![0u8; BLOCK];
        let b = BatchRecord {
            content_name: &name,
            ..b
        };
        assert!(matches!(
            encode(&mut buf, 1, &b),
            Err(EncodeError::HeaderTooLarge(_))
        ));
        let b = BatchRecord {
            content_name: &[],
            segments: &[],
            ..b
        };
        assert_eq!(encode(&mut buf, 1, &b), Err(EncodeError::Empty));
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..3 * BLOCK)) {
            let _ = RecordView::parse(&bytes);
        }

        #[test]
        fn any_single_bit_flip_is_detected(
            lens in proptest::collection::vec(1usize..3000, 1..8),
            bit in any::<proptest::sample::Index>(),
        ) {
            let frames: Vec<Vec<u8>> =
                lens.iter().enumerate().map(|(i, &l)| vec![i as u8 ^ 0x5A; l]).collect();
            let mut buf = batch_bytes(&frames, b"name");
            let v = RecordView::parse(&buf).unwrap();
            let used = v.header().header_len as usize + v.header().payload_len as usize;
            let i = bit.index(used * 8);
            buf[i / 8] ^= 1 << (i % 8);
            prop_assert!(RecordView::parse(&buf).is_err());
        }
    }
}
