//! ControlParameters: a command's arguments, and the body of its response.

use ndx_codec::NameBuf;
use ndx_codec::types as tt;

use crate::MgmtError;
use crate::face::{put_limits, set_limit};
use crate::tlv;
use crate::wire::{Fields, name, put_name, put_nested, put_opt_nni, read_outer};
use ndx_codec::push_tlv;

/// ControlParameters (TLV-TYPE 0x68): every field optional, as on the wire. Which fields a
/// command needs is the command's business (see NFD's "RIB Management", "Face Management",
/// "FIB Management", "Strategy Choice", "CS Management").
///
/// ```
/// use ndx_nfd::{ControlParameters, origin};
/// let p = ControlParameters {
///     name: Some("/example".parse().unwrap()),
///     origin: Some(origin::APP),
///     cost: Some(0),
///     ..ControlParameters::default()
/// };
/// assert_eq!(ControlParameters::decode(&p.encode()).unwrap(), p);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ControlParameters {
    /// Name: the prefix of a route, next hop or strategy choice.
    pub name: Option<NameBuf>,
    /// FaceId.
    pub face_id: Option<u64>,
    /// Uri: a face's remote URI (UTF-8).
    pub uri: Option<String>,
    /// LocalUri (UTF-8).
    pub local_uri: Option<String>,
    /// Origin of a route ([`crate::origin`]).
    pub origin: Option<u64>,
    /// Cost of a route or next hop.
    pub cost: Option<u64>,
    /// Capacity of the CS, in packets.
    pub capacity: Option<u64>,
    /// Count (cs/erase: how many entries at most).
    pub count: Option<u64>,
    /// Flags: route flags ([`crate::route_flags`]), face flags ([`crate::face_flags`]) or CS
    /// flags ([`crate::cs_flags`]), by command.
    pub flags: Option<u64>,
    /// Mask: which bits of `flags` a faces/update or cs/config sets.
    pub mask: Option<u64>,
    /// Strategy: the strategy's name (encoded as a Name inside a Strategy element).
    pub strategy: Option<NameBuf>,
    /// ExpirationPeriod, in milliseconds.
    pub expiration_period: Option<u64>,
    /// FacePersistency ([`crate::face_persistency`]).
    pub face_persistency: Option<u64>,
    /// BaseCongestionMarkingInterval, in nanoseconds.
    pub base_congestion_marking_interval: Option<u64>,
    /// DefaultCongestionThreshold, in bytes.
    pub default_congestion_threshold: Option<u64>,
    /// Mtu, in bytes.
    pub mtu: Option<u64>,
}

const CONTEXT: &str = "ControlParameters";

impl ControlParameters {
    /// Decodes a whole ControlParameters TLV (`68 LL ...`): in a command, the value of the
    /// name component after the verb. Elements may come in any order; repeated ones,
    /// unknown critical ones, a non-UTF-8 Uri/LocalUri, a bad NonNegativeInteger, a Strategy
    /// without a Name and trailing bytes are errors.
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        let t = read_outer(wire, tlv::CONTROL_PARAMETERS, CONTEXT)?;
        Self::decode_tlv(&t)
    }

    pub(crate) fn decode_tlv(t: &ndx_codec::Tlv<'_>) -> Result<Self, MgmtError> {
        let mut p = Self::default();
        let mut f = Fields::of(t, CONTEXT);
        while let Some(e) = f.next()? {
            match e.typ {
                tt::NAME => f.set_name(&mut p.name, &e)?,
                tlv::FACE_ID => f.set_nni(&mut p.face_id, &e, "FaceId")?,
                tlv::URI => f.set_string(&mut p.uri, &e, "Uri")?,
                tlv::LOCAL_URI => f.set_string(&mut p.local_uri, &e, "LocalUri")?,
                tlv::ORIGIN => f.set_nni(&mut p.origin, &e, "Origin")?,
                tlv::COST => f.set_nni(&mut p.cost, &e, "Cost")?,
                tlv::CAPACITY => f.set_nni(&mut p.capacity, &e, "Capacity")?,
                tlv::COUNT => f.set_nni(&mut p.count, &e, "Count")?,
                tlv::FLAGS => f.set_nni(&mut p.flags, &e, "Flags")?,
                tlv::MASK => f.set_nni(&mut p.mask, &e, "Mask")?,
                tlv::STRATEGY => {
                    let s = decode_strategy(&e)?;
                    f.set(&mut p.strategy, &e, "Strategy", s)?;
                }
                tlv::EXPIRATION_PERIOD => {
                    f.set_nni(&mut p.expiration_period, &e, "ExpirationPeriod")?;
                }
                tlv::FACE_PERSISTENCY => {
                    f.set_nni(&mut p.face_persistency, &e, "FacePersistency")?;
                }
                _ if set_limit(
                    &f,
                    [
                        &mut p.base_congestion_marking_interval,
                        &mut p.default_congestion_threshold,
                        &mut p.mtu,
                    ],
                    &e,
                )? => {}
                _ => f.unknown(&e)?,
            }
        }
        Ok(p)
    }

    /// Appends the ControlParameters TLV, fields in NFD's order (Name, FaceId, Uri, LocalUri,
    /// Origin, Cost, Capacity, Count, Flags, Mask, Strategy, ExpirationPeriod,
    /// FacePersistency, BaseCongestionMarkingInterval, DefaultCongestionThreshold, Mtu; ndnd
    /// writes the same order).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_nested(out, tlv::CONTROL_PARAMETERS, |v| {
            if let Some(n) = &self.name {
                put_name(v, n);
            }
            put_opt_nni(v, tlv::FACE_ID, self.face_id);
            if let Some(u) = &self.uri {
                push_tlv(v, tlv::URI, u.as_bytes());
            }
            if let Some(u) = &self.local_uri {
                push_tlv(v, tlv::LOCAL_URI, u.as_bytes());
            }
            put_opt_nni(v, tlv::ORIGIN, self.origin);
            put_opt_nni(v, tlv::COST, self.cost);
            put_opt_nni(v, tlv::CAPACITY, self.capacity);
            put_opt_nni(v, tlv::COUNT, self.count);
            put_opt_nni(v, tlv::FLAGS, self.flags);
            put_opt_nni(v, tlv::MASK, self.mask);
            if let Some(s) = &self.strategy {
                put_strategy(v, s);
            }
            put_opt_nni(v, tlv::EXPIRATION_PERIOD, self.expiration_period);
            put_opt_nni(v, tlv::FACE_PERSISTENCY, self.face_persistency);
            put_limits(
                v,
                [
                    self.base_congestion_marking_interval,
                    self.default_congestion_threshold,
                    self.mtu,
                ],
            );
        });
    }

    /// The ControlParameters TLV, as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }
}

/// The Name inside a Strategy element (exactly one; unknown non-critical elements skipped).
pub(crate) fn decode_strategy(t: &ndx_codec::Tlv<'_>) -> Result<NameBuf, MgmtError> {
    let mut f = Fields::of(t, "Strategy");
    let mut n = None;
    while let Some(e) = f.next()? {
        match e.typ {
            tt::NAME => {
                let v = name(&e)?;
                f.set(&mut n, &e, "Name", v)?;
            }
            _ => f.unknown(&e)?,
        }
    }
    f.required(n, "Name")
}

/// Appends a Strategy element holding `n`.
pub(crate) fn put_strategy(out: &mut Vec<u8>, n: &NameBuf) {
    put_nested(out, tlv::STRATEGY, |w| put_name(w, n));
}
