//! The link to Redis: one server through a reconnecting connection, or a
//! Redis Cluster through a client that follows its layout. Neither connects
//! before its first command, so a store can be made while Redis is down.

use std::sync::{Arc, Mutex, PoisonError};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{
    Cmd, ErrorKind, FromRedisValue, ParsingError, RedisError, RedisResult, ServerErrorKind, Value,
};

/// One server or a cluster. Cloning is cheap and shares the link.
#[derive(Clone)]
pub(super) enum Connection {
    /// One server.
    Single(Arc<Single>),
    /// A Redis Cluster.
    Cluster(ClusterConnection),
}

impl Connection {
    /// Sends `cmd` and reads its reply: to the one server, or to the node
    /// that serves the slot of its keys.
    pub(super) async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> RedisResult<T> {
        match self {
            Connection::Single(single) => single.query(cmd).await,
            Connection::Cluster(cluster) => cmd.query_async(&mut cluster.clone()).await,
        }
    }

    /// `PING`s the server, or every node that serves slots of the cluster;
    /// how many commands that took.
    ///
    /// A cluster's own routing of `PING` skips a node it cannot connect
    /// to, so a dead node would pass where a frozen one fails: the nodes
    /// are asked for by address instead, as a live node lists them (a dead
    /// one stays listed until the cluster fails its slots over).
    pub(super) async fn ping(&self) -> RedisResult<usize> {
        let ping = redis::cmd("PING");
        let cluster = match self {
            Connection::Single(single) => return single.query::<String>(&ping).await.map(|_| 1),
            Connection::Cluster(cluster) => cluster,
        };
        let mut cluster = cluster.clone();
        let slots: Vec<SlotRange> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query_async(&mut cluster)
            .await?;
        let mut nodes: Vec<(String, u16)> = slots.into_iter().map(|s| s.primary).collect();
        nodes.sort();
        nodes.dedup();
        for (host, port) in &nodes {
            let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                host: host.clone(),
                port: *port,
            });
            cluster.route_command(ping.clone(), routing).await?;
        }
        Ok(1 + nodes.len())
    }
}

/// One entry of `CLUSTER SLOTS`: `[start, end, [host, port, id, …],
/// replicas…]`; only the primary's address is read.
struct SlotRange {
    primary: (String, u16),
}

impl FromRedisValue for SlotRange {
    fn from_redis_value(value: Value) -> Result<Self, ParsingError> {
        let unexpected = || ParsingError::from("unexpected CLUSTER SLOTS entry");
        let Value::Array(entry) = value else {
            return Err(unexpected());
        };
        let Some(Value::Array(primary)) = entry.into_iter().nth(2) else {
            return Err(unexpected());
        };
        let mut primary = primary.into_iter();
        let host: String = redis::from_redis_value(primary.next().ok_or_else(unexpected)?)?;
        let port: u16 = redis::from_redis_value(primary.next().ok_or_else(unexpected)?)?;
        Ok(SlotRange {
            primary: (host, port),
        })
    }
}

/// One server, through a [`ConnectionManager`], which reconnects by itself
/// after an I/O error.
///
/// It does not after a connection attempt that failed otherwise (a refused
/// password, a server still loading its data): the manager would then keep
/// that failure for good. Such a failure makes the next command start from a
/// new manager instead, so a server that comes back right, or a user that is
/// created meanwhile, is used without a restart.
pub(super) struct Single {
    client: redis::Client,
    config: ConnectionManagerConfig,
    current: Mutex<Current>,
}

struct Current {
    generation: u64,
    manager: ConnectionManager,
}

impl Single {
    /// A link to the server of `client`, connecting on its first command.
    /// Needs a Tokio runtime.
    pub(super) fn new(client: redis::Client, config: ConnectionManagerConfig) -> RedisResult<Self> {
        let manager = ConnectionManager::new_lazy_with_config(client.clone(), config.clone())?;
        Ok(Self {
            client,
            config,
            current: Mutex::new(Current {
                generation: 0,
                manager,
            }),
        })
    }

    async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> RedisResult<T> {
        let (generation, mut manager) = {
            let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            (current.generation, current.manager.clone())
        };
        let result = cmd.query_async(&mut manager).await;
        if let Err(e) = &result {
            if sticks(e) {
                self.renew(generation);
            }
        }
        result
    }

    /// Replaces the manager of `generation`, unless another command already
    /// did.
    fn renew(&self, generation: u64) {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.generation != generation {
            return;
        }
        // Only a runtime's absence fails this, and `new` already found one.
        if let Ok(manager) =
            ConnectionManager::new_lazy_with_config(self.client.clone(), self.config.clone())
        {
            *current = Current {
                generation: generation + 1,
                manager,
            };
        }
    }
}

/// Whether `e` may be a failed connection attempt that the manager would keep
/// rather than retry: a refused authentication, a server loading its data,
/// a garbled reply. I/O errors it retries by itself.
fn sticks(e: &RedisError) -> bool {
    !e.is_io_error()
        && (e.is_unrecoverable_error()
            || e.kind() == ErrorKind::Server(ServerErrorKind::BusyLoading))
}
