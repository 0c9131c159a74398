//! `wirebridge-bench --proxy`: what the `wirebridge` proxy costs, on
//! loopback, in both directions.
//!
//! The demo upstream runs in this process and speaks every API (Chat,
//! Responses, Messages). The proxy is the `wirebridge` binary started as a
//! subprocess, once per direction (`serve --upstream-api chat` for
//! Responses clients and, another process, for Anthropic Messages clients;
//! `serve --upstream-api responses` for Chat clients), so what is measured
//! is the proxy as deployed: hyper server, translation layer, hyper client.
//! Cases are `direction/kind/cN`: directions `responses_to_chat`,
//! `chat_to_responses`, `responses_to_responses` and `messages_to_chat`;
//! kinds `request_3k` (the Codex turn), `request_claude_code` (the Claude
//! Code-like request, for Messages clients, and for Responses clients the
//! Responses request it becomes) and `stream_500`; concurrencies 1, 8 and
//! 32. Each
//! case's request is sent five ways (see [`requests::overhead_cases`]):
//! `direct` to the demo's own endpoint for the client's API, `upstream`
//! (the translated request straight to the demo), `passthrough` (the
//! translated request through the proxy, which forwards it untranslated:
//! the limit a translating proxy is compared to) and `translated`.
//!
//! A `minimal` route sends the upstream request through the smallest
//! reverse proxy hyper makes (the `minimal-proxy` binary beside this one):
//! the limit a proxy built on hyper is compared to. With `--litellm`, a
//! route sends the client's request through the LiteLLM proxy
//! ([`litellm`]), translating the same way; with `--gateway NAME=CMD`,
//! through any other gateway ([`gateway`]).
//!
//! Runs alternate: every round runs every case's routes back to back,
//! starting each round one route further along, and the comparisons are
//! taken within a round. Alongside its latencies, each run through the
//! proxy reports the proxy process's CPU time per request. The Messages
//! clients' `translated` route is also compared with the Responses
//! clients' of the same kind and concurrency ("ingress against ingress"):
//! the same conversation in each client's API.
//!
//! `--store` measures the store path instead ([`stored::store_cases`]):
//! the default memory store against a second proxy started with `--store
//! none`. `--pin` runs the proxies and gateways on CPU 1 (`taskset -c 1`)
//! and the bench, its load and the demo, on CPU 0, so that they do not take
//! each other's core.

mod child;
mod depth;
mod frames;
mod gateway;
mod litellm;
mod load;
mod requests;
mod stored;
mod summary;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use wirebridge_demo::{Api, DemoConfig, DemoServer};

use crate::fail;
use child::{CpuClock, Proxy, ProxySpec};
pub use depth::DEFAULT_DEPTHS;
use gateway::Gateway;
pub use gateway::GatewaySpec;
use litellm::LiteLlm;
use load::{HttpClient, Pace, Target};
use requests::{Case, Direction, Route, Via};
use summary::{Comparison, RouteMedians, Run};

/// Unmeasured load before each run.
const WARM_UP: Duration = Duration::from_millis(300);

/// How the proxy benchmark runs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Print one JSON object instead of tables.
    pub json: bool,
    /// Only cases whose name contains this.
    pub filter: Option<String>,
    /// Rounds of every case and route.
    pub rounds: usize,
    /// The measured span of each run.
    pub run_time: Duration,
    /// Measure the store path instead (see [`stored::store_cases`]).
    pub store: bool,
    /// Measure a stored conversation at these depths instead (see
    /// [`depth`]).
    pub depths: Option<Vec<usize>>,
    /// The proxy's `RUST_LOG`.
    pub log: String,
    /// The `litellm` command, to measure the LiteLLM proxy beside it.
    pub litellm: Option<PathBuf>,
    /// More arguments for the proxy's `serve` command line.
    pub args: Vec<String>,
    /// Other gateways, measured beside it (`--gateway`).
    pub gateways: Vec<GatewaySpec>,
    /// The minimal hyper proxy binary.
    pub minimal: PathBuf,
    /// Run the proxies and gateways on one CPU and the bench on the other
    /// (`taskset`).
    pub pin: bool,
}

#[derive(Serialize)]
struct Report {
    /// The arguments added to the proxy's command line.
    proxy_args: Vec<String>,
    clock_ticks_per_second: u64,
    rounds: usize,
    run_time_s: f64,
    runs: Vec<Run>,
    medians: Vec<RouteMedians>,
    comparisons: Vec<Comparison>,
    /// The Messages ingress against the Responses ingress.
    ingress: Vec<Comparison>,
}

/// Runs the proxy benchmark: the requests come from the fixtures in
/// `shared`, and the proxy is `binary`.
pub fn run(settings: &Settings, shared: &Path, binary: &Path) -> ExitCode {
    if let Some(depths) = &settings.depths {
        return run_depths(settings, depths, binary);
    }
    let cases = match settings.store {
        true => stored::store_cases(shared),
        false => requests::overhead_cases(shared),
    };
    let mut cases = match cases {
        Ok(cases) => cases,
        Err(e) => return fail(&e),
    };
    if let Some(filter) = &settings.filter {
        cases.retain(|case| case.name.contains(filter.as_str()));
    }
    for case in &mut cases {
        let Some(translated) = case.routes.iter().find(|r| r.name == "translated").cloned() else {
            continue;
        };
        if !case.direction.has_peers() {
            continue;
        }
        if settings.litellm.is_some() {
            case.routes.push(Route {
                name: "litellm",
                via: Via::LiteLlm,
                ..translated.clone()
            });
        }
        for (n, spec) in settings.gateways.iter().enumerate() {
            case.routes.push(Route {
                name: spec.name,
                via: Via::Gateway(n),
                ..translated.clone()
            });
        }
    }
    let clock = match CpuClock::from_system() {
        Ok(clock) => clock,
        Err(e) => return fail(&e),
    };
    // Before the runtime starts its threads, which inherit it.
    if settings.pin {
        if let Err(e) = child::pin_self(child::BENCH_CPU) {
            return fail(&e);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the runtime starts");
    match runtime.block_on(measure(&cases, binary, settings, clock)) {
        Ok(report) if settings.json => {
            let json = serde_json::to_string(&report).expect("reports serialize");
            println!("{json}");
            ExitCode::SUCCESS
        }
        Ok(report) => {
            summary::print_summary(
                &report.medians,
                &report.comparisons,
                &report.ingress,
                settings.store,
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// Runs the depth benchmark ([`depth`]).
fn run_depths(settings: &Settings, depths: &[usize], binary: &Path) -> ExitCode {
    if depths.contains(&0) {
        return fail("--depths start at 1 (a turn that continues nothing)");
    }
    let clock = match CpuClock::from_system() {
        Ok(clock) => clock,
        Err(e) => return fail(&e),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the runtime starts");
    let measured = runtime.block_on(depth::measure(
        binary,
        depths,
        settings.run_time,
        &settings.log,
        &clock,
    ));
    match measured {
        Ok(rows) if settings.json => {
            let json = serde_json::to_string(&rows).expect("reports serialize");
            println!("{json}");
            ExitCode::SUCCESS
        }
        Ok(rows) => {
            depth::print(&rows);
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

async fn measure(
    cases: &[Case],
    binary: &Path,
    settings: &Settings,
    clock: CpuClock,
) -> Result<Report, String> {
    let demo = DemoServer::try_start(DemoConfig::new().api(Api::All))
        .await
        .map_err(|e| format!("cannot start the demo upstream: {e}"))?;
    let demo_url = demo.url();
    let pin = settings.pin.then_some(child::PROXY_CPU);
    let mut proxies: Vec<(Direction, Proxy)> = Vec::new();
    // The stateful engine's `passthrough` is the Chat clients' proxy.
    let forwards = cases
        .iter()
        .any(|case| case.routes.iter().any(|r| r.via == Via::Forwarding));
    for direction in Direction::ALL {
        let used = cases.iter().any(|case| case.direction == direction);
        if used || (forwards && direction == Direction::ChatToResponses) {
            let spec = ProxySpec {
                upstream_api: direction.upstream_api(),
                profile: direction.profile(),
                log: &settings.log,
                extra: &settings.args,
                pin,
            };
            proxies.push((direction, Proxy::start(binary, &demo_url, &spec)?));
        }
    }
    // The store cases' `store_none`: the same proxy but for the store.
    let store_none = match cases
        .iter()
        .find(|case| case.routes.iter().any(|r| r.via == Via::StoreNone))
    {
        Some(case) => {
            let mut extra = settings.args.clone();
            extra.extend(["--store".to_owned(), "none".to_owned()]);
            let spec = ProxySpec {
                upstream_api: case.direction.upstream_api(),
                profile: case.direction.profile(),
                log: &settings.log,
                extra: &extra,
                pin,
            };
            Some(Proxy::start(binary, &demo_url, &spec)?)
        }
        None => None,
    };
    let client: HttpClient = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(64)
        .build_http();
    let mut litellms: Vec<(Direction, LiteLlm)> = Vec::new();
    if let Some(executable) = &settings.litellm {
        for &(direction, _) in proxies.iter().filter(|(d, _)| d.has_peers()) {
            let litellm = LiteLlm::start(executable, &demo_url, direction, &client).await?;
            litellms.push((direction, litellm));
        }
    }
    let minimal = Gateway::start(
        &GatewaySpec::minimal(&settings.minimal),
        &demo_url,
        Direction::ResponsesToChat,
        pin,
    )
    .await
    .map_err(|e| format!("{e} (build it with `cargo build --release -p wirebridge-bench`)"))?;
    let mut gateways: Vec<(Direction, usize, Gateway)> = Vec::new();
    for &(direction, _) in proxies.iter().filter(|(d, _)| d.has_peers()) {
        for (n, spec) in settings.gateways.iter().enumerate() {
            gateways.push((
                direction,
                n,
                Gateway::start(spec, &demo_url, direction, pin).await?,
            ));
        }
    }
    let pace = Pace {
        warm_up: WARM_UP,
        run_time: settings.run_time,
    };
    let rounds = settings.rounds.max(1);
    if !settings.json {
        summary::print_run_header();
    }
    let mut runs = Vec::new();
    for round in 0..rounds {
        for case in cases {
            let proxy = proxies
                .iter()
                .find(|(direction, _)| *direction == case.direction)
                .map(|(_, proxy)| proxy)
                .expect("a proxy per direction measured");
            // Each round starts one route further along, so that no route
            // always runs first, or right after the same one.
            let count = case.routes.len();
            for route in (0..count).map(|at| &case.routes[(at + round) % count]) {
                let (base, cpu) = match route.via {
                    Via::Demo => (&demo_url, None),
                    Via::Proxy => (&proxy.url, Some((proxy.pid(), &clock))),
                    Via::Forwarding => {
                        let forwarding = proxies
                            .iter()
                            .find(|(direction, _)| *direction == Direction::ChatToResponses)
                            .map(|(_, proxy)| proxy)
                            .expect("the forwarding proxy started");
                        (&forwarding.url, Some((forwarding.pid(), &clock)))
                    }
                    Via::LiteLlm => {
                        let litellm = litellms
                            .iter()
                            .find(|(direction, _)| *direction == case.direction)
                            .map(|(_, litellm)| litellm)
                            .expect("a LiteLLM per direction measured");
                        (&litellm.url, Some((litellm.pid(), &clock)))
                    }
                    Via::Minimal => (&minimal.url, Some((minimal.pid(), &clock))),
                    Via::StoreNone => {
                        let proxy = store_none.as_ref().expect("the --store none proxy started");
                        (&proxy.url, Some((proxy.pid(), &clock)))
                    }
                    Via::Gateway(n) => {
                        let gateway = gateways
                            .iter()
                            .find(|(direction, at, _)| *direction == case.direction && *at == n)
                            .map(|(_, _, gateway)| gateway)
                            .expect("each gateway per direction measured");
                        (&gateway.url, Some((gateway.pid(), &clock)))
                    }
                };
                let target = Target {
                    url: format!("{base}{}", route.path),
                    body: &route.body,
                    credential: route.credential,
                    headers: route.headers,
                    concurrency: case.concurrency,
                    streaming: case.streaming,
                };
                let measured = load::load(&client, &target, pace, cpu).await?;
                let run = Run {
                    round,
                    name: case.name.clone(),
                    route: route.name,
                    concurrency: case.concurrency,
                    streaming: case.streaming,
                    request_bytes: case.request_bytes,
                    measured,
                };
                if !settings.json {
                    summary::print_run(&run);
                }
                runs.push(run);
            }
        }
    }
    drop(proxies);
    drop(store_none);
    drop(litellms);
    drop(gateways);
    drop(minimal);
    let _ = demo.shutdown().await;
    Ok(Report {
        proxy_args: settings.args.clone(),
        clock_ticks_per_second: clock.ticks_per_second,
        rounds,
        run_time_s: settings.run_time.as_secs_f64(),
        medians: summary::medians(cases, &runs),
        comparisons: summary::comparisons(cases, &runs),
        ingress: summary::ingress_comparisons(cases, &runs),
        runs,
    })
}
