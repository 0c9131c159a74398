//! Messages from the client: `response.create` (a turn), and the few
//! others a client may send.
//!
//! `response.steer` (queue user input for the response running) is refused
//! with the typed `response.steer.failed` event the SDKs know (code
//! `steering_not_supported`), not emulated. Emulating it would mean cutting
//! the backend's answer at an item boundary (`incomplete`, reason
//! `steered`), then running successor responses that inherit the cut one's
//! settings, and holding the input across client-run tool calls
//! (`response.steer.pending` and its `required_input` stubs): a protocol
//! described only by the SDKs' types, in neither API spec, whose timing a
//! Chat backend cannot give (it takes no input while it answers). The
//! refusal hands the input back, as the protocol says a failed steer does,
//! for the client to send with its next `response.create`.

use serde_json::value::RawValue;
use wirebridge_wire::RawObject;

use super::rejection::{
    CannotHonour, MessageRejection, MissingType, NotJson, SteerWithoutInput, SteerWithoutResponse,
    UnknownEvent, WrongType,
};

/// A message from the client.
#[derive(Debug)]
pub(crate) enum ClientEvent {
    /// A turn to run.
    Create(Create),
    /// Input to steer a response with: refused.
    Steer(Steer),
    /// An acknowledgement that needs no answer (`response.processed`,
    /// which Codex sends once it has handled a response).
    Ignored,
}

/// A `response.create` message, as the request body of one turn.
#[derive(Debug)]
pub(crate) struct Create {
    /// The message without its WebSocket-only fields, with `stream: true`:
    /// the body of `POST /v1/responses`.
    pub(crate) body: Vec<u8>,
    /// The lane the client named; echoed on every event of the turn.
    pub(crate) stream_id: Option<String>,
    /// `generate: false`: a response with no model call.
    pub(crate) generate: bool,
    /// The response the turn continues.
    pub(crate) previous_response_id: Option<String>,
}

/// A `response.steer` message: what its refusal hands back.
#[derive(Debug)]
pub(crate) struct Steer {
    /// The response the client meant to steer.
    pub(crate) previous_response_id: String,
    /// The input as sent: a string or a list of items.
    pub(crate) input: Box<RawValue>,
}

/// A message that cannot be run: why, and the lane its error event goes
/// to.
#[derive(Debug)]
pub(crate) struct Rejected {
    pub(crate) rejection: MessageRejection,
    pub(crate) stream_id: Option<String>,
}

impl<R: Into<MessageRejection>> From<R> for Box<Rejected> {
    fn from(rejection: R) -> Self {
        Box::new(Rejected {
            rejection: rejection.into(),
            stream_id: None,
        })
    }
}

/// Fields of `POST /v1/responses` that a WebSocket turn cannot honour when
/// set so: it always streams, and is never run in the background. (Clients
/// do send `stream: true`, which asks for what happens anyway.)
const CONTRADICTED: [(&str, &str, &str); 2] = [
    (
        "stream",
        "false",
        "a WebSocket turn always streams its events",
    ),
    (
        "background",
        "true",
        "background responses are not run over a WebSocket",
    ),
];

/// Reads a text message.
pub(crate) fn parse(text: &str) -> Result<ClientEvent, Box<Rejected>> {
    // Checked and split into its fields in one pass.
    let object = RawObject::parse_str(text).map_err(NotJson)?;
    match object.str("type") {
        Some("response.create") => create(object),
        Some("response.processed") => Ok(ClientEvent::Ignored),
        Some("response.steer") => steer(&object),
        Some(other) => Err(UnknownEvent {
            kind: other.to_owned(),
        }
        .into()),
        None => Err(MissingType.into()),
    }
}

/// A steer whose fields the failure event can hand back; one that lacks
/// them is refused as any malformed message is.
fn steer(object: &RawObject<'_>) -> Result<ClientEvent, Box<Rejected>> {
    let previous_response_id = match object.get("previous_response_id") {
        None => None,
        Some(value) => {
            Some(
                serde_json::from_str::<String>(value.get()).map_err(|_| WrongType {
                    field: "previous_response_id",
                    expected: "a string",
                })?,
            )
        }
    }
    .ok_or(SteerWithoutResponse)?;
    let input = object.get("input").ok_or(SteerWithoutInput)?;
    if !matches!(input.get().as_bytes().first(), Some(b'"' | b'[')) {
        return Err(WrongType {
            field: "input",
            expected: "a string or a list of input items",
        }
        .into());
    }
    Ok(ClientEvent::Steer(Steer {
        previous_response_id,
        input: input.to_owned(),
    }))
}

fn create(mut object: RawObject<'_>) -> Result<ClientEvent, Box<Rejected>> {
    let stream_id = match object.get("stream_id") {
        None => None,
        Some(value) => {
            Some(
                serde_json::from_str::<String>(value.get()).map_err(|_| WrongType {
                    field: "stream_id",
                    expected: "a string",
                })?,
            )
        }
    };
    let with_lane = |rejection: MessageRejection| {
        Box::new(Rejected {
            rejection,
            stream_id: stream_id.clone(),
        })
    };
    for (field, value, why) in CONTRADICTED {
        if object.get(field).is_some_and(|v| v.get() == value) {
            return Err(with_lane(CannotHonour { field, value, why }.into()));
        }
    }
    let generate = match object.get("generate").map(RawValue::get) {
        None | Some("true") | Some("null") => true,
        Some("false") => false,
        Some(_) => {
            return Err(with_lane(
                WrongType {
                    field: "generate",
                    expected: "a boolean",
                }
                .into(),
            ))
        }
    };
    let previous_response_id = match object.get("previous_response_id") {
        None => None,
        Some(value) => serde_json::from_str::<Option<String>>(value.get()).unwrap_or(None),
    };
    for field in ["type", "stream_id", "generate", "stream", "background"] {
        object.remove(field);
    }
    object.set("stream", "true");
    Ok(ClientEvent::Create(Create {
        body: object.to_raw().get().as_bytes().to_vec(),
        stream_id,
        generate,
        previous_response_id,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::websocket::rejection::Rejection;
    use http::StatusCode;

    fn created(text: &str) -> Create {
        match parse(text).unwrap() {
            ClientEvent::Create(create) => create,
            other => panic!("{other:?}"),
        }
    }

    fn rejected(text: &str) -> Box<Rejected> {
        parse(text).unwrap_err()
    }

    #[test]
    fn a_create_message_becomes_a_streaming_request_body() {
        let c = created(
            r#"{"type":"response.create","model":"m","input":"hi","stream_id":"lane-1","generate":true,"previous_response_id":"resp_1"}"#,
        );
        let body: serde_json::Value = serde_json::from_slice(&c.body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"model":"m","input":"hi","previous_response_id":"resp_1","stream":true})
        );
        assert_eq!(c.stream_id.as_deref(), Some("lane-1"));
        assert!(c.generate);
        assert_eq!(c.previous_response_id.as_deref(), Some("resp_1"));
    }

    #[test]
    fn generate_false_is_a_warm_up() {
        let c = created(r#"{"type":"response.create","model":"m","generate":false}"#);
        assert!(!c.generate);
        assert!(c.stream_id.is_none() && c.previous_response_id.is_none());
    }

    #[test]
    fn what_a_websocket_turn_cannot_honour_is_refused_naming_it() {
        for (field, value) in [("stream", "false"), ("background", "true")] {
            let r = rejected(&format!(
                r#"{{"type":"response.create","model":"m","stream_id":"s","{field}":{value}}}"#
            ));
            assert_eq!(r.rejection.status(), StatusCode::BAD_REQUEST);
            assert_eq!(r.rejection.param(), Some(field));
            assert_eq!(r.stream_id.as_deref(), Some("s"), "the lane is echoed");
        }
        // What happens anyway may be asked for (as Codex does).
        let c = created(
            r#"{"type":"response.create","model":"m","stream":true,"background":false,"stream_options":{"include_obfuscation":false}}"#,
        );
        let body: serde_json::Value = serde_json::from_slice(&c.body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"model":"m","stream_options":{"include_obfuscation":false},"stream":true})
        );
    }

    #[test]
    fn a_steer_keeps_what_its_refusal_hands_back() {
        let text = r#"{"type":"response.steer","previous_response_id":"resp_1","input":[{"type":"message","role":"user","content":"stop"}]}"#;
        match parse(text).unwrap() {
            ClientEvent::Steer(steer) => {
                assert_eq!(steer.previous_response_id, "resp_1");
                assert_eq!(
                    steer.input.get(),
                    r#"[{"type":"message","role":"user","content":"stop"}]"#
                );
            }
            other => panic!("{other:?}"),
        }
        let text = r#"{"type":"response.steer","previous_response_id":"resp_1","input":"stop"}"#;
        assert!(matches!(parse(text), Ok(ClientEvent::Steer(s)) if s.input.get() == r#""stop""#));
        // What a failure event could not hand back is an error event.
        for (text, param) in [
            (
                r#"{"type":"response.steer","input":"x"}"#,
                "previous_response_id",
            ),
            (
                r#"{"type":"response.steer","previous_response_id":7,"input":"x"}"#,
                "previous_response_id",
            ),
            (
                r#"{"type":"response.steer","previous_response_id":"r"}"#,
                "input",
            ),
            (
                r#"{"type":"response.steer","previous_response_id":"r","input":3}"#,
                "input",
            ),
        ] {
            assert_eq!(rejected(text).rejection.param(), Some(param), "{text}");
        }
    }

    #[test]
    fn other_messages_are_named_in_the_error() {
        assert!(matches!(
            parse(r#"{"type":"response.processed","response_id":"resp_1"}"#),
            Ok(ClientEvent::Ignored)
        ));
        let unknown = rejected(r#"{"type":"session.update"}"#);
        assert!(unknown.rejection.to_string().contains("session.update"));
        assert_eq!(unknown.rejection.param(), Some("type"));
        let untyped = rejected(r#"{"model":"m"}"#);
        assert_eq!(untyped.rejection.param(), Some("type"));
        let garbage = rejected("{not json");
        assert_eq!(garbage.rejection.code(), "invalid_json");
        let array = rejected("[1]");
        assert_eq!(array.rejection.code(), "invalid_json");
        let lane = rejected(r#"{"type":"response.create","stream_id":7}"#);
        assert_eq!(lane.rejection.param(), Some("stream_id"));
    }
}
