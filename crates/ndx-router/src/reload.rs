//! Configuration reload (`ndx reload`, SIGHUP in `ndx run`): re-read and check the
//! configuration, then apply what changed to the running router.
//!
//! A reload is planned whole before anything is touched ([`plan`]): the file must parse and
//! pass every check `ndx run` makes, no key that only a restart can change may differ
//! ([`restart_keys`]), and the faces it adds must not collide with faces made by command.
//! A refused reload changes nothing. Then [`apply`] changes, in this order: the face table
//! (added faces, changed faces in place with their ids), the RIB (configured routes and
//! strategies; the FIB is published once), the removed faces (after the FIB no longer
//! names them), and the live settings the shard workers pick up on their next
//! publication (every 10 ms, [`Live`]).
//!
//! What a reload touches: faces and routes of the configuration's origin (`Origin::Config`
//! faces named in the file, `static` routes the file made; routes of applications, NFD
//! management, `ndx route` and prefix registration stay), strategy choices the file makes,
//! and the settings listed in [`LIVE_KEYS`]. Unchanged faces keep their ids and the shards
//! keep their PIT entries.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ndx_codec::NameBuf;
use ndx_core::{FaceId, FaceInfo, Fairness, StrategyKind, Unsolicited};
use serde_json::{Value, json};

use crate::config::{Config, ConfigError, FaceConfig, Idle, OnDemandLimits, Remote};
use crate::faces::{Face, Link, Origin};
use crate::plane::{Plane, ether_path};
use crate::rib::{Route, origin};

/// The keys a reload applies while the router runs (besides `[[face]]`, `[[route]]` and
/// `[[strategy]]`); every other key needs a restart.
pub const LIVE_KEYS: &[&str] = &[
    "router.idle",
    "tables.max_lifetime_ms",
    "tables.unsolicited",
    "udp.on_demand",
    "udp.on_demand_max",
    "udp.on_demand_per_address",
    "udp.on_demand_idle_ms",
    "fairness.pit_shares",
    "fairness.pit_reserve",
    "fairness.pit_min",
    "fairness.nack_rate",
    "fairness.nack_burst",
];

/// The settings shard workers take from a reload while they run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LiveSettings {
    /// `[fairness]`.
    pub fairness: Fairness,
    /// `tables.max_lifetime_ms`.
    pub max_lifetime_ms: u64,
    /// `tables.unsolicited`.
    pub unsolicited: Unsolicited,
    /// `udp.on_demand`.
    pub on_demand: bool,
    /// `router.idle`.
    pub idle: Idle,
}

impl LiveSettings {
    /// The live settings of a configuration.
    pub(crate) fn of(cfg: &Config) -> Self {
        Self {
            fairness: cfg.shard.fairness,
            max_lifetime_ms: cfg.shard.max_lifetime_ms,
            unsolicited: cfg.shard.unsolicited,
            on_demand: cfg.udp_on_demand,
            idle: cfg.idle,
        }
    }
}

/// The live settings shared with the shard workers: a worker compares the generation on
/// each publication (every 10 ms) and takes the settings only when it moved, so the packet
/// path never takes the lock.
#[derive(Debug)]
pub(crate) struct Live {
    settings: Mutex<LiveSettings>,
    generation: AtomicU64,
}

impl Live {
    /// Settings at generation 0.
    pub(crate) fn new(settings: LiveSettings) -> Arc<Self> {
        Arc::new(Self {
            settings: Mutex::new(settings),
            generation: AtomicU64::new(0),
        })
    }

    /// How many times the settings were replaced.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The settings now.
    pub(crate) fn get(&self) -> LiveSettings {
        *self.settings.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces the settings (the workers take them within 10 ms).
    pub(crate) fn set(&self, s: LiveSettings) {
        *self.settings.lock().unwrap_or_else(|p| p.into_inner()) = s;
        self.generation.fetch_add(1, Ordering::Release);
    }
}

/// Why a reload was refused; the router is left exactly as it was.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The file cannot be read or is not a valid configuration.
    #[error("reload refused, nothing changed: {0}")]
    Invalid(#[from] ConfigError),
    /// Keys that only a restart can change differ from the running configuration.
    #[error(
        "reload refused, nothing changed: {file}: {} changed, which needs a restart of ndx run \
         (while it runs, only faces, routes, strategies and {} change)",
        keys.join(", "),
        "router.idle, tables.max_lifetime_ms, tables.unsolicited, udp.on_demand*, [fairness]"
    )]
    Restart {
        /// The file.
        file: PathBuf,
        /// Each key that differs.
        keys: Vec<String>,
    },
    /// The new faces or routes conflict with the running router's.
    #[error("reload refused, nothing changed: {file}: {why}")]
    Conflict {
        /// The file.
        file: PathBuf,
        /// What conflicts.
        why: String,
    },
    /// No file named and none known (the router was not started from a file).
    #[error(
        "reload refused: no configuration file (the router was not started from one; name one)"
    )]
    NoFile,
}

impl ReloadError {
    /// The keys a restart would change (empty unless [`ReloadError::Restart`]).
    pub fn restart_keys(&self) -> &[String] {
        match self {
            ReloadError::Restart { keys, .. } => keys,
            _ => &[],
        }
    }
}

/// What a reload changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// The file read.
    pub file: PathBuf,
    /// Faces added (names).
    pub faces_added: Vec<String>,
    /// Faces removed (names).
    pub faces_removed: Vec<String>,
    /// Faces changed in place, keeping their ids (names).
    pub faces_changed: Vec<String>,
    /// Routes added (`/prefix via face cost N`).
    pub routes_added: Vec<String>,
    /// Routes removed.
    pub routes_removed: Vec<String>,
    /// Routes whose cost changed.
    pub routes_changed: Vec<String>,
    /// Strategy choices set or changed (`/prefix strategy`).
    pub strategies_set: Vec<String>,
    /// Strategy choices removed (prefixes).
    pub strategies_removed: Vec<String>,
    /// Live settings changed (`key = value`).
    pub settings: Vec<String>,
    /// What could not be done although the plan allowed it (the rest was applied).
    pub warnings: Vec<String>,
}

impl ReloadReport {
    /// How many things changed.
    pub fn changes(&self) -> usize {
        [
            &self.faces_added,
            &self.faces_removed,
            &self.faces_changed,
            &self.routes_added,
            &self.routes_removed,
            &self.routes_changed,
            &self.strategies_set,
            &self.strategies_removed,
            &self.settings,
        ]
        .iter()
        .map(|v| v.len())
        .sum()
    }

    /// The report as the control socket's answer (`ok` is added by it).
    pub fn to_json(&self) -> Value {
        json!({
            "file": self.file.display().to_string(),
            "changes": self.changes(),
            "faces": {
                "added": self.faces_added,
                "removed": self.faces_removed,
                "changed": self.faces_changed,
            },
            "routes": {
                "added": self.routes_added,
                "removed": self.routes_removed,
                "changed": self.routes_changed,
            },
            "strategies": {
                "set": self.strategies_set,
                "removed": self.strategies_removed,
            },
            "settings": self.settings,
            "warnings": self.warnings,
        })
    }

    /// One line with the counts (the log line and the first line `ndx reload` prints).
    pub fn summary(&self) -> String {
        format!(
            "reloaded {}: {} change(s): faces +{} -{} ~{}, routes +{} -{} ~{}, strategies {} set \
             {} removed, {} setting(s){}",
            self.file.display(),
            self.changes(),
            self.faces_added.len(),
            self.faces_removed.len(),
            self.faces_changed.len(),
            self.routes_added.len(),
            self.routes_removed.len(),
            self.routes_changed.len(),
            self.strategies_set.len(),
            self.strategies_removed.len(),
            self.settings.len(),
            if self.warnings.is_empty() {
                String::new()
            } else {
                format!(", {} warning(s)", self.warnings.len())
            }
        )
    }

    /// The summary, then one line per change.
    pub fn render(&self) -> String {
        let mut s = self.summary();
        s.push('\n');
        let groups: [(&str, &Vec<String>); 10] = [
            ("face added", &self.faces_added),
            ("face removed", &self.faces_removed),
            ("face changed", &self.faces_changed),
            ("route added", &self.routes_added),
            ("route removed", &self.routes_removed),
            ("route changed", &self.routes_changed),
            ("strategy set", &self.strategies_set),
            ("strategy removed", &self.strategies_removed),
            ("setting", &self.settings),
            ("warning", &self.warnings),
        ];
        for (what, items) in groups {
            for i in items {
                let _ = writeln!(s, "  {what}: {i}");
            }
        }
        s
    }
}

/// The reload state a router keeps: the configuration as applied, where it came from, and
/// the live settings shared with the workers.
#[derive(Debug)]
pub(crate) struct Reloader {
    /// The file reloads read when the request names none (`ndx run -c FILE`).
    pub file: Option<PathBuf>,
    /// `ndx run --shards N`: overrides `router.shards` of every file read, as at start.
    pub shards: Option<usize>,
    applied: Config,
    live: Arc<Live>,
}

impl Reloader {
    /// The state of a router started with `cfg` (as read from its file, before start-up
    /// adjusted it).
    pub(crate) fn new(cfg: &Config) -> Self {
        Self {
            file: None,
            shards: None,
            applied: cfg.clone(),
            live: Live::new(LiveSettings::of(cfg)),
        }
    }

    /// The live settings, for the workers.
    pub(crate) fn live(&self) -> Arc<Live> {
        self.live.clone()
    }

    /// The configuration as last applied.
    #[cfg(test)]
    pub(crate) fn applied(&self) -> &Config {
        &self.applied
    }

    /// Reads `file` (or the file the router was started with) and applies it.
    pub(crate) fn reload_file(
        &mut self,
        plane: &mut Plane,
        file: Option<&Path>,
    ) -> Result<ReloadReport, ReloadError> {
        let file = file
            .map(Path::to_path_buf)
            .or_else(|| self.file.clone())
            .ok_or(ReloadError::NoFile)?;
        check_file(&file)?;
        let mut cfg = Config::load(&file)?;
        if let Some(n) = self.shards {
            cfg.shards = n;
        }
        self.reload(plane, cfg, &file)
    }

    /// Applies `cfg` (read from `file`, which the report names): plans everything, then
    /// applies, or changes nothing.
    pub(crate) fn reload(
        &mut self,
        plane: &mut Plane,
        cfg: Config,
        file: &Path,
    ) -> Result<ReloadReport, ReloadError> {
        let plan = plan(&self.applied, &cfg, plane, file)?;
        let report = apply(plan, plane, &self.live);
        self.applied = cfg;
        Ok(report)
    }

    /// The control socket's `reload` request (`file`: optional path): the report, or
    /// `ok: false` with the error and, for keys needing a restart, `restart` listing them.
    /// Logs what happened.
    pub(crate) fn handle(&mut self, plane: &mut Plane, file: Option<&str>) -> Value {
        let r = self.reload_file(plane, file.map(Path::new));
        log_outcome(&r);
        match r {
            Ok(report) => {
                let mut v = report.to_json();
                v["ok"] = Value::Bool(true);
                v
            }
            Err(e) => json!({
                "ok": false,
                "error": e.to_string(),
                "restart": e.restart_keys(),
            }),
        }
    }
}

/// Largest configuration file a reload reads.
const MAX_FILE: u64 = 16 << 20;

/// Refuses what the control thread must not read: anything but a regular file (a FIFO would
/// block it, a device never end) or a file past [`MAX_FILE`].
fn check_file(file: &Path) -> Result<(), ConfigError> {
    let refuse = |why: String| ConfigError::Read {
        file: file.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, why),
    };
    let meta = std::fs::metadata(file).map_err(|source| ConfigError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    if meta.len() > MAX_FILE {
        return Err(refuse(format!(
            "{} bytes: a configuration file is at most {MAX_FILE}",
            meta.len()
        )));
    }
    Ok(())
}

/// Logs a reload's outcome: the summary and each change, or why it was refused.
pub(crate) fn log_outcome(r: &Result<ReloadReport, ReloadError>) {
    match r {
        Ok(report) => {
            for line in report.render().lines() {
                tracing::info!("{line}");
            }
        }
        Err(e) => tracing::warn!("{e}"),
    }
}

/// Every key that differs between `old` and `new` and only a restart can change, by its
/// name in the file (`router.shards`, `interface[0].queues`, `cs.l2`).
pub(crate) fn restart_keys(old: &Config, new: &Config) -> Vec<String> {
    // Every field of `Config`, named: a new key does not compile until it is decided here
    // (restart), in `live_changes` (live) or in `plan` (faces, routes, strategies).
    let Config {
        shards: _,
        cpus: _,
        hash_key: _,
        hash_key_halves: _,
        hash_key_random: _,
        dispatch: _,
        dispatch_table: _,
        control_socket: _,
        burst: _,
        idle: _,
        xdp_classify: _,
        xsk_tx_budget: _,
        xsk_busy_poll: _,
        frames: _,
        shard: _,
        keep_frames: _,
        fib_stage1: _,
        huge_pages: _,
        udp_ports: _,
        udp_on_demand: _,
        on_demand: _,
        udp_ip_fragments: _,
        app: _,
        metrics_listen: _,
        interfaces: _,
        faces: _,
        routes: _,
        strategies: _,
        l2: _,
    } = new;
    let ndx_core::ShardConfig {
        shard: _,
        pit_capacity: _,
        cs: _,
        dnl_capacity: _,
        dnl_lifetime_ns: _,
        max_lifetime_ms: _,
        unsolicited: _,
        hash_key: _,
        // Random per parse and only seeds generators: never compared.
        seed: _,
        l2: _,
        fairness: _,
    } = new.shard;
    let crate::config::AppConfig {
        socket: _,
        owner: _,
        group: _,
        mode: _,
        queue_bytes: _,
        max_connections: _,
        localhop: _,
        command_key: _,
        udp_fragments: _,
    } = &new.app;
    let mut keys = Vec::new();
    let mut diff = |key: &str, changed: bool| {
        if changed {
            keys.push(key.to_string());
        }
    };
    diff("router.shards", old.shards != new.shards);
    diff("router.cpus", old.cpus != new.cpus);
    // A random key is drawn anew by every parse: random then and now is no change.
    diff(
        "router.hash_key",
        !(old.hash_key_random && new.hash_key_random) && old.hash_key != new.hash_key,
    );
    diff("router.dispatch", old.dispatch != new.dispatch);
    diff(
        "router.dispatch_table",
        old.dispatch_table != new.dispatch_table,
    );
    diff(
        "router.control_socket",
        old.control_socket != new.control_socket,
    );
    diff("router.burst", old.burst != new.burst);
    diff("router.frames", old.frames != new.frames);
    diff(
        "router.xsk_tx_budget",
        old.xsk_tx_budget != new.xsk_tx_budget,
    );
    diff(
        "router.xsk_busy_poll",
        old.xsk_busy_poll != new.xsk_busy_poll,
    );
    // "auto" follows the shards: named only when the shards stay.
    diff(
        "router.xdp_classify",
        old.xdp_classify != new.xdp_classify && old.shards == new.shards,
    );
    let (o, n) = (&old.shard, &new.shard);
    diff("tables.pit_capacity", o.pit_capacity != n.pit_capacity);
    diff("tables.dnl_capacity", o.dnl_capacity != n.dnl_capacity);
    diff(
        "tables.dnl_lifetime_ms",
        o.dnl_lifetime_ns != n.dnl_lifetime_ns,
    );
    diff("tables.fib_stage1", old.fib_stage1 != new.fib_stage1);
    diff("tables.huge_pages", old.huge_pages != new.huge_pages);
    diff("cs.capacity", o.cs.capacity != n.cs.capacity);
    diff("cs.slot_size", o.cs.slot_size != n.cs.slot_size);
    diff("cs.replacement", o.cs.replacement != n.cs.replacement);
    diff("cs.admission", o.cs.admission != n.cs.admission);
    diff("cs.keep_frames", old.keep_frames != new.keep_frames);
    diff("cs.l2", old.l2 != new.l2 || o.l2 != n.l2);
    diff("udp.ports", old.udp_ports != new.udp_ports);
    diff("metrics.listen", old.metrics_listen != new.metrics_listen);
    diff(
        "udp.fragmentation",
        old.udp_ip_fragments != new.udp_ip_fragments,
    );
    let (a, b) = (&old.app, &new.app);
    diff("app.socket", a.socket != b.socket);
    diff("app.owner", a.owner != b.owner);
    diff("app.group", a.group != b.group);
    diff("app.mode", a.mode != b.mode);
    diff("app.queue_bytes", a.queue_bytes != b.queue_bytes);
    diff(
        "app.max_connections",
        a.max_connections != b.max_connections,
    );
    diff("app.localhop", a.localhop != b.localhop);
    diff("app.command_key", a.command_key != b.command_key);
    diff("app.udp_fragments", a.udp_fragments != b.udp_fragments);
    let names = |c: &Config| {
        c.interfaces
            .iter()
            .map(|i| i.name.clone())
            .collect::<Vec<_>>()
    };
    if names(old) != names(new) {
        keys.push(format!(
            "interface (was [{}], now [{}])",
            names(old).join(", "),
            names(new).join(", ")
        ));
    } else {
        for (i, (o, n)) in old.interfaces.iter().zip(&new.interfaces).enumerate() {
            let crate::config::InterfaceConfig {
                name: _,
                xdp_mode: _,
                queues: _,
                udp: _,
                ethernet: _,
                ethernet_multicast: _,
                frags: _,
            } = n;
            let mut d = |k: &str, c: bool| {
                if c {
                    keys.push(format!("interface[{i}].{k}"));
                }
            };
            d("xdp_mode", o.xdp_mode != n.xdp_mode);
            d("queues", o.queues != n.queues);
            d("udp", o.udp != n.udp);
            d("ethernet", o.ethernet != n.ethernet);
            d(
                "ethernet_multicast",
                o.ethernet_multicast != n.ethernet_multicast,
            );
            d("frags", o.frags != n.frags);
        }
    }
    keys
}

/// The live settings that differ, as `key = value`.
fn live_changes(old: &Config, new: &Config) -> Vec<String> {
    let mut out = Vec::new();
    // `key`, the old and the new value: listed with the new one when they differ.
    macro_rules! live {
        ($($key:literal: $old:expr => $new:expr, $show:expr;)*) => {$(
            if $old != $new {
                out.push(format!("{} = {}", $key, $show));
            }
        )*};
    }
    let lower = |v: &dyn std::fmt::Debug| format!("{v:?}").to_lowercase();
    let (o, n) = (&old.shard, &new.shard);
    let (a, b) = (old.on_demand, new.on_demand);
    let (f, g) = (o.fairness, n.fairness);
    live! {
        "router.idle": old.idle => new.idle, lower(&new.idle);
        "tables.max_lifetime_ms": o.max_lifetime_ms => n.max_lifetime_ms, n.max_lifetime_ms;
        "tables.unsolicited": o.unsolicited => n.unsolicited, lower(&n.unsolicited);
        "udp.on_demand": old.udp_on_demand => new.udp_on_demand, new.udp_on_demand;
        "udp.on_demand_max": a.max => b.max, b.max;
        "udp.on_demand_per_address": a.per_address => b.per_address, b.per_address;
        "udp.on_demand_idle_ms": a.idle_ms => b.idle_ms, b.idle_ms;
        "fairness.pit_shares": f.pit_shares => g.pit_shares, g.pit_shares;
        "fairness.pit_reserve": f.pit_reserve => g.pit_reserve, g.pit_reserve;
        "fairness.pit_min": f.pit_min => g.pit_min, g.pit_min;
        "fairness.nack_rate": f.nack_rate => g.nack_rate, g.nack_rate;
        "fairness.nack_burst": f.nack_burst => g.nack_burst, g.nack_burst;
    }
    out
}

/// One face change of a plan.
#[derive(Debug, Clone)]
struct FaceChange {
    /// The face as configured now.
    cfg: FaceConfig,
    /// Its link.
    link: Link,
    /// The face it replaces in place (same id): a configured face whose remote, interface
    /// or locality changed, or an on-demand face to the same peer that becomes configured.
    /// `None`: a new face with a new id.
    id: Option<FaceId>,
    /// The configured face's name in the applied file, when the file renamed it (same link).
    renamed_from: Option<String>,
}

/// A checked reload, ready to apply.
#[derive(Debug)]
pub(crate) struct Plan {
    file: PathBuf,
    faces_add: Vec<FaceChange>,
    faces_change: Vec<FaceChange>,
    /// Faces to remove: configured faces no longer in the file, and on-demand faces on a
    /// link a changed face takes.
    faces_remove: Vec<(FaceId, String)>,
    /// On-demand faces on a link a changed face takes: out of the table before the changed
    /// faces go in (also in `faces_remove`, for their routes and the report).
    evict: Vec<FaceId>,
    /// Configured faces by name as they are now (unchanged and changed ones).
    kept: HashMap<String, FaceId>,
    routes_add: Vec<(NameBuf, String, u32)>,
    routes_change: Vec<(NameBuf, String, u32)>,
    /// Routes no longer in the file, through faces that stay (`None`: the face goes, and the
    /// route with it).
    routes_remove: Vec<(NameBuf, String, Option<FaceId>)>,
    /// Routes through faces replaced by new ones: put back through the new face.
    routes_readd: Vec<(NameBuf, String, u32)>,
    strategies_set: Vec<(NameBuf, StrategyKind)>,
    strategies_unset: Vec<NameBuf>,
    settings: Vec<String>,
    live: LiveSettings,
    on_demand: OnDemandLimits,
}

/// The link of a configured face on the running router (`plane.interfaces` names the
/// interfaces it is attached to).
fn link_of(f: &FaceConfig, plane: &Plane) -> Result<Link, String> {
    let ifindex = || {
        let name = f.interface.as_deref().unwrap_or_default();
        plane
            .interfaces
            .iter()
            .find(|(_, n)| n == name)
            .map(|(i, _)| *i)
            .ok_or_else(|| format!("face {:?}: ndx is not attached to {name:?}", f.name))
    };
    Ok(match f.remote {
        Remote::Udp(a) => Link::Udp(a),
        Remote::Ether(mac) => Link::Ether {
            ifindex: ifindex()?,
            mac,
        },
        Remote::EtherMulticast => Link::EtherMulticast {
            ifindex: ifindex()?,
        },
    })
}

fn face_info(f: &FaceConfig) -> FaceInfo {
    FaceInfo {
        local: f.local,
        multi_access: matches!(f.remote, Remote::EtherMulticast),
        ..FaceInfo::default()
    }
}

/// Configured routes by (prefix, face name): cost.
fn route_map(cfg: &Config) -> BTreeMap<(NameBuf, String), u32> {
    cfg.routes
        .iter()
        .map(|r| ((r.prefix.clone(), cfg.faces[r.face].name.clone()), r.cost))
        .collect()
}

fn route_text(prefix: &NameBuf, face: &str, cost: u32) -> String {
    format!("{prefix} via {face} cost {cost}")
}

/// Checks `new` against the running router (`old` is the configuration it runs) and works
/// out every change; nothing is touched. Refuses keys that need a restart, faces that would
/// take the link or the name of a face made by command, and prefixes that would hold more
/// next hops than a FIB entry has.
pub(crate) fn plan(
    old: &Config,
    new: &Config,
    plane: &Plane,
    file: &Path,
) -> Result<Plan, ReloadError> {
    let keys = restart_keys(old, new);
    if !keys.is_empty() {
        return Err(ReloadError::Restart {
            file: file.to_path_buf(),
            keys,
        });
    }
    let conflict = |why: String| ReloadError::Conflict {
        file: file.to_path_buf(),
        why,
    };
    let table = plane.faces.table();
    // The configured faces as they run now: origin Config and named in the applied file (the
    // per-interface multicast faces are Config too, but not in the file).
    let old_names: HashSet<&str> = old.faces.iter().map(|f| f.name.as_str()).collect();
    let current: HashMap<&str, &Face> = table
        .iter()
        .filter(|f| f.origin == Origin::Config && old_names.contains(f.name.as_str()))
        .map(|f| (f.name.as_str(), f))
        .collect();
    let new_names: HashSet<&str> = new.faces.iter().map(|f| f.name.as_str()).collect();

    let mut faces_add = Vec::new();
    let mut faces_change = Vec::new();
    let mut faces_remove: Vec<(FaceId, String)> = current
        .values()
        .filter(|f| !new_names.contains(f.name.as_str()))
        .map(|f| (f.id, f.name.clone()))
        .collect();
    faces_remove.sort_by_key(|(id, _)| id.0);
    let mut kept = HashMap::new();
    for f in &new.faces {
        let link = link_of(f, plane).map_err(conflict)?;
        match current.get(f.name.as_str()) {
            Some(cur)
                if cur.link == link
                    && cur.info.local == f.local
                    && cur.info.multi_access == face_info(f).multi_access =>
            {
                kept.insert(f.name.clone(), cur.id);
            }
            Some(cur) => {
                kept.insert(f.name.clone(), cur.id);
                faces_change.push(FaceChange {
                    cfg: f.clone(),
                    link,
                    id: Some(cur.id),
                    renamed_from: None,
                });
            }
            None => faces_add.push(FaceChange {
                cfg: f.clone(),
                link,
                id: None,
                renamed_from: None,
            }),
        }
    }
    // A new face on the link of a configured face the file no longer names is that face
    // renamed: it keeps its id (and PIT entries); its old routes go, its new ones come.
    let mut renamed: HashMap<String, FaceId> = HashMap::new();
    let mut still_added = Vec::new();
    for mut c in faces_add {
        let same = faces_remove
            .iter()
            .position(|(id, _)| table.get(*id).is_some_and(|g| g.link == c.link));
        match same {
            Some(pos) => {
                let (id, old_name) = faces_remove.remove(pos);
                c.id = Some(id);
                c.renamed_from = Some(old_name.clone());
                renamed.insert(old_name, id);
                kept.insert(c.cfg.name.clone(), id);
                faces_change.push(c);
            }
            None => still_added.push(c),
        }
    }
    let mut faces_add = still_added;
    // Links and names the new and changed faces take must be free once the plan is applied:
    // the faces leaving or moving release theirs; an on-demand face to the same peer is
    // taken over by a new face (keeping its id and PIT entries) or removed for a changed one.
    let leaving: HashSet<FaceId> = faces_remove
        .iter()
        .map(|(id, _)| *id)
        .chain(faces_change.iter().filter_map(|c| c.id))
        .collect();
    let mut taken: HashSet<FaceId> = HashSet::new();
    let mut evict = Vec::new();
    for c in faces_add.iter_mut().chain(faces_change.iter_mut()) {
        if let Some(g) = table
            .iter()
            .find(|g| g.name == c.cfg.name && Some(g.id) != c.id && !leaving.contains(&g.id))
        {
            return Err(conflict(format!(
                "face {:?}: face {} ({}) already has that name; rename one of them",
                c.cfg.name,
                g.id.0,
                g.origin.name()
            )));
        }
        let Some(holder) = table.lookup(&c.link) else {
            continue;
        };
        if Some(holder) == c.id || leaving.contains(&holder) {
            continue;
        }
        let Some(h) = table.get(holder) else {
            continue;
        };
        if h.origin != Origin::OnDemand || !taken.insert(holder) {
            return Err(conflict(format!(
                "face {:?}: {} is already face {} ({} {:?}); remove it first (ndx face remove \
                 {}) or leave the face out of the file",
                c.cfg.name,
                c.link,
                holder.0,
                h.origin.name(),
                h.name,
                holder.0
            )));
        }
        if c.id.is_none() {
            c.id = Some(holder);
        } else {
            faces_remove.push((holder, h.name.clone()));
            evict.push(holder);
        }
    }

    // Routes: the file's routes against those the applied file made.
    let (old_routes, new_routes) = (route_map(old), route_map(new));
    let mut routes_add = Vec::new();
    let mut routes_change = Vec::new();
    let mut routes_readd = Vec::new();
    let mut routes_remove = Vec::new();
    for ((prefix, face), &cost) in &new_routes {
        match old_routes.get(&(prefix.clone(), face.clone())) {
            None => routes_add.push((prefix.clone(), face.clone(), cost)),
            Some(&c) if c != cost => routes_change.push((prefix.clone(), face.clone(), cost)),
            // The same route, through a face that was not running (removed by command) and
            // is added again: put the route back through it.
            Some(_) if !kept.contains_key(face) => {
                routes_readd.push((prefix.clone(), face.clone(), cost))
            }
            Some(_) => {}
        }
    }
    for (prefix, face) in old_routes.keys() {
        if !new_routes.contains_key(&(prefix.clone(), face.clone())) {
            let id = kept.get(face).or_else(|| renamed.get(face)).copied();
            routes_remove.push((prefix.clone(), face.clone(), id));
        }
    }
    // Next hops per prefix once applied (each route adds its face unless the prefix already
    // has it).
    for (prefix, _, _) in routes_add.iter().chain(&routes_readd) {
        let mut faces: HashSet<String> = plane
            .rib
            .entry(&prefix.as_name())
            .into_iter()
            .flat_map(|e| e.routes.iter())
            .filter(|r| !leaving.contains(&r.face))
            .map(|r| r.face.0.to_string())
            .collect();
        for (p, f, _) in routes_add.iter().chain(&routes_readd) {
            if p == prefix {
                faces.insert(
                    kept.get(f)
                        .map_or_else(|| format!("new:{f}"), |id| id.0.to_string()),
                );
            }
        }
        for (p, _, id) in &routes_remove {
            if p == prefix
                && let Some(id) = id
            {
                faces.remove(&id.0.to_string());
            }
        }
        if faces.len() > ndx_core::MAX_NEXTHOPS {
            return Err(conflict(format!(
                "route {prefix}: would have {} next hops: a route holds at most {}",
                faces.len(),
                ndx_core::MAX_NEXTHOPS
            )));
        }
    }

    // Strategies: the last choice per prefix in each file.
    let strat =
        |c: &Config| -> BTreeMap<NameBuf, StrategyKind> { c.strategies.iter().cloned().collect() };
    let (old_s, new_s) = (strat(old), strat(new));
    let strategies_set = new_s
        .iter()
        .filter(|(p, k)| old_s.get(*p) != Some(*k))
        .map(|(p, k)| (p.clone(), *k))
        .collect();
    let strategies_unset = old_s
        .keys()
        .filter(|p| !new_s.contains_key(*p))
        .cloned()
        .collect();

    Ok(Plan {
        file: file.to_path_buf(),
        faces_add,
        faces_change,
        faces_remove,
        evict,
        kept,
        routes_add,
        routes_change,
        routes_remove,
        routes_readd,
        strategies_set,
        strategies_unset,
        settings: live_changes(old, new),
        live: LiveSettings::of(new),
        on_demand: new.on_demand,
    })
}

/// Applies a plan: the face table, then the RIB (the FIB published once), then removals,
/// then the live settings. Returns what changed; what failed although planned (a FIB that
/// refuses an entry) is in `warnings`, the rest is applied.
pub(crate) fn apply(plan: Plan, plane: &mut Plane, live: &Live) -> ReloadReport {
    let mut report = ReloadReport {
        file: plan.file.clone(),
        settings: plan.settings.clone(),
        ..ReloadReport::default()
    };
    let mut ids = plan.kept.clone();
    // 1. Faces added (or taken over from on-demand) and changed in place; published before
    // any route names them.
    // Every face replaced in place leaves the table first, so links can move between them.
    let replaced = plan.faces_add.iter().chain(&plan.faces_change);
    for id in replaced
        .filter_map(|c| c.id)
        .chain(plan.evict.iter().copied())
    {
        if let Ok(old) = plane.faces.remove(id)
            && old.origin == Origin::OnDemand
        {
            plane.on_demand.give_back(old.link.on_demand_address());
            if plan.evict.contains(&id) {
                plane
                    .face_events
                    .push((ndx_nfd::face_event_kind::DESTROYED, old));
            }
        }
    }
    for c in plan.faces_add.iter().chain(&plan.faces_change) {
        let info = face_info(&c.cfg);
        let r = match c.id {
            Some(id) => plane
                .faces
                .insert(Face {
                    id,
                    name: c.cfg.name.clone(),
                    link: c.link,
                    info,
                    origin: Origin::Config,
                    path: None,
                })
                .map(|()| id),
            None => plane
                .faces
                .add(c.cfg.name.clone(), c.link, info, Origin::Config),
        };
        match r {
            Ok(id) => {
                if let Some(path) = ether_path(&c.link, &plane.ifaces) {
                    let _ = plane.faces.set_path(id, Some(path));
                }
                ids.insert(c.cfg.name.clone(), id);
                let mut what = format!("{} {} (face {})", c.cfg.name, c.cfg.remote, id.0);
                if let Some(old) = &c.renamed_from {
                    what.push_str(&format!(", renamed from {old}"));
                }
                if plan.faces_change.iter().any(|x| x.cfg.name == c.cfg.name) {
                    report.faces_changed.push(what);
                } else {
                    plane.face_created(id);
                    report.faces_added.push(what);
                }
            }
            Err(e) => report.warnings.push(format!("face {}: {e}", c.cfg.name)),
        }
    }
    if !plan.faces_add.is_empty() || !plan.faces_change.is_empty() {
        plane.faces.publish();
    }

    // 2. Routes and strategies, one FIB publication; the routes through faces about to go
    // leave the FIB here, before the faces leave the shards' table (step 3).
    plane.begin_batch();
    for (id, name) in &plan.faces_remove {
        if let Err(e) = plane.remove_face_routes(*id) {
            report.warnings.push(format!("routes through {name}: {e}"));
        }
    }
    let static_route = |face, cost: u32| Route {
        face,
        origin: origin::STATIC,
        cost: u64::from(cost),
        flags: 0,
        expires: None,
    };
    for (prefix, face, id) in &plan.routes_remove {
        // Without an id the route goes with its face (above).
        if let Some(id) = id {
            match plane.unregister(prefix, Some(*id), Some(origin::STATIC)) {
                // Removed by command already: gone either way.
                Ok(()) | Err(crate::plane::PlaneError::NoRoute(_)) => {}
                Err(e) => report
                    .warnings
                    .push(format!("route {prefix} via {face}: {e}")),
            }
        }
        report.routes_removed.push(format!("{prefix} via {face}"));
    }
    for (list, changed) in [
        (&plan.routes_add, false),
        (&plan.routes_readd, false),
        (&plan.routes_change, true),
    ] {
        for (prefix, face, cost) in list {
            let Some(&id) = ids.get(face) else {
                report
                    .warnings
                    .push(format!("route {prefix} via {face}: the face was not added"));
                continue;
            };
            match plane.register(prefix, static_route(id, *cost)) {
                Ok(()) if changed => report.routes_changed.push(route_text(prefix, face, *cost)),
                Ok(()) => report.routes_added.push(route_text(prefix, face, *cost)),
                Err(e) => report
                    .warnings
                    .push(format!("route {prefix} via {face}: {e}")),
            }
        }
    }
    for prefix in &plan.strategies_unset {
        match plane.unset_strategy(prefix) {
            Ok(_) => report.strategies_removed.push(prefix.to_string()),
            Err(e) => report.warnings.push(format!("strategy for {prefix}: {e}")),
        }
    }
    for (prefix, kind) in &plan.strategies_set {
        match plane.set_strategy(&prefix.to_string(), *kind) {
            Ok(()) => report
                .strategies_set
                .push(format!("{prefix} {}", kind.name())),
            Err(e) => report.warnings.push(format!("strategy for {prefix}: {e}")),
        }
    }
    plane.end_batch();

    // 3. Faces removed, with every route through them (the FIB first, then the table).
    for (id, name) in &plan.faces_remove {
        if plan.evict.contains(id) {
            report.faces_removed.push(format!("{name} (face {})", id.0));
            continue;
        }
        match plane.faces.remove(*id) {
            Ok(face) => {
                if face.origin == Origin::OnDemand {
                    plane.on_demand.give_back(face.link.on_demand_address());
                }
                plane
                    .face_events
                    .push((ndx_nfd::face_event_kind::DESTROYED, face));
                report.faces_removed.push(format!("{name} (face {})", id.0));
            }
            Err(e) => report.warnings.push(format!("face {name}: {e}")),
        }
    }
    if !plan.faces_remove.is_empty() {
        plane.faces.publish();
    }

    // 4. Live settings.
    if plane.on_demand.limits() != plan.on_demand {
        plane.on_demand.set_limits(plan.on_demand);
    }
    if live.get() != plan.live {
        live.set(plan.live);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::IfaceInfo;
    use ndx_core::FibReader;

    const BASE: &str = r#"
[router]
hash_key = "000102030405060708090a0b0c0d0e0f"
[[interface]]
name = "c0"
[[interface]]
name = "p0"
[[face]]
name = "up"
remote = "udp://10.0.2.1:6363"
[[face]]
name = "lan"
remote = "ether://02:00:00:00:00:07"
interface = "p0"
[[route]]
prefix = "/t"
face = "up"
[[route]]
prefix = "/l"
face = "lan"
cost = 4
[[strategy]]
prefix = "/t"
strategy = "best-route"
"#;

    fn cfg(text: &str) -> Config {
        Config::parse(text, Path::new("/etc/ndx/ndx.toml")).unwrap()
    }

    /// A control plane set up from `text` as `Router::start` sets it up (without the data
    /// path), with its reloader and the shards' FIB reader.
    fn router(text: &str) -> (Plane, Reloader, FibReader) {
        let c = cfg(text);
        let (mut plane, fib, _faces) = Plane::new(&c);
        plane.interfaces = vec![(2, "c0".into()), (3, "p0".into())];
        plane.ifaces = plane
            .interfaces
            .iter()
            .map(|(i, n)| IfaceInfo {
                name: n.clone(),
                ifindex: *i,
                mac: [2, 0, 0, 0, 0, *i as u8],
                mtu: 1500,
            })
            .collect();
        for f in &c.faces {
            let link = link_of(f, &plane).unwrap();
            let id = plane
                .faces
                .add(f.name.clone(), link, face_info(f), Origin::Config)
                .unwrap();
            let path = ether_path(&link, &plane.ifaces);
            plane.faces.set_path(id, path).unwrap();
        }
        plane.faces.publish();
        for r in &c.routes {
            plane
                .add_route(&r.prefix.to_string(), &c.faces[r.face].name, r.cost)
                .unwrap();
        }
        for (p, k) in &c.strategies {
            plane.set_strategy(&p.to_string(), *k).unwrap();
        }
        let mut reloader = Reloader::new(&c);
        reloader.file = Some("/etc/ndx/ndx.toml".into());
        (plane, reloader, fib)
    }

    fn reload(
        plane: &mut Plane,
        r: &mut Reloader,
        text: &str,
    ) -> Result<ReloadReport, ReloadError> {
        let c = Config::parse(text, Path::new("/etc/ndx/ndx.toml")).map_err(ReloadError::from)?;
        r.reload(plane, c, Path::new("/etc/ndx/ndx.toml"))
    }

    fn face(plane: &Plane, name: &str) -> Option<Face> {
        plane.faces.table().iter().find(|f| f.name == name).cloned()
    }

    /// (prefix, face name, origin, cost) of every RIB route.
    fn rib(plane: &Plane) -> Vec<(String, String, u64, u64)> {
        let name = |id: FaceId| plane.faces.table().get(id).map(|f| f.name.clone());
        let mut v: Vec<_> = plane
            .rib
            .entries()
            .flat_map(|e| {
                e.routes.iter().map(|r| {
                    (
                        e.name.to_string(),
                        name(r.face).unwrap_or_else(|| format!("gone:{}", r.face.0)),
                        r.origin,
                        r.cost,
                    )
                })
            })
            .collect();
        v.sort();
        v
    }

    fn strategy(plane: &Plane, prefix: &str) -> String {
        let routes = plane.routes_json();
        routes
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["prefix"] == prefix)
            .map_or_else(|| "none".into(), |r| r["strategy"].as_str().unwrap().into())
    }

    #[test]
    fn the_same_file_changes_nothing_and_publishes_nothing() {
        let (mut plane, mut r, fib) = router(BASE);
        let (g0, faces) = (
            fib.snapshot().generation(),
            plane.faces.table().generation(),
        );
        let before = rib(&plane);
        let rep = reload(&mut plane, &mut r, BASE).unwrap();
        assert_eq!(rep.changes(), 0, "{rep:?}");
        assert!(rep.warnings.is_empty());
        assert_eq!(fib.snapshot().generation(), g0);
        assert_eq!(plane.faces.table().generation(), faces);
        assert_eq!(rib(&plane), before);
        // A random hash key is drawn anew by every parse: random both times is no change.
        let random = BASE.replace("000102030405060708090a0b0c0d0e0f", "random");
        let (mut plane, mut r, _) = router(&random);
        assert_eq!(reload(&mut plane, &mut r, &random).unwrap().changes(), 0);
    }

    #[test]
    fn faces_routes_and_strategies_are_added_with_one_fib_publication() {
        let (mut plane, mut r, fib) = router(BASE);
        let up = face(&plane, "up").unwrap().id;
        let g0 = fib.snapshot().generation();
        let text = format!(
            "{BASE}[[face]]\nname = \"up2\"\nremote = \"udp://10.0.2.9:7000\"\n\
             [[route]]\nprefix = \"/x\"\nface = \"up2\"\ncost = 2\n\
             [[route]]\nprefix = \"/t\"\nface = \"up2\"\ncost = 9\n\
             [[strategy]]\nprefix = \"/x\"\nstrategy = \"multicast\"\n"
        );
        let rep = reload(&mut plane, &mut r, &text).unwrap();
        assert_eq!(rep.faces_added.len(), 1, "{rep:?}");
        assert!(rep.faces_added[0].starts_with("up2 udp://10.0.2.9:7000"));
        assert_eq!(
            rep.routes_added,
            ["/t via up2 cost 9", "/x via up2 cost 2"],
            "{rep:?}"
        );
        assert_eq!(rep.strategies_set, ["/x multicast"]);
        assert_eq!(rep.changes(), 4);
        assert_eq!(fib.snapshot().generation(), g0 + 1, "the FIB once");
        let up2 = face(&plane, "up2").unwrap();
        assert_eq!(up2.origin, Origin::Config);
        assert_eq!(
            face(&plane, "up").unwrap().id,
            up,
            "unchanged faces keep their ids"
        );
        assert!(rib(&plane).contains(&("/x".into(), "up2".into(), origin::STATIC, 2)));
        assert_eq!(strategy(&plane, "/x"), "multicast");
        // The shards see the new face (published) and the new FIB.
        assert!(plane.faces.table().generation() > 0 && fib.snapshot().generation() == g0 + 1);
        // The report as the control socket sends it.
        let j = rep.to_json();
        assert_eq!(j["changes"], 4);
        assert_eq!(j["routes"]["added"][1], "/x via up2 cost 2");
        assert!(rep.summary().contains("faces +1 -0 ~0, routes +2 -0 ~0"));
    }

    #[test]
    fn removed_and_changed_faces_routes_and_strategies() {
        let (mut plane, mut r, fib) = router(BASE);
        let (up, lan) = (
            face(&plane, "up").unwrap().id,
            face(&plane, "lan").unwrap().id,
        );
        // Routes the file did not make: an application's and a command's.
        plane
            .register(
                &NameBuf::from_uri("/l").unwrap(),
                Route {
                    face: lan,
                    origin: origin::APP,
                    cost: 0,
                    flags: 0,
                    expires: None,
                },
            )
            .unwrap();
        plane.add_route("/cli", "up", 1).unwrap();
        // up moves to another address (kept in place), lan goes with its routes, /t costs
        // 5, the strategy choice goes.
        let text = r#"
[router]
hash_key = "000102030405060708090a0b0c0d0e0f"
[[interface]]
name = "c0"
[[interface]]
name = "p0"
[[face]]
name = "up"
remote = "udp://10.0.2.2:6363"
local = true
[[route]]
prefix = "/t"
face = "up"
cost = 5
"#;
        let g0 = fib.snapshot().generation();
        let rep = reload(&mut plane, &mut r, text).unwrap();
        assert!(rep.warnings.is_empty(), "{rep:?}");
        assert_eq!(
            rep.faces_changed,
            [format!("up udp://10.0.2.2:6363 (face {})", up.0)]
        );
        assert_eq!(rep.faces_removed, [format!("lan (face {})", lan.0)]);
        assert_eq!(rep.routes_removed, ["/l via lan"]);
        assert_eq!(rep.routes_changed, ["/t via up cost 5"]);
        assert_eq!(rep.strategies_removed, ["/t"]);
        assert_eq!(fib.snapshot().generation(), g0 + 1, "the FIB once");
        let f = face(&plane, "up").unwrap();
        assert_eq!(
            (f.id, f.link.to_string()),
            (up, "udp://10.0.2.2:6363".into())
        );
        assert!(f.info.local);
        assert!(face(&plane, "lan").is_none());
        assert_eq!(
            rib(&plane),
            [
                ("/cli".into(), "up".into(), origin::STATIC, 1),
                ("/t".into(), "up".into(), origin::STATIC, 5),
            ],
            "the command's route stays; the app's went with its face"
        );
        assert!(
            plane
                .fib_routes()
                .iter()
                .all(|r| r.nexthops.iter().all(|n| n.face != lan))
        );
        assert_eq!(strategy(&plane, "/t"), "best-route");
        // Back to the first file: lan is a new face (new id), its route comes back.
        let rep = reload(&mut plane, &mut r, BASE).unwrap();
        assert_eq!(rep.faces_added.len(), 1);
        assert_eq!(rep.routes_added, ["/l via lan cost 4"]);
        assert_ne!(face(&plane, "lan").unwrap().id, lan);
        assert!(
            face(&plane, "lan").unwrap().path.is_some(),
            "Ethernet path set"
        );
        assert_eq!(face(&plane, "up").unwrap().id, up);
    }

    #[test]
    fn settings_that_need_a_restart_are_refused_by_name_and_change_nothing() {
        let (mut plane, mut r, fib) = router(BASE);
        let (g0, before) = (fib.snapshot().generation(), rib(&plane));
        let text = BASE
            .replace(
                "[router]\n",
                "[cs]\ncapacity = 1000\n[udp]\nports = [6363, 6364]\n[router]\nshards = 2\n",
            )
            .replace("name = \"p0\"\n", "name = \"p0\"\nqueues = 2\n")
            .replace("udp://10.0.2.1:6363", "udp://10.0.2.3:6363");
        let e = reload(&mut plane, &mut r, &text).unwrap_err();
        assert_eq!(
            e.restart_keys(),
            [
                "router.shards",
                "cs.capacity",
                "udp.ports",
                "interface[1].queues"
            ]
        );
        let msg = e.to_string();
        assert!(msg.contains("router.shards, cs.capacity"), "{msg}");
        assert!(msg.contains("restart"), "{msg}");
        assert!(msg.contains("nothing changed"), "{msg}");
        assert_eq!(fib.snapshot().generation(), g0);
        assert_eq!(rib(&plane), before);
        assert_eq!(
            face(&plane, "up").unwrap().link.to_string(),
            "udp://10.0.2.1:6363",
            "the face change in the same file is not applied either"
        );
        let text = BASE.replace(
            "[router]\n",
            "[metrics]\nlisten = \"127.0.0.1:9363\"\n[router]\n",
        );
        let e = reload(&mut plane, &mut r, &text).unwrap_err();
        assert_eq!(e.restart_keys(), ["metrics.listen"]);
        let text = BASE.replace(
            "[router]\n",
            "[router]\nxsk_tx_budget = 32\nxsk_busy_poll = 8\n",
        );
        let e = reload(&mut plane, &mut r, &text).unwrap_err();
        assert_eq!(
            e.restart_keys(),
            ["router.xsk_tx_budget", "router.xsk_busy_poll"]
        );
        let text = BASE.replace("name = \"c0\"\n", "name = \"c1\"\n");
        let e = reload(&mut plane, &mut r, &text).unwrap_err();
        assert_eq!(e.restart_keys(), ["interface (was [c0, p0], now [c1, p0])"]);
        // The refused file is not the applied one: the same file again is still a change.
        assert_eq!(r.applied().shards, 1);
    }

    #[test]
    fn an_invalid_file_is_refused_with_its_key_and_changes_nothing() {
        let dir = std::env::temp_dir().join(format!("ndx-reload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ndx.toml");
        let (mut plane, mut r, fib) = router(BASE);
        r.file = Some(file.clone());
        let (g0, before) = (fib.snapshot().generation(), rib(&plane));
        std::fs::write(&file, BASE.replace("face = \"lan\"", "face = \"lna\"")).unwrap();
        let e = r.reload_file(&mut plane, None).unwrap_err();
        assert!(
            e.to_string()
                .contains("route[1].face: no face named \"lna\""),
            "{e}"
        );
        std::fs::write(&file, "[router\n").unwrap();
        let e = r.reload_file(&mut plane, None).unwrap_err();
        assert!(
            matches!(e, ReloadError::Invalid(ConfigError::Syntax { .. })),
            "{e}"
        );
        let e = r
            .reload_file(&mut plane, Some(&dir.join("missing.toml")))
            .unwrap_err();
        assert!(e.to_string().contains("missing.toml"), "{e}");
        let e = r
            .reload_file(&mut plane, Some(Path::new("/dev/zero")))
            .unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert_eq!(fib.snapshot().generation(), g0);
        assert_eq!(rib(&plane), before);
        // The control socket's answer: not ok, the message, no restart keys.
        let v = r.handle(&mut plane, None);
        assert_eq!(v["ok"], false);
        assert!(v["error"].as_str().unwrap().contains("expected"), "{v}");
        assert_eq!(v["restart"], json!([]));
        // A good file through the same path applies.
        std::fs::write(&file, BASE.replace("cost = 4", "cost = 6")).unwrap();
        let v = r.handle(&mut plane, None);
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["routes"]["changed"], json!(["/l via lan cost 6"]));
        r.file = None;
        assert!(matches!(
            r.reload_file(&mut plane, None),
            Err(ReloadError::NoFile)
        ));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn live_settings_reach_the_workers_and_the_on_demand_bounds() {
        let (mut plane, mut r, _fib) = router(BASE);
        let live = r.live();
        let g = live.generation();
        let text = BASE.replace(
            "[router]\n",
            "[udp]\non_demand_max = 10\non_demand_per_address = 5\non_demand_idle_ms = 5000\n\
             [fairness]\nnack_rate = 5\n[tables]\nunsolicited = \"cache\"\n[router]\nidle = \"park\"\n",
        );
        let rep = reload(&mut plane, &mut r, &text).unwrap();
        assert_eq!(
            rep.settings,
            [
                "router.idle = park",
                "tables.unsolicited = cache",
                "udp.on_demand_max = 10",
                "udp.on_demand_per_address = 5",
                "udp.on_demand_idle_ms = 5000",
                "fairness.nack_rate = 5",
            ]
        );
        assert_eq!(live.generation(), g + 1);
        let s = live.get();
        assert_eq!(s.fairness.nack_rate, 5);
        assert_eq!(s.unsolicited, Unsolicited::Cache);
        assert_eq!(s.idle, Idle::Park);
        assert_eq!(plane.on_demand.limits().max, 10);
        assert_eq!(plane.on_demand.limits().idle_ms, 5000);
        // A shard takes them as the worker hands them over.
        let mut shard = ndx_core::Shard::new(ndx_core::ShardConfig::default(), _fib, 0);
        shard.retune(s.fairness, s.max_lifetime_ms, s.unsolicited);
        assert_eq!(shard.config().fairness.nack_rate, 5);
        assert_eq!(shard.config().unsolicited, Unsolicited::Cache);
        // Nothing changed: the workers are not disturbed.
        assert_eq!(reload(&mut plane, &mut r, &text).unwrap().changes(), 0);
        assert_eq!(live.generation(), g + 1);
    }

    #[test]
    fn faces_made_by_command_are_not_taken_and_on_demand_ones_are() {
        let (mut plane, mut r, _fib) = router(BASE);
        let cmd = plane.add_face("cmd", "udp://10.0.2.5:6363", None).unwrap();
        let text = format!("{BASE}[[face]]\nname = \"new\"\nremote = \"udp://10.0.2.5:6363\"\n");
        let e = reload(&mut plane, &mut r, &text).unwrap_err();
        assert!(
            e.to_string().contains(&format!(
                "udp://10.0.2.5:6363 is already face {} (command",
                cmd.0
            )),
            "{e}"
        );
        assert!(face(&plane, "new").is_none());
        let text = format!("{BASE}[[face]]\nname = \"cmd\"\nremote = \"udp://10.0.2.6:6363\"\n");
        let e = reload(&mut plane, &mut r, &text).unwrap_err();
        assert!(e.to_string().contains("already has that name"), "{e}");
        // An on-demand face to the peer becomes the configured face, keeping its id.
        let link = Link::Udp("10.0.2.7:6363".parse().unwrap());
        plane.on_demand.take(link.on_demand_address()).unwrap();
        let od = FaceId(900);
        plane
            .faces
            .insert(Face {
                id: od,
                name: "10.0.2.7:6363".into(),
                link,
                info: FaceInfo::default(),
                origin: Origin::OnDemand,
                path: None,
            })
            .unwrap();
        let text = format!(
            "{BASE}[[face]]\nname = \"peer\"\nremote = \"udp://10.0.2.7:6363\"\n\
             [[route]]\nprefix = \"/peer\"\nface = \"peer\"\n"
        );
        let rep = reload(&mut plane, &mut r, &text).unwrap();
        assert_eq!(rep.faces_added, ["peer udp://10.0.2.7:6363 (face 900)"]);
        let f = face(&plane, "peer").unwrap();
        assert_eq!((f.id, f.origin), (od, Origin::Config));
        assert_eq!(
            plane.on_demand.counts().0,
            0,
            "its on-demand place is given back"
        );
        assert!(rib(&plane).contains(&("/peer".into(), "peer".into(), origin::STATIC, 0)));
    }

    #[test]
    fn a_renamed_face_keeps_its_id_and_faces_may_swap_links() {
        let (mut plane, mut r, fib) = router(BASE);
        let (up, lan) = (
            face(&plane, "up").unwrap().id,
            face(&plane, "lan").unwrap().id,
        );
        let renamed = BASE.replace("\"up\"", "\"upstream\"");
        let g0 = fib.snapshot().generation();
        let rep = reload(&mut plane, &mut r, &renamed).unwrap();
        assert!(rep.warnings.is_empty(), "{rep:?}");
        assert_eq!(
            rep.faces_changed,
            [format!(
                "upstream udp://10.0.2.1:6363 (face {}), renamed from up",
                up.0
            )]
        );
        assert!(
            rep.faces_added.is_empty() && rep.faces_removed.is_empty(),
            "{rep:?}"
        );
        assert_eq!(rep.routes_removed, ["/t via up"]);
        assert_eq!(rep.routes_added, ["/t via upstream cost 0"]);
        assert_eq!(face(&plane, "upstream").unwrap().id, up);
        assert!(face(&plane, "up").is_none());
        assert!(rib(&plane).contains(&("/t".into(), "upstream".into(), origin::STATIC, 0)));
        assert_eq!(fib.snapshot().generation(), g0 + 1);
        // Two faces trade places: both keep their ids, each takes the other's link.
        let two = |a: &str, b: &str| {
            renamed
                .replace("udp://10.0.2.1:6363", a)
                .replace("ether://02:00:00:00:00:07\"\ninterface = \"p0\"", b)
        };
        let text = two("udp://10.0.2.8:6363", "udp://10.0.2.9:6363\"");
        reload(&mut plane, &mut r, &text).unwrap();
        let swapped = two("udp://10.0.2.9:6363", "udp://10.0.2.8:6363\"");
        let rep = reload(&mut plane, &mut r, &swapped).unwrap();
        assert!(rep.warnings.is_empty(), "{rep:?}");
        assert_eq!(rep.faces_changed.len(), 2, "{rep:?}");
        assert_eq!(
            face(&plane, "upstream").unwrap().link.to_string(),
            "udp://10.0.2.9:6363"
        );
        assert_eq!(
            face(&plane, "lan").unwrap().link.to_string(),
            "udp://10.0.2.8:6363"
        );
        assert_eq!(
            (
                face(&plane, "upstream").unwrap().id,
                face(&plane, "lan").unwrap().id
            ),
            (up, lan)
        );
        // A changed face moving onto an on-demand face's link: the on-demand face goes.
        let link = Link::Udp("10.0.2.7:6363".parse().unwrap());
        plane.on_demand.take(link.on_demand_address()).unwrap();
        plane
            .faces
            .insert(Face {
                id: FaceId(901),
                name: "10.0.2.7:6363".into(),
                link,
                info: FaceInfo::default(),
                origin: Origin::OnDemand,
                path: None,
            })
            .unwrap();
        let rep = reload(
            &mut plane,
            &mut r,
            &swapped.replace("udp://10.0.2.9:6363", "udp://10.0.2.7:6363"),
        )
        .unwrap();
        assert!(rep.warnings.is_empty(), "{rep:?}");
        assert_eq!(rep.faces_removed, ["10.0.2.7:6363 (face 901)"]);
        assert_eq!(face(&plane, "upstream").unwrap().id, up);
        assert_eq!(plane.faces.table().lookup(&link), Some(up));
        assert_eq!(plane.on_demand.counts().0, 0);
    }

    #[test]
    fn too_many_next_hops_are_refused_before_anything_changes() {
        let mut text = BASE.to_string();
        let (mut plane, mut r, _fib) = router(BASE);
        for i in 0..8 {
            plane
                .add_face(&format!("c{i}"), &format!("udp://10.0.3.{i}:6363"), None)
                .unwrap();
            plane.add_route("/t", &format!("c{i}"), 1).unwrap();
        }
        text.push_str("[[face]]\nname = \"more\"\nremote = \"udp://10.0.4.1:6363\"\n");
        text.push_str("[[route]]\nprefix = \"/t\"\nface = \"more\"\n");
        let before = rib(&plane);
        let e = reload(&mut plane, &mut r, &text).unwrap_err();
        assert!(e.to_string().contains("next hops"), "{e}");
        assert_eq!(rib(&plane), before);
        assert!(face(&plane, "more").is_none());
    }
}

/// A `reload` from an in-process [`crate::Handle`], served as the router's control loop
/// serves it (`runtime::serve_commands_with` with the router's hook).
#[cfg(test)]
mod handle_tests {
    use super::*;
    use crate::protocol::{Request, Response};

    /// No app socket, no kernel UDP sockets: nothing to bind in a unit test.
    const FILE: &str = "[app]\nsocket = \"\"\nudp_fragments = false\n\
        [[interface]]\nname = \"c0\"\n";
    const FACE: &str = "[[face]]\nname = \"up\"\nremote = \"udp://10.0.2.1:6363\"\n";

    #[test]
    fn a_handle_reloads_through_the_control_loop() {
        let dir = std::env::temp_dir().join(format!("ndx-reload-h-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ndx.toml");
        std::fs::write(&file, FILE).unwrap();
        let cfg = Config::load(&file).unwrap();
        let (mut plane, _fib, _faces) = Plane::new(&cfg);
        plane.interfaces = vec![(2, "c0".into())];
        let mut reloader = Reloader::new(&cfg);
        reloader.file = Some(file.clone());
        // The file gains a face.
        std::fs::write(&file, format!("{FILE}{FACE}")).unwrap();
        let f2 = file.clone();
        let ((ok, refused), plane) = crate::handle::testing::serve_while(
            &cfg,
            plane,
            &mut |plane, file| {
                reloader
                    .reload_file(plane, file.map(Path::new))
                    .map(|r| Response::Reloaded(r.to_json()))
                    .map_err(|e| e.to_string())
            },
            move |handle, _links| {
                let ok = handle.request(Request::Reload {
                    file: Some(f2.display().to_string()),
                });
                std::fs::write(&f2, FILE.replace("name = \"c0\"", "name = \"c1\"")).unwrap();
                // (The refused file would also remove the face: nothing of it is applied.)
                let refused = handle.request(Request::Reload { file: None });
                (ok, refused)
            },
        );
        match ok.unwrap() {
            Response::Reloaded(v) => {
                let added = v["faces"]["added"][0].as_str().unwrap_or_default();
                assert!(added.starts_with("up udp://10.0.2.1:6363 (face "), "{v}");
            }
            other => panic!("{other:?}"),
        }
        let e = refused.unwrap_err().to_string();
        assert!(e.contains("interface (was [c0], now [c1])"), "{e}");
        assert!(plane.faces.table().iter().any(|f| f.name == "up"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
