//! What the translation benches share: the cases of `wirebridge-bench`
//! (the work its table reports, so both report the same thing), a group per
//! case holding the translation and its plain-JSON baseline, and that
//! baseline for inputs of their own.

// Each bench compiles this module and uses only part of it.
#![allow(dead_code)]

use criterion::{Criterion, Throughput};
use serde_json::Value;
use wirebridge_bench::cases;

/// Benchmarks every case whose name ends with one of `kinds`: one group
/// per case, with `wirebridge` (the translation) and `baseline`
/// (`serde_json::from_slice::<Value>` + `to_vec` of the same input).
pub fn bench_cases(c: &mut Criterion, kinds: &[&str]) {
    let cases = cases::shared_dir()
        .and_then(|shared| cases::all_cases(&shared))
        .unwrap_or_else(|e| panic!("{e}"));
    for case in cases
        .iter()
        .filter(|case| kinds.iter().any(|k| case.name.ends_with(k)))
    {
        let mut group = c.benchmark_group(&case.name);
        if case.items > 1 {
            group.throughput(Throughput::Elements(case.items));
        } else {
            group.throughput(Throughput::Bytes(case.input_bytes as u64));
        }
        let mut runner = case.runner();
        group.bench_function("wirebridge", |b| b.iter(|| runner.run()));
        group.bench_function("baseline", |b| b.iter(|| runner.baseline()));
        group.finish();
    }
}

/// The baseline: every document parsed into a `serde_json::Value` and
/// written back with `to_vec`. Returns the bytes written.
pub fn round_trip(documents: &[Vec<u8>]) -> usize {
    documents
        .iter()
        .map(|document| {
            let value: Value = serde_json::from_slice(document).expect("the input is JSON");
            serde_json::to_vec(&value).expect("values serialize").len()
        })
        .sum()
}

/// The JSON payload of every `data:` line of an SSE stream (`[DONE]` and
/// anything else that is not an object left out).
pub fn sse_documents(sse: &[u8]) -> Vec<Vec<u8>> {
    String::from_utf8_lossy(sse)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| data.starts_with('{'))
        .map(|data| data.as_bytes().to_vec())
        .collect()
}
