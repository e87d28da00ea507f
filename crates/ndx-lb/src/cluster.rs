//! The cluster's routers and hash space: a sans-IO state machine.
//!
//! [`Cluster`] holds up to [`MAX_ROUTERS`] internal routers, each in a slot (the index the
//! XDP program's maps use), and the hash space ([`crate::hashspace`]). Each
//! change returns the [`MapOp`]s that bring the XDP program's maps to the new state, in an
//! order that is safe to apply one by one while packets flow:
//!
//! - **add** (scale-out): `SetRouter` and `SetPort` of the new slot, then the `SetCells` that
//!   point cells at it (no cell ever names a slot the program cannot resolve);
//! - **remove** (scale-in, stage 1): only `SetCells`: the router's cells move to the others.
//!   The router enters [`RouterState::Draining`]; its slot and its PORT MAP entry stay, so
//!   the Data answering the Interests it already forwarded still come back to it;
//! - **tick** (scale-in, stage 2): once the drain time has passed, `ClearPort` then
//!   `ClearRouter`, and the slot is free for another router;
//! - **set_weight**: only `SetCells`.
//!
//! No method reads the clock: the caller passes `now`, calls [`Cluster::tick`] regularly (or
//! at [`Cluster::next_deadline`]) and applies the returned operations.

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::hashspace::{self, NO_ROUTER};

/// Most internal routers in a cluster (slots 0..64).
pub const MAX_ROUTERS: usize = 64;

/// Highest router weight.
pub const MAX_WEIGHT: u32 = 1000;

/// Longest router name.
pub const MAX_NAME: usize = 32;

/// An internal router to add: its name, where it listens, and its weight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSpec {
    /// Unique name, 1 to 32 of `A-Z a-z 0-9 _ . -`.
    pub name: String,
    /// The router's IPv4 address (Interests are DNATed to it).
    #[serde(deserialize_with = "de_ipv4")]
    pub address: Ipv4Addr,
    /// The router's UDP port: its implicit identifier, unique in the cluster (Data arriving
    /// on this port are PORT-MAPPED to it).
    pub port: u16,
    /// Relative share of the hash space, 0..=1000 (0: no new Interests, but its Data still
    /// come back). Defaults to 1.
    #[serde(default = "default_weight")]
    pub weight: u32,
}

fn default_weight() -> u32 {
    1
}

/// Parses an IPv4 address, saying that IPv6 is not supported rather than "invalid".
pub(crate) fn parse_ipv4(s: &str) -> Result<Ipv4Addr, String> {
    match s.trim().parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(a)) => Ok(a),
        Ok(std::net::IpAddr::V6(_)) => Err(format!(
            "{s:?}: IPv6 is not supported yet (an IPv4 address is needed)"
        )),
        Err(_) => Err(format!("{s:?}: not an IPv4 address")),
    }
}

fn de_ipv4<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Ipv4Addr, D::Error> {
    let s = String::deserialize(d)?;
    parse_ipv4(&s).map_err(serde::de::Error::custom)
}

/// Checks a router name: 1 to [`MAX_NAME`] of `A-Z a-z 0-9 _ . -`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok = (1..=MAX_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?}: 1 to {MAX_NAME} characters among A-Z a-z 0-9 _ . -"
        ))
    }
}

/// Checks a router (or front-end) address: a unicast IPv4 address.
pub(crate) fn check_unicast(a: Ipv4Addr) -> Result<(), String> {
    if a.is_unspecified() || a.is_broadcast() || a.is_multicast() {
        Err(format!("{a}: not a unicast address"))
    } else {
        Ok(())
    }
}

/// Checks a weight: 0..=[`MAX_WEIGHT`].
pub(crate) fn check_weight(w: u32) -> Result<(), String> {
    if w <= MAX_WEIGHT {
        Ok(())
    } else {
        Err(format!("{w}: between 0 and {MAX_WEIGHT}"))
    }
}

/// Why the cluster refused a change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// A field of the router is invalid (the message names it).
    #[error("invalid router: {0}")]
    Invalid(String),
    /// A router with this name exists.
    #[error("a router named {0:?} exists already")]
    DuplicateName(String),
    /// Another router (perhaps draining) owns this port.
    #[error("port {port} is router {owner:?}'s already (each router needs its own port)")]
    PortInUse {
        /// The port.
        port: u16,
        /// The router owning it.
        owner: String,
    },
    /// The port is the front end's well-known port.
    #[error("port {0} is the front end's well-known port: give the router another one")]
    WellKnownPort(u16),
    /// Every slot is taken (draining routers keep theirs until freed).
    #[error("the cluster is full ({MAX_ROUTERS} routers, counting draining ones)")]
    Full,
    /// No router has this name.
    #[error("no router named {0:?}")]
    Unknown(String),
    /// The router is draining: it cannot be removed again, re-weighted, or re-added until its
    /// slot is freed.
    #[error(
        "router {name:?} is draining (removed; its slot is freed in {} ms, after which the name can be added again)",
        remaining.as_millis()
    )]
    Draining {
        /// The router.
        name: String,
        /// Time left until it is freed.
        remaining: Duration,
    },
}

/// A write to the XDP program's maps. Apply the operations of one returned `Vec` in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MapOp {
    /// Slot `slot` is the router at `address:port` (DNAT target). Reset the slot's counters.
    SetRouter {
        /// The slot.
        slot: u32,
        /// The router's address.
        address: Ipv4Addr,
        /// The router's port.
        port: u16,
    },
    /// Slot `slot` is free.
    ClearRouter {
        /// The slot.
        slot: u32,
    },
    /// PORT MAP: Data to `port` go to slot `slot`.
    SetPort {
        /// The router's port.
        port: u16,
        /// Its slot.
        slot: u32,
    },
    /// PORT MAP: `port` maps to no router any more.
    ClearPort {
        /// The port.
        port: u16,
    },
    /// Hash space: each `(cell, slot)` (slot [`NO_ROUTER`] for none). Only changed cells,
    /// except in [`Cluster::snapshot`], which lists all.
    SetCells(Vec<(u32, u32)>),
}

/// Where a router is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouterState {
    /// In the hash space (if its weight is above 0).
    Active,
    /// Removed from the hash space; its slot and port are freed after `remaining`.
    Draining {
        /// Time left until it is freed.
        #[serde(rename = "remaining_ms", with = "millis")]
        remaining: Duration,
    },
}

/// A router as the cluster sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterView {
    /// Its name.
    pub name: String,
    /// Its slot (index in the XDP program's router map).
    pub slot: u32,
    /// Its address.
    pub address: Ipv4Addr,
    /// Its port (implicit identifier).
    pub port: u16,
    /// Its weight.
    pub weight: u32,
    /// Active or draining.
    pub state: RouterState,
    /// Cells of the hash space it owns.
    pub cells: u32,
    /// `cells / table_len`, 0.0..=1.0.
    pub share: f64,
}

/// Durations as whole milliseconds in JSON.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[derive(Debug, Clone)]
struct Router {
    name: String,
    address: Ipv4Addr,
    port: u16,
    weight: u32,
    /// `None` while active; when draining, when the slot is freed.
    drain_until: Option<Instant>,
}

/// The routers and the hash space of a cluster (see the module documentation).
#[derive(Debug, Clone)]
pub struct Cluster {
    slots: Vec<Option<Router>>,
    table: Vec<u32>,
    well_known_port: u16,
    drain: Duration,
}

impl Cluster {
    /// An empty cluster: `table_len` cells all [`NO_ROUTER`], no router. `well_known_port` is
    /// the front end's NDN port (no router may use it); `drain` is how long a removed
    /// router keeps its slot and PORT MAP entry (scale-in stage 2 delay).
    ///
    /// # Panics
    ///
    /// If `table_len` is 0.
    pub fn new(table_len: u32, well_known_port: u16, drain: Duration) -> Self {
        assert!(table_len > 0, "a hash space needs cells");
        Self {
            slots: vec![None; MAX_ROUTERS],
            table: vec![NO_ROUTER; table_len as usize],
            well_known_port,
            drain,
        }
    }

    /// The cluster a configuration starts with: its `[[router]]`s added at once (one
    /// rebalance, so the table is interleaved as if built from scratch). Write
    /// [`Cluster::snapshot`] into the maps to start.
    pub fn from_config(cfg: &crate::LbConfig, now: Instant) -> Result<Self, ClusterError> {
        let mut c = Self::new(cfg.table, cfg.port, cfg.drain);
        for spec in &cfg.routers {
            let slot = c.admit(spec, now)?;
            c.slots[slot] = Some(Router {
                name: spec.name.clone(),
                address: spec.address,
                port: spec.port,
                weight: spec.weight,
                drain_until: None,
            });
        }
        c.rebalance();
        Ok(c)
    }

    /// Adds a router (scale-out): `SetRouter`, `SetPort`, then the `SetCells` that give it
    /// its share. Refused: an invalid spec, a name in use (or draining), a port in use
    /// (also by a draining router) or equal to the well-known port, a full cluster.
    pub fn add(&mut self, spec: RouterSpec, now: Instant) -> Result<Vec<MapOp>, ClusterError> {
        let slot = self.admit(&spec, now)?;
        let mut ops = vec![
            MapOp::SetRouter {
                slot: slot as u32,
                address: spec.address,
                port: spec.port,
            },
            MapOp::SetPort {
                port: spec.port,
                slot: slot as u32,
            },
        ];
        self.slots[slot] = Some(Router {
            name: spec.name,
            address: spec.address,
            port: spec.port,
            weight: spec.weight,
            drain_until: None,
        });
        ops.extend(self.rebalance());
        Ok(ops)
    }

    /// Checks that `spec` can be added and returns the slot it would get.
    fn admit(&self, spec: &RouterSpec, now: Instant) -> Result<usize, ClusterError> {
        check_name(&spec.name).map_err(|e| ClusterError::Invalid(format!("name {e}")))?;
        check_unicast(spec.address).map_err(|e| ClusterError::Invalid(format!("address {e}")))?;
        check_weight(spec.weight).map_err(|e| ClusterError::Invalid(format!("weight {e}")))?;
        if spec.port == 0 {
            return Err(ClusterError::Invalid("port 0: between 1 and 65535".into()));
        }
        if spec.port == self.well_known_port {
            return Err(ClusterError::WellKnownPort(spec.port));
        }
        for r in self.slots.iter().flatten() {
            if r.name == spec.name {
                return Err(match r.drain_until {
                    Some(until) => ClusterError::Draining {
                        name: r.name.clone(),
                        remaining: until.saturating_duration_since(now),
                    },
                    None => ClusterError::DuplicateName(r.name.clone()),
                });
            }
            if r.port == spec.port {
                return Err(ClusterError::PortInUse {
                    port: r.port,
                    owner: r.name.clone(),
                });
            }
        }
        self.slots
            .iter()
            .position(Option::is_none)
            .ok_or(ClusterError::Full)
    }

    /// Removes a router, stage 1 (scale-in): its cells move to the other routers (the
    /// returned `SetCells`); it keeps its slot and PORT MAP entry, draining until
    /// `now + drain`, when [`Cluster::tick`] frees it.
    pub fn remove(&mut self, name: &str, now: Instant) -> Result<Vec<MapOp>, ClusterError> {
        let slot = self.active_slot(name, now)?;
        if let Some(r) = self.slots[slot].as_mut() {
            r.drain_until = Some(now + self.drain);
        }
        Ok(self.rebalance())
    }

    /// Changes an active router's weight (0..=1000): the `SetCells` that move cells to or
    /// from it (none when the weight is unchanged).
    pub fn set_weight(
        &mut self,
        name: &str,
        weight: u32,
        now: Instant,
    ) -> Result<Vec<MapOp>, ClusterError> {
        check_weight(weight).map_err(|e| ClusterError::Invalid(format!("weight {e}")))?;
        let slot = self.active_slot(name, now)?;
        if let Some(r) = self.slots[slot].as_mut() {
            r.weight = weight;
        }
        Ok(self.rebalance())
    }

    fn active_slot(&self, name: &str, now: Instant) -> Result<usize, ClusterError> {
        let (slot, r) = self
            .slots
            .iter()
            .enumerate()
            .find_map(|(i, r)| r.as_ref().filter(|r| r.name == name).map(|r| (i, r)))
            .ok_or_else(|| ClusterError::Unknown(name.to_string()))?;
        match r.drain_until {
            None => Ok(slot),
            Some(until) => Err(ClusterError::Draining {
                name: r.name.clone(),
                remaining: until.saturating_duration_since(now),
            }),
        }
    }

    /// Scale-in stage 2: frees the routers whose drain time has passed (`ClearPort`, then
    /// `ClearRouter`, for each, by slot).
    pub fn tick(&mut self, now: Instant) -> Vec<MapOp> {
        let mut ops = Vec::new();
        for (slot, entry) in self.slots.iter_mut().enumerate() {
            if let Some(r) = entry
                && r.drain_until.is_some_and(|until| until <= now)
            {
                ops.push(MapOp::ClearPort { port: r.port });
                ops.push(MapOp::ClearRouter { slot: slot as u32 });
                *entry = None;
            }
        }
        ops
    }

    /// When the next draining router is due to be freed, if any.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.slots
            .iter()
            .flatten()
            .filter_map(|r| r.drain_until)
            .min()
    }

    /// Every router (active and draining), by slot, as of `now`.
    pub fn routers(&self, now: Instant) -> impl Iterator<Item = RouterView> + '_ {
        let mut cells = [0u32; MAX_ROUTERS];
        for &s in &self.table {
            if let Some(c) = cells.get_mut(s as usize) {
                *c += 1;
            }
        }
        let len = self.table.len() as f64;
        self.slots.iter().enumerate().filter_map(move |(slot, r)| {
            let r = r.as_ref()?;
            Some(RouterView {
                name: r.name.clone(),
                slot: slot as u32,
                address: r.address,
                port: r.port,
                weight: r.weight,
                state: match r.drain_until {
                    None => RouterState::Active,
                    Some(until) => RouterState::Draining {
                        remaining: until.saturating_duration_since(now),
                    },
                },
                cells: cells[slot],
                share: f64::from(cells[slot]) / len,
            })
        })
    }

    /// The hash space: the slot of each cell ([`NO_ROUTER`] when no active router has a
    /// weight above 0).
    pub fn table(&self) -> &[u32] {
        &self.table
    }

    /// The front end's well-known port.
    pub fn well_known_port(&self) -> u16 {
        self.well_known_port
    }

    /// How long a removed router drains.
    pub fn drain(&self) -> Duration {
        self.drain
    }

    /// Everything the maps must hold, for maps that start empty: `SetRouter` and `SetPort`
    /// of every router (draining ones too), then `SetCells` of every cell.
    pub fn snapshot(&self) -> Vec<MapOp> {
        let mut ops = Vec::new();
        for (slot, r) in self.slots.iter().enumerate() {
            if let Some(r) = r {
                ops.push(MapOp::SetRouter {
                    slot: slot as u32,
                    address: r.address,
                    port: r.port,
                });
                ops.push(MapOp::SetPort {
                    port: r.port,
                    slot: slot as u32,
                });
            }
        }
        ops.push(MapOp::SetCells(
            self.table
                .iter()
                .enumerate()
                .map(|(c, &s)| (c as u32, s))
                .collect(),
        ));
        ops
    }

    /// Recomputes the hash space from the active routers' weights; the changed cells as one
    /// `SetCells`, or nothing.
    fn rebalance(&mut self) -> Vec<MapOp> {
        let weights: Vec<(u32, u32)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, r)| {
                r.as_ref()
                    .filter(|r| r.drain_until.is_none())
                    .map(|r| (slot as u32, r.weight))
            })
            .collect();
        let next = hashspace::rebalance(&self.table, &weights);
        let changed: Vec<(u32, u32)> = self
            .table
            .iter()
            .zip(&next)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(c, (_, &b))| (c as u32, b))
            .collect();
        self.table = next;
        if changed.is_empty() {
            Vec::new()
        } else {
            vec![MapOp::SetCells(changed)]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAIN: Duration = Duration::from_secs(10);

    fn spec(name: &str, n: u8, weight: u32) -> RouterSpec {
        RouterSpec {
            name: name.into(),
            address: Ipv4Addr::new(10, 3, n, 2),
            port: 6370 + u16::from(n),
            weight,
        }
    }

    /// The maps as the XDP program holds them, built only from the ops; checks at every
    /// step that no cell names a slot without a router and every mapped port's slot exists.
    #[derive(Default)]
    struct Maps {
        routers: HashMap<u32, (Ipv4Addr, u16)>,
        ports: HashMap<u16, u32>,
        cells: HashMap<u32, u32>,
    }

    use std::collections::HashMap;

    impl Maps {
        fn apply(&mut self, ops: &[MapOp]) {
            for op in ops {
                match op {
                    MapOp::SetRouter {
                        slot,
                        address,
                        port,
                    } => {
                        self.routers.insert(*slot, (*address, *port));
                    }
                    MapOp::ClearRouter { slot } => {
                        assert!(self.routers.remove(slot).is_some(), "clearing a free slot");
                    }
                    MapOp::SetPort { port, slot } => {
                        self.ports.insert(*port, *slot);
                    }
                    MapOp::ClearPort { port } => {
                        assert!(
                            self.ports.remove(port).is_some(),
                            "clearing an unmapped port"
                        );
                    }
                    MapOp::SetCells(cells) => {
                        assert!(!cells.is_empty(), "an empty SetCells");
                        for &(c, s) in cells {
                            self.cells.insert(c, s);
                        }
                    }
                }
                for &s in self.cells.values() {
                    assert!(
                        s == NO_ROUTER || self.routers.contains_key(&s),
                        "a cell names slot {s}, which has no router (after {op:?})"
                    );
                }
                for (&p, s) in &self.ports {
                    assert!(
                        self.routers.get(s).is_some_and(|&(_, rp)| rp == p),
                        "port {p} maps to slot {s}, which is not that router's (after {op:?})"
                    );
                }
            }
        }

        fn matches(&self, c: &Cluster) {
            let table: Vec<u32> = (0..c.table().len() as u32)
                .map(|i| self.cells.get(&i).copied().unwrap_or(NO_ROUTER))
                .collect();
            assert_eq!(table, c.table(), "the ops rebuilt the table");
            let routers: Vec<RouterView> = c.routers(Instant::now()).collect();
            assert_eq!(self.routers.len(), routers.len());
            for r in routers {
                assert_eq!(self.routers[&r.slot], (r.address, r.port));
                assert_eq!(self.ports[&r.port], r.slot);
            }
        }
    }

    fn cells_of(c: &Cluster, slot: u32) -> usize {
        c.table().iter().filter(|&&s| s == slot).count()
    }

    #[test]
    fn scale_out_and_two_stage_scale_in() {
        let t0 = Instant::now();
        let mut c = Cluster::new(4096, 6363, DRAIN);
        assert!(c.table().iter().all(|&s| s == NO_ROUTER));
        let mut maps = Maps::default();
        maps.apply(&c.snapshot());

        let ops = c.add(spec("ir1", 1, 1), t0).unwrap();
        assert!(matches!(
            ops[0],
            MapOp::SetRouter {
                slot: 0,
                port: 6371,
                ..
            }
        ));
        assert!(matches!(
            ops[1],
            MapOp::SetPort {
                port: 6371,
                slot: 0
            }
        ));
        assert!(matches!(&ops[2], MapOp::SetCells(v) if v.len() == 4096));
        maps.apply(&ops);
        let ops = c.add(spec("ir2", 2, 1), t0).unwrap();
        assert!(
            matches!(&ops[2], MapOp::SetCells(v) if v.len() == 2048),
            "only half moves"
        );
        maps.apply(&ops);
        maps.apply(&c.add(spec("ir3", 3, 2), t0).unwrap());
        maps.matches(&c);
        assert_eq!(
            (cells_of(&c, 0), cells_of(&c, 1), cells_of(&c, 2)),
            (1024, 1024, 2048)
        );

        // Stage 1: ir2 leaves the hash space but keeps its slot and port.
        let ops = c.remove("ir2", t0).unwrap();
        assert_eq!(ops.len(), 1, "cells move, nothing else: {ops:?}");
        let MapOp::SetCells(moved) = &ops[0] else {
            panic!("{ops:?}")
        };
        assert_eq!(moved.len(), 1024);
        assert!(moved.iter().all(|&(_, s)| s != 1));
        maps.apply(&ops);
        maps.matches(&c);
        assert_eq!(cells_of(&c, 1), 0);
        let later = t0 + Duration::from_secs(4);
        let ir2 = c.routers(later).find(|r| r.name == "ir2").unwrap();
        assert_eq!(
            ir2.state,
            RouterState::Draining {
                remaining: Duration::from_secs(6)
            }
        );
        assert_eq!((ir2.cells, ir2.share), (0, 0.0));
        assert_eq!(c.next_deadline(), Some(t0 + DRAIN));
        assert!(c.tick(t0 + DRAIN - Duration::from_millis(1)).is_empty());

        // While draining: its name and port stay taken, it cannot be removed or weighted.
        let e = c.add(spec("ir2", 2, 1), later).unwrap_err();
        assert_eq!(
            e,
            ClusterError::Draining {
                name: "ir2".into(),
                remaining: Duration::from_secs(6)
            }
        );
        assert!(e.to_string().contains("freed in 6000 ms"), "{e}");
        let e = c.add(spec("ir9", 2, 1), later).unwrap_err();
        assert!(matches!(e, ClusterError::PortInUse { port: 6372, ref owner } if owner == "ir2"));
        assert!(matches!(
            c.remove("ir2", later),
            Err(ClusterError::Draining { .. })
        ));
        assert!(matches!(
            c.set_weight("ir2", 4, later),
            Err(ClusterError::Draining { .. })
        ));

        // Stage 2: freed, port first.
        let ops = c.tick(t0 + DRAIN);
        assert_eq!(
            ops,
            [
                MapOp::ClearPort { port: 6372 },
                MapOp::ClearRouter { slot: 1 }
            ]
        );
        maps.apply(&ops);
        maps.matches(&c);
        assert_eq!(c.next_deadline(), None);
        assert!(c.tick(t0 + DRAIN * 2).is_empty(), "freed once");

        // The slot and the name are free again; the new router takes the lowest slot.
        let ops = c.add(spec("ir2", 2, 1), t0 + DRAIN).unwrap();
        assert!(matches!(ops[0], MapOp::SetRouter { slot: 1, .. }));
        maps.apply(&ops);
        maps.matches(&c);
    }

    #[test]
    fn weights_shape_the_hash_space() {
        let t0 = Instant::now();
        let mut c = Cluster::new(1024, 6363, DRAIN);
        let mut maps = Maps::default();
        maps.apply(&c.snapshot());
        maps.apply(&c.add(spec("a", 1, 1), t0).unwrap());
        maps.apply(&c.add(spec("b", 2, 3), t0).unwrap());
        assert_eq!((cells_of(&c, 0), cells_of(&c, 1)), (256, 768));
        let before = c.table().to_vec();
        let ops = c.set_weight("a", 1, t0).unwrap();
        assert!(ops.is_empty(), "same weight, nothing moves");
        let ops = c.set_weight("b", 1, t0).unwrap();
        let MapOp::SetCells(moved) = &ops[0] else {
            panic!("{ops:?}")
        };
        assert_eq!(moved.len(), 256);
        assert!(
            moved
                .iter()
                .all(|&(cell, s)| s == 0 && before[cell as usize] == 1)
        );
        maps.apply(&ops);
        // Weight 0: no Interests, but still in the PORT MAP.
        maps.apply(&c.set_weight("a", 0, t0).unwrap());
        maps.apply(&c.set_weight("b", 0, t0).unwrap());
        assert!(c.table().iter().all(|&s| s == NO_ROUTER));
        maps.matches(&c);
        assert_eq!(maps.ports.len(), 2);
        let views: Vec<_> = c.routers(t0).collect();
        assert!(
            views
                .iter()
                .all(|v| v.state == RouterState::Active && v.cells == 0)
        );
        maps.apply(&c.set_weight("b", 5, t0).unwrap());
        assert_eq!(cells_of(&c, 1), 1024);
        maps.matches(&c);
        assert!(matches!(
            c.set_weight("b", 1001, t0),
            Err(ClusterError::Invalid(m)) if m.starts_with("weight 1001")
        ));
        assert_eq!(
            c.set_weight("zz", 1, t0),
            Err(ClusterError::Unknown("zz".into()))
        );
    }

    #[test]
    fn removing_the_last_router_leaves_no_router() {
        let t0 = Instant::now();
        let mut c = Cluster::new(64, 6363, Duration::ZERO);
        c.add(spec("a", 1, 1), t0).unwrap();
        let ops = c.remove("a", t0).unwrap();
        assert!(matches!(&ops[0], MapOp::SetCells(v) if v.iter().all(|&(_, s)| s == NO_ROUTER)));
        assert!(c.table().iter().all(|&s| s == NO_ROUTER));
        assert_eq!(
            c.routers(t0).count(),
            1,
            "still draining until the next tick"
        );
        assert_eq!(c.tick(t0).len(), 2);
        assert_eq!(c.routers(t0).count(), 0);
    }

    #[test]
    fn add_refuses_what_the_maps_cannot_hold() {
        let t0 = Instant::now();
        let mut c = Cluster::new(64, 6363, DRAIN);
        c.add(spec("a", 1, 1), t0).unwrap();
        assert_eq!(
            c.add(spec("a", 2, 1), t0),
            Err(ClusterError::DuplicateName("a".into()))
        );
        let mut same_port = spec("b", 1, 1);
        same_port.address = Ipv4Addr::new(10, 9, 9, 9);
        assert!(matches!(
            c.add(same_port, t0),
            Err(ClusterError::PortInUse { port: 6371, .. })
        ));
        let mut wk = spec("b", 2, 1);
        wk.port = 6363;
        assert_eq!(c.add(wk, t0), Err(ClusterError::WellKnownPort(6363)));
        let mut zero = spec("b", 2, 1);
        zero.port = 0;
        assert!(
            matches!(c.add(zero, t0), Err(ClusterError::Invalid(m)) if m.starts_with("port 0"))
        );
        let mut bcast = spec("b", 2, 1);
        bcast.address = Ipv4Addr::BROADCAST;
        assert!(matches!(c.add(bcast, t0), Err(ClusterError::Invalid(m)) if m.contains("unicast")));
        assert!(
            matches!(c.add(spec("b c", 2, 1), t0), Err(ClusterError::Invalid(m)) if m.starts_with("name"))
        );
        assert!(matches!(
            c.add(spec("b", 2, 1001), t0),
            Err(ClusterError::Invalid(_))
        ));
        for i in 1..MAX_ROUTERS as u16 {
            let mut s = spec(&format!("r{i}"), 2, 1);
            s.port = 7000 + i;
            c.add(s, t0).unwrap();
        }
        let mut s = spec("last", 2, 1);
        s.port = 9000;
        assert_eq!(c.add(s, t0), Err(ClusterError::Full));
        // A draining router still holds its slot.
        c.remove("r5", t0).unwrap();
        let mut s = spec("last", 2, 1);
        s.port = 9000;
        assert_eq!(c.add(s.clone(), t0), Err(ClusterError::Full));
        c.tick(t0 + DRAIN);
        let ops = c.add(s, t0 + DRAIN).unwrap();
        assert!(matches!(ops[0], MapOp::SetRouter { slot: 5, .. }));
        assert_eq!(
            c.table().iter().filter(|&&s| s == 5).count(),
            1,
            "64 cells, 64 routers"
        );
    }

    #[test]
    fn from_config_builds_the_table_at_once() {
        let cfg = crate::LbConfig::from_toml(include_str!("../../../configs/lb.toml")).unwrap();
        let t0 = Instant::now();
        let c = Cluster::from_config(&cfg, t0).unwrap();
        assert_eq!(c.well_known_port(), 6363);
        assert_eq!(c.drain(), Duration::from_secs(10));
        let views: Vec<_> = c.routers(t0).collect();
        assert_eq!(views.len(), 3);
        assert_eq!(
            views.iter().map(|v| v.cells).collect::<Vec<_>>(),
            [1366, 1365, 1365]
        );
        assert!((views.iter().map(|v| v.share).sum::<f64>() - 1.0).abs() < 1e-9);
        // Interleaved from the first cell: routers 0, 1, 2, 0, 1, 2, ...
        assert_eq!(&c.table()[..6], &[0, 1, 2, 0, 1, 2]);
        let mut maps = Maps::default();
        maps.apply(&c.snapshot());
        maps.matches(&c);
    }

    proptest::proptest! {
        /// Any sequence of changes, applied op by op to a model of the maps, never lets a
        /// cell or a port name a slot without its router, and rebuilds the cluster exactly.
        #[test]
        fn any_sequence_of_changes_keeps_the_maps_consistent(
            actions in proptest::collection::vec((0u8..4, 0u8..8, 0u32..4, 0u64..3), 1..60),
        ) {
            let t0 = Instant::now();
            let mut c = Cluster::new(64, 6363, Duration::from_secs(2));
            let mut maps = Maps::default();
            maps.apply(&c.snapshot());
            for (i, &(kind, r, w, dt)) in actions.iter().enumerate() {
                let now = t0 + Duration::from_secs(i as u64 + dt);
                let name = format!("r{r}");
                let ops = match kind {
                    0 => c.add(spec(&name, r + 1, w), now).unwrap_or_default(),
                    1 => c.remove(&name, now).unwrap_or_default(),
                    2 => c.set_weight(&name, w, now).unwrap_or_default(),
                    _ => c.tick(now),
                };
                maps.apply(&ops);
                maps.matches(&c);
                let weights: u32 = c
                    .routers(now)
                    .filter(|v| v.state == RouterState::Active)
                    .map(|v| v.weight)
                    .sum();
                proptest::prop_assert_eq!(
                    c.table().contains(&NO_ROUTER),
                    weights == 0,
                    "NO_ROUTER exactly when no active weight"
                );
            }
        }
    }
}
