//! `POST …/responses/compact`: a conversation summarized by the upstream,
//! answered as a `response.compaction` object.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body::Body;
use tower::Service;
use wirebridge_convert::responses_to_chat::compaction::CompactRequest;

use super::conversation::options;
use super::summarize::{Speaks, Upstream};
use crate::body::ResponseBody;
use crate::direction::sealed::Direction;
use crate::direction::state;
use crate::exchange::{open, stored};
use crate::headers::insert_reasoning_included;
use crate::refusal::compaction::{CompactionUnavailable, NoCompactionRoute};
use crate::replies::{finish_reply, Refused};
use crate::request_body::{BoxError, RequestBody};
use crate::shared::Shared;
use crate::stateful::Resolved;

/// Answers `POST {prefix}/responses/compact`: the conversation (stored
/// history, then the input) resolved and translated as for any request,
/// summarized in one Chat request, and handed back as the client's
/// messages then one sealed `compaction` item.
pub(crate) async fn compact<S, D, ReqB, ResB>(
    mut inner: S,
    shared: Arc<Shared<D>>,
    request: Request<ReqB>,
    prefix: String,
) -> Result<Response<ResponseBody<ResB>>, S::Error>
where
    D: Direction,
    S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
    ReqB: Body<Data = Bytes> + Send + 'static,
    ReqB::Error: Into<BoxError>,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: fmt::Display + Into<BoxError>,
{
    let (mut tracker, parts, bytes) = match open(&shared, request).await {
        Ok(opened) => opened,
        Err(refused) => return Ok(refused),
    };
    let Some(settings) = state::compaction::<D>(&shared.direction) else {
        // Routed here only where compaction runs.
        return Ok(Refused::from(NoCompactionRoute).send(&mut tracker));
    };
    let tenant = state::tenant::<D>(&shared.direction, &parts.headers);

    // Declared before the request, which borrows from it once translated.
    #[allow(clippy::needless_late_init)]
    let stored;
    let request = match tracker.timed(|| CompactRequest::parse(&bytes)) {
        Ok(request) => request,
        Err(e) => return Ok(Refused::from_convert(e).send(&mut tracker)),
    };
    let (options, seal) = options(settings, &tenant);
    let Some(seal) = seal else {
        return Ok(Refused::from(CompactionUnavailable).send(&mut tracker));
    };
    let resolved = match &settings.stateful {
        Some(stateful) => {
            stored::resolve(stateful, &request, &tenant, settings.missing_history).await
        }
        None => Ok(Resolved::default()),
    };
    stored = match resolved {
        Ok(stored) => stored,
        Err(refused) => return Ok(refused.send(&mut tracker)),
    };
    let translated = stored.history().and_then(|history| {
        tracker
            .timed(|| request.translate(&history, &options))
            .map_err(Refused::from_convert)
    });
    let mut summarize = match translated {
        Ok(summarize) => summarize,
        Err(refused) => return Ok(refused.send(&mut tracker)),
    };
    tracker.model = summarize.model().to_owned();
    tracker.losses = summarize.losses.clone();

    let upstream = Upstream {
        parts: &parts,
        prefix: &prefix,
        common: &shared.common,
        speaks: Speaks::upstream_of::<D>(),
        messages: Some(&settings.convert.profile.messages),
    };
    let (mut head, reply) = match upstream
        .summarize(
            &mut inner,
            std::mem::take(&mut summarize.body),
            &mut tracker,
        )
        .await?
    {
        Ok(written) => written,
        Err(response) => return Ok(response),
    };
    let summary = match tracker.timed(|| summarize.summary(&reply, &seal)) {
        Ok(summary) => summary,
        Err(e) => return Ok(Refused::from_convert(e).send(&mut tracker)),
    };
    tracker.losses.extend(summary.losses.clone());
    let body = tracker.timed(|| summarize.compact_resource(&summary));
    let report = summary.report();
    insert_reasoning_included(&mut head.headers);
    Ok(finish_reply(
        &mut tracker,
        head,
        ResponseBody::full(body),
        "application/json",
        Some(report),
    ))
}
