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

/// SSE frames with `store: false` in the response of their terminal event
/// (`response.completed` or `response.incomplete`).
pub(crate) fn unstored_frames(frames: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(frames) else {
        return frames.to_vec();
    };
    let mut out = Vec::with_capacity(frames.len() + 1);
    // The frames are the translator's own: `event:` and one `data:` line
    // each, or a comment, ended by a blank line.
    for frame in text.split_inclusive("\n\n") {
        match terminal_data(frame).and_then(unstored_event) {
            Some((kind, data)) => {
                wirebridge_sse::encode_event(&mut out, Some(kind), data.get());
            }
            None => out.extend_from_slice(frame.as_bytes()),
        }
    }
    out
}

/// The event name and data of a terminal event frame.
fn terminal_data(frame: &str) -> Option<(&str, &str)> {
    let mut lines = frame.lines();
    let kind = lines.next()?.strip_prefix("event: ")?;
    if !matches!(kind, "response.completed" | "response.incomplete") {
        return None;
    }
    let data = lines.next()?.strip_prefix("data: ")?;
    Some((kind, data))
}

/// The event with its response's `store` set to `false`.
fn unstored_event<'a>((kind, data): (&'a str, &str)) -> Option<(&'a str, Box<RawValue>)> {
    let data: &RawValue = serde_json::from_str(data).ok()?;
    let mut event = RawObject::parse(data).ok()?;
    let response = unstored(event.get("response")?)?;
    event.set_raw("response", response);
    Some((kind, event.to_raw()))
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
        let frames = concat!(
            "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"store\":true}\n\n",
            ": keepalive\n\n",
            "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":9,\"response\":{\"id\":\"r\",\"store\":true}}\n\n",
        );
        let out = String::from_utf8(unstored_frames(frames.as_bytes())).unwrap();
        assert_eq!(
            out,
            concat!(
                "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"store\":true}\n\n",
                ": keepalive\n\n",
                "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":9,\"response\":{\"id\":\"r\",\"store\":false}}\n\n",
            )
        );
    }
}
