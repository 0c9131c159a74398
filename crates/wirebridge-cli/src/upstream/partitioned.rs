//! hyper-util pooled clients for an `https://` upstream, one for each
//! client credential, so that its connections are kept apart exactly as
//! [`pool`](super::pool) keeps a plain upstream's.
//!
//! hyper-util keys its pool by scheme and authority alone: every client of
//! the bridge would share the same kept-alive connections. HTTP/1.1 pairs
//! an answer with its request by order only, so an upstream that writes an
//! answer nobody asked for, late enough that the next request has already
//! gone down the connection, hands that answer to whoever sent the next
//! request. With a pool per [`Partition`], that can only ever be the same
//! credential's request.
//!
//! Every client is built on one connector, and so on one TLS configuration
//! and its session cache: a new connection of any partition resumes the
//! session of an earlier one. At most [`MAX_PARTITIONS`] clients are kept;
//! the one used least recently makes room for a new one, and its idle
//! connections are closed with it (those still carrying an exchange end
//! with it).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::Connect;
use hyper_util::client::legacy::{Client, Error};
use hyper_util::rt::TokioExecutor;

use super::pool::Partition;
use super::Outgoing;

/// Partitions whose pooled clients are kept at once, at most.
pub const MAX_PARTITIONS: usize = 256;

/// One hyper-util client, and its pool, per partition of credentials.
pub struct Partitioned<C> {
    connector: C,
    keep_idle: Duration,
    max_partitions: usize,
    clients: Mutex<Clients<C>>,
}

/// The clients made so far, and the clock that orders their use.
struct Clients<C> {
    by_partition: HashMap<Partition, Used<C>>,
    clock: u64,
}

/// A client, and when it was last asked for.
struct Used<C> {
    client: Client<C, Outgoing>,
    at: u64,
}

impl<C> Partitioned<C>
where
    C: Connect + Clone + Send + Sync + 'static,
{
    /// Clients connecting through `connector`, keeping their connections
    /// idle for up to `keep_idle`, [`MAX_PARTITIONS`] clients at most.
    pub fn new(connector: C, keep_idle: Duration) -> Self {
        Self::with_limit(connector, keep_idle, MAX_PARTITIONS)
    }

    /// Clients of at most `max_partitions` partitions.
    pub fn with_limit(connector: C, keep_idle: Duration, max_partitions: usize) -> Self {
        Self {
            connector,
            keep_idle,
            max_partitions: max_partitions.max(1),
            clients: Mutex::new(Clients {
                by_partition: HashMap::new(),
                clock: 0,
            }),
        }
    }

    /// Sends `request` over a connection of its [`Partition`] (none set:
    /// the partition of requests without credentials).
    pub async fn request(&self, request: Request<Outgoing>) -> Result<Response<Incoming>, Error> {
        let partition = request
            .extensions()
            .get::<Partition>()
            .copied()
            .unwrap_or_default();
        self.client(partition).request(request).await
    }

    /// The client of `partition`, made when there is none.
    fn client(&self, partition: Partition) -> Client<C, Outgoing> {
        let mut evicted = None;
        let mut clients = lock(&self.clients);
        clients.clock += 1;
        let now = clients.clock;
        if let Some(used) = clients.by_partition.get_mut(&partition) {
            used.at = now;
            return used.client.clone();
        }
        if clients.by_partition.len() >= self.max_partitions {
            let oldest = clients
                .by_partition
                .iter()
                .min_by_key(|(_, used)| used.at)
                .map(|(partition, _)| *partition);
            evicted = oldest.and_then(|p| clients.by_partition.remove(&p));
        }
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(self.keep_idle)
            .build(self.connector.clone());
        clients.by_partition.insert(
            partition,
            Used {
                client: client.clone(),
                at: now,
            },
        );
        drop(clients);
        // Its idle connections are closed outside the lock.
        drop(evicted);
        client
    }

    /// How many partitions have a client now.
    #[cfg(test)]
    fn partitions(&self) -> usize {
        lock(&self.clients).by_partition.len()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper_util::client::legacy::connect::HttpConnector;

    fn partitioned(max: usize) -> Partitioned<HttpConnector> {
        Partitioned::with_limit(HttpConnector::new(), Duration::from_secs(90), max)
    }

    #[test]
    fn one_partition_always_gets_the_same_client_and_two_get_two() {
        let clients = partitioned(4);
        clients.client(Partition(1));
        clients.client(Partition(1));
        assert_eq!(clients.partitions(), 1);
        clients.client(Partition(2));
        assert_eq!(clients.partitions(), 2);
    }

    #[test]
    fn the_partition_used_least_recently_makes_room() {
        let clients = partitioned(2);
        clients.client(Partition(1));
        clients.client(Partition(2));
        // 1 is used again: 2 is now the one used least recently.
        clients.client(Partition(1));
        clients.client(Partition(3));
        assert_eq!(clients.partitions(), 2);
        let kept = lock(&clients.clients);
        assert!(kept.by_partition.contains_key(&Partition(1)));
        assert!(kept.by_partition.contains_key(&Partition(3)));
        assert!(!kept.by_partition.contains_key(&Partition(2)));
    }
}
