//! The raw AF_XDP reflector: the baseline the router is measured against.
//!
//! Frames received on a queue are turned around in place (MACs, IP addresses
//! and UDP ports swapped; checksums stay valid) and transmitted from the same
//! UMEM frame: no copy, no parsing beyond the headers.

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::xdp::RedirectProgram;
use crate::{Endpoint, Error, KernelStats, Port, PortConfig, RxFrame, wire};

/// What a reflector run did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReflectStats {
    /// Packets received.
    pub rx_packets: u64,
    /// Packets sent back.
    pub tx_packets: u64,
    /// Packets dropped (not UDP/IP, or TX ring full).
    pub dropped: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Time spent receiving: the sum of gaps under 100 ms between bursts
    /// that brought packets (idle periods excluded).
    pub active: Duration,
    /// Kernel statistics of the socket at the end.
    pub kernel: KernelStats,
}

impl ReflectStats {
    /// Received packets per second while traffic was flowing.
    pub fn rx_pps(&self) -> f64 {
        self.rx_packets as f64 / self.active.as_secs_f64().max(1e-9)
    }
}

/// Reflects on `ep` until `stop()` returns true (checked once per burst).
pub fn reflect(ep: &mut Endpoint, stop: impl FnMut(&ReflectStats) -> bool) -> ReflectStats {
    drive(ep, true, stop)
}

/// Receives and releases on `ep` (one-way baseline) until `stop()` returns true.
pub fn sink(ep: &mut Endpoint, stop: impl FnMut(&ReflectStats) -> bool) -> ReflectStats {
    drive(ep, false, stop)
}

fn drive(
    ep: &mut Endpoint,
    turn_around: bool,
    mut stop: impl FnMut(&ReflectStats) -> bool,
) -> ReflectStats {
    let start = Instant::now();
    let mut st = ReflectStats::default();
    let mut burst: Vec<RxFrame> = Vec::with_capacity(256);
    let mut last_rx: Option<Instant> = None;
    while !stop(&st) {
        burst.clear();
        let n = ep.rx_burst(&mut burst, 256) as u64;
        if n > 0 {
            let now = Instant::now();
            if let Some(gap) = last_rx
                .map(|t| now - t)
                .filter(|g| *g < Duration::from_millis(100))
            {
                st.active += gap;
            }
            last_rx = Some(now);
        }
        st.rx_packets += n;
        for mut f in burst.drain(..) {
            if !turn_around {
                ep.release(f);
                continue;
            }
            let total = f.len();
            let ok = wire::swap_in_place(ep.frame_mut(&mut f).segment_mut(0), total);
            if !ok {
                st.dropped += 1;
                ep.release(f);
                continue;
            }
            match ep.forward(f) {
                Ok(()) => st.tx_packets += 1,
                Err(f) => {
                    st.dropped += 1;
                    ep.release(f);
                }
            }
        }
        ep.flush_tx();
        ep.complete();
        ep.recycle();
        st.elapsed = start.elapsed();
    }
    st.elapsed = start.elapsed();
    st.kernel = ep.kernel_stats().unwrap_or_default();
    st
}

/// Opens `(ifname, queue)`, attaches the redirect program and reflects (or,
/// with `turn_around` false, only receives) for `duration`. The program is
/// detached when this returns.
pub fn run(
    ifname: &str,
    queue: u32,
    duration: Duration,
    turn_around: bool,
) -> Result<ReflectStats, Error> {
    // The redirect program writes no metadata here: skip clearing it.
    let mut cfg = PortConfig::default();
    cfg.umem.meta_len = 0;
    let port = Port::open(ifname, queue, &cfg)?;
    let mut ep = port.into_endpoints().remove(0);
    let mut prog = RedirectProgram::attach(ifname, 1, false)?;
    prog.insert(queue, 0, &ep.as_raw_fd())?;
    let deadline = Instant::now() + duration;
    Ok(drive(&mut ep, turn_around, |_| Instant::now() >= deadline))
}
