//! What the rounds add up to: each route's medians, and each proxied
//! route against the one it is compared to, round by round, as the median
//! and range of the ratios.

use serde::Serialize;

use super::load::{Measured, StreamMeasured};
use super::requests::{Case, Direction, Via};

/// One measured run.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Run {
    pub(super) round: usize,
    pub(super) name: String,
    pub(super) route: &'static str,
    pub(super) concurrency: usize,
    pub(super) streaming: bool,
    pub(super) request_bytes: usize,
    #[serde(flatten)]
    pub(super) measured: Measured,
}

/// A route's medians over the rounds.
#[derive(Debug, Serialize)]
pub(super) struct RouteMedians {
    pub(super) name: String,
    pub(super) route: &'static str,
    pub(super) rounds: usize,
    pub(super) requests_per_s: f64,
    pub(super) p50_us: f64,
    pub(super) p99_us: f64,
    pub(super) ttfb_p50_us: f64,
    pub(super) ttfb_p99_us: f64,
    pub(super) cpu_us_per_request: Option<f64>,
    /// CPU per KiB of the client's request.
    pub(super) cpu_us_per_kib: Option<f64>,
    /// For a stream, the medians of its frames' figures.
    #[serde(flatten)]
    pub(super) stream: Option<StreamMeasured>,
}

/// The median of values taken once per round, and their range.
#[derive(Debug, Clone, Copy, Serialize)]
pub(super) struct Spread {
    pub(super) median: f64,
    pub(super) min: f64,
    pub(super) max: f64,
}

impl Spread {
    fn of(mut values: Vec<f64>) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        Some(Self {
            median: median(&values),
            min: values[0],
            max: values[values.len() - 1],
        })
    }
}

/// A proxied route against an earlier one of the same case (`translated`
/// against `passthrough`), each ratio or difference taken within a round,
/// between runs taken back to back; or (`against_case`) against a route of
/// another case of the same round.
#[derive(Debug, Serialize)]
pub(super) struct Comparison {
    pub(super) name: String,
    pub(super) route: &'static str,
    /// The case of `against`, when not `name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) against_case: Option<String>,
    pub(super) against: &'static str,
    /// Proxy CPU per request, route ÷ against.
    pub(super) cpu_ratio: Option<Spread>,
    /// Requests per second, route ÷ against.
    pub(super) throughput_ratio: Option<Spread>,
    /// Microseconds added to the p50, p99 and p50 time to first byte.
    pub(super) added_p50_us: Option<Spread>,
    pub(super) added_p99_us: Option<Spread>,
    pub(super) added_ttfb_p50_us: Option<Spread>,
    /// For a stream: microseconds added to the mean and the p99 gap
    /// between frames, and the CPU per frame, route ÷ against.
    pub(super) added_gap_mean_us: Option<Spread>,
    pub(super) added_gap_p99_us: Option<Spread>,
    pub(super) cpu_per_frame_ratio: Option<Spread>,
}

/// Each route's medians, in the cases' order.
pub(super) fn medians(cases: &[Case], runs: &[Run]) -> Vec<RouteMedians> {
    let mut out = Vec::new();
    for case in cases {
        for route in &case.routes {
            let of: Vec<&Measured> = runs
                .iter()
                .filter(|r| r.name == case.name && r.route == route.name)
                .map(|r| &r.measured)
                .collect();
            if of.is_empty() {
                continue;
            }
            let m = |f: fn(&Measured) -> f64| median_of(of.iter().map(|m| f(m)).collect());
            let cpu: Vec<f64> = of.iter().filter_map(|m| m.cpu_us_per_request).collect();
            let cpu = (!cpu.is_empty()).then(|| median_of(cpu));
            let streams: Vec<&StreamMeasured> =
                of.iter().filter_map(|m| m.stream.as_ref()).collect();
            let stream = (!streams.is_empty()).then(|| {
                let m = |f: fn(&StreamMeasured) -> f64| {
                    median_of(streams.iter().map(|s| f(s)).collect())
                };
                let cpu: Vec<f64> = streams.iter().filter_map(|s| s.cpu_us_per_frame).collect();
                StreamMeasured {
                    frames_per_response: m(|s| s.frames_per_response),
                    gap_mean_us: m(|s| s.gap_mean_us),
                    gap_p50_us: m(|s| s.gap_p50_us),
                    gap_p99_us: m(|s| s.gap_p99_us),
                    cpu_us_per_frame: (!cpu.is_empty()).then(|| median_of(cpu)),
                }
            });
            out.push(RouteMedians {
                name: case.name.clone(),
                route: route.name,
                rounds: of.len(),
                requests_per_s: m(|m| m.requests_per_s),
                p50_us: m(|m| m.p50_us),
                p99_us: m(|m| m.p99_us),
                ttfb_p50_us: m(|m| m.ttfb_p50_us),
                ttfb_p99_us: m(|m| m.ttfb_p99_us),
                cpu_us_per_request: cpu,
                cpu_us_per_kib: cpu.map(|cpu| cpu / (case.request_bytes as f64 / 1024.0)),
                stream,
            });
        }
    }
    out
}

/// Every proxied route against each proxied route listed before it in its
/// case: `passthrough` against `minimal`, `translated` against both (with
/// `--store`, `stored` against all three; with `--litellm` and
/// `--gateway`, each such route against every route before it).
pub(super) fn comparisons(cases: &[Case], runs: &[Run]) -> Vec<Comparison> {
    let mut out = Vec::new();
    for case in cases {
        let proxied: Vec<&'static str> = case
            .routes
            .iter()
            .filter(|r| r.via != Via::Demo)
            .map(|r| r.name)
            .collect();
        for (at, &route) in proxied.iter().enumerate() {
            for &against in &proxied[..at] {
                out.push(compare((&case.name, route), (&case.name, against), runs));
            }
        }
    }
    out
}

/// The Messages ingress against the Responses ingress, over the same Chat
/// upstream: each `messages_to_chat` case's `translated` route against the
/// `responses_to_chat` case of the same kind and concurrency, round by
/// round (the two run in the same round, though not back to back).
pub(super) fn ingress_comparisons(cases: &[Case], runs: &[Run]) -> Vec<Comparison> {
    let ingress = Direction::MessagesToChat.as_str();
    let peer = Direction::ResponsesToChat.as_str();
    let mut out = Vec::new();
    for case in cases
        .iter()
        .filter(|c| c.direction == Direction::MessagesToChat)
    {
        let against = case.name.replacen(ingress, peer, 1);
        if cases.iter().any(|c| c.name == against) {
            let mut comparison =
                compare((&case.name, "translated"), (&against, "translated"), runs);
            comparison.against_case = Some(against);
            out.push(comparison);
        }
    }
    out
}

/// `route` of the case named `name` against `against` of the case named
/// `against_name`, round by round.
fn compare(
    (name, route): (&str, &'static str),
    (against_name, against): (&str, &'static str),
    runs: &[Run],
) -> Comparison {
    let of = |name: &str, route: &str, round: usize| {
        runs.iter()
            .find(|r| r.name == name && r.route == route && r.round == round)
            .map(|r| &r.measured)
    };
    let rounds = runs.iter().map(|r| r.round + 1).max().unwrap_or(0);
    let pairs: Vec<(&Measured, &Measured)> = (0..rounds)
        .filter_map(|round| of(name, route, round).zip(of(against_name, against, round)))
        .collect();
    let spread = |f: &dyn Fn(&Measured, &Measured) -> Option<f64>| {
        Spread::of(pairs.iter().filter_map(|(a, b)| f(a, b)).collect())
    };
    Comparison {
        name: name.to_owned(),
        route,
        against_case: None,
        against,
        cpu_ratio: spread(&|a, b| Some(a.cpu_us_per_request? / b.cpu_us_per_request?)),
        throughput_ratio: spread(&|a, b| Some(a.requests_per_s / b.requests_per_s)),
        added_p50_us: spread(&|a, b| Some(a.p50_us - b.p50_us)),
        added_p99_us: spread(&|a, b| Some(a.p99_us - b.p99_us)),
        added_ttfb_p50_us: spread(&|a, b| Some(a.ttfb_p50_us - b.ttfb_p50_us)),
        added_gap_mean_us: spread(&|a, b| {
            Some(a.stream.as_ref()?.gap_mean_us - b.stream.as_ref()?.gap_mean_us)
        }),
        added_gap_p99_us: spread(&|a, b| {
            Some(a.stream.as_ref()?.gap_p99_us - b.stream.as_ref()?.gap_p99_us)
        }),
        cpu_per_frame_ratio: spread(&|a, b| {
            Some(a.stream.as_ref()?.cpu_us_per_frame? / b.stream.as_ref()?.cpu_us_per_frame?)
        }),
    }
}

fn median_of(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    median(&values)
}

/// The median of sorted values.
fn median(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The header of the run lines.
pub(super) fn print_run_header() {
    println!(
        "{:<5} {:<36} {:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "round",
        "case",
        "route",
        "req/s",
        "p50 us",
        "p99 us",
        "ttfb p50",
        "ttfb p99",
        "cpu us/r",
        "cs/r"
    );
}

/// One run, as it is measured.
pub(super) fn print_run(run: &Run) {
    let m = &run.measured;
    println!(
        "{:<5} {:<36} {:<11} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9} {:>9}",
        run.round + 1,
        run.name,
        run.route,
        m.requests_per_s,
        m.p50_us,
        m.p99_us,
        m.ttfb_p50_us,
        m.ttfb_p99_us,
        cpu_text(m.cpu_us_per_request, 1),
        cpu_text(m.switches_per_request, 1)
    );
}

/// The medians, then the comparisons (and those of one ingress against
/// another); `per_kib` adds the proxy's CPU per KiB of request, for cases
/// whose cost is the request's.
pub(super) fn print_summary(
    medians: &[RouteMedians],
    comparisons: &[Comparison],
    ingress: &[Comparison],
    per_kib: bool,
) {
    println!();
    println!(
        "medians of {} rounds",
        medians.iter().map(|m| m.rounds).max().unwrap_or(0)
    );
    println!(
        "{:<36} {:<11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "case",
        "route",
        "req/s",
        "p50 us",
        "p99 us",
        "ttfb p50",
        "cpu us/r",
        if per_kib { "cpu us/KiB" } else { "" }
    );
    for m in medians {
        println!(
            "{:<36} {:<11} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9} {:>10}",
            m.name,
            m.route,
            m.requests_per_s,
            m.p50_us,
            m.p99_us,
            m.ttfb_p50_us,
            cpu_text(m.cpu_us_per_request, 1),
            match per_kib {
                true => cpu_text(m.cpu_us_per_kib, 2),
                false => String::new(),
            }
        );
    }
    println!();
    println!("round by round: median [min, max]");
    println!(
        "{:<36} {:<24} {:>21} {:>21} {:>24}",
        "case", "route / against", "cpu per request", "throughput", "added p99 us"
    );
    for c in comparisons {
        println!(
            "{:<36} {:<24} {:>21} {:>21} {:>24}",
            c.name,
            format!("{} / {}", c.route, c.against),
            spread_text(c.cpu_ratio, 2, "x"),
            spread_text(c.throughput_ratio, 2, "x"),
            spread_text(c.added_p99_us, 0, ""),
        );
    }
    print_ingress(ingress);
    print_streams(medians, comparisons);
}

/// One ingress's `translated` route against another's.
fn print_ingress(ingress: &[Comparison]) {
    if ingress.is_empty() {
        return;
    }
    println!();
    println!("ingress against ingress, translated, round by round: median [min, max]");
    println!(
        "{:<36} {:<36} {:>21} {:>21} {:>24}",
        "case", "against", "cpu per request", "throughput", "added p99 us"
    );
    for c in ingress {
        println!(
            "{:<36} {:<36} {:>21} {:>21} {:>24}",
            c.name,
            c.against_case.as_deref().unwrap_or(c.against),
            spread_text(c.cpu_ratio, 2, "x"),
            spread_text(c.throughput_ratio, 2, "x"),
            spread_text(c.added_p99_us, 0, ""),
        );
    }
}

/// The streams' frames: each route's medians, then the comparisons.
fn print_streams(medians: &[RouteMedians], comparisons: &[Comparison]) {
    if medians.iter().all(|m| m.stream.is_none()) {
        return;
    }
    println!();
    println!("streams: frames (server-sent events) as the client receives them, medians");
    println!(
        "{:<36} {:<11} {:>9} {:>11} {:>11} {:>11} {:>11}",
        "case", "route", "frames/r", "gap mean us", "gap p50 us", "gap p99 us", "cpu us/frame"
    );
    for m in medians {
        let Some(s) = &m.stream else { continue };
        println!(
            "{:<36} {:<11} {:>9.0} {:>11.2} {:>11.2} {:>11.1} {:>11}",
            m.name,
            m.route,
            s.frames_per_response,
            s.gap_mean_us,
            s.gap_p50_us,
            s.gap_p99_us,
            cpu_text(s.cpu_us_per_frame, 2)
        );
    }
    println!();
    println!("streams, round by round: median [min, max]");
    println!(
        "{:<36} {:<24} {:>24} {:>24} {:>24} {:>21}",
        "case",
        "route / against",
        "added ttfb p50 us",
        "added gap mean us",
        "added gap p99 us",
        "cpu per frame"
    );
    for c in comparisons.iter().filter(|c| c.added_gap_mean_us.is_some()) {
        println!(
            "{:<36} {:<24} {:>24} {:>24} {:>24} {:>21}",
            c.name,
            format!("{} / {}", c.route, c.against),
            spread_text(c.added_ttfb_p50_us, 0, ""),
            spread_text(c.added_gap_mean_us, 2, ""),
            spread_text(c.added_gap_p99_us, 1, ""),
            spread_text(c.cpu_per_frame_ratio, 2, "x"),
        );
    }
}

fn cpu_text(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

fn spread_text(spread: Option<Spread>, decimals: usize, unit: &str) -> String {
    match spread {
        Some(s) => format!(
            "{:.d$}{unit} [{:.d$}, {:.d$}]",
            s.median,
            s.min,
            s.max,
            d = decimals
        ),
        None => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::proxy::requests::Route;

    fn case(direction: Direction, name: &str) -> Case {
        let route = |name| Route {
            name,
            via: Via::Proxy,
            path: "/",
            body: Bytes::new(),
            credential: false,
            headers: &[],
        };
        Case {
            name: name.to_owned(),
            direction,
            streaming: false,
            concurrency: 8,
            request_bytes: 1,
            routes: vec![route("passthrough"), route("translated")],
        }
    }

    fn run(round: usize, name: &str, route: &'static str, cpu: f64) -> Run {
        Run {
            round,
            name: name.to_owned(),
            route,
            concurrency: 8,
            streaming: false,
            request_bytes: 1,
            measured: Measured {
                requests: 100,
                requests_per_s: 1000.0 / cpu,
                p50_us: cpu,
                p99_us: 2.0 * cpu,
                ttfb_p50_us: cpu,
                ttfb_p99_us: cpu,
                cpu_us_per_request: Some(cpu),
                switches_per_request: None,
                stream: None,
            },
        }
    }

    #[test]
    fn the_messages_ingress_is_compared_with_the_responses_ingress_round_by_round() {
        let (messages, responses) = (
            "messages_to_chat/request_claude_code/c8",
            "responses_to_chat/request_claude_code/c8",
        );
        let cases = [
            case(Direction::ResponsesToChat, responses),
            case(Direction::MessagesToChat, messages),
            // No Responses case of this kind: nothing to compare it with.
            case(Direction::MessagesToChat, "messages_to_chat/stream_500/c8"),
        ];
        let runs = [
            run(0, messages, "translated", 130.0),
            run(0, responses, "translated", 100.0),
            run(0, responses, "passthrough", 10.0),
            run(1, messages, "translated", 120.0),
            run(1, responses, "translated", 80.0),
            run(2, messages, "translated", 90.0),
            run(2, responses, "translated", 100.0),
        ];
        let ingress = ingress_comparisons(&cases, &runs);
        assert_eq!(ingress.len(), 1);
        let c = &ingress[0];
        assert_eq!(
            (c.name.as_str(), c.route, c.against),
            (messages, "translated", "translated")
        );
        assert_eq!(c.against_case.as_deref(), Some(responses));
        let cpu = c.cpu_ratio.expect("three rounds of ratios");
        assert_eq!((cpu.min, cpu.median, cpu.max), (0.9, 1.3, 1.5));
        let p99 = c.added_p99_us.unwrap();
        assert_eq!((p99.min, p99.median, p99.max), (-20.0, 60.0, 80.0));
    }
}
