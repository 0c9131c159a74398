//! Responses clients on backends that speak Anthropic's **Messages** API:
//! Anthropic's own, Claude on other clouds, the Anthropic-compatible
//! endpoints of other providers, and local servers (llama.cpp's
//! `llama-server`, vLLM, Ollama) that serve `POST /v1/messages`.
//!
//! A Messages backend keeps no state, so this is the stateless Responses
//! backend's path ([`responses_to_responses`](crate::responses_to_responses))
//! with one more step each way:
//!
//! - [`translate_request`]: the whole Responses request that path writes
//!   (the stored conversation already in `input`) as a Messages request;
//! - [`StreamTranslator`], [`translate_body`] and [`translate_stream_body`]:
//!   the Messages reply read as Responses events (a body's blocks each
//!   read as a block that opens whole; [`body_events`] writes a body as
//!   the events a stream would have carried, for a client that asked for
//!   one), then re-sent by that path's translator under the bridge's ids,
//!   kept by its store.
//!
//! Thinking comes back as reasoning items whose `encrypted_content` carries
//! each thinking block byte for byte, its signature with it, sealed for
//! the tenant when a sealer is set: the next turn gives the backend exactly
//! what it wrote, as a Messages backend requires of a turn that called
//! tools. What the mapping cannot carry is reported through the loss
//! policy; docs/mappings/responses-messages.md lists it.
//!
//! ```
//! use wirebridge_convert::responses_to_chat::Options;
//! use wirebridge_convert::responses_to_messages::{translate_request, translate_body, ExchangeContext};
//!
//! let request = br#"{"model":"claude-x","instructions":"Be brief.","input":"Hi","max_output_tokens":100}"#;
//! let t = translate_request(request, &Options::default()).unwrap();
//! let sent: serde_json::Value = serde_json::from_slice(&t.body).unwrap();
//! assert_eq!(sent["system"][0]["text"], "Be brief.");
//! assert_eq!(sent["messages"][0]["content"][0]["text"], "Hi");
//! assert_eq!(sent["max_tokens"], 100);
//!
//! let reply = br#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-x",
//!   "content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn",
//!   "usage":{"input_tokens":5,"output_tokens":2,"cache_read_input_tokens":3}}"#;
//! let context = ExchangeContext { backend: t.context, native: Default::default() };
//! let response = translate_body(reply, &context).unwrap();
//! let response: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
//! assert_eq!(response["output"][0]["content"][0]["text"], "Hello!");
//! assert_eq!(response["usage"]["input_tokens"], 8);
//! assert_eq!(response["usage"]["input_tokens_details"]["cached_tokens"], 3);
//! ```

mod at;
mod body;
mod carrier;
mod content;
mod input;
mod reader;
mod request;
mod stream;
mod tools;
mod write;

pub use body::{body_events, translate_body, translate_stream_body};
pub use carrier::{ENCODED as ENCODED_CARRIER, SEALED as SEALED_CARRIER};
pub use request::count_tokens_request;
pub use request::{translate_request, TranslatedRequest};
pub use stream::StreamTranslator;
pub use tools::Declared;

use crate::responses_to_chat::Seal;
use crate::responses_to_responses::NativeContext;

/// What reading a Messages reply needs to know about the request.
#[derive(Debug, Clone, Default)]
pub struct BackendContext {
    /// The tools as the backend was offered them.
    pub tools: Declared,
    /// Seals thinking blocks for the tenant.
    pub seal: Option<Seal>,
}

/// What translating a Messages reply for a Responses client needs: the
/// Messages side's context, and the stateless Responses path's.
#[derive(Debug, Clone, Default)]
pub struct ExchangeContext {
    /// The Messages side.
    pub backend: BackendContext,
    /// The Responses side: ids, echo, what is kept.
    pub native: NativeContext,
}
