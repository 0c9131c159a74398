//! The `Response` object and its output items, as emitted.

use serde::Serialize;
use serde_json::value::RawValue;

/// `Response.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseStatus {
    /// A background response not started yet.
    Queued,
    /// Still generating.
    InProgress,
    /// Finished normally.
    Completed,
    /// Stopped early (token limit, content filter).
    Incomplete,
    /// Failed with an error.
    Failed,
    /// A background response stopped by the client.
    Cancelled,
}

impl ResponseStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseStatus::Queued => "queued",
            ResponseStatus::InProgress => "in_progress",
            ResponseStatus::Completed => "completed",
            ResponseStatus::Incomplete => "incomplete",
            ResponseStatus::Failed => "failed",
            ResponseStatus::Cancelled => "cancelled",
        }
    }
}

/// Request fields a `Response` repeats back, in Responses shape.
///
/// Every key both the OpenAI spec and the Open Responses spec list is
/// written, with the value the request gave or, when it gave none, the
/// value that applied (the documented default). Owned, because a response
/// outlives the request buffer it came from.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseEcho {
    /// `background`: whether the response runs in the background.
    pub background: bool,
    /// `frequency_penalty` (default `0`).
    pub frequency_penalty: f64,
    /// `instructions` as sent (a string literal) or `null`.
    pub instructions: Option<Box<RawValue>>,
    /// `max_output_tokens` as sent.
    pub max_output_tokens: Option<u64>,
    /// `max_tool_calls` as sent.
    pub max_tool_calls: Option<u64>,
    /// `parallel_tool_calls` (spec default `true`).
    pub parallel_tool_calls: bool,
    /// `presence_penalty` (default `0`).
    pub presence_penalty: f64,
    /// `previous_response_id` as sent.
    pub previous_response_id: Option<String>,
    /// `prompt_cache_key` as sent.
    pub prompt_cache_key: Option<String>,
    /// `prompt_cache_diagnostics`: why the prompt cache could (not) reuse
    /// the prefix of the response the request named in
    /// `prompt_cache_options.comparison_response_id`; left out when it
    /// named none. Not a request field, but known with the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_diagnostics: Option<Box<RawValue>>,
    /// The conversation the response is part of, when it is in one;
    /// left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ConversationRef>,
    /// `reasoning` as sent, or `null`.
    pub reasoning: Option<Box<RawValue>>,
    /// `safety_identifier` as sent.
    pub safety_identifier: Option<String>,
    /// `service_tier` (default `"default"`).
    pub service_tier: String,
    /// `store` (spec default `true`).
    pub store: bool,
    /// `temperature` (default `1`).
    pub temperature: f64,
    /// `text` as sent, its `format` filled in (default
    /// `{"format":{"type":"text"}}`).
    pub text: Box<RawValue>,
    /// `tool_choice` as sent (default `"auto"`).
    pub tool_choice: Box<RawValue>,
    /// `tools` as sent, with the keys a function tool requires (default `[]`).
    pub tools: Box<RawValue>,
    /// `top_logprobs` (default `0`).
    pub top_logprobs: u32,
    /// `top_p` (default `1`).
    pub top_p: f64,
    /// `truncation` (default `"disabled"`).
    pub truncation: Box<RawValue>,
    /// `user` as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// `metadata` as sent (default `{}`).
    pub metadata: Box<RawValue>,
    /// `input_transformations`: the reasoning inputs withheld from the
    /// model, in input order; left out when none was. Not a request field,
    /// but known with the request, and the same in every `Response` of it.
    /// An addition of the OpenAI SDKs' `Response`, in neither spec.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input_transformations: Vec<InputTransformation>,
}

/// `Response.conversation`: the conversation a response is part of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConversationRef {
    /// The conversation id (`conv_…`).
    pub id: String,
}

/// One entry of `Response.input_transformations`: a reasoning input item
/// withheld from the model (the SDKs' `InputTransformation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputTransformation {
    /// The reasoning item's id, as the client sent it.
    pub id: String,
    /// Always `"removed"`.
    pub action: &'static str,
    /// Why it was withheld.
    pub reason: WithheldReason,
    /// Always `"reasoning"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl InputTransformation {
    /// The reasoning item `id`, removed for `reason`.
    pub fn removed_reasoning(id: impl Into<String>, reason: WithheldReason) -> Self {
        Self {
            id: id.into(),
            action: "removed",
            reason,
            kind: "reasoning",
        }
    }
}

/// Why a reasoning input was withheld: the reasons the SDKs list that a
/// bridge can have (they also list `end_user_mismatch` and
/// `prefix_mismatch`, which it never finds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WithheldReason {
    /// It was sealed for another owner (tenant), or with a key no longer
    /// held: it does not open.
    OrganizationMismatch,
    /// The model reading it cannot take it: made by another server's model,
    /// or for a backend that takes no reasoning back.
    ModelMismatch,
    /// It is from before the turn under way, and the reasoning context
    /// replays only the current turn's.
    TurnBoundary,
}

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).expect("a constant is valid JSON")
}

impl ResponseEcho {
    /// About how many bytes the echo takes written: the text of its values,
    /// and a fixed allowance for its keys, numbers and the rest. For
    /// sizing a buffer before a `Response` is written into it.
    pub fn size_hint(&self) -> usize {
        /// The keys, the numbers and the flags, with room to spare.
        const FIXED: usize = 640;
        let raw = |value: &RawValue| value.get().len();
        let text = |value: &Option<String>| value.as_ref().map_or(0, |v| v.len() + 2);
        FIXED
            + self.instructions.as_deref().map_or(0, raw)
            + self.reasoning.as_deref().map_or(0, raw)
            + raw(&self.text)
            + raw(&self.tool_choice)
            + raw(&self.tools)
            + raw(&self.truncation)
            + raw(&self.metadata)
            + text(&self.previous_response_id)
            + text(&self.prompt_cache_key)
            + self.prompt_cache_diagnostics.as_deref().map_or(0, raw)
            + text(&self.safety_identifier)
            + text(&self.user)
            + self.service_tier.len()
            + self.conversation.as_ref().map_or(0, |c| c.id.len() + 10)
            + self.input_transformations.len() * 96
    }

    /// The default `temperature` and `top_p` of the Responses API.
    pub const DEFAULT_SAMPLING: f64 = 1.0;
    /// The `service_tier` written when the request named none.
    pub const DEFAULT_SERVICE_TIER: &'static str = "default";
    /// The `text` written when the request gave none.
    pub const DEFAULT_TEXT: &'static str = r#"{"format":{"type":"text"}}"#;
    /// The `tool_choice` written when the request gave none.
    pub const DEFAULT_TOOL_CHOICE: &'static str = r#""auto""#;
    /// The `tools` written when the request gave none.
    pub const DEFAULT_TOOLS: &'static str = "[]";
    /// The `truncation` written when the request gave none.
    pub const DEFAULT_TRUNCATION: &'static str = r#""disabled""#;
    /// The `metadata` written when the request gave none.
    pub const DEFAULT_METADATA: &'static str = "{}";

    /// One of the `DEFAULT_…` JSON texts above, as the raw value of its
    /// field.
    pub fn default_raw(json: &'static str) -> Box<RawValue> {
        raw(json)
    }
}

impl Default for ResponseEcho {
    fn default() -> Self {
        Self {
            background: false,
            frequency_penalty: 0.0,
            instructions: None,
            max_output_tokens: None,
            max_tool_calls: None,
            parallel_tool_calls: true,
            presence_penalty: 0.0,
            previous_response_id: None,
            prompt_cache_key: None,
            prompt_cache_diagnostics: None,
            conversation: None,
            reasoning: None,
            safety_identifier: None,
            service_tier: Self::DEFAULT_SERVICE_TIER.to_owned(),
            store: true,
            temperature: Self::DEFAULT_SAMPLING,
            text: raw(Self::DEFAULT_TEXT),
            tool_choice: raw(Self::DEFAULT_TOOL_CHOICE),
            tools: raw(Self::DEFAULT_TOOLS),
            top_logprobs: 0,
            top_p: Self::DEFAULT_SAMPLING,
            truncation: raw(Self::DEFAULT_TRUNCATION),
            user: None,
            metadata: raw(Self::DEFAULT_METADATA),
            input_transformations: Vec::new(),
        }
    }
}

/// A `Response` object (body, and the `response` of lifecycle events).
#[derive(Debug, Serialize)]
pub struct Response<'a> {
    /// `resp_…` id.
    pub id: &'a str,
    /// Always `"response"`.
    pub object: &'static str,
    /// Unix seconds.
    pub created_at: u64,
    /// Status.
    pub status: ResponseStatus,
    /// Unix seconds when finished, else `null`.
    pub completed_at: Option<u64>,
    /// The error of a failed response.
    pub error: Option<ResponseError<'a>>,
    /// Why the response is incomplete.
    pub incomplete_details: Option<IncompleteDetails>,
    /// Model id.
    pub model: &'a str,
    /// Output items, already serialized.
    pub output: &'a [Box<RawValue>],
    /// Token usage; `null` until the upstream reports it.
    pub usage: Option<&'a Usage>,
    /// Request echoes.
    #[serde(flatten)]
    pub echo: &'a ResponseEcho,
}

/// `Response.error`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ResponseError<'a> {
    /// One of the spec's `ResponseErrorCode` values.
    pub code: &'a str,
    /// Human-readable message.
    pub message: &'a str,
}

/// `Response.incomplete_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IncompleteDetails {
    /// Why generation stopped.
    pub reason: IncompleteReason,
}

/// Why a response is incomplete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IncompleteReason {
    /// The token limit was reached.
    MaxOutputTokens,
    /// A content filter stopped generation.
    ContentFilter,
}

/// `Response.usage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Prompt token breakdown.
    pub input_tokens_details: InputTokensDetails,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Generated token breakdown.
    pub output_tokens_details: OutputTokensDetails,
    /// Sum of both.
    pub total_tokens: u64,
}

/// `usage.input_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct InputTokensDetails {
    /// Tokens served from the prompt cache.
    pub cached_tokens: u64,
    /// Tokens written to the prompt cache.
    pub cache_write_tokens: u64,
}

/// `usage.output_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OutputTokensDetails {
    /// Tokens spent reasoning.
    pub reasoning_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The echo at its longest in what is not text: every optional value
    /// set, numbers at their widest.
    fn widest() -> ResponseEcho {
        ResponseEcho {
            background: true,
            frequency_penalty: -0.300_000_000_000_000_04,
            instructions: Some(raw(r#""Answer in French.\nBe brief.""#)),
            max_output_tokens: Some(u64::MAX),
            max_tool_calls: Some(u64::MAX),
            presence_penalty: -0.300_000_000_000_000_04,
            previous_response_id: Some("resp_0123456789abcdef0123456789abcdef".into()),
            prompt_cache_key: Some("a \"quoted\" key".into()),
            prompt_cache_diagnostics: Some(raw(r#"{"type":"cache_hit"}"#)),
            conversation: Some(ConversationRef {
                id: "conv_0123456789abcdef0123456789abcdef".into(),
            }),
            reasoning: Some(raw(r#"{"effort":"high","summary":"auto"}"#)),
            safety_identifier: Some("user-123".into()),
            service_tier: "flex".into(),
            temperature: 0.300_000_000_000_000_04,
            top_logprobs: u32::MAX,
            top_p: 0.300_000_000_000_000_04,
            user: Some("user-123".into()),
            tools: raw(r#"[{"type":"function","name":"f","parameters":{}}]"#),
            input_transformations: vec![InputTransformation::removed_reasoning(
                "rs_0123456789abcdef0123456789abcdef",
                WithheldReason::OrganizationMismatch,
            )],
            ..ResponseEcho::default()
        }
    }

    #[test]
    fn the_size_hint_covers_the_echo_written() {
        for echo in [ResponseEcho::default(), widest()] {
            let written = serde_json::to_vec(&echo).unwrap().len();
            let hint = echo.size_hint();
            assert!(written <= hint, "{written} bytes written, {hint} hinted");
            // Close enough to size a buffer by: not twice what is needed.
            assert!(
                hint < 2 * written + 640,
                "{written} bytes written, {hint} hinted"
            );
        }
    }
}
