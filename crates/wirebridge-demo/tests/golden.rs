//! Golden outputs: what the demo upstream sends for a few representative
//! requests, byte for byte. They document the output for review, and
//! `scripts/test.sh` validates the OpenAI ones against the official OpenAPI
//! schema; the Messages ones pass the Messages grammar checker here.
//!
//! Regenerate with `UPDATE_GOLDEN=1 cargo test -p wirebridge-demo --test golden`
//! and review the diff.

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::PathBuf;
use wirebridge_demo::{Api, DemoConfig, DemoServer};
use wirebridge_testkit::responses_grammar;

/// A request and the golden file its answer must match.
struct Case {
    name: &'static str,
    path: &'static str,
    request: Value,
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn chat(text: &str, stream: bool, extra: Value) -> Value {
    let mut req = chat_request(text, stream);
    if stream {
        req["stream_options"] = json!({"include_usage": true});
    }
    merge(req, extra)
}

fn responses(text: &str, stream: bool, extra: Value) -> Value {
    merge(responses_request(text, stream), extra)
}

fn messages(text: &str, stream: bool, extra: Value) -> Value {
    merge(messages_request(text, stream), extra)
}

fn merge(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Value::Object(e)) = (base.as_object_mut(), extra) {
        b.extend(e);
    }
    base
}

fn cases() -> Vec<Case> {
    let calls = "call get_weather with city=Paris and get_time with tz=UTC";
    let chat_with_tools = json!({"tools": chat_tools()});
    let responses_with_tools = json!({"tools": responses_tools()});
    let chat_follow_up = json!({"tools": chat_tools(), "messages": [
        {"role": "user", "content": "call get_weather with city=Paris"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
    ]});
    let responses_follow_up = json!({"tools": responses_tools(), "input": [
        {"role": "user", "content": "call get_weather with city=Paris"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
    ]});
    let messages_with_tools = json!({"tools": messages_tools()});
    let messages_follow_up = json!({"tools": messages_tools(), "messages": [
        {"role": "user", "content": "call get_weather with city=Paris"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
            "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]}
    ]});
    let thinking = json!({"thinking": {"type": "enabled", "budget_tokens": 1024}});
    let case = |name, path, request| Case {
        name,
        path,
        request,
    };
    vec![
        case("text.chat-stream.sse", CHAT, chat("Hello", true, json!({}))),
        case(
            "text.chat-response.json",
            CHAT,
            chat("Hello", false, json!({})),
        ),
        case(
            "text.responses-stream.sse",
            RESPONSES,
            responses("Hello", true, json!({})),
        ),
        case(
            "text.responses-response.json",
            RESPONSES,
            responses("Hello", false, json!({})),
        ),
        case(
            "tool-calls.chat-stream.sse",
            CHAT,
            chat(calls, true, chat_with_tools.clone()),
        ),
        case(
            "tool-calls.chat-response.json",
            CHAT,
            chat(calls, false, chat_with_tools),
        ),
        case(
            "tool-calls.responses-stream.sse",
            RESPONSES,
            responses(calls, true, responses_with_tools.clone()),
        ),
        case(
            "tool-calls.responses-response.json",
            RESPONSES,
            responses(calls, false, responses_with_tools),
        ),
        case(
            "tool-result.chat-stream.sse",
            CHAT,
            chat("", true, chat_follow_up),
        ),
        case(
            "tool-result.responses-stream.sse",
            RESPONSES,
            responses("", true, responses_follow_up),
        ),
        case(
            "reasoning.chat-stream.sse",
            CHAT,
            chat("Think", true, json!({"reasoning_effort": "low"})),
        ),
        case(
            "reasoning.chat-response.json",
            CHAT,
            chat("Think", false, json!({"reasoning_effort": "low"})),
        ),
        case(
            "reasoning.responses-stream.sse",
            RESPONSES,
            responses(
                "Think",
                true,
                json!({"reasoning": {"effort": "low", "summary": "auto"}}),
            ),
        ),
        case(
            "reasoning.responses-response.json",
            RESPONSES,
            responses(
                "Think",
                false,
                json!({"reasoning": {"effort": "low", "summary": "auto"}}),
            ),
        ),
        case(
            "length.chat-stream.sse",
            CHAT,
            chat("Hello", true, json!({"max_tokens": 4})),
        ),
        case(
            "length.responses-stream.sse",
            RESPONSES,
            responses("Hello", true, json!({"max_output_tokens": 4})),
        ),
        case(
            "length.responses-response.json",
            RESPONSES,
            responses("Hello", false, json!({"max_output_tokens": 4})),
        ),
        case(
            "fail-midstream.chat-stream.sse",
            CHAT,
            chat("demo:fail-midstream", true, json!({})),
        ),
        case(
            "fail-midstream.responses-stream.sse",
            RESPONSES,
            responses("demo:fail-midstream", true, json!({})),
        ),
        case(
            "text.messages-stream.sse",
            MESSAGES,
            messages("Hello", true, json!({})),
        ),
        case(
            "text.messages-response.json",
            MESSAGES,
            messages("Hello", false, json!({})),
        ),
        case(
            "tool-calls.messages-stream.sse",
            MESSAGES,
            messages(calls, true, messages_with_tools.clone()),
        ),
        case(
            "tool-calls.messages-response.json",
            MESSAGES,
            messages(calls, false, messages_with_tools),
        ),
        case(
            "tool-result.messages-stream.sse",
            MESSAGES,
            messages("", true, messages_follow_up),
        ),
        case(
            "thinking.messages-stream.sse",
            MESSAGES,
            messages("Think", true, thinking.clone()),
        ),
        case(
            "thinking.messages-response.json",
            MESSAGES,
            messages("Think demo:redacted", false, thinking),
        ),
        case(
            "length.messages-stream.sse",
            MESSAGES,
            messages("Hello", true, json!({"max_tokens": 4})),
        ),
        case(
            "fail-midstream.messages-stream.sse",
            MESSAGES,
            messages("demo:fail-midstream", true, json!({})),
        ),
    ]
}

#[tokio::test]
async fn outputs_match_their_golden_files() {
    let server = DemoServer::start(DemoConfig::default().api(Api::All)).await;
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let dir = golden_dir();
    let mut mismatched = Vec::new();
    for case in cases() {
        let answer = post(&server, case.path, &case.request).await;
        if case.path == MESSAGES {
            if case.name.contains("-stream.") {
                check_messages_stream(&answer);
            } else {
                check_messages_body(&answer);
            }
        } else if case.name.contains("-stream.") {
            if case.path == CHAT {
                check_chat_stream(&answer, true);
            } else if case.name.starts_with("fail-") {
                // A failing upstream may stop mid-item; the bridge closes it.
                let upstream = responses_grammar::CheckOptions {
                    failure_closes_items: false,
                    ..responses_grammar::CheckOptions::strict()
                };
                check_responses_stream_with(&answer, &upstream);
            } else {
                check_responses_stream(&answer);
            }
        } else if case.path == CHAT {
            check_chat_body(&answer);
        } else {
            check_responses_body(&answer);
        }
        let file = dir.join(case.name);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&file, answer.bytes()).unwrap();
            continue;
        }
        match std::fs::read(&file) {
            Ok(golden) if golden == answer.bytes()[..] => {}
            Ok(_) => mismatched.push(format!("{} differs", case.name)),
            Err(e) => mismatched.push(format!("{} missing ({e})", case.name)),
        }
    }
    assert!(
        mismatched.is_empty(),
        "{mismatched:?}: run with UPDATE_GOLDEN=1 to accept, then review the diff"
    );
}
