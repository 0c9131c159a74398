//! Output items as the client gets them: under the bridge's ids, with
//! reasoning text shown as a summary where the client asked for one.

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::OutputItem;
use wirebridge_wire::RawObject;

use wirebridge_wire::raw::JsonText;

use super::NativeContext;
use crate::summary::ToolCallSummary;

/// The id prefix the API uses for an item of type `kind`.
pub(super) fn prefix(kind: &str) -> &'static str {
    match kind {
        "message" => "msg",
        "function_call" => "fc",
        "custom_tool_call" => "ctc",
        "reasoning" => "rs",
        "web_search_call" => "ws",
        "file_search_call" => "fs",
        "compaction" => "cmp",
        _ => "item",
    }
}

/// The item at `output_index` of the response, rewritten: its id is the
/// bridge's; with [`NativeContext::summary`] a reasoning item's
/// `reasoning_text` parts become one summary part; with
/// [`NativeContext::seal`] a finished reasoning item without
/// `encrypted_content` gets the bridge's. `done` says whether the item is
/// finished (a reasoning item being added has no summary yet).
///
/// An item that is not a JSON object is an error naming it.
pub(super) fn rewrite(
    raw: &RawValue,
    ctx: &NativeContext,
    output_index: usize,
    done: bool,
) -> Result<Box<RawValue>, String> {
    let mut item = RawObject::parse(raw)
        .map_err(|_| format!("the upstream sent an output item that is not an object: {raw}"))?;
    let kind = item.str("type").unwrap_or_default().to_owned();
    let id = ctx.ids.item(prefix(&kind), output_index);
    item.set(
        "id",
        &serde_json::to_string(&id).expect("strings serialize"),
    );
    if kind != "reasoning" {
        return Ok(item.to_raw());
    }
    let text = reasoning_text(item.get("content"));
    if let (true, Some(seal)) = (done, &ctx.seal) {
        let unsealed = item
            .get("encrypted_content")
            .is_none_or(|e| e.get() == "null");
        let sealable = text.clone().or_else(|| summary_text(item.get("summary")));
        if let (true, Some(sealable)) = (unsealed, sealable) {
            let sealed = seal.reasoning(&JsonText::from_text(&sealable));
            item.set(
                "encrypted_content",
                &serde_json::to_string(&sealed).expect("strings serialize"),
            );
        }
    }
    if ctx.summary {
        let has_summary = item
            .get("summary")
            .is_some_and(|s| !matches!(s.get().trim(), "null" | "[]"));
        if !has_summary {
            let parts = match (done, text) {
                (true, Some(text)) => format!(
                    r#"[{{"type":"summary_text","text":{}}}]"#,
                    serde_json::to_string(&text).expect("strings serialize")
                ),
                _ => "[]".to_owned(),
            };
            item.set("summary", &parts);
        }
        item.remove("content");
    }
    Ok(item.to_raw())
}

/// A finished item as it is announced before its content: what
/// `response.output_item.added` carries for an item the backend only sent
/// whole.
pub(super) fn announced(raw: &RawValue) -> Box<RawValue> {
    let Ok(mut item) = RawObject::parse(raw) else {
        return raw.to_owned();
    };
    if item.get("status").is_some() {
        item.set("status", "\"in_progress\"");
    }
    match item.str("type") {
        Some("message") => item.set("content", "[]"),
        Some("reasoning") => {
            item.set("summary", "[]");
            item.remove("content");
        }
        Some("function_call") => item.set("arguments", "\"\""),
        Some("custom_tool_call") => item.set("input", "\"\""),
        _ => {}
    }
    item.to_raw()
}

/// The text of an item's `reasoning_text` parts, joined; `None` when it
/// has none.
pub(super) fn reasoning_text(content: Option<&RawValue>) -> Option<String> {
    part_texts(content, "reasoning_text")
}

/// The text of an item's `summary_text` parts, joined.
fn summary_text(summary: Option<&RawValue>) -> Option<String> {
    part_texts(summary, "summary_text")
}

/// The text of the parts of one type, joined; `None` when there are none.
fn part_texts(parts: Option<&RawValue>, kind: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Part {
        #[serde(rename = "type")]
        kind: Option<String>,
        text: Option<String>,
    }
    let parts: Vec<Part> = serde_json::from_str(parts?.get()).ok()?;
    let texts: Vec<String> = parts
        .into_iter()
        .filter(|p| p.kind.as_deref() == Some(kind))
        .filter_map(|p| p.text)
        .collect();
    (!texts.is_empty()).then(|| texts.concat())
}

/// The tool call an item is, for the reply's summary.
pub(super) fn tool_call(raw: &RawValue) -> Option<ToolCallSummary> {
    // Most items are no call: their type, read in one pass, says so.
    let kind = RawObject::parse(raw).ok()?;
    if !matches!(kind.str("type"), Some("function_call" | "custom_tool_call")) {
        return None;
    }
    let item: OutputItem<'_> = serde_json::from_str(raw.get()).ok()?;
    let argument_bytes = match item.kind() {
        "function_call" => item.arguments.map(|a| a.get().len()).unwrap_or_default(),
        "custom_tool_call" => item.input.map(|i| i.raw().get().len()).unwrap_or_default(),
        _ => return None,
    };
    Some(ToolCallSummary {
        name: item.name.as_deref().unwrap_or_default().to_owned(),
        call_id: item.call_id.as_deref().unwrap_or_default().to_owned(),
        argument_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ResponseIds;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[test]
    fn an_item_takes_the_bridges_id() {
        let ctx = NativeContext::default();
        let ids = &ctx.ids;
        let item = rewrite(
            &raw(r#"{"type":"function_call","id":"upstream","call_id":"c","name":"f","arguments":"{}"}"#),
            &ctx,
            2,
            true,
        )
        .unwrap();
        let item: serde_json::Value = serde_json::from_str(item.get()).unwrap();
        assert_eq!(item["id"], ids.item("fc", 2));
        assert_eq!(item["call_id"], "c");
        assert_eq!(
            ResponseIds::response_of(item["id"].as_str().unwrap()),
            Some(ids.response())
        );
    }

    fn summary_ctx(summary: bool) -> NativeContext {
        NativeContext {
            summary,
            ..NativeContext::default()
        }
    }

    #[test]
    fn reasoning_text_becomes_a_summary_when_asked() {
        let upstream = raw(
            r#"{"type":"reasoning","id":"r","summary":[],"content":[{"type":"reasoning_text","text":"Think"},{"type":"reasoning_text","text":"ing."}]}"#,
        );
        let done = rewrite(&upstream, &summary_ctx(true), 0, true).unwrap();
        let done: serde_json::Value = serde_json::from_str(done.get()).unwrap();
        assert_eq!(
            done["summary"],
            serde_json::json!([{"type":"summary_text","text":"Thinking."}])
        );
        assert!(done.get("content").is_none());
        let added = rewrite(&upstream, &summary_ctx(true), 0, false).unwrap();
        let added: serde_json::Value = serde_json::from_str(added.get()).unwrap();
        assert_eq!(added["summary"], serde_json::json!([]));
        // Without a summary asked for, the text stays as the backend wrote it.
        let kept = rewrite(&upstream, &summary_ctx(false), 0, true).unwrap();
        let kept: serde_json::Value = serde_json::from_str(kept.get()).unwrap();
        assert_eq!(kept["content"][1]["text"], "ing.");
    }

    #[test]
    fn an_item_that_is_not_an_object_is_named() {
        let err = rewrite(&raw("[1]"), &NativeContext::default(), 0, true).unwrap_err();
        assert!(err.contains("[1]"));
    }
}
