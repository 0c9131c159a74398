//! `wirebridge serve`: the proxy.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{header, HeaderMap, HeaderValue, Method, Request, Response};
use http_body_util::BodyExt;
use tokio::net::TcpListener;
use tower::util::BoxCloneService;
use tower::{Layer, Service, ServiceExt};
use wirebridge_convert::seal::Sealer;
use wirebridge_store::ResponseStore;
use wirebridge_tower::trace_context::{TraceParent, TRACEPARENT};
use wirebridge_tower::{
    ChatToResponsesLayer, ResponseBody, ResponsesToChatLayer, WebSocketSettings,
};

use crate::admin::Admin;
use crate::config::{Config, Upstream as UpstreamSetting, UpstreamApi};
use crate::logging::log_exchange;
use crate::metrics::{CountedBody, MeteredStore, Metrics, OpenGauge};
use crate::readiness::Readiness;
use crate::server::{App, ClientBody, Limits};
use crate::signal::shutdown_signal;
use crate::upstream::{Upstream, UpstreamBody, UpstreamOptions};

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address is taken or not ours.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The demo upstream did not start.
    #[error("cannot start the demo upstream: {0}")]
    Demo(std::io::Error),
    /// The metrics address is taken or not ours.
    #[error("cannot listen on {addr} (metrics_listen): {source}")]
    MetricsBind {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The response store's settings cannot be used.
    #[error(transparent)]
    Store(#[from] crate::store::StoreSetupError),
}

/// Runs until SIGINT or SIGTERM, then lets open exchanges finish within the
/// grace period.
pub async fn run(config: Config) -> Result<(), ServeError> {
    let metrics = Arc::new(Metrics::new(config.metrics.max_models));
    let (base, credentials, demo) = match &config.upstream {
        UpstreamSetting::Url(url) => (url.uri.clone(), url.credentials.as_ref(), None),
        UpstreamSetting::Demo => {
            let server = crate::demo::start_in_process()
                .await
                .map_err(ServeError::Demo)?;
            (server.base_url(), None, Some(server))
        }
    };
    let upstream = Upstream::new(
        &base,
        UpstreamOptions {
            authorization: crate::upstream::authorization(
                config.upstream_key.as_deref(),
                credentials,
            ),
            connect_timeout: config.upstream_connect_timeout,
            first_byte_timeout: config.exchange.first_byte_timeout,
            idle_timeout: config.exchange.idle_timeout,
            label: config.upstream_label.as_str().into(),
            metrics: Arc::clone(&metrics),
        },
    );
    let opened = crate::store::open(&config.store, &config.state).await?;
    let readiness = Arc::new(Readiness::new(opened.redis));
    let store = opened.store.map(|store| -> Arc<dyn ResponseStore> {
        Arc::new(MeteredStore::new(store, Arc::clone(&metrics)))
    });
    let admin = Admin::new(Arc::clone(&metrics), Arc::clone(&readiness));
    let app = app(&config, upstream, store, &metrics, admin.clone());

    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Bind {
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ServeError::Bind {
        addr: config.listen,
        source,
    })?;
    if config.seal.generated && config.upstream_api == UpstreamApi::Chat {
        tracing::warn!(
            "no seal key is set (seal_key / WIREBRIDGE_SEAL_KEY): reasoning sealed for clients \
             can be opened only by this process; several replicas must share one key \
             (`wirebridge keygen` makes one)"
        );
    }
    // Each client connection may hold one to the upstream, and, with the
    // demo upstream in this process, the demo's end of it too.
    let descriptors_per_connection = if demo.is_some() { 3 } else { 2 };
    let limits = Limits::resolve(&config.limits, descriptors_per_connection);
    println!("listening on http://{addr}");
    tracing::info!(
        %addr,
        // The URI of a configured upstream holds no userinfo.
        upstream = %if demo.is_some() { "demo".to_owned() } else { base.to_string() },
        upstream_api = ?config.upstream_api,
        profile = %config.profile.name,
        store = config.store.kind(),
        max_connections = limits.max_connections,
        header_read_timeout_ms = limits.timeouts.header_read.as_millis() as u64,
        idle_timeout_ms = limits.timeouts.idle.as_millis() as u64,
        body_read_timeout_ms = limits.body_read_timeout.as_millis() as u64,
        "wirebridge ready"
    );

    let (stop_metrics, metrics_stopped) = tokio::sync::watch::channel(false);
    if let Some(addr) = config.metrics.listen {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::MetricsBind { addr, source })?;
        let addr = listener.local_addr().unwrap_or(addr);
        tracing::info!(%addr, "serving /metrics, /healthz and /readyz");
        let mut stopped = metrics_stopped;
        tokio::spawn(
            admin.serve(listener, limits.timeouts.header_read, async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            }),
        );
    }

    let grace = Duration::from_secs(config.shutdown_grace_secs);
    let shutdown = async {
        shutdown_signal().await;
        // Not ready from the first moment of the shutdown.
        readiness.drain();
    };
    crate::server::serve(
        listener,
        app,
        limits,
        grace,
        shutdown,
        metrics.open_connections(),
    )
    .await;
    let _ = stop_metrics.send(true);
    drop(demo);
    Ok(())
}

/// Health check, translation for the API the upstream does not speak,
/// pass-through for everything else.
fn app(
    config: &Config,
    upstream: Upstream,
    store: Option<Arc<dyn ResponseStore>>,
    metrics: &Arc<Metrics>,
    admin: Admin,
) -> App {
    let observer = {
        let metrics = Arc::clone(metrics);
        move |e: &wirebridge_tower::Exchange| {
            log_exchange(e);
            metrics.exchange(e);
        }
    };
    let (translated, endpoint): (App, &'static str) = match config.upstream_api {
        UpstreamApi::Chat => {
            let exchange = &config.exchange;
            let mut layer = ResponsesToChatLayer::new()
                .profile(config.profile.clone())
                .policy(config.policy.clone())
                .body_limit(config.max_body)
                .max_reply_size(exchange.max_reply_size)
                .stream_idle_timeout(exchange.idle_timeout)
                .keepalive_interval(exchange.keepalive_interval)
                .observer(observer.clone())
                .anonymous_store(config.state.anonymous_store)
                .missing_history(config.state.missing_history)
                .sealer(Sealer::new(
                    config.seal.current.clone(),
                    config.seal.previous.clone(),
                ));
            if let Some(output) = config.reasoning_output {
                layer = layer.reasoning_output(output);
            }
            if let Some(store) = store {
                layer = layer.store_arc(store);
            }
            layer = match exchange.websocket {
                true => layer.websocket(
                    WebSocketSettings::new().idle_timeout(exchange.websocket_idle_timeout),
                ),
                false => layer.without_websocket(),
            };
            (boxed(layer.layer(upstream)), "/responses")
        }
        UpstreamApi::Responses => (
            boxed(
                ChatToResponsesLayer::new()
                    .policy(config.policy.clone())
                    .body_limit(config.max_body)
                    .max_reply_size(config.exchange.max_reply_size)
                    .stream_idle_timeout(config.exchange.idle_timeout)
                    .keepalive_interval(config.exchange.keepalive_interval)
                    .observer(observer)
                    .layer(upstream),
            ),
            "/chat/completions",
        ),
    };
    let metrics_here = config.metrics.listen.is_none();
    let (metrics, open_streams) = (Arc::clone(metrics), metrics.open_streams());
    let service = tower::service_fn(move |mut request: Request<ClientBody>| {
        let translated = translated.clone();
        let (admin, metrics, open_streams) = (admin.clone(), metrics.clone(), open_streams.clone());
        async move {
            if let Some(endpoint) = Admin::endpoint(request.uri().path(), metrics_here) {
                return Ok(admin.answer(endpoint).await);
            }
            let trace = continue_trace(request.headers_mut());
            let path = request.uri().path().to_owned();
            // The layer reports what it translates (compaction included).
            let is_translated = request.method() == Method::POST && {
                let path = path.trim_end_matches('/');
                path.ends_with(endpoint)
                    || (endpoint == "/responses" && path.ends_with("/responses/compact"))
            };
            let method = request.method().clone();
            let started = Instant::now();
            let response = translated.oneshot(request).await?;
            if !is_translated {
                let status = response.status().as_u16();
                metrics.forwarded(status);
                tracing::info!(
                    %method,
                    %path,
                    status,
                    total_us = started.elapsed().as_micros() as u64,
                    trace_id = %trace.trace_id(),
                    "request"
                );
            }
            Ok(counted(response, &open_streams))
        }
    });
    BoxCloneService::new(service)
}

/// Continues the client's trace with a span of this hop, or starts one,
/// in the `traceparent` sent upstream. A `tracestate` without a valid
/// `traceparent` belongs to no trace here, and is dropped.
fn continue_trace(headers: &mut HeaderMap) -> TraceParent {
    let trace = match TraceParent::from_headers(headers) {
        Some(parent) => parent.child(),
        None => {
            headers.remove("tracestate");
            TraceParent::start()
        }
    };
    headers.insert(TRACEPARENT, trace.to_header_value());
    trace
}

/// A streamed reply counts as an open stream until it ends.
fn counted(
    response: Response<crate::server::ResponseBody>,
    open_streams: &OpenGauge,
) -> Response<crate::server::ResponseBody> {
    let streamed = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !streamed {
        return response;
    }
    let opened = open_streams.open();
    response.map(|body| CountedBody::new(body, opened).boxed_unsync())
}

fn boxed<S>(service: S) -> App
where
    S: Service<
            Request<ClientBody>,
            Response = Response<ResponseBody<UpstreamBody>>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    BoxCloneService::new(service.map_response(|response| response.map(|body| body.boxed_unsync())))
}
