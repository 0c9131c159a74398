//! The fingerprint of a Responses request, and the response it asks to be
//! compared with.

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use wirebridge_wire::responses::lenient::{CreateResponse, Input};
use wirebridge_wire::RawObject;

use super::{digest, Fingerprint, Part};
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// `prompt_cache_options.comparison_response_id`: the response whose
/// prompt this request expected to reuse, when it asks for diagnostics.
/// `prompt_cache_options` that is not an object, or an id that is not a
/// string, is an error naming the field.
pub fn comparison_response_id(options: Option<&RawValue>) -> Result<Option<String>, ConvertError> {
    let Some(options) = options.filter(|o| o.get() != "null") else {
        return Ok(None);
    };
    #[derive(serde::Deserialize)]
    struct Options {
        comparison_response_id: Option<String>,
    }
    let read: Options = serde_json::from_str(options.get()).map_err(|e| {
        ConvertError::invalid(
            "prompt_cache_options.comparison_response_id",
            format!("expected a string in an object: {e}"),
        )
    })?;
    Ok(read.comparison_response_id)
}

/// Records the members of `prompt_cache_options` the backend is not sent
/// (`backend_lacks` says why), each under its own path, but for
/// `comparison_response_id`, which the bridge answers itself.
pub(crate) fn record_cache_options(
    options: Option<&RawValue>,
    backend_lacks: &str,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    let Some(options) = options else {
        return Ok(());
    };
    let Ok(members) = RawObject::parse(options) else {
        return losses.record(
            LossKind::UnsupportedParameter,
            "prompt_cache_options",
            backend_lacks,
        );
    };
    for (key, _) in members.fields() {
        if key != "comparison_response_id" {
            losses.record(
                LossKind::UnsupportedParameter,
                format!("prompt_cache_options.{key}"),
                backend_lacks,
            )?;
        }
    }
    Ok(())
}

/// Takes `comparison_response_id` out of the `prompt_cache_options` a
/// Responses backend is sent: the id is the bridge's, which the backend
/// never saw, and the bridge answers the comparison itself. The other
/// options go on as they were; options left empty are not sent.
pub(crate) fn keep_comparison_from_backend(upstream: &mut RawObject<'_>) {
    let Some(options) = upstream.get("prompt_cache_options") else {
        return;
    };
    let Ok(mut options) = RawObject::parse(options) else {
        // Not an object: the backend refuses it as it would.
        return;
    };
    if options.get("comparison_response_id").is_none() {
        return;
    }
    options.remove("comparison_response_id");
    let rest = (options.fields().count() > 0).then(|| options.to_raw());
    match rest {
        None => upstream.remove("prompt_cache_options"),
        Some(rest) => upstream.set_raw("prompt_cache_options", rest),
    }
}

/// The fingerprint of `request`, whose conversation before its own input
/// is `history` (the stored turns it continues, each a JSON array of
/// items, oldest first). Items are compared in a canonical form, so that
/// one sent back with its `id` or `status` left out, or its text in
/// another part shape, is still the same entry.
pub fn responses_fingerprint(
    request: &CreateResponse<'_>,
    history: &[&str],
) -> Result<Fingerprint, ConvertError> {
    let invalid = |field: &str, e: serde_json::Error| ConvertError::invalid(field, e.to_string());
    let model = request.model.as_deref().unwrap_or_default();
    let mut print = Fingerprint::new(model);
    let optional = |text: Option<&str>| text.map(|t| digest(t.as_bytes())).unwrap_or_default();
    print.service_tier = optional(request.service_tier.as_deref());
    print.prompt_cache_key = optional(request.prompt_cache_key.as_deref());
    if let Some(tools) = request.tools.filter(|t| t.get() != "null") {
        let tools: Value = serde_json::from_str(tools.get()).map_err(|e| invalid("tools", e))?;
        print.set_tools(tools.to_string().as_bytes());
    }
    if let Some(text) = request.text.filter(|t| t.get() != "null") {
        let text: Value = serde_json::from_str(text.get()).map_err(|e| invalid("text", e))?;
        print.text_format = member_digest(&text, "format");
        print.verbosity = member_digest(&text, "verbosity");
    }
    if let Some(reasoning) = request.reasoning.filter(|r| r.get() != "null") {
        let reasoning: Value =
            serde_json::from_str(reasoning.get()).map_err(|e| invalid("reasoning", e))?;
        print.reasoning_effort = member_digest(&reasoning, "effort");
    }
    if let Some(instructions) = &request.instructions {
        print.set_instructions(instructions.raw().get().as_bytes());
    }
    for array in history {
        let items: Vec<Value> = serde_json::from_str(array)
            .map_err(|e| ConvertError::UnreadableHistory(e.to_string()))?;
        items
            .into_iter()
            .for_each(|item| push_item(&mut print, item));
    }
    match &request.input {
        None => {}
        Some(Input::Text(text)) => {
            let text: String =
                serde_json::from_str(text.raw().get()).map_err(|e| invalid("input", e))?;
            let mut item = Map::new();
            item.insert("role".into(), "user".into());
            item.insert("content".into(), Value::String(text));
            push_item(&mut print, Value::Object(item));
        }
        Some(Input::Items(items)) => {
            for raw in items.raw_items().map_err(|e| invalid("input", e))? {
                let item = serde_json::from_str(raw.get()).map_err(|e| invalid("input", e))?;
                push_item(&mut print, item);
            }
        }
    }
    Ok(print)
}

/// The digest of `object[key]`, empty when it is absent or `null`.
fn member_digest(object: &Value, key: &str) -> String {
    match object.get(key) {
        None | Some(Value::Null) => String::new(),
        Some(value) => digest(value.to_string().as_bytes()),
    }
}

fn push_item(print: &mut Fingerprint, item: Value) {
    let compaction = item.get("type").and_then(Value::as_str) == Some("compaction");
    let canonical = canonical(item).to_string();
    print.input.push(Part {
        compaction,
        ..Part::of(canonical.as_bytes())
    });
}

/// An item as compared: without the members that name it rather than say
/// what it holds (`id`, `status`), a message's type written out, and its
/// text, a string or parts, as text parts with nothing but their text.
/// Keys come out sorted (`serde_json`'s maps are ordered by key).
fn canonical(item: Value) -> Value {
    let Value::Object(mut item) = item else {
        return item;
    };
    item.remove("id");
    item.remove("status");
    if item.contains_key("role") && !item.contains_key("type") {
        item.insert("type".into(), "message".into());
    }
    if let Some(content) = item.remove("content") {
        let content = match content {
            Value::String(text) => vec![text_part(text)],
            Value::Array(parts) => parts.into_iter().map(canonical_part).collect(),
            other => vec![other],
        };
        item.insert("content".into(), Value::Array(content));
    }
    Value::Object(item)
}

fn canonical_part(part: Value) -> Value {
    let is_text = matches!(
        part.get("type").and_then(Value::as_str),
        Some("input_text" | "output_text" | "text")
    );
    match (is_text, part.get("text").and_then(Value::as_str)) {
        (true, Some(text)) => text_part(text.to_owned()),
        _ => part,
    }
}

fn text_part(text: String) -> Value {
    let mut part = Map::new();
    part.insert("type".into(), "text".into());
    part.insert("text".into(), Value::String(text));
    Value::Object(part)
}

#[cfg(test)]
mod tests {
    use super::super::{compare, MissReason, Verdict};
    use super::*;

    fn print(body: &str, history: &[&str]) -> Fingerprint {
        let request: CreateResponse<'_> = serde_json::from_str(body).unwrap();
        responses_fingerprint(&request, history).unwrap()
    }

    #[test]
    fn a_turn_sent_back_by_the_client_matches_the_stored_one() {
        let first = print(
            r#"{"model":"m","instructions":"Be brief.","input":"Hi"}"#,
            &[],
        );
        // The client sends the history back itself: its first message as
        // parts, the answer without its id and status.
        let next = print(
            r#"{"model":"m","instructions":"Be brief.","input":[
                {"role":"user","content":[{"type":"input_text","text":"Hi"}]},
                {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]},
                {"role":"user","content":"And?"}]}"#,
            &[],
        );
        assert_eq!(compare(&first, &next), Verdict::Hit);
        // The same conversation continued from the store.
        let stored = print(
            r#"{"model":"m","instructions":"Be brief.","input":"And?"}"#,
            &[
                r#"[{"id":"msg_1","type":"message","role":"user","content":"Hi"}]"#,
                r#"[{"id":"msg_2","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello"}]}]"#,
            ],
        );
        assert_eq!(compare(&first, &stored), Verdict::Hit);
    }

    #[test]
    fn settings_are_read_from_their_fields() {
        let base = r#"{"model":"m","input":"Hi","text":{"format":{"type":"text"},"verbosity":"low"},"reasoning":{"effort":"low"},"service_tier":"flex","prompt_cache_key":"k"}"#;
        let first = print(base, &[]);
        let cases = [
            (
                r#""effort":"low""#,
                r#""effort":"high""#,
                MissReason::ReasoningEffort,
            ),
            (
                r#""verbosity":"low""#,
                r#""verbosity":"high""#,
                MissReason::Verbosity,
            ),
            (
                r#"{"type":"text"}"#,
                r#"{"type":"json_object"}"#,
                MissReason::TextFormat,
            ),
            (r#""flex""#, r#""priority""#, MissReason::ServiceTier),
            (r#""k""#, r#""j""#, MissReason::PromptCacheKey),
            (r#""m""#, r#""n""#, MissReason::Model),
            (r#""Hi""#, r#""Ho""#, MissReason::Input),
        ];
        for (from, to, reason) in cases {
            let next = print(&base.replacen(from, to, 1), &[]);
            match compare(&first, &next) {
                Verdict::Miss { reason: got, .. } => assert_eq!(got, reason, "{to}"),
                other => panic!("{to}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_responses_backend_is_not_sent_the_bridge_s_comparison_id() {
        let sent = |body: &str| {
            let mut upstream = RawObject::parse_str(body).unwrap();
            keep_comparison_from_backend(&mut upstream);
            let mut out = Vec::new();
            upstream.write_json(&mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            sent(r#"{"model":"m","prompt_cache_options":{"comparison_response_id":"resp_1"}}"#),
            r#"{"model":"m"}"#
        );
        assert_eq!(
            sent(r#"{"prompt_cache_options":{"ttl":"30m","comparison_response_id":null}}"#),
            r#"{"prompt_cache_options":{"ttl":"30m"}}"#
        );
        assert_eq!(
            sent(r#"{"prompt_cache_options":{"ttl":"30m"}}"#),
            r#"{"prompt_cache_options":{"ttl":"30m"}}"#
        );
    }

    #[test]
    fn the_comparison_id_is_read_from_the_options() {
        fn raw(s: &str) -> &RawValue {
            serde_json::from_str(s).unwrap()
        }
        assert_eq!(
            comparison_response_id(Some(raw(
                r#"{"comparison_response_id":"resp_1","ttl":"30m"}"#
            )))
            .unwrap()
            .as_deref(),
            Some("resp_1")
        );
        assert_eq!(
            comparison_response_id(Some(raw(r#"{"ttl":"30m"}"#))).unwrap(),
            None
        );
        assert_eq!(comparison_response_id(Some(raw("null"))).unwrap(), None);
        let error =
            comparison_response_id(Some(raw(r#"{"comparison_response_id":7}"#))).unwrap_err();
        assert_eq!(
            error.param(),
            Some("prompt_cache_options.comparison_response_id")
        );
    }
}
