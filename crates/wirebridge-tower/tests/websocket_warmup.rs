//! `generate: false` warm-ups are answered by the bridge itself: whatever
//! the backend's dialect, no request reaches it, the client reads the same
//! events, and the warm-up's input is continued by the next turn.
#![cfg(feature = "websocket")]

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tower::Layer;
use wirebridge_convert::seal::{SealKey, Sealer};
use wirebridge_tower::{
    Exchange, RequestBody, ResponsesToChatLayer, ResponsesToMessagesLayer, StatefulResponsesLayer,
};

mod common;
use common::websocket::{check_grammar, completed, connect, create, send, turn};

/// Every request the backend got, by body; each is refused with a 500, so
/// a turn that reached it fails where the client sees it. And what the
/// layer reported of each exchange: its status, and whether an upstream
/// answered it (a time to first byte).
#[derive(Default)]
struct Backend {
    bodies: Mutex<Vec<String>>,
    reported: Mutex<Vec<(u16, bool)>>,
}

impl Backend {
    /// The observer that writes down what the layer reports.
    fn observer(self: &Arc<Self>) -> impl Fn(&Exchange) + Send + Sync + 'static {
        let backend = Arc::clone(self);
        move |exchange: &Exchange| {
            let answered = exchange.time_to_first_byte.is_some();
            let report = (exchange.status, answered);
            backend.reported.lock().unwrap().push(report);
        }
    }

    fn service(
        self: &Arc<Self>,
    ) -> impl tower::Service<
        Request<RequestBody<Incoming>>,
        Response = Response<Full<Bytes>>,
        Error = Infallible,
        Future = impl Send,
    > + Clone
           + Send
           + 'static {
        let backend = Arc::clone(self);
        tower::service_fn(move |request: Request<RequestBody<Incoming>>| {
            let backend = Arc::clone(&backend);
            async move {
                let body = request.into_body().collect().await.unwrap().to_bytes();
                let body = String::from_utf8_lossy(&body).into_owned();
                backend.bodies.lock().unwrap().push(body);
                let error = r#"{"error":{"message":"no","type":"server_error","code":"no"}}"#;
                let mut response = Response::new(Full::new(Bytes::from(error)));
                *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                response
                    .headers_mut()
                    .insert("content-type", "application/json".parse().unwrap());
                Ok::<_, Infallible>(response)
            }
        })
    }

    fn bodies(&self) -> Vec<String> {
        self.bodies.lock().unwrap().clone()
    }
}

/// Serves `$layer` over a [`Backend`] on a loopback port.
macro_rules! serve {
    ($layer:expr, $backend:expr) => {{
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let service = $layer
            .observer($backend.observer())
            .layer($backend.service());
        tokio::spawn(async move {
            loop {
                let (tcp, _) = listener.accept().await.unwrap();
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
    }};
}

/// The warm-up's events, each with what differs between two responses
/// (ids and times) masked; and the id the next turn continues from.
async fn warm_up(url: &str, backend: &Backend) -> (Vec<Value>, String) {
    let mut client = connect(url, Some("sk-a")).await;
    let fields = json!({"generate": false, "store": false, "instructions": "be brief",
        "temperature": 0.5, "metadata": {"k": "v"}});
    send(&mut client, create("context", fields)).await;
    let events = turn(&mut client).await;
    check_grammar(&events);
    assert!(backend.bodies().is_empty(), "{:?}", backend.bodies());
    // Reported as an exchange no upstream answered.
    assert_eq!(*backend.reported.lock().unwrap(), [(200, false)]);
    let id = completed(&events)["id"].as_str().unwrap().to_owned();

    // The next turn reaches the backend with the warm-up's input first.
    send(
        &mut client,
        create("go", json!({"previous_response_id": id, "store": false})),
    )
    .await;
    let failed = turn(&mut client).await;
    assert_eq!(failed.last().unwrap()["type"], "error", "{failed:#?}");
    let bodies = backend.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    let (context, go) = (bodies[0].find("context"), bodies[0].find("go"));
    assert!(context.is_some() && context < go, "{}", bodies[0]);

    let masked = events.into_iter().map(|e| mask(e, &id)).collect();
    (masked, id)
}

fn mask(mut event: Value, id: &str) -> Value {
    let response = &mut event["response"];
    assert_eq!(response["id"], id);
    response["id"] = json!("ID");
    for time in ["created_at", "completed_at"] {
        if response[time].is_u64() {
            response[time] = json!("TIME");
        }
    }
    event
}

/// Warms up a conversation long enough to compact, naming a compaction
/// threshold it is past: the warm-up asks nothing of the model, so it does
/// not compact (a summary is the model's to write) and is answered as any
/// warm-up, no request sent; one with a `compaction_trigger` is refused.
async fn warm_up_past_a_compaction_threshold(url: &str, backend: &Backend) {
    let mut client = connect(url, Some("sk-a")).await;
    let long = "and the tide returns ".repeat(300);
    let fields = json!({"generate": false, "store": false,
        "context_management": [{"type": "compaction", "compact_threshold": 1000}]});
    send(&mut client, create(&long, fields.clone())).await;
    let first = turn(&mut client).await;
    check_grammar(&first);
    let mut fields = fields;
    fields["previous_response_id"] = completed(&first)["id"].clone();
    send(&mut client, create("more", fields)).await;
    let second = turn(&mut client).await;
    check_grammar(&second);
    let response = completed(&second);
    assert_eq!(response["output"], json!([]), "{second:#?}");
    assert_eq!(response["usage"]["total_tokens"], 0);

    // A trigger asks for the summary now: refused, naming it.
    let trigger = json!({"generate": false, "previous_response_id": response["id"],
        "input": [{"role": "user", "content": "hi"}, {"type": "compaction_trigger"}]});
    send(&mut client, create("", trigger)).await;
    let refused = turn(&mut client).await;
    let error = refused.last().unwrap();
    assert_eq!(
        (&error["type"], &error["status"], &error["error"]["param"]),
        (&json!("error"), &json!(400), &json!("input[1]")),
        "{refused:#?}"
    );
    assert!(backend.bodies().is_empty(), "{:?}", backend.bodies());
}

fn sealer() -> Sealer {
    Sealer::new(SealKey::generate(), Vec::new())
}

#[tokio::test]
async fn a_warm_up_past_a_compaction_threshold_asks_no_backend_for_a_summary() {
    let chat = Arc::new(Backend::default());
    let url = serve!(ResponsesToChatLayer::new().sealer(sealer()), chat);
    warm_up_past_a_compaction_threshold(&url, &chat).await;

    let responses = Arc::new(Backend::default());
    let url = serve!(StatefulResponsesLayer::new().sealer(sealer()), responses);
    warm_up_past_a_compaction_threshold(&url, &responses).await;

    let messages = Arc::new(Backend::default());
    let url = serve!(ResponsesToMessagesLayer::new().sealer(sealer()), messages);
    warm_up_past_a_compaction_threshold(&url, &messages).await;
}

#[tokio::test]
async fn a_warm_up_is_the_same_over_every_backend_and_reaches_none() {
    let chat = Arc::new(Backend::default());
    let url = serve!(ResponsesToChatLayer::new(), chat);
    let (over_chat, _) = warm_up(&url, &chat).await;

    let responses = Arc::new(Backend::default());
    let url = serve!(StatefulResponsesLayer::new(), responses);
    let (over_responses, _) = warm_up(&url, &responses).await;

    let messages = Arc::new(Backend::default());
    let url = serve!(ResponsesToMessagesLayer::new(), messages);
    let (over_messages, _) = warm_up(&url, &messages).await;
    assert_eq!(over_chat, over_responses);
    assert_eq!(over_chat, over_messages);
}
