//! Background responses (`background: true`): whether a request runs in
//! the background, and the `Response` a caller answers at once for it.

use wirebridge_wire::responses::lenient::CreateResponse;
use wirebridge_wire::responses::strict::{Response, ResponseEcho, ResponseStatus};

use super::Options;
use crate::error::ConvertError;
use crate::ids::{unix_now, ResponseIds};

/// Whether `request` runs in the background here: it asks to, and the
/// caller runs background responses. A background response is stored (the
/// client polls it): `store: false` with it is refused, naming
/// `background`.
pub(crate) fn runs_in_background(
    request: &CreateResponse<'_>,
    options: &Options,
) -> Result<bool, ConvertError> {
    let asked = request.background.is_some_and(|b| b.get() == "true");
    if !(asked && options.background) {
        return Ok(false);
    }
    if request.store == Some(false) {
        return Err(ConvertError::invalid(
            "background",
            "a background response is stored, to be polled: `store: false` cannot be sent with \
             `background: true`",
        ));
    }
    Ok(true)
}

/// The `Response` of a background request before it runs: `queued`, with
/// no output yet.
pub(crate) fn queued(ids: &ResponseIds, model: &str, echo: &ResponseEcho) -> Vec<u8> {
    let id = ids.response();
    let response = Response {
        id: &id,
        object: "response",
        created_at: unix_now(),
        status: ResponseStatus::Queued,
        completed_at: None,
        error: None,
        incomplete_details: None,
        model,
        output: &[],
        usage: None,
        echo,
    };
    let mut body = Vec::new();
    response.write_json(&mut body);
    body
}
