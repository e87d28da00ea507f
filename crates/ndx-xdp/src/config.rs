//! The program's configuration and its in-map layout.

use ndx_core::{Dispatch, DispatchMode, HashKey};

use crate::error::XdpError;
use crate::meta::{MAX_PORTS, MAX_SHARDS, MAX_TABLE};

/// What the XDP program classifies and how it dispatches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XdpConfig {
    /// UDP destination ports carrying NDN (at most [`MAX_PORTS`], none zero).
    pub udp_ports: Vec<u16>,
    /// Accept NDN over Ethernet (EtherType 0x8624, unicast or the NDN multicast group).
    pub ethernet: bool,
    /// The dispatch mode (as in [`ndx_core::Dispatch`]).
    pub mode: DispatchMode,
    /// Number of shards, 1..=[`MAX_SHARDS`].
    pub shards: usize,
    /// The indirection table: a power of two, at least `shards`, at most [`MAX_TABLE`]
    /// entries, each a shard below `shards`.
    pub table: Vec<u8>,
    /// First half of the SipHash key (`HashKey::new(k0, k1)`).
    pub k0: u64,
    /// Second half of the SipHash key.
    pub k1: u64,
    /// Load the `xdp.frags` variant (multi-buffer frames, MTU above ~3500).
    pub frags: bool,
    /// Send every frame, unparsed and without metadata, to entry `queue * MAX_SHARDS + 0`
    /// (raw reflector benchmarks).
    pub redirect_all: bool,
    /// Parse NDN frames (kind, name, PIT token) to choose their shard and write the
    /// metadata. Off, NDN frames (the encapsulation still checked: everything else passes)
    /// go to shard 0 unparsed and without metadata, counted as `unclassified`: with one shard
    /// there is nothing to choose, and user space reads no metadata then. Default:
    /// `shards > 1`.
    pub classify: bool,
}

impl XdpConfig {
    /// A configuration for `shards` shards with a round-robin table of `table_len` entries
    /// (the same table [`ndx_core::Dispatch::new`] builds), NDN on UDP port 6363 and
    /// Ethernet, no frags, no raw mode.
    pub fn new(k0: u64, k1: u64, mode: DispatchMode, shards: usize, table_len: usize) -> Self {
        Self {
            udp_ports: vec![6363],
            ethernet: true,
            mode,
            shards,
            table: (0..table_len).map(|i| (i % shards.max(1)) as u8).collect(),
            k0,
            k1,
            frags: false,
            redirect_all: false,
            classify: shards > 1,
        }
    }

    /// The configuration that mirrors `dispatch` (mode, shard count, current table), whose
    /// key is `HashKey::new(k0, k1)` (HashKey does not expose its halves).
    pub fn for_dispatch(dispatch: &Dispatch, k0: u64, k1: u64) -> Self {
        Self {
            table: dispatch.table().to_vec(),
            ..Self::new(
                k0,
                k1,
                dispatch.mode(),
                dispatch.shards(),
                dispatch.table().len(),
            )
        }
    }

    /// The SipHash key.
    pub fn hash_key(&self) -> HashKey {
        HashKey::new(self.k0, self.k1)
    }

    /// Checks the limits the program relies on.
    pub fn validate(&self) -> Result<(), XdpError> {
        let bad = |m: String| Err(XdpError::Config(m));
        if self.udp_ports.len() > MAX_PORTS {
            return bad(format!(
                "{} UDP ports, at most {MAX_PORTS}",
                self.udp_ports.len()
            ));
        }
        if self.udp_ports.contains(&0) {
            return bad("UDP port 0".into());
        }
        if !(1..=MAX_SHARDS).contains(&self.shards) {
            return bad(format!(
                "{} shards, between 1 and {MAX_SHARDS}",
                self.shards
            ));
        }
        let n = self.table.len();
        if !n.is_power_of_two() || n < self.shards || n > MAX_TABLE {
            return bad(format!(
                "table of {n} entries: a power of two, at least the shard count, at most {MAX_TABLE}"
            ));
        }
        if let Some(e) = self.table.iter().find(|&&e| usize::from(e) >= self.shards) {
            return bad(format!("table entry names shard {e} of {}", self.shards));
        }
        match self.mode {
            DispatchMode::Prefix(0) | DispatchMode::Batch(0) => {
                bad("batch size and prefix length must be at least 1".into())
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn raw(&self) -> RawConfig {
        let (mode, param) = match self.mode {
            DispatchMode::Prefix(k) => (1, k as u64),
            DispatchMode::Content => (2, 0),
            DispatchMode::Batch(b) => (3, b),
        };
        let mut udp_ports = [0; MAX_PORTS];
        for (slot, p) in udp_ports.iter_mut().zip(&self.udp_ports) {
            *slot = *p;
        }
        RawConfig {
            k0: self.k0,
            k1: self.k1,
            param,
            mode,
            shards: self.shards as u32,
            table_len: self.table.len() as u32,
            udp_ports,
            ethernet: u8::from(self.ethernet),
            redirect_all: u8::from(self.redirect_all),
            classify: u8::from(self.classify),
            pad: 0,
        }
    }
}

/// `struct ndx_config` of ndx.c.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub(crate) struct RawConfig {
    k0: u64,
    k1: u64,
    param: u64,
    mode: u32,
    shards: u32,
    table_len: u32,
    udp_ports: [u16; MAX_PORTS],
    ethernet: u8,
    redirect_all: u8,
    classify: u8,
    pad: u8,
}

#[expect(unsafe_code, reason = "aya's Pod marker is an unsafe trait")]
// SAFETY: RawConfig is repr(C), Copy, made of integers only, with no implicit padding
// (8+8+8+4+4+4+16+1+1+1+1 = 56 bytes, a multiple of its 8-byte alignment).
unsafe impl aya::Pod for RawConfig {}

const _: () = assert!(size_of::<RawConfig>() == 56);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_refuses_what_the_program_cannot_do() {
        let ok = XdpConfig::new(1, 2, DispatchMode::Content, 4, 64);
        ok.validate().unwrap();
        let mut c = ok.clone();
        c.shards = 65;
        c.table = vec![0; 128];
        assert!(c.validate().is_err(), "65 shards");
        let mut c = ok.clone();
        c.table = vec![0; 48];
        assert!(c.validate().is_err(), "table not a power of two");
        let mut c = ok.clone();
        c.table[3] = 4;
        assert!(c.validate().is_err(), "entry names a missing shard");
        let mut c = ok.clone();
        c.udp_ports = vec![1; 9];
        assert!(c.validate().is_err(), "9 ports");
        let mut c = ok;
        c.mode = DispatchMode::Batch(0);
        assert!(c.validate().is_err(), "Batch(0)");

        let mut d = Dispatch::new(HashKey::new(1, 2), DispatchMode::Batch(8), 3, 16).unwrap();
        assert!(d.set_entry(5, 2));
        let c = XdpConfig::for_dispatch(&d, 1, 2);
        assert_eq!((c.mode, c.shards, &c.table[..]), (d.mode(), 3, d.table()));
        assert_eq!(c.hash_key(), HashKey::new(1, 2));
        c.validate().unwrap();
    }
}
