//! Borrowed JSON fragments that are written back out without re-encoding.
//!
//! Large text (message text, instructions, tool descriptions, arguments) is
//! kept as the exact JSON string literal from the input. Writing it out again
//! is a copy: no unescaping on the way in, no escaping on the way out.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Error as _, Unexpected};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A JSON string literal borrowed from the input, quotes and escapes intact.
#[derive(Clone, Copy)]
pub struct JsonStr<'a>(&'a RawValue);

impl PartialEq for JsonStr<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for JsonStr<'_> {}

impl<'a> JsonStr<'a> {
    /// The string literal of an empty string.
    pub const EMPTY: &'static str = "\"\"";

    /// Wraps a raw value that must be a JSON string literal.
    pub fn new(raw: &'a RawValue) -> Option<Self> {
        raw.get().starts_with('"').then_some(Self(raw))
    }

    /// The raw literal, with its quotes.
    pub fn raw(self) -> &'a RawValue {
        self.0
    }

    /// The escaped content between the quotes, still JSON-escaped.
    pub fn escaped(self) -> &'a str {
        let s = self.0.get();
        &s[1..s.len() - 1]
    }

    /// Whether this is the empty string `""`.
    pub fn is_empty(self) -> bool {
        self.0.get().len() == 2
    }

    /// The decoded text; borrowed when the literal holds no escapes.
    pub fn decode(self) -> Cow<'a, str> {
        let escaped = self.escaped();
        if !escaped.contains('\\') {
            return Cow::Borrowed(escaped);
        }
        // The literal was validated by the JSON parser, so decoding cannot fail.
        serde_json::from_str::<String>(self.0.get())
            .map(Cow::Owned)
            .unwrap_or(Cow::Borrowed(escaped))
    }
}

impl fmt::Debug for JsonStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl Serialize for JsonStr<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'a RawValue>::deserialize(d)?;
        Self::new(raw).ok_or_else(|| D::Error::invalid_type(describe(raw), &"a string"))
    }
}

/// An empty JSON array, `[]`, borrowed from a constant (no allocation).
pub fn empty_array() -> &'static RawValue {
    serde_json::from_str("[]").expect("a constant is valid JSON")
}

/// Names the JSON kind of a raw value for error messages.
pub fn describe(raw: &RawValue) -> Unexpected<'static> {
    match raw.get().as_bytes().first() {
        Some(b'{') => Unexpected::Map,
        Some(b'[') => Unexpected::Seq,
        Some(b't' | b'f') => Unexpected::Other("boolean"),
        Some(b'n') => Unexpected::Unit,
        _ => Unexpected::Other("number"),
    }
}

/// Text to emit: a borrowed literal or one built here.
#[derive(Clone)]
pub enum JsonText<'a> {
    /// Copied through from the input.
    Borrowed(JsonStr<'a>),
    /// Built by the translator (joined parts, generated notes).
    Owned(Box<RawValue>),
}

impl<'a> JsonText<'a> {
    /// Encodes a plain Rust string.
    pub fn from_text(text: &str) -> JsonText<'static> {
        let literal = serde_json::to_string(text).expect("strings always serialize");
        JsonText::Owned(RawValue::from_string(literal).expect("a serialized string is valid JSON"))
    }

    /// Builds a literal from already-escaped content (no quotes).
    ///
    /// The caller guarantees `escaped` is valid JSON string content, such as a
    /// concatenation of [`JsonStr::escaped`] slices.
    pub fn from_escaped(escaped: &str) -> JsonText<'static> {
        let mut literal = String::with_capacity(escaped.len() + 2);
        literal.push('"');
        literal.push_str(escaped);
        literal.push('"');
        match RawValue::from_string(literal) {
            Ok(raw) => JsonText::Owned(raw),
            Err(_) => JsonText::from_text(""),
        }
    }

    /// Joins literals with a separator given as escaped content.
    pub fn join<I>(parts: I, escaped_separator: &str) -> JsonText<'a>
    where
        I: IntoIterator<Item = JsonStr<'a>>,
    {
        let mut iter = parts.into_iter();
        let Some(first) = iter.next() else {
            return JsonText::from_text("");
        };
        let Some(second) = iter.next() else {
            return JsonText::Borrowed(first);
        };
        let mut escaped = String::from(first.escaped());
        for part in std::iter::once(second).chain(iter) {
            escaped.push_str(escaped_separator);
            escaped.push_str(part.escaped());
        }
        JsonText::from_escaped(&escaped)
    }

    /// The raw literal, with its quotes.
    pub fn raw(&self) -> &RawValue {
        match self {
            JsonText::Borrowed(s) => s.raw(),
            JsonText::Owned(raw) => raw,
        }
    }

    /// The escaped content between the quotes.
    pub fn escaped(&self) -> &str {
        let s = self.raw().get();
        &s[1..s.len() - 1]
    }

    /// Whether this is the empty string.
    pub fn is_empty(&self) -> bool {
        self.raw().get().len() == 2
    }
}

impl PartialEq for JsonText<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.raw().get() == other.raw().get()
    }
}

impl Eq for JsonText<'_> {}

impl<'a> From<JsonStr<'a>> for JsonText<'a> {
    fn from(s: JsonStr<'a>) -> Self {
        JsonText::Borrowed(s)
    }
}

impl fmt::Debug for JsonText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.raw().get())
    }
}

impl Serialize for JsonText<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.raw().serialize(s)
    }
}

/// Encodes raw JSON text (an object, say) as a JSON string literal.
///
/// Used where one API carries JSON as text and the other as a value, such as
/// function-call arguments sent as an object.
pub fn json_as_string_literal(raw: &RawValue) -> Box<RawValue> {
    let literal = serde_json::to_string(raw.get()).expect("strings always serialize");
    RawValue::from_string(literal).expect("a serialized string is valid JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_escapes_and_decodes_on_demand() {
        let s: JsonStr<'_> = serde_json::from_str(r#""a\nb \u00e9""#).unwrap();
        assert_eq!(s.escaped(), r"a\nb \u00e9");
        assert_eq!(s.decode(), "a\nb é");
        assert_eq!(serde_json::to_string(&s).unwrap(), r#""a\nb \u00e9""#);
    }

    #[test]
    fn rejects_non_strings() {
        let err = serde_json::from_str::<JsonStr<'_>>("{}").unwrap_err();
        assert!(err.to_string().contains("expected a string"), "{err}");
    }

    #[test]
    fn joins_escaped_parts() {
        let a: JsonStr<'_> = serde_json::from_str(r#""x\"y""#).unwrap();
        let b: JsonStr<'_> = serde_json::from_str(r#""z""#).unwrap();
        let joined = JsonText::join([a, b], r"\n");
        assert_eq!(joined.raw().get(), r#""x\"y\nz""#);
        assert!(matches!(JsonText::join([a], ""), JsonText::Borrowed(_)));
    }

    #[test]
    fn objects_become_string_literals() {
        let raw: Box<RawValue> = serde_json::from_str(r#"{"a":"b"}"#).unwrap();
        let lit = json_as_string_literal(&raw);
        assert_eq!(lit.get(), r#""{\"a\":\"b\"}""#);
    }
}

/// Streamed text accumulated in escaped form, ready to be written as one
/// JSON string literal.
///
/// Concatenating the contents of valid string literals gives the content of a
/// valid literal, so fragments are appended as they arrived, never decoded.
#[derive(Debug, Clone)]
pub struct EscapedText {
    buf: String,
    closed: bool,
}

impl Default for EscapedText {
    fn default() -> Self {
        Self::new()
    }
}

impl EscapedText {
    const EMPTY_LITERAL: &'static str = "\"\"";

    /// An empty text.
    pub fn new() -> Self {
        Self {
            buf: String::from("\""),
            closed: false,
        }
    }

    /// Appends a fragment.
    pub fn push(&mut self, fragment: JsonStr<'_>) {
        self.push_escaped(fragment.escaped());
    }

    /// Appends already-escaped content: the caller guarantees it is valid
    /// JSON string content (no lone backslash, no raw control character).
    pub fn push_escaped(&mut self, escaped: &str) {
        if self.closed {
            self.buf.pop();
            self.closed = false;
        }
        self.buf.push_str(escaped);
    }

    /// Appends plain text, escaping it.
    pub fn push_text(&mut self, text: &str) {
        let literal = serde_json::to_string(text).expect("strings always serialize");
        self.push_escaped(&literal[1..literal.len() - 1]);
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.escaped().is_empty()
    }

    /// The escaped content so far.
    pub fn escaped(&self) -> &str {
        let end = self.buf.len() - usize::from(self.closed);
        &self.buf[1..end]
    }

    /// The text as a JSON string literal, borrowed.
    pub fn literal(&mut self) -> JsonStr<'_> {
        if !self.closed {
            self.buf.push('"');
            self.closed = true;
        }
        match serde_json::from_str::<&RawValue>(&self.buf) {
            Ok(raw) => JsonStr(raw),
            // Only reachable if `push_escaped` was given invalid content.
            Err(_) => JsonStr(serde_json::from_str(Self::EMPTY_LITERAL).expect("constant")),
        }
    }

    /// The decoded text.
    pub fn decode(&mut self) -> String {
        self.literal().decode().into_owned()
    }
}

#[cfg(test)]
mod escaped_text_tests {
    use super::*;

    #[test]
    fn accumulates_fragments_without_decoding() {
        let mut text = EscapedText::new();
        for frag in [r#""a\"""#, r#""\n""#, r#""é""#] {
            text.push(serde_json::from_str(frag).unwrap());
            let _ = text.literal();
        }
        text.push_text("\t!");
        assert_eq!(text.literal().raw().get(), r#""a\"\né\t!""#);
        assert_eq!(text.decode(), "a\"\né\t!");
    }
}

/// Raw JSON without insignificant whitespace.
///
/// A raw value keeps the whitespace of its source, and a pretty-printed value
/// holds newlines, which would end an SSE `data:` line early. Values that end
/// up in stream events are compacted once; those already compact are
/// borrowed.
pub fn compact(raw: &RawValue) -> Cow<'_, RawValue> {
    let text = raw.get();
    if !has_insignificant_whitespace(text.as_bytes()) {
        return Cow::Borrowed(raw);
    }
    // JSON's structural characters are ASCII and never occur inside a
    // multi-byte UTF-8 sequence, so working on bytes keeps the text valid.
    // What lies between two whitespace bytes is copied at once, a string
    // with it, found eight bytes at a time: byte by byte this was 18
    // instructions a byte of a pretty-printed tool list.
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(text.len());
    let (mut run, mut i) = (0, 0);
    let space = |b: &u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
    while let Some(b) = bytes.get(i) {
        if space(b) {
            out.extend_from_slice(&bytes[run..i]);
            i += bytes[i..].iter().take_while(|b| space(b)).count();
            run = i;
        } else if *b == b'"' {
            i = string_end(bytes, i + 1) + 1;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[run.min(bytes.len())..]);
    match String::from_utf8(out).map(RawValue::from_string) {
        Ok(Ok(compacted)) => Cow::Owned(compacted),
        _ => Cow::Borrowed(raw),
    }
}

/// Whether `json` has whitespace outside its strings. Strings are skipped
/// quote to quote, so text holding spaces is not mistaken for padding.
fn has_insignificant_whitespace(json: &[u8]) -> bool {
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            b' ' | b'\n' | b'\r' | b'\t' => return true,
            b'"' => i = string_end(json, i + 1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// The index of the quote closing the string whose content starts at `i`
/// (or the end of `json`). Eight bytes at a time while none of them is a
/// quote or a backslash: schemas and descriptions are mostly string text.
fn string_end(json: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_byte = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGH != 0
    };
    loop {
        while let Some(chunk) = json.get(i..i + 8) {
            let word = u64::from_ne_bytes(chunk.try_into().expect("eight bytes"));
            if has_byte(word, b'"') || has_byte(word, b'\\') {
                break;
            }
            i += 8;
        }
        match json.get(i) {
            None => return json.len(),
            Some(b'"') => return i,
            Some(b'\\') => i += 2,
            Some(_) => i += 1,
        }
    }
}

#[cfg(test)]
mod compact_tests {
    use super::*;

    /// Compaction a byte at a time, as it was first written: the oracle.
    fn compacted_bytewise(text: &str) -> String {
        let mut out = Vec::with_capacity(text.len());
        let (mut in_string, mut escaped) = (false, false);
        for &b in text.as_bytes() {
            if in_string {
                out.push(b);
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
            } else if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                in_string = b == b'"';
                out.push(b);
            }
        }
        String::from_utf8(out).unwrap()
    }

    /// Every JSON value of the recorded traffic, pretty-printed and padded
    /// with whitespace between its tokens in many ways, compacts as the
    /// byte-at-a-time oracle compacts it.
    #[test]
    fn compacts_recorded_json_as_the_bytewise_oracle_does() {
        use wirebridge_testkit::fixtures;
        let mut texts: Vec<String> = fixtures::chat_bodies()
            .into_iter()
            .chain(fixtures::responses_bodies())
            .chain(fixtures::codex_requests())
            .map(|(_, body)| String::from_utf8_lossy(&body).into_owned())
            .collect();
        for stream in fixtures::chat_streams().iter().take(20) {
            texts.extend(stream.frames().into_iter().map(|frame| frame.data));
        }
        let mut rng = wirebridge_testkit::mutate::Rng(0x9e37_79b9_7f4a_7c15);
        let mut checked = 0;
        for text in texts {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            // Whitespace after structural bytes outside strings, chosen at
            // random: after a comma, a colon, a bracket or a brace.
            let mut padded = String::with_capacity(pretty.len() * 2);
            let (mut in_string, mut escaped) = (false, false);
            for c in text.chars() {
                padded.push(c);
                if in_string {
                    match (escaped, c) {
                        (true, _) => escaped = false,
                        (false, '\\') => escaped = true,
                        (false, '"') => in_string = false,
                        _ => {}
                    }
                    continue;
                }
                in_string = c == '"';
                if matches!(c, ',' | ':' | '[' | ']' | '{' | '}') {
                    padded.push_str([" ", "\n", "\r\n", "\t ", ""][rng.below(5)]);
                }
            }
            for source in [&text, &pretty, &padded] {
                let raw = RawValue::from_string(source.clone()).unwrap();
                assert_eq!(compact(&raw).get(), compacted_bytewise(source));
                checked += 1;
            }
        }
        assert!(checked > 300, "only {checked} JSON texts were compacted");
    }

    #[test]
    fn strips_whitespace_outside_strings_only() {
        let raw: Box<RawValue> =
            serde_json::from_str("{\n  \"a b\": [1, \"x \\\" y\" ],\n\t\"c\":{}\n}").unwrap();
        assert_eq!(compact(&raw).get(), r#"{"a b":[1,"x \" y"],"c":{}}"#);
        let tight: Box<RawValue> = serde_json::from_str(r#"{"a":1}"#).unwrap();
        assert!(matches!(compact(&tight), Cow::Borrowed(_)));
        let spaced_text: Box<RawValue> =
            serde_json::from_str(r#"{"a b":"c \" d\\","e":[" "]}"#).unwrap();
        assert!(matches!(compact(&spaced_text), Cow::Borrowed(_)));
        let long = r#"{"description":"a long text with \"quotes\" and \\ slashes, longer than a word","x":1}"#;
        let long_raw: Box<RawValue> = serde_json::from_str(long).unwrap();
        assert!(matches!(compact(&long_raw), Cow::Borrowed(_)));
        let padded: Box<RawValue> =
            serde_json::from_str(&long.replace(r#","x""#, r#", "x""#)).unwrap();
        assert_eq!(compact(&padded).get(), long);
        let unicode: Box<RawValue> =
            serde_json::from_str("{ \"\u{e9}\u{1F600}\" : \"x y\" }").unwrap();
        assert_eq!(compact(&unicode).get(), "{\"\u{e9}\u{1F600}\":\"x y\"}");
    }
}
