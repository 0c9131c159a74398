//! The stored state a request continues, resolved once for every exchange
//! that reads it: a plain turn and a turn that compacts alike.
//!
//! A request continues the response its `previous_response_id` names, or
//! the conversation its `conversation` names, and may refer to stored
//! items by id. What the store holds for each is read here, under the same
//! rules whatever the exchange does next: a tenant that may keep nothing
//! is refused naming the field, a conversation that is not there is a 404,
//! and a chain that misses a turn is refused or reported as the layer's
//! [`MissingHistory`] says.

use wirebridge_convert::{Loss, LossKind, LossReport};

use crate::direction::sealed::{ClientRequest, ReplyContext};
use crate::direction::{Continues, Tenant};
use crate::refusal::stored::NeedsCredentials;
use crate::replies::Refused;
use crate::stateful::{MissingHistory, Resolved, Stateful};

/// What `stateful` holds for `request` of `tenant`: the response or the
/// conversation it continues, and the items it refers to.
pub(crate) async fn resolve<'a, R: ClientRequest<'a>>(
    stateful: &Stateful,
    request: &R,
    tenant: &Tenant,
    policy: MissingHistory,
) -> Result<Resolved, Refused> {
    let continues = request.continues().map_err(Refused::from_convert)?;
    let (previous, conversation) = match &continues {
        Continues::Nothing => (None, None),
        Continues::Response(previous) => (Some(*previous), None),
        Continues::Conversation(id) => (None, Some(id.as_ref())),
    };
    let references = request.item_references();
    if !tenant.stores {
        if previous.is_some() {
            return Err(Refused::from(NeedsCredentials {
                param: "previous_response_id",
            }));
        }
        if conversation.is_some() {
            return Err(Refused::from(NeedsCredentials {
                param: "conversation",
            }));
        }
        if !references.is_empty() {
            return Err(Refused::from(NeedsCredentials { param: "input" }));
        }
    }
    let mut stored = stateful
        .resolve(&tenant.key, previous, &references, policy)
        .await?;
    if let Some(id) = conversation {
        let items = stateful.conversation_items(&tenant.key, id).await?;
        stored.join_conversation(id.to_owned(), items);
    }
    Ok(stored)
}

/// What the stored state means for a translated request: the gap a chain
/// misses is reported, and a tenant that may keep nothing has its turn
/// dropped, the reply saying it was not stored.
pub(crate) fn settle<T, C: ReplyContext>(
    stored: &Resolved,
    tenant: &Tenant,
    turn: &mut Option<T>,
    context: &mut C,
    losses: &mut LossReport,
) {
    if let Some(missing) = stored.missing() {
        losses.push(Loss {
            kind: LossKind::StatefulFeature,
            path: "previous_response_id".into(),
            reason: format!(
                "the conversation misses the earlier response '{missing}' (expired, evicted \
                 or deleted); answered from the turns still kept"
            ),
        });
    }
    if !tenant.stores && turn.take().is_some() {
        context.not_stored();
    }
}
