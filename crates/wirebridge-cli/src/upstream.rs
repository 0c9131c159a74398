//! The service that sends requests on to the upstream over HTTP(S).
//!
//! A plain `http://` upstream is spoken to over connections of the
//! bridge's own: [`pool`] keeps them between exchanges, [`connection`]
//! sends one request on one and drives it from the response body, over a
//! [`transport`] the pool can look into; [`rewrite`] maps the request
//! target and keeps each connection's own headers to it. An `https://`
//! upstream goes through hyper-util's pooled clients, one for each client
//! credential ([`partitioned`]), with the TLS settings [`tls`] makes. Several upstream URLs are replicas of one backend, which
//! [`replicas`] puts behind one service.

mod connection;
mod partitioned;
mod pool;
mod probe;
mod replicas;
pub mod resolve;
mod rewrite;
mod session;
mod tls;
mod transport;

use std::convert::Infallible;
use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use bytes::Bytes;
use http::{header, HeaderValue, Request, Response, StatusCode, Uri};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use wirebridge_tower::{BoxError, NotSent, RequestBody};
use wirebridge_wire::error::{ApiError, ErrorBody};

use crate::config::Credentials;
use crate::idle_body::IdleBody;
use crate::metrics::Metrics;
use crate::server::ClientBody;
use partitioned::Partitioned;
use pool::{Partition, Pool};
pub use replicas::Backend;
use resolve::Dns;
use rewrite::Target;
pub use tls::{client_config, UpstreamTlsError};

/// Bodies sent back by the upstream service.
pub type UpstreamBody = UnsyncBoxBody<Bytes, BoxError>;

/// The body of a request sent upstream.
type Outgoing = RequestBody<ClientBody>;

/// How long a kept-alive upstream connection may wait for its next request.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// How the upstream is reached, and how clients are told about it.
#[derive(Debug, Clone)]
pub struct UpstreamOptions {
    /// Sent instead of the client's `authorization`, when set.
    pub authorization: Option<HeaderValue>,
    /// Sent as `x-api-key` instead of the client's credentials, when set
    /// (a configured key for a backend that reads Anthropic's header).
    pub api_key: Option<HeaderValue>,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long the upstream may take to send its response head (for a
    /// body, that is the whole generation).
    pub first_byte_timeout: Duration,
    /// How long the upstream may send nothing while sending a body.
    pub idle_timeout: Duration,
    /// How error bodies name the upstream: its address is internal.
    pub label: Arc<str>,
    /// Where upstream failures are counted.
    pub metrics: Arc<Metrics>,
    /// The TLS settings of an `https://` upstream ([`client_config`]).
    pub tls: rustls::ClientConfig,
    /// The header that carries a digest of each request's conversation
    /// key (the profile's `session_header`), when set.
    pub session_header: Option<header::HeaderName>,
}

#[cfg(test)]
impl UpstreamOptions {
    /// What the upstream tests reach their local servers with: no keys,
    /// five seconds for everything, metrics for `replicas` replicas.
    pub(crate) fn for_tests(replicas: usize) -> Self {
        UpstreamOptions {
            authorization: None,
            api_key: None,
            connect_timeout: Duration::from_secs(5),
            first_byte_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(5),
            label: "the upstream".into(),
            metrics: Arc::new(Metrics::new(4).with_replicas(replicas)),
            tls: client_config(&crate::config::UpstreamTlsFiles::default())
                .expect("the public roots make a TLS configuration"),
            session_header: None,
        }
    }
}

/// Anthropic's credential header.
const X_API_KEY: header::HeaderName = header::HeaderName::from_static("x-api-key");

/// A configured key as the `x-api-key` header, marked sensitive.
pub fn api_key(key: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(key).ok().map(|mut value| {
        value.set_sensitive(true);
        value
    })
}

/// The `authorization` the upstream is sent: a configured key (`Bearer`)
/// wins over the credentials of the upstream URL (`Basic`); with neither,
/// the client's own is forwarded. Marked sensitive, so that it is never
/// printed.
pub fn authorization(key: Option<&str>, credentials: Option<&Credentials>) -> Option<HeaderValue> {
    let text = match (key, credentials) {
        (Some(key), _) => format!("Bearer {key}"),
        (None, Some(credentials)) => format!("Basic {}", BASE64.encode(credentials.basic_pair())),
        (None, None) => return None,
    };
    HeaderValue::from_str(&text).ok().map(|mut value| {
        value.set_sensitive(true);
        value
    })
}

/// Sends each request to the upstream: `/v1/X` becomes `<base>/X`. A plain
/// `http://` upstream is spoken to over connections each exchange drives
/// itself ([`pool`]); an `https://` one through hyper-util's pooled
/// clients (TLS, and HTTP/2 when the upstream offers it). Either way a
/// connection only ever carries the requests of one client credential.
#[derive(Clone)]
pub struct Upstream {
    // Shared: the service is cloned for every request (by the layers above
    // it, and for the future it returns), and a clone is one count.
    shared: Arc<Shared>,
}

/// What every clone of an [`Upstream`] uses.
struct Shared {
    client: Partitioned<HttpsConnector<HttpConnector<Dns>>>,
    direct: Option<Pool<HttpConnector<Dns>>>,
    target: Target,
    authorization: Option<HeaderValue>,
    api_key: Option<HeaderValue>,
    session_header: Option<header::HeaderName>,
    label: Arc<str>,
    first_byte_timeout: Duration,
    idle_timeout: Duration,
    metrics: Arc<Metrics>,
    /// Hashes clients' credentials into the pools' partitions.
    partitions: RandomState,
}

impl Upstream {
    /// A client for `base` (`http://localhost:8000/v1`, without userinfo).
    pub fn new(base: &Uri, options: UpstreamOptions) -> Self {
        Self::at(base, options, Dns::System)
    }

    /// A client for `base` whose connections go where `dns` says: one
    /// address of a name that resolves to several, each a replica, while
    /// the `Host` header and the TLS server name stay the name.
    pub fn at(base: &Uri, options: UpstreamOptions, dns: Dns) -> Self {
        let mut http = HttpConnector::new_with_resolver(dns);
        http.enforce_http(false);
        http.set_connect_timeout(Some(options.connect_timeout));
        http.set_nodelay(true);
        let direct = (base.scheme() == Some(&http::uri::Scheme::HTTP))
            .then(|| Pool::new(http.clone(), POOL_IDLE_TIMEOUT));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(options.tls)
            .https_or_http()
            .enable_all_versions()
            .wrap_connector(http);
        let client = Partitioned::new(https, POOL_IDLE_TIMEOUT);
        let shared = Shared {
            client,
            direct,
            target: Target::new(base),
            authorization: options.authorization,
            api_key: options.api_key,
            session_header: options.session_header,
            label: options.label,
            first_byte_timeout: options.first_byte_timeout,
            idle_timeout: options.idle_timeout,
            metrics: options.metrics,
            partitions: RandomState::new(),
        };
        Self {
            shared: Arc::new(shared),
        }
    }
}

impl tower::Service<Request<Outgoing>> for Upstream {
    type Response = Response<UpstreamBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<Outgoing>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        *request.uri_mut() = shared.target.map(request.uri());
        // Both HTTP versions are spoken upstream whatever the client used.
        *request.version_mut() = http::Version::HTTP_11;
        // The client's credential, before a configured one replaces it:
        // upstream connections, plain or TLS, are never shared between two
        // of them.
        let headers = request.headers();
        let partition = match (headers.get(header::AUTHORIZATION), headers.get(X_API_KEY)) {
            (None, None) => 0,
            credentials => shared.partitions.hash_one(credentials),
        };
        request.extensions_mut().insert(Partition(partition));
        let headers = request.headers_mut();
        rewrite::strip_request(headers);
        if let Some(auth) = &shared.authorization {
            headers.insert(header::AUTHORIZATION, auth.clone());
        }
        if let Some(key) = &shared.api_key {
            headers.remove(header::AUTHORIZATION);
            headers.insert(X_API_KEY, key.clone());
        }
        if let Some(name) = &shared.session_header {
            session::tell(name, &mut request);
        }
        // The target holds no userinfo (it was split off the upstream URL
        // when the settings were loaded): logs may show it, clients may not.
        let target = request.uri().clone();
        Box::pin(async move {
            let Shared {
                client,
                direct,
                label,
                first_byte_timeout: first_byte,
                idle_timeout: idle,
                metrics,
                ..
            } = &*shared;
            let exchange = async move {
                match direct {
                    Some(direct) => direct
                        .request(request)
                        .await
                        .map(|r| r.map(|body| body.map_err(BoxError::from).boxed_unsync()))
                        .map_err(Failure::Direct),
                    None => client
                        .request(request)
                        .await
                        .map(|r| r.map(|body| body.map_err(BoxError::from).boxed_unsync()))
                        .map_err(Failure::Pooled),
                }
            };
            let Ok(result) = tokio::time::timeout(*first_byte, exchange).await else {
                tracing::warn!(upstream = %target, timeout_s = first_byte.as_secs_f64(), "the upstream sent no response in time");
                metrics.upstream_error("timeout");
                return Ok(error_response(
                    StatusCode::GATEWAY_TIMEOUT,
                    &format!(
                        "{label} sent no response within {} s",
                        first_byte.as_secs_f64()
                    ),
                    "upstream_timeout",
                ));
            };
            match result {
                // A redirect is never passed on: the client would re-send
                // the prompt, and its credentials, wherever it points.
                Ok(response) if response.status().is_redirection() => {
                    let status = response.status();
                    tracing::warn!(upstream = %target, %status, "the upstream answered with a redirect");
                    metrics.upstream_error("redirect");
                    Ok(bad_gateway(
                        &format!(
                            "{label} answered {status} (a redirect); redirects are not followed"
                        ),
                        "upstream_redirect",
                    ))
                }
                // No upgrade is ever asked for upstream (`upgrade` is not
                // forwarded), so a 101, or any other 1xx as a final answer,
                // is the upstream's mistake, never something to pass on.
                Ok(response) if response.status().is_informational() => {
                    let status = response.status();
                    tracing::warn!(upstream = %target, %status, "the upstream answered with an informational status");
                    metrics.upstream_error("failed");
                    Ok(bad_gateway(
                        &format!(
                            "{label} answered {status}, which is not an answer to this request"
                        ),
                        "bad_upstream_response",
                    ))
                }
                // The pool refuses such an answer itself (and closes its
                // connection); hyper-util's client passes it on.
                Ok(response) if rewrite::framing_in_doubt(response.headers()) => {
                    Ok(framing_in_doubt(label, &target, metrics))
                }
                Err(Failure::Direct(pool::Error::Framing)) => {
                    Ok(framing_in_doubt(label, &target, metrics))
                }
                Ok(mut response) => {
                    rewrite::strip_response(response.headers_mut());
                    if response.status().is_client_error() {
                        metrics.upstream_error("status_4xx");
                    } else if response.status().is_server_error() {
                        metrics.upstream_error("status_5xx");
                    }
                    Ok(response
                        .map(|body| IdleBody::new(body, *idle, Arc::clone(metrics)).boxed_unsync()))
                }
                Err(e) => {
                    tracing::warn!(upstream = %target, error = %chain(&e), "upstream request failed");
                    let (kind, why) = failure(&e);
                    metrics.upstream_error(kind);
                    let mut response = bad_gateway(
                        &format!("{label} could not be reached ({why})"),
                        "upstream_unreachable",
                    );
                    // Nothing of the request was written: a router over
                    // several replicas may send it to another.
                    if e.is_connect() {
                        response.extensions_mut().insert(NotSent);
                    }
                    Ok(response)
                }
            }
        })
    }
}

/// The 502 for an answer whose framing is in doubt: nothing of it is
/// passed on.
fn framing_in_doubt(label: &str, target: &Uri, metrics: &Metrics) -> Response<UpstreamBody> {
    tracing::warn!(upstream = %target, "the upstream answered with both content-length and transfer-encoding");
    metrics.upstream_error("failed");
    bad_gateway(
        &format!("{label} answered with both content-length and transfer-encoding, so where its answer ends is in doubt"),
        "bad_upstream_response",
    )
}

/// Why an exchange with the upstream failed, by the client that tried.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    Direct(pool::Error),
    #[error(transparent)]
    Pooled(hyper_util::client::legacy::Error),
}

impl Failure {
    fn is_connect(&self) -> bool {
        match self {
            Failure::Direct(e) => e.is_connect(),
            Failure::Pooled(e) => e.is_connect(),
        }
    }
}

/// An error and its sources, for the log.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Why a request to the upstream failed: its kind for metrics (`connect`,
/// `reset`, `closed` or `failed`), and fixed words for the client, since
/// the errors themselves may name addresses (a TLS error names the host).
fn failure(e: &Failure) -> (&'static str, &'static str) {
    use std::io::ErrorKind;
    let mut io = None;
    let mut tls = None;
    let mut incomplete = false;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(err) = s.downcast_ref::<std::io::Error>() {
            io = io.or(Some(err.kind()));
        }
        tls = tls.or(tls::tls_error(s).map(tls::failure));
        if let Some(err) = s.downcast_ref::<hyper::Error>() {
            incomplete |= err.is_incomplete_message();
        }
        source = s.source();
    }
    if let Some(words) = tls {
        return ("connect", words);
    }
    match io {
        Some(ErrorKind::ConnectionRefused) => ("connect", "connection refused"),
        Some(ErrorKind::TimedOut) => ("connect", "connection timed out"),
        Some(ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe) => {
            ("reset", "connection reset")
        }
        _ if e.is_connect() => ("connect", "could not connect"),
        _ if incomplete => ("closed", "the connection closed before an answer"),
        _ => ("failed", "the exchange failed"),
    }
}

/// A 502 in the shape both APIs use.
pub fn bad_gateway(message: &str, code: &str) -> Response<UpstreamBody> {
    error_response(StatusCode::BAD_GATEWAY, message, code)
}

/// An error reply in the shape both APIs use.
fn error_response(status: StatusCode, message: &str, code: &str) -> Response<UpstreamBody> {
    let body = ErrorBody {
        error: ApiError {
            message: message.into(),
            kind: "server_error".into(),
            param: None,
            code: Some(code.into()),
        },
    };
    let body = serde_json::to_vec(&body).expect("error bodies always serialize");
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|e| match e {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_key_wins_over_url_credentials() {
        let url = |u: &str| {
            crate::config::Config::load(
                &crate::config::ServeFlags::parse(&["--upstream", u]),
                &|_| None,
            )
            .unwrap()
            .upstream
        };
        let crate::config::Upstream::Url(url) = url("http://Aladdin:open%20sesame@h:1/v1") else {
            panic!("a URL upstream");
        };
        let basic = authorization(None, url.credentials.as_ref()).unwrap();
        assert_eq!(basic, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
        assert!(basic.is_sensitive());
        let bearer = authorization(Some("sk-1"), url.credentials.as_ref()).unwrap();
        assert_eq!(bearer, "Bearer sk-1");
        assert_eq!(authorization(None, None), None);
    }
}
