//! Response stores: what makes `store`, `previous_response_id` and
//! `GET /v1/responses/{id}` work when the backend is a stateless Chat
//! Completions server.
//!
//! A store keeps, per tenant, each finished response with the input items of
//! its turn, its output items, and the ids of the responses it continues
//! (its ancestors, oldest first): every item is kept once, and a
//! continuation is read back in one go, whatever its depth. Two branches
//! from one parent each see only their own history. A [`Chain`] whose
//! ancestor has gone (expired, evicted, deleted) says which one, so a
//! conversation is never silently shortened.
//!
//! Two backends:
//! - [`MemoryStore`], the default: in this process, bounded by entry count
//!   and bytes, with a TTL; lost on restart and private to one process.
//! - `RedisStore` (cargo feature `redis`): on a Redis 7 or Valkey server or
//!   a Redis Cluster, over TCP, TLS or a Unix socket, shared by every bridge
//!   replica using it and kept across restarts, one tenant's records in one
//!   Cluster hash slot, with a TTL.
//!
//! Records are namespaced by tenant; [`tenant_key`] derives the tenant from
//! the request's credential.

#![deny(unsafe_code)]
#![deny(missing_docs)]

mod memory;
#[cfg(feature = "redis")]
mod redis_store;
mod tenant;

pub use memory::MemoryStore;
#[cfg(feature = "redis")]
pub use redis_store::{RedisConfigError, RedisStore, RedisStoreBuilder};
pub use tenant::{tenant_key, ANONYMOUS_TENANT};

use std::future::Future;
use std::pin::Pin;

/// A boxed future, as the store methods return them (the trait is used as a
/// trait object).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One finished response and its turn, as a store keeps it.
///
/// Every item is kept once: the turn's own input items (not the history
/// before them) and its output items, each in the record of the response
/// that brought them; the `response` object is kept without its output,
/// which `output` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    /// The response id (`resp_…`).
    pub id: String,
    /// The response this one continued (`previous_response_id`).
    pub parent: Option<String>,
    /// Every earlier response of the conversation, oldest first, the parent
    /// last (empty when it continued nothing): what lets a continuation be
    /// read back in one go, whatever its depth.
    pub ancestors: Vec<String>,
    /// Unix seconds.
    pub created_at: u64,
    /// The input items of this turn only, as a JSON array (the items the
    /// client sent, without the history that came from `parent`).
    pub input: String,
    /// The output items, as a JSON array.
    pub output: String,
    /// The `Response` object as sent, but for its `output`, written `[]`
    /// (the items are in `output`).
    pub response: String,
}

impl StoredResponse {
    /// Bytes this record holds, for size limits.
    pub fn size(&self) -> usize {
        self.id.len()
            + self.parent.as_ref().map_or(0, String::len)
            + self.ancestors.iter().map(|a| a.len() + 1).sum::<usize>()
            + self.input.len()
            + self.output.len()
            + self.response.len()
    }

    /// Why the record cannot be kept as it stands, if so: its `parent` must
    /// be the last of its `ancestors` (both absent, or the same id), and it
    /// cannot be its own ancestor.
    pub fn check(&self) -> Result<(), StoreError> {
        if self.parent.as_deref() != self.ancestors.last().map(String::as_str) {
            return Err(StoreError::NotKept(format!(
                "response {}: its parent is not the last of its ancestors",
                self.id
            )));
        }
        if self.ancestors.contains(&self.id) {
            return Err(StoreError::NotKept(format!(
                "response {} lists itself among its ancestors",
                self.id
            )));
        }
        Ok(())
    }

    /// The part of the record a continuation reads.
    pub fn turn(&self) -> StoredTurn {
        StoredTurn {
            id: self.id.clone(),
            input: self.input.clone(),
            output: self.output.clone(),
        }
    }
}

/// One turn of a conversation: the items of a stored response, which is all
/// a continuation needs of it (not its envelope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTurn {
    /// The response id.
    pub id: String,
    /// Its turn's input items, a JSON array.
    pub input: String,
    /// Its output items, a JSON array.
    pub output: String,
}

/// A stored conversation, as [`ResponseStore::chain`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// Every response of the conversation by id, oldest first, the one asked
    /// for last, whether found or not: the `ancestors` of a response that
    /// continues it.
    pub ids: Vec<String>,
    /// The turns found, oldest first; the last is the response asked for.
    /// When an ancestor is missing, only the turns after it.
    pub turns: Vec<StoredTurn>,
    /// The id of the nearest ancestor that was not found (expired, evicted or
    /// deleted), if any: `turns` is then only the recent end of the
    /// conversation, and continuing it as if it were whole would silently
    /// drop the earlier turns.
    pub missing: Option<String>,
}

impl Chain {
    /// Whether the whole conversation was found: no ancestor is missing.
    pub fn is_complete(&self) -> bool {
        self.missing.is_none()
    }

    /// The chain of `id` from its ancestors' turns as found (`None` where
    /// missing), oldest first, and its own turn.
    pub fn assemble(
        ancestors: &[String],
        found: Vec<Option<StoredTurn>>,
        own: StoredTurn,
    ) -> Chain {
        let mut ids: Vec<String> = ancestors.to_vec();
        ids.push(own.id.clone());
        let nearest_missing = found.iter().rposition(Option::is_none);
        let missing = nearest_missing.map(|i| ancestors[i].clone());
        let start = nearest_missing.map_or(0, |i| i + 1);
        let mut turns: Vec<StoredTurn> = found.into_iter().skip(start).flatten().collect();
        turns.push(own);
        Chain {
            ids,
            turns,
            missing,
        }
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
    /// Saves a finished response, replacing one with the same id (saving the
    /// same record again changes nothing).
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

    /// The conversation ending at `id`: the turns of its
    /// [`ancestors`](StoredResponse::ancestors) and its own, read in a
    /// bounded number of round trips whatever its depth; `None` if the
    /// tenant has no response `id`. An ancestor the tenant no longer has
    /// (expired, evicted or deleted) is named in [`Chain::missing`].
    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Chain>, StoreError>>;

    /// The turns of the responses `ids`, in order, `None` for those the
    /// tenant does not have: for items a request refers to by id.
    fn turns<'a>(
        &'a self,
        tenant: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Option<StoredTurn>>, StoreError>>;
}
