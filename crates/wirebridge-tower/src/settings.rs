//! What a layer is configured with: settings both directions have, and
//! each direction's own.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderName;
use wirebridge_convert::catalog::ModelCatalog;
use wirebridge_convert::seal::Sealer;
use wirebridge_convert::{chat_to_responses, messages_to_responses, responses_to_chat};

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

/// How many bodies' worth of stored items one request may take in by
/// default (its stored history, and the items its `item_reference`s name,
/// each time named): the limit follows the body limit unless set.
///
/// Two: a stateless client sends its whole conversation in one body, so a
/// conversation it could have sent itself fits with as much again to
/// spare, while what a request makes the bridge build and send stays
/// within three bodies (its own and two of stored items), not the
/// thousands of times its size that repeated references would reach.
pub const RESOLVED_INPUT_PER_BODY: usize = 2;

/// Default limit on the stored items one request may take in: 64 MiB, two
/// default bodies (see [`RESOLVED_INPUT_PER_BODY`]).
pub const DEFAULT_MAX_RESOLVED_INPUT: usize = RESOLVED_INPUT_PER_BODY * DEFAULT_BODY_LIMIT;

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
    /// Ends open streams when the server stops, if set.
    pub(crate) shutdown: Option<crate::Shutdown>,
    /// Whether an exchange that names no conversation keys its upstream
    /// request by its body ([`Affinity::of_body`](crate::Affinity::of_body)).
    pub(crate) prefix_affinity: bool,
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
            shutdown: None,
            prefix_affinity: true,
        }
    }
}

/// The catalog a layer serves, shared by its services.
#[derive(Clone)]
pub(crate) struct CatalogSettings {
    pub(crate) models: Arc<ModelCatalog>,
    /// Whether serving models without instructions was warned about.
    pub(crate) warned: Arc<AtomicBool>,
    /// The catalog served last, which the WebSocket upgrade names.
    pub(crate) last_served: crate::catalog_etag::LastServed,
}

impl CatalogSettings {
    pub(crate) fn new(settings: ModelCatalog) -> Self {
        Self {
            models: Arc::new(settings),
            warned: Arc::default(),
            last_served: Default::default(),
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
pub struct ResponsesSettings {
    /// How to translate (the seal is set per request: it is per tenant).
    pub(crate) convert: responses_to_chat::Options,
    pub(crate) sealer: Option<Arc<Sealer>>,
    pub(crate) stateful: Option<Stateful>,
    pub(crate) tenant_header: Option<HeaderName>,
    pub(crate) anonymous_store: bool,
    /// Every credential counts as accepted by the backend (see
    /// `trust_credentials` on the layer).
    pub(crate) trust_credentials: bool,
    pub(crate) missing_history: MissingHistory,
    /// Bytes of stored turns kept translated, with a store.
    pub(crate) translated_history: usize,
    /// Runs `background: true` requests, when set.
    pub(crate) background: Option<crate::BackgroundRuns>,
    /// The most bytes of stored items one request may take in.
    pub(crate) max_resolved_input: usize,
    /// Whether `max_resolved_input` was set, rather than following the
    /// body limit.
    pub(crate) max_resolved_input_set: bool,
    #[cfg(feature = "websocket")]
    pub(crate) websocket: Option<WebSocketSettings>,
}

impl ResponsesSettings {
    /// Bounds the stored items one request may take in, at the store too.
    pub(crate) fn bound_resolved_input(&mut self, bytes: usize) {
        self.max_resolved_input = bytes;
        if let Some(stateful) = &mut self.stateful {
            stateful.max_resolved(bytes);
        }
    }

    /// The body limit is now `bytes`: the bound on stored items follows
    /// it, unless it was set.
    pub(crate) fn follow_body_limit(&mut self, bytes: usize) {
        if !self.max_resolved_input_set {
            self.bound_resolved_input(bytes.saturating_mul(RESOLVED_INPUT_PER_BODY));
        }
    }
}

impl Default for ResponsesSettings {
    fn default() -> Self {
        Self {
            convert: responses_to_chat::Options::default(),
            sealer: None,
            stateful: None,
            tenant_header: None,
            anonymous_store: false,
            trust_credentials: false,
            missing_history: MissingHistory::default(),
            translated_history: responses_to_chat::HistoryCache::DEFAULT_MAX_BYTES,
            background: None,
            max_resolved_input: DEFAULT_MAX_RESOLVED_INPUT,
            max_resolved_input_set: false,
            // Served wherever the feature is built in.
            #[cfg(feature = "websocket")]
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
            .field("translated_history", &self.translated_history)
            .field("max_resolved_input", &self.max_resolved_input)
            .finish_non_exhaustive()
    }
}

/// Settings of Chat clients over a Responses upstream.
#[derive(Debug, Clone, Default)]
pub struct ChatSettings {
    pub(crate) convert: chat_to_responses::Options,
}

/// Settings of Anthropic Messages clients over a Responses upstream.
#[derive(Debug, Clone, Default)]
pub struct MessagesSettings {
    pub(crate) convert: messages_to_responses::Options,
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
    pub(crate) max_queued_bytes: usize,
    pub(crate) max_per_tenant: usize,
    pub(crate) max_age: Duration,
    /// The open connections of each tenant, shared by the layer's clones.
    pub(crate) open: Arc<crate::open_sockets::OpenSockets>,
    /// The bytes every connection's cache and queue hold together, shared
    /// by the layer's clones.
    pub(crate) memory: Arc<crate::byte_budget::ByteBudget>,
}

#[cfg(feature = "websocket")]
impl Default for WebSocketSettings {
    fn default() -> Self {
        Self {
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            cache_entries: crate::stateful::CONNECTION_CACHE_ENTRIES,
            cache_bytes: crate::stateful::CONNECTION_CACHE_BYTES,
            max_queued: 8,
            max_queued_bytes: Self::DEFAULT_MAX_QUEUED_BYTES,
            max_per_tenant: Self::DEFAULT_MAX_PER_TENANT,
            max_age: Self::DEFAULT_MAX_AGE,
            open: Arc::default(),
            memory: Arc::new(crate::byte_budget::ByteBudget::new(
                Self::DEFAULT_MAX_MEMORY,
            )),
        }
    }
}

#[cfg(feature = "websocket")]
impl WebSocketSettings {
    /// Default [`idle_timeout`](Self::idle_timeout): 10 minutes.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

    /// Default [`max_per_tenant`](Self::max_per_tenant): 32 connections.
    pub const DEFAULT_MAX_PER_TENANT: usize = 32;

    /// Default [`max_age`](Self::max_age): 60 minutes, as OpenAI's.
    pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(60 * 60);

    /// Default of the bytes [`max_queued`](Self::max_queued) lets wait:
    /// 32 MiB, one request as large as the default body limit.
    pub const DEFAULT_MAX_QUEUED_BYTES: usize = 32 * 1024 * 1024;

    /// Default [`max_memory`](Self::max_memory): 512 MiB. Room for 32
    /// connections with full caches (16 MiB each), or 16 with a full
    /// queue (32 MiB each): a tenant's open connections at their
    /// per-connection defaults, while made-up credentials, which the
    /// per-tenant cap does not bound, cannot hold more than a bounded share
    /// of a small server's memory.
    pub const DEFAULT_MAX_MEMORY: usize = 512 * 1024 * 1024;

    /// Defaults: a connection idle for 10 minutes is closed; its cache
    /// keeps up to 16,384 responses and 16 MiB (a conversation of more than
    /// 10,000 Codex-like turns: the cache keeps their items, not their
    /// response objects); up to 8 `response.create` messages of up to
    /// 32 MiB together wait behind a running turn; all connections together
    /// hold up to 512 MiB of caches and queues; a tenant holds up to 32
    /// connections open; a
    /// connection is closed after 60 minutes (as OpenAI's are), once no
    /// turn runs.
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
        crate::stateful::connection_cache(self.cache_entries, self.cache_bytes)
    }

    /// How many `response.create` messages, and how many bytes of them,
    /// may wait behind the running turn; one more (or one whose bytes
    /// would pass the bound) is answered with an error event, and the
    /// connection stays open.
    pub fn max_queued(mut self, messages: usize, bytes: usize) -> Self {
        self.max_queued = messages;
        self.max_queued_bytes = bytes;
        self
    }

    /// How many bytes every connection of the layer may hold together: the
    /// responses their caches keep and the `response.create` messages
    /// waiting on them (a turn holds its request's bytes from the moment
    /// it arrives until it ends). A connection whose request does not fit
    /// evicts its own oldest cached responses first; if that is not
    /// enough, the request is answered with a 503 `error` event (code
    /// `websocket_memory_exhausted`) and the connection stays open. The
    /// per-connection bounds ([`cache_limits`](Self::cache_limits),
    /// [`max_queued`](Self::max_queued)) still hold within it.
    ///
    /// ```
    /// use wirebridge_tower::{ResponsesToChatLayer, WebSocketSettings};
    ///
    /// let layer = ResponsesToChatLayer::new()
    ///     .websocket(WebSocketSettings::new().max_memory(256 << 20));
    /// # let _ = layer;
    /// ```
    pub fn max_memory(mut self, bytes: usize) -> Self {
        self.memory = Arc::new(crate::byte_budget::ByteBudget::new(bytes));
        self
    }

    /// How many connections one tenant may hold open at once; one more
    /// handshake is refused with a 429.
    pub fn max_per_tenant(mut self, connections: usize) -> Self {
        self.max_per_tenant = connections;
        self
    }

    /// How long a connection may live: past it, it is closed (1000) once
    /// the running turn, if any, has ended; the client opens a new one.
    pub fn max_age(mut self, age: Duration) -> Self {
        self.max_age = age;
        self
    }
}
