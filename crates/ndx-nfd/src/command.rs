//! Command Interests (client side) and command response Data (forwarder side).

use ndx_codec::types as tt;
use ndx_codec::{
    ComponentKind, DataRepr, Interest, InterestRepr, Name, NameBuf, Reader, signature_type,
};
use sha2::{Digest, Sha256};

use crate::MgmtError;
use crate::dataset::MGMT_FRESHNESS_MS;
use crate::params::ControlParameters;
use crate::request::Scope;
use crate::response::ControlResponse;
use ndx_codec::{push_nni_tlv, push_tlv};

/// InterestLifetime of [`command_interest`]s, in milliseconds.
pub const COMMAND_LIFETIME_MS: u64 = 4000;

/// A command Interest for `/<scope>/nfd/<module>/<verb>/<ControlParameters>`, signed as
/// packet format v0.3 signed Interests are (what NFD's command authenticator and ndnd
/// accept, and what ndnd's own clients send):
///
/// - Name: the five components above (the ControlParameters TLV as a GenericNameComponent's
///   value), then the ParametersSha256DigestComponent;
/// - MustBeFresh, Nonce = `nonce`, InterestLifetime = [`COMMAND_LIFETIME_MS`];
/// - ApplicationParameters, empty;
/// - InterestSignatureInfo: SignatureType DigestSha256 (0), SignatureNonce (`nonce`, 4
///   bytes), SignatureTime = `timestamp_ms` (milliseconds since the Unix epoch; NFD refuses
///   commands whose time is far from its clock, or not above the previous command's);
/// - InterestSignatureValue: SHA-256 of the name's components up to the digest component,
///   followed by ApplicationParameters and InterestSignatureInfo (the spec's signed portion).
///
/// DigestSha256 proves nothing about the sender: forwarders accept it only from local faces
/// (NFD with an `authorize` rule for `any`/localhost; ndnd does not check).
pub fn command_interest(
    scope: Scope,
    module: &str,
    verb: &str,
    params: &ControlParameters,
    nonce: u32,
    timestamp_ms: u64,
) -> Vec<u8> {
    let mut name = NameBuf::new();
    name.push_generic(scope.component())
        .push_generic(b"nfd")
        .push_generic(module.as_bytes())
        .push_generic(verb.as_bytes())
        .push_generic(&params.encode());

    let mut info = Vec::new();
    push_nni_tlv(&mut info, tt::SIGNATURE_TYPE, signature_type::DIGEST_SHA256);
    push_tlv(&mut info, tt::SIGNATURE_NONCE, &nonce.to_be_bytes());
    push_nni_tlv(&mut info, tt::SIGNATURE_TIME, timestamp_ms);

    let mut signed = name.as_name().as_bytes().to_vec();
    push_tlv(&mut signed, tt::APPLICATION_PARAMETERS, &[]);
    push_tlv(&mut signed, tt::INTEREST_SIGNATURE_INFO, &info);
    let digest: [u8; 32] = Sha256::digest(&signed).into();

    let mut i = InterestRepr::new(name);
    i.must_be_fresh = true;
    i.nonce = Some(nonce);
    i.lifetime_ms = Some(COMMAND_LIFETIME_MS);
    i.app_params = Some(Vec::new());
    i.signature_info = Some(info);
    i.signature_value = Some(digest.to_vec());
    i.update_params_digest();
    i.to_vec()
        .expect("a named Interest with parameters and their digest always encodes")
}

/// Whether `interest` is a v0.3 signed Interest with a valid DigestSha256 signature: an
/// InterestSignatureInfo whose SignatureType is 0, an InterestSignatureValue equal to the
/// SHA-256 of the signed portion, and a correct ParametersSha256DigestComponent. A check a
/// forwarder may apply to commands from local faces; it proves integrity, not identity.
pub fn command_signature_ok(interest: &Interest<'_>) -> bool {
    let (Some(params), Some(info), Some(value)) = (
        interest.app_params(),
        interest.signature_info(),
        interest.signature_value(),
    ) else {
        return false;
    };
    let is_digest = Reader::new(info)
        .next()
        .is_some_and(|e| e.is_ok_and(|t| t.typ == tt::SIGNATURE_TYPE && t.value == [0]));
    if !is_digest || !interest.params_digest_ok() {
        return false;
    }
    // The signed portion's second part runs from ApplicationParameters' TLV-TYPE to the end
    // of InterestSignatureInfo: locate both in the wire (the views' slices point into it).
    let wire = interest.wire();
    let base = wire.as_ptr() as usize;
    let header = ndx_codec::tlv_len(tt::APPLICATION_PARAMETERS, params.len()) - params.len();
    let start = (params.as_ptr() as usize)
        .checked_sub(base)
        .and_then(|at| at.checked_sub(header));
    let end = (info.as_ptr() as usize)
        .checked_sub(base)
        .map(|at| at + info.len());
    let Some(tail) = start.zip(end).and_then(|(start, end)| wire.get(start..end)) else {
        return false;
    };
    let mut h = Sha256::new();
    for c in interest.name().components() {
        if !matches!(c.kind(), ComponentKind::ParamsDigest(_)) {
            h.update(c.wire());
        }
    }
    h.update(tail);
    let digest: [u8; 32] = h.finalize().into();
    value == digest
}

/// The Data answering a command: named exactly as the command Interest, Content = the
/// ControlResponse TLV, FreshnessPeriod 1 s (as NFD and ndnd), signed DigestSha256 (as ndnd;
/// NFD signs with its key, which clients of a local forwarder do not check).
pub fn command_response_data(interest_name: &Name<'_>, resp: &ControlResponse) -> Vec<u8> {
    let mut d = DataRepr::new(interest_name.to_buf(), resp.encode());
    d.freshness_ms = Some(MGMT_FRESHNESS_MS);
    d.to_vec()
        .expect("a DigestSha256 Data encodes into a buffer of its own size")
}

/// Decodes a command response Data's Content (a ControlResponse TLV).
pub fn parse_command_response(data_content: &[u8]) -> Result<ControlResponse, MgmtError> {
    ControlResponse::decode(data_content)
}
