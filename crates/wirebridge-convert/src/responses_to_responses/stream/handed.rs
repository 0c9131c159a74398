//! Deltas handed over as values by a reader in this crate (the Messages
//! backend's), written as the JSON events they stand for would be,
//! without that JSON being written and read again.
//!
//! A message's text, a reasoning item's text and a function call's
//! arguments arrive a few characters at a time: they are most of a stream.
//! Every other event still comes as JSON, through
//! [`push`](crate::stream::StreamTranslate::push).

use serde_json::value::RawValue;

use crate::frames::Frames;
use wirebridge_wire::decimal::push_decimal;
use wirebridge_wire::raw::JsonStr;

use super::{State, StreamTranslator};
pub(crate) use crate::handed::DeltaKind;

/// A delta as values: the item it belongs to, where, and the text as the
/// backend escaped it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Delta<'a> {
    pub(crate) kind: DeltaKind,
    /// The item's id as the reader named it (unquoted).
    pub(crate) item_id: &'a str,
    /// The item's place in the reader's output.
    pub(crate) output_index: usize,
    /// The part's place in the item (arguments have none).
    pub(crate) content_index: usize,
    /// The text, a JSON string as the backend wrote it.
    pub(crate) delta: &'a RawValue,
}

impl Delta<'_> {
    /// The event as JSON, for a translator that cannot take it as values
    /// at this point of its stream.
    pub(crate) fn to_json(self) -> String {
        let mut json = String::with_capacity(96 + self.item_id.len() + self.delta.get().len());
        json.push_str("{\"type\":\"");
        json.push_str(self.kind.event_type());
        json.push_str("\",\"item_id\":");
        // The reader's own ids are plain: quoted as they are.
        json.push('"');
        json.push_str(self.item_id);
        json.push_str("\",\"output_index\":");
        wirebridge_wire::decimal::push_decimal_str(&mut json, self.output_index as u64);
        if let Some(field) = self.kind.part_field() {
            json.push_str(",\"");
            json.push_str(field);
            json.push_str("\":");
            wirebridge_wire::decimal::push_decimal_str(&mut json, self.content_index as u64);
        }
        json.push_str(",\"delta\":");
        json.push_str(self.delta.get());
        json.push('}');
        json
    }
}

impl StreamTranslator {
    /// Writes a delta handed over as values as its JSON event would be
    /// written, to the byte. `false`, with nothing done, where only the
    /// JSON path may take it: the stream not streaming, failed or holding
    /// items back, the item not one of the delta's kind the backend
    /// opened, or reasoning shown as a summary.
    pub(crate) fn handed_delta(&mut self, delta: Delta<'_>, out: &mut Frames) -> bool {
        let streaming = self.state == State::Streaming && self.failure.is_none();
        // The Messages backend's reader hands text, reasoning text and
        // arguments; a refusal or a summary takes the JSON path.
        let taken = !matches!(delta.kind, DeltaKind::Refusal | DeltaKind::ReasoningSummary);
        if !streaming || !taken || !self.held.is_empty() {
            return false;
        }
        let (Some(slot), Some(text)) = (
            self.find(Some(delta.item_id), Some(delta.output_index as u64)),
            JsonStr::new(delta.delta),
        ) else {
            return false;
        };
        let state = &mut self.slots[slot];
        if state.done || state.kind != delta.kind.item_type() {
            return false;
        }
        if delta.kind == DeltaKind::ReasoningText && self.ctx.summary {
            return self.handed_summary_delta(slot, text, out);
        }
        let state = &mut self.slots[slot];
        state.content_seen = true;
        // Decoded straight onto what the item holds, as the JSON path does.
        match delta.kind {
            DeltaKind::FunctionCallArguments => state.arguments.push_str(&text.decode()),
            _ => state.text.push_str(&text.decode()),
        }
        let seq = self.seq;
        self.seq += 1;
        let item_id = &self.slots[slot].item_id;
        let kind = delta.kind.event_type();
        out.event(Some(kind), |out| {
            out.extend_from_slice(b"{\"type\":\"");
            out.extend_from_slice(kind.as_bytes());
            out.extend_from_slice(b"\",\"item_id\":");
            out.extend_from_slice(item_id.as_bytes());
            out.extend_from_slice(b",\"output_index\":");
            push_decimal(out, slot as u64);
            if delta.kind != DeltaKind::FunctionCallArguments {
                out.extend_from_slice(b",\"content_index\":");
                push_decimal(out, delta.content_index as u64);
            }
            out.extend_from_slice(b",\"delta\":");
            out.extend_from_slice(delta.delta.get().as_bytes());
            if delta.kind == DeltaKind::OutputText {
                out.extend_from_slice(b",\"logprobs\":[]");
            }
            out.extend_from_slice(b",\"sequence_number\":");
            push_decimal(out, seq);
            out.push(b'}');
        });
        true
    }
}

impl StreamTranslator {
    /// Reasoning text shown as summary text, for a client that asked for a
    /// summary: written as the JSON path's `as_summary` writes it (the
    /// delta decoded and escaped again as serde_json escapes it), once the
    /// summary part is open; `false` for the delta that must open it.
    fn handed_summary_delta(&mut self, slot: usize, text: JsonStr<'_>, out: &mut Frames) -> bool {
        let state = &mut self.slots[slot];
        if !state.summary_open {
            return false;
        }
        state.content_seen = true;
        let decoded = text.decode();
        state.text.push_str(&decoded);
        let summary_index = state.summaries.len();
        let seq = self.seq;
        self.seq += 1;
        let item_id = &self.slots[slot].item_id;
        out.event(Some("response.reasoning_summary_text.delta"), |out| {
            out.extend_from_slice(
                b"{\"type\":\"response.reasoning_summary_text.delta\",\"item_id\":",
            );
            out.extend_from_slice(item_id.as_bytes());
            out.extend_from_slice(b",\"output_index\":");
            push_decimal(out, slot as u64);
            out.extend_from_slice(b",\"summary_index\":");
            push_decimal(out, summary_index as u64);
            out.extend_from_slice(b",\"delta\":");
            serde_json::to_writer(&mut *out, &*decoded).expect("strings serialize");
            out.extend_from_slice(b",\"sequence_number\":");
            push_decimal(out, seq);
            out.push(b'}');
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::responses_to_responses::NativeContext;
    use crate::stream::StreamTranslate;

    /// The events before the first delta of each kind, as a stateless
    /// backend (or the Messages backend's reader) sends them: one item of
    /// each kind opened at once is not the grammar, so each kind has its
    /// own opening.
    fn opening(kind: DeltaKind) -> Vec<&'static str> {
        let created = r#"{"type":"response.created","response":{"id":"r","object":"response","status":"in_progress"}}"#;
        match kind {
            DeltaKind::OutputText | DeltaKind::Refusal => vec![
                created,
                r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_0","role":"assistant","status":"in_progress","content":[]}}"#,
                r#"{"type":"response.content_part.added","item_id":"msg_0","output_index":0,"content_index":0,"part":{"type":"output_text","text":""}}"#,
            ],
            DeltaKind::ReasoningText | DeltaKind::ReasoningSummary => vec![
                created,
                r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"msg_0","summary":[],"content":[]}}"#,
            ],
            DeltaKind::FunctionCallArguments => vec![
                created,
                r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"msg_0","call_id":"c","name":"f","arguments":"","status":"in_progress"}}"#,
            ],
        }
    }

    fn opened(kind: DeltaKind, context: &NativeContext) -> (StreamTranslator, Frames) {
        let mut translator = StreamTranslator::new(context.clone());
        let mut out = Frames::sse();
        for event in opening(kind) {
            translator.push(event, &mut out);
        }
        out.clear();
        (translator, out)
    }

    const KINDS: [DeltaKind; 3] = [
        DeltaKind::OutputText,
        DeltaKind::ReasoningText,
        DeltaKind::FunctionCallArguments,
    ];

    /// What a delta handed over as values writes is what the same delta
    /// written as JSON and read again writes, to the byte, and each holds
    /// the same text after it.
    #[test]
    fn a_delta_as_values_writes_what_its_json_writes() {
        let text: &RawValue = serde_json::from_str(r#""caf\u00e9 \"ok\" {\"a\":""#).unwrap();
        // One context for both, so that both name the item alike.
        let context = NativeContext::default();
        for kind in KINDS {
            let delta = Delta {
                kind,
                item_id: "msg_0",
                output_index: 0,
                content_index: 0,
                delta: text,
            };
            let (mut by_json, mut json_out) = opened(kind, &context);
            by_json.push(&delta.to_json(), &mut json_out);
            let (mut by_value, mut value_out) = opened(kind, &context);
            assert!(by_value.handed_delta(delta, &mut value_out), "{kind:?}");
            let (json, value) = (json_out.take().bytes, value_out.take().bytes);
            assert!(!json.is_empty(), "{kind:?}");
            assert_eq!(
                String::from_utf8(value),
                String::from_utf8(json),
                "{kind:?}"
            );
            let (held, by_json) = (&by_value.slots[0], &by_json.slots[0]);
            assert_eq!(
                (&held.text, &held.arguments),
                (&by_json.text, &by_json.arguments)
            );
            let expected = "café \"ok\" {\"a\":";
            match kind {
                DeltaKind::FunctionCallArguments => assert_eq!(held.arguments, expected),
                _ => assert_eq!(held.text, expected),
            }
        }
    }

    /// Where the JSON path would do more than write the delta (an item the
    /// backend never opened or of another kind, a stream not begun,
    /// reasoning shown as a summary), the values are refused and nothing is
    /// written.
    #[test]
    fn a_delta_the_json_path_must_read_is_refused() {
        let text: &RawValue = serde_json::from_str(r#""x""#).unwrap();
        let delta = |kind, item_id| Delta {
            kind,
            item_id,
            output_index: 0,
            content_index: 0,
            delta: text,
        };
        for kind in KINDS {
            let mut fresh = StreamTranslator::new(NativeContext::default());
            let mut out = Frames::sse();
            assert!(!fresh.handed_delta(delta(kind, "msg_0"), &mut out));
            let (mut opened, mut out) = opened(kind, &NativeContext::default());
            let mut elsewhere = delta(kind, "msg_9");
            elsewhere.output_index = 9;
            assert!(!opened.handed_delta(elsewhere, &mut out));
            for other in KINDS.into_iter().filter(|k| *k != kind) {
                assert!(!opened.handed_delta(delta(other, "msg_0"), &mut out));
            }
            assert!(out.take().bytes.is_empty());
        }
        // Reasoning shown as a summary: the delta that opens the summary
        // part is the JSON path's.
        let summary = NativeContext {
            summary: true,
            ..NativeContext::default()
        };
        let (mut opened, mut out) = opened(DeltaKind::ReasoningText, &summary);
        assert!(!opened.handed_delta(delta(DeltaKind::ReasoningText, "msg_0"), &mut out));
        assert!(out.take().bytes.is_empty());
        // A refusal, or a summary fragment as such, is never handed as
        // values: the JSON path takes them, on an item of their kind too.
        for kind in [DeltaKind::Refusal, DeltaKind::ReasoningSummary] {
            let (mut opened, mut out) = self::opened(kind, &NativeContext::default());
            assert!(!opened.handed_delta(delta(kind, "msg_0"), &mut out));
            assert!(out.take().bytes.is_empty());
        }
    }

    /// Reasoning shown as summary text: once the first delta opened the
    /// summary part, each one handed over writes what its JSON writes,
    /// escapes written again as serde_json writes them.
    #[test]
    fn reasoning_shown_as_a_summary_writes_what_its_json_writes() {
        let context = NativeContext {
            summary: true,
            ..NativeContext::default()
        };
        let first: &RawValue = serde_json::from_str(r#""Let me ""#).unwrap();
        let text: &RawValue = serde_json::from_str(r#""caf\u00e9 \/ \"ok\"\n""#).unwrap();
        let delta = |delta| Delta {
            kind: DeltaKind::ReasoningText,
            item_id: "msg_0",
            output_index: 0,
            content_index: 0,
            delta,
        };
        let (mut by_json, mut json_out) = opened(DeltaKind::ReasoningText, &context);
        let (mut by_value, mut value_out) = opened(DeltaKind::ReasoningText, &context);
        for translator in [&mut by_json, &mut by_value] {
            translator.push(&delta(first).to_json(), &mut Frames::sse());
            assert!(translator.slots[0].summary_open);
        }
        by_json.push(&delta(text).to_json(), &mut json_out);
        assert!(by_value.handed_delta(delta(text), &mut value_out));
        let (json, value) = (json_out.take().bytes, value_out.take().bytes);
        assert!(!json.is_empty());
        assert_eq!(String::from_utf8(value), String::from_utf8(json));
        assert_eq!(by_value.slots[0].text, by_json.slots[0].text);
        assert_eq!(by_value.slots[0].text, "Let me café / \"ok\"\n");
    }
}
