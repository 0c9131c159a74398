//! Response stores: what makes `store`, `previous_response_id` and
//! `GET /v1/responses/{id}` work when the backend is a stateless Chat
//! Completions server.
//!
//! A store keeps, per tenant, each finished response with the input items of
//! its turn, its output items and the id of the response it continued. A
//! conversation is a chain of such records, followed through parent ids, so
//! two branches from one parent each see only their own history.
//!
//! Two backends:
//! - [`MemoryStore`], the default: in this process, bounded by entry count
//!   and bytes, with a TTL; lost on restart and private to one process.
//! - `RedisStore` (cargo feature `redis`): on a Redis 7 or Valkey server,
//!   shared by every bridge replica using it and kept across restarts, each
//!   record under `{prefix}:{tenant}:{id}` with a TTL.
//!
//! Records are namespaced by tenant; [`tenant_key`] derives the tenant from
//! the request's credential.

#![deny(unsafe_code)]

mod memory;
#[cfg(feature = "redis")]
mod redis_store;
mod tenant;

pub use memory::MemoryStore;
#[cfg(feature = "redis")]
pub use redis_store::RedisStore;
pub use tenant::{tenant_key, ANONYMOUS_TENANT};

use std::future::Future;
use std::pin::Pin;

/// A boxed future, as the store methods return them (the trait is used as a
/// trait object).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One finished response and its turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    /// The response id (`resp_…`).
    pub id: String,
    /// The response this one continued (`previous_response_id`).
    pub parent: Option<String>,
    /// Unix seconds.
    pub created_at: u64,
    /// The input items of this turn only, as a JSON array (the items the
    /// client sent, without the history that came from `parent`).
    pub input: String,
    /// The output items, as a JSON array.
    pub output: String,
    /// The whole `Response` object, as a JSON object, for retrieval.
    pub response: String,
}

impl StoredResponse {
    /// Bytes this record holds, for size limits.
    pub fn size(&self) -> usize {
        self.id.len()
            + self.parent.as_ref().map_or(0, String::len)
            + self.input.len()
            + self.output.len()
            + self.response.len()
    }
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store cannot be reached now (a 503 for the client); it may be
    /// back later.
    #[error("the response store is unavailable: {0}")]
    Unavailable(String),
    /// A stored record cannot be read.
    #[error("a stored response is corrupt: {0}")]
    Corrupt(String),
}

/// Where responses are kept. Every method is scoped to a tenant: a record is
/// visible only to the tenant that saved it.
pub trait ResponseStore: Send + Sync + 'static {
    /// Saves a finished response.
    fn save<'a>(
        &'a self,
        tenant: &'a str,
        response: StoredResponse,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// One response, if the tenant has it.
    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredResponse>, StoreError>>;

    /// Deletes a response; whether it existed.
    fn delete<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// The conversation ending at `id`, oldest first, following parents; `None`
    /// if the tenant has no response `id`. A parent that has expired ends the
    /// chain there.
    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<StoredResponse>>, StoreError>> {
        Box::pin(async move {
            let Some(last) = self.get(tenant, id).await? else {
                return Ok(None);
            };
            let mut chain = vec![last];
            while let Some(parent) = chain.last().and_then(|r| r.parent.clone()) {
                // A cycle cannot be built through the API; refuse to loop anyway.
                if chain.len() > 10_000 || chain.iter().any(|r| r.id == parent) {
                    break;
                }
                match self.get(tenant, &parent).await? {
                    Some(record) => chain.push(record),
                    None => break,
                }
            }
            chain.reverse();
            Ok(Some(chain))
        })
    }
}
