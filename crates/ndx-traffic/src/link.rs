//! One interface opened for AF_XDP on some of its queues, with the redirect program attached.

use std::os::fd::AsRawFd;

use ndx_afxdp::neigh::Resolver;
use ndx_afxdp::xdp::RedirectProgram;
use ndx_afxdp::{Endpoint, Port, PortConfig};

use crate::Error;

/// The AF_XDP sockets of an interface (one per served queue) and its XDP program.
#[derive(Debug)]
pub struct Link {
    /// One endpoint per queue, in the order of [`Link::queues`].
    pub endpoints: Vec<Endpoint>,
    /// The queues served.
    pub queues: Vec<u32>,
    /// The interface's MAC address.
    pub mac: [u8; 6],
    // Detached on drop; declared last so the sockets close first.
    _prog: RedirectProgram,
}

/// Number of receive queues of `ifname` (from sysfs; 1 if it cannot be read).
pub fn rx_queue_count(ifname: &str) -> u32 {
    std::fs::read_dir(format!("/sys/class/net/{ifname}/queues"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
                .count() as u32
        })
        .unwrap_or(1)
        .max(1)
}

impl Link {
    /// [`open`](Self::open) for a sender: `rx_queues` (empty: all) plus `tx_queue`; also
    /// returns the index of `tx_queue`'s endpoint.
    pub fn open_with_tx(
        ifname: &str,
        tx_queue: u32,
        rx_queues: &[u32],
        frames: u32,
    ) -> Result<(Self, usize), Error> {
        let mut queues = rx_queues.to_vec();
        if !queues.is_empty() && !queues.contains(&tx_queue) {
            queues.push(tx_queue);
        }
        let link = Self::open(ifname, &queues, frames)?;
        let tx = link
            .queues
            .iter()
            .position(|&q| q == tx_queue)
            .ok_or_else(|| Error::Option(format!("queue {tx_queue} not opened")))?;
        Ok((link, tx))
    }

    /// Opens `queues` of `ifname` (empty: all of them), `frames` UMEM frames each, and attaches
    /// the redirect-everything program: every frame arriving on the interface goes to us.
    pub fn open(ifname: &str, queues: &[u32], frames: u32) -> Result<Self, Error> {
        let queues: Vec<u32> = if queues.is_empty() {
            (0..rx_queue_count(ifname)).collect()
        } else {
            queues.to_vec()
        };
        let mut cfg = PortConfig::default();
        cfg.umem.meta_len = 0;
        cfg.umem.frame_count = frames;
        cfg.multi_buffer = false;
        let mut endpoints = Vec::with_capacity(queues.len());
        for &q in &queues {
            let port = Port::open(ifname, q, &cfg)?;
            endpoints.push(port.into_endpoints().remove(0));
        }
        let mac = Resolver::new()?.link(endpoints[0].ifindex())?.mac;
        let mut prog = RedirectProgram::attach(ifname, 1, false)?;
        for (ep, &q) in endpoints.iter().zip(&queues) {
            prog.insert(q, 0, &ep.as_raw_fd())?;
        }
        Ok(Self {
            endpoints,
            queues,
            mac,
            _prog: prog,
        })
    }
}

/// A seed from the clock's nanoseconds (Nonces and source rotation need only differ per run).
pub fn clock_seed() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(1)
}
