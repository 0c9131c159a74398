//! Fields the Messages reader does not model go through the loss policy,
//! by their JSON path; `input_text` blocks are text; a refusal names the
//! client's own field, never one of the Responses request it became.

use serde_json::Value;
use wirebridge_convert::messages_to_responses::{error_body, translate_request, Options};
use wirebridge_convert::{LossKind, LossPolicy};

fn translated(body: &str, policy: LossPolicy) -> (Value, Vec<(LossKind, String, String)>) {
    let translated = translate_request(body.as_bytes(), &Options { policy })
        .unwrap_or_else(|e| panic!("refused ({e}): {body}"));
    let losses = translated
        .losses
        .iter()
        .map(|l| (l.kind, l.path.clone(), l.reason.clone()))
        .collect();
    (serde_json::from_slice(&translated.body).unwrap(), losses)
}

fn paths(losses: &[(LossKind, String, String)]) -> Vec<&str> {
    losses.iter().map(|(_, path, _)| path.as_str()).collect()
}

#[test]
fn unmodeled_fields_are_reported_by_path_at_every_level() {
    let body = r#"{"model":"m","max_tokens":100,"diagnostics":{"level":"full"},"safeguards":{"level":"high"},
        "system":[{"type":"text","text":"Be brief.","origin":"x"}],
        "messages":[{"role":"user","content":[{"type":"text","text":"Hi","lang":"en"}],"name":"ann"},
            {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{},"caller":{"type":"direct"}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"ok","extra":1}]}]}],
        "tools":[{"name":"f","input_schema":{"type":"object","unknown_to_json_schema":1},"eager_input_streaming":true}],
        "thinking":{"type":"adaptive","display":"updates","budget":"big"}}"#;
    let (out, losses) = translated(body, LossPolicy::default());
    assert_eq!(
        paths(&losses),
        [
            "safeguards",
            "system[0].origin",
            "messages[0].content[0].lang",
            "messages[0].name",
            "messages[1].content[0].caller",
            "messages[2].content[0].content[0].extra",
            "tools[0].eager_input_streaming",
            "thinking.budget",
            // Diagnostics are answered (from the store): only the option
            // the bridge does not know is lost.
            "diagnostics.level",
        ],
        "{losses:?}"
    );
    assert!(losses[0].2.contains("classifiers"), "{losses:?}");
    assert!(losses[1].2.contains("does not read"), "{losses:?}");
    // The rest is translated as always; a tool's schema is the client's
    // own JSON, not a field of the API.
    assert_eq!(out["input"][0]["content"][0]["text"], "Hi");
    assert_eq!(out["tools"][0]["parameters"]["unknown_to_json_schema"], 1);
}

#[test]
fn a_strict_policy_refuses_an_unmodeled_field_naming_it() {
    let body = r#"{"model":"m","max_tokens":100,"messages":[{"role":"user","content":[{"type":"text","text":"Hi","lang":"en"}]}]}"#;
    let err = translate_request(
        body.as_bytes(),
        &Options {
            policy: LossPolicy::strict(),
        },
    )
    .unwrap_err();
    assert_eq!(err.param(), Some("messages[0].content[0].lang"));
    let (status, shaped) = error_body(&err);
    assert_eq!(status, 400);
    let shaped: Value = serde_json::from_slice(&shaped).unwrap();
    assert_eq!(shaped["error"]["type"], "invalid_request_error");
    // `null` is absent, as everywhere in the reader.
    let body = r#"{"model":"m","max_tokens":100,"thread":null,"messages":[{"role":"user","content":"Hi"}]}"#;
    let (_, losses) = translated(body, LossPolicy::strict());
    assert!(losses.is_empty(), "{losses:?}");
}

#[test]
fn a_thread_becomes_the_chain_of_stored_responses_it_names() {
    let create = r#"{"model":"m","max_tokens":100,"system":"Be brief.","thread":{"type":"create"},
        "tools":[{"name":"f","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"Hi"}]}"#;
    let (out, losses) = translated(create, LossPolicy::strict());
    assert!(losses.is_empty(), "{losses:?}");
    assert_eq!(out["store"], true);
    assert_eq!(out["instructions"], "Be brief.");
    assert!(out.get("previous_response_id").is_none(), "{out}");

    // Only the new turn: the thread holds the system prompt and tools.
    let next = r#"{"model":"m","max_tokens":100,"thread":{"type":"continue","previous_message_id":"msg_0123abcd"},
        "messages":[{"role":"user","content":"And then?"}]}"#;
    let (out, losses) = translated(next, LossPolicy::strict());
    assert!(losses.is_empty(), "{losses:?}");
    assert_eq!(out["store"], true);
    assert_eq!(out["previous_response_id"], "resp_0123abcd");
    assert!(
        out.get("instructions").is_none() && out.get("tools").is_none(),
        "{out}"
    );
    assert_eq!(out["input"].as_array().unwrap().len(), 1);

    // A field of `thread` the bridge does not read is reported by its path.
    let extra = r#"{"model":"m","max_tokens":100,"thread":{"type":"create","id":"thr_1"},
        "messages":[{"role":"user","content":"Hi"}]}"#;
    let (_, losses) = translated(extra, LossPolicy::default());
    assert_eq!(paths(&losses), ["thread.id"]);
}

#[test]
fn what_lies_in_a_part_already_lost_is_not_reported_again() {
    let body = r#"{"model":"m","max_tokens":100,
        "messages":[{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"container_upload","file_id":"f","extra":1}]}],
        "tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3}]}"#;
    let (_, losses) = translated(body, LossPolicy::default());
    assert_eq!(
        paths(&losses),
        ["tools[0]", "messages[0].content[1]"],
        "{losses:?}"
    );
}

#[test]
fn input_text_blocks_are_text() {
    let body = r#"{"model":"m","max_tokens":100,"system":[{"type":"input_text","text":"Be brief."}],
        "messages":[{"role":"user","content":[{"type":"input_text","text":"Hi"},{"type":"text","text":"there"}]},
            {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"input_text","text":"ok"}]}]}]}"#;
    let (out, losses) = translated(body, LossPolicy::strict());
    assert!(losses.is_empty(), "{losses:?}");
    assert_eq!(out["instructions"], "Be brief.");
    let parts = &out["input"][0]["content"];
    assert_eq!(parts[0]["type"], "input_text");
    assert_eq!(parts[0]["text"], "Hi");
    assert_eq!(parts[1]["text"], "there");
    assert_eq!(out["input"][2]["output"], "ok");
    let missing = r#"{"model":"m","max_tokens":100,"messages":[{"role":"user","content":[{"type":"input_text"}]}]}"#;
    let err = translate_request(missing.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.param(), Some("messages[0].content[0].text"));
}

/// A conversation of which nothing can be sent is refused naming
/// `messages`, where the Responses request below it would have named its
/// own empty `input`.
#[test]
fn a_conversation_with_nothing_to_send_is_refused_as_messages() {
    let body = r#"{"model":"m","max_tokens":100,"messages":[{"role":"user","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}]}"#;
    let err = translate_request(body.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.param(), Some("messages"));
    let (status, _) = error_body(&err);
    assert_eq!(status, 400);
}
