//! Shared test fixtures: a producer on a thread, a lossy/mangling UDP relay, python-ndn's
//! scripts and ndnd's forwarder ([`ndnd_fw`]), and skipping when a tool is missing.
#![allow(
    dead_code,
    unreachable_pub,
    reason = "each test binary uses a different part of the fixtures"
)]

mod content;
pub mod ndnd_fw;

pub use content::content;

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use ndx_app::{AppError, Endpoint, Producer, ProducerReport};
use sha2::{Digest, Sha256};

/// Skips a test for `reason` (a missing tool): prints `skipping: <reason>`, or panics under
/// `NDX_REQUIRE_ROOT_TESTS=1`.
pub fn skip(reason: &str) {
    if std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() == Ok("1") {
        panic!("NDX_REQUIRE_ROOT_TESTS=1 but {reason} (install: see crates/ndx-app/README.md)");
    }
    eprintln!("skipping: {reason}");
}

/// Where python-ndn is looked for when `$NDX_PYTHON` is not set.
const DEFAULT_PYTHON: &str = "/opt/ndx-interop/venv/bin/python";

/// The python-ndn 0.5.2 interpreter (`$NDX_PYTHON`, else [`DEFAULT_PYTHON`]), or why there is
/// none.
pub fn python() -> Result<PathBuf, String> {
    let py =
        std::env::var_os("NDX_PYTHON").map_or_else(|| PathBuf::from(DEFAULT_PYTHON), PathBuf::from);
    match Command::new(&py)
        .args(["-c", "import ndn.app, ndn.app_support.segment_fetcher"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(py),
        Ok(_) => Err(format!("{} cannot import python-ndn", py.display())),
        Err(e) => Err(format!("{} not runnable: {e}", py.display())),
    }
}

/// [`python`], or `None` after [`skip`] when there is none.
pub fn python_or_skip() -> Option<PathBuf> {
    python().map_err(|r| skip(&r)).ok()
}

/// A python-ndn script of `tests/interop`.
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name)
}

/// `python script(name) URL ARGS...` on transport `url`, its stdout piped.
pub fn pyndn(py: &std::path::Path, name: &str, url: &str, args: &[&std::ffi::OsStr]) -> Command {
    let mut c = Command::new(py);
    c.arg(script(name))
        .arg(url)
        .args(args)
        .env("NDN_CLIENT_TRANSPORT", url)
        .stdout(Stdio::piped());
    c
}

/// The child's stdout lines, on a channel.
pub fn lines(child: &mut Child) -> mpsc::Receiver<String> {
    let out = child.stdout.take().expect("stdout piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The child's first stdout line within `secs` seconds; panics with `what` otherwise.
pub fn first_line(child: &mut Child, secs: u64, what: &str) -> String {
    lines(child)
        .recv_timeout(Duration::from_secs(secs))
        .expect(what)
}

/// What `pyndn_consumer.py` prints after fetching `data`: `ok LENGTH SHA256-HEX`.
pub fn consumer_ok_line(data: &[u8]) -> String {
    format!(
        "ok {} {}",
        data.len(),
        Sha256::digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

/// A producer running on its own thread; stopped on drop.
pub struct Running {
    /// Its UDP address (`0.0.0.0:0` for a producer attached to a forwarder's Unix socket).
    pub addr: SocketAddr,
    /// Where it is attached.
    pub endpoint: Endpoint,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<ProducerReport, AppError>>>,
}

impl Running {
    pub fn start(mut p: Producer) -> Self {
        let endpoint = p.endpoint().clone();
        let addr = match &endpoint {
            Endpoint::Udp(a) => *a,
            Endpoint::Unix(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let handle = std::thread::spawn(move || p.run(&s));
        Self {
            addr,
            endpoint,
            stop,
            handle: Some(handle),
        }
    }

    pub fn finish(mut self) -> ProducerReport {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().unwrap().join().unwrap().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

type Mangle = dyn Fn(&mut Vec<u8>) + Send + Sync;

/// Looks at a datagram from the client: `Some(reply)` answers the client with `reply` instead
/// of relaying it to the server.
type Answer = dyn Fn(&[u8]) -> Option<Vec<u8>> + Send + Sync;

/// A UDP relay between one client (who sends to `addr`) and a fixed server, dropping a
/// fraction of the datagrams in each direction, optionally rewriting server replies, and
/// optionally answering the client itself (e.g. with Nacks).
pub struct Relay {
    pub addr: SocketAddr,
    pub dropped: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<()>>,
}

impl Relay {
    pub fn start(server: SocketAddr, loss_per_mille: u64, mangle: Option<Box<Mangle>>) -> Self {
        Self::spawn(server, loss_per_mille, mangle, None)
    }

    /// A lossless relay that lets `answer` reply to the client's datagrams it chooses.
    pub fn answering(server: SocketAddr, answer: Box<Answer>) -> Self {
        Self::spawn(server, 0, None, Some(answer))
    }

    fn spawn(
        server: SocketAddr,
        loss_per_mille: u64,
        mangle: Option<Box<Mangle>>,
        answer: Option<Box<Answer>>,
    ) -> Self {
        let any = if server.is_ipv4() {
            "127.0.0.1:0"
        } else {
            "[::1]:0"
        };
        let front = UdpSocket::bind(any).unwrap();
        let back = UdpSocket::bind(any).unwrap();
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        }
        let addr = front.local_addr().unwrap();
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(AtomicU64::new(0));
        let mangle: Arc<Option<Box<Mangle>>> = Arc::new(mangle);
        let mut handles = Vec::new();
        {
            let (front, back) = (front.try_clone().unwrap(), back.try_clone().unwrap());
            let (client, stop, dropped) = (client.clone(), stop.clone(), dropped.clone());
            handles.push(std::thread::spawn(move || {
                let mut buf = vec![0; 65536];
                let mut rng = 0x1234_5678_9abc_def1u64;
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, from)) = front.recv_from(&mut buf) else {
                        continue;
                    };
                    *client.lock().unwrap() = Some(from);
                    if lose(&mut rng, loss_per_mille) {
                        dropped.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    if let Some(reply) = answer.as_ref().and_then(|a| a(&buf[..n])) {
                        let _ = front.send_to(&reply, from);
                        continue;
                    }
                    let _ = back.send_to(&buf[..n], server);
                }
            }));
        }
        {
            let (client, stop, dropped) = (client.clone(), stop.clone(), dropped.clone());
            handles.push(std::thread::spawn(move || {
                let mut buf = vec![0; 65536];
                let mut rng = 0x0fed_cba9_8765_4321u64;
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, _)) = back.recv_from(&mut buf) else {
                        continue;
                    };
                    if lose(&mut rng, loss_per_mille) {
                        dropped.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let mut d = buf[..n].to_vec();
                    if let Some(m) = mangle.as_ref() {
                        m(&mut d);
                    }
                    let to = *client.lock().unwrap();
                    if let Some(to) = to {
                        let _ = front.send_to(&d, to);
                    }
                }
            }));
        }
        Self {
            addr,
            dropped,
            stop,
            handles,
        }
    }
}

fn lose(rng: &mut u64, per_mille: u64) -> bool {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng % 1000 < per_mille
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}
