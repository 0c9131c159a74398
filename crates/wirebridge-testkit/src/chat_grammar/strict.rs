//! The strict check of a Chat chunk stream a translator emitted: chunk
//! headers, choices, the usage chunk and the end of the stream.

use super::tool_calls::tool_call_fragment;
use super::v_err;
use crate::sse::SseFrame;
use crate::transcript::{ChatTranscript, ToolCallRecord};
use crate::Violation;
use serde_json::Value;
use std::collections::BTreeMap;

/// Valid values of a non-null `finish_reason`.
pub const FINISH_REASONS: &[&str] = &[
    "stop",
    "length",
    "tool_calls",
    "content_filter",
    "function_call",
];

#[derive(Debug, Default)]
struct Choice {
    started: bool,
    finished: bool,
    text: String,
    refusal: String,
    reasoning: String,
    calls: Vec<ToolCallRecord>,
    finish_reason: Option<String>,
}

/// Check a Chat chunk stream a translator emitted.
///
/// Rules, each reported as a [`Violation`] naming the frame:
///
/// * no frame has an `event:` name; every data frame is a JSON object;
///   the last frame is `[DONE]` and nothing follows it;
/// * every chunk has `id` (non-empty), `object: "chat.completion.chunk"`,
///   `created` (integer), `model` and `choices` (array), with the same `id`,
///   `created` and `model` in every chunk;
/// * each choice has `index`, `delta` (object) and a `finish_reason` key;
///   the first chunk of a choice has `delta.role == "assistant"`, later
///   chunks carry no `role`; `content` / `refusal` / `reasoning_content` are
///   strings (or null);
/// * `delta.tool_calls` is an array; `index` is dense from 0 in order of first
///   appearance; a call's first fragment has a non-empty `id`,
///   `type: "function"` and a non-empty `function.name`; later fragments carry
///   only `index` and `function.arguments`;
/// * exactly one non-null `finish_reason` per choice, from [`FINISH_REASONS`];
///   no chunk for that choice after it; `tool_calls` iff tool calls were
///   streamed (`stop` after streamed tool calls is an error);
/// * when `expect_usage_chunk`: exactly one chunk with `choices: []` and a
///   `usage` object with integer `prompt_tokens`, `completion_tokens` and
///   `total_tokens`, after every choice finished and right before `[DONE]`;
///   otherwise no chunk with a non-null `usage`; a chunk with empty `choices`
///   and no usage is an error;
/// * or an error termination: a data frame whose JSON has an `error` key
///   (an object with a string `message`), followed by `[DONE]` alone;
///   the error goes into the transcript and unfinished choices are allowed.
///
/// The transcript covers choice index 0. Function tool calls are recorded
/// with `item_type: "function_call"`.
pub fn check(frames: &[SseFrame], expect_usage_chunk: bool) -> Result<ChatTranscript, Violation> {
    let mut t = ChatTranscript::default();
    let mut header: Option<(String, Value, String)> = None;
    let mut choices: BTreeMap<u64, Choice> = BTreeMap::new();
    let mut done = false;
    let mut error = false;
    let mut usage_seen = false;

    for (i, f) in frames.iter().enumerate() {
        if done {
            return v_err(i, "frame after `data: [DONE]`");
        }
        if let Some(e) = &f.event {
            return v_err(
                i,
                format!("Chat frames must not have an `event:` name, got `event: {e}`"),
            );
        }
        if f.data == "[DONE]" {
            done = true;
            if error {
                continue;
            }
            if header.is_none() {
                return v_err(i, "`[DONE]` before any chunk");
            }
            if let Some((idx, _)) = choices.iter().find(|(_, c)| !c.finished) {
                return v_err(
                    i,
                    format!("`[DONE]` before choice {idx} got a finish_reason"),
                );
            }
            if expect_usage_chunk && !usage_seen {
                return v_err(
                    i,
                    "`[DONE]` without the usage chunk (choices: [], usage) that include_usage asks for",
                );
            }
            continue;
        }
        if error {
            return v_err(i, "only `[DONE]` may follow an error chunk");
        }
        let v: Value = match serde_json::from_str(&f.data) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return v_err(i, "data is not a JSON object"),
            Err(e) => return v_err(i, format!("data is not valid JSON: {e}")),
        };
        if let Some(err) = v.get("error") {
            if err.get("message").and_then(Value::as_str).is_none() {
                return v_err(
                    i,
                    "error chunk: `error` must be an object with a string `message`",
                );
            }
            error = true;
            t.error = Some(err.clone());
            continue;
        }
        if usage_seen {
            return v_err(i, "only `[DONE]` may follow the usage chunk");
        }

        // Chunk header.
        let id = match v.get("id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(other) => {
                return v_err(
                    i,
                    format!("chunk `id` must be a non-empty string, got {other}"),
                )
            }
            None => return v_err(i, "chunk: missing `id`"),
        };
        if v.get("object").and_then(Value::as_str) != Some("chat.completion.chunk") {
            return v_err(
                i,
                format!(
                    "chunk `object` must be \"chat.completion.chunk\", got {}",
                    v.get("object").map_or("(absent)".into(), Value::to_string)
                ),
            );
        }
        let created = match v.get("created") {
            Some(n) if n.as_u64().is_some() => n.clone(),
            other => {
                return v_err(
                    i,
                    format!("chunk `created` must be an integer, got {other:?}"),
                )
            }
        };
        let model = match v.get("model") {
            Some(Value::String(s)) => s.clone(),
            other => return v_err(i, format!("chunk `model` must be a string, got {other:?}")),
        };
        let chunk_choices = match v.get("choices") {
            Some(Value::Array(a)) => a,
            other => {
                return v_err(
                    i,
                    format!("chunk `choices` must be an array, got {other:?}"),
                )
            }
        };
        match &header {
            None => {
                t.id = id.clone();
                header = Some((id, created, model));
            }
            Some((hid, hcreated, hmodel)) => {
                if *hid != id {
                    return v_err(
                        i,
                        format!("chunk id `{id}` differs from the first chunk's `{hid}`"),
                    );
                }
                if *hcreated != created {
                    return v_err(
                        i,
                        format!(
                            "chunk `created` {created} differs from the first chunk's {hcreated}"
                        ),
                    );
                }
                if *hmodel != model {
                    return v_err(
                        i,
                        format!(
                            "chunk `model` `{model}` differs from the first chunk's `{hmodel}`"
                        ),
                    );
                }
            }
        }

        // Usage chunk.
        if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
            if !expect_usage_chunk {
                return v_err(
                    i,
                    "unexpected usage chunk: usage was not requested (stream_options.include_usage)",
                );
            }
            if !chunk_choices.is_empty() {
                return v_err(i, "the usage chunk must have `choices: []`");
            }
            if let Some((idx, _)) = choices.iter().find(|(_, c)| !c.finished) {
                return v_err(
                    i,
                    format!("usage chunk before choice {idx} got a finish_reason"),
                );
            }
            for key in ["prompt_tokens", "completion_tokens", "total_tokens"] {
                if u.get(key).and_then(Value::as_u64).is_none() {
                    return v_err(i, format!("usage: `{key}` must be an integer"));
                }
            }
            usage_seen = true;
            t.usage = Some(u.clone());
            continue;
        }
        if chunk_choices.is_empty() {
            return v_err(i, "chunk with empty `choices` and no usage");
        }

        for c in chunk_choices {
            let index = match c.get("index").and_then(Value::as_u64) {
                Some(n) => n,
                None => return v_err(i, "choice: `index` must be an integer"),
            };
            let delta = match c.get("delta") {
                Some(d @ Value::Object(_)) => d,
                _ => return v_err(i, format!("choice {index}: `delta` must be an object")),
            };
            let finish = match c.get("finish_reason") {
                Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.as_str()),
                Some(other) => {
                    return v_err(
                        i,
                        format!(
                            "choice {index}: finish_reason must be a string or null, got {other}"
                        ),
                    )
                }
                None => return v_err(i, format!("choice {index}: missing `finish_reason`")),
            };
            let st = choices.entry(index).or_default();
            if st.finished {
                return v_err(
                    i,
                    format!("chunk for choice {index} after its finish_reason"),
                );
            }
            if !st.started {
                if delta.get("role").and_then(Value::as_str) != Some("assistant") {
                    return v_err(
                        i,
                        format!("the first chunk of choice {index} must have delta.role = \"assistant\""),
                    );
                }
                st.started = true;
            } else if let Some(role) = delta.get("role") {
                return v_err(
                    i,
                    format!("choice {index}: delta.role {role} repeated after the first chunk"),
                );
            }
            for (key, acc) in [
                ("content", &mut st.text),
                ("refusal", &mut st.refusal),
                ("reasoning_content", &mut st.reasoning),
            ] {
                match delta.get(key) {
                    None | Some(Value::Null) => {}
                    Some(Value::String(s)) => acc.push_str(s),
                    Some(other) => {
                        return v_err(
                            i,
                            format!("choice {index}: delta.{key} must be a string, got {other}"),
                        )
                    }
                }
            }
            if let Some(Value::String(s)) = delta.get("reasoning") {
                st.reasoning.push_str(s);
            }
            if let Some(tcs) = delta.get("tool_calls") {
                let tcs = match tcs {
                    Value::Array(a) => a,
                    other => {
                        return v_err(
                            i,
                            format!(
                                "choice {index}: delta.tool_calls must be an array, got {other}"
                            ),
                        )
                    }
                };
                for tc in tcs {
                    tool_call_fragment(i, index, tc, &mut st.calls)?;
                }
            }
            if let Some(reason) = finish {
                if !FINISH_REASONS.contains(&reason) {
                    return v_err(
                        i,
                        format!("choice {index}: finish_reason `{reason}` is not one of {FINISH_REASONS:?}"),
                    );
                }
                if reason == "stop" && !st.calls.is_empty() {
                    return v_err(
                        i,
                        format!("choice {index}: finish_reason `stop` although tool calls were streamed (expected `tool_calls`)"),
                    );
                }
                if reason == "tool_calls" && st.calls.is_empty() {
                    return v_err(
                        i,
                        format!("choice {index}: finish_reason `tool_calls` but no tool calls were streamed"),
                    );
                }
                st.finished = true;
                st.finish_reason = Some(reason.to_string());
            }
        }
    }

    let end = frames.len();
    if !done {
        return v_err(end, "stream ended without `data: [DONE]`");
    }
    if header.is_none() && !error {
        return v_err(end, "no chunks");
    }
    if let Some(c) = choices.remove(&0).or_else(|| choices.into_values().next()) {
        t.text = c.text;
        t.refusal = c.refusal;
        t.reasoning = c.reasoning;
        t.tool_calls = c.calls;
        t.finish_reason = c.finish_reason;
    }
    Ok(t)
}
