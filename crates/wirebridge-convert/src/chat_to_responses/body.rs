//! Responses body → Chat completion body.

use super::ChatContext;
use crate::error::ConvertError;
use crate::loss::LossReport;

/// A translated reply body.
#[derive(Debug)]
pub struct TranslatedBody {
    /// The `chat.completion` JSON.
    pub body: Vec<u8>,
    /// What was dropped.
    pub losses: LossReport,
}

/// Translates a `Response` body into a `chat.completion`.
pub fn translate_body(body: &[u8], ctx: &ChatContext) -> Result<TranslatedBody, ConvertError> {
    let _ = (body, ctx);
    Err(ConvertError::InvalidUpstream("not implemented".into()))
}
