//! `phase` on assistant messages: what a Chat reply's message is to the
//! calls after it, in streams and bodies, and the phase of history messages
//! accepted and left behind, since Chat has no such field.

mod common;

use serde_json::Value;
use wirebridge_convert::responses_to_chat::{
    translate_body, translate_request, History, Options, ParsedRequest, ResponsesContext,
};
use wirebridge_testkit::{parse_sse, responses_grammar};

fn chunk(delta: &str, finish: &str) -> String {
    format!(
        r#"data: {{"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
    ) + "\n\n"
}

const CALL: &str = r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}"#;

/// The stream's events, checked against the grammar at several splits.
fn events(upstream: &str) -> Vec<Value> {
    let mut events = Vec::new();
    for seed in 0..4 {
        let (out, _) =
            common::translate_stream(upstream.as_bytes(), ResponsesContext::default(), seed);
        let frames = parse_sse(&out);
        responses_grammar::check(&frames).unwrap_or_else(|v| panic!("seed {seed}: {v}"));
        events = frames
            .iter()
            .map(|f| serde_json::from_str(&f.data).unwrap())
            .collect();
    }
    events
}

/// The phase of each message, as `output_item.added`, `output_item.done`
/// and the terminal response carry them.
fn phases(events: &[Value]) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let of_items = |kind: &str| -> Vec<Value> {
        events
            .iter()
            .filter(|e| e["type"] == kind && e["item"]["type"] == "message")
            .map(|e| e["item"].get("phase").cloned().unwrap_or(Value::Null))
            .collect()
    };
    let terminal = events.last().unwrap();
    let output = terminal["response"]["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "message")
        .map(|i| i.get("phase").cloned().unwrap_or(Value::Null))
        .collect();
    (
        of_items("response.output_item.added"),
        of_items("response.output_item.done"),
        output,
    )
}

#[test]
fn a_message_before_tool_calls_is_commentary() {
    let upstream = chunk(r#"{"role":"assistant","content":"Let me look."}"#, "null")
        + &chunk(CALL, "null")
        + &chunk("{}", r#""tool_calls""#);
    let (added, done, output) = phases(&events(&upstream));
    // Not known when the message opens: only its `done` and the response
    // say it.
    assert_eq!(added, [Value::Null]);
    assert_eq!(done, ["commentary"]);
    assert_eq!(output, ["commentary"]);
}

#[test]
fn a_message_that_ends_the_reply_is_the_final_answer() {
    let upstream = chunk(r#"{"role":"assistant","content":"4."}"#, "null")
        + &chunk("{}", r#""stop""#)
        + "data: [DONE]\n\n";
    let (added, done, output) = phases(&events(&upstream));
    assert_eq!(added, [Value::Null]);
    assert_eq!(done, ["final_answer"]);
    assert_eq!(output, ["final_answer"]);

    // Ended by `[DONE]` alone.
    let upstream = chunk(r#"{"role":"assistant","content":"4."}"#, "null") + "data: [DONE]\n\n";
    assert_eq!(phases(&events(&upstream)).1, ["final_answer"]);
}

#[test]
fn a_custom_call_sent_whole_at_the_end_still_makes_commentary() {
    let body = br#"{"model":"m","input":"hi","tools":[{"type":"custom","name":"apply_patch","description":"Patch."}]}"#;
    let ctx = translate_request(body, &Options::default())
        .unwrap()
        .context;
    let upstream = chunk(r#"{"role":"assistant","content":"Patching."}"#, "null")
        + &chunk(
            r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"x\"}"}}]}"#,
            "null",
        )
        + &chunk(r#"{"content":" Done soon."}"#, "null")
        + &chunk("{}", r#""tool_calls""#);
    let (out, _) = common::translate_stream(upstream.as_bytes(), ctx, 1);
    let t = responses_grammar::check(&parse_sse(&out)).unwrap();
    let types: Vec<&str> = t
        .output
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["message", "custom_tool_call"]);
    assert_eq!(t.output[0]["phase"], "commentary");
}

#[test]
fn a_message_closed_by_reasoning_mid_reply_has_no_phase() {
    // Calls may or may not follow: not known when the message closes.
    let upstream = chunk(r#"{"role":"assistant","content":"First."}"#, "null")
        + &chunk(r#"{"reasoning_content":"hm"}"#, "null")
        + &chunk(r#"{"content":"Then."}"#, "null")
        + &chunk("{}", r#""stop""#);
    let (_, done, output) = phases(&events(&upstream));
    assert_eq!(done, [Value::Null, "final_answer".into()]);
    assert_eq!(output, done);
}

#[test]
fn a_failed_message_has_no_phase() {
    let upstream = chunk(r#"{"role":"assistant","content":"Half"}"#, "null")
        + r#"data: {"error":{"message":"overloaded","type":"server_error"}}"#
        + "\n\n";
    let (_, done, output) = phases(&events(&upstream));
    assert_eq!(done, [Value::Null]);
    assert_eq!(output, [Value::Null]);
}

fn body_phase(message: &str) -> Value {
    let body = format!(
        r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"message":{message},"finish_reason":"stop"}}]}}"#
    );
    let translated = translate_body(body.as_bytes(), &ResponsesContext::default()).unwrap();
    let response: Value = serde_json::from_slice(&translated.body).unwrap();
    let output = response["output"].as_array().unwrap();
    assert_eq!(output[0]["type"], "message");
    output[0]["phase"].clone()
}

#[test]
fn bodies_say_the_phase_of_their_message() {
    assert_eq!(
        body_phase(
            r#"{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}"#
        ),
        "commentary"
    );
    assert_eq!(
        body_phase(
            r#"{"role":"assistant","content":"Legacy.","function_call":{"name":"f","arguments":"{}"}}"#
        ),
        "commentary"
    );
    assert_eq!(
        body_phase(r#"{"role":"assistant","content":"4.","tool_calls":[]}"#),
        "final_answer"
    );
    assert_eq!(
        body_phase(r#"{"role":"assistant","content":null,"refusal":"No."}"#),
        "final_answer"
    );
}

const PHASED_HISTORY: &str = r#"[
  {"type":"message","role":"user","content":"List the files."},
  {"type":"message","role":"assistant","phase":"commentary","content":[{"type":"output_text","text":"Looking."}]},
  {"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"},
  {"type":"function_call_output","call_id":"call_1","output":"a b"},
  {"type":"message","role":"assistant","phase":"partial_answer","content":[{"type":"output_text","text":"a, "}]},
  {"type":"message","role":"assistant","phase":"final_answer","content":"a, b."},
  {"type":"message","role":"assistant","phase":null,"content":"Anything else?"}
]"#;

fn assert_phase_left_behind(chat: &Value) {
    let messages = chat["messages"].as_array().unwrap();
    let assistant: Vec<&Value> = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert!(assistant.len() >= 4, "{chat}");
    for message in messages {
        assert!(message.get("phase").is_none(), "{message}");
    }
}

#[test]
fn history_phases_are_accepted_and_left_behind_silently() {
    // Codex sends `partial_answer` too, which the spec does not list.
    let body = format!(r#"{{"model":"m","input":{PHASED_HISTORY}}}"#);
    let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
    assert!(translated.losses.is_empty(), "{:?}", translated.losses);
    assert_phase_left_behind(&serde_json::from_slice(&translated.body).unwrap());

    // The same from a store, after `previous_response_id`.
    let body = br#"{"model":"m","previous_response_id":"resp_1","input":"Thanks."}"#;
    let history = History::new("resp_1", [PHASED_HISTORY]);
    let translated = ParsedRequest::parse(body)
        .unwrap()
        .translate(&history, &Options::default())
        .unwrap();
    assert!(translated.losses.is_empty(), "{:?}", translated.losses);
    assert_phase_left_behind(&serde_json::from_slice(&translated.body).unwrap());
}
