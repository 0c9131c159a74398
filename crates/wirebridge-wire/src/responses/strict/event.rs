//! Responses stream events, as emitted.
//!
//! Every event is an [`Event`]: `type` and `sequence_number` around one of the
//! body structs below. The SSE event name equals `type`.

use serde::Serialize;
use serde_json::value::RawValue;

#[cfg(doc)]
use super::Response;
use super::{OutputPart, ReasoningPart};
use crate::raw::JsonText;

/// An event: its type, its sequence number and its body.
#[derive(Debug, Serialize)]
pub struct Event<B> {
    /// Event type, also the SSE event name.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Position in the stream, from 0.
    pub sequence_number: u64,
    /// The rest of the event.
    #[serde(flatten)]
    pub body: B,
}

/// `response.created`, `response.in_progress`, and the terminal events:
/// a [`Response`], or one already serialized.
#[derive(Debug, Serialize)]
pub struct Lifecycle<R> {
    /// The response as it stands.
    pub response: R,
}

/// `response.output_item.added` / `.done`.
#[derive(Debug, Serialize)]
pub struct ItemEvent<I> {
    /// Position of the item in `output`.
    pub output_index: usize,
    /// The item: partial when added, complete when done.
    pub item: I,
}

/// `response.content_part.added` / `.done`.
#[derive(Debug, Serialize)]
pub struct ContentPartEvent<'a> {
    /// Item id.
    pub item_id: &'a str,
    /// Item position.
    pub output_index: usize,
    /// Part position in the message.
    pub content_index: usize,
    /// The part.
    pub part: OutputPart<'a>,
}

/// `response.output_text.delta` / `.done`.
#[derive(Debug, Serialize)]
pub struct OutputTextEvent<'a> {
    /// Item id.
    pub item_id: &'a str,
    /// Item position.
    pub output_index: usize,
    /// Part position.
    pub content_index: usize,
    /// The fragment (delta events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<JsonText<'a>>,
    /// The full text (done events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<JsonText<'a>>,
    /// Token log probabilities (a JSON array).
    pub logprobs: &'a RawValue,
}

/// `response.refusal.delta` / `.done`.
#[derive(Debug, Serialize)]
pub struct RefusalEvent<'a> {
    /// Item id.
    pub item_id: &'a str,
    /// Item position.
    pub output_index: usize,
    /// Part position.
    pub content_index: usize,
    /// The fragment (delta events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<JsonText<'a>>,
    /// The full refusal (done events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<JsonText<'a>>,
}

/// `response.reasoning_summary_part.added` / `.done`.
#[derive(Debug, Serialize)]
pub struct SummaryPartEvent<'a> {
    /// Item id.
    pub item_id: &'a str,
    /// Item position.
    pub output_index: usize,
    /// Summary part position.
    pub summary_index: usize,
    /// The part.
    pub part: ReasoningPart<'a>,
}

/// `response.reasoning_summary_text.delta` / `.done`.
#[derive(Debug, Serialize)]
pub struct SummaryTextEvent<'a> {
    /// Item id.
    pub item_id: &'a str,
    /// Item position.
    pub output_index: usize,
    /// Summary part position.
    pub summary_index: usize,
    /// The fragment (delta events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<JsonText<'a>>,
    /// The full text (done events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<JsonText<'a>>,
}

/// `response.reasoning_text.delta` / `.done`.
#[derive(Debug, Serialize)]
pub struct ReasoningTextEvent<'a> {
    /// Item id.
    pub item_id: &'a str,
    /// Item position.
    pub output_index: usize,
    /// Content part position.
    pub content_index: usize,
    /// The fragment (delta events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<JsonText<'a>>,
    /// The full text (done events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<JsonText<'a>>,
}

/// `response.function_call_arguments.delta` / `.done`.
#[derive(Debug, Serialize)]
pub struct ArgumentsEvent<'a> {
    /// Item id.
    pub item_id: &'a str,
    /// Item position.
    pub output_index: usize,
    /// The fragment (delta events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<JsonText<'a>>,
    /// Function name (done events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// Full arguments (done events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonText<'a>>,
}

/// `response.custom_tool_call_input.delta` / `.done`.
#[derive(Debug, Serialize)]
pub struct CustomInputEvent<'a> {
    /// Item id.
    pub item_id: &'a str,
    /// Item position.
    pub output_index: usize,
    /// The fragment (delta events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<JsonText<'a>>,
    /// Full input (done events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<JsonText<'a>>,
}

/// The `error` event.
///
/// Carries the error twice: flat (`code`, `message`, `param`, as the OpenAPI
/// spec defines the event) and nested under `error` (as OpenAI really sends it
/// and the Open Responses spec defines it). Clients of either shape read it.
#[derive(Debug, Serialize)]
pub struct ErrorEvent<'a> {
    /// Error code, if any.
    pub code: Option<&'a str>,
    /// Human-readable message.
    pub message: &'a str,
    /// The request parameter at fault, if any.
    pub param: Option<&'a str>,
    /// The nested payload.
    pub error: ErrorPayload<'a>,
}

/// The nested payload of [`ErrorEvent`].
#[derive(Debug, Serialize)]
pub struct ErrorPayload<'a> {
    /// Error type (`server_error`, `invalid_request_error`, ...).
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// Error code, if any.
    pub code: Option<&'a str>,
    /// Human-readable message.
    pub message: &'a str,
    /// The request parameter at fault, if any.
    pub param: Option<&'a str>,
}
