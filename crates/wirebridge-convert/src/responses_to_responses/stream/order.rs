//! Items a backend interleaves, sent one after the other.
//!
//! The grammar the SDKs read has one item open at a time, but real
//! backends do not all keep to it: OpenAI opens a message while its
//! reasoning item is still open and finishes the message first; an
//! `mcp_list_tools` item may never get its own `output_item.done`; xAI
//! sends the events of two items in turns. An item that opens while
//! another is open is held back, with every event about it, and released
//! whole, in the order it opened, once the items before it are done; its
//! events are then read as if they had come at that moment, so the
//! positions the client sees (`output_index`, `sequence_number`) follow
//! the order it was sent in. An item the backend never finishes is
//! finished from its terminal response's `output`, which lets the next go.
//!
//! What is held back is bounded ([`MAX_HELD_BYTES`]): past it, the stream
//! fails, keeping what the client was sent.

use std::collections::VecDeque;

use serde_json::value::RawValue;
use wirebridge_wire::responses::strict::ResponseStatus;
use wirebridge_wire::RawObject;

use super::{index, items, StreamTranslator};
use crate::frames::Frames;

/// How many bytes of a backend's events the bridge holds back, at most,
/// while an item waits for the one open before it. A stream that needs
/// more fails, well formed, with what was already sent.
pub const MAX_HELD_BYTES: usize = 8 << 20;

/// The items held back, in the order they opened.
#[derive(Debug, Default)]
pub(super) struct Held {
    items: VecDeque<HeldItem>,
    /// The bytes of every event held.
    bytes: usize,
}

/// One item held back: how the backend names it, and its events as they
/// came.
#[derive(Debug)]
struct HeldItem {
    upstream_id: Option<String>,
    upstream_index: Option<u64>,
    events: Vec<String>,
}

impl HeldItem {
    fn new(upstream_id: Option<String>, upstream_index: Option<u64>) -> Self {
        Self {
            upstream_id,
            upstream_index,
            events: Vec::new(),
        }
    }
}

impl Held {
    /// Whether no item is held back.
    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The held item the backend names by `id`, else by its position.
    fn find(&self, id: Option<&str>, at: Option<u64>) -> Option<usize> {
        if let Some(id) = id {
            if let Some(n) = self
                .items
                .iter()
                .position(|i| i.upstream_id.as_deref() == Some(id))
            {
                return Some(n);
            }
        }
        let at = at?;
        self.items.iter().position(|i| i.upstream_index == Some(at))
    }
}

impl StreamTranslator {
    /// Holds `data` back when it is about an item that must wait for the
    /// one open; `true` when it was held.
    pub(super) fn hold(
        &mut self,
        kind: &str,
        event: &RawObject<'_>,
        data: &str,
    ) -> Result<bool, String> {
        let (id, at) = match kind {
            "response.output_item.added" | "response.output_item.done" => {
                let item = event.get("item").and_then(|i| RawObject::parse(i).ok());
                let id = item.as_ref().and_then(|i| i.str("id")).map(str::to_owned);
                (id, event.get("output_index").and_then(index))
            }
            _ if self.held.items.is_empty() => return Ok(false),
            _ => (
                event.str("item_id").map(str::to_owned),
                event.get("output_index").and_then(index),
            ),
        };
        // An item the backend named before is its own, held or not.
        let known = id.is_some() && self.find(id.as_deref(), None).is_some();
        if known {
            return Ok(false);
        }
        let open = self.open_slot();
        let queue = match (kind, self.held.find(id.as_deref(), at)) {
            (_, Some(n)) => n,
            ("response.output_item.added", None) if open.is_some() => {
                self.held.items.push_back(HeldItem::new(id, at));
                self.held.items.len() - 1
            }
            // Finished, never announced, while another item is open (and
            // not that one, by its position): it is announced in its turn.
            ("response.output_item.done", None)
                if (id.is_some() || at.is_some())
                    && open.is_some()
                    && self.find(None, at) != open =>
            {
                self.held.items.push_back(HeldItem::new(id, at));
                self.held.items.len() - 1
            }
            _ => return Ok(false),
        };
        self.held.bytes += data.len();
        if self.held.bytes > MAX_HELD_BYTES {
            return Err(format!(
                "the upstream interleaved its output items beyond what the bridge holds back ({MAX_HELD_BYTES} bytes) while an earlier item stayed open"
            ));
        }
        self.held.items[queue].events.push(data.to_owned());
        Ok(true)
    }

    /// Sends the items held back whose turn has come: each, once no item
    /// is open, read as if its events came now.
    pub(super) fn release(&mut self, out: &mut Frames) -> Result<(), String> {
        // Most streams never hold anything: no look at the items for them.
        while !self.held.items.is_empty() && self.open_slot().is_none() {
            let Some(item) = self.held.items.pop_front() else {
                return Ok(());
            };
            for data in item.events {
                self.held.bytes -= data.len();
                self.replay(&data, out)?;
            }
        }
        Ok(())
    }

    /// One held event, read now.
    fn replay(&mut self, data: &str, out: &mut Frames) -> Result<(), String> {
        let event = RawObject::parse_str(data).map_err(|e| e.to_string())?;
        let kind = event.str("type").unwrap_or_default().to_owned();
        self.dispatch(&kind, event, data, out)
    }

    /// At the backend's terminal event, every item still open or held is
    /// finished in turn: each open item as `listed` (the terminal
    /// response's `output`) has it, else with what arrived, as `status`
    /// says; then the next held item is released.
    pub(super) fn settle_held(
        &mut self,
        listed: &[&RawValue],
        status: ResponseStatus,
        out: &mut Frames,
    ) -> Result<(), String> {
        while !self.held.items.is_empty() {
            if let Some(slot) = self.open_slot() {
                self.finish_open(slot, listed, status, out)?;
            }
            self.release(out)?;
        }
        Ok(())
    }

    /// Finishes the open item in `slot`: as the terminal response lists
    /// it, or, when it is not listed, with what arrived.
    fn finish_open(
        &mut self,
        slot: usize,
        listed: &[&RawValue],
        status: ResponseStatus,
        out: &mut Frames,
    ) -> Result<(), String> {
        let state = &self.slots[slot];
        let by_id = listed.iter().position(|item| {
            let fields = RawObject::parse(item).ok();
            let id = fields.as_ref().and_then(|f| f.str("id"));
            id.is_some() && id == state.upstream_id.as_deref()
        });
        // By its position, for a backend whose ids change between events,
        // when the item there is of its type.
        let by_place = state
            .upstream_index
            .and_then(|at| usize::try_from(at).ok())
            .filter(|&at| {
                listed.get(at).is_some_and(|item| {
                    RawObject::parse(item).is_ok_and(|f| f.str("type") == Some(&state.kind))
                })
            });
        let Some(item) = by_id.or(by_place).map(|n| listed[n]) else {
            self.close_unfinished(status, out);
            return Ok(());
        };
        self.stream_unstreamed(slot, item, out)?;
        self.close_parts(slot, out);
        let done = items::rewrite(item, &self.ctx, slot, true)?;
        self.finish_item(slot, done, out);
        Ok(())
    }

    /// Lets go of what is held, when the stream ends otherwise: it was
    /// never sent, and is not.
    pub(super) fn drop_held(&mut self) {
        self.held = Held::default();
    }
}
