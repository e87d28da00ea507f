//! A (device, queue) with one UMEM and N AF_XDP sockets sharing it.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::num::NonZeroU32;
use std::sync::Arc;

use xdpilone::{IfInfo, Socket, SocketConfig};

use crate::Error;
use crate::endpoint::{Endpoint, EndpointParts, Layout, OwnerRings};
use crate::spsc;
use crate::umem::{Region, Umem, UmemConfig};

/// `XDP_USE_SG`: accept multi-buffer packets (bind flag, Linux 6.6+).
pub const XDP_USE_SG: u16 = 1 << 4;

/// `SOL_XDP` socket option: the copy-mode TX budget per `sendto` (Linux 6.17+).
const XDP_MAX_TX_SKB_BUDGET: libc::c_int = 9;
/// The kernel's copy-mode TX budget per `sendto` when not raised (`TX_BATCH_SIZE`).
pub const DEFAULT_TX_BUDGET: u32 = 32;

fn set_int(
    fd: libc::c_int,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
    op: &'static str,
) -> Result<(), Error> {
    // SAFETY: a plain setsockopt on our own socket with an int value of the right size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&raw const v).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 { Ok(()) } else { Err(Error::sys(op)) }
}

/// Turns on busy polling with `budget` packets per poll.
fn set_busy_poll(fd: libc::c_int, budget: u32) -> Result<(), Error> {
    set_int(
        fd,
        libc::SOL_SOCKET,
        libc::SO_PREFER_BUSY_POLL,
        1,
        "setsockopt SO_PREFER_BUSY_POLL",
    )?;
    set_int(
        fd,
        libc::SOL_SOCKET,
        libc::SO_BUSY_POLL,
        20,
        "setsockopt SO_BUSY_POLL",
    )?;
    let b = libc::c_int::try_from(budget).unwrap_or(libc::c_int::MAX);
    set_int(
        fd,
        libc::SOL_SOCKET,
        libc::SO_BUSY_POLL_BUDGET,
        b,
        "setsockopt SO_BUSY_POLL_BUDGET",
    )
}

/// Sets the copy-mode TX budget of a socket whose TX ring exists; a kernel without the
/// option (ENOPROTOOPT, before 6.17) keeps its default.
fn set_tx_budget(fd: libc::c_int, budget: u32) -> Result<(), Error> {
    // SAFETY: a plain setsockopt on our own socket with a u32 value of the right size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_XDP,
            XDP_MAX_TX_SKB_BUDGET,
            (&raw const budget).cast(),
            std::mem::size_of::<u32>() as libc::socklen_t,
        )
    };
    if r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOPROTOOPT) {
        Ok(())
    } else {
        Err(Error::sys("setsockopt XDP_MAX_TX_SKB_BUDGET"))
    }
}

/// Configuration of a [`Port`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortConfig {
    /// The UMEM of the port.
    pub umem: UmemConfig,
    /// Number of sockets bound to the queue (1..=64), sharing the UMEM.
    pub sockets: u32,
    /// RX ring entries per socket (power of two). Default 2048.
    pub rx_ring: u32,
    /// TX ring entries per socket (power of two). Default 2048.
    pub tx_ring: u32,
    /// Frames reserved for transmission per socket; the rest feed the fill
    /// ring. Default: a quarter of the frames split among the sockets.
    pub tx_frames: Option<u32>,
    /// Bind with `XDP_USE_SG` (multi-buffer RX/TX, needed for an `xdp.frags`
    /// program at jumbo MTU). Default true.
    pub multi_buffer: bool,
    /// Force copy mode (`XDP_COPY`; veth supports nothing else). Default false:
    /// the kernel picks.
    pub force_copy: bool,
    /// Bind with `XDP_USE_NEED_WAKEUP` and make system calls only when a ring's flags
    /// word asks for them (`sendto` for TX, `poll` for the fill ring). Default true.
    /// In copy mode the kernel always asks on TX (it transmits only inside `sendto`) and
    /// never on the fill ring (the sender's softirq receives).
    pub need_wakeup: bool,
    /// Frames the kernel may transmit per `sendto` in copy mode
    /// (`XDP_MAX_TX_SKB_BUDGET`, Linux 6.17+): from 32 (the kernel's own default) up to
    /// `tx_ring`. `None` (the default) means `tx_ring`: one call drains the ring. A kernel
    /// without the option keeps 32 (and [`crate::Endpoint::kick`] simply calls again).
    pub tx_budget: Option<u32>,
    /// Socket busy polling: `SO_PREFER_BUSY_POLL`, `SO_BUSY_POLL` (20 µs) and
    /// `SO_BUSY_POLL_BUDGET` set to this many packets. `None` (the default) leaves it off:
    /// in copy mode on veth there is no NAPI context to busy-poll.
    pub busy_poll: Option<u32>,
}

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig {
            umem: UmemConfig::default(),
            sockets: 1,
            rx_ring: 2048,
            tx_ring: 2048,
            tx_frames: None,
            multi_buffer: true,
            force_copy: false,
            need_wakeup: true,
            tx_budget: None,
            busy_poll: None,
        }
    }
}

/// One (device, queue) opened for AF_XDP: a UMEM and its sockets.
///
/// Take the endpoints out with [`Port::into_endpoints`] and move each to its
/// shard thread; put their fds ([`std::os::fd::AsRawFd`]) into the XSKMAP.
#[derive(Debug)]
pub struct Port {
    umem: Umem,
    endpoints: Vec<Endpoint>,
}

fn pow2(name: &str, v: u32) -> Result<u32, Error> {
    if v.is_power_of_two() {
        Ok(v)
    } else {
        Err(Error::Config(format!(
            "{name} = {v} must be a power of two"
        )))
    }
}

impl Port {
    /// Maps the UMEM, creates `cfg.sockets` sockets on `(ifname, queue)`, binds
    /// them (the first owns the fill and completion rings; the others bind with
    /// `XDP_SHARED_UMEM` to it) and posts the RX frames to the fill ring.
    pub fn open(ifname: &str, queue: u32, cfg: &PortConfig) -> Result<Port, Error> {
        let n = cfg.sockets;
        if !(1..=64).contains(&n) {
            return Err(Error::Config(format!("sockets = {n} must be in 1..=64")));
        }
        pow2("rx_ring", cfg.rx_ring)?;
        pow2("tx_ring", cfg.tx_ring)?;
        if let Some(b) = cfg.tx_budget
            && !(DEFAULT_TX_BUDGET..=cfg.tx_ring).contains(&b)
        {
            return Err(Error::Config(format!(
                "tx_budget = {b} must be in {DEFAULT_TX_BUDGET}..={} (the TX ring)",
                cfg.tx_ring
            )));
        }
        if let Some(b) = cfg.busy_poll
            && !(1..=65535).contains(&b)
        {
            return Err(Error::Config(format!(
                "busy_poll = {b} must be in 1..=65535"
            )));
        }
        let fc = cfg.umem.frame_count;
        let tx_per = cfg.tx_frames.unwrap_or((fc / 4 / n).max(1));
        let tx_total = u64::from(tx_per) * u64::from(n);
        if tx_per == 0 || tx_total >= u64::from(fc) {
            return Err(Error::Config(format!(
                "{n} sockets x {tx_per} TX frames leave no RX frame out of {fc}"
            )));
        }
        let layout = Layout {
            rx_frames: fc - tx_total as u32,
            tx_per_socket: tx_per,
            sockets: n,
        };

        let region = Arc::new(Region::map(&cfg.umem)?);
        let ring_size = fc.next_power_of_two();
        let ucfg = xdpilone::UmemConfig {
            fill_size: ring_size,
            complete_size: ring_size,
            frame_size: cfg.umem.frame_size,
            headroom: cfg.umem.headroom,
            flags: 0,
        };
        // SAFETY: the area is a fresh page-aligned mapping of exactly
        // frame_size * frame_count bytes, kept alive by `region`, which every
        // endpoint holds and drops after its sockets.
        let xumem = unsafe { xdpilone::Umem::new(ucfg, region.area()) }
            .map_err(|e| Error::errno("XDP_UMEM_REG", &e))?;

        let cname = CString::new(ifname).map_err(|_| Error::NoInterface(ifname.to_owned()))?;
        let mut info = IfInfo::invalid();
        info.from_name(&cname)
            .map_err(|_| Error::NoInterface(ifname.to_owned()))?;
        info.set_queue(queue);
        let ifindex = info.ifindex();

        let mut flags = if cfg.multi_buffer { XDP_USE_SG } else { 0 };
        if cfg.force_copy {
            flags |= SocketConfig::XDP_BIND_COPY;
        }
        if cfg.need_wakeup {
            flags |= SocketConfig::XDP_BIND_NEED_WAKEUP;
        }
        let rx_size = NonZeroU32::new(cfg.rx_ring);
        let tx_size = NonZeroU32::new(cfg.tx_ring);
        let owner_sc = SocketConfig {
            rx_size,
            tx_size,
            bind_flags: flags,
        };
        // Shared sockets may pass no flag: they inherit SG/copy/need-wakeup from the owner.
        let shared_sc = SocketConfig {
            rx_size,
            tx_size,
            bind_flags: 0,
        };

        let sock0 = Socket::with_shared(&info, &xumem).map_err(|e| Error::errno("socket", &e))?;
        let dq = xumem
            .fq_cq(&sock0)
            .map_err(|e| Error::errno("fill/completion rings", &e))?;
        let user0 = xumem
            .rx_tx(&sock0, &owner_sc)
            .map_err(|e| Error::errno("rx/tx rings", &e))?;
        let rx0 = user0
            .map_rx()
            .map_err(|e| Error::errno("mmap RX ring", &e))?;
        let tx0 = user0
            .map_tx()
            .map_err(|e| Error::errno("mmap TX ring", &e))?;
        // Unset: the whole ring (when it exceeds the kernel's default at all).
        let tx_budget = cfg
            .tx_budget
            .or((cfg.tx_ring > DEFAULT_TX_BUDGET).then_some(cfg.tx_ring));
        if let Some(b) = tx_budget {
            set_tx_budget(user0.as_raw_fd(), b)?;
        }
        if let Some(b) = cfg.busy_poll {
            set_busy_poll(user0.as_raw_fd(), b)?;
        }
        xumem.bind(&user0).map_err(|e| Error::errno("bind", &e))?;

        let fs = u64::from(cfg.umem.frame_size);
        let tx_frames_of = |i: u32| -> Vec<u64> {
            let start = u64::from(layout.rx_frames) + u64::from(i) * u64::from(tx_per);
            (start..start + u64::from(tx_per))
                .rev()
                .map(|f| f * fs)
                .collect()
        };

        let mut others = Vec::new();
        let mut from_others = Vec::new();
        let mut to_others = vec![None];
        for i in 1..n {
            let s = Socket::new(&info).map_err(|e| Error::errno("socket", &e))?;
            let u = xumem
                .rx_tx(&s, &shared_sc)
                .map_err(|e| Error::errno("rx/tx rings", &e))?;
            let rx = u.map_rx().map_err(|e| Error::errno("mmap RX ring", &e))?;
            let tx = u.map_tx().map_err(|e| Error::errno("mmap TX ring", &e))?;
            if let Some(b) = tx_budget {
                set_tx_budget(u.as_raw_fd(), b)?;
            }
            if let Some(b) = cfg.busy_poll {
                set_busy_poll(u.as_raw_fd(), b)?;
            }
            dq.bind(&u).map_err(|e| Error::errno("bind shared", &e))?;
            let (ret_p, ret_c) = spsc::channel(fc as usize);
            let (back_p, back_c) = spsc::channel(tx_per as usize);
            from_others.push(ret_c);
            to_others.push(Some(back_p));
            others.push(EndpointParts {
                index: i,
                queue,
                ifindex,
                rx,
                tx,
                tx_size: cfg.tx_ring,
                owner: None,
                to_owner: Some(ret_p),
                tx_back: Some(back_c),
                tx_free: tx_frames_of(i),
                layout,
                need_wakeup: cfg.need_wakeup,
                user: u,
                region: region.clone(),
            });
        }
        let (fill, comp) = dq.into_parts();
        let owner = OwnerRings {
            fill,
            comp,
            free_rx: (0..u64::from(layout.rx_frames))
                .rev()
                .map(|f| f * fs)
                .collect(),
            from_others,
            to_others,
        };
        let mut endpoints = vec![Endpoint::new(EndpointParts {
            index: 0,
            queue,
            ifindex,
            rx: rx0,
            tx: tx0,
            tx_size: cfg.tx_ring,
            owner: Some(Box::new(owner)),
            to_owner: None,
            tx_back: None,
            tx_free: tx_frames_of(0),
            layout,
            need_wakeup: cfg.need_wakeup,
            user: user0,
            region: region.clone(),
        })];
        endpoints.extend(others.into_iter().map(Endpoint::new));
        drop(xumem);
        Ok(Port {
            umem: Umem { region },
            endpoints,
        })
    }

    /// Id of the port (equals [`crate::RxFrame::port`] of its frames).
    pub fn id(&self) -> u32 {
        self.umem.port()
    }

    /// A read handle on the port's UMEM.
    pub fn umem(&self) -> &Umem {
        &self.umem
    }

    /// The endpoints (index 0 owns the fill and completion rings).
    pub fn endpoints_mut(&mut self) -> &mut [Endpoint] {
        &mut self.endpoints
    }

    /// Takes the endpoints out, to move each to its thread.
    pub fn into_endpoints(self) -> Vec<Endpoint> {
        self.endpoints
    }
}
