//! What the store's integration tests share: a disk-backed temporary directory and opening a
//! region (skipped without io_uring, unless CI requires it).
#![allow(dead_code)]

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;

use ndx_hcs::{
    BatchRecord, L2Backend, Location, OpenError, Region, RegionConfig, Segment, SubmitError,
};

/// A temporary directory in /var/tmp (disk-backed, so O_DIRECT is exercised as in
/// production), named `prefix…`.
pub(crate) fn tempdir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/var/tmp")
        .expect("temp dir in /var/tmp")
}

/// Opens the region, or skips the test when io_uring is unavailable (fails instead when
/// NDX_REQUIRE_ROOT_TESTS=1).
pub(crate) fn open(
    f: fn(RegionConfig) -> Result<Region, OpenError>,
    cfg: RegionConfig,
) -> Option<Region> {
    match f(cfg) {
        Ok(r) => Some(r),
        Err(OpenError::Uring(e))
            if std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() != Ok("1") =>
        {
            eprintln!("skipping: io_uring unavailable: {e}");
            None
        }
        Err(e) => panic!("open region: {e}"),
    }
}

/// The segments of a batch record: frame `i` of `frames` under name key `key(i)`.
pub(crate) fn segments(frames: &[Vec<u8>], key: impl Fn(u64) -> u64) -> Vec<Segment<'_>> {
    (0..)
        .zip(frames)
        .map(|(i, f)| Segment {
            name_key: key(i),
            frame: f,
        })
        .collect()
}

/// Submits a one-segment record (frame `x`, name key `name_key`, no content name) of batch
/// `batch` of content `content_key`, request id 0.
pub(crate) fn submit_tiny(
    r: &mut Region,
    content_key: u64,
    batch: u64,
    name_key: u64,
) -> Result<Location, SubmitError> {
    let segs = [Segment {
        name_key,
        frame: b"x",
    }];
    let rec = BatchRecord {
        content_key,
        batch,
        content_name: b"",
        segments: &segs,
    };
    r.submit_write(&rec, 0)
}

/// XORs the byte at `offset` of the file at `path` with `mask`, durably (a fault on the
/// medium, under the store's feet).
pub(crate) fn xor_byte(path: &Path, offset: u64, mask: u8) {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, offset).unwrap();
    b[0] ^= mask;
    f.write_all_at(&b, offset).unwrap();
    f.sync_all().unwrap();
}
