//! The events about one item's content, passed on under the bridge's ids
//! with the positions the grammar requires.

use crate::frames::Frames;
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
        let id = event.str("item_id").map(str::to_owned);
        let at = event.get("output_index").and_then(index);
        let Some(slot) = self.find(id.as_deref(), at).or_else(|| self.open_slot()) else {
            if id.is_none() && at.is_none() {
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
                if let Some(delta) = string(event.get("delta")) {
                    state.text.push_str(&delta);
                }
                if kind == "response.output_text.delta" {
                    event.set_if_absent("logprobs", "[]");
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
                if kind == "response.output_text.done" {
                    event.set_if_absent("logprobs", "[]");
                }
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
        event.set("item_id", &self.slots[slot].item_id);
        event.set("output_index", &slot.to_string());
        if has_content_index(kind) {
            // A backend that numbers nothing streams its parts in order:
            // the open part is the one after those done (the one just
            // done, for its own `done`).
            let done = self.slots[slot].parts_done.len();
            let index = match kind {
                "response.content_part.done" => done.saturating_sub(1),
                _ => done,
            };
            event.set_if_absent("content_index", &index.to_string());
        }
        self.send(kind, event, out);
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
