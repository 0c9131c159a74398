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
use wirebridge_wire::JsonStr;

use super::carrier;
use super::BackendContext;
use crate::ids::unix_now;
use crate::loss::{Loss, LossKind, LossReport};

/// One Messages event, as far as it is read here.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    index: Option<usize>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    content_block: Option<&'a RawValue>,
    #[serde(borrow)]
    delta: Option<&'a RawValue>,
    usage: Option<Usage>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// `message_start`'s message.
#[derive(Deserialize)]
struct Started<'a> {
    #[serde(borrow)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<std::borrow::Cow<'a, str>>,
    usage: Option<Usage>,
}

/// A block as it opens, or a delta: the union of their fields.
#[derive(Deserialize, Default)]
struct Piece<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    text: Option<&'a RawValue>,
    #[serde(borrow)]
    thinking: Option<&'a RawValue>,
    #[serde(borrow)]
    signature: Option<&'a RawValue>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    #[serde(borrow)]
    partial_json: Option<&'a RawValue>,
    #[serde(borrow)]
    stop_reason: Option<std::borrow::Cow<'a, str>>,
}

/// Token counts; later events repeat or raise them.
#[derive(Deserialize, Default, Clone, Copy)]
struct Usage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl Usage {
    fn update(&mut self, later: Usage) {
        let keep = |now: &mut Option<u64>, later: Option<u64>| {
            if later.is_some() {
                *now = later;
            }
        };
        keep(&mut self.input_tokens, later.input_tokens);
        keep(&mut self.output_tokens, later.output_tokens);
        keep(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
        keep(
            &mut self.cache_read_input_tokens,
            later.cache_read_input_tokens,
        );
    }

    /// Responses counts every input token, cached or not, as input.
    fn to_responses(self) -> serde_json::Value {
        let cached = self.cache_read_input_tokens.unwrap_or(0);
        let input =
            self.input_tokens.unwrap_or(0) + self.cache_creation_input_tokens.unwrap_or(0) + cached;
        let output = self.output_tokens.unwrap_or(0);
        json!({
            "input_tokens": input,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input + output,
        })
    }
}

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
}

impl Reader {
    pub fn new(context: BackendContext) -> Self {
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
        }
    }

    /// What the reply held that Responses cannot carry.
    pub fn losses(&self) -> &LossReport {
        &self.losses
    }

    /// Reads one event's `data`, writing the Responses events it makes to
    /// `emit`; an error for data that is no Messages event.
    pub fn read(&mut self, data: &str, emit: &mut dyn FnMut(&str)) -> Result<(), String> {
        if self.done {
            return Ok(());
        }
        let event: Event<'_> = serde_json::from_str(data)
            .map_err(|e| format!("the upstream sent an event that is not a Messages event: {e}"))?;
        match event.kind.as_ref() {
            "message_start" => self.start(event.message, emit),
            "content_block_start" => {
                self.begin(emit);
                let block = parse_piece(event.content_block)?;
                self.open_block(event.index.unwrap_or(0), block, event.content_block, emit);
                Ok(())
            }
            "content_block_delta" => {
                self.begin(emit);
                self.delta(event.index.unwrap_or(0), parse_piece(event.delta)?, emit);
                Ok(())
            }
            "content_block_stop" => {
                self.close_block(emit);
                Ok(())
            }
            "message_delta" => {
                if let Some(reason) = parse_piece(event.delta)?.stop_reason {
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
                let kind = other.to_owned();
                if !self.losses.iter().any(|l| l.path == kind) {
                    self.lose(
                        LossKind::UnsupportedItem,
                        kind,
                        "a Messages event this bridge does not read",
                    );
                }
                Ok(())
            }
        }
    }

    fn lose(&mut self, kind: LossKind, path: String, reason: &str) {
        self.losses.push(Loss {
            kind,
            path,
            reason: reason.to_owned(),
        });
    }

    fn start(
        &mut self,
        message: Option<&RawValue>,
        emit: &mut dyn FnMut(&str),
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
    fn begin(&mut self, emit: &mut dyn FnMut(&str)) {
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
        emit(&event.to_string());
    }

    fn new_item(&mut self, prefix: &str) -> Item {
        let index = self.next_index;
        self.next_index += 1;
        Item {
            id: format!("{prefix}_{index}"),
            index,
        }
    }

    fn open_block(
        &mut self,
        at: usize,
        block: Piece<'_>,
        raw: Option<&RawValue>,
        emit: &mut dyn FnMut(&str),
    ) {
        self.close_block(emit);
        match block.kind.as_ref() {
            "text" => {
                let message = self.message_item(emit);
                let part = message.parts.len();
                message
                    .parts
                    .push(json!({"type": "output_text", "text": "", "annotations": []}));
                let event = json!({
                    "type": "response.content_part.added", "item_id": message.item.id,
                    "output_index": message.item.index, "content_index": part,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                });
                emit(&event.to_string());
                self.open = Some(Open::Text {
                    part,
                    text: String::new(),
                });
                if let Some(text) = block.text.and_then(JsonStr::new).filter(|t| !t.is_empty()) {
                    self.text_delta(text, emit);
                }
            }
            "thinking" => {
                self.close_message(emit);
                let item = self.new_item("rs");
                let added = json!({"type": "reasoning", "id": item.id, "summary": []});
                // Reasoning text parts have no part events of their own in
                // the grammar: deltas, then `reasoning_text.done`.
                self.item_added(&item, added, emit);
                let text = block
                    .thinking
                    .and_then(JsonStr::new)
                    .map(|t| t.decode().into_owned());
                let signature = block
                    .signature
                    .and_then(JsonStr::new)
                    .map(|s| s.decode().into_owned());
                self.open = Some(Open::Thinking {
                    item,
                    text: String::new(),
                    signature: signature.unwrap_or_default(),
                });
                if let Some(text) = text.filter(|t| !t.is_empty()) {
                    let literal =
                        serde_json::value::to_raw_value(&text).expect("a string serializes");
                    self.thinking_delta(JsonStr::new(&literal).expect("a string literal"), emit);
                }
            }
            "redacted_thinking" => {
                self.close_message(emit);
                let item = self.new_item("rs");
                let added = json!({"type": "reasoning", "id": item.id, "summary": []});
                self.item_added(&item, added, emit);
                let block = json!({"type": "redacted_thinking", "data": block.data.map(|d| d.get()).and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok())});
                let block = serde_json::value::to_raw_value(&block).expect("a block serializes");
                self.open = Some(Open::Redacted { item, block });
            }
            "tool_use" => {
                self.close_message(emit);
                let item = self.new_item("fc");
                let backend_name = block.name.as_deref().unwrap_or_default();
                let origin = self.context.tools.origin(backend_name);
                let call = Call {
                    call_id: block.id.as_deref().unwrap_or_default().to_owned(),
                    name: origin.map_or(backend_name, |o| o.name.as_str()).to_owned(),
                    namespace: origin.and_then(|o| o.namespace.clone()),
                    custom: origin.is_some_and(|o| o.is_custom()),
                };
                self.item_added(&item, call.item(&item.id, "in_progress", ""), emit);
                // A tool use that opens with its input whole (a body read
                // as events does not; a server may).
                let arguments = block
                    .input
                    .map(RawValue::get)
                    .filter(|input| *input != "{}")
                    .unwrap_or_default()
                    .to_owned();
                self.open = Some(Open::Call {
                    item,
                    call,
                    arguments,
                });
            }
            other => {
                self.close_message(emit);
                let what = match raw {
                    Some(_) if other.ends_with("tool_use") || other.ends_with("tool_result") => {
                        "a server tool's block: the backend ran a tool the Responses API names no item for"
                    }
                    _ => "a content block with no Responses item",
                };
                self.lose(LossKind::UnsupportedItem, format!("content[{at}]"), what);
                self.open = Some(Open::Skipped);
            }
        }
    }

    fn delta(&mut self, at: usize, delta: Piece<'_>, emit: &mut dyn FnMut(&str)) {
        match (delta.kind.as_ref(), self.open.as_mut()) {
            ("text_delta", Some(Open::Text { .. })) => {
                if let Some(text) = delta.text.and_then(JsonStr::new) {
                    self.text_delta(text, emit);
                }
            }
            ("thinking_delta", Some(Open::Thinking { .. })) => {
                if let Some(text) = delta.thinking.and_then(JsonStr::new) {
                    self.thinking_delta(text, emit);
                }
            }
            ("signature_delta", Some(Open::Thinking { signature, .. })) => {
                if let Some(more) = delta.signature.and_then(JsonStr::new) {
                    signature.push_str(&more.decode());
                }
            }
            (
                "input_json_delta",
                Some(Open::Call {
                    item,
                    call,
                    arguments,
                }),
            ) => {
                let Some(fragment) = delta.partial_json.and_then(JsonStr::new) else {
                    return;
                };
                arguments.push_str(&fragment.decode());
                // A custom tool's input is the `input` string inside: sent
                // whole once the block closes.
                if !call.custom && !fragment.is_empty() {
                    let event = format!(
                        r#"{{"type":"response.function_call_arguments.delta","item_id":"{}","output_index":{},"delta":{}}}"#,
                        item.id,
                        item.index,
                        fragment.raw().get()
                    );
                    emit(&event);
                }
            }
            ("citations_delta", Some(Open::Text { .. })) => {
                let path = format!("content[{at}].citations");
                if !self.losses.iter().any(|l| l.path == path) {
                    self.lose(
                        LossKind::UnsupportedContent,
                        path,
                        "citations have no Responses annotation here; the text is kept",
                    );
                }
            }
            (_, Some(Open::Skipped)) => {}
            (kind, _) => {
                let path = format!("content[{at}].{kind}");
                if !self.losses.iter().any(|l| l.path == path) {
                    self.lose(
                        LossKind::UnsupportedContent,
                        path,
                        "a delta that does not fit its block",
                    );
                }
            }
        }
    }

    fn text_delta(&mut self, text: JsonStr<'_>, emit: &mut dyn FnMut(&str)) {
        let (Some(Open::Text { part, text: whole }), Some(message)) =
            (self.open.as_mut(), self.message.as_ref())
        else {
            return;
        };
        whole.push_str(&text.decode());
        let event = format!(
            r#"{{"type":"response.output_text.delta","item_id":"{}","output_index":{},"content_index":{},"delta":{}}}"#,
            message.item.id,
            message.item.index,
            part,
            text.raw().get()
        );
        emit(&event);
    }

    fn thinking_delta(&mut self, text: JsonStr<'_>, emit: &mut dyn FnMut(&str)) {
        let Some(Open::Thinking {
            item, text: whole, ..
        }) = self.open.as_mut()
        else {
            return;
        };
        whole.push_str(&text.decode());
        let event = format!(
            r#"{{"type":"response.reasoning_text.delta","item_id":"{}","output_index":{},"content_index":0,"delta":{}}}"#,
            item.id,
            item.index,
            text.raw().get()
        );
        emit(&event);
    }

    fn close_block(&mut self, emit: &mut dyn FnMut(&str)) {
        let Some(open) = self.open.take() else {
            return;
        };
        match open {
            Open::Text { part, text } => {
                let Some(message) = self.message.as_mut() else {
                    return;
                };
                let done = json!({
                    "type": "response.output_text.done", "item_id": message.item.id,
                    "output_index": message.item.index, "content_index": part, "text": text,
                });
                emit(&done.to_string());
                let whole = json!({"type": "output_text", "text": text, "annotations": []});
                let done = json!({
                    "type": "response.content_part.done", "item_id": message.item.id,
                    "output_index": message.item.index, "content_index": part, "part": whole,
                });
                emit(&done.to_string());
                message.parts[part] = whole;
            }
            Open::Thinking {
                item,
                text,
                signature,
            } => {
                let done = json!({
                    "type": "response.reasoning_text.done", "item_id": item.id,
                    "output_index": item.index, "content_index": 0, "text": text,
                });
                emit(&done.to_string());
                let part = json!({"type": "reasoning_text", "text": text});
                let block = json!({"type": "thinking", "thinking": text, "signature": signature});
                let carried = carrier::carry(&block.to_string(), self.context.seal.as_ref());
                let whole = json!({
                    "type": "reasoning", "id": item.id, "summary": [], "content": [part],
                    "encrypted_content": carried,
                });
                self.item_done(&item, whole, emit);
            }
            Open::Redacted { item, block } => {
                let carried = carrier::carry(block.get(), self.context.seal.as_ref());
                let whole = json!({
                    "type": "reasoning", "id": item.id, "summary": [],
                    "encrypted_content": carried,
                });
                self.item_done(&item, whole, emit);
            }
            Open::Call {
                item,
                call,
                arguments,
            } => {
                let arguments = if arguments.trim().is_empty() {
                    "{}".to_owned()
                } else {
                    arguments
                };
                let whole = if call.custom {
                    let input = serde_json::from_str::<serde_json::Value>(&arguments)
                        .ok()
                        .and_then(|v| v.get("input").and_then(|i| i.as_str()).map(str::to_owned))
                        .unwrap_or(arguments);
                    for kind in ["delta", "done"] {
                        let field = if kind == "delta" { "delta" } else { "input" };
                        let event = json!({
                            "type": format!("response.custom_tool_call_input.{kind}"),
                            "item_id": item.id, "output_index": item.index, field: input,
                        });
                        emit(&event.to_string());
                    }
                    call.item(&item.id, "completed", &input)
                } else {
                    let done = json!({
                        "type": "response.function_call_arguments.done", "item_id": item.id,
                        "output_index": item.index, "arguments": arguments,
                    });
                    emit(&done.to_string());
                    call.item(&item.id, "completed", &arguments)
                };
                self.item_done(&item, whole, emit);
            }
            Open::Skipped => {}
        }
    }

    /// The open `message` item, opened if none is.
    fn message_item(&mut self, emit: &mut dyn FnMut(&str)) -> &mut Message {
        if self.message.is_none() {
            let item = self.new_item("msg");
            let added = json!({
                "type": "message", "id": item.id, "role": "assistant",
                "status": "in_progress", "content": [],
            });
            self.item_added(&item, added, emit);
            self.message = Some(Message {
                item,
                parts: Vec::new(),
            });
        }
        self.message.as_mut().expect("opened above")
    }

    fn close_message(&mut self, emit: &mut dyn FnMut(&str)) {
        let Some(message) = self.message.take() else {
            return;
        };
        let status = match self.stop_reason.as_deref() {
            Some("max_tokens" | "model_context_window_exceeded" | "refusal") => "incomplete",
            _ => "completed",
        };
        let whole = json!({
            "type": "message", "id": message.item.id, "role": "assistant",
            "status": status, "content": message.parts,
        });
        self.item_done(&message.item, whole, emit);
    }

    fn item_added(&mut self, item: &Item, added: serde_json::Value, emit: &mut dyn FnMut(&str)) {
        let event = json!({
            "type": "response.output_item.added", "output_index": item.index, "item": added,
        });
        emit(&event.to_string());
    }

    fn item_done(&mut self, item: &Item, whole: serde_json::Value, emit: &mut dyn FnMut(&str)) {
        let event = json!({
            "type": "response.output_item.done", "output_index": item.index, "item": whole,
        });
        emit(&event.to_string());
        self.output.push(whole);
    }

    /// `message_stop`: the terminal event.
    fn finish(&mut self, emit: &mut dyn FnMut(&str)) {
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
        emit(&event.to_string());
    }

    /// The backend's `error` event, as the Responses `error` event: the
    /// stream ends failed, keeping what was said.
    fn error(&mut self, error: Option<&RawValue>, emit: &mut dyn FnMut(&str)) {
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
        self.close_block(emit);
        self.close_message(emit);
        self.done = true;
        let kind = failure.kind.unwrap_or_else(|| "api_error".into());
        let event = json!({
            "type": "error",
            "code": kind,
            "message": failure.message.unwrap_or_else(|| "the upstream failed".into()),
            "param": null,
        });
        emit(&event.to_string());
    }
}

impl Call {
    fn item(&self, id: &str, status: &str, payload: &str) -> serde_json::Value {
        let mut item = if self.custom {
            json!({
                "type": "custom_tool_call", "id": id, "call_id": self.call_id,
                "name": self.name, "input": payload,
            })
        } else {
            json!({
                "type": "function_call", "id": id, "call_id": self.call_id, "name": self.name,
                "arguments": payload, "status": status,
            })
        };
        if let Some(namespace) = &self.namespace {
            item["namespace"] = json!(namespace);
        }
        item
    }
}

fn parse_piece(raw: Option<&RawValue>) -> Result<Piece<'_>, String> {
    match raw {
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|e| format!("the upstream sent a content block that is not readable: {e}")),
        None => Ok(Piece::default()),
    }
}
