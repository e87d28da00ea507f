//! The router's TOML configuration: parsing, defaults and validation.
//!
//! Every key is documented in `configs/ndx.toml`. Parsing refuses unknown keys (a typo must not
//! silently fall back to a default); validation then checks what types cannot express and
//! reports the key and the reason, e.g. `route[2].face: no face named "upstrem"`.

use std::collections::HashSet;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use ndx_codec::NameBuf;
use ndx_core::{
    Admission, CsConfig, DispatchMode, HashKey, Replacement, ShardConfig, StrategyKind, Unsolicited,
};
use serde::Deserialize;

/// Most shards a router runs (the shard is one byte of the PIT token; the XDP program's
/// socket map is sized for 64 per queue).
pub const MAX_SHARDS: usize = 64;

/// A configuration error: which file, which key, and why.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML, has an unknown key, or a value of the wrong type.
    #[error("{file}: {message}")]
    Syntax {
        /// The file.
        file: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A value is out of range or inconsistent with another.
    #[error("{file}: {key}: {why}")]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The key, as a path (`route[1].prefix`).
        key: String,
        /// Why it is refused.
        why: String,
    },
}

/// The configuration as written in the file (serde's view; see [`Config`] for the checked one).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    router: RawRouter,
    #[serde(default)]
    tables: RawTables,
    #[serde(default)]
    cs: RawCs,
    #[serde(default)]
    udp: RawUdp,
    #[serde(default)]
    fairness: RawFairness,
    #[serde(default)]
    app: RawApp,
    #[serde(default)]
    metrics: RawMetrics,
    #[serde(default)]
    interface: Vec<RawInterface>,
    #[serde(default)]
    face: Vec<RawFace>,
    #[serde(default)]
    route: Vec<RawRoute>,
    #[serde(default)]
    strategy: Vec<RawStrategy>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawRouter {
    shards: usize,
    cpus: Vec<usize>,
    hash_key: String,
    dispatch: String,
    dispatch_table: usize,
    control_socket: PathBuf,
    burst: usize,
    frames: u32,
    idle: String,
    xdp_classify: String,
    xsk_tx_budget: u32,
    xsk_busy_poll: u32,
}

impl Default for RawRouter {
    fn default() -> Self {
        Self {
            shards: 1,
            cpus: Vec::new(),
            hash_key: "random".into(),
            dispatch: "content".into(),
            dispatch_table: 256,
            control_socket: PathBuf::from("/run/ndx/ndx.sock"),
            burst: 64,
            frames: 8192,
            idle: "spin".into(),
            xdp_classify: "auto".into(),
            xsk_tx_budget: 0,
            xsk_busy_poll: 0,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawTables {
    pit_capacity: usize,
    max_lifetime_ms: u64,
    dnl_capacity: usize,
    dnl_lifetime_ms: u64,
    unsolicited: String,
    fib_stage1: usize,
    huge_pages: bool,
}

impl Default for RawTables {
    fn default() -> Self {
        let d = ShardConfig::default();
        Self {
            pit_capacity: d.pit_capacity,
            max_lifetime_ms: d.max_lifetime_ms,
            dnl_capacity: d.dnl_capacity,
            dnl_lifetime_ms: d.dnl_lifetime_ns / 1_000_000,
            unsolicited: "drop".into(),
            fib_stage1: 2,
            huge_pages: true,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawCs {
    capacity: usize,
    slot_size: usize,
    replacement: String,
    admission: String,
    admission_probability: f64,
    second_hit_window: usize,
    keep_frames: bool,
    l2: RawL2,
}

impl Default for RawCs {
    fn default() -> Self {
        let d = CsConfig::default();
        Self {
            capacity: d.capacity,
            slot_size: d.slot_size,
            replacement: "lru".into(),
            admission: "always".into(),
            admission_probability: 0.5,
            second_hit_window: 1 << 16,
            keep_frames: true,
            l2: RawL2::default(),
        }
    }
}

/// A byte size: a number, or a string with a binary unit ("512MiB", "4G", "1 TiB").
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum RawSize {
    Bytes(u64),
    Text(String),
}

impl RawSize {
    fn bytes(&self) -> Result<u64, String> {
        let t = match self {
            RawSize::Bytes(n) => return Ok(*n),
            RawSize::Text(t) => t.trim(),
        };
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let num: u64 = num
            .parse()
            .map_err(|_| format!("{t:?}: expected a number of bytes, e.g. \"4GiB\""))?;
        let shift = match unit.trim().trim_end_matches("iB").trim_end_matches('B') {
            "" => 0,
            "K" | "k" => 10,
            "M" => 20,
            "G" => 30,
            "T" => 40,
            other => return Err(format!("{t:?}: unknown unit {other:?} (K, M, G or T)")),
        };
        num.checked_mul(1 << shift)
            .ok_or_else(|| format!("{t:?}: too large"))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawL2 {
    enabled: bool,
    backend: String,
    dirs: Vec<PathBuf>,
    size: RawSize,
    batch: u64,
    prefetch: bool,
    queue_depth: usize,
    write_depth: usize,
    write_backlog: usize,
    admission: String,
    second_hit_window: usize,
    max_parked_per_read: usize,
    staging: usize,
    stage_timeout_ms: u64,
    direct_io: bool,
    on_start: String,
    verify: String,
    tau_gbps: f64,
}

impl Default for RawL2 {
    fn default() -> Self {
        let d = ndx_core::L2Config::default();
        Self {
            enabled: false,
            backend: "files".into(),
            dirs: vec![PathBuf::from("/var/lib/ndx/l2")],
            size: RawSize::Text("1GiB".into()),
            batch: d.batch,
            prefetch: d.prefetch,
            queue_depth: 16,
            write_depth: 4,
            write_backlog: crate::l2::WRITE_BACKLOG,
            admission: "write-all".into(),
            second_hit_window: 1 << 16,
            max_parked_per_read: d.max_parked_per_read,
            staging: d.staging,
            stage_timeout_ms: d.stage_timeout_ns / 1_000_000,
            direct_io: true,
            on_start: "recover".into(),
            verify: "full".into(),
            tau_gbps: 4.0,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawUdp {
    ports: Vec<u16>,
    on_demand: bool,
    on_demand_max: usize,
    on_demand_per_address: usize,
    on_demand_idle_ms: u64,
    fragmentation: String,
}

impl Default for RawUdp {
    fn default() -> Self {
        let d = OnDemandLimits::default();
        Self {
            ports: vec![6363],
            on_demand: true,
            on_demand_max: d.max,
            on_demand_per_address: d.per_address,
            on_demand_idle_ms: d.idle_ms,
            fragmentation: "ndnlp".into(),
        }
    }
}

/// How many on-demand UDP faces may exist, and when an idle one is removed (`[udp]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnDemandLimits {
    /// On-demand faces at most (a new peer past it is refused, counted).
    pub max: usize,
    /// On-demand faces from one IP address at most (its other ports are refused, counted).
    pub per_address: usize,
    /// An on-demand face that received nothing for this long is removed (ms).
    pub idle_ms: u64,
}

impl Default for OnDemandLimits {
    fn default() -> Self {
        Self {
            max: 4096,
            per_address: 16,
            idle_ms: 600_000,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawFairness {
    pit_shares: bool,
    pit_reserve: u32,
    pit_min: u32,
    nack_rate: u32,
    nack_burst: u32,
}

impl Default for RawFairness {
    fn default() -> Self {
        let d = ndx_core::Fairness::default();
        Self {
            pit_shares: d.pit_shares,
            pit_reserve: d.pit_reserve,
            pit_min: d.pit_min,
            nack_rate: d.nack_rate,
            nack_burst: d.nack_burst,
        }
    }
}

/// `[metrics]`: the Prometheus endpoint.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawMetrics {
    /// `IP:PORT` to serve `GET /metrics` on; empty: no endpoint.
    listen: String,
}

impl RawMetrics {
    fn check(&self) -> Check<Option<std::net::SocketAddr>> {
        if self.listen.is_empty() {
            return Ok(None);
        }
        let addr: std::net::SocketAddr = self.listen.parse().or_else(|_| {
            bad(
                "metrics.listen",
                format!(
                    "{:?}: an IP address and port such as \"127.0.0.1:9363\" or \"[::1]:9363\" \
                     (empty: no metrics endpoint)",
                    self.listen
                ),
            )
        })?;
        if addr.port() == 0 {
            return bad(
                "metrics.listen",
                format!(
                    "{:?}: port 0 would be a different port on every start; pick one for \
                     Prometheus to scrape (such as 9363)",
                    self.listen
                ),
            );
        }
        Ok(Some(addr))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawApp {
    socket: String,
    owner: String,
    group: String,
    mode: String,
    queue_bytes: usize,
    max_connections: usize,
    localhop: bool,
    command_key: String,
    udp_fragments: bool,
}

impl Default for RawApp {
    fn default() -> Self {
        Self {
            socket: DEFAULT_APP_SOCKET.into(),
            owner: String::new(),
            group: String::new(),
            mode: "0666".into(),
            queue_bytes: 4 << 20,
            max_connections: 4096,
            localhop: false,
            command_key: String::new(),
            udp_fragments: true,
        }
    }
}

/// Where NFD (and so every NDN client library) expects the local forwarder's socket.
pub const DEFAULT_APP_SOCKET: &str = "/run/nfd/nfd.sock";

/// `[app]`: local application faces, NFD management, and the host thread's kernel sockets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppConfig {
    /// The app socket (`None`: no app faces).
    pub socket: Option<PathBuf>,
    /// Owner of the socket file (uid), when set.
    pub owner: Option<u32>,
    /// Group of the socket file (gid), when set.
    pub group: Option<u32>,
    /// Permission bits of the socket file.
    pub mode: u32,
    /// Bytes an app face may have waiting to be written before its packets are dropped.
    pub queue_bytes: usize,
    /// Most app connections at once (more are refused).
    pub max_connections: usize,
    /// Accept `/localhop/nfd/rib/(un)register` from remote faces.
    pub localhop: bool,
    /// Commands must be signed with HMAC-SHA256 under this key (its bytes), when set.
    pub command_key: Option<Vec<u8>>,
    /// Kernel UDP sockets on the NDN ports receive the IP-fragmented datagrams the XDP
    /// program leaves to the kernel.
    pub udp_fragments: bool,
}

impl Default for AppConfig {
    fn default() -> Self {
        RawApp::default()
            .check(Path::new(""))
            .unwrap_or_else(|_| unreachable!("the defaults are valid"))
    }
}

impl RawApp {
    fn check(&self, dir: &Path) -> Check<AppConfig> {
        let mode = u32::from_str_radix(self.mode.trim_start_matches("0o"), 8)
            .ok()
            .filter(|m| *m <= 0o777)
            .map_or_else(
                || {
                    bad(
                        "app.mode",
                        format!("{:?}: octal permission bits such as \"0660\"", self.mode),
                    )
                },
                Ok,
            )?;
        if self.queue_bytes < 65_536 {
            return bad(
                "app.queue_bytes",
                format!(
                    "{}: at least 65536 (one packet of the largest size)",
                    self.queue_bytes
                ),
            );
        }
        if self.max_connections == 0 {
            return bad("app.max_connections", "must be at least 1");
        }
        let owner = match self.owner.as_str() {
            "" => None,
            o => Some(lookup_id("/etc/passwd", o).or_else(|e| bad("app.owner", e))?),
        };
        let group = match self.group.as_str() {
            "" => None,
            g => Some(lookup_id("/etc/group", g).or_else(|e| bad("app.group", e))?),
        };
        let command_key = match self.command_key.as_str() {
            "" => None,
            k => {
                let path = dir.join(k);
                let bytes = std::fs::read(&path)
                    .or_else(|e| bad("app.command_key", format!("{}: {e}", path.display())))?;
                let trimmed = String::from_utf8_lossy(&bytes).trim().to_owned();
                if trimmed.len() < 16 {
                    return bad(
                        "app.command_key",
                        format!("{}: at least 16 bytes of key", path.display()),
                    );
                }
                Some(trimmed.into_bytes())
            }
        };
        Ok(AppConfig {
            socket: (!self.socket.is_empty()).then(|| PathBuf::from(&self.socket)),
            owner,
            group,
            mode,
            queue_bytes: self.queue_bytes,
            max_connections: self.max_connections,
            localhop: self.localhop,
            command_key,
            udp_fragments: self.udp_fragments,
        })
    }
}

/// A user or group id by name (or number) from `/etc/passwd` or `/etc/group`.
fn lookup_id(file: &str, name: &str) -> Result<u32, String> {
    if let Ok(n) = name.parse() {
        return Ok(n);
    }
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    text.lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.first() == Some(&name))
        .and_then(|f| f.get(2)?.parse().ok())
        .ok_or_else(|| format!("{name:?} is not in {file}"))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInterface {
    name: String,
    #[serde(default = "default_xdp_mode")]
    xdp_mode: String,
    #[serde(default)]
    queues: u32,
    #[serde(default = "yes")]
    udp: bool,
    #[serde(default = "yes")]
    ethernet: bool,
    #[serde(default = "yes")]
    ethernet_multicast: bool,
    #[serde(default = "default_frags")]
    frags: String,
}

fn default_xdp_mode() -> String {
    "auto".into()
}

fn default_frags() -> String {
    "auto".into()
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFace {
    name: String,
    remote: String,
    #[serde(default)]
    interface: Option<String>,
    #[serde(default)]
    local: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    prefix: String,
    face: String,
    #[serde(default)]
    cost: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStrategy {
    prefix: String,
    strategy: String,
}

/// What a shard worker does when a loop turn found no work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Keep polling (lowest latency; the core is the shard's alone).
    Spin,
    /// After a run of empty turns, give the CPU to other threads (`sched_yield`) on every
    /// empty turn: for machines where shards share cores with other work.
    Yield,
    /// After a run of empty turns, sleep up to [`PARK_MICROS`] µs at a time: the host
    /// thread wakes the shard at once when it hands it a packet (app faces), frames from
    /// the network wait at most that long. For hosts where the forwarder shares a few cores
    /// with its applications.
    Park,
}

/// Longest sleep of an idle shard with `idle = "park"`, in microseconds.
pub const PARK_MICROS: u64 = 50;

/// How the XDP program is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpMode {
    /// Native (driver) mode, falling back to generic (SKB) mode when the driver refuses.
    Auto,
    /// Native (driver) mode only.
    Native,
    /// Generic (SKB) mode.
    Skb,
}

/// Whether the multi-buffer (`xdp.frags`) program and AF_XDP's `XDP_USE_SG` are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frags {
    /// When the interface's MTU exceeds what one 4096-byte frame holds.
    Auto,
    /// Always.
    On,
    /// Never (frames larger than one UMEM frame are dropped by the kernel).
    Off,
}

/// An interface the router attaches to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceConfig {
    /// Interface name.
    pub name: String,
    /// Attach mode.
    pub xdp_mode: XdpMode,
    /// Receive queues to serve (0: every queue the device has).
    pub queues: u32,
    /// NDN over UDP on the configured ports.
    pub udp: bool,
    /// NDN over Ethernet (EtherType 0x8624).
    pub ethernet: bool,
    /// Join the NDN Ethernet multicast group and create a multicast face.
    pub ethernet_multicast: bool,
    /// Multi-buffer frames.
    pub frags: Frags,
}

/// Where a configured face leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remote {
    /// NDN over UDP to this address (IPv4 or IPv6).
    Udp(SocketAddr),
    /// NDN over Ethernet to this MAC address.
    Ether([u8; 6]),
    /// The NDN Ethernet multicast group (01:00:5e:00:17:aa).
    EtherMulticast,
}

impl fmt::Display for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Remote::Udp(a) => write!(f, "udp://{a}"),
            Remote::Ether(m) => write!(
                f,
                "ether://{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                m[0], m[1], m[2], m[3], m[4], m[5]
            ),
            Remote::EtherMulticast => f.write_str("ether-multicast"),
        }
    }
}

impl Remote {
    /// Parses `udp://IP:PORT` (`udp4://`, `udp6://`, `[v6]:port`; the port defaults to 6363),
    /// `ether://aa:bb:cc:dd:ee:ff` or `ether-multicast`.
    pub fn parse(s: &str) -> Result<Self, String> {
        if s == "ether-multicast" {
            return Ok(Remote::EtherMulticast);
        }
        if let Some(mac) = s.strip_prefix("ether://") {
            return parse_mac(mac).map(Remote::Ether);
        }
        let rest = ["udp://", "udp4://", "udp6://"]
            .iter()
            .find_map(|p| s.strip_prefix(p))
            .ok_or_else(|| {
                format!("{s:?}: expected udp://IP:PORT, ether://MAC or ether-multicast")
            })?;
        let addr = match rest.parse::<SocketAddr>() {
            Ok(a) => a,
            Err(_) => match rest.trim_start_matches('[').trim_end_matches(']').parse() {
                Ok(ip) => SocketAddr::new(ip, 6363),
                Err(_) => return Err(format!("{rest:?} is not an IP address with a port")),
            },
        };
        if addr.port() == 0 {
            return Err("port 0".into());
        }
        if s.starts_with("udp4://") && !addr.is_ipv4()
            || s.starts_with("udp6://") && !addr.is_ipv6()
        {
            return Err(format!("{s:?}: address family does not match the scheme"));
        }
        let ip = addr.ip();
        if ip.is_unspecified() || ip.is_multicast() || ip == IpAddr::from([255, 255, 255, 255]) {
            return Err(format!("{ip} is not a unicast address"));
        }
        Ok(Remote::Udp(addr))
    }
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let mut mac = [0u8; 6];
    let parts: Vec<&str> = s.split([':', '-']).collect();
    if parts.len() != 6 {
        return Err(format!("{s:?} is not a MAC address (aa:bb:cc:dd:ee:ff)"));
    }
    for (b, p) in mac.iter_mut().zip(parts) {
        *b = u8::from_str_radix(p, 16)
            .ok()
            .filter(|_| p.len() <= 2)
            .ok_or_else(|| format!("{s:?} is not a MAC address (aa:bb:cc:dd:ee:ff)"))?;
    }
    Ok(mac)
}

/// A face from the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaceConfig {
    /// Name routes refer to.
    pub name: String,
    /// Where it leads.
    pub remote: Remote,
    /// The interface (required for Ethernet faces; for UDP the routing table decides when
    /// absent).
    pub interface: Option<String>,
    /// A local application face (no HopLimit decrement).
    pub local: bool,
}

/// A route from the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteConfig {
    /// The prefix.
    pub prefix: NameBuf,
    /// Index into [`Config::faces`].
    pub face: usize,
    /// Cost.
    pub cost: u32,
}

/// The checked configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Number of shard workers.
    pub shards: usize,
    /// CPUs to pin shard `i` to (`cpus[i % len]`); empty: CPU `i % available CPUs`.
    pub cpus: Vec<usize>,
    /// The name-hash key (random unless configured).
    pub hash_key: HashKey,
    /// The key's halves, as the XDP program needs them.
    pub hash_key_halves: (u64, u64),
    /// True when the key was drawn at random (`hash_key = "random"`): a persistent L2 store
    /// then supplies the key its records were written with (see [`Config::set_hash_key`]).
    pub hash_key_random: bool,
    /// Shard dispatch.
    pub dispatch: DispatchMode,
    /// Indirection-table entries.
    pub dispatch_table: usize,
    /// The control socket's path.
    pub control_socket: PathBuf,
    /// Most frames per RX/TX burst.
    pub burst: usize,
    /// What an idle worker does between empty loop turns.
    pub idle: Idle,
    /// Whether the XDP program parses NDN frames (kind, name hash, shard, metadata):
    /// `router.xdp_classify`, "auto" = only with several shards.
    pub xdp_classify: bool,
    /// Frames the kernel may transmit per `sendto` on a copy-mode socket
    /// (`router.xsk_tx_budget`; `None` = the whole TX ring, one call per burst).
    pub xsk_tx_budget: Option<u32>,
    /// Socket busy polling with this budget (`router.xsk_busy_poll`; `None` = off).
    pub xsk_busy_poll: Option<u32>,
    /// UMEM frames per (interface, queue).
    pub frames: u32,
    /// Per-shard table configuration (shard number filled in per shard).
    pub shard: ShardConfig,
    /// Whether the CS keeps the receive frames Data arrive in rather than copying them
    /// (`cs.keep_frames`; bounded per port, see `benches/results/design-history.md` "CS: kept frames").
    pub keep_frames: bool,
    /// FIB first-stage depth.
    pub fib_stage1: usize,
    /// Whether the large tables get transparent huge pages (`tables.huge_pages`).
    pub huge_pages: bool,
    /// UDP ports NDN is spoken on (the first is the source port of what we send).
    pub udp_ports: Vec<u16>,
    /// Create faces for new UDP peers on their first packet.
    pub udp_on_demand: bool,
    /// Bounds on those faces (`[udp]`).
    pub on_demand: OnDemandLimits,
    /// Packets larger than the link MTU leave UDP faces as IP fragments from the kernel's
    /// UDP socket (NFD's way) rather than NDNLPv2 fragments from the data path.
    pub udp_ip_fragments: bool,
    /// `[app]`.
    pub app: AppConfig,
    /// `[metrics] listen`: where the Prometheus endpoint listens (`None`: off).
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Interfaces.
    pub interfaces: Vec<InterfaceConfig>,
    /// Faces.
    pub faces: Vec<FaceConfig>,
    /// Routes.
    pub routes: Vec<RouteConfig>,
    /// Strategies by prefix.
    pub strategies: Vec<(NameBuf, StrategyKind)>,
    /// The content store's second level (`[cs.l2]`); `None` when disabled. The shard side
    /// is in `shard.l2`.
    pub l2: Option<L2Settings>,
}

impl L2Settings {
    /// One line on what this sets up (with the shard side `core`).
    pub fn describe(&self, core: &ndx_core::L2Config) -> String {
        let store = match self.kind {
            L2Kind::Files => format!(
                "{} MiB per shard in each of {}",
                self.size >> 20,
                self.dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            L2Kind::Emulated { tau_bps } => format!(
                "emulated, {} MiB per shard at {} Gbit/s",
                self.size >> 20,
                tau_bps / 1e9
            ),
        };
        format!(
            "L2: {store}; batch {}, {}, queue depth {}",
            core.batch,
            if core.prefetch { "prefetch" } else { "serial" },
            self.queue_depth
        )
    }
}

impl Config {
    /// Replaces the name-hash key everywhere it is used (tables, dispatch, XDP).
    pub fn set_hash_key(&mut self, k0: u64, k1: u64) {
        self.hash_key = HashKey::new(k0, k1);
        self.hash_key_halves = (k0, k1);
        self.shard.hash_key = self.hash_key;
        self.hash_key_random = false;
    }
}

/// Where a shard's L2 lives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum L2Kind {
    /// Files (one per shard in each of `dirs`, one io_uring lane each).
    Files,
    /// DRAM with the read delay of a device of `tau_bps` bits/s (seed 000 §3.2), to explore
    /// L2 speeds this machine's disks do not have.
    Emulated {
        /// Device throughput in bits/s.
        tau_bps: f64,
    },
}

/// What happens to an existing L2 store at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2OnStart {
    /// Scan the files and keep every valid record.
    Recover,
    /// Empty the files.
    Clear,
}

/// The I/O side of the L2 (`[cs.l2]`).
#[derive(Debug, Clone, PartialEq)]
pub struct L2Settings {
    /// Files or emulated.
    pub kind: L2Kind,
    /// Directories holding each shard's file (`shard-<i>.l2`); one per device.
    pub dirs: Vec<PathBuf>,
    /// Bytes of log per shard per directory (emulated: per shard).
    pub size: u64,
    /// Reads in flight per shard (Q).
    pub queue_depth: usize,
    /// Writes in flight per shard.
    pub write_depth: usize,
    /// Batches waiting for a write slot per shard, at most (beyond: dropped and counted).
    pub write_backlog: usize,
    /// Try O_DIRECT.
    pub direct_io: bool,
    /// Recover or clear at start-up.
    pub on_start: L2OnStart,
    /// Verify whole records (true) or headers only when recovering.
    pub verify_full: bool,
    /// Largest Data frame stored (the L1 slot size).
    pub max_frame: usize,
    /// Largest batch record: a header block plus `batch` full frames, padded to blocks.
    pub max_record: usize,
}

/// Why a configuration without `[[interface]]` cannot run: `Router::start`'s own message
/// (`StartError::NoInterface`), which `ndx check` gives too.
pub const NO_INTERFACE: &str =
    "no [[interface]] in the configuration: ndx needs at least one to attach to";

impl Config {
    /// Reads and checks a configuration file for a router (what `ndx run` and `ndx check`
    /// load): the checks of [`Config::parse`], then [`Config::check_runnable`].
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            file: path.to_path_buf(),
            source,
        })?;
        let c = Self::parse(&text, path)?;
        c.check_runnable(path)?;
        Ok(c)
    }

    /// What `Router::start` refuses of a configuration that parses, checked without touching
    /// the system: at least one `[[interface]]` ([`NO_INTERFACE`]). [`Config::parse`] accepts
    /// a configuration without one (the control plane alone, as tests build it).
    pub fn check_runnable(&self, file: &Path) -> Result<(), ConfigError> {
        if self.interfaces.is_empty() {
            return Err(ConfigError::Invalid {
                file: file.to_path_buf(),
                key: "interface".into(),
                why: NO_INTERFACE.into(),
            });
        }
        Ok(())
    }

    /// Parses and checks configuration text; `file` names it in errors. Everything the
    /// router's start-up would refuse in the faces, routes and strategies is refused here
    /// (two faces to one peer, more next hops than a route holds, a strategy for a prefix
    /// without a route); whether the interfaces exist is only known when `ndx run` attaches.
    pub fn parse(text: &str, file: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            file: file.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let dir = file.parent().unwrap_or(Path::new("."));
        raw.check(dir).map_err(|(key, why)| ConfigError::Invalid {
            file: file.to_path_buf(),
            key,
            why,
        })
    }
}

type Check<T> = Result<T, (String, String)>;

fn bad<T>(key: impl Into<String>, why: impl Into<String>) -> Check<T> {
    Err((key.into(), why.into()))
}

fn parse_dispatch(s: &str) -> Result<DispatchMode, String> {
    let (mode, arg) = match s.split_once(':') {
        Some((m, a)) => (m, Some(a)),
        None => (s, None),
    };
    let num = |a: Option<&str>| -> Result<u64, String> {
        let a = a.ok_or_else(|| format!("{mode:?} needs a number: \"{mode}:N\""))?;
        match a.parse::<u64>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!("{a:?} is not a positive number")),
        }
    };
    match mode {
        "content" if arg.is_none() => Ok(DispatchMode::Content),
        "prefix" => num(arg).map(|k| DispatchMode::Prefix(k as usize)),
        "batch" => num(arg).map(DispatchMode::Batch),
        _ => Err(format!(
            "{s:?}: expected \"content\", \"prefix:K\" or \"batch:B\""
        )),
    }
}

fn parse_key(s: &str) -> Result<(u64, u64), String> {
    if s == "random" {
        return Ok(random_key());
    }
    if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("expected \"random\" or 32 hexadecimal digits".into());
    }
    let k0 = u64::from_str_radix(&s[..16], 16).map_err(|e| e.to_string())?;
    let k1 = u64::from_str_radix(&s[16..], 16).map_err(|e| e.to_string())?;
    Ok((k0, k1))
}

/// A key from the OS's random source (falls back to the clock and process id only if
/// `/dev/urandom` cannot be read, which no Linux system lacks).
pub(crate) fn random_key() -> (u64, u64) {
    use std::io::Read;
    let mut b = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok();
    if !ok {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        b.copy_from_slice(&(t ^ (u128::from(std::process::id()) << 64)).to_le_bytes());
    }
    let (lo, hi) = b.split_at(8);
    (
        u64::from_le_bytes(lo.try_into().unwrap_or([0; 8])),
        u64::from_le_bytes(hi.try_into().unwrap_or([0; 8])),
    )
}

impl RawConfig {
    fn check(self, dir: &Path) -> Check<Config> {
        let r = &self.router;
        if !(1..=MAX_SHARDS).contains(&r.shards) {
            return bad(
                "router.shards",
                format!("{}: between 1 and {MAX_SHARDS}", r.shards),
            );
        }
        if let Some(c) = r.cpus.iter().find(|&&c| c >= 1024) {
            return bad("router.cpus", format!("CPU {c} does not exist"));
        }
        let (k0, k1) = parse_key(&r.hash_key).or_else(|e| bad("router.hash_key", e))?;
        let dispatch = parse_dispatch(&r.dispatch).or_else(|e| bad("router.dispatch", e))?;
        let t = r.dispatch_table;
        if !t.is_power_of_two() || t < r.shards || t > 1 << 16 {
            return bad(
                "router.dispatch_table",
                format!("{t}: a power of two, at least router.shards, at most 65536"),
            );
        }
        let idle = match r.idle.as_str() {
            "spin" => Idle::Spin,
            "yield" => Idle::Yield,
            "park" => Idle::Park,
            other => {
                return bad(
                    "router.idle",
                    format!("{other:?}: \"spin\", \"yield\" or \"park\""),
                );
            }
        };
        let xdp_classify = match r.xdp_classify.as_str() {
            "auto" => r.shards > 1,
            "always" => true,
            other => {
                return bad(
                    "router.xdp_classify",
                    format!("{other:?}: \"auto\" (only with several shards) or \"always\""),
                );
            }
        };
        let xsk_tx_budget = match r.xsk_tx_budget {
            0 => None,
            b @ 32..=2048 => Some(b),
            b => {
                return bad(
                    "router.xsk_tx_budget",
                    format!("{b}: 0 (the whole TX ring) or between 32 and 2048"),
                );
            }
        };
        let xsk_busy_poll = match r.xsk_busy_poll {
            0 => None,
            b @ 1..=1024 => Some(b),
            b => {
                return bad(
                    "router.xsk_busy_poll",
                    format!("{b}: 0 (off) or between 1 and 1024"),
                );
            }
        };
        if !(1..=1024).contains(&r.burst) {
            return bad("router.burst", format!("{}: between 1 and 1024", r.burst));
        }
        if !r.frames.is_power_of_two() || !(1024..=1 << 20).contains(&r.frames) {
            return bad(
                "router.frames",
                format!(
                    "{}: a power of two between 1024 and 1048576 (4 KiB each)",
                    r.frames
                ),
            );
        }

        let tb = &self.tables;
        if !(16..=ndx_core::MAX_PIT_CAPACITY).contains(&tb.pit_capacity) {
            return bad(
                "tables.pit_capacity",
                format!(
                    "{}: between 16 and {} (24 bits of PIT token)",
                    tb.pit_capacity,
                    ndx_core::MAX_PIT_CAPACITY
                ),
            );
        }
        if tb.max_lifetime_ms == 0 {
            return bad("tables.max_lifetime_ms", "must be at least 1");
        }
        if tb.dnl_capacity == 0 {
            return bad("tables.dnl_capacity", "must be at least 1");
        }
        let unsolicited = match tb.unsolicited.as_str() {
            "drop" => Unsolicited::Drop,
            "cache" => Unsolicited::Cache,
            other => {
                return bad(
                    "tables.unsolicited",
                    format!("{other:?}: \"drop\" or \"cache\""),
                );
            }
        };
        if !(1..=ndx_core::MAX_PREFIX_DEPTH).contains(&tb.fib_stage1) {
            return bad(
                "tables.fib_stage1",
                format!(
                    "{}: between 1 and {}",
                    tb.fib_stage1,
                    ndx_core::MAX_PREFIX_DEPTH
                ),
            );
        }

        let c = &self.cs;
        if c.capacity > 1 << 28 {
            return bad("cs.capacity", format!("{}: at most 268435456", c.capacity));
        }
        if !(512..=65536).contains(&c.slot_size) {
            return bad(
                "cs.slot_size",
                format!("{}: between 512 and 65536 bytes", c.slot_size),
            );
        }
        let replacement = match c.replacement.as_str() {
            "fifo" => Replacement::Fifo,
            "lru" => Replacement::Lru,
            "clock" => Replacement::Clock,
            other => {
                return bad(
                    "cs.replacement",
                    format!("{other:?}: \"fifo\", \"lru\" or \"clock\""),
                );
            }
        };
        let admission = match c.admission.as_str() {
            "always" => Admission::Always,
            "probabilistic" => {
                let p = c.admission_probability;
                if !(p > 0.0 && p <= 1.0) {
                    return bad(
                        "cs.admission_probability",
                        format!("{p}: a probability in (0, 1]"),
                    );
                }
                Admission::Probabilistic(p)
            }
            "second-hit" => {
                if c.second_hit_window == 0 {
                    return bad("cs.second_hit_window", "must be at least 1");
                }
                Admission::SecondHit {
                    window: c.second_hit_window,
                }
            }
            other => {
                return bad(
                    "cs.admission",
                    format!("{other:?}: \"always\", \"probabilistic\" or \"second-hit\""),
                );
            }
        };

        let (l2, l2_core) = check_l2(&c.l2, c.slot_size)?;
        if let (Some(core), DispatchMode::Batch(bd)) = (&l2_core, dispatch)
            && r.shards > 1
            && bd % core.batch != 0
        {
            return bad(
                "router.dispatch",
                format!(
                    "batch:{bd} would split the L2's batches of {} segments across shards \
                     (each shard writes and reads only whole batches): use a multiple of \
                     cs.l2.batch",
                    core.batch
                ),
            );
        }

        let u = &self.udp;
        if u.ports.is_empty() || u.ports.len() > 8 {
            return bad("udp.ports", "between 1 and 8 ports");
        }
        if !(1..=1 << 20).contains(&u.on_demand_max) {
            return bad(
                "udp.on_demand_max",
                format!("{}: between 1 and 1048576", u.on_demand_max),
            );
        }
        if !(1..=u.on_demand_max).contains(&u.on_demand_per_address) {
            return bad(
                "udp.on_demand_per_address",
                format!(
                    "{}: between 1 and udp.on_demand_max ({})",
                    u.on_demand_per_address, u.on_demand_max
                ),
            );
        }
        if u.on_demand_idle_ms < 1000 {
            return bad(
                "udp.on_demand_idle_ms",
                format!("{}: at least 1000", u.on_demand_idle_ms),
            );
        }
        let fr = &self.fairness;
        if fr.pit_shares && fr.pit_reserve == 0 {
            return bad(
                "fairness.pit_reserve",
                "0 would let one face fill the PIT; at least 1 (or pit_shares = false)",
            );
        }
        if fr.pit_reserve > 1024 {
            return bad(
                "fairness.pit_reserve",
                format!("{}: at most 1024", fr.pit_reserve),
            );
        }
        if fr.pit_min == 0 {
            return bad("fairness.pit_min", "must be at least 1");
        }
        if fr.nack_rate > 0 && fr.nack_burst == 0 {
            return bad(
                "fairness.nack_burst",
                "must be at least 1 when nack_rate limits Nacks",
            );
        }
        if u.ports.contains(&0) {
            return bad("udp.ports", "port 0");
        }

        let mut interfaces = Vec::new();
        let mut seen = HashSet::new();
        for (i, f) in self.interface.iter().enumerate() {
            let key = |k: &str| format!("interface[{i}].{k}");
            if f.name.is_empty() || f.name.len() > 15 || f.name.contains(['/', ' ']) {
                return bad(
                    key("name"),
                    format!("{:?} is not an interface name", f.name),
                );
            }
            if !seen.insert(f.name.clone()) {
                return bad(key("name"), format!("{:?} is listed twice", f.name));
            }
            let xdp_mode = match f.xdp_mode.as_str() {
                "auto" => XdpMode::Auto,
                "native" => XdpMode::Native,
                "skb" => XdpMode::Skb,
                other => {
                    return bad(
                        key("xdp_mode"),
                        format!("{other:?}: \"auto\", \"native\" or \"skb\""),
                    );
                }
            };
            let frags = match f.frags.as_str() {
                "auto" => Frags::Auto,
                "on" => Frags::On,
                "off" => Frags::Off,
                other => {
                    return bad(
                        key("frags"),
                        format!("{other:?}: \"auto\", \"on\" or \"off\""),
                    );
                }
            };
            if f.queues > 64 {
                return bad(key("queues"), format!("{}: at most 64", f.queues));
            }
            if !f.udp && !f.ethernet {
                return bad(key("udp"), "neither udp nor ethernet is enabled");
            }
            interfaces.push(InterfaceConfig {
                name: f.name.clone(),
                xdp_mode,
                queues: f.queues,
                udp: f.udp,
                ethernet: f.ethernet,
                ethernet_multicast: f.ethernet && f.ethernet_multicast,
                frags,
            });
        }

        let mut faces: Vec<FaceConfig> = Vec::new();
        for (i, f) in self.face.iter().enumerate() {
            let key = |k: &str| format!("face[{i}].{k}");
            if f.name.is_empty() {
                return bad(key("name"), "empty");
            }
            if faces.iter().any(|g| g.name == f.name) {
                return bad(key("name"), format!("{:?} is used twice", f.name));
            }
            let remote = Remote::parse(&f.remote).or_else(|e| bad(key("remote"), e))?;
            if let Some(ifname) = &f.interface
                && !seen.contains(ifname)
            {
                return bad(
                    key("interface"),
                    format!("{ifname:?} is not one of the [[interface]] entries"),
                );
            }
            if matches!(remote, Remote::Ether(_) | Remote::EtherMulticast) && f.interface.is_none()
            {
                return bad(key("interface"), "an Ethernet face needs an interface");
            }
            // One face per link (the face table refuses a second at start-up): the same UDP
            // address, or the same MAC (or the multicast group) on the same interface.
            let same_link = |g: &FaceConfig| {
                g.remote == remote
                    && (matches!(remote, Remote::Udp(_)) || g.interface == f.interface)
            };
            if let Some(g) = faces.iter().find(|g| same_link(g)) {
                return bad(
                    key("remote"),
                    format!("{remote} is already face {:?}", g.name),
                );
            }
            faces.push(FaceConfig {
                name: f.name.clone(),
                remote,
                interface: f.interface.clone(),
                local: f.local,
            });
        }

        let mut routes = Vec::new();
        for (i, rt) in self.route.iter().enumerate() {
            let key = |k: &str| format!("route[{i}].{k}");
            let prefix = NameBuf::from_uri(&rt.prefix)
                .or_else(|e| bad(key("prefix"), format!("{:?}: {e}", rt.prefix)))?;
            if prefix.as_name().len() > ndx_core::MAX_PREFIX_DEPTH {
                return bad(
                    key("prefix"),
                    format!("deeper than {} components", ndx_core::MAX_PREFIX_DEPTH),
                );
            }
            if prefix.as_name().as_bytes().len() > ndx_core::MAX_PREFIX_BYTES {
                return bad(
                    key("prefix"),
                    format!("longer than {} bytes", ndx_core::MAX_PREFIX_BYTES),
                );
            }
            let face = faces
                .iter()
                .position(|f| f.name == rt.face)
                .ok_or_else(|| (key("face"), format!("no face named {:?}", rt.face)))?;
            let hops = routes
                .iter()
                .filter(|r: &&RouteConfig| r.prefix == prefix && r.face != face)
                .map(|r| r.face)
                .collect::<HashSet<_>>()
                .len();
            if hops >= ndx_core::MAX_NEXTHOPS {
                return bad(
                    key("face"),
                    format!(
                        "{prefix} already has {hops} next hops: a route holds at most {}",
                        ndx_core::MAX_NEXTHOPS
                    ),
                );
            }
            routes.push(RouteConfig {
                prefix,
                face,
                cost: rt.cost,
            });
        }

        let mut strategies = Vec::new();
        for (i, s) in self.strategy.iter().enumerate() {
            let key = |k: &str| format!("strategy[{i}].{k}");
            let prefix = NameBuf::from_uri(&s.prefix)
                .or_else(|e| bad(key("prefix"), format!("{:?}: {e}", s.prefix)))?;
            let kind = match s.strategy.as_str() {
                "best-route" => StrategyKind::BestRoute,
                "multicast" => StrategyKind::Multicast,
                "adaptive" => StrategyKind::Adaptive,
                other => {
                    return bad(
                        key("strategy"),
                        format!("{other:?}: \"best-route\", \"multicast\" or \"adaptive\""),
                    );
                }
            };
            strategies.push((prefix, kind));
        }

        let hash_key = HashKey::new(k0, k1);
        let shard = ShardConfig {
            pit_capacity: tb.pit_capacity,
            cs: CsConfig {
                capacity: c.capacity,
                slot_size: c.slot_size,
                replacement,
                admission,
                ..CsConfig::default()
            },
            dnl_capacity: tb.dnl_capacity,
            dnl_lifetime_ns: tb.dnl_lifetime_ms.saturating_mul(1_000_000),
            max_lifetime_ms: tb.max_lifetime_ms,
            unsolicited,
            hash_key,
            l2: l2_core,
            fairness: ndx_core::Fairness {
                pit_shares: fr.pit_shares,
                pit_reserve: fr.pit_reserve,
                pit_min: fr.pit_min,
                nack_rate: fr.nack_rate,
                nack_burst: fr.nack_burst,
            },
            // Random, as NFD's nonces are: two routers (whose shards' generators give Nonces
            // to Interests without one) must not send the same sequence.
            seed: random_key().0,
            ..ShardConfig::default()
        };
        Ok(Config {
            shards: r.shards,
            cpus: r.cpus.clone(),
            hash_key,
            hash_key_halves: (k0, k1),
            hash_key_random: r.hash_key == "random",
            dispatch,
            dispatch_table: r.dispatch_table,
            control_socket: r.control_socket.clone(),
            burst: r.burst,
            idle,
            xdp_classify,
            xsk_tx_budget,
            xsk_busy_poll,
            frames: r.frames,
            shard,
            keep_frames: c.keep_frames,
            fib_stage1: tb.fib_stage1,
            huge_pages: tb.huge_pages,
            udp_ports: u.ports.clone(),
            udp_on_demand: u.on_demand,
            on_demand: OnDemandLimits {
                max: u.on_demand_max,
                per_address: u.on_demand_per_address,
                idle_ms: u.on_demand_idle_ms,
            },
            udp_ip_fragments: match u.fragmentation.as_str() {
                "ndnlp" => false,
                "ip" => true,
                other => {
                    return bad(
                        "udp.fragmentation",
                        format!(
                            "{other:?}: \"ndnlp\" (NDNLPv2 fragments) or \"ip\" (IP fragments)"
                        ),
                    );
                }
            },
            app: self.app.check(dir)?,
            metrics_listen: self.metrics.check()?,
            interfaces,
            faces,
            routes,
            strategies,
            l2,
        })
    }
}

/// Checks `[cs.l2]`: the I/O settings and the shard's side.
fn check_l2(
    l: &RawL2,
    slot_size: usize,
) -> Check<(Option<L2Settings>, Option<ndx_core::L2Config>)> {
    let key = |k: &str| format!("cs.l2.{k}");
    let kind = match l.backend.as_str() {
        "files" => L2Kind::Files,
        "emulated" => {
            if !(l.tau_gbps > 0.0 && l.tau_gbps <= 10_000.0) {
                return bad(key("tau_gbps"), format!("{}: in (0, 10000]", l.tau_gbps));
            }
            L2Kind::Emulated {
                tau_bps: l.tau_gbps * 1e9,
            }
        }
        other => {
            return bad(
                key("backend"),
                format!("{other:?}: \"files\" or \"emulated\""),
            );
        }
    };
    let size = l.size.bytes().or_else(|e| bad(key("size"), e))?;
    if !(1..=64).contains(&l.batch) {
        return bad(key("batch"), format!("{}: between 1 and 64", l.batch));
    }
    if l.prefetch && l.batch < 2 {
        return bad(key("prefetch"), "prefetching needs batch >= 2");
    }
    if !(1..=1024).contains(&l.queue_depth) {
        return bad(
            key("queue_depth"),
            format!("{}: between 1 and 1024", l.queue_depth),
        );
    }
    if !(1..=65536).contains(&l.write_backlog) {
        return bad(
            key("write_backlog"),
            format!("{}: between 1 and 65536", l.write_backlog),
        );
    }
    if !(1..=256).contains(&l.write_depth) {
        return bad(
            key("write_depth"),
            format!("{}: between 1 and 256", l.write_depth),
        );
    }
    let admission = match l.admission.as_str() {
        "write-all" => ndx_core::L2Admission::WriteAll,
        "second-hit" => {
            if l.second_hit_window == 0 {
                return bad(key("second_hit_window"), "must be at least 1");
            }
            ndx_core::L2Admission::SecondHit {
                window: l.second_hit_window,
            }
        }
        other => {
            return bad(
                key("admission"),
                format!("{other:?}: \"write-all\" or \"second-hit\""),
            );
        }
    };
    if l.max_parked_per_read == 0 {
        return bad(key("max_parked_per_read"), "must be at least 1");
    }
    if l.staging == 0 {
        return bad(key("staging"), "must be at least 1");
    }
    let on_start = match l.on_start.as_str() {
        "recover" => L2OnStart::Recover,
        "clear" => L2OnStart::Clear,
        other => {
            return bad(
                key("on_start"),
                format!("{other:?}: \"recover\" or \"clear\""),
            );
        }
    };
    let verify_full = match l.verify.as_str() {
        "full" => true,
        "headers" => false,
        other => {
            return bad(key("verify"), format!("{other:?}: \"full\" or \"headers\""));
        }
    };
    if !l.enabled {
        return Ok((None, None));
    }
    if matches!(kind, L2Kind::Files) && (l.dirs.is_empty() || l.dirs.len() > 16) {
        return bad(key("dirs"), "between 1 and 16 directories");
    }
    if let Some(d) = l.dirs.iter().find(|d| !d.is_absolute()) {
        return bad(
            key("dirs"),
            format!("{}: not an absolute path", d.display()),
        );
    }
    // The largest record: a header block plus B full slots, padded to 4 KiB.
    let max_record = ndx_hcs::BLOCK + ndx_hcs::pad_to_block(l.batch as usize * slot_size);
    if size < 2 * max_record as u64 {
        return bad(
            key("size"),
            format!(
                "{size} bytes: at least two batch records ({} bytes with batch = {} and \
                 cs.slot_size = {slot_size})",
                2 * max_record,
                l.batch
            ),
        );
    }
    let lanes = if matches!(kind, L2Kind::Files) {
        l.dirs.len() as u64
    } else {
        1
    };
    // Batches the L2 can hold at most (records are at least two blocks); the shard's
    // mirror is bounded by it and kept exact by the store's drop reports.
    let index_capacity = (size * lanes / 8192).clamp(1024, 1 << 24) as usize;
    let core = ndx_core::L2Config {
        batch: l.batch,
        prefetch: l.prefetch,
        admission,
        // Q at the device plus Q waiting in the store's read backlog.
        max_reads: 2 * l.queue_depth,
        max_parked_per_read: l.max_parked_per_read,
        staging: l.staging,
        index_capacity,
        stage_timeout_ns: l.stage_timeout_ms.saturating_mul(1_000_000),
    };
    Ok((
        Some(L2Settings {
            kind,
            dirs: l.dirs.clone(),
            size,
            queue_depth: l.queue_depth,
            write_depth: l.write_depth,
            write_backlog: l.write_backlog,
            direct_io: l.direct_io,
            on_start,
            verify_full,
            max_frame: slot_size,
            max_record,
        }),
        Some(core),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Config, ConfigError> {
        Config::parse(s, Path::new("t.toml"))
    }

    fn err(s: &str) -> String {
        parse(s).unwrap_err().to_string()
    }

    #[test]
    fn metrics_listen_is_off_by_default_and_checked() {
        assert_eq!(parse("").unwrap().metrics_listen, None);
        let c = parse("[metrics]\nlisten = \"127.0.0.1:9363\"").unwrap();
        assert_eq!(c.metrics_listen, Some("127.0.0.1:9363".parse().unwrap()));
        let c = parse("[metrics]\nlisten = \"[::1]:9400\"").unwrap();
        assert_eq!(c.metrics_listen, Some("[::1]:9400".parse().unwrap()));
        let e = err("[metrics]\nlisten = \"localhost\"");
        assert!(
            e.starts_with("t.toml: metrics.listen: \"localhost\": an IP address and port"),
            "{e}"
        );
        let e = err("[metrics]\nlisten = \"127.0.0.1:0\"");
        assert!(e.contains("metrics.listen") && e.contains("port 0"), "{e}");
        let e = err("[metrics]\nport = 9363");
        assert!(e.contains("port"), "unknown keys are refused: {e}");
    }

    #[test]
    fn fairness_and_on_demand_bounds_parse_and_are_checked() {
        let c = parse("").unwrap();
        assert_eq!(c.shard.fairness, ndx_core::Fairness::default());
        assert_eq!(c.on_demand, OnDemandLimits::default());
        let c = parse(
            "[fairness]\npit_shares = true\npit_reserve = 3\npit_min = 10\nnack_rate = 5\nnack_burst = 2\n\
             [udp]\non_demand_max = 100\non_demand_per_address = 4\non_demand_idle_ms = 5000",
        )
        .unwrap();
        assert_eq!(
            (c.shard.fairness.pit_reserve, c.shard.fairness.pit_min),
            (3, 10)
        );
        assert_eq!(
            (c.shard.fairness.nack_rate, c.shard.fairness.nack_burst),
            (5, 2)
        );
        assert_eq!(
            c.on_demand,
            OnDemandLimits {
                max: 100,
                per_address: 4,
                idle_ms: 5000
            }
        );
        assert!(err("[fairness]\npit_reserve = 0").contains("fairness.pit_reserve"));
        assert!(parse("[fairness]\npit_shares = false\npit_reserve = 0").is_ok());
        assert!(err("[fairness]\npit_min = 0").contains("fairness.pit_min"));
        assert!(err("[fairness]\nnack_burst = 0").contains("fairness.nack_burst"));
        assert!(parse("[fairness]\nnack_rate = 0\nnack_burst = 0").is_ok());
        assert!(err("[fairness]\npit_share = 1").contains("unknown field"));
        assert!(err("[udp]\non_demand_max = 0").contains("udp.on_demand_max"));
        assert!(
            err("[udp]\non_demand_max = 8\non_demand_per_address = 9")
                .contains("udp.on_demand_per_address")
        );
        assert!(err("[udp]\non_demand_idle_ms = 10").contains("udp.on_demand_idle_ms"));
    }

    #[test]
    fn empty_file_gives_documented_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c.shards, 1);
        assert_eq!(c.dispatch, DispatchMode::Content);
        assert_eq!(c.udp_ports, vec![6363]);
        assert!(c.udp_on_demand);
        assert_eq!(c.shard.cs.replacement, Replacement::Lru);
        assert!(c.interfaces.is_empty() && c.faces.is_empty() && c.routes.is_empty());
        assert_ne!(
            c.hash_key_halves,
            parse("").unwrap().hash_key_halves,
            "random key"
        );
    }

    #[test]
    fn full_file_parses() {
        let c = parse(
            r#"
            [router]
            shards = 2
            hash_key = "000102030405060708090a0b0c0d0e0f"
            dispatch = "batch:16"
            [cs]
            capacity = 1000
            replacement = "clock"
            admission = "probabilistic"
            admission_probability = 0.25
            [[interface]]
            name = "veth0"
            xdp_mode = "skb"
            [[face]]
            name = "up"
            remote = "udp://[fd00::2]:6363"
            [[face]]
            name = "eth"
            remote = "ether://02:00:00:00:00:01"
            interface = "veth0"
            [[route]]
            prefix = "/a/b"
            face = "up"
            cost = 5
            [[strategy]]
            prefix = "/a/b"
            strategy = "multicast"
            "#,
        )
        .unwrap();
        assert_eq!(c.shards, 2);
        assert_eq!(c.hash_key_halves, (0x0001020304050607, 0x08090a0b0c0d0e0f));
        assert_eq!(c.dispatch, DispatchMode::Batch(16));
        assert_eq!(c.shard.cs.admission, Admission::Probabilistic(0.25));
        assert_eq!(c.interfaces[0].xdp_mode, XdpMode::Skb);
        assert_eq!(c.faces[1].remote, Remote::Ether([2, 0, 0, 0, 0, 1]));
        assert_eq!(c.routes[0].face, 0);
        assert_eq!(c.routes[0].prefix.to_string(), "/a/b");
        assert_eq!(c.strategies[0].1, StrategyKind::Multicast);
    }

    #[test]
    fn app_section_parses_and_is_checked() {
        let d = parse("").unwrap().app;
        assert_eq!(d.socket.as_deref(), Some(Path::new(DEFAULT_APP_SOCKET)));
        assert_eq!((d.mode, d.localhop, d.udp_fragments), (0o666, false, true));
        assert_eq!(d.command_key, None);
        let c = parse(
            "[app]\nsocket = \"\"\nowner = \"root\"\ngroup = \"0\"\nmode = \"0660\"\n\
             localhop = true\nqueue_bytes = 65536",
        )
        .unwrap()
        .app;
        assert_eq!(c.socket, None);
        assert_eq!(
            (c.owner, c.group, c.mode, c.localhop),
            (Some(0), Some(0), 0o660, true)
        );
        assert!(err("[app]\nmode = \"0999\"").contains("app.mode"));
        assert!(err("[app]\nmode = \"rw\"").contains("app.mode"));
        assert!(err("[app]\nowner = \"no-such-user-ndx\"").contains("app.owner"));
        assert!(err("[app]\nqueue_bytes = 10").contains("app.queue_bytes"));
        assert!(err("[app]\nmax_connections = 0").contains("app.max_connections"));
        assert!(err("[app]\ncommand_key = \"/nonexistent/key\"").contains("app.command_key"));
        let dir = std::env::temp_dir().join(format!("ndx-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("short"), "abc").unwrap();
        std::fs::write(dir.join("good"), "0123456789abcdef0123\n").unwrap();
        let file = dir.join("ndx.toml");
        let load = |k: &str| Config::parse(&format!("[app]\ncommand_key = \"{k}\""), &file);
        assert!(
            load("short")
                .unwrap_err()
                .to_string()
                .contains("at least 16")
        );
        // Relative to the configuration file's directory, trimmed.
        assert_eq!(
            load("good").unwrap().app.command_key.as_deref(),
            Some(&b"0123456789abcdef0123"[..])
        );
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            parse("[udp]\nfragmentation = \"ip\"")
                .unwrap()
                .udp_ip_fragments
        );
        assert!(err("[udp]\nfragmentation = \"both\"").contains("udp.fragmentation"));
    }

    #[test]
    fn errors_name_the_file_key_and_reason() {
        assert!(err("[router]\nshards = 0").contains("t.toml: router.shards: 0"));
        assert!(err("[router]\nshardz = 2").contains("unknown field `shardz`"));
        assert!(err("[router]\ndispatch = \"batch:0\"").contains("router.dispatch"));
        assert!(err("[router]\ndispatch = \"bogus\"").contains("router.dispatch"));
        assert!(err("[router]\nhash_key = \"abc\"").contains("router.hash_key"));
        assert!(err("[[route]]\nprefix = \"/a\"\nface = \"nope\"").contains("route[0].face"));
        assert!(
            err("[[face]]\nname = \"x\"\nremote = \"tcp://1.2.3.4:1\"").contains("face[0].remote")
        );
        assert!(
            err("[[face]]\nname = \"x\"\nremote = \"udp://0.0.0.0:6363\"")
                .contains("not a unicast")
        );
        assert!(
            err("[[face]]\nname = \"x\"\nremote = \"ether://02:00:00:00:00:01\"")
                .contains("needs an interface")
        );
        assert!(err("[cs]\nreplacement = \"arc2\"").contains("cs.replacement"));
        assert!(err("[router]\nidle = \"nap\"").contains("router.idle"));
        assert_eq!(
            parse("[router]\nidle = \"yield\"").unwrap().idle,
            Idle::Yield
        );
        assert_eq!(parse("").unwrap().idle, Idle::Spin);
        assert!(err("[router]\nxdp_classify = \"never\"").contains("router.xdp_classify"));
        assert!(err("[router]\nxsk_tx_budget = 16").contains("router.xsk_tx_budget"));
        assert!(err("[router]\nxsk_tx_budget = 4096").contains("router.xsk_tx_budget"));
        assert!(err("[router]\nxsk_busy_poll = 2000").contains("router.xsk_busy_poll"));
        let d = parse("").unwrap();
        assert_eq!((d.xsk_tx_budget, d.xsk_busy_poll), (None, None));
        let c = parse("[router]\nxsk_tx_budget = 32\nxsk_busy_poll = 64").unwrap();
        assert_eq!((c.xsk_tx_budget, c.xsk_busy_poll), (Some(32), Some(64)));
        assert!(!parse("").unwrap().xdp_classify, "one shard: off");
        assert!(parse("[router]\nshards = 2").unwrap().xdp_classify);
        assert!(
            parse("[router]\nxdp_classify = \"always\"")
                .unwrap()
                .xdp_classify
        );
        assert!(err("[udp]\nports = []").contains("udp.ports"));
        assert!(err("[[interface]]\nname = \"a\"\n[[interface]]\nname = \"a\"").contains("twice"));
        assert!(err("[router]\nshards = \"two\"").contains("t.toml"));
    }

    #[test]
    fn load_refuses_no_interface_with_the_routers_message() {
        assert_eq!(
            crate::runtime::StartError::NoInterface.to_string(),
            NO_INTERFACE,
            "ndx check and ndx run say the same"
        );
        let dir = std::env::temp_dir().join(format!("ndx-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("none.toml");
        std::fs::write(&file, "[router]\nshards = 2\n").unwrap();
        let e = Config::load(&file).unwrap_err().to_string();
        assert!(e.ends_with(&format!("interface: {NO_INTERFACE}")), "{e}");
        assert!(e.starts_with(&file.display().to_string()), "{e}");
        // `parse` alone still accepts it (the control plane without a data path).
        assert!(parse("[router]\nshards = 2").is_ok());
        std::fs::write(&file, "[[interface]]\nname = \"eth0\"\n").unwrap();
        assert_eq!(Config::load(&file).unwrap().interfaces.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_router_draws_its_own_seed() {
        let seeds: Vec<u64> = (0..4).map(|_| parse("").unwrap().shard.seed).collect();
        let mut distinct = seeds.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{seeds:x?}");
    }

    #[test]
    fn what_the_router_would_refuse_at_start_is_refused_here() {
        let face = |name: &str, remote: &str, iface: &str| {
            let i = if iface.is_empty() {
                String::new()
            } else {
                format!("interface = \"{iface}\"\n")
            };
            format!("[[face]]\nname = \"{name}\"\nremote = \"{remote}\"\n{i}")
        };
        let ifaces = "[[interface]]\nname = \"a\"\n[[interface]]\nname = \"b\"\n";
        // Two faces to one UDP peer (6363 is the default port).
        let e = err(&format!(
            "{}{}",
            face("x", "udp://10.0.0.1:6363", ""),
            face("y", "udp://10.0.0.1", "")
        ));
        assert!(
            e.contains("face[1].remote: udp://10.0.0.1:6363 is already face \"x\""),
            "{e}"
        );
        // The same MAC (or the multicast group) twice on one interface; on two it is fine.
        let mac = "ether://02:00:00:00:00:01";
        let e = err(&format!(
            "{ifaces}{}{}",
            face("x", mac, "a"),
            face("y", mac, "a")
        ));
        assert!(e.contains("face[1].remote"), "{e}");
        assert!(
            parse(&format!(
                "{ifaces}{}{}",
                face("x", mac, "a"),
                face("y", mac, "b")
            ))
            .is_ok()
        );
        let m = "ether-multicast";
        let e = err(&format!(
            "{ifaces}{}{}",
            face("x", m, "b"),
            face("y", m, "b")
        ));
        assert!(
            e.contains("face[1].remote: ether-multicast is already"),
            "{e}"
        );
        // Nine next hops on one prefix; the same face twice only updates its cost.
        let mut text = String::new();
        for i in 0..9 {
            text += &face(&format!("f{i}"), &format!("udp://10.0.0.{}", i + 1), "");
        }
        let route = |f: &str| format!("[[route]]\nprefix = \"/p\"\nface = \"{f}\"\n");
        let eight: String = (0..8).map(|i| route(&format!("f{i}"))).collect();
        assert!(parse(&format!("{text}{eight}{}", route("f0"))).is_ok());
        let e = err(&format!("{text}{eight}{}", route("f8")));
        assert!(
            e.contains("route[8].face: /p already has 8 next hops: a route holds at most 8"),
            "{e}"
        );
        // A strategy choice applies to a prefix and below, routed or not (NFD's strategy
        // choice table; the RIB gives such a prefix its ancestor's next hops).
        let routed = format!("{}{}", face("x", "udp://10.0.0.1", ""), route("x"));
        let strategy =
            |p: &str| format!("[[strategy]]\nprefix = \"{p}\"\nstrategy = \"multicast\"\n");
        for p in ["/p", "/q", "/p/sub", "/"] {
            assert!(parse(&format!("{routed}{}", strategy(p))).is_ok(), "{p}");
        }
    }

    #[test]
    fn the_documented_example_parses_to_the_defaults() {
        let text = include_str!("../../../configs/ndx.toml");
        let c = parse(text).unwrap();
        let d = parse("").unwrap();
        assert_eq!(c.shards, d.shards);
        assert_eq!(c.dispatch, d.dispatch);
        assert_eq!(c.dispatch_table, d.dispatch_table);
        assert_eq!(c.burst, d.burst);
        assert_eq!(c.frames, d.frames);
        assert_eq!(c.xsk_tx_budget, d.xsk_tx_budget);
        assert_eq!(c.xsk_busy_poll, d.xsk_busy_poll);
        assert_eq!(c.shard.pit_capacity, d.shard.pit_capacity);
        assert_eq!(c.shard.cs, d.shard.cs);
        assert!(
            c.keep_frames && d.keep_frames,
            "the CS keeps frames by default"
        );
        assert!(!parse("[cs]\nkeep_frames = false").unwrap().keep_frames);
        assert_eq!(c.shard.dnl_lifetime_ns, d.shard.dnl_lifetime_ns);
        assert_eq!(c.udp_ports, d.udp_ports);
        assert_eq!(c.interfaces[0].xdp_mode, XdpMode::Auto);
        assert_eq!(c.interfaces[0].frags, Frags::Auto);
        assert_eq!(c.routes[0].prefix.to_string(), "/example");
        assert!(c.l2.is_none(), "the example documents [cs.l2] disabled");
        // Every [cs.l2] key is documented with its default: enabling it gives the defaults.
        let on = parse(&text.replace("enabled = false", "enabled = true")).unwrap();
        let l2 = on.l2.unwrap();
        assert_eq!(l2.size, 1 << 30);
        assert_eq!(l2.queue_depth, 16);
        assert_eq!(
            on.shard.l2.unwrap(),
            ndx_core::L2Config {
                max_reads: 32,
                index_capacity: on.shard.l2.unwrap().index_capacity,
                ..Default::default()
            }
        );
    }

    #[test]
    fn l2_section_parses_and_is_checked() {
        let c = parse(
            r#"
            [cs]
            slot_size = 4096
            [cs.l2]
            enabled = true
            dirs = ["/var/lib/ndx/a", "/mnt/nvme1/ndx"]
            size = "2GiB"
            batch = 8
            queue_depth = 32
            admission = "second-hit"
            second_hit_window = 100
            on_start = "clear"
            verify = "headers"
            stage_timeout_ms = 250
            "#,
        )
        .unwrap();
        let l2 = c.l2.as_ref().unwrap();
        assert_eq!(l2.kind, L2Kind::Files);
        assert_eq!(l2.size, 2 << 30);
        assert_eq!(l2.dirs.len(), 2);
        assert_eq!(l2.queue_depth, 32);
        assert_eq!(l2.on_start, L2OnStart::Clear);
        assert!(!l2.verify_full);
        assert_eq!(l2.max_frame, 4096);
        assert_eq!(
            l2.describe(&c.shard.l2.unwrap()),
            "L2: 2048 MiB per shard in each of /var/lib/ndx/a, /mnt/nvme1/ndx; batch 8, \
             prefetch, queue depth 32"
        );
        let core = c.shard.l2.unwrap();
        assert_eq!(core.batch, 8);
        assert_eq!(core.max_reads, 64, "Q at the device + Q in the backlog");
        assert_eq!(core.stage_timeout_ns, 250_000_000);
        assert_eq!(
            core.admission,
            ndx_core::L2Admission::SecondHit { window: 100 }
        );
        let e = parse(
            "[cs.l2]\nenabled = true\nbackend = \"emulated\"\ntau_gbps = 32\nsize = 67108864",
        )
        .unwrap();
        assert_eq!(e.l2.unwrap().kind, L2Kind::Emulated { tau_bps: 32e9 });
        // Disabled (the default): nothing for the shard either.
        let d = parse("").unwrap();
        assert!(d.l2.is_none() && d.shard.l2.is_none());
        let l2err = |body: &str| err(&format!("[cs.l2]\nenabled = true\n{body}"));
        assert!(l2err("size = \"12XB\"").contains("cs.l2.size"));
        assert!(l2err("size = \"64KiB\"").contains("at least two batch records"));
        assert!(l2err("batch = 65").contains("cs.l2.batch"));
        assert!(l2err("batch = 1").contains("cs.l2.prefetch"));
        assert!(l2err("backend = \"nvme\"").contains("cs.l2.backend"));
        assert!(l2err("dirs = [\"rel/dir\"]").contains("absolute"));
        assert!(l2err("dirs = []").contains("cs.l2.dirs"));
        assert!(l2err("admission = \"never\"").contains("cs.l2.admission"));
        assert!(l2err("on_start = \"wipe\"").contains("cs.l2.on_start"));
        assert!(l2err("queue_depth = 0").contains("cs.l2.queue_depth"));
        assert!(l2err("write_backlog = 0").contains("cs.l2.write_backlog"));
        assert!(l2err("sise = 1").contains("unknown field `sise`"));
        let split =
            err("[router]\nshards = 2\ndispatch = \"batch:4\"\n[cs.l2]\nenabled = true\nbatch = 8");
        assert!(
            split.contains("router.dispatch") && split.contains("multiple"),
            "{split}"
        );
        assert!(
            parse(
                "[router]\nshards = 2\ndispatch = \"batch:16\"\n[cs.l2]\nenabled = true\nbatch = 8"
            )
            .is_ok()
        );
        assert_eq!(RawSize::Text("1 TiB".into()).bytes(), Ok(1 << 40));
        assert_eq!(RawSize::Text("512M".into()).bytes(), Ok(512 << 20));
        assert_eq!(RawSize::Text("4096".into()).bytes(), Ok(4096));
    }

    #[test]
    fn remotes_parse() {
        assert_eq!(
            Remote::parse("udp://10.0.0.1").unwrap(),
            Remote::Udp("10.0.0.1:6363".parse().unwrap())
        );
        assert_eq!(
            Remote::parse("udp6://[fd00::1]:7000").unwrap(),
            Remote::Udp("[fd00::1]:7000".parse().unwrap())
        );
        assert!(Remote::parse("udp4://[fd00::1]:7000").is_err());
        assert!(Remote::parse("ether://02:00:00:00:00").is_err());
        assert_eq!(
            Remote::parse("udp://10.0.0.1:9").unwrap().to_string(),
            "udp://10.0.0.1:9"
        );
    }
}
