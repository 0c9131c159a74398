//! Response stores: what makes `store`, `previous_response_id` and
//! `GET /v1/responses/{id}` work when the backend is a stateless Chat
//! Completions server.
//!
//! A store keeps, per tenant, each finished response with the input items of
//! its turn, its output items, and the id of the response it continues (its
//! parent): every item is kept once, and what a response keeps does not
//! grow with the depth of its conversation. The responses of one
//! conversation are kept together, in the order they were saved, so that a
//! continuation is read back in one go whatever its depth, and a save costs
//! the same at any depth. Two branches from one parent each see only their
//! own history. A [`Chain`] whose ancestor has gone (expired, evicted,
//! deleted) says which one, so a conversation is never silently shortened.
//!
//! Two backends:
//! - [`MemoryStore`], the default: in this process, bounded by entry count,
//!   bytes and tenants, with a TTL; lost on restart and private to one
//!   process.
//! - `RedisStore` (cargo feature `redis`): on a Redis 7 or Valkey server or
//!   a Redis Cluster, over TCP, TLS or a Unix socket, shared by every bridge
//!   replica using it and kept across restarts, one tenant's records in one
//!   Cluster hash slot, with a TTL.
//!
//! Both also keep conversations ([`ConversationStore`]): the item lists of
//! `/v1/conversations`, with the same tenants and TTL as responses, and the
//! same bounds (the memory store's, counted apart; Redis's `maxmemory`).
//!
//! Records are namespaced by tenant; [`tenant_key`] derives the tenant from
//! the request's credential.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// What a published crate calls `pub` is its API: anything else says how
// far it reaches (`pub(crate)`, `pub(super)`).
#![warn(unreachable_pub)]

mod conversation;
mod memory;
#[cfg(feature = "redis")]
mod redis_store;
mod tenant;

pub use conversation::{
    ConversationStore, ItemPage, ItemQuery, Lookup, Order, StoredConversation, StoredItem,
};
pub use memory::MemoryStore;
#[cfg(feature = "redis")]
pub use redis_store::{RedisConfigError, RedisStore, RedisStoreBuilder};
pub use tenant::{tenant_key, ANONYMOUS_TENANT};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A boxed future, as the store methods return them (the trait is used as a
/// trait object).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One finished response and its turn, as a store keeps it.
///
/// Every item is kept once: the turn's own input items (not the history
/// before them) and its output items, each in the record of the response
/// that brought them; the `response` object is kept without its output,
/// which `output` holds. The conversation before it is named by `parent`
/// alone: the store finds the rest from there.
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
    /// The `Response` object as sent, but for its `output`, written `[]`
    /// (the items are in `output`).
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

    /// Why the record cannot be kept as it stands, if so: a response cannot
    /// continue itself.
    pub fn check(&self) -> Result<(), StoreError> {
        if self.parent.as_deref() == Some(self.id.as_str()) {
            return Err(StoreError::NotKept(format!(
                "response {} names itself as the response it continues",
                self.id
            )));
        }
        Ok(())
    }

    /// The part of the record a continuation reads.
    pub fn turn(&self) -> StoredTurn {
        StoredTurn {
            id: self.id.as_str().into(),
            input: self.input.as_str().into(),
            output: self.output.as_str().into(),
        }
    }
}

/// One turn of a conversation: the items of a stored response, which is all
/// a continuation needs of it (not its envelope).
///
/// Shared text: every turn that continues a conversation reads all the
/// turns before it, and a store that keeps them in memory hands each out
/// as a count, not a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTurn {
    /// The response id.
    pub id: Arc<str>,
    /// Its turn's input items, a JSON array.
    pub input: Arc<str>,
    /// Its output items, a JSON array.
    pub output: Arc<str>,
}

/// A stored conversation, as [`ResponseStore::chain`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The responses of the conversation by id, oldest first, the one asked
    /// for last, whether found or not: as far back as the store knows them
    /// (at least to the nearest missing one). Shared with the store where
    /// it can (a long conversation's ids are not copied on every read).
    pub ids: Vec<Arc<str>>,
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

    /// This chain with its missing ancestor's own chain, `earlier`, put in
    /// front of it: what a cache that lacks the older part of a conversation
    /// completes it with from another store. `earlier` must be the chain of
    /// [`missing`](Self::missing); the result is missing what `earlier` is.
    pub fn after(self, earlier: Chain) -> Chain {
        let Chain {
            ids,
            turns,
            missing,
            ..
        } = self;
        if missing.as_deref() != earlier.ids.last().map(|id| &**id) {
            return Chain {
                ids,
                turns,
                missing,
            };
        }
        // The ids after the missing one are those of the turns found.
        let kept = ids.len().saturating_sub(turns.len());
        let mut joined = earlier.ids;
        joined.extend(ids.into_iter().skip(kept));
        let mut all = earlier.turns;
        all.extend(turns);
        Chain {
            ids: joined,
            turns: all,
            missing: earlier.missing,
        }
    }
}

/// Why a store operation failed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StoreError {
    /// The store cannot be reached now (a 503 for the client); it may be
    /// back later.
    ///
    /// The message is what a client is shown, so it names no host and no
    /// credential; the error behind it, which may name either, is kept as
    /// the [`source`](std::error::Error::source) for logs.
    Unavailable {
        /// What went wrong, fit to show a client.
        message: String,
        /// The error that made the store unavailable, if there was one.
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
    /// A stored record cannot be read.
    Corrupt(String),
    /// The store refused to keep a record, e.g. because it is larger than
    /// the store's bounds or the server is out of memory; the message says
    /// why. Nothing was saved, and nothing else was lost for it.
    NotKept(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Unavailable { message, .. } => {
                write!(f, "the response store is unavailable: {message}")
            }
            StoreError::Corrupt(why) => write!(f, "a stored response is corrupt: {why}"),
            StoreError::NotKept(why) => write!(f, "the response was not kept: {why}"),
        }
    }
}

// Written out rather than derived: a derived `source` would hand back the
// `Arc` (itself an error) in which the cause is kept, and a caller looking
// for the cause's own type (`downcast_ref`) would not find it.
impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Unavailable {
                source: Some(cause),
                ..
            } => Some(&**cause),
            _ => None,
        }
    }
}

/// Errors are equal when they say the same: two unavailable stores with the
/// same message are equal whatever their causes, which cannot be compared.
impl PartialEq for StoreError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (
                StoreError::Unavailable { message: a, .. },
                StoreError::Unavailable { message: b, .. },
            )
            | (StoreError::Corrupt(a), StoreError::Corrupt(b))
            | (StoreError::NotKept(a), StoreError::NotKept(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for StoreError {}

impl StoreError {
    /// [`StoreError::Unavailable`] with `message` (shown to clients) and
    /// the error that caused it.
    pub fn unavailable(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StoreError::Unavailable {
            message: message.into(),
            source: Some(Arc::new(source)),
        }
    }
}

/// Where responses are kept. Every method is scoped to a tenant: a record is
/// visible only to the tenant that saved it.
pub trait ResponseStore: Send + Sync + 'static {
    /// Saves a finished response, replacing one with the same id (saving the
    /// same record again changes nothing).
    ///
    /// A response whose parent the tenant has joins the parent's
    /// conversation and renews it: the conversation, all its responses and
    /// branches, expires a TTL after its latest save. A save does the same
    /// work at any depth. A parent the tenant does not have (never saved,
    /// or gone) makes the response the start of a conversation of its own,
    /// whose [`chain`](Self::chain) names the parent missing.
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

    /// The conversation ending at `id`: the turns of the responses it
    /// continues, found from its [`parent`](StoredResponse::parent) back to
    /// the first, and its own, read in one round trip whatever its depth;
    /// `None` if the tenant has no response `id`. An ancestor the tenant no
    /// longer has (expired, evicted or deleted) is named in
    /// [`Chain::missing`].
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

    /// Holds the lease on the background run `id` of `tenant` for `ttl`
    /// from now: the process running it says it still does. It renews the
    /// lease well within `ttl` while the run lasts; a process that stops
    /// without a word (killed, its machine gone) leaves it to expire, and
    /// whoever reads the response then knows no process runs it.
    ///
    /// A store that keeps nothing beyond its own process (the memory store)
    /// needs no leases: its runs end with it. This default keeps none.
    fn hold_lease<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        ttl: std::time::Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (tenant, id, ttl);
        Box::pin(async { Ok(()) })
    }

    /// Whether the lease on the background run `id` of `tenant` is held
    /// ([`hold_lease`](Self::hold_lease)); `None` when the store keeps no
    /// leases.
    fn lease_held<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<bool>, StoreError>> {
        let _ = (tenant, id);
        Box::pin(async { Ok(None) })
    }

    /// Keeps the prompt cache fingerprint of response `id` (hashes and
    /// token estimates, never prompt text; see the convert crate's
    /// `cache_diagnostics`), for a later request to compare itself with. It
    /// lives as long as a stored response would, and is the tenant's alone.
    ///
    /// A store that keeps no fingerprints (the default) answers `Ok` and
    /// keeps nothing: a comparison with the response then finds no baseline.
    fn keep_fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        fingerprint: String,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (tenant, id, fingerprint);
        Box::pin(async { Ok(()) })
    }

    /// The fingerprint kept for response `id`, if the tenant has it.
    fn fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        let _ = (tenant, id);
        Box::pin(async { Ok(None) })
    }

    /// Where this store keeps conversations, if it keeps them: the stores of
    /// this crate do, with the same tenants and TTL as responses.
    /// Without one, `/v1/conversations` and the `conversation` field are
    /// refused.
    fn conversations(&self) -> Option<&dyn ConversationStore> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(id: &str) -> StoredTurn {
        StoredTurn {
            id: id.into(),
            input: "[]".into(),
            output: "[]".into(),
        }
    }

    fn chain(ids: &[&str], turns: &[&str], missing: Option<&str>) -> Chain {
        Chain {
            ids: ids.iter().map(|id| (*id).into()).collect(),
            turns: turns.iter().map(|id| turn(id)).collect(),
            missing: missing.map(str::to_owned),
        }
    }

    #[test]
    fn a_chain_is_completed_by_its_missing_ancestor_s_chain() {
        let recent = chain(&["x", "b", "c"], &["c"], Some("b"));
        let earlier = chain(&["m", "a", "b"], &["a", "b"], Some("m"));
        assert_eq!(
            recent.after(earlier),
            chain(&["m", "a", "b", "c"], &["a", "b", "c"], Some("m"))
        );
        // The chain of another response changes nothing.
        let recent = chain(&["b", "c"], &["c"], Some("b"));
        let other = chain(&["a"], &["a"], None);
        assert_eq!(recent.clone().after(other), recent);
    }
}
