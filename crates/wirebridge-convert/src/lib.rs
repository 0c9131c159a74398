//! Sans-IO translators between the OpenAI Chat Completions and Responses
//! APIs.
//!
//! Nothing here does IO: translators take bytes and return bytes, and stream
//! translators are state machines fed one upstream event at a time. The tower
//! layers, a fuzzer or a benchmark can drive them alike.
//!
//! What cannot be translated is never dropped silently: every translation
//! returns a [`LossReport`], and a [`LossPolicy`] decides per [`LossKind`]
//! whether a loss is dropped and reported, or the request is rejected with an
//! error naming the field.

#![deny(unsafe_code)]

pub mod chat_to_responses;
pub mod error;
pub mod ids;
pub mod loss;
pub mod profile;
mod recorder;
pub mod responses_to_chat;
pub mod seal;
pub mod stream;
pub mod summary;
pub mod tool_names;

pub use error::ConvertError;
pub use loss::{Loss, LossAction, LossKind, LossPolicy, LossReport};
pub use profile::BackendProfile;
pub use stream::{SseTranslator, StreamTranslate};
pub use summary::{ReplySummary, TokenUsage, ToolCallSummary};
