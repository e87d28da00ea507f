//! The shard with an L2 on the simulator: the simulator's in-memory L2 carries out the
//! shard's batch reads and writes (as the I/O layer does with `ndx-hcs`).

use ndx_codec::NameBuf;
use ndx_core::sim::{LinkSpec, NodeId, Sim};
use ndx_core::{CsConfig, L2Admission, L2Config, Replacement, ShardConfig};

const MS: u64 = 1_000_000;
const B: u64 = 4;

fn cfg(l2: Option<L2Config>) -> ShardConfig {
    ShardConfig {
        hash_key: ndx_core::sim::SIM_KEY,
        cs: CsConfig {
            capacity: 8,
            slot_size: 2048,
            replacement: Replacement::Lru,
            ..CsConfig::default()
        },
        l2,
        ..ShardConfig::default()
    }
}

fn l2(prefetch: bool) -> L2Config {
    L2Config {
        batch: B,
        prefetch,
        ..L2Config::default()
    }
}

/// consumer — router — producer (/p), L2 reads take 100 us.
fn line(l2: Option<L2Config>) -> (Sim, NodeId, NodeId, NodeId) {
    let mut sim = Sim::new(3);
    let c = sim.add_consumer();
    let r = sim.add_router(cfg(l2));
    sim.link(c, r, LinkSpec::default());
    let p = sim.add_producer("/p", 100_000);
    let (rp, _) = sim.link(r, p, LinkSpec::default());
    sim.route(r, "/p", rp, 10);
    sim.set_l2_delay(r, MS / 10);
    (sim, c, r, p)
}

/// Fetches segments `range` of `/p/<content>` one after the other.
fn fetch(sim: &mut Sim, c: NodeId, content: &str, range: std::ops::Range<u64>) {
    for s in range {
        sim.express(c, &format!("/p/{content}/seg={s}"), false, false, 1000);
        sim.run_for(10 * MS);
    }
}

fn asked(sim: &Sim, p: NodeId, content: &str) -> usize {
    let prefix = format!("/p/{content}/");
    sim.producer(p)
        .interests
        .iter()
        .filter(|n| n.starts_with(&prefix))
        .count()
}

fn key(sim: &Sim, r: NodeId, content: &str, seg: u64) -> (u64, u64) {
    let name = NameBuf::from_uri(&format!("/p/{content}/seg={seg}")).expect("name");
    sim.router(r)
        .l2_key(&name.as_name())
        .expect("L2 configured")
}

/// Fills L1 with /p/a (two batches), then evicts it with /p/b.
fn warm(sim: &mut Sim, c: NodeId) {
    fetch(sim, c, "a", 0..2 * B);
    fetch(sim, c, "b", 0..2 * B);
}

#[test]
fn evicted_batches_are_written_whole_and_served_from_l2() {
    let (mut sim, c, r, p) = line(Some(l2(true)));
    warm(&mut sim, c);
    let (a0, a1) = (key(&sim, r, "a", 0), key(&sim, r, "a", B));
    let writes = sim.l2_log(r).writes.clone();
    assert_eq!(
        writes,
        vec![(a0.0, a0.1, B as usize), (a1.0, a1.1, B as usize)]
    );
    assert!(sim.router(r).l2_holds(a0.0, a0.1));

    fetch(&mut sim, c, "a", 0..2 * B);
    assert_eq!(
        asked(&sim, p, "a"),
        2 * B as usize,
        "no upstream Interest for /p/a"
    );
    let got: Vec<&str> = sim.consumer(c).data.iter().map(|d| d.1.as_str()).collect();
    assert_eq!(got.len(), 6 * B as usize);
    for s in 0..2 * B {
        assert_eq!(got[(4 * B + s) as usize], format!("/p/a/seg={s}"));
    }
    let k = sim.router(r).l2_counters().expect("L2");
    assert_eq!(k.served, 1, "seg=0 parked and answered from the batch");
    assert_eq!(k.fallbacks, 0);
    assert_eq!(sim.router(r).pit().len(), 0);
}

#[test]
fn penultimate_segment_prefetches_the_next_batch() {
    let (mut sim, c, r, _) = line(Some(l2(true)));
    warm(&mut sim, c);
    let (a0, a1) = (key(&sim, r, "a", 0), key(&sim, r, "a", B));
    fetch(&mut sim, c, "a", 0..B - 2);
    assert_eq!(
        sim.l2_log(r).reads,
        vec![a0],
        "only the missed batch so far"
    );
    fetch(&mut sim, c, "a", B - 2..B - 1);
    assert_eq!(
        sim.l2_log(r).reads,
        vec![a0, a1],
        "segment B-2 prefetched batch 1"
    );
    fetch(&mut sim, c, "a", B - 1..2 * B);
    let k = sim.router(r).l2_counters().expect("L2");
    assert_eq!((k.reads, k.prefetches, k.parked), (1, 1, 1));
    assert_eq!(sim.l2_log(r).reads.len(), 2, "batch 1 was not read again");
}

#[test]
fn serial_design_reads_a_batch_only_on_a_miss() {
    let (mut sim, c, r, p) = line(Some(l2(false)));
    warm(&mut sim, c);
    let (a0, a1) = (key(&sim, r, "a", 0), key(&sim, r, "a", B));
    fetch(&mut sim, c, "a", 0..B);
    assert_eq!(sim.l2_log(r).reads, vec![a0], "no prefetch");
    fetch(&mut sim, c, "a", B..2 * B);
    assert_eq!(
        sim.l2_log(r).reads,
        vec![a0, a1],
        "batch 1 read when seg=B missed"
    );
    let k = sim.router(r).l2_counters().expect("L2");
    assert_eq!((k.reads, k.prefetches, k.parked, k.served), (2, 0, 2, 2));
    assert_eq!(asked(&sim, p, "a"), 2 * B as usize);
}

#[test]
fn a_failed_read_falls_back_upstream() {
    let (mut sim, c, r, p) = line(Some(l2(false)));
    warm(&mut sim, c);
    sim.set_l2_failing(r, true);
    fetch(&mut sim, c, "a", 0..1);
    assert_eq!(
        asked(&sim, p, "a"),
        2 * B as usize + 1,
        "seg=0 asked upstream again"
    );
    assert_eq!(
        sim.consumer(c).data.last().map(|d| d.1.as_str()),
        Some("/p/a/seg=0")
    );
    let k = sim.router(r).l2_counters().expect("L2");
    assert_eq!((k.read_failures, k.fallbacks, k.served), (1, 1, 0));
    assert_eq!(sim.router(r).pit().len(), 0);
}

#[test]
fn a_retransmission_after_a_fallback_is_parked_on_the_l2_again() {
    // The producer is gone and the first read of the batch fails: the Interest falls back
    // upstream, where nothing answers. Its retransmission must look in the L2 again (which
    // holds the batch and now reads it) instead of waiting on the dead upstream.
    let mut sim = Sim::new(3);
    let c = sim.add_consumer();
    let r = sim.add_router(cfg(Some(l2(false))));
    sim.link(c, r, LinkSpec::default());
    let p = sim.add_producer("/p", 100_000);
    let (rp, pr) = sim.link(r, p, LinkSpec::default());
    sim.route(r, "/p", rp, 10);
    sim.set_l2_delay(r, MS / 10);
    warm(&mut sim, c);
    let a0 = key(&sim, r, "a", 0);
    assert!(sim.router(r).l2_holds(a0.0, a0.1));
    sim.set_link_up(r, rp, false);
    sim.set_link_up(p, pr, false);
    sim.set_l2_failing(r, true);
    let before = sim.consumer(c).data.len();
    sim.express_with_nonce(c, "/p/a/seg=0", false, false, 1000, 1);
    sim.run_for(10 * MS);
    let k = sim.router(r).l2_counters().expect("L2");
    assert_eq!((k.read_failures, k.fallbacks, k.served), (1, 1, 0));
    assert_eq!(sim.consumer(c).data.len(), before, "nobody answered");
    assert_eq!(sim.router(r).pit().len(), 1, "pending upstream");

    sim.set_l2_failing(r, false);
    sim.express_with_nonce(c, "/p/a/seg=0", false, false, 1000, 2);
    sim.run_for(10 * MS);
    let k = sim.router(r).l2_counters().expect("L2");
    assert_eq!((k.parked, k.served), (2, 1), "parked again and served");
    assert_eq!(
        sim.consumer(c).data.last().map(|d| d.1.as_str()),
        Some("/p/a/seg=0")
    );
    assert_eq!(sim.router(r).pit().len(), 0);
    assert_eq!(
        asked(&sim, p, "a"),
        2 * B as usize,
        "nothing reached the producer"
    );
}

#[test]
fn parked_interests_expire_with_their_pit_entry() {
    let (mut sim, c, r, p) = line(Some(l2(false)));
    warm(&mut sim, c);
    sim.set_l2_delay(r, 50 * MS);
    let before = sim.consumer(c).data.len();
    sim.express(c, "/p/a/seg=0", false, false, 10);
    sim.run_for(5 * MS);
    assert_eq!(sim.router(r).pit().len(), 1, "parked on the read");
    sim.run_for(15 * MS);
    assert_eq!(sim.router(r).pit().len(), 0, "expired with its lifetime");
    sim.run_for(60 * MS);
    assert_eq!(
        sim.l2_log(r).completed,
        1,
        "the read completed after the expiry"
    );
    assert_eq!(
        sim.consumer(c).data.len(),
        before,
        "nothing sent for a dead entry"
    );
    assert_eq!(asked(&sim, p, "a"), 2 * B as usize, "and nothing upstream");
    let k = sim.router(r).l2_counters().expect("L2");
    assert_eq!((k.served, k.fallbacks), (0, 0));
    // The batch is in L1 now: a new Interest is a CS hit.
    let hits = sim.router(r).counters().cs_hits;
    fetch(&mut sim, c, "a", 1..2);
    assert_eq!(sim.router(r).counters().cs_hits, hits + 1);
}

#[test]
fn aggregated_interests_share_one_read() {
    let mut sim = Sim::new(5);
    let r = sim.add_router(cfg(Some(l2(false))));
    let c1 = sim.add_consumer();
    let c2 = sim.add_consumer();
    sim.link(c1, r, LinkSpec::default());
    sim.link(c2, r, LinkSpec::default());
    let p = sim.add_producer("/p", 100_000);
    let (rp, _) = sim.link(r, p, LinkSpec::default());
    sim.route(r, "/p", rp, 10);
    sim.set_l2_delay(r, 5 * MS);
    warm(&mut sim, c1);
    sim.express(c1, "/p/a/seg=1", false, false, 1000);
    sim.express(c2, "/p/a/seg=1", false, false, 1000);
    sim.express(c2, "/p/a/seg=2", false, false, 1000);
    sim.run_for(20 * MS);
    assert_eq!(
        sim.l2_log(r).reads.len(),
        1,
        "one batch read for three Interests"
    );
    assert_eq!(sim.consumer(c2).data.len(), 2);
    assert_eq!(
        sim.consumer(c1).data.last().map(|d| d.1.as_str()),
        Some("/p/a/seg=1")
    );
    assert_eq!(asked(&sim, p, "a"), 2 * B as usize);
    let k = sim.router(r).l2_counters().expect("L2");
    assert_eq!((k.reads, k.parked, k.served), (1, 2, 2));
    assert_eq!(sim.router(r).counters().aggregated, 1);
}

#[test]
fn second_hit_admission_writes_a_batch_on_its_second_eviction() {
    let (mut sim, c, r, p) = line(Some(L2Config {
        admission: L2Admission::SecondHit { window: 64 },
        ..l2(false)
    }));
    warm(&mut sim, c);
    assert!(
        sim.l2_log(r).writes.is_empty(),
        "first eviction: not admitted"
    );
    assert_eq!(sim.router(r).l2_counters().expect("L2").rejected, 2);
    fetch(&mut sim, c, "a", 0..2 * B);
    assert_eq!(
        asked(&sim, p, "a"),
        4 * B as usize,
        "fetched upstream again"
    );
    let b0 = key(&sim, r, "b", 0);
    assert!(
        sim.l2_log(r).writes.is_empty(),
        "/p/b evicted for the first time"
    );
    fetch(&mut sim, c, "b", 0..2 * B);
    let writes: Vec<(u64, u64)> = sim.l2_log(r).writes.iter().map(|w| (w.0, w.1)).collect();
    assert_eq!(writes, vec![key(&sim, r, "a", 0), key(&sim, r, "a", B)]);
    assert_ne!(writes[0], b0);
}

#[test]
fn without_l2_nothing_changes() {
    let (mut sim, c, r, p) = line(None);
    warm(&mut sim, c);
    fetch(&mut sim, c, "a", 0..2 * B);
    assert!(sim.router(r).l2_counters().is_none());
    assert_eq!(sim.l2_log(r), &ndx_core::sim::L2Log::default());
    assert_eq!(
        asked(&sim, p, "a"),
        4 * B as usize,
        "L1 only: fetched upstream again"
    );
    assert_eq!(sim.consumer(c).data.len(), 6 * B as usize);
}

#[test]
fn no_prefetch_of_a_batch_already_in_l1() {
    let (mut sim, c, r, p) = line(Some(l2(true)));
    warm(&mut sim, c);
    fetch(&mut sim, c, "a", 0..2 * B);
    assert_eq!(sim.l2_log(r).reads.len(), 2);
    // Both batches of /p/a are in L1 (and still in L2): segment B-2 must not read batch 1.
    fetch(&mut sim, c, "a", 0..2 * B);
    assert_eq!(sim.l2_log(r).reads.len(), 2, "no read for a batch L1 holds");
    assert_eq!(sim.router(r).l2_counters().expect("L2").prefetches, 1);
    assert_eq!(asked(&sim, p, "a"), 2 * B as usize);
}

#[test]
fn a_stale_read_forgets_the_batch_and_falls_back() {
    let (mut sim, c, r, p) = line(Some(l2(false)));
    warm(&mut sim, c);
    let a0 = key(&sim, r, "a", 0);
    sim.router_l2_forget_store(r, a0);
    fetch(&mut sim, c, "a", 0..1);
    assert_eq!(asked(&sim, p, "a"), 2 * B as usize + 1);
    assert!(!sim.router(r).l2_holds(a0.0, a0.1), "index entry dropped");
    assert_eq!(sim.router(r).l2_counters().expect("L2").read_failures, 1);
}
