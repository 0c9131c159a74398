//! `wirebridge serve`: the proxy.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::util::BoxCloneService;
use tower::{Layer, Service, ServiceExt};
use wirebridge_tower::{ChatToResponsesLayer, ResponseBody, ResponsesToChatLayer};

use std::sync::Arc;

use wirebridge_convert::seal::Sealer;
use wirebridge_store::{MemoryStore, RedisStore, ResponseStore};

use crate::config::{Config, StoreSetting, Upstream as UpstreamSetting, UpstreamApi};
use crate::logging::log_exchange;
use crate::signal::shutdown_signal;
use crate::upstream::{Upstream, UpstreamBody, UpstreamOptions};

type App = BoxCloneService<Request<Incoming>, Response<UpstreamBody>, Infallible>;

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
    /// The response store cannot be reached.
    #[error("cannot use the response store: {0}")]
    Store(wirebridge_store::StoreError),
}

/// Runs until SIGINT or SIGTERM, then lets open exchanges finish within the
/// grace period.
pub async fn run(config: Config) -> Result<(), ServeError> {
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
            label: config.upstream_label.as_str().into(),
        },
    );
    let store: Option<Arc<dyn ResponseStore>> = match &config.store {
        StoreSetting::None => None,
        StoreSetting::Memory => Some(Arc::new(MemoryStore::new())),
        StoreSetting::Redis(url) => Some(Arc::new(
            RedisStore::connect(url).await.map_err(ServeError::Store)?,
        )),
    };
    let app = app(&config, upstream, store);

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
    println!("listening on http://{addr}");
    tracing::info!(
        %addr,
        // The URI of a configured upstream holds no userinfo.
        upstream = %if demo.is_some() { "demo".to_owned() } else { base.to_string() },
        upstream_api = ?config.upstream_api,
        profile = %config.profile.name,
        store = config.store.kind(),
        "wirebridge ready"
    );

    let builder = auto::Builder::new(TokioExecutor::new());
    let graceful = GracefulShutdown::new();
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let app = app.clone();
                let service = hyper::service::service_fn(move |request: Request<Incoming>| app.clone().oneshot(request));
                let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service).into_owned();
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    let grace = Duration::from_secs(config.shutdown_grace_secs);
    tracing::info!(
        grace_secs = grace.as_secs(),
        "shutting down: waiting for open exchanges"
    );
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("grace period over: closing the remaining connections");
    }
    drop(demo);
    Ok(())
}

/// Health check, translation for the API the upstream does not speak,
/// pass-through for everything else.
fn app(config: &Config, upstream: Upstream, store: Option<Arc<dyn ResponseStore>>) -> App {
    let observer = |e: &wirebridge_tower::Exchange| log_exchange(e);
    let (translated, endpoint): (App, &'static str) = match config.upstream_api {
        UpstreamApi::Chat => {
            let mut layer = ResponsesToChatLayer::new()
                .profile(config.profile.clone())
                .policy(config.policy.clone())
                .body_limit(config.max_body)
                .observer(observer)
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
            (boxed(layer.layer(upstream)), "/responses")
        }
        UpstreamApi::Responses => (
            boxed(
                ChatToResponsesLayer::new()
                    .policy(config.policy.clone())
                    .body_limit(config.max_body)
                    .observer(observer)
                    .layer(upstream),
            ),
            "/chat/completions",
        ),
    };
    let service = tower::service_fn(move |request: Request<Incoming>| {
        let translated = translated.clone();
        async move {
            if request.uri().path() == "/healthz" {
                return Ok(health());
            }
            let path = request.uri().path().to_owned();
            let is_translated =
                request.method() == Method::POST && path.trim_end_matches('/').ends_with(endpoint);
            let method = request.method().clone();
            let started = Instant::now();
            let response = translated.oneshot(request).await?;
            if !is_translated {
                tracing::info!(
                    %method,
                    %path,
                    status = response.status().as_u16(),
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "request"
                );
            }
            Ok(response)
        }
    });
    BoxCloneService::new(service)
}

fn health() -> Response<UpstreamBody> {
    let mut response = Response::new(
        Full::new(Bytes::from_static(b"ok\n"))
            .map_err(|e| match e {})
            .boxed_unsync(),
    );
    *response.status_mut() = StatusCode::OK;
    response
}

fn boxed<S>(service: S) -> App
where
    S: Service<
            Request<Incoming>,
            Response = Response<ResponseBody<UpstreamBody>>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    BoxCloneService::new(service.map_response(|response| response.map(|body| body.boxed_unsync())))
}
