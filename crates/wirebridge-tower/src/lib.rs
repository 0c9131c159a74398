//! Tower layers that translate between the OpenAI Chat Completions API and
//! the OpenAI Responses API, over any HTTP service: a hyper-util client
//! pointed at a backend, an axum router, a plain hyper `service_fn`.
//!
//! - [`ResponsesToChatLayer`] intercepts `POST …/responses`, sends the
//!   upstream `POST …/chat/completions`, and translates the reply (JSON or
//!   SSE) back into the Responses API.
//! - [`ChatToResponsesLayer`] does the reverse.
//! - [`StatefulResponsesLayer`] keeps the state a Responses backend keeps
//!   none of (`previous_response_id`, retrieval, WebSocket mode).
//! - [`MessagesToResponsesLayer`] serves Anthropic Messages clients (Claude
//!   Code, the Anthropic SDKs) over a Responses service, usually one of the
//!   layers above.
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

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// What a published crate calls `pub` is its API: anything else says how
// far it reaches (`pub(crate)`, `pub(super)`).
#![warn(unreachable_pub)]

mod affinity;
mod background;
mod body;
#[cfg(feature = "websocket")]
mod byte_budget;
mod catalog;
mod catalog_etag;
mod direction;
mod error_response;
mod exchange;
mod future;
mod headers;
mod layer;
mod loss_warnings;
mod messages_models;
pub mod observer;
#[cfg(feature = "websocket")]
mod open_sockets;
mod paths;
mod refusal;
mod replicas;
mod replies;
mod request_body;
mod route;
mod service;
mod settings;
mod shared;
mod shutdown;
mod stateful;
pub mod trace_context;
mod tracker;
mod upstream_list;
#[cfg(feature = "websocket")]
mod websocket;

pub use affinity::{Affinity, AffinitySource};
pub use background::BackgroundRuns;
pub use body::ResponseBody;
pub use catalog_etag::MODELS_ETAG_HEADER;
pub use direction::{
    ChatOverResponses, MessagesOverResponses, ResponsesOverChat, ResponsesOverMessages,
    ResponsesOverResponses, Translation,
};
pub use exchange::input_tokens::INPUT_TOKENS_HEADER;
pub use future::ResponseFuture;
pub use headers::{
    DROPPED_HEADER, REASONING_INCLUDED_HEADER, SERVER_MODEL_HEADER, TURN_STATE_HEADER,
    WEBSOCKET_MAX_MESSAGE_BYTES_HEADER,
};
pub use layer::TranslateLayer;
pub use observer::{Budget, Exchange, NoopObserver, Observer};
pub use replicas::{
    InFlightBody, NoReplicaEvents, NotSent, ReplicaEvents, ReplicaHealth, Replicas, ServedBy,
    DEFAULT_BACKOFF, DEFAULT_EJECT_AFTER, DEFAULT_LOAD_FACTOR, DEFAULT_MOVE_SLACK, MAX_PINS,
};
pub use request_body::{BoxError, RequestBody};
pub use service::Translate;
#[cfg(feature = "websocket")]
pub use settings::WebSocketSettings;
pub use settings::{
    DEFAULT_BODY_LIMIT, DEFAULT_MAX_EVENT_SIZE, DEFAULT_MAX_REPLY_SIZE, DEFAULT_MAX_RESOLVED_INPUT,
    RESOLVED_INPUT_PER_BODY,
};
pub use shutdown::{Shutdown, ShutdownTrigger};
pub use stateful::MissingHistory;
#[cfg(all(fuzzing, feature = "websocket"))]
#[doc(hidden)]
pub use websocket::fuzzing as websocket_fuzzing;
pub use wirebridge_convert::{Framing, StreamTranslate};
pub use wirebridge_store as store;

/// Responses clients over a Chat Completions service.
pub type ResponsesToChat<S> = Translate<S, ResponsesOverChat>;

/// The layer of [`ResponsesToChat`]: a Chat Completions backend gains
/// `POST /v1/responses` (and, with a store, `previous_response_id`).
///
/// ```
/// use std::convert::Infallible;
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use http_body_util::{BodyExt, Full};
/// use tower::{service_fn, Layer, ServiceExt};
/// use wirebridge_tower::{RequestBody, ResponsesToChatLayer};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let chat_backend = service_fn(|req: Request<RequestBody<Full<Bytes>>>| async move {
///     // The client's Responses request, as a Chat Completions request.
///     assert_eq!(req.uri().path(), "/v1/chat/completions");
///     let body = req.into_body().collect().await.unwrap().to_bytes();
///     let chat: serde_json::Value = serde_json::from_slice(&body).unwrap();
///     assert_eq!(chat["messages"][0]["content"], "Hi");
///     let reply = r#"{"id":"c1","object":"chat.completion","created":1,"model":"m",
///         "choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}"#;
///     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(reply))))
/// });
/// let service = ResponsesToChatLayer::new().layer(chat_backend);
///
/// let request = Request::post("/v1/responses")
///     .body(Full::new(Bytes::from(r#"{"model":"m","input":"Hi"}"#)))
///     .unwrap();
/// let response = service.oneshot(request).await.unwrap();
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// let response: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// assert_eq!(response["object"], "response");
/// assert_eq!(response["output"][0]["content"][0]["text"], "Hello!");
/// # }
/// ```
pub type ResponsesToChatLayer = TranslateLayer<ResponsesOverChat>;

/// Chat Completions clients over a Responses service.
pub type ChatToResponses<S> = Translate<S, ChatOverResponses>;

/// The layer of [`ChatToResponses`]: Chat Completions clients on a backend
/// that serves only `POST /v1/responses`.
///
/// ```
/// use std::convert::Infallible;
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use http_body_util::{BodyExt, Full};
/// use tower::{service_fn, Layer, ServiceExt};
/// use wirebridge_tower::{ChatToResponsesLayer, RequestBody};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let responses_backend = service_fn(|req: Request<RequestBody<Full<Bytes>>>| async move {
///     // The client's Chat request, as a Responses request.
///     assert_eq!(req.uri().path(), "/v1/responses");
///     let reply = r#"{"id":"resp_1","object":"response","created_at":1,"status":"completed",
///         "model":"m","output":[{"type":"message","id":"msg_1","role":"assistant",
///         "status":"completed","content":[{"type":"output_text","text":"Hello!","annotations":[]}]}]}"#;
///     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(reply))))
/// });
/// let service = ChatToResponsesLayer::new().layer(responses_backend);
///
/// let request = Request::post("/v1/chat/completions")
///     .body(Full::new(Bytes::from(
///         r#"{"model":"m","messages":[{"role":"user","content":"Hi"}]}"#,
///     )))
///     .unwrap();
/// let response = service.oneshot(request).await.unwrap();
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// let completion: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// assert_eq!(completion["object"], "chat.completion");
/// assert_eq!(completion["choices"][0]["message"]["content"], "Hello!");
/// # }
/// ```
pub type ChatToResponsesLayer = TranslateLayer<ChatOverResponses>;

/// Responses clients over a Responses service that keeps no state: the
/// bridge keeps the responses and continues conversations.
pub type StatefulResponses<S> = Translate<S, ResponsesOverResponses>;

/// The layer of [`StatefulResponses`]: with a store, a client continues a
/// conversation with `previous_response_id`, and the backend, which keeps
/// nothing, is sent the whole conversation.
///
/// ```
/// use std::convert::Infallible;
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use http_body_util::{BodyExt, Full};
/// use tower::{service_fn, Layer, Service, ServiceExt};
/// use wirebridge_tower::store::MemoryStore;
/// use wirebridge_tower::{RequestBody, StatefulResponsesLayer};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let backend = service_fn(|req: Request<RequestBody<Full<Bytes>>>| async move {
///     let body = req.into_body().collect().await.unwrap().to_bytes();
///     let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
///     // Never a `previous_response_id`: every turn so far, in `input`.
///     assert!(request.get("previous_response_id").is_none());
///     let turns = request["input"].as_array().map_or(1, Vec::len);
///     let reply = serde_json::json!({"id": "up", "object": "response", "status": "completed",
///         "model": "m", "output": [{"type": "message", "id": "msg_up", "role": "assistant",
///         "status": "completed", "content": [{"type": "output_text",
///         "text": format!("{turns} items"), "annotations": []}]}]});
///     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(reply.to_string()))))
/// });
/// let mut service = StatefulResponsesLayer::new()
///     .store(MemoryStore::new())
///     .layer(backend);
///
/// // Responses are kept per tenant, told apart by their credential.
/// let post = |body: String| {
///     Request::post("/v1/responses")
///         .header("authorization", "Bearer sk-tenant")
///         .body(Full::new(Bytes::from(body)))
///         .unwrap()
/// };
/// let first = service.ready().await.unwrap()
///     .call(post(r#"{"model":"m","input":"My name is Ada.","store":true}"#.into()))
///     .await
///     .unwrap();
/// let first = first.into_body().collect().await.unwrap().to_bytes();
/// let first: serde_json::Value = serde_json::from_slice(&first).unwrap();
/// let next = format!(
///     r#"{{"model":"m","input":"And my name?","previous_response_id":{}}}"#,
///     first["id"]
/// );
/// let second = service.oneshot(post(next)).await.unwrap();
/// let second = second.into_body().collect().await.unwrap().to_bytes();
/// let second: serde_json::Value = serde_json::from_slice(&second).unwrap();
/// // The backend got the first question, its answer, and the second.
/// assert_eq!(second["output"][0]["content"][0]["text"], "3 items");
/// # }
/// ```
pub type StatefulResponsesLayer = TranslateLayer<ResponsesOverResponses>;

/// Responses clients over a service that speaks Anthropic's Messages API
/// (Anthropic's own, Claude on other clouds, the Anthropic-compatible
/// endpoints of other providers, llama.cpp's `llama-server`): each whole
/// request (with a store, the conversation it continues) is written as a
/// Messages request, and the reply read back as a `Response` or its event
/// stream.
pub type ResponsesToMessages<S> = Translate<S, ResponsesOverMessages>;

/// The layer of [`ResponsesToMessages`].
///
/// ```
/// use std::convert::Infallible;
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use http_body_util::{BodyExt, Full};
/// use tower::{service_fn, Layer, ServiceExt};
/// use wirebridge_convert::BackendProfile;
/// use wirebridge_tower::{RequestBody, ResponsesToMessagesLayer};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let claude = service_fn(|req: Request<RequestBody<Full<Bytes>>>| async move {
///     assert_eq!(req.uri().path(), "/v1/messages");
///     // The anthropic profile sends the key as Anthropic reads it.
///     assert_eq!(req.headers()["x-api-key"], "sk-ant-test");
///     let body = req.into_body().collect().await.unwrap().to_bytes();
///     let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
///     assert_eq!(request["messages"][0]["content"][0]["text"], "Hi");
///     let reply = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude",
///         "content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn",
///         "usage":{"input_tokens":3,"output_tokens":2}}"#;
///     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(reply))))
/// });
/// let service = ResponsesToMessagesLayer::new()
///     .profile(BackendProfile::anthropic())
///     .layer(claude);
/// let request = Request::post("/v1/responses")
///     .header("authorization", "Bearer sk-ant-test")
///     .body(Full::new(Bytes::from(r#"{"model":"claude","input":"Hi"}"#)))
///     .unwrap();
/// let response = service.oneshot(request).await.unwrap();
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// let response: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// assert_eq!(response["object"], "response");
/// assert_eq!(response["output"][0]["content"][0]["text"], "Hello!");
/// # }
/// ```
pub type ResponsesToMessagesLayer = TranslateLayer<ResponsesOverMessages>;

/// Anthropic Messages clients (Claude Code, the Anthropic SDKs) over a
/// Responses service: `POST …/messages` becomes `POST …/responses`, and
/// `POST …/messages/count_tokens` the service's
/// `POST …/responses/input_tokens`.
pub type MessagesToResponses<S> = Translate<S, MessagesOverResponses>;

/// Anthropic Messages clients over a Chat Completions service, through
/// the Responses hub: [`MessagesToResponses`] in front of
/// [`ResponsesToChat`].
pub type MessagesToChat<S> = MessagesToResponses<ResponsesToChat<S>>;

/// The layer of [`MessagesToResponses`]. Stacked in front of
/// [`ResponsesToChatLayer`] it serves Messages clients on a Chat backend
/// ([`MessagesToChat`]); in front of [`StatefulResponsesLayer`], on a
/// Responses backend. Errors reach the client in Anthropic's shape
/// (`{"type":"error","error":{…}}`), failures mid-stream as the stream's
/// `error` event, and the client's `x-api-key` reaches the service as its
/// `authorization`.
///
/// ```
/// use std::convert::Infallible;
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use http_body_util::{BodyExt, Full};
/// use tower::{service_fn, ServiceBuilder, ServiceExt};
/// use wirebridge_tower::{MessagesToResponsesLayer, RequestBody, ResponsesToChatLayer};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let chat_backend = service_fn(|req: Request<RequestBody<RequestBody<Full<Bytes>>>>| async move {
///     // Claude Code's key, as the Chat backend's bearer token.
///     assert_eq!(req.headers()["authorization"], "Bearer sk-ant-1");
///     assert_eq!(req.uri().path(), "/v1/chat/completions");
///     let reply = r#"{"id":"c1","object":"chat.completion","created":1,"model":"m",
///         "choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],
///         "usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#;
///     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(reply))))
/// });
/// let service = ServiceBuilder::new()
///     .layer(MessagesToResponsesLayer::new())
///     .layer(ResponsesToChatLayer::new())
///     .service(chat_backend);
///
/// let request = Request::post("/v1/messages?beta=true")
///     .header("x-api-key", "sk-ant-1")
///     .header("anthropic-version", "2023-06-01")
///     .body(Full::new(Bytes::from(
///         r#"{"model":"m","max_tokens":256,"messages":[{"role":"user","content":"Hi"}]}"#,
///     )))
///     .unwrap();
/// let response = service.oneshot(request).await.unwrap();
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// assert_eq!(message["type"], "message");
/// assert_eq!(message["content"][0]["text"], "Hello!");
/// assert_eq!(message["stop_reason"], "end_turn");
/// assert_eq!(message["usage"]["output_tokens"], 2);
/// # }
/// ```
pub type MessagesToResponsesLayer = TranslateLayer<MessagesOverResponses>;
