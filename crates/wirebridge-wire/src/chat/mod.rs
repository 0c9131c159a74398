//! The Chat Completions API (`POST /v1/chat/completions`).

pub mod chunk;
pub mod completion;
pub mod create;
pub mod request;
