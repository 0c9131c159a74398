//! The Anthropic Messages stream grammar a translator must emit, checked
//! strictly, and a reader of `message` bodies.
//!
//! ```text
//! message_start                                   (message: content [], stop_reason null, usage)
//!   for each block, one at a time, index 0, 1, 2, …:
//!     content_block_start                         (text "", thinking "" / "", tool_use input {}, redacted_thinking)
//!       text:     text_delta*
//!       thinking: thinking_delta* signature_delta
//!       tool_use: input_json_delta*               (together: a JSON object, or nothing; less at max_tokens)
//!     content_block_stop
//!   message_delta                                 (stop_reason, stop_sequence, usage)
//! message_stop
//! ```
//!
//! with `ping` anywhere between `message_start` and `message_stop`, or, on
//! failure, an `error` event (`{"type":"error","error":{type, message}}`) at
//! any point, a block open or not, which ends the stream. These are the
//! rules the Anthropic SDKs' stream accumulators rely on (`message_start`
//! first, deltas applied to `content[index]` by type), plus stricter ones
//! every Anthropic stream keeps (one block open at a time, dense indexes,
//! one signature per thinking block). See [`check`] for the full list.
//!
//! ```
//! use wirebridge_testkit::{messages_grammar, SseFrame};
//!
//! let frames = [
//!     SseFrame::named("message_start", r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}"#),
//!     SseFrame::named("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
//!     SseFrame::named("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#),
//!     SseFrame::named("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
//!     SseFrame::named("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":3,"output_tokens":1}}"#),
//!     SseFrame::named("message_stop", r#"{"type":"message_stop"}"#),
//! ];
//! let t = messages_grammar::check(&frames).unwrap();
//! assert_eq!(t.text, "Hi");
//! assert_eq!(t.stop_reason.as_deref(), Some("end_turn"));
//! assert_eq!(t.usage.unwrap()["input_tokens"], 3);
//! ```

mod block;
mod body;
mod checker;

pub use body::messages_body_transcript;
pub use checker::check;

use crate::Violation;

/// Valid `stop_reason` values.
pub const STOP_REASONS: &[&str] = &[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
    "compaction",
];

/// Valid `error.type` values.
pub const ERROR_TYPES: &[&str] = &[
    "invalid_request_error",
    "authentication_error",
    "billing_error",
    "permission_error",
    "not_found_error",
    "request_too_large",
    "rate_limit_error",
    "timeout_error",
    "api_error",
    "overloaded_error",
];

type R<T> = Result<T, Violation>;

fn v_err<T>(i: usize, msg: impl Into<String>) -> R<T> {
    Err(Violation::new(i, msg))
}
