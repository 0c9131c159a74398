//! Serving client connections within limits.
//!
//! - At most `max_connections` connections are served at once
//!   ([`places`]). At the cap new connections wait in the kernel's
//!   backlog, instead of being accepted only to fail for want of a file
//!   descriptor.
//! - Failed accepts back off and are logged with a count ([`accept`]).
//! - Each connection has a watchdog ([`watchdog`]): it is closed when a
//!   request head does not arrive within the header-read timeout (on a new
//!   connection, or once the next request's bytes start arriving on a
//!   kept-alive one), or when it has had nothing in flight and nothing
//!   arriving for the idle timeout. Its IO ([`io`]) reports arriving request
//!   bytes, its service ([`service`]) the requests in flight.
//! - Each request body must arrive within the body-read timeout of its head,
//!   or the client gets a 408 ([`body`], [`service`]).

mod accept;
mod body;
mod connection;
mod fd_limit;
mod io;
mod places;
mod service;
mod watchdog;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::combinators::UnsyncBoxBody;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower::util::BoxCloneService;
use wirebridge_tower::BoxError;

use crate::config::ServerLimits;
use places::Reserved;

pub use body::ClientBody;
pub use places::{Place, Places};
pub use watchdog::Timeouts;

/// The body of every response sent to a client.
pub type ResponseBody = UnsyncBoxBody<Bytes, BoxError>;

/// What answers each request.
pub type App = BoxCloneService<Request<ClientBody>, Response<ResponseBody>, Infallible>;

/// The limits the server runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The watchdog's header-read and idle timeouts.
    pub timeouts: Timeouts,
    /// Time from a request's head to the end of its body.
    pub body_read_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

impl Limits {
    /// The settings, with the connection cap resolved: when none is set,
    /// the default, lowered to what the open-file limit can hold when each
    /// connection takes `descriptors_per_connection`. A cap that is set is
    /// kept, with a warning if the limit cannot hold it.
    pub fn resolve(settings: &ServerLimits, descriptors_per_connection: u64) -> Self {
        let open_files = fd_limit::open_files();
        let fit =
            open_files.map(|limit| fd_limit::connections_within(limit, descriptors_per_connection));
        let max_connections = match (settings.max_connections, fit) {
            (Some(set), Some(fit)) if set > fit => {
                tracing::warn!(
                    max_connections = set,
                    open_files_limit = open_files,
                    fits = fit,
                    "max_connections is more than the open-file limit holds with room for \
                     upstream connections: accepts may fail for want of descriptors \
                     (raise `ulimit -n`, or lower max_connections)"
                );
                set
            }
            (Some(set), _) => set,
            (None, Some(fit)) => fd_limit::DEFAULT_MAX_CONNECTIONS.min(fit),
            (None, None) => fd_limit::DEFAULT_MAX_CONNECTIONS,
        };
        Self {
            timeouts: Timeouts {
                header_read: settings.header_read_timeout,
                idle: settings.idle_timeout,
            },
            body_read_timeout: settings.body_read_timeout,
            max_connections,
        }
    }
}

/// Serves `app` on `listener`, each connection in a place of `places`,
/// until `stop` turns true: then stops accepting and returns, and the
/// connections it started finish what is in flight and close.
pub async fn serve(
    listener: TcpListener,
    app: App,
    limits: Limits,
    places: Places,
    mut stop: watch::Receiver<bool>,
) {
    let mut acceptor = accept::Acceptor::new(listener);
    let mut at_cap = accept::Throttle::new(accept::LOG_EVERY);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The watchdog times request heads, for both protocols; hyper's own
    // HTTP/1 timeout would also close idle connections at the same
    // deadline, cutting the idle timeout short.
    builder.http1().header_read_timeout(None);
    let stopping = stop.clone();
    let stopped = async move {
        // An error means the sender is gone: stop as well.
        let _ = stop.wait_for(|stop| *stop).await;
    };
    tokio::pin!(stopped);
    loop {
        // A place, then a connection: at the cap nothing is accepted, and
        // new connections wait in the kernel's backlog.
        let Some(reserved) = reserve(&places, &mut at_cap, &mut stopped).await else {
            break;
        };
        let (stream, peer) = tokio::select! {
            accepted = acceptor.accept() => accepted,
            () = &mut stopped => break,
        };
        let place = places.occupy(reserved);
        tracing::debug!(%peer, "accepted a connection");
        let _ = stream.set_nodelay(true);
        let place = Arc::new(place);
        let activity = watchdog::Activity::new(limits.timeouts);
        let io = TokioIo::new(io::WatchedIo::new(stream, activity.clone()));
        let service = service::ConnectionService::new(
            app.clone(),
            activity.clone(),
            limits.body_read_timeout,
            Arc::clone(&place),
        );
        let connection = builder
            .serve_connection_with_upgrades(io, service)
            .into_owned();
        let stopping = stopping.clone();
        tokio::spawn(async move {
            connection::drive(connection, activity, stopping, peer).await;
            drop(place);
        });
    }
}

/// A place under the cap, waiting for one when there is none (logged, at
/// most once per interval); `None` if `stopped` resolves first.
async fn reserve(
    places: &Places,
    at_cap: &mut accept::Throttle,
    stopped: &mut (impl Future<Output = ()> + Unpin),
) -> Option<Reserved> {
    if let Some(reserved) = places.try_reserve() {
        return Some(reserved);
    }
    if let Some(times) = at_cap.record(tokio::time::Instant::now()) {
        tracing::warn!(
            max_connections = places.max(),
            times,
            "at the connection limit: new connections wait in the backlog"
        );
    }
    tokio::select! {
        reserved = places.reserve() => Some(reserved),
        () = stopped => None,
    }
}
