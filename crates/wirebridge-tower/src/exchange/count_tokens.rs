//! `POST …/messages/count_tokens`: how many tokens a Messages request's
//! input comes to, asked of the Responses service behind as
//! `POST …/responses/input_tokens`.
//!
//! The request is translated as a turn would be (a count request carries
//! no `max_tokens`, which a turn must: any value serves, it is not
//! counted), and the service's count is answered as Anthropic's
//! `{"input_tokens": N}`. The service's `x-wirebridge-input-tokens` header
//! (`counted` by the backend's tokenizer, or `estimated`) is passed on.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body::Body;
use tower::{Service, ServiceExt};
use wirebridge_convert::responses_to_chat::History;
use wirebridge_convert::ReplySummary;

use super::{hand_on, open, read_limited};
use crate::body::ResponseBody;
use crate::direction::sealed::Direction;
use crate::error_response::Dialect;
use crate::headers::upstream_request;
use crate::refusal::request::NotJsonObject;
use crate::refusal::upstream::UnusableReply;
use crate::replies::{finish_error, finish_reply, Refused};
use crate::request_body::{BoxError, RequestBody};
use crate::shared::Shared;
use crate::INPUT_TOKENS_HEADER;

/// The path after the client endpoint that counts.
const COUNT_TOKENS: &str = "/count_tokens";

/// The service's endpoint that counts, after the prefix.
const INPUT_TOKENS: &str = "/responses/input_tokens";

/// Largest count answer read.
const MAX_ANSWER: usize = 64 * 1024;

/// `POST {prefix}/messages/count_tokens`, for Messages clients: the prefix.
pub(crate) fn route<D: Direction>(method: &Method, path: &str, endpoint: &str) -> Option<String> {
    if method != Method::POST || D::CLIENT_ENDPOINT != "/messages" {
        return None;
    }
    let prefix = path
        .trim_end_matches('/')
        .strip_suffix(COUNT_TOKENS)?
        .strip_suffix(endpoint)?;
    Some(prefix.to_owned())
}

/// Answers `POST {prefix}/messages/count_tokens`.
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
    let bytes = match with_max_tokens(&bytes) {
        Some(bytes) => bytes,
        None => {
            return Ok(finish_error(&mut tracker, NotJsonObject));
        }
    };
    let parsed = match D::parse(&parts, &bytes) {
        Ok(parsed) => parsed,
        Err(e) => return Ok(Refused::from_convert(e).send(&mut tracker)),
    };
    // A count has no stored conversation before it.
    let history = History::default();
    let settings = &shared.direction;
    let prepared = match tracker.timed(|| D::translate(parsed, &history, settings, "")) {
        Ok(prepared) => prepared,
        Err(e) => return Ok(Refused::from_convert(e).send(&mut tracker)),
    };
    tracker.model = prepared.model.clone();
    tracker.losses = prepared.losses.clone();

    let mut request = upstream_request(&parts, &prefix, INPUT_TOKENS, prepared.body, false);
    hand_on::<D, _>(&mut request, false);
    let response = inner.ready().await?.call(request).await?;
    tracker.first_byte();
    let (mut head, body) = response.into_parts();
    let answer = read_limited(body, MAX_ANSWER).await;
    if !head.status.is_success() {
        let (status, reshaped) =
            Dialect::of(tracker.direction()).reshape_upstream_error(head.status, &answer);
        head.status = status;
        let body = ResponseBody::full(reshaped);
        return Ok(finish_reply(
            &mut tracker,
            head,
            body,
            "application/json",
            None,
        ));
    }
    let Some(tokens) = input_tokens(&answer) else {
        return Ok(finish_error(&mut tracker, UnusableReply::NoInputTokens));
    };
    let how = head
        .headers
        .get(INPUT_TOKENS_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let summary = ReplySummary {
        outcome: how,
        ..ReplySummary::default()
    };
    let body = format!(r#"{{"input_tokens":{tokens}}}"#);
    Ok(finish_reply(
        &mut tracker,
        head,
        ResponseBody::full(body),
        "application/json",
        Some(summary),
    ))
}

/// The body with a `max_tokens`, which a count request need not carry and
/// a translated turn must; `None` if it is not a JSON object.
fn with_max_tokens(body: &[u8]) -> Option<Vec<u8>> {
    let mut object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(body).ok()?;
    object
        .entry("max_tokens")
        .or_insert_with(|| serde_json::Value::from(1));
    serde_json::to_vec(&object).ok()
}

/// `input_tokens` of a Responses token count.
fn input_tokens(answer: &[u8]) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Count {
        input_tokens: u64,
    }
    serde_json::from_slice::<Count>(answer)
        .ok()
        .map(|c| c.input_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_request_gains_a_max_tokens_it_lacks_and_keeps_one_it_has() {
        let added = with_max_tokens(br#"{"model":"m","messages":[]}"#).unwrap();
        let added: serde_json::Value = serde_json::from_slice(&added).unwrap();
        assert_eq!(added["max_tokens"], 1);
        let kept = with_max_tokens(br#"{"model":"m","max_tokens":99}"#).unwrap();
        let kept: serde_json::Value = serde_json::from_slice(&kept).unwrap();
        assert_eq!(kept["max_tokens"], 99);
        assert!(with_max_tokens(b"[1]").is_none());
        assert!(with_max_tokens(b"not json").is_none());
    }

    #[test]
    fn only_messages_clients_count_here() {
        use crate::direction::{MessagesOverResponses, ResponsesOverChat};
        let post = Method::POST;
        assert_eq!(
            route::<MessagesOverResponses>(&post, "/v1/messages/count_tokens", "/messages"),
            Some("/v1".to_owned())
        );
        assert_eq!(
            route::<MessagesOverResponses>(&Method::GET, "/v1/messages/count_tokens", "/messages"),
            None
        );
        assert_eq!(
            route::<ResponsesOverChat>(&post, "/v1/messages/count_tokens", "/messages"),
            None
        );
        assert_eq!(
            route::<MessagesOverResponses>(&post, "/v1/messages", "/messages"),
            None
        );
    }
}
