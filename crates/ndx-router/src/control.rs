//! The control socket: a Unix stream socket speaking one JSON object per line.
//!
//! Requests (`{"cmd": ...}`) and their answers (`{"ok": true, ...}` or
//! `{"ok": false, "error": "..."}`), typed in [`crate::protocol`] (an unknown command, or an
//! unknown, missing or mistyped field, is refused with a message naming it). [`execute`]
//! carries them out, for this socket and for in-process [`crate::Handle`]s alike:
//!
//! | cmd | fields | answer |
//! |---|---|---|
//! | `status` | | `counters` (totals), `shards` (per shard), `faces`, `routes`, `xdp`, `host` |
//! | `faces` | | `faces` |
//! | `routes` | | `routes` (the FIB, each next hop with its origins), `rib` |
//! | `face-add` | `name`, `remote`, `interface` (Ethernet) | `id` |
//! | `face-remove` | `face` (id or name) | |
//! | `route-add` | `prefix`, `face`, `cost` | |
//! | `route-remove` | `prefix`, `face` (optional: all next hops) | |
//! | `strategy-set` | `prefix`, `strategy` | |
//! | `reload` | `file` (optional: the file `ndx run` read) | what changed (`reload.rs`); refused: `error`, `restart` (keys) |
//!
//! A client may pipeline: write many requests without waiting, then read the answers, one
//! line per request in the order of the requests (the churn test keeps 256 in flight on one
//! connection: about 50,000 route adds/removes per second in a release build,
//! `benches/results/churn.md`). The server side is polled from the control thread every
//! 2 ms (non-blocking accept and reads; the requests one poll read change the FIB, which is
//! published once before any of them is answered, and their answers go out in one write),
//! so it never holds up anything else; the client side is what the `ndx` CLI uses.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::plane::Plane;
use crate::protocol::{AnswerError, Request, Response};

/// Most bytes in one request line.
const MAX_REQUEST: usize = 64 * 1024;
/// Most control clients connected at once; one more is told so and closed.
pub(crate) const MAX_CLIENTS: usize = 64;

/// Most bytes read from one client per poll (pipelined requests beyond wait for the next).
const MAX_READ: usize = 256 * 1024;

/// The listening side.
#[derive(Debug)]
pub(crate) struct ControlServer {
    listener: UnixListener,
    path: PathBuf,
    clients: Vec<Client>,
}

#[derive(Debug)]
struct Client {
    stream: UnixStream,
    buf: Vec<u8>,
}

/// Binds a Unix stream socket at `path`, creating its directory. A stale socket file (its
/// server died: connecting is refused) is replaced; a live one fails with `AddrInUse` and
/// `live` as the message; a file that is not a socket is left alone (`AlreadyExists`), so a
/// mistyped path never deletes a file. Used for the control socket and the app socket.
pub(crate) fn bind_unix(path: &Path, live: &str) -> std::io::Result<UnixListener> {
    use std::os::unix::fs::FileTypeExt;
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(std::io::Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "{}: exists and is not a socket (left alone)",
                    path.display()
                ),
            ));
        }
        match UnixStream::connect(path) {
            Ok(_) => {
                return Err(std::io::Error::new(
                    ErrorKind::AddrInUse,
                    format!("{}: {live}", path.display()),
                ));
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => std::fs::remove_file(path)?,
            Err(e) => return Err(e),
        }
    }
    UnixListener::bind(path)
}

impl ControlServer {
    /// Binds the socket (creating its directory; replacing a stale socket file left by a
    /// router that died, but refusing if another router answers on it).
    pub(crate) fn bind(path: &Path) -> std::io::Result<Self> {
        let listener = bind_unix(path, "another ndx is running there")?;
        listener.set_nonblocking(true)?;
        Ok(Self {
            listener,
            path: path.to_path_buf(),
            clients: Vec::new(),
        })
    }

    /// Accepts new clients and answers every complete request; `extra` adds fields to
    /// `status` answers (the XDP counters). `reload` requests are refused (no router).
    #[cfg(test)]
    pub(crate) fn poll(&mut self, plane: &mut Plane, extra: &dyn Fn() -> Value) {
        self.poll_with(
            plane,
            extra,
            &mut |_, _| json!({"ok": false, "error": "reload is not available here"}),
        );
    }

    /// [`ControlServer::poll`], answering `reload` requests with `reload` (the router's
    /// `reload::Reloader`; given the request's file).
    pub(crate) fn poll_with(
        &mut self,
        plane: &mut Plane,
        extra: &dyn Fn() -> Value,
        reload: &mut dyn FnMut(&mut Plane, Option<&str>) -> Value,
    ) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    if self.clients.len() >= MAX_CLIENTS {
                        let _ = stream.set_write_timeout(Some(Duration::from_millis(10)));
                        let _ = writeln!(
                            stream,
                            "{}",
                            json!({"ok": false, "error": format!("too many control clients (at most {MAX_CLIENTS})")})
                        );
                        continue;
                    }
                    if stream.set_nonblocking(true).is_ok() {
                        self.clients.push(Client {
                            stream,
                            buf: Vec::new(),
                        });
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => break,
            }
        }
        self.clients.retain_mut(|c| c.serve(plane, extra, reload));
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Client {
    /// Reads what is available and answers complete lines; false when the client is gone.
    fn serve(
        &mut self,
        plane: &mut Plane,
        extra: &dyn Fn() -> Value,
        reload: &mut dyn FnMut(&mut Plane, Option<&str>) -> Value,
    ) -> bool {
        let mut chunk = [0u8; 4096];
        loop {
            match std::io::Read::read(&mut self.stream, &mut chunk) {
                Ok(0) => return false,
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    let partial = self.buf.iter().rev().take_while(|&&b| b != b'\n').count();
                    if partial > MAX_REQUEST {
                        let _ = self.reply(&json!({"ok": false, "error": "request too long"}));
                        return false;
                    }
                    if self.buf.len() >= MAX_READ {
                        // The rest on the next poll: one client never holds the thread long.
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return false,
            }
        }
        // Every complete line is answered, in order; the answers go out in one write (a
        // client may pipeline many requests: see the module docs).
        let mut answers = String::new();
        let mut start = 0;
        plane.begin_batch();
        while let Some(nl) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let line = &self.buf[start..start + nl + 1];
            start += nl + 1;
            let answer = answer_line(plane, line, extra, reload);
            answers.push_str(&answer.to_string());
            answers.push('\n');
        }
        plane.end_batch();
        self.buf.drain(..start);
        answers.is_empty() || self.write_answers(answers.as_bytes()).is_ok()
    }

    fn reply(&mut self, v: &Value) -> std::io::Result<()> {
        let mut s = v.to_string();
        s.push('\n');
        self.write_answers(s.as_bytes())
    }

    fn write_answers(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        // A client that does not read its answers is dropped.
        self.stream.set_nonblocking(false)?;
        self.stream
            .set_write_timeout(Some(Duration::from_millis(200)))?;
        let r = self.stream.write_all(bytes);
        self.stream.set_nonblocking(true)?;
        r
    }
}

/// Answers one line of the wire: `{"ok": true, ...}` or `{"ok": false, "error": ...}`.
/// `reload` answers `reload` requests (they need the router's configuration).
pub(crate) fn answer_line(
    plane: &mut Plane,
    line: &[u8],
    extra: &dyn Fn() -> Value,
    reload: &mut dyn FnMut(&mut Plane, Option<&str>) -> Value,
) -> Value {
    let r = match Request::from_line(line) {
        Ok(Request::Reload { file }) => return reload(plane, file.as_deref()),
        Ok(req) => execute(plane, &req, extra),
        Err(e) => Err(e),
    };
    match r {
        Ok(r) => r.to_json(),
        Err(e) => json!({"ok": false, "error": e}),
    }
}

/// Carries out one request on the control plane: the one code path of the control socket
/// and of the in-process [`crate::Handle`]. `extra` adds fields to `status` answers (the
/// XDP counters, the host thread, the interfaces).
pub(crate) fn execute(
    plane: &mut Plane,
    req: &Request,
    extra: &dyn Fn() -> Value,
) -> Result<Response, String> {
    match req {
        Request::Status => {
            let mut s = plane.status();
            if let Value::Object(m) = extra() {
                for (k, v) in m {
                    s[k] = v;
                }
            }
            Ok(Response::Status(s))
        }
        Request::Faces => Ok(Response::Faces(plane.faces_json())),
        Request::Routes => Ok(Response::Routes {
            routes: plane.routes_json(),
            rib: plane.rib_json(),
        }),
        Request::FaceAdd {
            name,
            remote,
            interface,
        } => {
            let ifindex = match interface {
                Some(name) => Some(
                    plane
                        .interfaces
                        .iter()
                        .find(|(_, n)| n == name)
                        .map(|(i, _)| *i)
                        .ok_or_else(|| format!("ndx is not attached to {name:?}"))?,
                ),
                None => None,
            };
            let id = plane
                .add_face(name, remote, ifindex)
                .map_err(|e| e.to_string())?;
            Ok(Response::FaceAdded { id: id.0 })
        }
        Request::FaceRemove { face } => {
            plane.remove_face(face).map_err(|e| e.to_string())?;
            Ok(Response::Done)
        }
        Request::RouteAdd { prefix, face, cost } => {
            plane
                .add_route(prefix, face, *cost)
                .map_err(|e| e.to_string())?;
            Ok(Response::Done)
        }
        Request::RouteRemove { prefix, face } => {
            plane
                .remove_route(prefix, face.as_deref())
                .map_err(|e| e.to_string())?;
            Ok(Response::Done)
        }
        Request::StrategySet { prefix, strategy } => {
            plane
                .set_strategy(prefix, (*strategy).into())
                .map_err(|e| e.to_string())?;
            Ok(Response::Done)
        }
        // Needs the router's configuration: its control loop answers it before this.
        Request::Reload { .. } => Err("reload is answered by a running router only".into()),
    }
}

/// Why a control request failed on the client side.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket could not be reached.
    #[error(
        "cannot reach ndx at {path}: {source} (is `ndx run` running, and is this the right --socket?)"
    )]
    Connect {
        /// The socket path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The exchange failed midway.
    #[error("control socket: {0}")]
    Io(#[from] std::io::Error),
    /// The router answered with an error.
    #[error("{0}")]
    Refused(String),
    /// The answer was not JSON.
    #[error("control socket: bad answer: {0}")]
    BadAnswer(String),
}

/// Sends one request and returns its typed answer (an error when the router refuses it).
pub fn request(path: &Path, req: &Request) -> Result<Response, ClientError> {
    let v = exchange(path, &req.to_json().to_string())?;
    Response::from_json(req, v).map_err(|e| match e {
        AnswerError::Refused(m) => ClientError::Refused(m),
        AnswerError::Bad(m) => ClientError::BadAnswer(m),
    })
}

/// Sends one request and returns its answer as it is, `ok: false` included (what `ndx reload
/// --json` prints), waiting up to `timeout` for it.
pub fn request_answer(path: &Path, req: &Request, timeout: Duration) -> Result<Value, ClientError> {
    exchange_for(path, &req.to_json().to_string(), timeout)
}

/// Writes one line (without its newline) and reads the answer's line as JSON.
fn exchange(path: &Path, line: &str) -> Result<Value, ClientError> {
    exchange_for(path, line, Duration::from_secs(5))
}

/// [`exchange`], waiting up to `timeout` for the answer.
fn exchange_for(path: &Path, line: &str, timeout: Duration) -> Result<Value, ClientError> {
    let mut s = UnixStream::connect(path).map_err(|source| ClientError::Connect {
        path: path.to_path_buf(),
        source,
    })?;
    s.set_read_timeout(Some(timeout))?;
    let mut line = line.to_string();
    line.push('\n');
    s.write_all(line.as_bytes())?;
    let mut answer = String::new();
    BufReader::new(&s).read_line(&mut answer)?;
    serde_json::from_str(&answer).map_err(|e| ClientError::BadAnswer(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn bind_unix_replaces_a_stale_socket_and_leaves_other_files_alone() {
        let dir = std::env::temp_dir().join(format!("ndx-bind-{}", std::process::id()));
        let path = dir.join("s.sock");
        drop(bind_unix(&path, "live").unwrap()); // a server that died: its file stays
        let l = bind_unix(&path, "live").unwrap();
        let e = bind_unix(&path, "live").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AddrInUse, "{e}");
        drop(l);
        let file = dir.join("ndx.toml");
        std::fs::write(&file, b"[router]\n").unwrap();
        let e = bind_unix(&file, "live").unwrap_err();
        assert!(e.to_string().contains("not a socket"), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"[router]\n");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn pipelined_requests_are_answered_in_order() {
        let dir = std::env::temp_dir().join(format!("ndx-pipe-{}", std::process::id()));
        let path = dir.join("ctl.sock");
        let cfg = Config::parse("", Path::new("t")).unwrap();
        let (mut plane, _fib, _faces) = Plane::new(&cfg);
        let mut server = ControlServer::bind(&path).unwrap();
        let p2 = path.clone();
        let client = std::thread::spawn(move || {
            let mut s = UnixStream::connect(&p2).unwrap();
            let mut reqs = json!({"cmd": "face-add", "name": "up", "remote": "udp://10.1.1.1:6363"})
                .to_string() + "\n";
            for i in 0..500 {
                let add = json!({"cmd": "route-add", "prefix": format!("/p/{i}"), "face": "up"});
                let rm = json!({"cmd": "route-remove", "prefix": format!("/p/{i}")});
                reqs += &format!("{add}\n{rm}\n");
            }
            reqs += "{\"cmd\": \"fly\"}\n";
            s.write_all(reqs.as_bytes()).unwrap();
            let mut r = BufReader::new(s);
            let mut answers = Vec::new();
            for _ in 0..1002 {
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                answers.push(serde_json::from_str::<Value>(&line).unwrap());
            }
            answers
        });
        let extra = || json!({});
        while !client.is_finished() {
            server.poll(&mut plane, &extra);
            std::thread::sleep(Duration::from_millis(1));
        }
        let answers = client.join().unwrap();
        assert_eq!(answers[0]["id"], 1);
        assert!(answers[1..1001].iter().all(|a| a["ok"] == true));
        assert!(
            answers[1001]["error"]
                .as_str()
                .unwrap()
                .contains("unknown command")
        );
        assert_eq!(plane.routes_json().as_array().unwrap().len(), 0);
        drop(server);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn requests_over_a_real_socket() {
        let dir = std::env::temp_dir().join(format!("ndx-ctl-{}", std::process::id()));
        let path = dir.join("ctl.sock");
        let cfg = Config::parse("", Path::new("t")).unwrap();
        let (mut plane, _fib, _faces) = Plane::new(&cfg);
        let mut server = ControlServer::bind(&path).unwrap();
        assert!(
            ControlServer::bind(&path).is_err(),
            "a second router on the same socket is refused"
        );
        let p2 = path.clone();
        let client = std::thread::spawn(move || {
            let a = request(
                &p2,
                &Request::FaceAdd {
                    name: "up".into(),
                    remote: "udp://10.1.1.1:6363".into(),
                    interface: None,
                },
            )
            .unwrap();
            assert_eq!(a, Response::FaceAdded { id: 1 });
            let add = |face: &str, cost| Request::RouteAdd {
                prefix: "/x".into(),
                face: face.into(),
                cost,
            };
            assert_eq!(request(&p2, &add("up", 2)).unwrap(), Response::Done);
            let e = request(&p2, &add("zz", 0)).unwrap_err();
            assert!(e.to_string().contains("no face"), "{e}");
            let e = exchange(&p2, r#"{"cmd": "fly"}"#).unwrap();
            assert_eq!(e["ok"], false);
            assert!(
                e["error"].as_str().unwrap().contains("unknown command"),
                "{e}"
            );
            let e = exchange(
                &p2,
                r#"{"cmd": "route-add", "prefix": "/x", "face": "up", "weight": 1}"#,
            )
            .unwrap();
            assert!(
                e["error"]
                    .as_str()
                    .unwrap()
                    .contains("unknown field `weight`"),
                "{e}"
            );
            match request(&p2, &Request::Status).unwrap() {
                Response::Status(v) => v,
                other => panic!("{other:?}"),
            }
        });
        let extra = || json!({"xdp": {"redirected": 5}});
        while !client.is_finished() {
            server.poll(&mut plane, &extra);
            std::thread::sleep(Duration::from_millis(1));
        }
        let status = client.join().unwrap();
        assert_eq!(status["routes"][0]["prefix"], "/x");
        assert_eq!(status["routes"][0]["nexthops"][0]["cost"], 2);
        assert_eq!(status["xdp"]["redirected"], 5);
        // Connections past the bound are told so and closed; the others stay served.
        server.poll(&mut plane, &extra);
        assert_eq!(server.clients.len(), 0, "closed clients are dropped");
        let held: Vec<UnixStream> = (0..MAX_CLIENTS)
            .map(|_| UnixStream::connect(&path).unwrap())
            .collect();
        for _ in 0..3 {
            server.poll(&mut plane, &extra);
        }
        assert_eq!(server.clients.len(), MAX_CLIENTS);
        let p3 = path.clone();
        let late = std::thread::spawn(move || request(&p3, &Request::Status));
        while !late.is_finished() {
            server.poll(&mut plane, &extra);
            std::thread::sleep(Duration::from_millis(1));
        }
        let e = late.join().unwrap().unwrap_err();
        assert!(e.to_string().contains("too many control clients"), "{e}");
        drop(held);
        server.poll(&mut plane, &extra);
        assert_eq!(server.clients.len(), 0, "closed clients are dropped");
        drop(server);
        assert!(!path.exists(), "socket removed on drop");
        let e = request(&path, &Request::Status).unwrap_err();
        assert!(matches!(e, ClientError::Connect { .. }));
        let _ = std::fs::remove_dir_all(dir);
    }
}
