//! Zero-copy codec for NDN packet format v0.3 and NDNLPv2.
//!
//! - **Views** borrow the frame: [`Packet::decode`] gives an [`Interest`], a [`Data`] or an
//!   [`LpPacket`] whose accessors return slices of the input. Nothing is copied or allocated
//!   while decoding.
//! - **Encoders** are owned reprs ([`InterestRepr`], [`DataRepr`], [`NameBuf`]) and the
//!   borrowed, hot-path [`LpHeaders`]; every `encode` writes into a caller-provided buffer
//!   and returns the length, without allocating.
//! - NDNLPv2 fragmentation ([`Fragmenter`]) and a sans-IO [`Reassembler`] with bounded memory
//!   (the caller passes the time in; see
//!   [its design](Reassembler#design-bounded-memory-eviction-expiry)).
//! - Names: [`Name`] (view) and [`NameBuf`] (owned), every component type, the NDN URI
//!   scheme both ways, canonical order, prefix tests; two names are equal exactly when their
//!   bytes are, so a name hashes as its bytes.
//! - [`tree::walk`]: a depth-bounded walk over any packet's TLV tree, for dissectors.
//!
//! # The contract on untrusted input
//!
//! Every decoding entry point ([`Packet::decode`], [`Interest::decode`], [`Data::decode`],
//! [`LpPacket::decode`], [`Name::decode`], [`Component::decode`], [`NameBuf::from_uri`],
//! [`read_varnum`], [`tree::walk`], [`Reassembler::push`]) accepts arbitrary bytes and:
//!
//! - **never panics** and never reads outside the slice it was given (the crate forbids
//!   `unsafe`, and every access is checked);
//! - **bounds its work and nesting**: the packet decoders follow the fixed structure of the
//!   spec (at most LpPacket › Fragment › Interest › ForwardingHint › Name › component), and
//!   [`tree::walk`] stops at [`tree::MAX_DEPTH`] levels with [`ErrorKind::TooDeep`];
//! - **rejects with a typed, `Copy` [`Error`]**: the [`ErrorKind`] says what is wrong (and
//!   names the element) and `offset` says where, counted from the start of the outermost
//!   buffer. Rejected: bad or non-minimal VAR-NUMBERs, TLV-TYPE 0 or above 2^32-1, lengths
//!   past the end, unknown *critical* elements (TLV-TYPE < 32 or odd; in an LpPacket, every
//!   unknown field outside 800..=959 with low bits 00), recognised elements out of order or
//!   repeated when critical, and fields with lengths or values the spec forbids. Unknown
//!   non-critical elements are skipped.
//!
//! The fuzz targets in `fuzz/` check this contract (see `fuzz/README.md`); the corpus is
//! replayed by `cargo test`.
mod component;
mod data;
mod error;
mod fragment;
#[doc(hidden)]
pub mod fuzz;
mod interest;
mod lp;
mod name;
mod order;
mod packet;
mod reassembly;
mod tlv;
pub mod tree;
pub mod types;
mod uri;
pub use component::*;
pub use data::*;
pub use error::*;
pub use fragment::*;
pub use interest::*;
pub use lp::*;
pub use name::*;
pub use packet::*;
pub use reassembly::*;
pub use tlv::*;
pub use uri::*;
