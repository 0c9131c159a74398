//! Settings shared by both layers.

use std::sync::Arc;

use wirebridge_convert::chat_to_responses::ChatReasoning;
use wirebridge_convert::responses_to_chat::ReasoningOutput;
use wirebridge_convert::seal::Sealer;
use wirebridge_convert::{BackendProfile, LossPolicy};

use crate::observer::{NoopObserver, Observer};

/// Default request body limit: large enough for image-bearing agent turns.
pub const DEFAULT_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// Default limit on one upstream SSE event.
pub const DEFAULT_MAX_EVENT_SIZE: usize = wirebridge_sse::DEFAULT_MAX_EVENT_SIZE;

/// Settings of a translating layer.
#[derive(Clone)]
pub struct Options {
    pub(crate) body_limit: usize,
    pub(crate) max_event_size: usize,
    pub(crate) profile: BackendProfile,
    pub(crate) policy: LossPolicy,
    pub(crate) observer: Arc<dyn Observer>,
    pub(crate) path_suffix: Option<String>,
    pub(crate) reasoning_output: ReasoningOutput,
    pub(crate) chat_reasoning: ChatReasoning,
    pub(crate) stateful: Option<crate::stateful::Stateful>,
    pub(crate) tenant_header: Option<http::HeaderName>,
    pub(crate) sealer: Option<Arc<Sealer>>,
}

impl Options {
    /// The tenant of a request: a configured tenant header, else a hash of
    /// the credential, so one key never sees another's state.
    pub(crate) fn tenant(&self, headers: &http::HeaderMap) -> String {
        let header = match &self.tenant_header {
            Some(name) => headers.get(name),
            None => headers.get(http::header::AUTHORIZATION),
        };
        wirebridge_store::tenant_key(header.and_then(|v| v.to_str().ok()))
    }

    /// Whether a request's tenant is needed (for the store or the sealer).
    pub(crate) fn needs_tenant(&self) -> bool {
        self.stateful.is_some() || self.sealer.is_some()
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            body_limit: DEFAULT_BODY_LIMIT,
            max_event_size: DEFAULT_MAX_EVENT_SIZE,
            profile: BackendProfile::default(),
            policy: LossPolicy::default(),
            observer: Arc::new(NoopObserver),
            path_suffix: None,
            reasoning_output: ReasoningOutput::default(),
            chat_reasoning: ChatReasoning::default(),
            stateful: None,
            tenant_header: None,
            sealer: None,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("body_limit", &self.body_limit)
            .field("max_event_size", &self.max_event_size)
            .field("profile", &self.profile.name)
            .field("policy", &self.policy)
            .field("path_suffix", &self.path_suffix)
            .field("store", &self.stateful.is_some())
            .field("sealer", &self.sealer.is_some())
            .finish_non_exhaustive()
    }
}
