//! What background responses answer: a response object with another
//! status, and a run's events as a stream.

use http::{header, HeaderValue, Response};
use serde::Deserialize;
use serde_json::value::RawValue;
use wirebridge_wire::RawObject;

use super::follow::Follower;
use crate::body::ResponseBody;

/// The id of a response object.
pub(crate) fn response_id(response: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Id {
        id: String,
    }
    serde_json::from_slice::<Id>(response)
        .map(|r| r.id)
        .unwrap_or_default()
}

pub(crate) fn json<B>(body: Vec<u8>) -> Response<ResponseBody<B>> {
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(ResponseBody::full(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CONTENT_LENGTH, length);
    response
}

/// A run's events as the client's stream.
pub(crate) fn event_stream<B>(follower: Follower) -> Response<ResponseBody<B>> {
    let mut response = Response::new(ResponseBody::follow(follower));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `response` with its `output` replaced by `output` (a JSON array).
pub(crate) fn with_output(response: &[u8], output: &str) -> Vec<u8> {
    let parsed = std::str::from_utf8(response)
        .ok()
        .and_then(|text| serde_json::from_str::<&RawValue>(text).ok())
        .and_then(|raw| RawObject::parse(raw).ok());
    match parsed {
        Some(mut object) => {
            object.set("output", output);
            object.to_raw().get().as_bytes().to_vec()
        }
        None => response.to_vec(),
    }
}
