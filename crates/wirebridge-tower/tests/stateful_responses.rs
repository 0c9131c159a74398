//! The stateful Responses layer over a Responses upstream that keeps no
//! state and refuses what would need it, as vLLM, llama.cpp and DeepSeek do:
//! conversations continue, responses are retrieved, listed and deleted, and
//! what the upstream gets is always a whole conversation.

mod common;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use common::stateful::{call, text};
use common::{End, ScriptedBody};
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::{Layer, Service};
use wirebridge_store::MemoryStore;
use wirebridge_testkit::{parse_sse, responses_grammar};
use wirebridge_tower::{RequestBody, StatefulResponsesLayer};

/// What the upstream was sent, request by request.
type Seen = Arc<Mutex<Vec<Value>>>;

/// A Responses server that keeps nothing: it refuses
/// `previous_response_id`, and answers with the texts of the input items it
/// got, joined, as llama.cpp's server would frame it (no sequence numbers,
/// no echo of the request).
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
            let reply = |status, text: String, kind| {
                let mut response =
                    Response::new(ScriptedBody::new(vec![Bytes::from(text)], End::Eof).0);
                *response.status_mut() = status;
                response.headers_mut().insert("content-type", kind);
                Ok::<_, Infallible>(response)
            };
            if body.get("previous_response_id").is_some() {
                let error = json!({"error": {"message": "this server does not support 'previous_response_id'", "type": "invalid_request_error"}});
                return reply(
                    StatusCode::BAD_REQUEST,
                    error.to_string(),
                    "application/json".parse().unwrap(),
                );
            }
            let said: Vec<String> = body["input"]
                .as_array()
                .unwrap()
                .iter()
                .map(|item| {
                    let content = &item["content"];
                    let text = content
                        .as_str()
                        .map(str::to_owned)
                        .or_else(|| content[0]["text"].as_str().map(str::to_owned))
                        .or_else(|| item["output"].as_str().map(str::to_owned))
                        .unwrap_or_else(|| item["type"].as_str().unwrap_or("?").to_owned());
                    format!("{}:{text}", item["role"].as_str().unwrap_or("-"))
                })
                .collect();
            let text = said.join(" | ");
            let item = json!({"type": "message", "id": "msg_up", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]});
            if body["stream"] == true {
                let events = [
                    json!({"type": "response.created", "response": {"id": "up", "object": "response", "status": "in_progress"}}),
                    json!({"type": "response.output_item.added", "item": {"type": "message", "id": "msg_up", "role": "assistant", "status": "in_progress", "content": []}}),
                    json!({"type": "response.content_part.added", "item_id": "msg_up", "part": {"type": "output_text", "text": ""}}),
                    json!({"type": "response.output_text.delta", "item_id": "msg_up", "delta": text}),
                    json!({"type": "response.output_text.done", "item_id": "msg_up", "text": text}),
                    json!({"type": "response.content_part.done", "item_id": "msg_up", "part": {"type": "output_text", "text": text}}),
                    json!({"type": "response.output_item.done", "item": item}),
                    json!({"type": "response.completed", "response": {"id": "up", "object": "response", "status": "completed", "model": "m", "output": [item], "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}}),
                ];
                let sse: String = events
                    .iter()
                    .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
                    .collect();
                return reply(StatusCode::OK, sse, "text/event-stream".parse().unwrap());
            }
            let response = json!({"id": "up", "object": "response", "status": "completed", "model": "m",
                "output": [item], "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}});
            reply(
                StatusCode::OK,
                response.to_string(),
                "application/json".parse().unwrap(),
            )
        }
    })
}

fn service(
    seen: Seen,
) -> impl Service<
    Request<ScriptedBody>,
    Response = Response<wirebridge_tower::ResponseBody<ScriptedBody>>,
    Error = Infallible,
> + Clone {
    StatefulResponsesLayer::new()
        .store(MemoryStore::new())
        .layer(stateless_upstream(seen))
}

#[tokio::test]
async fn a_conversation_continues_over_a_server_that_keeps_nothing() {
    let seen = Seen::default();
    let service = service(seen.clone());
    let (status, first, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "My name is Ada.", "store": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let first_id = first["id"].as_str().unwrap();
    assert_eq!(text(&first), "user:My name is Ada.");
    assert!(seen.lock().unwrap()[0].get("store").is_none());

    // Streamed, continuing the first.
    let (status, _, bytes) = call(
        &service,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "previous_response_id": first_id, "input": "And my name?", "stream": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let transcript = responses_grammar::check(&parse_sse(&bytes)).expect("grammar");
    assert_eq!(
        transcript.text,
        "user:My name is Ada. | assistant:user:My name is Ada. | user:And my name?"
    );
    let second = &transcript.output;
    assert_eq!(second.len(), 1);
    let sent = seen.lock().unwrap()[1].clone();
    assert!(sent.get("previous_response_id").is_none());
    assert_eq!(sent["input"].as_array().unwrap().len(), 3);

    // The third turn sees all of it, and names the second.
    let (status, third, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "previous_response_id": transcript.response_id, "input": "Thanks."})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{third}");
    assert_eq!(
        third["previous_response_id"],
        transcript.response_id.as_str()
    );
    assert_eq!(
        seen.lock().unwrap()[2]["input"].as_array().unwrap().len(),
        5
    );

    // Retrieval, listing and deletion are the bridge's.
    let path = format!("/v1/responses/{first_id}");
    let (status, got, _) = call(&service, "GET", &path, "k1", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got["output"], first["output"]);
    let (status, items, _) =
        call(&service, "GET", &format!("{path}/input_items"), "k1", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(items["data"][0]["content"][0]["text"], "My name is Ada.");
    let (status, _, _) = call(&service, "GET", &path, "someone else", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "another tenant sees nothing");
    let (status, _, _) = call(&service, "DELETE", &path, "k1", None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, gone, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "previous_response_id": first_id, "input": "?"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{gone}");
    assert_eq!(
        seen.lock().unwrap().len(),
        3,
        "a refused turn reaches no upstream"
    );
}

#[tokio::test]
async fn an_item_reference_is_sent_as_the_item_it_names() {
    let seen = Seen::default();
    let service = service(seen.clone());
    let (_, first, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "Remember this."})),
    )
    .await;
    let answer_id = first["output"][0]["id"].as_str().unwrap();
    let (status, second, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": [
            {"type": "item_reference", "id": answer_id},
            {"role": "user", "content": "Again?"}
        ]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let sent = seen.lock().unwrap()[1]["input"].clone();
    assert_eq!(sent[0]["type"], "message");
    assert_eq!(sent[0]["content"][0]["text"], "user:Remember this.");
    assert_eq!(sent[1]["content"], "Again?");
}

#[tokio::test]
async fn a_response_not_to_be_stored_is_not() {
    let seen = Seen::default();
    let service = service(seen);
    let (status, reply, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "Forget me.", "store": false})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(reply["store"], false);
    let path = format!("/v1/responses/{}", reply["id"].as_str().unwrap());
    let (status, _, _) = call(&service, "GET", &path, "k1", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
