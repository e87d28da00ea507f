//! ndnd's forwarder (`ndnd fw run`, v1.5.3) in a private directory, for the tests that go
//! through a real forwarder: ndx-app's `interop_ndnd` and the `ndx` binary's `apps_unix`
//! (which includes this file by path).

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A child process killed (by its id) and reaped when dropped.
pub struct Kill(pub Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One ndnd forwarder with its own unix socket (and, with UDP, a private UDP port); stopped
/// and its directory removed on drop.
pub struct Forwarder {
    pub bin: PathBuf,
    pub dir: PathBuf,
    pub sock: PathBuf,
    /// Its UDP port (0 when it has no UDP face).
    pub port: u16,
    _child: Kill,
}

impl Forwarder {
    /// Starts ndnd in `$TMPDIR/ndx-<tag>-<pid>/` with a unix socket `fw.sock`, and with `udp` a
    /// unicast UDP face on a free port (MTU 1420) and a 64-entry content store; waits (up to
    /// 20 s) for the socket.
    pub fn start(bin: &Path, tag: &str, udp: bool) -> Self {
        let dir = std::env::temp_dir().join(format!("ndx-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("fw.sock");
        let (port, udp_yml, tables_yml) = if udp {
            // A free port on both families (ndnd listens on 0.0.0.0 and [::]).
            let port = UdpSocket::bind("[::]:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            (
                port,
                format!(
                    "enabled_unicast: true\n    enabled_multicast: false\n    \
                     port_unicast: {port}\n    default_mtu: 1420\n"
                ),
                "tables:\n  content_store:\n    capacity: 64\n",
            )
        } else {
            (
                0,
                "enabled_unicast: false\n    enabled_multicast: false\n".to_owned(),
                "",
            )
        };
        let yml = format!(
            "core:\n  log_level: WARN\nfaces:\n  udp:\n    {udp_yml}  tcp:\n    enabled: false\n  \
             unix:\n    enabled: true\n    socket_path: {}\n  websocket:\n    enabled: false\n\
             {tables_yml}",
            sock.display()
        );
        std::fs::write(dir.join("fw.yml"), yml).unwrap();
        let log = std::fs::File::create(dir.join("fw.log")).unwrap();
        let child = Kill(
            Command::new(bin)
                .args(["fw", "run"])
                .arg(dir.join("fw.yml"))
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap(),
        );
        let t = Instant::now();
        while !sock.exists() {
            assert!(t.elapsed() < Duration::from_secs(20), "ndnd did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            bin: bin.to_path_buf(),
            dir,
            sock,
            port,
            _child: child,
        }
    }

    /// `unix://` URI of its socket.
    pub fn url(&self) -> String {
        format!("unix://{}", self.sock.display())
    }

    /// An `ndnd` client command on its socket.
    pub fn client(&self) -> Command {
        let mut c = Command::new(&self.bin);
        c.env("NDN_CLIENT_TRANSPORT", self.url());
        c
    }

    /// Routes `prefix` to the UDP address `face` (`ndnd fw route-add`, permanent).
    pub fn route(&self, prefix: &str, face: SocketAddr) {
        let out = self
            .client()
            .args(["fw", "route-add"])
            .arg(format!("prefix={prefix}"))
            .arg(format!("face=udp://{face}"))
            .arg("persistency=permanent")
            .output()
            .unwrap();
        assert!(out.status.success(), "route-add failed: {out:?}");
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
