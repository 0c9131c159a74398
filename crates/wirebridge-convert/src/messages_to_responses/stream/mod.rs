//! Responses event stream → Messages event stream.
//!
//! ```text
//! message_start
//!   for each block, one at a time, `index` from 0:
//!     content_block_start (text "", thinking "" / "", tool_use with input {})
//!       text:     text_delta*
//!       thinking: thinking_delta* signature_delta
//!       tool_use: input_json_delta*
//!     content_block_stop
//!   (ping after the first block opens, and while the backend streams
//!    nothing the client is shown)
//! message_delta (stop_reason, usage) -> message_stop
//! ```
//!
//! or, when the backend fails, an `error` event right after what was sent
//! (the open block left as it is), which ends the stream.

mod blocks;
mod items;
#[cfg(test)]
mod tests;

use crate::frames::Frames;
use serde_json::value::RawValue;
use wirebridge_wire::messages::strict::{
    ErrorObject, Event, MessageBody, MessageDelta, StopReason,
};
use wirebridge_wire::responses::lenient::{ResponseBody, StreamEvent, Usage as ResponsesUsage};

use super::body::reply_id;
use super::reply::{stop_reason, token_usage, usage, Failure};
use super::MessagesContext;
use crate::chat_to_responses::read_event;
use crate::handed::{self, DeltaKind, HandedDelta};
use crate::ids::ResponseIds;
use crate::loss::{Loss, LossKind, LossReport};
use crate::summary::{ReplySummary, ToolCallSummary};
use blocks::OpenBlock;

/// Upstream events in a row that show the client nothing before a `ping`
/// tells it the stream is alive (reasoning it does not see, say).
const PING_EVERY: u32 = 64;

/// Translates a Responses event stream into a Messages event stream.
///
/// Feed it the `data` of each upstream SSE event with [`push`](Self::push),
/// and call [`finish`](Self::finish) at the end of the upstream body (or
/// [`fail`](Self::fail) if it broke off). Each call appends complete
/// `event: …` / `data: …` frames to `out`; the stream ends with
/// `message_stop`, or, on failure, with an `error` event after everything
/// already sent.
///
/// ```
/// use wirebridge_convert::messages_to_responses::{MessagesContext, StreamTranslator};
/// use wirebridge_convert::StreamTranslate;
///
/// let mut translator = StreamTranslator::new(MessagesContext::default());
/// let mut out = wirebridge_convert::Frames::sse();
/// translator.push(r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"m"}}"#, &mut out);
/// translator.push(r#"{"type":"response.output_text.delta","sequence_number":1,"output_index":0,"content_index":0,"delta":"Hi","logprobs":[]}"#, &mut out);
/// translator.push(r#"{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":5,"output_tokens":1}}}"#, &mut out);
/// let text = String::from_utf8(out.take().bytes).unwrap();
/// assert!(text.starts_with("event: message_start\n"));
/// assert!(text.contains(r#""delta":{"type":"text_delta","text":"Hi"}"#));
/// assert!(text.contains(r#""stop_reason":"end_turn""#));
/// assert!(text.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
/// assert!(translator.is_finished());
/// ```
#[derive(Debug)]
pub struct StreamTranslator {
    ctx: MessagesContext,
    id: String,
    model: String,
    started: bool,
    finished: bool,
    /// How many blocks were opened: the next block's index.
    blocks: usize,
    /// The block open now, if any.
    open: Option<OpenBlock>,
    pinged: bool,
    /// Upstream events in a row that wrote nothing.
    silent: u32,
    /// Output indexes whose content arrived as deltas.
    streamed: Vec<u32>,
    /// Output indexes left out of the reply.
    skipped: Vec<u32>,
    calls: Vec<items::Call>,
    refused: bool,
    /// How many of the blocks were compactions: a reply of nothing else
    /// stops for `compaction`.
    compactions: usize,
    usage: Option<ResponsesUsage>,
    outcome: Option<&'static str>,
    losses: LossReport,
}

impl StreamTranslator {
    /// A translator for one message.
    pub fn new(ctx: MessagesContext) -> Self {
        Self {
            id: ResponseIds::new().message(),
            model: ctx.model.clone(),
            ctx,
            started: false,
            finished: false,
            blocks: 0,
            open: None,
            pinged: false,
            silent: 0,
            streamed: Vec::new(),
            skipped: Vec::new(),
            calls: Vec::new(),
            refused: false,
            compactions: 0,
            usage: None,
            outcome: None,
            losses: LossReport::default(),
        }
    }

    /// The `msg_…` id of the message.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether the stream has ended (`message_stop` or `error` written).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// What the stream could not carry.
    pub fn losses(&self) -> &LossReport {
        &self.losses
    }

    /// How the reply went so far: its stop reason (or `error`) once
    /// finished, usage and tool calls.
    pub fn summary(&self) -> ReplySummary {
        ReplySummary {
            outcome: self.outcome.map(str::to_owned),
            usage: self.usage.as_ref().map(token_usage),
            tool_calls: self
                .calls
                .iter()
                .filter(|c| c.opened && !c.unfinished)
                .map(|c| ToolCallSummary {
                    name: c.name.clone(),
                    call_id: c.call_id.clone(),
                    argument_bytes: c.argument_bytes,
                })
                .collect(),
        }
    }

    /// Feeds the `data` of one upstream SSE event.
    pub fn push(&mut self, data: &str, out: &mut Frames) {
        if self.finished {
            return;
        }
        let written = out.len();
        // A delta the Responses translator below handed as a record
        // (`Framing::Handed`): its fields, with no JSON to read.
        if let Some(handed) = handed::read(data) {
            let HandedDelta {
                kind,
                output_index,
                part,
                fragment,
            } = handed;
            self.fragment(kind, output_index, part, Some(fragment.raw()), out);
        } else {
            let event: StreamEvent<'_> = match read_event(data) {
                Some(event) => event,
                None => match serde_json::from_str(data) {
                    Ok(event) => event,
                    Err(e) => {
                        return self.fail_with(
                            Failure::api(format!(
                                "the upstream sent an event that is not valid JSON: {e}"
                            )),
                            out,
                        )
                    }
                },
            };
            self.event(&event, out);
        }
        if out.len() > written || !self.started || self.finished {
            self.silent = 0;
            return;
        }
        self.silent += 1;
        if self.silent >= PING_EVERY {
            self.silent = 0;
            self.emit(out, &Event::Ping);
        }
    }

    /// A text, refusal, reasoning or tool-argument fragment of item
    /// `output_index`, part `part` (its `content_index`, or a summary's
    /// `summary_index`; 0 for arguments).
    fn fragment(
        &mut self,
        kind: DeltaKind,
        output_index: u32,
        part: u32,
        fragment: Option<&RawValue>,
        out: &mut Frames,
    ) {
        match kind {
            DeltaKind::OutputText => self.text(output_index, part, fragment, out),
            DeltaKind::Refusal => {
                self.refused = true;
                self.text(output_index, part, fragment, out)
            }
            DeltaKind::ReasoningSummary => self.thinking(output_index, part, true, fragment, out),
            DeltaKind::ReasoningText => self.thinking(output_index, part, false, fragment, out),
            DeltaKind::FunctionCallArguments => self.arguments(output_index, fragment, out),
        }
    }

    fn event(&mut self, event: &StreamEvent<'_>, out: &mut Frames) {
        let index = event.output_index.unwrap_or(0);
        match event.kind() {
            "response.created" | "response.in_progress" | "response.queued" => {
                self.note_response(event.response);
                self.start(out);
            }
            "response.output_item.added" => {
                self.start(out);
                if let Some(item) = &event.item {
                    self.item_added(index, item, out);
                }
            }
            kind @ ("response.output_text.delta"
            | "response.refusal.delta"
            | "response.reasoning_summary_text.delta"
            | "response.reasoning_text.delta"
            | "response.function_call_arguments.delta") => {
                let kind = DeltaKind::of(kind).expect("one of the delta kinds");
                let part = match kind {
                    DeltaKind::ReasoningSummary => event.summary_index,
                    _ => event.content_index,
                };
                self.fragment(kind, index, part.unwrap_or(0), event.delta, out)
            }
            "response.function_call_arguments.done" => {
                self.arguments_done(index, event.arguments, out)
            }
            "response.output_item.done" => {
                if let Some(item) = &event.item {
                    self.item_done(index, item, out);
                }
            }
            "response.output_text.annotation.added" => self.lose_annotations(index),
            "response.completed" | "response.incomplete" => self.complete(event.response, out),
            "response.failed" => {
                let body = event
                    .response
                    .and_then(|r| ResponseBody::parse(r.get().as_bytes()).ok());
                let failure = body.and_then(|b| Failure::from_raw(b.error));
                self.fail_with(
                    failure.unwrap_or_else(|| Failure::api("the upstream response failed")),
                    out,
                );
            }
            "error" => self.fail_with(Failure::from_event(event), out),
            // A bare `{"error": {…}}` with no `type`.
            "" if event.error.is_some_and(|e| e.get() != "null") => {
                self.fail_with(Failure::from_event(event), out)
            }
            _ => {}
        }
    }

    /// Ends the stream at the end of the upstream body. A stream that ended
    /// without a terminal event was cut off: it ends with an `error`.
    pub fn finish(&mut self, out: &mut Frames) {
        if !self.finished {
            self.fail_with(
                Failure::api("the upstream stream ended before the response was complete"),
                out,
            );
        }
    }

    /// Ends the stream because the upstream failed (a transport error, a
    /// decoding error).
    pub fn fail(&mut self, message: &str, out: &mut Frames) {
        self.fail_with(Failure::api(message), out);
    }

    fn note_response(&mut self, raw: Option<&RawValue>) {
        // `message_start` names the model once; a later event cannot
        // change it.
        if self.started {
            return;
        }
        let body = raw.and_then(|r| ResponseBody::parse(r.get().as_bytes()).ok());
        if self.ctx.thread.is_some() || self.ctx.diagnostics.is_some() {
            // The id the next turn continues from, or compares itself with.
            if let Some(id) = body.as_ref().and_then(|b| b.id.as_deref()) {
                self.id = reply_id(Some(id), &self.ctx);
            }
        }
        if let Some(model) = body.as_ref().and_then(|b| b.model.as_deref()) {
            if !model.is_empty() {
                model.clone_into(&mut self.model);
            }
        }
    }

    /// Writes `message_start`, once. The prompt's usage is not known yet:
    /// it comes with `message_delta`.
    fn start(&mut self, out: &mut Frames) {
        if self.started {
            return;
        }
        self.started = true;
        // Known with the request: `message_start` says it, as Anthropic's
        // API does.
        let diagnostics = super::diagnostics::reply(&self.ctx);
        let message = MessageBody {
            id: &self.id,
            model: &self.model,
            diagnostics: diagnostics.as_deref(),
            ..MessageBody::default()
        };
        self.emit(out, &Event::MessageStart { message });
    }

    fn emit(&self, out: &mut Frames, event: &Event<'_>) {
        out.event(Some(event.name()), |out| event.write_json(out));
    }

    fn complete(&mut self, raw: Option<&RawValue>, out: &mut Frames) {
        self.start(out);
        let body = raw
            .and_then(|r| ResponseBody::parse(r.get().as_bytes()).ok())
            .unwrap_or_default();
        // A call still open ends with the response.
        self.close_call(body.status.as_deref() == Some("incomplete"), out);
        if self.finished {
            return;
        }
        self.close(None, out);
        let stop = stop_reason(
            body.status.as_deref(),
            body.incomplete_details
                .as_ref()
                .and_then(|d| d.reason.as_deref()),
            self.refused,
            self.calls.iter().any(|c| c.opened),
            self.calls.iter().any(|c| c.unfinished),
        );
        let stop = match self.compactions > 0 && self.compactions == self.blocks {
            true => StopReason::Compaction,
            false => stop,
        };
        self.usage = body.usage;
        let delta = MessageDelta {
            stop_reason: Some(stop),
            stop_sequence: None,
        };
        let usage = usage(&self.usage.unwrap_or_default(), self.ctx.count_thinking);
        self.emit(out, &Event::MessageDelta { delta, usage });
        self.emit(out, &Event::MessageStop);
        self.finished = true;
        self.outcome = Some(stop.as_str());
    }

    fn fail_with(&mut self, failure: Failure, out: &mut Frames) {
        if self.finished {
            return;
        }
        // What the client was sent stays, the open block as it got it: an
        // `error` ends a Messages stream wherever it comes, as Anthropic's
        // API sends it, and a tool call cut short is not made to look
        // finished.
        self.open = None;
        let error = ErrorObject {
            kind: failure.kind.into(),
            message: failure.message.into(),
            details: None,
        };
        self.emit(out, &Event::Error { error });
        self.finished = true;
        self.outcome = Some("error");
    }

    fn lose_once(&mut self, kind: LossKind, path: String, reason: &str) {
        if !self.losses.iter().any(|l| l.kind == kind && l.path == path) {
            self.losses.push(Loss {
                kind,
                path,
                reason: reason.to_owned(),
            });
        }
    }

    fn lose_annotations(&mut self, index: u32) {
        self.lose_once(
            LossKind::UnsupportedContent,
            format!("output[{index}].annotations"),
            "Messages citations point into Anthropic's own search results and documents; the backend's annotations have no such form",
        );
    }
}

impl crate::stream::StreamTranslate for StreamTranslator {
    fn push(&mut self, data: &str, out: &mut Frames) {
        StreamTranslator::push(self, data, out)
    }
    fn finish(&mut self, out: &mut Frames) {
        StreamTranslator::finish(self, out)
    }
    fn fail(&mut self, message: &str, out: &mut Frames) {
        StreamTranslator::fail(self, message, out)
    }
    fn is_finished(&self) -> bool {
        StreamTranslator::is_finished(self)
    }
    fn summary(&self) -> ReplySummary {
        StreamTranslator::summary(self)
    }
    fn losses(&self) -> &LossReport {
        StreamTranslator::losses(self)
    }
}
