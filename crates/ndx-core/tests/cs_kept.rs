//! Zero-copy admission: a CS that keeps the frames Data arrive in serves exactly what a CS
//! that copies them serves, once the frames are handed over; pending slots are never served;
//! every frame it takes comes back exactly once; and a shard that keeps frames sends what a
//! shard that copies sends.

use ndx_codec::{Data, DataRepr, InterestRepr, LpHeaders, NameBuf};
use ndx_core::{
    Actions, Admission, Cs, CsConfig, FaceId, FaceInfo, Fib, HashKey, Lent, NextHop, PIT_TOKEN_LEN,
    Replacement, Shard, ShardConfig,
};
use proptest::prelude::*;

const KEY: HashKey = HashKey::new(3, 4);

fn data(name: &str, len: usize) -> Vec<u8> {
    let d = DataRepr::new(
        NameBuf::from_uri(name).unwrap(),
        vec![name.len() as u8; len],
    );
    d.to_vec().unwrap()
}

fn config(capacity: usize, replacement: Replacement) -> CsConfig {
    CsConfig {
        capacity,
        slot_size: 512,
        replacement,
        admission: Admission::Always,
        seed: 9,
    }
}

fn get<F: ndx_core::Frame>(cs: &mut Cs<F>, uri: &str) -> Option<Vec<u8>> {
    let n = NameBuf::from_uri(uri).unwrap();
    let h = KEY.name(&n.as_name());
    cs.lookup(0, &n.as_name(), h, false, false)
        .map(|hit| hit.data.to_vec())
}

/// A frame as the I/O layer lends it: a few bytes of link header, then the packet.
fn framed(packet: &[u8]) -> Vec<u8> {
    let mut f = vec![0xEE; 14];
    f.extend_from_slice(packet);
    f
}

/// Offers `frames[k]`'s Data to `cs`, lending it with handle `k` (packet from byte 14).
fn offer<F: ndx_core::Frame>(cs: &mut Cs<F>, frames: &[Vec<u8>]) -> Lent<usize> {
    let mut lent = Lent::new();
    for (k, f) in frames.iter().enumerate() {
        let d = Data::decode(&f[14..]).unwrap();
        let h = KEY.name(&d.name());
        assert!(cs.insert_lent(0, &d, h, None, 14, &mut lent, k));
    }
    lent
}

proptest! {
    /// Bursts of random names, kept by one store and copied by the other: after each
    /// handover both serve the same bytes for every name, and the frames the keeping store
    /// took are exactly those it holds plus those it released.
    #[test]
    fn keeping_serves_what_copying_serves(
        policy in 0u8..3,
        bursts in proptest::collection::vec(
            proptest::collection::vec((0u8..10, 1usize..200), 1..6), 1..40),
        refuse in any::<proptest::sample::Index>(),
    ) {
        let replacement = [Replacement::Lru, Replacement::Fifo, Replacement::Clock][policy as usize];
        let mut copying = Cs::new(config(4, replacement), KEY);
        let mut keeping = Cs::with_frames::<Vec<u8>>(config(4, replacement), KEY);
        let (mut taken, mut released) = (0usize, 0usize);
        for (b, burst) in bursts.iter().enumerate() {
            // One name per burst at most once (a second Data of a name in the same burst
            // replaces the first only once both are readable).
            let mut names: Vec<(u8, usize)> = Vec::new();
            for &(k, len) in burst {
                if names.iter().all(|&(n, _)| n != k) {
                    names.push((k, len));
                }
            }
            let frames: Vec<Vec<u8>> =
                names.iter().map(|&(k, len)| framed(&data(&format!("/k/{k}"), len))).collect();
            let mut lent = offer(&mut keeping, &frames);
            // Pending: not served (an older copy of the name was replaced).
            for &(k, _) in &names {
                prop_assert_eq!(get(&mut keeping, &format!("/k/{k}")), None);
            }
            // Every 7th burst the caller cannot part with one frame: that Data is removed
            // from the keeping store (after its insertion evicted and replaced as usual).
            let no = (b % 7 == 6).then(|| refuse.index(frames.len()));
            let mut slots: Vec<Option<Vec<u8>>> = frames.into_iter().map(Some).collect();
            let mut returned = 0;
            keeping.return_lent(&mut lent, |k, keep| {
                returned += 1;
                if !keep || Some(k) == no {
                    return None;
                }
                let f = slots.get_mut(k).and_then(Option::take);
                taken += usize::from(f.is_some());
                f
            });
            prop_assert_eq!(returned, names.len(), "every lent frame comes back once");
            for &(k, len) in &names {
                let uri = format!("/k/{k}");
                prop_assert!(copying.insert(0, &Data::decode(&data(&uri, len)).unwrap(), None));
            }
            if let Some(i) = no {
                // The copying store takes the refused one out again.
                let n = NameBuf::from_uri(&format!("/k/{}", names[i].0)).unwrap();
                let h = KEY.name(&n.as_name());
                // (Unless the burst's own insertions already evicted it, in both stores.)
                if let Some(slot) = copying.lookup(0, &n.as_name(), h, false, false).map(|hit| hit.slot) {
                    copying.remove(slot);
                }
            }
            released += keeping.released().count();
            prop_assert_eq!(taken, keeping.frames_held() + released);
            prop_assert_eq!(keeping.len(), copying.len());
            for k in 0u8..10 {
                let uri = format!("/k/{k}");
                prop_assert_eq!(get(&mut keeping, &uri), get(&mut copying, &uri), "{}", uri);
            }
        }
    }
}

#[test]
fn pending_slots_need_their_frames() {
    let mut cs = Cs::with_frames::<Vec<u8>>(config(8, Replacement::Lru), KEY);
    let frames: Vec<Vec<u8>> = ["/a", "/b", "/c"]
        .iter()
        .map(|n| framed(&data(n, 40)))
        .collect();
    let mut lent = offer(&mut cs, &frames);
    assert!(cs.has_pending());
    assert_eq!(get(&mut cs, "/a"), None, "pending: not served");
    // /a's frame comes; /b's does not; /c's is cut short.
    cs.return_lent(&mut lent, |k, keep| {
        assert!(keep);
        match k {
            0 => Some(frames[0].clone()),
            1 => None,
            _ => Some(frames[2][..20].to_vec()),
        }
    });
    assert!(!cs.has_pending());
    assert_eq!(get(&mut cs, "/a"), Some(data("/a", 40)));
    assert_eq!(get(&mut cs, "/b"), None);
    assert_eq!(get(&mut cs, "/c"), None);
    assert_eq!(cs.len(), 1);
    assert_eq!(cs.frames_held(), 1);
    assert_eq!(cs.counters().kept, 1);
    // The short frame came back at once.
    let back: Vec<Vec<u8>> = cs.released().collect();
    assert_eq!(back, vec![frames[2][..20].to_vec()]);
    // A frame the store did not ask for, given anyway, is released rather than lost.
    let mut lent = Lent::new();
    lent.push(0usize);
    cs.return_lent(&mut lent, |_, keep| {
        assert!(!keep);
        Some(frames[1].clone())
    });
    assert_eq!(cs.released().collect::<Vec<_>>(), vec![frames[1].clone()]);
    // Replacing /a lets its frame go.
    let mut lent = offer(&mut cs, &[framed(&data("/a", 50))]);
    let mut f = Some(framed(&data("/a", 50)));
    cs.return_lent(&mut lent, |_, _| f.take());
    assert_eq!(get(&mut cs, "/a"), Some(data("/a", 50)));
    assert_eq!(cs.released().collect::<Vec<_>>(), vec![frames[0].clone()]);
}

#[test]
fn letting_go_of_all_frames_keeps_the_copies() {
    let mut cs = Cs::with_frames::<Vec<u8>>(config(8, Replacement::Lru), KEY);
    let kept: Vec<Vec<u8>> = ["/a", "/b"].iter().map(|n| framed(&data(n, 40))).collect();
    let mut lent = offer(&mut cs, &kept);
    let mut slots: Vec<Option<Vec<u8>>> = kept.iter().cloned().map(Some).collect();
    cs.return_lent(&mut lent, |k, _| slots[k].take());
    // A copied Data, and one still pending (its frame stays the caller's: the ledger is
    // emptied here by hand, as a caller that stops would).
    assert!(cs.insert(0, &Data::decode(&data("/c", 40)).unwrap(), None));
    let mut pending = offer(&mut cs, &[framed(&data("/d", 40))]);
    assert_eq!((cs.len(), cs.frames_held()), (4, 2));
    cs.let_go_frames();
    assert!(!cs.has_pending());
    assert_eq!((cs.len(), cs.frames_held()), (1, 0));
    cs.return_lent(&mut pending, |_, keep| {
        assert!(!keep, "let go: the store wants it no more");
        None
    });
    let mut back: Vec<Vec<u8>> = cs.released().collect();
    back.sort();
    assert_eq!(back, kept, "every held frame comes back once");
    assert_eq!(get(&mut cs, "/c"), Some(data("/c", 40)), "copies stay");
    assert_eq!(get(&mut cs, "/a"), None);
    // Nothing more to let go of.
    cs.let_go_frames();
    assert_eq!(cs.released().count(), 0);
}

#[test]
fn prefaulting_a_store_in_use_keeps_what_it_holds() {
    // Slots of 5000 bytes: the stored Data straddle the pages the prefault writes back.
    let cfg = CsConfig {
        slot_size: 5000,
        ..config(8, Replacement::Lru)
    };
    let mut cs = Cs::new(cfg, KEY);
    let names: Vec<String> = (0..8).map(|i| format!("/p/{i}")).collect();
    let frames: Vec<Vec<u8>> = names.iter().map(|n| framed(&data(n, 4900))).collect();
    let mut lent = offer(&mut cs, &frames);
    cs.return_lent(&mut lent, |_, _| None);
    assert_eq!(cs.prefault(), 8 * 5000);
    for n in &names {
        assert_eq!(get(&mut cs, n), Some(data(n, 4900)), "{n}");
    }
}

#[test]
fn a_store_made_without_frames_copies() {
    let mut cs = Cs::new(config(4, Replacement::Lru), KEY);
    assert!(!cs.keeps_frames());
    let mut lent = offer(&mut cs, &[framed(&data("/a", 40))]);
    assert!(!cs.has_pending());
    cs.return_lent(&mut lent, |_, keep| {
        assert!(!keep);
        None
    });
    assert_eq!(get(&mut cs, "/a"), Some(data("/a", 40)));
    assert_eq!(cs.counters().kept, 0);
}

#[test]
fn kept_data_serve_digests_prefixes_and_the_eviction_log() {
    let mut cs = Cs::with_frames::<Vec<u8>>(config(2, Replacement::Fifo), KEY);
    cs.set_eviction_log(true);
    let wire = data("/p/x/1", 30);
    let frame = framed(&wire);
    let d = Data::decode(&frame[14..]).unwrap();
    let prefix = NameBuf::from_uri("/p/x").unwrap();
    let ph = KEY.name(&prefix.as_name());
    let mut lent = Lent::new();
    assert!(cs.insert_lent(
        0,
        &d,
        KEY.name(&d.name()),
        Some((&prefix.as_name(), ph)),
        14,
        &mut lent,
        ()
    ));
    let mut f = Some(frame.clone());
    cs.return_lent(&mut lent, |(), _| f.take());
    // CanBePrefix, through the alias.
    let hit = cs.lookup(0, &prefix.as_name(), ph, true, false);
    assert_eq!(hit.map(|h| h.data.to_vec()), Some(wire.clone()));
    // By implicit digest.
    let mut full = NameBuf::from_uri("/p/x/1").unwrap();
    full.push(1, &d.implicit_digest()).unwrap();
    let fh = KEY.name(&full.as_name());
    let hit = cs.lookup(0, &full.as_name(), fh, false, false);
    assert_eq!(hit.map(|h| h.data.to_vec()), Some(wire.clone()));
    // Evicted: logged from the frame, then the frame is let go.
    for n in ["/q/1", "/q/2"] {
        assert!(cs.insert(0, &Data::decode(&data(n, 10)).unwrap(), None));
    }
    let mut logged = Vec::new();
    cs.drain_evicted(|_, bytes| logged.push(bytes.to_vec()));
    assert_eq!(logged, vec![wire]);
    assert_eq!(cs.released().collect::<Vec<_>>(), vec![frame]);
    assert_eq!(cs.frames_held(), 0);
}

fn shard(keeps: bool) -> Shard<Vec<u8>> {
    let cfg = ShardConfig {
        cs: config(8, Replacement::Lru),
        hash_key: KEY,
        ..ShardConfig::default()
    };
    let (mut fib, reader) = Fib::new(KEY, 2);
    fib.add_nexthop(
        &NameBuf::from_uri("/v").unwrap().as_name(),
        NextHop {
            face: FaceId(2),
            cost: 1,
        },
    )
    .unwrap();
    fib.publish();
    let mut s = if keeps {
        Shard::with_frames::<Vec<u8>>(cfg, reader, 0)
    } else {
        Shard::copying::<Vec<u8>>(cfg, reader, 0)
    };
    s.add_face(FaceId(1), FaceInfo::default());
    s.add_face(FaceId(2), FaceInfo::default());
    s
}

/// The sends of `out`, whole, its lent frames being `frames` (by index, in `lent`).
fn sent(out: &Actions, lent: &Lent<usize>, frames: &[Vec<u8>]) -> Vec<(FaceId, Vec<u8>)> {
    lent.sends(out, |&k| frames[k].as_slice())
        .map(|o| {
            let mut b = Vec::new();
            o.copy_to(&mut b);
            (o.face, b)
        })
        .collect()
}

#[test]
fn a_shard_that_keeps_frames_sends_what_one_that_copies_sends() {
    let (mut copying, mut keeping) = (shard(false), shard(true));
    let (mut out_c, mut out_k) = (Actions::new(), Actions::new());
    let mut free: Vec<Vec<u8>> = Vec::new();
    let mut created = 0;
    for round in 0u64..6 {
        let now = round * 1_000_000;
        let names: Vec<String> = (0..5).map(|i| format!("/v/{}", round * 5 + i)).collect();
        // Interests, forwarded upstream by both with their own tokens.
        let interests: Vec<Vec<u8>> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut r = InterestRepr::new(NameBuf::from_uri(n).unwrap());
                r.nonce = Some((round * 5 + i as u64) as u32);
                r.to_vec().unwrap()
            })
            .collect();
        let refs: Vec<(FaceId, &[u8])> = interests.iter().map(|w| (FaceId(1), &w[..])).collect();
        out_c.clear();
        out_k.clear();
        copying.process_burst(now, &refs, &mut out_c);
        keeping.process_burst(now, &refs, &mut out_k);
        assert_eq!(
            sent(&out_c, &Lent::new(), &[]),
            sent(&out_k, &Lent::new(), &[])
        );
        let tokens: Vec<Vec<u8>> = out_c
            .sends()
            .map(|(_, b)| {
                let lp = ndx_codec::LpPacket::decode(b).unwrap();
                lp.pit_token().unwrap().to_vec()
            })
            .collect();
        assert_eq!(tokens.len(), 5);
        // The Data, echoing the tokens, in frames with a link header.
        let frames: Vec<Vec<u8>> = names
            .iter()
            .zip(&tokens)
            .map(|(n, t)| {
                let d = data(n, 300);
                let h = LpHeaders {
                    pit_token: Some(t),
                    ..LpHeaders::default()
                };
                let mut lp = vec![0; h.encoded_len(Some(d.len()))];
                let len = h.encode(Some(&d), &mut lp).unwrap();
                lp.truncate(len);
                let mut f = free.pop().unwrap_or_else(|| {
                    created += 1;
                    Vec::new()
                });
                f.clear();
                f.extend_from_slice(&lp);
                f
            })
            .collect();
        assert_eq!(tokens[0].len(), PIT_TOKEN_LEN);
        let refs: Vec<(FaceId, &[u8])> = frames.iter().map(|f| (FaceId(2), &f[..])).collect();
        out_c.clear();
        out_k.clear();
        let (mut lent_c, mut lent_k) = (Lent::new(), Lent::new());
        lent_c.extend(0..refs.len());
        lent_k.extend(0..refs.len());
        copying.process_burst_lent(now + 10, &refs, &mut lent_c, &mut out_c);
        keeping.process_burst_keeping(now + 10, &refs, &mut lent_k, &mut out_k);
        assert_eq!(
            sent(&out_c, &lent_c, &frames),
            sent(&out_k, &lent_k, &frames)
        );
        assert_eq!(
            sent(&out_k, &lent_k, &frames).len(),
            5,
            "every Data sent down"
        );
        copying.return_lent(&mut lent_c, |_, _| None);
        let mut slots: Vec<Option<Vec<u8>>> = frames.into_iter().map(Some).collect();
        keeping.return_lent(
            &mut lent_k,
            |k, keep| if keep { slots[k].take() } else { None },
        );
        free.extend(slots.into_iter().flatten());
        free.extend(keeping.released_frames());
        // The CS (8 slots) holds the last 8 Data, all in kept frames, and serves them.
        assert_eq!(keeping.cs().frames_held(), keeping.cs().len());
        // No frame lost: each is held or free again.
        assert_eq!(created, keeping.cs().frames_held() + free.len());
        for n in names.iter().chain(["/v/0".to_string()].iter()) {
            let mut r = InterestRepr::new(NameBuf::from_uri(n).unwrap());
            r.nonce = Some(0xABCD_0000 + round as u32);
            let w = r.to_vec().unwrap();
            out_c.clear();
            out_k.clear();
            copying.process(now + 20, FaceId(1), &w, &mut out_c);
            keeping.process(now + 20, FaceId(1), &w, &mut out_k);
            assert_eq!(
                sent(&out_c, &Lent::new(), &[]),
                sent(&out_k, &Lent::new(), &[]),
                "{n}"
            );
        }
        assert_eq!(copying.counters(), keeping.counters());
    }
    assert!(
        keeping.counters().cs_hits >= 30,
        "the kept Data were served"
    );
    assert_eq!(keeping.cs().counters().kept, 30);
}
