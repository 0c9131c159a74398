//! The bridge's own endpoints: `/healthz` (liveness), `/readyz`
//! (readiness) and `/metrics`, on the main listener or, for `/metrics`, on
//! a listener of their own (`metrics_listen`).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use crate::metrics::{self, Metrics};
use crate::readiness::Readiness;
use crate::upstream::UpstreamBody;

/// An endpoint of the bridge's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `/healthz`: the process serves.
    Health,
    /// `/readyz`: the process should be sent traffic.
    Ready,
    /// `/metrics`.
    Metrics,
}

/// Answers the bridge's own endpoints.
#[derive(Clone)]
pub struct Admin {
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
}

impl Admin {
    /// Endpoints over these metrics and checks.
    pub fn new(metrics: Arc<Metrics>, readiness: Arc<Readiness>) -> Self {
        Self { metrics, readiness }
    }

    /// The endpoint `path` names; `/metrics` only with `with_metrics`.
    pub fn endpoint(path: &str, with_metrics: bool) -> Option<Endpoint> {
        match path {
            "/healthz" => Some(Endpoint::Health),
            "/readyz" => Some(Endpoint::Ready),
            "/metrics" if with_metrics => Some(Endpoint::Metrics),
            _ => None,
        }
    }

    /// The answer of `endpoint`.
    pub async fn answer(&self, endpoint: Endpoint) -> Response<UpstreamBody> {
        match endpoint {
            Endpoint::Health => reply(StatusCode::OK, "text/plain; charset=utf-8", "ok\n".into()),
            Endpoint::Ready => {
                let report = self.readiness.check().await;
                let status = match report.ready() {
                    true => StatusCode::OK,
                    false => StatusCode::SERVICE_UNAVAILABLE,
                };
                reply(status, "application/json", report.to_json())
            }
            Endpoint::Metrics => {
                reply(StatusCode::OK, metrics::CONTENT_TYPE, self.metrics.render())
            }
        }
    }

    /// Serves `/metrics`, `/healthz` and `/readyz` on `listener` (other
    /// paths are 404) until `shutdown` resolves. Plain HTTP/1.1, one small
    /// request at a time per connection, a request head within
    /// `header_read_timeout`.
    pub async fn serve(
        self,
        listener: TcpListener,
        header_read_timeout: Duration,
        shutdown: impl Future<Output = ()>,
    ) {
        tokio::pin!(shutdown);
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::debug!(error = %e, "metrics listener: accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut shutdown => return,
            };
            let admin = self.clone();
            let service = hyper::service::service_fn(move |request: Request<_>| {
                let admin = admin.clone();
                async move {
                    let response = match Admin::endpoint(request.uri().path(), true) {
                        Some(endpoint) => admin.answer(endpoint).await,
                        None => reply(
                            StatusCode::NOT_FOUND,
                            "text/plain; charset=utf-8",
                            "not found: this address serves /metrics, /healthz and /readyz\n"
                                .into(),
                        ),
                    };
                    Ok::<_, Infallible>(response)
                }
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_read_timeout)
                .serve_connection(TokioIo::new(stream), service);
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "metrics connection ended with an error");
                }
            });
        }
    }
}

fn reply(status: StatusCode, content_type: &'static str, body: String) -> Response<UpstreamBody> {
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|e| match e {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
