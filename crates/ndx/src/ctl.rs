//! Control commands: talk to a running router over its control socket.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use ndx_router::client::{ClientError, request};
use ndx_router::counters;
use ndx_router::protocol::{Request, Response, Strategy};
use serde_json::Value;

use crate::out;

/// A control command's failure: the router's ([`ClientError`]) or standard output's
/// ([`out::OutputError`]), each boxed as itself so `main` can tell a closed pipe.
type CtlResult = Result<u8, Box<dyn std::error::Error>>;

/// Where the router's control socket is.
#[derive(Debug, Args)]
pub(crate) struct Socket {
    /// The router's control socket (router.control_socket in its configuration).
    #[arg(long, short = 's', default_value = "/run/ndx/ndx.sock", global = true)]
    socket: PathBuf,
}

/// `ndx status`.
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    socket: Socket,
    /// Print the raw JSON answer.
    #[arg(long)]
    json: bool,
}

/// `ndx face ...`.
#[derive(Debug, Args)]
pub(crate) struct FaceArgs {
    #[command(flatten)]
    socket: Socket,
    #[command(subcommand)]
    cmd: FaceCmd,
}

#[derive(Debug, Subcommand)]
enum FaceCmd {
    /// List faces.
    List {
        /// Print the raw JSON answer (`faces`: id, name, remote, origin, ...).
        #[arg(long)]
        json: bool,
    },
    /// Add a face: `ndx face add NAME udp://IP:PORT` (or ether://MAC --interface IF).
    Add {
        /// Name for routes to refer to.
        name: String,
        /// udp://IP:PORT, ether://MAC or ether-multicast.
        remote: String,
        /// Interface (Ethernet faces).
        #[arg(long)]
        interface: Option<String>,
    },
    /// Remove a face (by id or name) and its next hops.
    Remove {
        /// Face id or name.
        face: String,
    },
}

/// `ndx route ...`.
#[derive(Debug, Args)]
pub(crate) struct RouteArgs {
    #[command(flatten)]
    socket: Socket,
    #[command(subcommand)]
    cmd: RouteCmd,
}

#[derive(Debug, Subcommand)]
enum RouteCmd {
    /// List routes: the FIB, each next hop with the origins of its routes (app, static,
    /// nlsr, ..., or inherited from an ancestor's ChildInherit route), then the RIB.
    List {
        /// Print the raw JSON answer (`routes`: the FIB, `rib`: every route).
        #[arg(long)]
        json: bool,
    },
    /// Add a next hop: `ndx route add /prefix FACE [--cost N]`.
    Add {
        /// Name prefix.
        prefix: String,
        /// Face id or name.
        face: String,
        /// Routing cost (lower is preferred).
        #[arg(long, default_value_t = 0)]
        cost: u32,
    },
    /// Remove a next hop, or the whole route when no face is given.
    Remove {
        /// Name prefix.
        prefix: String,
        /// Face id or name.
        face: Option<String>,
    },
    /// Set the strategy of a routed prefix: best-route, multicast or adaptive.
    Strategy {
        /// Name prefix.
        prefix: String,
        /// Strategy name.
        strategy: String,
    },
}

fn ask(socket: &Socket, req: Request) -> Result<Response, ClientError> {
    request(&socket.socket, &req)
}

pub(crate) fn status(args: &StatusArgs) -> CtlResult {
    let r = ask(&args.socket, Request::Status)?;
    let v = r.to_json();
    if args.json {
        out::println(v)?;
    } else {
        out::print(render_status(&v))?;
    }
    Ok(0)
}

/// The human-readable status: headline counters per shard and in total, non-zero drops,
/// XDP counters, faces and routes.
pub(crate) fn render_status(v: &Value) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let shards = v["shards"].as_array().cloned().unwrap_or_default();
    let _ = write!(s, "{:<18}{:>14}", "counter", "total");
    for i in 0..shards.len() {
        let _ = write!(s, "{:>14}", format!("shard {i}"));
    }
    s.push('\n');
    // Rows: the headline counters, then every other non-zero one, in table order.
    let mut rows: Vec<&str> = counters::HEADLINE.iter().map(|c| c.name()).collect();
    for d in counters::COUNTERS {
        if !rows.contains(&d.name) && v["counters"][d.name].as_u64().unwrap_or(0) > 0 {
            rows.push(d.name);
        }
    }
    for n in rows {
        let _ = write!(s, "{n:<18}{:>14}", v["counters"][n].as_u64().unwrap_or(0));
        for sh in &shards {
            let _ = write!(s, "{:>14}", sh[n].as_u64().unwrap_or(0));
        }
        s.push('\n');
    }
    let host: Vec<_> = counters::HOST_COUNTERS
        .iter()
        .filter_map(|d| Some((d.name, v["host"][d.name].as_u64().filter(|&n| n > 0)?)))
        .collect();
    if !host.is_empty() {
        s.push_str("\nhost\n");
        for (k, val) in host {
            let _ = writeln!(s, "  {k:<28}{val}");
        }
    }
    if let Some(x) = v["xdp"].as_object().filter(|o| !o.is_empty()) {
        s.push_str("\nxdp program\n");
        for (k, val) in x {
            if val.as_u64() != Some(0) {
                let _ = writeln!(s, "  {k:<28}{val}");
            }
        }
    }
    if let Some(shares) = v["pit_share"].as_array().filter(|a| !a.is_empty()) {
        let shares: Vec<String> = shares.iter().map(Value::to_string).collect();
        let _ = writeln!(s, "\nPIT share per face: {} (per shard)", shares.join(", "));
    }
    s.push_str("\nfaces");
    let _ = write!(s, "{:>64}", "");
    for d in counters::FACE_LOADS {
        let _ = write!(s, "{:>12}", d.column);
    }
    s.push('\n');
    for f in v["faces"].as_array().into_iter().flatten() {
        let _ = write!(
            s,
            "  {:>4}  {:<16} {:<28} {:<11}",
            f["id"],
            f["name"].as_str().unwrap_or(""),
            f["remote"].as_str().unwrap_or(""),
            f["origin"].as_str().unwrap_or(""),
        );
        for d in counters::FACE_LOADS {
            let _ = write!(s, "{:>12}", f[d.def.name].as_u64().unwrap_or(0));
        }
        if f["resolved"] != Value::Bool(true) {
            s.push_str(" (resolving)");
        }
        s.push('\n');
    }
    s.push_str("\nroutes\n");
    s.push_str(&render_routes(v));
    s
}

fn render_routes(v: &Value) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for r in v["routes"].as_array().into_iter().flatten() {
        let hops: Vec<String> = r["nexthops"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| match n["origin"].as_str() {
                Some(o) => format!("face{} (cost {}, {o})", n["face"], n["cost"]),
                None => format!("face{} (cost {})", n["face"], n["cost"]),
            })
            .collect();
        let _ = writeln!(
            s,
            "  {:<32} {:<11} {}",
            r["prefix"].as_str().unwrap_or(""),
            r["strategy"].as_str().unwrap_or(""),
            hops.join(", ")
        );
    }
    s
}

/// The RIB: every route with its origin, cost and flags.
fn render_rib(v: &Value) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let entries = v["rib"].as_array().cloned().unwrap_or_default();
    if entries.is_empty() {
        return s;
    }
    s.push_str("rib\n");
    for e in &entries {
        for r in e["routes"].as_array().into_iter().flatten() {
            let mut flags = Vec::new();
            if r["child_inherit"] == true {
                flags.push("child-inherit");
            }
            if r["capture"] == true {
                flags.push("capture");
            }
            let expires = r["expires_in_ms"]
                .as_u64()
                .map_or_else(|| "never".to_string(), |ms| format!("{} s", ms / 1000));
            let _ = writeln!(
                s,
                "  {:<32} face{:<6} origin {:<9} cost {:<5} {:<24} expires {}",
                e["prefix"].as_str().unwrap_or(""),
                r["face"],
                r["origin"].as_str().unwrap_or(""),
                r["cost"],
                flags.join(","),
                expires
            );
        }
    }
    s
}

pub(crate) fn face(args: &FaceArgs) -> CtlResult {
    match &args.cmd {
        FaceCmd::List { json } => {
            use std::fmt::Write;
            let v = ask(&args.socket, Request::Faces)?.to_json();
            if *json {
                out::println(&v)?;
                return Ok(0);
            }
            let mut s = String::new();
            for f in v["faces"].as_array().into_iter().flatten() {
                let _ = writeln!(
                    s,
                    "{:>4}  {:<16} {:<32} {}",
                    f["id"],
                    f["name"].as_str().unwrap_or(""),
                    f["remote"].as_str().unwrap_or(""),
                    f["origin"].as_str().unwrap_or("")
                );
            }
            out::print(s)?;
        }
        FaceCmd::Add {
            name,
            remote,
            interface,
        } => {
            let req = Request::FaceAdd {
                name: name.clone(),
                remote: remote.clone(),
                interface: interface.clone(),
            };
            match ask(&args.socket, req)? {
                Response::FaceAdded { id } => out::println(format_args!("face{id}"))?,
                other => return Err(format!("unexpected answer {other:?}").into()),
            }
        }
        FaceCmd::Remove { face } => {
            ask(&args.socket, Request::FaceRemove { face: face.clone() })?;
        }
    }
    Ok(0)
}

pub(crate) fn route(args: &RouteArgs) -> CtlResult {
    match &args.cmd {
        RouteCmd::List { json } => {
            let v = ask(&args.socket, Request::Routes)?.to_json();
            if *json {
                out::println(&v)?;
            } else {
                out::print(render_routes(&v))?;
                out::print(render_rib(&v))?;
            }
        }
        RouteCmd::Add { prefix, face, cost } => {
            let req = Request::RouteAdd {
                prefix: prefix.clone(),
                face: face.clone(),
                cost: *cost,
            };
            ask(&args.socket, req)?;
        }
        RouteCmd::Remove { prefix, face } => {
            let req = Request::RouteRemove {
                prefix: prefix.clone(),
                face: face.clone(),
            };
            ask(&args.socket, req)?;
        }
        RouteCmd::Strategy { prefix, strategy } => {
            let req = Request::StrategySet {
                prefix: prefix.clone(),
                strategy: strategy.parse::<Strategy>()?,
            };
            ask(&args.socket, req)?;
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_rendering_shows_counters_faces_and_routes() {
        let v = json!({
            "counters": {"rx_frames": 10, "cs_hits": 4, "drop_no_route": 2, "drop_loop": 0},
            "shards": [{"rx_frames": 6, "cs_hits": 4}, {"rx_frames": 4, "cs_hits": 0}],
            "faces": [{"id": 1, "name": "up", "remote": "udp://10.0.0.2:6363", "origin": "config", "resolved": false, "interests_in": 42, "drop_pit_quota": 5}],
            "host": {"app_rx": 7, "app_tx": 0},
            "routes": [{"prefix": "/a", "strategy": "best-route", "nexthops": [{"face": 1, "cost": 3}]}],
            "xdp": {"redirected": 9, "passed": 0},
        });
        let s = render_status(&v);
        assert!(s.contains("shard 1"), "{s}");
        assert!(
            s.lines()
                .any(|l| l.starts_with("rx_frames") && l.ends_with("4")),
            "{s}"
        );
        assert!(
            s.contains("drop_no_route"),
            "non-zero drops are listed: {s}"
        );
        assert!(!s.contains("drop_loop"), "zero drops are not: {s}");
        assert!(s.contains("redirected"), "{s}");
        assert!(s.contains("(resolving)"), "{s}");
        assert!(s.contains("face1 (cost 3)"), "{s}");
        // Every headline counter has its row, zero or not, before the others.
        for c in counters::HEADLINE {
            assert!(s.lines().any(|l| l.starts_with(c.name())), "{s}");
        }
        let rows: Vec<&str> = s.lines().map(|l| l.split(' ').next().unwrap()).collect();
        let pos = |n: &str| rows.iter().position(|r| *r == n).unwrap();
        assert!(pos("unresolved_face") < pos("drop_no_route"), "{s}");
        // Host counters when non-zero; per-face loads under their column titles.
        assert!(
            s.lines()
                .any(|l| l.trim() == "app_rx                      7"),
            "{s}"
        );
        assert!(!s.contains("app_tx"), "{s}");
        assert!(s.contains("pit quota") && s.contains("interests"), "{s}");
        let face = s
            .lines()
            .find(|l| l.contains("udp://10.0.0.2:6363"))
            .unwrap();
        let nums: Vec<&str> = face.split_whitespace().skip(4).collect();
        assert_eq!(nums[..6], ["42", "0", "0", "0", "5", "0"], "{face}");
    }
}

/// `ndx reload`.
#[derive(Debug, Args)]
pub(crate) struct ReloadArgs {
    #[command(flatten)]
    socket: Socket,
    /// The configuration file to apply (default: the file `ndx run` was started with).
    #[arg(long, short = 'c')]
    config: Option<PathBuf>,
    /// Print the raw JSON answer.
    #[arg(long)]
    json: bool,
}

/// `ndx reload`: 0 applied, 1 refused (the router's message on stderr; nothing changed),
/// 2 the router cannot be reached.
pub(crate) fn reload(args: &ReloadArgs) -> CtlResult {
    // The router resolves paths from its own directory: send an absolute one.
    let file = args.config.as_ref().map(std::path::absolute).transpose()?;
    let req = Request::Reload {
        file: file.map(|f| f.display().to_string()),
    };
    let v = ndx_router::client::request_answer(
        &args.socket.socket,
        &req,
        std::time::Duration::from_secs(30),
    )?;
    let ok = v["ok"] == Value::Bool(true);
    if args.json {
        out::println(&v)?;
    } else if ok {
        out::print(render_reload(&v))?;
    }
    if ok {
        Ok(0)
    } else {
        if !args.json {
            out::eprint(format_args!(
                "ndx: {}",
                v["error"].as_str().unwrap_or("reload refused")
            ));
        }
        Ok(1)
    }
}

/// A reload's answer for people: the counts, then one line per change.
fn render_reload(v: &Value) -> String {
    use std::fmt::Write;
    let list = |a: &Value| -> Vec<String> {
        a.as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect()
    };
    let n = |a: &Value| a.as_array().map_or(0, Vec::len);
    let mut s = format!(
        "reloaded {}: {} change(s): faces +{} -{} ~{}, routes +{} -{} ~{}, strategies {} set {} \
         removed, {} setting(s)\n",
        v["file"].as_str().unwrap_or("?"),
        v["changes"].as_u64().unwrap_or(0),
        n(&v["faces"]["added"]),
        n(&v["faces"]["removed"]),
        n(&v["faces"]["changed"]),
        n(&v["routes"]["added"]),
        n(&v["routes"]["removed"]),
        n(&v["routes"]["changed"]),
        n(&v["strategies"]["set"]),
        n(&v["strategies"]["removed"]),
        n(&v["settings"]),
    );
    for (what, a) in [
        ("face added", &v["faces"]["added"]),
        ("face removed", &v["faces"]["removed"]),
        ("face changed", &v["faces"]["changed"]),
        ("route added", &v["routes"]["added"]),
        ("route removed", &v["routes"]["removed"]),
        ("route changed", &v["routes"]["changed"]),
        ("strategy set", &v["strategies"]["set"]),
        ("strategy removed", &v["strategies"]["removed"]),
        ("setting", &v["settings"]),
        ("warning", &v["warnings"]),
    ] {
        for item in list(a) {
            let _ = writeln!(s, "  {what}: {item}");
        }
    }
    s
}
