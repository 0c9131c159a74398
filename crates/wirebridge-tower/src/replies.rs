//! Finishing an exchange: the reply the client gets, and its report.

use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use wirebridge_convert::{ConvertError, ReplySummary};
use wirebridge_wire::error::ApiError;

use crate::body::ResponseBody;
use crate::error_response::Dialect;
use crate::headers::{clean_headers, insert_dropped};
use crate::refusal::stored::InvalidParameter;
use crate::refusal::upstream::UnusableReply;
use crate::refusal::Refusal;
use crate::request_body::BoxError;
use crate::tracker::Tracker;

/// A request refused before reaching the upstream (or a reply that could
/// not be translated): an error status and body in the client's API.
#[derive(Debug)]
pub(crate) struct Refused {
    status: StatusCode,
    error: ApiError<'static>,
    retry_after: bool,
}

impl Refused {
    pub(crate) fn new(status: StatusCode, error: ApiError<'static>) -> Self {
        Self {
            status,
            error,
            retry_after: false,
        }
    }

    /// Asks the client to retry soon (the store is unavailable).
    pub(crate) fn retry_soon(mut self) -> Self {
        self.retry_after = true;
        self
    }

    /// `param` is wrong, as `message` says (a query parameter, a field of
    /// a stored-state request's body).
    pub(crate) fn invalid_parameter(param: &'static str, message: String) -> Self {
        InvalidParameter { param, message }.into()
    }

    /// A translation error, with the status it calls for.
    pub(crate) fn from_convert(e: ConvertError) -> Self {
        let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
        let error = e.to_api_error();
        let error = ApiError {
            message: error.message.into_owned().into(),
            kind: error.kind.into_owned().into(),
            param: error.param.map(|p| p.into_owned().into()),
            code: error.code.map(|c| c.into_owned().into()),
        };
        Self::new(status, error)
    }

    /// The response on its own, in OpenAI's shape, for exchanges no
    /// tracker follows.
    pub(crate) fn response<B>(self) -> Response<ResponseBody<B>> {
        self.response_in(Dialect::OpenAi)
    }

    /// The response on its own, in `dialect`.
    pub(crate) fn response_in<B>(self, dialect: Dialect) -> Response<ResponseBody<B>> {
        let mut response = dialect.error_response(self.status, self.error);
        if self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }

    /// The response in the client's dialect, reported.
    pub(crate) fn send<B>(self, tracker: &mut Tracker) -> Response<ResponseBody<B>> {
        let code = self.error.code.clone();
        let mut response = Dialect::of(tracker.direction()).error_response(self.status, self.error);
        if self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        finish(tracker, code.as_deref(), &mut response);
        response
    }
}

impl<R: Refusal> From<R> for Refused {
    fn from(refusal: R) -> Self {
        let refused = Refused::new(refusal.status(), refusal.api_error());
        if refusal.retry_soon() {
            refused.retry_soon()
        } else {
            refused
        }
    }
}

/// A refusal's reply in the client's dialect, reported.
pub(crate) fn finish_error<B>(
    tracker: &mut Tracker,
    refusal: impl Refusal,
) -> Response<ResponseBody<B>> {
    Refused::from(refusal).send(tracker)
}

fn finish<B>(tracker: &mut Tracker, code: Option<&str>, response: &mut Response<ResponseBody<B>>) {
    tracker.status = response.status().as_u16();
    if !tracker.losses.is_empty() {
        insert_dropped(response.headers_mut(), &tracker.losses);
    }
    tracker.report(ReplySummary {
        outcome: code.map(str::to_owned),
        ..ReplySummary::default()
    });
}

/// A translated (or re-shaped) reply with a complete body, reported.
pub(crate) fn finish_reply<B>(
    tracker: &mut Tracker,
    mut head: http::response::Parts,
    body: ResponseBody<B>,
    content_type: &'static str,
    summary: Option<ReplySummary>,
) -> Response<ResponseBody<B>> {
    tracker.status = head.status.as_u16();
    clean_headers(&mut head.headers, content_type, Some(&tracker.losses));
    if let Some(len) = body.full_len() {
        head.headers
            .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    tracker.report(summary.unwrap_or_default());
    Response::from_parts(head, body)
}

/// Why an upstream's answer cannot be answered from, by its status alone:
/// a redirect (followed, or passed on for the client to follow, it would
/// send the prompt and its credentials wherever it points), or a 1xx, which
/// is never a final answer (RFC 9110, 15.2: passed on, the client would
/// wait for the answer that follows it). Each is a 502.
pub(crate) fn unusable_status(status: StatusCode) -> Option<UnusableReply> {
    if status.is_redirection() {
        return Some(UnusableReply::Redirect { status });
    }
    if status.is_informational() {
        return Some(UnusableReply::Informational { status });
    }
    None
}

/// A body the upstream encoded although identity was asked for: the
/// bridge reads what it answers, and does not decompress.
pub(crate) fn unreadable_encoding(headers: &HeaderMap) -> Option<UnusableReply> {
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .filter(|e| !e.eq_ignore_ascii_case("identity"))?;
    Some(UnusableReply::Encoded {
        encoding: encoding.to_owned(),
    })
}

/// An upstream body read whole up to `limit` bytes (an error's, a token
/// count's, a model list's); empty when it cannot be read within it.
pub(crate) async fn read_limited<B>(body: B, limit: usize) -> Bytes
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    Limited::new(body, limit)
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use http::header;
    use http_body_util::{BodyExt, Full};
    use wirebridge_store::StoreError;

    use super::*;
    use crate::refusal::stored::StoreUnavailable;

    #[tokio::test]
    async fn an_unavailable_store_is_a_503_to_retry_that_names_no_host() {
        let error = StoreError::Unavailable {
            message: "the response store cannot be reached".into(),
            source: Some(std::sync::Arc::new(std::io::Error::other(
                "connection refused by redis://:secret@10.0.0.5:6379",
            ))),
        };
        let refusal = StoreUnavailable(error);
        assert_eq!(refusal.kind(), "server_error");
        let response = Refused::from(refusal).response::<Full<bytes::Bytes>>();
        assert_eq!(response.status(), 503);
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body = String::from_utf8_lossy(&body);
        assert!(body.contains("cannot be reached"), "{body}");
        assert!(
            !body.contains("secret") && !body.contains("10.0.0.5"),
            "{body}"
        );
    }
}
