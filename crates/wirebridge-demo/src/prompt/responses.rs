//! `POST /v1/responses` request → [`Prompt`].

use super::{
    content_text, count_tokens, effort_requests_reasoning, model, opt_bool, opt_u64,
    tools_forbidden, Prompt, Turn,
};
use crate::error::ApiError;
use serde_json::Value;

/// Reduce a Responses request body.
pub(crate) fn parse_responses(body: Value, default_model: &str) -> Result<Prompt, ApiError> {
    // Like the Responses servers of vLLM, SGLang, llama.cpp, Ollama and
    // DeepSeek, the demo keeps nothing: what continues a stored
    // conversation is refused, by name.
    for field in ["previous_response_id", "conversation"] {
        if body.get(field).is_some_and(|v| !v.is_null()) {
            return Err(ApiError::invalid_request(
                format!("The demo upstream keeps no state: '{field}' is not supported."),
                Some(field),
                Some("unsupported_parameter"),
            ));
        }
    }
    let single;
    let items: &[Value] = match body.get("input") {
        Some(Value::String(s)) => {
            single = [serde_json::json!({"role": "user", "content": s})];
            &single
        }
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) => &[],
        Some(other) => {
            return Err(ApiError::invalid_type(
                "input",
                "a string or an array of input items",
                other,
            ))
        }
    };

    let mut input_tokens = body
        .get("instructions")
        .and_then(Value::as_str)
        .map_or(0, count_tokens);
    let mut last_user_text = String::new();
    for item in items {
        match item_type(item) {
            "message" => {
                let text = content_text(item.get("content"));
                input_tokens += count_tokens(&text);
                if item.get("role").and_then(Value::as_str) == Some("user") {
                    last_user_text = text;
                }
            }
            "function_call" => {
                input_tokens += item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .map_or(0, count_tokens);
            }
            t if is_tool_output(t) => {
                input_tokens += count_tokens(&content_text(item.get("output")));
            }
            _ => {}
        }
    }

    let trailing = items
        .iter()
        .rev()
        .take_while(|i| is_tool_output(item_type(i)))
        .count();
    let turn = if trailing > 0 {
        let outputs = items[items.len() - trailing..]
            .iter()
            .map(|i| content_text(i.get("output")))
            .collect();
        Turn::ToolOutputs(outputs)
    } else {
        Turn::User(last_user_text.clone())
    };

    let tools = if tools_forbidden(&body) {
        Vec::new()
    } else {
        body.get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
            .filter_map(|t| t.get("name")?.as_str())
            .map(str::to_string)
            .collect()
    };
    let reasoning = effort_requests_reasoning(body.get("reasoning").and_then(|r| r.get("effort")));

    Ok(Prompt {
        model: model(&body, default_model),
        stream: opt_bool(&body, "stream", false)?,
        include_usage: false,
        max_output_tokens: opt_u64(&body, "max_output_tokens")?,
        reasoning,
        tools,
        parallel_tool_calls: opt_bool(&body, "parallel_tool_calls", true)?,
        turn,
        last_user_text,
        input_tokens,
        raw: body,
    })
}

/// The `type` of an input item; items with a `role` and no `type` are messages.
fn item_type(item: &Value) -> &str {
    match item.get("type").and_then(Value::as_str) {
        Some(t) => t,
        None if item.get("role").is_some() => "message",
        None => "",
    }
}

fn is_tool_output(item_type: &str) -> bool {
    matches!(
        item_type,
        "function_call_output" | "custom_tool_call_output"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_input_is_a_user_message() {
        let p = parse_responses(
            json!({"input": "hello there", "instructions": "be kind", "reasoning": {"effort": "high"}}),
            "d",
        )
        .unwrap();
        assert_eq!(p.turn, Turn::User("hello there".into()));
        assert_eq!(p.input_tokens, 4);
        assert!(p.reasoning);
    }

    #[test]
    fn trailing_outputs_are_the_turn() {
        let p = parse_responses(
            json!({
                "model": "m",
                "tool_choice": "auto",
                "tools": [{"type": "function", "name": "get_time"}, {"type": "web_search"}],
                "input": [
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "call get_time"}]},
                    {"type": "function_call", "call_id": "c", "name": "get_time", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "c", "output": "noon"},
                    {"type": "function_call_output", "call_id": "d", "output": [{"type": "input_text", "text": "late"}]}
                ]
            }),
            "d",
        )
        .unwrap();
        assert_eq!(p.tools, vec!["get_time".to_string()]);
        assert_eq!(
            p.turn,
            Turn::ToolOutputs(vec!["noon".into(), "late".into()])
        );
        assert_eq!(p.last_user_text, "call get_time");
        assert!(!p.reasoning);
    }

    #[test]
    fn bad_input_is_400() {
        let e = parse_responses(json!({"input": 3}), "d").unwrap_err();
        assert_eq!(e.param.as_deref(), Some("input"));
        let p = parse_responses(json!({"reasoning": {"effort": "none"}}), "d").unwrap();
        assert!(!p.reasoning);
        assert_eq!(p.turn, Turn::User(String::new()));
    }
}
