//! Reasoning text shown as a summary: a backend's `reasoning_text` events
//! re-sent as the one summary part they stand for, for a client that asked
//! for a summary (Codex shows no other reasoning). And the backend's own
//! summary parts, followed as they pass so that a stream that ends inside
//! one still closes it.

use crate::frames::Frames;
use serde_json::value::RawValue;
use wirebridge_wire::RawObject;

use super::{string, Slot, StreamTranslator, SummaryPart};

/// A summary part of the backend's, open.
#[derive(Debug)]
pub(super) struct NativeSummary {
    /// Its `summary_index`, as the backend wrote it.
    index: Box<RawValue>,
    text: String,
    /// Whether its `reasoning_summary_text.done` was passed on.
    text_done: bool,
}

impl Slot {
    /// Follows the backend's summary part events, and names the part on
    /// those that do not (the API requires `summary_index` on each). A
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
        if kind.starts_with("response.reasoning_summary_") && event.get("summary_index").is_none() {
            let index = match (&self.native_summary, kind) {
                (Some(part), _) => part.index.get().to_owned(),
                (None, "response.reasoning_summary_part.added") => self.summaries.len().to_string(),
                (None, _) => self.summaries.len().saturating_sub(1).to_string(),
            };
            event.set("summary_index", &index);
        }
        match kind {
            "response.reasoning_summary_part.added" => {
                let index = event
                    .get("summary_index")
                    .map(ToOwned::to_owned)
                    .unwrap_or_else(|| RawValue::from_string("0".into()).expect("a number"));
                self.native_summary = Some(NativeSummary {
                    index,
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
    /// `false` for an event that is not one.
    pub(super) fn as_summary(
        &mut self,
        kind: &str,
        event: &RawObject<'_>,
        slot: usize,
        out: &mut Frames,
    ) -> bool {
        match kind {
            "response.content_part.added" | "response.content_part.done" => {
                let part = event.get("part").and_then(|p| RawObject::parse(p).ok());
                // Reasoning text parts become the summary part.
                part.is_some_and(|p| p.str("type") == Some("reasoning_text"))
            }
            "response.reasoning_text.delta" => {
                let delta = string(event.get("delta")).unwrap_or_default();
                self.open_summary(slot, out);
                self.slots[slot].text.push_str(&delta);
                let mut summary = self.summary_event(slot);
                summary.set(
                    "delta",
                    &serde_json::to_string(&delta).expect("strings serialize"),
                );
                self.send("response.reasoning_summary_text.delta", summary, out);
                true
            }
            "response.reasoning_text.done" => {
                self.open_summary(slot, out);
                self.close_summary(slot, out);
                true
            }
            _ => false,
        }
    }

    fn open_summary(&mut self, slot: usize, out: &mut Frames) {
        if self.slots[slot].summary != SummaryPart::None {
            return;
        }
        self.slots[slot].summary = SummaryPart::Open;
        self.slots[slot].text.clear();
        let mut event = self.summary_event(slot);
        event.set("part", r#"{"type":"summary_text","text":""}"#);
        self.send("response.reasoning_summary_part.added", event, out);
    }

    pub(super) fn close_summary(&mut self, slot: usize, out: &mut Frames) {
        if self.slots[slot].summary != SummaryPart::Open {
            return;
        }
        self.slots[slot].summary = SummaryPart::Closed;
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
    }

    fn summary_event(&self, slot: usize) -> RawObject<'static> {
        let mut event = self.place(slot);
        event.set("summary_index", "0");
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
        event.set("summary_index", part.index.get());
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
    /// any: the backend's parts, or the one part reasoning text became.
    pub(super) fn summary_parts(&self) -> Option<String> {
        let texts: Vec<&str> = if !self.summaries.is_empty() {
            self.summaries.iter().map(String::as_str).collect()
        } else if self.summary != SummaryPart::None {
            vec![self.text.as_str()]
        } else {
            return None;
        };
        let parts: Vec<String> = texts
            .into_iter()
            .map(|text| {
                let text = serde_json::to_string(text).expect("strings serialize");
                format!(r#"{{"type":"summary_text","text":{text}}}"#)
            })
            .collect();
        Some(format!("[{}]", parts.join(",")))
    }
}
