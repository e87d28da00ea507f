//! A cluster-based router (seed 002) on one machine, in throwaway network namespaces, for the
//! root integration tests of `ndx lb` and the `ndx-lab cluster-*` experiments:
//!
//! ```text
//!   c (10.1.0.2) ── c0 (10.1.0.1)                      (10.2.0.1) p0 ── p (10.2.0.2)
//!                          lb: the front end, ndx lb run
//!                r1 (10.3.1.1)  r2 (10.3.2.1) ... rN (10.3.N.1)
//!                  │              │                 │
//!   ir1 (10.3.1.2:6371)  ir2 (10.3.2.2:6372) ...  irN (10.3.N.2:637N)
//! ```
//!
//! The consumer `c` fetches through the front end's address 10.1.0.1:6363; the producer `p`
//! serves on 10.2.0.2:6363 and sees only 10.2.0.1. Internal router `k` (an unmodified
//! `ndx run` or `ndnd fw`) listens on UDP port `6370 + k` only, has a face to the producer
//! and routes the producer's prefix to it; its default route is the front end. Every end
//! other than the front end's computes full UDP checksums (`ethtool -K eth0 tx off`: veth
//! would leave partial ones, which a redirected frame cannot carry) and has GRO on (a veth
//! receives XDP-redirected frames only with NAPI on: GRO or an XDP program of its own).
//!
//! Everything is removed when the [`Topo`] drops: processes (SIGTERM, then SIGKILL) and
//! namespaces.

use std::fs;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The front end's address on the consumer side.
pub const VIP_CONSUMER: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);
/// The consumer's address.
pub const CONSUMER: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 2);
/// The front end's address on the producer side.
pub const VIP_PRODUCER: Ipv4Addr = Ipv4Addr::new(10, 2, 0, 1);
/// The producer's address.
pub const PRODUCER: Ipv4Addr = Ipv4Addr::new(10, 2, 0, 2);

/// Internal router `k`'s address (`k` from 1).
pub fn ir_address(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 3, k as u8, 2)
}

/// Internal router `k`'s UDP port: its implicit identifier.
pub fn ir_port(k: usize) -> u16 {
    6370 + k as u16
}

/// Internal router `k`'s name in the front end.
pub fn ir_name(k: usize) -> String {
    format!("ir{k}")
}

/// The programs the topology runs.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The `ndx` binary.
    pub ndx: PathBuf,
    /// The `ndnd` binary, for `ndnd fw` internal routers.
    pub ndnd: Option<PathBuf>,
}

/// What an internal router runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrKind {
    /// `ndx run` (AF_XDP, one shard, `idle = "park"`).
    Ndx,
    /// `ndnd fw run` (ndnd's forwarder, kernel UDP sockets).
    Ndnd,
}

impl std::fmt::Display for IrKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IrKind::Ndx => "ndx",
            IrKind::Ndnd => "ndnd",
        })
    }
}

/// A child process with its log, stopped when dropped.
#[derive(Debug)]
pub struct Proc {
    child: Child,
    /// Its log file (stdout and stderr).
    pub log: PathBuf,
}

impl Proc {
    fn spawn(mut cmd: Command, log: PathBuf) -> Result<Self, String> {
        let f = fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let f2 = f.try_clone().map_err(|e| e.to_string())?;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(f)
            .stderr(f2)
            .spawn()
            .map_err(|e| format!("{cmd:?}: {e}"))?;
        Ok(Self { child, log })
    }

    /// Its process id (of `ip netns exec`, which execs the program: the same process).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it has exited.
    pub fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// What it wrote so far.
    pub fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, then SIGKILL after 3 s.
    pub fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// CPU time used so far (user + system), from /proc.
    pub fn cpu(&self) -> Duration {
        cpu_of(self.child.id())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop();
    }
}

/// CPU time (user + system) of process `pid`, from /proc/PID/stat (0 when gone).
pub fn cpu_of(pid: u32) -> Duration {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of stat; here index 11 and 12.
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

static NEXT: AtomicU32 = AtomicU32::new(0);

fn sh(cmd: &mut Command) -> Result<Output, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out)
}

/// Waits up to `secs` for `f`.
pub fn wait_for(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The cluster's namespaces, links and processes.
#[derive(Debug)]
pub struct Topo {
    tag: String,
    /// Where configurations, sockets and logs go.
    pub dir: PathBuf,
    tools: Tools,
    namespaces: Vec<String>,
    irs: usize,
    /// The front end, once started.
    pub lb: Option<Proc>,
    /// Internal routers by index (`ir[k - 1]`), once started.
    pub ir: Vec<Option<(IrKind, Proc)>>,
    /// Producers started with [`Topo::start_put`] or [`Topo::start_serve`].
    pub producers: Vec<Proc>,
}

impl Topo {
    /// Creates the namespaces and links for `irs` internal routers (none started), with
    /// scratch files in `dir` (created).
    pub fn new(tools: Tools, irs: usize, dir: &Path) -> Result<Self, String> {
        assert!((1..=16).contains(&irs), "1 to 16 internal routers");
        fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let tag = format!(
            "{:x}{}",
            std::process::id() & 0xffff,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut t = Self {
            tag,
            dir: dir.to_path_buf(),
            tools,
            namespaces: Vec::new(),
            irs,
            lb: None,
            ir: (0..irs).map(|_| None).collect(),
            producers: Vec::new(),
        };
        let mut roles = vec!["c".to_owned(), "lb".to_owned(), "p".to_owned()];
        roles.extend((1..=irs).map(ir_name));
        for role in &roles {
            let ns = t.ns(role);
            sh(Command::new("ip").args(["netns", "add", &ns]))?;
            t.namespaces.push(ns);
            t.run(role, &["ip", "link", "set", "lo", "up"])?;
        }
        t.link("c", "10.1.0.2/24", "c0", "10.1.0.1/24")?;
        t.link("p", "10.2.0.2/24", "p0", "10.2.0.1/24")?;
        for k in 1..=irs {
            let role = ir_name(k);
            t.link(
                &role,
                &format!("{}/24", ir_address(k)),
                &format!("r{k}"),
                &format!("10.3.{k}.1/24"),
            )?;
            t.run(
                &role,
                &[
                    "ip",
                    "route",
                    "add",
                    "default",
                    "via",
                    &format!("10.3.{k}.1"),
                ],
            )?;
        }
        t.run("lb", &["sysctl", "-qw", "net.ipv4.conf.all.forwarding=1"])?;
        // Resolve the front end's neighbours on both sides now (the routers' gateways and
        // the end hosts): the first packets then never wait for ARP.
        for k in 1..=irs {
            t.run(
                &ir_name(k),
                &["ping", "-c", "1", "-W", "2", &format!("10.3.{k}.1")],
            )?;
        }
        t.run("c", &["ping", "-c", "1", "-W", "2", "10.1.0.1"])?;
        t.run("p", &["ping", "-c", "1", "-W", "2", "10.2.0.1"])?;
        Ok(t)
    }

    /// The namespace of `role` (`c`, `lb`, `p`, `ir1`, ...).
    pub fn ns(&self, role: &str) -> String {
        format!("ndxc-{}-{role}", self.tag)
    }

    /// A command run inside `role`'s namespace.
    pub fn exec(&self, role: &str, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(role)]).arg(program);
        c
    }

    /// Runs `args` inside `role`'s namespace; its output, or an error with it.
    pub fn run(&self, role: &str, args: &[&str]) -> Result<Output, String> {
        sh(self.exec(role, args[0]).args(&args[1..]))
    }

    /// A veth pair between `role`'s `eth0` (address `host`) and the front end's `lbif`
    /// (address `lb`).
    fn link(&self, role: &str, host: &str, lbif: &str, lb: &str) -> Result<(), String> {
        let a = format!("v{}a{}", self.tag, lbif);
        let b = format!("v{}b{}", self.tag, lbif);
        sh(Command::new("ip").args(["link", "add", &a, "type", "veth", "peer", "name", &b]))?;
        sh(Command::new("ip").args(["link", "set", &a, "netns", &self.ns(role)]))?;
        sh(Command::new("ip").args(["link", "set", &b, "netns", &self.ns("lb")]))?;
        self.run(role, &["ip", "link", "set", &a, "name", "eth0"])?;
        self.run("lb", &["ip", "link", "set", &b, "name", lbif])?;
        self.run(role, &["ip", "addr", "add", host, "dev", "eth0"])?;
        self.run("lb", &["ip", "addr", "add", lb, "dev", lbif])?;
        self.run(role, &["ip", "link", "set", "eth0", "up"])?;
        self.run("lb", &["ip", "link", "set", lbif, "up"])?;
        self.run(role, &["ethtool", "-K", "eth0", "tx", "off", "gro", "on"])?;
        Ok(())
    }

    /// The interface of the front end towards internal router `k`.
    pub fn lb_interface(k: usize) -> String {
        format!("r{k}")
    }

    /// The front end's control socket.
    pub fn lb_socket(&self) -> PathBuf {
        self.dir.join("lb.sock")
    }

    /// The front end's configuration with `routers` (`(k, weight)`) at start and `extra`
    /// keys appended to `[lb]`.
    pub fn lb_config(&self, routers: &[(usize, u32)], extra: &str) -> String {
        let mut ifs = vec!["\"c0\"".to_owned(), "\"p0\"".to_owned()];
        ifs.extend((1..=self.irs).map(|k| format!("\"r{k}\"")));
        let mut s = format!(
            "[lb]\ninterfaces = [{}]\naddresses = [\"{VIP_CONSUMER}\", \"{VIP_PRODUCER}\"]\n\
             hash_key = \"000102030405060708090a0b0c0d0e0f\"\ncontrol_socket = \"{}\"\n{extra}\n",
            ifs.join(", "),
            self.lb_socket().display()
        );
        for &(k, w) in routers {
            s.push_str(&format!(
                "[[router]]\nname = \"{}\"\naddress = \"{}\"\nport = {}\nweight = {w}\n",
                ir_name(k),
                ir_address(k),
                ir_port(k)
            ));
        }
        s
    }

    /// Starts `ndx lb run` with [`Topo::lb_config`] and waits for its control socket.
    pub fn start_lb(&mut self, routers: &[(usize, u32)], extra: &str) -> Result<(), String> {
        let cfg = self.dir.join("lb.toml");
        fs::write(&cfg, self.lb_config(routers, extra)).map_err(|e| e.to_string())?;
        let mut cmd = self.exec("lb", &self.tools.ndx);
        cmd.args(["lb", "run", "-c"]).arg(&cfg);
        let mut p = Proc::spawn(cmd, self.dir.join("lb.log"))?;
        let up = wait_for(20, || p.exited() || self.lb_status().is_ok());
        if !up || p.exited() {
            return Err(format!("ndx lb run did not start:\n{}", p.log_text()));
        }
        self.lb = Some(p);
        Ok(())
    }

    /// `ndx lb ARGS -s SOCKET`: its standard output, or an error with its output.
    pub fn lb_cmd(&self, args: &[&str]) -> Result<String, String> {
        let out = sh(Command::new(&self.tools.ndx)
            .arg("lb")
            .args(args)
            .arg("-s")
            .arg(self.lb_socket()))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// `ndx lb status --json`.
    pub fn lb_status(&self) -> Result<serde_json::Value, String> {
        let text = self.lb_cmd(&["status", "--json"])?;
        serde_json::from_str(&text).map_err(|e| format!("not JSON ({e}): {text}"))
    }

    /// Adds internal router `k` to the running front end.
    pub fn lb_add(&self, k: usize, weight: u32) -> Result<(), String> {
        self.lb_cmd(&[
            "add",
            &ir_name(k),
            &format!("{}:{}", ir_address(k), ir_port(k)),
            "--weight",
            &weight.to_string(),
        ])
        .map(drop)
    }

    /// Removes internal router `k` from the running front end (it drains).
    pub fn lb_remove(&self, k: usize) -> Result<(), String> {
        self.lb_cmd(&["remove", &ir_name(k)]).map(drop)
    }

    /// Internal router `k`'s control socket (ndx) or app socket (ndnd).
    pub fn ir_socket(&self, k: usize) -> PathBuf {
        self.dir.join(format!("ir{k}.sock"))
    }

    /// Starts internal router `k` (`cpu`: the CPU an ndx shard is pinned to), routing
    /// `prefix` to the producer, and waits until it is up.
    pub fn start_ir(
        &mut self,
        k: usize,
        kind: IrKind,
        prefix: &str,
        cpu: usize,
    ) -> Result<(), String> {
        self.start_ir_routes(k, kind, &[(prefix, 6363)], cpu)
    }

    /// Starts internal router `k` like [`Topo::start_ir`], with one face per producer port
    /// (`udp://10.2.0.2:PORT`) and a route for each `(prefix, port)`: several producers on
    /// the producer host, each behind its own port.
    pub fn start_ir_routes(
        &mut self,
        k: usize,
        kind: IrKind,
        routes: &[(&str, u16)],
        cpu: usize,
    ) -> Result<(), String> {
        assert!(!routes.is_empty(), "at least one route");
        let mut ports: Vec<u16> = routes.iter().map(|&(_, port)| port).collect();
        ports.sort_unstable();
        ports.dedup();
        // The face to port 6363 keeps the name `producer` (as start_ir always had).
        let face_name = |port: u16| {
            if port == 6363 {
                "producer".to_owned()
            } else {
                format!("producer{port}")
            }
        };
        let role = ir_name(k);
        let sock = self.ir_socket(k);
        let _ = fs::remove_file(&sock);
        let log = self.dir.join(format!("ir{k}.log"));
        let proc = match kind {
            IrKind::Ndx => {
                let cfg = self.dir.join(format!("ir{k}.toml"));
                let mut text = format!(
                    "[router]\nshards = 1\ncpus = [{cpu}]\ncontrol_socket = \"{}\"\nidle = \"park\"\n\
                     [udp]\nports = [{}]\n[app]\nsocket = \"{}\"\n\
                     [[interface]]\nname = \"eth0\"\n",
                    sock.display(),
                    ir_port(k),
                    self.dir.join(format!("ir{k}-app.sock")).display()
                );
                for &port in &ports {
                    text.push_str(&format!(
                        "[[face]]\nname = \"{}\"\nremote = \"udp://{PRODUCER}:{port}\"\n",
                        face_name(port)
                    ));
                }
                for &(prefix, port) in routes {
                    text.push_str(&format!(
                        "[[route]]\nprefix = \"{prefix}\"\nface = \"{}\"\n",
                        face_name(port)
                    ));
                }
                fs::write(&cfg, text).map_err(|e| e.to_string())?;
                let mut cmd = self.exec(&role, &self.tools.ndx);
                cmd.args(["run", "-c"]).arg(&cfg);
                let mut p = Proc::spawn(cmd, log)?;
                let ndx = self.tools.ndx.clone();
                let up = wait_for(30, || {
                    p.exited()
                        || Command::new(&ndx)
                            .args(["status", "--json", "-s"])
                            .arg(&sock)
                            .output()
                            .is_ok_and(|o| o.status.success())
                });
                if !up || p.exited() {
                    return Err(format!("ir{k} (ndx) did not start:\n{}", p.log_text()));
                }
                p
            }
            IrKind::Ndnd => {
                let ndnd = self.tools.ndnd.clone().ok_or("no ndnd binary")?;
                let cfg = self.dir.join(format!("ir{k}.yml"));
                let text = format!(
                    "core:\n  log_level: WARN\nfaces:\n  udp:\n    enabled_unicast: true\n    \
                     enabled_multicast: false\n    port_unicast: {}\n    port_multicast: 56363\n  \
                     tcp:\n    enabled: false\n  unix:\n    enabled: true\n    socket_path: {}\n  \
                     websocket:\n    enabled: false\n  http3:\n    enabled: false\n\
                     fw:\n  threads: 1\nmgmt:\n  allow_localhop: false\n\
                     tables:\n  content_store:\n    capacity: 16384\n    admit: true\n    serve: true\n  \
                     rib:\n    readvertise_nlsr: false\n",
                    ir_port(k),
                    sock.display()
                );
                fs::write(&cfg, text).map_err(|e| e.to_string())?;
                let mut cmd = self.exec(&role, &ndnd);
                cmd.args(["fw", "run"]).arg(&cfg);
                let mut p = Proc::spawn(cmd, log)?;
                if !wait_for(20, || p.exited() || sock.exists()) || p.exited() {
                    return Err(format!("ir{k} (ndnd) did not start:\n{}", p.log_text()));
                }
                let transport = format!("unix://{}", sock.display());
                let fw = |args: &[&str]| {
                    let mut c = self.exec(&role, &ndnd);
                    c.env("NDN_CLIENT_TRANSPORT", &transport)
                        .arg("fw")
                        .args(args);
                    sh(&mut c).map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                };
                let mut faces = Vec::new();
                for &port in &ports {
                    let mut created = String::new();
                    // The management socket may accept connections a little after it appears.
                    let ok = wait_for(10, || {
                        fw(&[
                            "face-create",
                            &format!("remote=udp4://{PRODUCER}:{port}"),
                            "persistency=permanent",
                        ])
                        .map(|o| created = o)
                        .is_ok()
                    });
                    let face = created
                        .split(|c: char| c.is_whitespace() || c == ',')
                        .find_map(|w| w.strip_prefix("FaceId="))
                        .map(str::to_owned);
                    let Some(face) = face.filter(|_| ok) else {
                        return Err(format!("ndnd face-create: {created}\n{}", p.log_text()));
                    };
                    faces.push((port, face));
                }
                for &(prefix, port) in routes {
                    let face = &faces.iter().find(|(p, _)| *p == port).expect("created").1;
                    fw(&[
                        "route-add",
                        &format!("prefix={prefix}"),
                        &format!("face={face}"),
                    ])?;
                }
                p
            }
        };
        self.ir[k - 1] = Some((kind, proc));
        Ok(())
    }

    /// Stops internal router `k`.
    pub fn stop_ir(&mut self, k: usize) {
        if let Some((_, mut p)) = self.ir[k - 1].take() {
            p.stop();
        }
    }

    /// `ndx status --json` of internal router `k` (an ndx one).
    pub fn ir_status(&self, k: usize) -> Result<serde_json::Value, String> {
        let out = sh(Command::new(&self.tools.ndx)
            .args(["status", "--json", "-s"])
            .arg(self.ir_socket(k)))?;
        serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
    }

    /// `ndx put PREFIX` of `file` on the producer (10.2.0.2:6363), version `version`,
    /// `extra` arguments; waits until it serves.
    pub fn start_put(
        &mut self,
        prefix: &str,
        file: &Path,
        version: u64,
        extra: &[&str],
    ) -> Result<(), String> {
        self.start_put_on(prefix, file, version, 6363, extra)
    }

    /// [`Topo::start_put`] on port `port` of the producer.
    pub fn start_put_on(
        &mut self,
        prefix: &str,
        file: &Path,
        version: u64,
        port: u16,
        extra: &[&str],
    ) -> Result<(), String> {
        let log = self.dir.join(format!("put{}.log", self.producers.len()));
        let mut cmd = self.exec("p", &self.tools.ndx);
        cmd.args(["put", prefix, "-i"])
            .arg(file)
            .args([
                "-b",
                &format!("{PRODUCER}:{port}"),
                "--version",
                &version.to_string(),
            ])
            .args(extra);
        let mut p = Proc::spawn(cmd, log)?;
        if !wait_for(20, || p.exited() || p.log_text().contains("serving")) || p.exited() {
            return Err(format!("ndx put did not start: {}", p.log_text()));
        }
        self.producers.push(p);
        Ok(())
    }

    /// `ndx serve PREFIX` on the producer (answers every Interest under it with `size`
    /// bytes), on port `port` of 10.2.0.2; waits until it answers.
    pub fn start_serve(
        &mut self,
        prefix: &str,
        size: usize,
        port: u16,
        extra: &[&str],
    ) -> Result<(), String> {
        let log = self.dir.join(format!("serve{}.log", self.producers.len()));
        let mut cmd = self.exec("p", &self.tools.ndx);
        cmd.args(["serve", prefix, "--payload-size", &size.to_string()])
            .args(["-b", &format!("{PRODUCER}:{port}")])
            .args(extra);
        let mut p = Proc::spawn(cmd, log)?;
        if !wait_for(20, || p.exited() || p.log_text().contains("answering")) || p.exited() {
            return Err(format!("ndx serve did not start: {}", p.log_text()));
        }
        self.producers.push(p);
        Ok(())
    }

    /// `ndx get NAME -o OUT` on the consumer through the front end (10.1.0.1:6363), with
    /// `extra` arguments (not run).
    pub fn get(&self, name: &str, out: &Path, extra: &[&str]) -> Command {
        let mut cmd = self.exec("c", &self.tools.ndx);
        cmd.args(["get", name, "-t", &format!("{VIP_CONSUMER}:6363"), "-o"])
            .arg(out)
            .arg("--no-progress")
            .args(extra);
        cmd
    }

    /// `ndx gen PREFIX` on the consumer through the front end (10.1.0.1:6363), with `extra`
    /// arguments (not run).
    pub fn generator(&self, prefix: &str, extra: &[&str]) -> Command {
        let mut cmd = self.exec("c", &self.tools.ndx);
        cmd.args(["gen", prefix, "-t", &format!("{VIP_CONSUMER}:6363")])
            .args(extra);
        cmd
    }

    /// Changes internal router `k`'s weight in the running front end.
    pub fn lb_weight(&self, k: usize, weight: u32) -> Result<(), String> {
        self.lb_cmd(&["weight", &ir_name(k), &weight.to_string()])
            .map(drop)
    }

    /// The process id of internal router `k`, when running.
    pub fn ir_pid(&self, k: usize) -> Option<u32> {
        self.ir.get(k - 1)?.as_ref().map(|(_, p)| p.pid())
    }

    /// Ids of the XDP programs attached to the interfaces of `role`'s namespace (from
    /// `ip -d -j link show`), without repeats.
    pub fn xdp_prog_ids(&self, role: &str) -> Result<Vec<u64>, String> {
        let out = self.run(role, &["ip", "-d", "-j", "link", "show"])?;
        let links: serde_json::Value =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("ip -j: {e}"))?;
        let mut ids = Vec::new();
        for l in links.as_array().into_iter().flatten() {
            let xdp = &l["xdp"];
            let mut found = vec![xdp["prog"]["id"].as_u64()];
            for a in xdp["attached"].as_array().into_iter().flatten() {
                found.push(a["prog"]["id"].as_u64());
            }
            for id in found.into_iter().flatten() {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        Ok(ids)
    }

    /// Bytes `role`'s `eth0` has received (its kernel counter).
    pub fn rx_bytes(&self, role: &str) -> Result<u64, String> {
        let out = self.run(role, &["cat", "/sys/class/net/eth0/statistics/rx_bytes"])?;
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|e| format!("rx_bytes: {e}"))
    }

    /// The logs of every process, for a failure message.
    pub fn logs(&self) -> String {
        let mut s = String::new();
        let mut add = |what: &str, p: &Proc| {
            let t = p.log_text();
            let tail: Vec<&str> = t.lines().rev().take(15).collect();
            s.push_str(&format!("--- {what} ({})\n", p.log.display()));
            for l in tail.iter().rev() {
                s.push_str(l);
                s.push('\n');
            }
        };
        if let Some(p) = &self.lb {
            add("lb", p);
        }
        for (i, r) in self.ir.iter().enumerate() {
            if let Some((kind, p)) = r {
                add(&format!("ir{} ({kind})", i + 1), p);
            }
        }
        for p in &self.producers {
            add("producer", p);
        }
        s
    }
}

impl Drop for Topo {
    fn drop(&mut self) {
        self.producers.clear();
        for r in &mut self.ir {
            *r = None;
        }
        self.lb = None;
        for ns in &self.namespaces {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}
