//! A response store whose availability is logged when it changes: once when
//! it stops answering, once when it answers again, rather than never or at
//! every request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use wirebridge_store::{BoxFuture, Chain, ResponseStore, StoreError, StoredResponse, StoredTurn};

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
            Err(StoreError::Unavailable(e)) => {
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
}
