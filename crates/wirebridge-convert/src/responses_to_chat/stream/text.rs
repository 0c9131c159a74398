//! Reasoning and message items: opening, streaming text, closing.

use crate::frames::Frames;
use serde_json::value::RawValue;
use wirebridge_wire::raw::{empty_array, EscapedText, JsonText};
use wirebridge_wire::responses::strict::{
    ContentPartEvent, ItemEvent, OutputTextEvent, ReasoningTextEvent, RefusalEvent,
    SummaryPartEvent, SummaryTextEvent,
};
use wirebridge_wire::responses::strict::{
    ItemStatus, MessagePhase, OutputItem, OutputMessage, OutputPart, ReasoningItem, ReasoningPart,
};

use super::delta_frame::DeltaFrame;
use super::emit::{emit, to_raw};
use super::{MessageState, Open, Part, ReasoningState, StreamTranslator};

impl StreamTranslator {
    pub(super) fn reasoning(&mut self, text: JsonText<'_>, out: &mut Frames) {
        let summary = self.ctx.summary_output();
        if !matches!(self.open, Open::Reasoning(_)) {
            if self.close_open(out).is_err() {
                return;
            }
            let output_index = self.output.len();
            let id = self.ids.item("rs", output_index);
            let item = OutputItem::Reasoning(ReasoningItem {
                id: &id,
                status: ItemStatus::InProgress,
                summary: Vec::new(),
                content: None,
                encrypted_content: None,
            });
            emit(
                out,
                &mut self.seq,
                "response.output_item.added",
                ItemEvent { output_index, item },
            );
            if summary {
                let part = ReasoningPart {
                    kind: "summary_text",
                    text: JsonText::from_text(""),
                };
                let body = SummaryPartEvent {
                    item_id: &id,
                    output_index,
                    summary_index: 0,
                    part,
                };
                emit(
                    out,
                    &mut self.seq,
                    "response.reasoning_summary_part.added",
                    body,
                );
            }
            let frame = match summary {
                true => DeltaFrame::new(
                    "response.reasoning_summary_text.delta",
                    &id,
                    output_index,
                    "summary_index",
                    0,
                ),
                false => DeltaFrame::new(
                    "response.reasoning_text.delta",
                    &id,
                    output_index,
                    "content_index",
                    0,
                ),
            };
            self.open = Open::Reasoning(ReasoningState {
                id,
                output_index,
                text: EscapedText::new(),
                frame,
            });
        }
        let Open::Reasoning(state) = &mut self.open else {
            unreachable!("opened above")
        };
        state.text.push_escaped(text.escaped());
        state.frame.write(out, &mut self.seq, text.raw(), None);
    }

    pub(super) fn text(
        &mut self,
        text: JsonText<'_>,
        refusal: bool,
        logprobs: Option<&RawValue>,
        out: &mut Frames,
    ) {
        if !matches!(self.open, Open::Message(_)) {
            if self.close_open(out).is_err() {
                return;
            }
            let output_index = self.output.len();
            let id = self.ids.item("msg", output_index);
            // No phase yet: OpenAI's models say it before their first token,
            // a Chat backend never does. Whether tool calls follow the text
            // is known only when the message closes, so its phase is on
            // `output_item.done` and in the response's output; the spec
            // makes it optional, and clients take the item from its `done`.
            let item = OutputItem::Message(OutputMessage {
                id: &id,
                status: ItemStatus::InProgress,
                role: "assistant",
                content: Vec::new(),
                phase: None,
            });
            emit(
                out,
                &mut self.seq,
                "response.output_item.added",
                ItemEvent { output_index, item },
            );
            self.open = Open::Message(MessageState {
                id,
                output_index,
                closed: Vec::new(),
                current: None,
            });
        }
        let Open::Message(state) = &mut self.open else {
            unreachable!("opened above")
        };
        if state.current.as_ref().is_some_and(|p| p.refusal != refusal) {
            close_part(state, &mut self.seq, out);
        }
        let content_index = state.closed.len();
        let item_id = state.id.as_str();
        let output_index = state.output_index;
        if state.current.is_none() {
            let empty = JsonText::from_text("");
            let part = if refusal {
                OutputPart::Refusal { refusal: empty }
            } else {
                OutputPart::OutputText {
                    text: empty,
                    annotations: empty_array(),
                    logprobs: empty_array(),
                }
            };
            let body = ContentPartEvent {
                item_id,
                output_index,
                content_index,
                part,
            };
            emit(out, &mut self.seq, "response.content_part.added", body);
            let kind = match refusal {
                true => "response.refusal.delta",
                false => "response.output_text.delta",
            };
            state.current = Some(Part {
                refusal,
                text: EscapedText::new(),
                logprobs: String::new(),
                frame: DeltaFrame::new(kind, item_id, output_index, "content_index", content_index),
            });
        }
        let part = state.current.as_mut().expect("opened above");
        part.text.push_escaped(text.escaped());
        // Output text events carry log probabilities, refusals none.
        let logprobs = (!refusal).then(|| {
            logprobs
                .filter(|l| l.get().starts_with('['))
                .unwrap_or(empty_array())
        });
        if let Some(logprobs) = logprobs {
            append_logprobs(&mut part.logprobs, logprobs);
        }
        part.frame.write(out, &mut self.seq, text.raw(), logprobs);
    }

    pub(super) fn close_reasoning(
        &mut self,
        mut state: ReasoningState,
        status: ItemStatus,
        out: &mut Frames,
    ) {
        let (item_id, output_index) = (state.id.as_str(), state.output_index);
        let text = JsonText::from(state.text.literal());
        let summary = self.ctx.summary_output();
        if summary {
            let body = SummaryTextEvent {
                item_id,
                output_index,
                summary_index: 0,
                delta: None,
                text: Some(text.clone()),
            };
            emit(
                out,
                &mut self.seq,
                "response.reasoning_summary_text.done",
                body,
            );
            let part = ReasoningPart {
                kind: "summary_text",
                text: text.clone(),
            };
            let body = SummaryPartEvent {
                item_id,
                output_index,
                summary_index: 0,
                part,
            };
            emit(
                out,
                &mut self.seq,
                "response.reasoning_summary_part.done",
                body,
            );
        } else {
            let body = ReasoningTextEvent {
                item_id,
                output_index,
                content_index: 0,
                delta: None,
                text: Some(text.clone()),
            };
            emit(out, &mut self.seq, "response.reasoning_text.done", body);
        }
        let part = |part_type| ReasoningPart {
            kind: part_type,
            text: text.clone(),
        };
        let (summary_parts, content) = if summary {
            (vec![part("summary_text")], None)
        } else {
            (Vec::new(), Some(vec![part("reasoning_text")]))
        };
        let sealed = self.ctx.seal.as_ref().map(|seal| seal.reasoning(&text));
        let item = OutputItem::Reasoning(ReasoningItem {
            id: item_id,
            status,
            summary: summary_parts,
            content,
            encrypted_content: sealed.as_deref(),
        });
        self.output.push(to_raw(&item));
        emit(
            out,
            &mut self.seq,
            "response.output_item.done",
            ItemEvent { output_index, item },
        );
    }

    pub(super) fn close_message(
        &mut self,
        mut state: MessageState,
        status: ItemStatus,
        phase: Option<MessagePhase>,
        out: &mut Frames,
    ) {
        close_part(&mut state, &mut self.seq, out);
        let logprobs: Vec<Box<RawValue>> = state
            .closed
            .iter()
            .map(|p| logprobs_array(&p.logprobs))
            .collect();
        let mut content = Vec::with_capacity(state.closed.len());
        for (part, logprobs) in state.closed.iter_mut().zip(&logprobs) {
            let text = JsonText::from(part.text.literal());
            content.push(if part.refusal {
                OutputPart::Refusal { refusal: text }
            } else {
                OutputPart::OutputText {
                    text,
                    annotations: empty_array(),
                    logprobs,
                }
            });
        }
        let item = OutputItem::Message(OutputMessage {
            id: &state.id,
            status,
            role: "assistant",
            content,
            phase,
        });
        self.output.push(to_raw(&item));
        emit(
            out,
            &mut self.seq,
            "response.output_item.done",
            ItemEvent {
                output_index: state.output_index,
                item,
            },
        );
    }
}

fn close_part(state: &mut MessageState, seq: &mut u64, out: &mut Frames) {
    let Some(mut part) = state.current.take() else {
        return;
    };
    let (item_id, output_index, content_index) =
        (state.id.as_str(), state.output_index, state.closed.len());
    let text = JsonText::from(part.text.literal());
    let logprobs = logprobs_array(&part.logprobs);
    let done = if part.refusal {
        let body = RefusalEvent {
            item_id,
            output_index,
            content_index,
            delta: None,
            refusal: Some(text.clone()),
        };
        emit(out, seq, "response.refusal.done", body);
        OutputPart::Refusal { refusal: text }
    } else {
        let body = OutputTextEvent {
            item_id,
            output_index,
            content_index,
            delta: None,
            text: Some(text.clone()),
            logprobs: &logprobs,
        };
        emit(out, seq, "response.output_text.done", body);
        OutputPart::OutputText {
            text,
            annotations: empty_array(),
            logprobs: &logprobs,
        }
    };
    let body = ContentPartEvent {
        item_id,
        output_index,
        content_index,
        part: done,
    };
    emit(out, seq, "response.content_part.done", body);
    state.closed.push(part);
}

fn append_logprobs(buf: &mut String, array: &RawValue) {
    let inner = array.get().trim();
    let inner = inner[1..inner.len() - 1].trim();
    if inner.is_empty() {
        return;
    }
    if !buf.is_empty() {
        buf.push(',');
    }
    buf.push_str(inner);
}

fn logprobs_array(joined: &str) -> Box<RawValue> {
    RawValue::from_string(format!("[{joined}]"))
        .unwrap_or_else(|_| RawValue::from_string("[]".into()).expect("constant"))
}
