//! The strict check of a Messages event stream, event by event.

use serde_json::Value;

use super::block::{absorb, open, OpenBlock};
use super::{v_err, ERROR_TYPES, R, STOP_REASONS};
use crate::sse::SseFrame;
use crate::transcript::MessagesTranscript;

/// Where the stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Before `message_start`.
    Waiting,
    /// Blocks may open.
    Content,
    /// After `message_delta`.
    Delta,
    /// After `message_stop` or `error`.
    Ended,
}

/// Check a Messages stream a translator emitted.
///
/// Rules, each reported as a [`Violation`](crate::Violation) naming the frame:
///
/// * every frame has an `event:` name equal to its JSON `type`, and its data
///   is a JSON object; only the Messages event types;
/// * `message_start` first (an `error` may come before it), exactly once,
///   its `message` with a non-empty `id`, `type: "message"`,
///   `role: "assistant"`, a string `model`, `content: []`, `stop_reason`
///   and `stop_sequence` null, and a `usage` with integer `input_tokens` and
///   `output_tokens`;
/// * blocks open one at a time: `content_block_start` only when no block is
///   open, with `index` 0, 1, 2, …; text blocks start with `text: ""`,
///   thinking blocks with empty `thinking` and `signature`, tool_use blocks
///   with a non-empty `id` and `name` and `input: {}`;
/// * `content_block_delta` and `content_block_stop` name the open block;
///   deltas match its type (`text_delta` for text, `input_json_delta` for
///   tool_use, `thinking_delta` then one `signature_delta` for thinking,
///   none for redacted thinking, one non-empty `compaction_delta` for a
///   compaction block, which starts with `content: null`); a thinking
///   block closes after its
///   signature; a tool_use block's fragments together are a JSON object (or
///   nothing), unless the message stopped at `max_tokens`;
/// * `message_delta` once, with no block open, its `stop_reason` one of
///   [`STOP_REASONS`](super::STOP_REASONS), `stop_sequence` null or (for
///   `stop_sequence`) a string, `tool_use` exactly when a tool_use block was
///   sent (or the reply stopped early: `max_tokens`, `refusal`),
///   `compaction` exactly when the blocks are compaction blocks alone, and a
///   `usage` with integer `output_tokens` (other counts integers too);
/// * `message_stop` right after `message_delta`, and last;
/// * `ping` (`{"type":"ping"}`) anywhere between `message_start` and
///   `message_stop`;
/// * `error` (`{"type":"error","error":{"type","message"}}`, its type one of
///   [`ERROR_TYPES`](super::ERROR_TYPES)) at any point, a block open or
///   not, and last;
/// * the stream ends with `message_stop` or `error`.
///
/// The transcript holds the blocks as a client accumulates them, and the
/// usage of `message_start` updated by `message_delta`, as the SDKs do.
pub fn check(frames: &[SseFrame]) -> R<MessagesTranscript> {
    let mut t = MessagesTranscript::default();
    let mut stage = Stage::Waiting;
    let mut open_block: Option<OpenBlock> = None;
    let mut blocks: Vec<Value> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        if stage == Stage::Ended {
            return v_err(i, "an event after `message_stop` or `error`");
        }
        let v: Value = match serde_json::from_str(&f.data) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return v_err(i, "data is not a JSON object"),
            Err(e) => return v_err(i, format!("data is not valid JSON: {e}")),
        };
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        if f.event.as_deref() != Some(ty) {
            return v_err(
                i,
                format!("the event name {:?} differs from the type {ty:?}", f.event),
            );
        }
        match (ty, stage) {
            ("error", _) => {
                let error = &v["error"];
                let kind = error.get("type").and_then(Value::as_str);
                if !kind.is_some_and(|k| ERROR_TYPES.contains(&k))
                    || error.get("message").and_then(Value::as_str).is_none()
                {
                    return v_err(
                        i,
                        "error: `error` must have a known `type` and a string `message`",
                    );
                }
                t.error = Some(error.clone());
                // What the open block got so far stays the client's.
                blocks.extend(open_block.take().map(OpenBlock::snapshot));
                stage = Stage::Ended;
            }
            ("message_start", Stage::Waiting) => {
                message_start(i, &v["message"], &mut t)?;
                stage = Stage::Content;
            }
            ("message_start", _) => return v_err(i, "a second message_start"),
            (_, Stage::Waiting) => return v_err(i, format!("{ty} before message_start")),
            ("ping", _) => {
                if v.as_object().is_some_and(|o| o.len() != 1) {
                    return v_err(i, "ping carries nothing but its type");
                }
            }
            ("content_block_start", Stage::Content) => {
                if let Some(block) = &open_block {
                    return v_err(
                        i,
                        format!("content_block_start while block {} is open", block.index),
                    );
                }
                let index = index_of(i, &v)?;
                if index != blocks.len() as u64 {
                    return v_err(i, format!("block index {index}; expected {}", blocks.len()));
                }
                open_block = Some(open(i, index, &v["content_block"])?);
            }
            ("content_block_delta", Stage::Content) => {
                let block = open_at(i, &v, &mut open_block)?;
                block.delta(i, &v["delta"])?;
            }
            ("content_block_stop", Stage::Content) => {
                open_at(i, &v, &mut open_block)?;
                let block = open_block.take().expect("checked open");
                blocks.push(block.close(i)?);
            }
            ("message_delta", Stage::Content) => {
                if let Some(block) = &open_block {
                    return v_err(
                        i,
                        format!("message_delta while block {} is open", block.index),
                    );
                }
                message_delta(i, &v, &blocks, &mut t)?;
                stage = Stage::Delta;
            }
            ("message_stop", Stage::Delta) => stage = Stage::Ended,
            ("message_stop", _) => return v_err(i, "message_stop before message_delta"),
            (
                "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta",
                _,
            ) => return v_err(i, format!("{ty} after message_delta")),
            (other, _) => return v_err(i, format!("unknown event type {other:?}")),
        }
    }
    if stage != Stage::Ended {
        return v_err(
            frames.len(),
            "the stream ends without message_stop or error",
        );
    }
    absorb(&blocks, &mut t);
    t.blocks = blocks;
    Ok(t)
}

fn index_of(i: usize, v: &Value) -> R<u64> {
    v.get("index")
        .and_then(Value::as_u64)
        .map_or_else(|| v_err(i, "`index` must be a non-negative integer"), Ok)
}

/// The open block, which the event's `index` must name.
fn open_at<'b>(i: usize, v: &Value, open: &'b mut Option<OpenBlock>) -> R<&'b mut OpenBlock> {
    let index = index_of(i, v)?;
    match open.as_ref().map(|block| block.index) {
        Some(open_index) if open_index == index => Ok(open.as_mut().expect("checked")),
        Some(open_index) => v_err(i, format!("index {index}, but block {open_index} is open")),
        None => v_err(i, format!("index {index}, but no block is open")),
    }
}

fn is_count(v: Option<&Value>) -> bool {
    v.is_some_and(|n| n.is_u64())
}

fn message_start(i: usize, m: &Value, t: &mut MessagesTranscript) -> R<()> {
    let id = m.get("id").and_then(Value::as_str).unwrap_or("");
    if id.is_empty() {
        return v_err(i, "message_start: the message needs a non-empty `id`");
    }
    if m.get("type").and_then(Value::as_str) != Some("message")
        || m.get("role").and_then(Value::as_str) != Some("assistant")
    {
        return v_err(
            i,
            "message_start: `type: message` and `role: assistant` expected",
        );
    }
    if !m.get("model").is_some_and(Value::is_string) {
        return v_err(i, "message_start: `model` must be a string");
    }
    if m.get("content") != Some(&Value::Array(Vec::new())) {
        return v_err(i, "message_start: `content` must be []");
    }
    for key in ["stop_reason", "stop_sequence"] {
        if m.get(key) != Some(&Value::Null) {
            return v_err(i, format!("message_start: `{key}` must be null"));
        }
    }
    let usage = &m["usage"];
    if !is_count(usage.get("input_tokens")) || !is_count(usage.get("output_tokens")) {
        return v_err(
            i,
            "message_start: `usage` needs integer input_tokens and output_tokens",
        );
    }
    t.id = id.to_owned();
    t.model = m["model"].as_str().unwrap_or("").to_owned();
    t.usage = Some(usage.clone());
    Ok(())
}

fn message_delta(i: usize, v: &Value, blocks: &[Value], t: &mut MessagesTranscript) -> R<()> {
    let delta = &v["delta"];
    let reason = delta
        .get("stop_reason")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !STOP_REASONS.contains(&reason) {
        return v_err(
            i,
            format!("message_delta: stop_reason {reason:?} is not valid"),
        );
    }
    match (reason, delta.get("stop_sequence")) {
        ("stop_sequence", Some(Value::String(_))) => {}
        ("stop_sequence", _) => return v_err(i, "stop_reason stop_sequence names its sequence"),
        (_, Some(Value::Null)) => {}
        _ => return v_err(i, "message_delta: `stop_sequence` must be null"),
    }
    let calls = blocks.iter().any(|b| b["type"] == "tool_use");
    if let Some(cut) = blocks.iter().find(|b| b.get("partial_json").is_some()) {
        if reason != "max_tokens" {
            return v_err(
                i,
                format!(
                    "the input_json_delta fragments are not a JSON object (and stop_reason is {reason}, not max_tokens): {}",
                    cut["partial_json"]
                ),
            );
        }
    }
    let compaction_only = !blocks.is_empty() && blocks.iter().all(|b| b["type"] == "compaction");
    match (reason, compaction_only) {
        ("compaction", false) => {
            return v_err(
                i,
                "stop_reason compaction for a reply that is not compaction blocks alone",
            )
        }
        (reason, true) if reason != "compaction" => {
            return v_err(
                i,
                format!("a reply of compaction blocks alone stops for compaction, not {reason}"),
            )
        }
        _ => {}
    }
    match (reason, calls) {
        ("tool_use", false) => return v_err(i, "stop_reason tool_use without a tool_use block"),
        ("end_turn" | "stop_sequence", true) => {
            return v_err(i, format!("stop_reason {reason} after a tool_use block"))
        }
        _ => {}
    }
    let usage = v["usage"].as_object();
    let Some(usage) = usage.filter(|u| is_count(u.get("output_tokens"))) else {
        return v_err(i, "message_delta: `usage` needs an integer output_tokens");
    };
    if let Some((key, _)) = usage
        .iter()
        .find(|(k, n)| k.ends_with("_tokens") && !n.is_u64())
    {
        return v_err(i, format!("message_delta: usage.{key} must be an integer"));
    }
    let merged = t
        .usage
        .get_or_insert_with(|| Value::Object(Default::default()));
    for (key, n) in usage {
        merged[key] = n.clone();
    }
    t.stop_reason = Some(reason.to_owned());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SseFrame;

    fn frames(events: &[&str]) -> Vec<SseFrame> {
        events
            .iter()
            .map(|data| {
                let v: Value = serde_json::from_str(data).unwrap();
                SseFrame::named(v["type"].as_str().unwrap(), *data)
            })
            .collect()
    }

    const START: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}"#;
    const STOP: &str = r#"{"type":"message_stop"}"#;

    fn tool_stream(partial: &str, reason: &str) -> Vec<SseFrame> {
        let delta = format!(
            r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#,
            serde_json::to_string(partial).unwrap()
        );
        let end = format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"{reason}","stop_sequence":null}},"usage":{{"output_tokens":4}}}}"#
        );
        frames(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}"#,
            r#"{"type":"ping"}"#,
            &delta,
            r#"{"type":"content_block_stop","index":0}"#,
            &end,
            STOP,
        ])
    }

    #[test]
    fn a_tool_call_is_read_whole() {
        let t = check(&tool_stream(r#"{"city": "Paris"}"#, "tool_use")).unwrap();
        assert_eq!(t.tool_calls[0].call_id, "toolu_1");
        assert_eq!(t.tool_calls[0].arguments, r#"{"city":"Paris"}"#);
        assert_eq!(t.usage.unwrap()["output_tokens"], 4);
    }

    #[test]
    fn broken_streams_are_named() {
        for (frames, rule) in [
            (tool_stream(r#"{"city": "#, "tool_use"), "not a JSON object"),
            (tool_stream("{}", "end_turn"), "after a tool_use block"),
            (frames(&[r#"{"type":"ping"}"#]), "before message_start"),
            (
                frames(&[
                    START,
                    r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
                ]),
                "expected 0",
            ),
            (
                frames(&[
                    START,
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}"#,
                ]),
                "cannot apply",
            ),
            (
                frames(&[
                    START,
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
                    r#"{"type":"content_block_stop","index":0}"#,
                ]),
                "after its signature_delta",
            ),
            (frames(&[START, STOP]), "before message_delta"),
            (frames(&[START]), "ends without"),
            (
                frames(&[
                    START,
                    r#"{"type":"error","error":{"type":"nope","message":"x"}}"#,
                ]),
                "known `type`",
            ),
        ] {
            let err = check(&frames).unwrap_err();
            assert!(err.message.contains(rule), "{rule}: {err}");
        }
        let mut renamed = tool_stream("{}", "tool_use");
        renamed[1].event = Some("content_block_delta".into());
        assert!(check(&renamed).unwrap_err().message.contains("differs"));
    }

    #[test]
    fn an_error_ends_the_stream_and_keeps_what_was_said() {
        let t = check(&frames(&[
            START,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hal"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"error","error":{"type":"api_error","message":"cut"}}"#,
        ]))
        .unwrap();
        assert_eq!(t.text, "Hal");
        assert_eq!(t.error.unwrap()["message"], "cut");
        let after = frames(&[
            r#"{"type":"error","error":{"type":"api_error","message":"cut"}}"#,
            r#"{"type":"ping"}"#,
        ]);
        assert!(check(&after).is_err());
    }
}
