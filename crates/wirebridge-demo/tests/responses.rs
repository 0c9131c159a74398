//! Responses over a real connection: every stream passes the strict grammar
//! checker, every body has the spec's required fields.

mod common;

use common::*;
use serde_json::{json, Value};
use wirebridge_testkit::parse_sse;

const HELLO: &str = "You said: \"Hello there\". This is the wirebridge demo upstream.";

fn events(answer: &Answer) -> Vec<Value> {
    parse_sse(answer.bytes())
        .iter()
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect()
}

fn types(answer: &Answer) -> Vec<String> {
    events(answer)
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn streams_a_message_item() {
    let server = start().await;
    let answer = post(&server, RESPONSES, &responses_request("Hello there", true)).await;
    let t = check_responses_stream(&answer);
    assert_eq!(t.text, HELLO);
    assert_eq!(t.status, "completed");
    assert!(t.response_id.starts_with("resp_"));
    let usage = t.usage.expect("usage on completed");
    assert_eq!(usage["input_tokens"], 2);
    assert_eq!(usage["output_tokens"], 10);
    let ty = types(&answer);
    assert_eq!(
        ty[..5],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
        ]
    );
    assert_eq!(
        ty.iter()
            .filter(|t| *t == "response.output_text.delta")
            .count(),
        10
    );
    let ev = events(&answer);
    let created = &ev[0]["response"];
    assert!(created["usage"].is_null(), "usage is null until known");
    assert!(created.get("user").is_none());
    assert_eq!(created["model"], "demo-model");
    assert_eq!(created["tools"], json!([]));
}

#[tokio::test]
async fn string_input_and_echoed_fields() {
    let server = start().await;
    let req = json!({
        "model": "m", "stream": true, "input": "Hello there",
        "instructions": "be brief", "metadata": {"k": "v"}, "temperature": 0.5,
        "user": "u-1", "store": false, "tools": responses_tools(), "tool_choice": "auto"
    });
    let answer = post(&server, RESPONSES, &req).await;
    let t = check_responses_stream(&answer);
    assert_eq!(t.text, HELLO);
    let done = events(&answer).pop().unwrap();
    let resp = &done["response"];
    assert_eq!(resp["instructions"], "be brief");
    assert_eq!(resp["metadata"], json!({"k": "v"}));
    assert_eq!(resp["temperature"], 0.5);
    assert_eq!(resp["user"], "u-1");
    assert_eq!(resp["store"], false);
    // Function tools are echoed with the keys the server fills in.
    assert_eq!(resp["tools"][0]["name"], "get_weather");
    assert_eq!(resp["tools"][0]["parameters"], json!({"type": "object"}));
    assert_eq!(resp["tools"][0]["strict"], true);
    assert!(resp["tools"][1]["description"].is_null());
    assert_eq!(resp["usage"]["input_tokens"], 4);
}

#[tokio::test]
async fn non_streaming_body() {
    let server = start().await;
    let answer = post(&server, RESPONSES, &responses_request("Hello there", false)).await;
    let t = check_responses_body(&answer);
    assert_eq!(t.text, HELLO);
    assert_eq!(t.status, "completed");
    let body = answer.json();
    assert_eq!(body["output"][0]["type"], "message");
    assert_eq!(body["output"][0]["status"], "completed");
    assert!(body["completed_at"].is_u64());
}

#[tokio::test]
async fn one_function_call() {
    let server = start().await;
    let mut req = responses_request("call get_weather with city=Paris", true);
    req["tools"] = responses_tools();
    let answer = post(&server, RESPONSES, &req).await;
    let t = check_responses_stream(&answer);
    assert_eq!(t.function_calls.len(), 1);
    let call = &t.function_calls[0];
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments, r#"{"city":"Paris"}"#);
    assert!(call.call_id.starts_with("call_"));
    let ty = types(&answer);
    assert!(
        ty.iter()
            .filter(|t| *t == "response.function_call_arguments.delta")
            .count()
            > 2
    );
    assert!(!ty.iter().any(|t| t.contains("output_text")));
    let item = &t.output[0];
    assert!(item["id"].as_str().unwrap().starts_with("fc_"));
    assert_ne!(item["id"], item["call_id"]);

    req["stream"] = json!(false);
    let b = check_responses_body(&post(&server, RESPONSES, &req).await);
    assert_eq!(b.function_calls[0].arguments, call.arguments);
}

#[tokio::test]
async fn two_parallel_function_calls() {
    let server = start().await;
    let mut req = responses_request(
        "call get_weather with city=Paris and get_time with tz=UTC",
        true,
    );
    req["tools"] = responses_tools();
    let t = check_responses_stream(&post(&server, RESPONSES, &req).await);
    let names: Vec<&str> = t.function_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "get_time"]);
    assert_eq!(t.output.len(), 2);
    req["parallel_tool_calls"] = json!(false);
    let t = check_responses_stream(&post(&server, RESPONSES, &req).await);
    assert_eq!(t.function_calls.len(), 1);
}

#[tokio::test]
async fn function_call_output_follow_up() {
    let server = start().await;
    let mut req = responses_request("call get_weather with city=Paris", true);
    req["tools"] = responses_tools();
    let first = check_responses_stream(&post(&server, RESPONSES, &req).await);
    let mut input = req["input"].as_array().unwrap().clone();
    input.push(first.output[0].clone());
    input.push(json!({
        "type": "function_call_output",
        "call_id": first.function_calls[0].call_id,
        "output": "sunny, 21 C"
    }));
    req["input"] = Value::Array(input);
    let t = check_responses_stream(&post(&server, RESPONSES, &req).await);
    assert!(t.function_calls.is_empty());
    assert_eq!(t.text, "The tool returned: sunny, 21 C");
}

#[tokio::test]
async fn reasoning_item_first() {
    let server = start().await;
    let mut req = responses_request("Hello there", true);
    req["reasoning"] = json!({"effort": "low", "summary": "auto"});
    let answer = post(&server, RESPONSES, &req).await;
    let t = check_responses_stream(&answer);
    assert_eq!(
        t.reasoning,
        "The user wrote 2 words. I will repeat them back."
    );
    assert_eq!(t.text, HELLO);
    assert_eq!(t.output[0]["type"], "reasoning");
    assert!(t.output[0]["id"].as_str().unwrap().starts_with("rs_"));
    assert_eq!(t.output[1]["type"], "message");
    assert_eq!(
        t.usage.unwrap()["output_tokens_details"]["reasoning_tokens"],
        10
    );
    let ty = types(&answer);
    for expected in [
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
    ] {
        assert!(ty.iter().any(|t| t == expected), "{expected}");
    }
    let done = events(&answer).pop().unwrap();
    assert_eq!(done["response"]["reasoning"], req["reasoning"]);

    req["stream"] = json!(false);
    let b = check_responses_body(&post(&server, RESPONSES, &req).await);
    assert_eq!(b.reasoning, t.reasoning);

    req["reasoning"] = json!({"effort": "none"});
    req["stream"] = json!(true);
    let t = check_responses_stream(&post(&server, RESPONSES, &req).await);
    assert!(t.reasoning.is_empty());
}

#[tokio::test]
async fn max_output_tokens_makes_it_incomplete() {
    let server = start().await;
    let mut req = responses_request("Hello there", true);
    req["max_output_tokens"] = json!(3);
    let answer = post(&server, RESPONSES, &req).await;
    let t = check_responses_stream(&answer);
    assert_eq!(t.status, "incomplete");
    assert_eq!(t.incomplete_reason.as_deref(), Some("max_output_tokens"));
    assert_eq!(t.text, "You said: \"Hello ");
    assert_eq!(t.output[0]["status"], "incomplete");
    assert_eq!(types(&answer).last().unwrap(), "response.incomplete");
    assert_eq!(t.usage.unwrap()["output_tokens"], 3);

    req["stream"] = json!(false);
    let b = check_responses_body(&post(&server, RESPONSES, &req).await);
    assert_eq!(b.status, "incomplete");
    assert_eq!(b.incomplete_reason.as_deref(), Some("max_output_tokens"));

    // Cut inside the reasoning: only a reasoning item.
    req["stream"] = json!(true);
    req["reasoning"] = json!({"effort": "high"});
    let t = check_responses_stream(&post(&server, RESPONSES, &req).await);
    assert_eq!(t.output.len(), 1);
    assert_eq!(t.status, "incomplete");

    // Zero tokens: no items at all.
    req["max_output_tokens"] = json!(0);
    let t = check_responses_stream(&post(&server, RESPONSES, &req).await);
    assert!(t.output.is_empty());
}

#[tokio::test]
async fn same_request_same_bytes() {
    let server = start().await;
    let req = responses_request("determinism please", true);
    let a = post(&server, RESPONSES, &req).await;
    let b = post(&server, RESPONSES, &req).await;
    assert_eq!(a.bytes(), b.bytes());
}
