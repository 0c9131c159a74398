//! Tests of the fixture loaders: discovery, re-framing, splitting, bodies.

mod common;

use serde_json::Value;
use std::collections::BTreeSet;
use wirebridge_testkit::fixtures::{self, StreamKind};
use wirebridge_testkit::{chat_grammar, parse_sse, responses_grammar, split_random};

#[test]
fn shared_dir_holds_fixtures_and_spec() {
    let dir = fixtures::shared_dir();
    assert!(
        dir.join("fixtures/README.md").is_file(),
        "{}",
        dir.display()
    );
    assert!(dir.join("spec/openapi.json").is_file(), "{}", dir.display());
    assert_eq!(
        fixtures::fixture_path("openai-python/chat-stream-text.sse"),
        dir.join("fixtures/openai-python/chat-stream-text.sse")
    );
}

#[test]
fn chat_streams_are_discovered_and_framed() {
    let streams = fixtures::chat_streams();
    let names: BTreeSet<&str> = streams.iter().map(|s| s.name.as_str()).collect();
    for want in [
        "openai-python/chat-stream-text.sse",
        "openai-python/chat-stream-parallel-tool-calls.sse",
        "openai-python/chat-stream-n3-choices.sse",
        "vercel-ai/chat/openai-text.chunks.txt",
        "vercel-ai/chat/azure-model-router.1.chunks.txt",
        "vercel-ai/chat/azure__azure-deepseek-reasoning.1.chunks.txt",
    ] {
        assert!(names.contains(want), "missing {want} in {names:?}");
    }
    assert!(streams.len() >= 15, "{}", streams.len());
    for s in &streams {
        assert_eq!(s.kind, StreamKind::Chat);
        let frames = s.frames();
        assert!(frames.len() > 2, "{}", s.name);
        assert_eq!(
            frames.last().map(|f| f.data.as_str()),
            Some("[DONE]"),
            "{}",
            s.name
        );
        assert!(frames.iter().all(|f| f.event.is_none()), "{}", s.name);
        if s.name.ends_with(".sse") {
            // Raw recordings are used byte for byte.
            assert_eq!(s.sse, fixtures::load_bytes(&s.name));
        } else {
            let text = String::from_utf8(fixtures::load_bytes(&s.name)).unwrap();
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            assert_eq!(frames.len(), lines + 1, "{}", s.name);
            assert!(String::from_utf8(s.sse.clone())
                .unwrap()
                .ends_with("data: [DONE]\n\n"));
        }
    }
}

#[test]
fn responses_streams_are_discovered_framed_and_split() {
    let streams = fixtures::responses_streams();
    let names: Vec<&str> = streams.iter().map(|s| s.name.as_str()).collect();
    let base = "vercel-ai/responses/openai-reasoning-encrypted-content.1.chunks.txt";
    for n in 1..=4 {
        assert!(names.contains(&format!("{base}#{n}").as_str()), "{names:?}");
    }
    assert!(!names.contains(&base));
    assert!(names.contains(&"vercel-ai/responses/openai-web-search-tool.1.chunks.txt"));
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "streams are sorted by name");

    for s in &streams {
        assert_eq!(s.kind, StreamKind::Responses);
        let frames = s.frames();
        let first: Value = serde_json::from_str(&frames[0].data).unwrap();
        assert_eq!(first["type"], "response.created", "{}", s.name);
        for f in &frames {
            let v: Value = serde_json::from_str(&f.data).unwrap();
            assert_eq!(f.event.as_deref(), v["type"].as_str(), "{}", s.name);
        }
        let created = frames
            .iter()
            .filter(|f| f.event.as_deref() == Some("response.created"))
            .count();
        assert_eq!(created, 1, "{}", s.name);
    }

    // The four parts of the concatenated file are four different responses
    // and together hold every line of the file.
    let parts: Vec<_> = streams
        .iter()
        .filter(|s| s.name.starts_with(base))
        .collect();
    let ids: BTreeSet<String> = parts
        .iter()
        .map(|s| responses_grammar::transcript_of_recorded(&s.frames()).response_id)
        .collect();
    assert_eq!(ids.len(), 4);
    let total: usize = parts.iter().map(|s| s.frames().len()).sum();
    let text = String::from_utf8(fixtures::load_bytes(
        "vercel-ai/responses/openai-reasoning-encrypted-content.1.chunks.txt",
    ))
    .unwrap();
    assert_eq!(total, text.lines().filter(|l| !l.trim().is_empty()).count());
}

#[test]
fn reframe_chunks_formats() {
    let chat = fixtures::reframe_chunks(StreamKind::Chat, "{\"a\":1}\n\n{\"b\":2}\r\n");
    assert_eq!(
        String::from_utf8(chat).unwrap(),
        "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n"
    );
    let resp = fixtures::reframe_chunks(
        StreamKind::Responses,
        "{\"type\":\"response.created\",\"x\":1}\n  \n",
    );
    assert_eq!(
        String::from_utf8(resp).unwrap(),
        "event: response.created\ndata: {\"type\":\"response.created\",\"x\":1}\n\n"
    );
}

#[test]
fn random_splits_reassemble_every_stream() {
    let all = fixtures::chat_streams()
        .into_iter()
        .chain(fixtures::responses_streams());
    for s in all {
        let want = parse_sse(&s.sse);
        for seed in 0..8 {
            let pieces = split_random(&s.sse, seed);
            assert!(pieces.iter().all(|p| !p.is_empty()));
            assert_eq!(parse_sse(&pieces.concat()), want, "{} seed {seed}", s.name);
        }
    }
}

#[test]
fn chat_bodies_are_completions() {
    let bodies = fixtures::chat_bodies();
    let names: Vec<&str> = bodies.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"openai-python/chat-json-parallel-tool-calls.json"));
    assert!(names.contains(&"vercel-ai/chat/openai-text.json"));
    assert!(!names.iter().any(|n| n.contains("legacy-parameter-error")));
    for (name, bytes) in &bodies {
        let v: Value = serde_json::from_slice(bytes).unwrap();
        assert_eq!(v["object"], "chat.completion", "{name}");
        let t = chat_grammar::chat_body_transcript(&v);
        assert!(t.id.starts_with("chatcmpl-"), "{name}");
        assert!(t.finish_reason.is_some(), "{name}");
        assert!(t.usage.is_some(), "{name}");
        assert!(
            !t.text.is_empty() || !t.refusal.is_empty() || !t.tool_calls.is_empty(),
            "{name}: no content"
        );
    }
    let body = |n: &str| -> Value {
        let (_, b) = bodies.iter().find(|(name, _)| name.ends_with(n)).unwrap();
        serde_json::from_slice(b).unwrap()
    };
    let t = chat_grammar::chat_body_transcript(&body("chat-json-parallel-tool-calls.json"));
    let names: Vec<&str> = t.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["GetWeatherArgs", "get_stock_price"]);
    assert_eq!(t.tool_calls[0].call_id, "call_fdNz3vOBKYgOIpMdWotB9MjY");
    assert_eq!(t.tool_calls[0].item_type, "function_call");
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    let t = chat_grammar::chat_body_transcript(&body("chat-json-refusal.json"));
    assert_eq!(t.refusal, "I'm very sorry, but I can't assist with that.");
    let t = chat_grammar::chat_body_transcript(&body("chat-json-n3-choices.json"));
    assert!(
        t.text.contains("\"temperature\":64"),
        "choice 0 only: {}",
        t.text
    );
}

#[test]
fn responses_bodies_are_responses() {
    let bodies = fixtures::responses_bodies();
    let names: Vec<&str> = bodies.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"vercel-ai/responses/openai-reasoning-encrypted-content.1.json"));
    assert!(names.contains(&"vercel-ai/responses/azure__azure-tool-call.1.json"));
    assert!(!names.contains(&"vercel-ai/responses/openai-error.1.json"));
    for (name, bytes) in &bodies {
        let v: Value = serde_json::from_slice(bytes).unwrap();
        assert_eq!(v["object"], "response", "{name}");
        let t = responses_grammar::responses_body_transcript(&v);
        assert_eq!(t.status, "completed", "{name}");
        assert!(t.usage.is_some(), "{name}");
        assert!(!t.output.is_empty(), "{name}");
    }
    let (_, b) = bodies
        .iter()
        .find(|(n, _)| n.ends_with("azure__azure-tool-call.1.json"))
        .unwrap();
    let t = responses_grammar::responses_body_transcript(&serde_json::from_slice(b).unwrap());
    assert_eq!(t.function_calls.len(), 1);
    assert_eq!(t.function_calls[0].name, "weather");
    assert!(t.function_calls[0].call_id.starts_with("call_"));

    let errors = fixtures::error_bodies();
    let names: Vec<&str> = errors.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"vercel-ai/responses/openai-error.1.json"));
    assert!(names.contains(&"vercel-ai/chat/reasoning-model-legacy-parameter-error.json"));
    for (name, b) in &errors {
        let v: Value = serde_json::from_slice(b).unwrap();
        let t = chat_grammar::chat_body_transcript(&v);
        assert!(t.error.is_some(), "{name}");
        let t = responses_grammar::responses_body_transcript(&v);
        assert!(t.error.is_some(), "{name}");
    }
}

#[test]
fn codex_requests_are_compact_bodies_in_original_order() {
    let reqs = fixtures::codex_requests();
    assert_eq!(reqs.len(), 3);
    for (name, body) in &reqs {
        let text = std::str::from_utf8(body).unwrap();
        assert!(text.starts_with("{\"model\":"), "{name}: key order kept");
        assert!(!text.contains("\n"), "{name}: compact");
        let parsed: Value = serde_json::from_str(text).unwrap();
        let wrapper: Value = serde_json::from_slice(&fixtures::load_bytes(name)).unwrap();
        assert_eq!(parsed, wrapper["body"], "{name}");
        assert!(parsed["input"].is_array(), "{name}");
    }
}
