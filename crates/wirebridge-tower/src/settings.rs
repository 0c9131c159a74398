//! What a layer is configured with: settings both directions have, and
//! each direction's own.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderName;
use wirebridge_convert::seal::Sealer;
use wirebridge_convert::{chat_to_responses, responses_to_chat};

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
        }
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
    pub(crate) websocket: Option<crate::websocket::WebSocketSettings>,
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
            websocket: Some(crate::websocket::WebSocketSettings::default()),
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
