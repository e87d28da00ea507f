//! The AF_XDP consumer: Interests as fast as the window allows, Data counted per second.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ndx_afxdp::RxFrame;
use ndx_afxdp::wire::{self, UdpHeaders};
use serde::Serialize;

use crate::Error;
use crate::interest::{InterestTemplate, Nonces, id_of};
use crate::link::Link;
use crate::packet::{Incoming, classify};
use crate::window::{Naming, Window};

/// What the consumer does.
#[derive(Debug, Clone)]
pub struct ConsumerConfig {
    /// Interface to send and receive on.
    pub iface: String,
    /// Queue to transmit on (its socket also receives).
    pub tx_queue: u32,
    /// Queues to receive on (empty: all of the interface's).
    pub rx_queues: Vec<u32>,
    /// Next hop's MAC address.
    pub dst_mac: [u8; 6],
    /// Our address and UDP port.
    pub src: SocketAddr,
    /// The forwarder's address and UDP port.
    pub dst: SocketAddr,
    /// Name prefix (NDN URI).
    pub prefix: String,
    /// Unique names or K distinct names.
    pub naming: Naming,
    /// Interests outstanding at most.
    pub window: usize,
    /// Measured duration.
    pub duration: Duration,
    /// Unmeasured warm-up before it.
    pub warmup: Duration,
    /// InterestLifetime put in the Interests.
    pub lifetime_ms: u64,
    /// An exchange without an answer after this long is counted as lost and its slot reused.
    pub timeout: Duration,
    /// Most Interests queued per loop turn.
    pub burst: usize,
    /// Count a reflected Interest (our own name coming back) as an answer: for measuring a raw
    /// reflector with the same generator.
    pub echo: bool,
    /// UMEM frames per queue.
    pub frames: u32,
}

/// The result line.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConsumerReport {
    /// "unique", "distinct:K".
    pub naming: String,
    /// Window.
    pub window: usize,
    /// Measured seconds.
    pub seconds: f64,
    /// Interests sent in the measured period.
    pub interests: u64,
    /// Data (or echoes) matching an outstanding Interest in the measured period.
    pub satisfied: u64,
    /// Exchanges that timed out in the measured period.
    pub lost: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Replies matching nothing outstanding (late or duplicate).
    pub unmatched: u64,
    /// Frames that were not NDN-over-UDP replies.
    pub other_frames: u64,
    /// Interests sent per second.
    pub interests_per_s: f64,
    /// Satisfied exchanges per second.
    pub exchanges_per_s: f64,
    /// Mean round-trip time, microseconds.
    pub rtt_us: f64,
    /// The frame size of an Interest on the wire.
    pub interest_frame_bytes: usize,
    /// CPU seconds (user + system) the process used in the measured period.
    pub cpu_s: f64,
    /// The XDP socket's kernel counters at the end (debug text).
    pub kernel_stats: String,
}

#[derive(Default)]
struct Tally {
    interests: u64,
    satisfied: u64,
    lost: u64,
    nacks: u64,
    unmatched: u64,
    other: u64,
    rtt_ns: u64,
}

/// Runs the consumer and returns its report.
pub fn run(cfg: &ConsumerConfig) -> Result<ConsumerReport, Error> {
    let (mut link, tx_idx) =
        Link::open_with_tx(&cfg.iface, cfg.tx_queue, &cfg.rx_queues, cfg.frames)?;
    let mut window = Window::new(cfg.naming, cfg.window).map_err(Error::Option)?;
    let mut tpl = InterestTemplate::new(&cfg.prefix, cfg.lifetime_ms)?;
    let seed = crate::link::clock_seed();
    let mut nonces = Nonces::new(seed);
    let h = UdpHeaders {
        src_mac: link.mac,
        dst_mac: cfg.dst_mac,
        src: cfg.src,
        dst: cfg.dst,
        ttl: 64,
    };
    let mut hdr = [0u8; 64];
    let mut rx: Vec<RxFrame> = Vec::with_capacity(256);
    let mut t = Tally::default();
    let start = Instant::now();
    let measure_from = cfg.warmup;
    let end = cfg.warmup + cfg.duration;
    let timeout_ns = cfg.timeout.as_nanos() as u64;
    let mut measuring = false;
    let mut cpu0 = crate::cpu::cpu_seconds();
    let mut last_expire = 0u64;
    loop {
        let el = start.elapsed();
        if el >= end {
            break;
        }
        if !measuring && el >= measure_from {
            measuring = true;
            cpu0 = crate::cpu::cpu_seconds();
            t = Tally::default();
        }
        let now = el.as_nanos() as u64;
        // Send.
        let mut busy = false;
        let ep = &mut link.endpoints[tx_idx];
        for _ in 0..cfg.burst {
            let Some(id) = window.open(now) else { break };
            let interest = tpl.patch(id, nonces.next_nonce());
            let hl = wire::build_udp(&mut hdr, &h, &[interest])?;
            if ep.push_tx(&[&hdr[..hl], interest]).is_err() {
                // Not sent: give the slot back at once.
                window.close(id, now);
                break;
            }
            t.interests += 1;
            busy = true;
        }
        ep.flush_tx();
        // Receive on every queue.
        for ep in &mut link.endpoints {
            ep.complete();
            rx.clear();
            busy |= ep.rx_burst(&mut rx, 256) > 0;
            for f in rx.drain(..) {
                {
                    let fr = ep.frame(&f);
                    let seg = fr.first();
                    let reply = wire::parse(seg, f.len())
                        .filter(|p| p.payload.end <= seg.len())
                        .map(|p| classify(&seg[p.payload]));
                    let id = match reply {
                        Some(Incoming::Data(d, _)) => id_of(&d.name()),
                        Some(Incoming::Interest(i, _)) if cfg.echo => id_of(&i.name()),
                        Some(Incoming::Nack(_)) => {
                            t.nacks += 1;
                            None
                        }
                        _ => {
                            t.other += 1;
                            None
                        }
                    };
                    if let Some(id) = id {
                        match window.close(id, now) {
                            Some(rtt) => {
                                t.satisfied += 1;
                                t.rtt_ns += rtt;
                            }
                            None => t.unmatched += 1,
                        }
                    }
                }
                ep.release(f);
            }
            ep.recycle();
        }
        if !busy {
            // Window full and nothing arrived: let a producer sharing this CPU run.
            std::thread::yield_now();
        }
        if now - last_expire > 1_000_000 {
            last_expire = now;
            t.lost += window.expire(now.saturating_sub(timeout_ns));
        }
    }
    let secs = (start.elapsed().saturating_sub(measure_from))
        .as_secs_f64()
        .max(1e-9);
    let cpu_s = match (cpu0, crate::cpu::cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => 0.0,
    };
    let kernel = link.endpoints[tx_idx]
        .kernel_stats()
        .map(|k| format!("{k:?}"))
        .unwrap_or_default();
    Ok(ConsumerReport {
        naming: match cfg.naming {
            Naming::Unique => "unique".into(),
            Naming::Distinct(k) => format!("distinct:{k}"),
        },
        window: cfg.window,
        seconds: secs,
        interests: t.interests,
        satisfied: t.satisfied,
        lost: t.lost,
        nacks: t.nacks,
        unmatched: t.unmatched,
        other_frames: t.other,
        interests_per_s: t.interests as f64 / secs,
        exchanges_per_s: t.satisfied as f64 / secs,
        rtt_us: t.rtt_ns as f64 / t.satisfied.max(1) as f64 / 1000.0,
        interest_frame_bytes: tpl.len() + if cfg.src.is_ipv4() { 42 } else { 62 },
        cpu_s,
        kernel_stats: kernel,
    })
}
