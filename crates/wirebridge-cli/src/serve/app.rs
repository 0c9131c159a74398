//! What answers each request.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use http::{header, HeaderMap, HeaderName, HeaderValue, Method, Request, Response};
use http_body_util::BodyExt;
use tower::util::{BoxCloneService, BoxCloneSyncService};
use tower::{Layer, Service, ServiceExt};
use wirebridge_convert::seal::Sealer;
use wirebridge_store::ResponseStore;
use wirebridge_tower::trace_context::{TraceParent, TRACEPARENT_HEADER};
use wirebridge_tower::{
    BackgroundRuns, Budget, ChatToResponsesLayer, Exchange, MessagesToResponsesLayer, Observer,
    RequestBody, ResponseBody, ResponsesToChatLayer, ResponsesToMessagesLayer, Shutdown,
    StatefulResponsesLayer, WebSocketSettings,
};

use crate::admin::{Admin, Endpoint};
use crate::config::{Config, UpstreamApi};
use crate::logging::log_exchange;
use crate::metrics::{CountedBody, Metrics, OpenGauge};
use crate::server::{App, ClientBody};
use crate::upstream::{Backend, UpstreamBody};

/// A layer serving Responses clients (over Chat, or over a Responses
/// backend that keeps no state), with what the settings say of both: the
/// two are different types with the same settings.
macro_rules! responses_clients {
    ($layer:expr, $config:expr, $observer:expr, $store:expr, $runs:expr) => {{
        let config: &Config = $config;
        let exchange = &config.exchange;
        let mut layer = $layer
            .profile(config.profile.clone())
            .policy(config.policy.clone())
            .body_limit(config.max_body)
            .max_reply_size(exchange.max_reply_size)
            .stream_idle_timeout(exchange.idle_timeout)
            .keepalive_interval(exchange.keepalive_interval)
            // The backend keys a request that comes without a key from
            // the body it sends, when there are several replicas to choose
            // from; with one, no key is read at all.
            .prefix_affinity(false)
            .observer($observer)
            .anonymous_store(config.state.anonymous_store)
            .trust_credentials(config.state.trust_credentials)
            .missing_history(config.state.missing_history)
            .translated_history(config.state.translated_history_bytes)
            .sealer(Sealer::new(
                config.seal.current.clone(),
                config.seal.previous.clone(),
            ));
        if let Some(output) = config.reasoning_output {
            layer = layer.reasoning_output(output);
        }
        if let Some(bytes) = config.state.max_resolved_input {
            layer = layer.max_resolved_input(bytes);
        }
        if let Some(store) = $store {
            layer = layer.store_arc(store).background($runs);
        }
        match exchange.websocket {
            true => layer.websocket(websocket_settings(exchange)),
            false => layer.without_websocket(),
        }
    }};
}

/// The Chat clients' layer, with what the settings say of it.
fn chat_clients(config: &Config, observer: Reports) -> ChatToResponsesLayer {
    let exchange = &config.exchange;
    ChatToResponsesLayer::new()
        .policy(config.policy.clone())
        .body_limit(config.max_body)
        .max_reply_size(exchange.max_reply_size)
        .stream_idle_timeout(exchange.idle_timeout)
        .keepalive_interval(exchange.keepalive_interval)
        // As for the Responses clients: the backend keys what needs it.
        .prefix_affinity(false)
        .observer(observer)
}

/// What the layers report: each exchange logged and counted, each budget
/// reached counted.
#[derive(Clone)]
struct Reports {
    metrics: Arc<Metrics>,
}

impl Observer for Reports {
    fn on_exchange(&self, exchange: &Exchange) {
        log_exchange(exchange);
        self.metrics.exchange(exchange);
    }

    fn on_budget(&self, budget: Budget) {
        self.metrics.budget(budget);
    }
}

/// The service that answers requests: health checks, translation for the
/// API the upstream does not speak, the model catalog for Codex,
/// pass-through for everything else. Requests not answered here go on to
/// `upstream`.
pub fn app(
    config: &Config,
    upstream: Backend,
    metrics: Arc<Metrics>,
    store: Option<Arc<dyn ResponseStore>>,
    admin: Admin,
    shutdown: Shutdown,
    runs: BackgroundRuns,
) -> App {
    let observer = Reports {
        metrics: Arc::clone(&metrics),
    };
    let exchange = &config.exchange;
    // Messages clients have a stack of their own: the Messages layer over
    // the Responses side of the bridge (or the backend's own, where it
    // keeps its responses). Nothing else pays for a layer it never uses.
    let messages = MessagesToResponsesLayer::new()
        .policy(config.policy.clone())
        .body_limit(config.max_body)
        .max_reply_size(exchange.max_reply_size)
        .stream_idle_timeout(exchange.idle_timeout)
        .keepalive_interval(exchange.keepalive_interval)
        // The Responses side under it, or the backend's router, keys what
        // needs a key: a digest of the Responses body this layer writes
        // would be read by nothing (it cost a Claude Code request 123 K
        // instructions, 19% of its path through the bridge).
        .prefix_affinity(false)
        .observer(observer.clone())
        .shutdown(shutdown.clone());
    // Under three layers (a Messages backend's Chat clients: the Responses
    // side, the Chat layer, the hub), the same.
    let flattened_twice = upstream.clone().map_request(
        |request: Request<RequestBody<RequestBody<RequestBody<ClientBody>>>>| {
            request.map(|body| RequestBody::flatten(RequestBody::flatten(body)))
        },
    );
    // Under two layers, the upstream takes the bodies of one.
    let flattened =
        upstream
            .clone()
            .map_request(|request: Request<RequestBody<RequestBody<ClientBody>>>| {
                request.map(RequestBody::flatten)
            });
    // Messages clients of a Messages backend speak its API: their requests
    // pass through with the rest, but for those that turn on message
    // threads or compaction, which the bridge keeps and runs
    // (`threads_only`).
    let threads_only = config.upstream_api == UpstreamApi::Messages;
    let (translated, messages, endpoint): (Shared, Option<Shared>, &str) = match config.upstream_api
    {
        UpstreamApi::Chat => {
            let layer = responses_clients!(
                ResponsesToChatLayer::new(),
                config,
                observer,
                store.clone(),
                runs.clone()
            )
            .model_catalog(config.catalog.clone())
            .shutdown(shutdown.clone());
            let hub = layer.clone().without_websocket();
            let messages = messages.layer(hub.layer(flattened));
            (
                boxed(layer.layer(upstream)),
                Some(boxed_twice(messages)),
                "/responses",
            )
        }
        UpstreamApi::Messages => {
            // Responses clients on the bridge's Responses side, written as
            // Messages; Chat clients through it; Messages clients straight
            // to the backend, which speaks their API.
            let layer = responses_clients!(
                ResponsesToMessagesLayer::new(),
                config,
                observer.clone(),
                store,
                runs
            )
            .model_catalog(config.catalog.clone())
            .shutdown(shutdown.clone());
            let chat = chat_clients(config, observer).shutdown(shutdown);
            let hub = layer.clone().without_websocket();
            // A thread is kept on the Responses side, as for any backend.
            let threads = messages.layer(hub.clone().layer(flattened));
            let both = layer
                .layer(chat.layer(hub.layer(flattened_twice)))
                .map_response(|response| {
                    response.map(|body| ResponseBody::passthrough(body.boxed_unsync()))
                });
            (
                boxed(both),
                Some(boxed_twice(threads)),
                "/chat/completions|/responses",
            )
        }
        UpstreamApi::Responses => {
            let chat = chat_clients(config, observer.clone())
                .model_catalog(config.catalog.clone())
                .shutdown(shutdown.clone());
            if config.profile.keeps_responses {
                // The backend keeps its responses itself: Responses
                // requests are passed through as they are.
                let messages = boxed(messages.layer(upstream.clone()));
                (
                    boxed(chat.layer(upstream)),
                    Some(messages),
                    "/chat/completions",
                )
            } else {
                let layer = responses_clients!(
                    StatefulResponsesLayer::new(),
                    config,
                    observer,
                    store,
                    runs
                )
                .context_windows_from(config.catalog.clone())
                .shutdown(shutdown);
                let hub = layer.clone().without_websocket();
                let messages = boxed_twice(messages.layer(hub.layer(flattened.clone())));
                let both = layer.layer(chat.layer(flattened)).map_response(|response| {
                    response.map(|body| ResponseBody::passthrough(body.boxed_unsync()))
                });
                (boxed(both), Some(messages), "/chat/completions|/responses")
            }
        }
    };
    // One count to clone: the server clones the app for every request.
    let routes = Arc::new(Routes {
        open_streams: metrics.open_streams(),
        translated,
        messages,
        threads_only,
        admin,
        metrics,
        endpoint,
        metrics_here: config.metrics.listen.is_none(),
    });
    let service = tower::service_fn(move |mut request: Request<ClientBody>| {
        // Routed before the future is made, so that it holds (and each
        // request clones) only the service that answers it.
        let routes = &*routes;
        let route = match Admin::endpoint(request.uri().path(), routes.metrics_here) {
            Some(endpoint) => Route::Admin(routes.admin.clone(), endpoint),
            None => {
                let trace = continue_trace(request.headers_mut());
                let (method, path) = (request.method(), request.uri().path());
                let messages = routes
                    .messages
                    .as_ref()
                    .filter(|_| is_messages(method, path, request.headers()))
                    .filter(|_| !routes.threads_only || kept_by_the_bridge(request.headers()));
                if let Some(messages) = messages {
                    Route::Messages(messages.clone())
                } else {
                    // The layer reports what it translates (compaction
                    // included); the rest is logged here.
                    let translated = is_translated(method, path, routes.endpoint);
                    let forwarded = (!translated).then(|| Forwarded {
                        method: method.clone(),
                        path: tracing::enabled!(tracing::Level::INFO).then(|| path.to_owned()),
                        trace,
                        metrics: Arc::clone(&routes.metrics),
                    });
                    Route::Translated(routes.translated.clone(), forwarded)
                }
            }
        };
        let open_streams = routes.open_streams.clone();
        async move {
            match route {
                Route::Admin(admin, endpoint) => Ok(admin.answer(endpoint).await),
                Route::Messages(messages) => {
                    let response = messages.oneshot(request).await?;
                    Ok(counted(response, &open_streams))
                }
                Route::Translated(translated, forwarded) => {
                    let started = Instant::now();
                    let response = translated.oneshot(request).await?;
                    if let Some(forwarded) = forwarded {
                        forwarded.report(response.status(), started);
                    }
                    Ok(counted(response, &open_streams))
                }
            }
        }
    });
    BoxCloneService::new(service)
}

/// A service of [`Routes`]: shared by every clone of the app.
type Shared =
    BoxCloneSyncService<Request<ClientBody>, Response<crate::server::ResponseBody>, Infallible>;

/// The services that answer requests, and what routing them needs.
struct Routes {
    translated: Shared,
    /// Messages clients' own stack, where the backend does not speak
    /// their API, or keeps no message threads.
    messages: Option<Shared>,
    /// Whether `messages` answers only the requests that turn on message
    /// threads (on a Messages backend, which is sent the others as they
    /// are).
    threads_only: bool,
    admin: Admin,
    metrics: Arc<Metrics>,
    open_streams: OpenGauge,
    /// The endpoints the layer translates, `|`-separated.
    endpoint: &'static str,
    /// Whether `/metrics` is answered on the main listener.
    metrics_here: bool,
}

/// Which service answers a request.
enum Route {
    /// A health check, or the metrics.
    Admin(Admin, Endpoint),
    /// A Messages client's request.
    Messages(Shared),
    /// Anything else: translated, or passed through and reported here.
    Translated(Shared, Option<Forwarded>),
}

/// A request passed through: what its log line and counter need.
struct Forwarded {
    method: Method,
    /// Kept only when the line is logged.
    path: Option<String>,
    trace: TraceParent,
    metrics: Arc<Metrics>,
}

impl Forwarded {
    fn report(self, status: http::StatusCode, started: Instant) {
        let status = status.as_u16();
        self.metrics.forwarded(status);
        tracing::info!(
            method = %self.method,
            path = %self.path.as_deref().unwrap_or_default(),
            status,
            total_us = started.elapsed().as_micros() as u64,
            trace_id = %self.trace.trace_id(),
            "request"
        );
    }
}

/// Whether the layer translates (and reports) a request: a `POST` to one
/// of the translated `endpoint`s (`|`-separated), or to compaction or
/// input-token counting beside the Responses endpoint.
fn is_translated(method: &Method, path: &str, endpoint: &str) -> bool {
    let path = path.trim_end_matches('/');
    method == Method::POST
        && (endpoint.split('|').any(|e| path.ends_with(e))
            || (endpoint == "/responses" && path.ends_with("/responses/compact"))
            || (endpoint.contains("/responses") && path.ends_with("/responses/input_tokens")))
}

/// Whether a request is for Anthropic's Messages API: `POST …/messages`
/// and `…/messages/count_tokens`, and the model list (`GET …/models`,
/// `GET …/models/{id}`) when Anthropic's client asks, which says its
/// `anthropic-version`.
fn is_messages(method: &Method, path: &str, headers: &HeaderMap) -> bool {
    let path = path.trim_end_matches('/');
    match *method {
        Method::POST => path.ends_with("/messages") || path.ends_with("/messages/count_tokens"),
        Method::GET => {
            headers.contains_key("anthropic-version")
                && (path.ends_with("/models")
                    || path
                        .rsplit_once('/')
                        .is_some_and(|(rest, _)| rest.ends_with("/models")))
        }
        _ => false,
    }
}

/// Whether a request turns on what the bridge keeps for a Messages client
/// on any backend: message threads (`anthropic-beta:
/// message-threads-2026-08-12`, which every turn of a thread sends), or
/// compaction on demand (`compact-2026-09-04`, sent with the compaction
/// request and with the turns that carry its block back, whose sealed
/// carrier only the bridge opens).
fn kept_by_the_bridge(headers: &HeaderMap) -> bool {
    headers
        .get_all("anthropic-beta")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|beta| KEPT_BY_THE_BRIDGE.contains(&beta.trim()))
}

/// The betas of message threads and of compaction on demand.
const KEPT_BY_THE_BRIDGE: [&str; 2] = ["message-threads-2026-08-12", "compact-2026-09-04"];

/// The vendors' part of a trace's context.
const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// Continues the client's trace with a span of this hop, or starts one,
/// in the `traceparent` sent upstream. A `tracestate` without a valid
/// `traceparent` belongs to no trace here, and is dropped.
fn continue_trace(headers: &mut HeaderMap) -> TraceParent {
    let trace = match TraceParent::from_headers(headers) {
        Some(parent) => parent.child(),
        None => {
            headers.remove(TRACESTATE);
            TraceParent::start()
        }
    };
    headers.insert(TRACEPARENT_HEADER, trace.to_header_value());
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

fn boxed<S>(service: S) -> Shared
where
    S: Service<
            Request<ClientBody>,
            Response = Response<ResponseBody<UpstreamBody>>,
            Error = Infallible,
        > + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    BoxCloneSyncService::new(
        service.map_response(|response| response.map(|body| body.boxed_unsync())),
    )
}

/// [`boxed`], for a service two layers deep (a Messages layer over the
/// bridge's Responses side).
fn boxed_twice<S, B>(service: S) -> Shared
where
    S: Service<Request<ClientBody>, Response = Response<ResponseBody<B>>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = bytes::Bytes, Error = wirebridge_tower::BoxError> + Send + 'static,
{
    boxed(service.map_response(|response| {
        response.map(|body| ResponseBody::passthrough(body.boxed_unsync()))
    }))
}

/// The WebSocket mode the settings ask for.
fn websocket_settings(exchange: &crate::config::ExchangeLimits) -> WebSocketSettings {
    WebSocketSettings::new()
        .idle_timeout(exchange.websocket_idle_timeout)
        .max_per_tenant(exchange.websocket_max_per_tenant)
        .max_memory(exchange.websocket_max_memory)
        .max_age(exchange.websocket_max_age)
}
