//! How a stream ends: items closed in order, then exactly one terminal
//! event (completed, incomplete, or an `error` event and failed).

use crate::frames::Frames;
use serde_json::value::RawValue;
use wirebridge_wire::responses::strict::{ErrorEvent, ErrorPayload, Lifecycle};
use wirebridge_wire::responses::strict::{ItemStatus, MessagePhase, ResponseError, ResponseStatus};

use super::emit::{emit, to_raw, Failure, RESPONSE_ERROR_CODES};
use super::{CallPhase, Open, State, StreamTranslator};
use crate::responses_to_chat::reply::status_for;

impl StreamTranslator {
    /// Closes the open item because another one opens. A live tool call
    /// closes together with every buffered call, since tool calls end a
    /// turn.
    pub(super) fn close_open(&mut self, out: &mut Frames) -> Result<(), Failure> {
        self.close_item(false, out)
    }

    fn close_item(&mut self, reply_ended: bool, out: &mut Frames) -> Result<(), Failure> {
        let status = self.closing_status();
        match std::mem::replace(&mut self.open, Open::Nothing) {
            Open::Nothing => Ok(()),
            Open::Reasoning(state) => {
                self.close_reasoning(state, status, out);
                Ok(())
            }
            Open::Message(state) => {
                let phase = self.message_phase(reply_ended);
                self.close_message(state, status, phase, out);
                Ok(())
            }
            Open::Calls => self.close_calls(out),
        }
    }

    /// The phase of the message closing, when it is known: commentary when
    /// tool calls follow it (one is opening, or waits to be sent whole at
    /// the end), the final answer when the reply ended without any. A
    /// message closed by reasoning while the reply goes on has none: calls
    /// may follow or not.
    fn message_phase(&self, reply_ended: bool) -> Option<MessagePhase> {
        if self.calls.iter().any(|c| c.phase != CallPhase::Closed) {
            Some(MessagePhase::Commentary)
        } else if reply_ended {
            Some(MessagePhase::FinalAnswer)
        } else {
            None
        }
    }

    /// The status of the item open when the upstream stops: `incomplete`
    /// when a token limit or a content filter cut it short.
    pub(super) fn closing_status(&self) -> ItemStatus {
        match status_for(self.finish_reason.as_deref()).0 {
            ResponseStatus::Incomplete => ItemStatus::Incomplete,
            _ => ItemStatus::Completed,
        }
    }

    /// Closes the open item as `incomplete` because the stream failed: the
    /// client keeps the text and arguments that arrived. Calls still
    /// buffered were never announced and stay out.
    pub(super) fn abandon_open(&mut self, out: &mut Frames) {
        match std::mem::replace(&mut self.open, Open::Nothing) {
            Open::Nothing => {}
            Open::Reasoning(state) => self.close_reasoning(state, ItemStatus::Incomplete, out),
            // Cut short: what it would have been is not known.
            Open::Message(state) => self.close_message(state, ItemStatus::Incomplete, None, out),
            Open::Calls => {
                for slot in 0..self.calls.len() {
                    if matches!(self.calls[slot].phase, CallPhase::Live { .. }) {
                        self.close_call(slot, ItemStatus::Incomplete, out);
                    }
                }
            }
        }
    }

    /// Closes every item, at the end of the reply.
    pub(super) fn close_all(&mut self, out: &mut Frames) -> Result<(), Failure> {
        self.close_item(true, out)?;
        self.close_calls(out)
    }

    pub(super) fn close_calls(&mut self, out: &mut Frames) -> Result<(), Failure> {
        for slot in 0..self.calls.len() {
            if self.calls[slot].phase == CallPhase::Pending {
                if self.calls[slot].name.is_none() {
                    let index = self.calls[slot].chat_index;
                    return Err(Failure::server(format!(
                        "the upstream's tool call {index} never received a function name"
                    )));
                }
                self.open_call(slot, out);
                self.send_buffered_arguments(slot, out);
            }
            self.close_call(slot, ItemStatus::Completed, out);
        }
        Ok(())
    }

    pub(super) fn complete(&mut self, out: &mut Frames) {
        self.flush_think(out);
        if self.state == State::Waiting {
            self.begin(out);
        }
        if let Err(failure) = self.close_all(out) {
            self.fail_with(failure, out);
            return;
        }
        let (status, incomplete) = status_for(self.finish_reason.as_deref());
        // A backend that reports no usage: what was spent before the reply.
        self.usage = self.usage.or(self.ctx.prior_usage);
        let kind = match status {
            ResponseStatus::Incomplete => "response.incomplete",
            _ => "response.completed",
        };
        let response = to_raw(&self.response(status, None, incomplete));
        emit(
            out,
            &mut self.seq,
            kind,
            Lifecycle {
                response: &*response,
            },
        );
        self.finished = Some(response);
        self.state = State::Finished;
        self.outcome = Some(status);
    }

    pub(super) fn fail_with(&mut self, failure: Failure, out: &mut Frames) {
        if self.state == State::Finished {
            return;
        }
        if self.state == State::Waiting {
            self.begin(out);
        }
        // What the client already saw is kept: the open item is closed with
        // the text that arrived, and listed in the failed response.
        self.flush_think(out);
        self.abandon_open(out);
        let code = failure.code.as_deref();
        let body = ErrorEvent {
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
        emit(out, &mut self.seq, "error", body);
        let response_code = code
            .filter(|c| RESPONSE_ERROR_CODES.contains(c))
            .unwrap_or("server_error");
        let error = ResponseError {
            code: response_code,
            message: &failure.message,
        };
        // Slots reserved for calls that never went live stay out.
        let output: Vec<Box<RawValue>> = self
            .output
            .iter()
            .filter(|i| i.get() != "null")
            .cloned()
            .collect();
        let mut response = self.response(ResponseStatus::Failed, Some(error), None);
        response.output = &output;
        let response = to_raw(&response);
        emit(
            out,
            &mut self.seq,
            "response.failed",
            Lifecycle {
                response: &*response,
            },
        );
        self.finished = Some(response);
        self.failure = Some(failure);
        self.state = State::Finished;
        self.outcome = Some(ResponseStatus::Failed);
    }
}
