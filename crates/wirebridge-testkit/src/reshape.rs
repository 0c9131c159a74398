//! One reply in the other transport: a body as the stream a server would
//! have sent for it, and a stream folded into the body it amounts to, for
//! both APIs.
//!
//! Written independently of the translators (plain `serde_json::Value`
//! walking), so a test can feed a translator the same reply both ways and
//! check that its streaming and non-streaming paths agree.

use serde_json::{json, Map, Value};

use crate::sse::{encode_sse, SseFrame};

/// Splits a text into up to three fragments at character boundaries.
fn fragments(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() < 3 {
        return vec![text.to_owned()];
    }
    let third = chars.len() / 3;
    vec![
        chars[..third].iter().collect(),
        chars[third..2 * third].iter().collect(),
        chars[2 * third..].iter().collect(),
    ]
}

fn chat_chunk(body: &Value, choices: Vec<Value>) -> SseFrame {
    let mut chunk = json!({
        "id": body.get("id").cloned().unwrap_or(json!("chatcmpl-reshaped")),
        "object": "chat.completion.chunk",
        "created": body.get("created").cloned().unwrap_or(json!(0)),
        "model": body.get("model").cloned().unwrap_or(json!("")),
        "choices": choices,
    });
    if let Some(fp) = body.get("system_fingerprint") {
        chunk["system_fingerprint"] = fp.clone();
    }
    SseFrame::data(chunk.to_string())
}

fn delta(index: &Value, delta: Value) -> Value {
    json!({"index": index, "delta": delta, "finish_reason": null})
}

/// The stream a Chat server would send for a `chat.completion` body: a role
/// chunk, reasoning, content (a string in fragments, or a part array one
/// part per chunk), refusal and tool calls (id, type and name first, then
/// the arguments in fragments) for every choice, a finish chunk, the usage
/// chunk, and `[DONE]`. An error body becomes an in-band error chunk.
pub fn chat_body_as_stream(body: &Value) -> Vec<u8> {
    if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
        let frames = [SseFrame::data(json!({"error": error}).to_string())];
        return encode_sse(&frames);
    }
    let mut frames = Vec::new();
    let choices = body["choices"].as_array().cloned().unwrap_or_default();
    for choice in &choices {
        let index = choice.get("index").cloned().unwrap_or(json!(0));
        let message = &choice["message"];
        frames.push(chat_chunk(
            body,
            vec![delta(&index, json!({"role": "assistant"}))],
        ));
        // The log probabilities travel with the first content fragment.
        let mut logprobs = choice.get("logprobs").filter(|l| !l.is_null()).cloned();
        for field in ["reasoning_content", "reasoning"] {
            if let Some(text) = message.get(field).and_then(Value::as_str) {
                for piece in fragments(text) {
                    frames.push(chat_chunk(body, vec![delta(&index, json!({field: piece}))]));
                }
            }
        }
        match message.get("content") {
            Some(Value::String(text)) => {
                for piece in fragments(text) {
                    let mut c = delta(&index, json!({"content": piece}));
                    if let Some(l) = logprobs.take() {
                        c["logprobs"] = l;
                    }
                    frames.push(chat_chunk(body, vec![c]));
                }
            }
            Some(Value::Array(parts)) => {
                for part in parts {
                    let d = json!({"content": [part]});
                    frames.push(chat_chunk(body, vec![delta(&index, d)]));
                }
            }
            _ => {}
        }
        if let Some(text) = message.get("refusal").and_then(Value::as_str) {
            for piece in fragments(text) {
                frames.push(chat_chunk(
                    body,
                    vec![delta(&index, json!({"refusal": piece}))],
                ));
            }
        }
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (n, call) in calls.iter().enumerate() {
            let function = &call["function"];
            let head = json!({"tool_calls": [{"index": n, "id": call["id"], "type": "function",
                "function": {"name": function["name"], "arguments": ""}}]});
            frames.push(chat_chunk(body, vec![delta(&index, head)]));
            let arguments = function["arguments"].as_str().unwrap_or_default();
            for piece in fragments(arguments) {
                let d = json!({"tool_calls": [{"index": n, "function": {"arguments": piece}}]});
                frames.push(chat_chunk(body, vec![delta(&index, d)]));
            }
        }
        let finish = json!({"index": index, "delta": {}, "finish_reason": choice["finish_reason"]});
        frames.push(chat_chunk(body, vec![finish]));
    }
    if let Some(usage) = body.get("usage").filter(|u| !u.is_null()) {
        let mut chunk: Value = serde_json::from_str(&chat_chunk(body, Vec::new()).data).unwrap();
        chunk["usage"] = usage.clone();
        frames.push(SseFrame::data(chunk.to_string()));
    }
    frames.push(SseFrame::data("[DONE]"));
    encode_sse(&frames)
}

/// One choice being folded.
#[derive(Default)]
struct FoldedChoice {
    content: Option<String>,
    parts: Vec<Value>,
    refusal: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    calls: Vec<Map<String, Value>>,
    logprobs: Vec<Value>,
    finish_reason: Value,
}

fn append(slot: &mut Option<String>, value: Option<&Value>) {
    if let Some(text) = value.and_then(Value::as_str) {
        slot.get_or_insert_with(String::new).push_str(text);
    }
}

/// The `chat.completion` body a Chat stream amounts to: fragments joined
/// per choice, tool calls assembled by `index`, the finish reason and the
/// usage of the stream. A stream with an error chunk folds into the error.
pub fn chat_stream_as_body(frames: &[SseFrame]) -> Value {
    let mut head = Map::new();
    let mut choices: Vec<(u64, FoldedChoice)> = Vec::new();
    let mut usage = Value::Null;
    for frame in frames.iter().filter(|f| f.data != "[DONE]") {
        let Ok(chunk) = serde_json::from_str::<Value>(&frame.data) else {
            continue;
        };
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return json!({"error": error});
        }
        for key in ["id", "created", "model"] {
            if let Some(v) = chunk
                .get(key)
                .filter(|v| !v.is_null() && v.as_str() != Some(""))
            {
                head.entry(key).or_insert(v.clone());
            }
        }
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            usage = u.clone();
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let index = choice["index"].as_u64().unwrap_or(0);
            let slot = match choices.iter().position(|(i, _)| *i == index) {
                Some(at) => at,
                None => {
                    choices.push((index, FoldedChoice::default()));
                    choices.len() - 1
                }
            };
            let folded = &mut choices[slot].1;
            let d = &choice["delta"];
            // Once a part array arrived, text strings become text parts, so
            // the order of thinking and text is kept.
            match d.get("content") {
                Some(Value::Array(parts)) => {
                    if let Some(text) = folded.content.take() {
                        folded.parts.push(json!({"type": "text", "text": text}));
                    }
                    folded.parts.extend(parts.iter().cloned());
                }
                Some(Value::String(text)) if !folded.parts.is_empty() => {
                    folded.parts.push(json!({"type": "text", "text": text}));
                }
                other => append(&mut folded.content, other),
            }
            append(&mut folded.refusal, d.get("refusal"));
            append(&mut folded.reasoning_content, d.get("reasoning_content"));
            append(&mut folded.reasoning, d.get("reasoning"));
            for call in d["tool_calls"].as_array().into_iter().flatten() {
                let n = call["index"].as_u64().unwrap_or(0) as usize;
                while folded.calls.len() <= n {
                    let mut empty = Map::new();
                    empty.insert("type".into(), json!("function"));
                    empty.insert("function".into(), json!({"name": "", "arguments": ""}));
                    folded.calls.push(empty);
                }
                let target = &mut folded.calls[n];
                if let Some(id) = call.get("id").filter(|v| v.is_string()) {
                    target.insert("id".into(), id.clone());
                }
                let function = target.get_mut("function").unwrap();
                if let Some(name) = call["function"]["name"].as_str().filter(|n| !n.is_empty()) {
                    function["name"] = json!(name);
                }
                if let Some(args) = call["function"]["arguments"].as_str() {
                    let joined = function["arguments"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                        + args;
                    function["arguments"] = json!(joined);
                }
            }
            if let Some(entries) = choice["logprobs"]["content"].as_array() {
                folded.logprobs.extend(entries.iter().cloned());
            }
            if !choice["finish_reason"].is_null() {
                folded.finish_reason = choice["finish_reason"].clone();
            }
        }
    }
    let choices: Vec<Value> = choices
        .into_iter()
        .map(|(index, c)| {
            let content = if c.parts.is_empty() {
                json!(c.content)
            } else {
                Value::Array(c.parts)
            };
            let mut message =
                json!({"role": "assistant", "content": content, "refusal": c.refusal});
            if let Some(r) = c.reasoning_content {
                message["reasoning_content"] = json!(r);
            }
            if let Some(r) = c.reasoning {
                message["reasoning"] = json!(r);
            }
            if !c.calls.is_empty() {
                message["tool_calls"] = json!(c.calls);
            }
            let logprobs = if c.logprobs.is_empty() {
                Value::Null
            } else {
                json!({"content": c.logprobs, "refusal": null})
            };
            json!({"index": index, "message": message, "logprobs": logprobs,
                "finish_reason": c.finish_reason})
        })
        .collect();
    let mut body = Value::Object(head);
    body["object"] = json!("chat.completion");
    body["choices"] = Value::Array(choices);
    if !usage.is_null() {
        body["usage"] = usage;
    }
    body
}

/// Builds Responses events, numbering them.
struct Events {
    frames: Vec<SseFrame>,
}

impl Events {
    fn push(&mut self, ty: &str, mut fields: Value) {
        fields["type"] = json!(ty);
        fields["sequence_number"] = json!(self.frames.len());
        self.frames.push(SseFrame::named(ty, fields.to_string()));
    }
}

/// The stream a Responses server would send for a `Response` body:
/// created and in_progress, each output item opened, its text, refusal,
/// reasoning, arguments or input streamed in fragments and closed, then the
/// terminal event carrying the body.
pub fn responses_body_as_stream(body: &Value) -> Vec<u8> {
    let mut e = Events { frames: Vec::new() };
    let mut start = body.clone();
    start["status"] = json!("in_progress");
    start["output"] = json!([]);
    start["usage"] = Value::Null;
    e.push("response.created", json!({"response": start}));
    e.push("response.in_progress", json!({"response": start}));
    for (oi, item) in body["output"].as_array().into_iter().flatten().enumerate() {
        let id = item["id"].clone();
        let sub = |extra: Value| {
            let mut v = json!({"item_id": id, "output_index": oi});
            for (k, val) in extra.as_object().unwrap() {
                v[k] = val.clone();
            }
            v
        };
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        match item["type"].as_str() {
            Some("message") | Some("reasoning") => {
                if item.get("content").is_some() {
                    added["content"] = json!([]);
                }
                if item.get("summary").is_some() {
                    added["summary"] = json!([]);
                }
            }
            Some("function_call") => added["arguments"] = json!(""),
            Some("custom_tool_call") => added["input"] = json!(""),
            _ => {}
        }
        e.push(
            "response.output_item.added",
            json!({"output_index": oi, "item": added}),
        );
        match item["type"].as_str() {
            Some("message") => {
                for (ci, part) in item["content"].as_array().into_iter().flatten().enumerate() {
                    let (field, delta_type, done_type) = match part["type"].as_str() {
                        Some("refusal") => {
                            ("refusal", "response.refusal.delta", "response.refusal.done")
                        }
                        _ => (
                            "text",
                            "response.output_text.delta",
                            "response.output_text.done",
                        ),
                    };
                    let mut empty = part.clone();
                    empty[field] = json!("");
                    e.push(
                        "response.content_part.added",
                        sub(json!({"content_index": ci, "part": empty})),
                    );
                    let text = part[field].as_str().unwrap_or_default();
                    for piece in fragments(text) {
                        let mut d = sub(json!({"content_index": ci, "delta": piece}));
                        if field == "text" {
                            d["logprobs"] = json!([]);
                        }
                        e.push(delta_type, d);
                    }
                    let mut done = sub(json!({"content_index": ci, field: text}));
                    if field == "text" {
                        done["logprobs"] = part.get("logprobs").cloned().unwrap_or(json!([]));
                    }
                    e.push(done_type, done);
                    e.push(
                        "response.content_part.done",
                        sub(json!({"content_index": ci, "part": part})),
                    );
                }
            }
            Some("reasoning") => {
                for (si, part) in item["summary"].as_array().into_iter().flatten().enumerate() {
                    let text = part["text"].as_str().unwrap_or_default();
                    let empty = json!({"type": "summary_text", "text": ""});
                    e.push(
                        "response.reasoning_summary_part.added",
                        sub(json!({"summary_index": si, "part": empty})),
                    );
                    for piece in fragments(text) {
                        e.push(
                            "response.reasoning_summary_text.delta",
                            sub(json!({"summary_index": si, "delta": piece})),
                        );
                    }
                    e.push(
                        "response.reasoning_summary_text.done",
                        sub(json!({"summary_index": si, "text": text})),
                    );
                    e.push(
                        "response.reasoning_summary_part.done",
                        sub(json!({"summary_index": si, "part": part})),
                    );
                }
                for (ci, part) in item["content"].as_array().into_iter().flatten().enumerate() {
                    let text = part["text"].as_str().unwrap_or_default();
                    for piece in fragments(text) {
                        e.push(
                            "response.reasoning_text.delta",
                            sub(json!({"content_index": ci, "delta": piece})),
                        );
                    }
                    e.push(
                        "response.reasoning_text.done",
                        sub(json!({"content_index": ci, "text": text})),
                    );
                }
            }
            Some("function_call") => {
                let args = item["arguments"].as_str().unwrap_or_default();
                for piece in fragments(args) {
                    e.push(
                        "response.function_call_arguments.delta",
                        sub(json!({"delta": piece})),
                    );
                }
                e.push(
                    "response.function_call_arguments.done",
                    sub(json!({"name": item["name"], "arguments": args})),
                );
            }
            Some("custom_tool_call") => {
                let input = item["input"].as_str().unwrap_or_default();
                for piece in fragments(input) {
                    e.push(
                        "response.custom_tool_call_input.delta",
                        sub(json!({"delta": piece})),
                    );
                }
                e.push(
                    "response.custom_tool_call_input.done",
                    sub(json!({"input": input})),
                );
            }
            _ => {}
        }
        e.push(
            "response.output_item.done",
            json!({"output_index": oi, "item": item}),
        );
    }
    let terminal = match body["status"].as_str() {
        Some("incomplete") => "response.incomplete",
        Some("failed") => {
            let error = body["error"].clone();
            e.push(
                "error",
                json!({"error": {"type": "server_error", "code": error["code"],
                "message": error["message"], "param": null}}),
            );
            "response.failed"
        }
        _ => "response.completed",
    };
    e.push(terminal, json!({"response": body}));
    encode_sse(&e.frames)
}

/// The `Response` a Responses stream amounts to: the response of its
/// terminal event, with the `output_item.done` items as its output when the
/// terminal event left them out.
pub fn responses_stream_as_body(frames: &[SseFrame]) -> Value {
    let mut done_items: Vec<(u64, Value)> = Vec::new();
    let mut body = Value::Null;
    for frame in frames {
        let Ok(event) = serde_json::from_str::<Value>(&frame.data) else {
            continue;
        };
        match event["type"].as_str() {
            Some("response.output_item.done") => {
                let index = event["output_index"]
                    .as_u64()
                    .unwrap_or(done_items.len() as u64);
                done_items.push((index, event["item"].clone()));
            }
            Some("response.completed" | "response.incomplete" | "response.failed") => {
                body = event["response"].clone();
            }
            _ => {}
        }
    }
    let empty = body["output"].as_array().is_none_or(Vec::is_empty);
    if empty && !done_items.is_empty() {
        done_items.sort_by_key(|(i, _)| *i);
        body["output"] = Value::Array(done_items.into_iter().map(|(_, item)| item).collect());
    }
    body
}
