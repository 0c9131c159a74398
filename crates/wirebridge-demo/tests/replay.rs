//! Replay mode: recorded files served for every generation request.

mod common;

use common::*;
use std::time::Duration;
use wirebridge_demo::{Api, DemoConfig, DemoServer, ReplayError};
use wirebridge_testkit::fixtures::{self, StreamKind};
use wirebridge_testkit::{chat_grammar, parse_sse, responses_grammar};

#[tokio::test]
async fn sse_files_are_sent_byte_for_byte() {
    let rel = "openai-python/chat-stream-text.sse";
    let path = fixtures::fixture_path(rel);
    let server = DemoServer::start(
        DemoConfig::default()
            .replay(&path)
            .chunk_delay(Duration::from_millis(1)),
    )
    .await;
    for stream in [true, false] {
        let answer = post(&server, CHAT, &chat_request("anything", stream)).await;
        assert_eq!(answer.status, 200);
        assert_eq!(answer.content_type(), "text/event-stream");
        assert_eq!(&answer.bytes()[..], &fixtures::load_bytes(rel)[..]);
    }
    let recorded = chat_grammar::transcript_of_recorded(&parse_sse(
        post(&server, CHAT, &chat_request("x", true)).await.bytes(),
    ));
    assert!(!recorded.text.is_empty());
}

#[tokio::test]
async fn chat_chunks_files_are_framed() {
    let rel = "vercel-ai/chat/openai-text.chunks.txt";
    let server = DemoServer::start(DemoConfig::default().replay(fixtures::fixture_path(rel))).await;
    let answer = post(&server, CHAT, &chat_request("anything", true)).await;
    assert_eq!(answer.content_type(), "text/event-stream");
    let text = String::from_utf8(fixtures::load_bytes(rel)).unwrap();
    let expected = fixtures::reframe_chunks(StreamKind::Chat, &text);
    assert_eq!(&answer.bytes()[..], &expected[..]);
    assert!(answer.bytes().ends_with(b"data: [DONE]\n\n"));
}

#[tokio::test]
async fn responses_chunks_files_are_framed_with_event_names() {
    let rel = "vercel-ai/responses/azure__azure-tool-call.1.chunks.txt";
    let config = DemoConfig::default()
        .api(Api::Responses)
        .replay(fixtures::fixture_path(rel));
    let server = DemoServer::start(config).await;
    let answer = post(&server, RESPONSES, &responses_request("anything", true)).await;
    let text = String::from_utf8(fixtures::load_bytes(rel)).unwrap();
    let expected = fixtures::reframe_chunks(StreamKind::Responses, &text);
    assert_eq!(&answer.bytes()[..], &expected[..]);
    let frames = parse_sse(answer.bytes());
    assert!(frames.iter().all(|f| f.event.is_some()));
    let t = responses_grammar::transcript_of_recorded(&frames);
    assert_eq!(t.function_calls.len(), 1);
    // The API switch still applies in replay mode.
    let answer = post(&server, CHAT, &chat_request("anything", true)).await;
    assert_eq!(answer.status, 404);
}

#[tokio::test]
async fn json_files_are_sent_as_json() {
    let rel = "openai-python/chat-json-text.json";
    let server = DemoServer::start(DemoConfig::default().replay(fixtures::fixture_path(rel))).await;
    let answer = post(&server, CHAT, &chat_request("anything", false)).await;
    assert_eq!(answer.content_type(), "application/json");
    assert_eq!(&answer.bytes()[..], &fixtures::load_bytes(rel)[..]);
}

#[tokio::test]
async fn unreadable_files_are_reported() {
    let missing = std::env::temp_dir().join("wirebridge-demo-no-such-file.sse");
    let config = DemoConfig::default().replay(&missing);
    assert!(matches!(config.validate(), Err(ReplayError::Read { .. })));
    let server = DemoServer::start(config).await;
    let answer = post(&server, CHAT, &chat_request("anything", true)).await;
    assert_eq!(answer.status, 500);
    let e = error_of(&answer);
    assert!(e["message"].as_str().unwrap().contains("no-such-file"));

    let bad =
        std::env::temp_dir().join(format!("wirebridge-demo-{}.chunks.txt", std::process::id()));
    std::fs::write(&bad, "{\"type\":\"response.created\"}\nnot json\n").unwrap();
    let err = DemoConfig::default().replay(&bad).validate().unwrap_err();
    assert!(
        matches!(err, ReplayError::BadChunkLine { line: 2, .. }),
        "{err}"
    );
    std::fs::remove_file(&bad).unwrap();
    assert!(DemoConfig::default().validate().is_ok());
}

#[tokio::test]
async fn a_messages_recording_is_replayed_and_tokens_still_counted() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/text.messages-stream.sse");
    let server = DemoServer::start(DemoConfig::default().api(Api::Messages).replay(&path)).await;
    let answer = post(&server, MESSAGES, &messages_request("anything", true)).await;
    assert_eq!(&answer.bytes()[..], &std::fs::read(&path).unwrap()[..]);
    let t = check_messages_stream(&answer);
    assert_eq!(
        t.text,
        "You said: \"Hello\". This is the wirebridge demo upstream."
    );
    // Counting is no generation: it is answered, not replayed.
    let count = post(&server, COUNT_TOKENS, &messages_request("one two", false)).await;
    assert_eq!(count.json(), serde_json::json!({"input_tokens": 2}));
    let answer = send(&server, "GET", COUNT_TOKENS, "").await;
    assert_eq!(answer.status, 405);
    anthropic_error_of(&answer);
}
