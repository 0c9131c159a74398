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

mod body;
mod collected;
mod items;
mod reply;
mod request;
mod stream;
mod think;
mod tools;

pub use body::{translate_body, TranslatedBody};
pub use collected::translate_stream_body;
pub use request::{translate_request, TranslatedRequest};
pub use stream::StreamTranslator;

use wirebridge_wire::responses::response::ResponseEcho;

use crate::loss::LossPolicy;
use crate::profile::BackendProfile;
use crate::tool_names::ToolNameMap;

/// How to translate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// What the backend accepts.
    pub profile: BackendProfile,
    /// What to do with what cannot be translated.
    pub policy: LossPolicy,
    /// How backend reasoning is shown to the client.
    pub reasoning_output: ReasoningOutput,
}

/// How Chat reasoning text appears in a Responses reasoning item.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReasoningOutput {
    /// As `reasoning_text` content (`response.reasoning_text.*` events): the
    /// model's raw reasoning, which is what Chat backends send.
    #[default]
    Text,
    /// As `summary_text` parts (`response.reasoning_summary_*` events), for
    /// clients that only display summaries.
    Summary,
}

/// What translating the reply needs to know about the request.
#[derive(Debug, Clone, Default)]
pub struct ResponsesContext {
    /// The model the client asked for.
    pub model: String,
    /// Request fields the `Response` repeats.
    pub echo: ResponseEcho,
    /// Chat function names that stand for namespaced or custom tools.
    pub tool_names: ToolNameMap,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// How reasoning is shown.
    pub reasoning_output: ReasoningOutput,
    /// Whether the backend writes reasoning inline as `<think>` tags.
    pub think_tags: crate::profile::ThinkTags,
}
