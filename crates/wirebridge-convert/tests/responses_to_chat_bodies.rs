//! Every recorded non-streaming Chat body, translated to a `Response`.

use serde_json::Value;
use wirebridge_convert::responses_to_chat::{translate_body, ResponsesContext};
use wirebridge_testkit::{chat_grammar, fixtures, responses_grammar};

const RESPONSE_REQUIRED: [&str; 15] = [
    "id",
    "object",
    "created_at",
    "status",
    "model",
    "output",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "metadata",
    "instructions",
    "error",
    "incomplete_details",
];

#[test]
fn every_recorded_chat_body_translates() {
    let bodies = fixtures::chat_bodies();
    assert!(
        bodies.len() >= 6,
        "expected the recorded chat bodies, found {}",
        bodies.len()
    );
    for (name, bytes) in bodies {
        let chat: Value = serde_json::from_slice(&bytes).unwrap();
        let expected = chat_grammar::chat_body_transcript(&chat);
        let translated = translate_body(&bytes, &ResponsesContext::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let response: Value = serde_json::from_slice(&translated.body).unwrap();
        for field in RESPONSE_REQUIRED {
            assert!(
                response.get(field).is_some(),
                "{name}: Response lacks required '{field}'"
            );
        }
        assert_eq!(response["object"], "response");
        assert_eq!(response["id"], translated.response_id.as_str());
        let actual = responses_grammar::responses_body_transcript(&response);
        assert_eq!(actual.text, expected.text, "{name}: text");
        assert_eq!(actual.refusal, expected.refusal, "{name}: refusal");
        let calls = |c: &[wirebridge_testkit::ToolCallRecord]| {
            c.iter()
                .map(|c| (c.name.clone(), c.call_id.clone(), c.arguments.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            calls(&actual.function_calls),
            calls(&expected.tool_calls),
            "{name}: tool calls"
        );
        assert_eq!(
            response["usage"]["input_tokens"], chat["usage"]["prompt_tokens"],
            "{name}"
        );
        assert_eq!(
            response["usage"]["output_tokens"], chat["usage"]["completion_tokens"],
            "{name}"
        );
        let finish = chat["choices"][0]["finish_reason"]
            .as_str()
            .unwrap_or_default();
        let status = if finish == "length" {
            "incomplete"
        } else {
            "completed"
        };
        assert_eq!(response["status"], status, "{name}");
        let extra_choices = chat["choices"].as_array().unwrap().len() > 1;
        assert_eq!(
            !translated.losses.is_empty(),
            extra_choices,
            "{name}: losses {:?}",
            translated.losses
        );
    }
}

#[test]
fn length_becomes_incomplete_with_reason() {
    let bytes = fixtures::load_bytes("openai-python/chat-json-finish-length.json");
    let translated = translate_body(&bytes, &ResponsesContext::default()).unwrap();
    let response: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_eq!(response["status"], "incomplete");
    assert_eq!(
        response["incomplete_details"]["reason"],
        "max_output_tokens"
    );
    assert_eq!(response["output"][0]["status"], "incomplete");
}

#[test]
fn garbage_and_truncated_bodies_are_errors() {
    let bytes = fixtures::load_bytes("openai-python/chat-json-text.json");
    let closing_brace = bytes.iter().rposition(|b| *b == b'}').unwrap();
    for cut in [0, 1, bytes.len() / 2, closing_brace] {
        let err = translate_body(&bytes[..cut], &ResponsesContext::default()).unwrap_err();
        assert_eq!(err.status(), 502, "cut at {cut}: {err}");
    }
    let err =
        translate_body(br#"{"id":"x","choices":[]}"#, &ResponsesContext::default()).unwrap_err();
    assert!(err.to_string().contains("no choices"), "{err}");
}
