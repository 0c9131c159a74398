//! [`TranslateLayer`]: the settings, and the [`Layer`] that applies them.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tower::Layer;
use wirebridge_convert::catalog::ModelCatalog;
use wirebridge_convert::chat_to_responses::ChatReasoning;
use wirebridge_convert::responses_to_chat::ReasoningOutput;
use wirebridge_convert::seal::Sealer;
use wirebridge_convert::{BackendProfile, LossPolicy};
use wirebridge_store::ResponseStore;

use crate::direction::sealed::Settings as _;
use crate::direction::{
    state, ChatOverResponses, ResponsesOverChat, ResponsesOverMessages, ResponsesOverResponses,
    Translation,
};
use crate::observer::Observer;
use crate::service::Translate;
use crate::settings::CatalogSettings;
use crate::shared::Shared;
use crate::stateful::MissingHistory;
use crate::stateful::Stateful;

/// Applies [`Translate`] to a service, with its settings.
///
/// Settings that exist in one direction only are methods of that direction:
/// a store, a sealer and a backend profile for
/// [`ResponsesToChatLayer`](crate::ResponsesToChatLayer), where Responses
/// clients meet a Chat backend; reasoning placement for
/// [`ChatToResponsesLayer`](crate::ChatToResponsesLayer).
///
/// ```
/// use wirebridge_tower::ResponsesToChatLayer;
/// use wirebridge_tower::store::MemoryStore;
/// use wirebridge_convert::BackendProfile;
///
/// let layer = ResponsesToChatLayer::new()
///     .profile(BackendProfile::vllm())
///     .store(MemoryStore::new())
///     .body_limit(8 << 20);
/// # let _ = layer;
/// ```
pub struct TranslateLayer<D: Translation> {
    shared: Arc<Shared<D>>,
}

impl<D: Translation> Clone for TranslateLayer<D> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<D: Translation> fmt::Debug for TranslateLayer<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TranslateLayer")
            .field("settings", &self.shared)
            .finish()
    }
}

impl<D: Translation> Default for TranslateLayer<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Translation> TranslateLayer<D> {
    /// Default settings: 32 MiB request bodies, 16 MiB SSE events, the
    /// default loss policy (and for Responses clients, the `generic` backend
    /// profile and no store).
    pub fn new() -> Self {
        Self {
            shared: Arc::new(Shared::default()),
        }
    }

    fn settings(&mut self) -> &mut Shared<D> {
        Arc::make_mut(&mut self.shared)
    }

    /// Largest request body read; larger ones get a 413 without being read.
    /// For Responses clients, the bound on the stored items a request may
    /// take in follows it (twice this, see
    /// [`RESOLVED_INPUT_PER_BODY`](crate::RESOLVED_INPUT_PER_BODY)) unless
    /// set with `max_resolved_input`.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        let settings = self.settings();
        settings.common.body_limit = bytes;
        state::follow_body_limit::<D>(&mut settings.direction, bytes);
        self
    }

    /// Largest upstream SSE event; a larger one fails the stream.
    pub fn max_event_size(mut self, bytes: usize) -> Self {
        self.settings().common.max_event_size = bytes;
        self
    }

    /// Largest non-streaming upstream reply (read whole to be translated);
    /// a larger one is a 502 in the client's API. Streams are bounded by
    /// [`max_event_size`](Self::max_event_size) instead.
    pub fn max_reply_size(mut self, bytes: usize) -> Self {
        self.settings().common.max_reply_size = bytes;
        self
    }

    /// Fails a translated stream whose upstream completes no event for this
    /// long: the client gets the stream's own failure event. Bytes that
    /// trickle in without completing an event do not count; comments do.
    /// Allow for the backend's longest prefill. Off by default; needs a
    /// tokio runtime.
    pub fn stream_idle_timeout(mut self, period: Duration) -> Self {
        self.settings().common.stream_idle_timeout = Some(period);
        self
    }

    /// Sends a `: keepalive` comment on a translated stream that has sent
    /// the client nothing for this long, so that load balancers and proxies
    /// in front of the client do not cut it during a long prefill. Off by
    /// default; needs a tokio runtime.
    pub fn keepalive_interval(mut self, period: Duration) -> Self {
        self.settings().common.keepalive_interval = Some(period);
        self
    }

    /// What to do with what cannot be translated.
    pub fn policy(mut self, policy: LossPolicy) -> Self {
        *self.settings().direction.policy_mut() = policy;
        self
    }

    /// Receives one record per exchange.
    pub fn observer(mut self, observer: impl Observer) -> Self {
        self.settings().common.observer = Arc::new(observer);
        self
    }

    /// The path suffix of intercepted requests, instead of the API's own
    /// (`/responses` or `/chat/completions`). Whatever precedes it is kept as
    /// the prefix of the upstream path.
    pub fn client_endpoint(mut self, suffix: impl Into<String>) -> Self {
        self.settings().common.client_endpoint = Some(suffix.into());
        self
    }

    /// Serves `GET …/models` with this catalog. Codex (a request with a
    /// `client_version` query parameter, as Codex's models client sends)
    /// gets its own catalog of the upstream's models, enriched with the
    /// catalog's settings; other clients get the upstream's list as it is.
    /// An upstream that answers 404 there is answered for with the models
    /// the catalog has settings for, if any; its other errors are re-shaped
    /// as OpenAI's. Without a catalog, the request passes through.
    ///
    /// For Responses clients, a model's `context_window` in the catalog is
    /// also what `truncation: "auto"` fits a conversation to.
    pub fn model_catalog(mut self, catalog: ModelCatalog) -> Self {
        state::use_catalog::<D>(&mut self.settings().direction, &catalog);
        self.settings().common.catalog = Some(CatalogSettings::new(catalog));
        self
    }

    /// Ends the streams (and WebSocket connections) still open when
    /// `shutdown` is triggered, each in its own dialect and keeping what
    /// was sent, rather than letting the server cut them. See
    /// [`Shutdown`](crate::Shutdown).
    pub fn shutdown(mut self, shutdown: crate::Shutdown) -> Self {
        self.settings().common.shutdown = Some(shutdown);
        self
    }

    /// Whether an exchange whose request names no conversation (no
    /// `conversation`, thread or WebSocket session, no `prompt_cache_key`)
    /// puts on its upstream request the key of the body it sends: the
    /// digest of its stable prefix, which every turn of a chain repeats
    /// ([`Affinity::of_body`](crate::Affinity::of_body)), for
    /// [`Replicas`](crate::Replicas) in front of several replicas. On by
    /// default.
    ///
    /// The digest reads the body the bridge just wrote: about 4% of the
    /// instructions of a small translated turn, 12% of a Claude Code
    /// request's. Turn it off where
    /// there is one backend, or where the router keys a body that comes
    /// without a key itself (as the `wirebridge` binary's does).
    ///
    /// ```
    /// use wirebridge_tower::ResponsesToChatLayer;
    ///
    /// let one_backend = ResponsesToChatLayer::new().prefix_affinity(false);
    /// # let _ = one_backend;
    /// ```
    pub fn prefix_affinity(mut self, on: bool) -> Self {
        self.settings().common.prefix_affinity = on;
        self
    }
}

/// The settings of both directions that serve Responses clients: the same
/// methods on each layer, written once.
macro_rules! responses_client_settings {
    ($($direction:ty),+) => {$(
        impl TranslateLayer<$direction> {
            /// What the backend accepts.
            pub fn profile(mut self, profile: BackendProfile) -> Self {
                self.settings().direction.convert.profile = profile;
                self
            }

            /// Fits a request with `truncation: "auto"` to its model's
            /// `context_window` in `catalog` (else the profile's), without
            /// serving `GET …/models` from it as
            /// [`model_catalog`](Self::model_catalog) does: for a layer
            /// stacked on one that serves the catalog.
            pub fn context_windows_from(mut self, catalog: ModelCatalog) -> Self {
                self.settings().direction.convert.catalog = Some(Arc::new(catalog));
                self
            }

            /// How backend reasoning is shown to Responses clients.
            pub fn reasoning_output(mut self, output: ReasoningOutput) -> Self {
                self.settings().direction.convert.reasoning_output = output;
                self
            }

            /// Keeps finished responses, so Responses clients can use `store`,
            /// `previous_response_id`, `GET /v1/responses/{id}`, `DELETE` and
            /// `input_items` against a backend that keeps no state.
            pub fn store(self, store: impl ResponseStore) -> Self {
                self.store_arc(Arc::new(store))
            }

            /// [`store`](Self::store), with a store shared elsewhere too.
            pub fn store_arc(mut self, store: Arc<dyn ResponseStore>) -> Self {
                let direction = &mut self.settings().direction;
                let mut stateful = Stateful::new(store);
                stateful.translated_history(direction.translated_history);
                stateful.max_resolved(direction.max_resolved_input);
                stateful.trust_credentials(direction.trust_credentials);
                direction.stateful = Some(stateful);
                direction.convert.store = true;
                self
            }

            /// How many bytes of stored turns are kept in their Chat form
            /// (default [`HistoryCache::DEFAULT_MAX_BYTES`](wirebridge_convert::responses_to_chat::HistoryCache::DEFAULT_MAX_BYTES), 64 MiB; the turns
            /// used least recently go first), so that a request continuing a
            /// stored conversation over a Chat backend translates only what
            /// is new (see [`HistoryCache`](wirebridge_convert::responses_to_chat::HistoryCache)). 0 keeps none: every turn
            /// translates the whole conversation again.
            pub fn translated_history(mut self, bytes: usize) -> Self {
                let direction = &mut self.settings().direction;
                direction.translated_history = bytes;
                if let Some(stateful) = &mut direction.stateful {
                    stateful.translated_history(bytes);
                }
                self
            }

            /// Seals the backend's reasoning into `encrypted_content` for clients
            /// that ask for it (`include: ["reasoning.encrypted_content"]`, as Codex
            /// does with `store: false`), and opens it when they send it back, so
            /// reasoning is replayed across a stateless tool loop (for profiles
            /// that replay reasoning). Carriers are bound to the tenant that
            /// received them.
            pub fn sealer(mut self, sealer: Sealer) -> Self {
                self.settings().direction.sealer = Some(Arc::new(sealer));
                self
            }

            /// Tells tenants apart by this header (set by a gateway in front)
            /// instead of by a hash of the `authorization` header: stored responses
            /// and sealed reasoning are each visible only to their tenant.
            pub fn tenant_header(mut self, name: http::HeaderName) -> Self {
                self.settings().direction.tenant_header = Some(name);
                self
            }

            /// Keeps responses of requests that carry no credential (no
            /// `authorization`, or no tenant header when one is set), in one tenant
            /// all such clients share: any of them can read, continue and delete
            /// the others' responses. Off by default: such requests keep nothing
            /// (the response says `store: false`) and `previous_response_id` is a
            /// 400 that says why.
            pub fn anonymous_store(mut self, shared: bool) -> Self {
                self.settings().direction.anonymous_store = shared;
                self
            }

            /// Counts every credential as one the backend accepts, for
            /// deployments that authenticate in front of the bridge. Off by
            /// default: what the bridge keeps without a backend call (a
            /// conversation created, items added to one, metadata updated,
            /// a WebSocket warm-up) is kept only under a credential the
            /// backend has accepted. A Conversations API write under one
            /// not yet accepted asks the backend first, once, with
            /// `GET {prefix}/models` and the client's credentials: a 2xx
            /// accepts it, a 401, 403 or 429 is answered as the backend
            /// gave it, anything else is a 502 `credential_unchecked`.
            pub fn trust_credentials(mut self, trust: bool) -> Self {
                let direction = &mut self.settings().direction;
                direction.trust_credentials = trust;
                if let Some(stateful) = &mut direction.stateful {
                    stateful.trust_credentials(trust);
                }
                self
            }

            /// How WebSocket mode (`GET …/responses` upgraded) is served: on by
            /// default with the `websocket` feature. Each `response.create` message
            /// runs one turn through the same exchange as `POST …/responses`; a
            /// connection keeps its responses (`store: false` ones too) in a cache
            /// of its own, in front of the [`store`](Self::store). The connection
            /// must be served by hyper with upgrades, on a tokio runtime.
            #[cfg(feature = "websocket")]
            pub fn websocket(mut self, settings: crate::WebSocketSettings) -> Self {
                self.settings().direction.websocket = Some(settings);
                self
            }

            /// Refuses WebSocket upgrades: they pass to the inner service as any
            /// other request would.
            #[cfg(feature = "websocket")]
            pub fn without_websocket(mut self) -> Self {
                self.settings().direction.websocket = None;
                self
            }

            /// Runs `background: true` requests in the background (see
            /// [`BackgroundRuns`](crate::BackgroundRuns)): needs a
            /// [`store`](Self::store), where each run's response is kept and
            /// polled. Without it, `background` is reported lost (refused
            /// under the default policy).
            pub fn background(mut self, runs: crate::BackgroundRuns) -> Self {
                let direction = &mut self.settings().direction;
                direction.background = Some(runs);
                direction.convert.background = true;
                self
            }

            /// The most bytes of stored items one request may take in: the
            /// stored history `previous_response_id` or `conversation`
            /// brings, and the items its `item_reference` input items
            /// name, each time named. They are counted as the store hands
            /// them over, before anything is built from them; past the
            /// bound, the request is a 400 `resolved_input_too_large`
            /// naming the field that passed it (`previous_response_id`,
            /// `conversation` or `input`), and
            /// [`Budget::ResolvedInput`](crate::Budget::ResolvedInput) is
            /// reported. Default: twice the [`body_limit`](Self::body_limit)
            /// (64 MiB with the default body limit), following it.
            pub fn max_resolved_input(mut self, bytes: usize) -> Self {
                let direction = &mut self.settings().direction;
                direction.max_resolved_input_set = true;
                direction.bound_resolved_input(bytes);
                self
            }

            /// What to do when a conversation continued with `previous_response_id`
            /// misses an earlier response (default: [`MissingHistory::Refuse`]).
            pub fn missing_history(mut self, policy: MissingHistory) -> Self {
                self.settings().direction.missing_history = policy;
                self
            }
        }
    )+};
}

responses_client_settings!(
    ResponsesOverChat,
    ResponsesOverResponses,
    ResponsesOverMessages
);

impl TranslateLayer<ChatOverResponses> {
    /// Where Chat clients receive reasoning from the Responses backend.
    pub fn chat_reasoning(mut self, reasoning: ChatReasoning) -> Self {
        self.settings().direction.convert.reasoning = reasoning;
        self
    }
}

impl<S, D: Translation> Layer<S> for TranslateLayer<D> {
    type Service = Translate<S, D>;

    fn layer(&self, inner: S) -> Self::Service {
        Translate::from_shared(inner, Arc::clone(&self.shared))
    }
}

impl<S, D: Translation> Translate<S, D> {
    /// A layer with default settings, to configure with its methods.
    pub fn layer() -> TranslateLayer<D> {
        TranslateLayer::new()
    }
}
