//! Items as a conversation keeps them: every item a full object of the
//! API's `ConversationItem` shapes, with its `type`, its `id` and, for a
//! message, its `status` and a list of content parts.
//!
//! Clients add items in the short forms `input` accepts (`{"role": "user",
//! "content": "Hi"}`); a conversation lists them back in full, as the API
//! does, so that the SDKs' item types read them. Nothing here is lost: a
//! short form has one full form.

use serde_json::value::RawValue;
use wirebridge_wire::{JsonStr, RawObject};

use crate::error::ConvertError;
use crate::ids::ResponseIds;

/// One item to keep in a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationItem {
    /// Its id, given by the client or made here.
    pub id: String,
    /// The item, a JSON object in full form.
    pub item: String,
}

/// The items of the JSON array `items` in full form, each with an id (one
/// made from `ids` for an item sent without): the items a client adds to a
/// conversation, or a turn's input and output. `param` names the array in
/// errors (`items`, `input`).
///
/// ```
/// use wirebridge_convert::conversation::conversation_items;
/// use wirebridge_convert::ids::ResponseIds;
///
/// let items = conversation_items(r#"[{"role":"user","content":"Hi"}]"#, &ResponseIds::new(), "items").unwrap();
/// let item: serde_json::Value = serde_json::from_str(&items[0].item).unwrap();
/// assert_eq!(item["type"], "message");
/// assert_eq!(item["status"], "completed");
/// assert_eq!(item["content"][0]["type"], "input_text");
/// assert_eq!(item["content"][0]["text"], "Hi");
/// assert_eq!(item["id"], items[0].id.as_str());
/// ```
pub fn conversation_items(
    items: &str,
    ids: &ResponseIds,
    param: &str,
) -> Result<Vec<ConversationItem>, ConvertError> {
    let raws: Vec<&RawValue> = serde_json::from_str(items).map_err(|e| {
        ConvertError::invalid(param, format!("{param} must be an array of items: {e}"))
    })?;
    raws.iter()
        .enumerate()
        .map(|(n, raw)| full_item(raw, ids, n, &format!("{param}[{n}]")))
        .collect()
}

fn full_item(
    raw: &RawValue,
    ids: &ResponseIds,
    n: usize,
    path: &str,
) -> Result<ConversationItem, ConvertError> {
    let mut object = RawObject::parse(raw)
        .map_err(|_| ConvertError::invalid(path, format!("{path} must be an object")))?;
    let kind = match (object.get("type"), object.get("role")) {
        (Some(kind), _) => serde_json::from_str::<String>(kind.get())
            .ok()
            .ok_or_else(|| ConvertError::invalid(path, format!("{path}.type must be a string")))?,
        (None, Some(_)) => {
            object.set("type", r#""message""#);
            "message".to_owned()
        }
        (None, None) => {
            return Err(ConvertError::invalid(
                path,
                format!("{path} has neither a `type` nor a `role`"),
            ))
        }
    };
    if kind == "item_reference" {
        return Err(ConvertError::invalid(
            path,
            format!("{path} is an item_reference: a conversation keeps items, not references"),
        ));
    }
    let id = match object.get("id").filter(|id| id.get() != "null") {
        Some(id) => serde_json::from_str::<String>(id.get())
            .ok()
            .filter(|id| !id.is_empty())
            .ok_or_else(|| ConvertError::invalid(path, format!("{path}.id must be a string")))?,
        None => ids.input_item(prefix(&kind), n),
    };
    // Written again, so that a key the client repeated holds one value:
    // JSON readers differ on which of two repeats wins.
    object.set(
        "id",
        &serde_json::to_string(&id).expect("a string serializes"),
    );
    object.set(
        "type",
        &serde_json::to_string(&kind).expect("a string serializes"),
    );
    match kind.as_str() {
        "message" => full_message(&mut object, path)?,
        // The API lists calls and their results with a status.
        "function_call" | "function_call_output" => object.set_if_null("status", r#""completed""#),
        _ => {}
    }
    Ok(ConversationItem {
        id,
        item: object.to_raw().get().to_owned(),
    })
}

/// A message with its `status`, and its content as a list of parts.
fn full_message(object: &mut RawObject<'_>, path: &str) -> Result<(), ConvertError> {
    let role = object.str("role").unwrap_or_default().to_owned();
    if !["user", "assistant", "system", "developer"].contains(&role.as_str()) {
        return Err(ConvertError::invalid(
            path,
            format!("{path}.role must be user, assistant, system or developer"),
        ));
    }
    let status = match object.get("status").filter(|s| s.get() != "null") {
        Some(status) => JsonStr::new(status)
            .map(|s| s.raw().get().to_owned())
            .ok_or_else(|| {
                ConvertError::invalid(path, format!("{path}.status must be a string"))
            })?,
        None => r#""completed""#.to_owned(),
    };
    // Each key written once (JSON readers differ on which of two repeats
    // wins), the content as a list of parts.
    object.set("status", &status);
    object.set(
        "role",
        &serde_json::to_string(&role).expect("a string serializes"),
    );
    let content = object.get("content").map(|c| c.get().to_owned());
    let content = content.ok_or_else(|| {
        ConvertError::invalid(
            path,
            format!("{path}.content must be a string or a list of content parts"),
        )
    })?;
    let raw: &RawValue = serde_json::from_str(&content).expect("a value read from JSON");
    if let Some(text) = JsonStr::new(raw) {
        let text = text.raw().get();
        let part = match role.as_str() {
            "assistant" => {
                format!(
                    r#"[{{"type":"output_text","text":{text},"annotations":[],"logprobs":[]}}]"#
                )
            }
            _ => format!(r#"[{{"type":"input_text","text":{text}}}]"#),
        };
        object.set("content", &part);
        return Ok(());
    }
    let parts: Vec<&RawValue> = serde_json::from_str(raw.get()).map_err(|_| {
        ConvertError::invalid(
            path,
            format!("{path}.content must be a string or a list of content parts"),
        )
    })?;
    let mut full = Vec::with_capacity(parts.len());
    for (n, part) in parts.iter().enumerate() {
        let mut part = RawObject::parse(part).map_err(|_| {
            ConvertError::invalid(path, format!("{path}.content[{n}] must be an object"))
        })?;
        // An `output_text` part in full has its `annotations` and `logprobs`.
        if part.str("type") == Some("output_text") {
            part.set_if_absent("annotations", "[]");
            part.set_if_absent("logprobs", "[]");
        }
        full.push(part.to_raw());
    }
    let full = serde_json::to_string(&full).expect("raw values serialize");
    object.set("content", &full);
    Ok(())
}

/// The id prefix of an item of type `kind`.
fn prefix(kind: &str) -> &'static str {
    match kind {
        "message" => "msg",
        "function_call" => "fc",
        "function_call_output" => "fco",
        "custom_tool_call" => "ctc",
        "custom_tool_call_output" => "ctco",
        "reasoning" => "rs",
        _ => "item",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(items: &str) -> Vec<serde_json::Value> {
        conversation_items(items, &ResponseIds::new(), "items")
            .unwrap()
            .into_iter()
            .map(|item| serde_json::from_str(&item.item).unwrap())
            .collect()
    }

    #[test]
    fn short_messages_are_kept_in_full() {
        let items = full(
            r#"[{"role":"assistant","content":"Hello"},{"type":"message","id":"msg_own","role":"user","status":"in_progress","content":[{"type":"input_text","text":"x"}]}]"#,
        );
        assert_eq!(
            items[0]["content"],
            serde_json::json!([{"type":"output_text","text":"Hello","annotations":[],"logprobs":[]}])
        );
        assert!(items[0]["id"].as_str().unwrap().starts_with("msg_"));
        // A full item is kept as sent.
        assert_eq!(items[1]["id"], "msg_own");
        assert_eq!(items[1]["status"], "in_progress");
    }

    #[test]
    fn output_text_parts_get_their_required_lists() {
        let items = full(
            r#"[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"refusal","refusal":"no"}]}]"#,
        );
        assert_eq!(
            items[0]["content"],
            serde_json::json!([
                {"type":"output_text","text":"a","annotations":[],"logprobs":[]},
                {"type":"refusal","refusal":"no"}
            ])
        );
    }

    #[test]
    fn calls_and_results_get_an_id_and_a_status() {
        let items = full(
            r#"[{"type":"function_call_output","call_id":"c","output":"ok"},{"type":"reasoning","summary":[]}]"#,
        );
        assert!(items[0]["id"].as_str().unwrap().starts_with("fco_"));
        assert_eq!(items[0]["output"], "ok");
        assert_eq!(items[0]["status"], "completed");
        assert!(items[1]["id"].as_str().unwrap().starts_with("rs_"));
        assert!(items[1].get("status").is_none());
    }

    #[test]
    fn what_is_no_item_is_refused_by_path() {
        let refused = |items: &str| {
            conversation_items(items, &ResponseIds::new(), "items")
                .unwrap_err()
                .to_string()
        };
        assert!(refused("{}").contains("items must be an array"));
        assert!(
            refused(r#"[{"role":"user","content":"a"},3]"#).contains("items[1] must be an object")
        );
        assert!(refused(r#"[{"content":"a"}]"#).contains("neither a `type` nor a `role`"));
        assert!(refused(r#"[{"type":"item_reference","id":"x"}]"#).contains("item_reference"));
        assert!(refused(r#"[{"role":"robot","content":"a"}]"#).contains("items[0].role"));
        assert!(refused(r#"[{"role":"user","content":3}]"#).contains("items[0].content"));
    }
}
