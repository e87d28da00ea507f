//! systemd service notification (`Type=notify`, `WatchdogSec=`), without libsystemd: one
//! datagram per message to `$NOTIFY_SOCKET`, a filesystem path (`/run/systemd/notify`) or an
//! abstract socket name (`@/org/freedesktop/systemd1/notify/...`), as `sd_notify(3)` does.
//!
//! - `NOTIFY_SOCKET` unset: not under systemd, [`Notifier::from_env`] is `None`, silently.
//! - Set but unusable (an unsupported address family such as `vsock:`, a path nobody listens
//!   on): a warning says why, and the router runs without notifications (systemd then reports
//!   the start as timed out, which is the honest outcome).
//! - `WATCHDOG_USEC` (with `WATCHDOG_PID`, when set, naming this process) turns the watchdog
//!   on; [`Notifier::watchdog_interval`] is half its timeout, as `sd_watchdog_enabled(3)`
//!   advises. *When* to send `WATCHDOG=1` is the caller's decision (`Router::run` sends it only
//!   while every shard worker makes progress).

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Why `$NOTIFY_SOCKET` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// The variable is set but empty.
    #[error("NOTIFY_SOCKET is set but empty")]
    Empty,
    /// Neither a path (`/...`) nor an abstract name (`@...`).
    #[error("NOTIFY_SOCKET={0:?}: unsupported address (expected /path or @abstract-name)")]
    Unsupported(String),
    /// The socket could not be created or reached.
    #[error("NOTIFY_SOCKET={addr:?}: {source}")]
    Io {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// `WATCHDOG_USEC` is not a positive number of microseconds.
    #[error("WATCHDOG_USEC={0:?}: not a positive number of microseconds")]
    WatchdogUsec(String),
}

/// The notification socket, when running under systemd.
#[derive(Debug)]
pub struct Notifier {
    sock: UnixDatagram,
    addr: String,
    watchdog: Option<Duration>,
    /// A send failed once already (warned once, not at every ping).
    failed: AtomicBool,
}

/// The address `NOTIFY_SOCKET` names.
fn parse_addr(s: &str) -> Result<SocketAddr, NotifyError> {
    let io = |source| NotifyError::Io {
        addr: s.to_owned(),
        source,
    };
    match s.as_bytes().first() {
        None => Err(NotifyError::Empty),
        Some(b'/') => SocketAddr::from_pathname(s).map_err(io),
        Some(b'@') => SocketAddr::from_abstract_name(&s.as_bytes()[1..]).map_err(io),
        Some(_) => Err(NotifyError::Unsupported(s.to_owned())),
    }
}

impl Notifier {
    /// From the environment (`NOTIFY_SOCKET`, `WATCHDOG_USEC`, `WATCHDOG_PID`): `None` when
    /// `NOTIFY_SOCKET` is unset, or (after a warning saying why) when it cannot be used.
    pub fn from_env() -> Option<Self> {
        let var = |k| std::env::var(k).ok();
        let (socket, pid) = (var("NOTIFY_SOCKET"), var("WATCHDOG_PID"));
        let r = match Self::new(
            socket.as_deref(),
            var("WATCHDOG_USEC").as_deref(),
            pid.as_deref(),
        ) {
            Err(e @ NotifyError::WatchdogUsec(_)) => {
                tracing::warn!("systemd watchdog off: {e}");
                Self::new(socket.as_deref(), None, pid.as_deref())
            }
            r => r,
        };
        r.unwrap_or_else(|e| {
            tracing::warn!("systemd notification disabled: {e}");
            None
        })
    }

    /// From the values of `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID`. The socket is
    /// connected at once, so an address nobody listens on is an error here, not a silent loss
    /// later. A watchdog meant for another process (`WATCHDOG_PID`) is ignored.
    pub fn new(
        socket: Option<&str>,
        watchdog_usec: Option<&str>,
        watchdog_pid: Option<&str>,
    ) -> Result<Option<Self>, NotifyError> {
        let Some(socket) = socket else {
            return Ok(None);
        };
        let addr = parse_addr(socket)?;
        let io = |source| NotifyError::Io {
            addr: socket.to_owned(),
            source,
        };
        let sock = UnixDatagram::unbound().map_err(io)?;
        sock.connect_addr(&addr).map_err(io)?;
        // Never block the control loop on a full socket buffer: a lost ping is better.
        sock.set_nonblocking(true).map_err(io)?;
        let for_us =
            watchdog_pid.is_none_or(|p| p.trim().parse::<u32>().ok() == Some(std::process::id()));
        let watchdog = match watchdog_usec {
            Some(v) if for_us => match v.trim().parse::<u64>() {
                Ok(us) if us > 0 => Some(Duration::from_micros(us / 2)),
                _ => return Err(NotifyError::WatchdogUsec(v.to_owned())),
            },
            _ => None,
        };
        Ok(Some(Self {
            sock,
            addr: socket.to_owned(),
            watchdog,
            failed: AtomicBool::new(false),
        }))
    }

    /// Sends one message (`READY=1`, `STOPPING=1`, `STATUS=...`, `WATCHDOG=1`, or several
    /// separated by newlines); false if it could not be sent (warned about once).
    pub fn send(&self, state: &str) -> bool {
        match self.sock.send(state.as_bytes()) {
            Ok(_) => true,
            Err(e) => {
                if !self.failed.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "systemd notification to NOTIFY_SOCKET={:?} failed: {e} \
                         (warned once)",
                        self.addr
                    );
                }
                false
            }
        }
    }

    /// How often to send `WATCHDOG=1`: half of `WATCHDOG_USEC`; `None` without a watchdog.
    pub fn watchdog_interval(&self) -> Option<Duration> {
        self.watchdog
    }
}

/// `STATUS=` text: one line (newlines would start new assignments).
pub fn status_line(s: &str) -> String {
    let one: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    format!("STATUS={one}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recv(server: &UnixDatagram) -> String {
        server
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut buf = [0u8; 256];
        let len = server.recv(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..len]).into_owned()
    }

    #[test]
    fn sends_states_to_a_path_socket() {
        let dir = std::env::temp_dir().join(format!("ndx-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify");
        let _ = std::fs::remove_file(&path);
        let server = UnixDatagram::bind(&path).unwrap();
        let n = Notifier::new(path.to_str(), None, None).unwrap().unwrap();
        assert!(n.send("READY=1"));
        assert_eq!(recv(&server), "READY=1");
        assert_eq!(n.watchdog_interval(), None);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn sends_states_to_an_abstract_socket() {
        let name = format!("ndx-notify-test-{}", std::process::id());
        let server =
            UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap())
                .unwrap();
        let n = Notifier::new(Some(&format!("@{name}")), Some("4000000"), None)
            .unwrap()
            .unwrap();
        assert!(n.send("READY=1\nSTATUS=up"));
        assert_eq!(recv(&server), "READY=1\nSTATUS=up");
        assert!(n.send("WATCHDOG=1"));
        assert_eq!(recv(&server), "WATCHDOG=1");
        assert_eq!(n.watchdog_interval(), Some(Duration::from_secs(2)));
    }

    #[test]
    fn unset_is_a_no_op() {
        assert!(
            Notifier::new(None, Some("1000000"), None)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn unusable_addresses_are_clear_errors() {
        let e = Notifier::new(Some(""), None, None).unwrap_err();
        assert!(matches!(e, NotifyError::Empty), "{e}");
        let e = Notifier::new(Some("vsock:2:1234"), None, None).unwrap_err();
        assert!(e.to_string().contains("unsupported address"), "{e}");
        // Nobody listens there.
        let e = Notifier::new(Some("/nonexistent/ndx/notify"), None, None).unwrap_err();
        assert!(
            e.to_string().contains("/nonexistent/ndx/notify")
                && matches!(e, NotifyError::Io { .. }),
            "{e}"
        );
        let e = Notifier::new(
            Some(&format!("@ndx-nobody-listens-{}", std::process::id())),
            None,
            None,
        )
        .unwrap_err();
        assert!(matches!(e, NotifyError::Io { .. }), "{e}");
    }

    #[test]
    fn watchdog_settings() {
        let name = format!("ndx-notify-wd-{}", std::process::id());
        let _server =
            UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap())
                .unwrap();
        let at = format!("@{name}");
        let me = std::process::id().to_string();
        let n = Notifier::new(Some(&at), Some("10000000"), Some(&me))
            .unwrap()
            .unwrap();
        assert_eq!(n.watchdog_interval(), Some(Duration::from_secs(5)));
        // Another process's watchdog is not ours.
        let other = (std::process::id() + 1).to_string();
        let n = Notifier::new(Some(&at), Some("10000000"), Some(&other))
            .unwrap()
            .unwrap();
        assert_eq!(n.watchdog_interval(), None);
        let e = Notifier::new(Some(&at), Some("ten"), None).unwrap_err();
        assert!(e.to_string().contains("WATCHDOG_USEC=\"ten\""), "{e}");
        assert!(Notifier::new(Some(&at), Some("0"), None).is_err());
    }

    #[test]
    fn status_is_one_line() {
        assert_eq!(status_line("a\nb\rc"), "STATUS=a b c");
    }
}
