//! The Responses API (`POST /v1/responses`).

pub mod create;
pub mod event;
pub mod request;
pub mod response;
pub mod stream;
