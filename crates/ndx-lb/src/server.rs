//! The server end of the control protocol, polled from the runner's loop.
//!
//! [`ControlServer::poll`] accepts connections and answers every complete request line with
//! the caller's handler, waiting up to a timeout for something to do; between checks it
//! sleeps 2 ms (std sockets in non-blocking mode: no unsafe code, no extra dependency), which
//! is ample for a control socket. The runner calls it in its loop, e.g. with a timeout of
//! 50 ms or until [`Cluster::next_deadline`](crate::Cluster::next_deadline), and calls
//! [`Cluster::tick`](crate::Cluster::tick) after it.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::proto::{Request, Response};

/// Most bytes in one request line.
pub const MAX_REQUEST: usize = 64 * 1024;

/// Most clients connected at once (more are closed on arrival).
pub const MAX_CLIENTS: usize = 64;

/// Request lines answered per client per `poll` turn (a pipelining client waits for the next).
const MAX_LINES_PER_TURN: usize = 16;

/// How long `poll` sleeps between looks when there is nothing to do.
const NAP: Duration = Duration::from_millis(2);

/// The listening side of the control socket.
#[derive(Debug)]
pub struct ControlServer {
    listener: UnixListener,
    path: PathBuf,
    clients: Vec<Client>,
}

#[derive(Debug)]
struct Client {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl ControlServer {
    /// Binds the socket at `path`, creating its directory. A stale socket file (left by a
    /// front end that died) is replaced; if another front end answers there, this fails with
    /// `AddrInUse`. The socket file is removed when the server is dropped.
    pub fn bind(path: &Path) -> std::io::Result<Self> {
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)?;
        }
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            use std::os::unix::fs::FileTypeExt;
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
                        format!("{}: another front end is running there", path.display()),
                    ));
                }
                // Nobody listens: a stale socket of a front end that died.
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                    std::fs::remove_file(path)?;
                }
                Err(e) => return Err(e),
            }
        }
        let listener = UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        Ok(Self {
            listener,
            path: path.to_path_buf(),
            clients: Vec::new(),
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accepts new clients and answers their complete request lines with `handler`, until at
    /// least one request was answered or `timeout` has passed (a zero timeout looks once).
    /// Returns how many requests were answered. A line that is not a [`Request`] is answered
    /// `{"ok":false,"error":"bad request: ..."}`; the connection stays open.
    pub fn poll(
        &mut self,
        handler: &mut dyn FnMut(Request) -> Response,
        timeout: Duration,
    ) -> usize {
        let start = Instant::now();
        loop {
            self.accept();
            let mut answered = 0;
            self.clients.retain_mut(|c| c.serve(handler, &mut answered));
            let waited = start.elapsed();
            if answered > 0 || waited >= timeout {
                return answered;
            }
            std::thread::sleep(NAP.min(timeout - waited));
        }
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    if self.clients.len() >= MAX_CLIENTS {
                        let _ = stream.set_write_timeout(Some(Duration::from_millis(50)));
                        let mut busy = Response::error(format!(
                            "busy: {MAX_CLIENTS} clients are connected already"
                        ))
                        .to_line();
                        busy.push('\n');
                        let _ = stream.write_all(busy.as_bytes());
                    } else if stream.set_nonblocking(true).is_ok() {
                        self.clients.push(Client {
                            stream,
                            buf: Vec::new(),
                        });
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
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
        handler: &mut dyn FnMut(Request) -> Response,
        answered: &mut usize,
    ) -> bool {
        let mut chunk = [0u8; 4096];
        let mut open = true;
        // At most MAX_REQUEST bytes per turn: a client that writes without end cannot hold
        // the loop (and the drain timers) or grow the buffer without bound.
        let mut read = 0;
        while read < MAX_REQUEST && self.buf.len() <= MAX_REQUEST {
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    open = false;
                    break;
                }
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    read += n;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        // Answer the complete lines, even from a client that has shut its writing side; at
        // most MAX_LINES_PER_TURN per turn, the rest on the next.
        let mut lines = 0;
        while let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
            if lines == MAX_LINES_PER_TURN {
                return true;
            }
            lines += 1;
            if nl > MAX_REQUEST {
                let _ = self.reply(&Response::error(format!(
                    "bad request: longer than {MAX_REQUEST} bytes"
                )));
                return false;
            }
            let line: Vec<u8> = self.buf.drain(..=nl).collect();
            let text = String::from_utf8_lossy(&line);
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            let answer = match serde_json::from_str::<Request>(text) {
                Ok(req) => handler(req),
                Err(e) => Response::error(format!("bad request: {e}")),
            };
            *answered += 1;
            if self.reply(&answer).is_err() {
                return false;
            }
        }
        if self.buf.len() > MAX_REQUEST {
            let _ = self.reply(&Response::error(format!(
                "bad request: longer than {MAX_REQUEST} bytes"
            )));
            return false;
        }
        open
    }

    fn reply(&mut self, r: &Response) -> std::io::Result<()> {
        // Answers are small; a client that does not read them is dropped.
        self.stream.set_nonblocking(false)?;
        self.stream
            .set_write_timeout(Some(Duration::from_millis(200)))?;
        let mut s = r.to_line();
        s.push('\n');
        let w = self.stream.write_all(s.as_bytes());
        self.stream.set_nonblocking(true)?;
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{ClientError, request};
    use crate::cluster::{Cluster, RouterSpec};
    use crate::config::LbConfig;
    use crate::proto::Status;
    use std::io::{BufRead, BufReader};
    use std::net::Ipv4Addr;

    fn temp_socket(tag: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("ndx-lb-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (dir.join("run").join("lb.sock"), dir)
    }

    #[test]
    fn requests_over_a_real_socket_drive_the_cluster() {
        let (path, dir) = temp_socket("server");
        let cfg = LbConfig::from_toml(
            "[lb]\ninterfaces = [\"eth0\"]\n[[router]]\nname = \"ir1\"\naddress = \"10.3.1.2\"\nport = 6371\n",
        )
        .unwrap();
        let now = Instant::now();
        let mut cluster = Cluster::from_config(&cfg, now).unwrap();
        let mut server = ControlServer::bind(&path).unwrap();
        assert_eq!(
            ControlServer::bind(&path).unwrap_err().kind(),
            ErrorKind::AddrInUse,
            "a second front end on the same socket is refused"
        );
        let p = path.clone();
        let client = std::thread::spawn(move || {
            let t = Duration::from_secs(5);
            let add = Request::Add {
                router: RouterSpec {
                    name: "ir2".into(),
                    address: Ipv4Addr::new(10, 3, 2, 2),
                    port: 6372,
                    weight: 3,
                },
            };
            assert_eq!(request(&p, &add, t).unwrap(), Response::ok());
            let e = request(&p, &add, t).unwrap_err();
            assert!(
                matches!(&e, ClientError::Refused(m) if m.contains("exists already")),
                "{e}"
            );
            request(&p, &Request::Remove { name: "ir1".into() }, t).unwrap();
            let e = request(
                &p,
                &Request::Weight {
                    name: "ir1".into(),
                    weight: 2,
                },
                t,
            )
            .unwrap_err();
            assert!(e.to_string().contains("draining"), "{e}");
            match request(&p, &Request::Status, t).unwrap() {
                Response::Ok { status: Some(s) } => *s,
                other => panic!("{other:?}"),
            }
        });
        let mut ops = Vec::new();
        let mut handler = |req: Request| {
            let r = match req {
                Request::Status => return Response::status(Status::new(&cfg, &cluster, now)),
                Request::Add { router } => cluster.add(router, now),
                Request::Remove { name } => cluster.remove(&name, now),
                Request::Weight { name, weight } => cluster.set_weight(&name, weight, now),
            };
            match r {
                Ok(o) => {
                    ops.extend(o);
                    Response::ok()
                }
                Err(e) => Response::error(e),
            }
        };
        let mut answered = 0;
        while !client.is_finished() {
            answered += server.poll(&mut handler, Duration::from_millis(20));
        }
        let status = client.join().unwrap();
        answered += server.poll(&mut handler, Duration::ZERO);
        assert_eq!(answered, 5);
        assert!(!ops.is_empty());
        let names: Vec<_> = status
            .routers
            .iter()
            .map(|r| r.router.name.as_str())
            .collect();
        assert_eq!(names, ["ir1", "ir2"]);
        assert_eq!(
            status.routers[1].router.cells, 4096,
            "ir1 left the hash space"
        );
        drop(server);
        assert!(!path.exists(), "socket removed on drop");
        let e = request(&path, &Request::Status, Duration::from_secs(1)).unwrap_err();
        assert!(matches!(e, ClientError::NoFrontEnd { .. }), "{e:?}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn bad_lines_get_an_error_and_the_connection_stays_usable() {
        let (path, dir) = temp_socket("bad");
        let mut server = ControlServer::bind(&path).unwrap();
        let mut s = UnixStream::connect(&path).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"this is not json\n{\"op\":\"fly\"}\n\n{\"op\":\"status\"}\n")
            .unwrap();
        let mut handler = |req: Request| {
            assert_eq!(req, Request::Status);
            Response::error("handled")
        };
        let mut answered = 0;
        let deadline = Instant::now() + Duration::from_secs(5);
        while answered < 3 && Instant::now() < deadline {
            answered += server.poll(&mut handler, Duration::from_millis(20));
        }
        assert_eq!(answered, 3, "the empty line is skipped");
        let mut r = BufReader::new(s.try_clone().unwrap());
        let mut line = String::new();
        let mut next = || {
            line.clear();
            r.read_line(&mut line).unwrap();
            line.trim_end().to_string()
        };
        let first = next();
        assert!(
            first.starts_with(r#"{"ok":false,"error":"bad request: "#),
            "{first}"
        );
        let second = next();
        assert!(
            second.contains("bad request: unknown variant `fly`"),
            "{second}"
        );
        assert_eq!(next(), r#"{"ok":false,"error":"handled"}"#);
        // Still usable after the errors.
        s.write_all(b"{\"op\":\"status\"}\n").unwrap();
        assert_eq!(server.poll(&mut handler, Duration::from_secs(5)), 1);
        assert_eq!(next(), r#"{"ok":false,"error":"handled"}"#);
        drop(server);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_stale_socket_file_is_replaced_and_poll_waits_out_its_timeout() {
        let (path, dir) = temp_socket("stale");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        drop(UnixListener::bind(&path).unwrap());
        assert!(path.exists(), "a dead front end's socket file is left");
        let mut server = ControlServer::bind(&path).unwrap();
        let mut handler = |_req: Request| Response::ok();
        let t0 = Instant::now();
        assert_eq!(server.poll(&mut handler, Duration::from_millis(30)), 0);
        assert!(t0.elapsed() >= Duration::from_millis(30));
        assert_eq!(server.path(), path);
        drop(server);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_file_that_is_not_a_socket_is_left_alone() {
        let (path, dir) = temp_socket("notsock");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"[lb]\n").unwrap();
        let err = ControlServer::bind(&path).unwrap_err();
        assert!(err.to_string().contains("not a socket"), "{err}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"[lb]\n",
            "the file survives"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_oversized_line_is_refused_and_pipelined_lines_are_answered_over_turns() {
        let (path, dir) = temp_socket("big");
        let mut server = ControlServer::bind(&path).unwrap();
        let mut handler = |_req: Request| Response::ok();
        let mut c = UnixStream::connect(&path).unwrap();
        // 40 pipelined requests: all answered, 16 per turn at most.
        c.write_all("{\"op\":\"status\"}\n".repeat(40).as_bytes())
            .unwrap();
        let mut total = 0;
        for _ in 0..10 {
            let n = server.poll(&mut handler, Duration::from_millis(20));
            assert!(n <= MAX_LINES_PER_TURN, "{n} in one turn");
            total += n;
        }
        assert_eq!(total, 40);
        // A line longer than MAX_REQUEST: refused, connection closed.
        let mut big = UnixStream::connect(&path).unwrap();
        let _ = big.write_all(&vec![b'x'; MAX_REQUEST + 10]);
        let _ = big.write_all(b"\n");
        for _ in 0..5 {
            server.poll(&mut handler, Duration::from_millis(10));
        }
        let mut answer = String::new();
        big.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(&big), &mut answer);
        assert!(answer.contains("longer than"), "{answer}");
        drop(server);
        let _ = std::fs::remove_dir_all(dir);
    }
}
