//! Model-based test of the PIT: random inserts, lookups, erasures, token lookups and
//! expiries compared with a HashMap reference.

use std::collections::HashMap;

use ndx_codec::NameBuf;
use ndx_core::{HashKey, Pit, PitId, TICK_NS, pit_key};
use proptest::prelude::*;

const KEY: HashKey = HashKey::new(31, 37);
const CAP: usize = 16;

#[derive(Debug, Clone)]
enum Op {
    Insert(u8, bool, bool, u64),
    Erase(usize),
    ByToken(usize),
    Advance(u64),
    Extend(usize, u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u8..24, any::<bool>(), any::<bool>(), 1u64..50).prop_map(|(n, c, m, l)| Op::Insert(n, c, m, l)),
        2 => any::<usize>().prop_map(Op::Erase),
        2 => any::<usize>().prop_map(Op::ByToken),
        2 => (0u64..30).prop_map(Op::Advance),
        1 => (any::<usize>(), 1u64..50).prop_map(|(i, l)| Op::Extend(i, l)),
    ]
}

type Key = (u8, bool, bool);

proptest! {
    #[test]
    fn pit_matches_reference(ops in proptest::collection::vec(op(), 1..300)) {
        let mut pit = Pit::new(5, CAP, 0);
        // Live entries: key -> (id, expiry in ns). Also every id ever issued, to probe stale ones.
        let mut model: HashMap<Key, (PitId, u64)> = HashMap::new();
        let mut issued: Vec<(Key, PitId)> = Vec::new();
        let mut now = 0u64;
        for op in ops {
            match op {
                Op::Insert(n, cbp, mbf, life_ms) => {
                    let name = NameBuf::from_uri(&format!("/p/{n}")).unwrap();
                    let k = pit_key(KEY.name(&name.as_name()), cbp, mbf);
                    let found = pit.find(k, &name.as_name(), cbp, mbf);
                    prop_assert_eq!(found, model.get(&(n, cbp, mbf)).map(|e| e.0));
                    if found.is_none() {
                        let expiry = now + life_ms * TICK_NS;
                        match pit.insert(k, &name.as_name(), cbp, mbf, expiry) {
                            Ok(id) => {
                                prop_assert!(model.len() < CAP);
                                model.insert((n, cbp, mbf), (id, expiry));
                                issued.push(((n, cbp, mbf), id));
                            }
                            Err(_) => prop_assert_eq!(model.len(), CAP),
                        }
                    }
                }
                Op::Erase(i) if !issued.is_empty() => {
                    let (k, id) = issued[i % issued.len()];
                    let live = model.get(&k).is_some_and(|e| e.0 == id);
                    prop_assert_eq!(pit.erase(id), live);
                    if live {
                        model.remove(&k);
                    }
                }
                Op::ByToken(i) if !issued.is_empty() => {
                    let (k, id) = issued[i % issued.len()];
                    let live = model.get(&k).is_some_and(|e| e.0 == id);
                    // A token names its entry exactly while it lives, and nothing afterwards.
                    let token = pit.token(id);
                    prop_assert_eq!(token[0], 5);
                    prop_assert_eq!(pit.by_token(&token), live.then_some(id));
                    prop_assert_eq!(pit.get(id).is_some(), live);
                }
                Op::Extend(i, life_ms) if !issued.is_empty() => {
                    let (k, id) = issued[i % issued.len()];
                    if let Some(e) = model.get_mut(&k).filter(|e| e.0 == id) {
                        e.1 = now + life_ms * TICK_NS;
                        pit.set_expiry(id, e.1);
                    }
                }
                Op::Advance(ms) => {
                    now += ms * TICK_NS;
                    let mut expired = Vec::new();
                    while let Some(id) = pit.next_expired(now) {
                        expired.push(id);
                        pit.erase(id);
                    }
                    let mut due: Vec<PitId> = model.values().filter(|e| e.1 <= now).map(|e| e.0).collect();
                    model.retain(|_, e| e.1 > now);
                    expired.sort_by_key(|id| format!("{id:?}"));
                    due.sort_by_key(|id| format!("{id:?}"));
                    prop_assert_eq!(expired, due);
                }
                _ => {}
            }
            prop_assert_eq!(pit.len(), model.len());
        }
    }
}
