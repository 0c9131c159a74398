//! The opening handshake (RFC 6455 §4.2): which requests ask for an
//! upgrade, and the `101` that accepts one.

use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use hyper::upgrade::OnUpgrade;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::body::ResponseBody;
use crate::error_response::{api_error, error_response};

/// The only protocol version there is.
const VERSION: &str = "13";

/// Whether a request asks for a WebSocket: `GET` with `Upgrade: websocket`.
pub(crate) fn is_upgrade<B>(request: &Request<B>) -> bool {
    request.method() == Method::GET && has_token(request.headers(), header::UPGRADE, "websocket")
}

/// An accepted upgrade: the `101` to send, and the connection once hyper
/// hands it over.
pub(crate) struct Accepted<B> {
    pub(crate) response: Response<ResponseBody<B>>,
    pub(crate) on_upgrade: OnUpgrade,
}

/// Checks the handshake and takes the connection's upgrade from the
/// request; or the error reply that says what is wrong with it.
pub(crate) fn accept<B, ReqB>(
    request: &mut Request<ReqB>,
) -> Result<Accepted<B>, Box<Response<ResponseBody<B>>>> {
    let headers = request.headers();
    if !has_token(headers, header::CONNECTION, "upgrade") {
        return Err(Box::new(refuse(
            StatusCode::BAD_REQUEST,
            "a WebSocket upgrade needs `Connection: Upgrade`",
            "invalid_websocket_handshake",
        )));
    }
    let version = headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .map(HeaderValue::as_bytes);
    if version != Some(VERSION.as_bytes()) {
        let mut response = refuse(
            StatusCode::UPGRADE_REQUIRED,
            "only WebSocket version 13 is supported",
            "unsupported_websocket_version",
        );
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static(VERSION),
        );
        return Err(Box::new(response));
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return Err(Box::new(refuse(
            StatusCode::BAD_REQUEST,
            "a WebSocket upgrade needs a `Sec-WebSocket-Key`",
            "invalid_websocket_handshake",
        )));
    };
    let accept = derive_accept_key(key.as_bytes());
    if request.extensions().get::<OnUpgrade>().is_none() {
        // Not served by hyper with upgrades (or over HTTP/2): the
        // connection cannot be taken over.
        return Err(Box::new(refuse(
            StatusCode::NOT_IMPLEMENTED,
            "this server cannot upgrade the connection to a WebSocket; use HTTP/1.1, or \
             POST /v1/responses with `stream: true`",
            "websocket_unavailable",
        )));
    }
    let on_upgrade = hyper::upgrade::on(request);

    let mut response = Response::new(ResponseBody::full(Vec::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(value) = HeaderValue::from_str(&accept) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, value);
    }
    Ok(Accepted {
        response,
        on_upgrade,
    })
}

/// Headers of the upgrade request that describe this connection only: the
/// turns' upstream requests must not carry them.
pub(crate) fn strip_upgrade_headers(headers: &mut HeaderMap) {
    for name in [
        header::CONNECTION,
        header::UPGRADE,
        header::SEC_WEBSOCKET_KEY,
        header::SEC_WEBSOCKET_VERSION,
        header::SEC_WEBSOCKET_EXTENSIONS,
        header::SEC_WEBSOCKET_PROTOCOL,
    ] {
        headers.remove(name);
    }
}

fn refuse<B>(status: StatusCode, message: &str, code: &str) -> Response<ResponseBody<B>> {
    error_response(
        status,
        api_error(message.to_owned(), "invalid_request_error", code),
    )
}

/// Whether a comma-separated header lists `token` (any case).
fn has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upgrade_request() -> http::request::Builder {
        Request::get("/v1/responses")
            .header("upgrade", "websocket")
            .header("connection", "keep-alive, Upgrade")
            .header("sec-websocket-version", "13")
            .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
    }

    #[test]
    fn upgrades_are_get_requests_asking_for_websocket() {
        assert!(is_upgrade(&upgrade_request().body(()).unwrap()));
        let post = Request::post("/v1/responses")
            .header("upgrade", "websocket")
            .body(())
            .unwrap();
        assert!(!is_upgrade(&post));
        let h2c = Request::get("/v1/responses")
            .header("upgrade", "h2c")
            .body(())
            .unwrap();
        assert!(!is_upgrade(&h2c));
    }

    #[test]
    fn a_handshake_without_a_connection_to_take_over_is_a_501() {
        let mut request = upgrade_request().body(()).unwrap();
        let refused = accept::<(), ()>(&mut request).err().unwrap();
        assert_eq!(refused.status(), StatusCode::NOT_IMPLEMENTED);
    }

    #[test]
    fn other_versions_are_told_which_one_is_spoken() {
        let mut request = upgrade_request().body(()).unwrap();
        request
            .headers_mut()
            .insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("8"));
        let refused = accept::<(), ()>(&mut request).err().unwrap();
        assert_eq!(refused.status(), StatusCode::UPGRADE_REQUIRED);
        assert_eq!(refused.headers()[header::SEC_WEBSOCKET_VERSION], "13");
    }

    #[test]
    fn a_missing_key_or_connection_token_is_a_400() {
        let mut request = upgrade_request().body(()).unwrap();
        request.headers_mut().remove(header::SEC_WEBSOCKET_KEY);
        let refused = accept::<(), ()>(&mut request).err().unwrap();
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);

        let mut request = upgrade_request().body(()).unwrap();
        request
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
        let refused = accept::<(), ()>(&mut request).err().unwrap();
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    }
}
