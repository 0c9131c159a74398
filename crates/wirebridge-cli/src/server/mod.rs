//! Serving client connections within limits.
//!
//! - At most `max_connections` connections are served at once. At the cap
//!   the listener is not accepted from: new connections wait in the kernel's
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
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tower::util::BoxCloneService;
use wirebridge_tower::BoxError;

use crate::config::ServerLimits;
use crate::metrics::{OpenGauge, Opened};

pub use body::ClientBody;
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

/// A connection's place under the cap, counted in the open-connections
/// gauge; given up when the connection (or the WebSocket session it became)
/// ends.
pub struct Place {
    _permit: OwnedSemaphorePermit,
    _opened: Opened,
}

/// Serves `app` on `listener` until `shutdown` resolves, then stops
/// accepting and lets open exchanges finish within `grace`; `open_connections`
/// counts the connections served.
pub async fn serve(
    listener: TcpListener,
    app: App,
    limits: Limits,
    grace: Duration,
    shutdown: impl Future<Output = ()>,
    open_connections: OpenGauge,
) {
    // One permit per connection served: the cap, and at shutdown the way
    // to wait until every connection has ended.
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    let mut acceptor = accept::Acceptor::new(listener);
    let mut at_cap = accept::Throttle::new(accept::LOG_EVERY);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The watchdog times request heads, for both protocols; hyper's own
    // HTTP/1 timeout would also close idle connections at the same
    // deadline, cutting the idle timeout short.
    builder.http1().header_read_timeout(None);
    let (stop, stopped) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        // A slot first, then a connection: at the cap nothing is accepted,
        // and new connections wait in the backlog.
        let slot = match connections.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                if let Some(times) = at_cap.record(tokio::time::Instant::now()) {
                    tracing::warn!(
                        max_connections = limits.max_connections,
                        times,
                        "at the connection limit: new connections wait in the backlog"
                    );
                }
                tokio::select! {
                    slot = connections.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
                    () = &mut shutdown => break,
                }
            }
        };
        let (stream, peer) = tokio::select! {
            accepted = acceptor.accept() => accepted,
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let slot = Arc::new(Place {
            _permit: slot,
            _opened: open_connections.open(),
        });
        let activity = watchdog::Activity::new(limits.timeouts);
        let io = TokioIo::new(io::WatchedIo::new(stream, activity.clone()));
        let service = service::ConnectionService::new(
            app.clone(),
            activity.clone(),
            limits.body_read_timeout,
            Arc::clone(&slot),
        );
        let connection = builder
            .serve_connection_with_upgrades(io, service)
            .into_owned();
        let stopped = stopped.clone();
        tokio::spawn(async move {
            connection::drive(connection, activity, stopped, peer).await;
            drop(slot);
        });
    }
    drop(acceptor);
    tracing::info!(
        grace_secs = grace.as_secs(),
        "shutting down: waiting for open exchanges"
    );
    let _ = stop.send(true);
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(grace, connections.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!("grace period over: closing the remaining connections");
    }
}
