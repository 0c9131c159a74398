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
//! are recorded streams behind two zero bytes (`fuzz/seed.py`): one piece,
//! default settings.

use wirebridge_testkit::split_points;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_concatenate_to_the_stream() {
        let stream: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        for split in 0..=u8::MAX {
            let cut = pieces(&stream, split);
            assert!(cut.iter().all(|p| !p.is_empty()));
            assert_eq!(cut.concat(), stream);
        }
        assert!(pieces(&[], 7).is_empty());
    }
}
