//! Delta events handed from one translator of this process to another, as
//! fields rather than JSON.
//!
//! A Messages client on a Chat backend is served by two translators in a
//! row: the Chat stream becomes Responses events, which become Messages
//! events. Nearly every event between them is a text, reasoning or
//! tool-argument delta, and reading each back as JSON (its type, its
//! indexes, its fragment, in whatever order its keys come) cost the second
//! translator four times what the rest of its work did. In
//! [`Framing::Handed`] the first writes each such delta as a record of what
//! the second reads of it:
//!
//! ```text
//! \x01 kind output_index , part , "fragment"
//! ```
//!
//! `kind` one letter, the indexes in decimal, the fragment the JSON string
//! literal the first translator would have put in the event's `delta`. The
//! leading byte can begin no JSON text, so a record is never taken for an
//! event, nor an event for a record. Every other event stays JSON.
//!
//! [`Framing::Handed`]: crate::frames::Framing::Handed

use wirebridge_wire::cursor::JsonCursor;
use wirebridge_wire::decimal::push_decimal;
use wirebridge_wire::JsonStr;

/// The first byte of a record: a control character, which no JSON text
/// begins with.
const TAG: u8 = 0x01;

/// Which delta a record carries: the `type` its event would have had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeltaKind {
    /// `response.output_text.delta`.
    OutputText,
    /// `response.refusal.delta`.
    Refusal,
    /// `response.reasoning_summary_text.delta`.
    ReasoningSummary,
    /// `response.reasoning_text.delta`.
    ReasoningText,
    /// `response.function_call_arguments.delta` (its part always 0).
    FunctionCallArguments,
}

impl DeltaKind {
    const ALL: [Self; 5] = [
        Self::OutputText,
        Self::Refusal,
        Self::ReasoningSummary,
        Self::ReasoningText,
        Self::FunctionCallArguments,
    ];

    /// The kind of the delta events of type `event_type`, if a record can
    /// carry them.
    pub(crate) fn of(event_type: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.event_type() == event_type)
    }

    /// The `type` of its events.
    pub(crate) fn event_type(self) -> &'static str {
        match self {
            Self::OutputText => "response.output_text.delta",
            Self::Refusal => "response.refusal.delta",
            Self::ReasoningSummary => "response.reasoning_summary_text.delta",
            Self::ReasoningText => "response.reasoning_text.delta",
            Self::FunctionCallArguments => "response.function_call_arguments.delta",
        }
    }

    /// The `type` of the item its fragments add to.
    pub(crate) fn item_type(self) -> &'static str {
        match self {
            Self::OutputText | Self::Refusal => "message",
            Self::ReasoningSummary | Self::ReasoningText => "reasoning",
            Self::FunctionCallArguments => "function_call",
        }
    }

    /// The field of its events that says which part of the item it adds
    /// to, where there is one.
    pub(crate) fn part_field(self) -> Option<&'static str> {
        match self {
            Self::ReasoningSummary => Some("summary_index"),
            Self::FunctionCallArguments => None,
            _ => Some("content_index"),
        }
    }

    fn letter(self) -> u8 {
        match self {
            Self::OutputText => b't',
            Self::Refusal => b'r',
            Self::ReasoningSummary => b's',
            Self::ReasoningText => b'R',
            Self::FunctionCallArguments => b'a',
        }
    }

    fn from_letter(letter: u8) -> Option<Self> {
        Some(match letter {
            b't' => Self::OutputText,
            b'r' => Self::Refusal,
            b's' => Self::ReasoningSummary,
            b'R' => Self::ReasoningText,
            b'a' => Self::FunctionCallArguments,
            _ => return None,
        })
    }
}

/// One handed delta: what the translator reading it needs of the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HandedDelta<'a> {
    pub(crate) kind: DeltaKind,
    /// The event's `output_index`.
    pub(crate) output_index: u32,
    /// Its `content_index`, or for a summary its `summary_index`.
    pub(crate) part: u32,
    /// Its `delta`.
    pub(crate) fragment: JsonStr<'a>,
}

/// Appends the record of a delta whose fragment is the string literal with
/// `escaped` between its quotes.
pub(crate) fn write(
    out: &mut Vec<u8>,
    kind: DeltaKind,
    output_index: u32,
    part: u32,
    escaped: &str,
) {
    out.reserve(escaped.len() + 26);
    out.push(TAG);
    out.push(kind.letter());
    push_decimal(out, u64::from(output_index));
    out.push(b',');
    push_decimal(out, u64::from(part));
    out.extend_from_slice(b",\"");
    out.extend_from_slice(escaped.as_bytes());
    out.push(b'"');
}

/// Reads a record; `None` for anything else (an event in JSON), or for a
/// record that is not whole.
pub(crate) fn read(data: &str) -> Option<HandedDelta<'_>> {
    let rest = data.as_bytes().strip_prefix(&[TAG])?;
    let (&letter, rest) = rest.split_first()?;
    let kind = DeltaKind::from_letter(letter)?;
    let (output_index, rest) = index(rest)?;
    let (part, rest) = index(rest)?;
    // The fragment is checked to be one string literal, as the record's
    // writer promises: a look at its few bytes, not a reading of an event.
    let literal = &data[data.len() - rest.len()..];
    let fragment = JsonCursor::new(literal)
        .json_str()
        .filter(|f| f.raw().get().len() == literal.len())?;
    Some(HandedDelta {
        kind,
        output_index,
        part,
        fragment,
    })
}

/// A decimal index and the comma after it.
fn index(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let digits = bytes.iter().position(|&b| b == b',')?;
    if digits == 0 || digits > 10 {
        return None;
    }
    let mut value: u64 = 0;
    for &b in &bytes[..digits] {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
    }
    Some((u32::try_from(value).ok()?, &bytes[digits + 1..]))
}

/// The record of a delta whose fragment is the string literal `literal`,
/// as text: for tests, here and of the translators that read records.
#[cfg(test)]
pub(crate) fn record(kind: DeltaKind, output_index: u32, part: u32, literal: &str) -> String {
    let mut out = Vec::new();
    write(
        &mut out,
        kind,
        output_index,
        part,
        &literal[1..literal.len() - 1],
    );
    String::from_utf8(out).expect("a record of UTF-8 is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written() {
        for (kind, output_index, part, fragment) in [
            (DeltaKind::OutputText, 0, 0, r#""Hi""#),
            (DeltaKind::Refusal, 3, 1, r#""no \"way\"\n""#),
            (DeltaKind::ReasoningSummary, u32::MAX, 12, r#""""#),
            (DeltaKind::ReasoningText, 7, u32::MAX, r#""a,b\u00e9""#),
            (DeltaKind::FunctionCallArguments, 2, 0, r#""{\"q\":1}""#),
        ] {
            let text = record(kind, output_index, part, fragment);
            let read = read(&text).expect("a record");
            assert_eq!(read.kind, kind);
            assert_eq!((read.output_index, read.part), (output_index, part));
            assert_eq!(read.fragment.raw().get(), fragment);
        }
        assert_eq!(
            record(DeltaKind::OutputText, 4, 2, r#""x""#),
            "\u{1}t4,2,\"x\""
        );
    }

    #[test]
    fn each_kind_is_found_by_its_event_type() {
        for kind in DeltaKind::ALL {
            assert_eq!(DeltaKind::of(kind.event_type()), Some(kind));
            assert_eq!(DeltaKind::from_letter(kind.letter()), Some(kind));
        }
        assert_eq!(DeltaKind::of("response.output_text.done"), None);
    }

    #[test]
    fn json_and_broken_records_are_not_records() {
        let whole = record(DeltaKind::OutputText, 1, 2, r#""text""#);
        for i in 0..whole.len() {
            assert_eq!(read(&whole[..i]), None, "cut at {i}");
        }
        for text in [
            r#"{"type":"response.output_text.delta","delta":"x"}"#,
            "\u{1}x0,0,\"a\"",
            "\u{1}t,0,\"a\"",
            "\u{1}t0,-1,\"a\"",
            "\u{1}t0,4294967296,\"a\"",
            "\u{1}t00000000000,0,\"a\"",
            "\u{1}t0,0,\"a\" ",
            "\u{1}t0,0,\"a\"\"b\"",
            "\u{1}t0,0,{\"a\":1}",
            "\u{1}t0,0,\"a",
        ] {
            assert_eq!(read(text), None, "{text:?}");
        }
    }
}
