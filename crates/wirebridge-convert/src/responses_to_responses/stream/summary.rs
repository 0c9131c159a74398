//! Reasoning text shown as a summary: a backend's `reasoning_text` events
//! re-sent as the one summary part they stand for, for a client that asked
//! for a summary (Codex shows no other reasoning).

use wirebridge_wire::RawObject;

use super::{string, StreamTranslator, SummaryPart};

impl StreamTranslator {
    /// Reasoning text events, sent as the summary part they stand for;
    /// `false` for an event that is not one.
    pub(super) fn as_summary(
        &mut self,
        kind: &str,
        event: &RawObject<'_>,
        slot: usize,
        out: &mut Vec<u8>,
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

    fn open_summary(&mut self, slot: usize, out: &mut Vec<u8>) {
        if self.slots[slot].summary != SummaryPart::None {
            return;
        }
        self.slots[slot].summary = SummaryPart::Open;
        self.slots[slot].text.clear();
        let mut event = self.summary_event(slot);
        event.set("part", r#"{"type":"summary_text","text":""}"#);
        self.send("response.reasoning_summary_part.added", event, out);
    }

    pub(super) fn close_summary(&mut self, slot: usize, out: &mut Vec<u8>) {
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
