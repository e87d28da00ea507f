//! The ndx router runtime: configuration, faces, per-core shard workers on AF_XDP, and the
//! control plane.
pub mod app;
pub mod config;
pub mod control;
pub mod faces;
pub mod host;
pub mod iface;
pub mod l2;
pub mod log;
pub mod mgmt;
pub mod notify;
pub mod plane;
pub mod rib;
pub mod runtime;
pub mod stats;
pub mod worker;
