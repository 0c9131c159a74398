//! Tool call fragments inside a Chat delta: dense indexes, a complete first
//! fragment, then arguments only.

use super::{v_err, R};
use crate::transcript::ToolCallRecord;
use serde_json::Value;

/// Checks one element of `delta.tool_calls` of choice `choice` in frame `i`,
/// and starts or extends the matching call in `calls`.
pub(super) fn tool_call_fragment(
    i: usize,
    choice: u64,
    tc: &Value,
    calls: &mut Vec<ToolCallRecord>,
) -> R<()> {
    let obj = match tc.as_object() {
        Some(o) => o,
        None => {
            return v_err(
                i,
                format!("choice {choice}: tool call fragment must be an object"),
            )
        }
    };
    let index = match tc.get("index").and_then(Value::as_u64) {
        Some(n) => n as usize,
        None => {
            return v_err(
                i,
                format!("choice {choice}: tool call fragment without integer `index`"),
            )
        }
    };
    let func = tc.get("function");
    if func.is_some_and(|f| !f.is_object()) {
        return v_err(
            i,
            format!("tool call {index}: `function` must be an object"),
        );
    }
    let args = match func.and_then(|f| f.get("arguments")) {
        None => "",
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return v_err(
                i,
                format!("tool call {index}: function.arguments must be a string, got {other}"),
            )
        }
    };
    if index == calls.len() {
        let id = match tc.get("id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                return v_err(
                    i,
                    format!("tool call {index}: the first fragment must carry a non-empty `id`"),
                )
            }
        };
        if tc.get("type").and_then(Value::as_str) != Some("function") {
            return v_err(
                i,
                format!("tool call {index}: the first fragment must carry `type: \"function\"`"),
            );
        }
        let name = match func.and_then(|f| f.get("name")) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                return v_err(
                    i,
                    format!(
                    "tool call {index}: the first fragment must carry a non-empty function.name"
                ),
                )
            }
        };
        calls.push(ToolCallRecord {
            name,
            call_id: id,
            arguments: args.to_string(),
            item_type: "function_call".to_string(),
        });
        return Ok(());
    }
    if index > calls.len() {
        return v_err(
            i,
            format!(
                "tool call index {index} is not dense: expected {} (indexes start at 0 and grow by 1)",
                calls.len()
            ),
        );
    }
    if let Some(k) = obj.keys().find(|k| *k != "index" && *k != "function") {
        return v_err(
            i,
            format!("tool call {index}: a later fragment repeats `{k}` (only index and function.arguments are allowed after the first fragment)"),
        );
    }
    if let Some(k) = func
        .and_then(Value::as_object)
        .and_then(|f| f.keys().find(|k| *k != "arguments"))
    {
        return v_err(
            i,
            format!("tool call {index}: a later fragment repeats function.{k} (only function.arguments is allowed)"),
        );
    }
    calls[index].arguments.push_str(args);
    Ok(())
}
