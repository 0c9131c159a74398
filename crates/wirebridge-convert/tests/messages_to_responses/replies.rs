//! `Response` bodies translated into `message` bodies: every recorded
//! body, and every recorded stream folded into a body, agreeing with the
//! stream translation.

use serde_json::{json, Value};
use wirebridge_convert::messages_to_responses::{
    error_body, translate_body, MessagesContext, StreamTranslator, ThinkingDisplay,
};
use wirebridge_convert::ConvertError;
use wirebridge_testkit::{fixtures, messages_grammar, parse_sse, reshape, responses_grammar};

use super::streams::{assert_usage, expected, seen, stop_reason};
use crate::common::drive;

fn ctx(thinking: ThinkingDisplay) -> MessagesContext {
    MessagesContext {
        model: "claude-sonnet-4-5".into(),
        thinking,
        count_thinking: thinking != ThinkingDisplay::Off,
        diagnostics: None,
        compacted_at: None,
        ..MessagesContext::default()
    }
}

fn message(body: &[u8], thinking: ThinkingDisplay) -> Value {
    let translated = translate_body(body, &ctx(thinking)).unwrap();
    serde_json::from_slice(&translated.body).unwrap()
}

#[test]
fn every_recorded_responses_body_translates() {
    let bodies = fixtures::responses_bodies();
    assert!(bodies.len() >= 3);
    for (name, bytes) in bodies {
        let response: Value = serde_json::from_slice(&bytes).unwrap();
        let recorded = responses_grammar::responses_body_transcript(&response);
        let body = message(&bytes, ThinkingDisplay::Summarized);
        assert_eq!(body["type"], "message", "{name}");
        assert_eq!(body["role"], "assistant", "{name}");
        assert!(body["id"].as_str().unwrap().starts_with("msg_"), "{name}");
        assert_eq!(body["stop_sequence"], Value::Null, "{name}");
        let t = messages_grammar::messages_body_transcript(&body);
        assert_eq!(
            seen(&t),
            expected(&recorded.output, ThinkingDisplay::Summarized),
            "{name}"
        );
        assert_eq!(
            t.stop_reason.as_deref(),
            Some(stop_reason(&recorded)),
            "{name}"
        );
        assert_usage(
            &body["usage"],
            recorded.usage.as_ref().unwrap(),
            true,
            &name,
        );
    }
}

fn masked(blocks: &[Value]) -> Vec<Value> {
    let mut blocks = blocks.to_vec();
    for block in &mut blocks {
        if let Some(signature) = block.get_mut("signature") {
            *signature = json!(!signature.as_str().unwrap().is_empty());
        }
    }
    blocks
}

/// The body and the stream translations of one reply say the same.
#[test]
fn bodies_and_streams_agree() {
    for stream in fixtures::responses_streams() {
        let recorded = responses_grammar::transcript_of_recorded(&stream.frames());
        if recorded.status == "failed" || stream.name.contains("openai-phase") {
            continue;
        }
        let folded = reshape::responses_stream_as_body(&stream.frames());
        let bytes = serde_json::to_vec(&folded).unwrap();
        for display in [ThinkingDisplay::Summarized, ThinkingDisplay::Omitted] {
            let name = format!("{} ({display:?})", stream.name);
            let body = message(&bytes, display);
            let from_body = messages_grammar::messages_body_transcript(&body);
            let (out, _) = drive(StreamTranslator::new(ctx(display)), &stream.sse, 31);
            let from_stream = messages_grammar::check(&parse_sse(&out)).unwrap();
            // The folded body carries the terminal response's reasoning
            // carriers, the stream its done events' (see `done_carriers`):
            // both are the backend's, and compared there.
            assert_eq!(
                masked(&from_body.blocks),
                masked(&from_stream.blocks),
                "{name}"
            );
            assert_eq!(from_body.stop_reason, from_stream.stop_reason, "{name}");
            assert_eq!(from_body.usage, from_stream.usage, "{name}");
        }
    }
}

#[test]
fn a_failed_response_is_the_upstreams_error() {
    let failed = br#"{"id":"resp_1","object":"response","status":"failed","output":[],"error":{"code":"rate_limit_exceeded","message":"Slow down"}}"#;
    let err = translate_body(failed, &MessagesContext::default()).unwrap_err();
    assert_eq!(err.to_string(), "Slow down");
    let (status, body) = error_body(&err);
    assert_eq!(status, 429);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        body,
        json!({"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}})
    );
}

#[test]
fn calls_the_client_cannot_take_are_named() {
    let reply = |arguments: &str, name: &str| {
        format!(
            r#"{{"id":"r","status":"completed","output":[{{"type":"function_call","id":"fc_1","call_id":"call_1","name":"{name}","arguments":{}}}]}}"#,
            serde_json::to_string(arguments).unwrap()
        )
    };
    let declared = MessagesContext {
        declared_tools: Some(vec!["get_weather".into()]),
        ..MessagesContext::default()
    };
    let err = translate_body(reply("[1,2]", "get_weather").as_bytes(), &declared).unwrap_err();
    assert!(matches!(err, ConvertError::InvalidUpstream(_)), "{err}");
    assert!(err.to_string().contains("output[0]"), "{err}");

    // A call to a tool the client never declared was the backend's own.
    let ran = translate_body(reply("{}", "web_search").as_bytes(), &declared).unwrap();
    let body: Value = serde_json::from_slice(&ran.body).unwrap();
    assert_eq!(body["content"], json!([]));
    assert_eq!(body["stop_reason"], "end_turn");
    assert_eq!(ran.losses.paths(), "output[0]");

    let ok = translate_body(
        reply(r#"{"city":"Paris"}"#, "get_weather").as_bytes(),
        &declared,
    )
    .unwrap();
    let body: Value = serde_json::from_slice(&ok.body).unwrap();
    assert_eq!(
        body["content"][0],
        json!({"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}})
    );
    assert_eq!(body["stop_reason"], "tool_use");
}

#[test]
fn refusals_and_limits_set_the_stop_reason() {
    let refusal = br#"{"status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}]}"#;
    let body = message(refusal, ThinkingDisplay::Off);
    assert_eq!(body["stop_reason"], "refusal");
    assert_eq!(body["content"][0]["text"], "I can't help with that.");
    let cut = br#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Half","annotations":[]}]}]}"#;
    assert_eq!(
        message(cut, ThinkingDisplay::Off)["stop_reason"],
        "max_tokens"
    );
}

/// A stream for a client that asked for a body is the body of the same
/// blocks the stream gives a streaming client.
#[test]
fn streams_folded_into_bodies_agree_with_streams() {
    use wirebridge_convert::messages_to_responses::translate_stream_body;
    for stream in fixtures::responses_streams() {
        let recorded = responses_grammar::transcript_of_recorded(&stream.frames());
        let name = &stream.name;
        let folded = translate_stream_body(&stream.sse, &ctx(ThinkingDisplay::Summarized));
        if recorded.status == "failed" {
            let err = folded.unwrap_err();
            assert!(
                matches!(err, ConvertError::UpstreamFailed { .. }),
                "{name}: {err}"
            );
            continue;
        }
        let folded = folded.unwrap_or_else(|e| panic!("{name}: {e}"));
        let body: Value = serde_json::from_slice(&folded.body).unwrap();
        let from_body = messages_grammar::messages_body_transcript(&body);
        let (out, translator) = drive(
            StreamTranslator::new(ctx(ThinkingDisplay::Summarized)),
            &stream.sse,
            33,
        );
        let from_stream = messages_grammar::check(&parse_sse(&out)).unwrap();
        if !name.contains("openai-phase") {
            assert_eq!(from_body.blocks, from_stream.blocks, "{name}");
        }
        assert_eq!(from_body.stop_reason, from_stream.stop_reason, "{name}");
        assert_eq!(from_body.usage, from_stream.usage, "{name}");
        assert_eq!(folded.summary, translator.summary(), "{name}");
    }
}

#[test]
fn a_turn_of_a_thread_is_answered_with_the_id_it_continues_from() {
    let ctx = MessagesContext {
        model: "m".into(),
        thread: Some(wirebridge_convert::messages_to_responses::ThreadTurn::Create),
        ..MessagesContext::default()
    };
    let body = br#"{"id":"resp_5eed","object":"response","status":"completed","model":"m",
        "output":[{"type":"message","id":"msg_x","role":"assistant","status":"completed",
        "content":[{"type":"output_text","text":"Hi","annotations":[]}]}],
        "usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}"#;
    let reply: Value = serde_json::from_slice(&translate_body(body, &ctx).unwrap().body).unwrap();
    assert_eq!(reply["id"], "msg_5eed");

    let events = [
        r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_5eed","model":"m"}}"#,
        r#"{"type":"response.completed","sequence_number":1,"response":{"id":"resp_5eed","status":"completed","output":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#,
    ];
    let mut translator = StreamTranslator::new(ctx);
    let mut out = wirebridge_convert::Frames::sse();
    for event in events {
        translator.push(event, &mut out);
    }
    let text = String::from_utf8(out.as_bytes().to_vec()).unwrap();
    assert!(text.contains(r#""id":"msg_5eed""#), "{text}");
    assert_eq!(translator.id(), "msg_5eed");
}
