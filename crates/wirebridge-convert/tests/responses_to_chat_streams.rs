//! Every recorded Chat stream, translated to a Responses stream: the strict
//! grammar checker passes on the output, and the content equals the input's,
//! however the upstream bytes are split.

mod common;

use common::translate_stream;
use serde_json::Value;
use wirebridge_convert::responses_to_chat::{ReasoningOutput, ResponsesContext};
use wirebridge_testkit::{
    chat_grammar, fixtures, parse_sse, responses_grammar, ChatTranscript, ResponsesTranscript,
};

fn assert_same_content(name: &str, expected: &ChatTranscript, actual: &ResponsesTranscript) {
    assert_eq!(actual.text, expected.text, "{name}: text");
    assert_eq!(actual.refusal, expected.refusal, "{name}: refusal");
    assert_eq!(actual.reasoning, expected.reasoning, "{name}: reasoning");
    let calls = |t: &[wirebridge_testkit::ToolCallRecord]| {
        t.iter()
            .map(|c| (c.name.clone(), c.call_id.clone(), c.arguments.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        calls(&actual.function_calls),
        calls(&expected.tool_calls),
        "{name}: tool calls"
    );
    match (&expected.usage, &actual.usage) {
        (Some(chat), Some(resp)) => {
            assert_eq!(
                resp["input_tokens"], chat["prompt_tokens"],
                "{name}: input tokens"
            );
            assert_eq!(
                resp["output_tokens"], chat["completion_tokens"],
                "{name}: output tokens"
            );
            assert_eq!(
                resp["total_tokens"], chat["total_tokens"],
                "{name}: total tokens"
            );
            let cached = chat
                .pointer("/prompt_tokens_details/cached_tokens")
                .cloned()
                .unwrap_or(Value::from(0));
            assert_eq!(
                resp["input_tokens_details"]["cached_tokens"], cached,
                "{name}: cached tokens"
            );
        }
        (None, None) => {}
        (e, a) => panic!("{name}: usage expected {e:?}, got {a:?}"),
    }
    let expected_status = match expected.finish_reason.as_deref() {
        Some("length") | Some("content_filter") => "incomplete",
        _ => "completed",
    };
    assert_eq!(actual.status, expected_status, "{name}: status");
}

#[test]
fn every_recorded_chat_stream_translates() {
    let streams = fixtures::chat_streams();
    assert!(
        streams.len() >= 10,
        "expected the recorded chat streams, found {}",
        streams.len()
    );
    for stream in streams {
        let expected = chat_grammar::transcript_of_recorded(&stream.frames());
        for seed in 0..8 {
            let (out, translator) =
                translate_stream(&stream.sse, ResponsesContext::default(), seed);
            let frames = parse_sse(&out);
            let transcript = responses_grammar::check(&frames).unwrap_or_else(|v| {
                panic!("{} (seed {seed}): grammar violation: {v}", stream.name)
            });
            assert_eq!(transcript.response_id, translator.response_id());
            assert_same_content(&stream.name, &expected, &transcript);
            let summary = translator.summary();
            assert_eq!(
                summary.outcome.as_deref(),
                Some(transcript.status.as_str()),
                "{}",
                stream.name
            );
            let names: Vec<_> = summary.tool_calls.iter().map(|c| c.name.as_str()).collect();
            let expected_names: Vec<_> = transcript
                .function_calls
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            assert_eq!(names, expected_names, "{}", stream.name);
            let sizes: Vec<_> = summary
                .tool_calls
                .iter()
                .map(|c| c.argument_bytes > 0)
                .collect();
            assert!(
                sizes.iter().all(|s| *s),
                "{}: argument sizes {:?}",
                stream.name,
                summary.tool_calls
            );
            assert_eq!(
                summary.usage.map(|u| u.output),
                transcript
                    .usage
                    .as_ref()
                    .and_then(|u| u["output_tokens"].as_u64())
            );
        }
    }
}

#[test]
fn split_points_do_not_change_the_output() {
    for stream in fixtures::chat_streams() {
        let redacted = |seed| {
            let (out, translator) =
                translate_stream(&stream.sse, ResponsesContext::default(), seed);
            // A stream whose chunks carry no `created` is dated by the
            // clock, and two runs can fall on either side of a second.
            let mut frames = common::redacted_sse(&out, translator.response_id());
            while let Some(at) = frames.find("\"created_at\":") {
                let digits = frames[at + 13..]
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(0);
                frames.replace_range(at..at + 13 + digits, "\"created_at\"#");
            }
            frames
        };
        let whole = redacted(u64::MAX);
        for seed in [1, 2, 3, 42] {
            assert_eq!(
                redacted(seed),
                whole,
                "{}: output depends on how the input was split",
                stream.name
            );
        }
    }
}

#[test]
fn reasoning_can_be_shown_as_summaries() {
    let stream = fixtures::chat_streams()
        .into_iter()
        .find(|s| s.name.contains("deepseek-reasoning"))
        .expect("the DeepSeek reasoning fixture");
    let expected = chat_grammar::transcript_of_recorded(&stream.frames());
    assert!(!expected.reasoning.is_empty());
    let ctx = ResponsesContext {
        reasoning_output: ReasoningOutput::Summary,
        ..Default::default()
    };
    let (out, _) = translate_stream(&stream.sse, ctx, 9);
    let frames = parse_sse(&out);
    let transcript = responses_grammar::check(&frames).unwrap();
    assert_eq!(transcript.reasoning, expected.reasoning);
    assert!(frames
        .iter()
        .any(|f| f.event.as_deref() == Some("response.reasoning_summary_text.delta")));
    assert!(!frames
        .iter()
        .any(|f| f.event.as_deref() == Some("response.reasoning_text.delta")));
}
