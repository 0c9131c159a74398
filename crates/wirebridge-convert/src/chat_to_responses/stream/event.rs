//! Reading the events of a stream in steady state without serde.
//!
//! Nearly every event of a Responses stream is a text delta:
//!
//! ```json
//! {"type":"response.output_text.delta","content_index":0,"delta":"quer",
//!  "item_id":"msg_…","logprobs":[],"obfuscation":"7C72BNdD2RHQ",
//!  "output_index":1,"sequence_number":1280}
//! ```
//!
//! [`read_event`] reads such events with a [`JsonCursor`] into a
//! [`StreamEvent`] built in place, rather than having serde walk every
//! field into it. It reads only what serde would read into the same
//! values, and gives up on everything else (items, responses, errors,
//! logprobs, escaped names, anything unusual): the translator then parses
//! the event with serde as before.

use wirebridge_wire::responses::lenient::StreamEvent;

use wirebridge_wire::cursor::{JsonCursor, SeenFields};
use wirebridge_wire::JsonStr;

/// Reads an event of the common shape, or `None` for serde to parse it.
pub(crate) fn read_event(data: &str) -> Option<StreamEvent<'_>> {
    let mut event = StreamEvent::default();
    let mut seen = SeenFields::default();
    let index = |c: &mut JsonCursor<'_>| c.nullable(|c| c.u64()?.try_into().ok());
    let mut cursor = JsonCursor::new(data);
    cursor.object(|c, key| {
        match key {
            "type" => {
                seen.once(0)?;
                event.kind = c.nullable(JsonCursor::plain_str)?.map(Into::into);
            }
            "sequence_number" => {
                seen.once(1)?;
                event.sequence_number = c.nullable(JsonCursor::u64)?;
            }
            "output_index" => {
                seen.once(2)?;
                event.output_index = index(c)?;
            }
            "content_index" => {
                seen.once(3)?;
                event.content_index = index(c)?;
            }
            "summary_index" => {
                seen.once(4)?;
                event.summary_index = index(c)?;
            }
            "item_id" => {
                seen.once(5)?;
                event.item_id = c.nullable(JsonCursor::plain_str)?.map(Into::into);
            }
            "delta" => {
                seen.once(6)?;
                event.delta = c.nullable(|c| c.json_str().map(JsonStr::raw))?;
            }
            "logprobs" => {
                seen.once(7)?;
                // An empty array, as every delta has unless logprobs were
                // asked for.
                event.logprobs = c.nullable(JsonCursor::empty_array)?;
            }
            // The other fields of an event: serde's to read.
            "response" | "item" | "text" | "refusal" | "arguments" | "name" | "input"
            | "annotation" | "error" | "message" | "code" | "param" => return None,
            _ => c.skip_scalar()?,
        }
        Some(())
    })?;
    cursor.end()?;
    Some(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;
    use wirebridge_testkit::mutate::compare_edited;

    const DELTA: &str = r#"{"type":"response.output_text.delta","content_index":0,"delta":"quer","item_id":"msg_0842a5a14f2f9e5c","logprobs":[],"obfuscation":"7C72BNdD2RHQ","output_index":1,"sequence_number":1280}"#;

    /// What the translator reads from an event, however it was parsed.
    fn digest(e: &StreamEvent<'_>) -> String {
        let others = [e.response, e.arguments, e.annotation, e.error, e.code]
            .iter()
            .any(Option::is_some)
            || e.item.is_some()
            || [e.text, e.refusal, e.input].iter().any(Option::is_some)
            || e.name.is_some()
            || e.message.is_some()
            || e.param.is_some();
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {others}",
            e.kind.as_deref(),
            e.sequence_number,
            e.output_index,
            e.content_index,
            e.summary_index,
            e.item_id.as_deref(),
            e.delta.map(RawValue::get),
            e.logprobs.map(RawValue::get),
        )
    }

    fn fast(data: &str) -> Option<String> {
        read_event(data).as_ref().map(digest)
    }

    fn serde(data: &str) -> Option<String> {
        serde_json::from_str::<StreamEvent<'_>>(data)
            .ok()
            .as_ref()
            .map(digest)
    }

    #[test]
    fn reads_what_serde_reads() {
        for data in [
            DELTA,
            r#"{"type":"response.reasoning_summary_text.delta","summary_index":2,"delta":"a\n\u00e9","output_index":0}"#,
            r#"{"type":null,"delta":null,"logprobs":null,"item_id":null,"output_index":null}"#,
            r#" { "type" : "x" , "logprobs" : [ ] , "extra" : -1.5e-3 } "#,
            "{}",
        ] {
            assert!(read_event(data).is_some(), "{data}");
            assert_eq!(fast(data), serde(data), "{data}");
        }
    }

    #[test]
    fn leaves_other_shapes_to_serde() {
        for data in [
            r#"{"type":"response.created","response":{"id":"r"}}"#,
            r#"{"type":"response.output_item.added","item":{"type":"message"}}"#,
            r#"{"type":"response.output_text.delta","delta":"a","logprobs":[{"token":"a"}]}"#,
            r#"{"type":"error","message":"boom"}"#,
            r#"{"type":"response.output_text.delta","delta":{"a":1}}"#,
            r#"{"type":"a\u0062"}"#,
            r#"{"type":"a","type":"b"}"#,
            r#"{"output_index":-1}"#,
            r#"{"type":"a"} ,"#,
        ] {
            assert!(read_event(data).is_none(), "{data}");
        }
    }

    #[test]
    fn mutated_events_read_alike() {
        let alphabet = b"{}[]\":,\\ 019.e-nultrsa\x01";
        let compared = compare_edited(
            &[DELTA],
            alphabet,
            0x2545_f491_4f6c_dd1d,
            30_000,
            fast,
            serde,
        );
        // Most mutations keep the shape: thousands of events are compared.
        assert!(compared > 5_000, "{compared}");
    }
}
