//! `wirebridge-bench --proxy --depth`: what one turn of a stored
//! conversation costs as the conversation grows, per process.
//!
//! A Responses client continues its conversation with
//! `previous_response_id`: the bridge reads the stored turns and sends the
//! whole history to a backend that keeps nothing, translated for a Chat
//! backend, as it is for a Responses one (the stateful engine). Here the
//! backend is `wirebridge demo --api chat`, then `--api responses`, and the
//! proxy `wirebridge serve`, each a process of its own, with the memory
//! store and, when
//! `redis-server` can be run, a Redis store (a third process). A chain of
//! turns is built through the proxy (untimed), and at each depth `d` turns
//! continuing the response at depth `d - 1` (each a branch of the same
//! parent, so every timed turn has the same history) are sent one after
//! another for the run time. The CPU time each process spent over that span,
//! divided by the turns, is the cost per turn: the proxy's, the backend's
//! and Redis's.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde::{Deserialize, Serialize};
use wirebridge_bench::redis_server::RedisServer;

use super::child::{CpuClock, Proxy, ProxySpec};
use super::load::HttpClient;
use super::requests::BENCH_CREDENTIAL;

/// The depths measured unless others are asked for.
pub const DEFAULT_DEPTHS: [usize; 4] = [1, 50, 500, 5_000];

/// Turns sent, unmeasured, before each depth's span.
const WARM_UP_TURNS: usize = 3;

/// At least this many timed turns at each depth, however long they take.
const MIN_TURNS: usize = 5;

/// One depth's result.
#[derive(Debug, Serialize)]
pub(super) struct DepthRow {
    /// The backend's API: `chat` or `responses`.
    upstream: &'static str,
    store: &'static str,
    depth: usize,
    turns: usize,
    /// The median time from sending a turn to reading its whole reply.
    p50_ms: f64,
    proxy_cpu_ms_per_turn: f64,
    upstream_cpu_ms_per_turn: f64,
    /// For the Redis store.
    redis_cpu_ms_per_turn: Option<f64>,
    /// The input the backend counted in what it was sent at this depth
    /// (the demo counts a token a word): the history grows with the depth.
    upstream_input_tokens: u64,
}

/// `wirebridge demo`, a process of its own.
struct Demo {
    child: Child,
    url: String,
}

impl Demo {
    fn start(binary: &Path, api: &str) -> Result<Self, String> {
        let mut child = Command::new(binary)
            .args(["demo", "--listen", "127.0.0.1:0", "--api", api])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start `{} demo`: {e}", binary.display()))?;
        let stdout = child.stdout.take().expect("piped");
        let mut demo = Demo {
            child,
            url: String::new(),
        };
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("cannot read the demo's output: {e}"))?;
            if let Some(url) = line.strip_prefix("listening on ") {
                demo.url = url.trim().to_owned();
                return Ok(demo);
            }
        }
        Err("the demo upstream exited before listening".to_owned())
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Measures every depth over each backend API and each store there is;
/// the rows in order.
pub(super) async fn measure(
    binary: &Path,
    depths: &[usize],
    run_time: Duration,
    log: &str,
    clock: &CpuClock,
) -> Result<Vec<DepthRow>, String> {
    let mut depths = depths.to_vec();
    depths.sort_unstable();
    depths.dedup();
    let client: HttpClient =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();
    let mut rows = Vec::new();
    for (upstream, store) in ["chat", "responses"]
        .into_iter()
        .flat_map(|api| [(api, "memory"), (api, "redis")])
    {
        let redis = match store {
            "redis" => match RedisServer::start() {
                Ok(redis) => Some(redis),
                Err(why) => {
                    eprintln!("the Redis store is not measured: {why}");
                    continue;
                }
            },
            _ => None,
        };
        let demo = Demo::start(binary, upstream)?;
        let store_arg = redis.as_ref().map_or("memory".to_owned(), RedisServer::url);
        let extra = ["--store".to_owned(), store_arg];
        let spec = ProxySpec {
            upstream_api: upstream,
            profile: None,
            log,
            extra: &extra,
            pin: None,
        };
        let proxy = Proxy::start(binary, &demo.url, &spec)?;
        let url = format!("{}/v1/responses", proxy.url);
        let processes = Processes {
            proxy: proxy.pid(),
            upstream: demo.child.id(),
            redis: redis.as_ref().map(RedisServer::pid),
            clock,
        };
        // The chain: `chain[k]` is the response at depth k + 1.
        let mut chain: Vec<String> = Vec::new();
        for &depth in &depths {
            while chain.len() + 1 < depth {
                let (id, _) = turn(&client, &url, chain.last().map(String::as_str)).await?;
                chain.push(id);
            }
            let parent = depth.checked_sub(2).map(|at| chain[at].as_str());
            let row = timed(&client, &url, parent, run_time, &processes).await?;
            rows.push(DepthRow {
                upstream,
                store,
                depth,
                ..row
            });
        }
    }
    Ok(rows)
}

/// The processes whose CPU time a span reads.
struct Processes<'c> {
    proxy: u32,
    upstream: u32,
    redis: Option<u32>,
    clock: &'c CpuClock,
}

impl Processes<'_> {
    fn times(&self) -> Result<[Duration; 3], String> {
        let redis = match self.redis {
            Some(pid) => self.clock.process_time(pid)?,
            None => Duration::ZERO,
        };
        Ok([
            self.clock.process_time(self.proxy)?,
            self.clock.process_time(self.upstream)?,
            redis,
        ])
    }
}

/// Turns continuing `parent`, one after another, for `run_time` (at least
/// [`MIN_TURNS`]), after a few unmeasured.
async fn timed(
    client: &HttpClient,
    url: &str,
    parent: Option<&str>,
    run_time: Duration,
    processes: &Processes<'_>,
) -> Result<DepthRow, String> {
    for _ in 0..WARM_UP_TURNS {
        turn(client, url, parent).await?;
    }
    let before = processes.times()?;
    let start = Instant::now();
    let mut latencies = Vec::new();
    let mut upstream_input_tokens = 0;
    while latencies.len() < MIN_TURNS || start.elapsed() < run_time {
        let sent = Instant::now();
        let (_, tokens) = turn(client, url, parent).await?;
        latencies.push(sent.elapsed().as_secs_f64() * 1e3);
        upstream_input_tokens = tokens;
    }
    let after = processes.times()?;
    let turns = latencies.len();
    let per_turn = |at: usize| (after[at] - before[at]).as_secs_f64() * 1e3 / turns as f64;
    latencies.sort_by(f64::total_cmp);
    Ok(DepthRow {
        upstream: "",
        store: "",
        depth: 0,
        turns,
        p50_ms: latencies[turns / 2],
        proxy_cpu_ms_per_turn: per_turn(0),
        upstream_cpu_ms_per_turn: per_turn(1),
        redis_cpu_ms_per_turn: processes.redis.map(|_| per_turn(2)),
        upstream_input_tokens,
    })
}

/// What a turn's reply says.
#[derive(Deserialize)]
struct Reply {
    id: String,
    status: String,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Usage {
    input_tokens: u64,
}

/// One turn continuing `parent`: the new response's id, and the input
/// tokens the backend counted in the history it was sent.
async fn turn(
    client: &HttpClient,
    url: &str,
    parent: Option<&str>,
) -> Result<(String, u64), String> {
    let mut body = serde_json::json!({
        "model": "demo",
        "input": "Tell me one more thing.",
    });
    if let Some(parent) = parent {
        body["previous_response_id"] = parent.into();
    }
    let request = http::Request::post(url)
        .header("content-type", "application/json")
        .header("authorization", BENCH_CREDENTIAL)
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid request");
    let response = client.request(request).await.map_err(|e| e.to_string())?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    if !status.is_success() {
        return Err(format!(
            "a turn was answered {status}: {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        ));
    }
    let reply: Reply =
        serde_json::from_slice(&bytes).map_err(|e| format!("a turn's reply: {e}"))?;
    if reply.status != "completed" {
        return Err(format!("a turn ended {}", reply.status));
    }
    Ok((reply.id, reply.usage.map_or(0, |u| u.input_tokens)))
}

/// Prints the rows as a table.
pub(super) fn print(rows: &[DepthRow]) {
    println!(
        "{:<10} {:<7} {:>6} {:>6} {:>9} {:>11} {:>13} {:>10} {:>12}",
        "upstream",
        "store",
        "depth",
        "turns",
        "p50 ms",
        "proxy ms",
        "upstream ms",
        "redis ms",
        "input tokens"
    );
    for row in rows {
        let redis = row
            .redis_cpu_ms_per_turn
            .map_or("-".to_owned(), |ms| format!("{ms:.3}"));
        println!(
            "{:<10} {:<7} {:>6} {:>6} {:>9.3} {:>11.3} {:>13.3} {:>10} {:>12}",
            row.upstream,
            row.store,
            row.depth,
            row.turns,
            row.p50_ms,
            row.proxy_cpu_ms_per_turn,
            row.upstream_cpu_ms_per_turn,
            redis,
            row.upstream_input_tokens
        );
    }
    println!("(CPU per turn of each process, over the turns continuing the response at depth - 1)");
}
