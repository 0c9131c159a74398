//! What a Responses backend sends, parsed leniently: stream events and
//! `Response` bodies.
//!
//! One flat struct covers every event type: fields that only some events
//! carry are optional, and fields whose shape varies stay raw. Events of
//! types this crate does not know still parse.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::ContentPart;
use crate::raw::JsonStr;
use crate::Str;

/// A stream event.
#[derive(Debug, Default, Deserialize)]
pub struct StreamEvent<'a> {
    /// Event type, such as `response.output_text.delta`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Position in the stream.
    pub sequence_number: Option<u64>,
    /// The response, on lifecycle events.
    #[serde(borrow)]
    pub response: Option<&'a RawValue>,
    /// The item, on `output_item.added` / `.done`.
    #[serde(borrow)]
    pub item: Option<OutputItem<'a>>,
    /// Item position.
    pub output_index: Option<u32>,
    /// Item id.
    #[serde(borrow)]
    pub item_id: Option<Str<'a>>,
    /// Content part position.
    pub content_index: Option<u32>,
    /// Summary part position.
    pub summary_index: Option<u32>,
    /// A text fragment (a string on the events translated here).
    #[serde(borrow)]
    pub delta: Option<&'a RawValue>,
    /// Full text, on `*.done` events.
    #[serde(borrow)]
    pub text: Option<JsonStr<'a>>,
    /// Full refusal, on `refusal.done`.
    #[serde(borrow)]
    pub refusal: Option<JsonStr<'a>>,
    /// Full arguments, on `function_call_arguments.done`.
    #[serde(borrow)]
    pub arguments: Option<&'a RawValue>,
    /// Function name, on `function_call_arguments.done`.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Full input, on `custom_tool_call_input.done`.
    #[serde(borrow)]
    pub input: Option<JsonStr<'a>>,
    /// Token log probabilities of a text delta.
    #[serde(borrow)]
    pub logprobs: Option<&'a RawValue>,
    /// An annotation, on `output_text.annotation.added`.
    #[serde(borrow)]
    pub annotation: Option<&'a RawValue>,
    /// The error of an `error` event: nested (as OpenAI sends it) ...
    #[serde(borrow)]
    pub error: Option<&'a RawValue>,
    /// ... or flat (as the OpenAPI spec defines it).
    #[serde(borrow)]
    pub message: Option<Str<'a>>,
    /// Flat error code.
    #[serde(borrow)]
    pub code: Option<&'a RawValue>,
    /// Flat error parameter.
    #[serde(borrow)]
    pub param: Option<Str<'a>>,
}

impl StreamEvent<'_> {
    /// The event type, or `""`.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }
}

/// An output item, in an event or a body.
#[derive(Debug, Default, Deserialize)]
pub struct OutputItem<'a> {
    /// Item type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Item id.
    #[serde(borrow)]
    pub id: Option<Str<'a>>,
    /// Item status.
    #[serde(borrow)]
    pub status: Option<Str<'a>>,
    /// Message or reasoning content parts (raw: shapes vary by item type).
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    /// Reasoning summary parts.
    #[serde(borrow)]
    pub summary: Option<&'a RawValue>,
    /// Tool call id.
    #[serde(borrow)]
    pub call_id: Option<Str<'a>>,
    /// Tool name.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Tool namespace.
    #[serde(borrow)]
    pub namespace: Option<Str<'a>>,
    /// Function-call arguments (a JSON string).
    #[serde(borrow)]
    pub arguments: Option<&'a RawValue>,
    /// Custom tool call input.
    #[serde(borrow)]
    pub input: Option<JsonStr<'a>>,
    /// The opaque carrier of a reasoning item's reasoning.
    #[serde(borrow)]
    pub encrypted_content: Option<JsonStr<'a>>,
}

impl OutputItem<'_> {
    /// The item type, or `""`.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }

    /// Parses `content` as parts; anything else gives no parts.
    pub fn parts(&self) -> Vec<ContentPart<'_>> {
        parse_parts(self.content)
    }

    /// Parses `summary` as parts.
    pub fn summary_parts(&self) -> Vec<ContentPart<'_>> {
        parse_parts(self.summary)
    }
}

fn parse_parts(raw: Option<&RawValue>) -> Vec<ContentPart<'_>> {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default()
}

/// A `Response` (a body, or the `response` of a lifecycle event).
#[derive(Debug, Default, Deserialize)]
pub struct ResponseBody<'a> {
    /// `resp_…` id.
    #[serde(borrow)]
    pub id: Option<Str<'a>>,
    /// Unix seconds.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub created_at: Option<u64>,
    /// Model id.
    #[serde(borrow)]
    pub model: Option<Str<'a>>,
    /// Status.
    #[serde(borrow)]
    pub status: Option<Str<'a>>,
    /// Output items.
    #[serde(borrow)]
    pub output: Option<Vec<OutputItem<'a>>>,
    /// Token usage.
    pub usage: Option<Usage>,
    /// The error of a failed response.
    #[serde(borrow)]
    pub error: Option<&'a RawValue>,
    /// Why the response is incomplete.
    #[serde(borrow)]
    pub incomplete_details: Option<IncompleteDetails<'a>>,
}

/// `incomplete_details`.
#[derive(Debug, Default, Deserialize)]
pub struct IncompleteDetails<'a> {
    /// `max_output_tokens` or `content_filter`.
    #[serde(borrow)]
    pub reason: Option<Str<'a>>,
}

/// `usage` of a response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub input_tokens: Option<u64>,
    /// Generated tokens.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub output_tokens: Option<u64>,
    /// Both.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub total_tokens: Option<u64>,
    /// Prompt breakdown.
    pub input_tokens_details: Option<InputDetails>,
    /// Output breakdown.
    pub output_tokens_details: Option<OutputDetails>,
}

/// `usage.input_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct InputDetails {
    /// Tokens served from the prompt cache.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub cached_tokens: Option<u64>,
    /// Tokens written to the prompt cache.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub cache_write_tokens: Option<u64>,
}

/// `usage.output_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct OutputDetails {
    /// Tokens spent reasoning.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub reasoning_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_of_every_shape() {
        let e: StreamEvent<'_> = serde_json::from_str(
            r#"{"type":"response.output_text.delta","sequence_number":4,"item_id":"m","output_index":0,"content_index":0,"delta":"Hi","logprobs":[],"obfuscation":"x"}"#,
        )
        .unwrap();
        assert_eq!(e.kind(), "response.output_text.delta");
        assert_eq!(e.delta.unwrap().get(), r#""Hi""#);
        let e: StreamEvent<'_> = serde_json::from_str(
            r#"{"type":"response.output_item.added","item":{"type":"web_search_call","id":"ws","status":"in_progress","action":{"type":"search"}}}"#,
        )
        .unwrap();
        assert_eq!(e.item.unwrap().kind(), "web_search_call");
        let e: StreamEvent<'_> =
            serde_json::from_str(r#"{"type":"response.image_generation_call.partial_image","partial_image_b64":"AA","delta":{"x":1}}"#).unwrap();
        assert!(e.delta.is_some());
    }

    #[test]
    fn parses_a_body_with_nulls() {
        let r: ResponseBody<'_> = serde_json::from_str(
            r#"{"id":"resp_1","created_at":1.0,"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"a","annotations":[]}]}],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3,"input_tokens_details":null},"user":null}"#,
        )
        .unwrap();
        assert_eq!(r.output.unwrap()[0].parts()[0].text.unwrap().escaped(), "a");
        assert_eq!(r.usage.unwrap().total_tokens, Some(3));
    }
}
