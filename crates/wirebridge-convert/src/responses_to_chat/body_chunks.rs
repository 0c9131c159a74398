//! A backend's `chat.completion` body told as the chunk stream that would
//! have carried it, for a client that asked for a stream from a backend
//! that answered with a body (some ignore `stream`).

use serde_json::{json, Map, Value};

use crate::error::ConvertError;

/// The `data` of each chunk of a stream that says what `body` (a
/// `chat.completion`) says: its first choice's message as one delta (tool
/// calls numbered), then its finish reason and usage, then `[DONE]`. The
/// body is read as JSON only: what it means is read by the stream
/// translator the chunks are fed to, or by [`translate_body`] first.
///
/// ```
/// use wirebridge_convert::responses_to_chat::body_chunks;
///
/// let body = br#"{"id":"c","object":"chat.completion","model":"m","choices":[
///   {"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}"#;
/// let chunks = body_chunks(body).unwrap();
/// assert!(chunks[0].contains(r#""content":"Hi""#));
/// assert!(chunks[1].contains(r#""finish_reason":"stop""#));
/// assert_eq!(chunks[2], "[DONE]");
/// ```
///
/// [`translate_body`]: super::translate_body
pub fn body_chunks(body: &[u8]) -> Result<Vec<String>, ConvertError> {
    let completion: Map<String, Value> = serde_json::from_slice(body).map_err(|e| {
        ConvertError::InvalidUpstream(format!("the Chat Completions body is not valid: {e}"))
    })?;
    let choice = completion
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut delta = match choice.get("message") {
        Some(Value::Object(message)) => message.clone(),
        _ => Map::new(),
    };
    delta.retain(|_, v| !v.is_null());
    if let Some(Value::Array(calls)) = delta.get_mut("tool_calls") {
        for (index, call) in calls.iter_mut().enumerate() {
            if let Some(call) = call.as_object_mut() {
                call.insert("index".into(), json!(index));
            }
        }
    }
    let chunk = |choices: Value, usage: Option<&Value>| {
        let mut chunk = Map::new();
        for key in ["id", "created", "model", "system_fingerprint"] {
            if let Some(value) = completion.get(key) {
                chunk.insert(key.into(), value.clone());
            }
        }
        chunk.insert("object".into(), json!("chat.completion.chunk"));
        chunk.insert("choices".into(), choices);
        if let Some(usage) = usage.filter(|u| !u.is_null()) {
            chunk.insert("usage".into(), usage.clone());
        }
        Value::Object(chunk).to_string()
    };
    let finish = choice.get("finish_reason").cloned().unwrap_or(Value::Null);
    let logprobs = choice.get("logprobs").cloned().unwrap_or(Value::Null);
    Ok(vec![
        chunk(
            json!([{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": null}]),
            None,
        ),
        chunk(
            json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
            completion.get("usage"),
        ),
        "[DONE]".to_owned(),
    ])
}
