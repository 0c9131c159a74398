//! A response store whose operations are counted and timed.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use wirebridge_store::{
    BoxFuture, Chain, ConversationStore, ItemPage, ItemQuery, Lookup, ResponseStore, StoreError,
    StoredConversation, StoredItem, StoredResponse, StoredTurn,
};

use super::Metrics;

/// Passes every call to the store it wraps, and records it in
/// `wirebridge_store_operations_total` and
/// `wirebridge_store_operation_duration_seconds`.
pub struct MeteredStore {
    inner: Arc<dyn ResponseStore>,
    metrics: Arc<Metrics>,
}

impl MeteredStore {
    /// Meters `inner`.
    pub fn new(inner: Arc<dyn ResponseStore>, metrics: Arc<Metrics>) -> Self {
        Self { inner, metrics }
    }

    async fn timed<T>(
        &self,
        operation: &'static str,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let started = Instant::now();
        let result = call.await;
        let outcome = match &result {
            Ok(_) => "ok",
            Err(StoreError::Unavailable { .. }) => "unavailable",
            Err(_) => "error",
        };
        self.metrics
            .store_operation(operation, outcome, started.elapsed());
        result
    }
}

impl ResponseStore for MeteredStore {
    fn save<'a>(
        &'a self,
        tenant: &'a str,
        response: StoredResponse,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.timed("save", self.inner.save(tenant, response)))
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredResponse>, StoreError>> {
        Box::pin(self.timed("get", self.inner.get(tenant, id)))
    }

    fn hold_lease<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        ttl: std::time::Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.timed("hold_lease", self.inner.hold_lease(tenant, id, ttl)))
    }

    fn lease_held<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<bool>, StoreError>> {
        Box::pin(self.timed("lease_held", self.inner.lease_held(tenant, id)))
    }

    fn delete<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.timed("delete", self.inner.delete(tenant, id)))
    }

    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Chain>, StoreError>> {
        Box::pin(self.timed("chain", self.inner.chain(tenant, id)))
    }

    fn turns<'a>(
        &'a self,
        tenant: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Option<StoredTurn>>, StoreError>> {
        Box::pin(self.timed("turns", self.inner.turns(tenant, ids)))
    }

    fn keep_fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        fingerprint: String,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.timed(
            "keep_fingerprint",
            self.inner.keep_fingerprint(tenant, id, fingerprint),
        ))
    }

    fn fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(self.timed("fingerprint", self.inner.fingerprint(tenant, id)))
    }

    fn conversations(&self) -> Option<&dyn ConversationStore> {
        self.inner
            .conversations()
            .map(|_| self as &dyn ConversationStore)
    }
}

impl ConversationStore for MeteredStore {
    fn create_conversation<'a>(
        &'a self,
        tenant: &'a str,
        conversation: StoredConversation,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.timed("create_conversation", async move {
            inner(&*self.inner)?
                .create_conversation(tenant, conversation, items)
                .await
        }))
    }

    fn conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>> {
        Box::pin(self.timed("get_conversation", async move {
            inner(&*self.inner)?.conversation(tenant, id).await
        }))
    }

    fn update_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        metadata: String,
    ) -> BoxFuture<'a, Result<Option<StoredConversation>, StoreError>> {
        Box::pin(self.timed("update_conversation", async move {
            inner(&*self.inner)?
                .update_conversation(tenant, id, metadata)
                .await
        }))
    }

    fn delete_conversation<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.timed("delete_conversation", async move {
            inner(&*self.inner)?.delete_conversation(tenant, id).await
        }))
    }

    fn append_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        items: Vec<StoredItem>,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.timed("append_items", async move {
            inner(&*self.inner)?.append_items(tenant, id, items).await
        }))
    }

    fn list_items<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        query: &'a ItemQuery,
    ) -> BoxFuture<'a, Result<Lookup<ItemPage>, StoreError>> {
        Box::pin(self.timed("list_items", async move {
            inner(&*self.inner)?.list_items(tenant, id, query).await
        }))
    }

    fn item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredItem>, StoreError>> {
        Box::pin(self.timed("get_item", async move {
            inner(&*self.inner)?.item(tenant, id, item_id).await
        }))
    }

    fn delete_item<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        item_id: &'a str,
    ) -> BoxFuture<'a, Result<Lookup<StoredConversation>, StoreError>> {
        Box::pin(self.timed("delete_item", async move {
            inner(&*self.inner)?.delete_item(tenant, id, item_id).await
        }))
    }
}

/// The conversations of the wrapped store: it offers them, or this store
/// would not (see `conversations`).
fn inner(store: &dyn ResponseStore) -> Result<&dyn ConversationStore, StoreError> {
    store
        .conversations()
        .ok_or_else(|| StoreError::NotKept("the store keeps no conversations".to_owned()))
}
