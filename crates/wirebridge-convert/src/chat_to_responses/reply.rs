//! Pieces shared by the body and stream translators.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use wirebridge_wire::chat::strict::{
    Annotation, CompletionDetails, CompletionUsage, PromptDetails, UrlCitation,
};
use wirebridge_wire::error::{ApiError, ErrorBody, UpstreamError};
use wirebridge_wire::raw::{JsonStr, JsonText};
use wirebridge_wire::responses::lenient::{StreamEvent, Usage};
use wirebridge_wire::Str;

/// Responses usage in Chat terms.
pub(super) fn usage(u: &Usage) -> CompletionUsage {
    let prompt = u.input_tokens.unwrap_or_default();
    let completion = u.output_tokens.unwrap_or_default();
    CompletionUsage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: u.total_tokens.unwrap_or(prompt.saturating_add(completion)),
        prompt_tokens_details: PromptDetails {
            cached_tokens: u
                .input_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or_default(),
        },
        completion_tokens_details: CompletionDetails {
            reasoning_tokens: u
                .output_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or_default(),
        },
    }
}

/// Chat usage in neutral terms, for summaries.
pub(super) fn token_usage(u: &CompletionUsage) -> crate::summary::TokenUsage {
    crate::summary::TokenUsage {
        input: u.prompt_tokens,
        output: u.completion_tokens,
        cached: u.prompt_tokens_details.cached_tokens,
        reasoning: u.completion_tokens_details.reasoning_tokens,
    }
}

/// The Chat `finish_reason` of a finished response. A call the backend
/// left unfinished (`unfinished_call`: an output item that ended
/// `incomplete`, whatever the response's own status says) means the answer
/// was cut: `length`, never `tool_calls`, which would have the client run
/// a call whose arguments are not whole.
pub(super) fn finish_reason(
    status: Option<&str>,
    incomplete_reason: Option<&str>,
    tool_calls: bool,
    unfinished_call: bool,
) -> &'static str {
    match (status, incomplete_reason) {
        (Some("incomplete"), Some("content_filter")) => "content_filter",
        (Some("incomplete"), _) => "length",
        _ if unfinished_call => "length",
        _ if tool_calls => "tool_calls",
        _ => "stop",
    }
}

/// Whether a function call's arguments are what a client runs its tool
/// with: a JSON object, or nothing at all (a tool without parameters).
pub(super) fn arguments_are_object(arguments: &JsonText<'_>) -> bool {
    let Ok(text) = serde_json::from_str::<Cow<'_, str>>(arguments.raw().get()) else {
        return false;
    };
    let text = text.trim();
    text.is_empty()
        || serde_json::from_str::<&RawValue>(text).is_ok_and(|v| v.get().starts_with('{'))
}

/// A Responses `url_citation` annotation in Chat shape, or `None` for other
/// kinds (file citations have no Chat form).
pub(super) fn chat_annotation(raw: &RawValue) -> Option<Annotation<'_>> {
    #[derive(Deserialize)]
    struct Responses<'b> {
        #[serde(rename = "type", borrow)]
        kind: Str<'b>,
        #[serde(borrow, default)]
        url: Option<JsonStr<'b>>,
        #[serde(borrow, default)]
        title: Option<JsonStr<'b>>,
        #[serde(default)]
        start_index: u64,
        #[serde(default)]
        end_index: u64,
    }
    let a: Responses<'_> = serde_json::from_str(raw.get()).ok()?;
    if a.kind != "url_citation" {
        return None;
    }
    Some(Annotation::UrlCitation {
        url_citation: UrlCitation {
            url: a.url?.into(),
            title: a.title.map_or_else(|| JsonText::from_text(""), Into::into),
            start_index: a.start_index,
            end_index: a.end_index,
        },
    })
}

/// An upstream failure, read from a nested or flat error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Failure {
    pub(super) message: String,
    pub(super) error_type: String,
    pub(super) code: Option<String>,
    pub(super) param: Option<String>,
}

impl Failure {
    pub(super) fn server(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            error_type: "server_error".into(),
            code: None,
            param: None,
        }
    }

    pub(super) fn from_raw(raw: Option<&RawValue>) -> Option<Self> {
        let err = UpstreamError::parse(raw.filter(|r| r.get() != "null")?)?;
        Some(Failure {
            message: err
                .message
                .as_deref()
                .unwrap_or("the upstream reported an error")
                .to_owned(),
            error_type: err.kind.as_deref().unwrap_or("server_error").to_owned(),
            code: err.code_text().map(Cow::into_owned),
            param: err.param.as_deref().map(str::to_owned),
        })
    }

    /// The failure an `error` event reports, whatever its shape: the error
    /// nested under `error` (as OpenAI sends it), the flat `code`, `message`
    /// and `param` of the OpenAPI spec, or a mix; each field is taken from
    /// wherever it is, a numeric code as its digits.
    pub(super) fn from_event(event: &StreamEvent<'_>) -> Self {
        let nested = event
            .error
            .filter(|r| r.get() != "null")
            .and_then(UpstreamError::parse)
            .unwrap_or_default();
        let flat_code = UpstreamError {
            code: event.code,
            ..UpstreamError::default()
        };
        Failure {
            message: nested
                .message
                .as_deref()
                .or(event.message.as_deref())
                .unwrap_or("the upstream reported an error")
                .to_owned(),
            error_type: nested.kind.as_deref().unwrap_or("server_error").to_owned(),
            code: nested
                .code_text()
                .or_else(|| flat_code.code_text())
                .map(Cow::into_owned),
            param: nested
                .param
                .as_deref()
                .or(event.param.as_deref())
                .map(str::to_owned),
        }
    }

    /// The Chat error object `{"error":{…}}`.
    pub(super) fn to_body(&self) -> ErrorBody<'_> {
        ErrorBody {
            error: ApiError {
                message: Cow::Borrowed(&self.message),
                kind: Cow::Borrowed(&self.error_type),
                param: self.param.as_deref().map(Cow::Borrowed),
                code: self.code.as_deref().map(Cow::Borrowed),
            },
        }
    }
}
