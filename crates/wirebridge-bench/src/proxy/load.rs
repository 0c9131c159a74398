//! The load: clients sending one request back to back, its latencies, and
//! the proxy's CPU time over the same span.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use serde::Serialize;

use super::child::{process_context_switches, CpuClock};
use super::frames::FrameClock;
use super::requests::BENCH_CREDENTIAL;

/// The benchmark's HTTP client.
pub(super) type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// How a load runs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pace {
    /// Unmeasured, before the measured span.
    pub(super) warm_up: Duration,
    /// The measured span.
    pub(super) run_time: Duration,
}

/// What to send, and how many clients send it.
pub(super) struct Target<'a> {
    pub(super) url: String,
    pub(super) body: &'a Bytes,
    pub(super) credential: bool,
    /// Sent besides the content type.
    pub(super) headers: &'static [(&'static str, &'static str)],
    pub(super) concurrency: usize,
    /// The response is a stream: its frames are counted and timed.
    pub(super) streaming: bool,
}

/// What one load measured.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Measured {
    pub(super) requests: usize,
    pub(super) requests_per_s: f64,
    pub(super) p50_us: f64,
    pub(super) p99_us: f64,
    pub(super) ttfb_p50_us: f64,
    pub(super) ttfb_p99_us: f64,
    /// The CPU time per completed request of the proxy the route goes
    /// through, for routes through one.
    pub(super) cpu_us_per_request: Option<f64>,
    /// The proxy's context switches per completed request (its threads'
    /// sleeps and preemptions: a wake-up of an idle thread is one), for
    /// routes through it.
    pub(super) switches_per_request: Option<f64>,
    /// For a stream, its frames ([`FrameClock`]).
    #[serde(flatten)]
    pub(super) stream: Option<StreamMeasured>,
}

/// What one load of streams measured of their frames.
#[derive(Debug, Clone, Serialize)]
pub(super) struct StreamMeasured {
    /// Server-sent events a response carried, on average.
    pub(super) frames_per_response: f64,
    /// The time from one event's arrival to the next's, over every gap of
    /// every stream: the mean, the median and the 99th percentile.
    pub(super) gap_mean_us: f64,
    pub(super) gap_p50_us: f64,
    pub(super) gap_p99_us: f64,
    /// The proxy's CPU time per event the client received.
    pub(super) cpu_us_per_frame: Option<f64>,
}

/// One request's timings.
struct Timing {
    total: Duration,
    /// To the first byte of the body.
    first_byte: Duration,
    /// Server-sent events in the body.
    frames: usize,
}

/// `concurrency` clients sending the body back to back: for the warm-up,
/// then for the measured span, reading the CPU time of the proxy the route
/// goes through (`measured_process`, its pid) at the start and at the end of that span. Every request
/// of the warm-up has been answered when the span starts, and every request
/// of the span when it ends, so the CPU time read is the span's requests'
/// (and whatever the proxy does when idle, which is nothing measurable).
pub(super) async fn load(
    client: &HttpClient,
    target: &Target<'_>,
    pace: Pace,
    measured_process: Option<(u32, &CpuClock)>,
) -> Result<Measured, String> {
    let run_for = |time: Duration| {
        let tasks: Vec<_> = (0..target.concurrency)
            .map(|_| {
                let (client, url, body) = (client.clone(), target.url.clone(), target.body.clone());
                let (credential, headers) = (target.credential, target.headers);
                tokio::spawn(async move {
                    let (mut timings, mut gaps) = (Vec::new(), Vec::new());
                    let start = Instant::now();
                    while start.elapsed() < time {
                        let sent = Sent {
                            body: body.clone(),
                            credential,
                            headers,
                        };
                        let sent = exchange(&client, &url, sent, &mut gaps);
                        timings.push(sent.await?);
                    }
                    Ok::<_, String>((timings, gaps))
                })
            })
            .collect();
        async move {
            let (mut timings, mut gaps) = (Vec::new(), Vec::new());
            for task in tasks {
                let (task_timings, task_gaps) = task.await.map_err(|e| e.to_string())??;
                timings.extend(task_timings);
                gaps.extend(task_gaps);
            }
            Ok::<_, String>((timings, gaps))
        }
    };
    let cpu = || {
        measured_process
            .map(|(pid, clock)| clock.process_time(pid))
            .transpose()
    };
    let switches = || {
        measured_process
            .map(|(pid, _)| process_context_switches(pid))
            .transpose()
    };
    run_for(pace.warm_up).await?;
    let (cpu_before, switches_before) = (cpu()?, switches()?);
    let start = Instant::now();
    let (timings, mut gaps) = run_for(pace.run_time).await?;
    let elapsed = start.elapsed();
    let (cpu_after, switches_after) = (cpu()?, switches()?);
    let mut totals: Vec<f64> = timings.iter().map(|t| micros(t.total)).collect();
    let mut ttfbs: Vec<f64> = timings.iter().map(|t| micros(t.first_byte)).collect();
    let requests = timings.len();
    let cpu_us_per_request = cpu_before
        .zip(cpu_after)
        .map(|(before, after)| micros(after - before) / requests.max(1) as f64);
    let stream = target.streaming.then(|| {
        let frames =
            timings.iter().map(|t| t.frames).sum::<usize>() as f64 / requests.max(1) as f64;
        StreamMeasured {
            frames_per_response: frames,
            gap_mean_us: gaps.iter().sum::<f64>() / gaps.len().max(1) as f64,
            gap_p50_us: percentile(&mut gaps, 0.50),
            gap_p99_us: percentile(&mut gaps, 0.99),
            cpu_us_per_frame: cpu_us_per_request
                .filter(|_| frames > 0.0)
                .map(|cpu| cpu / frames),
        }
    });
    Ok(Measured {
        requests,
        requests_per_s: requests as f64 / elapsed.as_secs_f64(),
        p50_us: percentile(&mut totals, 0.50),
        p99_us: percentile(&mut totals, 0.99),
        ttfb_p50_us: percentile(&mut ttfbs, 0.50),
        ttfb_p99_us: percentile(&mut ttfbs, 0.99),
        cpu_us_per_request,
        switches_per_request: switches_before
            .zip(switches_after)
            .map(|(before, after)| after.saturating_sub(before) as f64 / requests.max(1) as f64),
        stream,
    })
}

/// What one request sends.
struct Sent {
    body: Bytes,
    /// With [`BENCH_CREDENTIAL`].
    credential: bool,
    headers: &'static [(&'static str, &'static str)],
}

/// One request, read to the end, the gaps between its frames pushed onto
/// `gaps`.
async fn exchange(
    client: &HttpClient,
    url: &str,
    sent: Sent,
    gaps: &mut Vec<f64>,
) -> Result<Timing, String> {
    let mut request = http::Request::post(url).header("content-type", "application/json");
    if sent.credential {
        request = request.header("authorization", BENCH_CREDENTIAL);
    }
    for &(name, value) in sent.headers {
        request = request.header(name, value);
    }
    let request = request.body(Full::new(sent.body)).expect("a valid request");
    let start = Instant::now();
    let response = client.request(request).await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        let status = response.status();
        let body = response.into_body().collect().await.map(|b| b.to_bytes());
        let body = body.unwrap_or_default();
        return Err(format!(
            "{url} answered {status}: {}",
            String::from_utf8_lossy(&body[..body.len().min(300)])
        ));
    }
    let mut body = response.into_body();
    let mut first = None;
    let mut frames = FrameClock::default();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| e.to_string())?;
        let Some(data) = frame.data_ref().filter(|d| !d.is_empty()) else {
            continue;
        };
        let now = Instant::now();
        first.get_or_insert(now - start);
        frames.read(data, now, gaps);
    }
    let total = start.elapsed();
    Ok(Timing {
        total,
        first_byte: first.unwrap_or(total),
        frames: frames.frames(),
    })
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
