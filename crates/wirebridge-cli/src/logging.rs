//! Log setup, and the one line logged per exchange.

mod fields;
mod writer;

use std::io::IsTerminal;
use std::time::Duration;

use wirebridge_tower::observer::Transport;
use wirebridge_tower::Exchange;

use crate::config::LogFormat;
pub use writer::Flush;
use writer::QueuedWriter;

/// Logs to stderr (stdout carries the `listening on` line), filtered by
/// `RUST_LOG` (default `info`), from a thread of its own ([`writer`]).
/// Pretty lines are coloured only on a terminal: in a file or a log
/// collector, escape codes are noise, and their fields are written plainly
/// ([`fields`]). Keep the returned guard until the
/// end: dropping it writes what is still queued.
pub fn init(format: LogFormat) -> Flush {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let (writer, flush) = QueuedWriter::spawn(std::io::stderr());
    let terminal = std::io::stderr().is_terminal();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(terminal)
        .with_writer(writer);
    let result = match format {
        LogFormat::Pretty if terminal => builder.try_init(),
        LogFormat::Pretty => builder.fmt_fields(fields::PlainFields).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    // A second init (in tests) keeps the first subscriber.
    let _ = result;
    flush
}

/// One info line per translated exchange: never bodies, never credentials.
/// Durations are whole microseconds; `ttfb_us` and `trace_id` are left out
/// when there is none.
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
        ttfb_us = e.time_to_first_byte.map(micros),
        total_us = micros(e.total_time),
        translation_us = micros(e.translation_time),
        dropped = %e.losses.paths(),
        trace_id = e.trace_id.map(display),
        via = e.via.map(|v| v.as_str()),
        replica = e.replica,
        "exchange"
    );
}

/// Whole microseconds, rounded to the nearest.
fn micros(d: Duration) -> u64 {
    let nanos = d.as_nanos() + 500;
    u64::try_from(nanos / 1000).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_to_the_nearest_microsecond() {
        assert_eq!(micros(Duration::from_nanos(1_499)), 1);
        assert_eq!(micros(Duration::from_nanos(1_500)), 2);
        assert_eq!(micros(Duration::from_millis(3)), 3_000);
        assert_eq!(micros(Duration::ZERO), 0);
    }
}
