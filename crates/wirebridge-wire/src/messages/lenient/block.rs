//! Content blocks of a Messages conversation: of messages, of `system`, and
//! of tool results.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::raw::JsonStr;
use crate::Str;

/// A `content` (or `system`): a string, or typed blocks.
#[derive(Debug)]
pub enum Content<'a> {
    /// Plain text, shorthand for one `text` block.
    Text(JsonStr<'a>),
    /// Typed blocks.
    Blocks(Vec<Block<'a>>),
}

impl<'a> Content<'a> {
    /// Parses a raw `content`: `null` gives `None`.
    ///
    /// ```
    /// use serde_json::value::RawValue;
    /// use wirebridge_wire::messages::lenient::Content;
    ///
    /// let raw: &RawValue = serde_json::from_str(r#"[{"type":"text","text":"Hi"}]"#).unwrap();
    /// let Some(Content::Blocks(blocks)) = Content::from_raw(raw).unwrap() else { unreachable!() };
    /// assert_eq!(blocks[0].kind(), "text");
    /// ```
    pub fn from_raw(raw: &'a RawValue) -> Result<Option<Self>, serde_json::Error> {
        if raw.get() == "null" {
            return Ok(None);
        }
        if let Some(text) = JsonStr::new(raw) {
            return Ok(Some(Content::Text(text)));
        }
        serde_json::from_str(raw.get()).map(|blocks| Some(Content::Blocks(blocks)))
    }
}

/// One content block: `text`, `image`, `document`, `tool_use`,
/// `tool_result`, `thinking`, `redacted_thinking`, or a type the bridge does
/// not translate (server tool blocks, `search_result`, …).
#[derive(Debug, Default, Deserialize)]
pub struct Block<'a> {
    /// Block type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Text of a `text` block.
    #[serde(borrow)]
    pub text: Option<JsonStr<'a>>,
    /// Where an `image` or `document` comes from, or a `search_result`'s
    /// URL.
    #[serde(borrow)]
    pub source: Option<BlockSource<'a>>,
    /// A document's title.
    #[serde(borrow)]
    pub title: Option<JsonStr<'a>>,
    /// A document's context, for the model to read alongside it.
    #[serde(borrow)]
    pub context: Option<JsonStr<'a>>,
    /// Citations: of a `text` block, a list; of a `document`, `{enabled}`.
    #[serde(borrow)]
    pub citations: Option<&'a RawValue>,
    /// Call id of a `tool_use` block.
    #[serde(borrow)]
    pub id: Option<Str<'a>>,
    /// Tool name of a `tool_use` block.
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// The arguments of a `tool_use` block, a JSON object.
    #[serde(borrow)]
    pub input: Option<&'a RawValue>,
    /// The call a `tool_result` block answers.
    #[serde(borrow)]
    pub tool_use_id: Option<Str<'a>>,
    /// A `tool_result`'s content: a string or blocks.
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    /// `content` parsed, when
    /// [`CreateMessage::read`](super::CreateMessage::read) read it: what
    /// [`Content::from_raw`] gives for the raw text.
    #[serde(skip)]
    pub parsed_content: Option<Content<'a>>,
    /// Whether a `tool_result` reports a failure.
    pub is_error: Option<bool>,
    /// The text of a `thinking` block.
    #[serde(borrow)]
    pub thinking: Option<JsonStr<'a>>,
    /// The signature of a `thinking` block.
    #[serde(borrow)]
    pub signature: Option<JsonStr<'a>>,
    /// The opaque content of a `redacted_thinking` block.
    #[serde(borrow)]
    pub data: Option<JsonStr<'a>>,
    /// A prompt-cache breakpoint, `{"type":"ephemeral","ttl"?}`.
    #[serde(borrow)]
    pub cache_control: Option<&'a RawValue>,
}

impl Block<'_> {
    /// The block type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }

    /// Whether the block carries a `cache_control` other than `null`.
    pub fn is_cache_breakpoint(&self) -> bool {
        self.cache_control.is_some_and(|c| c.get() != "null")
    }
}

/// A block's `source`: an object for an image or a document, a string
/// (the URL it came from) for a `search_result`.
#[derive(Debug)]
pub enum BlockSource<'a> {
    /// An image's or a document's source.
    Object(Source<'a>),
    /// A search result's URL.
    Url(JsonStr<'a>),
}

impl<'de: 'a, 'a> Deserialize<'de> for BlockSource<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(deserializer)?;
        if let Some(url) = JsonStr::new(raw) {
            return Ok(BlockSource::Url(url));
        }
        serde_json::from_str(raw.get())
            .map(BlockSource::Object)
            .map_err(serde::de::Error::custom)
    }
}

/// The `source` of an image or a document: `base64`, `url`, `text`,
/// `content` or `file`.
#[derive(Debug, Default, Deserialize)]
pub struct Source<'a> {
    /// Source type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// MIME type of `base64` and `text` sources.
    #[serde(borrow)]
    pub media_type: Option<Str<'a>>,
    /// Base64 data (`base64`), or the text itself (`text`).
    #[serde(borrow)]
    pub data: Option<JsonStr<'a>>,
    /// The URL of a `url` source.
    #[serde(borrow)]
    pub url: Option<JsonStr<'a>>,
    /// The uploaded file of a `file` source.
    #[serde(borrow)]
    pub file_id: Option<JsonStr<'a>>,
    /// A `content` source's content: a string or blocks.
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
}

impl Source<'_> {
    /// The source type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_block_shape() {
        let raw: &RawValue = serde_json::from_str(
            r#"[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}},
                {"type":"tool_use","id":"toolu_1","name":"f","input":{"x":1}},
                {"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"ok"}],"is_error":true},
                {"type":"thinking","thinking":"hm","signature":"sig"},
                {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}},
                {"type":"search_result","source":"https://example.com/a","title":"A","content":[]}]"#,
        )
        .unwrap();
        let Some(Content::Blocks(blocks)) = Content::from_raw(raw).unwrap() else {
            panic!("blocks expected");
        };
        assert!(blocks[0].is_cache_breakpoint());
        let Some(BlockSource::Object(source)) = &blocks[1].source else {
            panic!("an image's source is an object");
        };
        assert_eq!(source.kind(), "base64");
        assert_eq!(blocks[2].input.unwrap().get(), r#"{"x":1}"#);
        assert_eq!(blocks[3].is_error, Some(true));
        assert_eq!(blocks[4].signature.unwrap().escaped(), "sig");
        assert_eq!(blocks[5].kind(), "server_tool_use");
        assert!(matches!(blocks[6].source, Some(BlockSource::Url(_))));
        let text: &RawValue = serde_json::from_str(r#""Hello""#).unwrap();
        assert!(matches!(
            Content::from_raw(text),
            Ok(Some(Content::Text(_)))
        ));
        let null: &RawValue = serde_json::from_str("null").unwrap();
        assert!(Content::from_raw(null).unwrap().is_none());
    }
}
