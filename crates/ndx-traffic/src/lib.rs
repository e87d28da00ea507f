//! AF_XDP NDN traffic for ndx's data-path benchmarks: a consumer that sends pre-encoded
//! Interests as fast as its window allows and counts the Data that come back, a producer that
//! answers every Interest with a small Data, and a flood that sends unique-name Interests
//! without a window (the fairness benchmark's attacker). All three speak NDN over UDP/IPv4 on
//! an AF_XDP socket (copy mode on veth) with ndx-afxdp's redirect-everything XDP program, and
//! all accept the NDNLPv2 wrapping forwarders put around packets (LpPacket with a PitToken and a
//! Fragment); the producer echoes the PitToken.
//!
//! See README.md for the benchmark method and results.

pub mod consumer;
pub mod cpu;
pub mod data;
mod error;
pub mod flood;
pub mod interest;
pub mod link;
pub mod packet;
pub mod producer;
pub mod window;

pub use error::Error;
