//! HTTP/1.1 connections to a plain `http://` upstream, each driven by the
//! exchange that uses it.
//!
//! A pooled client that runs every connection as a task of its own hands
//! each chunk the upstream sends across tasks: the connection's task reads
//! it, and the task serving the client is woken (often on the other worker
//! thread) to take it. Here the connection is polled by the exchange
//! itself: while waiting for the response head, then from the response
//! body. Bytes read from the upstream are written to the client by the same
//! task, in the same poll, and an upstream read that holds several events
//! leaves as one write. Between exchanges, a kept-alive connection waits in
//! the pool, watched by a small task that drops it if the upstream closes
//! it. A connection the upstream closes in the very moment it is taken
//! fails the request sent down it with no answer at all: such a request is
//! sent again on a fresh connection, as curl does, when it can be: when it
//! was not written yet, or its body is a translated one the bridge holds.

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response, Uri};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower::Service;
use wirebridge_tower::{BoxError, RequestBody};

use super::rewrite::origin_form;
use crate::server::ClientBody;

type Outgoing = RequestBody<ClientBody>;
type Connection = http1::Connection<TokioIo<TcpStream>, Outgoing>;

/// Idle connections kept, at most.
const MAX_IDLE: usize = 256;

/// Why a request could not be exchanged with the upstream.
#[derive(Debug, thiserror::Error)]
pub enum DirectError {
    /// No connection could be made.
    #[error("cannot connect: {0}")]
    Connect(#[source] BoxError),
    /// The connection failed before the response head arrived.
    #[error(transparent)]
    Exchange(#[from] hyper::Error),
}

impl DirectError {
    /// Whether it failed while connecting.
    pub fn is_connect(&self) -> bool {
        matches!(self, DirectError::Connect(_))
    }
}

/// A connection and the handle that sends requests on it.
struct Driven {
    sender: http1::SendRequest<Outgoing>,
    connection: Connection,
}

impl Driven {
    /// Polls the connection: reads what the upstream sent, writes what is
    /// to be sent. `true` when it has ended.
    fn drive(&mut self, cx: &mut Context<'_>) -> bool {
        Pin::new(&mut self.connection).poll(cx).is_ready()
    }
}

/// A kept-alive connection waiting for its next request. A small task
/// watches it meanwhile, so that a close from the upstream is seen at once
/// (and the connection dropped) rather than when a request is already on
/// its way down it.
struct Idle {
    parked: Arc<Parked>,
    since: Instant,
}

struct Parked {
    driven: Mutex<Option<Driven>>,
    /// The watching task, woken to end when the connection is taken.
    watcher: Mutex<Option<Waker>>,
}

impl Parked {
    /// Takes the connection, if it is still there, and lets its watcher end.
    fn take(&self) -> Option<Driven> {
        let driven = lock(&self.driven).take();
        if let Some(watcher) = lock(&self.watcher).take() {
            watcher.wake();
        }
        driven
    }

    /// Polls the parked connection until it is taken or it ends.
    async fn watch(self: Arc<Self>) {
        poll_fn(|cx| {
            let mut slot = lock(&self.driven);
            let Some(driven) = slot.as_mut() else {
                return Poll::Ready(());
            };
            *lock(&self.watcher) = Some(cx.waker().clone());
            if driven.drive(cx) {
                *slot = None;
                return Poll::Ready(());
            }
            Poll::Pending
        })
        .await
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

struct Shared {
    idle: Mutex<Vec<Idle>>,
    /// How long an idle connection is kept.
    keep_idle: Duration,
}

/// Connections to one upstream, reused while they are kept alive.
#[derive(Clone)]
pub struct DirectPool {
    connector: HttpConnector,
    shared: Arc<Shared>,
}

impl DirectPool {
    /// A pool whose connections are made by `connector` and kept idle for
    /// up to `keep_idle`.
    pub fn new(connector: HttpConnector, keep_idle: Duration) -> Self {
        Self {
            connector,
            shared: Arc::new(Shared {
                idle: Mutex::new(Vec::new()),
                keep_idle,
            }),
        }
    }

    /// Sends `request` (its URI absolute) and waits for the response head,
    /// driving the connection meanwhile. The response body drives it on.
    pub async fn request(
        &self,
        mut request: Request<Outgoing>,
    ) -> Result<Response<DrivenBody>, DirectError> {
        let target = request.uri().clone();
        origin_form(&mut request);
        let mut request = Some(request);
        // A kept-alive connection the upstream closed while it was idle
        // fails before the request is written: then the request is sent
        // once more, on a connection of its own.
        for reused in [true, false] {
            let mut driven = match reused {
                true => match self.checkout() {
                    Some(driven) => driven,
                    None => continue,
                },
                false => self.connect(&target).await?,
            };
            let outgoing = request.take().expect("a request to send");
            // What to send again if the upstream closes a reused connection
            // just as the request goes down it (it closed it while idle, and
            // the close had not arrived yet). Nothing of it was answered; a
            // streamed client body cannot be sent twice, a translated one can.
            let again = if reused { replay(&outgoing) } else { None };
            let mut response = std::pin::pin!(driven.sender.try_send_request(outgoing));
            // Dropped as soon as it ends: a request still queued for it is
            // failed (and handed back) only when the connection is gone.
            let mut driven = Some(driven);
            let result = poll_fn(|cx| {
                // The connection first: it writes the request and reads the
                // head the response future is waiting for.
                if driven.as_mut().is_some_and(|d| d.drive(cx)) {
                    driven = None;
                }
                response.as_mut().poll(cx)
            })
            .await;
            match result {
                Ok(response) => {
                    let shared = Arc::clone(&self.shared);
                    return Ok(response.map(|body| DrivenBody {
                        body,
                        driven,
                        shared,
                    }));
                }
                Err(mut e) => match e.take_message().or(again) {
                    Some(unsent) if reused => {
                        tracing::debug!(error = %e.error(), "a reused upstream connection failed; sending again");
                        request = Some(unsent);
                    }
                    _ => return Err(e.into_error().into()),
                },
            }
        }
        unreachable!("the second attempt always returns")
    }

    /// An idle connection that is still open, if there is one.
    fn checkout(&self) -> Option<Driven> {
        loop {
            let idle = lock(&self.shared.idle).pop()?;
            let Some(driven) = idle.parked.take() else {
                continue; // the upstream closed it
            };
            if idle.since.elapsed() < self.shared.keep_idle && driven.sender.is_ready() {
                return Some(driven);
            }
        }
    }

    async fn connect(&self, target: &Uri) -> Result<Driven, DirectError> {
        let mut connector = self.connector.clone();
        let stream = connector
            .call(target.clone())
            .await
            .map_err(|e| DirectError::Connect(e.into()))?;
        let (sender, connection) = http1::Builder::new()
            .handshake(stream)
            .await
            .map_err(DirectError::Exchange)?;
        Ok(Driven { sender, connection })
    }
}

/// A copy of `request` to send again, when its body can be.
fn replay(request: &Request<Outgoing>) -> Option<Request<Outgoing>> {
    let body = request.body().replay()?;
    let mut again = Request::new(body);
    *again.method_mut() = request.method().clone();
    *again.uri_mut() = request.uri().clone();
    *again.version_mut() = request.version();
    *again.headers_mut() = request.headers().clone();
    Some(again)
}

/// The upstream's response body, driving its connection; back in the pool
/// once the body has ended on a connection kept alive.
pub struct DrivenBody {
    body: Incoming,
    driven: Option<Driven>,
    shared: Arc<Shared>,
}

impl DrivenBody {
    /// The body ended: a connection that can take another request goes
    /// back to the pool.
    fn release(&mut self, cx: &mut Context<'_>) {
        let Some(mut driven) = self.driven.take() else {
            return;
        };
        // One more poll lets the connection take in the end of the message
        // and turn ready for the next.
        if driven.drive(cx) || !driven.sender.is_ready() {
            return;
        }
        let mut idle = lock(&self.shared.idle);
        if idle.len() >= MAX_IDLE {
            // Connections the upstream closed, or kept too long, leave
            // their places to this one.
            let keep_idle = self.shared.keep_idle;
            idle.retain(|i| i.since.elapsed() < keep_idle && lock(&i.parked.driven).is_some());
            if idle.len() >= MAX_IDLE {
                return;
            }
        }
        let parked = Arc::new(Parked {
            driven: Mutex::new(Some(driven)),
            watcher: Mutex::new(None),
        });
        idle.push(Idle {
            parked: Arc::clone(&parked),
            since: Instant::now(),
        });
        drop(idle);
        tokio::spawn(parked.watch());
    }
}

impl Body for DrivenBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        // The body first: asking for data is what lets the connection read
        // it. Then the connection, then the body again for what it read.
        for _ in 0..2 {
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Ready(None) => {
                    this.release(cx);
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(frame)) => {
                    if this.body.is_end_stream() {
                        this.release(cx);
                    }
                    return Poll::Ready(Some(frame));
                }
                Poll::Pending => {}
            }
            match &mut this.driven {
                Some(driven) => {
                    if driven.drive(cx) {
                        this.driven = None;
                    }
                }
                None => return Poll::Pending,
            }
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests;
