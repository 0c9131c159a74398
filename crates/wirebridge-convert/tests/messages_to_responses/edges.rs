//! Streams of unusual shapes: items sent only whole, calls the backend ran
//! itself, failures before anything was said, long reasoning the client
//! does not see; and one translated stream kept as a golden file.

use serde_json::Value;
use wirebridge_convert::messages_to_responses::{
    MessagesContext, StreamTranslator, ThinkingDisplay,
};
use wirebridge_testkit::{messages_grammar, parse_sse, MessagesTranscript};

use crate::common::{assert_golden, drive, redacted_sse, sse};

fn ctx(thinking: ThinkingDisplay, declared: Option<&[&str]>) -> MessagesContext {
    MessagesContext {
        model: "claude-sonnet-4-5".into(),
        stream: true,
        thinking,
        declared_tools: declared.map(|d| d.iter().map(|s| s.to_string()).collect()),
        count_thinking: false,
        thread: None,
        diagnostics: None,
        compacted_at: None,
    }
}

fn run(events: &[&str], ctx: MessagesContext) -> (Vec<u8>, MessagesTranscript, StreamTranslator) {
    let (out, translator) = drive(StreamTranslator::new(ctx), &sse(events), 41);
    let t = messages_grammar::check(&parse_sse(&out))
        .unwrap_or_else(|v| panic!("{v}\n{}", String::from_utf8_lossy(&out)));
    (out, t, translator)
}

const CREATED: &str = r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_up","object":"response","created_at":1,"status":"in_progress","model":"gpt-5.1","output":[]}}"#;

/// Reasoning in two summary parts, a short answer, then a call: the
/// Messages stream a client gets, reviewed by eye.
#[test]
fn reasoning_text_and_a_call_golden() {
    let events = [
        CREATED,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}"#,
        r#"{"type":"response.reasoning_summary_part.added","output_index":0,"item_id":"rs_1","summary_index":0,"part":{"type":"summary_text","text":""}}"#,
        r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"item_id":"rs_1","summary_index":0,"delta":"**Checking the weather**"}"#,
        r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"item_id":"rs_1","summary_index":1,"delta":"Paris, so call the tool."}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"**Checking the weather**"},{"type":"summary_text","text":"Paris, so call the tool."}],"encrypted_content":"gAAAAB-carrier"}}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.output_text.delta","output_index":1,"item_id":"msg_1","content_index":0,"delta":"Let me check.","logprobs":[]}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Let me check.","annotations":[]}]}}"#,
        r#"{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":""}}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":2,"item_id":"fc_1","delta":"{\"city\":"}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":2,"item_id":"fc_1","delta":"\"Paris\"}"}"#,
        r#"{"type":"response.function_call_arguments.done","output_index":2,"item_id":"fc_1","arguments":"{\"city\":\"Paris\"}"}"#,
        r#"{"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}}"#,
        r#"{"type":"response.completed","response":{"id":"resp_up","status":"completed","model":"gpt-5.1","output":[],"usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":100},"output_tokens":40,"output_tokens_details":{"reasoning_tokens":25},"total_tokens":160}}}"#,
    ];
    let (out, t, translator) = run(
        &events,
        ctx(ThinkingDisplay::Summarized, Some(&["get_weather"])),
    );
    assert_golden(
        "messages-reasoning-text-call.messages-stream.sse",
        &redacted_sse(&out, translator.id()),
    );
    assert_eq!(
        t.thinking[0].thinking,
        "**Checking the weather**\n\nParis, so call the tool."
    );
    // The same reply for a client that asked for a body.
    let body = wirebridge_convert::messages_to_responses::translate_stream_body(
        &sse(&events),
        &ctx(ThinkingDisplay::Summarized, Some(&["get_weather"])),
    )
    .unwrap();
    let mut body: Value = serde_json::from_slice(&body.body).unwrap();
    body["id"] = Value::from("<id>");
    assert_golden(
        "messages-reasoning-text-call.message.json",
        &(serde_json::to_string_pretty(&body).unwrap() + "\n"),
    );
    assert_eq!(
        messages_grammar::messages_body_transcript(&body).blocks,
        t.blocks
    );
    // And cut short after the text: the text stays, then the error.
    let (out, cut, translator) = run(&events[..9], ctx(ThinkingDisplay::Summarized, None));
    assert_golden(
        "messages-cut-after-text.messages-stream.sse",
        &redacted_sse(&out, translator.id()),
    );
    assert_eq!(cut.text, "Let me check.");
    assert!(cut.error.is_some());
    assert_eq!(t.thinking[0].signature, "gAAAAB-carrier");
    assert_eq!(t.text, "Let me check.");
    assert_eq!(t.tool_calls[0].arguments, r#"{"city":"Paris"}"#);
    assert_eq!(t.stop_reason.as_deref(), Some("tool_use"));
    let usage = t.usage.unwrap();
    assert_eq!(usage["input_tokens"], 20);
    assert_eq!(usage["cache_read_input_tokens"], 100);
    assert_eq!(usage["output_tokens"], 40);
    assert_eq!(t.model, "gpt-5.1");
}

#[test]
fn items_sent_only_whole_are_sent_whole() {
    let events = [
        CREATED,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"Think."}]}}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"A"},{"type":"output_text","text":"B"}]}}"#,
        r#"{"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","id":"fc","call_id":"c","name":"f","arguments":{"x":1}}}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ];
    let (_, t, _) = run(&events, ctx(ThinkingDisplay::Summarized, None));
    assert_eq!(t.thinking[0].thinking, "Think.");
    assert_eq!(t.thinking[0].signature, "");
    assert_eq!(t.text, "AB");
    assert_eq!(t.tool_calls[0].arguments, r#"{"x":1}"#);
    assert_eq!(t.blocks.len(), 4);
    // No usage reported: zeros, not a missing field.
    assert_eq!(t.usage.unwrap()["output_tokens"], 0);
}

/// An upstream that sends neither `response.created` nor any delta, only
/// a complete item: the message starts before the item's block, whatever
/// the item is.
#[test]
fn a_whole_item_first_opens_the_message() {
    let done = r#"{"type":"response.completed","response":{"status":"completed"}}"#;
    for item in [
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"A"}]}}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Think."}]}}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"c","name":"f","arguments":"{}"}}"#,
    ] {
        let (out, t, _) = run(&[item, done], ctx(ThinkingDisplay::Summarized, None));
        let frames = parse_sse(&out);
        assert_eq!(frames[0].event.as_deref(), Some("message_start"), "{item}");
        assert_eq!(t.blocks.len(), 1, "{item}");
    }
}

#[test]
fn calls_the_backend_ran_itself_are_left_out_and_reported() {
    let events = [
        CREATED,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"web_search_call","id":"ws_1","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"web_search_call","id":"ws_1","status":"completed"}}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc","call_id":"c1","name":"search","arguments":""}}"#,
        r#"{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{}"}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc","call_id":"c1","name":"search","arguments":"{}"}}"#,
        r#"{"type":"response.output_text.delta","output_index":2,"content_index":0,"delta":"Done."}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ];
    let (_, t, translator) = run(&events, ctx(ThinkingDisplay::Off, Some(&["get_weather"])));
    assert!(t.tool_calls.is_empty());
    assert_eq!(t.text, "Done.");
    assert_eq!(t.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(translator.losses().paths(), "output[0], output[1]");
    assert!(translator.summary().tool_calls.is_empty());
}

#[test]
fn failures_before_anything_was_said() {
    let (out, t, translator) = run(
        &[
            r#"{"type":"error","error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Too long"}}"#,
        ],
        ctx(ThinkingDisplay::Off, None),
    );
    assert_eq!(t.error.unwrap()["type"], "invalid_request_error");
    assert_eq!(parse_sse(&out).len(), 1, "only the error");
    assert_eq!(translator.summary().outcome.as_deref(), Some("error"));

    let (_, t, _) = run(&[CREATED, "{not json"], ctx(ThinkingDisplay::Off, None));
    assert!(t.error.unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("not valid JSON"));
    let (_, t, _) = run(&[], ctx(ThinkingDisplay::Off, None));
    assert!(t.error.is_some());
}

#[test]
fn a_block_cut_short_stays_as_the_client_got_it() {
    let (out, t, _) = run(
        &[
            CREATED,
            r#"{"type":"response.reasoning_text.delta","output_index":0,"content_index":0,"delta":"Hmm"}"#,
        ],
        ctx(ThinkingDisplay::Summarized, None),
    );
    assert_eq!(t.thinking[0].thinking, "Hmm");
    let kinds: Vec<String> = parse_sse(&out)
        .iter()
        .map(|f| {
            let v: Value = serde_json::from_str(&f.data).unwrap();
            v["delta"]["type"]
                .as_str()
                .unwrap_or(v["type"].as_str().unwrap())
                .to_owned()
        })
        .collect();
    assert_eq!(kinds[kinds.len() - 2..], ["thinking_delta", "error"]);

    // A call cut short is not made to look finished.
    let (_, t, translator) = run(
        &[
            CREATED,
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":"f","arguments":""}}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"a\":"}"#,
        ],
        ctx(ThinkingDisplay::Off, None),
    );
    assert_eq!(t.blocks[0]["partial_json"], r#"{"a":"#);
    assert!(t.error.is_some());
    assert_eq!(translator.summary().outcome.as_deref(), Some("error"));
}

/// A finished call whose arguments are no JSON object fails the stream, as
/// the body does, whether its item was reported done or not; one the
/// backend cut short (max_tokens) stays as it is.
#[test]
fn a_call_with_broken_arguments_fails_unless_cut_short() {
    let call = |status: &str, done: bool| {
        let mut events = vec![
            CREATED.to_owned(),
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":"f","arguments":""}}"#.to_owned(),
            r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"a\":"}"#.to_owned(),
        ];
        if done {
            events.push(format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{{"type":"function_call","call_id":"c","name":"f","status":"{status}","arguments":"{{\"a\":"}}}}"#));
        }
        events.push(format!(r#"{{"type":"response.{status}","response":{{"status":"{status}","incomplete_details":{{"reason":"max_output_tokens"}}}}}}"#));
        events
    };
    for (status, done) in [
        ("completed", true),
        ("completed", false),
        ("incomplete", true),
        ("incomplete", false),
    ] {
        let events = call(status, done);
        let events: Vec<&str> = events.iter().map(String::as_str).collect();
        let (_, t, _) = run(&events, ctx(ThinkingDisplay::Off, None));
        match status {
            "completed" => {
                let error = t
                    .error
                    .unwrap_or_else(|| panic!("{status} {done}: no error"));
                assert!(error["message"]
                    .as_str()
                    .unwrap()
                    .contains("not a JSON object"));
            }
            _ => {
                assert_eq!(t.stop_reason.as_deref(), Some("max_tokens"), "{done}");
                assert!(t.error.is_none());
            }
        }
    }
}

/// A call whose block closes because the next item's block opens, its own
/// item never reported done, is finished as well: arguments that are no
/// JSON object fail the stream before the next block, whatever that block
/// is; whole arguments let it through.
#[test]
fn a_call_closed_by_the_next_item_is_finished() {
    let next_items = [
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","call_id":"c2","name":"g","arguments":"{}"}}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"c2","name":"g","arguments":""}}"#,
        r#"{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"Done."}"#,
        r#"{"type":"response.reasoning_summary_text.delta","output_index":1,"summary_index":0,"delta":"Hm."}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"reasoning","summary":[{"type":"summary_text","text":"Hm."}]}}"#,
    ];
    for next in next_items {
        for (arguments, whole) in [(r#"{\"a\":"#, false), (r#"{\"a\":1}"#, true)] {
            let delta = format!(
                r#"{{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{arguments}"}}"#
            );
            let events = [
                CREATED,
                r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":"f","arguments":""}}"#,
                &delta,
                next,
                r#"{"type":"response.completed","response":{"status":"completed"}}"#,
            ];
            let (_, t, _) = run(&events, ctx(ThinkingDisplay::Summarized, None));
            if whole {
                assert!(t.error.is_none(), "{next}");
                assert_eq!(t.blocks.len(), 2, "{next}");
            } else {
                let error = t.error.unwrap_or_else(|| panic!("{next}: no error"));
                assert!(
                    error["message"]
                        .as_str()
                        .unwrap()
                        .contains("not a JSON object"),
                    "{next}: {error}"
                );
                assert_eq!(t.blocks.len(), 1, "{next}");
            }
        }
    }
}

#[test]
fn reasoning_the_client_does_not_see_keeps_the_stream_alive() {
    let mut events = vec![CREATED.to_owned()];
    for _ in 0..200 {
        events.push(r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"x"}"#.to_owned());
    }
    events.push(
        r#"{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"Hi"}"#
            .to_owned(),
    );
    events.push(r#"{"type":"response.completed","response":{"status":"completed"}}"#.to_owned());
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    let (out, t, _) = run(&events, ctx(ThinkingDisplay::Off, None));
    assert_eq!(t.text, "Hi");
    let pings = parse_sse(&out)
        .iter()
        .filter(|f| f.event.as_deref() == Some("ping"))
        .count();
    // One every 64 silent events, and the one after the first block opens.
    assert_eq!(pings, 200 / 64 + 1);
}

#[test]
fn omitted_thinking_carries_only_the_signature() {
    let events = [
        CREATED,
        r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"secret"}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"secret"}],"encrypted_content":"carrier"}}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ];
    let (out, t, _) = run(&events, ctx(ThinkingDisplay::Omitted, None));
    assert_eq!(t.thinking[0].thinking, "");
    assert_eq!(t.thinking[0].signature, "carrier");
    assert!(!String::from_utf8(out).unwrap().contains("secret"));
}

/// What a client got back goes back as the next turn's history: the
/// thinking block's signature becomes the reasoning's carrier again, byte
/// for byte, and the tool_use id the call id.
#[test]
fn a_reply_sent_back_is_the_same_reasoning_and_call() {
    use wirebridge_convert::messages_to_responses::{translate_request, Options};
    let events = [
        CREATED,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_9","summary":[{"type":"summary_text","text":"Use the tool."}],"encrypted_content":"gAAAAB\/carrier+=="}}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc","call_id":"call_7","name":"f","arguments":"{\"a\": [1, \"\u00e9\"]}"}}"#,
        r#"{"type":"response.completed","response":{"status":"completed"}}"#,
    ];
    let (_, t, _) = run(&events, ctx(ThinkingDisplay::Summarized, None));
    let request = serde_json::json!({
        "model": "m", "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "Go."},
            {"role": "assistant", "content": t.blocks},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_7", "content": "ok"}]},
        ],
    });
    let translated =
        translate_request(&serde_json::to_vec(&request).unwrap(), &Options::default()).unwrap();
    let body: Value = serde_json::from_slice(&translated.body).unwrap();
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[1]["type"], "reasoning");
    assert_eq!(input[1]["encrypted_content"], "gAAAAB/carrier+==");
    assert_eq!(input[1]["summary"][0]["text"], "Use the tool.");
    assert_eq!(input[2]["call_id"], "call_7");
    let arguments: Value = serde_json::from_str(input[2]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, serde_json::json!({"a": [1, "é"]}));
    assert_eq!(input[3]["call_id"], "call_7");
    assert!(translated.losses.is_empty(), "{:?}", translated.losses);
}

/// Whatever the backend sends, the client gets a stream in the Messages
/// grammar: recorded streams with random bytes changed never make the
/// translator panic, hang or break the grammar.
#[test]
fn mutated_streams_still_follow_the_grammar() {
    use wirebridge_testkit::fixtures;
    use wirebridge_testkit::mutate::{edit, Rng};
    let streams: Vec<_> = fixtures::responses_streams()
        .into_iter()
        .filter(|s| s.name.contains("tool-call") || s.name.contains("encrypted-content.1"))
        .collect();
    assert!(!streams.is_empty());
    let alphabet = b"{}[]\":,\\ 0123456789eltrsaiondx\n";
    let mut rng = Rng(0x5eed_f00d_u64);
    for stream in &streams {
        for round in 0..150 {
            let edits = 1 + rng.below(4);
            let bytes = edit(&stream.sse, alphabet, edits, &mut rng);
            for display in [ThinkingDisplay::Summarized, ThinkingDisplay::Omitted] {
                let (out, _) = drive(StreamTranslator::new(ctx(display, None)), &bytes, round);
                if let Err(v) = messages_grammar::check(&parse_sse(&out)) {
                    panic!(
                        "{} round {round}: {v}\n{}",
                        stream.name,
                        String::from_utf8_lossy(&out)
                    );
                }
            }
        }
    }
}

/// A call item that ended `incomplete` in a response that completed: the
/// stop reason is not the terminal event's alone. Streamed, the block stays
/// as it was sent and the message stops for `max_tokens`; as a body (read
/// whole, or folded from the same stream), the call is left out and
/// reported, and the message stops for `max_tokens` too: never `tool_use`,
/// whose input a client would run.
#[test]
fn a_call_left_unfinished_is_no_tool_use_whatever_the_terminal_event_says() {
    use wirebridge_convert::messages_to_responses::{translate_body, translate_stream_body};

    let cut = r#"{"type":"function_call","id":"fc_1","call_id":"c","name":"bash","status":"incomplete","arguments":"{\"command\":[\"ls\""}"#;
    for whole_arguments in [false, true] {
        let cut = match whole_arguments {
            // Whole arguments in an unfinished item are unfinished too.
            true => cut.replace(r#"[\"ls\""#, r#"[\"ls\"]}"#),
            false => cut.to_owned(),
        };
        let added = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"c","name":"bash","status":"in_progress","arguments":""}}"#;
        let delta = r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"command\":[\"ls\""}"#;
        let done =
            format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{cut}}}"#);
        let completed = format!(
            r#"{{"type":"response.completed","response":{{"id":"resp_up","object":"response","status":"completed","output":[{cut}],"usage":{{"input_tokens":5,"output_tokens":4}}}}}}"#
        );
        let events = [CREATED, added, delta, &done, &completed];
        let (_, t, translator) = run(&events, ctx(ThinkingDisplay::Off, None));
        assert_eq!(t.stop_reason.as_deref(), Some("max_tokens"));
        assert!(t.error.is_none());
        assert_eq!(t.blocks[0]["type"], "tool_use", "what was sent stays");
        assert!(translator.summary().tool_calls.is_empty());

        let body = format!(
            r#"{{"id":"resp_up","object":"response","status":"completed","model":"m","output":[{cut}],"usage":{{"input_tokens":5,"output_tokens":4}}}}"#
        );
        let folded =
            translate_stream_body(&sse(&events), &ctx(ThinkingDisplay::Off, None)).unwrap();
        let whole = translate_body(body.as_bytes(), &ctx(ThinkingDisplay::Off, None)).unwrap();
        for reply in [folded, whole] {
            let message: Value = serde_json::from_slice(&reply.body).unwrap();
            let t = messages_grammar::messages_body_transcript(&message);
            assert_eq!(t.stop_reason.as_deref(), Some("max_tokens"), "{message}");
            assert!(t.tool_calls.is_empty(), "{message}");
            assert!(reply.summary.tool_calls.is_empty());
            assert!(
                reply.losses.iter().any(|l| l.path == "output[0]"),
                "{:?}",
                reply.losses
            );
        }
    }
}
