//! Arbitrary text as a message from a WebSocket-mode client, read as the
//! session reads it, before any turn runs.
//!
//! Checks, beyond not panicking:
//! - a turn comes only from a `response.create` object; its request body
//!   is that object without the WebSocket-only fields (`type`,
//!   `stream_id`, `generate`, `background`) and with `stream: true`, every
//!   other field kept as sent; its lane, warm-up flag and previous response
//!   are the message's; the body then translates for a Chat backend or is
//!   refused naming a field, as any request body;
//! - anything else is answered with one JSON event: an `error` event with a
//!   4xx/5xx status, a message and a code, echoing the client's lane when
//!   the message named one, or a steer's failure handing back its input;
//! - only `response.processed` goes unanswered.
//!
//! The field-by-field comparisons are made where the message is JSON that
//! serde_json reads into a `Value` and its top level names no field twice
//! (which of two equal names wins is not JSON's to say).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use wirebridge_convert::responses_to_chat::{translate_request, Options};
use wirebridge_fuzz::{check_request, unique_keys, Json};
use wirebridge_tower::websocket_fuzzing::{client_message, ClientMessage};

/// The fields that exist only on the WebSocket message.
const WEBSOCKET_ONLY: [&str; 5] = ["type", "stream_id", "generate", "stream", "background"];

fuzz_target!(|data: &[u8]| {
    // Text messages are UTF-8: the protocol layer refuses any other.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let json = Json::of(data);
    // The message as a map, when it can be compared field by field.
    let message: Option<Map<String, Value>> = match serde_json::from_str(text) {
        Ok(Value::Object(map)) if unique_keys(text) => Some(map),
        _ => None,
    };
    let kind = message.as_ref().and_then(|m| m.get("type"));
    let lane = message
        .as_ref()
        .and_then(|m| m.get("stream_id"))
        .and_then(Value::as_str);

    match client_message(text) {
        ClientMessage::Turn {
            body,
            stream_id,
            generate,
            previous_response_id,
        } => {
            assert_ne!(json, Json::Not, "a turn from no JSON: {text}");
            let body_json = Json::of(&body);
            assert!(
                body_json == Json::Strict || json != Json::Strict,
                "a {json:?} message made a {body_json:?} body: {}",
                String::from_utf8_lossy(&body)
            );
            if let Some(message) = &message {
                assert_eq!(kind, Some(&Value::from("response.create")), "{text}");
                let Ok(Value::Object(sent)) = serde_json::from_slice::<Value>(&body) else {
                    panic!("the body is no object: {}", String::from_utf8_lossy(&body));
                };
                let mut expected = message.clone();
                for field in WEBSOCKET_ONLY {
                    expected.remove(field);
                }
                expected.insert("stream".into(), Value::Bool(true));
                assert_eq!(sent, expected, "{text}");
                assert_eq!(stream_id.as_deref(), lane, "{text}");
                assert_eq!(
                    generate,
                    message.get("generate") != Some(&Value::Bool(false)),
                    "{text}"
                );
                assert_eq!(
                    previous_response_id.as_deref(),
                    message.get("previous_response_id").and_then(Value::as_str),
                    "{text}"
                );
                assert_ne!(message.get("stream"), Some(&Value::Bool(false)), "{text}");
                assert_ne!(
                    message.get("background"),
                    Some(&Value::Bool(true)),
                    "{text}"
                );
            }
            let translated = translate_request(&body, &Options::default());
            check_request(&body, translated.as_ref().map(|t| t.body.as_slice()));
        }
        ClientMessage::Answered(event) => {
            let Ok(Value::Object(event)) = serde_json::from_str::<Value>(&event) else {
                panic!("the answer is no JSON object: {event}");
            };
            match event.get("type").and_then(Value::as_str) {
                Some("error") => {
                    let status = event.get("status").and_then(Value::as_u64);
                    assert!(
                        status.is_some_and(|s| (400..600).contains(&s)),
                        "status: {event:?}"
                    );
                    let error = &event["error"];
                    assert!(
                        error["message"].as_str().is_some_and(|m| !m.is_empty()),
                        "message: {event:?}"
                    );
                    assert!(error["code"].is_string(), "code: {event:?}");
                    if json == Json::Not {
                        assert_eq!(error["code"], "invalid_json", "{event:?}");
                    }
                    // A lane is echoed as the client wrote it, or not at all
                    // (compared when the message's keys are unique: with a
                    // key written twice, which value the map keeps is not
                    // which the bridge reads).
                    if let Some(echoed) = event.get("stream_id") {
                        if message.is_some() {
                            assert_eq!(echoed.as_str(), lane, "{text}");
                        }
                    } else if kind == Some(&Value::from("response.create")) {
                        assert!(lane.is_none(), "the lane was not echoed: {text}");
                    }
                }
                Some("response.steer.failed") => {
                    if let Some(message) = &message {
                        assert_eq!(kind, Some(&Value::from("response.steer")), "{text}");
                        assert_eq!(event["steer"]["input"], message["input"], "{text}");
                        assert_eq!(
                            event["steer"]["previous_response_id"], message["previous_response_id"],
                            "{text}"
                        );
                    }
                }
                other => panic!("an answer of type {other:?}: {event:?}"),
            }
        }
        ClientMessage::Ignored => {
            assert_ne!(json, Json::Not, "{text}");
            if message.is_some() {
                assert_eq!(kind, Some(&Value::from("response.processed")), "{text}");
            }
        }
    }
});
