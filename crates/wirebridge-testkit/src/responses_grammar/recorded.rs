//! Lenient extraction of the content of recorded Responses streams and
//! bodies: the expected content to compare a translation against.

use crate::sse::SseFrame;
use crate::transcript::{absorb_output_items, str_field, ResponsesTranscript};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The content of a recorded upstream Responses stream, extracted leniently:
/// the expected content to compare a translation against.
///
/// Tolerates missing `sequence_number`s, rotating ids (GitHub Copilot),
/// trimmed streams whose deltas do not add up to the done text (the `.done`
/// events and the terminal `response.output` are the truth, not the deltas),
/// hosted items (`web_search_call`, …), unknown events and bad JSON frames.
///
/// * `response_id`: the first lifecycle event's `response.id`;
/// * content (`text`, `refusal`, `reasoning`, `function_calls`) from the
///   terminal event's `response.output` when non-empty, else from the items
///   rebuilt from the events (`output_item.done` items, else `.done` events,
///   else concatenated deltas) — so a stream cut off mid-item still counts;
/// * `output`: the terminal `response.output`, else the rebuilt items;
/// * `error`: an `error` event's nested `error` (or its flat
///   `code`/`message`/`param`), else the terminal `response.error`.
pub fn transcript_of_recorded(frames: &[SseFrame]) -> ResponsesTranscript {
    let events: Vec<Value> = frames
        .iter()
        .filter_map(|f| serde_json::from_str::<Value>(&f.data).ok())
        .filter(Value::is_object)
        .collect();
    let mut t = ResponsesTranscript::default();
    let mut terminal: Option<(&str, &Value)> = None;
    for e in &events {
        let ty = str_field(e, "type");
        if let Some(resp) = e.get("response").filter(|r| r.is_object()) {
            if t.response_id.is_empty() {
                t.response_id = str_field(resp, "id").to_string();
            }
            if let Some(s) = resp.get("status").and_then(Value::as_str) {
                t.status = s.to_string();
            }
            if matches!(
                ty,
                "response.completed" | "response.incomplete" | "response.failed"
            ) {
                terminal = Some((ty, resp));
            }
        }
        if ty == "error" && t.error.is_none() {
            t.error = Some(match e.get("error") {
                Some(err @ Value::Object(_)) => err.clone(),
                _ => json!({
                    "type": e.get("type").cloned().unwrap_or(Value::Null),
                    "code": e.get("code").cloned().unwrap_or(Value::Null),
                    "message": e.get("message").cloned().unwrap_or(Value::Null),
                    "param": e.get("param").cloned().unwrap_or(Value::Null),
                }),
            });
        }
    }
    let rebuilt = rebuild_items(&events);
    let mut items = rebuilt.clone();
    if let Some((ty, resp)) = terminal {
        if t.status.is_empty() || resp.get("status").is_none() {
            t.status = ty.trim_start_matches("response.").to_string();
        }
        if let Some(u) = resp.get("usage").filter(|u| !u.is_null()) {
            t.usage = Some(u.clone());
        }
        if t.error.is_none() {
            t.error = resp.get("error").filter(|e| !e.is_null()).cloned();
        }
        t.incomplete_reason = resp
            .get("incomplete_details")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let out = resp
            .get("output")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !out.is_empty() {
            items = out.clone();
        }
        t.output = out;
    } else {
        t.output = rebuilt;
    }
    absorb_output_items(&mut t, &items);
    t
}

/// Rebuild complete output items from stream events, in `output_index` order
/// (falling back to arrival order when `output_index` is missing).
fn rebuild_items(events: &[Value]) -> Vec<Value> {
    #[derive(Default)]
    struct Acc {
        added: Option<Value>,
        done: Option<Value>,
        // (content_index -> (kind, deltas, done text))
        parts: BTreeMap<u64, (String, String, Option<String>)>,
        summaries: BTreeMap<u64, (String, Option<String>)>,
        rtexts: BTreeMap<u64, (String, Option<String>)>,
        args: String,
        args_done: Option<String>,
        name: Option<String>,
    }
    let mut items: BTreeMap<u64, Acc> = BTreeMap::new();
    let mut last_index = 0u64;
    for e in events {
        let ty = str_field(e, "type");
        let idx = match e.get("output_index").and_then(Value::as_u64) {
            Some(i) => {
                last_index = i;
                i
            }
            None if e.get("item_id").is_some() || e.get("item").is_some() => last_index,
            None => continue,
        };
        let acc = items.entry(idx).or_default();
        let ci = e.get("content_index").and_then(Value::as_u64).unwrap_or(0);
        let si = e.get("summary_index").and_then(Value::as_u64).unwrap_or(0);
        let s = |k: &str| str_field(e, k).to_string();
        match ty {
            "response.output_item.added" => acc.added = e.get("item").cloned(),
            "response.output_item.done" => acc.done = e.get("item").cloned(),
            "response.content_part.added" => {
                let kind = e
                    .get("part")
                    .map(|p| str_field(p, "type").to_string())
                    .unwrap_or_else(|| "output_text".into());
                acc.parts.entry(ci).or_insert((kind, String::new(), None));
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let kind = if ty == "response.output_text.delta" {
                    "output_text"
                } else {
                    "refusal"
                };
                acc.parts
                    .entry(ci)
                    .or_insert((kind.to_string(), String::new(), None))
                    .1
                    .push_str(str_field(e, "delta"));
            }
            "response.output_text.done" => {
                acc.parts
                    .entry(ci)
                    .or_insert(("output_text".into(), String::new(), None))
                    .2 = Some(s("text"));
            }
            "response.refusal.done" => {
                acc.parts
                    .entry(ci)
                    .or_insert(("refusal".into(), String::new(), None))
                    .2 = Some(s("refusal"));
            }
            "response.reasoning_summary_text.delta" => acc
                .summaries
                .entry(si)
                .or_default()
                .0
                .push_str(str_field(e, "delta")),
            "response.reasoning_summary_text.done" => {
                acc.summaries.entry(si).or_default().1 = Some(s("text"))
            }
            "response.reasoning_text.delta" => acc
                .rtexts
                .entry(ci)
                .or_default()
                .0
                .push_str(str_field(e, "delta")),
            "response.reasoning_text.done" => acc.rtexts.entry(ci).or_default().1 = Some(s("text")),
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                acc.args.push_str(str_field(e, "delta"))
            }
            "response.function_call_arguments.done" => {
                acc.args_done = Some(s("arguments"));
                if let Some(n) = e.get("name").and_then(Value::as_str) {
                    acc.name = Some(n.to_string());
                }
            }
            "response.custom_tool_call_input.done" => acc.args_done = Some(s("input")),
            _ => {}
        }
    }
    items
        .into_values()
        .filter_map(|acc| {
            if let Some(done) = acc.done {
                return Some(done);
            }
            let mut item = acc.added?;
            let pick = |d: &(String, Option<String>)| d.1.clone().unwrap_or_else(|| d.0.clone());
            match str_field(&item, "type") {
                "message" => {
                    let content: Vec<Value> = acc
                        .parts
                        .values()
                        .map(|(kind, deltas, done)| {
                            let text = done.clone().unwrap_or_else(|| deltas.clone());
                            if kind == "refusal" {
                                json!({"type": "refusal", "refusal": text})
                            } else {
                                json!({"type": "output_text", "text": text, "annotations": []})
                            }
                        })
                        .collect();
                    item["content"] = Value::Array(content);
                }
                "reasoning" => {
                    item["summary"] = acc
                        .summaries
                        .values()
                        .map(|d| json!({"type": "summary_text", "text": pick(d)}))
                        .collect();
                    if !acc.rtexts.is_empty() {
                        item["content"] = acc
                            .rtexts
                            .values()
                            .map(|d| json!({"type": "reasoning_text", "text": pick(d)}))
                            .collect();
                    }
                }
                "function_call" => {
                    item["arguments"] = Value::String(acc.args_done.unwrap_or(acc.args));
                    if let Some(n) = acc.name {
                        if str_field(&item, "name").is_empty() {
                            item["name"] = Value::String(n);
                        }
                    }
                }
                "custom_tool_call" => {
                    item["input"] = Value::String(acc.args_done.unwrap_or(acc.args));
                }
                _ => {}
            }
            Some(item)
        })
        .collect()
}

/// The content of a non-streaming Responses body (a `Response` object), or of
/// an HTTP error body `{"error": {...}}` (then only `error` is set).
pub fn responses_body_transcript(body: &Value) -> ResponsesTranscript {
    let mut t = ResponsesTranscript {
        response_id: str_field(body, "id").to_string(),
        status: str_field(body, "status").to_string(),
        usage: body.get("usage").filter(|u| !u.is_null()).cloned(),
        error: body.get("error").filter(|e| !e.is_null()).cloned(),
        incomplete_reason: body
            .get("incomplete_details")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_string),
        output: body
            .get("output")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        ..Default::default()
    };
    let items = t.output.clone();
    absorb_output_items(&mut t, &items);
    t
}
