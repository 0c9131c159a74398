//! An existing hyper server that speaks Chat Completions gains
//! `POST /v1/responses` by adding one layer.
//!
//! ```sh
//! cargo run --example wrap_hyper_service
//! curl -s localhost:3000/v1/responses -d '{"model":"echo","input":"Hello"}'
//! ```

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tower::ServiceBuilder;
use wirebridge::tower::{RequestBody, ResponsesToChatLayer};

/// The app as it was: a (very small) Chat Completions endpoint that echoes
/// the last message.
async fn chat_app(
    request: Request<RequestBody<Incoming>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = request
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    let reply = serde_json::json!({
        "id": "chatcmpl-echo", "object": "chat.completion", "created": 0, "model": request["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": format!("echo: {}", last["content"])}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    });
    Ok(Response::new(Full::new(Bytes::from(reply.to_string()))))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    // The one new line: Responses requests are translated, the rest is untouched.
    let service = ServiceBuilder::new()
        .layer(ResponsesToChatLayer::new())
        .service(tower::service_fn(chat_app));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
