//! `wirebridge-bench`: what translating costs, measured against plain JSON
//! in the same run, and (`--proxy`) what the `wirebridge` proxy adds to a
//! direct call.
//!
//! The machine may be shared and noisy, so every number is the median of
//! several samples, and the translation cases are reported as ratios to a
//! baseline timed in alternation with them.

#![forbid(unsafe_code)]

mod proxy;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde::Serialize;
use wirebridge_bench::cases;
use wirebridge_testkit::{allocations, CountingAllocator};

/// Counts allocations for the allocations-per-item column. It is on while
/// the cases are timed too: measured against a build without it, in
/// interleaved runs on a 2-core VM, the difference was below the
/// run-to-run noise on every case (the 3 KB request, with some 60
/// allocations, took 8.6-8.7 µs both ways).
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Measures wirebridge's translation against parsing and writing the same
/// JSON, or (--proxy) the `wirebridge` proxy against a direct call to the
/// demo upstream.
#[derive(Debug, Parser)]
#[command(name = "wirebridge-bench", version)]
struct Flags {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Measure the proxy (direct to the demo upstream, passed through the
    /// proxy, and translated by it) instead of the translation cases.
    #[arg(long)]
    proxy: bool,
    /// With --proxy: rounds of every case and route; medians and ranges
    /// are over the rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// With --proxy: seconds each run is measured, after its warm-up.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    run_time: f64,
    /// With --proxy: measure the store path instead, Responses requests
    /// (`small`, a one-line question, then 3 KB, 50 KB and 500 KB) at
    /// concurrency 1 and 8, sent with a credential as `store: false` and
    /// `store: true`, and `store: true` through a second proxy started with
    /// `--store none` (the `store_none` route).
    #[arg(long, requires = "proxy")]
    store: bool,
    /// With --proxy: run the proxies and gateways on CPU 1 (`taskset -c
    /// 1`) and the bench itself, its load and the demo upstream, on CPU 0,
    /// so that the load does not take the proxy's core (LiteLLM is not
    /// pinned). Needs `taskset` and two CPUs.
    #[arg(long, requires = "proxy", conflicts_with = "depth")]
    pin: bool,
    /// With --proxy: measure a stored conversation's turn as it grows
    /// instead: the proxy's, the backend's and Redis's CPU time per turn
    /// at each depth, over a Chat and a Responses backend, with the memory
    /// store and a Redis store.
    #[arg(long, requires = "proxy", conflicts_with_all = ["store", "litellm", "gateways"])]
    depth: bool,
    /// With --depth: the depths, comma-separated.
    #[arg(long, value_name = "N,N,…", value_delimiter = ',', requires = "depth",
          default_values_t = proxy::DEFAULT_DEPTHS)]
    depths: Vec<usize>,
    /// Samples per case; the median is reported.
    #[arg(long, default_value_t = 15)]
    samples: usize,
    /// Only cases whose name contains this.
    #[arg(long)]
    filter: Option<String>,
    /// With --proxy: the proxy's `RUST_LOG` (`info` logs one line per
    /// exchange, as deployed; its stderr is discarded either way).
    #[arg(long, value_name = "FILTER", default_value = "warn")]
    proxy_log: String,
    /// With --proxy: also measure the LiteLLM proxy (`pip install
    /// 'litellm[proxy]'`) translating the same requests, as a `litellm`
    /// route; PATH is its `litellm` command (default: `litellm` on PATH).
    #[arg(
        long,
        value_name = "PATH",
        num_args = 0..=1,
        default_missing_value = "litellm",
        requires = "proxy",
        conflicts_with = "store"
    )]
    litellm: Option<PathBuf>,
    /// With --proxy: also measure another gateway translating the same
    /// requests, as a route named NAME: CMD runs under `sh -c`, with
    /// `{port}` (where it must listen), `{upstream}` (the demo's base URL,
    /// ending in /v1), `{origin}` (without /v1) and `{upstream_api}` (chat
    /// or responses) replaced; once per direction. Repeat for several.
    #[arg(long = "gateway", value_name = "NAME=CMD", requires = "proxy", value_parser = proxy::GatewaySpec::parse)]
    gateways: Vec<proxy::GatewaySpec>,
    /// With --proxy: one more argument for the proxy's `serve` command
    /// line, after the bench's own; repeat for several. To compare settings,
    /// such as `--proxy-arg=--workers=1`.
    #[arg(long = "proxy-arg", value_name = "ARG", allow_hyphen_values = true)]
    proxy_args: Vec<String>,
    /// The `wirebridge` binary that --proxy starts, built beforehand
    /// (`cargo build --release -p wirebridge-cli`). Default:
    /// $WIREBRIDGE_BIN, else `wirebridge` beside this binary, where cargo
    /// puts it for the same target directory and profile.
    #[arg(long = "bin", value_name = "PATH")]
    proxy_bin: Option<PathBuf>,
    /// The shared directory, holding `fixtures/`. Default:
    /// $WIREBRIDGE_SHARED_DIR, else `shared` beside the checkout this was
    /// built from, else beside the current directory or one of its parents.
    #[arg(long, value_name = "DIR")]
    shared: Option<PathBuf>,
}

/// Names the `wirebridge` binary the proxy benchmark starts when `--bin`
/// is not given (the same variable the client conformance suite reads).
const PROXY_BIN_ENV: &str = "WIREBRIDGE_BIN";

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

fn main() -> ExitCode {
    let flags = Flags::parse();
    let shared = match flags.shared {
        Some(dir) => dir,
        None => match cases::shared_dir() {
            Ok(dir) => dir,
            Err(e) => return fail(&format!("{e}, or pass --shared DIR")),
        },
    };
    if flags.proxy {
        let binary = match proxy_binary(flags.proxy_bin) {
            Ok(binary) => binary,
            Err(e) => return fail(&e),
        };
        if !(flags.run_time > 0.0 && flags.run_time.is_finite()) {
            return fail("--run-time must be a positive number of seconds");
        }
        let settings = proxy::Settings {
            json: flags.json,
            filter: flags.filter,
            rounds: flags.rounds,
            run_time: Duration::from_secs_f64(flags.run_time),
            store: flags.store,
            depths: flags.depth.then_some(flags.depths),
            log: flags.proxy_log,
            litellm: flags.litellm,
            args: flags.proxy_args,
            gateways: flags.gateways,
            minimal: sibling("minimal-proxy"),
            pin: flags.pin,
        };
        return proxy::run(&settings, &shared, &binary);
    }
    let cases = match cases::all_cases(&shared) {
        Ok(cases) => cases,
        Err(e) => return fail(&e),
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

/// The `wirebridge` binary to measure: the one named by `--bin`, else by
/// `$WIREBRIDGE_BIN` (empty counts as unset, as for the shared directory),
/// else the one beside this binary. Cargo builds only the package it is
/// asked for, so a missing sibling is reported with the command that
/// builds it rather than as a failed start.
fn proxy_binary(named: Option<PathBuf>) -> Result<PathBuf, String> {
    let from_env = std::env::var_os(PROXY_BIN_ENV).filter(|path| !path.is_empty());
    if let Some(binary) = named.or(from_env.map(PathBuf::from)) {
        return Ok(binary);
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let sibling = exe.with_file_name(format!("wirebridge{}", std::env::consts::EXE_SUFFIX));
    if sibling.is_file() {
        Ok(sibling)
    } else {
        Err(format!(
            "no wirebridge binary at {}: build it with the same profile \
             (`cargo build --release -p wirebridge-cli`), or pass --bin PATH",
            sibling.display()
        ))
    }
}

/// The binary `name` beside this one, where cargo puts it.
fn sibling(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Reports a setup error: the fixtures or the proxy binary are missing, or
/// the proxy cannot be started.
fn fail(message: &str) -> ExitCode {
    eprintln!("wirebridge-bench: {message}");
    ExitCode::from(2)
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
    let mut allocated = 0;
    for _ in 0..samples {
        let before = allocations();
        times.push(sample(iterations, || runner.run()));
        allocated += allocations() - before;
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
        allocs_per_item: allocated as f64 / total_items,
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
