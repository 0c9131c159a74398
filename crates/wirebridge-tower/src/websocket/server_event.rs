//! Messages to the client besides a turn's stream events (which the
//! exchange writes with the client's lane): the protocol's error event, and
//! the refusal of a steer.

use http::StatusCode;
use serde::Serialize;
use serde_json::value::RawValue;
use wirebridge_wire::RawObject;

use super::client_event::Steer;
use super::rejection::{ForeignErrorReply, Rejection};

#[derive(Serialize)]
struct ErrorEvent<'a, E> {
    #[serde(rename = "type")]
    kind: &'static str,
    status: u16,
    error: E,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_id: Option<&'a str>,
}

/// The error event (`WebSocketErrorEvent`) for a refusal of the bridge's.
pub(crate) fn error_event(rejection: &impl Rejection, stream_id: Option<&str>) -> String {
    serde_json::to_string(&ErrorEvent {
        kind: "error",
        status: rejection.status().as_u16(),
        error: rejection.api_error(),
        stream_id,
    })
    .expect("error events always serialize")
}

#[derive(Serialize)]
struct SteerFailed<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    sequence_number: u64,
    steer: SteerEcho<'a>,
    error: SteerError,
}

#[derive(Serialize)]
struct SteerEcho<'a> {
    previous_response_id: &'a str,
    input: &'a RawValue,
}

#[derive(Serialize)]
struct SteerError {
    #[serde(rename = "type")]
    kind: &'static str,
    code: &'static str,
    message: &'static str,
}

/// `response.steer.failed` for a steer: steering is not supported (see
/// [`client_event`](super::client_event)), and the input goes back to the
/// client.
///
/// The event belongs to no response's stream (no steer was accepted into
/// one), so it counts from `sequence_number` 0 on its own, rather than
/// renumbering the events of a turn under way. No `steer.id`: failures
/// before an id is allocated have none. No `stream_id` either: the steer is
/// refused without looking its response up, and the client matches the
/// failure by `previous_response_id`.
pub(crate) fn steer_failed(steer: &Steer) -> String {
    serde_json::to_string(&SteerFailed {
        kind: "response.steer.failed",
        sequence_number: 0,
        steer: SteerEcho {
            previous_response_id: &steer.previous_response_id,
            input: &steer.input,
        },
        error: SteerError {
            kind: "invalid_request_error",
            code: "steering_not_supported",
            message: "steering is not supported here: the backend takes no input while it \
                      answers. Send this input with response.create (previous_response_id) \
                      once the response is done.",
        },
    })
    .expect("steer failures always serialize")
}

/// The error event for an error reply of the exchange (`{"error":{…}}`,
/// the same body an HTTP client would have received).
pub(crate) fn error_reply_event(
    status: StatusCode,
    body: &[u8],
    stream_id: Option<&str>,
) -> String {
    let error = std::str::from_utf8(body)
        .ok()
        .and_then(|text| serde_json::from_str::<&RawValue>(text).ok())
        .and_then(|raw| RawObject::parse(raw).ok())
        .and_then(|object| object.get("error").map(RawValue::to_owned))
        .and_then(|error| with_code(&error, status));
    match error {
        Some(error) => serde_json::to_string(&ErrorEvent {
            kind: "error",
            status: status.as_u16(),
            error,
            stream_id,
        })
        .expect("error events always serialize"),
        // The exchange writes every error reply itself: not reached but
        // by a reply it did not write.
        None => error_event(
            &ForeignErrorReply {
                status,
                text: String::from_utf8_lossy(body).into_owned(),
            },
            stream_id,
        ),
    }
}

/// The error object with a `code`, which the error event requires: an
/// upstream's error often has none; its `type` then stands in, else one
/// that says where it came from.
fn with_code(error: &RawValue, status: StatusCode) -> Option<Box<RawValue>> {
    let mut object = RawObject::parse(error).ok()?;
    if object
        .get("code")
        .is_none_or(|code| !code.get().starts_with('"'))
    {
        let code = match object.get("type").filter(|t| t.get().starts_with('"')) {
            Some(kind) => kind.get().to_owned(),
            None => format!("\"{}\"", crate::error_response::error_type_for(status)),
        };
        object.set("code", &code);
    }
    Some(object.to_raw())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steer_is_refused_with_its_input_handed_back() {
        let steer = Steer {
            previous_response_id: "resp_1".into(),
            input: RawValue::from_string(r#"[{"role":"user","content":"stop"}]"#.into()).unwrap(),
        };
        let event: serde_json::Value = serde_json::from_str(&steer_failed(&steer)).unwrap();
        // The fields of the SDKs' `ResponseSteerFailedEvent`: type,
        // sequence_number, steer {previous_response_id, input, id?},
        // error {type: invalid_request_error, code, message}.
        assert_eq!(event["type"], "response.steer.failed");
        assert_eq!(event["sequence_number"], 0);
        assert_eq!(
            event["steer"],
            serde_json::json!({"previous_response_id": "resp_1",
                "input": [{"role": "user", "content": "stop"}]})
        );
        assert_eq!(event["error"]["type"], "invalid_request_error");
        assert_eq!(event["error"]["code"], "steering_not_supported");
        assert!(event["error"]["message"]
            .as_str()
            .unwrap()
            .contains("response.create"));
        assert_eq!(event.as_object().unwrap().len(), 4);
    }

    #[test]
    fn error_replies_keep_their_error_object() {
        let body = br#"{"error":{"message":"no such model","type":"invalid_request_error","param":"model","code":"model_not_found"}}"#;
        let event: serde_json::Value =
            serde_json::from_str(&error_reply_event(StatusCode::NOT_FOUND, body, Some("l")))
                .unwrap();
        assert_eq!(
            event,
            serde_json::json!({"type":"error","status":404,"stream_id":"l","error":{
                "message":"no such model","type":"invalid_request_error","param":"model","code":"model_not_found"}})
        );
        let odd: serde_json::Value =
            serde_json::from_str(&error_reply_event(StatusCode::BAD_GATEWAY, b"oops", None))
                .unwrap();
        assert_eq!(odd["status"], 502);
        assert_eq!(odd["error"]["message"], "oops");
        assert_eq!(odd["error"]["type"], "server_error");
        // Every error event has a code.
        let uncoded =
            br#"{"error":{"message":"boom","type":"server_error","param":null,"code":null}}"#;
        let event: serde_json::Value = serde_json::from_str(&error_reply_event(
            StatusCode::INTERNAL_SERVER_ERROR,
            uncoded,
            None,
        ))
        .unwrap();
        assert_eq!(event["error"]["code"], "server_error");
        assert_eq!(event["error"]["message"], "boom");
    }
}
