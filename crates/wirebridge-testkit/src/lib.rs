//! Test support for the wirebridge workspace (dev-only, never published).
//!
//! * [`fixtures`]: locate and load the recorded traffic in `shared/fixtures`
//!   (Chat and Responses streams as raw SSE bytes, non-streaming bodies, Codex
//!   requests), split byte streams at pseudo-random boundaries, and parse SSE
//!   with a small reference parser.
//! * [`responses_grammar`]: a strict checker for the Responses event stream a
//!   translator emits, plus a lenient content extractor for recorded streams.
//! * [`chat_grammar`]: the same for Chat Completions chunk streams.
//! * [`messages_grammar`]: the same for Anthropic Messages event streams.
//! * [`CountingAllocator`] and [`allocations`]: heap allocations counted per
//!   thread, for the tests that assert them and the benchmarks.
//! * [`reshape`]: a reply in the other transport (a body as a stream, a
//!   stream folded into a body), to check that both paths of a translator
//!   agree.
//!
//! The checkers return a transcript (the text, reasoning, tool calls, usage …
//! the stream carried) so that a test can compare the content of a translation
//! with the content of the recorded stream it was made from.
//!
//! ```
//! use wirebridge_testkit::{chat_grammar, fixtures, parse_sse, split_random};
//!
//! let sse = concat!(
//!     r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","#,
//!     r#""choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}"#,
//!     "\n\n",
//!     r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","#,
//!     r#""choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
//!     "\n\ndata: [DONE]\n\n",
//! );
//! // What a translator emitted, received in TCP-like pieces.
//! let received: Vec<u8> = split_random(sse.as_bytes(), 7).concat();
//! let t = chat_grammar::check(&parse_sse(&received), false).unwrap();
//! assert_eq!(t.text, "Hi");
//! assert_eq!(t.finish_reason.as_deref(), Some("stop"));
//!
//! // The expected content of a recorded upstream stream.
//! let recorded = fixtures::chat_streams().remove(0);
//! let expected = chat_grammar::transcript_of_recorded(&recorded.frames());
//! assert!(expected.finish_reason.is_some());
//! ```

#![deny(unsafe_code)]

mod alloc;
pub mod chat_grammar;
pub mod fixtures;
mod json;
pub mod messages_grammar;
pub mod mutate;
pub mod reshape;
pub mod responses_grammar;
mod split;
mod sse;
mod transcript;

pub use alloc::{allocations, CountingAllocator};
pub use split::{split_points, split_random};
pub use sse::{encode_sse, parse_sse, SseFrame};
pub use transcript::{
    ChatTranscript, MessagesTranscript, ResponsesTranscript, ThinkingRecord, ToolCallRecord,
    Violation,
};
