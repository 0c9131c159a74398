//! What a translation does with compaction: the `compaction` items of a
//! conversation, opened and read in place of what they summarize, and the
//! [`Mode`] of a translation that is a step of a compaction the caller
//! runs.
//!
//! The compaction requests themselves (what asks for one, the summary
//! request, its reply) are [`compaction`](super::compaction)'s; this
//! module is what the request translator needs of it.

mod asked;
mod carrier;
mod cut;
mod prompt;

pub use asked::MIN_THRESHOLD;
pub use prompt::{SUMMARY_INTRO, SUMMARY_PROMPT};

pub(super) use asked::{entries, report};
pub(crate) use cut::{is_clients, Cut, Place};
pub(super) use prompt::{prompt_message, summary_message};

use wirebridge_wire::chat::strict::{ChatRequest, ChatToolChoice};

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
