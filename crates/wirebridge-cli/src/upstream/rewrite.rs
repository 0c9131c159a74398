//! What the upstream is sent, and what of its answer is passed on: the
//! request target mapped onto the upstream's base URL, and in origin form
//! on a connection of the bridge's own; the headers that belong to one
//! connection, never forwarded either way; and an answer whose framing is
//! in doubt.

use http::uri::PathAndQuery;
use http::{header, HeaderMap, HeaderName, HeaderValue, Request, Uri};

/// Headers that belong to one connection, never forwarded. Names, not
/// text: a header looked up by its text is parsed first, and these are
/// looked up for every request and every answer.
const HOP_BY_HOP: [HeaderName; 8] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::UPGRADE,
    header::HOST,
];

/// Hop-by-hop headers only answers carry.
const HOP_BY_HOP_ANSWER: [HeaderName; 2] = [
    HeaderName::from_static("proxy-connection"),
    header::TRANSFER_ENCODING,
];

/// Where requests go: `/v1/X` becomes `<base>/X`.
#[derive(Debug, Clone)]
pub struct Target {
    scheme: http::uri::Scheme,
    authority: http::uri::Authority,
    base_path: String,
}

impl Target {
    /// The upstream at `base` (`http://localhost:8000/v1`, without
    /// userinfo); a base without a path is `/v1`.
    pub fn new(base: &Uri) -> Self {
        let path = base.path().trim_end_matches('/');
        Self {
            scheme: base.scheme().cloned().unwrap_or(http::uri::Scheme::HTTP),
            authority: base
                .authority()
                .cloned()
                .expect("checked when the settings were loaded"),
            base_path: if path.is_empty() {
                "/v1".to_owned()
            } else {
                path.to_owned()
            },
        }
    }

    /// The absolute URI a client's `uri` is sent to.
    pub fn map(&self, uri: &Uri) -> Uri {
        let path = uri.path();
        let rest = path
            .strip_prefix("/v1")
            .filter(|r| r.is_empty() || r.starts_with('/'))
            .unwrap_or(path);
        // Most bases are `/v1` itself: the client's path and query are
        // then sent as they came, shared rather than written anew.
        let unchanged = path.len() - rest.len() == self.base_path.len()
            && path.starts_with(self.base_path.as_str());
        let path_and_query = match (unchanged, uri.path_and_query()) {
            (true, Some(same)) => Ok(same.clone()),
            _ => match uri.query() {
                Some(q) => format!("{}{rest}?{q}", self.base_path),
                None => format!("{}{rest}", self.base_path),
            }
            .parse::<PathAndQuery>(),
        };
        let Ok(path_and_query) = path_and_query else {
            return uri.clone();
        };
        let mut parts = http::uri::Parts::default();
        parts.scheme = Some(self.scheme.clone());
        parts.authority = Some(self.authority.clone());
        parts.path_and_query = Some(path_and_query);
        Uri::from_parts(parts).unwrap_or_else(|_| uri.clone())
    }
}

/// An absolute URI becomes the path and query, its authority the `Host`:
/// the form a request takes on a connection to the origin itself.
pub fn origin_form<B>(request: &mut Request<B>) {
    let parts = std::mem::take(request.uri_mut()).into_parts();
    if let Some(authority) = &parts.authority {
        if let Ok(host) = HeaderValue::from_str(authority.as_str()) {
            request.headers_mut().insert(header::HOST, host);
        }
    }
    let path = parts
        .path_and_query
        .unwrap_or_else(|| PathAndQuery::from_static("/"));
    *request.uri_mut() = Uri::from(path);
}

/// Removes the headers of the client's connection from what the upstream
/// is sent.
pub fn strip_request(headers: &mut HeaderMap) {
    for name in &HOP_BY_HOP {
        headers.remove(name);
    }
}

/// Removes the headers of the upstream connection from its reply (RFC 9110,
/// 7.6.1): the fixed hop-by-hop ones, and every header `connection` names.
pub fn strip_response(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP.iter().chain(&HOP_BY_HOP_ANSWER) {
        headers.remove(name);
    }
}

/// Whether an answer's framing is in doubt: `content-length` together with
/// `transfer-encoding`. RFC 9112 (6.3) lets the latter win but calls such a
/// message a likely attempt at smuggling, to be handled as an error; where
/// the upstream and the bridge disagree on where it ends, what follows would
/// be read as the answer to the next request.
pub fn framing_in_doubt(headers: &HeaderMap) -> bool {
    headers.contains_key(header::CONTENT_LENGTH) && headers.contains_key(header::TRANSFER_ENCODING)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_onto_the_base() {
        let t = |base: &str, p: &str| {
            Target::new(&base.parse().unwrap())
                .map(&p.parse().unwrap())
                .to_string()
        };
        let local = "http://127.0.0.1:8000/v1";
        assert_eq!(
            t(local, "/v1/chat/completions"),
            "http://127.0.0.1:8000/v1/chat/completions"
        );
        assert_eq!(
            t(local, "/v1/models?x=1"),
            "http://127.0.0.1:8000/v1/models?x=1"
        );
        assert_eq!(
            t("https://openrouter.ai/api/v1/", "/v1/chat/completions"),
            "https://openrouter.ai/api/v1/chat/completions"
        );
        assert_eq!(t("http://h:1", "/v1/responses"), "http://h:1/v1/responses");
        assert_eq!(t(local, "/v1beta/x"), "http://127.0.0.1:8000/v1/v1beta/x");
    }

    #[test]
    fn origin_form_keeps_the_path_and_query_and_names_the_host() {
        let mut request = Request::post("http://127.0.0.1:8000/v1/models?x=1")
            .body(())
            .unwrap();
        origin_form(&mut request);
        assert_eq!(request.uri(), "/v1/models?x=1");
        assert_eq!(request.headers()[header::HOST], "127.0.0.1:8000");
    }

    #[test]
    fn the_upstream_connections_own_headers_are_not_passed_on() {
        let mut headers = HeaderMap::new();
        headers.insert("connection", "close, x-hop".parse().unwrap());
        headers.insert("x-hop", "1".parse().unwrap());
        headers.insert("keep-alive", "timeout=5".parse().unwrap());
        headers.insert("transfer-encoding", "chunked".parse().unwrap());
        headers.insert("content-type", "application/json".parse().unwrap());
        strip_response(&mut headers);
        assert_eq!(headers.len(), 1, "{headers:?}");
        assert!(headers.contains_key("content-type"));
    }

    #[test]
    fn the_clients_connection_headers_are_not_sent_upstream() {
        let mut headers = HeaderMap::new();
        for name in [
            "connection",
            "keep-alive",
            "proxy-authorization",
            "te",
            "trailer",
        ] {
            headers.insert(name, "x".parse().unwrap());
        }
        headers.insert("upgrade", "websocket".parse().unwrap());
        headers.append("upgrade", "h2c".parse().unwrap());
        headers.insert("host", "bridge.example".parse().unwrap());
        headers.insert("authorization", "Bearer k".parse().unwrap());
        headers.insert("x-request-id", "r1".parse().unwrap());
        strip_request(&mut headers);
        let mut left: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
        left.sort_unstable();
        assert_eq!(left, ["authorization", "x-request-id"]);
        assert_eq!(headers.len(), 2);
    }

    #[test]
    fn length_and_chunked_together_put_the_framing_in_doubt() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.append(*name, HeaderValue::from_static(value));
            }
            map
        };
        assert!(framing_in_doubt(&headers(&[
            ("content-length", "5"),
            ("transfer-encoding", "chunked"),
        ])));
        assert!(!framing_in_doubt(&headers(&[("content-length", "5")])));
        assert!(!framing_in_doubt(&headers(&[(
            "transfer-encoding",
            "chunked"
        )])));
    }
}
