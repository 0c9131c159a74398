//! A Messages reply that came whole: a body, or a stream read to its end.
//! Both are read by the one reader: a stream's events as they come, a
//! body's blocks each as one that opens whole.

use serde_json::json;
use serde_json::value::RawValue;

use super::reader::Whole;
use super::stream::StreamTranslator;
use super::ExchangeContext;
use crate::error::ConvertError;
use crate::frames::Frames;
use crate::responses_to_chat::TranslatedBody;
use crate::responses_to_responses::finished_body;
use crate::stream::{SseTranslator, StreamTranslate};

/// Translates a Messages body (`"type": "message"`) into the `Response`
/// a Responses client reads: its blocks are read as they are, with no
/// Messages events written for them (see [`body_events`], which writes
/// them for a client that asked for a stream).
pub fn translate_body(
    body: &[u8],
    context: &ExchangeContext,
) -> Result<TranslatedBody, ConvertError> {
    let whole = Whole::read(body).map_err(unreadable)?;
    let mut translator = StreamTranslator::new(context.clone());
    let mut sink = Frames::json();
    translator.push_body(&whole, &mut sink);
    if !translator.is_finished() {
        translator.finish(&mut sink);
    }
    done(&translator)
}

/// A reply that is not a Messages message.
fn unreadable(why: String) -> ConvertError {
    ConvertError::InvalidUpstream(format!(
        "the upstream's reply is not a Messages message: {why}"
    ))
}

/// Translates a whole Messages event stream (SSE) into the `Response` a
/// client that asked for no stream reads.
pub fn translate_stream_body(
    events: &[u8],
    context: &ExchangeContext,
) -> Result<TranslatedBody, ConvertError> {
    let mut stream = SseTranslator::new(StreamTranslator::new(context.clone()));
    let mut sink = Frames::json();
    for piece in events.chunks(64 * 1024) {
        stream.feed(piece, &mut sink);
        sink.take();
    }
    stream.finish(&mut sink);
    done(&stream.into_translator())
}

fn done(translator: &StreamTranslator) -> Result<TranslatedBody, ConvertError> {
    let mut body = finished_body(translator.inner())?;
    body.losses = translator.losses().clone();
    Ok(body)
}

/// A Messages body as a Messages backend would have streamed it: the `data`
/// of each event, `message_start` to `message_stop`.
pub fn body_events(body: &[u8]) -> Result<Vec<String>, ConvertError> {
    let whole = Whole::read(body).map_err(unreadable)?;
    let raw = |v: Option<&RawValue>| v.map_or("null", RawValue::get).to_owned();
    let usage = whole.usage.map_or("{}", RawValue::get);
    let mut events = Vec::with_capacity(whole.content.len() * 3 + 3);
    events.push(format!(
        r#"{{"type":"message_start","message":{{"id":{},"type":"message","role":"assistant","model":{},"content":[],"stop_reason":null,"stop_sequence":null,"usage":{usage}}}}}"#,
        raw(whole.id),
        raw(whole.model),
    ));
    for (index, block) in whole.content.iter().enumerate() {
        let value: serde_json::Value =
            serde_json::from_str(block.get()).map_err(|e| unreadable(e.to_string()))?;
        let kind = value
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or_default();
        let (start, deltas) = match kind {
            "text" => {
                let mut start = json!({"type": "text", "text": ""});
                // Kept for the reader, which reports them as lost.
                if let Some(citations) = value.get("citations") {
                    start["citations"] = citations.clone();
                }
                (
                    start,
                    vec![json!({"type": "text_delta", "text": value["text"]})],
                )
            }
            "thinking" => (
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": value["thinking"]}),
                    json!({"type": "signature_delta", "signature": value["signature"]}),
                ],
            ),
            "tool_use" => {
                let input = value.get("input").cloned().unwrap_or_else(|| json!({}));
                (
                    json!({"type": "tool_use", "id": value["id"], "name": value["name"], "input": {}}),
                    vec![json!({"type": "input_json_delta", "partial_json": input.to_string()})],
                )
            }
            _ => (value, Vec::new()),
        };
        events.push(
            json!({"type": "content_block_start", "index": index, "content_block": start})
                .to_string(),
        );
        for delta in deltas {
            events.push(
                json!({"type": "content_block_delta", "index": index, "delta": delta}).to_string(),
            );
        }
        events.push(json!({"type": "content_block_stop", "index": index}).to_string());
    }
    events.push(format!(
        r#"{{"type":"message_delta","delta":{{"stop_reason":{},"stop_sequence":{}}},"usage":{usage}}}"#,
        raw(whole.stop_reason),
        raw(whole.stop_sequence),
    ));
    events.push(r#"{"type":"message_stop"}"#.to_owned());
    Ok(events)
}
