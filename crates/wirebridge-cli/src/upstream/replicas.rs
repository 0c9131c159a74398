//! The upstream the app sends to: one server, or the replicas of one
//! backend behind [`Replicas`], with their events counted and logged.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use tower::ServiceExt;
use wirebridge_tower::{Affinity, BoxError, ReplicaEvents, ReplicaHealth, Replicas, RequestBody};
use wirebridge_wire::error::{ApiError, ErrorBody};

use super::resolve::{options_for, Resolved, Resolver};
use super::{Outgoing, Upstream, UpstreamBody, UpstreamOptions};
use crate::config::{ReplicaSettings, UpstreamUrl};
use crate::metrics::Metrics;

/// Where requests go: one upstream, as it always was, or several
/// replicas, each conversation kept on one of them.
#[derive(Clone)]
pub enum Backend {
    /// One server.
    One(Upstream),
    /// The replicas of one backend.
    Replicas(Spread),
}

/// The replicas, and how much of a request passed through untranslated is
/// read to key it.
#[derive(Clone)]
pub struct Spread {
    replicas: Replicas<Upstream>,
    /// A pass-through JSON request that says it is at most this long is
    /// read whole and keyed by its prefix (the body limit).
    max_keyed_body: usize,
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
        max_keyed_body: usize,
    ) -> Self {
        let replicas = urls
            .iter()
            .map(|url| {
                // The URI holds no userinfo: the name is safe to hash and
                // the same in every process given the same list.
                let options = options_for(url, key, options);
                (url.uri.to_string(), Upstream::new(&url.uri, options))
            })
            .collect();
        Self::spread(replicas, options, settings, max_keyed_body)
    }

    /// The replicas the names of `urls` resolve to, resolved again every
    /// `every` by `resolver`: each address one replica. Until the first
    /// answer, each URL is one replica as it is.
    pub fn resolved(
        urls: &[UpstreamUrl],
        key: Option<&str>,
        options: &UpstreamOptions,
        settings: &ReplicaSettings,
        max_keyed_body: usize,
        resolver: Arc<dyn Resolver>,
        every: Duration,
    ) -> Self {
        let (key, shared) = (key.map(str::to_owned), options.clone());
        let resolved = Resolved::new(urls.to_vec(), resolver, move |url, dns| {
            Upstream::at(&url.uri, options_for(url, key.as_deref(), &shared), dns)
        });
        let backend = Self::spread(resolved.unresolved(), options, settings, max_keyed_body);
        if let Backend::Replicas(spread) = &backend {
            resolved.spawn(spread.replicas.clone(), every);
        }
        backend
    }

    fn spread(
        replicas: Vec<(String, Upstream)>,
        options: &UpstreamOptions,
        settings: &ReplicaSettings,
        max_keyed_body: usize,
    ) -> Self {
        let reports = Reports {
            metrics: Arc::clone(&options.metrics),
        };
        let replicas = Replicas::new(replicas)
            .load_factor(settings.load_factor)
            .move_slack(settings.move_slack)
            .eject_after(settings.eject_after)
            .backoff(settings.backoff)
            .events(reports);
        if let Some(every) = settings.probe_every {
            super::probe::spawn(replicas.clone(), every);
        }
        Backend::Replicas(Spread {
            replicas,
            max_keyed_body,
        })
    }

    /// The replicas' health, when there are several.
    pub fn health(&self) -> Option<ReplicaHealth> {
        match self {
            Backend::One(_) => None,
            Backend::Replicas(spread) => Some(spread.replicas.health()),
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
            Backend::Replicas(spread) => {
                if keyable(&request, spread.max_keyed_body) {
                    let replicas = spread.replicas.clone();
                    return Box::pin(async move {
                        let request = match keyed(request).await {
                            Ok(request) => request,
                            Err(unread) => return Ok(unread),
                        };
                        let response = replicas.oneshot(request).await?;
                        Ok(response.map(|body| body.boxed_unsync()))
                    });
                }
                let answer = spread.replicas.call(request);
                Box::pin(async move {
                    let response = answer.await?;
                    Ok(response.map(|body| body.boxed_unsync()))
                })
            }
        }
    }
}

/// Whether a request that comes without a key (passed through: a Chat
/// client on a Chat backend, say; or translated, naming no conversation)
/// is read to key it: a JSON `POST` that says how long it is, within
/// `limit`, or whatever its length when the layers wrote it (its bytes are
/// held already). Anything else (a stream of unknown length, a `GET`) goes
/// round-robin, as it is.
fn keyable(request: &Request<Outgoing>, limit: usize) -> bool {
    let headers = request.headers();
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("json"));
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    request.method() == Method::POST
        && request.extensions().get::<Affinity>().is_none()
        && json
        && (length.is_some_and(|length| length <= limit) || request.body().replay().is_some())
}

/// The request read whole, with the key of its prefix: the body is then
/// one that can be sent again, to the next replica when the first cannot
/// be reached. A body that cannot be read is answered at once.
async fn keyed(request: Request<Outgoing>) -> Result<Request<Outgoing>, Response<UpstreamBody>> {
    let (mut parts, body) = request.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return Err(unreadable(&e)),
    };
    if let Some(affinity) = Affinity::of_body(&bytes) {
        parts.extensions.insert(affinity);
    }
    Ok(Request::from_parts(parts, RequestBody::translated(bytes)))
}

/// The 400 for a client body that could not be read (the client went
/// away, or sent less than it said).
fn unreadable(e: &BoxError) -> Response<UpstreamBody> {
    let body = ErrorBody {
        error: ApiError {
            message: format!("the request body could not be read: {e}").into(),
            kind: "invalid_request_error".into(),
            param: None,
            code: Some("body_read_error".into()),
        },
    };
    let body = serde_json::to_vec(&body).expect("error bodies always serialize");
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|e| match e {})
            .boxed_unsync(),
    );
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
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
            "a conversation moved off a replica past the bound on load and the move slack"
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

    fn joined(&self, replica: usize) {
        self.metrics.replica_joined(replica);
        tracing::info!(replica, "an address of the upstream joined the replicas");
    }

    fn left(&self, replica: usize) {
        self.metrics.replica_left(replica);
        tracing::info!(
            replica,
            "an address of the upstream left the replicas: its conversations are placed again"
        );
    }
}

#[cfg(test)]
mod tests;
