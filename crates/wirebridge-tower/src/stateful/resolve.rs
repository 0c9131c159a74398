//! What the store holds for one request: the conversation it continues and
//! the items it refers to by id, read from the connection's cache first.

use serde_json::value::RawValue;
use std::collections::HashSet;
use std::sync::Arc;
use wirebridge_convert::ids::ResponseIds;

use wirebridge_convert::responses_to_chat::{History, HistoryCache, SharedTurn};
use wirebridge_store::{Chain, ItemQuery, Lookup, ResponseStore, StoreError, StoredTurn};

use super::budget::ResolvedBudget;
use super::keep::RUNNING;
use super::referable::{ItemAt, ReferableIndex};
use super::{MissingHistory, Stateful};
use crate::refusal::stored::{
    ConversationNotFound, PreviousResponseInProgress, PreviousResponseNotFound, StoreUnavailable,
};

use crate::replies::Refused;

/// What the store holds for one request: the conversation it continues
/// and the turns holding the items it refers to by id.
#[derive(Default)]
pub(crate) struct Resolved {
    /// The response continued, and its conversation.
    continued: Option<(String, Chain)>,
    /// The stored turns the request's `item_reference` items may name, when
    /// it has any.
    referable: Option<Vec<StoredTurn>>,
    /// The conversation the request is part of: its id, and its items as
    /// one JSON array, oldest first.
    conversation: Option<(String, String)>,
    /// Where the continued conversation's turns are kept translated, and
    /// the tenant they are kept for.
    translated: Option<(Arc<HistoryCache>, String)>,
    /// Where the items the references name are among the conversation's
    /// turns and `referable` (in that order), each item once.
    referenced: Vec<ItemAt>,
    /// What the store added to the request, within the bound.
    budget: ResolvedBudget,
}

impl Resolved {
    /// The conversation as the translator reads it: each turn's input
    /// items, then its output items, borrowed as stored; and the items
    /// references may name.
    pub(crate) fn history(&self) -> Result<History<'_>, Refused> {
        self.budget.check()?;
        let mut history = match (&self.continued, &self.conversation) {
            (_, Some((id, items))) => History::in_conversation(id, items),
            (Some((id, chain)), None) => {
                let history = History::new(id, chain.turns.iter().flat_map(turn_arrays));
                match &self.translated {
                    Some((cache, tenant)) => {
                        let turns = chain.turns.iter().map(|turn| SharedTurn {
                            id: &turn.id,
                            input: &turn.input,
                            output: &turn.output,
                        });
                        history.with_shared_cache(cache, tenant, turns)
                    }
                    None => history,
                }
            }
            (None, None) => History::default(),
        };
        if let Some(referable) = &self.referable {
            let turns: Vec<&StoredTurn> = self.chain_turns().chain(referable).collect();
            let items = self
                .referenced
                .iter()
                .map(|at| at.item(&turns))
                .collect::<Result<Vec<&RawValue>, Refused>>()?;
            history = history.with_referable_items(items);
        }
        Ok(history)
    }

    /// Makes the request part of conversation `id`, whose items (one JSON
    /// array) come before its input. Past the bound on what the store adds
    /// to a request (with the items its references name), the
    /// [`history`](Self::history) is a 400 naming `conversation`.
    pub(crate) fn join_conversation(&mut self, id: String, items: String) {
        // Kept by the budget, which refuses the history.
        let _ = self.budget.add(items.len(), "conversation");
        self.conversation = Some((id, items));
    }

    /// The earlier response the conversation misses, when continued
    /// without it.
    pub(crate) fn missing(&self) -> Option<&str> {
        self.continued.as_ref()?.1.missing.as_deref()
    }

    /// The conversation continued, if any.
    #[cfg(all(test, feature = "websocket"))]
    pub(crate) fn chain(&self) -> Option<&Chain> {
        self.continued.as_ref().map(|(_, chain)| chain)
    }

    fn chain_turns(&self) -> impl Iterator<Item = &StoredTurn> {
        self.continued.iter().flat_map(|(_, chain)| &chain.turns)
    }

    /// Finds the items `references` name among the conversation's turns
    /// and `referable`, through an index of them built once, and counts
    /// each reference's item against the budget (a 400 naming `input`
    /// past it) before anything is built from them.
    fn refer(&mut self, references: &[&str], referable: &[StoredTurn]) -> Result<(), Refused> {
        let index = ReferableIndex::new(self.chain_turns().chain(referable))?;
        let mut named: HashSet<ItemAt> = HashSet::new();
        for id in references {
            // A reference that names nothing is the translation's to
            // refuse, naming it.
            let Some(at) = index.get(id) else { continue };
            self.budget.add(at.len(), "input")?;
            named.insert(at);
        }
        self.referenced = named.into_iter().collect();
        Ok(())
    }
}

/// A turn's bytes of items, input and output.
fn turn_len(turn: &StoredTurn) -> usize {
    turn.input.len() + turn.output.len()
}

/// A turn's input items, then its output items.
fn turn_arrays(turn: &StoredTurn) -> [&str; 2] {
    [&turn.input, &turn.output]
}

impl Stateful {
    /// What is kept for a request continuing `previous` (if any) and
    /// referring to the items `references`: one store round trip for each
    /// that is asked for (and one more on a WebSocket connection whose cache
    /// holds only part of a conversation).
    pub(crate) async fn resolve(
        &self,
        tenant: &str,
        previous: Option<&str>,
        references: &[&str],
        policy: MissingHistory,
    ) -> Result<Resolved, Refused> {
        let mut resolved = Resolved {
            budget: ResolvedBudget::new(self.max_resolved),
            ..Resolved::default()
        };
        if let Some(id) = previous {
            let chain = self.conversation(tenant, id, policy).await?;
            let bytes = chain.turns.iter().map(turn_len).sum();
            resolved.budget.add(bytes, "previous_response_id")?;
            resolved.continued = Some((id.to_owned(), chain));
            resolved.translated = Some((Arc::clone(&self.translated), tenant.to_owned()));
        }
        if !references.is_empty() {
            // Each response read once, and none the conversation holds:
            // looked up in sets, so that many references cost their count.
            let in_chain: HashSet<&str> = resolved.chain_turns().map(|t| &*t.id).collect();
            let mut asked: HashSet<String> = HashSet::new();
            let mut responses: Vec<String> = Vec::new();
            for response in references
                .iter()
                .filter_map(|r| ResponseIds::response_of(r))
            {
                if !in_chain.contains(response.as_str()) && asked.insert(response.clone()) {
                    responses.push(response);
                }
            }
            let turns = self
                .turns(tenant, &responses)
                .await
                .map_err(|e| Refused::from(StoreUnavailable(e)))?;
            let referable: Vec<StoredTurn> = turns.into_iter().flatten().collect();
            resolved.refer(references, &referable)?;
            resolved.referable = Some(referable);
        }
        Ok(resolved)
    }

    /// The items of conversation `id`, as one JSON array, oldest first: read
    /// in one round trip. A 404 naming `conversation` if the tenant has no
    /// such conversation, a 400 if the store keeps none.
    pub(crate) async fn conversation_items(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<String, Refused> {
        let store = self.conversations()?;
        match store.list_items(tenant, id, &ItemQuery::all()).await {
            Ok(Lookup::Found(page)) => {
                let len = page.items.iter().map(|i| i.item.len() + 1).sum::<usize>();
                // Measured before the array is built: what a request may
                // take in from the store is bounded.
                ResolvedBudget::new(self.max_resolved).add(len, "conversation")?;
                let mut items = String::with_capacity(len + 2);
                items.push('[');
                for (n, item) in page.items.iter().enumerate() {
                    if n > 0 {
                        items.push(',');
                    }
                    items.push_str(&item.item);
                }
                items.push(']');
                Ok(items)
            }
            Ok(Lookup::NoConversation | Lookup::NoItem) => {
                Err(Refused::from(ConversationNotFound {
                    id: id.to_string(),
                    param: Some("conversation"),
                }))
            }
            Err(e) => Err(Refused::from(StoreUnavailable(e))),
        }
    }

    /// Marks response `id` `failed` when it reads as running but no process
    /// holds its run's lease (see [`super::settled`]); whether
    /// it did.
    async fn settle_abandoned(&self, tenant: &str, id: &str) -> bool {
        let Some(store) = self.store() else {
            return false;
        };
        let Ok(Some(record)) = store.get(tenant, id).await else {
            return false;
        };
        let settled = super::settled(self, &**store, tenant, record).await;
        settled.output != RUNNING
    }

    /// The conversation ending with response `id`: a 404 in the client's
    /// API if the tenant has no such response or no longer has one of its
    /// ancestors (continuing without it would silently drop turns), a 503 if
    /// the store cannot be reached.
    async fn conversation(
        &self,
        tenant: &str,
        id: &str,
        policy: MissingHistory,
    ) -> Result<Chain, Refused> {
        let mut chain = self.chain(tenant, id).await;
        if let Ok(Some(running)) = &chain {
            if running.turns.last().is_some_and(|t| &*t.output == RUNNING)
                && self.settle_abandoned(tenant, id).await
            {
                chain = self.chain(tenant, id).await;
            }
        }
        match chain {
            Ok(Some(Chain {
                missing: Some(missing),
                ..
            })) if policy == MissingHistory::Refuse => Err(PreviousResponseNotFound::Broken {
                id: id.to_owned(),
                missing: missing.to_string(),
            }
            .into()),
            Ok(Some(chain)) if chain.turns.last().is_some_and(|t| &*t.output == RUNNING) => {
                Err(PreviousResponseInProgress { id: id.to_owned() }.into())
            }
            Ok(Some(chain)) => Ok(chain),
            Ok(None) => Err(PreviousResponseNotFound::Missing { id: id.to_owned() }.into()),
            Err(e) => Err(Refused::from(StoreUnavailable(e))),
        }
    }

    /// The conversation ending at `id`: from the connection's cache if it
    /// has the response (completed from the store where the cache lacks an
    /// earlier turn, one continued from another connection: the store's
    /// chain of the turn the cache lacks, in one more round trip), else from
    /// the store.
    async fn chain(&self, tenant: &str, id: &str) -> Result<Option<Chain>, StoreError> {
        if let Some(cache) = &self.cache {
            if let Some(chain) = cache.chain(tenant, id).await? {
                let earlier = match (&self.store, &chain.missing) {
                    (Some(store), Some(missing)) => store.chain(tenant, missing).await?,
                    _ => None,
                };
                return Ok(Some(match earlier {
                    Some(earlier) => chain.after(earlier),
                    None => chain,
                }));
            }
        }
        match &self.store {
            Some(store) => store.chain(tenant, id).await,
            None => Ok(None),
        }
    }

    /// The turns of the responses `ids`, from the cache where it has them,
    /// else from the store.
    async fn turns(
        &self,
        tenant: &str,
        ids: &[String],
    ) -> Result<Vec<Option<StoredTurn>>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut found = match &self.cache {
            Some(cache) => cache.turns(tenant, ids).await?,
            None => vec![None; ids.len()],
        };
        if let Some(store) = &self.store {
            fill(store.as_ref(), tenant, ids, &mut found).await?;
        }
        Ok(found)
    }
}

/// Reads from the store the turns of `ids` that `found` lacks.
async fn fill(
    store: &dyn ResponseStore,
    tenant: &str,
    ids: &[String],
    found: &mut [Option<StoredTurn>],
) -> Result<(), StoreError> {
    let lacking: Vec<String> = ids
        .iter()
        .zip(found.iter())
        .filter(|(_, turn)| turn.is_none())
        .map(|(id, _)| id.clone())
        .collect();
    if lacking.is_empty() {
        return Ok(());
    }
    let mut stored = store.turns(tenant, &lacking).await?.into_iter();
    for slot in found.iter_mut().filter(|turn| turn.is_none()) {
        *slot = stored.next().flatten();
    }
    Ok(())
}
