//! Shared helpers: a real HTTP client against a started demo server, and
//! assertions that every stream passes the strict grammar checkers.

#![allow(dead_code)]

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use wirebridge_demo::{DemoConfig, DemoServer};
use wirebridge_testkit::responses_grammar::REQUIRED_RESPONSE_KEYS;
use wirebridge_testkit::{chat_grammar, messages_grammar, parse_sse, responses_grammar};
use wirebridge_testkit::{ChatTranscript, MessagesTranscript, ResponsesTranscript};

pub const CHAT: &str = "/v1/chat/completions";
pub const RESPONSES: &str = "/v1/responses";
pub const MESSAGES: &str = "/v1/messages";
pub const COUNT_TOKENS: &str = "/v1/messages/count_tokens";

/// What the server answered.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The whole body, or the error that ended it early.
    pub body: Result<Bytes, String>,
    /// The body bytes received before an early end (all of them otherwise).
    pub received: Vec<u8>,
}

impl Answer {
    pub fn bytes(&self) -> &Bytes {
        match &self.body {
            Ok(b) => b,
            Err(e) => panic!("the body ended with an error: {e}"),
        }
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(self.bytes()).expect("a JSON body")
    }

    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

pub fn client() -> Client<HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http()
}

pub async fn start() -> DemoServer {
    DemoServer::start(DemoConfig::default()).await
}

/// A demo upstream serving every API, Messages included.
pub async fn start_all() -> DemoServer {
    DemoServer::start(DemoConfig::default().api(wirebridge_demo::Api::All)).await
}

/// Send a request and read the whole answer, frame by frame, so that the
/// bytes before a dropped connection are kept.
pub async fn send(server: &DemoServer, method: &str, path: &str, body: &str) -> Answer {
    send_with(&client(), &server.url(), method, path, body).await
}

/// [`send`] with a given client and base URL.
pub async fn send_with(
    client: &Client<HttpConnector, Full<Bytes>>,
    base: &str,
    method: &str,
    path: &str,
    body: &str,
) -> Answer {
    let req = Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let res = client.request(req).await.expect("the server answers");
    let status = res.status();
    let headers = res.headers().clone();
    let mut body = res.into_body();
    let mut received = Vec::new();
    let end = loop {
        match body.frame().await {
            None => break Ok(()),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    received.extend_from_slice(&data);
                }
            }
            Some(Err(e)) => break Err(e.to_string()),
        }
    };
    Answer {
        status,
        headers,
        body: end.map(|()| Bytes::from(received.clone())),
        received,
    }
}

pub async fn post(server: &DemoServer, path: &str, body: &Value) -> Answer {
    send(server, "POST", path, &body.to_string()).await
}

/// A Chat request with one user message.
pub fn chat_request(text: &str, stream: bool) -> Value {
    serde_json::json!({
        "model": "demo-model",
        "stream": stream,
        "messages": [{"role": "user", "content": text}],
    })
}

/// A Responses request with one user message.
pub fn responses_request(text: &str, stream: bool) -> Value {
    serde_json::json!({
        "model": "demo-model",
        "stream": stream,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": text}]}],
    })
}

/// A Messages request with one user message.
pub fn messages_request(text: &str, stream: bool) -> Value {
    serde_json::json!({
        "model": "demo-model",
        "max_tokens": 4096,
        "stream": stream,
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    })
}

/// The demo's tools as Messages declares them.
pub fn messages_tools() -> Value {
    serde_json::json!([
        {"name": "get_weather", "input_schema": {"type": "object"}},
        {"name": "get_time", "input_schema": {"type": "object"}}
    ])
}

/// The demo's function tool definitions for both APIs.
pub fn chat_tools() -> Value {
    serde_json::json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
    ])
}

pub fn responses_tools() -> Value {
    serde_json::json!([
        {"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
        {"type": "function", "name": "get_time", "parameters": {"type": "object"}}
    ])
}

/// Check a Chat stream strictly and return its transcript.
pub fn check_chat_stream(answer: &Answer, include_usage: bool) -> ChatTranscript {
    assert_eq!(answer.status, 200);
    assert_eq!(answer.content_type(), "text/event-stream");
    let frames = parse_sse(answer.bytes());
    chat_grammar::check(&frames, include_usage).unwrap_or_else(|v| {
        panic!(
            "Chat grammar violation: {v}\n{}",
            String::from_utf8_lossy(answer.bytes())
        )
    })
}

/// Check a Responses stream strictly and return its transcript.
pub fn check_responses_stream(answer: &Answer) -> ResponsesTranscript {
    check_responses_stream_with(answer, &responses_grammar::CheckOptions::strict())
}

/// Check a Responses stream with explicit options.
pub fn check_responses_stream_with(
    answer: &Answer,
    options: &responses_grammar::CheckOptions,
) -> ResponsesTranscript {
    assert_eq!(answer.status, 200);
    assert_eq!(answer.content_type(), "text/event-stream");
    let frames = parse_sse(answer.bytes());
    responses_grammar::check_with(&frames, options).unwrap_or_else(|v| {
        panic!(
            "Responses grammar violation: {v}\n{}",
            String::from_utf8_lossy(answer.bytes())
        )
    })
}

/// Check a Messages stream strictly (every event named, the grammar the
/// Anthropic SDKs rely on) and return its transcript.
pub fn check_messages_stream(answer: &Answer) -> MessagesTranscript {
    assert_eq!(answer.status, 200);
    assert_eq!(answer.content_type(), "text/event-stream");
    let frames = parse_sse(answer.bytes());
    messages_grammar::check(&frames).unwrap_or_else(|v| {
        panic!(
            "Messages grammar violation: {v}\n{}",
            String::from_utf8_lossy(answer.bytes())
        )
    })
}

/// Check the fields of a `message` body and return its transcript.
pub fn check_messages_body(answer: &Answer) -> MessagesTranscript {
    assert_eq!(answer.status, 200);
    assert_eq!(answer.content_type(), "application/json");
    let body = answer.json();
    // (serde_json's map sorts the keys; the golden files show their order.)
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "content",
            "id",
            "model",
            "role",
            "stop_reason",
            "stop_sequence",
            "type",
            "usage"
        ],
        "{body}"
    );
    assert_eq!(body["type"], "message");
    assert_eq!(body["role"], "assistant");
    assert!(body["id"].as_str().unwrap().starts_with("msg_"));
    assert!(body["stop_sequence"].is_null());
    for key in [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ] {
        assert!(body["usage"][key].is_u64(), "usage.{key}");
    }
    messages_grammar::messages_body_transcript(&body)
}

/// The Anthropic-shaped error body of an answer:
/// `{"type": "error", "error": {"type", "message"}}`.
pub fn anthropic_error_of(answer: &Answer) -> Value {
    assert_eq!(answer.content_type(), "application/json");
    let body = answer.json();
    assert_eq!(body["type"], "error", "{body}");
    let e = body["error"].clone();
    assert!(e["type"].is_string() && e["message"].is_string(), "{body}");
    assert_eq!(body.as_object().unwrap().len(), 2, "{body}");
    e
}

/// Check the required fields of a `chat.completion` body (spec §7) and
/// return its transcript.
pub fn check_chat_body(answer: &Answer) -> ChatTranscript {
    assert_eq!(answer.status, 200);
    assert_eq!(answer.content_type(), "application/json");
    let body = answer.json();
    for key in ["id", "object", "created", "model", "choices"] {
        assert!(body.get(key).is_some(), "missing `{key}` in {body}");
    }
    assert_eq!(body["object"], "chat.completion");
    assert!(body["created"].is_u64());
    let choices = body["choices"].as_array().expect("choices array");
    assert_eq!(choices.len(), 1);
    for key in ["finish_reason", "index", "message", "logprobs"] {
        assert!(choices[0].get(key).is_some(), "missing choice `{key}`");
    }
    let message = &choices[0]["message"];
    for key in ["content", "refusal", "role"] {
        assert!(message.get(key).is_some(), "missing message `{key}`");
    }
    assert_eq!(message["role"], "assistant");
    for key in ["prompt_tokens", "completion_tokens", "total_tokens"] {
        assert!(body["usage"][key].is_u64(), "usage.{key}");
    }
    chat_grammar::chat_body_transcript(&body)
}

/// Check the required fields of a `Response` body (spec §2) and return its
/// transcript.
pub fn check_responses_body(answer: &Answer) -> ResponsesTranscript {
    assert_eq!(answer.status, 200);
    assert_eq!(answer.content_type(), "application/json");
    let body = answer.json();
    for key in REQUIRED_RESPONSE_KEYS {
        assert!(body.get(*key).is_some(), "missing `{key}` in {body}");
    }
    assert_eq!(body["object"], "response");
    assert!(
        body.get("user").is_none(),
        "`user` only when the request had one"
    );
    let usage = &body["usage"];
    for key in ["input_tokens", "output_tokens", "total_tokens"] {
        assert!(usage[key].is_u64(), "usage.{key}");
    }
    assert!(usage["input_tokens_details"]["cached_tokens"].is_u64());
    assert!(usage["output_tokens_details"]["reasoning_tokens"].is_u64());
    for item in body["output"].as_array().unwrap() {
        assert!(item["id"].is_string() && item["type"].is_string());
    }
    responses_grammar::responses_body_transcript(&body)
}

/// The OpenAI-shaped error body of an answer.
pub fn error_of(answer: &Answer) -> Value {
    let body = answer.json();
    let e = body["error"].clone();
    assert!(e["message"].is_string(), "{body}");
    assert!(e["type"].is_string(), "{body}");
    assert!(
        e.get("param").is_some() && e.get("code").is_some(),
        "{body}"
    );
    e
}
