//! A response the store did not keep says so: its `store` reads `false`,
//! in the body and in the stream's terminal event, so the client learns it
//! cannot chain on it (continuing it would be a 404).
//!
//! This is the path of a failed write only: the response, already written,
//! is patched with [`RawObject`] (the keys read, the values copied).

use serde_json::value::RawValue;
use wirebridge_wire::RawObject;

/// A `Response` body with `store: false`.
pub(crate) fn unstored_response(body: &[u8]) -> Vec<u8> {
    std::str::from_utf8(body)
        .ok()
        .and_then(|text| serde_json::from_str::<&RawValue>(text).ok())
        .and_then(unstored)
        .map(|raw| raw.get().as_bytes().to_vec())
        .unwrap_or_else(|| body.to_vec())
}

/// The data of a stream's terminal event (`response.completed` or
/// `response.incomplete`) with `store: false` in its response; `None` for
/// any other event, which stays as it is.
pub(crate) fn unstored_event(data: &str) -> Option<String> {
    let data: &RawValue = serde_json::from_str(data).ok()?;
    let mut event = RawObject::parse(data).ok()?;
    if !matches!(
        event.str("type"),
        Some("response.completed" | "response.incomplete")
    ) {
        return None;
    }
    let response = unstored(event.get("response")?)?;
    event.set_raw("response", response);
    Some(event.to_raw().get().to_owned())
}

fn unstored(response: &RawValue) -> Option<Box<RawValue>> {
    let mut response = RawObject::parse(response).ok()?;
    response.set("store", "false");
    Some(response.to_raw())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_says_it_was_not_stored() {
        let body = br#"{"id":"resp_1","output":[{"text":"\"store\":true"}],"store":true,"x":1}"#;
        assert_eq!(
            String::from_utf8(unstored_response(body)).unwrap(),
            r#"{"id":"resp_1","output":[{"text":"\"store\":true"}],"store":false,"x":1}"#
        );
    }

    #[test]
    fn only_the_terminal_event_changes() {
        assert_eq!(
            unstored_event(r#"{"type":"response.output_item.done","store":true}"#),
            None
        );
        assert_eq!(
            unstored_event(
                r#"{"stream_id":"s","type":"response.completed","sequence_number":9,"response":{"id":"r","store":true}}"#
            )
            .unwrap(),
            r#"{"stream_id":"s","type":"response.completed","sequence_number":9,"response":{"id":"r","store":false}}"#
        );
    }
}
