//! [`Builder`]: a router's configuration from code, from a file or from a [`Config`].

use std::path::{Path, PathBuf};

use crate::config::{Config, ConfigError, FaceConfig, InterfaceConfig, MAX_SHARDS, Remote};
use crate::protocol::Strategy;
use crate::runtime::{Router, StartError};

/// Configures a router, then starts it ([`Builder::start`]).
///
/// [`Router::builder`] starts from the defaults of an empty configuration file, except that
/// neither the control socket nor the app socket is bound (an embedder opts in with
/// [`Builder::control_socket`] and [`Builder::app_socket`]); [`Builder::from_file`] and
/// [`Builder::from_config`] keep what the configuration says. Every setter can follow
/// either. Nothing is checked until [`Builder::config`] or [`Builder::start`], which refuse
/// what `ndx check` refuses, with the same messages where they overlap.
#[derive(Debug, Clone)]
pub struct Builder {
    cfg: Config,
    control: bool,
    /// Routes by face name, resolved when the configuration is built.
    routes: Vec<(String, String, u32)>,
    errors: Vec<(&'static str, String)>,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

/// The defaults of an empty configuration file.
fn defaults() -> Config {
    Config::parse("", Path::new("<builder>"))
        .unwrap_or_else(|_| unreachable!("the empty configuration is valid"))
}

impl Builder {
    /// The defaults, with no control socket and no app socket.
    pub fn new() -> Self {
        let mut cfg = defaults();
        cfg.app.socket = None;
        Self {
            cfg,
            control: false,
            routes: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Starts from a configuration file (its control and app sockets included).
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        Ok(Self::from_config(Config::load(path)?))
    }

    /// Starts from a checked configuration (its control and app sockets included).
    pub fn from_config(cfg: Config) -> Self {
        Self {
            cfg,
            control: true,
            routes: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Attaches to an interface (every queue, XDP mode auto, NDN over UDP and Ethernet: the
    /// defaults of an `[[interface]]` with only its name).
    pub fn interface(self, name: &str) -> Self {
        let text = format!("[[interface]]\nname = {}\n", toml_string(name));
        match Config::parse(&text, Path::new("<builder>")) {
            Ok(mut c) if c.interfaces.len() == 1 => {
                let i = c.interfaces.remove(0);
                self.interface_config(i)
            }
            Ok(_) => self.error("interface", format!("{name:?} not accepted")),
            Err(e) => self.error("interface", format!("{name:?}: {e}")),
        }
    }

    /// Attaches to an interface configured in full.
    pub fn interface_config(mut self, i: InterfaceConfig) -> Self {
        if self.cfg.interfaces.iter().any(|x| x.name == i.name) {
            return self.error("interface", format!("{:?} given twice", i.name));
        }
        self.cfg.interfaces.push(i);
        self
    }

    /// The number of shard workers (1 to 64, and at most the dispatch table's size).
    pub fn shards(mut self, n: usize) -> Self {
        if !(1..=MAX_SHARDS).contains(&n) || n > self.cfg.dispatch_table {
            return self.error(
                "router.shards",
                format!("{n}: between 1 and {MAX_SHARDS} (and at most router.dispatch_table)"),
            );
        }
        self.cfg.shards = n;
        self
    }

    /// The CPUs the shards are pinned to, in order (empty: shard `s` on CPU `s`).
    pub fn cpus(mut self, cpus: &[usize]) -> Self {
        self.cfg.cpus = cpus.to_vec();
        self
    }

    /// A face to a neighbour: `udp://IP:PORT`, `ether://MAC` (with `interface`) or
    /// `ether-multicast`.
    pub fn face(mut self, name: &str, remote: &str, interface: Option<&str>) -> Self {
        if name.is_empty() {
            return self.error("face", "a face needs a name".into());
        }
        if self.cfg.faces.iter().any(|f| f.name == name) {
            return self.error("face", format!("{name:?} given twice"));
        }
        let remote = match Remote::parse(remote) {
            Ok(r) => r,
            Err(e) => return self.error("face", format!("{name:?}: {e}")),
        };
        if matches!(remote, Remote::Ether(_)) && interface.is_none() {
            return self.error(
                "face",
                format!("{name:?}: an Ethernet face needs an interface"),
            );
        }
        if self.cfg.faces.iter().any(|f| f.remote == remote) {
            return self.error("face", format!("{name:?}: another face leads to {remote}"));
        }
        self.cfg.faces.push(FaceConfig {
            name: name.into(),
            remote,
            interface: interface.map(Into::into),
            local: false,
        });
        self
    }

    /// A route: `prefix` through the face named `face` (given with [`Builder::face`] or in
    /// the configuration), at `cost`.
    pub fn route(mut self, prefix: &str, face: &str, cost: u32) -> Self {
        self.routes.push((prefix.into(), face.into(), cost));
        self
    }

    /// The strategy of a prefix and below.
    pub fn strategy(mut self, prefix: &str, strategy: Strategy) -> Self {
        match ndx_codec::NameBuf::from_uri(prefix) {
            Ok(p) => self.cfg.strategies.push((p, strategy.into())),
            Err(e) => return self.error("strategy", format!("{prefix:?}: {e}")),
        }
        self
    }

    /// The NDN UDP ports (the first is the source port of what the router sends; default
    /// 6363).
    pub fn udp_ports(mut self, ports: &[u16]) -> Self {
        if ports.is_empty() || ports.contains(&0) {
            return self.error("router.udp_ports", "at least one, none 0".into());
        }
        self.cfg.udp_ports = ports.to_vec();
        self
    }

    /// Binds the control socket at `path` (`ndx status --socket PATH` talks to it), or not
    /// at all with `None`.
    pub fn control_socket(mut self, path: Option<PathBuf>) -> Self {
        self.control = path.is_some();
        if let Some(p) = path {
            self.cfg.control_socket = p;
        }
        self
    }

    /// Binds the app socket at `path` (NFD's `/run/nfd/nfd.sock` lets every NDN library
    /// connect), or not at all with `None`. In-process apps ([`crate::Handle::attach_app`])
    /// need no socket.
    pub fn app_socket(mut self, path: Option<PathBuf>) -> Self {
        self.cfg.app.socket = path;
        self
    }

    /// Kernel UDP sockets on the NDN ports for IP-fragmented datagrams (default on).
    pub fn udp_kernel_sockets(mut self, on: bool) -> Self {
        self.cfg.app.udp_fragments = on;
        self
    }

    /// Changes anything else in the configuration.
    pub fn with_config(mut self, f: impl FnOnce(&mut Config)) -> Self {
        f(&mut self.cfg);
        self
    }

    fn error(mut self, key: &'static str, why: String) -> Self {
        self.errors.push((key, why));
        self
    }

    /// The configuration [`Builder::start`] would start, with whether it binds the control
    /// socket; the first problem met otherwise.
    pub fn config(&self) -> Result<(Config, bool), ConfigError> {
        let invalid = |key: &str, why: String| ConfigError::Invalid {
            file: PathBuf::from("<builder>"),
            key: key.into(),
            why,
        };
        if let Some((key, why)) = self.errors.first() {
            return Err(invalid(key, why.clone()));
        }
        let mut cfg = self.cfg.clone();
        if cfg.interfaces.is_empty() {
            return Err(invalid(
                "interface",
                crate::config::NO_INTERFACE.to_string(),
            ));
        }
        for (prefix, face, cost) in &self.routes {
            let p = ndx_codec::NameBuf::from_uri(prefix)
                .map_err(|e| invalid("route", format!("{prefix:?}: {e}")))?;
            let i = cfg
                .faces
                .iter()
                .position(|f| &f.name == face)
                .ok_or_else(|| invalid("route", format!("{prefix}: no face named {face:?}")))?;
            cfg.routes.push(crate::config::RouteConfig {
                prefix: p,
                face: i,
                cost: *cost,
            });
        }
        Ok((cfg, self.control))
    }

    /// Starts the router ([`Router::start`] with this configuration).
    pub fn start(&self) -> Result<Router, StartError> {
        let (cfg, control) = self.config()?;
        Router::start_with(cfg, control)
    }
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builder_makes_the_configuration_a_file_would() {
        let (cfg, control) = Router::builder()
            .interface("veth0")
            .shards(2)
            .face("up", "udp://10.0.0.2:6363", None)
            .route("/a", "up", 5)
            .strategy("/a", Strategy::Multicast)
            .config()
            .unwrap();
        assert!(!control, "no control socket unless asked");
        assert_eq!(cfg.app.socket, None, "no app socket unless asked");
        let file = Config::parse(
            "[router]\nshards = 2\n[[interface]]\nname = \"veth0\"\n\
             [[face]]\nname = \"up\"\nremote = \"udp://10.0.0.2:6363\"\n\
             [[route]]\nprefix = \"/a\"\nface = \"up\"\ncost = 5\n\
             [[strategy]]\nprefix = \"/a\"\nstrategy = \"multicast\"\n",
            Path::new("t"),
        )
        .unwrap();
        assert_eq!(cfg.interfaces, file.interfaces);
        assert_eq!(cfg.faces, file.faces);
        assert_eq!(cfg.routes, file.routes);
        assert_eq!(cfg.strategies, file.strategies);
        assert_eq!(cfg.shards, 2);
        let (_, control) = Router::builder()
            .interface("veth0")
            .control_socket(Some("/tmp/x.sock".into()))
            .config()
            .unwrap();
        assert!(control);
    }

    #[test]
    fn a_builder_refuses_bad_settings_with_their_name() {
        let err = |b: Builder| b.config().unwrap_err().to_string();
        let e = err(Router::builder());
        assert!(e.contains("no [[interface]]"), "{e}");
        let e = err(Router::builder().interface("a").shards(0));
        assert!(e.contains("router.shards: 0"), "{e}");
        let e = err(Router::builder()
            .interface("a")
            .face("x", "tcp://1.2.3.4", None));
        assert!(e.contains("face: \"x\"") && e.contains("udp://"), "{e}");
        let e = err(Router::builder().interface("a").route("/a", "nope", 1));
        assert!(e.contains("no face named \"nope\""), "{e}");
        let e = err(Router::builder()
            .interface("a")
            .face("x", "udp://10.0.0.1:6363", None)
            .face("y", "udp://10.0.0.1:6363", None));
        assert!(e.contains("another face"), "{e}");
        let e = err(Router::builder().interface("a").interface("a"));
        assert!(e.contains("given twice"), "{e}");
        let e = err(Router::builder()
            .interface("a")
            .face("e", "ether://02:00:00:00:00:01", None));
        assert!(e.contains("needs an interface"), "{e}");
        // Starting reports the same, before touching the system.
        let e = Router::builder().start().unwrap_err();
        assert!(e.to_string().contains("no [[interface]]"), "{e}");
    }

    #[test]
    fn a_file_keeps_its_sockets() {
        let dir = std::env::temp_dir().join(format!("ndx-builder-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ndx.toml");
        std::fs::write(
            &path,
            "[router]\ncontrol_socket = \"/tmp/c.sock\"\n[[interface]]\nname = \"eth9\"\n",
        )
        .unwrap();
        let (cfg, control) = Builder::from_file(&path)
            .unwrap()
            .shards(1)
            .config()
            .unwrap();
        assert!(control);
        assert_eq!(cfg.control_socket, PathBuf::from("/tmp/c.sock"));
        assert_eq!(cfg.interfaces[0].name, "eth9");
        assert!(cfg.app.socket.is_some());
        let e = Builder::from_file(&dir.join("missing.toml")).unwrap_err();
        assert!(e.to_string().contains("missing.toml"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
