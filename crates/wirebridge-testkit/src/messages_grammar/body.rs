//! A `message` body, read into the transcript a stream gives.

use serde_json::Value;

use super::block::absorb;
use crate::transcript::{str_field, MessagesTranscript};

/// The content of a `message` body, in the shape [`check`](super::check)
/// gives a stream's, to compare the two paths of a translator.
pub fn messages_body_transcript(body: &Value) -> MessagesTranscript {
    let mut t = MessagesTranscript {
        id: str_field(body, "id").to_owned(),
        model: str_field(body, "model").to_owned(),
        stop_reason: body
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        usage: body.get("usage").cloned(),
        blocks: body
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        ..MessagesTranscript::default()
    };
    let blocks = t.blocks.clone();
    absorb(&blocks, &mut t);
    t
}
