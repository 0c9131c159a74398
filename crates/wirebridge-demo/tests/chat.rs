//! Chat Completions over a real connection: every stream passes the strict
//! grammar checker, every body has the spec's required fields.

mod common;

use common::*;
use serde_json::json;

const HELLO: &str = "You said: \"Hello there\". This is the wirebridge demo upstream.";

#[tokio::test]
async fn streams_the_echo_in_word_chunks() {
    let server = start().await;
    let answer = post(&server, CHAT, &chat_request("Hello there", true)).await;
    let t = check_chat_stream(&answer, false);
    assert_eq!(t.text, HELLO);
    assert_eq!(t.finish_reason.as_deref(), Some("stop"));
    assert!(t.id.starts_with("chatcmpl-"));
    assert!(t.usage.is_none());
    let frames = wirebridge_testkit::parse_sse(answer.bytes());
    // role chunk + one chunk per word + finish chunk + [DONE]
    assert_eq!(frames.len(), 1 + HELLO.split_whitespace().count() + 2);
    let first: serde_json::Value = serde_json::from_str(&frames[0].data).unwrap();
    assert_eq!(first["model"], "demo-model");
    assert!(first.get("usage").is_none());
}

#[tokio::test]
async fn usage_chunk_only_when_asked() {
    let server = start().await;
    let mut req = chat_request("Hello there", true);
    req["stream_options"] = json!({"include_usage": true});
    let answer = post(&server, CHAT, &req).await;
    let t = check_chat_stream(&answer, true);
    let usage = t.usage.expect("usage chunk");
    assert_eq!(usage["prompt_tokens"], 2);
    assert_eq!(usage["completion_tokens"], 10);
    assert_eq!(usage["total_tokens"], 12);
    assert_eq!(usage["completion_tokens_details"]["reasoning_tokens"], 0);
}

#[tokio::test]
async fn non_streaming_body() {
    let server = start().await;
    let answer = post(&server, CHAT, &chat_request("Hello there", false)).await;
    let t = check_chat_body(&answer);
    assert_eq!(t.text, HELLO);
    assert_eq!(t.finish_reason.as_deref(), Some("stop"));
    assert_eq!(t.usage.unwrap()["completion_tokens"], 10);
    assert!(answer.headers.contains_key("x-request-id"));
    assert_eq!(
        answer.headers.get("content-length").unwrap(),
        &answer.bytes().len().to_string()
    );
}

#[tokio::test]
async fn one_tool_call_streamed_in_fragments() {
    let server = start().await;
    let mut req = chat_request("Please call get_weather with city=Paris", true);
    req["tools"] = chat_tools();
    let answer = post(&server, CHAT, &req).await;
    let t = check_chat_stream(&answer, false);
    assert_eq!(t.text, "");
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(t.tool_calls.len(), 1);
    let call = &t.tool_calls[0];
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments, r#"{"city":"Paris"}"#);
    assert!(call.call_id.starts_with("call_"));
    let fragments = String::from_utf8_lossy(answer.bytes())
        .matches("\"arguments\":")
        .count();
    assert!(fragments > 2, "arguments in several fragments");

    let body = post(&server, CHAT, &{
        let mut r = req.clone();
        r["stream"] = json!(false);
        r
    })
    .await;
    let b = check_chat_body(&body);
    assert_eq!(b.tool_calls.len(), 1);
    assert_eq!(b.tool_calls[0].name, call.name);
    assert_eq!(b.tool_calls[0].arguments, call.arguments);
    assert!(body.json()["choices"][0]["message"]["content"].is_null());
}

#[tokio::test]
async fn two_parallel_tool_calls() {
    let server = start().await;
    let text = "call get_weather with city=Paris and get_time with tz=UTC";
    let mut req = chat_request(text, true);
    req["tools"] = chat_tools();
    let t = check_chat_stream(&post(&server, CHAT, &req).await, false);
    let names: Vec<&str> = t.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "get_time"]);
    assert_eq!(t.tool_calls[1].arguments, r#"{"tz":"UTC"}"#);
    assert_ne!(t.tool_calls[0].call_id, t.tool_calls[1].call_id);

    req["parallel_tool_calls"] = json!(false);
    let t = check_chat_stream(&post(&server, CHAT, &req).await, false);
    assert_eq!(t.tool_calls.len(), 1);

    req["tool_choice"] = json!("none");
    let t = check_chat_stream(&post(&server, CHAT, &req).await, false);
    assert!(t.tool_calls.is_empty());
    assert_eq!(t.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn tool_result_follow_up() {
    let server = start().await;
    let mut req = chat_request("call get_weather with city=Paris", true);
    req["tools"] = chat_tools();
    let first = check_chat_stream(&post(&server, CHAT, &req).await, false);
    let call = &first.tool_calls[0];
    req["messages"] = json!([
        {"role": "user", "content": "call get_weather with city=Paris"},
        {"role": "assistant", "content": null, "tool_calls": [{
            "id": call.call_id, "type": "function",
            "function": {"name": call.name, "arguments": call.arguments}
        }]},
        {"role": "tool", "tool_call_id": call.call_id, "content": "{\"temp\":21}"}
    ]);
    let t = check_chat_stream(&post(&server, CHAT, &req).await, false);
    assert!(t.tool_calls.is_empty());
    assert_eq!(t.text, "The tool returned: {\"temp\":21}");
    assert_eq!(t.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn reasoning_streams_first() {
    let server = start().await;
    let mut req = chat_request("Hello there", true);
    req["reasoning_effort"] = json!("medium");
    req["stream_options"] = json!({"include_usage": true});
    let answer = post(&server, CHAT, &req).await;
    let t = check_chat_stream(&answer, true);
    assert_eq!(
        t.reasoning,
        "The user wrote 2 words. I will repeat them back."
    );
    assert_eq!(t.text, HELLO);
    assert_eq!(
        t.usage.unwrap()["completion_tokens_details"]["reasoning_tokens"],
        10
    );
    let raw = String::from_utf8_lossy(answer.bytes()).to_string();
    assert!(raw.find("reasoning_content").unwrap() < raw.find("\"content\":\"You").unwrap());

    req["stream"] = json!(false);
    let b = check_chat_body(&post(&server, CHAT, &req).await);
    assert_eq!(b.reasoning, t.reasoning);

    req["reasoning_effort"] = json!("none");
    req["stream"] = json!(true);
    let t = check_chat_stream(&post(&server, CHAT, &req).await, true);
    assert_eq!(t.reasoning, "");
}

#[tokio::test]
async fn max_tokens_truncates_with_length() {
    let server = start().await;
    for key in ["max_tokens", "max_completion_tokens"] {
        let mut req = chat_request("Hello there", true);
        req[key] = json!(3);
        req["stream_options"] = json!({"include_usage": true});
        let t = check_chat_stream(&post(&server, CHAT, &req).await, true);
        assert_eq!(t.text, "You said: \"Hello ");
        assert_eq!(t.finish_reason.as_deref(), Some("length"));
        assert_eq!(t.usage.unwrap()["completion_tokens"], 3);

        req["stream"] = json!(false);
        let b = check_chat_body(&post(&server, CHAT, &req).await);
        assert_eq!(b.finish_reason.as_deref(), Some("length"));
        assert_eq!(b.text, t.text);
    }
    // A limit inside the arguments of a call still streams a valid grammar.
    let mut req = chat_request("call get_weather with city=Paris", true);
    req["tools"] = chat_tools();
    req["max_tokens"] = json!(2);
    let t = check_chat_stream(&post(&server, CHAT, &req).await, false);
    assert_eq!(t.finish_reason.as_deref(), Some("length"));
    assert_eq!(t.tool_calls[0].arguments, "{\"cit");
}

#[tokio::test]
async fn same_request_same_bytes() {
    let server = start().await;
    let req = chat_request("determinism please", true);
    let a = post(&server, CHAT, &req).await;
    let b = post(&server, CHAT, &req).await;
    assert_eq!(a.bytes(), b.bytes());
    let c = post(&server, CHAT, &chat_request("something else", true)).await;
    assert_ne!(
        check_chat_stream(&a, false).id,
        check_chat_stream(&c, false).id
    );
}

#[tokio::test]
async fn content_parts_and_any_prefix() {
    let server = start().await;
    let req = json!({
        "messages": [
            {"role": "developer", "content": "be nice"},
            {"role": "user", "content": [{"type": "text", "text": "parts"}, {"type": "image_url", "image_url": {"url": "x"}}]}
        ],
        "stream": true
    });
    let answer = post(&server, "/openai/v1/chat/completions", &req).await;
    let t = check_chat_stream(&answer, false);
    assert_eq!(
        t.text,
        "You said: \"parts\n[image]\". This is the wirebridge demo upstream."
    );
    let first = &wirebridge_testkit::parse_sse(answer.bytes())[0];
    assert!(first.data.contains("\"model\":\"wirebridge-demo\""));
}
