//! Responses WebSocket mode in front of a Chat Completions backend: one
//! connection, two turns, the second continuing the first with
//! `previous_response_id` and `store: false` (the connection keeps what
//! it needs). Runs against the built-in demo upstream, in process, and
//! exits.
//!
//! ```sh
//! cargo run --example websocket_mode --features websocket
//! ```

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use http::Request;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tower::Layer;
use wirebridge::tower::{RequestBody, ResponsesToChatLayer, WebSocketSettings};
use wirebridge_demo::{Api, DemoConfig, DemoServer};

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

#[tokio::main]
async fn main() {
    // The backend: the demo upstream's Chat Completions API.
    let demo = DemoServer::start(DemoConfig::new().api(Api::Chat)).await;
    let base = demo.url();
    let client = Client::builder(TokioExecutor::new()).build_http::<RequestBody<Incoming>>();
    let upstream = tower::service_fn(move |mut request: Request<RequestBody<Incoming>>| {
        let uri = format!("{base}{}", request.uri().path())
            .parse()
            .expect("a valid URL");
        *request.uri_mut() = uri;
        client.request(request)
    });

    // The bridge: `GET /v1/responses` with an upgrade becomes a WebSocket
    // session. Its connections are served by hyper with upgrades.
    let service = ResponsesToChatLayer::new()
        .websocket(WebSocketSettings::new().idle_timeout(Duration::from_secs(60)))
        .layer(upstream);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("a bound port");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .with_upgrades()
                    .await;
            });
        }
    });

    // A client, as Codex connects in WebSocket mode.
    let mut request = format!("ws://{address}/v1/responses")
        .into_client_request()
        .expect("a WebSocket URL");
    request.headers_mut().insert(
        "authorization",
        "Bearer sk-demo".parse().expect("a header value"),
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("the handshake succeeds");

    let mut previous: Option<String> = None;
    for prompt in ["Say hello.", "Now say it again, louder."] {
        let mut create = json!({"type": "response.create", "model": "demo",
            "input": prompt, "store": false});
        if let Some(id) = &previous {
            create["previous_response_id"] = json!(id);
        }
        println!("> {prompt}");
        socket
            .send(Message::Text(create.to_string().into()))
            .await
            .expect("the connection is open");
        let completed = turn(&mut socket).await;
        println!(
            "\n  {} ({} tokens in)",
            completed["status"], completed["usage"]["input_tokens"]
        );
        previous = completed["id"].as_str().map(str::to_owned);
    }
    socket.close(None).await.expect("a clean close");
}

/// Prints a turn's text as it streams and returns its response, from the
/// terminal event. An `error` event ends the example with its message.
async fn turn(socket: &mut Socket) -> Value {
    loop {
        let message = socket
            .next()
            .await
            .expect("the connection stays open")
            .expect("a well-formed message");
        let Message::Text(text) = message else {
            continue;
        };
        let event: Value = serde_json::from_str(text.as_str()).expect("events are JSON");
        match event["type"].as_str().unwrap_or_default() {
            "response.output_text.delta" => {
                print!("{}", event["delta"].as_str().unwrap_or_default());
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                return event["response"].clone();
            }
            "error" => panic!("the turn was refused: {}", event["error"]),
            _ => {}
        }
    }
}
