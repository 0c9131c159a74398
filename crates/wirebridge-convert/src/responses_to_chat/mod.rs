//! Responses clients on Chat Completions backends.
//!
//! - [`translate_request`]: a `POST /v1/responses` body becomes a
//!   `POST /v1/chat/completions` body, plus the [`ResponsesContext`] needed to
//!   translate the reply;
//! - [`translate_body`]: a `chat.completion` body becomes a `Response`;
//! - [`StreamTranslator`]: `chat.completion.chunk` events become Responses
//!   stream events;
//! - [`translate_stream_body`]: a chunk stream the backend sent although the
//!   client asked for a body becomes a `Response` body.
//!
//! ```
//! use wirebridge_convert::responses_to_chat::{translate_request, translate_body, Options};
//!
//! let request = br#"{"model":"m","instructions":"Be brief.","input":"Hi"}"#;
//! let translated = translate_request(request, &Options::default()).unwrap();
//! let chat: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
//! assert_eq!(chat["messages"][0]["role"], "system");
//! assert_eq!(chat["messages"][1]["content"], "Hi");
//!
//! let reply = br#"{"id":"c1","object":"chat.completion","created":1,"model":"m",
//!   "choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],
//!   "usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#;
//! let response = translate_body(reply, &translated.context).unwrap();
//! let response: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
//! assert_eq!(response["status"], "completed");
//! assert_eq!(response["output"][0]["content"][0]["text"], "Hello!");
//! assert_eq!(response["usage"]["total_tokens"], 7);
//! ```

pub(crate) mod background;
mod body;
mod body_chunks;
mod builder;
mod cache_diagnosis;
mod collected;
pub mod compaction;
mod compaction_items;
mod context_window;
mod echo;
mod finished;
mod history;
mod history_cache;
mod items;
mod passthrough;
mod reasoning;
mod referable;
mod replayed_items;
mod reply;
mod request;
mod spliced;
mod stream;
mod think;
mod tools;
mod warm_up;

pub use body::{translate_body, TranslatedBody};
pub use body_chunks::body_chunks;
pub use collected::translate_stream_body;
#[cfg(test)]
pub(crate) use finished::assert_cut;
pub use finished::{envelope_of, Finished};
pub use history::{History, Turn};
pub use history_cache::{HistoryCache, SharedTurn};
pub use request::{translate_request, ParsedRequest, TranslatedRequest};
pub use stream::StreamTranslator;
pub use warm_up::WarmUp;

// Shared with Responses clients on Responses backends.
pub(crate) use compaction_items::{Cut, Place};
pub(crate) use echo::echo;
pub(crate) use history::turn_input;
pub(crate) use reply::{add_usage, token_usage};

use std::sync::Arc;

use wirebridge_wire::responses::strict::ResponseEcho;

use crate::catalog::ModelCatalog;
use crate::loss::LossPolicy;
use crate::profile::BackendProfile;
pub use crate::profile::ReasoningOutput;
use crate::seal::{OpenError, Purpose, Sealer};
use crate::tool_names::ToolNameMap;
use wirebridge_wire::raw::JsonText;

/// How to translate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// What the backend accepts.
    pub profile: BackendProfile,
    /// What to do with what cannot be translated.
    pub policy: LossPolicy,
    /// How backend reasoning is shown to the client; [`ReasoningOutput::Auto`]
    /// leaves it to the profile.
    pub reasoning_output: ReasoningOutput,
    /// Seals reasoning for clients that ask for
    /// `include: ["reasoning.encrypted_content"]`, and opens what they send
    /// back so it can be replayed. Without it, that `include` is lost.
    pub seal: Option<Seal>,
    /// A response store keeps the responses (see [`History`]): `store` is
    /// honoured rather than lost, and each translation carries the
    /// [`Turn`] to keep.
    pub store: bool,
    /// With [`store`](Self::store): carry the [`Turn`] even when the client
    /// sent `store: false` (its [`Turn::store`] says so), for a cache that
    /// keeps every response of one connection whatever it asked.
    pub keep_unstored: bool,
    /// The model catalog, whose `context_window` of a model wins over the
    /// profile's [`context_window`](BackendProfile::context_window) for
    /// `truncation: "auto"`.
    pub catalog: Option<Arc<ModelCatalog>>,
    /// The caller runs background responses (`background: true`): such a
    /// request is translated as any other, its translation says it
    /// ([`TranslatedRequest::background`]), and the caller answers at once
    /// and runs it. Without it, `background` is lost.
    pub background: bool,
}

impl Options {
    /// The context window of `model`, in tokens, when known: the
    /// catalog's, else the profile's.
    pub fn context_window(&self, model: &str) -> Option<u64> {
        self.catalog
            .as_ref()
            .and_then(|catalog| catalog.context_window(model))
            .or(self.profile.context_window)
    }
}

/// A sealer and the tenant it seals for.
#[derive(Debug, Clone)]
pub struct Seal {
    /// The keys.
    pub sealer: Arc<Sealer>,
    /// The tenant: what one tenant sealed, only that tenant can open.
    pub scope: String,
}

/// What translating the reply needs to know about the request.
#[derive(Debug, Clone, Default)]
pub struct ResponsesContext {
    /// The model the client asked for.
    pub model: String,
    /// Request fields the `Response` repeats.
    pub echo: ResponseEcho,
    /// Chat function names that stand for namespaced, custom or tool-search
    /// tools.
    pub tool_names: ToolNameMap,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// How reasoning is shown: [`ReasoningOutput::Text`] or
    /// [`ReasoningOutput::Summary`] (`Auto` reads as text).
    pub reasoning_output: ReasoningOutput,
    /// Whether the backend writes reasoning inline in the content, between
    /// tags.
    pub think_tags: crate::profile::ThinkTags,
    /// Seals reasoning into `encrypted_content`, when the client asked for it.
    pub seal: Option<Seal>,
    /// The ids of the response: the same stem for the response and every
    /// item of its turn.
    pub ids: crate::ids::ResponseIds,
    /// Finished items that come first in the output, before the reply's
    /// own (the `compaction` item of a conversation compacted for this
    /// response), each a JSON object.
    pub leading: Vec<Box<serde_json::value::RawValue>>,
    /// Tokens spent on this response before the reply (a compaction
    /// pass): added to the reply's usage.
    pub prior_usage: Option<wirebridge_wire::responses::strict::Usage>,
}

impl Seal {
    /// Seals a reasoning text (a JSON string literal) for the client.
    pub(crate) fn reasoning(&self, text: &JsonText<'_>) -> String {
        self.sealer
            .seal(Purpose::Reasoning, &self.scope, text.raw().get().as_bytes())
    }

    /// Opens reasoning the client sent back: the JSON string literal sealed.
    pub(crate) fn open_reasoning(&self, sealed: &str) -> Result<JsonText<'static>, OpenError> {
        let bytes = self.sealer.open(Purpose::Reasoning, &self.scope, sealed)?;
        let literal = String::from_utf8(bytes).map_err(|_| OpenError::Unopenable)?;
        match serde_json::value::RawValue::from_string(literal) {
            Ok(raw) if raw.get().starts_with('"') => Ok(JsonText::Owned(raw)),
            _ => Err(OpenError::Unopenable),
        }
    }
}

impl ResponsesContext {
    /// Whether reasoning is shown as summary parts.
    pub(crate) fn summary_output(&self) -> bool {
        self.reasoning_output == ReasoningOutput::Summary
    }
}
