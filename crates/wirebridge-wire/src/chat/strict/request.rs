//! `POST /v1/chat/completions` request bodies, as emitted.

use std::borrow::Cow;

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::ToolCall;
use crate::raw::JsonText;
use crate::RawObject;

/// A `CreateChatCompletionRequest`.
#[derive(Debug, Default, Serialize)]
pub struct ChatRequest<'a> {
    /// Model id.
    pub model: Cow<'a, str>,
    /// The conversation.
    pub messages: Vec<ChatMessage<'a>>,
    /// Tools the model may call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ChatTool<'a>>>,
    /// How the model picks tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ChatToolChoice<'a>>,
    /// Whether several tool calls may be made in one turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Output format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat<'a>>,
    /// Token limit (current name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u64>,
    /// Token limit (legacy name, still the only one some servers know).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Penalty on tokens already present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    /// Penalty on frequent tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// Return log probabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    /// Most likely tokens per position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    /// Reasoning effort.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<Cow<'a, str>>,
    /// Output verbosity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<Cow<'a, str>>,
    /// End-user id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<Cow<'a, str>>,
    /// Stable end-user id for abuse detection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub safety_identifier: Option<Cow<'a, str>>,
    /// Key-value metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<&'a RawValue>,
    /// Store the completion upstream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    /// Prompt-cache key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<Cow<'a, str>>,
    /// Prompt-cache retention.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_retention: Option<&'a RawValue>,
    /// Service tier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<Cow<'a, str>>,
    /// Built-in web search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web_search_options: Option<WebSearchOptions<'a>>,
    /// Stream the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Streaming options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

/// A message of the conversation.
#[derive(Debug, Serialize)]
pub struct ChatMessage<'a> {
    /// `system`, `developer`, `user`, `assistant` or `tool`.
    pub role: Role,
    /// The content; `null` is written for tool-call-only assistant messages.
    #[serde(skip_serializing_if = "MessageContent::is_absent")]
    pub content: MessageContent<'a>,
    /// Assistant refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<JsonText<'a>>,
    /// Assistant tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall<'a>>,
    /// The call a `tool` message answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Cow<'a, str>>,
    /// Replayed reasoning, in the field vLLM, DeepSeek and llama.cpp read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<JsonText<'a>>,
    /// Replayed reasoning, in the field Ollama and OpenRouter read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<JsonText<'a>>,
}

impl<'a> ChatMessage<'a> {
    /// A message with a role and content and nothing else.
    pub fn new(role: Role, content: MessageContent<'a>) -> Self {
        Self {
            role,
            content,
            refusal: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            reasoning_content: None,
            reasoning: None,
        }
    }
}

/// A message role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// System prompt.
    System,
    /// Developer instructions.
    Developer,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// Message content.
#[derive(Debug, Default)]
pub enum MessageContent<'a> {
    /// No `content` key.
    #[default]
    Absent,
    /// `"content": null`.
    Null,
    /// A string.
    Text(JsonText<'a>),
    /// Typed parts.
    Parts(Vec<ChatPart<'a>>),
}

impl MessageContent<'_> {
    /// Whether the key is left out.
    pub fn is_absent(&self) -> bool {
        matches!(self, MessageContent::Absent)
    }
}

impl Serialize for MessageContent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageContent::Absent | MessageContent::Null => s.serialize_none(),
            MessageContent::Text(t) => t.serialize(s),
            MessageContent::Parts(p) => p.serialize(s),
        }
    }
}

/// A content part.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatPart<'a> {
    /// Text.
    Text {
        /// The text.
        text: JsonText<'a>,
    },
    /// An image by URL or data URL.
    ImageUrl {
        /// The image.
        image_url: ImageUrl<'a>,
    },
    /// A file.
    File {
        /// The file.
        file: FileRef<'a>,
    },
    /// Audio input, `{data, format}`.
    InputAudio {
        /// The audio.
        input_audio: Cow<'a, RawValue>,
    },
    /// A refusal (assistant history).
    Refusal {
        /// Refusal text.
        refusal: JsonText<'a>,
    },
}

/// `image_url` of an image part.
#[derive(Debug, Serialize)]
pub struct ImageUrl<'a> {
    /// URL or data URL.
    pub url: JsonText<'a>,
    /// `auto`, `low` or `high`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<Cow<'a, str>>,
}

/// `file` of a file part.
#[derive(Debug, Serialize)]
pub struct FileRef<'a> {
    /// Inline data (data URL or base64).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_data: Option<JsonText<'a>>,
    /// Uploaded file id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_id: Option<JsonText<'a>>,
    /// File name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<JsonText<'a>>,
}

/// A function tool.
#[derive(Debug, Serialize)]
pub struct ChatTool<'a> {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The function.
    pub function: FunctionDef<'a>,
}

/// `function` of a tool.
#[derive(Debug, Serialize)]
pub struct FunctionDef<'a> {
    /// Name.
    pub name: Cow<'a, str>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<JsonText<'a>>,
    /// JSON Schema of the arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Cow<'a, RawValue>>,
    /// Strict schema adherence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// `tool_choice`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ChatToolChoice<'a> {
    /// `none`, `auto` or `required`.
    Mode(Cow<'a, str>),
    /// One named function.
    Function {
        /// Always `function`.
        #[serde(rename = "type")]
        kind: &'static str,
        /// The function.
        function: NamedFunction<'a>,
    },
}

/// The function of a named tool choice.
#[derive(Debug, Serialize)]
pub struct NamedFunction<'a> {
    /// Function name.
    pub name: Cow<'a, str>,
}

/// `response_format`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseFormat<'a> {
    /// Plain text.
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON matching a schema.
    JsonSchema {
        /// The schema.
        json_schema: JsonSchemaFormat<'a>,
    },
}

/// `response_format.json_schema`.
#[derive(Debug, Serialize)]
pub struct JsonSchemaFormat<'a> {
    /// Schema name.
    pub name: JsonText<'a>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<JsonText<'a>>,
    /// The schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<&'a RawValue>,
    /// Strict adherence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// `web_search_options`.
#[derive(Debug, Default, Serialize)]
pub struct WebSearchOptions<'a> {
    /// Approximate user location.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_location: Option<UserLocation<'a>>,
    /// `low`, `medium` or `high`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_context_size: Option<&'a RawValue>,
}

/// `web_search_options.user_location`:
/// `{"type":"approximate","approximate":{…}}`.
#[derive(Debug, Serialize)]
pub struct UserLocation<'a> {
    /// Always `approximate`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `city`, `country`, `region`, `timezone`, as the client wrote them.
    pub approximate: RawObject<'a>,
}

/// `stream_options`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StreamOptions {
    /// Send a usage chunk before `[DONE]`.
    pub include_usage: bool,
}
