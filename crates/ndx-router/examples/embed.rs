//! An ndx router embedded in a program, with a producer in the same process, fetched from
//! over a real interface.
//!
//! ```text
//! embed                                   # as root: throwaway namespaces + veth, then as below
//! embed --interface IF --peer-netns NS --router-address IP
//! embed fetch IP:PORT NAME                # the consumer: one Interest over UDP
//! ```
//!
//! With no arguments (root only) it creates two network namespaces joined by a veth pair,
//! runs itself with the second form in the first namespace, and deletes both at the end.
//! The second form starts a router attached to `IF` (no control socket, no app socket: the
//! library's defaults), attaches an in-process application that registers `/example` and
//! answers every Interest under it, then runs the consumer (the third form) in namespace
//! `NS`, which sends an Interest for `/example/hello` to `IP:6363` over UDP and prints the
//! Data's content: `fetched /example/hello: ...`; then a second in-process application, a
//! consumer, fetches `/example/local` through the router (`fetched in process ...`). Exit
//! code 0 when both contents came back.

use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ndx_codec::{DataRepr, InterestRepr, NameBuf, Packet};
use ndx_router::{AppError, AppFace, Router};

/// What the in-process producer answers.
const CONTENT: &str = "hello from an in-process producer";

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        None => in_namespaces(),
        Some("fetch") if args.len() == 3 => fetch(&args[1], &args[2]),
        Some("--interface") => router(&args),
        _ => Err(
            "usage: embed | embed --interface IF --peer-netns NS --router-address IP | \
                  embed fetch IP:PORT NAME"
                .into(),
        ),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("embed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The value after `flag` in `args`.
fn arg<'a>(args: &'a [String], flag: &str) -> Result<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
        .ok_or_else(|| format!("missing {flag}").into())
}

/// The router with its in-process producer; the consumer in the peer namespace.
fn router(args: &[String]) -> Result<()> {
    let iface = arg(args, "--interface")?;
    let peer = arg(args, "--peer-netns")?;
    let addr = arg(args, "--router-address")?;
    let running = Router::builder()
        .interface(iface)
        .shards(1)
        .start()?
        .spawn()?;
    let handle = running.handle().clone();
    let app = handle.attach_app(&["/example"])?;
    eprintln!("embed: router on {iface}, producer on face {}", app.id());
    let stop = Arc::new(AtomicBool::new(false));
    let producer = {
        let stop = stop.clone();
        std::thread::spawn(move || produce(&app, &stop))
    };
    let exe = std::env::current_exe()?;
    let out = Command::new("ip")
        .args(["netns", "exec", peer])
        .arg(exe)
        .args(["fetch", &format!("{addr}:6363"), "/example/hello"])
        .output()?;
    // And from an application of this process too: a second in-process face, a consumer.
    let local = fetch_in_process(&handle.attach_app(&[])?, "/example/local");
    stop.store(true, Ordering::Relaxed);
    let answered = producer.join().map_err(|_| "the producer panicked")??;
    let counters = handle.counters()?;
    let report = running.stop();
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    println!("fetched in process {}", local?);
    println!(
        "router: {} Interests in, {} Data out; the producer answered {answered}; {} frames in \
         at stop",
        counters.get("interests_in").copied().unwrap_or(0),
        counters.get("data_out").copied().unwrap_or(0),
        report.total.get("rx_frames").unwrap_or(0),
    );
    if !out.status.success() {
        return Err("the consumer fetched nothing".into());
    }
    Ok(())
}

/// Answers every Interest the router gives the app with a Data of [`CONTENT`]; returns how
/// many.
fn produce(app: &AppFace, stop: &AtomicBool) -> Result<u64> {
    let mut answered = 0;
    while !stop.load(Ordering::Relaxed) {
        let packet = match app.recv_timeout(Duration::from_millis(50)) {
            Ok(p) => p,
            Err(AppError::Timeout) => continue,
            Err(e) => return Err(e.into()),
        };
        let interest = match Packet::decode(&packet)? {
            Packet::Interest(i) => i,
            Packet::Lp(lp) => match lp.network_packet()? {
                Some(Packet::Interest(i)) if lp.nack().is_none() => i,
                _ => continue,
            },
            Packet::Data(_) => continue,
        };
        let mut data = DataRepr::new(interest.name().to_buf(), CONTENT.as_bytes().to_vec());
        data.freshness_ms = Some(1000);
        app.answer(&packet, &data.to_vec()?)?;
        answered += 1;
    }
    Ok(answered)
}

/// An in-process consumer: one Interest for `name` through the router, whose Data's name
/// and content it returns (`NAME: CONTENT`).
fn fetch_in_process(app: &AppFace, name: &str) -> Result<String> {
    let mut i = InterestRepr::new(NameBuf::from_uri(name)?);
    i.nonce = Some(0x10ca_1000 ^ std::process::id());
    i.lifetime_ms = Some(4000);
    app.send(&i.to_vec()?)?;
    loop {
        let packet = app.recv_timeout(Duration::from_secs(5))?;
        let data = match Packet::decode(&packet)? {
            Packet::Data(d) => d,
            Packet::Lp(lp) => match lp.network_packet()? {
                Some(Packet::Data(d)) => d,
                Some(Packet::Interest(_)) if lp.nack().is_some() => {
                    return Err(format!("Nack {:?} for {name}", lp.nack()).into());
                }
                _ => continue,
            },
            Packet::Interest(_) => continue,
        };
        return Ok(format!(
            "{}: {}",
            data.name(),
            String::from_utf8_lossy(data.content())
        ));
    }
}

/// The consumer: one Interest for `name` to `to` over UDP (retried each second, five
/// times), prints the Data's content.
fn fetch(to: &str, name: &str) -> Result<()> {
    let to: SocketAddr = to.parse()?;
    let sock = UdpSocket::bind(if to.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" })?;
    sock.set_read_timeout(Some(Duration::from_secs(1)))?;
    let name = NameBuf::from_uri(name)?;
    let mut buf = vec![0u8; 9000];
    for attempt in 0..5u32 {
        let mut i = InterestRepr::new(name.clone());
        i.nonce = Some(0x5eed_0000 ^ attempt ^ std::process::id());
        i.lifetime_ms = Some(1000);
        sock.send_to(&i.to_vec()?, to)?;
        let Ok((n, _)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let data = match Packet::decode(&buf[..n])? {
            Packet::Data(d) => d,
            Packet::Lp(lp) => match lp.network_packet()? {
                Some(Packet::Data(d)) => d,
                other => return Err(format!("expected Data, got {other:?}").into()),
            },
            other => return Err(format!("expected Data, got {other:?}").into()),
        };
        println!(
            "fetched {}: {}",
            data.name(),
            String::from_utf8_lossy(data.content())
        );
        return Ok(());
    }
    Err(format!("no Data for {name} from {to}").into())
}

/// Namespaces deleted on drop.
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip").args(args).output()?;
    if !out.status.success() {
        return Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    Ok(())
}

/// Two throwaway namespaces joined by a veth pair; runs the router form in the first.
fn in_namespaces() -> Result<()> {
    let id = std::process::id() % 100_000;
    let (r, c) = (format!("ndx-embed-r{id}"), format!("ndx-embed-c{id}"));
    ip(&["netns", "add", &r]).map_err(|e| format!("{e} (run as root)"))?;
    let mut ns = Namespaces(vec![r.clone()]);
    ip(&["netns", "add", &c])?;
    ns.0.push(c.clone());
    let (vr, vc) = (format!("er{id}"), format!("ec{id}"));
    ip(&["link", "add", &vr, "type", "veth", "peer", "name", &vc])?;
    ip(&["link", "set", &vr, "netns", &r])?;
    ip(&["link", "set", &vc, "netns", &c])?;
    for (n, dev, cidr) in [(&r, &vr, "10.99.0.1/24"), (&c, &vc, "10.99.0.2/24")] {
        ip(&["-n", n, "addr", "add", cidr, "dev", dev])?;
        ip(&["-n", n, "link", "set", dev, "up"])?;
        ip(&["-n", n, "link", "set", "lo", "up"])?;
    }
    let status = Command::new("ip")
        .args(["netns", "exec", &r])
        .arg(std::env::current_exe()?)
        .args([
            "--interface",
            &vr,
            "--peer-netns",
            &c,
            "--router-address",
            "10.99.0.1",
        ])
        .status()?;
    drop(ns);
    if status.success() {
        Ok(())
    } else {
        Err("the embedded router's run failed".into())
    }
}
