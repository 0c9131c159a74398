//! A response store whose operations are counted and timed.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use wirebridge_store::{BoxFuture, Chain, ResponseStore, StoreError, StoredResponse, StoredTurn};

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
            Err(StoreError::Unavailable(_)) => "unavailable",
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
}
