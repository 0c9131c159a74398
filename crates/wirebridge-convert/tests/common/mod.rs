//! Helpers shared by the integration tests.
#![allow(dead_code)]

use serde_json::Value;
use wirebridge_convert::responses_to_chat::{ResponsesContext, StreamTranslator};
use wirebridge_convert::{Frames, SseTranslator, StreamTranslate};
use wirebridge_testkit::split_random;

/// Drives `translator` over upstream SSE bytes received in pieces split at
/// pseudo-random boundaries, through [`SseTranslator`]: the same decoder,
/// error handling and end of stream as the tower body.
pub fn drive<T: StreamTranslate>(translator: T, upstream: &[u8], seed: u64) -> (Vec<u8>, T) {
    let mut stream = SseTranslator::new(translator);
    let mut out = Frames::sse();
    for piece in split_random(upstream, seed) {
        stream.feed(&piece, &mut out);
    }
    stream.finish(&mut out);
    (out.take().bytes, stream.into_translator())
}

/// A Chat upstream's stream, through the Chat → Responses translator.
pub fn translate_stream(
    upstream: &[u8],
    ctx: ResponsesContext,
    seed: u64,
) -> (Vec<u8>, StreamTranslator) {
    drive(StreamTranslator::new(ctx), upstream, seed)
}

/// Event payloads framed as an upstream sends them: each named by its
/// `type` when it has one (Responses), nameless otherwise (Chat).
pub fn sse(events: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for data in events {
        let kind = serde_json::from_str::<Value>(data)
            .ok()
            .and_then(|v| v.get("type")?.as_str().map(str::to_owned));
        wirebridge_sse::encode_event(&mut out, kind.as_deref(), data);
    }
    out
}

/// Replaces what differs between runs (generated ids, completion times) so
/// outputs compare equal and golden files stay stable.
pub fn redact(value: &mut Value, stem_holder: &str) {
    let stem = stem_holder.trim_start_matches("resp_").to_owned();
    redact_inner(value, &stem);
}

fn redact_inner(value: &mut Value, stem: &str) {
    match value {
        Value::String(s) if !stem.is_empty() && s.contains(stem) => *s = s.replace(stem, "<id>"),
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "completed_at" && v.is_number() {
                    *v = Value::from(1);
                } else {
                    redact_inner(v, stem);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_inner(v, stem)),
        _ => {}
    }
}

/// A request or reply from `tests/inputs/`.
pub fn input(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/inputs")
            .join(name),
    )
    .unwrap()
}

/// Compares `actual` with the golden file `tests/golden/NAME`, or writes it
/// when `UPDATE_GOLDEN=1`. Goldens are committed and reviewed by eye.
pub fn assert_golden(name: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing golden file {}; run with UPDATE_GOLDEN=1 and review it",
            path.display()
        )
    });
    if expected != actual {
        let first_diff = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from its golden file at line {}:\n  golden: {}\n  actual: {}\n(run with UPDATE_GOLDEN=1 to accept, then review the diff)",
            first_diff + 1,
            expected.lines().nth(first_diff).unwrap_or("<end>"),
            actual.lines().nth(first_diff).unwrap_or("<end>"),
        );
    }
}

/// Translated SSE bytes as redacted frames, one `event:`/`data:` pair each,
/// for golden files.
pub fn redacted_sse(bytes: &[u8], response_id: &str) -> String {
    let mut out = String::new();
    for frame in wirebridge_testkit::parse_sse(bytes) {
        let mut value: Value = serde_json::from_str(&frame.data).expect("emitted frames are JSON");
        redact(&mut value, response_id);
        if let Some(event) = &frame.event {
            out.push_str("event: ");
            out.push_str(event);
            out.push('\n');
        }
        out.push_str("data: ");
        out.push_str(&serde_json::to_string(&value).unwrap());
        out.push_str("\n\n");
    }
    out
}
