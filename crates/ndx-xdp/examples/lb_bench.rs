//! The cluster front end's XDP program (`bpf/lb.c`) alone: packets per second next to a
//! plain redirect program measured in the same run, and its cost per packet in ns.
//!
//! `cargo run --release -p ndx-xdp --example lb_bench -- --help`
//!
//! Everything runs in a throwaway network namespace: `c0` (the consumer side, the
//! well-known address 10.1.0.1/24; consumer 10.1.0.2, producer 10.1.0.3) and `r0` (10.3.1.1/24;
//! router 0 at 10.3.1.2:6371), veth pairs whose peers `c0p`/`r0p` carry `bench_sink` (restore
//! the frame's headers, count, XDP_DROP), static neighbours, forwarding on. Each program runs
//! under BPF_PROG_TEST_RUN with `BPF_F_TEST_XDP_LIVE_FRAMES`: every redirected frame really
//! crosses the veth and is dropped by the peer's program, on the same CPU, inside the timed
//! region. The reference programs are `bpf/bench/redirect_ref.c`, compiled here at run
//! time with clang. Needs root; prints `skipping: needs root` otherwise.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use aya::maps::{Array, MapData, PerCpuArray};
use aya::programs::{Xdp, XdpMode};
use aya::{Ebpf, EbpfLoader};
use ndx_codec::{DataRepr, Fragmenter, InterestRepr, LpHeaders, NameBuf};
use ndx_xdp::lb::{LbHash, LbXdp, LbXdpConfig};
use ndx_xdp::{BPF_F_TEST_XDP_LIVE_FRAMES, verdict, xdp_test_run_flags};

/// The reference programs' source, compiled at run time (never part of the router's build).
const REF_SRC: &str = include_str!("../bpf/bench/redirect_ref.c");
/// The checksum and SipHash helpers it shares with lb.c.
const UTIL_SRC: &str = include_str!("../bpf/util.h");

const USAGE: &str = "\
lb_bench: packets/s and ns/packet of the ndx lb XDP program (bpf/lb.c) next to a plain
redirect program, measured in the same run (BPF_PROG_TEST_RUN with live frames on veth).

usage: lb_bench [--repeat N] [--rounds N] [--batch N] [--cpu N|none] [--non-live]
                [--no-restore] [--no-stats]
  --repeat N     frames per measurement (default 5000000)
  --rounds N     interleaved rounds per case; medians are reported (default 5)
  --batch N      live-frames batch size, 1..=256 (default 0: the kernel's 64)
  --cpu N|none   pin to CPU N (default: the last CPU)
  --non-live     skip live frames: time every program with the plain BPF_PROG_TEST_RUN
  --no-restore   do not restore the frame's headers in the sink (shows why it is needed)
  --no-stats     skip the pass with kernel.bpf_stats (the programs' own run time)
  --cases LETTERS  only these cases (default abc; e.g. `--cases a` to profile one)
Needs root (prints `skipping: needs root` and exits 0 otherwise), clang, ip(8).";

const VIP: [u8; 4] = [10, 1, 0, 1];
const CONSUMER: [u8; 4] = [10, 1, 0, 2];
const PRODUCER: [u8; 4] = [10, 1, 0, 3];
const R0_ADDR: [u8; 4] = [10, 3, 1, 1];
const ROUTER: [u8; 4] = [10, 3, 1, 2];
const ROUTER_PORT: u16 = 6371;
/// The name-hash key of lb and ref_ndn.
const KEY: (u64, u64) = (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);
const PORT: u16 = 6363;
const MAC_C0: [u8; 6] = [2, 0, 0, 1, 0, 1];
const MAC_C0P: [u8; 6] = [2, 0, 0, 1, 0, 0xfe];
const MAC_R0: [u8; 6] = [2, 0, 0, 3, 1, 1];
const MAC_R0P: [u8; 6] = [2, 0, 0, 3, 1, 0xfe];
const MAC_CONSUMER: [u8; 6] = [2, 0, 0, 1, 0, 2];
const MAC_PRODUCER: [u8; 6] = [2, 0, 0, 1, 0, 3];
const MAC_ROUTER: [u8; 6] = [2, 0, 0, 3, 1, 2];
/// Bytes the sink and `bench_restore` write back (TMPL_LEN in redirect_ref.c).
const TMPL_LEN: usize = 42;

#[derive(Debug)]
struct Args {
    /// Online CPUs (before pinning).
    cpus: usize,
    repeat: u32,
    rounds: usize,
    batch: u32,
    cpu: Option<usize>,
    non_live: bool,
    restore: bool,
    stats: bool,
    /// Case letters to run (`a`, `b`, `c`).
    cases: String,
}

fn parse_args() -> Result<Option<Args>, String> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut a = Args {
        cpus,
        repeat: 5_000_000,
        rounds: 5,
        batch: 0,
        cpu: Some(cpus - 1),
        non_live: false,
        restore: true,
        stats: true,
        cases: "abc".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--repeat" => {
                a.repeat = value("--repeat")?
                    .parse()
                    .map_err(|e| format!("--repeat: {e}"))?;
            }
            "--rounds" => {
                a.rounds = value("--rounds")?
                    .parse()
                    .map_err(|e| format!("--rounds: {e}"))?;
            }
            "--batch" => {
                a.batch = value("--batch")?
                    .parse()
                    .map_err(|e| format!("--batch: {e}"))?;
            }
            "--cpu" => {
                let v = value("--cpu")?;
                a.cpu = if v == "none" {
                    None
                } else {
                    Some(v.parse().map_err(|e| format!("--cpu: {e}"))?)
                };
            }
            "--non-live" => a.non_live = true,
            "--no-restore" => a.restore = false,
            "--no-stats" => a.stats = false,
            "--cases" => {
                a.cases = value("--cases")?;
                if a.cases.is_empty() || !a.cases.chars().all(|c| "abc".contains(c)) {
                    return Err("--cases takes letters among a, b, c".into());
                }
            }
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
        }
    }
    if a.repeat == 0 || a.rounds == 0 || a.batch > 256 {
        return Err("--repeat and --rounds must be >= 1, --batch <= 256".into());
    }
    Ok(Some(a))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("lb_bench: {e}");
            return ExitCode::from(2);
        }
    };
    #[expect(unsafe_code, reason = "geteuid")]
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        println!("skipping: needs root");
        return ExitCode::SUCCESS;
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lb_bench: {e}");
            ExitCode::FAILURE
        }
    }
}

type Res<T> = Result<T, String>;

fn err<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// Runs a command; its stdout, or an error with its stderr.
fn sh(cmd: &str, args: &[&str]) -> Res<String> {
    let out = Command::new(cmd).args(args).output().map_err(err(cmd))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The throwaway namespace, deleted on drop.
struct Netns {
    name: String,
}

impl Netns {
    fn new() -> Res<Self> {
        let name = format!("ndx-lbbench-{}", std::process::id());
        sh("ip", &["netns", "add", &name])?;
        let ns = Self { name };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    fn ip(&self, args: &[&str]) -> Res<String> {
        let mut a = vec!["-n", self.name.as_str()];
        a.extend_from_slice(args);
        sh("ip", &a)
    }

    /// Moves the calling thread (the only one that touches BPF) into the namespace.
    fn enter(&self) -> Res<()> {
        let f = std::fs::File::open(format!("/run/netns/{}", self.name)).map_err(err("netns"))?;
        #[expect(unsafe_code, reason = "setns")]
        // SAFETY: setns on a valid namespace fd; affects only the calling thread.
        let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        if rc != 0 {
            return Err(format!("setns: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    fn ifindex(&self, dev: &str) -> Res<u32> {
        let line = self.ip(&["-o", "link", "show", "dev", dev])?;
        line.split(':')
            .next()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| format!("ifindex of {dev}: {line}"))
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

fn mac_str(m: [u8; 6]) -> String {
    m.map(|b| format!("{b:02x}")).join(":")
}

/// The front end's interfaces: returns (ifindex of c0, ifindex of r0, c0p, r0p).
fn setup(ns: &Netns) -> Res<[u32; 4]> {
    let links = [
        ("c0", MAC_C0, MAC_C0P, "10.1.0.1/24"),
        ("r0", MAC_R0, MAC_R0P, "10.3.1.1/24"),
    ];
    for (dev, mac, peer_mac, addr) in links {
        let peer = format!("{dev}p");
        ns.ip(&[
            "link",
            "add",
            "name",
            dev,
            "address",
            &mac_str(mac),
            "type",
            "veth",
            "peer",
            "name",
            &peer,
            "address",
            &mac_str(peer_mac),
        ])?;
        ns.ip(&["addr", "add", addr, "dev", dev])?;
        ns.ip(&["link", "set", "dev", dev, "up"])?;
        ns.ip(&["link", "set", "dev", &peer, "up"])?;
    }
    for (addr, mac, dev) in [
        (CONSUMER, MAC_CONSUMER, "c0"),
        (PRODUCER, MAC_PRODUCER, "c0"),
        (ROUTER, MAC_ROUTER, "r0"),
    ] {
        ns.ip(&[
            "neigh",
            "replace",
            &Ipv4Addr::from(addr).to_string(),
            "lladdr",
            &mac_str(mac),
            "dev",
            dev,
            "nud",
            "permanent",
        ])?;
    }
    sh(
        "ip",
        &[
            "netns",
            "exec",
            &ns.name,
            "sysctl",
            "-qw",
            "net.ipv4.conf.all.forwarding=1",
        ],
    )?;
    Ok([
        ns.ifindex("c0")?,
        ns.ifindex("r0")?,
        ns.ifindex("c0p")?,
        ns.ifindex("r0p")?,
    ])
}

/// Compiles redirect_ref.c like `cargo xtask bpf` compiles lb.c; the object's path.
fn compile_ref(dir: &Path) -> Res<PathBuf> {
    // The bpf/ layout: bench/redirect_ref.c includes ../util.h.
    std::fs::create_dir_all(dir.join("bench")).map_err(err("temp dir"))?;
    let src = dir.join("bench/redirect_ref.c");
    let obj = dir.join("redirect_ref.o");
    std::fs::write(&src, REF_SRC).map_err(err("write redirect_ref.c"))?;
    std::fs::write(dir.join("util.h"), UTIL_SRC).map_err(err("write util.h"))?;
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    let multiarch = format!("-I/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    let out = Command::new(&clang)
        .args([
            "-O2", "-g", "-target", "bpf", "-Wall", "-Werror", &multiarch, "-c",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .map_err(err("clang (needed for the reference program)"))?;
    if !out.status.success() {
        return Err(format!(
            "clang failed on redirect_ref.c:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(obj)
}

fn csum(data: &[u8], init: u32) -> u16 {
    let mut s = init;
    for c in data.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Ethernet + IPv4 + UDP (both checksums correct) around `payload`.
fn frame(
    dmac: [u8; 6],
    smac: [u8; 6],
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    payload: &[u8],
) -> Vec<u8> {
    let mut f = Vec::with_capacity(42 + payload.len());
    f.extend_from_slice(&dmac);
    f.extend_from_slice(&smac);
    f.extend_from_slice(&[8, 0]);
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&((28 + payload.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 1, 0x40, 0, 64, 17, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let c = csum(&ip, 0);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let ulen = (8 + payload.len()) as u16;
    let mut udp = Vec::with_capacity(ulen.into());
    udp.extend_from_slice(&sport.to_be_bytes());
    udp.extend_from_slice(&dport.to_be_bytes());
    udp.extend_from_slice(&ulen.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(payload);
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&src);
    pseudo.extend_from_slice(&dst);
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&ulen.to_be_bytes());
    let init = pseudo
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    let c = match csum(&udp, init) {
        0 => 0xffff,
        c => c,
    };
    udp[6..8].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&udp);
    f
}

/// One frame shape: what arrives where, and where it must leave.
struct Case {
    label: &'static str,
    frame: Vec<u8>,
    ingress: u32,
    egress: u32,
    /// The next hop the front end picks (the reference `ref_fib` looks it up).
    next_hop: [u8; 4],
    next_mac: [u8; 6],
    egress_mac: [u8; 6],
}

fn cases(c0: u32, r0: u32) -> Res<(Vec<Case>, Vec<u8>)> {
    let name = NameBuf::from_uri("/ndn/video/movie/v=1/seg=1234").map_err(err("name"))?;
    let interest = InterestRepr::new(name.clone())
        .to_vec()
        .map_err(err("interest"))?;
    // A 4000-byte Data in 1400-byte NDNLPv2 fragments (three of them).
    let data = DataRepr::new(name, vec![0x5a; 4000])
        .to_vec()
        .map_err(err("data"))?;
    let frag = Fragmenter::new(1400).map_err(err("fragmenter"))?;
    let mut it = frag
        .fragment(&data, &LpHeaders::default(), 1000)
        .map_err(err("fragment"))?;
    let mut frags = Vec::new();
    let mut buf = vec![0u8; 9000];
    while let Some(n) = it.next_into(&mut buf) {
        frags.push(buf[..n.map_err(err("fragment"))?].to_vec());
    }
    if frags.len() < 3 {
        return Err(format!("{} fragments, want >= 3", frags.len()));
    }
    let a = Case {
        label: "a Interest to VIP:6363 (NAME HASH)",
        frame: frame(MAC_C0, MAC_CONSUMER, CONSUMER, 40000, VIP, PORT, &interest),
        ingress: c0,
        egress: r0,
        next_hop: ROUTER,
        next_mac: MAC_ROUTER,
        egress_mac: MAC_R0,
    };
    let b = Case {
        label: "b Data frag 0/3 to VIP:6371 (PORT MAP)",
        frame: frame(
            MAC_C0,
            MAC_PRODUCER,
            PRODUCER,
            PORT,
            VIP,
            ROUTER_PORT,
            &frags[0],
        ),
        ingress: c0,
        egress: r0,
        next_hop: ROUTER,
        next_mac: MAC_ROUTER,
        egress_mac: MAC_R0,
    };
    let c = Case {
        label: "c Data frag 1/3 from router (SNAT)",
        frame: frame(
            MAC_R0,
            MAC_ROUTER,
            ROUTER,
            ROUTER_PORT,
            CONSUMER,
            40000,
            &frags[1],
        ),
        ingress: r0,
        egress: c0,
        next_hop: CONSUMER,
        next_mac: MAC_CONSUMER,
        egress_mac: MAC_C0,
    };
    // Fragment 0 from the router: seeds the soft state case c looks up.
    let seed = frame(
        MAC_R0,
        MAC_ROUTER,
        ROUTER,
        ROUTER_PORT,
        CONSUMER,
        40000,
        &frags[0],
    );
    Ok((vec![a, b, c], seed))
}

/// `struct ref_cfg` of redirect_ref.c.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct RefCfg {
    ifindex: u32,
    fib_dst: [u8; 4],
    dmac: [u8; 6],
    smac: [u8; 6],
    nat_addr: [u8; 4],
    nat_port: [u8; 2],
    pad: u16,
    pad2: u32,
    k0: u64,
    k1: u64,
}
#[expect(unsafe_code, reason = "aya's Pod marker is an unsafe trait")]
// SAFETY: repr(C), Copy, integers and byte arrays: 4 + 4 + 6 + 6 + 4 + 2 + 2 + 4 + 8 + 8 = 48
// bytes, every field at its natural alignment, no implicit padding.
unsafe impl aya::Pod for RefCfg {}
const _: () = assert!(size_of::<RefCfg>() == 48);

/// `struct tmpl` of redirect_ref.c.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Tmpl {
    on: u32,
    b: [u8; TMPL_LEN],
    pad: [u8; 2],
}
#[expect(unsafe_code, reason = "aya's Pod marker is an unsafe trait")]
// SAFETY: repr(C), Copy, an integer and byte arrays: 4 + 42 + 2 = 48 bytes, no padding.
unsafe impl aya::Pod for Tmpl {}

/// The reference object: its programs, the sink attached to both peers.
struct Refs {
    ebpf: Ebpf,
    cfg: Array<MapData, RefCfg>,
    tmpl: Array<MapData, Tmpl>,
    sunk: PerCpuArray<MapData, u64>,
    next: MapData,
}

const REF_PROGS: [&str; 7] = [
    "ref_redirect",
    "ref_fib",
    "ref_ndn",
    "ref_ndn_acct",
    "bench_sink",
    "bench_restore",
    "bench_nop",
];

impl Refs {
    fn load(obj: &Path, peers: [u32; 2]) -> Res<Self> {
        let mut ebpf = EbpfLoader::new()
            .load_file(obj)
            .map_err(err("load redirect_ref.o"))?;
        for name in REF_PROGS {
            let p: &mut Xdp = ebpf
                .program_mut(name)
                .ok_or(format!("{name} missing"))?
                .try_into()
                .map_err(err(name))?;
            p.load().map_err(|e| format!("{name}: {e:?}"))?;
        }
        let sink: &mut Xdp = ebpf
            .program_mut("bench_sink")
            .ok_or("bench_sink missing")?
            .try_into()
            .map_err(err("bench_sink"))?;
        for p in peers {
            sink.attach_to_if_index(p, XdpMode::Driver)
                .map_err(err("attach bench_sink (native XDP on veth)"))?;
        }
        let mut take = |n: &str| ebpf.take_map(n).ok_or(format!("map {n} missing"));
        let cfg = Array::try_from(take("ref_cfg")?).map_err(err("ref_cfg"))?;
        let tmpl = Array::try_from(take("bench_tmpl")?).map_err(err("bench_tmpl"))?;
        let sunk = PerCpuArray::try_from(take("bench_sunk")?).map_err(err("bench_sunk"))?;
        let next = match take("bench_next")? {
            aya::maps::Map::ProgramArray(m) => m,
            _ => return Err("bench_next is not a PROG_ARRAY".into()),
        };
        Ok(Self {
            ebpf,
            cfg,
            tmpl,
            sunk,
            next,
        })
    }

    fn fd(&self, name: &str) -> Res<BorrowedFd<'_>> {
        let p: &Xdp = self
            .ebpf
            .program(name)
            .ok_or(format!("{name} missing"))?
            .try_into()
            .map_err(err(name))?;
        Ok(p.fd().map_err(err(name))?.as_fd())
    }

    fn sunk(&self) -> Res<u64> {
        Ok(self
            .sunk
            .get(&0, 0)
            .map_err(err("bench_sunk"))?
            .iter()
            .sum())
    }

    fn set_case(&mut self, case: &Case, restore: bool) -> Res<()> {
        self.cfg
            .set(
                0,
                RefCfg {
                    ifindex: case.egress,
                    fib_dst: case.next_hop,
                    dmac: case.next_mac,
                    smac: case.egress_mac,
                    nat_addr: ROUTER,
                    nat_port: ROUTER_PORT.to_be_bytes(),
                    pad: 0,
                    pad2: 0,
                    k0: KEY.0,
                    k1: KEY.1,
                },
                0,
            )
            .map_err(err("ref_cfg"))?;
        let mut b = [0u8; TMPL_LEN];
        b.copy_from_slice(&case.frame[..TMPL_LEN]);
        self.tmpl
            .set(
                0,
                Tmpl {
                    on: restore.into(),
                    b,
                    pad: [0; 2],
                },
                0,
            )
            .map_err(err("bench_tmpl"))?;
        Ok(())
    }

    /// bench_next[0] = `prog` (any XDP program fd, here lb.c's too).
    fn set_next(&self, prog: BorrowedFd<'_>) -> Res<()> {
        map_update_u32(self.next.fd().as_fd(), 0, prog.as_raw_fd() as u32)
    }
}

/// BPF_MAP_UPDATE_ELEM of a u32 key and u32 value (a program fd into a PROG_ARRAY).
fn map_update_u32(map: BorrowedFd<'_>, key: u32, value: u32) -> Res<()> {
    #[repr(C)]
    struct Attr {
        map_fd: u32,
        pad: u32,
        key: u64,
        value: u64,
        flags: u64,
    }
    let attr = Attr {
        map_fd: map.as_raw_fd() as u32,
        pad: 0,
        key: (&raw const key) as u64,
        value: (&raw const value) as u64,
        flags: 0,
    };
    const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
    #[expect(unsafe_code, reason = "the bpf syscall")]
    // SAFETY: `attr` is a properly laid out bpf_attr for BPF_MAP_UPDATE_ELEM whose pointers
    // reference `key` and `value`, which outlive the synchronous syscall; the kernel only
    // reads them.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_MAP_UPDATE_ELEM,
            &raw const attr,
            size_of::<Attr>() as libc::c_uint,
        )
    };
    if rc < 0 {
        return Err(format!(
            "PROG_ARRAY update: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// `run_time_ns` and `run_cnt` of a program fd (/proc/self/fdinfo; counted while
/// kernel.bpf_stats is enabled).
fn run_stats(fd: BorrowedFd<'_>) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd()))
        .unwrap_or_default();
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (field("run_time_ns:"), field("run_cnt:"))
}

fn pin(cpu: usize) -> Res<()> {
    #[expect(unsafe_code, reason = "sched_setaffinity")]
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it (cpu is
    // checked against its capacity); sched_setaffinity reads `size_of` bytes from it.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= 8 * size_of::<libc::cpu_set_t>() {
            return Err(format!("cpu {cpu} out of range"));
        }
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &raw const set)
    };
    if rc != 0 {
        return Err(format!(
            "pin to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// The median (NaN for none).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The programs compared, in the order each round runs them (ref, lb, ref, lb, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prog {
    Ref,
    RefFib,
    RefNdn,
    RefNdnAcct,
    Lb,
}

impl Prog {
    const ALL: [Prog; 5] = [
        Prog::Ref,
        Prog::RefFib,
        Prog::RefNdn,
        Prog::RefNdnAcct,
        Prog::Lb,
    ];
    fn name(self) -> &'static str {
        match self {
            Prog::Ref => "ref_redirect",
            Prog::RefFib => "ref_fib",
            Prog::RefNdn => "ref_ndn",
            Prog::RefNdnAcct => "ref_ndn_acct",
            Prog::Lb => "lb (ndx_lb)",
        }
    }
}

/// Medians of one (case, program).
#[derive(Debug, Default, Clone)]
struct Row {
    pps: Vec<f64>,
    pps_by_round: Vec<f64>,
    kernel_ns: Vec<f64>,
    prog_ns: Option<f64>,
    nonlive_ns: Vec<f64>,
}

struct Bench<'a> {
    args: &'a Args,
    lb: LbXdp,
    refs: Refs,
}

impl Bench<'_> {
    fn fd(&self, p: Prog) -> Res<BorrowedFd<'_>> {
        match p {
            Prog::Ref => self.refs.fd("ref_redirect"),
            Prog::RefFib => self.refs.fd("ref_fib"),
            Prog::RefNdn => self.refs.fd("ref_ndn"),
            Prog::RefNdnAcct => self.refs.fd("ref_ndn_acct"),
            Prog::Lb => self.lb.program_fd().map_err(err("lb fd")),
        }
    }

    /// One live-frames measurement: (packets/s by the wall clock, the kernel's ns/packet).
    /// Checks that every frame reached the sink and, for lb, took the redirect path.
    fn live(&self, p: Prog, case: &Case) -> Res<(f64, f64)> {
        let repeat = self.args.repeat;
        let sunk0 = self.refs.sunk()?;
        let lb0 = self.lb.counters().map_err(err("lb counters"))?;
        let t = Instant::now();
        let (_, ns) = xdp_test_run_flags(
            self.fd(p)?,
            &case.frame,
            case.ingress,
            repeat,
            BPF_F_TEST_XDP_LIVE_FRAMES,
            self.args.batch,
        )
        .map_err(err("live-frames test run"))?;
        let wall = t.elapsed();
        let sunk = self.refs.sunk()? - sunk0;
        let hint = if self.args.restore {
            ""
        } else {
            " (--no-restore: recycled pages carry the previous run's rewritten headers)"
        };
        if p == Prog::Lb {
            let c = self.lb.counters().map_err(err("lb counters"))?;
            let redirected = c.redirected - lb0.redirected;
            if redirected != u64::from(repeat) {
                let delta: Vec<String> = c
                    .iter()
                    .zip(lb0.iter())
                    .filter(|((_, a), (_, b))| a != b)
                    .map(|((k, a), (_, b))| format!("{k} +{}", a - b))
                    .collect();
                return Err(format!(
                    "{}: lb redirected {redirected} of {repeat} frames ({}){hint}",
                    case.label,
                    delta.join(", "),
                ));
            }
        }
        if sunk < u64::from(repeat) * 999 / 1000 {
            return Err(format!(
                "{} / {}: only {sunk} of {repeat} frames reached the sink{hint}",
                case.label,
                p.name()
            ));
        }
        Ok((f64::from(repeat) / wall.as_secs_f64(), f64::from(ns)))
    }

    /// The non-live figure: `bench_restore` (restore the headers, tail call) into `p`,
    /// minus the same into `bench_nop`. ns per run.
    fn nonlive(&self, p: Prog, case: &Case) -> Res<f64> {
        let restore = self.refs.fd("bench_restore")?;
        let run = |target: BorrowedFd<'_>, want: u32| -> Res<f64> {
            self.refs.set_next(target)?;
            let (r, ns) =
                xdp_test_run_flags(restore, &case.frame, case.ingress, self.args.repeat, 0, 0)
                    .map_err(err("test run"))?;
            if r.verdict != want {
                return Err(format!(
                    "{} / {}: non-live verdict {} (want {want})",
                    case.label,
                    p.name(),
                    r.verdict
                ));
            }
            Ok(f64::from(ns))
        };
        let base = run(self.refs.fd("bench_nop")?, verdict::DROP)?;
        let with = run(self.fd(p)?, verdict::REDIRECT)?;
        Ok(with - base)
    }
}

fn run(args: &Args) -> Res<()> {
    let tmp = std::env::temp_dir().join(format!("ndx-lbbench-{}", std::process::id()));
    let obj = compile_ref(&tmp);
    let obj = match obj {
        Ok(o) => o,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    let ns = Netns::new()?;
    let [c0, r0, c0p, r0p] = setup(&ns)?;
    ns.enter()?;
    if let Some(cpu) = args.cpu {
        pin(cpu)?;
    }
    let refs = Refs::load(&obj, [c0p, r0p]);
    let _ = std::fs::remove_dir_all(&tmp);
    let refs = refs?;

    let cfg = LbXdpConfig {
        k0: KEY.0,
        k1: KEY.1,
        hash: LbHash::Name,
        table_len: 4096,
        port: PORT,
        fragment_entries: 16384,
        frags: false,
    };
    let mut lb = LbXdp::load(&cfg).map_err(err("load lb.c"))?;
    lb.set_router(0, Ipv4Addr::from(ROUTER), ROUTER_PORT, 0)
        .map_err(err("set_router"))?;
    lb.set_port(ROUTER_PORT, 0).map_err(err("set_port"))?;
    for cell in 0..cfg.table_len {
        lb.set_cell(cell, 0).map_err(err("set_cell"))?;
    }
    lb.add_vip(Ipv4Addr::from(VIP)).map_err(err("add_vip"))?;
    lb.set_ifaddr(c0, Ipv4Addr::from(VIP))
        .map_err(err("set_ifaddr"))?;
    lb.set_ifaddr(r0, Ipv4Addr::from(R0_ADDR))
        .map_err(err("set_ifaddr"))?;

    let (mut cases, seed) = cases(c0, r0)?;
    cases.retain(|c| args.cases.contains(&c.label[..1]));
    // Fragment 0 from the router: the soft state fragment 1 (case c) finds.
    let r = lb.test_run(&seed, r0).map_err(err("seed"))?;
    if r.verdict != verdict::REDIRECT {
        return Err(format!("seed fragment: verdict {}", r.verdict));
    }
    let mut bench = Bench { args, lb, refs };
    // Every program forwards every case (one plain run each).
    for case in &cases {
        bench.refs.set_case(case, args.restore)?;
        for p in Prog::ALL {
            let (r, _) = xdp_test_run_flags(bench.fd(p)?, &case.frame, case.ingress, 1, 0, 0)
                .map_err(err("test run"))?;
            if r.verdict != verdict::REDIRECT {
                return Err(format!(
                    "{} / {}: verdict {} instead of XDP_REDIRECT",
                    case.label,
                    p.name(),
                    r.verdict
                ));
            }
        }
    }

    // Live frames available? One short run tells.
    let mut live = !args.non_live;
    let mut live_note = String::new();
    if live {
        bench.refs.set_case(&cases[0], args.restore)?;
        if let Err(e) = xdp_test_run_flags(
            bench.fd(Prog::Ref)?,
            &cases[0].frame,
            cases[0].ingress,
            64,
            BPF_F_TEST_XDP_LIVE_FRAMES,
            args.batch,
        ) {
            live = false;
            live_note = format!(
                "live frames unavailable ({e}; needs kernel >= 5.18): non-live timing only"
            );
        }
    } else {
        live_note = "--non-live: live frames not used".into();
    }

    let mut rows: BTreeMap<(usize, Prog), Row> = BTreeMap::new();
    let mut raw_time_run: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for round in 0..args.rounds {
        for (ci, case) in cases.iter().enumerate() {
            bench.refs.set_case(case, args.restore)?;
            // ref, lb, ref, lb: the order alternates between rounds.
            let mut order = Prog::ALL;
            if round % 2 == 1 {
                order.reverse();
            }
            for p in order {
                let row = rows.entry((ci, p)).or_default();
                if live {
                    let (pps, kns) = bench.live(p, case)?;
                    row.pps.push(pps);
                    row.pps_by_round.push(pps);
                    row.kernel_ns.push(kns);
                }
                row.nonlive_ns.push(bench.nonlive(p, case)?);
            }
            // As asked for: LbXdp::time_run on the frame itself (see the note it prints).
            let ns = bench
                .lb
                .time_run(&case.frame, case.ingress, args.repeat)
                .map_err(err("time_run"))?;
            raw_time_run[ci].push(f64::from(ns));
        }
        eprintln!("round {}/{} done", round + 1, args.rounds);
    }

    // The programs' own run time (kernel.bpf_stats), one live pass each, outside the timed
    // rounds (the stats add two clock reads per run).
    let mut sink_ns = Vec::new();
    let mut notes = Vec::new();
    if args.stats && live {
        match aya::sys::enable_stats(aya::sys::Stats::RunTime) {
            Ok(_guard) => {
                for (ci, case) in cases.iter().enumerate() {
                    bench.refs.set_case(case, args.restore)?;
                    for p in Prog::ALL {
                        let fd = bench.fd(p)?;
                        let (t0, n0) = run_stats(fd);
                        let (s0, sn0) = run_stats(bench.refs.fd("bench_sink")?);
                        bench.live(p, case)?;
                        let (t1, n1) = run_stats(bench.fd(p)?);
                        let (s1, sn1) = run_stats(bench.refs.fd("bench_sink")?);
                        if n1 > n0 {
                            rows.get_mut(&(ci, p)).expect("row").prog_ns =
                                Some((t1 - t0) as f64 / (n1 - n0) as f64);
                        }
                        if sn1 > sn0 {
                            sink_ns.push((s1 - s0) as f64 / (sn1 - sn0) as f64);
                        }
                    }
                }
                notes.push(format!(
                    "bench_sink (restore + count + XDP_DROP on the peer): {:.1} ns/pkt by bpf_stats",
                    median(&mut sink_ns)
                ));
                // What bpf_stats itself adds per run: an empty program's "run time".
                let nop = bench.refs.fd("bench_nop")?;
                let (t0, n0) = run_stats(nop);
                xdp_test_run_flags(nop, &cases[0].frame, cases[0].ingress, 1_000_000, 0, 0)
                    .map_err(err("test run"))?;
                let (t1, n1) = run_stats(nop);
                if n1 > n0 {
                    notes.push(format!(
                        "bpf_stats overhead (bench_nop, XDP_DROP only): {:.1} ns/run, included in every prog ns",
                        (t1 - t0) as f64 / (n1 - n0) as f64
                    ));
                }
            }
            Err(e) => eprintln!("bpf_stats unavailable: {e}"),
        }
    }

    print_report(
        args,
        &bench,
        &cases,
        &mut rows,
        &mut raw_time_run,
        live,
        &live_note,
        &notes,
    )?;
    drop(bench);
    drop(ns);
    Ok(())
}

#[expect(clippy::too_many_arguments, reason = "one report, printed once")]
fn print_report(
    args: &Args,
    bench: &Bench<'_>,
    cases: &[Case],
    rows: &mut BTreeMap<(usize, Prog), Row>,
    raw_time_run: &mut [Vec<f64>],
    live: bool,
    live_note: &str,
    notes: &[String],
) -> Res<()> {
    let uname = sh("uname", &["-r"]).unwrap_or_default();
    println!(
        "lb_bench: kernel {}, {} CPUs, pinned to {}, repeat {}, {} rounds (medians), batch {}, header restore {}",
        uname.trim(),
        args.cpus,
        args.cpu.map_or("none".into(), |c| format!("CPU {c}")),
        args.repeat,
        args.rounds,
        if args.batch == 0 {
            "64 (default)".into()
        } else {
            args.batch.to_string()
        },
        if args.restore { "on" } else { "off" },
    );
    let sizes: Vec<String> = cases
        .iter()
        .map(|c| format!("{} {} B", &c.label[..1], c.frame.len()))
        .collect();
    println!("frames (Ethernet to the end): {}", sizes.join(", "));
    if !live_note.is_empty() {
        println!("{live_note}");
    }
    println!();
    if live {
        println!(
            "{:<40} {:<13} {:>8} {:>8} {:>10} {:>9} {:>9} {:>10} {:>12}",
            "case",
            "program",
            "Mpps",
            "ns/pkt",
            "kernel ns",
            "lb/this",
            "prog ns",
            "non-live",
            "lb/this (nl)"
        );
    } else {
        println!(
            "{:<40} {:<13} {:>10} {:>12}",
            "case", "program", "non-live", "lb/this (nl)"
        );
    }
    for (ci, case) in cases.iter().enumerate() {
        let lb_pps = median(&mut rows[&(ci, Prog::Lb)].pps.clone());
        let lb_nl = median(&mut rows[&(ci, Prog::Lb)].nonlive_ns.clone());
        for p in Prog::ALL {
            let row = rows.get_mut(&(ci, p)).expect("row");
            let label = if p == Prog::Ref { case.label } else { "" };
            let nl = median(&mut row.nonlive_ns);
            // Throughput ratio from the non-live cost: ns(this) / ns(lb).
            let nl_ratio = if p == Prog::Lb {
                "-".into()
            } else {
                format!("{:.2}x", nl / lb_nl)
            };
            if live {
                let pps = median(&mut row.pps);
                let kns = median(&mut row.kernel_ns);
                let ratio = if p == Prog::Lb {
                    "-".into()
                } else {
                    format!("{:.2}x", lb_pps / pps)
                };
                let prog = row.prog_ns.map_or("-".into(), |n| format!("{n:.1}"));
                println!(
                    "{:<40} {:<13} {:>8.2} {:>8.1} {:>10.1} {:>9} {:>9} {:>10.1} {:>12}",
                    label,
                    p.name(),
                    pps / 1e6,
                    1e9 / pps,
                    kns,
                    ratio,
                    prog,
                    nl,
                    nl_ratio
                );
            } else {
                println!("{label:<40} {:<13} {nl:>10.1} {nl_ratio:>12}", p.name());
            }
        }
    }
    println!();
    println!(
        "Mpps, ns/pkt: repeat / wall time of the live-frames BPF_PROG_TEST_RUN syscall (program, redirect,"
    );
    println!(
        "  veth transmit, the peer's bench_sink, page recycling). kernel ns: the kernel's own average per repeat."
    );
    println!(
        "lb/this: lb's packets/s over this program's (>= 0.8x is the target against ref_redirect)."
    );
    println!(
        "prog ns: the program's own run time per packet from kernel.bpf_stats (one extra live pass)."
    );
    println!(
        "non-live: plain BPF_PROG_TEST_RUN of bench_restore -> tail call into the program, minus the same"
    );
    println!("  into bench_nop: the program's cost on the original frame, nothing transmitted.");
    for n in notes {
        println!("{n}");
    }
    if live {
        for (ci, case) in cases.iter().enumerate() {
            let lb = &rows[&(ci, Prog::Lb)].pps_by_round;
            let r = &rows[&(ci, Prog::Ref)].pps_by_round;
            let per: Vec<String> = lb
                .iter()
                .zip(r)
                .map(|(a, b)| format!("{:.2}", a / b))
                .collect();
            println!(
                "lb/ref_redirect by round, case {}: {}",
                &case.label[..1],
                per.join(" ")
            );
        }
    }
    let raw: Vec<String> = raw_time_run
        .iter_mut()
        .map(|v| format!("{:.1}", median(v)))
        .collect();
    println!(
        "LbXdp::time_run on the frame itself (a, b, c): {} ns; the frame is never reset between repeats, so",
        raw.join(", ")
    );
    println!(
        "  after the first repeat it is the NATed frame, which lb passes: that figure times the pass path."
    );
    let c = bench.lb.counters().map_err(err("lb counters"))?;
    println!(
        "lb counters after the run: redirected {}, passed {}, malformed {}, no-route {}, frag-interests-out {}",
        c.redirected, c.passed, c.malformed, c.no_route, c.frag_interests_out
    );
    let lb_stats = bench.lb.program_stats().map_err(err("lb stats"))?;
    print!(
        "program size: lb {} xlated insns / {} B jited",
        lb_stats.xlated_bytes.unwrap_or(0) / 8,
        lb_stats.jited_bytes
    );
    for name in ["ref_redirect", "ref_fib"] {
        let p: &Xdp = bench
            .refs
            .ebpf
            .program(name)
            .ok_or("ref missing")?
            .try_into()
            .map_err(err(name))?;
        let info = p.info().map_err(err(name))?;
        print!(
            ", {name} {} / {} B",
            info.size_translated().unwrap_or(0) / 8,
            info.size_jitted()
        );
    }
    println!();
    Ok(())
}
