//! Every recorded Responses stream and body, translated for a Chat client:
//! the strict Chat grammar checker passes, and the content equals the
//! recording's, however the upstream bytes are split.

use serde_json::Value;
use wirebridge_convert::chat_to_responses::{
    translate_body, ChatContext, ChatReasoning, StreamTranslator,
};
use wirebridge_convert::SseTranslator;
use wirebridge_testkit::{
    chat_grammar, fixtures, parse_sse, reshape, responses_grammar, split_random, ToolCallRecord,
};

fn translate(upstream: &[u8], ctx: ChatContext, seed: u64) -> Vec<u8> {
    translate_with_summary(upstream, ctx, seed).0
}

fn translate_with_summary(
    upstream: &[u8],
    ctx: ChatContext,
    seed: u64,
) -> (Vec<u8>, wirebridge_convert::ReplySummary) {
    let mut stream = SseTranslator::new(StreamTranslator::new(ctx));
    let mut out = wirebridge_convert::Frames::sse();
    for piece in split_random(upstream, seed) {
        stream.feed(&piece, &mut out);
    }
    stream.finish(&mut out);
    (out.take().bytes, stream.translator().summary())
}

/// The reasoning of a recorded stream as a Chat client gets it: each
/// reasoning item's text parts (else its summary parts), a blank line
/// between parts, as the body translator joins them.
fn reasoning_parts(frames: &[wirebridge_testkit::SseFrame]) -> String {
    let body = reshape::responses_stream_as_body(frames);
    let mut parts = Vec::new();
    for item in body["output"].as_array().into_iter().flatten() {
        if item["type"] != "reasoning" {
            continue;
        }
        let texts = |key: &str| -> Vec<String> {
            item[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["text"].as_str().map(str::to_owned))
                .filter(|t| !t.is_empty())
                .collect()
        };
        let content = texts("content");
        parts.extend(if content.is_empty() {
            texts("summary")
        } else {
            content
        });
    }
    parts.join("\n\n")
}

fn calls(records: &[ToolCallRecord]) -> Vec<(String, String, String)> {
    records
        .iter()
        .map(|c| (c.name.clone(), c.call_id.clone(), c.arguments.clone()))
        .collect()
}

#[test]
fn every_recorded_responses_stream_translates() {
    let streams = fixtures::responses_streams();
    assert!(
        streams.len() >= 14,
        "expected the recorded streams, found {}",
        streams.len()
    );
    for stream in streams {
        let expected = responses_grammar::transcript_of_recorded(&stream.frames());
        for (seed, include_usage) in [(1, true), (2, false), (3, true)] {
            let ctx = ChatContext {
                include_usage,
                reasoning: ChatReasoning::ReasoningContent,
                ..Default::default()
            };
            let (out, summary) = translate_with_summary(&stream.sse, ctx, seed);
            let name = &stream.name;
            let t = chat_grammar::check(&parse_sse(&out), include_usage).unwrap_or_else(|v| {
                panic!(
                    "{name} (seed {seed}): {v}\n{}",
                    String::from_utf8_lossy(&out)
                )
            });
            if expected.status == "failed" {
                let error = t
                    .error
                    .unwrap_or_else(|| panic!("{name}: failure not reported"));
                let recorded = expected.error.as_ref().unwrap();
                assert_eq!(error["message"], recorded["message"], "{name}");
                assert_eq!(error["code"], recorded["code"], "{name}");
                continue;
            }
            if name.contains("openai-phase") {
                // Recorded with most text deltas removed (see the fixtures'
                // README): its deltas cannot add up to its text. The grammar
                // check above still applies.
                continue;
            }
            assert_eq!(t.text, expected.text, "{name}: text");
            assert_eq!(t.refusal, expected.refusal, "{name}: refusal");
            assert_eq!(
                t.reasoning,
                reasoning_parts(&stream.frames()),
                "{name}: reasoning"
            );
            assert_eq!(
                calls(&t.tool_calls),
                calls(&expected.function_calls),
                "{name}: tool calls"
            );
            let finish = match (
                expected.status.as_str(),
                expected.incomplete_reason.as_deref(),
            ) {
                ("incomplete", Some("content_filter")) => "content_filter",
                ("incomplete", _) => "length",
                _ if !expected.function_calls.is_empty() => "tool_calls",
                _ => "stop",
            };
            assert_eq!(t.finish_reason.as_deref(), Some(finish), "{name}");
            assert_eq!(summary.outcome.as_deref(), Some(finish), "{name}");
            let names: Vec<_> = summary.tool_calls.iter().map(|c| c.name.clone()).collect();
            assert_eq!(
                names,
                t.tool_calls
                    .iter()
                    .map(|c| c.name.clone())
                    .collect::<Vec<_>>(),
                "{name}"
            );
            if include_usage {
                let (chat, resp) = (t.usage.as_ref().unwrap(), expected.usage.as_ref().unwrap());
                assert_eq!(chat["prompt_tokens"], resp["input_tokens"], "{name}");
                assert_eq!(chat["completion_tokens"], resp["output_tokens"], "{name}");
                assert_eq!(chat["total_tokens"], resp["total_tokens"], "{name}");
            }
        }
    }
}

#[test]
fn reasoning_is_omitted_and_reported_unless_asked_for() {
    let stream = fixtures::responses_streams()
        .into_iter()
        .find(|s| s.name.contains("gpt-5-4-split"))
        .expect("the reasoning fixture");
    let out = translate(&stream.sse, ChatContext::default(), 4);
    let t = chat_grammar::check(&parse_sse(&out), false).unwrap();
    assert!(t.reasoning.is_empty());
    assert!(!t.text.is_empty());
    let mut translator = SseTranslator::new(StreamTranslator::new(ChatContext::default()));
    translator.feed(&stream.sse, &mut wirebridge_convert::Frames::sse());
    let translator = translator.into_translator();
    assert!(
        translator.losses().iter().any(|l| l.path == "reasoning"),
        "{:?}",
        translator.losses()
    );
}

#[test]
fn every_recorded_responses_body_translates() {
    let bodies = fixtures::responses_bodies();
    assert!(bodies.len() >= 3);
    for (name, bytes) in bodies {
        let response: Value = serde_json::from_slice(&bytes).unwrap();
        let expected = responses_grammar::responses_body_transcript(&response);
        let ctx = ChatContext {
            reasoning: ChatReasoning::ReasoningContent,
            ..Default::default()
        };
        let translated = translate_body(&bytes, &ctx).unwrap_or_else(|e| panic!("{name}: {e}"));
        let chat: Value = serde_json::from_slice(&translated.body).unwrap();
        assert_eq!(chat["object"], "chat.completion");
        assert!(chat["id"].as_str().unwrap().starts_with("chatcmpl-"));
        let t = chat_grammar::chat_body_transcript(&chat);
        assert_eq!(t.text, expected.text, "{name}");
        assert_eq!(
            calls(&t.tool_calls),
            calls(&expected.function_calls),
            "{name}"
        );
        assert_eq!(
            chat["usage"]["prompt_tokens"], response["usage"]["input_tokens"],
            "{name}"
        );
        assert_eq!(
            chat["usage"]["completion_tokens"], response["usage"]["output_tokens"],
            "{name}"
        );
        let finish = if expected.function_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        assert_eq!(chat["choices"][0]["finish_reason"], finish, "{name}");
    }
}

#[test]
fn the_error_fixture_becomes_an_error_chunk_and_an_error_body() {
    let stream = fixtures::responses_streams()
        .into_iter()
        .find(|s| s.name.contains("openai-error"))
        .unwrap();
    let out = translate(&stream.sse, ChatContext::default(), 5);
    let frames = parse_sse(&out);
    // The error chunk, then `[DONE]` alone: the SDKs raise on the error,
    // and a client reading until `[DONE]` stops.
    let [.., error, done] = &frames[..] else {
        panic!("{frames:?}")
    };
    assert_eq!(done.data, "[DONE]");
    let error: Value = serde_json::from_str(&error.data).unwrap();
    assert_eq!(error["error"]["code"], "insufficient_quota");
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("You exceeded your current quota"));
    assert_eq!(frames.iter().filter(|f| f.data == "[DONE]").count(), 1);

    let failed = br#"{"id":"resp_1","object":"response","status":"failed","output":[],"error":{"code":"rate_limit_exceeded","message":"Slow down"}}"#;
    let err = translate_body(failed, &ChatContext::default()).unwrap_err();
    assert_eq!(err.status(), 502);
    assert_eq!(err.code(), "rate_limit_exceeded");
    assert_eq!(err.to_string(), "Slow down");
}

#[test]
fn a_cut_stream_ends_with_an_error_chunk() {
    let stream = fixtures::responses_streams()
        .into_iter()
        .find(|s| s.name.contains("azure__azure-text"))
        .unwrap();
    let middle = stream.sse.len() / 2;
    let boundary = middle
        + stream.sse[middle..]
            .windows(2)
            .position(|w| w == b"\n\n")
            .unwrap()
        + 2;
    let cut = &stream.sse[..boundary];
    let out = translate(cut, ChatContext::default(), 6);
    let t = chat_grammar::check(&parse_sse(&out), false).unwrap();
    assert!(t.error.unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("ended before"));
}
