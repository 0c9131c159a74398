//! Drawing a [`Plan`](crate::script::Plan) as Responses output: the
//! `Response` object (non-streaming body, and the `response` of lifecycle
//! events), its output items, and the event stream ([`stream`]).

mod items;
mod stream;

pub(crate) use stream::{failure_tail, stream};

use crate::error::ApiError;
use crate::json::{null, Json, Obj};
use crate::script::{Finish, Reply, Usage};
use serde_json::{json, Value};

/// The state a `Response` object is drawn in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lifecycle {
    /// `response.created` / `response.in_progress`: no output, no usage.
    InProgress,
    /// Finished (completed, or incomplete when the plan was truncated), with
    /// these complete output items and usage.
    Finished(Vec<Json>),
    /// `response.failed` after a scripted mid-stream failure.
    Failed,
}

/// The non-streaming body of a reply.
pub(crate) fn body(r: &Reply<'_>) -> String {
    response(r, Lifecycle::Finished(items::complete_items(r))).to_json()
}

/// The `Response` object of a reply in the given state. Fields the request
/// set are echoed (`instructions`, `tools`, `tool_choice`, `metadata`,
/// `temperature`, …); `usage` is null until it is known, and `user` is
/// present only when the request had one.
pub(crate) fn response(r: &Reply<'_>, state: Lifecycle) -> Obj {
    let raw = &r.prompt.raw;
    let (status, output, usage_known) = match state {
        Lifecycle::InProgress => ("in_progress", Vec::new(), false),
        Lifecycle::Finished(items) if r.plan.finish == Finish::Length => {
            ("incomplete", items, true)
        }
        Lifecycle::Finished(items) => ("completed", items, true),
        Lifecycle::Failed => ("failed", Vec::new(), false),
    };
    let error: Json = if status == "failed" {
        let e = ApiError::midstream();
        Obj::new()
            .with("code", e.code.unwrap_or_default())
            .with("message", e.message)
            .into()
    } else {
        null()
    };
    let incomplete_details: Json = if status == "incomplete" {
        Obj::new().with("reason", "max_output_tokens").into()
    } else {
        null()
    };
    let completed_at: Json = if status == "completed" {
        r.created.into()
    } else {
        null()
    };

    let mut o = Obj::new()
        .with("id", r.ids.response())
        .with("object", "response")
        .with("created_at", r.created)
        .with("status", status)
        .with("background", false)
        .with("completed_at", completed_at)
        .with("error", error)
        .with("incomplete_details", incomplete_details)
        .with("instructions", echo(raw, "instructions", Value::Null))
        .with(
            "max_output_tokens",
            echo(raw, "max_output_tokens", Value::Null),
        )
        .with("max_tool_calls", echo(raw, "max_tool_calls", Value::Null))
        .with("model", &r.prompt.model)
        .with("output", Json::Arr(output))
        .with("parallel_tool_calls", r.prompt.parallel_tool_calls)
        .with(
            "previous_response_id",
            echo(raw, "previous_response_id", Value::Null),
        );
    for key in ["prompt_cache_key", "safety_identifier"] {
        o.set(key, echo(raw, key, Value::Null));
    }
    o.extend(
        Obj::new()
            .with(
                "presence_penalty",
                echo(raw, "presence_penalty", json!(0.0)),
            )
            .with(
                "frequency_penalty",
                echo(raw, "frequency_penalty", json!(0.0)),
            )
            .with(
                "reasoning",
                echo(raw, "reasoning", json!({"effort": null, "summary": null})),
            )
            .with("service_tier", "default")
            .with("store", echo(raw, "store", Value::Bool(true)))
            .with("temperature", echo(raw, "temperature", json!(1.0)))
            .with(
                "text",
                echo(
                    raw,
                    "text",
                    json!({"format": {"type": "text"}, "verbosity": "medium"}),
                ),
            )
            .with("tool_choice", echo(raw, "tool_choice", json!("auto")))
            .with("tools", echo_tools(raw))
            .with("top_logprobs", echo(raw, "top_logprobs", json!(0)))
            .with("top_p", echo(raw, "top_p", json!(1.0)))
            .with("truncation", echo(raw, "truncation", json!("disabled"))),
    );
    // As OpenAI does: `usage` is null until it is known.
    o.set(
        "usage",
        if usage_known {
            usage(&r.plan.usage).into()
        } else {
            null()
        },
    );
    if let Some(user) = raw.get("user").filter(|v| v.is_string()) {
        o.set("user", user.clone());
    }
    o.set("metadata", echo(raw, "metadata", json!({})));
    o
}

/// `raw[key]` when present and not null, else `default`.
fn echo(raw: &Value, key: &str, default: Value) -> Value {
    match raw.get(key) {
        None | Some(Value::Null) => default,
        Some(v) => v.clone(),
    }
}

/// The request's tools as a `Response` lists them: function tools get the
/// keys the server fills in (`strict` defaults to true, `description` and
/// `parameters` to null); other tools are echoed as they are.
fn echo_tools(raw: &Value) -> Value {
    let Some(Value::Array(tools)) = raw.get("tools") else {
        return json!([]);
    };
    let tools = tools.iter().map(|tool| match tool {
        Value::Object(t) if t.get("type").and_then(Value::as_str) == Some("function") => {
            let mut t = t.clone();
            t.entry("description").or_insert(Value::Null);
            t.entry("parameters").or_insert(Value::Null);
            if t.get("strict").is_none_or(Value::is_null) {
                t.insert("strict".to_string(), Value::Bool(true));
            }
            Value::Object(t)
        }
        other => other.clone(),
    });
    Value::Array(tools.collect())
}

/// A `Usage` object.
fn usage(u: &Usage) -> Obj {
    Obj::new()
        .with("input_tokens", u.input)
        .with(
            "input_tokens_details",
            Obj::new()
                .with("cached_tokens", 0u64)
                .with("cache_write_tokens", 0u64),
        )
        .with("output_tokens", u.output)
        .with(
            "output_tokens_details",
            Obj::new().with("reasoning_tokens", u.reasoning),
        )
        .with("total_tokens", u.total())
}
