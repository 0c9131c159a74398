//! One WebSocket connection: its turns, one after another, and the
//! messages of the client read all along.

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response};
use http_body::Body;
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use tower::{Service, ServiceExt};

use super::client_event::{self, ClientEvent, Create, Rejected};
use super::rejection::{BinaryMessage, MemoryExhausted, TooManyQueued};
use super::server_event::{error_event, steer_failed};
use super::turn::{self, Ending, Outgoing, TurnExchange, TurnMessages};
use super::WebSocketSettings;
use crate::byte_budget::Held;
use crate::direction::sealed::Direction;
use crate::direction::state;
use crate::exchange;
use crate::observer::Transport;
use crate::request_body::{BoxError, RequestBody};
use crate::shared::Shared;
use crate::stateful::Stateful;
use crate::tracker::Tracker;

type Socket = WebSocketStream<TokioIo<Upgraded>>;

/// A connection's settings and what its turns share.
pub(crate) struct Session<S, D: Direction, ReqB> {
    /// Locked only to clone it, once per turn: the session is shared by
    /// reference across the awaits of its task, which asks for `Sync`.
    inner: Mutex<S>,
    /// The layer's settings, with the connection's cache in front of the
    /// store.
    shared: Arc<Shared<D>>,
    /// The same with the connection's cache alone: for warm-ups of a
    /// tenant whose credential the backend has not accepted yet.
    cache_only: Arc<Shared<D>>,
    settings: WebSocketSettings,
    /// The upgrade request's head: its credentials go upstream with every
    /// turn.
    parts: Arc<http::request::Parts>,
    prefix: Arc<str>,
    tenant: String,
    stateful: Option<Stateful>,
    /// The connection's cache, and the bytes it holds of the layer's
    /// memory budget: what it kept as of the last look, which a turn's end
    /// and every request's arrival bring up to date.
    cache: Arc<wirebridge_store::MemoryStore>,
    cache_held: Mutex<Held>,
    /// The connection's place under its tenant's cap, given up with it.
    _place: crate::open_sockets::SocketPlace,
    _request: PhantomData<fn() -> ReqB>,
}

/// A `response.create` waiting for its turn, with its request's bytes
/// taken from the layer's memory budget.
struct Waiting {
    create: Create,
    held: Held,
}

/// The turn running, and what ending it means.
struct Running {
    messages: TurnMessages,
    previous_response_id: Option<String>,
    /// How the turn ended, once its messages said: a turn that ends
    /// without saying (dropped) is not continued from the cache.
    ending: Option<Ending>,
    /// The request's bytes, held until the turn ends and what it kept is
    /// the cache's to hold.
    held: Held,
}

/// What to do after a client message.
enum Flow {
    Continue,
    Close(Option<CloseFrame>),
}

impl<S, D, ReqB, ResB> Session<S, D, ReqB>
where
    D: Direction,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqB: Body<Data = Bytes> + Send + 'static,
    ReqB::Error: Into<BoxError>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: fmt::Display + Into<BoxError>,
{
    pub(crate) fn new(
        inner: S,
        shared: Arc<Shared<D>>,
        settings: WebSocketSettings,
        parts: http::request::Parts,
        prefix: String,
        place: crate::open_sockets::SocketPlace,
    ) -> Self {
        let stores = state::tenant::<D>(&shared.direction, &parts.headers).stores;
        let cache = Arc::new(settings.cache());
        let cache_held = Mutex::new(settings.memory.none());
        let cache_only = Arc::new(Shared {
            common: shared.common.clone(),
            direction: state::session::<D>(&shared.direction, Arc::clone(&cache), false),
        });
        let shared = Arc::new(Shared {
            common: shared.common.clone(),
            direction: state::session::<D>(&shared.direction, Arc::clone(&cache), stores),
        });
        let tenant = state::tenant::<D>(&shared.direction, &parts.headers).key;
        let stateful = state::stateful::<D>(&shared.direction).cloned();
        Self {
            inner: Mutex::new(inner),
            shared,
            cache_only,
            settings,
            parts: Arc::new(parts),
            prefix: prefix.into(),
            tenant,
            stateful,
            cache,
            cache_held,
            _place: place,
            _request: PhantomData,
        }
    }

    /// Runs the connection once hyper hands it over, until either side
    /// closes it or it idles out.
    pub(crate) async fn run(self, on_upgrade: OnUpgrade) {
        let upgraded = match on_upgrade.await {
            Ok(upgraded) => upgraded,
            Err(e) => {
                tracing::debug!(error = %e, "the WebSocket upgrade did not complete");
                return;
            }
        };
        let limit = self.shared.common.body_limit;
        let config = WebSocketConfig::default()
            .max_message_size(Some(limit))
            .max_frame_size(Some(limit));
        let socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config))
                .await;
        let (mut sink, mut incoming) = socket.split();
        let close = self.serve(&mut sink, &mut incoming).await;
        if let Some(frame) = close {
            let _ = sink.send(Message::Close(Some(frame))).await;
        }
        let _ = sink.close().await;
    }

    /// The connection's loop; the close frame to send, if any.
    async fn serve(
        &self,
        sink: &mut SplitSink<Socket, Message>,
        incoming: &mut SplitStream<Socket>,
    ) -> Option<CloseFrame> {
        let mut queued: VecDeque<Waiting> = VecDeque::new();
        let mut running: Option<Running> = None;
        // The server's shutdown: a running turn's stream ends in failure by
        // itself (its exchange is told too); then the connection closes
        // with 1001, and no queued turn starts.
        let mut closing = match &self.shared.common.shutdown {
            Some(shutdown) => shutdown.triggered(),
            None => Box::pin(std::future::pending()),
        };
        let going_away = || CloseFrame {
            code: CloseCode::Away,
            reason: crate::shutdown::SHUTDOWN_MESSAGE.into(),
        };
        // Past its age limit the connection closes, once no turn runs.
        let expires = tokio::time::Instant::now() + self.settings.max_age;
        let too_old = || CloseFrame {
            code: CloseCode::Normal,
            reason: "the connection reached its age limit; open a new one".into(),
        };
        loop {
            if running.is_none() && tokio::time::Instant::now() >= expires {
                return Some(too_old());
            }
            let shutting_down = self
                .shared
                .common
                .shutdown
                .as_ref()
                .is_some_and(crate::Shutdown::is_triggered);
            if running.is_none() && shutting_down {
                return Some(going_away());
            }
            if running.is_none() {
                running = queued.pop_front().map(|waiting| self.start(waiting));
            }
            let flow = match &mut running {
                // Client messages are read while a turn runs: a close or a
                // disconnect drops the turn, and with it the upstream
                // request.
                Some(turn) => tokio::select! {
                    message = incoming.next() => {
                        self.on_message(message, &mut queued, sink, true).await
                    }
                    out = turn.messages.next() => match out {
                        Some(Outgoing::Text(text)) => send(sink, Message::Text(text)).await,
                        Some(Outgoing::Ended(ending)) => {
                            turn.ending = Some(ending);
                            Flow::Continue
                        }
                        Some(Outgoing::Ping) => send(sink, Message::Ping(Bytes::new())).await,
                        None => {
                            if let Some(done) = running.take() {
                                self.finish(done).await;
                            }
                            Flow::Continue
                        }
                    },
                },
                None => tokio::select! {
                    waited = tokio::time::timeout(self.settings.idle_timeout, incoming.next()) => {
                        match waited {
                            Ok(message) => self.on_message(message, &mut queued, sink, false).await,
                            Err(_) => Flow::Close(Some(CloseFrame {
                                code: CloseCode::Normal,
                                reason: "idle timeout".into(),
                            })),
                        }
                    }
                    () = &mut closing => Flow::Close(Some(going_away())),
                    () = tokio::time::sleep_until(expires) => Flow::Close(Some(too_old())),
                },
            };
            if let Flow::Close(frame) = flow {
                return frame;
            }
        }
    }

    /// Handles a client message; `busy` while a turn runs.
    async fn on_message(
        &self,
        message: Option<Result<Message, WsError>>,
        queued: &mut VecDeque<Waiting>,
        sink: &mut SplitSink<Socket, Message>,
        busy: bool,
    ) -> Flow {
        let text = match message {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Binary(_))) => return self.reject(sink, BinaryMessage.into()).await,
            // Pings are answered by the protocol layer; pongs need nothing.
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {
                return Flow::Continue
            }
            Some(Ok(Message::Close(_))) | None => return Flow::Close(None),
            Some(Err(WsError::Capacity(e))) => {
                return Flow::Close(Some(CloseFrame {
                    code: CloseCode::Size,
                    reason: format!("{e}").into(),
                }))
            }
            Some(Err(e)) => {
                tracing::debug!(error = %e, "WebSocket connection lost");
                return Flow::Close(None);
            }
        };
        match client_event::parse(text.as_str()) {
            Ok(ClientEvent::Ignored) => Flow::Continue,
            Ok(ClientEvent::Steer(steer)) => {
                send(sink, Message::Text(steer_failed(&steer).into())).await
            }
            Ok(ClientEvent::Create(create)) => {
                let waiting = queued.len() + usize::from(busy);
                // The bytes held for turns not started yet: the running
                // turn's request is the exchange's now.
                let bytes: usize = queued.iter().map(|w| w.create.body.len()).sum();
                let size = create.body.len();
                let limit = self.settings.max_queued_bytes;
                let full = if waiting > self.settings.max_queued {
                    Some(TooManyQueued::Messages { waiting })
                } else if busy && bytes + size > limit {
                    Some(TooManyQueued::Bytes {
                        queued: bytes,
                        size,
                        limit,
                    })
                } else {
                    None
                };
                if let Some(full) = full {
                    self.shared
                        .common
                        .observer
                        .on_budget(crate::observer::Budget::WebSocketQueue);
                    let rejected = Box::new(Rejected {
                        rejection: full.into(),
                        stream_id: create.stream_id,
                    });
                    return self.reject(sink, rejected).await;
                }
                let held = match self.hold(size) {
                    Ok(held) => held,
                    Err(exhausted) => {
                        self.shared
                            .common
                            .observer
                            .on_budget(crate::observer::Budget::WebSocketMemory);
                        let rejected = Box::new(Rejected {
                            rejection: exhausted.into(),
                            stream_id: create.stream_id,
                        });
                        return self.reject(sink, rejected).await;
                    }
                };
                queued.push_back(Waiting { create, held });
                Flow::Continue
            }
            Err(rejected) => self.reject(sink, rejected).await,
        }
    }

    /// Takes a request's `size` bytes from the layer's memory budget,
    /// evicting this connection's oldest cached responses while they do
    /// not fit: never another connection's, whose client did nothing to
    /// lose them.
    fn hold(&self, size: usize) -> Result<Held, MemoryExhausted> {
        let budget = &self.settings.memory;
        self.count_cache();
        loop {
            if let Some(held) = budget.try_take(size) {
                return Ok(held);
            }
            if !self.cache.evict_oldest() {
                return Err(MemoryExhausted {
                    held: budget.held(),
                    size,
                    limit: budget.limit(),
                });
            }
            self.count_cache();
        }
    }

    /// Brings the cache's holding up to what it keeps: more after a turn
    /// saved, less after an eviction or an expiry.
    fn count_cache(&self) {
        let bytes = self.cache.bytes();
        self.cache_held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .set(bytes);
    }

    async fn reject(&self, sink: &mut SplitSink<Socket, Message>, rejected: Box<Rejected>) -> Flow {
        let event = error_event(&rejected.rejection, rejected.stream_id.as_deref());
        send(sink, Message::Text(event.into())).await
    }

    /// Starts a turn.
    fn start(&self, waiting: Waiting) -> Running {
        let Waiting { create, held } = waiting;
        let Create {
            body,
            stream_id,
            generate,
            previous_response_id,
        } = create;
        let messages = if generate {
            let mut inner = self
                .inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let run = self.exchange(&self.shared, body, stream_id.as_deref());
            turn::messages(
                async move {
                    // A service that cannot take a request answers no turn.
                    inner.ready().await.ok()?;
                    run(inner).await
                },
                stream_id,
            )
        } else {
            // Nothing reaches the backend: the turn is answered as an
            // empty reply would be, and kept like any other; in the shared
            // store only once the backend has accepted the credential (no
            // one has checked it otherwise), else on this connection.
            let accepted = self
                .stateful
                .as_ref()
                .is_some_and(|stateful| stateful.is_accepted(&self.tenant));
            let shared = match accepted {
                true => &self.shared,
                false => &self.cache_only,
            };
            self.warm_up(shared, body, stream_id)
        };
        Running {
            messages,
            previous_response_id,
            ending: None,
            held,
        }
    }

    /// The exchange of one turn, over a service, with `shared`'s settings:
    /// its stream in bare JSON events, each with the turn's `lane` first,
    /// as the client receives them.
    fn exchange<T, B>(
        &self,
        shared: &Arc<Shared<D>>,
        body: Vec<u8>,
        lane: Option<&str>,
    ) -> impl FnOnce(T) -> TurnExchange<B>
    where
        T: Service<Request<RequestBody<ReqB>>, Response = Response<B>> + Send + 'static,
        T::Future: Send + 'static,
        T::Error: Send + 'static,
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: fmt::Display + Into<BoxError>,
    {
        let shared = Arc::clone(shared);
        let mut parts = (*self.parts).clone();
        parts.extensions.insert(turn::framing(lane));
        let prefix = Arc::clone(&self.prefix);
        move |service: T| {
            Box::pin(async move {
                let tracker = turn_tracker(&shared, &parts);
                exchange::run_read::<T, D, ReqB, B>(
                    service, &shared, &parts, &body, &prefix, tracker,
                )
                .await
                .ok()
            })
        }
    }

    /// The messages of a warm-up, answered by the exchange's own step with
    /// `shared`'s settings: nothing reaches the backend.
    fn warm_up(
        &self,
        shared: &Arc<Shared<D>>,
        body: Vec<u8>,
        lane: Option<String>,
    ) -> TurnMessages {
        let shared = Arc::clone(shared);
        let mut parts = (*self.parts).clone();
        parts.extensions.insert(turn::framing(lane.as_deref()));
        let answered = async move {
            let tracker = turn_tracker(&shared, &parts);
            match exchange::warm_up::answer(&shared, &parts, &body, tracker).await {
                Ok(events) => turn::answered(&events),
                Err(refused) => turn::messages(async move { Some(refused) }, lane),
            }
        };
        // Nothing is sent before the answer is kept: the stream starts once
        // the future is done.
        futures_util::stream::once(answered).flatten().boxed()
    }

    /// A turn is over: a failed continuation is not continued again from
    /// this connection's cache.
    async fn finish(&self, turn: Running) {
        // What the turn kept is the cache's now: counted before the
        // request's bytes are given back, so the budget never shows less
        // than is held.
        self.count_cache();
        drop(turn.held);
        if turn.ending == Some(Ending::Done) {
            return;
        }
        if let (Some(stateful), Some(previous)) = (&self.stateful, &turn.previous_response_id) {
            stateful.forget_cached(&self.tenant, previous).await;
        }
    }
}

/// Sends a message; a connection that cannot take it is closed.
async fn send(sink: &mut SplitSink<Socket, Message>, message: Message) -> Flow {
    match sink.send(message).await {
        Ok(()) => Flow::Continue,
        Err(e) => {
            tracing::debug!(error = %e, "WebSocket connection lost while sending");
            Flow::Close(None)
        }
    }
}

/// The tracker that reports a turn of a connection: started as the turn
/// starts.
fn turn_tracker<D: Direction>(shared: &Shared<D>, parts: &http::request::Parts) -> Tracker {
    let mut tracker = Tracker::new(
        &shared.common.observer,
        &shared.common.loss_warnings,
        D::KIND,
    );
    tracker.request(parts);
    tracker.transport = Transport::WebSocket;
    tracker
}
