//! A Messages backend's reply read as Responses events.
//!
//! Messages sends content blocks one after another, each opened, filled by
//! deltas and closed: text, thinking, redacted thinking, tool use. Here
//! text blocks in a row are the parts of one `message` item, each thinking
//! block a `reasoning` item whose `encrypted_content` carries the block for
//! the next turn (see [`carrier`](super::carrier)), each tool use a
//! `function_call` or `custom_tool_call` item. The events written are the
//! Responses grammar's; the stream translator of a stateless Responses
//! backend takes them from there (the bridge's ids, the store, the
//! client's framing).

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

use super::BackendContext;
use crate::ids::unix_now;
use crate::loss::{Loss, LossKind, LossReport};

mod blocks;
mod emitted;
mod event;
mod one_pass;

pub(super) use emitted::{Delta, DeltaKind, Emitted};
pub(super) use event::Whole;
use event::{Event, Started, Usage};
use one_pass::parse_piece;

/// Most losses one reply reports.
const MAX_LOSSES: usize = 64;

/// The block being filled.
enum Open {
    Text {
        part: usize,
        text: String,
    },
    Thinking {
        item: Item,
        text: String,
        signature: String,
    },
    Redacted {
        item: Item,
        block: Box<RawValue>,
    },
    Call {
        item: Item,
        call: Call,
        arguments: String,
    },
    /// A block with no Responses form, reported when it opened.
    Skipped,
}

/// An output item: its id and place.
#[derive(Clone)]
struct Item {
    id: String,
    index: usize,
}

/// A tool use, as the client declared its tool.
struct Call {
    call_id: String,
    name: String,
    namespace: Option<String>,
    custom: bool,
}

/// The `message` item text blocks fill.
struct Message {
    item: Item,
    parts: Vec<serde_json::Value>,
}

/// Reads one reply's events, writing Responses events.
pub(super) struct Reader {
    context: BackendContext,
    id: String,
    model: String,
    usage: Usage,
    stop_reason: Option<String>,
    next_index: usize,
    message: Option<Message>,
    open: Option<Open>,
    output: Vec<serde_json::Value>,
    losses: LossReport,
    started: bool,
    done: bool,
    /// The reply stopped before its end (an `error` event, a stream cut
    /// short or unreadable): what was open closes `incomplete`.
    interrupted: bool,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("id", &self.id)
            .field("items", &self.next_index)
            .finish_non_exhaustive()
    }
}

impl Reader {
    pub(super) fn new(context: BackendContext) -> Self {
        Self {
            context,
            id: String::new(),
            model: String::new(),
            usage: Usage::default(),
            stop_reason: None,
            next_index: 0,
            message: None,
            open: None,
            output: Vec::new(),
            losses: LossReport::default(),
            started: false,
            done: false,
            interrupted: false,
        }
    }

    /// What the reply held that Responses cannot carry.
    pub(super) fn losses(&self) -> &LossReport {
        &self.losses
    }

    /// Reads one event's `data`, writing the Responses events it makes to
    /// `emit`; an error for data that is no Messages event.
    pub(super) fn read(
        &mut self,
        data: &str,
        emit: &mut dyn FnMut(Emitted<'_>),
    ) -> Result<(), String> {
        let read = self.read_event(data, emit);
        if read.is_err() {
            self.interrupt(emit);
        }
        read
    }

    /// Reads a reply that came whole, writing the Responses events a
    /// stream of it would have made to `emit`: each block read as one that
    /// opens whole (as a server may stream one), with no Messages event
    /// written for it to be read again. An error for a block that cannot
    /// be read; the caller fails the reply, keeping what came before it.
    pub(super) fn read_body(
        &mut self,
        whole: &Whole<'_>,
        emit: &mut dyn FnMut(Emitted<'_>),
    ) -> Result<(), String> {
        let text = |raw: Option<&RawValue>| {
            raw.and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
                .unwrap_or_default()
        };
        self.id = text(whole.id);
        self.model = text(whole.model);
        if let Some(usage) = whole.usage {
            let usage: Option<Usage> = serde_json::from_str(usage.get())
                .map_err(|e| format!("the upstream's `usage` is not readable: {e}"))?;
            if let Some(usage) = usage {
                self.usage.update(usage);
            }
        }
        self.begin(emit);
        for (at, block) in whole.content.iter().enumerate() {
            let read = parse_piece(Some(block))
                .and_then(|piece| self.open_block(at, piece, Some(block), emit));
            if let Err(why) = read {
                self.interrupt(emit);
                return Err(why);
            }
            self.close_block(emit);
        }
        self.stop_reason = whole
            .stop_reason
            .and_then(|reason| serde_json::from_str::<Option<String>>(reason.get()).ok())
            .flatten();
        self.finish(emit);
        Ok(())
    }

    /// The reply stops here (cut short, unreadable, or failed upstream):
    /// what is open is closed with what it holds, so that what was said is
    /// kept whole in the items before the failure that follows.
    pub(super) fn interrupt(&mut self, emit: &mut dyn FnMut(Emitted<'_>)) {
        if self.done || !self.started {
            return;
        }
        self.interrupted = true;
        self.close_block(emit);
        self.close_message(emit);
    }

    fn read_event(&mut self, data: &str, emit: &mut dyn FnMut(Emitted<'_>)) -> Result<(), String> {
        if self.done {
            return Ok(());
        }
        let mut event = Event::read(data)?;
        match event.kind.as_ref() {
            "message_start" => self.start(event.message, emit),
            "content_block_start" => {
                self.begin(emit);
                let block = parse_piece(event.content_block)?;
                self.open_block(event.index.unwrap_or(0), block, event.content_block, emit)?;
                Ok(())
            }
            "content_block_delta" => {
                self.begin(emit);
                let delta = event.take_delta()?;
                self.delta(event.index.unwrap_or(0), delta, emit);
                Ok(())
            }
            "content_block_stop" => {
                self.close_block(emit);
                Ok(())
            }
            "message_delta" => {
                if let Some(reason) = event.take_delta()?.stop_reason {
                    self.stop_reason = Some(reason.into_owned());
                }
                if let Some(usage) = event.usage {
                    self.usage.update(usage);
                }
                Ok(())
            }
            "message_stop" => {
                self.begin(emit);
                self.finish(emit);
                Ok(())
            }
            "ping" => Ok(()),
            "error" => {
                self.error(event.error, emit);
                Ok(())
            }
            other => {
                self.lose_once(
                    LossKind::UnsupportedItem,
                    other.to_owned(),
                    "a Messages event this bridge does not read",
                );
                Ok(())
            }
        }
    }

    /// Records what the reply held that cannot be carried, up to
    /// [`MAX_LOSSES`]: a backend that sends a new unknown event or block
    /// all through its stream is reported, not kept without bound.
    fn lose(&mut self, kind: LossKind, path: String, reason: &str) {
        if self.losses.len() >= MAX_LOSSES {
            return;
        }
        self.losses.push(Loss {
            kind,
            path,
            reason: reason.to_owned(),
        });
    }

    /// [`lose`](Self::lose), unless `path` was reported already: what
    /// recurs through a reply is reported once.
    fn lose_once(&mut self, kind: LossKind, path: String, reason: &str) {
        if !self.losses.iter().any(|l| l.path == path) {
            self.lose(kind, path, reason);
        }
    }

    fn start(
        &mut self,
        message: Option<&RawValue>,
        emit: &mut dyn FnMut(Emitted<'_>),
    ) -> Result<(), String> {
        if let Some(message) = message {
            let started: Started<'_> = serde_json::from_str(message.get())
                .map_err(|e| format!("the upstream's `message_start` is not readable: {e}"))?;
            self.id = started.id.map(|id| id.into_owned()).unwrap_or_default();
            self.model = started.model.map(|m| m.into_owned()).unwrap_or_default();
            if let Some(usage) = started.usage {
                self.usage.update(usage);
            }
        }
        self.begin(emit);
        Ok(())
    }

    /// `response.created`, once, before anything else.
    fn begin(&mut self, emit: &mut dyn FnMut(Emitted<'_>)) {
        if self.started {
            return;
        }
        self.started = true;
        let event = json!({
            "type": "response.created",
            "response": {
                "id": self.id, "object": "response", "created_at": unix_now(),
                "status": "in_progress", "model": self.model, "output": [],
            },
        });
        emit(Emitted::Json(&event.to_string()));
    }

    fn new_item(&mut self, prefix: &str) -> Item {
        let index = self.next_index;
        self.next_index += 1;
        Item {
            id: format!("{prefix}_{index}"),
            index,
        }
    }

    /// `message_stop`: the terminal event.
    fn finish(&mut self, emit: &mut dyn FnMut(Emitted<'_>)) {
        self.close_block(emit);
        self.close_message(emit);
        self.done = true;
        let (kind, status, details) = match self.stop_reason.as_deref() {
            Some("max_tokens" | "model_context_window_exceeded") => (
                "response.incomplete",
                "incomplete",
                json!({"reason": "max_output_tokens"}),
            ),
            Some("refusal") => (
                "response.incomplete",
                "incomplete",
                json!({"reason": "content_filter"}),
            ),
            Some("pause_turn") => {
                self.lose(
                    LossKind::UnsupportedItem,
                    "stop_reason".into(),
                    "the backend paused its turn (`pause_turn`) to be continued; send the conversation again to continue it",
                );
                ("response.completed", "completed", serde_json::Value::Null)
            }
            _ => ("response.completed", "completed", serde_json::Value::Null),
        };
        let event = json!({
            "type": kind,
            "response": {
                "id": self.id, "object": "response", "created_at": unix_now(),
                "status": status, "model": self.model,
                "output": std::mem::take(&mut self.output),
                "incomplete_details": details,
                "usage": self.usage.to_responses(),
            },
        });
        emit(Emitted::Json(&event.to_string()));
    }

    /// The backend's `error` event, as the Responses `error` event: the
    /// stream ends failed, keeping what was said.
    fn error(&mut self, error: Option<&RawValue>, emit: &mut dyn FnMut(Emitted<'_>)) {
        #[derive(Deserialize, Default)]
        struct Failure {
            #[serde(rename = "type")]
            kind: Option<String>,
            message: Option<String>,
        }
        let failure: Failure = error
            .and_then(|e| serde_json::from_str(e.get()).ok())
            .unwrap_or_default();
        self.begin(emit);
        self.interrupt(emit);
        self.done = true;
        let kind = failure.kind.unwrap_or_else(|| "api_error".into());
        let event = json!({
            "type": "error",
            "code": kind,
            "message": failure.message.unwrap_or_else(|| "the upstream failed".into()),
            "param": null,
        });
        emit(Emitted::Json(&event.to_string()));
    }
}
