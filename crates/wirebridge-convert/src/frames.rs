//! [`Frames`]: where a stream translator writes its events, framed for the
//! transport that carries them.
//!
//! Translators write events, not bytes of a wire format: an HTTP client
//! reads them as server-sent events, a WebSocket client as one bare JSON
//! message each, and a translator stacked on another (the Messages hub over
//! the Responses side) reads them as they were written. The framing is
//! chosen once, when the buffer is made, so nothing downstream decodes what
//! the bridge itself encoded.
//!
//! ```
//! use wirebridge_convert::frames::{Framing, Frames};
//!
//! let write = |frames: &mut Frames| {
//!     frames.event(Some("response.created"), |out| out.extend_from_slice(br#"{"type":"response.created"}"#));
//!     frames.keepalive();
//!     frames.event(Some("response.completed"), |out| out.extend_from_slice(br#"{"type":"response.completed"}"#));
//! };
//!
//! let mut sse = Frames::new(Framing::Sse);
//! write(&mut sse);
//! assert_eq!(
//!     sse.as_bytes(),
//!     b"event: response.created\ndata: {\"type\":\"response.created\"}\n\n: keepalive\n\nevent: response.completed\ndata: {\"type\":\"response.completed\"}\n\n"
//! );
//!
//! let mut json = Frames::new(Framing::json_with_stream_id("lane-1"));
//! write(&mut json);
//! let events: Vec<&[u8]> = json.events().collect();
//! assert_eq!(
//!     events,
//!     [
//!         &br#"{"stream_id":"lane-1","type":"response.created"}"#[..],
//!         b"", // the keep-alive: an empty event
//!         br#"{"stream_id":"lane-1","type":"response.completed"}"#,
//!     ]
//! );
//! ```

use std::sync::Arc;

use wirebridge_sse::{encode_comment, encode_event, encode_event_with};

/// How events are framed.
///
/// It is also the request extension by which a caller asks the tower
/// layers for a stream in bare JSON: the WebSocket mode, and a layer
/// stacked on another.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events: `event:` and `data:` lines and a blank line each,
    /// `data: [DONE]` at the end of a Chat stream, a comment to keep the
    /// connection alive.
    #[default]
    Sse,
    /// Each event its data alone (its JSON text), the boundaries kept
    /// beside the bytes; a keep-alive is an empty event, and a Chat
    /// stream's `[DONE]` is not written (the transport's own end says it).
    Json {
        /// A field written first in every event: the WebSocket mode's
        /// `stream_id`, which tells a client's concurrent turns apart.
        stream_id: Option<Arc<str>>,
    },
    /// Bare JSON events, but text, reasoning and tool-argument deltas as
    /// records of their fields (kind, indexes, fragment) for a translator
    /// of this crate's to take in place, with no JSON to read: the
    /// Messages hub over the Responses side, in the same process. Only a
    /// caller that hands the stream to this crate's translators asks for
    /// it; the records are for nobody else.
    Handed,
}

impl Framing {
    /// Bare JSON events.
    pub fn json() -> Self {
        Framing::Json { stream_id: None }
    }

    /// Bare JSON events, each with `stream_id` first.
    pub fn json_with_stream_id(stream_id: &str) -> Self {
        Framing::Json {
            stream_id: Some(stream_id.into()),
        }
    }

    /// Whether events are bare JSON (the deltas of [`Framing::Handed`]
    /// being records in their place).
    pub fn is_json(&self) -> bool {
        matches!(self, Framing::Json { .. } | Framing::Handed)
    }

    /// Whether deltas are handed as records ([`Framing::Handed`]).
    pub fn hands_deltas(&self) -> bool {
        matches!(self, Framing::Handed)
    }
}

/// Events written by a stream translator, in one framing.
///
/// One buffer serves a whole stream: what was written is taken out with
/// [`take`](Frames::take) and the buffer is written again.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    bytes: Vec<u8>,
    /// Bare JSON: where each event ends in `bytes`.
    ends: Vec<usize>,
    /// Where the latest event begins (its frame, in SSE).
    last: Option<usize>,
    /// Bare JSON with a stream id: `{"stream_id":…` (no closing brace).
    lane: Option<Vec<u8>>,
    framing: Framing,
}

impl Frames {
    /// An empty buffer framing events as `framing` says.
    pub fn new(framing: Framing) -> Self {
        let lane = match &framing {
            Framing::Json {
                stream_id: Some(id),
            } => {
                let mut lane = b"{\"stream_id\":".to_vec();
                serde_json::to_writer(&mut lane, &**id).expect("strings always serialize");
                Some(lane)
            }
            _ => None,
        };
        Self {
            bytes: Vec::new(),
            ends: Vec::new(),
            last: None,
            lane,
            framing,
        }
    }

    /// An empty buffer of server-sent events.
    pub fn sse() -> Self {
        Self::new(Framing::Sse)
    }

    /// An empty buffer of bare JSON events.
    pub fn json() -> Self {
        Self::new(Framing::json())
    }

    /// The framing.
    pub fn framing(&self) -> &Framing {
        &self.framing
    }

    /// Writes an event whose data (a JSON object, for every event the
    /// translators write) `write` appends itself, so a serializer writes
    /// straight into the frame.
    pub fn event(&mut self, name: Option<&str>, write: impl FnOnce(&mut Vec<u8>)) {
        let start = self.bytes.len();
        self.last = Some(start);
        match &self.lane {
            _ if !self.framing.is_json() => encode_event_with(&mut self.bytes, name, write),
            None => {
                write(&mut self.bytes);
                self.ends.push(self.bytes.len());
            }
            Some(lane) => {
                self.bytes.extend_from_slice(lane);
                let data = self.bytes.len();
                write(&mut self.bytes);
                join_lane(&mut self.bytes, start, data);
                self.ends.push(self.bytes.len());
            }
        }
    }

    /// Writes an event whose data is `data`.
    pub fn event_data(&mut self, name: Option<&str>, data: &str) {
        match self.framing {
            Framing::Sse => {
                self.last = Some(self.bytes.len());
                encode_event(&mut self.bytes, name, data);
            }
            Framing::Json { .. } | Framing::Handed => {
                self.event(name, |out| out.extend_from_slice(data.as_bytes()));
            }
        }
    }

    /// Writes the end of a Chat Completions stream: `data: [DONE]` in SSE,
    /// nothing in bare JSON.
    pub fn done(&mut self) {
        if let Framing::Sse = self.framing {
            self.bytes.extend_from_slice(b"data: [DONE]\n\n");
        }
    }

    /// Writes a keep-alive: a `: keepalive` comment and a blank line (so
    /// that line-buffering intermediaries pass it on at once) in SSE, an
    /// empty event in bare JSON.
    pub fn keepalive(&mut self) {
        match self.framing {
            Framing::Sse => {
                encode_comment(&mut self.bytes, "keepalive");
                self.bytes.push(b'\n');
            }
            Framing::Json { .. } | Framing::Handed => self.ends.push(self.bytes.len()),
        }
    }

    /// The bytes written since the last take.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// How many bytes were written since the last take.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether nothing was written since the last take (a bare JSON
    /// keep-alive is something).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty() && self.ends.is_empty()
    }

    /// Reserves room for `additional` more bytes.
    pub fn reserve(&mut self, additional: usize) {
        self.bytes.reserve(additional);
    }

    /// The room for bytes before the buffer grows.
    pub fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Bare JSON: each event written since the last take. SSE: the frames
    /// as one piece, when there are any.
    pub fn events(&self) -> impl Iterator<Item = &[u8]> {
        let whole = (!self.framing.is_json() && !self.bytes.is_empty()).then_some(&self.bytes[..]);
        let mut start = 0;
        let json = self.ends.iter().map(move |&end| {
            let event = &self.bytes[start..end];
            start = end;
            event
        });
        whole.into_iter().chain(json)
    }

    /// Takes what was written: the bytes, and (bare JSON) where each event
    /// ends in them. The buffer is left empty, in the same framing.
    pub fn take(&mut self) -> Taken {
        self.last = None;
        Taken {
            bytes: std::mem::take(&mut self.bytes),
            ends: std::mem::take(&mut self.ends),
        }
    }

    /// Forgets what was written, keeping the room it took.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.last = None;
    }

    /// Rewrites the data of the latest event written, if `rewrite` returns
    /// new data for it (given its current data); the frame around it is
    /// written again in the same framing.
    pub fn rewrite_last(&mut self, rewrite: impl FnOnce(&str) -> Option<String>) {
        let Some(start) = self.last else {
            return;
        };
        let frame = &self.bytes[start..];
        let (name, data) = match self.framing {
            Framing::Sse => match sse_frame(frame) {
                Some(parts) => parts,
                None => return,
            },
            Framing::Json { .. } | Framing::Handed => match std::str::from_utf8(frame) {
                Ok(data) => (None, data),
                Err(_) => return,
            },
        };
        let Some(data) = rewrite(data) else {
            return;
        };
        let name = name.map(str::to_owned);
        self.bytes.truncate(start);
        if self.framing.is_json() {
            self.ends.pop();
            // The stream id is in the data already.
            self.last = Some(start);
            self.bytes.extend_from_slice(data.as_bytes());
            self.ends.push(self.bytes.len());
        } else {
            self.event_data(name.as_deref(), &data);
        }
    }
}

/// What [`Frames::take`] took.
#[derive(Debug, Default)]
pub struct Taken {
    /// The bytes written.
    pub bytes: Vec<u8>,
    /// Bare JSON: where each event ends in `bytes`; empty in SSE.
    pub ends: Vec<usize>,
}

/// The event name and data of one SSE frame as [`Frames`] writes it: an
/// optional `event:` line and one `data:` line.
fn sse_frame(frame: &[u8]) -> Option<(Option<&str>, &str)> {
    let text = std::str::from_utf8(frame).ok()?;
    let mut lines = text.strip_suffix("\n\n")?.split('\n');
    let first = lines.next()?;
    let (name, data) = match first.strip_prefix("event: ") {
        Some(name) => (Some(name), lines.next()?),
        None => (None, first),
    };
    let data = data.strip_prefix("data: ")?;
    // Data written on several lines is not rewritten.
    lines.next().is_none().then_some((name, data))
}

/// Joins the lane prefix written at `start` to the data written after it
/// at `data`: the data's opening brace becomes the comma after the stream
/// id (or, for an empty object, goes). Data that is not an object stands
/// alone, without the stream id.
fn join_lane(bytes: &mut Vec<u8>, start: usize, data: usize) {
    match (bytes.get(data), bytes.get(data + 1)) {
        (Some(b'{'), Some(b'}')) => {
            bytes.remove(data);
        }
        (Some(b'{'), _) => bytes[data] = b',',
        _ => {
            bytes.drain(start..data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(text: &'static str) -> impl FnOnce(&mut Vec<u8>) {
        move |out| out.extend_from_slice(text.as_bytes())
    }

    #[test]
    fn a_chat_stream_in_each_framing() {
        let mut sse = Frames::sse();
        sse.event(None, object(r#"{"id":"c"}"#));
        sse.done();
        assert_eq!(sse.as_bytes(), b"data: {\"id\":\"c\"}\n\ndata: [DONE]\n\n");

        let mut json = Frames::json();
        json.event(None, object(r#"{"id":"c"}"#));
        json.done();
        assert_eq!(json.events().collect::<Vec<_>>(), [br#"{"id":"c"}"#]);
    }

    #[test]
    fn the_stream_id_joins_any_object() {
        let mut json = Frames::new(Framing::json_with_stream_id("a\"b"));
        json.event(None, object("{}"));
        json.event(None, object(r#"{"x":1}"#));
        json.event(None, object("[1]"));
        assert_eq!(
            json.events().collect::<Vec<_>>(),
            [
                &br#"{"stream_id":"a\"b"}"#[..],
                br#"{"stream_id":"a\"b","x":1}"#,
                b"[1]",
            ]
        );
    }

    #[test]
    fn taking_leaves_the_framing() {
        let mut json = Frames::json();
        json.event(None, object("{}"));
        json.keepalive();
        let taken = json.take();
        assert_eq!(taken.bytes, b"{}");
        assert_eq!(taken.ends, [2, 2]);
        assert!(json.is_empty());
        json.event(None, object(r#"{"a":1}"#));
        assert_eq!(json.take().ends, [7]);
    }

    #[test]
    fn the_last_event_is_rewritten_in_its_framing() {
        let rewrite = |data: &str| Some(data.replace("true", "false"));
        let mut sse = Frames::sse();
        sse.event(Some("a"), object(r#"{"store":true}"#));
        sse.keepalive();
        sse.event(Some("response.completed"), object(r#"{"store":true}"#));
        sse.rewrite_last(rewrite);
        assert_eq!(
            String::from_utf8(sse.take().bytes).unwrap(),
            "event: a\ndata: {\"store\":true}\n\n: keepalive\n\n\
             event: response.completed\ndata: {\"store\":false}\n\n"
        );

        let mut json = Frames::new(Framing::json_with_stream_id("s"));
        json.event(None, object(r#"{"store":true}"#));
        json.event(None, object(r#"{"store":true}"#));
        json.rewrite_last(rewrite);
        assert_eq!(
            json.events().collect::<Vec<_>>(),
            [
                &br#"{"stream_id":"s","store":true}"#[..],
                br#"{"stream_id":"s","store":false}"#
            ]
        );
    }

    #[test]
    fn nothing_written_nothing_rewritten() {
        let mut sse = Frames::sse();
        sse.keepalive();
        sse.rewrite_last(|_| Some("x".into()));
        assert_eq!(sse.as_bytes(), b": keepalive\n\n");
    }
}
