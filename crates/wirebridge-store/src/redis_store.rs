//! The Redis (or Valkey) store: shared by every bridge replica that points at
//! the same server or cluster, and kept across restarts.
//!
//! Per tenant: the index and the response conversations (`x`, `c:<n>`, see
//! `scripts.rs`), and the conversations of `/v1/conversations` (`v:<id>`,
//! `v:<id>:o`, `v:<id>:i`, see `conversations.rs`); `keys.rs` names them
//! all.

mod address;
mod builder;
mod chain;
mod connection;
mod conversations;
mod fingerprints;
mod kept;
mod keys;
mod leases;
mod record;
mod scripts;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::{Cmd, ErrorKind, FromRedisValue, RedisError, ServerErrorKind};

use crate::{
    BoxFuture, Chain, ConversationStore, ResponseStore, StoreError, StoredResponse, StoredTurn,
};
pub use builder::RedisStoreBuilder;
use connection::Connection;
use kept::KeptTurns;
use keys::TenantKeys;
use scripts::Lua;

/// Keeps responses on a Redis 7 or Valkey server, or a Redis Cluster.
///
/// # Where
///
/// [`builder`](Self::builder) takes a URL:
/// - one server: `redis://[user:password@]host[:port][/db]`, `valkey://…`
///   alike, or `redis+unix:///path/to/socket`;
/// - one server over TLS: `rediss://…` (`valkeys://…`), checked against the
///   system's CA certificates or
///   [`ca_certificate`](RedisStoreBuilder::ca_certificate), with an optional
///   [`client_certificate`](RedisStoreBuilder::client_certificate);
/// - a cluster: `redis+cluster://[user:password@]host:port[,host:port…]`
///   (`rediss+cluster://` over TLS), naming one or more seed nodes; the
///   client learns the others from them and follows the cluster's changes.
///
/// A user and password are Redis 6 ACL credentials (`AUTH user password`);
/// a password alone authenticates as the `default` user.
///
/// # Layout
///
/// Per tenant, responses are kept in two kinds of hashes, compact JSON in
/// their values:
/// `{prefix}:{<tenant>}:x`, the tenant's index (which conversation holds
/// each response), and `{prefix}:{<tenant>}:c:<n>`, one per conversation:
/// each response's turn (its input and output items), its envelope (the
/// response object and its metadata) and its place in the conversation (its
/// slot, in the order responses were saved, and where the run of ancestors
/// leading to it starts). The prefix is
/// [`DEFAULT_PREFIX`](Self::DEFAULT_PREFIX) unless [`prefix`](Self::prefix)
/// says otherwise; the tenant, in braces, is a Redis Cluster hash tag, so one
/// tenant's keys share a slot.
///
/// Items are stored once, and what a response keeps does not grow with its
/// depth. Every operation but reading a long chain is one `EVALSHA` of a
/// script. A save writes the
/// response into its parent's conversation (or starts one) and renews the
/// conversation and the index with the [`ttl`](Self::ttl) (default
/// [`DEFAULT_TTL`](Self::DEFAULT_TTL), 30 days): the same few commands at any
/// depth, and a conversation in use, every branch of it, expires as a whole
/// a TTL after its latest save. Reading a conversation walks its runs of
/// ancestors, reading their ids (and the sizes of their turns) with
/// `HMGET`s in a script, then reads the turns with `HMGET`s: one round trip
/// for a short chain (up to 512 slots and 256 KiB of turns), else pieces
/// of at most 512 slots, and of turns at most 512 and 4 MiB (or one larger
/// turn), so that no chain holds the server, which runs one command at a
/// time for every tenant, for longer than one piece: about a millisecond.
/// The pieces read the chain as it was when the first was read: a write
/// that changes a slot of its conversation meanwhile (saving a response
/// again, deleting one) changes the conversation's generation, and the
/// chain is read again from the start (after 4 tries the read fails as
/// [`StoreError::Unavailable`]); each piece is bounded by the timeout.
/// Saving the same response again replaces it in place: a
/// retried save duplicates nothing. Eviction under memory pressure is the
/// server's (`maxmemory-policy`, e.g. `volatile-ttl`) and takes a whole
/// conversation: a read then finds the response gone, or names its missing
/// ancestor in [`Chain::missing`]. A save the server refuses for want of
/// memory (`noeviction`) fails with [`StoreError::NotKept`] and writes
/// nothing.
///
/// # Conversations
///
/// It is also a [`ConversationStore`] (the item lists of
/// `/v1/conversations`), on the same server, under the same prefix, with
/// the same TTL. A conversation is three keys of its tenant, named by its
/// id (escaped as a tenant is, so that no id reaches another key):
/// `{prefix}:{<tenant>}:v:<id>`, a hash of its record (`v`, `created_at`,
/// `metadata`); `…:v:<id>:o`, a list of its item ids in order; and
/// `…:v:<id>:i`, a hash from each item id to the item's JSON. Each write
/// is one `EVALSHA` (reading the record, one `HMGET`). A page of items is
/// read in pieces, each one `EVALSHA` of at most 512 items and about 1 MiB
/// (one item more at most), so that no conversation's length holds the
/// server, which runs one script at a time for every tenant, for longer
/// than one piece: the first finds the page (after an item, the item's
/// place, with `LPOS`), each reads its ids (`LRANGE`) and items (`HMGET`).
/// The pieces read the conversation as it was when the first was read: a
/// write that moves or replaces items meanwhile (deleting an item,
/// creating the conversation again) changes the record's generation (`g`),
/// and the page is read again from the start (after 4 tries the read fails
/// as [`StoreError::Unavailable`]). Every write (creating, updating, appending, deleting an
/// item) sets the TTL on all three keys, so they expire together a TTL
/// after the latest write; reads renew nothing. The store sets no bounds of
/// its own: a write the server refuses for want of memory fails with
/// [`StoreError::NotKept`] and writes nothing.
///
/// # Failures
///
/// A store can be [built](RedisStoreBuilder::build) while Redis is down:
/// nothing connects before the first operation. The connection reconnects
/// by itself. While the server cannot be reached, each operation fails with
/// [`StoreError::Unavailable`] within the timeout
/// ([`DEFAULT_TIMEOUT`](Self::DEFAULT_TIMEOUT), 2 s, unless
/// [`RedisStoreBuilder::timeout`] says otherwise) rather than waiting, and
/// the first operation after the server is back succeeds. An operation that
/// meets a dropped connection is tried once more on a fresh one.
///
/// Needs a Tokio runtime. Cloning is cheap and shares the connection.
#[derive(Clone)]
pub struct RedisStore {
    connection: Connection,
    prefix: String,
    ttl: Duration,
    timeout: Duration,
    scripts: Arc<Scripts>,
    round_trips: Arc<AtomicU64>,
    kept: Arc<KeptTurns>,
    turns_read: Arc<AtomicU64>,
}

struct Scripts {
    save: Lua,
    get: Lua,
    delete: Lua,
    turns: Lua,
    chain: Lua,
    /// Those of [`ConversationStore`].
    conversations: conversations::Scripts,
}

impl RedisStore {
    /// The default key prefix.
    pub const DEFAULT_PREFIX: &'static str = "wirebridge:resp";
    /// The default time a conversation lives after its latest save: 30 days.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 24 * 60 * 60);
    /// The default bound on connecting, on each server reply, and on each
    /// store operation as a whole: 2 seconds.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
    /// The default bound on the stored turns a store keeps in the process,
    /// so that reading a conversation again fetches only what is new: 64
    /// MiB (see [`RedisStoreBuilder::kept_turns`]).
    pub const DEFAULT_KEPT_TURNS: usize = 64 << 20;
    /// The longest TTL written; longer ones are shortened to it.
    pub const MAX_TTL: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

    /// The settings of a store on the server or cluster at `url` (see
    /// [Where](Self#where)), to [`build`](RedisStoreBuilder::build) or
    /// [`connect`](RedisStoreBuilder::connect).
    pub fn builder(url: &str) -> RedisStoreBuilder {
        RedisStoreBuilder::new(url)
    }

    /// Whether `url` names a server or cluster reached over TLS (`rediss://`,
    /// `rediss+cluster://`, …); an error when the store cannot read it (see
    /// [Where](Self#where)). Connects to nothing: for checking settings.
    pub fn uses_tls(url: &str) -> Result<bool, RedisConfigError> {
        address::parse(url).map(|parsed| parsed.tls)
    }

    /// Connects to the server at `url` with
    /// [`DEFAULT_TIMEOUT`](Self::DEFAULT_TIMEOUT): `builder(url).connect()`.
    ///
    /// Fails with [`StoreError::Unavailable`] when the URL is invalid or the
    /// server does not answer in time: the message never repeats the URL,
    /// which may hold a password.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// Like [`connect`](Self::connect), with `timeout` bounding the connection,
    /// each reply and each store operation instead of the default.
    pub async fn connect_with_timeout(url: &str, timeout: Duration) -> Result<Self, StoreError> {
        Self::builder(url).timeout(timeout).connect().await
    }

    /// Puts keys under `prefix` instead of [`DEFAULT_PREFIX`](Self::DEFAULT_PREFIX),
    /// e.g. to share one server between deployments.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Has the server forget each conversation, with all its responses,
    /// `ttl` after its latest save, and each conversation of
    /// [`ConversationStore`], with its items, `ttl` after its latest write:
    /// rounded up to whole seconds, at least 1 s, at most
    /// [`MAX_TTL`](Self::MAX_TTL).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The requests this store and its clones have sent to Redis, each one
    /// round trip: what a deployment's latency to Redis is multiplied by.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// The stored turns this store and its clones have read from Redis
    /// while reading conversations: a turn the store keeps (see
    /// [`RedisStoreBuilder::kept_turns`]) is not read again.
    pub fn turns_read(&self) -> u64 {
        self.turns_read.load(Ordering::Relaxed)
    }

    /// Whether the server answers now: a `PING` within the timeout (on a
    /// cluster, to every node that serves slots, a dead one included).
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.bounded(async {
            // Once more on a fresh connection if it met a dropped one, as
            // for every command.
            let sent = match self.connection.ping().await {
                Err(e) if e.is_io_error() || e.is_unrecoverable_error() => {
                    self.round_trips.fetch_add(1, Ordering::Relaxed);
                    self.connection.ping().await?
                }
                sent => sent?,
            };
            self.round_trips.fetch_add(sent as u64, Ordering::Relaxed);
            Ok(())
        })
        .await
    }

    fn keys(&self, tenant: &str) -> TenantKeys {
        TenantKeys::new(&self.prefix, tenant)
    }

    /// Runs `script`: by hash, and by source when the server does not have
    /// it yet (once per server start), all within the timeout.
    async fn run<T: FromRedisValue>(
        &self,
        script: &Lua,
        keys: &[String],
        args: &[&[u8]],
    ) -> Result<T, StoreError> {
        self.bounded(async {
            match self.send(&script.by_hash(keys, args)).await {
                Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                    self.send(&script.by_source(keys, args)).await
                }
                result => result,
            }
        })
        .await
    }

    /// Sends `cmd`, once more on a fresh connection if it met a dropped one.
    async fn send<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T, RedisError> {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        match self.connection.query(cmd).await {
            Err(e) if e.is_io_error() || e.is_unrecoverable_error() => {
                self.round_trips.fetch_add(1, Ordering::Relaxed);
                self.connection.query(cmd).await
            }
            result => result,
        }
    }

    /// `operation`, failed as unavailable if it takes longer than the
    /// timeout.
    async fn bounded<T>(
        &self,
        operation: impl std::future::Future<Output = Result<T, RedisError>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.timeout, operation).await {
            Ok(result) => result.map_err(store_error),
            Err(elapsed) => Err(unanswered(self.timeout, elapsed)),
        }
    }
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The connection's details may include a password.
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .field("ttl", &self.ttl)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Why a [`RedisStoreBuilder`] cannot make a store. No message repeats a
/// password of the URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RedisConfigError {
    /// The URL is not one the store reads.
    #[error("invalid Redis URL: {0}")]
    Url(String),
    /// A certificate or key cannot be used, or is given for a URL without
    /// TLS.
    #[error("invalid Redis TLS setting: {0}")]
    Tls(String),
    /// The Redis client refused the settings.
    #[error("invalid Redis settings: {0}")]
    Refused(String),
}

impl From<RedisConfigError> for StoreError {
    fn from(e: RedisConfigError) -> Self {
        StoreError::unavailable(e.to_string(), e)
    }
}

impl ResponseStore for RedisStore {
    fn hold_lease<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.set_lease(tenant, id, ttl))
    }

    fn lease_held<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<bool>, StoreError>> {
        Box::pin(async move { self.lease_exists(tenant, id).await.map(Some) })
    }

    fn save<'a>(
        &'a self,
        tenant: &'a str,
        response: StoredResponse,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            response.check()?;
            let encoded = record::encode(&response)?;
            let keys = self.keys(tenant);
            let ttl = ttl_seconds(self.ttl).to_string();
            let parent = match &response.parent {
                Some(parent) => format!("+{parent}"),
                None => "-".to_owned(),
            };
            let stem = keys.conversations();
            let generation = kept::new_generation();
            let args: [&[u8]; 7] = [
                ttl.as_bytes(),
                response.id.as_bytes(),
                parent.as_bytes(),
                &encoded.turn,
                &encoded.envelope,
                stem.as_bytes(),
                generation.as_bytes(),
            ];
            let index = keys.index();
            let place: String = self
                .run(&self.scripts.save, std::slice::from_ref(&index), &args)
                .await?;
            if !self.kept.keeps() {
                return Ok(());
            }
            let mut place = place.split(' ');
            let conversation = place.next().and_then(|c| c.parse().ok());
            let slot = place.next().and_then(|s| s.parse().ok());
            // The response is saved whatever the place says: one this
            // process cannot read only leaves the turn out of what it keeps,
            // and the next read of it comes from Redis.
            if let (Some(conversation), Some(slot), Some(generation)) =
                (conversation, slot, place.next())
            {
                self.kept
                    .saved(&index, conversation, generation, slot, response.turn());
            }
            Ok(())
        })
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredResponse>, StoreError>> {
        Box::pin(async move {
            let keys = self.keys(tenant);
            let stem = keys.conversations();
            let values: Option<Vec<Option<Vec<u8>>>> = self
                .run(
                    &self.scripts.get,
                    &[keys.index()],
                    &[id.as_bytes(), stem.as_bytes()],
                )
                .await?;
            match values.as_deref() {
                None => Ok(None),
                Some([Some(envelope), Some(turn)]) => record::decode(id, envelope, turn).map(Some),
                // Gone from its conversation, or the conversation gone.
                Some([_, _]) => Ok(None),
                Some(other) => Err(StoreError::Corrupt(format!(
                    "reading response {id} answered {} values",
                    other.len()
                ))),
            }
        })
    }

    fn delete<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let keys = self.keys(tenant);
            let stem = keys.conversations();
            let generation = kept::new_generation();
            let removed: u64 = self
                .run(
                    &self.scripts.delete,
                    &[keys.index()],
                    &[id.as_bytes(), stem.as_bytes(), generation.as_bytes()],
                )
                .await?;
            Ok(removed > 0)
        })
    }

    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Chain>, StoreError>> {
        Box::pin(async move {
            let keys = self.keys(tenant);
            let index = keys.index();
            let known = self.kept.known(&index, id);
            let Some(read) = self.read_chain(&keys, id, &known).await? else {
                return Ok(None);
            };
            let left_out = read.left_out;
            if let Some(chain) = self.kept.chain(&index, read) {
                return Ok(Some(chain));
            }
            if left_out == 0 {
                return Ok(None);
            }
            // What it left out is no longer kept here: read it all.
            let Some(read) = self.read_chain(&keys, id, &[]).await? else {
                return Ok(None);
            };
            Ok(self.kept.chain(&index, read))
        })
    }

    fn turns<'a>(
        &'a self,
        tenant: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Option<StoredTurn>>, StoreError>> {
        Box::pin(async move {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let keys = self.keys(tenant);
            let stem = keys.conversations();
            let mut args: Vec<&[u8]> = Vec::with_capacity(1 + ids.len());
            args.push(stem.as_bytes());
            args.extend(ids.iter().map(String::as_bytes));
            let values: Vec<Option<Vec<u8>>> = self
                .run(&self.scripts.turns, &[keys.index()], &args)
                .await?;
            if values.len() != ids.len() {
                return Err(StoreError::Corrupt(format!(
                    "{} turns asked for, {} read",
                    ids.len(),
                    values.len()
                )));
            }
            ids.iter()
                .zip(values)
                .map(|(id, value)| value.map(|v| record::decode_turn(id, &v)).transpose())
                .collect()
        })
    }

    /// This store: conversations are kept beside responses, on the same
    /// server, under the same prefix and TTL (see
    /// [Conversations](RedisStore#conversations)).
    fn keep_fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        fingerprint: String,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.set_fingerprint(tenant, id, fingerprint))
    }

    fn fingerprint<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(self.get_fingerprint(tenant, id))
    }

    fn conversations(&self) -> Option<&dyn ConversationStore> {
        Some(self)
    }
}

fn ttl_seconds(ttl: Duration) -> u64 {
    let ttl = ttl.min(RedisStore::MAX_TTL);
    let seconds = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    seconds.max(1)
}

/// A value of the wrong shape, or a conversation the chain script cannot
/// read (`CORRUPT`), is a corrupt record; a write refused for want
/// of memory was not kept (Redis refuses only writes so); anything else means
/// the store cannot serve now.
fn store_error(e: RedisError) -> StoreError {
    if matches!(e.kind(), ErrorKind::UnexpectedReturnType | ErrorKind::Parse)
        || matches!(e.code(), Some("WRONGTYPE" | "CORRUPT"))
    {
        StoreError::Corrupt(e.to_string())
    } else if e.code() == Some("OOM") {
        // `maxmemory` is reached and the policy evicts nothing for this write
        // (`noeviction`, or a `volatile-*` policy with no key to evict).
        // Retrying will not help until memory is freed: not "unavailable".
        StoreError::NotKept(format!(
            "Redis is out of memory and could evict nothing for it: OOM {}",
            e.detail().unwrap_or_default()
        ))
    } else {
        unavailable(e)
    }
}

fn unavailable(e: RedisError) -> StoreError {
    StoreError::unavailable(format!("Redis: {e}"), e)
}

fn unanswered(timeout: Duration, elapsed: tokio::time::error::Elapsed) -> StoreError {
    StoreError::unavailable(format!("Redis did not answer within {timeout:?}"), elapsed)
}

#[cfg(test)]
mod tests;

/// A real `redis-server` for the tests that read in pieces
/// (`conversations/reads.rs`, `chain/reads.rs`). Shared with the
/// integration tests, which need its items `pub`.
#[cfg(test)]
#[path = "../tests/redis_server/mod.rs"]
#[allow(unreachable_pub)]
mod redis_server;
