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

/// Header on the WebSocket upgrade giving the largest message, in bytes,
/// the bridge reads from the client: a larger one closes the connection
/// (1009). Codex reads it to know what it may send.
pub const WEBSOCKET_MAX_MESSAGE_BYTES_HEADER: &str = "x-codex-websocket-max-message-bytes";

/// Header of Codex's turn state: an opaque token a server gives on the
/// WebSocket upgrade, which Codex keeps for the rest of its turn and sends
/// back with the turn's later requests (and on a connection it reopens
/// during the turn), so that they reach the same place.
pub const TURN_STATE_HEADER: &str = "x-codex-turn-state";

/// Header naming the model that serves the client, on the WebSocket
/// upgrade. Codex takes a name other than the model it asked for as its
/// request having been rerouted, and says so.
pub const SERVER_MODEL_HEADER: &str = "openai-model";

/// The upstream request: same method, headers (credentials, request ids)
/// and query, the other endpoint, the translated body.
pub(crate) fn upstream_request<B>(
    parts: &http::request::Parts,
    prefix: &str,
    endpoint: &str,
    body: impl Into<Bytes>,
    stream: bool,
) -> Request<RequestBody<B>> {
    let body: Bytes = body.into();
    let query = parts.uri.query();
    let mut path_and_query =
        String::with_capacity(prefix.len() + endpoint.len() + query.map_or(0, |q| q.len() + 1));
    path_and_query.push_str(prefix);
    path_and_query.push_str(endpoint);
    if let Some(query) = query {
        path_and_query.push('?');
        path_and_query.push_str(query);
    }
    let mut uri = parts.uri.clone().into_parts();
    uri.path_and_query = path_and_query.parse().ok();
    let uri = Uri::from_parts(uri).unwrap_or_else(|_| parts.uri.clone());

    // The client's headers but those written here, copied into a map
    // sized for all of them: a clone of the client's map, then the
    // headers below inserted, grew the map on every request.
    let mut headers = HeaderMap::with_capacity(parts.headers.len() + 5);
    for (name, value) in &parts.headers {
        let replaced = [
            &header::CONTENT_LENGTH,
            &header::TRANSFER_ENCODING,
            &header::CONTENT_ENCODING,
            &header::HOST,
            &header::CONTENT_TYPE,
            &header::ACCEPT_ENCODING,
            &header::ACCEPT,
        ]
        .contains(&name);
        if !replaced {
            headers.append(name.clone(), value.clone());
        }
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

    let mut request = Request::new(RequestBody::translated(body));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn client_parts(uri: &str, headers: &[(&str, &str)]) -> http::request::Parts {
        let mut request = Request::post(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn values<'h>(headers: &'h HeaderMap, name: &str) -> Vec<&'h str> {
        headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect()
    }

    #[test]
    fn the_upstream_request_keeps_the_clients_headers_but_those_of_the_body() {
        let parts = client_parts(
            "/v1/responses?api-version=2",
            &[
                ("authorization", "Bearer k"),
                ("x-tag", "one"),
                ("content-type", "application/json; charset=utf-8"),
                ("content-length", "999"),
                ("transfer-encoding", "chunked"),
                ("content-encoding", "gzip"),
                ("accept-encoding", "gzip, br"),
                ("accept", "*/*"),
                ("x-tag", "two"),
                ("host", "bridge.example"),
                ("user-agent", "codex"),
            ],
        );
        let request =
            upstream_request::<()>(&parts, "/v1", "/chat/completions", vec![b'x'; 12], true);
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri(), "/v1/chat/completions?api-version=2");
        let headers = request.headers();
        assert_eq!(values(headers, "authorization"), ["Bearer k"]);
        assert_eq!(values(headers, "x-tag"), ["one", "two"]);
        assert_eq!(values(headers, "user-agent"), ["codex"]);
        assert_eq!(values(headers, "content-type"), ["application/json"]);
        assert_eq!(values(headers, "content-length"), ["12"]);
        assert_eq!(values(headers, "transfer-encoding"), Vec::<&str>::new());
        assert_eq!(values(headers, "content-encoding"), Vec::<&str>::new());
        assert_eq!(values(headers, "accept-encoding"), ["identity"]);
        assert_eq!(values(headers, "accept"), ["text/event-stream"]);
        // An origin-form URI: the client's host goes with it.
        assert_eq!(values(headers, "host"), ["bridge.example"]);
        assert_eq!(headers.len(), 9);
    }

    #[test]
    fn an_absolute_uri_carries_the_host_and_a_body_reply_is_asked_for() {
        let parts = client_parts(
            "http://upstream.example/v1/responses",
            &[("host", "bridge.example")],
        );
        let request = upstream_request::<()>(&parts, "/v1", "/chat/completions", Vec::new(), false);
        assert_eq!(request.uri(), "http://upstream.example/v1/chat/completions");
        let headers = request.headers();
        assert_eq!(values(headers, "host"), Vec::<&str>::new());
        assert_eq!(values(headers, "accept"), ["application/json"]);
        assert_eq!(values(headers, "content-length"), ["0"]);
    }
}
