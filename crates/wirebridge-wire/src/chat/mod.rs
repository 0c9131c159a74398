//! The Chat Completions API (`POST /v1/chat/completions`).

pub mod completion;
pub mod request;
