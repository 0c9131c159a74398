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

/// Reasoning the backend is not given is listed in every `Response` of the
/// request (`input_transformations`, the SDKs' `InputTransformation`):
/// the body's, and the `response` of each lifecycle event.
#[test]
fn withheld_reasoning_is_listed_in_the_response() {
    let options = Options {
        profile: BackendProfile {
            replay_reasoning: true,
            ..BackendProfile::vllm()
        },
        ..Options::default()
    };
    let request = common::input("withheld-reasoning-request.json");
    let ctx = request_golden("withheld-reasoning", &request, &options);
    // By the mapping: the first turn's item is left out as only the current
    // turn is replayed; one sealed by another server cannot be read by this
    // backend's model; one in this bridge's format that no key opens was
    // sealed for another tenant (or a retired key). The item without an id
    // cannot be named.
    let expected = serde_json::json!([
        {"id": "rs_earlier", "action": "removed", "reason": "turn_boundary", "type": "reasoning"},
        {"id": "rs_other_server", "action": "removed", "reason": "model_mismatch", "type": "reasoning"},
        {"id": "rs_other_tenant", "action": "removed", "reason": "organization_mismatch", "type": "reasoning"},
    ]);

    let body = fixtures::load_bytes("openai-python/chat-json-text.json");
    let translated = translate_body(&body, &ctx).unwrap();
    let response: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_eq!(response["input_transformations"], expected);
    body_golden("withheld-reasoning", &body, &ctx);

    let upstream = fixtures::load_bytes("openai-python/chat-stream-text.sse");
    let (out, _) = translate_stream(&upstream, ctx.clone(), 5);
    let lifecycle: Vec<Value> = wirebridge_testkit::parse_sse(&out)
        .iter()
        .map(|f| serde_json::from_str::<Value>(&f.data).unwrap())
        .filter(|e| e.get("response").is_some())
        .collect();
    let kinds: Vec<&str> = lifecycle
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.completed"
        ]
    );
    for event in &lifecycle {
        assert_eq!(event["response"]["input_transformations"], expected);
    }
    stream_golden("withheld-reasoning", &upstream, ctx);

    // Without a profile that replays reasoning, every named item is
    // withheld as the backend's model takes none back.
    let translated = translate_request(&request, &Options::default()).unwrap();
    let listed = serde_json::to_value(&translated.context.echo.input_transformations).unwrap();
    let reasons: Vec<(&str, &str)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("rs_earlier", "model_mismatch"),
            ("rs_other_server", "model_mismatch"),
            ("rs_other_tenant", "model_mismatch"),
        ]
    );
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
