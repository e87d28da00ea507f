//! Counters that close the shard's books: a Data whose downstreams all stopped waiting is
//! counted (`data_late`), so `data_in` = Data sent on + dropped + late.

use ndx_codec::{DataRepr, InterestRepr, NameBuf};
use ndx_core::{Actions, FaceId, FaceInfo, Fib, NextHop, Shard, ShardConfig};

#[test]
fn data_for_downstreams_that_stopped_waiting_is_counted_late() {
    let cfg = ShardConfig::default();
    let (mut fib, reader) = Fib::new(cfg.hash_key, 2);
    let prefix = NameBuf::from_uri("/p").unwrap();
    fib.add_nexthop(
        &prefix.as_name(),
        NextHop {
            face: FaceId(2),
            cost: 1,
        },
    )
    .unwrap();
    fib.publish();
    let mut s = Shard::new(cfg, reader, 0);
    s.add_face(FaceId(1), FaceInfo::default());
    s.add_face(FaceId(2), FaceInfo::default());
    let mut out = Actions::new();
    let name = |i: u8| NameBuf::from_uri(&format!("/p/{i}")).unwrap();
    for (i, lifetime) in [(1u8, 10u64), (2, 4000)] {
        let mut r = InterestRepr::new(name(i));
        r.nonce = Some(u32::from(i));
        r.lifetime_ms = Some(lifetime);
        s.process(1_000_000_000, FaceId(1), &r.to_vec().unwrap(), &mut out);
    }
    out.clear();
    // 50 ms later, before the shard's timer has expired the first entry: its Data finds the
    // entry but nobody waiting; the second is sent down.
    let now = 1_050_000_000;
    for i in [1u8, 2] {
        let d = DataRepr::new(name(i), vec![i; 10]).to_vec().unwrap();
        s.process(now, FaceId(2), &d, &mut out);
    }
    let c = s.counters();
    assert_eq!((c.data_in, c.data_out, c.data_late), (2, 1, 1));
    assert_eq!(out.sends().count(), 1);
    assert_eq!(s.pit().len(), 0, "both entries are gone");
}
