//! Reasoning text shown as a summary: a backend's `reasoning_text` events
//! re-sent as the one summary part they stand for, for a client that asked
//! for a summary (Codex shows no other reasoning). And the backend's own
//! summary parts, followed as they pass so that a stream that ends inside
//! one still closes it.

use crate::frames::Frames;
use wirebridge_wire::RawObject;

use super::{index, string, Slot, StreamTranslator};

/// A summary part of the backend's, open.
#[derive(Debug)]
pub(super) struct NativeSummary {
    /// Its place among the item's summary parts as the client has them.
    index: usize,
    text: String,
    /// Whether its `reasoning_summary_text.done` was passed on.
    text_done: bool,
}

impl Slot {
    /// Follows the backend's summary part events, and names the part on
    /// those that do not (the API requires `summary_index` on each). A
    /// part reasoning text became before it moves its place on by one. A
    /// part opened inside another is a broken stream.
    pub(super) fn track_native_summary(
        &mut self,
        kind: &str,
        event: &mut RawObject<'_>,
    ) -> Result<(), String> {
        if kind == "response.reasoning_summary_part.added" && self.native_summary.is_some() {
            return Err(
                "the upstream opened a summary part while another was still open".to_owned(),
            );
        }
        if !kind.starts_with("response.reasoning_summary_") {
            return Ok(());
        }
        let given = event.get("summary_index").and_then(index);
        let place = match (given, &self.native_summary, kind) {
            (Some(given), _, _) => given as usize + self.text_summaries,
            (None, Some(part), _) => part.index,
            (None, None, "response.reasoning_summary_part.added") => self.summaries.len(),
            (None, None, _) => self.summaries.len().saturating_sub(1),
        };
        if given.is_none() || self.text_summaries > 0 {
            event.set("summary_index", &place.to_string());
        }
        match kind {
            "response.reasoning_summary_part.added" => {
                self.native_summary = Some(NativeSummary {
                    index: place,
                    text: String::new(),
                    text_done: false,
                });
            }
            "response.reasoning_summary_text.delta" => {
                if let Some(part) = &mut self.native_summary {
                    part.text
                        .push_str(&string(event.get("delta")).unwrap_or_default());
                }
            }
            "response.reasoning_summary_text.done" => {
                if let Some(part) = &mut self.native_summary {
                    if let Some(text) = string(event.get("text")) {
                        part.text = text;
                    }
                    part.text_done = true;
                }
            }
            "response.reasoning_summary_part.done" => {
                if let Some(part) = self.native_summary.take() {
                    let text = event
                        .get("part")
                        .and_then(|p| RawObject::parse(p).ok())
                        .and_then(|p| string(p.get("text")));
                    self.summaries.push(text.unwrap_or(part.text));
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl StreamTranslator {
    /// Reasoning text events, sent as the summary part they stand for;
    /// `false` for an event that is not one. The text of every
    /// `reasoning_text` part in a row goes into one summary part, as the
    /// finished item's parts are joined into one; the part closes when the
    /// item ends or the backend opens a summary part of its own.
    pub(super) fn as_summary(
        &mut self,
        kind: &str,
        event: &RawObject<'_>,
        slot: usize,
        out: &mut Frames,
    ) -> Result<bool, String> {
        match kind {
            "response.content_part.added" | "response.content_part.done" => {
                let part = event.get("part").and_then(|p| RawObject::parse(p).ok());
                // Reasoning text parts become the summary part.
                let text_part = part.is_some_and(|p| p.str("type") == Some("reasoning_text"));
                if text_part && kind == "response.content_part.added" {
                    let state = &mut self.slots[slot];
                    state.reasoning_part_from = if state.summary_open {
                        state.text.len()
                    } else {
                        0
                    };
                }
                Ok(text_part)
            }
            "response.reasoning_text.delta" => {
                let delta = string(event.get("delta")).unwrap_or_default();
                self.open_summary(slot, out)?;
                self.summary_delta(slot, delta, out);
                Ok(true)
            }
            "response.reasoning_text.done" => {
                self.open_summary(slot, out)?;
                let state = &self.slots[slot];
                let sent = &state.text[state.reasoning_part_from..];
                // What the deltas left out, when they said less than the
                // whole text (or nothing at all).
                let rest = string(event.get("text"))
                    .and_then(|text| text.strip_prefix(sent).map(str::to_owned))
                    .filter(|rest| !rest.is_empty());
                if let Some(rest) = rest {
                    self.summary_delta(slot, rest, out);
                }
                let state = &mut self.slots[slot];
                state.reasoning_part_from = state.text.len();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn summary_delta(&mut self, slot: usize, delta: String, out: &mut Frames) {
        let mut summary = self.summary_event(slot);
        summary.set(
            "delta",
            &serde_json::to_string(&delta).expect("strings serialize"),
        );
        self.slots[slot].text.push_str(&delta);
        self.send("response.reasoning_summary_text.delta", summary, out);
    }

    fn open_summary(&mut self, slot: usize, out: &mut Frames) -> Result<(), String> {
        let state = &mut self.slots[slot];
        if state.summary_open {
            return Ok(());
        }
        if state.native_summary.is_some() {
            return Err("the upstream sent reasoning text inside a summary part".to_owned());
        }
        state.summary_open = true;
        state.text_summaries += 1;
        state.text.clear();
        state.reasoning_part_from = 0;
        let mut event = self.summary_event(slot);
        event.set("part", r#"{"type":"summary_text","text":""}"#);
        self.send("response.reasoning_summary_part.added", event, out);
        Ok(())
    }

    /// Closes the summary part reasoning text was being sent as, if one is
    /// open, and keeps its text among the item's summary parts.
    pub(super) fn close_summary(&mut self, slot: usize, out: &mut Frames) {
        if !self.slots[slot].summary_open {
            return;
        }
        let text = serde_json::to_string(&self.slots[slot].text).expect("strings serialize");
        let mut event = self.summary_event(slot);
        event.set("text", &text);
        self.send("response.reasoning_summary_text.done", event, out);
        let mut event = self.summary_event(slot);
        event.set(
            "part",
            &format!(r#"{{"type":"summary_text","text":{text}}}"#),
        );
        self.send("response.reasoning_summary_part.done", event, out);
        let state = &mut self.slots[slot];
        state.summary_open = false;
        let text = std::mem::take(&mut state.text);
        state.summaries.push(text);
    }

    /// An event about the summary part reasoning text is sent as: the
    /// next of the item's parts.
    fn summary_event(&self, slot: usize) -> RawObject<'static> {
        let mut event = self.place(slot);
        event.set(
            "summary_index",
            &self.slots[slot].summaries.len().to_string(),
        );
        event
    }
}

impl StreamTranslator {
    /// Closes the backend's summary part left open, with what arrived.
    pub(super) fn close_native_summary(&mut self, slot: usize, out: &mut Frames) {
        let Some(part) = self.slots[slot].native_summary.take() else {
            return;
        };
        let text = serde_json::to_string(&part.text).expect("strings serialize");
        let mut event = self.place(slot);
        event.set("summary_index", &part.index.to_string());
        if !part.text_done {
            let mut done = event.clone();
            done.set("text", &text);
            self.send("response.reasoning_summary_text.done", done, out);
        }
        event.set(
            "part",
            &format!(r#"{{"type":"summary_text","text":{text}}}"#),
        );
        self.send("response.reasoning_summary_part.done", event, out);
        self.slots[slot].summaries.push(part.text);
    }
}

impl Slot {
    /// The item's `summary` as the client was sent it, when it was sent
    /// any: the backend's parts and the parts reasoning text became, in
    /// the order they were streamed.
    pub(super) fn summary_parts(&self) -> Option<String> {
        if self.summaries.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .summaries
            .iter()
            .map(|text| {
                let text = serde_json::to_string(text).expect("strings serialize");
                format!(r#"{{"type":"summary_text","text":{text}}}"#)
            })
            .collect();
        Some(format!("[{}]", parts.join(",")))
    }
}
