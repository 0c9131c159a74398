//! Heads of the messages the layer writes: the upstream request, and
//! translated replies.

use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Method, Request, Uri};
use wirebridge_convert::LossReport;

use crate::request_body::RequestBody;

/// Header listing the request and reply fields that could not be translated.
pub const DROPPED_HEADER: &str = "x-wirebridge-dropped";

/// Header on Responses replies (and the WebSocket upgrade) saying `true`:
/// the `usage` reported already counts the reasoning of earlier turns that
/// the model was given.
///
/// OpenAI sends it, and Codex reads it (present or not) to decide whether
/// to add its own estimate of the sealed reasoning items in its history to
/// the context it thinks is in use. Behind the bridge the usage is the
/// backend's: its `prompt_tokens` count every message it was sent, replayed
/// reasoning included, and reasoning the bridge withheld takes no room. An
/// estimate on top would count reasoning the backend never held, and
/// compact early.
pub const REASONING_INCLUDED_HEADER: &str = "x-reasoning-included";

/// The upstream request: same method, headers (credentials, request ids)
/// and query, the other endpoint, the translated body.
pub(crate) fn upstream_request<B>(
    parts: &http::request::Parts,
    prefix: &str,
    endpoint: &str,
    body: Vec<u8>,
    stream: bool,
) -> Request<RequestBody<B>> {
    let path_and_query = match parts.uri.query() {
        Some(query) => format!("{prefix}{endpoint}?{query}"),
        None => format!("{prefix}{endpoint}"),
    };
    let mut uri = parts.uri.clone().into_parts();
    uri.path_and_query = path_and_query.parse().ok();
    let uri = Uri::from_parts(uri).unwrap_or_else(|_| parts.uri.clone());

    let mut headers = parts.headers.clone();
    for name in [
        header::CONTENT_LENGTH,
        header::TRANSFER_ENCODING,
        header::CONTENT_ENCODING,
        header::HOST,
    ] {
        headers.remove(name);
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    // A compressed reply could not be translated.
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    let accept = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
    if let Some(host) = parts
        .headers
        .get(header::HOST)
        .filter(|_| uri.authority().is_none())
    {
        headers.insert(header::HOST, host.clone());
    }

    let mut request = Request::new(RequestBody::translated(Bytes::from(body)));
    *request.method_mut() = Method::POST;
    *request.uri_mut() = uri;
    *request.version_mut() = parts.version;
    *request.headers_mut() = headers;
    request
}

/// Whether a reply is an event stream.
pub(crate) fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

/// Headers of a reply whose body changed: length and encoding no longer
/// apply; the content type is ours.
pub(crate) fn clean_headers(
    headers: &mut HeaderMap,
    content_type: &'static str,
    losses: Option<&LossReport>,
) {
    for name in [
        header::CONTENT_LENGTH,
        header::CONTENT_ENCODING,
        header::TRANSFER_ENCODING,
        header::CONNECTION,
    ] {
        headers.remove(name);
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(losses) = losses.filter(|l| !l.is_empty()) {
        insert_dropped(headers, losses);
    }
}

/// Says [`REASONING_INCLUDED_HEADER`]`: true`.
pub(crate) fn insert_reasoning_included(headers: &mut HeaderMap) {
    headers.insert(REASONING_INCLUDED_HEADER, HeaderValue::from_static("true"));
}

/// Lists what was dropped in [`DROPPED_HEADER`].
pub(crate) fn insert_dropped(headers: &mut HeaderMap, losses: &LossReport) {
    if let Ok(value) = HeaderValue::from_str(&losses.paths()) {
        headers.insert(DROPPED_HEADER, value);
    }
}
