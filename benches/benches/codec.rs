//! Codec throughput: decoding typical packets, encoding LP headers, URI parse and display.

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ndx_benches as fx;
use ndx_codec::{Data, Interest, LpHeaders, LpPacket, NameBuf, Packet};

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(1));

    let interest = fx::interest();
    g.bench_function("interest", |b| {
        b.iter(|| Interest::decode(black_box(&interest)).expect("valid"));
    });
    g.bench_function("packet_interest", |b| {
        b.iter(|| Packet::decode(black_box(&interest)).expect("valid"));
    });
    for size in [1200, 8000] {
        let data = fx::data(size);
        g.bench_function(format!("data_{size}"), |b| {
            b.iter(|| Data::decode(black_box(&data)).expect("valid"));
        });
    }
    let lp = fx::lp_interest();
    g.bench_function("lp_pit_token_interest", |b| {
        b.iter(|| {
            let lp = LpPacket::decode(black_box(&lp)).expect("valid");
            lp.network_packet().expect("valid").expect("whole packet")
        });
    });
    let nack = fx::nack();
    g.bench_function("lp_nack", |b| {
        b.iter(|| {
            let lp = LpPacket::decode(black_box(&nack)).expect("valid");
            (
                lp.nack(),
                lp.network_packet().expect("valid").expect("whole packet"),
            )
        });
    });
    g.finish();
}

fn encode(c: &mut Criterion) {
    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Elements(1));
    let interest = fx::interest();
    let headers = LpHeaders {
        pit_token: Some(&fx::PIT_TOKEN),
        congestion_mark: Some(1),
        ..LpHeaders::default()
    };
    let mut out = vec![0u8; 9000];
    g.bench_function("lp_headers_interest", |b| {
        b.iter(|| {
            black_box(&headers)
                .encode(Some(black_box(&interest)), &mut out)
                .expect("fits")
        });
    });
    let data = fx::data(1200);
    let frag = LpHeaders {
        sequence: Some(0x1234_5678),
        frag_index: Some(0),
        frag_count: Some(2),
        ..LpHeaders::default()
    };
    g.bench_function("lp_fragment_1200", |b| {
        b.iter(|| {
            black_box(&frag)
                .encode(Some(black_box(&data[..1200])), &mut out)
                .expect("fits")
        });
    });
    g.finish();
}

fn uri(c: &mut Criterion) {
    let mut g = c.benchmark_group("uri");
    g.throughput(Throughput::Elements(1));
    g.bench_function("parse", |b| {
        b.iter(|| NameBuf::from_uri(black_box(fx::TYPICAL_NAME)).expect("valid"));
    });
    let name = fx::typical_name();
    let mut s = String::with_capacity(128);
    g.bench_function("display", |b| {
        b.iter(|| {
            s.clear();
            write!(s, "{}", black_box(&name)).expect("String never fails");
            s.len()
        });
    });
    g.finish();
}

criterion_group!(benches, decode, encode, uri);
criterion_main!(benches);
