//! `POST /v1/chat/completions` request bodies, parsed leniently.
//!
//! Messages, content parts and tools are each one flat struct holding the
//! union of the fields their variants use, as in
//! [`crate::responses::lenient`]. Fields whose shape depends on something
//! else (a message's `content`, `tool_choice`, `stop`, ...) stay raw until the
//! translator knows what to expect. Unknown fields are ignored.

use serde::Deserialize;
use serde_json::value::RawValue;

#[cfg(doc)]
use super::{FunctionChoice, ToolChoice};
use super::{FunctionDef, Message, Tool};
use crate::raw::JsonStr;
use crate::Str;

/// A `CreateChatCompletionRequest` body.
#[derive(Debug, Default, Deserialize)]
pub struct CreateChatCompletion<'a> {
    /// Model id.
    #[serde(borrow)]
    pub model: Option<Str<'a>>,
    /// The conversation.
    #[serde(borrow)]
    pub messages: Option<Vec<Message<'a>>>,
    /// Tools the model may call: functions and custom tools.
    #[serde(borrow)]
    pub tools: Option<Vec<Tool<'a>>>,
    /// How the model picks tools (raw: a string or an object; see
    /// [`ToolChoice::from_raw`]).
    #[serde(borrow)]
    pub tool_choice: Option<&'a RawValue>,
    /// Whether several tool calls may be made in one turn.
    pub parallel_tool_calls: Option<bool>,
    /// Legacy function definitions.
    #[serde(borrow)]
    pub functions: Option<Vec<FunctionDef<'a>>>,
    /// Legacy function choice (raw: `"none"`, `"auto"` or `{"name"}`; see
    /// [`FunctionChoice::from_raw`]).
    #[serde(borrow)]
    pub function_call: Option<&'a RawValue>,
    /// Output format.
    #[serde(borrow)]
    pub response_format: Option<ResponseFormat<'a>>,
    /// Output verbosity: `low`, `medium` or `high`.
    #[serde(borrow)]
    pub verbosity: Option<Str<'a>>,
    /// Token limit (current name).
    pub max_completion_tokens: Option<u64>,
    /// Token limit (legacy name).
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Reasoning effort.
    #[serde(borrow)]
    pub reasoning_effort: Option<Str<'a>>,
    /// Return log probabilities of the output tokens.
    pub logprobs: Option<bool>,
    /// Most likely tokens to return per position.
    pub top_logprobs: Option<u32>,
    /// End-user id.
    #[serde(borrow)]
    pub user: Option<Str<'a>>,
    /// Stable end-user id for abuse detection.
    #[serde(borrow)]
    pub safety_identifier: Option<Str<'a>>,
    /// Prompt-cache key.
    #[serde(borrow)]
    pub prompt_cache_key: Option<Str<'a>>,
    /// Prompt-cache retention (`in_memory` or `24h`).
    #[serde(borrow)]
    pub prompt_cache_retention: Option<&'a RawValue>,
    /// Prompt-cache options.
    #[serde(borrow)]
    pub prompt_cache_options: Option<&'a RawValue>,
    /// Key-value metadata.
    #[serde(borrow)]
    pub metadata: Option<&'a RawValue>,
    /// Store the completion upstream (Chat default: false).
    pub store: Option<bool>,
    /// Service tier.
    #[serde(borrow)]
    pub service_tier: Option<Str<'a>>,
    /// Moderation configuration.
    #[serde(borrow)]
    pub moderation: Option<&'a RawValue>,
    /// Stream the answer.
    pub stream: Option<bool>,
    /// Streaming options.
    pub stream_options: Option<StreamOptions>,
    /// Built-in web search.
    #[serde(borrow)]
    pub web_search_options: Option<WebSearchOptions<'a>>,
    /// Number of alternative answers.
    pub n: Option<u64>,
    /// Stop sequences (a string or an array of strings).
    #[serde(borrow)]
    pub stop: Option<&'a RawValue>,
    /// Sampling seed.
    pub seed: Option<i64>,
    /// Presence penalty.
    pub presence_penalty: Option<f64>,
    /// Frequency penalty.
    pub frequency_penalty: Option<f64>,
    /// Token biases.
    #[serde(borrow)]
    pub logit_bias: Option<&'a RawValue>,
    /// Audio output settings.
    #[serde(borrow)]
    pub audio: Option<&'a RawValue>,
    /// Output modalities (`text`, `audio`).
    #[serde(borrow)]
    pub modalities: Option<Vec<Str<'a>>>,
    /// Predicted output.
    #[serde(borrow)]
    pub prediction: Option<&'a RawValue>,
}

/// `response_format`.
#[derive(Debug, Default, Deserialize)]
pub struct ResponseFormat<'a> {
    /// `text`, `json_object` or `json_schema`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// The schema of a `json_schema` format.
    #[serde(borrow)]
    pub json_schema: Option<JsonSchema<'a>>,
}

/// `response_format.json_schema`.
#[derive(Debug, Default, Deserialize)]
pub struct JsonSchema<'a> {
    /// Schema name.
    #[serde(borrow)]
    pub name: Option<JsonStr<'a>>,
    /// Description.
    #[serde(borrow)]
    pub description: Option<JsonStr<'a>>,
    /// The schema, passed through untouched.
    #[serde(borrow)]
    pub schema: Option<&'a RawValue>,
    /// Strict adherence.
    pub strict: Option<bool>,
}

/// `stream_options`.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub struct StreamOptions {
    /// Send a usage chunk before `[DONE]`.
    pub include_usage: Option<bool>,
    /// Pad stream events with random `obfuscation` text.
    pub include_obfuscation: Option<bool>,
}

/// `web_search_options`.
#[derive(Debug, Default, Deserialize)]
pub struct WebSearchOptions<'a> {
    /// `{type: approximate, approximate: {country, region, city, timezone}}`.
    #[serde(borrow)]
    pub user_location: Option<UserLocation<'a>>,
    /// `low`, `medium` or `high`.
    #[serde(borrow)]
    pub search_context_size: Option<Str<'a>>,
}

/// `web_search_options.user_location`.
#[derive(Debug, Default, Deserialize)]
pub struct UserLocation<'a> {
    /// Always `approximate`.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// The location.
    #[serde(borrow)]
    pub approximate: Option<ApproximateLocation<'a>>,
}

/// An approximate location.
#[derive(Debug, Default, Deserialize)]
pub struct ApproximateLocation<'a> {
    /// Two-letter ISO country code.
    #[serde(borrow)]
    pub country: Option<JsonStr<'a>>,
    /// Region, free text.
    #[serde(borrow)]
    pub region: Option<JsonStr<'a>>,
    /// City, free text.
    #[serde(borrow)]
    pub city: Option<JsonStr<'a>>,
    /// IANA time zone.
    #[serde(borrow)]
    pub timezone: Option<JsonStr<'a>>,
}

#[cfg(test)]
mod tests {
    use crate::chat::lenient::*;
    use serde_json::value::RawValue;

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
