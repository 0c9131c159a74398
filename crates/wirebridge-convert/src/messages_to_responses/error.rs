//! Errors as a Messages client gets them:
//! `{"type":"error","error":{"type":…,"message":…}}`, with the status
//! Anthropic's API gives each error type.

use wirebridge_wire::messages::strict::ErrorBody;

use crate::error::ConvertError;

/// The Anthropic error type of an HTTP status: `invalid_request_error`
/// (400, and other 4xx), `authentication_error` (401), `permission_error`
/// (403), `not_found_error` (404), `request_too_large` (413),
/// `rate_limit_error` (429), `overloaded_error` (529), `api_error` (other
/// 5xx).
pub fn error_type_for_status(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        500.. => "api_error",
        _ => "invalid_request_error",
    }
}

/// The status Anthropic's API answers an error type with; `None` for
/// `api_error`, whose status is the failure's own (a 500, or the 502 of an
/// upstream that misbehaved).
fn status_of(error_type: &str) -> Option<u16> {
    Some(match error_type {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => return None,
    })
}

/// The Anthropic error type of a failure a Responses backend reported, from
/// its OpenAI-style `type` and `code`.
pub(super) fn upstream_error_type(kind: Option<&str>, code: Option<&str>) -> &'static str {
    let known = |name: &str| match name {
        "rate_limit_exceeded" | "rate_limit_error" | "insufficient_quota" | "429" => {
            Some("rate_limit_error")
        }
        "server_is_overloaded" | "overloaded_error" | "slow_down" | "529" | "503" => {
            Some("overloaded_error")
        }
        "invalid_request_error" | "context_length_exceeded" | "invalid_prompt" | "400" => {
            Some("invalid_request_error")
        }
        "authentication_error" | "invalid_api_key" | "401" => Some("authentication_error"),
        "permission_error" | "403" => Some("permission_error"),
        "not_found_error" | "model_not_found" | "404" => Some("not_found_error"),
        _ => None,
    };
    code.and_then(known)
        .or_else(|| kind.and_then(known))
        .unwrap_or("api_error")
}

/// The status and body a Messages client gets for an error answered in
/// OpenAI's shape (by a Responses service, or the bridge itself) with
/// `status`, its `type`, `code` and `message`.
///
/// A status Anthropic's API gives one error type (401, 403, 404, 413, 429,
/// 529) names that type; otherwise the OpenAI type or code says what kind
/// of error it was, and a kind Anthropic lacks is the status's own type
/// (`invalid_request_error` for a 4xx, `api_error` for a 5xx, keeping the
/// status).
///
/// ```
/// use wirebridge_convert::messages_to_responses::error_body_for;
///
/// let (status, body) = error_body_for(400, Some("invalid_request_error"), Some("context_length_exceeded"), "too long");
/// assert_eq!(status, 400);
/// let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// assert_eq!(body["error"]["type"], "invalid_request_error");
/// assert_eq!(body["error"]["message"], "too long");
///
/// let (status, _) = error_body_for(502, Some("server_error"), Some("upstream_redirect"), "no");
/// assert_eq!(status, 502);
/// let (status, _) = error_body_for(500, None, Some("rate_limit_exceeded"), "slow down");
/// assert_eq!(status, 429);
/// ```
pub fn error_body_for(
    status: u16,
    error_type: Option<&str>,
    code: Option<&str>,
    message: &str,
) -> (u16, Vec<u8>) {
    let kind = match status {
        401 | 403 | 404 | 413 | 429 | 529 => error_type_for_status(status),
        _ => match upstream_error_type(error_type, code) {
            "api_error" => error_type_for_status(status),
            known => known,
        },
    };
    let status = status_of(kind)
        .filter(|_| kind != "invalid_request_error" || !(400..500).contains(&status))
        .unwrap_or(status);
    let mut body = ErrorBody::new(kind, message);
    if let Some(code) = code.filter(|c| ANTHROPIC_CODES.contains(c)) {
        body = body.with_code(code);
    }
    let bytes = serde_json::to_vec(&body).expect("error bodies always serialize");
    (status, bytes)
}

/// The causes Anthropic's API names in an error's `details.error_code`,
/// which its SDKs raise as errors of their own (`ThreadNotFoundError`, …):
/// an error answered with one of them as its `code` carries it there.
const ANTHROPIC_CODES: [&str; 5] = [
    "thread_not_found",
    "thread_already_continued",
    "thread_continue_in_flight",
    "thread_fingerprint_mismatch",
    "thread_unsupported_request",
];

/// The status and body a Messages client gets for `err`: a request that
/// cannot be translated is an `invalid_request_error` (400) whose message
/// names the field; an upstream failure keeps its kind where Anthropic has
/// one (a rate limit is a 429 `rate_limit_error`), else it is an
/// `api_error` with the error's own status.
///
/// ```
/// use wirebridge_convert::messages_to_responses::{error_body, translate_request, Options};
///
/// let err = translate_request(br#"{"model":"m","messages":[]}"#, &Options::default()).unwrap_err();
/// let (status, body) = error_body(&err);
/// assert_eq!(status, 400);
/// let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// assert_eq!(body["type"], "error");
/// assert_eq!(body["error"]["type"], "invalid_request_error");
/// assert!(body["error"]["message"].as_str().unwrap().contains("max_tokens"));
/// ```
pub fn error_body(err: &ConvertError) -> (u16, Vec<u8>) {
    let kind = match err {
        ConvertError::UpstreamFailed {
            error_type, code, ..
        } => upstream_error_type(error_type.as_deref(), code.as_deref()),
        other => error_type_for_status(other.status()),
    };
    let status = status_of(kind).unwrap_or_else(|| err.status().max(500));
    let body = ErrorBody::new(kind, err.to_string());
    let bytes = serde_json::to_vec(&body).expect("error bodies always serialize");
    (status, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_failures_keep_their_kind() {
        let limited = ConvertError::UpstreamFailed {
            message: "slow down".into(),
            error_type: Some("requests".into()),
            code: Some("rate_limit_exceeded".into()),
        };
        let (status, body) = error_body(&limited);
        assert_eq!(status, 429);
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["type"], "rate_limit_error");
        assert_eq!(body["error"]["message"], "slow down");

        let broken = ConvertError::InvalidUpstream("not JSON".into());
        let (status, body) = error_body(&broken);
        assert_eq!(status, 502);
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["type"], "api_error");

        let unknown = ConvertError::UpstreamFailed {
            message: "boom".into(),
            error_type: Some("server_error".into()),
            code: None,
        };
        assert_eq!(error_body(&unknown).0, 502);
    }

    #[test]
    fn a_code_of_anthropics_is_carried_as_its_error_code() {
        let (status, body) = error_body_for(
            404,
            Some("invalid_request_error"),
            Some("thread_not_found"),
            "thread.previous_message_id: no such thread",
        );
        assert_eq!(status, 404);
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["type"], "not_found_error");
        assert_eq!(body["error"]["details"]["error_code"], "thread_not_found");
        let (_, body) = error_body_for(404, None, Some("not_found"), "no");
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert!(body["error"].get("details").is_none(), "{body}");
    }

    #[test]
    fn statuses_name_their_types() {
        for (status, kind) in [
            (400, "invalid_request_error"),
            (401, "authentication_error"),
            (404, "not_found_error"),
            (429, "rate_limit_error"),
            (500, "api_error"),
            (529, "overloaded_error"),
        ] {
            assert_eq!(error_type_for_status(status), kind);
            assert_eq!(status_of(kind).unwrap_or(500), status);
        }
    }
}
