//! A WebSocket-mode test bench: a scripted Chat upstream behind the layer,
//! served by hyper on loopback, and a tungstenite client.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tower::Layer;
use wirebridge_testkit::responses_grammar;
use wirebridge_tower::{RequestBody, ResponsesToChatLayer};

use super::{End, ScriptedBody};

pub type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What the upstream saw and did.
#[derive(Default)]
pub struct Upstream {
    /// Requests it answered.
    pub calls: AtomicUsize,
    /// Set when a hanging reply's body is dropped.
    pub dropped: Arc<AtomicBool>,
}

/// A Chat upstream answering with the roles and texts of the messages it
/// got, streamed; a last message `fail` gets a 500, and `hang` one chunk
/// and then nothing.
pub fn chat_upstream(
    upstream: Arc<Upstream>,
) -> impl tower::Service<
    Request<RequestBody<Incoming>>,
    Response = Response<ScriptedBody>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    tower::service_fn(move |request: Request<RequestBody<Incoming>>| {
        let upstream = Arc::clone(&upstream);
        async move {
            upstream.calls.fetch_add(1, Ordering::SeqCst);
            let bytes = request.into_body().collect().await.unwrap().to_bytes();
            let chat: Value = serde_json::from_slice(&bytes).unwrap();
            let messages = chat["messages"].as_array().unwrap();
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
            let last = messages.last().unwrap()["content"].as_str().unwrap_or("");
            let chunk = |delta: Value, finish: Value| {
                let c = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
                Bytes::from(format!("data: {c}\n\n"))
            };
            let mut response = match last {
                "fail" => {
                    let error = r#"{"error":{"message":"the model is overloaded","type":"server_error","code":"overloaded"}}"#;
                    let mut r =
                        Response::new(ScriptedBody::new(vec![Bytes::from(error)], End::Eof).0);
                    *r.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
                    r.headers_mut()
                        .insert("content-type", "application/json".parse().unwrap());
                    return Ok(r);
                }
                "hang" => {
                    let first = chunk(
                        json!({"role": "assistant", "content": "thinking"}),
                        Value::Null,
                    );
                    let (body, dropped) = ScriptedBody::new(vec![first], End::Pending);
                    let was = Arc::clone(&upstream.dropped);
                    // Relay the body's drop flag to the test's.
                    tokio::spawn(async move {
                        while !dropped.load(Ordering::SeqCst) {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                        was.store(true, Ordering::SeqCst);
                    });
                    Response::new(body)
                }
                _ => {
                    let frames = vec![
                        chunk(json!({"role": "assistant", "content": text}), Value::Null),
                        chunk(json!({}), json!("stop")),
                        Bytes::from("data: [DONE]\n\n"),
                    ];
                    Response::new(ScriptedBody::new(frames, End::Eof).0)
                }
            };
            response
                .headers_mut()
                .insert("content-type", "text/event-stream".parse().unwrap());
            Ok::<_, Infallible>(response)
        }
    })
}

/// Serves the layer over `upstream` on a loopback port.
pub async fn serve(layer: ResponsesToChatLayer, upstream: Arc<Upstream>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let service = layer.layer(chat_upstream(upstream));
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            // Each event leaves at once, as the CLI's listener sends it.
            tcp.set_nodelay(true).unwrap();
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .with_upgrades()
                    .await;
            });
        }
    });
    format!("ws://{address}/v1/responses")
}

pub async fn connect(url: &str, key: Option<&str>) -> Client {
    let mut request = url.into_client_request().unwrap();
    if let Some(key) = key {
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {key}").parse().unwrap());
    }
    tokio_tungstenite::connect_async_with_config(request, None, true)
        .await
        .unwrap()
        .0
}

pub async fn send(client: &mut Client, event: Value) {
    client
        .send(Message::Text(event.to_string().into()))
        .await
        .unwrap();
}

pub async fn next(client: &mut Client) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(5), client.next())
            .await
            .expect("a message within 5 s")
            .expect("the connection is open")
            .unwrap();
        match message {
            Message::Text(text) => return serde_json::from_str(text.as_str()).unwrap(),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The events of one turn, up to its terminal event or an error event.
pub async fn turn(client: &mut Client) -> Vec<Value> {
    let mut events = Vec::new();
    loop {
        let event = next(client).await;
        let kind = event["type"].as_str().unwrap().to_owned();
        events.push(event);
        if matches!(
            kind.as_str(),
            "response.completed" | "response.incomplete" | "response.failed" | "error"
        ) {
            return events;
        }
    }
}

pub fn create(input: &str, extra: Value) -> Value {
    let mut event = json!({"type": "response.create", "model": "m", "input": input});
    event
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    event
}

pub fn completed(events: &[Value]) -> &Value {
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.completed", "{events:#?}");
    &last["response"]
}

pub fn output_text(response: &Value) -> String {
    response["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The turn's events as the grammar checker reads an SSE stream.
pub fn check_grammar(events: &[Value]) {
    let frames: Vec<wirebridge_testkit::SseFrame> = events
        .iter()
        .map(|e| wirebridge_testkit::SseFrame {
            event: e["type"].as_str().map(str::to_owned),
            data: e.to_string(),
        })
        .collect();
    responses_grammar::check(&frames).unwrap();
}
