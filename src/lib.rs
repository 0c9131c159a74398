//! wirebridge translates between the OpenAI Chat Completions API and the
//! OpenAI Responses API, in both directions: requests, JSON bodies and SSE
//! streams.
//!
//! This facade re-exports the workspace crates:
//!
//! - [`wire`]: serde types of both APIs (lenient parse, strict emit);
//! - [`sse`]: an incremental server-sent-events decoder and encoder;
//! - [`convert`]: the sans-IO translators;
//! - [`tower`]: the tower layers, [`tower::ResponsesToChatLayer`] and
//!   [`tower::ChatToResponsesLayer`].

#![deny(unsafe_code)]
#![deny(missing_docs)]

pub use wirebridge_convert as convert;
pub use wirebridge_sse as sse;
pub use wirebridge_tower as tower;
pub use wirebridge_wire as wire;

/// The README, whose Rust examples `cargo test --doc` compiles and runs.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
