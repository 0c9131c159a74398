//! What a layer is configured with: settings both directions have, and
//! each direction's own.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderName;
use wirebridge_convert::catalog::ModelCatalog;
use wirebridge_convert::seal::Sealer;
use wirebridge_convert::{chat_to_responses, responses_to_chat};

use crate::loss_warnings::LossWarnings;
use crate::observer::{NoopObserver, Observer};
use crate::stateful::{MissingHistory, Stateful};

/// Default request body limit: large enough for image-bearing agent turns.
pub const DEFAULT_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// Default limit on one upstream SSE event.
pub const DEFAULT_MAX_EVENT_SIZE: usize = wirebridge_sse::DEFAULT_MAX_EVENT_SIZE;

/// Default limit on a non-streaming upstream reply, read whole to be
/// translated.
pub const DEFAULT_MAX_REPLY_SIZE: usize = 64 * 1024 * 1024;

/// Settings of both directions.
#[derive(Clone)]
pub(crate) struct Common {
    pub(crate) body_limit: usize,
    pub(crate) max_event_size: usize,
    pub(crate) max_reply_size: usize,
    pub(crate) stream_idle_timeout: Option<Duration>,
    pub(crate) keepalive_interval: Option<Duration>,
    pub(crate) observer: Arc<dyn Observer>,
    pub(crate) client_endpoint: Option<String>,
    /// The losses warned about: one set per layer, shared by its services
    /// and their WebSocket sessions.
    pub(crate) loss_warnings: Arc<LossWarnings>,
    /// The model catalog served at `GET …/models`, if any.
    pub(crate) catalog: Option<CatalogSettings>,
}

impl Default for Common {
    fn default() -> Self {
        Self {
            body_limit: DEFAULT_BODY_LIMIT,
            max_event_size: DEFAULT_MAX_EVENT_SIZE,
            max_reply_size: DEFAULT_MAX_REPLY_SIZE,
            stream_idle_timeout: None,
            keepalive_interval: None,
            observer: Arc::new(NoopObserver),
            client_endpoint: None,
            loss_warnings: Arc::default(),
            catalog: None,
        }
    }
}

/// The catalog a layer serves, shared by its services.
#[derive(Clone)]
pub(crate) struct CatalogSettings {
    pub(crate) models: Arc<ModelCatalog>,
    /// Whether serving models without instructions was warned about.
    pub(crate) warned: Arc<AtomicBool>,
}

impl CatalogSettings {
    pub(crate) fn new(settings: ModelCatalog) -> Self {
        Self {
            models: Arc::new(settings),
            warned: Arc::default(),
        }
    }
}

impl fmt::Debug for CatalogSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogSettings")
            .field("models", &self.models)
            .finish_non_exhaustive()
    }
}

/// Settings of Responses clients over a Chat upstream.
#[derive(Clone)]
#[cfg_attr(not(feature = "websocket"), derive(Default))]
pub struct ResponsesSettings {
    /// How to translate (the seal is set per request: it is per tenant).
    pub(crate) convert: responses_to_chat::Options,
    pub(crate) sealer: Option<Arc<Sealer>>,
    pub(crate) stateful: Option<Stateful>,
    pub(crate) tenant_header: Option<HeaderName>,
    pub(crate) anonymous_store: bool,
    pub(crate) missing_history: MissingHistory,
    #[cfg(feature = "websocket")]
    pub(crate) websocket: Option<WebSocketSettings>,
}

#[cfg(feature = "websocket")]
impl Default for ResponsesSettings {
    fn default() -> Self {
        Self {
            convert: responses_to_chat::Options::default(),
            sealer: None,
            stateful: None,
            tenant_header: None,
            anonymous_store: false,
            missing_history: MissingHistory::default(),
            // Served wherever the feature is built in.
            websocket: Some(WebSocketSettings::default()),
        }
    }
}

impl fmt::Debug for ResponsesSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponsesSettings")
            .field("profile", &self.convert.profile.name)
            .field("policy", &self.convert.policy)
            .field("reasoning_output", &self.convert.reasoning_output)
            .field("store", &self.stateful.is_some())
            .field("sealer", &self.sealer.is_some())
            .field("tenant_header", &self.tenant_header)
            .field("anonymous_store", &self.anonymous_store)
            .field("missing_history", &self.missing_history)
            .finish_non_exhaustive()
    }
}

/// Settings of Chat clients over a Responses upstream.
#[derive(Debug, Clone, Default)]
pub struct ChatSettings {
    pub(crate) convert: chat_to_responses::Options,
}

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
#[cfg(feature = "websocket")]
#[derive(Debug, Clone)]
pub struct WebSocketSettings {
    pub(crate) idle_timeout: Duration,
    pub(crate) cache_entries: usize,
    pub(crate) cache_bytes: usize,
    pub(crate) max_queued: usize,
}

#[cfg(feature = "websocket")]
impl Default for WebSocketSettings {
    fn default() -> Self {
        Self {
            idle_timeout: Duration::from_secs(600),
            cache_entries: 16_384,
            cache_bytes: 16 * 1024 * 1024,
            max_queued: 8,
        }
    }
}

#[cfg(feature = "websocket")]
impl WebSocketSettings {
    /// Defaults: a connection idle for 10 minutes is closed; its cache
    /// keeps up to 16,384 responses and 16 MiB (a conversation of more than
    /// 10,000 Codex-like turns: the cache keeps their items, not their
    /// response objects); up to 8 `response.create` messages wait behind a
    /// running turn.
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

    /// A connection's cache, within these bounds.
    pub(crate) fn cache(&self) -> wirebridge_store::MemoryStore {
        wirebridge_store::MemoryStore::new()
            .max_entries(self.cache_entries)
            .max_bytes(self.cache_bytes)
    }

    /// How many `response.create` messages may wait behind the running
    /// turn; one more is answered with an error event.
    pub fn max_queued(mut self, messages: usize) -> Self {
        self.max_queued = messages;
        self
    }
}
