//! A stateless backend's Responses stream, re-sent in the API's grammar.
//!
//! The backend's item events carry the content: they are passed on with
//! their fields as written, under the bridge's ids, with the positions the
//! grammar requires filled in (`sequence_number`, `output_index`,
//! `content_index`). The lifecycle events are the bridge's: the `Response`
//! they carry repeats the client's request (as a stateless server's often
//! does not) and ends with every item the client was sent.

mod content;
mod end;
mod handed;
mod order;
mod slot;
mod summary;
mod whole;

use std::borrow::Cow;

use slot::Slot;

use crate::frames::Frames;
use serde_json::value::RawValue;
use wirebridge_wire::decimal::push_decimal;
use wirebridge_wire::responses::lenient::{LifecycleEvent, ResponseShell};
use wirebridge_wire::responses::strict::{
    IncompleteDetails, Response, ResponseError, ResponseStatus, Usage,
};
use wirebridge_wire::RawObject;

use super::items;
use super::NativeContext;
use crate::ids::unix_now;
use crate::loss::LossReport;
use crate::responses_to_chat::{token_usage, Finished};
use crate::summary::ReplySummary;

pub(super) use end::{usage, Failure};
pub(crate) use handed::{Delta, DeltaKind};
pub use order::MAX_HELD_BYTES;

/// Re-sends a Responses stream from a backend that keeps no state.
///
/// ```
/// use wirebridge_convert::responses_to_responses::{NativeContext, StreamTranslator};
/// use wirebridge_convert::StreamTranslate;
///
/// let mut stream = StreamTranslator::new(NativeContext::default());
/// let mut out = wirebridge_convert::Frames::sse();
/// // llama.cpp's server numbers nothing and echoes nothing.
/// stream.push(r#"{"type":"response.created","response":{"id":"x","object":"response","status":"in_progress"}}"#, &mut out);
/// stream.push(r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#, &mut out);
/// stream.push(r#"{"type":"response.content_part.added","item_id":"m","part":{"type":"output_text","text":""}}"#, &mut out);
/// stream.push(r#"{"type":"response.output_text.delta","item_id":"m","delta":"Hi"}"#, &mut out);
/// stream.push(r#"{"type":"response.output_text.done","item_id":"m","text":"Hi"}"#, &mut out);
/// stream.push(r#"{"type":"response.content_part.done","item_id":"m","part":{"type":"output_text","text":"Hi"}}"#, &mut out);
/// stream.push(r#"{"type":"response.output_item.done","item":{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi"}]}}"#, &mut out);
/// stream.push(r#"{"type":"response.completed","response":{"id":"x","status":"completed","output":[]}}"#, &mut out);
/// let text = String::from_utf8(out.take().bytes).unwrap();
/// assert!(text.contains(r#""sequence_number":3"#));
/// assert!(text.contains(r#""output_index":0"#));
/// assert!(stream.is_finished());
/// let finished = stream.finished().unwrap();
/// assert_eq!(finished.output.len(), 1);
/// ```
#[derive(Debug)]
pub struct StreamTranslator {
    ctx: NativeContext,
    response_id: String,
    model: String,
    created_at: u64,
    seq: u64,
    state: State,
    slots: Vec<Slot>,
    /// The finished items, in output order.
    output: Vec<Box<RawValue>>,
    usage: Option<Usage>,
    outcome: Option<ResponseStatus>,
    /// The `Response` of the terminal event, once sent.
    finished: Option<String>,
    /// Why the stream fails: the backend's `error` event, until the stream
    /// ends; then why it failed, the backend's reason or the bridge's.
    failure: Option<Failure>,
    /// How many items the bridge put before the backend's.
    leading: usize,
    /// Items that opened while another was open, waiting for their turn.
    held: order::Held,
    losses: LossReport,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Streaming,
    Finished,
}

impl StreamTranslator {
    /// A translator for one response.
    pub fn new(ctx: NativeContext) -> Self {
        Self {
            response_id: ctx.ids.response(),
            model: ctx.model.clone(),
            // What was spent before the reply counts even when the
            // backend's stream says nothing of its own.
            usage: ctx.prior_usage,
            ctx,
            created_at: 0,
            seq: 0,
            state: State::Waiting,
            slots: Vec::new(),
            output: Vec::new(),
            outcome: None,
            finished: None,
            failure: None,
            leading: 0,
            held: order::Held::default(),
            losses: LossReport::default(),
        }
    }

    /// The id of the response being streamed.
    pub fn response_id(&self) -> &str {
        &self.response_id
    }

    /// The finished response as a store keeps it, once the terminal event
    /// is written.
    pub fn finished(&self) -> Option<Finished<'_>> {
        Some(Finished {
            id: &self.response_id,
            created_at: self.created_at,
            status: self.outcome?,
            output: &self.output,
            response: self.finished.as_deref()?,
        })
    }

    /// Why the stream failed, once it has: its message, type and code.
    pub(super) fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    fn event(&mut self, data: &str, out: &mut Frames) -> Result<(), String> {
        // Lifecycle events are the stream's largest (servers echo the
        // request in them): one the bridge has no use for is not read, and
        // the others are read once, with the response they carry.
        if let Some(kind) = lifecycle_kind(data) {
            let ignored = BEGINNINGS.contains(&kind) && self.state != State::Waiting;
            if ignored && self.failure.is_none() {
                return Ok(());
            }
            if let Some(event) = LifecycleEvent::read(data) {
                return self.lifecycle(kind, || Ok(event.response), out);
            }
        }
        let event = RawObject::parse_str(data).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => {
                format!("the upstream sent an event that is not an object: {data}")
            }
            _ => format!("the upstream sent an event that is not JSON: {data}"),
        })?;
        // Borrowed from `data`, not `event`, which goes on to be dispatched.
        let kind = match event.borrowed_str("type") {
            Some(kind) => Cow::Borrowed(kind),
            None => Cow::Owned(event.str("type").unwrap_or_default().to_owned()),
        };
        if BEGINNINGS.contains(&kind.as_ref()) || ENDINGS.contains(&kind.as_ref()) {
            let response = || {
                let raw = event.get("response");
                raw.map(|raw| ResponseShell::parse(raw.get().as_bytes()))
                    .transpose()
                    .map_err(|e| e.to_string())
            };
            return self.lifecycle(&kind, response, out);
        }
        if self.failure.is_some() {
            return self.after_failure(out);
        }
        if self.hold(&kind, &event, data)? {
            return Ok(());
        }
        self.dispatch(&kind, event, data, out)
    }

    /// An event about the output (not a lifecycle event), read in turn.
    fn dispatch(
        &mut self,
        kind: &str,
        event: RawObject<'_>,
        data: &str,
        out: &mut Frames,
    ) -> Result<(), String> {
        match kind {
            "error" => {
                self.begin(out);
                self.upstream_error(data);
                Ok(())
            }
            "response.output_item.added" => {
                self.begin(out);
                // Items follow one another in the grammar: one that opens
                // inside another is held back until its turn (see
                // `order`), so none should be open here.
                if let Some(open) = self.slots.iter().find(|s| !s.done) {
                    return Err(format!(
                        "the upstream opened an output item while its {} item was still open",
                        open.kind
                    ));
                }
                self.item_added(&event, out).map(|_| ())
            }
            "response.output_item.done" => {
                self.begin(out);
                self.item_done(&event, out)
            }
            // llama.cpp's server fails a stream with a bare error object.
            "" if event.get("error").is_some() => {
                self.begin(out);
                self.upstream_error(data);
                Ok(())
            }
            "" => Err(format!("the upstream sent an event without a type: {data}")),
            _ => {
                self.begin(out);
                self.item_event(kind, event, out)
            }
        }
    }

    /// A lifecycle event of type `kind`, with the response it carries
    /// (read only when it is needed: `None` if the event has none, an
    /// error if it is no `Response`).
    fn lifecycle<'r>(
        &mut self,
        kind: &str,
        response: impl FnOnce() -> Result<Option<ResponseShell<'r>>, String>,
        out: &mut Frames,
    ) -> Result<(), String> {
        if self.failure.is_some() && kind != "response.failed" {
            return self.after_failure(out);
        }
        if BEGINNINGS.contains(&kind) {
            if self.state == State::Waiting {
                self.note(response().ok().flatten());
                self.begin(out);
            }
            return Ok(());
        }
        self.begin(out);
        self.terminal(kind, response(), out)
    }

    /// After the backend's `error`, only its `response.failed` is read
    /// (for the items it lists); anything else ends the stream at once.
    fn after_failure(&mut self, out: &mut Frames) -> Result<(), String> {
        if let Some(failure) = self.failure.take() {
            self.fail_with(failure, out);
        }
        Ok(())
    }

    /// What the backend's first lifecycle event says of the response.
    fn note(&mut self, response: Option<ResponseShell<'_>>) {
        let Some(body) = response else {
            return;
        };
        if let Some(created_at) = body.created_at {
            self.created_at = created_at;
        }
        if let Some(model) = body.model.filter(|m| !m.is_empty()) {
            self.model = model.to_string();
        }
    }

    /// The response's first two events, once.
    fn begin(&mut self, out: &mut Frames) {
        if self.state != State::Waiting {
            return;
        }
        self.state = State::Streaming;
        if self.created_at == 0 {
            self.created_at = unix_now();
        }
        let created = self.response(ResponseStatus::InProgress, None, None, &[]);
        for kind in ["response.created", "response.in_progress"] {
            self.send_lifecycle(kind, &created, out);
        }
        let leading = std::mem::take(&mut self.ctx.leading);
        self.leading = leading.len();
        for item in leading {
            let slot = self.slots.len();
            self.slots
                .push(Slot::new(None, None, "compaction", item.clone()));
            self.send_item("response.output_item.added", slot, &item, out);
            self.finish_item(slot, item, out);
        }
    }

    /// Announces an item the backend only sent whole.
    pub(super) fn announce(&mut self, item: &RawValue, out: &mut Frames) -> Result<usize, String> {
        let announced = items::announced(item);
        let mut event = RawObject::default();
        event.set_borrowed("item", &announced);
        self.item_added(&event, out)
    }

    fn item_added(&mut self, event: &RawObject<'_>, out: &mut Frames) -> Result<usize, String> {
        let item = event
            .get("item")
            .ok_or("the upstream sent response.output_item.added without an item")?;
        let fields = RawObject::parse(item).map_err(|_| {
            format!("the upstream sent an output item that is not an object: {item}")
        })?;
        let slot = self.slots.len();
        let added = items::rewrite(item, &self.ctx, slot, false)?;
        self.slots.push(Slot::new(
            fields.str("id").map(str::to_owned),
            event.get("output_index").and_then(index),
            fields.str("type").unwrap_or_default(),
            added.clone(),
        ));
        self.send_item("response.output_item.added", slot, &added, out);
        Ok(slot)
    }

    fn item_done(&mut self, event: &RawObject<'_>, out: &mut Frames) -> Result<(), String> {
        let item = event
            .get("item")
            .ok_or("the upstream sent response.output_item.done without an item")?;
        let fields = RawObject::parse(item).ok();
        let id = fields.as_ref().and_then(|f| f.str("id").map(str::to_owned));
        let kind = fields
            .as_ref()
            .and_then(|f| f.str("type"))
            .unwrap_or_default();
        let at = event.get("output_index").and_then(index);
        let slot = match self.find(id.as_deref(), at) {
            Some(slot) if !self.slots[slot].done => slot,
            // Never announced (or announced twice): it is now, unless that
            // would open it inside another.
            _ => {
                if let Some(open) = self.slots.iter().find(|s| !s.done) {
                    return Err(format!(
                        "the upstream finished an output item it never opened while its {} item was still open",
                        open.kind
                    ));
                }
                self.announce(item, out)?
            }
        };
        if self.slots[slot].kind != kind {
            return Err(format!(
                "the upstream finished a {kind} item it had opened as a {}",
                self.slots[slot].kind
            ));
        }
        self.stream_unstreamed(slot, item, out)?;
        self.close_parts(slot, out);
        let mut done = items::rewrite(item, &self.ctx, slot, true)?;
        if let Some(summary) = self.slots[slot]
            .summary_parts()
            .filter(|_| self.slots[slot].text_summaries > 0)
        {
            // Reasoning text was shown as a summary: the finished item's
            // summary is the parts the client was streamed.
            let mut item = RawObject::parse(&done).expect("items are objects");
            item.set("summary", &summary);
            done = item.to_raw();
        }
        self.finish_item(slot, done, out);
        Ok(())
    }

    /// The slot of an item the backend named by id, or by its position.
    fn find(&self, id: Option<&str>, at: Option<u64>) -> Option<usize> {
        if let Some(id) = id {
            if let Some(slot) = self
                .slots
                .iter()
                .rposition(|s| s.upstream_id.as_deref() == Some(id))
            {
                return Some(slot);
            }
        }
        at.and_then(|at| {
            self.slots
                .iter()
                .rposition(|s| s.upstream_index == Some(at))
        })
    }

    /// The item still open, for an event that names none.
    fn open_slot(&self) -> Option<usize> {
        self.slots.iter().rposition(|s| !s.done)
    }

    fn send_item(&mut self, kind: &str, slot: usize, item: &RawValue, out: &mut Frames) {
        let mut event = RawObject::default();
        event.set("output_index", &slot.to_string());
        event.set_borrowed("item", item);
        self.send(kind, event, out);
    }

    /// Sends an item's done event, and keeps it for the final response, in
    /// output order.
    fn finish_item(&mut self, slot: usize, item: Box<RawValue>, out: &mut Frames) {
        self.send_item("response.output_item.done", slot, &item, out);
        let at = self.slots[..slot].iter().filter(|s| s.done).count();
        self.slots[slot].done = true;
        self.output.insert(at, item);
    }

    /// Writes a lifecycle event: its type, the `Response` (JSON text the
    /// bridge wrote), its place in the stream.
    fn send_lifecycle(&mut self, kind: &str, response: &str, out: &mut Frames) {
        let seq = self.seq;
        self.seq += 1;
        out.event(Some(kind), |out| {
            out.extend_from_slice(b"{\"type\":\"");
            out.extend_from_slice(kind.as_bytes());
            out.extend_from_slice(b"\",\"response\":");
            out.extend_from_slice(response.as_bytes());
            out.extend_from_slice(b",\"sequence_number\":");
            push_decimal(out, seq);
            out.push(b'}');
        });
    }

    /// Writes one event: its type first, then its fields as they are, then
    /// its place in the stream.
    fn send(&mut self, kind: &str, event: RawObject<'_>, out: &mut Frames) {
        let seq = self.seq;
        self.seq += 1;
        out.event(Some(kind), |out| {
            out.extend_from_slice(b"{\"type\":");
            serde_json::to_writer(&mut *out, kind).expect("strings serialize");
            for (key, value) in event.fields() {
                if key == "type" || key == "sequence_number" {
                    continue;
                }
                out.push(b',');
                serde_json::to_writer(&mut *out, key).expect("strings serialize");
                out.push(b':');
                out.extend_from_slice(value.get().as_bytes());
            }
            out.extend_from_slice(b",\"sequence_number\":");
            push_decimal(out, seq);
            out.push(b'}');
        });
    }

    fn response(
        &self,
        status: ResponseStatus,
        error: Option<ResponseError<'_>>,
        incomplete: Option<IncompleteDetails>,
        output: &[Box<RawValue>],
    ) -> String {
        let response = Response {
            id: &self.response_id,
            object: "response",
            created_at: self.created_at,
            status,
            completed_at: (status == ResponseStatus::Completed).then(unix_now),
            error,
            incomplete_details: incomplete,
            model: &self.model,
            output,
            usage: self.usage.as_ref(),
            echo: &self.ctx.echo,
        };
        let mut json = Vec::with_capacity(1024);
        response.write_json(&mut json);
        // Written from strings: always UTF-8.
        String::from_utf8(json)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Outcome, usage and tool calls so far.
    pub fn summary(&self) -> ReplySummary {
        ReplySummary {
            outcome: self.outcome.map(|s| s.as_str().to_owned()),
            usage: self.usage.as_ref().map(token_usage),
            tool_calls: self
                .output
                .iter()
                .filter_map(|i| items::tool_call(i))
                .collect(),
        }
    }
}

impl crate::stream::StreamTranslate for StreamTranslator {
    fn push(&mut self, data: &str, out: &mut Frames) {
        if self.state == State::Finished {
            return;
        }
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return;
        }
        // The event is read once, into its fields: its text is not
        // checked as JSON beforehand.
        let read = self.event(data, out).and_then(|()| self.release(out));
        if let Err(message) = read {
            self.fail_with(Failure::server(message), out);
        }
    }

    fn finish(&mut self, out: &mut Frames) {
        if self.state == State::Finished {
            return;
        }
        let failure = self.failure.take().unwrap_or_else(|| {
            Failure::server("the upstream's stream ended before the response was finished")
        });
        self.fail_with(failure, out);
    }

    fn fail(&mut self, message: &str, out: &mut Frames) {
        self.fail_with(Failure::server(message), out);
    }

    fn is_finished(&self) -> bool {
        self.state == State::Finished
    }

    fn summary(&self) -> ReplySummary {
        StreamTranslator::summary(self)
    }

    fn losses(&self) -> &LossReport {
        &self.losses
    }
}

/// The lifecycle events that open a response.
const BEGINNINGS: [&str; 3] = [
    "response.created",
    "response.in_progress",
    "response.queued",
];

/// The lifecycle events that end one.
const ENDINGS: [&str; 3] = [
    "response.completed",
    "response.incomplete",
    "response.failed",
];

/// The type of a lifecycle event written with its type first, as servers
/// write them, found without reading the event; `None` for any other.
fn lifecycle_kind(data: &str) -> Option<&'static str> {
    let rest = data.strip_prefix(r#"{"type":""#)?;
    let kind = &rest[..rest.find('"')?];
    BEGINNINGS
        .iter()
        .chain(&ENDINGS)
        .copied()
        .find(|k| *k == kind)
}

/// An event's position field, when it is a number.
fn index(raw: &RawValue) -> Option<u64> {
    raw.get().parse().ok()
}

/// `text` as a JSON string literal.
fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("strings serialize")
}

/// A JSON string's text.
fn string(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str(raw?.get()).ok()
}

/// An item's id, as a JSON string literal.
fn item_id(item: &RawValue) -> String {
    RawObject::parse(item)
        .ok()
        .and_then(|f| f.get("id").map(|id| id.get().to_owned()))
        .unwrap_or_else(|| "\"\"".to_owned())
}
