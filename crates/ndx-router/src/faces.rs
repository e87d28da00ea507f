//! The face table: every link the router forwards on, how to reach it on the wire, and how
//! an incoming frame finds its face.
//!
//! The control thread owns the [`Faces`] writer and publishes immutable [`FaceTable`]
//! snapshots (RCU style, like the FIB); shard workers read the current snapshot without locks.
//! A frame from a UDP peer no face knows creates an on-demand face when the policy allows: the
//! shard takes a fresh id from a shared atomic counter, uses it at once (so the first packet is
//! forwarded, not dropped), and tells the control thread, which adds the face to the next
//! snapshot.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use ndx_core::{FaceId, FaceInfo};

/// Where a face leads on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Link {
    /// NDN over UDP to this peer.
    Udp(SocketAddr),
    /// NDN over Ethernet to this MAC address on interface `ifindex`.
    Ether {
        /// Interface index.
        ifindex: u32,
        /// Peer MAC address.
        mac: [u8; 6],
    },
    /// The NDN Ethernet multicast group on interface `ifindex`.
    EtherMulticast {
        /// Interface index.
        ifindex: u32,
    },
    /// A local application's connection to the app socket, served by the host thread
    /// (`conn` numbers connections; never reused while the router runs).
    App {
        /// Connection number.
        conn: u64,
    },
    /// The router's own management endpoint (NFD's internal face), in the host thread.
    Internal,
}

impl Link {
    /// True for the links the host thread serves (app connections, management).
    pub(crate) fn is_host(&self) -> bool {
        matches!(self, Link::App { .. } | Link::Internal)
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Link::Udp(a) => write!(f, "udp://{a}"),
            Link::Ether { ifindex, mac } => write!(
                f,
                "ether://{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}%{ifindex}",
                mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]
            ),
            Link::EtherMulticast { ifindex } => write!(f, "ether-multicast%{ifindex}"),
            Link::App { conn } => write!(f, "fd://{conn}"),
            Link::Internal => write!(f, "internal://"),
        }
    }
}

/// How a face came to exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// From the configuration file.
    Config,
    /// Created on the first packet of a new UDP peer.
    OnDemand,
    /// Added through the control socket or NFD management (`faces/create`).
    Command,
    /// A local application's connection to the app socket.
    App,
    /// The router's own management face.
    Internal,
}

impl Origin {
    /// Lower-case name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Origin::Config => "config",
            Origin::OnDemand => "on-demand",
            Origin::Command => "command",
            Origin::App => "app",
            Origin::Internal => "internal",
        }
    }
}

/// The layer-2 path out of a face: filled in once the next hop is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct L2Path {
    /// Outgoing interface.
    pub ifindex: u32,
    /// Our MAC on that interface.
    pub src_mac: [u8; 6],
    /// The next hop's MAC (the peer, or its gateway).
    pub dst_mac: [u8; 6],
    /// Our address on that interface (UDP faces).
    pub src: Option<SocketAddr>,
}

/// One face.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Face {
    /// Its id.
    pub id: FaceId,
    /// Name given in the configuration or command (on-demand faces: the peer address).
    pub name: String,
    /// Where it leads.
    pub link: Link,
    /// Forwarding properties.
    pub info: FaceInfo,
    /// How it was created.
    pub origin: Origin,
    /// The resolved path, or `None` while the next hop is being resolved.
    pub path: Option<L2Path>,
}

/// An immutable view of all faces, shared by the shard workers.
#[derive(Debug, Default, Clone)]
pub(crate) struct FaceTable {
    faces: HashMap<FaceId, Face>,
    by_link: HashMap<Link, FaceId>,
    generation: u64,
}

impl FaceTable {
    /// The face with this id.
    pub(crate) fn get(&self, id: FaceId) -> Option<&Face> {
        self.faces.get(&id)
    }

    /// The face a frame from `link` belongs to.
    pub(crate) fn lookup(&self, link: &Link) -> Option<FaceId> {
        self.by_link.get(link).copied()
    }

    /// Every face, by id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Face> {
        let mut v: Vec<&Face> = self.faces.values().collect();
        v.sort_by_key(|f| f.id);
        v.into_iter()
    }

    /// Number of faces.
    pub(crate) fn len(&self) -> usize {
        self.faces.len()
    }

    /// Bumped on every publication.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }
}

/// Why a face could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FaceError {
    /// Another face already leads there.
    #[error("{link} is already face {existing}")]
    Duplicate {
        /// The link.
        link: Link,
        /// The face that has it.
        existing: FaceId,
    },
    /// No such face.
    #[error("no face {0}")]
    Unknown(FaceId),
    /// The face table is full (ids are 32 bits; a router never gets there, but it is checked).
    #[error("face ids exhausted")]
    Exhausted,
}

/// Hands out face ids; shared between the control thread and the shards (on-demand faces).
#[derive(Debug)]
pub(crate) struct FaceIds(AtomicU32);

impl FaceIds {
    /// Ids start at 1 (0 is reserved for "no face").
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self(AtomicU32::new(1)))
    }

    /// A fresh id.
    pub(crate) fn next(&self) -> Result<FaceId, FaceError> {
        let id = self.0.fetch_add(1, Ordering::Relaxed);
        if id == u32::MAX {
            return Err(FaceError::Exhausted);
        }
        Ok(FaceId(id))
    }
}

/// What a shard worker holds: the published table, the id counter and the bounds for
/// on-demand faces.
#[derive(Debug, Clone)]
pub(crate) struct FaceReader {
    /// The published table.
    pub table: Arc<ArcSwap<FaceTable>>,
    /// Face ids.
    pub ids: Arc<FaceIds>,
    /// On-demand faces in existence, against their bounds.
    pub on_demand: Arc<OnDemand>,
}

/// Why a new peer got no on-demand face.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `udp.on_demand_max` faces exist.
    Total,
    /// `udp.on_demand_per_address` faces exist for the peer's address.
    PerAddress,
}

/// The on-demand faces in existence, by address, held to `[udp]`'s bounds. A shard takes a
/// place before it creates a face; the control thread gives it back when the face goes (idle,
/// removed, or never published because another shard won the race). A lock taken only when a
/// frame comes from a peer no face knows.
#[derive(Debug)]
pub(crate) struct OnDemand {
    state: Mutex<OnDemandState>,
}

#[derive(Debug, Default)]
struct OnDemandState {
    /// The bounds (a configuration reload may change them: [`OnDemand::set_limits`]).
    limits: crate::config::OnDemandLimits,
    total: usize,
    by_address: HashMap<Option<IpAddr>, usize>,
    refused: u64,
}

impl OnDemand {
    /// No faces yet, bounded by `limits`.
    pub(crate) fn new(limits: crate::config::OnDemandLimits) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(OnDemandState {
                limits,
                ..OnDemandState::default()
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, OnDemandState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a place for a face to `addr` (`None`: an Ethernet peer, held to the total only).
    pub(crate) fn take(&self, addr: Option<IpAddr>) -> Result<(), Refusal> {
        let mut s = self.lock();
        if s.total >= s.limits.max {
            s.refused += 1;
            return Err(Refusal::Total);
        }
        let n = s.by_address.get(&addr).copied().unwrap_or(0);
        if addr.is_some() && n >= s.limits.per_address {
            s.refused += 1;
            return Err(Refusal::PerAddress);
        }
        s.total += 1;
        s.by_address.insert(addr, n + 1);
        Ok(())
    }

    /// Gives back the place of a face to `addr`.
    pub(crate) fn give_back(&self, addr: Option<IpAddr>) {
        let mut s = self.lock();
        let Some(n) = s.by_address.get_mut(&addr) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            s.by_address.remove(&addr);
        }
        s.total -= 1;
    }

    /// On-demand faces now, and frames from new peers refused a face since start (a peer
    /// counts once per frame it sends while refused).
    pub(crate) fn counts(&self) -> (usize, u64) {
        let s = self.lock();
        (s.total, s.refused)
    }

    /// The bounds.
    pub(crate) fn limits(&self) -> crate::config::OnDemandLimits {
        self.lock().limits
    }

    /// Changes the bounds (a configuration reload). Faces beyond new, lower bounds stay
    /// until they go idle; new peers are refused until the counts are below them.
    pub(crate) fn set_limits(&self, limits: crate::config::OnDemandLimits) {
        self.lock().limits = limits;
    }
}

impl Link {
    /// The address an on-demand face to this link is counted under.
    pub(crate) fn on_demand_address(&self) -> Option<IpAddr> {
        match self {
            Link::Udp(a) => Some(a.ip()),
            _ => None,
        }
    }
}

/// The writer side, owned by the control thread.
#[derive(Debug)]
pub(crate) struct Faces {
    table: FaceTable,
    shared: Arc<ArcSwap<FaceTable>>,
    ids: Arc<FaceIds>,
}

impl Faces {
    /// An empty table and the reader handle shards use.
    pub(crate) fn new() -> (Self, Arc<ArcSwap<FaceTable>>, Arc<FaceIds>) {
        let shared = Arc::new(ArcSwap::from_pointee(FaceTable::default()));
        let ids = FaceIds::new();
        (
            Self {
                table: FaceTable::default(),
                shared: shared.clone(),
                ids: ids.clone(),
            },
            shared,
            ids,
        )
    }

    /// The table being edited (not yet published).
    pub(crate) fn table(&self) -> &FaceTable {
        &self.table
    }

    /// Adds a face with a fresh id.
    pub(crate) fn add(
        &mut self,
        name: String,
        link: Link,
        info: FaceInfo,
        origin: Origin,
    ) -> Result<FaceId, FaceError> {
        if let Some(&existing) = self.table.by_link.get(&link) {
            return Err(FaceError::Duplicate { link, existing });
        }
        let id = self.ids.next()?;
        self.insert(Face {
            id,
            name,
            link,
            info,
            origin,
            path: None,
        })?;
        Ok(id)
    }

    /// Adds a face whose id was already taken (an on-demand face a shard created). If another
    /// face already has the link (two shards raced on the same peer), the existing face is kept
    /// and its id returned as the error's `existing`.
    pub(crate) fn insert(&mut self, face: Face) -> Result<(), FaceError> {
        if let Some(&existing) = self.table.by_link.get(&face.link) {
            return Err(FaceError::Duplicate {
                link: face.link,
                existing,
            });
        }
        self.table.by_link.insert(face.link, face.id);
        self.table.faces.insert(face.id, face);
        Ok(())
    }

    /// Sets (or clears) a face's resolved path.
    pub(crate) fn set_path(&mut self, id: FaceId, path: Option<L2Path>) -> Result<(), FaceError> {
        let f = self
            .table
            .faces
            .get_mut(&id)
            .ok_or(FaceError::Unknown(id))?;
        f.path = path;
        Ok(())
    }

    /// Changes a face's forwarding properties (NFD's faces/update).
    pub(crate) fn set_info(&mut self, id: FaceId, info: FaceInfo) -> Result<(), FaceError> {
        let f = self
            .table
            .faces
            .get_mut(&id)
            .ok_or(FaceError::Unknown(id))?;
        f.info = info;
        Ok(())
    }

    /// Removes a face.
    pub(crate) fn remove(&mut self, id: FaceId) -> Result<Face, FaceError> {
        let f = self.table.faces.remove(&id).ok_or(FaceError::Unknown(id))?;
        self.table.by_link.remove(&f.link);
        Ok(f)
    }

    /// Publishes the edited table to the shards.
    pub(crate) fn publish(&mut self) {
        self.table.generation += 1;
        self.shared.store(Arc::new(self.table.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(s: &str) -> Link {
        Link::Udp(s.parse().unwrap())
    }

    #[test]
    fn add_lookup_publish_remove() {
        let (mut faces, reader, ids) = Faces::new();
        let a = faces
            .add(
                "a".into(),
                udp("10.0.0.1:6363"),
                FaceInfo::default(),
                Origin::Config,
            )
            .unwrap();
        assert_eq!(reader.load().len(), 0, "not visible before publish");
        faces.publish();
        let snap = reader.load();
        assert_eq!(snap.lookup(&udp("10.0.0.1:6363")), Some(a));
        assert_eq!(snap.get(a).unwrap().name, "a");
        assert_eq!(snap.generation(), 1);
        // An on-demand id taken by a shard, then inserted by the control thread.
        let b = ids.next().unwrap();
        assert_ne!(a, b);
        faces
            .insert(Face {
                id: b,
                name: "10.0.0.2:6363".into(),
                link: udp("10.0.0.2:6363"),
                info: FaceInfo::default(),
                origin: Origin::OnDemand,
                path: None,
            })
            .unwrap();
        assert_eq!(
            faces
                .add(
                    "dup".into(),
                    udp("10.0.0.2:6363"),
                    FaceInfo::default(),
                    Origin::Command
                )
                .unwrap_err(),
            FaceError::Duplicate {
                link: udp("10.0.0.2:6363"),
                existing: b
            }
        );
        faces.remove(a).unwrap();
        assert_eq!(faces.remove(a).unwrap_err(), FaceError::Unknown(a));
        faces.publish();
        let snap = reader.load();
        assert_eq!(snap.len(), 1);
        assert_eq!(snap.lookup(&udp("10.0.0.1:6363")), None);
        assert_eq!(snap.iter().next().unwrap().id, b);
    }

    #[test]
    fn on_demand_faces_are_bounded_in_total_and_per_address() {
        let od = OnDemand::new(crate::config::OnDemandLimits {
            max: 5,
            per_address: 2,
            idle_ms: 1000,
        });
        let a: Option<IpAddr> = Some("10.0.0.1".parse().unwrap());
        let b: Option<IpAddr> = Some("10.0.0.2".parse().unwrap());
        assert_eq!(od.take(a), Ok(()));
        assert_eq!(od.take(a), Ok(()));
        assert_eq!(od.take(a), Err(Refusal::PerAddress));
        assert_eq!(od.take(b), Ok(()));
        // Ethernet peers count against the total only.
        assert_eq!(od.take(None), Ok(()));
        assert_eq!(od.take(None), Ok(()));
        assert_eq!(od.take(b), Err(Refusal::Total));
        assert_eq!(od.counts(), (5, 2));
        od.give_back(a);
        assert_eq!(od.take(a), Ok(()), "a place given back is taken again");
        for _ in 0..2 {
            od.give_back(a);
        }
        od.give_back(a); // more than taken: harmless
        assert_eq!(od.counts().0, 3);
        assert_eq!(od.take(a), Ok(()));
    }
}
