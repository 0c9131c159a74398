//! The upstream the app sends to: one server, or the replicas of one
//! backend behind [`Replicas`], with their events counted and logged.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response, Uri};
use http_body_util::BodyExt;
use wirebridge_tower::{ReplicaEvents, ReplicaHealth, Replicas};

use super::{authorization, Outgoing, Upstream, UpstreamBody, UpstreamOptions};
use crate::config::{ReplicaSettings, UpstreamUrl};
use crate::metrics::Metrics;

/// Where requests go: one upstream, as it always was, or several
/// replicas, each conversation kept on one of them.
#[derive(Clone)]
pub enum Backend {
    /// One server.
    One(Upstream),
    /// The replicas of one backend.
    Replicas(Replicas<Upstream>),
}

impl Backend {
    /// One upstream at `base`.
    pub fn one(base: &Uri, options: UpstreamOptions) -> Self {
        Backend::One(Upstream::new(base, options))
    }

    /// The replicas at `urls`, each sent its own credentials (unless a key
    /// is configured for all of them), with their metrics and logs.
    pub fn replicas(
        urls: &[UpstreamUrl],
        key: Option<&str>,
        options: &UpstreamOptions,
        settings: &ReplicaSettings,
    ) -> Self {
        let replicas = urls
            .iter()
            .map(|url| {
                let options = UpstreamOptions {
                    authorization: authorization(key, url.credentials.as_ref()),
                    ..options.clone()
                };
                // The URI holds no userinfo: the name is safe to hash and
                // the same in every process given the same list.
                (url.uri.to_string(), Upstream::new(&url.uri, options))
            })
            .collect();
        let reports = Reports {
            metrics: Arc::clone(&options.metrics),
        };
        Backend::Replicas(
            Replicas::new(replicas)
                .load_factor(settings.load_factor)
                .eject_after(settings.eject_after)
                .backoff(settings.backoff)
                .events(reports),
        )
    }

    /// The replicas' health, when there are several.
    pub fn health(&self) -> Option<ReplicaHealth> {
        match self {
            Backend::One(_) => None,
            Backend::Replicas(replicas) => Some(replicas.health()),
        }
    }
}

impl tower::Service<Request<Outgoing>> for Backend {
    type Response = Response<UpstreamBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Outgoing>) -> Self::Future {
        match self {
            Backend::One(upstream) => upstream.call(request),
            Backend::Replicas(replicas) => {
                let answer = replicas.call(request);
                Box::pin(async move {
                    let response = answer.await?;
                    Ok(response.map(|body| body.boxed_unsync()))
                })
            }
        }
    }
}

/// Each replica's events, counted in the metrics and logged with the
/// replica's index (never its address: it may hold credentials).
struct Reports {
    metrics: Arc<Metrics>,
}

impl ReplicaEvents for Reports {
    fn started(&self, replica: usize) {
        self.metrics.replica_started(replica);
        tracing::debug!(replica, "request sent to a replica");
    }

    fn finished(&self, replica: usize) {
        self.metrics.replica_finished(replica);
    }

    fn spilled(&self, from: usize, to: usize) {
        self.metrics.replica_spilled(from);
        tracing::info!(
            replica = from,
            to,
            "a replica over the bound on load passed a conversation on"
        );
    }

    fn failed_over(&self, from: usize, to: usize) {
        self.metrics.replica_failed_over(from);
        tracing::warn!(
            replica = from,
            to,
            "a replica could not be reached: the request goes to the next"
        );
    }

    fn ejected(&self, replica: usize, failures: usize) {
        self.metrics.replica_ejected(replica);
        tracing::warn!(
            replica,
            failures,
            "a replica failed too often in a row: left out for the back-off"
        );
    }

    fn returned(&self, replica: usize) {
        tracing::info!(replica, "a replica's back-off is over: it is tried again");
    }
}
