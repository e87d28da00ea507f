//! NFD Management on the management face: control commands (`rib`, `faces`,
//! `strategy-choice`) and status datasets (`faces/list`, `fib/list`, `rib/list`,
//! `strategy-choice/list`, `status/general`, `cs/info`), answered with NFD's status codes.
//!
//! Requests reach the management face through the shards like any Interest (its FIB routes
//! are `/localhost/nfd`, and `/localhop/nfd` when `[app] localhop` is on); the shards drop
//! `/localhost` Interests from non-local faces, and add the IncomingFaceId the face's local
//! fields ask for, which is the face a `rib/register` without FaceId registers.
//!
//! Signatures: like ndnd, commands are accepted without checking who signed them (a local
//! app is trusted by the socket's permissions); with `[app] command_key`, a command must carry
//! an HMAC-SHA256 signature (SignatureType 4) under that key, and a remote face's
//! `/localhop` command is refused (403) without one whatever the setting.

use std::collections::HashMap;
use std::time::{Instant, SystemTime};

use ndx_codec::{Interest, NameBuf, Packet};
use ndx_core::{FaceId, StrategyKind};
use ndx_nfd::{
    ControlParameters, ControlResponse, CsInfo, FaceStatus, FibEntry, ForwarderStatus, RibEntry,
    Scope, StrategyChoice, face_persistency, face_scope, link_type, status,
};

use crate::app::{FaceCounters, tokened};
use crate::config::AppConfig;
use crate::faces::{Link, Origin};
use crate::plane::Plane;
use crate::rib::{CHILD_INHERIT, Route, origin};

/// What the host thread tells management about itself.
#[derive(Debug, Default)]
pub(crate) struct HostView {
    /// Per app face counters.
    pub faces: Vec<(FaceId, FaceCounters)>,
}

/// A dataset kept for the Interests that fetch its later segments.
#[derive(Debug)]
struct Published {
    version: u64,
    segments: Vec<Vec<u8>>,
    at: Instant,
}

/// Face event notifications kept for subscribers that ask for them by number.
const NOTIFICATIONS_KEPT: usize = 256;
/// How long the latest notification answers a new subscriber (its FreshnessPeriod).
const NOTIFICATION_FRESH: std::time::Duration = std::time::Duration::from_secs(1);
/// Most `faces/events` Interests waiting at once.
const MAX_SUBSCRIBERS: usize = 1024;

/// A `faces/events` Interest waiting for its notification.
#[derive(Debug)]
struct Subscriber {
    /// The sequence number it names (`None`: the next one).
    want: Option<u64>,
    /// The PitToken to echo.
    token: Option<Vec<u8>>,
    /// The shard whose PIT holds it.
    shard: u8,
    /// When its Interest expires.
    until: Instant,
}

/// A status dataset ndx publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Dataset {
    FacesList,
    FacesQuery,
    FibList,
    RibList,
    StrategyChoiceList,
    StatusGeneral,
    CsInfo,
}

/// A control command ndx carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    RibRegister,
    RibUnregister,
    FacesCreate,
    FacesDestroy,
    FacesUpdate,
    StrategySet,
    StrategyUnset,
}

/// What a management request asks for, by module and verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Dataset(Dataset),
    Command(Command),
    /// The face event notification stream.
    FaceEvents,
}

impl Op {
    /// The operation `module`/`verb` names, if ndx has it.
    fn of(module: &str, verb: &str) -> Option<Op> {
        use {Command as C, Dataset as D};
        Some(match (module, verb) {
            ("faces", "list") => Op::Dataset(D::FacesList),
            ("faces", "query") => Op::Dataset(D::FacesQuery),
            ("fib", "list") => Op::Dataset(D::FibList),
            ("rib", "list") => Op::Dataset(D::RibList),
            ("strategy-choice", "list") => Op::Dataset(D::StrategyChoiceList),
            ("status", "general") => Op::Dataset(D::StatusGeneral),
            ("cs", "info") => Op::Dataset(D::CsInfo),
            ("rib", "register") => Op::Command(C::RibRegister),
            ("rib", "unregister") => Op::Command(C::RibUnregister),
            ("faces", "create") => Op::Command(C::FacesCreate),
            ("faces", "destroy") => Op::Command(C::FacesDestroy),
            ("faces", "update") => Op::Command(C::FacesUpdate),
            ("strategy-choice", "set") => Op::Command(C::StrategySet),
            ("strategy-choice", "unset") => Op::Command(C::StrategyUnset),
            ("faces", "events") => Op::FaceEvents,
            _ => return None,
        })
    }
}

/// The management handler.
#[derive(Debug)]
pub(crate) struct Mgmt {
    /// Recent face event notifications: (sequence number, Data, published at).
    notifications: std::collections::VecDeque<(u64, Vec<u8>, Instant)>,
    next_seq: u64,
    subscribers: Vec<Subscriber>,
    started: SystemTime,
    /// The app socket, the local end of every app face.
    socket: String,
    key: Option<Vec<u8>>,
    datasets: HashMap<Dataset, Vec<Published>>,
    refused: u64,
}

/// Strategy names as NFD spells them, with the version ndx's implementation answers to.
const STRATEGIES: &[(&str, StrategyKind, u64)] = &[
    ("best-route", StrategyKind::BestRoute, 5),
    ("multicast", StrategyKind::Multicast, 4),
    ("adaptive", StrategyKind::Adaptive, 1),
];

fn strategy_name(kind: StrategyKind) -> NameBuf {
    let (n, _, v) = STRATEGIES
        .iter()
        .find(|(_, k, _)| *k == kind)
        .copied()
        .unwrap_or(STRATEGIES[0]);
    let mut name = NameBuf::from_uri("/localhost/nfd/strategy").unwrap_or_default();
    name.push_generic(n.as_bytes());
    name.push_version(v);
    name
}

/// The strategy a `/localhost/nfd/strategy/<name>[/v=N]` names (any version of a strategy
/// ndx has; NFD's `asf` maps to the adaptive strategy, the closest ndx has).
fn strategy_of(name: &NameBuf) -> Option<StrategyKind> {
    let n = name.as_name();
    let prefix = NameBuf::from_uri("/localhost/nfd/strategy").ok()?;
    if !prefix.as_name().is_prefix_of(&n) || n.len() < 4 {
        return None;
    }
    let c = n.get(3)?;
    let s = std::str::from_utf8(c.value()).ok()?;
    let s = if s == "asf" { "adaptive" } else { s };
    STRATEGIES
        .iter()
        .find(|(x, _, _)| *x == s)
        .map(|(_, k, _)| *k)
}

impl Mgmt {
    /// A handler for a router started at `started`.
    pub(crate) fn new(cfg: &AppConfig, started: SystemTime) -> Self {
        Self {
            notifications: std::collections::VecDeque::new(),
            next_seq: 1,
            subscribers: Vec::new(),
            started,
            socket: cfg
                .socket
                .as_ref()
                .map_or_else(String::new, |p| format!("unix://{}", p.display())),
            key: cfg.command_key.clone(),
            datasets: HashMap::new(),
            refused: 0,
        }
    }

    /// Commands refused (bad parameters, unauthorised, unknown verb).
    pub(crate) fn refused(&self) -> u64 {
        self.refused
    }

    /// Answers one packet the shards sent to the management face: the reply (a Data in an
    /// LpPacket echoing the request's PitToken), or `None` for what gets no answer.
    pub(crate) fn handle(
        &mut self,
        plane: &mut Plane,
        bytes: &[u8],
        host: &HostView,
        shard: u8,
    ) -> Option<Vec<u8>> {
        let Ok(Packet::Lp(lp)) = Packet::decode(bytes) else {
            return None;
        };
        let Ok(Some(Packet::Interest(interest))) = lp.network_packet() else {
            return None;
        };
        if lp.nack().is_some() {
            return None;
        }
        let token = lp.pit_token();
        let from = lp.headers().incoming_face_id.map(|f| FaceId(f as u32));
        let name = interest.name();
        let req = match ndx_nfd::parse_request(&name) {
            Ok(r) => r,
            Err(e) => {
                self.refused += 1;
                let mut resp = ControlResponse::new(status::BAD_PARAMS, e.to_string());
                resp.body = Some(ControlParameters::default());
                let data = ndx_nfd::command_response_data(&name, &resp);
                return Some(tokened(token, &data));
            }
        };
        let data = match Op::of(&req.module, &req.verb) {
            // Datasets and notifications are local: a neighbour gets no answer.
            Some(Op::Dataset(_) | Op::FaceEvents) if req.scope != Scope::Localhost => None,
            Some(Op::FaceEvents) => return self.subscribe(&interest, token, shard),
            Some(Op::Dataset(d)) => self.dataset(plane, d, &req, &interest, host),
            Some(Op::Command(c)) => Some(self.command(plane, &interest, c, &req, from)),
            None => {
                let resp = ControlResponse::new(
                    status::NOT_IMPLEMENTED,
                    format!("unknown command {}/{}", req.module, req.verb),
                );
                Some(self.respond(&name, resp, &req))
            }
        }?;
        Some(tokened(token, &data))
    }

    /// The Data answering a command (error answers counted, and given the request's
    /// parameters as their body: python-ndn's `nfd_mgmt.parse_response` fails on a
    /// ControlResponse without one).
    fn respond(
        &mut self,
        name: &ndx_codec::Name<'_>,
        mut resp: ControlResponse,
        req: &ndx_nfd::Request,
    ) -> Vec<u8> {
        if resp.code != status::OK {
            self.refused += 1;
        }
        if resp.body.is_none() {
            resp.body = Some(req.params.clone().unwrap_or_default());
        }
        ndx_nfd::command_response_data(name, &resp)
    }

    /// `faces/events`: the notification with the sequence number the Interest names, or (no
    /// number: a new subscriber) the latest one if it is fresh, answered now when it exists,
    /// else when it is published (the Interest waits, up to its lifetime).
    fn subscribe(
        &mut self,
        interest: &Interest<'_>,
        token: Option<&[u8]>,
        shard: u8,
    ) -> Option<Vec<u8>> {
        let name = interest.name();
        let want = match name.get(4) {
            None => None,
            Some(c) if u64::from(c.typ()) == ndx_codec::types::SEQUENCE_NUM_NAME_COMPONENT => {
                Some(component_number(&c)?)
            }
            Some(_) => return None,
        };
        let now = Instant::now();
        let ready = match want {
            Some(n) => self.notifications.iter().find(|(seq, _, _)| *seq == n),
            None => self
                .notifications
                .back()
                .filter(|(_, _, at)| now.duration_since(*at) < NOTIFICATION_FRESH),
        };
        if let Some((_, data, _)) = ready {
            return Some(tokened(token, data));
        }
        if want.is_some_and(|n| n < self.next_seq) {
            // Gone from the ring: the subscriber times out and starts over.
            return None;
        }
        if self.subscribers.len() < MAX_SUBSCRIBERS {
            let lifetime = interest.effective_lifetime_ms();
            self.subscribers.push(Subscriber {
                want,
                token: token.map(<[u8]>::to_vec),
                shard,
                until: now + std::time::Duration::from_millis(lifetime),
            });
        }
        None
    }

    /// Publishes a face event (created or destroyed): returns the notification Data for each
    /// waiting subscriber, with the shard to hand it to.
    pub(crate) fn face_event(
        &mut self,
        plane: &Plane,
        kind: u64,
        face: &crate::faces::Face,
    ) -> Vec<(u8, Vec<u8>)> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let status = face_status(plane, &self.socket, face, FaceCounters::default());
        let mut content = Vec::new();
        ndx_nfd::FaceEventNotification::new(kind, &status).encode_into(&mut content);
        let mut name = NameBuf::from_uri("/localhost/nfd/faces/events").unwrap_or_default();
        let _ = name.push_number(ndx_codec::types::SEQUENCE_NUM_NAME_COMPONENT as u16, seq);
        let mut d = ndx_codec::DataRepr::new(name, content);
        d.freshness_ms = Some(NOTIFICATION_FRESH.as_millis() as u64);
        let Ok(data) = d.to_vec() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        self.subscribers.retain(|s| {
            if s.want.is_none_or(|n| n == seq) {
                out.push((s.shard, tokened(s.token.as_deref(), &data)));
                false
            } else {
                true
            }
        });
        if self.notifications.len() >= NOTIFICATIONS_KEPT {
            self.notifications.pop_front();
        }
        self.notifications.push_back((seq, data, Instant::now()));
        out
    }

    /// Forgets subscribers whose Interest expired.
    pub(crate) fn expire_subscribers(&mut self) {
        let now = Instant::now();
        self.subscribers.retain(|s| s.until > now);
    }

    /// Carries out a command: the Data of its ControlResponse.
    fn command(
        &mut self,
        plane: &mut Plane,
        interest: &Interest<'_>,
        cmd: Command,
        req: &ndx_nfd::Request,
        from: Option<FaceId>,
    ) -> Vec<u8> {
        let resp = self.execute(plane, interest, cmd, req, from);
        self.respond(&interest.name(), resp, req)
    }

    fn execute(
        &mut self,
        plane: &mut Plane,
        interest: &Interest<'_>,
        cmd: Command,
        req: &ndx_nfd::Request,
        from: Option<FaceId>,
    ) -> ControlResponse {
        let remote = from
            .and_then(|f| plane.faces.table().get(f).map(|x| !x.info.local))
            .unwrap_or(true);
        if req.scope == Scope::Localhop
            && !matches!(cmd, Command::RibRegister | Command::RibUnregister)
        {
            return ControlResponse::new(status::UNAUTHORIZED, "only rib commands on /localhop");
        }
        if let Some(key) = &self.key
            && !hmac_ok(interest, key)
        {
            return ControlResponse::new(
                status::UNAUTHORIZED,
                "commands must be signed with the router's command key (HMAC-SHA256)",
            );
        }
        if remote && req.scope != Scope::Localhop {
            // The shards never let a remote /localhost Interest through; kept as a guard.
            return ControlResponse::new(status::UNAUTHORIZED, "/localhost from a remote face");
        }
        let Some(p) = req.params.clone() else {
            return ControlResponse::new(status::BAD_PARAMS, "ControlParameters missing");
        };
        match cmd {
            Command::RibRegister => self.register(plane, p, from),
            Command::RibUnregister => unregister(plane, p, from),
            Command::FacesCreate => create_face(plane, p),
            Command::FacesDestroy => destroy_face(plane, p),
            Command::FacesUpdate => update_face(plane, p, from),
            Command::StrategySet => set_strategy(plane, p),
            Command::StrategyUnset => unset_strategy(plane, p),
        }
    }

    fn register(
        &mut self,
        plane: &mut Plane,
        p: ControlParameters,
        from: Option<FaceId>,
    ) -> ControlResponse {
        let Some(name) = p.name.clone() else {
            return ControlResponse::new(status::BAD_PARAMS, "Name is required");
        };
        let Some(face) = route_face(&p, from) else {
            return ControlResponse::new(status::BAD_PARAMS, "FaceId is required");
        };
        if plane.faces.table().get(face).is_none() {
            return ControlResponse::new(status::FACE_NOT_FOUND, format!("no face {}", face.0));
        }
        let origin = p.origin.unwrap_or(origin::APP);
        let cost = p.cost.unwrap_or(0);
        let flags = p.flags.unwrap_or(CHILD_INHERIT);
        let expires = p
            .expiration_period
            .map(|ms| plane.now_ms().saturating_add(ms));
        let route = Route {
            face,
            origin,
            cost,
            flags,
            expires,
        };
        if let Err(e) = plane.register(&name, route) {
            return ControlResponse::new(status::INTERNAL_ERROR, e.to_string());
        }
        ControlResponse::ok(ControlParameters {
            name: Some(name),
            face_id: Some(u64::from(face.0)),
            origin: Some(origin),
            cost: Some(cost),
            flags: Some(flags),
            expiration_period: p.expiration_period,
            ..ControlParameters::default()
        })
    }

    fn dataset(
        &mut self,
        plane: &mut Plane,
        key: Dataset,
        req: &ndx_nfd::Request,
        interest: &Interest<'_>,
        host: &HostView,
    ) -> Option<Vec<u8>> {
        let name = interest.name();
        // faces/query's filter, or pynfdc's signed dataset request (a ParametersSha256Digest
        // after the verb): answered with the whole dataset in one Data named as the request,
        // which is all pynfdc reads.
        let whole_in_one = name
            .get(4)
            .is_some_and(|c| matches!(c.kind(), ndx_codec::ComponentKind::ParamsDigest(_)))
            || name
                .get(5)
                .is_some_and(|c| matches!(c.kind(), ndx_codec::ComponentKind::ParamsDigest(_)));
        let query = req.filter.is_some() && !whole_in_one;
        // A later segment of a version we published: from the kept copy.
        if name.len() > 4 && !whole_in_one && !query {
            let v = name.get(4)?;
            let seg = name.get(5);
            let kept = self.datasets.get(&key)?;
            let want_v = component_number(&v)?;
            let p = kept.iter().find(|p| p.version == want_v)?;
            let s = match seg {
                Some(c) => component_number(&c)? as usize,
                None => 0,
            };
            return p.segments.get(s).cloned();
        }
        let mut content = Vec::new();
        match key {
            Dataset::FacesList => faces_dataset(plane, host, &self.socket, None, &mut content),
            Dataset::FacesQuery => {
                faces_dataset(plane, host, &self.socket, req.filter.as_ref(), &mut content)
            }
            Dataset::FibList => {
                for r in plane.fib_routes() {
                    FibEntry {
                        name: r.prefix.clone(),
                        nexthops: r
                            .nexthops
                            .iter()
                            .map(|n| (u64::from(n.face.0), u64::from(n.cost)))
                            .collect(),
                    }
                    .encode_into(&mut content);
                }
            }
            Dataset::RibList => {
                let now = plane.now_ms();
                for e in plane.rib.entries() {
                    RibEntry {
                        name: e.name.clone(),
                        routes: e
                            .routes
                            .iter()
                            .map(|r| ndx_nfd::Route {
                                face_id: u64::from(r.face.0),
                                origin: r.origin,
                                cost: r.cost,
                                flags: r.flags,
                                expiration_period: r.expires.map(|t| t.saturating_sub(now)),
                            })
                            .collect(),
                    }
                    .encode_into(&mut content);
                }
            }
            Dataset::StrategyChoiceList => {
                for (n, kind) in plane.rib.strategies() {
                    StrategyChoice {
                        name: n,
                        strategy: strategy_name(kind),
                    }
                    .encode_into(&mut content);
                }
            }
            Dataset::StatusGeneral => {
                let (total, _) = plane.counters();
                let g = |k: &str| total.get(k).unwrap_or(0);
                let ms = |t: SystemTime| {
                    t.duration_since(SystemTime::UNIX_EPOCH)
                        .map_or(0, |d| d.as_millis() as u64)
                };
                ForwarderStatus {
                    nfd_version: format!("ndx {}", env!("CARGO_PKG_VERSION")),
                    start_timestamp: ms(self.started),
                    current_timestamp: ms(SystemTime::now()),
                    n_name_tree_entries: 0,
                    n_fib_entries: plane.fib.len() as u64,
                    n_pit_entries: g("pit_entries"),
                    n_measurements_entries: 0,
                    n_cs_entries: g("cs_entries"),
                    n_in_interests: g("interests_in"),
                    n_in_data: g("data_in"),
                    n_in_nacks: g("nacks_in"),
                    n_out_interests: g("interests_out"),
                    n_out_data: g("data_out"),
                    n_out_nacks: g("nacks_out"),
                    n_satisfied_interests: g("data_out"),
                    n_unsatisfied_interests: g("drop_no_route") + g("drop_pit_full"),
                }
                .encode_into(&mut content);
            }
            Dataset::CsInfo => {
                let (total, _) = plane.counters();
                let g = |k: &str| total.get(k).unwrap_or(0);
                CsInfo {
                    capacity: plane.cs_capacity,
                    flags: ndx_nfd::cs_flags::ENABLE_ADMIT | ndx_nfd::cs_flags::ENABLE_SERVE,
                    n_cs_entries: g("cs_entries"),
                    n_hits: g("cs_lookup_hits"),
                    n_misses: g("cs_lookup_misses"),
                }
                .encode_into(&mut content);
            }
        }
        if whole_in_one {
            let mut d = ndx_codec::DataRepr::new(name.to_buf(), content);
            d.freshness_ms = Some(ndx_nfd::MGMT_FRESHNESS_MS);
            return d.to_vec().ok();
        }
        let version = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        // A query's name carries its filter: the dataset is named after the request.
        let base = if query { name } else { name.prefix(4) };
        let segments =
            ndx_nfd::dataset_segments(&base, version, &content, ndx_nfd::DATASET_SEGMENT_SIZE);
        let first = segments.first().cloned();
        let kept = self.datasets.entry(key).or_default();
        kept.retain(|p| p.at.elapsed().as_secs() < 10);
        if kept.len() >= 8 {
            kept.remove(0);
        }
        kept.push(Published {
            version,
            segments,
            at: Instant::now(),
        });
        first
    }
}

/// The number in a version or segment component.
fn component_number(c: &ndx_codec::Component<'_>) -> Option<u64> {
    let v = c.value();
    if v.is_empty() || v.len() > 8 {
        return None;
    }
    Some(v.iter().fold(0u64, |n, b| (n << 8) | u64::from(*b)))
}

fn faces_dataset(
    plane: &Plane,
    host: &HostView,
    socket: &str,
    filter: Option<&ndx_nfd::FaceQueryFilter>,
    out: &mut Vec<u8>,
) {
    for f in plane.faces.table().iter() {
        let c = host
            .faces
            .iter()
            .find(|(id, _)| *id == f.id)
            .map_or_else(FaceCounters::default, |(_, c)| *c);
        let status = face_status(plane, socket, f, c);
        if filter.is_none_or(|q| q.matches(&status)) {
            status.encode_into(out);
        }
    }
}

/// A face as NFD describes it (FaceStatus, also the body of a face event).
fn face_status(plane: &Plane, socket: &str, f: &crate::faces::Face, c: FaceCounters) -> FaceStatus {
    let (uri, local_uri, scope) = match f.link {
        Link::Udp(a) => (
            format!("udp{}://{a}", if a.is_ipv4() { 4 } else { 6 }),
            f.path.and_then(|p| p.src).map_or_else(
                || "udp://".to_string(),
                |s| format!("udp{}://{s}", if s.is_ipv4() { 4 } else { 6 }),
            ),
            face_scope::NON_LOCAL,
        ),
        Link::Ether { .. } | Link::EtherMulticast { .. } => (
            f.link.to_string(),
            format!("dev://{}", iface_name(plane, &f.link)),
            face_scope::NON_LOCAL,
        ),
        Link::App { conn } => (
            format!("fd://{conn}"),
            socket.to_string(),
            face_scope::LOCAL,
        ),
        Link::Internal => (
            "internal://".into(),
            "internal://".into(),
            face_scope::LOCAL,
        ),
    };
    FaceStatus {
        face_id: u64::from(f.id.0),
        uri,
        local_uri,
        face_scope: scope,
        face_persistency: persistency(f),
        link_type: if f.info.multi_access {
            link_type::MULTI_ACCESS
        } else {
            link_type::POINT_TO_POINT
        },
        n_in_interests: c.in_interests,
        n_in_data: c.in_data,
        n_in_nacks: c.in_nacks,
        n_out_interests: c.out_interests,
        n_out_data: c.out_data,
        n_out_nacks: c.out_nacks,
        n_in_bytes: c.in_bytes,
        n_out_bytes: c.out_bytes,
        flags: if f.info.local_fields {
            ndx_nfd::face_flags::LOCAL_FIELDS_ENABLED
        } else {
            0
        },
        ..FaceStatus::default()
    }
}

fn iface_name(plane: &Plane, link: &Link) -> String {
    let ifindex = match *link {
        Link::Ether { ifindex, .. } | Link::EtherMulticast { ifindex } => ifindex,
        _ => 0,
    };
    plane
        .interfaces
        .iter()
        .find(|(i, _)| *i == ifindex)
        .map_or_else(|| ifindex.to_string(), |(_, n)| n.clone())
}

/// The face a rib command names: its FaceId, or (absent or 0) the face it came from.
fn route_face(p: &ControlParameters, from: Option<FaceId>) -> Option<FaceId> {
    p.face_id
        .filter(|&f| f != 0)
        .map(|f| FaceId(f as u32))
        .or(from)
}

fn unregister(plane: &mut Plane, p: ControlParameters, from: Option<FaceId>) -> ControlResponse {
    let Some(name) = p.name.clone() else {
        return ControlResponse::new(status::BAD_PARAMS, "Name is required");
    };
    let Some(face) = route_face(&p, from) else {
        return ControlResponse::new(status::BAD_PARAMS, "FaceId is required");
    };
    let origin = p.origin.unwrap_or(origin::APP);
    // NFD answers 200 whether or not the route existed.
    let _ = plane.unregister(&name, Some(face), Some(origin));
    ControlResponse::ok(ControlParameters {
        name: Some(name),
        face_id: Some(u64::from(face.0)),
        origin: Some(origin),
        ..ControlParameters::default()
    })
}

/// `udp4://IP:PORT`, `udp6://[IP]:PORT` or `udp://HOST:PORT` (numeric addresses only).
fn parse_face_uri(uri: &str) -> Option<std::net::SocketAddr> {
    let rest = uri
        .strip_prefix("udp4://")
        .or_else(|| uri.strip_prefix("udp6://"))
        .or_else(|| uri.strip_prefix("udp://"))?;
    if let Ok(a) = rest.parse() {
        return Some(a);
    }
    // A port-less URI takes NDN's port.
    rest.parse::<std::net::IpAddr>()
        .ok()
        .map(|ip| std::net::SocketAddr::new(ip, 6363))
        .or_else(|| {
            rest.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::Ipv6Addr>()
                .ok()
                .map(|ip| std::net::SocketAddr::new(ip.into(), 6363))
        })
}

fn create_face(plane: &mut Plane, p: ControlParameters) -> ControlResponse {
    let Some(uri) = p.uri.clone() else {
        return ControlResponse::new(status::BAD_PARAMS, "Uri is required");
    };
    let Some(addr) = parse_face_uri(&uri) else {
        return ControlResponse::new(
            status::NOT_ACCEPTABLE,
            format!("{uri}: ndx creates udp4://, udp6:// faces with numeric addresses"),
        );
    };
    let body = |id: FaceId| ControlParameters {
        face_id: Some(u64::from(id.0)),
        uri: Some(format!(
            "udp{}://{addr}",
            if addr.is_ipv4() { 4 } else { 6 }
        )),
        face_persistency: Some(p.face_persistency.unwrap_or(face_persistency::PERSISTENT)),
        flags: Some(0),
        ..ControlParameters::default()
    };
    if let Some(existing) = plane.faces.table().lookup(&Link::Udp(addr)) {
        let mut r = ControlResponse::new(status::CONFLICT, "face exists");
        r.body = Some(body(existing));
        return r;
    }
    match plane.add_face(&addr.to_string(), &format!("udp://{addr}"), None) {
        Ok(id) => ControlResponse::ok(body(id)),
        Err(e) => ControlResponse::new(status::INTERNAL_ERROR, e.to_string()),
    }
}

fn destroy_face(plane: &mut Plane, p: ControlParameters) -> ControlResponse {
    let Some(id) = p.face_id else {
        return ControlResponse::new(status::BAD_PARAMS, "FaceId is required");
    };
    let face = FaceId(id as u32);
    if let Some(f) = plane.faces.table().get(face) {
        if matches!(f.origin, Origin::Internal | Origin::App) {
            return ControlResponse::new(
                status::UNAUTHORIZED,
                "the management face and app faces go with their connection",
            );
        }
        if let Err(e) = plane.remove_face_id(face) {
            return ControlResponse::new(status::INTERNAL_ERROR, e.to_string());
        }
    }
    ControlResponse::ok(ControlParameters {
        face_id: Some(id),
        ..ControlParameters::default()
    })
}

/// `faces/update`: the face's flags under Mask (LocalFieldsEnabled is the one ndx has; on
/// local faces only), its persistency accepted as it is. FaceId absent or 0: the requester.
fn update_face(plane: &mut Plane, p: ControlParameters, from: Option<FaceId>) -> ControlResponse {
    let Some(id) = route_face(&p, from) else {
        return ControlResponse::new(status::BAD_PARAMS, "FaceId is required");
    };
    let Some(face) = plane.faces.table().get(id).cloned() else {
        return ControlResponse::new(status::FACE_NOT_FOUND, format!("no face {}", id.0));
    };
    let local_fields = ndx_nfd::face_flags::LOCAL_FIELDS_ENABLED;
    let mut info = face.info;
    match (p.flags, p.mask) {
        (None, None) => {}
        (Some(flags), Some(mask)) => {
            if mask & local_fields != 0 {
                let on = flags & local_fields != 0;
                if on && !face.info.local {
                    let mut r =
                        ControlResponse::new(status::CONFLICT, "local fields on a non-local face");
                    r.body = Some(p);
                    return r;
                }
                info.local_fields = on;
            }
        }
        _ => {
            let mut r = ControlResponse::new(status::CONFLICT, "Flags and Mask go together");
            r.body = Some(p);
            return r;
        }
    }
    if info != face.info
        && let Err(e) = plane.set_face_info(id, info)
    {
        return ControlResponse::new(status::INTERNAL_ERROR, e.to_string());
    }
    ControlResponse::ok(ControlParameters {
        face_id: Some(u64::from(id.0)),
        face_persistency: Some(persistency(&face)),
        flags: Some(if info.local_fields { local_fields } else { 0 }),
        ..ControlParameters::default()
    })
}

/// NFD's persistency for a face.
fn persistency(f: &crate::faces::Face) -> u64 {
    match f.origin {
        Origin::OnDemand | Origin::App => face_persistency::ON_DEMAND,
        Origin::Command => face_persistency::PERSISTENT,
        Origin::Config | Origin::Internal => face_persistency::PERMANENT,
    }
}

fn set_strategy(plane: &mut Plane, p: ControlParameters) -> ControlResponse {
    let (Some(name), Some(strategy)) = (p.name.clone(), p.strategy.clone()) else {
        return ControlResponse::new(status::BAD_PARAMS, "Name and Strategy are required");
    };
    let Some(kind) = strategy_of(&strategy) else {
        return ControlResponse::new(
            status::NOT_FOUND,
            format!("strategy {strategy} not found (ndx has best-route, multicast, adaptive)"),
        );
    };
    if let Err(e) = plane.set_strategy(&name.to_string(), kind) {
        return ControlResponse::new(status::INTERNAL_ERROR, e.to_string());
    }
    ControlResponse::ok(ControlParameters {
        name: Some(name),
        strategy: Some(strategy_name(kind)),
        ..ControlParameters::default()
    })
}

fn unset_strategy(plane: &mut Plane, p: ControlParameters) -> ControlResponse {
    let Some(name) = p.name.clone() else {
        return ControlResponse::new(status::BAD_PARAMS, "Name is required");
    };
    if name.is_empty() {
        return ControlResponse::new(status::BAD_PARAMS, "the strategy of / cannot be unset");
    }
    if let Err(e) = plane.unset_strategy(&name) {
        return ControlResponse::new(status::INTERNAL_ERROR, e.to_string());
    }
    ControlResponse::ok(ControlParameters {
        name: Some(name),
        ..ControlParameters::default()
    })
}

/// Whether a command Interest carries a valid HMAC-SHA256 signature (SignatureType 4) under
/// `key`: the signature value is HMAC(key, signed portion), the signed portion being the
/// name's components before the ParametersSha256DigestComponent, then ApplicationParameters
/// and InterestSignatureInfo, as the v0.3 packet format defines it.
pub(crate) fn hmac_ok(interest: &Interest<'_>, key: &[u8]) -> bool {
    let (Some(info), Some(value)) = (interest.signature_info(), interest.signature_value()) else {
        return false;
    };
    if signature_type(info) != Some(4) || !interest.params_digest_ok() {
        return false;
    }
    let Some(portion) = signed_portion(interest) else {
        return false;
    };
    let mac = hmac_sha256(key, &portion);
    // Constant-time comparison.
    value.len() == mac.len() && value.iter().zip(mac).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
}

/// The signed portion of a v0.3 signed Interest: every name component but the
/// ParametersSha256DigestComponent, then the wire from ApplicationParameters' TLV-TYPE to the
/// end of InterestSignatureInfo.
fn signed_portion(interest: &Interest<'_>) -> Option<Vec<u8>> {
    let params = interest.app_params()?;
    let info = interest.signature_info()?;
    let wire = interest.wire();
    let base = wire.as_ptr() as usize;
    let params_at = (params.as_ptr() as usize).checked_sub(base)?;
    let header =
        ndx_codec::tlv_len(ndx_codec::types::APPLICATION_PARAMETERS, params.len()) - params.len();
    let info_end = (info.as_ptr() as usize).checked_sub(base)? + info.len();
    let tail = wire.get(params_at.checked_sub(header)?..info_end)?;
    let mut out = Vec::with_capacity(interest.name().as_bytes().len() + tail.len());
    for c in interest.name().components() {
        if !matches!(c.kind(), ndx_codec::ComponentKind::ParamsDigest(_)) {
            out.extend_from_slice(c.wire());
        }
    }
    out.extend_from_slice(tail);
    Some(out)
}

/// The SignatureType in an InterestSignatureInfo's value (its first element).
fn signature_type(info: &[u8]) -> Option<u64> {
    let (t, a) = ndx_codec::read_varnum(info).ok()?;
    if t != 0x1b {
        return None;
    }
    let (l, b) = ndx_codec::read_varnum(info.get(a..)?).ok()?;
    let v = info.get(a + b..a + b + l as usize)?;
    Some(v.iter().fold(0u64, |n, x| (n << 8) | u64::from(*x)))
}

/// HMAC-SHA256 (RFC 2104).
pub(crate) fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    inner.update(msg);
    let ih = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(ih);
    outer.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn strategy_names_map_both_ways() {
        for (_, k, _) in STRATEGIES {
            assert_eq!(strategy_of(&strategy_name(*k)), Some(*k));
        }
        let unversioned = NameBuf::from_uri("/localhost/nfd/strategy/multicast").unwrap();
        assert_eq!(strategy_of(&unversioned), Some(StrategyKind::Multicast));
        let nope = NameBuf::from_uri("/localhost/nfd/strategy/ncc").unwrap();
        assert_eq!(strategy_of(&nope), None);
        assert_eq!(
            parse_face_uri("udp4://10.0.0.1:6363"),
            Some("10.0.0.1:6363".parse().unwrap())
        );
        assert_eq!(
            parse_face_uri("udp6://[fd00::1]:6363"),
            Some("[fd00::1]:6363".parse().unwrap())
        );
        assert_eq!(
            parse_face_uri("udp4://10.0.0.1"),
            Some("10.0.0.1:6363".parse().unwrap())
        );
        assert_eq!(parse_face_uri("tcp4://10.0.0.1:6363"), None);
    }
}
