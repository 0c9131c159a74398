//! Shared pieces of the fuzz targets in `fuzz_targets/`.
//!
//! A stream target's input is two header bytes followed by the stream:
//!
//! ```text
//! [split] [options] stream bytes…
//! ```
//!
//! `split` chooses where the stream is cut into the pieces it is fed in
//! ([`pieces`]), so the fuzzer controls the split points of every input it
//! keeps and a finding replays with the same cuts. `options` is read by
//! each target for itself (context settings, an event size limit). Seeds
//! are recorded streams behind a header (`fuzz/seed.py`).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod stateful;

use serde::de::IgnoredAny;
use wirebridge_convert::{ConvertError, Frames, SseTranslator, StreamTranslate};
use wirebridge_testkit::{parse_sse, split_points, SseFrame, Violation};

/// An input cut into its header bytes and the stream they describe.
#[derive(Debug, Clone, Copy)]
pub struct StreamInput<'a> {
    /// Chooses the split points (see [`pieces`]).
    pub split: u8,
    /// Target-specific settings.
    pub options: u8,
    /// The bytes an upstream sends.
    pub stream: &'a [u8],
}

impl<'a> StreamInput<'a> {
    /// Reads the header; an input shorter than the header is all stream,
    /// with both header bytes zero.
    pub fn parse(data: &'a [u8]) -> Self {
        match data {
            [split, options, stream @ ..] => StreamInput {
                split: *split,
                options: *options,
                stream,
            },
            stream => StreamInput {
                split: 0,
                options: 0,
                stream,
            },
        }
    }

    /// The stream cut into the pieces it is fed in.
    pub fn pieces(&self) -> Vec<&'a [u8]> {
        pieces(self.stream, self.split)
    }
}

/// `stream` cut into non-empty pieces that concatenate to it: in one piece
/// when `split` is 0, one byte at a time when it is 1 (every boundary at
/// once), else at the test kit's pseudo-random points seeded by `split`
/// (mostly one to sixteen bytes, sometimes kilobytes).
pub fn pieces(stream: &[u8], split: u8) -> Vec<&[u8]> {
    match split {
        _ if stream.is_empty() => Vec::new(),
        0 => vec![stream],
        1 => stream.chunks(1).collect(),
        seed => {
            let mut out = Vec::new();
            let mut start = 0;
            for point in split_points(stream.len(), u64::from(seed)) {
                out.push(&stream[start..point]);
                start = point;
            }
            out.push(&stream[start..]);
            // Fuzz builds keep debug assertions: a cut that lost or repeated
            // bytes would report bugs the translators do not have.
            debug_assert!(out.iter().all(|p| !p.is_empty()));
            debug_assert_eq!(out.iter().map(|p| p.len()).sum::<usize>(), stream.len());
            out
        }
    }
}

/// A Responses request whose tools the Chat stream's tool calls can name,
/// so `chat_stream` reaches the items that only a translated request's
/// context produces: a namespaced function (`agents__spawn`), a custom tool
/// (`apply_patch`, streamed as `custom_tool_call_input`) and a client-run
/// `tool_search`, with reasoning shown as a summary.
pub const TOOLS_REQUEST: &str = r#"{"model":"m","input":"go","stream":true,
"reasoning":{"effort":"low","summary":"auto"},
"tools":[
 {"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},
 {"type":"namespace","name":"agents","description":"d","tools":[{"type":"function","name":"spawn","parameters":{"type":"object"}}]},
 {"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}},
 {"type":"tool_search","execution":"client","description":"Finds tools.","parameters":{"type":"object","properties":{"query":{"type":"string"}}}}]}"#;

/// How far some bytes are JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Json {
    /// JSON as serde_json reads it into a `Value`: strings with paired
    /// surrogates, numbers within `f64`, at most 128 levels deep.
    Strict,
    /// JSON only by the grammar of RFC 8259, which is all that serde_json
    /// checks of a raw value (`RawValue`). The translators copy the values
    /// they do not change as raw values, as the client or backend wrote
    /// them, so such input gives such output.
    Grammar,
    /// Not JSON.
    Not,
}

impl Json {
    /// Classifies `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        if serde_json::from_slice::<serde_json::Value>(bytes).is_ok() {
            Json::Strict
        } else if serde_json::from_slice::<IgnoredAny>(bytes).is_ok() {
            Json::Grammar
        } else {
            Json::Not
        }
    }
}

/// Whether a grammar checker's `violation` is only that it could not read a
/// frame holding a value copied from the upstream `stream`.
///
/// The translators copy the values they do not change as the backend wrote
/// them. A value that is JSON only by the grammar ([`Json::Grammar`]: a
/// logprob of `2e684`, a lone surrogate escape) is copied too, and the
/// strict checkers, which read frames with serde_json, stop at it. That is
/// accepted when the frame is JSON by the grammar and the upstream did send
/// such an event; the rest of the stream is then unchecked, and the target's
/// other checks (one terminal event) still apply.
pub fn unreadable_copy(violation: &Violation, frames: &[SseFrame], stream: &[u8]) -> bool {
    violation.message.starts_with("data is not valid JSON")
        && frames
            .get(violation.frame)
            .is_some_and(|frame| Json::of(frame.data.as_bytes()) == Json::Grammar)
        && parse_sse(stream)
            .iter()
            .any(|frame| Json::of(frame.data.as_bytes()) == Json::Grammar)
}

/// Checks what a request translator made of the request `data`, beyond not
/// panicking: a translated `body` is JSON, as strictly as the request was
/// (JSON by the grammar at least, when the request held values that only
/// the grammar allows, since those are copied as the client wrote them); a
/// refusal has a message, a 4xx or 5xx status and an error body that is
/// JSON.
pub fn check_request(data: &[u8], translated: Result<&[u8], &ConvertError>) {
    match translated {
        Ok(body) => {
            // The request is only read again when the body is not strict.
            let output = Json::of(body);
            if output != Json::Strict {
                let input = Json::of(data);
                assert!(
                    input != Json::Strict && output == Json::Grammar,
                    "a {input:?} request translated to a {output:?} body: {}",
                    String::from_utf8_lossy(body)
                );
            }
        }
        Err(error) => {
            assert!(
                !error.to_string().is_empty(),
                "empty error message: {error:?}"
            );
            assert!(
                (400..600).contains(&error.status()),
                "{error:?}: status {}",
                error.status()
            );
            assert_eq!(
                Json::of(&error.to_body()),
                Json::Strict,
                "error body is not JSON"
            );
        }
    }
}

/// Whether `text` is a JSON object whose top level names no field twice.
/// serde_json keeps the last of two equal names, a raw reader may keep the
/// first; JSON itself leaves it open (RFC 8259, 4), so a comparison of
/// fields holds only where the question does not arise.
pub fn unique_keys(text: &str) -> bool {
    struct Keys;
    impl<'de> serde::de::Visitor<'de> for Keys {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut seen = std::collections::HashSet::new();
            let mut unique = true;
            while let Some((key, IgnoredAny)) = map.next_entry::<String, IgnoredAny>()? {
                unique &= seen.insert(key);
            }
            Ok(unique)
        }
    }
    struct Object(bool);
    impl<'de> serde::Deserialize<'de> for Object {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_map(Keys).map(Object)
        }
    }
    serde_json::from_str::<Object>(text).is_ok_and(|Object(unique)| unique)
}

/// Feeds `input`'s stream to `translator` in its pieces and finishes it,
/// as the proxy drives a stream, one upstream event limited to 512 bytes
/// when `small_events`: the translator, which must say it is finished, and
/// the SSE it wrote.
pub fn drive<T: StreamTranslate>(
    translator: T,
    input: &StreamInput<'_>,
    small_events: bool,
) -> (SseTranslator<T>, Vec<u8>) {
    let mut stream = match small_events {
        true => SseTranslator::with_max_event_size(translator, 512),
        false => SseTranslator::new(translator),
    };
    let mut out = Frames::sse();
    for piece in input.pieces() {
        stream.feed(piece, &mut out);
    }
    stream.finish(&mut out);
    assert!(stream.is_finished(), "no terminal event after finish");
    (stream, out.take().bytes)
}
