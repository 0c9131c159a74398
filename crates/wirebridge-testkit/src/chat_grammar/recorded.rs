//! Lenient extraction of the content of recorded Chat streams and bodies:
//! the expected content to compare a translation against.

use crate::sse::SseFrame;
use crate::transcript::{str_field, ChatTranscript, ToolCallRecord};
use serde_json::Value;
use std::collections::BTreeMap;

/// The content of a recorded upstream Chat stream, extracted leniently: the
/// expected content to compare a translation against.
///
/// Tolerates Azure's leading chunk (`id: ""`, `choices: []`), usage anywhere
/// (top level of any chunk, or inside a choice), `reasoning_content` /
/// `reasoning` (string), `null` fields, several choices (only index 0
/// counts; a choice without `index` counts as 0), tool-call fragments keyed
/// by `index` (falling back to the `id` → index map, then to the last
/// index), names repeated as `""`, missing `[DONE]`, bad JSON frames and
/// error chunks.
pub fn transcript_of_recorded(frames: &[SseFrame]) -> ChatTranscript {
    let mut t = ChatTranscript::default();
    let mut calls: BTreeMap<u64, ToolCallRecord> = BTreeMap::new();
    let mut id_to_index: BTreeMap<String, u64> = BTreeMap::new();
    let mut last_index: Option<u64> = None;
    for f in frames {
        let v: Value = match serde_json::from_str(&f.data) {
            Ok(v @ Value::Object(_)) => v,
            _ => continue,
        };
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            t.error.get_or_insert_with(|| err.clone());
            continue;
        }
        if t.id.is_empty() {
            t.id = str_field(&v, "id").to_string();
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            t.usage = Some(u.clone());
        }
        for c in v
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(u) = c.get("usage").filter(|u| u.is_object()) {
                t.usage = Some(u.clone());
            }
            if c.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(r) = c.get("finish_reason").and_then(Value::as_str) {
                if !r.is_empty() {
                    t.finish_reason = Some(r.to_string());
                }
            }
            let Some(delta) = c.get("delta").or_else(|| c.get("message")) else {
                continue;
            };
            t.text.push_str(str_field(delta, "content"));
            t.refusal.push_str(str_field(delta, "refusal"));
            match delta.get("reasoning_content") {
                Some(Value::String(s)) => t.reasoning.push_str(s),
                _ => t.reasoning.push_str(str_field(delta, "reasoning")),
            }
            for tc in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let id = str_field(tc, "id");
                let index = tc
                    .get("index")
                    .and_then(Value::as_u64)
                    .or_else(|| id_to_index.get(id).copied())
                    .or(last_index)
                    .unwrap_or(0);
                last_index = Some(index);
                let rec = calls.entry(index).or_insert_with(|| ToolCallRecord {
                    item_type: "function_call".to_string(),
                    ..Default::default()
                });
                if !id.is_empty() {
                    id_to_index.insert(id.to_string(), index);
                    if rec.call_id.is_empty() {
                        rec.call_id = id.to_string();
                    }
                }
                if let Some(func) = tc.get("function") {
                    let name = str_field(func, "name");
                    if rec.name.is_empty() && !name.is_empty() {
                        rec.name = name.to_string();
                    }
                    match func.get("arguments") {
                        Some(Value::String(s)) => rec.arguments.push_str(s),
                        Some(Value::Null) | None => {}
                        Some(other) => rec.arguments.push_str(&other.to_string()),
                    }
                }
            }
        }
    }
    t.tool_calls = calls.into_values().collect();
    t
}

/// The content of a non-streaming Chat completion body (choice index 0), or
/// of an HTTP error body `{"error": {...}}` (then only `error` is set).
/// `message.content` may be a string or an array of text parts; custom tool
/// calls (`type: "custom"`) are recorded as `custom_tool_call`.
pub fn chat_body_transcript(body: &Value) -> ChatTranscript {
    let mut t = ChatTranscript {
        id: str_field(body, "id").to_string(),
        usage: body.get("usage").filter(|u| !u.is_null()).cloned(),
        error: body.get("error").filter(|e| !e.is_null()).cloned(),
        ..Default::default()
    };
    let choices = body.get("choices").and_then(Value::as_array);
    let Some(choice) = choices.and_then(|cs| {
        cs.iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
    }) else {
        return t;
    };
    t.finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    let Some(msg) = choice.get("message") else {
        return t;
    };
    match msg.get("content") {
        Some(Value::String(s)) => t.text.push_str(s),
        Some(Value::Array(parts)) => {
            for p in parts {
                match str_field(p, "type") {
                    "refusal" => t.refusal.push_str(str_field(p, "refusal")),
                    _ => t.text.push_str(str_field(p, "text")),
                }
            }
        }
        _ => {}
    }
    t.refusal.push_str(str_field(msg, "refusal"));
    match msg.get("reasoning_content") {
        Some(Value::String(s)) => t.reasoning.push_str(s),
        _ => t.reasoning.push_str(str_field(msg, "reasoning")),
    }
    for tc in msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let rec = if str_field(tc, "type") == "custom" {
            let custom = tc.get("custom").cloned().unwrap_or(Value::Null);
            ToolCallRecord {
                name: str_field(&custom, "name").to_string(),
                call_id: str_field(tc, "id").to_string(),
                arguments: str_field(&custom, "input").to_string(),
                item_type: "custom_tool_call".to_string(),
            }
        } else {
            let func = tc.get("function").cloned().unwrap_or(Value::Null);
            ToolCallRecord {
                name: str_field(&func, "name").to_string(),
                call_id: str_field(tc, "id").to_string(),
                arguments: match func.get("arguments") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                },
                item_type: "function_call".to_string(),
            }
        };
        t.tool_calls.push(rec);
    }
    t
}
