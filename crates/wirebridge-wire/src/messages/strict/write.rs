//! The events of a Messages stream written by hand: a reply of a few
//! hundred tokens is a few hundred `content_block_delta` events, and serde
//! escaped their five keys and two names one byte at a time, every event
//! (see [`crate::write`]).

use super::{Delta, Event};
use crate::decimal::push_decimal;
use crate::write::{serialized, Object};
use crate::JsonText;

impl Event<'_> {
    /// Appends the event's JSON to `out`: the bytes serde writes for it.
    /// The deltas, a block's end, the stream's end and the keep-alive are
    /// written by hand; the rest (one or two each a stream) by serde.
    ///
    /// ```
    /// use wirebridge_wire::messages::strict::{Delta, Event};
    /// use wirebridge_wire::JsonText;
    ///
    /// let mut out = Vec::new();
    /// let delta = Delta::TextDelta { text: JsonText::from_text("Hi \"there\"") };
    /// Event::ContentBlockDelta { index: 2, delta }.write_json(&mut out);
    /// assert_eq!(
    ///     String::from_utf8(out).unwrap(),
    ///     r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Hi \"there\""}}"#
    /// );
    /// ```
    pub fn write_json(&self, out: &mut Vec<u8>) {
        #[cfg(any(test, debug_assertions, fuzzing))]
        let start = out.len();
        match self {
            // Most of a stream's events: written from two literals, the
            // index and the fragment, with no key written one at a time.
            Event::ContentBlockDelta { index, delta } => {
                let (head, fragment) = delta.head_and_fragment();
                out.reserve(HEAD.len() + 2 + head.len() + fragment.raw().get().len() + 2);
                out.extend_from_slice(HEAD.as_bytes());
                push_decimal(out, *index as u64);
                out.extend_from_slice(head.as_bytes());
                out.extend_from_slice(fragment.raw().get().as_bytes());
                out.extend_from_slice(b"}}");
            }
            Event::ContentBlockStop { index } => {
                let mut event = Object::open(out);
                event.name("type", "content_block_stop");
                event.value("index", index);
                event.close();
            }
            Event::MessageStop => out.extend_from_slice(br#"{"type":"message_stop"}"#),
            Event::Ping => out.extend_from_slice(br#"{"type":"ping"}"#),
            Event::MessageStart { .. }
            | Event::ContentBlockStart { .. }
            | Event::MessageDelta { .. }
            | Event::Error { .. } => serialized(out, self),
        }
        #[cfg(any(test, debug_assertions, fuzzing))]
        crate::write::agrees_with_serde(&out[start..], self);
    }
}

/// What every `content_block_delta` event starts with, up to its index.
const HEAD: &str = r#"{"type":"content_block_delta","index":"#;

impl Delta<'_> {
    /// What the event holds between its index and the fragment, with the
    /// fragment: the delta's type and the name of its one field.
    fn head_and_fragment(&self) -> (&'static str, &JsonText<'_>) {
        match self {
            Delta::TextDelta { text } => (r#","delta":{"type":"text_delta","text":"#, text),
            Delta::InputJsonDelta { partial_json } => (
                r#","delta":{"type":"input_json_delta","partial_json":"#,
                partial_json,
            ),
            Delta::ThinkingDelta { thinking } => {
                (r#","delta":{"type":"thinking_delta","thinking":"#, thinking)
            }
            Delta::SignatureDelta { signature } => (
                r#","delta":{"type":"signature_delta","signature":"#,
                signature,
            ),
            Delta::CompactionDelta { content } => {
                (r#","delta":{"type":"compaction_delta","content":"#, content)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::strict::{
        ContentBlock, ErrorObject, MessageBody, MessageDelta, StopReason, Usage,
    };
    use crate::JsonText;

    fn written(event: &Event<'_>) -> String {
        let mut out = b"data: ".to_vec();
        event.write_json(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_event_is_written_as_serde_writes_it() {
        // `write_json` itself holds what it writes to serde in tests; these
        // are the literal bytes a client reads, checked by eye.
        let text = |s: &str| JsonText::from_text(s);
        let cases: Vec<(Event<'_>, &str)> = vec![
            (
                Event::ContentBlockDelta {
                    index: 0,
                    delta: Delta::TextDelta {
                        text: text("a\nb\u{1}é"),
                    },
                },
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\nb\u0001é"}}"#,
            ),
            (
                Event::ContentBlockDelta {
                    index: 12,
                    delta: Delta::InputJsonDelta {
                        partial_json: text(r#"{"cmd":"#),
                    },
                },
                r#"{"type":"content_block_delta","index":12,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\":"}}"#,
            ),
            (
                Event::ContentBlockDelta {
                    index: 1,
                    delta: Delta::ThinkingDelta {
                        thinking: text("hm"),
                    },
                },
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
            ),
            (
                Event::ContentBlockDelta {
                    index: 1,
                    delta: Delta::SignatureDelta {
                        signature: text("c2ln"),
                    },
                },
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"c2ln"}}"#,
            ),
            (
                Event::ContentBlockDelta {
                    index: 0,
                    delta: Delta::CompactionDelta {
                        content: text("wbs1.abc"),
                    },
                },
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta","content":"wbs1.abc"}}"#,
            ),
            (
                Event::ContentBlockStop { index: 3 },
                r#"{"type":"content_block_stop","index":3}"#,
            ),
            (Event::MessageStop, r#"{"type":"message_stop"}"#),
            (Event::Ping, r#"{"type":"ping"}"#),
        ];
        for (event, expected) in &cases {
            assert_eq!(written(event), format!("data: {expected}"));
        }
    }

    #[test]
    fn the_rare_events_are_serde_s() {
        let usage = Usage::default();
        let events = [
            Event::MessageStart {
                message: MessageBody::default(),
            },
            Event::ContentBlockStart {
                index: 0,
                content_block: ContentBlock::Text {
                    text: JsonText::from_text(""),
                },
            },
            Event::MessageDelta {
                delta: MessageDelta {
                    stop_reason: Some(StopReason::EndTurn),
                    stop_sequence: None,
                },
                usage,
            },
            Event::Error {
                error: ErrorObject {
                    kind: "overloaded_error".into(),
                    message: "busy \"now\"".into(),
                    details: None,
                },
            },
        ];
        for event in &events {
            let expected = serde_json::to_string(event).unwrap();
            assert_eq!(written(event), format!("data: {expected}"));
        }
    }
}
