//! Writing events, and the failure that ends a stream.

use crate::frames::Frames;
use serde::Serialize;
use serde_json::value::RawValue;
use wirebridge_wire::error::UpstreamError;
use wirebridge_wire::responses::strict::Event;

/// Why a stream ends in failure.
#[derive(Debug)]
pub(in crate::responses_to_chat) struct Failure {
    pub(in crate::responses_to_chat) error_type: String,
    pub(in crate::responses_to_chat) code: Option<String>,
    pub(in crate::responses_to_chat) message: String,
    pub(in crate::responses_to_chat) param: Option<String>,
}

impl Failure {
    pub(super) fn server(message: impl Into<String>) -> Self {
        Failure {
            error_type: "server_error".into(),
            code: Some("server_error".into()),
            message: message.into(),
            param: None,
        }
    }
}

/// `Response.error.code` must be one of the spec's codes; anything else an
/// upstream says is carried in the `error` event, which allows any code.
pub(super) const RESPONSE_ERROR_CODES: [&str; 5] = [
    "server_error",
    "rate_limit_exceeded",
    "invalid_prompt",
    "vector_store_timeout",
    "invalid_image",
];

pub(in crate::responses_to_chat) fn emit<B: Serialize>(
    out: &mut Frames,
    seq: &mut u64,
    kind: &'static str,
    body: B,
) {
    let event = Event {
        kind,
        sequence_number: *seq,
        body,
    };
    out.event(Some(kind), |out| {
        serde_json::to_writer(out, &event).expect("events always serialize")
    });
    *seq += 1;
}

pub(super) fn to_raw<T: Serialize>(value: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("items and responses always serialize")
}

pub(super) fn upstream_failure(raw: &RawValue) -> Failure {
    match UpstreamError::parse(raw) {
        Some(err) => Failure {
            error_type: err.kind.as_deref().unwrap_or("server_error").to_owned(),
            code: err.code_text().map(|c| c.into_owned()),
            message: err
                .message
                .as_deref()
                .unwrap_or("the upstream reported an error")
                .to_owned(),
            param: err.param.as_deref().map(str::to_owned),
        },
        None => Failure::server(format!("the upstream reported an error: {}", raw.get())),
    }
}
