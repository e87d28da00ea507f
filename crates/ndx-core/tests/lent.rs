//! The frame-lending protocol hands every frame back exactly once. Frames of a counting type
//! (each registered while alive, with where it is: the caller's, held by the CS, or handed
//! back) go through a keeping shard in random bursts of Data and Interests, with evictions,
//! replacements of a name's Data, CanBePrefix Interests served by an alias, CS hits on kept
//! frames, a caller that sometimes cannot part with a frame, and bursts lent without
//! keeping. Every lent handle comes back once; a frame dropped while the CS holds it (lost)
//! or dropped twice shows in the registry; the shard sends what a shard that copies sends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ndx_codec::{DataRepr, Interest, InterestRepr, LpHeaders, LpPacket, NameBuf};
use ndx_core::{
    Actions, Admission, CsConfig, FaceId, FaceInfo, Fib, HashKey, Lent, NextHop, Replacement,
    Shard, ShardConfig,
};
use proptest::prelude::*;

const KEY: HashKey = HashKey::new(5, 6);
const DOWN: FaceId = FaceId(1);
const UP: FaceId = FaceId(2);

/// Where a counted frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Caller,
    Cs,
    Back,
}

#[derive(Debug, Default)]
struct Registry {
    live: HashMap<u64, Place>,
    next: u64,
    /// Frames dropped while the CS held them.
    lost: u64,
    /// Frames dropped that the registry did not know (dropped twice).
    unknown: u64,
}

/// A receive frame that registers itself: where it is, and its drop.
#[derive(Debug)]
struct Counted {
    id: u64,
    bytes: Vec<u8>,
    reg: Arc<Mutex<Registry>>,
}

impl Counted {
    fn new(reg: &Arc<Mutex<Registry>>, bytes: Vec<u8>) -> Self {
        let mut r = reg.lock().unwrap();
        let id = r.next;
        r.next += 1;
        r.live.insert(id, Place::Caller);
        Self {
            id,
            bytes,
            reg: reg.clone(),
        }
    }

    /// Moves the frame to `to`, checking it was at `from`.
    fn moved(&self, from: Place, to: Place) {
        let mut r = self.reg.lock().unwrap();
        let at = r.live.get_mut(&self.id).expect("a live frame");
        assert_eq!(*at, from, "frame {} moved from where it was not", self.id);
        *at = to;
    }
}

impl AsRef<[u8]> for Counted {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut r = self.reg.lock().unwrap();
        match r.live.remove(&self.id) {
            Some(Place::Cs) => r.lost += 1,
            Some(_) => {}
            None => r.unknown += 1,
        }
    }
}

fn shard<F: ndx_core::Frame>(capacity: usize, replacement: Replacement, keeps: bool) -> Shard<F> {
    let cfg = ShardConfig {
        cs: CsConfig {
            capacity,
            slot_size: 1024,
            replacement,
            admission: Admission::Always,
            seed: 3,
        },
        hash_key: KEY,
        ..ShardConfig::default()
    };
    let (mut fib, reader) = Fib::new(KEY, 2);
    fib.add_nexthop(
        &NameBuf::from_uri("/v").unwrap().as_name(),
        NextHop { face: UP, cost: 1 },
    )
    .unwrap();
    fib.publish();
    let mut s = if keeps {
        Shard::with_frames::<F>(cfg, reader, 0)
    } else {
        Shard::copying::<F>(cfg, reader, 0)
    };
    s.add_face(DOWN, FaceInfo::default());
    s.add_face(FaceId(3), FaceInfo::default());
    s.add_face(UP, FaceInfo::default());
    s
}

/// An Interest for `/v/<i>`, exact (for `/v/<i>/d`) or CanBePrefix (the prefix `/v/<i>`).
fn interest(i: u8, cbp: bool, nonce: u32) -> Vec<u8> {
    let uri = if cbp {
        format!("/v/{i}")
    } else {
        format!("/v/{i}/d")
    };
    let mut r = InterestRepr::new(NameBuf::from_uri(&uri).unwrap());
    r.can_be_prefix = cbp;
    r.nonce = Some(nonce);
    r.to_vec().unwrap()
}

/// The Data `/v/<i>/d` (version `v` in its content), in an LpPacket echoing `token`.
fn data(i: u8, v: u8, len: usize, token: Option<&[u8]>) -> Vec<u8> {
    let d = DataRepr::new(
        NameBuf::from_uri(&format!("/v/{i}/d")).unwrap(),
        vec![v; len],
    )
    .to_vec()
    .unwrap();
    let h = LpHeaders {
        pit_token: token,
        ..LpHeaders::default()
    };
    let mut lp = vec![0; h.encoded_len(Some(d.len()))];
    let n = h.encode(Some(&d), &mut lp).unwrap();
    lp.truncate(n);
    lp
}

/// The sends of `out`, whole.
fn whole<'a, L>(
    out: &'a Actions,
    lent: &'a Lent<L>,
    bytes: impl Fn(&L) -> &'a [u8],
) -> Vec<(FaceId, Vec<u8>)> {
    lent.sends(out, bytes)
        .map(|o| {
            let mut b = Vec::new();
            o.copy_to(&mut b);
            (o.face, b)
        })
        .collect()
}

/// One burst's traffic: Interests `(name, CanBePrefix, from face 3)`, then the Data
/// `(name, content length)` of those forwarded upstream (plus Interests again, lent with
/// them), whether the burst keeps, and which lent frame (if any) the caller refuses.
type Burst = (
    Vec<(u8, bool, bool)>,
    Vec<u16>,
    bool,
    Option<prop::sample::Index>,
);

fn burst() -> impl Strategy<Value = Burst> {
    (
        proptest::collection::vec((0u8..12, any::<bool>(), any::<bool>()), 1..10),
        proptest::collection::vec(1u16..600, 1..10),
        prop::bool::weighted(0.8),
        proptest::option::weighted(0.3, any::<prop::sample::Index>()),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_lent_frame_comes_back_exactly_once(
        capacity in prop::sample::select(vec![1usize, 2, 4, 8]),
        policy in 0usize..3,
        bursts in proptest::collection::vec(burst(), 1..25),
    ) {
        let replacement = [Replacement::Lru, Replacement::Fifo, Replacement::Clock][policy];
        let reg = Arc::new(Mutex::new(Registry::default()));
        let mut keeping: Shard<Counted> = shard(capacity, replacement, true);
        let mut copying: Shard<Counted> = shard(capacity, replacement, false);
        let (mut out_k, mut out_c) = (Actions::new(), Actions::new());
        let mut lent: Lent<usize> = Lent::new();
        let mut nonce = 0u32;
        for (round, (interests, lens, keeps, refuse)) in bursts.iter().enumerate() {
            let now = round as u64 * 1_000_000;
            let mut ints = Vec::new();
            for &(i, cbp, third) in interests {
                nonce += 1;
                ints.push((if third { FaceId(3) } else { DOWN }, interest(i, cbp, nonce)));
            }
            let refs: Vec<(FaceId, &[u8])> = ints.iter().map(|(f, w)| (*f, &w[..])).collect();
            out_k.clear();
            out_c.clear();
            keeping.process_burst(now, &refs, &mut out_k);
            copying.process_burst(now, &refs, &mut out_c);
            let empty = Lent::<()>::new();
            let sent = whole(&out_k, &empty, |_| &[]);
            prop_assert_eq!(&sent, &whole(&out_c, &empty, |_| &[]));
            // The upstream answers each forwarded Interest (the content lengths cycle through
            // `lens`), in one burst.
            let mut frames: Vec<Option<Counted>> = Vec::new();
            let mut done = Vec::new();
            for (j, (_, f)) in sent.iter().filter(|(face, _)| *face == UP).enumerate() {
                let lp = LpPacket::decode(f).unwrap();
                let token = lp.pit_token().map(<[u8]>::to_vec);
                let int = Interest::decode(lp.fragment().unwrap()).unwrap();
                let i: u8 = std::str::from_utf8(int.name().get(1).unwrap().value())
                    .unwrap()
                    .parse()
                    .unwrap();
                // One Data per name in a burst: a second one replaces the first only once
                // both are readable (a pending slot is out of the store's reach), so the
                // copying shard would serve the second and the keeping one the first.
                if done.contains(&i) {
                    continue;
                }
                done.push(i);
                let len = usize::from(lens[j % lens.len()]);
                let wire = data(i, round as u8, len, token.as_deref());
                frames.push(Some(Counted::new(&reg, wire)));
            }
            // Then the same Interests again, with fresh nonces (not loops): CS hits, served
            // from the kept frames, or forwarded again when evicted.
            let mut again: Vec<Option<Counted>> = Vec::new();
            for &(i, cbp, _) in interests {
                nonce += 1;
                again.push(Some(Counted::new(&reg, interest(i, cbp, nonce))));
            }
            let mut refused_any = false;
            for (phase, (mut frames, face)) in [(frames, UP), (again, DOWN)].into_iter().enumerate() {
                let t = now + 10 + phase as u64;
                out_k.clear();
                out_c.clear();
                {
                    let refs: Vec<(FaceId, &[u8])> =
                        frames.iter().map(|f| (face, f.as_ref().unwrap().as_ref())).collect();
                    lent.extend(0..refs.len());
                    if *keeps {
                        keeping.process_burst_keeping(t, &refs, &mut lent, &mut out_k);
                    } else {
                        keeping.process_burst_lent(t, &refs, &mut lent, &mut out_k);
                    }
                    copying.process_burst(t, &refs, &mut out_c);
                    let bytes = |&k: &usize| refs[k].1;
                    prop_assert_eq!(
                        whole(&out_k, &lent, bytes),
                        whole(&out_c, &Lent::<()>::new(), |_| &[])
                    );
                }
                out_k.clear();
                // The handover: each handle once, in order; only the Data frames of a keeping
                // burst are asked for; the refused one stays the caller's (its Data leaves
                // the CS).
                let refused = refuse
                    .filter(|_| phase == 0 && !frames.is_empty())
                    .map(|r| r.index(frames.len()));
                let mut seen = Vec::new();
                keeping.return_lent(&mut lent, |k, keep| {
                    seen.push(k);
                    assert!(!keep || (*keeps && phase == 0), "frame {k} asked for");
                    if !keep {
                        return None;
                    }
                    if Some(k) == refused {
                        refused_any = true;
                        return None;
                    }
                    let f = frames[k].take().expect("a frame handed over once");
                    f.moved(Place::Caller, Place::Cs);
                    Some(f)
                });
                prop_assert_eq!(seen, (0..frames.len()).collect::<Vec<_>>());
                prop_assert!(lent.is_empty());
                drop(frames);
                for f in keeping.released_frames() {
                    f.moved(Place::Cs, Place::Back);
                }
                let r = reg.lock().unwrap();
                let held = r.live.values().filter(|&&p| p == Place::Cs).count();
                prop_assert_eq!(held, keeping.cs().frames_held(), "the CS holds what it took");
                prop_assert!(held <= capacity);
                prop_assert_eq!((r.lost, r.unknown), (0, 0));
                // The frames released are dropped: none is left in between.
                prop_assert!(r.live.values().all(|&p| p != Place::Back));
                drop(r);
                if refused_any {
                    // The keeping shard dropped a Data the copying one kept: from here on
                    // their CS hits may differ; both start afresh.
                    keeping.let_go_frames();
                    for f in keeping.released_frames() {
                        f.moved(Place::Cs, Place::Back);
                    }
                    keeping = shard(capacity, replacement, true);
                    copying = shard(capacity, replacement, false);
                    break;
                }
            }
        }
        keeping.let_go_frames();
        for f in keeping.released_frames() {
            f.moved(Place::Cs, Place::Back);
        }
        prop_assert_eq!(keeping.cs().frames_held(), 0);
        drop(keeping);
        let r = reg.lock().unwrap();
        prop_assert_eq!((r.lost, r.unknown, r.live.len()), (0, 0, 0));
    }
}

/// A frame dropped inside the store is what the registry catches (the test's own check).
#[test]
fn the_registry_sees_a_frame_lost_in_the_store() {
    let reg = Arc::new(Mutex::new(Registry::default()));
    let mut s: Shard<Counted> = shard(4, Replacement::Lru, true);
    let mut out = Actions::new();
    let int = interest(1, false, 7);
    s.process(0, DOWN, &int, &mut out);
    let lp = LpPacket::decode(out.sends().next().unwrap().1).unwrap();
    let f = Counted::new(&reg, data(1, 0, 50, lp.pit_token()));
    out.clear();
    let mut lent = Lent::new();
    lent.push(());
    s.process_burst_keeping(1, &[(UP, f.as_ref())], &mut lent, &mut out);
    out.clear();
    let mut f = Some(f);
    s.return_lent(&mut lent, |(), keep| {
        assert!(keep);
        let f = f.take()?;
        f.moved(Place::Caller, Place::Cs);
        Some(f)
    });
    assert_eq!(s.cs().frames_held(), 1);
    // Dropping the shard without letting go of its frames loses the one it holds.
    drop(s);
    assert_eq!(reg.lock().unwrap().lost, 1);
}

/// Lending into an action list without returning the last lending's frames is refused.
#[test]
#[should_panic(expected = "push one handle onto the ledger for each frame lent")]
fn lending_again_before_returning_panics() {
    let mut s: Shard<Counted> = shard(4, Replacement::Lru, true);
    let mut out = Actions::new();
    let int = interest(1, false, 7);
    let mut lent = Lent::new();
    lent.push(0u8);
    s.process_burst_keeping(0, &[(DOWN, &int[..])], &mut lent, &mut out);
    out.clear();
    lent.push(1);
    s.process_burst_keeping(1, &[(DOWN, &int[..])], &mut lent, &mut out);
}
