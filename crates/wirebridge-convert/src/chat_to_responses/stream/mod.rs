//! Responses event stream → Chat chunk stream.

use crate::frames::Frames;
use serde_json::value::RawValue;
use wirebridge_wire::chat::strict::{
    ChatChunk, ChoiceLogprobs, ChunkChoice, ChunkUsage, CompletionUsage, Delta,
};
use wirebridge_wire::raw::{EscapedText, JsonStr, JsonText};
use wirebridge_wire::responses::lenient::{ResponseBody, StreamEvent};

use super::body::arguments;
use super::reply::{arguments_are_object, finish_reason, usage, Failure};
use super::{ChatContext, ChatReasoning};
use crate::ids::{unix_now, ResponseIds};
use crate::loss::{Loss, LossKind, LossReport};
use chunk_frame::ChunkFrame;

mod chunk_frame;
mod event;
mod items;

pub(crate) use event::read_event;

/// Translates a Responses event stream into a Chat Completions chunk stream.
///
/// Feed it the `data` of each upstream SSE event with [`push`](Self::push),
/// and call [`finish`](Self::finish) at the end of the upstream body (or
/// [`fail`](Self::fail) if it broke off). Each call appends complete
/// `data: …` frames to `out`; the stream ends with `data: [DONE]`, after
/// a `data: {"error": …}` frame on failure, so that a client can tell the
/// two apart and a client reading until `[DONE]` stops either way.
///
/// ```
/// use wirebridge_convert::chat_to_responses::{ChatContext, StreamTranslator};
///
/// let mut translator = StreamTranslator::new(ChatContext::default());
/// let mut out = wirebridge_convert::Frames::sse();
/// translator.push(r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","created_at":1,"model":"m"}}"#, &mut out);
/// translator.push(r#"{"type":"response.output_text.delta","sequence_number":1,"output_index":0,"content_index":0,"delta":"Hi","logprobs":[]}"#, &mut out);
/// translator.push(r#"{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","status":"completed"}}"#, &mut out);
/// let text = String::from_utf8(out.take().bytes).unwrap();
/// assert!(text.contains(r#""delta":{"content":"Hi"}"#));
/// assert!(text.ends_with("data: [DONE]\n\n"));
/// ```
#[derive(Debug)]
pub struct StreamTranslator {
    ctx: ChatContext,
    id: String,
    created: u64,
    model: String,
    started: bool,
    finished: bool,
    calls: Vec<Call>,
    /// Output indexes whose text, refusal or reasoning arrived as deltas.
    streamed: Vec<u32>,
    /// The reasoning part (output index, part index) written last: parts
    /// are separated by a blank line, as in a translated body.
    reasoning_part: Option<(u32, u32)>,
    usage: Option<CompletionUsage>,
    losses: LossReport,
    outcome: Option<&'static str>,
    /// The constant parts of text chunks, once the first is written.
    frame: Option<ChunkFrame>,
}

#[derive(Debug)]
struct Call {
    output_index: u32,
    custom: bool,
    /// Whether any of its arguments (or input) has been sent.
    sent: bool,
    name: String,
    call_id: String,
    argument_bytes: usize,
    /// Whether the backend left it unfinished (its item ended
    /// `incomplete`): a call the client must not run.
    unfinished: bool,
    /// The arguments sent, escaped (a function call's; a custom call's
    /// input is free text).
    arguments: EscapedText,
}

impl StreamTranslator {
    /// A translator for one completion.
    pub fn new(ctx: ChatContext) -> Self {
        Self {
            id: ResponseIds::new().chat_completion(),
            created: 0,
            model: ctx.model.clone(),
            ctx,
            started: false,
            finished: false,
            calls: Vec::new(),
            streamed: Vec::new(),
            reasoning_part: None,
            usage: None,
            losses: LossReport::default(),
            outcome: None,
            frame: None,
        }
    }

    /// The `chatcmpl-…` id of every chunk.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether the stream has ended (`[DONE]` or an error chunk written).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// What the stream could not carry.
    pub fn losses(&self) -> &LossReport {
        &self.losses
    }

    /// The calls the backend left unfinished, as (output index, call id,
    /// name): a body folded from the stream leaves them out.
    pub(crate) fn unfinished_calls(&self) -> impl Iterator<Item = (u32, &str, &str)> {
        self.calls
            .iter()
            .filter(|c| c.unfinished)
            .map(|c| (c.output_index, c.call_id.as_str(), c.name.as_str()))
    }

    /// Usage reported by the upstream, once the response has finished.
    pub fn usage(&self) -> Option<&CompletionUsage> {
        self.usage.as_ref()
    }

    /// How the reply went so far: its `finish_reason` (or `error`) once
    /// finished, usage and tool calls.
    pub fn summary(&self) -> crate::summary::ReplySummary {
        crate::summary::ReplySummary {
            outcome: self.outcome.map(str::to_owned),
            usage: self.usage.as_ref().map(super::reply::token_usage),
            tool_calls: self
                .calls
                .iter()
                .filter(|c| !c.unfinished)
                .map(|c| crate::summary::ToolCallSummary {
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
        if data.trim() == "[DONE]" {
            return self.finish(out);
        }
        let event: StreamEvent<'_> = match event::read_event(data) {
            Some(event) => event,
            None => match serde_json::from_str(data) {
                Ok(event) => event,
                Err(e) => {
                    return self.fail_with(
                        Failure::server(format!(
                            "the upstream sent an event that is not valid JSON: {e}"
                        )),
                        out,
                    )
                }
            },
        };
        self.event(&event, out);
    }

    /// Translates one event.
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
            "response.output_text.delta" => {
                let logprobs = if self.ctx.logprobs {
                    event.logprobs
                } else {
                    None
                };
                self.text(index, event.delta, TextKind::Content, logprobs, out);
            }
            "response.refusal.delta" => self.text(index, event.delta, TextKind::Refusal, None, out),
            "response.reasoning_text.delta" | "response.reasoning_summary_text.delta" => {
                let part = event.summary_index.or(event.content_index).unwrap_or(0);
                self.text(index, event.delta, TextKind::Reasoning(part), None, out)
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                if let Some(delta) = event.delta.and_then(JsonStr::new).filter(|d| !d.is_empty()) {
                    self.call_fragment(index, delta.into(), out);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(slot) = self.call_slot(index).filter(|s| !self.calls[*s].sent) {
                    let text = arguments(event.arguments);
                    if !text.is_empty() {
                        self.call_fragment(self.calls[slot].output_index, text, out);
                    }
                }
            }
            "response.custom_tool_call_input.done" => {
                if let (Some(slot), Some(input)) = (self.call_slot(index), event.input) {
                    if !self.calls[slot].sent && !input.is_empty() {
                        self.call_fragment(self.calls[slot].output_index, input.into(), out);
                    }
                }
            }
            "response.output_item.done" => {
                if let Some(item) = &event.item {
                    self.item_done(index, item, out);
                }
            }
            "response.output_text.annotation.added" => self.lose_once(
                LossKind::UnsupportedContent,
                "annotations",
                "Chat chunks carry no citations; they are in the non-streaming message only",
            ),
            "response.completed" | "response.incomplete" => self.complete(event.response, out),
            "response.failed" => {
                let body = event
                    .response
                    .and_then(|r| ResponseBody::parse(r.get().as_bytes()).ok());
                let failure = body.and_then(|b| Failure::from_raw(b.error));
                self.fail_with(
                    failure.unwrap_or_else(|| Failure::server("the upstream response failed")),
                    out,
                );
            }
            "error" => self.fail_with(Failure::from_event(event), out),
            // A bare `{"error": {…}}` with no `type`, as Chat servers write
            // it, from a Responses server that fails that way mid-stream.
            "" if event.error.is_some_and(|e| e.get() != "null") => {
                self.fail_with(Failure::from_event(event), out)
            }
            _ => {}
        }
    }

    /// Ends the stream at the end of the upstream body. A stream that ended
    /// without a terminal event was cut off: it ends with an error chunk.
    pub fn finish(&mut self, out: &mut Frames) {
        if !self.finished {
            self.fail_with(
                Failure::server("the upstream stream ended before the response was complete"),
                out,
            );
        }
    }

    /// Ends the stream because the upstream failed (a transport error, a
    /// decoding error).
    pub fn fail(&mut self, message: &str, out: &mut Frames) {
        self.fail_with(Failure::server(message), out);
    }

    fn note_response(&mut self, raw: Option<&RawValue>) {
        // Every chunk repeats the first chunk's `created` and `model`: once
        // it is written, a late or repeated lifecycle event (one naming
        // another model) must not change them.
        if self.started {
            return;
        }
        let Some(body) = raw.and_then(|r| ResponseBody::parse(r.get().as_bytes()).ok()) else {
            return;
        };
        if self.created == 0 {
            self.created = body.created_at.unwrap_or(0);
        }
        if let Some(model) = body.model.as_deref().filter(|m| !m.is_empty()) {
            self.model = model.to_owned();
        }
    }

    /// Writes the first chunk, with the role.
    fn start(&mut self, out: &mut Frames) {
        if self.started {
            return;
        }
        self.started = true;
        if self.created == 0 {
            self.created = unix_now();
        }
        let delta = Delta {
            role: Some("assistant"),
            content: Some(JsonText::from_text("")),
            ..Delta::default()
        };
        self.write(out, delta, None, None);
    }

    fn write(
        &self,
        out: &mut Frames,
        delta: Delta<'_>,
        finish: Option<&'static str>,
        logprobs: Option<ChoiceLogprobs<'_>>,
    ) {
        let choices = [ChunkChoice {
            index: 0,
            delta,
            logprobs,
            finish_reason: finish,
        }];
        let usage = if self.ctx.include_usage {
            ChunkUsage::Null
        } else {
            ChunkUsage::Omitted
        };
        self.write_chunk(out, &choices, usage);
    }

    fn write_chunk(&self, out: &mut Frames, choices: &[ChunkChoice<'_>], usage: ChunkUsage<'_>) {
        let chunk = ChatChunk {
            id: &self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: &self.model,
            choices,
            usage,
        };
        out.event(None, |out| {
            serde_json::to_writer(out, &chunk).expect("chunks always serialize")
        });
    }

    fn text(
        &mut self,
        index: u32,
        delta: Option<&RawValue>,
        kind: TextKind,
        logprobs: Option<&RawValue>,
        out: &mut Frames,
    ) {
        let Some(text) = delta.and_then(JsonStr::new).filter(|t| !t.is_empty()) else {
            return;
        };
        self.emit_text(index, text.into(), kind, logprobs, out);
    }

    fn emit_text(
        &mut self,
        index: u32,
        text: JsonText<'_>,
        kind: TextKind,
        logprobs: Option<&RawValue>,
        out: &mut Frames,
    ) {
        self.start(out);
        if !self.streamed.contains(&index) {
            self.streamed.push(index);
        }
        let (field, text) = match kind {
            TextKind::Content => ("content", text),
            TextKind::Refusal => ("refusal", text),
            TextKind::Reasoning(part) => match self.ctx.reasoning {
                ChatReasoning::ReasoningContent => {
                    ("reasoning_content", self.separate_reasoning(index, part, text))
                }
                ChatReasoning::Reasoning => ("reasoning", self.separate_reasoning(index, part, text)),
                ChatReasoning::Omit => {
                    return self.lose_once(
                        LossKind::ReasoningSetting,
                        "reasoning",
                        "Chat Completions has no reasoning field; ask for reasoning_content to receive it",
                    )
                }
            },
        };
        let Some(logprobs) = logprobs else {
            let frame = self.frame.get_or_insert_with(|| {
                ChunkFrame::new(&self.id, self.created, &self.model, self.ctx.include_usage)
            });
            frame.write_text(out, field, text.raw());
            return;
        };
        let compacted = wirebridge_wire::compact(logprobs);
        let logprobs = ChoiceLogprobs {
            content: Some(&compacted),
            refusal: None,
        };
        let mut delta = Delta::default();
        let slot = match field {
            "content" => &mut delta.content,
            "refusal" => &mut delta.refusal,
            "reasoning_content" => &mut delta.reasoning_content,
            _ => &mut delta.reasoning,
        };
        *slot = Some(text);
        self.write(out, delta, None, Some(logprobs));
    }

    /// Starts a new reasoning part with a blank line after the previous one.
    fn separate_reasoning<'t>(
        &mut self,
        index: u32,
        part: u32,
        text: JsonText<'t>,
    ) -> JsonText<'t> {
        let previous = self.reasoning_part.replace((index, part));
        if previous.is_none_or(|p| p == (index, part)) {
            return text;
        }
        JsonText::from_escaped(&format!(r"\n\n{}", text.escaped()))
    }

    fn complete(&mut self, raw: Option<&RawValue>, out: &mut Frames) {
        self.start(out);
        let body = raw
            .and_then(|r| ResponseBody::parse(r.get().as_bytes()).ok())
            .unwrap_or_default();
        // A finished call whose arguments are no JSON object is one the
        // client could not run: the stream fails, as the body does. One the
        // backend cut short (its item, or the response) finishes for
        // `length` instead.
        if body.status.as_deref() != Some("incomplete") {
            if let Some(name) = self.unrunnable_call() {
                let message = format!(
                    "the upstream's call to '{name}' has arguments that are not a JSON object"
                );
                return self.fail_with(Failure::server(message), out);
            }
        }
        let finish = finish_reason(
            body.status.as_deref(),
            body.incomplete_details
                .as_ref()
                .and_then(|d| d.reason.as_deref()),
            !self.calls.is_empty(),
            self.calls.iter().any(|c| c.unfinished),
        );
        self.usage = body.usage.as_ref().map(usage);
        self.write(out, Delta::default(), Some(finish), None);
        if self.ctx.include_usage {
            let usage = self.usage.unwrap_or_default();
            self.write_chunk(out, &[], ChunkUsage::Usage(&usage));
        }
        out.done();
        self.finished = true;
        self.outcome = Some(finish);
    }

    /// The name of a finished function call whose arguments are no JSON
    /// object, if any.
    fn unrunnable_call(&self) -> Option<String> {
        self.calls
            .iter()
            .filter(|c| !c.custom && !c.unfinished)
            .find(|c| !arguments_are_object(&JsonText::from_escaped(c.arguments.escaped())))
            .map(|c| c.name.clone())
    }

    fn fail_with(&mut self, failure: Failure, out: &mut Frames) {
        if self.finished {
            return;
        }
        out.event(None, |out| {
            serde_json::to_writer(out, &failure.to_body()).expect("errors always serialize")
        });
        // `[DONE]` after the error too: the SDKs raise on the error chunk,
        // and a client that reads lines until `[DONE]` stops there.
        out.done();
        self.finished = true;
        self.outcome = Some("error");
    }

    fn lose_once(&mut self, kind: LossKind, path: &str, reason: &str) {
        if !self.losses.iter().any(|l| l.kind == kind && l.path == path) {
            self.losses.push(Loss {
                kind,
                path: path.to_owned(),
                reason: reason.to_owned(),
            });
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum TextKind {
    Content,
    Refusal,
    /// Reasoning of a summary or content part (its index).
    Reasoning(u32),
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
    fn summary(&self) -> crate::summary::ReplySummary {
        StreamTranslator::summary(self)
    }
    fn losses(&self) -> &LossReport {
        StreamTranslator::losses(self)
    }
}
