//! Anthropic Messages clients on Responses backends: requests (golden
//! files, errors naming fields), and every recorded Responses stream and
//! body translated into the Messages grammar with the recording's content.

#[path = "../common/mod.rs"]
mod common;

mod compaction;
mod edges;
mod errors;
mod fields;
mod golden;
mod hub;
mod replies;
mod streams;
