//! Starting, running and stopping a router: XDP attachment, AF_XDP ports, shard workers, and
//! the control thread's loop (control socket, on-demand faces, next-hop resolution).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ndx_afxdp::neigh::{Resolution, Resolver};
use ndx_afxdp::{Exchange, Port, PortConfig, UmemConfig};
use ndx_core::{Dispatch, FaceInfo, Shard, ShardConfig};
use ndx_xdp::{AttachMode, LinkGuard, NdxXdp, XdpConfig};
use serde_json::{Value, json};

use crate::builder::Builder;
use crate::config::{Config, Frags, Remote, XdpMode};
use crate::control::ControlServer;
use crate::faces::{L2Path, Link, Origin};
use crate::handle::{AppFace, COMMAND_DEPTH, Command, Handle, Running};
use crate::iface::{self, LinkState, LinkStates, queue_plan};
use crate::plane::{Plane, ether_path};
use crate::protocol::Response;
use crate::stats::Snapshot;
use crate::worker::{Core, Ep, Event, Handoff, IfaceInfo, Redispatch, Worker, WorkerConfig};

/// Why the router could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// An interface problem.
    #[error(transparent)]
    Iface(#[from] iface::IfaceError),
    /// The XDP program could not be loaded or attached.
    #[error("{iface}: XDP: {source}")]
    Xdp {
        /// Interface.
        iface: String,
        /// Why.
        source: Box<ndx_xdp::XdpError>,
    },
    /// An AF_XDP socket could not be opened.
    #[error("{iface} queue {queue}: AF_XDP: {source}")]
    Socket {
        /// Interface.
        iface: String,
        /// Queue.
        queue: u32,
        /// Why.
        source: ndx_afxdp::Error,
    },
    /// The control socket could not be bound.
    #[error("control socket {path}: {source}")]
    Control {
        /// Path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A configured face or route could not be set up.
    #[error("{0}")]
    Setup(String),
    /// No interface configured.
    #[error("no [[interface]] in the configuration: ndx needs at least one to attach to")]
    NoInterface,
    /// A thread could not be started.
    #[error("cannot start a shard thread: {0}")]
    Thread(std::io::Error),
    /// The content store's L2 could not be opened.
    #[error(transparent)]
    L2(#[from] crate::l2::L2OpenError),
    /// The host thread (app socket, kernel UDP sockets) could not be set up.
    #[error(transparent)]
    Host(#[from] crate::app::HostError),
    /// The configuration a [`Builder`] was given is refused.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// XDP or AF_XDP failed and the process lacks capabilities ndx needs (CAP_BPF,
    /// CAP_PERFMON, CAP_NET_ADMIN, CAP_NET_RAW, CAP_IPC_LOCK).
    #[error("{cause}\n{hint}")]
    Capabilities {
        /// The failure.
        cause: Box<StartError>,
        /// What is missing and what to grant.
        hint: String,
    },
    /// The metrics endpoint could not listen (`[metrics] listen`).
    #[error("cannot listen for metrics on {addr} ([metrics] listen): {source}")]
    Metrics {
        /// The configured address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// One attached interface: its program, its bpf_link and what the workers know of it.
#[derive(Debug)]
struct Attached {
    info: IfaceInfo,
    xdp: NdxXdp,
    link: Option<LinkGuard>,
    mode: AttachMode,
    /// Whether the program is the `xdp.frags` one and the sockets multi-buffer.
    frags: bool,
    /// The link as last seen (`Router::check_links`), and how often it went down and came
    /// back up.
    state: LinkState,
    downs: u64,
    ups: u64,
}

/// A running router: its shard workers forward from [`Router::start`] on; its control loop
/// ([`Router::run`], or [`Router::spawn`] on a thread of its own) serves the control socket,
/// [`Handle`]s, app faces and next-hop resolution.
#[derive(Debug)]
pub struct Router {
    cfg: Config,
    plane: Plane,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<Snapshot>>,
    events: Receiver<Event>,
    control: Option<ControlServer>,
    /// Requests from [`Handle`]s (and the sender they clone).
    commands: Receiver<Command>,
    command_tx: SyncSender<Command>,
    attached: Vec<Attached>,
    resolver: Option<Resolver>,
    host: crate::app::Host,
    started: Instant,
    links: Arc<LinkStates>,
    /// The shard workers' heartbeats (`READY=1`, the systemd watchdog).
    heartbeats: Arc<crate::watchdog::Heartbeats>,
    /// The configuration as applied, for reloads (`reload.rs`).
    reloader: crate::reload::Reloader,
    /// Set (by a SIGHUP handler) to reload the configuration file.
    reload: Arc<AtomicBool>,
    metrics: Option<crate::metrics::MetricsServer>,
    /// Whether [`Router::run`] talks to systemd ([`Router::notify_systemd`]).
    systemd: bool,
}

/// What the router did, reported when it stops.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Counters summed over shards.
    pub total: Snapshot,
    /// Per shard.
    pub shards: Vec<Snapshot>,
    /// How long it ran.
    pub uptime: Duration,
}

fn attach_mode(m: XdpMode) -> AttachMode {
    match m {
        XdpMode::Skb => AttachMode::Skb,
        XdpMode::Auto | XdpMode::Native => AttachMode::Driver,
    }
}

impl Router {
    /// Configures a router from code (or from a file or a [`Config`]), then starts it.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Attaches to every configured interface, opens the sockets, starts one pinned worker
    /// per shard and binds the control socket. On error nothing stays attached; an XDP or
    /// AF_XDP failure names the capabilities the process lacks, if any.
    ///
    /// The library installs no logger and no signal handler: `tracing` events go to the
    /// embedder's subscriber, if any, and stopping is [`Router::stop_flag`] or
    /// [`Handle::stop`].
    pub fn start(cfg: Config) -> Result<Router, StartError> {
        Self::start_with(cfg, true)
    }

    /// [`Router::start`], binding the control socket only when `control` is true.
    pub(crate) fn start_with(cfg: Config, control: bool) -> Result<Router, StartError> {
        Self::start_all(cfg, control).map_err(|e| match e {
            StartError::Xdp { .. } | StartError::Socket { .. } => {
                match crate::caps::hint(&crate::caps::missing()) {
                    Some(hint) => StartError::Capabilities {
                        cause: Box::new(e),
                        hint,
                    },
                    None => e,
                }
            }
            e => e,
        })
    }

    fn start_all(mut cfg: Config, control: bool) -> Result<Router, StartError> {
        if cfg.interfaces.is_empty() {
            return Err(StartError::NoInterface);
        }
        // As given (before start-up adjusts it): what a reload compares the next file with.
        let reloader = crate::reload::Reloader::new(&cfg);
        // First the metrics port: a port in use fails before anything is attached.
        let metrics = match cfg.metrics_listen {
            Some(addr) => Some(
                crate::metrics::MetricsServer::start(addr)
                    .map_err(|source| StartError::Metrics { addr, source })?,
            ),
            None => None,
        };
        // Before any table is allocated (the `ndx` binary's allocator reads this).
        ndx_mem::set_huge_pages(cfg.huge_pages);
        // First: a kept L2 store may supply the hash key its records were written with.
        let mut l2 = crate::l2::open(&mut cfg)?.into_iter();
        let shards = cfg.shards as u32;
        let dispatch = Dispatch::new(cfg.hash_key, cfg.dispatch, cfg.shards, cfg.dispatch_table)
            .map_err(|e| StartError::Setup(e.to_string()))?;

        // Interfaces: program, attachment, sockets.
        let mut attached = Vec::new();
        // eps[shard] = that shard's sockets.
        let mut eps: Vec<Vec<Ep>> = (0..shards).map(|_| Vec::new()).collect();
        let mut umems = Vec::new();
        for ic in &cfg.interfaces {
            let info = iface::info(&ic.name)?;
            let queues = if ic.queues == 0 {
                iface::rx_queues(&ic.name)?
            } else {
                ic.queues
            };
            let frags = match ic.frags {
                Frags::On => true,
                Frags::Off => false,
                Frags::Auto => info.mtu > 3000,
            };
            let mut xc =
                XdpConfig::for_dispatch(&dispatch, cfg.hash_key_halves.0, cfg.hash_key_halves.1);
            xc.udp_ports = if ic.udp {
                cfg.udp_ports.clone()
            } else {
                Vec::new()
            };
            xc.ethernet = ic.ethernet;
            xc.classify = cfg.xdp_classify;
            xc.frags = frags;
            let xerr = |source| StartError::Xdp {
                iface: ic.name.clone(),
                source: Box::new(source),
            };
            let mut xdp = NdxXdp::load(&xc).map_err(xerr)?;
            let plan = queue_plan(shards, queues);
            for (q, on_q) in plan.iter().enumerate() {
                let q = q as u32;
                let pc = PortConfig {
                    umem: UmemConfig {
                        frame_count: cfg.frames,
                        // Without classification the program writes no metadata and nobody
                        // reads it: no area to clear when a frame goes back to the kernel.
                        meta_len: if xc.classify {
                            UmemConfig::default().meta_len
                        } else {
                            0
                        },
                        ..UmemConfig::default()
                    },
                    sockets: on_q.len() as u32,
                    multi_buffer: frags,
                    tx_budget: cfg.xsk_tx_budget,
                    busy_poll: cfg.xsk_busy_poll,
                    ..PortConfig::default()
                };
                let port = Port::open(&ic.name, q, &pc).map_err(|source| StartError::Socket {
                    iface: ic.name.clone(),
                    queue: q,
                    source,
                })?;
                umems.push((port.umem().clone(), info.ifindex));
                let endpoints = port.into_endpoints();
                // XSKMAP: each shard's own socket where it has one, else the queue owner's.
                for s in 0..shards {
                    let k = on_q.iter().position(|&x| x == s).unwrap_or(0);
                    xdp.set_socket(q, s as u8, std::os::fd::AsRawFd::as_raw_fd(&endpoints[k]))
                        .map_err(xerr)?;
                }
                for (ep, &s) in endpoints.into_iter().zip(on_q) {
                    // One socket per port and shard: kept frames go back to the socket that
                    // kept them (`Worker::reclaim_frames`).
                    debug_assert!(eps[s as usize].iter().all(|e| e.ep.port() != ep.port()));
                    eps[s as usize].push(Ep::new(ep, info.ifindex, cfg.keep_frames));
                }
            }
            let mode = attach_mode(ic.xdp_mode);
            let link = match xdp.attach(info.ifindex, mode) {
                Ok(l) => (l, mode),
                Err(e) if ic.xdp_mode == XdpMode::Auto => {
                    tracing::warn!(
                        interface = %ic.name,
                        "{}: native XDP refused ({e}); using generic (SKB) mode",
                        ic.name
                    );
                    (
                        xdp.attach(info.ifindex, AttachMode::Skb).map_err(xerr)?,
                        AttachMode::Skb,
                    )
                }
                Err(e) => return Err(xerr(e)),
            };
            attached.push(Attached {
                info,
                xdp,
                link: Some(link.0),
                mode: link.1,
                frags,
                state: LinkState::Up,
                downs: 0,
                ups: 0,
            });
        }
        let ifaces: Arc<Vec<IfaceInfo>> =
            Arc::new(attached.iter().map(|a| a.info.clone()).collect());
        let links = Arc::new(LinkStates::new(ifaces.iter().map(|i| i.ifindex)));

        // The control plane: faces, routes, strategies.
        let (mut plane, fib_reader, face_reader) = Plane::new(&cfg);
        plane.interfaces = ifaces.iter().map(|i| (i.ifindex, i.name.clone())).collect();
        plane.ifaces = ifaces.to_vec();
        let ifindex_of = |name: &str| ifaces.iter().find(|i| i.name == name).map(|i| i.ifindex);
        for f in &cfg.faces {
            let info = FaceInfo {
                local: f.local,
                multi_access: matches!(f.remote, Remote::EtherMulticast),
                ..FaceInfo::default()
            };
            let ifindex = f.interface.as_deref().and_then(ifindex_of);
            let link = match f.remote {
                Remote::Udp(a) => Link::Udp(a),
                Remote::Ether(mac) => Link::Ether {
                    ifindex: ifindex.unwrap_or(0),
                    mac,
                },
                Remote::EtherMulticast => Link::EtherMulticast {
                    ifindex: ifindex.unwrap_or(0),
                },
            };
            let id = plane
                .faces
                .add(f.name.clone(), link, info, Origin::Config)
                .map_err(|e| StartError::Setup(format!("face {:?}: {e}", f.name)))?;
            if let Some(path) = ether_path(&link, &ifaces) {
                let _ = plane.faces.set_path(id, Some(path));
            }
        }
        // One multicast face per interface that listens to the NDN group.
        for (ic, a) in cfg.interfaces.iter().zip(&attached) {
            let link = Link::EtherMulticast {
                ifindex: a.info.ifindex,
            };
            if ic.ethernet_multicast && plane.faces.table().lookup(&link).is_none() {
                let id = plane
                    .faces
                    .add(
                        format!("{}-multicast", ic.name),
                        link,
                        FaceInfo {
                            multi_access: true,
                            ..FaceInfo::default()
                        },
                        Origin::Config,
                    )
                    .map_err(|e| StartError::Setup(e.to_string()))?;
                let _ = plane.faces.set_path(id, ether_path(&link, &ifaces));
            }
        }
        plane.faces.publish();
        for r in &cfg.routes {
            let face = &cfg.faces[r.face].name;
            plane
                .add_route(&r.prefix.to_string(), face, r.cost)
                .map_err(|e| StartError::Setup(format!("route {}: {e}", r.prefix)))?;
        }
        for (prefix, kind) in &cfg.strategies {
            plane
                .set_strategy(&prefix.to_string(), *kind)
                .map_err(|e| StartError::Setup(format!("strategy for {prefix}: {e}")))?;
        }

        // Resolve configured UDP faces before forwarding starts (up to 2 s), and publish what
        // was found: the workers read paths from the published table only.
        let mut resolver = match Resolver::new() {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!("netlink unavailable ({e}); UDP faces need on-demand learning");
                None
            }
        };
        if let Some(res) = resolver.as_mut() {
            let ifindexes: Vec<u32> = attached.iter().map(|a| a.info.ifindex).collect();
            let deadline = Instant::now() + Duration::from_secs(2);
            loop {
                resolve_udp_faces(res, &mut plane, &ifindexes, cfg.udp_ports[0]);
                if unresolved_udp_faces(&plane) == 0 || Instant::now() >= deadline {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        plane.faces.publish();

        // The host thread's side: app socket, kernel UDP sockets, the management face (its
        // routes go in before the workers start).
        let (mut host, host_links) = crate::app::Host::new(
            &cfg.app,
            &cfg.udp_ports,
            &mut plane,
            dispatch.clone(),
            shards as usize,
            std::time::SystemTime::now(),
        )?;
        let mut host_links = host_links.into_iter();

        // Exchange rings, full mesh.
        let n = shards as usize;
        let mut to: Vec<Vec<Option<ndx_afxdp::ExchangeSender>>> =
            (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
        let mut from: Vec<Vec<ndx_afxdp::ExchangeReceiver>> = (0..n).map(|_| Vec::new()).collect();
        for (a, row) in to.iter_mut().enumerate() {
            for (b, slot) in row.iter_mut().enumerate() {
                if a != b {
                    let (tx, rx) = Exchange::new(4096);
                    *slot = Some(tx);
                    from[b].push(rx);
                }
            }
        }

        // Hand-off channels for reassembled packets (only with several shards).
        let mut redispatch = redispatch_mesh(n, &dispatch).into_iter();

        let stop = Arc::new(AtomicBool::new(false));
        let (ev_tx, ev_rx) = sync_channel(4096);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let core_ids = core_affinity::get_core_ids().unwrap_or_default();
        let mut workers = Vec::new();
        let heartbeats = crate::watchdog::Heartbeats::new(n);
        for (s, ((eps, to), from)) in eps.into_iter().zip(to).zip(from).enumerate() {
            let shard_cfg = ShardConfig {
                shard: s as u8,
                ..cfg.shard
            };
            let mut shard = if cfg.keep_frames {
                Shard::with_frames::<ndx_afxdp::KeptFrame>(shard_cfg, fib_reader.clone(), 0)
            } else {
                Shard::copying::<ndx_afxdp::KeptFrame>(shard_cfg, fib_reader.clone(), 0)
            };
            for f in plane.faces.table().iter() {
                shard.add_face(f.id, f.info);
            }
            let shard_l2 = l2.next();
            if let Some(l) = &shard_l2 {
                l.refill(&mut shard);
            }
            let mut core = Core::new(
                s as u8,
                shard,
                face_reader.clone(),
                ev_tx.clone(),
                WorkerConfig {
                    burst: cfg.burst,
                    idle: cfg.idle,
                    udp_port: cfg.udp_ports[0],
                    on_demand: cfg.udp_on_demand,
                    ip_fragments: cfg.udp_ip_fragments,
                    ifaces: ifaces.clone(),
                    links: links.clone(),
                    live: reloader.live(),
                },
                redispatch.next().flatten(),
            );
            core.l2 = shard_l2;
            core.host = host_links.next();
            let worker = Worker {
                me: s as u8,
                eps,
                ports: umems.clone(),
                to,
                from,
                stats: plane.stats[s].clone(),
                core,
                heartbeat: heartbeats.beat_for(s),
            };
            let cpu = if cfg.cpus.is_empty() {
                s % cpus
            } else {
                cfg.cpus[s % cfg.cpus.len()]
            };
            let core = core_ids.iter().find(|c| c.id == cpu).copied();
            let stop = stop.clone();
            let h = std::thread::Builder::new()
                .name(format!("ndx-shard-{s}"))
                .spawn(move || {
                    if let Some(c) = core {
                        core_affinity::set_for_current(c);
                    }
                    worker.run(&stop)
                })
                .map_err(StartError::Thread)?;
            workers.push(h);
        }
        host.set_shard_threads(workers.iter().map(|w| w.thread().clone()).collect());
        // Forwarding is on once every worker is in its loop: each first maps its CS memory
        // (`Shard::prefault`), and a frame received before would wait, or be dropped on a full
        // ring. A worker that ended already is reported when it is joined.
        while !heartbeats.all_started() && !workers.iter().any(|w| w.is_finished()) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // The control socket last: a client that sees it may rely on forwarding being on.
        let bound = if control {
            ControlServer::bind(&cfg.control_socket).map(Some)
        } else {
            Ok(None)
        };
        let control = match bound {
            Ok(c) => c,
            Err(source) => {
                stop.store(true, Ordering::Relaxed);
                for w in workers {
                    let _ = w.join();
                }
                return Err(StartError::Control {
                    path: cfg.control_socket.display().to_string(),
                    source,
                });
            }
        };
        let (command_tx, commands) = sync_channel(COMMAND_DEPTH);
        let mut router = Router {
            cfg,
            plane,
            stop,
            workers,
            events: ev_rx,
            control,
            commands,
            command_tx,
            attached,
            resolver,
            host,
            started: Instant::now(),
            links,
            heartbeats,
            reloader,
            reload: Arc::new(AtomicBool::new(false)),
            metrics,
            systemd: false,
        };
        router.check_links();
        Ok(router)
    }

    /// The flag that stops the router (set it from a signal handler).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// The flag that asks the control loop to reload the configuration file (set it from a
    /// SIGHUP handler; the library installs none). The outcome is logged.
    pub fn reload_flag(&self) -> Arc<AtomicBool> {
        self.reload.clone()
    }

    /// The file a reload reads when none is named (`ndx run -c FILE`), and `--shards`, which
    /// overrides `router.shards` in it as at start.
    pub fn set_config_file(&mut self, file: std::path::PathBuf, shards: Option<usize>) {
        self.reloader.file = Some(file);
        self.reloader.shards = shards;
    }

    /// Applies a new configuration to the running router: faces, configured routes,
    /// strategies and the live settings ([`crate::LIVE_KEYS`]); refuses, changing nothing, a
    /// configuration whose other keys differ (they need a restart) or that conflicts with
    /// faces made by command. Logs the outcome.
    pub fn reload(&mut self, cfg: Config) -> Result<crate::ReloadReport, crate::ReloadError> {
        let file = self.reloader.file.clone().unwrap_or_default();
        let r = self.reloader.reload(&mut self.plane, cfg, &file);
        crate::reload::log_outcome(&r);
        r
    }

    /// Reads `file` (or the file set with [`Router::set_config_file`]) and applies it as
    /// [`Router::reload`] does.
    pub fn reload_file(
        &mut self,
        file: Option<&std::path::Path>,
    ) -> Result<crate::ReloadReport, crate::ReloadError> {
        let r = self.reloader.reload_file(&mut self.plane, file);
        crate::reload::log_outcome(&r);
        r
    }

    /// A handle to control this router from any thread of the process (served by
    /// [`Router::run`]).
    pub fn handle(&self) -> Handle {
        Handle::new(self.command_tx.clone(), self.stop.clone(), self.host.bell())
    }

    /// Runs the control loop on a thread of its own (`ndx-control`); stop it with
    /// [`Running::stop`] (or [`Handle::stop`], then [`Running::stop`] for the report).
    pub fn spawn(mut self) -> Result<Running, StartError> {
        let handle = self.handle();
        let thread = std::thread::Builder::new()
            .name("ndx-control".into())
            .spawn(move || {
                self.run();
                self.shutdown()
            })
            .map_err(StartError::Thread)?;
        Ok(Running::new(handle, thread))
    }

    /// The control socket's path, when it is bound.
    pub fn control_socket(&self) -> Option<&std::path::Path> {
        self.control
            .as_ref()
            .map(|_| self.cfg.control_socket.as_path())
    }

    /// The app socket's path, when it is bound.
    pub fn app_socket(&self) -> Option<&std::path::Path> {
        self.host.socket()
    }

    /// Serves the requests of [`Handle`]s and, when it is time, of the control socket.
    fn serve_control(&mut self, socket: bool) {
        let attached = &self.attached;
        let (tx, stop) = (&self.command_tx, &self.stop);
        let reloader = &mut self.reloader;
        serve_commands_with(
            &self.commands,
            &mut self.plane,
            &mut self.host,
            &|host| Handle::new(tx.clone(), stop.clone(), host.bell()),
            &|host| status_extra(attached, host),
            &mut |plane, file| {
                let r = reloader.reload_file(plane, file.map(std::path::Path::new));
                crate::reload::log_outcome(&r);
                r.map(|rep| Response::Reloaded(rep.to_json()))
                    .map_err(|e| e.to_string())
            },
        );
        if socket && let Some(control) = self.control.as_mut() {
            let host = &self.host;
            let extra = || status_extra(attached, host);
            control.poll_with(&mut self.plane, &extra, &mut |plane, file| {
                reloader.handle(plane, file)
            });
        }
    }

    /// How each interface is attached, for the start-up banner.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "ndx: {} shard(s), dispatch {:?}, {}",
            self.cfg.shards,
            self.cfg.dispatch,
            match self.control_socket() {
                Some(p) => format!("control socket {}", p.display()),
                None => "no control socket".into(),
            }
        );
        for a in &self.attached {
            s.push_str(&format!(
                "\nndx: {} (ifindex {}, mtu {}): XDP {:?} mode{}",
                a.info.name,
                a.info.ifindex,
                a.info.mtu,
                a.mode,
                if a.frags {
                    ", multi-buffer (xdp.frags)"
                } else {
                    ""
                }
            ));
        }
        if let (Some(l2), Some(core)) = (&self.cfg.l2, &self.cfg.shard.l2) {
            s.push_str(&format!("\nndx: {}", l2.describe(core)));
        }
        match self.host.socket() {
            Some(p) => s.push_str(&format!(
                "\nndx: app socket {} (NFD management on /localhost/nfd{})",
                p.display(),
                if self.cfg.app.localhop {
                    " and /localhop/nfd"
                } else {
                    ""
                }
            )),
            None => s.push_str("\nndx: no app socket ([app] socket = \"\")"),
        }
        s.push_str(&format!("\nndx: {}", memory_line(self.cfg.huge_pages)));
        if let Some(a) = self.metrics_addr() {
            s.push_str(&format!("\nndx: metrics on http://{a}/metrics"));
        }
        s
    }

    /// Where the metrics endpoint listens (`[metrics] listen`), if it is on.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().map(|m| m.local_addr())
    }

    /// What a scrape of the metrics endpoint shows ([`crate::metrics::Sample`]).
    fn metrics_sample(&self) -> crate::metrics::Sample {
        let mut s = crate::metrics::Sample::from_plane(&self.plane);
        s.host = self.host.counters();
        s.xdp = self
            .attached
            .iter()
            .filter_map(|a| Some((a.info.name.clone(), a.xdp.counters().ok()?)))
            .collect();
        s.interfaces = self
            .attached
            .iter()
            .map(|a| crate::metrics::InterfaceSample {
                name: a.info.name.clone(),
                up: a.state == LinkState::Up,
                link_down: a.downs,
                link_up: a.ups,
            })
            .collect();
        s.uptime = self.started.elapsed().as_secs_f64();
        s
    }

    /// Makes [`run`](Self::run) notify systemd (`$NOTIFY_SOCKET`: `READY=1` once every shard
    /// polls, `STATUS=`, `WATCHDOG=1` only while every shard makes progress, `STOPPING=1`).
    /// Off by default, so a program that embeds a router and is itself a `Type=notify`
    /// service keeps its own readiness; `ndx run` turns it on.
    pub fn notify_systemd(&mut self, on: bool) {
        self.systemd = on;
    }

    /// Runs the control loop until the stop flag is set.
    pub fn run(&mut self) {
        // READY=1 once every shard polls; WATCHDOG=1 only while every shard makes progress.
        let notifier = if self.systemd {
            crate::notify::Notifier::from_env()
        } else {
            None
        };
        let mut systemd = crate::watchdog::Supervisor::new(notifier, self.heartbeats.clone());
        let mut next_resolve = Instant::now();
        let mut next_control = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            // App sockets, kernel UDP, management and the shards' packets for host faces; it
            // sleeps in poll(2) up to 2 ms when there is nothing to do.
            self.host
                .turn(&mut self.plane, &self.events, Duration::from_millis(2));
            // Handles' requests every turn (a channel read); the control socket every 2 ms
            // (an accept(2) per loop turn would cost the app faces a syscall per turn under
            // load).
            let socket = Instant::now() >= next_control;
            self.serve_control(socket);
            if socket {
                if let Some(m) = &self.metrics {
                    m.answer(|| self.metrics_sample());
                }
                next_control = Instant::now() + Duration::from_millis(2);
            }
            if self.reload.swap(false, Ordering::Relaxed) {
                let _ = self.reload_file(None);
            }
            let mut changed = false;
            if Instant::now() >= next_resolve {
                self.check_links();
                changed |= self.resolve_faces();
                self.plane.expire_routes();
                self.plane.expire_idle_faces(Instant::now());
                next_resolve = Instant::now() + Duration::from_millis(200);
            }
            if changed {
                self.plane.faces.publish();
            }
            if self.workers.iter().any(|w| w.is_finished()) {
                tracing::error!("a shard worker stopped unexpectedly; shutting down");
                self.stop.store(true, Ordering::Relaxed);
            }
            systemd.turn(Instant::now(), || self.summary());
        }
        systemd.stopping();
    }

    /// One line for systemd's `STATUS=`: shards, faces and what went through.
    fn summary(&self) -> String {
        let mut t = Snapshot::default();
        for s in &self.plane.stats {
            t.accumulate(&s.read());
        }
        let get = |k| t.get(k).unwrap_or(0);
        format!(
            "forwarding: {} shard(s), {} face(s); {} frames in, {} out; {} Interests, {} Data, \
             {} CS hits",
            self.cfg.shards,
            self.plane.faces.table().len(),
            get("rx_frames"),
            get("tx_frames"),
            get("interests_in"),
            get("data_in"),
            get("cs_hits"),
        )
    }

    /// Reads every attached interface's link state (sysfs), logs and counts each change and
    /// tells the workers, which send nothing to an interface that is not up. A deleted
    /// interface stays gone: its sockets and XDP attachment died with it, and only a new
    /// `ndx run` attaches to an interface created again under its name.
    fn check_links(&mut self) {
        for a in &mut self.attached {
            if a.state == LinkState::Gone {
                continue;
            }
            let (state, why) = iface::link_state(&a.info.name, a.info.ifindex);
            if state == a.state {
                continue;
            }
            match state {
                LinkState::Up => {
                    a.ups += 1;
                    tracing::info!(
                        interface = %a.info.name,
                        "{}: link up; forwarding there again",
                        a.info.name
                    );
                }
                LinkState::Down => {
                    a.downs += 1;
                    tracing::warn!(
                        interface = %a.info.name,
                        "{}: link down ({why}); packets for it are dropped \
                         (tx_link_down) until it comes back",
                        a.info.name
                    );
                }
                LinkState::Gone => {
                    if a.state == LinkState::Up {
                        a.downs += 1;
                    }
                    tracing::warn!(
                        interface = %a.info.name,
                        "{}: interface {why}; packets for it are dropped (tx_link_down); \
                         forwarding continues on the others; restart ndx run to attach to it \
                         again",
                        a.info.name
                    );
                }
            }
            a.state = state;
            self.links.set(a.info.ifindex, state);
        }
    }

    /// Resolves the next hop of UDP faces that have none; true if any changed.
    fn resolve_faces(&mut self) -> bool {
        let ifindexes: Vec<u32> = self.attached.iter().map(|a| a.info.ifindex).collect();
        match self.resolver.as_mut() {
            Some(res) => resolve_udp_faces(res, &mut self.plane, &ifindexes, self.cfg.udp_ports[0]),
            None => false,
        }
    }

    /// Stops the workers, detaches XDP and removes the control socket; returns the final
    /// counters.
    pub fn shutdown(mut self) -> Report {
        self.stop.store(true, Ordering::Relaxed);
        let mut shards = Vec::new();
        for w in self.workers.drain(..) {
            shards.push(w.join().unwrap_or_default());
        }
        for a in &mut self.attached {
            if let Some(l) = a.link.take() {
                l.detach();
            }
        }
        self.host.close_socket();
        let mut total = Snapshot::default();
        for s in &shards {
            total.accumulate(s);
        }
        Report {
            total,
            shards,
            uptime: self.started.elapsed(),
        }
    }
}

impl Drop for Router {
    /// A router dropped without [`Router::shutdown`] still stops its workers and detaches
    /// its XDP programs (nothing is left once `shutdown` ran).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        for a in &mut self.attached {
            if let Some(l) = a.link.take() {
                l.detach();
            }
        }
    }
}

/// One [`Redispatch`] per shard (all `None` with a single shard, which reassembles itself).
pub(crate) fn redispatch_mesh(n: usize, dispatch: &Dispatch) -> Vec<Option<Redispatch>> {
    if n < 2 {
        return (0..n).map(|_| None).collect();
    }
    let mut inboxes = Vec::new();
    let mut senders = Vec::new();
    let mut returns = Vec::new();
    let mut back_senders = Vec::new();
    for _ in 0..n {
        let (tx, rx) = sync_channel::<Handoff>(4096);
        senders.push(tx);
        inboxes.push(rx);
        let (btx, brx) = sync_channel::<Vec<u8>>(1024);
        back_senders.push(btx);
        returns.push(brx);
    }
    inboxes
        .into_iter()
        .zip(returns)
        .enumerate()
        .map(|(me, (inbox, returned))| {
            Some(Redispatch {
                dispatch: dispatch.clone(),
                to: (0..n)
                    .map(|k| (k != me).then(|| senders[k].clone()))
                    .collect(),
                inbox,
                back: (0..n)
                    .map(|k| (k != me).then(|| back_senders[k].clone()))
                    .collect(),
                returned,
            })
        })
        .collect()
}

/// UDP faces whose next hop is not known yet.
fn unresolved_udp_faces(plane: &Plane) -> usize {
    plane
        .faces
        .table()
        .iter()
        .filter(|f| f.path.is_none() && matches!(f.link, Link::Udp(_)))
        .count()
}

/// Resolves the next hop (route, source address, neighbour MAC) of every UDP face that has
/// none and leaves through one of `ifindexes`; true if any face changed. Never blocks:
/// unresolved neighbours are triggered and retried on the next call.
fn resolve_udp_faces(res: &mut Resolver, plane: &mut Plane, ifindexes: &[u32], port: u16) -> bool {
    let todo: Vec<(ndx_core::FaceId, SocketAddr)> = plane
        .faces
        .table()
        .iter()
        .filter(|f| f.path.is_none())
        .filter_map(|f| match f.link {
            Link::Udp(a) => Some((f.id, a)),
            _ => None,
        })
        .collect();
    let mut changed = false;
    for (id, addr) in todo {
        if let Ok(Resolution::Ready(nh)) = res.resolve(addr.ip())
            && ifindexes.contains(&nh.ifindex)
        {
            let path = L2Path {
                ifindex: nh.ifindex,
                src_mac: nh.src_mac,
                dst_mac: nh.dst_mac,
                src: nh.src_ip.map(|ip| SocketAddr::new(ip, port)),
            };
            changed |= plane.faces.set_path(id, Some(path)).is_ok();
        }
    }
    changed
}

/// Answers a `reload` request of a [`Handle`], given its file.
pub(crate) type ReloadHook<'a> =
    dyn FnMut(&mut Plane, Option<&str>) -> Result<Response, String> + 'a;

/// Carries out the commands waiting from [`Handle`]s (requests through
/// [`crate::control::execute`], as the control socket's; app faces through the host),
/// answering each, `reload` requests with `reload` (given the request's file); the FIB is
/// published once for all of them.
pub(crate) fn serve_commands_with(
    commands: &Receiver<Command>,
    plane: &mut Plane,
    host: &mut crate::app::Host,
    handle: &dyn Fn(&crate::app::Host) -> Handle,
    extra: &dyn Fn(&crate::app::Host) -> Value,
    reload: &mut ReloadHook<'_>,
) {
    let mut pending = commands.try_iter().take(COMMAND_DEPTH).peekable();
    if pending.peek().is_none() {
        return;
    }
    plane.begin_batch();
    for c in pending {
        match c {
            Command::Request(crate::protocol::Request::Reload { file }, reply) => {
                let _ = reply.send(reload(plane, file.as_deref()));
            }
            Command::Request(req, reply) => {
                let _ = reply.send(crate::control::execute(plane, &req, &|| extra(host)));
            }
            Command::AttachApp(prefixes, reply) => {
                let r = host.attach_local(plane).and_then(|link| {
                    let face = link.face;
                    let app = AppFace::new(link, handle(host));
                    for p in &prefixes {
                        register_app_prefix(plane, face, p)?;
                    }
                    Ok(app)
                });
                let _ = reply.send(r);
            }
            Command::Register {
                face,
                prefix,
                reply,
            } => {
                let _ = reply.send(register_app_prefix(plane, face, &prefix));
            }
        }
    }
    plane.end_batch();
}

/// What `status` adds to the control plane's document: the XDP counters, the host thread's
/// counters and the interfaces.
fn status_extra(attached: &[Attached], host: &crate::app::Host) -> Value {
    json!({
        "xdp": xdp_counters(attached),
        "host": host.status(),
        "interfaces": interfaces_json(attached),
    })
}

/// Registers `prefix` (origin app, no expiry) on an in-process app's face.
fn register_app_prefix(
    plane: &mut Plane,
    face: ndx_core::FaceId,
    prefix: &str,
) -> Result<(), String> {
    let name =
        ndx_codec::NameBuf::from_uri(prefix).map_err(|e| format!("prefix {prefix:?}: {e}"))?;
    let route = crate::rib::Route {
        face,
        origin: crate::rib::origin::APP,
        cost: 0,
        flags: crate::rib::CHILD_INHERIT,
        expires: None,
    };
    plane.register(&name, route).map_err(|e| e.to_string())
}

/// The attached interfaces with their link states and changes, as JSON.
fn interfaces_json(attached: &[Attached]) -> Value {
    Value::Array(
        attached
            .iter()
            .map(|a| {
                json!({
                    "name": a.info.name,
                    "ifindex": a.info.ifindex,
                    "state": a.state.name(),
                    "link_down": a.downs,
                    "link_up": a.ups,
                })
            })
            .collect(),
    )
}

/// The XDP programs' counters, summed over interfaces, as JSON.
fn xdp_counters(attached: &[Attached]) -> Value {
    let mut sum: HashMap<&'static str, u64> = HashMap::new();
    let mut order = Vec::new();
    for a in attached {
        if let Ok(c) = a.xdp.counters() {
            for (k, v) in c.iter() {
                if !sum.contains_key(k) {
                    order.push(k);
                }
                *sum.entry(k).or_default() += v;
            }
        }
    }
    let mut m = serde_json::Map::new();
    for k in order {
        m.insert(k.to_string(), json!(sum[k]));
    }
    Value::Object(m)
}

/// One banner line on the tables' memory: mapped by the huge-page allocator, and how much of
/// the process the kernel backs with huge pages (0 when `ndx_mem::HugePages` is not the
/// global allocator, as in library tests).
fn memory_line(huge_pages: bool) -> String {
    let mode = ndx_mem::thp_mode().unwrap_or_else(|| "absent".into());
    let mapped = ndx_mem::mapped_bytes() >> 20;
    let huge = ndx_mem::huge_bytes().unwrap_or(0) >> 20;
    if !huge_pages {
        return format!("tables: {mapped} MiB, huge pages off (tables.huge_pages = false)");
    }
    let hint = match mode.as_str() {
        "never" => {
            " (THP is off in the kernel: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled)"
        }
        _ => "",
    };
    format!("tables: {mapped} MiB, {huge} MiB of the process on huge pages, THP {mode}{hint}")
}
