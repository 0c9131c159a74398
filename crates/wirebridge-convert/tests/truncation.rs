//! `truncation: "auto"`: a conversation estimated over the model's context
//! window loses its oldest turns, in front of a Chat backend and of a
//! Responses backend that keeps no state, and says so.

use std::sync::Arc;

use serde_json::{json, Value};
use wirebridge_convert::catalog::{ModelCatalog, ModelSettings};
use wirebridge_convert::profile::BackendProfile;
use wirebridge_convert::responses_to_chat::{translate_request, History, Options, ParsedRequest};
use wirebridge_convert::{responses_to_responses, ConvertError, LossKind, LossPolicy, LossReport};

/// A conversation of four turns, each user message about 1 KB, the third
/// with a call and its result; then the latest question.
fn conversation() -> Value {
    let long = |n: usize| format!("Turn {n}: {}", "words ".repeat(170));
    json!([
        {"role": "developer", "content": "Answer briefly."},
        {"role": "user", "content": long(1)},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One."}]},
        {"role": "user", "content": long(2)},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two."}]},
        {"role": "user", "content": long(3)},
        {"type": "function_call", "call_id": "call_1", "name": "look", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "seen"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Three."}]},
        {"role": "user", "content": "And now?"}
    ])
}

fn request(truncation: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"model": "m", "truncation": truncation, "input": conversation()}))
        .unwrap()
}

fn options(window: Option<u64>) -> Options {
    Options {
        profile: BackendProfile {
            context_window: window,
            ..BackendProfile::generic()
        },
        ..Options::default()
    }
}

fn chat(body: &[u8], options: &Options) -> (Vec<(String, String)>, LossReport) {
    let t = translate_request(body, options).unwrap();
    let chat: Value = serde_json::from_slice(&t.body).unwrap();
    let messages = chat["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = m["content"].as_str().unwrap_or("");
            (
                m["role"].as_str().unwrap().to_owned(),
                text.chars().take(7).collect(),
            )
        })
        .collect();
    (messages, t.losses)
}

fn reasons(losses: &LossReport) -> Vec<(LossKind, String)> {
    losses.iter().map(|l| (l.kind, l.reason.clone())).collect()
}

#[test]
fn the_oldest_turns_go_until_the_conversation_fits() {
    // About 3,200 bytes: 800 tokens by the estimate.
    let (all, losses) = chat(&request("auto"), &options(Some(1000)));
    assert_eq!(all.len(), 10, "it fits: {all:?}");
    assert!(losses.is_empty(), "{losses:?}");

    let (kept, losses) = chat(&request("auto"), &options(Some(400)));
    let roles: Vec<&str> = kept.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"],
        "the developer message, then the third turn whole: {kept:?}"
    );
    assert_eq!(kept[1].1, "Turn 3:");
    let (kind, reason) = &reasons(&losses)[0];
    assert_eq!(*kind, LossKind::TruncatedInput);
    assert!(reason.contains("the 4 oldest of 10 messages"), "{reason}");
    assert_eq!(losses.iter().next().unwrap().path, "input");
}

#[test]
fn the_answer_s_tokens_are_kept_free() {
    let body = serde_json::to_vec(&json!({"model": "m", "truncation": "auto",
        "max_output_tokens": 300, "input": conversation()}))
    .unwrap();
    // Without the answer's 300 tokens the conversation would fit.
    let (kept, losses) = chat(&body, &options(Some(1000)));
    assert_eq!(kept.len(), 8, "{kept:?}");
    assert_eq!(kept[1].1, "Turn 2:");
    assert_eq!(losses.len(), 1);
}

#[test]
fn the_latest_turn_alone_over_the_window_loses_nothing_more_and_says_so() {
    let (kept, losses) = chat(&request("auto"), &options(Some(10)));
    let roles: Vec<&str> = kept.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["system", "user"], "{kept:?}");
    let (_, reason) = &reasons(&losses)[0];
    assert!(
        reason.ends_with("what is left is still over it"),
        "{reason}"
    );
}

#[test]
fn without_a_known_window_truncation_is_reported_and_nothing_goes() {
    let (kept, losses) = chat(&request("auto"), &options(None));
    assert_eq!(kept.len(), 10);
    let paths: Vec<&str> = losses.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["truncation"]);
    let (kept, losses) = chat(&request("disabled"), &options(Some(10)));
    assert_eq!(kept.len(), 10);
    assert!(losses.is_empty());
}

#[test]
fn the_catalog_s_window_of_a_model_wins_over_the_profile_s() {
    let catalog = ModelCatalog::new().model(
        "m",
        ModelSettings {
            context_window: Some(400),
            ..ModelSettings::default()
        },
    );
    let options = Options {
        catalog: Some(Arc::new(catalog)),
        ..options(Some(100_000))
    };
    let (kept, _) = chat(&request("auto"), &options);
    assert_eq!(kept.len(), 6);
}

#[test]
fn a_strict_policy_refuses_what_truncation_would_leave_out() {
    let options = Options {
        policy: LossPolicy::strict(),
        ..options(Some(400))
    };
    match translate_request(&request("auto"), &options) {
        Err(ConvertError::Rejected(loss)) => assert_eq!(loss.kind, LossKind::TruncatedInput),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_native_backend_gets_the_conversation_cut_the_same_way() {
    let body = request("auto");
    let parsed = ParsedRequest::parse(&body).unwrap();
    // Its items carry ids and types: longer than the Chat messages.
    let t =
        responses_to_responses::translate_request(parsed, &History::default(), &options(Some(600)))
            .unwrap();
    let sent: Value = serde_json::from_slice(&t.body).unwrap();
    let kinds: Vec<String> = sent["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            format!(
                "{}:{}",
                item["type"].as_str().unwrap_or("message"),
                item["role"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "message:developer",
            "message:user",
            "function_call:",
            "function_call_output:",
            "message:assistant",
            "message:user"
        ]
    );
    assert_eq!(sent["truncation"], "auto");
    let (kind, reason) = &reasons(&t.losses)[0];
    assert_eq!(*kind, LossKind::TruncatedInput);
    assert!(reason.contains("the 4 oldest of 10 items"), "{reason}");

    // Where the window is not known, the backend is left to act on it.
    let parsed = ParsedRequest::parse(&body).unwrap();
    let t = responses_to_responses::translate_request(parsed, &History::default(), &options(None))
        .unwrap();
    let sent: Value = serde_json::from_slice(&t.body).unwrap();
    assert_eq!(sent["input"].as_array().unwrap().len(), 10);
    assert!(t.losses.is_empty(), "{:?}", t.losses);
}
