//! The AF_XDP producer: answers every Interest with a small Data, on the queue it came from.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ndx_afxdp::RxFrame;
use ndx_afxdp::wire::{self, UdpHeaders};
use serde::Serialize;

use crate::Error;
use crate::data::{DataBuilder, Signing};
use crate::link::Link;
use crate::packet::{Incoming, classify};

/// What the producer does.
#[derive(Debug, Clone)]
pub struct ProducerConfig {
    /// Interface.
    pub iface: String,
    /// Queues to serve (empty: all).
    pub queues: Vec<u32>,
    /// Content bytes per Data.
    pub content_len: usize,
    /// FreshnessPeriod of the Data.
    pub freshness_ms: u64,
    /// Signature.
    pub signing: Signing,
    /// Stop after this long (None: until `stop` is set).
    pub duration: Option<Duration>,
    /// UMEM frames per queue.
    pub frames: u32,
}

/// The result line.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProducerReport {
    /// Seconds run.
    pub seconds: f64,
    /// Interests received.
    pub interests: u64,
    /// Data sent.
    pub data: u64,
    /// Interests that arrived in an LpPacket with a PitToken.
    pub with_pit_token: u64,
    /// Answers not sent (TX ring or frames exhausted).
    pub tx_dropped: u64,
    /// Frames that were not Interests over UDP.
    pub other_frames: u64,
    /// Data sent per second while Interests were arriving.
    pub data_per_s: f64,
}

/// Runs the producer until the duration elapses or `stop` becomes true.
pub fn run(cfg: &ProducerConfig, stop: &Arc<AtomicBool>) -> Result<ProducerReport, Error> {
    let mut link = Link::open(&cfg.iface, &cfg.queues, cfg.frames)?;
    let mut data = DataBuilder::new(cfg.content_len, cfg.freshness_ms, cfg.signing);
    let mut rep = ProducerReport::default();
    let mut rx: Vec<RxFrame> = Vec::with_capacity(256);
    let mut hdr = [0u8; 64];
    let start = Instant::now();
    let mut first: Option<Instant> = None;
    let mut last = start;
    let mut turns = 0u32;
    let mut idle = 0u32;
    loop {
        turns = turns.wrapping_add(1);
        if turns.is_multiple_of(1024) {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if cfg.duration.is_some_and(|d| start.elapsed() >= d) {
                break;
            }
        }
        // Back off when idle, to leave the (shared) CPU to the others: yield at once (a
        // consumer on the same CPU gets to run), sleep after a long idle spell.
        if idle > 0 {
            std::thread::yield_now();
        }
        idle += 1;
        if idle > 4096 {
            std::thread::sleep(Duration::from_micros(20));
        }
        for ep in &mut link.endpoints {
            rx.clear();
            let n = ep.rx_burst(&mut rx, 256);
            if n > 0 {
                let now = Instant::now();
                first.get_or_insert(now);
                last = now;
                idle = 0;
            }
            for f in rx.drain(..) {
                let mut sent = None;
                {
                    let fr = ep.frame(&f);
                    let seg = fr.first();
                    if let Some(p) =
                        wire::parse(seg, f.len()).filter(|p| p.payload.end <= seg.len())
                        && let (Some(src), Some(dst)) = (p.src, p.dst)
                        && let Incoming::Interest(i, tok) = classify(&seg[p.payload.clone()])
                    {
                        rep.interests += 1;
                        rep.with_pit_token += u64::from(tok.is_some());
                        let h = UdpHeaders {
                            src_mac: p.dst_mac,
                            dst_mac: p.src_mac,
                            src: dst,
                            dst: src,
                            ttl: 64,
                        };
                        let d = data.build(i.name().as_bytes(), tok);
                        // The UDP checksum is summed while the Data is copied into the TX
                        // frame (`push_tx_udp`), as ndx and the L3 forwarder send: one pass.
                        sent = Some(wire::build_udp_header(&mut hdr, &h, d.len())?);
                    } else {
                        rep.other_frames += 1;
                    }
                }
                ep.release(f);
                if let Some((hl, sum)) = sent {
                    // The Data bytes are still in `data`'s buffer.
                    let d = data.last();
                    match ep.push_tx_udp(&[&hdr[..hl], d], sum) {
                        Ok(()) => rep.data += 1,
                        Err(_) => {
                            ep.flush_tx();
                            ep.complete();
                            match ep.push_tx_udp(&[&hdr[..hl], d], sum) {
                                Ok(()) => rep.data += 1,
                                Err(_) => rep.tx_dropped += 1,
                            }
                        }
                    }
                }
            }
            ep.flush_tx();
            ep.complete();
            ep.recycle();
        }
    }
    rep.seconds = start.elapsed().as_secs_f64();
    let active = first.map_or(0.0, |f| (last - f).as_secs_f64());
    rep.data_per_s = rep.data as f64 / active.max(1e-9);
    Ok(rep)
}
