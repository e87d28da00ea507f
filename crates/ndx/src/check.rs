//! `ndx check --json` and `ndx lb check --json`: the parsed configuration as JSON, and the
//! exit code of a configuration that does not load.
//!
//! Field names are stable (tests read them): a valid file prints `{"file", "ok": true, ...}`
//! with the settings; an invalid one prints `{"file", "ok": false, "error"}` (exit code 1) so
//! a script reads one shape either way. Without `--json` an invalid file is an error line on
//! standard error, also exit code 1; an unreadable file is exit code 2 (see `main`).

use std::path::Path;

use ndx_core::DispatchMode;
use ndx_router::config::{Config, ConfigError, Remote, XdpMode};
use serde_json::{Value, json};

/// Whether a configuration error is about the file's content (exit code 1: bad input found)
/// rather than reading it (2).
pub(crate) fn bad_content(e: &(dyn std::error::Error + 'static)) -> bool {
    match e.downcast_ref::<ConfigError>() {
        Some(ConfigError::Read { .. }) => false,
        Some(_) => true,
        None => matches!(
            e.downcast_ref::<ndx_lb::config::ConfigError>(),
            Some(e) if !matches!(e, ndx_lb::config::ConfigError::Read { .. })
        ),
    }
}

/// The `--json` answer for a file that did not load.
pub(crate) fn refused(path: &Path, e: &dyn std::error::Error) -> Value {
    json!({"file": path, "ok": false, "error": e.to_string()})
}

fn dispatch(d: DispatchMode) -> Value {
    match d {
        DispatchMode::Prefix(n) => json!({"mode": "prefix", "components": n}),
        DispatchMode::Content => json!({"mode": "content"}),
        DispatchMode::Batch(n) => json!({"mode": "batch", "segments": n}),
    }
}

fn xdp_mode(m: XdpMode) -> &'static str {
    match m {
        XdpMode::Auto => "auto",
        XdpMode::Native => "native",
        XdpMode::Skb => "skb",
    }
}

/// A router configuration (`ndx check --json`); `thp` is the kernel's transparent huge page
/// mode (`None`: absent).
pub(crate) fn router(path: &Path, c: &Config, thp: Option<&str>) -> Value {
    let faces: Vec<Value> = c
        .faces
        .iter()
        .map(|f| {
            let kind = match f.remote {
                Remote::Udp(_) => "udp",
                Remote::Ether(_) => "ether",
                Remote::EtherMulticast => "ether-multicast",
            };
            json!({"name": f.name, "kind": kind, "remote": f.remote.to_string(),
                   "interface": f.interface, "local": f.local})
        })
        .collect();
    let routes: Vec<Value> = c
        .routes
        .iter()
        .map(|r| {
            json!({"prefix": r.prefix.to_string(),
                   "face": c.faces.get(r.face).map(|f| f.name.as_str()), "cost": r.cost})
        })
        .collect();
    let strategies: Vec<Value> = c
        .strategies
        .iter()
        .map(|(p, s)| json!({"prefix": p.to_string(), "strategy": s.name()}))
        .collect();
    let interfaces: Vec<Value> = c
        .interfaces
        .iter()
        .map(|i| {
            json!({"name": i.name, "xdp_mode": xdp_mode(i.xdp_mode), "queues": i.queues,
                   "udp": i.udp, "ethernet": i.ethernet,
                   "ethernet_multicast": i.ethernet_multicast})
        })
        .collect();
    let l2 = match (&c.l2, &c.shard.l2) {
        (Some(l2), Some(core)) => Value::String(l2.describe(core)),
        _ => Value::Null,
    };
    json!({
        "file": path,
        "ok": true,
        "shards": c.shards,
        "cpus": c.cpus,
        "dispatch": dispatch(c.dispatch),
        "dispatch_table": c.dispatch_table,
        "control_socket": c.control_socket,
        "burst": c.burst,
        "frames": c.frames,
        "xdp_classify": c.xdp_classify,
        "keep_frames": c.keep_frames,
        "huge_pages": c.huge_pages,
        "thp": thp,
        "hash_key_random": c.hash_key_random,
        "udp_ports": c.udp_ports,
        "udp_on_demand": c.udp_on_demand,
        "app_socket": c.app.socket,
        "interfaces": interfaces,
        "faces": faces,
        "routes": routes,
        "strategies": strategies,
        "l2": l2,
    })
}

/// A front-end configuration (`ndx lb check --json`).
pub(crate) fn lb(path: &Path, c: &ndx_lb::LbConfig) -> Value {
    let routers: Vec<Value> = c
        .routers
        .iter()
        .map(|r| json!({"name": r.name, "address": r.address, "port": r.port, "weight": r.weight}))
        .collect();
    json!({
        "file": path,
        "ok": true,
        "interfaces": c.interfaces,
        "addresses": c.addresses,
        "port": c.port,
        "hash": serde_json::to_value(c.hash).unwrap_or(Value::Null),
        "hash_key_random": c.hash_key_random,
        "table": c.table,
        "drain_ms": c.drain.as_millis() as u64,
        "control_socket": c.control_socket,
        "xdp_mode": serde_json::to_value(c.xdp_mode).unwrap_or(Value::Null),
        "fragment_entries": c.fragment_entries,
        "routers": routers,
    })
}
