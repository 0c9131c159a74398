//! [`Replicas`]: one service in front of several replicas of one backend,
//! keeping each conversation on one of them.
//!
//! A backend with a prefix cache (vLLM, SGLang, llama.cpp) answers a turn
//! fastest on the replica that served the turn before, since it holds the
//! conversation so far. The translating layers put an [`Affinity`] key in
//! each upstream request's extensions; this service sends the request to
//! the replica the key is kept on ([`choice`] says how it is chosen), and
//! watches the answers: a replica that fails too often in a row is left
//! out for a while.

mod body;
mod choice;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http::{Request, Response};
use tower::{Service, ServiceExt};
use wirebridge_convert::affinity::StableHasher;

use crate::affinity::Affinity;
use crate::request_body::RequestBody;
pub use body::InFlightBody;
use choice::{Choice, Outcome, Placed, Probed, Settings, Table};

/// Marks a reply the inner service made without sending the request (its
/// connection could not be opened): [`Replicas`] sends the request to the
/// next replica when its body can be sent again. An inner service puts it
/// in the reply's extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotSent;

/// What [`Replicas`] tells about its replicas, each named by its index in
/// the list it was given: for metrics and logs. Every method does nothing
/// unless implemented.
pub trait ReplicaEvents: Send + Sync + 'static {
    /// A request was sent to `replica`.
    fn started(&self, _replica: usize) {}
    /// A request to `replica` is over: its reply ended, or was dropped.
    fn finished(&self, _replica: usize) {}
    /// A key pinned to `from`, over the bound on load, went to `to`.
    fn spilled(&self, _from: usize, _to: usize) {}
    /// A request not sent to `from` (its connection failed) goes to `to`.
    fn failed_over(&self, _from: usize, _to: usize) {}
    /// `replica` failed `failures` times in a row and is left out for the
    /// back-off.
    fn ejected(&self, _replica: usize, _failures: usize) {}
    /// `replica`'s back-off is over: it is tried again.
    fn returned(&self, _replica: usize) {}
    /// `replica` joined the set ([`Replicas::update`]).
    fn joined(&self, _replica: usize) {}
    /// `replica` left the set ([`Replicas::update`]): its keys are placed
    /// again on the rest.
    fn left(&self, _replica: usize) {}
}

/// Which replica of a [`Replicas`] set answered: in the extensions of its
/// response, by the replica's index in the list the set was given. The
/// layers report it with the exchange ([`Exchange::replica`]), so that
/// what the answer cost (its prompt tokens, those served from the
/// replica's cache) is counted per replica.
///
/// [`Exchange::replica`]: crate::Exchange::replica
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServedBy(pub usize);

/// Tells nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoReplicaEvents;

impl ReplicaEvents for NoReplicaEvents {}

/// Sends each request to one of several replicas of one backend: the
/// requests of one conversation ([`Affinity`]) to the same replica, while
/// it is healthy and not far busier than the rest; requests without a key
/// round-robin.
///
/// - **The order**: a key's replicas are ordered by rendezvous hashing on
///   the replicas' names, so every process (every replica of the bridge)
///   orders them alike with nothing shared, and a replica that leaves
///   moves only its own keys.
/// - **Bounded load**: a replica with more requests in flight than
///   [`load_factor`](Replicas::load_factor) × the mean, plus one, is
///   passed over for the next in the order.
/// - **Sticky**: a key stays where it was placed (an in-process table,
///   bounded) until its replica is ejected or past the bound by more than
///   [`move_slack`](Replicas::move_slack) requests, since a move makes the
///   new replica evaluate the whole conversation again; a key seen for the
///   first time goes to the replica with the fewest keys among the first
///   two of its order within the bound.
/// - **Health**: after [`eject_after`](Replicas::eject_after) connect
///   failures or 5xx answers in a row a replica is left out for the
///   [`backoff`](Replicas::backoff), never more than half of them at once.
///   A request whose connection failed ([`NotSent`]) goes to the next
///   replica in its key's order when its body can be sent again (a body the
///   layers translated); a request that was sent is never sent again.
///
/// ```
/// use std::convert::Infallible;
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use http_body_util::Full;
/// use tower::{service_fn, ServiceExt};
/// use wirebridge_tower::{Affinity, Replicas, RequestBody};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let replica = |name: &'static str| {
///     service_fn(move |_: Request<RequestBody<Full<Bytes>>>| async move {
///         Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(name))))
///     })
/// };
/// let replicas = Replicas::new(vec![
///     ("http://gpu-0:8000/v1".to_owned(), replica("0")),
///     ("http://gpu-1:8000/v1".to_owned(), replica("1")),
/// ]);
/// let mut served = Vec::new();
/// for _ in 0..4 {
///     let mut request = Request::new(RequestBody::translated(Bytes::from("{}")));
///     request.extensions_mut().insert(Affinity::conversation("conv_1"));
///     let reply = replicas.clone().oneshot(request).await.unwrap();
///     served.push(http_body_util::BodyExt::collect(reply.into_body()).await.unwrap().to_bytes());
/// }
/// // One conversation, one replica.
/// assert!(served.iter().all(|name| *name == served[0]));
/// # }
/// ```
pub struct Replicas<S> {
    /// By slot: a replica that left keeps its service until its slot is
    /// taken.
    services: Arc<RwLock<Vec<S>>>,
    table: Arc<Table>,
    events: Arc<dyn ReplicaEvents>,
}

impl<S> Clone for Replicas<S> {
    fn clone(&self) -> Self {
        Self {
            services: Arc::clone(&self.services),
            table: Arc::clone(&self.table),
            events: Arc::clone(&self.events),
        }
    }
}

impl<S> fmt::Debug for Replicas<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replicas")
            .field("replicas", &self.health().ready().len())
            .finish_non_exhaustive()
    }
}

/// The default of [`Replicas::load_factor`].
pub const DEFAULT_LOAD_FACTOR: f64 = 1.25;
/// The default of [`Replicas::move_slack`].
pub const DEFAULT_MOVE_SLACK: usize = 2;
/// The default of [`Replicas::eject_after`].
pub const DEFAULT_EJECT_AFTER: usize = 3;
/// The default of [`Replicas::backoff`].
pub const DEFAULT_BACKOFF: Duration = Duration::from_secs(10);
/// The most keys pinned at once: beyond it the keys unused longest lose
/// their pins (and are placed again, usually where they were).
pub const MAX_PINS: usize = 1 << 16;

impl<S> Replicas<S> {
    /// The replicas, each with its name: what tells replicas apart in
    /// every process (its URL, without credentials), so that processes
    /// listing them in another order still agree. Panics on an empty list.
    pub fn new(replicas: Vec<(String, S)>) -> Self {
        assert!(!replicas.is_empty(), "Replicas needs at least one replica");
        let (ids, services): (Vec<u64>, Vec<S>) = replicas
            .into_iter()
            .map(|(name, service)| (StableHasher::hash_text(&name), service))
            .unzip();
        let settings = Settings {
            load_factor: DEFAULT_LOAD_FACTOR,
            move_slack: DEFAULT_MOVE_SLACK,
            eject_after: DEFAULT_EJECT_AFTER,
            backoff: DEFAULT_BACKOFF,
            max_pins: MAX_PINS,
        };
        Self {
            services: Arc::new(RwLock::new(services)),
            table: Arc::new(Table::new(ids, settings)),
            events: Arc::new(NoReplicaEvents),
        }
    }

    /// How far above the mean load a replica may go before a key's request
    /// passes it over (at least 1; default 1.25).
    pub fn load_factor(self, factor: f64) -> Self {
        self.settings(|s| s.load_factor = factor.max(1.0))
    }

    /// How many requests in flight past the bound a pinned key's replica
    /// may hold before the key moves (default 2): a new key is placed
    /// within the bound, but a key already pinned has its history in that
    /// replica's cache, and moving it costs evaluating all of it again,
    /// more than waiting behind a request or two.
    pub fn move_slack(self, slack: usize) -> Self {
        self.settings(|s| s.move_slack = slack)
    }

    /// Failures in a row (connect failures, 5xx answers) that eject a
    /// replica (default 3).
    pub fn eject_after(self, failures: usize) -> Self {
        self.settings(|s| s.eject_after = failures.max(1))
    }

    /// How long an ejected replica is left out (default 10 s).
    pub fn backoff(self, backoff: Duration) -> Self {
        self.settings(|s| s.backoff = backoff)
    }

    /// Where events are told.
    pub fn events(mut self, events: impl ReplicaEvents) -> Self {
        self.events = Arc::new(events);
        self
    }

    /// A handle on the replicas' health, for a readiness check.
    pub fn health(&self) -> ReplicaHealth {
        ReplicaHealth {
            table: Arc::clone(&self.table),
        }
    }

    /// Makes the set the replicas `names` (a set that changes at run time:
    /// the addresses a DNS name resolves to), each new one's service made
    /// by `service`. A replica already in the set keeps its index, its
    /// conversations and its health; one that left loses its conversations,
    /// placed again on the rest (its requests in flight end as they would);
    /// one that joins takes new conversations as their order says, and no
    /// conversation pinned elsewhere moves to it. An empty list changes
    /// nothing: a set is never left without a replica. Says the index of
    /// each replica of `names`.
    pub fn update(&self, names: &[String], mut service: impl FnMut(&str) -> S) -> Vec<usize> {
        if names.is_empty() {
            return Vec::new();
        }
        let ids: Vec<u64> = names.iter().map(|n| StableHasher::hash_text(n)).collect();
        let mut services = self.services.write().unwrap_or_else(|e| e.into_inner());
        let (placed, left) = self.table.update(&ids);
        for (name, placed) in names.iter().zip(&placed) {
            if let Placed::Joined(slot) = *placed {
                let made = service(name);
                match services.get_mut(slot) {
                    Some(old) => *old = made,
                    None => services.push(made),
                }
            }
        }
        drop(services);
        for &slot in &left {
            self.events.left(slot);
        }
        for placed in &placed {
            if let Placed::Joined(slot) = *placed {
                self.events.joined(slot);
            }
        }
        placed.iter().map(|p| p.slot()).collect()
    }

    /// Each replica in the set, by index, with its service: what an active
    /// probe sends to.
    pub fn members(&self) -> Vec<(usize, S)>
    where
        S: Clone,
    {
        let services = self.services.read().unwrap_or_else(|e| e.into_inner());
        self.table
            .present()
            .into_iter()
            .map(|index| (index, services[index].clone()))
            .collect()
    }

    /// What an active probe of `replica` found: whether it answered (a
    /// connection opened, an answer that is not a 5xx, in time). Failed
    /// probes eject a replica as failed requests do; an ejected replica
    /// that answers is in again at once.
    pub fn probed(&self, replica: usize, answered: bool) {
        match self.table.probed(replica, answered, Instant::now()) {
            Probed::Ejected(failures) => self.events.ejected(replica, failures),
            Probed::Returned => self.events.returned(replica),
            Probed::Unchanged => {}
        }
    }

    /// The settings changed, on a table not yet shared.
    fn settings(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        let table = Arc::get_mut(&mut self.table).expect("set before the service is cloned");
        change(&mut table.settings);
        self
    }
}

/// Which replicas are ready: neither ejected nor failing as often as
/// ejects.
#[derive(Clone)]
pub struct ReplicaHealth {
    table: Arc<Table>,
}

impl ReplicaHealth {
    /// The readiness of each replica in the set, in the order of their
    /// indexes.
    pub fn ready(&self) -> Vec<bool> {
        self.table.ready().into_iter().flatten().collect()
    }

    /// Each index's readiness: `None` for an index whose replica left the
    /// set.
    pub fn by_index(&self) -> Vec<Option<bool>> {
        self.table.ready()
    }
}

impl fmt::Debug for ReplicaHealth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplicaHealth")
            .field("ready", &self.ready())
            .finish()
    }
}

impl<S, B, ResB> Service<Request<RequestBody<B>>> for Replicas<S>
where
    S: Service<Request<RequestBody<B>>, Response = Response<ResB>> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
    ResB: Send + 'static,
{
    type Response = Response<InFlightBody<ResB>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    /// Always ready: each call waits for the readiness of the replica it
    /// chooses.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<RequestBody<B>>) -> Self::Future {
        let key = request.extensions().get::<Affinity>().map(Affinity::key);
        let choice = self.table.choose(key, Instant::now());
        for &replica in &choice.returned {
            self.events.returned(replica);
        }
        if let Some(from) = choice.spilled_from {
            self.events.spilled(from, choice.attempts[0]);
        }
        let this = self.clone();
        Box::pin(this.send(request, key, choice))
    }
}

impl<S> Replicas<S> {
    /// Sends the request to the first replica of `choice`, and on to the
    /// next while it could not be sent and can be sent again.
    async fn send<B, ResB>(
        self,
        mut request: Request<RequestBody<B>>,
        key: Option<u64>,
        choice: Choice,
    ) -> Result<Response<InFlightBody<ResB>>, S::Error>
    where
        S: Service<Request<RequestBody<B>>, Response = Response<ResB>> + Clone,
    {
        let mut attempts = choice.attempts.iter().copied().peekable();
        while let Some(replica) = attempts.next() {
            // Copied before the request is handed over, when another
            // replica is left to try it on.
            let again = attempts.peek().and_then(|_| replay(&request));
            self.table.start(replica);
            self.events.started(replica);
            let guard = InFlight {
                table: Arc::clone(&self.table),
                events: Arc::clone(&self.events),
                replica,
            };
            let service = self.services.read().unwrap_or_else(|e| e.into_inner())[replica].clone();
            let response = match service.oneshot(request).await {
                Ok(response) => response,
                Err(e) => {
                    self.report(replica, Outcome::Failed);
                    return Err(e);
                }
            };
            let not_sent = response.extensions().get::<NotSent>().is_some();
            let failed = not_sent || response.status().is_server_error();
            self.report(
                replica,
                match failed {
                    true => Outcome::Failed,
                    false => Outcome::Answered,
                },
            );
            match (not_sent, again, attempts.peek()) {
                (true, Some(again), Some(&next)) => {
                    drop(guard);
                    if let Some(key) = key {
                        self.table.repin(key, next);
                    }
                    self.events.failed_over(replica, next);
                    request = again;
                }
                _ => {
                    let mut response = response.map(|body| InFlightBody::new(body, guard));
                    response.extensions_mut().insert(ServedBy(replica));
                    return Ok(response);
                }
            }
        }
        unreachable!("a choice has at least one replica, and its last attempt returns")
    }

    fn report(&self, replica: usize, outcome: Outcome) {
        if let Some(failures) = self.table.report(replica, outcome, Instant::now()) {
            self.events.ejected(replica, failures);
        }
    }
}

/// The request again, with a copy of its body, when the body is one the
/// layers translated (a client's own body streams, and cannot be).
fn replay<B>(request: &Request<RequestBody<B>>) -> Option<Request<RequestBody<B>>> {
    let body = request.body().replay()?;
    let mut again = Request::new(body);
    *again.method_mut() = request.method().clone();
    *again.uri_mut() = request.uri().clone();
    *again.version_mut() = request.version();
    *again.headers_mut() = request.headers().clone();
    *again.extensions_mut() = request.extensions().clone();
    Some(again)
}

/// A request in flight on a replica, until dropped.
pub(crate) struct InFlight {
    table: Arc<Table>,
    events: Arc<dyn ReplicaEvents>,
    replica: usize,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.table.finish(self.replica);
        self.events.finished(self.replica);
    }
}
