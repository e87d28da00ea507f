//! What the store's integration tests share: a disk-backed temporary directory and opening a
//! region (skipped without io_uring, unless CI requires it).
#![allow(dead_code)]

use ndx_hcs::{OpenError, Region, RegionConfig};

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
