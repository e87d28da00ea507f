//! Root-only: the consumer and the producer talk to each other directly over a veth pair in two
//! throwaway namespaces (AF_XDP on both ends, the redirect program attached on both).

use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

static NEXT: AtomicU32 = AtomicU32::new(0);

fn sh(args: &[&str]) -> Output {
    Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn ok(args: &[&str]) {
    let o = sh(args);
    assert!(o.status.success(), "{args:?}: {o:?}");
}

/// Two namespaces joined by a veth pair (a0 02:00:00:00:00:01 <-> b0 02:00:00:00:00:02),
/// deleted on drop.
struct Pair {
    a: String,
    b: String,
}

impl Pair {
    fn new() -> Self {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tag = format!("ndxtr-{}-{n}", std::process::id());
        let p = Pair {
            a: format!("{tag}-a"),
            b: format!("{tag}-b"),
        };
        ok(&["ip", "netns", "add", &p.a]);
        ok(&["ip", "netns", "add", &p.b]);
        ok(&[
            "ip",
            "link",
            "add",
            "a0",
            "netns",
            &p.a,
            "address",
            "02:00:00:00:00:01",
            "type",
            "veth",
            "peer",
            "name",
            "b0",
            "netns",
            &p.b,
            "address",
            "02:00:00:00:00:02",
        ]);
        ok(&["ip", "-n", &p.a, "link", "set", "a0", "up"]);
        ok(&["ip", "-n", &p.b, "link", "set", "b0", "up"]);
        p
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        let _ = sh(&["ip", "netns", "del", &self.a]);
        let _ = sh(&["ip", "netns", "del", &self.b]);
    }
}

fn root() -> bool {
    let is_root = sh(&["id", "-u"]).stdout.starts_with(b"0\n");
    if !is_root {
        assert!(
            std::env::var("NDX_REQUIRE_ROOT_TESTS").as_deref() != Ok("1"),
            "root tests required but not root"
        );
        eprintln!("skipping: not root");
    }
    is_root
}

fn json(out: &[u8]) -> serde_json::Value {
    let s = String::from_utf8_lossy(out);
    let line = s.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {s}"))
}

/// Starts `ndx-traffic producer` on `p`'s b0 for `seconds`, and gives it time to bind.
fn spawn_producer(p: &Pair, seconds: u32) -> std::process::Child {
    let bin = env!("CARGO_BIN_EXE_ndx-traffic");
    let producer = Command::new("ip")
        .args(["netns", "exec", &p.b, bin, "producer", "--iface", "b0"])
        .args(["--seconds", &seconds.to_string(), "--frames", "2048"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    producer
}

fn exchange(naming: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let p = Pair::new();
    let bin = env!("CARGO_BIN_EXE_ndx-traffic");
    let producer = spawn_producer(&p, 5);
    let c = Command::new("ip")
        .args(["netns", "exec", &p.a, bin, "consumer", "--iface", "a0"])
        .args(["--dst-mac", "02:00:00:00:00:02", "--src-ip", "10.9.0.1"])
        .args([
            "--dst-ip",
            "10.9.0.2",
            "--seconds",
            "1.5",
            "--warmup",
            "0.5",
        ])
        .args(["--frames", "2048", "--window", "8"])
        .args(naming)
        .output()
        .unwrap();
    assert!(c.status.success(), "consumer: {c:?}");
    let prod = producer.wait_with_output().unwrap();
    assert!(prod.status.success(), "producer: {prod:?}");
    (json(&c.stdout), json(&prod.stdout))
}

#[test]
fn unique_names_are_all_answered() {
    if !root() {
        return;
    }
    let (c, p) = exchange(&["--unique", "--prefix", "/t/u"]);
    let sat = c["satisfied"].as_u64().unwrap();
    assert!(sat > 100, "few exchanges: {c}");
    assert_eq!(c["nacks"], 0, "{c}");
    // (other_frames may count the kernel's own IPv6 neighbour discovery on a fresh link.)
    assert_eq!(c["unmatched"], 0, "no reply matched nothing: {c}");
    assert_eq!(c["lost"], 0, "nothing lost on a direct link: {c}");
    // Every answered Interest was seen and answered by the producer.
    assert!(p["data"].as_u64().unwrap() >= sat, "{p} vs {c}");
    assert_eq!(p["data"], p["interests"], "{p}");
    assert_eq!(p["with_pit_token"], 0, "bare Interests: {p}");
}

#[test]
fn distinct_names_cycle() {
    if !root() {
        return;
    }
    let (c, p) = exchange(&["--distinct", "16", "--prefix", "/t/d"]);
    assert!(c["satisfied"].as_u64().unwrap() > 100, "{c}");
    assert_eq!(c["naming"], "distinct:16", "{c}");
    assert!(p["interests"].as_u64().unwrap() > 100, "{p}");
}

#[test]
fn flood_reaches_the_producer_from_cycled_sources() {
    if !root() {
        return;
    }
    let p = Pair::new();
    let bin = env!("CARGO_BIN_EXE_ndx-traffic");
    let producer = Command::new("ip")
        .args(["netns", "exec", &p.b, bin, "producer", "--iface", "b0"])
        .args(["--seconds", "3", "--frames", "2048"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let f = Command::new("ip")
        .args(["netns", "exec", &p.a, bin, "flood", "--iface", "a0"])
        .args(["--dst-mac", "02:00:00:00:00:02", "--src-ip", "10.9.0.1"])
        .args(["--dst-ip", "10.9.0.2", "--seconds", "1", "--frames", "2048"])
        .args([
            "--src-port",
            "20000",
            "--src-ports",
            "100",
            "--src-addrs",
            "2",
        ])
        .args(["--prefix", "/t/f", "--lifetime-ms", "4000"])
        .output()
        .unwrap();
    assert!(f.status.success(), "flood: {f:?}");
    let prod = producer.wait_with_output().unwrap();
    assert!(prod.status.success(), "producer: {prod:?}");
    let (f, prod) = (json(&f.stdout), json(&prod.stdout));
    let sent = f["sent"].as_u64().unwrap();
    assert!(sent > 1000, "{f}");
    assert_eq!(f["sources"], 200, "{f}");
    // The producer answers what it sees (it may fall behind a window-less flood).
    assert!(f["data"].as_u64().unwrap() > 100, "{f} {prod}");
    assert_eq!(f["nack_congestion"], 0, "{f}");
    assert!(prod["interests"].as_u64().unwrap() > 100, "{prod}");
}

/// The producer's Data reach a kernel UDP socket: the kernel verifies the UDP checksum the
/// producer sums while copying each Data into its TX frame (a wrong one is dropped, and
/// nothing would be received), bare and with an NDNLPv2 PIT token.
#[test]
fn producer_data_pass_kernel_udp_checksums() {
    if !root() {
        return;
    }
    let p = Pair::new();
    // The producer's side takes every frame (ARP too): the kernel side needs a static
    // neighbour entry, and its own address for the socket.
    ok(&["ip", "-n", &p.a, "addr", "add", "10.9.0.1/24", "dev", "a0"]);
    ok(&[
        "ip",
        "-n",
        &p.a,
        "neigh",
        "replace",
        "10.9.0.2",
        "lladdr",
        "02:00:00:00:00:02",
        "dev",
        "a0",
        "nud",
        "permanent",
    ]);
    let producer = spawn_producer(&p, 4);
    let names = ["/t/k/1", "/t/k/odd-length-name"];
    let mut packets = Vec::new();
    for uri in names {
        let i = ndx_codec::InterestRepr::new(ndx_codec::NameBuf::from_uri(uri).unwrap())
            .to_vec()
            .unwrap();
        let tok = [7u8; 8];
        let h = ndx_codec::LpHeaders {
            pit_token: Some(&tok),
            ..ndx_codec::LpHeaders::default()
        };
        let mut lp = vec![0; h.encoded_len(Some(i.len()))];
        h.encode(Some(&i), &mut lp).unwrap();
        packets.push(i);
        packets.push(lp);
    }
    let hex: Vec<String> = packets
        .iter()
        .map(|p| p.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    // One kernel UDP socket in the consumer's namespace sends each Interest and prints the
    // answer received (or "timeout").
    let script = [
        "import socket, sys",
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        "s.bind(('10.9.0.1', 6363))",
        "s.settimeout(2)",
        "for h in sys.argv[1:]:",
        "    s.sendto(bytes.fromhex(h), ('10.9.0.2', 6363))",
        "    try:",
        "        print(s.recvfrom(9000)[0].hex())",
        "    except socket.timeout:",
        "        print('timeout')",
    ]
    .join("\n");
    let out = Command::new("ip")
        .args(["netns", "exec", &p.a, "python3", "-c", &script])
        .args(&hex)
        .output()
        .unwrap();
    assert!(out.status.success(), "python: {out:?}");
    let prod = producer.wait_with_output().unwrap();
    assert!(prod.status.success(), "producer: {prod:?}");
    let answers: Vec<Vec<u8>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            assert_ne!(
                l, "timeout",
                "no Data (a bad UDP checksum is dropped): {out:?}"
            );
            (0..l.len() / 2)
                .map(|k| u8::from_str_radix(&l[2 * k..2 * k + 2], 16).unwrap())
                .collect()
        })
        .collect();
    assert_eq!(answers.len(), packets.len(), "{out:?}");
    for (k, a) in answers.iter().enumerate() {
        let uri = names[k / 2];
        let want = ndx_codec::NameBuf::from_uri(uri).unwrap();
        let (data, token) = match ndx_codec::Packet::decode(a).unwrap() {
            ndx_codec::Packet::Data(d) => (d, None),
            ndx_codec::Packet::Lp(lp) => match lp.network_packet().unwrap() {
                Some(ndx_codec::Packet::Data(d)) => (d, lp.pit_token()),
                other => panic!("not a Data inside: {other:?}"),
            },
            other => panic!("not a Data: {other:?}"),
        };
        assert_eq!(data.name().as_bytes(), want.as_name().as_bytes(), "{uri}");
        // Even answers are to bare Interests, odd ones carry the token back.
        assert_eq!(token.is_some(), k % 2 == 1, "answer {k}");
    }
    let rep = json(&prod.stdout);
    assert_eq!(rep["with_pit_token"], 2, "{rep}");
}
