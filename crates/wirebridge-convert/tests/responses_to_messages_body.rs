//! A Messages backend's reply that came whole: read as it is, it gives the
//! `Response` its stream would have given, and reports what the stream
//! would have reported.

mod common;

use common::{redact, sse};
use serde_json::{json, Value};
use wirebridge_convert::responses_to_chat::Options;
use wirebridge_convert::responses_to_messages::{
    body_events, translate_body, translate_request, translate_stream_body, ExchangeContext,
};

/// A context for a request that declared `apply_patch` a custom tool and
/// `shell` a function.
fn context() -> ExchangeContext {
    let request = json!({"model": "m", "input": "Go", "tools": [
        {"type": "custom", "name": "apply_patch"},
        {"type": "function", "name": "shell", "parameters": {"type": "object"}},
    ]});
    let t = translate_request(request.to_string().as_bytes(), &Options::default()).unwrap();
    ExchangeContext {
        backend: t.context,
        native: Default::default(),
    }
}

/// The reply as a client reads it, with what differs between two
/// translations (the response's id, its times) made the same.
fn readable(body: &[u8]) -> Value {
    let mut response: Value = serde_json::from_slice(body).unwrap();
    let id = response["id"].as_str().unwrap_or_default().to_owned();
    redact(&mut response, &id);
    response["created_at"] = json!(0);
    response
}

fn message(content: Value, stop_reason: &str) -> Vec<u8> {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 11, "output_tokens": 5, "cache_read_input_tokens": 4},
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_body_read_as_it_is_gives_what_its_stream_gives() {
    let bodies = [
        message(
            json!([{"type": "text", "text": "Hello, \"world\"\n"}]),
            "end_turn",
        ),
        message(
            json!([
                {"type": "thinking", "thinking": "Let me see.", "signature": "c2ln"},
                {"type": "redacted_thinking", "data": "EmwKAhgB"},
                {"type": "text", "text": "One. "},
                {"type": "text", "text": "Two."},
                {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"cmd": ["ls", "-l"]}},
                {"type": "tool_use", "id": "toolu_2", "name": "apply_patch", "input": {"input": "*** Begin Patch"}},
                {"type": "tool_use", "id": "toolu_3", "name": "shell", "input": {}},
            ]),
            "tool_use",
        ),
        message(json!([{"type": "text", "text": "Cut"}]), "max_tokens"),
        message(json!([{"type": "text", "text": "No."}]), "refusal"),
        message(json!([]), "end_turn"),
        // What a backend may leave null.
        json!({
            "id": null, "type": "message", "role": "assistant", "model": null,
            "content": [{"type": "text", "text": "Hi"}], "stop_reason": null, "usage": null,
        })
        .to_string()
        .into_bytes(),
        // A block with no Responses form, and citations: reported.
        message(
            json!([
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
                {"type": "text", "text": "Found.", "citations": [{"type": "web_search_result_location", "url": "https://example.com"}]},
            ]),
            "pause_turn",
        ),
        // A call the client cannot answer fails the reply.
        message(
            json!([
                {"type": "text", "text": "Calling."},
                {"type": "tool_use", "id": "toolu_4", "name": "", "input": {}},
            ]),
            "tool_use",
        ),
    ];
    let context = context();
    for body in &bodies {
        let events = body_events(body).unwrap();
        let events: Vec<&str> = events.iter().map(String::as_str).collect();
        let streamed = translate_stream_body(&sse(&events), &context);
        let whole = translate_body(body, &context);
        let text = String::from_utf8_lossy(body);
        let (whole, streamed) = match (whole, streamed) {
            (Ok(whole), Ok(streamed)) => (whole, streamed),
            // A reply that failed is the backend's failure, told alike.
            (Err(whole), Err(streamed)) => {
                assert_eq!(whole.to_string(), streamed.to_string(), "{text}");
                continue;
            }
            (whole, streamed) => panic!("{text}: {whole:?} against {streamed:?}"),
        };
        assert_eq!(readable(&whole.body), readable(&streamed.body), "{text}");
        assert_eq!(whole.losses.paths(), streamed.losses.paths(), "{text}");
        assert_eq!(whole.summary.outcome, streamed.summary.outcome, "{text}");
    }
}

#[test]
fn what_a_body_cannot_carry_is_reported() {
    let body = message(
        json!([
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
            {"type": "text", "text": "Found.", "citations": [{"type": "web_search_result_location", "url": "https://example.com"}]},
            {"type": "text", "text": " And more.", "citations": null},
        ]),
        "pause_turn",
    );
    let whole = translate_body(&body, &context()).unwrap();
    assert_eq!(
        whole.losses.paths(),
        "content[0], content[1].citations, stop_reason"
    );
    let response = readable(&whole.body);
    let parts = &response["output"][0]["content"];
    assert_eq!(parts[0]["text"], "Found.");
    assert_eq!(parts[1]["text"], " And more.");
}

#[test]
fn a_body_that_is_no_message_is_refused_naming_why() {
    let context = context();
    for (body, why) in [
        (&b"[1]"[..], "invalid type"),
        (
            br#"{"type":"error","error":{}}"#,
            "its `type` is not `message`",
        ),
        (br#"{"type":"message","content":[1]}"#, "content block"),
    ] {
        let error = translate_body(body, &context).unwrap_err().to_string();
        assert!(error.contains(why), "{error}");
    }
}
