//! The Responses stream grammar a translator must emit, checked strictly.
//!
//! ```text
//! response.created -> response.in_progress ->
//!   for each output item, in output_index order, never interleaved:
//!     response.output_item.added            (partial item: status in_progress, content [], arguments "")
//!       message:   content_part.added -> output_text.delta* [annotation.added*] -> output_text.done -> content_part.done
//!                  (refusal part: refusal.delta* -> refusal.done)
//!       reasoning: (reasoning_summary_part.added -> reasoning_summary_text.delta* ->
//!                   reasoning_summary_text.done -> reasoning_summary_part.done)*
//!                  (reasoning_text.delta* -> reasoning_text.done)*
//!       function_call:    function_call_arguments.delta* -> function_call_arguments.done
//!       custom_tool_call: custom_tool_call_input.delta* -> custom_tool_call_input.done
//!       other (hosted) items: any of their own events
//!     response.output_item.done             (the complete item)
//! -> exactly one of response.completed | response.incomplete | (error -> response.failed)
//! ```
//!
//! These are the rules enforced by the official SDKs' stream accumulators
//! (openai-python `ResponseStreamState`), plus stricter ones observed in every
//! real OpenAI stream (dense `sequence_number`, done texts equal to the
//! concatenated deltas, `response.completed.output` equal to the done items…).
//! See [`check`] for the full list.
//!
//! [`transcript_of_recorded`] is the lenient counterpart for recorded upstream
//! streams, and [`responses_body_transcript`] reads a non-streaming body.

use crate::sse::SseFrame;
use crate::transcript::{absorb_output_items, str_field, ResponsesTranscript, ToolCallRecord};
use crate::Violation;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Knobs for [`check_with`]. [`CheckOptions::strict`] (the default) is what a
/// translator must emit; [`CheckOptions::recorded_openai`] relaxes exactly the
/// documented points where real OpenAI streams deviate from the spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOptions {
    /// Require `name` on `response.function_call_arguments.done`. The spec
    /// marks it required, but real OpenAI streams (2025–2026 recordings) omit
    /// it. When present it must always equal the item's name.
    pub require_arguments_done_name: bool,
    /// Require a failed response to close the items it opened and list them
    /// in `response.failed.response.output`. The bridge does, so the client
    /// keeps what was said; an upstream may stop mid-item instead.
    pub failure_closes_items: bool,
}

impl CheckOptions {
    /// Every rule, including spec-required fields real OpenAI omits.
    pub fn strict() -> Self {
        CheckOptions {
            require_arguments_done_name: true,
            failure_closes_items: true,
        }
    }

    /// The strict rules minus the documented deviations of real OpenAI
    /// streams (`function_call_arguments.done` without `name`) and of
    /// upstreams in general (a failure that leaves an item open).
    pub fn recorded_openai() -> Self {
        CheckOptions {
            require_arguments_done_name: false,
            failure_closes_items: false,
        }
    }
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self::strict()
    }
}

/// Every event `type` of the spec's `ResponseStreamEvent` union.
pub const KNOWN_EVENT_TYPES: &[&str] = &[
    "response.audio.delta",
    "response.audio.done",
    "response.audio.transcript.delta",
    "response.audio.transcript.done",
    "response.code_interpreter_call_code.delta",
    "response.code_interpreter_call_code.done",
    "response.code_interpreter_call.completed",
    "response.code_interpreter_call.in_progress",
    "response.code_interpreter_call.interpreting",
    "response.completed",
    "response.content_part.added",
    "response.content_part.done",
    "response.created",
    "error",
    "response.file_search_call.completed",
    "response.file_search_call.in_progress",
    "response.file_search_call.searching",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.shell_call_command.added",
    "response.shell_call_command.delta",
    "response.shell_call_command.done",
    "response.shell_call_output_content.delta",
    "response.shell_call_output_content.done",
    "response.in_progress",
    "response.failed",
    "response.incomplete",
    "response.output_item.added",
    "response.output_item.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
    "response.refusal.delta",
    "response.refusal.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.web_search_call.completed",
    "response.web_search_call.in_progress",
    "response.web_search_call.searching",
    "response.image_generation_call.completed",
    "response.image_generation_call.generating",
    "response.image_generation_call.in_progress",
    "response.image_generation_call.partial_image",
    "response.mcp_call_arguments.delta",
    "response.mcp_call_arguments.done",
    "response.mcp_call.completed",
    "response.mcp_call.failed",
    "response.mcp_call.in_progress",
    "response.mcp_list_tools.completed",
    "response.mcp_list_tools.failed",
    "response.mcp_list_tools.in_progress",
    "response.output_text.annotation.added",
    "response.queued",
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
];

/// Keys the spec marks required on `Response` that are checked for presence
/// in every lifecycle event (values may be null where the spec allows it).
pub const REQUIRED_RESPONSE_KEYS: &[&str] = &[
    "id",
    "object",
    "created_at",
    "status",
    "model",
    "output",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "metadata",
    "instructions",
    "error",
    "incomplete_details",
];

const MESSAGE_EVENTS: &[&str] = &[
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.delta",
    "response.refusal.done",
];
const REASONING_EVENTS: &[&str] = &[
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
];
const FUNCTION_EVENTS: &[&str] = &[
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
];
const CUSTOM_EVENTS: &[&str] = &[
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
];

type R<T> = Result<T, Violation>;

/// Check a stream a translator emitted against the strict grammar
/// (equivalent to [`check_with`]`(frames, &CheckOptions::strict())`).
///
/// Rules, each reported as a [`Violation`] naming the frame:
///
/// * every frame has `event:` equal to its JSON `type`; no `[DONE]`; only
///   event types of the spec's `ResponseStreamEvent` (no `response.queued`,
///   no audio events);
/// * `response.created` first, `response.in_progress` second;
///   `sequence_number` on every event, `0, 1, 2, …`;
/// * the same `response.id` in every lifecycle event; the lifecycle
///   `response` has `object: "response"` and every key of
///   [`REQUIRED_RESPONSE_KEYS`]; created / in_progress have status
///   `in_progress` and an empty `output`;
/// * `output_item.added` with `output_index` `0, 1, 2, …`; one item open at a
///   time (never interleaved); every sub-event's `output_index` and `item_id`
///   match the open item; the added item has a non-empty `id` and is partial
///   (message: `status: in_progress`, `role: assistant`, `content: []`;
///   function_call: `status: in_progress`, `arguments: ""`, non-empty
///   `call_id` and `name`; custom_tool_call: `input: ""`; reasoning:
///   `summary: []`, status in_progress when present);
/// * message parts: `content_part.added` (content_index `0, 1, …`, one part
///   at a time, empty part) before its deltas; `output_text.done.text` ==
///   concatenated deltas, `refusal.done.refusal` likewise; `logprobs` arrays
///   on `output_text.delta` / `done`; `annotation_index` `0, 1, …`;
///   `content_part.done` after the done event, with the same text;
/// * reasoning: summary parts per `summary_index` `0, 1, …` in the order
///   part.added → text.delta* → text.done (== concatenation) → part.done;
///   reasoning text per `content_index` delta* → done (== concatenation);
/// * function_call / custom_tool_call: deltas then exactly one done whose
///   `arguments` / `input` equals the concatenation; `name` on
///   `function_call_arguments.done` (see [`CheckOptions`]) equal to the item's;
/// * `output_item.done`: same `type` / `id` / `call_id` / `name` as added,
///   every part closed, the complete item (texts, summaries, arguments equal
///   to what the sub-events accumulated), status `completed` or `incomplete`
///   (message, function_call; reasoning and custom_tool_call when present);
///   hosted item types only need added/done pairing;
/// * exactly one terminal event, nothing after it, and none missing:
///   `response.completed` (status completed, no item open, no item
///   `incomplete`, `error` null) | `response.incomplete` (status incomplete,
///   `incomplete_details.reason`) | `response.failed` (status failed,
///   `response.error` with `code` and `message`, immediately preceded by an
///   `error` event whose payload nests `error: {type, code, message, param}`;
///   an `error` event must be immediately followed by `response.failed`);
/// * every terminal event: no item still open (a failure closes the open
///   item, usually as `incomplete`, so what was said is kept), and
///   `response.output` equals the `output_item.done` items in order (reasoning `encrypted_content` is opaque and may be
///   re-encrypted by OpenAI between events: only its presence is compared);
///   `usage`, when not null, has `input_tokens`, `output_tokens`,
///   `total_tokens`, `input_tokens_details.cached_tokens` and
///   `output_tokens_details.reasoning_tokens`.
pub fn check(frames: &[SseFrame]) -> Result<ResponsesTranscript, Violation> {
    check_with(frames, &CheckOptions::strict())
}

/// [`check`] with explicit [`CheckOptions`].
pub fn check_with(
    frames: &[SseFrame],
    opts: &CheckOptions,
) -> Result<ResponsesTranscript, Violation> {
    let mut c = Checker {
        opts,
        count: 0,
        response_id: None,
        terminal: false,
        pending_error: false,
        open: None,
        next_index: 0,
        done_items: Vec::new(),
        t: ResponsesTranscript::default(),
    };
    for (i, f) in frames.iter().enumerate() {
        c.event(i, f)?;
    }
    let end = frames.len();
    if c.count == 0 {
        return Err(Violation::new(end, "empty stream: no events"));
    }
    if !c.terminal {
        return Err(Violation::new(
            end,
            "stream ended without a terminal event (response.completed | response.incomplete | response.failed)",
        ));
    }
    Ok(c.t)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Message,
    Reasoning,
    FunctionCall,
    CustomToolCall,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartKind {
    OutputText,
    Refusal,
}

impl PartKind {
    fn type_name(self) -> &'static str {
        match self {
            PartKind::OutputText => "output_text",
            PartKind::Refusal => "refusal",
        }
    }
    fn text_key(self) -> &'static str {
        match self {
            PartKind::OutputText => "text",
            PartKind::Refusal => "refusal",
        }
    }
}

#[derive(Debug)]
struct Part {
    kind: PartKind,
    acc: String,
    done: Option<String>,
    annotations: Vec<Value>,
    closed: bool,
}

#[derive(Debug, Default)]
struct TextPart {
    acc: String,
    done: Option<String>,
    closed: bool,
}

#[derive(Debug)]
struct OpenItem {
    output_index: u64,
    id: String,
    item_type: String,
    kind: Kind,
    added: Value,
    parts: Vec<Part>,
    summaries: Vec<TextPart>,
    reasoning_texts: Vec<TextPart>,
    args: String,
    args_done: bool,
}

struct Checker<'o> {
    opts: &'o CheckOptions,
    count: usize,
    response_id: Option<String>,
    terminal: bool,
    pending_error: bool,
    open: Option<OpenItem>,
    next_index: u64,
    done_items: Vec<Value>,
    t: ResponsesTranscript,
}

fn v_err<T>(i: usize, msg: impl Into<String>) -> R<T> {
    Err(Violation::new(i, msg))
}

fn req_str<'a>(i: usize, v: &'a Value, key: &str, ctx: &str) -> R<&'a str> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => v_err(i, format!("{ctx}: `{key}` must be a string, got {other}")),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

fn req_u64(i: usize, v: &Value, key: &str, ctx: &str) -> R<u64> {
    match v.get(key) {
        Some(n) if n.as_u64().is_some() => Ok(n.as_u64().unwrap_or_default()),
        Some(other) => v_err(
            i,
            format!("{ctx}: `{key}` must be a non-negative integer, got {other}"),
        ),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

fn req_array<'a>(i: usize, v: &'a Value, key: &str, ctx: &str) -> R<&'a Vec<Value>> {
    match v.get(key) {
        Some(Value::Array(a)) => Ok(a),
        Some(other) => v_err(i, format!("{ctx}: `{key}` must be an array, got {other}")),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

fn req_obj<'a>(i: usize, v: &'a Value, key: &str, ctx: &str) -> R<&'a Value> {
    match v.get(key) {
        Some(o @ Value::Object(_)) => Ok(o),
        Some(other) => v_err(i, format!("{ctx}: `{key}` must be an object, got {other}")),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

/// String or null, key present.
fn req_str_or_null(i: usize, v: &Value, key: &str, ctx: &str) -> R<()> {
    match v.get(key) {
        Some(Value::String(_)) | Some(Value::Null) => Ok(()),
        Some(other) => v_err(
            i,
            format!("{ctx}: `{key}` must be a string or null, got {other}"),
        ),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

fn short(v: &str) -> String {
    const MAX: usize = 80;
    if v.chars().count() <= MAX {
        format!("{v:?}")
    } else {
        let s: String = v.chars().take(MAX).collect();
        format!("{s:?}…")
    }
}

/// A copy of an output item with opaque re-encryptable fields blanked, for
/// comparing `response.output` with the `output_item.done` items.
fn normalize_item(item: &Value) -> Value {
    let mut item = item.clone();
    if item.get("type").and_then(Value::as_str) == Some("reasoning") {
        if let Some(ec) = item.get_mut("encrypted_content") {
            if ec.is_string() {
                *ec = Value::String("<encrypted>".into());
            }
        }
    }
    item
}

fn differing_keys(a: &Value, b: &Value) -> String {
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            let mut keys: Vec<&String> = a
                .keys()
                .chain(b.keys())
                .filter(|k| a.get(*k) != b.get(*k))
                .collect();
            keys.sort();
            keys.dedup();
            keys.iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
        _ => "(not objects)".to_string(),
    }
}

impl Checker<'_> {
    fn event(&mut self, i: usize, f: &SseFrame) -> R<()> {
        if f.data == "[DONE]" {
            return v_err(
                i,
                "`data: [DONE]` is not part of the Responses stream grammar",
            );
        }
        let v: Value = match serde_json::from_str(&f.data) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return v_err(i, "data is not a JSON object"),
            Err(e) => return v_err(i, format!("data is not valid JSON: {e}")),
        };
        let ty = req_str(i, &v, "type", "event")?.to_string();
        match &f.event {
            None => {
                return v_err(
                    i,
                    format!("frame has no `event:` name (expected `event: {ty}`)"),
                )
            }
            Some(e) if *e != ty => {
                return v_err(
                    i,
                    format!("`event: {e}` does not match the data's type `{ty}`"),
                )
            }
            _ => {}
        }
        if self.terminal {
            return v_err(i, format!("`{ty}` after the terminal event"));
        }
        if self.count == 0 && ty != "response.created" {
            return v_err(
                i,
                format!("first event must be response.created, got `{ty}`"),
            );
        }
        if self.count == 1 && ty != "response.in_progress" {
            return v_err(
                i,
                format!("second event must be response.in_progress, got `{ty}`"),
            );
        }
        let seq = req_u64(i, &v, "sequence_number", &ty)?;
        if seq != self.count as u64 {
            return v_err(
                i,
                format!(
                    "sequence_number {seq} on `{ty}`, expected {} (0, 1, 2, … without gaps)",
                    self.count
                ),
            );
        }
        if self.pending_error && ty != "response.failed" {
            return v_err(
                i,
                format!(
                    "an `error` event must be immediately followed by response.failed, got `{ty}`"
                ),
            );
        }
        self.count += 1;

        match ty.as_str() {
            "response.created" => {
                if self.count != 1 {
                    return v_err(i, "duplicate response.created");
                }
                self.lifecycle(i, &v, &ty, "in_progress")?;
                Ok(())
            }
            "response.in_progress" => {
                if self.count != 2 {
                    return v_err(i, "duplicate response.in_progress");
                }
                self.lifecycle(i, &v, &ty, "in_progress")?;
                Ok(())
            }
            "response.queued" => v_err(
                i,
                "response.queued is not part of the grammar (background mode is not emitted)",
            ),
            "response.completed" | "response.incomplete" | "response.failed" => {
                self.terminal(i, &v, &ty)
            }
            "error" => self.error_event(i, &v),
            "response.output_item.added" => self.item_added(i, &v),
            "response.output_item.done" => self.item_done(i, &v),
            t if t.starts_with("response.audio.") => {
                v_err(i, format!("`{t}` (audio) is not part of the grammar"))
            }
            t if KNOWN_EVENT_TYPES.contains(&t) => self.sub_event(i, &v, t),
            t => v_err(
                i,
                format!("unknown event type `{t}` (not in the spec's ResponseStreamEvent)"),
            ),
        }
    }

    /// Checks common to every lifecycle event; returns its `response`.
    fn lifecycle<'v>(&mut self, i: usize, v: &'v Value, ty: &str, status: &str) -> R<&'v Value> {
        let resp = req_obj(i, v, "response", ty)?;
        let ctx = format!("{ty}.response");
        for key in REQUIRED_RESPONSE_KEYS {
            if resp.get(*key).is_none() {
                return v_err(i, format!("{ctx}: missing required key `{key}`"));
            }
        }
        let id = req_str(i, resp, "id", &ctx)?;
        if id.is_empty() {
            return v_err(i, format!("{ctx}: empty `id`"));
        }
        match &self.response_id {
            None => {
                self.response_id = Some(id.to_string());
                self.t.response_id = id.to_string();
            }
            Some(first) if first != id => {
                return v_err(
                    i,
                    format!(
                    "{ctx}: response id `{id}` differs from the first lifecycle event's `{first}`"
                ),
                )
            }
            _ => {}
        }
        if resp.get("object").and_then(Value::as_str) != Some("response") {
            return v_err(i, format!("{ctx}: `object` must be \"response\""));
        }
        req_u64(i, resp, "created_at", &ctx)?;
        req_str(i, resp, "model", &ctx)?;
        let st = req_str(i, resp, "status", &ctx)?;
        if st != status {
            return v_err(i, format!("{ctx}: status `{st}`, expected `{status}`"));
        }
        let output = req_array(i, resp, "output", &ctx)?;
        if status == "in_progress" && !output.is_empty() {
            return v_err(i, format!("{ctx}: `output` must be empty"));
        }
        self.t.status = st.to_string();
        Ok(resp)
    }

    fn error_event(&mut self, i: usize, v: &Value) -> R<()> {
        let err = match v.get("error") {
            Some(e @ Value::Object(_)) => e,
            _ => return v_err(
                i,
                "`error` event must nest its payload: {\"error\": {type, code, message, param}}",
            ),
        };
        let ctx = "error event's error";
        req_str(i, err, "type", ctx)?;
        req_str_or_null(i, err, "code", ctx)?;
        req_str(i, err, "message", ctx)?;
        req_str_or_null(i, err, "param", ctx)?;
        self.t.error = Some(err.clone());
        self.pending_error = true;
        Ok(())
    }

    fn terminal(&mut self, i: usize, v: &Value, ty: &str) -> R<()> {
        let status = match ty {
            "response.completed" => "completed",
            "response.incomplete" => "incomplete",
            _ => "failed",
        };
        if status == "failed" && !self.pending_error {
            return v_err(
                i,
                "response.failed must be immediately preceded by an `error` event",
            );
        }
        let resp = self.lifecycle(i, v, ty, status)?.clone();
        let ctx = format!("{ty}.response");
        self.terminal = true;
        self.pending_error = false;
        let output = req_array(i, &resp, "output", &ctx)?.clone();

        // A failed response too closes what it opened (unless the options
        // say otherwise): the client keeps what was already said.
        let closes = status != "failed" || self.opts.failure_closes_items;
        if let Some(open) = self.open.as_ref().filter(|_| closes) {
            return v_err(
                i,
                format!(
                    "{ty} while item {} (`{}`) is still open (no output_item.done)",
                    open.output_index, open.item_type
                ),
            );
        }
        if closes {
            if output.len() != self.done_items.len() {
                return v_err(
                    i,
                    format!(
                        "{ctx}.output has {} items but {} output_item.done events were sent",
                        output.len(),
                        self.done_items.len()
                    ),
                );
            }
            for (k, (a, b)) in output.iter().zip(&self.done_items).enumerate() {
                if normalize_item(a) != normalize_item(b) {
                    return v_err(
                        i,
                        format!(
                            "{ctx}.output[{k}] differs from the output_item.done item (keys: {})",
                            differing_keys(a, b)
                        ),
                    );
                }
            }
        }
        if status != "failed" && !resp.get("error").is_some_and(Value::is_null) {
            return v_err(i, format!("{ctx}.error must be null"));
        }
        match status {
            "completed" => {
                if let Some(k) = self
                    .done_items
                    .iter()
                    .position(|it| it.get("status").and_then(Value::as_str) == Some("incomplete"))
                {
                    return v_err(
                        i,
                        format!("item {k} has status `incomplete` in a completed response"),
                    );
                }
                if !resp.get("incomplete_details").is_some_and(Value::is_null) {
                    return v_err(i, format!("{ctx}.incomplete_details must be null"));
                }
            }
            "incomplete" => {
                let details = req_obj(i, &resp, "incomplete_details", &ctx)?;
                let reason = req_str(i, details, "reason", &format!("{ctx}.incomplete_details"))?;
                self.t.incomplete_reason = Some(reason.to_string());
            }
            _ => {
                let err = req_obj(i, &resp, "error", &ctx)?;
                req_str(i, err, "code", &format!("{ctx}.error"))?;
                req_str(i, err, "message", &format!("{ctx}.error"))?;
            }
        }
        match resp.get("usage") {
            None | Some(Value::Null) => {}
            Some(u) => {
                let uctx = format!("{ctx}.usage");
                for key in ["input_tokens", "output_tokens", "total_tokens"] {
                    req_u64(i, u, key, &uctx)?;
                }
                let d = req_obj(i, u, "input_tokens_details", &uctx)?;
                req_u64(
                    i,
                    d,
                    "cached_tokens",
                    &format!("{uctx}.input_tokens_details"),
                )?;
                let d = req_obj(i, u, "output_tokens_details", &uctx)?;
                req_u64(
                    i,
                    d,
                    "reasoning_tokens",
                    &format!("{uctx}.output_tokens_details"),
                )?;
                self.t.usage = Some(u.clone());
            }
        }
        if self.t.error.is_none() {
            if let Some(e) = resp.get("error").filter(|e| !e.is_null()) {
                self.t.error = Some(e.clone());
            }
        }
        self.t.output = output;
        Ok(())
    }

    fn item_added(&mut self, i: usize, v: &Value) -> R<()> {
        let idx = req_u64(i, v, "output_index", "output_item.added")?;
        if let Some(open) = &self.open {
            return v_err(
                i,
                format!(
                    "output_item.added for output_index {idx} while item {} is still open (items must not be interleaved)",
                    open.output_index
                ),
            );
        }
        if idx != self.next_index {
            return v_err(
                i,
                format!(
                    "output_item.added with output_index {idx}, expected {} (0, 1, 2, … in order)",
                    self.next_index
                ),
            );
        }
        let item = req_obj(i, v, "item", "output_item.added")?;
        let ctx = "output_item.added.item";
        let item_type = req_str(i, item, "type", ctx)?.to_string();
        let id = req_str(i, item, "id", ctx)?.to_string();
        if id.is_empty() {
            return v_err(i, format!("{ctx}: empty `id`"));
        }
        let status = item.get("status").and_then(Value::as_str);
        let kind = match item_type.as_str() {
            "message" => Kind::Message,
            "reasoning" => Kind::Reasoning,
            "function_call" => Kind::FunctionCall,
            "custom_tool_call" => Kind::CustomToolCall,
            _ => Kind::Other,
        };
        let need_in_progress = matches!(kind, Kind::Message | Kind::FunctionCall);
        let may_in_progress = matches!(kind, Kind::Reasoning | Kind::CustomToolCall);
        if (need_in_progress || (may_in_progress && status.is_some()))
            && status != Some("in_progress")
        {
            return v_err(
                i,
                format!("{ctx}: a just-added {item_type} item must have status `in_progress`, got {status:?}"),
            );
        }
        match kind {
            Kind::Message => {
                if item.get("role").and_then(Value::as_str) != Some("assistant") {
                    return v_err(i, format!("{ctx}: message role must be `assistant`"));
                }
                if !req_array(i, item, "content", ctx)?.is_empty() {
                    return v_err(
                        i,
                        format!("{ctx}: a just-added message must have `content: []`"),
                    );
                }
            }
            Kind::Reasoning => {
                if !req_array(i, item, "summary", ctx)?.is_empty() {
                    return v_err(
                        i,
                        format!("{ctx}: a just-added reasoning item must have `summary: []`"),
                    );
                }
                if item
                    .get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|c| !c.is_empty())
                {
                    return v_err(
                        i,
                        format!("{ctx}: a just-added reasoning item must have empty `content`"),
                    );
                }
            }
            Kind::FunctionCall | Kind::CustomToolCall => {
                let (field, ty_name) = if kind == Kind::FunctionCall {
                    ("arguments", "function_call")
                } else {
                    ("input", "custom_tool_call")
                };
                if !req_str(i, item, field, ctx)?.is_empty() {
                    return v_err(
                        i,
                        format!("{ctx}: a just-added {ty_name} must have `{field}: \"\"`"),
                    );
                }
                if req_str(i, item, "call_id", ctx)?.is_empty() {
                    return v_err(i, format!("{ctx}: empty `call_id`"));
                }
                if req_str(i, item, "name", ctx)?.is_empty() {
                    return v_err(i, format!("{ctx}: empty `name`"));
                }
            }
            Kind::Other => {}
        }
        self.open = Some(OpenItem {
            output_index: idx,
            id,
            item_type,
            kind,
            added: item.clone(),
            parts: Vec::new(),
            summaries: Vec::new(),
            reasoning_texts: Vec::new(),
            args: String::new(),
            args_done: false,
        });
        Ok(())
    }

    fn item_done(&mut self, i: usize, v: &Value) -> R<()> {
        let idx = req_u64(i, v, "output_index", "output_item.done")?;
        let open = match self.open.take() {
            Some(o) => o,
            None => {
                return v_err(
                    i,
                    format!("output_item.done for output_index {idx} but no item is open"),
                )
            }
        };
        if open.output_index != idx {
            return v_err(
                i,
                format!(
                    "output_item.done for output_index {idx} but the open item is {}",
                    open.output_index
                ),
            );
        }
        let item = req_obj(i, v, "item", "output_item.done")?;
        let ctx = "output_item.done.item";
        for key in ["type", "id", "call_id", "name"] {
            let (a, d) = (open.added.get(key), item.get(key));
            if (a.is_some() || key == "type" || key == "id") && a != d {
                return v_err(
                    i,
                    format!(
                        "{ctx}: `{key}` {} differs from output_item.added's {}",
                        d.map_or("(absent)".to_string(), Value::to_string),
                        a.map_or("(absent)".to_string(), Value::to_string)
                    ),
                );
            }
        }
        let status = item.get("status").and_then(Value::as_str);
        let need_status = matches!(open.kind, Kind::Message | Kind::FunctionCall);
        let may_status = matches!(open.kind, Kind::Reasoning | Kind::CustomToolCall);
        if (need_status || (may_status && status.is_some()))
            && !matches!(status, Some("completed") | Some("incomplete"))
        {
            return v_err(
                i,
                format!("{ctx}: a done {} item must have status `completed` (or `incomplete`), got {status:?}", open.item_type),
            );
        }
        match open.kind {
            Kind::Message => {
                if let Some(p) = open.parts.iter().position(|p| !p.closed) {
                    return v_err(
                        i,
                        format!("output_item.done while content part {p} is still open (no content_part.done)"),
                    );
                }
                let content = req_array(i, item, "content", ctx)?;
                if content.len() != open.parts.len() {
                    return v_err(
                        i,
                        format!(
                            "{ctx}: content has {} parts but {} were streamed",
                            content.len(),
                            open.parts.len()
                        ),
                    );
                }
                for (k, (c, p)) in content.iter().zip(&open.parts).enumerate() {
                    let pctx = format!("{ctx}.content[{k}]");
                    if c.get("type").and_then(Value::as_str) != Some(p.kind.type_name()) {
                        return v_err(i, format!("{pctx}: type must be `{}`", p.kind.type_name()));
                    }
                    let text = req_str(i, c, p.kind.text_key(), &pctx)?;
                    if Some(text) != p.done.as_deref() {
                        return v_err(
                            i,
                            format!(
                                "{pctx}: {} {} differs from the streamed text {}",
                                p.kind.text_key(),
                                short(text),
                                short(p.done.as_deref().unwrap_or(""))
                            ),
                        );
                    }
                    if p.kind == PartKind::OutputText
                        && req_array(i, c, "annotations", &pctx)? != &p.annotations
                    {
                        return v_err(
                            i,
                            format!("{pctx}: annotations differ from the streamed annotation.added events"),
                        );
                    }
                }
            }
            Kind::Reasoning => {
                if let Some(p) = open.summaries.iter().position(|p| !p.closed) {
                    return v_err(
                        i,
                        format!("output_item.done while summary part {p} is still open (no reasoning_summary_part.done)"),
                    );
                }
                if let Some(p) = open.reasoning_texts.iter().position(|p| p.done.is_none()) {
                    return v_err(
                        i,
                        format!(
                            "output_item.done while reasoning text {p} has no reasoning_text.done"
                        ),
                    );
                }
                let summary = req_array(i, item, "summary", ctx)?;
                let texts: Vec<&str> = summary.iter().map(|s| str_field(s, "text")).collect();
                let want: Vec<&str> = open
                    .summaries
                    .iter()
                    .map(|s| s.done.as_deref().unwrap_or(""))
                    .collect();
                if texts != want
                    || summary
                        .iter()
                        .any(|s| s.get("type").and_then(Value::as_str) != Some("summary_text"))
                {
                    return v_err(
                        i,
                        format!(
                            "{ctx}: summary ({} parts) differs from the {} streamed summary parts",
                            summary.len(),
                            want.len()
                        ),
                    );
                }
                let content = item.get("content").and_then(Value::as_array);
                let got: Vec<&str> = content
                    .map(|c| c.iter().map(|p| str_field(p, "text")).collect())
                    .unwrap_or_default();
                let want: Vec<&str> = open
                    .reasoning_texts
                    .iter()
                    .map(|s| s.done.as_deref().unwrap_or(""))
                    .collect();
                if got != want {
                    return v_err(
                        i,
                        format!("{ctx}: reasoning content differs from the streamed reasoning_text parts"),
                    );
                }
            }
            Kind::FunctionCall | Kind::CustomToolCall => {
                let (field, done_ev) = if open.kind == Kind::FunctionCall {
                    ("arguments", "function_call_arguments.done")
                } else {
                    ("input", "custom_tool_call_input.done")
                };
                if !open.args_done {
                    return v_err(i, format!("output_item.done without a preceding {done_ev}"));
                }
                let got = req_str(i, item, field, ctx)?;
                if got != open.args {
                    return v_err(
                        i,
                        format!(
                            "{ctx}: {field} {} differs from the streamed {}",
                            short(got),
                            short(&open.args)
                        ),
                    );
                }
                self.t.function_calls.push(ToolCallRecord {
                    name: str_field(item, "name").to_string(),
                    call_id: str_field(item, "call_id").to_string(),
                    arguments: got.to_string(),
                    item_type: open.item_type.clone(),
                });
            }
            Kind::Other => {}
        }
        self.done_items.push(item.clone());
        self.next_index += 1;
        Ok(())
    }

    fn sub_event(&mut self, i: usize, v: &Value, ty: &str) -> R<()> {
        let family = if MESSAGE_EVENTS.contains(&ty) {
            Some(Kind::Message)
        } else if REASONING_EVENTS.contains(&ty) {
            Some(Kind::Reasoning)
        } else if FUNCTION_EVENTS.contains(&ty) {
            Some(Kind::FunctionCall)
        } else if CUSTOM_EVENTS.contains(&ty) {
            Some(Kind::CustomToolCall)
        } else {
            None
        };
        let opts = self.opts;
        let t = &mut self.t;
        let open = match self.open.as_mut() {
            Some(o) => o,
            None => return v_err(i, format!("`{ty}` outside of an open output item")),
        };
        let idx = req_u64(i, v, "output_index", ty)?;
        if idx != open.output_index {
            return v_err(
                i,
                format!(
                    "`{ty}` for output_index {idx} while item {} is open (items must not be interleaved)",
                    open.output_index
                ),
            );
        }
        match v.get("item_id") {
            Some(Value::String(id)) if *id == open.id => {}
            Some(other) => {
                return v_err(
                    i,
                    format!(
                        "`{ty}`: item_id {other} does not match the open item's id {:?}",
                        open.id
                    ),
                )
            }
            None if family.is_some() => return v_err(i, format!("`{ty}`: missing `item_id`")),
            None => {}
        }
        match (family, open.kind) {
            (None, Kind::Other) => return Ok(()),
            (Some(f), k) if f == k => {}
            _ => {
                return v_err(
                    i,
                    format!("`{ty}` is not valid inside a `{}` item", open.item_type),
                )
            }
        }
        match open.kind {
            Kind::Message => message_event(i, v, ty, open, t),
            Kind::Reasoning => reasoning_event(i, v, ty, open, t),
            Kind::FunctionCall | Kind::CustomToolCall => {
                let (delta_ty, field) = if open.kind == Kind::FunctionCall {
                    ("response.function_call_arguments.delta", "arguments")
                } else {
                    ("response.custom_tool_call_input.delta", "input")
                };
                if open.args_done {
                    return v_err(i, format!("`{ty}` after the arguments/input were done"));
                }
                if ty == delta_ty {
                    let d = req_str(i, v, "delta", ty)?;
                    open.args.push_str(d);
                    return Ok(());
                }
                let done = req_str(i, v, field, ty)?;
                if done != open.args {
                    return v_err(
                        i,
                        format!(
                            "`{ty}`: {field} {} does not equal the concatenation of its deltas {}",
                            short(done),
                            short(&open.args)
                        ),
                    );
                }
                if open.kind == Kind::FunctionCall {
                    let item_name = str_field(&open.added, "name");
                    match v.get("name") {
                        Some(Value::String(n)) if n == item_name => {}
                        Some(other) => {
                            return v_err(
                                i,
                                format!(
                                "`{ty}`: name {other} differs from the item's name {item_name:?}"
                            ),
                            )
                        }
                        None if opts.require_arguments_done_name => {
                            return v_err(
                                i,
                                format!("`{ty}`: missing `name` (required by the spec)"),
                            )
                        }
                        None => {}
                    }
                }
                open.args_done = true;
                Ok(())
            }
            Kind::Other => Ok(()),
        }
    }
}

fn message_event(
    i: usize,
    v: &Value,
    ty: &str,
    open: &mut OpenItem,
    t: &mut ResponsesTranscript,
) -> R<()> {
    let ci = req_u64(i, v, "content_index", ty)? as usize;
    if ty == "response.content_part.added" {
        if ci != open.parts.len() {
            return v_err(
                i,
                format!(
                    "content_part.added with content_index {ci}, expected {} (0, 1, … in order)",
                    open.parts.len()
                ),
            );
        }
        if let Some(p) = open.parts.iter().position(|p| !p.closed) {
            return v_err(
                i,
                format!("content_part.added while part {p} is still open (parts must not be interleaved)"),
            );
        }
        let part = req_obj(i, v, "part", ty)?;
        let kind = match part.get("type").and_then(Value::as_str) {
            Some("output_text") => PartKind::OutputText,
            Some("refusal") => PartKind::Refusal,
            other => {
                return v_err(
                    i,
                    format!(
                        "content_part.added: part type {other:?} is not output_text or refusal"
                    ),
                )
            }
        };
        if !req_str(i, part, kind.text_key(), "content_part.added.part")?.is_empty() {
            return v_err(i, "content_part.added: the added part must be empty");
        }
        if kind == PartKind::OutputText
            && !req_array(i, part, "annotations", "content_part.added.part")?.is_empty()
        {
            return v_err(
                i,
                "content_part.added: the added part must have no annotations",
            );
        }
        open.parts.push(Part {
            kind,
            acc: String::new(),
            done: None,
            annotations: Vec::new(),
            closed: false,
        });
        return Ok(());
    }
    let part = match open.parts.get_mut(ci) {
        Some(p) if !p.closed => p,
        Some(_) => {
            return v_err(
                i,
                format!("`{ty}` for content_index {ci} after its content_part.done"),
            )
        }
        None => {
            return v_err(
                i,
                format!("`{ty}` for content_index {ci} before its content_part.added"),
            )
        }
    };
    let want_kind = match ty {
        "response.output_text.delta"
        | "response.output_text.done"
        | "response.output_text.annotation.added" => Some(PartKind::OutputText),
        "response.refusal.delta" | "response.refusal.done" => Some(PartKind::Refusal),
        _ => None,
    };
    if let Some(k) = want_kind {
        if k != part.kind {
            return v_err(
                i,
                format!("`{ty}` on a `{}` content part", part.kind.type_name()),
            );
        }
    }
    match ty {
        "response.output_text.delta" | "response.refusal.delta" => {
            if part.done.is_some() {
                return v_err(i, format!("`{ty}` after the part's text was done"));
            }
            let d = req_str(i, v, "delta", ty)?;
            if ty == "response.output_text.delta" {
                req_array(i, v, "logprobs", ty)?;
                t.text.push_str(d);
            } else {
                t.refusal.push_str(d);
            }
            part.acc.push_str(d);
        }
        "response.output_text.annotation.added" => {
            let ai = req_u64(i, v, "annotation_index", ty)? as usize;
            if ai != part.annotations.len() {
                return v_err(
                    i,
                    format!("annotation_index {ai}, expected {}", part.annotations.len()),
                );
            }
            part.annotations
                .push(req_obj(i, v, "annotation", ty)?.clone());
        }
        "response.output_text.done" | "response.refusal.done" => {
            if part.done.is_some() {
                return v_err(i, format!("duplicate `{ty}`"));
            }
            let key = part.kind.text_key();
            let text = req_str(i, v, key, ty)?;
            if ty == "response.output_text.done" {
                req_array(i, v, "logprobs", ty)?;
            }
            if text != part.acc {
                return v_err(
                    i,
                    format!(
                        "`{ty}`: {key} {} does not equal the concatenation of its deltas {}",
                        short(text),
                        short(&part.acc)
                    ),
                );
            }
            part.done = Some(text.to_string());
        }
        "response.content_part.done" => {
            let done = match &part.done {
                Some(d) => d,
                None => {
                    return v_err(
                        i,
                        format!(
                            "content_part.done before {}.done",
                            if part.kind == PartKind::OutputText {
                                "output_text"
                            } else {
                                "refusal"
                            }
                        ),
                    )
                }
            };
            let p = req_obj(i, v, "part", ty)?;
            if p.get("type").and_then(Value::as_str) != Some(part.kind.type_name()) {
                return v_err(
                    i,
                    format!(
                        "content_part.done: part type must be `{}`",
                        part.kind.type_name()
                    ),
                );
            }
            let text = req_str(i, p, part.kind.text_key(), "content_part.done.part")?;
            if text != done {
                return v_err(
                    i,
                    format!(
                        "content_part.done: part text {} differs from the done text {}",
                        short(text),
                        short(done)
                    ),
                );
            }
            if part.kind == PartKind::OutputText
                && req_array(i, p, "annotations", "content_part.done.part")? != &part.annotations
            {
                return v_err(
                    i,
                    "content_part.done: annotations differ from the annotation.added events",
                );
            }
            part.closed = true;
        }
        _ => unreachable!("message family"),
    }
    Ok(())
}

fn reasoning_event(
    i: usize,
    v: &Value,
    ty: &str,
    open: &mut OpenItem,
    t: &mut ResponsesTranscript,
) -> R<()> {
    if ty.starts_with("response.reasoning_text.") {
        let ci = req_u64(i, v, "content_index", ty)? as usize;
        if ci == open.reasoning_texts.len() {
            if let Some(p) = open.summaries.iter().position(|p| !p.closed) {
                return v_err(i, format!("`{ty}` while summary part {p} is still open"));
            }
            if open.reasoning_texts.iter().any(|p| p.done.is_none()) {
                return v_err(
                    i,
                    format!("`{ty}` for content_index {ci} while the previous reasoning text is not done"),
                );
            }
            open.reasoning_texts.push(TextPart::default());
        } else if ci + 1 != open.reasoning_texts.len() {
            return v_err(
                i,
                format!(
                    "`{ty}` for content_index {ci}, expected {} (0, 1, … in order)",
                    open.reasoning_texts.len()
                ),
            );
        }
        let part = open.reasoning_texts.last_mut().expect("pushed above");
        if part.done.is_some() {
            return v_err(i, format!("`{ty}` after reasoning_text.done"));
        }
        if ty == "response.reasoning_text.delta" {
            let d = req_str(i, v, "delta", ty)?;
            part.acc.push_str(d);
            t.reasoning.push_str(d);
        } else {
            let text = req_str(i, v, "text", ty)?;
            if text != part.acc {
                return v_err(
                    i,
                    format!(
                        "reasoning_text.done text {} does not equal the concatenation of its deltas {}",
                        short(text),
                        short(&part.acc)
                    ),
                );
            }
            part.done = Some(text.to_string());
        }
        return Ok(());
    }

    let si = req_u64(i, v, "summary_index", ty)? as usize;
    if ty == "response.reasoning_summary_part.added" {
        if si != open.summaries.len() {
            return v_err(
                i,
                format!(
                    "reasoning_summary_part.added with summary_index {si}, expected {} (0, 1, … in order)",
                    open.summaries.len()
                ),
            );
        }
        if let Some(p) = open.summaries.iter().position(|p| !p.closed) {
            return v_err(
                i,
                format!("reasoning_summary_part.added while summary part {p} is still open"),
            );
        }
        if open.reasoning_texts.iter().any(|p| p.done.is_none()) {
            return v_err(
                i,
                "reasoning_summary_part.added while a reasoning text is not done",
            );
        }
        let part = req_obj(i, v, "part", ty)?;
        if part.get("type").and_then(Value::as_str) != Some("summary_text")
            || !req_str(i, part, "text", "reasoning_summary_part.added.part")?.is_empty()
        {
            return v_err(
                i,
                "reasoning_summary_part.added: part must be {\"type\":\"summary_text\",\"text\":\"\"}",
            );
        }
        open.summaries.push(TextPart::default());
        return Ok(());
    }
    let part = match open.summaries.get_mut(si) {
        Some(p) if !p.closed => p,
        Some(_) => {
            return v_err(
                i,
                format!("`{ty}` for summary_index {si} after its reasoning_summary_part.done"),
            )
        }
        None => {
            return v_err(
                i,
                format!("`{ty}` for summary_index {si} before its reasoning_summary_part.added"),
            )
        }
    };
    match ty {
        "response.reasoning_summary_text.delta" => {
            if part.done.is_some() {
                return v_err(i, format!("`{ty}` after reasoning_summary_text.done"));
            }
            let d = req_str(i, v, "delta", ty)?;
            part.acc.push_str(d);
            t.reasoning.push_str(d);
        }
        "response.reasoning_summary_text.done" => {
            if part.done.is_some() {
                return v_err(i, format!("duplicate `{ty}`"));
            }
            let text = req_str(i, v, "text", ty)?;
            if text != part.acc {
                return v_err(
                    i,
                    format!(
                        "reasoning_summary_text.done text {} does not equal the concatenation of its deltas {}",
                        short(text),
                        short(&part.acc)
                    ),
                );
            }
            part.done = Some(text.to_string());
        }
        "response.reasoning_summary_part.done" => {
            let done = match &part.done {
                Some(d) => d,
                None => {
                    return v_err(
                        i,
                        "reasoning_summary_part.done before reasoning_summary_text.done",
                    )
                }
            };
            let p = req_obj(i, v, "part", ty)?;
            let text = req_str(i, p, "text", "reasoning_summary_part.done.part")?;
            if p.get("type").and_then(Value::as_str) != Some("summary_text") || text != done {
                return v_err(
                    i,
                    format!(
                        "reasoning_summary_part.done: part must be summary_text with the done text {}, got {}",
                        short(done),
                        short(text)
                    ),
                );
            }
            part.closed = true;
        }
        _ => unreachable!("reasoning family"),
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Lenient extraction from recorded upstream streams and bodies.
// ---------------------------------------------------------------------------

/// The content of a recorded upstream Responses stream, extracted leniently:
/// the expected content to compare a translation against.
///
/// Tolerates missing `sequence_number`s, rotating ids (GitHub Copilot),
/// trimmed streams whose deltas do not add up to the done text (the `.done`
/// events and the terminal `response.output` are the truth, not the deltas),
/// hosted items (`web_search_call`, …), unknown events and bad JSON frames.
///
/// * `response_id`: the first lifecycle event's `response.id`;
/// * content (`text`, `refusal`, `reasoning`, `function_calls`) from the
///   terminal event's `response.output` when non-empty, else from the items
///   rebuilt from the events (`output_item.done` items, else `.done` events,
///   else concatenated deltas) — so a stream cut off mid-item still counts;
/// * `output`: the terminal `response.output`, else the rebuilt items;
/// * `error`: an `error` event's nested `error` (or its flat
///   `code`/`message`/`param`), else the terminal `response.error`.
pub fn transcript_of_recorded(frames: &[SseFrame]) -> ResponsesTranscript {
    let events: Vec<Value> = frames
        .iter()
        .filter_map(|f| serde_json::from_str::<Value>(&f.data).ok())
        .filter(Value::is_object)
        .collect();
    let mut t = ResponsesTranscript::default();
    let mut terminal: Option<(&str, &Value)> = None;
    for e in &events {
        let ty = str_field(e, "type");
        if let Some(resp) = e.get("response").filter(|r| r.is_object()) {
            if t.response_id.is_empty() {
                t.response_id = str_field(resp, "id").to_string();
            }
            if let Some(s) = resp.get("status").and_then(Value::as_str) {
                t.status = s.to_string();
            }
            if matches!(
                ty,
                "response.completed" | "response.incomplete" | "response.failed"
            ) {
                terminal = Some((ty, resp));
            }
        }
        if ty == "error" && t.error.is_none() {
            t.error = Some(match e.get("error") {
                Some(err @ Value::Object(_)) => err.clone(),
                _ => json!({
                    "type": e.get("type").cloned().unwrap_or(Value::Null),
                    "code": e.get("code").cloned().unwrap_or(Value::Null),
                    "message": e.get("message").cloned().unwrap_or(Value::Null),
                    "param": e.get("param").cloned().unwrap_or(Value::Null),
                }),
            });
        }
    }
    let rebuilt = rebuild_items(&events);
    let mut items = rebuilt.clone();
    if let Some((ty, resp)) = terminal {
        if t.status.is_empty() || resp.get("status").is_none() {
            t.status = ty.trim_start_matches("response.").to_string();
        }
        if let Some(u) = resp.get("usage").filter(|u| !u.is_null()) {
            t.usage = Some(u.clone());
        }
        if t.error.is_none() {
            t.error = resp.get("error").filter(|e| !e.is_null()).cloned();
        }
        t.incomplete_reason = resp
            .get("incomplete_details")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let out = resp
            .get("output")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !out.is_empty() {
            items = out.clone();
        }
        t.output = out;
    } else {
        t.output = rebuilt;
    }
    absorb_output_items(&mut t, &items);
    t
}

/// Rebuild complete output items from stream events, in `output_index` order
/// (falling back to arrival order when `output_index` is missing).
fn rebuild_items(events: &[Value]) -> Vec<Value> {
    #[derive(Default)]
    struct Acc {
        added: Option<Value>,
        done: Option<Value>,
        // (content_index -> (kind, deltas, done text))
        parts: BTreeMap<u64, (String, String, Option<String>)>,
        summaries: BTreeMap<u64, (String, Option<String>)>,
        rtexts: BTreeMap<u64, (String, Option<String>)>,
        args: String,
        args_done: Option<String>,
        name: Option<String>,
    }
    let mut items: BTreeMap<u64, Acc> = BTreeMap::new();
    let mut last_index = 0u64;
    for e in events {
        let ty = str_field(e, "type");
        let idx = match e.get("output_index").and_then(Value::as_u64) {
            Some(i) => {
                last_index = i;
                i
            }
            None if e.get("item_id").is_some() || e.get("item").is_some() => last_index,
            None => continue,
        };
        let acc = items.entry(idx).or_default();
        let ci = e.get("content_index").and_then(Value::as_u64).unwrap_or(0);
        let si = e.get("summary_index").and_then(Value::as_u64).unwrap_or(0);
        let s = |k: &str| str_field(e, k).to_string();
        match ty {
            "response.output_item.added" => acc.added = e.get("item").cloned(),
            "response.output_item.done" => acc.done = e.get("item").cloned(),
            "response.content_part.added" => {
                let kind = e
                    .get("part")
                    .map(|p| str_field(p, "type").to_string())
                    .unwrap_or_else(|| "output_text".into());
                acc.parts.entry(ci).or_insert((kind, String::new(), None));
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let kind = if ty == "response.output_text.delta" {
                    "output_text"
                } else {
                    "refusal"
                };
                acc.parts
                    .entry(ci)
                    .or_insert((kind.to_string(), String::new(), None))
                    .1
                    .push_str(str_field(e, "delta"));
            }
            "response.output_text.done" => {
                acc.parts
                    .entry(ci)
                    .or_insert(("output_text".into(), String::new(), None))
                    .2 = Some(s("text"));
            }
            "response.refusal.done" => {
                acc.parts
                    .entry(ci)
                    .or_insert(("refusal".into(), String::new(), None))
                    .2 = Some(s("refusal"));
            }
            "response.reasoning_summary_text.delta" => acc
                .summaries
                .entry(si)
                .or_default()
                .0
                .push_str(str_field(e, "delta")),
            "response.reasoning_summary_text.done" => {
                acc.summaries.entry(si).or_default().1 = Some(s("text"))
            }
            "response.reasoning_text.delta" => acc
                .rtexts
                .entry(ci)
                .or_default()
                .0
                .push_str(str_field(e, "delta")),
            "response.reasoning_text.done" => acc.rtexts.entry(ci).or_default().1 = Some(s("text")),
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                acc.args.push_str(str_field(e, "delta"))
            }
            "response.function_call_arguments.done" => {
                acc.args_done = Some(s("arguments"));
                if let Some(n) = e.get("name").and_then(Value::as_str) {
                    acc.name = Some(n.to_string());
                }
            }
            "response.custom_tool_call_input.done" => acc.args_done = Some(s("input")),
            _ => {}
        }
    }
    items
        .into_values()
        .filter_map(|acc| {
            if let Some(done) = acc.done {
                return Some(done);
            }
            let mut item = acc.added?;
            let pick = |d: &(String, Option<String>)| d.1.clone().unwrap_or_else(|| d.0.clone());
            match str_field(&item, "type") {
                "message" => {
                    let content: Vec<Value> = acc
                        .parts
                        .values()
                        .map(|(kind, deltas, done)| {
                            let text = done.clone().unwrap_or_else(|| deltas.clone());
                            if kind == "refusal" {
                                json!({"type": "refusal", "refusal": text})
                            } else {
                                json!({"type": "output_text", "text": text, "annotations": []})
                            }
                        })
                        .collect();
                    item["content"] = Value::Array(content);
                }
                "reasoning" => {
                    item["summary"] = acc
                        .summaries
                        .values()
                        .map(|d| json!({"type": "summary_text", "text": pick(d)}))
                        .collect();
                    if !acc.rtexts.is_empty() {
                        item["content"] = acc
                            .rtexts
                            .values()
                            .map(|d| json!({"type": "reasoning_text", "text": pick(d)}))
                            .collect();
                    }
                }
                "function_call" => {
                    item["arguments"] = Value::String(acc.args_done.unwrap_or(acc.args));
                    if let Some(n) = acc.name {
                        if str_field(&item, "name").is_empty() {
                            item["name"] = Value::String(n);
                        }
                    }
                }
                "custom_tool_call" => {
                    item["input"] = Value::String(acc.args_done.unwrap_or(acc.args));
                }
                _ => {}
            }
            Some(item)
        })
        .collect()
}

/// The content of a non-streaming Responses body (a `Response` object), or of
/// an HTTP error body `{"error": {...}}` (then only `error` is set).
pub fn responses_body_transcript(body: &Value) -> ResponsesTranscript {
    let mut t = ResponsesTranscript {
        response_id: str_field(body, "id").to_string(),
        status: str_field(body, "status").to_string(),
        usage: body.get("usage").filter(|u| !u.is_null()).cloned(),
        error: body.get("error").filter(|e| !e.is_null()).cloned(),
        incomplete_reason: body
            .get("incomplete_details")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_string),
        output: body
            .get("output")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        ..Default::default()
    };
    let items = t.output.clone();
    absorb_output_items(&mut t, &items);
    t
}
