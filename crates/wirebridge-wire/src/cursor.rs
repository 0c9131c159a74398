//! A forward-only reader of JSON text, for the fast paths.
//!
//! A translator reads many JSON documents of a few known shapes: one small
//! one per stream event, and one request body per turn. serde walks every
//! field into typed structs, and keeps a pass-through value raw only by
//! scanning it once for itself and once more when it is parsed; this
//! reader lets a fast path pick out the fields it needs, step over the
//! rest, and keep the text of any value it read, in one pass.
//!
//! It accepts less than serde_json does, never more: every method returns
//! `None` as soon as it meets something it does not handle (an escape in a
//! key, a nested value where a scalar was expected, a float where a count
//! was expected, nesting deeper than [`MAX_DEPTH`], or anything that is
//! not valid JSON). The caller then parses the document with serde as
//! before, so giving up costs time, not behaviour, and errors are always
//! serde's.
//!
//! ```
//! use wirebridge_wire::cursor::JsonCursor;
//!
//! let mut cursor = JsonCursor::new(r#"{"n": 3, "s": "a\"b", "x": [1, {"y": null}]}"#);
//! let (mut n, mut s, mut x) = (None, None, None);
//! cursor
//!     .object(|c, key| match key {
//!         "n" => c.u64().map(|v| n = Some(v)),
//!         "s" => c.str_literal().map(|v| s = Some(v)),
//!         _ => c.raw().map(|v| x = Some(v.get())),
//!     })
//!     .unwrap();
//! assert!(cursor.end().is_some());
//! assert_eq!((n, s, x), (Some(3), Some(r#""a\"b""#), Some(r#"[1, {"y": null}]"#)));
//! ```

use std::ops::Range;

use serde_json::value::RawValue;

use crate::depth::MAX_DEPTH;
use crate::{JsonStr, Str};

mod fill;
mod scan;
mod skip;

use scan::{number_end, skip_plain, string_close};

/// A position in a JSON text, moved forward by reading values.
#[derive(Debug, Clone)]
pub struct JsonCursor<'a> {
    text: &'a str,
    pos: usize,
    /// How many arrays and objects are open around the position.
    depth: usize,
    /// Whether whitespace was stepped over outside strings.
    padded: bool,
    /// Where values the writer of `text` copied from input it had already
    /// read lie, in order: stepped over without a look (see
    /// [`knowing`](Self::knowing)).
    known: &'a [Range<usize>],
}

impl<'a> JsonCursor<'a> {
    /// A cursor at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Self::knowing(text, &[])
    }

    /// A cursor at the start of `text` that steps over the values at
    /// `known` (sorted, apart) without reading them, when [`raw`](Self::raw)
    /// or [`json_str`](Self::json_str) reads one: values this process
    /// wrote into `text` from input it had already read whole (a tool's
    /// schema, copied from the request it translated), compact as that
    /// input was. What they say is taken on trust, as a raw value's text
    /// is: a range that is not in `text` is passed by, never followed.
    pub fn knowing(text: &'a str, known: &'a [Range<usize>]) -> Self {
        Self {
            text,
            pos: 0,
            depth: 0,
            padded: false,
            known,
        }
    }

    /// The whole text the cursor reads.
    pub(crate) fn text(&self) -> &'a str {
        self.text
    }

    /// Moves to `end`: the end of a value a note of the writer's places
    /// there ([`WrittenTools`](crate::responses::written::WrittenTools)).
    pub(crate) fn skip_to(&mut self, end: usize) {
        self.pos = end;
    }

    /// Steps over the known value starting at `start` (a
    /// [`value_start`](Self::value_start)), if one does: `true` when it
    /// did. For a reader that keeps a value raw its own way.
    pub(crate) fn step_over_known(&mut self, start: usize) -> bool {
        match self.known_end(start) {
            Some(end) => {
                self.pos = end;
                true
            }
            None => false,
        }
    }

    /// Where the known value starting at `start` ends, if one does; known
    /// values before `start` (which the reader passed some other way) are
    /// dropped.
    fn known_end(&mut self, start: usize) -> Option<usize> {
        while let Some((first, rest)) = self.known.split_first() {
            if first.start > start {
                return None;
            }
            self.known = rest;
            if first.start == start
                && first.end > start
                && self.text.get(start..first.end).is_some()
            {
                return Some(first.end);
            }
        }
        None
    }

    /// Whether any whitespace was stepped over outside strings so far: a
    /// text read through without any is compact, as
    /// [`survey`](crate::depth::survey) tells.
    pub fn padded(&self) -> bool {
        self.padded
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// The next byte after whitespace, not consumed.
    pub fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.bytes().get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(b);
            }
            self.padded = true;
            self.pos += 1;
        }
        None
    }

    /// Opens an array or object: `None` past [`MAX_DEPTH`], where serde
    /// stops and the depth check reports it.
    fn open(&mut self, bracket: u8) -> Option<()> {
        self.eat(bracket)?;
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// Closes the innermost array or object.
    fn close(&mut self) {
        self.pos += 1;
        self.depth -= 1;
    }

    /// Consumes `expected`, after whitespace.
    fn eat(&mut self, expected: u8) -> Option<()> {
        (self.peek()? == expected).then(|| self.pos += 1)
    }

    /// Reads an object, calling `field` with each key; `field` must read
    /// the value. Keys must be free of escapes.
    pub fn object(
        &mut self,
        mut field: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.open(b'{')?;
        if self.peek()? == b'}' {
            self.close();
            return Some(());
        }
        loop {
            let key = self.plain_str()?;
            self.eat(b':')?;
            field(self, key)?;
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.close();
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Reads an array, calling `element` for each element; `element` must
    /// read it.
    pub fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.open(b'[')?;
        if self.peek()? == b']' {
            self.close();
            return Some(());
        }
        loop {
            element(self)?;
            match self.peek()? {
                b',' => self.pos += 1,
                b']' => {
                    self.close();
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Reads `null` if it comes next: `true` if it did.
    pub fn null(&mut self) -> Option<bool> {
        if self.peek()? != b'n' {
            return Some(false);
        }
        self.literal("null")?;
        Some(true)
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        let end = self.pos + word.len();
        (self.bytes().get(self.pos..end)? == word.as_bytes()).then(|| self.pos = end)
    }

    /// Reads a string without escapes: its content, borrowed.
    pub fn plain_str(&mut self) -> Option<&'a str> {
        // Keys are most of what is read this way: the quote is looked for
        // directly, with no escape handling to set up. On a recorded Chat
        // stream this took 1% off each leg (callgrind).
        self.eat(b'"')?;
        let start = self.pos;
        let end = skip_plain(self.bytes(), start);
        if *self.bytes().get(end)? != b'"' {
            return None;
        }
        self.pos = end + 1;
        self.text.get(start..end)
    }

    /// Reads a string, escapes included: its literal, quotes and escapes
    /// intact, as serde_json's raw values keep it.
    pub fn str_literal(&mut self) -> Option<&'a str> {
        self.escaped_literal().map(|(literal, _)| literal)
    }

    /// [`str_literal`](Self::str_literal), and whether it holds an escape.
    fn escaped_literal(&mut self) -> Option<(&'a str, bool)> {
        self.peek()?;
        let start = self.pos;
        self.eat(b'"')?;
        let (end, escaped) = string_close(self.bytes(), self.pos, true)?;
        self.pos = end;
        Some((&self.text[start..end], escaped))
    }

    /// Reads a non-negative integer written as plain digits.
    pub fn u64(&mut self) -> Option<u64> {
        self.peek()?;
        let bytes = self.bytes();
        let start = self.pos;
        let mut end = start;
        let mut value: u64 = 0;
        while let Some(&b) = bytes.get(end).filter(|b| b.is_ascii_digit()) {
            value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            end += 1;
        }
        let digits = end - start;
        // A leading zero, a fraction or an exponent: serde's to judge.
        if digits == 0 || (digits > 1 && bytes[start] == b'0') {
            return None;
        }
        if matches!(bytes.get(end), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.pos = end;
        Some(value)
    }

    /// Reads `null` as `None`, or a value with `read`.
    pub fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.null()? {
            return Some(None);
        }
        read(self).map(Some)
    }

    /// Steps over a string, number, `true`, `false` or `null`; gives up on
    /// objects and arrays.
    pub fn skip_scalar(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.str_literal().map(drop),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// Where the next value starts, after whitespace: with
    /// [`raw_since`](Self::raw_since), the text of the value read next.
    pub(crate) fn value_start(&mut self) -> Option<usize> {
        self.peek()?;
        Some(self.pos)
    }

    /// The text from `start` (a [`value_start`](Self::value_start)) to the
    /// position, as serde_json's raw value, borrowed, with no second look
    /// at it. The caller must have read exactly one value since `start`,
    /// which is then one whole JSON value with no whitespace around it, as
    /// a raw value promises; so this stays inside the crate, where every
    /// caller reads one value with the cursor's own methods in between.
    pub(crate) fn raw_since(&self, start: usize) -> &'a RawValue {
        raw_unchecked(&self.text[start..self.pos])
    }

    /// Reads any value, returning its text as a raw value.
    pub fn raw(&mut self) -> Option<&'a RawValue> {
        let start = self.value_start()?;
        match self.known_end(start) {
            Some(end) => self.pos = end,
            None => self.skip_value()?,
        }
        Some(self.raw_since(start))
    }

    /// Reads an empty array (whitespace inside it included), returning its
    /// text as a raw value; gives up on an array with elements.
    pub fn empty_array(&mut self) -> Option<&'a RawValue> {
        let start = self.value_start()?;
        self.array(|_| None)?;
        Some(self.raw_since(start))
    }

    /// Reads a string as [`JsonStr`]: its literal, escapes intact.
    pub fn json_str(&mut self) -> Option<JsonStr<'a>> {
        let start = self.value_start()?;
        match self.known_end(start) {
            Some(end) => self.pos = end,
            None => drop(self.str_literal()?),
        }
        JsonStr::new(self.raw_since(start))
    }

    /// Reads a string as [`Str`]: borrowed when it holds no escape, and
    /// decoded by serde_json when it does.
    pub fn str(&mut self) -> Option<Str<'a>> {
        let (literal, escaped) = self.escaped_literal()?;
        if !escaped {
            return Some(Str::from(&literal[1..literal.len() - 1]));
        }
        serde_json::from_str::<String>(literal).ok().map(Str::from)
    }

    /// Reads `true` or `false`.
    pub fn bool(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal("true").map(|()| true),
            b'f' => self.literal("false").map(|()| false),
            _ => None,
        }
    }

    /// Reads a number as serde_json reads it into an `f64` (an integer
    /// too), to the last bit.
    pub fn f64(&mut self) -> Option<f64> {
        let start = self.value_start()?;
        if !matches!(self.bytes()[start], b'-' | b'0'..=b'9') {
            return None;
        }
        self.number()?;
        serde_json::from_str(&self.text[start..self.pos]).ok()
    }

    /// Steps over a number, as JSON's grammar has it.
    fn number(&mut self) -> Option<()> {
        self.pos = number_end(self.bytes(), self.pos)?;
        Some(())
    }

    /// Checks that only whitespace is left, as `serde_json::from_str` does.
    pub fn end(&mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }
}

/// The known fields of an object read so far, by number (up to 64).
///
/// serde rejects a field that comes twice: a fast path gives up on one,
/// leaving serde to say so.
#[derive(Debug, Default)]
pub struct SeenFields(u64);

impl SeenFields {
    /// Notes field `bit` (below 64); `None` if it was seen already.
    pub fn once(&mut self, bit: u8) -> Option<()> {
        let mask = 1u64 << bit;
        (self.0 & mask == 0).then(|| self.0 |= mask)
    }

    /// Reads a field's value with `read`, unless field `bit` came before:
    /// then `None`, as serde rejects a duplicate.
    pub fn read<'a>(
        &mut self,
        bit: u8,
        c: &mut JsonCursor<'a>,
        read: impl FnOnce(&mut JsonCursor<'a>) -> Option<()>,
    ) -> Option<()> {
        self.once(bit)?;
        read(c)
    }
}

/// `json` as serde_json's raw value, borrowed, without parsing it again.
///
/// serde_json makes a borrowed raw value only by scanning its text, and a
/// request body's raw values (every message's text, every tool's schema)
/// are most of its bytes: the single-pass request reader would scan them
/// twice, which is what it exists to stop. `RawValue` is
/// `#[repr(transparent)]` over `str` (serde_json makes its own borrowed
/// values with this very cast), and every caller passes a value the cursor
/// has just read through whole, which is all a `RawValue` promises (so
/// [`JsonCursor::raw_since`], which calls it, is not public).
///
/// Measured (`wirebridge-bench --filter responses_to_chat/request`,
/// alternating builds, medians of 21): with serde_json's own scan here
/// instead, translating the ~3 KB Codex turn costs 8.4–8.5 µs (0.86–0.88×
/// the `Value` round trip) and the ~50 KB request 58.7–59.3 µs (0.74×);
/// with the cast, 5.2 µs (0.52×) and 26.8–27.7 µs (0.33×). Borrowing
/// through `serde_json::from_str::<&RawValue>` is that same scan, and
/// `RawValue::from_string` adds an allocation, so the cast stays.
///
/// The layout is serde_json's detail, not its promise: the workspace's
/// `Cargo.toml` keeps serde_json to the 1.0 releases whose `RawValue` was
/// read to be `#[repr(transparent)]` over `str`, the assertion below stops
/// the build if a reference to one stops being the size of a `&str`, and
/// `tests::raw_unchecked_keeps_the_text` fails if the cast stops handing
/// back the very bytes it was given.
/// [`raw_unchecked`] for the text of one value a writer of this crate
/// wrote, found where its note says: as trusted as the copies a cursor
/// [`knowing`](JsonCursor::knowing) steps over.
pub(crate) fn raw_written(json: &str) -> &RawValue {
    raw_unchecked(json)
}

#[allow(unsafe_code)]
fn raw_unchecked(json: &str) -> &RawValue {
    // SAFETY: `RawValue` is a `#[repr(transparent)]` wrapper of `str`, so
    // the pointer casts to the same layout and metadata; its one invariant
    // (a single well-formed JSON value, no surrounding whitespace) holds
    // for the text of a value the cursor read.
    unsafe { &*(json as *const str as *const RawValue) }
}

// A `&RawValue` that is not a (pointer, length) pair like `&str` would make
// the cast above read garbage: refuse to build rather than find out.
const _: () = assert!(
    std::mem::size_of::<&RawValue>() == std::mem::size_of::<&str>()
        && std::mem::align_of::<&RawValue>() == std::mem::align_of::<&str>()
);

#[cfg(test)]
mod tests;
