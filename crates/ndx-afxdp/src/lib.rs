//! AF_XDP I/O for the ndx router.
//!
//! - [`Port`]: one (device, queue) with a [`Umem`] and N sockets sharing it;
//!   each socket is an [`Endpoint`] (`Send`) driven by one shard thread.
//! - [`RxFrame`] + [`Exchange`]: hand a received frame to another shard without
//!   copying, and get it back to recycle it.
//! - [`wire`]: parse Ethernet/VLAN/IPv4/IPv6/UDP and build outgoing headers; [`wire::walk`],
//!   the one link-layer walker (the router's strict rules, captures' lenient rules)
//!   with correct checksums (no `unsafe`).
//! - [`neigh`]: next-hop resolution over rtnetlink (route, source, gateway, MAC).
//! - `xdp`, `reflector` and `l3fwd` (feature `redirect`): a minimal redirect-everything XDP
//!   program, the raw AF_XDP reflector and the AF_XDP layer-3 forwarder, the test and
//!   benchmark baselines.
//!
//! See README.md for the shard worker loop.

mod endpoint;
mod error;
mod exchange;
#[cfg(feature = "redirect")]
pub mod l3fwd;
pub mod neigh;
mod port;
#[cfg(feature = "redirect")]
pub mod reflector;
mod spsc;
mod umem;
pub mod wire;
#[cfg(feature = "redirect")]
pub mod xdp;

pub use endpoint::{Counters, Endpoint, KernelStats, TxError, XDP_PKT_CONTD};
pub use error::Error;
pub use exchange::{Exchange, ExchangeReceiver, ExchangeSender};
pub use port::{DEFAULT_TX_BUDGET, Port, PortConfig, XDP_USE_SG};
pub use umem::{
    Frame, FrameMut, KeptFrame, MAX_SEGMENTS, RxFrame, Umem, UmemConfig, XDP_PACKET_HEADROOM,
};

// Compile-time guarantees the shard design relies on.
const _: () = {
    const fn send<T: Send>() {}
    send::<Endpoint>();
    send::<RxFrame>();
    send::<KeptFrame>();
    send::<ExchangeSender>();
    send::<ExchangeReceiver>();
    send::<Umem>();
};
