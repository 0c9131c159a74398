//! The hand-written JSON against serde's, for every field and variant.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::super::{
    ChatMessage, ChatPart, ChatRequest, ChatTool, ChatToolChoice, CustomCall, FileRef,
    FunctionCall, FunctionDef, ImageUrl, JsonSchemaFormat, MessageContent, NamedFunction,
    ResponseFormat, Role, StreamOptions, ToolCall, UserLocation, WebSearchOptions,
};
use crate::{JsonText, RawObject};

fn raw(json: &str) -> &'static RawValue {
    Box::leak(RawValue::from_string(json.to_owned()).unwrap())
}

fn text(value: &str) -> JsonText<'static> {
    JsonText::from_text(value)
}

/// Strings that need escaping, in the places the writer escapes itself.
const AWKWARD: &str = "a \"quoted\" \\ name\n\u{1}\u{7f} é 😀";

fn assert_same(request: &ChatRequest<'_>) {
    let mut hand = Vec::new();
    request.write_json(&mut hand);
    let serde = serde_json::to_vec(request).unwrap();
    assert_eq!(
        String::from_utf8(hand).unwrap(),
        String::from_utf8(serde).unwrap()
    );
    for message in &request.messages {
        let mut hand = Vec::new();
        message.write_json(&mut hand);
        assert_eq!(hand, serde_json::to_vec(message).unwrap());
    }
}

fn every_part() -> Vec<ChatPart<'static>> {
    vec![
        ChatPart::Text {
            text: text(AWKWARD),
        },
        ChatPart::ImageUrl {
            image_url: ImageUrl {
                url: text("https://example.com/a.png"),
                detail: Some("high".into()),
            },
        },
        ChatPart::ImageUrl {
            image_url: ImageUrl {
                url: text("data:image/png;base64,AAAA"),
                detail: None,
            },
        },
        ChatPart::File {
            file: FileRef {
                file_data: Some(text("data:application/pdf;base64,AAAA")),
                file_id: Some(text("file-1")),
                filename: Some(text(AWKWARD)),
            },
        },
        ChatPart::File {
            file: FileRef {
                file_data: None,
                file_id: Some(text("file-2")),
                filename: None,
            },
        },
        ChatPart::InputAudio {
            input_audio: Cow::Borrowed(raw(r#"{"data":"AAAA","format":"wav"}"#)),
        },
        ChatPart::Refusal {
            refusal: text("no"),
        },
    ]
}

fn every_message() -> Vec<ChatMessage<'static>> {
    let mut assistant = ChatMessage::new(Role::Assistant, MessageContent::Null);
    assistant.refusal = Some(text("I would rather not"));
    assistant.tool_calls = vec![
        ToolCall::Function {
            id: AWKWARD.into(),
            function: FunctionCall {
                name: "shell".into(),
                arguments: JsonText::from_text(r#"{"command":["ls"]}"#),
            },
        },
        ToolCall::Custom {
            id: "call_2".into(),
            custom: CustomCall {
                name: AWKWARD.into(),
                input: text("*** Begin Patch"),
            },
        },
    ];
    assistant.reasoning_content = Some(text("thinking"));
    assistant.reasoning = Some(text("thinking"));
    let mut tool = ChatMessage::new(Role::Tool, MessageContent::Text(text("done")));
    tool.tool_call_id = Some("call_1".into());
    vec![
        ChatMessage::new(Role::System, MessageContent::Text(text("be brief"))),
        ChatMessage::new(Role::Developer, MessageContent::Text(text(AWKWARD))),
        ChatMessage::new(Role::User, MessageContent::Parts(every_part())),
        ChatMessage::new(Role::User, MessageContent::Parts(Vec::new())),
        ChatMessage::new(Role::Assistant, MessageContent::Absent),
        assistant,
        tool,
    ]
}

fn every_tool() -> Vec<ChatTool<'static>> {
    vec![
        ChatTool {
            kind: "function",
            function: FunctionDef {
                name: AWKWARD.into(),
                description: Some(text(AWKWARD)),
                parameters: Some(Cow::Borrowed(raw(
                    r#"{"type":"object","properties":{"a":{"type":"string"}}}"#,
                ))),
                strict: Some(true),
            },
        },
        ChatTool {
            kind: "function",
            function: FunctionDef {
                name: "bare".into(),
                description: None,
                parameters: None,
                strict: None,
            },
        },
    ]
}

fn full_request() -> ChatRequest<'static> {
    ChatRequest {
        model: AWKWARD.into(),
        messages: every_message(),
        tools: Some(every_tool()),
        tool_choice: Some(ChatToolChoice::Mode("required".into())),
        parallel_tool_calls: Some(false),
        response_format: Some(ResponseFormat::JsonSchema {
            json_schema: JsonSchemaFormat {
                name: text("answer"),
                description: Some(text(AWKWARD)),
                schema: Some(raw(r#"{"type":"object"}"#)),
                strict: Some(false),
            },
        }),
        max_completion_tokens: Some(u64::MAX),
        max_tokens: Some(0),
        temperature: Some(0.7),
        top_p: Some(1.0),
        presence_penalty: Some(-2.0),
        frequency_penalty: Some(f64::NAN),
        logprobs: Some(true),
        top_logprobs: Some(20),
        reasoning_effort: Some("high".into()),
        verbosity: Some("low".into()),
        user: Some(AWKWARD.into()),
        safety_identifier: Some("user-1".into()),
        metadata: Some(raw(r#"{"k":"v"}"#)),
        store: Some(true),
        prompt_cache_key: Some(AWKWARD.into()),
        prompt_cache_retention: Some(raw(r#""24h""#)),
        service_tier: Some("flex".into()),
        web_search_options: Some(WebSearchOptions {
            user_location: Some(UserLocation {
                kind: "approximate",
                approximate: RawObject::parse(raw(r#"{"city":"Paris","country":"FR"}"#)).unwrap(),
            }),
            search_context_size: Some(raw(r#""low""#)),
        }),
        stream: Some(true),
        stream_options: Some(StreamOptions {
            include_usage: true,
        }),
    }
}

#[test]
fn every_field_is_written_as_serde_writes_it() {
    assert_same(&full_request());
}

#[test]
fn a_bare_request_is_written_as_serde_writes_it() {
    assert_same(&ChatRequest::default());
    assert_same(&ChatRequest {
        model: "m".into(),
        messages: vec![ChatMessage::new(
            Role::User,
            MessageContent::Text(text("hi")),
        )],
        ..ChatRequest::default()
    });
}

#[test]
fn each_field_alone_is_written_as_serde_writes_it() {
    // With every other field left out, a field's separators and its place
    // among the others are tested on their own.
    let full = serde_json::to_value(full_request()).unwrap();
    let keys: Vec<String> = full.as_object().unwrap().keys().cloned().collect();
    for key in keys {
        let mut request = full_request();
        let mut alone = ChatRequest {
            model: std::mem::take(&mut request.model),
            ..ChatRequest::default()
        };
        match key.as_str() {
            "model" => {}
            "messages" => alone.messages = request.messages,
            "tools" => alone.tools = request.tools,
            "tool_choice" => alone.tool_choice = request.tool_choice,
            "parallel_tool_calls" => alone.parallel_tool_calls = request.parallel_tool_calls,
            "response_format" => alone.response_format = request.response_format,
            "max_completion_tokens" => alone.max_completion_tokens = request.max_completion_tokens,
            "max_tokens" => alone.max_tokens = request.max_tokens,
            "temperature" => alone.temperature = request.temperature,
            "top_p" => alone.top_p = request.top_p,
            "presence_penalty" => alone.presence_penalty = request.presence_penalty,
            "frequency_penalty" => alone.frequency_penalty = request.frequency_penalty,
            "logprobs" => alone.logprobs = request.logprobs,
            "top_logprobs" => alone.top_logprobs = request.top_logprobs,
            "reasoning_effort" => alone.reasoning_effort = request.reasoning_effort,
            "verbosity" => alone.verbosity = request.verbosity,
            "user" => alone.user = request.user,
            "safety_identifier" => alone.safety_identifier = request.safety_identifier,
            "metadata" => alone.metadata = request.metadata,
            "store" => alone.store = request.store,
            "prompt_cache_key" => alone.prompt_cache_key = request.prompt_cache_key,
            "prompt_cache_retention" => {
                alone.prompt_cache_retention = request.prompt_cache_retention
            }
            "service_tier" => alone.service_tier = request.service_tier,
            "web_search_options" => alone.web_search_options = request.web_search_options,
            "stream" => alone.stream = request.stream,
            "stream_options" => alone.stream_options = request.stream_options,
            other => panic!("the test does not know the field {other}"),
        }
        assert_same(&alone);
    }
}

#[test]
fn every_choice_and_format_is_written_as_serde_writes_it() {
    let choices = [
        ChatToolChoice::Mode("none".into()),
        ChatToolChoice::Mode(AWKWARD.into()),
        ChatToolChoice::Function {
            kind: "function",
            function: NamedFunction {
                name: AWKWARD.into(),
            },
        },
    ];
    for choice in choices {
        assert_same(&ChatRequest {
            tool_choice: Some(choice),
            ..ChatRequest::default()
        });
    }
    let formats = [
        ResponseFormat::Text,
        ResponseFormat::JsonObject,
        ResponseFormat::JsonSchema {
            json_schema: JsonSchemaFormat {
                name: text("bare"),
                description: None,
                schema: None,
                strict: None,
            },
        },
    ];
    for format in formats {
        assert_same(&ChatRequest {
            response_format: Some(format),
            ..ChatRequest::default()
        });
    }
    assert_same(&ChatRequest {
        web_search_options: Some(WebSearchOptions::default()),
        stream_options: Some(StreamOptions {
            include_usage: false,
        }),
        ..ChatRequest::default()
    });
}
