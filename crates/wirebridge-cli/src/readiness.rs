//! Whether the bridge should be sent traffic: `GET /readyz`.
//!
//! `/healthz` answers as long as the process serves at all (liveness);
//! `/readyz` turns not ready as soon as a shutdown begins, so that a load
//! balancer stops sending new requests while open ones finish. It also asks
//! the response store, but a store that does not answer leaves the replica
//! ready (`degraded`): every request that needs no stored state is still
//! served, and taking every replica out for one Redis outage would refuse
//! those too. Requests that do need the store are answered 503
//! `store_unavailable` meanwhile. With several upstream replicas, it is
//! ready while at least one of them is (neither ejected nor failing as
//! often as ejects): with none, every translated request would fail.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use wirebridge_store::RedisStore;
use wirebridge_tower::ReplicaHealth;

/// What `/readyz` checks.
pub struct Readiness {
    draining: AtomicBool,
    /// The Redis store, asked on every check; the memory store is always
    /// there, and no store needs no check.
    redis: Option<Arc<RedisStore>>,
    /// The upstream replicas' health, when there are several.
    replicas: Option<ReplicaHealth>,
}

/// One check's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// A shutdown has begun.
    pub draining: bool,
    /// The store's state: `ok`, `unavailable`, or `none` without a store
    /// to ask.
    pub store: &'static str,
    /// With several upstream replicas: how many are ready, of how many.
    pub replicas: Option<(usize, usize)>,
}

impl Report {
    /// Whether traffic may be sent: until a shutdown begins, and while
    /// a replica (if there are several) is ready.
    pub fn ready(&self) -> bool {
        !self.draining && self.replicas.is_none_or(|(ready, _)| ready > 0)
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
        let replicas = match self.replicas {
            Some((ready, total)) => {
                format!(",\"replicas\":{{\"ready\":{ready},\"total\":{total}}}")
            }
            None => String::new(),
        };
        format!(
            "{{\"status\":\"{}\",\"draining\":{},\"store\":\"{}\"{replicas}}}\n",
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
            replicas: None,
        }
    }

    /// Also asks the upstream replicas' health, when there are several.
    pub fn replicas(mut self, replicas: Option<ReplicaHealth>) -> Self {
        self.replicas = replicas;
        self
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
        let replicas = self.replicas.as_ref().map(|health| {
            let ready = health.ready();
            (ready.iter().filter(|r| **r).count(), ready.len())
        });
        Report {
            draining,
            store,
            replicas,
        }
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
    async fn ready_while_a_replica_is() {
        use bytes::Bytes;
        use http::{Request, Response, StatusCode};
        use http_body_util::Full;
        use tower::ServiceExt;
        use wirebridge_tower::{Affinity, Replicas, RequestBody};

        let failing = tower::service_fn(|_: Request<RequestBody<Full<Bytes>>>| async {
            let mut response = Response::new(Full::new(Bytes::new()));
            *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            Ok::<_, std::convert::Infallible>(response)
        });
        let replicas = Replicas::new(vec![
            ("http://a:1/v1".to_owned(), failing),
            ("http://b:1/v1".to_owned(), failing),
        ])
        .eject_after(1);
        let readiness = Readiness::new(None).replicas(Some(replicas.health()));
        let report = readiness.check().await;
        assert!(report.ready());
        assert_eq!(
            report.to_json(),
            "{\"status\":\"ready\",\"draining\":false,\"store\":\"none\",\"replicas\":{\"ready\":2,\"total\":2}}\n"
        );
        // Both fail: one is ejected, the other (half the set is the most
        // left out) stays in but is not ready.
        for n in 0..2 {
            let mut request = Request::new(RequestBody::translated(Bytes::new()));
            request
                .extensions_mut()
                .insert(Affinity::conversation(&format!("c{n}")));
            let _ = replicas.clone().oneshot(request).await;
            let mut request = Request::new(RequestBody::translated(Bytes::new()));
            request
                .extensions_mut()
                .insert(Affinity::conversation(&format!("c{n}")));
            let _ = replicas.clone().oneshot(request).await;
        }
        let report = readiness.check().await;
        assert_eq!(report.replicas, Some((0, 2)));
        assert!(!report.ready());
        assert_eq!(report.status(), "not_ready");
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
