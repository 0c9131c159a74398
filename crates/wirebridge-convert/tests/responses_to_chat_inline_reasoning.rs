//! Reasoning written at the start of the content, between `<think>` or
//! `<reasoning>` tags, by servers without a reasoning parser: split into a
//! reasoning item by default, streamed or not, however the stream is cut.

mod common;

use serde_json::Value;
use wirebridge_convert::profile::{BackendProfile, ThinkTags};
use wirebridge_convert::responses_to_chat::{
    translate_body, translate_request, Options, ResponsesContext, StreamTranslator,
};
use wirebridge_convert::SseTranslator;
use wirebridge_testkit::{parse_sse, responses_grammar, ResponsesTranscript};

fn chunk(delta: &str, finish: &str) -> String {
    format!(
        r#"data: {{"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
    ) + "\n\n"
}

/// A stream whose content arrives in `fragments`, then `stop`.
fn content_stream(fragments: &[&str]) -> String {
    let mut upstream = chunk(r#"{"role":"assistant"}"#, "null");
    for f in fragments {
        let delta = format!(r#"{{"content":{}}}"#, serde_json::to_string(f).unwrap());
        upstream += &chunk(&delta, "null");
    }
    upstream + &chunk("{}", r#""stop""#) + "data: [DONE]\n\n"
}

fn leading() -> ResponsesContext {
    ResponsesContext {
        think_tags: ThinkTags::Leading,
        ..Default::default()
    }
}

/// Translates `upstream` received in the two pieces around byte `cut`,
/// checked against the Responses stream grammar.
fn translate_cut(upstream: &[u8], cut: usize, ctx: &ResponsesContext) -> ResponsesTranscript {
    let mut stream = SseTranslator::new(StreamTranslator::new(ctx.clone()));
    let mut out = wirebridge_convert::Frames::sse();
    stream.feed(&upstream[..cut], &mut out);
    stream.feed(&upstream[cut..], &mut out);
    stream.finish(&mut out);
    responses_grammar::check(&parse_sse(out.as_bytes())).unwrap_or_else(|v| {
        panic!(
            "cut at {cut}: {v}\n{}",
            String::from_utf8_lossy(out.as_bytes())
        )
    })
}

fn item_types(t: &ResponsesTranscript) -> Vec<&str> {
    t.output
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect()
}

#[test]
fn a_leading_block_is_reasoning_wherever_the_stream_is_cut() {
    let cases = [
        (
            vec![
                "<thi",
                "nk>\nLet me",
                " think.</th",
                "ink>\n\nThe answer",
                " is 4 <b>.",
            ],
            "\nLet me think.",
            "The answer is 4 <b>.",
        ),
        (
            vec![
                "\n",
                "<reasoning>",
                "Canberra.</reasoning>",
                "Canberra <think>.",
            ],
            "Canberra.",
            "Canberra <think>.",
        ),
    ];
    for (fragments, reasoning, text) in cases {
        let upstream = content_stream(&fragments);
        let bytes = upstream.as_bytes();
        for cut in 0..=bytes.len() {
            let t = translate_cut(bytes, cut, &leading());
            assert_eq!(t.status, "completed");
            assert_eq!(t.reasoning, reasoning, "cut at {cut}");
            assert_eq!(t.text, text, "cut at {cut}");
            assert_eq!(item_types(&t), ["reasoning", "message"], "cut at {cut}");
        }
    }
}

/// gpt-oss on Bedrock wraps every reasoning chunk in its own pair of
/// `<reasoning>` tags (the order of its stream, written by hand): the
/// blocks are one reasoning item, and the answer carries no tag.
#[test]
fn reasoning_chunks_each_in_their_own_tags_are_one_reasoning() {
    let fragments = [
        "<reasoning>The user</reasoning>",
        "<reasoning> wants the sum.</reasoning>",
        "<reasoning> 2 + 2 = 4.</reasoning>",
        "The answer is 4.",
    ];
    let upstream = content_stream(&fragments);
    let bytes = upstream.as_bytes();
    for cut in 0..=bytes.len() {
        let t = translate_cut(bytes, cut, &leading());
        assert_eq!(t.status, "completed");
        assert_eq!(
            t.reasoning, "The user wants the sum. 2 + 2 = 4.",
            "cut at {cut}"
        );
        assert_eq!(t.text, "The answer is 4.", "cut at {cut}");
        assert_eq!(item_types(&t), ["reasoning", "message"], "cut at {cut}");
    }
    let output = body_output(&fragments.concat(), &leading());
    assert_eq!(
        output[0]["content"][0]["text"],
        "The user wants the sum. 2 + 2 = 4."
    );
    assert_eq!(output[1]["content"][0]["text"], "The answer is 4.");
}

#[test]
fn content_that_is_not_a_leading_block_is_left_alone() {
    for fragments in [
        vec!["Sure: ", "<think>", "is a tag</think>"],
        vec!["<", "b>bold</b>"],
        vec!["<thinking>", "not ours</thinking>"],
    ] {
        let upstream = content_stream(&fragments);
        let bytes = upstream.as_bytes();
        for cut in 0..=bytes.len() {
            let t = translate_cut(bytes, cut, &leading());
            assert_eq!(t.reasoning, "", "cut at {cut}");
            assert_eq!(t.text, fragments.concat(), "cut at {cut}");
        }
    }
}

#[test]
fn content_that_cannot_open_a_tag_is_sent_at_once() {
    let mut stream = SseTranslator::new(StreamTranslator::new(leading()));
    let mut out = wirebridge_convert::Frames::sse();
    stream.feed(chunk(r#"{"content":"<"}"#, "null").as_bytes(), &mut out);
    assert!(!String::from_utf8_lossy(out.as_bytes()).contains("output_text.delta"));
    out.clear();
    stream.feed(chunk(r#"{"content":"b"}"#, "null").as_bytes(), &mut out);
    let sent = String::from_utf8(out.take().bytes).unwrap();
    assert!(sent.contains(r#""delta":"<b""#), "{sent}");
}

#[test]
fn log_probabilities_survive_past_the_leading_block() {
    let logprobs =
        r#"{"content":[{"token":"Hi","logprob":-0.5,"bytes":[72,105],"top_logprobs":[]}]}"#;
    let upstream = format!(
        "data: {{\"id\":\"c1\",\"created\":7,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"Hi\"}},\"logprobs\":{logprobs},\"finish_reason\":null}}]}}\n\n"
    ) + &chunk("{}", r#""stop""#);
    let (out, _) = common::translate_stream(upstream.as_bytes(), leading(), 1);
    let t = responses_grammar::check(&parse_sse(&out)).unwrap();
    assert_eq!(t.text, "Hi");
    assert_eq!(t.output[0]["content"][0]["logprobs"][0]["token"], "Hi");
}

#[test]
fn held_back_content_comes_before_a_tool_call() {
    let upstream = chunk(r#"{"role":"assistant","content":"\n\n"}"#, "null")
        + &chunk(
            r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}"#,
            "null",
        )
        + &chunk("{}", r#""tool_calls""#);
    for seed in 0..4 {
        let (out, _) = common::translate_stream(upstream.as_bytes(), leading(), seed);
        let t = responses_grammar::check(&parse_sse(&out)).unwrap();
        assert_eq!(item_types(&t), ["message", "function_call"]);
        assert_eq!(t.text, "\n\n");
    }
}

#[test]
fn a_block_cut_off_by_the_token_limit_is_reasoning() {
    let upstream = chunk(r#"{"content":"<think>Let me"}"#, "null") + &chunk("{}", r#""length""#);
    let (out, _) = common::translate_stream(upstream.as_bytes(), leading(), 2);
    let t = responses_grammar::check(&parse_sse(&out)).unwrap();
    assert_eq!(t.status, "incomplete");
    assert_eq!((t.reasoning.as_str(), t.text.as_str()), ("Let me", ""));
}

#[test]
fn every_profile_splits_but_openai_and_off() {
    let request = br#"{"model":"m","input":"Hi"}"#;
    let think_tags = |profile: BackendProfile| {
        let options = Options {
            profile,
            ..Options::default()
        };
        translate_request(request, &options)
            .unwrap()
            .context
            .think_tags
    };
    assert_eq!(think_tags(BackendProfile::default()), ThinkTags::Leading);
    assert_eq!(think_tags(BackendProfile::vllm()), ThinkTags::Leading);
    assert_eq!(think_tags(BackendProfile::openai()), ThinkTags::Off);
    let off = BackendProfile {
        think_tags: ThinkTags::Off,
        ..BackendProfile::deepseek()
    };
    assert_eq!(think_tags(off), ThinkTags::Off);
}

fn body(content: &str) -> Vec<u8> {
    let message = serde_json::json!({"role": "assistant", "content": content});
    serde_json::to_vec(&serde_json::json!({
        "id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }))
    .unwrap()
}

fn body_output(content: &str, ctx: &ResponsesContext) -> Vec<Value> {
    let translated = translate_body(&body(content), ctx).unwrap();
    let response: Value = serde_json::from_slice(&translated.body).unwrap();
    response["output"].as_array().unwrap().clone()
}

#[test]
fn a_body_splits_its_leading_block_only() {
    let output = body_output(
        "  <think>2 + 2</think>\n\n4, not <think>5</think>",
        &leading(),
    );
    assert_eq!(output[0]["type"], "reasoning");
    assert_eq!(output[0]["content"][0]["text"], "2 + 2");
    assert_eq!(output[1]["content"][0]["text"], "4, not <think>5</think>");

    let output = body_output("4 <think>", &leading());
    assert_eq!(output.len(), 1);
    assert_eq!(output[0]["content"][0]["text"], "4 <think>");

    // Reasoning alone: no message.
    let output = body_output("<reasoning>hm</reasoning>", &leading());
    assert_eq!(output.len(), 1);
    assert_eq!(output[0]["type"], "reasoning");

    let off = ResponsesContext {
        think_tags: ThinkTags::Off,
        ..Default::default()
    };
    let output = body_output("<think>x</think>y", &off);
    assert_eq!(output[0]["content"][0]["text"], "<think>x</think>y");
}
