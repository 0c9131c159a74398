//! Chat request → Responses request.

use super::{ChatContext, Options};
use crate::error::ConvertError;
use crate::loss::LossReport;

/// A translated request.
#[derive(Debug)]
pub struct TranslatedRequest {
    /// The Responses request body.
    pub body: Vec<u8>,
    /// What translating the reply needs.
    pub context: ChatContext,
    /// What was dropped.
    pub losses: LossReport,
}

/// Translates a `POST /v1/chat/completions` body into a `POST /v1/responses`
/// body.
pub fn translate_request(body: &[u8], options: &Options) -> Result<TranslatedRequest, ConvertError> {
    let _ = (body, options);
    Err(ConvertError::InvalidUpstream("not implemented".into()))
}
