//! The in-process store: bounded, expiring, and lost on restart.

mod conversations;
mod fingerprints;
mod items;
mod table;

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::conversation::{
    ConversationStore, ItemPage, ItemQuery, Lookup, StoredConversation, StoredItem,
};
use crate::{BoxFuture, Chain, ResponseStore, StoreError, StoredResponse, StoredTurn};
use conversations::Conversations;
use fingerprints::{Bounds, Fingerprints};
use table::{Inserted, Limits, Table};

/// Where a [`MemoryStore`] reads the time from.
type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// Keeps responses in this process's memory: the default store.
///
/// Bounded, all configurable:
/// - at most [`max_entries`](Self::max_entries) records (default
///   [`DEFAULT_MAX_ENTRIES`](Self::DEFAULT_MAX_ENTRIES), 100,000);
/// - at most [`max_bytes`](Self::max_bytes) bytes, counted by
///   [`StoredResponse::size`] (default
///   [`DEFAULT_MAX_BYTES`](Self::DEFAULT_MAX_BYTES), 256 MiB);
/// - per tenant, at most
///   [`max_entries_per_tenant`](Self::max_entries_per_tenant) records
///   (default [`DEFAULT_MAX_ENTRIES_PER_TENANT`](Self::DEFAULT_MAX_ENTRIES_PER_TENANT),
///   25,000) and [`max_bytes_per_tenant`](Self::max_bytes_per_tenant) bytes
///   (default [`DEFAULT_MAX_BYTES_PER_TENANT`](Self::DEFAULT_MAX_BYTES_PER_TENANT),
///   64 MiB): a quarter of the default bounds, so one credential cannot fill
///   the store alone;
/// - at most [`max_tenants`](Self::max_tenants) tenants holding records
///   (default [`DEFAULT_MAX_TENANTS`](Self::DEFAULT_MAX_TENANTS), 1,000);
/// - each conversation lives [`ttl`](Self::ttl) after its latest save
///   (default [`DEFAULT_TTL`](Self::DEFAULT_TTL), 30 days, as long as the
///   Responses API keeps a stored response).
///
/// A response is kept with its own items and the id of its parent, in its
/// parent's conversation: the conversation keeps its responses in the order
/// they were saved, each pointing at its parent's place, so saving a turn
/// costs the same at any depth and a chain is read by following the
/// pointers back. Saving a response renews its whole conversation (every
/// branch of it): a conversation expires, and is evicted last, as a whole.
///
/// Eviction never takes the record being saved, nor a record of a tenant
/// that is not over its share:
/// - a save that takes its tenant over its quota evicts that tenant's
///   oldest records, never another tenant's;
/// - a new tenant beyond `max_tenants` evicts the tenant that saved least
///   recently, all its records at once (a new credential is never refused
///   for it);
/// - a save that takes the store over a global bound evicts the oldest
///   records of the tenant holding the most (bytes or records, whichever is
///   over): a tenant over its fair share of the bound (the bound divided
///   by the tenants holding records), since the store as a whole is over.
///   Tenants that each keep to their quota can therefore fill the store
///   without evicting a tenant that holds less than they do.
///
/// A tenant's oldest records are the first saved of its least recently
/// saved conversation. An expired conversation is invisible at once and its
/// memory is reclaimed on the next access (there is no background task). A
/// record larger than `max_bytes` or `max_bytes_per_tenant` on its own is
/// not kept: its save fails with [`StoreError::NotKept`] and changes
/// nothing. Saving an id again replaces the record.
///
/// Records are lost when the process exits, and each process has its own:
/// several bridge replicas behind a load balancer need a shared store such as
/// `RedisStore` instead.
///
/// ```
/// use std::time::Duration;
/// use wirebridge_store::{tenant_key, MemoryStore, ResponseStore, StoredResponse};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), wirebridge_store::StoreError> {
/// let store = MemoryStore::new().max_entries(1_000).max_bytes(64 << 20).ttl(Duration::from_secs(3600));
/// let tenant = tenant_key(Some(b"Bearer sk-example"));
/// let first = StoredResponse {
///     id: "resp_1".into(),
///     parent: None,
///     created_at: 1_700_000_000,
///     input: r#"[{"role":"user","content":"Hi"}]"#.into(),
///     output: r#"[{"type":"message","role":"assistant","content":[]}]"#.into(),
///     response: r#"{"id":"resp_1","object":"response"}"#.into(),
/// };
/// let second = StoredResponse {
///     id: "resp_2".into(),
///     parent: Some("resp_1".into()),
///     ..first.clone()
/// };
/// store.save(&tenant, first).await?;
/// store.save(&tenant, second).await?;
///
/// let chain = store.chain(&tenant, "resp_2").await?.expect("saved");
/// assert_eq!(chain.turns.iter().map(|t| &*t.id).collect::<Vec<_>>(), ["resp_1", "resp_2"]);
/// assert!(chain.is_complete());
/// // Another credential sees nothing.
/// assert!(store.get(&tenant_key(Some(b"Bearer sk-other")), "resp_2").await?.is_none());
/// # Ok(())
/// # }
/// ```
pub struct MemoryStore {
    limits: Limits,
    clock: Clock,
    table: Mutex<Table>,
    conversations: Mutex<Conversations>,
    fingerprints: Mutex<Fingerprints>,
}

impl MemoryStore {
    /// The default bound on the number of records: 100,000.
    pub const DEFAULT_MAX_ENTRIES: usize = 100_000;
    /// The default bound on the bytes of all records: 256 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 256 << 20;
    /// The default bound on one tenant's records: 25,000, a quarter of
    /// [`DEFAULT_MAX_ENTRIES`](Self::DEFAULT_MAX_ENTRIES).
    pub const DEFAULT_MAX_ENTRIES_PER_TENANT: usize = Self::DEFAULT_MAX_ENTRIES / 4;
    /// The default bound on the bytes of one tenant's records: 64 MiB, a
    /// quarter of [`DEFAULT_MAX_BYTES`](Self::DEFAULT_MAX_BYTES).
    pub const DEFAULT_MAX_BYTES_PER_TENANT: usize = Self::DEFAULT_MAX_BYTES / 4;
    /// The default bound on the number of tenants holding records: 1,000.
    pub const DEFAULT_MAX_TENANTS: usize = 1_000;
    /// The default time a conversation lives after its latest save: 30 days.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 24 * 60 * 60);

    /// An empty store with the default bounds.
    pub fn new() -> Self {
        Self {
            limits: Limits {
                max_entries: Self::DEFAULT_MAX_ENTRIES,
                max_bytes: Self::DEFAULT_MAX_BYTES,
                max_entries_per_tenant: Self::DEFAULT_MAX_ENTRIES_PER_TENANT,
                max_bytes_per_tenant: Self::DEFAULT_MAX_BYTES_PER_TENANT,
                max_tenants: Self::DEFAULT_MAX_TENANTS,
                ttl: Self::DEFAULT_TTL,
            },
            clock: Arc::new(Instant::now),
            table: Mutex::new(Table::default()),
            conversations: Mutex::new(Conversations::default()),
            fingerprints: Mutex::new(Fingerprints::default()),
        }
    }

    /// Keeps at most `n` records (0 keeps none).
    pub fn max_entries(mut self, n: usize) -> Self {
        self.limits.max_entries = n;
        self
    }

    /// Keeps at most `n` bytes of records, as counted by
    /// [`StoredResponse::size`].
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.limits.max_bytes = n;
        self
    }

    /// Keeps at most `n` records per tenant (0 keeps none): beyond it, the
    /// tenant's own oldest records are evicted. The default does not follow
    /// [`max_entries`](Self::max_entries); a quota at or above the global
    /// bound leaves only the global bound.
    pub fn max_entries_per_tenant(mut self, n: usize) -> Self {
        self.limits.max_entries_per_tenant = n;
        self
    }

    /// Keeps at most `n` bytes of records per tenant, as counted by
    /// [`StoredResponse::size`]: beyond it, the tenant's own oldest records
    /// are evicted, and a larger record alone is not kept. The default does
    /// not follow [`max_bytes`](Self::max_bytes); a quota at or above the
    /// global bound leaves only the global bound.
    pub fn max_bytes_per_tenant(mut self, n: usize) -> Self {
        self.limits.max_bytes_per_tenant = n;
        self
    }

    /// Keeps the records of at most `n` tenants (0 keeps none): a new
    /// tenant beyond it evicts the tenant that saved least recently, with
    /// all its records.
    pub fn max_tenants(mut self, n: usize) -> Self {
        self.limits.max_tenants = n;
        self
    }

    /// Forgets each conversation `ttl` after its latest save.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.limits.ttl = ttl;
        self
    }

    /// Reads the time from `now` instead of [`Instant::now`], so a test can
    /// move time forward.
    pub fn clock(mut self, now: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(now);
        self
    }

    /// The number of live (unexpired) records, over all tenants.
    pub fn len(&self) -> usize {
        let now = (self.clock)();
        self.lock().live(now).0
    }

    /// The number of tenants holding live records.
    pub fn tenants(&self) -> usize {
        let now = (self.clock)();
        let mut table = self.lock();
        table.live(now);
        table.tenants()
    }

    /// Whether no live record is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes held by live records, as counted by [`StoredResponse::size`].
    pub fn bytes(&self) -> usize {
        let now = (self.clock)();
        self.lock().live(now).1
    }

    /// The number of live conversations, over all tenants.
    pub fn conversation_count(&self) -> usize {
        let now = (self.clock)();
        self.conversations().live_totals(now).0
    }

    /// The bytes held by live conversations, as counted by their metadata
    /// and items.
    pub fn conversation_bytes(&self) -> usize {
        let now = (self.clock)();
        self.conversations().live_totals(now).1
    }

    /// The conversations, even if a thread panicked while holding them, as
    /// for [`lock`](Self::lock).
    fn conversations(&self) -> MutexGuard<'_, Conversations> {
        self.conversations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The prompt cache fingerprints, even if a thread panicked while
    /// holding them, as for [`lock`](Self::lock).
    fn fingerprints(&self) -> MutexGuard<'_, Fingerprints> {
        self.fingerprints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Evicts one record, as a save past [`max_bytes`](Self::max_bytes)
    /// would: the oldest of the tenant holding the most bytes. Whether there
    /// was one: for an owner that bounds the store's memory by a budget the
    /// store does not know of, and frees room before asking for more.
    ///
    /// ```
    /// use wirebridge_store::{MemoryStore, ResponseStore, StoredResponse};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), wirebridge_store::StoreError> {
    /// let store = MemoryStore::new();
    /// let record = |id: &str| StoredResponse {
    ///     id: id.into(),
    ///     parent: None,
    ///     created_at: 0,
    ///     input: "[]".into(),
    ///     output: "[]".into(),
    ///     response: String::new(),
    /// };
    /// store.save("t", record("resp_old")).await?;
    /// store.save("t", record("resp_new")).await?;
    /// assert!(store.evict_oldest());
    /// assert!(store.get("t", "resp_old").await?.is_none());
    /// assert!(store.get("t", "resp_new").await?.is_some());
    /// assert!(store.evict_oldest());
    /// assert!(!store.evict_oldest(), "nothing is left");
    /// # Ok(())
    /// # }
    /// ```
    pub fn evict_oldest(&self) -> bool {
        let now = (self.clock)();
        let mut table = self.lock();
        table.live(now);
        table.evict_one()
    }

    /// How many prompt cache fingerprints are kept.
    pub fn fingerprint_count(&self) -> usize {
        self.fingerprints().len()
    }

    /// The table, even if a thread panicked while holding it: every table
    /// operation leaves it consistent between statements that can panic.
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore")
            .field("max_entries", &self.limits.max_entries)
            .field("max_bytes", &self.limits.max_bytes)
            .field(
                "max_entries_per_tenant",
                &self.limits.max_entries_per_tenant,
            )
            .field("max_bytes_per_tenant", &self.limits.max_bytes_per_tenant)
            .field("max_tenants", &self.limits.max_tenants)
            .field("ttl", &self.limits.ttl)
            .finish_non_exhaustive()
    }
}

impl ResponseStore for MemoryStore {
    fn save<'a>(
        &'a self,
        tenant: &'a str,
        response: StoredResponse,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            response.check()?;
            let now = (self.clock)();
            match self.lock().insert(tenant, response, now, self.limits) {
                Inserted::Kept { .. } => Ok(()),
                Inserted::TooLarge(why) => Err(StoreError::NotKept(why)),
            }
        })
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredResponse>, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            Ok(self.lock().get(tenant, id, now))
        })
    }

    fn delete<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            Ok(self.lock().delete(tenant, id, now))
        })
    }

    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Chain>, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            Ok(self.lock().chain(tenant, id, now))
        })
    }

    fn turns<'a>(
        &'a self,
        tenant: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Option<StoredTurn>>, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            let table = self.lock();
            Ok(ids.iter().map(|id| table.turn(tenant, id, now)).collect())
        })
    }

    fn keep_fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        fingerprint: String,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            // Bounded as the records are, counted apart from them: a
            // fingerprint is a few dozen bytes a conversation entry.
            let bounds = Bounds {
                entries: self.limits.max_entries,
                bytes: self.limits.max_bytes,
            };
            match self
                .fingerprints()
                .keep(tenant, id, fingerprint, now, bounds)
            {
                true => Ok(()),
                false => Err(StoreError::NotKept(format!(
                    "the prompt cache fingerprint of {id} is larger than the store's bounds"
                ))),
            }
        })
    }

    fn fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            Ok(self.fingerprints().get(tenant, id, now, self.limits.ttl))
        })
    }

    fn conversations(&self) -> Option<&dyn ConversationStore> {
        Some(self)
    }
}

impl ConversationStore for MemoryStore {
    fn create_conversation<'a>(
        &'a self,
        tenant: &'a str,
        conversation: StoredConversation,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            self.conversations()
                .create(tenant, conversation, items, now, self.limits)
                .map_err(StoreError::NotKept)
        })
    }

    fn conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            Ok(self.conversations().get(tenant, id, now))
        })
    }

    fn update_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        metadata: String,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            self.conversations()
                .update(tenant, id, metadata, now, self.limits)
                .map_err(StoreError::NotKept)
        })
    }

    fn delete_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            let mut conversations = self.conversations();
            let live = conversations.get(tenant, id, now).is_some();
            Ok(conversations.remove(tenant, id) && live)
        })
    }

    fn append_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            self.conversations()
                .append(tenant, id, items, now, self.limits)
                .map_err(StoreError::NotKept)
        })
    }

    fn list_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        query: &'a ItemQuery,
    ) -> BoxFuture<'a, Result<Lookup<ItemPage>, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            Ok(self.conversations().list(tenant, id, query, now))
        })
    }

    fn item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredItem>, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            Ok(self.conversations().item(tenant, id, item_id, now))
        })
    }

    fn delete_item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredConversation>, StoreError>> {
        Box::pin(async move {
            let now = (self.clock)();
            Ok(self
                .conversations()
                .delete_item(tenant, id, item_id, now, self.limits))
        })
    }
}
