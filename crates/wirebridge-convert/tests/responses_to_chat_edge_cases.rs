//! The edge cases of DESIGN.md, one upstream stream each.

mod common;

use serde_json::Value;
use wirebridge_convert::responses_to_chat::{translate_request, Options, ResponsesContext};
use wirebridge_testkit::{parse_sse, responses_grammar, ResponsesTranscript, SseFrame};

fn chunk(delta: &str, finish: &str) -> String {
    format!(
        r#"data: {{"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
    ) + "\n\n"
}

fn run(upstream: &str) -> (Vec<SseFrame>, ResponsesTranscript) {
    run_with(upstream, ResponsesContext::default())
}

fn run_with(upstream: &str, ctx: ResponsesContext) -> (Vec<SseFrame>, ResponsesTranscript) {
    for seed in 1..4 {
        let (out, _) = common::translate_stream(upstream.as_bytes(), ctx.clone(), seed);
        responses_grammar::check(&parse_sse(&out)).unwrap_or_else(|v| {
            panic!(
                "grammar (seed {seed}): {v}\n{}",
                String::from_utf8_lossy(&out)
            )
        });
    }
    let (out, _) = common::translate_stream(upstream.as_bytes(), ctx, 0);
    let frames = parse_sse(&out);
    let transcript = responses_grammar::check(&frames).unwrap();
    (frames, transcript)
}

fn events(frames: &[SseFrame]) -> Vec<&str> {
    frames
        .iter()
        .map(|f| f.event.as_deref().unwrap_or(""))
        .collect()
}

#[test]
fn tool_call_id_only_on_first_fragment_and_index_fallbacks() {
    // Fragments without `index`: the first carries the id, the rest are
    // matched to the most recent call.
    let upstream = chunk(
        r#"{"role":"assistant","tool_calls":[{"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]}"#,
        "null",
    ) + &chunk(
        r#"{"tool_calls":[{"function":{"arguments":"{\"x\":"}}]}"#,
        "null",
    ) + &chunk(
        r#"{"tool_calls":[{"id":"call_a","function":{"arguments":"1}"}}]}"#,
        "null",
    ) + &chunk("{}", r#""tool_calls""#)
        + "data: [DONE]\n\n";
    let (_, t) = run(&upstream);
    assert_eq!(t.function_calls.len(), 1);
    assert_eq!(t.function_calls[0].call_id, "call_a");
    assert_eq!(t.function_calls[0].arguments, r#"{"x":1}"#);
}

#[test]
fn several_calls_in_one_chunk_and_arguments_in_one_piece() {
    let upstream = chunk(
        r#"{"tool_calls":[{"index":0,"id":"c0","type":"function","function":{"name":"a","arguments":"{}"}},{"index":1,"id":"c1","type":"function","function":{"name":"b","arguments":"{\"k\":2}"}}]}"#,
        "null",
    ) + &chunk("{}", r#""tool_calls""#)
        + "data: [DONE]\n\n";
    let (_, t) = run(&upstream);
    let calls: Vec<_> = t
        .function_calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(calls, [("a", "{}"), ("b", r#"{"k":2}"#)]);
}

#[test]
fn interleaved_call_fragments_stay_whole_and_ordered() {
    let upstream = chunk(
        r#"{"tool_calls":[{"index":0,"id":"c0","function":{"name":"a","arguments":"{\"p\":"}},{"index":1,"id":"c1","function":{"name":"b","arguments":"{\"q\":"}}]}"#,
        "null",
    ) + &chunk(
        r#"{"tool_calls":[{"index":1,"function":{"arguments":"2}"}},{"index":0,"function":{"arguments":"1}"}}]}"#,
        "null",
    ) + &chunk("{}", r#""tool_calls""#);
    let (_, t) = run(&upstream);
    let calls: Vec<_> = t
        .function_calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(calls, [("a", r#"{"p":1}"#), ("b", r#"{"q":2}"#)]);
}

#[test]
fn arguments_before_the_name_and_names_repeated_empty() {
    let upstream = chunk(
        r#"{"tool_calls":[{"index":0,"id":"c0","function":{"arguments":"{\"a\""}}]}"#,
        "null",
    ) + &chunk(
        r#"{"tool_calls":[{"index":0,"function":{"name":"late","arguments":":1}"}}]}"#,
        "null",
    ) + &chunk(
        r#"{"tool_calls":[{"index":0,"function":{"name":"","arguments":""}}]}"#,
        "null",
    ) + &chunk("{}", r#""tool_calls""#)
        + "data: [DONE]\n\n";
    let (_, t) = run(&upstream);
    assert_eq!(t.function_calls[0].name, "late");
    assert_eq!(t.function_calls[0].arguments, r#"{"a":1}"#);
}

#[test]
fn a_call_that_never_gets_a_name_fails_the_response() {
    let upstream = chunk(
        r#"{"tool_calls":[{"index":0,"id":"c0","function":{"arguments":"{}"}}]}"#,
        "null",
    ) + &chunk("{}", r#""tool_calls""#)
        + "data: [DONE]\n\n";
    let (frames, t) = run(&upstream);
    assert_eq!(t.status, "failed");
    assert!(events(&frames).ends_with(&["error", "response.failed"]));
    assert!(t
        .error
        .unwrap()
        .to_string()
        .contains("never received a function name"));
}

#[test]
fn arguments_as_an_object_become_text() {
    let upstream = chunk(
        r#"{"tool_calls":[{"index":0,"id":"c0","function":{"name":"f","arguments":{"city":"Paris"}}}]}"#,
        "null",
    ) + &chunk("{}", r#""tool_calls""#);
    let (_, t) = run(&upstream);
    assert_eq!(
        serde_json::from_str::<Value>(&t.function_calls[0].arguments).unwrap()["city"],
        "Paris"
    );
}

#[test]
fn reasoning_fields_of_every_backend() {
    for field in [
        r#""reasoning_content":"think""#,
        r#""reasoning":"think""#,
        r#""reasoning":{"text":"think"}"#,
    ] {
        let upstream =
            chunk(&format!("{{{field}}}"), "null") + &chunk(r#"{"content":"ok"}"#, r#""stop""#);
        let (frames, t) = run(&upstream);
        assert_eq!(t.reasoning, "think", "{field}");
        assert_eq!(t.text, "ok");
        let ev = events(&frames);
        assert!(
            ev.contains(&"response.reasoning_text.delta"),
            "{field}: {ev:?}"
        );
    }
}

#[test]
fn usage_only_chunk_after_finish_and_done_then_eof() {
    let upstream = chunk(r#"{"role":"assistant","content":"hi"}"#, "null")
        + &chunk("{}", r#""stop""#)
        + r#"data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":0}}}"#
        + "\n\ndata: [DONE]\n\n";
    let (frames, t) = run(&upstream);
    assert_eq!(t.usage.as_ref().unwrap()["total_tokens"], 4);
    assert_eq!(
        t.usage.as_ref().unwrap()["input_tokens_details"]["cached_tokens"],
        2
    );
    assert_eq!(
        frames
            .iter()
            .filter(|f| f.event.as_deref() == Some("response.completed"))
            .count(),
        1
    );
}

#[test]
fn usage_counts_near_the_limit_saturate() {
    let huge = u64::MAX - 1;
    let usage = format!(r#""usage":{{"prompt_tokens":{huge},"completion_tokens":5}}"#);
    let upstream = chunk(r#"{"content":"hi"}"#, "null")
        + &chunk("{}", r#""stop""#).replace(
            r#""finish_reason":"stop"}]"#,
            &format!(r#""finish_reason":"stop"}}],{usage}"#),
        );
    let (_, t) = run(&upstream);
    assert_eq!(t.usage.as_ref().unwrap()["total_tokens"], u64::MAX);
    let body = format!(
        r#"{{"id":"c","choices":[{{"index":0,"message":{{"content":"hi"}},"finish_reason":"stop"}}],{usage}}}"#
    );
    let reply = wirebridge_convert::responses_to_chat::translate_body(
        body.as_bytes(),
        &ResponsesContext::default(),
    )
    .unwrap();
    let response: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(response["usage"]["total_tokens"], u64::MAX);
    assert_eq!(response["usage"]["input_tokens"], huge);
}

#[test]
fn eof_without_done_after_finish_completes() {
    let upstream = chunk(r#"{"content":"hi"}"#, "null") + &chunk("{}", r#""stop""#);
    let (_, t) = run(&upstream);
    assert_eq!(t.status, "completed");
    assert_eq!(t.text, "hi");
}

#[test]
fn eof_before_any_finish_reason_fails() {
    let upstream = chunk(r#"{"content":"partial"}"#, "null");
    let (frames, t) = run(&upstream);
    assert_eq!(t.status, "failed");
    assert_eq!(events(&frames).last(), Some(&"response.failed"));
    assert!(t.error.unwrap().to_string().contains("ended before"));
}

#[test]
fn an_empty_upstream_body_fails_with_a_complete_grammar() {
    let (frames, t) = run("");
    assert_eq!(
        events(&frames),
        [
            "response.created",
            "response.in_progress",
            "error",
            "response.failed"
        ]
    );
    assert_eq!(t.status, "failed");
}

#[test]
fn finish_reasons_map_and_odd_values_are_tolerated() {
    for (finish, status, reason) in [
        (r#""length""#, "incomplete", Some("max_output_tokens")),
        (r#""content_filter""#, "incomplete", Some("content_filter")),
        (r#""tool_calls""#, "completed", None),
        (r#""eos""#, "completed", None),
    ] {
        let upstream =
            chunk(r#"{"content":"x"}"#, r#""""#) + &chunk("{}", finish) + "data: [DONE]\n\n";
        let (_, t) = run(&upstream);
        assert_eq!(t.status, status, "{finish}");
        assert_eq!(t.incomplete_reason.as_deref(), reason, "{finish}");
    }
}

#[test]
fn role_only_and_empty_chunks_open_no_message() {
    let upstream = chunk(r#"{"role":"assistant","content":""}"#, "null")
        + &chunk(r#"{"content":null,"refusal":null}"#, "null")
        + &chunk("{}", r#""stop""#)
        + "data: [DONE]\n\n";
    let (frames, t) = run(&upstream);
    assert!(t.output.is_empty());
    assert!(!events(&frames).contains(&"response.output_item.added"));
}

#[test]
fn midstream_error_chunk_fails_with_upstream_message_and_code() {
    let upstream = chunk(r#"{"content":"par"}"#, "null")
        + r#"data: {"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded","param":null}}"#
        + "\n\n";
    let (frames, t) = run(&upstream);
    assert_eq!(t.status, "failed");
    let error_frame = frames
        .iter()
        .find(|f| f.event.as_deref() == Some("error"))
        .unwrap();
    let error: Value = serde_json::from_str(&error_frame.data).unwrap();
    assert_eq!(error["error"]["message"], "Rate limit reached");
    assert_eq!(error["error"]["code"], "rate_limit_exceeded");
    assert_eq!(error["error"]["type"], "rate_limit_error");
    assert_eq!(
        error["message"], "Rate limit reached",
        "flat copy for spec-shaped clients"
    );
}

#[test]
fn usage_beside_an_error_is_kept_in_the_failed_response() {
    let upstream = chunk(r#"{"role":"assistant","content":"par"}"#, "null")
        + r#"data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[],"error":{"message":"upstream overloaded","type":"server_error"},"usage":{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":4}}}"#
        + "\n\n";
    let (frames, t) = run(&upstream);
    assert_eq!(t.status, "failed");
    assert_eq!(t.error.unwrap()["message"], "upstream overloaded");
    assert_eq!(t.text, "par");
    let usage = t.usage.expect("the failed response keeps the usage");
    assert_eq!(usage["input_tokens"], 11);
    assert_eq!(usage["output_tokens"], 3);
    assert_eq!(usage["total_tokens"], 14);
    assert_eq!(usage["input_tokens_details"]["cached_tokens"], 4);
    let failed: Value = serde_json::from_str(&frames.last().unwrap().data).unwrap();
    assert_eq!(failed["type"], "response.failed");
    assert_eq!(failed["response"]["usage"], usage);
}

#[test]
fn invalid_json_chunk_fails() {
    let upstream = chunk(r#"{"content":"a"}"#, "null") + "data: {not json\n\n";
    let (_, t) = run(&upstream);
    assert_eq!(t.status, "failed");
    assert!(t.error.unwrap().to_string().contains("not valid JSON"));
}

#[test]
fn unknown_fields_obfuscation_and_keepalives_are_ignored() {
    let upstream = String::from(": keepalive\n\n")
        + r#"data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","obfuscation":"zz","x_new":{"a":[1]},"choices":[{"index":0,"delta":{"content":"ok","future":true},"finish_reason":null,"matched_stop":null}]}"#
        + "\n\n: ping\n\n"
        + &chunk("{}", r#""stop""#);
    let (_, t) = run(&upstream);
    assert_eq!(t.text, "ok");
}

#[test]
fn refusal_then_text_are_separate_parts() {
    let upstream = chunk(r#"{"refusal":"I can't"}"#, "null")
        + &chunk(r#"{"content":" but here"}"#, "null")
        + &chunk("{}", r#""stop""#);
    let (_, t) = run(&upstream);
    assert_eq!(t.refusal, "I can't");
    assert_eq!(t.text, " but here");
    let content = &t.output[0]["content"];
    assert_eq!(content[0]["type"], "refusal");
    assert_eq!(content[1]["type"], "output_text");
}

#[test]
fn namespaced_and_custom_tools_are_restored() {
    let request = br#"{"model":"m","input":"go","tools":[
        {"type":"namespace","name":"agents","description":"d","tools":[{"type":"function","name":"spawn","parameters":{"type":"object"}}]},
        {"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}}]}"#;
    let translated = translate_request(request, &Options::default()).unwrap();
    let chat: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_eq!(chat["tools"][0]["function"]["name"], "agents__spawn");
    assert_eq!(chat["tools"][1]["function"]["name"], "apply_patch");
    assert!(
        chat["tools"][1]["function"]["parameters"]["properties"]["input"]["description"]
            .as_str()
            .unwrap()
            .contains("start: /.+/")
    );

    let upstream = chunk(
        r#"{"tool_calls":[{"index":0,"id":"c0","function":{"name":"agents__spawn","arguments":"{}"}}]}"#,
        "null",
    ) + &chunk(
        r#"{"tool_calls":[{"index":1,"id":"c1","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n\"}"}}]}"#,
        "null",
    ) + &chunk("{}", r#""tool_calls""#);
    let (frames, t) = run_with(&upstream, translated.context);
    assert_eq!(t.output[0]["type"], "function_call");
    assert_eq!(t.output[0]["name"], "spawn");
    assert_eq!(t.output[0]["namespace"], "agents");
    assert_eq!(t.output[1]["type"], "custom_tool_call");
    assert_eq!(t.output[1]["name"], "apply_patch");
    assert_eq!(t.output[1]["input"], "*** Begin Patch\n");
    assert!(events(&frames).contains(&"response.custom_tool_call_input.done"));
}

#[test]
fn a_fragment_for_a_finished_call_fails_rather_than_corrupting() {
    let upstream = chunk(
        r#"{"tool_calls":[{"index":0,"id":"c0","function":{"name":"a","arguments":"{}"}}]}"#,
        "null",
    ) + &chunk(r#"{"content":"then text"}"#, "null")
        + &chunk(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"more"}}]}"#,
            "null",
        )
        + &chunk("{}", r#""stop""#);
    let (_, t) = run(&upstream);
    assert_eq!(t.status, "failed");
    assert!(t
        .error
        .unwrap()
        .to_string()
        .contains("after the call had ended"));
}

#[test]
fn think_tags_split_across_chunks_become_reasoning() {
    use wirebridge_convert::profile::ThinkTags;
    let ctx = ResponsesContext {
        think_tags: ThinkTags::Tags,
        ..Default::default()
    };
    let upstream = [
        "<thi",
        "nk>Let me",
        " think.</th",
        "ink>\n\nThe answer",
        " is 4 <b>.",
    ]
    .iter()
    .map(|f| {
        chunk(
            &format!(r#"{{"content":{}}}"#, serde_json::to_string(f).unwrap()),
            "null",
        )
    })
    .collect::<String>()
        + &chunk("{}", r#""stop""#);
    let (_, t) = run_with(&upstream, ctx.clone());
    assert_eq!(t.reasoning, "Let me think.");
    assert_eq!(t.text, "The answer is 4 <b>.");
    assert_eq!(t.output[0]["type"], "reasoning");
    assert_eq!(t.output[1]["type"], "message");

    // Off: the tags are content.
    let off = ResponsesContext {
        think_tags: ThinkTags::Off,
        ..Default::default()
    };
    let (_, t) = run_with(&upstream, off);
    assert!(t.text.starts_with("<think>Let me"));

    // Templates that open the tag in the prompt.
    let inside = ResponsesContext {
        think_tags: ThinkTags::StartsInside,
        ..Default::default()
    };
    let upstream = chunk(r#"{"content":"hmm</think>ok"}"#, "null") + &chunk("{}", r#""stop""#);
    let (_, t) = run_with(&upstream, inside);
    assert_eq!((t.reasoning.as_str(), t.text.as_str()), ("hmm", "ok"));
}

#[test]
fn think_tags_in_a_body() {
    use wirebridge_convert::profile::ThinkTags;
    use wirebridge_convert::responses_to_chat::translate_body;
    let ctx = ResponsesContext {
        think_tags: ThinkTags::Tags,
        ..Default::default()
    };
    let body = br#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"<think>two plus two</think>\n4"},"finish_reason":"stop"}]}"#;
    let response: Value =
        serde_json::from_slice(&translate_body(body, &ctx).unwrap().body).unwrap();
    assert_eq!(response["output"][0]["content"][0]["text"], "two plus two");
    assert_eq!(response["output"][1]["content"][0]["text"], "4");
}

#[test]
fn upstream_keepalive_comments_reach_the_client_when_nothing_else_does() {
    use wirebridge_convert::responses_to_chat::StreamTranslator;
    use wirebridge_convert::SseTranslator;

    let mut stream = SseTranslator::new(StreamTranslator::new(ResponsesContext::default()));
    let mut all = Vec::new();
    let mut feed = |stream: &mut SseTranslator<StreamTranslator>, bytes: &[u8]| {
        let mut out = wirebridge_convert::Frames::sse();
        stream.feed(bytes, &mut out);
        all.extend_from_slice(out.as_bytes());
        String::from_utf8(out.take().bytes).unwrap()
    };
    // A long prefill: the backend's comments are all there is to pass on,
    // one per read however many arrived.
    assert_eq!(feed(&mut stream, b": keepalive\n\n"), ": keepalive\n\n");
    assert_eq!(
        feed(&mut stream, b": PROCESSING\n\n: PROCESSING\n\n"),
        ": keepalive\n\n"
    );
    // Events carry their own liveness: a comment among them adds nothing.
    let text = chunk(r#"{"role":"assistant","content":"Hi"}"#, "null") + ": ping\n\n";
    let sent = feed(&mut stream, text.as_bytes());
    assert!(sent.contains("response.output_text.delta"), "{sent}");
    assert!(!sent.contains(": keepalive"), "{sent}");
    // A byte at a time completes no event and no comment: no progress.
    let before = stream.progress();
    assert_eq!(feed(&mut stream, b": tri"), "");
    assert_eq!(stream.progress(), before);
    assert_eq!(feed(&mut stream, b"ckle\n\n"), ": keepalive\n\n");
    assert_eq!(stream.progress(), before + 1);

    feed(
        &mut stream,
        (chunk("{}", r#""stop""#) + "data: [DONE]\n\n").as_bytes(),
    );
    let mut out = wirebridge_convert::Frames::sse();
    stream.finish(&mut out);
    all.extend_from_slice(out.as_bytes());
    let t = responses_grammar::check(&parse_sse(&all)).unwrap();
    assert_eq!(t.text, "Hi");
}

/// Found by the `chat_stream` fuzz target, kept as it minimized it (with
/// the context its options byte chose): a second, different finish_reason
/// turned the response `completed` after the first had closed its item as
/// `incomplete`. The first one decides.
#[test]
fn the_first_finish_reason_decides_the_status() {
    use wirebridge_convert::profile::ThinkTags;
    use wirebridge_convert::responses_to_chat::ReasoningOutput;
    let upstream = concat!(
        r#"data:{"choices":[{"delta":{"content":"\""},"finish_reason":"length"}]}"#,
        "\n\n",
        r#"data:{"choices":[{"finish_reason":"p"}]}"#,
    );
    let think = ResponsesContext {
        think_tags: ThinkTags::StartsInside,
        reasoning_output: ReasoningOutput::Summary,
        ..Default::default()
    };
    for ctx in [think, ResponsesContext::default()] {
        let (frames, t) = run_with(upstream, ctx);
        assert_eq!(events(&frames).last(), Some(&"response.incomplete"));
        assert_eq!(t.output[0]["status"], "incomplete");
    }
}

#[test]
fn an_input_whose_every_item_is_dropped_is_a_400_naming_input_not_a_missing_one() {
    let body = br#"{"model":"m","input":[{"type":"no_such_item"}]}"#;
    let err = translate_request(body, &Options::default()).unwrap_err();
    assert_eq!(err.status(), 400);
    assert_eq!(err.param(), Some("input"));
    assert_eq!(
        err.to_string(),
        "invalid request body at 'input': none of its 1 item(s) has a Chat Completions equivalent"
    );
    // An empty list is still a missing input.
    let err = translate_request(br#"{"model":"m","input":[]}"#, &Options::default()).unwrap_err();
    assert_eq!(err.to_string(), "missing required parameter: 'input'");
}
