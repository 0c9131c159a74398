//! Tools declared outside `tools` (Codex's code-mode models put theirs in an
//! `additional_tools` item) and the client's tool search: the backend sees
//! every tool, and its calls come back as the items the client expects.

mod common;

use serde_json::{json, Value};
use wirebridge_convert::responses_to_chat::{
    translate_body, translate_request, Options, ResponsesContext,
};
use wirebridge_convert::LossKind;
use wirebridge_testkit::{parse_sse, responses_grammar};

fn code_mode() -> (Value, ResponsesContext) {
    let translated = translate_request(
        &common::input("code-mode-request.json"),
        &Options::default(),
    )
    .unwrap();
    (
        serde_json::from_slice(&translated.body).unwrap(),
        translated.context,
    )
}

fn tool_names(chat: &Value) -> Vec<&str> {
    chat["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect()
}

fn call_chunk(name: &str, arguments: &str) -> String {
    let chunk = json!({"id": "c", "created": 1, "model": "m", "choices": [{"index": 0,
        "delta": {"tool_calls": [{"index": 0, "id": "call_9", "type": "function",
        "function": {"name": name, "arguments": arguments}}]}}]});
    format!(
        "data: {chunk}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    )
}

/// The items a stream ends with, after the strict grammar check.
fn streamed_items(upstream: &str, ctx: ResponsesContext) -> Vec<Value> {
    let (out, _) = common::translate_stream(upstream.as_bytes(), ctx, 5);
    let frames = parse_sse(&out);
    let t = responses_grammar::check(&frames)
        .unwrap_or_else(|v| panic!("{v}\n{}", String::from_utf8_lossy(&out)));
    t.output
}

#[test]
fn tools_of_an_additional_tools_item_reach_the_backend() {
    let (chat, _) = code_mode();
    assert_eq!(
        tool_names(&chat),
        [
            "functions__exec",
            "functions__wait",
            "tool_search",
            "mcp__tracker__list_issues"
        ]
    );
    // The item itself sends nothing else, and is not reported as lost.
    let translated = translate_request(
        &common::input("code-mode-request.json"),
        &Options::default(),
    )
    .unwrap();
    assert!(!translated
        .losses
        .iter()
        .any(|l| l.kind == LossKind::UnsupportedItem));
}

#[test]
fn code_mode_exec_calls_come_back_as_namespaced_custom_calls() {
    let (_, ctx) = code_mode();
    let code = "const r = await tools.exec_command({cmd: 'ls'});\ntext(r.output);";
    let arguments = json!({ "input": code }).to_string();
    let items = streamed_items(&call_chunk("functions__exec", &arguments), ctx.clone());
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["type"], "custom_tool_call");
    assert_eq!(items[0]["name"], "exec");
    assert_eq!(items[0]["namespace"], "functions");
    assert_eq!(items[0]["input"], code);
    assert_eq!(items[0]["call_id"], "call_9");

    let body = json!({"id": "c", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "tool_calls": [{"id": "call_9", "type": "function",
        "function": {"name": "functions__exec", "arguments": arguments}}]}}]});
    let reply = translate_body(body.to_string().as_bytes(), &ctx).unwrap();
    let response: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(response["output"][0]["type"], "custom_tool_call");
    assert_eq!(response["output"][0]["input"], code);
}

#[test]
fn a_tool_search_call_comes_back_as_a_tool_search_call_item() {
    let (_, ctx) = code_mode();
    for (arguments, expected) in [
        (
            r#"{"query":"open issues","limit":3}"#,
            json!({"query": "open issues", "limit": 3}),
        ),
        // Arguments that are not an object are taken as the query.
        ("open issues", json!({"query": "open issues"})),
    ] {
        let items = streamed_items(&call_chunk("tool_search", arguments), ctx.clone());
        assert_eq!(items.len(), 1, "{arguments}");
        assert_eq!(items[0]["type"], "tool_search_call");
        assert_eq!(items[0]["execution"], "client");
        assert_eq!(items[0]["call_id"], "call_9");
        assert_eq!(items[0]["status"], "completed");
        assert_eq!(items[0]["arguments"], expected, "{arguments}");
        assert!(items[0]["id"].as_str().unwrap().starts_with("tsc_"));
    }
    let body = json!({"id": "c", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "tool_calls": [{"id": "call_9", "type": "function",
        "function": {"name": "tool_search", "arguments": "{\"query\":\"x\"}"}}]}}]});
    let reply = translate_body(body.to_string().as_bytes(), &ctx).unwrap();
    let response: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(response["output"][0]["type"], "tool_search_call");
    assert_eq!(response["output"][0]["arguments"], json!({"query": "x"}));
}

#[test]
fn a_tool_the_search_loaded_is_called_in_its_namespace() {
    let (_, ctx) = code_mode();
    let items = streamed_items(
        &call_chunk("mcp__tracker__list_issues", r#"{"state":"open"}"#),
        ctx,
    );
    assert_eq!(items[0]["type"], "function_call");
    assert_eq!(items[0]["name"], "list_issues");
    assert_eq!(items[0]["namespace"], "mcp__tracker");
}

#[test]
fn deferred_tools_wait_for_the_clients_search_or_are_offered_without_one() {
    let deferred = json!({"type": "function", "name": "list_issues", "defer_loading": true,
        "strict": false, "parameters": {"type": "object"}});
    let search = json!({"type": "tool_search", "execution": "client"});
    let request = |tools: Value| json!({"model": "m", "input": "hi", "tools": tools}).to_string();

    let t = translate_request(
        request(json!([deferred, search])).as_bytes(),
        &Options::default(),
    )
    .unwrap();
    let chat: Value = serde_json::from_slice(&t.body).unwrap();
    assert_eq!(tool_names(&chat), ["tool_search"]);
    // A search without a schema gets one with a query.
    assert_eq!(
        chat["tools"][0]["function"]["parameters"]["required"],
        json!(["query"])
    );

    // A search the server would run cannot run here: reported, and the
    // deferred tools are offered directly so they stay reachable.
    let hosted = json!({"type": "tool_search"});
    let t = translate_request(
        request(json!([deferred, hosted])).as_bytes(),
        &Options::default(),
    )
    .unwrap();
    let chat: Value = serde_json::from_slice(&t.body).unwrap();
    assert_eq!(tool_names(&chat), ["list_issues"]);
    let loss = t.losses.iter().next().unwrap();
    assert_eq!(
        (loss.kind, loss.path.as_str()),
        (LossKind::HostedTool, "tools[1]")
    );
}

#[test]
fn tool_lists_in_the_input_are_checked() {
    let bad = json!({"model": "m", "input": [
        {"type": "additional_tools", "role": "developer"},
        {"role": "user", "content": "hi"}
    ]});
    let err = translate_request(bad.to_string().as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.param(), Some("input[0].tools"));
    let bad = json!({"model": "m", "input": [
        {"type": "additional_tools", "role": "developer", "tools": [{"type": "function"}]},
        {"role": "user", "content": "hi"}
    ]});
    let err = translate_request(bad.to_string().as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.param(), Some("input[0].tools[0].name"));
}
