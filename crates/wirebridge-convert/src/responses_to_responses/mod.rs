//! Responses clients on Responses backends that keep no state.
//!
//! Servers such as vLLM, SGLang, llama.cpp, Ollama and DeepSeek serve
//! `POST /v1/responses` but keep nothing: they refuse
//! `previous_response_id`, and their streams differ from OpenAI's in the
//! details (no `sequence_number` or `output_index` on some, no echo of the
//! request on others). A response store in front of them completes them:
//!
//! - [`translate_request`]: the client's request, with the stored
//!   conversation it continues written into `input` and the fields only a
//!   stateful server takes (`previous_response_id`, `store`) removed;
//! - [`StreamTranslator`]: the backend's events, re-sent as a stream that
//!   follows the API's grammar, under the response id the store keeps it
//!   by, and ending with the full `Response`;
//! - [`translate_body`] and [`translate_stream_body`]: the same for a
//!   client that asked for a body.
//!
//! Ids are the bridge's own: the response's and its output items' share a
//! stem (see [`ResponseIds`]), so an
//! `item_reference` to any item names the response that holds it. Call ids
//! are the backend's, untouched.
//!
//! ```
//! use wirebridge_convert::responses_to_chat::{History, Options, ParsedRequest};
//! use wirebridge_convert::responses_to_responses::{translate_request, translate_body};
//!
//! // The conversation so far, as a store keeps it.
//! let earlier_input = r#"[{"type":"message","id":"msg_1","role":"user","content":"My name is Ada."}]"#;
//! let earlier_output = r#"[{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello Ada!","annotations":[]}]}]"#;
//! let history = History::new("resp_1", [earlier_input, earlier_output]);
//!
//! let body = br#"{"model":"m","previous_response_id":"resp_1","input":"What is my name?"}"#;
//! let request = ParsedRequest::parse(body).unwrap();
//! let translated = translate_request(request, &history, &Options::default()).unwrap();
//! let upstream: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
//! assert!(upstream.get("previous_response_id").is_none());
//! assert_eq!(upstream["input"][1]["content"][0]["text"], "Hello Ada!");
//! assert_eq!(upstream["input"][2]["content"][0]["text"], "What is my name?");
//!
//! let reply = br#"{"id":"backend-1","object":"response","status":"completed","model":"m",
//!   "output":[{"type":"message","id":"x","role":"assistant","status":"completed",
//!   "content":[{"type":"output_text","text":"Ada.","annotations":[]}]}]}"#;
//! let response = translate_body(reply, &translated.context).unwrap();
//! let response: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
//! assert_eq!(response["previous_response_id"], "resp_1");
//! assert!(response["id"].as_str().unwrap().starts_with("resp_"));
//! assert_ne!(response["id"], "backend-1");
//! ```

mod additional_tools;
mod body;
mod body_events;
mod compaction_items;
mod context_window;
mod input;
mod items;
mod request;
mod stream;

pub(crate) use body::finished_body;
pub use body::{translate_body, translate_stream_body};
pub use body_events::body_events;
pub use request::{
    translate_compacted, translate_compacting, translate_request, TranslatedRequest,
};
pub(crate) use stream::{Delta, DeltaKind};
pub use stream::{StreamTranslator, MAX_HELD_BYTES};

use serde_json::value::RawValue;
use wirebridge_wire::responses::strict::{ResponseEcho, Usage};

use crate::ids::ResponseIds;
use crate::responses_to_chat::Seal;

/// What re-sending the reply needs to know about the request.
#[derive(Debug, Clone, Default)]
pub struct NativeContext {
    /// The model the client asked for.
    pub model: String,
    /// Request fields the `Response` repeats, as the client sent them.
    pub echo: ResponseEcho,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// Whether reasoning text (`reasoning_text` parts) is shown as summary
    /// parts, for a client that asked for a summary.
    pub summary: bool,
    /// The ids of the response and its items.
    pub ids: ResponseIds,
    /// Seals the backend's reasoning into `encrypted_content`, when the
    /// client asked for it (`include: ["reasoning.encrypted_content"]`) and
    /// the backend gave none: the client hands it back, and it is opened
    /// into reasoning text for the backend.
    pub seal: Option<Seal>,
    /// Finished items that come first in the output, before the backend's
    /// (the `compaction` item of a conversation compacted for this
    /// response), each a JSON object.
    pub leading: Vec<Box<RawValue>>,
    /// The tokens spent on this response before the backend's reply (the
    /// summary of a conversation compacted for it), added to the reply's.
    pub prior_usage: Option<Usage>,
}
