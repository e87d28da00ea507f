//! A topology simulator on virtual time: routers (each a [`Shard`] with its own FIB),
//! consumers and producers, joined by links with delay and loss. Deterministic for a seed,
//! so scenario tests and experiments replay exactly.
//!
//! ```
//! use ndx_core::sim::{Sim, LinkSpec};
//! use ndx_codec::NameBuf;
//!
//! let mut sim = Sim::new(1);
//! let c = sim.add_consumer();
//! let r = sim.add_router(Default::default());
//! let p = sim.add_producer("/video", 1000);
//! let (_, rc) = sim.link(c, r, LinkSpec::default());
//! let (rp, _) = sim.link(r, p, LinkSpec::default());
//! sim.route(r, "/video", rp, 1);
//! let _ = rc;
//! sim.express(c, "/video/seg=0", false, false, 4000);
//! sim.run_for(100_000_000);
//! assert_eq!(sim.consumer(c).data.len(), 1);
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use ndx_codec::{DataRepr, InterestRepr, NackReason, NameBuf, Packet};

use crate::face::{FaceId, NextHop};
use crate::fib::{Fib, StrategyId};
use crate::hash::HashKey;
use crate::shard::{Actions, FaceInfo, Shard, ShardConfig};
pub use crate::sim_l2::L2Log;
use crate::sim_l2::SimL2;

/// A node's index in the simulation.
pub type NodeId = usize;

/// Link properties (each direction draws its losses independently).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkSpec {
    /// One-way delay (ns).
    pub delay_ns: u64,
    /// Probability that a frame is lost.
    pub loss: f64,
}

impl Default for LinkSpec {
    fn default() -> Self {
        Self {
            delay_ns: 1_000_000,
            loss: 0.0,
        }
    }
}

/// What a consumer received.
#[derive(Debug, Default)]
pub struct ConsumerLog {
    /// (time, Data name URI, content).
    pub data: Vec<(u64, String, Vec<u8>)>,
    /// (time, Interest name URI, reason).
    pub nacks: Vec<(u64, String, NackReason)>,
}

/// What a producer saw.
#[derive(Debug, Default)]
pub struct ProducerLog {
    /// Interest names received, in order.
    pub interests: Vec<String>,
}

#[derive(Debug)]
struct Router {
    shard: Shard,
    fib: Fib,
    l2: SimL2,
}

#[derive(Debug)]
struct Producer {
    prefix: NameBuf,
    freshness_ms: u64,
    log: ProducerLog,
    /// Suffix the producer appends to a CanBePrefix Interest's name to make the Data name.
    version: u64,
}

#[derive(Debug)]
enum Node {
    Router(Box<Router>),
    Consumer(ConsumerLog),
    Producer(Producer),
}

#[derive(Debug, Clone, Copy)]
struct Port {
    peer: NodeId,
    peer_face: FaceId,
    spec: LinkSpec,
    up: bool,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    at: u64,
    seq: u64,
    node: NodeId,
    face: FaceId,
    frame: Vec<u8>,
}

/// The simulation.
#[derive(Debug)]
pub struct Sim {
    now: u64,
    seq: u64,
    rng: u64,
    nodes: Vec<Node>,
    ports: HashMap<(NodeId, FaceId), Port>,
    next_face: HashMap<NodeId, u32>,
    queue: BinaryHeap<Reverse<Event>>,
    actions: Actions,
    nonce: u32,
    /// Frames lost on links.
    pub lost: u64,
}

impl Sim {
    /// An empty simulation; `seed` drives losses and nonces.
    pub fn new(seed: u64) -> Self {
        Self {
            now: 0,
            seq: 0,
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            nodes: Vec::new(),
            ports: HashMap::new(),
            next_face: HashMap::new(),
            queue: BinaryHeap::new(),
            actions: Actions::new(),
            nonce: seed as u32,
            lost: 0,
        }
    }

    /// Virtual time (ns).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Adds a router.
    pub fn add_router(&mut self, cfg: ShardConfig) -> NodeId {
        let (fib, reader) = Fib::new(cfg.hash_key, 2);
        let shard = Shard::new(cfg, reader, self.now);
        self.nodes.push(Node::Router(Box::new(Router {
            shard,
            fib,
            l2: SimL2::default(),
        })));
        self.nodes.len() - 1
    }

    /// Adds a consumer application.
    pub fn add_consumer(&mut self) -> NodeId {
        self.nodes.push(Node::Consumer(ConsumerLog::default()));
        self.nodes.len() - 1
    }

    /// Adds a producer answering every Interest under `prefix` with Data that is fresh for
    /// `freshness_ms`. A CanBePrefix Interest for exactly `prefix` gets `prefix/v=<n>`.
    pub fn add_producer(&mut self, prefix: &str, freshness_ms: u64) -> NodeId {
        self.nodes.push(Node::Producer(Producer {
            prefix: NameBuf::from_uri(prefix).expect("valid prefix"),
            freshness_ms,
            log: ProducerLog::default(),
            version: 1,
        }));
        self.nodes.len() - 1
    }

    fn new_face(&mut self, node: NodeId) -> FaceId {
        let n = self.next_face.entry(node).or_insert(1);
        let f = FaceId(*n);
        *n += 1;
        f
    }

    /// Joins `a` and `b` with a link; returns the face ids on `a` and on `b`.
    pub fn link(&mut self, a: NodeId, b: NodeId, spec: LinkSpec) -> (FaceId, FaceId) {
        let (fa, fb) = (self.new_face(a), self.new_face(b));
        self.ports.insert(
            (a, fa),
            Port {
                peer: b,
                peer_face: fb,
                spec,
                up: true,
            },
        );
        self.ports.insert(
            (b, fb),
            Port {
                peer: a,
                peer_face: fa,
                spec,
                up: true,
            },
        );
        for (node, face) in [(a, fa), (b, fb)] {
            if let Node::Router(r) = &mut self.nodes[node] {
                r.shard.add_face(face, FaceInfo::default());
            }
        }
        (fa, fb)
    }

    /// Takes a link direction down (frames sent from `node` on `face` are lost) or up.
    pub fn set_link_up(&mut self, node: NodeId, face: FaceId, up: bool) {
        if let Some(p) = self.ports.get_mut(&(node, face)) {
            p.up = up;
        }
    }

    /// Adds a route on router `r`.
    pub fn route(&mut self, r: NodeId, prefix: &str, face: FaceId, cost: u32) {
        let Node::Router(router) = &mut self.nodes[r] else {
            panic!("node {r} is not a router");
        };
        let p = NameBuf::from_uri(prefix).expect("valid prefix");
        router
            .fib
            .add_nexthop(&p.as_name(), NextHop { face, cost })
            .expect("route fits");
        router.fib.publish();
    }

    /// Sets the strategy of router `r`'s route at `prefix`.
    pub fn strategy(&mut self, r: NodeId, prefix: &str, strategy: StrategyId) {
        let Node::Router(router) = &mut self.nodes[r] else {
            panic!("node {r} is not a router");
        };
        let p = NameBuf::from_uri(prefix).expect("valid prefix");
        assert!(
            router.fib.set_strategy(&p.as_name(), strategy),
            "no route at {prefix}"
        );
        router.fib.publish();
    }

    /// Router `r`'s shard, to read its tables and counters.
    pub fn router(&self, r: NodeId) -> &Shard {
        match &self.nodes[r] {
            Node::Router(router) => &router.shard,
            _ => panic!("node {r} is not a router"),
        }
    }

    fn router_mut(&mut self, r: NodeId) -> &mut Router {
        match &mut self.nodes[r] {
            Node::Router(router) => router,
            _ => panic!("node {r} is not a router"),
        }
    }

    /// Sets how long router `r`'s in-memory L2 takes to complete a read (ns).
    pub fn set_l2_delay(&mut self, r: NodeId, delay_ns: u64) {
        self.router_mut(r).l2.delay_ns = delay_ns;
    }

    /// Makes router `r`'s in-memory L2 fail every read (or work again).
    pub fn set_l2_failing(&mut self, r: NodeId, failing: bool) {
        self.router_mut(r).l2.failing = failing;
    }

    /// Drops a batch from router `r`'s in-memory L2 without telling the shard (as the L2's
    /// FIFO log does when it overwrites a record): a later read of it fails as stale.
    pub fn router_l2_forget_store(&mut self, r: NodeId, key: (u64, u64)) {
        self.router_mut(r).l2.drop_batch(key);
    }

    /// What router `r`'s L2 did (reads and writes the shard asked for).
    pub fn l2_log(&self, r: NodeId) -> &L2Log {
        match &self.nodes[r] {
            Node::Router(router) => &router.l2.log,
            _ => panic!("node {r} is not a router"),
        }
    }

    /// What consumer `c` received.
    pub fn consumer(&self, c: NodeId) -> &ConsumerLog {
        match &self.nodes[c] {
            Node::Consumer(log) => log,
            _ => panic!("node {c} is not a consumer"),
        }
    }

    /// What producer `p` saw.
    pub fn producer(&self, p: NodeId) -> &ProducerLog {
        match &self.nodes[p] {
            Node::Producer(prod) => &prod.log,
            _ => panic!("node {p} is not a producer"),
        }
    }

    /// Consumer `c` sends an Interest on its first face, with a fresh Nonce.
    pub fn express(&mut self, c: NodeId, name: &str, cbp: bool, mbf: bool, lifetime_ms: u64) {
        self.nonce = self.nonce.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let nonce = self.nonce;
        self.express_with_nonce(c, name, cbp, mbf, lifetime_ms, nonce);
    }

    /// Consumer `c` sends an Interest with a given Nonce.
    pub fn express_with_nonce(
        &mut self,
        c: NodeId,
        name: &str,
        cbp: bool,
        mbf: bool,
        lifetime_ms: u64,
        nonce: u32,
    ) {
        let mut i = InterestRepr::new(NameBuf::from_uri(name).expect("valid name"));
        i.can_be_prefix = cbp;
        i.must_be_fresh = mbf;
        i.lifetime_ms = Some(lifetime_ms);
        i.nonce = Some(nonce);
        let frame = i.to_vec().expect("encodable Interest");
        self.transmit(c, FaceId(1), frame);
    }

    /// Sends `frame` from `node` out of `face` (the link applies delay and loss).
    pub fn transmit(&mut self, node: NodeId, face: FaceId, frame: Vec<u8>) {
        let Some(port) = self.ports.get(&(node, face)).copied() else {
            return;
        };
        if !port.up || self.chance() < port.spec.loss {
            self.lost += 1;
            return;
        }
        self.seq += 1;
        self.queue.push(Reverse(Event {
            at: self.now + port.spec.delay_ns,
            seq: self.seq,
            node: port.peer,
            face: port.peer_face,
            frame,
        }));
    }

    fn chance(&mut self) -> f64 {
        (crate::strategy::next_random(&mut self.rng) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Runs for `duration` ns of virtual time.
    pub fn run_for(&mut self, duration: u64) {
        let end = self.now + duration;
        loop {
            let next_ev = self.queue.peek().map(|Reverse(ev)| ev.at);
            let next_l2 = self
                .nodes
                .iter()
                .enumerate()
                .filter_map(|(i, n)| match n {
                    Node::Router(r) => r.l2.next_due().map(|at| (at, i)),
                    _ => None,
                })
                .min();
            if let Some((at, node)) = next_l2
                && at <= end
                && next_ev.is_none_or(|e| at <= e)
            {
                self.advance_timers(at);
                self.now = at;
                self.complete_l2(node);
                continue;
            }
            let Some(Reverse(ev)) = self.queue.peek() else {
                break;
            };
            if ev.at > end {
                break;
            }
            let Some(Reverse(ev)) = self.queue.pop() else {
                break;
            };
            self.advance_timers(ev.at);
            self.now = ev.at;
            self.deliver(ev.node, ev.face, &ev.frame);
        }
        self.advance_timers(end);
        self.now = end;
    }

    fn advance_timers(&mut self, to: u64) {
        // Step routers' timers millisecond by millisecond so expiries happen in order with
        // deliveries.
        let mut t = self.now;
        while t < to {
            t = (t + 1_000_000).min(to);
            for n in &mut self.nodes {
                if let Node::Router(r) = n {
                    r.shard.on_timer(t, &mut self.actions);
                }
            }
        }
        self.actions.clear();
    }

    fn complete_l2(&mut self, node: NodeId) {
        let now = self.now;
        let Node::Router(r) = &mut self.nodes[node] else {
            return;
        };
        self.actions.clear();
        r.l2.complete_one(now, &mut r.shard, &mut self.actions);
        r.l2.carry_out(now, &self.actions, &mut r.shard);
        let sends: Vec<(FaceId, Vec<u8>)> =
            self.actions.sends().map(|(f, b)| (f, b.to_vec())).collect();
        for (f, b) in sends {
            self.transmit(node, f, b);
        }
    }

    fn deliver(&mut self, node: NodeId, face: FaceId, frame: &[u8]) {
        let now = self.now;
        let mut sends: Vec<(FaceId, Vec<u8>)> = Vec::new();
        match &mut self.nodes[node] {
            Node::Router(r) => {
                self.actions.clear();
                r.shard.process(now, face, frame, &mut self.actions);
                r.l2.carry_out(now, &self.actions, &mut r.shard);
                sends.extend(self.actions.sends().map(|(f, b)| (f, b.to_vec())));
            }
            Node::Consumer(log) => match Packet::decode(frame) {
                Ok(Packet::Data(d)) => {
                    log.data
                        .push((now, d.name().to_string(), d.content().to_vec()))
                }
                Ok(Packet::Lp(lp)) => match lp.network_packet() {
                    Ok(Some(Packet::Data(d))) => {
                        log.data
                            .push((now, d.name().to_string(), d.content().to_vec()))
                    }
                    Ok(Some(Packet::Interest(i))) => {
                        if let Some(r) = lp.nack() {
                            log.nacks.push((now, i.name().to_string(), r));
                        }
                    }
                    _ => {}
                },
                _ => {}
            },
            Node::Producer(p) => {
                let (interest, token) = match Packet::decode(frame) {
                    Ok(Packet::Interest(i)) => (Some(i), None),
                    Ok(Packet::Lp(lp)) if lp.nack().is_none() => match lp.network_packet() {
                        Ok(Some(Packet::Interest(i))) => (Some(i), lp.pit_token()),
                        _ => (None, None),
                    },
                    _ => (None, None),
                };
                if let Some(i) = interest {
                    p.log.interests.push(i.name().to_string());
                    if p.prefix.as_name().is_prefix_of(&i.name()) {
                        let mut name = i.name().to_buf();
                        if i.can_be_prefix() && name == p.prefix {
                            name.push_version(p.version);
                            p.version += 1;
                        }
                        let mut d = DataRepr::new(name.clone(), name.to_string().into_bytes());
                        d.freshness_ms = Some(p.freshness_ms);
                        let data = d.to_vec().expect("encodable Data");
                        let headers = ndx_codec::LpHeaders {
                            pit_token: token,
                            ..Default::default()
                        };
                        let mut out = vec![0; headers.encoded_len(Some(data.len()))];
                        let frame = if headers.is_empty() {
                            data
                        } else {
                            let n = headers.encode(Some(&data), &mut out).expect("sized");
                            out.truncate(n);
                            out
                        };
                        sends.push((face, frame));
                    }
                }
            }
        }
        for (f, b) in sends {
            self.transmit(node, f, b);
        }
    }
}

/// The default key used by simulated routers (deterministic runs).
pub const SIM_KEY: HashKey = HashKey::new(11, 13);
