//! `POST /v1/responses` request bodies, as emitted.
//!
//! Only fields the `CreateResponse` schema defines, each written only when
//! set, except where the schema requires a key (a function tool's
//! `parameters` and `strict`, an image's `detail`, an output text's
//! `annotations` and `logprobs`).

use std::borrow::Cow;

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::{CustomToolCall, FunctionCall, OutputPart, ReasoningPart};
use crate::raw::JsonText;

/// A `CreateResponse` request body.
#[derive(Debug, Default, Serialize)]
pub struct ResponsesRequest<'a> {
    /// Model id.
    pub model: Cow<'a, str>,
    /// The conversation, as items.
    pub input: Vec<InputItem<'a>>,
    /// System-level instructions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<JsonText<'a>>,
    /// Tools the model may call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool<'a>>>,
    /// How the model picks tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice<'a>>,
    /// Whether several tool calls may be made in one turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Output format and verbosity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<TextParam<'a>>,
    /// Reasoning settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning<'a>>,
    /// Upper bound on generated tokens, reasoning included (at least 16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Most likely tokens to return per position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    /// Extra output to include.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<Cow<'a, str>>>,
    /// End-user id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<Cow<'a, str>>,
    /// Stable end-user id for abuse detection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub safety_identifier: Option<Cow<'a, str>>,
    /// Prompt-cache key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<Cow<'a, str>>,
    /// Prompt-cache retention.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_retention: Option<&'a RawValue>,
    /// Prompt-cache options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_options: Option<&'a RawValue>,
    /// Server-side context management: compaction past a threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_management: Option<&'a RawValue>,
    /// Key-value metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<&'a RawValue>,
    /// Whether the response is stored (Responses default: true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    /// The stored response this one continues.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<Cow<'a, str>>,
    /// Service tier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<Cow<'a, str>>,
    /// Moderation configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moderation: Option<&'a RawValue>,
    /// Stream the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Streaming options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

/// One input item.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputItem<'a> {
    /// A message: `EasyInputMessage` for user, system and developer
    /// messages, `OutputMessage` for assistant history.
    Message(Message<'a>),
    /// A function call from assistant history.
    FunctionCall(FunctionCall<'a>),
    /// A function call's result.
    FunctionCallOutput(ToolCallOutput<'a>),
    /// A custom tool call from assistant history.
    CustomToolCall(CustomToolCall<'a>),
    /// A custom tool call's result.
    CustomToolCallOutput(ToolCallOutput<'a>),
    /// Reasoning from assistant history.
    Reasoning(ReasoningInput<'a>),
    /// What stands for the conversation before it: a summary's carrier,
    /// sent back as it was given.
    Compaction(CompactionInput<'a>),
    /// Asks for the conversation to be compacted, in place of a reply:
    /// always the last item.
    CompactionTrigger,
}

/// A compaction item of the history.
#[derive(Debug, Serialize)]
pub struct CompactionInput<'a> {
    /// The sealed summary.
    pub encrypted_content: JsonText<'a>,
}

/// A reasoning item of assistant history: its visible text as summary
/// parts, and what carries the reasoning itself.
#[derive(Debug, Serialize)]
pub struct ReasoningInput<'a> {
    /// `rs_…` item id (the schema requires one).
    pub id: Cow<'a, str>,
    /// `summary_text` parts.
    pub summary: Vec<ReasoningPart<'a>>,
    /// The opaque carrier of the reasoning, sent back as it was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<JsonText<'a>>,
}

/// A message item.
#[derive(Debug, Serialize)]
pub struct Message<'a> {
    /// Item id (required on assistant history messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Cow<'a, str>>,
    /// Who wrote it.
    pub role: Role,
    /// The content.
    pub content: MessageContent<'a>,
    /// Item status (required on assistant history messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
}

impl<'a> Message<'a> {
    /// A user, system or developer message.
    pub fn input(role: Role, content: MessageContent<'a>) -> Self {
        Self {
            id: None,
            role,
            content,
            status: None,
        }
    }

    /// An assistant message from history, in the `OutputMessage` shape.
    pub fn assistant(id: Cow<'a, str>, parts: Vec<OutputPart<'a>>) -> Self {
        Self {
            id: Some(id),
            role: Role::Assistant,
            content: MessageContent::Output(parts),
            status: Some("completed"),
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
}

/// Message content.
#[derive(Debug)]
pub enum MessageContent<'a> {
    /// A string.
    Text(JsonText<'a>),
    /// Input parts (user, system, developer).
    Input(Vec<InputPart<'a>>),
    /// Output parts (assistant history).
    Output(Vec<OutputPart<'a>>),
}

impl Serialize for MessageContent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageContent::Text(t) => t.serialize(s),
            MessageContent::Input(p) => p.serialize(s),
            MessageContent::Output(p) => p.serialize(s),
        }
    }
}

/// An input content part.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputPart<'a> {
    /// Text.
    InputText {
        /// The text.
        text: JsonText<'a>,
        /// Prompt-cache breakpoint marker.
        #[serde(skip_serializing_if = "Option::is_none")]
        prompt_cache_breakpoint: Option<&'a RawValue>,
    },
    /// An image.
    InputImage {
        /// URL or data URL.
        #[serde(skip_serializing_if = "Option::is_none")]
        image_url: Option<JsonText<'a>>,
        /// Uploaded file id.
        #[serde(skip_serializing_if = "Option::is_none")]
        file_id: Option<JsonText<'a>>,
        /// `low`, `high`, `auto` or `original` (required).
        detail: Cow<'a, str>,
        /// Prompt-cache breakpoint marker.
        #[serde(skip_serializing_if = "Option::is_none")]
        prompt_cache_breakpoint: Option<&'a RawValue>,
    },
    /// A file.
    InputFile {
        /// Uploaded file id.
        #[serde(skip_serializing_if = "Option::is_none")]
        file_id: Option<JsonText<'a>>,
        /// File name.
        #[serde(skip_serializing_if = "Option::is_none")]
        filename: Option<JsonText<'a>>,
        /// Inline contents.
        #[serde(skip_serializing_if = "Option::is_none")]
        file_data: Option<JsonText<'a>>,
        /// Where the file is fetched from.
        #[serde(skip_serializing_if = "Option::is_none")]
        file_url: Option<JsonText<'a>>,
        /// Prompt-cache breakpoint marker.
        #[serde(skip_serializing_if = "Option::is_none")]
        prompt_cache_breakpoint: Option<&'a RawValue>,
    },
    /// Audio, `{data, format}`.
    InputAudio {
        /// The audio.
        input_audio: &'a RawValue,
    },
}

/// The result of a function or custom tool call.
#[derive(Debug, Serialize)]
pub struct ToolCallOutput<'a> {
    /// The call it answers.
    pub call_id: Cow<'a, str>,
    /// The result.
    pub output: ToolOutput<'a>,
}

/// A tool result: a string, or parts (text, images, files).
#[derive(Debug)]
pub enum ToolOutput<'a> {
    /// A string.
    Text(JsonText<'a>),
    /// Parts.
    Parts(Vec<InputPart<'a>>),
}

impl Serialize for ToolOutput<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolOutput::Text(t) => t.serialize(s),
            ToolOutput::Parts(p) => p.serialize(s),
        }
    }
}

/// One entry of `tools`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Tool<'a> {
    /// A function.
    Function(FunctionTool<'a>),
    /// A custom tool taking free-form text.
    Custom(CustomTool<'a>),
    /// The hosted web search tool.
    WebSearch(WebSearchTool<'a>),
}

/// A function tool.
#[derive(Debug, Serialize)]
pub struct FunctionTool<'a> {
    /// Name.
    pub name: Cow<'a, str>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<JsonText<'a>>,
    /// JSON Schema of the arguments; the key is required, `null` allowed.
    pub parameters: Option<&'a RawValue>,
    /// Strict schema adherence; the key is required, `null` allowed.
    pub strict: Option<bool>,
}

/// A custom tool.
#[derive(Debug, Serialize)]
pub struct CustomTool<'a> {
    /// Name.
    pub name: Cow<'a, str>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<JsonText<'a>>,
    /// Input format; absent means free-form text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<CustomFormat<'a>>,
}

/// A custom tool's input format.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CustomFormat<'a> {
    /// Free-form text.
    Text,
    /// Text matching a grammar.
    Grammar {
        /// `lark` or `regex`.
        syntax: Cow<'a, str>,
        /// The grammar.
        definition: JsonText<'a>,
    },
}

/// The hosted web search tool.
#[derive(Debug, Default, Serialize)]
pub struct WebSearchTool<'a> {
    /// Approximate user location.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_location: Option<UserLocation<'a>>,
    /// `low`, `medium` or `high`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_context_size: Option<Cow<'a, str>>,
}

/// An approximate user location.
#[derive(Debug, Default, Serialize)]
pub struct UserLocation<'a> {
    /// Always `approximate`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Two-letter ISO country code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<JsonText<'a>>,
    /// Region, free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<JsonText<'a>>,
    /// City, free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub city: Option<JsonText<'a>>,
    /// IANA time zone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<JsonText<'a>>,
}

/// `tool_choice`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ToolChoice<'a> {
    /// `none`, `auto` or `required`.
    Mode(Cow<'a, str>),
    /// One named tool.
    Tool(ToolRef<'a>),
    /// A subset of the tools.
    Allowed(AllowedTools<'a>),
}

/// A tool named in `tool_choice`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolRef<'a> {
    /// A function.
    Function {
        /// Its name.
        name: Cow<'a, str>,
    },
    /// A custom tool.
    Custom {
        /// Its name.
        name: Cow<'a, str>,
    },
}

/// An `allowed_tools` tool choice.
#[derive(Debug, Serialize)]
pub struct AllowedTools<'a> {
    /// Always `allowed_tools`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `auto` or `required`.
    pub mode: Cow<'a, str>,
    /// The tools the model may call.
    pub tools: Vec<ToolRef<'a>>,
}

/// `text`: output format and verbosity.
#[derive(Debug, Default, Serialize)]
pub struct TextParam<'a> {
    /// Output format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<TextFormat<'a>>,
    /// `low`, `medium` or `high`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<Cow<'a, str>>,
}

/// `text.format`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TextFormat<'a> {
    /// Plain text.
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON matching a schema.
    JsonSchema {
        /// Schema name.
        name: JsonText<'a>,
        /// The schema.
        schema: &'a RawValue,
        /// Description.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<JsonText<'a>>,
        /// Strict adherence.
        #[serde(skip_serializing_if = "Option::is_none")]
        strict: Option<bool>,
    },
}

/// `reasoning`.
#[derive(Debug, Default, Serialize)]
pub struct Reasoning<'a> {
    /// Effort.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort: Option<Cow<'a, str>>,
    /// Summary request: `auto`, `concise` or `detailed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Cow<'a, str>>,
}

/// `stream_options`.
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct StreamOptions {
    /// Pad stream events with random `obfuscation` text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_obfuscation: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_required_keys_and_skips_absent_ones() {
        let request = ResponsesRequest {
            model: "m".into(),
            input: vec![
                InputItem::Message(Message::input(
                    Role::User,
                    MessageContent::Text(JsonText::from_text("hi")),
                )),
                InputItem::Message(Message::assistant(
                    "msg_1".into(),
                    vec![OutputPart::text(JsonText::from_text("yo"))],
                )),
            ],
            tools: Some(vec![Tool::Function(FunctionTool {
                name: "f".into(),
                description: None,
                parameters: None,
                strict: Some(false),
            })]),
            tool_choice: Some(ToolChoice::Tool(ToolRef::Custom { name: "g".into() })),
            ..ResponsesRequest::default()
        };
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            concat!(
                r#"{"model":"m","input":[{"type":"message","role":"user","content":"hi"},"#,
                r#"{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"yo","annotations":[],"logprobs":[]}],"status":"completed"}],"#,
                r#""tools":[{"type":"function","name":"f","parameters":null,"strict":false}],"#,
                r#""tool_choice":{"type":"custom","name":"g"}}"#
            )
        );
    }
}
