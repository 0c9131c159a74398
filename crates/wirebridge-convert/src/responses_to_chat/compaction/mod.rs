//! Compaction: a conversation summarized by the backend, handed to the
//! client sealed in a `compaction` item, and read back in its place.
//!
//! A Chat backend has no compaction of its own, so the bridge asks it for a
//! summary: the conversation, then [`SUMMARY_PROMPT`], in one non-streaming
//! request. The summary is sealed (the same AEAD as reasoning carriers,
//! [`Purpose::Compaction`](crate::seal::Purpose::Compaction), bound to the
//! tenant) into the `encrypted_content` of a `compaction` item. When a
//! later request carries that item, the summary is opened and sent in its
//! place, introduced by [`SUMMARY_INTRO`]: any replica with the same key can
//! continue the conversation, with no state kept.
//!
//! The latest compaction item that opens stands for the conversation before
//! it, except the client's own messages (`user`, `system` and `developer`
//! roles), which are sent as written, as the API's compaction keeps them;
//! the assistant's messages, tool calls and results, reasoning and earlier
//! compaction items before it are left out. A compaction item that cannot
//! be opened (sealed by another server, or altered) is dropped and reported
//! under the loss policy ([`LossKind::UnsupportedItem`](crate::LossKind)).
//!
//! Three requests compact:
//!
//! - `POST /responses/compact` ([`CompactRequest`]): answered with a
//!   `response.compaction` object, the client's messages then the
//!   compaction item ([`SummaryRequest::compact_resource`]);
//! - a `POST /responses` whose last input item is a `compaction_trigger`
//!   ([`CompactionAsk::Trigger`]): the turn's output is the compaction item
//!   alone ([`SummaryRequest::trigger_reply`]);
//! - a `POST /responses` with `context_management` whose input holds more
//!   tokens than its `compact_threshold` ([`CompactionAsk::Threshold`]):
//!   compacted first, then answered from the compacted conversation
//!   ([`ParsedRequest::translate_compacted`](super::ParsedRequest::translate_compacted)),
//!   the compaction item first in the output.
//!
//! This module does no IO: the caller sends the summary request and hands
//! back the backend's reply.

mod ask;
mod request;
mod resource;
mod summary;
mod tokens;

pub use super::compaction_items::{MIN_THRESHOLD, SUMMARY_INTRO, SUMMARY_PROMPT};
pub use ask::CompactionAsk;
pub use request::{CompactRequest, SummaryRequest};
pub use summary::Summary;
pub use tokens::{estimate_tokens, tokenize_count, tokenize_request};
