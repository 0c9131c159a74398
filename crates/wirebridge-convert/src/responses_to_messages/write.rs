//! The Messages request as it is written: typed where the bridge builds
//! it, raw where a value passes through untouched (a schema, a text the
//! client escaped, a thinking block kept byte for byte).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;

/// A JSON value: borrowed from the Responses request, or built here.
pub(super) type Json<'a> = Cow<'a, RawValue>;

/// A JSON string literal of `text`.
pub(super) fn string(text: &str) -> Json<'static> {
    Cow::Owned(serde_json::value::to_raw_value(text).expect("a string serializes"))
}

/// `POST /v1/messages`.
#[derive(Debug, Serialize)]
pub(super) struct MessagesRequest<'a> {
    pub model: &'a str,
    pub max_tokens: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<Block<'a>>,
    pub messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_config: Option<OutputConfig<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
}

/// One message of `messages`.
#[derive(Debug, Serialize)]
pub(super) struct Message<'a> {
    pub role: Role,
    pub content: Vec<Block<'a>>,
}

/// Who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Role {
    User,
    Assistant,
}

/// A content block: built here, or one the backend wrote, kept as it was.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum Block<'a> {
    Built(Built<'a>),
    Kept(Box<RawValue>),
}

/// A content block the bridge writes.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Built<'a> {
    Text {
        text: Json<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Document {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<Json<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: Json<'a>,
        name: String,
        input: Json<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: Json<'a>,
        content: ToolResultContent<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl<'a> Block<'a> {
    pub(super) fn text(text: Json<'a>) -> Self {
        Block::Built(Built::Text {
            text,
            cache_control: None,
        })
    }

    pub(super) fn is_tool_result(&self) -> bool {
        matches!(self, Block::Built(Built::ToolResult { .. }))
    }

    /// Marks a cache breakpoint after this block; `false` for a block that
    /// takes none (a thinking block kept as the backend wrote it).
    pub(super) fn mark(&mut self, mark: CacheControl) -> bool {
        let slot = match self {
            Block::Kept(_) => return false,
            Block::Built(built) => match built {
                Built::Text { cache_control, .. }
                | Built::Image { cache_control, .. }
                | Built::Document { cache_control, .. }
                | Built::ToolUse { cache_control, .. }
                | Built::ToolResult { cache_control, .. } => cache_control,
            },
        };
        *slot = Some(mark);
        true
    }
}

/// Where an image or a document comes from.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Source<'a> {
    Base64 {
        media_type: Cow<'a, str>,
        data: Cow<'a, str>,
    },
    Url {
        url: Cow<'a, str>,
    },
}

/// What a tool returned: its text, or blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum ToolResultContent<'a> {
    Text(Json<'a>),
    Blocks(Vec<Block<'a>>),
}

/// `cache_control`.
#[derive(Debug, Clone, Copy, Serialize)]
pub(super) struct CacheControl {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<&'static str>,
}

/// One tool of `tools`.
#[derive(Debug, Serialize)]
pub(super) struct Tool<'a> {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<Json<'a>>,
    pub input_schema: Json<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// `tool_choice`.
#[derive(Debug, Serialize)]
pub(super) struct ToolChoice<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_parallel_tool_use: Option<bool>,
}

/// `thinking`.
#[derive(Debug, Serialize)]
pub(super) struct Thinking {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub budget_tokens: u64,
}

/// `metadata`.
#[derive(Debug, Serialize)]
pub(super) struct Metadata<'a> {
    pub user_id: Json<'a>,
}

/// `output_config`: the answer's format.
#[derive(Debug, Serialize)]
pub(super) struct OutputConfig<'a> {
    pub format: OutputFormat<'a>,
}

/// `output_config.format`.
#[derive(Debug, Serialize)]
pub(super) struct OutputFormat<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub schema: &'a RawValue,
}
