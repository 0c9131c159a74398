//! Timing and reporting of one exchange.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wirebridge_convert::{LossReport, ReplySummary};

use crate::loss_warnings::{LossLevel, LossWarnings};
use crate::observer::{Budget, Direction, Exchange, HandedOn, Observer, Transport};
use crate::trace_context::{TraceId, TraceParent};

/// What is known about an exchange while it runs.
pub(crate) struct Tracker {
    observer: Arc<dyn Observer>,
    loss_warnings: Arc<LossWarnings>,
    direction: Direction,
    started: Instant,
    pub(crate) path: String,
    pub(crate) transport: Transport,
    pub(crate) model: String,
    pub(crate) stream: bool,
    pub(crate) status: u16,
    pub(crate) time_to_first_byte: Option<Duration>,
    pub(crate) translation_time: Duration,
    pub(crate) losses: LossReport,
    trace_id: Option<TraceId>,
    via: Option<Direction>,
    replica: Option<usize>,
    reported: bool,
}

impl Tracker {
    /// An exchange starting now, reported to `observer`, its losses warned
    /// about once per set in `loss_warnings` (the layer's).
    pub(crate) fn new(
        observer: &Arc<dyn Observer>,
        loss_warnings: &Arc<LossWarnings>,
        direction: Direction,
    ) -> Self {
        Self {
            observer: Arc::clone(observer),
            loss_warnings: Arc::clone(loss_warnings),
            direction,
            started: Instant::now(),
            path: String::new(),
            transport: Transport::Http,
            model: String::new(),
            stream: false,
            status: 0,
            time_to_first_byte: None,
            translation_time: Duration::ZERO,
            losses: LossReport::default(),
            trace_id: None,
            via: None,
            replica: None,
            reported: false,
        }
    }

    /// Which way the exchange is translated.
    pub(crate) fn direction(&self) -> Direction {
        self.direction
    }

    /// Notes what the client's request head says: its path and its trace.
    pub(crate) fn request(&mut self, parts: &http::request::Parts) {
        self.path = parts.uri.path().to_owned();
        self.trace_id = TraceParent::from_headers(&parts.headers).map(|t| t.trace_id());
        self.via = parts.extensions.get::<HandedOn>().map(|h| h.0);
    }

    /// Counts `elapsed` as translation time.
    pub(crate) fn add_translation_time(&mut self, elapsed: Duration) {
        self.translation_time += elapsed;
    }

    /// Runs `f`, counting its time as translation time.
    pub(crate) fn timed<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let result = f();
        self.translation_time += start.elapsed();
        result
    }

    /// The upstream's response head arrived, with `extensions`: which
    /// replica answered, where a [`Replicas`](crate::Replicas) set says.
    pub(crate) fn answered(&mut self, extensions: &http::Extensions) {
        self.first_byte();
        self.replica = extensions.get::<crate::ServedBy>().map(|served| served.0);
    }

    pub(crate) fn first_byte(&mut self) {
        if self.time_to_first_byte.is_none() {
            self.time_to_first_byte = Some(self.started.elapsed());
        }
    }

    /// Reports the exchange, once.
    pub(crate) fn report(&mut self, reply: ReplySummary) {
        if self.reported {
            return;
        }
        self.reported = true;
        if self.status >= 400 {
            if let Some(budget) = reply.outcome.as_deref().and_then(Budget::of_code) {
                self.observer.on_budget(budget);
            }
        }
        let exchange = Exchange {
            direction: self.direction,
            transport: self.transport,
            path: std::mem::take(&mut self.path),
            model: std::mem::take(&mut self.model),
            stream: self.stream,
            status: self.status,
            reply,
            time_to_first_byte: self.time_to_first_byte,
            total_time: self.started.elapsed(),
            translation_time: self.translation_time,
            losses: std::mem::take(&mut self.losses),
            trace_id: self.trace_id,
            via: self.via,
            replica: self.replica,
        };
        log(&exchange, &self.loss_warnings);
        self.observer.on_exchange(&exchange);
    }
}

/// The message of the loss warning, at whatever level it is logged.
const DROPPED: &str = "fields could not be translated and were dropped";

fn log(exchange: &Exchange, warnings: &LossWarnings) {
    if !exchange.losses.is_empty() {
        let level = warnings.level(exchange.losses.iter().map(|loss| loss.path.as_str()));
        let dropped = exchange.losses.paths();
        let (direction, model) = (exchange.direction.as_str(), &exchange.model);
        match level {
            LossLevel::Warn => {
                tracing::warn!(direction, %model, %dropped, "{DROPPED}")
            }
            LossLevel::WarnFull => {
                tracing::warn!(
                    "more distinct sets of fields were dropped than are remembered: new ones are \
                     logged at debug level from now on"
                );
                tracing::debug!(direction, %model, %dropped, "{DROPPED}");
            }
            LossLevel::Debug => {
                tracing::debug!(direction, %model, %dropped, "{DROPPED}")
            }
        }
    }
    tracing::debug!(
        direction = exchange.direction.as_str(),
        model = %exchange.model,
        status = exchange.status,
        outcome = exchange.reply.outcome.as_deref().unwrap_or("-"),
        total_ms = exchange.total_time.as_secs_f64() * 1e3,
        translation_us = exchange.translation_time.as_secs_f64() * 1e6,
        "exchange finished"
    );
}
