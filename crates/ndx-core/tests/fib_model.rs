//! Model-based tests of the FIB: random route operations compared with a reference map whose
//! longest-prefix match scans every prefix.

use std::collections::BTreeMap;

use ndx_codec::NameBuf;
use ndx_core::{
    FaceId, Fib, HashKey, MAX_PREFIX_DEPTH, NameHashes, NextHop, StrategyId, prefix_hashes,
};
use proptest::prelude::*;

fn name(comps: &[u8]) -> NameBuf {
    let mut n = NameBuf::new();
    for c in comps {
        // Component 2 is long, so deeper names exceed the FIB's inline name bytes.
        if *c == 2 {
            n.push_generic(b"cccccccccccccccccccc");
        } else {
            n.push_generic(&[b'a' + c]);
        }
    }
    n
}

#[derive(Debug, Clone)]
enum Op {
    Add(Vec<u8>, u32, u32),
    RemoveHop(Vec<u8>, u32),
    RemoveRoute(Vec<u8>),
    Strategy(Vec<u8>, u8),
    Publish,
    Lookup(Vec<u8>),
}

fn comps(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(0u8..3, 0..max)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (comps(6), 0u32..4, 0u32..100).prop_map(|(c, f, cost)| Op::Add(c, f, cost)),
        2 => (comps(6), 0u32..4).prop_map(|(c, f)| Op::RemoveHop(c, f)),
        1 => comps(6).prop_map(Op::RemoveRoute),
        1 => (comps(6), 0u8..4).prop_map(|(c, s)| Op::Strategy(c, s)),
        2 => Just(Op::Publish),
        6 => comps(9).prop_map(Op::Lookup),
    ]
}

type Model = BTreeMap<Vec<u8>, (Vec<NextHop>, StrategyId)>;

fn model_lpm(model: &Model, c: &[u8]) -> Option<(usize, Vec<NextHop>, StrategyId)> {
    (0..=c.len())
        .rev()
        .find_map(|k| model.get(&c[..k]).map(|(h, s)| (k, h.clone(), *s)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn fib_matches_reference(stage1 in 1usize..4, ops in proptest::collection::vec(op(), 1..120)) {
        let key = HashKey::new(7, 9);
        let (mut fib, reader) = Fib::new(key, stage1);
        let mut model: Model = BTreeMap::new();
        let mut published: Model = BTreeMap::new();
        for op in ops {
            match op {
                Op::Add(c, f, cost) => {
                    let hop = NextHop { face: FaceId(f), cost };
                    fib.add_nexthop(&name(&c).as_name(), hop).unwrap();
                    let e = model.entry(c).or_default();
                    match e.0.iter_mut().find(|h| h.face == hop.face) {
                        Some(h) => h.cost = cost,
                        None => e.0.push(hop),
                    }
                }
                Op::RemoveHop(c, f) => {
                    let had = model.get(&c).is_some_and(|e| e.0.iter().any(|h| h.face == FaceId(f)));
                    prop_assert_eq!(fib.remove_nexthop(&name(&c).as_name(), FaceId(f)), had);
                    if let Some(e) = model.get_mut(&c) {
                        e.0.retain(|h| h.face != FaceId(f));
                        if e.0.is_empty() {
                            model.remove(&c);
                        }
                    }
                }
                Op::RemoveRoute(c) => {
                    prop_assert_eq!(fib.remove_route(&name(&c).as_name()), model.remove(&c).is_some());
                }
                Op::Strategy(c, s) => {
                    let has = model.contains_key(&c);
                    prop_assert_eq!(fib.set_strategy(&name(&c).as_name(), StrategyId(s)), has);
                    if let Some(e) = model.get_mut(&c) {
                        e.1 = StrategyId(s);
                    }
                }
                Op::Publish => {
                    fib.publish();
                    published = model.clone();
                }
                Op::Lookup(c) => {
                    let n = name(&c);
                    let mut hashes = [0u64; MAX_PREFIX_DEPTH];
                    let k = prefix_hashes(&key, &n.as_name(), &mut hashes);
                    // Readers see the last published state, not pending changes.
                    let snap = reader.snapshot();
                    let got = snap.lpm(&n.as_name(), &hashes[..k])
                        .map(|m| (m.prefix_len, m.nexthops.to_vec(), m.strategy));
                    prop_assert_eq!(&got, &model_lpm(&published, &c));
                    // The lazily hashed lookup agrees.
                    let mut lazy = NameHashes::new(&key, &n.as_name(), snap.stage1());
                    let got_lazy = snap.lpm_hashed(&mut lazy)
                        .map(|m| (m.prefix_len, m.nexthops.to_vec(), m.strategy));
                    prop_assert_eq!(got_lazy, got);
                    // The writer's own view sees everything.
                    let mine = fib.lpm_unpublished(&n.as_name()).map(|r| (r.prefix.len(), r.nexthops, r.strategy));
                    prop_assert_eq!(mine, model_lpm(&model, &c));
                }
            }
            prop_assert_eq!(fib.len(), model.len());
        }
        let mut routes: Vec<(NameBuf, Vec<NextHop>)> = fib.routes().into_iter().map(|r| (r.prefix, r.nexthops)).collect();
        routes.sort_by(|a, b| a.0.cmp(&b.0));
        let mut want: Vec<(NameBuf, Vec<NextHop>)> = model.iter().map(|(c, (h, _))| (name(c), h.clone())).collect();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        prop_assert_eq!(routes, want);
    }
}

#[test]
fn many_routes_grow_and_shrink_chunks() {
    let key = HashKey::new(1, 2);
    let (mut fib, reader) = Fib::new(key, 2);
    let route = |i: u32| {
        let mut n = NameBuf::new();
        n.push_generic(b"net")
            .push_generic(format!("site{}", i % 97).as_bytes());
        n.push_generic(format!("host{i}").as_bytes());
        if i.is_multiple_of(3) {
            n.push_generic(b"deep").push_generic(&i.to_be_bytes());
        }
        n
    };
    const N: u32 = 60_000;
    for i in 0..N {
        fib.add_nexthop(
            &route(i).as_name(),
            NextHop {
                face: FaceId(i % 5),
                cost: i,
            },
        )
        .unwrap();
    }
    fib.publish();
    assert_eq!(fib.len(), N as usize);
    let snap = reader.snapshot();
    for i in (0..N).step_by(7) {
        let mut n = route(i);
        n.push_generic(b"data").push_segment(3);
        let mut hashes = [0u64; MAX_PREFIX_DEPTH];
        let k = prefix_hashes(&key, &n.as_name(), &mut hashes);
        let m = snap.lpm(&n.as_name(), &hashes[..k]).expect("route matches");
        assert_eq!(m.prefix_len, route(i).len());
        assert_eq!(
            m.nexthops,
            &[NextHop {
                face: FaceId(i % 5),
                cost: i
            }]
        );
    }
    // Remove two thirds; lookups of removed routes fall back to nothing (no shorter routes).
    for i in 0..N {
        if i % 3 != 1 {
            assert!(fib.remove_route(&route(i).as_name()));
        }
    }
    fib.publish();
    assert_eq!(fib.len(), (N / 3) as usize);
    let snap2 = reader.snapshot();
    assert!(snap2.generation() > snap.generation());
    for i in 0..300 {
        let n = route(i);
        let mut hashes = [0u64; MAX_PREFIX_DEPTH];
        let k = prefix_hashes(&key, &n.as_name(), &mut hashes);
        assert_eq!(
            snap2.lpm(&n.as_name(), &hashes[..k]).is_some(),
            i % 3 == 1,
            "route {i}"
        );
        // The old snapshot is untouched by later updates.
        assert!(snap.lpm(&n.as_name(), &hashes[..k]).is_some());
    }
    assert!(fib.memory_bytes() > 0);
}
