//! The inputs of the cases, built from the recorded fixtures: the Codex
//! requests, the streams extended from recorded ones, and the reply bodies
//! those streams add up to.

use std::path::Path;

use serde_json::{json, Value};

pub(super) const CODEX_REQUEST: &str =
    "codex-peer/codex-exec-0.169.0-request-2-with-function_call_output.json";
pub(super) const CHAT_STREAM: &str = "vercel-ai/chat/openai-text.chunks.txt";
pub(super) const RESPONSES_STREAM: &str =
    "vercel-ai/responses/openai-reasoning-encrypted-content-gpt-5-4-split.1.chunks.txt";

pub(super) fn load(shared: &Path, rel: &str) -> Result<Vec<u8>, String> {
    let path = shared.join("fixtures").join(rel);
    std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The recorded Codex request body.
pub(super) fn codex_body(shared: &Path) -> Result<Value, String> {
    let codex: Value = serde_json::from_slice(&load(shared, CODEX_REQUEST)?)
        .map_err(|e| format!("{CODEX_REQUEST}: {e}"))?;
    Ok(codex.get("body").cloned().unwrap_or(codex))
}

/// The ~3 KB Codex turn of the `request_3k` cases, as a Responses request,
/// from the fixtures in `shared`.
pub fn codex_turn(shared: &Path) -> Result<Vec<u8>, String> {
    Ok(to_bytes(&small_request(&codex_body(shared)?)))
}

/// The Codex instructions from the fixtures in `shared`: recorded prose,
/// for requests that need text.
pub fn codex_prose(shared: &Path) -> Result<String, String> {
    let body = codex_body(shared)?;
    Ok(first_text(&body["input"][0]).to_owned())
}

/// The tools of the recorded Codex request (~18 KB of JSON), which a
/// `Response` object echoes back.
pub fn codex_tools(shared: &Path) -> Result<Value, String> {
    Ok(codex_body(shared)?["tools"].clone())
}

pub(super) fn to_bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("values serialize")
}

pub(super) fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `text` cut to at most `max` bytes, at a line end when there is one.
fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &text[..end];
    cut[..cut.rfind('\n').unwrap_or(cut.len())].to_owned()
}

fn first_text(item: &Value) -> &str {
    item.pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A ~3 KB Codex turn: shortened instructions, the environment, the user's
/// question, a tool call and its result, and three tools.
pub(super) fn small_request(body: &Value) -> Value {
    let mut request = body.clone();
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let mut kept = Vec::new();
    for (i, item) in input.iter().enumerate() {
        let mut item = item.clone();
        if i == 0 {
            item["content"][0]["text"] = Value::from(truncate(first_text(&item), 900));
        } else if first_text(&item).starts_with("<skills_instructions>") {
            continue;
        }
        kept.push(item);
    }
    request["input"] = Value::Array(kept);
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    request["tools"] = Value::Array(
        tools
            .into_iter()
            .filter(|t| {
                matches!(t["name"].as_str(), Some("write_stdin" | "view_image"))
                    || t["type"] == "web_search"
            })
            .collect(),
    );
    if let Some(map) = request.as_object_mut() {
        map.remove("client_metadata");
    }
    request
}

/// A ~50 KB request: the whole Codex request, with earlier turns (a
/// question, a command, its output, an answer) before the last question.
pub(super) fn large_request(body: &Value) -> Value {
    conversation(body, 49_000)
}

/// The whole Codex request with earlier turns (a question, a command, its
/// output, an answer) before the last question, until it holds at least
/// `target` bytes of JSON, from the fixtures in `shared`.
pub fn codex_conversation(shared: &Path, target: usize) -> Result<Vec<u8>, String> {
    Ok(to_bytes(&conversation(&codex_body(shared)?, target)))
}

fn conversation(body: &Value, target: usize) -> Value {
    let mut request = body.clone();
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let prose = first_text(&input[0]).to_owned();
    let question = input
        .iter()
        .position(|i| i["role"] == "user" && first_text(i) == "weather in SF?")
        .unwrap_or(input.len());
    let (head, tail) = input.split_at(question);
    let mut items: Vec<Value> = head.to_vec();
    // The size is counted as items are added rather than by writing the
    // whole request again for each turn: an item added to a non-empty array
    // adds its own JSON and a comma.
    let mut size = {
        let mut r = request.clone();
        let mut all = items.clone();
        all.extend_from_slice(tail);
        r["input"] = Value::Array(all);
        to_bytes(&r).len()
    };
    let mut turn = 0;
    while size < target && turn <= target / 100 {
        let at = (turn * 997) % prose.len().saturating_sub(1200).max(1);
        let mut start = at;
        while !prose.is_char_boundary(start) {
            start += 1;
        }
        let excerpt = truncate(&prose[start..], 900);
        let call_id = format!("call_turn{turn:02}");
        let turn_items = [
            json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": format!("Step {turn}: show me the next part of the guidelines.")}]}),
            json!({"type": "function_call", "name": "exec_command", "call_id": call_id,
                "arguments": format!("{{\"cmd\":\"sed -n '{},{}p' AGENTS.md\",\"yield_time_ms\":1000}}", turn * 40 + 1, turn * 40 + 40)}),
            json!({"type": "function_call_output", "call_id": call_id,
                "output": format!("Chunk ID: {turn:04x}\nWall time: 0.0021 seconds\nProcess exited with code 0\nOutput:\n{excerpt}")}),
            json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": truncate(&excerpt, 300)}]}),
        ];
        for item in turn_items {
            size += to_bytes(&item).len() + 1;
            items.push(item);
        }
        turn += 1;
    }
    items.extend_from_slice(tail);
    request["input"] = Value::Array(items);
    request
}

/// A Chat stream of `n` events: the recorded first chunk, recorded content
/// chunks repeated, the finish and usage chunks, and `[DONE]`.
pub(super) fn chat_stream(lines: &[String], n: usize) -> Vec<String> {
    let (first, rest) = lines.split_first().expect("a recorded stream");
    let finish = rest
        .iter()
        .position(|l| l.contains("\"finish_reason\":\"stop\""));
    let finish = finish.expect("the recording has a finish chunk");
    let content = &rest[..finish];
    let mut events = vec![first.clone()];
    events.extend(
        content
            .iter()
            .cycle()
            .take(n - 1 - (rest.len() - finish) - 1)
            .cloned(),
    );
    events.extend(rest[finish..].iter().cloned());
    events.push("[DONE]".to_owned());
    events
}

/// A Responses stream of `n` events: the recorded message item, its
/// recorded text deltas repeated, and the closing events carrying the whole
/// text, as the Responses API sends them.
pub(super) fn responses_stream(lines: &[String], n: usize) -> Vec<String> {
    let events: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    fn of<'e>(events: &'e [Value], kind: &'e str) -> impl Iterator<Item = &'e Value> {
        events.iter().filter(move |e| e["type"] == kind)
    }
    let of = |kind: &'static str| of(&events, kind);
    let one = |kind: &'static str| {
        of(kind)
            .last()
            .cloned()
            .expect("the recording has the event")
    };
    let deltas: Vec<&Value> = of("response.output_text.delta").collect();
    let count = n - 8;
    let mut out = vec![one("response.created"), one("response.in_progress")];
    out.push(
        of("response.output_item.added")
            .last()
            .cloned()
            .expect("a message item"),
    );
    out.push(one("response.content_part.added"));
    let mut text = String::new();
    for delta in deltas.iter().cycle().take(count) {
        text.push_str(delta["delta"].as_str().unwrap_or_default());
        out.push((*delta).clone());
    }
    let mut done = one("response.output_text.done");
    done["text"] = Value::from(text.as_str());
    let mut part = one("response.content_part.done");
    part["part"]["text"] = Value::from(text.as_str());
    let mut item = of("response.output_item.done")
        .last()
        .cloned()
        .expect("the message item");
    item["item"]["content"][0]["text"] = Value::from(text.as_str());
    let mut completed = one("response.completed");
    completed["response"]["output"] = json!([item["item"].clone()]);
    out.extend([done, part, item, completed]);
    for (seq, event) in out.iter_mut().enumerate() {
        event["sequence_number"] = Value::from(seq);
    }
    out.iter()
        .map(|e| String::from_utf8(to_bytes(e)).expect("JSON is UTF-8"))
        .collect()
}

/// A Messages stream of `n` events: a message with one text block whose
/// deltas are the recorded Chat stream's content, repeated, as a Messages
/// backend would stream the same answer.
pub(super) fn messages_stream(chat_lines: &[String], n: usize) -> Vec<String> {
    let deltas: Vec<String> = chat_lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|chunk| {
            chunk
                .pointer("/choices/0/delta/content")?
                .as_str()
                .map(str::to_owned)
        })
        .filter(|text| !text.is_empty())
        .collect();
    let mut out = vec![
        json!({"type": "message_start", "message": {"id": "msg_bench", "type": "message",
            "role": "assistant", "model": "claude-bench", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 1200, "cache_read_input_tokens": 900, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ];
    for text in deltas.iter().cycle().take(n - 5) {
        out.push(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}));
    }
    out.push(json!({"type": "content_block_stop", "index": 0}));
    out.push(
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
        "usage": {"output_tokens": n}}),
    );
    out.push(json!({"type": "message_stop"}));
    out.iter()
        .map(|e| String::from_utf8(to_bytes(e)).expect("JSON is UTF-8"))
        .collect()
}
/// A Messages stream of `n` events from a model that thinks first, as
/// Claude does with extended thinking: a thinking block taking half the
/// recorded Chat stream's content as `thinking_delta`s, its signature,
/// then a text block with the other half.
pub(super) fn messages_thinking_stream(chat_lines: &[String], n: usize) -> Vec<String> {
    let text_stream = messages_stream(chat_lines, n - 4);
    // message_start and the text block's start; its deltas; its stop and
    // the message's end.
    let (head, rest) = text_stream.split_at(2);
    let (deltas, tail) = rest.split_at(rest.len() - 3);
    let (thought, said) = deltas.split_at(deltas.len() / 2);
    let thinking = |delta: &String| {
        let event: Value = serde_json::from_str(delta).expect("built above");
        let text = &event["delta"]["text"];
        String::from_utf8(to_bytes(&json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": text}})))
        .expect("JSON is UTF-8")
    };
    let reindexed = |event: &String| event.replace("\"index\":0", "\"index\":1");
    let mut out = vec![head[0].clone()];
    out.push(r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#.to_owned());
    out.extend(thought.iter().map(thinking));
    out.push(r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIMbench"}}"#.to_owned());
    out.push(r#"{"type":"content_block_stop","index":0}"#.to_owned());
    out.push(reindexed(&head[1]));
    out.extend(said.iter().map(reindexed));
    out.extend(tail.iter().map(reindexed));
    out
}

/// The `chat.completion` a Chat backend answers with when asked for no
/// stream: the recorded stream's first chunk for its ids, the text of every
/// content delta of `events` (a stream built by [`chat_stream`]), and the
/// recorded usage.
pub(super) fn chat_body(events: &[String]) -> Vec<u8> {
    let chunks: Vec<Value> = events
        .iter()
        .filter_map(|e| serde_json::from_str(e).ok())
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta/content")?.as_str())
        .collect();
    let first = &chunks[0];
    let usage = chunks
        .iter()
        .rev()
        .find(|c| c["usage"].is_object())
        .map(|c| c["usage"].clone())
        .unwrap_or(Value::Null);
    to_bytes(&json!({
        "id": first["id"], "object": "chat.completion", "created": first["created"],
        "model": first["model"], "service_tier": first["service_tier"],
        "system_fingerprint": first["system_fingerprint"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text,
            "refusal": null, "annotations": []}, "logprobs": null, "finish_reason": "stop"}],
        "usage": usage,
    }))
}

/// The `Response` a Responses backend answers with when asked for no
/// stream: the one its stream's `response.completed` carries (`events` as
/// built by [`responses_stream`]).
pub(super) fn responses_body(events: &[String]) -> Vec<u8> {
    let completed = events
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(e).ok())
        .find(|e| e["type"] == "response.completed")
        .expect("the stream completes");
    to_bytes(&completed["response"])
}

/// The `message` a Messages backend answers with when asked for no stream:
/// the text of every delta of `events` (as built by [`messages_stream`]) in
/// one block, with the usage its stream reports.
pub(super) fn messages_body(events: &[String]) -> Vec<u8> {
    let parsed: Vec<Value> = events
        .iter()
        .filter_map(|e| serde_json::from_str(e).ok())
        .collect();
    let text: String = parsed
        .iter()
        .filter_map(|e| e.pointer("/delta/text")?.as_str())
        .collect();
    let mut message = parsed[0]["message"].clone();
    message["content"] = json!([{"type": "text", "text": text}]);
    message["stop_reason"] = json!("end_turn");
    message["stop_sequence"] = Value::Null;
    if let Some(last) = parsed.iter().rev().find(|e| e["type"] == "message_delta") {
        message["usage"]["output_tokens"] = last["usage"]["output_tokens"].clone();
    }
    to_bytes(&message)
}
