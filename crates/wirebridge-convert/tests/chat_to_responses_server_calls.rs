//! Calls a Responses backend ran itself (xAI's search tools come back as
//! completed `custom_tool_call` items): a Chat client did not declare the
//! tool and can neither run nor answer the call, so it is left out of the
//! reply and reported, and a reply that answers ends with `stop`.

mod common;

use serde_json::{json, Value};
use wirebridge_convert::chat_to_responses::{
    translate_body, translate_request, ChatContext, Options, StreamTranslator,
};
use wirebridge_convert::{LossKind, LossReport};
use wirebridge_testkit::{chat_grammar, parse_sse, ChatTranscript};

/// A request declaring one function and one custom tool.
fn context() -> ChatContext {
    let request = json!({
        "model": "grok-4", "stream": true,
        "messages": [{"role": "user", "content": "What is new on X about AI? Save a note."}],
        "tools": [
            {"type": "function", "function": {"name": "save_note", "parameters": {"type": "object"}}},
            {"type": "custom", "custom": {"name": "apply_patch"}},
        ],
    });
    let translated = translate_request(request.to_string().as_bytes(), &Options::default());
    translated.unwrap().context
}

fn events(events: &[Value]) -> Vec<u8> {
    let texts: Vec<String> = events.iter().map(Value::to_string).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    common::sse(&refs)
}

/// The backend searched X itself, then answered.
fn searched_then_answered(call_type: &str) -> Vec<Value> {
    let search = match call_type {
        "custom_tool_call" => {
            json!({"type": "custom_tool_call", "id": "ctc_1", "status": "completed",
            "call_id": "xs_1", "name": "x_keyword_search", "input": "{\"query\":\"AI\"}"})
        }
        _ => json!({"type": "function_call", "id": "fc_1", "status": "completed",
            "call_id": "xs_1", "name": "x_keyword_search", "arguments": "{\"query\":\"AI\"}"}),
    };
    let message = |status: &str, text: &str| {
        json!({"type": "message", "id": "msg_1", "role": "assistant", "status": status,
        "content": if text.is_empty() { json!([]) } else {
            json!([{"type": "output_text", "text": text, "annotations": []}])
        }})
    };
    let response = |status: &str| {
        json!({"id": "resp_1", "object": "response", "created_at": 1, "model": "grok-4", "status": status,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}})
    };
    vec![
        json!({"type": "response.created", "sequence_number": 0, "response": response("in_progress")}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": search}),
        json!({"type": "response.output_item.done", "sequence_number": 2, "output_index": 0, "item": search}),
        json!({"type": "response.output_item.added", "sequence_number": 3, "output_index": 1, "item": message("in_progress", "")}),
        json!({"type": "response.output_text.delta", "sequence_number": 4, "output_index": 1, "content_index": 0, "item_id": "msg_1", "delta": "People talk about agents."}),
        json!({"type": "response.output_item.done", "sequence_number": 5, "output_index": 1, "item": message("completed", "People talk about agents.")}),
        json!({"type": "response.completed", "sequence_number": 6, "response": response("completed")}),
    ]
}

/// The stream, however it is cut, checked against the Chat grammar.
fn stream(upstream: &[u8], ctx: &ChatContext) -> (ChatTranscript, LossReport) {
    let mut result = None;
    for seed in 0..4 {
        let (out, translator) = common::drive(StreamTranslator::new(ctx.clone()), upstream, seed);
        let transcript = chat_grammar::check(&parse_sse(&out), false)
            .unwrap_or_else(|v| panic!("seed {seed}: {v}\n{}", String::from_utf8_lossy(&out)));
        result = Some((transcript, translator.losses().clone()));
    }
    result.unwrap()
}

fn assert_left_out(losses: &LossReport, kind: &str) {
    let loss = losses
        .iter()
        .find(|l| l.path == "output[0]")
        .unwrap_or_else(|| panic!("no loss for the call: {losses:?}"));
    assert_eq!(loss.kind, LossKind::UnsupportedItem);
    assert!(
        loss.reason.contains("'x_keyword_search'"),
        "{}",
        loss.reason
    );
    assert!(loss.reason.contains(kind), "{}", loss.reason);
}

#[test]
fn a_call_the_backend_ran_is_left_out_of_a_stream() {
    for call_type in ["custom_tool_call", "function_call"] {
        let upstream = events(&searched_then_answered(call_type));
        let (t, losses) = stream(&upstream, &context());
        assert!(t.tool_calls.is_empty(), "{call_type}: {:?}", t.tool_calls);
        assert_eq!(t.text, "People talk about agents.");
        assert_eq!(t.finish_reason.as_deref(), Some("stop"), "{call_type}");
        assert_left_out(&losses, call_type);
    }
}

#[test]
fn the_clients_own_calls_still_come_through() {
    let mut upstream = searched_then_answered("custom_tool_call");
    let save = json!({"type": "function_call", "id": "fc_2", "status": "completed",
        "call_id": "call_2", "name": "save_note", "arguments": "{\"text\":\"agents\"}"});
    let completed = upstream.pop().unwrap();
    upstream.push(json!({"type": "response.output_item.added", "output_index": 2, "item": save}));
    upstream.push(json!({"type": "response.output_item.done", "output_index": 2, "item": save}));
    upstream.push(completed);
    let (t, losses) = stream(&events(&upstream), &context());
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].name, "save_note");
    assert_eq!(t.tool_calls[0].call_id, "call_2");
    assert_eq!(t.tool_calls[0].arguments, r#"{"text":"agents"}"#);
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    assert_left_out(&losses, "custom_tool_call");
}

#[test]
fn without_the_declared_tools_every_call_comes_through() {
    // A context made by hand knows nothing of the request's tools. (A
    // function call: the Chat grammar checker reads no custom calls.)
    let upstream = events(&searched_then_answered("function_call"));
    let (t, losses) = stream(&upstream, &ChatContext::default());
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    assert!(losses.is_empty(), "{losses:?}");
}

/// The same reply as a body.
fn body(call_type: &str, extra: Option<Value>) -> Vec<u8> {
    let events = searched_then_answered(call_type);
    let mut output = vec![events[2]["item"].clone(), events[5]["item"].clone()];
    output.extend(extra);
    let mut response = events[6]["response"].clone();
    response["output"] = Value::from(output);
    response.to_string().into_bytes()
}

fn message(translated: &[u8]) -> (Value, Value) {
    let chat: Value = serde_json::from_slice(translated).unwrap();
    let choice = &chat["choices"][0];
    (choice["message"].clone(), choice["finish_reason"].clone())
}

#[test]
fn a_call_the_backend_ran_is_left_out_of_a_body() {
    for call_type in ["custom_tool_call", "function_call"] {
        let translated = translate_body(&body(call_type, None), &context()).unwrap();
        let (message, finish) = message(&translated.body);
        assert!(message.get("tool_calls").is_none(), "{message}");
        assert_eq!(message["content"], "People talk about agents.");
        assert_eq!(finish, "stop");
        assert_left_out(&translated.losses, call_type);
        assert!(translated.summary.tool_calls.is_empty());
    }

    let save = json!({"type": "custom_tool_call", "id": "ctc_2", "status": "completed",
        "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"});
    let translated = translate_body(&body("custom_tool_call", Some(save)), &context()).unwrap();
    let (message, finish) = message(&translated.body);
    assert_eq!(message["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(message["tool_calls"][0]["custom"]["name"], "apply_patch");
    assert_eq!(finish, "tool_calls");

    let translated =
        translate_body(&body("custom_tool_call", None), &ChatContext::default()).unwrap();
    assert_eq!(message_calls(&translated.body), 1);
}

fn message_calls(body: &[u8]) -> usize {
    let (message, _) = message(body);
    message["tool_calls"].as_array().map_or(0, Vec::len)
}

#[test]
fn the_request_says_which_tools_the_client_declared() {
    let request = json!({
        "model": "m", "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"type": "function", "function": {"name": "f"}},
            {"type": "custom", "custom": {"name": "c"}},
        ],
        "functions": [{"name": "legacy"}],
        "web_search_options": {},
    });
    let ctx = translate_request(request.to_string().as_bytes(), &Options::default())
        .unwrap()
        .context;
    assert_eq!(
        ctx.declared_tools,
        Some(vec!["f".to_owned(), "c".to_owned(), "legacy".to_owned()])
    );
    let bare = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let ctx = translate_request(bare.to_string().as_bytes(), &Options::default())
        .unwrap()
        .context;
    assert_eq!(ctx.declared_tools, Some(Vec::new()));
}

/// The searched-then-answered reply with its call made to `name`.
fn called(call_type: &str, name: &str) -> Vec<Value> {
    let mut events = searched_then_answered(call_type);
    for event in &mut events[1..=2] {
        event["item"]["name"] = Value::from(name);
    }
    events
}

/// A backend that runs a call itself may send it as a `custom_tool_call`
/// although the client declared the tool as a function (xAI does; the
/// events are written by hand): the client reads a call to its function,
/// streamed or not.
#[test]
fn a_call_takes_the_form_its_tool_was_declared_in() {
    let (t, losses) = stream(
        &events(&called("custom_tool_call", "save_note")),
        &context(),
    );
    assert_eq!(t.tool_calls.len(), 1, "{:?}", t.tool_calls);
    assert_eq!(t.tool_calls[0].name, "save_note");
    assert_eq!(t.tool_calls[0].arguments, r#"{"query":"AI"}"#);
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    assert!(losses.is_empty(), "{losses:?}");

    let events = called("custom_tool_call", "save_note");
    let mut response = events[6]["response"].clone();
    response["output"] = Value::from(vec![events[2]["item"].clone()]);
    let translated = translate_body(response.to_string().as_bytes(), &context()).unwrap();
    let (reply, finish) = message(&translated.body);
    let call = &reply["tool_calls"][0];
    assert_eq!(call["type"], "function", "{call}");
    assert_eq!(call["function"]["name"], "save_note");
    assert_eq!(call["function"]["arguments"], r#"{"query":"AI"}"#);
    assert_eq!(finish, "tool_calls");

    // And a function call to a tool declared as custom is a custom call.
    let events = called("function_call", "apply_patch");
    let mut response = events[6]["response"].clone();
    response["output"] = Value::from(vec![events[2]["item"].clone()]);
    let translated = translate_body(response.to_string().as_bytes(), &context()).unwrap();
    let (reply, _) = message(&translated.body);
    let call = &reply["tool_calls"][0];
    assert_eq!(call["type"], "custom", "{call}");
    assert_eq!(call["custom"]["input"], r#"{"query":"AI"}"#);
}
