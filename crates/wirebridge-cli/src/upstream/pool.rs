//! Connections to one plain `http://` upstream, reused while they are kept
//! alive, and never once in doubt.
//!
//! HTTP/1.1 answers carry nothing that ties them to their request but their
//! order: whatever the upstream sends after a request has gone down a
//! connection is read as that request's answer. So a connection is reused
//! only when it is known to hold nothing else: its last response ended
//! where its framing said, nothing was read past that end, no write was
//! left unfinished, and, when it is taken from the pool, the socket itself
//! holds no byte and no close ([`Transport::unread`]). Anything else, an
//! answer nobody asked for above all, closes the connection.
//!
//! Between exchanges a kept-alive connection waits here. One task per pool
//! looks at the idle connections every [`SWEEP_EVERY`] and drops those the
//! upstream closed, or that hold anything, so that they do not linger; the
//! look at checkout is what keeps a request off them. (A task of its own
//! for each connection parked saw a close at once, but cost every exchange
//! a task spawned and woken, often on the other worker thread.)

use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use http::{Request, Response, Uri};
use tower::Service;
use wirebridge_tower::BoxError;

use super::connection::{self, Checkin, DrivenBody, Unanswered};
use super::rewrite;
use super::transport::{Transport, Unread};
use super::Outgoing;

/// Idle connections kept, at most.
pub const MAX_IDLE: usize = 256;

/// How often idle connections are looked at, to drop those the upstream
/// closed.
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Why a request could not be exchanged with the upstream.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No connection could be made.
    #[error("cannot connect: {0}")]
    Connect(#[source] BoxError),
    /// The connection failed before the response head arrived.
    #[error(transparent)]
    Exchange(#[from] hyper::Error),
    /// The answer's framing is in doubt: it has both `content-length` and
    /// `transfer-encoding` (RFC 9112, 6.3), as a response smuggled past a
    /// proxy would. It is not passed on, and its connection is closed.
    #[error("the answer has both content-length and transfer-encoding")]
    Framing,
}

impl Error {
    /// Whether it failed while connecting.
    pub fn is_connect(&self) -> bool {
        matches!(self, Error::Connect(_))
    }
}

/// Connections to one upstream, made by `C` and kept idle between
/// exchanges.
pub struct Pool<C: Service<Uri>> {
    connector: C,
    shared: Arc<Shared<C::Response>>,
}

impl<C: Service<Uri> + Clone> Clone for Pool<C> {
    fn clone(&self) -> Self {
        Self {
            connector: self.connector.clone(),
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<C> Pool<C>
where
    C: Service<Uri> + Clone + Send + Sync + 'static,
    C::Response: Transport,
    C::Error: Into<BoxError>,
    C::Future: Send,
{
    /// A pool whose connections are made by `connector` and kept idle for
    /// up to `keep_idle`, [`MAX_IDLE`] of them at most.
    pub fn new(connector: C, keep_idle: Duration) -> Self {
        Self::with_limits(connector, keep_idle, MAX_IDLE)
    }

    /// A pool keeping at most `max_idle` idle connections.
    pub fn with_limits(connector: C, keep_idle: Duration, max_idle: usize) -> Self {
        Self {
            connector,
            shared: Arc::new(Shared {
                idle: Mutex::new(IdleList::default()),
                keep_idle,
                max_idle,
            }),
        }
    }

    /// Sends `request` (its URI absolute) and waits for the response head,
    /// driving the connection meanwhile. The response body drives it on.
    ///
    /// Connections are kept apart by the request's [`Partition`] (the
    /// client's credential, hashed): one client's request never goes down
    /// a connection another's used. An upstream that writes an answer
    /// nobody asked for after the connection is reused cannot be told
    /// from the real one (HTTP/1.1 pairs them by order alone); kept apart,
    /// it can only reach the client whose connection it was.
    pub async fn request(
        &self,
        mut request: Request<Outgoing>,
    ) -> Result<Response<DrivenBody<C::Response>>, Error> {
        let target = request.uri().clone();
        let partition = request
            .extensions()
            .get::<Partition>()
            .copied()
            .unwrap_or_default();
        rewrite::origin_form(&mut request);
        let request = match self.checkout(partition) {
            Some(transport) => {
                let copy = replay(&request);
                match connection::send(transport, request, self.home(partition)).await {
                    Ok(response) => return framed(response),
                    Err(failed) => resend(failed, copy)?,
                }
            }
            None => request,
        };
        let transport = self.connect(&target).await?;
        match connection::send(transport, request, self.home(partition)).await {
            Ok(response) => framed(response),
            Err(failed) => Err(Error::Exchange(failed.error)),
        }
    }

    fn home(&self, partition: Partition) -> Arc<dyn Checkin<C::Response>> {
        Arc::new(Home {
            shared: Arc::clone(&self.shared),
            partition,
        })
    }

    /// An idle connection of `partition` that holds nothing unread and is
    /// still open, if there is one; the most recently used first.
    fn checkout(&self, partition: Partition) -> Option<C::Response> {
        loop {
            let mut idle = {
                let mut idle = lock(&self.shared.idle);
                let at = idle.list.iter().rposition(|i| i.partition == partition)?;
                idle.list.remove(at)
            };
            if idle.since.elapsed() >= self.shared.keep_idle {
                continue;
            }
            // The socket is asked itself, just before a request goes down
            // the connection.
            match idle.transport.unread() {
                Unread::Nothing => return Some(idle.transport),
                unread => {
                    tracing::debug!(?unread, "an idle upstream connection is closed, not reused");
                }
            }
        }
    }

    async fn connect(&self, target: &Uri) -> Result<C::Response, Error> {
        let mut connector = self.connector.clone();
        poll_fn(|cx| connector.poll_ready(cx))
            .await
            .map_err(|e| Error::Connect(e.into()))?;
        connector
            .call(target.clone())
            .await
            .map_err(|e| Error::Connect(e.into()))
    }

    /// Idle connections kept (for tests).
    #[cfg(test)]
    pub fn idle(&self) -> usize {
        lock(&self.shared.idle).list.len()
    }
}

/// The response, unless its framing is in doubt: then it is dropped, body
/// unread, and that closes its connection.
fn framed<B>(response: Response<B>) -> Result<Response<B>, Error> {
    if rewrite::framing_in_doubt(response.headers()) {
        return Err(Error::Framing);
    }
    Ok(response)
}

/// What to send again, on a new connection, after a reused one failed with
/// no answer: only a request none of whose bytes was written. hyper hands a
/// request back when it never took it from its queue; one it took is sent
/// again only when the transport took not one byte of it, and its body is
/// one the bridge holds (a translated one; `copy`). Anything else may have
/// reached the upstream, which may have acted on it, and is never sent
/// twice: the client is told the exchange failed.
fn resend(failed: Unanswered, copy: Option<Request<Outgoing>>) -> Result<Request<Outgoing>, Error> {
    let again = match failed.unsent {
        Some(unsent) => Some(unsent),
        None if !failed.wrote => copy,
        None => None,
    };
    match again {
        Some(request) => {
            tracing::debug!(error = %failed.error, "a reused upstream connection failed before the request left; sending it on a new one");
            Ok(request)
        }
        None => Err(Error::Exchange(failed.error)),
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

struct Shared<T> {
    idle: Mutex<IdleList<T>>,
    /// How long an idle connection is kept.
    keep_idle: Duration,
    /// How many are kept, at most.
    max_idle: usize,
}

/// The idle connections, and whether a task is sweeping them.
struct IdleList<T> {
    /// The most recently idle last.
    list: Vec<Idle<T>>,
    swept: bool,
}

impl<T> Default for IdleList<T> {
    fn default() -> Self {
        Self {
            list: Vec::new(),
            swept: false,
        }
    }
}

/// Which client's connections a request may use: a hash of its
/// credential, set by the caller as a request extension (none: 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Partition(pub u64);

/// Where a connection goes back to once its exchange is done: its pool,
/// under the partition it served.
struct Home<T> {
    shared: Arc<Shared<T>>,
    partition: Partition,
}

impl<T: Transport> Checkin<T> for Home<T> {
    fn checkin(&self, transport: T) {
        Shared::checkin(&self.shared, transport, self.partition);
    }
}

impl<T: Transport> Shared<T> {
    fn checkin(this: &Arc<Self>, transport: T, partition: Partition) {
        let parked = Idle {
            transport,
            since: Instant::now(),
            partition,
        };
        let mut idle = lock(&this.idle);
        let mut gone = Vec::new();
        if idle.list.len() >= this.max_idle {
            // Connections kept too long leave their places to this one
            // (the sockets are asked by the sweep, not on this path).
            gone = this.expired(&mut idle.list, false);
        }
        let sweep = if idle.list.len() < this.max_idle {
            idle.list.push(parked);
            !std::mem::replace(&mut idle.swept, true)
        } else {
            gone.push(parked);
            false
        };
        drop(idle);
        // Closed outside the lock.
        drop(gone);
        if sweep {
            tokio::spawn(Self::sweep(Arc::downgrade(this)));
        }
    }

    /// Takes out the connections kept too long, and, when `ask` (a system
    /// call each), those the upstream closed or sent anything on.
    fn expired(&self, list: &mut Vec<Idle<T>>, ask: bool) -> Vec<Idle<T>> {
        list.extract_if(.., |i| {
            i.since.elapsed() >= self.keep_idle || (ask && i.transport.unread() != Unread::Nothing)
        })
        .collect()
    }

    /// Drops expired connections every [`SWEEP_EVERY`] while any is idle
    /// (the next to be kept starts the task again), or until the pool is
    /// gone.
    async fn sweep(shared: Weak<Self>) {
        loop {
            tokio::time::sleep(SWEEP_EVERY).await;
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let mut idle = lock(&shared.idle);
            let gone = shared.expired(&mut idle.list, true);
            let done = idle.list.is_empty();
            idle.swept = !done;
            drop(idle);
            if !gone.is_empty() {
                tracing::debug!(
                    closed = gone.len(),
                    "idle upstream connections closed or kept too long; dropped"
                );
            }
            if done {
                return;
            }
        }
    }
}

/// A kept-alive connection waiting for its next request.
struct Idle<T> {
    transport: T,
    since: Instant,
    partition: Partition,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
