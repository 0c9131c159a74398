//! Result types shared by the two grammar checkers.

use serde_json::Value;
use std::fmt;

/// A grammar rule broken by a stream: where, and which rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Index of the offending frame in the slice given to the checker; equal
    /// to the number of frames when the problem is at the end of the stream
    /// (something missing).
    pub frame: usize,
    /// What is wrong, in words that name the rule.
    pub message: String,
}

impl Violation {
    pub(crate) fn new(frame: usize, message: impl Into<String>) -> Self {
        Violation {
            frame,
            message: message.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "frame {}: {}", self.frame, self.message)
    }
}

impl std::error::Error for Violation {}

/// One tool call found in a stream or a body, in a shape common to both APIs
/// so that a translation can be compared with its source directly.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCallRecord {
    /// Function (or custom tool) name.
    pub name: String,
    /// The call id: Chat `tool_calls[].id`, Responses `call_id` (never the
    /// Responses item id `fc_…`).
    pub call_id: String,
    /// Arguments JSON text (function calls) or free-form input (custom tools).
    pub arguments: String,
    /// `"function_call"` or `"custom_tool_call"`, the Responses item type.
    /// Chat `type: "function"` calls are recorded as `"function_call"` and
    /// Chat `type: "custom"` calls as `"custom_tool_call"`.
    pub item_type: String,
}

/// Content carried by a Responses stream or body.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResponsesTranscript {
    /// `response.id` (of the first lifecycle event for recorded streams).
    pub response_id: String,
    /// Final `response.status` (`completed`, `incomplete`, `failed`, …).
    pub status: String,
    /// All `output_text` of all message items, concatenated in order.
    pub text: String,
    /// All refusal text of all message items, concatenated in order.
    pub refusal: String,
    /// Reasoning summary texts and reasoning texts of all reasoning items,
    /// concatenated in stream order with no separator.
    pub reasoning: String,
    /// `function_call` and `custom_tool_call` items, in output order.
    pub function_calls: Vec<ToolCallRecord>,
    /// `response.usage` of the final response, when not null.
    pub usage: Option<Value>,
    /// The error: the nested `error` object of an `error` event when there is
    /// one, else the non-null `response.error`.
    pub error: Option<Value>,
    /// `incomplete_details.reason` of an incomplete response.
    pub incomplete_reason: Option<String>,
    /// The final `response.output` items.
    pub output: Vec<Value>,
}

/// Content carried by a Chat Completions stream or body (choice index 0 only).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatTranscript {
    /// The completion id (`chatcmpl-…`); for recorded streams the first
    /// non-empty one.
    pub id: String,
    /// `content` of choice 0, concatenated.
    pub text: String,
    /// `refusal` of choice 0, concatenated.
    pub refusal: String,
    /// `reasoning_content` (or `reasoning`, when it is a string) of choice 0.
    pub reasoning: String,
    /// Tool calls of choice 0 in index order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// `finish_reason` of choice 0.
    pub finish_reason: Option<String>,
    /// The usage object, when the stream or body has one.
    pub usage: Option<Value>,
    /// The `error` object of an error chunk or error body.
    pub error: Option<Value>,
}

/// Content carried by a Messages stream or `message` body.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessagesTranscript {
    /// The `msg_…` id.
    pub id: String,
    /// The model named in `message_start` (or the body).
    pub model: String,
    /// The text of every text block, concatenated in order.
    pub text: String,
    /// The thinking blocks, in order.
    pub thinking: Vec<ThinkingRecord>,
    /// The tool_use blocks, in order (`call_id` is the block's `id`,
    /// `arguments` its `input` as compact JSON, `item_type` `tool_use`).
    pub tool_calls: Vec<ToolCallRecord>,
    /// The complete content blocks, as a client accumulates them.
    pub blocks: Vec<Value>,
    /// `stop_reason`.
    pub stop_reason: Option<String>,
    /// The usage: `message_start`'s, updated by `message_delta`'s.
    pub usage: Option<Value>,
    /// The `error` object of an `error` event.
    pub error: Option<Value>,
}

/// A thinking block: its text and signature.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThinkingRecord {
    /// The thinking text.
    pub thinking: String,
    /// The signature.
    pub signature: String,
}

/// Fill text / refusal / reasoning / tool calls of a Responses transcript
/// from a list of (complete) output items. Unknown item types are ignored.
pub(crate) fn absorb_output_items(t: &mut ResponsesTranscript, items: &[Value]) {
    for item in items {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => {
                            t.text.push_str(str_field(part, "text"));
                        }
                        Some("refusal") => {
                            t.refusal.push_str(str_field(part, "refusal"));
                        }
                        _ => {}
                    }
                }
            }
            Some("reasoning") => {
                for key in ["summary", "content"] {
                    for part in item
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        t.reasoning.push_str(str_field(part, "text"));
                    }
                }
            }
            Some("function_call") => t.function_calls.push(ToolCallRecord {
                name: str_field(item, "name").to_string(),
                call_id: str_field(item, "call_id").to_string(),
                arguments: match item.get("arguments") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                },
                item_type: "function_call".to_string(),
            }),
            Some("custom_tool_call") => t.function_calls.push(ToolCallRecord {
                name: str_field(item, "name").to_string(),
                call_id: str_field(item, "call_id").to_string(),
                arguments: str_field(item, "input").to_string(),
                item_type: "custom_tool_call".to_string(),
            }),
            _ => {}
        }
    }
}

/// `v[key]` as a string, or `""`.
pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}
