//! Whole translations of representative inputs, compared with golden files
//! in `tests/golden/` (ids and completion times redacted). Regenerate with
//! `UPDATE_GOLDEN=1 cargo test -p wirebridge-convert --test responses_to_chat_golden` and review
//! the diff. CI also validates every golden file against the official
//! OpenAPI schema of its kind (the suffix of its name).

mod common;

use common::{assert_golden, redact, redacted_sse, translate_stream};
use serde_json::Value;
use wirebridge_convert::profile::{BackendProfile, ThinkTags};
use wirebridge_convert::responses_to_chat::{
    translate_body, translate_request, Options, ResponsesContext,
};
use wirebridge_testkit::fixtures;

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

fn request_golden(name: &str, body: &[u8], options: &Options) -> ResponsesContext {
    let translated = translate_request(body, options).unwrap_or_else(|e| panic!("{name}: {e}"));
    let chat: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_golden(&format!("{name}.chat-request.json"), &pretty(&chat));
    let losses: Vec<String> = translated.losses.iter().map(ToString::to_string).collect();
    assert_golden(&format!("{name}.losses.txt"), &(losses.join("\n") + "\n"));
    translated.context
}

fn stream_golden(name: &str, upstream: &[u8], ctx: ResponsesContext) {
    let (out, translator) = translate_stream(upstream, ctx, 5);
    assert_golden(
        &format!("{name}.responses-stream.sse"),
        &redacted_sse(&out, translator.response_id()),
    );
}

fn body_golden(name: &str, upstream: &[u8], ctx: &ResponsesContext) {
    let translated = translate_body(upstream, ctx).unwrap();
    let mut response: Value = serde_json::from_slice(&translated.body).unwrap();
    redact(&mut response, &translated.response_id);
    assert_golden(
        &format!("{name}.responses-response.json"),
        &pretty(&response),
    );
}

#[test]
fn codex_requests() {
    for (name, body) in fixtures::codex_requests() {
        let stem = name
            .trim_end_matches(".json")
            .rsplit('/')
            .next()
            .unwrap()
            .to_owned();
        request_golden(&stem, &body, &Options::default());
    }
}

#[test]
fn request_with_every_feature() {
    let body = common::input("request-features.json");
    request_golden("request-features.generic", &body, &Options::default());
    let openai = Options {
        profile: BackendProfile::openai(),
        ..Options::default()
    };
    request_golden("request-features.openai", &body, &openai);
    let replay = Options {
        profile: BackendProfile {
            replay_reasoning: true,
            ..BackendProfile::vllm()
        },
        ..Options::default()
    };
    request_golden("request-features.vllm-replay", &body, &replay);
}

#[test]
fn code_mode_request_with_a_tool_search() {
    let options = Options {
        profile: BackendProfile {
            replay_reasoning: true,
            ..BackendProfile::vllm()
        },
        ..Options::default()
    };
    let ctx = request_golden(
        "code-mode",
        &common::input("code-mode-request.json"),
        &options,
    );
    stream_golden(
        "code-mode-tool-search",
        &common::input("code-mode-tool-search.chat-stream.sse"),
        ctx,
    );
}

#[test]
fn streams() {
    let ctx = ResponsesContext {
        model: "gpt-4o".into(),
        ..Default::default()
    };
    for fixture in [
        "openai-python/chat-stream-parallel-tool-calls.sse",
        "openai-python/chat-stream-refusal.sse",
        "openai-python/chat-stream-finish-length.sse",
        "openai-python/chat-stream-content-logprobs.sse",
    ] {
        let stem = fixture.rsplit('/').next().unwrap().trim_end_matches(".sse");
        stream_golden(stem, &fixtures::load_bytes(fixture), ctx.clone());
    }
    stream_golden(
        "reasoning-then-tool",
        &common::input("reasoning-then-tool.chat-stream.sse"),
        ctx.clone(),
    );
    // Content as a part array (Mistral): thinking parts are reasoning.
    stream_golden(
        "mistral-thinking",
        &common::input("mistral-thinking.chat-stream.sse"),
        ctx.clone(),
    );
    // Failures keep what was said: the open item is closed as incomplete
    // with what arrived, and listed in the failed response.
    for name in [
        "error-midstream",
        "cut-while-reasoning",
        "invalid-json-in-tool-call",
    ] {
        stream_golden(
            name,
            &common::input(&format!("{name}.chat-stream.sse")),
            ctx.clone(),
        );
    }
}

#[test]
fn inline_reasoning() {
    // Servers without a reasoning parser write it at the start of the
    // content, between tags: a leading block is reasoning, later tags are
    // the answer's.
    let ctx = ResponsesContext {
        model: "deepseek-r1".into(),
        think_tags: ThinkTags::Leading,
        ..Default::default()
    };
    stream_golden(
        "inline-think",
        &common::input("inline-think.chat-stream.sse"),
        ctx.clone(),
    );
    body_golden(
        "inline-reasoning",
        &common::input("inline-reasoning.chat-response.json"),
        &ctx,
    );
}

#[test]
fn bodies() {
    let ctx = ResponsesContext {
        model: "gpt-4o".into(),
        ..Default::default()
    };
    for fixture in [
        "openai-python/chat-json-parallel-tool-calls.json",
        "openai-python/chat-json-refusal.json",
        "openai-python/chat-json-finish-length.json",
    ] {
        let stem = fixture
            .rsplit('/')
            .next()
            .unwrap()
            .trim_end_matches(".json");
        body_golden(stem, &fixtures::load_bytes(fixture), &ctx);
    }
    body_golden(
        "mistral-thinking",
        &common::input("mistral-thinking.chat-response.json"),
        &ctx,
    );
}
