//! Chat Completions replies, as emitted: `chat.completion` bodies and
//! `chat.completion.chunk` stream chunks.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::ToolCall;
use crate::raw::JsonText;

/// A `chat.completion.chunk`.
#[derive(Debug, Serialize)]
pub struct ChatChunk<'a> {
    /// `chatcmpl-…` id, the same in every chunk.
    pub id: &'a str,
    /// Always `chat.completion.chunk`.
    pub object: &'static str,
    /// Unix seconds, the same in every chunk.
    pub created: u64,
    /// Model id.
    pub model: &'a str,
    /// One choice, or none in the usage chunk.
    pub choices: &'a [ChunkChoice<'a>],
    /// Usage: `null` on every chunk but the last when the client asked for
    /// it, absent when it did not.
    #[serde(skip_serializing_if = "ChunkUsage::is_omitted")]
    pub usage: ChunkUsage<'a>,
}

/// The `usage` field of a chunk.
#[derive(Debug, Clone, Copy)]
pub enum ChunkUsage<'a> {
    /// No `usage` key.
    Omitted,
    /// `"usage": null`.
    Null,
    /// The usage chunk.
    Usage(&'a CompletionUsage),
}

impl ChunkUsage<'_> {
    /// Whether the key is left out.
    pub fn is_omitted(&self) -> bool {
        matches!(self, ChunkUsage::Omitted)
    }
}

impl Serialize for ChunkUsage<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ChunkUsage::Omitted | ChunkUsage::Null => s.serialize_none(),
            ChunkUsage::Usage(u) => u.serialize(s),
        }
    }
}

/// A choice of a chunk.
#[derive(Debug, Serialize)]
pub struct ChunkChoice<'a> {
    /// Always 0: one answer.
    pub index: u32,
    /// The fragment.
    pub delta: Delta<'a>,
    /// Token log probabilities of this fragment, or `null`.
    pub logprobs: Option<ChoiceLogprobs<'a>>,
    /// Why generation stopped, on the final chunk.
    pub finish_reason: Option<&'static str>,
}

/// `choices[].logprobs`.
#[derive(Debug, Serialize)]
pub struct ChoiceLogprobs<'a> {
    /// Per-token entries of the content.
    pub content: Option<&'a RawValue>,
    /// Per-token entries of the refusal.
    pub refusal: Option<&'a RawValue>,
}

/// `delta` of a chunk.
#[derive(Debug, Default, Serialize)]
pub struct Delta<'a> {
    /// `assistant`, on the first chunk only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    /// A text fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonText<'a>>,
    /// A refusal fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<JsonText<'a>>,
    /// A reasoning fragment, as vLLM and DeepSeek name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<JsonText<'a>>,
    /// A reasoning fragment, as Ollama and OpenRouter name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<JsonText<'a>>,
    /// Tool call fragments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallChunk<'a>>,
}

/// A tool call fragment: `id`, `type` and the name on a call's first
/// fragment only.
#[derive(Debug, Serialize)]
pub struct ToolCallChunk<'a> {
    /// Dense position among the calls, from 0.
    pub index: u32,
    /// Call id (first fragment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    /// `function` or `custom` (first fragment).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// Function name and argument fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionChunk<'a>>,
    /// Custom tool name and input fragment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom: Option<CustomChunk<'a>>,
}

/// `function` of a tool call fragment.
#[derive(Debug, Serialize)]
pub struct FunctionChunk<'a> {
    /// Name (first fragment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// Argument fragment.
    pub arguments: JsonText<'a>,
}

/// `custom` of a custom tool call fragment.
#[derive(Debug, Serialize)]
pub struct CustomChunk<'a> {
    /// Name (first fragment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// Input fragment.
    pub input: JsonText<'a>,
}

/// `usage` of a completion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CompletionUsage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Generated tokens.
    pub completion_tokens: u64,
    /// Both.
    pub total_tokens: u64,
    /// Prompt breakdown.
    pub prompt_tokens_details: PromptDetails,
    /// Completion breakdown.
    pub completion_tokens_details: CompletionDetails,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PromptDetails {
    /// Tokens served from the prompt cache.
    pub cached_tokens: u64,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CompletionDetails {
    /// Tokens spent reasoning.
    pub reasoning_tokens: u64,
}

/// A `chat.completion` body.
#[derive(Debug, Serialize)]
pub struct CompletionBody<'a> {
    /// `chatcmpl-…` id.
    pub id: &'a str,
    /// Always `chat.completion`.
    pub object: &'static str,
    /// Unix seconds.
    pub created: u64,
    /// Model id.
    pub model: &'a str,
    /// One choice.
    pub choices: [BodyChoice<'a>; 1],
    /// Usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<CompletionUsage>,
}

/// The choice of a body.
#[derive(Debug, Serialize)]
pub struct BodyChoice<'a> {
    /// Always 0.
    pub index: u32,
    /// The answer.
    pub message: ReplyMessage<'a>,
    /// Token log probabilities, or `null`.
    pub logprobs: Option<ChoiceLogprobs<'a>>,
    /// Why generation stopped.
    pub finish_reason: &'static str,
}

/// The assistant message of a body.
#[derive(Debug, Serialize)]
pub struct ReplyMessage<'a> {
    /// Always `assistant`.
    pub role: &'static str,
    /// Text, or `null`.
    pub content: Option<JsonText<'a>>,
    /// Refusal, or `null`.
    pub refusal: Option<JsonText<'a>>,
    /// Tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall<'a>>,
    /// URL citations.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<Annotation<'a>>,
    /// Reasoning, as vLLM and DeepSeek name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<JsonText<'a>>,
    /// Reasoning, as Ollama and OpenRouter name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<JsonText<'a>>,
}

/// A citation of a reply message.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Annotation<'a> {
    /// A web page the text cites.
    UrlCitation {
        /// The citation.
        url_citation: UrlCitation<'a>,
    },
}

/// `url_citation` of an annotation.
#[derive(Debug, Serialize)]
pub struct UrlCitation<'a> {
    /// The page.
    pub url: JsonText<'a>,
    /// Its title.
    pub title: JsonText<'a>,
    /// Where the citing text starts in the message content.
    pub start_index: u64,
    /// Where it ends.
    pub end_index: u64,
}
