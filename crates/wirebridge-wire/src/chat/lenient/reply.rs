//! What a Chat Completions server sends, parsed leniently: `chat.completion`
//! bodies and `chat.completion.chunk` stream chunks.
//!
//! One set of types serves both: a non-streaming choice has a `message`, a
//! streaming one a `delta`, and both have the same fields inside.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{FunctionCall, ToolCall};
use crate::items::Items;
use crate::raw::JsonStr;
use crate::Str;

/// A `chat.completion` body or a `chat.completion.chunk`.
#[derive(Debug, Default, Deserialize)]
pub struct ChatCompletion<'a> {
    /// `chatcmpl-…` id (some servers send `""` on a first chunk).
    #[serde(borrow)]
    pub id: Option<Str<'a>>,
    /// Unix seconds.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub created: Option<u64>,
    /// Model id.
    #[serde(borrow)]
    pub model: Option<Str<'a>>,
    /// The choices; only index 0 is translated.
    #[serde(borrow)]
    pub choices: Option<Items<Choice<'a>>>,
    /// Token usage.
    pub usage: Option<Usage>,
    /// An error reported in-band (`data: {"error": …}` mid-stream).
    #[serde(borrow)]
    pub error: Option<&'a RawValue>,
}

/// One choice.
#[derive(Debug, Default, Deserialize)]
pub struct Choice<'a> {
    /// Choice index (absent means 0).
    pub index: Option<u32>,
    /// The message of a non-streaming choice.
    #[serde(borrow)]
    pub message: Option<ChoiceMessage<'a>>,
    /// The fragment of a streaming choice.
    #[serde(borrow)]
    pub delta: Option<ChoiceMessage<'a>>,
    /// Why generation stopped; `null` until it has.
    #[serde(borrow)]
    pub finish_reason: Option<Str<'a>>,
    /// Token log probabilities.
    #[serde(borrow)]
    pub logprobs: Option<ChoiceLogprobs<'a>>,
}

/// `choices[].logprobs`.
#[derive(Debug, Default, Deserialize)]
pub struct ChoiceLogprobs<'a> {
    /// Per-token entries of the content.
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    /// Per-token entries of the refusal.
    #[serde(borrow)]
    pub refusal: Option<&'a RawValue>,
}

/// The `message` of a body's choice, or the `delta` of a chunk's.
#[derive(Debug, Default, Deserialize)]
pub struct ChoiceMessage<'a> {
    /// Role (first delta only).
    #[serde(borrow)]
    pub role: Option<Str<'a>>,
    /// Text: a string; some servers send a part array in bodies.
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    /// Refusal text.
    #[serde(borrow)]
    pub refusal: Option<JsonStr<'a>>,
    /// Reasoning, as vLLM, DeepSeek and llama.cpp name it.
    #[serde(borrow)]
    pub reasoning_content: Option<JsonStr<'a>>,
    /// Reasoning, as Ollama and OpenRouter name it: a string or an object.
    #[serde(borrow)]
    pub reasoning: Option<&'a RawValue>,
    /// Tool calls (complete in bodies, fragments in deltas).
    #[serde(borrow)]
    pub tool_calls: Option<Items<ToolCall<'a>>>,
    /// The legacy single function call.
    #[serde(borrow)]
    pub function_call: Option<FunctionCall<'a>>,
    /// URL citations.
    #[serde(borrow)]
    pub annotations: Option<&'a RawValue>,
}

/// `usage` of a completion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub prompt_tokens: Option<u64>,
    /// Generated tokens.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub completion_tokens: Option<u64>,
    /// Both.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub total_tokens: Option<u64>,
    /// Prompt breakdown.
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    /// Completion breakdown.
    pub completion_tokens_details: Option<CompletionTokensDetails>,
    /// Reasoning tokens reported at the top level (some DeepSeek hosts).
    #[serde(default, deserialize_with = "crate::count::count")]
    pub reasoning_tokens: Option<u64>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct PromptTokensDetails {
    /// Tokens served from the prompt cache.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub cached_tokens: Option<u64>,
    /// Tokens written to the prompt cache.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub cache_write_tokens: Option<u64>,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct CompletionTokensDetails {
    /// Tokens spent reasoning.
    #[serde(default, deserialize_with = "crate::count::count")]
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
