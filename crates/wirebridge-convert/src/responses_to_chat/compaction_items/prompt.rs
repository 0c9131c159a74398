//! What the backend is asked for, and how it reads a summary back.

use wirebridge_wire::chat::strict::{ChatMessage, MessageContent, Role};
use wirebridge_wire::raw::JsonText;

/// The instruction that asks the backend for a summary: sent as a `user`
/// message after the conversation to compact (a `system` message there
/// would break many chat templates).
///
/// The summary replaces everything but the client's own messages, and the
/// same model reads it back to carry on: it is asked for what it would need
/// to pick the work up, written for itself, with nothing else around it.
pub const SUMMARY_PROMPT: &str = "\
Pause the task: do not answer the last message and do not call any tool. \
The conversation above is about to be compacted. Only the user's and the developer's own \
messages will be kept as they were written; your replies, your tool calls and their results \
will be replaced by the summary you write now, and you will continue the work from it.

Write that summary for yourself, so that you can pick up exactly where you left off:
- the goal: what the user asked for, with every requirement, constraint and preference stated;
- the progress: what has been done and decided, and why; which tools were called and what \
they returned, as far as it still matters;
- the facts still needed: names, numbers, paths, identifiers, commands and error messages, \
quoted exactly;
- what remains: unfinished work, open questions, known problems, and the next step.

Be complete but brief, leave out what no longer matters, and answer with the summary only.";

/// How a summary starts when it is sent in place of its compaction item: a
/// `user` message, this text, then the summary.
pub const SUMMARY_INTRO: &str = "\
[Summary of the earlier conversation] The conversation up to this point was compacted: your \
earlier replies, tool calls and tool results are replaced by the summary below, written by \
you; the other messages before it are kept as written. Continue from it.

";

/// The message that asks for a summary.
pub(in crate::responses_to_chat) fn prompt_message() -> ChatMessage<'static> {
    ChatMessage::new(
        Role::User,
        MessageContent::Text(JsonText::from_text(SUMMARY_PROMPT)),
    )
}

/// The message that stands for a compaction item.
pub(in crate::responses_to_chat) fn summary_message(summary: &str) -> ChatMessage<'static> {
    let mut text = String::with_capacity(SUMMARY_INTRO.len() + summary.len());
    text.push_str(SUMMARY_INTRO);
    text.push_str(summary);
    ChatMessage::new(Role::User, MessageContent::Text(JsonText::from_text(&text)))
}
