//! Whole translations of recorded Responses streams and bodies for a Chat
//! client, compared with golden files (ids and times redacted). CI validates
//! them against the official schema and feeds them to the openai SDK.

mod common;

use common::assert_golden;
use serde_json::Value;
use wirebridge_convert::chat_to_responses::{
    translate_body, ChatContext, ChatReasoning, StreamTranslator,
};
use wirebridge_testkit::{fixtures, parse_sse};

fn redact_chat(value: &mut Value, id: &str) {
    if let Some(v) = value.get_mut("id").filter(|v| v.as_str() == Some(id)) {
        *v = Value::from("chatcmpl-<id>");
    }
}

fn stream_golden(name: &str, fixture: &str, ctx: ChatContext) {
    let stream = fixtures::responses_streams()
        .into_iter()
        .find(|s| s.name == fixture)
        .expect(fixture);
    let (out, translator) = common::drive(StreamTranslator::new(ctx), &stream.sse, 0);
    let mut text = String::new();
    for frame in parse_sse(&out) {
        text.push_str("data: ");
        if frame.data == "[DONE]" {
            text.push_str("[DONE]");
        } else {
            let mut value: Value = serde_json::from_str(&frame.data).unwrap();
            redact_chat(&mut value, translator.id());
            text.push_str(&serde_json::to_string(&value).unwrap());
        }
        text.push_str("\n\n");
    }
    assert_golden(&format!("{name}.chat-stream.sse"), &text);
}

#[test]
fn streams() {
    let usage = ChatContext {
        include_usage: true,
        ..Default::default()
    };
    stream_golden(
        "responses-azure-text",
        "vercel-ai/responses/azure__azure-text.1.chunks.txt",
        usage.clone(),
    );
    stream_golden(
        "responses-azure-tool-call",
        "vercel-ai/responses/azure__azure-tool-call.1.chunks.txt",
        usage.clone(),
    );
    let reasoning = ChatContext {
        reasoning: ChatReasoning::ReasoningContent,
        ..usage
    };
    stream_golden(
        "responses-reasoning-then-call",
        "vercel-ai/responses/openai-issue-11239.1.chunks.txt",
        reasoning,
    );
    stream_golden(
        "responses-error",
        "vercel-ai/responses/openai-error.1.chunks.txt",
        ChatContext::default(),
    );
}

#[test]
fn bodies() {
    for (name, bytes) in fixtures::responses_bodies() {
        let stem = name
            .rsplit('/')
            .next()
            .unwrap()
            .trim_end_matches(".json")
            .replace("__", "-");
        let ctx = ChatContext {
            reasoning: ChatReasoning::ReasoningContent,
            ..Default::default()
        };
        let translated = translate_body(&bytes, &ctx).unwrap();
        let mut chat: Value = serde_json::from_slice(&translated.body).unwrap();
        let id = chat["id"].as_str().unwrap().to_owned();
        redact_chat(&mut chat, &id);
        assert_golden(
            &format!("responses-{stem}.chat-response.json"),
            &(serde_json::to_string_pretty(&chat).unwrap() + "\n"),
        );
    }
}
