//! What `GET /metrics` shows, in the OpenMetrics text format Prometheus
//! scrapes.
//!
//! Every label takes values from a short, known list, except `model`, which
//! takes the first [`max_models`](crate::config::MetricsSettings) names
//! seen and `other` for the rest ([`models`]): a client cannot grow the
//! number of series by naming models.

mod labels;
mod models;
mod open;
mod replicas;
mod store;

use std::sync::OnceLock;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use wirebridge_tower::observer::Direction;
use wirebridge_tower::{Budget, Exchange};

use labels::{
    endpoint, outcome, ExchangeLabels, ForwardedLabels, KindLabels, LossLabels, OperationLabels,
    StoreLabels, TimingLabels, TokenLabels,
};
use models::{ModelNames, TOKEN_SLOTS};

pub use open::{CountedBody, OpenGauge, Opened};
pub use store::MeteredStore;

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Whole exchanges and waits on the upstream: 0.5 ms to 5 min.
fn exchange_buckets() -> Histogram {
    Histogram::new([
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
        60.0, 120.0, 300.0,
    ])
}

/// Translation work: 5 µs to 50 ms.
fn translation_buckets() -> Histogram {
    Histogram::new([
        0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
        0.05,
    ])
}

/// Store operations: 50 µs to 5 s (past the longest sensible timeout).
fn store_buckets() -> Histogram {
    Histogram::new([
        0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
        1.0, 2.5, 5.0,
    ])
}

/// How many (direction, streamed or not) pairs the timing histograms have.
const TIMING_SLOTS: usize = 10;

/// The slot of a direction, from 0 to 4.
fn direction_slot(direction: Direction) -> usize {
    match direction {
        Direction::ResponsesToChat => 0,
        Direction::ChatToResponses => 1,
        Direction::ResponsesToResponses => 2,
        Direction::MessagesToResponses => 3,
        Direction::ResponsesToMessages => 4,
    }
}

/// The token kinds counted, in the order of their slots.
const TOKEN_KINDS: [&str; 4] = ["input", "output", "cached_input", "reasoning"];

const _: () = assert!(TOKEN_SLOTS == 5 * TOKEN_KINDS.len());
const _: () = assert!(TIMING_SLOTS == 5 * 2);

/// One series of a timing histogram, kept once looked up: a family's
/// lookup hashes its label set, and every exchange observes three.
#[derive(Default)]
struct TimingSeries([OnceLock<Histogram>; TIMING_SLOTS]);

impl TimingSeries {
    fn get(
        &self,
        family: &Histograms<TimingLabels>,
        direction: Direction,
        stream: bool,
    ) -> &Histogram {
        let slot = direction_slot(direction) * 2 + usize::from(stream);
        self.0[slot].get_or_init(|| {
            family.get_or_create_owned(&TimingLabels {
                direction: direction.as_str(),
                stream,
            })
        })
    }
}

/// The bridge's metrics: cheap to update from any task, rendered on scrape.
pub struct Metrics {
    registry: Registry,
    models: ModelNames,
    exchanges: Family<ExchangeLabels, Counter>,
    duration: Histograms<TimingLabels>,
    time_to_first_byte: Histograms<TimingLabels>,
    translation: Histograms<TimingLabels>,
    duration_series: TimingSeries,
    time_to_first_byte_series: TimingSeries,
    translation_series: TimingSeries,
    tokens: Family<TokenLabels, Counter>,
    losses: Family<LossLabels, Counter>,
    forwarded: Family<ForwardedLabels, Counter>,
    upstream_errors: Family<KindLabels, Counter>,
    budget_refusals: Family<KindLabels, Counter>,
    store_operations: Family<StoreLabels, Counter>,
    store_duration: Histograms<OperationLabels>,
    open_connections: Gauge,
    open_streams: Gauge,
    /// Each replica's series, when the upstream is several.
    replicas: Option<replicas::ReplicaSeries>,
}

impl Metrics {
    /// Fresh metrics, naming at most `max_models` models.
    pub fn new(max_models: usize) -> Self {
        let mut this = Self {
            models: ModelNames::new(max_models),
            exchanges: Family::default(),
            duration: Family::new_with_constructor(exchange_buckets),
            time_to_first_byte: Family::new_with_constructor(exchange_buckets),
            translation: Family::new_with_constructor(translation_buckets),
            duration_series: TimingSeries::default(),
            time_to_first_byte_series: TimingSeries::default(),
            translation_series: TimingSeries::default(),
            tokens: Family::default(),
            losses: Family::default(),
            forwarded: Family::default(),
            upstream_errors: Family::default(),
            budget_refusals: Family::default(),
            store_operations: Family::default(),
            store_duration: Family::new_with_constructor(store_buckets),
            open_connections: Gauge::default(),
            open_streams: Gauge::default(),
            replicas: None,
            registry: Registry::with_prefix("wirebridge"),
        };
        let registry = &mut this.registry;
        registry.register(
            "build",
            "The running version",
            Info::new(vec![("version", env!("CARGO_PKG_VERSION"))]),
        );
        registry.register(
            "exchanges",
            "Translated exchanges, when they end",
            this.exchanges.clone(),
        );
        registry.register_with_unit(
            "exchange_duration",
            "From the request to the end of the reply sent to the client",
            Unit::Seconds,
            this.duration.clone(),
        );
        registry.register_with_unit(
            "exchange_time_to_first_byte",
            "From the request to the first byte of the upstream's reply",
            Unit::Seconds,
            this.time_to_first_byte.clone(),
        );
        registry.register_with_unit(
            "exchange_translation",
            "Time spent translating an exchange, apart from waiting on either side",
            Unit::Seconds,
            this.translation.clone(),
        );
        registry.register(
            "tokens",
            "Tokens the upstream reported, by kind (input, output, cached input, reasoning)",
            this.tokens.clone(),
        );
        registry.register(
            "losses",
            "Fields that could not be translated, by kind",
            this.losses.clone(),
        );
        registry.register(
            "forwarded_requests",
            "Requests forwarded without translation, by status",
            this.forwarded.clone(),
        );
        registry.register(
            "upstream_errors",
            "Upstream failures: timeout, idle_timeout, redirect, connect, reset, closed, \
             failed, status_4xx, status_5xx",
            this.upstream_errors.clone(),
        );
        registry.register(
            "budget_refusals",
            "Requests and messages refused because a budget was reached: request_body, \
             upstream_reply, websocket_connections, websocket_queue, websocket_memory, \
             background_runs, resolved_input",
            this.budget_refusals.clone(),
        );
        // Every budget has its series from the start, at zero: an alert
        // on one needs no first refusal to exist.
        for budget in Budget::ALL {
            let labels = KindLabels {
                kind: budget.as_str(),
            };
            drop(this.budget_refusals.get_or_create(&labels));
        }
        registry.register(
            "store_operations",
            "Response store operations, by operation and result",
            this.store_operations.clone(),
        );
        registry.register_with_unit(
            "store_operation_duration",
            "How long response store operations took",
            Unit::Seconds,
            this.store_duration.clone(),
        );
        registry.register(
            "open_connections",
            "Client connections open, WebSocket connections included",
            this.open_connections.clone(),
        );
        registry.register(
            "open_streams",
            "Streamed replies being sent",
            this.open_streams.clone(),
        );
        this
    }

    /// Adds the series of `count` upstream replicas (each by its index).
    pub fn with_replicas(mut self, count: usize) -> Self {
        self.replicas = Some(replicas::ReplicaSeries::register(&mut self.registry, count));
        self
    }

    /// A request was sent to a replica.
    pub fn replica_started(&self, replica: usize) {
        if let Some(series) = &self.replicas {
            series.started(replica);
        }
    }

    /// A request to a replica is over.
    pub fn replica_finished(&self, replica: usize) {
        if let Some(series) = &self.replicas {
            series.finished(replica);
        }
    }

    /// A replica was ejected.
    pub fn replica_ejected(&self, replica: usize) {
        if let Some(series) = &self.replicas {
            series.ejected(replica);
        }
    }

    /// A replica over the bound on load was passed over.
    pub fn replica_spilled(&self, from: usize) {
        if let Some(series) = &self.replicas {
            series.spilled(from);
        }
    }

    /// A replica joined the set (an address its name resolved to).
    pub fn replica_joined(&self, replica: usize) {
        if let Some(series) = &self.replicas {
            series.in_set(replica, true);
        }
    }

    /// A replica left the set.
    pub fn replica_left(&self, replica: usize) {
        if let Some(series) = &self.replicas {
            series.in_set(replica, false);
        }
    }

    /// A request could not be sent to a replica and went to the next.
    pub fn replica_failed_over(&self, from: usize) {
        if let Some(series) = &self.replicas {
            series.failed_over(from);
        }
    }

    /// Counts a translated exchange that ended.
    pub fn exchange(&self, e: &Exchange) {
        let direction = e.direction.as_str();
        let model = self.models.label(&e.model);
        self.exchanges
            .get_or_create(&ExchangeLabels {
                endpoint: endpoint(&e.path),
                transport: e.transport.as_str(),
                direction,
                model: model.label().to_owned(),
                stream: e.stream,
                status: e.status,
                outcome: outcome(e.status, e.reply.outcome.as_deref()),
            })
            .inc();
        self.duration_series
            .get(&self.duration, e.direction, e.stream)
            .observe(e.total_time.as_secs_f64());
        if let Some(ttfb) = e.time_to_first_byte {
            self.time_to_first_byte_series
                .get(&self.time_to_first_byte, e.direction, e.stream)
                .observe(ttfb.as_secs_f64());
        }
        self.translation_series
            .get(&self.translation, e.direction, e.stream)
            .observe(e.translation_time.as_secs_f64());
        // The inner leg of a composed translation reports the same tokens
        // as the outer exchange: counted once, there.
        if let (Some(series), Some(replica), Some(usage)) = (
            &self.replicas,
            e.replica,
            e.reply.usage.filter(|_| e.via.is_none()),
        ) {
            series.tokens(replica, usage.input, usage.cached);
        }
        if let Some(usage) = e.reply.usage.filter(|_| e.via.is_none()) {
            let counts = [usage.input, usage.output, usage.cached, usage.reasoning];
            for (index, (kind, count)) in TOKEN_KINDS.into_iter().zip(counts).enumerate() {
                if count > 0 {
                    let slot = direction_slot(e.direction) * TOKEN_KINDS.len() + index;
                    let counter = model.tokens(slot, || {
                        self.tokens.get_or_create_owned(&TokenLabels {
                            direction,
                            model: model.label().to_owned(),
                            kind,
                        })
                    });
                    counter.inc_by(count);
                }
            }
        }
        for loss in e.losses.iter() {
            self.losses
                .get_or_create(&LossLabels {
                    direction,
                    kind: loss.kind.as_str(),
                })
                .inc();
        }
    }

    /// Counts a request forwarded as it was.
    pub fn forwarded(&self, status: u16) {
        self.forwarded
            .get_or_create(&ForwardedLabels { status })
            .inc();
    }

    /// Counts something refused because `budget` was reached.
    pub fn budget(&self, budget: Budget) {
        self.budget_refusals
            .get_or_create(&KindLabels {
                kind: budget.as_str(),
            })
            .inc();
    }

    /// Counts an upstream failure of `kind` (one of those in the metric's
    /// help text).
    pub fn upstream_error(&self, kind: &'static str) {
        self.upstream_errors
            .get_or_create(&KindLabels { kind })
            .inc();
    }

    /// Counts a store operation, its result and its time.
    pub fn store_operation(&self, operation: &'static str, result: &'static str, took: Duration) {
        self.store_operations
            .get_or_create(&StoreLabels { operation, result })
            .inc();
        self.store_duration
            .get_or_create(&OperationLabels { operation })
            .observe(took.as_secs_f64());
    }

    /// The gauge of open client connections.
    pub fn open_connections(&self) -> OpenGauge {
        OpenGauge::new(self.open_connections.clone())
    }

    /// The gauge of streamed replies being sent.
    pub fn open_streams(&self) -> OpenGauge {
        OpenGauge::new(self.open_streams.clone())
    }

    /// Everything, as OpenMetrics text.
    pub fn render(&self) -> String {
        let mut text = String::with_capacity(16 * 1024);
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String cannot fail");
        text
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
