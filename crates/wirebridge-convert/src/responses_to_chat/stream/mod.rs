//! Chat chunk stream → Responses event stream.

use crate::frames::Frames;
use serde_json::value::RawValue;
use wirebridge_wire::chat::lenient::{ChatCompletion, Choice, ToolCall};
use wirebridge_wire::raw::{EscapedText, JsonStr, JsonText};
use wirebridge_wire::responses::strict::{
    IncompleteDetails, Response, ResponseError, ResponseStatus, Usage,
};
use wirebridge_wire::responses::strict::{ItemEvent, Lifecycle};

use super::reply::{add_usage, content_pieces, reasoning_text, usage, Piece};
use super::think::{Side, ThinkSplitter};
use super::{Finished, ResponsesContext};
use crate::ids::{unix_now, ResponseIds};
use crate::loss::{Loss, LossKind, LossReport};

mod calls;
mod chunk;
mod delta_frame;
mod emit;
mod end;
mod text;

use delta_frame::DeltaFrame;
use emit::upstream_failure;
pub(in crate::responses_to_chat) use emit::{emit, Failure};

/// Translates a Chat Completions chunk stream into a Responses event stream.
///
/// Feed it the `data` of each upstream SSE event with [`push`](Self::push),
/// and call [`finish`](Self::finish) at the end of the upstream body (or
/// [`fail`](Self::fail) if it broke off). Each call writes complete events
/// to `out`, in its framing; nothing is held back that could already be sent.
///
/// ```
/// use wirebridge_convert::responses_to_chat::{StreamTranslator, ResponsesContext};
///
/// let mut translator = StreamTranslator::new(ResponsesContext::default());
/// let mut out = wirebridge_convert::Frames::sse();
/// translator.push(r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}"#, &mut out);
/// translator.push(r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#, &mut out);
/// translator.push("[DONE]", &mut out);
/// let text = String::from_utf8(out.take().bytes).unwrap();
/// assert!(text.starts_with("event: response.created\n"));
/// assert!(text.contains("event: response.output_text.delta\n"));
/// assert!(text.trim_end().ends_with(r#""sequence_number":9}"#) || text.contains("event: response.completed\n"));
/// assert!(translator.is_finished());
/// ```
#[derive(Debug)]
pub struct StreamTranslator {
    ctx: ResponsesContext,
    ids: ResponseIds,
    response_id: String,
    model: String,
    created_at: u64,
    seq: u64,
    state: State,
    output: Vec<Box<RawValue>>,
    open: Open,
    calls: Vec<Call>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    losses: LossReport,
    think: Option<ThinkSplitter>,
    outcome: Option<ResponseStatus>,
    /// The `Response` of the terminal event, once sent.
    finished: Option<Box<RawValue>>,
    /// Why the stream failed, once it has.
    failure: Option<Failure>,
    /// Whether `model` is the upstream's rather than the request's.
    upstream_model: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Streaming,
    Finished,
}

#[derive(Debug)]
enum Open {
    Nothing,
    Reasoning(ReasoningState),
    Message(MessageState),
    Calls,
}

#[derive(Debug)]
struct ReasoningState {
    id: String,
    output_index: usize,
    text: EscapedText,
    frame: DeltaFrame,
}

#[derive(Debug)]
struct MessageState {
    id: String,
    output_index: usize,
    closed: Vec<Part>,
    current: Option<Part>,
}

#[derive(Debug)]
struct Part {
    refusal: bool,
    text: EscapedText,
    /// Log-probability entries, comma-joined, without the brackets.
    logprobs: String,
    frame: DeltaFrame,
}

#[derive(Debug)]
struct Call {
    chat_index: u32,
    call_id: Option<String>,
    name: Option<String>,
    arguments: EscapedText,
    phase: CallPhase,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum CallPhase {
    Pending,
    Live {
        item_id: String,
        output_index: usize,
    },
    Closed,
}
impl StreamTranslator {
    /// A translator for one response.
    pub fn new(ctx: ResponsesContext) -> Self {
        let think = ThinkSplitter::new(ctx.think_tags);
        let ids = ctx.ids.clone();
        Self {
            response_id: ids.response(),
            model: ctx.model.clone(),
            ctx,
            ids,
            created_at: 0,
            seq: 0,
            state: State::Waiting,
            output: Vec::new(),
            open: Open::Nothing,
            calls: Vec::new(),
            finish_reason: None,
            usage: None,
            losses: LossReport::default(),
            think,
            outcome: None,
            finished: None,
            failure: None,
            upstream_model: false,
        }
    }

    /// The id of the response being streamed.
    pub fn response_id(&self) -> &str {
        &self.response_id
    }

    /// Whether the terminal event has been written.
    pub fn is_finished(&self) -> bool {
        self.state == State::Finished
    }

    /// What the stream could not carry (extra choices).
    pub fn losses(&self) -> &LossReport {
        &self.losses
    }

    /// Usage reported by the upstream so far.
    pub fn usage(&self) -> Option<&Usage> {
        self.usage.as_ref()
    }

    /// How the reply went so far: its final status once finished, usage and
    /// tool calls.
    pub fn summary(&self) -> crate::summary::ReplySummary {
        let tool_calls = self
            .calls
            .iter()
            .filter(|c| c.name.is_some())
            .map(|c| {
                let chat_name = c.name.as_deref().unwrap_or_default();
                let origin = self.ctx.tool_names.origin(chat_name);
                crate::summary::ToolCallSummary {
                    name: origin
                        .map(|o| o.name.clone())
                        .unwrap_or_else(|| chat_name.to_owned()),
                    call_id: c.call_id.clone().unwrap_or_default(),
                    argument_bytes: c.arguments.escaped().len(),
                }
            })
            .collect();
        crate::summary::ReplySummary {
            outcome: self.outcome.map(|s| s.as_str().to_owned()),
            usage: self.usage.as_ref().map(super::reply::token_usage),
            tool_calls,
        }
    }

    /// The final status, once the terminal event is written.
    pub fn status(&self) -> Option<ResponseStatus> {
        self.outcome
    }

    /// The finished `Response`, as the terminal event carried it
    /// (`response.completed`, `response.incomplete` or `response.failed`).
    pub fn finished_response(&self) -> Option<&RawValue> {
        self.finished.as_deref()
    }

    /// The finished response as a store keeps it, once the terminal event
    /// is written.
    pub fn finished(&self) -> Option<Finished<'_>> {
        Some(Finished {
            id: &self.response_id,
            created_at: self.created_at,
            status: self.outcome?,
            output: &self.output,
            response: self.finished.as_deref()?.get(),
        })
    }

    /// Why the stream failed, once it has.
    pub(in crate::responses_to_chat) fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// The upstream's `finish_reason`, once it has arrived.
    pub fn finish_reason(&self) -> Option<&str> {
        self.finish_reason.as_deref()
    }

    /// Feeds the `data` of one upstream SSE event.
    pub fn push(&mut self, data: &str, out: &mut Frames) {
        if self.state == State::Finished {
            return;
        }
        if data.trim() == "[DONE]" {
            self.complete(out);
            return;
        }
        if let Some(chunk) = chunk::read_chunk(data) {
            self.start(chunk.model, chunk.created, out);
            if let Some(choice) = &chunk.choice {
                self.choose(choice, out);
            }
            return;
        }
        // Chunks of other shapes (tool calls, usage, several choices) go to
        // the completion reader: 435 ns against serde's 790 for a tool
        // call's fragment, 264 against 476 for a usage chunk. On the common
        // shape it is the slower (498 against 436 ns a chunk translated),
        // so `read_chunk` stays first. What both leave, serde reads or
        // names the error of.
        let read = ChatCompletion::read(data.as_bytes()).map(Ok);
        let chunk: ChatCompletion<'_> = match read.unwrap_or_else(|| serde_json::from_str(data)) {
            Ok(chunk) => chunk,
            Err(e) => {
                let failure = Failure::server(format!(
                    "the upstream sent a chunk that is not valid JSON: {e}"
                ));
                self.fail_with(failure, out);
                return;
            }
        };
        self.start(chunk.model.as_deref(), chunk.created, out);
        // Usage first: an error chunk may say what the failed reply cost.
        if let Some(u) = &chunk.usage {
            self.usage = Some(add_usage(usage(u), self.ctx.prior_usage));
        }
        if let Some(raw) = chunk.error {
            self.fail_with(upstream_failure(raw), out);
            return;
        }
        for choice in chunk.choices.iter().flatten() {
            if !self.choose(choice, out) {
                return;
            }
        }
    }

    /// Translates a choice of the reply, or notes one that is not; returns
    /// whether the stream goes on.
    fn choose(&mut self, choice: &Choice<'_>, out: &mut Frames) -> bool {
        if choice.index.unwrap_or(0) != 0 {
            self.note_extra_choice();
            return true;
        }
        match self.choice(choice, out) {
            Ok(()) => true,
            Err(failure) => {
                self.fail_with(failure, out);
                false
            }
        }
    }

    /// Ends the stream at the end of the upstream body. A stream that ended
    /// without a `finish_reason` or `[DONE]` was cut off: it fails.
    pub fn finish(&mut self, out: &mut Frames) {
        match self.state {
            State::Finished => {}
            _ if self.finish_reason.is_some() => self.complete(out),
            _ => self.fail_with(
                Failure::server("the upstream stream ended before the response was complete"),
                out,
            ),
        }
    }

    /// Ends the stream because the upstream failed (a transport error, an
    /// error status after the headers, a decoding error).
    pub fn fail(&mut self, message: &str, out: &mut Frames) {
        self.fail_with(Failure::server(message), out);
    }

    /// Starts the response on the first chunk, from its `model` and
    /// `created`.
    fn start(&mut self, model: Option<&str>, created: Option<u64>, out: &mut Frames) {
        // Some servers (Azure) open with a chunk that names no model: the
        // first one that does names the response's.
        if !self.upstream_model {
            if let Some(model) = model.filter(|m| !m.is_empty()) {
                model.clone_into(&mut self.model);
                self.upstream_model = true;
            }
        }
        if self.state != State::Waiting {
            return;
        }
        self.created_at = created.filter(|c| *c > 0).unwrap_or_else(unix_now);
        self.begin(out);
    }

    fn begin(&mut self, out: &mut Frames) {
        if self.created_at == 0 {
            self.created_at = unix_now();
        }
        self.state = State::Streaming;
        for kind in ["response.created", "response.in_progress"] {
            let mut seq = self.seq;
            let response = self.response(ResponseStatus::InProgress, None, None);
            emit(out, &mut seq, kind, Lifecycle { response });
            self.seq = seq;
        }
        // Items finished before the reply began (a compaction) come first.
        for item in std::mem::take(&mut self.ctx.leading) {
            let output_index = self.output.len();
            for kind in ["response.output_item.added", "response.output_item.done"] {
                let item = &*item;
                emit(out, &mut self.seq, kind, ItemEvent { output_index, item });
            }
            self.output.push(item);
        }
    }

    fn response<'s>(
        &'s self,
        status: ResponseStatus,
        error: Option<ResponseError<'s>>,
        incomplete: Option<IncompleteDetails>,
    ) -> Response<'s> {
        Response {
            id: &self.response_id,
            object: "response",
            created_at: self.created_at,
            status,
            completed_at: (status == ResponseStatus::Completed).then(unix_now),
            error,
            incomplete_details: incomplete,
            model: &self.model,
            output: &self.output,
            usage: self.usage.as_ref(),
            echo: &self.ctx.echo,
        }
    }

    fn note_extra_choice(&mut self) {
        if !self.losses.iter().any(|l| l.kind == LossKind::ExtraChoices) {
            self.losses.push(Loss {
                kind: LossKind::ExtraChoices,
                path: "choices[1..]".into(),
                reason: "a Response holds one answer; only choice 0 is translated".into(),
            });
        }
    }

    fn choice(&mut self, choice: &Choice<'_>, out: &mut Frames) -> Result<(), Failure> {
        if let Some(delta) = &choice.delta {
            if let Some(text) = reasoning_text(delta).filter(|t| !t.is_empty()) {
                self.reasoning(text.into(), out);
            }
            if let Some(raw) = delta.content {
                let logprobs = choice.logprobs.as_ref().and_then(|l| l.content);
                match JsonStr::new(raw) {
                    Some(text) => self.content(text, logprobs, out),
                    // A part array (Mistral): thinking parts are reasoning.
                    None => {
                        let pieces = content_pieces(raw).ok_or_else(|| {
                            Failure::server("delta.content is neither a string nor a part array")
                        })?;
                        for (piece, text) in pieces {
                            match piece {
                                Piece::Thinking if !text.is_empty() => {
                                    self.reasoning(text.into(), out)
                                }
                                Piece::Thinking => {}
                                Piece::Text => self.content(text, logprobs, out),
                            }
                        }
                    }
                }
            }
            let refusal = delta.refusal.filter(|r| !r.is_empty());
            let calls = delta.tool_calls.iter().flatten().next().is_some();
            if refusal.is_some() || calls || delta.function_call.is_some() {
                // Content held back in case it opened a tag comes before
                // what follows it.
                self.flush_think(out);
            }
            if let Some(refusal) = refusal {
                let logprobs = choice.logprobs.as_ref().and_then(|l| l.refusal);
                self.text(refusal.into(), true, logprobs, out);
            }
            for fragment in delta.tool_calls.iter().flatten() {
                self.tool_fragment(fragment, out)?;
            }
            if let Some(function) = &delta.function_call {
                let legacy = ToolCall {
                    index: Some(0),
                    function: Some(wirebridge_wire::chat::lenient::FunctionCall {
                        name: function.name.clone(),
                        arguments: function.arguments,
                    }),
                    ..ToolCall::default()
                };
                self.tool_fragment(&legacy, out)?;
            }
        }
        if let Some(reason) = choice.finish_reason.as_deref().filter(|r| !r.is_empty()) {
            // The first finish_reason ends the choice, and the items it
            // closes take their status from it: a second one (a backend
            // repeating or contradicting itself) must not change the
            // response's status after them.
            if self.finish_reason.is_none() {
                self.finish_reason = Some(reason.to_owned());
            }
            self.flush_think(out);
            self.close_all(out)?;
        }
        Ok(())
    }

    /// Answer text, through the reasoning splitter when the profile has one
    /// and it may still find a tag.
    fn content(&mut self, text: JsonStr<'_>, logprobs: Option<&RawValue>, out: &mut Frames) {
        if text.is_empty() {
            return;
        }
        match &mut self.think {
            // Past a leading block (or sure there is none), content goes out
            // as it came, with its log probabilities and without decoding.
            Some(splitter) if !splitter.settled() => {
                let decoded = text.decode();
                if splitter.passes_whole(&decoded) {
                    self.text(text.into(), false, logprobs, out);
                } else {
                    self.split_think(&decoded, out);
                }
            }
            _ => self.text(text.into(), false, logprobs, out),
        }
    }

    /// Routes content through the reasoning splitter (profile `think_tags`).
    fn split_think(&mut self, text: &str, out: &mut Frames) {
        let Some(mut splitter) = self.think.take() else {
            return;
        };
        let mut pieces = Vec::new();
        splitter.push(text, &mut |side, piece| {
            pieces.push((side, piece.to_owned()))
        });
        self.think = Some(splitter);
        self.emit_pieces(pieces, out);
    }

    fn flush_think(&mut self, out: &mut Frames) {
        let Some(mut splitter) = self.think.take() else {
            return;
        };
        let mut pieces = Vec::new();
        splitter.finish(&mut |side, piece| pieces.push((side, piece.to_owned())));
        self.think = Some(splitter);
        self.emit_pieces(pieces, out);
    }

    fn emit_pieces(&mut self, pieces: Vec<(Side, String)>, out: &mut Frames) {
        for (side, piece) in pieces {
            let text = JsonText::from_text(&piece);
            match side {
                Side::Reasoning => self.reasoning(text, out),
                Side::Content => self.text(text, false, None, out),
            }
        }
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
    fn summary(&self) -> crate::summary::ReplySummary {
        StreamTranslator::summary(self)
    }
    fn losses(&self) -> &LossReport {
        StreamTranslator::losses(self)
    }
}
