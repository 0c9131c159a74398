//! The content blocks of a reply: each opened, filled by its deltas and
//! closed, as the Responses items and events that carry it.

use serde_json::json;
use serde_json::value::RawValue;
use wirebridge_wire::JsonStr;

use super::event::Piece;
use super::{Call, Delta, DeltaKind, Emitted, Item, Message, Open, Reader};
use crate::loss::LossKind;
use crate::responses_to_messages::carrier;

impl Reader {
    pub(super) fn open_block(
        &mut self,
        at: usize,
        block: Piece<'_>,
        raw: Option<&RawValue>,
        emit: &mut dyn FnMut(Emitted<'_>),
    ) -> Result<(), String> {
        self.close_block(emit);
        match block.kind.as_ref() {
            "text" => {
                if block
                    .citations
                    .is_some_and(|c| !matches!(c.get(), "null" | "[]"))
                {
                    self.lose_citations(at);
                }
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
                emit(Emitted::Json(&event.to_string()));
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
                // A call the client cannot answer (no id to answer it by,
                // no tool to run) fails the reply.
                let (Some(id), Some(backend_name)) = (
                    block.id.as_deref().filter(|id| !id.is_empty()),
                    block.name.as_deref().filter(|name| !name.is_empty()),
                ) else {
                    return Err(format!(
                        "the upstream sent a tool_use block without its id or name (content[{at}])"
                    ));
                };
                self.close_message(emit);
                let item = self.new_item("fc");
                let origin = self.context.tools.origin(backend_name);
                let call = Call {
                    call_id: id.to_owned(),
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
        Ok(())
    }

    pub(super) fn delta(&mut self, at: usize, delta: Piece<'_>, emit: &mut dyn FnMut(Emitted<'_>)) {
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
                    emit(Emitted::Delta(Delta {
                        kind: DeltaKind::FunctionCallArguments,
                        item_id: &item.id,
                        output_index: item.index,
                        content_index: 0,
                        delta: fragment.raw(),
                    }));
                }
            }
            ("citations_delta", Some(Open::Text { .. })) => self.lose_citations(at),
            (_, Some(Open::Skipped)) => {}
            (kind, _) => self.lose_once(
                LossKind::UnsupportedContent,
                format!("content[{at}].{kind}"),
                "a delta that does not fit its block",
            ),
        }
    }

    /// Block `at`'s citations: streamed as deltas, or whole in a body.
    fn lose_citations(&mut self, at: usize) {
        self.lose_once(
            LossKind::UnsupportedContent,
            format!("content[{at}].citations"),
            "citations have no Responses annotation here; the text is kept",
        );
    }

    fn text_delta(&mut self, text: JsonStr<'_>, emit: &mut dyn FnMut(Emitted<'_>)) {
        let (Some(Open::Text { part, text: whole }), Some(message)) =
            (self.open.as_mut(), self.message.as_ref())
        else {
            return;
        };
        whole.push_str(&text.decode());
        emit(Emitted::Delta(Delta {
            kind: DeltaKind::OutputText,
            item_id: &message.item.id,
            output_index: message.item.index,
            content_index: *part,
            delta: text.raw(),
        }));
    }

    fn thinking_delta(&mut self, text: JsonStr<'_>, emit: &mut dyn FnMut(Emitted<'_>)) {
        let Some(Open::Thinking {
            item, text: whole, ..
        }) = self.open.as_mut()
        else {
            return;
        };
        whole.push_str(&text.decode());
        emit(Emitted::Delta(Delta {
            kind: DeltaKind::ReasoningText,
            item_id: &item.id,
            output_index: item.index,
            content_index: 0,
            delta: text.raw(),
        }));
    }

    pub(super) fn close_block(&mut self, emit: &mut dyn FnMut(Emitted<'_>)) {
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
                emit(Emitted::Json(&done.to_string()));
                let whole = json!({"type": "output_text", "text": text, "annotations": []});
                let done = json!({
                    "type": "response.content_part.done", "item_id": message.item.id,
                    "output_index": message.item.index, "content_index": part, "part": whole,
                });
                emit(Emitted::Json(&done.to_string()));
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
                emit(Emitted::Json(&done.to_string()));
                let part = json!({"type": "reasoning_text", "text": text});
                let mut whole = json!({
                    "type": "reasoning", "id": item.id, "summary": [], "content": [part],
                });
                // Thinking cut short has no signature of its own: the
                // backend would refuse it back, so it is shown, not carried.
                if !self.interrupted {
                    let block =
                        json!({"type": "thinking", "thinking": text, "signature": signature});
                    let carried = carrier::carry(&block.to_string(), self.context.seal.as_ref());
                    whole["encrypted_content"] = json!(carried);
                }
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
                // A call with no input streamed takes none: `{}`, sent as a
                // delta too, so that its arguments are what was streamed.
                let mut arguments = arguments;
                if arguments.trim().is_empty() {
                    arguments.push_str("{}");
                    if !call.custom {
                        let event = json!({
                            "type": "response.function_call_arguments.delta",
                            "item_id": item.id, "output_index": item.index, "delta": "{}",
                        });
                        emit(Emitted::Json(&event.to_string()));
                    }
                }
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
                        emit(Emitted::Json(&event.to_string()));
                    }
                    call.item(&item.id, self.finished_status(), &input)
                } else {
                    let done = json!({
                        "type": "response.function_call_arguments.done", "item_id": item.id,
                        "output_index": item.index, "arguments": arguments,
                    });
                    emit(Emitted::Json(&done.to_string()));
                    call.item(&item.id, self.finished_status(), &arguments)
                };
                self.item_done(&item, whole, emit);
            }
            Open::Skipped => {}
        }
    }

    /// The open `message` item, opened if none is.
    fn message_item(&mut self, emit: &mut dyn FnMut(Emitted<'_>)) -> &mut Message {
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

    /// The status of an item closed now: `incomplete` once the reply was
    /// interrupted.
    fn finished_status(&self) -> &'static str {
        match self.interrupted {
            true => "incomplete",
            false => "completed",
        }
    }

    pub(super) fn close_message(&mut self, emit: &mut dyn FnMut(Emitted<'_>)) {
        let Some(message) = self.message.take() else {
            return;
        };
        let status = match self.stop_reason.as_deref() {
            Some("max_tokens" | "model_context_window_exceeded" | "refusal") => "incomplete",
            _ => self.finished_status(),
        };
        let whole = json!({
            "type": "message", "id": message.item.id, "role": "assistant",
            "status": status, "content": message.parts,
        });
        self.item_done(&message.item, whole, emit);
    }

    fn item_added(
        &mut self,
        item: &Item,
        added: serde_json::Value,
        emit: &mut dyn FnMut(Emitted<'_>),
    ) {
        let event = json!({
            "type": "response.output_item.added", "output_index": item.index, "item": added,
        });
        emit(Emitted::Json(&event.to_string()));
    }

    fn item_done(
        &mut self,
        item: &Item,
        whole: serde_json::Value,
        emit: &mut dyn FnMut(Emitted<'_>),
    ) {
        let event = json!({
            "type": "response.output_item.done", "output_index": item.index, "item": whole,
        });
        emit(Emitted::Json(&event.to_string()));
        self.output.push(whole);
    }
}

impl Call {
    pub(super) fn item(&self, id: &str, status: &str, payload: &str) -> serde_json::Value {
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
