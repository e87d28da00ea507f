//! The cluster front end's program (`bpf/lb.c`) run by BPF_PROG_TEST_RUN inside a
//! throwaway network namespace that has the front end's interfaces, addresses and
//! neighbours, so `bpf_fib_lookup` answers as on a real front end: NAME HASH, PORT MAP,
//! SNAT, fragments kept together, checksums, drops counted. Root only.

mod common;

use std::net::Ipv4Addr;

use common::*;
use ndx_codec::{DataRepr, Fragmenter, InterestRepr, LpHeaders, NackReason, NameBuf};
use ndx_xdp::lb::{LB_NO_ROUTER, LbHash, LbXdp, LbXdpConfig};
use ndx_xdp::verdict;

/// The front end: `x0` (10.1.0.1, consumers), `y0` (10.2.0.1, producers), `r1` (10.3.1.1,
/// router 1 at 10.3.1.2:6371), `r2` (10.3.2.1, router 2 at 10.3.2.2:6372). The peers of the
/// veth pairs live in a second namespace; neighbours are static.
struct Front {
    lb: Netns,
    _peers: Netns,
    ifindex: [u32; 4],
}

const CONSUMER: [u8; 4] = [10, 1, 0, 2];
const PRODUCER: [u8; 4] = [10, 2, 0, 2];
const UNRESOLVED: [u8; 4] = [10, 2, 0, 9];
const VIP_X: [u8; 4] = [10, 1, 0, 1];
const VIP_Y: [u8; 4] = [10, 2, 0, 1];
const R1: [u8; 4] = [10, 3, 1, 2];
const R2: [u8; 4] = [10, 3, 2, 2];
const MAC_CONSUMER: [u8; 6] = [2, 0, 0, 0, 1, 2];
const MAC_PRODUCER: [u8; 6] = [2, 0, 0, 0, 2, 2];
const MAC_R1: [u8; 6] = [2, 0, 0, 3, 1, 2];
const MAC_R2: [u8; 6] = [2, 0, 0, 3, 2, 2];

impl Front {
    fn new() -> Self {
        let lb = Netns::new();
        let peers = Netns::new();
        let links = [
            ("x0", "10.1.0.1/24", "10.1.0.2", MAC_CONSUMER),
            ("y0", "10.2.0.1/24", "10.2.0.2", MAC_PRODUCER),
            ("r1", "10.3.1.1/24", "10.3.1.2", MAC_R1),
            ("r2", "10.3.2.1/24", "10.3.2.2", MAC_R2),
        ];
        let mut ifindex = [0; 4];
        for (i, (dev, addr, neigh, mac)) in links.iter().enumerate() {
            let peer = format!("{dev}p");
            lb.ip(&[
                "link", "add", "name", dev, "type", "veth", "peer", "name", &peer,
            ]);
            lb.ip(&["link", "set", "dev", &peer, "netns", &peers.name]);
            lb.ip(&["addr", "add", addr, "dev", dev]);
            lb.ip(&["link", "set", "dev", dev, "up"]);
            peers.ip(&["link", "set", "dev", &peer, "up"]);
            let m = mac.map(|b| format!("{b:02x}")).join(":");
            lb.ip(&[
                "neigh",
                "replace",
                neigh,
                "lladdr",
                &m,
                "dev",
                dev,
                "nud",
                "permanent",
            ]);
            let line = lb.ip(&["-o", "link", "show", "dev", dev]);
            ifindex[i] = line.split(':').next().unwrap().trim().parse().unwrap();
        }
        run(
            "ip",
            &[
                "netns",
                "exec",
                &lb.name,
                "sysctl",
                "-qw",
                "net.ipv4.conf.all.forwarding=1",
            ],
        );
        lb.enter();
        Self {
            lb,
            _peers: peers,
            ifindex,
        }
    }

    fn mac(&self, dev: &str) -> [u8; 6] {
        let line = self.lb.ip(&["-o", "link", "show", "dev", dev]);
        let m = line.split("link/ether ").nth(1).unwrap();
        let mut out = [0u8; 6];
        for (o, p) in out.iter_mut().zip(m.split(':')) {
            *o = u8::from_str_radix(&p[..2], 16).unwrap();
        }
        out
    }
}

fn config(hash: LbHash) -> LbXdpConfig {
    LbXdpConfig {
        k0: 7,
        k1: 9,
        hash,
        table_len: 256,
        port: 6363,
        fragment_entries: 1024,
        frags: false,
    }
}

/// Loads the program with two routers: cells alternate, except that a quarter go to
/// router 2 only when `weighted` (router 1 then holds 1/4, router 2 3/4).
fn load(front: &Front, weighted: bool) -> (LbXdp, Vec<u32>) {
    let cfg = config(LbHash::Name);
    let mut xdp = LbXdp::load(&cfg).unwrap();
    xdp.set_router(0, Ipv4Addr::from(R1), 6371, front.ifindex[2])
        .unwrap();
    xdp.set_router(1, Ipv4Addr::from(R2), 6372, front.ifindex[3])
        .unwrap();
    xdp.set_port(6371, 0).unwrap();
    xdp.set_port(6372, 1).unwrap();
    let table: Vec<u32> = (0..cfg.table_len)
        .map(|c| {
            if weighted {
                u32::from(c % 4 != 0)
            } else {
                c % 2
            }
        })
        .collect();
    for (c, &s) in table.iter().enumerate() {
        xdp.set_cell(c as u32, s).unwrap();
    }
    xdp.add_vip(Ipv4Addr::from(VIP_X)).unwrap();
    xdp.add_vip(Ipv4Addr::from(VIP_Y)).unwrap();
    let addrs = [VIP_X, VIP_Y, [10, 3, 1, 1], [10, 3, 2, 1]];
    for (i, a) in front.ifindex.iter().zip(addrs) {
        xdp.set_ifaddr(*i, Ipv4Addr::from(a)).unwrap();
    }
    (xdp, table)
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

fn udp_csum(src: &[u8], dst: &[u8], udp: &[u8]) -> u16 {
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(src);
    pseudo.extend_from_slice(dst);
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&(udp.len() as u16).to_be_bytes());
    let mut s = 0u32;
    for c in pseudo.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    match csum(udp, s) {
        0 => 0xffff,
        c => c,
    }
}

/// Ethernet + IPv4 + UDP with correct checksums (UDP checksum 0 when `no_udp_csum`).
fn frame(
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    payload: &[u8],
    no_udp_csum: bool,
) -> Vec<u8> {
    let mut f = eth([2, 0, 0, 0, 0, 0xee], [2, 0, 0, 0, 0, 0xff], 0x0800, false);
    let total = (20 + 8 + payload.len()) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0, 1, 0x40, 0, 64, 17, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let c = csum(&ip, 0);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut udp = Vec::new();
    udp.extend_from_slice(&sport.to_be_bytes());
    udp.extend_from_slice(&dport.to_be_bytes());
    udp.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(payload);
    if !no_udp_csum {
        let c = udp_csum(&src, &dst, &udp);
        udp[6..8].copy_from_slice(&c.to_be_bytes());
    }
    f.extend_from_slice(&ip);
    f.extend_from_slice(&udp);
    f
}

/// What a frame says after the program: (src MAC, dst MAC, saddr, sport, daddr, dport, TTL).
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    smac: [u8; 6],
    dmac: [u8; 6],
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    ttl: u8,
}

/// Parses `f` and checks both checksums.
fn seen(f: &[u8]) -> Seen {
    let ip = &f[14..34];
    assert_eq!(csum(ip, 0), 0, "IPv4 header checksum");
    let udp = &f[34..];
    if udp[6..8] != [0, 0] {
        let mut u = udp.to_vec();
        u[6] = 0;
        u[7] = 0;
        let want = udp_csum(&ip[12..16], &ip[16..20], &u);
        assert_eq!(u16::from_be_bytes([udp[6], udp[7]]), want, "UDP checksum");
    }
    Seen {
        dmac: f[0..6].try_into().unwrap(),
        smac: f[6..12].try_into().unwrap(),
        src: ip[12..16].try_into().unwrap(),
        sport: u16::from_be_bytes([udp[0], udp[1]]),
        dst: ip[16..20].try_into().unwrap(),
        dport: u16::from_be_bytes([udp[2], udp[3]]),
        ttl: ip[8],
    }
}

fn interest(uri: &str) -> Vec<u8> {
    InterestRepr::new(NameBuf::from_uri(uri).unwrap())
        .to_vec()
        .unwrap()
}

fn data(uri: &str, len: usize) -> Vec<u8> {
    DataRepr::new(NameBuf::from_uri(uri).unwrap(), vec![0x5a; len])
        .to_vec()
        .unwrap()
}

/// The Name TLV-VALUE of `uri`.
fn name_value(uri: &str) -> Vec<u8> {
    big_name(&interest(uri))
}

/// Frame offset of the LpPacket Sequence's value (the fragmenter writes Sequence first).
fn sequence_at(frame: &[u8]) -> usize {
    let lp = &frame[42..];
    let hdr = if lp[1] == 253 { 4 } else { 2 };
    assert_eq!(lp[hdr..hdr + 2], [0x51, 8], "Sequence first");
    42 + hdr + 2
}

/// The Name TLV-VALUE of an encoded Interest (1-byte Name length or 3-byte).
fn big_name(interest: &[u8]) -> Vec<u8> {
    let at = if interest[1] == 253 { 4 } else { 2 };
    let (hdr, len) = if interest[at + 1] == 253 {
        (
            4,
            usize::from(u16::from_be_bytes([interest[at + 2], interest[at + 3]])),
        )
    } else {
        (2, usize::from(interest[at + 1]))
    };
    interest[at + hdr..at + hdr + len].to_vec()
}

fn fragments(packet: &[u8], mtu: usize, seq: u64, nack: bool) -> Vec<Vec<u8>> {
    let f = Fragmenter::new(mtu).unwrap();
    let h = LpHeaders {
        nack: nack.then_some(NackReason::NoRoute),
        ..LpHeaders::default()
    };
    let mut it = f.fragment(packet, &h, seq).unwrap();
    let mut out = Vec::new();
    let mut buf = vec![0u8; 9000];
    while let Some(n) = it.next_into(&mut buf) {
        out.push(buf[..n.unwrap()].to_vec());
    }
    out
}

#[test]
fn interests_are_hashed_data_port_mapped_and_router_traffic_snatted() {
    if !root_or_skip("interests_are_hashed_data_port_mapped_and_router_traffic_snatted") {
        return;
    }
    let front = Front::new();
    let (xdp, table) = load(&front, false);
    let cfg = xdp.config().clone();
    let [x0, y0, _r1, r2] = front.ifindex;
    let (mac_x0, mac_y0, mac_r1, mac_r2) = (
        front.mac("x0"),
        front.mac("y0"),
        front.mac("r1"),
        front.mac("r2"),
    );
    let routers = [(R1, 6371, mac_r1, MAC_R1), (R2, 6372, mac_r2, MAC_R2)];

    // 1. Interests to the well-known address: NAME HASH, DNAT, forwarded to the router.
    let mut per_router = [0u32; 2];
    for i in 0..200 {
        let uri = format!("/cluster/file/seg={i}");
        let want = table[cfg.cell(&name_value(&uri)).unwrap() as usize] as usize;
        per_router[want] += 1;
        let f = frame(CONSUMER, 40000, VIP_X, 6363, &interest(&uri), i % 3 == 0);
        let r = xdp.test_run(&f, x0).unwrap();
        assert_eq!(r.verdict, verdict::REDIRECT, "{uri}");
        let (addr, port, smac, dmac) = routers[want];
        let s = seen(r.frame());
        assert_eq!(
            s,
            Seen {
                smac,
                dmac,
                src: CONSUMER,
                sport: 40000,
                dst: addr,
                dport: port,
                ttl: 63
            },
            "{uri}"
        );
        if i % 3 == 0 {
            assert_eq!(r.frame()[40..42], [0, 0], "a zero UDP checksum stays zero");
        }
    }
    assert!(
        per_router.iter().all(|&n| n > 60),
        "both routers used: {per_router:?}"
    );
    for (slot, n) in per_router.iter().enumerate() {
        let c = xdp.router_counters(slot as u32).unwrap();
        assert_eq!(c.interests_to, u64::from(*n), "router {slot}: {c:?}");
    }

    // 2. Data to router 2's port: PORT MAP, whatever the name.
    let f = frame(
        PRODUCER,
        6363,
        VIP_Y,
        6372,
        &data("/cluster/file/seg=1", 100),
        false,
    );
    let r = xdp.test_run(&f, y0).unwrap();
    assert_eq!(r.verdict, verdict::REDIRECT);
    let s = seen(r.frame());
    assert_eq!((s.dst, s.dport, s.smac, s.dmac), (R2, 6372, mac_r2, MAC_R2));
    assert_eq!(xdp.router_counters(1).unwrap().data_to, 1);

    // 3. From router 2: a Data to the consumer leaves from VIP_X:6363; an Interest to the
    // producer keeps port 6372 (the implicit id) from VIP_Y; a Nack leaves from 6363.
    let f = frame(
        R2,
        6372,
        CONSUMER,
        40000,
        &data("/cluster/file/seg=1", 100),
        false,
    );
    let r = xdp.test_run(&f, r2).unwrap();
    assert_eq!(r.verdict, verdict::REDIRECT);
    let s = seen(r.frame());
    assert_eq!(
        s,
        Seen {
            smac: mac_x0,
            dmac: MAC_CONSUMER,
            src: VIP_X,
            sport: 6363,
            dst: CONSUMER,
            dport: 40000,
            ttl: 63
        }
    );
    let f = frame(
        R2,
        6372,
        PRODUCER,
        6363,
        &interest("/cluster/file/seg=1"),
        false,
    );
    let s = seen(xdp.test_run(&f, r2).unwrap().frame());
    assert_eq!(
        (s.src, s.sport, s.dst, s.dport, s.smac),
        (VIP_Y, 6372, PRODUCER, 6363, mac_y0)
    );
    let nack = fragments(&interest("/cluster/nack"), 1400, 1, true).remove(0);
    let f = frame(R2, 6372, CONSUMER, 40000, &nack, false);
    let s = seen(xdp.test_run(&f, r2).unwrap().frame());
    assert_eq!(
        (s.src, s.sport),
        (VIP_X, 6363),
        "a Nack leaves from the well-known port"
    );
    let c = xdp.router_counters(1).unwrap();
    assert_eq!(
        (c.data_from, c.interests_from, c.nacks_from),
        (1, 1, 1),
        "{c:?}"
    );
    assert!(c.bytes_from > 0 && c.bytes_to > 0);

    // Beyond the 8 well-known addresses compared inline, the others are found in the map.
    let mut xdp = xdp;
    for i in 101..=110 {
        xdp.add_vip(Ipv4Addr::new(10, 1, 0, i)).unwrap();
    }
    let f = frame(
        CONSUMER,
        40000,
        [10, 1, 0, 110],
        6363,
        &interest("/far/vip"),
        false,
    );
    let r = xdp.test_run(&f, x0).unwrap();
    assert_eq!(r.verdict, verdict::REDIRECT, "the 12th well-known address");
    assert_eq!(seen(r.frame()).sport, 40000);
    xdp.remove_vip(Ipv4Addr::new(10, 1, 0, 110)).unwrap();
    assert_eq!(
        xdp.test_run(&f, x0).unwrap().verdict,
        verdict::PASS,
        "removed"
    );
    let c = xdp.counters().unwrap();
    assert_eq!(c.interests_in, 201);
    assert_eq!(c.port_mapped, 1);
    assert_eq!(c.from_routers, 3);
    assert_eq!(c.redirected, 201 + 1 + 3);
}

#[test]
fn fragments_of_one_packet_take_one_decision() {
    if !root_or_skip("fragments_of_one_packet_take_one_decision") {
        return;
    }
    let front = Front::new();
    let (xdp, table) = load(&front, false);
    let cfg = xdp.config().clone();
    let [x0, _y0, _r1, r2] = front.ifindex;

    // An 8000-byte Data from router 2 in 1400-byte fragments: every fragment leaves from
    // 6363, not just the first.
    let frags = fragments(&data("/big/seg=0", 8000), 1400, 1000, false);
    assert!(frags.len() >= 6);
    for (i, fr) in frags.iter().enumerate() {
        let f = frame(R2, 6372, CONSUMER, 40000, fr, false);
        let r = xdp.test_run(&f, r2).unwrap();
        assert_eq!(r.verdict, verdict::REDIRECT, "fragment {i}");
        let s = seen(r.frame());
        assert_eq!((s.src, s.sport), (VIP_X, 6363), "fragment {i}");
        // Router 2's slot (1) + 1 added to the Sequence's top byte; the rest untouched, so
        // Sequence - FragIndex still names the packet.
        let at = sequence_at(&f);
        assert_eq!(r.frame()[at], f[at].wrapping_add(2), "fragment {i}");
        assert_eq!(r.frame()[at + 1..at + 8], f[at + 1..at + 8], "fragment {i}");
    }
    // A fragmented Interest from router 2 keeps 6372 on every fragment.
    let mut big = InterestRepr::new(NameBuf::from_uri("/big/interest").unwrap());
    big.set_app_params(vec![1u8; 3000]);
    let big = big.to_vec().unwrap();
    for fr in fragments(&big, 1400, 5000, false) {
        let f = frame(R2, 6372, PRODUCER, 6363, &fr, false);
        let s = seen(xdp.test_run(&f, r2).unwrap().frame());
        assert_eq!(s.sport, 6372);
    }
    // The same Interest from a consumer to the well-known port: every fragment goes to the
    // router fragment 0 was hashed to.
    let frags = fragments(&big, 1400, 9000, false);
    let want = table[cfg.cell(&big_name(&big)).unwrap() as usize];
    let dst = if want == 0 { R1 } else { R2 };
    for (i, fr) in frags.iter().enumerate() {
        let f = frame(CONSUMER, 40001, VIP_X, 6363, fr, false);
        let r = xdp.test_run(&f, x0).unwrap();
        assert_eq!(r.verdict, verdict::REDIRECT, "fragment {i}");
        assert_eq!(seen(r.frame()).dst, dst, "fragment {i}");
    }
    // An Interest whose Name runs past fragment 0 (a 1500-byte name in 1400-byte
    // fragments): by source, all its fragments to one router.
    let long = format!("/long/{}", "x".repeat(1500));
    let li = interest(&long);
    let lf = fragments(&li, 1400, 20000, false);
    assert!(lf.len() >= 2);
    let mut to = None;
    for (i, fr) in lf.iter().enumerate() {
        let f = frame(CONSUMER, 40003, VIP_X, 6363, fr, false);
        let r = xdp.test_run(&f, x0).unwrap();
        assert_eq!(r.verdict, verdict::REDIRECT, "long-name fragment {i}");
        let d = seen(r.frame()).dst;
        assert!(to.is_none() || to == Some(d), "fragment {i} went elsewhere");
        to = Some(d);
    }
    assert_eq!(xdp.counters().unwrap().by_source, 1);
    // A non-first fragment whose first was never seen: dropped, counted.
    let f = frame(CONSUMER, 40002, VIP_X, 6363, &frags[1], false);
    assert_eq!(xdp.test_run(&f, x0).unwrap().verdict, verdict::DROP);
    // From a router, a fragment nothing was remembered for is a Data's (only fragmented
    // Interests are remembered): from 6363.
    let lone = fragments(&data("/lone", 3000), 1400, 77, false);
    let f = frame(R2, 6372, CONSUMER, 40000, &lone[1], false);
    let s = seen(xdp.test_run(&f, r2).unwrap().frame());
    assert_eq!(s.sport, 6363);
    let c = xdp.counters().unwrap();
    assert_eq!((c.frag_miss_in, c.frag_interests_out), (1, 1), "{c:?}");
}

#[test]
fn bad_and_foreign_packets_never_reach_a_router() {
    if !root_or_skip("bad_and_foreign_packets_never_reach_a_router") {
        return;
    }
    let front = Front::new();
    let (mut xdp, _) = load(&front, false);
    let [x0, y0, _r1, _r2] = front.ifindex;
    let drop_cases: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", b"GET / HTTP/1.1\r\n\r\n".to_vec()),
        ("truncated Interest", interest("/a/b")[..5].to_vec()),
        ("empty", Vec::new()),
        ("Interest without a Name", vec![5, 2, 10, 0]),
        ("Data to the well-known port", data("/a", 10)),
        (
            "FragIndex beyond FragCount",
            [
                &[
                    0x64, 21, 0x51, 8, 0, 0, 0, 0, 0, 0, 0, 9, 0x52, 1, 5, 0x53, 1, 2, 0x50, 2,
                ][..],
                &[5, 0],
            ]
            .concat(),
        ),
        (
            "fragmented without a Sequence",
            vec![0x64, 10, 0x52, 1, 0, 0x53, 1, 2, 0x50, 2, 5, 0],
        ),
    ];
    for (what, payload) in &drop_cases {
        let f = frame(CONSUMER, 40000, VIP_X, 6363, payload, false);
        assert_eq!(
            xdp.test_run(&f, x0).unwrap().verdict,
            verdict::DROP,
            "{what}"
        );
    }
    // Garbage to a router's port is dropped too.
    let f = frame(PRODUCER, 6363, VIP_Y, 6371, b"\xff\xff\xff", false);
    assert_eq!(xdp.test_run(&f, y0).unwrap().verdict, verdict::DROP);
    let c = xdp.counters().unwrap();
    assert_eq!((c.malformed, c.not_interest), (7, 1), "{c:?}");
    for slot in 0..2 {
        let rc = xdp.router_counters(slot).unwrap();
        assert_eq!(rc.bytes_to, 0, "nothing reached router {slot}");
    }
    // Not for the cluster: passed untouched (another port, another address, not UDP).
    let other_port = frame(CONSUMER, 40000, VIP_X, 22, &interest("/a"), false);
    let other_addr = frame(
        CONSUMER,
        40000,
        [10, 1, 0, 99],
        6363,
        &interest("/a"),
        false,
    );
    let mut tcp = other_port.clone();
    tcp[23] = 6;
    for f in [other_port, other_addr, tcp] {
        let r = xdp.test_run(&f, x0).unwrap();
        assert_eq!(r.verdict, verdict::PASS);
        assert_eq!(r.frame(), &f[..], "untouched");
    }
    // A router's address and port from outside (spoofed): dropped. Other UDP from a
    // router's address: dropped, not forwarded with its internal source.
    let f = frame(R2, 6372, CONSUMER, 40000, &data("/spoof", 10), false);
    assert_eq!(xdp.test_run(&f, x0).unwrap().verdict, verdict::DROP);
    let f = frame(R1, 5555, PRODUCER, 53, b"dns?", false);
    assert_eq!(
        xdp.test_run(&f, front.ifindex[2]).unwrap().verdict,
        verdict::DROP
    );
    let c = xdp.counters().unwrap();
    assert_eq!((c.spoofed, c.router_other), (1, 1), "{c:?}");
    // No router in the hash space: dropped, counted.
    for c in 0..256 {
        xdp.set_cell(c, LB_NO_ROUTER).unwrap();
    }
    let f = frame(CONSUMER, 40000, VIP_X, 6363, &interest("/a"), false);
    assert_eq!(xdp.test_run(&f, x0).unwrap().verdict, verdict::DROP);
    assert_eq!(xdp.counters().unwrap().no_router, 1);
    // An unresolved neighbour: the rewritten packet goes to the kernel.
    let f = frame(R1, 6371, UNRESOLVED, 6363, &interest("/a"), false);
    let r = xdp.test_run(&f, front.ifindex[2]).unwrap();
    assert_eq!(r.verdict, verdict::PASS);
    let s = seen(r.frame());
    assert_eq!(
        (s.src, s.sport, s.ttl),
        (VIP_Y, 6371, 64),
        "NATed, TTL left to the kernel"
    );
    assert_eq!(xdp.counters().unwrap().to_kernel, 1);
}

#[test]
fn weighted_hash_space_splits_interests_by_weight() {
    if !root_or_skip("weighted_hash_space_splits_interests_by_weight") {
        return;
    }
    let front = Front::new();
    let (xdp, _) = load(&front, true);
    let x0 = front.ifindex[0];
    let n = 4000;
    for i in 0..n {
        let f = frame(
            CONSUMER,
            40000,
            VIP_X,
            6363,
            &interest(&format!("/w/{i}")),
            false,
        );
        assert_eq!(xdp.test_run(&f, x0).unwrap().verdict, verdict::REDIRECT);
    }
    let a = xdp.router_counters(0).unwrap().interests_to as f64;
    let b = xdp.router_counters(1).unwrap().interests_to as f64;
    assert_eq!(a + b, f64::from(n));
    // Weights 1:3: router 1 gets 25% (binomial sd ~0.7% at n = 4000).
    let share = a / f64::from(n);
    assert!((share - 0.25).abs() < 0.03, "router 1 share {share}");
    let stats = xdp.program_stats().unwrap();
    if let Some(insns) = stats.verified_insns {
        assert!(insns < 500_000, "verifier work {insns}");
    }
}

/// RFC 1624 as lb.c applies it, on checksum words as stored.
fn replace4(check: u16, old: [u8; 4], new: [u8; 4]) -> u16 {
    let w = |b: [u8; 4]| {
        [
            u16::from_be_bytes([b[0], b[1]]),
            u16::from_be_bytes([b[2], b[3]]),
        ]
    };
    let mut c = u32::from(!check);
    for (o, n) in w(old).into_iter().zip(w(new)) {
        c += u32::from(!o) + u32::from(n);
    }
    while c >> 16 != 0 {
        c = (c & 0xffff) + (c >> 16);
    }
    !(c as u16)
}

#[test]
fn udp_checksum_stays_right_when_an_update_passes_through_zero() {
    if !root_or_skip("udp_checksum_stays_right_when_an_update_passes_through_zero") {
        return;
    }
    let front = Front::new();
    let (xdp, _) = load(&front, false);
    let r2 = front.ifindex[3];
    // A Data from router 2 to the consumer gets two rewrites (source address, then source
    // port): find content whose checksum is exactly 0 after the first.
    let mut found = None;
    // A 1-in-65536 event per content: try up to 2^20 (each changes the digest too).
    for k in 0..1u32 << 20 {
        let mut content = vec![0x5a; 40];
        content[..4].copy_from_slice(&k.to_be_bytes());
        let d = DataRepr::new(NameBuf::from_uri("/csum").unwrap(), content)
            .to_vec()
            .unwrap();
        let f = frame(R2, 6372, CONSUMER, 40000, &d, false);
        let check = u16::from_be_bytes([f[40], f[41]]);
        if replace4(check, R2, VIP_X) == 0 {
            found = Some(f);
            break;
        }
    }
    let f = found.expect("some content makes the intermediate checksum 0");
    let r = xdp.test_run(&f, r2).unwrap();
    assert_eq!(r.verdict, verdict::REDIRECT);
    let s = seen(r.frame()); // checks the UDP checksum
    assert_eq!((s.src, s.sport), (VIP_X, 6363));
}
