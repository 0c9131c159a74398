//! The scripted failures: HTTP errors, in-band errors, dropped connections
//! and slow streams, in every API.

mod common;

use common::*;
use serde_json::json;
use std::time::{Duration, Instant};
use wirebridge_testkit::responses_grammar::{self, CheckOptions};
use wirebridge_testkit::{messages_grammar, parse_sse};

#[tokio::test]
async fn http_errors_in_both_apis() {
    let server = start().await;
    for (status, ty) in [
        (429, "requests"),
        (500, "server_error"),
        (503, "server_error"),
    ] {
        let text = format!("demo:error {status} please");
        for (path, req) in [
            (CHAT, chat_request(&text, true)),
            (RESPONSES, responses_request(&text, true)),
        ] {
            let answer = post(&server, path, &req).await;
            assert_eq!(answer.status.as_u16(), status, "{path}");
            assert_eq!(answer.content_type(), "application/json");
            let e = error_of(&answer);
            assert_eq!(e["type"], ty);
            if status == 429 {
                assert_eq!(e["code"], "rate_limit_exceeded");
            }
        }
    }
}

#[tokio::test]
async fn chat_fail_midstream() {
    let server = start().await;
    let answer = post(
        &server,
        CHAT,
        &chat_request("demo:fail-midstream now", true),
    )
    .await;
    let t = check_chat_stream(&answer, false);
    let e = t.error.expect("an error chunk");
    assert_eq!(e["type"], "server_error");
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("demo:fail-midstream"));
    assert_eq!(t.finish_reason, None);
    assert_eq!(t.text, "You said: \"demo:fail-midstream ");
    let frames = parse_sse(answer.bytes());
    assert_eq!(frames.last().unwrap().data, "[DONE]");

    let answer = post(&server, CHAT, &chat_request("demo:fail-midstream", false)).await;
    assert_eq!(answer.status, 500);
    error_of(&answer);
}

#[tokio::test]
async fn responses_fail_midstream() {
    let server = start().await;
    let mut req = responses_request("demo:fail-midstream", true);
    req["reasoning"] = json!({"effort": "medium"});
    let answer = post(&server, RESPONSES, &req).await;
    // Like a real upstream, the demo stops mid-item: the bridge, not the
    // upstream, closes what was open.
    let upstream = CheckOptions {
        failure_closes_items: false,
        ..CheckOptions::strict()
    };
    let t = check_responses_stream_with(&answer, &upstream);
    assert_eq!(t.status, "failed");
    let e = t.error.expect("nested error");
    assert_eq!(e["code"], "server_error");
    assert!(e.get("param").is_some());
    let frames = parse_sse(answer.bytes());
    let n = frames.len();
    assert_eq!(frames[n - 2].event.as_deref(), Some("error"));
    assert_eq!(frames[n - 1].event.as_deref(), Some("response.failed"));
    let failed: serde_json::Value = serde_json::from_str(&frames[n - 1].data).unwrap();
    assert_eq!(failed["response"]["error"]["code"], "server_error");
    assert!(failed["response"]["usage"].is_null(), "no usage is known");

    req["stream"] = json!(false);
    let answer = post(&server, RESPONSES, &req).await;
    assert_eq!(answer.status, 500);
    error_of(&answer);
}

#[tokio::test]
async fn cut_drops_the_connection() {
    let server = start().await;
    for (path, req) in [
        (CHAT, chat_request("demo:cut here", true)),
        (RESPONSES, responses_request("demo:cut here", true)),
    ] {
        let answer = post(&server, path, &req).await;
        assert_eq!(answer.status, 200);
        assert!(
            answer.body.is_err(),
            "{path}: the body must end with an error"
        );
        let frames = parse_sse(&answer.received);
        assert!(!frames.is_empty(), "{path}: a few chunks arrive first");
        let data: String = frames.iter().map(|f| f.data.as_str()).collect();
        assert!(data.contains("You "), "{path}: {data}");
        assert!(!data.contains("[DONE]"));
        assert!(!data.contains("response.completed"));
        if path == RESPONSES {
            // What arrived is a valid prefix: the checker only misses the end.
            let v = responses_grammar::check(&frames).unwrap_err();
            assert_eq!(v.frame, frames.len(), "{v}");
        }
    }
    let answer = post(&server, CHAT, &chat_request("demo:cut", false)).await;
    assert!(answer.body.is_err());
    assert!(answer.received.starts_with(b"{\"id\":\"chatcmpl-"));
}

#[tokio::test]
async fn slow_paces_the_chunks() {
    let server = start().await;
    let start_at = Instant::now();
    let answer = post(&server, CHAT, &chat_request("demo:slow 20 ok", true)).await;
    let t = check_chat_stream(&answer, false);
    assert_eq!(
        t.text,
        "You said: \"demo:slow 20 ok\". This is the wirebridge demo upstream."
    );
    let frames = parse_sse(answer.bytes()).len() as u32;
    assert!(start_at.elapsed() >= Duration::from_millis(20) * (frames - 1));

    let start_at = Instant::now();
    let answer = post(
        &server,
        RESPONSES,
        &responses_request("demo:slow 30", false),
    )
    .await;
    check_responses_body(&answer);
    assert!(start_at.elapsed() >= Duration::from_millis(30));
}

#[tokio::test]
async fn triggers_apply_after_a_tool_result() {
    let server = start().await;
    let req = json!({
        "stream": true,
        "tools": chat_tools(),
        "messages": [
            {"role": "user", "content": "call get_time demo:fail-midstream"},
            {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_time", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "noon"}
        ]
    });
    let t = check_chat_stream(&post(&server, CHAT, &req).await, false);
    assert!(t.error.is_some());
    assert_eq!(
        t.text, "The tool returned: ",
        "three deltas, then the error"
    );
}

#[tokio::test]
async fn cut_over_http2_resets_the_stream() {
    let server = start().await;
    let h2 = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .http2_only(true)
        .build_http();
    let body = responses_request("demo:cut", true).to_string();
    let answer = send_with(&h2, &server.url(), "POST", RESPONSES, &body).await;
    assert!(answer.body.is_err());
    let frames = parse_sse(&answer.received);
    assert!(frames.len() > 3, "the first events arrive before the reset");
    // The same connection still serves the next request.
    let body = chat_request("after the cut", true).to_string();
    let answer = send_with(&h2, &server.url(), "POST", CHAT, &body).await;
    check_chat_stream(&answer, false);
}

#[tokio::test]
async fn messages_http_errors_are_anthropic_shaped() {
    let server = start_all().await;
    for (status, kind) in [
        (401, "authentication_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
    ] {
        let req = messages_request(&format!("demo:error {status} please"), true);
        let answer = post(&server, MESSAGES, &req).await;
        assert_eq!(answer.status.as_u16(), status);
        let e = anthropic_error_of(&answer);
        assert_eq!(e["type"], kind, "{status}");
        assert!(e["message"].as_str().unwrap().contains("demo:error"));
    }
}

#[tokio::test]
async fn messages_fail_midstream() {
    let server = start_all().await;
    let mut req = messages_request("demo:fail-midstream now", true);
    let answer = post(&server, MESSAGES, &req).await;
    let t = check_messages_stream(&answer);
    let e = t.error.expect("an error event");
    assert_eq!(e["type"], "api_error");
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("demo:fail-midstream"));
    // What was said stays said; the stream ends without message_stop.
    assert_eq!(t.text, "You said: \"demo:fail-midstream ");
    assert_eq!(t.stop_reason, None);
    let frames = parse_sse(answer.bytes());
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("error"));
    assert!(!frames
        .iter()
        .any(|f| f.event.as_deref() == Some("message_stop")));

    req["stream"] = json!(false);
    let answer = post(&server, MESSAGES, &req).await;
    assert_eq!(answer.status, 500);
    assert_eq!(anthropic_error_of(&answer)["type"], "api_error");
}

#[tokio::test]
async fn messages_cut_and_slow() {
    let server = start_all().await;
    let answer = post(&server, MESSAGES, &messages_request("demo:cut here", true)).await;
    assert_eq!(answer.status, 200);
    assert!(answer.body.is_err(), "the body must end with an error");
    let frames = parse_sse(&answer.received);
    // What arrived is a valid prefix: the checker only misses the end.
    let v = messages_grammar::check(&frames).unwrap_err();
    assert_eq!(v.frame, frames.len(), "{v}");
    let data: String = frames.iter().map(|f| f.data.as_str()).collect();
    assert!(data.contains("You "), "{data}");

    let answer = post(&server, MESSAGES, &messages_request("demo:cut", false)).await;
    assert!(answer.body.is_err());
    assert!(answer.received.starts_with(b"{\"id\":\"msg_"));

    let start_at = Instant::now();
    let answer = post(
        &server,
        MESSAGES,
        &messages_request("demo:slow 20 ok", true),
    )
    .await;
    check_messages_stream(&answer);
    let frames = parse_sse(answer.bytes()).len() as u32;
    assert!(start_at.elapsed() >= Duration::from_millis(20) * (frames - 1));
}

#[tokio::test]
async fn messages_triggers_apply_after_a_tool_result() {
    let server = start_all().await;
    let req = json!({
        "max_tokens": 100,
        "stream": true,
        "tools": messages_tools(),
        "messages": [
            {"role": "user", "content": "call get_time demo:fail-midstream"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "noon"}]}
        ]
    });
    let t = check_messages_stream(&post(&server, MESSAGES, &req).await);
    assert!(t.error.is_some());
    assert_eq!(
        t.text, "The tool returned: ",
        "three deltas, then the error"
    );
}
