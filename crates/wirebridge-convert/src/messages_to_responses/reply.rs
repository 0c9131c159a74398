//! Pieces shared by the body and stream translators: usage, the stop
//! reason, tool inputs, thinking text, and upstream failures.

use std::borrow::Cow;

use serde_json::value::RawValue;
use wirebridge_wire::error::UpstreamError;
use wirebridge_wire::messages::strict::{OutputTokensDetails, StopReason, Usage};
use wirebridge_wire::raw::{json_as_string_literal, JsonStr, JsonText};
use wirebridge_wire::responses::lenient::{OutputItem, StreamEvent, Usage as ResponsesUsage};

use super::error::upstream_error_type;
use crate::summary::TokenUsage;

/// Responses usage in Anthropic's terms: `input_tokens` without the
/// tokens read from or written to the cache, which are counted apart;
/// with `count_thinking`, the reasoning tokens as thinking tokens.
pub(super) fn usage(u: &ResponsesUsage, count_thinking: bool) -> Usage {
    let details = u.input_tokens_details.unwrap_or_default();
    let cached = details.cached_tokens.unwrap_or_default();
    let written = details.cache_write_tokens.unwrap_or_default();
    Usage {
        input_tokens: u
            .input_tokens
            .unwrap_or_default()
            .saturating_sub(cached)
            .saturating_sub(written),
        cache_creation_input_tokens: written,
        cache_read_input_tokens: cached,
        output_tokens: u.output_tokens.unwrap_or_default(),
        // Anthropic's thinking tokens are the Responses reasoning tokens,
        // reported only to a client that asked for them by its beta.
        output_tokens_details: count_thinking.then(|| OutputTokensDetails {
            thinking_tokens: u
                .output_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or_default(),
        }),
    }
}

/// Responses usage in neutral terms, for summaries.
pub(super) fn token_usage(u: &ResponsesUsage) -> TokenUsage {
    TokenUsage {
        input: u.input_tokens.unwrap_or_default(),
        output: u.output_tokens.unwrap_or_default(),
        cached: u
            .input_tokens_details
            .and_then(|d| d.cached_tokens)
            .unwrap_or_default(),
        reasoning: u
            .output_tokens_details
            .and_then(|d| d.reasoning_tokens)
            .unwrap_or_default(),
    }
}

/// Why the message stopped: the backend's `incomplete` reason first, then
/// a call the backend left unfinished (`unfinished_call`: an output item
/// that ended `incomplete`, whatever the response's own status says: the
/// answer was cut, and `tool_use` would have the client run a call whose
/// input is not whole), then a refusal, then tool calls.
pub(super) fn stop_reason(
    status: Option<&str>,
    incomplete_reason: Option<&str>,
    refused: bool,
    tool_use: bool,
    unfinished_call: bool,
) -> StopReason {
    match (status, incomplete_reason) {
        (Some("incomplete"), Some("content_filter")) => StopReason::Refusal,
        (Some("incomplete"), _) => StopReason::MaxTokens,
        _ if unfinished_call => StopReason::MaxTokens,
        _ if refused => StopReason::Refusal,
        _ if tool_use => StopReason::ToolUse,
        _ => StopReason::EndTurn,
    }
}

/// A function call's arguments as a `tool_use` block's `input`: the JSON
/// object the arguments text holds (`{}` for none). Anything else is named
/// in the error.
pub(super) fn tool_input<'a>(arguments: Option<&'a RawValue>) -> Result<Cow<'a, RawValue>, String> {
    let Some(raw) = arguments.filter(|r| r.get() != "null") else {
        return Ok(Cow::Owned(empty_object()));
    };
    let text = match JsonStr::new(raw) {
        // Lenient servers send the arguments as an object.
        None if raw.get().starts_with('{') => return Ok(wirebridge_wire::compact(raw)),
        None => return Err(format!("arguments that are not a JSON object: {raw}")),
        Some(text) if text.is_empty() => return Ok(Cow::Owned(empty_object())),
        Some(text) => text.decode(),
    };
    match serde_json::from_str::<Box<RawValue>>(&text) {
        Ok(value) if value.get().trim_start().starts_with('{') => {
            Ok(Cow::Owned(wirebridge_wire::compact(&value).into_owned()))
        }
        _ => Err(format!("arguments that are not a JSON object: {text}")),
    }
}

/// Arguments as JSON text, the way `input_json_delta` carries them: the
/// string the backend wrote, or an object some servers send, written as
/// text.
pub(super) fn arguments_text(raw: Option<&RawValue>) -> JsonText<'_> {
    match raw.filter(|r| r.get() != "null") {
        None => JsonText::from_text(""),
        Some(raw) => match JsonStr::new(raw) {
            Some(text) => text.into(),
            None => JsonText::Owned(json_as_string_literal(&wirebridge_wire::compact(raw))),
        },
    }
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("constant")
}

/// The text a thinking block shows for a reasoning item: its summary parts,
/// else its reasoning text, parts a blank line apart; `None` when it has
/// neither.
pub(super) fn thinking_text<'a>(item: &'a OutputItem<'_>) -> Option<JsonText<'a>> {
    let texts = |parts: Vec<wirebridge_wire::responses::lenient::ContentPart<'a>>| {
        parts
            .into_iter()
            .filter_map(|p| p.text)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
    };
    let mut found = texts(item.summary_parts());
    if found.is_empty() {
        found = texts(item.parts());
    }
    (!found.is_empty()).then(|| JsonText::join(found, r"\n\n"))
}

/// A failure, as the `error` event and error body carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Failure {
    /// The message.
    pub(super) message: String,
    /// The Anthropic error type.
    pub(super) kind: &'static str,
    /// The backend's own type, if it gave one.
    pub(super) upstream_type: Option<String>,
    /// The backend's own code, if it gave one.
    pub(super) code: Option<String>,
}

impl Failure {
    /// A failure of the bridge's own, or of the transport.
    pub(super) fn api(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            kind: "api_error",
            upstream_type: None,
            code: None,
        }
    }

    fn from_parts(message: Option<&str>, kind: Option<&str>, code: Option<String>) -> Self {
        Failure {
            message: message
                .unwrap_or("the upstream reported an error")
                .to_owned(),
            kind: upstream_error_type(kind, code.as_deref()),
            upstream_type: kind.map(str::to_owned),
            code,
        }
    }

    /// A response's `error` object, if it has one.
    pub(super) fn from_raw(raw: Option<&RawValue>) -> Option<Self> {
        let err = UpstreamError::parse(raw.filter(|r| r.get() != "null")?)?;
        let code = err.code_text().map(Cow::into_owned);
        Some(Self::from_parts(
            err.message.as_deref(),
            err.kind.as_deref(),
            code,
        ))
    }

    /// An `error` event's failure: nested under `error`, or flat.
    pub(super) fn from_event(event: &StreamEvent<'_>) -> Self {
        let nested = event
            .error
            .filter(|r| r.get() != "null")
            .and_then(UpstreamError::parse)
            .unwrap_or_default();
        let flat = UpstreamError {
            code: event.code,
            ..UpstreamError::default()
        };
        let code = nested
            .code_text()
            .or_else(|| flat.code_text())
            .map(Cow::into_owned);
        Self::from_parts(
            nested.message.as_deref().or(event.message.as_deref()),
            nested.kind.as_deref(),
            code,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[test]
    fn tool_inputs_are_json_objects() {
        let args = raw(r#""{\"city\": \"Paris\"}""#);
        assert_eq!(
            tool_input(Some(&args)).unwrap().get(),
            r#"{"city":"Paris"}"#
        );
        assert_eq!(tool_input(Some(&raw(r#""""#))).unwrap().get(), "{}");
        assert_eq!(tool_input(None).unwrap().get(), "{}");
        assert_eq!(
            tool_input(Some(&raw(r#"{ "a" : 1 }"#))).unwrap().get(),
            r#"{"a":1}"#
        );
        for bad in [r#""[1]""#, r#""{\"a\":""#, "[1]", "3"] {
            assert!(tool_input(Some(&raw(bad))).is_err(), "{bad}");
        }
    }

    #[test]
    fn usage_counts_cached_tokens_apart() {
        let u: ResponsesUsage = serde_json::from_str(
            r#"{"input_tokens":100,"output_tokens":7,"input_tokens_details":{"cached_tokens":60,"cache_write_tokens":30}}"#,
        )
        .unwrap();
        assert_eq!(
            usage(&u, false),
            Usage {
                input_tokens: 10,
                cache_creation_input_tokens: 30,
                cache_read_input_tokens: 60,
                output_tokens: 7,
                output_tokens_details: None,
            }
        );
    }

    #[test]
    fn usage_says_how_many_tokens_were_thinking() {
        let u: ResponsesUsage = serde_json::from_str(
            r#"{"input_tokens":12,"output_tokens":40,"output_tokens_details":{"reasoning_tokens":31}}"#,
        )
        .unwrap();
        let json = serde_json::to_value(usage(&u, true)).unwrap();
        assert_eq!(json["output_tokens"], 40);
        assert_eq!(json["output_tokens_details"]["thinking_tokens"], 31);
        // Not asked for: Anthropic's usage has no breakdown then.
        let json = serde_json::to_value(usage(&u, false)).unwrap();
        assert!(json.get("output_tokens_details").is_none(), "{json}");
        // Asked for, and none counted: none.
        let u: ResponsesUsage =
            serde_json::from_str(r#"{"input_tokens":12,"output_tokens":4}"#).unwrap();
        let json = serde_json::to_value(usage(&u, true)).unwrap();
        assert_eq!(json["output_tokens_details"]["thinking_tokens"], 0);
    }

    #[test]
    fn stop_reasons() {
        assert_eq!(
            stop_reason(
                Some("incomplete"),
                Some("max_output_tokens"),
                false,
                true,
                false
            ),
            StopReason::MaxTokens
        );
        assert_eq!(
            stop_reason(
                Some("incomplete"),
                Some("content_filter"),
                false,
                false,
                false
            ),
            StopReason::Refusal
        );
        assert_eq!(
            stop_reason(Some("completed"), None, false, true, false),
            StopReason::ToolUse
        );
        assert_eq!(
            stop_reason(Some("completed"), None, true, false, false),
            StopReason::Refusal
        );
        assert_eq!(
            stop_reason(None, None, false, false, false),
            StopReason::EndTurn
        );
        assert_eq!(
            stop_reason(Some("completed"), None, false, true, true),
            StopReason::MaxTokens
        );
    }
}
