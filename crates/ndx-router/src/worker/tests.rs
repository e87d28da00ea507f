//! The worker's logic without root: real shards, face table, exchange and hand-off rings,
//! on the in-memory sockets of [`super::fake`], on virtual time.
//!
//! The topology: a consumer at 10.0.1.1 behind port 0 (interface 1), a producer at 10.0.2.1
//! behind port 1 (interface 2), `/p` routed to the producer; each shard has one socket on
//! each port (socket index = shard number).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, sync_channel};

use ndx_afxdp::Exchange;
use ndx_codec::{
    DataRepr, InterestRepr, LpHeaders, NameBuf, Packet, Reassembler, ReassemblerConfig,
};
use ndx_core::{
    CsConfig, Dispatch, DispatchMode, FaceId, FaceInfo, Fairness, Fib, NextHop, ShardConfig,
    Unsolicited,
};

use super::fake::{FakeKept, FakePort, FakeRx, FakeSocket, Fate};
use super::*;
use crate::config::{Idle, OnDemandLimits};
use crate::faces::{FaceReader, Faces, OnDemand};
use crate::reload::{Live, LiveSettings};

/// Port (and interface index - 1) of the consumer side.
const A: usize = 0;
/// Port of the producer side.
const B: usize = 1;
const UDP_PORT: u16 = 6363;
const ROUTER_MAC: [[u8; 6]; 2] = [[2, 0, 0, 0, 0, 0xa], [2, 0, 0, 0, 0, 0xb]];
const PEER_MAC: [[u8; 6]; 2] = [[2, 0, 0, 0, 1, 0xa], [2, 0, 0, 0, 1, 0xb]];

fn router_addr(port: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, port as u8 + 1, 2], UDP_PORT))
}

fn peer_addr(port: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, port as u8 + 1, 1], UDP_PORT))
}

/// The test network's settings.
#[derive(Debug, Clone, Copy)]
struct Opts {
    shards: usize,
    /// The CS keeps receive frames (zero-copy admission).
    keep: bool,
    /// On-demand faces and their bounds (`None`: off).
    on_demand: Option<OnDemandLimits>,
    /// Each interface's MTU.
    mtu: [usize; 2],
    /// Receive frames of each port.
    pool: usize,
    /// CS capacity (entries).
    cs: usize,
    /// Transmit ring of each socket (packets).
    tx_ring: usize,
}

impl Default for Opts {
    fn default() -> Self {
        Self {
            shards: 1,
            keep: false,
            on_demand: None,
            mtu: [9000, 9000],
            pool: 1024,
            cs: 1024,
            tx_ring: 1024,
        }
    }
}

/// Shards on fake sockets, stepped by hand.
struct Net {
    ports: Vec<FakePort>,
    workers: Vec<Worker<FakeSocket>>,
    turns: Vec<Turns<FakeRx>>,
    events: Receiver<Event>,
    dispatch: Dispatch,
    now: u64,
    stop: AtomicBool,
    producer: FaceId,
    /// The interfaces' link states, as the control thread sets them.
    links: Arc<crate::iface::LinkStates>,
    /// Kept alive: the published tables the workers read.
    _faces: Faces,
    _fib: Fib,
}

impl Net {
    fn new(o: Opts) -> Net {
        let n = o.shards;
        let shard_cfg = ShardConfig {
            cs: CsConfig {
                capacity: o.cs,
                ..CsConfig::default()
            },
            ..ShardConfig::default()
        };
        let (mut faces, table, ids) = Faces::new();
        let mut face_to = |port: usize| {
            let id = faces
                .add(
                    format!("peer{port}"),
                    Link::Udp(peer_addr(port)),
                    FaceInfo::default(),
                    crate::faces::Origin::Config,
                )
                .unwrap();
            faces
                .set_path(
                    id,
                    Some(L2Path {
                        ifindex: port as u32 + 1,
                        src_mac: ROUTER_MAC[port],
                        dst_mac: PEER_MAC[port],
                        src: Some(router_addr(port)),
                    }),
                )
                .unwrap();
            id
        };
        face_to(A);
        let producer = face_to(B);
        faces.publish();
        let (mut fib, fib_reader) = Fib::new(shard_cfg.hash_key, 2);
        fib.add_nexthop(
            &name("/p").as_name(),
            NextHop {
                face: producer,
                cost: 1,
            },
        )
        .unwrap();
        fib.publish();
        let reader = FaceReader {
            table,
            ids,
            on_demand: OnDemand::new(o.on_demand.unwrap_or_default()),
        };
        let dispatch = Dispatch::new(shard_cfg.hash_key, DispatchMode::Content, n, 256).unwrap();
        let mut redispatch = crate::runtime::redispatch_mesh(n, &dispatch).into_iter();
        let ports: Vec<FakePort> = (0..2).map(|p| FakePort::new(p as u32, o.pool, n)).collect();
        let ifaces = Arc::new(
            (0..2)
                .map(|p| IfaceInfo {
                    name: format!("fake{p}"),
                    ifindex: p as u32 + 1,
                    mac: ROUTER_MAC[p],
                    mtu: o.mtu[p],
                })
                .collect::<Vec<_>>(),
        );
        let links = Arc::new(crate::iface::LinkStates::new([1, 2]));
        let live = Live::new(LiveSettings {
            fairness: Fairness::default(),
            max_lifetime_ms: 120_000,
            unsolicited: Unsolicited::Drop,
            on_demand: o.on_demand.is_some(),
            idle: Idle::Spin,
        });
        // Exchange rings, full mesh (as the runtime builds them).
        let mut to: Vec<Vec<Option<ExchangeSender<FakeRx>>>> =
            (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
        let mut from: Vec<Vec<ExchangeReceiver<FakeRx>>> = (0..n).map(|_| Vec::new()).collect();
        for (a, row) in to.iter_mut().enumerate() {
            for (b, slot) in row.iter_mut().enumerate() {
                if a != b {
                    let (tx, rx) = Exchange::of(64);
                    *slot = Some(tx);
                    from[b].push(rx);
                }
            }
        }
        let (ev_tx, events) = sync_channel(64);
        let heartbeats = crate::watchdog::Heartbeats::new(n);
        let mut workers = Vec::new();
        for (s, (to, from)) in to.into_iter().zip(from).enumerate() {
            let cfg = ShardConfig {
                shard: s as u8,
                ..shard_cfg
            };
            let mut shard = if o.keep {
                Shard::with_frames::<FakeKept>(cfg, fib_reader.clone(), 0)
            } else {
                Shard::copying::<FakeKept>(cfg, fib_reader.clone(), 0)
            };
            for f in faces.table().iter() {
                shard.add_face(f.id, f.info);
            }
            let core = Core::new(
                s as u8,
                shard,
                reader.clone(),
                ev_tx.clone(),
                WorkerConfig {
                    burst: 64,
                    idle: Idle::Spin,
                    udp_port: UDP_PORT,
                    on_demand: o.on_demand.is_some(),
                    ip_fragments: false,
                    ifaces: ifaces.clone(),
                    links: links.clone(),
                    live: live.clone(),
                },
                redispatch.next().flatten(),
            );
            let eps = (0..2)
                .map(|p| Ep::new(ports[p].socket(s, o.tx_ring), p as u32 + 1, o.keep))
                .collect::<Vec<_>>();
            workers.push(Worker {
                me: s as u8,
                ports: eps.iter().map(|e| (e.mem.clone(), e.ifindex)).collect(),
                eps,
                to,
                from,
                stats: Arc::new(crate::stats::ShardStats::default()),
                core,
                heartbeat: heartbeats.beat_for(s),
            });
        }
        let turns = workers.iter().map(Worker::turns).collect();
        Net {
            ports,
            workers,
            turns,
            events,
            dispatch,
            now: 0,
            stop: AtomicBool::new(false),
            producer,
            links,
            _faces: faces,
            _fib: fib,
        }
    }

    /// `k` loop turns of every shard, 20 µs apart.
    fn run(&mut self, k: usize) {
        for _ in 0..k {
            self.now += 20_000;
            for (w, t) in self.workers.iter_mut().zip(&mut self.turns) {
                w.turn(self.now, t, &self.stop);
            }
        }
    }

    /// A counter of shard `s`.
    fn count(&self, s: usize, c: Io) -> u64 {
        self.workers[s].core.snap.value(c)
    }

    /// A packet from the peer behind `port` reaches shard `s`'s socket there; returns the
    /// frame's id.
    fn arrive_from_peer(&self, port: usize, s: usize, ndn: &[u8], meta: Option<[u8; 16]>) -> u64 {
        self.arrive_from(port, s, peer_addr(port), ndn, meta)
    }

    /// A packet from `src` (a peer behind `port`) reaches shard `s`'s socket there; returns
    /// the frame's id.
    fn arrive_from(
        &self,
        port: usize,
        s: usize,
        src: SocketAddr,
        ndn: &[u8],
        meta: Option<[u8; 16]>,
    ) -> u64 {
        self.ports[port].arrive(s, udp_frame(port, src, ndn), meta)
    }

    /// One loop turn of shard `s` alone, 20 µs after the last.
    fn turn(&mut self, s: usize) {
        self.now += 20_000;
        self.workers[s].turn(self.now, &mut self.turns[s], &self.stop);
    }

    /// The NDN packets shard `s` sent out of `port` (each checked to be addressed from the
    /// router to `dst`).
    fn sent(&self, port: usize, s: usize, dst: SocketAddr) -> Vec<Vec<u8>> {
        self.ports[port]
            .take_sent(s)
            .into_iter()
            .map(|f| {
                let p = wire::parse(&f, f.len()).expect("a frame the parser takes");
                assert!(wire::checksums_ok(&f, &p), "checksums");
                assert_eq!(p.src, Some(router_addr(port)));
                assert_eq!(p.dst, Some(dst));
                assert_eq!((p.src_mac, p.dst_mac), (ROUTER_MAC[port], PEER_MAC[port]));
                f[p.payload].to_vec()
            })
            .collect()
    }

    /// The Data shard `s` sent out of `port` to `dst` ([`Self::sent`]), without their LP
    /// headers, sorted (for comparing against what arrived, in any order).
    fn sent_data_sorted(&self, port: usize, s: usize, dst: SocketAddr) -> Vec<Vec<u8>> {
        let mut got: Vec<Vec<u8>> = self
            .sent(port, s, dst)
            .iter()
            .map(|p| unwrap_lp(p).0)
            .collect();
        got.sort();
        got
    }

    /// Asserts that `port` released the frames of `handed` once each, in that order.
    fn assert_released_in_order(&self, port: usize, handed: &[u64], what: &str) {
        let back: Vec<u64> = self.ports[port]
            .ids(Fate::Released)
            .into_iter()
            .filter(|id| handed.contains(id))
            .collect();
        assert_eq!(back, handed, "{what}: given back once each, in order");
    }

    /// Stops every shard the way `run` does (the CS lets its frames go).
    fn finish(&mut self) {
        for w in &mut self.workers {
            w.finish();
        }
    }
}

/// An Ethernet/IPv4/UDP frame from `src` to the router's address on `port`.
fn udp_frame(port: usize, src: SocketAddr, ndn: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 64 + ndn.len()];
    let h = wire::UdpHeaders {
        src_mac: PEER_MAC[port],
        dst_mac: ROUTER_MAC[port],
        src,
        dst: router_addr(port),
        ttl: 64,
    };
    let n = wire::build_udp(&mut f, &h, &[ndn]).unwrap();
    f[n..n + ndn.len()].copy_from_slice(ndn);
    f.truncate(n + ndn.len());
    f
}

/// The XDP program's metadata for a frame of `kind`, steered to `shard` as `how` says.
fn meta(shard: u8, kind: Kind, how: How) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[8] = shard;
    b[9] = kind as u8;
    b[10] = how as u8;
    b[11] = ndx_xdp::Encap::Udp4 as u8;
    b[12..14].copy_from_slice(&42u16.to_ne_bytes());
    b[14..16].copy_from_slice(&ndx_xdp::META_MAGIC.to_ne_bytes());
    assert!(XdpMeta::parse(&b).is_some());
    b
}

fn name(uri: &str) -> NameBuf {
    let mut n = NameBuf::new();
    for c in uri.split('/').filter(|c| !c.is_empty()) {
        n.push_generic(c.as_bytes());
    }
    n
}

fn interest(uri: &str, nonce: u32) -> Vec<u8> {
    let mut i = InterestRepr::new(name(uri));
    i.nonce = Some(nonce);
    i.to_vec().unwrap()
}

fn data(uri: &str, len: usize) -> Vec<u8> {
    let content = (0..len).map(|i| (i * 7 + uri.len()) as u8).collect();
    DataRepr::new(name(uri), content).to_vec().unwrap()
}

/// The network packet inside `ndn` (an LpPacket's fragment, or `ndn` itself) and its
/// PitToken.
fn unwrap_lp(ndn: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
    match Packet::decode(ndn).unwrap() {
        Packet::Lp(lp) => (
            lp.fragment().unwrap().to_vec(),
            lp.pit_token().map(<[u8]>::to_vec),
        ),
        _ => (ndn.to_vec(), None),
    }
}

/// The name of an Interest or Data (bare or in an LpPacket), as a URI-like string.
fn name_of(ndn: &[u8]) -> String {
    let (inner, _) = unwrap_lp(ndn);
    match Packet::decode(&inner).unwrap() {
        Packet::Interest(i) => i.name().to_string(),
        Packet::Data(d) => d.name().to_string(),
        Packet::Lp(_) => panic!("nested LpPacket"),
    }
}

/// `packet` in an LpPacket carrying `token`.
fn with_token(packet: &[u8], token: Option<&[u8]>) -> Vec<u8> {
    let Some(token) = token else {
        return packet.to_vec();
    };
    let h = LpHeaders {
        pit_token: Some(token),
        ..LpHeaders::default()
    };
    let mut out = vec![0; h.encoded_len(Some(packet.len()))];
    let n = h.encode(Some(packet), &mut out).unwrap();
    out.truncate(n);
    out
}

/// NDNLPv2 fragments of `packet` (with `token` on each), each at most `mtu` bytes.
fn fragments(packet: &[u8], token: Option<&[u8]>, mtu: usize, seq: u64) -> Vec<Vec<u8>> {
    let h = LpHeaders {
        pit_token: token,
        ..LpHeaders::default()
    };
    let mut frags = ndx_codec::Fragmenter::new(mtu)
        .unwrap()
        .fragment(packet, &h, seq)
        .unwrap();
    let mut out = Vec::new();
    let mut buf = vec![0; mtu];
    while let Some(r) = frags.next_into(&mut buf) {
        out.push(buf[..r.unwrap()].to_vec());
    }
    out
}

/// (1) Steering: a frame whose XDP metadata names another shard goes to that shard's ring
/// and is processed there; one that names us, or by source with a name that dispatches to
/// us, is processed here.
#[test]
fn frames_of_another_shard_go_to_its_ring() {
    let mut net = Net::new(Opts {
        shards: 2,
        ..Opts::default()
    });
    let producer = peer_addr(B);
    // Steered to shard 1 by the XDP program, arriving at shard 0's socket.
    net.arrive_from_peer(
        A,
        0,
        &interest("/p/one", 1),
        Some(meta(1, Kind::Interest, How::Name)),
    );
    // Steered to shard 0: ours.
    net.arrive_from_peer(
        A,
        0,
        &interest("/p/two", 2),
        Some(meta(0, Kind::Interest, How::Name)),
    );
    net.run(3);
    assert_eq!(net.count(0, Io::ExchangedOut), 1);
    assert_eq!(net.count(1, Io::ExchangedIn), 1);
    let by0: Vec<String> = net
        .sent(B, 0, producer)
        .iter()
        .map(|p| name_of(p))
        .collect();
    let by1: Vec<String> = net
        .sent(B, 1, producer)
        .iter()
        .map(|p| name_of(p))
        .collect();
    assert_eq!(by0, ["/p/two"]);
    assert_eq!(by1, ["/p/one"]);
    // Steered by source (a name too long for the program): the worker dispatches by name.
    let mut want = [Vec::new(), Vec::new()];
    for k in 0..16 {
        let uri = format!("/p/src/{k}");
        let owner = net.dispatch.shard(&name(&uri).as_name(), None);
        want[usize::from(owner)].push(uri.clone());
        net.arrive_from_peer(
            A,
            0,
            &interest(&uri, 100 + k),
            Some(meta(0, Kind::Interest, How::Source)),
        );
    }
    assert!(
        !want[0].is_empty() && !want[1].is_empty(),
        "both shards own some"
    );
    net.run(3);
    for (s, want) in want.iter().enumerate() {
        let mut got: Vec<String> = net
            .sent(B, s, producer)
            .iter()
            .map(|p| name_of(p))
            .collect();
        got.sort();
        let mut want = want.clone();
        want.sort();
        assert_eq!(got, want, "shard {s}");
    }
    assert_eq!(net.count(0, Io::ExchangedOut), 1 + want[1].len() as u64);
    // The frames shard 1 read came back to shard 0, which released them.
    net.ports[A].assert_settled();
    assert_eq!(net.ports[A].count(Fate::Received), 18);
    assert_eq!(net.ports[A].count(Fate::Released), 18);
}

/// A full exchange ring: the frame is released and counted, not lost.
#[test]
fn a_full_exchange_ring_releases_the_frame() {
    let mut net = Net::new(Opts {
        shards: 2,
        ..Opts::default()
    });
    // 64 in flight fill the ring (shard 1 does not turn meanwhile); a burst is 64 frames.
    for k in 0..70 {
        net.arrive_from_peer(
            A,
            0,
            &interest(&format!("/p/full/{k}"), k),
            Some(meta(1, Kind::Interest, How::Name)),
        );
    }
    let (w0, t0) = (&mut net.workers[0], &mut net.turns[0]);
    w0.turn(1_000, t0, &net.stop);
    w0.turn(2_000, t0, &net.stop);
    assert_eq!(net.count(0, Io::ExchangedOut), 64);
    assert_eq!(net.count(0, Io::ExchangeFull), 6);
    assert_eq!(net.ports[A].out(), 64, "the 6 refused went back at once");
    net.run(3);
    assert_eq!(net.sent(B, 1, peer_addr(B)).len(), 64);
    net.ports[A].assert_settled();
}

/// (2) Hand-off between shards: the Interest is shard 1's (its PIT entry, its token); the
/// Data comes back on shard 0's socket (by token in the metadata, then again in fragments
/// steered by source, which shard 0 reassembles and hands to shard 1 as a whole packet);
/// shard 1 sends it to the consumer both times.
#[test]
fn data_for_another_shards_pit_entry_reaches_it_and_leaves_from_it() {
    let mut net = Net::new(Opts {
        shards: 2,
        ..Opts::default()
    });
    let (consumer, producer) = (peer_addr(A), peer_addr(B));
    for (k, uri) in ["/p/whole", "/p/frag"].iter().enumerate() {
        net.arrive_from_peer(
            A,
            1,
            &interest(uri, k as u32),
            Some(meta(1, Kind::Interest, How::Name)),
        );
    }
    net.run(2);
    let out = net.sent(B, 1, producer);
    assert_eq!(out.len(), 2);
    let mut tokens = Vec::new();
    for p in &out {
        let (_, token) = unwrap_lp(p);
        let token = token.expect("a PitToken on what the shard forwards");
        assert_eq!(ndx_core::token_shard(&token), Some(1));
        tokens.push(token);
    }
    // The whole Data: the XDP program read the token and steered it to shard 1.
    let d = data("/p/whole", 300);
    net.arrive_from_peer(
        B,
        0,
        &with_token(&d, Some(&tokens[0])),
        Some(meta(1, Kind::Data, How::Token)),
    );
    // The fragmented Data: fragments go by source, to shard 0.
    let d2 = data("/p/frag", 3000);
    for f in fragments(&d2, Some(&tokens[1]), 1200, 77) {
        net.arrive_from_peer(B, 0, &f, Some(meta(0, Kind::Fragment, How::Source)));
    }
    net.run(3);
    assert!(
        net.sent(A, 0, consumer).is_empty(),
        "shard 0 has no PIT entry"
    );
    let back = net.sent(A, 1, consumer);
    let got: Vec<Vec<u8>> = back.iter().map(|p| unwrap_lp(p).0).collect();
    assert_eq!(got, [d, d2]);
    assert_eq!(
        net.count(0, Io::ExchangedOut),
        2,
        "one frame, one reassembled packet"
    );
    assert_eq!(net.count(1, Io::ExchangedIn), 2);
    let shard1 = net.workers[1].core.shard.counters();
    assert_eq!((shard1.data_in, shard1.data_out), (2, 2));
    assert_eq!(net.workers[0].core.shard.counters().data_in, 0);
    net.run(2);
    net.ports[B].assert_settled();
}

/// Jumbo frames: an 8800-byte Data that arrives as a three-segment multi-buffer frame from a
/// 9000-byte link leaves on the other 9000-byte link as one frame, not in NDNLPv2 fragments.
#[test]
fn jumbo_data_leave_a_9000_byte_link_whole() {
    let mut net = Net::new(Opts {
        mtu: [9000, 9000],
        ..Opts::default()
    });
    let (consumer, producer) = (peer_addr(A), peer_addr(B));
    net.arrive_from_peer(A, 0, &interest("/p/jumbo", 9), None);
    net.run(2);
    let out = net.sent(B, 0, producer);
    assert_eq!(out.len(), 1);
    let (_, token) = unwrap_lp(&out[0]);
    let d = data("/p/jumbo", 8800);
    let mut frame = udp_frame(B, producer, &with_token(&d, token.as_deref()));
    assert!(frame.len() <= 9000 + 14, "the test's frame fits the link");
    // Cut as the kernel does for AF_XDP multi-buffer: 3840 + 3840 + the rest.
    let rest = frame.split_off(2 * 3840);
    let second = frame.split_off(3840);
    net.ports[B].arrive_segments(0, vec![frame, second, rest], None);
    net.run(2);
    let sent = net.sent(A, 0, consumer);
    assert_eq!(sent.len(), 1, "one frame, not fragments");
    let (inner, _) = unwrap_lp(&sent[0]);
    assert_eq!(inner, d, "the Data, byte for byte");
    assert_eq!(net.count(0, Io::FragmentsOut), 0);
    assert_eq!(net.count(0, Io::TxTooBig), 0);
    net.ports[A].assert_settled();
    net.ports[B].assert_settled();
}

/// (3) Fragmentation on output: a Data larger than the consumer link's MTU leaves as NDNLPv2
/// fragments, each within the MTU, that reassemble to the Data.
#[test]
fn data_larger_than_the_mtu_leaves_in_fragments_that_reassemble() {
    let mut net = Net::new(Opts {
        mtu: [1500, 9000],
        ..Opts::default()
    });
    let (consumer, producer) = (peer_addr(A), peer_addr(B));
    net.arrive_from_peer(A, 0, &interest("/p/big", 9), None);
    net.run(2);
    let out = net.sent(B, 0, producer);
    assert_eq!(out.len(), 1);
    let (_, token) = unwrap_lp(&out[0]);
    let d = data("/p/big", 5000);
    // It arrives as a two-buffer frame (a jumbo frame in multi-buffer AF_XDP).
    let mut frame = udp_frame(B, producer, &with_token(&d, token.as_deref()));
    let tail = frame.split_off(3000);
    net.ports[B].arrive_segments(0, vec![frame, tail], None);
    net.run(2);
    let frags = net.sent(A, 0, consumer);
    assert!(
        frags.len() >= 4,
        "5000 bytes in 1472-byte fragments: {}",
        frags.len()
    );
    let room = 1500 - wire::IPV4_LEN - wire::UDP_LEN;
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let mut whole = None;
    for f in &frags {
        assert!(f.len() <= room, "fragment of {} bytes", f.len());
        let Ok(Packet::Lp(lp)) = Packet::decode(f) else {
            panic!("not an LpPacket");
        };
        assert!(lp.is_fragment());
        assert!(whole.is_none(), "complete before the last fragment");
        if let Some(done) = r.push(0, 1, &lp).unwrap() {
            whole = Some(done.packet.to_vec());
        }
    }
    assert_eq!(whole.as_deref(), Some(d.as_slice()));
    assert_eq!(net.count(0, Io::TxFrames), 1 + frags.len() as u64);
    assert_eq!(net.count(0, Io::FragmentsOut), frags.len() as u64);
    // The other way: an Interest in fragments from the consumer is reassembled and forwarded.
    let i = interest("/p/in-pieces", 10);
    for f in fragments(&i, None, 40, 5) {
        net.arrive_from_peer(A, 0, &f, None);
    }
    net.run(2);
    let out = net.sent(B, 0, producer);
    assert_eq!(out.len(), 1);
    assert_eq!(name_of(&out[0]), "/p/in-pieces");
    net.ports[A].assert_settled();
    net.ports[B].assert_settled();
}

/// (4) On-demand faces: a UDP packet from an unknown address creates a face (used at once,
/// announced to the control thread), within `[udp]`'s bounds; past them the peer is
/// refused and counted.
#[test]
fn an_unknown_udp_peer_gets_a_face_within_the_bounds() {
    let mut net = Net::new(Opts {
        on_demand: Some(OnDemandLimits {
            max: 2,
            per_address: 1,
            ..OnDemandLimits::default()
        }),
        ..Opts::default()
    });
    let producer = peer_addr(B);
    let stranger: SocketAddr = "10.0.1.50:7000".parse().unwrap();
    net.arrive_from(A, 0, stranger, &interest("/p/new", 1), None);
    net.run(2);
    assert_eq!(net.count(0, Io::FacesCreated), 1);
    let Ok(Event::NewFace(face)) = net.events.try_recv() else {
        panic!("no NewFace event");
    };
    assert_eq!(face.link, Link::Udp(stranger));
    assert_eq!(face.origin, crate::faces::Origin::OnDemand);
    assert_eq!(
        face.path.map(|p| (p.ifindex, p.dst_mac)),
        Some((1, PEER_MAC[A]))
    );
    // Its Interest went on, and the Data comes back to it on the new face.
    let out = net.sent(B, 0, producer);
    assert_eq!(out.len(), 1);
    let (_, token) = unwrap_lp(&out[0]);
    net.arrive_from_peer(
        B,
        0,
        &with_token(&data("/p/new", 10), token.as_deref()),
        None,
    );
    net.run(2);
    assert_eq!(net.sent(A, 0, stranger).len(), 1);
    // A second port of the same address: past `per_address`.
    let same_host: SocketAddr = "10.0.1.50:7001".parse().unwrap();
    net.arrive_from(A, 0, same_host, &interest("/p/x", 2), None);
    // Another address: within `max`.
    let other: SocketAddr = "10.0.1.51:7000".parse().unwrap();
    net.arrive_from(A, 0, other, &interest("/p/y", 3), None);
    // A third address: past `max`.
    let third: SocketAddr = "10.0.1.52:7000".parse().unwrap();
    net.arrive_from(A, 0, third, &interest("/p/z", 4), None);
    net.run(2);
    assert_eq!(net.count(0, Io::FacesCreated), 2);
    assert_eq!(net.count(0, Io::FacesRefused), 2);
    let names: Vec<String> = net
        .sent(B, 0, producer)
        .iter()
        .map(|p| name_of(p))
        .collect();
    assert_eq!(names, ["/p/y"]);
    assert!(matches!(net.events.try_recv(), Ok(Event::NewFace(f)) if f.link == Link::Udp(other)));
    assert!(net.events.try_recv().is_err());
    net.ports[A].assert_settled();
}

/// With on-demand faces off, an unknown peer's frame is dropped and counted.
#[test]
fn an_unknown_peer_without_on_demand_faces_is_dropped() {
    let mut net = Net::new(Opts::default());
    let stranger: SocketAddr = "10.0.1.50:7000".parse().unwrap();
    net.arrive_from(A, 0, stranger, &interest("/p/new", 1), None);
    net.run(2);
    assert_eq!(net.count(0, Io::UnknownFace), 1);
    assert_eq!(net.count(0, Io::FacesCreated), 0);
    assert!(net.sent(B, 0, peer_addr(B)).is_empty());
    assert!(net.events.try_recv().is_err());
    net.ports[A].assert_settled();
}

/// A small generator (xorshift64*), enough to vary the traffic reproducibly.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// (5) Frames return exactly once: random traffic (Interests for a few hundred names,
/// Data from the producer, some in two buffers, some duplicates and unsolicited, malformed
/// frames) through two shards whose content stores keep receive frames, with a store small
/// enough to evict. Every frame handed out is released or held by a store, none twice (the
/// fake panics on a second return); once the stores let go, all are back.
#[test]
fn every_frame_comes_back_exactly_once_under_random_traffic() {
    for seed in [1u64, 7, 0x5eed] {
        let mut net = Net::new(Opts {
            shards: 2,
            keep: true,
            pool: 96,
            cs: 48,
            tx_ring: 16,
            ..Opts::default()
        });
        let mut rng = Rng(seed);
        let (consumer, producer) = (peer_addr(A), peer_addr(B));
        let mut nonce = 0u32;
        for _round in 0..60 {
            for _ in 0..rng.below(40) {
                nonce += 1;
                let uri = format!("/p/r/{}", rng.below(300));
                let s = rng.below(2) as usize;
                let owner = net.dispatch.shard(&name(&uri).as_name(), None);
                let m = match rng.below(3) {
                    0 => None,
                    1 => Some(meta(owner, Kind::Interest, How::Name)),
                    _ => Some(meta(s as u8, Kind::Interest, How::Source)),
                };
                net.arrive_from_peer(A, s, &interest(&uri, nonce), m);
                if rng.below(50) == 0 {
                    net.arrive_from_peer(A, s, b"\x05\x03junk", None);
                }
            }
            net.run(1 + rng.below(3) as usize);
            // The producer answers what reached it (and, now and then, something unasked).
            for s in 0..2 {
                for p in net.sent(B, s, producer) {
                    let (inner, token) = unwrap_lp(&p);
                    let Ok(Packet::Interest(i)) = Packet::decode(&inner) else {
                        panic!("the producer got a non-Interest");
                    };
                    let uri = i.name().to_string();
                    let d = with_token(
                        &data(&uri, 100 + rng.below(1200) as usize),
                        token.as_deref(),
                    );
                    let to = rng.below(2) as usize;
                    let m = Some(meta(s as u8, Kind::Data, How::Token));
                    if rng.below(8) == 0 {
                        let mut f = udp_frame(B, producer, &d);
                        let tail = f.split_off(f.len() / 2);
                        net.ports[B].arrive_segments(to, vec![f, tail], m);
                    } else {
                        net.arrive_from_peer(B, to, &d, m);
                    }
                    if rng.below(10) == 0 {
                        net.arrive_from_peer(B, to, &d, None);
                    }
                }
            }
            net.run(1 + rng.below(3) as usize);
            for s in 0..2 {
                net.sent(A, s, consumer);
            }
        }
        net.run(20);
        let cs_hits: u64 = (0..2)
            .map(|s| net.workers[s].core.shard.counters().cs_hits)
            .sum();
        assert!(
            cs_hits > 0,
            "seed {seed}: some Interests were answered from the stores"
        );
        for p in &net.ports {
            assert_eq!(p.waiting(), 0, "seed {seed}: every frame was received");
            p.assert_settled();
        }
        let held: usize = net
            .workers
            .iter()
            .map(|w| w.core.shard.cs().frames_held())
            .sum();
        assert_eq!(
            held,
            net.ports[A].kept() + net.ports[B].kept(),
            "seed {seed}"
        );
        assert!(held > 0, "seed {seed}: the stores hold frames");
        assert_eq!(
            net.ports[A].count(Fate::Kept),
            0,
            "Interests are never kept"
        );
        assert!(
            net.ports[B].count(Fate::KeptReleased) > 0,
            "seed {seed}: the stores evicted kept frames"
        );
        // The stores let go: every frame is back.
        net.finish();
        for p in &net.ports {
            p.assert_settled();
            assert_eq!(p.kept(), 0);
        }
        assert_eq!(
            net.workers
                .iter()
                .map(|w| w.eps.iter().map(|e| e.ep.kept()).sum::<i64>())
                .sum::<i64>(),
            0
        );
    }
}

/// A burst larger than the transmit ring: the worker flushes, reclaims and retries, so
/// nothing is lost (and a ring that stays full is counted, not fatal).
#[test]
fn a_burst_larger_than_the_transmit_ring_is_flushed_and_retried() {
    let mut net = Net::new(Opts {
        tx_ring: 4,
        ..Opts::default()
    });
    for k in 0..40 {
        net.arrive_from_peer(A, 0, &interest(&format!("/p/burst/{k}"), k), None);
    }
    net.run(2);
    assert_eq!(net.sent(B, 0, peer_addr(B)).len(), 40);
    assert_eq!(net.count(0, Io::TxRingFull), 0);
    assert_eq!(
        net.producer,
        net.workers[0]
            .core
            .faces
            .table
            .load()
            .lookup(&Link::Udp(peer_addr(B)))
            .unwrap()
    );
    net.ports[A].assert_settled();
}

/// A link that is down: nothing is sent there (counted `tx_link_down`) from the next counter
/// publication on, and sending resumes once it is up again.
#[test]
fn nothing_is_sent_on_a_link_that_is_down() {
    let mut net = Net::new(Opts::default());
    let producer = peer_addr(B);
    net.links.set(2, crate::iface::LinkState::Down);
    // The workers read link states every 10 ms.
    net.run(600);
    net.arrive_from_peer(A, 0, &interest("/p/down", 1), None);
    net.run(2);
    assert_eq!(net.count(0, Io::TxLinkDown), 1);
    assert!(net.sent(B, 0, producer).is_empty());
    net.links.set(2, crate::iface::LinkState::Up);
    net.run(600);
    net.arrive_from_peer(A, 0, &interest("/p/down", 2), None);
    net.run(2);
    let names: Vec<String> = net
        .sent(B, 0, producer)
        .iter()
        .map(|p| name_of(p))
        .collect();
    assert_eq!(names, ["/p/down"]);
    assert_eq!(net.count(0, Io::TxLinkDown), 1);
    net.ports[A].assert_settled();
}

/// Interests for `uris` from the consumer, steered to shard `s`, which forwards them: the
/// PIT tokens the producer's Data will echo, in order.
fn forwarded_tokens(net: &mut Net, s: usize, uris: &[String], nonce: u32) -> Vec<Vec<u8>> {
    for (k, uri) in uris.iter().enumerate() {
        net.arrive_from_peer(
            A,
            s,
            &interest(uri, nonce + k as u32),
            Some(meta(s as u8, Kind::Interest, How::Name)),
        );
    }
    net.run(2);
    let out = net.sent(B, s, peer_addr(B));
    assert_eq!(out.len(), uris.len());
    out.iter()
        .map(|p| {
            unwrap_lp(p)
                .1
                .expect("a PitToken on what the shard forwards")
        })
        .collect()
}

/// Names, the PIT tokens their forwarded Interests carry, and their Data.
type Pending = (Vec<String>, Vec<Vec<u8>>, Vec<Vec<u8>>);

/// `n` names under `prefix` whose Interests shard 1 forwarded ([`forwarded_tokens`]), the
/// tokens its upstream will echo, and their Data, the `k`-th with `size(k)` bytes of content.
fn pending_at_shard_1(
    net: &mut Net,
    prefix: &str,
    n: usize,
    size: impl Fn(usize) -> usize,
) -> Pending {
    let uris: Vec<String> = (0..n).map(|k| format!("{prefix}/{k}")).collect();
    let tokens = forwarded_tokens(net, 1, &uris, 1);
    let datas = uris
        .iter()
        .enumerate()
        .map(|(k, u)| data(u, size(k)))
        .collect();
    (uris, tokens, datas)
}

/// The hand-off in bursts: in one loop turn, shard 1 receives a burst of its own Data and
/// then drains more than a burst of Data handed over by shard 0 (whole, one in two buffers,
/// one in NDNLPv2 fragments), through a transmit ring of 4. Every Data leaves once, byte for
/// byte; the handed-over frames go back to shard 0 in the order they arrived and are
/// released once; the CS copied the handed-over Data (the frames were someone else's), so
/// it answers for them once every frame is back.
#[test]
fn handed_over_frames_go_through_the_pipeline_in_bursts_and_back_in_order() {
    let mut net = Net::new(Opts {
        shards: 2,
        keep: true,
        tx_ring: 4,
        ..Opts::default()
    });
    let consumer = peer_addr(A);
    let (uris, tokens, datas) = pending_at_shard_1(&mut net, "/p/hand", 52, |k| {
        if k == 51 { 3000 } else { 200 + k }
    });
    let to_1 = Some(meta(1, Kind::Data, How::Token));
    let mut handed = Vec::new();
    for (k, (d, token)) in datas.iter().zip(&tokens).enumerate() {
        let lp = with_token(d, Some(token));
        match k {
            // Shard 1's own: arrived on its socket.
            0..=9 => {
                net.arrive_from_peer(B, 1, &lp, to_1);
            }
            // Arrived at shard 0's socket in two buffers.
            50 => {
                let mut f = udp_frame(B, peer_addr(B), &lp);
                let tail = f.split_off(f.len() / 2);
                handed.push(net.ports[B].arrive_segments(0, vec![f, tail], to_1));
            }
            // In fragments steered to shard 1 (the program's verdict: a fragment).
            51 => {
                for f in fragments(d, Some(token), 1200, 9) {
                    let m = Some(meta(1, Kind::Fragment, How::Source));
                    handed.push(net.arrive_from_peer(B, 0, &f, m));
                }
            }
            // Whole, at shard 0's socket.
            _ => handed.push(net.arrive_from_peer(B, 0, &lp, to_1)),
        }
    }
    assert!(handed.len() > BURST, "more than one burst handed over");
    net.turn(0);
    assert_eq!(net.count(0, Io::ExchangedOut), handed.len() as u64);
    // One turn of shard 1: its own burst, then every handed-over frame.
    net.turn(1);
    assert_eq!(net.count(1, Io::ExchangedIn), handed.len() as u64);
    // In two bursts: a whole one, then the rest (the histogram of handed-over burst sizes).
    let sizes = net.workers[1].core.hist.exchanged_burst;
    assert_eq!(sizes.count(), 2, "{sizes:?}");
    assert_eq!(sizes.sum, handed.len() as u64);
    assert_eq!(sizes.buckets[5], 1, "one burst of 32: {sizes:?}");
    assert_eq!(net.workers[0].core.hist.exchanged_burst.count(), 0);
    let mut want = datas.clone();
    want.sort();
    assert_eq!(
        net.sent_data_sorted(A, 1, consumer),
        want,
        "each Data once, byte for byte"
    );
    assert_eq!(net.count(1, Io::TxRingFull), 0);
    let c = net.workers[1].core.shard.counters();
    assert_eq!((c.data_in, c.data_out), (52, 52));
    assert_eq!(net.workers[0].core.shard.counters().data_in, 0);
    // Shard 0 reaps what came back and releases it, in the order the frames arrived.
    net.turn(0);
    net.assert_released_in_order(B, &handed, "handed over to shard 1");
    net.ports[B].assert_settled();
    assert_eq!(net.ports[B].out(), 0);
    assert!(net.ports[B].kept() > 0, "shard 1's own Data were kept");
    // The handed-over frames are back with shard 0; the CS still answers for their Data.
    for (k, uri) in uris.iter().enumerate() {
        net.arrive_from_peer(
            A,
            1,
            &interest(uri, 1000 + k as u32),
            Some(meta(1, Kind::Interest, How::Name)),
        );
    }
    net.run(2);
    assert_eq!(
        net.sent_data_sorted(A, 1, consumer),
        want,
        "every Data from the CS"
    );
    assert!(
        net.sent(B, 1, peer_addr(B)).is_empty(),
        "no Interest went up"
    );
    net.finish();
    for p in &net.ports {
        p.assert_settled();
        assert_eq!(p.kept(), 0);
    }
}

/// A frame handed over from a port the owner cannot read (its port gone from the owner's
/// list) goes back unread, and the rest of its burst is processed.
#[test]
fn a_handed_over_frame_whose_port_is_gone_goes_back_unread() {
    let mut net = Net::new(Opts {
        shards: 2,
        ..Opts::default()
    });
    let tokens = forwarded_tokens(&mut net, 1, &["/p/gone".to_string()], 1);
    net.workers[1].ports.retain(|(m, _)| m.port() != B as u32);
    let d = with_token(&data("/p/gone", 100), Some(&tokens[0]));
    let lost = net.arrive_from_peer(B, 0, &d, Some(meta(1, Kind::Data, How::Token)));
    // In the same burst, an Interest handed over from the consumer's port.
    net.arrive_from_peer(
        A,
        0,
        &interest("/p/still", 2),
        Some(meta(1, Kind::Interest, How::Name)),
    );
    net.turn(0);
    net.turn(1);
    assert_eq!(net.count(1, Io::ExchangedIn), 2);
    let up: Vec<String> = net
        .sent(B, 1, peer_addr(B))
        .iter()
        .map(|p| name_of(p))
        .collect();
    assert_eq!(up, ["/p/still"]);
    assert!(
        net.sent(A, 1, peer_addr(A)).is_empty(),
        "the Data was not read"
    );
    assert_eq!(net.workers[1].core.shard.counters().data_in, 0);
    net.turn(0);
    assert!(net.ports[B].ids(Fate::Released).contains(&lost));
    for p in &net.ports {
        p.assert_settled();
    }
}

/// Hand-offs from two shards to a third, single-buffer frames (the compact path) with
/// multi-buffer ones among them: a shard's hand-offs are staged during its RX burst and
/// published when the burst is steered, so the owner sees all of them after one turn of each
/// sender; the owner drains both rings into bursts, sends each Data once, and gives every
/// frame back to the shard that handed it over, in that shard's order, once.
#[test]
fn compact_and_multi_buffer_hand_offs_from_two_shards_go_back_to_each_in_order() {
    let mut net = Net::new(Opts {
        shards: 3,
        ..Opts::default()
    });
    let consumer = peer_addr(A);
    let (_, tokens, datas) = pending_at_shard_1(&mut net, "/p/two", 40, |k| 100 + 7 * k);
    let to_1 = Some(meta(1, Kind::Data, How::Token));
    // From shard 0 and shard 2 in turn; every fifth frame in two or three buffers.
    let mut handed: [Vec<u64>; 3] = Default::default();
    for (k, (d, token)) in datas.iter().zip(&tokens).enumerate() {
        let s = if k % 2 == 0 { 0 } else { 2 };
        let lp = with_token(d, Some(token));
        let id = if k % 5 == 4 {
            let mut f = udp_frame(B, peer_addr(B), &lp);
            let mut segs = Vec::new();
            let parts = 2 + k % 2;
            let cut = f.len() / parts;
            for _ in 1..parts {
                let rest = f.split_off(cut);
                segs.push(std::mem::replace(&mut f, rest));
            }
            segs.push(f);
            net.ports[B].arrive_segments(s, segs, to_1)
        } else {
            net.arrive_from_peer(B, s, &lp, to_1)
        };
        handed[s].push(id);
    }
    net.turn(0);
    net.turn(2);
    assert_eq!(net.count(0, Io::ExchangedOut), 20);
    assert_eq!(net.count(2, Io::ExchangedOut), 20);
    net.turn(1);
    assert_eq!(
        net.count(1, Io::ExchangedIn),
        40,
        "every hand-off published"
    );
    let mut want = datas.clone();
    want.sort();
    assert_eq!(
        net.sent_data_sorted(A, 1, consumer),
        want,
        "each Data once, byte for byte"
    );
    // Each sender reaps its own frames and releases them, in the order it handed them over.
    net.turn(0);
    net.turn(2);
    for s in [0, 2] {
        net.assert_released_in_order(B, &handed[s], &format!("shard {s}'s frames"));
    }
    assert_eq!(net.ports[B].out(), 0);
    net.finish();
    for p in &net.ports {
        p.assert_settled();
    }
}
