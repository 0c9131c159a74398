//! Errors as the Messages API shapes them: the body of an error reply, and
//! the data of the stream's `error` event (the same object).

use std::borrow::Cow;

use serde::Serialize;

/// `{"type":"error","error":{"type":…,"message":…}}`.
///
/// ```
/// use wirebridge_wire::messages::strict::ErrorBody;
///
/// let body = ErrorBody::new("invalid_request_error", "max_tokens: Field required");
/// assert_eq!(
///     serde_json::to_string(&body).unwrap(),
///     r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}"#
/// );
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody<'a> {
    /// Always `error`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The error.
    pub error: ErrorObject<'a>,
}

impl<'a> ErrorBody<'a> {
    /// An error of type `kind` (`invalid_request_error`, `api_error`, …).
    pub fn new(kind: impl Into<Cow<'a, str>>, message: impl Into<Cow<'a, str>>) -> Self {
        Self {
            kind: "error",
            error: ErrorObject {
                kind: kind.into(),
                message: message.into(),
                details: None,
            },
        }
    }

    /// The same error, with the `error_code` Anthropic's API names its
    /// cause with (`thread_not_found`, …) in `details`.
    pub fn with_code(mut self, error_code: impl Into<Cow<'a, str>>) -> Self {
        self.error.details = Some(ErrorDetails {
            error_code: error_code.into(),
        });
        self
    }
}

/// The `error` of an [`ErrorBody`].
#[derive(Debug, Clone, Serialize)]
pub struct ErrorObject<'a> {
    /// `invalid_request_error`, `authentication_error`, `permission_error`,
    /// `not_found_error`, `request_too_large`, `rate_limit_error`,
    /// `api_error` or `overloaded_error`.
    #[serde(rename = "type")]
    pub kind: Cow<'a, str>,
    /// What went wrong.
    pub message: Cow<'a, str>,
    /// The cause, by a code clients branch on, where the error has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<ErrorDetails<'a>>,
}

/// The `details` of an [`ErrorObject`]: `{"error_code": …}`.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorDetails<'a> {
    /// A code naming the cause, such as `thread_not_found`.
    pub error_code: Cow<'a, str>,
}
