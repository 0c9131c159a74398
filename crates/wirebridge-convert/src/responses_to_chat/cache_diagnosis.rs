//! What a Responses request asks of prompt cache diagnostics (see
//! [`cache_diagnostics`](crate::cache_diagnostics)).

use super::{History, ParsedRequest};
use crate::cache_diagnostics::{comparison_response_id, responses_fingerprint, CacheDiagnosis};
use crate::error::ConvertError;

impl ParsedRequest<'_> {
    /// What the request asks of prompt cache diagnostics, if it takes
    /// part: a request that carries `prompt_cache_options` does (a first
    /// turn opts in with `{}`, or with `comparison_response_id: null`), as
    /// a Messages request that carries `diagnostics` does; its conversation
    /// before its own input is `history`'s. Only such requests are
    /// fingerprinted: the others cost nothing.
    pub fn cache_diagnosis(
        &self,
        history: &History<'_>,
    ) -> Result<Option<CacheDiagnosis>, ConvertError> {
        let options = self
            .request
            .prompt_cache_options
            .filter(|o| o.get() != "null");
        if options.is_none() {
            return Ok(None);
        }
        Ok(Some(CacheDiagnosis {
            comparison: comparison_response_id(options)?,
            fingerprint: responses_fingerprint(&self.request, history.arrays())?,
        }))
    }
}
