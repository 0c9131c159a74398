//! The in-process store: bounded, expiring, and lost on restart.

mod table;

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::{BoxFuture, ResponseStore, StoreError, StoredResponse};
use table::{Inserted, Limits, Table};

/// Where a [`MemoryStore`] reads the time from.
type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// Keeps responses in this process's memory: the default store.
///
/// Bounded three ways, all configurable:
/// - at most [`max_entries`](Self::max_entries) records (default
///   [`DEFAULT_MAX_ENTRIES`](Self::DEFAULT_MAX_ENTRIES), 10,000);
/// - at most [`max_bytes`](Self::max_bytes) bytes, counted by
///   [`StoredResponse::size`] (default
///   [`DEFAULT_MAX_BYTES`](Self::DEFAULT_MAX_BYTES), 256 MiB);
/// - each record lives [`ttl`](Self::ttl) after it was saved (default
///   [`DEFAULT_TTL`](Self::DEFAULT_TTL), 30 days, as long as the Responses API
///   keeps a stored response).
///
/// When a save exceeds a bound, the oldest records are evicted first. An
/// expired record is invisible at once and its memory is reclaimed on the next
/// access (there is no background task). A record larger than `max_bytes` on
/// its own is not kept: its save fails with [`StoreError::NotKept`] and
/// evicts nothing. Saving an id again replaces the record and makes it the
/// newest.
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
/// let tenant = tenant_key(Some("Bearer sk-example"));
/// let first = StoredResponse {
///     id: "resp_1".into(),
///     parent: None,
///     created_at: 1_700_000_000,
///     input: r#"[{"role":"user","content":"Hi"}]"#.into(),
///     output: r#"[{"type":"message","role":"assistant","content":[]}]"#.into(),
///     response: r#"{"id":"resp_1","object":"response"}"#.into(),
/// };
/// let second = StoredResponse { id: "resp_2".into(), parent: Some("resp_1".into()), ..first.clone() };
/// store.save(&tenant, first).await?;
/// store.save(&tenant, second).await?;
///
/// let chain = store.chain(&tenant, "resp_2").await?.expect("saved");
/// assert_eq!(chain.records.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["resp_1", "resp_2"]);
/// assert!(chain.is_complete());
/// // Another credential sees nothing.
/// assert!(store.get(&tenant_key(Some("Bearer sk-other")), "resp_2").await?.is_none());
/// # Ok(())
/// # }
/// ```
pub struct MemoryStore {
    limits: Limits,
    clock: Clock,
    table: Mutex<Table>,
}

impl MemoryStore {
    /// The default bound on the number of records: 10,000.
    pub const DEFAULT_MAX_ENTRIES: usize = 10_000;
    /// The default bound on the bytes of all records: 256 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 256 << 20;
    /// The default time a record lives: 30 days.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 24 * 60 * 60);

    /// An empty store with the default bounds.
    pub fn new() -> Self {
        Self {
            limits: Limits {
                max_entries: Self::DEFAULT_MAX_ENTRIES,
                max_bytes: Self::DEFAULT_MAX_BYTES,
                ttl: Self::DEFAULT_TTL,
            },
            clock: Arc::new(Instant::now),
            table: Mutex::new(Table::default()),
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

    /// Forgets each record `ttl` after it was saved.
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

    /// Whether no live record is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes held by live records, as counted by [`StoredResponse::size`].
    pub fn bytes(&self) -> usize {
        let now = (self.clock)();
        self.lock().live(now).1
    }

    /// Why a record of `size` bytes exceeds the bounds on its own.
    fn too_large(&self, size: usize) -> String {
        if self.limits.max_entries == 0 {
            "the memory store keeps no records (max_entries is 0)".to_owned()
        } else {
            format!(
                "it is {size} bytes, more than the memory store's bound of {} bytes",
                self.limits.max_bytes
            )
        }
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
            let now = (self.clock)();
            let size = response.size();
            match self.lock().insert(tenant, response, now, self.limits) {
                Inserted::Kept { .. } => Ok(()),
                Inserted::TooLarge => Err(StoreError::NotKept(self.too_large(size))),
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
}
