//! Tool results must answer a call of the conversation: one whose `call_id`
//! matches no `function_call` or `custom_tool_call`, in the request's input
//! or in the stored history it continues, is a 400 naming it, rather than
//! a stray `tool` message the backend refuses or misreads.

use serde_json::Value;
use wirebridge_convert::responses_to_chat::{History, Options, ParsedRequest};
use wirebridge_convert::{ConvertError, LossAction, LossKind, LossPolicy};

const CALL: &str = r#"{"type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"}"#;
const CUSTOM_CALL: &str =
    r#"{"type":"custom_tool_call","call_id":"call_2","name":"apply_patch","input":"x"}"#;
const USER: &str = r#"{"type":"message","role":"user","content":"List the files."}"#;

fn output(kind: &str, call_id: &str) -> String {
    format!(r#"{{"type":"{kind}","call_id":"{call_id}","output":"done"}}"#)
}

fn translate(input: &[&str], history: &[&str], options: &Options) -> Result<Value, ConvertError> {
    let previous = match history.is_empty() {
        true => String::new(),
        false => r#""previous_response_id":"resp_1","#.to_owned(),
    };
    let body = format!(r#"{{"model":"m",{previous}"input":[{}]}}"#, input.join(","));
    let stored = format!("[{}]", history.join(","));
    let history = match history.is_empty() {
        true => History::default(),
        false => History::new("resp_1", [stored.as_str()]),
    };
    let translated = ParsedRequest::parse(body.as_bytes())?.translate(&history, options)?;
    Ok(serde_json::from_slice(&translated.body).unwrap())
}

fn refused(input: &[&str], history: &[&str]) -> (String, String) {
    let err = translate(input, history, &Options::default()).expect_err("refused");
    assert_eq!(err.status(), 400);
    let api: Value = serde_json::from_slice(&err.to_body()).unwrap();
    assert_eq!(api["error"]["type"], "invalid_request_error");
    (
        api["error"]["param"].as_str().unwrap().to_owned(),
        api["error"]["message"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn a_result_for_no_call_is_refused_naming_it() {
    for kind in ["function_call_output", "custom_tool_call_output"] {
        let stray = output(kind, "call_9");
        let (param, message) = refused(&[USER, CALL, &output(kind, "call_1"), &stray], &[]);
        assert_eq!(param, "input[3].call_id", "{kind}");
        assert!(message.contains("'call_9'"), "{message}");
        assert!(
            message.contains("no function_call or custom_tool_call"),
            "{message}"
        );
    }
}

#[test]
fn results_answer_calls_of_either_kind() {
    let input = [
        USER,
        CALL,
        CUSTOM_CALL,
        &output("function_call_output", "call_1"),
        &output("custom_tool_call_output", "call_2"),
    ];
    let chat = translate(&input, &[], &Options::default()).unwrap();
    let tools: Vec<&Value> = chat["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["tool_call_id"], "call_1");
    assert_eq!(tools[1]["tool_call_id"], "call_2");
}

#[test]
fn stored_history_is_part_of_the_conversation() {
    // The call was in the response previous_response_id names.
    let chat = translate(
        &[&output("function_call_output", "call_1")],
        &[USER, CALL],
        &Options::default(),
    )
    .unwrap();
    let messages = chat["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["tool_call_id"], "call_1");

    // The path counts the client's own items, not the stored ones.
    let input = [USER, &output("function_call_output", "call_9")];
    let (param, _) = refused(&input, &[USER, CALL]);
    assert_eq!(param, "input[1].call_id");

    // What the store holds is not the client's to fix: a stray stored
    // result is translated as before.
    let stray = output("function_call_output", "call_0");
    assert!(translate(&[USER], &[USER, &stray], &Options::default()).is_ok());
}

#[test]
fn results_after_what_may_hold_their_call_are_left_alone() {
    // A compaction may stand for the calls it summarized.
    let compaction = r#"{"type":"compaction","encrypted_content":"opaque"}"#;
    let stray = output("function_call_output", "call_9");
    assert!(translate(&[compaction, &stray], &[], &Options::default()).is_ok());

    // An item reference no store resolved may name the call.
    let reference = r#"{"type":"item_reference","id":"fc_1"}"#;
    let dropping = Options {
        policy: LossPolicy::default().with(LossKind::StatefulFeature, LossAction::Drop),
        ..Options::default()
    };
    assert!(translate(&[USER, reference, &stray], &[], &dropping).is_ok());
}
