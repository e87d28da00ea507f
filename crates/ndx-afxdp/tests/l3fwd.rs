//! Root-only: the AF_XDP layer-3 forwarder between two veth pairs in throwaway namespaces.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use common::{Line, root_or_skip, spawn_in, wait_until};
use ndx_afxdp::l3fwd::{Config, L3Fwd, Side};
use ndx_afxdp::wire::{self, Encap};
use ndx_afxdp::xdp::RedirectProgram;
use ndx_afxdp::{Error, Port, PortConfig, UmemConfig};

const N: usize = 64;

fn sa(ip: &str, port: u16) -> SocketAddr {
    format!("{ip}:{port}").parse().unwrap()
}

fn sides() -> (Side, Side) {
    (
        Side {
            ifname: "c0".into(),
            peer: sa(Line::C_IP, 6363),
        },
        Side {
            ifname: "p0".into(),
            peer: sa(Line::P_IP, 6363),
        },
    )
}

fn small() -> Config {
    Config {
        frames: 2048,
        ..Config::default()
    }
}

fn bound(ip: &str) -> UdpSocket {
    let s = UdpSocket::bind((ip, 6363)).expect("bind");
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    s
}

/// A UDP "Interest" crosses consumer → producer with the router's headers (read raw at the
/// producer through AF_XDP: MACs, addresses, ports, TTL, checksums, payload), a "Data" comes
/// back producer → consumer through the kernel sockets (which drop a bad checksum), and a
/// ping is dropped as not UDP; the counters match exactly.
#[test]
fn forwards_udp_both_ways_with_rewritten_headers() {
    if !root_or_skip() {
        return;
    }
    let line = Line::new();

    // The router: first the refusals, then the forwarder itself.
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = mpsc::channel();
    let flag = stop.clone();
    let router = spawn_in(&line.r.0, move || {
        let (a, b) = sides();
        let crossed = Side {
            ifname: "c0".into(),
            peer: b.peer,
        };
        let e = L3Fwd::open(&crossed, &b, small()).unwrap_err();
        assert!(
            matches!(&e, Error::Config(m) if m.contains("not c0")),
            "a peer behind the other interface is refused: {e}"
        );
        let e = L3Fwd::open(
            &Side {
                ifname: "nope0".into(),
                peer: a.peer,
            },
            &b,
            small(),
        )
        .unwrap_err();
        assert!(matches!(e, Error::NoInterface(_)), "{e}");
        let mut fwd = L3Fwd::open(&a, &b, small()).expect("open forwarder");
        ready_tx.send(()).unwrap();
        fwd.run(&flag, None)
    });
    ready_rx.recv().unwrap();

    // The producer: raw frames through AF_XDP on every queue of eth0 (so the headers can be
    // read), answers from a kernel socket.
    let (p_ready_tx, p_ready_rx) = mpsc::channel();
    let producer = spawn_in(&line.p.0, move || {
        let cfg = PortConfig {
            umem: UmemConfig {
                frame_count: 2048,
                meta_len: 0,
                ..UmemConfig::default()
            },
            ..PortConfig::default()
        };
        let mut eps: Vec<_> = (0..2)
            .map(|q| Port::open("eth0", q, &cfg).unwrap().into_endpoints())
            .map(|mut v| v.remove(0))
            .collect();
        let mut prog = RedirectProgram::attach("eth0", 1, false).expect("attach");
        for (q, ep) in (0..).zip(&eps) {
            prog.insert(q, 0, &ep.as_raw_fd()).unwrap();
        }
        let sock = bound(Line::P_IP);
        p_ready_tx.send(()).unwrap();
        let mut got = Vec::new();
        let mut other = 0;
        let mut frames = Vec::new();
        wait_until(10, || {
            for ep in &mut eps {
                ep.rx_burst(&mut frames, 64);
                for f in frames.drain(..) {
                    let bytes = ep.frame(&f).first().to_vec();
                    ep.release(f);
                    match wire::parse(&bytes, bytes.len()) {
                        Some(p) if p.encap == Encap::UdpV4 => got.push((bytes, p)),
                        _ => other += 1,
                    }
                }
                ep.recycle();
            }
            got.len() >= N
        });
        // Answer each Interest from the kernel socket, to whoever the headers name.
        for (bytes, p) in &got {
            let name = std::str::from_utf8(&bytes[p.payload.clone()]).unwrap();
            let data = name.replace("interest", "data");
            sock.send_to(data.as_bytes(), p.src.unwrap()).unwrap();
        }
        (got, other)
    });
    p_ready_rx.recv().unwrap();

    // The consumer: Interests to the router's address, as to ndx.
    let consumer = spawn_in(&line.c.0, move || {
        let s = bound(Line::C_IP);
        for i in 0..N {
            s.send_to(format!("interest-{i}").as_bytes(), (Line::RC_IP, 6363))
                .unwrap();
            if i % 16 == 15 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let mut back = Vec::new();
        let mut buf = [0u8; 2048];
        wait_until(10, || {
            if let Ok((n, from)) = s.recv_from(&mut buf) {
                back.push((String::from_utf8_lossy(&buf[..n]).into_owned(), from));
            }
            back.len() >= N
        });
        back
    });
    let (got, other) = producer.join().unwrap();
    let back = consumer.join().unwrap();

    // Not UDP: two pings from the consumer to the router are dropped by the forwarder.
    let ping = Command::new("ip")
        .args([
            "netns", "exec", &line.c.0, "ping", "-c", "2", "-i", "0.2", "-W", "1",
        ])
        .arg(Line::RC_IP)
        .output()
        .expect("ping");
    assert!(
        !ping.status.success(),
        "nothing answers a ping through the forwarder"
    );
    // The last ping left a second ago; give a descheduled forwarder time to take it too.
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let st = router.join().unwrap();

    assert_eq!(other, 0, "only the Interests reach the producer");
    assert_eq!(got.len(), N, "every Interest crossed; forwarder {st:?}");
    let mut names: Vec<String> = Vec::new();
    for (bytes, p) in &got {
        assert_eq!(p.src_mac, Line::RP_MAC, "source MAC: the router's p0");
        assert_eq!(p.dst_mac, Line::P_MAC, "destination MAC: the producer's");
        assert_eq!(
            p.src,
            Some(sa(Line::RP_IP, 6363)),
            "from the router's p0 address"
        );
        assert_eq!(p.dst, Some(sa(Line::P_IP, 6363)), "to the producer");
        assert_eq!(bytes[14 + 8], 64, "TTL 64");
        assert!(wire::checksums_ok(bytes, p), "IPv4 and UDP checksums");
        assert_ne!(bytes[40..42], [0, 0], "UDP checksum computed, not zero");
        names.push(String::from_utf8(bytes[p.payload.clone()].to_vec()).unwrap());
    }
    names.sort();
    let mut want: Vec<String> = (0..N).map(|i| format!("interest-{i}")).collect();
    want.sort();
    assert_eq!(names, want);

    assert_eq!(back.len(), N, "every Data came back; forwarder {st:?}");
    let mut datas: Vec<String> = Vec::new();
    for (d, from) in back {
        assert_eq!(
            from,
            sa(Line::RC_IP, 6363),
            "Data from the router's c0 address"
        );
        datas.push(d);
    }
    datas.sort();
    let mut want: Vec<String> = (0..N).map(|i| format!("data-{i}")).collect();
    want.sort();
    assert_eq!(datas, want);

    assert_eq!(st.a_to_b.forwarded, N as u64, "{st:?}");
    assert_eq!(st.b_to_a.forwarded, N as u64, "{st:?}");
    assert_eq!(st.a_to_b.not_udp, 2, "the pings: {st:?}");
    assert_eq!(st.a_to_b.rx, N as u64 + 2, "{st:?}");
    assert_eq!(st.b_to_a.dropped() + st.a_to_b.tx_full, 0, "{st:?}");
}
