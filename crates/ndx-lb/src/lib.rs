//! `ndx lb`: the control plane of the cluster front end (seed 002, the Cluster-based Scalable
//! Router, §3).
//!
//! A stateless load balancer (an XDP program) sits on the cluster's well-known address.
//! Interests to that address's NDN port are hashed by name onto N internal routers through a
//! weighted hash space and DNATed to the chosen router; each internal router owns one UDP
//! port (its implicit identifier), so returning Data addressed to that port are PORT-MAPPED
//! back to it; what the routers send out is SNATed to the front end's address.
//!
//! This crate holds everything of the front end but its XDP program (`ndx_xdp::lb`); all of
//! it is sans IO except the control socket and [`run`], the process:
//!
//! - [`config`]: the TOML configuration (`configs/lb.toml` documents every key);
//! - [`hashspace`]: the weighted hash space with minimal movement (a pure function);
//! - [`cluster`]: the sans-IO state machine of the routers (add, weight, two-stage remove),
//!   which says what to write into the XDP program's maps as ordered [`cluster::MapOp`]s;
//! - [`proto`]: the typed control protocol (newline-delimited JSON over a Unix socket);
//! - [`client`] and [`server`]: its two ends;
//! - [`render`]: `ndx lb status`'s human and JSON output;
//! - [`run`]: the `ndx lb run` process: loads `ndx_xdp::lb`, applies the map writes, attaches,
//!   serves the control socket and the scale-in timers.

#![deny(missing_docs)]

pub mod client;
pub mod cluster;
pub mod config;
pub mod hashspace;
pub mod proto;
pub mod render;
pub mod run;
pub mod server;

pub use cluster::{Cluster, ClusterError, MAX_ROUTERS, MapOp, RouterSpec, RouterState, RouterView};
pub use config::{ConfigError, HashMode, LbConfig, XdpMode};
pub use hashspace::NO_ROUTER;
pub use proto::{Request, Response, RouterCounters, Status};
