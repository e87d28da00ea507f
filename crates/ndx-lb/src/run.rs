//! `ndx lb run`: the front end's process. It loads the XDP program (`ndx_xdp::lb`), writes
//! the cluster's state into its maps, attaches it to every configured interface and then
//! serves the control socket and the scale-in timers until asked to stop. Nothing here is on
//! the per-packet path.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ndx_afxdp::neigh::{LinkInfo, Resolver};
use ndx_xdp::lb::{LB_NO_ROUTER, LbHash, LbXdp, LbXdpConfig};
use ndx_xdp::{AttachMode, LinkGuard, XdpError};

use crate::cluster::{Cluster, ClusterError, MapOp};
use crate::config::{HashMode, LbConfig, XdpMode};
use crate::proto::{InterfaceStatus, Request, Response, RouterCounters, Status};
use crate::server::ControlServer;

/// Largest MTU the plain (single-buffer) program attaches at on veth; above it the
/// `xdp.frags` variant is loaded.
const PLAIN_MTU: u32 = 3498;

/// Why the front end could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Loading, attaching or writing the XDP program failed.
    #[error("{0}")]
    Xdp(#[from] XdpError),
    /// An interface is missing or unusable.
    #[error("interface {name}: {why}")]
    Interface {
        /// The interface.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The configured routers are inconsistent.
    #[error("{0}")]
    Cluster(#[from] ClusterError),
    /// The control socket could not be bound.
    #[error("control socket {path}: {err}")]
    Control {
        /// Its path.
        path: String,
        /// The error.
        err: std::io::Error,
    },
    /// A sysctl the front end needs could not be set.
    #[error(
        "sysctl {key}: {err} (the front end sets IP forwarding, accept_local and a loose rp_filter on its interfaces)"
    )]
    Sysctl {
        /// The key.
        key: String,
        /// The error.
        err: std::io::Error,
    },
    /// No well-known address.
    #[error("{0}")]
    Addresses(String),
}

/// A running front end: its program, the cluster state and the control socket.
#[derive(Debug)]
pub struct Frontend {
    state: State,
    server: ControlServer,
    _links: Vec<LinkGuard>,
}

#[derive(Debug)]
struct State {
    cfg: LbConfig,
    xdp: LbXdp,
    cluster: Cluster,
    interfaces: Vec<InterfaceStatus>,
    addresses: Vec<Ipv4Addr>,
    resolver: Resolver,
}

fn v4(info: &LinkInfo) -> impl Iterator<Item = Ipv4Addr> + '_ {
    info.addrs.iter().filter_map(|a| match a {
        IpAddr::V4(v) => Some(*v),
        IpAddr::V6(_) => None,
    })
}

fn ifindex(name: &str) -> Result<u32, RunError> {
    ndx_xdp::ifindex_of(name).map_err(|_| RunError::Interface {
        name: name.into(),
        why: "no such interface".into(),
    })
}

/// `/proc/sys/net/ipv4/conf/<iface>/<name>` (interface names may contain dots: `eth0.100`).
fn conf_path(iface: &str, name: &str) -> String {
    format!("/proc/sys/net/ipv4/conf/{iface}/{name}")
}

fn sysctl(iface: &str, name: &str, value: &str) -> Result<(), RunError> {
    let path = conf_path(iface, name);
    let key = format!("net.ipv4.conf.{iface}.{name}");
    let current = std::fs::read_to_string(&path).map_err(|err| RunError::Sysctl {
        key: key.clone(),
        err,
    })?;
    if current.trim() != value {
        std::fs::write(&path, value).map_err(|err| RunError::Sysctl {
            key: key.clone(),
            err,
        })?;
        tracing::info!("{key} = {value} (was {})", current.trim());
    }
    Ok(())
}

fn read_sysctl(iface: &str, name: &str) -> Option<String> {
    std::fs::read_to_string(conf_path(iface, name))
        .ok()
        .map(|s| s.trim().to_owned())
}

/// What the front end needs from the kernel on its interfaces: IPv4 forwarding (checked by
/// `bpf_fib_lookup` on the ingress interface), and, for the first packets towards a
/// neighbour not yet resolved (which go through the kernel's forwarding path, already
/// NATed), `accept_local` and a reverse-path filter that is off or loose.
fn kernel_settings(interfaces: &[String]) -> Result<(), RunError> {
    sysctl("all", "forwarding", "1")?;
    if read_sysctl("all", "rp_filter").as_deref() == Some("1") {
        sysctl("all", "rp_filter", "2")?;
    }
    for name in interfaces {
        sysctl(name, "forwarding", "1")?;
        sysctl(name, "accept_local", "1")?;
        if read_sysctl(name, "rp_filter").as_deref() == Some("1") {
            sysctl(name, "rp_filter", "2")?;
        }
    }
    Ok(())
}

/// The interface the kernel routes `address` through (0 when it has no route: the program
/// then accepts the router's packets on any interface).
fn route_ifindex(resolver: &mut Resolver, address: Ipv4Addr) -> u32 {
    match resolver.route(IpAddr::V4(address)) {
        Ok(Some(r)) => r.ifindex,
        _ => {
            tracing::warn!(
                "no route to router {address} yet: its packets are accepted on any interface"
            );
            0
        }
    }
}

fn apply(xdp: &mut LbXdp, resolver: &mut Resolver, ops: Vec<MapOp>) -> Result<(), XdpError> {
    for op in ops {
        match op {
            MapOp::SetRouter {
                slot,
                address,
                port,
            } => {
                let ifindex = route_ifindex(resolver, address);
                xdp.set_router(slot, address, port, ifindex)?;
            }
            MapOp::ClearRouter { slot } => xdp.clear_router(slot)?,
            MapOp::SetPort { port, slot } => xdp.set_port(port, slot)?,
            MapOp::ClearPort { port } => xdp.clear_port(port)?,
            MapOp::SetCells(cells) => {
                for (cell, slot) in cells {
                    let slot = if slot == crate::NO_ROUTER {
                        LB_NO_ROUTER
                    } else {
                        slot
                    };
                    xdp.set_cell(cell, slot)?;
                }
            }
        }
    }
    Ok(())
}

impl Frontend {
    /// Starts the front end: checks the interfaces, sets the kernel's forwarding settings,
    /// loads the program, writes the routers and the hash space, binds the control socket,
    /// and attaches to every interface (the program only acts once attached, with its maps
    /// complete).
    pub fn start(cfg: LbConfig) -> Result<Self, RunError> {
        let mut resolver = Resolver::new().map_err(|e| RunError::Interface {
            name: "netlink".into(),
            why: e.to_string(),
        })?;
        let mut infos = Vec::new();
        for name in &cfg.interfaces {
            let index = ifindex(name)?;
            let info = resolver.link(index).map_err(|e| RunError::Interface {
                name: name.clone(),
                why: e.to_string(),
            })?;
            infos.push(info);
        }
        let addresses: Vec<Ipv4Addr> = if cfg.addresses.is_empty() {
            infos.iter().flat_map(v4).collect()
        } else {
            cfg.addresses.clone()
        };
        if addresses.is_empty() {
            return Err(RunError::Addresses(format!(
                "no IPv4 address on {:?}: give the well-known addresses in lb.addresses",
                cfg.interfaces
            )));
        }
        if addresses.len() > ndx_xdp::lb::LB_MAX_VIPS {
            return Err(RunError::Addresses(format!(
                "{} well-known addresses: at most {}",
                addresses.len(),
                ndx_xdp::lb::LB_MAX_VIPS
            )));
        }
        kernel_settings(&cfg.interfaces)?;
        // "random" was drawn when the configuration was read.
        let (k0, k1) = cfg.hash_key;
        let frags = infos.iter().any(|i| i.mtu > PLAIN_MTU);
        let mut xdp = LbXdp::load(&LbXdpConfig {
            k0,
            k1,
            hash: match cfg.hash {
                HashMode::Name => LbHash::Name,
                HashMode::Prefix(k) => LbHash::Prefix(k),
                HashMode::Batch(b) => LbHash::Batch(b),
            },
            table_len: cfg.table,
            port: cfg.port,
            fragment_entries: cfg.fragment_entries,
            frags,
        })?;
        for a in &addresses {
            xdp.add_vip(*a)?;
        }
        for info in &infos {
            // The SNAT source on an interface: a well-known address on it (answers must come
            // back to an address the program knows). An interface without one cannot send
            // for the cluster.
            match v4(info).find(|a| addresses.contains(a)) {
                Some(a) => xdp.set_ifaddr(info.ifindex, a)?,
                None => tracing::info!(
                    "{}: no well-known address on it; packets of the cluster routed out of it \
                     are dropped (no-ifaddr)",
                    info.name
                ),
            }
        }
        if let Some(r) = cfg.routers.iter().find(|r| addresses.contains(&r.address)) {
            return Err(RunError::Addresses(format!(
                "router {}: {} is a well-known address of the front end",
                r.name, r.address
            )));
        }
        let cluster = Cluster::from_config(&cfg, Instant::now())?;
        apply(&mut xdp, &mut resolver, cluster.snapshot())?;
        let server = ControlServer::bind(&cfg.control_socket).map_err(|err| RunError::Control {
            path: cfg.control_socket.display().to_string(),
            err,
        })?;
        let mut links = Vec::new();
        let mut interfaces = Vec::new();
        for info in &infos {
            let (link, mode) = match cfg.xdp_mode {
                XdpMode::Driver => (
                    xdp.attach(info.ifindex, AttachMode::Driver)?,
                    XdpMode::Driver,
                ),
                XdpMode::Skb => (xdp.attach(info.ifindex, AttachMode::Skb)?, XdpMode::Skb),
                XdpMode::Auto => match xdp.attach(info.ifindex, AttachMode::Driver) {
                    Ok(l) => (l, XdpMode::Driver),
                    Err(e) => {
                        tracing::warn!("{}: driver mode refused ({e}); using skb mode", info.name);
                        (xdp.attach(info.ifindex, AttachMode::Skb)?, XdpMode::Skb)
                    }
                },
            };
            tracing::info!("attached to {} ({mode})", info.name);
            links.push(link);
            interfaces.push(InterfaceStatus {
                name: info.name.clone(),
                mode,
            });
        }
        Ok(Self {
            state: State {
                cfg,
                xdp,
                cluster,
                interfaces,
                addresses,
                resolver,
            },
            server,
            _links: links,
        })
    }

    /// The current status (configuration, routers with their counters, global counters).
    pub fn status(&self) -> Status {
        self.state.status()
    }

    /// Serves the control socket and the scale-in timers until `stop` is set.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), RunError> {
        while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            let ops = self.state.cluster.tick(now);
            apply(&mut self.state.xdp, &mut self.state.resolver, ops)?;
            let wait = self
                .state
                .cluster
                .next_deadline()
                .map_or(Duration::from_millis(100), |d| {
                    d.saturating_duration_since(now)
                })
                .clamp(Duration::from_millis(1), Duration::from_millis(100));
            let state = &mut self.state;
            self.server.poll(&mut |req| state.handle(req), wait);
        }
        Ok(())
    }
}

impl State {
    fn handle(&mut self, req: Request) -> Response {
        let now = Instant::now();
        let ops = match req {
            Request::Status => return Response::status(self.status()),
            Request::Add { router } => {
                if self.addresses.contains(&router.address) {
                    return Response::error(format!(
                        "router {}: {} is a well-known address of the front end",
                        router.name, router.address
                    ));
                }
                let name = router.name.clone();
                let r = self.cluster.add(router, now);
                if r.is_ok() {
                    tracing::info!("router {name} added");
                }
                r
            }
            Request::Remove { name } => {
                let r = self.cluster.remove(&name, now);
                if r.is_ok() {
                    tracing::info!(
                        "router {name} leaves the hash space; freed in {} ms",
                        self.cluster.drain().as_millis()
                    );
                }
                r
            }
            Request::Weight { name, weight } => self.cluster.set_weight(&name, weight, now),
        };
        match ops {
            Err(e) => Response::error(e),
            Ok(ops) => match apply(&mut self.xdp, &mut self.resolver, ops) {
                Ok(()) => Response::status(self.status()),
                Err(e) => Response::error(format!("writing the XDP maps: {e}")),
            },
        }
    }

    fn status(&self) -> Status {
        let mut s = Status::new(&self.cfg, &self.cluster, Instant::now());
        s.config.addresses.clone_from(&self.addresses);
        s.config.interfaces.clone_from(&self.interfaces);
        for r in &mut s.routers {
            if let Ok(c) = self.xdp.router_counters(r.router.slot) {
                r.counters = Some(RouterCounters {
                    interests_dispatched: c.interests_to,
                    data_returned: c.data_to,
                    nacks_returned: c.nacks_to,
                    interests_out: c.interests_from,
                    data_out: c.data_from,
                    nacks_out: c.nacks_from,
                    bytes_to_router: c.bytes_to,
                    bytes_from_router: c.bytes_from,
                });
            }
        }
        if let Ok(c) = self.xdp.counters() {
            s.counters = c.iter().map(|(k, v)| (k.to_owned(), v)).collect();
        }
        s
    }
}
