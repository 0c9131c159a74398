//! Responses → Chat stream edge cases.

mod common;

use serde_json::Value;
use wirebridge_convert::chat_to_responses::{ChatContext, StreamTranslator};
use wirebridge_testkit::{chat_grammar, parse_sse, ChatTranscript};

fn run(events: &[&str], ctx: ChatContext) -> (Vec<Value>, ChatTranscript, StreamTranslator) {
    let (out, translator) =
        common::drive(StreamTranslator::new(ctx.clone()), &common::sse(events), 0);
    let frames = parse_sse(&out);
    let t = chat_grammar::check(&frames, ctx.include_usage)
        .unwrap_or_else(|v| panic!("{v}\n{}", String::from_utf8_lossy(&out)));
    let chunks = frames
        .iter()
        .filter(|f| f.data != "[DONE]")
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect();
    (chunks, t, translator)
}

const CREATED: &str = r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","created_at":1700000000,"model":"gpt-x","status":"in_progress","output":[]}}"#;
const COMPLETED: &str = r#"{"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":5,"output_tokens":7,"total_tokens":12,"input_tokens_details":{"cached_tokens":1},"output_tokens_details":{"reasoning_tokens":2}}}}"#;

#[test]
fn items_sent_only_whole_still_arrive_once() {
    let events = [
        CREATED,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m","status":"completed","role":"assistant","content":[{"type":"output_text","text":"whole","annotations":[]}]}}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc","call_id":"call_9","name":"f","arguments":"{\"a\":1}","status":"completed"}}"#,
        COMPLETED,
    ];
    let (_, t, _) = run(&events, ChatContext::default());
    assert_eq!(t.text, "whole");
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].arguments, r#"{"a":1}"#);
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
}

#[test]
fn arguments_only_in_done_are_sent_once() {
    let events = [
        CREATED,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"c","name":"f","arguments":"","status":"in_progress"}}"#,
        r#"{"type":"response.function_call_arguments.done","output_index":0,"item_id":"fc","arguments":"{}"}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"c","name":"f","arguments":"{}","status":"completed"}}"#,
        COMPLETED,
    ];
    let (_, t, _) = run(&events, ChatContext::default());
    assert_eq!(t.tool_calls[0].arguments, "{}");
}

#[test]
fn usage_chunk_and_null_usage_when_asked() {
    let ctx = ChatContext {
        include_usage: true,
        ..Default::default()
    };
    let events = [
        CREATED,
        r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"x","logprobs":[]}"#,
        COMPLETED,
    ];
    let (chunks, t, _) = run(&events, ctx);
    let usage = t.usage.unwrap();
    assert_eq!(
        (
            usage["prompt_tokens"].as_u64(),
            usage["completion_tokens"].as_u64()
        ),
        (Some(5), Some(7))
    );
    assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 1);
    assert_eq!(usage["completion_tokens_details"]["reasoning_tokens"], 2);
    assert!(chunks[..chunks.len() - 1]
        .iter()
        .all(|c| c["usage"].is_null() && c.get("usage").is_some()));
    let (chunks, _, _) = run(&events, ChatContext::default());
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    assert!(chunks
        .iter()
        .all(|c| c["created"] == 1700000000 && c["model"] == "gpt-x"));
}

#[test]
fn logprobs_pass_through_when_asked() {
    let ctx = ChatContext {
        logprobs: true,
        ..Default::default()
    };
    let events = [
        CREATED,
        r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hi","logprobs":[{"token":"Hi","logprob":-0.1,"top_logprobs":[]}]}"#,
        COMPLETED,
    ];
    let (chunks, _, _) = run(&events, ctx);
    let with_text = chunks
        .iter()
        .find(|c| c["choices"][0]["delta"]["content"] == "Hi")
        .unwrap();
    assert_eq!(
        with_text["choices"][0]["logprobs"]["content"][0]["token"],
        "Hi"
    );
}

#[test]
fn hosted_items_and_unknown_events_are_reported_not_fatal() {
    let events = [
        CREATED,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"web_search_call","id":"ws","status":"in_progress"}}"#,
        r#"{"type":"response.web_search_call.searching","output_index":0,"item_id":"ws"}"#,
        r#"{"type":"response.something_new","whatever":[1,2]}"#,
        r#"{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"found","logprobs":[],"obfuscation":"abc"}"#,
        COMPLETED,
    ];
    let (_, t, translator) = run(&events, ChatContext::default());
    assert_eq!(t.text, "found");
    assert!(translator
        .losses()
        .iter()
        .any(|l| l.path == "web_search_call"));
}

#[test]
fn incomplete_maps_to_length_or_content_filter() {
    for (reason, finish) in [
        ("max_output_tokens", "length"),
        ("content_filter", "content_filter"),
    ] {
        let incomplete = format!(
            r#"{{"type":"response.incomplete","response":{{"id":"resp_1","status":"incomplete","incomplete_details":{{"reason":"{reason}"}}}}}}"#
        );
        let events = [
            CREATED,
            r#"{"type":"response.output_text.delta","output_index":0,"delta":"x"}"#,
            incomplete.as_str(),
        ];
        let (_, t, _) = run(&events, ChatContext::default());
        assert_eq!(t.finish_reason.as_deref(), Some(finish));
    }
}

#[test]
fn error_events_keep_message_and_code_whatever_their_shape() {
    let shapes = [
        // Nested, as OpenAI sends it.
        r#"{"type":"error","sequence_number":1,"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"quota","param":null}}"#,
        // Flat, as the OpenAPI spec defines it.
        r#"{"type":"error","sequence_number":1,"code":"insufficient_quota","message":"quota","param":null}"#,
        // Nested without a type, the code a number.
        r#"{"type":"error","sequence_number":1,"error":{"code":429,"message":"quota"}}"#,
        // Nested without a message, the message flat.
        r#"{"type":"error","sequence_number":1,"message":"quota","error":{"code":"insufficient_quota"}}"#,
        // A bare string.
        r#"{"type":"error","sequence_number":1,"error":"quota"}"#,
        // No `type` at all, as a Chat server writes a failure mid-stream.
        r#"{"error":{"message":"quota","type":"server_error","code":"insufficient_quota"}}"#,
    ];
    for (n, event) in shapes.into_iter().enumerate() {
        let (_, t, _) = run(&[CREATED, event], ChatContext::default());
        let error = t
            .error
            .unwrap_or_else(|| panic!("shape {n}: no error chunk"));
        assert_eq!(error["message"], "quota", "shape {n}");
        let expected_code = match n {
            2 => Value::from("429"),
            4 => Value::Null,
            _ => Value::from("insufficient_quota"),
        };
        assert_eq!(error["code"], expected_code, "shape {n}");
        assert!(error["type"].is_string(), "shape {n}");
    }
}

#[test]
fn usage_counts_near_the_limit_saturate() {
    let huge = u64::MAX - 1;
    let completed = format!(
        r#"{{"type":"response.completed","sequence_number":9,"response":{{"id":"resp_1","status":"completed","usage":{{"input_tokens":{huge},"output_tokens":5}}}}}}"#
    );
    let ctx = ChatContext {
        include_usage: true,
        ..Default::default()
    };
    let (chunks, _, _) = run(&[CREATED, &completed], ctx);
    let usage = &chunks.last().unwrap()["usage"];
    assert_eq!(usage["total_tokens"], u64::MAX);
    assert_eq!(usage["prompt_tokens"], huge);
}

#[test]
fn flat_error_events_and_garbage_fail_cleanly() {
    let events = [
        CREATED,
        r#"{"type":"error","code":"server_error","message":"boom","param":null,"sequence_number":1}"#,
    ];
    let (_, t, _) = run(&events, ChatContext::default());
    assert_eq!(t.error.unwrap()["message"], "boom");
    let (_, t, _) = run(&[CREATED, "{not json"], ChatContext::default());
    assert!(t.error.unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("not valid JSON"));
}

/// Found by the `responses_stream` fuzz target, kept as it minimized it: an
/// item starts the stream before `response.created`, which then names
/// another model. Every chunk must keep the first chunk's header.
#[test]
fn a_late_lifecycle_event_keeps_the_chunk_header() {
    let upstream: &[u8] = b"d\ndata: {\"type\":\"response.output_item.added\"}\n\n\xff\xff\xff\n\
        data: {\"type\":\"response.created\",\"\":0,\"response\":{\"s\":null,\"model\":\"x\",\"\":{}}}\n\n\
        data: {\"type\":\"response.output_text.delta\",\"delta\":\"The\"}\n\nev0}";
    let ctx = ChatContext {
        model: "m".to_owned(),
        include_usage: true,
        ..Default::default()
    };
    let (out, _) = common::drive(StreamTranslator::new(ctx), upstream, 0);
    let frames = parse_sse(&out);
    let t = chat_grammar::check(&frames, true)
        .unwrap_or_else(|v| panic!("{v}\n{}", String::from_utf8_lossy(&out)));
    assert_eq!(t.text, "The");
    assert!(
        t.error.is_some(),
        "the stream was cut: it ends with an error"
    );
    // Every chunk but the error and `[DONE]` repeats the first's model.
    assert_eq!(frames.last().unwrap().data, "[DONE]");
    for frame in &frames[..frames.len() - 2] {
        let chunk: Value = serde_json::from_str(&frame.data).unwrap();
        assert_eq!(chunk["model"], "m");
    }
}

/// Found by the `responses_stream` fuzz target, kept as it minimized it: a
/// call a Chat client could neither run (no name) nor answer (no call id)
/// fails the stream rather than opening a tool call without them.
#[test]
fn a_call_without_name_or_call_id_fails_the_stream() {
    let upstream =
        br#"data: {"item":{"type":"function_call"},"":2,"type":"response.output_item.added"}"#;
    let ctx = ChatContext {
        include_usage: true,
        ..Default::default()
    };
    let (out, _) = common::drive(StreamTranslator::new(ctx), upstream, 0);
    let t = chat_grammar::check(&parse_sse(&out), true)
        .unwrap_or_else(|v| panic!("{v}\n{}", String::from_utf8_lossy(&out)));
    assert!(t.tool_calls.is_empty());
    assert!(t.error.unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("without a name or call_id"));
    // A call id that is there but empty is no more use to the client.
    let events = [
        CREATED,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"","name":"f","arguments":"{}","status":"completed"}}"#,
        COMPLETED,
    ];
    let (_, t, _) = run(&events, ChatContext::default());
    assert!(t.error.is_some(), "an empty call_id is no call id");
}

/// A call item that ended `incomplete` in a response that completed: the
/// finish reason is not the terminal event's alone. Streamed, what was sent
/// of the call stays and the answer finishes for `length`; as a body (read
/// whole, or folded from the same stream), the call is left out and
/// reported, and the answer finishes for `length` too: never `tool_calls`,
/// which a client would run.
#[test]
fn a_call_left_unfinished_finishes_for_length_whatever_the_terminal_event_says() {
    use wirebridge_convert::chat_to_responses::{translate_body, translate_stream_body};

    let cut = r#"{"type":"function_call","id":"fc","call_id":"call_9","name":"bash","status":"incomplete","arguments":"{\"command\":[\"ls\""}"#;
    let added = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"call_9","name":"bash","status":"in_progress","arguments":""}}"#;
    let delta = r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"command\":[\"ls\""}"#;
    let done = format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{cut}}}"#);
    let events = [CREATED, added, delta, &done, COMPLETED];
    let ctx = ChatContext {
        include_usage: true,
        ..ChatContext::default()
    };
    let (_, t, translator) = run(&events, ctx.clone());
    assert_eq!(t.finish_reason.as_deref(), Some("length"));
    assert_eq!(
        t.tool_calls[0].arguments, r#"{"command":["ls""#,
        "what was sent stays"
    );
    assert!(translator.summary().tool_calls.is_empty());

    let body = format!(
        r#"{{"id":"resp_1","object":"response","status":"completed","model":"gpt-x","output":[{cut}],"usage":{{"input_tokens":5,"output_tokens":7,"total_tokens":12}}}}"#
    );
    let folded = translate_stream_body(&common::sse(&events), &ctx).unwrap();
    let whole = translate_body(body.as_bytes(), &ctx).unwrap();
    for reply in [folded, whole] {
        let completion: Value = serde_json::from_slice(&reply.body).unwrap();
        let t = chat_grammar::chat_body_transcript(&completion);
        assert_eq!(t.finish_reason.as_deref(), Some("length"), "{completion}");
        assert!(t.tool_calls.is_empty(), "{completion}");
        assert!(reply.summary.tool_calls.is_empty());
        assert!(
            reply.losses.iter().any(|l| l.path == "output[0]"),
            "{:?}",
            reply.losses
        );
    }
}

/// A finished call whose arguments are no JSON object is one a Chat client
/// could not run: the stream fails with an error chunk after what was sent,
/// and the body is refused naming the item, as for a Messages client. In a
/// response the backend cut short, the same arguments are a call left
/// unfinished: `length`, and the body leaves it out.
#[test]
fn a_finished_call_with_arguments_that_are_no_object_is_reported() {
    use wirebridge_convert::chat_to_responses::translate_body;
    use wirebridge_convert::ConvertError;

    for arguments in [r#"{\"command\":[\"ls\""#, r#"[\"ls\"]"#, "ls"] {
        let item = format!(
            r#"{{"type":"function_call","id":"fc","call_id":"call_9","name":"bash","status":"completed","arguments":"{arguments}"}}"#
        );
        let done =
            format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{item}}}"#);
        let (_, t, translator) = run(&[CREATED, &done, COMPLETED], ChatContext::default());
        let error = t.error.unwrap_or_else(|| panic!("{arguments}: no error"));
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("not a JSON object"),
            "{error}"
        );
        assert_eq!(translator.summary().outcome.as_deref(), Some("error"));

        let body = |status: &str| {
            format!(
                r#"{{"object":"response","status":"{status}","incomplete_details":{{"reason":"max_output_tokens"}},"output":[{item}]}}"#
            )
        };
        match translate_body(body("completed").as_bytes(), &ChatContext::default()) {
            Err(e @ ConvertError::InvalidUpstream(_)) => {
                assert!(e.to_string().contains("output[0] ('bash')"), "{e}")
            }
            other => panic!("{arguments}: {other:?}"),
        }
        let cut = translate_body(body("incomplete").as_bytes(), &ChatContext::default()).unwrap();
        let completion: Value = serde_json::from_slice(&cut.body).unwrap();
        let t = chat_grammar::chat_body_transcript(&completion);
        assert_eq!(t.finish_reason.as_deref(), Some("length"));
        assert!(t.tool_calls.is_empty(), "{completion}");
    }
    // Whole arguments, and none at all, are a call to run.
    for arguments in [r#"{\"command\":[\"ls\"]}"#, ""] {
        let done = format!(
            r#"{{"type":"response.output_item.done","output_index":0,"item":{{"type":"function_call","id":"fc","call_id":"call_9","name":"bash","status":"completed","arguments":"{arguments}"}}}}"#
        );
        let (_, t, _) = run(&[CREATED, &done, COMPLETED], ChatContext::default());
        assert!(t.error.is_none(), "{arguments}");
        assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    }
}
