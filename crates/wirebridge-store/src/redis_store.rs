//! The Redis (or Valkey) store: shared by every bridge replica that points at
//! the same server, and kept across restarts.

mod record;

use std::fmt;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Cmd, ErrorKind, FromRedisValue, RedisError};

use crate::{BoxFuture, ResponseStore, StoreError, StoredResponse};

/// Keeps responses on a Redis 7 or Valkey server.
///
/// Each record is one string value, compact JSON, under the key
/// `{prefix}:{tenant}:{id}` (prefix [`DEFAULT_PREFIX`](Self::DEFAULT_PREFIX)
/// unless [`prefix`](Self::prefix) says otherwise), written with `SET … EX`
/// so the server forgets it after the [`ttl`](Self::ttl) (default
/// [`DEFAULT_TTL`](Self::DEFAULT_TTL), 30 days). In the tenant part of the
/// key, `%` and `:` are written `%25` and `%3A`, so no two (tenant, id) pairs
/// share a key. Only `SET`, `GET` and `DEL` are used. Eviction under memory
/// pressure is the server's (`maxmemory-policy`, e.g. `volatile-ttl`); a
/// save the server refuses for want of memory (`noeviction`) fails with
/// [`StoreError::NotKept`].
///
/// The connection reconnects by itself. While the server cannot be reached,
/// each operation fails with [`StoreError::Unavailable`] within
/// [`DEFAULT_TIMEOUT`](Self::DEFAULT_TIMEOUT) (2 s; see
/// [`connect_with_timeout`](Self::connect_with_timeout)) rather than waiting,
/// and the first operation after the server is back succeeds. An operation
/// that meets a dropped connection is tried once more on a fresh one.
///
/// Needs a Tokio runtime. Cloning is cheap and shares the connection.
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    prefix: String,
    ttl: Duration,
    timeout: Duration,
}

impl RedisStore {
    /// The default key prefix.
    pub const DEFAULT_PREFIX: &'static str = "wirebridge:resp";
    /// The default time a record lives: 30 days.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 24 * 60 * 60);
    /// The default bound on connecting, on each server reply, and on each
    /// store operation as a whole: 2 seconds.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
    /// The longest TTL written; longer ones are shortened to it.
    pub const MAX_TTL: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

    /// Connects to the server at `url`
    /// (`redis://[user:password@]host[:port][/db]`, `valkey://…` alike, or
    /// `redis+unix:///path/to/socket`; TLS is not built in), with
    /// [`DEFAULT_TIMEOUT`](Self::DEFAULT_TIMEOUT).
    ///
    /// Fails with [`StoreError::Unavailable`] when the URL is invalid or the
    /// server does not answer in time: the message never repeats the URL,
    /// which may hold a password.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with_timeout(url, Self::DEFAULT_TIMEOUT).await
    }

    /// Like [`connect`](Self::connect), with `timeout` bounding the connection,
    /// each reply and each store operation instead of the default.
    pub async fn connect_with_timeout(url: &str, timeout: Duration) -> Result<Self, StoreError> {
        let client = redis::Client::open(url)
            .map_err(|e| StoreError::Unavailable(format!("invalid Redis URL: {e}")))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            // Every failing operation starts a new attempt: no backoff loop
            // that operations would wait behind.
            .set_number_of_retries(0);
        let connection =
            tokio::time::timeout(timeout, ConnectionManager::new_with_config(client, config))
                .await
                .map_err(|_| unanswered(timeout))?
                .map_err(unavailable)?;
        Ok(Self {
            connection,
            prefix: Self::DEFAULT_PREFIX.to_owned(),
            ttl: Self::DEFAULT_TTL,
            timeout,
        })
    }

    /// Puts keys under `prefix` instead of [`DEFAULT_PREFIX`](Self::DEFAULT_PREFIX),
    /// e.g. to share one server between deployments.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Has the server forget each record `ttl` after it was saved: rounded up
    /// to whole seconds, at least 1 s, at most [`MAX_TTL`](Self::MAX_TTL).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    fn key(&self, tenant: &str, id: &str) -> String {
        key(&self.prefix, tenant, id)
    }

    /// Runs `cmd`, trying once more if the connection had dropped, all within
    /// the timeout.
    async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T, StoreError> {
        let mut connection = self.connection.clone();
        let attempts = async {
            match cmd.query_async(&mut connection).await {
                Err(e) if e.is_io_error() || e.is_unrecoverable_error() => {
                    cmd.query_async(&mut connection).await
                }
                result => result,
            }
        };
        match tokio::time::timeout(self.timeout, attempts).await {
            Ok(result) => result.map_err(store_error),
            Err(_) => Err(unanswered(self.timeout)),
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

impl ResponseStore for RedisStore {
    fn save<'a>(
        &'a self,
        tenant: &'a str,
        response: StoredResponse,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("SET");
            cmd.arg(self.key(tenant, &response.id))
                .arg(record::encode(&response))
                .arg("EX")
                .arg(ttl_seconds(self.ttl));
            self.query::<()>(&cmd).await
        })
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredResponse>, StoreError>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("GET");
            cmd.arg(self.key(tenant, id));
            match self.query::<Option<Vec<u8>>>(&cmd).await? {
                Some(value) => record::decode(id, &value).map(Some),
                None => Ok(None),
            }
        })
    }

    fn delete<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("DEL");
            cmd.arg(self.key(tenant, id));
            Ok(self.query::<u64>(&cmd).await? > 0)
        })
    }
}

/// `{prefix}:{tenant}:{id}`, with `%` and `:` escaped in the tenant so the
/// tenant part ends at the first `:` after the prefix.
fn key(prefix: &str, tenant: &str, id: &str) -> String {
    let mut key = String::with_capacity(prefix.len() + tenant.len() + id.len() + 2);
    key.push_str(prefix);
    key.push(':');
    for c in tenant.chars() {
        match c {
            '%' => key.push_str("%25"),
            ':' => key.push_str("%3A"),
            c => key.push(c),
        }
    }
    key.push(':');
    key.push_str(id);
    key
}

/// The `EX` argument for `ttl`.
fn ttl_seconds(ttl: Duration) -> u64 {
    let ttl = ttl.min(RedisStore::MAX_TTL);
    let seconds = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    seconds.max(1)
}

/// A value of the wrong shape is a corrupt record; a write refused for want
/// of memory was not kept (Redis refuses only writes so); anything else means
/// the store cannot serve now.
fn store_error(e: RedisError) -> StoreError {
    if matches!(e.kind(), ErrorKind::UnexpectedReturnType | ErrorKind::Parse)
        || e.code() == Some("WRONGTYPE")
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
    StoreError::Unavailable(format!("Redis: {e}"))
}

fn unanswered(timeout: Duration) -> StoreError {
    StoreError::Unavailable(format!("Redis did not answer within {timeout:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_seconds_round_up_and_are_bounded() {
        assert_eq!(ttl_seconds(Duration::ZERO), 1);
        assert_eq!(ttl_seconds(Duration::from_millis(1)), 1);
        assert_eq!(ttl_seconds(Duration::from_millis(1500)), 2);
        assert_eq!(ttl_seconds(Duration::from_secs(60)), 60);
        assert_eq!(ttl_seconds(Duration::MAX), RedisStore::MAX_TTL.as_secs());
    }

    #[test]
    fn keys_are_namespaced_and_unambiguous() {
        assert_eq!(
            key("wirebridge:resp", "abc", "resp_1"),
            "wirebridge:resp:abc:resp_1"
        );
        assert_ne!(key("p", "a:b", "c"), key("p", "a", "b:c"));
        assert_ne!(key("p", "a%3Ab", "c"), key("p", "a:b", "c"));
        assert_eq!(key("p", "a:b%", "c:d"), "p:a%3Ab%25:c:d");
    }
}
