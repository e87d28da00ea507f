//! `ndx lb`: the cluster front end (seed 002). `run` is the process; `status`, `add`,
//! `remove` and `weight` talk to it over its control socket.

use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use ndx_lb::{LbConfig, Request, Response, RouterSpec};

use crate::out;

/// The control socket when neither `--socket` nor a configuration names one.
const DEFAULT_SOCKET: &str = "/run/ndx/lb.sock";

/// How long a command waits for the front end's answer.
const TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, clap::Subcommand)]
enum Cmd {
    /// Run the front end: attach its XDP program to the configured interfaces and serve the
    /// control socket until SIGINT/SIGTERM.
    Run {
        /// The configuration file (see configs/lb.toml).
        #[arg(long, short = 'c')]
        config: PathBuf,
    },
    /// Check a configuration file and print what it sets up.
    Check {
        /// The configuration file.
        #[arg(long, short = 'c')]
        config: PathBuf,
        /// Print the parsed configuration as JSON (`"ok": false` and `"error"` when invalid).
        #[arg(long)]
        json: bool,
    },
    /// Show the routers, their share of the hash space and their counters, and the
    /// program's counters.
    Status {
        #[command(flatten)]
        target: Target,
        /// Print the status as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add an internal router (scale-out): it takes its weight's share of the hash space at
    /// once.
    Add {
        #[command(flatten)]
        target: Target,
        /// Its name (1 to 32 of A-Z a-z 0-9 _ . -).
        name: String,
        /// Its address and UDP port, `IPv4:PORT`; the port is its implicit identifier.
        address: SocketAddrV4,
        /// Its relative share of the hash space (0..=1000).
        #[arg(long, default_value_t = 1)]
        weight: u32,
        /// Print the new status as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove an internal router (scale-in): it leaves the hash space now and keeps its port
    /// until the drain time has passed, so its pending Data still come back.
    Remove {
        #[command(flatten)]
        target: Target,
        /// Its name.
        name: String,
        /// Print the new status as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Change a router's weight (0: no new Interests, Data still come back).
    Weight {
        #[command(flatten)]
        target: Target,
        /// Its name.
        name: String,
        /// The new weight (0..=1000).
        weight: u32,
        /// Print the new status as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Args)]
struct Target {
    /// The front end's control socket.
    #[arg(long, short = 's', default_value = DEFAULT_SOCKET)]
    socket: PathBuf,
}

pub(crate) fn main(args: &Args) -> Result<u8, Box<dyn std::error::Error>> {
    match &args.command {
        Cmd::Run { config } => run(config),
        Cmd::Check { config, json } => check(config, *json),
        Cmd::Status { target, json } => ask(&target.socket, &Request::Status, *json),
        Cmd::Add {
            target,
            name,
            address,
            weight,
            json,
        } => {
            let router = RouterSpec {
                name: name.clone(),
                address: *address.ip(),
                port: address.port(),
                weight: *weight,
            };
            ask(&target.socket, &Request::Add { router }, *json)
        }
        Cmd::Remove { target, name, json } => ask(
            &target.socket,
            &Request::Remove { name: name.clone() },
            *json,
        ),
        Cmd::Weight {
            target,
            name,
            weight,
            json,
        } => ask(
            &target.socket,
            &Request::Weight {
                name: name.clone(),
                weight: *weight,
            },
            *json,
        ),
    }
}

/// Sends `req`, prints the status it answers with; a refusal is exit code 1.
fn ask(socket: &Path, req: &Request, json: bool) -> Result<u8, Box<dyn std::error::Error>> {
    let answer = match ndx_lb::client::request(socket, req, TIMEOUT) {
        Err(ndx_lb::client::ClientError::Refused(why)) => Response::Error(why),
        r => r?,
    };
    match answer {
        Response::Error(why) => {
            out::eprint(format_args!("ndx lb: refused: {why}"));
            Ok(1)
        }
        Response::Ok { status: Some(s) } => {
            if json {
                out::println(ndx_lb::render::status_json(&s))?;
            } else {
                out::print(ndx_lb::render::render_status(&s))?;
            }
            Ok(0)
        }
        Response::Ok { status: None } => Ok(0),
    }
}

fn check(path: &Path, json: bool) -> Result<u8, Box<dyn std::error::Error>> {
    let c = match LbConfig::load(path) {
        Ok(c) => c,
        Err(e) if json && crate::check::bad_content(&e) => {
            out::println(crate::check::refused(path, &e))?;
            return Ok(1);
        }
        Err(e) => return Err(e.into()),
    };
    if json {
        out::println(crate::check::lb(path, &c))?;
        return Ok(0);
    }
    let mut s = format!(
        "{}: ok: {} interface(s) {:?}, port {}, hash {}, {} cells, drain {} ms, {} router(s)\n",
        path.display(),
        c.interfaces.len(),
        c.interfaces,
        c.port,
        c.hash,
        c.table,
        c.drain.as_millis(),
        c.routers.len()
    );
    for r in &c.routers {
        s.push_str(&format!(
            "  {} at {}:{} weight {}\n",
            r.name, r.address, r.port, r.weight
        ));
    }
    out::print(s)?;
    Ok(0)
}

fn run(path: &Path) -> Result<u8, Box<dyn std::error::Error>> {
    let cfg = LbConfig::load(path)?;
    let socket = cfg.control_socket.clone();
    let mut front = ndx_lb::run::Frontend::start(cfg)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    let st = front.status();
    tracing::info!(
        "lb: serving {} on port {} with {} router(s), hash {} over {} cells; control {}",
        st.config
            .addresses
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        st.config.port,
        st.routers.len(),
        st.config.hash,
        st.config.table,
        socket.display()
    );
    if let Some(n) = ndx_router::notify::Notifier::from_env() {
        n.send("READY=1");
    }
    front.run(&stop)?;
    tracing::info!("lb: stopped");
    Ok(0)
}
