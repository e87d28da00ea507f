//! The shard's unit tests.

use super::*;
use crate::{Fib, NextHop};
use ndx_codec::{DataRepr, InterestRepr, LpPacket, NameBuf};

/// A shard with `cfg` routing `/net` to face 2; faces 1 and 2.
fn routed(cfg: ShardConfig) -> Shard {
    let (mut fib, reader) = Fib::new(cfg.hash_key, 2);
    let hop = NextHop {
        face: FaceId(2),
        cost: 1,
    };
    fib.add_nexthop(&NameBuf::from_uri("/net").expect("name").as_name(), hop)
        .expect("route");
    fib.publish();
    let mut s = Shard::new(cfg, reader, 0);
    s.add_face(FaceId(1), FaceInfo::default());
    s.add_face(FaceId(2), FaceInfo::default());
    s
}

/// A routed shard, and a twin fed one frame at a time.
fn twins() -> (Shard, Shard) {
    (
        routed(ShardConfig::default()),
        routed(ShardConfig::default()),
    )
}

/// The PitToken of a frame we forwarded (an LpPacket), as an upstream echoes it.
fn our_token(fwd: &[u8]) -> Vec<u8> {
    let lp = LpPacket::decode(fwd).expect("forwarded in an LpPacket");
    let token = lp.pit_token().expect("with our token");
    assert_eq!(token.len(), crate::pit::PIT_TOKEN_LEN);
    token.to_vec()
}

fn object(i: u32) -> NameBuf {
    NameBuf::from_uri(&format!("/net/site/host/obj{i}")).expect("name")
}

/// Sends the Interests for `objs` in one burst to `burst` and one by one to `one`, checks
/// both forward or answer the same bytes, then (for forwarded ones) returns their Data
/// with our tokens the same two ways.
fn fetch(burst: &mut Shard, one: &mut Shard, now: u64, objs: std::ops::Range<u32>) {
    let interests: Vec<Vec<u8>> = objs
        .clone()
        .map(|i| {
            let mut r = InterestRepr::new(object(i));
            r.nonce = Some(now as u32 ^ i);
            r.to_vec().expect("Interest")
        })
        .collect();
    let (mut out_b, mut out_o) = (Actions::new(), Actions::new());
    let frames: Vec<(FaceId, &[u8])> = interests.iter().map(|i| (FaceId(1), &i[..])).collect();
    burst.process_burst(now, &frames, &mut out_b);
    for i in &interests {
        one.process(now, FaceId(1), i, &mut out_o);
    }
    let sent: Vec<_> = out_b.sends().map(|(f, b)| (f, b.to_vec())).collect();
    assert_eq!(
        sent,
        out_o
            .sends()
            .map(|(f, b)| (f, b.to_vec()))
            .collect::<Vec<_>>()
    );
    // Forwarded Interests (face 2) carry our token: answer them.
    let mut data = Vec::new();
    for ((face, fwd), i) in sent.iter().zip(objs) {
        if *face != FaceId(2) {
            continue;
        }
        let token = our_token(fwd);
        let d = DataRepr::new(object(i), vec![7; 100])
            .to_vec()
            .expect("Data");
        let h = LpHeaders {
            pit_token: Some(&token),
            ..LpHeaders::default()
        };
        let mut lp = vec![0; h.encoded_len(Some(d.len()))];
        let n = h.encode(Some(&d), &mut lp).expect("LpPacket");
        lp.truncate(n);
        data.push(lp);
    }
    let (mut out_b, mut out_o) = (Actions::new(), Actions::new());
    let frames: Vec<(FaceId, &[u8])> = data.iter().map(|d| (FaceId(2), &d[..])).collect();
    let by_token = (burst.counters().by_token, one.counters().by_token);
    burst.process_burst(now + 1, &frames, &mut out_b);
    for d in &data {
        one.process(now + 1, FaceId(2), d, &mut out_o);
    }
    // Every Data echoed our token, and the token found its entry.
    let n = data.len() as u64;
    assert_eq!(burst.counters().by_token, by_token.0 + n);
    assert_eq!(one.counters().by_token, by_token.1 + n);
    assert!(
        out_b
            .sends()
            .map(|(f, b)| (f, b.to_vec()))
            .eq(out_o.sends().map(|(f, b)| (f, b.to_vec())))
    );
}

#[test]
fn an_incomplete_fragment_set_that_times_out_is_counted() {
    let mut s = routed(ShardConfig::default());
    let mut r = InterestRepr::new(object(4));
    r.nonce = Some(4);
    r.lifetime_ms = Some(4000);
    let wire = r.to_vec().expect("Interest");
    let f = ndx_codec::Fragmenter::new(ndx_codec::Fragmenter::MIN_MTU).expect("MTU");
    let mut frags = f
        .fragment(&wire, &LpHeaders::default(), 77)
        .expect("fragments");
    assert!(frags.count() > 1);
    let mut first = vec![0; frags.max_len()];
    let n = frags.next_into(&mut first).expect("one").expect("written");
    let mut out = Actions::new();
    s.process(0, FaceId(1), &first[..n], &mut out);
    assert_eq!(s.reassembly_counters().expired, 0);
    // Not yet: the default timeout is 500 ms.
    s.on_timer(499_000_000, &mut out);
    assert_eq!(s.reassembly_counters().expired, 0);
    s.on_timer(500_000_000, &mut out);
    let c = s.reassembly_counters();
    assert_eq!((c.fragments_received, c.expired), (1, 1));
    assert_eq!(s.counters().interests_in, 0);
}

/// The Interest inside a frame we forwarded.
fn forwarded_interest(frame: &[u8]) -> ndx_codec::InterestRepr {
    let lp = LpPacket::decode(frame).expect("forwarded in an LpPacket");
    Interest::decode(lp.fragment().expect("a fragment"))
        .expect("an Interest")
        .to_repr()
}

#[test]
fn an_interest_without_nonce_leaves_with_the_nonce_it_was_given() {
    let mut s = routed(ShardConfig::default());
    s.add_face(FaceId(3), FaceInfo::default());
    let mut r = InterestRepr::new(object(1));
    r.can_be_prefix = true;
    r.lifetime_ms = Some(1000);
    r.hop_limit = Some(10);
    let bare = r.to_vec().expect("Interest");
    let mut out = Actions::new();
    s.process(0, FaceId(1), &bare, &mut out);
    let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, FaceId(2));
    let fwd = forwarded_interest(&sent[0].1);
    let nonce = fwd.nonce.expect("forwarded with a Nonce");
    // Nothing else changed but the HopLimit.
    let mut want = r.clone();
    want.nonce = Some(nonce);
    want.hop_limit = Some(9);
    assert_eq!(fwd, want);
    // The nonce is the out-record's: the same Interest looping back on face 3 is caught.
    out.clear();
    s.process(1, FaceId(3), &want.to_vec().expect("Interest"), &mut out);
    assert_eq!(s.counters().dropped(DropReason::Loop), 1);
    let nack: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
    assert_eq!(nack.len(), 1, "Nack Duplicate to face 3");
    assert_eq!(nack[0].0, FaceId(3));
    let lp = LpPacket::decode(&nack[0].1).expect("Nack");
    assert_eq!(lp.nack(), Some(NackReason::Duplicate));
    // The downstream retransmits (still without a Nonce) once retransmissions are no longer
    // suppressed: a fresh nonce goes upstream.
    out.clear();
    s.process(20_000_000, FaceId(1), &bare, &mut out);
    let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
    assert_eq!(sent.len(), 1);
    let again = forwarded_interest(&sent[0].1).nonce.expect("a Nonce");
    assert_ne!(again, nonce);
    // An Interest with a Nonce leaves with it, byte for byte but the HopLimit.
    let mut with = InterestRepr::new(object(2));
    with.nonce = Some(0x0A0B_0C0D);
    with.hop_limit = Some(5);
    out.clear();
    s.process(
        30_000_000,
        FaceId(1),
        &with.to_vec().expect("Interest"),
        &mut out,
    );
    let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
    with.hop_limit = Some(4);
    assert_eq!(forwarded_interest(&sent[0].1), with);
}

#[test]
fn shards_with_one_seed_give_different_nonces() {
    let bare = InterestRepr::new(object(5)).to_vec().expect("Interest");
    let nonce_of = |shard: u8| {
        let mut s = routed(ShardConfig {
            shard,
            ..ShardConfig::default()
        });
        let mut out = Actions::new();
        s.process(0, FaceId(1), &bare, &mut out);
        let sent: Vec<_> = out.sends().map(|(_, b)| b.to_vec()).collect();
        forwarded_interest(&sent[0]).nonce.expect("a Nonce")
    };
    let nonces: Vec<u32> = (0..4).map(nonce_of).collect();
    let mut distinct = nonces.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "{nonces:x?}");
    // And a shard draws the same nonce from the same seed: the core stays deterministic.
    assert_eq!(nonce_of(2), nonces[2]);
}

#[test]
fn a_nonce_less_interest_retried_after_a_nack_keeps_its_nonce() {
    // Two routes: the Nack from the first upstream sends the Interest (the Nack's copy,
    // which carries our nonce) to the second one, with the same nonce.
    let key = ShardConfig::default().hash_key;
    let (mut fib, reader) = Fib::new(key, 2);
    let prefix = NameBuf::from_uri("/net").expect("name");
    for (face, cost) in [(2, 1), (3, 2)] {
        fib.add_nexthop(
            &prefix.as_name(),
            NextHop {
                face: FaceId(face),
                cost,
            },
        )
        .expect("route");
    }
    fib.publish();
    let mut s = Shard::new(ShardConfig::default(), reader, 0);
    for f in 1..=3 {
        s.add_face(FaceId(f), FaceInfo::default());
    }
    let bare = InterestRepr::new(object(3)).to_vec().expect("Interest");
    let mut out = Actions::new();
    s.process(0, FaceId(1), &bare, &mut out);
    let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, FaceId(2));
    let token = our_token(&sent[0].1);
    let fwd = forwarded_interest(&sent[0].1);
    let nonce = fwd.nonce.expect("a Nonce");
    // Face 2 answers with a Nack NoRoute carrying the Interest it got.
    let h = LpHeaders {
        pit_token: Some(&token),
        nack: Some(NackReason::NoRoute),
        ..LpHeaders::default()
    };
    let inner = fwd.to_vec().expect("Interest");
    let mut nack = vec![0; h.encoded_len(Some(inner.len()))];
    let n = h.encode(Some(&inner), &mut nack).expect("Nack");
    nack.truncate(n);
    out.clear();
    s.process(1, FaceId(2), &nack, &mut out);
    let sent: Vec<_> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].0, FaceId(3));
    assert_eq!(forwarded_interest(&sent[0].1).nonce, Some(nonce));
}

/// `fragment` in an LpPacket whose only header is the PitToken `token`.
fn tokened(token: &[u8], fragment: &[u8]) -> Vec<u8> {
    let h = LpHeaders {
        pit_token: Some(token),
        ..LpHeaders::default()
    };
    let mut lp = vec![0; h.encoded_len(Some(fragment.len()))];
    let n = h.encode(Some(fragment), &mut lp).expect("LpPacket");
    lp.truncate(n);
    lp
}

#[test]
fn data_in_lent_frames_is_sent_from_where_it_is() {
    let mut s = routed(ShardConfig::default());
    let mut copy = routed(ShardConfig::default());
    for x in [&mut s, &mut copy] {
        x.add_face(FaceId(3), FaceInfo::default());
    }
    // Two downstreams, one with its own PitToken and one without, aggregated.
    let interest = |nonce| {
        let mut r = InterestRepr::new(object(9));
        r.nonce = Some(nonce);
        r.to_vec().expect("Interest")
    };
    let first = tokened(&[0xAA, 0xBB, 0xCC], &interest(1));
    let second = interest(2);
    let mut out = Actions::new();
    let mut out_copy = Actions::new();
    for (x, o) in [(&mut s, &mut out), (&mut copy, &mut out_copy)] {
        x.process(1_000, FaceId(1), &first, o);
        x.process(1_000, FaceId(3), &second, o);
    }
    let (face, fwd) = out.sends().next().expect("forwarded once");
    assert_eq!((face, out.sends().count()), (FaceId(2), 1));
    let token = our_token(fwd);
    // The Data, and a third Interest for it that the CS answers, in one lent burst.
    let data = tokened(
        &token,
        &DataRepr::new(object(9), vec![7; 1000])
            .to_vec()
            .expect("Data"),
    );
    let third = interest(3);
    let frames = [(FaceId(2), &data[..]), (FaceId(1), &third[..])];
    out.clear();
    out_copy.clear();
    let mut ledger = crate::Lent::new();
    ledger.extend([0, 1]);
    s.process_burst_lent(2_000, &frames, &mut ledger, &mut out);
    copy.process_burst(2_000, &frames, &mut out_copy);
    assert_eq!(out.lent, 2);
    let lent: Vec<Outgoing<'_>> = ledger.sends(&out, |&k: &usize| frames[k].1).collect();
    let whole: Vec<_> = out_copy.sends().collect();
    assert_eq!(lent.len(), 3, "two downstreams and one CS hit");
    for (l, (face, bytes)) in lent.iter().zip(&whole) {
        let mut b = Vec::new();
        l.copy_to(&mut b);
        assert_eq!((l.face, &b[..]), (*face, *bytes));
    }
    // The Data inside the received LpPacket, sent from there: with the token of face 1
    // in a new head, bare (no head) to face 3.
    let inner = LpPacket::decode(&data)
        .expect("LpPacket")
        .fragment()
        .expect("fragment");
    for l in &lent[..2] {
        assert_eq!(l.body.as_ptr(), inner.as_ptr(), "lent, not copied");
        assert_eq!(l.body.len(), inner.len());
    }
    assert_eq!(lent[0].face, FaceId(1));
    let head = LpPacket::decode(&[lent[0].head, lent[0].body].concat())
        .expect("LpPacket")
        .pit_token()
        .map(<[u8]>::to_vec);
    assert_eq!(head.as_deref(), Some(&[0xAA, 0xBB, 0xCC][..]));
    assert!(lent[1].head.is_empty() && lent[1].face == FaceId(3));
    // The CS hit is copied out of the store (a later insert may overwrite its slot).
    assert!(lent[2].body.is_empty() && !lent[2].head.is_empty());
    assert_eq!(s.counters(), copy.counters());
    // Cleared: numbering starts again; each frame comes back once, none kept (the shard
    // copies).
    out.clear();
    assert_eq!(out.lent, 0);
    let mut back = Vec::new();
    s.return_lent(&mut ledger, |k, keep| {
        back.push((k, keep));
        None
    });
    assert_eq!(back, [(0, false), (1, false)]);
    assert!(ledger.is_empty());
}

/// One Interest from face 1 (forwarded to face 2), answered with a Data of `freshness_ms`
/// that echoes our token; then the same Interest, same nonce, comes back (a loop). Returns
/// the dead-nonce list's length after the Data, and whether the looped copy got the Data
/// back (else a Nack Duplicate).
fn satisfy_then_loop(
    s: &mut Shard,
    obj: u32,
    must_be_fresh: bool,
    freshness_ms: Option<u64>,
) -> (usize, bool) {
    let i = interest_for(obj, obj, must_be_fresh);
    let mut out = Actions::new();
    s.process(1_000, FaceId(1), &i, &mut out);
    let (face, fwd) = out.sends().next().expect("forwarded");
    assert_eq!(face, FaceId(2));
    let lp = data_for(obj, freshness_ms, &our_token(fwd));
    out.clear();
    let by_token = s.counters().by_token;
    s.process(2_000, FaceId(2), &lp, &mut out);
    assert_eq!(out.sends().count(), 1, "Data sent downstream");
    assert_eq!(s.counters().by_token, by_token + 1, "matched by our token");
    let dead = s.dnl.len();
    out.clear();
    s.process(3_000, FaceId(1), &i, &mut out);
    let (_, answer) = out.sends().next().expect("an answer to the looped copy");
    let got_data = match sent(answer) {
        Sent::Data => true,
        Sent::Nack(_) => false,
        Sent::Interest => panic!("the looped copy was forwarded"),
    };
    (dead, got_data)
}

#[test]
fn localhost_stays_on_local_faces_and_local_fields_name_the_sender() {
    let (mut fib, reader) = Fib::new(ShardConfig::default().hash_key, 2);
    let to = |face| NextHop {
        face: FaceId(face),
        cost: 1,
    };
    let name = |s: &str| NameBuf::from_uri(s).expect("name");
    // /localhost/nfd leads to the management face (9, local fields on); "/" leads to a
    // remote face (2) and a local one (3).
    fib.add_nexthop(&name("/localhost/nfd").as_name(), to(9))
        .expect("route");
    fib.add_nexthop(&name("/").as_name(), to(2)).expect("route");
    fib.add_nexthop(&name("/").as_name(), to(3)).expect("route");
    fib.set_strategy(&name("/").as_name(), StrategyKind::Multicast.id());
    fib.publish();
    let mut s = Shard::new(ShardConfig::default(), reader, 0);
    let local = FaceInfo {
        local: true,
        ..FaceInfo::default()
    };
    s.add_face(FaceId(1), FaceInfo::default());
    s.add_face(FaceId(2), FaceInfo::default());
    s.add_face(FaceId(3), local);
    s.add_face(FaceId(4), local);
    s.add_face(
        FaceId(9),
        FaceInfo {
            local: true,
            local_fields: true,
            ..FaceInfo::default()
        },
    );
    let interest = |uri: &str, nonce| {
        let mut r = InterestRepr::new(name(uri));
        r.nonce = Some(nonce);
        r.to_vec().expect("Interest")
    };
    let mut out = Actions::new();
    // From a remote face: dropped and counted, nothing sent.
    s.process(
        1_000,
        FaceId(1),
        &interest("/localhost/nfd/faces/list", 1),
        &mut out,
    );
    assert_eq!(out.sends().count(), 0);
    assert_eq!(s.counters().dropped(DropReason::Scope), 1);
    // From a local face: to the management face, with the sender's IncomingFaceId.
    s.process(
        1_000,
        FaceId(4),
        &interest("/localhost/nfd/faces/list", 2),
        &mut out,
    );
    let sent: Vec<(FaceId, Vec<u8>)> = out.sends().map(|(f, b)| (f, b.to_vec())).collect();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, FaceId(9));
    let lp = LpPacket::decode(&sent[0].1).expect("LpPacket");
    assert_eq!(lp.headers().incoming_face_id, Some(4));
    assert!(lp.pit_token().is_some());
    out.clear();
    // Another /localhost name matching only "/": the local next hop gets it, the remote
    // one never does.
    s.process(1_000, FaceId(4), &interest("/localhost/app/x", 3), &mut out);
    let faces: Vec<FaceId> = out.sends().map(|(f, _)| f).collect();
    assert_eq!(faces, vec![FaceId(3)]);
    out.clear();
    // /localhop from a remote face reaches local faces only; from a local face it goes
    // to the remote next hop too.
    s.process(1_000, FaceId(1), &interest("/localhop/x", 5), &mut out);
    let faces: Vec<FaceId> = out.sends().map(|(f, _)| f).collect();
    assert_eq!(faces, vec![FaceId(3)]);
    out.clear();
    s.process(1_000, FaceId(4), &interest("/localhop/y", 6), &mut out);
    let mut faces: Vec<FaceId> = out.sends().map(|(f, _)| f).collect();
    faces.sort_by_key(|f| f.0);
    assert_eq!(faces, vec![FaceId(2), FaceId(3)]);
    out.clear();
    // A /localhost Data from a remote face is dropped too.
    let data = DataRepr::new(name("/localhost/app/x"), vec![1])
        .to_vec()
        .expect("Data");
    s.process(2_000, FaceId(2), &data, &mut out);
    assert_eq!(out.sends().count(), 0);
    assert_eq!(s.counters().dropped(DropReason::Scope), 2);
    // Everything else is untouched by the scope rule.
    s.process(2_000, FaceId(1), &interest("/net/a", 4), &mut out);
    assert_eq!(out.sends().count(), 2, "multicast to both next hops of /");
}

#[test]
fn satisfied_nonces_are_remembered_only_when_the_cs_cannot_answer_a_loop() {
    let mut s = routed(ShardConfig::default());
    // Cached, no MustBeFresh: the CS answers the loop; nothing to remember.
    assert_eq!(satisfy_then_loop(&mut s, 1, false, None), (0, true));
    // MustBeFresh, fresh longer than the list's lifetime: the CS still answers.
    assert_eq!(satisfy_then_loop(&mut s, 2, true, Some(60_000)), (0, true));
    // MustBeFresh and Data stale at once: the CS cannot answer, the nonce is dead.
    assert_eq!(satisfy_then_loop(&mut s, 3, true, Some(0)), (1, false));
    // Not cached (slots too small for it): remembered whatever the selectors.
    let mut small = routed(ShardConfig {
        cs: crate::CsConfig {
            slot_size: 64,
            ..crate::CsConfig::default()
        },
        ..ShardConfig::default()
    });
    assert_eq!(satisfy_then_loop(&mut small, 4, false, None), (1, false));
}

/// What a frame the shard sent is: a Data (bare or in an LpPacket), a Nack with its
/// reason, or an Interest.
#[derive(Debug, PartialEq)]
enum Sent {
    Data,
    Nack(NackReason),
    Interest,
}

fn sent(frame: &[u8]) -> Sent {
    match Packet::decode(frame).expect("decodes") {
        Packet::Data(_) => Sent::Data,
        Packet::Interest(_) => Sent::Interest,
        Packet::Lp(lp) => match (lp.nack(), lp.network_packet()) {
            (Some(reason), _) => Sent::Nack(reason),
            (None, Ok(Some(Packet::Data(_)))) => Sent::Data,
            (None, Ok(Some(Packet::Interest(_)))) => Sent::Interest,
            other => panic!("unexpected LpPacket: {other:?}"),
        },
    }
}

/// Processes one frame; returns what was sent where.
fn exchange(s: &mut Shard, now: u64, face: u32, frame: &[u8]) -> Vec<(FaceId, Vec<u8>)> {
    let mut out = Actions::new();
    s.process(now, FaceId(face), frame, &mut out);
    out.sends().map(|(f, b)| (f, b.to_vec())).collect()
}

fn interest_for(obj: u32, nonce: u32, must_be_fresh: bool) -> Vec<u8> {
    let mut i = InterestRepr::new(object(obj));
    i.nonce = Some(nonce);
    i.must_be_fresh = must_be_fresh;
    i.to_vec().expect("Interest")
}

/// The Data of `obj` with FreshnessPeriod `freshness_ms`, echoing `token`.
fn data_for(obj: u32, freshness_ms: Option<u64>, token: &[u8]) -> Vec<u8> {
    let mut d = DataRepr::new(object(obj), vec![7; 100]);
    d.freshness_ms = freshness_ms;
    tokened(token, &d.to_vec().expect("Data"))
}

/// A FreshnessPeriod that outlasts a test.
const MINUTE: Option<u64> = Some(60_000);

#[test]
fn the_cs_answers_an_interest_whose_entry_is_pending() {
    let mut s = routed(ShardConfig::default());
    s.add_face(FaceId(3), FaceInfo::default());
    s.add_face(FaceId(4), FaceInfo::default());
    // Two entries for one name: without and with MustBeFresh, each forwarded with its
    // own token.
    let plain = exchange(&mut s, 1_000, 1, &interest_for(1, 1, false));
    let fresh = exchange(&mut s, 1_000, 3, &interest_for(1, 2, true));
    assert_eq!((plain.len(), fresh.len()), (1, 1));
    assert_eq!((plain[0].0, fresh[0].0), (FaceId(2), FaceId(2)));
    // The Data echoes the first token: it satisfies that entry alone (matched by token,
    // no name search) and is cached; the MustBeFresh entry stays pending.
    let down = exchange(
        &mut s,
        2_000,
        2,
        &data_for(1, MINUTE, &our_token(&plain[0].1)),
    );
    assert_eq!(down.len(), 1);
    assert_eq!((down[0].0, sent(&down[0].1)), (FaceId(1), Sent::Data));
    assert_eq!(s.pit().len(), 1, "the MustBeFresh entry is still pending");
    // Another MustBeFresh Interest: the fresh Data in the CS answers it at once, where
    // NFD's order would have aggregated it into the pending entry.
    let before = s.counters();
    let hit = exchange(&mut s, 3_000, 4, &interest_for(1, 3, true));
    assert_eq!(hit.len(), 1);
    assert_eq!((hit[0].0, sent(&hit[0].1)), (FaceId(4), Sent::Data));
    let after = s.counters();
    assert_eq!(after.cs_hits, before.cs_hits + 1);
    assert_eq!(after.aggregated, before.aggregated, "not aggregated");
    // The pending entry still answers its own downstream, and only it.
    let late = exchange(
        &mut s,
        4_000,
        2,
        &data_for(1, MINUTE, &our_token(&fresh[0].1)),
    );
    let faces: Vec<FaceId> = late.iter().map(|(f, _)| *f).collect();
    assert_eq!(faces, [FaceId(3)]);
    assert!(s.pit().is_empty());
}

#[test]
fn the_cs_answers_a_looping_interest_whose_nonce_is_dead() {
    // Object 1's Interest with nonce 7 expires upstream (the nonce is dead), then another
    // Interest brings its Data; finally nonce 7 comes back. Returns what answers it.
    fn dead_then_loop(mut s: Shard) -> Sent {
        let fwd = exchange(&mut s, 1_000, 1, &interest_for(1, 7, false));
        assert_eq!(fwd.len(), 1, "forwarded");
        let mut out = Actions::new();
        let later = 5_000_000_000;
        s.on_timer(later, &mut out);
        assert!(s.pit().is_empty(), "expired");
        assert_eq!(s.dnl.len(), 1, "its nonce is dead");
        let fwd = exchange(&mut s, later, 1, &interest_for(1, 8, false));
        let down = exchange(
            &mut s,
            later + 1,
            2,
            &data_for(1, MINUTE, &our_token(&fwd[0].1)),
        );
        assert_eq!(down.len(), 1, "Data sent down");
        let answer = exchange(&mut s, later + 2, 1, &interest_for(1, 7, false));
        assert_eq!(answer.len(), 1);
        assert_eq!(answer[0].0, FaceId(1));
        sent(&answer[0].1)
    }
    // Cached: the CS answers before the dead-nonce list is asked.
    assert_eq!(dead_then_loop(routed(ShardConfig::default())), Sent::Data);
    // Not cached (slots too small for it): the dead nonce is a loop.
    let small = routed(ShardConfig {
        cs: crate::CsConfig {
            slot_size: 64,
            ..crate::CsConfig::default()
        },
        ..ShardConfig::default()
    });
    assert_eq!(dead_then_loop(small), Sent::Nack(NackReason::Duplicate));
}

#[test]
fn bursts_prefetch_the_fib_deeper_only_while_most_interests_miss_the_cs() {
    let (mut burst, mut one) = twins();
    assert_eq!(burst.speculate, Speculate::Deep, "deep by default");
    fetch(&mut burst, &mut one, 1_000, 0..8);
    assert_eq!(burst.speculate, Speculate::Deep, "all missed");
    assert_eq!(burst.counters().data_out, 8);
    // The same names again: CS hits, answered from the store; the next burst leaves the
    // FIB to the likely misses.
    fetch(&mut burst, &mut one, 2_000, 0..8);
    assert_eq!(burst.counters().cs_hits, 8);
    assert_eq!(burst.speculate, Speculate::Late, "all hit");
    // Late speculation forwards misses exactly as before (checked against `one`).
    fetch(&mut burst, &mut one, 3_000, 1..9);
    assert_eq!(burst.counters().cs_hits, 15);
    assert_eq!(burst.speculate, Speculate::Late, "7 hits of 8");
    fetch(&mut burst, &mut one, 4_000, 4..12);
    assert_eq!(burst.counters().cs_hits, 20);
    assert_eq!(burst.speculate, Speculate::Shallow, "5 hits of 8");
    // Shallow speculation forwards misses exactly as before too.
    fetch(&mut burst, &mut one, 5_000, 8..16);
    assert_eq!(burst.counters().cs_hits, 24);
    assert_eq!(
        burst.speculate,
        Speculate::Shallow,
        "4 hits of 8 are not a minority"
    );
    fetch(&mut burst, &mut one, 6_000, 20..28);
    assert_eq!(burst.speculate, Speculate::Deep, "all missed again");
    assert_eq!(burst.counters(), one.counters());
}

#[test]
fn the_speculation_follows_the_share_of_likely_hits() {
    for (hits, interests, want) in [
        (0, 8, Speculate::Deep),
        (3, 8, Speculate::Deep),
        (4, 8, Speculate::Shallow),
        (6, 8, Speculate::Shallow),
        (7, 8, Speculate::Late),
        (8, 8, Speculate::Late),
        (1, 1, Speculate::Late),
        (0, 1, Speculate::Deep),
        (2, 3, Speculate::Shallow),
    ] {
        assert_eq!(
            Speculate::after(hits, interests),
            want,
            "{hits} of {interests}"
        );
    }
}

#[test]
fn tokened_packets_match_the_codec() {
    for token_len in [0, 1, 6, 8, ndx_codec::MAX_PIT_TOKEN_LEN] {
        for frag_len in [1, 200, 240, 252, 253, 300, 0xFFFF, 0x1_0000] {
            let token: Vec<u8> = (0..token_len as u8).collect();
            let fragment = vec![0x5A; frag_len];
            let headers = LpHeaders {
                pit_token: (token_len > 0).then_some(&token[..]),
                ..LpHeaders::default()
            };
            // Without a token the fragment goes bare.
            let (want, n) = if headers.is_empty() {
                (fragment.clone(), frag_len)
            } else {
                let mut want = vec![0; headers.encoded_len(Some(frag_len))];
                let n = headers.encode(Some(&fragment), &mut want).expect("encodes");
                (want, n)
            };
            let mut out = Actions::new();
            out.bytes.push(0xEE);
            let range = out.push_tokened(headers.pit_token, &fragment);
            assert_eq!(range.start, 1);
            assert_eq!(
                &out.bytes[range],
                &want[..n],
                "token {token_len}, fragment {frag_len}"
            );
        }
    }
}

#[test]
fn segment_components_appended_match_the_codec() {
    for n in [
        0,
        1,
        255,
        256,
        65_535,
        65_536,
        u64::from(u32::MAX),
        1 << 40,
        u64::MAX,
    ] {
        let mut want = NameBuf::from_uri("/a/b").expect("name");
        want.push_segment(n);
        let mut got = NameBuf::from_uri("/a/b")
            .expect("name")
            .as_name()
            .as_bytes()
            .to_vec();
        ndx_codec::push_nni_tlv(&mut got, ndx_codec::types::SEGMENT_NAME_COMPONENT, n);
        assert_eq!(got, want.as_name().as_bytes(), "segment {n}");
    }
}

#[test]
fn unsolicited_data_are_dropped_and_cached_only_when_configured() {
    let data = DataRepr::new(object(1), vec![7; 100])
        .to_vec()
        .expect("Data");
    let ask = || {
        let mut r = InterestRepr::new(object(1));
        r.nonce = Some(5);
        r.to_vec().expect("Interest")
    };
    for (policy, cached) in [(Unsolicited::Drop, false), (Unsolicited::Cache, true)] {
        let mut s = routed(ShardConfig {
            unsolicited: policy,
            ..ShardConfig::default()
        });
        // No entry asked for it (bare, and with a token naming no entry): dropped, counted.
        assert!(exchange(&mut s, 1_000, 2, &data).is_empty());
        assert!(exchange(&mut s, 1_001, 2, &tokened(&[0xEE; 6], &data)).is_empty());
        assert_eq!(
            s.counters().dropped(DropReason::Unsolicited),
            2,
            "{policy:?}"
        );
        assert_eq!(s.cs().len(), usize::from(cached), "{policy:?}");
        // Cached: the CS answers the Interest for it; else it goes upstream.
        let sends = exchange(&mut s, 2_000, 1, &ask());
        assert_eq!(sends.len(), 1, "{policy:?}");
        let to = if cached { FaceId(1) } else { FaceId(2) };
        let what = if cached { Sent::Data } else { Sent::Interest };
        assert_eq!((sends[0].0, sent(&sends[0].1)), (to, what), "{policy:?}");
    }
}

#[test]
fn a_data_without_our_token_is_matched_by_name() {
    let mut s = routed(ShardConfig::default());
    let mut r = InterestRepr::new(object(1));
    r.nonce = Some(5);
    let sends = exchange(&mut s, 1_000, 1, &r.to_vec().expect("Interest"));
    assert_eq!(sends.len(), 1);
    let data = DataRepr::new(object(1), vec![7; 100])
        .to_vec()
        .expect("Data");
    // Bare (an upstream that does not echo tokens): found by name, sent down, cached.
    let sends = exchange(&mut s, 2_000, 2, &data);
    assert_eq!(sends.len(), 1);
    assert_eq!((sends[0].0, sent(&sends[0].1)), (FaceId(1), Sent::Data));
    assert_eq!(s.counters().by_token, 0);
    assert_eq!(s.counters().dropped(DropReason::Unsolicited), 0);
    assert_eq!(s.cs().len(), 1);
    // The entry is gone: the same Data again is unsolicited.
    assert!(exchange(&mut s, 3_000, 2, &data).is_empty());
    assert_eq!(s.counters().dropped(DropReason::Unsolicited), 1);
}
