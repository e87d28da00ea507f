//! The front end's TOML configuration: parsing, defaults and validation.
//!
//! Every key is documented in `configs/lb.toml`. Parsing refuses unknown keys (a typo must not
//! silently fall back to a default); validation then checks what types cannot express and
//! reports the key and the reason, e.g. `lb.toml: router[1].port: 6371 is router "ir1"'s
//! already`.

use std::collections::HashSet;
use std::fmt;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cluster::{
    MAX_ROUTERS, RouterSpec, check_name, check_unicast, check_weight, parse_ipv4,
};

/// Fewest and most hash-space cells (`lb.table`, a power of two).
pub const TABLE_RANGE: std::ops::RangeInclusive<u32> = 64..=65536;

/// Fewest and most NDNLPv2 fragment entries (`lb.fragment_entries`).
pub const FRAGMENT_RANGE: std::ops::RangeInclusive<u32> = 1024..=1_048_576;

/// A configuration error: which file, which key, and why.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not valid TOML, has an unknown key, or a value of the wrong type.
    #[error("{}{message}", prefix(file))]
    Syntax {
        /// The file (empty for [`LbConfig::from_toml`]).
        file: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A value is out of range or inconsistent with another.
    #[error("{}{key}: {why}", prefix(file))]
    Invalid {
        /// The file (empty for [`LbConfig::from_toml`]).
        file: PathBuf,
        /// The key, as a path (`router[1].port`).
        key: String,
        /// Why it is refused.
        why: String,
    },
}

fn prefix(file: &Path) -> String {
    if file.as_os_str().is_empty() {
        String::new()
    } else {
        format!("{}: ", file.display())
    }
}

/// What the load balancer hashes of an Interest's name to choose its router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum HashMode {
    /// The whole name (the paper's NAME HASH): every segment may go to another router.
    Name,
    /// The first `K` components: everything under one prefix goes to one router.
    Prefix(u32),
    /// The name without its Segment component plus segment / `B`: `B` consecutive segments
    /// of an object go to one router.
    Batch(u32),
}

impl fmt::Display for HashMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HashMode::Name => f.write_str("name"),
            HashMode::Prefix(k) => write!(f, "prefix:{k}"),
            HashMode::Batch(b) => write!(f, "batch:{b}"),
        }
    }
}

impl FromStr for HashMode {
    type Err = String;

    /// `name`, `prefix:K` or `batch:B` (K, B >= 1), as [`HashMode`]'s `Display` writes it.
    fn from_str(s: &str) -> Result<Self, String> {
        let (mode, arg) = s.split_once(':').unwrap_or((s, ""));
        let num = || match arg.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!(
                "{s:?}: {mode} needs a number >= 1, e.g. \"{mode}:4\""
            )),
        };
        match mode {
            "name" if arg.is_empty() => Ok(HashMode::Name),
            "prefix" => num().map(HashMode::Prefix),
            "batch" => num().map(HashMode::Batch),
            _ => Err(format!(
                "{s:?}: expected \"name\", \"prefix:K\" or \"batch:B\""
            )),
        }
    }
}

impl From<HashMode> for String {
    fn from(m: HashMode) -> String {
        m.to_string()
    }
}

impl TryFrom<String> for HashMode {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// How the XDP program is attached to the interfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum XdpMode {
    /// Driver (native) mode where the driver supports it, generic (skb) mode otherwise.
    Auto,
    /// Driver (native) mode only: attaching fails where the driver lacks it.
    Driver,
    /// Generic (skb) mode: works everywhere, slower.
    Skb,
}

impl fmt::Display for XdpMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            XdpMode::Auto => "auto",
            XdpMode::Driver => "driver",
            XdpMode::Skb => "skb",
        })
    }
}

/// The checked configuration of a front end.
#[derive(Debug, Clone, PartialEq)]
pub struct LbConfig {
    /// Interfaces the XDP program is attached to (external and internal sides), non-empty,
    /// distinct.
    pub interfaces: Vec<String>,
    /// The well-known IPv4 addresses (VIPs); empty: every IPv4 address of `interfaces`,
    /// resolved by the runner.
    pub addresses: Vec<Ipv4Addr>,
    /// The well-known NDN UDP port.
    pub port: u16,
    /// What is hashed of a name.
    pub hash: HashMode,
    /// The 128-bit SipHash key, as two halves (drawn from the OS when `hash_key = "random"`).
    pub hash_key: (u64, u64),
    /// Whether `hash_key` was drawn at random.
    pub hash_key_random: bool,
    /// Hash-space cells: a power of two in [`TABLE_RANGE`].
    pub table: u32,
    /// Scale-in stage 2 delay: how long a removed router keeps its PORT MAP entry.
    pub drain: Duration,
    /// The control socket.
    pub control_socket: PathBuf,
    /// How the XDP program is attached.
    pub xdp_mode: XdpMode,
    /// Soft-state entries for NDNLPv2 fragments, in [`FRAGMENT_RANGE`].
    pub fragment_entries: u32,
    /// The internal routers at start (names and ports distinct, ports not `port`).
    pub routers: Vec<RouterSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    lb: RawLb,
    #[serde(default)]
    router: Vec<RawRouter>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLb {
    interfaces: Vec<String>,
    #[serde(default)]
    addresses: Vec<String>,
    #[serde(default = "default_port")]
    port: u32,
    #[serde(default = "default_hash")]
    hash: String,
    #[serde(default)]
    hash_param: u32,
    #[serde(default = "default_hash_key")]
    hash_key: String,
    #[serde(default = "default_table")]
    table: u32,
    #[serde(default = "default_drain_ms")]
    drain_ms: u64,
    #[serde(default = "default_control_socket")]
    control_socket: PathBuf,
    #[serde(default = "default_xdp_mode")]
    xdp_mode: String,
    #[serde(default = "default_fragment_entries")]
    fragment_entries: u32,
}

fn default_port() -> u32 {
    6363
}
fn default_hash() -> String {
    "name".into()
}
fn default_hash_key() -> String {
    "random".into()
}
fn default_table() -> u32 {
    4096
}
/// The shortest scale-in drain accepted, in ms.
pub const MIN_DRAIN_MS: u64 = 100;

fn default_drain_ms() -> u64 {
    10_000
}
fn default_control_socket() -> PathBuf {
    PathBuf::from("/run/ndx/lb.sock")
}
fn default_xdp_mode() -> String {
    "auto".into()
}
fn default_fragment_entries() -> u32 {
    16384
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRouter {
    name: String,
    address: String,
    port: u32,
    #[serde(default = "default_weight")]
    weight: u32,
}

fn default_weight() -> u32 {
    1
}

type Check<T> = Result<T, (String, String)>;

fn bad<T>(key: impl Into<String>, why: impl Into<String>) -> Check<T> {
    Err((key.into(), why.into()))
}

impl LbConfig {
    /// Reads and checks a configuration file; errors start with the file's name.
    pub fn load(path: &Path) -> Result<LbConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            file: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses and checks configuration text (errors name the key, without a file).
    pub fn from_toml(text: &str) -> Result<LbConfig, ConfigError> {
        Self::parse(text, Path::new(""))
    }

    fn parse(text: &str, file: &Path) -> Result<LbConfig, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            file: file.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        raw.check().map_err(|(key, why)| ConfigError::Invalid {
            file: file.to_path_buf(),
            key,
            why,
        })
    }
}

/// Checks an interface name as the kernel would take it (1 to 15 bytes, no `/`, `:` or
/// white space).
fn check_interface(name: &str) -> Result<(), String> {
    let ok = (1..=15).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '/' && c != ':');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?}: not an interface name (1 to 15 characters, no '/', ':' or spaces)"
        ))
    }
}

impl RawConfig {
    fn check(self) -> Check<LbConfig> {
        let l = self.lb;
        if l.interfaces.is_empty() {
            return bad(
                "lb.interfaces",
                "empty: name the interfaces to attach to (external and internal sides)",
            );
        }
        let mut seen = HashSet::new();
        for (i, name) in l.interfaces.iter().enumerate() {
            check_interface(name).or_else(|e| bad(format!("lb.interfaces[{i}]"), e))?;
            if !seen.insert(name) {
                return bad(format!("lb.interfaces[{i}]"), format!("{name:?} twice"));
            }
        }
        let mut addresses = Vec::new();
        for (i, a) in l.addresses.iter().enumerate() {
            let key = format!("lb.addresses[{i}]");
            let a = parse_ipv4(a).or_else(|e| bad(&key, e))?;
            check_unicast(a).or_else(|e| bad(&key, e))?;
            if addresses.contains(&a) {
                return bad(key, format!("{a} twice"));
            }
            addresses.push(a);
        }
        let port = match u16::try_from(l.port) {
            Ok(p) if p != 0 => p,
            _ => return bad("lb.port", format!("{}: between 1 and 65535", l.port)),
        };
        let hash = match (l.hash.as_str(), l.hash_param) {
            ("name", 0) => HashMode::Name,
            ("name", k) => {
                return bad(
                    "lb.hash_param",
                    format!("{k}: hash = \"name\" takes no parameter (leave hash_param at 0)"),
                );
            }
            ("prefix" | "batch", 0) => {
                return bad(
                    "lb.hash_param",
                    format!(
                        "0: hash = {:?} needs hash_param >= 1 ({})",
                        l.hash,
                        if l.hash == "prefix" {
                            "the number of leading components hashed"
                        } else {
                            "the number of consecutive segments sent to one router"
                        }
                    ),
                );
            }
            ("prefix", k) => HashMode::Prefix(k),
            ("batch", b) => HashMode::Batch(b),
            (other, _) => {
                return bad(
                    "lb.hash",
                    format!("{other:?}: expected \"name\", \"prefix\" or \"batch\""),
                );
            }
        };
        let hash_key_random = l.hash_key == "random";
        let hash_key = parse_key(&l.hash_key).or_else(|e| bad("lb.hash_key", e))?;
        if !l.table.is_power_of_two() || !TABLE_RANGE.contains(&l.table) {
            return bad(
                "lb.table",
                format!(
                    "{}: a power of two between {} and {}",
                    l.table,
                    TABLE_RANGE.start(),
                    TABLE_RANGE.end()
                ),
            );
        }
        if l.control_socket.as_os_str().is_empty() {
            return bad("lb.control_socket", "empty: a path is needed");
        }
        let xdp_mode = match l.xdp_mode.as_str() {
            "auto" => XdpMode::Auto,
            "driver" => XdpMode::Driver,
            "skb" => XdpMode::Skb,
            other => {
                return bad(
                    "lb.xdp_mode",
                    format!("{other:?}: expected \"auto\", \"driver\" or \"skb\""),
                );
            }
        };
        if !FRAGMENT_RANGE.contains(&l.fragment_entries) {
            return bad(
                "lb.fragment_entries",
                format!(
                    "{}: between {} and {}",
                    l.fragment_entries,
                    FRAGMENT_RANGE.start(),
                    FRAGMENT_RANGE.end()
                ),
            );
        }
        if self.router.len() > MAX_ROUTERS {
            return bad(
                "router",
                format!(
                    "{} routers: a cluster holds at most {MAX_ROUTERS}",
                    self.router.len()
                ),
            );
        }
        let mut routers: Vec<RouterSpec> = Vec::with_capacity(self.router.len());
        for (i, r) in self.router.into_iter().enumerate() {
            let key = |k: &str| format!("router[{i}].{k}");
            check_name(&r.name).or_else(|e| bad(key("name"), e))?;
            if let Some(j) = routers.iter().position(|o| o.name == r.name) {
                return bad(
                    key("name"),
                    format!("{:?} is router[{j}]'s name already", r.name),
                );
            }
            let address = parse_ipv4(&r.address).or_else(|e| bad(key("address"), e))?;
            check_unicast(address).or_else(|e| bad(key("address"), e))?;
            let rport = match u16::try_from(r.port) {
                Ok(p) if p != 0 => p,
                _ => return bad(key("port"), format!("{}: between 1 and 65535", r.port)),
            };
            if rport == port {
                return bad(
                    key("port"),
                    format!("{rport} is lb.port, the well-known port: give the router its own"),
                );
            }
            if let Some(o) = routers.iter().find(|o| o.port == rport) {
                return bad(
                    key("port"),
                    format!(
                        "{rport} is router {:?}'s already (each router needs its own port)",
                        o.name
                    ),
                );
            }
            check_weight(r.weight).or_else(|e| bad(key("weight"), e))?;
            if addresses.contains(&address) {
                return bad(
                    key("address"),
                    format!("{address} is one of lb.addresses, the front end's own"),
                );
            }
            routers.push(RouterSpec {
                name: r.name,
                address,
                port: rport,
                weight: r.weight,
            });
        }
        if l.drain_ms < MIN_DRAIN_MS {
            return bad(
                "lb.drain_ms",
                format!(
                    "{} ms: at least {MIN_DRAIN_MS} (the Data answering a removed router's pending \
                     Interests arrive during the drain; make it the longest Interest lifetime)",
                    l.drain_ms
                ),
            );
        }
        Ok(LbConfig {
            interfaces: l.interfaces,
            addresses,
            port,
            hash,
            hash_key,
            hash_key_random,
            table: l.table,
            drain: Duration::from_millis(l.drain_ms),
            control_socket: l.control_socket,
            xdp_mode,
            fragment_entries: l.fragment_entries,
            routers,
        })
    }
}

/// `"random"` (drawn from the OS) or 32 hexadecimal digits, as two halves.
fn parse_key(s: &str) -> Result<(u64, u64), String> {
    if s == "random" {
        return random_key();
    }
    if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "{s:?}: expected \"random\" or 32 hexadecimal digits"
        ));
    }
    let k0 = u64::from_str_radix(&s[..16], 16).map_err(|e| e.to_string())?;
    let k1 = u64::from_str_radix(&s[16..], 16).map_err(|e| e.to_string())?;
    Ok((k0, k1))
}

fn random_key() -> Result<(u64, u64), String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| format!("\"random\": cannot read /dev/urandom: {e}"))?;
    let (lo, hi) = b.split_at(8);
    Ok((
        u64::from_le_bytes(lo.try_into().unwrap_or([0; 8])),
        u64::from_le_bytes(hi.try_into().unwrap_or([0; 8])),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = "[lb]\ninterfaces = [\"eth0\"]\n";

    fn err(extra: &str) -> String {
        LbConfig::from_toml(&format!("{MIN}{extra}"))
            .unwrap_err()
            .to_string()
    }

    fn router(name: &str, address: &str, port: u32) -> String {
        format!("[[router]]\nname = \"{name}\"\naddress = \"{address}\"\nport = {port}\n")
    }

    #[test]
    fn the_example_file_parses() {
        let c = LbConfig::from_toml(include_str!("../../../configs/lb.toml")).unwrap();
        assert_eq!(c.interfaces, ["eth0", "eth1"]);
        assert_eq!(c.port, 6363);
        assert_eq!(c.hash, HashMode::Name);
        assert!(c.hash_key_random);
        assert_eq!(c.table, 4096);
        assert_eq!(c.drain, Duration::from_secs(10));
        assert_eq!(c.xdp_mode, XdpMode::Auto);
        assert_eq!(c.fragment_entries, 16384);
        let names: Vec<_> = c.routers.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["ir1", "ir2", "ir3"]);
        for (i, r) in c.routers.iter().enumerate() {
            assert_eq!(r.address, Ipv4Addr::new(10, 3, i as u8 + 1, 2));
            assert_eq!(r.port, 6371 + i as u16);
            assert_eq!(r.weight, 1);
        }
    }

    #[test]
    fn minimal_file_gives_the_documented_defaults() {
        let c = LbConfig::from_toml(MIN).unwrap();
        assert_eq!(c.interfaces, ["eth0"]);
        assert!(c.addresses.is_empty() && c.routers.is_empty());
        assert_eq!(c.port, 6363);
        assert_eq!(c.hash, HashMode::Name);
        assert!(c.hash_key_random);
        assert_eq!(c.table, 4096);
        assert_eq!(c.drain, Duration::from_millis(10_000));
        assert_eq!(c.control_socket, Path::new("/run/ndx/lb.sock"));
        assert_eq!(c.xdp_mode, XdpMode::Auto);
        assert_eq!(c.fragment_entries, 16384);
    }

    #[test]
    fn every_key_is_read() {
        let c = LbConfig::from_toml(
            "[lb]\ninterfaces = [\"ens1f0\", \"ens1f1\"]\naddresses = [\"192.0.2.1\", \"192.0.2.9\"]\n\
             port = 7000\nhash = \"batch\"\nhash_param = 8\n\
             hash_key = \"000102030405060708090a0b0c0d0e0f\"\ntable = 64\ndrain_ms = 2500\n\
             control_socket = \"/tmp/lb.sock\"\nxdp_mode = \"skb\"\nfragment_entries = 1024\n\
             [[router]]\nname = \"a\"\naddress = \"10.0.0.2\"\nport = 7001\nweight = 0\n",
        )
        .unwrap();
        assert_eq!(
            c.addresses,
            [Ipv4Addr::new(192, 0, 2, 1), Ipv4Addr::new(192, 0, 2, 9)]
        );
        assert_eq!(c.port, 7000);
        assert_eq!(c.hash, HashMode::Batch(8));
        assert_eq!(c.hash_key, (0x0001020304050607, 0x08090a0b0c0d0e0f));
        assert!(!c.hash_key_random);
        assert_eq!(c.table, 64);
        assert_eq!(c.drain, Duration::from_millis(2500));
        assert_eq!(c.control_socket, Path::new("/tmp/lb.sock"));
        assert_eq!(c.xdp_mode, XdpMode::Skb);
        assert_eq!(c.fragment_entries, 1024);
        assert_eq!(c.routers[0].weight, 0);
        let p = LbConfig::from_toml(&format!("{MIN}hash = \"prefix\"\nhash_param = 2\n")).unwrap();
        assert_eq!(p.hash, HashMode::Prefix(2));
    }

    #[test]
    fn errors_name_the_key_and_reason() {
        assert!(
            LbConfig::from_toml("")
                .unwrap_err()
                .to_string()
                .contains("lb"),
            "[lb] is required"
        );
        assert!(
            LbConfig::from_toml("[lb]\n")
                .unwrap_err()
                .to_string()
                .contains("interfaces")
        );
        assert!(
            LbConfig::from_toml("[lb]\ninterfaces = []\n")
                .unwrap_err()
                .to_string()
                .starts_with("lb.interfaces: empty")
        );
        assert!(err("prot = 1\n").contains("unknown field `prot`"));
        assert!(
            err("[[router]]\nname = \"a\"\naddress = \"10.0.0.2\"\nport = 7\nwieght = 2\n")
                .contains("unknown field `wieght`")
        );
        assert!(err("port = 0\n").starts_with("lb.port: 0"));
        assert!(err("port = 70000\n").starts_with("lb.port: 70000"));
        assert!(err("hash = \"content\"\n").starts_with("lb.hash: \"content\""));
        assert!(err("hash = \"prefix\"\n").starts_with("lb.hash_param: 0"));
        assert!(err("hash = \"batch\"\n").contains("needs hash_param >= 1"));
        assert!(err("hash_param = 3\n").starts_with("lb.hash_param: 3"));
        assert!(err("hash_key = \"abc\"\n").starts_with("lb.hash_key"));
        assert!(err("table = 100\n").starts_with("lb.table: 100"));
        assert!(err("table = 32\n").starts_with("lb.table: 32"));
        assert!(err("table = 131072\n").starts_with("lb.table"));
        assert!(err("xdp_mode = \"native\"\n").starts_with("lb.xdp_mode"));
        assert!(err("fragment_entries = 10\n").starts_with("lb.fragment_entries: 10"));
        assert!(err("addresses = [\"fe80::1\"]\n").contains("IPv6 is not supported yet"));
        assert!(err("addresses = [\"1.2.3.4\", \"1.2.3.4\"]\n").starts_with("lb.addresses[1]"));
        assert!(err("addresses = [\"224.0.0.1\"]\n").contains("not a unicast"));
        let e = LbConfig::from_toml("[lb]\ninterfaces = [\"eth0\", \"eth0\"]\n").unwrap_err();
        assert!(e.to_string().starts_with("lb.interfaces[1]"), "{e}");
        let e = LbConfig::from_toml("[lb]\ninterfaces = [\"a/b\"]\n").unwrap_err();
        assert!(e.to_string().starts_with("lb.interfaces[0]"), "{e}");
    }

    #[test]
    fn router_errors_name_the_router() {
        let two = format!(
            "{}{}",
            router("ir1", "10.3.1.2", 6371),
            router("ir1", "10.3.2.2", 6372)
        );
        assert!(err(&two).starts_with("router[1].name: \"ir1\" is router[0]'s"));
        let two = format!(
            "{}{}",
            router("ir1", "10.3.1.2", 6371),
            router("ir2", "10.3.2.2", 6371)
        );
        assert_eq!(
            err(&two),
            "router[1].port: 6371 is router \"ir1\"'s already (each router needs its own port)"
        );
        assert!(
            err(&router("ir1", "10.3.1.2", 6363)).starts_with("router[0].port: 6363 is lb.port")
        );
        assert!(err(&router("ir1", "10.3.1.2", 0)).starts_with("router[0].port: 0"));
        assert!(err(&router("bad name", "10.3.1.2", 6371)).starts_with("router[0].name"));
        assert!(err(&router(&"x".repeat(33), "10.3.1.2", 6371)).starts_with("router[0].name"));
        assert_eq!(
            err(&router("ir1", "2001:db8::2", 6371)),
            "router[0].address: \"2001:db8::2\": IPv6 is not supported yet (an IPv4 address is needed)"
        );
        assert!(err(&router("ir1", "ten", 6371)).contains("not an IPv4 address"));
        assert!(
            err(&format!(
                "{}weight = 1001\n",
                router("ir1", "10.3.1.2", 6371)
            ))
            .starts_with("router[0].weight: 1001")
        );
        let many: String = (0..65)
            .map(|i| router(&format!("r{i}"), "10.0.0.2", 7000 + i))
            .collect();
        assert!(err(&many).starts_with("router: 65 routers"));
    }

    #[test]
    fn load_names_the_file() {
        let dir = std::env::temp_dir().join(format!("ndx-lb-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("lb.toml");
        std::fs::write(&file, "[lb]\ninterfaces = [\"eth0\"]\ntable = 3\n").unwrap();
        let e = LbConfig::load(&file).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: lb.table: 3: a power of two between 64 and 65536",
                file.display()
            )
        );
        std::fs::write(&file, MIN).unwrap();
        assert_eq!(LbConfig::load(&file).unwrap().interfaces, ["eth0"]);
        let missing = dir.join("none.toml");
        let e = LbConfig::load(&missing).unwrap_err().to_string();
        assert!(e.starts_with(&missing.display().to_string()), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn hash_modes_round_trip_as_text() {
        for m in [HashMode::Name, HashMode::Prefix(3), HashMode::Batch(16)] {
            assert_eq!(m.to_string().parse::<HashMode>(), Ok(m));
            let j = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<HashMode>(&j).unwrap(), m);
        }
        assert_eq!(
            serde_json::to_string(&HashMode::Batch(4)).unwrap(),
            "\"batch:4\""
        );
        assert!("prefix:0".parse::<HashMode>().is_err());
        assert!("name:2".parse::<HashMode>().is_err());
    }
}
