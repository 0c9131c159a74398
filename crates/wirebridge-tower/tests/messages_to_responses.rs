//! `MessagesToResponsesLayer` over `ResponsesToChatLayer`, the stack
//! `wirebridge serve` builds for Anthropic Messages clients on a Chat
//! backend: what reaches the backend, what the client reads, errors in
//! Anthropic's shape, token counts and what the observer is told.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{body, read, upstream, Seen};
use http::{Request, StatusCode};
use serde_json::{json, Value};
use tower::{Layer, ServiceExt};
use wirebridge_convert::messages_to_responses::{translate_request, Options};
use wirebridge_testkit::{chat_grammar, fixtures, messages_grammar, parse_sse};
use wirebridge_tower::observer::Direction;
use wirebridge_tower::{
    Exchange, Framing, MessagesToResponsesLayer, RequestBody, ResponsesToChatLayer,
    INPUT_TOKENS_HEADER,
};

/// A recorded Chat body calling a tool named `Query`, which [`TOOLS`]
/// declares.
const TOOL_CALL: &str = "openai-python/chat-json-tool-call-complex-args.json";
const TOOLS: &str = r#"[{"name":"Query","input_schema":{"type":"object","properties":{"name":{"type":"string"}}}}]"#;

/// The Messages layer over the Responses one, over `chat`: the Chat
/// backend takes the bodies of one layer. The Responses layer's replies
/// that hand their events on apart, in bare JSON with the deltas as
/// records (`Framing::Handed`), are counted in `apart`.
fn stack<S>(
    messages: MessagesToResponsesLayer,
    responses: ResponsesToChatLayer,
    chat: S,
    apart: Arc<AtomicUsize>,
) -> impl tower::Service<
    Request<common::ScriptedBody>,
    Response = http::Response<
        wirebridge_tower::ResponseBody<wirebridge_tower::ResponseBody<common::ScriptedBody>>,
    >,
    Error = std::convert::Infallible,
    Future = impl Send,
>
where
    S: tower::Service<
            Request<RequestBody<common::ScriptedBody>>,
            Response = http::Response<common::ScriptedBody>,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let chat = chat.map_request(
        |r: Request<RequestBody<RequestBody<common::ScriptedBody>>>| r.map(RequestBody::flatten),
    );
    let responses = responses
        .layer(chat)
        .map_response(move |response: http::Response<_>| {
            let framing = response.extensions().get::<Framing>();
            if framing.is_some_and(Framing::hands_deltas) {
                apart.fetch_add(1, Ordering::Relaxed);
            }
            response
        });
    messages.layer(responses)
}

fn post(path: &str, json: &str) -> Request<common::ScriptedBody> {
    Request::post(path)
        .header("x-api-key", "sk-ant-tenant")
        .header("anthropic-version", "2023-06-01")
        .header("anthropic-beta", "interleaved-thinking-2025-05-14")
        .header("anthropic-dangerous-direct-browser-access", "true")
        .body(body(json))
        .unwrap()
}

/// A Messages request whose tools are the names the recorded stream calls.
fn request_calling<'n>(names: impl IntoIterator<Item = &'n str>, stream: bool) -> String {
    let mut tools: Vec<Value> = Vec::new();
    for name in names {
        let tool = json!({"name": name, "input_schema": {"type": "object"}});
        if !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    let mut request = json!({"model": "claude-x", "max_tokens": 1024, "stream": stream,
        "messages": [{"role": "user", "content": "hi"}]});
    if !tools.is_empty() {
        request["tools"] = Value::from(tools);
    }
    request.to_string()
}

#[tokio::test]
async fn every_recorded_chat_stream_reaches_a_messages_client_through_both_layers() {
    let streams = fixtures::chat_streams();
    assert!(streams.len() >= 10);
    for (seed, stream) in streams.into_iter().enumerate() {
        let seen = Seen::default();
        let chat = upstream(
            StatusCode::OK,
            "text/event-stream",
            stream.sse.clone(),
            seed as u64,
            seen.clone(),
        );
        let apart = Arc::new(AtomicUsize::new(0));
        let service = stack(
            MessagesToResponsesLayer::new(),
            ResponsesToChatLayer::new(),
            chat,
            Arc::clone(&apart),
        );
        let recorded = chat_grammar::transcript_of_recorded(&stream.frames());
        let names = recorded.tool_calls.iter().map(|c| c.name.as_str());
        let request = request_calling(names, true);
        let response = service
            .oneshot(post("/v1/messages?beta=true", &request))
            .await
            .unwrap();
        // The client's own stream is SSE, unmarked; the Responses layer
        // handed its events on apart, with nothing to decode between, and
        // its deltas as records.
        assert!(response.extensions().get::<Framing>().is_none());
        let (status, headers, bytes) = read(response).await;
        assert_eq!(status, 200, "{}", stream.name);
        assert_eq!(headers["content-type"], "text/event-stream");
        assert_eq!(apart.load(Ordering::Relaxed), 1, "{}", stream.name);
        let t = messages_grammar::check(&parse_sse(&bytes)).unwrap_or_else(|v| {
            panic!("{}: {v}\n{}", stream.name, String::from_utf8_lossy(&bytes))
        });
        match &recorded.error {
            Some(error) => {
                let sent = t.error.expect("the failure is reported");
                assert_eq!(sent["message"], error["message"], "{}", stream.name);
            }
            None => {
                assert_eq!(
                    t.text,
                    recorded.text.clone() + &recorded.refusal,
                    "{}",
                    stream.name
                );
                let calls: Vec<_> = t.tool_calls.iter().map(|c| &c.call_id).collect();
                let want: Vec<_> = recorded.tool_calls.iter().map(|c| &c.call_id).collect();
                assert_eq!(calls, want, "{}", stream.name);
            }
        }
        // The backend was asked in its own API, without Anthropic's query.
        let (uri, _, sent) = seen.last();
        assert_eq!(uri, "/v1/chat/completions");
        let sent: Value = serde_json::from_slice(&sent).unwrap();
        assert_eq!(sent["stream"], true);
        assert_eq!(sent["messages"][0]["content"], "hi");
    }
}

#[tokio::test]
async fn the_key_reaches_the_backend_as_its_bearer_and_anthropic_headers_stay_behind() {
    let reply = fixtures::load_bytes(TOOL_CALL);
    let seen = Seen::default();
    let chat = upstream(StatusCode::OK, "application/json", reply, 3, seen.clone());
    let service = stack(
        MessagesToResponsesLayer::new(),
        ResponsesToChatLayer::new(),
        chat,
        Arc::default(),
    );
    let request = format!(
        r#"{{"model":"claude-x","max_tokens":64,"tools":{TOOLS},
            "messages":[{{"role":"user","content":"Weather in Paris?"}}]}}"#
    );
    let response = service
        .oneshot(post("/v1/messages?beta=true", &request))
        .await
        .unwrap();
    let (status, _, bytes) = read(response).await;
    assert_eq!(status, 200);
    let message: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(message["type"], "message");
    let (uri, headers, _) = seen.last();
    assert_eq!(uri, "/v1/chat/completions");
    assert_eq!(headers["authorization"], "Bearer sk-ant-tenant");
    for name in [
        "x-api-key",
        "anthropic-version",
        "anthropic-beta",
        "anthropic-dangerous-direct-browser-access",
    ] {
        assert!(headers.get(name).is_none(), "{name} reached the backend");
    }
}

#[tokio::test]
async fn a_bearer_the_client_sent_is_kept() {
    let reply = fixtures::load_bytes(TOOL_CALL);
    let seen = Seen::default();
    let chat = upstream(StatusCode::OK, "application/json", reply, 4, seen.clone());
    let service = stack(
        MessagesToResponsesLayer::new(),
        ResponsesToChatLayer::new(),
        chat,
        Arc::default(),
    );
    let mut request = post(
        "/v1/messages",
        r#"{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"Hi"}]}"#,
    );
    request
        .headers_mut()
        .insert("authorization", "Bearer sk-own".parse().unwrap());
    let (status, _, _) = read(service.oneshot(request).await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(seen.last().1["authorization"], "Bearer sk-own");
}

/// The Anthropic error a Messages client got: status, type and message.
async fn anthropic_error(
    status: StatusCode,
    content_type: &'static str,
    upstream_body: &str,
    request: Request<common::ScriptedBody>,
) -> (StatusCode, String, String) {
    let chat = upstream(
        status,
        content_type,
        upstream_body.as_bytes().to_vec(),
        5,
        Seen::default(),
    );
    let messages = MessagesToResponsesLayer::new().body_limit(4096);
    let service = stack(messages, ResponsesToChatLayer::new(), chat, Arc::default());
    let (status, headers, bytes) = read(service.oneshot(request).await.unwrap()).await;
    assert_eq!(headers["content-type"], "application/json");
    let error: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error.as_object().unwrap().len(), 2, "{error}");
    let kind = error["error"]["type"].as_str().unwrap().to_owned();
    let message = error["error"]["message"].as_str().unwrap().to_owned();
    (status, kind, message)
}

#[tokio::test]
async fn errors_reach_the_client_in_anthropics_shape_with_its_statuses() {
    let hi = r#"{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"Hi"}]}"#;
    let limited =
        r#"{"error":{"message":"Slow down.","type":"requests","code":"rate_limit_exceeded"}}"#;
    let (status, kind, message) = anthropic_error(
        StatusCode::TOO_MANY_REQUESTS,
        "application/json",
        limited,
        post("/v1/messages", hi),
    )
    .await;
    assert_eq!(
        (status, kind.as_str(), message.as_str()),
        (
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "Slow down."
        )
    );

    let (status, kind, message) = anthropic_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "text/plain",
        "upstream exploded",
        post("/v1/messages", hi),
    )
    .await;
    assert_eq!(
        (status, kind.as_str()),
        (StatusCode::INTERNAL_SERVER_ERROR, "api_error")
    );
    assert!(message.contains("upstream exploded"), "{message}");

    let context = r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"BadRequestError","code":400}}"#;
    let (status, kind, _) = anthropic_error(
        StatusCode::BAD_REQUEST,
        "application/json",
        context,
        post("/v1/messages", hi),
    )
    .await;
    assert_eq!(
        (status, kind.as_str()),
        (StatusCode::BAD_REQUEST, "invalid_request_error")
    );

    // Refused before any backend: the field is named.
    let (status, kind, message) = anthropic_error(
        StatusCode::OK,
        "application/json",
        "{}",
        post(
            "/v1/messages",
            r#"{"model":"m","messages":[{"role":"user","content":"Hi"}]}"#,
        ),
    )
    .await;
    assert_eq!(
        (status, kind.as_str()),
        (StatusCode::BAD_REQUEST, "invalid_request_error")
    );
    assert!(message.contains("max_tokens"), "{message}");

    let large = format!(
        r#"{{"model":"m","max_tokens":64,"messages":[{{"role":"user","content":"{}"}}]}}"#,
        "x".repeat(8192)
    );
    let (status, kind, _) = anthropic_error(
        StatusCode::OK,
        "application/json",
        "{}",
        post("/v1/messages", &large),
    )
    .await;
    assert_eq!(
        (status, kind.as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, "request_too_large")
    );
}

#[tokio::test]
async fn count_tokens_is_the_responses_sides_count_of_the_translated_request() {
    let request = format!(
        r#"{{"model":"claude-x","system":"Be brief.","tools":{TOOLS},
            "messages":[{{"role":"user","content":"Weather in Paris, please?"}}]}}"#
    );
    let never_called = || {
        upstream(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            b"the backend has no tokenizer here".to_vec(),
            6,
            Seen::default(),
        )
    };
    let service = stack(
        MessagesToResponsesLayer::new(),
        ResponsesToChatLayer::new(),
        never_called(),
        Arc::default(),
    );
    let response = service
        .oneshot(post("/v1/messages/count_tokens?beta=true", &request))
        .await
        .unwrap();
    let (status, headers, bytes) = read(response).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    assert_eq!(headers[INPUT_TOKENS_HEADER], "estimated");
    let count: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(count.as_object().unwrap().len(), 1, "{count}");

    // The same request, translated by hand and counted by the Responses
    // layer alone.
    let mut with_max: Value = serde_json::from_str(&request).unwrap();
    with_max["max_tokens"] = json!(1);
    let translated = translate_request(with_max.to_string().as_bytes(), &Options::default())
        .unwrap()
        .body;
    let responses = ResponsesToChatLayer::new().layer(never_called());
    let direct = Request::post("/v1/responses/input_tokens")
        .body(body(std::str::from_utf8(&translated).unwrap()))
        .unwrap();
    let (status, _, direct) = read(responses.oneshot(direct).await.unwrap()).await;
    assert_eq!(status, 200);
    let direct: Value = serde_json::from_slice(&direct).unwrap();
    assert!(direct["input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(count["input_tokens"], direct["input_tokens"]);
}

#[tokio::test]
async fn the_observer_hears_both_legs_the_inner_one_marked() {
    let heard: Arc<Mutex<Vec<Exchange>>> = Arc::default();
    let observer = {
        let heard = Arc::clone(&heard);
        move |e: &Exchange| heard.lock().unwrap().push(e.clone())
    };
    let reply = fixtures::load_bytes(TOOL_CALL);
    let chat = upstream(
        StatusCode::OK,
        "application/json",
        reply,
        7,
        Seen::default(),
    );
    let service = stack(
        MessagesToResponsesLayer::new().observer(observer.clone()),
        ResponsesToChatLayer::new().observer(observer),
        chat,
        Arc::default(),
    );
    let request = format!(
        r#"{{"model":"claude-x","max_tokens":64,"tools":{TOOLS},
            "messages":[{{"role":"user","content":"Weather in Paris?"}}]}}"#
    );
    let (status, _, _) = read(
        service
            .oneshot(post("/v1/messages", &request))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let heard = heard.lock().unwrap();
    let legs: Vec<_> = heard
        .iter()
        .map(|e| {
            (
                e.direction,
                e.via,
                e.path.as_str(),
                e.reply.outcome.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        legs,
        [
            (
                Direction::ResponsesToChat,
                Some(Direction::MessagesToResponses),
                "/v1/responses",
                Some("completed")
            ),
            (
                Direction::MessagesToResponses,
                None,
                "/v1/messages",
                Some("tool_use")
            ),
        ]
    );
    assert_eq!(heard[0].reply.usage, heard[1].reply.usage);
}

/// Betas the bridge does not know are reported (by the header that lists
/// what was dropped, and refused under a strict policy); the thinking
/// token count a client asks for by its beta is the backend's reasoning
/// count.
#[tokio::test]
async fn betas_are_read_before_they_are_stripped() {
    let chat_reply =
        json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Four."}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 30, "total_tokens": 50,
            "completion_tokens_details": {"reasoning_tokens": 26}}})
        .to_string();
    let ask = |betas: &'static str| {
        let mut request = post(
            "/v1/messages?beta=true",
            r#"{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"2+2?"}]}"#,
        );
        request
            .headers_mut()
            .insert("anthropic-beta", betas.parse().unwrap());
        request
    };
    let service = |messages: MessagesToResponsesLayer| {
        let chat = upstream(
            StatusCode::OK,
            "application/json",
            chat_reply.clone().into_bytes(),
            7,
            Seen::default(),
        );
        stack(messages, ResponsesToChatLayer::new(), chat, Arc::default())
    };

    let response = service(MessagesToResponsesLayer::new())
        .oneshot(ask("thinking-token-count-2026-05-13, dreaming-2026-04-21"))
        .await
        .unwrap();
    let (status, headers, bytes) = read(response).await;
    assert_eq!(status, 200);
    assert_eq!(headers[wirebridge_tower::DROPPED_HEADER], "anthropic-beta");
    let message: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(message["usage"]["output_tokens"], 30);
    assert_eq!(
        message["usage"]["output_tokens_details"]["thinking_tokens"],
        26
    );

    // Without the beta, Anthropic's usage has no breakdown; the known
    // betas are no loss.
    let response = service(MessagesToResponsesLayer::new())
        .oneshot(ask("interleaved-thinking-2025-05-14,effort-2025-11-24"))
        .await
        .unwrap();
    let (status, headers, bytes) = read(response).await;
    assert_eq!(status, 200);
    assert!(headers.get(wirebridge_tower::DROPPED_HEADER).is_none());
    let message: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(message["usage"].get("output_tokens_details").is_none());

    // A strict policy refuses the unknown beta by name, in Anthropic's shape.
    let strict = MessagesToResponsesLayer::new().policy(wirebridge_convert::LossPolicy::strict());
    let response = service(strict)
        .oneshot(ask("dreaming-2026-04-21"))
        .await
        .unwrap();
    let (status, _, bytes) = read(response).await;
    assert_eq!(status, 400);
    let error: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "invalid_request_error");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("dreaming-2026-04-21"), "{message}");
}

/// A Messages client's thread, kept in the Responses layer's store: the
/// create is kept with its system prompt and tools; a continue sends only
/// the new turn, and the Chat backend is sent the whole conversation with
/// them. A reply the store does not keep is Anthropic's 404, and a layer
/// without a store refuses the thread.
#[tokio::test]
async fn a_thread_is_kept_in_the_responses_layers_store() {
    let chat_reply =
        json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Hello Ada."}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23}})
        .to_string();
    let seen = Seen::default();
    let store: Arc<dyn wirebridge_store::ResponseStore> =
        Arc::new(wirebridge_store::MemoryStore::new());
    let service = |store: Option<&Arc<dyn wirebridge_store::ResponseStore>>| {
        let chat = upstream(
            StatusCode::OK,
            "application/json",
            chat_reply.clone().into_bytes(),
            3,
            seen.clone(),
        );
        let responses = match store {
            Some(store) => ResponsesToChatLayer::new().store_arc(Arc::clone(store)),
            None => ResponsesToChatLayer::new(),
        };
        stack(
            MessagesToResponsesLayer::new(),
            responses,
            chat,
            Arc::default(),
        )
    };
    let ask = |json: String| {
        let mut request = post("/v1/messages", &json);
        request.headers_mut().insert(
            "anthropic-beta",
            "message-threads-2026-08-12".parse().unwrap(),
        );
        request
    };
    let continuing = |id: &str, text: &str| {
        json!({"model": "m", "max_tokens": 64,
            "thread": {"type": "continue", "previous_message_id": id},
            "messages": [{"role": "user", "content": text}]})
        .to_string()
    };

    let create = format!(
        r#"{{"model":"m","max_tokens":64,"system":"Be brief.","tools":{TOOLS},
        "thread":{{"type":"create"}},"messages":[{{"role":"user","content":"My name is Ada."}}]}}"#
    );
    let (status, headers, bytes) =
        read(service(Some(&store)).oneshot(ask(create)).await.unwrap()).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    assert!(headers.get(wirebridge_tower::DROPPED_HEADER).is_none());
    let first: Value = serde_json::from_slice(&bytes).unwrap();
    let id = first["id"].as_str().unwrap();

    let next = continuing(id, "What is my name?");
    let (status, _, bytes) = read(service(Some(&store)).oneshot(ask(next)).await.unwrap()).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    let (_, _, sent) = seen.last();
    let sent: Value = serde_json::from_slice(&sent).unwrap();
    let turns: Vec<(&str, &str)> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        turns,
        [
            ("system", "Be brief."),
            ("user", "My name is Ada."),
            ("assistant", "Hello Ada."),
            ("user", "What is my name?"),
        ],
        "{sent}"
    );
    assert_eq!(sent["tools"][0]["function"]["name"], "Query", "{sent}");

    let calls = seen.0.lock().unwrap().len();
    let unknown = continuing("msg_0123456789abcdef0123456789abcdef", "Hi");
    let (status, _, bytes) = read(service(Some(&store)).oneshot(ask(unknown)).await.unwrap()).await;
    assert_eq!(status, 404);
    let error: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(error["error"]["type"], "not_found_error");
    assert_eq!(error["error"]["details"]["error_code"], "thread_not_found");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("thread.previous_message_id"),
        "{message}"
    );

    let storeless = continuing(id, "Hi");
    let (status, _, bytes) = read(service(None).oneshot(ask(storeless)).await.unwrap()).await;
    assert_eq!(status, 400);
    let error: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        error["error"]["details"]["error_code"],
        "thread_unsupported_request"
    );
    assert_eq!(
        seen.0.lock().unwrap().len(),
        calls,
        "refused before the backend"
    );
}
