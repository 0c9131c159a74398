//! HTTP errors shaped as the client's API shapes them: OpenAI's
//! `{"error": {"message", "type", "param", "code"}}`, or Anthropic's
//! `{"type": "error", "error": {"type", "message"}}`.

use crate::body::DemoBody;
use crate::json::{Json, Obj};
use http::{header, HeaderValue, Response, StatusCode};
use serde_json::Value;
use wirebridge_wire::messages::strict::ErrorBody;

/// Which API's error shape an answer takes: the API of the endpoint the
/// request was sent to, so that its client can read the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorShape {
    /// OpenAI's, for Chat Completions, Responses and any other path.
    OpenAi,
    /// Anthropic's, for `…/messages` and `…/messages/count_tokens`.
    Anthropic,
}

impl ErrorShape {
    /// The shape the errors of a request to `path` take.
    pub(crate) fn for_path(path: &str) -> Self {
        let path = path.trim_end_matches('/');
        if path.ends_with("/messages") || path.ends_with("/messages/count_tokens") {
            ErrorShape::Anthropic
        } else {
            ErrorShape::OpenAi
        }
    }
}

/// An error answered with an HTTP status and an OpenAI-shaped body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// `error.message`.
    pub message: String,
    /// `error.type`.
    pub kind: &'static str,
    /// `error.param`.
    pub param: Option<String>,
    /// `error.code`.
    pub code: Option<String>,
}

impl ApiError {
    /// A 400 `invalid_request_error`.
    pub(crate) fn invalid_request(
        message: impl Into<String>,
        param: Option<&str>,
        code: Option<&str>,
    ) -> Self {
        ApiError {
            status: 400,
            message: message.into(),
            kind: "invalid_request_error",
            param: param.map(str::to_string),
            code: code.map(str::to_string),
        }
    }

    /// A 400 for a required parameter that is missing.
    pub(crate) fn missing(param: &str) -> Self {
        Self::invalid_request(
            format!("Missing required parameter: '{param}'."),
            Some(param),
            Some("missing_required_parameter"),
        )
    }

    /// A 400 for a parameter of the wrong type.
    pub(crate) fn invalid_type(param: &str, expected: &str, got: &Value) -> Self {
        Self::invalid_request(
            format!("Invalid type for '{param}': expected {expected}, but got {got}."),
            Some(param),
            Some("invalid_type"),
        )
    }

    /// The 404 for a URL the server does not serve.
    pub(crate) fn unknown_url(method: &str, path: &str) -> Self {
        ApiError {
            status: 404,
            message: format!(
                "Unknown request URL: {method} {path}. Please check the URL for typos."
            ),
            kind: "invalid_request_error",
            param: None,
            code: Some("unknown_url".to_string()),
        }
    }

    /// The 405 for a known URL with the wrong method.
    pub(crate) fn method_not_allowed(method: &str, path: &str) -> Self {
        ApiError {
            status: 405,
            message: format!("Method {method} is not allowed for {path}."),
            kind: "invalid_request_error",
            param: None,
            code: Some("method_not_allowed".to_string()),
        }
    }

    /// The 413 for a body over the configured limit.
    pub(crate) fn too_large(limit: usize) -> Self {
        ApiError {
            status: 413,
            message: format!("The request body is larger than {limit} bytes."),
            kind: "invalid_request_error",
            param: None,
            code: Some("request_too_large".to_string()),
        }
    }

    /// A 500 `server_error` with this message.
    pub(crate) fn server(message: impl Into<String>) -> Self {
        ApiError {
            status: 500,
            message: message.into(),
            kind: "server_error",
            param: None,
            code: None,
        }
    }

    /// The error a `demo:fail-midstream` stream ends with (in band; an HTTP
    /// 500 when not streaming).
    pub(crate) fn midstream() -> Self {
        let mut e = Self::server(
            "The demo upstream failed in the middle of the stream (scripted by `demo:fail-midstream`).",
        );
        e.code = Some("server_error".to_string());
        e
    }

    /// The error a `demo:error STATUS` trigger asks for, typed like OpenAI's
    /// errors of that status.
    pub(crate) fn scripted(status: u16) -> Self {
        let (kind, code, what) = match status {
            401 => (
                "invalid_request_error",
                Some("invalid_api_key"),
                "Incorrect API key provided",
            ),
            403 => ("permission_error", None, "Permission denied"),
            404 => (
                "invalid_request_error",
                Some("model_not_found"),
                "The model does not exist or you do not have access to it",
            ),
            429 => (
                "requests",
                Some("rate_limit_exceeded"),
                "Rate limit reached for requests",
            ),
            400..=499 => ("invalid_request_error", None, "Invalid request"),
            503 => ("server_error", None, "The engine is currently overloaded"),
            _ => (
                "server_error",
                None,
                "The server had an error while processing your request",
            ),
        };
        ApiError {
            status,
            message: format!("{what} (scripted by `demo:error {status}`)."),
            kind,
            param: None,
            code: code.map(str::to_string),
        }
    }

    /// The inner `{"message", "type", "param", "code"}` object.
    pub(crate) fn inner(&self) -> Obj {
        Obj::new()
            .with("message", &self.message)
            .with("type", self.kind)
            .with("param", self.param.as_deref().map(Json::from))
            .with("code", self.code.as_deref().map(Json::from))
    }

    /// The whole body: `{"error": {...}}`.
    pub(crate) fn body(&self) -> String {
        Obj::new().with("error", self.inner()).to_json()
    }

    /// Anthropic's `error.type` for this error's status, as its API types
    /// them (`overloaded_error` is its 529; a 503 means the same).
    pub(crate) fn anthropic_kind(&self) -> &'static str {
        match self.status {
            401 => "authentication_error",
            402 => "billing_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            503 | 529 => "overloaded_error",
            504 => "timeout_error",
            400..=499 => "invalid_request_error",
            _ => "api_error",
        }
    }

    /// The whole body as Anthropic shapes it:
    /// `{"type": "error", "error": {"type", "message"}}`.
    pub(crate) fn anthropic_body(&self) -> String {
        let body = ErrorBody::new(self.anthropic_kind(), self.message.as_str());
        serde_json::to_string(&body).unwrap_or_default()
    }

    /// The HTTP response, its body in the given shape.
    pub(crate) fn into_response(self, shape: ErrorShape) -> Response<DemoBody> {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = match shape {
            ErrorShape::OpenAi => self.body(),
            ErrorShape::Anthropic => self.anthropic_body(),
        };
        let mut res = Response::new(DemoBody::full(body));
        *res.status_mut() = status;
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_every_key() {
        let v: Value = serde_json::from_str(&ApiError::scripted(429).body()).unwrap();
        let e = &v["error"];
        assert_eq!(e["type"], "requests");
        assert_eq!(e["code"], "rate_limit_exceeded");
        assert!(e["param"].is_null());
        assert!(e["message"].as_str().unwrap().contains("demo:error 429"));
        let v: Value = serde_json::from_str(&ApiError::scripted(500).body()).unwrap();
        assert!(v["error"]["code"].is_null());
        assert_eq!(v["error"]["type"], "server_error");
    }

    #[test]
    fn anthropic_bodies_are_typed_by_status() {
        for (status, kind) in [
            (400, "invalid_request_error"),
            (401, "authentication_error"),
            (404, "not_found_error"),
            (429, "rate_limit_error"),
            (500, "api_error"),
            (529, "overloaded_error"),
        ] {
            let v: Value =
                serde_json::from_str(&ApiError::scripted(status).anthropic_body()).unwrap();
            assert_eq!(v["type"], "error");
            assert_eq!(v["error"]["type"], kind, "{status}");
            assert!(v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("demo:error"));
            assert_eq!(v.as_object().unwrap().len(), 2);
        }
        assert_eq!(
            ErrorShape::for_path("/v1/messages/count_tokens/"),
            ErrorShape::Anthropic
        );
        assert_eq!(ErrorShape::for_path("/v1/responses"), ErrorShape::OpenAi);
    }
}
