//! Anthropic Messages clients (Claude Code, the Anthropic SDKs) on
//! Responses backends, with Responses as the hub: a Messages client on a
//! Chat backend goes Messages → Responses → Chat through
//! [`responses_to_chat`](crate::responses_to_chat), and back.
//!
//! - [`translate_request`]: a `POST /v1/messages` body becomes a
//!   `POST /v1/responses` body, plus the [`MessagesContext`] needed to
//!   translate the reply;
//! - [`translate_body`]: a `Response` body becomes a `message`;
//! - [`StreamTranslator`]: Responses stream events become the Messages
//!   stream (`message_start` … `message_stop`);
//! - [`translate_stream_body`]: an event stream the backend sent although
//!   the client asked for a body becomes a `message` body;
//! - [`error_body`]: a request that cannot be translated (or a backend that
//!   failed) as the status and body a Messages client expects.
//!
//! Thinking is carried across turns by the block's `signature`: a thinking
//! block the bridge writes has the backend reasoning item's
//! `encrypted_content` as its signature (empty when the backend gave none),
//! and a thinking block in the history becomes a `reasoning` item whose
//! `encrypted_content` is that signature again, byte for byte, with the
//! thinking text as its summary. A `redacted_thinking` block's `data` is
//! carried the same way.
//!
//! ```
//! use wirebridge_convert::messages_to_responses::{translate_request, translate_body, Options};
//!
//! let request = br#"{"model":"m","max_tokens":1024,"system":"Be brief.",
//!   "messages":[{"role":"user","content":"Hi"}]}"#;
//! let translated = translate_request(request, &Options::default()).unwrap();
//! let responses: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
//! assert_eq!(responses["instructions"], "Be brief.");
//! assert_eq!(responses["input"][0]["content"], "Hi");
//! assert_eq!(responses["max_output_tokens"], 1024);
//!
//! let reply = br#"{"id":"resp_1","object":"response","status":"completed","model":"m",
//!   "output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed",
//!   "content":[{"type":"output_text","text":"Hello!","annotations":[]}]}],
//!   "usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11,
//!   "input_tokens_details":{"cached_tokens":4}}}"#;
//! let message = translate_body(reply, &translated.context).unwrap();
//! let message: serde_json::Value = serde_json::from_slice(&message.body).unwrap();
//! assert_eq!(message["type"], "message");
//! assert_eq!(message["content"][0]["text"], "Hello!");
//! assert_eq!(message["stop_reason"], "end_turn");
//! // Anthropic counts cached prompt tokens apart from the others.
//! assert_eq!(message["usage"]["input_tokens"], 5);
//! assert_eq!(message["usage"]["cache_read_input_tokens"], 4);
//! ```

mod betas;
mod body;
mod compaction;
mod content;
mod diagnostics;
mod error;
mod items;
mod models;
mod path;
mod reply;
mod request;
mod stream;
mod thinking;
mod thread;
mod tools;
mod unmodeled;

pub use body::{translate_body, translate_stream_body, TranslatedBody};
pub use compaction::{check_compacted, CompactedAt};
pub use diagnostics::CacheDiagnostics;
pub use error::{error_body, error_body_for, error_type_for_status};
pub use models::{model_info, model_list, ModelPage};
pub use request::{translate_request, translate_request_with_betas, TranslatedRequest};
pub use stream::StreamTranslator;
pub use thinking::effort_for_budget;
pub use thread::{held_by_thread, message_id_of, response_id_of, ThreadTurn};

use crate::loss::LossPolicy;

/// How to translate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// What to do with what cannot be translated.
    pub policy: LossPolicy,
}

/// Whether, and how, the backend's reasoning reaches the client as
/// `thinking` blocks: as the client's `thinking` setting asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ThinkingDisplay {
    /// No thinking blocks (`thinking` absent or `disabled`): reasoning the
    /// backend does anyway is left out of the reply.
    #[default]
    Off,
    /// Thinking blocks with the reasoning's summary (or text), and its
    /// signature.
    Summarized,
    /// Thinking blocks with empty text and the signature only
    /// (`display: "omitted"`).
    Omitted,
}

/// What translating the reply needs to know about the request.
#[derive(Debug, Clone, Default)]
pub struct MessagesContext {
    /// The model the client asked for.
    pub model: String,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// How reasoning is shown.
    pub thinking: ThinkingDisplay,
    /// The names of the client's tools, when known. A call to any other
    /// tool is one the backend ran itself: the client can neither run nor
    /// answer it, so it is left out of the reply and reported. `None` lets
    /// every call through.
    pub declared_tools: Option<Vec<String>>,
    /// Whether usage says how many output tokens were thinking (the
    /// client turned on Anthropic's `thinking-token-count` beta).
    pub count_thinking: bool,
    /// What the request's `thread` asks, if it names one: the reply is
    /// then kept, and its `id` is the one the next turn continues from.
    pub thread: Option<ThreadTurn>,
    /// Prompt cache diagnostics, when the request asked for them
    /// (`diagnostics`): the layer sets the Responses side's verdict here
    /// before the reply is translated.
    pub diagnostics: Option<CacheDiagnostics>,
    /// The path of the `compaction` block the conversation was sent from
    /// (`messages[i].content[j]`), if one stood for its earlier turns: the
    /// engine opens its carrier, and refuses the request naming this path
    /// when it does not open.
    pub compacted_at: Option<String>,
}

impl MessagesContext {
    /// Whether a call to `name` is one the backend ran itself.
    pub(crate) fn ran_by_backend(&self, name: &str) -> bool {
        !name.is_empty()
            && self
                .declared_tools
                .as_ref()
                .is_some_and(|tools| !tools.iter().any(|t| t == name))
    }
}
