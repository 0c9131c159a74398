//! Error replies in the shape the client's API uses: OpenAI's (Chat
//! Completions and Responses) or Anthropic's (Messages).

use http::{header, HeaderValue, Response, StatusCode};
use wirebridge_convert::messages_to_responses::error_body_for;
use wirebridge_wire::error::{ApiError, ErrorBody, UpstreamError};
use wirebridge_wire::Str;

use crate::body::ResponseBody;
use crate::observer::Direction;

/// Whose error shape a client reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `{"error":{"message","type","param","code"}}`.
    OpenAi,
    /// `{"type":"error","error":{"type","message"}}`, with the status
    /// Anthropic's API gives each error type.
    Anthropic,
}

impl Dialect {
    /// The dialect of a direction's clients.
    pub(crate) fn of(direction: Direction) -> Self {
        match direction {
            Direction::MessagesToResponses => Dialect::Anthropic,
            Direction::ResponsesToChat
            | Direction::ChatToResponses
            | Direction::ResponsesToResponses
            | Direction::ResponsesToMessages => Dialect::OpenAi,
        }
    }

    /// An error reply in this dialect.
    pub(crate) fn error_response<B>(
        self,
        status: StatusCode,
        error: ApiError<'_>,
    ) -> Response<ResponseBody<B>> {
        match self {
            Dialect::OpenAi => error_response(status, error),
            Dialect::Anthropic => {
                let (status, body) = anthropic(status, &error);
                json_response(status, body)
            }
        }
    }

    /// An upstream error reply re-shaped: its status (Anthropic's for the
    /// error's type) and body.
    pub(crate) fn reshape_upstream_error(
        self,
        status: StatusCode,
        body: &[u8],
    ) -> (StatusCode, Vec<u8>) {
        let error = upstream_api_error(status, body);
        match self {
            Dialect::OpenAi => (status, to_body(error)),
            Dialect::Anthropic => anthropic(status, &error),
        }
    }
}

/// An error in Anthropic's shape, from its OpenAI-style parts.
fn anthropic(status: StatusCode, error: &ApiError<'_>) -> (StatusCode, Vec<u8>) {
    let (status, body) = error_body_for(
        status.as_u16(),
        Some(&error.kind),
        error.code.as_deref(),
        &error.message,
    );
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    (status, body)
}

/// An error reply: `{"error":{"message","type","param","code"}}`.
pub(crate) fn error_response<B>(
    status: StatusCode,
    error: ApiError<'_>,
) -> Response<ResponseBody<B>> {
    json_response(status, to_body(error))
}

fn to_body(error: ApiError<'_>) -> Vec<u8> {
    serde_json::to_vec(&ErrorBody { error }).expect("error bodies always serialize")
}

fn json_response<B>(status: StatusCode, body: Vec<u8>) -> Response<ResponseBody<B>> {
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(ResponseBody::full(body));
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, length);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The error type OpenAI uses for a status.
pub(crate) fn error_type_for(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 404 | 409 | 413 | 415 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        429 => "rate_limit_error",
        _ => "server_error",
    }
}

/// Longest upstream text quoted in an error message.
const MAX_QUOTED: usize = 2000;

/// An upstream error body in the client's shape: message and code kept, a
/// body that is not an OpenAI-style error wrapped as the message.
pub(crate) fn reshape_upstream_error(status: StatusCode, body: &[u8]) -> Vec<u8> {
    to_body(upstream_api_error(status, body))
}

/// An upstream error body's parts: message and code kept, a body that is
/// not an OpenAI-style error quoted as the message.
fn upstream_api_error(status: StatusCode, body: &[u8]) -> ApiError<'static> {
    let parsed = serde_json::from_slice::<&serde_json::value::RawValue>(body)
        .ok()
        .and_then(UpstreamError::parse);
    let quoted;
    let (message, kind, param, code) = match &parsed {
        Some(err) => (
            err.message.clone().map_or_else(
                || format!("upstream error {}", status.as_u16()).into(),
                Str::into_cow,
            ),
            err.kind
                .clone()
                .map_or(error_type_for(status).into(), Str::into_cow),
            err.param.clone().map(Str::into_cow),
            err.code_text(),
        ),
        None => {
            let text = String::from_utf8_lossy(body);
            let text = text.trim();
            quoted = if text.is_empty() {
                format!("the upstream answered {status} with an empty body")
            } else {
                let cut: String = text.chars().take(MAX_QUOTED).collect();
                format!("the upstream answered {status}: {cut}")
            };
            (
                quoted.as_str().into(),
                error_type_for(status).into(),
                None,
                None,
            )
        }
    };
    ApiError {
        message: message.into_owned().into(),
        kind: kind.into_owned().into(),
        param: param.map(|p| p.into_owned().into()),
        code: code.map(|c| c.into_owned().into()),
    }
}

/// Shorthand for an error with a static type and code.
pub(crate) fn api_error<'a>(
    message: impl Into<std::borrow::Cow<'a, str>>,
    error_type: &'a str,
    code: &'a str,
) -> ApiError<'a> {
    ApiError {
        message: message.into(),
        kind: error_type.into(),
        param: None,
        code: Some(code.into()),
    }
}
