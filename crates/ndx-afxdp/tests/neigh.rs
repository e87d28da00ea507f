//! Root-only: next-hop resolution through rtnetlink in a namespace pair.

mod common;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use common::{A_IP, A_MAC, B_IP, B_MAC, Pair, root_or_skip, spawn_in};
use ndx_afxdp::neigh::{Resolution, Resolver};

#[test]
fn resolves_peer_and_reports_pending_and_no_route() {
    if !root_or_skip() {
        return;
    }
    let pair = Pair::new(1500);
    // From B (no XDP program here, so ARP works): A is unknown at first.
    let (first, hop, link, ghost, none) = spawn_in(&pair.b.0, || {
        let mut r = Resolver::new().unwrap();
        let a: IpAddr = A_IP.parse().unwrap();
        let first = r.resolve(a).unwrap();
        let end = Instant::now() + Duration::from_secs(5);
        let hop = loop {
            match r.resolve(a).unwrap() {
                Resolution::Ready(h) => break Some(h),
                _ if Instant::now() > end => break None,
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let link = r.link(hop.map_or(0, |h| h.ifindex)).unwrap();
        // The veth was made with 2 receive queues (netlink, in this thread's namespace).
        assert_eq!(r.rx_queues(link.ifindex).unwrap(), 2);
        // An on-link address nobody answers for: never Ready.
        let ghost_ip: IpAddr = "10.99.0.77".parse().unwrap();
        let mut ghost = Vec::new();
        for _ in 0..20 {
            ghost.push(r.resolve(ghost_ip).unwrap());
            std::thread::sleep(Duration::from_millis(50));
        }
        let none = r.resolve("192.0.2.1".parse().unwrap()).unwrap();
        (first, hop, link, ghost, none)
    })
    .join()
    .unwrap();
    assert_eq!(
        first,
        Resolution::Pending,
        "A not in B's neighbour table yet"
    );
    let hop = hop.expect("A resolved within 5 s");
    assert_eq!(hop.dst_mac, A_MAC);
    assert_eq!(hop.src_mac, B_MAC);
    assert_eq!(hop.src_ip, Some(B_IP.parse().unwrap()));
    assert_eq!(hop.gateway, None);
    assert_eq!(hop.mtu, 1500);
    assert_eq!(link.name, "b0");
    assert_eq!(link.mac, B_MAC);
    assert!(link.addrs.contains(&B_IP.parse().unwrap()));
    assert!(
        ghost
            .iter()
            .all(|g| matches!(g, Resolution::Pending | Resolution::Failed)),
        "{ghost:?}"
    );
    assert_eq!(none, Resolution::NoRoute);

    // From A, B's permanent entry is ready at once.
    let ready = spawn_in(&pair.a.0, || {
        Resolver::new()
            .unwrap()
            .resolve(B_IP.parse().unwrap())
            .unwrap()
    })
    .join()
    .unwrap();
    match ready {
        Resolution::Ready(h) => assert_eq!(h.dst_mac, B_MAC),
        other => panic!("expected Ready, got {other:?}"),
    }
}
