//! A response store whose every call runs on its [`Home`] runtime, so that
//! the connections it opens are driven there, whichever worker asks.

use std::sync::Arc;

use wirebridge_store::{BoxFuture, Chain, ResponseStore, StoreError, StoredResponse, StoredTurn};

use crate::home::{Home, HomeGone};

/// Sends each call to `inner` to run on `home`.
pub struct HomedStore {
    inner: Arc<dyn ResponseStore>,
    home: Home,
}

impl HomedStore {
    /// Calls `inner` on `home`.
    pub fn new(inner: Arc<dyn ResponseStore>, home: Home) -> Self {
        Self { inner, home }
    }
}

/// At shutdown the home runtime stops last; a call that finds it gone is
/// one the store cannot answer.
fn gone(e: HomeGone) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

impl ResponseStore for HomedStore {
    fn save<'a>(
        &'a self,
        tenant: &'a str,
        response: StoredResponse,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let (inner, tenant) = (Arc::clone(&self.inner), tenant.to_owned());
        Box::pin(async move {
            let work = async move { inner.save(&tenant, response).await };
            self.home.run(work).await.map_err(gone)?
        })
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredResponse>, StoreError>> {
        let (inner, tenant, id) = (Arc::clone(&self.inner), tenant.to_owned(), id.to_owned());
        Box::pin(async move {
            let work = async move { inner.get(&tenant, &id).await };
            self.home.run(work).await.map_err(gone)?
        })
    }

    fn delete<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let (inner, tenant, id) = (Arc::clone(&self.inner), tenant.to_owned(), id.to_owned());
        Box::pin(async move {
            let work = async move { inner.delete(&tenant, &id).await };
            self.home.run(work).await.map_err(gone)?
        })
    }

    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Chain>, StoreError>> {
        let (inner, tenant, id) = (Arc::clone(&self.inner), tenant.to_owned(), id.to_owned());
        Box::pin(async move {
            let work = async move { inner.chain(&tenant, &id).await };
            self.home.run(work).await.map_err(gone)?
        })
    }

    fn turns<'a>(
        &'a self,
        tenant: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Option<StoredTurn>>, StoreError>> {
        let (inner, tenant, ids) = (Arc::clone(&self.inner), tenant.to_owned(), ids.to_vec());
        Box::pin(async move {
            let work = async move { inner.turns(&tenant, &ids).await };
            self.home.run(work).await.map_err(gone)?
        })
    }
}
