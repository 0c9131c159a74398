//! Reply bodies, every direction: the body a backend answers with when
//! asked for no stream (the text of a 500-chunk recorded stream) translated
//! whole, against parsing and writing the same JSON as a
//! `serde_json::Value`.
//!
//! `cargo bench --bench bodies`

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};

mod common;

fn bodies(c: &mut Criterion) {
    common::bench_cases(c, &["body_500"]);
}

criterion_group!(benches, bodies);
criterion_main!(benches);
