//! Responses streams whose output items interleave, as OpenAI, OpenRouter
//! and xAI send them, re-sent for backends that keep no state: the items
//! reach the client one at a time, in the order they opened, with the
//! positions the grammar requires, and an item the backend never finished
//! is finished from its terminal response. The streams are the hand-made
//! ones of `tests/handmade/` (see its README), each split at every byte.

mod common;

use common::{drive, sse};
use serde_json::Value;
use wirebridge_convert::messages_to_responses::{self, MessagesContext, ThinkingDisplay};
use wirebridge_convert::responses_to_responses::{
    translate_stream_body, NativeContext, StreamTranslator, MAX_HELD_BYTES,
};
use wirebridge_convert::{Frames, SseTranslator};
use wirebridge_testkit::{
    messages_grammar, parse_sse, responses_grammar, split_random, ResponsesTranscript,
};

/// A hand-made stream of `tests/handmade/`.
fn handmade(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/handmade")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every hand-made stream, with the types of the items it holds (in the
/// order the backend's final response lists them), its text and its
/// reasoning.
const STREAMS: [(&str, &[&str], &str, &str); 3] = [
    (
        "responses-stream-message-inside-reasoning.sse",
        &["reasoning", "message"],
        "The capital of France is Paris.",
        "**Recalling the capital**",
    ),
    (
        "responses-stream-mcp-list-tools-never-done.sse",
        &["mcp_list_tools", "message"],
        "The docs server offers one tool: search_docs.",
        "",
    ),
    (
        "responses-stream-items-in-turns.sse",
        &["reasoning", "message"],
        "There are three r's in strawberry.",
        "Counting the letters one by one.",
    ),
];

/// The upstream bytes fed in two pieces, cut at `at`.
fn resend_cut(upstream: &[u8], at: usize) -> (String, StreamTranslator) {
    let mut stream = SseTranslator::new(StreamTranslator::new(NativeContext::default()));
    let mut out = Frames::sse();
    stream.feed(&upstream[..at], &mut out);
    stream.feed(&upstream[at..], &mut out);
    stream.finish(&mut out);
    let text = String::from_utf8(out.take().bytes).unwrap();
    (text, stream.into_translator())
}

fn checked(out: &str, name: &str) -> ResponsesTranscript {
    responses_grammar::check(&parse_sse(out.as_bytes()))
        .unwrap_or_else(|v| panic!("{name}: grammar violation: {v}\n{out}"))
}

/// The output with the bridge's ids (which differ between runs) left out.
fn without_ids(out: &str, translator: &StreamTranslator) -> String {
    let stem = translator.response_id().trim_start_matches("resp_");
    let mut out = out.replace(stem, "<id>");
    // `created_at` is the backend's; `completed_at` is the clock's.
    while let Some(at) = out.find("\"completed_at\":1") {
        let end = out[at + 15..].find(|c: char| !c.is_ascii_digit()).unwrap() + at + 15;
        out.replace_range(at..end, "\"completed_at\":T");
    }
    out
}

#[test]
fn interleaved_items_are_sent_one_at_a_time_however_the_bytes_are_cut() {
    for (name, kinds, text, reasoning) in STREAMS {
        let upstream = handmade(name);
        let (whole, translator) = resend_cut(&upstream, upstream.len());
        let transcript = checked(&whole, name);
        assert_eq!(transcript.status, "completed", "{name}");
        assert_eq!(transcript.text, text, "{name}");
        assert_eq!(transcript.reasoning, reasoning, "{name}");
        let types: Vec<&str> = transcript
            .output
            .iter()
            .map(|i| i["type"].as_str().unwrap())
            .collect();
        assert_eq!(types, kinds, "{name}");
        assert_eq!(translator.finished().unwrap().output.len(), kinds.len());
        let expected = without_ids(&whole, &translator);
        for at in 1..upstream.len() {
            let (out, translator) = resend_cut(&upstream, at);
            assert_eq!(
                without_ids(&out, &translator),
                expected,
                "{name}: cut at byte {at}"
            );
        }
    }
}

#[test]
fn a_held_item_takes_the_next_place_and_the_next_numbers() {
    let upstream = handmade("responses-stream-message-inside-reasoning.sse");
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        7,
    );
    let events: Vec<Value> = parse_sse(&out)
        .iter()
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect();
    let order: Vec<(String, u64)> = events
        .iter()
        .filter(|e| {
            e["type"]
                .as_str()
                .unwrap()
                .starts_with("response.output_item")
        })
        .map(|e| {
            let kind = e["item"]["type"].as_str().unwrap().to_owned();
            (kind, e["output_index"].as_u64().unwrap())
        })
        .collect();
    // The reasoning item opened first: it is finished first, and the
    // message the backend finished before it follows.
    let expected = [
        ("reasoning", 0),
        ("reasoning", 0),
        ("message", 1),
        ("message", 1),
    ];
    let expected: Vec<(String, u64)> = expected.iter().map(|(k, n)| (k.to_string(), *n)).collect();
    assert_eq!(order, expected);
    let numbers: Vec<u64> = events
        .iter()
        .map(|e| e["sequence_number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (0..events.len() as u64).collect::<Vec<_>>());
}

#[test]
fn an_item_never_finished_is_finished_from_the_terminal_response() {
    let upstream = handmade("responses-stream-mcp-list-tools-never-done.sse");
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        1,
    );
    let transcript = checked(&String::from_utf8(out).unwrap(), "mcp");
    let tools = &transcript.output[0]["tools"];
    assert_eq!(tools[0]["name"], "search_docs", "{tools}");
    assert_eq!(transcript.output[1]["status"], "completed");
}

#[test]
fn a_client_that_asked_for_a_body_gets_the_items_in_order() {
    for (name, kinds, text, _) in STREAMS {
        let body = translate_stream_body(&handmade(name), &NativeContext::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let body: Value = serde_json::from_slice(&body.body).unwrap();
        assert_eq!(body["status"], "completed", "{name}");
        let output = body["output"].as_array().unwrap();
        let types: Vec<&str> = output.iter().map(|i| i["type"].as_str().unwrap()).collect();
        assert_eq!(types, kinds, "{name}");
        let message = output.iter().find(|i| i["type"] == "message").unwrap();
        assert_eq!(message["content"][0]["text"], text, "{name}");
    }
}

#[test]
fn a_messages_client_reads_interleaved_items_through_the_hub() {
    for (name, _, text, reasoning) in STREAMS {
        for seed in [0, 3, u64::MAX] {
            // The Responses side re-sends the backend's stream as bare
            // JSON, an event a frame, which the Messages side reads.
            let mut native = SseTranslator::new(StreamTranslator::new(NativeContext::default()));
            let mut responses = Frames::json();
            for piece in split_random(&handmade(name), seed) {
                native.feed(&piece, &mut responses);
            }
            native.finish(&mut responses);
            let ctx = MessagesContext {
                thinking: ThinkingDisplay::Summarized,
                ..MessagesContext::default()
            };
            let mut messages =
                SseTranslator::new(messages_to_responses::StreamTranslator::new(ctx));
            let mut out = Frames::sse();
            for frame in responses.events() {
                messages.feed_event(frame, &mut out);
            }
            messages.finish(&mut out);
            let out = out.take().bytes;
            let transcript = messages_grammar::check(&parse_sse(&out))
                .unwrap_or_else(|v| panic!("{name}: {v}\n{}", String::from_utf8_lossy(&out)));
            assert_eq!(transcript.text, text, "{name}");
            let thinking: String = transcript
                .thinking
                .iter()
                .map(|t| t.thinking.as_str())
                .collect();
            assert_eq!(thinking, reasoning, "{name}");
            assert_eq!(
                transcript.stop_reason.as_deref(),
                Some("end_turn"),
                "{name}"
            );
        }
    }
}

#[test]
fn holding_back_more_than_the_limit_fails_keeping_what_was_sent() {
    let delta = "x".repeat(64 << 10);
    let delta_event = format!(
        r#"{{"type":"response.output_text.delta","item_id":"m","output_index":1,"content_index":0,"delta":"{delta}"}}"#
    );
    let mut events = vec![
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#.to_owned(),
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs","summary":[]}}"#.to_owned(),
        r#"{"type":"response.reasoning_summary_part.added","item_id":"rs","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}"#.to_owned(),
        r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs","output_index":0,"summary_index":0,"delta":"Thinking"}"#.to_owned(),
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#.to_owned(),
        r#"{"type":"response.content_part.added","item_id":"m","output_index":1,"content_index":0,"part":{"type":"output_text","text":""}}"#.to_owned(),
    ];
    let count = MAX_HELD_BYTES / delta.len() + 2;
    events.extend(std::iter::repeat_n(delta_event, count));
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &sse(&refs),
        0,
    );
    let transcript = checked(&String::from_utf8(out).unwrap(), "limit");
    assert_eq!(transcript.status, "failed");
    // The reasoning the client was sent is kept; the message, never sent,
    // is not made up.
    assert_eq!(transcript.reasoning, "Thinking");
    assert_eq!(transcript.output.len(), 1);
    assert_eq!(transcript.output[0]["status"], "incomplete");
    let message = transcript.error.unwrap()["message"].to_string();
    assert!(message.contains("holds back"), "{message}");
}

#[test]
fn a_backend_failure_sends_the_held_items_its_response_lists() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs","summary":[]}}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","output_index":1,"content_index":0,"part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","output_index":1,"content_index":0,"delta":"Half"}"#,
        r#"{"type":"error","error":{"type":"server_error","code":"server_error","message":"overloaded","param":null}}"#,
        r#"{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"overloaded"},"output":[{"type":"reasoning","id":"rs","summary":[]}]}}"#,
    ]);
    for seed in [0, 5] {
        let (out, _) = drive(
            StreamTranslator::new(NativeContext::default()),
            &upstream,
            seed,
        );
        let transcript = checked(&String::from_utf8(out).unwrap(), "failure");
        assert_eq!(transcript.status, "failed");
        assert_eq!(transcript.error.as_ref().unwrap()["message"], "overloaded");
        // The reasoning item as listed, then the message with what
        // arrived of it, cut short.
        let statuses: Vec<(&str, &str)> = transcript
            .output
            .iter()
            .map(|i| {
                (
                    i["type"].as_str().unwrap(),
                    i["status"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(statuses, [("reasoning", ""), ("message", "incomplete")]);
        assert_eq!(transcript.text, "Half");
    }
}

#[test]
fn an_incomplete_response_finishes_the_open_item_and_sends_the_held_one() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"c1","name":"f","arguments":"","status":"in_progress"}}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc","output_index":0,"delta":"{\"a\":"}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Note.","annotations":[]}]}}"#,
        r#"{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        2,
    );
    let transcript = checked(&String::from_utf8(out).unwrap(), "incomplete");
    assert_eq!(transcript.status, "incomplete");
    assert_eq!(transcript.output[0]["status"], "incomplete");
    assert_eq!(transcript.output[0]["arguments"], "{\"a\":");
    assert_eq!(transcript.output[1]["status"], "completed");
    assert_eq!(transcript.text, "Note.");
}
