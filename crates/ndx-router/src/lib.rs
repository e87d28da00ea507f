//! The ndx router runtime: configuration, faces, per-core shard workers on AF_XDP, the host
//! thread (app faces, NFD management, the RIB) and the control plane.
//!
//! Embedding: configure a [`Router`] with [`Router::builder`] (or from a file), start it,
//! run its control loop on a thread of its own ([`Router::spawn`]), and drive it through a
//! [`Handle`]: faces, routes, strategies and counters as typed [`protocol::Request`]s (the
//! control socket's requests, served by the same code), and in-process application faces
//! ([`Handle::attach_app`] → [`AppFace`]). The library installs no logger and no signal
//! handler.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use ndx_codec::{DataRepr, Packet};
//! use ndx_router::Router;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let running = Router::builder()
//!         .interface("eth0") // the defaults of an [[interface]] with only its name
//!         .face("up", "udp://192.0.2.1:6363", None)
//!         .route("/far", "up", 1)
//!         .control_socket(Some("/run/ndx/ndx.sock".into())) // optional: off by default
//!         .start()? // XDP, AF_XDP sockets, shard workers
//!         .spawn()?; // the control loop on a thread of its own
//!     let handle = running.handle().clone(); // Clone + Send
//!     handle.add_route("/other", "up", 5)?;
//!
//!     // A producer in this process: its own face, /mine registered on it.
//!     let app = handle.attach_app(&["/mine"])?;
//!     let packet = app.recv_timeout(Duration::from_secs(10))?; // an LpPacket with a PIT token
//!     if let Ok(Packet::Lp(lp)) = Packet::decode(&packet)
//!         && let Ok(Some(Packet::Interest(i))) = lp.network_packet()
//!     {
//!         let data = DataRepr::new(i.name().to_buf(), b"hello".to_vec()).to_vec()?;
//!         app.answer(&packet, &data)?; // echoes the PIT token
//!     }
//!
//!     println!("{:?} Interests in", handle.counters()?.get("interests_in"));
//!     let report = running.stop(); // the final counters
//!     println!("{} frames in", report.total.get("rx_frames").unwrap_or(0));
//!     Ok(())
//! }
//! ```
#![deny(missing_docs)]

// Internal modules: their items are `pub` for the crate; the crate's API is what this file
// re-exports.
mod app;
mod builder;
mod caps;
mod control;
mod faces;
mod handle;
mod host;
mod iface;
mod l2;
mod mgmt;
mod plane;
mod reload;
mod rib;
mod runtime;
mod stats;
mod watchdog;
mod worker;

pub mod config;
pub mod metrics;
pub mod notify;
pub mod protocol;

/// The control socket's client side (what `ndx status`, `ndx face` and `ndx route` use).
pub mod client {
    pub use crate::control::{ClientError, request, request_answer};
}

/// Every counter's one definition: name (the status JSON field), help, kind and unit, from
/// which the status JSON, `ndx status` and the Prometheus endpoint ([`metrics`]) derive.
pub mod counters {
    pub use crate::stats::{
        BUCKETS, COUNTERS, Counter, Def, EXCHANGED_BURST, FACE_LOADS, FaceLoadDef, HEADLINE,
        HOST_COUNTERS, Histogram, HistogramDef, Histograms, HostCounters, Kind, L2_READ_LATENCY,
        RX_BURST, Unit,
    };
}

pub use app::HostError;
pub use builder::Builder;
pub use handle::{AppError, AppFace, Handle, HandleError, Running};
pub use iface::IfaceError;
pub use l2::L2OpenError;
pub use reload::{LIVE_KEYS, ReloadError, ReloadReport};
pub use runtime::{Report, Router, StartError};
pub use stats::Snapshot;
