//! Background responses: starting a run, and the task that runs the
//! exchange to its end (see [`crate::background`]).

use std::fmt;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::BodyExt;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tower::Service;
use wirebridge_convert::responses_to_chat::Turn;
use wirebridge_convert::Framing;

use super::{read_limited, Keep, Reply};
use crate::background::{
    event_stream, json, renew_lease, response_id, status_of, with_output, with_status,
    BackgroundRuns, Follower, Run, Stop,
};
use crate::body::ResponseBody;
use crate::direction::sealed::Direction;
use crate::headers::insert_dropped;
use crate::refusal::stored::StoreUnavailable;
use crate::replies::Refused;
use crate::request_body::{BoxError, RequestBody};
use crate::shared::Shared;
use crate::stateful::Stateful;
use crate::tracker::Tracker;

/// How often a run asks the store whether another replica cancelled it.
const CANCEL_CHECK: Duration = Duration::from_secs(1);
/// Largest upstream error body read for a failed run's reason.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A background request, translated and ready to run.
pub(crate) struct Background<C> {
    pub(crate) runs: BackgroundRuns,
    pub(crate) stateful: Stateful,
    pub(crate) tenant: String,
    pub(crate) context: C,
    pub(crate) stream: bool,
    pub(crate) turn: Turn,
    /// The `Response` as it stands before the run (`queued`).
    pub(crate) queued: Vec<u8>,
}

/// Starts a run of `upstream` (`inner` polled ready) and answers at once:
/// the queued response, or for a streamed request, the run's events as
/// they come. A 429 when a bound on runs is reached, a 503 when the store
/// cannot keep the queued response.
pub(crate) async fn start<S, D, ReqB, ResB>(
    inner: S,
    shared: Arc<Shared<D>>,
    upstream: Request<RequestBody<ReqB>>,
    background: Background<D::Context>,
    mut tracker: Tracker,
) -> Response<ResponseBody<ResB>>
where
    D: Direction,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqB: Send + 'static,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: fmt::Display + Into<BoxError>,
{
    let id = response_id(&background.queued);
    let run = match background
        .runs
        .admit(&background.tenant, &id, background.stream)
    {
        Ok(run) => run,
        Err(refused) => return refused.send(&mut tracker),
    };
    // The lease first: a reader never finds the response queued without one.
    let leased = match background.stateful.store() {
        Some(store) => {
            store
                .hold_lease(&background.tenant, &id, background.runs.lease_length())
                .await
        }
        None => Ok(()),
    };
    let kept = match leased {
        Ok(()) => {
            background
                .stateful
                .save_state(&background.tenant, &background.turn, &background.queued)
                .await
        }
        Err(e) => Err(e),
    };
    if let Err(e) = kept {
        background.runs.finished(&run);
        return Refused::from(StoreUnavailable(e)).send(&mut tracker);
    }
    let mut answer = match background.stream {
        true => event_stream(Follower::new(Arc::clone(&run), None)),
        false => json(background.queued.clone()),
    };
    // What the translation dropped is said at once, as for any answer.
    insert_dropped(answer.headers_mut(), &tracker.losses);
    let task = Task {
        run,
        done_items: Mutex::default(),
        told_end: AtomicBool::new(false),
        runs: background.runs,
        stateful: background.stateful,
        tenant: background.tenant,
        turn: background.turn,
        queued: background.queued,
    };
    let (context, stream) = (background.context, background.stream);
    tokio::spawn(task.drive::<S, D, ReqB, ResB>(inner, shared, upstream, context, stream, tracker));
    answer
}

/// Counts a run as over when dropped: at its end, and should its task
/// ever unwind, so that the bound on runs and a shutdown never wait for it.
struct Over {
    runs: BackgroundRuns,
    run: Arc<Run>,
}

impl Drop for Over {
    fn drop(&mut self) {
        self.runs.finished(&self.run);
    }
}

/// A run's own state, for the task that runs it.
struct Task {
    run: Arc<Run>,
    /// The output items a streamed run has finished, for a response
    /// stopped before its end.
    done_items: Mutex<Vec<Box<RawValue>>>,
    /// Whether followers were sent the event that ends the stream.
    told_end: AtomicBool,
    runs: BackgroundRuns,
    stateful: Stateful,
    tenant: String,
    turn: Turn,
    queued: Vec<u8>,
}

/// How a run ended.
enum End {
    /// The exchange kept what it ended with.
    Kept,
    /// Stopped by the client here.
    Cancelled,
    /// Cancelled through another replica, whose record says so already.
    CancelledElsewhere,
    /// Failed: the error's code and message.
    Failed(&'static str, String),
}

impl Task {
    async fn drive<S, D, ReqB, ResB>(
        self,
        inner: S,
        shared: Arc<Shared<D>>,
        upstream: Request<RequestBody<ReqB>>,
        context: D::Context,
        stream: bool,
        tracker: Tracker,
    ) where
        D: Direction,
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>> + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Send + 'static,
        ReqB: Send + 'static,
        ResB: Body<Data = Bytes> + Send + 'static,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        let _over = Over {
            runs: self.runs.clone(),
            run: Arc::clone(&self.run),
        };
        let shutdown = shared.common.shutdown.clone();
        let end = {
            let exchange = self
                .exchange::<S, D, ReqB, ResB>(inner, &shared, upstream, context, stream, tracker);
            let stopped = self.run.stopped();
            let shut = async {
                match &shutdown {
                    Some(shutdown) => shutdown.triggered().await,
                    None => std::future::pending().await,
                }
            };
            let lease = async {
                match self.stateful.store() {
                    Some(store) => {
                        renew_lease(
                            &**store,
                            &self.tenant,
                            &self.run.id,
                            self.runs.lease_length(),
                        )
                        .await
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                end = exchange => end,
                never = lease => match never {},
                Stop::Cancelled = stopped => End::Cancelled,
                () = shut => shut_down(),
                () = self.cancelled_elsewhere() => End::CancelledElsewhere,
            }
        };
        let end = match end {
            End::Kept if self.still_running().await => End::Failed(
                "server_error",
                "the response was made but could not be kept".into(),
            ),
            end => end,
        };
        let ended = match end {
            End::Kept => None,
            End::CancelledElsewhere => {
                // The store says so already; followers here are told.
                self.tell_followers(&self.ended("cancelled", None));
                None
            }
            End::Cancelled => Some(self.ended("cancelled", None)),
            End::Failed(code, message) => {
                tracing::warn!(response_id = %self.run.id, %message, "a background response failed");
                Some(self.ended("failed", Some((code, &message))))
            }
        };
        if let Some(response) = ended {
            // Followers first: at shutdown the process may be gone before a
            // slow store answers.
            self.tell_followers(&response);
            let _ = self
                .stateful
                .save_state(&self.tenant, &self.turn, &response)
                .await;
        }
    }

    /// The exchange, as a request would run it, read to its end.
    async fn exchange<S, D, ReqB, ResB>(
        &self,
        mut inner: S,
        shared: &Shared<D>,
        upstream: Request<RequestBody<ReqB>>,
        context: D::Context,
        stream: bool,
        tracker: Tracker,
    ) -> End
    where
        D: Direction,
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes> + Send + 'static,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        let Ok(response) = inner.call(upstream).await else {
            return End::Failed("server_error", "the upstream could not be reached".into());
        };
        let running = with_status(&self.queued, "in_progress", None);
        let _ = self
            .stateful
            .save_state(&self.tenant, &self.turn, &running)
            .await;
        let keep = Keep {
            stateful: self.stateful.clone(),
            tenant: self.tenant.clone(),
            turn: self.turn.clone(),
        };
        let reply = Reply {
            verdict: None,
            context,
            stream,
            keep: Some(keep),
            common: &shared.common,
            framing: Framing::json(),
        };
        let (head, body) = reply.send::<D, ResB>(response, tracker).await.into_parts();
        if !head.status.is_success() {
            let bytes = read_limited(body, MAX_ERROR_BODY).await;
            let code = match head.status {
                StatusCode::TOO_MANY_REQUESTS => "rate_limit_exceeded",
                StatusCode::BAD_REQUEST => "invalid_prompt",
                _ => "server_error",
            };
            return End::Failed(code, error_message(head.status, &bytes));
        }
        match stream {
            true => self.read_stream(body).await,
            false => {
                let bytes = read_limited(body, usize::MAX).await;
                self.keep_failed(&bytes).await;
                End::Kept
            }
        }
    }

    /// Reads the translated stream (bare JSON, an event a frame), handing
    /// each event to followers as the SSE frame they read.
    async fn read_stream<B>(&self, body: ResponseBody<B>) -> End
    where
        B: Body<Data = Bytes>,
        B::Error: fmt::Display,
    {
        let budget = self.runs.event_budget();
        let mut body = pin!(body);
        let mut ended = false;
        loop {
            let data = match data_of(body.frame().await) {
                Step::Data(data) => data,
                Step::Other => continue,
                Step::End => break,
                Step::Broken => {
                    return End::Failed("server_error", "the upstream stream broke off".into())
                }
            };
            // An empty event is a keep-alive: followers have their own.
            let Some(event) = Event::read(&data) else {
                continue;
            };
            if let (Some(item), "response.output_item.done") = (event.item, event.kind) {
                self.done_items
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(item.to_owned());
            }
            if let Some(response) = event.terminal() {
                ended = true;
                self.told_end.store(true, Ordering::Relaxed);
                self.keep_failed(response.get().as_bytes()).await;
            }
            let mut frame = Vec::with_capacity(data.len() + event.kind.len() + 16);
            wirebridge_sse::encode_event_with(&mut frame, Some(event.kind), |out| {
                out.extend_from_slice(&data)
            });
            self.run
                .push(event.sequence_number, Bytes::from(frame), budget);
        }
        match ended {
            true => End::Kept,
            false => End::Failed(
                "server_error",
                "the stream ended before the response was done".into(),
            ),
        }
    }

    /// Sends followers the event that ends the stream, with `response` as
    /// the run ended (`failed`, or `cancelled`), unless its stream sent one
    /// already. There is no event for a cancelled response: it goes in a
    /// `response.failed`, the event of a response stopped before it was
    /// done, whose `status` says `cancelled`. A run stopped before its
    /// backend answered has sent nothing, so its stream starts with
    /// `response.created` first.
    fn tell_followers(&self, response: &[u8]) {
        if !self.run.streams || self.told_end.swap(true, Ordering::Relaxed) {
            return;
        }
        let next = match self.run.last_sequence() {
            Some(last) => last + 1,
            None => {
                self.push_lifecycle(0, "response.created", &self.queued);
                1
            }
        };
        self.push_lifecycle(next, "response.failed", response);
    }

    /// Hands followers an event of `kind` that carries `response`.
    fn push_lifecycle(&self, sequence_number: u64, kind: &str, response: &[u8]) {
        #[derive(Serialize)]
        struct Lifecycle<'a> {
            #[serde(rename = "type")]
            kind: &'a str,
            sequence_number: u64,
            response: &'a RawValue,
        }
        let Ok(response) = serde_json::from_slice::<&RawValue>(response) else {
            // The bridge's own responses are always JSON.
            return;
        };
        let event = Lifecycle {
            kind,
            sequence_number,
            response,
        };
        let data = serde_json::to_vec(&event).expect("an event of raw JSON serializes");
        let mut frame = Vec::with_capacity(data.len() + kind.len() + 16);
        wirebridge_sse::encode_event_with(&mut frame, Some(kind), |out| {
            out.extend_from_slice(&data)
        });
        self.run.push(
            sequence_number,
            Bytes::from(frame),
            self.runs.event_budget(),
        );
    }

    /// Keeps a response that ended `failed`: the exchange keeps those that
    /// completed, not those.
    async fn keep_failed(&self, response: &[u8]) {
        #[derive(Deserialize)]
        struct Status<'a> {
            #[serde(borrow)]
            status: Option<&'a str>,
        }
        let failed = serde_json::from_slice::<Status<'_>>(response)
            .is_ok_and(|s| s.status == Some("failed"));
        if failed {
            let _ = self
                .stateful
                .save_state(&self.tenant, &self.turn, response)
                .await;
        }
    }

    /// The response as a run stopped before its end leaves it: `status`
    /// (with `error`), and the output items the stream had finished (what
    /// was said is kept).
    fn ended(&self, status: &str, error: Option<(&str, &str)>) -> Vec<u8> {
        let response = with_status(&self.queued, status, error);
        let items = std::mem::take(
            &mut *self
                .done_items
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        if items.is_empty() {
            return response;
        }
        let output = serde_json::to_string(&items).expect("raw values serialize");
        with_output(&response, &output)
    }

    /// Whether the store still says the response runs, after the exchange
    /// kept what it ended with: then keeping it failed (the store refused
    /// it), and the run must not be left `in_progress`.
    async fn still_running(&self) -> bool {
        let Some(store) = self.stateful.store() else {
            return false;
        };
        match store.get(&self.tenant, &self.run.id).await {
            Ok(Some(record)) => matches!(
                status_of(&record.response).as_deref(),
                Some("queued" | "in_progress")
            ),
            _ => false,
        }
    }

    /// Completes when the stored response says `cancelled`: a cancel that
    /// reached another replica.
    async fn cancelled_elsewhere(&self) {
        let Some(store) = self.stateful.store() else {
            return std::future::pending().await;
        };
        loop {
            tokio::time::sleep(CANCEL_CHECK).await;
            if let Ok(Some(record)) = store.get(&self.tenant, &self.run.id).await {
                if status_of(&record.response).as_deref() == Some("cancelled") {
                    return;
                }
            }
        }
    }
}

/// What a poll of a body gave.
enum Step {
    Data(Bytes),
    Other,
    End,
    Broken,
}

/// The step a polled frame is (the body's error type is not kept: it
/// need not be `Send`).
fn data_of<E>(frame: Option<Result<http_body::Frame<Bytes>, E>>) -> Step {
    match frame {
        None => Step::End,
        Some(Err(_)) => Step::Broken,
        Some(Ok(frame)) => match frame.into_data() {
            Ok(data) => Step::Data(data),
            Err(_) => Step::Other,
        },
    }
}

fn shut_down() -> End {
    End::Failed(
        "server_error",
        "the server shut down before the response was done".into(),
    )
}

/// One event of the translated stream: its number, and its response when
/// it ends the stream.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    sequence_number: u64,
    #[serde(borrow)]
    response: Option<&'a RawValue>,
    #[serde(borrow)]
    item: Option<&'a RawValue>,
}

impl<'a> Event<'a> {
    /// An event the bridge wrote, as bare JSON; `None` for a keep-alive.
    fn read(event: &'a [u8]) -> Option<Event<'a>> {
        serde_json::from_slice(event).ok()
    }

    fn terminal(&self) -> Option<&'a RawValue> {
        matches!(
            self.kind,
            "response.completed" | "response.incomplete" | "response.failed"
        )
        .then_some(self.response)
        .flatten()
    }
}

/// The message of an error body in the Responses dialect, or the status.
fn error_message(status: StatusCode, body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Envelope {
        error: Message,
    }
    #[derive(Deserialize)]
    struct Message {
        message: String,
    }
    match serde_json::from_slice::<Envelope>(body) {
        Ok(envelope) => envelope.error.message,
        Err(_) => format!("the upstream answered {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bridge_s_events_are_read() {
        let frame = br#"{"type":"response.completed","sequence_number":7,"response":{"status":"completed"}}"#;
        let event = Event::read(frame).expect("an event");
        assert_eq!(event.sequence_number, 7);
        assert_eq!(
            event.terminal().map(RawValue::get),
            Some(r#"{"status":"completed"}"#)
        );
        assert!(Event::read(b"").is_none());
    }
}
