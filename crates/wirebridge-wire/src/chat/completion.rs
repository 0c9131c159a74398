//! Chat completion bodies and stream chunks, parsed leniently.
//!
//! One set of types serves both: a non-streaming choice has a `message`, a
//! streaming one a `delta`, and both have the same fields inside.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::items::Items;
use crate::raw::JsonStr;

/// A `chat.completion` body or a `chat.completion.chunk`.
#[derive(Debug, Default, Deserialize)]
pub struct ChatCompletion<'a> {
    /// `chatcmpl-…` id (some servers send `""` on a first chunk).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub id: Option<Cow<'a, str>>,
    /// Unix seconds.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub created: Option<u64>,
    /// Model id.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub model: Option<Cow<'a, str>>,
    /// The choices; only index 0 is translated.
    #[serde(borrow, default)]
    pub choices: Option<Items<Choice<'a>>>,
    /// Token usage.
    #[serde(default)]
    pub usage: Option<ChatUsage>,
    /// An error reported in-band (`data: {"error": …}` mid-stream).
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

/// One choice.
#[derive(Debug, Default, Deserialize)]
pub struct Choice<'a> {
    /// Choice index (absent means 0).
    #[serde(default)]
    pub index: Option<u32>,
    /// The message of a non-streaming choice.
    #[serde(borrow, default)]
    pub message: Option<Message<'a>>,
    /// The fragment of a streaming choice.
    #[serde(borrow, default)]
    pub delta: Option<Message<'a>>,
    /// Why generation stopped; `null` until it has.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub finish_reason: Option<Cow<'a, str>>,
    /// Token log probabilities.
    #[serde(borrow, default)]
    pub logprobs: Option<ChoiceLogprobs<'a>>,
}

/// `choices[].logprobs`.
#[derive(Debug, Default, Deserialize)]
pub struct ChoiceLogprobs<'a> {
    /// Per-token entries of the content.
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    /// Per-token entries of the refusal.
    #[serde(borrow, default)]
    pub refusal: Option<&'a RawValue>,
}

/// A message or a delta.
#[derive(Debug, Default, Deserialize)]
pub struct Message<'a> {
    /// Role (first delta only).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub role: Option<Cow<'a, str>>,
    /// Text: a string; some servers send a part array in bodies.
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    /// Refusal text.
    #[serde(borrow, default)]
    pub refusal: Option<JsonStr<'a>>,
    /// Reasoning, as vLLM, DeepSeek and llama.cpp name it.
    #[serde(borrow, default)]
    pub reasoning_content: Option<JsonStr<'a>>,
    /// Reasoning, as Ollama and OpenRouter name it: a string or an object.
    #[serde(borrow, default)]
    pub reasoning: Option<&'a RawValue>,
    /// Tool calls (complete in bodies, fragments in deltas).
    #[serde(borrow, default)]
    pub tool_calls: Option<Items<ToolCall<'a>>>,
    /// The legacy single function call.
    #[serde(borrow, default)]
    pub function_call: Option<FunctionCall<'a>>,
    /// URL citations.
    #[serde(borrow, default)]
    pub annotations: Option<&'a RawValue>,
}

/// A tool call, or a fragment of one.
#[derive(Debug, Default, Deserialize)]
pub struct ToolCall<'a> {
    /// Position among the calls of a choice (fragments only).
    #[serde(default)]
    pub index: Option<u32>,
    /// Call id (first fragment only).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub id: Option<Cow<'a, str>>,
    /// `function` or `custom`.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub call_type: Option<Cow<'a, str>>,
    /// Function name and arguments.
    #[serde(borrow, default)]
    pub function: Option<FunctionCall<'a>>,
    /// Custom tool name and input.
    #[serde(borrow, default)]
    pub custom: Option<CustomCall<'a>>,
}

/// `function` of a tool call.
#[derive(Debug, Default, Deserialize)]
pub struct FunctionCall<'a> {
    /// Function name.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
    /// Arguments: a JSON string, or an object from some servers.
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
}

/// `custom` of a custom tool call.
#[derive(Debug, Default, Deserialize)]
pub struct CustomCall<'a> {
    /// Tool name.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
    /// Freeform input.
    #[serde(borrow, default)]
    pub input: Option<JsonStr<'a>>,
}

/// `usage` of a completion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct ChatUsage {
    /// Prompt tokens.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub prompt_tokens: Option<u64>,
    /// Generated tokens.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub completion_tokens: Option<u64>,
    /// Both.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub total_tokens: Option<u64>,
    /// Prompt breakdown.
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    /// Completion breakdown.
    #[serde(default)]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
    /// Reasoning tokens reported at the top level (some DeepSeek hosts).
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub reasoning_tokens: Option<u64>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct PromptTokensDetails {
    /// Tokens served from the prompt cache.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub cached_tokens: Option<u64>,
    /// Tokens written to the prompt cache.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub cache_write_tokens: Option<u64>,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct CompletionTokensDetails {
    /// Tokens spent reasoning.
    #[serde(default, deserialize_with = "crate::lenient::count")]
    pub reasoning_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_streaming_tool_fragment() {
        let chunk: ChatCompletion<'_> = serde_json::from_str(
            r#"{"id":"c","created":1.0,"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"a"}}]},"finish_reason":null}],"usage":null}"#,
        )
        .unwrap();
        let choices = chunk.choices.unwrap();
        let calls = choices[0]
            .delta
            .as_ref()
            .unwrap()
            .tool_calls
            .as_ref()
            .unwrap();
        assert_eq!(calls[0].index, Some(1));
        assert_eq!(
            calls[0].function.as_ref().unwrap().arguments.unwrap().get(),
            r#""{\"a""#
        );
        assert_eq!(chunk.created, Some(1));
    }

    #[test]
    fn tolerates_nulls_everywhere() {
        let chunk: ChatCompletion<'_> = serde_json::from_str(
            r#"{"id":null,"choices":null,"usage":{"prompt_tokens":1,"completion_tokens":null,"prompt_tokens_details":null}}"#,
        )
        .unwrap();
        assert_eq!(chunk.usage.unwrap().prompt_tokens, Some(1));
    }
}
