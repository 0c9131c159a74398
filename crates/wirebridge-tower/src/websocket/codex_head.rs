//! What the `101` tells Codex about the connection, in the headers Codex
//! reads from the upgrade: the largest message it may send, the turn
//! state, the catalog's tag and the backend's model.

use http::{HeaderMap, HeaderValue};

use crate::catalog_etag::{Served, MODELS_ETAG_HEADER};
use crate::headers::{SERVER_MODEL_HEADER, TURN_STATE_HEADER, WEBSOCKET_MAX_MESSAGE_BYTES_HEADER};

/// Longest turn state echoed back: Codex's own are short tokens, and a
/// client's header is not grown into the bridge's reply without bound.
const MAX_TURN_STATE: usize = 512;

/// Writes the upgrade's headers for Codex.
///
/// - the message limit: `max_message`, the size past which the session
///   closes the connection (1009);
/// - the turn state: the one the client sent back, when it reopens a
///   connection during a turn, so that Codex's turn keeps one token; else a
///   new one. The bridge routes by what a request holds, not by this token,
///   so any token serves: Codex needs one to send back;
/// - the tag of the catalog served last to the same credential, so that
///   Codex refreshes a cached catalog that changed since;
/// - the backend's model, only when that catalog listed just one: then
///   every turn is served by it. Otherwise the upgrade, which
///   precedes every request, cannot know it, and a guess would read to
///   Codex as a reroute.
pub(crate) fn insert(
    response: &mut HeaderMap,
    request: &HeaderMap,
    max_message: usize,
    catalog: Option<Served>,
) {
    response.insert(
        WEBSOCKET_MAX_MESSAGE_BYTES_HEADER,
        HeaderValue::from(max_message),
    );
    let turn_state = request
        .get(TURN_STATE_HEADER)
        .filter(|value| !value.is_empty() && value.len() <= MAX_TURN_STATE)
        .cloned()
        .unwrap_or_else(new_turn_state);
    response.insert(TURN_STATE_HEADER, turn_state);
    let Some(catalog) = catalog else {
        return;
    };
    if let Ok(value) = HeaderValue::from_str(&catalog.etag) {
        response.insert(MODELS_ETAG_HEADER, value);
    }
    if let Some(value) = catalog
        .sole_model
        .and_then(|model| HeaderValue::from_str(&model).ok())
    {
        response.insert(SERVER_MODEL_HEADER, value);
    }
}

/// A token no other connection has: 128 bits, in hex.
fn new_turn_state() -> HeaderValue {
    let high = crate::trace_context::random_u64();
    let low = crate::trace_context::random_u64();
    HeaderValue::from_str(&format!("wbts_{high:016x}{low:016x}"))
        .expect("hex digits are a header value")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(request: &HeaderMap, catalog: Option<Served>) -> HeaderMap {
        let mut response = HeaderMap::new();
        insert(&mut response, request, 33_554_432, catalog);
        response
    }

    #[test]
    fn the_limit_and_a_new_turn_state_are_always_written() {
        let first = written(&HeaderMap::new(), None);
        assert_eq!(first[WEBSOCKET_MAX_MESSAGE_BYTES_HEADER], "33554432");
        let state = first[TURN_STATE_HEADER].to_str().unwrap();
        assert!(state.starts_with("wbts_") && state.len() == 37, "{state}");
        let second = written(&HeaderMap::new(), None);
        assert_ne!(second[TURN_STATE_HEADER], first[TURN_STATE_HEADER]);
        assert!(first.get(MODELS_ETAG_HEADER).is_none());
        assert!(first.get(SERVER_MODEL_HEADER).is_none());
    }

    #[test]
    fn a_turn_state_sent_back_is_echoed_unless_empty_or_too_long() {
        let mut request = HeaderMap::new();
        request.insert(TURN_STATE_HEADER, HeaderValue::from_static("ts-1"));
        assert_eq!(written(&request, None)[TURN_STATE_HEADER], "ts-1");
        request.insert(TURN_STATE_HEADER, HeaderValue::from_static(""));
        assert_ne!(written(&request, None)[TURN_STATE_HEADER], "");
        let long = "x".repeat(MAX_TURN_STATE + 1);
        request.insert(TURN_STATE_HEADER, HeaderValue::from_str(&long).unwrap());
        assert_ne!(written(&request, None)[TURN_STATE_HEADER], long.as_str());
    }

    #[test]
    fn the_catalog_gives_its_tag_and_its_model_when_it_lists_one() {
        let one = Served {
            etag: "\"00000000000000ab\"".into(),
            sole_model: Some("qwen3-coder".into()),
        };
        let response = written(&HeaderMap::new(), Some(one));
        assert_eq!(response[MODELS_ETAG_HEADER], "\"00000000000000ab\"");
        assert_eq!(response[SERVER_MODEL_HEADER], "qwen3-coder");
        let many = Served {
            etag: "\"00000000000000ac\"".into(),
            sole_model: None,
        };
        let response = written(&HeaderMap::new(), Some(many));
        assert_eq!(response[MODELS_ETAG_HEADER], "\"00000000000000ac\"");
        assert!(response.get(SERVER_MODEL_HEADER).is_none());
    }
}
