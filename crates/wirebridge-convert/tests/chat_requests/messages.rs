//! Messages, content parts, tool calls and their results.

use serde_json::{json, Value};
use wirebridge_convert::chat_to_responses::{translate_request, Options};

use super::{request, responses, translate, user};
use wirebridge_convert::LossKind;

#[test]
fn messages_become_items_in_order_with_roles_kept() {
    let r = responses(&request(
        json!([
            {"role": "system", "content": "S"},
            {"role": "developer", "content": [{"type": "text", "text": "D1"}, {"type": "text", "text": "D2"}]},
            {"role": "user", "content": "U"},
            {"role": "assistant", "content": "A"},
            {"role": "user", "content": "U2"}
        ]),
        json!({}),
    ));
    assert!(r.get("instructions").is_none(), "system stays a message");
    let input = r["input"].as_array().unwrap();
    let roles: Vec<&str> = input.iter().map(|i| i["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "developer", "user", "assistant", "user"]);
    assert!(input.iter().all(|i| i["type"] == "message"));
    assert_eq!(input[0]["content"], "S");
    assert_eq!(
        input[1]["content"],
        json!([{"type": "input_text", "text": "D1"}, {"type": "input_text", "text": "D2"}])
    );
    assert_eq!(input[2]["content"], "U");
}

#[test]
fn user_parts_map_to_input_parts() {
    let (r, losses) = translate(&request(
        json!([{"role": "user", "content": [
            {"type": "text", "text": "look", "prompt_cache_breakpoint": {"mode": "explicit"}},
            {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "high"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
            {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"}},
            {"type": "file", "file": {"file_id": "file-1"}},
            {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
            {"type": "video_url", "video_url": {"url": "https://x/v.mp4"}}
        ]}]),
        json!({}),
    ));
    assert_eq!(
        r["input"][0]["content"],
        json!([
            {"type": "input_text", "text": "look", "prompt_cache_breakpoint": {"mode": "explicit"}},
            {"type": "input_image", "image_url": "https://x/a.png", "detail": "high"},
            {"type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "auto"},
            {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"},
            {"type": "input_file", "file_id": "file-1"},
            {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}}
        ])
    );
    let lost: Vec<_> = losses.iter().map(|l| (l.kind, l.path.as_str())).collect();
    assert_eq!(
        lost,
        [(LossKind::UnsupportedContent, "messages[0].content[6]")]
    );
}

#[test]
fn assistant_history_becomes_output_messages() {
    let r = responses(&request(
        json!([
            user("q"),
            {"role": "assistant", "content": "plain"},
            {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "refusal", "refusal": "r1"}]},
            {"role": "assistant", "content": null, "refusal": "No."}
        ]),
        json!({}),
    ));
    let input = &r["input"];
    let text =
        |t: &str| json!({"type": "output_text", "text": t, "annotations": [], "logprobs": []});
    assert_eq!(
        input[1],
        json!({"type": "message", "id": "msg_chat_1", "role": "assistant", "status": "completed", "content": [text("plain")]})
    );
    assert_eq!(
        input[2]["content"],
        json!([text("a"), {"type": "refusal", "refusal": "r1"}])
    );
    assert_eq!(input[3]["id"], "msg_chat_3");
    assert_eq!(
        input[3]["content"],
        json!([{"type": "refusal", "refusal": "No."}])
    );
}

#[test]
fn tool_calls_and_results_become_call_items() {
    let body = r#"{"model":"m","messages":[
        {"role":"user","content":"q"},
        {"role":"assistant","content":"","tool_calls":[
            {"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\": 1,  \"y\":\"\\u00e9\"}"}},
            {"id":"call_b","function":{"name":"g","arguments":{"z":2}}}]},
        {"role":"tool","tool_call_id":"call_a","content":"r1"},
        {"role":"tool","tool_call_id":"call_b","content":[{"type":"text","text":"p1"},{"type":"text","text":"p2"}]}
    ]}"#;
    let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
    let text = String::from_utf8(translated.body.clone()).unwrap();
    // Arguments are the exact string the client sent, escapes and spaces included.
    assert!(
        text.contains(r#""arguments":"{\"x\": 1,  \"y\":\"\\u00e9\"}""#),
        "{text}"
    );
    let r: Value = serde_json::from_slice(&translated.body).unwrap();
    let input = r["input"].as_array().unwrap();
    assert_eq!(input.len(), 5, "no message item for the empty text: {r}");
    assert_eq!(
        input[1],
        json!({"type": "function_call", "call_id": "call_a", "name": "f", "arguments": "{\"x\": 1,  \"y\":\"\\u00e9\"}"})
    );
    assert_eq!(input[2]["arguments"], r#"{"z":2}"#);
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": "call_a", "output": "r1"})
    );
    assert_eq!(input[4]["output"], "p1\np2");
    assert!(translated.losses.is_empty());
}

#[test]
fn tool_results_with_images_keep_them() {
    let r = responses(&request(
        json!([
            user("q"),
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": [
                {"type": "text", "text": "here"},
                {"type": "image_url", "image_url": {"url": "https://x/s.png"}}
            ]}
        ]),
        json!({}),
    ));
    assert_eq!(
        r["input"][2]["output"],
        json!([
            {"type": "input_text", "text": "here"},
            {"type": "input_image", "image_url": "https://x/s.png", "detail": "auto"}
        ])
    );
}

#[test]
fn custom_tool_calls_and_their_results_stay_custom() {
    let r = responses(&request(
        json!([
            user("q"),
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin Patch\n"}},
                {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "patched"},
            {"role": "tool", "tool_call_id": "c2", "content": "done"}
        ]),
        json!({}),
    ));
    let input = &r["input"];
    assert_eq!(
        input[1],
        json!({"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch\n"})
    );
    assert_eq!(
        input[3],
        json!({"type": "custom_tool_call_output", "call_id": "c1", "output": "patched"})
    );
    assert_eq!(input[4]["type"], "function_call_output");
}

#[test]
fn legacy_function_calls_get_stable_ids() {
    let r = responses(&request(
        json!([
            user("q"),
            {"role": "assistant", "content": null, "function_call": {"name": "lookup", "arguments": "{\"k\":1}"}},
            {"role": "function", "name": "lookup", "content": "v1"},
            {"role": "assistant", "function_call": {"name": "lookup", "arguments": "{\"k\":2}"}},
            {"role": "function", "name": "lookup", "content": null}
        ]),
        json!({"functions": [{"name": "lookup", "parameters": {"type": "object"}}], "function_call": "auto"}),
    ));
    let input = &r["input"];
    assert_eq!(
        input[1],
        json!({"type": "function_call", "call_id": "call_fn_1", "name": "lookup", "arguments": "{\"k\":1}"})
    );
    assert_eq!(
        input[2],
        json!({"type": "function_call_output", "call_id": "call_fn_1", "output": "v1"})
    );
    assert_eq!(input[3]["call_id"], "call_fn_3");
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_fn_3", "output": ""})
    );
    assert_eq!(
        r["tools"],
        json!([{"type": "function", "name": "lookup", "parameters": {"type": "object"}, "strict": false}])
    );
    assert_eq!(r["tool_choice"], "auto");
    // The same request gives the same ids: the prompt prefix stays cacheable.
    assert_eq!(
        r,
        responses(&request(
            json!([
                user("q"),
                {"role": "assistant", "content": null, "function_call": {"name": "lookup", "arguments": "{\"k\":1}"}},
                {"role": "function", "name": "lookup", "content": "v1"},
                {"role": "assistant", "function_call": {"name": "lookup", "arguments": "{\"k\":2}"}},
                {"role": "function", "name": "lookup", "content": null}
            ]),
            json!({"functions": [{"name": "lookup", "parameters": {"type": "object"}}], "function_call": "auto"}),
        ))
    );
}
