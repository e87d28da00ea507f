//! The Prometheus / OpenMetrics endpoint (`[metrics] listen`).
//!
//! A thread of its own (`ndx-metrics`, never a shard worker) accepts HTTP connections on
//! the configured address; each scrape is served by a short-lived thread (at most
//! [`MAX_SCRAPES`] at once), which asks the control loop for a [`Sample`] (the control loop
//! answers on its next turn, within a few milliseconds, from the same published counters
//! as the control socket's `status`), renders it with `prometheus-client`'s OpenMetrics text
//! encoder and writes it back. `GET /metrics` answers 200; any other path or method 404; a
//! request head over [`MAX_REQUEST`] bytes 431; a request that does not parse 400; no
//! sample within [`SAMPLE_TIMEOUT`] 503. Every response closes its connection.
//!
//! Metric names derive from the counter tables in [`crate::counters`]: `ndx_` + the status JSON
//! name (+ `_total` for counters; `_bytes` counters carry the `bytes` unit), with a `shard`
//! label for the shards' counters and `face`, `name`, `remote` labels for the per-face loads.

use std::fmt;

use ndx_core::FaceLoad;
use ndx_xdp::XdpCounters;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit as PromUnit};

use crate::plane::Plane;

mod http;
pub mod parse;

use crate::stats::{
    COUNTERS, Def, FACE_LOADS, HistogramDef, Histograms, HostCounters, Kind, Snapshot, Unit,
};
pub use http::{CONTENT_TYPE, MAX_REQUEST, MAX_SCRAPES, MetricsServer, SAMPLE_TIMEOUT};

/// Everything one scrape exposes, taken by the control loop.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// Each shard's counters.
    pub shards: Vec<Snapshot>,
    /// The histograms, summed over shards.
    pub histograms: Histograms,
    /// Each shard's PIT share per face.
    pub pit_share: Vec<u32>,
    /// Every face in the table, with its load summed over shards.
    pub faces: Vec<FaceSample>,
    /// On-demand faces now, and peers refused one.
    pub on_demand: (u64, u64),
    /// The host thread's counters.
    pub host: HostCounters,
    /// Each attached interface's XDP program counters.
    pub xdp: Vec<(String, XdpCounters)>,
    /// Each attached interface's link.
    pub interfaces: Vec<InterfaceSample>,
    /// Seconds since the router started.
    pub uptime: f64,
}

/// One face of the table.
#[derive(Debug, Clone, Default)]
pub struct FaceSample {
    /// Its id.
    pub id: u32,
    /// Its name (empty if none).
    pub name: String,
    /// Its remote (`udp://...`, `ether://...`, `app`, ...).
    pub remote: String,
    /// Its load summed over shards.
    pub load: FaceLoad,
}

/// One attached interface's link.
#[derive(Debug, Clone, Default)]
pub struct InterfaceSample {
    /// Its name.
    pub name: String,
    /// Whether its link is up now.
    pub up: bool,
    /// Times its link went down.
    pub link_down: u64,
    /// Times its link came back up.
    pub link_up: u64,
}

impl Sample {
    /// The plane's part: shard counters and histograms, faces, PIT shares, on-demand faces.
    /// The caller fills in the host, XDP, interface and uptime parts.
    pub(crate) fn from_plane(plane: &Plane) -> Sample {
        let (_, shards) = plane.counters();
        let mut histograms = Histograms::default();
        for s in &plane.stats {
            histograms.accumulate(&s.read_histograms());
        }
        let (loads, pit_share) = plane.face_loads();
        let faces = plane
            .faces
            .table()
            .iter()
            .map(|f| FaceSample {
                id: f.id.0,
                name: f.name.clone(),
                remote: f.link.to_string(),
                load: loads.get(&f.id).copied().unwrap_or_default(),
            })
            .collect();
        let (on_demand, refused) = plane.on_demand.counts();
        Sample {
            shards,
            histograms,
            pit_share,
            faces,
            on_demand: (on_demand as u64, refused),
            ..Sample::default()
        }
    }
}

/// A [`Sample`] as a `prometheus-client` collector.
#[derive(Debug)]
struct SampleCollector(Sample);

/// The descriptor name and unit of a table counter (`rx_bytes` → `rx` in `bytes`).
fn name_unit(d: &Def) -> (&'static str, Option<PromUnit>) {
    match d.unit {
        Unit::Bytes => (
            d.name.strip_suffix("_bytes").unwrap_or(d.name),
            Some(PromUnit::Bytes),
        ),
        Unit::Count => (d.name, None),
    }
}

fn metric_type(k: Kind) -> MetricType {
    match k {
        Kind::Counter => MetricType::Counter,
        Kind::Gauge => MetricType::Gauge,
    }
}

/// Encodes one value of a table counter.
fn encode_value(
    m: &mut prometheus_client::encoding::MetricEncoder<'_>,
    k: Kind,
    v: u64,
) -> fmt::Result {
    match k {
        Kind::Counter => m.encode_counter::<NoLabelSet, u64, u64>(&v, None),
        Kind::Gauge => m.encode_gauge(&v),
    }
}

fn encode_histogram(
    enc: &mut DescriptorEncoder<'_>,
    d: &HistogramDef,
    h: &crate::stats::Histogram,
) -> fmt::Result {
    let unit = match d.unit {
        "seconds" => PromUnit::Seconds,
        u => PromUnit::Other(u.to_string()),
    };
    let mut m = enc.encode_descriptor(d.name, d.help, Some(&unit), MetricType::Histogram)?;
    let buckets: Vec<(f64, u64)> = d
        .bounds()
        .chain([f64::INFINITY])
        .zip(h.buckets.iter().copied())
        .collect();
    m.encode_histogram::<NoLabelSet>(h.sum as f64 * d.scale, h.count(), &buckets, None)
}

impl Collector for SampleCollector {
    fn encode(&self, mut enc: DescriptorEncoder<'_>) -> fmt::Result {
        let s = &self.0;
        let mut m = enc.encode_descriptor(
            "build",
            "The running ndx: its version.",
            None,
            MetricType::Info,
        )?;
        m.encode_info(&[("version", env!("CARGO_PKG_VERSION"))])?;
        let unit = PromUnit::Seconds;
        let mut m = enc.encode_descriptor(
            "uptime",
            "Time since the router started.",
            Some(&unit),
            MetricType::Gauge,
        )?;
        m.encode_gauge(&s.uptime)?;
        for (i, d) in COUNTERS.iter().enumerate() {
            let (name, unit) = name_unit(d);
            let mut m =
                enc.encode_descriptor(name, d.help(), unit.as_ref(), metric_type(d.kind))?;
            for (shard, snap) in s.shards.iter().enumerate() {
                let labels = [("shard", shard.to_string())];
                encode_value(&mut m.encode_family(&labels)?, d.kind, snap.0[i])?;
            }
        }
        for (d, h) in s.histograms.iter() {
            encode_histogram(&mut enc, d, h)?;
        }
        let mut m = enc.encode_descriptor(
            "pit_share",
            "PIT entries each face may hold on the shard now.",
            None,
            MetricType::Gauge,
        )?;
        for (shard, v) in s.pit_share.iter().enumerate() {
            m.encode_family(&[("shard", shard.to_string())])?
                .encode_gauge(v)?;
        }
        for d in FACE_LOADS {
            let name = format!("face_{}", d.def.name);
            let mut m =
                enc.encode_descriptor(&name, d.def.help(), None, metric_type(d.def.kind))?;
            for f in &s.faces {
                let labels = [
                    ("face", f.id.to_string()),
                    ("name", f.name.clone()),
                    ("remote", f.remote.clone()),
                ];
                encode_value(&mut m.encode_family(&labels)?, d.def.kind, (d.get)(&f.load))?;
            }
        }
        let mut m = enc.encode_descriptor(
            "on_demand_faces",
            "On-demand UDP faces now.",
            None,
            MetricType::Gauge,
        )?;
        m.encode_gauge(&s.on_demand.0)?;
        let mut m = enc.encode_descriptor(
            "on_demand_refused",
            "Peers refused an on-demand face ([udp] bounds).",
            None,
            MetricType::Counter,
        )?;
        m.encode_counter::<NoLabelSet, u64, u64>(&s.on_demand.1, None)?;
        for (d, v) in s.host.iter() {
            let mut m = enc.encode_descriptor(d.name, d.help(), None, metric_type(d.kind))?;
            encode_value(&mut m, d.kind, v)?;
        }
        let mut m = enc.encode_descriptor(
            "xdp_frames",
            "Frames seen by the XDP program, by interface and counter.",
            None,
            MetricType::Counter,
        )?;
        for (iface, c) in &s.xdp {
            for (counter, v) in c.iter() {
                let labels = [("interface", iface.as_str()), ("counter", counter)];
                m.encode_family(&labels)?
                    .encode_counter::<NoLabelSet, u64, u64>(&v, None)?;
            }
        }
        let mut m = enc.encode_descriptor(
            "interface_up",
            "1 while the interface's link is up.",
            None,
            MetricType::Gauge,
        )?;
        for i in &s.interfaces {
            m.encode_family(&[("interface", i.name.as_str())])?
                .encode_gauge(&u64::from(i.up))?;
        }
        for (name, help, get) in [
            (
                "interface_link_down",
                "Times the interface's link went down.",
                (|i: &InterfaceSample| i.link_down) as fn(&InterfaceSample) -> u64,
            ),
            (
                "interface_link_up",
                "Times the interface's link came back up.",
                |i: &InterfaceSample| i.link_up,
            ),
        ] {
            let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
            for i in &s.interfaces {
                m.encode_family(&[("interface", i.name.as_str())])?
                    .encode_counter::<NoLabelSet, u64, u64>(&get(i), None)?;
            }
        }
        Ok(())
    }
}

/// A sample in the OpenMetrics text format (ending with `# EOF`).
pub fn render(sample: Sample) -> String {
    let mut registry = Registry::with_prefix("ndx");
    registry.register_collector(Box::new(SampleCollector(sample)));
    let mut out = String::with_capacity(64 * 1024);
    // Writing to a String cannot fail, and the collector only fails on a failed write.
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}

#[cfg(test)]
mod tests;
