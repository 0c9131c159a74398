//! `POST …/responses/input_tokens`: how many tokens a request's input comes
//! to, as the backend would read it.
//!
//! The request is resolved (its stored conversation included) and
//! translated exactly as a turn would be, and the upstream request that
//! comes out is counted: by the backend's tokenizer where the profile names
//! one, else estimated from its size. The answer says which, in the
//! `x-wirebridge-input-tokens` header (`counted` or `estimated`).

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use tower::Service;
use wirebridge_convert::ReplySummary;

use super::compaction::{Speaks, Upstream};
use super::{open, prepare, Purpose};
use crate::body::ResponseBody;
use crate::direction::sealed::Direction;
use crate::direction::state;
use crate::replies::{finish_reply, Refused};
use crate::request_body::{BoxError, RequestBody};
use crate::shared::Shared;
use crate::stateful::Resolved;

/// Says how `input_tokens` was had: `counted` by the backend's tokenizer,
/// or `estimated` from the request's size.
pub const INPUT_TOKENS_HEADER: &str = "x-wirebridge-input-tokens";

/// The path after the client endpoint that counts.
const INPUT_TOKENS: &str = "/input_tokens";

/// `POST {prefix}{endpoint}/input_tokens`, for Responses clients: the
/// prefix.
pub(crate) fn route<D: Direction>(method: &Method, path: &str, endpoint: &str) -> Option<String> {
    if method != Method::POST || D::CLIENT_ENDPOINT != "/responses" {
        return None;
    }
    let prefix = path
        .trim_end_matches('/')
        .strip_suffix(INPUT_TOKENS)?
        .strip_suffix(endpoint)?;
    Some(prefix.to_owned())
}

/// Answers `POST {prefix}/responses/input_tokens`.
pub(crate) async fn count<S, D, ReqB, ResB>(
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
    let tenant = state::tenant::<D>(&shared.direction, &parts.headers);
    // Declared before the parsed request, which borrows from it.
    let mut stored = Resolved::default();
    let parsed = match tracker.timed(|| D::parse(&parts, &bytes)) {
        Ok(parsed) => parsed,
        Err(e) => return Ok(Refused::from_convert(e).send(&mut tracker)),
    };
    let prepared = match prepare::<D>(
        parsed,
        &mut stored,
        &tenant,
        &shared,
        &mut tracker,
        Purpose::Count,
    )
    .await
    {
        Ok(prepared) => prepared,
        Err(refused) => return Ok(refused.send(&mut tracker)),
    };
    tracker.model = prepared.model.clone();
    tracker.losses = prepared.losses.clone();
    let upstream = Upstream {
        parts: &parts,
        prefix: &prefix,
        common: &shared.common,
        speaks: Speaks::upstream_of::<D>(),
        messages: state::compaction::<D>(&shared.direction).map(|s| &s.convert.profile.messages),
    };
    let tokenize = D::tokenize(&shared.direction);
    let (tokens, counted) = upstream
        .count_tokens(&mut inner, tokenize, &prepared.body)
        .await?;
    let body = format!(r#"{{"object":"response.input_tokens","input_tokens":{tokens}}}"#);
    let (mut head, ()) = Response::new(()).into_parts();
    head.status = StatusCode::OK;
    let how = match counted {
        true => "counted",
        false => "estimated",
    };
    head.headers
        .insert(INPUT_TOKENS_HEADER, HeaderValue::from_static(how));
    let summary = ReplySummary {
        outcome: Some(how.to_owned()),
        ..ReplySummary::default()
    };
    Ok(finish_reply(
        &mut tracker,
        head,
        ResponseBody::full(body),
        "application/json",
        Some(summary),
    ))
}
