//! The cluster front end's XDP program (`bpf/lb.c`) and its loader.
//!
//! The program is stateless per packet: Interests to a well-known address and port are
//! hashed by name onto a weighted table of internal-router slots and DNATed to the chosen
//! router; packets to a router's own port are PORT MAPPED to it; packets from a router are
//! SNATed (Data and Nacks leave from the well-known port, Interests keep the router's port,
//! the implicit id of seed 002). Everything is forwarded in XDP after `bpf_fib_lookup`.
//! [`LbXdp`] loads it, fills its maps and reads its counters; the control plane that decides
//! what goes in the maps is the `ndx-lb` crate.

use std::net::Ipv4Addr;
use std::os::fd::BorrowedFd;

use aya::maps::{Array, HashMap, MapData, PerCpuArray};
use aya::{Ebpf, EbpfLoader};
use ndx_core::HashKey;

use crate::counters::counters;
use crate::error::XdpError;
use crate::loader::{
    AttachMode, Interface, LinkGuard, ProgramStats, attach, load_program, program_fd,
    program_stats, take_map,
};
use crate::test_run::{TestRun, prog_test_run};

/// The program object built from `bpf/lb.c`.
static ELF: &[u8] = include_bytes!("../bpf/lb.o");

/// Router slots (`LB_MAX_ROUTERS` in lb.c).
pub const LB_MAX_ROUTERS: u32 = 64;
/// The largest hash space (cells).
pub const LB_MAX_TABLE: u32 = 65536;
/// A cell that names no router: Interests hashed there are dropped (`no-router`).
pub const LB_NO_ROUTER: u32 = u32::MAX;
/// Most well-known addresses.
pub const LB_MAX_VIPS: usize = 64;

/// What the NAME HASH covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LbHash {
    /// The whole name (seed 002): the segments of one download spread over every router.
    Name,
    /// The first `k` components (`k >= 1`): one prefix, one router.
    Prefix(u32),
    /// The name without its final Segment, plus `segment / b` (`b >= 1`): `b` consecutive
    /// segments go to one router (what a batch-reading L2 content store wants).
    Batch(u32),
}

impl LbHash {
    fn raw(self) -> (u32, u64) {
        match self {
            Self::Prefix(k) => (1, k.into()),
            Self::Batch(b) => (3, b.into()),
            Self::Name => (4, 0),
        }
    }
}

/// What [`LbXdp::load`] needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbXdpConfig {
    /// First half of the SipHash key.
    pub k0: u64,
    /// Second half.
    pub k1: u64,
    /// The NAME HASH mode.
    pub hash: LbHash,
    /// Cells of the hash space: a power of two, 1..=[`LB_MAX_TABLE`].
    pub table_len: u32,
    /// The well-known NDN port.
    pub port: u16,
    /// Soft-state entries for NDNLPv2 fragments (an LRU map).
    pub fragment_entries: u32,
    /// Load the `xdp.frags` variant (multi-buffer frames, MTU above ~3500 on veth).
    pub frags: bool,
}

impl LbXdpConfig {
    /// The hash key as [`HashKey`].
    pub fn hash_key(&self) -> HashKey {
        HashKey::new(self.k0, self.k1)
    }

    /// The cell of the hash space an Interest whose Name has TLV-VALUE `name` lands in, as
    /// the program computes it for names that fit its window (2048 bytes, 128 components).
    pub fn cell(&self, name: &[u8]) -> Option<u32> {
        let key = self.hash_key();
        let h = match self.hash {
            LbHash::Name => key.hash(name),
            LbHash::Prefix(k) => key.hash(&name[..prefix_len(name, k as usize)?]),
            LbHash::Batch(b) => {
                let (content, seg) = split_segment(name)?;
                let batch = seg.map_or(0, |s| s / u64::from(b.max(1)));
                key.hash_parts(&[content, &batch.to_le_bytes()])
            }
        };
        Some(h as u32 & (self.table_len - 1))
    }

    fn validate(&self) -> Result<(), XdpError> {
        if !self.table_len.is_power_of_two() || self.table_len > LB_MAX_TABLE {
            return Err(XdpError::Config(format!(
                "hash space of {} cells: must be a power of two up to {LB_MAX_TABLE}",
                self.table_len
            )));
        }
        match self.hash {
            LbHash::Prefix(0) | LbHash::Batch(0) => {
                return Err(XdpError::Config(
                    "prefix and batch hashing need a parameter >= 1".into(),
                ));
            }
            _ => {}
        }
        if self.port == 0 {
            return Err(XdpError::Config("the well-known port cannot be 0".into()));
        }
        if self.fragment_entries == 0 {
            return Err(XdpError::Config(
                "fragment_entries must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// Byte length of the first `k` components of a Name's TLV-VALUE.
fn prefix_len(name: &[u8], k: usize) -> Option<usize> {
    let mut off = 0;
    for _ in 0..k {
        if off >= name.len() {
            break;
        }
        let (hdr, len) = tl(&name[off..])?;
        off += hdr + len;
    }
    (off <= name.len()).then_some(off)
}

/// The name's bytes before a final SegmentNameComponent (type 50, 1/2/4/8-byte value) and
/// the segment number, as lb.c (and `ndx_core::Dispatch`) split them.
fn split_segment(name: &[u8]) -> Option<(&[u8], Option<u64>)> {
    let mut off = 0;
    let mut last = None;
    while off < name.len() {
        let (hdr, len) = tl(&name[off..])?;
        last = Some((off, hdr, len));
        off += hdr + len;
    }
    if off != name.len() {
        return None;
    }
    if let Some((at, hdr, len)) = last {
        let typ = name[at];
        if hdr == 2 && typ == 50 && matches!(len, 1 | 2 | 4 | 8) {
            let v = name[at + hdr..at + hdr + len]
                .iter()
                .fold(0u64, |a, &b| (a << 8) | u64::from(b));
            return Some((&name[..at], Some(v)));
        }
    }
    Some((name, None))
}

/// (header size, length) of the TLV at the start of `b`, which must hold it whole.
fn tl(b: &[u8]) -> Option<(usize, usize)> {
    let th = varnum_len(*b.first()?)?;
    let (lh, len) = (varnum_len(*b.get(th)?)?, varnum(b.get(th..)?)?);
    let n = th + lh;
    (b.len() >= n + len).then_some((n, len))
}

/// Bytes of the VAR-NUMBER starting with `first` (8-byte ones refused: never in a frame).
fn varnum_len(first: u8) -> Option<usize> {
    match first {
        253 => Some(3),
        254 => Some(5),
        255 => None,
        _ => Some(1),
    }
}

fn varnum(b: &[u8]) -> Option<usize> {
    let n = varnum_len(*b.first()?)?;
    let v = b
        .get(1..n)?
        .iter()
        .fold(0usize, |a, &x| (a << 8) | usize::from(x));
    Some(if n == 1 { b[0].into() } else { v })
}

/// Well-known addresses the program compares inline (`LB_INLINE_VIPS`); more are looked up
/// in a hash map.
const INLINE_VIPS: usize = 8;

/// `struct lb_config` of lb.c.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct RawLbConfig {
    k0: u64,
    k1: u64,
    param: u64,
    mode: u32,
    table_len: u32,
    port: u16,
    pad: u16,
    n_vips: u32,
    vips: [[u8; 4]; INLINE_VIPS],
}

#[expect(unsafe_code, reason = "aya's Pod marker is an unsafe trait")]
// SAFETY: repr(C), Copy, integers and byte arrays only, no implicit padding
// (8+8+8+4+4+2+2+4+32 = 72 bytes, a multiple of the 8-byte alignment).
unsafe impl aya::Pod for RawLbConfig {}
const _: () = assert!(size_of::<RawLbConfig>() == 72);

/// `struct lb_router` of lb.c.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct RawRouter {
    addr: [u8; 4],
    port: [u8; 2],
    in_use: u8,
    pad: u8,
    ifindex: u32,
}

#[expect(unsafe_code, reason = "aya's Pod marker is an unsafe trait")]
// SAFETY: repr(C), Copy, byte arrays, bytes and a u32 at offset 8: no padding, every bit
// pattern valid.
unsafe impl aya::Pod for RawRouter {}
const _: () = assert!(size_of::<RawRouter>() == 12);

counters! {
    LbCounters, "The front end's global counters, summed over CPUs (the C enum's order).",
    /// Not cluster traffic: passed to the kernel untouched.
    passed = "passed",
    /// Interests to the well-known port, dispatched by name.
    interests_in = "interests-in",
    /// NDN packets to a router's port (PORT MAP).
    port_mapped = "port-mapped",
    /// NDN packets from a router (SNAT).
    from_routers = "from-routers",
    /// Non-first NDNLPv2 fragments, all directions.
    fragments = "fragments",
    /// Interests whose name is too long for the program: dispatched by source.
    by_source = "by-source",
    /// Not a well-formed NDN packet: dropped.
    malformed = "malformed",
    /// Data, Nack or link-only packet to the well-known port: dropped.
    not_interest = "not-interest",
    /// IPv4 fragments of cluster traffic: dropped (NDNLPv2 fragmentation is required).
    ip_fragment = "ip-fragment",
    /// Fragment to the well-known port whose first fragment was not seen: dropped.
    frag_miss_in = "frag-miss-in",
    /// Fragmented Interests from routers (remembered so every fragment keeps the router's
    /// port; other fragments from routers leave from the well-known port).
    frag_interests_out = "frag-interests-out",
    /// Interests while no router takes Interests: dropped.
    no_router = "no-router",
    /// TTL exhausted: dropped.
    ttl = "ttl-exceeded",
    /// Egress interface without a front-end address: dropped.
    no_ifaddr = "no-ifaddr",
    /// No route in the kernel's FIB: dropped.
    no_route = "no-route",
    /// IP forwarding disabled on the ingress interface: dropped.
    fwd_disabled = "forwarding-disabled",
    /// Neighbour unresolved: the rewritten packet went to the kernel.
    to_kernel = "to-kernel",
    /// Sent back out of the ingress interface (XDP_TX).
    tx = "tx",
    /// Redirected to the egress interface.
    redirected = "redirected",
    /// UDP from a router's address, not from its port: dropped (never leaked).
    router_other = "router-other",
    /// A router's address and port arriving on another interface than the router's: dropped.
    spoofed = "spoofed",
}

counters! {
    LbRouterCounters, "One internal router's counters, summed over CPUs.",
    /// Interests dispatched to the router (NAME HASH or PORT MAP).
    interests_to = "interests-to",
    /// Data returned to the router (PORT MAP).
    data_to = "data-to",
    /// Nacks returned to the router.
    nacks_to = "nacks-to",
    /// Non-first fragments and link-only packets to the router.
    other_to = "other-to",
    /// IP bytes to the router.
    bytes_to = "bytes-to",
    /// Interests the router sent out.
    interests_from = "interests-from",
    /// Data the router sent out.
    data_from = "data-from",
    /// Nacks the router sent out.
    nacks_from = "nacks-from",
    /// Non-first fragments and link-only packets from the router.
    other_from = "other-from",
    /// IP bytes from the router.
    bytes_from = "bytes-from",
}

/// The loaded front-end program and its maps.
pub struct LbXdp {
    ebpf: Ebpf,
    program: &'static str,
    config: LbXdpConfig,
    raw: RawLbConfig,
    cfg_map: Array<MapData, RawLbConfig>,
    vip_list: Vec<Ipv4Addr>,
    table: Array<MapData, u32>,
    routers: Array<MapData, RawRouter>,
    ports: Array<MapData, u32>,
    vips: HashMap<MapData, [u8; 4], u32>,
    ifaddrs: HashMap<MapData, u32, [u8; 4]>,
    router_addrs: HashMap<MapData, [u8; 4], u32>,
    slot_addrs: Vec<Option<Ipv4Addr>>,
    stats: PerCpuArray<MapData, u64>,
    rstats: PerCpuArray<MapData, u64>,
}

impl core::fmt::Debug for LbXdp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LbXdp")
            .field("program", &self.program)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl LbXdp {
    /// Loads the program with `config`; every cell of the hash space starts at
    /// [`LB_NO_ROUTER`]. A verifier rejection carries the verifier log.
    pub fn load(config: &LbXdpConfig) -> Result<Self, XdpError> {
        config.validate()?;
        let mut ebpf = EbpfLoader::new()
            .map_max_entries("lb_frags", config.fragment_entries)
            .map_max_entries("lb_frags_out", config.fragment_entries)
            .load(ELF)?;
        let program = if config.frags {
            "ndx_lb_frags"
        } else {
            "ndx_lb"
        };
        load_program(&mut ebpf, program)?;
        let mut take = |name: &str| take_map(&mut ebpf, name);
        let mut cfg_map: Array<MapData, RawLbConfig> = Array::try_from(take("lb_config")?)?;
        let mut table = Array::try_from(take("lb_table")?)?;
        let routers = Array::try_from(take("lb_routers")?)?;
        let ports = Array::try_from(take("lb_ports")?)?;
        let vips = HashMap::try_from(take("lb_vips")?)?;
        let ifaddrs = HashMap::try_from(take("lb_ifaddrs")?)?;
        let router_addrs = HashMap::try_from(take("lb_router_addrs")?)?;
        let stats = PerCpuArray::try_from(take("lb_stats")?)?;
        let rstats = PerCpuArray::try_from(take("lb_rstats")?)?;
        for cell in 0..config.table_len {
            table.set(cell, LB_NO_ROUTER, 0)?;
        }
        let (mode, param) = config.hash.raw();
        let raw = RawLbConfig {
            k0: config.k0,
            k1: config.k1,
            param,
            mode,
            table_len: config.table_len,
            port: config.port,
            pad: 0,
            n_vips: 0,
            vips: [[0; 4]; INLINE_VIPS],
        };
        cfg_map.set(0, raw, 0)?;
        Ok(Self {
            ebpf,
            program,
            config: config.clone(),
            raw,
            cfg_map,
            vip_list: Vec::new(),
            table,
            routers,
            ports,
            vips,
            ifaddrs,
            router_addrs,
            slot_addrs: vec![None; LB_MAX_ROUTERS as usize],
            stats,
            rstats,
        })
    }

    /// The configuration the program was loaded with.
    pub fn config(&self) -> &LbXdpConfig {
        &self.config
    }

    /// The program's file descriptor.
    pub fn program_fd(&self) -> Result<BorrowedFd<'_>, XdpError> {
        program_fd(&self.ebpf, self.program)
    }

    /// Verifier and JIT statistics of the loaded program.
    pub fn program_stats(&self) -> Result<ProgramStats, XdpError> {
        program_stats(&self.ebpf, self.program)
    }

    /// Attaches to `interface` through a bpf_link (detached when the guard drops or the
    /// process dies).
    pub fn attach<'a>(
        &mut self,
        interface: impl Into<Interface<'a>>,
        mode: AttachMode,
    ) -> Result<LinkGuard, XdpError> {
        attach(&mut self.ebpf, self.program, interface.into(), mode)
    }

    fn check_slot(slot: u32) -> Result<(), XdpError> {
        if slot >= LB_MAX_ROUTERS {
            return Err(XdpError::OutOfRange {
                what: "router slot",
                value: slot as usize,
                limit: LB_MAX_ROUTERS as usize,
            });
        }
        Ok(())
    }

    /// Router `slot` is `address:port` (its counters start from 0 when the slot was free).
    ///
    /// `ifindex` is the interface the router is reached on (0: any): packets with its
    /// address and port arriving elsewhere are dropped (`spoofed`). UDP from its address
    /// that is not from its port is dropped too (`router-other`), rather than forwarded by
    /// the kernel with an internal source address.
    pub fn set_router(
        &mut self,
        slot: u32,
        address: Ipv4Addr,
        port: u16,
        ifindex: u32,
    ) -> Result<(), XdpError> {
        Self::check_slot(slot)?;
        let old = self.routers.get(&slot, 0)?;
        if old.in_use == 0 {
            self.reset_router_counters(slot)?;
        }
        self.router_addrs.insert(address.octets(), 1, 0)?;
        let r = RawRouter {
            addr: address.octets(),
            port: port.to_be_bytes(),
            in_use: 1,
            pad: 0,
            ifindex,
        };
        self.routers.set(slot, r, 0)?;
        self.slot_addrs[slot as usize] = Some(address);
        Ok(())
    }

    /// Frees router `slot`.
    pub fn clear_router(&mut self, slot: u32) -> Result<(), XdpError> {
        Self::check_slot(slot)?;
        let r = RawRouter {
            addr: [0; 4],
            port: [0; 2],
            in_use: 0,
            pad: 0,
            ifindex: 0,
        };
        self.routers.set(slot, r, 0)?;
        if let Some(a) = self.slot_addrs[slot as usize].take()
            && !self.slot_addrs.contains(&Some(a))
        {
            let _ = self.router_addrs.remove(&a.octets());
        }
        Ok(())
    }

    fn reset_router_counters(&mut self, slot: u32) -> Result<(), XdpError> {
        let cpus = aya::util::nr_cpus().map_err(|(_, e)| XdpError::Config(e.to_string()))?;
        for i in 0..LbRouterCounters::COUNT as u32 {
            let zeros = aya::maps::PerCpuValues::try_from(vec![0u64; cpus])
                .map_err(|e| XdpError::Config(e.to_string()))?;
            self.rstats
                .set(slot * LbRouterCounters::COUNT as u32 + i, zeros, 0)?;
        }
        Ok(())
    }

    /// PORT MAP: packets to `port` on a well-known address go to router `slot`.
    pub fn set_port(&mut self, port: u16, slot: u32) -> Result<(), XdpError> {
        Self::check_slot(slot)?;
        self.ports.set(u32::from(port), slot + 1, 0)?;
        Ok(())
    }

    /// Removes `port` from the PORT MAP.
    pub fn clear_port(&mut self, port: u16) -> Result<(), XdpError> {
        self.ports.set(u32::from(port), 0, 0)?;
        Ok(())
    }

    /// Points hash-space `cell` at router `slot` ([`LB_NO_ROUTER`]: none).
    pub fn set_cell(&mut self, cell: u32, slot: u32) -> Result<(), XdpError> {
        if cell >= self.config.table_len {
            return Err(XdpError::OutOfRange {
                what: "hash-space cell",
                value: cell as usize,
                limit: self.config.table_len as usize,
            });
        }
        if slot != LB_NO_ROUTER {
            Self::check_slot(slot)?;
        }
        self.table.set(cell, slot, 0)?;
        Ok(())
    }

    /// Adds a well-known address (at most [`LB_MAX_VIPS`]; the first 8 are compared inline,
    /// the others looked up in a hash map).
    pub fn add_vip(&mut self, address: Ipv4Addr) -> Result<(), XdpError> {
        if self.vip_list.contains(&address) {
            return Ok(());
        }
        if self.vip_list.len() >= LB_MAX_VIPS {
            return Err(XdpError::OutOfRange {
                what: "well-known addresses",
                value: self.vip_list.len() + 1,
                limit: LB_MAX_VIPS,
            });
        }
        self.vips.insert(address.octets(), 1, 0)?;
        self.vip_list.push(address);
        self.write_vips()
    }

    /// Removes a well-known address.
    pub fn remove_vip(&mut self, address: Ipv4Addr) -> Result<(), XdpError> {
        self.vip_list.retain(|a| *a != address);
        self.write_vips()?;
        let _ = self.vips.remove(&address.octets());
        Ok(())
    }

    fn write_vips(&mut self) -> Result<(), XdpError> {
        self.raw.vips = [[0; 4]; INLINE_VIPS];
        for (slot, a) in self.raw.vips.iter_mut().zip(&self.vip_list) {
            *slot = a.octets();
        }
        self.raw.n_vips = self.vip_list.len() as u32;
        self.cfg_map.set(0, self.raw, 0)?;
        Ok(())
    }

    /// The front end's address on interface `ifindex` (the source of what it sends there).
    pub fn set_ifaddr(&mut self, ifindex: u32, address: Ipv4Addr) -> Result<(), XdpError> {
        self.ifaddrs.insert(ifindex, address.octets(), 0)?;
        Ok(())
    }

    /// Forgets the address of interface `ifindex`.
    pub fn clear_ifaddr(&mut self, ifindex: u32) -> Result<(), XdpError> {
        self.ifaddrs.remove(&ifindex)?;
        Ok(())
    }

    fn sum(map: &PerCpuArray<MapData, u64>, index: u32) -> Result<u64, XdpError> {
        Ok(map
            .get(&index, 0)?
            .iter()
            .copied()
            .fold(0, u64::wrapping_add))
    }

    /// The global counters, summed over CPUs.
    pub fn counters(&self) -> Result<LbCounters, XdpError> {
        let mut v = [0u64; LbCounters::COUNT];
        for (i, c) in v.iter_mut().enumerate() {
            *c = Self::sum(&self.stats, i as u32)?;
        }
        Ok(LbCounters::from_slice(&v))
    }

    /// Router `slot`'s counters, summed over CPUs.
    pub fn router_counters(&self, slot: u32) -> Result<LbRouterCounters, XdpError> {
        Self::check_slot(slot)?;
        let mut v = [0u64; LbRouterCounters::COUNT];
        for (i, c) in v.iter_mut().enumerate() {
            *c = Self::sum(
                &self.rstats,
                slot * LbRouterCounters::COUNT as u32 + i as u32,
            )?;
        }
        Ok(LbRouterCounters::from_slice(&v))
    }

    /// Runs the program once on `frame` as if received on `ifindex` (BPF_PROG_TEST_RUN, in
    /// the calling thread's network namespace, where `bpf_fib_lookup` looks).
    pub fn test_run(&self, frame: &[u8], ifindex: u32) -> Result<TestRun, XdpError> {
        prog_test_run(self.program_fd()?, frame, ifindex, 0, 1).map(|(r, _)| r)
    }

    /// Runs the program `repeat` times on `frame` received on `ifindex`; the kernel's
    /// average time per run in nanoseconds.
    ///
    /// The kernel does not reset the frame between repeats: from the second run on the
    /// program sees the frame it rewrote (NATed, which it passes as not cluster traffic), so
    /// with `repeat > 1` this times the pass path, not forwarding. `examples/lb_bench.rs`
    /// times the forwarding path (it restores the frame before each run).
    pub fn time_run(&self, frame: &[u8], ifindex: u32, repeat: u32) -> Result<u32, XdpError> {
        prog_test_run(self.program_fd()?, frame, ifindex, 0, repeat.max(1)).map(|(_, ns)| ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comp(typ: u8, v: &[u8]) -> Vec<u8> {
        let mut c = vec![typ, v.len() as u8];
        c.extend_from_slice(v);
        c
    }

    #[test]
    fn cells_follow_the_hash_modes() {
        let name: Vec<u8> = [comp(8, b"a"), comp(8, b"file"), comp(50, &[0x01, 0x02])].concat();
        let mut cfg = LbXdpConfig {
            k0: 1,
            k1: 2,
            hash: LbHash::Name,
            table_len: 4096,
            port: 6363,
            fragment_entries: 1024,
            frags: false,
        };
        let key = cfg.hash_key();
        assert_eq!(cfg.cell(&name), Some(key.hash(&name) as u32 & 4095));
        cfg.hash = LbHash::Prefix(2);
        assert_eq!(cfg.cell(&name), Some(key.hash(&name[..9]) as u32 & 4095));
        cfg.hash = LbHash::Prefix(9);
        assert_eq!(
            cfg.cell(&name),
            Some(key.hash(&name) as u32 & 4095),
            "k beyond the name"
        );
        cfg.hash = LbHash::Batch(16);
        // Segment 0x0102 = 258: batch 16.
        let want = key.hash_parts(&[&name[..9], &16u64.to_le_bytes()]) as u32 & 4095;
        assert_eq!(cfg.cell(&name), Some(want));
        assert_eq!(cfg.cell(&[8, 5, 1]), None, "truncated component");
    }

    #[test]
    fn validation_names_the_problem() {
        let ok = LbXdpConfig {
            k0: 0,
            k1: 0,
            hash: LbHash::Name,
            table_len: 64,
            port: 6363,
            fragment_entries: 16,
            frags: false,
        };
        ok.validate().unwrap();
        let bad = LbXdpConfig {
            table_len: 100,
            ..ok.clone()
        };
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("power of two")
        );
        let bad = LbXdpConfig {
            hash: LbHash::Batch(0),
            ..ok.clone()
        };
        assert!(bad.validate().is_err());
        let bad = LbXdpConfig { port: 0, ..ok };
        assert!(bad.validate().is_err());
    }
}
