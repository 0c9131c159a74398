//! Text chunks written from a template.
//!
//! Every chunk of a stream repeats the completion's id, `created` and
//! model, and a text chunk differs from the next only in its fragment:
//!
//! ```json
//! {"id":"chatcmpl-…","object":"chat.completion.chunk","created":1770803606,
//!  "model":"gpt-5.1","choices":[{"index":0,"delta":{"content":"Hello"},
//!  "logprobs":null,"finish_reason":null}],"usage":null}
//! ```
//!
//! Serializing each one walked the chunk's fields and escaped its constant
//! strings every time. A [`ChunkFrame`] writes the constant parts once, and
//! each text chunk appends only its fragment, byte for byte what
//! serializing the chunk gives.

use crate::frames::Frames;
use serde_json::value::RawValue;

/// The constant parts of a stream's text chunks.
#[derive(Debug)]
pub(super) struct ChunkFrame {
    /// Up to the delta's field: `{"id":…,"model":…,"choices":[{"index":0,"delta":{`.
    head: Vec<u8>,
    /// After the fragment: `},"logprobs":null,"finish_reason":null}]`, the
    /// `usage` when the client asked for it, and `}`.
    tail: &'static [u8],
}

impl ChunkFrame {
    /// The frame of the chunks of completion `id`; `usage: null` is on
    /// every chunk when the client asked for usage.
    pub(super) fn new(id: &str, created: u64, model: &str, include_usage: bool) -> Self {
        let mut head = Vec::with_capacity(128 + id.len() + model.len());
        head.extend_from_slice(b"{\"id\":");
        push_json_str(&mut head, id);
        head.extend_from_slice(b",\"object\":\"chat.completion.chunk\",\"created\":");
        head.extend_from_slice(created.to_string().as_bytes());
        head.extend_from_slice(b",\"model\":");
        push_json_str(&mut head, model);
        head.extend_from_slice(b",\"choices\":[{\"index\":0,\"delta\":{");
        let tail: &[u8] = match include_usage {
            true => b"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}",
            false => b"},\"logprobs\":null,\"finish_reason\":null}]}",
        };
        Self { head, tail }
    }

    /// Appends a chunk whose delta holds one text `field` (`content`,
    /// `refusal`, `reasoning_content` or `reasoning`) with `fragment`, a
    /// JSON string literal.
    pub(super) fn write_text(&self, out: &mut Frames, field: &'static str, fragment: &RawValue) {
        out.event(None, |out| {
            out.extend_from_slice(&self.head);
            out.push(b'"');
            out.extend_from_slice(field.as_bytes());
            out.extend_from_slice(b"\":");
            out.extend_from_slice(fragment.get().as_bytes());
            out.extend_from_slice(self.tail);
        });
    }
}

/// Appends `text` as a JSON string literal, escaped as serde_json does.
fn push_json_str(out: &mut Vec<u8>, text: &str) {
    serde_json::to_writer(out, text).expect("strings always serialize");
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebridge_wire::chat::strict::{ChatChunk, ChunkChoice, ChunkUsage, Delta};
    use wirebridge_wire::raw::JsonText;

    fn serialized(id: &str, model: &str, usage: bool, field: &str, text: &str) -> Vec<u8> {
        let text = JsonText::from_text(text);
        let mut delta = Delta::default();
        match field {
            "content" => delta.content = Some(text),
            "refusal" => delta.refusal = Some(text),
            "reasoning_content" => delta.reasoning_content = Some(text),
            _ => delta.reasoning = Some(text),
        }
        let choices = [ChunkChoice {
            index: 0,
            delta,
            logprobs: None,
            finish_reason: None,
        }];
        let chunk = ChatChunk {
            id,
            object: "chat.completion.chunk",
            created: 1_770_803_606,
            model,
            choices: &choices,
            usage: if usage {
                ChunkUsage::Null
            } else {
                ChunkUsage::Omitted
            },
        };
        let mut out = Vec::new();
        wirebridge_sse::encode_event_with(&mut out, None, |out| {
            serde_json::to_writer(out, &chunk).unwrap()
        });
        out
    }

    #[test]
    fn writes_what_serializing_writes() {
        for (id, model) in [("chatcmpl-1", "gpt-5.1"), ("a\"b", "m\u{1}é\n")] {
            for usage in [true, false] {
                for field in ["content", "refusal", "reasoning_content", "reasoning"] {
                    for text in ["Hello", "", "line\nbreak \"quoted\" \u{7f}"] {
                        let frame = ChunkFrame::new(id, 1_770_803_606, model, usage);
                        let literal = serde_json::to_string(text).unwrap();
                        let fragment: &RawValue = serde_json::from_str(&literal).unwrap();
                        let mut out = Frames::sse();
                        frame.write_text(&mut out, field, fragment);
                        let expected = serialized(id, model, usage, field, text);
                        assert_eq!(
                            String::from_utf8(out.take().bytes),
                            String::from_utf8(expected)
                        );
                    }
                }
            }
        }
    }
}
