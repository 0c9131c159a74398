//! Compaction through the layer, over a scripted Chat upstream:
//! `POST /v1/responses/compact`, the compaction item read back by a later
//! request, `compaction_trigger` turns and `context_management`.

mod common;

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use common::{body, read, End, ScriptedBody};
use http::header::AUTHORIZATION;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::{Layer, Service, ServiceExt};
use wirebridge_convert::profile::BackendProfile;
use wirebridge_convert::responses_to_chat::compaction::{SUMMARY_INTRO, SUMMARY_PROMPT};
use wirebridge_convert::seal::{SealKey, Sealer};
use wirebridge_store::MemoryStore;
use wirebridge_testkit::{parse_sse, responses_grammar};
use wirebridge_tower::{
    RequestBody, ResponseBody, ResponsesToChatLayer, DROPPED_HEADER, REASONING_INCLUDED_HEADER,
};

const SUMMARY: &str = "The user wants a haiku about the sea; one draft was written.";

/// What the scripted upstream does and saw.
#[derive(Clone, Default)]
struct Script {
    /// Each request: its path and JSON body.
    seen: Arc<Mutex<Vec<(String, Value)>>>,
    /// What its tokenize endpoint counts.
    tokens: Arc<AtomicU64>,
    /// A status to answer summary requests with instead of a summary.
    refuse_summary: Arc<Mutex<Option<StatusCode>>>,
}

impl Script {
    fn seen(&self) -> Vec<(String, Value)> {
        self.seen.lock().unwrap().clone()
    }

    fn chat_requests(&self) -> Vec<Value> {
        self.seen()
            .into_iter()
            .filter(|(path, _)| path.ends_with("/chat/completions"))
            .map(|(_, body)| body)
            .collect()
    }

    /// A Chat upstream: summary requests get `SUMMARY`, tokenize requests
    /// a count, any other the roles and texts of its messages.
    fn upstream(
        &self,
    ) -> impl Service<
        Request<RequestBody<ScriptedBody>>,
        Response = Response<ScriptedBody>,
        Error = Infallible,
        Future = impl Send,
    > + Clone
           + Send
           + 'static {
        let script = self.clone();
        tower::service_fn(move |request: Request<RequestBody<ScriptedBody>>| {
            let script = script.clone();
            async move {
                let path = request.uri().path().to_owned();
                let bytes = request.into_body().collect().await.unwrap().to_bytes();
                let chat: Value = serde_json::from_slice(&bytes).unwrap();
                script
                    .seen
                    .lock()
                    .unwrap()
                    .push((path.clone(), chat.clone()));
                let reply = |status: StatusCode, content_type: &str, body: String| {
                    let mut response =
                        Response::new(ScriptedBody::new(vec![Bytes::from(body)], End::Eof).0);
                    *response.status_mut() = status;
                    response
                        .headers_mut()
                        .insert("content-type", content_type.parse().unwrap());
                    Ok::<_, Infallible>(response)
                };
                if path.ends_with("/tokenize") {
                    let count = script.tokens.load(Ordering::SeqCst);
                    return reply(
                        StatusCode::OK,
                        "application/json",
                        json!({"count": count}).to_string(),
                    );
                }
                let messages = chat["messages"].as_array().unwrap();
                if messages.last().unwrap()["content"] == SUMMARY_PROMPT {
                    if let Some(status) = *script.refuse_summary.lock().unwrap() {
                        let error = json!({"error": {"message": "slow down", "type": "rate_limit_error", "code": "rate_limited"}});
                        return reply(status, "application/json", error.to_string());
                    }
                    let answer = json!({"id": "s", "object": "chat.completion", "created": 1, "model": "m",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": SUMMARY}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}});
                    return reply(StatusCode::OK, "application/json", answer.to_string());
                }
                let text = messages
                    .iter()
                    .map(|m| {
                        format!(
                            "{}:{}",
                            m["role"].as_str().unwrap(),
                            m["content"].as_str().unwrap_or("")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" | ");
                let usage =
                    json!({"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110});
                if chat["stream"] == true {
                    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                        "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]});
                    let end = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage});
                    let body = format!("data: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n");
                    return reply(StatusCode::OK, "text/event-stream", body);
                }
                let answer = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": usage});
                reply(StatusCode::OK, "application/json", answer.to_string())
            }
        })
    }
}

type Bridge = tower::util::BoxCloneService<
    Request<ScriptedBody>,
    Response<ResponseBody<ScriptedBody>>,
    Infallible,
>;

fn sealer() -> Sealer {
    Sealer::new(SealKey::generate(), Vec::new())
}

/// The layer with a seal key, over the script's upstream.
fn bridge(script: &Script, key: &Sealer) -> Bridge {
    Bridge::new(
        ResponsesToChatLayer::new()
            .sealer(key.clone())
            .layer(script.upstream()),
    )
}

async fn send(
    bridge: &Bridge,
    path: &str,
    credential: &str,
    request: Value,
) -> (StatusCode, HeaderMap, Bytes) {
    let mut http = Request::post(path)
        .body(body(&request.to_string()))
        .unwrap();
    http.headers_mut().insert(
        AUTHORIZATION,
        format!("Bearer {credential}").parse().unwrap(),
    );
    read(bridge.clone().oneshot(http).await.unwrap()).await
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)))
}

fn conversation() -> Value {
    json!([
        {"role": "user", "content": "Write a haiku about the sea."},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Waves fold into foam"}]},
        {"type": "function_call", "call_id": "call_1", "name": "count_syllables", "arguments": "{\"line\":\"Waves fold into foam\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "5"},
    ])
}

#[tokio::test]
async fn compact_then_continue_with_the_summary_in_place() {
    let script = Script::default();
    let key = sealer();
    let bridge = bridge(&script, &key);
    let (status, headers, bytes) = send(
        &bridge,
        "/v1/responses/compact",
        "k1",
        json!({"model": "m", "instructions": "You are a poet.", "input": conversation()}),
    )
    .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers[REASONING_INCLUDED_HEADER], "true");
    let compacted = json_of(&bytes);
    assert_eq!(compacted["object"], "response.compaction");
    let output = compacted["output"].as_array().unwrap();
    assert_eq!(output.len(), 2, "{compacted}");
    assert_eq!(output[0]["role"], "user");
    assert_eq!(output[1]["type"], "compaction");
    assert_eq!(compacted["usage"]["total_tokens"], 940);

    // One non-streaming request to the upstream's Chat endpoint.
    let seen = script.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, "/v1/chat/completions");
    let summary_request = &seen[0].1;
    assert!(summary_request.get("stream").is_none());
    let messages = summary_request["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"], "You are a poet.");
    assert_eq!(messages.last().unwrap()["content"], SUMMARY_PROMPT);

    // The next turn, on any bridge with the same key.
    let other_replica = self::bridge(&script, &key);
    let mut input = output.clone();
    input.push(json!({"role": "user", "content": "Now a second stanza."}));
    let (status, headers, bytes) = send(
        &other_replica,
        "/v1/responses",
        "k1",
        json!({"model": "m", "input": input}),
    )
    .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    assert!(headers.get(DROPPED_HEADER).is_none());
    let chat = script.chat_requests().pop().unwrap();
    let roles_and_texts: Vec<(String, String)> = chat["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        roles_and_texts,
        [
            ("user".into(), "Write a haiku about the sea.".into()),
            ("user".into(), format!("{SUMMARY_INTRO}{SUMMARY}")),
            ("user".into(), "Now a second stanza.".into()),
        ]
    );
}

#[tokio::test]
async fn a_compaction_another_tenant_or_key_sealed_is_dropped_and_reported() {
    let script = Script::default();
    let key = sealer();
    let bridge = bridge(&script, &key);
    let (_, _, bytes) = send(
        &bridge,
        "/v1/responses/compact",
        "k1",
        json!({"model": "m", "input": conversation()}),
    )
    .await;
    let item = json_of(&bytes)["output"][1].clone();
    let input = json!([item, {"role": "user", "content": "Go on."}]);
    let elsewhere = self::bridge(&script, &sealer());
    for (bridge, credential) in [(&bridge, "k2"), (&elsewhere, "k1")] {
        let (status, headers, bytes) = send(
            bridge,
            "/v1/responses",
            credential,
            json!({"model": "m", "input": input}),
        )
        .await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
        assert_eq!(headers[DROPPED_HEADER], "input[0].encrypted_content");
        let chat = script.chat_requests().pop().unwrap();
        assert_eq!(
            chat["messages"],
            json!([{"role": "user", "content": "Go on."}])
        );
    }
}

#[tokio::test]
async fn compact_refuses_what_it_cannot_do_in_the_clients_error_shape() {
    let script = Script::default();
    let bridge = bridge(&script, &sealer());
    let (status, _, bytes) = send(
        &bridge,
        "/v1/responses/compact",
        "k1",
        json!({"input": conversation()}),
    )
    .await;
    assert_eq!(status, 400);
    let error = &json_of(&bytes)["error"];
    assert_eq!(error["param"], "model");
    assert_eq!(error["type"], "invalid_request_error");
    assert!(script.seen().is_empty(), "the upstream is not called");

    let (status, _, bytes) = send(&bridge, "/v1/responses/compact", "k1", json!([1])).await;
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&bytes));

    // No key: compaction cannot run.
    let keyless = Bridge::new(ResponsesToChatLayer::new().layer(script.upstream()));
    let (status, _, bytes) = send(
        &keyless,
        "/v1/responses/compact",
        "k1",
        json!({"model": "m", "input": conversation()}),
    )
    .await;
    assert_eq!(status, 501);
    let error = &json_of(&bytes)["error"];
    assert_eq!(error["code"], "compaction_unavailable");
    assert!(error["message"].as_str().unwrap().contains("seal key"));
    assert!(script.seen().is_empty());

    // The upstream's errors are the client's, as for any request.
    *script.refuse_summary.lock().unwrap() = Some(StatusCode::TOO_MANY_REQUESTS);
    let (status, _, bytes) = send(
        &bridge,
        "/v1/responses/compact",
        "k1",
        json!({"model": "m", "input": conversation()}),
    )
    .await;
    assert_eq!(status, 429);
    let error = &json_of(&bytes)["error"];
    assert_eq!(error["message"], "slow down");
    assert_eq!(error["code"], "rate_limited");
}

#[tokio::test]
async fn compact_reads_a_stored_conversation() {
    let script = Script::default();
    let bridge = Bridge::new(
        ResponsesToChatLayer::new()
            .sealer(sealer())
            .store(MemoryStore::new())
            .layer(script.upstream()),
    );
    let (status, _, bytes) = send(
        &bridge,
        "/v1/responses",
        "k1",
        json!({"model": "m", "input": "Write a haiku."}),
    )
    .await;
    assert_eq!(status, 200);
    let first = json_of(&bytes);
    let (status, _, bytes) = send(
        &bridge,
        "/v1/responses/compact",
        "k1",
        json!({"model": "m", "previous_response_id": first["id"], "input": "Shorter, please."}),
    )
    .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    let compacted = json_of(&bytes);
    let output = compacted["output"].as_array().unwrap();
    let kept: Vec<&Value> = output.iter().map(|o| &o["content"][0]["text"]).collect();
    assert_eq!(
        kept[..2],
        [&json!("Write a haiku."), &json!("Shorter, please.")]
    );
    let summary_request = script.chat_requests().pop().unwrap();
    let roles: Vec<&str> = summary_request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "user"]);

    let (status, _, bytes) = send(
        &bridge,
        "/v1/responses/compact",
        "k1",
        json!({"model": "m", "previous_response_id": "resp_missing", "input": "x"}),
    )
    .await;
    assert_eq!(status, 404, "{}", String::from_utf8_lossy(&bytes));
}

fn trigger_turn(stream: bool) -> Value {
    let mut input = conversation().as_array().unwrap().clone();
    input.push(json!({"type": "compaction_trigger"}));
    json!({"model": "m", "input": input, "stream": stream})
}

#[tokio::test]
async fn a_trigger_turn_answers_with_one_compaction_item() {
    let script = Script::default();
    let bridge = Bridge::new(
        ResponsesToChatLayer::new()
            .sealer(sealer())
            .store(MemoryStore::new())
            .layer(script.upstream()),
    );
    let (status, headers, bytes) = send(&bridge, "/v1/responses", "k1", trigger_turn(false)).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    assert_eq!(headers[REASONING_INCLUDED_HEADER], "true");
    let response = json_of(&bytes);
    assert_eq!(response["status"], "completed");
    let output = response["output"].as_array().unwrap();
    assert_eq!(output.len(), 1, "only the compaction: {response}");
    assert_eq!(output[0]["type"], "compaction");
    assert_eq!(script.seen().len(), 1, "the summary is the only request");

    // Kept like any response: continuing it reads the summary.
    let (status, _, bytes) = send(
        &bridge,
        "/v1/responses",
        "k1",
        json!({"model": "m", "previous_response_id": response["id"], "input": "Go on."}),
    )
    .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    let chat = script.chat_requests().pop().unwrap();
    let texts: Vec<&str> = chat["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            "Write a haiku about the sea.",
            &format!("{SUMMARY_INTRO}{SUMMARY}"),
            "Go on."
        ]
    );

    // Streamed.
    let (status, headers, bytes) = send(&bridge, "/v1/responses", "k1", trigger_turn(true)).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/event-stream");
    let frames = parse_sse(&bytes);
    responses_grammar::check(&frames).unwrap_or_else(|v| panic!("{v}"));
    let events: Vec<Value> = frames.iter().map(|f| json_of(f.data.as_bytes())).collect();
    let added: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "response.output_item.added")
        .collect();
    assert_eq!(added.len(), 1);
    assert_eq!(added[0]["item"]["type"], "compaction");
    assert_eq!(events.last().unwrap()["type"], "response.completed");
}

#[tokio::test]
async fn a_trigger_that_is_not_last_or_has_no_key_is_refused() {
    let script = Script::default();
    let bridge = bridge(&script, &sealer());
    let mut request = trigger_turn(false);
    request["input"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "after"}));
    let (status, _, bytes) = send(&bridge, "/v1/responses", "k1", request).await;
    assert_eq!(status, 400);
    assert_eq!(json_of(&bytes)["error"]["param"], "input[4]");

    let keyless = Bridge::new(ResponsesToChatLayer::new().layer(script.upstream()));
    let (status, _, bytes) = send(&keyless, "/v1/responses", "k1", trigger_turn(false)).await;
    assert_eq!(status, 501, "{}", String::from_utf8_lossy(&bytes));
    assert!(script.seen().is_empty());
}

fn managed(threshold: Value, stream: bool) -> Value {
    json!({"model": "m", "input": conversation(), "stream": stream,
           "context_management": [{"type": "compaction", "compact_threshold": threshold}]})
}

#[tokio::test]
async fn context_management_compacts_only_past_its_threshold() {
    let script = Script::default();
    let bridge = bridge(&script, &sealer());
    // About 200 bytes of Chat request: far below 1000 tokens.
    let (status, headers, bytes) =
        send(&bridge, "/v1/responses", "k1", managed(json!(1000), false)).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    assert!(headers.get(DROPPED_HEADER).is_none(), "acted on, not lost");
    let response = json_of(&bytes);
    assert_eq!(response["output"][0]["type"], "message");
    assert_eq!(script.seen().len(), 1);

    // A conversation past it: summarized, then answered from the summary.
    let mut request = managed(json!(1000), true);
    let long = "and the tide returns ".repeat(300);
    request["input"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": long}));
    let (status, _, bytes) = send(&bridge, "/v1/responses", "k1", request).await;
    assert_eq!(status, 200);
    let frames = parse_sse(&bytes);
    responses_grammar::check(&frames).unwrap_or_else(|v| panic!("{v}"));
    let chats = script.chat_requests();
    assert_eq!(chats.len(), 3, "the summary, then the reply");
    assert_eq!(
        chats[1]["messages"].as_array().unwrap().last().unwrap()["content"],
        SUMMARY_PROMPT
    );
    let reply_request = &chats[2];
    assert_eq!(reply_request["stream"], true);
    let texts: Vec<&str> = reply_request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!(texts[0], "Write a haiku about the sea.");
    assert_eq!(texts[1], long);
    assert_eq!(texts[2], format!("{SUMMARY_INTRO}{SUMMARY}"));
    let events: Vec<Value> = frames.iter().map(|f| json_of(f.data.as_bytes())).collect();
    let completed = events.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    let output = completed["response"]["output"].as_array().unwrap();
    assert_eq!(output[0]["type"], "compaction");
    assert_eq!(output[1]["type"], "message");
    assert_eq!(completed["response"]["usage"]["total_tokens"], 940 + 110);
}

#[tokio::test]
async fn context_management_counts_with_the_backends_tokenizer() {
    let script = Script::default();
    let profile = BackendProfile {
        tokenize: Some("/tokenize".into()),
        ..BackendProfile::vllm()
    };
    let bridge = Bridge::new(
        ResponsesToChatLayer::new()
            .sealer(sealer())
            .profile(profile)
            .layer(script.upstream()),
    );
    script.tokens.store(1200, Ordering::SeqCst);
    let (status, _, bytes) =
        send(&bridge, "/v1/responses", "k1", managed(json!(5000), false)).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    let seen = script.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].0, "/v1/tokenize");
    assert_eq!(seen[0].1["model"], "m");
    assert_eq!(
        seen[0].1["messages"][0]["content"],
        "Write a haiku about the sea."
    );
    assert_eq!(json_of(&bytes)["output"][0]["type"], "message");

    // The same short conversation, counted past the threshold.
    script.tokens.store(6000, Ordering::SeqCst);
    let (status, _, bytes) =
        send(&bridge, "/v1/responses", "k1", managed(json!(5000), false)).await;
    assert_eq!(status, 200);
    let response = json_of(&bytes);
    assert_eq!(response["output"][0]["type"], "compaction");
    assert_eq!(response["output"][1]["type"], "message");
}

#[tokio::test]
async fn a_threshold_below_the_minimum_is_a_400_naming_it() {
    let script = Script::default();
    let bridge = bridge(&script, &sealer());
    let (status, _, bytes) = send(&bridge, "/v1/responses", "k1", managed(json!(999), false)).await;
    assert_eq!(status, 400);
    let error = &json_of(&bytes)["error"];
    assert_eq!(error["param"], "context_management[0].compact_threshold");
    assert!(script.seen().is_empty());
}
