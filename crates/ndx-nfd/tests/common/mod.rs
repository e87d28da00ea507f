//! What the management integration tests share: names and the rib/register command.
#![allow(dead_code)]

use ndx_codec::NameBuf;
use ndx_nfd::{ControlParameters, Scope, command_interest, origin};

/// The name of an NDN URI (panics on a bad one: the tests' names are literals).
pub(crate) fn name(uri: &str) -> NameBuf {
    NameBuf::from_uri(uri).unwrap()
}

/// A rib/register of `prefix` by an application (origin APP, cost 0), and its signed
/// command Interest with `nonce` at a fixed time (1,700,000,000,000 ms).
pub(crate) fn register_interest(prefix: &str, nonce: u32) -> (ControlParameters, Vec<u8>) {
    let p = ControlParameters {
        name: Some(name(prefix)),
        origin: Some(origin::APP),
        cost: Some(0),
        ..ControlParameters::default()
    };
    let wire = command_interest(
        Scope::Localhost,
        "rib",
        "register",
        &p,
        nonce,
        1_700_000_000_000,
    );
    (p, wire)
}
