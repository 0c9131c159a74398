//! Helpers shared by the testkit's own tests: fixture lookup and targeted
//! corruption of frames.

#![allow(dead_code)]

use serde_json::{json, Value};
use wirebridge_testkit::fixtures::{self, FixtureStream};
use wirebridge_testkit::{SseFrame, Violation};

/// The recorded stream whose name is `name` (Chat or Responses).
pub fn stream(name: &str) -> FixtureStream {
    fixtures::chat_streams()
        .into_iter()
        .chain(fixtures::responses_streams())
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no recorded stream named {name}"))
}

/// The frames of the recorded stream `name`.
pub fn frames(name: &str) -> Vec<SseFrame> {
    stream(name).frames()
}

/// The JSON of a frame.
pub fn json_of(f: &SseFrame) -> Value {
    serde_json::from_str(&f.data).unwrap_or_else(|e| panic!("not JSON ({e}): {}", f.data))
}

/// Replace the JSON of a frame, keeping its event name.
pub fn set_json(f: &mut SseFrame, v: &Value) {
    f.data = serde_json::to_string(v).expect("serializable");
}

/// Edit the JSON of frame `i` in place.
pub fn edit(frames: &mut [SseFrame], i: usize, change: impl FnOnce(&mut Value)) {
    let mut v = json_of(&frames[i]);
    change(&mut v);
    set_json(&mut frames[i], &v);
}

/// Index of the `n`-th (0-based) Responses event of type `ty`.
pub fn nth_event(frames: &[SseFrame], ty: &str, n: usize) -> usize {
    frames
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            serde_json::from_str::<Value>(&f.data)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(|t| t == ty))
                .unwrap_or(false)
        })
        .map(|(i, _)| i)
        .nth(n)
        .unwrap_or_else(|| panic!("no event #{n} of type {ty}"))
}

/// Index of the first Responses event of type `ty`.
pub fn first_event(frames: &[SseFrame], ty: &str) -> usize {
    nth_event(frames, ty, 0)
}

/// Rewrite every `sequence_number` to the frame's position, so that a
/// mutation is caught by the rule it targets rather than by the numbering.
pub fn renumber(frames: &mut [SseFrame]) {
    for (i, f) in frames.iter_mut().enumerate() {
        if let Ok(mut v) = serde_json::from_str::<Value>(&f.data) {
            if v.get("sequence_number").is_some() {
                v["sequence_number"] = json!(i);
                set_json(f, &v);
            }
        }
    }
}

/// Assert that `result` is a violation whose message mentions `needle`
/// (case-insensitive), and return it.
#[track_caller]
pub fn assert_rejected<T: std::fmt::Debug>(
    result: Result<T, Violation>,
    needle: &str,
) -> Violation {
    match result {
        Ok(t) => {
            panic!("expected a violation mentioning {needle:?}, but the stream was accepted: {t:?}")
        }
        Err(v) => {
            if std::env::var_os("SHOW_VIOLATIONS").is_some() {
                eprintln!("VIOLATION [{needle}] {v}");
            }
            assert!(
                v.message.to_lowercase().contains(&needle.to_lowercase()),
                "violation {v} does not mention {needle:?}"
            );
            v
        }
    }
}

/// A complete `Response` object as a translator would emit it.
pub fn response_obj(id: &str, status: &str, output: Vec<Value>) -> Value {
    json!({
        "id": id,
        "object": "response",
        "created_at": 1_700_000_000u64,
        "status": status,
        "model": "test-model",
        "output": output,
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "temperature": null,
        "top_p": null,
        "metadata": {},
        "instructions": null,
        "error": null,
        "incomplete_details": null,
        "usage": null,
    })
}

/// Frames for a list of Responses event payloads: adds `sequence_number`s
/// (0, 1, …) and `event:` names equal to each payload's `type`.
pub fn responses_frames(events: Vec<Value>) -> Vec<SseFrame> {
    events
        .into_iter()
        .enumerate()
        .map(|(i, mut v)| {
            v["sequence_number"] = json!(i);
            let ty = v["type"].as_str().expect("type").to_string();
            SseFrame::named(ty, serde_json::to_string(&v).expect("serializable"))
        })
        .collect()
}

/// Frames for a list of Chat chunk payloads (strings are used as raw data,
/// e.g. `"[DONE]"`).
pub fn chat_frames(chunks: Vec<Value>) -> Vec<SseFrame> {
    chunks
        .into_iter()
        .map(|v| match v {
            Value::String(s) => SseFrame::data(s),
            v => SseFrame::data(serde_json::to_string(&v).expect("serializable")),
        })
        .collect()
}

/// A Chat chunk with one choice.
pub fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000u64,
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    })
}
