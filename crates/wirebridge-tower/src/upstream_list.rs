//! Asking the service behind for its model list with the client's
//! credentials: the Messages model routes, the model catalog and the
//! credential check of conversation writes all send the same `GET`, and
//! answer from it in plain JSON.

use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri, Version};

use crate::body::ResponseBody;
use crate::request_body::RequestBody;

/// `GET uri` with the client's `headers` (its credentials among them),
/// less those that describe a body it does not have, asking for JSON the
/// bridge can read (a compressed list could not be).
pub(crate) fn models_request<ReqB>(
    mut headers: HeaderMap,
    uri: Uri,
    version: Version,
) -> Request<RequestBody<ReqB>> {
    for name in [
        header::CONTENT_LENGTH,
        header::TRANSFER_ENCODING,
        header::CONTENT_TYPE,
        header::CONTENT_ENCODING,
        header::EXPECT,
    ] {
        headers.remove(name);
    }
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    let mut request = Request::new(RequestBody::empty());
    *request.method_mut() = Method::GET;
    *request.uri_mut() = uri;
    *request.version_mut() = version;
    *request.headers_mut() = headers;
    request
}

/// A JSON reply of `status`, its length set.
pub(crate) fn json_reply<B>(status: StatusCode, body: Vec<u8>) -> Response<ResponseBody<B>> {
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(ResponseBody::full(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_LENGTH, length);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_keeps_the_credentials_and_asks_for_plain_json() {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer k"));
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("42"));
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        headers.insert(header::EXPECT, HeaderValue::from_static("100-continue"));
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        let uri: Uri = "/v1/models".parse().unwrap();
        let request = models_request::<()>(headers, uri, Version::HTTP_11);
        assert_eq!(request.method(), Method::GET);
        assert_eq!(request.uri(), "/v1/models");
        let sent = request.headers();
        assert_eq!(sent[header::AUTHORIZATION], "Bearer k");
        for gone in [header::CONTENT_LENGTH, header::CONTENT_TYPE, header::EXPECT] {
            assert!(!sent.contains_key(&gone), "{gone}");
        }
        assert_eq!(sent[header::ACCEPT], "application/json");
        assert_eq!(sent[header::ACCEPT_ENCODING], "identity");
    }
}
