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
//!   compaction item ([`Summary::compact_resource`]);
//! - a `POST /responses` whose last input item is a `compaction_trigger`
//!   ([`CompactionAsk::Trigger`]): the turn's output is the compaction item
//!   alone ([`Summary::trigger_reply`]);
//! - a `POST /responses` with `context_management` whose input holds more
//!   tokens than its `compact_threshold` ([`CompactionAsk::Threshold`]):
//!   compacted first, then answered from the compacted conversation
//!   ([`ParsedRequest::translate_compacted`](super::ParsedRequest::translate_compacted)),
//!   the compaction item first in the output.
//!
//! This module does no IO: the caller sends the summary request and hands
//! back the backend's reply.

mod ask;
mod carrier;
mod cut;
mod prompt;
mod request;
mod resource;
mod summary;
mod tokens;

pub use ask::{CompactionAsk, MIN_THRESHOLD};
pub use prompt::{SUMMARY_INTRO, SUMMARY_PROMPT};
pub use request::{CompactRequest, SummaryRequest};
pub use summary::Summary;
pub use tokens::{estimate_tokens, tokenize_count, tokenize_request};

pub(super) use cut::{Cut, Place};
pub(super) use prompt::prompt_message;
pub(super) use request::report;

use wirebridge_wire::chat::strict::{ChatRequest, ChatToolChoice};
use wirebridge_wire::responses::strict::Usage;

/// What a translation is for: the client's own request, or a step of a
/// compaction.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Mode<'s> {
    /// The caller runs compactions: `context_management` and a final
    /// `compaction_trigger` are acted on, not lost.
    pub(super) compacts: bool,
    /// Asks the backend for a summary of the conversation rather than a
    /// reply.
    pub(super) summarize: bool,
    /// The conversation was just compacted into this summary, which
    /// stands after it.
    pub(super) compacted: Option<&'s str>,
}

impl Mode<'_> {
    /// The client's request, its compaction run by the caller.
    pub(super) fn compacting() -> Self {
        Mode {
            compacts: true,
            ..Mode::default()
        }
    }

    /// A summary is asked for in one piece, as text: no stream, no tool
    /// call, no format, no limit that would cut it short.
    pub(super) fn summary_request(self, chat: &mut ChatRequest<'_>) {
        chat.stream = None;
        chat.stream_options = None;
        if chat.tools.is_some() {
            chat.tool_choice = Some(ChatToolChoice::Mode("none".into()));
        }
        chat.parallel_tool_calls = None;
        chat.response_format = None;
        chat.max_tokens = None;
        chat.max_completion_tokens = None;
        chat.logprobs = None;
        chat.top_logprobs = None;
    }
}

/// Two usages added up: a reply's, and what was spent before it.
pub(super) fn add_usage(reply: Usage, prior: Option<Usage>) -> Usage {
    let Some(prior) = prior else {
        return reply;
    };
    let mut sum = reply;
    sum.input_tokens += prior.input_tokens;
    sum.input_tokens_details.cached_tokens += prior.input_tokens_details.cached_tokens;
    sum.input_tokens_details.cache_write_tokens += prior.input_tokens_details.cache_write_tokens;
    sum.output_tokens += prior.output_tokens;
    sum.output_tokens_details.reasoning_tokens += prior.output_tokens_details.reasoning_tokens;
    sum.total_tokens += prior.total_tokens;
    sum
}
