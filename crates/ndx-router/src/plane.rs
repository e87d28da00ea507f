//! The control plane's state: the FIB writer, the face table writer and the shards'
//! published counters, with the operations the control socket offers.

use std::sync::Arc;

use ndx_codec::NameBuf;
use ndx_core::{Fib, FibReader, NextHop, StrategyKind};
use serde_json::{Value, json};

use crate::config::{Config, Remote};
use crate::faces::{FaceError, Faces, Link, Origin};
use crate::stats::{ShardStats, Snapshot};

/// Why a control operation failed (sent back to the client as its message).
#[derive(Debug, thiserror::Error)]
pub enum PlaneError {
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
}

/// The control plane.
#[derive(Debug)]
pub struct Plane {
    /// The FIB writer.
    pub fib: Fib,
    /// The face table writer.
    pub faces: Faces,
    /// Each shard's counters.
    pub stats: Vec<Arc<ShardStats>>,
    /// Interface names by index, for display.
    pub interfaces: Vec<(u32, String)>,
}

impl Plane {
    /// An empty plane for `cfg` (no faces, no routes) and the FIB reader for the shards.
    pub fn new(cfg: &Config) -> (Self, FibReader, crate::faces::FaceReader) {
        let (fib, reader) = Fib::new(cfg.hash_key, cfg.fib_stage1);
        let (faces, face_reader, ids) = Faces::new();
        let stats = (0..cfg.shards)
            .map(|_| Arc::new(ShardStats::default()))
            .collect();
        (
            Self {
                fib,
                faces,
                stats,
                interfaces: Vec::new(),
            },
            reader,
            crate::faces::FaceReader {
                table: face_reader,
                ids,
            },
        )
    }

    /// Finds a face by id (`7`, `face7`) or name.
    pub fn face_id(&self, s: &str) -> Result<ndx_core::FaceId, PlaneError> {
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

    /// Adds (or updates the cost of) a next hop and publishes the FIB.
    pub fn add_route(&mut self, prefix: &str, face: &str, cost: u32) -> Result<(), PlaneError> {
        let p = parse_prefix(prefix)?;
        let face = self.face_id(face)?;
        self.fib
            .add_nexthop(&p.as_name(), NextHop { face, cost })
            .map_err(|e| PlaneError::Fib(e.to_string()))?;
        self.fib.publish();
        Ok(())
    }

    /// Removes a next hop (or, with no face, the whole route) and publishes the FIB.
    pub fn remove_route(&mut self, prefix: &str, face: Option<&str>) -> Result<(), PlaneError> {
        let p = parse_prefix(prefix)?;
        let removed = match face {
            Some(f) => {
                let id = self.face_id(f)?;
                self.fib.remove_nexthop(&p.as_name(), id)
            }
            None => self.fib.remove_route(&p.as_name()),
        };
        if !removed {
            return Err(PlaneError::NoRoute(prefix.to_string()));
        }
        self.fib.publish();
        Ok(())
    }

    /// Sets the strategy of a prefix (the route must exist) and publishes the FIB.
    pub fn set_strategy(&mut self, prefix: &str, kind: StrategyKind) -> Result<(), PlaneError> {
        let p = parse_prefix(prefix)?;
        if !self.fib.set_strategy(&p.as_name(), kind.id()) {
            return Err(PlaneError::NoRoute(prefix.to_string()));
        }
        self.fib.publish();
        Ok(())
    }

    /// Adds a UDP or Ethernet face by command and publishes the face table.
    pub fn add_face(
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
        let id = self
            .faces
            .add(name.to_string(), link, Default::default(), Origin::Command)?;
        self.faces.publish();
        Ok(id)
    }

    /// Removes a face, and every next hop through it, and publishes both tables.
    pub fn remove_face(&mut self, face: &str) -> Result<(), PlaneError> {
        let id = self.face_id(face)?;
        self.faces.remove(id)?;
        for r in self.fib.routes() {
            if r.nexthops.iter().any(|n| n.face == id) {
                self.fib.remove_nexthop(&r.prefix.as_name(), id);
            }
        }
        self.fib.publish();
        self.faces.publish();
        Ok(())
    }

    /// Counters summed over shards, and per shard.
    pub fn counters(&self) -> (Snapshot, Vec<Snapshot>) {
        let per: Vec<Snapshot> = self.stats.iter().map(|s| s.read()).collect();
        let mut total = Snapshot::default();
        for s in &per {
            total.accumulate(s);
        }
        (total, per)
    }

    /// Everything `ndx status` shows, as JSON.
    pub fn status(&self) -> Value {
        let (total, per) = self.counters();
        let obj = |s: &Snapshot| {
            Value::Object(
                s.iter()
                    .map(|(k, v)| (k.to_string(), Value::from(v)))
                    .collect(),
            )
        };
        json!({
            "counters": obj(&total),
            "shards": per.iter().map(obj).collect::<Vec<_>>(),
            "faces": self.faces_json(),
            "routes": self.routes_json(),
        })
    }

    /// The face table as JSON.
    pub fn faces_json(&self) -> Value {
        Value::Array(
            self.faces
                .table()
                .iter()
                .map(|f| {
                    json!({
                        "id": f.id.0,
                        "name": f.name,
                        "remote": f.link.to_string(),
                        "origin": f.origin.name(),
                        "local": f.info.local,
                        "resolved": f.path.is_some(),
                    })
                })
                .collect(),
        )
    }

    /// The FIB as JSON.
    pub fn routes_json(&self) -> Value {
        Value::Array(
            self.fib
                .routes()
                .iter()
                .map(|r| {
                    json!({
                        "prefix": r.prefix.to_string(),
                        "strategy": StrategyKind::from_id(r.strategy).name(),
                        "nexthops": r.nexthops.iter().map(|n| json!({"face": n.face.0, "cost": n.cost})).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        )
    }
}

fn parse_prefix(s: &str) -> Result<NameBuf, PlaneError> {
    NameBuf::from_uri(s).map_err(|e| PlaneError::Prefix(s.to_string(), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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
