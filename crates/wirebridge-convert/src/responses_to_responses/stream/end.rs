//! How a re-sent stream ends: every announced item closed, then exactly one
//! terminal event, the backend's outcome in the bridge's `Response`.

use crate::frames::Frames;
use serde_json::value::RawValue;
use wirebridge_wire::error::UpstreamError;
use wirebridge_wire::responses::lenient::{self, ResponseShell};
use wirebridge_wire::responses::strict::{
    ErrorEvent, ErrorPayload, IncompleteDetails, IncompleteReason, InputTokensDetails,
    OutputTokensDetails, ResponseError, ResponseStatus, Usage,
};
use wirebridge_wire::RawObject;

use super::{items, State, StreamTranslator};
use crate::responses_to_chat::add_usage;

/// `Response.error.code` must be one of the spec's codes; any other code
/// the backend gives is carried by the `error` event, which allows any.
const RESPONSE_ERROR_CODES: [&str; 5] = [
    "server_error",
    "rate_limit_exceeded",
    "invalid_prompt",
    "vector_store_timeout",
    "invalid_image",
];

/// Why a stream ends in failure.
#[derive(Debug, Clone)]
pub(in crate::responses_to_responses) struct Failure {
    pub(in crate::responses_to_responses) error_type: String,
    pub(in crate::responses_to_responses) code: Option<String>,
    pub(in crate::responses_to_responses) message: String,
    param: Option<String>,
}

impl Failure {
    pub(in crate::responses_to_responses) fn server(message: impl Into<String>) -> Self {
        Self {
            error_type: "server_error".into(),
            code: Some("server_error".into()),
            message: message.into(),
            param: None,
        }
    }

    /// The code a `Response.error` may carry: this failure's when the spec
    /// allows it, else `server_error`.
    pub(in crate::responses_to_responses) fn response_code(&self) -> &str {
        self.code
            .as_deref()
            .filter(|c| RESPONSE_ERROR_CODES.contains(c))
            .unwrap_or("server_error")
    }

    /// The failure an upstream error object (nested or flat) describes.
    pub(in crate::responses_to_responses) fn upstream(raw: &RawValue) -> Self {
        let Some(error) = UpstreamError::parse(raw) else {
            return Self::server(format!("the upstream reported an error: {raw}"));
        };
        let kind = error.kind.as_deref().filter(|k| *k != "error");
        Self {
            error_type: kind.unwrap_or("server_error").to_owned(),
            code: error.code_text().map(|c| c.into_owned()),
            message: error
                .message
                .as_deref()
                .unwrap_or("the upstream reported an error")
                .to_owned(),
            param: error.param.as_deref().map(str::to_owned),
        }
    }
}

impl StreamTranslator {
    /// The backend's terminal event: items it lists but never streamed are
    /// sent, then the bridge's terminal event with its outcome and usage.
    pub(super) fn terminal(
        &mut self,
        kind: &str,
        response: Result<Option<ResponseShell<'_>>, String>,
        out: &mut Frames,
    ) -> Result<(), String> {
        let body = response
            .map_err(|e| format!("the upstream's {kind} does not hold a response: {e}"))?
            .ok_or_else(|| format!("the upstream sent {kind} without a response"))?;
        if let Some(model) = body.model.as_deref().filter(|m| !m.is_empty()) {
            self.model = model.to_owned();
        }
        if let Some(u) = body.usage {
            self.usage = Some(add_usage(usage(&u), self.ctx.prior_usage));
        }
        let listed = body.output.as_deref().unwrap_or_default();
        // Items still held back behind one the backend never finished
        // are sent first, each in its turn.
        let settled = match kind {
            "response.completed" => ResponseStatus::Completed,
            _ => ResponseStatus::Incomplete,
        };
        self.settle_held(listed, settled, out)?;
        self.take_listed(listed, out)?;
        let status = match kind {
            "response.completed" => ResponseStatus::Completed,
            "response.incomplete" => ResponseStatus::Incomplete,
            _ => {
                // The `error` event that came first says more (its type and
                // param) than the response's error, whose code is limited.
                let failure = match (self.failure.take(), body.error) {
                    (Some(failure), _) => failure,
                    (None, Some(error)) if error.get() != "null" => Failure::upstream(error),
                    _ => Failure::server("the upstream reported the response failed"),
                };
                self.fail_with(failure, out);
                return Ok(());
            }
        };
        self.close_unfinished(status, out);
        let incomplete = (status == ResponseStatus::Incomplete).then(|| IncompleteDetails {
            reason: match body.incomplete_details.and_then(|d| d.reason) {
                Some(reason) if reason.as_ref() == "content_filter" => {
                    IncompleteReason::ContentFilter
                }
                _ => IncompleteReason::MaxOutputTokens,
            },
        });
        let response = self.response(status, None, incomplete, &self.output);
        let kind = match status {
            ResponseStatus::Incomplete => "response.incomplete",
            _ => "response.completed",
        };
        self.send_lifecycle(kind, &response, out);
        self.finished = Some(response);
        self.outcome = Some(status);
        self.state = State::Finished;
        Ok(())
    }

    /// Items in the backend's final response that were never finished in
    /// its stream: finished now, as it lists them.
    fn take_listed(&mut self, listed: &[&RawValue], out: &mut Frames) -> Result<(), String> {
        let first = self.leading;
        for (n, &item) in listed.iter().enumerate() {
            let fields = RawObject::parse(item).map_err(|_| {
                format!("the upstream sent an output item that is not an object: {item}")
            })?;
            // By id; else by position, for a backend whose ids change
            // between events.
            let known = self
                .find(fields.str("id"), Some(n as u64))
                .or_else(|| (first + n < self.slots.len()).then_some(first + n));
            let slot = match known {
                Some(slot) if self.slots[slot].done => continue,
                Some(slot) => slot,
                None => self.announce(item, out)?,
            };
            self.stream_unstreamed(slot, item, out)?;
            self.close_parts(slot, out);
            let done = items::rewrite(item, &self.ctx, slot, true)?;
            self.finish_item(slot, done, out);
        }
        Ok(())
    }

    /// The backend's `error` event: remembered, and sent on in the shape
    /// both specs read when the stream ends, which it does with the next
    /// event. The grammar has `error` followed at once by `response.failed`,
    /// and the items still open must be closed before either: sending it
    /// now would put their closing events between the two.
    pub(super) fn upstream_error(&mut self, event: &str) {
        // An event read as an object is JSON: the raw value is made only
        // here, on the rare event that fails a stream.
        self.failure = Some(match serde_json::from_str::<&RawValue>(event) {
            Ok(raw) => Failure::upstream(raw),
            Err(_) => Failure::server(format!("the upstream reported an error: {event}")),
        });
    }

    fn send_error(&mut self, failure: &Failure, out: &mut Frames) {
        let code = failure.code.as_deref();
        let event = ErrorEvent {
            code,
            message: &failure.message,
            param: failure.param.as_deref(),
            error: ErrorPayload {
                kind: &failure.error_type,
                code,
                message: &failure.message,
                param: failure.param.as_deref(),
            },
        };
        let raw = serde_json::value::to_raw_value(&event).expect("error events serialize");
        let fields = RawObject::parse(&raw).expect("an error event is an object");
        self.send("error", fields, out);
    }

    /// Ends the stream in failure, keeping what the client was sent: open
    /// items are closed as `incomplete` with what arrived of them.
    pub(in crate::responses_to_responses) fn fail_with(
        &mut self,
        failure: Failure,
        out: &mut Frames,
    ) {
        if self.state == State::Finished {
            return;
        }
        self.begin(out);
        self.drop_held();
        self.close_unfinished(ResponseStatus::Incomplete, out);
        self.send_error(&failure, out);
        let error = ResponseError {
            code: failure.response_code(),
            message: &failure.message,
        };
        let response = self.response(ResponseStatus::Failed, Some(error), None, &self.output);
        self.send_lifecycle("response.failed", &response, out);
        self.finished = Some(response);
        self.failure = Some(failure);
        self.outcome = Some(ResponseStatus::Failed);
        self.state = State::Finished;
    }

    /// Closes the content part (or summary part) an item has open, with
    /// the text that arrived (its `output_text.done`, unless the backend
    /// sent that already).
    pub(super) fn close_parts(&mut self, slot: usize, out: &mut Frames) {
        self.close_summary(slot, out);
        self.close_native_summary(slot, out);
        if !self.slots[slot].part_open {
            return;
        }
        self.slots[slot].part_open = false;
        let text = serde_json::to_string(&self.slots[slot].text).expect("strings serialize");
        let mut event = self.place(slot);
        let index = self.slots[slot].parts_done.len().to_string();
        event.set("content_index", &index);
        if !std::mem::take(&mut self.slots[slot].text_done) {
            let mut done = event.clone();
            let kind = self.slots[slot].part_kind;
            done.set(kind.field(), &text);
            if kind == PartKind::OutputText {
                done.set("logprobs", "[]");
            }
            self.send(kind.done_event(), done, out);
        }
        let part = self.slots[slot].text_part();
        event.set("part", &part);
        self.slots[slot].parts_done.push(part);
        self.send("response.content_part.done", event, out);
    }

    /// Ends a call's arguments (or a custom call's input) that the backend
    /// never said were done, with what arrived of them.
    fn close_arguments(&mut self, slot: usize, out: &mut Frames) {
        let state = &mut self.slots[slot];
        let (kind, field) = match state.kind.as_str() {
            "function_call" => ("response.function_call_arguments.done", "arguments"),
            "custom_tool_call" => ("response.custom_tool_call_input.done", "input"),
            _ => return,
        };
        if std::mem::replace(&mut state.arguments_done, true) {
            return;
        }
        let value = serde_json::to_string(&state.arguments).expect("strings serialize");
        let name = RawObject::parse(&state.added)
            .ok()
            .and_then(|item| item.get("name").map(|n| n.get().to_owned()));
        let mut event = self.place(slot);
        event.set(field, &value);
        if let Some(name) = name.filter(|_| field == "arguments") {
            event.set("name", &name);
        }
        self.send(kind, event, out);
    }

    /// Finishes every item still open, as `status` says, with what arrived
    /// of it.
    pub(super) fn close_unfinished(&mut self, status: ResponseStatus, out: &mut Frames) {
        let item_status = match status {
            ResponseStatus::Completed => "\"completed\"",
            _ => "\"incomplete\"",
        };
        for slot in 0..self.slots.len() {
            if self.slots[slot].done {
                continue;
            }
            let had_text = self.slots[slot].part_open;
            self.close_parts(slot, out);
            self.close_arguments(slot, out);
            let state = &self.slots[slot];
            let mut item = RawObject::parse(&state.added).expect("items are objects");
            item.set("status", item_status);
            match state.kind.as_str() {
                // Every part it was sent, the one just closed included.
                "message" if !state.parts_done.is_empty() => {
                    item.set("content", &format!("[{}]", state.parts_done.join(",")));
                }
                "reasoning" => {
                    if let Some(summary) = state.summary_parts() {
                        item.set("summary", &summary);
                    }
                    if had_text {
                        item.set("content", &format!("[{}]", state.text_part()));
                    }
                }
                "function_call" => {
                    let arguments =
                        serde_json::to_string(&state.arguments).expect("strings serialize");
                    item.set("arguments", &arguments);
                }
                "custom_tool_call" => {
                    let input = serde_json::to_string(&state.arguments).expect("strings serialize");
                    item.set("input", &input);
                }
                _ => {}
            }
            let item = item.to_raw();
            self.finish_item(slot, item, out);
        }
    }
}

/// The backend's usage, with the keys the API requires.
pub(in crate::responses_to_responses) fn usage(u: &lenient::Usage) -> Usage {
    let input = u.input_tokens.unwrap_or_default();
    let output = u.output_tokens.unwrap_or_default();
    Usage {
        input_tokens: input,
        input_tokens_details: InputTokensDetails {
            cached_tokens: u
                .input_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or_default(),
            cache_write_tokens: 0,
        },
        output_tokens: output,
        output_tokens_details: OutputTokensDetails {
            reasoning_tokens: u
                .output_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or_default(),
        },
        total_tokens: u.total_tokens.unwrap_or(input.saturating_add(output)),
    }
}

/// The type of a content part the backend opened, which says how the
/// bridge closes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartKind {
    OutputText,
    Refusal,
    ReasoningText,
}

impl PartKind {
    /// The type of the part a `content_part.added` event opens.
    pub(super) fn of(event: &RawObject<'_>) -> Self {
        let part = event.get("part").and_then(|p| RawObject::parse(p).ok());
        match part.as_ref().and_then(|p| p.str("type")) {
            Some("refusal") => PartKind::Refusal,
            Some("reasoning_text") => PartKind::ReasoningText,
            _ => PartKind::OutputText,
        }
    }

    /// The field its text is in, on its done event and in the part.
    fn field(self) -> &'static str {
        match self {
            PartKind::Refusal => "refusal",
            _ => "text",
        }
    }

    fn done_event(self) -> &'static str {
        match self {
            PartKind::OutputText => "response.output_text.done",
            PartKind::Refusal => "response.refusal.done",
            PartKind::ReasoningText => "response.reasoning_text.done",
        }
    }
}

impl super::Slot {
    /// The open part as the client was sent it: its text and annotations.
    pub(super) fn text_part(&self) -> String {
        let text = serde_json::to_string(&self.text).expect("strings serialize");
        match self.part_kind {
            PartKind::Refusal => return format!(r#"{{"type":"refusal","refusal":{text}}}"#),
            PartKind::ReasoningText => {
                return format!(r#"{{"type":"reasoning_text","text":{text}}}"#)
            }
            PartKind::OutputText => {}
        }
        let mut annotations = String::from("[");
        for (n, annotation) in self.annotations.iter().enumerate() {
            if n > 0 {
                annotations.push(',');
            }
            annotations.push_str(annotation.get());
        }
        annotations.push(']');
        format!(r#"{{"type":"output_text","text":{text},"annotations":{annotations}}}"#)
    }
}
