//! What a reply contained, for observers and logs: how it ended, its usage
//! and its tool calls. Filled in by the translators as they go, so nothing
//! is parsed twice.

/// Token usage, in neutral terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// Prompt tokens.
    pub input: u64,
    /// Generated tokens.
    pub output: u64,
    /// Prompt tokens served from a cache.
    pub cached: u64,
    /// Generated tokens spent reasoning.
    pub reasoning: u64,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallSummary {
    /// Tool name, as the client knows it.
    pub name: String,
    /// Call id.
    pub call_id: String,
    /// Size of the arguments (or custom input), in bytes of JSON text.
    pub argument_bytes: usize,
}

/// The gist of a translated reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplySummary {
    /// How it ended, in the client's terms: a Responses status (`completed`,
    /// `incomplete`, `failed`) or a Chat `finish_reason` (`stop`, `length`,
    /// `tool_calls`, `content_filter`, or `error`).
    pub outcome: Option<String>,
    /// Token usage, when the upstream reported it.
    pub usage: Option<TokenUsage>,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCallSummary>,
}
