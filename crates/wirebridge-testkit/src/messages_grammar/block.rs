//! The block open between `content_block_start` and `content_block_stop`,
//! and the checks of its start, deltas and stop.

use serde_json::{json, Value};

use super::{v_err, R};
use crate::transcript::{str_field, ThinkingRecord, ToolCallRecord};

/// The block types a reply streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Text,
    Thinking,
    RedactedThinking,
    ToolUse,
    Compaction,
}

/// An open block and what its deltas have accumulated.
#[derive(Debug)]
pub(super) struct OpenBlock {
    pub(super) index: u64,
    pub(super) kind: Kind,
    pub(super) start: Value,
    pub(super) text: String,
    pub(super) signature: Option<String>,
}

fn string_key<'v>(i: usize, v: &'v Value, key: &str, what: &str) -> R<&'v str> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s),
        _ => v_err(i, format!("{what}: `{key}` must be a string")),
    }
}

/// Checks a `content_block_start`'s block and opens it.
pub(super) fn open(i: usize, index: u64, block: &Value) -> R<OpenBlock> {
    let what = "content_block_start.content_block";
    let kind = match block.get("type").and_then(Value::as_str) {
        Some("text") => {
            if !string_key(i, block, "text", what)?.is_empty() {
                return v_err(i, "a text block starts with empty `text`");
            }
            Kind::Text
        }
        Some("thinking") => {
            if !string_key(i, block, "thinking", what)?.is_empty()
                || !string_key(i, block, "signature", what)?.is_empty()
            {
                return v_err(
                    i,
                    "a thinking block starts with empty `thinking` and `signature`",
                );
            }
            Kind::Thinking
        }
        Some("redacted_thinking") => {
            string_key(i, block, "data", what)?;
            Kind::RedactedThinking
        }
        Some("tool_use") => {
            for key in ["id", "name"] {
                if string_key(i, block, key, what)?.is_empty() {
                    return v_err(i, format!("a tool_use block needs a non-empty `{key}`"));
                }
            }
            if block.get("input") != Some(&json!({})) {
                return v_err(i, "a tool_use block starts with `input: {}`");
            }
            Kind::ToolUse
        }
        Some("compaction") => {
            if block.get("content") != Some(&Value::Null) {
                return v_err(i, "a compaction block starts with `content: null`");
            }
            Kind::Compaction
        }
        other => return v_err(i, format!("unknown content block type {other:?}")),
    };
    Ok(OpenBlock {
        index,
        kind,
        start: block.clone(),
        text: String::new(),
        signature: None,
    })
}

impl OpenBlock {
    /// Applies a `content_block_delta`'s delta, which must be of the
    /// block's kind.
    pub(super) fn delta(&mut self, i: usize, delta: &Value) -> R<()> {
        let ty = delta.get("type").and_then(Value::as_str).unwrap_or("");
        let what = format!("{ty} delta");
        match (self.kind, ty) {
            (Kind::Text, "text_delta") => self.text.push_str(string_key(i, delta, "text", &what)?),
            (Kind::ToolUse, "input_json_delta") => {
                self.text
                    .push_str(string_key(i, delta, "partial_json", &what)?)
            }
            (Kind::Thinking, "thinking_delta") => {
                if self.signature.is_some() {
                    return v_err(i, "thinking_delta after the block's signature_delta");
                }
                self.text.push_str(string_key(i, delta, "thinking", &what)?)
            }
            (Kind::Thinking, "signature_delta") => {
                if self.signature.is_some() {
                    return v_err(i, "a second signature_delta for one thinking block");
                }
                self.signature = Some(string_key(i, delta, "signature", &what)?.to_owned());
            }
            (Kind::Compaction, "compaction_delta") => {
                if !self.text.is_empty() {
                    return v_err(i, "a compaction block takes one compaction_delta");
                }
                let content = string_key(i, delta, "content", &what)?;
                if content.is_empty() {
                    return v_err(i, "a compaction_delta carries a non-empty `content`");
                }
                self.text.push_str(content);
            }
            (kind, ty) => {
                return v_err(
                    i,
                    format!("a {ty:?} delta cannot apply to a {kind:?} block"),
                )
            }
        }
        Ok(())
    }

    /// Checks the block can close, and gives the complete block.
    pub(super) fn close(self, i: usize) -> R<Value> {
        if self.kind == Kind::Thinking && self.signature.is_none() {
            return v_err(i, "a thinking block closes after its signature_delta");
        }
        if self.kind == Kind::Compaction && self.text.is_empty() {
            return v_err(i, "a compaction block closes after its compaction_delta");
        }
        Ok(self.snapshot())
    }

    /// The block as its deltas have made it, as a client's accumulator
    /// holds it: a tool_use block whose fragments are no JSON object has
    /// them as `partial_json` instead of an `input`.
    pub(super) fn snapshot(self) -> Value {
        match self.kind {
            Kind::Text => json!({"type": "text", "text": self.text}),
            Kind::Thinking => json!({"type": "thinking", "thinking": self.text,
                                     "signature": self.signature.unwrap_or_default()}),
            Kind::RedactedThinking => self.start,
            Kind::Compaction => json!({"type": "compaction", "content": self.text}),
            Kind::ToolUse => {
                let mut block =
                    json!({"type": "tool_use", "id": self.start["id"], "name": self.start["name"]});
                if self.text.is_empty() {
                    block["input"] = json!({});
                } else {
                    match serde_json::from_str::<Value>(&self.text) {
                        Ok(v @ Value::Object(_)) => block["input"] = v,
                        // Cut short: allowed only when the message stops
                        // at max_tokens (see `message_delta`), or fails.
                        _ => block["partial_json"] = Value::from(self.text),
                    }
                }
                block
            }
        }
    }
}

/// Spreads the complete blocks over a transcript's fields.
pub(super) fn absorb(blocks: &[Value], t: &mut crate::MessagesTranscript) {
    for block in blocks {
        match str_field(block, "type") {
            "text" => t.text.push_str(str_field(block, "text")),
            "thinking" => t.thinking.push(ThinkingRecord {
                thinking: str_field(block, "thinking").to_owned(),
                signature: str_field(block, "signature").to_owned(),
            }),
            "tool_use" if block.get("input").is_some() => t.tool_calls.push(ToolCallRecord {
                name: str_field(block, "name").to_owned(),
                call_id: str_field(block, "id").to_owned(),
                arguments: block["input"].to_string(),
                item_type: "tool_use".to_owned(),
            }),
            _ => {}
        }
    }
}
