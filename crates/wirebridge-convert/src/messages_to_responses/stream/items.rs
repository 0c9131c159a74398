//! Output items: tool calls opened and sent in pieces, and what complete
//! items carry that no delta did (servers may send only complete items).

use crate::frames::Frames;
use std::borrow::Cow;

use serde_json::value::RawValue;
use wirebridge_wire::messages::strict::{ContentBlock, Delta};
use wirebridge_wire::raw::{EscapedText, JsonStr, JsonText};
use wirebridge_wire::responses::lenient::OutputItem;

use super::blocks::BlockKind;
use super::StreamTranslator;
use crate::loss::LossKind;
use crate::messages_to_responses::body::server_call_loss;
use crate::messages_to_responses::reply::{arguments_text, thinking_text, Failure};
use crate::messages_to_responses::ThinkingDisplay;

/// A function call of the reply.
#[derive(Debug)]
pub(super) struct Call {
    output_index: u32,
    pub(super) name: String,
    pub(super) call_id: String,
    /// Bytes of arguments sent, as JSON text.
    pub(super) argument_bytes: usize,
    /// Whether any of its arguments were sent.
    sent: bool,
    /// Whether its `tool_use` block was opened.
    pub(super) opened: bool,
    /// Whether the backend left it unfinished (cut short): a call the
    /// client must not run.
    pub(super) unfinished: bool,
    /// The arguments sent, as escaped JSON text.
    arguments: EscapedText,
}

fn is_tool_use(kind: BlockKind) -> bool {
    kind == BlockKind::ToolUse
}

fn is_thinking(kind: BlockKind) -> bool {
    matches!(kind, BlockKind::Thinking { .. })
}

fn is_text(kind: BlockKind) -> bool {
    kind == BlockKind::Text
}

/// Whether arguments text is a JSON object, or nothing (no arguments).
fn is_object(text: &str) -> bool {
    let text = text.trim();
    text.is_empty()
        || serde_json::from_str::<&RawValue>(text).is_ok_and(|v| v.get().starts_with('{'))
}

impl StreamTranslator {
    fn call_slot(&self, output_index: u32) -> Option<usize> {
        self.calls
            .iter()
            .position(|c| c.output_index == output_index)
    }

    pub(super) fn item_added(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) {
        match item.kind() {
            "message" | "reasoning" | "compaction" => {}
            "function_call" => {
                let name = item.name.as_deref().unwrap_or_default();
                if self.ctx.ran_by_backend(name) {
                    self.leave_out_call(index, name);
                } else {
                    // Without a name or call id yet, the call opens when
                    // the complete item brings them.
                    self.open_call(index, item, out);
                }
            }
            other => self.leave_out(index, other),
        }
    }

    pub(super) fn item_done(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) {
        match item.kind() {
            "message" => self.message_done(index, item, out),
            "reasoning" => self.reasoning_done(index, item, out),
            "function_call" => self.call_done(index, item, out),
            "compaction" => self.compaction_done(index, item, out),
            other => self.leave_out(index, other),
        }
    }

    /// A compaction item, complete: its block opens, takes the carrier in
    /// one `compaction_delta`, and closes, as Anthropic's streams send it.
    fn compaction_done(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) {
        let Some(carrier) = item.encrypted_content.filter(|c| !c.is_empty()) else {
            let why = format!("output[{index}] is a compaction without its encrypted_content");
            return self.fail_with(Failure::api(why), out);
        };
        let block = ContentBlock::Compaction { content: None };
        let Some(block) = self.open_block(BlockKind::Compaction, index, 0, block, out) else {
            return;
        };
        self.compactions += 1;
        let content = carrier.into();
        self.delta(block, Delta::CompactionDelta { content }, out);
        self.close(None, out);
    }

    /// An item the reply cannot hold, reported once.
    fn leave_out(&mut self, index: u32, kind: &str) {
        if !self.skipped.contains(&index) {
            self.skipped.push(index);
        }
        self.lose_once(
            LossKind::UnsupportedItem,
            format!("output[{index}]"),
            &format!("'{kind}' items have no Messages equivalent"),
        );
    }

    /// A call the backend ran itself, reported once.
    fn leave_out_call(&mut self, index: u32, name: &str) {
        if !self.skipped.contains(&index) {
            self.skipped.push(index);
            self.losses
                .push(server_call_loss(format!("output[{index}]"), name));
        }
    }

    /// Opens a call's `tool_use` block. Returns whether it is (or was)
    /// opened: a call needs a name and a call id.
    fn open_call(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) -> bool {
        if let Some(slot) = self.call_slot(index) {
            return self.calls[slot].opened;
        }
        let name = item.name.as_deref().unwrap_or_default();
        let call_id = item.call_id.as_deref().unwrap_or_default();
        if name.is_empty() || call_id.is_empty() {
            return false;
        }
        let empty = RawValue::from_string("{}".to_owned()).expect("constant");
        let block = ContentBlock::ToolUse {
            id: Cow::Borrowed(call_id),
            name: Cow::Borrowed(name),
            input: Cow::Owned(empty),
        };
        if self
            .open_block(BlockKind::ToolUse, index, 0, block, out)
            .is_none()
        {
            return false;
        }
        self.calls.push(Call {
            output_index: index,
            name: name.to_owned(),
            call_id: call_id.to_owned(),
            argument_bytes: 0,
            sent: false,
            opened: true,
            unfinished: false,
            arguments: EscapedText::new(),
        });
        true
    }

    fn send_arguments(&mut self, index: u32, text: JsonText<'_>, out: &mut Frames) {
        let (Some(slot), Some(open)) = (self.call_slot(index), self.open.as_ref()) else {
            return;
        };
        let block = open.index;
        let call = &mut self.calls[slot];
        call.sent = true;
        call.argument_bytes += text.escaped().len();
        call.arguments.push_escaped(text.escaped());
        self.delta(block, Delta::InputJsonDelta { partial_json: text }, out);
    }

    pub(super) fn arguments(&mut self, index: u32, delta: Option<&RawValue>, out: &mut Frames) {
        let Some(text) = delta.and_then(JsonStr::new).filter(|t| !t.is_empty()) else {
            return;
        };
        if self.is_open(is_tool_use, index) {
            self.send_arguments(index, text.into(), out);
        }
    }

    pub(super) fn arguments_done(
        &mut self,
        index: u32,
        arguments: Option<&RawValue>,
        out: &mut Frames,
    ) {
        let unsent = self.call_slot(index).is_some_and(|s| !self.calls[s].sent);
        if unsent && self.is_open(is_tool_use, index) {
            let text = arguments_text(arguments);
            if !text.is_empty() {
                self.send_arguments(index, text, out);
            }
        }
    }

    fn call_done(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) {
        if self.skipped.contains(&index) {
            return;
        }
        if self.call_slot(index).is_none() {
            let name = item.name.as_deref().unwrap_or_default();
            if self.ctx.ran_by_backend(name) {
                return self.leave_out_call(index, name);
            }
            if !self.open_call(index, item, out) {
                return self.fail_with(
                    Failure::api("the upstream sent a function call without a name or call_id"),
                    out,
                );
            }
        }
        if !self.is_open(is_tool_use, index) {
            return;
        }
        let slot = self.call_slot(index).expect("opened above");
        if !self.calls[slot].sent {
            let text = arguments_text(item.arguments);
            if !text.is_empty() {
                self.send_arguments(index, text, out);
            }
        }
        self.close_call(item.status.as_deref() == Some("incomplete"), out);
    }

    /// Closes the open tool_use block. A finished call whose arguments are
    /// no JSON object is one the client could not run: the stream fails,
    /// as the body would. A call cut short (`cut`) stays as it was sent, as
    /// Anthropic's does when `max_tokens` cuts one, and is marked
    /// unfinished: the message then stops for `max_tokens`, never for
    /// `tool_use`, so no client runs it.
    pub(super) fn close_call(&mut self, cut: bool, out: &mut Frames) {
        let Some(open) = self.open.as_ref().filter(|o| o.kind == BlockKind::ToolUse) else {
            return;
        };
        let Some(slot) = self.call_slot(open.output_index) else {
            return;
        };
        let call = &mut self.calls[slot];
        call.unfinished |= cut;
        if !cut && !is_object(&call.arguments.decode()) {
            let message = format!(
                "the upstream's call to '{}' has arguments that are not a JSON object",
                call.name
            );
            return self.fail_with(Failure::api(message), out);
        }
        self.close(None, out);
    }

    fn message_done(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) {
        let parts = item.parts();
        if parts.iter().any(|p| {
            p.annotations
                .is_some_and(|a| !matches!(a.get().trim(), "null" | "[]"))
        }) {
            self.lose_annotations(index);
        }
        self.refused |= parts.iter().any(|p| p.kind() == "refusal");
        if self.streamed.contains(&index) {
            if self.is_open(is_text, index) {
                self.close(None, out);
            }
            return;
        }
        for (j, part) in parts.iter().enumerate() {
            let text = match part.kind() {
                "output_text" => part.text,
                "refusal" => part.refusal,
                _ => None,
            };
            if let Some(text) = text.filter(|t| !t.is_empty()) {
                let empty = ContentBlock::Text {
                    text: JsonText::from_text(""),
                };
                let Some(block) = self.open_block(BlockKind::Text, index, j as u32, empty, out)
                else {
                    return;
                };
                self.delta(block, Delta::TextDelta { text: text.into() }, out);
                self.close(None, out);
            }
        }
        self.mark_streamed(index);
    }

    /// Closes the item's thinking block with the item's carrier as its
    /// signature; an item whose text came in no delta is sent whole.
    fn reasoning_done(&mut self, index: u32, item: &OutputItem<'_>, out: &mut Frames) {
        if self.ctx.thinking == ThinkingDisplay::Off {
            return;
        }
        let signature = item
            .encrypted_content
            .filter(|s| !s.is_empty())
            .map(JsonText::from);
        if self.is_open(is_thinking, index) {
            return self.close(signature, out);
        }
        if self.streamed.contains(&index) {
            return;
        }
        let text = match self.ctx.thinking {
            ThinkingDisplay::Summarized => thinking_text(item),
            _ => None,
        };
        if text.is_none() && signature.is_none() {
            return;
        }
        let empty = ContentBlock::Thinking {
            thinking: JsonText::from_text(""),
            signature: JsonText::from_text(""),
        };
        let Some(block) =
            self.open_block(BlockKind::Thinking { summary: true }, index, 0, empty, out)
        else {
            return;
        };
        if let Some(thinking) = text {
            self.delta(block, Delta::ThinkingDelta { thinking }, out);
        }
        self.mark_streamed(index);
        self.close(signature, out);
    }
}
