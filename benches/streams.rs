//! Stream re-encoding, every direction: one ~300 B chunk in steady state,
//! and whole streams of ~500 and ~5,000 chunks (SSE decoding and encoding
//! included), each against parsing and writing every event's JSON as a
//! `serde_json::Value`. Throughput is in chunks.
//!
//! `cargo bench --bench streams`

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};

mod common;

fn streams(c: &mut Criterion) {
    common::bench_cases(c, &["chunk", "stream_500", "stream_5000"]);
}

criterion_group!(benches, streams);
criterion_main!(benches);
