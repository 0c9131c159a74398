//! `POST /v1/chat/completions` request bodies, parsed leniently.
//!
//! Messages, content parts and tools are each one flat struct holding the
//! union of the fields their variants use, as in
//! [`crate::responses::request`]. Fields whose shape depends on something
//! else (a message's `content`, `tool_choice`, `stop`, ...) stay raw until the
//! translator knows what to expect. Unknown fields are ignored.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::raw::JsonStr;

/// A `CreateChatCompletionRequest` body.
#[derive(Debug, Default, Deserialize)]
pub struct CreateChatCompletion<'a> {
    /// Model id.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub model: Option<Cow<'a, str>>,
    /// The conversation.
    #[serde(borrow, default)]
    pub messages: Option<Vec<Message<'a>>>,
    /// Tools the model may call: functions and custom tools.
    #[serde(borrow, default)]
    pub tools: Option<Vec<Tool<'a>>>,
    /// How the model picks tools (raw: a string or an object; see
    /// [`ToolChoice::from_raw`]).
    #[serde(borrow, default)]
    pub tool_choice: Option<&'a RawValue>,
    /// Whether several tool calls may be made in one turn.
    #[serde(default)]
    pub parallel_tool_calls: Option<bool>,
    /// Legacy function definitions.
    #[serde(borrow, default)]
    pub functions: Option<Vec<FunctionDef<'a>>>,
    /// Legacy function choice (raw: `"none"`, `"auto"` or `{"name"}`; see
    /// [`FunctionChoice::from_raw`]).
    #[serde(borrow, default)]
    pub function_call: Option<&'a RawValue>,
    /// Output format.
    #[serde(borrow, default)]
    pub response_format: Option<ResponseFormat<'a>>,
    /// Output verbosity: `low`, `medium` or `high`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub verbosity: Option<Cow<'a, str>>,
    /// Token limit (current name).
    #[serde(default)]
    pub max_completion_tokens: Option<u64>,
    /// Token limit (legacy name).
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Reasoning effort.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub reasoning_effort: Option<Cow<'a, str>>,
    /// Return log probabilities of the output tokens.
    #[serde(default)]
    pub logprobs: Option<bool>,
    /// Most likely tokens to return per position.
    #[serde(default)]
    pub top_logprobs: Option<u32>,
    /// End-user id.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub user: Option<Cow<'a, str>>,
    /// Stable end-user id for abuse detection.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub safety_identifier: Option<Cow<'a, str>>,
    /// Prompt-cache key.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub prompt_cache_key: Option<Cow<'a, str>>,
    /// Prompt-cache retention (`in_memory` or `24h`).
    #[serde(borrow, default)]
    pub prompt_cache_retention: Option<&'a RawValue>,
    /// Prompt-cache options.
    #[serde(borrow, default)]
    pub prompt_cache_options: Option<&'a RawValue>,
    /// Key-value metadata.
    #[serde(borrow, default)]
    pub metadata: Option<&'a RawValue>,
    /// Store the completion upstream (Chat default: false).
    #[serde(default)]
    pub store: Option<bool>,
    /// Service tier.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub service_tier: Option<Cow<'a, str>>,
    /// Moderation configuration.
    #[serde(borrow, default)]
    pub moderation: Option<&'a RawValue>,
    /// Stream the answer.
    #[serde(default)]
    pub stream: Option<bool>,
    /// Streaming options.
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
    /// Built-in web search.
    #[serde(borrow, default)]
    pub web_search_options: Option<WebSearchOptions<'a>>,
    /// Number of alternative answers.
    #[serde(default)]
    pub n: Option<u64>,
    /// Stop sequences (a string or an array of strings).
    #[serde(borrow, default)]
    pub stop: Option<&'a RawValue>,
    /// Sampling seed.
    #[serde(default)]
    pub seed: Option<i64>,
    /// Presence penalty.
    #[serde(default)]
    pub presence_penalty: Option<f64>,
    /// Frequency penalty.
    #[serde(default)]
    pub frequency_penalty: Option<f64>,
    /// Token biases.
    #[serde(borrow, default)]
    pub logit_bias: Option<&'a RawValue>,
    /// Audio output settings.
    #[serde(borrow, default)]
    pub audio: Option<&'a RawValue>,
    /// Output modalities (`text`, `audio`).
    #[serde(borrow, default)]
    pub modalities: Option<Vec<Cow<'a, str>>>,
    /// Predicted output.
    #[serde(borrow, default)]
    pub prediction: Option<&'a RawValue>,
}

/// One message. `role` tells which fields apply.
#[derive(Debug, Default, Deserialize)]
pub struct Message<'a> {
    /// `system`, `developer`, `user`, `assistant`, `tool` or `function`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub role: Option<Cow<'a, str>>,
    /// A string or an array of parts (raw; see [`Content::from_raw`]);
    /// `null` reads as absent.
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    /// Participant name; for the `function` role, the function's name.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
    /// Assistant refusal.
    #[serde(borrow, default)]
    pub refusal: Option<JsonStr<'a>>,
    /// Assistant tool calls.
    #[serde(borrow, default)]
    pub tool_calls: Option<Vec<ToolCall<'a>>>,
    /// The call a `tool` message answers.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub tool_call_id: Option<Cow<'a, str>>,
    /// Legacy assistant function call.
    #[serde(borrow, default)]
    pub function_call: Option<FunctionCall<'a>>,
    /// A reference to earlier assistant audio, `{id}`.
    #[serde(borrow, default)]
    pub audio: Option<&'a RawValue>,
    /// Reasoning some clients echo back (vLLM, DeepSeek convention).
    #[serde(borrow, default)]
    pub reasoning_content: Option<&'a RawValue>,
    /// Reasoning some clients echo back (Ollama, OpenRouter convention).
    #[serde(borrow, default)]
    pub reasoning: Option<&'a RawValue>,
}

/// Message content: a string or typed parts.
#[derive(Debug)]
pub enum Content<'a> {
    /// Plain text.
    Text(JsonStr<'a>),
    /// Typed parts.
    Parts(Vec<ContentPart<'a>>),
}

impl<'a> Content<'a> {
    /// Parses a raw `content`: `null` gives `None`.
    pub fn from_raw(raw: &'a RawValue) -> Result<Option<Self>, serde_json::Error> {
        if raw.get() == "null" {
            return Ok(None);
        }
        if let Some(text) = JsonStr::new(raw) {
            return Ok(Some(Content::Text(text)));
        }
        serde_json::from_str(raw.get()).map(|parts| Some(Content::Parts(parts)))
    }
}

/// One content part: `text`, `image_url`, `input_audio`, `file` or `refusal`.
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
    /// Text of a `text` part.
    #[serde(borrow, default)]
    pub text: Option<JsonStr<'a>>,
    /// Text of a `refusal` part.
    #[serde(borrow, default)]
    pub refusal: Option<JsonStr<'a>>,
    /// `{url, detail}` of an image part (some clients send the URL alone).
    #[serde(borrow, default)]
    pub image_url: Option<&'a RawValue>,
    /// `{data, format}` of an audio part, passed through.
    #[serde(borrow, default)]
    pub input_audio: Option<&'a RawValue>,
    /// The file of a `file` part.
    #[serde(borrow, default)]
    pub file: Option<FileRef<'a>>,
    /// Prompt-cache breakpoint marker, passed through.
    #[serde(borrow, default)]
    pub prompt_cache_breakpoint: Option<&'a RawValue>,
}

impl<'a> ContentPart<'a> {
    /// The part type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.part_type.as_deref().unwrap_or("")
    }

    /// Parses `image_url`: `{url, detail?}`, or a bare URL string.
    pub fn parse_image_url(&self) -> Result<Option<ImageUrl<'a>>, serde_json::Error> {
        let Some(raw) = self.image_url.filter(|r| r.get() != "null") else {
            return Ok(None);
        };
        if let Some(url) = JsonStr::new(raw) {
            return Ok(Some(ImageUrl {
                url: Some(url),
                detail: None,
            }));
        }
        serde_json::from_str(raw.get()).map(Some)
    }
}

/// `image_url` of an image part.
#[derive(Debug, Default, Deserialize)]
pub struct ImageUrl<'a> {
    /// URL or data URL.
    #[serde(borrow, default)]
    pub url: Option<JsonStr<'a>>,
    /// `auto`, `low` or `high`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub detail: Option<Cow<'a, str>>,
}

/// `file` of a file part.
#[derive(Debug, Default, Deserialize)]
pub struct FileRef<'a> {
    /// File name.
    #[serde(borrow, default)]
    pub filename: Option<JsonStr<'a>>,
    /// Inline data (a data URL or base64).
    #[serde(borrow, default)]
    pub file_data: Option<JsonStr<'a>>,
    /// Uploaded file id.
    #[serde(borrow, default)]
    pub file_id: Option<JsonStr<'a>>,
}

/// An assistant tool call: a function call or a custom tool call.
#[derive(Debug, Default, Deserialize)]
pub struct ToolCall<'a> {
    /// Call id.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub id: Option<Cow<'a, str>>,
    /// `function` (the default) or `custom`.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub call_type: Option<Cow<'a, str>>,
    /// Name and arguments of a function call.
    #[serde(borrow, default)]
    pub function: Option<FunctionCall<'a>>,
    /// Name and input of a custom tool call.
    #[serde(borrow, default)]
    pub custom: Option<CustomCall<'a>>,
}

impl ToolCall<'_> {
    /// The call type; absent means `function`.
    pub fn kind(&self) -> &str {
        self.call_type.as_deref().unwrap_or("function")
    }
}

/// A function call: `{name, arguments}`.
#[derive(Debug, Default, Deserialize)]
pub struct FunctionCall<'a> {
    /// Function name.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
    /// Arguments: a JSON text (some clients send an object).
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
}

/// A custom tool call: `{name, input}`.
#[derive(Debug, Default, Deserialize)]
pub struct CustomCall<'a> {
    /// Tool name.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
    /// Free-form input.
    #[serde(borrow, default)]
    pub input: Option<JsonStr<'a>>,
}

/// One entry of `tools`: `{type: function, function}` or
/// `{type: custom, custom}`.
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
    /// The function of a function tool.
    #[serde(borrow, default)]
    pub function: Option<FunctionDef<'a>>,
    /// The definition of a custom tool.
    #[serde(borrow, default)]
    pub custom: Option<CustomDef<'a>>,
}

impl Tool<'_> {
    /// The tool type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.tool_type.as_deref().unwrap_or("")
    }
}

/// A function definition (`tools[].function`, or an entry of `functions`).
#[derive(Debug, Default, Deserialize)]
pub struct FunctionDef<'a> {
    /// Name.
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
}

/// A custom tool definition.
#[derive(Debug, Default, Deserialize)]
pub struct CustomDef<'a> {
    /// Name.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
    /// Description.
    #[serde(borrow, default)]
    pub description: Option<JsonStr<'a>>,
    /// Input format: `{type: text}` or `{type: grammar, grammar}`.
    #[serde(borrow, default)]
    pub format: Option<CustomFormat<'a>>,
}

/// A custom tool's input format.
#[derive(Debug, Default, Deserialize)]
pub struct CustomFormat<'a> {
    /// `text` or `grammar`.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub format_type: Option<Cow<'a, str>>,
    /// The grammar of a `grammar` format.
    #[serde(borrow, default)]
    pub grammar: Option<Grammar<'a>>,
    /// The grammar definition, when a client sends it flat (Responses shape).
    #[serde(borrow, default)]
    pub definition: Option<JsonStr<'a>>,
    /// The grammar syntax, when a client sends it flat (Responses shape).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub syntax: Option<Cow<'a, str>>,
}

/// `{definition, syntax}` of a grammar format.
#[derive(Debug, Default, Deserialize)]
pub struct Grammar<'a> {
    /// The grammar definition.
    #[serde(borrow, default)]
    pub definition: Option<JsonStr<'a>>,
    /// `lark` or `regex`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub syntax: Option<Cow<'a, str>>,
}

/// `tool_choice`, once known to be an object.
#[derive(Debug, Default, Deserialize)]
pub struct ToolChoiceObject<'a> {
    /// `function`, `custom` or `allowed_tools`.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub choice_type: Option<Cow<'a, str>>,
    /// The function of a named function choice.
    #[serde(borrow, default)]
    pub function: Option<Named<'a>>,
    /// The tool of a named custom choice.
    #[serde(borrow, default)]
    pub custom: Option<Named<'a>>,
    /// The name, when a client sends it flat (Responses shape).
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
    /// The set of an `allowed_tools` choice.
    #[serde(borrow, default)]
    pub allowed_tools: Option<AllowedTools<'a>>,
}

impl ToolChoiceObject<'_> {
    /// The choice type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.choice_type.as_deref().unwrap_or("")
    }

    /// The tool named by `function.name`, `custom.name` or a flat `name`.
    pub fn tool_name(&self) -> Option<&str> {
        self.function
            .as_ref()
            .or(self.custom.as_ref())
            .and_then(|n| n.name.as_deref())
            .or(self.name.as_deref())
    }
}

/// `tool_choice`: a mode or an object.
#[derive(Debug)]
pub enum ToolChoice<'a> {
    /// `none`, `auto` or `required`.
    Mode(Cow<'a, str>),
    /// A named tool or an allowed set.
    Object(ToolChoiceObject<'a>),
}

impl<'a> ToolChoice<'a> {
    /// Parses a raw `tool_choice`; `null` gives `None`.
    pub fn from_raw(raw: &'a RawValue) -> Result<Option<Self>, serde_json::Error> {
        match raw.get().as_bytes().first() {
            Some(b'n') => Ok(None),
            Some(b'"') => serde_json::from_str(raw.get()).map(|m| Some(ToolChoice::Mode(m))),
            _ => serde_json::from_str(raw.get()).map(|o| Some(ToolChoice::Object(o))),
        }
    }
}

/// `{name}`.
#[derive(Debug, Default, Deserialize)]
pub struct Named<'a> {
    /// The name.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub name: Option<Cow<'a, str>>,
}

/// `allowed_tools` of an allowed-tools choice.
#[derive(Debug, Default, Deserialize)]
pub struct AllowedTools<'a> {
    /// `auto` or `required`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub mode: Option<Cow<'a, str>>,
    /// The allowed tools: `{type: function, function: {name}}` or
    /// `{type: custom, custom: {name}}`.
    #[serde(borrow, default)]
    pub tools: Option<Vec<ToolChoiceObject<'a>>>,
}

/// The legacy `function_call` request parameter.
#[derive(Debug)]
pub enum FunctionChoice<'a> {
    /// `none` or `auto`.
    Mode(Cow<'a, str>),
    /// `{name}`: call this function.
    Named(Named<'a>),
}

impl<'a> FunctionChoice<'a> {
    /// Parses a raw `function_call`; `null` gives `None`.
    pub fn from_raw(raw: &'a RawValue) -> Result<Option<Self>, serde_json::Error> {
        match raw.get().as_bytes().first() {
            Some(b'n') => Ok(None),
            Some(b'"') => serde_json::from_str(raw.get()).map(|m| Some(FunctionChoice::Mode(m))),
            _ => serde_json::from_str(raw.get()).map(|n| Some(FunctionChoice::Named(n))),
        }
    }
}

/// `response_format`.
#[derive(Debug, Default, Deserialize)]
pub struct ResponseFormat<'a> {
    /// `text`, `json_object` or `json_schema`.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub format_type: Option<Cow<'a, str>>,
    /// The schema of a `json_schema` format.
    #[serde(borrow, default)]
    pub json_schema: Option<JsonSchema<'a>>,
}

/// `response_format.json_schema`.
#[derive(Debug, Default, Deserialize)]
pub struct JsonSchema<'a> {
    /// Schema name.
    #[serde(borrow, default)]
    pub name: Option<JsonStr<'a>>,
    /// Description.
    #[serde(borrow, default)]
    pub description: Option<JsonStr<'a>>,
    /// The schema, passed through untouched.
    #[serde(borrow, default)]
    pub schema: Option<&'a RawValue>,
    /// Strict adherence.
    #[serde(default)]
    pub strict: Option<bool>,
}

/// `stream_options`.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub struct StreamOptions {
    /// Send a usage chunk before `[DONE]`.
    #[serde(default)]
    pub include_usage: Option<bool>,
    /// Pad stream events with random `obfuscation` text.
    #[serde(default)]
    pub include_obfuscation: Option<bool>,
}

/// `web_search_options`.
#[derive(Debug, Default, Deserialize)]
pub struct WebSearchOptions<'a> {
    /// `{type: approximate, approximate: {country, region, city, timezone}}`.
    #[serde(borrow, default)]
    pub user_location: Option<UserLocation<'a>>,
    /// `low`, `medium` or `high`.
    #[serde(borrow, default, deserialize_with = "crate::borrow::opt_cow")]
    pub search_context_size: Option<Cow<'a, str>>,
}

/// `web_search_options.user_location`.
#[derive(Debug, Default, Deserialize)]
pub struct UserLocation<'a> {
    /// Always `approximate`.
    #[serde(
        rename = "type",
        borrow,
        default,
        deserialize_with = "crate::borrow::opt_cow"
    )]
    pub location_type: Option<Cow<'a, str>>,
    /// The location.
    #[serde(borrow, default)]
    pub approximate: Option<ApproximateLocation<'a>>,
}

/// An approximate location.
#[derive(Debug, Default, Deserialize)]
pub struct ApproximateLocation<'a> {
    /// Two-letter ISO country code.
    #[serde(borrow, default)]
    pub country: Option<JsonStr<'a>>,
    /// Region, free text.
    #[serde(borrow, default)]
    pub region: Option<JsonStr<'a>>,
    /// City, free text.
    #[serde(borrow, default)]
    pub city: Option<JsonStr<'a>>,
    /// IANA time zone.
    #[serde(borrow, default)]
    pub timezone: Option<JsonStr<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_and_content_shape_parses() {
        let r: CreateChatCompletion<'_> = serde_json::from_str(
            r#"{"model":"m","messages":[
                {"role":"system","content":"s"},
                {"role":"user","content":[{"type":"text","text":"a\nb"},{"type":"image_url","image_url":{"url":"https://x/i.png","detail":"low"}}]},
                {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"custom","custom":{"name":"g","input":"x"}}]},
                {"role":"tool","tool_call_id":"c1","content":"r"},
                {"role":"assistant","function_call":{"name":"f","arguments":"{}"}},
                {"role":"function","name":"f","content":null}
            ],"zzz":1}"#,
        )
        .unwrap();
        let messages = r.messages.unwrap();
        assert_eq!(messages.len(), 6);
        let Some(Content::Parts(parts)) = Content::from_raw(messages[1].content.unwrap()).unwrap()
        else {
            panic!("parts expected")
        };
        let image = parts[1].parse_image_url().unwrap().unwrap();
        assert_eq!(image.url.unwrap().escaped(), "https://x/i.png");
        assert_eq!(image.detail.as_deref(), Some("low"));
        // `null` and an absent key read the same.
        assert!(messages[2].content.is_none());
        let calls = messages[2].tool_calls.as_ref().unwrap();
        assert_eq!(calls[1].kind(), "custom");
        assert_eq!(
            calls[1].custom.as_ref().unwrap().input.unwrap().escaped(),
            "x"
        );
    }

    #[test]
    fn tool_choice_shapes() {
        let raw: &RawValue = serde_json::from_str(r#""required""#).unwrap();
        assert!(
            matches!(ToolChoice::from_raw(raw).unwrap(), Some(ToolChoice::Mode(m)) if m == "required")
        );
        let raw: &RawValue = serde_json::from_str(
            r#"{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"custom","custom":{"name":"g"}}]}}"#,
        )
        .unwrap();
        let Some(ToolChoice::Object(o)) = ToolChoice::from_raw(raw).unwrap() else {
            panic!("object expected")
        };
        let allowed = o.allowed_tools.unwrap();
        assert_eq!(allowed.tools.unwrap()[0].tool_name(), Some("g"));
    }
}
