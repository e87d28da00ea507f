//! The datapath tests' topology: consumer namespace ── veth ── router namespace (running
//! `ndx run` on AF_XDP) ── veth ── producer namespace, plus helpers to start ndx with a
//! generated configuration, read its counters (`ndx status --json`) and run the ndx tools.
#![allow(dead_code, unreachable_pub)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Condvar, Mutex};

use serde_json::Value;

use crate::support::{Netns, Proc, Scratch, addr, veth, wait_for};

/// The ndx binary under test.
pub const NDX: &str = env!("CARGO_BIN_EXE_ndx");

/// A fixed name-hash key: runs are reproducible.
pub const HASH_KEY: &str = "000102030405060708090a0b0c0d0e0f";

/// Addressing of a [`Line`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// 10.0.1.0/24 (consumer side) and 10.0.2.0/24 (producer side).
    V4,
    /// fd00:1::/64 and fd00:2::/64.
    V6,
}

/// Routers running at once in this test process: ndx's shard workers busy-poll on pinned
/// CPUs, so a dozen parallel tests would starve each other on a 2-core machine. Each [`Line`]
/// holds one of `available_parallelism` slots (at least 2) and pins its router to the slot's
/// CPU.
static SLOTS: Mutex<Vec<bool>> = Mutex::new(Vec::new());
static FREED: Condvar = Condvar::new();

/// A CPU slot, given back on drop.
#[derive(Debug)]
pub struct Slot(pub usize);

impl Slot {
    fn take() -> Self {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        let mut slots = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
        if slots.is_empty() {
            slots.resize(n, false);
        }
        loop {
            if let Some(i) = slots.iter().position(|busy| !busy) {
                slots[i] = true;
                return Self(i);
            }
            slots = FREED.wait(slots).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut slots = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
        slots[self.0] = false;
        FREED.notify_all();
    }
}

/// consumer ── router ── producer, every link with `queues` queues.
///
/// Router interfaces are `c0` (towards the consumer) and `p0` (towards the producer); the end
/// hosts' interface is `eth0`.
#[derive(Debug)]
pub struct Line {
    pub family: Family,
    pub scratch: Scratch,
    pub c: Netns,
    pub r: Netns,
    pub p: Netns,
    /// Declared last: released after the namespaces (and the processes of the test) are gone.
    pub slot: Slot,
}

impl Line {
    /// Builds the three namespaces, the two veth pairs (MTU `mtu`) and their addresses.
    pub fn new(family: Family, queues: u32, mtu: u32) -> Self {
        Self::with_mtus(family, queues, mtu, mtu)
    }

    /// A line whose consumer link has MTU `consumer_mtu` and producer link `producer_mtu`.
    pub fn with_mtus(family: Family, queues: u32, consumer_mtu: u32, producer_mtu: u32) -> Self {
        let slot = Slot::take();
        let line = Self {
            slot,
            family,
            scratch: Scratch::new(),
            c: Netns::new("c"),
            r: Netns::new("r"),
            p: Netns::new("p"),
        };
        veth(&line.c, "eth0", &line.r, "c0", queues);
        veth(&line.r, "p0", &line.p, "eth0", queues);
        for (ns, i, mtu) in [
            (&line.c, "eth0", consumer_mtu),
            (&line.r, "c0", consumer_mtu),
            (&line.r, "p0", producer_mtu),
            (&line.p, "eth0", producer_mtu),
        ] {
            if mtu != 1500 {
                ns.run(&["ip", "link", "set", i, "mtu", &mtu.to_string()]);
            }
        }
        for (ns, i, side, host) in [
            (&line.c, "eth0", 1, 1),
            (&line.r, "c0", 1, 2),
            (&line.r, "p0", 2, 2),
            (&line.p, "eth0", 2, 1),
        ] {
            let cidr = match family {
                Family::V4 => format!("10.0.{side}.{host}/24"),
                Family::V6 => format!("fd00:{side}::{host}/64"),
            };
            addr(ns, i, &cidr);
        }
        line
    }

    /// An address of the topology: `side` 1 (consumer link) or 2 (producer link), `host` 1
    /// (end host) or 2 (router).
    pub fn ip(&self, side: u8, host: u8) -> String {
        match self.family {
            Family::V4 => format!("10.0.{side}.{host}"),
            Family::V6 => format!("fd00:{side}::{host}"),
        }
    }

    /// `IP:port` (bracketed for IPv6).
    pub fn endpoint(&self, side: u8, host: u8, port: u16) -> String {
        match self.family {
            Family::V4 => format!("{}:{port}", self.ip(side, host)),
            Family::V6 => format!("[{}]:{port}", self.ip(side, host)),
        }
    }

    /// The router's address on the consumer link, where consumers send to.
    pub fn router_target(&self) -> String {
        self.endpoint(1, 2, 6363)
    }

    /// The producer's UDP endpoint (port 6363).
    pub fn producer_endpoint(&self) -> String {
        self.endpoint(2, 1, 6363)
    }

    /// A file of `len` pseudo-random bytes (a fixed-seed xorshift: reproducible).
    pub fn content(&self, file: &str, len: usize, seed: u64) -> (PathBuf, Vec<u8>) {
        content_file(&self.scratch, file, len, seed)
    }

    /// The configuration of a router attached to `c0` and `p0` with one face `producer` at
    /// `producer_remote` routing `/t`, followed by `extra` TOML.
    pub fn config(&self, shards: u32, producer_remote: &str, extra: &str) -> String {
        format!(
            "[router]\nshards = {shards}\ncpus = [{cpus}]\ncontrol_socket = \"{sock}\"\nhash_key = \"{HASH_KEY}\"\n\
             {extra}\n\
             [[interface]]\nname = \"c0\"\n[[interface]]\nname = \"p0\"\n\
             [[face]]\nname = \"producer\"\nremote = \"{producer_remote}\"\n{iface}\
             [[route]]\nprefix = \"/t\"\nface = \"producer\"\n{app}",
            sock = self.scratch.path("ndx.sock").display(),
            // Each router its own app socket (the default, NFD's path, is one per machine).
            app = if extra.contains("[app]") {
                String::new()
            } else {
                format!("[app]\nsocket = \"{}\"\n", self.app_socket().display())
            },
            cpus = (0..shards)
                .map(|i| ((self.slot.0 + i as usize) % ncpus()).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            iface = if producer_remote.starts_with("ether") {
                "interface = \"p0\"\n"
            } else {
                ""
            }
        )
    }

    /// [`Line::config`] with the face `producer` at the producer namespace's UDP endpoint.
    pub fn udp_config(&self, shards: u32, extra: &str) -> String {
        self.config(
            shards,
            &format!("udp://{}", self.producer_endpoint()),
            extra,
        )
    }

    /// Starts a one-shard router whose face `producer` is the producer namespace's UDP
    /// endpoint (routing `/t`), with `extra` TOML under `[router]`.
    pub fn start_udp_router(&self, extra: &str) -> Router {
        self.start_router(&self.udp_config(1, extra))
    }

    /// The router's app socket (where local applications connect).
    pub fn app_socket(&self) -> PathBuf {
        self.scratch.path("nfd.sock")
    }

    /// Starts `ndx run` in the router namespace with `config` and waits for its control
    /// socket.
    pub fn start_router(&self, config: &str) -> Router {
        // Resolve the producer's MAC address in the router namespace first: ndx learns next
        // hops from the kernel's neighbour table.
        let ping = if self.family == Family::V6 {
            "-6"
        } else {
            "-4"
        };
        let _ = self
            .r
            .try_run(&["ping", ping, "-c", "1", "-W", "5", &self.ip(2, 1)]);
        let cfg = self.scratch.path("ndx.toml");
        std::fs::write(&cfg, config).unwrap();
        let sock = self.scratch.path("ndx.sock");
        let log = self.scratch.path("ndx.log");
        let mut cmd = self.r.cmd(NDX);
        cmd.arg("run").arg("-c").arg(&cfg);
        Router::launch(cmd, sock, log, 30)
    }

    /// `ndx put PREFIX` serving `file` in the producer namespace on port 6363 (more arguments
    /// in `extra`).
    pub fn put(&self, prefix: &str, file: &Path, extra: &[&str]) -> Proc {
        let log = self
            .scratch
            .path(&format!("put-{}.log", crate::support::tag()));
        let mut cmd = self.p.cmd(NDX);
        cmd.args(["put", prefix, "-i"])
            .arg(file)
            .args(["-b", &self.producer_endpoint()])
            .args(extra);
        let p = spawn_logged(cmd, "ndx put", &log);
        // The producer's socket is open once it announces what it serves.
        let up = wait_for(20, || {
            std::fs::read_to_string(&log).is_ok_and(|s| s.contains("serving"))
        });
        assert!(up, "ndx put did not start: {}", read(&log));
        p
    }

    /// Runs `ndx get PREFIX` in the consumer namespace through the router into `out`.
    pub fn get(&self, prefix: &str, out: &Path, extra: &[&str]) -> Output {
        self.get_cmd(prefix, out, extra)
            .output()
            .expect("ndx get runs")
    }

    /// The `ndx get` command of [`Line::get`], to spawn.
    pub fn get_cmd(&self, prefix: &str, out: &Path, extra: &[&str]) -> Command {
        let mut cmd = self.c.cmd(NDX);
        cmd.args(["get", prefix, "-t", &self.router_target(), "-o"])
            .arg(out)
            .args(["--no-progress", "--max-cwnd", "32"]);
        if !extra.contains(&"--discovery-retries") {
            // Generous on a loaded machine.
            cmd.args(["--discovery-retries", "8"]);
        }
        cmd.args(extra);
        cmd
    }
}

/// A file `file` of `len` pseudo-random bytes in `scratch` (a fixed-seed xorshift:
/// reproducible), and its bytes.
pub fn content_file(scratch: &Scratch, file: &str, len: usize, seed: u64) -> (PathBuf, Vec<u8>) {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    let p = scratch.path(file);
    std::fs::write(&p, &data).unwrap();
    (p, data)
}

/// CPUs of this machine.
fn ncpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Spawns `cmd` with stdout and stderr appended to `log`.
pub fn spawn_logged(mut cmd: Command, what: &str, log: &Path) -> Proc {
    let f = File::create(log).unwrap();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(f.try_clone().unwrap())
        .stderr(f)
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    Proc {
        child: Some(child),
        what: what.into(),
    }
}

/// A file's text, or an empty string.
pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Asserts a command succeeded, showing its output otherwise.
pub fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A running `ndx run`.
#[derive(Debug)]
pub struct Router {
    pub proc: Proc,
    pub sock: PathBuf,
    pub log: PathBuf,
}

impl Router {
    /// Spawns `cmd` (an `ndx run`) logging to `log` and waits (up to `secs`) until it answers
    /// on its control socket `sock`; panics with its log when it does not.
    pub fn launch(cmd: Command, sock: PathBuf, log: PathBuf, secs: u64) -> Router {
        let router = Router {
            proc: spawn_logged(cmd, "ndx run", &log),
            sock,
            log,
        };
        // The control socket is bound before the XDP programs are attached; the first status
        // answer comes from the control loop, which runs once everything is attached.
        let up = wait_for(secs, || {
            router.exited() || (router.sock.exists() && router.try_status().is_some())
        });
        assert!(
            up && !router.exited(),
            "ndx run did not start:\n{}",
            router.log()
        );
        router
    }

    /// `ndx status -s` (the human-readable table); asserts it succeeded.
    pub fn status_table(&self) -> String {
        let out = Command::new(NDX)
            .args(["status", "-s"])
            .arg(&self.sock)
            .output()
            .expect("ndx status runs");
        ok(&out, "ndx status");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stops it with SIGINT and asserts it exited cleanly; returns its log.
    pub fn stop_cleanly(self) -> String {
        let out = self.proc.stop("INT");
        let log = read(&self.log);
        assert!(
            out.status.success(),
            "ndx run exit on SIGINT: {:?}\n{log}",
            out.status
        );
        log
    }
    /// `ndx status --json`, or `None` when it fails.
    pub fn try_status(&self) -> Option<Value> {
        let out = Command::new(NDX)
            .args(["status", "--json", "-s"])
            .arg(&self.sock)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        serde_json::from_slice(&out.stdout).ok()
    }

    /// `ndx status --json`.
    pub fn status(&self) -> Value {
        let out = Command::new(NDX)
            .args(["status", "--json", "-s"])
            .arg(&self.sock)
            .output()
            .expect("ndx status runs");
        ok(&out, "ndx status");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "ndx status --json: not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    /// The face whose `key` (`name`, `remote`, `id`, ...) is `value` in `ndx status`.
    pub fn face(&self, key: &str, value: impl Into<Value>) -> Option<Value> {
        let value = value.into();
        self.status()["faces"]
            .as_array()?
            .iter()
            .find(|f| f[key] == value)
            .cloned()
    }

    /// `ndx route list --json`: `routes` (the FIB) and `rib`.
    pub fn routes(&self) -> Value {
        let out = Command::new(NDX)
            .args(["route", "list", "--json", "-s"])
            .arg(&self.sock)
            .output()
            .expect("ndx route list runs");
        ok(&out, "ndx route list");
        serde_json::from_slice(&out.stdout).expect("JSON")
    }

    /// `ndx` with a control subcommand (`face add ...`, `route add ...`).
    pub fn ctl(&self, args: &[&str]) {
        let out = Command::new(NDX)
            .args(args)
            .arg("-s")
            .arg(&self.sock)
            .output()
            .expect("ndx runs");
        ok(&out, &format!("ndx {args:?}"));
    }

    /// Like [`Router::ctl`], returning whether it succeeded.
    pub fn try_ctl(&self, args: &[&str]) -> bool {
        Command::new(NDX)
            .args(args)
            .arg("-s")
            .arg(&self.sock)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// What the router wrote so far.
    pub fn log(&self) -> String {
        read(&self.log)
    }

    /// Whether the router process has exited.
    pub fn exited(&self) -> bool {
        let pid = self.proc.pid();
        // A zombie still has /proc/PID; its state is Z.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |s| s.split_whitespace().nth(2) == Some("Z"))
    }

    /// Waits (up to 5 s: counters are published every few milliseconds) until `f` holds for
    /// the status, and returns the last status read.
    pub fn settle(&self, mut f: impl FnMut(&Value) -> bool) -> Value {
        let mut last = self.status();
        wait_for(5, || {
            last = self.status();
            f(&last)
        });
        last
    }
}

/// A total counter of a status.
pub fn total(status: &Value, name: &str) -> u64 {
    status["counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name} in {}", status["counters"]))
}

/// An XDP program counter of a status.
pub fn xdp(status: &Value, name: &str) -> u64 {
    status["xdp"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no XDP counter {name} in {}", status["xdp"]))
}

/// The shards' counter `name`, in shard order.
pub fn per_shard(status: &Value, name: &str) -> Vec<u64> {
    status["shards"]
        .as_array()
        .expect("shards array")
        .iter()
        .map(|s| shard_counter(s, name))
        .collect()
}

fn shard_counter(shard: &Value, name: &str) -> u64 {
    shard
        .get(name)
        .or_else(|| shard.get("counters").and_then(|c| c.get(name)))
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no counter {name} in shard {shard}"))
}

/// Whether `ip -n NS link show IF` shows an XDP program attached.
pub fn has_xdp(ns: &Netns, ifname: &str) -> bool {
    let out = ns.try_run(&["ip", "link", "show", ifname]);
    let text = String::from_utf8_lossy(&out.stdout);
    text.contains("xdp") || text.contains("prog/xdp")
}

/// Segments `ndx get` reported ("Fetched NAME (N segments, B bytes)").
pub fn get_segments(out: &Output) -> u64 {
    let text = String::from_utf8_lossy(&out.stderr);
    text.lines()
        .find(|l| l.starts_with("Fetched "))
        .and_then(|l| l.split('(').nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no segment count from ndx get: {text}"))
}

/// Interests `ndx get` sent again ("Retransmissions: N, ...").
pub fn get_retransmissions(out: &Output) -> u64 {
    let text = String::from_utf8_lossy(&out.stderr);
    text.lines()
        .find_map(|l| l.strip_prefix("Retransmissions: "))
        .and_then(|l| l.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no retransmission count from ndx get: {text}"))
}

/// (sent, satisfied, Nacks, timeouts) from `ndx gen`'s report ("Sent N Interests in T s: D
/// Data (S Interests satisfied), K Nacks, M timeouts").
pub fn gen_report(out: &Output) -> (u64, u64, u64, u64) {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("Sent "))
        .unwrap_or_else(|| panic!("no report from ndx gen: {text}"));
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .filter(|w| !w.is_empty() && !w.contains('.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(nums.len(), 5, "{line}");
    (nums[0], nums[2], nums[3], nums[4])
}

/// The face table of a status as lines (id, name, remote, origin), without the per-face load
/// counters, which move with the traffic.
pub fn face_table(status: &Value) -> Vec<String> {
    status["faces"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| format!("{} {} {} {}", f["id"], f["name"], f["remote"], f["origin"]))
        .collect()
}
