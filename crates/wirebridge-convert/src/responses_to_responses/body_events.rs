//! A backend's `Response` body told as the event stream that would have
//! carried it, for a client that asked for a stream from a backend that
//! answered with a body (some ignore `stream`).

use serde_json::{json, Map, Value};
use wirebridge_wire::responses::lenient::ResponseShell;

use super::body::upstream_failure;
use crate::error::ConvertError;

/// The `data` of each event of a stream that says what `body` (a
/// backend's `Response`) says: `response.created`, each output item added
/// and done whole, then the terminal event its status names. A body with
/// no `output` is refused (an error body is the upstream's failure, as
/// [`translate_body`] says); whether the body must also name itself a
/// `Response` is for the reader of the direction to say, which reads it
/// first. The events are the upstream's dialect, for a stream translator
/// to read.
///
/// ```
/// use wirebridge_convert::responses_to_responses::body_events;
///
/// let body = br#"{"object":"response","status":"completed","output":[
///   {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}]}"#;
/// let events = body_events(body).unwrap();
/// assert_eq!(events.len(), 4);
/// assert!(events[2].contains(r#""type":"response.output_item.done""#));
/// assert!(events[3].contains(r#""type":"response.completed""#));
/// assert!(body_events(br#"{"error":{"message":"no"}}"#).is_err());
/// ```
///
/// [`translate_body`]: super::translate_body
pub fn body_events(body: &[u8]) -> Result<Vec<String>, ConvertError> {
    let shell = ResponseShell::parse(body).map_err(|e| {
        ConvertError::InvalidUpstream(format!("the upstream's response is not a Response: {e}"))
    })?;
    if shell.output.is_none() {
        return Err(match shell.error.filter(|e| e.get() != "null") {
            Some(error) => upstream_failure(error),
            None => ConvertError::InvalidUpstream(
                "the upstream's answer is not a Response: it has no 'output'".into(),
            ),
        });
    }
    let mut response: Map<String, Value> = serde_json::from_slice(body).map_err(|e| {
        ConvertError::InvalidUpstream(format!("the upstream's response is not a Response: {e}"))
    })?;
    let output = match response.insert("output".into(), json!([])) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let status = response
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("completed")
        .to_owned();
    let terminal = match status.as_str() {
        "incomplete" => "response.incomplete",
        "failed" => "response.failed",
        _ => "response.completed",
    };
    let mut created = response.clone();
    created.insert("status".into(), json!("in_progress"));
    let mut events = Vec::with_capacity(output.len() * 2 + 2);
    events.push(json!({"type": "response.created", "response": created}).to_string());
    for (index, item) in output.iter().enumerate() {
        let added = opened(item);
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": added})
                .to_string(),
        );
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item})
                .to_string(),
        );
    }
    response.insert("output".into(), Value::Array(output));
    events.push(json!({"type": terminal, "response": response}).to_string());
    Ok(events)
}

/// An item as the event that opens it shows it: in progress, with none of
/// its content yet (its done event brings it whole).
fn opened(item: &Value) -> Value {
    let mut item = item.clone();
    if let Some(fields) = item.as_object_mut() {
        fields.insert("status".into(), json!("in_progress"));
        for list in ["content", "summary"] {
            if fields.contains_key(list) {
                fields.insert(list.into(), json!([]));
            }
        }
        for text in ["arguments", "input"] {
            if fields.get(text).is_some_and(Value::is_string) {
                fields.insert(text.into(), json!(""));
            }
        }
    }
    item
}
