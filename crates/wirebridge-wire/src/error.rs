//! The error body both APIs use: `{"error":{"message","type","param","code"}}`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::Str;

/// An HTTP error body.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody<'a> {
    /// The error.
    pub error: ApiError<'a>,
}

/// The error object, as emitted.
#[derive(Debug, Clone, Serialize)]
pub struct ApiError<'a> {
    /// Human-readable message.
    pub message: Cow<'a, str>,
    /// Error type, such as `invalid_request_error` or `server_error`.
    #[serde(rename = "type")]
    pub kind: Cow<'a, str>,
    /// The request parameter at fault.
    pub param: Option<Cow<'a, str>>,
    /// Machine-readable code.
    pub code: Option<Cow<'a, str>>,
}

/// An error object as an upstream sent it, read leniently: `code` may be a
/// number, and any field may be missing.
#[derive(Debug, Default, Deserialize)]
pub struct UpstreamError<'a> {
    /// Message.
    #[serde(borrow)]
    pub message: Option<Str<'a>>,
    /// Type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Str<'a>>,
    /// Parameter.
    #[serde(borrow)]
    pub param: Option<Str<'a>>,
    /// Code: a string or a number.
    #[serde(borrow)]
    pub code: Option<&'a RawValue>,
}

impl<'a> UpstreamError<'a> {
    /// Reads an error object, or a body wrapping one as `{"error": …}`, or a
    /// bare string. Returns `None` if `raw` is none of those.
    pub fn parse(raw: &'a RawValue) -> Option<Self> {
        #[derive(Deserialize)]
        struct Wrapped<'b> {
            #[serde(borrow)]
            error: &'b RawValue,
        }
        let text = raw.get();
        if text.starts_with('"') {
            let message: Str<'a> = serde_json::from_str(text).ok()?;
            return Some(UpstreamError {
                message: Some(message),
                ..Default::default()
            });
        }
        if let Ok(wrapped) = serde_json::from_str::<Wrapped<'a>>(text) {
            return Self::parse(wrapped.error);
        }
        serde_json::from_str(text).ok()
    }

    /// The code as text: strings as written, numbers in decimal.
    pub fn code_text(&self) -> Option<Cow<'a, str>> {
        let raw = self.code?.get();
        if raw == "null" {
            return None;
        }
        match serde_json::from_str::<Cow<'a, str>>(raw) {
            Ok(s) => Some(s),
            Err(_) => Some(Cow::Owned(raw.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wrapped_and_numeric_codes() {
        let raw: &RawValue =
            serde_json::from_str(r#"{"error":{"message":"slow down","code":429}}"#).unwrap();
        let err = UpstreamError::parse(raw).unwrap();
        assert_eq!(err.message.as_deref(), Some("slow down"));
        assert_eq!(err.code_text().as_deref(), Some("429"));
    }
}
