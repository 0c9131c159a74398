//! Compaction in front of a Responses upstream that keeps no state (vLLM,
//! llama.cpp, DeepSeek): the bridge asks the backend for the summary in a
//! Responses request of its own, seals it, and sends it in place of the
//! compaction item afterwards. `POST /v1/responses/compact`,
//! `compaction_trigger` turns and `context_management`.

mod common;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use common::stateful::call;
use common::{End, ScriptedBody};
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::{Layer, Service};
use wirebridge_convert::responses_to_chat::compaction::{SUMMARY_INTRO, SUMMARY_PROMPT};
use wirebridge_convert::seal::{SealKey, Sealer};
use wirebridge_store::MemoryStore;
use wirebridge_testkit::{parse_sse, responses_grammar};
use wirebridge_tower::{RequestBody, ResponseBody, StatefulResponsesLayer};

const SUMMARY: &str = "The user wants a haiku about the sea; one draft was written.";

/// What the upstream was sent, request by request.
type Seen = Arc<Mutex<Vec<Value>>>;

/// The text of an input item, whatever its content's shape.
fn text_of(item: &Value) -> String {
    match &item["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => item["output"].as_str().unwrap_or("").to_owned(),
    }
}

/// A Responses server that keeps nothing and refuses what would need it
/// (`previous_response_id`, a `compaction` item, `context_management`):
/// a request whose last input item asks for a summary is answered with
/// `SUMMARY`, any other with the roles and texts of its input.
fn stateless_upstream(
    seen: Seen,
) -> impl Service<
    Request<RequestBody<ScriptedBody>>,
    Response = Response<ScriptedBody>,
    Error = Infallible,
    Future = impl Send,
> + Clone {
    tower::service_fn(move |request: Request<RequestBody<ScriptedBody>>| {
        let seen = seen.clone();
        async move {
            assert_eq!(request.uri().path(), "/v1/responses");
            let bytes = request.into_body().collect().await.unwrap().to_bytes();
            let body: Value = serde_json::from_slice(&bytes).unwrap();
            seen.lock().unwrap().push(body.clone());
            let reply = |status, text: String, kind: &str| {
                let mut response =
                    Response::new(ScriptedBody::new(vec![Bytes::from(text)], End::Eof).0);
                *response.status_mut() = status;
                response
                    .headers_mut()
                    .insert("content-type", kind.parse().unwrap());
                Ok::<_, Infallible>(response)
            };
            let input = body["input"].as_array().unwrap();
            let refused = body.get("previous_response_id").is_some()
                || body.get("context_management").is_some()
                || input.iter().any(|item| {
                    let kind = item["type"].as_str().unwrap_or("");
                    kind.contains("compaction") || item.get("encrypted_content").is_some()
                });
            if refused {
                let error = json!({"error": {"message": format!("unsupported request: {body}"), "type": "invalid_request_error"}});
                return reply(
                    StatusCode::BAD_REQUEST,
                    error.to_string(),
                    "application/json",
                );
            }
            let text = match text_of(input.last().unwrap()) == SUMMARY_PROMPT {
                true => SUMMARY.to_owned(),
                false => input
                    .iter()
                    .map(|item| {
                        format!("{}:{}", item["role"].as_str().unwrap_or("-"), text_of(item))
                    })
                    .collect::<Vec<_>>()
                    .join(" | "),
            };
            let item = json!({"type": "message", "id": "msg_up", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]});
            let usage = json!({"input_tokens": 50, "output_tokens": 5, "total_tokens": 55});
            if body["stream"] == true {
                let events = [
                    json!({"type": "response.created", "response": {"id": "up", "object": "response", "status": "in_progress"}}),
                    json!({"type": "response.output_item.added", "item": {"type": "message", "id": "msg_up", "role": "assistant", "status": "in_progress", "content": []}}),
                    json!({"type": "response.content_part.added", "item_id": "msg_up", "part": {"type": "output_text", "text": ""}}),
                    json!({"type": "response.output_text.delta", "item_id": "msg_up", "delta": text}),
                    json!({"type": "response.output_text.done", "item_id": "msg_up", "text": text}),
                    json!({"type": "response.content_part.done", "item_id": "msg_up", "part": {"type": "output_text", "text": text}}),
                    json!({"type": "response.output_item.done", "item": item}),
                    json!({"type": "response.completed", "response": {"id": "up", "object": "response", "status": "completed", "model": "m", "output": [item], "usage": usage}}),
                ];
                let sse: String = events
                    .iter()
                    .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
                    .collect();
                return reply(StatusCode::OK, sse, "text/event-stream");
            }
            let response = json!({"id": "up", "object": "response", "status": "completed", "model": "m",
                "output": [item], "usage": usage});
            reply(StatusCode::OK, response.to_string(), "application/json")
        }
    })
}

fn service(
    seen: Seen,
    key: &Sealer,
) -> impl Service<
    Request<ScriptedBody>,
    Response = Response<ResponseBody<ScriptedBody>>,
    Error = Infallible,
> + Clone {
    StatefulResponsesLayer::new()
        .store(MemoryStore::new())
        .sealer(key.clone())
        .layer(stateless_upstream(seen))
}

/// The `Response` a stream's terminal event carries.
fn terminal(stream: &[u8]) -> Value {
    let last = parse_sse(stream).pop().expect("a stream with events");
    let event: Value = serde_json::from_str(&last.data).unwrap();
    event["response"].clone()
}

fn sealer() -> Sealer {
    Sealer::new(SealKey::generate(), Vec::new())
}

fn conversation() -> Value {
    json!([
        {"role": "user", "content": "Write a haiku about the sea."},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Waves fold into foam."}]},
        {"type": "function_call", "call_id": "call_1", "name": "count", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "5-7-5"},
        {"role": "developer", "content": "Keep it short."}
    ])
}

#[tokio::test]
async fn compact_then_continue_with_the_summary_in_place() {
    let seen = Seen::default();
    let key = sealer();
    let service = service(seen.clone(), &key);
    let (status, compacted, _) = call(
        &service,
        "POST",
        "/v1/responses/compact",
        "k1",
        Some(json!({"model": "m", "input": conversation()})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{compacted}");
    assert_eq!(compacted["object"], "response.compaction");
    let output = compacted["output"].as_array().unwrap();
    let kinds: Vec<&str> = output.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["message", "message", "compaction"], "{compacted}");
    assert_eq!(text_of(&output[0]), "Write a haiku about the sea.");
    assert_eq!(text_of(&output[1]), "Keep it short.");
    assert!(
        !output[2]["encrypted_content"]
            .as_str()
            .unwrap()
            .contains("haiku"),
        "sealed"
    );

    // The summary was asked of the backend in a Responses request: the
    // conversation, then the prompt, in one piece.
    let asked = seen.lock().unwrap()[0].clone();
    assert_ne!(asked["stream"], true, "{asked}");
    assert!(asked.get("store").is_none(), "{asked}");
    let input = asked["input"].as_array().unwrap();
    assert_eq!(text_of(input.last().unwrap()), SUMMARY_PROMPT);
    assert_eq!(text_of(&input[0]), "Write a haiku about the sea.");

    // A follow-up carrying the compacted output: the backend reads the
    // client's messages, the summary, and the new message.
    let mut follow_up = output.clone();
    follow_up.push(json!({"role": "user", "content": "Now one about rivers."}));
    let (status, reply, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": follow_up})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let sent = seen.lock().unwrap().last().unwrap().clone();
    let texts: Vec<String> = sent["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(text_of)
        .collect();
    assert_eq!(
        texts,
        [
            "Write a haiku about the sea.".to_owned(),
            "Keep it short.".to_owned(),
            format!("{SUMMARY_INTRO}{SUMMARY}"),
            "Now one about rivers.".to_owned(),
        ]
    );

    // Another tenant cannot open it: the item is left out, and reported.
    let (status, reply, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "k2",
        Some(json!({"model": "m", "input": output})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let sent = seen.lock().unwrap().last().unwrap().clone();
    assert_eq!(sent["input"].as_array().unwrap().len(), 2, "{sent}");
}

#[tokio::test]
async fn a_trigger_turn_answers_with_one_compaction_item_streamed_or_not() {
    for stream in [false, true] {
        let seen = Seen::default();
        let service = service(seen.clone(), &sealer());
        let mut input = conversation().as_array().unwrap().clone();
        input.push(json!({"type": "compaction_trigger"}));
        let (status, reply, bytes) = call(
            &service,
            "POST",
            "/v1/responses",
            "k1",
            Some(json!({"model": "m", "input": input, "stream": stream})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        let response = match stream {
            true => {
                responses_grammar::check(&parse_sse(&bytes)).unwrap();
                terminal(&bytes)
            }
            false => reply,
        };
        let output = response["output"].as_array().unwrap();
        assert_eq!(output.len(), 1, "{response}");
        assert_eq!(output[0]["type"], "compaction");
        assert_eq!(seen.lock().unwrap().len(), 1, "the summary request only");
    }
}

#[tokio::test]
async fn context_management_compacts_only_past_its_threshold() {
    let managed = |input: Value| {
        json!({"model": "m", "input": input, "stream": true,
            "context_management": [{"type": "compaction", "compact_threshold": 1000}]})
    };
    // Below the threshold: answered as it is, context_management kept
    // from the backend.
    let seen = Seen::default();
    let below = service(seen.clone(), &sealer());
    let (status, _, bytes) = call(
        &below,
        "POST",
        "/v1/responses",
        "k1",
        Some(managed(conversation())),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let t = responses_grammar::check(&parse_sse(&bytes)).unwrap();
    assert!(t.text.starts_with("user:Write a haiku"), "{}", t.text);
    assert_eq!(seen.lock().unwrap().len(), 1);

    // Past it (about 1,500 tokens by the estimate): the summary first,
    // then the reply to the compacted conversation, the compaction item
    // first in its output.
    let mut long = conversation().as_array().unwrap().clone();
    long.insert(1, json!({"role": "user", "content": "sea ".repeat(1500)}));
    long.push(json!({"role": "user", "content": "Once more."}));
    let seen = Seen::default();
    let bridge = service(seen.clone(), &sealer());
    let (status, _, bytes) = call(
        &bridge,
        "POST",
        "/v1/responses",
        "k1",
        Some(managed(Value::Array(long))),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    responses_grammar::check(&parse_sse(&bytes)).unwrap();
    let response = terminal(&bytes);
    let output = response["output"].as_array().unwrap();
    assert_eq!(output[0]["type"], "compaction", "{response}");
    assert_eq!(output.len(), 2, "{response}");
    assert_eq!(
        response["usage"]["total_tokens"], 110,
        "the summary's and the reply's"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "the summary, then the reply");
    let texts: Vec<String> = seen[1]["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(text_of)
        .collect();
    assert_eq!(texts.len(), 5, "{texts:?}");
    assert_eq!(texts[3], "Once more.");
    assert_eq!(texts[4], format!("{SUMMARY_INTRO}{SUMMARY}"));
}
