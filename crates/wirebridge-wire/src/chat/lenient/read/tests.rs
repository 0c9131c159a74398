//! The completion reader against serde: whatever it reads, serde reads the
//! same.

use wirebridge_testkit::fixtures::{chat_bodies, chat_streams};
use wirebridge_testkit::mutate::{edit, mutate, Rng};

use super::check::read_as_serde;
use crate::chat::lenient::ChatCompletion;

/// Every field the reader reads, with escapes, nulls and whitespace, and
/// fields it steps over.
const EVERY_FIELD: &str = r#"{"id":"chatcmpl-\u0031","object":"chat.completion","created":1770933892,
 "model":"gpt-4.1","system_fingerprint":null,"service_tier":"default",
 "choices":[{"index":0,"message":{"role":"assistant","content":"caf\u00e9 \"q\"\n",
   "refusal":null,"reasoning_content":"think \ud83d\ude00","reasoning":{"text":"r"},
   "tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"cmd\":[\"ls\"]}"}},
    {"id":"call_2","type":"custom","custom":{"name":"apply_patch","input":"*** Begin\n"}},
    {"id":"call_3","function":{"name":"obj","arguments":{"a":[1,2.5e-3,true,null]}}}],
   "function_call":{"name":"legacy","arguments":"{}"},"annotations":[{"type":"url_citation"}],
   "audio":null,"extra":{"deep":[[{}]]}},
  "logprobs":{"content":[{"token":"a","logprob":-0.5}],"refusal":null},"finish_reason":"tool_calls"},
  {"index":1,"delta":{"content":[{"type":"text","text":"part"}]},"finish_reason":null,"logprobs":null}],
 "usage":{"prompt_tokens":167,"completion_tokens":6,"total_tokens":173,"reasoning_tokens":2,
  "prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":12,"audio_tokens":0},
  "completion_tokens_details":{"reasoning_tokens":0,"accepted_prediction_tokens":0}},
 "error":null, "zzz":[1,{"a":"b"}]}"#;

fn check(body: &[u8]) -> Option<String> {
    read_as_serde(body)
}

#[test]
fn reads_every_field_as_serde_does() {
    let read = check(EVERY_FIELD.as_bytes()).expect("the reader reads it");
    // The values are there, not only equal to serde's.
    for expected in [
        "call_2",
        "apply_patch",
        "cache_write_tokens: Some(12)",
        "reasoning_tokens: Some(2)",
        "url_citation",
        r#"content: Some(RawValue([{"type":"text","text":"part"}]))"#,
    ] {
        assert!(read.contains(expected), "{expected} missing from {read}");
    }
}

#[test]
fn reads_recorded_bodies_and_chunks_as_serde_does() {
    let bodies = chat_bodies();
    assert!(bodies.len() >= 6, "{} bodies", bodies.len());
    for (name, body) in &bodies {
        assert!(check(body).is_some(), "{name}: left to serde");
    }
    let mut chunks = 0;
    for stream in chat_streams() {
        for frame in stream.frames() {
            if frame.data != "[DONE]" {
                assert!(
                    check(frame.data.as_bytes()).is_some(),
                    "{}: {}",
                    stream.name,
                    frame.data
                );
                chunks += 1;
            }
        }
    }
    assert!(chunks > 1_000, "{chunks} chunks");
}

#[test]
fn leaves_to_serde_what_serde_might_read_otherwise() {
    for body in [
        r#"{"created":1.0}"#,
        r#"{"created":-1}"#,
        r#"{"usage":{"prompt_tokens":2.5}}"#,
        r#"{"id":"a","id":"b"}"#,
        r#"{"choices":[{"message":{"content":"a","content":"b"}}]}"#,
        r#"{"\u0069d":"a"}"#,
        r#"{"choices":[{"index":4294967296}]}"#,
        r#"{"choices":[{"message":{"role":5}}]}"#,
        r#"{"choices":[{"message":{"refusal":{}}}]}"#,
        r#"{"choices":{}}"#,
        r#"{"model":"\ud800"}"#,
        r#"{"model":"a"} x"#,
        r#"{"model":"a""#,
        "[]",
        "\u{feff}{}",
    ] {
        assert!(
            ChatCompletion::read(body.as_bytes()).is_none(),
            "read: {body}"
        );
    }
}

#[test]
fn mutated_bodies_read_alike() {
    let seeds: Vec<Vec<u8>> = std::iter::once(EVERY_FIELD.as_bytes().to_vec())
        .chain(chat_bodies().into_iter().map(|(_, body)| body))
        .collect();
    let alphabet = b"{}[]\":,\\ 019.e-nultrsaxu\x01";
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15_u64);
    let (mut read, mut tried) = (0, 0);
    for round in 0..40_000 {
        let seed = &seeds[round % seeds.len()];
        let bytes = match round % 2 {
            0 => edit(seed, alphabet, 1 + rng.below(2), &mut rng),
            _ => mutate(seed, &mut rng),
        };
        tried += 1;
        if check(&bytes).is_some() {
            read += 1;
        }
    }
    // Most edits change text, not shape: the test compares thousands of
    // bodies read both ways, not a handful.
    assert!(read > tried / 5, "{read} of {tried} read");
}
