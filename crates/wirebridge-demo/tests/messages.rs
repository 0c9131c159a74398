//! Anthropic Messages over a real connection: every stream passes the
//! strict Messages grammar checker, every body has the fields of a
//! `message`, and bad requests get Anthropic's 400 naming the field.

mod common;

use common::*;
use serde_json::{json, Value};
use wirebridge_demo::{Api, DemoConfig, DemoServer};
use wirebridge_testkit::parse_sse;

const HELLO: &str = "You said: \"Hello there\". This is the wirebridge demo upstream.";

fn names(answer: &Answer) -> Vec<String> {
    parse_sse(answer.bytes())
        .iter()
        .map(|f| f.event.clone().expect("every event is named"))
        .collect()
}

fn events(answer: &Answer) -> Vec<Value> {
    parse_sse(answer.bytes())
        .iter()
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect()
}

/// The blocks without what is derived from the request's bytes (which
/// differ between a streamed and a plain request): tool_use ids,
/// redacted data.
fn without_ids(blocks: &[Value]) -> Vec<Value> {
    let mut blocks = blocks.to_vec();
    for block in &mut blocks {
        let block = block.as_object_mut().unwrap();
        block.remove("id");
        block.remove("data");
    }
    blocks
}

/// `request` with the model's answer and then `next` appended to its messages.
fn continued(mut request: Value, answer: &[Value], next: Value) -> Value {
    let messages = request["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": answer}));
    messages.push(json!({"role": "user", "content": next}));
    request
}

#[tokio::test]
async fn streams_a_text_block() {
    let server = start_all().await;
    let answer = post(&server, MESSAGES, &messages_request("Hello there", true)).await;
    let t = check_messages_stream(&answer);
    assert_eq!(t.text, HELLO);
    assert_eq!(t.stop_reason.as_deref(), Some("end_turn"));
    assert!(t.id.starts_with("msg_"));
    assert_eq!(t.model, "demo-model");
    let usage = t.usage.unwrap();
    assert_eq!(usage["input_tokens"], 2);
    assert_eq!(usage["output_tokens"], 10);
    assert_eq!(
        names(&answer)[..4],
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta"
        ]
    );
    let n = names(&answer);
    assert_eq!(n.iter().filter(|n| *n == "ping").count(), 1);
    assert_eq!(n.iter().filter(|n| *n == "content_block_delta").count(), 10);
    assert_eq!(n[n.len() - 2..], ["message_delta", "message_stop"]);
    let start = &events(&answer)[0]["message"];
    assert_eq!(start["usage"]["input_tokens"], 2);
    assert!(start["stop_reason"].is_null());
    assert!(answer.headers["request-id"]
        .to_str()
        .unwrap()
        .starts_with("req_"));
}

#[tokio::test]
async fn a_message_body_says_what_the_stream_says() {
    let server = start_all().await;
    let answer = post(&server, MESSAGES, &messages_request("Hello there", false)).await;
    let body = check_messages_body(&answer);
    assert_eq!(body.text, HELLO);
    assert_eq!(body.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(
        answer.json()["content"],
        json!([{"type": "text", "text": HELLO}])
    );
    let streamed = check_messages_stream(
        &post(&server, MESSAGES, &messages_request("Hello there", true)).await,
    );
    assert_eq!(body.blocks, streamed.blocks);
    assert_eq!(body.usage, streamed.usage);

    // A string `content` and a `system` prompt are read too.
    let req = json!({"max_tokens": 50, "system": "be brief",
                     "messages": [{"role": "user", "content": "Hello there"}]});
    let t = check_messages_body(&post(&server, MESSAGES, &req).await);
    assert_eq!(t.text, HELLO);
    assert_eq!(t.model, "wirebridge-demo");
    assert_eq!(t.usage.unwrap()["input_tokens"], 4);
}

#[tokio::test]
async fn tool_use_blocks() {
    let server = start_all().await;
    let mut req = messages_request(
        "call get_weather with city=Paris and get_time with tz=UTC",
        true,
    );
    req["tools"] = messages_tools();
    let answer = post(&server, MESSAGES, &req).await;
    let t = check_messages_stream(&answer);
    assert_eq!(t.stop_reason.as_deref(), Some("tool_use"));
    assert!(t.text.is_empty());
    let calls: Vec<(&str, &str)> = t
        .tool_calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("get_weather", r#"{"city":"Paris"}"#),
            ("get_time", r#"{"tz":"UTC"}"#)
        ]
    );
    assert!(t.tool_calls[0].call_id.starts_with("toolu_"));
    assert_ne!(t.tool_calls[0].call_id, t.tool_calls[1].call_id);
    // The input streams in fragments.
    let json_deltas = events(&answer)
        .iter()
        .filter(|e| e["delta"]["type"] == "input_json_delta")
        .count();
    assert!(json_deltas > 4, "{json_deltas}");

    req["stream"] = json!(false);
    let body = check_messages_body(&post(&server, MESSAGES, &req).await);
    assert_eq!(without_ids(&body.blocks), without_ids(&t.blocks));

    req["tool_choice"] = json!({"type": "auto", "disable_parallel_tool_use": true});
    let one = check_messages_body(&post(&server, MESSAGES, &req).await);
    assert_eq!(one.tool_calls.len(), 1);
    assert_eq!(one.tool_calls[0].name, "get_weather");

    req["tool_choice"] = json!({"type": "none"});
    let none = check_messages_body(&post(&server, MESSAGES, &req).await);
    assert!(none.tool_calls.is_empty());
    assert_eq!(none.stop_reason.as_deref(), Some("end_turn"));
}

#[tokio::test]
async fn tool_results_are_reported_and_checked() {
    let server = start_all().await;
    let mut req = messages_request("call get_weather with city=Paris", true);
    req["tools"] = messages_tools();
    let first = check_messages_stream(&post(&server, MESSAGES, &req).await);
    let id = first.tool_calls[0].call_id.clone();
    let result =
        |id: &str| json!([{"type": "tool_result", "tool_use_id": id, "content": "sunny, 21 C"}]);
    let follow_up = continued(req.clone(), &first.blocks, result(&id));
    let t = check_messages_stream(&post(&server, MESSAGES, &follow_up).await);
    assert!(t.tool_calls.is_empty());
    assert_eq!(t.text, "The tool returned: sunny, 21 C");
    assert_eq!(t.stop_reason.as_deref(), Some("end_turn"));

    // A result must answer a call of the message just before it.
    let stray = continued(req, &first.blocks, result("toolu_other"));
    let answer = post(&server, MESSAGES, &stray).await;
    assert_eq!(answer.status, 400);
    let e = anthropic_error_of(&answer);
    assert_eq!(e["type"], "invalid_request_error");
    assert!(e["message"]
        .as_str()
        .unwrap()
        .starts_with("messages.2.content.0.tool_use_id: unexpected `tool_use_id`"));
}

#[tokio::test]
async fn thinking_is_signed_and_the_signature_checked() {
    let server = start_all().await;
    let mut req = messages_request("Hello there", true);
    req["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    let answer = post(&server, MESSAGES, &req).await;
    let t = check_messages_stream(&answer);
    assert_eq!(t.thinking.len(), 1);
    assert_eq!(
        t.thinking[0].thinking,
        "The user wrote 2 words. I will repeat them back."
    );
    assert_eq!(t.thinking[0].signature.len(), 64);
    assert_eq!(t.blocks[0]["type"], "thinking");
    assert_eq!(t.text, HELLO);
    assert_eq!(t.usage.unwrap()["output_tokens"], 20);
    let kinds: Vec<Value> = events(&answer)
        .iter()
        .filter_map(|e| e["delta"].get("type").cloned())
        .collect();
    assert!(kinds.contains(&json!("thinking_delta")));
    assert!(kinds.contains(&json!("signature_delta")));

    req["stream"] = json!(false);
    let body = check_messages_body(&post(&server, MESSAGES, &req).await);
    assert_eq!(body.thinking, t.thinking);

    // The thinking block goes back with the next turn, as it came.
    let next = json!("and again");
    let replayed = continued(req.clone(), &t.blocks, next.clone());
    let again = check_messages_body(&post(&server, MESSAGES, &replayed).await);
    assert_eq!(
        again.text,
        "You said: \"and again\". This is the wirebridge demo upstream."
    );

    // Altered or unsigned thinking is refused, naming the block.
    let mut altered = t.blocks.clone();
    altered[0]["thinking"] = json!("I was told something else.");
    let mut unsigned = t.blocks.clone();
    unsigned[0].as_object_mut().unwrap().remove("signature");
    for (blocks, problem) in [
        (altered, "Invalid `signature` in `thinking` block"),
        (unsigned, "Field required"),
    ] {
        let answer = post(
            &server,
            MESSAGES,
            &continued(req.clone(), &blocks, next.clone()),
        )
        .await;
        assert_eq!(answer.status, 400);
        let e = anthropic_error_of(&answer);
        assert_eq!(e["type"], "invalid_request_error");
        assert_eq!(
            e["message"],
            format!("messages.1.content.0.signature: {problem}")
        );
    }
}

#[tokio::test]
async fn thinking_budget_is_checked() {
    let server = start_all().await;
    for (budget, max_tokens, named) in [
        (1000, 4096, "thinking.enabled.budget_tokens"),
        (4096, 4096, "max_tokens"),
    ] {
        let mut req = messages_request("Hello", false);
        req["max_tokens"] = json!(max_tokens);
        req["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        let answer = post(&server, MESSAGES, &req).await;
        assert_eq!(answer.status, 400);
        let message = anthropic_error_of(&answer)["message"].clone();
        assert!(
            message.as_str().unwrap().starts_with(&format!("{named}: ")),
            "{message}"
        );
    }
}

#[tokio::test]
async fn redacted_thinking_on_request() {
    let server = start_all().await;
    let mut req = messages_request("Hello demo:redacted", true);
    req["thinking"] = json!({"type": "enabled", "budget_tokens": 2048});
    let t = check_messages_stream(&post(&server, MESSAGES, &req).await);
    let types: Vec<&str> = t
        .blocks
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["thinking", "redacted_thinking", "text"]);
    let data = t.blocks[1]["data"].as_str().unwrap();
    assert_eq!(data.len(), 64);
    assert!(!data.contains("demo"), "opaque: {data}");

    req["stream"] = json!(false);
    let body = check_messages_body(&post(&server, MESSAGES, &req).await);
    assert_eq!(without_ids(&body.blocks), without_ids(&t.blocks));

    // Sent back as it came, it is accepted (it is not checked).
    let replayed = continued(req, &t.blocks, json!("next"));
    check_messages_body(&post(&server, MESSAGES, &replayed).await);
}

#[tokio::test]
async fn max_tokens_cuts_the_answer() {
    let server = start_all().await;
    let mut req = messages_request("Hello there", true);
    req["max_tokens"] = json!(3);
    let t = check_messages_stream(&post(&server, MESSAGES, &req).await);
    assert_eq!(t.stop_reason.as_deref(), Some("max_tokens"));
    assert_eq!(t.text, "You said: \"Hello ");
    assert_eq!(t.usage.unwrap()["output_tokens"], 3);

    // Cut inside a tool call's input: the fragments sent, no object.
    req["tools"] = messages_tools();
    req["messages"][0]["content"][0]["text"] = json!("call get_weather with city=Paris");
    let answer = post(&server, MESSAGES, &req).await;
    let t = check_messages_stream(&answer);
    assert_eq!(t.stop_reason.as_deref(), Some("max_tokens"));
    assert_eq!(t.blocks[0]["partial_json"], r#"{"city":"P"#);
    // Without streaming the cut input is no object: the block has `{}`.
    req["stream"] = json!(false);
    let answer = post(&server, MESSAGES, &req).await;
    let body = check_messages_body(&answer);
    assert_eq!(body.stop_reason.as_deref(), Some("max_tokens"));
    assert_eq!(answer.json()["content"][0]["input"], json!({}));
}

#[tokio::test]
async fn bad_requests_name_the_field() {
    let server = start_all().await;
    let user = json!([{"role": "user", "content": "hi"}]);
    for (req, path) in [
        (json!({"messages": user}), "max_tokens: Field required"),
        (json!({"max_tokens": 0, "messages": user}), "max_tokens:"),
        (json!({"max_tokens": 9}), "messages: Field required"),
        (json!({"max_tokens": 9, "messages": []}), "messages:"),
        (
            json!({"max_tokens": 9, "messages": [{"role": "tool", "content": "x"}]}),
            "messages.0.role:",
        ),
        (
            json!({"max_tokens": 9, "messages": [{"role": "user", "content": [{"text": "x"}]}]}),
            "messages.0.content.0.type:",
        ),
        (
            json!({"max_tokens": 9, "messages": user, "system": [{"type": "text"}]}),
            "system.0.text:",
        ),
        (
            json!({"max_tokens": 9, "messages": user, "system": 3}),
            "system:",
        ),
        (
            json!({"max_tokens": 9, "messages": user, "tool_choice": {"type": "some"}}),
            "tool_choice.type:",
        ),
    ] {
        let answer = post(&server, MESSAGES, &req).await;
        assert_eq!(answer.status, 400, "{req}");
        let e = anthropic_error_of(&answer);
        assert_eq!(e["type"], "invalid_request_error");
        assert!(e["message"].as_str().unwrap().starts_with(path), "{e}");
    }
    let answer = send(&server, "POST", MESSAGES, "{not json").await;
    assert_eq!(answer.status, 400);
    anthropic_error_of(&answer);
}

#[tokio::test]
async fn count_tokens_counts_words() {
    let server = start_all().await;
    let req = json!({"model": "m", "system": "be brief",
                     "messages": [{"role": "user", "content": "one two three"}]});
    let answer = post(&server, COUNT_TOKENS, &req).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json(), json!({"input_tokens": 5}));
    let answer = post(&server, COUNT_TOKENS, &json!({"max_tokens": 9})).await;
    assert_eq!(answer.status, 400);
    assert!(anthropic_error_of(&answer)["message"]
        .as_str()
        .unwrap()
        .starts_with("messages:"));
}

#[tokio::test]
async fn each_api_value_serves_its_endpoints() {
    let messages_only = DemoServer::start(DemoConfig::default().api(Api::Messages)).await;
    let answer = post(&messages_only, MESSAGES, &messages_request("Hi", false)).await;
    check_messages_body(&answer);
    let answer = post(&messages_only, CHAT, &chat_request("Hi", false)).await;
    assert_eq!(answer.status, 404);
    assert_eq!(error_of(&answer)["code"], "unknown_url");

    // `Both` stays the two OpenAI APIs; a Messages client gets its own 404.
    let both = start().await;
    let answer = post(&both, MESSAGES, &messages_request("Hi", false)).await;
    assert_eq!(answer.status, 404);
    assert_eq!(anthropic_error_of(&answer)["type"], "not_found_error");
    let answer = post(&both, COUNT_TOKENS, &messages_request("Hi", false)).await;
    assert_eq!(answer.status, 404);

    let all = start_all().await;
    for (path, req) in [
        (CHAT, chat_request("Hi", false)),
        (RESPONSES, responses_request("Hi", false)),
        (MESSAGES, messages_request("Hi", false)),
    ] {
        assert_eq!(post(&all, path, &req).await.status, 200, "{path}");
    }
    let answer = send(&all, "GET", MESSAGES, "").await;
    assert_eq!(answer.status, 405);
    anthropic_error_of(&answer);
}

#[tokio::test]
async fn same_request_same_bytes() {
    let server = start_all().await;
    let mut req = messages_request("determinism please", true);
    req["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    let a = post(&server, MESSAGES, &req).await;
    let b = post(&server, MESSAGES, &req).await;
    assert_eq!(a.bytes(), b.bytes());
    req["messages"][0]["content"][0]["text"] = json!("determinism, please");
    let c = post(&server, MESSAGES, &req).await;
    assert_ne!(
        check_messages_stream(&a).id,
        check_messages_stream(&c).id,
        "another request, another id"
    );
}
