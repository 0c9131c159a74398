//! Items a backend sends whole: finished with content it never streamed.
//!
//! Some servers send an item only as `response.output_item.done` (or only
//! list it in their final response), without the part, delta and done
//! events the grammar puts before it; an SDK that accumulates the stream
//! then holds an item whose content it never saw arrive, and a strict one
//! refuses it. The bridge streams such an item's content itself, as the
//! events the backend would have sent, read by the same code as theirs.

use serde_json::value::RawValue;
use wirebridge_wire::RawObject;

use super::StreamTranslator;
use crate::frames::Frames;

impl StreamTranslator {
    /// Streams the content of the item in `slot`, finished as `item` (the
    /// backend's), when none of it was streamed.
    pub(super) fn stream_unstreamed(
        &mut self,
        slot: usize,
        item: &RawValue,
        out: &mut Frames,
    ) -> Result<(), String> {
        if self.slots[slot].content_seen {
            return Ok(());
        }
        let Ok(item) = RawObject::parse(item) else {
            return Ok(());
        };
        for (kind, fields) in content_events(&item, self.ctx.summary) {
            let mut event = RawObject::default();
            for (key, json) in &fields {
                event.set(key, json);
            }
            self.item_event(kind, event, out)?;
        }
        Ok(())
    }
}

/// The events that stream `item`'s content, each a type and its fields (as
/// JSON texts), in the order the grammar wants them. With `summary` (the
/// client sees reasoning as a summary), a reasoning item's text is not
/// streamed when it has a summary of its own, which the client gets
/// instead (see [`items::rewrite`](super::items::rewrite)).
fn content_events(
    item: &RawObject<'_>,
    summary: bool,
) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let mut events = Vec::new();
    match item.str("type") {
        Some("message") => {
            for (n, part) in parts(item.get("content")).into_iter().enumerate() {
                message_part(&mut events, n, &part);
            }
        }
        Some("reasoning") => {
            let summaries = parts(item.get("summary"));
            let text = match summary && !summaries.is_empty() {
                true => Vec::new(),
                false => parts(item.get("content")),
            };
            for (n, part) in summaries.into_iter().enumerate() {
                let Some(text) = part.get("text").map(|t| t.get().to_owned()) else {
                    continue;
                };
                let at = || ("summary_index", n.to_string());
                let empty = r#"{"type":"summary_text","text":""}"#.to_owned();
                events.push((
                    "response.reasoning_summary_part.added",
                    vec![at(), ("part", empty)],
                ));
                events.push((
                    "response.reasoning_summary_text.delta",
                    vec![at(), ("delta", text.clone())],
                ));
                events.push((
                    "response.reasoning_summary_text.done",
                    vec![at(), ("text", text.clone())],
                ));
                let done = format!(r#"{{"type":"summary_text","text":{text}}}"#);
                events.push((
                    "response.reasoning_summary_part.done",
                    vec![at(), ("part", done)],
                ));
            }
            for (n, part) in text.into_iter().enumerate() {
                if part.str("type") != Some("reasoning_text") {
                    continue;
                }
                let Some(text) = part.get("text").map(|t| t.get().to_owned()) else {
                    continue;
                };
                let at = || ("content_index", n.to_string());
                events.push((
                    "response.reasoning_text.delta",
                    vec![at(), ("delta", text.clone())],
                ));
                events.push(("response.reasoning_text.done", vec![at(), ("text", text)]));
            }
        }
        Some(kind @ ("function_call" | "custom_tool_call")) => {
            let (field, delta, done) = match kind {
                "function_call" => (
                    "arguments",
                    "response.function_call_arguments.delta",
                    "response.function_call_arguments.done",
                ),
                _ => (
                    "input",
                    "response.custom_tool_call_input.delta",
                    "response.custom_tool_call_input.done",
                ),
            };
            if let Some(value) = item.get(field).filter(|v| v.get().starts_with('"')) {
                let value = value.get().to_owned();
                events.push((delta, vec![("delta", value.clone())]));
                events.push((done, vec![(field, value)]));
            }
        }
        _ => {}
    }
    events
}

/// One part of a message: opened empty, its text as one delta, its
/// annotations, its text done, closed as the backend finished it.
fn message_part(
    events: &mut Vec<(&'static str, Vec<(&'static str, String)>)>,
    n: usize,
    part: &RawObject<'_>,
) {
    let (field, delta, done) = match part.str("type") {
        Some("output_text") => (
            "text",
            "response.output_text.delta",
            "response.output_text.done",
        ),
        Some("refusal") => ("refusal", "response.refusal.delta", "response.refusal.done"),
        // A part with no text events of its own is only opened and closed.
        _ => ("", "", ""),
    };
    let at = || ("content_index", n.to_string());
    let kind = part
        .get("type")
        .map_or("null".to_owned(), |k| k.get().to_owned());
    let empty = match field {
        "" => format!(r#"{{"type":{kind}}}"#),
        _ => format!(r#"{{"type":{kind},"{field}":""}}"#),
    };
    events.push(("response.content_part.added", vec![at(), ("part", empty)]));
    if let Some(text) = part.get(field).map(|t| t.get().to_owned()) {
        events.push((delta, vec![at(), ("delta", text.clone())]));
        for (index, annotation) in parts_raw(part.get("annotations")).into_iter().enumerate() {
            events.push((
                "response.output_text.annotation.added",
                vec![
                    at(),
                    ("annotation_index", index.to_string()),
                    ("annotation", annotation.get().to_owned()),
                ],
            ));
        }
        events.push((done, vec![at(), (field, text)]));
    }
    let whole = part.to_raw().get().to_owned();
    events.push(("response.content_part.done", vec![at(), ("part", whole)]));
}

/// The objects of a JSON array (other elements left out).
fn parts<'a>(array: Option<&'a RawValue>) -> Vec<RawObject<'a>> {
    parts_raw(array)
        .into_iter()
        .filter_map(|raw| RawObject::parse(raw).ok())
        .collect()
}

/// The elements of a JSON array; none when it is something else.
fn parts_raw(array: Option<&RawValue>) -> Vec<&RawValue> {
    array
        .and_then(|a| serde_json::from_str(a.get()).ok())
        .unwrap_or_default()
}
