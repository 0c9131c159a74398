//! Chat Completions clients on Responses backends.
//!
//! - [`translate_request`]: a `POST /v1/chat/completions` body becomes a
//!   `POST /v1/responses` body, plus the [`ChatContext`] needed to translate
//!   the reply;
//! - [`translate_body`]: a `Response` body becomes a `chat.completion`;
//! - [`StreamTranslator`]: Responses stream events become
//!   `chat.completion.chunk` events;
//! - [`translate_stream_body`]: an event stream the backend sent although
//!   the client asked for a body becomes a `chat.completion` body.

mod body;
mod collected;
mod content;
mod messages;
mod reply;
mod request;
mod stream;
mod tools;

pub use body::{translate_body, TranslatedBody};
pub use collected::translate_stream_body;
pub use request::{translate_request, TranslatedRequest};
pub use stream::StreamTranslator;

// Shared with Messages clients on Responses backends.
pub(crate) use content::locate;
pub(crate) use stream::read_event;

use crate::loss::LossPolicy;

/// How to translate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// What to do with what cannot be translated.
    pub policy: LossPolicy,
    /// Where the client wants the backend's reasoning.
    pub reasoning: ChatReasoning,
}

/// Where reasoning from the Responses backend goes in Chat replies.
///
/// Chat Completions has no reasoning field; `reasoning_content` (vLLM,
/// DeepSeek) and `reasoning` (Ollama, OpenRouter) are conventions many Chat
/// clients read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ChatReasoning {
    /// Left out (and reported): the strict Chat Completions shape.
    #[default]
    Omit,
    /// As `reasoning_content`.
    ReasoningContent,
    /// As `reasoning`.
    Reasoning,
}

/// What translating the reply needs to know about the request.
#[derive(Debug, Clone, Default)]
pub struct ChatContext {
    /// The model the client asked for.
    pub model: String,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// Whether the client asked for a usage chunk
    /// (`stream_options.include_usage`).
    pub include_usage: bool,
    /// Whether the client asked for log probabilities.
    pub logprobs: bool,
    /// Where reasoning goes.
    pub reasoning: ChatReasoning,
    /// The names of the tools the client declared (`tools`, legacy
    /// `functions`), when known. A call to any other tool is one the
    /// backend ran itself (xAI's search tools come back so): the client
    /// can neither run nor answer it, so it is left out of the reply and
    /// reported. `None` lets every call through.
    pub declared_tools: Option<Vec<String>>,
    /// The names among [`declared_tools`](Self::declared_tools) the client
    /// declared as `custom` tools (free-form input); the others are
    /// functions. A call to a declared tool takes the tool's form, whatever
    /// item the backend sent it as: a backend may run a call itself and
    /// send it as a `custom_tool_call` (xAI does), and a Chat client reads
    /// a call to one of its functions only as a function call.
    pub declared_custom: Vec<String>,
}

impl ChatContext {
    /// Whether a call to `name` is one the backend ran itself: a tool the
    /// client did not declare, when the declared ones are known. A call
    /// without a name is no one's, and fails as before.
    pub(crate) fn ran_by_backend(&self, name: &str) -> bool {
        !name.is_empty()
            && self
                .declared_tools
                .as_ref()
                .is_some_and(|tools| !tools.iter().any(|t| t == name))
    }

    /// Whether a call to `name`, sent by the backend as a `kind` item
    /// (`function_call` or `custom_tool_call`), reaches the client as a
    /// `custom` call: the form the client declared the tool in, else the
    /// item's own.
    pub(crate) fn custom_call(&self, name: &str, kind: &str) -> bool {
        let declared = self
            .declared_tools
            .as_ref()
            .is_some_and(|tools| tools.iter().any(|t| t == name));
        match declared {
            true => self.declared_custom.iter().any(|t| t == name),
            false => kind == "custom_tool_call",
        }
    }
}

/// The loss of a call the backend ran itself, at `path`.
pub(crate) fn server_call_loss(path: String, kind: &str, name: &str) -> crate::loss::Loss {
    crate::loss::Loss {
        kind: crate::loss::LossKind::UnsupportedItem,
        path,
        reason: format!(
            "a {kind} to '{name}', a tool the request did not declare: the backend ran it \
             itself, and a Chat reply holds only calls for the client to run"
        ),
    }
}
