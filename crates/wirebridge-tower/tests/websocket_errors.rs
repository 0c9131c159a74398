//! Every refusal of WebSocket mode as the client receives it, byte for
//! byte: the handshake's error replies (status, headers, body) and the
//! error events of messages that cannot be run (status, code, param,
//! message, lane).
#![cfg(feature = "websocket")]

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{header, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;
use tower::{Layer, ServiceExt};
use wirebridge_tower::{Budget, Observer, RequestBody, ResponsesToChatLayer, WebSocketSettings};

mod common;
use common::websocket::{connect, create, send, serve, Client, Upstream};

/// The reply to an upgrade request through the layer, served without
/// hyper (so the connection cannot be taken over), with `edit` applied to
/// a valid handshake.
async fn handshake(
    edit: impl FnOnce(&mut http::HeaderMap),
) -> (StatusCode, http::HeaderMap, String) {
    let backend = tower::service_fn(|_: Request<RequestBody<Full<Bytes>>>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
    });
    let service = ResponsesToChatLayer::new().layer(backend);
    let mut request = Request::get("/v1/responses")
        .header("upgrade", "websocket")
        .header("connection", "keep-alive, Upgrade")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .body(Full::new(Bytes::new()))
        .unwrap();
    edit(request.headers_mut());
    let response = service.oneshot(request).await.unwrap();
    let (head, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (
        head.status,
        head.headers,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

/// A JSON string literal.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// An error object, its fields in the order they are written.
fn error_object(message: &str, param: Option<&str>, code: &str) -> String {
    format!(
        r#"{{"message":{},"type":"invalid_request_error","param":{},"code":{}}}"#,
        quoted(message),
        param.map_or("null".to_owned(), quoted),
        quoted(code)
    )
}

fn error_body(message: &str, code: &str) -> String {
    format!(r#"{{"error":{}}}"#, error_object(message, None, code))
}

#[tokio::test]
async fn handshake_refusals_are_pinned() {
    let (status, headers, body) = handshake(|h| {
        h.insert(header::CONNECTION, "keep-alive".parse().unwrap());
    })
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    assert_eq!(headers[header::CONTENT_LENGTH], body.len().to_string());
    assert_eq!(
        body,
        error_body(
            "a WebSocket upgrade needs `Connection: Upgrade`",
            "invalid_websocket_handshake"
        )
    );

    for version in [Some("8"), None] {
        let (status, headers, body) = handshake(|h| match version {
            Some(v) => {
                h.insert(header::SEC_WEBSOCKET_VERSION, v.parse().unwrap());
            }
            None => {
                h.remove(header::SEC_WEBSOCKET_VERSION);
            }
        })
        .await;
        assert_eq!(status, StatusCode::UPGRADE_REQUIRED);
        assert_eq!(headers[header::SEC_WEBSOCKET_VERSION], "13");
        assert_eq!(
            body,
            error_body(
                "only WebSocket version 13 is supported",
                "unsupported_websocket_version"
            )
        );
    }

    let (status, _, body) = handshake(|h| {
        h.remove(header::SEC_WEBSOCKET_KEY);
    })
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        error_body(
            "a WebSocket upgrade needs a `Sec-WebSocket-Key`",
            "invalid_websocket_handshake"
        )
    );

    let (status, headers, body) = handshake(|_| {}).await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED);
    assert!(headers.get(header::SEC_WEBSOCKET_ACCEPT).is_none());
    assert_eq!(
        body,
        error_body(
            "this server cannot upgrade the connection to a WebSocket; use HTTP/1.1, or \
             POST /v1/responses with `stream: true`",
            "websocket_unavailable"
        )
    );
}

/// The next text message, as sent.
async fn next_text(client: &mut Client) -> String {
    loop {
        match client.next().await.expect("a message").expect("no error") {
            Message::Text(text) => return text.to_string(),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("{other:?}"),
        }
    }
}

/// An error event, its fields in the order they are written.
fn event(
    status: u16,
    message: &str,
    param: Option<&str>,
    code: &str,
    lane: Option<&str>,
) -> String {
    let lane = lane.map_or(String::new(), |lane| {
        format!(r#","stream_id":{}"#, quoted(lane))
    });
    format!(
        r#"{{"type":"error","status":{status},"error":{}{lane}}}"#,
        error_object(message, param, code)
    )
}

#[tokio::test]
async fn error_events_are_pinned() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), upstream).await;
    let mut client = connect(&url, Some("sk-a")).await;

    client
        .send(Message::Binary(Bytes::from_static(b"{}")))
        .await
        .unwrap();
    assert_eq!(
        next_text(&mut client).await,
        event(
            400,
            "binary messages are not read; send each event as JSON text",
            None,
            "unsupported_message",
            None
        )
    );

    let not_json = serde_json::from_str::<serde_json::Value>("{not json")
        .unwrap_err()
        .to_string();
    let cases: Vec<(String, String)> = vec![
        (
            "{not json".into(),
            event(
                400,
                &format!("the message is not a JSON object: {not_json}"),
                None,
                "invalid_json",
                None,
            ),
        ),
        (
            "[1]".into(),
            event(
                400,
                "the message is not a JSON object: invalid type: sequence, expected a JSON object at line 1 column 0",
                None,
                "invalid_json",
                None,
            ),
        ),
        (
            r#"{"type":"session.update"}"#.into(),
            event(
                400,
                "unknown event type 'session.update'; this endpoint takes response.create",
                Some("type"),
                "unknown_event",
                None,
            ),
        ),
        (
            r#"{"model":"m"}"#.into(),
            event(
                400,
                "the message has no `type`; this endpoint takes response.create",
                Some("type"),
                "missing_required_parameter",
                None,
            ),
        ),
        (
            r#"{"type":"response.steer","input":"x"}"#.into(),
            event(
                400,
                "response.steer needs `previous_response_id`, the response to steer",
                Some("previous_response_id"),
                "missing_required_parameter",
                None,
            ),
        ),
        (
            r#"{"type":"response.steer","previous_response_id":7,"input":"x"}"#.into(),
            event(
                400,
                "`previous_response_id` must be a string",
                Some("previous_response_id"),
                "invalid_type",
                None,
            ),
        ),
        (
            r#"{"type":"response.steer","previous_response_id":"r"}"#.into(),
            event(
                400,
                "response.steer needs `input`",
                Some("input"),
                "missing_required_parameter",
                None,
            ),
        ),
        (
            r#"{"type":"response.steer","previous_response_id":"r","input":3}"#.into(),
            event(
                400,
                "`input` must be a string or a list of input items",
                Some("input"),
                "invalid_type",
                None,
            ),
        ),
        (
            r#"{"type":"response.create","stream_id":7}"#.into(),
            event(
                400,
                "`stream_id` must be a string",
                Some("stream_id"),
                "invalid_type",
                None,
            ),
        ),
        (
            r#"{"type":"response.create","stream_id":"s","stream":false}"#.into(),
            event(
                400,
                "`stream: false` cannot be honoured: a WebSocket turn always streams its events",
                Some("stream"),
                "unsupported_value",
                Some("s"),
            ),
        ),
        (
            r#"{"type":"response.create","stream_id":"s","background":true}"#.into(),
            event(
                400,
                "`background: true` cannot be honoured: background responses are not run over a WebSocket",
                Some("background"),
                "unsupported_value",
                Some("s"),
            ),
        ),
        (
            r#"{"type":"response.create","stream_id":"s","generate":1}"#.into(),
            event(
                400,
                "`generate` must be a boolean",
                Some("generate"),
                "invalid_type",
                Some("s"),
            ),
        ),
    ];
    for (message, expected) in cases {
        client
            .send(Message::Text(message.clone().into()))
            .await
            .unwrap();
        assert_eq!(next_text(&mut client).await, expected, "{message}");
    }
}

#[tokio::test]
async fn a_message_beyond_the_queue_is_pinned() {
    let upstream = Arc::new(Upstream::default());
    let layer = ResponsesToChatLayer::new().websocket(
        WebSocketSettings::new().max_queued(1, WebSocketSettings::DEFAULT_MAX_QUEUED_BYTES),
    );
    let url = serve(layer, upstream).await;
    let mut client = connect(&url, Some("sk-a")).await;
    send(&mut client, create("hang", json!({}))).await;
    send(&mut client, create("waits", json!({}))).await;
    send(
        &mut client,
        create("one too many", json!({"stream_id": "z"})),
    )
    .await;
    let expected = event(
        429,
        "2 responses are already waiting on this connection; wait for one to finish",
        None,
        "too_many_queued_responses",
        Some("z"),
    );
    loop {
        let text = next_text(&mut client).await;
        if text.contains(r#""type":"error""#) {
            assert_eq!(text, expected);
            break;
        }
    }
}

/// The queue is bounded in bytes too: requests that together would pass
/// it are refused (the connection stays open), however few they are.
#[tokio::test]
async fn requests_beyond_the_queues_bytes_are_refused() {
    let upstream = Arc::new(Upstream::default());
    let budgets: Arc<std::sync::Mutex<Vec<Budget>>> = Arc::default();
    let observed = Arc::clone(&budgets);
    let layer = ResponsesToChatLayer::new()
        .observer(Budgets(observed))
        .websocket(WebSocketSettings::new().max_queued(8, 4096));
    let url = serve(layer, upstream).await;
    let mut client = connect(&url, Some("sk-a")).await;
    send(&mut client, create("hang", json!({}))).await;
    // Waits: well within the bytes.
    send(&mut client, create(&"a".repeat(3000), json!({}))).await;
    // Would make about 6,000 bytes wait.
    send(
        &mut client,
        create(&"b".repeat(3000), json!({"stream_id": "big"})),
    )
    .await;
    let error = loop {
        let text = next_text(&mut client).await;
        if text.contains(r#""type":"error""#) {
            break serde_json::from_str::<serde_json::Value>(&text).unwrap();
        }
    };
    assert_eq!(error["status"], 429, "{error}");
    assert_eq!(
        error["error"]["code"], "too_many_queued_responses",
        "{error}"
    );
    assert_eq!(error["stream_id"], "big", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("4096-byte queue"), "{message}");
    // The connection is still read: the next message gets its own answer.
    send(&mut client, json!({"type": "response.cancel"})).await;
    let next = loop {
        let text = next_text(&mut client).await;
        if text.contains(r#""type":"error""#) {
            break serde_json::from_str::<serde_json::Value>(&text).unwrap();
        }
    };
    assert_ne!(next["error"]["code"], "too_many_queued_responses", "{next}");
    assert_eq!(*budgets.lock().unwrap(), [Budget::WebSocketQueue]);
}

/// Records the budgets an observer is told were reached.
struct Budgets(Arc<std::sync::Mutex<Vec<Budget>>>);

impl Observer for Budgets {
    fn on_exchange(&self, _: &wirebridge_tower::Exchange) {}
    fn on_budget(&self, budget: Budget) {
        self.0.lock().unwrap().push(budget);
    }
}
