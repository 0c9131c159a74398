//! The body reader against serde: whatever it reads, serde reads the same.

use serde_json::value::RawValue;
use wirebridge_testkit::fixtures::{responses_bodies, responses_streams};
use wirebridge_testkit::mutate::compare_edited;

use super::check::body_as_serde;
use crate::responses::lenient::ResponseBody;

/// Every field the reader reads, with escapes, nulls and whitespace, and
/// fields it steps over.
const EVERY_FIELD: &str = r#"{"id":"resp_\u0031","object":"response","created_at":1770933892,
 "model":"gpt-5", "status":"incomplete","background":false,"error":null,
 "incomplete_details":{"reason":"max_output_tokens","extra":[1]},
 "output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"th\u00e9"}],
   "encrypted_content":"gAAA\/b=="},
  {"type":"message","id":"msg_1","status":"completed","role":"assistant",
   "content":[{"type":"output_text","text":"caf\u00e9 \"q\"\n","annotations":[],"logprobs":[]}]},
  {"type":"function_call","id":"fc_1","call_id":"call_1","name":"shell","namespace":null,
   "arguments":"{\"cmd\":[\"ls\"]}","status":"completed"},
  {"type":"custom_tool_call","call_id":"call_2","name":"apply_patch","input":"*** Begin\n"},
  {"type":"web_search_call","id":"ws","status":"completed","action":{"type":"search","query":"q"}}],
 "parallel_tool_calls":true,"tools":[{"type":"function","name":"shell","parameters":{"type":"object"}}],
 "usage":{"input_tokens":167,"output_tokens":6,"total_tokens":173,
  "input_tokens_details":{"cached_tokens":128,"cache_write_tokens":12},
  "output_tokens_details":{"reasoning_tokens":2}},
 "metadata":{}, "zzz":[1,{"a":"b"}]}"#;

#[test]
fn reads_every_field_as_serde_does() {
    let read = body_as_serde(EVERY_FIELD.as_bytes()).expect("the reader reads it");
    // The values are there, not only equal to serde's.
    for expected in [
        "resp_1",
        "max_output_tokens",
        "apply_patch",
        r#"gAAA\/b=="#,
        "cached_tokens: Some(128)",
        "cache_write_tokens: Some(12)",
        "reasoning_tokens: Some(2)",
        r#"{\"cmd\":[\"ls\"]}"#,
        "summary_text",
    ] {
        assert!(read.contains(expected), "{expected} missing from {read}");
    }
}

#[test]
fn reads_recorded_bodies_and_final_responses_as_serde_does() {
    let bodies = responses_bodies();
    assert!(bodies.len() >= 4, "{} bodies", bodies.len());
    for (name, body) in &bodies {
        assert!(body_as_serde(body).is_some(), "{name}: left to serde");
    }
    // The response each stream's lifecycle events carry, its last one whole.
    let mut responses = 0;
    for stream in responses_streams() {
        for frame in stream.frames() {
            let Ok(event) = serde_json::from_str::<Event<'_>>(&frame.data) else {
                continue;
            };
            if let Some(response) = event.response {
                let name = &stream.name;
                assert!(body_as_serde(response.get().as_bytes()).is_some(), "{name}");
                responses += 1;
            }
        }
    }
    assert!(responses >= 40, "{responses} responses");
}

/// The one field of an event these tests look at.
#[derive(serde::Deserialize)]
struct Event<'a> {
    #[serde(borrow)]
    response: Option<&'a RawValue>,
}

#[test]
fn leaves_to_serde_what_serde_might_read_otherwise() {
    for body in [
        r#"{"created_at":1.0}"#,
        r#"{"created_at":-1}"#,
        r#"{"usage":{"input_tokens":2.5}}"#,
        r#"{"id":"a","id":"b"}"#,
        r#"{"output":[{"type":"message","type":"reasoning"}]}"#,
        r#"{"\u0069d":"a"}"#,
        r#"{"output":[{"name":5}]}"#,
        r#"{"output":[{"input":{}}]}"#,
        r#"{"output":{}}"#,
        r#"{"model":"\ud800"}"#,
        r#"{"model":"a"} x"#,
        r#"{"model":"a""#,
        "[]",
        "\u{feff}{}",
    ] {
        assert!(
            ResponseBody::read(body.as_bytes()).is_none(),
            "read: {body}"
        );
    }
}

#[test]
fn edited_bodies_read_alike() {
    let bodies = responses_bodies();
    let documents: Vec<&str> = std::iter::once(EVERY_FIELD)
        .chain(
            bodies
                .iter()
                .filter_map(|(_, b)| std::str::from_utf8(b).ok()),
        )
        .collect();
    let alphabet = b"{}[]\":,\\ 019.e-nultrsaxu\x01";
    let serde = |text: &str| {
        Some(
            serde_json::from_str::<ResponseBody<'_>>(text)
                .map(|r| format!("{r:?}"))
                .unwrap_or_else(|e| format!("serde refuses it: {e}")),
        )
    };
    let fast = |text: &str| ResponseBody::read(text.as_bytes()).map(|r| format!("{r:?}"));
    let compared = compare_edited(
        &documents,
        alphabet,
        0x51_7cc1_b727_220a,
        30_000,
        fast,
        serde,
    );
    // Most edits change text, not shape: thousands of bodies are compared
    // both ways, not a handful.
    assert!(compared > 30_000 / 5, "{compared} of 30000 compared");
}
