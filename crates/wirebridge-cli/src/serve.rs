//! `wirebridge serve`: the proxy, on one Tokio multi-thread runtime with
//! one listener; the runtime spreads connections over its worker threads.
//!
//! What the accept loop and the metrics listener share is made once
//! ([`Bridge`]): the metrics, the readiness checks, the store, the
//! connection cap, the app ([`app`]).

mod app;

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use wirebridge_tower::{BackgroundRuns, Shutdown, ShutdownTrigger};

use crate::admin::Admin;
use crate::config::{Config, Upstream as UpstreamSetting, UpstreamApi};
use crate::demo::InProcessDemo;
use crate::metrics::{MeteredStore, Metrics};
use crate::readiness::Readiness;
use crate::server::{App, Limits, Places};
use crate::signal::Signals;
use crate::upstream::resolve::SystemResolver;
use crate::upstream::{Backend, UpstreamOptions};

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
    /// The runtime could not be started.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// The demo upstream did not start.
    #[error("cannot start the demo upstream: {0}")]
    Demo(std::io::Error),
    /// A second signal came while the open exchanges were being waited
    /// for: the process ends at once, cutting them.
    #[error("a second signal: exiting at once")]
    SecondSignal,
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
    /// A file of the upstream's TLS cannot be used.
    #[error(transparent)]
    UpstreamTls(#[from] crate::upstream::UpstreamTlsError),
}

/// Runs until SIGINT or SIGTERM, then lets open exchanges finish within the
/// grace period (a second signal ends the wait, and the process, at once).
pub fn run(config: Config) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.runtime.workers())
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = runtime.block_on(serve(config));
    // What is left (connections cut by a second signal) is not waited for.
    runtime.shutdown_background();
    served
}

/// One runtime: the accept loop runs beside the wait for a signal, and
/// each connection is a task the runtime's threads share.
async fn serve(config: Config) -> Result<(), ServeError> {
    // Listened for before anything is announced: a signal right after the
    // address is printed must start the graceful shutdown, not kill.
    let mut signals = Signals::listen();
    let bridge = Bridge::start(&config).await?;
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
    bridge.announce(&config, addr);
    let (finish, finished) = watch::channel(false);
    bridge.serve_metrics(&config, finished).await?;
    let (stop, stopping) = watch::channel(false);
    let accepting = crate::server::serve(
        listener,
        bridge.app.clone(),
        bridge.limits,
        bridge.places.clone(),
        stopping,
    );
    tokio::join!(accepting, bridge.until_shutdown(&mut signals, stop));
    let drained = tokio::select! {
        () = bridge.drain() => Ok(()),
        () = signals.recv() => Err(ServeError::SecondSignal),
    };
    let _ = finish.send(true);
    drained
}

/// How long streams ended at the close of the grace period have to send
/// their last events before their connections are closed.
const FINAL_FLUSH: Duration = Duration::from_secs(2);

/// What serving needs, made once at start.
struct Bridge {
    app: App,
    readiness: Arc<Readiness>,
    admin: Admin,
    limits: Limits,
    places: Places,
    grace: Duration,
    /// Ends the streams still open when the grace period is over.
    ending: ShutdownTrigger,
    /// The background responses running: waited for within the grace
    /// period, then failed.
    runs: BackgroundRuns,
    /// The upstream as the log shows it.
    upstream_shown: String,
    /// The demo upstream, when it is the one configured: it runs until the
    /// bridge is dropped.
    _demo: Option<InProcessDemo>,
}

impl Bridge {
    /// Opens the store, starts the demo upstream when it is the one
    /// configured, and resolves the limits.
    async fn start(config: &Config) -> Result<Self, ServeError> {
        let mut metrics = Metrics::new(config.metrics.max_models);
        let resolved = config.replicas.resolve_every.is_some();
        if matches!(&config.upstream, UpstreamSetting::Replicas(_)) || resolved {
            metrics = metrics.with_replicas(config.upstream.urls().len());
        }
        let metrics = Arc::new(metrics);
        let (base, credentials, demo) = match &config.upstream {
            UpstreamSetting::Url(_) if resolved => (None, None, None),
            UpstreamSetting::Url(url) => (Some(url.uri.clone()), url.credentials.as_ref(), None),
            UpstreamSetting::Replicas(_) => (None, None, None),
            UpstreamSetting::Demo => {
                let server = crate::demo::start_in_process()
                    .await
                    .map_err(ServeError::Demo)?;
                (Some(server.base_url()), None, Some(server))
            }
        };
        // A configured key goes in the header the backend reads: Anthropic's
        // `x-api-key` where the profile says so.
        let key_header =
            config.upstream_api == UpstreamApi::Messages && config.profile.messages.api_key_header;
        let (authorization, api_key) = match config.upstream_key.as_deref() {
            Some(key) if key_header => (None, crate::upstream::api_key(key)),
            key => (crate::upstream::authorization(key, credentials), None),
        };
        let options = UpstreamOptions {
            authorization,
            api_key,
            connect_timeout: config.upstream_connect_timeout,
            first_byte_timeout: config.exchange.first_byte_timeout,
            idle_timeout: config.exchange.idle_timeout,
            label: config.upstream_label.as_str().into(),
            metrics: Arc::clone(&metrics),
            tls: crate::upstream::client_config(&config.upstream_tls)?,
            // Checked when the settings were loaded.
            session_header: config
                .profile
                .session_header
                .as_deref()
                .and_then(|name| http::HeaderName::from_bytes(name.as_bytes()).ok()),
        };
        // The URIs of configured upstreams hold no userinfo.
        let (backend, upstream_shown) = match (&base, &config.upstream) {
            (Some(base), _) => {
                let shown = match demo {
                    Some(_) => "demo".to_owned(),
                    None => base.to_string(),
                };
                (Backend::one(base, options), shown)
            }
            (None, upstream) => {
                let urls = upstream.urls();
                let key = config.upstream_key.as_deref();
                let backend = match config.replicas.resolve_every {
                    Some(every) => Backend::resolved(
                        urls,
                        key,
                        &options,
                        &config.replicas,
                        config.max_body,
                        Arc::new(SystemResolver),
                        every,
                    ),
                    None => {
                        Backend::replicas(urls, key, &options, &config.replicas, config.max_body)
                    }
                };
                let shown: Vec<String> = urls.iter().map(|url| url.uri.to_string()).collect();
                (backend, shown.join(","))
            }
        };
        let opened = crate::store::open(&config.store, &config.state).await?;
        let readiness = Arc::new(Readiness::new(opened.redis).replicas(backend.health()));
        let store = opened
            .store
            .map(|store| -> Arc<dyn wirebridge_store::ResponseStore> {
                Arc::new(MeteredStore::new(store, Arc::clone(&metrics)))
            });
        let admin = Admin::new(Arc::clone(&metrics), Arc::clone(&readiness));
        let (ending, shutdown) = Shutdown::new();
        let runs = BackgroundRuns::new()
            .max_runs(config.state.max_background_runs)
            .max_runs_per_tenant(config.state.max_background_runs_per_tenant)
            .lease(config.state.background_lease);
        let app = app::app(
            config,
            backend,
            metrics.clone(),
            store,
            admin.clone(),
            shutdown,
            runs.clone(),
        );
        // Each client connection may hold one to the upstream, and, with the
        // demo upstream in this process, the demo's end of it too.
        let descriptors_per_connection = if demo.is_some() { 3 } else { 2 };
        let limits = Limits::resolve(&config.limits, descriptors_per_connection);
        let places = Places::new(limits.max_connections, metrics.open_connections());
        Ok(Self {
            app,
            readiness,
            admin,
            limits,
            places,
            grace: Duration::from_secs(config.shutdown_grace_secs),
            ending,
            runs,
            upstream_shown,
            _demo: demo,
        })
    }

    /// Tells the world the bridge listens on `addr`: stdout's first line,
    /// then the log.
    fn announce(&self, config: &Config, addr: std::net::SocketAddr) {
        if config.seal.generated && config.upstream_api != UpstreamApi::Responses {
            tracing::warn!(
                "no seal key is set (seal_key / WIREBRIDGE_SEAL_KEY): reasoning and thinking \
                 sealed for clients can be opened only by this process; several replicas must share one \
                 key (`wirebridge keygen` makes one)"
            );
        }
        println!("listening on http://{addr}");
        let limits = &self.limits;
        tracing::info!(
            %addr,
            upstream = %self.upstream_shown,
            upstream_api = ?config.upstream_api,
            profile = %config.profile.name,
            store = config.store.kind(),
            workers = config.runtime.workers(),
            max_connections = limits.max_connections,
            header_read_timeout_ms = limits.timeouts.header_read.as_millis() as u64,
            idle_timeout_ms = limits.timeouts.idle.as_millis() as u64,
            body_read_timeout_ms = limits.body_read_timeout.as_millis() as u64,
            "wirebridge ready"
        );
    }

    /// Serves `/metrics`, `/healthz` and `/readyz` on `metrics_listen`, if
    /// set, from a task of the current runtime, until `finished` turns true.
    async fn serve_metrics(
        &self,
        config: &Config,
        mut finished: watch::Receiver<bool>,
    ) -> Result<(), ServeError> {
        let Some(addr) = config.metrics.listen else {
            return Ok(());
        };
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::MetricsBind { addr, source })?;
        let addr = listener.local_addr().unwrap_or(addr);
        tracing::info!(%addr, "serving /metrics, /healthz and /readyz");
        let admin = self.admin.clone();
        tokio::spawn(
            admin.serve(listener, self.limits.timeouts.header_read, async move {
                let _ = finished.wait_for(|finished| *finished).await;
            }),
        );
        Ok(())
    }

    /// Waits for SIGINT or SIGTERM, then turns not ready and tells the
    /// accept loop to stop.
    async fn until_shutdown(&self, signals: &mut Signals, stop: watch::Sender<bool>) {
        signals.recv().await;
        // Not ready from the first moment of the shutdown.
        self.readiness.drain();
        let _ = stop.send(true);
    }

    /// Waits for the open connections to end, within the grace period;
    /// then ends the streams still open in their own dialect (a failure
    /// event, a WebSocket close 1001), and gives them a moment to be sent.
    async fn drain(&self) {
        tracing::info!(
            grace_secs = self.grace.as_secs(),
            "shutting down: waiting for open exchanges"
        );
        let started = std::time::Instant::now();
        let drained = self.places.drain(self.grace).await;
        // Background responses run on within the grace period too.
        let left = self.grace.saturating_sub(started.elapsed());
        let settled = tokio::time::timeout(left, self.runs.settled())
            .await
            .is_ok();
        if drained && settled {
            return;
        }
        tracing::warn!(
            background_responses = self.runs.in_flight(),
            "grace period over: ending the open streams, failing the background responses"
        );
        self.ending.trigger();
        if !self.places.drain(FINAL_FLUSH).await {
            tracing::warn!("closing the remaining connections");
        }
        // Each run writes its end (`failed`) before the process exits.
        let _ = tokio::time::timeout(FINAL_FLUSH, self.runs.settled()).await;
    }
}
