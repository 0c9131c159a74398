//! Every recorded Responses stream (OpenAI, Azure, GitHub Copilot, llama.cpp's
//! server), re-sent by the translator for backends that keep no state: the
//! strict grammar checker passes on the output, and what the client reads
//! (text, reasoning, calls, usage, outcome) is what the backend wrote,
//! however the upstream bytes are split.

mod common;

use common::{drive, sse};
use serde_json::Value;
use wirebridge_convert::ids::ResponseIds;
use wirebridge_convert::responses_to_responses::{
    translate_body, translate_stream_body, NativeContext, StreamTranslator,
};
use wirebridge_testkit::{fixtures, parse_sse, responses_grammar, ResponsesTranscript};

fn calls(t: &ResponsesTranscript) -> Vec<(String, String, String)> {
    t.function_calls
        .iter()
        .map(|c| (c.name.clone(), c.call_id.clone(), c.arguments.clone()))
        .collect()
}

#[test]
fn every_recorded_responses_stream_is_re_sent_in_the_grammar() {
    let streams = fixtures::responses_streams();
    assert!(
        streams.iter().any(|s| s.name.contains("llama-server")),
        "the llama.cpp server's recording is among the streams"
    );
    for stream in streams {
        // Its deltas were trimmed before it was published: its done texts
        // do not match them, and passing it on keeps that.
        if stream.name.contains("openai-phase") {
            continue;
        }
        let expected = responses_grammar::transcript_of_recorded(&stream.frames());
        for seed in [0, 1, 7, u64::MAX] {
            let (out, translator) = drive(
                StreamTranslator::new(NativeContext::default()),
                &stream.sse,
                seed,
            );
            let frames = parse_sse(&out);
            let actual = responses_grammar::check(&frames).unwrap_or_else(|v| {
                panic!("{} (seed {seed}): grammar violation: {v}", stream.name)
            });
            let name = &stream.name;
            assert_eq!(actual.response_id, translator.response_id(), "{name}");
            assert_eq!(actual.text, expected.text, "{name}: text");
            assert_eq!(actual.refusal, expected.refusal, "{name}: refusal");
            assert_eq!(actual.reasoning, expected.reasoning, "{name}: reasoning");
            assert_eq!(calls(&actual), calls(&expected), "{name}: calls");
            assert_eq!(actual.status, expected.status, "{name}: status");
            for key in ["input_tokens", "output_tokens", "total_tokens"] {
                assert_eq!(
                    actual.usage.as_ref().map(|u| &u[key]),
                    expected.usage.as_ref().map(|u| &u[key]),
                    "{name}: {key}"
                );
            }
            // Every item is the bridge's, and names the response.
            for item in &actual.output {
                let id = item["id"].as_str().unwrap();
                assert_eq!(
                    ResponseIds::response_of(id).as_deref(),
                    Some(translator.response_id()),
                    "{name}: {id}"
                );
            }
            let finished = translator.finished().expect("finished");
            assert_eq!(finished.output.len(), actual.output.len(), "{name}");
        }
    }
}

#[test]
fn reasoning_text_is_shown_as_a_summary_when_asked() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs","summary":[],"content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"rs","output_index":0,"content_index":0,"part":{"type":"reasoning_text","text":""}}"#,
        r#"{"type":"response.reasoning_text.delta","item_id":"rs","output_index":0,"content_index":0,"delta":"Think"}"#,
        r#"{"type":"response.reasoning_text.delta","item_id":"rs","output_index":0,"content_index":0,"delta":"ing."}"#,
        r#"{"type":"response.reasoning_text.done","item_id":"rs","output_index":0,"content_index":0,"text":"Thinking."}"#,
        r#"{"type":"response.content_part.done","item_id":"rs","output_index":0,"content_index":0,"part":{"type":"reasoning_text","text":"Thinking."}}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs","summary":[],"content":[{"type":"reasoning_text","text":"Thinking."}]}}"#,
        r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","output_index":1,"content_index":0,"delta":"Yes."}"#,
        r#"{"type":"response.output_text.done","item_id":"m","output_index":1,"content_index":0,"text":"Yes."}"#,
        r#"{"type":"response.content_part.done","item_id":"m","output_index":1,"content_index":0,"part":{"type":"output_text","text":"Yes.","annotations":[]}}"#,
        r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Yes.","annotations":[]}]}}"#,
        r#"{"type":"response.completed","response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7,"output_tokens_details":{"reasoning_tokens":2}}}}"#,
    ]);
    let ctx = NativeContext {
        summary: true,
        ..NativeContext::default()
    };
    let (out, translator) = drive(StreamTranslator::new(ctx), &upstream, 3);
    let frames = parse_sse(&out);
    let transcript = responses_grammar::check(&frames).expect("grammar");
    assert_eq!(transcript.reasoning, "Thinking.");
    assert_eq!(transcript.text, "Yes.");
    let kinds: Vec<&str> = frames.iter().filter_map(|f| f.event.as_deref()).collect();
    assert!(kinds.contains(&"response.reasoning_summary_text.delta"));
    assert!(!kinds
        .iter()
        .any(|k| k.starts_with("response.reasoning_text")));
    assert_eq!(
        transcript.output[0]["summary"],
        serde_json::json!([{"type":"summary_text","text":"Thinking."}])
    );
    assert!(transcript.output[0].get("content").is_none());
    assert_eq!(translator.summary().usage.unwrap().reasoning, 2);
}

#[test]
fn every_recorded_responses_body_is_re_sent() {
    for (name, body) in fixtures::responses_bodies() {
        let upstream: Value = serde_json::from_slice(&body).unwrap();
        let ctx = NativeContext::default();
        let reply = translate_body(&body, &ctx).unwrap_or_else(|e| panic!("{name}: {e}"));
        let out: Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(out["id"], ctx.ids.response(), "{name}");
        assert_eq!(out["status"], upstream["status"], "{name}");
        let items = |v: &Value| v["output"].as_array().map(Vec::len);
        assert_eq!(items(&out), items(&upstream), "{name}");
        for (ours, theirs) in out["output"]
            .as_array()
            .unwrap()
            .iter()
            .zip(upstream["output"].as_array().unwrap())
        {
            let mut theirs = theirs.clone();
            theirs["id"] = ours["id"].clone();
            assert_eq!(ours, &theirs, "{name}: only the id differs");
        }
        assert_eq!(
            out["usage"]["total_tokens"], upstream["usage"]["total_tokens"],
            "{name}"
        );
        let transcript = responses_grammar::responses_body_transcript(&out);
        assert_eq!(
            transcript.status,
            upstream["status"].as_str().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn a_stream_for_a_client_that_asked_for_a_body_becomes_one() {
    let stream = fixtures::responses_streams()
        .into_iter()
        .find(|s| s.name.contains("llama-server"))
        .unwrap();
    let expected = responses_grammar::transcript_of_recorded(&stream.frames());
    let reply = translate_stream_body(&stream.sse, &NativeContext::default()).unwrap();
    let body: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(
        body["output"][0]["content"][0]["text"],
        expected.text.as_str()
    );
    assert_eq!(reply.finished().output.len(), 1);
}

mod sealing {
    use std::sync::Arc;

    use serde_json::{json, Value};
    use wirebridge_convert::responses_to_chat::{History, Options, ParsedRequest, Seal};
    use wirebridge_convert::responses_to_responses::{translate_body, translate_request};
    use wirebridge_convert::seal::{SealKey, Sealer};

    fn options(sealer: &Arc<Sealer>, tenant: &str) -> Options {
        Options {
            seal: Some(Seal {
                sealer: Arc::clone(sealer),
                scope: tenant.into(),
            }),
            ..Options::default()
        }
    }

    /// A reply whose reasoning a backend gave as text only.
    const REPLY: &str = r#"{"id":"up","object":"response","status":"completed","model":"m","output":[
        {"type":"reasoning","id":"r","summary":[],"content":[{"type":"reasoning_text","text":"Check the \"cache\" first."}]},
        {"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Done.","annotations":[]}]}]}"#;

    fn answer(sealer: &Arc<Sealer>, tenant: &str, include: bool) -> Value {
        let body = match include {
            true => {
                json!({"model": "m", "input": "Go.", "include": ["reasoning.encrypted_content"]})
            }
            false => json!({"model": "m", "input": "Go."}),
        }
        .to_string();
        let parsed = ParsedRequest::parse(body.as_bytes()).unwrap();
        let translated =
            translate_request(parsed, &History::default(), &options(sealer, tenant)).unwrap();
        let reply = translate_body(REPLY.as_bytes(), &translated.context).unwrap();
        serde_json::from_slice(&reply.body).unwrap()
    }

    fn sent_back(sealer: &Arc<Sealer>, tenant: &str, reasoning: &Value) -> (Value, usize) {
        let body =
            json!({"model": "m", "input": [reasoning, {"role": "user", "content": "Next."}]})
                .to_string();
        let parsed = ParsedRequest::parse(body.as_bytes()).unwrap();
        let translated =
            translate_request(parsed, &History::default(), &options(sealer, tenant)).unwrap();
        let upstream: Value = serde_json::from_slice(&translated.body).unwrap();
        (
            upstream["input"][0].clone(),
            translated.losses.iter().count(),
        )
    }

    #[test]
    fn reasoning_is_sealed_for_the_client_and_opened_for_the_backend() {
        let sealer = Arc::new(Sealer::new(SealKey::generate(), Vec::new()));
        let reply = answer(&sealer, "tenant-a", true);
        let reasoning = &reply["output"][0];
        let sealed = reasoning["encrypted_content"].as_str().unwrap();
        assert!(sealed.starts_with("wbs1."), "{reasoning}");
        assert!(!sealed.contains("cache"), "sealed, not copied");

        let (opened, losses) = sent_back(&sealer, "tenant-a", reasoning);
        assert!(opened.get("encrypted_content").is_none(), "{opened}");
        assert_eq!(opened["content"][0]["type"], "reasoning_text");
        assert_eq!(opened["content"][0]["text"], "Check the \"cache\" first.");
        assert_eq!(losses, 0);

        // Another tenant's request cannot open it: left out, and reported.
        let (foreign, losses) = sent_back(&sealer, "tenant-b", reasoning);
        assert!(foreign.get("encrypted_content").is_none(), "{foreign}");
        assert_eq!(losses, 1);
    }

    #[test]
    fn nothing_is_sealed_unless_asked_and_foreign_carriers_pass() {
        let sealer = Arc::new(Sealer::new(SealKey::generate(), Vec::new()));
        let reply = answer(&sealer, "t", false);
        assert!(reply["output"][0].get("encrypted_content").is_none());
        let theirs = json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-backend"});
        let (kept, losses) = sent_back(&sealer, "t", &theirs);
        assert_eq!(kept["encrypted_content"], "gAAAA-backend");
        assert_eq!(losses, 0);
    }
}

#[test]
fn lifecycle_events_are_read_whatever_their_field_order() {
    // Servers write `type` first, and the translator reads such an event
    // in one pass with its response; any other order is read the long
    // way, to the same result.
    let completed = r#"{"id":"x","status":"completed","model":"served-model","created_at":1700000000,"output":[{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi","annotations":[]}]}],"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}"#;
    // The message is streamed, and finished by the final response.
    let message = [
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"Hi"}"#,
    ];
    let type_first = [
        r#"{"type":"response.created","response":{"id":"x","status":"in_progress","created_at":1700000000}}"#.to_owned(),
        format!(r#"{{"type":"response.completed","response":{completed}}}"#),
    ];
    let type_last = [
        r#"{"response":{"id":"x","status":"in_progress","created_at":1700000000},"type":"response.created"}"#.to_owned(),
        format!(r#"{{"response":{completed},"sequence_number":1,"type":"response.completed"}}"#),
    ];
    let mut transcripts = Vec::new();
    for [created, completed] in [type_first, type_last] {
        let mut events = vec![created.as_str()];
        events.extend(message);
        events.push(&completed);
        let (out, _) = drive(
            StreamTranslator::new(NativeContext::default()),
            &sse(&events),
            0,
        );
        let frames = parse_sse(&out);
        let t = responses_grammar::check(&frames).expect("grammar");
        assert_eq!(t.status, "completed");
        assert_eq!(t.text, "Hi");
        assert_eq!(t.usage.as_ref().unwrap()["total_tokens"], 4);
        let last: Value = serde_json::from_str(&frames.last().unwrap().data).unwrap();
        assert_eq!(last["response"]["model"], "served-model");
        assert_eq!(last["response"]["created_at"], 1_700_000_000);
        transcripts.push((t.text.clone(), t.output.clone(), t.usage.clone()));
    }
    assert_eq!(transcripts[0].2, transcripts[1].2);
    assert_eq!(transcripts[0].1.len(), transcripts[1].1.len());
}

#[test]
fn a_progress_event_after_the_start_is_not_read() {
    // The bridge writes its own `response.in_progress`: the backend's,
    // once the response has begun, is neither read nor passed on, so one
    // that is cut short costs nothing.
    let events = [
        r#"{"type":"response.created","response":{"id":"x","status":"in_progress"}}"#,
        r#"{"type":"response.in_progress","response":{"id":"x","status":"in_pro"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"Hi"}"#,
        r#"{"type":"response.output_item.done","item":{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi","annotations":[]}]}}"#,
        r#"{"type":"response.completed","response":{"id":"x","status":"completed","output":[]}}"#,
    ];
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &sse(&events),
        0,
    );
    let frames = parse_sse(&out);
    let t = responses_grammar::check(&frames).expect("grammar");
    assert_eq!(t.status, "completed");
    let progress = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("response.in_progress"))
        .count();
    assert_eq!(progress, 1);
}

/// What the client reads of one item a backend sent whole: as
/// `response.output_item.done` only, or only listed in its final response.
fn whole_item(item: &str, listed_only: bool, summary: bool) -> ResponsesTranscript {
    let created = r#"{"type":"response.created","response":{"id":"x","status":"in_progress"}}"#;
    let done = format!(r#"{{"type":"response.output_item.done","item":{item}}}"#);
    let completed = format!(
        r#"{{"type":"response.completed","response":{{"id":"x","status":"completed","output":[{item}]}}}}"#
    );
    let mut events = vec![created];
    if !listed_only {
        events.push(&done);
    }
    events.push(&completed);
    let ctx = NativeContext {
        summary,
        ..NativeContext::default()
    };
    let (out, _) = drive(StreamTranslator::new(ctx), &sse(&events), 0);
    responses_grammar::check(&parse_sse(&out))
        .unwrap_or_else(|v| panic!("{item} (listed only: {listed_only}, summary: {summary}): {v}"))
}

#[test]
fn an_item_sent_whole_is_streamed_by_the_bridge() {
    // The grammar wants an item's content streamed before the item is
    // done; a backend that sends it whole leaves that to the bridge.
    let call = r#"{"type":"function_call","id":"f","call_id":"c","name":"get","arguments":"{\"a\":1}","status":"completed"}"#;
    let custom = r#"{"type":"custom_tool_call","id":"f","call_id":"c","name":"run","input":"ls -a","status":"completed"}"#;
    let message = r#"{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Line\nnext","annotations":[{"type":"url_citation","url":"https://example.com","title":"t","start_index":0,"end_index":4}]},{"type":"refusal","refusal":"No."}]}"#;
    let reasoning = r#"{"type":"reasoning","id":"r","summary":[{"type":"summary_text","text":"Short."}],"content":[{"type":"reasoning_text","text":"Long thought."}]}"#;
    let unsummarized = r#"{"type":"reasoning","id":"r","summary":[],"content":[{"type":"reasoning_text","text":"Long thought."}]}"#;
    for listed_only in [false, true] {
        for summary in [false, true] {
            let t = whole_item(call, listed_only, summary);
            assert_eq!(calls(&t), [("get".into(), "c".into(), r#"{"a":1}"#.into())]);
            let t = whole_item(custom, listed_only, summary);
            assert_eq!(t.output[0]["input"], "ls -a");

            let t = whole_item(message, listed_only, summary);
            assert_eq!(t.text, "Line\nnext");
            assert_eq!(t.refusal, "No.");
            let annotations = &t.output[0]["content"][0]["annotations"];
            assert_eq!(annotations[0]["url"], "https://example.com");

            // Shown as a summary, an item's own summary is what the client
            // reads; otherwise both, as the backend wrote them.
            let t = whole_item(reasoning, listed_only, summary);
            let expected = if summary {
                "Short."
            } else {
                "Short.Long thought."
            };
            assert_eq!(t.reasoning, expected, "summary: {summary}");
            let t = whole_item(unsummarized, listed_only, summary);
            assert_eq!(t.reasoning, "Long thought.");
        }
    }
}

#[test]
fn an_item_partly_streamed_is_not_streamed_again() {
    // The backend streamed the text: the bridge only closes what is open.
    let events = [
        r#"{"type":"response.created","response":{"id":"x","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"Once"}"#,
        r#"{"type":"response.output_item.done","item":{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Once","annotations":[]}]}}"#,
        r#"{"type":"response.completed","response":{"id":"x","status":"completed","output":[]}}"#,
    ];
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &sse(&events),
        0,
    );
    let frames = parse_sse(&out);
    let t = responses_grammar::check(&frames).expect("grammar");
    assert_eq!(t.text, "Once");
    let deltas = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("response.output_text.delta"))
        .count();
    assert_eq!(deltas, 1);
}

/// The transcript of a reasoning item streamed by `events` (its content
/// events, between its added and done events), with reasoning shown as a
/// summary, over several splits of the bytes.
fn summarized(events: &[&str], done_item: &str) -> ResponsesTranscript {
    let created = r#"{"type":"response.created","response":{"id":"x","status":"in_progress"}}"#;
    let added = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs","summary":[],"content":[]}}"#;
    let done =
        format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{done_item}}}"#);
    let completed =
        r#"{"type":"response.completed","response":{"id":"x","status":"completed","output":[]}}"#;
    let mut all = vec![created, added];
    all.extend_from_slice(events);
    all.push(&done);
    all.push(completed);
    let ctx = NativeContext {
        summary: true,
        ..NativeContext::default()
    };
    let mut seen = None;
    for seed in [0, 1, 5] {
        let (out, _) = drive(StreamTranslator::new(ctx.clone()), &sse(&all), seed);
        let t = responses_grammar::check(&parse_sse(&out))
            .unwrap_or_else(|v| panic!("seed {seed}: grammar violation: {v}"));
        if let Some(first) = &seen {
            assert_eq!(&t.output, first, "seed {seed}");
        }
        seen = Some(t.output.clone());
        if seed == 5 {
            return t;
        }
    }
    unreachable!()
}

fn summary_texts(t: &ResponsesTranscript) -> Vec<&str> {
    t.output[0]["summary"]
        .as_array()
        .expect("a summary")
        .iter()
        .map(|p| p["text"].as_str().expect("a text"))
        .collect()
}

const TEXT_PART: &str = r#"{"type":"response.content_part.added","item_id":"rs","output_index":0,"content_index":0,"part":{"type":"reasoning_text","text":""}}"#;
const TEXT_DELTA: &str = r#"{"type":"response.reasoning_text.delta","item_id":"rs","output_index":0,"content_index":0,"delta":"Long "}"#;
const TEXT_DONE: &str = r#"{"type":"response.reasoning_text.done","item_id":"rs","output_index":0,"content_index":0,"text":"Long thought."}"#;
const TEXT_PART_DONE: &str = r#"{"type":"response.content_part.done","item_id":"rs","output_index":0,"content_index":0,"part":{"type":"reasoning_text","text":"Long thought."}}"#;
const SUMMARY_EVENTS: [&str; 4] = [
    r#"{"type":"response.reasoning_summary_part.added","item_id":"rs","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}"#,
    r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs","output_index":0,"summary_index":0,"delta":"Short."}"#,
    r#"{"type":"response.reasoning_summary_text.done","item_id":"rs","output_index":0,"summary_index":0,"text":"Short."}"#,
    r#"{"type":"response.reasoning_summary_part.done","item_id":"rs","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"Short."}}"#,
];
const BOTH: &str = r#"{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"Short."}],"content":[{"type":"reasoning_text","text":"Long thought."}]}"#;

#[test]
fn reasoning_text_and_a_summary_of_its_own_are_both_shown_in_the_order_they_came() {
    // A client shown reasoning as a summary has been sent the text as a
    // summary part by the time the backend's own summary comes: both stay,
    // numbered in order, and the finished item lists what was streamed.
    let text_first = [TEXT_PART, TEXT_DELTA, TEXT_DONE, TEXT_PART_DONE];
    let events: Vec<&str> = text_first.iter().chain(&SUMMARY_EVENTS).copied().collect();
    let t = summarized(&events, BOTH);
    assert_eq!(summary_texts(&t), ["Long thought.", "Short."]);
    assert_eq!(t.reasoning, "Long thought.Short.");

    let events: Vec<&str> = SUMMARY_EVENTS.iter().chain(&text_first).copied().collect();
    let t = summarized(&events, BOTH);
    assert_eq!(summary_texts(&t), ["Short.", "Long thought."]);
    assert!(t.output[0].get("content").is_none());
}

#[test]
fn reasoning_text_sent_only_as_done_is_shown_whole() {
    // No deltas: the done event's text is the summary's, sent as one delta.
    let t = summarized(
        &[TEXT_PART, TEXT_DONE, TEXT_PART_DONE],
        r#"{"type":"reasoning","id":"rs","summary":[],"content":[{"type":"reasoning_text","text":"Long thought."}]}"#,
    );
    assert_eq!(summary_texts(&t), ["Long thought."]);
    assert_eq!(t.reasoning, "Long thought.");
}

#[test]
fn several_reasoning_text_parts_are_one_summary_part() {
    // As the finished item's text parts are joined into one summary part.
    let second_part = TEXT_PART.replace("\"content_index\":0", "\"content_index\":1");
    let second_delta = r#"{"type":"response.reasoning_text.delta","item_id":"rs","output_index":0,"content_index":1,"delta":" More."}"#;
    let t = summarized(
        &[
            TEXT_PART,
            TEXT_DELTA,
            TEXT_DONE,
            TEXT_PART_DONE,
            &second_part,
            second_delta,
        ],
        r#"{"type":"reasoning","id":"rs","summary":[],"content":[{"type":"reasoning_text","text":"Long thought."},{"type":"reasoning_text","text":" More."}]}"#,
    );
    assert_eq!(summary_texts(&t), ["Long thought. More."]);
}

#[test]
fn reasoning_text_inside_a_summary_part_fails_the_stream_well_formed() {
    let events = [SUMMARY_EVENTS[0], SUMMARY_EVENTS[1], TEXT_DELTA];
    let created = r#"{"type":"response.created","response":{"id":"x","status":"in_progress"}}"#;
    let added = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs","summary":[],"content":[]}}"#;
    let mut all = vec![created, added];
    all.extend_from_slice(&events);
    let ctx = NativeContext {
        summary: true,
        ..NativeContext::default()
    };
    let (out, _) = drive(StreamTranslator::new(ctx), &sse(&all), 0);
    let t = responses_grammar::check(&parse_sse(&out)).expect("grammar");
    assert_eq!(t.status, "failed");
    // What the backend had said of its summary is kept.
    assert_eq!(t.reasoning, "Short.");
}
