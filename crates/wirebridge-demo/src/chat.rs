//! Drawing a [`Plan`](crate::script::Plan) as Chat Completions output: a
//! `chat.completion` body or a `chat.completion.chunk` stream.
//!
//! Stream grammar: a role chunk (`delta.role = "assistant"`), then
//! `reasoning_content` deltas, then `content` deltas or tool-call fragments
//! (`index` dense from 0; `id`, `type` and `function.name` only on a call's
//! first fragment, whose `arguments` is empty), a finish chunk with an empty
//! `delta`, the usage chunk (`choices: []`) only when
//! `stream_options.include_usage` asked for it, and `data: [DONE]`.

use crate::error::ApiError;
use crate::frames::{Frame, Kind};
use crate::json::{arr, null, Json, Obj};
use crate::script::{Reply, Usage};

/// The chunk stream of a reply.
pub(crate) fn stream(r: &Reply<'_>) -> Vec<Frame> {
    let plan = r.plan;
    let mut frames = Vec::new();
    let mut push = |kind: Kind, delta: Obj| {
        frames.push(Frame::data(kind, &chunk(r, delta, None).to_json()));
    };

    let text_first = plan.reasoning.is_empty() && plan.calls.is_empty();
    let content: Json = if text_first { "".into() } else { null() };
    push(
        Kind::Head,
        Obj::new()
            .with("role", "assistant")
            .with("content", content)
            .with("refusal", null()),
    );
    for fragment in &plan.reasoning {
        push(Kind::Delta, Obj::new().with("reasoning_content", fragment));
    }
    for fragment in &plan.text {
        push(Kind::Delta, Obj::new().with("content", fragment));
    }
    for (index, call) in plan.calls.iter().enumerate() {
        let first = Obj::new()
            .with("index", index)
            .with("id", &call.call_id)
            .with("type", "function")
            .with(
                "function",
                Obj::new().with("name", &call.name).with("arguments", ""),
            );
        push(Kind::Delta, Obj::new().with("tool_calls", arr([first])));
        for fragment in &call.fragments {
            let next = Obj::new()
                .with("index", index)
                .with("function", Obj::new().with("arguments", fragment));
            push(Kind::Delta, Obj::new().with("tool_calls", arr([next])));
        }
    }

    let finish = chunk(r, Obj::new(), Some(plan.finish.chat_reason()));
    frames.push(Frame::data(Kind::Other, &finish.to_json()));
    if r.prompt.include_usage {
        let usage_chunk = header(r)
            .with("choices", Json::Arr(Vec::new()))
            .with("usage", usage(&plan.usage));
        frames.push(Frame::data(Kind::Other, &usage_chunk.to_json()));
    }
    frames.push(Frame::done());
    frames
}

/// The frames a `demo:fail-midstream` stream ends with: the error chunk,
/// then `data: [DONE]` (as vLLM sends it).
pub(crate) fn failure_tail() -> Vec<Frame> {
    let error = Obj::new().with("error", ApiError::midstream().inner());
    vec![Frame::data(Kind::Other, &error.to_json()), Frame::done()]
}

/// The non-streaming `chat.completion` body of a reply.
pub(crate) fn body(r: &Reply<'_>) -> String {
    let plan = r.plan;
    let text = plan.text.concat();
    let content: Json = if text.is_empty() && !plan.calls.is_empty() {
        null()
    } else {
        text.into()
    };
    let mut message = Obj::new()
        .with("role", "assistant")
        .with("content", content)
        .with("refusal", null());
    if !plan.reasoning.is_empty() {
        message.set("reasoning_content", plan.reasoning.concat());
    }
    if !plan.calls.is_empty() {
        let calls = plan.calls.iter().map(|c| {
            Obj::new()
                .with("id", &c.call_id)
                .with("type", "function")
                .with(
                    "function",
                    Obj::new()
                        .with("name", &c.name)
                        .with("arguments", c.arguments()),
                )
        });
        message.set("tool_calls", arr(calls));
    }
    message.set("annotations", Json::Arr(Vec::new()));
    let choice = Obj::new()
        .with("index", 0u64)
        .with("message", message)
        .with("logprobs", null())
        .with("finish_reason", plan.finish.chat_reason());
    Obj::new()
        .with("id", r.ids.chat_completion())
        .with("object", "chat.completion")
        .with("created", r.created)
        .with("model", &r.prompt.model)
        .with("choices", arr([choice]))
        .with("usage", usage(&plan.usage))
        .to_json()
}

/// `id`, `object`, `created`, `model` of every chunk.
fn header(r: &Reply<'_>) -> Obj {
    Obj::new()
        .with("id", r.ids.chat_completion())
        .with("object", "chat.completion.chunk")
        .with("created", r.created)
        .with("model", &r.prompt.model)
}

/// A chunk with one choice; `usage: null` when the usage chunk will follow.
fn chunk(r: &Reply<'_>, delta: Obj, finish_reason: Option<&str>) -> Obj {
    let choice = Obj::new()
        .with("index", 0u64)
        .with("delta", delta)
        .with("logprobs", null())
        .with("finish_reason", finish_reason);
    let mut chunk = header(r).with("choices", arr([choice]));
    if r.prompt.include_usage {
        chunk.set("usage", null());
    }
    chunk
}

/// A `CompletionUsage` object.
fn usage(u: &Usage) -> Obj {
    Obj::new()
        .with("prompt_tokens", u.input)
        .with("completion_tokens", u.output)
        .with("total_tokens", u.total())
        .with(
            "prompt_tokens_details",
            Obj::new().with("cached_tokens", 0u64),
        )
        .with(
            "completion_tokens_details",
            Obj::new().with("reasoning_tokens", u.reasoning),
        )
}
