//! Delta events written from a template.
//!
//! A streamed part sends one delta event per upstream chunk, and all of
//! them are alike but for the sequence number and the fragment (and, for
//! output text, its log probabilities):
//!
//! ```json
//! {"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_…",
//!  "output_index":0,"content_index":0,"delta":"Holiday","logprobs":[]}
//! ```
//!
//! Serializing each one walked the event's fields and escaped its constant
//! strings every time. A [`DeltaFrame`] writes the constant parts once,
//! when the part opens, and each delta appends only what changes, byte for
//! byte what serializing the event gives.
//!
//! In [`Framing::Handed`](crate::frames::Framing::Handed) a delta is
//! written as a record of its fields instead, for the Messages translator
//! stacked on this one to take as they are.

use crate::frames::Frames;
use crate::handed::{self, DeltaKind};
use serde_json::value::RawValue;
use wirebridge_wire::decimal::push_decimal;

/// The constant parts of one part's delta events.
#[derive(Debug)]
pub(super) struct DeltaFrame {
    kind: &'static str,
    /// `{"type":…,"sequence_number":`, then (from `fields_at`)
    /// `,"item_id":…,"output_index":…,"<index>":…,"delta":`.
    template: Vec<u8>,
    fields_at: usize,
    /// What a handed record says of the part.
    handed: Option<DeltaKind>,
    output_index: u32,
    index: u32,
}

impl DeltaFrame {
    /// The frame of `kind` events for the part at `index_field` `index`
    /// of the item `item_id`, at `output_index`.
    pub(super) fn new(
        kind: &'static str,
        item_id: &str,
        output_index: usize,
        index_field: &'static str,
        index: usize,
    ) -> Self {
        let mut template = Vec::with_capacity(96 + kind.len() + item_id.len());
        template.extend_from_slice(b"{\"type\":");
        push_json_str(&mut template, kind);
        template.extend_from_slice(b",\"sequence_number\":");
        let fields_at = template.len();
        template.extend_from_slice(b",\"item_id\":");
        push_json_str(&mut template, item_id);
        template.extend_from_slice(b",\"output_index\":");
        push_decimal(&mut template, output_index as u64);
        template.extend_from_slice(b",\"");
        template.extend_from_slice(index_field.as_bytes());
        template.extend_from_slice(b"\":");
        push_decimal(&mut template, index as u64);
        template.extend_from_slice(b",\"delta\":");
        Self {
            kind,
            template,
            fields_at,
            handed: DeltaKind::of(kind),
            output_index: saturate(output_index),
            index: saturate(index),
        }
    }

    /// Appends the event of one fragment (a JSON string literal) and
    /// advances `seq`; output text events carry `logprobs` after it, which
    /// a handed record leaves out (a Messages client has no use for them).
    pub(super) fn write(
        &self,
        out: &mut Frames,
        seq: &mut u64,
        fragment: &RawValue,
        logprobs: Option<&RawValue>,
    ) {
        if let Some(kind) = self.handed.filter(|_| out.framing().hands_deltas()) {
            // A fragment is a string literal: its text between the quotes.
            let literal = fragment.get();
            let escaped = &literal[1..literal.len() - 1];
            out.event(Some(self.kind), |out| {
                handed::write(out, kind, self.output_index, self.index, escaped)
            });
            *seq += 1;
            return;
        }
        let (head, fields) = self.template.split_at(self.fields_at);
        out.event(Some(self.kind), |out| {
            out.extend_from_slice(head);
            push_decimal(out, *seq);
            out.extend_from_slice(fields);
            out.extend_from_slice(fragment.get().as_bytes());
            if let Some(logprobs) = logprobs {
                out.extend_from_slice(b",\"logprobs\":");
                out.extend_from_slice(logprobs.get().as_bytes());
            }
            out.push(b'}');
        });
        *seq += 1;
    }
}

/// An index as a record holds it: no part has four billion siblings, and
/// one that claimed to would only be misplaced, never misread.
fn saturate(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}

/// Appends `text` as a JSON string literal, escaped as serde_json does.
fn push_json_str(out: &mut Vec<u8>, text: &str) {
    serde_json::to_writer(out, text).expect("strings always serialize");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::responses_to_chat::stream::emit;
    use wirebridge_wire::raw::JsonText;
    use wirebridge_wire::responses::strict::{OutputTextEvent, SummaryTextEvent};

    fn raw(json: &str) -> &RawValue {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn writes_what_serializing_writes() {
        let kind = "response.output_text.delta";
        for (item_id, seq, fragment, logprobs) in [
            ("msg_1", 0, r#""Hi""#, "[]"),
            (
                "msg_\"odd\"\u{1}é",
                1234567890123,
                r#""a\nb\u00e9""#,
                r#"[{"token":"a"}]"#,
            ),
            ("m", u64::MAX - 1, r#""""#, "[\n1\r\n]"),
        ] {
            let frame = DeltaFrame::new(kind, item_id, 3, "content_index", 7);
            let (mut seq_a, mut seq_b) = (seq, seq);
            let (mut a, mut b) = (Frames::sse(), Frames::sse());
            frame.write(&mut a, &mut seq_a, raw(fragment), Some(raw(logprobs)));
            let body = OutputTextEvent {
                item_id,
                output_index: 3,
                content_index: 7,
                delta: Some(JsonText::Borrowed(
                    wirebridge_wire::raw::JsonStr::new(raw(fragment)).unwrap(),
                )),
                text: None,
                logprobs: raw(logprobs),
            };
            emit(&mut b, &mut seq_b, kind, body);
            assert_eq!(a.as_bytes(), b.as_bytes());
            assert_eq!(seq_a, seq_b);
        }
    }

    #[test]
    fn writes_summary_deltas() {
        let kind = "response.reasoning_summary_text.delta";
        let frame = DeltaFrame::new(kind, "rs_1", 0, "summary_index", 0);
        let (mut seq_a, mut seq_b) = (41, 41);
        let (mut a, mut b) = (Frames::sse(), Frames::sse());
        frame.write(&mut a, &mut seq_a, raw(r#""think""#), None);
        let body = SummaryTextEvent {
            item_id: "rs_1",
            output_index: 0,
            summary_index: 0,
            delta: Some(JsonText::from_text("think")),
            text: None,
        };
        emit(&mut b, &mut seq_b, kind, body);
        assert_eq!(a.as_bytes(), b.as_bytes());
    }
}
