//! Log setup, and the one line logged per exchange.

use wirebridge_tower::observer::Transport;
use wirebridge_tower::Exchange;

use crate::config::LogFormat;

/// Logs to stderr (stdout carries the `listening on` line), filtered by
/// `RUST_LOG` (default `info`).
pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = match format {
        LogFormat::Pretty => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    // A second init (in tests) keeps the first subscriber.
    let _ = result;
}

/// One info line per translated exchange: never bodies, never credentials.
pub fn log_exchange(e: &Exchange) {
    let usage = e.reply.usage.unwrap_or_default();
    // A WebSocket turn is a `response.create` message on its connection.
    let method = match e.transport {
        Transport::Http => "POST",
        Transport::WebSocket => "response.create",
    };
    tracing::info!(
        method,
        transport = e.transport.as_str(),
        path = %e.path,
        direction = e.direction.as_str(),
        model = %e.model,
        stream = e.stream,
        status = e.status,
        outcome = e.reply.outcome.as_deref().unwrap_or("-"),
        input_tokens = usage.input,
        output_tokens = usage.output,
        tool_calls = e.reply.tool_calls.len(),
        ttfb_ms = e.time_to_first_byte.map(|d| d.as_secs_f64() * 1e3).unwrap_or(-1.0),
        total_ms = e.total_time.as_secs_f64() * 1e3,
        translation_us = e.translation_time.as_secs_f64() * 1e6,
        dropped = %e.losses.paths(),
        "exchange"
    );
}
