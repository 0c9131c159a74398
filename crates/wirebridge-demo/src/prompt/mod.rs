//! A request of any of the three APIs reduced to what the demo needs to
//! script its answer: the [`Prompt`].

mod betas;
mod chat;
mod messages;
mod responses;

pub(crate) use betas::MessagesBetas;
pub(crate) use chat::parse_chat;
pub(crate) use messages::{parse_messages, MessagesEndpoint};
pub(crate) use responses::parse_responses;

use crate::error::ApiError;
use serde_json::Value;

/// What the conversation ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Turn {
    /// A user message (or anything that is not a tool result): its text.
    User(String),
    /// One or more tool results, in order: their text.
    ToolOutputs(Vec<String>),
}

/// A request of any API, reduced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prompt {
    /// The requested model, or the configured default.
    pub model: String,
    /// `stream: true`.
    pub stream: bool,
    /// Chat `stream_options.include_usage: true`.
    pub include_usage: bool,
    /// `max_completion_tokens` / `max_tokens` / `max_output_tokens` (Messages: `max_tokens`).
    pub max_output_tokens: Option<u64>,
    /// Reasoning was requested with an effort other than `none` (Messages:
    /// `thinking` enabled).
    pub reasoning: bool,
    /// Names of the function tools the model may call (empty with `tool_choice: "none"`).
    pub tools: Vec<String>,
    /// `parallel_tool_calls` (default true; Messages: not
    /// `tool_choice.disable_parallel_tool_use`).
    pub parallel_tool_calls: bool,
    /// How the conversation ends.
    pub turn: Turn,
    /// Text of the most recent user message (where the `demo:` triggers are read).
    pub last_user_text: String,
    /// Whitespace-separated words in every text of the request.
    pub input_tokens: u64,
    /// The request body itself (the Responses renderer echoes parts of it).
    pub raw: Value,
}

/// Number of whitespace-separated words: the demo's notion of a token.
pub(crate) fn count_tokens(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

/// The text of a message `content` (or a tool `output`): a string as is; in
/// a part array the `text` (or `refusal`) of every part, joined with `\n`,
/// and `[image]` / `[file]` / `[audio]` for media parts; anything else is
/// empty.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let texts: Vec<String> = parts.iter().filter_map(part_text).collect();
            texts.join("\n")
        }
        _ => String::new(),
    }
}

fn part_text(part: &Value) -> Option<String> {
    if let Value::String(s) = part {
        return Some(s.clone());
    }
    for key in ["text", "refusal"] {
        if let Some(s) = part.get(key).and_then(Value::as_str) {
            return Some(s.to_string());
        }
    }
    let ty = part.get("type").and_then(Value::as_str).unwrap_or("");
    if ty.contains("image") {
        Some("[image]".to_string())
    } else if ty.contains("file") {
        Some("[file]".to_string())
    } else if ty.contains("audio") {
        Some("[audio]".to_string())
    } else {
        None
    }
}

/// The JSON body of a request, or the 400 OpenAI sends for an unparsable one.
pub(crate) fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(ApiError::invalid_request(
            "The request body must be a JSON object.",
            None,
            None,
        )),
        Err(e) => Err(ApiError::invalid_request(
            format!(
                "We could not parse the JSON body of your request. ({e}) \
                 The OpenAI API expects a JSON payload."
            ),
            None,
            None,
        )),
    }
}

/// `body[key]` as a bool, `default` when absent or null, a 400 otherwise.
pub(crate) fn opt_bool(body: &Value, key: &'static str, default: bool) -> Result<bool, ApiError> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(ApiError::invalid_type(key, "a boolean", other)),
    }
}

/// `body[key]` as a non-negative integer, `None` when absent or null, a 400 otherwise.
pub(crate) fn opt_u64(body: &Value, key: &'static str) -> Result<Option<u64>, ApiError> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) => Ok(Some(n)),
            None => Err(ApiError::invalid_type(key, "a non-negative integer", v)),
        },
    }
}

/// `body.model` when it is a non-empty string, else `default`.
pub(crate) fn model(body: &Value, default: &str) -> String {
    match body.get("model").and_then(Value::as_str) {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => default.to_string(),
    }
}

/// Whether a reasoning effort asks for reasoning: a string other than `none`.
pub(crate) fn effort_requests_reasoning(effort: Option<&Value>) -> bool {
    effort
        .and_then(Value::as_str)
        .is_some_and(|e| !e.eq_ignore_ascii_case("none"))
}

/// `tool_choice: "none"` forbids tool calls.
pub(crate) fn tools_forbidden(body: &Value) -> bool {
    body.get("tool_choice").and_then(Value::as_str) == Some("none")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_shapes() {
        assert_eq!(content_text(Some(&json!("hi"))), "hi");
        assert_eq!(
            content_text(Some(&json!([
                {"type": "text", "text": "a"},
                {"type": "input_image", "image_url": "x"},
                {"type": "input_text", "text": "b"},
                {"type": "weird"}
            ]))),
            "a\n[image]\nb"
        );
        assert_eq!(content_text(Some(&Value::Null)), "");
        assert_eq!(content_text(None), "");
    }

    #[test]
    fn tokens_are_words() {
        assert_eq!(count_tokens("  one two\tthree\n"), 3);
        assert_eq!(count_tokens(""), 0);
    }

    #[test]
    fn bad_bodies_are_400() {
        assert_eq!(parse_body(b"[1]").unwrap_err().status, 400);
        assert_eq!(parse_body(b"{").unwrap_err().status, 400);
        assert!(parse_body(b"{}").is_ok());
    }
}
