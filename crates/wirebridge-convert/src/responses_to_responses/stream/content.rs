//! The events about one item's content, passed on under the bridge's ids
//! with the positions the grammar requires.

use crate::frames::Frames;
use wirebridge_wire::decimal::push_decimal;
use wirebridge_wire::raw::JsonStr;
use wirebridge_wire::RawObject;

use super::end::PartKind;
use super::{index, json_string, string, StreamTranslator};

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
