//! The Responses event stream of a reply.
//!
//! ```text
//! response.created -> response.in_progress ->
//!   [reasoning item: output_item.added -> reasoning_summary_part.added ->
//!      reasoning_summary_text.delta* -> reasoning_summary_text.done ->
//!      reasoning_summary_part.done -> output_item.done]
//!   [message item: output_item.added -> content_part.added -> output_text.delta* ->
//!      output_text.done -> content_part.done -> output_item.done]
//!   [function_call item: output_item.added -> function_call_arguments.delta* ->
//!      function_call_arguments.done -> output_item.done]*
//! -> response.completed | response.incomplete
//! ```
//!
//! `sequence_number` counts from 0 by 1, one per event; on a scripted
//! failure the stream ends with an `error` event (nested error object) and
//! `response.failed`.

use super::items::{self, output_text_part, summary_part};
use super::{response, Lifecycle};
use crate::error::ApiError;
use crate::frames::{Frame, Kind};
use crate::json::{Json, Obj};
use crate::script::Reply;

/// Collects events, numbering them from `base`.
struct Emitter {
    base: usize,
    frames: Vec<Frame>,
}

impl Emitter {
    fn new(base: usize) -> Self {
        Emitter {
            base,
            frames: Vec::new(),
        }
    }

    fn emit(&mut self, kind: Kind, ty: &'static str, fields: Obj) {
        let mut event = Obj::new()
            .with("type", ty)
            .with("sequence_number", self.base + self.frames.len());
        event.extend(fields);
        self.frames.push(Frame::event(kind, ty, &event.to_json()));
    }
}

/// Fields of a sub-event of the item at `output_index`.
fn sub(item_id: &str, output_index: usize) -> Obj {
    Obj::new()
        .with("item_id", item_id)
        .with("output_index", output_index)
}

/// The event stream of a reply.
pub(crate) fn stream(r: &Reply<'_>) -> Vec<Frame> {
    let plan = r.plan;
    let mut e = Emitter::new(0);
    for ty in ["response.created", "response.in_progress"] {
        let resp = response(r, Lifecycle::InProgress);
        e.emit(Kind::Head, ty, Obj::new().with("response", resp));
    }
    let mut output_index = 0;

    if !plan.reasoning.is_empty() {
        let id = r.ids.reasoning();
        let text = plan.reasoning.concat();
        item_added(&mut e, output_index, items::reasoning(&id, None));
        let part = |text: &str| {
            sub(&id, output_index)
                .with("summary_index", 0u64)
                .with("part", summary_part(text))
        };
        e.emit(
            Kind::Other,
            "response.reasoning_summary_part.added",
            part(""),
        );
        for fragment in &plan.reasoning {
            let fields = sub(&id, output_index)
                .with("summary_index", 0u64)
                .with("delta", fragment);
            e.emit(Kind::Delta, "response.reasoning_summary_text.delta", fields);
        }
        let fields = sub(&id, output_index)
            .with("summary_index", 0u64)
            .with("text", &text);
        e.emit(Kind::Other, "response.reasoning_summary_text.done", fields);
        e.emit(
            Kind::Other,
            "response.reasoning_summary_part.done",
            part(&text),
        );
        item_done(&mut e, output_index, items::reasoning(&id, Some(&text)));
        output_index += 1;
    }

    if !plan.text.is_empty() {
        let id = r.ids.message();
        let text = plan.text.concat();
        item_added(&mut e, output_index, items::message(&id, None, false));
        let part = |text: &str| {
            sub(&id, output_index)
                .with("content_index", 0u64)
                .with("part", output_text_part(text))
        };
        e.emit(Kind::Other, "response.content_part.added", part(""));
        for fragment in &plan.text {
            let fields = sub(&id, output_index)
                .with("content_index", 0u64)
                .with("delta", fragment)
                .with("logprobs", Json::Arr(Vec::new()));
            e.emit(Kind::Delta, "response.output_text.delta", fields);
        }
        let fields = sub(&id, output_index)
            .with("content_index", 0u64)
            .with("text", &text)
            .with("logprobs", Json::Arr(Vec::new()));
        e.emit(Kind::Other, "response.output_text.done", fields);
        e.emit(Kind::Other, "response.content_part.done", part(&text));
        let done = items::message(&id, Some(&text), plan.text_complete);
        item_done(&mut e, output_index, done);
        output_index += 1;
    }

    for call in &plan.calls {
        item_added(&mut e, output_index, items::function_call(call, false));
        for fragment in &call.fragments {
            let fields = sub(&call.item_id, output_index).with("delta", fragment);
            e.emit(
                Kind::Delta,
                "response.function_call_arguments.delta",
                fields,
            );
        }
        let fields = sub(&call.item_id, output_index)
            .with("name", &call.name)
            .with("arguments", call.arguments());
        e.emit(Kind::Other, "response.function_call_arguments.done", fields);
        item_done(&mut e, output_index, items::function_call(call, true));
        output_index += 1;
    }

    let finished = response(r, Lifecycle::Finished(items::complete_items(r)));
    let terminal = if finished_incomplete(r) {
        "response.incomplete"
    } else {
        "response.completed"
    };
    e.emit(Kind::Other, terminal, Obj::new().with("response", finished));
    e.frames
}

/// The events a `demo:fail-midstream` stream ends with, numbered from
/// `next_sequence_number`: an `error` event nesting
/// `{type, code, message, param}` (as OpenAI sends it, and as the Open
/// Responses spec defines it) beside the flat `code`, `message` and `param`
/// of OpenAI's spec, then `response.failed`.
pub(crate) fn failure_tail(r: &Reply<'_>, next_sequence_number: usize) -> Vec<Frame> {
    let mut e = Emitter::new(next_sequence_number);
    let err = ApiError::midstream();
    let nested = Obj::new()
        .with("type", err.kind)
        .with("code", err.code.as_deref().map(Json::from))
        .with("message", &err.message)
        .with("param", err.param.as_deref().map(Json::from));
    let event = Obj::new()
        .with("code", err.code.as_deref().map(Json::from))
        .with("message", &err.message)
        .with("param", err.param.as_deref().map(Json::from))
        .with("error", nested);
    e.emit(Kind::Other, "error", event);
    let failed = response(r, Lifecycle::Failed);
    e.emit(
        Kind::Other,
        "response.failed",
        Obj::new().with("response", failed),
    );
    e.frames
}

fn finished_incomplete(r: &Reply<'_>) -> bool {
    r.plan.finish == crate::script::Finish::Length
}

fn item_added(e: &mut Emitter, output_index: usize, item: Obj) {
    let fields = Obj::new()
        .with("output_index", output_index)
        .with("item", item);
    e.emit(Kind::Other, "response.output_item.added", fields);
}

fn item_done(e: &mut Emitter, output_index: usize, item: Obj) {
    let fields = Obj::new()
        .with("output_index", output_index)
        .with("item", item);
    e.emit(Kind::Other, "response.output_item.done", fields);
}
