//! Jumbo frames end to end, as root (issue 37 part 6): a consumer ── router ── producer line
//! of network namespaces whose veth links all have MTU 9000, `ndx put` serving a file in
//! 8800-byte Data, `ndx get` fetching it through `ndx run` (AF_XDP, native XDP, the
//! `xdp.frags` program and multi-buffer sockets). Every Data must cross each hop as one
//! Ethernet frame: the router sends and reassembles no NDNLPv2 fragment, and the veths'
//! own frame counters show one frame per Data. The same transfer on a 1500-MTU line must be
//! fragmented (so the counters the first test reads can tell the difference). The tools are
//! not told the MTU: `ndx put` reads each peer's path MTU from the kernel (`--mtu auto`).
//!
//! Without root (or BPF) the tests print `skipping: <reason>`; with `NDX_REQUIRE_ROOT_TESTS=1`
//! they fail instead.

mod support;
mod topo;

use support::{Netns, skip};
use topo::{
    Family, Line, get_retransmissions as retransmissions, get_segments as segments, ok, total, xdp,
};

/// Bytes of content per Data: with the Data's name and signature, the LpPacket, UDP, IPv4
/// and Ethernet headers the frame stays under 9000 + 14 bytes.
const SEGMENT: usize = 8800;

/// The object fetched: 1 MiB, 120 Data of 8800 bytes (the last one shorter).
const OBJECT: usize = 1 << 20;

/// A veth's frame and byte counters (from sysfs inside its namespace).
#[derive(Debug, Clone, Copy)]
struct Wire {
    rx_packets: u64,
    rx_bytes: u64,
    tx_packets: u64,
    tx_bytes: u64,
}

impl Wire {
    fn read(ns: &Netns, ifname: &str) -> Self {
        let stat = |name: &str| -> u64 {
            let path = format!("/sys/class/net/{ifname}/statistics/{name}");
            let out = ns.run(&["cat", &path]);
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .unwrap_or_else(|e| panic!("{path}: {e}"))
        };
        Self {
            rx_packets: stat("rx_packets"),
            rx_bytes: stat("rx_bytes"),
            tx_packets: stat("tx_packets"),
            tx_bytes: stat("tx_bytes"),
        }
    }

    /// What happened between `before` and `self`.
    fn since(self, before: Self) -> Self {
        Self {
            rx_packets: self.rx_packets - before.rx_packets,
            rx_bytes: self.rx_bytes - before.rx_bytes,
            tx_packets: self.tx_packets - before.tx_packets,
            tx_bytes: self.tx_bytes - before.tx_bytes,
        }
    }
}

/// One transfer on a line of MTU `mtu`: the router's counters, the wire counters of the
/// producer's and the consumer's veth over the fetch, the Data count and the
/// retransmissions.
struct Transfer {
    status: serde_json::Value,
    log: String,
    /// `ip link show` of the router's `c0` and `p0` while it ran.
    links: Vec<String>,
    producer: Wire,
    consumer: Wire,
    data: u64,
    retransmitted: u64,
}

/// Serves a 1 MiB file in 8800-byte Data on a line of MTU `mtu` (the tools are not told it:
/// they read the path MTU), fetches it through ndx and checks it arrived byte for byte.
fn transfer(family: Family, mtu: u32) -> Transfer {
    let line = Line::new(family, 1, mtu);
    let (file, want) = line.content("obj", OBJECT, 37);
    // XDP classification on: the program counts NDNLPv2 fragments it sees.
    let router = line.start_udp_router("xdp_classify = \"always\"");
    let seg = SEGMENT.to_string();
    let _producer = line.put("/t/jumbo", &file, &["-s", &seg]);
    let (p0, c0) = (Wire::read(&line.p, "eth0"), Wire::read(&line.c, "eth0"));
    let out_path = line.scratch.path("got");
    let got = line.get("/t/jumbo", &out_path, &[]);
    ok(&got, "ndx get");
    let (producer, consumer) = (
        Wire::read(&line.p, "eth0").since(p0),
        Wire::read(&line.c, "eth0").since(c0),
    );
    let fetched = std::fs::read(&out_path).expect("ndx get wrote its output");
    assert_eq!(
        fetched.len(),
        want.len(),
        "fetched object has the wrong length"
    );
    assert!(
        fetched == want,
        "fetched object differs from the served one"
    );
    let data = segments(&got);
    assert_eq!(data, OBJECT.div_ceil(SEGMENT) as u64);
    let status = router.settle(|s| total(s, "data_out") >= data);
    eprintln!(
        "MTU {mtu}: {}\n{}\nproducer {producer:?}\nconsumer {consumer:?}",
        status["counters"], status["xdp"]
    );
    let links = ["c0", "p0"]
        .iter()
        .map(|i| String::from_utf8_lossy(&line.r.run(&["ip", "link", "show", i]).stdout).into())
        .collect();
    Transfer {
        links,
        log: router.log(),
        status,
        producer,
        consumer,
        data,
        retransmitted: retransmissions(&got),
    }
}

/// Native XDP with the frags program on both router interfaces, as the start-up banner says
/// and the kernel shows (`xdp`, not `xdpgeneric`, after the MTU in `ip link show`).
fn assert_native_frags(log: &str, links: &[String], mtu: u32) {
    for link in links {
        assert!(link.contains(&format!(" mtu {mtu} xdp ")), "{link}");
        assert!(link.contains("prog/xdp"), "{link}");
    }
    for ifname in ["c0", "p0"] {
        let line = log
            .lines()
            .find(|l| l.contains(&format!(" {ifname} (ifindex")))
            .unwrap_or_else(|| panic!("no banner line for {ifname}: {log}"));
        assert!(
            line.contains(&format!(
                "mtu {mtu}): XDP Driver mode, multi-buffer (xdp.frags)"
            )),
            "{line}"
        );
    }
}

#[test]
fn jumbo_data_cross_a_9000_mtu_line_as_single_frames() {
    if skip() {
        return;
    }
    single_frames(transfer(Family::V4, 9000));
}

/// The same over IPv6 (20 bytes more of IP header: the frame still fits).
#[test]
fn jumbo_data_cross_a_9000_mtu_ipv6_line_as_single_frames() {
    if skip() {
        return;
    }
    single_frames(transfer(Family::V6, 9000));
}

/// Asserts every Data of `t` crossed each hop of its 9000-MTU line as one frame.
fn single_frames(t: Transfer) {
    let s = &t.status;
    // Native XDP at MTU 9000: only an `xdp.frags` program attaches (the kernel refuses
    // another one above ~3500 bytes on veth).
    assert_native_frags(&t.log, &t.links, 9000);
    // No NDNLPv2 fragmentation anywhere: the router received, reassembled and sent none, and
    // its XDP program saw none.
    for c in ["fragments_in", "reassembled", "fragments_out", "tx_too_big"] {
        assert_eq!(total(s, c), 0, "{c}: {}", s["counters"]);
    }
    assert_eq!(xdp(s, "fragment"), 0, "{}", s["xdp"]);
    assert!(xdp(s, "data") >= t.data, "{}", s["xdp"]);
    // The router took each Data in as one (multi-buffer) frame and sent it out as one.
    let (din, dout) = (total(s, "data_in"), total(s, "data_out"));
    assert!(din >= t.data && dout >= t.data, "{}", s["counters"]);
    assert!(
        total(s, "rx_frames") <= total(s, "interests_in") + din + 16,
        "more frames than packets came in: {}",
        s["counters"]
    );
    assert!(
        total(s, "tx_frames") <= total(s, "interests_out") + dout + 16,
        "more frames than packets went out: {}",
        s["counters"]
    );
    // On the wire: the producer's veth sent one frame per Data (plus the odd ARP or a Data
    // sent again for a retransmitted Interest), each above 8800 bytes on average; the
    // consumer's veth received the same.
    let slack = t.retransmitted + 16;
    for (side, frames, bytes) in [
        ("producer tx", t.producer.tx_packets, t.producer.tx_bytes),
        ("consumer rx", t.consumer.rx_packets, t.consumer.rx_bytes),
    ] {
        assert!(
            frames >= t.data && frames <= t.data + slack,
            "{side}: {frames} frames for {} Data",
            t.data
        );
        assert!(
            bytes >= t.data * (SEGMENT as u64 - 1000) && bytes / frames > 8000,
            "{side}: {bytes} bytes in {frames} frames"
        );
    }
}

#[test]
fn the_same_transfer_on_a_1500_mtu_line_is_fragmented() {
    if skip() {
        return;
    }
    let t = transfer(Family::V4, 1500);
    let s = &t.status;
    // 8800 bytes in fragments of at most 1472: at least 6 per Data, on each hop.
    let least = 6 * t.data;
    for c in ["fragments_in", "fragments_out"] {
        assert!(total(s, c) >= least, "{c}: {}", s["counters"]);
    }
    assert!(total(s, "reassembled") >= t.data, "{}", s["counters"]);
    assert!(xdp(s, "fragment") >= least, "{}", s["xdp"]);
    assert!(t.producer.tx_packets >= least, "{:?}", t.producer);
    assert!(t.consumer.rx_packets >= least, "{:?}", t.consumer);
    assert!(t.consumer.rx_bytes / t.consumer.rx_packets <= 1514);
}
