//! Reading the required fields of an event, and reporting what is wrong
//! with them as a [`Violation`] naming the frame, the object and the key.

use crate::Violation;
use serde_json::Value;

/// What every rule returns.
pub(super) type R<T> = Result<T, Violation>;

/// A violation at frame `i`.
pub(super) fn v_err<T>(i: usize, msg: impl Into<String>) -> R<T> {
    Err(Violation::new(i, msg))
}

/// `v[key]` as a string; `ctx` names `v` in the message.
pub(super) fn req_str<'a>(i: usize, v: &'a Value, key: &str, ctx: &str) -> R<&'a str> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => v_err(i, format!("{ctx}: `{key}` must be a string, got {other}")),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

/// `v[key]` as a non-negative integer.
pub(super) fn req_u64(i: usize, v: &Value, key: &str, ctx: &str) -> R<u64> {
    match v.get(key) {
        Some(n) if n.as_u64().is_some() => Ok(n.as_u64().unwrap_or_default()),
        Some(other) => v_err(
            i,
            format!("{ctx}: `{key}` must be a non-negative integer, got {other}"),
        ),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

/// `v[key]` as an array.
pub(super) fn req_array<'a>(i: usize, v: &'a Value, key: &str, ctx: &str) -> R<&'a Vec<Value>> {
    match v.get(key) {
        Some(Value::Array(a)) => Ok(a),
        Some(other) => v_err(i, format!("{ctx}: `{key}` must be an array, got {other}")),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

/// `v[key]` as an object.
pub(super) fn req_obj<'a>(i: usize, v: &'a Value, key: &str, ctx: &str) -> R<&'a Value> {
    match v.get(key) {
        Some(o @ Value::Object(_)) => Ok(o),
        Some(other) => v_err(i, format!("{ctx}: `{key}` must be an object, got {other}")),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

/// String or null, key present.
pub(super) fn req_str_or_null(i: usize, v: &Value, key: &str, ctx: &str) -> R<()> {
    match v.get(key) {
        Some(Value::String(_)) | Some(Value::Null) => Ok(()),
        Some(other) => v_err(
            i,
            format!("{ctx}: `{key}` must be a string or null, got {other}"),
        ),
        None => v_err(i, format!("{ctx}: missing `{key}`")),
    }
}

/// A text quoted for a message, cut after 80 characters so that a long
/// stream does not flood the report.
pub(super) fn short(v: &str) -> String {
    const MAX: usize = 80;
    if v.chars().count() <= MAX {
        format!("{v:?}")
    } else {
        let s: String = v.chars().take(MAX).collect();
        format!("{s:?}…")
    }
}
