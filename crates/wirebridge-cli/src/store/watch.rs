//! A response store whose availability is logged when it changes: once when
//! it stops answering, once when it answers again, rather than never or at
//! every request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use wirebridge_store::{
    BoxFuture, Chain, ConversationStore, ItemPage, ItemQuery, Lookup, ResponseStore, StoreError,
    StoredConversation, StoredItem, StoredResponse, StoredTurn,
};

/// Passes every call to the store it watches, and logs a change of
/// availability. Only [`StoreError::Unavailable`] makes it unavailable; any
/// answer, even a corrupt record, makes it available.
pub struct WatchedStore {
    inner: Arc<dyn ResponseStore>,
    /// The store as logs show it, without credentials.
    shown: String,
    available: AtomicBool,
}

impl WatchedStore {
    /// Watches `inner`, shown in logs as `shown`, taken as available or not
    /// at first (as a first check found it).
    pub fn new(inner: Arc<dyn ResponseStore>, shown: String, available: bool) -> Self {
        Self {
            inner,
            shown,
            available: AtomicBool::new(available),
        }
    }

    /// Notes what an operation found.
    fn observe<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        match &result {
            Err(StoreError::Unavailable { message: e, .. }) => {
                if self.available.swap(false, Ordering::Relaxed) {
                    tracing::warn!(
                        store = %self.shown,
                        error = %e,
                        "the response store is unavailable: requests that need it get a 503 until it answers"
                    );
                }
            }
            _ => {
                if !self.available.swap(true, Ordering::Relaxed) {
                    tracing::info!(store = %self.shown, "the response store answers again");
                }
            }
        }
        result
    }
}

impl ResponseStore for WatchedStore {
    fn save<'a>(
        &'a self,
        tenant: &'a str,
        response: StoredResponse,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { self.observe(self.inner.save(tenant, response).await) })
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredResponse>, StoreError>> {
        Box::pin(async move { self.observe(self.inner.get(tenant, id).await) })
    }

    fn hold_lease<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        ttl: std::time::Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { self.observe(self.inner.hold_lease(tenant, id, ttl).await) })
    }

    fn lease_held<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<bool>, StoreError>> {
        Box::pin(async move { self.observe(self.inner.lease_held(tenant, id).await) })
    }

    fn delete<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move { self.observe(self.inner.delete(tenant, id).await) })
    }

    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Chain>, StoreError>> {
        Box::pin(async move { self.observe(self.inner.chain(tenant, id).await) })
    }

    fn turns<'a>(
        &'a self,
        tenant: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Option<StoredTurn>>, StoreError>> {
        Box::pin(async move { self.observe(self.inner.turns(tenant, ids).await) })
    }

    fn keep_fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        fingerprint: String,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(
            async move { self.observe(self.inner.keep_fingerprint(tenant, id, fingerprint).await) },
        )
    }

    fn fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move { self.observe(self.inner.fingerprint(tenant, id).await) })
    }

    fn conversations(&self) -> Option<&dyn ConversationStore> {
        self.inner
            .conversations()
            .map(|_| self as &dyn ConversationStore)
    }
}

impl ConversationStore for WatchedStore {
    fn create_conversation<'a>(
        &'a self,
        tenant: &'a str,
        conversation: StoredConversation,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.observe(
                async {
                    inner(&*self.inner)?
                        .create_conversation(tenant, conversation, items)
                        .await
                }
                .await,
            )
        })
    }

    fn conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>> {
        Box::pin(async move {
            self.observe(async { inner(&*self.inner)?.conversation(tenant, id).await }.await)
        })
    }

    fn update_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        metadata: String,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>> {
        Box::pin(async move {
            self.observe(
                async {
                    inner(&*self.inner)?
                        .update_conversation(tenant, id, metadata)
                        .await
                }
                .await,
            )
        })
    }

    fn delete_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            self.observe(async { inner(&*self.inner)?.delete_conversation(tenant, id).await }.await)
        })
    }

    fn append_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            self.observe(async { inner(&*self.inner)?.append_items(tenant, id, items).await }.await)
        })
    }

    fn list_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        query: &'a ItemQuery,
    ) -> BoxFuture<'a, Result<Lookup<ItemPage>, StoreError>> {
        Box::pin(async move {
            self.observe(async { inner(&*self.inner)?.list_items(tenant, id, query).await }.await)
        })
    }

    fn item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredItem>, StoreError>> {
        Box::pin(async move {
            self.observe(async { inner(&*self.inner)?.item(tenant, id, item_id).await }.await)
        })
    }

    fn delete_item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredConversation>, StoreError>> {
        Box::pin(async move {
            self.observe(
                async { inner(&*self.inner)?.delete_item(tenant, id, item_id).await }.await,
            )
        })
    }
}

/// The conversations of the wrapped store: it offers them, or this store
/// would not (see `conversations`).
fn inner(store: &dyn ResponseStore) -> Result<&dyn ConversationStore, StoreError> {
    store
        .conversations()
        .ok_or_else(|| StoreError::NotKept("the store keeps no conversations".to_owned()))
}
