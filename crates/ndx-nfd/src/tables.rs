//! Table datasets: FibEntry (fib/list), RibEntry (rib/list), StrategyChoice
//! (strategy-choice/list).

use ndx_codec::types as tt;
use ndx_codec::{NameBuf, Tlv};

use crate::MgmtError;
use crate::params::{decode_strategy, put_strategy};
use crate::tlv;
use crate::wire::{Fields, put_name, put_nested, put_opt_nni, read_outer};
use ndx_codec::push_nni_tlv;

/// FibEntry (TLV-TYPE 0x80): one prefix of the fib/list dataset and its next hops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FibEntry {
    /// The prefix.
    pub name: NameBuf,
    /// NextHopRecords: (FaceId, Cost).
    pub nexthops: Vec<(u64, u64)>,
}

const FIB_ENTRY: &str = "FibEntry";

impl FibEntry {
    /// Appends the FibEntry TLV.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_nested(out, tlv::FIB_ENTRY, |v| {
            put_name(v, &self.name);
            for &(face, cost) in &self.nexthops {
                put_nested(v, tlv::NEXT_HOP_RECORD, |w| {
                    push_nni_tlv(w, tlv::FACE_ID, face);
                    push_nni_tlv(w, tlv::COST, cost);
                });
            }
        });
    }

    /// Decodes one FibEntry TLV (a Name, then NextHopRecords each with FaceId and Cost).
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        Self::decode_tlv(&read_outer(wire, tlv::FIB_ENTRY, FIB_ENTRY)?)
    }

    /// Decodes a fib/list dataset.
    pub fn decode_all(content: &[u8]) -> Result<Vec<Self>, MgmtError> {
        crate::dataset::decode_all(content, tlv::FIB_ENTRY, FIB_ENTRY, Self::decode_tlv)
    }

    fn decode_tlv(t: &Tlv<'_>) -> Result<Self, MgmtError> {
        let mut f = Fields::of(t, FIB_ENTRY);
        let mut name = None;
        let mut nexthops = Vec::new();
        while let Some(e) = f.next()? {
            match e.typ {
                tt::NAME => f.set_name(&mut name, &e)?,
                tlv::NEXT_HOP_RECORD => {
                    let mut g = Fields::of(&e, "NextHopRecord");
                    let (mut face, mut cost) = (None, None);
                    while let Some(h) = g.next()? {
                        match h.typ {
                            tlv::FACE_ID => g.set_nni(&mut face, &h, "FaceId")?,
                            tlv::COST => g.set_nni(&mut cost, &h, "Cost")?,
                            _ => g.unknown(&h)?,
                        }
                    }
                    nexthops.push((g.required(face, "FaceId")?, g.required(cost, "Cost")?));
                }
                _ => f.unknown(&e)?,
            }
        }
        Ok(Self {
            name: f.required(name, "Name")?,
            nexthops,
        })
    }
}

/// Route (TLV-TYPE 0x81): one route of a RibEntry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// FaceId.
    pub face_id: u64,
    /// Origin ([`crate::origin`]).
    pub origin: u64,
    /// Cost.
    pub cost: u64,
    /// Flags ([`crate::route_flags`]).
    pub flags: u64,
    /// ExpirationPeriod: milliseconds left, `None` for a route that never expires.
    pub expiration_period: Option<u64>,
}

/// RibEntry (TLV-TYPE 0x80): one prefix of the rib/list dataset and its routes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RibEntry {
    /// The prefix.
    pub name: NameBuf,
    /// Its routes.
    pub routes: Vec<Route>,
}

const RIB_ENTRY: &str = "RibEntry";

impl RibEntry {
    /// Appends the RibEntry TLV.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_nested(out, tlv::RIB_ENTRY, |v| {
            put_name(v, &self.name);
            for r in &self.routes {
                put_nested(v, tlv::ROUTE, |w| {
                    push_nni_tlv(w, tlv::FACE_ID, r.face_id);
                    push_nni_tlv(w, tlv::ORIGIN, r.origin);
                    push_nni_tlv(w, tlv::COST, r.cost);
                    push_nni_tlv(w, tlv::FLAGS, r.flags);
                    put_opt_nni(w, tlv::EXPIRATION_PERIOD, r.expiration_period);
                });
            }
        });
    }

    /// Decodes one RibEntry TLV (a Name, then Routes each with FaceId, Origin, Cost, Flags
    /// and an optional ExpirationPeriod).
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        Self::decode_tlv(&read_outer(wire, tlv::RIB_ENTRY, RIB_ENTRY)?)
    }

    /// Decodes a rib/list dataset.
    pub fn decode_all(content: &[u8]) -> Result<Vec<Self>, MgmtError> {
        crate::dataset::decode_all(content, tlv::RIB_ENTRY, RIB_ENTRY, Self::decode_tlv)
    }

    fn decode_tlv(t: &Tlv<'_>) -> Result<Self, MgmtError> {
        let mut f = Fields::of(t, RIB_ENTRY);
        let mut name = None;
        let mut routes = Vec::new();
        while let Some(e) = f.next()? {
            match e.typ {
                tt::NAME => f.set_name(&mut name, &e)?,
                tlv::ROUTE => routes.push(decode_route(&e)?),
                _ => f.unknown(&e)?,
            }
        }
        Ok(Self {
            name: f.required(name, "Name")?,
            routes,
        })
    }
}

fn decode_route(t: &Tlv<'_>) -> Result<Route, MgmtError> {
    let mut g = Fields::of(t, "Route");
    let (mut face, mut origin, mut cost, mut flags, mut expiry) = (None, None, None, None, None);
    while let Some(h) = g.next()? {
        match h.typ {
            tlv::FACE_ID => g.set_nni(&mut face, &h, "FaceId")?,
            tlv::ORIGIN => g.set_nni(&mut origin, &h, "Origin")?,
            tlv::COST => g.set_nni(&mut cost, &h, "Cost")?,
            tlv::FLAGS => g.set_nni(&mut flags, &h, "Flags")?,
            tlv::EXPIRATION_PERIOD => g.set_nni(&mut expiry, &h, "ExpirationPeriod")?,
            _ => g.unknown(&h)?,
        }
    }
    Ok(Route {
        face_id: g.required(face, "FaceId")?,
        origin: g.required(origin, "Origin")?,
        cost: g.required(cost, "Cost")?,
        flags: g.required(flags, "Flags")?,
        expiration_period: expiry,
    })
}

/// StrategyChoice (TLV-TYPE 0x80): one entry of the strategy-choice/list dataset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StrategyChoice {
    /// The prefix.
    pub name: NameBuf,
    /// The strategy's name (with its version, e.g. `/localhost/nfd/strategy/best-route/v=5`).
    pub strategy: NameBuf,
}

const STRATEGY_CHOICE: &str = "StrategyChoice";

impl StrategyChoice {
    /// Appends the StrategyChoice TLV.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_nested(out, tlv::STRATEGY_CHOICE, |v| {
            put_name(v, &self.name);
            put_strategy(v, &self.strategy);
        });
    }

    /// Decodes one StrategyChoice TLV (a Name and a Strategy).
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        Self::decode_tlv(&read_outer(wire, tlv::STRATEGY_CHOICE, STRATEGY_CHOICE)?)
    }

    /// Decodes a strategy-choice/list dataset.
    pub fn decode_all(content: &[u8]) -> Result<Vec<Self>, MgmtError> {
        crate::dataset::decode_all(
            content,
            tlv::STRATEGY_CHOICE,
            STRATEGY_CHOICE,
            Self::decode_tlv,
        )
    }

    fn decode_tlv(t: &Tlv<'_>) -> Result<Self, MgmtError> {
        let mut f = Fields::of(t, STRATEGY_CHOICE);
        let (mut name, mut strategy) = (None, None);
        while let Some(e) = f.next()? {
            match e.typ {
                tt::NAME => f.set_name(&mut name, &e)?,
                tlv::STRATEGY => {
                    let s = decode_strategy(&e)?;
                    f.set(&mut strategy, &e, "Strategy", s)?;
                }
                _ => f.unknown(&e)?,
            }
        }
        Ok(Self {
            name: f.required(name, "Name")?,
            strategy: f.required(strategy, "Strategy")?,
        })
    }
}
