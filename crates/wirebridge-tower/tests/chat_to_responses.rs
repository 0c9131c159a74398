//! `ChatToResponsesLayer` over replaying upstreams.

mod common;

use common::{body, declaring, read, upstream, Seen};
use http::{Request, StatusCode};
use serde_json::Value;
use tower::{Layer, ServiceExt};
use wirebridge_testkit::{chat_grammar, fixtures, parse_sse, responses_grammar};
use wirebridge_tower::{ChatToResponsesLayer, REASONING_INCLUDED_HEADER};

const STREAM_REQUEST: &str = r#"{"model":"gpt-x","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}"#;

fn post(json: &str) -> Request<common::ScriptedBody> {
    Request::post("/v1/chat/completions")
        .header("authorization", "Bearer sk-test")
        .body(body(json))
        .unwrap()
}

#[tokio::test]
async fn every_recorded_responses_stream_reaches_the_client_as_a_valid_chat_stream() {
    for (seed, stream) in fixtures::responses_streams().into_iter().enumerate() {
        let seen = Seen::default();
        let service = ChatToResponsesLayer::new().layer(upstream(
            StatusCode::OK,
            "text/event-stream",
            stream.sse.clone(),
            seed as u64,
            seen.clone(),
        ));
        let expected = responses_grammar::transcript_of_recorded(&stream.frames());
        let names = expected.function_calls.iter().map(|c| c.name.as_str());
        let request = declaring(STREAM_REQUEST, names);
        let (status, headers, bytes) = read(service.oneshot(post(&request)).await.unwrap()).await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-type"], "text/event-stream");
        // Chat clients read no such header: it is for Responses replies.
        assert!(headers.get(REASONING_INCLUDED_HEADER).is_none());
        let t = chat_grammar::check(&parse_sse(&bytes), true)
            .unwrap_or_else(|v| panic!("{}: {v}", stream.name));
        if expected.status == "failed" {
            assert!(t.error.is_some(), "{}", stream.name);
        } else if !stream.name.contains("openai-phase") {
            assert_eq!(t.text, expected.text, "{}", stream.name);
            assert_eq!(
                t.tool_calls.len(),
                expected.function_calls.len(),
                "{}",
                stream.name
            );
        }
        let (uri, _, upstream_body) = seen.last();
        assert_eq!(uri, "/v1/responses");
        let request: Value = serde_json::from_slice(&upstream_body).unwrap();
        assert_eq!(request["stream"], true);
        assert_eq!(request["input"][0]["role"], "user");
    }
}

#[tokio::test]
async fn json_replies_and_failed_responses() {
    let body = fixtures::load_bytes("vercel-ai/responses/azure__azure-tool-call.1.json");
    let service = ChatToResponsesLayer::new().layer(upstream(
        StatusCode::OK,
        "application/json",
        body,
        2,
        Seen::default(),
    ));
    let request = declaring(
        r#"{"model":"m","messages":[{"role":"user","content":"weather?"}]}"#,
        ["weather"],
    );
    let (status, _, bytes) = read(service.oneshot(post(&request)).await.unwrap()).await;
    assert_eq!(status, 200);
    let completion: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(completion["choices"][0]["finish_reason"], "tool_calls");

    let failed = br#"{"id":"resp_1","object":"response","status":"failed","output":[],"error":{"code":"server_error","message":"boom"}}"#;
    let service = ChatToResponsesLayer::new().layer(upstream(
        StatusCode::OK,
        "application/json",
        failed.to_vec(),
        2,
        Seen::default(),
    ));
    let (status, _, bytes) = read(service.oneshot(post(&request)).await.unwrap()).await;
    assert_eq!(status, 502);
    let error: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(error["error"]["message"], "boom");
}

#[tokio::test]
async fn n_greater_than_one_is_refused_by_default() {
    let seen = Seen::default();
    let service = ChatToResponsesLayer::new().layer(upstream(
        StatusCode::OK,
        "application/json",
        b"{}".to_vec(),
        1,
        seen.clone(),
    ));
    let request = r#"{"model":"m","n":3,"messages":[{"role":"user","content":"x"}]}"#;
    let (status, _, bytes) = read(service.oneshot(post(request)).await.unwrap()).await;
    assert_eq!(status, 400);
    let error: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(error["error"]["param"], "n");
    assert!(seen.0.lock().unwrap().is_empty());
}
