//! Refusals of a Messages client's thread, in the terms the Anthropic SDKs
//! read (`details.error_code`), so that their thread helpers know what to
//! do next.

use thiserror::Error;

use super::refusal;

/// A thread this layer cannot keep: the SDKs' thread helpers then send
/// the whole conversation without `thread`.
#[derive(Debug, Error)]
#[error("thread: {why}; send the whole conversation without `thread`")]
pub(crate) struct ThreadUnsupported {
    /// Why it cannot be kept.
    pub(crate) why: &'static str,
}
refusal!(
    ThreadUnsupported,
    BAD_REQUEST,
    "thread_unsupported_request",
    param = |_: &Self| Some("thread")
);

/// No reply `id` of a thread this credential can continue: never kept,
/// expired, evicted, or another credential's (each tenant sees only its
/// own).
#[derive(Debug, Error)]
#[error(
    "thread.previous_message_id: no thread holds the message '{id}' for this credential (it was \
     never kept, or has expired or been evicted); send the whole conversation again with thread \
     {{\"type\": \"create\"}}"
)]
pub(crate) struct ThreadNotFound {
    /// The message id the continue named.
    pub(crate) id: String,
}
refusal!(
    ThreadNotFound,
    NOT_FOUND,
    "thread_not_found",
    param = |_: &Self| Some("thread.previous_message_id")
);
