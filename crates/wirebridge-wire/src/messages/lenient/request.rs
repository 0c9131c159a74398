//! `POST /v1/messages` request bodies, parsed leniently.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Content;
use crate::raw::JsonStr;
use crate::Str;

/// A `POST /v1/messages` body.
///
/// ```
/// use wirebridge_wire::messages::lenient::CreateMessage;
///
/// let body = br#"{"model":"claude-sonnet-4-5","max_tokens":1024,
///   "system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],
///   "messages":[{"role":"user","content":"Hi"}],
///   "thinking":{"type":"enabled","budget_tokens":2048},"context_management":{"edits":[]}}"#;
/// let request: CreateMessage<'_> = serde_json::from_slice(body).unwrap();
/// assert_eq!(request.max_tokens, Some(1024));
/// assert_eq!(request.thinking.unwrap().budget_tokens, Some(2048));
/// ```
#[derive(Debug, Default, Deserialize)]
pub struct CreateMessage<'a> {
    /// Model id.
    #[serde(borrow)]
    pub model: Option<Str<'a>>,
    /// The most tokens to generate, thinking included.
    pub max_tokens: Option<u64>,
    /// The conversation.
    #[serde(borrow)]
    pub messages: Option<Vec<Message<'a>>>,
    /// The system prompt: a string or text blocks (raw; see
    /// [`Content::from_raw`]).
    #[serde(borrow)]
    pub system: Option<&'a RawValue>,
    /// `system` parsed, when [`CreateMessage::read`] read it: what
    /// [`Content::from_raw`] gives for the raw text.
    #[serde(skip)]
    pub parsed_system: Option<Content<'a>>,
    /// Tools the model may call: custom tools, and tools Anthropic defines.
    #[serde(borrow)]
    pub tools: Option<Vec<Tool<'a>>>,
    /// How the model picks tools.
    #[serde(borrow)]
    pub tool_choice: Option<ToolChoice<'a>>,
    /// Extended thinking.
    #[serde(borrow)]
    pub thinking: Option<Thinking<'a>>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Sample only from the `top_k` most likely tokens.
    pub top_k: Option<u64>,
    /// Text that ends generation.
    #[serde(borrow)]
    pub stop_sequences: Option<Vec<Str<'a>>>,
    /// Whether to stream.
    pub stream: Option<bool>,
    /// `{user_id}`.
    #[serde(borrow)]
    pub metadata: Option<Metadata<'a>>,
    /// Effort and output format.
    #[serde(borrow)]
    pub output_config: Option<OutputConfig<'a>>,
    /// The output format as the first structured-outputs beta placed it,
    /// before it moved into `output_config`.
    #[serde(borrow)]
    pub output_format: Option<OutputFormat<'a>>,
    /// Edits the server makes to the conversation (context editing).
    #[serde(borrow)]
    pub context_management: Option<ContextManagement<'a>>,
    /// `auto` or `standard_only`.
    #[serde(borrow)]
    pub service_tier: Option<Str<'a>>,
    /// A cache breakpoint on the last cacheable block.
    #[serde(borrow)]
    pub cache_control: Option<&'a RawValue>,
    /// A code-execution container to reuse.
    #[serde(borrow)]
    pub container: Option<&'a RawValue>,
    /// Where inference runs.
    #[serde(borrow)]
    pub inference_geo: Option<Str<'a>>,
    /// MCP servers the API calls itself.
    #[serde(borrow)]
    pub mcp_servers: Option<&'a RawValue>,
    /// Server-held conversation state: start a thread, or continue one.
    #[serde(borrow)]
    pub thread: Option<Thread<'a>>,
    /// `{previous_message_id}`: prompt cache diagnostics asked for, kept
    /// raw (read by the translator, which names what is wrong in it).
    #[serde(borrow)]
    pub diagnostics: Option<&'a RawValue>,
    /// `{type: "summarize", instructions?}`: the request asks for the
    /// conversation compacted, kept raw (read by the translator, which
    /// names what is wrong in it).
    #[serde(borrow)]
    pub compaction: Option<&'a RawValue>,
}

/// `thread`: `{type: "create"}`, which keeps the conversation under the
/// reply's `id`, or `{type: "continue", previous_message_id}`, which
/// sends only the turns after that reply.
#[derive(Debug, Default, Deserialize)]
pub struct Thread<'a> {
    /// `create` or `continue`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// The `id` of the reply a `continue` follows.
    #[serde(borrow)]
    pub previous_message_id: Option<Str<'a>>,
}

/// One message. Messages have no `system` role; `system` is a field of the
/// request.
#[derive(Debug, Default, Deserialize)]
pub struct Message<'a> {
    /// `user` or `assistant`.
    #[serde(borrow)]
    pub role: Option<Str<'a>>,
    /// A string or blocks (raw; see [`Content::from_raw`]).
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    /// `content` parsed, when [`CreateMessage::read`] read it: what
    /// [`Content::from_raw`] gives for the raw text.
    #[serde(skip)]
    pub parsed_content: Option<Content<'a>>,
}

/// One entry of `tools`: a custom tool (no `type`, or `custom`), or a tool
/// Anthropic defines (`web_search_20250305`, `bash_20250124`, …).
#[derive(Debug, Default, Deserialize)]
pub struct Tool<'a> {
    /// Tool type; absent for custom tools.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Name.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Description.
    #[serde(borrow)]
    pub description: Option<JsonStr<'a>>,
    /// JSON Schema of the input.
    #[serde(borrow)]
    pub input_schema: Option<&'a RawValue>,
    /// Strict schema adherence.
    pub strict: Option<bool>,
    /// A prompt-cache breakpoint.
    #[serde(borrow)]
    pub cache_control: Option<&'a RawValue>,
    /// Loaded only when a tool search finds it.
    pub defer_loading: Option<bool>,
}

impl Tool<'_> {
    /// The tool type; absent means `custom`.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("custom")
    }
}

/// `tool_choice`: `{type: auto|any|tool|none, name?, disable_parallel_tool_use?}`.
#[derive(Debug, Default, Deserialize)]
pub struct ToolChoice<'a> {
    /// `auto`, `any`, `tool` or `none`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// The tool, for `tool`.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// At most one tool call per turn.
    pub disable_parallel_tool_use: Option<bool>,
}

/// `thinking`: `{type: enabled, budget_tokens}`, `{type: adaptive}` or
/// `{type: disabled}`, with an optional `display`.
#[derive(Debug, Default, Deserialize)]
pub struct Thinking<'a> {
    /// `enabled`, `adaptive` or `disabled`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Tokens the model may spend thinking (`enabled`).
    pub budget_tokens: Option<u64>,
    /// `summarized` (the default) or `omitted`.
    #[serde(borrow)]
    pub display: Option<Str<'a>>,
}

/// `metadata`.
#[derive(Debug, Default, Deserialize)]
pub struct Metadata<'a> {
    /// An opaque id of the end user.
    #[serde(borrow)]
    pub user_id: Option<Str<'a>>,
}

/// `output_config`.
#[derive(Debug, Default, Deserialize)]
pub struct OutputConfig<'a> {
    /// `low`, `medium`, `high`, `xhigh` or `max`.
    #[serde(borrow)]
    pub effort: Option<Str<'a>>,
    /// A JSON schema the answer follows.
    #[serde(borrow)]
    pub format: Option<OutputFormat<'a>>,
}

/// `output_config.format`: `{type: json_schema, schema}`.
#[derive(Debug, Default, Deserialize)]
pub struct OutputFormat<'a> {
    /// `json_schema`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// The schema.
    #[serde(borrow)]
    pub schema: Option<&'a RawValue>,
}

/// `context_management`: the edits the server makes to the conversation.
#[derive(Debug, Default, Deserialize)]
pub struct ContextManagement<'a> {
    /// The edits, in order.
    #[serde(borrow)]
    pub edits: Option<Vec<ContextEdit<'a>>>,
}

/// One context edit, such as `{type: clear_thinking_20251015, keep: all}`.
#[derive(Debug, Default, Deserialize)]
pub struct ContextEdit<'a> {
    /// Edit type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// What the edit keeps: `"all"`, or `{type, value}`.
    #[serde(borrow)]
    pub keep: Option<&'a RawValue>,
    /// A compaction edit's threshold: `{type: "input_tokens", value}`.
    #[serde(borrow)]
    pub trigger: Option<&'a RawValue>,
    /// Whether a compaction edit's reply stops after the compaction.
    pub pause_after_compaction: Option<bool>,
    /// A compaction edit's summarizing instructions.
    #[serde(borrow)]
    pub instructions: Option<&'a RawValue>,
}
