//! Driving one connection to its end: served until the client closes it,
//! its watchdog fires, or the server shuts down.

use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

use super::io::WatchedIo;
use super::service::ConnectionService;
use super::watchdog::{Activity, Expired};
use crate::own_wakes::OwnWakes;

/// A connection as hyper-util's automatic builder serves it.
pub type Connection = auto::UpgradeableConnection<
    'static,
    TokioIo<WatchedIo<TcpStream>>,
    ConnectionService,
    TokioExecutor,
>;

/// How long an idle connection told to close (an HTTP/2 GOAWAY) may take
/// to do so before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// Serves `connection` until it ends. When the watchdog fires, nothing is
/// in flight: a connection owing a request head is dropped; an idle one is
/// shut down gracefully (an HTTP/2 client is sent GOAWAY, so that it does
/// not take the close for a failure), then dropped if that takes long.
/// When `stop` turns true, the connection finishes what is in flight and
/// closes.
pub async fn drive(
    connection: Connection,
    activity: Arc<Activity>,
    mut stop: watch::Receiver<bool>,
    peer: SocketAddr,
) {
    tokio::pin!(connection);
    // The connection's own wakes (its request body asking hyper for data,
    // an upstream connection polled by the exchange) are answered in the
    // poll: see `OwnWakes`.
    let own = OwnWakes::new();
    let mut closing_by: Option<Instant> = None;
    let mut stopping = false;
    loop {
        tokio::select! {
            result = poll_fn(|cx| own.poll(cx, |cx| connection.as_mut().poll(cx))) => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                return;
            }
            expired = activity.expired(), if closing_by.is_none() => {
                tracing::debug!(%peer, reason = expired.as_str(), "closing the connection");
                if expired == Expired::HeaderRead {
                    return;
                }
                connection.as_mut().graceful_shutdown();
                closing_by = Some(Instant::now() + CLOSE_GRACE);
            }
            () = sleep_until(closing_by) => return,
            // An error means the server is gone: stop as well.
            _ = stop.changed(), if !stopping && closing_by.is_none() => {
                stopping = true;
                connection.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Sleeps until `at`, or forever.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
