//! A deterministic, scripted upstream speaking the OpenAI **Chat
//! Completions** and **Responses** APIs and the Anthropic **Messages** API
//! over real HTTP, streaming and not.
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
//! | `POST …/messages` | a `message` body (`msg_…` id, `content` blocks, `stop_reason` `end_turn` / `tool_use` / `max_tokens`, `usage` with the cache counts at 0), or with `stream: true` the Messages event stream, every event with its `event:` line: `message_start`, one `ping`, `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`) / `content_block_stop` per block, `message_delta`, `message_stop` |
//! | `POST …/messages/count_tokens` | `{"input_tokens": N}`, by the same count (also when replaying) |
//! | `GET …/models` | `{"object": "list", "data": [{"id": MODEL, …}]}` |
//! | `GET …/healthz` | `200 ok` |
//!
//! Which of the three APIs are served is [`DemoConfig::api`]'s choice
//! ([`Api::Both`], the default, is Chat and Responses; [`Api::All`] adds
//! Messages). An endpoint of an API that is not served, or an unknown path,
//! gets a 404: Anthropic's (`not_found_error`) under `…/messages`, OpenAI's
//! (`code: "unknown_url"`) elsewhere. Malformed requests get 400s in the
//! endpoint's API: OpenAI's naming the parameter, or Anthropic's
//! `{"type": "error", "error": {"type": "invalid_request_error", "message":
//! "PATH: …"}}` whose message starts with the JSON path at fault. No API key
//! is needed.
//!
//! A Messages request is checked as Anthropic checks it: `max_tokens` is
//! required (at least 1), `messages` is a non-empty list of `user` and
//! `assistant` messages whose content is a string or typed blocks, `system`
//! is a string or `text` blocks, every `tool_result` answers a `tool_use` of
//! the message just before it (`messages.N.content.M.tool_use_id`), and
//! `thinking` is `{"type": "enabled", "budget_tokens": N}` with `1024 <= N <
//! max_tokens` (or `disabled`, or `adaptive`). Every `thinking` block of the
//! conversation must carry the signature the demo gave its text: an altered
//! text or a missing or wrong signature is a 400 naming
//! `messages.N.content.M.signature`, as Anthropic refuses altered thinking.
//! `redacted_thinking` blocks are accepted as they are.
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
//!   On Messages the calls are `tool_use` blocks with `toolu_` ids and an
//!   `input` object, streamed as `input_json_delta` fragments; `tool_choice:
//!   {"type": "none"}` forbids them and `disable_parallel_tool_use: true`
//!   keeps only the first.
//! * **Tool results** (trailing `tool` messages / `function_call_output`
//!   items / `tool_result` blocks of the last user message) → `The tool
//!   returned: <output>` (`The tools returned: <a>; <b>` for several).
//! * **Reasoning requested** (`reasoning_effort` on Chat, `reasoning.effort`
//!   on Responses, anything but `"none"`) → a short reasoning text first:
//!   `reasoning_content` deltas on Chat (and `message.reasoning_content`), a
//!   `reasoning` item with one summary part on Responses. On Messages,
//!   `thinking` enabled gives a `thinking` block first, its `signature` a
//!   keyed hash of its text (base64) sent as one `signature_delta` after the
//!   `thinking_delta`s.
//! * **Token limits** (`max_completion_tokens` / `max_tokens` /
//!   `max_output_tokens`) cut the output: `finish_reason: "length"`,
//!   `status: "incomplete"` with `incomplete_details.reason:
//!   "max_output_tokens"`, or `stop_reason: "max_tokens"` (a `tool_use`
//!   block cut before its input is whole streams the fragments sent, and has
//!   `input: {}` in a body).
//!
//! Tokens are whitespace-separated words: input tokens are the words of every
//! text in the request; each streamed word of reasoning or text is one output
//! token, and a tool call costs one token plus one per argument fragment.
//! Chat streams end with a usage chunk only when `stream_options.include_usage`
//! is set; Responses carry `usage` once the response is finished; Messages
//! streams carry the input tokens in `message_start` and the output tokens in
//! `message_delta`. On Messages the input tokens also count the `system`
//! prompt, `tool_use` inputs and `tool_result` contents.
//!
//! # Scripted failures
//!
//! Trigger words anywhere in the **last user message** (they keep applying
//! to the turns that follow it, e.g. after a tool result; on Messages, the
//! last user message with text, `tool_result` blocks aside):
//!
//! | trigger | effect |
//! |---|---|
//! | `demo:error STATUS` | HTTP `STATUS` (400–599, default 500) with an OpenAI-shaped error body (`429` → `type: "requests"`, `code: "rate_limit_exceeded"`; `5xx` → `type: "server_error"`); on Messages Anthropic's, typed by status (`401` → `authentication_error`, `429` → `rate_limit_error`, `500` → `api_error`, `503`/`529` → `overloaded_error`, …) |
//! | `demo:fail-midstream` | a few content chunks, then an in-band error: Chat `data: {"error": {…}}` then `data: [DONE]`; Responses an `error` event with a nested `error` object (and the flat fields of the spec), then `response.failed`; Messages an `event: error` with `{"type": "error", "error": {"type": "api_error", …}}` and no `message_stop`. Without `stream`, an HTTP 500 |
//! | `demo:cut` | a few content chunks, then the connection is dropped without finishing the response (without `stream`: half of the JSON body) |
//! | `demo:slow MS` | `MS` milliseconds between chunks (before the body when not streaming) |
//! | `demo:redacted` | Messages only: the answer carries a `redacted_thinking` block with opaque `data` (after the `thinking` block, if any), for testing that a proxy carries it |
//!
//! # Replay
//!
//! With [`DemoConfig::replay`], every generation request is answered with a
//! recorded file instead: `.sse` files byte for byte, `*.chunks.txt` files
//! (one JSON payload per line) framed as SSE (`event: TYPE` + `data:` lines
//! for Responses and Messages payloads, `data:` lines and `data: [DONE]` for
//! Chat), any
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
//! The same in Anthropic's Messages dialect, served with [`Api::Messages`]
//! or [`Api::All`]:
//!
//! ```
//! use bytes::Bytes;
//! use http_body_util::{BodyExt, Full};
//! use wirebridge_demo::{handle, Api, DemoConfig};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let config = DemoConfig::default().api(Api::All);
//! let body = r#"{"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "Hello"}]}"#;
//! let request = http::Request::post("/v1/messages")
//!     .body(Full::new(Bytes::from(body)))
//!     .unwrap();
//! let response = handle(&config, request).await;
//! let bytes = response.into_body().collect().await.unwrap().to_bytes();
//! let message: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
//! assert_eq!(message["stop_reason"], "end_turn");
//! assert_eq!(
//!     message["content"][0]["text"],
//!     "You said: \"Hello\". This is the wirebridge demo upstream."
//! );
//! # }
//! ```
//!
//! In tests, [`DemoServer::start`] serves on a free loopback port until
//! dropped.

#![forbid(unsafe_code)]

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
pub use signature::sign as thinking_signature;
