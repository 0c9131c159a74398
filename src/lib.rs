//! wirebridge translates between three LLM APIs, the OpenAI Chat
//! Completions API, the OpenAI Responses API and the Anthropic Messages
//! API: requests, JSON bodies and SSE streams, as tower layers over any HTTP
//! service.
//!
//! Each direction is a layer of [`tower`]:
//!
//! | clients speak | backend speaks | layer |
//! |---|---|---|
//! | Responses | Chat Completions | [`tower::ResponsesToChatLayer`] |
//! | Chat Completions | Responses | [`tower::ChatToResponsesLayer`] |
//! | Responses | Responses, keeping no state (vLLM, llama.cpp, Ollama, ...) | [`tower::StatefulResponsesLayer`] |
//! | Messages | Responses | [`tower::MessagesToResponsesLayer`] in front of [`tower::StatefulResponsesLayer`] |
//! | Messages | Chat Completions | [`tower::MessagesToResponsesLayer`] in front of [`tower::ResponsesToChatLayer`] |
//!
//! A Responses client's layer given a [`store`] (`.store(...)`) keeps the
//! state the backend does not: `previous_response_id`, `GET` and `DELETE`
//! of a stored response, its `input_items`.
//!
//! This facade re-exports the library crates:
//!
//! - [`wire`]: serde types of the three APIs (lenient parse, strict emit);
//! - [`sse`]: an incremental server-sent-events decoder and encoder;
//! - [`convert`]: the sans-IO translators, one module per direction;
//! - [`tower`]: the layers above;
//! - [`store`]: where the stateful layers keep responses, the
//!   [`ResponseStore`](store::ResponseStore) trait, with a
//!   [`MemoryStore`](store::MemoryStore) (and a Redis store under the
//!   `redis` feature of `wirebridge-store`).
//!
//! The `websocket` feature turns on Responses WebSocket mode (the layers'
//! `.websocket(...)`: `GET …/responses` upgraded on a hyper connection
//! served with upgrades); `examples/websocket_mode.rs` runs one.
//!
//! A Responses client continuing a conversation on a backend that keeps
//! none, through a [`tower::StatefulResponsesLayer`] with a
//! [`store::MemoryStore`]:
//!
//! ```
//! use std::convert::Infallible;
//! use bytes::Bytes;
//! use http::{Request, Response};
//! use http_body_util::{BodyExt, Full};
//! use tower::{service_fn, Layer, Service, ServiceExt};
//! use wirebridge::store::MemoryStore;
//! use wirebridge::tower::{RequestBody, StatefulResponsesLayer};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // A Responses backend that keeps nothing: it answers with what it was sent.
//! let backend = service_fn(|req: Request<RequestBody<Full<Bytes>>>| async move {
//!     let body = req.into_body().collect().await.unwrap().to_bytes();
//!     let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
//!     let texts: Vec<String> = sent["input"]
//!         .as_array()
//!         .into_iter()
//!         .flatten()
//!         .map(|item| match &item["content"] {
//!             serde_json::Value::String(text) => text.clone(),
//!             parts => parts[0]["text"].as_str().unwrap_or_default().to_owned(),
//!         })
//!         .collect();
//!     let reply = serde_json::json!({"id": "up", "object": "response",
//!         "status": "completed", "model": "m", "output": [{"type": "message",
//!         "id": "msg_up", "role": "assistant", "status": "completed",
//!         "content": [{"type": "output_text", "text": texts.join(" | "),
//!         "annotations": []}]}]});
//!     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(reply.to_string()))))
//! });
//! let mut service = StatefulResponsesLayer::new()
//!     .store(MemoryStore::new())
//!     .layer(backend);
//!
//! // Stored responses belong to the credential that saved them.
//! let post = |body: String| {
//!     Request::post("/v1/responses")
//!         .header("authorization", "Bearer sk-1")
//!         .body(Full::new(Bytes::from(body)))
//!         .unwrap()
//! };
//! let reply = |response: Response<_>| async move {
//!     let body = BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
//!     serde_json::from_slice::<serde_json::Value>(&body).unwrap()
//! };
//!
//! let first = service.ready().await.unwrap()
//!     .call(post(r#"{"model":"m","input":"Hello","store":true}"#.into()))
//!     .await
//!     .unwrap();
//! let first = reply(first).await;
//! assert_eq!(first["output"][0]["content"][0]["text"], "Hello");
//!
//! let next = format!(r#"{{"model":"m","input":"Again","previous_response_id":{}}}"#, first["id"]);
//! let second = reply(service.oneshot(post(next)).await.unwrap()).await;
//! // The backend was sent the whole conversation, from the store.
//! assert_eq!(second["output"][0]["content"][0]["text"], "Hello | Hello | Again");
//! # }
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// What a published crate calls `pub` is its API: anything else says how
// far it reaches (`pub(crate)`, `pub(super)`).
#![warn(unreachable_pub)]

pub use wirebridge_convert as convert;
pub use wirebridge_sse as sse;
pub use wirebridge_store as store;
pub use wirebridge_tower as tower;
pub use wirebridge_wire as wire;

/// The README, whose Rust examples `cargo test --doc` compiles and runs.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
