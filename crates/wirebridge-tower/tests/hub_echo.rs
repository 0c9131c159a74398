//! What the Responses layer answers the Messages layer above it: its
//! `Response` objects carry no echo of the request (the tools and
//! instructions the Messages layer never reads), unless the turn is kept,
//! whose stored response is the one a later read returns.

mod common;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use common::{body, upstream, ScriptedBody, Seen};
use http::{Request, Response, StatusCode};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use serde_json::{json, Value};
use tower::{Layer, ServiceExt};
use wirebridge_store::{MemoryStore, ResponseStore};
use wirebridge_testkit::{messages_grammar, parse_sse};
use wirebridge_tower::{MessagesToResponsesLayer, RequestBody, ResponsesToChatLayer};

/// Text only the request's tool list holds.
const TOOL_NOTE: &str = "looks a word up in the project glossary";
/// Text only the request's system prompt holds.
const SYSTEM: &str = "Answer as the glossary keeper.";

const COMPLETION: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",
"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Hello."}}],
"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22}}"#;

const CHUNKS: &str = concat!(
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",",
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n",
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",",
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo.\"}}]}\n\n",
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",",
    "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: [DONE]\n\n"
);

/// A Messages request declaring a tool and a system prompt; a thread's
/// first turn (kept) when `thread`.
fn ask(stream: bool, thread: bool) -> Request<ScriptedBody> {
    let mut request = json!({"model": "m", "max_tokens": 64, "stream": stream, "system": SYSTEM,
        "tools": [{"name": "Lookup", "description": TOOL_NOTE,
            "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}}}],
        "messages": [{"role": "user", "content": "Hi"}]});
    if thread {
        request["thread"] = json!({"type": "create"});
    }
    let mut builder = Request::post("/v1/messages")
        .header("x-api-key", "sk-ant-tenant")
        .header("anthropic-version", "2023-06-01");
    if thread {
        builder = builder.header("anthropic-beta", "message-threads-2026-08-12");
    }
    builder.body(body(&request.to_string())).unwrap()
}

/// Asks the Messages layer over the Responses layer (with `store`, if
/// any) over a Chat backend answering `reply`; what the client got, what
/// the Responses layer answered the Messages layer, and what the backend
/// was sent.
async fn exchange(
    request: Request<ScriptedBody>,
    reply: &str,
    content_type: &'static str,
    store: Option<Arc<dyn ResponseStore>>,
) -> (Bytes, String, String) {
    let seen = Seen::default();
    let chat = upstream(
        StatusCode::OK,
        content_type,
        reply.as_bytes().to_vec(),
        7,
        seen.clone(),
    )
    .map_request(|r: Request<RequestBody<RequestBody<ScriptedBody>>>| r.map(RequestBody::flatten));
    let responses = match store {
        Some(store) => ResponsesToChatLayer::new().store_arc(store),
        None => ResponsesToChatLayer::new(),
    };
    let inner: Arc<Mutex<Vec<u8>>> = Arc::default();
    let recorded = Arc::clone(&inner);
    // Between the layers: the Responses layer's answer, frame by frame as
    // it came (a stream's events are handed up one a frame), recorded.
    let probe = responses
        .layer(chat)
        .then(move |answer: Result<Response<_>, Infallible>| {
            let recorded = Arc::clone(&recorded);
            async move {
                let (head, mut body) = answer?.into_parts();
                let mut frames = Vec::new();
                while let Some(frame) = body.frame().await {
                    if let Ok(data) = frame.expect("the Responses layer's answer").into_data() {
                        recorded.lock().unwrap().extend_from_slice(&data);
                        frames.push(Ok::<_, Infallible>(Frame::data(data)));
                    }
                }
                let body = StreamBody::new(futures_util::stream::iter(frames));
                Ok::<_, Infallible>(Response::from_parts(head, body))
            }
        });
    let response = MessagesToResponsesLayer::new()
        .layer(probe)
        .oneshot(request)
        .await
        .unwrap();
    let (head, client) = response.into_parts();
    let client = client.collect().await.unwrap().to_bytes();
    assert_eq!(head.status, 200, "{}", String::from_utf8_lossy(&client));
    let inner = String::from_utf8(inner.lock().unwrap().clone()).unwrap();
    let (_, _, sent) = seen.last();
    (client, inner, String::from_utf8(sent.to_vec()).unwrap())
}

#[tokio::test]
async fn a_body_handed_up_carries_no_echo_of_the_request() {
    let (client, inner, sent) =
        exchange(ask(false, false), COMPLETION, "application/json", None).await;
    // The backend was sent both; the Messages layer was handed neither.
    assert!(sent.contains(TOOL_NOTE) && sent.contains(SYSTEM), "{sent}");
    assert!(
        !inner.contains(TOOL_NOTE) && !inner.contains(SYSTEM),
        "{inner}"
    );
    let response: Value = serde_json::from_str(&inner).unwrap();
    assert_eq!(response["object"], "response");
    assert_eq!(response["tools"], json!([]));
    let message: Value = serde_json::from_slice(&client).unwrap();
    assert_eq!(message["content"][0]["text"], "Hello.");
    assert_eq!(message["stop_reason"], "end_turn");
    assert_eq!(message["usage"]["output_tokens"], 2);
}

#[tokio::test]
async fn a_stream_handed_up_carries_no_echo_in_its_lifecycle_events() {
    let (client, inner, sent) = exchange(ask(true, false), CHUNKS, "text/event-stream", None).await;
    assert!(sent.contains(TOOL_NOTE) && sent.contains(SYSTEM), "{sent}");
    assert!(inner.contains("\"response.completed\""), "{inner}");
    assert!(
        !inner.contains(TOOL_NOTE) && !inner.contains(SYSTEM),
        "{inner}"
    );
    let transcript = messages_grammar::check(&parse_sse(&client))
        .unwrap_or_else(|v| panic!("{v}\n{}", String::from_utf8_lossy(&client)));
    assert_eq!(transcript.text, "Hello.");
}

#[tokio::test]
async fn a_kept_turn_keeps_its_echo_for_the_stored_response() {
    let store: Arc<dyn ResponseStore> = Arc::new(MemoryStore::new());
    for (stream, reply, content_type) in [
        (false, COMPLETION, "application/json"),
        (true, CHUNKS, "text/event-stream"),
    ] {
        let request = ask(stream, true);
        let (_, inner, _) = exchange(request, reply, content_type, Some(Arc::clone(&store))).await;
        assert!(
            inner.contains(TOOL_NOTE) && inner.contains(SYSTEM),
            "{inner}"
        );
    }
}
