//! The translating service and its layer.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use tower::{Layer, Service};
use wirebridge_convert::chat_to_responses::ChatReasoning;
use wirebridge_convert::responses_to_chat::ReasoningOutput;
use wirebridge_convert::seal::Sealer;
use wirebridge_convert::{BackendProfile, ConvertError, LossPolicy, LossReport, ReplySummary};

use crate::direction::{ResponsesOverChat, TranslatedRequest, Translation};
use crate::error_response::{api_error, error_response, reshape_upstream_error};
use crate::exchange::Tracker;
use crate::observer::{Direction, Observer};
use crate::options::Options;
use crate::request_body::{BoxError, RequestBody};
use crate::response_body::ResponseBody;
use crate::stateful;

/// Header listing the request and reply fields that could not be translated.
pub const DROPPED_HEADER: &str = "x-wirebridge-dropped";

/// Largest upstream body read whole (a non-streaming reply or an error body).
const MAX_UPSTREAM_BODY: usize = 64 * 1024 * 1024;

/// Middleware that translates requests for one API into requests for the
/// other, and their replies back. See [`ResponsesToChat`](crate::ResponsesToChat)
/// and [`ChatToResponses`](crate::ChatToResponses).
pub struct Translate<S, D> {
    inner: S,
    options: Arc<Options>,
    _direction: PhantomData<fn() -> D>,
}

impl<S: Clone, D> Clone for Translate<S, D> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            options: self.options.clone(),
            _direction: PhantomData,
        }
    }
}

impl<S: fmt::Debug, D> fmt::Debug for Translate<S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Translate")
            .field("inner", &self.inner)
            .field("options", &self.options)
            .finish()
    }
}

impl<S, D: Translation> Translate<S, D> {
    /// Wraps a service with default options.
    pub fn new(inner: S) -> Self {
        Self::layer().layer(inner)
    }

    /// A layer with default options, to configure with its builder methods.
    pub fn layer() -> TranslateLayer<D> {
        TranslateLayer::new()
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

/// The layer of [`Translate`], with the translation settings.
pub struct TranslateLayer<D> {
    options: Options,
    _direction: PhantomData<fn() -> D>,
}

impl<D> Clone for TranslateLayer<D> {
    fn clone(&self) -> Self {
        Self {
            options: self.options.clone(),
            _direction: PhantomData,
        }
    }
}

impl<D> fmt::Debug for TranslateLayer<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TranslateLayer")
            .field("options", &self.options)
            .finish()
    }
}

impl<D: Translation> Default for TranslateLayer<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Translation> TranslateLayer<D> {
    /// Default settings: 32 MiB request bodies, 16 MiB SSE events, the
    /// `generic` backend profile, the default loss policy.
    pub fn new() -> Self {
        Self {
            options: Options::default(),
            _direction: PhantomData,
        }
    }

    /// Largest request body read; larger ones get a 413 without being read.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.options.body_limit = bytes;
        self
    }

    /// Largest upstream SSE event; a larger one fails the stream.
    pub fn max_event_size(mut self, bytes: usize) -> Self {
        self.options.max_event_size = bytes;
        self
    }

    /// What the Chat Completions backend accepts (Responses-to-Chat only).
    pub fn profile(mut self, profile: BackendProfile) -> Self {
        self.options.profile = profile;
        self
    }

    /// What to do with what cannot be translated.
    pub fn policy(mut self, policy: LossPolicy) -> Self {
        self.options.policy = policy;
        self
    }

    /// Receives one record per exchange.
    pub fn observer(mut self, observer: impl Observer) -> Self {
        self.options.observer = Arc::new(observer);
        self
    }

    /// How backend reasoning is shown to Responses clients.
    pub fn reasoning_output(mut self, output: ReasoningOutput) -> Self {
        self.options.reasoning_output = output;
        self
    }

    /// Where Chat clients receive reasoning from a Responses backend.
    pub fn chat_reasoning(mut self, reasoning: ChatReasoning) -> Self {
        self.options.chat_reasoning = reasoning;
        self
    }

    /// Keeps finished responses, so Responses clients can use `store`,
    /// `previous_response_id`, `GET /v1/responses/{id}`, `DELETE` and
    /// `input_items` against a stateless Chat backend. Used by
    /// [`ResponsesToChatLayer`](crate::ResponsesToChatLayer); a Responses
    /// upstream keeps its own.
    pub fn store(self, store: impl wirebridge_store::ResponseStore) -> Self {
        self.store_arc(Arc::new(store))
    }

    /// [`store`](Self::store), with a store shared elsewhere too.
    pub fn store_arc(mut self, store: Arc<dyn wirebridge_store::ResponseStore>) -> Self {
        self.options.stateful = Some(crate::stateful::Stateful { store });
        self
    }

    /// Tells tenants apart by this header (set by a gateway in front)
    /// instead of by a hash of the `authorization` header: stored responses
    /// and sealed reasoning are each visible only to their tenant.
    pub fn tenant_header(mut self, name: http::HeaderName) -> Self {
        self.options.tenant_header = Some(name);
        self
    }

    /// The path suffix of intercepted requests, instead of the API's own
    /// (`/responses` or `/chat/completions`). Whatever precedes it is kept as
    /// the prefix of the upstream path.
    pub fn client_endpoint(mut self, suffix: impl Into<String>) -> Self {
        self.options.path_suffix = Some(suffix.into());
        self
    }
}

impl TranslateLayer<ResponsesOverChat> {
    /// Seals the backend's reasoning into `encrypted_content` for clients
    /// that ask for it (`include: ["reasoning.encrypted_content"]`, as Codex
    /// does with `store: false`), and opens it when they send it back, so
    /// reasoning is replayed across a stateless tool loop (for profiles
    /// that replay reasoning). Carriers are bound to the tenant that
    /// received them.
    pub fn sealer(mut self, sealer: Sealer) -> Self {
        self.options.sealer = Some(Arc::new(sealer));
        self
    }
}

impl<S, D: Translation> Layer<S> for TranslateLayer<D> {
    type Service = Translate<S, D>;

    fn layer(&self, inner: S) -> Self::Service {
        Translate {
            inner,
            options: Arc::new(self.options.clone()),
            _direction: PhantomData,
        }
    }
}

/// The future of [`Translate`].
pub struct ResponseFuture<R, E> {
    inner: Pin<Box<dyn Future<Output = Result<R, E>> + Send>>,
}

impl<R, E> Future for ResponseFuture<R, E> {
    type Output = Result<R, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl<R, E> fmt::Debug for ResponseFuture<R, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseFuture")
    }
}

impl<S, D, ReqB, ResB> Service<Request<ReqB>> for Translate<S, D>
where
    D: Translation,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqB: Body<Data = Bytes> + Send + 'static,
    ReqB::Error: Into<BoxError>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: fmt::Display + Into<BoxError>,
{
    type Response = Response<ResponseBody<ResB>>;
    type Error = S::Error;
    type Future = ResponseFuture<Self::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqB>) -> Self::Future {
        // The clone that was not polled ready stays behind, per tower's rules.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let options = self.options.clone();
        let endpoint = options.path_suffix.as_deref().unwrap_or(D::CLIENT_ENDPOINT);
        if let Some(stateful) = options
            .stateful
            .clone()
            .filter(|_| D::DIRECTION == Direction::ResponsesToChat)
        {
            if let Some(route) = stateful::route(request.method(), request.uri().path(), endpoint) {
                let future = async move {
                    let tenant = options.tenant(request.headers());
                    Ok(stateful::serve(&stateful, &tenant, route, request.uri().query()).await)
                };
                return ResponseFuture {
                    inner: Box::pin(future),
                };
            }
        }
        let prefix = (request.method() == Method::POST)
            .then(|| upstream_prefix(request.uri().path(), endpoint))
            .flatten()
            .map(str::to_owned);
        let inner_future = match prefix {
            None => {
                let future = inner.call(request.map(RequestBody::original));
                Box::pin(async move { Ok(future.await?.map(ResponseBody::passthrough)) })
                    as Pin<Box<dyn Future<Output = _> + Send>>
            }
            Some(prefix) => Box::pin(translate::<S, D, ReqB, ResB>(
                inner, options, request, prefix,
            )),
        };
        ResponseFuture {
            inner: inner_future,
        }
    }
}

/// The path before the endpoint, if the path ends with it.
fn upstream_prefix<'p>(path: &'p str, endpoint: &str) -> Option<&'p str> {
    path.trim_end_matches('/').strip_suffix(endpoint)
}

async fn translate<S, D, ReqB, ResB>(
    mut inner: S,
    options: Arc<Options>,
    request: Request<ReqB>,
    prefix: String,
) -> Result<Response<ResponseBody<ResB>>, S::Error>
where
    D: Translation,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
    ReqB: Body<Data = Bytes> + Send + 'static,
    ReqB::Error: Into<BoxError>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: fmt::Display + Into<BoxError>,
{
    let mut tracker = Tracker::new(options.observer.clone(), D::DIRECTION);
    let (parts, body) = request.into_parts();
    tracker.path = parts.uri.path().to_owned();

    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|len| len > options.body_limit) {
        return Ok(too_large(&mut tracker, options.body_limit));
    }
    let bytes = match Limited::new(body, options.body_limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return Ok(too_large(&mut tracker, options.body_limit));
        }
        Err(e) => {
            let error = api_error(
                format!("the request body could not be read: {e}"),
                "invalid_request_error",
                "body_read_error",
            );
            return Ok(finish_error(&mut tracker, StatusCode::BAD_REQUEST, error));
        }
    };

    let stateful = options
        .stateful
        .clone()
        .filter(|_| D::DIRECTION == Direction::ResponsesToChat);
    let tenant = if options.needs_tenant() {
        options.tenant(&parts.headers)
    } else {
        String::new()
    };
    let mut turn = None;
    let mut bytes = bytes;
    if let Some(stateful) = &stateful {
        let tenant = tenant.clone();
        match stateful::expand(stateful, &tenant, &bytes).await {
            Ok(t) => {
                bytes = t.body.clone();
                turn = Some((tenant, t));
            }
            Err(response) => {
                tracker.status = response.status().as_u16();
                tracker.report(ReplySummary::default());
                return Ok(*response);
            }
        }
    }

    let translated: Result<TranslatedRequest<D::Context>, ConvertError> =
        tracker.timed(|| D::translate_request(&bytes, &options, &tenant));
    let mut translated = match translated {
        Ok(t) => t,
        Err(e) => {
            let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
            return Ok(finish_error(&mut tracker, status, e.to_api_error()));
        }
    };
    if let Some(parent) = turn.as_ref().and_then(|(_, t)| t.parent.clone()) {
        D::set_previous_response_id(&mut translated.context, &parent);
    }
    // Only responses the client asked to keep are saved (Codex sends store: false).
    let turn = turn.filter(|_| D::wants_store(&translated.context));
    tracker.model = translated.model.clone();
    tracker.stream = translated.stream;
    tracker.losses = translated.losses.clone();

    let upstream_request = upstream_request(
        &parts,
        &prefix,
        D::UPSTREAM_ENDPOINT,
        translated.body,
        translated.stream,
    );
    let response = inner.call(upstream_request).await?;
    tracker.first_byte();
    let (mut head, body) = response.into_parts();

    if head.status.is_redirection() {
        // Following it, or passing it on for the client to follow, would
        // send the prompt wherever the upstream points.
        let error = api_error(
            format!(
                "the upstream answered {} (a redirect); redirects are not followed",
                head.status
            ),
            "server_error",
            "upstream_redirect",
        );
        return Ok(finish_error(&mut tracker, StatusCode::BAD_GATEWAY, error));
    }
    if !head.status.is_success() {
        let bytes = read_limited(body, 1024 * 1024).await;
        let reshaped = reshape_upstream_error(head.status, &bytes);
        return Ok(finish_reply(
            &mut tracker,
            head,
            ResponseBody::full(reshaped),
            "application/json",
            None,
        ));
    }
    if let Some(encoding) = head
        .headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .filter(|e| !e.eq_ignore_ascii_case("identity"))
    {
        let error = api_error(
            format!("the upstream sent a '{encoding}'-encoded body although identity was requested; it cannot be translated"),
            "server_error",
            "unsupported_upstream_encoding",
        );
        return Ok(finish_error(&mut tracker, StatusCode::BAD_GATEWAY, error));
    }

    let event_stream = head
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        });
    if event_stream && translated.stream {
        tracker.status = head.status.as_u16();
        let dropped = tracker.losses.clone();
        let translator = Box::new(D::stream(translated.context));
        clean_headers(&mut head.headers, "text/event-stream", Some(&dropped));
        let mut body = ResponseBody::stream(body, translator, options.max_event_size, tracker);
        if let (Some(stateful), Some((tenant, turn))) = (stateful, turn) {
            body = body.on_finish(stateful::save_hook(stateful, tenant, turn));
        }
        return Ok(Response::from_parts(head, body));
    }

    let bytes = match Limited::new(body, MAX_UPSTREAM_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let error = api_error(
                format!("the upstream reply could not be read: {e}"),
                "server_error",
                "upstream_read_error",
            );
            return Ok(finish_error(&mut tracker, StatusCode::BAD_GATEWAY, error));
        }
    };
    // A stream the client did not ask for is translated as a stream, then
    // answered as the body the client expects.
    let reply = if event_stream {
        tracker.timed(|| D::translate_stream_reply(&bytes, &translated.context))
    } else {
        tracker.timed(|| D::translate_reply(&bytes, &translated.context))
    };
    match reply {
        Ok(reply) => {
            if let (Some(stateful), Some((tenant, turn))) = (&stateful, turn) {
                stateful::save_body(stateful, &tenant, turn, &reply.body).await;
            }
            tracker.losses.extend(reply.losses);
            let body = ResponseBody::full(reply.body);
            Ok(finish_reply(
                &mut tracker,
                head,
                body,
                "application/json",
                Some(reply.summary),
            ))
        }
        Err(e) => {
            let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_GATEWAY);
            Ok(finish_error(&mut tracker, status, e.to_api_error()))
        }
    }
}

async fn read_limited<B>(body: B, limit: usize) -> Bytes
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    Limited::new(body, limit)
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default()
}

fn too_large<B>(tracker: &mut Tracker, limit: usize) -> Response<ResponseBody<B>> {
    let error = api_error(
        format!("the request body is larger than the {limit}-byte limit"),
        "invalid_request_error",
        "request_too_large",
    );
    finish_error(tracker, StatusCode::PAYLOAD_TOO_LARGE, error)
}

fn finish_error<B>(
    tracker: &mut Tracker,
    status: StatusCode,
    error: wirebridge_wire::error::ApiError<'_>,
) -> Response<ResponseBody<B>> {
    let summary = ReplySummary {
        outcome: error.code.as_deref().map(str::to_owned),
        ..ReplySummary::default()
    };
    tracker.status = status.as_u16();
    let mut response = error_response(status, error);
    if !tracker.losses.is_empty() {
        insert_dropped(response.headers_mut(), &tracker.losses);
    }
    tracker.report(summary);
    response
}

fn finish_reply<B>(
    tracker: &mut Tracker,
    mut head: http::response::Parts,
    body: ResponseBody<B>,
    content_type: &'static str,
    summary: Option<ReplySummary>,
) -> Response<ResponseBody<B>> {
    tracker.status = head.status.as_u16();
    clean_headers(&mut head.headers, content_type, Some(&tracker.losses));
    if let ResponseBody::Full { data: Some(data) } = &body {
        head.headers
            .insert(header::CONTENT_LENGTH, HeaderValue::from(data.len()));
    }
    tracker.report(summary.unwrap_or_default());
    Response::from_parts(head, body)
}

/// Headers of a reply whose body changed: length and encoding no longer
/// apply; the content type is ours.
fn clean_headers(headers: &mut HeaderMap, content_type: &'static str, losses: Option<&LossReport>) {
    for name in [
        header::CONTENT_LENGTH,
        header::CONTENT_ENCODING,
        header::TRANSFER_ENCODING,
        header::CONNECTION,
    ] {
        headers.remove(name);
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(losses) = losses.filter(|l| !l.is_empty()) {
        insert_dropped(headers, losses);
    }
}

fn insert_dropped(headers: &mut HeaderMap, losses: &LossReport) {
    if let Ok(value) = HeaderValue::from_str(&losses.paths()) {
        headers.insert(DROPPED_HEADER, value);
    }
}

/// The upstream request: same method, headers (credentials, request ids)
/// and query, the other endpoint, the translated body.
fn upstream_request<B>(
    parts: &http::request::Parts,
    prefix: &str,
    endpoint: &str,
    body: Vec<u8>,
    stream: bool,
) -> Request<RequestBody<B>> {
    let path_and_query = match parts.uri.query() {
        Some(query) => format!("{prefix}{endpoint}?{query}"),
        None => format!("{prefix}{endpoint}"),
    };
    let mut uri = parts.uri.clone().into_parts();
    uri.path_and_query = path_and_query.parse().ok();
    let uri = Uri::from_parts(uri).unwrap_or_else(|_| parts.uri.clone());

    let mut headers = parts.headers.clone();
    for name in [
        header::CONTENT_LENGTH,
        header::TRANSFER_ENCODING,
        header::CONTENT_ENCODING,
        header::HOST,
    ] {
        headers.remove(name);
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    // A compressed reply could not be translated.
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    let accept = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
    if let Some(host) = parts
        .headers
        .get(header::HOST)
        .filter(|_| uri.authority().is_none())
    {
        headers.insert(header::HOST, host.clone());
    }

    let mut request = Request::new(RequestBody::translated(Bytes::from(body)));
    *request.method_mut() = Method::POST;
    *request.uri_mut() = uri;
    *request.version_mut() = parts.version;
    *request.headers_mut() = headers;
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_match_with_any_prefix() {
        assert_eq!(upstream_prefix("/v1/responses", "/responses"), Some("/v1"));
        assert_eq!(
            upstream_prefix("/openai/v1/responses/", "/responses"),
            Some("/openai/v1")
        );
        assert_eq!(upstream_prefix("/responses", "/responses"), Some(""));
        assert_eq!(upstream_prefix("/v1/responses/abc", "/responses"), None);
        assert_eq!(upstream_prefix("/v1/chat/completions", "/responses"), None);
    }
}
