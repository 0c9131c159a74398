//! Conversation items and their content parts, parsed leniently: the input
//! items of a request, and the content parts of any item, in requests and in
//! replies.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::raw::JsonStr;
use crate::Str;

/// The items of an `input` array, and the array's JSON text.
///
/// Dereferences to the parsed items. The text is kept so that each item can
/// be written back exactly as sent (a response store lists a turn's input
/// items as the client gave them) without parsing anything twice.
#[derive(Debug, Default)]
pub struct InputItems<'a> {
    items: Vec<InputItem<'a>>,
    raw: Option<&'a RawValue>,
}

impl<'a> InputItems<'a> {
    /// Parses a JSON array of items.
    pub fn parse(raw: &'a RawValue) -> Result<Self, serde_json::Error> {
        Ok(Self {
            items: serde_json::from_str(raw.get())?,
            raw: Some(raw),
        })
    }

    /// Items read by [`CreateResponse::read`](super::CreateResponse::read)
    /// from the array `raw`, each with its own text ([`InputItem::raw`]).
    pub(super) fn read(items: Vec<InputItem<'a>>, raw: &'a RawValue) -> Self {
        Self {
            items,
            raw: Some(raw),
        }
    }

    /// Items built here, with no JSON text behind them.
    pub fn from_items(items: Vec<InputItem<'a>>) -> Self {
        Self { items, raw: None }
    }

    /// The array as sent, if the items were parsed from one.
    pub fn raw(&self) -> Option<&'a RawValue> {
        self.raw
    }

    /// Each item's JSON text, in order: kept by the single-pass reader,
    /// or found by one more scan over the array.
    pub fn raw_items(&self) -> Result<Vec<&'a RawValue>, serde_json::Error> {
        let Some(raw) = self.raw else {
            return Ok(Vec::new());
        };
        match self.items.iter().map(|item| item.raw).collect() {
            Some(kept) => Ok(kept),
            None => serde_json::from_str(raw.get()),
        }
    }

    /// The parsed items.
    pub fn into_vec(self) -> Vec<InputItem<'a>> {
        self.items
    }
}

impl<'a> std::ops::Deref for InputItems<'a> {
    type Target = [InputItem<'a>];

    fn deref(&self) -> &[InputItem<'a>] {
        &self.items
    }
}

/// One input item. [`classify`](Self::classify) tells what it is.
#[derive(Debug, Default, Deserialize)]
pub struct InputItem<'a> {
    /// Item type; messages may omit it.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Message role.
    #[serde(borrow)]
    pub role: Option<Str<'a>>,
    /// Message or reasoning content: a string or a part array.
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    /// Item id.
    #[serde(borrow)]
    pub id: Option<Str<'a>>,
    /// Item status.
    #[serde(borrow)]
    pub status: Option<Str<'a>>,
    /// Tool call id linking calls and outputs.
    #[serde(borrow)]
    pub call_id: Option<Str<'a>>,
    /// Tool name.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Tool namespace.
    #[serde(borrow)]
    pub namespace: Option<Str<'a>>,
    /// Function-call arguments: a JSON string, or (from some clients) an object.
    #[serde(borrow)]
    pub arguments: Option<&'a RawValue>,
    /// Tool output: a string or a part array.
    #[serde(borrow)]
    pub output: Option<&'a RawValue>,
    /// Custom tool call input.
    #[serde(borrow)]
    pub input: Option<&'a RawValue>,
    /// Reasoning summary parts.
    #[serde(borrow)]
    pub summary: Option<&'a RawValue>,
    /// Opaque reasoning state.
    #[serde(borrow)]
    pub encrypted_content: Option<&'a RawValue>,
    /// Message phase (`commentary`, `final_answer`).
    #[serde(borrow)]
    pub phase: Option<Str<'a>>,
    /// Tools an `additional_tools` item declares, or a `tool_search_output`
    /// item loaded.
    #[serde(borrow)]
    pub tools: Option<&'a RawValue>,
    /// Who runs a tool search (`client` or `server`).
    #[serde(borrow)]
    pub execution: Option<Str<'a>>,
    /// Who wrote an `agent_message` (an agent's path, such as
    /// `/root/worker`), as sent: the model is given only its content.
    #[serde(borrow)]
    pub author: Option<&'a RawValue>,
    /// Whom an `agent_message` is addressed to, as sent.
    #[serde(borrow)]
    pub recipient: Option<&'a RawValue>,
    /// The item's JSON text, as sent, when the single-pass reader
    /// ([`CreateResponse::read`](super::CreateResponse::read)) kept it
    /// (serde leaves it `None`).
    #[serde(skip)]
    pub raw: Option<&'a RawValue>,
    /// `content` as parts, when it is an array the single-pass reader read
    /// (serde leaves it `None`); [`Self::parse_content`] gives these when
    /// they are here.
    #[serde(skip)]
    pub parsed_content: Option<Vec<ContentPart<'a>>>,
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
    /// `compaction`: the conversation before it, summarized and sealed
    /// (`encrypted_content`).
    Compaction,
    /// `compaction_trigger`: asks for the conversation to be compacted
    /// (only as the last input item).
    CompactionTrigger,
    /// `context_compaction`: Codex's record of a compaction; its
    /// `encrypted_content`, when it has one, is a compaction's.
    ContextCompaction,
    /// `agent_message`: a message between agents (Codex's multi-agent
    /// sessions): `author`, `recipient`, and content parts (`input_text`,
    /// `input_image`, `encrypted_content`).
    AgentMessage,
    /// `configuration_update`: a change of settings (reasoning effort, text
    /// format) recorded in the history; nothing for the model to read.
    ConfigurationUpdate,
    /// Anything else (hosted tool calls and outputs, ...).
    Other,
}

impl<'a> InputItem<'a> {
    /// Parses `content` (`None` when absent); parts already read
    /// ([`Self::parsed_content`]) are copied, not parsed again.
    pub fn parse_content(&self) -> Option<Result<Content<'a>, serde_json::Error>> {
        if let Some(parts) = &self.parsed_content {
            return Some(Ok(Content::Parts(parts.clone())));
        }
        self.content.map(Content::from_raw)
    }

    /// Classifies the item.
    pub fn classify(&self) -> ItemKind {
        match self.kind.as_deref() {
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
            Some("compaction") => ItemKind::Compaction,
            Some("compaction_trigger") => ItemKind::CompactionTrigger,
            Some("context_compaction") => ItemKind::ContextCompaction,
            Some("agent_message") => ItemKind::AgentMessage,
            Some("configuration_update") => ItemKind::ConfigurationUpdate,
            None if self.id.is_some() => ItemKind::ItemReference,
            _ => ItemKind::Other,
        }
    }

    /// The `type` as written, or a description when it is absent.
    pub fn type_name(&self) -> &str {
        self.kind.as_deref().unwrap_or("(no type)")
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
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContentPart<'a> {
    /// Part type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Text of text-like parts.
    #[serde(borrow)]
    pub text: Option<JsonStr<'a>>,
    /// Refusal text.
    #[serde(borrow)]
    pub refusal: Option<JsonStr<'a>>,
    /// Image URL or data URL (a string; some clients send `{url}`).
    #[serde(borrow)]
    pub image_url: Option<&'a RawValue>,
    /// Uploaded file id.
    #[serde(borrow)]
    pub file_id: Option<JsonStr<'a>>,
    /// Image or file detail level.
    #[serde(borrow)]
    pub detail: Option<Str<'a>>,
    /// Inline file contents (a data URL or base64).
    #[serde(borrow)]
    pub file_data: Option<JsonStr<'a>>,
    /// File URL.
    #[serde(borrow)]
    pub file_url: Option<JsonStr<'a>>,
    /// File name.
    #[serde(borrow)]
    pub filename: Option<JsonStr<'a>>,
    /// Audio payload `{data, format}`, or the data string itself.
    #[serde(borrow)]
    pub input_audio: Option<&'a RawValue>,
    /// Audio data when sent flat.
    #[serde(borrow)]
    pub data: Option<JsonStr<'a>>,
    /// Audio format when sent flat.
    #[serde(borrow)]
    pub format: Option<Str<'a>>,
    /// Output-text annotations (citations).
    #[serde(borrow)]
    pub annotations: Option<&'a RawValue>,
    /// Output-text token log probabilities.
    #[serde(borrow)]
    pub logprobs: Option<&'a RawValue>,
    /// A prompt-cache breakpoint (`{"mode": "explicit"}`), as the bridge
    /// writes one for a Messages block's `cache_control`: it changes what
    /// is billed, never the answer.
    #[serde(borrow)]
    pub prompt_cache_breakpoint: Option<&'a RawValue>,
}

impl ContentPart<'_> {
    /// The part type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }
}
