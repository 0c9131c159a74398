//! Hand-built streams for shapes the recordings do not cover.

use crate::common::*;
use serde_json::{json, Value};

/// The id of every hand-built response.
pub(crate) const RID: &str = "resp_test";

/// `response.created` and `response.in_progress`.
pub(crate) fn lifecycle_start() -> Vec<Value> {
    vec![
        json!({"type": "response.created", "response": response_obj(RID, "in_progress", vec![])}),
        json!({"type": "response.in_progress", "response": response_obj(RID, "in_progress", vec![])}),
    ]
}

/// A complete `usage` object.
pub(crate) fn usage() -> Value {
    json!({"input_tokens": 5, "input_tokens_details": {"cached_tokens": 0},
           "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 2},
           "total_tokens": 12})
}

/// `response.completed` with `output` and [`usage`].
pub(crate) fn completed(output: Vec<Value>) -> Value {
    let mut r = response_obj(RID, "completed", output);
    r["usage"] = usage();
    json!({"type": "response.completed", "response": r})
}

/// A message item (index `oi`) with an output_text part and a refusal part.
pub(crate) fn message_events(
    oi: u64,
    id: &str,
    text: &[&str],
    refusal: &[&str],
) -> (Vec<Value>, Value) {
    let full: String = text.concat();
    let full_refusal: String = refusal.concat();
    let mut ev = vec![
        json!({"type": "response.output_item.added", "output_index": oi,
        "item": {"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
    ];
    ev.push(json!({"type": "response.content_part.added", "output_index": oi, "item_id": id,
        "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}));
    for d in text {
        ev.push(
            json!({"type": "response.output_text.delta", "output_index": oi, "item_id": id,
            "content_index": 0, "delta": d, "logprobs": []}),
        );
    }
    ev.push(
        json!({"type": "response.output_text.done", "output_index": oi, "item_id": id,
        "content_index": 0, "text": full, "logprobs": []}),
    );
    let part0 = json!({"type": "output_text", "text": full, "annotations": [], "logprobs": []});
    ev.push(
        json!({"type": "response.content_part.done", "output_index": oi, "item_id": id,
        "content_index": 0, "part": part0}),
    );
    ev.push(
        json!({"type": "response.content_part.added", "output_index": oi, "item_id": id,
        "content_index": 1, "part": {"type": "refusal", "refusal": ""}}),
    );
    for d in refusal {
        ev.push(
            json!({"type": "response.refusal.delta", "output_index": oi, "item_id": id,
            "content_index": 1, "delta": d}),
        );
    }
    ev.push(
        json!({"type": "response.refusal.done", "output_index": oi, "item_id": id,
        "content_index": 1, "refusal": full_refusal}),
    );
    let part1 = json!({"type": "refusal", "refusal": full_refusal});
    ev.push(
        json!({"type": "response.content_part.done", "output_index": oi, "item_id": id,
        "content_index": 1, "part": part1}),
    );
    let item = json!({"id": id, "type": "message", "status": "completed", "role": "assistant",
        "content": [part0, part1]});
    ev.push(json!({"type": "response.output_item.done", "output_index": oi, "item": item}));
    (ev, item)
}

/// A reasoning item with one summary part and one reasoning_text part.
pub(crate) fn reasoning_events(oi: u64, id: &str) -> (Vec<Value>, Value) {
    let mut ev = vec![
        json!({"type": "response.output_item.added", "output_index": oi,
        "item": {"id": id, "type": "reasoning", "summary": []}}),
    ];
    ev.push(
        json!({"type": "response.reasoning_summary_part.added", "output_index": oi, "item_id": id,
        "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
    );
    for d in ["Thinking ", "hard."] {
        ev.push(
            json!({"type": "response.reasoning_summary_text.delta", "output_index": oi,
            "item_id": id, "summary_index": 0, "delta": d}),
        );
    }
    ev.push(
        json!({"type": "response.reasoning_summary_text.done", "output_index": oi, "item_id": id,
        "summary_index": 0, "text": "Thinking hard."}),
    );
    ev.push(
        json!({"type": "response.reasoning_summary_part.done", "output_index": oi, "item_id": id,
        "summary_index": 0, "part": {"type": "summary_text", "text": "Thinking hard."}}),
    );
    for d in ["raw ", "thoughts"] {
        ev.push(
            json!({"type": "response.reasoning_text.delta", "output_index": oi, "item_id": id,
            "content_index": 0, "delta": d}),
        );
    }
    ev.push(
        json!({"type": "response.reasoning_text.done", "output_index": oi, "item_id": id,
        "content_index": 0, "text": "raw thoughts"}),
    );
    let item = json!({"id": id, "type": "reasoning", "status": "completed",
        "summary": [{"type": "summary_text", "text": "Thinking hard."}],
        "content": [{"type": "reasoning_text", "text": "raw thoughts"}]});
    ev.push(json!({"type": "response.output_item.done", "output_index": oi, "item": item}));
    (ev, item)
}

/// A custom tool call item whose input arrives in two deltas.
pub(crate) fn custom_tool_events(oi: u64, id: &str) -> (Vec<Value>, Value) {
    let mut ev = vec![
        json!({"type": "response.output_item.added", "output_index": oi,
        "item": {"id": id, "type": "custom_tool_call", "status": "in_progress",
                 "call_id": "call_custom", "name": "apply_patch", "input": ""}}),
    ];
    for d in ["*** Begin", " Patch"] {
        ev.push(
            json!({"type": "response.custom_tool_call_input.delta", "output_index": oi,
            "item_id": id, "delta": d}),
        );
    }
    ev.push(
        json!({"type": "response.custom_tool_call_input.done", "output_index": oi,
        "item_id": id, "input": "*** Begin Patch"}),
    );
    let item = json!({"id": id, "type": "custom_tool_call", "status": "completed",
        "call_id": "call_custom", "name": "apply_patch", "input": "*** Begin Patch"});
    ev.push(json!({"type": "response.output_item.done", "output_index": oi, "item": item}));
    (ev, item)
}

/// A function call item whose arguments arrive in two deltas; the
/// arguments done event names the function when `with_name`.
pub(crate) fn function_events(oi: u64, id: &str, with_name: bool) -> (Vec<Value>, Value) {
    let mut ev = vec![
        json!({"type": "response.output_item.added", "output_index": oi,
        "item": {"id": id, "type": "function_call", "status": "in_progress",
                 "call_id": "call_1", "name": "get_weather", "arguments": ""}}),
    ];
    for d in ["{\"city\":", "\"Paris\"}"] {
        ev.push(
            json!({"type": "response.function_call_arguments.delta", "output_index": oi,
            "item_id": id, "delta": d}),
        );
    }
    let mut done = json!({"type": "response.function_call_arguments.done", "output_index": oi,
        "item_id": id, "arguments": "{\"city\":\"Paris\"}"});
    if with_name {
        done["name"] = json!("get_weather");
    }
    ev.push(done);
    let item = json!({"id": id, "type": "function_call", "status": "completed",
        "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"});
    ev.push(json!({"type": "response.output_item.done", "output_index": oi, "item": item}));
    (ev, item)
}
