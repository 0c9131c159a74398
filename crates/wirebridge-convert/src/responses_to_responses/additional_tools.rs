//! Tools declared in the conversation rather than in `tools`: Codex's
//! code-mode models (`gpt-6.1-sol`, `gpt-6.2-sol`) send theirs only in an
//! `additional_tools` input item, which OpenAI's server reads and a server
//! that keeps no state does not know. Sent on as they are, the backend
//! would see no tools at all; so their tools join `tools` (after the
//! request's own, in input order), and the items leave the input.
//!
//! The Chat translator reads the same items into its tool list
//! ([`tool_lists`](crate::responses_to_chat)); this is that step for a
//! backend that takes the tools in Responses' own form.

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::{InputItem, ItemKind};
use wirebridge_wire::RawObject;

use crate::error::ConvertError;

/// The item type this module looks for, as it appears in the JSON text.
const ITEM_TYPE: &str = "\"additional_tools\"";

/// Moves the tools of every `additional_tools` item of `input` (the whole
/// input array: the stored turns' items, then the request's own, `own`)
/// into `upstream`'s `tools`, and returns the input without those
/// items. An input without such an item is returned as it is, unparsed.
///
/// A tool declared twice with the same text (a conversation whose turns
/// each re-declare it) is sent once: a backend refuses two tools of one
/// name.
pub(super) fn lift(
    input: String,
    own: &str,
    upstream: &mut RawObject<'_>,
) -> Result<String, ConvertError> {
    if !input.contains(ITEM_TYPE) {
        return Ok(input);
    }
    let own_len = serde_json::from_str::<Vec<&RawValue>>(own).map_or(0, |own| own.len());
    let raws: Vec<&RawValue> =
        serde_json::from_str(&input).map_err(|e| ConvertError::UnreadableHistory(e.to_string()))?;
    let own_start = raws.len().saturating_sub(own_len);
    let path = |n: usize| match n < own_start {
        true => format!("previous_response_id:{n}"),
        false => format!("input[{}]", n - own_start),
    };
    let mut tools: Vec<&RawValue> = match upstream.get("tools") {
        Some(tools) if tools.get() != "null" => serde_json::from_str(tools.get())
            .map_err(|e| ConvertError::from_parse_at("tools", e))?,
        _ => Vec::new(),
    };
    let declared = tools.len();
    let mut kept: Vec<&RawValue> = Vec::with_capacity(raws.len());
    for (n, raw) in raws.iter().enumerate() {
        if !raw.get().contains(ITEM_TYPE) {
            kept.push(raw);
            continue;
        }
        let item: InputItem<'_> = serde_json::from_str(raw.get())
            .map_err(|e| ConvertError::from_parse_at(&path(n), e))?;
        if item.classify() != ItemKind::AdditionalTools {
            kept.push(raw);
            continue;
        }
        let field = format!("{}.tools", path(n));
        let listed: Vec<&RawValue> = match item.tools.filter(|t| t.get() != "null") {
            Some(listed) => serde_json::from_str(listed.get())
                .map_err(|e| ConvertError::from_parse_at(&field, e))?,
            None => return Err(ConvertError::MissingField(field)),
        };
        for tool in listed {
            if !tools.iter().any(|known| known.get() == tool.get()) {
                tools.push(tool);
            }
        }
    }
    if tools.len() > declared {
        let tools = serde_json::value::to_raw_value(&tools).expect("raw tools serialize");
        upstream.set_raw("tools", tools);
    }
    Ok(serde_json::to_string(&kept).expect("raw items serialize"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(body: &str) -> RawObject<'_> {
        RawObject::parse(serde_json::from_str(body).unwrap()).unwrap()
    }

    /// The tools and input sent for `input`, whose last `own` items are the
    /// request's own.
    fn lifted(body: &str, input: &str, own: &str) -> (serde_json::Value, serde_json::Value) {
        let mut upstream = object(body);
        let input = lift(input.to_owned(), own, &mut upstream).unwrap();
        let mut out = Vec::new();
        upstream.write_with(&mut out, "input", &input);
        let sent: serde_json::Value = serde_json::from_slice(&out).unwrap();
        (sent["tools"].clone(), sent["input"].clone())
    }

    #[test]
    fn the_items_tools_join_the_requests_own_in_input_order() {
        let body = r#"{"model":"m","tools":[{"type":"function","name":"a","parameters":{}}]}"#;
        let input = r#"[{"type":"additional_tools","role":"developer","tools":[{"type":"function","name":"b","parameters":{}}]},
            {"type":"message","role":"user","content":"hi"},
            {"type":"additional_tools","tools":[{"type":"custom","name":"c"}]}]"#;
        let (tools, input) = lifted(body, input, input);
        let names: Vec<&str> = tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(tools[2]["type"], "custom", "the tool's own form is kept");
        assert_eq!(input.as_array().unwrap().len(), 1);
        assert_eq!(input[0]["role"], "user");
    }

    #[test]
    fn a_tool_the_history_declared_again_is_sent_once() {
        let declared = r#"{"type":"additional_tools","tools":[{"type":"function","name":"b","parameters":{}}]}"#;
        let input = format!(r#"[{declared},{{"role":"user","content":"x"}},{declared}]"#);
        let (tools, input) = lifted(r#"{"model":"m"}"#, &input, &format!("[{declared}]"));
        assert_eq!(tools.as_array().unwrap().len(), 1);
        assert_eq!(input.as_array().unwrap().len(), 1);
    }

    #[test]
    fn an_input_without_the_item_is_left_as_it_is() {
        let input = r#"[{"role":"user","content":"the text \"additional\" is not the item"}]"#;
        let mut upstream = object(r#"{"model":"m"}"#);
        let out = lift(input.to_owned(), input, &mut upstream).unwrap();
        assert_eq!(out, input);
        assert!(upstream.get("tools").is_none());
    }

    #[test]
    fn an_item_without_tools_is_refused_naming_it() {
        let input =
            r#"[{"role":"user","content":"x"},{"type":"additional_tools","role":"developer"}]"#;
        let mut upstream = object(r#"{"model":"m"}"#);
        let own = r#"[{"type":"additional_tools","role":"developer"}]"#;
        let err = lift(input.to_owned(), own, &mut upstream).unwrap_err();
        assert!(err.to_string().contains("input[0].tools"), "{err}");
        let err = lift(input.to_owned(), input, &mut upstream).unwrap_err();
        assert!(err.to_string().contains("input[1].tools"), "{err}");
    }
}
