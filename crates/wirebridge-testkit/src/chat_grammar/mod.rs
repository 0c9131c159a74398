//! The Chat Completions chunk stream grammar a translator must emit, checked
//! strictly, plus lenient extractors for recorded streams and bodies.
//!
//! ```text
//! data: {chunk: delta.role = "assistant" [+ first fragment]}
//! data: {chunk: delta.content | delta.refusal | delta.reasoning_content | delta.tool_calls[...]}*
//! data: {chunk: finish_reason}                      (one per choice)
//! [data: {chunk: choices: [], usage: {...}}]        (iff stream_options.include_usage)
//! data: [DONE]
//! ```
//!
//! or, on failure, `data: {"error": {...}}` then `data: [DONE]`.

mod recorded;
mod strict;
mod tool_calls;

pub use recorded::{chat_body_transcript, transcript_of_recorded};
pub use strict::{check, FINISH_REASONS};

use crate::Violation;

type R<T> = Result<T, Violation>;

fn v_err<T>(i: usize, msg: impl Into<String>) -> R<T> {
    Err(Violation::new(i, msg))
}
