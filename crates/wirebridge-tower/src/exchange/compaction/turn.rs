//! A `POST …/responses` that may compact: one ending with a
//! `compaction_trigger` is answered with the compaction item alone; one
//! whose `context_management` threshold its input passes is compacted,
//! then answered from the compacted conversation; any other is answered as
//! usual.

use std::fmt;

use bytes::Bytes;
use http::{request, Request, Response};
use http_body::Body;
use tower::{Service, ServiceExt};
use wirebridge_convert::responses_to_chat::compaction::{CompactionAsk, Summary};
use wirebridge_convert::responses_to_chat::{History, Options, ParsedRequest, Seal};
use wirebridge_convert::{ConvertError, Frames};

use super::conversation::options;
use super::over::Compacts;
use super::summarize::{Speaks, Upstream};
use crate::affinity::Affinity;
use crate::body::{mark_framing, ResponseBody};
use crate::direction::{
    Prepared, ResponsesOverChat, ResponsesOverMessages, ResponsesOverResponses, Tenant,
};
use crate::exchange::{framing_of, stored, thread, Keep, Reply};
use crate::headers::{insert_reasoning_included, upstream_request};
use crate::refusal::compaction::CompactionUnavailable;
use crate::replies::{finish_reply, Refused};
use crate::request_body::{BoxError, RequestBody};
use crate::settings::{Common, ResponsesSettings};
use crate::stateful::{unstored_response, Resolved};
use crate::tracker::Tracker;

/// A `POST …/responses` whose body names compaction.
pub(crate) struct Turn<'s> {
    settings: &'s ResponsesSettings,
    common: &'s Common,
    parts: request::Parts,
    prefix: String,
    tenant: Tenant,
    over: Speaks,
}

/// How a step ends: the next step's input, or the client's reply.
type Step<T, B> = Result<T, Response<ResponseBody<B>>>;

impl<'s> Turn<'s> {
    /// A turn for `tenant`, called as `parts` with `prefix` before the
    /// endpoint.
    pub(crate) fn new(
        settings: &'s ResponsesSettings,
        common: &'s Common,
        parts: request::Parts,
        prefix: String,
        tenant: Tenant,
        over: Speaks,
    ) -> Self {
        Self {
            settings,
            common,
            parts,
            prefix,
            tenant,
            over,
        }
    }

    /// Answers the turn whose body is `bytes`, parsed as `parsed`.
    pub(crate) async fn run<S, ReqB, ResB>(
        self,
        inner: S,
        bytes: &[u8],
        parsed: ParsedRequest<'_>,
        tracker: Tracker,
    ) -> Result<Response<ResponseBody<ResB>>, S::Error>
    where
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes> + Send + 'static,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        match self.over {
            Speaks::Chat => {
                self.run_over::<ResponsesOverChat, _, _, _>(inner, bytes, parsed, tracker)
                    .await
            }
            Speaks::Responses => {
                self.run_over::<ResponsesOverResponses, _, _, _>(inner, bytes, parsed, tracker)
                    .await
            }
            Speaks::Messages => {
                self.run_over::<ResponsesOverMessages, _, _, _>(inner, bytes, parsed, tracker)
                    .await
            }
        }
    }

    /// [`run`](Self::run), over the upstream of `C`.
    async fn run_over<C, S, ReqB, ResB>(
        self,
        mut inner: S,
        bytes: &[u8],
        parsed: ParsedRequest<'_>,
        mut tracker: Tracker,
    ) -> Result<Response<ResponseBody<ResB>>, S::Error>
    where
        C: Compacts,
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes> + Send + 'static,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        let ask = match parsed.compaction() {
            Ok(ask) => ask,
            Err(e) => return Ok(Refused::from_convert(e).send(&mut tracker)),
        };
        let (options, seal) = options(self.settings, &self.tenant);
        if ask == Some(CompactionAsk::Trigger) && seal.is_none() {
            return Ok(Refused::from(CompactionUnavailable).send(&mut tracker));
        }
        let stored = match &self.settings.stateful {
            Some(stateful) => {
                let policy = self.settings.missing_history;
                stored::resolve(stateful, &parsed, &self.tenant, policy).await
            }
            None => Ok(Resolved::default()),
        };
        let stored = match stored {
            Ok(stored) => stored,
            Err(refused) => return Ok(refused.send(&mut tracker)),
        };
        let history = match stored.history() {
            Ok(history) => history,
            Err(refused) => return Ok(refused.send(&mut tracker)),
        };
        let translated = match (ask, seal) {
            (Some(CompactionAsk::Trigger), Some(seal)) => {
                let turn = Compacting {
                    turn: &self,
                    history: &history,
                    options: &options,
                    seal: &seal,
                };
                return turn.trigger(inner, parsed, &stored, tracker).await;
            }
            (Some(CompactionAsk::Threshold(threshold)), Some(seal)) => {
                let turn = Compacting {
                    turn: &self,
                    history: &history,
                    options: &options,
                    seal: &seal,
                };
                let translated = tracker.timed(|| C::compacting(parsed, &history, &options));
                match translated {
                    Ok(translated) => {
                        turn.within::<C, _, _, _>(
                            &mut inner,
                            bytes,
                            translated,
                            threshold,
                            &mut tracker,
                        )
                        .await?
                    }
                    Err(e) => Err(Refused::from_convert(e).send(&mut tracker)),
                }
            }
            // Nothing to act on, or no key to act with: any request's way
            // (which reports what it cannot do).
            (_, Some(_)) => match tracker.timed(|| C::compacting(parsed, &history, &options)) {
                Ok(translated) => Ok(translated),
                Err(e) => Err(Refused::from_convert(e).send(&mut tracker)),
            },
            (_, None) => match tracker.timed(|| C::plain(parsed, &history, &options)) {
                Ok(translated) => Ok(translated),
                Err(e) => Err(Refused::from_convert(e).send(&mut tracker)),
            },
        };
        match translated {
            Ok(translated) => {
                self.answer::<C, _, _, _>(inner, translated, &stored, tracker)
                    .await
            }
            Err(response) => Ok(response),
        }
    }

    /// Sends the translated request and answers with its reply, as any
    /// request is answered (and kept).
    async fn answer<C, S, ReqB, ResB>(
        &self,
        mut inner: S,
        mut t: Prepared<C::Context>,
        stored: &Resolved,
        mut tracker: Tracker,
    ) -> Result<Response<ResponseBody<ResB>>, S::Error>
    where
        C: Compacts,
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes> + Send + 'static,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        stored::settle(
            stored,
            &self.tenant,
            &mut t.turn,
            &mut t.context,
            &mut t.losses,
        );
        tracker.model = t.model;
        tracker.stream = t.stream;
        tracker.losses = t.losses;
        let stream = t.stream;
        let endpoint = C::UPSTREAM_ENDPOINT;
        // Keyed by what the backend is sent: the compacted conversation's
        // prefix, which the turns after it repeat.
        let affinity = Affinity::of_body(&t.body);
        let mut upstream = upstream_request(&self.parts, &self.prefix, endpoint, t.body, stream);
        if let Some(affinity) = affinity {
            upstream.extensions_mut().insert(affinity);
        }
        C::upstream_head(upstream.headers_mut(), self.settings);
        let response = inner.ready().await?.call(upstream).await?;
        tracker.answered(response.extensions());
        let keep = self
            .settings
            .stateful
            .clone()
            .zip(t.turn)
            .map(|(stateful, turn)| Keep {
                stateful,
                tenant: self.tenant.key.clone(),
                turn,
            });
        let reply = Reply {
            verdict: None,
            context: t.context,
            stream,
            keep,
            common: self.common,
            framing: framing_of(&self.parts),
        };
        Ok(reply.send::<C, ResB>(response, tracker).await)
    }
}

fn parse(bytes: &[u8]) -> Result<ParsedRequest<'_>, ConvertError> {
    ParsedRequest::parse(bytes)
}

/// A turn that compacts, with what every step of it needs.
struct Compacting<'t, 's, 'h> {
    turn: &'t Turn<'s>,
    history: &'t History<'h>,
    options: &'t Options,
    seal: &'t Seal,
}

impl<'h> Compacting<'_, '_, 'h> {
    fn upstream(&self) -> Upstream<'_> {
        Upstream {
            parts: &self.turn.parts,
            prefix: &self.turn.prefix,
            common: self.turn.common,
            speaks: self.turn.over,
            messages: Some(&self.turn.settings.convert.profile.messages),
        }
    }

    /// A turn that ends with a `compaction_trigger`: the summary, as the
    /// turn's only output item (a body, or a stream of events, as asked),
    /// kept like any response.
    async fn trigger<S, ReqB, ResB>(
        self,
        mut inner: S,
        parsed: ParsedRequest<'h>,
        stored: &Resolved,
        mut tracker: Tracker,
    ) -> Result<Response<ResponseBody<ResB>>, S::Error>
    where
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes> + Send + 'static,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        let translated = tracker.timed(|| parsed.translate_summary(self.history, self.options));
        let mut summarize = match translated {
            Ok(summarize) => summarize,
            Err(e) => return Ok(Refused::from_convert(e).send(&mut tracker)),
        };
        stored::settle(
            stored,
            &self.turn.tenant,
            &mut summarize.turn,
            &mut summarize.context,
            &mut summarize.losses,
        );
        tracker.model = summarize.model().to_owned();
        tracker.stream = summarize.stream();
        tracker.losses = summarize.losses.clone();
        let body = std::mem::take(&mut summarize.body);
        let upstream = self.upstream();
        let (mut head, written) = match upstream.summarize(&mut inner, body, &mut tracker).await? {
            Ok(written) => written,
            Err(response) => return Ok(response),
        };
        let summary = match tracker.timed(|| summarize.summary(&written, self.seal)) {
            Ok(summary) => summary,
            Err(e) => return Ok(Refused::from_convert(e).send(&mut tracker)),
        };
        let mut reply = summarize.trigger_reply(&summary);
        if let (Some(stateful), Some(mut turn)) =
            (&self.turn.settings.stateful, summarize.turn.take())
        {
            thread::restart_at_compaction(&self.turn.parts, &mut turn);
            let tenant = &self.turn.tenant.key;
            if !stateful.save(tenant, turn, reply.finished()).await {
                reply.body = unstored_response(&reply.body);
            }
        }
        tracker.losses.extend(reply.losses.clone());
        let (body, content_type) = match summarize.stream() {
            true => {
                let mut events = Frames::new(framing_of(&self.turn.parts));
                summarize.trigger_events(&reply, &mut events);
                mark_framing(&mut head, events.framing());
                let outcome = reply.summary.outcome.clone();
                (ResponseBody::events(events, outcome), "text/event-stream")
            }
            false => (
                ResponseBody::full(std::mem::take(&mut reply.body)),
                "application/json",
            ),
        };
        insert_reasoning_included(&mut head.headers);
        let response = finish_reply(&mut tracker, head, body, content_type, Some(reply.summary));
        Ok(response)
    }

    /// A turn with a `context_management` threshold, translated: as it
    /// is when its input holds no more tokens than `threshold`, else
    /// compacted first.
    async fn within<C, S, ReqB, ResB>(
        self,
        inner: &mut S,
        bytes: &'h [u8],
        translated: Prepared<C::Context>,
        threshold: u64,
        tracker: &mut Tracker,
    ) -> Result<Step<Prepared<C::Context>, ResB>, S::Error>
    where
        C: Compacts,
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes> + Send + 'static,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        let upstream = self.upstream();
        let tokenize = C::tokenize(self.turn.settings);
        let (tokens, _) = upstream
            .count_tokens(inner, tokenize, &translated.body)
            .await?;
        if tokens <= threshold {
            return Ok(Ok(translated));
        }
        tracing::debug!(tokens, threshold, "compacting the conversation");
        let summary = match self.summary(inner, bytes, tracker).await? {
            Ok(summary) => summary,
            Err(response) => return Ok(Err(response)),
        };
        let compacted = tracker.timed(|| {
            parse(bytes)
                .and_then(|parsed| C::compacted(parsed, self.history, self.options, &summary))
        });
        Ok(compacted.map_err(|e| Refused::from_convert(e).send(tracker)))
    }

    /// The conversation of the request `bytes`, summarized.
    async fn summary<S, ReqB, ResB>(
        &self,
        inner: &mut S,
        bytes: &'h [u8],
        tracker: &mut Tracker,
    ) -> Result<Step<Summary, ResB>, S::Error>
    where
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes> + Send + 'static,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        let translated = tracker.timed(|| {
            parse(bytes).and_then(|parsed| parsed.translate_summary(self.history, self.options))
        });
        let mut summarize = match translated {
            Ok(summarize) => summarize,
            Err(e) => return Ok(Err(Refused::from_convert(e).send(tracker))),
        };
        let body = std::mem::take(&mut summarize.body);
        let upstream = self.upstream();
        let (_, written) = match upstream.summarize(inner, body, tracker).await? {
            Ok(written) => written,
            Err(response) => return Ok(Err(response)),
        };
        Ok(tracker
            .timed(|| summarize.summary(&written, self.seal))
            .map_err(|e| Refused::from_convert(e).send(tracker)))
    }
}
