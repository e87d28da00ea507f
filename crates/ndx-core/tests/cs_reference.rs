//! Content store L1 against a naive reference: every slot a plain record, every lookup a
//! linear scan. Random insertions (replacing older copies, with and without CanBePrefix
//! aliases, too large ones), exact, CanBePrefix, MustBeFresh and implicit-digest lookups,
//! removals by slot (live, dead and out of range), `holds`, the eviction log and the clock,
//! under FIFO, LRU and CLOCK and at every capacity from one slot to twenty: which slot is
//! filled and which is evicted, what each lookup returns, the counters and the length must
//! agree at every step. Many Data share the alias `/a`, whose index entries all start at one
//! home bucket, so that chain overflows (and lookups whose home it is walk on).

use std::collections::VecDeque;

use ndx_codec::{Data, DataRepr, Name, NameBuf};
use ndx_core::{Admission, Cs, CsConfig, CsCounters, HashKey, Replacement};
use proptest::prelude::*;

const KEY: HashKey = HashKey::new(11, 13);
const SLOT: usize = 512;

/// Data names (hierarchical, so that the prefixes below alias some of them).
const NAMES: [&str; 19] = [
    "/a", "/a/b", "/a/c", "/a/b/d", "/b", "/b/e", "/c", "/a/0", "/a/1", "/a/2", "/a/3", "/a/4",
    "/a/5", "/a/6", "/a/7", "/a/8", "/a/9", "/a/10", "/a/11",
];
/// CanBePrefix prefixes: the empty name, proper prefixes of some names, and one of none.
const PREFIXES: [&str; 5] = ["/", "/a", "/a/b", "/b", "/x"];

#[derive(Debug, Clone)]
enum Op {
    /// Name, alias prefix, FreshnessPeriod (ms), payload length.
    Insert(usize, Option<usize>, Option<u64>, usize),
    /// Interest name (a Data name, else a prefix), CanBePrefix, MustBeFresh.
    Lookup(usize, bool, bool),
    /// A Data name with an implicit digest: its stored Data's (true) or a wrong one.
    LookupDigest(usize, bool, bool),
    Remove(u32),
    Holds(usize),
    Advance(u64),
    Drain,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..NAMES.len(),
              prop_oneof![2 => Just(None), 2 => Just(Some(1)), 1 => (0..PREFIXES.len()).prop_map(Some)],
              proptest::option::of(0u64..20), prop_oneof![9 => 0usize..300, 1 => 300usize..600])
            .prop_map(|(n, p, f, l)| Op::Insert(n, p, f, l)),
        6 => (0..NAMES.len() + PREFIXES.len(), any::<bool>(), any::<bool>())
            .prop_map(|(n, c, m)| Op::Lookup(n, c, m)),
        2 => (0..NAMES.len(), any::<bool>(), any::<bool>()).prop_map(|(n, ok, m)| Op::LookupDigest(n, ok, m)),
        1 => (0u32..24).prop_map(Op::Remove),
        1 => (0..NAMES.len()).prop_map(Op::Holds),
        2 => (0u64..15).prop_map(Op::Advance),
        1 => Just(Op::Drain),
    ]
}

fn name(uri: &str) -> NameBuf {
    NameBuf::from_uri(uri).unwrap()
}

fn wire(n: &str, freshness_ms: Option<u64>, len: usize) -> Vec<u8> {
    let mut d = DataRepr::new(name(n), vec![n.len() as u8; len]);
    d.freshness_ms = freshness_ms;
    d.to_vec().unwrap()
}

/// One occupied slot of the reference.
#[derive(Debug, Clone)]
struct Entry {
    name: NameBuf,
    wire: Vec<u8>,
    fresh_until: u64,
    alias: Option<NameBuf>,
    referenced: bool,
}

/// The reference store: slots, the free stack and the recency order as the CS keeps them.
struct Model {
    slots: Vec<Option<Entry>>,
    free: Vec<u32>,
    /// Front: most recent (FIFO, LRU).
    recency: VecDeque<u32>,
    hand: u32,
    policy: Replacement,
    counters: CsCounters,
    evicted: Vec<(u64, Vec<u8>)>,
    log: bool,
}

impl Model {
    fn new(capacity: usize, policy: Replacement, log: bool) -> Self {
        Self {
            slots: vec![None; capacity],
            free: (0..capacity as u32).rev().collect(),
            recency: VecDeque::new(),
            hand: 0,
            policy,
            counters: CsCounters::default(),
            evicted: Vec::new(),
            log,
        }
    }

    fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    fn detach(&mut self, slot: u32) -> bool {
        if self.slots.get(slot as usize).is_none_or(Option::is_none) {
            return false;
        }
        self.slots[slot as usize] = None;
        self.recency.retain(|&s| s != slot);
        true
    }

    fn remove(&mut self, slot: u32) {
        if self.detach(slot) {
            self.free.push(slot);
        }
    }

    fn victim(&mut self) -> u32 {
        match self.policy {
            Replacement::Fifo | Replacement::Lru => *self.recency.back().unwrap(),
            Replacement::Clock => loop {
                let h = self.hand;
                self.hand = (h + 1) % self.slots.len() as u32;
                let e = self.slots[h as usize].as_mut().unwrap();
                if !e.referenced {
                    return h;
                }
                e.referenced = false;
            },
        }
    }

    fn insert(&mut self, now: u64, wire: &[u8], prefix: Option<&NameBuf>) -> bool {
        if wire.len() > SLOT {
            self.counters.too_large += 1;
            return false;
        }
        let data = Data::decode(wire).unwrap();
        let n = data.name().to_buf();
        if let Some(old) = self.position(|e| e.name == n) {
            self.remove(old);
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                let v = self.victim();
                if self.log {
                    let e = self.slots[v as usize].as_ref().unwrap();
                    self.evicted
                        .push((KEY.name(&e.name.as_name()), e.wire.clone()));
                }
                self.detach(v);
                self.counters.evictions += 1;
                v
            }
        };
        let alias = prefix
            .filter(|p| p.as_name().is_prefix_of(&n.as_name()) && p.len() < n.len())
            .cloned();
        let fresh_until =
            now.saturating_add(data.freshness_ms().unwrap_or(0).saturating_mul(1_000_000));
        self.slots[slot as usize] = Some(Entry {
            name: n,
            wire: wire.to_vec(),
            fresh_until,
            alias,
            referenced: false,
        });
        self.recency.push_front(slot);
        self.counters.insertions += 1;
        true
    }

    fn position(&self, f: impl Fn(&Entry) -> bool) -> Option<u32> {
        self.slots
            .iter()
            .position(|e| e.as_ref().is_some_and(&f))
            .map(|s| s as u32)
    }

    /// Slots a lookup may return (more than one only through aliases).
    fn candidates(&self, now: u64, n: &Name<'_>, cbp: bool, mbf: bool) -> Vec<u32> {
        let fresh = |e: &Entry| !mbf || now < e.fresh_until;
        let mut c: Vec<u32> = (0..self.slots.len() as u32)
            .filter(|&s| {
                self.slots[s as usize].as_ref().is_some_and(|e| {
                    fresh(e)
                        && (e.name.as_name() == *n
                            || (cbp && e.alias.as_ref().is_some_and(|a| a.as_name() == *n)))
                })
            })
            .collect();
        if c.is_empty()
            && let Some(ndx_codec::ComponentKind::ImplicitDigest(d)) = n.last().map(|x| x.kind())
        {
            let data_name = n.prefix(n.len() - 1);
            c = (0..self.slots.len() as u32)
                .filter(|&s| {
                    self.slots[s as usize].as_ref().is_some_and(|e| {
                        fresh(e)
                            && e.name.as_name() == data_name
                            && Data::decode(&e.wire).unwrap().implicit_digest() == *d
                    })
                })
                .collect();
        }
        c
    }

    fn mark_used(&mut self, slot: u32) {
        match self.policy {
            Replacement::Fifo => {}
            Replacement::Lru => {
                self.recency.retain(|&s| s != slot);
                self.recency.push_front(slot);
            }
            Replacement::Clock => self.slots[slot as usize].as_mut().unwrap().referenced = true,
        }
    }
}

fn policy() -> impl Strategy<Value = Replacement> {
    prop_oneof![
        Just(Replacement::Fifo),
        Just(Replacement::Lru),
        Just(Replacement::Clock)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every step of a random workload agrees with the reference.
    #[test]
    fn cs_matches_reference(
        policy in policy(),
        capacity in prop_oneof![1usize..4, 4usize..21],
        log in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..200),
    ) {
        let mut cs = Cs::new(
            CsConfig { capacity, slot_size: SLOT, replacement: policy, admission: Admission::Always, seed: 1 },
            KEY,
        );
        cs.set_eviction_log(log);
        let mut model = Model::new(capacity, policy, log);
        let mut now = 1_000u64;
        for op in ops {
            match op {
                Op::Insert(n, p, fresh, len) => {
                    let w = wire(NAMES[n], fresh, len);
                    let d = Data::decode(&w).unwrap();
                    let prefix = p.map(|i| name(PREFIXES[i]));
                    let arg = prefix.as_ref().map(|p| (p.as_name(), KEY.name(&p.as_name())));
                    let stored = cs.insert(now, &d, arg.as_ref().map(|(p, h)| (p, *h)));
                    prop_assert_eq!(stored, model.insert(now, &w, prefix.as_ref()));
                }
                Op::Lookup(i, cbp, mbf) => {
                    let uri = NAMES.get(i).copied().unwrap_or_else(|| PREFIXES[i - NAMES.len()]);
                    let n = name(uri);
                    let want = model.candidates(now, &n.as_name(), cbp, mbf);
                    let hit = cs
                        .lookup(now, &n.as_name(), KEY.name(&n.as_name()), cbp, mbf)
                        .map(|h| (h.slot, h.data.to_vec()));
                    check_hit(&mut model, hit, &want)?;
                }
                Op::LookupDigest(i, correct, mbf) => {
                    let digest = match model.position(|e| e.name == name(NAMES[i])) {
                        Some(s) if correct => {
                            Data::decode(&model.slots[s as usize].as_ref().unwrap().wire)
                                .unwrap()
                                .implicit_digest()
                        }
                        _ => [0x5A; 32],
                    };
                    let mut n = name(NAMES[i]);
                    n.push(1, &digest).unwrap();
                    let want = model.candidates(now, &n.as_name(), false, mbf);
                    let hit = cs
                        .lookup(now, &n.as_name(), KEY.name(&n.as_name()), false, mbf)
                        .map(|h| (h.slot, h.data.to_vec()));
                    check_hit(&mut model, hit, &want)?;
                }
                Op::Remove(slot) => {
                    cs.remove(slot);
                    model.remove(slot);
                }
                Op::Holds(i) => {
                    let n = name(NAMES[i]);
                    prop_assert_eq!(
                        cs.holds(&n.as_name(), KEY.name(&n.as_name())),
                        model.position(|e| e.name == n).is_some()
                    );
                }
                Op::Advance(ms) => now += ms * 1_000_000,
                Op::Drain => {
                    let mut got = Vec::new();
                    cs.drain_evicted(|h, b| got.push((h, b.to_vec())));
                    prop_assert_eq!(got, std::mem::take(&mut model.evicted));
                }
            }
            prop_assert_eq!(cs.counters(), model.counters);
            prop_assert_eq!(cs.len(), model.len());
            prop_assert_eq!(cs.has_evicted(), !model.evicted.is_empty());
        }
        // Emptied slot by slot (live, then already dead), the store takes a full load again
        // (slots from the free stack, no eviction) and one more (an eviction).
        for s in 0..capacity as u32 {
            cs.remove(s);
            model.remove(s);
            cs.remove(s);
        }
        prop_assert!(cs.is_empty());
        for i in 0..=capacity {
            let n = &format!("/z/{i}");
            let w = wire(n, None, 8);
            prop_assert!(cs.insert(now, &Data::decode(&w).unwrap(), None));
            prop_assert!(model.insert(now, &w, None));
            let n = name(n);
            let want = model.candidates(now, &n.as_name(), false, false);
            prop_assert_eq!(want.len(), 1);
            let hit = cs
                .lookup(now, &n.as_name(), KEY.name(&n.as_name()), false, false)
                .map(|h| (h.slot, h.data.to_vec()));
            check_hit(&mut model, hit, &want)?;
            prop_assert_eq!(cs.counters(), model.counters);
        }
        prop_assert_eq!(cs.len(), capacity);
    }
}

/// The CS's answer is one of the reference's candidates (none when there are none), with that
/// slot's Data; the reference then counts it and updates recency the same way.
fn check_hit(
    model: &mut Model,
    hit: Option<(u32, Vec<u8>)>,
    want: &[u32],
) -> Result<(), TestCaseError> {
    match hit {
        Some((slot, data)) => {
            prop_assert!(want.contains(&slot), "slot {} not in {:?}", slot, want);
            prop_assert_eq!(&data, &model.slots[slot as usize].as_ref().unwrap().wire);
            model.counters.hits += 1;
            model.mark_used(slot);
        }
        None => {
            prop_assert!(want.is_empty(), "missed {:?}", want);
            model.counters.misses += 1;
        }
    }
    Ok(())
}
