//! systemd service notification (`Type=notify`, `WatchdogSec=`), without libsystemd: one
//! datagram per message to `$NOTIFY_SOCKET`.

use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

/// The notification socket, when running under systemd.
#[derive(Debug)]
pub struct Notifier {
    sock: UnixDatagram,
    path: String,
    watchdog: Option<Duration>,
    last: Instant,
}

impl Notifier {
    /// From the environment (`NOTIFY_SOCKET`, `WATCHDOG_USEC`); `None` outside systemd.
    /// Abstract socket names (`@...`) are not supported by std and are ignored.
    pub fn from_env() -> Option<Self> {
        let path = std::env::var("NOTIFY_SOCKET").ok()?;
        if path.starts_with('@') {
            return None;
        }
        let watchdog = std::env::var("WATCHDOG_USEC")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(|us| Duration::from_micros(us / 2));
        Some(Self {
            sock: UnixDatagram::unbound().ok()?,
            path,
            watchdog,
            last: Instant::now(),
        })
    }

    /// Sends one state string (`READY=1`, `STOPPING=1`, `STATUS=...`).
    pub fn send(&self, state: &str) {
        let _ = self.sock.send_to(state.as_bytes(), &self.path);
    }

    /// Pets the watchdog when half its period has passed.
    pub fn tick(&mut self) {
        if let Some(p) = self.watchdog
            && self.last.elapsed() >= p
        {
            self.send("WATCHDOG=1");
            self.last = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_states_to_the_socket() {
        let dir = std::env::temp_dir().join(format!("ndx-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify");
        let server = UnixDatagram::bind(&path).unwrap();
        let n = Notifier {
            sock: UnixDatagram::unbound().unwrap(),
            path: path.to_string_lossy().into_owned(),
            watchdog: None,
            last: Instant::now(),
        };
        n.send("READY=1");
        let mut buf = [0u8; 64];
        let len = server.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"READY=1");
        let _ = std::fs::remove_dir_all(dir);
    }
}
