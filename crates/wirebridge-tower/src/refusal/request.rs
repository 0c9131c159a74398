//! Refusals of a request as it arrives, before anything is translated.

use thiserror::Error;

use super::refusal;

/// A request body past the body limit.
#[derive(Debug, Error)]
#[error("the request body is larger than the {limit}-byte limit")]
pub(crate) struct RequestTooLarge {
    /// The limit, in bytes.
    pub(crate) limit: usize,
}
refusal!(RequestTooLarge, PAYLOAD_TOO_LARGE, "request_too_large");

/// A request body whose reading failed.
#[derive(Debug, Error)]
#[error("the request body could not be read: {0}")]
pub(crate) struct BodyUnread(pub(crate) String);
refusal!(BodyUnread, BAD_REQUEST, "body_read_error");

/// A body that is not the JSON object the route takes.
#[derive(Debug, Error)]
#[error("the request body is not a JSON object")]
pub(crate) struct NotJsonObject;
refusal!(NotJsonObject, BAD_REQUEST, "invalid_json");

/// A model the upstream's list does not hold.
#[derive(Debug, Error)]
#[error("model: {id} is not one the upstream lists")]
pub(crate) struct ModelNotListed {
    /// The model asked for.
    pub(crate) id: String,
}
refusal!(ModelNotListed, NOT_FOUND, "model_not_found");

/// A request the bridge makes of its own (a compaction's summary) that it
/// could not write: a fault of the bridge, not of the client's request.
#[derive(Debug, Error)]
#[error("the {what} request could not be written: {error}")]
pub(crate) struct Unwritable {
    /// The request.
    pub(crate) what: &'static str,
    /// Why.
    pub(crate) error: String,
}
refusal!(
    Unwritable,
    INTERNAL_SERVER_ERROR,
    "internal_error",
    kind = "server_error"
);

/// A warm-up (`generate: false`) on an endpoint whose clients cannot ask
/// for one: only Responses clients have the WebSocket mode.
#[cfg(feature = "websocket")]
#[derive(Debug, Error)]
#[error("generate: a warm-up (`generate: false`) is not served on this endpoint")]
pub(crate) struct WarmUpNotServed;
#[cfg(feature = "websocket")]
refusal!(
    WarmUpNotServed,
    BAD_REQUEST,
    "unsupported_parameter",
    param = |_| Some("generate")
);
