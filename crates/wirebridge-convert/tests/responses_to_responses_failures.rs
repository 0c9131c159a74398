//! Responses streams from backends that keep no state, cut short or broken
//! (an error event, an item opened inside another, a done event without its
//! value): the translator ends each one well-formed, keeping what was said,
//! with a failure that says what went wrong.

mod common;

use common::{drive, sse};
use serde_json::Value;
use wirebridge_convert::responses_to_responses::{NativeContext, StreamTranslator};
use wirebridge_testkit::{parse_sse, responses_grammar};

#[test]
fn a_stream_cut_short_keeps_what_was_said_and_fails() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"Half a"}"#,
    ]);
    let (out, translator) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let frames = parse_sse(&out);
    let transcript = responses_grammar::check(&frames).expect("grammar");
    assert_eq!(transcript.status, "failed");
    assert_eq!(transcript.text, "Half a");
    assert_eq!(transcript.output[0]["status"], "incomplete");
    assert_eq!(transcript.output[0]["content"][0]["text"], "Half a");
    assert!(transcript.error.unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("ended before"));
    assert_eq!(translator.finished().unwrap().output.len(), 1);
}

#[test]
fn an_upstream_error_event_fails_the_stream_with_its_message() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"error","code":"context_length_exceeded","message":"The prompt is too long.","param":null}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let frames = parse_sse(&out);
    let transcript = responses_grammar::check(&frames).expect("grammar");
    assert_eq!(transcript.status, "failed");
    let error = transcript.error.unwrap();
    assert_eq!(error["message"], "The prompt is too long.");
    assert_eq!(error["code"], "context_length_exceeded");
    assert_eq!(
        frames
            .iter()
            .filter(|f| f.event.as_deref() == Some("error"))
            .count(),
        1
    );
}

#[test]
fn an_error_inside_an_open_item_closes_it_before_the_error_event() {
    // As vLLM and the demo upstream fail mid-answer: `error`, then
    // `response.failed`, the message still open. Its closing events go
    // before the error event, which `response.failed` follows at once.
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","output_index":0,"content_index":0,"part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"Half an"}"#,
        r#"{"type":"error","code":"server_error","message":"The engine died.","param":null}"#,
        r#"{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"failed"},"output":[]}}"#,
    ]);
    for split in 0..4 {
        let (out, _) = drive(
            StreamTranslator::new(NativeContext::default()),
            &upstream,
            split,
        );
        let frames = parse_sse(&out);
        let transcript = responses_grammar::check(&frames).expect("grammar");
        let events: Vec<_> = frames.iter().filter_map(|f| f.event.as_deref()).collect();
        assert_eq!(
            events[events.len() - 5..],
            [
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "error",
                "response.failed"
            ]
        );
        assert_eq!(transcript.status, "failed");
        assert_eq!(transcript.error.unwrap()["message"], "The engine died.");
        assert_eq!(transcript.output[0]["status"], "incomplete");
        assert_eq!(transcript.output[0]["content"][0]["text"], "Half an");
    }
}

#[test]
fn a_stream_cut_after_a_text_done_closes_its_part_without_a_second_one() {
    // The backend's output_text.done was sent on, then the stream ended
    // before content_part.done: the part is closed with that text and the
    // annotations that arrived, and output_text.done is not sent twice.
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"All"}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":" said."}"#,
        r#"{"type":"response.output_text.annotation.added","item_id":"m","annotation_index":0,"annotation":{"type":"url_citation","url":"https://example.com/","title":"Example","start_index":0,"end_index":3}}"#,
        r#"{"type":"response.output_text.done","item_id":"m","text":"All said."}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let frames = parse_sse(&out);
    let transcript = responses_grammar::check(&frames).expect("grammar");
    let done = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("response.output_text.done"))
        .count();
    assert_eq!(done, 1);
    assert_eq!(transcript.status, "failed");
    assert_eq!(transcript.output[0]["content"][0]["text"], "All said.");
    // Its annotation too, in the part and the item.
    let annotations = &transcript.output[0]["content"][0]["annotations"];
    assert_eq!(
        annotations[0]["url"], "https://example.com/",
        "{annotations}"
    );
}

#[test]
fn a_stream_cut_inside_a_summary_part_closes_it() {
    // The part is closed, and the reasoning item lists both parts.
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"reasoning","id":"rs","summary":[]}}"#,
        r#"{"type":"response.reasoning_summary_part.added","item_id":"rs","summary_index":0,"part":{"type":"summary_text","text":""}}"#,
        r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs","summary_index":0,"delta":"First."}"#,
        r#"{"type":"response.reasoning_summary_text.done","item_id":"rs","summary_index":0,"text":"First."}"#,
        r#"{"type":"response.reasoning_summary_part.done","item_id":"rs","summary_index":0,"part":{"type":"summary_text","text":"First."}}"#,
        r#"{"type":"response.reasoning_summary_part.added","item_id":"rs","summary_index":1,"part":{"type":"summary_text","text":""}}"#,
        // A backend that leaves out the part's index: it is named.
        r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs","delta":"Then, half"}"#,
    ]);
    for split in 0..3 {
        let (out, _) = drive(
            StreamTranslator::new(NativeContext::default()),
            &upstream,
            split,
        );
        let frames = parse_sse(&out);
        let transcript = responses_grammar::check(&frames).expect("grammar");
        assert_eq!(transcript.status, "failed");
        let closed: Vec<Value> = frames
            .iter()
            .filter(|f| f.event.as_deref() == Some("response.reasoning_summary_part.done"))
            .map(|f| serde_json::from_str(&f.data).unwrap())
            .collect();
        assert_eq!(closed.len(), 2);
        assert_eq!(closed[1]["summary_index"], 1);
        assert_eq!(closed[1]["part"]["text"], "Then, half");
    }
}

#[test]
fn a_stream_cut_inside_a_refusal_closes_it_as_a_refusal() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"refusal","refusal":""}}"#,
        r#"{"type":"response.refusal.delta","item_id":"m","content_index":0,"delta":"I cannot"}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let frames = parse_sse(&out);
    let transcript = responses_grammar::check(&frames).expect("grammar");
    assert_eq!(transcript.status, "failed");
    let closed = frames
        .iter()
        .find(|f| f.event.as_deref() == Some("response.refusal.done"))
        .expect("response.refusal.done");
    let closed: Value = serde_json::from_str(&closed.data).unwrap();
    assert_eq!(closed["refusal"], "I cannot");
    assert_eq!(transcript.output[0]["content"][0]["refusal"], "I cannot");
}

#[test]
fn a_stream_cut_inside_a_call_ends_its_arguments() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"function_call","id":"fc","call_id":"c1","name":"get_weather","arguments":"","status":"in_progress"}}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc","delta":"{\"city\":"}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let frames = parse_sse(&out);
    let transcript = responses_grammar::check(&frames).expect("grammar");
    assert_eq!(transcript.status, "failed");
    let done = frames
        .iter()
        .find(|f| f.event.as_deref() == Some("response.function_call_arguments.done"))
        .expect("function_call_arguments.done");
    let done: Value = serde_json::from_str(&done.data).unwrap();
    assert_eq!(done["arguments"], r#"{"city":"#);
    assert_eq!(done["name"], "get_weather");
    assert_eq!(transcript.output[0]["status"], "incomplete");
}

/// An item that opens inside another waits for it (see
/// `responses_to_responses_orders.rs`); a stream cut while it waits keeps
/// what the client was sent, and makes up nothing of what it was not.
#[test]
fn a_stream_cut_while_an_item_waits_keeps_what_was_sent() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"First"}"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m2","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m2","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m2","delta":"Second"}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let transcript = responses_grammar::check(&parse_sse(&out)).expect("grammar");
    assert_eq!(transcript.status, "failed");
    assert_eq!(transcript.text, "First");
    assert_eq!(transcript.output.len(), 1);
    assert_eq!(transcript.output[0]["status"], "incomplete");
    let message = transcript.error.unwrap()["message"].to_string();
    assert!(message.contains("ended before"), "{message}");
}

#[test]
fn a_done_event_without_its_value_is_given_what_the_deltas_said() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"function_call","id":"fc","call_id":"c1","name":"f","arguments":"","status":"in_progress"}}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc","delta":"{}"}"#,
        r#"{"type":"response.function_call_arguments.done","item_id":"fc"}"#,
        r#"{"type":"response.output_item.done","item":{"type":"function_call","id":"fc","call_id":"c1","name":"f","arguments":"{}","status":"completed"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"Done."}"#,
        r#"{"type":"response.output_text.done","item_id":"m"}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let frames = parse_sse(&out);
    responses_grammar::check(&frames).expect("grammar");
    let value = |event: &str, field: &str| {
        let frame = frames
            .iter()
            .find(|f| f.event.as_deref() == Some(event))
            .unwrap();
        serde_json::from_str::<Value>(&frame.data).unwrap()[field].clone()
    };
    assert_eq!(
        value("response.function_call_arguments.done", "arguments"),
        "{}"
    );
    assert_eq!(value("response.function_call_arguments.done", "name"), "f");
    assert_eq!(value("response.output_text.done", "text"), "Done.");
}

#[test]
fn a_summary_part_opened_inside_another_fails_the_stream() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"reasoning","id":"rs","summary":[]}}"#,
        r#"{"type":"response.reasoning_summary_part.added","item_id":"rs","summary_index":0,"part":{"type":"summary_text","text":""}}"#,
        r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs","summary_index":0,"delta":"One"}"#,
        r#"{"type":"response.reasoning_summary_part.added","item_id":"rs","summary_index":1,"part":{"type":"summary_text","text":""}}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let transcript = responses_grammar::check(&parse_sse(&out)).expect("grammar");
    assert_eq!(transcript.status, "failed");
    assert_eq!(transcript.output[0]["summary"][0]["text"], "One");
    let message = transcript.error.unwrap()["message"].to_string();
    assert!(message.contains("summary part"), "{message}");
}

#[test]
fn an_item_finished_as_another_type_fails_the_stream() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"function_call","id":"fc","call_id":"c1","name":"f","arguments":"","status":"in_progress"}}"#,
        r#"{"type":"response.function_call_arguments.delta","item_id":"fc","delta":"{}"}"#,
        r#"{"type":"response.output_item.done","item":{"type":"message","id":"fc","role":"assistant","status":"completed","content":[]}}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let transcript = responses_grammar::check(&parse_sse(&out)).expect("grammar");
    assert_eq!(transcript.status, "failed");
    assert_eq!(transcript.output[0]["type"], "function_call");
    let message = transcript.error.unwrap()["message"].to_string();
    assert!(message.contains("opened as a function_call"), "{message}");
}

#[test]
fn after_an_error_event_the_stream_ends_whatever_comes_next() {
    // A backend that goes on after its `error` (more text, or a
    // `response.completed`) does not undo it: the stream fails there.
    for next in [
        r#"{"type":"response.output_text.delta","item_id":"m","delta":" more"}"#,
        r#"{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}"#,
    ] {
        let upstream = sse(&[
            r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
            r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
            r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","delta":"Said"}"#,
            r#"{"type":"error","code":"server_error","message":"Gone.","param":null}"#,
            next,
        ]);
        let (out, _) = drive(
            StreamTranslator::new(NativeContext::default()),
            &upstream,
            0,
        );
        let transcript = responses_grammar::check(&parse_sse(&out)).expect("grammar");
        assert_eq!(transcript.status, "failed", "{next}");
        assert_eq!(transcript.text, "Said", "{next}");
        assert_eq!(transcript.error.unwrap()["message"], "Gone.");
    }
}

#[test]
fn a_bare_error_object_mid_stream_fails_it_with_its_message() {
    // As llama.cpp's server sends one when its output parser fails.
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let transcript = responses_grammar::check(&parse_sse(&out)).expect("grammar");
    assert_eq!(transcript.status, "failed");
    let error = transcript.error.unwrap();
    assert!(
        error["message"].as_str().unwrap().contains("peg-native"),
        "{error}"
    );
    assert_eq!(error["code"], "500");
}

#[test]
fn an_event_for_an_item_never_announced_fails_clearly() {
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
        r#"{"type":"response.output_text.delta","item_id":"ghost","delta":"x"}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(NativeContext::default()),
        &upstream,
        0,
    );
    let transcript = responses_grammar::check(&parse_sse(&out)).expect("grammar");
    assert_eq!(transcript.status, "failed");
    assert!(transcript.error.unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("never announced"));
}

#[test]
fn an_event_that_is_no_json_object_fails_the_stream_saying_which() {
    for (event, says) in [
        (
            r#"{"type":"response.output_text.delta","delta":"#,
            "not JSON",
        ),
        (r#"["response.output_text.delta"]"#, "not an object"),
        (r#"{"type":"response.output_text.delta"} x"#, "not JSON"),
    ] {
        let upstream = sse(&[
            r#"{"type":"response.created","response":{"id":"r","status":"in_progress"}}"#,
            r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
            r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","delta":"Kept"}"#,
            event,
        ]);
        let (out, _) = drive(
            StreamTranslator::new(NativeContext::default()),
            &upstream,
            0,
        );
        let transcript = responses_grammar::check(&parse_sse(&out)).expect("grammar");
        assert_eq!(transcript.status, "failed", "{event}");
        assert_eq!(transcript.text, "Kept", "{event}");
        let message = transcript.error.unwrap()["message"].to_string();
        assert!(message.contains(says), "{event}: {message}");
    }
}

#[test]
fn an_error_body_answered_with_200_is_the_upstreams_failure() {
    use wirebridge_convert::responses_to_responses::translate_body;
    use wirebridge_convert::ConvertError;

    let body =
        br#"{"error":{"message":"model is loading","type":"server_error","code":"model_loading"}}"#;
    match translate_body(body, &NativeContext::default()) {
        Err(ConvertError::UpstreamFailed {
            message,
            error_type,
            code,
        }) => {
            assert_eq!(message, "model is loading");
            assert_eq!(error_type.as_deref(), Some("server_error"));
            assert_eq!(code.as_deref(), Some("model_loading"));
        }
        other => panic!("an error body became {other:?}"),
    }
}

#[test]
fn a_body_that_is_no_response_is_refused_not_answered_empty() {
    use wirebridge_convert::responses_to_responses::translate_body;
    use wirebridge_convert::ConvertError;

    for body in [
        r#"{"hello":"world"}"#,
        r#"{"output":[]}"#,
        r#"{"object":"chat.completion","choices":[]}"#,
        r#"{"object":"response","status":"completed"}"#,
    ] {
        match translate_body(body.as_bytes(), &NativeContext::default()) {
            Err(e @ ConvertError::InvalidUpstream(_)) => {
                assert_eq!(e.status(), 502, "{body}");
            }
            other => panic!("{body} became {other:?}"),
        }
    }
    // A Response names itself and holds its output, even an empty one.
    let empty = br#"{"object":"response","status":"completed","output":[]}"#;
    let reply = translate_body(empty, &NativeContext::default()).unwrap();
    let body: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(body["status"], "completed");
}

#[test]
fn a_stream_cut_after_a_finished_part_keeps_the_part_in_its_item() {
    // The message's parts are done, the message itself never is.
    let upstream = sse(&[
        r#"{"type":"response.created","response":{"id":"x","object":"response","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":"First."}"#,
        r#"{"type":"response.output_text.done","item_id":"m","text":"First."}"#,
        r#"{"type":"response.content_part.done","item_id":"m","part":{"type":"output_text","text":"First."}}"#,
        r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#,
        r#"{"type":"response.output_text.delta","item_id":"m","delta":" Second"}"#,
    ]);
    for seed in [0, 3] {
        let (out, translator) = drive(
            StreamTranslator::new(NativeContext::default()),
            &upstream,
            seed,
        );
        let transcript =
            responses_grammar::check(&parse_sse(&out)).unwrap_or_else(|v| panic!("{v}"));
        assert_eq!(transcript.status, "failed");
        assert_eq!(transcript.text, "First. Second");
        let kept: Value =
            serde_json::from_str(translator.finished().unwrap().output[0].get()).unwrap();
        assert_eq!(kept["status"], "incomplete");
        let texts: Vec<&str> = kept["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|part| part["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, ["First.", " Second"]);
    }
}
