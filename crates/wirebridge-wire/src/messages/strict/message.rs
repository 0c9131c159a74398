//! The `message` object: a reply body, and (empty) the `message` of
//! `message_start`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::raw::JsonText;

/// A `message` object.
///
/// ```
/// use wirebridge_wire::messages::strict::{ContentBlock, MessageBody, StopReason, Usage};
/// use wirebridge_wire::JsonText;
///
/// let body = MessageBody {
///     id: "msg_1",
///     model: "m",
///     content: vec![ContentBlock::Text { text: JsonText::from_text("Hi") }],
///     stop_reason: Some(StopReason::EndTurn),
///     usage: Usage { input_tokens: 3, output_tokens: 1, ..Usage::default() },
///     ..MessageBody::default()
/// };
/// assert_eq!(
///     serde_json::to_string(&body).unwrap(),
///     concat!(
///         r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","#,
///         r#""content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","stop_sequence":null,"#,
///         r#""usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}"#,
///     )
/// );
/// ```
#[derive(Debug, Serialize)]
pub struct MessageBody<'a> {
    /// `msg_…` id.
    pub id: &'a str,
    /// Always `message`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Always `assistant`.
    pub role: &'static str,
    /// The model that answered.
    pub model: &'a str,
    /// The content blocks (none in `message_start`).
    pub content: Vec<ContentBlock<'a>>,
    /// Why generation stopped (`null` in `message_start`).
    pub stop_reason: Option<StopReason>,
    /// The stop sequence that ended generation, if one did.
    pub stop_sequence: Option<&'a str>,
    /// Token usage.
    pub usage: Usage,
    /// Prompt cache diagnostics (`{"cache_miss_reason":…}`), when the
    /// request asked for them and a divergence was found; left out
    /// otherwise, which the SDKs read as `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<&'a serde_json::value::RawValue>,
}

impl Default for MessageBody<'_> {
    fn default() -> Self {
        Self {
            id: "",
            kind: "message",
            role: "assistant",
            model: "",
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: Usage::default(),
            diagnostics: None,
        }
    }
}

/// A content block of a reply, whole (in a body) or as opened by
/// `content_block_start` (empty text, `{}` input).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock<'a> {
    /// Text.
    Text {
        /// The text.
        text: JsonText<'a>,
    },
    /// The model's thinking, and the signature that carries it to a later
    /// turn.
    Thinking {
        /// The thinking text.
        thinking: JsonText<'a>,
        /// Opaque: sent back as it is, with the block.
        signature: JsonText<'a>,
    },
    /// Thinking that is not shown, only carried.
    RedactedThinking {
        /// Opaque: sent back as it is, with the block.
        data: JsonText<'a>,
    },
    /// A call of a client tool.
    ToolUse {
        /// `toolu_…`-like call id, answered by a `tool_result`.
        id: Cow<'a, str>,
        /// Tool name.
        name: Cow<'a, str>,
        /// The arguments, a JSON object.
        input: Cow<'a, RawValue>,
    },
    /// What stands for the conversation before it: the summary's carrier,
    /// opaque to the client, sent back first in a later request. `null`
    /// as `content_block_start` opens it, before its one delta.
    Compaction {
        /// The carrier.
        content: Option<JsonText<'a>>,
    },
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A natural end.
    EndTurn,
    /// `max_tokens` reached.
    MaxTokens,
    /// A stop sequence was generated.
    StopSequence,
    /// The model called tools.
    ToolUse,
    /// A long turn paused, to be continued.
    PauseTurn,
    /// The model refused.
    Refusal,
    /// The reply is a compaction of the conversation, and nothing else.
    Compaction,
}

impl StopReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::ToolUse => "tool_use",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
            StopReason::Compaction => "compaction",
        }
    }
}

/// `usage`. Anthropic's `input_tokens` counts only the prompt tokens that
/// were neither read from nor written to the cache: the three input counts
/// add up to the whole prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Prompt tokens outside the cache.
    pub input_tokens: u64,
    /// Prompt tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Prompt tokens read from the cache.
    pub cache_read_input_tokens: u64,
    /// Generated tokens, thinking included.
    pub output_tokens: u64,
    /// How many of the generated tokens were thinking, when the backend
    /// counted any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens_details: Option<OutputTokensDetails>,
}

/// `usage.output_tokens_details`: a breakdown of `output_tokens`, which
/// stays the whole count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OutputTokensDetails {
    /// Tokens spent on reasoning, summarized or not.
    pub thinking_tokens: u64,
}
