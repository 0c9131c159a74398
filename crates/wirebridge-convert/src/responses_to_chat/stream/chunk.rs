//! Reading the chunks of a stream in steady state without serde.
//!
//! Nearly every chunk of a Chat stream is one choice's text fragment:
//!
//! ```json
//! {"id":"chatcmpl-…","object":"chat.completion.chunk","created":1770933892,
//!  "model":"gpt-4.1-nano","service_tier":"default","system_fingerprint":"fp_…",
//!  "choices":[{"index":0,"delta":{"content":"Holiday"},"logprobs":null,
//!  "finish_reason":null}],"usage":null,"obfuscation":"dTh"}
//! ```
//!
//! Parsing that into [`ChatCompletion`] walks every field into structs of
//! several hundred bytes, which are then moved about; most of the time of
//! a chunk went there. [`read_chunk`] reads such chunks with a
//! [`JsonCursor`] instead, picking out the fields the translator uses and
//! stepping over the others, into a [`Choice`] built in place.
//!
//! It reads only what serde would read into the same values, and gives up
//! on everything else (logprobs, tool calls, usage, escaped names, several
//! choices, anything unusual): the translator then parses the chunk with
//! serde as before.

use serde_json::value::RawValue;
#[cfg(doc)]
use wirebridge_wire::chat::lenient::ChatCompletion;
use wirebridge_wire::chat::lenient::{Choice, ChoiceMessage};
use wirebridge_wire::raw::JsonStr;

use wirebridge_wire::cursor::{JsonCursor, SeenFields};

/// What a chunk read by [`read_chunk`] holds.
#[derive(Debug, Default)]
pub(super) struct Chunk<'a> {
    /// `created`, as [`ChatCompletion::created`].
    pub(super) created: Option<u64>,
    /// `model`.
    pub(super) model: Option<&'a str>,
    /// The only choice, if `choices` held one.
    pub(super) choice: Option<Choice<'a>>,
}

/// Reads a chunk of the common shape, or `None` for serde to parse it.
pub(super) fn read_chunk(data: &str) -> Option<Chunk<'_>> {
    let mut chunk = Chunk::default();
    let mut seen = SeenFields::default();
    let mut cursor = JsonCursor::new(data);
    cursor.object(|c, key| match key {
        "id" => {
            seen.once(0)?;
            c.nullable(JsonCursor::plain_str).map(drop)
        }
        "created" => {
            seen.once(1)?;
            chunk.created = c.nullable(JsonCursor::u64)?;
            Some(())
        }
        "model" => {
            seen.once(2)?;
            chunk.model = c.nullable(JsonCursor::plain_str)?;
            Some(())
        }
        "choices" => {
            seen.once(3)?;
            if !c.null()? {
                c.array(|c| match chunk.choice {
                    // A second choice: rare, and serde's to read.
                    Some(_) => None,
                    None => {
                        chunk.choice = Some(read_choice(c)?);
                        Some(())
                    }
                })?;
            }
            Some(())
        }
        // Usage comes once, at the end; an error is a failure.
        "usage" | "error" => {
            seen.once(if key == "usage" { 4 } else { 5 })?;
            c.null()?.then_some(())
        }
        _ => c.skip_scalar(),
    })?;
    cursor.end()?;
    Some(chunk)
}

fn read_choice<'a>(c: &mut JsonCursor<'a>) -> Option<Choice<'a>> {
    let mut choice = Choice::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "index" => {
            seen.once(0)?;
            choice.index = c.nullable(|c| c.u64()?.try_into().ok())?;
            Some(())
        }
        "delta" => {
            seen.once(1)?;
            if !c.null()? {
                choice.delta = Some(read_delta(c)?);
            }
            Some(())
        }
        "finish_reason" => {
            seen.once(2)?;
            choice.finish_reason = c.nullable(JsonCursor::plain_str)?.map(Into::into);
            Some(())
        }
        "logprobs" | "message" => {
            seen.once(if key == "logprobs" { 3 } else { 4 })?;
            c.null()?.then_some(())
        }
        _ => c.skip_scalar(),
    })?;
    Some(choice)
}

fn read_delta<'a>(c: &mut JsonCursor<'a>) -> Option<ChoiceMessage<'a>> {
    let mut delta = ChoiceMessage::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "role" => {
            seen.once(0)?;
            delta.role = c.nullable(JsonCursor::plain_str)?.map(Into::into);
            Some(())
        }
        "content" => {
            seen.once(1)?;
            delta.content = c.nullable(raw_str)?;
            Some(())
        }
        "refusal" => {
            seen.once(2)?;
            delta.refusal = c.nullable(JsonCursor::json_str)?;
            Some(())
        }
        "reasoning_content" => {
            seen.once(3)?;
            delta.reasoning_content = c.nullable(JsonCursor::json_str)?;
            Some(())
        }
        "reasoning" => {
            seen.once(4)?;
            delta.reasoning = c.nullable(raw_str)?;
            Some(())
        }
        "tool_calls" | "function_call" | "annotations" => {
            let bit = match key {
                "tool_calls" => 5,
                "function_call" => 6,
                _ => 7,
            };
            seen.once(bit)?;
            c.null()?.then_some(())
        }
        _ => c.skip_scalar(),
    })?;
    Some(delta)
}

/// A string, as serde_json's raw value of it.
fn raw_str<'a>(c: &mut JsonCursor<'a>) -> Option<&'a RawValue> {
    c.json_str().map(JsonStr::raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebridge_testkit::mutate::compare_edited;
    use wirebridge_wire::chat::lenient::ChatCompletion;

    const CHUNK: &str = r#"{"id":"chatcmpl-D8Z5","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-nano","service_tier":"default","system_fingerprint":"fp_de604bd877","choices":[{"index":0,"delta":{"content":"Holiday"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"dTh"}"#;

    /// What the translator reads from a chunk, however it was parsed.
    fn digest(created: Option<u64>, model: Option<&str>, choices: &[&Choice<'_>]) -> String {
        let mut text = format!("{created:?} {model:?}");
        for choice in choices {
            let delta = choice.delta.as_ref();
            text += &format!(
                " | {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {} {}",
                choice.index,
                choice.finish_reason.as_deref(),
                delta.map(|d| d.role.as_deref()),
                delta.map(|d| d.content.map(RawValue::get)),
                delta.map(|d| d.refusal),
                delta.map(|d| d.reasoning_content),
                delta.map(|d| d.reasoning.map(RawValue::get)),
                delta.map(|d| d.annotations.map(RawValue::get)),
                delta.is_some_and(|d| d.tool_calls.is_some() || d.function_call.is_some()),
                choice.logprobs.is_some(),
                choice.message.is_some(),
            );
        }
        text
    }

    fn fast(data: &str) -> Option<String> {
        let chunk = read_chunk(data)?;
        let choices: Vec<_> = chunk.choice.iter().collect();
        Some(digest(chunk.created, chunk.model, &choices))
    }

    fn serde(data: &str) -> Option<String> {
        let chunk: ChatCompletion<'_> = serde_json::from_str(data).ok()?;
        if chunk.usage.is_some() || chunk.error.is_some() {
            return Some("usage or error".into());
        }
        let choices: Vec<_> = chunk.choices.iter().flatten().collect();
        Some(digest(chunk.created, chunk.model.as_deref(), &choices))
    }

    #[test]
    fn reads_content_chunks() {
        let read = read_chunk(CHUNK).expect("the common shape");
        assert_eq!(read.created, Some(1_770_933_892));
        assert_eq!(read.model, Some("gpt-4.1-nano"));
        let choice = read.choice.expect("one choice");
        let content = choice.delta.and_then(|d| d.content).map(RawValue::get);
        assert_eq!(content, Some(r#""Holiday""#));
        assert_eq!(fast(CHUNK), serde(CHUNK));
    }

    #[test]
    fn leaves_other_shapes_to_serde() {
        for data in [
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{}},{"index":1,"delta":{}}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1}}"#,
            r#"{"error":{"message":"boom"}}"#,
            r#"{"model":"a\u00e9","choices":[]}"#,
            r#"{"created":1.0,"choices":[]}"#,
            r#"{"choices":[{"logprobs":{"content":[]}}]}"#,
            r#"{"choices":[],"choices":[]}"#,
            r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#,
            r#"{"choices":[{"index":4294967296}]}"#,
        ] {
            assert!(read_chunk(data).is_none(), "{data}");
        }
    }

    #[test]
    fn reads_what_serde_reads() {
        for data in [
            CHUNK,
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#,
            r#"{"choices":[{"delta":{"reasoning_content":"hm\n\"","content":null,"tool_calls":null}}]}"#,
            r#"{"choices":[{"delta":{"reasoning":"r","annotations":null,"extra":1.5e3}}]}"#,
            r#"{"id":null,"created":null,"model":null,"choices":null}"#,
            r#" { "choices" : [ { "index" : 0 , "delta" : { "content" : "a\u00e9\\" } } ] } "#,
            r#"{"choices":[]}"#,
            "{}",
        ] {
            assert!(read_chunk(data).is_some(), "{data}");
            assert_eq!(fast(data), serde(data), "{data}");
        }
    }

    #[test]
    fn mutated_chunks_read_alike() {
        let alphabet = b"{}[]\":,\\ 019.e-nultrsa\x01";
        let compared = compare_edited(
            &[CHUNK],
            alphabet,
            0x2545_f491_4f6c_dd1d,
            30_000,
            fast,
            serde,
        );
        // Most mutations keep the shape (they change text): the test
        // compares thousands of chunks, not a handful.
        assert!(compared > 5_000, "{compared}");
    }
}
