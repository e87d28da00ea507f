//! The NFD Management protocol's wire format, sans-IO: what a forwarder needs to answer
//! `nfdc`, python-ndn, ndnd and NDNts clients, and what a client needs to talk to NFD, ndnd
//! or ndx.
//!
//! - [`ControlParameters`] and [`ControlResponse`] (ControlCommand), with
//!   [`parse_request`] / [`is_management`] to split a `/localhost/nfd/<module>/<verb>/...`
//!   name and [`command_response_data`] to answer it;
//! - status datasets: [`FaceStatus`], [`FibEntry`], [`RibEntry`] ([`Route`]),
//!   [`StrategyChoice`], [`ForwarderStatus`], [`CsInfo`], plus [`FaceQueryFilter`] and
//!   [`FaceEventNotification`]; [`dataset_segments`] cuts a dataset into its Data packets;
//! - client side: [`command_interest`] builds a signed command Interest,
//!   [`parse_command_response`] reads the answer;
//! - [`tlv`] holds every TLV-TYPE number, and [`status`], [`origin`], [`route_flags`],
//!   [`face_persistency`], [`face_scope`], [`link_type`], [`face_flags`], [`cs_flags`],
//!   [`face_event_kind`] the enumerations' values.
//!
//! Numbers and field orders were checked against ndn-cxx/NFD, ndnd and python-ndn; encodings
//! are cross-checked in `tests/vectors.rs` against python-ndn's (see the crate README).
//!
//! # Decoding rules
//!
//! Every decoder takes arbitrary bytes, never panics, and refuses with a [`MgmtError`] that
//! names the element: malformed TLV, a wrong outer TLV-TYPE, trailing bytes, a repeated
//! element, a missing required one, a NonNegativeInteger of a length other than 1, 2, 4 or
//! 8, a string that is not UTF-8, and an unrecognised *critical* element (TLV-TYPE below 32
//! or odd); unrecognised non-critical elements are skipped. Elements may come in any order
//! (ndn-cxx and ndnd accept that too), except StatusCode and StatusText, which open a
//! ControlResponse. Encoders write NFD's order.
mod command;
mod consts;
mod dataset;
mod error;
mod face;
mod general;
mod params;
mod request;
mod response;
mod tables;
pub mod tlv;
mod wire;

pub use command::{
    COMMAND_LIFETIME_MS, command_interest, command_response_data, command_signature_ok,
    parse_command_response,
};
pub use consts::{
    cs_flags, face_event_kind, face_flags, face_persistency, face_scope, link_type, origin,
    route_flags, status,
};
pub use dataset::{DATASET_SEGMENT_SIZE, MGMT_FRESHNESS_MS, dataset_segments};
pub use error::MgmtError;
pub use face::{FaceEventNotification, FaceQueryFilter, FaceStatus};
pub use general::{CsInfo, ForwarderStatus};
pub use params::ControlParameters;
pub use request::{Request, Scope, is_management, parse_request};
pub use response::ControlResponse;
pub use tables::{FibEntry, RibEntry, Route, StrategyChoice};
