//! `wirebridge bench`: what translating costs, measured against plain JSON
//! in the same run, and (`--proxy`) what the proxy adds to a direct call.
//!
//! The machine may be shared and noisy, so every number is the median of
//! several samples, and the translation cases are reported as ratios to a
//! baseline timed in alternation with them.

mod cases;
mod counting;
mod proxy;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde::Serialize;

/// Flags of `wirebridge bench`.
#[derive(Debug, clap::Args)]
pub struct BenchFlags {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Measure the proxy (direct to the demo upstream, and through the
    /// proxy) instead of the translation cases.
    #[arg(long)]
    proxy: bool,
    /// Samples per case; the median is reported.
    #[arg(long, default_value_t = 15)]
    samples: usize,
    /// Only cases whose name contains this.
    #[arg(long)]
    filter: Option<String>,
}

/// One translation case's result.
#[derive(Debug, Serialize)]
struct Row {
    name: String,
    ns_per_item: f64,
    baseline_ns_per_item: f64,
    ratio: f64,
    allocs_per_item: f64,
    #[serde(skip)]
    mb_per_s: f64,
    #[serde(skip)]
    items_per_s: f64,
}

#[derive(Serialize)]
struct Report {
    cases: Vec<Row>,
}

/// Runs the benchmark the flags ask for.
pub fn run(flags: BenchFlags) -> ExitCode {
    if flags.proxy {
        return proxy::run(flags.json, flags.filter.as_deref());
    }
    let cases = match cases::all_cases() {
        Ok(cases) => cases,
        Err(e) => {
            eprintln!("wirebridge: {e}");
            return ExitCode::from(2);
        }
    };
    let samples = flags.samples.max(1);
    let mut rows = Vec::new();
    for case in &cases {
        if flags
            .filter
            .as_deref()
            .is_some_and(|f| !case.name.contains(f))
        {
            continue;
        }
        let row = measure(case, samples);
        if !flags.json {
            if rows.is_empty() {
                print_header();
            }
            print_row(&row);
        }
        rows.push(row);
    }
    if flags.json {
        let report = Report { cases: rows };
        println!(
            "{}",
            serde_json::to_string(&report).expect("reports serialize")
        );
    }
    ExitCode::SUCCESS
}

/// Time one sample aims at.
const SAMPLE_TIME: Duration = Duration::from_millis(40);
/// Warm-up time per side of a case.
const WARM_UP: Duration = Duration::from_millis(150);

fn measure(case: &cases::Case, samples: usize) -> Row {
    let mut runner = case.runner();
    let iterations = calibrate(|| runner.run());
    let baseline_iterations = calibrate(|| runner.baseline());
    let mut times = Vec::with_capacity(samples);
    let mut baseline_times = Vec::with_capacity(samples);
    let mut allocations = 0;
    for _ in 0..samples {
        let before = counting::allocations();
        times.push(sample(iterations, || runner.run()));
        allocations += counting::allocations() - before;
        baseline_times.push(sample(baseline_iterations, || runner.baseline()));
    }
    let items = case.items as f64;
    let ns_per_item = median(&mut times) / items;
    let baseline_ns_per_item = median(&mut baseline_times) / items;
    let total_items = (iterations * samples as u64) as f64 * items;
    Row {
        name: case.name.clone(),
        ns_per_item,
        baseline_ns_per_item,
        ratio: ns_per_item / baseline_ns_per_item,
        allocs_per_item: allocations as f64 / total_items,
        mb_per_s: case.input_bytes as f64 / (ns_per_item * items) * 1e3,
        items_per_s: 1e9 / ns_per_item,
    }
}

/// Warms `f` up and returns how many calls make one sample.
fn calibrate(mut f: impl FnMut() -> usize) -> u64 {
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < WARM_UP || calls < 3 {
        std::hint::black_box(f());
        calls += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / calls as f64;
    ((SAMPLE_TIME.as_secs_f64() / per_call) as u64).max(1)
}

/// Nanoseconds per call over `iterations` calls.
fn sample(iterations: u64, mut f: impl FnMut() -> usize) -> f64 {
    let start = Instant::now();
    for _ in 0..iterations {
        std::hint::black_box(f());
    }
    start.elapsed().as_nanos() as f64 / iterations as f64
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

fn print_header() {
    println!(
        "{:<32} {:>11} {:>9} {:>11} {:>11} {:>7} {:>12}",
        "case", "ns/item", "MB/s", "items/s", "baseline ns", "ratio", "allocs/item"
    );
}

fn print_row(row: &Row) {
    println!(
        "{:<32} {:>11.0} {:>9.1} {:>11.0} {:>11.0} {:>6.2}x {:>12.2}",
        row.name,
        row.ns_per_item,
        row.mb_per_s,
        row.items_per_s,
        row.baseline_ns_per_item,
        row.ratio,
        row.allocs_per_item
    );
}
