//! The control plane's state: the FIB writer, the face table writer and the shards'
//! published counters, with the operations the control socket offers.

use std::collections::HashMap;
use std::sync::Arc;

use ndx_codec::NameBuf;
use ndx_core::{FaceId, FaceLoad, Fib, FibReader, StrategyKind};
use serde_json::{Value, json};

use crate::config::{Config, Remote};
use crate::faces::{Face, FaceError, Faces, L2Path, Link, Origin};
use crate::rib::{Rib, RibError, Route, origin};
use crate::stats::{ShardStats, Snapshot};
use crate::worker::{IfaceInfo, NDN_MULTICAST};

/// Why a control operation failed (sent back to the client as its message).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PlaneError {
    /// A prefix that does not parse.
    #[error("bad prefix {0:?}: {1}")]
    Prefix(String, String),
    /// No face with that id or name.
    #[error("no face {0:?}")]
    NoFace(String),
    /// A face error.
    #[error(transparent)]
    Face(#[from] FaceError),
    /// A FIB error.
    #[error("{0}")]
    Fib(String),
    /// A bad remote address.
    #[error("{0}")]
    Remote(String),
    /// No such route.
    #[error("no route {0}")]
    NoRoute(String),
    /// Another face already has that name.
    #[error("a face named {0:?} exists already")]
    DuplicateName(String),
}

impl From<RibError> for PlaneError {
    fn from(e: RibError) -> Self {
        match e {
            RibError::Fib(s) => PlaneError::Fib(s),
            RibError::NoRoute => PlaneError::NoRoute(String::new()),
        }
    }
}

/// The control plane.
#[derive(Debug)]
pub(crate) struct Plane {
    /// The FIB writer.
    pub fib: Fib,
    /// The face table writer.
    pub faces: Faces,
    /// Each shard's counters.
    pub stats: Vec<Arc<ShardStats>>,
    /// Interface names by index, for display.
    pub interfaces: Vec<(u32, String)>,
    /// The attached interfaces (Ethernet faces' paths come from them).
    pub ifaces: Vec<IfaceInfo>,
    /// Routes by origin and the strategy choices; the FIB is computed from it.
    pub rib: Rib,
    /// The RIB's clock: route expiry times are ms since this instant.
    pub epoch: std::time::Instant,
    /// The CS's capacity over all shards, in Data (for `cs/info`).
    pub cs_capacity: u64,
    /// Faces created and destroyed since the host thread last looked (NFD's face event
    /// notifications): (kind, the face).
    pub face_events: Vec<(u64, Face)>,
    /// On-demand faces against their bounds (shared with the shards).
    pub on_demand: Arc<crate::faces::OnDemand>,
    /// Each on-demand face's packets received when last looked at, and since when that
    /// number has not moved ([`expire_idle_faces`](Self::expire_idle_faces)).
    activity: HashMap<FaceId, (u64, std::time::Instant)>,
    /// Between [`Plane::begin_batch`] and [`Plane::end_batch`]: FIB changes wait for one
    /// publication (`fib_dirty`: some are waiting).
    fib_batch: bool,
    fib_dirty: bool,
}

impl Plane {
    /// An empty plane for `cfg` (no faces, no routes) and the FIB reader for the shards.
    pub(crate) fn new(cfg: &Config) -> (Self, FibReader, crate::faces::FaceReader) {
        let (fib, reader) = Fib::new(cfg.hash_key, cfg.fib_stage1);
        let (faces, face_reader, ids) = Faces::new();
        let on_demand = crate::faces::OnDemand::new(cfg.on_demand);
        let stats = (0..cfg.shards)
            .map(|_| Arc::new(ShardStats::default()))
            .collect();
        (
            Self {
                fib,
                faces,
                stats,
                interfaces: Vec::new(),
                ifaces: Vec::new(),
                rib: Rib::new(),
                epoch: std::time::Instant::now(),
                cs_capacity: (cfg.shard.cs.capacity * cfg.shards) as u64,
                face_events: Vec::new(),
                on_demand: on_demand.clone(),
                activity: HashMap::new(),
                fib_batch: false,
                fib_dirty: false,
            },
            reader,
            crate::faces::FaceReader {
                table: face_reader,
                ids,
                on_demand,
            },
        )
    }

    /// Finds a face by id (`7`, `face7`) or name.
    pub(crate) fn face_id(&self, s: &str) -> Result<ndx_core::FaceId, PlaneError> {
        let t = self.faces.table();
        let by_id = s
            .strip_prefix("face")
            .unwrap_or(s)
            .parse::<u32>()
            .ok()
            .map(ndx_core::FaceId)
            .filter(|id| t.get(*id).is_some());
        by_id
            .or_else(|| t.iter().find(|f| f.name == s).map(|f| f.id))
            .ok_or_else(|| PlaneError::NoFace(s.to_string()))
    }

    /// Milliseconds on the RIB's clock.
    pub(crate) fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Adds (or updates the cost of) a static route and publishes the FIB.
    pub(crate) fn add_route(
        &mut self,
        prefix: &str,
        face: &str,
        cost: u32,
    ) -> Result<(), PlaneError> {
        let p = parse_prefix(prefix)?;
        let face = self.face_id(face)?;
        let route = Route {
            face,
            origin: origin::STATIC,
            cost: u64::from(cost),
            flags: 0,
            expires: None,
        };
        self.register(&p, route)
    }

    /// Adds (or updates) any route and publishes the FIB.
    pub(crate) fn register(&mut self, prefix: &NameBuf, route: Route) -> Result<(), PlaneError> {
        if self.faces.table().get(route.face).is_none() {
            return Err(PlaneError::NoFace(route.face.0.to_string()));
        }
        let r = self.rib.add(&mut self.fib, &prefix.as_name(), route);
        self.publish_fib();
        Ok(r?)
    }

    /// Removes routes of `prefix` through `face` (all when `None`) of `origin` (all when
    /// `None`) and publishes the FIB.
    pub(crate) fn unregister(
        &mut self,
        prefix: &NameBuf,
        face: Option<FaceId>,
        origin: Option<u64>,
    ) -> Result<(), PlaneError> {
        let r = self
            .rib
            .remove(&mut self.fib, &prefix.as_name(), face, origin);
        self.publish_fib();
        r.map_err(|e| match e {
            RibError::NoRoute => PlaneError::NoRoute(prefix.to_string()),
            e => e.into(),
        })
    }

    /// Removes every origin's route through a face (or, with no face, the whole prefix)
    /// and publishes the FIB.
    pub(crate) fn remove_route(
        &mut self,
        prefix: &str,
        face: Option<&str>,
    ) -> Result<(), PlaneError> {
        let p = parse_prefix(prefix)?;
        let face = face.map(|f| self.face_id(f)).transpose()?;
        self.unregister(&p, face, None)
    }

    /// Drops the routes whose expiration period ran out; true if any did.
    pub(crate) fn expire_routes(&mut self) -> bool {
        let now = self.now_ms();
        if self.rib.next_expiry().is_none_or(|t| t > now) {
            return false;
        }
        let n = self.rib.expire(&mut self.fib, now).unwrap_or(0);
        self.publish_fib();
        n > 0
    }

    /// Sets the strategy for a prefix and below and publishes the FIB.
    pub(crate) fn set_strategy(
        &mut self,
        prefix: &str,
        kind: StrategyKind,
    ) -> Result<(), PlaneError> {
        let p = parse_prefix(prefix)?;
        let r = self.rib.set_strategy(&mut self.fib, &p.as_name(), kind);
        self.publish_fib();
        Ok(r?)
    }

    /// Removes the strategy choice at a prefix; false if there was none.
    pub(crate) fn unset_strategy(&mut self, prefix: &NameBuf) -> Result<bool, PlaneError> {
        let r = self.rib.unset_strategy(&mut self.fib, &prefix.as_name());
        self.publish_fib();
        Ok(r?)
    }

    /// Adds a UDP or Ethernet face by command and publishes the face table.
    pub(crate) fn add_face(
        &mut self,
        name: &str,
        remote: &str,
        ifindex: Option<u32>,
    ) -> Result<ndx_core::FaceId, PlaneError> {
        let link = match Remote::parse(remote).map_err(PlaneError::Remote)? {
            Remote::Udp(a) => Link::Udp(a),
            Remote::Ether(mac) => Link::Ether {
                ifindex: ifindex.ok_or_else(|| {
                    PlaneError::Remote("an Ethernet face needs an interface".into())
                })?,
                mac,
            },
            Remote::EtherMulticast => Link::EtherMulticast {
                ifindex: ifindex.ok_or_else(|| {
                    PlaneError::Remote("an Ethernet face needs an interface".into())
                })?,
            },
        };
        if self.faces.table().iter().any(|f| f.name == name) {
            return Err(PlaneError::DuplicateName(name.to_string()));
        }
        let id = self
            .faces
            .add(name.to_string(), link, Default::default(), Origin::Command)?;
        // An Ethernet face's path is known at once (a UDP face's is resolved later).
        if let Some(path) = ether_path(&link, &self.ifaces) {
            let _ = self.faces.set_path(id, Some(path));
        }
        self.faces.publish();
        self.face_created(id);
        Ok(id)
    }

    /// Records that face `id` was created (for face event notifications).
    pub(crate) fn face_created(&mut self, id: FaceId) {
        if let Some(f) = self.faces.table().get(id) {
            self.face_events
                .push((ndx_nfd::face_event_kind::CREATED, f.clone()));
        }
    }

    /// Changes a face's forwarding properties and publishes the face table (the shards
    /// declare the new properties to their pipelines on their next refresh).
    pub(crate) fn set_face_info(
        &mut self,
        id: FaceId,
        info: ndx_core::FaceInfo,
    ) -> Result<(), PlaneError> {
        self.faces.set_info(id, info)?;
        self.faces.publish();
        Ok(())
    }

    /// Removes a face, and every next hop through it, and publishes both tables.
    pub(crate) fn remove_face(&mut self, face: &str) -> Result<(), PlaneError> {
        let id = self.face_id(face)?;
        self.remove_face_id(id)
    }

    /// Removes a face by id with every route through it, and publishes both tables.
    pub(crate) fn remove_face_id(&mut self, id: FaceId) -> Result<(), PlaneError> {
        let face = self.faces.remove(id)?;
        if face.origin == Origin::OnDemand {
            self.on_demand.give_back(face.link.on_demand_address());
        }
        let internal = face.origin == Origin::Internal;
        self.face_events
            .push((ndx_nfd::face_event_kind::DESTROYED, face));
        let r = self.rib.remove_face(&mut self.fib, id);
        // Next hops the RIB did not install: only the management face's (`/localhost/nfd`,
        // `/localhop/nfd`, put in the FIB by the host thread). Walking the whole FIB for
        // every other face would make a face removal cost O(routes).
        if internal {
            for route in self.fib.routes() {
                if route.nexthops.iter().any(|n| n.face == id) {
                    self.fib.remove_nexthop(&route.prefix.as_name(), id);
                }
            }
        }
        // Now, also in a batch: the routes leave the shards' FIB before the face leaves
        // their table.
        self.fib.publish();
        self.fib_dirty = false;
        self.faces.publish();
        Ok(r?)
    }

    /// Removes every route through a face from the RIB and the FIB (published, or at
    /// [`Plane::end_batch`]), leaving the face in the table: a configuration reload removes
    /// faces in two steps, so the FIB is published once.
    pub(crate) fn remove_face_routes(&mut self, id: FaceId) -> Result<(), PlaneError> {
        let r = self.rib.remove_face(&mut self.fib, id);
        self.publish_fib();
        Ok(r?)
    }

    /// Removes the on-demand faces that received nothing for `udp.on_demand_idle_ms` (NFD's
    /// idle timeout), with their routes; returns how many went.
    pub(crate) fn expire_idle_faces(&mut self, now: std::time::Instant) -> usize {
        let idle = std::time::Duration::from_millis(self.on_demand.limits().idle_ms);
        let (loads, _) = self.face_loads();
        let mut gone = Vec::new();
        let mut seen = HashMap::new();
        for f in self.faces.table().iter() {
            if f.origin != Origin::OnDemand {
                continue;
            }
            let l = loads.get(&f.id).copied().unwrap_or_default();
            let packets = l.interests + l.data;
            let since = match self.activity.get(&f.id) {
                Some(&(p, t)) if p == packets => t,
                _ => now,
            };
            if now.duration_since(since) >= idle && l.pit_entries == 0 {
                gone.push(f.id);
            } else {
                seen.insert(f.id, (packets, since));
            }
        }
        self.activity = seen;
        for id in &gone {
            if let Err(e) = self.remove_face_id(*id) {
                tracing::warn!("removing idle on-demand face {}: {e}", id.0);
            }
        }
        gone.len()
    }

    /// Publishes the FIB, or notes that it must be at [`Plane::end_batch`].
    fn publish_fib(&mut self) {
        if self.fib_batch {
            self.fib_dirty = true;
        } else {
            self.fib.publish();
        }
    }

    /// Starts a batch of changes whose FIB is published once, at [`Plane::end_batch`] (a
    /// face removal still publishes at once). The control socket wraps the requests one poll
    /// read in a batch and answers them after `end_batch`: publishing the FIB copies its
    /// chunk table, which dominated the cost of a route change.
    pub(crate) fn begin_batch(&mut self) {
        self.fib_batch = true;
    }

    /// Ends a batch, publishing the FIB if it changed.
    pub(crate) fn end_batch(&mut self) {
        self.fib_batch = false;
        if std::mem::take(&mut self.fib_dirty) {
            self.fib.publish();
        }
    }

    /// Counters summed over shards, and per shard.
    pub(crate) fn counters(&self) -> (Snapshot, Vec<Snapshot>) {
        let per: Vec<Snapshot> = self.stats.iter().map(|s| s.read()).collect();
        let mut total = Snapshot::default();
        for s in &per {
            total.accumulate(s);
        }
        (total, per)
    }

    /// Everything `ndx status` shows, as JSON.
    pub(crate) fn status(&self) -> Value {
        let (total, per) = self.counters();
        let obj = |s: &Snapshot| {
            Value::Object(
                s.iter()
                    .map(|(k, v)| (k.to_string(), Value::from(v)))
                    .collect(),
            )
        };
        let (loads, shares) = self.face_loads();
        let (on_demand, refused) = self.on_demand.counts();
        let limits = self.on_demand.limits();
        json!({
            "counters": obj(&total),
            "shards": per.iter().map(obj).collect::<Vec<_>>(),
            "pit_share": shares,
            "on_demand": {
                "faces": on_demand,
                "refused": refused,
                "max": limits.max,
                "per_address": limits.per_address,
                "idle_ms": limits.idle_ms,
            },
            "faces": self.faces_json_with(&loads),
            "routes": self.routes_json(),
        })
    }

    /// Each face's load summed over shards ([`ndx_core::FaceLoad`]), and each shard's PIT
    /// share.
    pub(crate) fn face_loads(&self) -> (HashMap<FaceId, FaceLoad>, Vec<u32>) {
        let mut loads: HashMap<FaceId, FaceLoad> = HashMap::new();
        let mut shares = Vec::new();
        for s in &self.stats {
            let f = s.read_faces();
            shares.push(f.pit_share);
            for (id, l) in f.loads {
                let t = loads.entry(id).or_default();
                t.interests += l.interests;
                t.data += l.data;
                t.pit_entries += l.pit_entries;
                t.drops += l.drops;
                t.pit_quota += l.pit_quota;
                t.nacks_limited += l.nacks_limited;
            }
        }
        (loads, shares)
    }

    /// The face table as JSON, with each face's load (see [`face_loads`](Self::face_loads)).
    pub(crate) fn faces_json(&self) -> Value {
        self.faces_json_with(&self.face_loads().0)
    }

    fn faces_json_with(&self, loads: &HashMap<FaceId, FaceLoad>) -> Value {
        Value::Array(
            self.faces
                .table()
                .iter()
                .map(|f| {
                    let l = loads.get(&f.id).copied().unwrap_or_default();
                    let mut v = json!({
                        "id": f.id.0,
                        "name": f.name,
                        "remote": f.link.to_string(),
                        "origin": f.origin.name(),
                        "local": f.info.local,
                        "local_fields": f.info.local_fields,
                        "resolved": f.path.is_some(),
                    });
                    for d in crate::stats::FACE_LOADS {
                        v[d.def.name] = json!((d.get)(&l));
                    }
                    v
                })
                .collect(),
        )
    }

    /// Every FIB route, in name order.
    pub(crate) fn fib_routes(&self) -> Vec<ndx_core::Route> {
        let mut routes = self.fib.routes();
        routes.sort_by(|a, b| {
            a.prefix
                .as_name()
                .as_bytes()
                .cmp(b.prefix.as_name().as_bytes())
        });
        routes
    }

    /// The FIB as JSON, each next hop with the origins of the routes that put it there
    /// (`inherited` when it comes from an ancestor's CHILD_INHERIT route, `internal` for the
    /// router's own management route).
    pub(crate) fn routes_json(&self) -> Value {
        let routes = self.fib_routes();
        Value::Array(
            routes
                .iter()
                .map(|r| {
                    let entry = self.rib.entry(&r.prefix.as_name());
                    let hops: Vec<Value> = r
                        .nexthops
                        .iter()
                        .map(|n| {
                            let mut origins: Vec<String> = entry
                                .into_iter()
                                .flat_map(|e| e.routes.iter())
                                .filter(|x| x.face == n.face)
                                .map(|x| origin::name(x.origin))
                                .collect();
                            if origins.is_empty() {
                                let internal = self
                                    .faces
                                    .table()
                                    .get(n.face)
                                    .is_some_and(|f| f.origin == Origin::Internal);
                                origins
                                    .push(if internal { "internal" } else { "inherited" }.into());
                            }
                            json!({"face": n.face.0, "cost": n.cost, "origin": origins.join("+")})
                        })
                        .collect();
                    json!({
                        "prefix": r.prefix.to_string(),
                        "strategy": StrategyKind::from_id(r.strategy).name(),
                        "nexthops": hops,
                    })
                })
                .collect(),
        )
    }

    /// The RIB as JSON: every route with its origin, cost, flags and remaining lifetime.
    pub(crate) fn rib_json(&self) -> Value {
        let now = self.now_ms();
        Value::Array(
            self.rib
                .entries()
                .map(|e| {
                    json!({
                        "prefix": e.name.to_string(),
                        "routes": e.routes.iter().map(|r| json!({
                            "face": r.face.0,
                            "origin": origin::name(r.origin),
                            "cost": r.cost,
                            "child_inherit": r.flags & crate::rib::CHILD_INHERIT != 0,
                            "capture": r.flags & crate::rib::CAPTURE != 0,
                            "expires_in_ms": r.expires.map(|t| t.saturating_sub(now)),
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        )
    }
}

/// The layer-2 path of an Ethernet face (known without resolution).
pub(crate) fn ether_path(link: &Link, ifaces: &[IfaceInfo]) -> Option<L2Path> {
    let (ifindex, dst) = match *link {
        Link::Ether { ifindex, mac } => (ifindex, mac),
        Link::EtherMulticast { ifindex } => (ifindex, NDN_MULTICAST),
        Link::Udp(_) | Link::App { .. } | Link::Internal => return None,
    };
    let i = ifaces.iter().find(|i| i.ifindex == ifindex)?;
    Some(L2Path {
        ifindex,
        src_mac: i.mac,
        dst_mac: dst,
        src: None,
    })
}

fn parse_prefix(s: &str) -> Result<NameBuf, PlaneError> {
    NameBuf::from_uri(s).map_err(|e| PlaneError::Prefix(s.to_string(), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn idle_on_demand_faces_expire_with_their_routes_and_places() {
        let cfg = Config::parse("[udp]\non_demand_idle_ms = 1000", Path::new("t")).unwrap();
        let (mut p, _fib, _faces) = Plane::new(&cfg);
        let link = Link::Udp("10.0.0.9:6363".parse().unwrap());
        p.on_demand.take(link.on_demand_address()).unwrap();
        let id = FaceId(999);
        p.faces
            .insert(Face {
                id,
                name: "10.0.0.9:6363".into(),
                link,
                info: ndx_core::FaceInfo::default(),
                origin: Origin::OnDemand,
                path: None,
            })
            .unwrap();
        let cmd = p.add_face("up", "udp://10.0.0.2:6363", None).unwrap();
        p.add_route("/od", &id.0.to_string(), 1).unwrap();
        let t0 = std::time::Instant::now();
        assert_eq!(p.expire_idle_faces(t0), 0);
        // A shard reports packets from it: activity restarts the clock.
        p.stats[0].publish_faces(crate::stats::FacesSnapshot {
            pit_share: 1,
            loads: vec![(
                id,
                FaceLoad {
                    interests: 3,
                    ..FaceLoad::default()
                },
            )],
        });
        let t1 = t0 + std::time::Duration::from_millis(900);
        assert_eq!(p.expire_idle_faces(t1), 0);
        assert_eq!(
            p.expire_idle_faces(t1 + std::time::Duration::from_millis(500)),
            0
        );
        assert_eq!(
            p.expire_idle_faces(t1 + std::time::Duration::from_millis(1000)),
            1
        );
        assert!(p.faces.table().get(id).is_none());
        assert!(
            p.faces.table().get(cmd).is_some(),
            "configured faces never expire"
        );
        assert!(
            p.fib_routes()
                .iter()
                .all(|r| r.nexthops.iter().all(|n| n.face != id))
        );
        assert_eq!(p.on_demand.counts().0, 0, "its place is given back");
    }

    #[test]
    fn routes_and_faces_by_command() {
        let cfg = Config::parse("[router]\nshards = 2", Path::new("t")).unwrap();
        let (mut p, fib, faces) = Plane::new(&cfg);
        let id = p.add_face("up", "udp://10.0.0.2:6363", None).unwrap();
        assert_eq!(faces.table.load().get(id).unwrap().name, "up");
        p.add_route("/a/b", "up", 3).unwrap();
        p.add_route("/a", &id.0.to_string(), 1).unwrap();
        assert!(matches!(
            p.add_route("/x", "nope", 1),
            Err(PlaneError::NoFace(_))
        ));
        assert!(matches!(
            p.add_route("/x/%zz", "up", 1),
            Err(PlaneError::Prefix(..))
        ));
        assert!(p.add_face("e", "ether://02:00:00:00:00:01", None).is_err());
        let snap = fib.snapshot();
        assert!(snap.generation() >= 2, "published");
        let st = p.status();
        assert_eq!(st["routes"].as_array().unwrap().len(), 2);
        assert_eq!(st["faces"][0]["remote"], "udp://10.0.0.2:6363");
        assert_eq!(st["shards"].as_array().unwrap().len(), 2);
        assert_eq!(st["counters"]["rx_frames"], 0);
        p.set_strategy("/a", StrategyKind::Multicast).unwrap();
        let routes = p.status()["routes"].clone();
        let a = routes
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["prefix"] == "/a")
            .unwrap()
            .clone();
        assert_eq!(a["strategy"], "multicast");
        p.remove_face("up").unwrap();
        assert!(p.fib.routes().iter().all(|r| r.nexthops.is_empty()));
        assert!(matches!(
            p.remove_route("/zzz", None),
            Err(PlaneError::NoRoute(_))
        ));
    }
}
