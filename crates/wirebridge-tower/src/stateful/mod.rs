//! Stateful Responses over a [`ResponseStore`]: the conversation a request
//! continues, the responses kept once done, and the retrieval endpoints.
//!
//! Nothing here parses a request or a response: the translator hands over
//! the turn to keep ([`Turn`](wirebridge_convert::responses_to_chat::Turn))
//! and the finished response
//! ([`Finished`](wirebridge_convert::responses_to_chat::Finished)), and takes
//! the stored history as borrowed JSON
//! ([`History`](wirebridge_convert::responses_to_chat::History)).

mod abandoned;
mod accepted;
mod budget;
mod conversations;
mod keep;
mod probe;
mod referable;
mod resolve;
mod routes;
mod unkept;

use std::fmt;
use std::sync::Arc;

use wirebridge_convert::responses_to_chat::HistoryCache;
use wirebridge_store::{ConversationStore, MemoryStore, ResponseStore};

use crate::refusal::stored::ConversationsNotKept;
use crate::replies::Refused;

pub(crate) use abandoned::{settled, status_of, with_status};
pub(crate) use conversations::{route as conversation_route, Route as ConversationRoute};
pub(crate) use keep::with_output;
pub(crate) use probe::Checked;
pub(crate) use resolve::Resolved;
pub(crate) use routes::{route, Route as StoredRoute};
pub(crate) use unkept::{unstored_event, unstored_response};

/// Responses a WebSocket connection's cache keeps by default: more than a
/// 10,000-turn conversation (the cache keeps turns' items, not their
/// response objects).
#[cfg_attr(not(feature = "websocket"), allow(dead_code))]
pub(crate) const CONNECTION_CACHE_ENTRIES: usize = 16_384;

/// Bytes a WebSocket connection's cache keeps by default.
#[cfg_attr(not(feature = "websocket"), allow(dead_code))]
pub(crate) const CONNECTION_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// A WebSocket connection's cache, within these bounds.
#[cfg_attr(not(feature = "websocket"), allow(dead_code))]
pub(crate) fn connection_cache(entries: usize, bytes: usize) -> MemoryStore {
    MemoryStore::new().max_entries(entries).max_bytes(bytes)
}

/// What to do with a conversation whose stored chain misses an earlier
/// response (expired, evicted or deleted) when a request continues it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MissingHistory {
    /// Refuse the request: a 404 `previous_response_not_found` naming the
    /// missing response. Nothing is answered on a conversation the model
    /// would see cut short without knowing.
    #[default]
    Refuse,
    /// Answer from the turns still kept, and report the gap as a loss
    /// (`x-wirebridge-dropped: previous_response_id`, and the observer).
    Continue,
}

/// Where responses are kept and read from: the layer's store, and for a
/// WebSocket connection, the connection's own cache in front of it.
#[derive(Clone)]
pub(crate) struct Stateful {
    /// The layer's store; `None` on a connection whose requests may not
    /// use it (no credential).
    store: Option<Arc<dyn ResponseStore>>,
    /// A WebSocket connection's cache: every response of the connection,
    /// `store: false` ones too, read before the store.
    cache: Option<Arc<MemoryStore>>,
    /// The tenants the backend has answered: shared by the layer and its
    /// WebSocket connections.
    accepted: Arc<accepted::Accepted>,
    /// Stored turns in their Chat form, so that continuing a conversation
    /// translates only its new items: shared like `accepted`.
    translated: Arc<HistoryCache>,
    /// The most bytes of stored items one request may take in: its
    /// history and the items its references name, each time named. Set
    /// by the layer (from its settings) on every `Stateful` it makes.
    max_resolved: usize,
    /// Every credential counts as accepted: the deployment authenticates
    /// in front of the bridge, and nothing is asked of the backend before
    /// a write it does not answer.
    trust_credentials: bool,
}

impl fmt::Debug for Stateful {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stateful")
            .field("store", &self.store.is_some())
            .field("cache", &self.cache.is_some())
            .finish()
    }
}

impl Stateful {
    /// The layer's store, bounding nothing a request takes in until
    /// [`max_resolved`](Self::max_resolved) is set.
    pub(crate) fn new(store: Arc<dyn ResponseStore>) -> Self {
        Self {
            store: Some(store),
            cache: None,
            accepted: Arc::default(),
            translated: Arc::default(),
            max_resolved: usize::MAX,
            trust_credentials: false,
        }
    }

    /// A connection's cache in front of `store` (when its requests may use
    /// one); `layer` is the layer's, whose accepted tenants and bound it
    /// shares.
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    pub(crate) fn cached(
        layer: Option<&Stateful>,
        store: Option<Arc<dyn ResponseStore>>,
        cache: Arc<MemoryStore>,
    ) -> Self {
        Self {
            store,
            cache: Some(cache),
            accepted: layer.map(|l| Arc::clone(&l.accepted)).unwrap_or_default(),
            translated: layer.map(|l| Arc::clone(&l.translated)).unwrap_or_default(),
            max_resolved: layer.map_or(usize::MAX, |l| l.max_resolved),
            trust_credentials: layer.is_some_and(|l| l.trust_credentials),
        }
    }

    /// Keeps at most `bytes` of stored turns translated (0: none).
    pub(crate) fn translated_history(&mut self, bytes: usize) {
        self.translated = Arc::new(HistoryCache::new(bytes));
    }

    /// Refuses a request that would take in more than `bytes` of stored
    /// items (its history and the items its references name).
    pub(crate) fn max_resolved(&mut self, bytes: usize) {
        self.max_resolved = bytes;
    }

    /// Counts every credential as accepted (`true`): for deployments that
    /// authenticate in front of the bridge.
    pub(crate) fn trust_credentials(&mut self, trust: bool) {
        self.trust_credentials = trust;
    }

    /// The backend answered one of `tenant`'s requests: what is answered
    /// without it may now be kept in the store under that tenant.
    pub(crate) fn accept(&self, tenant: &str) {
        self.accepted.accept(tenant);
    }

    /// Whether the backend has answered one of `tenant`'s requests (or
    /// every credential is trusted).
    pub(crate) fn is_accepted(&self, tenant: &str) -> bool {
        self.trust_credentials || self.accepted.is_accepted(tenant)
    }

    /// The layer's store, if this has one.
    pub(crate) fn store(&self) -> Option<&Arc<dyn ResponseStore>> {
        self.store.as_ref()
    }

    /// Where the layer's store keeps conversations: a 400 that says why
    /// when it keeps none.
    pub(crate) fn conversations(&self) -> Result<&dyn ConversationStore, Refused> {
        self.store
            .as_deref()
            .and_then(|store| store.conversations())
            .ok_or_else(|| Refused::from(ConversationsNotKept))
    }

    /// Drops a response from the connection's cache (not from the store):
    /// a continuation of it failed, and the next must not build on it.
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    pub(crate) async fn forget_cached(&self, tenant: &str, id: &str) {
        if let Some(cache) = &self.cache {
            let _ = cache.delete(tenant, id).await;
        }
    }
}

#[cfg(all(test, feature = "websocket"))]
mod tests {
    use super::*;
    use keep::Record;
    use wirebridge_store::StoredResponse;

    /// A connection's cache, as a connection makes it by default.
    fn default_cache() -> MemoryStore {
        connection_cache(CONNECTION_CACHE_ENTRIES, CONNECTION_CACHE_BYTES)
    }

    /// A Codex-like turn: a user message in, an answer out (about 1 KB of
    /// items), and a response object echoing tools (18 KB).
    fn codex_turn(n: usize, parent: Option<String>) -> StoredResponse {
        let text = "lorem ipsum dolor sit amet ".repeat(16);
        StoredResponse {
            id: format!("resp_{n:032x}"),
            parent,
            created_at: 1_700_000_000,
            input: format!(
                r#"[{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{n}: {text}"}}]}}]"#
            ),
            output: format!(
                r#"[{{"type":"message","id":"msg_{n:032x}","role":"assistant","status":"completed","content":[{{"type":"output_text","text":"{text}","annotations":[]}}]}}]"#
            ),
            response: format!(r#"{{"tools":"{}","output":[]}}"#, "t".repeat(18 << 10)),
        }
    }

    /// A `store: false` conversation of 10,000 Codex-like turns on one
    /// connection: its cache, as a connection makes it by default, keeps
    /// every turn, and the last continues the whole conversation.
    #[tokio::test]
    async fn a_connection_cache_keeps_a_10_000_turn_conversation() {
        let stateful = Stateful::cached(None, None, Arc::new(default_cache()));
        let mut parent = None;
        for n in 0..10_000 {
            let record = codex_turn(n, parent.take());
            let id = record.id.clone();
            assert!(stateful.save_record("t", Record::new(record, false)).await);
            parent = Some(id);
        }
        let last = parent.unwrap();
        let resolved = stateful
            .resolve("t", Some(&last), &[], MissingHistory::Refuse)
            .await
            .unwrap_or_else(|_| panic!("the conversation of {last} was refused"));
        assert_eq!(resolved.missing(), None);
        let chain = resolved.chain().unwrap();
        assert_eq!(chain.turns.len(), 10_000);
        assert_eq!(*chain.turns[0].id, format!("resp_{:032x}", 0));
    }

    /// A connection continuing a conversation another one stored: the
    /// cache holds the new turns, the store the earlier ones, and the
    /// conversation is read whole from both.
    #[tokio::test]
    async fn a_cached_conversation_is_completed_from_the_store() {
        let store: Arc<dyn ResponseStore> = Arc::new(MemoryStore::new());
        let elsewhere = Stateful::new(Arc::clone(&store));
        let here = Stateful::cached(None, Some(store), Arc::new(default_cache()));
        let ids: Vec<String> = (0..4).map(|n| format!("resp_{n:032x}")).collect();
        for n in 0..4 {
            let record = codex_turn(n, n.checked_sub(1).map(|p| ids[p].clone()));
            // The first two stored by another connection, the others only
            // cached here.
            let (stateful, store) = if n < 2 {
                (&elsewhere, true)
            } else {
                (&here, false)
            };
            assert!(stateful.save_record("t", Record::new(record, store)).await);
        }
        let resolved = here
            .resolve("t", Some(&ids[3]), &[], MissingHistory::Refuse)
            .await
            .unwrap_or_else(|_| panic!("refused"));
        let chain = resolved.chain().unwrap();
        assert!(chain.is_complete());
        let chained: Vec<&str> = chain.ids.iter().map(|id| &**id).collect();
        assert_eq!(chained, ids);
        let turns: Vec<&str> = chain.turns.iter().map(|t| &*t.id).collect();
        assert_eq!(turns, ids);
        // What neither has is named missing.
        assert!(here.store().unwrap().delete("t", &ids[0]).await.unwrap());
        let resolved = here
            .resolve("t", Some(&ids[3]), &[], MissingHistory::Continue)
            .await
            .unwrap_or_else(|_| panic!("refused"));
        assert_eq!(resolved.missing(), Some(ids[0].as_str()));
        assert_eq!(resolved.chain().unwrap().turns.len(), 3);
    }
}
