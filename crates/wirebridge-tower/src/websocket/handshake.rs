//! The opening handshake (RFC 6455 §4.2): which requests ask for an
//! upgrade, and the `101` that accepts one.

use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use hyper::upgrade::OnUpgrade;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use super::rejection::{
    ConnectionNotUpgrade, HandshakeRejection, MissingKey, UnsupportedVersion, UpgradeUnavailable,
    VERSION,
};
use crate::body::ResponseBody;

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
/// request; or why it is refused.
pub(crate) fn accept<B, ReqB>(
    request: &mut Request<ReqB>,
) -> Result<Accepted<B>, HandshakeRejection> {
    let headers = request.headers();
    if !has_token(headers, header::CONNECTION, "upgrade") {
        return Err(ConnectionNotUpgrade.into());
    }
    let version = headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .map(HeaderValue::as_bytes);
    if version != Some(VERSION.as_bytes()) {
        return Err(UnsupportedVersion.into());
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return Err(MissingKey.into());
    };
    let accept = derive_accept_key(key.as_bytes());
    if request.extensions().get::<OnUpgrade>().is_none() {
        // Not served by hyper with upgrades (or over HTTP/2): the
        // connection cannot be taken over.
        return Err(UpgradeUnavailable.into());
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
        assert!(matches!(refused, HandshakeRejection::UpgradeUnavailable(_)));
    }

    #[test]
    fn other_versions_are_told_which_one_is_spoken() {
        let mut request = upgrade_request().body(()).unwrap();
        request
            .headers_mut()
            .insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("8"));
        let refused = accept::<(), ()>(&mut request).err().unwrap();
        assert!(matches!(refused, HandshakeRejection::UnsupportedVersion(_)));
        let response = refused.into_response::<()>();
        assert_eq!(response.status(), StatusCode::UPGRADE_REQUIRED);
        assert_eq!(response.headers()[header::SEC_WEBSOCKET_VERSION], "13");
    }

    #[test]
    fn a_missing_key_or_connection_token_is_a_400() {
        let mut request = upgrade_request().body(()).unwrap();
        request.headers_mut().remove(header::SEC_WEBSOCKET_KEY);
        let refused = accept::<(), ()>(&mut request).err().unwrap();
        assert!(matches!(refused, HandshakeRejection::MissingKey(_)));

        let mut request = upgrade_request().body(()).unwrap();
        request
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
        let refused = accept::<(), ()>(&mut request).err().unwrap();
        assert!(matches!(
            refused,
            HandshakeRejection::ConnectionNotUpgrade(_)
        ));
    }
}
