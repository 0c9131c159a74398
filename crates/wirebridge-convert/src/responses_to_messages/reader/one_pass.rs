//! Reading a Messages stream's events: in one pass, serde only for what
//! the cursor gives up on.
//!
//! Nearly every event of a Messages stream is a text delta:
//!
//! ```json
//! {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}
//! ```
//!
//! These read the event and its block or delta with a [`JsonCursor`] in one
//! pass, into the same values serde would read: the delta read in place,
//! where serde kept its text raw for a second parse. Unknown keys are
//! stepped over, as serde's derive ignores them. On anything else (an
//! escaped key, a field twice, a float where a count goes, invalid JSON)
//! they give up, and serde parses the text as before, so errors stay
//! serde's.

use std::borrow::Cow;

use serde_json::value::RawValue;
use wirebridge_wire::cursor::{JsonCursor, SeenFields};

use super::event::{Event, Piece, Usage};

impl<'a> Event<'a> {
    /// Reads an event; an error for text that is no Messages event.
    pub(super) fn read(data: &'a str) -> Result<Self, String> {
        if let Some(event) = read_event(data) {
            return Ok(event);
        }
        serde_json::from_str(data)
            .map_err(|e| format!("the upstream sent an event that is not a Messages event: {e}"))
    }

    /// The event's `delta`, read (an empty one when it has none).
    pub(super) fn take_delta(&mut self) -> Result<Piece<'a>, String> {
        match self.read_delta.take() {
            Some(delta) => Ok(delta),
            None => parse_piece(self.delta),
        }
    }
}

/// Reads a block or delta kept raw: in one pass, else by serde, whose
/// error names what is wrong; an empty one for none.
pub(super) fn parse_piece(raw: Option<&RawValue>) -> Result<Piece<'_>, String> {
    match raw {
        Some(raw) => match read_piece_text(raw.get()) {
            Some(piece) => Ok(piece),
            None => serde_json::from_str(raw.get()).map_err(|e| {
                format!("the upstream sent a content block that is not readable: {e}")
            }),
        },
        None => Ok(Piece::default()),
    }
}

/// Reads an event, or `None` for serde to parse it.
pub(super) fn read_event(data: &str) -> Option<Event<'_>> {
    let mut kind = None;
    let mut event = Event {
        kind: Cow::Borrowed(""),
        index: None,
        message: None,
        content_block: None,
        delta: None,
        read_delta: None,
        usage: None,
        error: None,
    };
    let mut seen = SeenFields::default();
    let mut c = JsonCursor::new(data);
    c.object(|c, key| {
        match key {
            "type" => {
                seen.once(0)?;
                kind = Some(c.str()?.into_cow());
            }
            "index" => {
                seen.once(1)?;
                event.index = c.nullable(|c| c.u64()?.try_into().ok())?;
            }
            "message" => {
                seen.once(2)?;
                event.message = c.nullable(JsonCursor::raw)?;
            }
            "content_block" => {
                seen.once(3)?;
                event.content_block = c.nullable(JsonCursor::raw)?;
            }
            "delta" => {
                seen.once(4)?;
                event.read_delta = c.nullable(read_piece)?;
            }
            "usage" => {
                seen.once(5)?;
                event.usage = c.nullable(read_usage)?;
            }
            "error" => {
                seen.once(6)?;
                event.error = c.nullable(JsonCursor::raw)?;
            }
            _ => c.skip_value()?,
        }
        Some(())
    })?;
    c.end()?;
    // serde requires `type`.
    event.kind = kind?;
    Some(event)
}

/// Reads a whole block or delta, or `None` for serde to parse it.
pub(super) fn read_piece_text(text: &str) -> Option<Piece<'_>> {
    let mut c = JsonCursor::new(text);
    let piece = read_piece(&mut c)?;
    c.end()?;
    Some(piece)
}

fn read_piece<'a>(c: &mut JsonCursor<'a>) -> Option<Piece<'a>> {
    let mut piece = Piece::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| {
        match key {
            "type" => {
                seen.once(0)?;
                piece.kind = c.str()?.into_cow();
            }
            "text" => {
                seen.once(1)?;
                piece.text = c.nullable(JsonCursor::raw)?;
            }
            "thinking" => {
                seen.once(2)?;
                piece.thinking = c.nullable(JsonCursor::raw)?;
            }
            "signature" => {
                seen.once(3)?;
                piece.signature = c.nullable(JsonCursor::raw)?;
            }
            "data" => {
                seen.once(4)?;
                piece.data = c.nullable(JsonCursor::raw)?;
            }
            "id" => {
                seen.once(5)?;
                piece.id = c.nullable(JsonCursor::str)?.map(|s| s.into_cow());
            }
            "name" => {
                seen.once(6)?;
                piece.name = c.nullable(JsonCursor::str)?.map(|s| s.into_cow());
            }
            "input" => {
                seen.once(7)?;
                piece.input = c.nullable(JsonCursor::raw)?;
            }
            "partial_json" => {
                seen.once(8)?;
                piece.partial_json = c.nullable(JsonCursor::raw)?;
            }
            "stop_reason" => {
                seen.once(9)?;
                piece.stop_reason = c.nullable(JsonCursor::str)?.map(|s| s.into_cow());
            }
            "citations" => {
                seen.once(10)?;
                piece.citations = c.nullable(JsonCursor::raw)?;
            }
            _ => c.skip_value()?,
        }
        Some(())
    })?;
    Some(piece)
}

fn read_usage(c: &mut JsonCursor<'_>) -> Option<Usage> {
    let mut usage = Usage::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| {
        let (bit, count) = match key {
            "input_tokens" => (0, &mut usage.input_tokens),
            "output_tokens" => (1, &mut usage.output_tokens),
            "cache_creation_input_tokens" => (2, &mut usage.cache_creation_input_tokens),
            "cache_read_input_tokens" => (3, &mut usage.cache_read_input_tokens),
            _ => return c.skip_value(),
        };
        seen.once(bit)?;
        *count = c.nullable(JsonCursor::u64)?;
        Some(())
    })?;
    Some(usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;
    use wirebridge_testkit::mutate::compare_edited;

    const TEXT_DELTA: &str = r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel\"lo\n"}}"#;

    /// Every event of a stream, as Anthropic documents them: each kind of
    /// block opened and filled, the reply's end, a ping and an error.
    const EVENTS: &[&str] = &[
        r#"{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        TEXT_DELTA,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x"}}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"I need to \u00e9"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"redacted_thinking","data":"EmwKAhgB"}}"#,
        r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}}"#,
        r#"{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89,"cache_read_input_tokens":null,"server_tool_use":{"web_search_requests":0}}}"#,
        r#"{"type":"message_stop"}"#,
        r#"{"type":"pin\u0067"}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        r#" { "type" : "content_block_delta" , "index" : null , "delta" : null , "extra" : [ 1 , { } ] } "#,
        r#"{"type":"content_block_delta","delta":{"text":"no type"},"usage":null,"message":null}"#,
    ];

    /// What the reader reads from an event and its delta, however they
    /// were parsed.
    fn digest(event: &Event<'_>, delta: Option<Piece<'_>>) -> String {
        let raw = |r: Option<&RawValue>| r.map(RawValue::get).map(str::to_owned);
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?}",
            event.kind,
            event.index,
            raw(event.message),
            raw(event.content_block),
            event.usage,
            raw(event.error),
            delta,
        )
    }

    fn fast(data: &str) -> Option<String> {
        let mut event = read_event(data)?;
        let delta = event.read_delta.take();
        Some(digest(&event, delta))
    }

    /// serde alone, the delta included: a delta it cannot read is no
    /// reading at all.
    fn serde(data: &str) -> Option<String> {
        let event = serde_json::from_str::<Event<'_>>(data).ok()?;
        let delta = match event.delta {
            Some(raw) => Some(serde_json::from_str::<Piece<'_>>(raw.get()).ok()?),
            None => None,
        };
        Some(digest(&event, delta))
    }

    #[test]
    fn reads_what_serde_reads() {
        for data in EVENTS {
            assert!(read_event(data).is_some(), "{data}");
            assert_eq!(fast(data), serde(data), "{data}");
        }
        // A block read alone (a body's, or an event's `content_block`).
        for data in EVENTS {
            let event = read_event(data).expect("read above");
            if let Some(block) = event.content_block {
                let alone = read_piece_text(block.get()).map(|p| format!("{p:?}"));
                let by_serde = serde_json::from_str::<Piece<'_>>(block.get()).ok();
                assert_eq!(alone, by_serde.map(|p| format!("{p:?}")), "{data}");
            }
        }
    }

    #[test]
    fn leaves_other_shapes_to_serde() {
        for data in [
            r#"{"index":0}"#,
            r#"{"typ\u0065":"ping"}"#,
            r#"{"type":"ping","type":"ping"}"#,
            r#"{"type":"content_block_delta","index":-1}"#,
            r#"{"type":"content_block_delta","index":1.0}"#,
            r#"{"type":"content_block_delta","delta":{"type":"text_delta","type":"x"}}"#,
            r#"{"type":"message_delta","usage":{"output_tokens":"9"}}"#,
            r#"{"type":"ping"} ,"#,
            r#"{"type":null}"#,
        ] {
            assert!(read_event(data).is_none(), "{data}");
        }
    }

    #[test]
    fn mutated_events_read_alike() {
        let alphabet = b"{}[]\":,\\ 019.e-nultrsax\x01";
        let compared = compare_edited(EVENTS, alphabet, 0x9e37_79b9_7f4a_7c15, 30_000, fast, serde);
        // Most mutations keep the shape: thousands of events are compared.
        assert!(compared > 5_000, "{compared}");
    }
}
