//! [`Translate`]: the middleware, and which requests it intercepts.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body::Body;
use tower::Service;

use crate::background;
use crate::body::ResponseBody;
use crate::catalog;
use crate::direction::{state, Translation};
use crate::exchange::{self, compaction, count_tokens, input_tokens};
use crate::future::ResponseFuture;
use crate::messages_models;
use crate::request_body::{BoxError, RequestBody};
use crate::shared::Shared;
use crate::stateful;

/// Middleware that translates requests for one API into requests for the
/// other, and their replies back. See
/// [`ResponsesToChat`](crate::ResponsesToChat) and
/// [`ChatToResponses`](crate::ChatToResponses); configured with
/// [`TranslateLayer`](crate::TranslateLayer).
pub struct Translate<S, D: Translation> {
    inner: S,
    shared: Arc<Shared<D>>,
}

impl<S, D: Translation> Translate<S, D> {
    /// Wraps a service with default settings.
    pub fn new(inner: S) -> Self {
        Self::from_shared(inner, Arc::new(Shared::default()))
    }

    pub(crate) fn from_shared(inner: S, shared: Arc<Shared<D>>) -> Self {
        Self { inner, shared }
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

impl<S: Clone, D: Translation> Clone for Translate<S, D> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<S: fmt::Debug, D: Translation> fmt::Debug for Translate<S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Translate")
            .field("inner", &self.inner)
            .field("settings", &self.shared)
            .finish()
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
    type Future = ResponseFuture<S::Future, ResB, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqB>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        let endpoint = shared
            .common
            .client_endpoint
            .as_deref()
            .unwrap_or(D::CLIENT_ENDPOINT);
        #[cfg(feature = "websocket")]
        if let Some(settings) = state::websocket::<D>(&shared.direction) {
            let prefix = upstream_prefix(request.uri().path(), endpoint);
            if let (Some(prefix), true) = (prefix, crate::websocket::is_upgrade(&request)) {
                let (settings, prefix) = (settings.clone(), prefix.to_owned());
                let inner = self.inner.clone();
                let response = crate::websocket::upgrade(inner, shared, settings, request, prefix);
                return ResponseFuture::exchange(Box::pin(async move { Ok(response) }));
            }
        }
        if let Some(prefix) =
            input_tokens::route::<D>(request.method(), request.uri().path(), endpoint)
        {
            let clone = self.inner.clone();
            let inner = std::mem::replace(&mut self.inner, clone);
            let count = input_tokens::count::<S, D, ReqB, ResB>(inner, shared, request, prefix);
            return ResponseFuture::exchange(Box::pin(count));
        }
        let (method, path, query) = (
            request.method(),
            request.uri().path(),
            request.uri().query(),
        );
        if let Some((prefix, asked)) = messages_models::route::<D>(method, path, query) {
            let limit = shared.common.max_reply_size;
            let clone = self.inner.clone();
            let inner = std::mem::replace(&mut self.inner, clone);
            let serve =
                messages_models::serve::<S, D, ReqB, ResB>(inner, limit, request, prefix, asked);
            return ResponseFuture::exchange(Box::pin(serve));
        }
        if let Some(prefix) =
            count_tokens::route::<D>(request.method(), request.uri().path(), endpoint)
        {
            let clone = self.inner.clone();
            let inner = std::mem::replace(&mut self.inner, clone);
            let count = count_tokens::count::<S, D, ReqB, ResB>(inner, shared, request, prefix);
            return ResponseFuture::exchange(Box::pin(count));
        }
        if let Some(stateful) = state::stateful::<D>(&shared.direction) {
            let (method, path) = (request.method(), request.uri().path());
            let query = request.uri().query();
            let runs = state::background::<D>(&shared.direction);
            if let Some((runs, route)) = runs
                .and_then(|runs| Some((runs, background::route(method, path, query, endpoint)?)))
            {
                let (runs, stateful) = (runs.clone(), stateful.clone());
                let tenant = state::tenant::<D>(&shared.direction, request.headers());
                let tenant = tenant.stores.then_some(tenant.key);
                return ResponseFuture::exchange(Box::pin(async move {
                    Ok(match route {
                        Ok(route) => runs.serve(&stateful, tenant.as_deref(), route).await,
                        Err(refused) => refused.response(),
                    })
                }));
            }
            if let Some(route) =
                stateful::conversation_route(request.method(), request.uri().path())
            {
                let stateful = stateful.clone();
                let tenant = state::tenant::<D>(&shared.direction, request.headers());
                let tenant = tenant.stores.then_some(tenant.key);
                let limit = shared.common.body_limit;
                return ResponseFuture::exchange(Box::pin(async move {
                    let (parts, body) = request.into_parts();
                    let body = match route.has_body() {
                        true => match exchange::read(&parts.headers, body, limit).await {
                            Ok(bytes) => bytes,
                            Err(refused) => return Ok(refused.response()),
                        },
                        false => Bytes::new(),
                    };
                    let query = parts.uri.query();
                    Ok(stateful
                        .serve_conversation(tenant.as_deref(), route, query, &body)
                        .await)
                }));
            }
            if let Some(route) = stateful::route(request.method(), request.uri().path(), endpoint) {
                let stateful = stateful.clone();
                let tenant = state::tenant::<D>(&shared.direction, request.headers());
                // A request that may keep nothing has nothing to read.
                let tenant = tenant.stores.then_some(tenant.key);
                return ResponseFuture::exchange(Box::pin(async move {
                    let query = request.uri().query();
                    Ok(stateful.serve(tenant.as_deref(), route, query).await)
                }));
            }
        }
        let (method, path) = (request.method(), request.uri().path());
        if let Some(catalog) = &shared.common.catalog {
            if let Some(prefix) = catalog::route(method, path) {
                let (catalog, prefix) = (catalog.clone(), prefix.to_owned());
                let limit = shared.common.max_reply_size;
                let clone = self.inner.clone();
                let inner = std::mem::replace(&mut self.inner, clone);
                let serve = catalog::serve::<S, ReqB, ResB>(inner, catalog, limit, request, prefix);
                return ResponseFuture::exchange(Box::pin(serve));
            }
        }
        if let Some(prefix) = compaction::route::<D>(&shared.direction, method, path, endpoint) {
            let clone = self.inner.clone();
            let inner = std::mem::replace(&mut self.inner, clone);
            let compact = compaction::compact::<S, D, ReqB, ResB>(inner, shared, request, prefix);
            return ResponseFuture::exchange(Box::pin(compact));
        }
        let prefix = (request.method() == Method::POST)
            .then(|| upstream_prefix(request.uri().path(), endpoint))
            .flatten()
            .map(str::to_owned);
        match prefix {
            None => {
                ResponseFuture::passthrough(self.inner.call(request.map(RequestBody::original)))
            }
            Some(prefix) => {
                // The clone that was not polled ready stays behind, per
                // tower's rules.
                let clone = self.inner.clone();
                let inner = std::mem::replace(&mut self.inner, clone);
                ResponseFuture::exchange(Box::pin(exchange::run::<S, D, ReqB, ResB>(
                    inner, shared, request, prefix,
                )))
            }
        }
    }
}

/// The path before the endpoint, if the path ends with it.
fn upstream_prefix<'p>(path: &'p str, endpoint: &str) -> Option<&'p str> {
    path.trim_end_matches('/').strip_suffix(endpoint)
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
