//! Forwarding scenarios on the virtual-time topology simulator.

use ndx_codec::{InterestRepr, NackReason, NameBuf};
use ndx_core::sim::{LinkSpec, NodeId, Sim};
use ndx_core::{DropReason, FaceId, ShardConfig, StrategyKind};

const MS: u64 = 1_000_000;

fn cfg() -> ShardConfig {
    ShardConfig {
        hash_key: ndx_core::sim::SIM_KEY,
        ..ShardConfig::default()
    }
}

/// consumer(s) — router — producer, route /p toward the producer.
fn line(consumers: usize) -> (Sim, Vec<NodeId>, NodeId, NodeId, FaceId) {
    let mut sim = Sim::new(7);
    let r = sim.add_router(cfg());
    let cs: Vec<NodeId> = (0..consumers)
        .map(|_| {
            let c = sim.add_consumer();
            sim.link(c, r, LinkSpec::default());
            c
        })
        .collect();
    let p = sim.add_producer("/p", 100);
    let (rp, _) = sim.link(r, p, LinkSpec::default());
    sim.route(r, "/p", rp, 10);
    (sim, cs, r, p, rp)
}

#[test]
fn aggregation_sends_one_interest_upstream() {
    let (mut sim, cs, r, p, _) = line(3);
    for &c in &cs {
        sim.express(c, "/p/obj", false, false, 1000);
    }
    sim.run_for(50 * MS);
    assert_eq!(sim.producer(p).interests, vec!["/p/obj".to_string()]);
    for &c in &cs {
        assert_eq!(sim.consumer(c).data.len(), 1, "consumer {c}");
    }
    assert_eq!(sim.router(r).counters().aggregated, 2);
    assert_eq!(sim.router(r).pit().len(), 0, "satisfied entries are erased");
}

#[test]
fn multicast_reaches_every_upstream() {
    let mut sim = Sim::new(1);
    let c = sim.add_consumer();
    let r = sim.add_router(cfg());
    sim.link(c, r, LinkSpec::default());
    let p1 = sim.add_producer("/m", 100);
    let p2 = sim.add_producer("/m", 100);
    let (f1, _) = sim.link(r, p1, LinkSpec::default());
    let (f2, _) = sim.link(
        r,
        p2,
        LinkSpec {
            delay_ns: 3 * MS,
            loss: 0.0,
        },
    );
    sim.route(r, "/m", f1, 1);
    sim.route(r, "/m", f2, 5);
    sim.strategy(r, "/m", StrategyKind::Multicast.id());
    sim.express(c, "/m/x", false, false, 1000);
    sim.run_for(50 * MS);
    assert_eq!(sim.producer(p1).interests.len(), 1);
    assert_eq!(sim.producer(p2).interests.len(), 1);
    assert_eq!(sim.consumer(c).data.len(), 1);
    // The slower copy arrives after the entry was satisfied.
    assert_eq!(sim.router(r).counters().dropped(DropReason::Unsolicited), 1);
}

#[test]
fn loops_are_detected_and_nacked_duplicate() {
    let mut sim = Sim::new(2);
    let c = sim.add_consumer();
    let r1 = sim.add_router(cfg());
    let r2 = sim.add_router(cfg());
    let r3 = sim.add_router(cfg());
    sim.link(c, r1, LinkSpec::default());
    let (r1_r2, _) = sim.link(r1, r2, LinkSpec::default());
    let (r2_r3, _) = sim.link(r2, r3, LinkSpec::default());
    let (r3_r1, _) = sim.link(r3, r1, LinkSpec::default());
    sim.route(r1, "/loop", r1_r2, 1);
    sim.route(r2, "/loop", r2_r3, 1);
    sim.route(r3, "/loop", r3_r1, 1);
    sim.express(c, "/loop/a", false, false, 1000);
    sim.run_for(100 * MS);
    let k = sim.router(r1).counters();
    assert_eq!(
        k.dropped(DropReason::Loop),
        1,
        "the Interest came back once"
    );
    assert!(k.nacks_out >= 1, "Nack Duplicate sent back around the loop");
    // The Nack Duplicate travels back: r3 gives up and so does everyone; the consumer hears.
    assert_eq!(sim.consumer(c).nacks.len(), 1);
    assert_eq!(sim.consumer(c).nacks[0].2, NackReason::Duplicate);
}

#[test]
fn no_route_is_nacked() {
    let (mut sim, cs, r, p, _) = line(1);
    sim.express(cs[0], "/elsewhere/x", false, false, 1000);
    sim.run_for(20 * MS);
    assert_eq!(
        sim.consumer(cs[0]).nacks,
        vec![(2 * MS, "/elsewhere/x".to_string(), NackReason::NoRoute)]
    );
    assert!(sim.producer(p).interests.is_empty());
    assert_eq!(sim.router(r).counters().dropped(DropReason::NoRoute), 1);
    assert_eq!(sim.router(r).pit().len(), 0);
}

#[test]
fn retransmission_after_loss_is_forwarded_again() {
    let (mut sim, cs, r, p, rp) = line(1);
    sim.set_link_up(r, rp, false);
    sim.express(cs[0], "/p/lost", false, false, 2000);
    sim.run_for(5 * MS);
    sim.set_link_up(r, rp, true);
    // Inside the suppression interval: suppressed.
    sim.express(cs[0], "/p/lost", false, false, 2000);
    sim.run_for(5 * MS);
    assert!(sim.producer(p).interests.is_empty());
    assert_eq!(sim.router(r).counters().suppressed, 1);
    // After it: forwarded, answered.
    sim.run_for(20 * MS);
    sim.express(cs[0], "/p/lost", false, false, 2000);
    sim.run_for(20 * MS);
    assert_eq!(sim.producer(p).interests.len(), 1);
    assert_eq!(sim.consumer(cs[0]).data.len(), 1);
}

#[test]
fn second_fetch_hits_the_cs() {
    let (mut sim, cs, r, p, _) = line(2);
    sim.express(cs[0], "/p/c", false, false, 1000);
    sim.run_for(20 * MS);
    sim.express(cs[1], "/p/c", false, false, 1000);
    sim.run_for(20 * MS);
    assert_eq!(sim.producer(p).interests.len(), 1);
    assert_eq!(sim.consumer(cs[1]).data.len(), 1);
    assert_eq!(sim.router(r).counters().cs_hits, 1);
}

#[test]
fn must_be_fresh_honours_freshness_period() {
    let (mut sim, cs, r, p, _) = line(1); // producer freshness 100 ms
    let c = cs[0];
    sim.express(c, "/p/f", false, true, 1000);
    sim.run_for(20 * MS);
    sim.express(c, "/p/f", false, true, 1000); // ~20 ms old: fresh
    sim.run_for(20 * MS);
    assert_eq!(sim.producer(p).interests.len(), 1);
    sim.run_for(200 * MS);
    sim.express(c, "/p/f", false, true, 1000); // stale: to the producer
    sim.run_for(20 * MS);
    assert_eq!(sim.producer(p).interests.len(), 2);
    sim.run_for(200 * MS);
    sim.express(c, "/p/f", false, false, 1000); // stale but acceptable
    sim.run_for(20 * MS);
    assert_eq!(sim.producer(p).interests.len(), 2);
    assert_eq!(sim.consumer(c).data.len(), 4);
    assert_eq!(sim.router(r).counters().cs_hits, 2);
}

#[test]
fn pit_entries_expire() {
    let (mut sim, cs, r, _, rp) = line(1);
    sim.set_link_up(r, rp, false);
    sim.express(cs[0], "/p/e", false, false, 100);
    sim.run_for(50 * MS);
    assert_eq!(sim.router(r).pit().len(), 1);
    sim.run_for(100 * MS);
    assert_eq!(sim.router(r).pit().len(), 0);
    assert_eq!(sim.router(r).pit().counters().expired, 1);
}

#[test]
fn can_be_prefix_discovers_and_then_hits_the_cs() {
    let (mut sim, cs, r, p, _) = line(1);
    sim.express(cs[0], "/p", true, false, 1000);
    sim.run_for(20 * MS);
    assert_eq!(sim.consumer(cs[0]).data[0].1, "/p/v=1");
    sim.express(cs[0], "/p", true, false, 1000);
    sim.run_for(20 * MS);
    assert_eq!(
        sim.consumer(cs[0]).data[1].1,
        "/p/v=1",
        "served from the CS"
    );
    assert_eq!(sim.producer(p).interests.len(), 1);
    assert_eq!(sim.router(r).counters().cs_hits, 1);
    // Without CanBePrefix, /p is a different Interest.
    sim.express(cs[0], "/p", false, false, 1000);
    sim.run_for(20 * MS);
    assert_eq!(sim.producer(p).interests.len(), 2);
}

#[test]
fn full_pit_answers_nack_congestion() {
    let mut sim = Sim::new(3);
    let r = sim.add_router(ShardConfig {
        pit_capacity: 2,
        ..cfg()
    });
    let c = sim.add_consumer();
    sim.link(c, r, LinkSpec::default());
    let p = sim.add_producer("/p", 100);
    let (rp, _) = sim.link(r, p, LinkSpec::default());
    sim.route(r, "/p", rp, 1);
    sim.set_link_up(r, rp, false);
    for i in 0..3 {
        sim.express(c, &format!("/p/{i}"), false, false, 1000);
    }
    sim.run_for(10 * MS);
    assert_eq!(sim.router(r).counters().dropped(DropReason::PitFull), 1);
    assert_eq!(sim.consumer(c).nacks.len(), 1);
    assert_eq!(sim.consumer(c).nacks[0].2, NackReason::Congestion);
    assert_eq!(sim.router(r).pit().len(), 2);
}

#[test]
fn best_route_tries_the_next_hop_after_a_nack() {
    let mut sim = Sim::new(4);
    let c = sim.add_consumer();
    let r = sim.add_router(cfg());
    let dead_end = sim.add_router(cfg()); // no routes: answers Nack NoRoute
    let p = sim.add_producer("/p", 100);
    sim.link(c, r, LinkSpec::default());
    let (to_dead, _) = sim.link(r, dead_end, LinkSpec::default());
    let (to_p, _) = sim.link(r, p, LinkSpec::default());
    sim.route(r, "/p", to_dead, 1);
    sim.route(r, "/p", to_p, 5);
    sim.express(c, "/p/retry", false, false, 1000);
    sim.run_for(30 * MS);
    assert_eq!(
        sim.router(dead_end).counters().dropped(DropReason::NoRoute),
        1
    );
    assert_eq!(sim.producer(p).interests.len(), 1);
    assert_eq!(sim.consumer(c).data.len(), 1);
    assert!(sim.consumer(c).nacks.is_empty());
}

#[test]
fn adaptive_prefers_the_faster_path() {
    let mut sim = Sim::new(5);
    let c = sim.add_consumer();
    let r = sim.add_router(cfg());
    sim.link(c, r, LinkSpec::default());
    let fast = sim.add_producer("/a", 0);
    let slow = sim.add_producer("/a", 0);
    let (ff, _) = sim.link(
        r,
        fast,
        LinkSpec {
            delay_ns: MS,
            loss: 0.0,
        },
    );
    let (fs, _) = sim.link(
        r,
        slow,
        LinkSpec {
            delay_ns: 40 * MS,
            loss: 0.0,
        },
    );
    sim.route(r, "/a", ff, 1);
    sim.route(r, "/a", fs, 1);
    sim.strategy(r, "/a", StrategyKind::Adaptive.id());
    for i in 0..400 {
        sim.express(c, &format!("/a/{i}"), false, false, 1000);
        sim.run_for(MS / 2);
    }
    sim.run_for(200 * MS);
    let (nf, ns) = (
        sim.producer(fast).interests.len(),
        sim.producer(slow).interests.len(),
    );
    assert_eq!(nf + ns, 400);
    assert!(nf > 3 * ns, "fast {nf} vs slow {ns}");
    assert_eq!(sim.consumer(c).data.len(), 400);
}

#[test]
fn hop_limit_is_decremented_and_enforced() {
    let mut sim = Sim::new(6);
    let c = sim.add_consumer();
    let r1 = sim.add_router(cfg());
    let r2 = sim.add_router(cfg());
    let p = sim.add_producer("/h", 100);
    sim.link(c, r1, LinkSpec::default());
    let (a, _) = sim.link(r1, r2, LinkSpec::default());
    let (b, _) = sim.link(r2, p, LinkSpec::default());
    sim.route(r1, "/h", a, 1);
    sim.route(r2, "/h", b, 1);
    let mut i = InterestRepr::new(NameBuf::from_uri("/h/x").unwrap());
    i.nonce = Some(1);
    i.hop_limit = Some(1);
    sim.transmit(c, FaceId(1), i.to_vec().unwrap());
    sim.run_for(20 * MS);
    assert_eq!(sim.router(r2).counters().dropped(DropReason::HopLimit), 1);
    assert!(sim.producer(p).interests.is_empty());
    i.nonce = Some(2);
    i.hop_limit = Some(2);
    sim.transmit(c, FaceId(1), i.to_vec().unwrap());
    sim.run_for(20 * MS);
    assert_eq!(sim.producer(p).interests.len(), 1);
}

#[test]
fn lossy_links_with_consumer_retries_eventually_deliver() {
    let mut sim = Sim::new(8);
    let c = sim.add_consumer();
    let r = sim.add_router(cfg());
    let p = sim.add_producer("/l", 1000);
    sim.link(
        c,
        r,
        LinkSpec {
            delay_ns: 2 * MS,
            loss: 0.3,
        },
    );
    let (rp, _) = sim.link(
        r,
        p,
        LinkSpec {
            delay_ns: 2 * MS,
            loss: 0.3,
        },
    );
    sim.route(r, "/l", rp, 1);
    for seg in 0..20 {
        let name = format!("/l/seg={seg}");
        for _try in 0..30 {
            sim.express(c, &name, false, false, 50);
            sim.run_for(60 * MS);
            if sim.consumer(c).data.iter().any(|d| d.1 == name) {
                break;
            }
        }
    }
    assert_eq!(sim.consumer(c).data.len(), 20);
    assert!(sim.lost > 0, "the links did lose frames");
}

#[test]
fn fragmented_interests_are_reassembled_and_forwarded() {
    let (mut sim, cs, r, p, _) = line(1);
    let mut i = InterestRepr::new(NameBuf::from_uri("/p/big").unwrap());
    i.nonce = Some(77);
    i.set_app_params(vec![0xAB; 5000]);
    let wire = i.to_vec().unwrap();
    let frag = ndx_codec::Fragmenter::new(1400).unwrap();
    let mut pieces = frag
        .fragment(&wire, &ndx_codec::LpHeaders::default(), 1000)
        .unwrap();
    assert!(pieces.count() >= 4);
    let mut frames = Vec::new();
    let mut buf = vec![0; 1400];
    while let Some(n) = pieces.next_into(&mut buf) {
        frames.push(buf[..n.unwrap()].to_vec());
    }
    // Out of order, as a real link may deliver them.
    for f in frames.into_iter().rev() {
        sim.transmit(cs[0], FaceId(1), f);
    }
    sim.run_for(20 * MS);
    assert_eq!(sim.producer(p).interests.len(), 1);
    assert!(sim.producer(p).interests[0].starts_with("/p/big/params-sha256="));
    assert_eq!(sim.consumer(cs[0]).data.len(), 1);
    assert_eq!(sim.router(r).counters().dropped(DropReason::Reassembly), 0);
}

#[test]
fn names_deeper_than_the_fib_limit_still_hit_the_cs() {
    let (mut sim, cs, r, p, _) = line(1);
    let deep: String = (0..40).map(|i| format!("/c{i}")).collect();
    let name = format!("/p{deep}");
    sim.express(cs[0], &name, false, false, 1000);
    sim.run_for(20 * MS);
    sim.express(cs[0], &name, false, false, 1000);
    sim.run_for(20 * MS);
    assert_eq!(sim.consumer(cs[0]).data.len(), 2);
    assert_eq!(
        sim.producer(p).interests.len(),
        1,
        "second fetch from the CS"
    );
    assert_eq!(sim.router(r).counters().cs_hits, 1);
}

#[test]
fn deep_can_be_prefix_interests_are_satisfied_and_cached() {
    // The producer's prefix has 36 components; a CanBePrefix Interest for exactly that prefix
    // gets `<prefix>/v=1`, so the CS alias is deeper than the 32 precomputed prefix hashes.
    let deep: String = (0..35).map(|i| format!("/d{i}")).collect();
    let prefix = format!("/p{deep}");
    let mut sim = Sim::new(9);
    let r = sim.add_router(cfg());
    let c = sim.add_consumer();
    sim.link(c, r, LinkSpec::default());
    let p = sim.add_producer(&prefix, 100);
    let (rp, _) = sim.link(r, p, LinkSpec::default());
    sim.route(r, "/p", rp, 1);
    sim.express(c, &prefix, true, false, 1000);
    sim.run_for(20 * MS);
    assert_eq!(sim.consumer(c).data.len(), 1);
    assert_eq!(sim.consumer(c).data[0].1, format!("{prefix}/v=1"));
    sim.express(c, &prefix, true, false, 1000);
    sim.run_for(20 * MS);
    assert_eq!(
        sim.consumer(c).data.len(),
        2,
        "served from the CS through the alias"
    );
    assert_eq!(sim.producer(p).interests.len(), 1);
    assert_eq!(sim.router(r).counters().cs_hits, 1);
}
