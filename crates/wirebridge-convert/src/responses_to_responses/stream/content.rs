//! The events about one item's content, passed on under the bridge's ids
//! with the positions the grammar requires.

use serde_json::value::RawValue;

use crate::decimal::push_decimal;
use crate::frames::Frames;
use wirebridge_wire::raw::JsonStr;
use wirebridge_wire::RawObject;

use super::end::PartKind;
use super::{index, json_string, string, State, StreamTranslator};

impl StreamTranslator {
    /// An event about one item's content.
    pub(super) fn item_event(
        &mut self,
        kind: &str,
        mut event: RawObject<'_>,
        out: &mut Frames,
    ) -> Result<(), String> {
        let id = event.str("item_id");
        let at = event.get("output_index").and_then(index);
        let (named, found) = (id.is_some(), self.find(id, at));
        let Some(slot) = found.or_else(|| self.open_slot()) else {
            if !named && at.is_none() {
                // Not about an item (an event this bridge does not know):
                // passed on as it is, in sequence.
                self.send(kind, event, out);
                return Ok(());
            }
            return Err(format!(
                "the upstream sent {kind} for an item it never announced"
            ));
        };
        self.slots[slot].content_seen = true;
        if self.ctx.summary && self.slots[slot].kind == "reasoning" {
            if self.as_summary(kind, &event, slot, out)? {
                return Ok(());
            }
            if kind == "response.reasoning_summary_part.added" {
                // The backend's own part comes after the one its text
                // was being shown as.
                self.close_summary(slot, out);
            }
        }
        self.slots[slot].track_native_summary(kind, &mut event)?;
        let state = &mut self.slots[slot];
        if matches!(
            kind,
            "response.function_call_arguments.done" | "response.custom_tool_call_input.done"
        ) {
            state.arguments_done = true;
        }
        match kind {
            "response.content_part.added" => {
                state.part_open = true;
                state.part_kind = PartKind::of(&event);
                state.text_done = false;
                state.text.clear();
                state.annotations.clear();
                patch_part(&mut event);
            }
            "response.content_part.done" => {
                state.part_open = false;
                let part = state.text_part();
                state.parts_done.push(part);
                patch_part(&mut event);
            }
            "response.output_text.delta"
            | "response.refusal.delta"
            | "response.reasoning_text.delta" => {
                // Decoded straight onto the text: the delta is most of the
                // stream, and its own copy would be one allocation each.
                match event.get("delta").and_then(JsonStr::new) {
                    Some(delta) => state.text.push_str(&delta.decode()),
                    None => {
                        if let Some(delta) = string(event.get("delta")) {
                            state.text.push_str(&delta);
                        }
                    }
                }
            }
            "response.output_text.annotation.added" => {
                if let Some(annotation) = event.get("annotation") {
                    state.annotations.push(annotation.to_owned());
                }
            }
            "response.output_text.done"
            | "response.refusal.done"
            | "response.reasoning_text.done" => {
                let field = if kind == "response.refusal.done" {
                    "refusal"
                } else {
                    "text"
                };
                match string(event.get(field)) {
                    Some(text) => state.text = text,
                    // The API requires it: what the deltas said.
                    None => event.set(field, &json_string(&state.text)),
                }
                state.text_done = true;
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                if let Some(delta) = string(event.get("delta")) {
                    state.arguments.push_str(&delta);
                }
            }
            "response.function_call_arguments.done" | "response.custom_tool_call_input.done" => {
                let field = if kind == "response.custom_tool_call_input.done" {
                    "input"
                } else {
                    "arguments"
                };
                if string(event.get(field)).is_none() {
                    event.set(field, &json_string(&state.arguments));
                }
                // The grammar names the function on this event; some
                // backends name it on the item only.
                let name = RawObject::parse(&state.added)
                    .ok()
                    .and_then(|item| item.get("name").map(|n| n.get().to_owned()));
                if let (Some(name), "arguments", None) = (name, field, event.get("name")) {
                    event.set("name", &name);
                }
            }
            _ => {}
        }
        let content_index = has_content_index(kind).then(|| {
            // A backend that numbers nothing streams its parts in order:
            // the open part is the one after those done (the one just
            // done, for its own `done`).
            let done = self.slots[slot].parts_done.len();
            match kind {
                "response.content_part.done" => done.saturating_sub(1),
                _ => done,
            }
        });
        let place = Place {
            item_id: &self.slots[slot].item_id,
            output_index: slot,
            content_index,
            logprobs: matches!(
                kind,
                "response.output_text.delta" | "response.output_text.done"
            ),
        };
        let seq = self.seq;
        self.seq += 1;
        place.send(kind, &event, seq, out);
        Ok(())
    }

    /// A message's text delta handed over as values by a reader in this
    /// crate (the Messages backend's), written as the JSON event it stands
    /// for would be, without that JSON being written and read again (it is
    /// most of a stream). `false`, with nothing done, where only the JSON
    /// path may take it: the stream not streaming, failed or holding items
    /// back, or the item no message the backend opened.
    pub(crate) fn text_delta(
        &mut self,
        item_id: &str,
        output_index: u64,
        content_index: usize,
        delta: &RawValue,
        out: &mut Frames,
    ) -> bool {
        let streaming = self.state == State::Streaming && self.failure.is_none();
        if !streaming || !self.held.is_empty() {
            return false;
        }
        let (Some(slot), Some(text)) = (
            self.find(Some(item_id), Some(output_index)),
            JsonStr::new(delta),
        ) else {
            return false;
        };
        let state = &mut self.slots[slot];
        if state.done || state.kind != "message" {
            return false;
        }
        state.content_seen = true;
        state.text.push_str(&text.decode());
        let seq = self.seq;
        self.seq += 1;
        let item_id = &self.slots[slot].item_id;
        out.event(Some("response.output_text.delta"), |out| {
            out.extend_from_slice(b"{\"type\":\"response.output_text.delta\",\"item_id\":");
            out.extend_from_slice(item_id.as_bytes());
            out.extend_from_slice(b",\"output_index\":");
            push_decimal(out, slot as u64);
            out.extend_from_slice(b",\"content_index\":");
            push_decimal(out, content_index as u64);
            out.extend_from_slice(b",\"delta\":");
            out.extend_from_slice(delta.get().as_bytes());
            out.extend_from_slice(b",\"logprobs\":[],\"sequence_number\":");
            push_decimal(out, seq);
            out.push(b'}');
        });
        true
    }

    /// An event about the item in `slot`: its id and position.
    pub(super) fn place(&self, slot: usize) -> RawObject<'static> {
        let mut event = RawObject::default();
        event.set("item_id", &self.slots[slot].item_id);
        event.set("output_index", &slot.to_string());
        event
    }
}

/// Where an event about an item goes in the client's stream: the fields
/// the bridge sets on it, written with the event's own rather than set on
/// it first (each set is an allocation, and a text delta is most of a
/// stream).
struct Place<'p> {
    /// The item's id, a JSON string literal: replaces the event's.
    item_id: &'p str,
    /// Replaces the event's.
    output_index: usize,
    /// Added when the event names none.
    content_index: Option<usize>,
    /// `"logprobs":[]` added when the event has none.
    logprobs: bool,
}

impl Place<'_> {
    /// Writes `event` as one event of type `kind`: its type first, its own
    /// fields in their order (`item_id` and `output_index` given the
    /// bridge's values in place, a repeat of either left out), then what it
    /// lacks (`logprobs`, `item_id`, `output_index`, `content_index`, in
    /// that order), then its place in the stream.
    fn send(&self, kind: &str, event: &RawObject<'_>, seq: u64, out: &mut Frames) {
        let (mut id_written, mut index_written) = (false, false);
        let (mut has_content_index, mut has_logprobs) = (false, false);
        out.event(Some(kind), |out| {
            out.extend_from_slice(b"{\"type\":");
            serde_json::to_writer(&mut *out, kind).expect("strings serialize");
            for (key, value) in event.fields() {
                let value = match key {
                    "type" | "sequence_number" => continue,
                    "item_id" if id_written => continue,
                    "output_index" if index_written => continue,
                    "item_id" => {
                        id_written = true;
                        None
                    }
                    "output_index" => {
                        index_written = true;
                        None
                    }
                    "content_index" => {
                        has_content_index = true;
                        Some(value)
                    }
                    "logprobs" => {
                        has_logprobs = true;
                        Some(value)
                    }
                    _ => Some(value),
                };
                out.push(b',');
                serde_json::to_writer(&mut *out, key).expect("strings serialize");
                out.push(b':');
                match (value, key) {
                    (Some(value), _) => out.extend_from_slice(value.get().as_bytes()),
                    (None, "item_id") => out.extend_from_slice(self.item_id.as_bytes()),
                    (None, _) => push_decimal(out, self.output_index as u64),
                }
            }
            if self.logprobs && !has_logprobs {
                out.extend_from_slice(b",\"logprobs\":[]");
            }
            if !id_written {
                out.extend_from_slice(b",\"item_id\":");
                out.extend_from_slice(self.item_id.as_bytes());
            }
            if !index_written {
                out.extend_from_slice(b",\"output_index\":");
                push_decimal(out, self.output_index as u64);
            }
            if let Some(at) = self.content_index.filter(|_| !has_content_index) {
                out.extend_from_slice(b",\"content_index\":");
                push_decimal(out, at as u64);
            }
            out.extend_from_slice(b",\"sequence_number\":");
            push_decimal(out, seq);
            out.push(b'}');
        });
    }
}

/// Event types whose content part the grammar requires them to name.
fn has_content_index(kind: &str) -> bool {
    matches!(
        kind,
        "response.content_part.added"
            | "response.content_part.done"
            | "response.output_text.delta"
            | "response.output_text.done"
            | "response.output_text.annotation.added"
            | "response.refusal.delta"
            | "response.refusal.done"
            | "response.reasoning_text.delta"
            | "response.reasoning_text.done"
    )
}

/// An output text part with the keys the API requires of it (a part the
/// bridge opens for an item sent whole has neither).
fn patch_part(event: &mut RawObject<'_>) {
    let Some(part) = event.get("part") else {
        return;
    };
    let Ok(mut fields) = RawObject::parse(part) else {
        return;
    };
    let missing = |key| fields.get(key).is_none();
    if fields.str("type") != Some("output_text") || !(missing("annotations") || missing("logprobs"))
    {
        return;
    }
    fields.set_if_absent("annotations", "[]");
    fields.set_if_absent("logprobs", "[]");
    let patched = fields.to_raw();
    event.set_raw("part", patched);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::responses_to_responses::NativeContext;
    use crate::stream::StreamTranslate;

    /// The events before a message's first delta, as a stateless backend
    /// (or the Messages backend's reader) sends them.
    const OPENING: [&str; 3] = [
        r#"{"type":"response.created","response":{"id":"r","object":"response","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_0","role":"assistant","status":"in_progress","content":[]}}"#,
        r#"{"type":"response.content_part.added","item_id":"msg_0","output_index":0,"content_index":0,"part":{"type":"output_text","text":""}}"#,
    ];

    fn opened(context: &NativeContext) -> (StreamTranslator, Frames) {
        let mut translator = StreamTranslator::new(context.clone());
        let mut out = Frames::sse();
        for event in OPENING {
            translator.push(event, &mut out);
        }
        out.clear();
        (translator, out)
    }

    /// What a delta handed over as values writes is what the same delta
    /// written as JSON and read again writes, to the byte.
    #[test]
    fn a_text_delta_as_values_writes_what_its_json_writes() {
        let delta: &RawValue = serde_json::from_str(r#""caf\u00e9 \"ok\"""#).unwrap();
        // One context for both, so that both name the item alike.
        let context = NativeContext::default();
        let (mut by_json, mut json_out) = opened(&context);
        by_json.push(
            &format!(
                r#"{{"type":"response.output_text.delta","item_id":"msg_0","output_index":0,"content_index":0,"delta":{}}}"#,
                delta.get()
            ),
            &mut json_out,
        );
        let (mut by_value, mut value_out) = opened(&context);
        assert!(by_value.text_delta("msg_0", 0, 0, delta, &mut value_out));
        let (json, value) = (json_out.take().bytes, value_out.take().bytes);
        assert!(!json.is_empty());
        assert_eq!(String::from_utf8(value), String::from_utf8(json));
        assert_eq!(by_value.slots[0].text, by_json.slots[0].text);
        assert_eq!(by_value.slots[0].text, "café \"ok\"");
    }

    /// Where the JSON path would do more than write the delta (an item the
    /// backend never opened, a stream not begun), the values are refused
    /// and nothing is written.
    #[test]
    fn a_text_delta_the_json_path_must_read_is_refused() {
        let delta: &RawValue = serde_json::from_str(r#""x""#).unwrap();
        let mut fresh = StreamTranslator::new(NativeContext::default());
        let mut out = Frames::sse();
        assert!(!fresh.text_delta("msg_0", 0, 0, delta, &mut out));
        let (mut opened, mut out) = opened(&NativeContext::default());
        assert!(!opened.text_delta("msg_9", 9, 0, delta, &mut out));
        assert!(out.take().bytes.is_empty());
    }
}
