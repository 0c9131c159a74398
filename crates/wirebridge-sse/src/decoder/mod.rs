//! Incremental decoding of a server-sent event stream.

use std::fmt;
use std::str;

use crate::error::DecodeError;
use crate::scan::find_line_end;

use fields::{parse_retry, set_id};
use pending::{Data, PendingEvent};

mod fields;
mod pending;
#[cfg(test)]
mod tests;

/// The event size limit used by [`Decoder::new`]: 16 MiB.
pub const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// One dispatched server-sent event, borrowed from the [`Decoder`].
///
/// The borrow ends at the next call that mutates the decoder, which is what
/// lets the decoder reuse its buffers instead of allocating per event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    /// The `event:` field, or `None` when the event had no (or an empty)
    /// name, which SSE consumers treat as the default `message` type.
    pub event: Option<&'a str>,
    /// The `data:` lines of the event, joined with `\n`.
    pub data: &'a str,
    /// The last event ID of the stream at the time of dispatch.
    ///
    /// As in the specification, an `id:` field persists across events
    /// until another `id:` field changes it, and an empty one clears it.
    pub id: Option<&'a str>,
    /// The `retry:` field sent within this event, in milliseconds.
    pub retry: Option<u64>,
}

impl Event<'_> {
    /// Whether this is the `data: [DONE]` sentinel that ends a Chat
    /// Completions stream.
    pub fn is_done(&self) -> bool {
        self.data == "[DONE]"
    }
}

/// An incremental SSE decoder that does not allocate in steady state.
///
/// Feed it bytes as they arrive with [`feed`](Decoder::feed), then call
/// [`next_event`](Decoder::next_event) until it returns `None`. Chunks may
/// be split anywhere, including inside a CRLF pair or a multi-byte UTF-8
/// character. When the input ends, call [`finish`](Decoder::finish) the
/// same way to flush an event whose closing blank line never arrived.
///
/// Line endings may be LF, CRLF or CR, a leading byte order mark is
/// skipped, and comment lines (`: keepalive`) are counted but otherwise
/// ignored. Only the name and data of a dispatched event are checked for
/// valid UTF-8, so a bad event yields an error without stopping the stream.
///
/// The bytes held for one event are capped (see
/// [`with_max_event_size`](Decoder::with_max_event_size)); a stream that
/// exceeds the cap gets [`DecodeError::EventTooLarge`] instead of unbounded
/// memory growth.
///
/// # Example
///
/// ```
/// use wirebridge_sse::Decoder;
///
/// let mut decoder = Decoder::new();
/// let mut deltas = Vec::new();
///
/// // Chunks as a socket might deliver them: split mid-line and mid-CRLF.
/// for chunk in [
///     &b"event: response.output_text.delta\r\ndata: {\"delta\":\"h"[..],
///     b"\xC3\xA9llo\"}\r",
///     b"\n\r\n: keepalive\n\ndata: [DONE]",
/// ] {
///     decoder.feed(chunk);
///     while let Some(event) = decoder.next_event() {
///         let event = event?;
///         deltas.push((event.event.map(str::to_owned), event.data.to_owned()));
///     }
/// }
///
/// // The stream ended without a blank line after `[DONE]`.
/// while let Some(event) = decoder.finish() {
///     assert!(event?.is_done());
/// }
///
/// assert_eq!(
///     deltas,
///     [(
///         Some("response.output_text.delta".to_owned()),
///         r#"{"delta":"héllo"}"#.to_owned(),
///     )]
/// );
/// assert_eq!(decoder.comments_seen(), 1);
/// # Ok::<(), wirebridge_sse::DecodeError>(())
/// ```
pub struct Decoder {
    /// Input bytes; everything before `pos` has been consumed.
    buf: Vec<u8>,
    pos: usize,
    /// `buf[pos..scanned]` is known to hold no line terminator, so a long
    /// line arriving in small chunks is scanned once, not once per chunk.
    scanned: usize,
    /// The previous line ended in a CR at the end of the input so far; an
    /// LF that comes next belongs to it and is not an empty line.
    skip_lf: bool,
    bom_checked: bool,
    eof: bool,
    poisoned: bool,
    /// The pending event was handed out and must be cleared before the
    /// decoder changes anything it could still be borrowed from.
    dispatched: bool,
    max_event_size: usize,
    pending: PendingEvent,
    last_event_id: String,
    retry: Option<u64>,
    comments: u64,
}

impl Decoder {
    /// A decoder with the [default](DEFAULT_MAX_EVENT_SIZE) event size limit.
    pub fn new() -> Self {
        Self::with_max_event_size(DEFAULT_MAX_EVENT_SIZE)
    }

    /// A decoder that rejects events larger than `max_event_size` bytes.
    ///
    /// The limit applies to the bytes held for the event being assembled:
    /// its accumulated name and data plus any line still waiting for its
    /// terminator.
    pub fn with_max_event_size(max_event_size: usize) -> Self {
        Decoder {
            buf: Vec::new(),
            pos: 0,
            scanned: 0,
            skip_lf: false,
            bom_checked: false,
            eof: false,
            poisoned: false,
            dispatched: false,
            max_event_size,
            pending: PendingEvent::new(),
            last_event_id: String::new(),
            retry: None,
            comments: 0,
        }
    }

    /// Appends a chunk of input.
    ///
    /// Drain events with [`next_event`](Decoder::next_event) between calls:
    /// the size limit is enforced while decoding, so input fed without
    /// draining is buffered as is. Input fed after
    /// [`finish`](Decoder::finish), or once the decoder is poisoned, is
    /// ignored.
    pub fn feed(&mut self, chunk: &[u8]) {
        if self.poisoned || self.eof || chunk.is_empty() {
            return;
        }
        self.release_dispatched();
        self.compact();
        self.buf.extend_from_slice(chunk);
    }

    /// Returns the next complete event, or `None` when more input is needed.
    ///
    /// After an [`InvalidUtf8`](DecodeError::InvalidUtf8) error decoding
    /// can continue; after [`EventTooLarge`](DecodeError::EventTooLarge)
    /// every call returns that error again.
    pub fn next_event(&mut self) -> Option<Result<Event<'_>, DecodeError>> {
        match self.advance() {
            Ok(true) => Some(self.dispatch()),
            Ok(false) => None,
            Err(err) => Some(Err(err)),
        }
    }

    /// Marks the end of input and returns the next remaining event.
    ///
    /// A last line without a terminator is processed, and an event with
    /// data is dispatched even if its closing blank line is missing. Call
    /// it until it returns `None`, like [`next_event`](Decoder::next_event);
    /// after that it keeps returning `None`.
    pub fn finish(&mut self) -> Option<Result<Event<'_>, DecodeError>> {
        self.eof = true;
        self.next_event()
    }

    /// The stream's last event ID, if an `id:` field set a non-empty one.
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_event_id.is_empty()).then_some(self.last_event_id.as_str())
    }

    /// The most recent valid `retry:` field, in milliseconds.
    ///
    /// Unlike [`Event::retry`] this also covers a `retry:` sent in a block
    /// without data, which dispatches no event.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// How many comment lines (such as keepalives) have been skipped.
    pub fn comments_seen(&self) -> u64 {
        self.comments
    }

    /// How many bytes the decoder holds for events: input not yet decoded
    /// plus the name and data of the event being assembled.
    ///
    /// When events are drained after every [`feed`](Decoder::feed), this
    /// stays at or below the event size limit plus the length of the last
    /// chunk.
    pub fn buffered_len(&self) -> usize {
        self.buf.len() - self.pos + self.pending.len()
    }

    /// The event size limit in bytes.
    pub fn max_event_size(&self) -> usize {
        self.max_event_size
    }

    fn release_dispatched(&mut self) {
        if self.dispatched {
            self.dispatched = false;
            self.pending.clear();
        }
    }

    /// Drops consumed input. Done on feed rather than per line so that a
    /// chunk holding many events is shifted at most once, and a byte is
    /// only ever moved while it is part of an unfinished line.
    fn compact(&mut self) {
        if self.pos == 0 {
            return;
        }
        self.pending.detach(&self.buf);
        if self.pos == self.buf.len() {
            self.buf.clear();
        } else {
            self.buf.copy_within(self.pos.., 0);
            self.buf.truncate(self.buf.len() - self.pos);
        }
        self.scanned -= self.pos;
        self.pos = 0;
    }

    /// Consumes lines until an event is ready (`true`) or input runs out.
    fn advance(&mut self) -> Result<bool, DecodeError> {
        if self.poisoned {
            return Err(self.too_large());
        }
        self.release_dispatched();
        if !self.bom_checked && !self.skip_bom() {
            return Ok(false);
        }
        loop {
            if self.skip_lf {
                match self.buf.get(self.pos) {
                    Some(&b) => {
                        self.skip_lf = false;
                        if b == b'\n' {
                            self.pos += 1;
                            self.scanned = self.pos;
                        }
                    }
                    None if self.eof => self.skip_lf = false,
                    None => return Ok(false),
                }
            }

            let end = self.buf.len();
            match find_line_end(&self.buf[self.scanned..]) {
                Some(offset) => {
                    let start = self.pos;
                    let line_end = self.scanned + offset;
                    self.pos = line_end + 1;
                    if self.buf[line_end] == b'\r' {
                        match self.buf.get(self.pos) {
                            Some(b'\n') => self.pos += 1,
                            Some(_) => {}
                            None => self.skip_lf = true,
                        }
                    }
                    self.scanned = self.pos;
                    if self.process_line(start, line_end)? {
                        self.dispatched = true;
                        return Ok(true);
                    }
                }
                None if !self.eof => {
                    self.scanned = end;
                    if end - self.pos + self.pending.len() > self.max_event_size {
                        return Err(self.poison());
                    }
                    return Ok(false);
                }
                None => {
                    if self.pos < end {
                        let start = self.pos;
                        self.pos = end;
                        self.scanned = end;
                        // Not empty, so it cannot be a dispatching blank line.
                        self.process_line(start, end)?;
                    }
                    if self.pending.data != Data::Absent {
                        self.dispatched = true;
                        return Ok(true);
                    }
                    self.pending.clear();
                    return Ok(false);
                }
            }
        }
    }

    /// Skips a byte order mark at the start of the stream. Returns `false`
    /// while the input is still too short to tell.
    fn skip_bom(&mut self) -> bool {
        let head = &self.buf[self.pos..];
        let n = head.len().min(BOM.len());
        if head[..n] != BOM[..n] {
            self.bom_checked = true;
        } else if n == BOM.len() {
            self.bom_checked = true;
            self.pos += BOM.len();
            self.scanned = self.pos;
        } else if self.eof {
            // A truncated mark is ordinary content.
            self.bom_checked = true;
        }
        self.bom_checked
    }

    /// Applies one line, `buf[start..end]` without its terminator. Returns
    /// whether it completed an event.
    fn process_line(&mut self, start: usize, end: usize) -> Result<bool, DecodeError> {
        let line = &self.buf[start..end];
        let Some(&first) = line.first() else {
            if self.pending.is_dispatchable() {
                return Ok(true);
            }
            // A `retry:` in a block that dispatches nothing must not leak
            // into the next event.
            self.pending.clear();
            return Ok(false);
        };
        if first == b':' {
            self.comments += 1;
            return Ok(false);
        }

        let (name, value_start) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let after = start + colon + 1;
                let skip = usize::from(self.buf.get(after) == Some(&b' ') && after < end);
                (&line[..colon], after + skip)
            }
            None => (line, end),
        };
        let value = &self.buf[value_start..end];

        let fits = match name {
            b"data" => {
                let sep = usize::from(self.pending.data != Data::Absent);
                let grown = self.pending.len() + sep + value.len();
                let fits = grown <= self.max_event_size;
                if fits {
                    self.pending.push_data(&self.buf, value_start, end);
                }
                fits
            }
            b"event" => {
                let grown = self.pending.data_len() + value.len();
                let fits = grown <= self.max_event_size;
                if fits {
                    self.pending.name.clear();
                    self.pending.name.extend_from_slice(value);
                }
                fits
            }
            b"id" => {
                let fits = value.len() <= self.max_event_size;
                if fits && !value.contains(&0) {
                    set_id(&mut self.last_event_id, value);
                }
                fits
            }
            b"retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.pending.retry = Some(ms);
                    self.retry = Some(ms);
                }
                true
            }
            _ => true,
        };
        if fits {
            Ok(false)
        } else {
            Err(self.poison())
        }
    }

    fn dispatch(&self) -> Result<Event<'_>, DecodeError> {
        let data = match self.pending.data {
            Data::Absent => &[][..],
            Data::Input { start, end } => &self.buf[start..end],
            Data::Joined => &self.pending.joined[..],
        };
        let data = str::from_utf8(data).map_err(|source| DecodeError::InvalidUtf8 {
            field: "data",
            source,
        })?;
        let event = if self.pending.name.is_empty() {
            None
        } else {
            Some(
                str::from_utf8(&self.pending.name).map_err(|source| DecodeError::InvalidUtf8 {
                    field: "event",
                    source,
                })?,
            )
        };
        Ok(Event {
            event,
            data,
            id: self.last_event_id(),
            retry: self.pending.retry,
        })
    }

    /// Frees the buffers for good: a stream that broke the limit once is
    /// not trusted to resynchronise.
    fn poison(&mut self) -> DecodeError {
        self.poisoned = true;
        self.buf = Vec::new();
        self.pos = 0;
        self.scanned = 0;
        self.pending = PendingEvent::new();
        self.too_large()
    }

    fn too_large(&self) -> DecodeError {
        DecodeError::EventTooLarge {
            limit: self.max_event_size,
        }
    }
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Decoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("buffered_len", &self.buffered_len())
            .field("max_event_size", &self.max_event_size)
            .field("last_event_id", &self.last_event_id())
            .field("retry", &self.retry)
            .field("comments_seen", &self.comments)
            .field("finished", &self.eof)
            .field("poisoned", &self.poisoned)
            .finish_non_exhaustive()
    }
}
