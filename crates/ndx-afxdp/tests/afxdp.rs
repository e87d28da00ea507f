//! Root-only: real AF_XDP sockets on a veth pair in throwaway namespaces.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use common::{
    A_IP, A_IP6, A_MAC, B_IP, B_IP6, B_MAC, Pair, root_or_skip, spawn_in, udp_a, wait_until,
};
use ndx_afxdp::wire::{self, Encap, UdpHeaders};
use ndx_afxdp::xdp::{META_MAGIC, RedirectProgram};
use ndx_afxdp::{Endpoint, Exchange, KeptFrame, Port, PortConfig, RxFrame, UmemConfig};

fn small_cfg(sockets: u32) -> PortConfig {
    PortConfig {
        umem: UmemConfig {
            frame_count: 4096,
            ..UmemConfig::default()
        },
        sockets,
        ..PortConfig::default()
    }
}

/// Sends `n` datagrams "ndx-<i>" (padded to `size`) from A_IP:5000 to B_IP:6363.
fn send_from_a(pair: &Pair, n: usize, size: usize) {
    send_tagged(pair, 5000, "ndx", n, size);
}

/// Sends `n` datagrams "<tag>-<i>" (padded to `size`) from A_IP:`port` to B_IP:6363.
/// (A second sender in one test takes another port: a process that another test's thread
/// forks may hold the first socket, and its port, until it execs.)
fn send_tagged(pair: &Pair, port: u16, tag: &'static str, n: usize, size: usize) {
    spawn_in(&pair.a.0, move || {
        let s = udp_a(port);
        for i in 0..n {
            let mut p = format!("{tag}-{i}").into_bytes();
            p.resize(size.max(p.len()), b'.');
            s.send_to(&p, (B_IP, 6363)).expect("send");
            if i % 32 == 31 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    })
    .join()
    .unwrap();
}

/// The payload of a test datagram (UDP to port 6363); `None` for the kernel's
/// own chatter (IPv6 ND, MLD...) that the redirect program also steers to us.
fn ours(bytes: &[u8], total: usize) -> Option<wire::Parsed> {
    wire::parse(bytes, total).filter(|p| p.dst.is_some_and(|d| d.port() == 6363))
}

fn drain(ep: &mut Endpoint, out: &mut Vec<RxFrame>) -> usize {
    let n = ep.rx_burst(out, 64);
    ep.poll();
    n
}

/// Drains `ep` until its receive ring is empty, releasing every frame, and ends with a poll
/// (the releases posted): the kernel's own chatter (IPv6 ND, MLD) may land at any moment,
/// and a frame it took from the fill ring and left in the receive ring counts as neither
/// free nor kept. Returns how many frames it released, and how many of them were test
/// datagrams ([`ours`]).
fn settle(ep: &mut Endpoint, fr: &mut Vec<RxFrame>) -> (usize, usize) {
    let (mut n, mut test) = (0, 0);
    while drain(ep, fr) > 0 {
        for f in fr.drain(..) {
            test += usize::from(ours(ep.frame(&f).first(), f.len()).is_some());
            ep.release(f);
            n += 1;
        }
    }
    (n, test)
}

/// One receive turn: takes a burst, shows each frame to `each`, releases it, and returns how
/// many were test datagrams ([`ours`]).
fn drain_ours(
    ep: &mut Endpoint,
    fr: &mut Vec<RxFrame>,
    mut each: impl FnMut(&Endpoint, &RxFrame),
) -> usize {
    drain(ep, fr);
    let mut n = 0;
    for f in fr.drain(..) {
        each(ep, &f);
        n += usize::from(ours(ep.frame(&f).first(), f.len()).is_some());
        ep.release(f);
    }
    n
}

/// The veth pair of a root test, or `None` when it skips ([`root_or_skip`]).
fn root_pair(mtu: u32) -> Option<Pair> {
    root_or_skip().then(|| Pair::new(mtu))
}

/// The one socket of a one-socket port on b0 (run inside b's namespace).
fn open_b0() -> Endpoint {
    Port::open("b0", 0, &small_cfg(1))
        .unwrap()
        .into_endpoints()
        .remove(0)
}

/// Attaches a redirect program with `slots` sockets a queue on b0 (writing metadata or not)
/// and puts `eps` in queue 0's slots 0, 1, ...; keep it alive as long as the test receives.
fn redirect_b0(slots: u32, meta: bool, eps: &[&Endpoint]) -> RedirectProgram {
    let mut prog = RedirectProgram::attach("b0", slots, meta).expect("attach");
    for (slot, ep) in (0..).zip(eps) {
        prog.insert(0, slot, &ep.as_raw_fd()).unwrap();
    }
    prog
}

/// [`open_b0`] with every frame of queue 0 redirected to it (no metadata).
fn listen_b0() -> (Endpoint, RedirectProgram) {
    let ep = open_b0();
    let prog = redirect_b0(1, false, &[&ep]);
    (ep, prog)
}

/// A stop flag and the clone a receiving thread polls.
fn stop_flag() -> (Arc<AtomicBool>, Arc<AtomicBool>) {
    let flag = Arc::new(AtomicBool::new(false));
    (flag.clone(), flag)
}

/// Sends `n` datagrams from A ([`send_from_a`]), gives the receiver half a second, then
/// raises `done`.
fn send_then_stop(pair: &Pair, n: usize, done: &AtomicBool) {
    send_from_a(pair, n, 0);
    std::thread::sleep(Duration::from_millis(500));
    done.store(true, Ordering::Relaxed);
}

/// Whether `ep`'s kernel completes `n` transmitted descriptors within 5 s.
fn tx_completes(ep: &mut Endpoint, n: u64) -> bool {
    wait_until(5, || {
        ep.complete();
        ep.counters().tx_completed >= n
    })
}

/// UDP headers for a frame from b0 (`src`) to a0 (`dst`).
fn b_to_a(src: SocketAddr, dst: SocketAddr) -> UdpHeaders {
    UdpHeaders {
        src_mac: B_MAC,
        dst_mac: A_MAC,
        src,
        dst,
        ttl: 64,
    }
}

/// The first datagram `s` receives within `tries` read timeouts.
fn recv_within(s: &UdpSocket, buf: &mut [u8], tries: usize) -> Option<(Vec<u8>, SocketAddr)> {
    (0..tries).find_map(|_| {
        s.recv_from(buf)
            .ok()
            .map(|(n, from)| (buf[..n].to_vec(), from))
    })
}

#[test]
fn receives_kernel_udp_with_metadata() {
    let Some(pair) = root_pair(1500) else {
        return;
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let rx = spawn_in(&pair.b.0, move || {
        let mut port = Port::open("b0", 0, &small_cfg(1)).expect("open port");
        let ep = &mut port.endpoints_mut()[0];
        let _prog = redirect_b0(1, true, &[&*ep]);
        let free0 = ep.free_frames();
        ready_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        let mut got = Vec::new();
        let mut frames = Vec::new();
        // Every frame received, the kernel's chatter included.
        let mut received = 0;
        wait_until(10, || {
            received += drain(ep, &mut frames);
            for f in frames.drain(..) {
                let v = ep.frame(&f);
                let meta = v.meta().expect("metadata present").to_vec();
                if let Some(p) = ours(v.first(), f.len()) {
                    got.push((
                        meta,
                        p.encap,
                        p.src.unwrap(),
                        p.dst.unwrap(),
                        v.first()[p.payload].to_vec(),
                    ));
                }
                ep.release(f);
            }
            got.len() >= 100
        });
        received += settle(ep, &mut frames).0;
        (got, received, free0, ep.free_frames(), ep.counters())
    });
    ready_rx.recv().unwrap();
    send_from_a(&pair, 100, 0);
    go_tx.send(()).unwrap();
    let (got, received, free0, free1, c) = rx.join().unwrap();
    assert_eq!(got.len(), 100, "counters {c:?}");
    let mut payloads: Vec<String> = got
        .iter()
        .map(|g| String::from_utf8(g.4.clone()).unwrap())
        .collect();
    payloads.sort();
    let mut want: Vec<String> = (0..100).map(|i| format!("ndx-{i}")).collect();
    want.sort();
    assert_eq!(payloads, want);
    for (meta, encap, src, dst, _) in &got {
        assert_eq!(meta.len(), 16);
        assert_eq!(u16::from_ne_bytes([meta[14], meta[15]]), META_MAGIC);
        assert_eq!(*encap, Encap::UdpV4);
        assert_eq!(src.to_string(), format!("{A_IP}:5000"));
        assert_eq!(dst.to_string(), format!("{B_IP}:6363"));
    }
    assert_eq!(
        c.rx_packets, received as u64,
        "every frame received counted"
    );
    assert_eq!(free0, free1, "frames leaked");
}

#[test]
fn reflects_back_to_kernel_socket() {
    let Some(pair) = root_pair(1500) else {
        return;
    };
    let (stop, stop2) = stop_flag();
    let (ready_tx, ready_rx) = mpsc::channel();
    let refl = spawn_in(&pair.b.0, move || {
        let (mut ep, _prog) = listen_b0();
        ready_tx.send(()).unwrap();
        ndx_afxdp::reflector::reflect(&mut ep, |_| stop2.load(Ordering::Relaxed))
    });
    ready_rx.recv().unwrap();
    let got = spawn_in(&pair.a.0, || {
        let s = udp_a(5000);
        let mut got = Vec::new();
        let mut buf = [0u8; 2048];
        for i in 0..50 {
            s.send_to(format!("echo-{i}").as_bytes(), (B_IP, 6363))
                .unwrap();
            if let Ok((n, from)) = s.recv_from(&mut buf) {
                assert_eq!(from.to_string(), format!("{B_IP}:6363"));
                got.push(String::from_utf8(buf[..n].to_vec()).unwrap());
            }
        }
        got
    })
    .join()
    .unwrap();
    stop.store(true, Ordering::Relaxed);
    let st = refl.join().unwrap();
    assert!(
        got.len() >= 45,
        "only {} of 50 came back ({st:?})",
        got.len()
    );
    for g in &got {
        assert!(g.starts_with("echo-"));
    }
    assert!(st.tx_packets >= got.len() as u64);
}

#[test]
fn two_sockets_share_one_queue_and_umem() {
    let Some(pair) = root_pair(1500) else {
        return;
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let (done, done2) = stop_flag();
    let main = spawn_in(&pair.b.0, move || {
        let mut eps = Port::open("b0", 0, &small_cfg(2)).unwrap().into_endpoints();
        let _prog = redirect_b0(2, false, &[&eps[0], &eps[1]]);
        let mut second = eps.pop().unwrap();
        let mut owner = eps.pop().unwrap();
        assert!(owner.is_owner() && !second.is_owner());
        // The second socket runs on its own thread, as a shard would.
        let d = done2.clone();
        let t = std::thread::spawn(move || {
            let mut n = 0;
            let mut fr = Vec::new();
            while !d.load(Ordering::Relaxed) {
                n += drain_ours(&mut second, &mut fr, |ep, f| {
                    // This program writes no metadata: the area reads as zeros.
                    assert_eq!(ep.frame(f).meta(), Some(&[0u8; 16][..]));
                });
            }
            // A frame the kernel put in the RX ring after the last turn is still a frame of
            // the pool: release it too, ours or not.
            n += settle(&mut second, &mut fr).1;
            (n, second.free_frames())
        });
        ready_tx.send(()).unwrap();
        let mut n0 = 0;
        let mut fr = Vec::new();
        while !done2.load(Ordering::Relaxed) {
            n0 += drain_ours(&mut owner, &mut fr, |_, _| {});
        }
        let (n1, free_second) = t.join().unwrap();
        // The owner's late frames too (see above); its last poll collects the second
        // socket's returns.
        n0 += settle(&mut owner, &mut fr).1;
        (n0, n1, owner.free_frames() + free_second)
    });
    ready_rx.recv().unwrap();
    send_then_stop(&pair, 200, &done);
    let (n0, n1, free) = main.join().unwrap();
    assert_eq!(n0 + n1, 200, "owner {n0} second {n1}");
    assert!(n0 > 0 && n1 > 0, "owner {n0} second {n1}");
    assert_eq!(free, 4096, "all frames back in the pools");
}

#[test]
fn jumbo_multi_buffer_round_trip() {
    let Some(pair) = root_pair(9000) else {
        return;
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let b = spawn_in(&pair.b.0, move || {
        let (mut ep, _prog) = listen_b0();
        ready_tx.send(()).unwrap();
        let mut fr = Vec::new();
        let mut mine = None;
        assert!(
            wait_until(10, || {
                drain(&mut ep, &mut fr);
                for f in fr.drain(..) {
                    let mut whole = Vec::new();
                    ep.frame(&f).copy_to(&mut whole);
                    if mine.is_none() && ours(&whole, whole.len()).is_some() {
                        mine = Some(f);
                    } else {
                        ep.release(f);
                    }
                }
                mine.is_some()
            }),
            "nothing received"
        );
        let f = mine.unwrap();
        // The chain crosses to another thread as its 16-byte handle (its segment table stays
        // in its first frame) and is read there whole, then comes back.
        let (mut tx, mut rx) = Exchange::new(4);
        let umem = ep.umem();
        tx.send(f).unwrap();
        let there = std::thread::spawn(move || {
            let f = loop {
                if let Some(f) = rx.recv() {
                    break f;
                }
            };
            let mut whole = Vec::new();
            umem.frame(&f)
                .expect("the port's frame")
                .copy_to(&mut whole);
            let segs = f.segments();
            rx.give_back(f);
            (segs, whole)
        })
        .join()
        .unwrap();
        let f = tx.reap().expect("given back");
        let segs = f.segments();
        let mut whole = Vec::new();
        ep.frame(&f).copy_to(&mut whole);
        assert_eq!(
            there,
            (segs, whole.clone()),
            "read alike on the other thread"
        );
        let p = wire::parse(&whole, whole.len()).unwrap();
        let payload = whole[p.payload.clone()].to_vec();
        ep.release(f);
        // Send it back as one multi-buffer packet: new headers + the payload, its UDP
        // checksum summed during the copy across the frames (an odd piece first).
        let h = b_to_a(p.dst.unwrap(), p.src.unwrap());
        let mut hdr = [0u8; 62];
        let (hl, sum) = wire::build_udp_header(&mut hdr, &h, payload.len()).unwrap();
        let (a, b) = payload.split_at(1001);
        ep.push_tx_udp(&[&hdr[..hl], a, b], sum).unwrap();
        ep.flush_tx();
        assert!(tx_completes(&mut ep, 3));
        ep.poll();
        (segs, whole.len(), payload, ep.kernel_stats().unwrap())
    });
    ready_rx.recv().unwrap();
    let back = spawn_in(&pair.a.0, || {
        let s = udp_a(5000);
        let mut p = vec![0u8; 8800];
        for (i, b) in p.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        s.send_to(&p, (B_IP, 6363)).unwrap();
        let mut buf = vec![0u8; 9000];
        let r = recv_within(&s, &mut buf, 25);
        (p, r)
    })
    .join()
    .unwrap();
    let (segs, len, payload, ks) = b.join().unwrap();
    assert!(segs >= 3, "8842-byte frame in {segs} segment(s)");
    assert_eq!(len, 8800 + 42);
    assert_eq!(payload, back.0);
    let (echo, from) = back
        .1
        .unwrap_or_else(|| panic!("no echo came back; kernel stats {ks:?}"));
    assert_eq!(from.to_string(), format!("{B_IP}:6363"));
    assert_eq!(echo, back.0, "echoed bytes differ");
    assert_eq!(ks.tx_invalid_descs, 0);
}

#[test]
fn exchange_hands_frames_to_another_thread_without_leaks() {
    let Some(pair) = root_pair(1500) else {
        return;
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let (done, done2) = stop_flag();
    let b = spawn_in(&pair.b.0, move || {
        let (mut ep, _prog) = listen_b0();
        let free0 = ep.free_frames();
        let (mut tx, mut rx) = Exchange::new(64);
        let umem = ep.umem();
        let (stop, stop2) = stop_flag();
        // The other shard: reads payloads through the UMEM handle, gives frames back.
        let other = std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !stop2.load(Ordering::Relaxed) {
                while let Some(f) = rx.recv() {
                    let v = umem.frame(&f).expect("same port");
                    if let Some(p) = ours(v.first(), f.len()) {
                        seen.push(String::from_utf8(v.first()[p.payload].to_vec()).unwrap());
                    }
                    rx.give_back(f);
                }
            }
            seen
        });
        ready_tx.send(()).unwrap();
        let mut fr = Vec::new();
        let mut backlog = std::collections::VecDeque::new();
        let mut sent = 0;
        while !done2.load(Ordering::Relaxed) || tx.in_flight() > 0 || !backlog.is_empty() {
            drain(&mut ep, &mut fr);
            backlog.extend(fr.drain(..));
            // A full exchange gives the frame back: keep it and retry.
            while let Some(f) = backlog.pop_front() {
                if let Err(f) = tx.send(f) {
                    backlog.push_front(f);
                    break;
                }
                sent += 1;
            }
            while let Some(f) = tx.reap() {
                ep.release(f);
            }
        }
        stop.store(true, Ordering::Relaxed);
        let seen = other.join().unwrap();
        settle(&mut ep, &mut fr);
        (sent, seen, free0, ep.free_frames(), ep.outstanding())
    });
    ready_rx.recv().unwrap();
    send_then_stop(&pair, 100, &done);
    let (sent, seen, free0, free1, outstanding) = b.join().unwrap();
    assert!(sent >= 100, "sent {sent}");
    assert_eq!(seen.len(), 100);
    assert!(seen.iter().all(|s| s.starts_with("ndx-")));
    assert_eq!(outstanding, 0);
    assert_eq!(free0, free1, "frames leaked");
}

/// Kept frames (the content store's zero-copy Data) stay out of the pool and unchanged while
/// the pool's frames cycle through the fill ring several times, come back whole on either
/// socket of the port, and keep the port's memory mapped if one outlives the port.
#[test]
fn kept_frames_outlive_their_burst_and_come_back() {
    let Some(pair) = root_pair(1500) else {
        return;
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<usize>();
    let b = spawn_in(&pair.b.0, move || {
        // 768 receive frames: the churn below recycles each of them several times. Two
        // sockets: kept frames may come back on either.
        let cfg = PortConfig {
            umem: UmemConfig {
                frame_count: 1024,
                ..UmemConfig::default()
            },
            sockets: 2,
            ..PortConfig::default()
        };
        let mut eps = Port::open("b0", 0, &cfg).unwrap().into_endpoints();
        let mut other = eps.pop().unwrap();
        let mut ep = eps.pop().unwrap();
        let prog = redirect_b0(1, false, &[&ep]);
        let free = |a: &Endpoint, b: &Endpoint| a.free_frames() + b.free_frames();
        let free0 = free(&ep, &other);
        let mut kept: Vec<(String, KeptFrame)> = Vec::new();
        let mut fr = Vec::new();
        let mut refused = 0;
        let mut churned = 0;
        ready_tx.send(()).unwrap();
        // Phase 1: keep the first 100 test datagrams ("ndx-<i>"), each from its payload on.
        let n = go_rx.recv().unwrap();
        let phase1 = wait_until(10, || {
            drain(&mut ep, &mut fr);
            for f in fr.drain(..) {
                let start = ours(ep.frame(&f).first(), f.len()).map(|p| p.payload);
                match start {
                    Some(p) if kept.len() < n => {
                        let len = f.len();
                        // A start past the packet is refused and the handle comes back.
                        let f = match ep.keep(f, len) {
                            Err(f) => {
                                refused += 1;
                                f
                            }
                            Ok(k) => panic!("kept an empty frame: {k:?}"),
                        };
                        let k = ep.keep(f, p.start).expect("single-buffer frame");
                        let text = String::from_utf8(k.as_ref().to_vec()).unwrap();
                        kept.push((text, k));
                    }
                    _ => ep.release(f),
                }
            }
            kept.len() >= n
        });
        settle(&mut ep, &mut fr);
        let held = (ep.kept(), free(&ep, &other));
        ready_tx.send(()).unwrap();
        // Phase 2: churn the pool with datagrams "zzz-<i>"; a kept frame handed to the kernel
        // meanwhile would be overwritten.
        let m = go_rx.recv().unwrap();
        let phase2 = wait_until(20, || {
            churned += drain_ours(&mut ep, &mut fr, |_, _| {});
            other.poll();
            churned >= m
        });
        let intact = kept
            .iter()
            .filter(|(text, k)| k.as_ref() == text.as_bytes())
            .count();
        // Phase 3: half come back on the other socket, all but one of the rest on this one;
        // the last outlives the port.
        let last = kept.pop().unwrap();
        for (i, (_, k)) in kept.drain(..).enumerate() {
            if i % 2 == 0 {
                other.release_kept(k);
            } else {
                ep.release_kept(k);
            }
        }
        other.poll();
        settle(&mut ep, &mut fr);
        let back = (ep.kept() + other.kept(), free(&ep, &other));
        drop(prog);
        drop(ep);
        drop(other);
        let after_close = last.1.as_ref() == last.0.as_bytes();
        (
            free0,
            (phase1, phase2, churned),
            held,
            refused,
            intact,
            back,
            after_close,
        )
    });
    ready_rx.recv().unwrap();
    go_tx.send(100).unwrap();
    send_from_a(&pair, 100, 0);
    ready_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("phase 1 done");
    go_tx.send(3000).unwrap();
    send_tagged(&pair, 5001, "zzz", 3000, 200);
    let (free0, (phase1, phase2, churned), (kept, free_held), refused, intact, back, after_close) =
        b.join().unwrap();
    assert!(phase1, "100 datagrams not received");
    assert!(
        phase2 && churned >= 3000,
        "{churned} of 3000 churn datagrams"
    );
    assert_eq!(kept, 100);
    assert_eq!(refused, 100, "a start past the packet is refused");
    assert_eq!(free_held, free0 - 100, "kept frames are out of the pool");
    assert_eq!(intact, 100, "a kept frame was reused while kept");
    assert_eq!(back, (1, free0 - 1), "all but one kept frame came back");
    assert!(
        after_close,
        "the last kept frame reads the same after the port closed"
    );
}

/// Frames built by `wire::build_udp` (IPv4 and IPv6) and sent with `tx_burst`
/// are accepted by the peer's kernel, which verifies both checksums.
#[test]
fn built_udp_frames_pass_kernel_checksums() {
    kernel_accepts_built_frames(false);
}

/// The same with the UDP checksum summed during the copy into the frame
/// (`wire::build_udp_header` + `Endpoint::push_tx_udp`).
#[test]
fn fused_udp_frames_pass_kernel_checksums() {
    kernel_accepts_built_frames(true);
}

fn kernel_accepts_built_frames(fused: bool) {
    let Some(pair) = root_pair(1500) else {
        return;
    };
    let (ready_tx, ready_rx) = mpsc::channel();
    let (sent_tx, sent_rx) = mpsc::channel();
    let recv = spawn_in(&pair.a.0, move || {
        let s4 = udp_a(5000);
        let s6 = UdpSocket::bind((A_IP6.parse::<std::net::Ipv6Addr>().unwrap(), 5000)).unwrap();
        s6.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        ready_tx.send(()).unwrap();
        sent_rx.recv().unwrap();
        let mut buf = [0u8; 2048];
        [&s4, &s6]
            .into_iter()
            .filter_map(|s| recv_within(s, &mut buf, 20).map(|(p, from)| (from, p)))
            .collect::<Vec<_>>()
    });
    ready_rx.recv().unwrap();
    spawn_in(&pair.b.0, move || {
        let mut ep = open_b0();
        let mut frames: Vec<Vec<u8>> = Vec::new();
        for (i, (src, dst)) in [
            (format!("{B_IP}:6363"), format!("{A_IP}:5000")),
            (format!("[{B_IP6}]:6363"), format!("[{A_IP6}]:5000")),
        ]
        .iter()
        .enumerate()
        {
            let h = b_to_a(src.parse().unwrap(), dst.parse().unwrap());
            // Odd-length payload in two pieces exercises the split checksum.
            let (p1, p2) = (b"ndx-", format!("built-{i}-xyz"));
            let mut hdr = [0u8; 62];
            if fused {
                let plen = p1.len() + p2.len();
                let (hl, sum) = wire::build_udp_header(&mut hdr, &h, plen).unwrap();
                ep.push_tx_udp(&[&hdr[..hl], p1, p2.as_bytes()], sum)
                    .unwrap();
                continue;
            }
            let hl = wire::build_udp(&mut hdr, &h, &[p1, p2.as_bytes()]).unwrap();
            let mut f = hdr[..hl].to_vec();
            f.extend_from_slice(p1);
            frames.push(f);
            frames.push(p2.into_bytes());
        }
        if fused {
            ep.flush_tx();
        } else {
            let g4: [&[u8]; 2] = [&frames[0], &frames[1]];
            let g6: [&[u8]; 2] = [&frames[2], &frames[3]];
            assert_eq!(ep.tx_burst([&g4[..], &g6[..]]), 2);
        }
        assert!(tx_completes(&mut ep, 2));
        assert_eq!(ep.kernel_stats().unwrap().tx_invalid_descs, 0);
    })
    .join()
    .unwrap();
    sent_tx.send(()).unwrap();
    let got = recv.join().unwrap();
    let texts: Vec<String> = got
        .iter()
        .map(|g| String::from_utf8(g.1.clone()).unwrap())
        .collect();
    assert_eq!(
        texts,
        vec!["ndx-built-0-xyz".to_owned(), "ndx-built-1-xyz".to_owned()],
        "{got:?}"
    );
    assert_eq!(got[0].0.to_string(), format!("{B_IP}:6363"));
    assert_eq!(got[1].0.to_string(), format!("[{B_IP6}]:6363"));
}

#[test]
fn open_errors_are_clean() {
    if !root_or_skip() {
        return;
    }
    let e = Port::open("ndx-no-such0", 0, &small_cfg(1)).unwrap_err();
    assert!(
        matches!(e, ndx_afxdp::Error::NoInterface(ref n) if n == "ndx-no-such0"),
        "{e}"
    );
    let e = Port::open("lo", 0, &small_cfg(0)).unwrap_err();
    assert!(matches!(e, ndx_afxdp::Error::Config(_)), "{e}");
    let too_many_tx = PortConfig {
        tx_frames: Some(4096),
        ..small_cfg(1)
    };
    assert!(matches!(
        Port::open("lo", 0, &too_many_tx),
        Err(ndx_afxdp::Error::Config(_))
    ));
    let odd_ring = PortConfig {
        rx_ring: 1000,
        ..small_cfg(1)
    };
    assert!(matches!(
        Port::open("lo", 0, &odd_ring),
        Err(ndx_afxdp::Error::Config(_))
    ));
    for (tx_budget, busy_poll) in [(Some(16), None), (Some(4096), None), (None, Some(0))] {
        let bad = PortConfig {
            tx_budget,
            busy_poll,
            ..small_cfg(1)
        };
        let e = Port::open("lo", 0, &bad).unwrap_err();
        assert!(matches!(e, ndx_afxdp::Error::Config(_)), "{e}");
    }
}

/// Whether the running kernel is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut v = r.split(['.', '-']).map(|p| p.parse::<u32>().unwrap_or(0));
    (v.next().unwrap_or(0), v.next().unwrap_or(0)) >= (major, minor)
}

/// Copy mode transmits at most the socket's TX budget per `sendto`: with the kernel's 32 a
/// burst of 256 frames takes several kicks in one flush; with the default (the whole TX
/// ring, Linux 6.17+) one kick sends it all. Either way every frame completes.
#[test]
fn tx_budget_sets_frames_per_kick() {
    let Some(pair) = root_pair(1500) else {
        return;
    };
    spawn_in(&pair.b.0, move || {
        let h = b_to_a(
            format!("{B_IP}:6363").parse().unwrap(),
            format!("{A_IP}:5000").parse().unwrap(),
        );
        let mut hdr = [0u8; 62];
        let payload = [0x5au8; 100];
        let hl = wire::build_udp(&mut hdr, &h, &[&payload]).unwrap();
        let g: [&[u8]; 2] = [&hdr[..hl], &payload];
        let burst = vec![&g[..]; 256];
        let mut kicks = Vec::new();
        for budget in [Some(32), None] {
            let cfg = PortConfig {
                tx_budget: budget,
                force_copy: true,
                ..small_cfg(1)
            };
            // The previous socket's queue is released from a work queue: retry a moment.
            let mut port = None;
            assert!(wait_until(5, || {
                port = Port::open("b0", 0, &cfg).ok();
                port.is_some()
            }));
            let mut ep = port.unwrap().into_endpoints().remove(0);
            assert_eq!(ep.tx_burst(burst.iter().copied()), 256);
            assert!(
                tx_completes(&mut ep, 256),
                "{budget:?}: {:?}",
                ep.counters()
            );
            let c = ep.counters();
            assert_eq!(c.kick_rounds, 1, "{budget:?}: {c:?}");
            assert_eq!(c.kick_errors, 0, "{budget:?}: {c:?}");
            kicks.push(c.kicks);
        }
        assert!(kicks[0] >= 256 / 32, "budget 32: {kicks:?}");
        if kernel_at_least(6, 17) {
            assert_eq!(kicks[1], 1, "the whole ring per call: {kicks:?}");
        }
    })
    .join()
    .unwrap();
}
