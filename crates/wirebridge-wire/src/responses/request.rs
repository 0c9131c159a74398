//! `POST /v1/responses` request bodies, parsed leniently.
//!
//! Items, content parts and tools are each one flat struct holding the union
//! of the fields their variants use. Fields whose shape differs between
//! variants stay raw until the item's kind is known, so an item type this
//! crate has never heard of still parses.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::raw::JsonStr;

/// A `CreateResponse` request body.
#[derive(Debug, Default, Deserialize)]
pub struct CreateResponse<'a> {
    /// Model id.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub model: Option<Cow<'a, str>>,
    /// A string, or an array of items.
    #[serde(borrow, default)]
    pub input: Option<Input<'a>>,
    /// System-level instructions.
    #[serde(borrow, default)]
    pub instructions: Option<JsonStr<'a>>,
    /// Tools the model may call (raw: echoed as sent; see [`Self::parse_tools`]).
    #[serde(borrow, default)]
    pub tools: Option<&'a RawValue>,
    /// How the model picks tools (raw: a string or an object).
    #[serde(borrow, default)]
    pub tool_choice: Option<&'a RawValue>,
    /// Whether several tool calls may be made in one turn.
    #[serde(default)]
    pub parallel_tool_calls: Option<bool>,
    /// Output format and verbosity (raw; see [`Self::parse_text`]).
    #[serde(borrow, default)]
    pub text: Option<&'a RawValue>,
    /// Upper bound on generated tokens.
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Number of most likely tokens to return with log probabilities.
    #[serde(default)]
    pub top_logprobs: Option<u32>,
    /// Penalty on tokens already present (Open Responses).
    #[serde(default)]
    pub presence_penalty: Option<f64>,
    /// Penalty on frequent tokens (Open Responses).
    #[serde(default)]
    pub frequency_penalty: Option<f64>,
    /// Reasoning configuration (raw; see [`Self::parse_reasoning`]).
    #[serde(borrow, default)]
    pub reasoning: Option<&'a RawValue>,
    /// End-user id (deprecated upstream in favour of `safety_identifier`).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub user: Option<Cow<'a, str>>,
    /// Stable end-user id for abuse detection.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub safety_identifier: Option<Cow<'a, str>>,
    /// Whether to stream.
    #[serde(default)]
    pub stream: Option<bool>,
    /// Stream options.
    #[serde(borrow, default)]
    pub stream_options: Option<&'a RawValue>,
    /// Whether the response is stored server-side (spec default: true).
    #[serde(default)]
    pub store: Option<bool>,
    /// Key-value metadata.
    #[serde(borrow, default)]
    pub metadata: Option<&'a RawValue>,
    /// Extra output to include.
    #[serde(borrow, default)]
    pub include: Option<Vec<Cow<'a, str>>>,
    /// Prompt-cache key.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub prompt_cache_key: Option<Cow<'a, str>>,
    /// Prompt-cache retention.
    #[serde(borrow, default)]
    pub prompt_cache_retention: Option<&'a RawValue>,
    /// Service tier.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub service_tier: Option<Cow<'a, str>>,
    /// Truncation strategy.
    #[serde(borrow, default)]
    pub truncation: Option<&'a RawValue>,
    /// The response this one continues.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub previous_response_id: Option<Cow<'a, str>>,
    /// Conversation this response belongs to.
    #[serde(borrow, default)]
    pub conversation: Option<&'a RawValue>,
    /// Run in the background.
    #[serde(borrow, default)]
    pub background: Option<&'a RawValue>,
    /// Maximum number of hosted tool calls.
    #[serde(default)]
    pub max_tool_calls: Option<u64>,
    /// Prompt template reference.
    #[serde(borrow, default)]
    pub prompt: Option<&'a RawValue>,
    /// Context management configuration.
    #[serde(borrow, default)]
    pub context_management: Option<&'a RawValue>,
    /// Moderation configuration.
    #[serde(borrow, default)]
    pub moderation: Option<&'a RawValue>,
    /// Prompt-cache options.
    #[serde(borrow, default)]
    pub prompt_cache_options: Option<&'a RawValue>,
    /// Client-side metadata some clients (Codex) attach.
    #[serde(borrow, default)]
    pub client_metadata: Option<&'a RawValue>,
}

impl<'a> CreateResponse<'a> {
    /// Parses `tools`; `null` or absent gives an empty list.
    pub fn parse_tools(&self) -> Result<Vec<Tool<'a>>, serde_json::Error> {
        parse_or_default(self.tools)
    }

    /// Parses `text`.
    pub fn parse_text(&self) -> Result<TextParam<'a>, serde_json::Error> {
        parse_or_default(self.text)
    }

    /// Parses `reasoning`.
    pub fn parse_reasoning(&self) -> Result<Reasoning<'a>, serde_json::Error> {
        parse_or_default(self.reasoning)
    }
}

fn parse_or_default<'a, T: Deserialize<'a> + Default>(
    raw: Option<&'a RawValue>,
) -> Result<T, serde_json::Error> {
    match raw {
        Some(raw) if raw.get() != "null" => serde_json::from_str(raw.get()),
        _ => Ok(T::default()),
    }
}

/// The `input` field: a string, or a list of items.
#[derive(Debug)]
pub enum Input<'a> {
    /// One user message.
    Text(JsonStr<'a>),
    /// Conversation items.
    Items(Vec<InputItem<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Input<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let raw = <&'a RawValue>::deserialize(d)?;
        if let Some(text) = JsonStr::new(raw) {
            return Ok(Input::Text(text));
        }
        serde_json::from_str(raw.get())
            .map(Input::Items)
            .map_err(|e| {
                D::Error::custom(format_args!(
                    "`input` must be a string or an array of items: {e}"
                ))
            })
    }
}

/// One input item. `kind()` tells what it is.
#[derive(Debug, Default, Deserialize)]
pub struct InputItem<'a> {
    /// Item type; messages may omit it.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub item_type: Option<Cow<'a, str>>,
    /// Message role.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub role: Option<Cow<'a, str>>,
    /// Message or reasoning content: a string or a part array.
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    /// Item id.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub id: Option<Cow<'a, str>>,
    /// Item status.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub status: Option<Cow<'a, str>>,
    /// Tool call id linking calls and outputs.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub call_id: Option<Cow<'a, str>>,
    /// Tool name.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
    /// Tool namespace.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub namespace: Option<Cow<'a, str>>,
    /// Function-call arguments: a JSON string, or (from some clients) an object.
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    /// Tool output: a string or a part array.
    #[serde(borrow, default)]
    pub output: Option<&'a RawValue>,
    /// Custom tool call input.
    #[serde(borrow, default)]
    pub input: Option<&'a RawValue>,
    /// Reasoning summary parts.
    #[serde(borrow, default)]
    pub summary: Option<&'a RawValue>,
    /// Opaque reasoning state.
    #[serde(borrow, default)]
    pub encrypted_content: Option<&'a RawValue>,
    /// Message phase (`commentary`, `final_answer`).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub phase: Option<Cow<'a, str>>,
    /// Tools an `additional_tools` item declares, or a `tool_search_output`
    /// item loaded.
    #[serde(borrow, default)]
    pub tools: Option<&'a RawValue>,
    /// Who runs a tool search (`client` or `server`).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub execution: Option<Cow<'a, str>>,
}

/// What an [`InputItem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A message (with or without `"type":"message"`).
    Message,
    /// `function_call`.
    FunctionCall,
    /// `function_call_output`.
    FunctionCallOutput,
    /// `custom_tool_call`.
    CustomToolCall,
    /// `custom_tool_call_output`.
    CustomToolCallOutput,
    /// `reasoning`.
    Reasoning,
    /// `item_reference`: a pointer to a stored item.
    ItemReference,
    /// `additional_tools`: tools declared in the conversation rather than
    /// in `tools` (Codex's code-mode models).
    AdditionalTools,
    /// `tool_search_call`: the model searching for deferred tools.
    ToolSearchCall,
    /// `tool_search_output`: the tools a search loaded.
    ToolSearchOutput,
    /// Anything else (hosted tool calls and outputs, compaction, ...).
    Other,
}

impl InputItem<'_> {
    /// Classifies the item.
    pub fn kind(&self) -> ItemKind {
        match self.item_type.as_deref() {
            Some("message") => ItemKind::Message,
            None if self.role.is_some() => ItemKind::Message,
            Some("function_call") => ItemKind::FunctionCall,
            Some("function_call_output") => ItemKind::FunctionCallOutput,
            Some("custom_tool_call") => ItemKind::CustomToolCall,
            Some("custom_tool_call_output") => ItemKind::CustomToolCallOutput,
            Some("reasoning") => ItemKind::Reasoning,
            Some("item_reference") => ItemKind::ItemReference,
            Some("additional_tools") => ItemKind::AdditionalTools,
            Some("tool_search_call") => ItemKind::ToolSearchCall,
            Some("tool_search_output") => ItemKind::ToolSearchOutput,
            None if self.id.is_some() => ItemKind::ItemReference,
            _ => ItemKind::Other,
        }
    }

    /// The `type` as written, or a description when it is absent.
    pub fn type_name(&self) -> &str {
        self.item_type.as_deref().unwrap_or("(no type)")
    }
}

/// A string or a list of content parts.
#[derive(Debug)]
pub enum Content<'a> {
    /// Plain text.
    Text(JsonStr<'a>),
    /// Typed parts.
    Parts(Vec<ContentPart<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let raw = <&'a RawValue>::deserialize(d)?;
        Content::from_raw(raw).map_err(D::Error::custom)
    }
}

impl<'a> Content<'a> {
    /// Parses a raw string-or-parts value.
    pub fn from_raw(raw: &'a RawValue) -> Result<Self, serde_json::Error> {
        if let Some(text) = JsonStr::new(raw) {
            return Ok(Content::Text(text));
        }
        serde_json::from_str(raw.get()).map(Content::Parts)
    }
}

/// One content part: `input_text`, `output_text`, `input_image`, `input_file`,
/// `input_audio`, `refusal`, `summary_text`, `reasoning_text`, ...
#[derive(Debug, Default, Deserialize)]
pub struct ContentPart<'a> {
    /// Part type.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub part_type: Option<Cow<'a, str>>,
    /// Text of text-like parts.
    #[serde(borrow, default)]
    pub text: Option<JsonStr<'a>>,
    /// Refusal text.
    #[serde(borrow, default)]
    pub refusal: Option<JsonStr<'a>>,
    /// Image URL or data URL (a string; some clients send `{url}`).
    #[serde(borrow, default)]
    pub image_url: Option<&'a RawValue>,
    /// Uploaded file id.
    #[serde(borrow, default)]
    pub file_id: Option<JsonStr<'a>>,
    /// Image or file detail level.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub detail: Option<Cow<'a, str>>,
    /// Inline file contents (a data URL or base64).
    #[serde(borrow, default)]
    pub file_data: Option<JsonStr<'a>>,
    /// File URL.
    #[serde(borrow, default)]
    pub file_url: Option<JsonStr<'a>>,
    /// File name.
    #[serde(borrow, default)]
    pub filename: Option<JsonStr<'a>>,
    /// Audio payload `{data, format}`, or the data string itself.
    #[serde(borrow, default)]
    pub input_audio: Option<&'a RawValue>,
    /// Audio data when sent flat.
    #[serde(borrow, default)]
    pub data: Option<JsonStr<'a>>,
    /// Audio format when sent flat.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub format: Option<Cow<'a, str>>,
    /// Output-text annotations (citations).
    #[serde(borrow, default)]
    pub annotations: Option<&'a RawValue>,
}

impl ContentPart<'_> {
    /// The part type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.part_type.as_deref().unwrap_or("")
    }
}

/// One entry of `tools`: function, custom, namespace or a hosted tool.
#[derive(Debug, Default, Deserialize)]
pub struct Tool<'a> {
    /// Tool type.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub tool_type: Option<Cow<'a, str>>,
    /// Tool name (function, custom, namespace).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
    /// Description.
    #[serde(borrow, default)]
    pub description: Option<JsonStr<'a>>,
    /// JSON Schema of the arguments, passed through untouched.
    #[serde(borrow, default)]
    pub parameters: Option<&'a RawValue>,
    /// Strict schema adherence.
    #[serde(default)]
    pub strict: Option<bool>,
    /// Tools inside a namespace.
    #[serde(borrow, default)]
    pub tools: Option<Vec<Tool<'a>>>,
    /// Custom tool input format (`text` or `grammar`).
    #[serde(borrow, default)]
    pub format: Option<&'a RawValue>,
    /// Web search: approximate user location.
    #[serde(borrow, default)]
    pub user_location: Option<&'a RawValue>,
    /// Web search: context size.
    #[serde(borrow, default)]
    pub search_context_size: Option<&'a RawValue>,
    /// Web search: whether live web access is allowed (`false`: cached
    /// results only).
    #[serde(default)]
    pub external_web_access: Option<bool>,
    /// Whether the tool is loaded only through tool search.
    #[serde(default)]
    pub defer_loading: Option<bool>,
    /// Tool search: who runs it (`client` or `server`).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub execution: Option<Cow<'a, str>>,
}

impl Tool<'_> {
    /// The tool type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.tool_type.as_deref().unwrap_or("")
    }
}

/// `text`: output format and verbosity.
#[derive(Debug, Default, Deserialize)]
pub struct TextParam<'a> {
    /// Output format.
    #[serde(borrow, default)]
    pub format: Option<TextFormat<'a>>,
    /// `low`, `medium` or `high`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub verbosity: Option<Cow<'a, str>>,
}

/// `text.format`: `text`, `json_object` or `json_schema`.
#[derive(Debug, Default, Deserialize)]
pub struct TextFormat<'a> {
    /// Format type.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub format_type: Option<Cow<'a, str>>,
    /// Schema name.
    #[serde(borrow, default)]
    pub name: Option<JsonStr<'a>>,
    /// Schema, passed through untouched.
    #[serde(borrow, default)]
    pub schema: Option<&'a RawValue>,
    /// Strict schema adherence.
    #[serde(default)]
    pub strict: Option<bool>,
    /// Description.
    #[serde(borrow, default)]
    pub description: Option<JsonStr<'a>>,
}

/// `reasoning`: effort and summary settings.
#[derive(Debug, Default, Deserialize)]
pub struct Reasoning<'a> {
    /// Effort: `none`, `minimal`, `low`, `medium`, `high`, `xhigh`, `max`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub effort: Option<Cow<'a, str>>,
    /// Summary request: `auto`, `concise`, `detailed`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub summary: Option<Cow<'a, str>>,
    /// Older name of `summary`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub generate_summary: Option<Cow<'a, str>>,
    /// Which turns' reasoning is rendered back to the model: `auto`,
    /// `current_turn` or `all_turns`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub context: Option<Cow<'a, str>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_as_string_or_items() {
        let r: CreateResponse<'_> = serde_json::from_str(r#"{"input":"hi"}"#).unwrap();
        assert!(matches!(r.input, Some(Input::Text(t)) if t.escaped() == "hi"));
        let r: CreateResponse<'_> =
            serde_json::from_str(r#"{"input":[{"role":"user","content":"hi"}]}"#).unwrap();
        let Some(Input::Items(items)) = r.input else {
            panic!("items expected")
        };
        assert_eq!(items[0].kind(), ItemKind::Message);
    }

    #[test]
    fn unknown_items_and_fields_parse() {
        let r: CreateResponse<'_> = serde_json::from_str(
            r#"{"input":[{"type":"computer_call_output","output":{"type":"computer_screenshot"},"x":1}],"zzz":true}"#,
        )
        .unwrap();
        let Some(Input::Items(items)) = r.input else {
            panic!("items expected")
        };
        assert_eq!(items[0].kind(), ItemKind::Other);
    }

    #[test]
    fn content_parts_tolerate_client_fields() {
        let c: Content<'_> = serde_json::from_str(
            r#"[{"type":"input_image","image_url":"data:image/png;base64,AA","detail":"high","previewurl":"x","filename":"a.png"}]"#,
        )
        .unwrap();
        let Content::Parts(parts) = c else {
            panic!("parts expected")
        };
        assert_eq!(parts[0].kind(), "input_image");
        assert_eq!(parts[0].detail.as_deref(), Some("high"));
    }
}
