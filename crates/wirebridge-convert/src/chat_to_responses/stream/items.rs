//! Output items: tool calls opened and sent as fragments, and what
//! complete items carry that no delta did.

use crate::frames::Frames;
use wirebridge_wire::chat::strict::{CustomChunk, Delta, FunctionChunk, ToolCallChunk};
use wirebridge_wire::raw::{EscapedText, JsonText};
use wirebridge_wire::responses::lenient::OutputItem;

use super::{Call, StreamTranslator, TextKind};
use crate::chat_to_responses::body::arguments;
use crate::chat_to_responses::reply::Failure;
use crate::chat_to_responses::server_call_loss;
use crate::loss::LossKind;

impl StreamTranslator {
    pub(super) fn call_slot(&self, output_index: u32) -> Option<usize> {
        self.calls
            .iter()
            .position(|c| c.output_index == output_index)
    }

    pub(super) fn item_added(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) {
        match item.kind() {
            kind @ ("function_call" | "custom_tool_call") if self.ran_by_backend(index, item) => {
                self.leave_out(index, kind, item);
            }
            "function_call" | "custom_tool_call" => {
                self.open_call(index, item, out);
            }
            "message" | "reasoning" => {}
            other => self.lose_once(
                LossKind::UnsupportedItem,
                other,
                &format!("'{other}' items have no Chat Completions equivalent"),
            ),
        }
    }

    /// Whether a call item is one the backend ran itself. A call already
    /// sent stays the client's, whatever a later event names it.
    fn ran_by_backend(&self, index: u32, item: &OutputItem<'_>) -> bool {
        self.call_slot(index).is_none()
            && self
                .ctx
                .ran_by_backend(item.name.as_deref().unwrap_or_default())
    }

    /// Reports, once per item, a call the backend ran itself; its events
    /// find no open call and are dropped with it.
    fn leave_out(&mut self, index: u32, kind: &str, item: &OutputItem<'_>) {
        let path = format!("output[{index}]");
        if !self.losses.iter().any(|l| l.path == path) {
            let name = item.name.as_deref().unwrap_or_default();
            self.losses.push(server_call_loss(path, kind, name));
        }
    }

    /// Sends a call's first fragment: index, id, type and name. Returns
    /// whether the call is open; a call without a name or a call id fails
    /// the stream, since a Chat client can neither run nor answer it.
    fn open_call(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) -> bool {
        if self.call_slot(index).is_some() {
            return true;
        }
        let named = |field: Option<&str>| field.is_some_and(|f| !f.is_empty());
        if !named(item.name.as_deref()) || !named(item.call_id.as_deref()) {
            self.fail_with(
                Failure::server(format!(
                    "the upstream sent a {} item without a name or call_id",
                    item.kind()
                )),
                out,
            );
            return false;
        }
        let name = item.name.as_deref().unwrap_or_default();
        let custom = self.ctx.custom_call(name, item.kind());
        let chat_index = self.calls.len() as u32;
        self.calls.push(Call {
            output_index: index,
            custom,
            sent: false,
            name: item.name.as_deref().unwrap_or_default().to_owned(),
            call_id: item.call_id.as_deref().unwrap_or_default().to_owned(),
            argument_bytes: 0,
            unfinished: false,
            arguments: EscapedText::new(),
        });
        let name = item.name.as_deref();
        let empty = JsonText::from_text("");
        let call = ToolCallChunk {
            index: chat_index,
            id: item.call_id.as_deref(),
            kind: Some(if custom { "custom" } else { "function" }),
            function: (!custom).then(|| FunctionChunk {
                name,
                arguments: empty.clone(),
            }),
            custom: custom.then_some(CustomChunk { name, input: empty }),
        };
        self.start(out);
        self.write(
            out,
            Delta {
                tool_calls: vec![call],
                ..Delta::default()
            },
            None,
            None,
        );
        true
    }

    pub(super) fn call_fragment(&mut self, index: u32, text: JsonText<'_>, out: &mut Frames) {
        let Some(slot) = self.call_slot(index) else {
            return;
        };
        let call = &mut self.calls[slot];
        call.sent = true;
        call.argument_bytes += text.escaped().len();
        if !call.custom {
            call.arguments.push_escaped(text.escaped());
        }
        let custom = call.custom;
        let fragment = ToolCallChunk {
            index: slot as u32,
            id: None,
            kind: None,
            function: (!custom).then(|| FunctionChunk {
                name: None,
                arguments: text.clone(),
            }),
            custom: custom.then_some(CustomChunk {
                name: None,
                input: text,
            }),
        };
        self.write(
            out,
            Delta {
                tool_calls: vec![fragment],
                ..Delta::default()
            },
            None,
            None,
        );
    }

    /// Sends what an item carried that no delta did: servers may skip deltas
    /// and send only complete items.
    pub(super) fn item_done(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) {
        match item.kind() {
            kind @ ("function_call" | "custom_tool_call") if self.ran_by_backend(index, item) => {
                self.leave_out(index, kind, item);
            }
            "function_call" | "custom_tool_call" => {
                if !self.open_call(index, item, out) {
                    return;
                }
                let slot = self.call_slot(index).expect("opened above");
                if !self.calls[slot].sent {
                    let text = match item.kind() {
                        "custom_tool_call" => item
                            .input
                            .map(JsonText::from)
                            .unwrap_or_else(|| JsonText::from_text("")),
                        _ => arguments(item.arguments),
                    };
                    if !text.is_empty() {
                        self.call_fragment(index, text, out);
                    }
                }
                // What was sent of it stays; the answer then finishes for
                // `length`, as one cut by the token limit does.
                if item.status.as_deref() == Some("incomplete") {
                    self.calls[slot].unfinished = true;
                }
            }
            "message" if !self.streamed.contains(&index) => {
                for part in item.parts() {
                    match (part.kind(), part.text, part.refusal) {
                        ("output_text", Some(text), _) if !text.is_empty() => {
                            self.emit_text(index, text.into(), TextKind::Content, None, out)
                        }
                        ("refusal", _, Some(refusal)) if !refusal.is_empty() => {
                            self.emit_text(index, refusal.into(), TextKind::Refusal, None, out)
                        }
                        _ => {}
                    }
                }
            }
            "reasoning" if !self.streamed.contains(&index) => {
                let mut texts: Vec<_> = item.parts().into_iter().filter_map(|p| p.text).collect();
                if texts.is_empty() {
                    texts = item
                        .summary_parts()
                        .into_iter()
                        .filter_map(|p| p.text)
                        .collect();
                }
                if !texts.is_empty() {
                    self.emit_text(
                        index,
                        JsonText::join(texts, r"\n\n"),
                        TextKind::Reasoning(0),
                        None,
                        out,
                    );
                }
            }
            _ => {}
        }
    }
}
