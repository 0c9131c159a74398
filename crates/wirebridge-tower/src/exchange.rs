//! One translated exchange, in four steps: read the client's body, prepare
//! the upstream request (the stored history resolved, the request
//! translated), call the upstream, and reply in the client's API. The
//! exchanges that compact are [`compaction`]'s.

mod background;
mod body_as_stream;
mod cache_diagnostics;
mod compacted;
pub(crate) mod compaction;
pub(crate) mod count_tokens;
pub(crate) mod input_tokens;
pub(crate) mod stored;
mod thread;
#[cfg(feature = "websocket")]
pub(crate) mod warm_up;

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::{header, HeaderMap, Request, Response};
use http_body::Body;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use tower::Service;
use wirebridge_convert::cache_diagnostics::Verdict;
use wirebridge_convert::responses_to_chat::Turn;
use wirebridge_convert::Framing;

use crate::affinity::Affinity;
use crate::body::{mark_framing, HoldFuture, Release, ResponseBody, StreamState};
use crate::direction::sealed::{
    ClientRequest as _, Direction, KeptStream as _, ReplyContext, TranslatedReply as _,
};
use crate::direction::state;
use crate::direction::HandedCopies;
use crate::direction::{Prepared, Tenant};
use crate::error_response::Dialect;
use crate::headers::{clean_headers, insert_reasoning_included, is_event_stream, upstream_request};
use crate::observer::HandedOn;
use crate::refusal::compaction::CompactionNotServed;
use crate::refusal::request::{BodyUnread, RequestTooLarge};
use crate::refusal::stored::NeedsCredentials;
use crate::refusal::upstream::UnusableReply;
use crate::replies::{
    finish_error, finish_reply, read_limited, unreadable_encoding, unusable_status, Refused,
};
use crate::request_body::{BoxError, RequestBody};
use crate::settings::Common;
use crate::shared::Shared;
use crate::stateful::{unstored_event, unstored_response, Resolved, Stateful};
use crate::tracker::Tracker;
use background::Background;

/// The verdict of a prompt cache comparison, in the extensions of a reply
/// a layer of this crate's hands up to another (the Responses hub's reply
/// to the Messages layer): a value, never read back from the JSON.
#[derive(Debug, Clone, Copy)]
struct HandedVerdict(Verdict);

/// Largest upstream error body read.
const MAX_UPSTREAM_ERROR: usize = 1024 * 1024;

/// Runs one exchange: `prefix` is the path before the client endpoint.
pub(crate) async fn run<S, D, ReqB, ResB>(
    inner: S,
    shared: Arc<Shared<D>>,
    request: Request<ReqB>,
    prefix: String,
) -> Result<Response<ResponseBody<ResB>>, S::Error>
where
    D: Direction,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqB: Body<Data = Bytes> + Send + 'static,
    ReqB::Error: Into<BoxError>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: fmt::Display + Into<BoxError>,
{
    let (tracker, parts, bytes) = match open(&shared, request).await {
        Ok(opened) => opened,
        Err(refused) => return Ok(refused),
    };
    run_read::<S, D, ReqB, ResB>(inner, &shared, &parts, &bytes, &prefix, tracker).await
}

/// Opens a client's request, the first step of every exchange: the
/// tracker that reports it, started; the head, as the direction adjusts
/// it; the body, read within the limit (a refusal in the client's dialect
/// otherwise).
pub(crate) async fn open<D, ReqB, ResB>(
    shared: &Shared<D>,
    request: Request<ReqB>,
) -> Result<(Tracker, http::request::Parts, Bytes), Response<ResponseBody<ResB>>>
where
    D: Direction,
    ReqB: Body<Data = Bytes>,
    ReqB::Error: Into<BoxError>,
{
    let mut tracker = Tracker::new(
        &shared.common.observer,
        &shared.common.loss_warnings,
        D::KIND,
    );
    let (mut parts, body) = request.into_parts();
    D::client_head(&mut parts);
    tracker.request(&parts);
    match read(&parts.headers, body, shared.common.body_limit).await {
        Ok(bytes) => Ok((tracker, parts, bytes)),
        Err(refused) => Err(refused.send(&mut tracker)),
    }
}

/// Runs one exchange whose body was read: `parts` is the head of the
/// client's request (its credentials and headers go upstream).
pub(crate) async fn run_read<S, D, ReqB, ResB>(
    mut inner: S,
    shared: &Arc<Shared<D>>,
    parts: &http::request::Parts,
    bytes: &[u8],
    prefix: &str,
    mut tracker: Tracker,
) -> Result<Response<ResponseBody<ResB>>, S::Error>
where
    D: Direction,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqB: Send + 'static,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: fmt::Display + Into<BoxError>,
{
    let tenant = state::tenant::<D>(&shared.direction, &parts.headers);
    // Declared before the parsed request, which borrows from them: they
    // must be dropped after it.
    let mut stored = Resolved::default();
    let held_by_thread: Vec<u8>;
    let bytes = match thread::held(shared, parts, &tenant, bytes).await {
        Ok(None) => bytes,
        Ok(Some(held)) => {
            held_by_thread = held;
            &held_by_thread[..]
        }
        Err(refused) => return Ok(refused.send(&mut tracker)),
    };
    if let Err(refused) = compacted::check(shared, parts, &tenant, bytes) {
        return Ok(refused.send(&mut tracker));
    }
    // Parsed once, here: whether the request compacts is read from it,
    // and the compacting exchanges take it over.
    let parsed = match tracker.timed(|| D::parse(parts, bytes)) {
        Ok(parsed) => parsed,
        Err(e) => return Ok(Refused::from_convert(e).send(&mut tracker)),
    };
    let parsed = match parsed.compacting() {
        Err(parsed) => parsed,
        Ok(request) => {
            // Only Responses requests compact, and their directions have
            // the Responses side's settings.
            let Some(settings) = state::compaction::<D>(&shared.direction) else {
                return Ok(finish_error(&mut tracker, CompactionNotServed));
            };
            let (parts, prefix) = (parts.clone(), prefix.to_owned());
            let speaks = compaction::Speaks::upstream_of::<D>();
            let turn =
                compaction::Turn::new(settings, &shared.common, parts, prefix, tenant, speaks);
            // Boxed: the compaction turn's future is several times the size
            // of the usual exchange's, which would otherwise carry it (and
            // copy it on every move) for every request.
            return Box::pin(turn.run(inner, bytes, *request, tracker)).await;
        }
    };
    let named = parsed.named_affinity();
    let mut prepared = match prepare::<D>(
        parsed,
        &mut stored,
        &tenant,
        shared,
        &mut tracker,
        Purpose::Turn,
    )
    .await
    {
        Ok(prepared) => prepared,
        Err(refused) => {
            // The log line and metrics of a refused request still name its
            // model when the body names one.
            tracker.model = model_named(bytes).unwrap_or_default();
            return Ok(refused.send(&mut tracker));
        }
    };
    tracker.model = prepared.model.clone();
    tracker.stream = prepared.stream;
    tracker.losses = prepared.losses.clone();
    // Once per exchange, from what the backend is sent: every turn of a
    // conversation repeats its prefix, whichever process resolved it.
    let affinity = named.or_else(|| {
        shared
            .common
            .prefix_affinity
            .then(|| Affinity::of_body(&prepared.body))
            .flatten()
    });

    let body = Bytes::from(prepared.body);
    // Held by the note beside the body only when it notes something.
    let copies = HandedCopies::new(&body, prepared.copies);
    let mut upstream = upstream_request(parts, prefix, D::UPSTREAM_ENDPOINT, body, prepared.stream);
    D::upstream_head(upstream.headers_mut(), &shared.direction);
    hand_on::<D, _>(&mut upstream, prepared.stream);
    if let Some(copies) = copies {
        upstream.extensions_mut().insert(copies);
    }
    D::mark_upstream(&prepared.context, upstream.extensions_mut());
    if let Some(affinity) = affinity {
        upstream.extensions_mut().insert(affinity);
    }
    if let Some(queued) = prepared.background.take() {
        let runs = state::background::<D>(&shared.direction).cloned();
        let stateful = state::stateful::<D>(&shared.direction).cloned();
        let background = match (runs, stateful, prepared.turn.take()) {
            (Some(runs), Some(stateful), Some(turn)) if tenant.stores => Background {
                runs,
                stateful,
                tenant: tenant.key,
                context: prepared.context,
                stream: prepared.stream,
                turn,
                queued,
            },
            _ => {
                return Ok(Refused::from(NeedsCredentials {
                    param: "background",
                })
                .send(&mut tracker))
            }
        };
        // `inner` was polled ready before it was moved here.
        let shared = Arc::clone(shared);
        return Ok(background::start(inner, shared, upstream, background, tracker).await);
    }
    // `inner` was polled ready before it was moved here.
    let response = inner.call(upstream).await?;
    tracker.answered(response.extensions());
    // A turn kept is one the backend answered for this credential (one
    // kept nowhere costs nothing here: no tenant is written down).
    let kept = prepared.turn.is_some();
    if kept && response.status().is_success() && tenant.stores {
        if let Some(stateful) = state::stateful::<D>(&shared.direction) {
            stateful.accept(&tenant.key);
        }
    }
    let keep = state::stateful::<D>(&shared.direction)
        .cloned()
        .zip(prepared.turn)
        .map(|(stateful, turn)| Keep {
            stateful,
            tenant: tenant.key,
            turn,
        });
    let mut context = prepared.context;
    if keep.is_none() && parts.extensions.get::<HandedOn>().is_some() {
        context.echo_unread();
    }
    let step = Reply {
        verdict: prepared.verdict,
        context,
        stream: prepared.stream,
        keep,
        common: &shared.common,
        framing: framing_of(parts),
    };
    Ok(step.send::<D, ResB>(response, tracker).await)
}

/// Marks a request handed on to the Responses hub below (see
/// [`Direction::HANDS_ON`]), and asks it for a stream in bare JSON events
/// whose text, reasoning and tool-argument deltas are handed as records
/// ([`Framing::Handed`]): this exchange reads them as they come, with
/// nothing to decode, and takes a delta's fields with no JSON to read (a
/// hub that is not this crate's ignores the ask and streams SSE).
pub(crate) fn hand_on<D: Direction, B>(request: &mut Request<B>, stream: bool) {
    if D::HANDS_ON {
        request.extensions_mut().insert(HandedOn(D::KIND));
        if stream {
            request.extensions_mut().insert(Framing::Handed);
        }
    }
}

/// The framing the client asked for its stream: SSE unless a caller in
/// this process asked for bare JSON (the WebSocket mode, a layer above).
pub(crate) fn framing_of(parts: &http::request::Parts) -> Framing {
    parts
        .extensions
        .get::<Framing>()
        .cloned()
        .unwrap_or_default()
}

/// The `model` a request body names, if it is a JSON object with a string
/// there; read again only for requests that were refused.
fn model_named(bytes: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Model<'a> {
        #[serde(borrow)]
        model: Option<std::borrow::Cow<'a, str>>,
    }
    let parsed: Model<'_> = serde_json::from_slice(bytes).ok()?;
    parsed.model.map(|m| m.into_owned())
}

/// Reads the client's body, within the limit.
pub(crate) async fn read<B>(headers: &HeaderMap, body: B, limit: usize) -> Result<Bytes, Refused>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|len| len > limit) {
        return Err(RequestTooLarge { limit }.into());
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(RequestTooLarge { limit }.into())
        }
        Err(e) => Err(BodyUnread(e.to_string()).into()),
    }
}

/// What a prepared request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A turn: the backend answers it, and the prompt cache diagnostics it
    /// asks for are answered (its fingerprint kept).
    Turn,
    /// A count of its input tokens: nothing is answered or kept for it.
    Count,
}

/// Resolves the stored conversation a parsed request continues (into
/// `stored`, which the translation borrows), and translates the request.
pub(crate) async fn prepare<'a, D: Direction>(
    parsed: D::Parsed<'a>,
    stored: &'a mut Resolved,
    tenant: &Tenant,
    shared: &Shared<D>,
    tracker: &mut Tracker,
    purpose: Purpose,
) -> Result<Prepared<D::Context>, Refused> {
    let settings = &shared.direction;
    if let Some(stateful) = state::stateful::<D>(settings) {
        let policy = state::missing_history::<D>(settings);
        *stored = stored::resolve(stateful, &parsed, tenant, policy).await?;
    }
    let stored: &'a Resolved = stored;
    let history = stored.history()?;
    let diagnosis = match purpose {
        Purpose::Turn => parsed
            .cache_diagnosis(&history)
            .map_err(Refused::from_convert)?,
        Purpose::Count => None,
    };
    let mut prepared = tracker
        .timed(|| D::translate(parsed, &history, settings, &tenant.key))
        .map_err(Refused::from_convert)?;
    if let Some(diagnosis) = diagnosis {
        let stateful = state::stateful::<D>(settings);
        prepared.verdict =
            cache_diagnostics::answer(stateful, tenant, diagnosis, &mut prepared.context).await;
    }
    stored::settle(
        stored,
        tenant,
        &mut prepared.turn,
        &mut prepared.context,
        &mut prepared.losses,
    );
    Ok(prepared)
}

/// What to store once the response is done.
pub(crate) struct Keep {
    pub(crate) stateful: Stateful,
    pub(crate) tenant: String,
    pub(crate) turn: Turn,
}

/// The upstream answered: what the reply needs.
pub(crate) struct Reply<'s, C> {
    pub(crate) context: C,
    /// The verdict of the prompt cache comparison the request asked for,
    /// handed with the reply to a layer of this crate's above.
    pub(crate) verdict: Option<Verdict>,
    pub(crate) stream: bool,
    pub(crate) keep: Option<Keep>,
    pub(crate) common: &'s Common,
    /// How the client's stream is framed.
    pub(crate) framing: Framing,
}

impl<C: ReplyContext> Reply<'_, C> {
    /// The client's reply to the upstream's response.
    pub(crate) async fn send<D, B>(
        mut self,
        response: Response<B>,
        mut tracker: Tracker,
    ) -> Response<ResponseBody<B>>
    where
        D: Direction<Context = C>,
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: fmt::Display + Into<BoxError>,
    {
        let (mut head, body) = response.into_parts();
        // The layer below answered a comparison this request asked of it.
        if let Some(HandedVerdict(verdict)) = head.extensions.remove::<HandedVerdict>() {
            self.context.diagnosed_below(verdict);
        }
        if let Some(verdict) = self.verdict.take() {
            head.extensions.insert(HandedVerdict(verdict));
        }
        // Whether the upstream (a layer of this crate's) streams bare JSON
        // events; the client's reply says so only of its own framing.
        let events_apart = head
            .extensions
            .remove::<Framing>()
            .is_some_and(|framing| framing.is_json());
        if let Some(error) = unusable_status(head.status) {
            return finish_error(&mut tracker, error);
        }
        if !head.status.is_success() {
            let bytes = read_limited(body, MAX_UPSTREAM_ERROR).await;
            let (status, reshaped) =
                Dialect::of(tracker.direction()).reshape_upstream_error(head.status, &bytes);
            head.status = status;
            let body = ResponseBody::full(reshaped);
            return finish_reply(&mut tracker, head, body, "application/json", None);
        }
        if let Some(error) = unreadable_encoding(&head.headers) {
            return finish_error(&mut tracker, error);
        }

        let event_stream = is_event_stream(&head.headers);
        if event_stream && self.stream {
            tracker.status = head.status.as_u16();
            clean_headers(
                &mut head.headers,
                "text/event-stream",
                Some(&tracker.losses),
            );
            if D::REASONING_INCLUDED {
                insert_reasoning_included(&mut head.headers);
            }
            let common = self.common;
            mark_framing(&mut head, &self.framing);
            let mut state =
                StreamState::new(D::stream(self.context), common.max_event_size, tracker)
                    .framing(self.framing)
                    .events_apart(events_apart)
                    .idle_timeout(common.stream_idle_timeout)
                    .keepalive(common.keepalive_interval)
                    .shutdown(common.shutdown.as_ref());
            if let Some(keep) = self.keep {
                state =
                    state.hold_terminal(move |stream: &D::Stream| keep.save_stream::<D>(stream));
            }
            return Response::from_parts(head, ResponseBody::stream(body, Box::new(state)));
        }

        let limit = self.common.max_reply_size;
        let bytes = match Limited::new(body, limit).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => {
                let error = UnusableReply::unread("reply", limit, &*e);
                return finish_error(&mut tracker, error);
            }
        };
        if self.stream && !event_stream {
            return self.body_as_stream::<D, B>(head, &bytes, tracker).await;
        }
        // A stream the client did not ask for is translated as a stream,
        // then answered as the body the client expects.
        let reply = tracker.timed(|| D::translate_reply(&bytes, event_stream, &self.context));
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => return Refused::from_convert(e).send(&mut tracker),
        };
        let mut kept = true;
        if let Some(keep) = self.keep {
            if let Some(finished) = reply.kept() {
                kept = keep.stateful.save(&keep.tenant, keep.turn, finished).await;
            }
        }
        let mut parts = reply.into_parts();
        if !kept {
            parts.body = unstored_response(&parts.body);
        }
        tracker.losses.extend(parts.losses);
        if D::REASONING_INCLUDED {
            insert_reasoning_included(&mut head.headers);
        }
        let body = ResponseBody::full(parts.body);
        finish_reply(
            &mut tracker,
            head,
            body,
            "application/json",
            Some(parts.summary),
        )
    }
}

impl Keep {
    /// Work to finish before the stream's terminal event is released: the
    /// response is stored first, so a client that chains on it at once
    /// finds it.
    fn save_stream<D: Direction>(self, stream: &D::Stream) -> Option<HoldFuture> {
        let finished = stream.kept()?;
        let record = self.stateful.record(self.turn, finished)?;
        let (stateful, tenant) = (self.stateful, self.tenant);
        Some(Box::pin(async move {
            match stateful.save_record(&tenant, record).await {
                true => Release::AsWritten,
                false => Release::Rewritten(unstored_event),
            }
        }))
    }
}
