//! The RIB: every route the router was given (configuration, `ndx route`, applications'
//! `rib/register`, routing daemons), by prefix, face and origin, and the strategy choices;
//! it computes the FIB from them and applies only the differences.
//!
//! NFD's rules: a prefix's next hops are its own routes (per face, the lowest cost among
//! origins) plus the routes its ancestors offer with `CHILD_INHERIT`, walking up from the
//! parent and stopping after an entry that has a `CAPTURE` route (a prefix with a `CAPTURE`
//! route of its own inherits nothing); a face already chosen keeps its own cost. The strategy
//! of a FIB entry is the longest strategy choice that is a prefix of it (best-route at `/`
//! unless set). A strategy choice on a prefix with no route of its own gets a FIB entry with
//! the next hops its longest routed ancestor computes, so the choice applies to the Interests
//! under it exactly as NFD's separate strategy table would.
//!
//! Keys are names' TLV-VALUE bytes: a name's descendants are the keys that start with its
//! bytes, which is one range of the ordered maps, so a change recomputes only its subtree.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use ndx_codec::{Name, NameBuf};
use ndx_core::{FaceId, Fib, NextHop, StrategyKind};

pub(crate) use ndx_nfd::route_flags::{CAPTURE, CHILD_INHERIT};

/// Route origins (NFD's numbers, from `ndx-nfd`) with their display names.
pub(crate) mod origin {
    pub(crate) use ndx_nfd::origin::*;

    /// Names and numbers of the origins NFD names.
    const NAMES: [(&str, u64); 7] = [
        ("app", APP),
        ("autoreg", AUTOREG),
        ("client", CLIENT),
        ("autoconf", AUTOCONF),
        ("nlsr", NLSR),
        ("prefixann", PREFIXANN),
        ("static", STATIC),
    ];

    /// The name of an origin for display (its number when NFD names none).
    pub(crate) fn name(o: u64) -> String {
        NAMES
            .iter()
            .find(|(_, n)| *n == o)
            .map_or_else(|| o.to_string(), |(s, _)| (*s).to_string())
    }
}

/// One route: a next hop for a prefix, from one origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Route {
    /// The face.
    pub face: FaceId,
    /// Who installed it.
    pub origin: u64,
    /// Its cost.
    pub cost: u64,
    /// `CHILD_INHERIT` and `CAPTURE`.
    pub flags: u64,
    /// When it expires (ms on the RIB's clock), if it does.
    pub expires: Option<u64>,
}

/// A prefix and its routes.
#[derive(Debug, Clone)]
pub(crate) struct RibEntry {
    /// The prefix.
    pub name: NameBuf,
    /// Its routes, one per (face, origin).
    pub routes: Vec<Route>,
}

impl RibEntry {
    fn captures(&self) -> bool {
        self.routes.iter().any(|r| r.flags & CAPTURE != 0)
    }
}

/// What the RIB installed in the FIB for one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Installed {
    nexthops: Vec<NextHop>,
    strategy: StrategyKind,
}

/// Why a RIB operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RibError {
    /// The FIB refused a next hop (e.g. a hash collision under the router's key).
    #[error("{0}")]
    Fib(String),
    /// No such route.
    #[error("no route")]
    NoRoute,
}

/// A change a routing daemon must hear of (NFD's readvertisement to NLSR: routes of origin
/// client, and the daemon's own `/localhost/nlsr` registration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Readvertise {
    /// A client route was added or its cost changed.
    Register {
        /// The prefix.
        name: NameBuf,
        /// Its face.
        face: FaceId,
        /// Its cost.
        cost: u64,
    },
    /// A client route went.
    Unregister {
        /// The prefix.
        name: NameBuf,
        /// Its face.
        face: FaceId,
    },
    /// A route to `/localhost/nlsr` appeared: a daemon is listening.
    DaemonUp,
}

/// The RIB.
#[derive(Debug, Default)]
pub(crate) struct Rib {
    /// Readvertisement events since the owner last took them ([`Rib::take_readvertise`]).
    readvertise: Vec<Readvertise>,
    entries: BTreeMap<Vec<u8>, RibEntry>,
    strategies: BTreeMap<Vec<u8>, (NameBuf, StrategyKind)>,
    installed: BTreeMap<Vec<u8>, Installed>,
    by_face: HashMap<FaceId, HashSet<Vec<u8>>>,
    /// Routes that expire, by (expiry, prefix, face, origin): the next to go is the first.
    expiring: BTreeSet<(u64, Vec<u8>, FaceId, u64)>,
}

/// `/localhost/nlsr` as name bytes: where a routing daemon listens for readvertised routes.
const NLSR_PREFIX: &[u8] = b"\x08\x09localhost\x08\x04nlsr";

fn key(name: &Name<'_>) -> Vec<u8> {
    name.as_bytes().to_vec()
}

impl Rib {
    /// An empty RIB.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds (or updates) the route of `origin` through `route.face` for `prefix`, and
    /// updates the FIB (not published).
    pub(crate) fn add(
        &mut self,
        fib: &mut Fib,
        prefix: &Name<'_>,
        route: Route,
    ) -> Result<(), RibError> {
        let k = key(prefix);
        let e = self.entries.entry(k.clone()).or_insert_with(|| RibEntry {
            name: prefix.to_buf(),
            routes: Vec::new(),
        });
        match e
            .routes
            .iter_mut()
            .find(|r| r.face == route.face && r.origin == route.origin)
        {
            Some(r) => {
                if let Some(t) = r.expires {
                    self.expiring.remove(&(t, k.clone(), r.face, r.origin));
                }
                *r = route;
            }
            None => e.routes.push(route),
        }
        if let Some(t) = route.expires {
            self.expiring
                .insert((t, k.clone(), route.face, route.origin));
        }
        self.by_face
            .entry(route.face)
            .or_default()
            .insert(k.clone());
        if route.origin == origin::CLIENT {
            self.readvertise.push(Readvertise::Register {
                name: prefix.to_buf(),
                face: route.face,
                cost: route.cost,
            });
        }
        if prefix.as_bytes() == NLSR_PREFIX {
            self.readvertise.push(Readvertise::DaemonUp);
        }
        self.sync(fib, &k)
    }

    /// The readvertisement events since the last call.
    pub(crate) fn take_readvertise(&mut self) -> Vec<Readvertise> {
        std::mem::take(&mut self.readvertise)
    }

    /// Every client route, as registrations (a daemon that just came up hears of them all).
    pub(crate) fn client_routes(&self) -> Vec<Readvertise> {
        self.entries
            .values()
            .flat_map(|e| {
                e.routes
                    .iter()
                    .filter(|r| r.origin == origin::CLIENT)
                    .map(|r| Readvertise::Register {
                        name: e.name.clone(),
                        face: r.face,
                        cost: r.cost,
                    })
            })
            .collect()
    }

    /// Takes the routes of `e` (key `k`) that `gone` selects out of the expiry index, and
    /// notes the client routes among them for the routing daemon.
    fn withdrawn(
        log: &mut Vec<Readvertise>,
        expiring: &mut BTreeSet<(u64, Vec<u8>, FaceId, u64)>,
        k: &[u8],
        e: &RibEntry,
        gone: impl Fn(&Route) -> bool,
    ) {
        for r in e.routes.iter().filter(|r| gone(r)) {
            if let Some(t) = r.expires {
                expiring.remove(&(t, k.to_vec(), r.face, r.origin));
            }
            if r.origin == origin::CLIENT {
                log.push(Readvertise::Unregister {
                    name: e.name.clone(),
                    face: r.face,
                });
            }
        }
    }

    /// Removes the routes for `prefix` through `face` (all faces when `None`) of `origin`
    /// (all origins when `None`); updates the FIB. `Err(NoRoute)` when nothing matched.
    pub(crate) fn remove(
        &mut self,
        fib: &mut Fib,
        prefix: &Name<'_>,
        face: Option<FaceId>,
        origin: Option<u64>,
    ) -> Result<(), RibError> {
        let k = key(prefix);
        let Some(e) = self.entries.get_mut(&k) else {
            return Err(RibError::NoRoute);
        };
        let before = e.routes.len();
        let gone =
            |r: &Route| face.is_none_or(|f| r.face == f) && origin.is_none_or(|o| r.origin == o);
        Self::withdrawn(&mut self.readvertise, &mut self.expiring, &k, e, gone);
        e.routes.retain(|r| !gone(r));
        if e.routes.len() == before {
            return Err(RibError::NoRoute);
        }
        let faces: HashSet<FaceId> = e.routes.iter().map(|r| r.face).collect();
        if e.routes.is_empty() {
            self.entries.remove(&k);
        }
        for (f, set) in self.by_face.iter_mut() {
            if !faces.contains(f) {
                set.remove(&k);
            }
        }
        self.by_face.retain(|_, s| !s.is_empty());
        self.sync(fib, &k)
    }

    /// Removes every route through `face` (a face that went away); updates the FIB.
    pub(crate) fn remove_face(&mut self, fib: &mut Fib, face: FaceId) -> Result<(), RibError> {
        let Some(keys) = self.by_face.remove(&face) else {
            return Ok(());
        };
        let mut keys: Vec<Vec<u8>> = keys.into_iter().collect();
        keys.sort();
        for k in &keys {
            if let Some(e) = self.entries.get_mut(k) {
                Self::withdrawn(&mut self.readvertise, &mut self.expiring, k, e, |r| {
                    r.face == face
                });
                e.routes.retain(|r| r.face != face);
                if e.routes.is_empty() {
                    self.entries.remove(k);
                }
            }
        }
        let mut last: Option<&Vec<u8>> = None;
        for k in &keys {
            // A key under one already recomputed was recomputed with it.
            if last.is_some_and(|l| k.starts_with(l)) {
                continue;
            }
            self.sync(fib, k)?;
            last = Some(k);
        }
        Ok(())
    }

    /// Removes the routes whose expiry is at or before `now`; updates the FIB. Returns how
    /// many expired.
    pub(crate) fn expire(&mut self, fib: &mut Fib, now: u64) -> Result<usize, RibError> {
        let mut n = 0;
        while let Some((t, k, face, origin)) = self.expiring.first().cloned()
            && t <= now
        {
            let name =
                NameBuf::from_component_bytes(&k).map_err(|e| RibError::Fib(e.to_string()))?;
            // Takes the route out of the index too.
            if self
                .remove(fib, &name.as_name(), Some(face), Some(origin))
                .is_err()
            {
                self.expiring.remove(&(t, k, face, origin));
            }
            n += 1;
        }
        Ok(n)
    }

    /// The earliest expiry of any route (O(1): the index's first).
    pub(crate) fn next_expiry(&self) -> Option<u64> {
        self.expiring.first().map(|e| e.0)
    }

    /// Sets the strategy for `prefix` and below; updates the FIB.
    pub(crate) fn set_strategy(
        &mut self,
        fib: &mut Fib,
        prefix: &Name<'_>,
        kind: StrategyKind,
    ) -> Result<(), RibError> {
        let k = key(prefix);
        self.strategies.insert(k.clone(), (prefix.to_buf(), kind));
        self.sync(fib, &k)
    }

    /// Removes the strategy choice at `prefix` (those below it stay); false if there was
    /// none. `/` cannot be unset (it goes back to best-route).
    pub(crate) fn unset_strategy(
        &mut self,
        fib: &mut Fib,
        prefix: &Name<'_>,
    ) -> Result<bool, RibError> {
        let k = key(prefix);
        if self.strategies.remove(&k).is_none() {
            return Ok(false);
        }
        self.sync(fib, &k)?;
        Ok(true)
    }

    /// Every strategy choice, `/` (best-route unless set) first.
    pub(crate) fn strategies(&self) -> Vec<(NameBuf, StrategyKind)> {
        let mut v: Vec<(NameBuf, StrategyKind)> = Vec::new();
        if !self.strategies.contains_key(&Vec::new()) {
            v.push((NameBuf::new(), StrategyKind::BestRoute));
        }
        v.extend(self.strategies.values().cloned());
        v
    }

    /// Every RIB entry, in name order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &RibEntry> {
        self.entries.values()
    }

    /// The entry at exactly `prefix`.
    pub(crate) fn entry(&self, prefix: &Name<'_>) -> Option<&RibEntry> {
        self.entries.get(prefix.as_bytes())
    }

    /// True when there is no route.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The strategy for a name: its longest strategy choice.
    fn strategy_of(&self, k: &[u8]) -> StrategyKind {
        self.strategies
            .range(..=k.to_vec())
            .rev()
            .find(|(sk, _)| k.starts_with(sk))
            .map_or(StrategyKind::BestRoute, |(_, (_, s))| *s)
    }

    /// The next hops NFD's rules give `k`.
    fn nexthops_of(&self, k: &[u8]) -> Vec<NextHop> {
        let mut hops: Vec<NextHop> = Vec::new();
        let add = |hops: &mut Vec<NextHop>, r: &Route| {
            let cost = r.cost.min(u64::from(u32::MAX)) as u32;
            match hops.iter_mut().find(|h| h.face == r.face) {
                Some(h) => h.cost = h.cost.min(cost),
                None => hops.push(NextHop { face: r.face, cost }),
            }
        };
        let own = self.entries.get(k);
        if let Some(e) = own {
            for r in &e.routes {
                add(&mut hops, r);
            }
        }
        if own.is_some_and(RibEntry::captures) {
            return hops;
        }
        // Ancestors, nearest first.
        let mut inherited: Vec<NextHop> = Vec::new();
        for a in ancestors(k) {
            let Some(e) = self.entries.get(a) else {
                continue;
            };
            for r in e.routes.iter().filter(|r| r.flags & CHILD_INHERIT != 0) {
                if !hops.iter().any(|h| h.face == r.face)
                    && !inherited.iter().any(|h| h.face == r.face)
                {
                    add(&mut inherited, r);
                }
            }
            if e.captures() {
                break;
            }
        }
        hops.extend(inherited);
        hops
    }

    /// What the FIB should hold at `k` (`None`: no entry).
    fn desired(&self, k: &[u8]) -> Option<Installed> {
        let routed = self.entries.contains_key(k);
        let nexthops = if routed {
            self.nexthops_of(k)
        } else if self.strategies.contains_key(k) {
            // A strategy choice without a route: its longest routed ancestor's next hops.
            ancestors(k)
                .find(|a| self.entries.contains_key(*a))
                .map(|a| self.nexthops_of(a))
                .unwrap_or_default()
        } else {
            return None;
        };
        if nexthops.is_empty() {
            return None;
        }
        // A FIB entry holds at most MAX_NEXTHOPS: the cheapest (own routes first on a tie).
        let mut nexthops = nexthops;
        nexthops.sort_by_key(|h| h.cost);
        nexthops.truncate(ndx_core::MAX_NEXTHOPS);
        Some(Installed {
            nexthops,
            strategy: self.strategy_of(k),
        })
    }

    /// Recomputes `k` and everything under it and applies the differences to the FIB.
    fn sync(&mut self, fib: &mut Fib, k: &[u8]) -> Result<(), RibError> {
        // `k`, everything under it that has routes or a strategy choice, and what the RIB
        // installed there before (which may no longer be wanted).
        let mut keys: Vec<Vec<u8>> = under(&self.entries, k);
        keys.extend(under(&self.strategies, k));
        keys.extend(under(&self.installed, k));
        keys.sort();
        keys.dedup();
        for x in keys {
            let want = self.desired(&x);
            let have = self.installed.get(&x);
            if want.as_ref() == have {
                continue;
            }
            let name =
                NameBuf::from_component_bytes(&x).map_err(|e| RibError::Fib(e.to_string()))?;
            let name = name.as_name();
            match want {
                None => {
                    fib.remove_route(&name);
                    self.installed.remove(&x);
                }
                Some(w) => {
                    if let Some(h) = have {
                        for old in &h.nexthops {
                            if !w.nexthops.iter().any(|n| n.face == old.face) {
                                fib.remove_nexthop(&name, old.face);
                            }
                        }
                    }
                    for n in &w.nexthops {
                        fib.add_nexthop(&name, *n)
                            .map_err(|e| RibError::Fib(e.to_string()))?;
                    }
                    fib.set_strategy(&name, w.strategy.id());
                    self.installed.insert(x, w);
                }
            }
        }
        Ok(())
    }
}

/// The keys of `map` that are `k` or names under it. Components are self-delimiting TLVs, so
/// a key that starts with `k`'s bytes has `k` as a prefix of whole components.
fn under<V>(map: &BTreeMap<Vec<u8>, V>, k: &[u8]) -> Vec<Vec<u8>> {
    map.range(k.to_vec()..)
        .map(|(x, _)| x)
        .take_while(|x| x.starts_with(k))
        .cloned()
        .collect()
}

/// The proper ancestors of the name whose TLV-VALUE is `k`, nearest first (ending with `/`).
fn ancestors(k: &[u8]) -> impl Iterator<Item = &[u8]> {
    let name = Name::from_value(k).ok();
    let n = name.map_or(0, |n| n.len());
    (0..n)
        .rev()
        .filter_map(move |i| name.map(|name| name.prefix(i).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndx_core::HashKey;

    fn n(s: &str) -> NameBuf {
        NameBuf::from_uri(s).unwrap()
    }

    fn route(face: u32, origin: u64, cost: u64, flags: u64) -> Route {
        Route {
            face: FaceId(face),
            origin,
            cost,
            flags,
            expires: None,
        }
    }

    fn fib() -> Fib {
        Fib::new(HashKey::new(1, 2), 2).0
    }

    /// A FIB route as (prefix, [(face, cost)], strategy).
    type Row = (String, Vec<(u32, u32)>, &'static str);

    /// Every FIB route, sorted.
    fn dump(f: &Fib) -> Vec<Row> {
        let mut v: Vec<_> = f
            .routes()
            .into_iter()
            .map(|r| {
                let mut h: Vec<(u32, u32)> =
                    r.nexthops.iter().map(|h| (h.face.0, h.cost)).collect();
                h.sort();
                (
                    r.prefix.to_string(),
                    h,
                    StrategyKind::from_id(r.strategy).name(),
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn origins_merge_per_face_at_the_lowest_cost() {
        let mut f = fib();
        let mut rib = Rib::new();
        rib.add(&mut f, &n("/a").as_name(), route(1, origin::STATIC, 10, 0))
            .unwrap();
        rib.add(&mut f, &n("/a").as_name(), route(1, origin::APP, 3, 0))
            .unwrap();
        rib.add(&mut f, &n("/a").as_name(), route(2, origin::NLSR, 7, 0))
            .unwrap();
        assert_eq!(
            dump(&f),
            vec![("/a".into(), vec![(1, 3), (2, 7)], "best-route")]
        );
        // The app's route goes: the static one's cost is back.
        rib.remove(
            &mut f,
            &n("/a").as_name(),
            Some(FaceId(1)),
            Some(origin::APP),
        )
        .unwrap();
        assert_eq!(
            dump(&f),
            vec![("/a".into(), vec![(1, 10), (2, 7)], "best-route")]
        );
        assert_eq!(
            rib.remove(
                &mut f,
                &n("/a").as_name(),
                Some(FaceId(1)),
                Some(origin::APP)
            ),
            Err(RibError::NoRoute)
        );
        rib.remove(&mut f, &n("/a").as_name(), None, None).unwrap();
        assert!(dump(&f).is_empty());
        assert!(rib.is_empty());
    }

    #[test]
    fn child_inherit_and_capture_follow_nfd() {
        let mut f = fib();
        let mut rib = Rib::new();
        rib.add(
            &mut f,
            &n("/").as_name(),
            route(9, origin::STATIC, 50, CHILD_INHERIT),
        )
        .unwrap();
        rib.add(
            &mut f,
            &n("/a").as_name(),
            route(1, origin::APP, 0, CHILD_INHERIT),
        )
        .unwrap();
        rib.add(&mut f, &n("/a/b").as_name(), route(2, origin::APP, 0, 0))
            .unwrap();
        rib.add(&mut f, &n("/x").as_name(), route(3, origin::APP, 0, 0))
            .unwrap();
        assert_eq!(
            dump(&f),
            vec![
                ("/".into(), vec![(9, 50)], "best-route"),
                ("/a".into(), vec![(1, 0), (9, 50)], "best-route"),
                ("/a/b".into(), vec![(1, 0), (2, 0), (9, 50)], "best-route"),
                ("/x".into(), vec![(3, 0), (9, 50)], "best-route"),
            ]
        );
        // CAPTURE on /a: nothing above /a reaches /a or /a/b; /a's own inheritable route
        // still reaches /a/b.
        rib.add(
            &mut f,
            &n("/a").as_name(),
            route(1, origin::APP, 0, CHILD_INHERIT | CAPTURE),
        )
        .unwrap();
        let d = dump(&f);
        assert_eq!(d[1], ("/a".into(), vec![(1, 0)], "best-route"));
        assert_eq!(d[2], ("/a/b".into(), vec![(1, 0), (2, 0)], "best-route"));
        // The face of /a goes away: /a's entry goes, /a/b inherits from / again.
        rib.remove_face(&mut f, FaceId(1)).unwrap();
        assert_eq!(
            dump(&f),
            vec![
                ("/".into(), vec![(9, 50)], "best-route"),
                ("/a/b".into(), vec![(2, 0), (9, 50)], "best-route"),
                ("/x".into(), vec![(3, 0), (9, 50)], "best-route"),
            ]
        );
        // A component boundary matters: /ab is not under /a.
        rib.add(
            &mut f,
            &n("/a").as_name(),
            route(4, origin::APP, 0, CHILD_INHERIT),
        )
        .unwrap();
        rib.add(&mut f, &n("/ab").as_name(), route(5, origin::APP, 0, 0))
            .unwrap();
        assert!(dump(&f).contains(&("/ab".into(), vec![(5, 0), (9, 50)], "best-route")));
    }

    #[test]
    fn strategy_choices_apply_below_and_without_routes() {
        let mut f = fib();
        let mut rib = Rib::new();
        rib.add(&mut f, &n("/a").as_name(), route(1, origin::STATIC, 1, 0))
            .unwrap();
        rib.add(
            &mut f,
            &n("/a/b/c").as_name(),
            route(2, origin::STATIC, 1, 0),
        )
        .unwrap();
        rib.set_strategy(&mut f, &n("/a/b").as_name(), StrategyKind::Multicast)
            .unwrap();
        assert_eq!(
            dump(&f),
            vec![
                ("/a".into(), vec![(1, 1)], "best-route"),
                // No route of its own: /a's next hops, under the chosen strategy.
                ("/a/b".into(), vec![(1, 1)], "multicast"),
                ("/a/b/c".into(), vec![(2, 1)], "multicast"),
            ]
        );
        assert_eq!(rib.strategies().len(), 2, "/ and /a/b");
        assert!(rib.unset_strategy(&mut f, &n("/a/b").as_name()).unwrap());
        assert!(!rib.unset_strategy(&mut f, &n("/a/b").as_name()).unwrap());
        assert_eq!(
            dump(&f),
            vec![
                ("/a".into(), vec![(1, 1)], "best-route"),
                ("/a/b/c".into(), vec![(2, 1)], "best-route"),
            ]
        );
    }

    #[test]
    fn a_fib_entry_keeps_the_cheapest_next_hops() {
        let mut f = fib();
        let mut rib = Rib::new();
        for face in 1..=6 {
            let r = route(face, origin::STATIC, 100 + u64::from(face), CHILD_INHERIT);
            rib.add(&mut f, &n("/").as_name(), r).unwrap();
        }
        for face in 11..=14 {
            rib.add(
                &mut f,
                &n("/a").as_name(),
                route(face, origin::APP, u64::from(face), 0),
            )
            .unwrap();
        }
        let d = dump(&f);
        let a = d.iter().find(|(p, _, _)| p == "/a").unwrap();
        assert_eq!(a.1.len(), ndx_core::MAX_NEXTHOPS);
        assert!(a.1.contains(&(11, 11)) && a.1.contains(&(14, 14)));
        assert!(
            !a.1.iter().any(|&(face, _)| face == 5 || face == 6),
            "{a:?}"
        );
    }

    #[test]
    fn client_routes_are_readvertised_and_withdrawn() {
        let mut f = fib();
        let mut rib = Rib::new();
        rib.add(
            &mut f,
            &n("/net/a").as_name(),
            route(5, origin::CLIENT, 3, 1),
        )
        .unwrap();
        rib.add(&mut f, &n("/net/b").as_name(), route(5, origin::APP, 0, 1))
            .unwrap();
        rib.add(
            &mut f,
            &n("/localhost/nlsr").as_name(),
            route(6, origin::NLSR, 0, 0),
        )
        .unwrap();
        assert_eq!(
            rib.take_readvertise(),
            vec![
                Readvertise::Register {
                    name: n("/net/a"),
                    face: FaceId(5),
                    cost: 3
                },
                Readvertise::DaemonUp
            ]
        );
        assert_eq!(rib.client_routes().len(), 1);
        rib.remove_face(&mut f, FaceId(5)).unwrap();
        assert_eq!(
            rib.take_readvertise(),
            vec![Readvertise::Unregister {
                name: n("/net/a"),
                face: FaceId(5)
            }]
        );
        assert!(rib.client_routes().is_empty());
    }

    #[test]
    fn routes_expire() {
        let mut f = fib();
        let mut rib = Rib::new();
        let mut r = route(1, origin::APP, 0, 0);
        r.expires = Some(1_000);
        rib.add(&mut f, &n("/t").as_name(), r).unwrap();
        rib.add(&mut f, &n("/u").as_name(), route(2, origin::APP, 0, 0))
            .unwrap();
        assert_eq!(rib.next_expiry(), Some(1_000));
        assert_eq!(rib.expire(&mut f, 999).unwrap(), 0);
        assert_eq!(rib.expire(&mut f, 1_000).unwrap(), 1);
        assert_eq!(dump(&f), vec![("/u".into(), vec![(2, 0)], "best-route")]);
        assert_eq!(rib.next_expiry(), None);
        // A registration renewed without an expiry stays; one that goes leaves the index.
        rib.add(&mut f, &n("/t").as_name(), r).unwrap();
        rib.add(&mut f, &n("/t").as_name(), route(1, origin::APP, 0, 0))
            .unwrap();
        assert_eq!(rib.next_expiry(), None);
        assert_eq!(rib.expire(&mut f, 5_000).unwrap(), 0);
        rib.add(&mut f, &n("/v").as_name(), r).unwrap();
        rib.remove_face(&mut f, FaceId(1)).unwrap();
        assert_eq!(rib.next_expiry(), None);
    }

    #[test]
    fn ancestors_walk_components() {
        let k = n("/a/bb/c").as_name().as_bytes().to_vec();
        let a: Vec<String> = ancestors(&k)
            .map(|x| NameBuf::from_component_bytes(x).unwrap().to_string())
            .collect();
        assert_eq!(a, vec!["/a/bb", "/a", "/"]);
    }
}
