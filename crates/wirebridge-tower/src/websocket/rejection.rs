//! Every refusal of WebSocket mode, one type each, with the HTTP status
//! and the error code the client receives, in the manner of axum's
//! rejections: the handshake's refusals are error replies
//! ([`HandshakeRejection`]), a message that cannot be run gets an error
//! event ([`MessageRejection`]), and so does a turn whose upstream failed
//! ([`TurnFailure`]). The text of each is its `Display`.

use http::{header, HeaderValue, Response, StatusCode};
use thiserror::Error;

use crate::body::ResponseBody;
use crate::error_response::{error_response, error_type_for};

/// The protocol version a refused handshake is told to use.
pub(crate) const VERSION: &str = "13";

/// What the client is told of a refusal: the bridge's one trait for them,
/// shared with its HTTP refusals.
pub(crate) use crate::refusal::Refusal as Rejection;
use crate::refusal::{delegate, refusal as rejection};

// The handshake.

/// An upgrade request without `Connection: Upgrade`.
#[derive(Debug, Error)]
#[error("a WebSocket upgrade needs `Connection: Upgrade`")]
pub(crate) struct ConnectionNotUpgrade;
rejection!(
    ConnectionNotUpgrade,
    BAD_REQUEST,
    "invalid_websocket_handshake"
);

/// An upgrade request for another version than 13 (or none): the reply
/// says which one is spoken (`Sec-WebSocket-Version: 13`).
#[derive(Debug, Error)]
#[error("only WebSocket version {VERSION} is supported")]
pub(crate) struct UnsupportedVersion;
rejection!(
    UnsupportedVersion,
    UPGRADE_REQUIRED,
    "unsupported_websocket_version"
);

/// An upgrade request without a `Sec-WebSocket-Key`.
#[derive(Debug, Error)]
#[error("a WebSocket upgrade needs a `Sec-WebSocket-Key`")]
pub(crate) struct MissingKey;
rejection!(MissingKey, BAD_REQUEST, "invalid_websocket_handshake");

/// A request whose connection cannot be taken over: not served by hyper
/// with upgrades, or over HTTP/2.
#[derive(Debug, Error)]
#[error(
    "this server cannot upgrade the connection to a WebSocket; use HTTP/1.1, or \
     POST /v1/responses with `stream: true`"
)]
pub(crate) struct UpgradeUnavailable;
rejection!(UpgradeUnavailable, NOT_IMPLEMENTED, "websocket_unavailable");

/// Why an upgrade request is refused.
#[derive(Debug, Error)]
pub(crate) enum HandshakeRejection {
    /// See [`ConnectionNotUpgrade`].
    #[error(transparent)]
    ConnectionNotUpgrade(#[from] ConnectionNotUpgrade),
    /// See [`UnsupportedVersion`].
    #[error(transparent)]
    UnsupportedVersion(#[from] UnsupportedVersion),
    /// See [`MissingKey`].
    #[error(transparent)]
    MissingKey(#[from] MissingKey),
    /// See [`UpgradeUnavailable`].
    #[error(transparent)]
    UpgradeUnavailable(#[from] UpgradeUnavailable),
    /// See [`TooManyConnections`].
    #[error(transparent)]
    TooManyConnections(#[from] TooManyConnections),
}
delegate!(HandshakeRejection {
    ConnectionNotUpgrade,
    UnsupportedVersion,
    MissingKey,
    UpgradeUnavailable,
    TooManyConnections,
});

impl HandshakeRejection {
    /// The error reply, in the shape both APIs use.
    pub(crate) fn into_response<B>(self) -> Response<ResponseBody<B>> {
        let mut response = error_response(self.status(), self.api_error());
        if let Self::UnsupportedVersion(_) = self {
            response.headers_mut().insert(
                header::SEC_WEBSOCKET_VERSION,
                HeaderValue::from_static(VERSION),
            );
        }
        response
    }
}

/// A tenant already holds as many connections open as it may.
#[derive(Debug, Error)]
#[error("this credential already holds {max} WebSocket connections open; close one first")]
pub(crate) struct TooManyConnections {
    /// The cap.
    pub(crate) max: usize,
}
rejection!(
    TooManyConnections,
    TOO_MANY_REQUESTS,
    "too_many_connections"
);

// Messages from the client.

/// A binary message: events are JSON text.
#[derive(Debug, Error)]
#[error("binary messages are not read; send each event as JSON text")]
pub(crate) struct BinaryMessage;
rejection!(BinaryMessage, BAD_REQUEST, "unsupported_message");

/// A text message that is not a JSON object.
#[derive(Debug, Error)]
#[error("the message is not a JSON object: {0}")]
pub(crate) struct NotJson(#[from] pub(crate) serde_json::Error);
rejection!(NotJson, BAD_REQUEST, "invalid_json");

/// A message whose `type` this endpoint does not take.
#[derive(Debug, Error)]
#[error("unknown event type '{kind}'; this endpoint takes response.create")]
pub(crate) struct UnknownEvent {
    /// The `type` it had.
    pub(crate) kind: String,
}
rejection!(
    UnknownEvent,
    BAD_REQUEST,
    "unknown_event",
    param = |_: &Self| Some("type")
);

/// A message without a `type`.
#[derive(Debug, Error)]
#[error("the message has no `type`; this endpoint takes response.create")]
pub(crate) struct MissingType;
rejection!(
    MissingType,
    BAD_REQUEST,
    "missing_required_parameter",
    param = |_: &Self| Some("type")
);

/// A field of a message that is not of the type it must be.
#[derive(Debug, Error)]
#[error("`{field}` must be {expected}")]
pub(crate) struct WrongType {
    /// The field.
    pub(crate) field: &'static str,
    /// What it must be: "a string", "a boolean"…
    pub(crate) expected: &'static str,
}
rejection!(
    WrongType,
    BAD_REQUEST,
    "invalid_type",
    param = |r: &WrongType| Some(r.field)
);

/// A field set to what a WebSocket turn cannot honour (`stream: false`,
/// `background: true`).
#[derive(Debug, Error)]
#[error("`{field}: {value}` cannot be honoured: {why}")]
pub(crate) struct CannotHonour {
    /// The field.
    pub(crate) field: &'static str,
    /// Its value, as JSON.
    pub(crate) value: &'static str,
    /// Why not.
    pub(crate) why: &'static str,
}
rejection!(
    CannotHonour,
    BAD_REQUEST,
    "unsupported_value",
    param = |r: &CannotHonour| Some(r.field)
);

/// A `response.steer` without the response it steers: its refusal could
/// not name it.
#[derive(Debug, Error)]
#[error("response.steer needs `previous_response_id`, the response to steer")]
pub(crate) struct SteerWithoutResponse;
rejection!(
    SteerWithoutResponse,
    BAD_REQUEST,
    "missing_required_parameter",
    param = |_: &Self| Some("previous_response_id")
);

/// A `response.steer` without input: its refusal could not hand it back.
#[derive(Debug, Error)]
#[error("response.steer needs `input`")]
pub(crate) struct SteerWithoutInput;
rejection!(
    SteerWithoutInput,
    BAD_REQUEST,
    "missing_required_parameter",
    param = |_: &Self| Some("input")
);

/// A `response.create` beyond the connection's queue: too many turns
/// waiting, or too many bytes of them.
#[derive(Debug, Error)]
pub(crate) enum TooManyQueued {
    /// Too many turns.
    #[error("{waiting} responses are already waiting on this connection; wait for one to finish")]
    Messages {
        /// The turns running or queued.
        waiting: usize,
    },
    /// Too many bytes of requests waiting.
    #[error("{queued} bytes of requests are already waiting on this connection, and this one's {size} would pass its {limit}-byte queue; wait for one to finish")]
    Bytes {
        /// The bytes of the requests queued.
        queued: usize,
        /// This request's bytes.
        size: usize,
        /// The connection's queue, in bytes.
        limit: usize,
    },
}
rejection!(
    TooManyQueued,
    TOO_MANY_REQUESTS,
    "too_many_queued_responses"
);

/// A `response.create` whose request does not fit in the bytes every
/// connection holds together, once this connection's own oldest cached
/// responses are evicted: a bound of the server's, so a 503 the client may
/// retry, on this connection, once others have let go.
#[derive(Debug, Error)]
#[error(
    "the server's WebSocket connections hold {held} bytes of their {limit}-byte memory \
     bound (--websocket-max-memory), and this request's {size} bytes do not fit; retry \
     later"
)]
pub(crate) struct MemoryExhausted {
    /// The bytes held by every connection, when it was refused.
    pub(crate) held: usize,
    /// This request's bytes.
    pub(crate) size: usize,
    /// The bound.
    pub(crate) limit: usize,
}

rejection!(
    MemoryExhausted,
    SERVICE_UNAVAILABLE,
    "websocket_memory_exhausted",
    kind = "server_error"
);

/// Why a client message is not run.
#[derive(Debug, Error)]
pub(crate) enum MessageRejection {
    /// See [`BinaryMessage`].
    #[error(transparent)]
    BinaryMessage(#[from] BinaryMessage),
    /// See [`NotJson`].
    #[error(transparent)]
    NotJson(#[from] NotJson),
    /// See [`UnknownEvent`].
    #[error(transparent)]
    UnknownEvent(#[from] UnknownEvent),
    /// See [`MissingType`].
    #[error(transparent)]
    MissingType(#[from] MissingType),
    /// See [`WrongType`].
    #[error(transparent)]
    WrongType(#[from] WrongType),
    /// See [`CannotHonour`].
    #[error(transparent)]
    CannotHonour(#[from] CannotHonour),
    /// See [`SteerWithoutResponse`].
    #[error(transparent)]
    SteerWithoutResponse(#[from] SteerWithoutResponse),
    /// See [`SteerWithoutInput`].
    #[error(transparent)]
    SteerWithoutInput(#[from] SteerWithoutInput),
    /// See [`TooManyQueued`].
    #[error(transparent)]
    TooManyQueued(#[from] TooManyQueued),
    /// See [`MemoryExhausted`].
    #[error(transparent)]
    MemoryExhausted(#[from] MemoryExhausted),
}
delegate!(MessageRejection {
    BinaryMessage,
    NotJson,
    UnknownEvent,
    MissingType,
    WrongType,
    CannotHonour,
    SteerWithoutResponse,
    SteerWithoutInput,
    TooManyQueued,
    MemoryExhausted,
});

// A turn's upstream.

/// The upstream service failed without a reply.
#[derive(Debug, Error)]
#[error("the upstream service failed before it answered")]
pub(crate) struct NoReply;

/// A reply that is not a stream could not be read.
#[derive(Debug, Error)]
#[error("the reply could not be read: {0}")]
pub(crate) struct UnreadableReply(pub(crate) String);

/// The reply's event stream broke off.
#[derive(Debug, Error)]
#[error("the event stream broke: {0}")]
pub(crate) struct BrokenStream(pub(crate) String);

/// A successful reply that is not the turn's event stream: the exchange
/// answers every turn that reaches it with one, so this is a service
/// under the layer that answered in its place.
#[derive(Debug, Error)]
#[error("the reply is not an event stream of this turn's (content type {0})")]
pub(crate) struct NotTheTurnsStream(pub(crate) String);

/// Why a turn failed on the upstream's side: a 502 error event, of type
/// `server_error` and code `upstream_error`.
#[derive(Debug, Error)]
pub(crate) enum TurnFailure {
    /// See [`NoReply`].
    #[error(transparent)]
    NoReply(#[from] NoReply),
    /// See [`UnreadableReply`].
    #[error(transparent)]
    UnreadableReply(#[from] UnreadableReply),
    /// See [`BrokenStream`].
    #[error(transparent)]
    BrokenStream(#[from] BrokenStream),
    /// See [`NotTheTurnsStream`].
    #[error(transparent)]
    NotTheTurnsStream(#[from] NotTheTurnsStream),
}

impl Rejection for TurnFailure {
    fn status(&self) -> StatusCode {
        StatusCode::BAD_GATEWAY
    }

    fn code(&self) -> &'static str {
        "upstream_error"
    }

    fn kind(&self) -> &'static str {
        "server_error"
    }
}

/// An error reply that is not in the `{"error":{…}}` shape: its text is the
/// message. (The exchange writes every error reply in that shape, so only
/// a reply it did not write gets here.)
#[derive(Debug, Error)]
#[error("{text}")]
pub(crate) struct ForeignErrorReply {
    /// The reply's status.
    pub(crate) status: StatusCode,
    /// Its body, as text.
    pub(crate) text: String,
}

impl Rejection for ForeignErrorReply {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn code(&self) -> &'static str {
        "upstream_error"
    }

    fn kind(&self) -> &'static str {
        error_type_for(self.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_handshake_refusal_has_its_status_and_code() {
        let cases: [(HandshakeRejection, u16, &str); 4] = [
            (
                ConnectionNotUpgrade.into(),
                400,
                "invalid_websocket_handshake",
            ),
            (
                UnsupportedVersion.into(),
                426,
                "unsupported_websocket_version",
            ),
            (MissingKey.into(), 400, "invalid_websocket_handshake"),
            (UpgradeUnavailable.into(), 501, "websocket_unavailable"),
        ];
        for (rejection, status, code) in cases {
            assert_eq!(rejection.status().as_u16(), status, "{rejection}");
            assert_eq!(rejection.code(), code);
            assert_eq!(rejection.kind(), "invalid_request_error");
            assert_eq!(rejection.param(), None);
            let response = rejection.into_response::<()>();
            assert_eq!(response.status().as_u16(), status);
            assert_eq!(
                response
                    .headers()
                    .get(header::SEC_WEBSOCKET_VERSION)
                    .is_some(),
                status == 426
            );
        }
    }

    #[test]
    fn message_rejections_name_their_field() {
        let wrong = MessageRejection::from(WrongType {
            field: "generate",
            expected: "a boolean",
        });
        let error = wrong.api_error();
        assert_eq!(error.message, "`generate` must be a boolean");
        assert_eq!(error.param.as_deref(), Some("generate"));
        assert_eq!(error.code.as_deref(), Some("invalid_type"));
        let queued = MessageRejection::from(TooManyQueued::Messages { waiting: 3 });
        assert_eq!(queued.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(queued.param(), None);
        let memory = MessageRejection::from(MemoryExhausted {
            held: 30,
            size: 5,
            limit: 32,
        });
        assert_eq!(memory.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(memory.code(), "websocket_memory_exhausted");
        assert_eq!(memory.kind(), "server_error");
        assert_eq!(
            memory.to_string(),
            "the server's WebSocket connections hold 30 bytes of their 32-byte memory bound \
             (--websocket-max-memory), and this request's 5 bytes do not fit; retry later"
        );
        let failure = TurnFailure::from(BrokenStream("reset".into()));
        assert_eq!(failure.api_error().kind, "server_error");
        assert_eq!(failure.to_string(), "the event stream broke: reset");
    }
}
