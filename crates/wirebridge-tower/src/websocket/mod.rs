//! Responses WebSocket mode: `GET …/responses` upgraded to a WebSocket, on
//! which each `response.create` message runs one turn and its stream
//! events come back as text messages.
//!
//! The upgrade is hyper's ([`hyper::upgrade::on`]): the connection must be
//! served by hyper with upgrades enabled (hyper-util's
//! `serve_connection_with_upgrades`), on a tokio runtime. Each connection
//! runs as a task of its own; its turns run one after another through the
//! same exchange as HTTP requests (translation, store, timeouts, observer),
//! so a turn is logged and counted as one exchange.

mod client_event;
mod codex_head;
#[cfg(fuzzing)]
pub mod fuzzing;
mod handshake;
mod rejection;
mod server_event;
mod session;
mod turn;

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body::Body;
use tower::Service;

use crate::body::ResponseBody;
use crate::direction::sealed::Direction;
use crate::direction::state;
use crate::request_body::{BoxError, RequestBody};
use crate::shared::Shared;

pub(crate) use crate::settings::WebSocketSettings;
pub(crate) use handshake::is_upgrade;

/// Answers an upgrade request: `101 Switching Protocols` and a session
/// task, or the error status that says why not.
pub(crate) fn upgrade<S, D, ReqB, ResB>(
    inner: S,
    shared: Arc<Shared<D>>,
    settings: WebSocketSettings,
    request: Request<ReqB>,
    prefix: String,
) -> Response<ResponseBody<ResB>>
where
    D: Direction,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqB: Body<Data = Bytes> + Send + 'static,
    ReqB::Error: Into<BoxError>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: std::fmt::Display + Into<BoxError>,
{
    let mut request = request;
    let tenant = state::tenant::<D>(&shared.direction, request.headers()).key;
    let Some(place) = settings.open.take(&tenant, settings.max_per_tenant) else {
        shared
            .common
            .observer
            .on_budget(crate::observer::Budget::WebSocketConnections);
        let refusal = rejection::HandshakeRejection::from(rejection::TooManyConnections {
            max: settings.max_per_tenant,
        });
        return refusal.into_response();
    };
    let accepted = match handshake::accept(&mut request) {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal.into_response(),
    };
    let (mut parts, _body) = request.into_parts();
    let mut response = accepted.response;
    let catalog = shared.common.catalog.as_ref();
    codex_head::insert(
        response.headers_mut(),
        &parts.headers,
        shared.common.body_limit,
        catalog.and_then(|catalog| {
            let holder = crate::catalog_etag::holder(&parts.headers);
            catalog.last_served.get(&holder)
        }),
    );
    handshake::strip_upgrade_headers(&mut parts.headers);
    let session = session::Session::new(inner, shared, settings, parts, prefix, place);
    tokio::spawn(session.run(accepted.on_upgrade));
    // Codex reads it from the upgrade, for every turn of the connection.
    if D::REASONING_INCLUDED {
        crate::headers::insert_reasoning_included(response.headers_mut());
    }
    response
}
