//! The minimal XDP program of this crate (`bpf/redirect.c`), loaded with aya.
//!
//! It redirects every frame (multi-buffer included) to XSKMAP entry
//! `rx_queue_index * 64 + shard`, shard chosen round-robin among `shards`, and
//! passes the frame to the kernel stack when that entry is empty. Optionally it
//! writes 16 bytes of metadata shaped like ndx's `struct ndx_xdp_meta`
//! (magic `0x4e44`). It is for tests and the reflector baseline only; the
//! router's own program lives in `crates/ndx-xdp/bpf/`.

use std::os::fd::AsRawFd;

use aya::maps::{MapData, XskMap};
use aya::programs::{Xdp, XdpMode};
use aya::{Ebpf, EbpfLoader};

use crate::Error;

/// Entries per queue in the XSKMAP (`MAX_SHARDS`).
pub const MAX_SHARDS: u32 = 64;

/// Magic of the metadata the program writes.
pub const META_MAGIC: u16 = 0x4e44;

static OBJECT: &[u8] = aya::include_bytes_aligned!("../bpf/redirect.o");

/// The loaded and attached redirect program. Detached when dropped (bpf_link).
pub struct RedirectProgram {
    xsks: XskMap<MapData>,
    // Owns the program and its link; dropped last.
    _ebpf: Ebpf,
}

impl std::fmt::Debug for RedirectProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedirectProgram").finish_non_exhaustive()
    }
}

fn bpf_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Bpf(format!("{what}: {e}"))
}

impl RedirectProgram {
    /// Loads the program and attaches it in native (driver) mode to `ifname`.
    /// `shards` (1..=64) sockets per queue are used round-robin; `write_meta`
    /// makes it prepend metadata.
    pub fn attach(ifname: &str, shards: u32, write_meta: bool) -> Result<Self, Error> {
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(Error::Config(format!(
                "shards = {shards} must be in 1..=64"
            )));
        }
        let meta: u8 = write_meta.into();
        let mut ebpf = EbpfLoader::new()
            .override_global("n_shards", &shards, true)
            .override_global("write_meta", &meta, true)
            .load(OBJECT)
            .map_err(|e| bpf_err("load object", e))?;
        let prog: &mut Xdp = ebpf
            .program_mut("ndx_redirect")
            .ok_or_else(|| Error::Bpf("program ndx_redirect missing".into()))?
            .try_into()
            .map_err(|e| bpf_err("program type", e))?;
        prog.load().map_err(|e| bpf_err("verifier", e))?;
        prog.attach(ifname, XdpMode::Driver)
            .map_err(|e| bpf_err("attach", e))?;
        let map = ebpf
            .take_map("ndx_xsks")
            .ok_or_else(|| Error::Bpf("map ndx_xsks missing".into()))?;
        let xsks = XskMap::try_from(map).map_err(|e| bpf_err("XSKMAP", e))?;
        Ok(RedirectProgram { xsks, _ebpf: ebpf })
    }

    /// Steers frames of `queue` chosen for `shard` to the socket `fd`.
    pub fn insert(&mut self, queue: u32, shard: u32, fd: &impl AsRawFd) -> Result<(), Error> {
        let idx = queue * MAX_SHARDS + shard;
        self.xsks
            .set(idx, fd.as_raw_fd(), 0)
            .map_err(|e| bpf_err("XSKMAP update", e))
    }

    /// Removes the socket of (`queue`, `shard`): its frames go to the kernel stack.
    pub fn remove(&mut self, queue: u32, shard: u32) -> Result<(), Error> {
        self.xsks
            .unset(queue * MAX_SHARDS + shard)
            .map_err(|e| bpf_err("XSKMAP delete", e))
    }
}
