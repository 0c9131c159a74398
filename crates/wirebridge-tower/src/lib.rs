//! Tower layers that translate between the OpenAI Chat Completions API and
//! the OpenAI Responses API, over any HTTP service: a hyper-util client
//! pointed at a backend, an axum router, a plain hyper `service_fn`.
//!
//! - [`ResponsesToChatLayer`] intercepts `POST …/responses`, sends the
//!   upstream `POST …/chat/completions`, and translates the reply (JSON or
//!   SSE) back into the Responses API.
//! - [`ChatToResponsesLayer`] does the reverse.
//! - Either, given a model catalog ([`TranslateLayer::model_catalog`]),
//!   answers Codex's `GET …/models` with Codex's own catalog of the
//!   upstream's models.
//!
//! Every other request passes through untouched, its body streamed. Errors
//! reach the client in its own API's shape: a 400 naming the field for a
//! request that cannot be translated, 413 over the body limit, the
//! upstream's status with its error re-shaped, and mid-stream failures as
//! the stream's own terminal failure event. The service's error type is the
//! inner service's, so tower's `Timeout`, `Retry` and `ConcurrencyLimit` and
//! tower-http's `Trace` stack around it.
//!
//! Streams are translated frame by frame as the upstream sends them: no
//! task, no channel, no buffering beyond one event. When the client stops
//! reading, the upstream is no longer read; when it goes away, the upstream
//! body is dropped.
//!
//! ```
//! use std::convert::Infallible;
//! use bytes::Bytes;
//! use http::{Request, Response};
//! use http_body_util::{BodyExt, Full};
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//! use wirebridge_tower::{RequestBody, ResponsesToChatLayer};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // A Chat Completions backend (here a function; usually a hyper client).
//! let backend = service_fn(|req: Request<RequestBody<Full<Bytes>>>| async move {
//!     assert_eq!(req.uri().path(), "/v1/chat/completions");
//!     let reply = r#"{"id":"c1","object":"chat.completion","created":1,"model":"m",
//!         "choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}"#;
//!     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(reply))))
//! });
//! let service = ServiceBuilder::new().layer(ResponsesToChatLayer::new()).service(backend);
//!
//! let request = Request::post("/v1/responses")
//!     .body(Full::new(Bytes::from(r#"{"model":"m","input":"Hi"}"#)))
//!     .unwrap();
//! let response = service.oneshot(request).await.unwrap();
//! let body = response.into_body().collect().await.unwrap().to_bytes();
//! let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
//! assert_eq!(body["object"], "response");
//! assert_eq!(body["output"][0]["content"][0]["text"], "Hello!");
//! # }
//! ```

#![deny(unsafe_code)]

mod body;
mod catalog;
mod direction;
mod error_response;
mod exchange;
mod future;
mod headers;
mod layer;
mod loss_warnings;
pub mod observer;
mod replies;
mod request_body;
mod service;
mod settings;
mod shared;
mod shutdown;
mod stateful;
pub mod trace_context;
mod tracker;
#[cfg(feature = "websocket")]
mod websocket;

pub use body::ResponseBody;
pub use direction::{ChatOverResponses, ResponsesOverChat, ResponsesOverResponses, Translation};
pub use exchange::input_tokens::INPUT_TOKENS_HEADER;
pub use future::ResponseFuture;
pub use headers::{DROPPED_HEADER, REASONING_INCLUDED_HEADER};
pub use layer::TranslateLayer;
pub use observer::{Exchange, NoopObserver, Observer};
pub use request_body::{BoxError, RequestBody};
pub use service::Translate;
#[cfg(feature = "websocket")]
pub use settings::WebSocketSettings;
pub use settings::{DEFAULT_BODY_LIMIT, DEFAULT_MAX_EVENT_SIZE, DEFAULT_MAX_REPLY_SIZE};
pub use shutdown::{Shutdown, ShutdownTrigger};
pub use stateful::MissingHistory;
pub use wirebridge_convert::StreamTranslate;
pub use wirebridge_store as store;

/// Responses clients over a Chat Completions service.
pub type ResponsesToChat<S> = Translate<S, ResponsesOverChat>;
/// The layer of [`ResponsesToChat`].
pub type ResponsesToChatLayer = TranslateLayer<ResponsesOverChat>;
/// Chat Completions clients over a Responses service.
pub type ChatToResponses<S> = Translate<S, ChatOverResponses>;
/// The layer of [`ChatToResponses`].
pub type ChatToResponsesLayer = TranslateLayer<ChatOverResponses>;
/// Responses clients over a Responses service that keeps no state: the
/// bridge keeps the responses and continues conversations.
pub type StatefulResponses<S> = Translate<S, ResponsesOverResponses>;
/// The layer of [`StatefulResponses`].
pub type StatefulResponsesLayer = TranslateLayer<ResponsesOverResponses>;
