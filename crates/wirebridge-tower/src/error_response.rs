//! Error replies in the shape both APIs use.

use http::{header, HeaderValue, Response, StatusCode};
use wirebridge_wire::error::{ApiError, ErrorBody, UpstreamError};
use wirebridge_wire::Str;

use crate::body::ResponseBody;

/// An error reply: `{"error":{"message","type","param","code"}}`.
pub(crate) fn error_response<B>(
    status: StatusCode,
    error: ApiError<'_>,
) -> Response<ResponseBody<B>> {
    let body = serde_json::to_vec(&ErrorBody { error }).expect("error bodies always serialize");
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
    let error = ApiError {
        message,
        kind,
        param,
        code,
    };
    serde_json::to_vec(&ErrorBody { error }).expect("error bodies always serialize")
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
