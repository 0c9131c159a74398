//! Refusals of the stored state: responses, conversations and their
//! items, and the input a request takes in from them.

use thiserror::Error;
use wirebridge_store::StoreError;

use super::refusal;

/// A request without credentials continues nothing and refers to no stored
/// item (`param` says which it tried): requests without one keep nothing.
#[derive(Debug, Error)]
#[error(
    "{} needs a credential: requests without one keep no responses on this bridge (it shares no \
     anonymous store), so there is nothing to refer to; send an authorization header, or the \
     whole conversation in `input`",
    needing(.param)
)]
pub(crate) struct NeedsCredentials {
    /// The field that refers to stored state.
    pub(crate) param: &'static str,
}
refusal!(
    NeedsCredentials,
    BAD_REQUEST,
    "store_requires_credentials",
    param = |r: &NeedsCredentials| Some(r.param)
);

/// What a request without credentials asked the store for, by its field.
fn needing(param: &str) -> &'static str {
    match param {
        "previous_response_id" => "previous_response_id",
        "conversation" => "a conversation",
        "background" => "a background response",
        _ => "item_reference",
    }
}

/// `previous_response_id` names nothing this tenant can continue.
#[derive(Debug, Error)]
pub(crate) enum PreviousResponseNotFound {
    /// Never kept, expired, evicted, deleted, or another tenant's.
    #[error("Previous response with id '{id}' not found.")]
    Missing {
        /// The id the request named.
        id: String,
    },
    /// Kept, but an earlier response of its conversation is not.
    #[error(
        "Previous response with id '{id}' cannot be continued: its conversation is missing the \
         earlier response '{missing}' (expired, evicted or deleted)."
    )]
    Broken {
        /// The id the request named.
        id: String,
        /// The first response of its conversation that is gone.
        missing: String,
    },
}
refusal!(
    PreviousResponseNotFound,
    NOT_FOUND,
    "previous_response_not_found",
    param = |_: &PreviousResponseNotFound| Some("previous_response_id")
);

/// `previous_response_id` names a background response still running.
#[derive(Debug, Error)]
#[error(
    "Previous response with id '{id}' is still running in the background: continue it once it \
     has ended."
)]
pub(crate) struct PreviousResponseInProgress {
    /// The id the request named.
    pub(crate) id: String,
}
refusal!(
    PreviousResponseInProgress,
    BAD_REQUEST,
    "previous_response_in_progress",
    param = |_: &PreviousResponseInProgress| Some("previous_response_id")
);

/// No response `id` for this tenant.
#[derive(Debug, Error)]
#[error("No response found with id '{id}'.")]
pub(crate) struct ResponseNotFound {
    /// The id in the path.
    pub(crate) id: String,
}
refusal!(ResponseNotFound, NOT_FOUND, "not_found");

/// No conversation `id` for this tenant, named by the request field
/// `param` when one named it (else by the path).
#[derive(Debug, Error)]
#[error("Conversation with id '{id}' not found.")]
pub(crate) struct ConversationNotFound {
    /// The conversation's id.
    pub(crate) id: String,
    /// The request field that named it.
    pub(crate) param: Option<&'static str>,
}
refusal!(
    ConversationNotFound,
    NOT_FOUND,
    "not_found",
    param = |r: &ConversationNotFound| r.param
);

impl ConversationNotFound {
    /// Conversation `id`, named by the request's path.
    pub(crate) fn at_path(id: &str) -> Self {
        Self {
            id: id.to_owned(),
            param: None,
        }
    }
}

/// No item `item` in the tenant's conversation `conversation`.
#[derive(Debug, Error)]
#[error("Item with id '{item}' not found in conversation '{conversation}'.")]
pub(crate) struct ItemNotFound {
    /// The conversation's id.
    pub(crate) conversation: String,
    /// The item's id.
    pub(crate) item: String,
}
refusal!(ItemNotFound, NOT_FOUND, "not_found");

/// The layer's store keeps no conversations (an embedder's own store that
/// does not offer them).
#[derive(Debug, Error)]
#[error(
    "conversations are not kept here: the bridge's response store offers no conversation store"
)]
pub(crate) struct ConversationsNotKept;
refusal!(
    ConversationsNotKept,
    BAD_REQUEST,
    "conversations_not_kept",
    param = |_: &ConversationsNotKept| Some("conversation")
);

/// The store cannot be reached: a 503 to retry in a moment.
#[derive(Debug, Error)]
#[error("{0}")]
pub(crate) struct StoreUnavailable(#[source] pub(crate) StoreError);
refusal!(
    StoreUnavailable,
    SERVICE_UNAVAILABLE,
    "store_unavailable",
    kind = "server_error",
    retry_soon = true
);

/// What one request takes in from the store (its history, its
/// conversation's items, the items its references name) passes the bound.
#[derive(Debug, Error)]
#[error(
    "{} come to more than the {limit}-byte limit on what one request may take in from the store; \
     send fewer references, or continue a shorter conversation",
    taking_in(.param)
)]
pub(crate) struct ResolvedInputTooLarge {
    /// The field whose resolution passed the bound.
    pub(crate) param: &'static str,
    /// The bound, in bytes.
    pub(crate) limit: usize,
}
refusal!(
    ResolvedInputTooLarge,
    BAD_REQUEST,
    crate::observer::RESOLVED_INPUT_TOO_LARGE,
    param = |r: &ResolvedInputTooLarge| Some(r.param)
);

/// What a field takes in from the store, in words.
fn taking_in(param: &str) -> &'static str {
    match param {
        "previous_response_id" => "the stored conversation `previous_response_id` continues",
        "conversation" => "the stored items of `conversation`",
        _ => "the stored items the item_reference items of `input` name (each time named)",
    }
}

/// A field of a stored-state request (a query parameter, a field of a
/// Conversations body) that is missing or out of its range.
#[derive(Debug, Error)]
#[error("{message}")]
pub(crate) struct InvalidParameter {
    /// The field.
    pub(crate) param: &'static str,
    /// What is wrong with it, and what it takes.
    pub(crate) message: String,
}
refusal!(
    InvalidParameter,
    BAD_REQUEST,
    "invalid_parameter",
    param = |r: &InvalidParameter| Some(r.param)
);

/// A Conversations request body that is not the JSON object its route
/// takes.
#[derive(Debug, Error)]
#[error("the request body is not a JSON object of this request: {0}")]
pub(crate) struct InvalidJsonBody(#[source] pub(crate) serde_json::Error);
refusal!(InvalidJsonBody, BAD_REQUEST, "invalid_json");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refusal::Refusal;

    #[test]
    fn each_refusal_names_its_field() {
        let cases: [(&dyn Refusal, u16, &str, Option<&str>); 4] = [
            (
                &NeedsCredentials {
                    param: "conversation",
                },
                400,
                "store_requires_credentials",
                Some("conversation"),
            ),
            (
                &PreviousResponseNotFound::Missing {
                    id: "resp_1".into(),
                },
                404,
                "previous_response_not_found",
                Some("previous_response_id"),
            ),
            (
                &ResolvedInputTooLarge {
                    param: "input",
                    limit: 64,
                },
                400,
                crate::observer::RESOLVED_INPUT_TOO_LARGE,
                Some("input"),
            ),
            (
                &ResponseNotFound {
                    id: "resp_1".into(),
                },
                404,
                "not_found",
                None,
            ),
        ];
        for (refusal, status, code, param) in cases {
            let error = refusal.api_error();
            assert_eq!(refusal.status().as_u16(), status, "{refusal}");
            assert_eq!(error.code.as_deref(), Some(code), "{refusal}");
            assert_eq!(error.param.as_deref(), param, "{refusal}");
            assert_eq!(error.kind, "invalid_request_error", "{refusal}");
            assert!(!refusal.retry_soon(), "{refusal}");
        }
    }
}
