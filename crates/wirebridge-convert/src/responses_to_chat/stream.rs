//! Chat chunk stream → Responses event stream.

use serde::Serialize;
use serde_json::value::RawValue;
use wirebridge_wire::chat::completion::{ChatCompletion, Choice, ToolCall};
use wirebridge_wire::error::UpstreamError;
use wirebridge_wire::raw::{EscapedText, JsonStr, JsonText};
use wirebridge_wire::responses::event::{
    ArgumentsEvent, ContentPartEvent, CustomInputEvent, ErrorEvent, ErrorPayload, Event, ItemEvent,
    Lifecycle, OutputTextEvent, ReasoningTextEvent, RefusalEvent, SummaryPartEvent,
    SummaryTextEvent,
};
use wirebridge_wire::responses::response::{
    CustomToolCall, FunctionCall, IncompleteDetails, ItemStatus, OutputContent, OutputItem,
    OutputMessage, ReasoningItem, ReasoningPart, Response, ResponseError, ResponseStatus, Usage,
};

use super::reply::{custom_input, reasoning_text, status_for, usage};
use super::{ReasoningOutput, ResponsesContext};
use crate::ids::{unix_now, ResponseIds};
use crate::loss::{Loss, LossKind, LossReport};

/// Translates a Chat Completions chunk stream into a Responses event stream.
///
/// Feed it the `data` of each upstream SSE event with [`push`](Self::push),
/// and call [`finish`](Self::finish) at the end of the upstream body (or
/// [`fail`](Self::fail) if it broke off). Each call appends complete SSE
/// frames to `out`; nothing is held back that could already be sent.
///
/// ```
/// use wirebridge_convert::responses_to_chat::{StreamTranslator, ResponsesContext};
///
/// let mut translator = StreamTranslator::new(ResponsesContext::default());
/// let mut out = Vec::new();
/// translator.push(r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}"#, &mut out);
/// translator.push(r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#, &mut out);
/// translator.push("[DONE]", &mut out);
/// let text = String::from_utf8(out).unwrap();
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

/// Why a stream ends in failure.
#[derive(Debug)]
struct Failure {
    error_type: String,
    code: Option<String>,
    message: String,
    param: Option<String>,
}

impl Failure {
    fn server(message: impl Into<String>) -> Self {
        Failure {
            error_type: "server_error".into(),
            code: Some("server_error".into()),
            message: message.into(),
            param: None,
        }
    }
}

/// `Response.error.code` must be one of the spec's codes; anything else an
/// upstream says is carried in the `error` event, which allows any code.
const RESPONSE_ERROR_CODES: [&str; 5] = [
    "server_error",
    "rate_limit_exceeded",
    "invalid_prompt",
    "vector_store_timeout",
    "invalid_image",
];

fn emit<B: Serialize>(out: &mut Vec<u8>, seq: &mut u64, kind: &'static str, body: B) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    let event = Event {
        kind,
        sequence_number: *seq,
        body,
    };
    serde_json::to_writer(&mut *out, &event).expect("events always serialize");
    out.extend_from_slice(b"\n\n");
    *seq += 1;
}

fn to_raw(item: &OutputItem<'_>) -> Box<RawValue> {
    serde_json::value::to_raw_value(item).expect("items always serialize")
}

fn empty_array() -> &'static RawValue {
    serde_json::from_str("[]").expect("constant")
}

impl StreamTranslator {
    /// A translator for one response.
    pub fn new(ctx: ResponsesContext) -> Self {
        let ids = ResponseIds::new();
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

    /// The upstream's `finish_reason`, once it has arrived.
    pub fn finish_reason(&self) -> Option<&str> {
        self.finish_reason.as_deref()
    }

    /// Feeds the `data` of one upstream SSE event.
    pub fn push(&mut self, data: &str, out: &mut Vec<u8>) {
        if self.state == State::Finished {
            return;
        }
        if data.trim() == "[DONE]" {
            self.complete(out);
            return;
        }
        let chunk: ChatCompletion<'_> = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(e) => {
                let failure = Failure::server(format!(
                    "the upstream sent a chunk that is not valid JSON: {e}"
                ));
                self.fail_with(failure, out);
                return;
            }
        };
        self.start(&chunk, out);
        if let Some(raw) = chunk.error {
            self.fail_with(upstream_failure(raw), out);
            return;
        }
        if let Some(u) = &chunk.usage {
            self.usage = Some(usage(u));
        }
        for choice in chunk.choices.iter().flatten() {
            if choice.index.unwrap_or(0) != 0 {
                self.note_extra_choice(choice);
                continue;
            }
            if let Err(failure) = self.choice(choice, out) {
                self.fail_with(failure, out);
                return;
            }
        }
    }

    /// Ends the stream at the end of the upstream body. A stream that ended
    /// without a `finish_reason` or `[DONE]` was cut off: it fails.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
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
    pub fn fail(&mut self, message: &str, out: &mut Vec<u8>) {
        self.fail_with(Failure::server(message), out);
    }

    fn start(&mut self, chunk: &ChatCompletion<'_>, out: &mut Vec<u8>) {
        if self.state != State::Waiting {
            return;
        }
        if let Some(model) = chunk.model.as_deref().filter(|m| !m.is_empty()) {
            self.model = model.to_owned();
        }
        self.created_at = chunk.created.filter(|c| *c > 0).unwrap_or_else(unix_now);
        self.begin(out);
    }

    fn begin(&mut self, out: &mut Vec<u8>) {
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

    fn note_extra_choice(&mut self, choice: &Choice<'_>) {
        let index = choice.index.unwrap_or(0);
        if !self.losses.iter().any(|l| l.kind == LossKind::ExtraChoices) {
            self.losses.push(Loss {
                kind: LossKind::ExtraChoices,
                path: format!("choices[{index}]"),
                reason: "a Response holds one answer; only choice 0 is streamed".into(),
            });
        }
    }

    fn choice(&mut self, choice: &Choice<'_>, out: &mut Vec<u8>) -> Result<(), Failure> {
        if let Some(delta) = &choice.delta {
            if let Some(text) = reasoning_text(delta).filter(|t| !t.is_empty()) {
                self.reasoning(text, out);
            }
            if let Some(raw) = delta.content {
                let text = JsonStr::new(raw)
                    .ok_or_else(|| Failure::server("delta.content is not a string"))?;
                if !text.is_empty() {
                    let logprobs = choice.logprobs.as_ref().and_then(|l| l.content);
                    self.text(text, false, logprobs, out);
                }
            }
            if let Some(refusal) = delta.refusal.filter(|r| !r.is_empty()) {
                let logprobs = choice.logprobs.as_ref().and_then(|l| l.refusal);
                self.text(refusal, true, logprobs, out);
            }
            for fragment in delta.tool_calls.iter().flatten() {
                self.tool_fragment(fragment, out)?;
            }
            if let Some(function) = &delta.function_call {
                let legacy = ToolCall {
                    index: Some(0),
                    function: Some(wirebridge_wire::chat::completion::FunctionCall {
                        name: function.name.clone(),
                        arguments: function.arguments,
                    }),
                    ..ToolCall::default()
                };
                self.tool_fragment(&legacy, out)?;
            }
        }
        if let Some(reason) = choice.finish_reason.as_deref().filter(|r| !r.is_empty()) {
            self.finish_reason = Some(reason.to_owned());
            self.close_all(out)?;
        }
        Ok(())
    }

    fn reasoning(&mut self, text: JsonStr<'_>, out: &mut Vec<u8>) {
        let summary = self.ctx.reasoning_output == ReasoningOutput::Summary;
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
            });
            emit(
                out,
                &mut self.seq,
                "response.output_item.added",
                ItemEvent { output_index, item },
            );
            if summary {
                let part = ReasoningPart {
                    part_type: "summary_text",
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
            self.open = Open::Reasoning(ReasoningState {
                id,
                output_index,
                text: EscapedText::new(),
            });
        }
        let Open::Reasoning(state) = &mut self.open else {
            unreachable!("opened above")
        };
        state.text.push(text);
        let (item_id, output_index) = (state.id.as_str(), state.output_index);
        let delta = Some(JsonText::from(text));
        if summary {
            let body = SummaryTextEvent {
                item_id,
                output_index,
                summary_index: 0,
                delta,
                text: None,
            };
            emit(
                out,
                &mut self.seq,
                "response.reasoning_summary_text.delta",
                body,
            );
        } else {
            let body = ReasoningTextEvent {
                item_id,
                output_index,
                content_index: 0,
                delta,
                text: None,
            };
            emit(out, &mut self.seq, "response.reasoning_text.delta", body);
        }
    }

    fn text(
        &mut self,
        text: JsonStr<'_>,
        refusal: bool,
        logprobs: Option<&RawValue>,
        out: &mut Vec<u8>,
    ) {
        if !matches!(self.open, Open::Message(_)) {
            if self.close_open(out).is_err() {
                return;
            }
            let output_index = self.output.len();
            let id = self.ids.item("msg", output_index);
            let item = OutputItem::Message(OutputMessage {
                id: &id,
                status: ItemStatus::InProgress,
                role: "assistant",
                content: Vec::new(),
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
                OutputContent::Refusal { refusal: empty }
            } else {
                OutputContent::OutputText {
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
            state.current = Some(Part {
                refusal,
                text: EscapedText::new(),
                logprobs: String::new(),
            });
        }
        let part = state.current.as_mut().expect("opened above");
        part.text.push(text);
        let delta = Some(JsonText::from(text));
        if refusal {
            let body = RefusalEvent {
                item_id,
                output_index,
                content_index,
                delta,
                refusal: None,
            };
            emit(out, &mut self.seq, "response.refusal.delta", body);
        } else {
            let logprobs = logprobs
                .filter(|l| l.get().starts_with('['))
                .unwrap_or(empty_array());
            append_logprobs(&mut part.logprobs, logprobs);
            let body = OutputTextEvent {
                item_id,
                output_index,
                content_index,
                delta,
                text: None,
                logprobs,
            };
            emit(out, &mut self.seq, "response.output_text.delta", body);
        }
    }

    fn tool_fragment(&mut self, fragment: &ToolCall<'_>, out: &mut Vec<u8>) -> Result<(), Failure> {
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
                    let body = ArgumentsEvent {
                        item_id,
                        output_index: *output_index,
                        delta: Some(delta),
                        name: None,
                        arguments: None,
                    };
                    emit(
                        out,
                        &mut self.seq,
                        "response.function_call_arguments.delta",
                        body,
                    );
                }
            }
            CallPhase::Pending => self.try_go_live(slot, out)?,
            CallPhase::Closed => {}
        }
        Ok(())
    }

    /// Opens a pending call as a live item if it is the next call in order,
    /// is a plain function, has its name, and no other call is live.
    fn try_go_live(&mut self, slot: usize, out: &mut Vec<u8>) -> Result<(), Failure> {
        let earlier_pending = self.calls[..slot]
            .iter()
            .any(|c| c.phase == CallPhase::Pending);
        let Some(name) = self.calls[slot].name.clone() else {
            return Ok(());
        };
        let custom = self.ctx.tool_names.origin(&name).is_some_and(|o| o.custom);
        if earlier_pending || custom || matches!(self.open, Open::Calls) {
            return Ok(());
        }
        self.close_open(out)?;
        self.open_call(slot, out);
        let call = &self.calls[slot];
        if let (
            CallPhase::Live {
                item_id,
                output_index,
            },
            false,
        ) = (&call.phase, call.arguments.is_empty())
        {
            let delta = Some(JsonText::from_escaped(call.arguments.escaped()));
            let body = ArgumentsEvent {
                item_id,
                output_index: *output_index,
                delta,
                name: None,
                arguments: None,
            };
            emit(
                out,
                &mut self.seq,
                "response.function_call_arguments.delta",
                body,
            );
        }
        self.open = Open::Calls;
        Ok(())
    }

    fn open_call(&mut self, slot: usize, out: &mut Vec<u8>) {
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
        let item_id = if origin.is_some_and(|o| o.custom) {
            let id = self.ids.item("ctc", output_index);
            let item = OutputItem::CustomToolCall(CustomToolCall {
                id: &id,
                status: ItemStatus::InProgress,
                name,
                namespace,
                call_id,
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
                id: &id,
                status: ItemStatus::InProgress,
                name,
                namespace,
                call_id,
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

    fn close_call(&mut self, slot: usize, out: &mut Vec<u8>) {
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
        let item = if origin.is_some_and(|o| o.custom) {
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
                id: &item_id,
                status: ItemStatus::Completed,
                name,
                namespace,
                call_id,
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
                id: &item_id,
                status: ItemStatus::Completed,
                name,
                namespace,
                call_id,
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

    /// Closes the open item. A live tool call closes together with every
    /// buffered call, since tool calls end a turn.
    fn close_open(&mut self, out: &mut Vec<u8>) -> Result<(), Failure> {
        match std::mem::replace(&mut self.open, Open::Nothing) {
            Open::Nothing => Ok(()),
            Open::Reasoning(state) => {
                self.close_reasoning(state, out);
                Ok(())
            }
            Open::Message(state) => {
                self.close_message(state, out);
                Ok(())
            }
            Open::Calls => self.close_calls(out),
        }
    }

    fn close_all(&mut self, out: &mut Vec<u8>) -> Result<(), Failure> {
        self.close_open(out)?;
        self.close_calls(out)
    }

    fn close_calls(&mut self, out: &mut Vec<u8>) -> Result<(), Failure> {
        for slot in 0..self.calls.len() {
            if self.calls[slot].phase == CallPhase::Pending {
                if self.calls[slot].name.is_none() {
                    let index = self.calls[slot].chat_index;
                    return Err(Failure::server(format!(
                        "the upstream's tool call {index} never received a function name"
                    )));
                }
                self.open_call(slot, out);
                let call = &self.calls[slot];
                let custom = call
                    .name
                    .as_deref()
                    .and_then(|n| self.ctx.tool_names.origin(n))
                    .is_some_and(|o| o.custom);
                if let (
                    CallPhase::Live {
                        item_id,
                        output_index,
                    },
                    false,
                    false,
                ) = (&call.phase, call.arguments.is_empty(), custom)
                {
                    let delta = Some(JsonText::from_escaped(call.arguments.escaped()));
                    let body = ArgumentsEvent {
                        item_id,
                        output_index: *output_index,
                        delta,
                        name: None,
                        arguments: None,
                    };
                    emit(
                        out,
                        &mut self.seq,
                        "response.function_call_arguments.delta",
                        body,
                    );
                }
            }
            self.close_call(slot, out);
        }
        Ok(())
    }

    fn close_reasoning(&mut self, mut state: ReasoningState, out: &mut Vec<u8>) {
        let (item_id, output_index) = (state.id.as_str(), state.output_index);
        let text = JsonText::from(state.text.literal());
        let summary = self.ctx.reasoning_output == ReasoningOutput::Summary;
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
                part_type: "summary_text",
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
            part_type,
            text: text.clone(),
        };
        let (summary_parts, content) = if summary {
            (vec![part("summary_text")], None)
        } else {
            (Vec::new(), Some(vec![part("reasoning_text")]))
        };
        let item = OutputItem::Reasoning(ReasoningItem {
            id: item_id,
            status: ItemStatus::Completed,
            summary: summary_parts,
            content,
        });
        self.output.push(to_raw(&item));
        emit(
            out,
            &mut self.seq,
            "response.output_item.done",
            ItemEvent { output_index, item },
        );
    }

    fn close_message(&mut self, mut state: MessageState, out: &mut Vec<u8>) {
        close_part(&mut state, &mut self.seq, out);
        let (status, _) = status_for(self.finish_reason.as_deref());
        let item_status = if status == ResponseStatus::Incomplete {
            ItemStatus::Incomplete
        } else {
            ItemStatus::Completed
        };
        let logprobs: Vec<Box<RawValue>> = state
            .closed
            .iter()
            .map(|p| logprobs_array(&p.logprobs))
            .collect();
        let mut content = Vec::with_capacity(state.closed.len());
        for (part, logprobs) in state.closed.iter_mut().zip(&logprobs) {
            let text = JsonText::from(part.text.literal());
            content.push(if part.refusal {
                OutputContent::Refusal { refusal: text }
            } else {
                OutputContent::OutputText {
                    text,
                    annotations: empty_array(),
                    logprobs,
                }
            });
        }
        let item = OutputItem::Message(OutputMessage {
            id: &state.id,
            status: item_status,
            role: "assistant",
            content,
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

    fn complete(&mut self, out: &mut Vec<u8>) {
        if self.state == State::Waiting {
            self.begin(out);
        }
        if let Err(failure) = self.close_all(out) {
            self.fail_with(failure, out);
            return;
        }
        let (status, incomplete) = status_for(self.finish_reason.as_deref());
        let kind = match status {
            ResponseStatus::Incomplete => "response.incomplete",
            _ => "response.completed",
        };
        let mut seq = self.seq;
        let response = self.response(status, None, incomplete);
        emit(out, &mut seq, kind, Lifecycle { response });
        self.seq = seq;
        self.state = State::Finished;
    }

    fn fail_with(&mut self, failure: Failure, out: &mut Vec<u8>) {
        if self.state == State::Finished {
            return;
        }
        if self.state == State::Waiting {
            self.begin(out);
        }
        let code = failure.code.as_deref();
        let body = ErrorEvent {
            code,
            message: &failure.message,
            param: failure.param.as_deref(),
            error: ErrorPayload {
                error_type: &failure.error_type,
                code,
                message: &failure.message,
                param: failure.param.as_deref(),
            },
        };
        emit(out, &mut self.seq, "error", body);
        let response_code = code
            .filter(|c| RESPONSE_ERROR_CODES.contains(c))
            .unwrap_or("server_error");
        let error = ResponseError {
            code: response_code,
            message: &failure.message,
        };
        // Items still open stay out of `output`: only finished items are listed.
        let output: Vec<Box<RawValue>> = self
            .output
            .iter()
            .filter(|i| i.get() != "null")
            .cloned()
            .collect();
        let mut seq = self.seq;
        let mut response = self.response(ResponseStatus::Failed, Some(error), None);
        response.output = &output;
        emit(out, &mut seq, "response.failed", Lifecycle { response });
        self.seq = seq;
        self.state = State::Finished;
    }
}

fn close_part(state: &mut MessageState, seq: &mut u64, out: &mut Vec<u8>) {
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
        OutputContent::Refusal { refusal: text }
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
        OutputContent::OutputText {
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

fn upstream_failure(raw: &RawValue) -> Failure {
    match UpstreamError::parse(raw) {
        Some(err) => Failure {
            error_type: err
                .error_type
                .as_deref()
                .unwrap_or("server_error")
                .to_owned(),
            code: err.code_text().map(|c| c.into_owned()),
            message: err
                .message
                .as_deref()
                .unwrap_or("the upstream reported an error")
                .to_owned(),
            param: err.param.as_deref().map(str::to_owned),
        },
        None => Failure::server(format!("the upstream reported an error: {}", raw.get())),
    }
}
