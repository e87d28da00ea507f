//! Loading, configuring and attaching the program with aya.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

use aya::maps::{Array, MapData, PerCpuArray, XskMap};
use aya::programs::links::FdLink;
use aya::programs::{ProgramError, Xdp, XdpMode};
use aya::{Ebpf, EbpfLoader};

use crate::config::{RawConfig, XdpConfig};
use crate::counters::{RAW_COUNT, XdpCounters};
use crate::error::XdpError;
use crate::meta::{MAX_QUEUES, MAX_SHARDS};

/// The program object built from `bpf/ndx.c`.
static ELF: &[u8] = include_bytes!("../bpf/ndx.o");

/// Where XDP runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachMode {
    /// In the driver (native XDP); the fast path, and what AF_XDP wants.
    Driver,
    /// In the generic network stack (works on every device; slower; queue 0 only on veth).
    Skb,
}

/// The interface to attach to: a name or an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface<'a> {
    /// By name (`eth0`).
    Name(&'a str),
    /// By ifindex.
    Index(u32),
}

impl<'a> From<&'a str> for Interface<'a> {
    fn from(name: &'a str) -> Self {
        Interface::Name(name)
    }
}

impl From<u32> for Interface<'_> {
    fn from(index: u32) -> Self {
        Interface::Index(index)
    }
}

/// An attachment through a bpf_link: dropping it (or the process ending, however it ends)
/// detaches the program.
#[derive(Debug)]
pub struct LinkGuard {
    link: FdLink,
    ifindex: u32,
}

impl LinkGuard {
    /// The interface the program is attached to.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Detaches now (same as dropping).
    pub fn detach(self) {
        drop(self.link);
    }
}

/// What the verifier and the JIT report for the loaded program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramStats {
    /// Instructions the verifier processed (kernel 5.16+), if reported.
    pub verified_insns: Option<u32>,
    /// Size of the translated BPF code in bytes (8 bytes per instruction).
    pub xlated_bytes: Option<u32>,
    /// Size of the JIT-compiled code in bytes.
    pub jited_bytes: u32,
}

/// The loaded program and its maps.
pub struct NdxXdp {
    ebpf: Ebpf,
    program: &'static str,
    config: Array<MapData, RawConfig>,
    table: Array<MapData, u8>,
    xsks: XskMap<MapData>,
    stats: PerCpuArray<MapData, u64>,
    shards: usize,
    table_len: usize,
}

impl core::fmt::Debug for NdxXdp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NdxXdp")
            .field("program", &self.program)
            .field("shards", &self.shards)
            .field("table_len", &self.table_len)
            .finish_non_exhaustive()
    }
}

impl NdxXdp {
    /// Loads the program (the `xdp.frags` variant if `config.frags`) and writes the
    /// configuration and the indirection table. On a verifier rejection the error carries
    /// the verifier log.
    pub fn load(config: &XdpConfig) -> Result<Self, XdpError> {
        Self::load_object(ELF, config)
    }

    /// [`NdxXdp::load`] with another build of `bpf/ndx.c` than the embedded one, for A/B
    /// benchmarks in one process (`examples/ndx-xdp-cost.rs` times the previous commit's
    /// object next to this one's). The object must have the same maps and configuration
    /// layout; its counters are read as this crate's layout, so they are only meaningful
    /// for an object of the same counter layout.
    pub fn load_object(elf: &[u8], config: &XdpConfig) -> Result<Self, XdpError> {
        config.validate()?;
        let mut ebpf = EbpfLoader::new().load(elf)?;
        let program = if config.frags {
            "ndx_xdp_frags"
        } else {
            "ndx_xdp"
        };
        load_program(&mut ebpf, program)?;
        let config_map = Array::try_from(take_map(&mut ebpf, "ndx_config")?)?;
        let table = Array::try_from(take_map(&mut ebpf, "ndx_table")?)?;
        let xsks = XskMap::try_from(take_map(&mut ebpf, "ndx_xsks")?)?;
        let stats = PerCpuArray::try_from(take_map(&mut ebpf, "ndx_stats")?)?;
        let mut this = Self {
            ebpf,
            program,
            config: config_map,
            table,
            xsks,
            stats,
            shards: config.shards,
            table_len: config.table.len(),
        };
        this.reconfigure(config)?;
        Ok(this)
    }

    /// Rewrites the configuration and the table of the loaded program (the `frags` flag is
    /// fixed at load time and ignored here). The table is written before the configuration
    /// that may enlarge it.
    pub fn reconfigure(&mut self, config: &XdpConfig) -> Result<(), XdpError> {
        config.validate()?;
        for (i, &shard) in config.table.iter().enumerate() {
            self.table.set(i as u32, shard, 0)?;
        }
        self.config.set(0, config.raw(), 0)?;
        self.shards = config.shards;
        self.table_len = config.table.len();
        Ok(())
    }

    /// The program's file descriptor (for BPF_PROG_TEST_RUN or inspection).
    pub fn program_fd(&self) -> Result<BorrowedFd<'_>, XdpError> {
        program_fd(&self.ebpf, self.program)
    }

    /// Verifier and JIT statistics of the loaded program.
    pub fn program_stats(&self) -> Result<ProgramStats, XdpError> {
        program_stats(&self.ebpf, self.program)
    }

    /// Attaches to `interface` through a bpf_link. Fails with [`XdpError::NoBpfLink`] rather
    /// than leave a netlink attachment that would outlive the process.
    pub fn attach<'a>(
        &mut self,
        interface: impl Into<Interface<'a>>,
        mode: AttachMode,
    ) -> Result<LinkGuard, XdpError> {
        attach(&mut self.ebpf, self.program, interface.into(), mode)
    }

    /// Detaches (same as dropping the guard).
    pub fn detach(&mut self, link: LinkGuard) {
        link.detach();
    }

    /// Puts an AF_XDP socket at XSKMAP entry `queue * MAX_SHARDS + shard`.
    pub fn set_socket(&mut self, queue: u32, shard: u8, fd: impl AsRawFd) -> Result<(), XdpError> {
        let index = xsk_index(queue, shard)?;
        self.xsks.set(index, fd, 0)?;
        Ok(())
    }

    /// Empties XSKMAP entry `queue * MAX_SHARDS + shard`.
    pub fn clear_socket(&mut self, queue: u32, shard: u8) -> Result<(), XdpError> {
        let index = xsk_index(queue, shard)?;
        self.xsks.unset(index)?;
        Ok(())
    }

    /// Points indirection-table entry `index` at `shard` (live rebalancing).
    pub fn set_table_entry(&mut self, index: usize, shard: u8) -> Result<(), XdpError> {
        if index >= self.table_len {
            return Err(XdpError::OutOfRange {
                what: "table index",
                value: index,
                limit: self.table_len,
            });
        }
        if usize::from(shard) >= self.shards {
            return Err(XdpError::OutOfRange {
                what: "shard",
                value: shard.into(),
                limit: self.shards,
            });
        }
        self.table.set(index as u32, shard, 0)?;
        Ok(())
    }

    /// The counters, summed over CPUs.
    pub fn counters(&self) -> Result<XdpCounters, XdpError> {
        // An object loaded with `load_object` may have a shorter map (an older layout):
        // `from_raw` folds what it has.
        let n = (self.stats.len() as usize).min(RAW_COUNT);
        let mut v = [0u64; RAW_COUNT];
        for (i, slot) in v[..n].iter_mut().enumerate() {
            *slot = self
                .stats
                .get(&(i as u32), 0)?
                .iter()
                .copied()
                .fold(0, u64::wrapping_add);
        }
        Ok(XdpCounters::from_raw(&v[..n]))
    }
}

/// Loads program `name` of `ebpf` into the kernel; a verifier rejection carries its log.
pub(crate) fn load_program(ebpf: &mut Ebpf, name: &str) -> Result<(), XdpError> {
    let prog: &mut Xdp = ebpf
        .program_mut(name)
        .ok_or_else(|| XdpError::Config(format!("program {name} missing from the object")))?
        .try_into()?;
    prog.load().map_err(|e| match e {
        ProgramError::LoadError {
            io_error,
            verifier_log,
        } => XdpError::Verifier {
            io_error,
            log: verifier_log.to_string(),
        },
        e => XdpError::Program(e),
    })
}

/// Takes map `name` out of `ebpf`.
pub(crate) fn take_map(ebpf: &mut Ebpf, name: &str) -> Result<aya::maps::Map, XdpError> {
    ebpf.take_map(name)
        .ok_or_else(|| XdpError::Config(format!("map {name} missing from the object")))
}

fn xdp_program<'e>(ebpf: &'e Ebpf, name: &str) -> Result<&'e Xdp, XdpError> {
    let p = ebpf
        .program(name)
        .ok_or_else(|| XdpError::Config(format!("program {name} missing")))?;
    Ok(p.try_into()?)
}

/// The file descriptor of loaded program `name`.
pub(crate) fn program_fd<'e>(ebpf: &'e Ebpf, name: &str) -> Result<BorrowedFd<'e>, XdpError> {
    Ok(xdp_program(ebpf, name)?.fd()?.as_fd())
}

/// Verifier and JIT statistics of loaded program `name`.
pub(crate) fn program_stats(ebpf: &Ebpf, name: &str) -> Result<ProgramStats, XdpError> {
    let info = xdp_program(ebpf, name)?.info()?;
    Ok(ProgramStats {
        verified_insns: info.verified_instruction_count(),
        xlated_bytes: info.size_translated(),
        jited_bytes: info.size_jitted(),
    })
}

/// Attaches loaded program `name` to `interface` through a bpf_link; a netlink attachment
/// (which would outlive the process) is undone and refused with [`XdpError::NoBpfLink`].
pub(crate) fn attach(
    ebpf: &mut Ebpf,
    name: &str,
    interface: Interface<'_>,
    mode: AttachMode,
) -> Result<LinkGuard, XdpError> {
    let ifindex = match interface {
        Interface::Index(i) => i,
        Interface::Name(n) => ifindex_of(n)?,
    };
    let mode = match mode {
        AttachMode::Driver => XdpMode::Driver,
        AttachMode::Skb => XdpMode::Skb,
    };
    let prog: &mut Xdp = ebpf
        .program_mut(name)
        .ok_or_else(|| XdpError::Config(format!("program {name} missing")))?
        .try_into()?;
    let id = prog.attach_to_if_index(ifindex, mode)?;
    let link = prog.take_link(id)?;
    // A netlink attachment is detached by XdpLink's drop here, before we refuse it.
    let link = FdLink::try_from(link).map_err(|_| XdpError::NoBpfLink)?;
    Ok(LinkGuard { link, ifindex })
}

fn xsk_index(queue: u32, shard: u8) -> Result<u32, XdpError> {
    if queue as usize >= MAX_QUEUES {
        return Err(XdpError::OutOfRange {
            what: "queue",
            value: queue as usize,
            limit: MAX_QUEUES,
        });
    }
    if usize::from(shard) >= MAX_SHARDS {
        return Err(XdpError::OutOfRange {
            what: "shard",
            value: shard.into(),
            limit: MAX_SHARDS,
        });
    }
    Ok(queue * MAX_SHARDS as u32 + u32::from(shard))
}

/// The index of the interface named `name` in the calling thread's network namespace
/// (`if_nametoindex`); [`XdpError::UnknownInterface`] when there is none.
pub fn ifindex_of(name: &str) -> Result<u32, XdpError> {
    let unknown = || XdpError::UnknownInterface(name.to_owned());
    let c = std::ffi::CString::new(name).map_err(|_| unknown())?;
    #[expect(unsafe_code, reason = "libc call")]
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 { Err(unknown()) } else { Ok(i) }
}
