//! Name hashing for PIT/FIB/CS lookups: std's SipHash-1-3 against foldhash, both keyed.
//!
//! A name hashes as its TLV bytes (`Name::as_bytes()`), so a lookup hashes one slice; a
//! longest-prefix match hashes every prefix, which the `prefixes` benches do incrementally.

use std::hash::{BuildHasher, Hasher};
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndx_benches as fx;

/// Hash of the name's bytes, as one write.
fn hash_bytes<S: BuildHasher>(s: &S, bytes: &[u8]) -> u64 {
    let mut h = s.build_hasher();
    h.write(bytes);
    h.finish()
}

/// Hashes of every prefix (k = 1..=len), each continuing from the previous one's state, so
/// the whole pass reads the name once. Returns an xor so nothing is optimised away.
fn hash_prefixes<S: BuildHasher>(s: &S, name: ndx_codec::Name<'_>) -> u64 {
    let mut h = s.build_hasher();
    let mut acc = 0;
    for c in name.components() {
        h.write(c.wire());
        acc ^= h.finish();
    }
    acc
}

fn per_name(c: &mut Criterion) {
    let sip = std::hash::RandomState::new();
    let fold = foldhash::fast::RandomState::default();
    let mut g = c.benchmark_group("name_hash");
    g.throughput(Throughput::Elements(1));
    for n in [3, 8, 16] {
        let name = fx::name_of(n);
        let bytes = name.as_name().as_bytes();
        g.bench_with_input(BenchmarkId::new("siphash13", n), bytes, |b, bytes| {
            b.iter(|| hash_bytes(&sip, black_box(bytes)));
        });
        g.bench_with_input(BenchmarkId::new("foldhash", n), bytes, |b, bytes| {
            b.iter(|| hash_bytes(&fold, black_box(bytes)));
        });
    }
    g.finish();
}

fn all_prefixes(c: &mut Criterion) {
    let sip = std::hash::RandomState::new();
    let fold = foldhash::fast::RandomState::default();
    let mut g = c.benchmark_group("prefix_hashes");
    g.throughput(Throughput::Elements(1));
    for n in [3, 8, 16] {
        let name = fx::name_of(n);
        g.bench_with_input(BenchmarkId::new("siphash13", n), &name, |b, name| {
            b.iter(|| hash_prefixes(&sip, black_box(name.as_name())));
        });
        g.bench_with_input(BenchmarkId::new("foldhash", n), &name, |b, name| {
            b.iter(|| hash_prefixes(&fold, black_box(name.as_name())));
        });
    }
    g.finish();
}

criterion_group!(benches, per_name, all_prefixes);
criterion_main!(benches);
