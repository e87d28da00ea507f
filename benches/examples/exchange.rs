//! Runs N worst-case Interest/Data exchanges through one shard (CS miss, PIT insert, FIB LPM
//! among 10^3 routes; Data echoing our PIT token), for instruction counting with callgrind,
//! which, unlike wall time, is repeatable on a shared machine:
//!
//! ```sh
//! cargo build --release -p ndx-benches --example exchange
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out target/release/examples/exchange 20000
//! callgrind_annotate --inclusive=yes /tmp/cg.out | grep 'Shard::process \['
//! ```
//! Divide `Shard::process`'s inclusive count by the number of exchanges.

use ndx_codec::{DataRepr, InterestRepr, LpHeaders, NameBuf};
use ndx_core::{Actions, CsConfig, FaceId, FaceInfo, Fib, HashKey, NextHop, Shard, ShardConfig};

fn name(i: u64) -> NameBuf {
    let mut n = NameBuf::new();
    n.push_generic(b"net")
        .push_generic(format!("site{}", i / 64).as_bytes())
        .push_generic(format!("host{i}").as_bytes());
    n
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let key = HashKey::new(1, 2);
    let (mut fib, reader) = Fib::new(key, 2);
    for i in 0..1000 {
        fib.add_nexthop(
            &name(i).as_name(),
            NextHop {
                face: FaceId(2),
                cost: 1,
            },
        )
        .expect("route");
    }
    fib.publish();
    let cfg = ShardConfig {
        pit_capacity: 1 << 16,
        cs: CsConfig {
            capacity: 1 << 12,
            slot_size: 1200,
            ..CsConfig::default()
        },
        hash_key: key,
        ..ShardConfig::default()
    };
    let mut shard = Shard::new(cfg, reader, 0);
    shard.add_face(FaceId(1), FaceInfo::default());
    shard.add_face(FaceId(2), FaceInfo::default());
    let frames: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
        .map(|j| {
            let mut nm = name(j % 1000);
            nm.push_generic(b"video")
                .push_generic(format!("obj{j}").as_bytes())
                .push_segment(j % 1000);
            let mut i = InterestRepr::new(nm.clone());
            i.nonce = Some(j as u32);
            i.lifetime_ms = Some(4000);
            i.hop_limit = Some(64);
            let mut d = DataRepr::new(nm, vec![0x42; 1000]);
            d.freshness_ms = Some(10_000);
            (i.to_vec().expect("Interest"), d.to_vec().expect("Data"))
        })
        .collect();
    let mut out = Actions::new();
    let mut lp = vec![0u8; 2048];
    for (j, (interest, data)) in frames.iter().enumerate() {
        let t = j as u64 * 1000;
        out.clear();
        shard.process(t, FaceId(1), interest, &mut out);
        // The forwarded Interest is `64 LL 62 08 <token> 50 ...`.
        let token: [u8; 8] = out
            .sends()
            .next()
            .and_then(|(_, f)| f.get(4..12)?.try_into().ok())
            .expect("Interest forwarded with a token");
        let h = LpHeaders {
            pit_token: Some(&token),
            ..LpHeaders::default()
        };
        let len = h.encode(Some(data), &mut lp).expect("LpPacket");
        out.clear();
        shard.process(t + 500, FaceId(2), &lp[..len], &mut out);
    }
    let c = shard.counters();
    assert_eq!(
        (c.interests_out, c.data_out),
        (n, n),
        "every exchange completed"
    );
    eprintln!("{n} exchanges: {c:?}");
}
