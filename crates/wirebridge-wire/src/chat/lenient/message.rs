//! Messages of a Chat conversation, parsed leniently: their content parts
//! and the tool calls of assistant messages (in requests and in replies).

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::raw::JsonStr;
use crate::Str;

/// One message. `role` tells which fields apply.
#[derive(Debug, Default, Deserialize)]
pub struct Message<'a> {
    /// `system`, `developer`, `user`, `assistant`, `tool` or `function`.
    #[serde(borrow)]
    pub role: Option<Str<'a>>,
    /// A string or an array of parts (raw; see [`Content::from_raw`]);
    /// `null` reads as absent.
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    /// Participant name; for the `function` role, the function's name.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Assistant refusal.
    #[serde(borrow)]
    pub refusal: Option<JsonStr<'a>>,
    /// Assistant tool calls.
    #[serde(borrow)]
    pub tool_calls: Option<Vec<ToolCall<'a>>>,
    /// The call a `tool` message answers.
    #[serde(borrow)]
    pub tool_call_id: Option<Str<'a>>,
    /// Legacy assistant function call.
    #[serde(borrow)]
    pub function_call: Option<FunctionCall<'a>>,
    /// A reference to earlier assistant audio, `{id}`.
    #[serde(borrow)]
    pub audio: Option<&'a RawValue>,
    /// Reasoning some clients echo back (vLLM, DeepSeek convention).
    #[serde(borrow)]
    pub reasoning_content: Option<&'a RawValue>,
    /// Reasoning some clients echo back (Ollama, OpenRouter convention).
    #[serde(borrow)]
    pub reasoning: Option<&'a RawValue>,
    /// The citations of a reply, which clients echo back with the
    /// assistant message: the reply's own record, nothing the model is
    /// asked to read.
    #[serde(borrow)]
    pub annotations: Option<&'a RawValue>,
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
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Text of a `text` part.
    #[serde(borrow)]
    pub text: Option<JsonStr<'a>>,
    /// Text of a `refusal` part.
    #[serde(borrow)]
    pub refusal: Option<JsonStr<'a>>,
    /// `{url, detail}` of an image part (some clients send the URL alone).
    #[serde(borrow)]
    pub image_url: Option<&'a RawValue>,
    /// `{data, format}` of an audio part, passed through.
    #[serde(borrow)]
    pub input_audio: Option<&'a RawValue>,
    /// The file of a `file` part.
    #[serde(borrow)]
    pub file: Option<FileRef<'a>>,
    /// Prompt-cache breakpoint marker, passed through.
    #[serde(borrow)]
    pub prompt_cache_breakpoint: Option<&'a RawValue>,
}

impl<'a> ContentPart<'a> {
    /// The part type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
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
    #[serde(borrow)]
    pub url: Option<JsonStr<'a>>,
    /// `auto`, `low` or `high`.
    #[serde(borrow)]
    pub detail: Option<Str<'a>>,
}

/// `file` of a file part.
#[derive(Debug, Default, Deserialize)]
pub struct FileRef<'a> {
    /// File name.
    #[serde(borrow)]
    pub filename: Option<JsonStr<'a>>,
    /// Inline data (a data URL or base64).
    #[serde(borrow)]
    pub file_data: Option<JsonStr<'a>>,
    /// Uploaded file id.
    #[serde(borrow)]
    pub file_id: Option<JsonStr<'a>>,
}

/// An assistant tool call (a function call or a custom tool call), or in a
/// stream, a fragment of one.
#[derive(Debug, Default, Deserialize)]
pub struct ToolCall<'a> {
    /// Position among the calls of a choice (stream fragments only).
    pub index: Option<u32>,
    /// Call id.
    #[serde(borrow)]
    pub id: Option<Str<'a>>,
    /// `function` (the default) or `custom`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Name and arguments of a function call.
    #[serde(borrow)]
    pub function: Option<FunctionCall<'a>>,
    /// Name and input of a custom tool call.
    #[serde(borrow)]
    pub custom: Option<CustomCall<'a>>,
}

impl ToolCall<'_> {
    /// The call type; absent means `function`.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("function")
    }
}

/// A function call: `{name, arguments}`.
#[derive(Debug, Default, Deserialize)]
pub struct FunctionCall<'a> {
    /// Function name.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Arguments: a JSON text (some clients send an object).
    #[serde(borrow)]
    pub arguments: Option<&'a RawValue>,
}

/// A custom tool call: `{name, input}`.
#[derive(Debug, Default, Deserialize)]
pub struct CustomCall<'a> {
    /// Tool name.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Free-form input.
    #[serde(borrow)]
    pub input: Option<JsonStr<'a>>,
}
