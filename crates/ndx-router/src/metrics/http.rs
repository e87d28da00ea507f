//! The endpoint's HTTP side: a std `TcpListener` on its own thread, one short-lived thread
//! per scrape, `GET /metrics` or a 404 (see the module above for the whole contract).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{Sample, render};

/// The Content-Type of `GET /metrics`.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// Most bytes of a request head (request line and headers).
pub const MAX_REQUEST: usize = 8 * 1024;
/// Most scrapes served at once (more are answered 503 at once).
pub const MAX_SCRAPES: usize = 4;
/// How long a scrape waits for the control loop's sample.
pub const SAMPLE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a client may take to send its request or read the answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

/// A request for a sample: where to send it.
type SampleRequest = SyncSender<Sample>;

/// The endpoint: its listening thread, and the control loop's end of the sample requests.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    requests: Mutex<Receiver<SampleRequest>>,
}

impl MetricsServer {
    /// Binds `addr` and starts the `ndx-metrics` thread.
    pub fn start(addr: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = channel::<SampleRequest>();
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("ndx-metrics".into())
                .spawn(move || accept_loop(&listener, &stop, &tx))?
        };
        Ok(Self {
            addr,
            stop,
            thread: Some(thread),
            requests: Mutex::new(rx),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers the scrapes waiting for a sample (one `make` call for all of them); a
    /// `try_recv` when there are none. Called by the control loop every turn.
    pub fn answer(&self, make: impl FnOnce() -> Sample) {
        let rx = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        let mut waiting = Vec::new();
        while let Ok(r) = rx.try_recv() {
            waiting.push(r);
        }
        let Some(last) = waiting.pop() else {
            return;
        };
        let sample = make();
        for r in waiting {
            let _ = r.try_send(sample.clone());
        }
        let _ = last.try_send(sample);
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Accepts connections until `stop`; each is served on a thread of its own.
fn accept_loop(listener: &TcpListener, stop: &AtomicBool, tx: &Sender<SampleRequest>) {
    let busy = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((mut stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(CLIENT_TIMEOUT));
                let _ = stream.set_write_timeout(Some(CLIENT_TIMEOUT));
                if busy.fetch_add(1, Ordering::AcqRel) >= MAX_SCRAPES {
                    busy.fetch_sub(1, Ordering::AcqRel);
                    respond(&mut stream, 503, "too many scrapes at once\n", "text/plain");
                    continue;
                }
                let (tx, busy2) = (tx.clone(), busy.clone());
                let spawned =
                    std::thread::Builder::new()
                        .name("ndx-scrape".into())
                        .spawn(move || {
                            serve(stream, &tx);
                            busy2.fetch_sub(1, Ordering::AcqRel);
                        });
                if spawned.is_err() {
                    busy.fetch_sub(1, Ordering::AcqRel);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// What a request head asks for.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    /// `GET /metrics`.
    Metrics,
    /// Any other method or path.
    NotFound,
    /// Not an HTTP request line.
    Bad,
    /// The head did not end within [`MAX_REQUEST`] bytes.
    TooLarge,
}

/// Reads a request head (up to the blank line, at most [`MAX_REQUEST`] bytes) and parses
/// its request line.
fn read_request(stream: &mut impl Read) -> io::Result<Request> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = find_head_end(&buf) {
            return Ok(parse_request(&buf[..end]));
        }
        if buf.len() >= MAX_REQUEST {
            return Ok(Request::TooLarge);
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(if buf.is_empty() {
                Request::Bad
            } else {
                parse_request(&buf)
            });
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    let crlf = buf.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = buf.windows(2).position(|w| w == b"\n\n");
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn parse_request(head: &[u8]) -> Request {
    let Ok(head) = std::str::from_utf8(head) else {
        return Request::Bad;
    };
    let line = head.lines().next().unwrap_or("");
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Request::Bad;
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || !target.starts_with('/') {
        return Request::Bad;
    }
    let path = target.split('?').next().unwrap_or(target);
    if method == "GET" && path == "/metrics" {
        Request::Metrics
    } else {
        Request::NotFound
    }
}

/// Serves one connection.
fn serve(mut stream: TcpStream, tx: &Sender<SampleRequest>) {
    match read_request(&mut stream) {
        Ok(Request::Metrics) => {
            let (reply, answer) = sync_channel(1);
            let sample = tx
                .send(reply)
                .ok()
                .and_then(|()| answer.recv_timeout(SAMPLE_TIMEOUT).ok());
            match sample {
                Some(s) => respond(&mut stream, 200, &render(s), CONTENT_TYPE),
                None => respond(
                    &mut stream,
                    503,
                    "the router's control loop did not answer\n",
                    "text/plain",
                ),
            }
        }
        Ok(Request::NotFound) => respond(
            &mut stream,
            404,
            "not found: the metrics are at GET /metrics\n",
            "text/plain",
        ),
        Ok(Request::Bad) => respond(&mut stream, 400, "bad request\n", "text/plain"),
        Ok(Request::TooLarge) => {
            respond(&mut stream, 431, "request head too large\n", "text/plain")
        }
        Err(_) => {}
    }
}

fn respond(stream: &mut TcpStream, code: u16, body: &str, content_type: &str) {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        431 => "Request Header Fields Too Large",
        _ => "Service Unavailable",
    };
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()));
    let _ = stream.flush();
}
