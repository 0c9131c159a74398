//! Sans-IO translators between three APIs, the OpenAI Chat Completions API,
//! the OpenAI Responses API and the Anthropic Messages API, with Responses
//! as the hub: Chat to Responses and back, Messages to Responses (and on to
//! Chat through it), and Responses to a Responses backend that keeps no
//! state, with the conversation a store keeps written into the request.
//!
//! Nothing here does IO: translators take bytes and return bytes, and stream
//! translators are state machines fed one upstream event at a time. The tower
//! layers, a fuzzer or a benchmark can drive them alike.
//!
//! | | request | reply body | reply stream |
//! |---|---|---|---|
//! | **Responses clients, Chat backend** ([`responses_to_chat`]) | [`translate_request`](responses_to_chat::translate_request), or [`ParsedRequest`](responses_to_chat::ParsedRequest) with a stored [`History`](responses_to_chat::History) | [`translate_body`](responses_to_chat::translate_body): `chat.completion` → `Response` | [`StreamTranslator`](responses_to_chat::StreamTranslator): Chat chunk → Responses events |
//! | **Chat clients, Responses backend** ([`chat_to_responses`]) | [`translate_request`](chat_to_responses::translate_request) | [`translate_body`](chat_to_responses::translate_body): `Response` → `chat.completion` | [`StreamTranslator`](chat_to_responses::StreamTranslator): Responses event → Chat chunks |
//! | **Responses clients, stateless Responses backend** ([`responses_to_responses`]) | [`translate_request`](responses_to_responses::translate_request), with a stored [`History`](responses_to_chat::History) | [`translate_body`](responses_to_responses::translate_body): the backend's `Response` → the client's, under the bridge's ids | [`StreamTranslator`](responses_to_responses::StreamTranslator): the backend's events → events that follow the API's grammar |
//! | **Anthropic Messages clients, Responses backend** ([`messages_to_responses`]; Chat backends through [`responses_to_chat`] after it) | [`translate_request`](messages_to_responses::translate_request) | [`translate_body`](messages_to_responses::translate_body): `Response` → `message` | [`StreamTranslator`](messages_to_responses::StreamTranslator): Responses event → Messages events |
//!
//! Every stream translator implements [`StreamTranslate`]; an
//! [`SseTranslator`] drives one over upstream bytes (SSE decoding in), and
//! every caller uses it. Translators write events into [`Frames`], framed as
//! their reader needs them: server-sent events for HTTP, bare JSON for a
//! WebSocket or for another translator stacked on top, so nothing decodes
//! what a translator wrote. A backend that streams to a client
//! that asked for a body is answered with `translate_stream_body` in each
//! module.
//!
//! What cannot be translated is never dropped silently: every translation
//! returns a [`LossReport`], and a [`LossPolicy`] decides per [`LossKind`]
//! whether a loss is dropped and reported, or the request is rejected with an
//! error naming the field.
//!
//! ```
//! use wirebridge_convert::responses_to_chat::{ResponsesContext, StreamTranslator};
//! use wirebridge_convert::SseTranslator;
//!
//! // A Chat backend's stream, as bytes from the network.
//! let upstream = concat!(
//!     "data: {\"id\":\"c\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,",
//!     "\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
//! );
//! let mut stream = SseTranslator::new(StreamTranslator::new(ResponsesContext::default()));
//! let mut out = wirebridge_convert::Frames::sse();
//! stream.feed(upstream.as_bytes(), &mut out);
//! stream.finish(&mut out);
//! // The Responses client's stream.
//! let events = String::from_utf8(out.take().bytes).unwrap();
//! assert!(events.starts_with("event: response.created\n"));
//! assert!(events.contains("\"delta\":\"Hi\""));
//! assert!(events.contains("event: response.completed\n"));
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// What a published crate calls `pub` is its API: anything else says how
// far it reaches (`pub(crate)`, `pub(super)`).
#![warn(unreachable_pub)]

pub mod affinity;
pub mod cache_diagnostics;
pub mod catalog;
pub mod chat_to_responses;
pub mod conversation;
pub mod error;
pub mod frames;
mod handed;
pub mod ids;
pub mod loss;
pub mod messages_to_responses;
pub mod profile;
mod recorder;
pub mod responses_to_chat;
pub mod responses_to_messages;
pub mod responses_to_responses;
pub mod seal;
pub mod stream;
pub mod summary;
pub mod tool_names;
mod truncation;
mod unmodeled;

pub use error::ConvertError;
pub use frames::{Frames, Framing};
pub use loss::{Loss, LossAction, LossKind, LossPolicy, LossReport};
pub use profile::BackendProfile;
pub use stream::{SseTranslator, StreamTranslate};
pub use summary::{ReplySummary, TokenUsage, ToolCallSummary};
