//! Whole Chat-to-Responses request translations, compared with golden files
//! in `tests/golden/`: `<name>.responses-request.json` and, for what was
//! dropped, `<name>.losses.txt`. Regenerate with
//! `UPDATE_GOLDEN=1 cargo test -p wirebridge-convert --test chat_to_responses_golden_requests`
//! and review the diff. CI validates every `*.responses-request.json` against
//! the official `CreateResponse` schema.

mod common;

use common::assert_golden;
use serde_json::{json, Value};
use wirebridge_convert::chat_to_responses::{translate_request, ChatReasoning, Options};
use wirebridge_testkit::fixtures;

fn golden(name: &str, body: &[u8], options: &Options) {
    let translated = translate_request(body, options).unwrap_or_else(|e| panic!("{name}: {e}"));
    let responses: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_golden(
        &format!("{name}.responses-request.json"),
        &(serde_json::to_string_pretty(&responses).unwrap() + "\n"),
    );
    let losses: Vec<String> = translated.losses.iter().map(ToString::to_string).collect();
    assert_golden(&format!("{name}.losses.txt"), &(losses.join("\n") + "\n"));
}

#[test]
fn hand_written_requests() {
    for name in [
        "chat-request-features",
        "chat-request-defaults",
        "chat-request-legacy-functions",
    ] {
        golden(
            name,
            &common::input(&format!("{name}.json")),
            &Options::default(),
        );
    }
    // A client that reads reasoning also asks for the summaries.
    golden(
        "chat-request-custom-tools.reasoning-content",
        &common::input("chat-request-custom-tools.json"),
        &Options {
            reasoning: ChatReasoning::ReasoningContent,
            ..Options::default()
        },
    );
}

/// The requests a client sends after two recorded replies: one with
/// parallel tool calls, one with a refusal.
#[test]
fn follow_ups_to_recorded_replies() {
    for (fixture, name, question) in [
        (
            "openai-python/chat-json-parallel-tool-calls.json",
            "chat-follow-up-parallel-tool-calls",
            "Weather in Edinburgh, and the AAPL price?",
        ),
        (
            "openai-python/chat-json-refusal.json",
            "chat-follow-up-refusal",
            "How do I pick a lock?",
        ),
    ] {
        let reply: Value = serde_json::from_slice(&fixtures::load_bytes(fixture)).unwrap();
        let message = &reply["choices"][0]["message"];
        let mut messages = vec![
            json!({"role": "developer", "content": "Use the tools when they help."}),
            json!({"role": "user", "content": question}),
            message.clone(),
        ];
        let mut tools = Vec::new();
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let name = &call["function"]["name"];
            messages.push(json!({"role": "tool", "tool_call_id": call["id"], "content": format!("result of {}", name.as_str().unwrap())}));
            tools.push(json!({"type": "function", "function": {"name": name, "strict": true,
                "parameters": {"type": "object", "properties": {}, "additionalProperties": false}}}));
        }
        messages.push(json!({"role": "user", "content": "Thanks."}));
        let mut request = json!({"model": reply["model"], "messages": messages,
            "stream": true, "stream_options": {"include_usage": true}});
        if !tools.is_empty() {
            request["tools"] = json!(tools);
            request["parallel_tool_calls"] = json!(true);
        }
        golden(
            name,
            &serde_json::to_vec(&request).unwrap(),
            &Options::default(),
        );
    }
}
