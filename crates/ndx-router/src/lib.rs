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
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let running = ndx_router::Router::builder()
//!     .interface("eth0")
//!     .face("up", "udp://192.0.2.1:6363", None)
//!     .route("/example", "up", 1)
//!     .start()?
//!     .spawn()?;
//! let handle = running.handle().clone();
//! let app = handle.attach_app(&["/mine"])?;
//! let interest = app.recv_timeout(std::time::Duration::from_secs(1))?;
//! println!("{} Interests so far", handle.counters()?["interests_in"]);
//! # let _ = interest;
//! running.stop();
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

// Internal modules: their items are `pub` for the crate; the crate's API is what this file
// re-exports.
#[allow(
    unreachable_pub,
    reason = "internal module: the API is the re-exports below"
)]
mod app;
mod builder;
#[allow(
    unreachable_pub,
    reason = "internal module: the API is the re-exports below"
)]
mod control;
#[allow(
    unreachable_pub,
    dead_code,
    reason = "internal module: the API is the re-exports below; some accessors serve its tests only"
)]
mod faces;
mod handle;
#[allow(
    unreachable_pub,
    reason = "internal module: the API is the re-exports below"
)]
mod host;
#[allow(
    unreachable_pub,
    dead_code,
    reason = "internal module: the API is the re-exports below; some accessors serve its tests only"
)]
mod iface;
#[allow(
    unreachable_pub,
    dead_code,
    reason = "internal module: the API is the re-exports below; some accessors serve its tests only"
)]
mod l2;
#[allow(
    unreachable_pub,
    dead_code,
    reason = "internal module: the API is the re-exports below; some accessors serve its tests only"
)]
mod mgmt;
#[allow(
    unreachable_pub,
    reason = "internal module: the API is the re-exports below"
)]
mod plane;
#[allow(
    unreachable_pub,
    dead_code,
    reason = "internal module: the API is the re-exports below; some accessors serve its tests only"
)]
mod rib;
mod runtime;
#[allow(
    unreachable_pub,
    reason = "internal module: the API is the re-exports below"
)]
mod stats;
#[allow(
    unreachable_pub,
    reason = "internal module: the API is the re-exports below"
)]
mod worker;

pub mod config;
pub mod log;
pub mod notify;
pub mod protocol;

/// The control socket's client side (what `ndx status`, `ndx face` and `ndx route` use).
pub mod client {
    pub use crate::control::{ClientError, request};
}

pub use app::HostError;
pub use builder::Builder;
pub use handle::{AppError, AppFace, Handle, HandleError, Running};
pub use iface::IfaceError;
pub use l2::L2OpenError;
pub use runtime::{Report, Router, StartError};
pub use stats::Snapshot;
