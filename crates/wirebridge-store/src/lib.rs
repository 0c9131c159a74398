//! Response stores: what makes `store`, `previous_response_id` and
//! `GET /v1/responses/{id}` work when the backend is a stateless Chat
//! Completions server.
//!
//! A store keeps, per tenant, each finished response with the input items of
//! its turn, its output items and the id of the response it continued. A
//! conversation is a chain of such records, followed through parent ids, so
//! two branches from one parent each see only their own history. A
//! [`Chain`] whose ancestor has gone (expired, evicted, deleted) says which
//! one, so a conversation is never silently shortened.
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

use std::collections::HashSet;
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

/// A stored conversation, as [`ResponseStore::chain`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The records found, oldest first; the last is the response asked for.
    pub records: Vec<StoredResponse>,
    /// The id of the nearest ancestor that was not found (expired, evicted or
    /// deleted), if the walk stopped at one: `records` is then only the
    /// recent end of the conversation, and continuing it as if it were whole
    /// would silently drop the earlier turns. `None` when the oldest record
    /// continued nothing.
    pub missing: Option<String>,
}

impl Chain {
    /// Whether the whole conversation was found: no ancestor is missing.
    pub fn is_complete(&self) -> bool {
        self.missing.is_none()
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
    /// The store refused to keep a record, e.g. because it is larger than
    /// the store's bounds or the server is out of memory; the message says
    /// why. Nothing was saved, and nothing else was lost for it.
    #[error("the response was not kept: {0}")]
    NotKept(String),
}

/// Where responses are kept. Every method is scoped to a tenant: a record is
/// visible only to the tenant that saved it.
pub trait ResponseStore: Send + Sync + 'static {
    /// Saves a finished response, replacing one with the same id.
    ///
    /// `Ok` means it was kept. A record the store will not keep is an error,
    /// [`StoreError::NotKept`], never a silent `Ok`: a later
    /// `previous_response_id` naming it would find nothing.
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

    /// The conversation ending at `id`, followed through parents; `None` if
    /// the tenant has no response `id`.
    ///
    /// The walk stops at the first response that continued nothing, or at the
    /// first parent the tenant no longer has (expired, evicted or deleted),
    /// which [`Chain::missing`] then names: a caller can tell a whole
    /// conversation from the recent end of a broken one. At most 10,000
    /// records are followed.
    ///
    /// Fails with [`StoreError::Corrupt`] when the parents loop back to a
    /// response already in the chain (no sequence of saves through the API
    /// builds one).
    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Chain>, StoreError>> {
        Box::pin(async move {
            let Some(last) = self.get(tenant, id).await? else {
                return Ok(None);
            };
            let mut seen = HashSet::from([last.id.clone()]);
            let mut records = vec![last];
            let mut missing = None;
            while let Some(parent) = records.last().and_then(|r| r.parent.clone()) {
                if records.len() >= MAX_CHAIN {
                    break;
                }
                if !seen.insert(parent.clone()) {
                    return Err(StoreError::Corrupt(format!(
                        "the parents of response {id} loop back to {parent}"
                    )));
                }
                match self.get(tenant, &parent).await? {
                    Some(record) => records.push(record),
                    None => {
                        missing = Some(parent);
                        break;
                    }
                }
            }
            records.reverse();
            Ok(Some(Chain { records, missing }))
        })
    }
}

/// The most records [`ResponseStore::chain`] follows: a bound on the work one
/// request can cause, far beyond any conversation a model could take in.
const MAX_CHAIN: usize = 10_000;
