//! Content store L1: replacement against reference models, admission, freshness,
//! CanBePrefix aliases and implicit-digest lookups.

use std::collections::VecDeque;

use ndx_codec::{Data, DataRepr, NameBuf};
use ndx_core::{Admission, Cs, CsConfig, HashKey, Replacement};
use proptest::prelude::*;

const KEY: HashKey = HashKey::new(3, 4);

fn data(name: &str, freshness_ms: Option<u64>, len: usize) -> Vec<u8> {
    let mut d = DataRepr::new(NameBuf::from_uri(name).unwrap(), vec![7; len]);
    d.freshness_ms = freshness_ms;
    d.to_vec().unwrap()
}

fn cs(capacity: usize, replacement: Replacement, admission: Admission) -> Cs {
    Cs::new(
        CsConfig {
            capacity,
            slot_size: 512,
            replacement,
            admission,
            seed: 9,
        },
        KEY,
    )
}

fn get(cs: &mut Cs, now: u64, uri: &str, cbp: bool, mbf: bool) -> Option<Vec<u8>> {
    let n = NameBuf::from_uri(uri).unwrap();
    let h = KEY.name(&n.as_name());
    cs.lookup(now, &n.as_name(), h, cbp, mbf)
        .map(|hit| hit.data.to_vec())
}

fn put(cs: &mut Cs, now: u64, wire: &[u8]) -> bool {
    cs.insert(now, &Data::decode(wire).unwrap(), None)
}

proptest! {
    /// LRU and FIFO evict exactly what a reference recency queue says.
    #[test]
    fn lru_and_fifo_match_reference(lru in any::<bool>(), ops in proptest::collection::vec((any::<bool>(), 0u8..12), 1..300)) {
        let policy = if lru { Replacement::Lru } else { Replacement::Fifo };
        let mut c = cs(5, policy, Admission::Always);
        let mut model: VecDeque<u8> = VecDeque::new(); // front = most recent
        for (insert, k) in ops {
            let uri = format!("/k/{k}");
            if insert {
                prop_assert!(put(&mut c, 0, &data(&uri, None, 10)));
                model.retain(|&x| x != k);
                model.push_front(k);
                model.truncate(5);
            } else {
                let hit = get(&mut c, 0, &uri, false, false).is_some();
                let pos = model.iter().position(|&x| x == k);
                prop_assert_eq!(hit, pos.is_some(), "key {}", k);
                if let (true, Some(p)) = (lru, pos) {
                    model.remove(p);
                    model.push_front(k);
                }
            }
            prop_assert_eq!(c.len(), model.len());
        }
    }
}

#[test]
fn clock_gives_referenced_entries_a_second_chance() {
    let mut c = cs(3, Replacement::Clock, Admission::Always);
    for k in ["/a", "/b", "/c"] {
        put(&mut c, 0, &data(k, None, 5));
    }
    assert!(get(&mut c, 0, "/a", false, false).is_some());
    put(&mut c, 0, &data("/d", None, 5)); // /a is referenced: /b goes
    assert!(get(&mut c, 0, "/a", false, false).is_some());
    assert!(get(&mut c, 0, "/b", false, false).is_none());
    assert!(get(&mut c, 0, "/d", false, false).is_some());
    assert_eq!(c.counters().evictions, 1);
}

#[test]
fn must_be_fresh_and_freshness_period() {
    let mut c = cs(4, Replacement::Lru, Admission::Always);
    put(&mut c, 1_000, &data("/f", Some(10), 5));
    put(&mut c, 1_000, &data("/stale", None, 5));
    assert!(get(&mut c, 1_000 + 9_999_999, "/f", false, true).is_some());
    assert!(get(&mut c, 1_000 + 10_000_000, "/f", false, true).is_none());
    assert!(get(&mut c, 1_000 + 10_000_000, "/f", false, false).is_some());
    assert!(
        get(&mut c, 1_000, "/stale", false, true).is_none(),
        "no FreshnessPeriod: never fresh"
    );
    let ctr = c.counters();
    assert_eq!((ctr.hits, ctr.misses), (2, 2));
}

#[test]
fn can_be_prefix_uses_aliases_and_digest_names_are_checked() {
    let mut c = cs(4, Replacement::Lru, Admission::Always);
    let wire = data("/video/v=1/seg=0", None, 20);
    let d = Data::decode(&wire).unwrap();
    let prefix = NameBuf::from_uri("/video").unwrap();
    let ph = KEY.name(&prefix.as_name());
    assert!(c.insert(0, &d, Some((&prefix.as_name(), ph))));
    assert_eq!(
        get(&mut c, 0, "/video", true, false).as_deref(),
        Some(&wire[..])
    );
    assert!(
        get(&mut c, 0, "/video", false, false).is_none(),
        "exact lookup ignores aliases"
    );
    assert!(get(&mut c, 0, "/vid", true, false).is_none());
    let full = d.full_name().to_string();
    assert_eq!(
        get(&mut c, 0, &full, false, false).as_deref(),
        Some(&wire[..])
    );
    let wrong = format!("/video/v=1/seg=0/sha256digest={}", "00".repeat(32));
    assert!(get(&mut c, 0, &wrong, false, false).is_none());
    // Evicting the Data removes its alias too.
    c.remove(0);
    assert!(get(&mut c, 0, "/video", true, false).is_none());
}

#[test]
fn admission_policies() {
    let mut c = cs(8, Replacement::Lru, Admission::SecondHit { window: 4 });
    let w = data("/x", None, 5);
    assert!(!put(&mut c, 0, &w), "first offer only remembered");
    assert!(put(&mut c, 0, &w), "second offer admitted");
    assert_eq!(c.counters().rejected, 1);

    let mut c = cs(4096, Replacement::Lru, Admission::Probabilistic(0.25));
    let admitted = (0..4000)
        .filter(|i| put(&mut c, 0, &data(&format!("/p/{i}"), None, 1)))
        .count();
    assert!(
        (800..1200).contains(&admitted),
        "admitted {admitted} of 4000 at p = 0.25"
    );

    let mut c = cs(2, Replacement::Lru, Admission::Always);
    assert!(!put(&mut c, 0, &data("/big", None, 600)));
    assert_eq!(c.counters().too_large, 1);
    assert!(c.bytes_per_entry() >= 512);
}

#[test]
fn reinserting_a_name_replaces_it() {
    let mut c = cs(4, Replacement::Fifo, Admission::Always);
    put(&mut c, 0, &data("/r", None, 5));
    let newer = data("/r", Some(1000), 6);
    put(&mut c, 0, &newer);
    assert_eq!(c.len(), 1);
    assert_eq!(
        get(&mut c, 0, "/r", false, false).as_deref(),
        Some(&newer[..])
    );
}
