//! Tool calls: fragments keyed by index, live or buffered, closed in order.

use crate::frames::Frames;
use crate::handed::{self, DeltaKind};
use serde_json::value::RawValue;
use wirebridge_wire::chat::lenient::ToolCall;
use wirebridge_wire::raw::{EscapedText, JsonStr, JsonText};
use wirebridge_wire::responses::strict::{ArgumentsEvent, CustomInputEvent, ItemEvent};
use wirebridge_wire::responses::strict::{
    CustomToolCall, FunctionCall, ItemStatus, OutputItem, ToolSearchCall,
};

use super::emit::{emit, to_raw, Failure};
use super::{Call, CallPhase, Open, StreamTranslator};
use crate::responses_to_chat::reply::{custom_input, empty_object, tool_search_arguments};
use crate::tool_names::ToolKind;

impl StreamTranslator {
    pub(super) fn tool_fragment(
        &mut self,
        fragment: &ToolCall<'_>,
        out: &mut Frames,
    ) -> Result<(), Failure> {
        let id = fragment.id.as_deref().filter(|id| !id.is_empty());
        // Index first; servers that omit it are matched by id, then by the
        // most recent call.
        let chat_index = fragment
            .index
            .or_else(|| {
                id.and_then(|id| self.calls.iter().find(|c| c.call_id.as_deref() == Some(id)))
                    .map(|c| c.chat_index)
            })
            .or_else(|| {
                if id.is_some() {
                    None
                } else {
                    self.calls.last().map(|c| c.chat_index)
                }
            })
            .unwrap_or(self.calls.len() as u32);
        let slot = match self.calls.iter().position(|c| c.chat_index == chat_index) {
            Some(slot) => slot,
            None => {
                self.calls.push(Call {
                    chat_index,
                    call_id: None,
                    name: None,
                    arguments: EscapedText::new(),
                    phase: CallPhase::Pending,
                });
                self.calls.len() - 1
            }
        };
        let function = fragment.function.as_ref();
        let arguments = function
            .and_then(|f| f.arguments)
            .filter(|a| a.get() != "null");
        let call = &mut self.calls[slot];
        if call.phase == CallPhase::Closed
            && (arguments.is_some()
                || function
                    .and_then(|f| f.name.as_deref())
                    .is_some_and(|n| !n.is_empty()))
        {
            return Err(Failure::server(format!(
                "the upstream sent more of tool call {chat_index} after the call had ended"
            )));
        }
        if call.call_id.is_none() {
            call.call_id = id.map(str::to_owned);
        }
        if let Some(name) = function
            .and_then(|f| f.name.as_deref())
            .filter(|n| !n.is_empty())
        {
            if call.name.is_none() {
                call.name = Some(name.to_owned());
            }
        }
        let fragment_text = match arguments {
            None => None,
            Some(raw) => match JsonStr::new(raw) {
                Some(text) => Some(JsonText::from(text)),
                None => Some(JsonText::Owned(
                    wirebridge_wire::raw::json_as_string_literal(raw),
                )),
            },
        }
        .filter(|t| !t.is_empty());
        if let Some(text) = &fragment_text {
            call.arguments.push_escaped(text.escaped());
        }
        match &call.phase {
            CallPhase::Live {
                item_id,
                output_index,
            } => {
                if let Some(delta) = fragment_text {
                    arguments_delta(out, &mut self.seq, item_id, *output_index, delta);
                }
            }
            CallPhase::Pending => self.try_go_live(slot, out)?,
            CallPhase::Closed => {}
        }
        Ok(())
    }

    /// The kind of tool a Chat function name stands for.
    fn kind_of(&self, chat_name: &str) -> ToolKind {
        self.ctx
            .tool_names
            .origin(chat_name)
            .map(|o| o.kind)
            .unwrap_or_default()
    }

    /// Opens a pending call as a live item if it is the next call in order,
    /// is a plain function, has its name, and no other call is live.
    pub(super) fn try_go_live(&mut self, slot: usize, out: &mut Frames) -> Result<(), Failure> {
        let earlier_pending = self.calls[..slot]
            .iter()
            .any(|c| c.phase == CallPhase::Pending);
        let Some(name) = self.calls[slot].name.clone() else {
            return Ok(());
        };
        // Custom calls and tool searches are sent whole when they close.
        let whole = self.kind_of(&name) != ToolKind::Function;
        if earlier_pending || whole || matches!(self.open, Open::Calls) {
            return Ok(());
        }
        self.close_open(out)?;
        self.open_call(slot, out);
        self.send_buffered_arguments(slot, out);
        self.open = Open::Calls;
        Ok(())
    }

    /// Sends, as one delta, the arguments a call gathered before it went
    /// live (custom calls send their input when they close instead).
    pub(super) fn send_buffered_arguments(&mut self, slot: usize, out: &mut Frames) {
        let call = &self.calls[slot];
        let whole = call
            .name
            .as_deref()
            .is_some_and(|n| self.kind_of(n) != ToolKind::Function);
        let CallPhase::Live {
            item_id,
            output_index,
        } = &call.phase
        else {
            return;
        };
        if whole || call.arguments.is_empty() {
            return;
        }
        let delta = JsonText::from_escaped(call.arguments.escaped());
        arguments_delta(out, &mut self.seq, item_id, *output_index, delta);
    }

    pub(super) fn open_call(&mut self, slot: usize, out: &mut Frames) {
        let output_index = self.output.len();
        let call = &mut self.calls[slot];
        if call.call_id.is_none() {
            call.call_id = Some(self.ids.call(call.chat_index as usize));
        }
        let chat_name = call.name.as_deref().unwrap_or_default();
        let origin = self.ctx.tool_names.origin(chat_name);
        let name = origin.map(|o| o.name.as_str()).unwrap_or(chat_name);
        let namespace = origin.and_then(|o| o.namespace.as_deref());
        let call_id = call.call_id.as_deref().unwrap_or_default();
        let empty = JsonText::from_text("");
        let kind = origin.map(|o| o.kind).unwrap_or_default();
        let item_id = if kind == ToolKind::ToolSearch {
            let id = self.ids.item("tsc", output_index);
            let item = OutputItem::ToolSearchCall(ToolSearchCall {
                id: &id,
                status: ItemStatus::InProgress,
                call_id,
                execution: "client",
                arguments: empty_object(),
            });
            emit(
                out,
                &mut self.seq,
                "response.output_item.added",
                ItemEvent { output_index, item },
            );
            id
        } else if kind == ToolKind::Custom {
            let id = self.ids.item("ctc", output_index);
            let item = OutputItem::CustomToolCall(CustomToolCall {
                id: Some(id.as_str().into()),
                status: Some(ItemStatus::InProgress),
                name: name.into(),
                namespace: namespace.map(Into::into),
                call_id: call_id.into(),
                input: empty,
            });
            emit(
                out,
                &mut self.seq,
                "response.output_item.added",
                ItemEvent { output_index, item },
            );
            id
        } else {
            let id = self.ids.item("fc", output_index);
            let item = OutputItem::FunctionCall(FunctionCall {
                id: Some(id.as_str().into()),
                status: Some(ItemStatus::InProgress),
                name: name.into(),
                namespace: namespace.map(Into::into),
                call_id: call_id.into(),
                arguments: empty,
            });
            emit(
                out,
                &mut self.seq,
                "response.output_item.added",
                ItemEvent { output_index, item },
            );
            id
        };
        // Reserve the output slot so later items get the next index.
        self.output
            .push(RawValue::from_string("null".into()).expect("constant"));
        call.phase = CallPhase::Live {
            item_id,
            output_index,
        };
    }

    pub(super) fn close_call(&mut self, slot: usize, status: ItemStatus, out: &mut Frames) {
        let call = &mut self.calls[slot];
        let CallPhase::Live {
            item_id,
            output_index,
        } = std::mem::replace(&mut call.phase, CallPhase::Closed)
        else {
            return;
        };
        let chat_name = call.name.as_deref().unwrap_or_default();
        let origin = self.ctx.tool_names.origin(chat_name);
        let name = origin.map(|o| o.name.as_str()).unwrap_or(chat_name);
        let namespace = origin.and_then(|o| o.namespace.as_deref());
        let call_id = call.call_id.as_deref().unwrap_or_default();
        let kind = origin.map(|o| o.kind).unwrap_or_default();
        let search_arguments;
        let item = if kind == ToolKind::ToolSearch {
            search_arguments = tool_search_arguments(&call.arguments.decode());
            OutputItem::ToolSearchCall(ToolSearchCall {
                id: &item_id,
                status,
                call_id,
                execution: "client",
                arguments: &search_arguments,
            })
        } else if kind == ToolKind::Custom {
            let input = custom_input(&call.arguments.decode());
            if !input.is_empty() {
                let body = CustomInputEvent {
                    item_id: &item_id,
                    output_index,
                    delta: Some(input.clone()),
                    input: None,
                };
                emit(
                    out,
                    &mut self.seq,
                    "response.custom_tool_call_input.delta",
                    body,
                );
            }
            let body = CustomInputEvent {
                item_id: &item_id,
                output_index,
                delta: None,
                input: Some(input.clone()),
            };
            emit(
                out,
                &mut self.seq,
                "response.custom_tool_call_input.done",
                body,
            );
            OutputItem::CustomToolCall(CustomToolCall {
                id: Some(item_id.as_str().into()),
                status: Some(status),
                name: name.into(),
                namespace: namespace.map(Into::into),
                call_id: call_id.into(),
                input,
            })
        } else {
            let arguments = JsonText::from(call.arguments.literal());
            let body = ArgumentsEvent {
                item_id: &item_id,
                output_index,
                delta: None,
                name: Some(name),
                arguments: Some(arguments.clone()),
            };
            emit(
                out,
                &mut self.seq,
                "response.function_call_arguments.done",
                body,
            );
            OutputItem::FunctionCall(FunctionCall {
                id: Some(item_id.as_str().into()),
                status: Some(status),
                name: name.into(),
                namespace: namespace.map(Into::into),
                call_id: call_id.into(),
                arguments,
            })
        };
        self.output[output_index] = to_raw(&item);
        emit(
            out,
            &mut self.seq,
            "response.output_item.done",
            ItemEvent { output_index, item },
        );
    }
}

/// Writes a function call's `arguments` fragment: its delta event, or in
/// `Framing::Handed` the record that stands for it.
fn arguments_delta(
    out: &mut Frames,
    seq: &mut u64,
    item_id: &str,
    output_index: usize,
    delta: JsonText<'_>,
) {
    const KIND: &str = "response.function_call_arguments.delta";
    if out.framing().hands_deltas() {
        let output_index = u32::try_from(output_index).unwrap_or(u32::MAX);
        out.event(Some(KIND), |out| {
            handed::write(
                out,
                DeltaKind::FunctionCallArguments,
                output_index,
                0,
                delta.escaped(),
            )
        });
        *seq += 1;
        return;
    }
    let body = ArgumentsEvent {
        item_id,
        output_index,
        delta: Some(delta),
        name: None,
        arguments: None,
    };
    emit(out, seq, KIND, body);
}
