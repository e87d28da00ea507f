//! `ndx-traffic consumer|producer|flood`: see the crate README.

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use ndx_traffic::consumer::{self, ConsumerConfig};
use ndx_traffic::data::Signing;
use ndx_traffic::flood::{self, FloodConfig};
use ndx_traffic::producer::{self, ProducerConfig};
use ndx_traffic::window::Naming;

/// AF_XDP NDN traffic generator and responder (NDN over UDP/IPv4, port 6363 by default).
#[derive(Parser, Debug)]
#[command(name = "ndx-traffic", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Send Interests through AF_XDP as fast as the window allows; print a JSON result line.
    Consumer(ConsumerArgs),
    /// Answer every Interest with a small Data; print a JSON line on exit (SIGINT/SIGTERM).
    Producer(ProducerArgs),
    /// Send unique-name Interests as fast as the TX ring drains (no window); print a JSON line
    /// with what was sent and what came back (Nacks by reason, Data) at the end or on
    /// SIGINT/SIGTERM.
    Flood(FloodArgs),
}

/// Where a sending subcommand's frames go: the interface and queues, and the link and
/// UDP/IP headers it writes (the first source address and port, for `flood`).
#[derive(Args, Debug)]
struct LinkArgs {
    /// Interface to use (the redirect-all XDP program is attached to it).
    #[arg(long)]
    iface: String,
    /// Queue to transmit on.
    #[arg(long, default_value_t = 0)]
    queue: u32,
    /// Queues to receive on (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    rx_queues: Vec<u32>,
    /// MAC address of the next hop (the forwarder's interface).
    #[arg(long)]
    dst_mac: String,
    /// Our IPv4 address.
    #[arg(long)]
    src_ip: IpAddr,
    /// The forwarder's IPv4 address.
    #[arg(long)]
    dst_ip: IpAddr,
    /// Our UDP port.
    #[arg(long, default_value_t = 6363)]
    src_port: u16,
    /// The forwarder's UDP port.
    #[arg(long, default_value_t = 6363)]
    dst_port: u16,
}

#[derive(Args, Debug)]
struct ConsumerArgs {
    #[command(flatten)]
    link: LinkArgs,
    /// Name prefix; an 8-byte id component is appended.
    #[arg(long, default_value = "/bench")]
    prefix: String,
    /// A new name for every Interest (the default).
    #[arg(long, conflicts_with = "distinct")]
    unique: bool,
    /// Cycle over K names (CS hits once they are cached).
    #[arg(long)]
    distinct: Option<u32>,
    /// Interests outstanding at most.
    #[arg(long, default_value_t = 256)]
    window: usize,
    /// Measured seconds.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Unmeasured warm-up seconds before.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// InterestLifetime (ms).
    #[arg(long, default_value_t = 1000)]
    lifetime_ms: u64,
    /// Count an exchange as lost after this many ms (its slot is reused).
    #[arg(long, default_value_t = 100)]
    timeout_ms: u64,
    /// Most Interests queued per loop turn.
    #[arg(long, default_value_t = 64)]
    burst: usize,
    /// Count reflected Interests as answers (to measure a raw reflector with this generator).
    #[arg(long)]
    echo: bool,
    /// UMEM frames per queue.
    #[arg(long, default_value_t = 8192)]
    frames: u32,
}

#[derive(Args, Debug)]
struct FloodArgs {
    #[command(flatten)]
    link: LinkArgs,
    /// Cycle the source port over this many consecutive ports from --src-port (new on-demand
    /// faces at the target).
    #[arg(long, default_value_t = 1)]
    src_ports: u32,
    /// Cycle over this many consecutive source addresses from --src-ip too, each with every
    /// port (a port has 16 bits: 100,000 sources are e.g. 50,000 ports x 2 addresses).
    #[arg(long, default_value_t = 1)]
    src_addrs: u32,
    /// Name prefix; an 8-byte counter component is appended (names never repeat).
    #[arg(long, default_value = "/flood")]
    prefix: String,
    /// InterestLifetime (ms).
    #[arg(long, default_value_t = 4000)]
    lifetime_ms: u64,
    /// Measured seconds.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Unmeasured warm-up seconds before.
    #[arg(long, default_value_t = 0.0)]
    warmup: f64,
    /// Most Interests queued per loop turn.
    #[arg(long, default_value_t = 256)]
    burst: usize,
    /// UMEM frames per queue.
    #[arg(long, default_value_t = 8192)]
    frames: u32,
}

#[derive(Args, Debug)]
struct ProducerArgs {
    /// Interface to use (the redirect-all XDP program is attached to it).
    #[arg(long)]
    iface: String,
    /// Queues to serve (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    queues: Vec<u32>,
    /// Content bytes per Data.
    #[arg(long, default_value_t = 100)]
    content: usize,
    /// FreshnessPeriod (ms).
    #[arg(long, default_value_t = 60_000)]
    freshness_ms: u64,
    /// Put a fixed 32-byte value instead of a real DigestSha256 (well-formed, not valid).
    #[arg(long)]
    fixed_signature: bool,
    /// Stop after this many seconds (default: run until SIGINT/SIGTERM).
    #[arg(long)]
    seconds: Option<f64>,
    /// UMEM frames per queue.
    #[arg(long, default_value_t = 8192)]
    frames: u32,
}

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let v: Vec<u8> = s
        .split(':')
        .map(|x| u8::from_str_radix(x, 16))
        .collect::<Result<_, _>>()
        .ok()?;
    v.try_into().ok()
}

fn consumer(a: ConsumerArgs) -> Result<String, String> {
    let dst_mac = parse_mac(&a.link.dst_mac).ok_or(format!("bad MAC {:?}", a.link.dst_mac))?;
    let naming = match a.distinct {
        Some(k) => Naming::Distinct(k),
        None => Naming::Unique,
    };
    let _ = a.unique;
    let cfg = ConsumerConfig {
        iface: a.link.iface,
        tx_queue: a.link.queue,
        rx_queues: a.link.rx_queues,
        dst_mac,
        src: SocketAddr::new(a.link.src_ip, a.link.src_port),
        dst: SocketAddr::new(a.link.dst_ip, a.link.dst_port),
        prefix: a.prefix,
        naming,
        window: a.window,
        duration: Duration::from_secs_f64(a.seconds),
        warmup: Duration::from_secs_f64(a.warmup),
        lifetime_ms: a.lifetime_ms,
        timeout: Duration::from_millis(a.timeout_ms),
        burst: a.burst.max(1),
        echo: a.echo,
        frames: a.frames,
    };
    let r = consumer::run(&cfg).map_err(|e| e.to_string())?;
    serde_json::to_string(&r).map_err(|e| e.to_string())
}

fn flood(a: FloodArgs) -> Result<String, String> {
    let cfg = FloodConfig {
        dst_mac: parse_mac(&a.link.dst_mac).ok_or(format!("bad MAC {:?}", a.link.dst_mac))?,
        iface: a.link.iface,
        tx_queue: a.link.queue,
        rx_queues: a.link.rx_queues,
        src: SocketAddr::new(a.link.src_ip, a.link.src_port),
        dst: SocketAddr::new(a.link.dst_ip, a.link.dst_port),
        src_ports: a.src_ports,
        src_addrs: a.src_addrs,
        prefix: a.prefix,
        lifetime_ms: a.lifetime_ms,
        duration: Duration::from_secs_f64(a.seconds),
        warmup: Duration::from_secs_f64(a.warmup),
        burst: a.burst.max(1),
        frames: a.frames,
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(|e| e.to_string())?;
    }
    let r = flood::run(&cfg, &stop).map_err(|e| e.to_string())?;
    serde_json::to_string(&r).map_err(|e| e.to_string())
}

fn producer(a: ProducerArgs) -> Result<String, String> {
    let cfg = ProducerConfig {
        iface: a.iface,
        queues: a.queues,
        content_len: a.content,
        freshness_ms: a.freshness_ms,
        signing: if a.fixed_signature {
            Signing::Fixed
        } else {
            Signing::Digest
        },
        duration: a.seconds.map(Duration::from_secs_f64),
        frames: a.frames,
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(|e| e.to_string())?;
    }
    let r = producer::run(&cfg, &stop).map_err(|e| e.to_string())?;
    let _ = stop.load(Ordering::Relaxed);
    serde_json::to_string(&r).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Consumer(a) => consumer(a),
        Cmd::Producer(a) => producer(a),
        Cmd::Flood(a) => flood(a),
    };
    match r {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ndx-traffic: {e}");
            ExitCode::FAILURE
        }
    }
}
