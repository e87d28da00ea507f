//! The ndx XDP program and its loader.
//!
//! `bpf/ndx.c` (C, compiled by clang with `cargo xtask bpf`; the object, `bpf/ndx.o`, is committed and embedded here) runs on every
//! received frame: NDN over UDP (configured ports, IPv4/IPv6, one optional 802.1Q tag) and
//! over Ethernet (EtherType 0x8624) goes to an AF_XDP socket through the XSKMAP, at entry
//! `rx_queue * MAX_SHARDS + shard`, with a 16-byte [`XdpMeta`] in front of the frame; the
//! shard is chosen exactly like [`ndx_core::Dispatch`]. Everything else is `XDP_PASS`,
//! untouched.
//!
//! [`NdxXdp::load`] loads the program with its [`XdpConfig`]; [`NdxXdp::attach`] attaches it
//! through a bpf_link (detached when the [`LinkGuard`] drops or the process dies, even by
//! SIGKILL); [`NdxXdp::set_socket`] fills the XSKMAP; [`NdxXdp::counters`] reads the per-CPU
//! counters; [`NdxXdp::test_run`] runs the loaded program on one frame (BPF_PROG_TEST_RUN).
//!
//! [`lb`] is the second program, `bpf/lb.c`: the cluster front end of `ndx lb`.
pub mod lb;

mod config;
mod counters;
mod error;
mod loader;
mod meta;
mod test_run;

pub use config::*;
pub use counters::*;
pub use error::*;
pub use loader::*;
pub use meta::*;
pub use test_run::*;
