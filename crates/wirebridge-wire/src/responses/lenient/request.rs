//! `POST /v1/responses` request bodies, parsed leniently.
//!
//! Items, content parts and tools are each one flat struct holding the union
//! of the fields their variants use. Fields whose shape differs between
//! variants stay raw until the item's kind is known, so an item type this
//! crate has never heard of still parses.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::InputItems;
use crate::raw::JsonStr;
use crate::Str;

/// A `CreateResponse` request body.
#[derive(Debug, Default, Deserialize)]
pub struct CreateResponse<'a> {
    /// Model id.
    #[serde(borrow)]
    pub model: Option<Str<'a>>,
    /// A string, or an array of items.
    #[serde(borrow)]
    pub input: Option<Input<'a>>,
    /// System-level instructions.
    #[serde(borrow)]
    pub instructions: Option<JsonStr<'a>>,
    /// Tools the model may call (raw: echoed as sent; see [`Self::parse_tools`]).
    #[serde(borrow)]
    pub tools: Option<&'a RawValue>,
    /// How the model picks tools (raw: a string or an object).
    #[serde(borrow)]
    pub tool_choice: Option<&'a RawValue>,
    /// Whether several tool calls may be made in one turn.
    pub parallel_tool_calls: Option<bool>,
    /// Output format and verbosity (raw; see [`Self::parse_text`]).
    #[serde(borrow)]
    pub text: Option<&'a RawValue>,
    /// Upper bound on generated tokens.
    pub max_output_tokens: Option<u64>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Number of most likely tokens to return with log probabilities.
    pub top_logprobs: Option<u32>,
    /// Penalty on tokens already present (Open Responses).
    pub presence_penalty: Option<f64>,
    /// Penalty on frequent tokens (Open Responses).
    pub frequency_penalty: Option<f64>,
    /// Reasoning configuration (raw; see [`Self::parse_reasoning`]).
    #[serde(borrow)]
    pub reasoning: Option<&'a RawValue>,
    /// End-user id (deprecated upstream in favour of `safety_identifier`).
    #[serde(borrow)]
    pub user: Option<Str<'a>>,
    /// Stable end-user id for abuse detection.
    #[serde(borrow)]
    pub safety_identifier: Option<Str<'a>>,
    /// Whether to stream.
    pub stream: Option<bool>,
    /// Stream options.
    #[serde(borrow)]
    pub stream_options: Option<&'a RawValue>,
    /// Whether the response is stored server-side (spec default: true).
    pub store: Option<bool>,
    /// Key-value metadata.
    #[serde(borrow)]
    pub metadata: Option<&'a RawValue>,
    /// Extra output to include.
    #[serde(borrow)]
    pub include: Option<Vec<Str<'a>>>,
    /// Prompt-cache key.
    #[serde(borrow)]
    pub prompt_cache_key: Option<Str<'a>>,
    /// Prompt-cache retention.
    #[serde(borrow)]
    pub prompt_cache_retention: Option<&'a RawValue>,
    /// Service tier.
    #[serde(borrow)]
    pub service_tier: Option<Str<'a>>,
    /// Truncation strategy.
    #[serde(borrow)]
    pub truncation: Option<&'a RawValue>,
    /// The response this one continues.
    #[serde(borrow)]
    pub previous_response_id: Option<Str<'a>>,
    /// Conversation this response belongs to.
    #[serde(borrow)]
    pub conversation: Option<&'a RawValue>,
    /// Run in the background.
    #[serde(borrow)]
    pub background: Option<&'a RawValue>,
    /// Maximum number of hosted tool calls.
    pub max_tool_calls: Option<u64>,
    /// Prompt template reference.
    #[serde(borrow)]
    pub prompt: Option<&'a RawValue>,
    /// Context management configuration.
    #[serde(borrow)]
    pub context_management: Option<&'a RawValue>,
    /// Moderation configuration.
    #[serde(borrow)]
    pub moderation: Option<&'a RawValue>,
    /// Prompt-cache options.
    #[serde(borrow)]
    pub prompt_cache_options: Option<&'a RawValue>,
    /// Client-side metadata some clients (Codex) attach.
    #[serde(borrow)]
    pub client_metadata: Option<&'a RawValue>,
    /// `tools`, parsed in the same pass by [`CreateResponse::read`]
    /// (serde leaves it `None`); [`Self::parse_tools`] gives these when
    /// they are here.
    #[serde(skip)]
    pub parsed_tools: Option<Vec<Tool<'a>>>,
}

impl<'a> CreateResponse<'a> {
    /// Parses `tools`; `null` or absent gives an empty list. Tools
    /// already read ([`Self::parsed_tools`]) are copied, not parsed again.
    pub fn parse_tools(&self) -> Result<Vec<Tool<'a>>, serde_json::Error> {
        match &self.parsed_tools {
            Some(tools) => Ok(tools.clone()),
            None => parse_or_default(self.tools),
        }
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
    Items(InputItems<'a>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Input<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let raw = <&'a RawValue>::deserialize(d)?;
        if let Some(text) = JsonStr::new(raw) {
            return Ok(Input::Text(text));
        }
        InputItems::parse(raw).map(Input::Items).map_err(|e| {
            D::Error::custom(format_args!(
                "`input` must be a string or an array of items: {e}"
            ))
        })
    }
}

/// One entry of `tools`: function, custom, namespace or a hosted tool.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Tool<'a> {
    /// Tool type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Tool name (function, custom, namespace).
    #[serde(borrow)]
    pub name: Option<Str<'a>>,
    /// Description.
    #[serde(borrow)]
    pub description: Option<JsonStr<'a>>,
    /// JSON Schema of the arguments, passed through untouched.
    #[serde(borrow)]
    pub parameters: Option<&'a RawValue>,
    /// Strict schema adherence.
    pub strict: Option<bool>,
    /// Tools inside a namespace.
    #[serde(borrow)]
    pub tools: Option<Vec<Tool<'a>>>,
    /// Custom tool input format (`text` or `grammar`).
    #[serde(borrow)]
    pub format: Option<&'a RawValue>,
    /// Web search: approximate user location.
    #[serde(borrow)]
    pub user_location: Option<&'a RawValue>,
    /// Web search: context size.
    #[serde(borrow)]
    pub search_context_size: Option<&'a RawValue>,
    /// Web search: whether live web access is allowed (`false`: cached
    /// results only).
    pub external_web_access: Option<bool>,
    /// Whether the tool is loaded only through tool search.
    pub defer_loading: Option<bool>,
    /// Tool search: who runs it (`client` or `server`).
    #[serde(borrow)]
    pub execution: Option<Str<'a>>,
}

impl Tool<'_> {
    /// The tool type, or `""` when absent.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }
}

/// `text`: output format and verbosity.
#[derive(Debug, Default, Deserialize)]
pub struct TextParam<'a> {
    /// Output format.
    #[serde(borrow)]
    pub format: Option<TextFormat<'a>>,
    /// `low`, `medium` or `high`.
    #[serde(borrow)]
    pub verbosity: Option<Str<'a>>,
}

/// `text.format`: `text`, `json_object` or `json_schema`.
#[derive(Debug, Default, Deserialize)]
pub struct TextFormat<'a> {
    /// Format type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Schema name.
    #[serde(borrow)]
    pub name: Option<JsonStr<'a>>,
    /// Schema, passed through untouched.
    #[serde(borrow)]
    pub schema: Option<&'a RawValue>,
    /// Strict schema adherence.
    pub strict: Option<bool>,
    /// Description.
    #[serde(borrow)]
    pub description: Option<JsonStr<'a>>,
}

/// `reasoning`: effort and summary settings.
#[derive(Debug, Default, Deserialize)]
pub struct Reasoning<'a> {
    /// Effort: `none`, `minimal`, `low`, `medium`, `high`, `xhigh`, `max`.
    #[serde(borrow)]
    pub effort: Option<Str<'a>>,
    /// Summary request: `auto`, `concise`, `detailed`.
    #[serde(borrow)]
    pub summary: Option<Str<'a>>,
    /// Older name of `summary`.
    #[serde(borrow)]
    pub generate_summary: Option<Str<'a>>,
    /// Which turns' reasoning is rendered back to the model: `auto`,
    /// `current_turn` or `all_turns`.
    #[serde(borrow)]
    pub context: Option<Str<'a>>,
}

#[cfg(test)]
mod tests {
    use crate::responses::lenient::*;

    #[test]
    fn input_as_string_or_items() {
        let r: CreateResponse<'_> = serde_json::from_str(r#"{"input":"hi"}"#).unwrap();
        assert!(matches!(r.input, Some(Input::Text(t)) if t.escaped() == "hi"));
        let r: CreateResponse<'_> =
            serde_json::from_str(r#"{"input":[{"role":"user","content":"hi"}]}"#).unwrap();
        let Some(Input::Items(items)) = r.input else {
            panic!("items expected")
        };
        assert_eq!(items[0].classify(), ItemKind::Message);
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
        assert_eq!(items[0].classify(), ItemKind::Other);
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
