//! What both criterion benches share: the cases of `wirebridge-bench`
//! (the same work, so both report the same thing), and a group per case
//! holding the translation and its plain-JSON baseline.

use criterion::{Criterion, Throughput};
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
