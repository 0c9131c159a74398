//! Output items of a reply: the partial shapes of `output_item.added` and
//! the complete shapes of `output_item.done` and `response.output`.

use crate::json::{Json, Obj};
use crate::script::{PlannedCall, Reply};

/// `{"type": "summary_text", "text": …}`.
pub(crate) fn summary_part(text: &str) -> Obj {
    Obj::new().with("type", "summary_text").with("text", text)
}

/// `{"type": "output_text", "annotations": [], "logprobs": [], "text": …}`.
pub(crate) fn output_text_part(text: &str) -> Obj {
    Obj::new()
        .with("type", "output_text")
        .with("annotations", Json::Arr(Vec::new()))
        .with("logprobs", Json::Arr(Vec::new()))
        .with("text", text)
}

/// A reasoning item; partial (`summary: []`) when `summary` is `None`.
pub(crate) fn reasoning(id: &str, summary: Option<&str>) -> Obj {
    let parts = summary.map(|text| Json::from(summary_part(text)));
    Obj::new()
        .with("id", id)
        .with("type", "reasoning")
        .with("summary", Json::Arr(parts.into_iter().collect()))
}

/// A message item; partial (`status: in_progress`, `content: []`) when
/// `text` is `None`.
pub(crate) fn message(id: &str, text: Option<&str>, complete: bool) -> Obj {
    let (status, content) = match text {
        None => ("in_progress", Vec::new()),
        Some(t) => (
            if complete { "completed" } else { "incomplete" },
            vec![Json::from(output_text_part(t))],
        ),
    };
    Obj::new()
        .with("id", id)
        .with("type", "message")
        .with("status", status)
        .with("content", Json::Arr(content))
        .with("role", "assistant")
}

/// A function call item; partial (`status: in_progress`, `arguments: ""`)
/// when `done` is false.
pub(crate) fn function_call(call: &PlannedCall, done: bool) -> Obj {
    let (status, arguments) = match (done, call.complete) {
        (false, _) => ("in_progress", String::new()),
        (true, true) => ("completed", call.arguments()),
        (true, false) => ("incomplete", call.arguments()),
    };
    Obj::new()
        .with("id", &call.item_id)
        .with("type", "function_call")
        .with("status", status)
        .with("arguments", arguments)
        .with("call_id", &call.call_id)
        .with("name", &call.name)
}

/// Every complete output item of a reply, in output order: reasoning (when
/// there is any), then the message (when there is text) or the calls.
pub(crate) fn complete_items(r: &Reply<'_>) -> Vec<Json> {
    let plan = r.plan;
    let mut items = Vec::new();
    if !plan.reasoning.is_empty() {
        items.push(reasoning(&r.ids.reasoning(), Some(&plan.reasoning.concat())).into());
    }
    if !plan.text.is_empty() {
        let text = plan.text.concat();
        items.push(message(&r.ids.message(), Some(&text), plan.text_complete).into());
    }
    items.extend(
        plan.calls
            .iter()
            .map(|c| Json::from(function_call(c, true))),
    );
    items
}
