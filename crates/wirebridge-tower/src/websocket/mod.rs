//! Responses WebSocket mode: `GET …/responses` upgraded to a WebSocket, on
//! which each `response.create` message runs one turn and its stream
//! events come back as text messages.
//!
//! The upgrade is hyper's ([`hyper::upgrade::on`]): the connection must be
//! served by hyper with upgrades enabled (hyper-util's
//! `serve_connection_with_upgrades`), on a tokio runtime. Each connection
//! runs as a task of its own; its turns run one after another through the
//! same exchange as HTTP requests (translation, store, timeouts, observer),
//! so a turn is logged and counted as one exchange.

mod client_event;
mod handshake;
mod server_event;
mod session;
mod turn;
mod warmup;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body::Body;
use tower::Service;

use crate::body::ResponseBody;
use crate::direction::sealed::Direction;
use crate::request_body::{BoxError, RequestBody};
use crate::shared::Shared;

pub(crate) use handshake::is_upgrade;

/// How WebSocket mode is served (cargo feature `websocket`): on by default
/// where the feature is built in; see
/// [`TranslateLayer::websocket`](crate::TranslateLayer::websocket).
///
/// ```
/// use std::time::Duration;
/// use wirebridge_tower::{ResponsesToChatLayer, WebSocketSettings};
///
/// let layer = ResponsesToChatLayer::new().websocket(
///     WebSocketSettings::new()
///         .idle_timeout(Duration::from_secs(120))
///         .cache_limits(256, 8 << 20),
/// );
/// # let _ = layer;
/// ```
#[derive(Debug, Clone)]
pub struct WebSocketSettings {
    pub(crate) idle_timeout: Duration,
    pub(crate) cache_entries: usize,
    pub(crate) cache_bytes: usize,
    pub(crate) max_queued: usize,
}

impl Default for WebSocketSettings {
    fn default() -> Self {
        Self {
            idle_timeout: Duration::from_secs(600),
            cache_entries: 1024,
            cache_bytes: 16 * 1024 * 1024,
            max_queued: 8,
        }
    }
}

impl WebSocketSettings {
    /// Defaults: a connection idle for 10 minutes is closed; its cache
    /// keeps up to 1,024 responses and 16 MiB; up to 8 `response.create`
    /// messages wait behind a running turn.
    pub fn new() -> Self {
        Self::default()
    }

    /// Closes a connection on which no turn runs and the client sent
    /// nothing for this long.
    pub fn idle_timeout(mut self, period: Duration) -> Self {
        self.idle_timeout = period;
        self
    }

    /// Bounds each connection's cache of its responses (what
    /// `previous_response_id` continues with `store: false`): the oldest
    /// are evicted first.
    pub fn cache_limits(mut self, entries: usize, bytes: usize) -> Self {
        self.cache_entries = entries;
        self.cache_bytes = bytes;
        self
    }

    /// How many `response.create` messages may wait behind the running
    /// turn; one more is answered with an error event.
    pub fn max_queued(mut self, messages: usize) -> Self {
        self.max_queued = messages;
        self
    }
}

/// Answers an upgrade request: `101 Switching Protocols` and a session
/// task, or the error status that says why not.
pub(crate) fn upgrade<S, D, ReqB, ResB>(
    inner: S,
    shared: Arc<Shared<D>>,
    settings: WebSocketSettings,
    request: Request<ReqB>,
    prefix: String,
) -> Response<ResponseBody<ResB>>
where
    D: Direction,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqB: Body<Data = Bytes> + Send + 'static,
    ReqB::Error: Into<BoxError>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: std::fmt::Display + Into<BoxError>,
{
    let mut request = request;
    let accepted = match handshake::accept(&mut request) {
        Ok(accepted) => accepted,
        Err(refusal) => return *refusal,
    };
    let (mut parts, _body) = request.into_parts();
    handshake::strip_upgrade_headers(&mut parts.headers);
    let session = session::Session::new(inner, shared, settings, parts, prefix);
    tokio::spawn(session.run(accepted.on_upgrade));
    accepted.response
}
