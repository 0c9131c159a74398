//! `POST /v1/chat/completions` request → [`Prompt`].

use super::{
    content_text, count_tokens, effort_requests_reasoning, model, opt_bool, opt_u64,
    tools_forbidden, Prompt, Turn,
};
use crate::error::ApiError;
use serde_json::Value;

/// Reduce a Chat Completions request body.
pub(crate) fn parse_chat(body: Value, default_model: &str) -> Result<Prompt, ApiError> {
    let messages = match body.get("messages") {
        Some(Value::Array(m)) => m,
        None | Some(Value::Null) => return Err(ApiError::missing("messages")),
        Some(other) => return Err(ApiError::invalid_type("messages", "an array", other)),
    };
    let stream = opt_bool(&body, "stream", false)?;
    let include_usage = body
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let max_output_tokens = match opt_u64(&body, "max_completion_tokens")? {
        Some(n) => Some(n),
        None => opt_u64(&body, "max_tokens")?,
    };

    let mut input_tokens = 0;
    let mut last_user_text = String::new();
    for m in messages {
        let text = content_text(m.get("content"));
        input_tokens += count_tokens(&text);
        for call in m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let args = call.get("function").and_then(|f| f.get("arguments"));
            input_tokens += args.and_then(Value::as_str).map_or(0, count_tokens);
        }
        if m.get("role").and_then(Value::as_str) == Some("user") {
            last_user_text = text;
        }
    }

    let is_tool = |m: &Value| {
        matches!(
            m.get("role").and_then(Value::as_str),
            Some("tool" | "function")
        )
    };
    let trailing_tools = messages.iter().rev().take_while(|m| is_tool(m)).count();
    let turn = if trailing_tools > 0 {
        let outputs = messages[messages.len() - trailing_tools..]
            .iter()
            .map(|m| content_text(m.get("content")))
            .collect();
        Turn::ToolOutputs(outputs)
    } else {
        Turn::User(last_user_text.clone())
    };

    let tools = if tools_forbidden(&body) {
        Vec::new()
    } else {
        tool_names(&body)
    };

    Ok(Prompt {
        model: model(&body, default_model),
        stream,
        include_usage,
        max_output_tokens,
        reasoning: effort_requests_reasoning(body.get("reasoning_effort")),
        tools,
        parallel_tool_calls: opt_bool(&body, "parallel_tool_calls", true)?,
        turn,
        last_user_text,
        input_tokens,
        raw: body,
    })
}

/// Names of the `type: "function"` tools (and of legacy `functions`).
fn tool_names(body: &Value) -> Vec<String> {
    let tools = body.get("tools").and_then(Value::as_array).into_iter();
    let mut names: Vec<String> = tools
        .flatten()
        .filter(|t| t.get("type").and_then(Value::as_str).unwrap_or("function") == "function")
        .filter_map(|t| t.get("function")?.get("name")?.as_str())
        .map(str::to_string)
        .collect();
    let functions = body.get("functions").and_then(Value::as_array).into_iter();
    names.extend(
        functions
            .flatten()
            .filter_map(|f| f.get("name")?.as_str())
            .map(str::to_string),
    );
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reduces_a_tool_round_trip() {
        let body = json!({
            "model": "m",
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 9,
            "reasoning_effort": "low",
            "tools": [{"type": "function", "function": {"name": "get_weather"}}],
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "call get_weather with city=Paris"}]},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
            ]
        });
        let p = parse_chat(body, "d").unwrap();
        assert_eq!(p.model, "m");
        assert!(p.stream && p.include_usage && p.reasoning);
        assert_eq!(p.max_output_tokens, Some(9));
        assert_eq!(p.tools, vec!["get_weather".to_string()]);
        assert_eq!(p.turn, Turn::ToolOutputs(vec!["sunny".into()]));
        assert_eq!(p.last_user_text, "call get_weather with city=Paris");
        assert_eq!(p.input_tokens, 2 + 4 + 2 + 1);
    }

    #[test]
    fn defaults_and_errors() {
        let p = parse_chat(
            json!({"messages": [{"role": "user", "content": "hi"}]}),
            "d",
        )
        .unwrap();
        assert_eq!(p.model, "d");
        assert!(!p.stream && !p.reasoning && p.parallel_tool_calls);
        assert_eq!(p.turn, Turn::User("hi".into()));
        let p = parse_chat(
            json!({"messages": [], "reasoning_effort": "none", "tool_choice": "none",
                   "tools": [{"type": "function", "function": {"name": "f"}}]}),
            "d",
        )
        .unwrap();
        assert!(!p.reasoning && p.tools.is_empty());
        assert_eq!(
            parse_chat(json!({}), "d").unwrap_err().param.as_deref(),
            Some("messages")
        );
        assert_eq!(
            parse_chat(json!({"messages": [], "stream": "yes"}), "d")
                .unwrap_err()
                .param
                .as_deref(),
            Some("stream")
        );
    }
}
