//! Translation errors, and how a client sees them.

use std::borrow::Cow;

use wirebridge_wire::error::{ApiError, ErrorBody};

use crate::loss::Loss;

/// Why a translation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// The body is not JSON, or not the shape the API defines.
    #[error("invalid request body{}: {message}", at(.param))]
    InvalidBody {
        /// JSON path of the offending field, if known.
        param: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A required field is missing.
    #[error("missing required parameter: '{0}'")]
    MissingField(String),
    /// The loss policy refuses something the request asks for.
    #[error("'{}' cannot be translated for this backend: {}", .0.path, .0.reason)]
    Rejected(Loss),
    /// The upstream's reply is not a valid reply of its API.
    #[error("invalid upstream response: {0}")]
    InvalidUpstream(String),
    /// The upstream answered, and its answer is a failure.
    #[error("{message}")]
    UpstreamFailed {
        /// The upstream's message.
        message: String,
        /// The upstream's error type, if it gave one.
        error_type: Option<String>,
        /// The upstream's code, if it gave one.
        code: Option<String>,
    },
    /// The stored conversation a request continues cannot be read.
    #[error("the stored conversation cannot be read: {0}")]
    UnreadableHistory(String),
}

fn at(param: &Option<String>) -> String {
    param
        .as_ref()
        .map(|p| format!(" at '{p}'"))
        .unwrap_or_default()
}

impl ConvertError {
    /// Builds an [`ConvertError::InvalidBody`] from a parse failure, locating
    /// the field by parsing again with path tracking (only on this cold path).
    pub fn from_parse<'de, T: serde::Deserialize<'de>>(
        bytes: &'de [u8],
        err: serde_json::Error,
    ) -> Self {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        match serde_path_to_error::deserialize::<_, T>(&mut de) {
            Err(located) => {
                let path = located.path().to_string();
                let param = (path != "." && !path.is_empty()).then_some(path);
                ConvertError::InvalidBody {
                    param,
                    message: located.into_inner().to_string(),
                }
            }
            Ok(_) => ConvertError::InvalidBody {
                param: None,
                message: err.to_string(),
            },
        }
    }

    /// Refuses a body that nests deeper than
    /// [`MAX_DEPTH`](wirebridge_wire::depth::MAX_DEPTH) anywhere, pass-through
    /// JSON (schemas, metadata) included, naming where.
    pub fn check_depth(body: &[u8]) -> Result<(), ConvertError> {
        Self::check_depth_and_compactness(body).map(|_| ())
    }

    /// [`check_depth`](Self::check_depth), also telling, from the same pass
    /// over the body, whether it is compact (no whitespace outside its
    /// strings): the raw values of a compact body need no compacting.
    pub fn check_depth_and_compactness(body: &[u8]) -> Result<bool, ConvertError> {
        use wirebridge_wire::depth::{survey, MAX_DEPTH};
        let found = survey(body, MAX_DEPTH);
        match found.too_deep {
            None => Ok(found.compact),
            Some(path) => Err(ConvertError::InvalidBody {
                param: Some(path),
                message: format!("JSON nested more than {MAX_DEPTH} levels deep"),
            }),
        }
    }

    /// A field with a bad value.
    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        ConvertError::InvalidBody {
            param: Some(param.into()),
            message: message.into(),
        }
    }

    /// The HTTP status a client should get: 400 for its own mistakes and
    /// refusals, 502 when the upstream misbehaved, 500 when stored state is
    /// unreadable.
    pub fn status(&self) -> u16 {
        match self {
            ConvertError::InvalidUpstream(_) | ConvertError::UpstreamFailed { .. } => 502,
            ConvertError::UnreadableHistory(_) => 500,
            _ => 400,
        }
    }

    /// The request parameter at fault.
    pub fn param(&self) -> Option<&str> {
        match self {
            ConvertError::InvalidBody { param, .. } => param.as_deref(),
            ConvertError::MissingField(p) => Some(p),
            ConvertError::Rejected(loss) => Some(&loss.path),
            ConvertError::UnreadableHistory(_) => Some("previous_response_id"),
            ConvertError::InvalidUpstream(_) | ConvertError::UpstreamFailed { .. } => None,
        }
    }

    /// A machine-readable code.
    pub fn code(&self) -> &str {
        match self {
            ConvertError::UpstreamFailed { code, .. } => {
                code.as_deref().unwrap_or("upstream_error")
            }
            ConvertError::InvalidBody { .. } => "invalid_request_body",
            ConvertError::MissingField(_) => "missing_required_parameter",
            ConvertError::Rejected(_) => "unsupported_parameter",
            ConvertError::InvalidUpstream(_) => "bad_upstream_response",
            ConvertError::UnreadableHistory(_) => "stored_state_unreadable",
        }
    }

    /// The error object, as both APIs shape it.
    pub fn to_api_error(&self) -> ApiError<'_> {
        ApiError {
            message: Cow::Owned(self.to_string()),
            kind: Cow::Borrowed(match self {
                ConvertError::UpstreamFailed {
                    error_type: Some(t),
                    ..
                } => t,
                ConvertError::InvalidUpstream(_)
                | ConvertError::UpstreamFailed { .. }
                | ConvertError::UnreadableHistory(_) => "server_error",
                _ => "invalid_request_error",
            }),
            param: self.param().map(Cow::Borrowed),
            code: Some(Cow::Borrowed(self.code())),
        }
    }

    /// The HTTP error body `{"error":{…}}`.
    pub fn to_body(&self) -> Vec<u8> {
        serde_json::to_vec(&ErrorBody {
            error: self.to_api_error(),
        })
        .expect("error bodies always serialize")
    }
}

impl ConvertError {
    /// A nested field that failed to parse, named by its parent.
    pub fn from_parse_at(param: &str, err: serde_json::Error) -> Self {
        ConvertError::InvalidBody {
            param: Some(param.to_owned()),
            message: err.to_string(),
        }
    }
}
