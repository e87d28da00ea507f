//! ndnd's distance-vector routing daemon (`ndnd dv`, ndnd v1.5.3) driving ndx, as root: two
//! routers in their own network namespaces `a` and `b`, joined by one veth pair (`a0`
//! 10.0.9.1/24 — `b0` 10.0.9.2/24), with no static route anywhere: every route to the other
//! router's prefixes is one the daemons computed and registered.
//!
//! - two ndx routers, each with its own daemon (network `/net`, routers `/net/a` and `/net/b`,
//!   each the other's configured neighbour): `ndnd put --expose /net/a/file` on A's app socket
//!   registers with origin client (65), ndx readvertises it to A's daemon
//!   (`/localhost/nlsr/rib/register`), the daemons carry it to B, whose daemon registers it
//!   in B's ndx with origin nlsr (128) on the UDP face to A, and `ndnd cat` on B's app socket
//!   fetches the object. Killing A's daemon withdraws the route from B (B's daemon declares A
//!   dead); a new daemon on A gets the producer's route readvertised again (NFD's behaviour
//!   when `/localhost/nlsr` appears) and the route comes back;
//! - the same pair, with A's link going down and up instead of its daemon;
//! - ndx next to ndnd's own forwarder (`ndnd fw` with `readvertise_nlsr`, in namespace A), a
//!   daemon on each: objects are fetched both ways.
//!
//! What ndx does for the daemon: `faces/create` of the neighbour's UDP face, `faces/update`
//! turning on the local fields of the daemon's app face (its sync Interests are only accepted
//! with an IncomingFaceId), `rib/register` and `unregister` with origin nlsr,
//! `strategy-choice/set` (multicast on the sync prefixes), forwarding the daemon's `/localhop`
//! Interests (HopLimit 2) to the neighbour, and the readvertisement of client routes.
//!
//! The daemons advertise every second and declare a neighbour dead after 3 s without one
//! (checked every 3 s): a withdrawal reaches the other router within about 6 s, a new prefix
//! at once after adjacency (SVS sync; at worst the 30 s periodic sync). ndnd is `$NDX_NDND`
//! (else `/opt/ndx-interop/go/ndnd`); without it the tests print `skipping: <reason>`, and fail
//! under `NDX_REQUIRE_ROOT_TESTS=1` (CI). Every process logs into the scratch directory, and
//! every failure shows the tails of those logs and the routers' tables (and, on ndnd's
//! forwarder, `ndnd dv status`: through ndx it times out, the daemon's answer is an unsigned
//! Data, which ndx drops as malformed).
//! The tests of this file run one at a time (two routers and two daemons each).

mod support;
mod topo;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Netns, Proc, Scratch, addr, ndnd, skip, veth, wait_for};
use topo::{HASH_KEY, NDX, Router, read, spawn_logged};

/// The routing network's name; the routers are `/net/a` and `/net/b`.
const NET: &str = "/net";
/// A's address on the link.
const A_IP: &str = "10.0.9.1";
/// B's address on the link.
const B_IP: &str = "10.0.9.2";
/// The daemons' advertisement period and dead interval (ms): short, for quick withdrawals.
const ADVERTISE_MS: u64 = 1000;
const DEAD_MS: u64 = 3000;

/// One test of this file at a time: each runs two routers and two daemons.
static SERIAL: Mutex<()> = Mutex::new(());

/// Namespaces `a` and `b` joined by `a0` — `b0`, and the scratch directory of the test.
#[derive(Debug)]
struct Pair {
    scratch: Scratch,
    a: Netns,
    b: Netns,
}

impl Pair {
    fn new() -> Self {
        let pair = Self {
            scratch: Scratch::new(),
            a: Netns::new("a"),
            b: Netns::new("b"),
        };
        veth(&pair.a, "a0", &pair.b, "b0", 1);
        addr(&pair.a, "a0", &format!("{A_IP}/24"));
        addr(&pair.b, "b0", &format!("{B_IP}/24"));
        pair.warm();
        pair
    }

    /// Pings across the link both ways: ndx learns next hops from the kernel's neighbour
    /// table, so both ends are resolved before the routers start (and again after the link
    /// came back up).
    fn warm(&self) {
        let _ = self.a.try_run(&["ping", "-4", "-c", "1", "-W", "5", B_IP]);
        let _ = self.b.try_run(&["ping", "-4", "-c", "1", "-W", "5", A_IP]);
    }

    /// A file of `len` pseudo-random bytes (as `topo::Line::content`).
    fn content(&self, file: &str, len: usize, seed: u64) -> (PathBuf, Vec<u8>) {
        topo::content_file(&self.scratch, file, len, seed)
    }
}

/// A router's forwarder.
#[derive(Debug)]
enum Fw {
    /// `ndx run`.
    Ndx(Router),
    /// `ndnd fw run` (logging into `log`).
    Ndnd { _proc: Proc, log: PathBuf },
}

/// One router of the pair: its forwarder, its daemon and its producer.
#[derive(Debug)]
struct Node<'p> {
    /// `a` or `b`: the router is `/net/<name>`.
    name: &'static str,
    ns: &'p Netns,
    dir: &'p Scratch,
    /// The forwarder's app socket (where the daemon and ndnd's tools connect).
    sock: PathBuf,
    fw: Fw,
    /// The neighbour's address (the daemon's configured neighbour).
    neighbour: &'static str,
    dv: Option<Proc>,
    /// Daemons started so far (each logs into its own file).
    dv_runs: u32,
    put: Option<Proc>,
    puts: u32,
}

/// The configuration of a one-shard ndx attached to `ifname` only: no face, no route.
fn ndx_config(ctl: &Path, app: &Path, ifname: &str, cpu: usize) -> String {
    format!(
        "[router]\nshards = 1\ncpus = [{cpu}]\ncontrol_socket = \"{ctl}\"\n\
         hash_key = \"{HASH_KEY}\"\nidle = \"park\"\n\
         [app]\nsocket = \"{app}\"\n\
         [[interface]]\nname = \"{ifname}\"\n",
        ctl = ctl.display(),
        app = app.display(),
    )
}

/// The configuration of `ndnd fw`: unicast UDP on 6363 (on every address of its namespace),
/// the unix socket `sock`, and readvertisement of client routes to the daemon.
fn ndnd_fw_config(sock: &Path) -> String {
    format!(
        "core:\n  log_level: INFO\n\
         faces:\n  udp:\n    enabled_unicast: true\n    enabled_multicast: false\n    \
         port_unicast: 6363\n    port_multicast: 56363\n  tcp:\n    enabled: false\n  \
         unix:\n    enabled: true\n    socket_path: {}\n  websocket:\n    enabled: false\n  \
         http3:\n    enabled: false\n\
         fw:\n  threads: 2\n\
         mgmt:\n  allow_localhop: false\n\
         tables:\n  content_store:\n    capacity: 1024\n  rib:\n    readvertise_nlsr: true\n",
        sock.display()
    )
}

/// The configuration of router `name`'s daemon, neighbour `neighbour` (insecure: no keys).
fn dv_config(name: &str, neighbour: &str) -> String {
    format!(
        "dv:\n  network: {NET}\n  router: {NET}/{name}\n  keychain: insecure\n  \
         advertise_interval: {ADVERTISE_MS}\n  router_dead_interval: {DEAD_MS}\n  \
         neighbors:\n    - uri: \"udp4://{neighbour}:6363\"\n"
    )
}

/// Whether a process has exited (a zombie counts).
fn gone(p: &Proc) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", p.pid()))
        .map_or(true, |s| s.split_whitespace().nth(2) == Some("Z"))
}

/// Runs `cmd` with no input, killing it after `secs` seconds; its output either way.
fn run_for(mut cmd: Command, secs: u64) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// The last `n` lines of a file, each run of lines that differ only in their `time=` and
/// `attempt=` fields (ndnd retrying a command every 100 ms) shown once with its count.
fn tail(p: &Path, n: usize) -> String {
    let text = read(p);
    let key = |l: &str| -> String {
        l.split(' ')
            .filter(|w| !w.starts_with("time=") && !w.starts_with("attempt="))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut lines: Vec<String> = Vec::new();
    let mut last = String::new();
    let mut repeats = 0;
    for l in text.lines() {
        let k = key(l);
        if !lines.is_empty() && k == last {
            repeats += 1;
            continue;
        }
        if repeats > 0 {
            lines.push(format!("  ... and {repeats} more like it"));
            repeats = 0;
        }
        lines.push(l.to_owned());
        last = k;
    }
    if repeats > 0 {
        lines.push(format!("  ... and {repeats} more like it"));
    }
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// `ndx ARGS --json` on `r`'s control socket (bounded), or `None` when the router does not
/// answer.
fn try_json(r: &Router, args: &[&str]) -> Option<Value> {
    let mut cmd = Command::new(NDX);
    cmd.args(args).args(["--json", "-s"]).arg(&r.sock);
    let out = run_for(cmd, 10);
    if !out.status.success() {
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// `ndx route list --json` (bounded), or `None` when the router does not answer.
fn try_routes(r: &Router) -> Option<Value> {
    try_json(r, &["route", "list"])
}

/// `ndx status --json` (bounded), or `None`.
fn try_status(r: &Router) -> Option<Value> {
    try_json(r, &["status"])
}

/// One RIB route: prefix, face, origin.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RibRoute {
    prefix: String,
    face: u64,
    origin: String,
}

/// Every route of a RIB (`ndx route list --json`'s `rib`).
fn rib(r: &Router) -> Vec<RibRoute> {
    let Some(v) = try_routes(r) else {
        return Vec::new();
    };
    v["rib"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|e| {
            let prefix = e["prefix"].as_str().unwrap_or("").to_owned();
            e["routes"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |r| RibRoute {
                    prefix: prefix.clone(),
                    face: r["face"].as_u64().unwrap_or(0),
                    origin: r["origin"].as_str().unwrap_or("").to_owned(),
                })
        })
        .collect()
}

/// Whether `prefix` is `name` or a prefix of it (whole components).
fn covers(prefix: &str, name: &str) -> bool {
    prefix == "/" || prefix == name || name.starts_with(&format!("{prefix}/"))
}

/// The routes of origin nlsr that `name` matches.
fn nlsr_routes_for(r: &Router, name: &str) -> Vec<RibRoute> {
    rib(r)
        .into_iter()
        .filter(|x| x.origin == "nlsr" && covers(&x.prefix, name))
        .collect()
}

/// The `remote` of face `id` in `ndx status`.
fn face_remote(r: &Router, id: u64) -> Option<String> {
    try_status(r)?["faces"]
        .as_array()?
        .iter()
        .find(|f| f["id"] == id)
        .and_then(|f| f["remote"].as_str())
        .map(str::to_owned)
}

/// Whether a log has a line with every one of `words`.
fn logged(p: &Path, words: &[&str]) -> bool {
    read(p).lines().any(|l| words.iter().all(|w| l.contains(w)))
}

impl<'p> Node<'p> {
    /// ndx in `ns`, attached to `ifname`, pinned to `cpu`.
    fn ndx(
        pair: &'p Pair,
        ns: &'p Netns,
        name: &'static str,
        ifname: &str,
        neighbour: &'static str,
        cpu: usize,
    ) -> Self {
        let dir = &pair.scratch;
        let ctl = dir.path(&format!("ndx-{name}.sock"));
        let sock = dir.path(&format!("nfd-{name}.sock"));
        let cfg = dir.path(&format!("ndx-{name}.toml"));
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        std::fs::write(&cfg, ndx_config(&ctl, &sock, ifname, cpu % cpus)).unwrap();
        let log = dir.path(&format!("ndx-{name}.log"));
        let mut cmd = ns.cmd(NDX);
        cmd.arg("run").arg("-c").arg(&cfg);
        let router = Router {
            proc: spawn_logged(cmd, "ndx run", &log),
            sock: ctl,
            log,
        };
        // The first status answer comes from the control loop, once everything is attached.
        let up = wait_for(30, || {
            router.exited() || (router.sock.exists() && try_status(&router).is_some())
        });
        assert!(
            up && !router.exited() && sock.exists(),
            "ndx on {name} did not start:\n{}",
            router.log()
        );
        Self::with(pair, ns, name, neighbour, sock, Fw::Ndx(router))
    }

    /// `ndnd fw` in `ns` (UDP 6363, its unix socket in the scratch directory).
    fn ndnd_fw(
        bin: &Path,
        pair: &'p Pair,
        ns: &'p Netns,
        name: &'static str,
        neighbour: &'static str,
    ) -> Self {
        let dir = &pair.scratch;
        let sock = dir.path(&format!("ndnd-{name}.sock"));
        let yml = dir.path(&format!("ndnd-fw-{name}.yml"));
        let log = dir.path(&format!("ndnd-fw-{name}.log"));
        std::fs::write(&yml, ndnd_fw_config(&sock)).unwrap();
        let mut cmd = ns.cmd(bin);
        cmd.args(["fw", "run"]).arg(&yml);
        let proc = spawn_logged(cmd, "ndnd fw", &log);
        assert!(
            wait_for(20, || sock.exists() || gone(&proc)) && !gone(&proc),
            "ndnd fw on {name} did not start: {}",
            read(&log)
        );
        Self::with(
            pair,
            ns,
            name,
            neighbour,
            sock,
            Fw::Ndnd { _proc: proc, log },
        )
    }

    /// `name` in `ns` (its files in `pair`'s scratch directory), no daemon or producer yet.
    fn with(
        pair: &'p Pair,
        ns: &'p Netns,
        name: &'static str,
        neighbour: &'static str,
        sock: PathBuf,
        fw: Fw,
    ) -> Self {
        Self {
            name,
            ns,
            dir: &pair.scratch,
            sock,
            fw,
            neighbour,
            dv: None,
            dv_runs: 0,
            put: None,
            puts: 0,
        }
    }

    /// The ndx router (panics on an ndnd node).
    fn router(&self) -> &Router {
        match &self.fw {
            Fw::Ndx(r) => r,
            Fw::Ndnd { .. } => panic!("{} runs ndnd fw, not ndx", self.name),
        }
    }

    /// `/net/<name>`.
    fn router_name(&self) -> String {
        format!("{NET}/{}", self.name)
    }

    fn transport(&self) -> String {
        format!("unix://{}", self.sock.display())
    }

    /// A command of ndnd's in the node's namespace, on its forwarder.
    fn ndnd(&self, bin: &Path) -> Command {
        let mut c = self.ns.cmd(bin);
        c.env("NDN_CLIENT_TRANSPORT", self.transport());
        c
    }

    /// `ndnd fw route-list` (bounded; its errors too), one route a line:
    /// `prefix=/p nexthop=N origin=nlsr cost=C ...`.
    fn ndnd_routes(&self, bin: &Path) -> String {
        let mut cmd = self.ndnd(bin);
        cmd.args(["fw", "route-list"]);
        let o = run_for(cmd, 10);
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    }

    /// The log of the daemon's `run`-th start.
    fn dv_log(&self, run: u32) -> PathBuf {
        self.dir.path(&format!("dv-{}-{run}.log", self.name))
    }

    /// The log of the running (or last) daemon.
    fn dv_log_now(&self) -> PathBuf {
        self.dv_log(self.dv_runs)
    }

    /// Starts the daemon (the forwarder must be up: the daemon does not reconnect).
    fn start_dv(&mut self, bin: &Path) {
        assert!(self.dv.is_none(), "{}'s daemon already runs", self.name);
        let yml = self.dir.path(&format!("dv-{}.yml", self.name));
        std::fs::write(&yml, dv_config(self.name, self.neighbour)).unwrap();
        self.dv_runs += 1;
        let mut cmd = self.ndnd(bin);
        cmd.args(["dv", "run"]).arg(&yml);
        self.dv = Some(spawn_logged(cmd, "ndnd dv", &self.dv_log_now()));
    }

    /// Kills the daemon with SIGKILL (no goodbye: its app face just closes).
    fn kill_dv(&mut self) {
        if let Some(p) = self.dv.take() {
            let _ = p.stop("KILL");
        }
    }

    /// `ndnd dv status` (bounded), whatever the outcome.
    fn dv_status(&self, bin: &Path) -> Output {
        let mut cmd = self.ndnd(bin);
        cmd.args(["dv", "status"]);
        run_for(cmd, 10)
    }

    /// The daemon's neighbour count from `ndnd dv status`, when it answers.
    fn dv_neighbours(&self, bin: &Path) -> Option<u64> {
        let o = self.dv_status(bin);
        if !o.status.success() {
            return None;
        }
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find_map(|l| l.trim().strip_prefix("nNeighbors=")?.trim().parse().ok())
    }

    /// Whether the daemon listens for readvertised routes: its `/localhost/nlsr` route is in
    /// ndx's RIB (origin nlsr), or `ndnd dv status` answers through ndnd's forwarder.
    fn dv_listening(&self, bin: &Path) -> bool {
        match &self.fw {
            Fw::Ndx(r) => rib(r)
                .iter()
                .any(|x| x.prefix == "/localhost/nlsr" && x.origin == "nlsr"),
            Fw::Ndnd { .. } => self.dv_status(bin).status.success(),
        }
    }

    /// Starts `ndnd put --expose PREFIX` (origin client) serving `file` on the node's
    /// forwarder, and waits until its registration was answered.
    fn start_put(&mut self, bin: &Path, prefix: &str, file: &Path) {
        assert!(self.put.is_none(), "{}'s producer already runs", self.name);
        self.puts += 1;
        let log = self.put_log();
        let mut cmd = self.ndnd(bin);
        cmd.args(["put", "--expose", prefix])
            .stdin(std::fs::File::open(file).unwrap())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        let p = Proc {
            child: Some(cmd.spawn().expect("ndnd put")),
            what: "ndnd put".into(),
        };
        let registered = wait_for(20, || {
            gone(&p)
                || logged(&log, &["Registered route", prefix])
                || logged(&log, &["Failed to register"])
        });
        assert!(
            registered && !gone(&p) && logged(&log, &["Registered route", prefix]),
            "ndnd put --expose {prefix} on {} did not register: {}",
            self.name,
            read(&log)
        );
        if let Fw::Ndx(r) = &self.fw {
            let client = rib(r)
                .iter()
                .any(|x| x.prefix == prefix && x.origin == "client");
            assert!(
                client,
                "no route of origin client for {prefix} on {}: {:?}",
                self.name,
                rib(r)
            );
        }
        self.put = Some(p);
    }

    fn put_log(&self) -> PathBuf {
        self.dir
            .path(&format!("put-{}-{}.log", self.name, self.puts))
    }

    /// What the node's processes said, and its tables.
    fn diag(&self, bin: &Path) -> String {
        let mut s = format!("===== {} ({})", self.name, self.router_name());
        match &self.fw {
            Fw::Ndx(r) => {
                s += &format!(
                    "\n--- ndx log (tail):\n{}\n--- ndx RIB: {:?}\n--- ndx FIB: {}\n\
                     --- ndx faces: {}",
                    tail(&r.log, 40),
                    rib(r)
                        .iter()
                        .map(|x| format!("{} face {} {}", x.prefix, x.face, x.origin))
                        .collect::<Vec<_>>(),
                    try_routes(r).map_or_else(|| "-".into(), |v| v["routes"].to_string()),
                    try_status(r).map_or_else(|| "-".into(), |v| v["faces"].to_string()),
                );
            }
            Fw::Ndnd { log, .. } => {
                s += &format!(
                    "\n--- ndnd fw log (tail):\n{}\n--- ndnd fw route-list:\n{}",
                    tail(log, 40),
                    self.ndnd_routes(bin)
                );
            }
        }
        for run in 1..=self.dv_runs {
            s += &format!(
                "\n--- ndnd dv #{run} log (tail):\n{}",
                tail(&self.dv_log(run), 40)
            );
        }
        // ndnd dv answers `ndnd dv status` with an unsigned Data (no SignatureInfo), which ndx
        // drops as malformed: only ndnd's forwarder passes it on.
        if self.dv.is_some() && matches!(self.fw, Fw::Ndnd { .. }) {
            let st = self.dv_status(bin);
            s += &format!(
                "\n--- ndnd dv status:\n{}{}",
                String::from_utf8_lossy(&st.stdout),
                String::from_utf8_lossy(&st.stderr)
            );
        }
        for n in 1..=self.puts {
            s += &format!(
                "\n--- ndnd put #{n} log (tail):\n{}",
                tail(&self.dir.path(&format!("put-{}-{n}.log", self.name)), 10)
            );
        }
        s
    }
}

/// Both nodes' diagnostics.
fn diag(bin: &Path, nodes: &[&Node<'_>]) -> String {
    nodes
        .iter()
        .map(|n| n.diag(bin))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Waits until `node`'s daemon listens for readvertised routes.
fn wait_listening(bin: &Path, node: &Node<'_>, all: &[&Node<'_>]) {
    let ok = wait_for(30, || {
        node.dv.as_ref().is_none_or(gone) || node.dv_listening(bin)
    });
    let alive = node.dv.as_ref().is_some_and(|p| !gone(p));
    assert!(
        ok && alive,
        "{}'s daemon (alive: {alive}) did not register /localhost/nlsr within 30 s \
         (faces/update local fields, rib/register origin nlsr)\n{}",
        node.name,
        diag(bin, all)
    );
}

/// Waits until `node`'s daemon hears its neighbour: on ndx, the daemon registered its
/// route to the neighbour's `/localhop/<router>/32=DV` (origin nlsr, on the UDP face), which
/// it does on the first sync Interest it accepts from it; on ndnd, `nNeighbors=1`.
fn wait_adjacent(bin: &Path, node: &Node<'_>, peer: &Node<'_>, all: &[&Node<'_>]) {
    let local = format!("/localhop{}/", peer.router_name());
    let ok = wait_for(30, || match &node.fw {
        Fw::Ndx(r) => rib(r)
            .iter()
            .any(|x| x.origin == "nlsr" && x.prefix.starts_with(&local)),
        Fw::Ndnd { .. } => node.dv_neighbours(bin).is_some_and(|n| n >= 1),
    });
    assert!(
        ok,
        "{}'s daemon did not become adjacent to {} within 30 s\n{}",
        node.name,
        peer.router_name(),
        diag(bin, all)
    );
}

/// Waits until `node`'s running daemon has heard the readvertisement of `prefix` from its
/// forwarder (its log says `Local announce` for it).
fn wait_announced(bin: &Path, node: &Node<'_>, prefix: &str, all: &[&Node<'_>]) {
    let log = node.dv_log_now();
    let ok = wait_for(15, || logged(&log, &["Local announce", prefix]));
    assert!(
        ok,
        "{}'s forwarder did not readvertise {prefix} (origin client) to its daemon at \
         /localhost/nlsr/rib/register within 15 s\n{}",
        node.name,
        diag(bin, all)
    );
}

/// Waits (up to `secs`) until `node` (ndx) has a route of origin nlsr for `name` (or a
/// prefix of it), and checks it goes over the UDP face to `via`; returns the route.
fn wait_route(
    bin: &Path,
    node: &Node<'_>,
    name: &str,
    via: &str,
    secs: u64,
    all: &[&Node<'_>],
) -> RibRoute {
    let r = node.router();
    let mut found = Vec::new();
    let ok = wait_timed(
        secs,
        || {
            found = nlsr_routes_for(r, name);
            !found.is_empty()
        },
        |t| format!("{}: waited {t:.1} s for a route to {name}", node.name),
    );
    assert!(
        ok,
        "{} got no route of origin nlsr for {name} within {secs} s\n{}",
        node.name,
        diag(bin, all)
    );
    let route = found[0].clone();
    let remote = face_remote(r, route.face);
    assert_eq!(
        remote.as_deref(),
        Some(format!("udp://{via}:6363").as_str()),
        "{}'s route {route:?} is not on the UDP face to {via}\n{}",
        node.name,
        diag(bin, all)
    );
    route
}

/// Asserts no ndx router of `nodes` has a static route (everything came from the daemons
/// and the apps).
fn assert_no_static(bin: &Path, nodes: &[&Node<'_>]) {
    for n in nodes {
        if let Fw::Ndx(r) = &n.fw {
            let statics: Vec<RibRoute> = rib(r)
                .into_iter()
                .filter(|x| x.origin == "static")
                .collect();
            assert!(
                statics.is_empty(),
                "{} has static routes {statics:?}\n{}",
                n.name,
                diag(bin, nodes)
            );
        }
    }
}

/// `ndnd cat NAME` on `node`'s forwarder until it returns `data` or `secs` seconds passed
/// (each attempt bounded: without a route it gives up after a few retries).
fn cat(bin: &Path, node: &Node<'_>, name: &str, data: &[u8], secs: u64, all: &[&Node<'_>]) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut attempts = Vec::new();
    loop {
        let mut cmd = node.ndnd(bin);
        cmd.args(["cat", name]);
        let o = run_for(cmd, 30);
        if o.status.success() && o.stdout == data {
            return;
        }
        attempts.push(format!(
            "status {:?}, {} bytes{}: {}",
            o.status.code(),
            o.stdout.len(),
            if o.status.success() {
                " (not the object)"
            } else {
                ""
            },
            tail_str(&String::from_utf8_lossy(&o.stderr), 5)
        ));
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    panic!(
        "ndnd cat {name} on {} did not get the object within {secs} s ({} attempts; last: {})\n{}",
        node.name,
        attempts.len(),
        attempts.last().map_or("", String::as_str),
        diag(bin, all)
    );
}

fn tail_str(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// Starts both daemons and waits until each listens and each is adjacent to the other.
fn start_daemons(bin: &Path, a: &mut Node<'_>, b: &mut Node<'_>) {
    a.start_dv(bin);
    b.start_dv(bin);
    wait_listening(bin, a, &[a, b]);
    wait_listening(bin, b, &[a, b]);
    wait_adjacent(bin, b, a, &[a, b]);
    wait_adjacent(bin, a, b, &[a, b]);
}

/// Two ndx routers with a daemon each, a producer on A; returns once B routes to it and
/// fetched it. The common start of the two-ndx tests.
fn two_ndx_with_a_producer<'p>(
    bin: &Path,
    pair: &'p Pair,
    file: &Path,
    data: &[u8],
) -> (Node<'p>, Node<'p>) {
    let mut a = Node::ndx(pair, &pair.a, "a", "a0", B_IP, 0);
    let mut b = Node::ndx(pair, &pair.b, "b", "b0", A_IP, 1);
    start_daemons(bin, &mut a, &mut b);
    a.start_put(bin, "/net/a/file", file);
    wait_announced(bin, &a, "/net/a/file", &[&a, &b]);
    // Propagation: at once after adjacency (SVS), at worst the 30 s periodic sync.
    routed_to_a_and_fetched(bin, &b, data, &[&a, &b]);
    (a, b)
}

/// `node` gets a route of origin nlsr to A for `/net/a/file` (within 60 s), no static route
/// is left anywhere, and `node` fetches `data` there.
fn routed_to_a_and_fetched(bin: &Path, node: &Node<'_>, data: &[u8], all: &[&Node<'_>]) {
    wait_route(bin, node, "/net/a/file", A_IP, 60, all);
    assert_no_static(bin, all);
    cat(bin, node, "/net/a/file", data, 60, all);
}

/// [`wait_for`], logging how long it took (`say` writes the line from the seconds).
fn wait_timed(secs: u64, f: impl FnMut() -> bool, say: impl FnOnce(f64) -> String) -> bool {
    let t0 = Instant::now();
    let ok = wait_for(secs, f);
    eprintln!("{}", say(t0.elapsed().as_secs_f64()));
    ok
}

/// Waits until B has no route of origin nlsr for `name` left.
fn wait_withdrawn(bin: &Path, b: &Node<'_>, name: &str, secs: u64, why: &str, all: &[&Node<'_>]) {
    let ok = wait_timed(
        secs,
        || nlsr_routes_for(b.router(), name).is_empty(),
        |t| format!("{}: route for {name} gone {t:.1} s after {why}", b.name),
    );
    assert!(
        ok,
        "{}'s route for {name} was not withdrawn within {secs} s after {why}: {:?}\n{}",
        b.name,
        nlsr_routes_for(b.router(), name),
        diag(bin, all)
    );
}

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The start of every test here: `None` when it skips (no root, no ndnd); else ndnd, the
/// guard that runs the tests one at a time, and a fresh [`Pair`].
fn ndnd_pair() -> Option<(PathBuf, std::sync::MutexGuard<'static, ()>, Pair)> {
    if skip() {
        return None;
    }
    let bin = ndnd()?;
    let one = serial();
    Some((bin, one, Pair::new()))
}

#[test]
fn ndnd_dv_on_two_ndx_routers_routes_a_registered_prefix_and_withdraws_it() {
    let Some((bin, _one, pair)) = ndnd_pair() else {
        return;
    };
    let (file, data) = pair.content("obj", 200_000, 38);
    let (mut a, b) = two_ndx_with_a_producer(&bin, &pair, &file, &data);

    // A's daemon dies: B's daemon hears no advertisement from it for the dead interval and
    // unregisters every route through A.
    a.kill_dv();
    wait_withdrawn(
        &bin,
        &b,
        "/net/a/file",
        15,
        "A's daemon was killed",
        &[&a, &b],
    );
    let local = format!("/localhop{}/", a.router_name());
    let adjacency = wait_for(15, || {
        !rib(b.router())
            .iter()
            .any(|x| x.origin == "nlsr" && x.prefix.starts_with(&local))
    });
    assert!(
        adjacency,
        "B kept its routes to A's daemon after it died\n{}",
        diag(&bin, &[&a, &b])
    );
    assert!(
        !a.router().exited() && !b.router().exited(),
        "a router exited\n{}",
        diag(&bin, &[&a, &b])
    );

    // A new daemon on A: ndx readvertises the producer's client route to it as soon as it
    // registers /localhost/nlsr, the daemons meet again, and B routes to A again.
    a.start_dv(&bin);
    wait_listening(&bin, &a, &[&a, &b]);
    wait_announced(&bin, &a, "/net/a/file", &[&a, &b]);
    wait_adjacent(&bin, &b, &a, &[&a, &b]);
    // ndnd dv clears its own prefix table once at start-up (`Reset table`), after it
    // registered its management prefix: a readvertisement that raced ahead of that is lost
    // (ndnd's own forwarder never replays at all). The producer then registers again.
    let reset_won = || {
        let log = read(&a.dv_log_now());
        let announced = log.rfind("Local announce");
        let reset = log.rfind("Reset table");
        matches!((announced, reset), (Some(x), Some(y)) if y > x)
    };
    if !wait_for(20, || {
        !nlsr_routes_for(b.router(), "/net/a/file").is_empty()
    }) && reset_won()
    {
        eprintln!(
            "the restarted daemon reset its prefix table after the readvertisement: \
             registering again"
        );
        drop(a.put.take());
        a.start_put(&bin, "/net/a/file", &file);
    }
    routed_to_a_and_fetched(&bin, &b, &data, &[&a, &b]);
}

#[test]
fn ndnd_dv_withdraws_a_route_when_the_link_goes_down_and_restores_it_when_it_comes_back() {
    let Some((bin, _one, pair)) = ndnd_pair() else {
        return;
    };
    let (file, data) = pair.content("obj", 200_000, 39);
    let (a, b) = two_ndx_with_a_producer(&bin, &pair, &file, &data);

    // The link goes down (the daemons keep running): both declare the other dead.
    pair.a.run(&["ip", "link", "set", "a0", "down"]);
    wait_withdrawn(&bin, &b, "/net/a/file", 15, "the link went down", &[&a, &b]);
    assert!(
        !a.router().exited() && !b.router().exited(),
        "a router exited when its link went down\n{}",
        diag(&bin, &[&a, &b])
    );

    // Back up: the kernel flushed the link's neighbours; resolve them again as at start.
    pair.a.run(&["ip", "link", "set", "a0", "up"]);
    assert!(
        wait_for(10, || {
            let o = pair.a.try_run(&["ip", "-o", "link", "show", "a0"]);
            String::from_utf8_lossy(&o.stdout).contains("LOWER_UP")
        }),
        "a0 did not come back up"
    );
    pair.warm();
    wait_adjacent(&bin, &b, &a, &[&a, &b]);
    wait_route(&bin, &b, "/net/a/file", A_IP, 60, &[&a, &b]);
    cat(&bin, &b, "/net/a/file", &data, 60, &[&a, &b]);
}

#[test]
fn ndnd_dv_on_ndx_next_to_ndnd_fw_with_ndnd_dv() {
    let Some((bin, _one, pair)) = ndnd_pair() else {
        return;
    };
    let (file_a, data_a) = pair.content("obj-a", 200_000, 40);
    let (file_b, data_b) = pair.content("obj-b", 200_000, 41);
    let mut a = Node::ndnd_fw(&bin, &pair, &pair.a, "a", B_IP);
    let mut b = Node::ndx(&pair, &pair.b, "b", "b0", A_IP, 1);
    start_daemons(&bin, &mut a, &mut b);

    // ndnd put on ndnd's forwarder (which readvertises it), ndnd cat on ndx.
    a.start_put(&bin, "/net/a/file", &file_a);
    wait_announced(&bin, &a, "/net/a/file", &[&a, &b]);
    routed_to_a_and_fetched(&bin, &b, &data_a, &[&a, &b]);

    // The other way: ndnd put on ndx (readvertised by ndx), ndnd cat on ndnd's forwarder.
    b.start_put(&bin, "/net/b/file", &file_b);
    wait_announced(&bin, &b, "/net/b/file", &[&a, &b]);
    let routed = wait_for(60, || {
        a.ndnd_routes(&bin)
            .lines()
            .any(|l| l.contains("prefix=/net/b/file ") && l.contains("origin=nlsr"))
    });
    assert!(
        routed,
        "ndnd fw on a got no route of origin nlsr for /net/b/file within 60 s\n{}",
        diag(&bin, &[&a, &b])
    );
    cat(&bin, &a, "/net/b/file", &data_b, 60, &[&a, &b]);
    assert_no_static(&bin, &[&a, &b]);
}
