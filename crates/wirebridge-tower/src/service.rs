//! [`Translate`]: the middleware, and which requests it intercepts.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body::Body;
use tower::Service;

use crate::body::ResponseBody;
use crate::catalog;
use crate::direction::{state, Translation};
use crate::exchange::{self, compaction, count_tokens, input_tokens};
use crate::future::{Exchange, ResponseFuture};
use crate::messages_models;
use crate::request_body::{BoxError, RequestBody};
use crate::route::Route;
use crate::shared::Shared;
use crate::stateful::Checked;

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
        let Some(route) = Route::of(&shared, &request) else {
            return ResponseFuture::passthrough(
                self.inner.call(request.map(RequestBody::original)),
            );
        };
        // The service polled ready goes with the request; its clone, not
        // polled, stays behind, per tower's rules.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let served: Exchange<ResB, S::Error> = match route {
            #[cfg(feature = "websocket")]
            Route::WebSocket { prefix, settings } => {
                let response = crate::websocket::upgrade(inner, shared, settings, request, prefix);
                Box::pin(async move { Ok(response) })
            }
            Route::InputTokens { prefix } => Box::pin(input_tokens::count::<S, D, ReqB, ResB>(
                inner, shared, request, prefix,
            )),
            Route::MessagesModels { prefix, asked } => {
                let limit = shared.common.max_reply_size;
                Box::pin(messages_models::serve::<S, D, ReqB, ResB>(
                    inner, limit, request, prefix, asked,
                ))
            }
            Route::CountTokens { prefix } => Box::pin(count_tokens::count::<S, D, ReqB, ResB>(
                inner, shared, request, prefix,
            )),
            Route::Background {
                route,
                runs,
                stateful,
            } => {
                let tenant = stores_for(&shared, &request);
                Box::pin(async move {
                    Ok(match route {
                        Ok(route) => runs.serve(&stateful, tenant.as_deref(), route).await,
                        Err(refused) => refused.response(),
                    })
                })
            }
            Route::Conversation {
                prefix,
                route,
                stateful,
            } => {
                let tenant = stores_for(&shared, &request);
                let limit = shared.common.body_limit;
                Box::pin(async move {
                    let (mut parts, body) = request.into_parts();
                    // Read before anything is answered: a reply that left
                    // the body unread would close a kept-alive connection.
                    let body = match route.has_body() {
                        true => match exchange::read(&parts.headers, body, limit).await {
                            Ok(bytes) => bytes,
                            Err(refused) => return Ok(refused.response()),
                        },
                        false => Bytes::new(),
                    };
                    // A write reaches no backend: the credential is checked
                    // first, once per tenant (see `stateful::probe`).
                    if let (true, Some(tenant)) = (route.writes(), &tenant) {
                        D::client_head(&mut parts);
                        D::upstream_head(&mut parts.headers, &shared.direction);
                        let checked = stateful
                            .check_credential(inner, tenant, &parts.headers, &prefix)
                            .await?;
                        if let Checked::Refused(response) = checked {
                            return Ok(response);
                        }
                    }
                    let query = parts.uri.query();
                    Ok(stateful
                        .serve_conversation(tenant.as_deref(), route, query, &body)
                        .await)
                })
            }
            Route::Stored { route, stateful } => {
                let tenant = stores_for(&shared, &request);
                Box::pin(async move {
                    let query = request.uri().query();
                    Ok(stateful.serve(tenant.as_deref(), route, query).await)
                })
            }
            Route::Catalog { prefix, catalog } => {
                let limit = shared.common.max_reply_size;
                let mut request = request;
                // The client's credential, before the upstream's replaces it.
                let holder = crate::catalog_etag::holder(request.headers());
                D::upstream_head(request.headers_mut(), &shared.direction);
                Box::pin(catalog::serve::<S, ReqB, ResB>(
                    inner, catalog, limit, request, prefix, holder,
                ))
            }
            Route::Compact { prefix } => Box::pin(compaction::compact::<S, D, ReqB, ResB>(
                inner, shared, request, prefix,
            )),
            Route::Exchange { prefix } => Box::pin(exchange::run::<S, D, ReqB, ResB>(
                inner, shared, request, prefix,
            )),
        };
        ResponseFuture::exchange(served)
    }
}

/// The tenant whose kept responses a request may read: `None` for one
/// that may keep nothing, which so finds nothing.
fn stores_for<D: Translation, B>(shared: &Shared<D>, request: &Request<B>) -> Option<String> {
    let tenant = state::tenant::<D>(&shared.direction, request.headers());
    tenant.stores.then_some(tenant.key)
}
