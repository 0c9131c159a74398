//! A deterministic, scripted upstream speaking the OpenAI **Chat
//! Completions** and **Responses** APIs over real HTTP, streaming and not.
//!
//! It is the upstream of the quickstart, the examples, the tests and the
//! benchmarks of wirebridge: the same request always gets the same answer
//! (ids are derived from a hash of the request, timestamps come from a
//! fixed [`Clock`] by default), so tests can assert on its bytes.
//!
//! # Endpoints
//!
//! Paths are matched on their end, so any prefix works (`/v1/…`,
//! `/openai/v1/…`):
//!
//! | request | answer |
//! |---|---|
//! | `POST …/chat/completions` | a `chat.completion` body, or with `stream: true` a `chat.completion.chunk` SSE stream ending in `data: [DONE]` |
//! | `POST …/responses` | a `response` body, or with `stream: true` the typed Responses event stream; like the stateless servers it stands for, a 400 naming `previous_response_id` or `conversation` |
//! | `GET …/models` | `{"object": "list", "data": [{"id": MODEL, …}]}` |
//! | `GET …/healthz` | `200 ok` |
//!
//! An endpoint of an API that [`DemoConfig::api`] does not serve, or an
//! unknown path, gets OpenAI's 404 (`code: "unknown_url"`). Malformed
//! requests get OpenAI-shaped 400s naming the parameter.
//!
//! # What it answers
//!
//! Driven by the end of the conversation:
//!
//! * **A user message** → `You said: "<text>". This is the wirebridge demo
//!   upstream.`, streamed one word per chunk.
//! * **A user message that asks for tools by name**, when function tools are
//!   offered (and `tool_choice` is not `"none"`): `call get_weather with
//!   city=Paris` → one tool call `get_weather({"city":"Paris"})`; `call
//!   get_weather with city=Paris and get_time with tz=UTC` → two parallel
//!   calls (only the first with `parallel_tool_calls: false`). The word
//!   `call` must come first; then every word naming an offered tool starts a
//!   call, and the `key=value` words after it are its arguments (quoted
//!   values stay strings and may hold spaces; `true`, `false`, `null` and
//!   numbers are JSON literals). Arguments stream in fragments of a few
//!   characters; call ids are `call_` + a hash.
//! * **Tool results** (trailing `tool` messages / `function_call_output`
//!   items) → `The tool returned: <output>` (`The tools returned: <a>; <b>`
//!   for several).
//! * **Reasoning requested** (`reasoning_effort` on Chat, `reasoning.effort`
//!   on Responses, anything but `"none"`) → a short reasoning text first:
//!   `reasoning_content` deltas on Chat (and `message.reasoning_content`), a
//!   `reasoning` item with one summary part on Responses.
//! * **Token limits** (`max_completion_tokens` / `max_tokens` /
//!   `max_output_tokens`) cut the output: `finish_reason: "length"`, or
//!   `status: "incomplete"` with `incomplete_details.reason:
//!   "max_output_tokens"`.
//!
//! Tokens are whitespace-separated words: input tokens are the words of every
//! text in the request; each streamed word of reasoning or text is one output
//! token, and a tool call costs one token plus one per argument fragment.
//! Chat streams end with a usage chunk only when `stream_options.include_usage`
//! is set; Responses carry `usage` once the response is finished.
//!
//! # Scripted failures
//!
//! Trigger words anywhere in the **last user message** (they keep applying
//! to the turns that follow it, e.g. after a tool result):
//!
//! | trigger | effect |
//! |---|---|
//! | `demo:error STATUS` | HTTP `STATUS` (400–599, default 500) with an OpenAI-shaped error body (`429` → `type: "requests"`, `code: "rate_limit_exceeded"`; `5xx` → `type: "server_error"`) |
//! | `demo:fail-midstream` | a few content chunks, then an in-band error: Chat `data: {"error": {…}}` then `data: [DONE]`; Responses an `error` event with a nested `error` object (and the flat fields of the spec), then `response.failed`. Without `stream`, an HTTP 500 |
//! | `demo:cut` | a few content chunks, then the connection is dropped without finishing the response (without `stream`: half of the JSON body) |
//! | `demo:slow MS` | `MS` milliseconds between chunks (before the body when not streaming) |
//!
//! # Replay
//!
//! With [`DemoConfig::replay`], every generation request is answered with a
//! recorded file instead: `.sse` files byte for byte, `*.chunks.txt` files
//! (one JSON payload per line) framed as SSE (`event: TYPE` + `data:` lines
//! for Responses payloads, `data:` lines and `data: [DONE]` for Chat), any
//! other file as is; the content type follows the file's contents. Streams
//! are sent one event per chunk, with [`DemoConfig::chunk_delay`] between
//! them.
//!
//! # Use
//!
//! In-process, without a socket ([`handle`] is generic over the request body):
//!
//! ```
//! use bytes::Bytes;
//! use http_body_util::{BodyExt, Full};
//! use wirebridge_demo::{handle, DemoConfig};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let config = DemoConfig::default();
//! let body = r#"{"model": "m", "messages": [{"role": "user", "content": "Hello"}]}"#;
//! let request = http::Request::post("/v1/chat/completions")
//!     .body(Full::new(Bytes::from(body)))
//!     .unwrap();
//! let response = handle(&config, request).await;
//! assert_eq!(response.status(), 200);
//! let bytes = response.into_body().collect().await.unwrap().to_bytes();
//! let completion: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
//! assert_eq!(
//!     completion["choices"][0]["message"]["content"],
//!     "You said: \"Hello\". This is the wirebridge demo upstream."
//! );
//! # }
//! ```
//!
//! Over TCP (HTTP/1.1 and h2c), until a shutdown signal:
//!
//! ```no_run
//! use wirebridge_demo::{serve, Api, DemoConfig};
//!
//! # #[tokio::main]
//! # async fn main() -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8788").await?;
//! let config = DemoConfig::default().api(Api::Chat);
//! serve(listener, config, async {
//!     let _ = tokio::signal::ctrl_c().await;
//! })
//! .await
//! # }
//! ```
//!
//! In tests, [`DemoServer::start`] serves on a free loopback port until
//! dropped.

#![deny(unsafe_code)]

mod body;
mod calls;
mod chat;
mod config;
mod error;
mod frames;
mod handler;
mod ids;
mod json;
mod messages;
mod prompt;
mod replay;
mod responses;
mod script;
mod server;
mod service;
mod signature;
mod triggers;

pub use body::{DemoBody, DemoBodyError};
pub use config::{Api, Clock, DemoConfig, ParseApiError, DEFAULT_CREATED, DEFAULT_MODEL};
pub use handler::handle;
pub use replay::ReplayError;
pub use server::{serve, DemoServer};
pub use service::{service, DemoFuture, DemoService};
