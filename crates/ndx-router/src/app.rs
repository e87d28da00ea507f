//! The host thread's I/O: local application faces on a Unix stream socket (NFD's
//! `/run/nfd/nfd.sock` by default), kernel UDP sockets on the NDN ports for the IP-fragmented
//! datagrams the XDP program leaves to the kernel, and the router's management face.
//!
//! One app connection is one face ([`Link::App`]), created when the connection is accepted
//! (published before its first packet goes to a shard) and removed with every route through
//! it when the application disconnects. Framing is NDN TLV back to back: bare Interest and
//! Data, or LpPacket; a frame that is not one of those, or longer than [`MAX_PACKET`], closes
//! that connection only. What an app sends is handed to the shard that owns it (the PIT
//! token a Data echoes, else the name's dispatch; a Data that echoes no token goes to the
//! shard that sent the app the Interest it answers), over bounded queues that never block a
//! shard (see [`crate::host`]). What a shard sends to an app waits in that connection's
//! queue, bounded by `[app] queue_bytes`: a slow reader loses its own packets (counted) and
//! stalls nobody.
//!
//! An application in the same process ([`crate::AppFace`], from [`Host::attach_local`]) is
//! an app connection too, with channels instead of a socket: what it sends arrives on one
//! bounded channel shared by every in-process app (it rings the host's doorbell), and what
//! the shards send it goes into a bounded channel of its own ([`LOCAL_DEPTH`] packets; full:
//! dropped and counted in `app_queue_dropped`). Steering, counters and the face's lifecycle
//! are the socket connections'.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

use mio::net::{UdpSocket, UnixListener, UnixStream};
use mio::{Events, Interest as Ready, Poll, Token};
use ndx_codec::{InterestRepr, LpHeaders, NameBuf, Packet, read_varnum, types};
use ndx_core::{Dispatch, FaceId, FaceInfo, token_shard};
use serde_json::{Value, json};

use crate::config::AppConfig;
use crate::faces::{Link, Origin};
use crate::host::{Doorbell, HostLinks, HostPacket, ShardHostLink};
use crate::mgmt::Mgmt;
use crate::plane::Plane;
use crate::rib::Readvertise;
use crate::worker::Event;

/// Largest packet an app may send or receive (NFD's and ndnd's limit is 8800; NDNLPv2 headers
/// and larger local packets fit).
pub(crate) const MAX_PACKET: usize = 65_536;

const WAKER: Token = Token(0);
const LISTENER: Token = Token(1);
/// Kernel UDP sockets: tokens 2..CONN_BASE.
const UDP_BASE: usize = 2;
const CONN_BASE: usize = 64;

/// Most packets of one connection read per event (then the others get their turn).
const READ_BUDGET: usize = 256;
/// How long after a routing daemon registers `/localhost/nlsr` the client routes are replayed
/// to it.
const REPLAY_DELAY: Duration = Duration::from_secs(1);
/// Empty turns the host thread polls without sleeping before it waits in poll(2).
const QUIET_TURNS: u32 = 64;
/// Most Interests a connection remembers for steering the Data that answer them.
const STEER_MAX: usize = 1 << 16;

pub(crate) use crate::stats::HostCounters;

/// Per-face packet counters (NFD's FaceStatus counters) for the faces the host serves.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FaceCounters {
    /// Interests in.
    pub in_interests: u64,
    /// Data in.
    pub in_data: u64,
    /// Nacks in.
    pub in_nacks: u64,
    /// Interests out.
    pub out_interests: u64,
    /// Data out.
    pub out_data: u64,
    /// Nacks out.
    pub out_nacks: u64,
    /// Bytes in.
    pub in_bytes: u64,
    /// Bytes out.
    pub out_bytes: u64,
}

/// How the host reaches an app.
#[derive(Debug)]
enum Io {
    /// A connection to the app socket.
    Unix(UnixStream),
    /// An application in the same process ([`crate::AppFace`]): packets for it go into its
    /// bounded channel (full: dropped and counted, as a full socket queue).
    Local(SyncSender<Vec<u8>>),
}

/// What an in-process application ([`crate::AppFace`]) sends the host thread.
#[derive(Debug)]
pub(crate) enum LocalMsg {
    /// A packet from the app of connection `conn`.
    Packet {
        /// The connection (its face's host-side number).
        conn: usize,
        /// An Interest, Data or LpPacket.
        bytes: Vec<u8>,
    },
    /// The app is gone: its face and routes go.
    Close {
        /// The connection.
        conn: usize,
    },
}

/// Packets waiting from in-process apps to the host thread, and from the host thread to
/// one in-process app.
pub(crate) const LOCAL_DEPTH: usize = 4096;

/// What [`Host::attach_local`] gives an in-process app.
#[derive(Debug)]
pub(crate) struct LocalLink {
    /// Its face.
    pub(crate) face: FaceId,
    /// Its connection number.
    pub(crate) conn: usize,
    /// Packets for it.
    pub(crate) rx: Receiver<Vec<u8>>,
    /// Its packets to the host.
    pub(crate) tx: SyncSender<LocalMsg>,
    /// Wakes the host thread.
    pub(crate) bell: Arc<Doorbell>,
}

/// One app connection.
#[derive(Debug)]
struct Conn {
    io: Io,
    face: FaceId,
    rbuf: Vec<u8>,
    /// Packets waiting to be written, back to back; `out[..out_at]` is written already.
    out: Vec<u8>,
    out_at: usize,
    /// Registered for writability (the socket was full).
    writable: bool,
    /// In the turn's list of connections to flush.
    dirty: bool,
    counters: FaceCounters,
    /// Interest names this app was sent, with the shard that sent each (a Data that does
    /// not echo the shard's PIT token is steered by it).
    steer: HashMap<Vec<u8>, u8>,
}

/// The host thread's I/O state.
#[derive(Debug)]
pub(crate) struct Host {
    poll: Poll,
    events: Events,
    bell: Arc<Doorbell>,
    links: HostLinks,
    listener: Option<(UnixListener, PathBuf)>,
    udp: Vec<UdpSocket>,
    conns: HashMap<usize, Conn>,
    by_face: HashMap<FaceId, usize>,
    next_conn: usize,
    internal: FaceId,
    mgmt: Mgmt,
    dispatch: Dispatch,
    cfg: AppConfig,
    counters: HostCounters,
    /// The NDN UDP ports (the first is the source port of what ndx sends).
    ports: Vec<u16>,
    rbuf: Vec<u8>,
    /// Connections that stopped reading at their budget.
    again: Vec<usize>,
    /// Connections with packets to write this turn.
    dirty: Vec<usize>,
    /// When to tell a routing daemon that just came up of every client route.
    replay_at: Option<std::time::Instant>,
    /// Nonces of the Interests the host sends itself.
    nonce: u64,
    /// Turns in a row that found nothing to do.
    quiet: u32,
    /// The turn's ready sockets (kept: no allocation per turn).
    ready: Vec<(Token, bool, bool)>,
    /// Packets from in-process apps (one sender per app).
    local_tx: SyncSender<LocalMsg>,
    local_rx: Receiver<LocalMsg>,
}

/// Why the host thread could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The app socket could not be bound.
    #[error("app socket {path}: {why}")]
    Socket {
        /// Its path.
        path: String,
        /// Why.
        why: String,
    },
    /// poll(2) or the doorbell could not be set up.
    #[error("host thread: {0}")]
    Poll(std::io::Error),
}

/// Binds the app socket (`control::bind_unix`) and sets its owner, group and mode.
fn bind_app(path: &Path, cfg: &AppConfig) -> Result<UnixListener, HostError> {
    let err = |why: String| HostError::Socket {
        path: path.display().to_string(),
        why,
    };
    let l = crate::control::bind_unix(
        path,
        "another forwarder (NFD, ndnd or ndx) is listening there; stop it, or set [app] \
         socket to another path (\"\" for none)",
    )
    .map_err(|e| err(e.to_string()))?;
    l.set_nonblocking(true).map_err(|e| err(e.to_string()))?;
    let l = UnixListener::from_std(l);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(cfg.mode))
        .map_err(|e| err(format!("mode {:o}: {e}", cfg.mode)))?;
    if cfg.owner.is_some() || cfg.group.is_some() {
        std::os::unix::fs::chown(path, cfg.owner, cfg.group)
            .map_err(|e| err(format!("owner/group: {e}")))?;
    }
    Ok(l)
}

/// Binds one kernel UDP socket for IP-fragmented datagrams: IPv6 sockets are v6-only, so
/// both families can bind the port; large buffers, as a window of 8000-byte segments arrives
/// at once.
fn bind_udp(addr: SocketAddr) -> std::io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    let _ = s.set_recv_buffer_size(4 << 20);
    let _ = s.set_send_buffer_size(4 << 20);
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    Ok(UdpSocket::from_std(s.into()))
}

impl Host {
    /// Sets up the host thread's I/O: binds the app socket (when configured) and the kernel
    /// UDP sockets, adds the management face to `plane` with its `/localhost/nfd` route (and
    /// `/localhop/nfd` when enabled), and makes the shards' links.
    pub(crate) fn new(
        cfg: &AppConfig,
        udp_ports: &[u16],
        plane: &mut Plane,
        dispatch: Dispatch,
        shards: usize,
        started: std::time::SystemTime,
    ) -> Result<(Host, Vec<ShardHostLink>), HostError> {
        let poll = Poll::new().map_err(HostError::Poll)?;
        let bell = Doorbell::new(poll.registry(), WAKER).map_err(HostError::Poll)?;
        let (links, shard_links) = crate::host::links(shards, &bell);
        let listener = match &cfg.socket {
            Some(path) => {
                let mut l = bind_app(path, cfg)?;
                poll.registry()
                    .register(&mut l, LISTENER, Ready::READABLE)
                    .map_err(HostError::Poll)?;
                Some((l, path.clone()))
            }
            None => None,
        };
        let mut udp = Vec::new();
        if cfg.udp_fragments {
            for &port in udp_ports {
                for ip in [
                    std::net::IpAddr::from([0u8, 0, 0, 0]),
                    std::net::IpAddr::from([0u16; 8]),
                ] {
                    let addr = SocketAddr::new(ip, port);
                    match bind_udp(addr) {
                        Ok(mut s) => {
                            let t = Token(UDP_BASE + udp.len());
                            if t.0 < CONN_BASE
                                && poll.registry().register(&mut s, t, Ready::READABLE).is_ok()
                            {
                                udp.push(s);
                            }
                        }
                        Err(e) => tracing::warn!(
                            "kernel UDP socket {addr} for IP-fragmented NDN: {e} \
                             (fragmented datagrams to that port will not be received)"
                        ),
                    }
                }
            }
        }
        // The management face: NFD's internal face, with local fields so commands arrive
        // with the face they came from.
        let internal = plane
            .faces
            .add(
                "management".into(),
                Link::Internal,
                FaceInfo {
                    local: true,
                    local_fields: true,
                    ..FaceInfo::default()
                },
                Origin::Internal,
            )
            .map_err(|e| HostError::Socket {
                path: "internal://".into(),
                why: e.to_string(),
            })?;
        plane.faces.publish();
        let mut prefixes = vec!["/localhost/nfd"];
        if cfg.localhop {
            prefixes.push("/localhop/nfd");
        }
        for p in prefixes {
            let name = ndx_codec::NameBuf::from_uri(p).unwrap_or_default();
            plane
                .fib
                .add_nexthop(
                    &name.as_name(),
                    ndx_core::NextHop {
                        face: internal,
                        cost: 0,
                    },
                )
                .map_err(|e| HostError::Socket {
                    path: p.into(),
                    why: e.to_string(),
                })?;
        }
        plane.fib.publish();
        let (local_tx, local_rx) = sync_channel(LOCAL_DEPTH);
        Ok((
            Host {
                local_tx,
                local_rx,
                poll,
                events: Events::with_capacity(256),
                bell,
                links,
                listener,
                udp,
                conns: HashMap::new(),
                by_face: HashMap::new(),
                next_conn: CONN_BASE,
                internal,
                mgmt: Mgmt::new(cfg, started),
                dispatch,
                cfg: cfg.clone(),
                counters: HostCounters::default(),
                ports: udp_ports.to_vec(),
                rbuf: vec![0; 65_536],
                again: Vec::new(),
                dirty: Vec::new(),
                replay_at: None,
                nonce: started
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
                    | 1,
                quiet: 0,
                ready: Vec::with_capacity(256),
            },
            shard_links,
        ))
    }

    /// The host thread's doorbell (wakes it from `poll(2)`).
    pub(crate) fn bell(&self) -> Arc<Doorbell> {
        self.bell.clone()
    }

    /// The app socket's path, if any.
    pub(crate) fn socket(&self) -> Option<&Path> {
        self.listener.as_ref().map(|(_, p)| p.as_path())
    }

    /// One turn: waits up to `timeout` for app sockets, kernel UDP sockets or packets from
    /// the shards, and serves all of them.
    pub(crate) fn turn(&mut self, plane: &mut Plane, events: &Receiver<Event>, timeout: Duration) {
        // After a busy turn, look again without sleeping for a few turns: under load the next
        // packet is microseconds away, and a sleep costs two context switches and a wake-up.
        let mut first = self.links.from_shards.try_recv().ok();
        let mut first_local = self.local_rx.try_recv().ok();
        let mut wait = if first.is_some()
            || first_local.is_some()
            || !self.again.is_empty()
            || self.quiet < QUIET_TURNS
        {
            Duration::ZERO
        } else {
            timeout
        };
        if !wait.is_zero() {
            // About to sleep: announce the nap, then look once more (a shard that sends
            // after the look rings the bell; one that sent before it is seen now).
            self.bell.park();
            first = self.links.from_shards.try_recv().ok();
            first_local = self.local_rx.try_recv().ok();
            if first.is_some() || first_local.is_some() {
                wait = Duration::ZERO;
            }
        }
        if let Err(e) = self.poll.poll(&mut self.events, Some(wait))
            && e.kind() != ErrorKind::Interrupted
        {
            tracing::warn!("host thread: poll: {e}");
        }
        self.bell.unpark();
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        ready.extend(
            self.events
                .iter()
                .map(|e| (e.token(), e.is_readable(), e.is_writable())),
        );
        if ready.is_empty() && first.is_none() && first_local.is_none() {
            self.quiet = self.quiet.saturating_add(1);
        } else {
            self.quiet = 0;
        }
        for &(token, readable, writable) in &ready {
            match token {
                WAKER => {}
                LISTENER => self.accept(plane),
                Token(t) if (UDP_BASE..CONN_BASE).contains(&t) => {
                    self.recv_udp(plane, t - UDP_BASE)
                }
                Token(t) => {
                    if writable {
                        self.flush(t);
                    }
                    if readable {
                        self.read(plane, t);
                    }
                }
            }
        }
        self.ready = ready;
        // Faces the shards created on demand, before any packet they forwarded from them
        // (a /localhop command names its face by IncomingFaceId).
        faces_from_shards(plane, events);
        if let Some(m) = first_local {
            self.on_local(plane, m);
        }
        for _ in 0..4096 {
            match self.local_rx.try_recv() {
                Ok(m) => self.on_local(plane, m),
                Err(_) => break,
            }
        }
        for conn in std::mem::take(&mut self.again) {
            self.read(plane, conn);
        }
        if let Some(p) = first {
            self.on_shard_packet(plane, p);
        }
        // A bounded number per turn, so the sockets keep their turn.
        for _ in 0..4096 {
            match self.links.from_shards.try_recv() {
                Ok(p) => self.on_shard_packet(plane, p),
                Err(_) => break,
            }
        }
        self.after_changes(plane);
        self.links.wake();
        for conn in std::mem::take(&mut self.dirty) {
            self.flush(conn);
        }
    }

    /// Tells subscribers of face events and the routing daemon what changed this turn.
    fn after_changes(&mut self, plane: &mut Plane) {
        for (kind, face) in std::mem::take(&mut plane.face_events) {
            for (shard, data) in self.mgmt.face_event(plane, kind, &face) {
                self.hand(shard, self.internal, &data);
            }
        }
        for ev in plane.rib.take_readvertise() {
            match ev {
                // The daemon clears its table right after registering: replay a moment later.
                Readvertise::DaemonUp => {
                    self.replay_at = Some(std::time::Instant::now() + REPLAY_DELAY);
                }
                r => self.readvertise(plane, &r),
            }
        }
        if self
            .replay_at
            .is_some_and(|t| std::time::Instant::now() >= t)
        {
            self.replay_at = None;
            for r in plane.rib.client_routes() {
                self.readvertise(plane, &r);
            }
        }
        self.mgmt.expire_subscribers();
    }

    /// Sends a client route's registration or withdrawal to the routing daemon listening on
    /// `/localhost/nlsr` (NFD's readvertisement), from the management face.
    fn readvertise(&mut self, plane: &Plane, r: &Readvertise) {
        let nlsr = NameBuf::from_uri("/localhost/nlsr").unwrap_or_default();
        if plane.rib.entry(&nlsr.as_name()).is_none() {
            return;
        }
        let (verb, name, face, cost) = match r {
            Readvertise::Register { name, face, cost } => ("register", name, face, Some(*cost)),
            Readvertise::Unregister { name, face } => ("unregister", name, face, None),
            Readvertise::DaemonUp => return,
        };
        let params = ndx_nfd::ControlParameters {
            name: Some(name.clone()),
            face_id: Some(u64::from(face.0)),
            cost,
            origin: Some(crate::rib::origin::CLIENT),
            ..ndx_nfd::ControlParameters::default()
        };
        let mut cmd = nlsr;
        cmd.push_generic(b"rib").push_generic(verb.as_bytes());
        cmd.push_generic(&params.encode());
        let mut i = InterestRepr::new(cmd);
        self.nonce ^= self.nonce << 13;
        self.nonce ^= self.nonce >> 7;
        self.nonce ^= self.nonce << 17;
        i.nonce = Some(self.nonce as u32);
        i.lifetime_ms = Some(4000);
        i.must_be_fresh = true;
        i.set_app_params(Vec::new());
        if let Ok(bytes) = i.to_vec() {
            let shard = self.dispatch.shard(&i.name.as_name(), None);
            self.counters.readvertised += 1;
            self.hand(shard, self.internal, &bytes);
        }
    }

    /// Records the shard threads (woken when handed packets while they sleep).
    pub(crate) fn set_shard_threads(&mut self, threads: Vec<std::thread::Thread>) {
        self.links.set_threads(threads);
    }

    fn accept(&mut self, plane: &mut Plane) {
        loop {
            let Some((l, _)) = self.listener.as_mut() else {
                return;
            };
            let mut stream = match l.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => {
                    tracing::warn!("app socket: accept: {e}");
                    return;
                }
            };
            if self.conns.len() >= self.cfg.max_connections {
                self.counters.app_refused += 1;
                continue;
            }
            let conn = self.next_conn;
            self.next_conn += 1;
            let info = FaceInfo {
                local: true,
                ..FaceInfo::default()
            };
            let link = Link::App {
                conn: (conn - CONN_BASE) as u64,
            };
            let Ok(face) = plane.faces.add(link.to_string(), link, info, Origin::App) else {
                continue;
            };
            if self
                .poll
                .registry()
                .register(&mut stream, Token(conn), Ready::READABLE)
                .is_err()
            {
                let _ = plane.faces.remove(face);
                continue;
            }
            // Published before the app's first packet reaches a shard.
            plane.faces.publish();
            plane.face_created(face);
            self.counters.app_accepted += 1;
            self.by_face.insert(face, conn);
            self.conns.insert(
                conn,
                Conn {
                    io: Io::Unix(stream),
                    face,
                    rbuf: Vec::new(),
                    out: Vec::new(),
                    out_at: 0,
                    writable: false,
                    dirty: false,
                    counters: FaceCounters::default(),
                    steer: HashMap::new(),
                },
            );
        }
    }

    /// Adds a face for an application in this process ([`crate::AppFace`]): an app face
    /// like a socket connection's (`fd://N`, origin app, removed with its routes when the
    /// app goes), whose packets travel through channels.
    pub(crate) fn attach_local(&mut self, plane: &mut Plane) -> Result<LocalLink, String> {
        if self.conns.len() >= self.cfg.max_connections {
            self.counters.app_refused += 1;
            return Err(format!(
                "too many app faces (at most {}, [app] max_connections)",
                self.cfg.max_connections
            ));
        }
        let conn = self.next_conn;
        self.next_conn += 1;
        let link = Link::App {
            conn: (conn - CONN_BASE) as u64,
        };
        let info = FaceInfo {
            local: true,
            ..FaceInfo::default()
        };
        let face = plane
            .faces
            .add(link.to_string(), link, info, Origin::App)
            .map_err(|e| e.to_string())?;
        plane.faces.publish();
        plane.face_created(face);
        self.counters.app_accepted += 1;
        let (tx, rx) = sync_channel(LOCAL_DEPTH);
        self.by_face.insert(face, conn);
        self.conns.insert(
            conn,
            Conn {
                io: Io::Local(tx),
                face,
                rbuf: Vec::new(),
                out: Vec::new(),
                out_at: 0,
                writable: false,
                dirty: false,
                counters: FaceCounters::default(),
                steer: HashMap::new(),
            },
        );
        Ok(LocalLink {
            face,
            conn,
            rx,
            tx: self.local_tx.clone(),
            bell: self.bell.clone(),
        })
    }

    /// A message from an in-process app.
    fn on_local(&mut self, plane: &mut Plane, m: LocalMsg) {
        match m {
            LocalMsg::Packet { conn, bytes } => {
                if self.conns.contains_key(&conn) {
                    self.on_app_packet(conn, &bytes);
                }
            }
            LocalMsg::Close { conn } => self.close(plane, conn),
        }
    }

    /// Closes a connection and removes its face and every route through it.
    fn close(&mut self, plane: &mut Plane, conn: usize) {
        if let Some(mut c) = self.conns.remove(&conn) {
            if let Io::Unix(stream) = &mut c.io {
                let _ = self.poll.registry().deregister(stream);
            }
            self.by_face.remove(&c.face);
            if let Err(e) = plane.remove_face_id(c.face) {
                tracing::warn!("removing app face {}: {e}", c.face.0);
            }
        }
    }

    fn read(&mut self, plane: &mut Plane, conn: usize) {
        let mut closed = false;
        let mut bad = false;
        let mut budget_hit = false;
        let mut buf = {
            let Some(c) = self.conns.get_mut(&conn) else {
                return;
            };
            let Io::Unix(stream) = &mut c.io else {
                return;
            };
            // Edge-triggered: read until the socket would block.
            loop {
                match stream.read(&mut self.rbuf) {
                    Ok(0) => {
                        closed = true;
                        break;
                    }
                    Ok(n) => {
                        c.rbuf.extend_from_slice(&self.rbuf[..n]);
                        // A short read drained the socket: data arriving later raises a new
                        // (edge-triggered) event, so no read(2) just to see EAGAIN.
                        if n < self.rbuf.len() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => {
                        closed = true;
                        break;
                    }
                }
                if c.rbuf.len() > READ_BUDGET * 9_000 {
                    budget_hit = true;
                    break;
                }
            }
            std::mem::take(&mut c.rbuf)
        };
        // Every whole packet, straight from the connection's buffer.
        let mut at = 0;
        loop {
            match frame(&buf[at..]) {
                Frame::Whole(n) => {
                    self.on_app_packet(conn, &buf[at..at + n]);
                    at += n;
                }
                Frame::Partial => break,
                Frame::Bad => {
                    bad = true;
                    break;
                }
            }
        }
        buf.drain(..at);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.rbuf = buf;
        }
        if bad {
            self.counters.app_bad_frames += 1;
            closed = true;
        }
        if closed {
            self.close(plane, conn);
        } else if budget_hit {
            // More may be waiting (edge-triggered: no new event for it): next turn.
            self.again.push(conn);
        }
    }

    /// A packet an app sent: to the shard that owns it.
    fn on_app_packet(&mut self, conn: usize, bytes: &[u8]) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        self.counters.app_rx += 1;
        c.counters.in_bytes += bytes.len() as u64;
        let face = c.face;
        match peek(bytes) {
            Peek::Interest => c.counters.in_interests += 1,
            Peek::Nack => c.counters.in_nacks += 1,
            Peek::Data => c.counters.in_data += 1,
            Peek::Other => {}
        }
        // One shard: nothing to decide (the shard validates the packet).
        let shard = if self.dispatch.shards() == 1 {
            0
        } else {
            match Packet::decode(bytes) {
                Ok(Packet::Interest(i)) => self.dispatch.shard(&i.name(), None),
                Ok(Packet::Data(d)) => steer_data(&self.dispatch, &c.steer, &d, None),
                Ok(Packet::Lp(lp)) => match lp.network_packet() {
                    Ok(Some(Packet::Interest(i))) if lp.nack().is_some() => {
                        self.dispatch.shard(&i.name(), lp.pit_token())
                    }
                    Ok(Some(Packet::Interest(i))) => self.dispatch.shard(&i.name(), None),
                    Ok(Some(Packet::Data(d))) => {
                        steer_data(&self.dispatch, &c.steer, &d, lp.pit_token())
                    }
                    // Fragments and link-only packets: the shard by connection.
                    _ => (conn % self.dispatch.shards()) as u8,
                },
                Err(_) => 0,
            }
        };
        self.hand(shard, face, bytes);
    }

    fn hand(&mut self, shard: u8, face: FaceId, bytes: &[u8]) {
        let mut b = self.links.buffer();
        b.extend_from_slice(bytes);
        if self.links.hand(shard, face, b).is_err() {
            self.counters.shard_queue_full += 1;
        }
    }

    /// A packet a shard sent to a host face.
    fn on_shard_packet(&mut self, plane: &mut Plane, p: HostPacket) {
        if p.face == self.internal {
            self.counters.mgmt_requests += 1;
            let stats = self.stats_for_mgmt();
            if let Some(reply) = self.mgmt.handle(plane, &p.bytes, &stats, p.from) {
                self.hand(p.from, self.internal, &reply);
            }
            self.links.give_back(p);
            return;
        }
        let Some(&conn) = self.by_face.get(&p.face) else {
            // A packet too large for a UDP face's link: the kernel sends it in IP fragments.
            if let Some(Link::Udp(to)) = plane.faces.table().get(p.face).map(|f| f.link) {
                let sock = self.udp.iter().find(|s| {
                    s.local_addr()
                        .is_ok_and(|a| a.is_ipv4() == to.is_ipv4() && a.port() == self.ports[0])
                });
                match sock.map(|s| s.send_to(&p.bytes, to)) {
                    Some(Ok(_)) => self.counters.udp_kernel_tx += 1,
                    _ => self.counters.udp_kernel_tx_failed += 1,
                }
            }
            self.links.give_back(p);
            return;
        };
        if let Some(c) = self.conns.get_mut(&conn) {
            match peek(&p.bytes) {
                Peek::Interest => {
                    c.counters.out_interests += 1;
                    // Remember which shard asked, for a Data that will not echo its token.
                    if self.dispatch.shards() > 1
                        && let Ok(Packet::Lp(lp)) = Packet::decode(&p.bytes)
                        && let Ok(Some(Packet::Interest(i))) = lp.network_packet()
                    {
                        if c.steer.len() >= STEER_MAX {
                            c.steer.clear();
                        }
                        c.steer.insert(i.name().as_bytes().to_vec(), p.from);
                    }
                }
                Peek::Nack => c.counters.out_nacks += 1,
                Peek::Data => c.counters.out_data += 1,
                Peek::Other => {}
            }
            if let Io::Local(tx) = &c.io {
                match tx.try_send(p.bytes.clone()) {
                    Ok(()) => {
                        c.counters.out_bytes += p.bytes.len() as u64;
                        self.counters.app_tx += 1;
                    }
                    Err(TrySendError::Full(_)) => self.counters.app_queue_dropped += 1,
                    // The app dropped its face without saying so.
                    Err(TrySendError::Disconnected(_)) => {
                        self.links.give_back(p);
                        self.close(plane, conn);
                        return;
                    }
                }
            } else if c.out.len() - c.out_at + p.bytes.len() > self.cfg.queue_bytes {
                self.counters.app_queue_dropped += 1;
            } else {
                c.counters.out_bytes += p.bytes.len() as u64;
                c.out.extend_from_slice(&p.bytes);
                self.counters.app_tx += 1;
                // Written once per turn, every packet of the turn in one write.
                if !c.dirty && !c.writable {
                    c.dirty = true;
                    self.dirty.push(conn);
                }
            }
        }
        self.links.give_back(p);
    }

    /// Writes what a connection has queued; asks for writability when the socket is full.
    fn flush(&mut self, conn: usize) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        c.dirty = false;
        let Io::Unix(stream) = &mut c.io else {
            return;
        };
        while c.out_at < c.out.len() {
            match stream.write(&c.out[c.out_at..]) {
                Ok(n) => c.out_at += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    // The reader closes the connection when it sees the hang-up.
                    c.out_at = c.out.len();
                    break;
                }
            }
        }
        if c.out_at == c.out.len() {
            c.out.clear();
            c.out_at = 0;
        } else if c.out_at > c.out.len() / 2 {
            c.out.drain(..c.out_at);
            c.out_at = 0;
        }
        let want = c.out_at < c.out.len();
        if want != c.writable {
            c.writable = want;
            let interest = if want {
                Ready::READABLE | Ready::WRITABLE
            } else {
                Ready::READABLE
            };
            let _ = self
                .poll
                .registry()
                .reregister(stream, Token(conn), interest);
        }
    }

    /// Datagrams the kernel reassembled from IP fragments: to the face of their sender.
    fn recv_udp(&mut self, plane: &mut Plane, k: usize) {
        loop {
            let Some(sock) = self.udp.get(k) else {
                return;
            };
            let (n, from) = match sock.recv_from(&mut self.rbuf) {
                Ok(x) => x,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            self.counters.udp_kernel_rx += 1;
            // A v4 peer seen through a dual-stack socket.
            let from = match from {
                SocketAddr::V6(a) => match a.ip().to_ipv4_mapped() {
                    Some(v4) => SocketAddr::new(v4.into(), a.port()),
                    None => from,
                },
                v4 => v4,
            };
            let bytes = self.rbuf[..n].to_vec();
            let shard = match Packet::decode(&bytes) {
                Ok(Packet::Interest(i)) => self.dispatch.shard(&i.name(), None),
                Ok(Packet::Data(d)) => self.dispatch.shard(&d.name(), None),
                Ok(Packet::Lp(lp)) => match lp.network_packet() {
                    Ok(Some(Packet::Interest(i))) => self
                        .dispatch
                        .shard(&i.name(), lp.nack().and(lp.pit_token())),
                    Ok(Some(Packet::Data(d))) => self.dispatch.shard(&d.name(), lp.pit_token()),
                    _ => 0,
                },
                Err(_) => {
                    self.counters.udp_kernel_bad += 1;
                    continue;
                }
            };
            let link = Link::Udp(from);
            let face = match plane.faces.table().lookup(&link) {
                Some(f) => f,
                None => {
                    let Ok(id) = plane.faces.add(
                        from.to_string(),
                        link,
                        FaceInfo::default(),
                        Origin::OnDemand,
                    ) else {
                        continue;
                    };
                    // The control thread resolves its next hop; published before use.
                    plane.faces.publish();
                    plane.face_created(id);
                    id
                }
            };
            self.hand(shard, face, &bytes);
        }
    }

    fn stats_for_mgmt(&self) -> crate::mgmt::HostView {
        crate::mgmt::HostView {
            faces: self.conns.values().map(|c| (c.face, c.counters)).collect(),
        }
    }

    /// The host thread's counters as JSON (for `ndx status`).
    pub(crate) fn status(&self) -> Value {
        let mut v = serde_json::Map::new();
        v.insert(
            "app_socket".into(),
            json!(self.socket().map(|p| p.display().to_string())),
        );
        for (d, n) in self.counters().iter() {
            v.insert(d.name.into(), json!(n));
        }
        Value::Object(v)
    }

    /// The host thread's counters, with the app faces and kernel sockets open now
    /// ([`crate::stats::HOST_COUNTERS`]).
    pub(crate) fn counters(&self) -> HostCounters {
        HostCounters {
            app_faces: self.conns.len() as u64,
            udp_kernel_sockets: self.udp.len() as u64,
            mgmt_commands_refused: self.mgmt.refused(),
            ..self.counters
        }
    }

    /// Removes the app socket file.
    pub(crate) fn close_socket(&mut self) {
        if let Some((_, p)) = self.listener.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.close_socket();
    }
}

/// Adds the faces the shards announced (created on demand) to the table, and publishes it
/// when any was new.
pub(crate) fn faces_from_shards(plane: &mut Plane, events: &Receiver<Event>) {
    let mut changed = false;
    while let Ok(ev) = events.try_recv() {
        match ev {
            Event::NewFace(face) => {
                let (id, addr) = (face.id, face.link.on_demand_address());
                if plane.faces.insert(face).is_ok() {
                    changed = true;
                    plane.face_created(id);
                } else {
                    // Another shard's face for the same peer won: this one stays local to
                    // its shard and holds no place.
                    plane.on_demand.give_back(addr);
                }
            }
        }
    }
    if changed {
        plane.faces.publish();
    }
}

/// Which shard a Data from an app goes to: the one its echoed PIT token names, else the one
/// that sent the app an Interest it answers (its name or a prefix of it), else by its name.
fn steer_data(
    d: &Dispatch,
    steer: &HashMap<Vec<u8>, u8>,
    data: &ndx_codec::Data<'_>,
    token: Option<&[u8]>,
) -> u8 {
    if let Some(s) = token.and_then(token_shard)
        && usize::from(s) < d.shards()
    {
        return s;
    }
    if d.shards() > 1 {
        let name = data.name();
        for k in (1..=name.len()).rev() {
            if let Some(&s) = steer.get(name.prefix(k).as_bytes()) {
                return s;
            }
        }
    }
    d.shard(&data.name(), None)
}

/// What kind of packet a frame carries, read from its TLV heads alone (the per-face
/// counters need no more; the shard validates the packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peek {
    Interest,
    Nack,
    Data,
    Other,
}

fn peek(b: &[u8]) -> Peek {
    let head = |b: &[u8]| -> Option<(u64, usize, usize)> {
        let (t, n) = read_varnum(b).ok()?;
        let (l, m) = read_varnum(b.get(n..)?).ok()?;
        Some((t, n + m, l as usize))
    };
    let kind = |t: u64| match t {
        types::INTEREST => Peek::Interest,
        types::DATA => Peek::Data,
        _ => Peek::Other,
    };
    let Some((t, at, len)) = head(b) else {
        return Peek::Other;
    };
    if t != types::LP_PACKET {
        return kind(t);
    }
    let Some(mut v) = b.get(at..at + len) else {
        return Peek::Other;
    };
    let mut nack = false;
    while let Some((t, at, len)) = head(v) {
        if t == types::LP_NACK {
            nack = true;
        }
        // A later fragment holds no packet's start.
        if t == types::LP_FRAG_INDEX
            && v.get(at..at + len)
                .is_some_and(|x| x.iter().any(|&b| b != 0))
        {
            return Peek::Other;
        }
        if t == types::LP_FRAGMENT {
            return match (v.get(at).map(|&x| u64::from(x)).map(kind), nack) {
                (Some(Peek::Interest), true) => Peek::Nack,
                (Some(k), _) => k,
                (None, _) => Peek::Other,
            };
        }
        let Some(rest) = v.get(at + len..) else {
            return Peek::Other;
        };
        v = rest;
    }
    Peek::Other
}

/// What the head of a stream holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A whole packet of this many bytes.
    Whole(usize),
    /// Not all of it yet.
    Partial,
    /// Not an NDN packet (or too long): the stream cannot be resynchronised.
    Bad,
}

/// Finds the first packet in a stream buffer.
pub(crate) fn frame(b: &[u8]) -> Frame {
    if b.is_empty() {
        return Frame::Partial;
    }
    // TLV-TYPE and TLV-LENGTH are at most 9 bytes each; a short buffer may hold part of one.
    let Ok((typ, n)) = read_varnum(b) else {
        return if b.len() < 9 {
            Frame::Partial
        } else {
            Frame::Bad
        };
    };
    if !matches!(typ, types::INTEREST | types::DATA | types::LP_PACKET) {
        return Frame::Bad;
    }
    let Ok((len, m)) = read_varnum(&b[n..]) else {
        return if b.len() < n + 9 {
            Frame::Partial
        } else {
            Frame::Bad
        };
    };
    let total = n + m + len as usize;
    if len as usize > MAX_PACKET {
        return Frame::Bad;
    }
    if b.len() < total {
        Frame::Partial
    } else {
        Frame::Whole(total)
    }
}

/// A Data or Interest LP head for a reply through the management face: the PitToken of the
/// request (as every producer echoes it).
pub(crate) fn tokened(token: Option<&[u8]>, packet: &[u8]) -> Vec<u8> {
    let Some(t) = token else {
        return packet.to_vec();
    };
    let h = LpHeaders {
        pit_token: Some(t),
        ..LpHeaders::default()
    };
    let mut out = vec![0; h.encoded_len(Some(packet.len()))];
    match h.encode(Some(packet), &mut out) {
        Ok(n) => {
            out.truncate(n);
            out
        }
        Err(_) => packet.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_reads_the_kind_from_tlv_heads() {
        use ndx_codec::{DataRepr, InterestRepr, NackReason, NameBuf};
        let name = NameBuf::from_uri("/a/b").unwrap();
        let interest = InterestRepr::new(name.clone()).to_vec().unwrap();
        let data = DataRepr::new(name, vec![1, 2, 3]).to_vec().unwrap();
        assert_eq!(peek(&interest), Peek::Interest);
        assert_eq!(peek(&data), Peek::Data);
        let lp = |h: LpHeaders<'_>, inner: &[u8]| {
            let mut out = vec![0; h.encoded_len(Some(inner.len()))];
            let n = h.encode(Some(inner), &mut out).unwrap();
            out.truncate(n);
            out
        };
        let token = [1u8, 2, 3, 4, 5, 6];
        let tokened = LpHeaders {
            pit_token: Some(&token),
            ..LpHeaders::default()
        };
        assert_eq!(peek(&lp(tokened, &data)), Peek::Data);
        assert_eq!(peek(&lp(tokened, &interest)), Peek::Interest);
        let nack = LpHeaders {
            nack: Some(NackReason::NoRoute),
            ..tokened
        };
        assert_eq!(peek(&lp(nack, &interest)), Peek::Nack);
        assert_eq!(peek(&[]), Peek::Other);
        assert_eq!(peek(&[0x64, 0x02, 0x50]), Peek::Other, "truncated");
    }

    #[test]
    fn frames_are_cut_at_tlv_boundaries() {
        // An Interest (type 5) of 3 bytes of value, then the start of a Data.
        let b = [0x05, 0x03, 1, 2, 3, 0x06, 0x05, 9];
        assert_eq!(frame(&b), Frame::Whole(5));
        assert_eq!(frame(&b[5..]), Frame::Partial);
        assert_eq!(frame(&[]), Frame::Partial);
        assert_eq!(frame(&[0x64]), Frame::Partial);
        // A type that is no NDN packet.
        assert_eq!(frame(&[0x07, 0x00]), Frame::Bad);
        // Too long.
        assert_eq!(frame(&[0x06, 0xFE, 0x00, 0x10, 0x00, 0x00]), Frame::Bad);
        // Three-byte length.
        let mut big = vec![0x06, 0xFD, 0x01, 0x00];
        big.resize(4 + 256, 0);
        assert_eq!(frame(&big), Frame::Whole(260));
        assert_eq!(frame(&big[..100]), Frame::Partial);
    }
}
