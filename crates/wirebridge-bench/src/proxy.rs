//! `wirebridge-bench --proxy`: the same requests sent straight to the demo
//! upstream and through `wirebridge serve`, on loopback.
//!
//! The demo upstream runs in this process and speaks both APIs. The proxy
//! is the `wirebridge` binary started as a subprocess (`serve
//! --upstream-api chat`, logs at `warn`), so what is measured is the proxy
//! as deployed: hyper server, translation layer, hyper client. A Responses
//! request goes either to the demo's own `/v1/responses`, or to the proxy,
//! which translates it to Chat Completions for the demo and translates the
//! reply back. A third route, `chat`, sends the translated Chat request
//! straight to the demo: the upstream's own share of the proxied time.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use wirebridge_bench::cases;
use wirebridge_demo::{Api, DemoConfig, DemoServer};

use crate::fail;

type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// How long each measured run lasts, after its warm-up.
const RUN_TIME: Duration = Duration::from_secs(2);
const WARM_UP: Duration = Duration::from_millis(300);
/// Words in the user message of the streaming case: the demo streams one
/// word per chunk, so the reply has about this many chunks.
const STREAM_WORDS: usize = 490;

/// One run: a route, a kind of request and a concurrency.
#[derive(Debug, Serialize)]
struct Run {
    name: String,
    route: &'static str,
    concurrency: usize,
    streaming: bool,
    requests_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    ttfb_p50_us: f64,
    ttfb_p99_us: f64,
}

/// Added latency of the proxy for one kind of request and concurrency.
#[derive(Debug, Serialize)]
struct Added {
    name: String,
    added_p50_us: f64,
    added_p99_us: f64,
    added_ttfb_p50_us: f64,
    throughput_ratio: f64,
}

#[derive(Serialize)]
struct Report {
    proxy: Vec<Run>,
    added: Vec<Added>,
}

/// The proxy subprocess, killed when dropped.
struct Proxy {
    child: Child,
    url: String,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the proxy benchmark: the requests come from the fixtures in
/// `shared`, and the proxy is `binary`.
pub fn run(json: bool, filter: Option<&str>, shared: &Path, binary: &Path) -> ExitCode {
    let requests = match requests(shared) {
        Ok(requests) => requests,
        Err(e) => return fail(&e),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the runtime starts");
    let result = runtime.block_on(measure(requests, binary, json, filter));
    match result {
        Ok(report) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string(&report).expect("reports serialize")
                );
            } else {
                print_added(&report.added);
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// The non-streaming ~3 KB Codex turn, and a streaming request whose reply
/// has about 500 chunks.
fn requests(shared: &Path) -> Result<[(&'static str, bool, Bytes); 2], String> {
    let turn = cases::codex_turn(shared)?;
    let mut plain: serde_json::Value = serde_json::from_slice(&turn).map_err(|e| e.to_string())?;
    plain["stream"] = false.into();
    let prose = cases::codex_prose(shared)?;
    let words: Vec<&str> = prose.split_whitespace().take(STREAM_WORDS).collect();
    let streaming = serde_json::json!({
        "model": "wirebridge-demo",
        "stream": true,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": words.join(" ")}]}],
    });
    let bytes = |v: &serde_json::Value| Bytes::from(serde_json::to_vec(v).expect("JSON"));
    Ok([
        ("request_3k", false, bytes(&plain)),
        ("stream_500", true, bytes(&streaming)),
    ])
}

async fn measure(
    requests: [(&'static str, bool, Bytes); 2],
    binary: &Path,
    json: bool,
    filter: Option<&str>,
) -> Result<Report, String> {
    let demo = DemoServer::try_start(DemoConfig::new().api(Api::Both))
        .await
        .map_err(|e| format!("cannot start the demo upstream: {e}"))?;
    let demo_url = demo.url();
    let proxy = start_proxy(binary, &demo_url)?;
    let client: HttpClient = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(64)
        .build_http();
    let mut report = Report {
        proxy: Vec::new(),
        added: Vec::new(),
    };
    if !json {
        println!(
            "{:<24} {:<7} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "case", "route", "req/s", "p50 us", "p99 us", "ttfb p50", "ttfb p99"
        );
    }
    for (kind, streaming, body) in requests {
        for concurrency in [1, 32] {
            let name = format!("{kind}/c{concurrency}");
            if filter.is_some_and(|f| !name.contains(f)) {
                continue;
            }
            let chat = wirebridge_convert::responses_to_chat::translate_request(
                &body,
                &Default::default(),
            )
            .map_err(|e| format!("the benchmark request does not translate: {e}"))?;
            let chat_body = Bytes::from(chat.body);
            let mut pair = Vec::new();
            let routes = [
                ("direct", &demo_url, "/v1/responses", &body),
                ("proxy", &proxy.url, "/v1/responses", &body),
                ("chat", &demo_url, "/v1/chat/completions", &chat_body),
            ];
            for (route, base, path, body) in routes {
                let url = format!("{base}{path}");
                let run = load(&client, &url, body, concurrency, streaming).await?;
                let run = Run {
                    name: name.clone(),
                    route,
                    ..run
                };
                if !json {
                    print_run(&run);
                }
                pair.push(run);
            }
            let (direct, through) = (&pair[0], &pair[1]);
            report.added.push(Added {
                name: name.clone(),
                added_p50_us: through.p50_us - direct.p50_us,
                added_p99_us: through.p99_us - direct.p99_us,
                added_ttfb_p50_us: through.ttfb_p50_us - direct.ttfb_p50_us,
                throughput_ratio: through.requests_per_s / direct.requests_per_s,
            });
            report.proxy.extend(pair);
        }
    }
    drop(proxy);
    let _ = demo.shutdown().await;
    Ok(report)
}

/// Starts `binary serve` in front of the demo and waits for its address.
fn start_proxy(binary: &Path, demo_url: &str) -> Result<Proxy, String> {
    let mut command = Command::new(binary);
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--upstream-api", "chat"])
        .arg("--upstream")
        .arg(format!("{demo_url}/v1"))
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("WIREBRIDGE_") {
            command.env_remove(key);
        }
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start the proxy {}: {e}", binary.display()))?;
    let stdout = child.stdout.take().expect("piped");
    let mut proxy = Proxy {
        child,
        url: String::new(),
    };
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| format!("cannot read the proxy's output: {e}"))?;
        if let Some(url) = line.strip_prefix("listening on ") {
            proxy.url = url.trim().to_owned();
            return Ok(proxy);
        }
    }
    Err("the proxy exited before listening".to_owned())
}

/// Per-request timings: (total, time to first body byte).
type Timing = (Duration, Duration);

/// `concurrency` clients sending `body` back to back for [`RUN_TIME`].
async fn load(
    client: &HttpClient,
    url: &str,
    body: &Bytes,
    concurrency: usize,
    streaming: bool,
) -> Result<Run, String> {
    let run_for = |time: Duration| {
        let tasks: Vec<_> = (0..concurrency)
            .map(|_| {
                let (client, url, body) = (client.clone(), url.to_owned(), body.clone());
                tokio::spawn(async move {
                    let mut timings = Vec::new();
                    let start = Instant::now();
                    while start.elapsed() < time {
                        timings.push(exchange(&client, &url, body.clone()).await?);
                    }
                    Ok::<_, String>(timings)
                })
            })
            .collect();
        async move {
            let mut all = Vec::new();
            for task in tasks {
                all.extend(task.await.map_err(|e| e.to_string())??);
            }
            Ok::<_, String>(all)
        }
    };
    run_for(WARM_UP).await?;
    let start = Instant::now();
    let timings = run_for(RUN_TIME).await?;
    let elapsed = start.elapsed();
    let mut totals: Vec<f64> = timings.iter().map(|t| micros(t.0)).collect();
    let mut ttfbs: Vec<f64> = timings.iter().map(|t| micros(t.1)).collect();
    Ok(Run {
        name: String::new(),
        route: "",
        concurrency,
        streaming,
        requests_per_s: timings.len() as f64 / elapsed.as_secs_f64(),
        p50_us: percentile(&mut totals, 0.50),
        p99_us: percentile(&mut totals, 0.99),
        ttfb_p50_us: percentile(&mut ttfbs, 0.50),
        ttfb_p99_us: percentile(&mut ttfbs, 0.99),
    })
}

/// One request, read to the end.
async fn exchange(client: &HttpClient, url: &str, body: Bytes) -> Result<Timing, String> {
    let request = http::Request::post(url)
        .header("content-type", "application/json")
        .body(Full::new(body))
        .expect("a valid request");
    let start = Instant::now();
    let response = client.request(request).await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let mut body = response.into_body();
    let mut first = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| e.to_string())?;
        if first.is_none() && frame.data_ref().is_some_and(|d| !d.is_empty()) {
            first = Some(start.elapsed());
        }
    }
    let total = start.elapsed();
    Ok((total, first.unwrap_or(total)))
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[rank]
}

fn print_run(run: &Run) {
    println!(
        "{:<24} {:<7} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>10.0}",
        run.name,
        run.route,
        run.requests_per_s,
        run.p50_us,
        run.p99_us,
        run.ttfb_p50_us,
        run.ttfb_p99_us
    );
}

fn print_added(added: &[Added]) {
    println!();
    println!(
        "{:<24} {:>14} {:>14} {:>14} {:>12}",
        "added by the proxy", "p50 us", "p99 us", "ttfb p50 us", "throughput"
    );
    for a in added {
        println!(
            "{:<24} {:>14.0} {:>14.0} {:>14.0} {:>11.2}x",
            a.name, a.added_p50_us, a.added_p99_us, a.added_ttfb_p50_us, a.throughput_ratio
        );
    }
}
