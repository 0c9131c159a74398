//! `POST /v1/messages` (and `POST /v1/messages/count_tokens`) request →
//! [`Prompt`], checked as Anthropic's API checks it: every refusal is a 400
//! whose message starts with the JSON path of the field at fault
//! (`messages.1.content.0.signature: …`), as Anthropic's messages do.

use super::{count_tokens, model, MessagesBetas, Prompt, Turn};
use crate::error::ApiError;
use crate::signature;
use serde_json::{Map, Value};

/// The least `thinking.budget_tokens` Anthropic accepts.
const MIN_THINKING_BUDGET: u64 = 1024;

/// What a Messages request is for: the fields each endpoint requires differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MessagesEndpoint {
    /// `POST …/messages`: `max_tokens` is required.
    Create,
    /// `POST …/messages/count_tokens`: no `max_tokens`, no `stream`.
    CountTokens,
}

/// A 400 naming the field at `path`.
fn refuse(path: &str, problem: impl std::fmt::Display) -> ApiError {
    ApiError::invalid_request(format!("{path}: {problem}"), Some(path), None)
}

/// Read and check a Messages request body, under the request's betas.
pub(crate) fn parse_messages(
    body: &[u8],
    default_model: &str,
    endpoint: MessagesEndpoint,
    betas: MessagesBetas,
) -> Result<Prompt, ApiError> {
    let body = match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            return Err(ApiError::invalid_request(
                "The request body must be a JSON object.",
                None,
                None,
            ))
        }
        Err(e) => {
            return Err(ApiError::invalid_request(
                format!("The request body is not valid JSON: {e}"),
                None,
                None,
            ))
        }
    };
    let max_tokens = match endpoint {
        MessagesEndpoint::Create => Some(max_tokens(&body)?),
        MessagesEndpoint::CountTokens => None,
    };
    let stream = match (endpoint, body.get("stream")) {
        (MessagesEndpoint::CountTokens, _) | (_, None | Some(Value::Null)) => false,
        (_, Some(Value::Bool(b))) => *b,
        (_, Some(_)) => return Err(refuse("stream", "Input should be a valid boolean")),
    };
    let thinking = thinking_requested(&body, max_tokens)?;
    let system_text = system_text(body.get("system"))?;
    let (tools, parallel_tool_calls) = tools(&body)?;
    let conversation = read_conversation(&body, betas)?;

    let turn = match conversation.trailing_tool_outputs {
        Some(outputs) => Turn::ToolOutputs(outputs),
        None => Turn::User(conversation.last_user_text.clone()),
    };
    Ok(Prompt {
        model: model(&body, default_model),
        stream,
        include_usage: false,
        max_output_tokens: max_tokens,
        reasoning: thinking,
        tools,
        parallel_tool_calls,
        turn,
        last_user_text: conversation.last_user_text,
        input_tokens: count_tokens(&system_text) + conversation.words,
        raw: body,
    })
}

/// `max_tokens`: required, an integer of at least 1.
fn max_tokens(body: &Value) -> Result<u64, ApiError> {
    match body.get("max_tokens") {
        None | Some(Value::Null) => Err(refuse("max_tokens", "Field required")),
        Some(v) => match v.as_u64() {
            Some(0) => Err(refuse(
                "max_tokens",
                "Input should be greater than or equal to 1",
            )),
            Some(n) => Ok(n),
            None => Err(refuse("max_tokens", "Input should be a valid integer")),
        },
    }
}

/// Whether `thinking` asks for thinking: `{"type": "enabled",
/// "budget_tokens": N}` with `1024 <= N < max_tokens`, or `{"type":
/// "adaptive"}`; `{"type": "disabled"}` and no `thinking` do not.
fn thinking_requested(body: &Value, max_tokens: Option<u64>) -> Result<bool, ApiError> {
    let thinking = match body.get("thinking") {
        None | Some(Value::Null) => return Ok(false),
        Some(Value::Object(t)) => t,
        Some(_) => return Err(refuse("thinking", "Input should be a valid object")),
    };
    match thinking.get("type").and_then(Value::as_str) {
        Some("disabled") => Ok(false),
        Some("adaptive") => Ok(true),
        Some("enabled") => {
            let path = "thinking.enabled.budget_tokens";
            let budget = match thinking.get("budget_tokens") {
                None | Some(Value::Null) => return Err(refuse(path, "Field required")),
                Some(v) => v
                    .as_u64()
                    .ok_or_else(|| refuse(path, "Input should be a valid integer"))?,
            };
            if budget < MIN_THINKING_BUDGET {
                return Err(refuse(
                    path,
                    format_args!("Input should be greater than or equal to {MIN_THINKING_BUDGET}"),
                ));
            }
            if max_tokens.is_some_and(|max| budget >= max) {
                return Err(refuse(
                    "max_tokens",
                    "`max_tokens` must be greater than `thinking.budget_tokens`",
                ));
            }
            Ok(true)
        }
        _ => Err(refuse(
            "thinking.type",
            "Input should be 'enabled', 'disabled' or 'adaptive'",
        )),
    }
}

/// The text of `system`: a string, or `text` blocks.
fn system_text(system: Option<&Value>) -> Result<String, ApiError> {
    match system {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::new();
            for (i, block) in blocks.iter().enumerate() {
                if block.get("type").and_then(Value::as_str) != Some("text") {
                    return Err(refuse(
                        &format!("system.{i}.type"),
                        "Input should be 'text'",
                    ));
                }
                texts.push(string_field(block, &format!("system.{i}"), "text")?);
            }
            Ok(texts.join("\n"))
        }
        Some(_) => Err(refuse(
            "system",
            "Input should be a valid string or a list of text blocks",
        )),
    }
}

/// The names of the custom tools the model may call (none under
/// `tool_choice: {"type": "none"}`), and whether it may call several at
/// once (not under `disable_parallel_tool_use: true`).
fn tools(body: &Value) -> Result<(Vec<String>, bool), ApiError> {
    let mut names = Vec::new();
    match body.get("tools") {
        None | Some(Value::Null) => {}
        Some(Value::Array(tools)) => {
            for (i, tool) in tools.iter().enumerate() {
                let path = format!("tools.{i}");
                if !tool.is_object() {
                    return Err(refuse(&path, "Input should be a valid object"));
                }
                let custom = matches!(
                    tool.get("type").and_then(Value::as_str),
                    None | Some("custom")
                );
                let name = string_field(tool, &path, "name")?;
                if custom {
                    names.push(name);
                }
            }
        }
        Some(_) => return Err(refuse("tools", "Input should be a valid list")),
    }
    let choice = match body.get("tool_choice") {
        None | Some(Value::Null) => return Ok((names, true)),
        Some(Value::Object(choice)) => choice,
        Some(_) => return Err(refuse("tool_choice", "Input should be a valid object")),
    };
    match choice.get("type").and_then(Value::as_str) {
        Some("auto" | "any") => {}
        Some("tool") => {
            string_field(&body["tool_choice"], "tool_choice", "name")?;
        }
        Some("none") => names.clear(),
        _ => {
            return Err(refuse(
                "tool_choice.type",
                "Input should be 'auto', 'any', 'tool' or 'none'",
            ))
        }
    }
    let parallel = match choice.get("disable_parallel_tool_use") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(disable)) => !disable,
        Some(_) => {
            return Err(refuse(
                "tool_choice.disable_parallel_tool_use",
                "Input should be a valid boolean",
            ))
        }
    };
    Ok((names, parallel))
}

/// What the demo reads from `messages`.
struct Conversation {
    /// Words of every text, tool input and tool result.
    words: u64,
    /// The text of the last user message that has text (tool results aside).
    last_user_text: String,
    /// The results of the last message, when it is a user message with
    /// `tool_result` blocks.
    trailing_tool_outputs: Option<Vec<String>>,
}

/// Read `messages`, checking each message and block on the way. A
/// `system` turn is read (its words count) only under the beta that
/// allows it, and is neither the user's text nor a tool result.
fn read_conversation(body: &Value, betas: MessagesBetas) -> Result<Conversation, ApiError> {
    let messages = match body.get("messages") {
        None | Some(Value::Null) => return Err(refuse("messages", "Field required")),
        Some(Value::Array(m)) if m.is_empty() => {
            return Err(refuse("messages", "at least one message is required"))
        }
        Some(Value::Array(m)) => m,
        Some(_) => return Err(refuse("messages", "Input should be a valid list")),
    };
    let mut conversation = Conversation {
        words: 0,
        last_user_text: String::new(),
        trailing_tool_outputs: None,
    };
    // The `tool_use` ids of the message before the one being read.
    let mut previous_calls: Vec<String> = Vec::new();
    for (n, message) in messages.iter().enumerate() {
        let path = format!("messages.{n}");
        let Value::Object(message) = message else {
            return Err(refuse(&path, "Input should be a valid object"));
        };
        let role = match message.get("role").and_then(Value::as_str) {
            Some(role @ ("user" | "assistant")) => role,
            Some(role @ "system") if betas.system_turns => role,
            _ => {
                return Err(refuse(
                    &format!("{path}.role"),
                    "Input should be 'user' or 'assistant'",
                ))
            }
        };
        let read = read_message(message, &path, &previous_calls)?;
        conversation.words += read.words;
        if role == "user" && !read.text.is_empty() {
            conversation.last_user_text = read.text;
        }
        conversation.trailing_tool_outputs =
            (role == "user" && !read.tool_outputs.is_empty()).then_some(read.tool_outputs);
        previous_calls = read.calls;
    }
    Ok(conversation)
}

/// What one message holds.
struct ReadMessage {
    /// Its text blocks (and media placeholders), joined with `\n`.
    text: String,
    /// The text of its `tool_result` blocks, in order.
    tool_outputs: Vec<String>,
    /// The ids of its `tool_use` blocks.
    calls: Vec<String>,
    /// Words of everything it says.
    words: u64,
}

/// Check one message's content and read it.
fn read_message(
    message: &Map<String, Value>,
    path: &str,
    previous_calls: &[String],
) -> Result<ReadMessage, ApiError> {
    let mut read = ReadMessage {
        text: String::new(),
        tool_outputs: Vec::new(),
        calls: Vec::new(),
        words: 0,
    };
    let blocks = match message.get("content") {
        Some(Value::String(s)) => {
            read.words = count_tokens(s);
            read.text = s.clone();
            return Ok(read);
        }
        Some(Value::Array(blocks)) => blocks,
        None | Some(Value::Null) => {
            return Err(refuse(&format!("{path}.content"), "Field required"))
        }
        Some(_) => {
            return Err(refuse(
                &format!("{path}.content"),
                "Input should be a valid string or a list of content blocks",
            ))
        }
    };
    let mut texts = Vec::new();
    for (m, block) in blocks.iter().enumerate() {
        let path = format!("{path}.content.{m}");
        if !block.is_object() {
            return Err(refuse(&path, "Input should be a valid object"));
        }
        let Some(kind) = block.get("type").and_then(Value::as_str) else {
            return Err(refuse(&format!("{path}.type"), "Field required"));
        };
        match kind {
            "text" => texts.push(string_field(block, &path, "text")?),
            "image" => texts.push("[image]".to_string()),
            "document" => texts.push("[file]".to_string()),
            "tool_use" => {
                let id = string_field(block, &path, "id")?;
                string_field(block, &path, "name")?;
                let Some(input @ Value::Object(_)) = block.get("input") else {
                    return Err(refuse(
                        &format!("{path}.input"),
                        "Input should be a valid dictionary",
                    ));
                };
                read.words += count_tokens(&input.to_string());
                read.calls.push(id);
            }
            "tool_result" => {
                let id = string_field(block, &path, "tool_use_id")?;
                if !previous_calls.contains(&id) {
                    return Err(refuse(
                        &format!("{path}.tool_use_id"),
                        format_args!(
                            "unexpected `tool_use_id` found in `tool_result` blocks: {id}. \
                             Each `tool_result` block must have a corresponding `tool_use` \
                             block in the previous message."
                        ),
                    ));
                }
                let output = tool_result_text(block.get("content"));
                read.words += count_tokens(&output);
                read.tool_outputs.push(output);
            }
            "thinking" => {
                let thinking = string_field(block, &path, "thinking")?;
                let signature = match block.get("signature") {
                    Some(Value::String(s)) => s,
                    _ => return Err(refuse(&format!("{path}.signature"), "Field required")),
                };
                if !signature::verify(&thinking, signature) {
                    return Err(refuse(
                        &format!("{path}.signature"),
                        "Invalid `signature` in `thinking` block",
                    ));
                }
            }
            "redacted_thinking" => {
                string_field(block, &path, "data")?;
            }
            // Blocks the demo has no use for (server tool results, search
            // results, …) are accepted and not read.
            _ => {}
        }
    }
    read.text = texts.join("\n");
    read.words += count_tokens(&read.text);
    Ok(read)
}

/// The text of a `tool_result`'s `content`: a string, or blocks (`text`
/// blocks' text, `[image]` for images), joined with `\n`.
fn tool_result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                    Some("text") => b.get("text").and_then(Value::as_str),
                    Some("image") => Some("[image]"),
                    _ => None,
                })
                .collect();
            texts.join("\n")
        }
        _ => String::new(),
    }
}

/// `object[key]` as a string, or the 400 naming `{path}.{key}`.
fn string_field(object: &Value, path: &str, key: &str) -> Result<String, ApiError> {
    match object.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(refuse(&format!("{path}.{key}"), "Field required")),
        Some(_) => Err(refuse(
            &format!("{path}.{key}"),
            "Input should be a valid string",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<Prompt, ApiError> {
        parse_messages(
            body.to_string().as_bytes(),
            "d",
            MessagesEndpoint::Create,
            MessagesBetas::default(),
        )
    }

    fn refused(body: Value) -> String {
        let e = parse(body).unwrap_err();
        assert_eq!(e.status, 400);
        e.message
    }

    #[test]
    fn reduces_a_tool_round_trip() {
        let p = parse(json!({
            "model": "m", "max_tokens": 2048, "stream": true,
            "system": [{"type": "text", "text": "be brief"}],
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [{"name": "get_weather", "input_schema": {"type": "object"}},
                      {"type": "web_search_20250305", "name": "web_search"}],
            "tool_choice": {"type": "auto", "disable_parallel_tool_use": true},
            "messages": [
                {"role": "user", "content": "call get_weather with city=Paris"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hm", "signature": signature::sign("hm")},
                    {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]}]}
            ]
        }))
        .unwrap();
        assert_eq!(p.model, "m");
        assert!(p.stream && p.reasoning && !p.parallel_tool_calls);
        assert_eq!(p.max_output_tokens, Some(2048));
        assert_eq!(p.tools, vec!["get_weather".to_string()]);
        assert_eq!(p.turn, Turn::ToolOutputs(vec!["sunny".into()]));
        assert_eq!(p.last_user_text, "call get_weather with city=Paris");
        // system 2, user 4, the input `{"city":"Paris"}` 1, the result 1.
        assert_eq!(p.input_tokens, 2 + 4 + 1 + 1);
    }

    #[test]
    fn required_fields_are_named() {
        let user = json!([{"role": "user", "content": "hi"}]);
        assert!(refused(json!({"messages": user})).starts_with("max_tokens: Field required"));
        assert!(refused(json!({"max_tokens": 5})).starts_with("messages: Field required"));
        assert!(refused(json!({"max_tokens": 5, "messages": []})).starts_with("messages:"));
        assert!(refused(
            json!({"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]})
        )
        .starts_with("messages.0.role:"));
        assert!(
            refused(json!({"max_tokens": 5, "messages": user, "system": [{"type": "image"}]}))
                .starts_with("system.0.type:")
        );
        assert!(
            refused(json!({"max_tokens": 5, "messages": user, "stream": "yes"}))
                .starts_with("stream:")
        );
        let counted = parse_messages(
            json!({"messages": user, "system": "a b"})
                .to_string()
                .as_bytes(),
            "d",
            MessagesEndpoint::CountTokens,
            MessagesBetas::default(),
        )
        .unwrap();
        assert_eq!(counted.input_tokens, 3);
    }

    #[test]
    fn a_system_turn_is_read_under_its_beta_only() {
        // As Claude Code sends its environment: after the user's message.
        let body = json!({"max_tokens": 5, "messages": [
            {"role": "user", "content": "call Bash"},
            {"role": "system", "content": [{"type": "text", "text": "cwd is here"}]},
        ]});
        assert!(refused(body.clone()).starts_with("messages.1.role:"));
        let betas = MessagesBetas { system_turns: true };
        let p = parse_messages(
            body.to_string().as_bytes(),
            "d",
            MessagesEndpoint::Create,
            betas,
        )
        .unwrap();
        // The user's text stays the turn; the system turn's words count.
        assert_eq!(p.turn, Turn::User("call Bash".into()));
        assert_eq!(p.input_tokens, 2 + 3);
        let other = json!({"max_tokens": 5, "messages": [{"role": "developer", "content": "x"}]});
        let e = parse_messages(
            other.to_string().as_bytes(),
            "d",
            MessagesEndpoint::Create,
            betas,
        )
        .unwrap_err();
        assert!(e.message.starts_with("messages.0.role:"), "{}", e.message);
    }

    #[test]
    fn thinking_budget_is_bounded() {
        let body = |budget: u64, max: u64| {
            json!({"max_tokens": max, "messages": [{"role": "user", "content": "hi"}],
                   "thinking": {"type": "enabled", "budget_tokens": budget}})
        };
        assert!(refused(body(1023, 4096)).starts_with("thinking.enabled.budget_tokens:"));
        assert!(refused(body(2048, 2048)).starts_with("max_tokens:"));
        assert!(parse(body(1024, 1025)).unwrap().reasoning);
        let disabled = json!({"max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
                              "thinking": {"type": "disabled"}});
        assert!(!parse(disabled).unwrap().reasoning);
    }

    #[test]
    fn thinking_must_carry_its_own_signature() {
        let body = |block: Value| {
            json!({"max_tokens": 5, "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "text", "text": "a"}, block]},
                {"role": "user", "content": "again"}]})
        };
        let good =
            json!({"type": "thinking", "thinking": "hm", "signature": signature::sign("hm")});
        assert_eq!(parse(body(good)).unwrap().last_user_text, "again");
        let altered =
            json!({"type": "thinking", "thinking": "hm!", "signature": signature::sign("hm")});
        assert_eq!(
            refused(body(altered)),
            "messages.1.content.1.signature: Invalid `signature` in `thinking` block"
        );
        let unsigned = json!({"type": "thinking", "thinking": "hm"});
        assert_eq!(
            refused(body(unsigned)),
            "messages.1.content.1.signature: Field required"
        );
    }

    #[test]
    fn tool_results_answer_the_previous_message() {
        let body = |id: &str| {
            json!({"max_tokens": 5, "messages": [
                {"role": "user", "content": "call f"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]}]})
        };
        assert!(parse(body("toolu_1")).is_ok());
        assert!(refused(body("toolu_2"))
            .starts_with("messages.2.content.0.tool_use_id: unexpected `tool_use_id`"));
    }
}
