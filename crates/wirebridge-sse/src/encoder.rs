//! Encoding events into server-sent event framing.
//!
//! The functions append to a caller-owned buffer so that a stream can reuse
//! one allocation for all its events. Their output is always well-formed:
//! line breaks inside data become separate `data:` lines, which decoders
//! join back with `\n`.
//!
//! ```
//! use wirebridge_sse::encoder::{encode_comment, encode_data, encode_done, encode_event};
//!
//! let mut out = Vec::new();
//! encode_event(&mut out, Some("response.created"), r#"{"type":"response.created"}"#);
//! encode_comment(&mut out, "keepalive");
//! encode_data(&mut out, "two\nlines");
//! encode_done(&mut out);
//!
//! assert_eq!(
//!     String::from_utf8(out).unwrap(),
//!     "event: response.created\n\
//!      data: {\"type\":\"response.created\"}\n\
//!      \n\
//!      : keepalive\n\
//!      data: two\n\
//!      data: lines\n\
//!      \n\
//!      data: [DONE]\n\
//!      \n"
//! );
//! ```

use crate::scan::find_line_end;

/// Appends an event: an optional `event:` line, one `data:` line per line
/// of `data`, and the blank line that dispatches it.
///
/// `data` may contain LF, CRLF or CR line breaks. A decoder gives the data
/// back with every break turned into `\n`.
///
/// Event names cannot span lines, so any CR or LF in `event` is dropped.
/// An empty name is written but reads back as no name.
pub fn encode_event(out: &mut Vec<u8>, event: Option<&str>, data: &str) {
    if let Some(name) = event {
        out.reserve(name.len() + 8);
        out.extend_from_slice(b"event: ");
        put_single_line(out, name.as_bytes());
        out.push(b'\n');
    }
    put_lines(out, b"data: ", data.as_bytes());
    out.push(b'\n');
}

/// Appends an event whose data `write` appends to `out` itself, so a
/// serializer writes straight into the frame with no buffer in between.
///
/// Framing is the same as [`encode_event`]'s: if `write` emits line breaks
/// (compact JSON never does), the data is split into `data:` lines after
/// the fact.
///
/// ```
/// use wirebridge_sse::encoder::encode_event_with;
///
/// let mut out = Vec::new();
/// encode_event_with(&mut out, Some("ping"), |out| out.extend_from_slice(b"{}"));
/// encode_event_with(&mut out, None, |out| out.extend_from_slice(b"a\nb"));
/// assert_eq!(out, b"event: ping\ndata: {}\n\ndata: a\ndata: b\n\n");
/// ```
pub fn encode_event_with(out: &mut Vec<u8>, event: Option<&str>, write: impl FnOnce(&mut Vec<u8>)) {
    if let Some(name) = event {
        out.reserve(name.len() + 8);
        out.extend_from_slice(b"event: ");
        put_single_line(out, name.as_bytes());
        out.push(b'\n');
    }
    const DATA: &[u8] = b"data: ";
    out.extend_from_slice(DATA);
    let start = out.len();
    write(out);
    if find_line_end(&out[start..]).is_some() {
        let data = out.split_off(start);
        out.truncate(start - DATA.len());
        put_lines(out, DATA, &data);
    } else {
        out.push(b'\n');
    }
    out.push(b'\n');
}

/// Appends a nameless event, the framing of Chat Completions streams:
/// `data: ...\n\n`.
pub fn encode_data(out: &mut Vec<u8>, data: &str) {
    encode_event(out, None, data);
}

/// Appends `data: [DONE]\n\n`, the sentinel that ends a Chat Completions
/// stream.
pub fn encode_done(out: &mut Vec<u8>) {
    out.extend_from_slice(b"data: [DONE]\n\n");
}

/// Appends a comment line, `: text\n`, typically as a keepalive.
///
/// Comments dispatch nothing, so no blank line follows. Text with line
/// breaks becomes one comment line per line.
pub fn encode_comment(out: &mut Vec<u8>, text: &str) {
    put_lines(out, b": ", text.as_bytes());
}

/// Writes `prefix line\n` for each line of `text`.
fn put_lines(out: &mut Vec<u8>, prefix: &[u8], text: &[u8]) {
    let Some(first_break) = find_line_end(text) else {
        out.reserve(prefix.len() + text.len() + 2);
        out.extend_from_slice(prefix);
        out.extend_from_slice(text);
        out.push(b'\n');
        return;
    };

    let mut rest = text;
    let mut at = Some(first_break);
    loop {
        let line = &rest[..at.unwrap_or(rest.len())];
        out.reserve(prefix.len() + line.len() + 2);
        out.extend_from_slice(prefix);
        out.extend_from_slice(line);
        out.push(b'\n');
        let Some(i) = at else { break };
        let width = if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') {
            2
        } else {
            1
        };
        rest = &rest[i + width..];
        at = find_line_end(rest);
    }
}

/// Writes `bytes` without its CR and LF bytes.
fn put_single_line(out: &mut Vec<u8>, mut bytes: &[u8]) {
    while let Some(i) = find_line_end(bytes) {
        out.extend_from_slice(&bytes[..i]);
        bytes = &bytes[i + 1..];
    }
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: Option<&str>, data: &str) -> String {
        let mut out = Vec::new();
        encode_event(&mut out, name, data);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn single_line() {
        assert_eq!(event(None, r#"{"a":1}"#), "data: {\"a\":1}\n\n");
        assert_eq!(event(Some("x"), "y"), "event: x\ndata: y\n\n");
        assert_eq!(event(None, ""), "data: \n\n");
    }

    #[test]
    fn every_line_break_style_splits() {
        assert_eq!(event(None, "a\nb"), "data: a\ndata: b\n\n");
        assert_eq!(event(None, "a\r\nb"), "data: a\ndata: b\n\n");
        assert_eq!(event(None, "a\rb"), "data: a\ndata: b\n\n");
        assert_eq!(event(None, "a\n\rb"), "data: a\ndata: \ndata: b\n\n");
        assert_eq!(event(None, "\n"), "data: \ndata: \n\n");
        assert_eq!(event(None, "a\r"), "data: a\ndata: \n\n");
    }

    #[test]
    fn event_name_line_breaks_are_dropped() {
        assert_eq!(event(Some("a\r\nb\n"), "x"), "event: ab\ndata: x\n\n");
    }

    #[test]
    fn data_and_done() {
        let mut out = Vec::new();
        encode_data(&mut out, "{}");
        encode_done(&mut out);
        assert_eq!(out, b"data: {}\n\ndata: [DONE]\n\n");
    }

    #[test]
    fn comments() {
        let mut out = Vec::new();
        encode_comment(&mut out, "ping");
        assert_eq!(out, b": ping\n");
        out.clear();
        encode_comment(&mut out, "a\r\nb");
        assert_eq!(out, b": a\n: b\n");
    }

    #[test]
    fn written_data_is_framed_like_given_data() {
        for data in ["", "{}", "a\nb", "a\r\nb\r", "\n"] {
            for name in [None, Some("x")] {
                let mut written = b"before".to_vec();
                encode_event_with(&mut written, name, |out| {
                    out.extend_from_slice(data.as_bytes())
                });
                let mut given = b"before".to_vec();
                encode_event(&mut given, name, data);
                assert_eq!(written, given, "{name:?} {data:?}");
            }
        }
    }

    #[test]
    fn appends_without_clearing() {
        let mut out = b"prefix".to_vec();
        encode_data(&mut out, "x");
        assert_eq!(out, b"prefixdata: x\n\n");
    }
}
