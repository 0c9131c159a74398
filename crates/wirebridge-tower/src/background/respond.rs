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

/// The `status` of a stored response object.
pub(crate) fn status_of(response: &str) -> Option<String> {
    let raw: &RawValue = serde_json::from_str(response).ok()?;
    RawObject::parse(raw).ok()?.str("status").map(str::to_owned)
}

/// `response` with another status (and, for `failed`, its error).
pub(crate) fn with_status(response: &[u8], status: &str, error: Option<(&str, &str)>) -> Vec<u8> {
    let Some(raw) = std::str::from_utf8(response)
        .ok()
        .and_then(|text| serde_json::from_str::<&RawValue>(text).ok())
    else {
        return response.to_vec();
    };
    let Ok(mut object) = RawObject::parse(raw) else {
        return response.to_vec();
    };
    let status = serde_json::to_string(status).expect("a string serializes");
    object.set("status", &status);
    if let Some((code, message)) = error {
        let error = serde_json::json!({ "code": code, "message": message });
        object.set("error", &error.to_string());
    }
    object.to_raw().get().as_bytes().to_vec()
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
