//! Interoperability through a real forwarder: ndnd v1.5.3 (YaNFD) on loopback, with unique
//! ports and its own unix socket per test. Covers PitTokens (ndnd wraps every packet in an
//! LpPacket with one) and NDNLPv2 fragmentation both ways (8000-byte segments, MTU 1420):
//!
//! - `ndx get` → ndnd → `ndx put`;
//! - `ndnd cat` (ndnd's consumer, over the unix socket) → ndnd → `ndx put`;
//! - `ndx get` → ndnd → `ndnd put` (ndnd's producer);
//! - over ndnd's Unix socket (its application face): `ndx put` registers its prefix
//!   (rib/register, answered 200) and `ndx get` fetches through the same socket; `ndx serve`
//!   registers and `ndx gen` loads it; `ndnd cat` fetches from the registered `ndx put`.
//! - a python-ndn consumer (over ndnd's unix socket) → ndnd → `ndx put`, with CanBePrefix
//!   version discovery.
//!
//! The binary is `$NDX_NDND`, else `/opt/ndx-interop/go/ndnd`, and python-ndn is `$NDX_PYTHON`,
//! else `/opt/ndx-interop/venv/bin/python`; when absent the tests print `skipping: <reason>`,
//! and fail instead when `NDX_REQUIRE_ROOT_TESTS=1`.

mod common;

use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::ndnd_fw::{Forwarder, Kill};
use common::{Running, consumer_ok_line, content, first_line, pyndn, python_or_skip, skip};
use ndx_app::{
    Consumer, Endpoint, GenOptions, GetOptions, LinkMtu, Producer, PutOptions, ServeOptions,
    generate,
};

const DEFAULT_NDND: &str = "/opt/ndx-interop/go/ndnd";
/// The UDP MTU the test forwarder is configured with (`default_mtu`).
const NDND_MTU: usize = 1420;

fn ndnd() -> Result<PathBuf, String> {
    let p = std::env::var_os("NDX_NDND").map_or_else(|| PathBuf::from(DEFAULT_NDND), PathBuf::from);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!("{} not found", p.display()))
    }
}

/// ndnd's forwarder with a UDP face, as `ndx-app-ndnd-<tag>`; `None` after [`skip`] when ndnd
/// is missing.
fn forwarder(tag: &str) -> Option<Forwarder> {
    match ndnd() {
        Ok(bin) => Some(Forwarder::start(&bin, &format!("app-ndnd-{tag}"), true)),
        Err(r) => {
            skip(&r);
            None
        }
    }
}

/// `ndx put` of `data` under `prefix` on a loopback UDP port, routed to from `fw`.
fn put_behind(fw: &Forwarder, prefix: &str, data: &[u8]) -> Running {
    let mut opts = PutOptions::new(prefix.parse().unwrap(), "127.0.0.1:0".parse().unwrap());
    // ndnd's UDP MTU, not loopback's path MTU (64 KiB): the segments go in NDNLPv2 fragments,
    // which is what these tests check ndnd reassembles.
    opts.mtu = LinkMtu::Fixed(NDND_MTU);
    let producer = Running::start(Producer::put(&opts, data).unwrap());
    fw.route(prefix, producer.addr);
    producer
}

/// `ndnd cat NAME` on `fw`'s socket: what it fetched (it must succeed).
fn ndnd_cat(fw: &Forwarder, name: &str) -> Vec<u8> {
    let out = fw
        .client()
        .args(["cat", name])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ndnd cat failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn get_opts(prefix: &str, port: u16) -> GetOptions {
    let mut g = GetOptions::new(
        prefix.parse().unwrap(),
        format!("127.0.0.1:{port}")
            .parse::<std::net::SocketAddr>()
            .unwrap(),
    );
    g.no_progress = true;
    g
}

#[test]
fn ndx_get_through_ndnd_from_ndx_put() {
    let Some(fw) = forwarder("getput") else {
        return;
    };
    let data = content(2_000_000, 21);
    let producer = put_behind(&fw, "/ndx/ndnd/a", &data);
    let mut out = Vec::new();
    let report = Consumer::new(&get_opts("/ndx/ndnd/a", fw.port))
        .unwrap()
        .fetch(&mut out)
        .unwrap();
    assert!(out == data, "object fetched through ndnd differs");
    let p = producer.finish();
    // ndnd sends every Interest in an LpPacket with a PitToken and needs it back.
    assert!(p.pit_tokens_echoed >= report.segments, "{p:?}");
    assert!(p.fragments_sent > 0);
    eprintln!("{report}");
}

#[test]
fn ndnd_cat_through_ndnd_from_ndx_put() {
    let Some(fw) = forwarder("cat") else { return };
    let data = content(300_000, 22);
    let producer = put_behind(&fw, "/ndx/ndnd/b", &data);
    let got = ndnd_cat(&fw, "/ndx/ndnd/b");
    assert!(got == data, "ndnd cat got a different object");
    let p = producer.finish();
    assert!(p.pit_tokens_echoed > 0, "{p:?}");
    eprintln!("{p:?}");
}

#[test]
fn ndx_get_through_ndnd_from_ndnd_put() {
    let Some(fw) = forwarder("ndndput") else {
        return;
    };
    let data = content(500_000, 23);
    let mut put = fw
        .client()
        .args(["put", "/ndx/ndnd/c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    put.stdin.take().unwrap().write_all(&data).unwrap();
    let _put = Kill(put);
    let mut g = get_opts("/ndx/ndnd/c", fw.port);
    g.discovery_retries = 10;
    g.initial_rto_ms = 500;
    let mut out = Vec::new();
    let report = Consumer::new(&g).unwrap().fetch(&mut out).unwrap();
    assert!(out == data, "object fetched from ndnd put differs");
    eprintln!("{report}");
}

/// An IPv4 address of this host that is not loopback (the first global one `ip` lists).
fn non_loopback_v4() -> Option<std::net::IpAddr> {
    let out = Command::new("ip")
        .args(["-o", "-4", "addr", "show", "scope", "global"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let cidr = text
        .split_whitespace()
        .skip_while(|w| *w != "inet")
        .nth(1)?;
    cidr.split('/').next()?.parse().ok()
}

/// python-ndn's segment fetcher through ndnd from `ndx put`: discovery is a CanBePrefix
/// Interest, and every 8000-byte segment reaches ndnd in NDNLPv2 fragments (its UDP MTU is
/// 1420). ndnd takes the PitToken of a reassembled packet from the fragment that completed it;
/// a Data from a non-local face without its token is looked for only on the forwarding thread
/// its own name hashes to, where a CanBePrefix Interest's PIT entry (on its prefix's thread)
/// usually is not: unless the token rides on every fragment, discovery gets no answer. So the
/// producer is on a non-loopback address (ndnd treats loopback peers as local and looks
/// everywhere).
#[test]
fn python_ndn_through_ndnd_from_ndx_put_discovers_with_can_be_prefix() {
    let bin = match ndnd() {
        Ok(b) => b,
        Err(r) => return skip(&r),
    };
    let Some(py) = python_or_skip() else { return };
    let Some(ip) = non_loopback_v4() else {
        return skip("no non-loopback IPv4 address on this host");
    };
    let fw = Forwarder::start(&bin, "app-ndnd-pycons", true);
    let data = content(200_000, 24);
    let mut opts = PutOptions::new(
        "/ndx/ndnd/py".parse().unwrap(),
        std::net::SocketAddr::new(ip, 0),
    );
    opts.mtu = LinkMtu::Fixed(NDND_MTU); // fragmented, as in put_behind
    // A fixed version: ndnd hashes names to its forwarding threads (8 by default; xxHash), and
    // `/ndx/ndnd/py/v=1/seg=0` does not hash to the thread of `/ndx/ndnd/py`, so the outcome
    // does not depend on the clock.
    opts.version = Some(1);
    assert_eq!(opts.segment_size, 8000, "segments larger than ndnd's MTU");
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    fw.route("/ndx/ndnd/py", producer.addr);
    let out = fw.dir.join("fetched");
    let mut child = Kill(
        pyndn(
            &py,
            "pyndn_consumer.py",
            &fw.url(),
            &[OsStr::new("/ndx/ndnd/py"), out.as_os_str()],
        )
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );
    let result = first_line(&mut child.0, 120, "python-ndn consumer printed nothing");
    assert_eq!(result, consumer_ok_line(&data), "python-ndn through ndnd");
    assert!(std::fs::read(&out).unwrap() == data, "fetched bytes differ");
    let p = producer.finish();
    assert!(p.fragments_sent > 0, "ndx put fragmented nothing: {p:?}");
    assert!(p.pit_tokens_echoed >= 25, "{p:?}");
}

/// `ndx put` registers `/ndx/ndnd/unix` on ndnd's Unix socket; `ndx get` fetches it through
/// the same socket (ndnd forwards between its two application faces), and `ndnd cat` too.
#[test]
fn ndx_put_registers_on_ndnd_unix_socket_and_ndx_get_fetches() {
    let Some(fw) = forwarder("unixput") else {
        return;
    };
    let data = content(1_500_000, 24);
    let mut opts = PutOptions::new(
        "/ndx/ndnd/unix".parse().unwrap(),
        "127.0.0.1:0".parse().unwrap(),
    );
    opts.forwarder = Some(fw.sock.clone());
    // Returns once ndnd answered 200 to rib/register.
    let producer = Running::start(Producer::put(&opts, &data).unwrap());
    assert_eq!(producer.endpoint, Endpoint::Unix(fw.sock.clone()));
    let mut g = GetOptions::new(
        "/ndx/ndnd/unix".parse().unwrap(),
        Endpoint::Unix(fw.sock.clone()),
    );
    g.no_progress = true;
    let mut out = Vec::new();
    let report = Consumer::new(&g).unwrap().fetch(&mut out).unwrap();
    assert!(
        out == data,
        "object fetched through ndnd's unix socket differs"
    );
    eprintln!("{report}");
    let got = ndnd_cat(&fw, "/ndx/ndnd/unix");
    assert!(got == data, "ndnd cat got a different object");
    let p = producer.finish();
    assert!(p.data_sent >= report.segments, "{p:?}");
    assert_eq!(p.fragments_sent, 0, "nothing is fragmented on a stream");
}

/// `ndx serve` registers on ndnd's Unix socket and `ndx gen` loads it through the same socket.
#[test]
fn ndx_serve_and_gen_on_ndnd_unix_socket() {
    let Some(fw) = forwarder("unixserve") else {
        return;
    };
    let mut s = ServeOptions::new(
        "/ndx/ndnd/serve".parse().unwrap(),
        "127.0.0.1:0".parse().unwrap(),
    );
    s.forwarder = Some(fw.sock.clone());
    s.payload_size = 3000;
    let server = Running::start(Producer::serve(&s).unwrap());
    let mut g = GenOptions::new(
        "/ndx/ndnd/serve".parse().unwrap(),
        Endpoint::Unix(fw.sock.clone()),
    );
    g.count = Some(500);
    g.window = 16;
    g.duration = 20;
    let r = generate(&g).unwrap();
    assert_eq!((r.sent, r.satisfied, r.timeouts), (500, 500, 0), "{r}");
    let p = server.finish();
    assert!(p.data_sent >= 500, "{p:?}");
}
