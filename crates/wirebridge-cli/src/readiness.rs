//! Whether the bridge should be sent traffic: `GET /readyz`.
//!
//! `/healthz` answers as long as the process serves at all (liveness);
//! `/readyz` turns not ready as soon as a shutdown begins, so that a load
//! balancer stops sending new requests while open ones finish. It also asks
//! the response store, but a store that does not answer leaves the replica
//! ready (`degraded`): every request that needs no stored state is still
//! served, and taking every replica out for one Redis outage would refuse
//! those too. Requests that do need the store are answered 503
//! `store_unavailable` meanwhile.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use wirebridge_store::RedisStore;

/// What `/readyz` checks.
pub struct Readiness {
    draining: AtomicBool,
    /// The Redis store, asked on every check; the memory store is always
    /// there, and no store needs no check.
    redis: Option<Arc<RedisStore>>,
}

/// One check's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// A shutdown has begun.
    pub draining: bool,
    /// The store's state: `ok`, `unavailable`, or `none` without a store
    /// to ask.
    pub store: &'static str,
}

impl Report {
    /// Whether traffic may be sent: until a shutdown begins.
    pub fn ready(&self) -> bool {
        !self.draining
    }

    /// `ready`, `degraded` (ready, but the store does not answer: stateless
    /// requests are served) or `not_ready` (draining).
    pub fn status(&self) -> &'static str {
        match (self.ready(), self.store) {
            (false, _) => "not_ready",
            (true, "unavailable") => "degraded",
            (true, _) => "ready",
        }
    }

    /// The body of `/readyz`.
    pub fn to_json(self) -> String {
        format!(
            "{{\"status\":\"{}\",\"draining\":{},\"store\":\"{}\"}}\n",
            self.status(),
            self.draining,
            self.store
        )
    }
}

impl Readiness {
    /// Checks `redis` when there is one.
    pub fn new(redis: Option<Arc<RedisStore>>) -> Self {
        Self {
            draining: AtomicBool::new(false),
            redis,
        }
    }

    /// From now on, not ready.
    pub fn drain(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// Asks the store (a `PING`, within the store timeout) and reports.
    pub async fn check(&self) -> Report {
        let draining = self.draining.load(Ordering::Relaxed);
        let store = match &self.redis {
            None => "none",
            Some(redis) => match redis.ping().await {
                Ok(()) => "ok",
                Err(_) => "unavailable",
            },
        };
        Report { draining, store }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn draining_is_not_ready() {
        let readiness = Readiness::new(None);
        let report = readiness.check().await;
        assert!(report.ready());
        assert_eq!(
            report.to_json(),
            "{\"status\":\"ready\",\"draining\":false,\"store\":\"none\"}\n"
        );
        readiness.drain();
        let report = readiness.check().await;
        assert!(!report.ready());
        assert_eq!(
            report.to_json(),
            "{\"status\":\"not_ready\",\"draining\":true,\"store\":\"none\"}\n"
        );
    }

    #[tokio::test]
    async fn an_unreachable_redis_leaves_the_replica_ready_but_degraded() {
        // Nothing listens on port 1 of loopback: the ping fails at once.
        let store = RedisStore::builder("redis://127.0.0.1:1/0")
            .timeout(std::time::Duration::from_millis(500))
            .build()
            .unwrap();
        let readiness = Readiness::new(Some(Arc::new(store)));
        let report = readiness.check().await;
        assert_eq!(report.store, "unavailable");
        assert!(report.ready());
        assert_eq!(
            report.to_json(),
            "{\"status\":\"degraded\",\"draining\":false,\"store\":\"unavailable\"}\n"
        );
    }
}
