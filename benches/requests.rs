//! Request translation, every direction: a ~3 KB Codex turn and a ~50 KB
//! conversation, each against parsing and writing the same JSON as a
//! `serde_json::Value`.
//!
//! `cargo bench --bench requests`

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};

mod common;

fn requests(c: &mut Criterion) {
    common::bench_cases(c, &["request_3k", "request_50k"]);
}

criterion_group!(benches, requests);
criterion_main!(benches);
