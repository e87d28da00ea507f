//! In-process control of a running router: [`Handle`] (the control socket's requests,
//! through a channel serviced by the router's control loop), [`AppFace`] (an application in
//! the same process, with a face of its own) and [`Running`] (a router whose loop runs on
//! its own thread).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use crate::app::{Frame, LocalMsg};
use crate::host::Doorbell;
use crate::protocol::{Request, Response, Strategy};
use crate::runtime::Report;

/// Commands waiting for the control loop.
pub(crate) const COMMAND_DEPTH: usize = 256;

/// How long a [`Handle`] waits for the control loop to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// What a [`Handle`] asks the control loop for.
#[derive(Debug)]
pub(crate) enum Command {
    /// A control request, answered as on the control socket.
    Request(Request, SyncSender<Result<Response, String>>),
    /// A new in-process app face, with its prefixes registered.
    AttachApp(Vec<String>, SyncSender<Result<AppFace, String>>),
    /// Registers a prefix (origin app) on an in-process app's face.
    Register {
        /// The face.
        face: ndx_core::FaceId,
        /// The prefix.
        prefix: String,
        /// The answer.
        reply: SyncSender<Result<(), String>>,
    },
}

/// Why a [`Handle`] request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandleError {
    /// The router refused the request (the same message the control socket gives).
    #[error("{0}")]
    Refused(String),
    /// The router has stopped (or was dropped) before answering.
    #[error("the router has stopped")]
    Stopped,
    /// The control loop did not answer in 30 s (is [`crate::Router::run`] running?).
    #[error("the router's control loop did not answer (is Router::run running?)")]
    Timeout,
    /// The router answered something the request does not call for.
    #[error("unexpected answer: {0}")]
    Unexpected(String),
}

/// Controls a running router from the same process: clone it freely, send it to other
/// threads. Every method goes through the control loop ([`crate::Router::run`]) as a
/// [`Request`], exactly as the control socket's requests do, so they see and change the
/// same state, in order; each call blocks until the loop answered (within a few
/// milliseconds while the loop runs).
#[derive(Debug, Clone)]
pub struct Handle {
    tx: SyncSender<Command>,
    stop: Arc<AtomicBool>,
    bell: Arc<Doorbell>,
}

impl Handle {
    pub(crate) fn new(tx: SyncSender<Command>, stop: Arc<AtomicBool>, bell: Arc<Doorbell>) -> Self {
        Self { tx, stop, bell }
    }

    fn call<T>(
        &self,
        make: impl FnOnce(SyncSender<Result<T, String>>) -> Command,
    ) -> Result<T, HandleError> {
        let (reply, answer) = sync_channel(1);
        self.tx
            .send(make(reply))
            .map_err(|_| HandleError::Stopped)?;
        self.bell.ring();
        match answer.recv_timeout(ANSWER_TIMEOUT) {
            Ok(r) => r.map_err(HandleError::Refused),
            Err(RecvTimeoutError::Timeout) => Err(HandleError::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(HandleError::Stopped),
        }
    }

    /// Sends one request and returns its typed answer.
    pub fn request(&self, req: Request) -> Result<Response, HandleError> {
        self.call(|reply| Command::Request(req, reply))
    }

    /// The `status` document (as `ndx status --json` prints it, without `ok`).
    pub fn status(&self) -> Result<Value, HandleError> {
        match self.request(Request::Status)? {
            Response::Status(v) => Ok(v),
            other => Err(HandleError::Unexpected(format!("{other:?}"))),
        }
    }

    /// The forwarding counters summed over shards, by name (`rx_frames`, `interests_in`,
    /// `cs_hits`, ...).
    pub fn counters(&self) -> Result<BTreeMap<String, u64>, HandleError> {
        Ok(self.request(Request::Status)?.counters())
    }

    /// Adds a face (`udp://IP:PORT`, `ether://MAC` with `interface`, `ether-multicast`);
    /// returns its id.
    pub fn add_face(
        &self,
        name: &str,
        remote: &str,
        interface: Option<&str>,
    ) -> Result<u32, HandleError> {
        match self.request(Request::FaceAdd {
            name: name.into(),
            remote: remote.into(),
            interface: interface.map(Into::into),
        })? {
            Response::FaceAdded { id } => Ok(id),
            other => Err(HandleError::Unexpected(format!("{other:?}"))),
        }
    }

    /// Removes a face (by id or name) and every route through it.
    pub fn remove_face(&self, face: &str) -> Result<(), HandleError> {
        self.request(Request::FaceRemove { face: face.into() })
            .map(drop)
    }

    /// Adds a next hop (face id or name) to a prefix, or changes its cost.
    pub fn add_route(&self, prefix: &str, face: &str, cost: u32) -> Result<(), HandleError> {
        self.request(Request::RouteAdd {
            prefix: prefix.into(),
            face: face.into(),
            cost,
        })
        .map(drop)
    }

    /// Removes a next hop, or every route of the prefix when `face` is `None`.
    pub fn remove_route(&self, prefix: &str, face: Option<&str>) -> Result<(), HandleError> {
        self.request(Request::RouteRemove {
            prefix: prefix.into(),
            face: face.map(Into::into),
        })
        .map(drop)
    }

    /// Sets the forwarding strategy of a prefix and below.
    pub fn set_strategy(&self, prefix: &str, strategy: Strategy) -> Result<(), HandleError> {
        self.request(Request::StrategySet {
            prefix: prefix.into(),
            strategy,
        })
        .map(drop)
    }

    /// Attaches an application of this process: a new app face whose packets travel
    /// through channels (no socket), with `prefixes` registered on it (origin app, as an
    /// NFD client's `rib/register`).
    pub fn attach_app(&self, prefixes: &[&str]) -> Result<AppFace, HandleError> {
        let prefixes = prefixes.iter().map(|p| (*p).to_string()).collect();
        self.call(|reply| Command::AttachApp(prefixes, reply))
    }

    /// Asks the router to stop: [`crate::Router::run`] returns after its current turn.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.bell.ring();
    }
}

/// Why an [`AppFace`] could not send or receive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// What was sent is not one whole Interest, Data or LpPacket (at most 64 KiB).
    #[error("not one whole NDN packet (Interest, Data or LpPacket of at most 64 KiB)")]
    BadPacket,
    /// The router's queue from in-process apps is full: try again.
    #[error("the router's queue is full")]
    Full,
    /// Nothing arrived in time.
    #[error("nothing arrived in time")]
    Timeout,
    /// The router has stopped, or closed this face.
    #[error("the router has stopped")]
    Closed,
}

/// An application's face on a router in the same process: what it sends goes to the
/// forwarding pipeline as from any app face, and what the router forwards to it (Interests
/// under its prefixes, Data and Nacks for its Interests) arrives on its channel.
///
/// Packets are NDN TLV: a bare Interest or Data, or an NDNLPv2 LpPacket. The router sends
/// Interests with a PIT token in an LpPacket; answer them with [`AppFace::answer`], which
/// echoes it. Dropping the face removes it and its routes.
#[derive(Debug)]
pub struct AppFace {
    face: ndx_core::FaceId,
    conn: usize,
    rx: Receiver<Vec<u8>>,
    tx: SyncSender<LocalMsg>,
    bell: Arc<Doorbell>,
    handle: Handle,
}

impl AppFace {
    pub(crate) fn new(link: crate::app::LocalLink, handle: Handle) -> Self {
        Self {
            face: link.face,
            conn: link.conn,
            rx: link.rx,
            tx: link.tx,
            bell: link.bell,
            handle,
        }
    }

    /// The face's id (as `ndx face list` shows it).
    pub fn id(&self) -> u32 {
        self.face.0
    }

    /// Sends one packet (an Interest, a Data, or an LpPacket) into the router.
    pub fn send(&self, packet: &[u8]) -> Result<(), AppError> {
        if crate::app::frame(packet) != Frame::Whole(packet.len()) {
            return Err(AppError::BadPacket);
        }
        let m = LocalMsg::Packet {
            conn: self.conn,
            bytes: packet.to_vec(),
        };
        match self.tx.try_send(m) {
            Ok(()) => {
                self.bell.ring();
                Ok(())
            }
            Err(TrySendError::Full(_)) => {
                self.bell.ring();
                Err(AppError::Full)
            }
            Err(TrySendError::Disconnected(_)) => Err(AppError::Closed),
        }
    }

    /// Sends `data` (a bare Data) as the answer to `request`, a packet this face received:
    /// with the PIT token the request carried, so the router finds its PIT entry at once.
    pub fn answer(&self, request: &[u8], data: &[u8]) -> Result<(), AppError> {
        let token = match ndx_codec::Packet::decode(request) {
            Ok(ndx_codec::Packet::Lp(lp)) => lp.pit_token(),
            _ => None,
        };
        self.send(&crate::app::tokened(token, data))
    }

    /// The next packet for this app, waiting up to `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Vec<u8>, AppError> {
        self.rx.recv_timeout(timeout).map_err(|e| match e {
            RecvTimeoutError::Timeout => AppError::Timeout,
            RecvTimeoutError::Disconnected => AppError::Closed,
        })
    }

    /// The next packet for this app, if one is waiting.
    pub fn try_recv(&self) -> Option<Vec<u8>> {
        self.rx.try_recv().ok()
    }

    /// Registers one more prefix on this face (origin app).
    pub fn register(&self, prefix: &str) -> Result<(), HandleError> {
        let face = self.face;
        let prefix = prefix.to_string();
        self.handle.call(|reply| Command::Register {
            face,
            prefix,
            reply,
        })
    }
}

impl Drop for AppFace {
    fn drop(&mut self) {
        // Also noticed when the router next writes to it (its channel is gone).
        let _ = self.tx.try_send(LocalMsg::Close { conn: self.conn });
        self.bell.ring();
    }
}

/// A router whose control loop runs on its own thread ([`crate::Router::spawn`]).
#[derive(Debug)]
pub struct Running {
    handle: Handle,
    thread: JoinHandle<Report>,
}

impl Running {
    pub(crate) fn new(handle: Handle, thread: JoinHandle<Report>) -> Self {
        Self { handle, thread }
    }

    /// A handle to control it.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// True once its loop has ended (stopped, or a shard worker died).
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Stops the router, waits for it and returns its final counters.
    pub fn stop(self) -> Report {
        self.handle.stop();
        self.thread.join().unwrap_or_else(|_| Report::default())
    }
}

/// The control loop's part of `Router::run` without sockets, for unit tests here and in
/// `reload.rs`.
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc::sync_channel;
    use std::time::Duration;

    use serde_json::json;

    use super::{COMMAND_DEPTH, Handle};
    use crate::app::Host;
    use crate::config::Config;
    use crate::host::ShardHostLink;
    use crate::plane::Plane;
    use crate::runtime::{ReloadHook, serve_commands_with};

    /// Serves `plane` (made from `cfg`, whose `[app]` must bind nothing) and a host thread on
    /// this thread while `client` runs on another with a [`Handle`] and the shards' host
    /// links; `reload` answers reload requests. Returns the client's result and the plane.
    pub(crate) fn serve_while<T: Send + 'static>(
        cfg: &Config,
        mut plane: Plane,
        reload: &mut ReloadHook<'_>,
        client: impl FnOnce(Handle, Vec<ShardHostLink>) -> T + Send + 'static,
    ) -> (T, Plane) {
        let dispatch =
            ndx_core::Dispatch::new(cfg.hash_key, cfg.dispatch, 1, cfg.dispatch_table).unwrap();
        let (mut host, links) = Host::new(
            &cfg.app,
            &cfg.udp_ports,
            &mut plane,
            dispatch,
            1,
            std::time::SystemTime::now(),
        )
        .unwrap();
        let (tx, commands) = sync_channel(COMMAND_DEPTH);
        let stop = Arc::new(AtomicBool::new(false));
        let handle = Handle::new(tx.clone(), stop.clone(), host.bell());
        let (_ev_tx, events) = sync_channel(16);
        let t = std::thread::spawn(move || client(handle, links));
        while !t.is_finished() {
            host.turn(&mut plane, &events, Duration::from_millis(2));
            serve_commands_with(
                &commands,
                &mut plane,
                &mut host,
                &|h| Handle::new(tx.clone(), stop.clone(), h.bell()),
                &|h| json!({"host": h.status()}),
                reload,
            );
        }
        (t.join().unwrap(), plane)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ndx_codec::{DataRepr, InterestRepr, LpHeaders, NameBuf, Packet};

    use super::*;

    use crate::config::Config;
    use crate::plane::Plane;

    /// A control plane and a host thread without sockets (no interface, no root), served
    /// by this thread while `client` runs on another: the control loop's part of
    /// `Router::run`.
    fn with_control_loop<T: Send + 'static>(
        client: impl FnOnce(Handle, Vec<crate::host::ShardHostLink>) -> T + Send + 'static,
    ) -> (T, Plane) {
        let mut cfg = Config::parse("", Path::new("t")).unwrap();
        cfg.app.socket = None;
        cfg.app.udp_fragments = false;
        let (plane, _fib, _faces) = Plane::new(&cfg);
        testing::serve_while(
            &cfg,
            plane,
            &mut |_, _| Err("no reload here".into()),
            client,
        )
    }

    #[test]
    fn handles_and_app_faces_move_between_threads() {
        fn send_clone<T: Send + Sync + Clone>() {}
        fn send<T: Send>() {}
        send_clone::<Handle>();
        send::<AppFace>();
        send::<Running>();
        send::<crate::Router>();
    }

    #[test]
    fn a_handle_changes_faces_routes_and_strategies_through_the_control_loop() {
        let (stopped, plane) = with_control_loop(|h, _links| {
            let id = h.add_face("up", "udp://10.1.1.1:6363", None).unwrap();
            assert!(id > 0);
            h.add_route("/a", "up", 3).unwrap();
            h.set_strategy("/a", Strategy::Multicast).unwrap();
            let e = h.add_route("/b", "nope", 1).unwrap_err();
            assert!(
                matches!(&e, HandleError::Refused(m) if m.contains("no face")),
                "{e}"
            );
            let e = h.add_face("bad", "tcp://x", None).unwrap_err();
            assert!(e.to_string().contains("udp://"), "{e}");
            let status = h.status().unwrap();
            assert_eq!(status["routes"][0]["prefix"], "/a");
            assert_eq!(status["routes"][0]["strategy"], "multicast");
            assert_eq!(status["routes"][0]["nexthops"][0]["cost"], 3);
            assert!(
                status["host"]["app_faces"].is_u64(),
                "the runtime's extras: {status}"
            );
            assert!(h.counters().unwrap().contains_key("rx_frames"));
            h.remove_route("/a", Some("up")).unwrap();
            h.remove_face("up").unwrap();
            match h.request(Request::Faces).unwrap() {
                Response::Faces(f) => {
                    assert!(f.as_array().unwrap().iter().all(|f| f["name"] != "up"));
                }
                other => panic!("{other:?}"),
            }
            h.stop();
            h.stop.load(Ordering::Relaxed)
        });
        assert!(stopped);
        let routes = plane.routes_json();
        assert!(
            routes
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["prefix"] != "/a"),
            "removed: {routes}"
        );
    }

    #[test]
    fn an_in_process_app_exchanges_packets_with_the_shards_through_channels() {
        let ((), plane) = with_control_loop(|h, links| {
            let app = h.attach_app(&["/app"]).unwrap();
            let face = ndx_core::FaceId(app.id());
            let routes = h.request(Request::Routes).unwrap();
            let Response::Routes { rib, .. } = routes else {
                panic!("{routes:?}")
            };
            let app_route = rib
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["prefix"] == "/app")
                .unwrap_or_else(|| panic!("registered: {rib}"));
            assert_eq!(app_route["routes"][0]["origin"], "app");
            assert_eq!(app_route["routes"][0]["face"], app.id());
            app.register("/app2").unwrap();
            assert!(h.attach_app(&["not a name"]).is_err());

            // The app's Interest reaches the shard, from its face.
            let interest = InterestRepr::new(NameBuf::from_uri("/far/x").unwrap())
                .to_vec()
                .unwrap();
            app.send(&interest).unwrap();
            let got = links[0]
                .inbox
                .recv_timeout(Duration::from_secs(10))
                .unwrap();
            assert_eq!(
                (got.face, got.bytes.as_slice()),
                (face, interest.as_slice())
            );
            assert_eq!(app.send(&interest[..3]), Err(AppError::BadPacket));

            // An Interest a shard sends the app, with a PIT token, is answered with it.
            let token = [0u8, 1, 2, 3, 4, 5, 6, 7];
            let lp = |h: LpHeaders<'_>, inner: &[u8]| {
                let mut out = vec![0; h.encoded_len(Some(inner.len()))];
                let n = h.encode(Some(inner), &mut out).unwrap();
                out.truncate(n);
                out
            };
            let to_app = lp(
                LpHeaders {
                    pit_token: Some(&token),
                    ..LpHeaders::default()
                },
                &InterestRepr::new(NameBuf::from_uri("/app/y").unwrap())
                    .to_vec()
                    .unwrap(),
            );
            assert!(links[0].send(0, face, [&to_app, b""]));
            let req = app.recv_timeout(Duration::from_secs(10)).unwrap();
            assert_eq!(req, to_app);
            let data = DataRepr::new(NameBuf::from_uri("/app/y").unwrap(), b"hi".to_vec())
                .to_vec()
                .unwrap();
            app.answer(&req, &data).unwrap();
            let got = links[0]
                .inbox
                .recv_timeout(Duration::from_secs(10))
                .unwrap();
            match Packet::decode(&got.bytes).unwrap() {
                Packet::Lp(l) => {
                    assert_eq!(l.pit_token(), Some(&token[..]));
                    assert!(matches!(l.network_packet(), Ok(Some(Packet::Data(_)))));
                }
                other => panic!("{other:?}"),
            }
            let status = h.status().unwrap();
            assert_eq!(status["host"]["app_faces"], 1);
            assert_eq!(status["host"]["app_rx"], 2);
            assert_eq!(status["host"]["app_tx"], 1);

            // Dropping the face removes it and its routes.
            drop(app);
            for _ in 0..1000 {
                if h.status().unwrap()["host"]["app_faces"] == 0 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let status = h.status().unwrap();
            assert_eq!(status["host"]["app_faces"], 0);
            assert!(
                status["faces"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|f| f["id"] != face.0),
                "{status}"
            );
        });
        let rib = plane.rib_json();
        assert!(
            rib.as_array()
                .unwrap()
                .iter()
                .all(|e| e["prefix"] != "/app"),
            "{rib}"
        );
    }
}
