//! A Messages client's thread, kept by the Responses hub as a chain of
//! stored responses, whichever backend answers.
//!
//! The Messages layer above translates the turn (a create stores it; a
//! continue names the response its reply was stored as) and marks the
//! request with the [`ThreadTurn`]. Here, before the request is read, the
//! thread is checked against what this layer keeps: a store, for this
//! credential, and for a continue the response it follows, whose system
//! prompt and tools (the thread's) the turn is given. The history itself
//! is then resolved as for any `previous_response_id`.

use http::StatusCode;
use wirebridge_convert::messages_to_responses::{held_by_thread, ThreadTurn};
use wirebridge_wire::error::ApiError;

use crate::direction::sealed::Direction;
use crate::direction::{state, Tenant};
use crate::replies::Refused;
use crate::shared::Shared;
use crate::stateful::unavailable;

/// The request body to read for a turn of a thread: `None` to read the
/// body as it came (no thread, or a create), the body with the thread's
/// system prompt and tools for a continue; a refusal in the client's terms
/// when the thread cannot be kept or is not there.
pub(super) async fn held<D: Direction>(
    shared: &Shared<D>,
    parts: &http::request::Parts,
    tenant: &Tenant,
    body: &[u8],
) -> Result<Option<Vec<u8>>, Refused> {
    let Some(turn) = parts.extensions.get::<ThreadTurn>() else {
        return Ok(None);
    };
    let Some(store) = state::stateful::<D>(&shared.direction).and_then(|s| s.store()) else {
        return Err(unsupported(
            "this bridge keeps no responses (it runs without a response store), so it cannot \
             keep a message thread",
        ));
    };
    if !tenant.stores {
        return Err(unsupported(
            "a message thread needs a credential: requests without one keep nothing on this \
             bridge",
        ));
    }
    let ThreadTurn::Continue {
        previous_message_id,
        previous_response_id,
    } = turn
    else {
        return Ok(None);
    };
    let record = store
        .get(&tenant.key, previous_response_id)
        .await
        .map_err(|e| unavailable(&e))?;
    let Some(record) = record else {
        return Err(not_found(previous_message_id));
    };
    held_by_thread(body, &record.response)
        .map(Some)
        .map_err(Refused::from_convert)
}

/// A thread this layer cannot keep: a 400 the Anthropic SDKs read as
/// `thread_unsupported_request`, whose helper then sends the whole
/// conversation without `thread`.
fn unsupported(why: &str) -> Refused {
    Refused::new(
        StatusCode::BAD_REQUEST,
        ApiError {
            message: format!("thread: {why}; send the whole conversation without `thread`").into(),
            kind: "invalid_request_error".into(),
            param: Some("thread".into()),
            code: Some("thread_unsupported_request".into()),
        },
    )
}

/// No reply `id` of a thread this credential can continue: never kept,
/// expired, evicted, or another credential's (each tenant sees only its
/// own). A 404, `thread_not_found` in Anthropic's terms.
fn not_found(id: &str) -> Refused {
    Refused::new(
        StatusCode::NOT_FOUND,
        ApiError {
            message: format!(
                "thread.previous_message_id: no thread holds the message '{id}' for this                  credential (it was never kept, or has expired or been evicted); send the whole                  conversation again with thread {{\"type\": \"create\"}}"
            )
            .into(),
            kind: "invalid_request_error".into(),
            param: Some("thread.previous_message_id".into()),
            code: Some("thread_not_found".into()),
        },
    )
}
