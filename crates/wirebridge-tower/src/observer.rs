//! A hook that receives one record per translated exchange.

use std::time::Duration;

use wirebridge_convert::{LossReport, ReplySummary};

use crate::trace_context::TraceId;

/// Which way an exchange was translated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// A Responses client, a Chat Completions upstream.
    ResponsesToChat,
    /// A Chat Completions client, a Responses upstream.
    ChatToResponses,
    /// A Responses client, a Responses upstream that keeps no state.
    ResponsesToResponses,
    /// A Responses client, an Anthropic Messages upstream.
    ResponsesToMessages,
    /// An Anthropic Messages client, a Responses upstream (the bridge's own
    /// Responses side, in `wirebridge serve`).
    MessagesToResponses,
}

impl Direction {
    /// A short name for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ResponsesToChat => "responses_to_chat",
            Direction::ChatToResponses => "chat_to_responses",
            Direction::ResponsesToResponses => "responses_to_responses",
            Direction::ResponsesToMessages => "responses_to_messages",
            Direction::MessagesToResponses => "messages_to_responses",
        }
    }
}

/// How the client's request arrived.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Transport {
    /// An HTTP request (`POST …/responses` or `POST …/chat/completions`).
    #[default]
    Http,
    /// A `response.create` message on a Responses WebSocket connection.
    WebSocket,
}

impl Transport {
    /// A short name for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::WebSocket => "websocket",
        }
    }
}

pub use wirebridge_convert::{TokenUsage, ToolCallSummary};

/// One translated exchange, reported when it ends.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// Which way it was translated.
    pub direction: Direction,
    /// How the request arrived.
    pub transport: Transport,
    /// The path the client requested (for a WebSocket turn, the path of
    /// its connection).
    pub path: String,
    /// The model the client asked for.
    pub model: String,
    /// Whether the reply was streamed.
    pub stream: bool,
    /// HTTP status sent to the client.
    pub status: u16,
    /// How the reply ended, its usage and its tool calls. `outcome` is a
    /// Responses status or a Chat `finish_reason`, in the client's terms, or
    /// `None` when there was no translated reply (an error status).
    pub reply: ReplySummary,
    /// From the request to the first byte of the upstream's reply.
    pub time_to_first_byte: Option<Duration>,
    /// From the request to the end of the reply sent to the client.
    pub total_time: Duration,
    /// Time spent translating, apart from waiting on either side.
    pub translation_time: Duration,
    /// What could not be translated.
    pub losses: LossReport,
    /// The trace of the client's `traceparent` header, when it had a valid
    /// one (see [`trace_context`](crate::trace_context)).
    pub trace_id: Option<TraceId>,
    /// For the inner leg of a composed translation, the direction of the
    /// layer that handed the request on: a Messages client on a Chat
    /// backend is one exchange `MessagesToResponses` and one
    /// `ResponsesToChat` with `via: Some(MessagesToResponses)`. Both report
    /// the same tokens; count them once, from the outer exchange.
    pub via: Option<Direction>,
    /// The replica that answered, by its index, when the upstream is a
    /// [`Replicas`](crate::Replicas) set (see [`ServedBy`](crate::ServedBy)).
    pub replica: Option<usize>,
}

/// Marks a request a layer hands on to a layer of this crate below it:
/// that layer's exchange reports it in [`Exchange::via`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct HandedOn(pub(crate) Direction);

/// The error code of a request refused for the stored items it would take
/// in ([`Budget::ResolvedInput`]).
pub(crate) const RESOLVED_INPUT_TOO_LARGE: &str = "resolved_input_too_large";

/// A bound the bridge keeps on what a client (or an upstream) can make it
/// hold, reported each time it refuses something for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Budget {
    /// A request body over the body limit (a 413).
    RequestBody,
    /// A non-streaming upstream reply over the reply size limit (a 502).
    UpstreamReply,
    /// A WebSocket handshake past the connections one tenant may hold (a
    /// 429).
    WebSocketConnections,
    /// A `response.create` past a WebSocket connection's queue, in
    /// messages or bytes (a 429 `error` event).
    WebSocketQueue,
    /// A `response.create` whose request does not fit in the bytes every
    /// WebSocket connection holds together, once its connection's cache
    /// has given back what it could (a 503 `error` event).
    WebSocketMemory,
    /// A background response past the runs in flight, of the server or of
    /// one tenant (a 429).
    BackgroundRuns,
    /// A request that would take in more stored items (its history, the
    /// items its references name) than the bound allows (a 400).
    ResolvedInput,
}

impl Budget {
    /// Every budget, for documentation and metrics.
    pub const ALL: [Budget; 7] = [
        Budget::RequestBody,
        Budget::UpstreamReply,
        Budget::WebSocketConnections,
        Budget::WebSocketQueue,
        Budget::WebSocketMemory,
        Budget::BackgroundRuns,
        Budget::ResolvedInput,
    ];

    /// A stable snake_case name, for metrics and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Budget::RequestBody => "request_body",
            Budget::UpstreamReply => "upstream_reply",
            Budget::WebSocketConnections => "websocket_connections",
            Budget::WebSocketQueue => "websocket_queue",
            Budget::WebSocketMemory => "websocket_memory",
            Budget::BackgroundRuns => "background_runs",
            Budget::ResolvedInput => "resolved_input",
        }
    }

    /// The budget an error reply with this `code` was refused for.
    pub(crate) fn of_code(code: &str) -> Option<Budget> {
        match code {
            "request_too_large" => Some(Budget::RequestBody),
            "upstream_reply_too_large" => Some(Budget::UpstreamReply),
            "too_many_background_responses" => Some(Budget::BackgroundRuns),
            RESOLVED_INPUT_TOO_LARGE => Some(Budget::ResolvedInput),
            _ => None,
        }
    }
}

/// Receives one [`Exchange`] per translated request, when its reply ends
/// (or is dropped by the client), and each refusal a [`Budget`] made.
///
/// Called on the task that polls the response body: keep it quick, and hand
/// slow work to a channel.
pub trait Observer: Send + Sync + 'static {
    /// An exchange finished.
    fn on_exchange(&self, exchange: &Exchange);

    /// Something was refused because a budget was reached. An exchange so
    /// refused is reported to [`on_exchange`](Self::on_exchange) as well.
    fn on_budget(&self, budget: Budget) {
        let _ = budget;
    }
}

/// An observer that does nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopObserver;

impl Observer for NoopObserver {
    fn on_exchange(&self, _: &Exchange) {}
}

impl<F> Observer for F
where
    F: Fn(&Exchange) + Send + Sync + 'static,
{
    fn on_exchange(&self, exchange: &Exchange) {
        self(exchange)
    }
}
