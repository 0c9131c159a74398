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

use wirebridge_convert::messages_to_responses::{held_by_thread, ThreadTurn};
use wirebridge_convert::responses_to_chat::Turn;

use crate::direction::sealed::Direction;
use crate::direction::{state, Tenant};
use crate::refusal::stored::StoreUnavailable;
use crate::refusal::thread::{ThreadNotFound, ThreadUnsupported};
use crate::replies::Refused;
use crate::shared::Shared;

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
        return Err(Refused::from(ThreadUnsupported {
            why: "this bridge keeps no responses (it runs without a response store), so it cannot \
                  keep a message thread",
        }));
    };
    if !tenant.stores {
        return Err(Refused::from(ThreadUnsupported {
            why: "a message thread needs a credential: requests without one keep nothing on this \
                  bridge",
        }));
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
        .map_err(|e| Refused::from(StoreUnavailable(e)))?;
    let Some(record) = record else {
        return Err(ThreadNotFound {
            id: previous_message_id.clone(),
        }
        .into());
    };
    held_by_thread(body, &record.response)
        .map(Some)
        .map_err(Refused::from_convert)
}

/// A compaction of a Messages client's thread, to be kept as the turn
/// `turn`: the thread starts again from it. Anthropic's compaction block
/// stands for every message before it (the client's own included, where
/// the Responses compaction item keeps those), so the turn is kept as a
/// new root of the chain, with no input of its own: a continue from its
/// reply is sent the summary, the turns after it, and nothing before.
pub(super) fn restart_at_compaction(parts: &http::request::Parts, turn: &mut Turn) {
    if parts.extensions.get::<ThreadTurn>().is_some() {
        turn.previous_response_id = None;
        turn.input = "[]".into();
    }
}
