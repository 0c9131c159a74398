//! A deliberately simple reference SSE parser (and encoder) for test assertions.
//!
//! It follows the WHATWG "event stream interpretation" rules that matter for
//! the OpenAI APIs, written for obviousness rather than speed: the whole input
//! is split into lines first, then the lines are interpreted one by one.

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseFrame {
    /// The `event:` field of the frame, if any (an empty `event:` value counts
    /// as absent, as it does for a browser's `EventSource`).
    pub event: Option<String>,
    /// The `data:` lines of the frame joined with `\n`.
    pub data: String,
}

impl SseFrame {
    /// A frame with only a `data:` field (the Chat Completions shape).
    pub fn data(data: impl Into<String>) -> Self {
        SseFrame {
            event: None,
            data: data.into(),
        }
    }

    /// A frame with an `event:` name and a `data:` field (the Responses shape).
    pub fn named(event: impl Into<String>, data: impl Into<String>) -> Self {
        SseFrame {
            event: Some(event.into()),
            data: data.into(),
        }
    }
}

/// Split `bytes` into lines. Line terminators are CRLF, LF or a lone CR. The
/// last line is returned even when it has no terminator; the second value says
/// whether the input ended with a terminator.
fn lines(bytes: &[u8]) -> (Vec<&[u8]>, bool) {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&bytes[start..i]);
                i += 1;
                start = i;
            }
            b'\r' => {
                out.push(&bytes[start..i]);
                i += 1;
                if i < bytes.len() && bytes[i] == b'\n' {
                    i += 1;
                }
                start = i;
            }
            _ => i += 1,
        }
    }
    let terminated = start == bytes.len();
    if !terminated {
        out.push(&bytes[start..]);
    }
    (out, terminated)
}

/// Parse a complete SSE byte stream into frames.
///
/// * lines end with LF, CRLF or CR; a leading UTF-8 BOM is ignored;
/// * lines starting with `:` are comments and are skipped;
/// * `field:value` (one optional space after the colon is removed); a line
///   without a colon is a field with an empty value; unknown fields (`id`,
///   `retry`, anything else) are ignored;
/// * multiple `data:` lines are joined with `\n`;
/// * a blank line dispatches the frame, unless it had no `data:` line at all
///   (such frames, e.g. a lone `event:` line, are dropped);
/// * at end of input a pending frame that has data is dispatched even without
///   the final blank line (stricter parsers would drop it; tests want to see it).
///
/// Invalid UTF-8 is replaced with U+FFFD.
pub fn parse_sse(bytes: &[u8]) -> Vec<SseFrame> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let (lines, _) = lines(bytes);
    let mut frames = Vec::new();
    let mut event: Option<String> = None;
    let mut data: Option<String> = None;

    for line in lines {
        if line.is_empty() {
            if let Some(d) = data.take() {
                frames.push(SseFrame {
                    event: event.take(),
                    data: d,
                });
            }
            event = None;
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.find(':') {
            Some(pos) => {
                let value = &line[pos + 1..];
                (&line[..pos], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (&line[..], ""),
        };
        match field {
            "event" => {
                event = if value.is_empty() {
                    None
                } else {
                    Some(value.to_string())
                };
            }
            "data" => match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_string()),
            },
            _ => {}
        }
    }
    if let Some(d) = data {
        frames.push(SseFrame { event, data: d });
    }
    frames
}

/// Encode frames as SSE text: `event: NAME\n` when the frame has an event
/// name, one `data: ` line per line of `data`, then a blank line.
pub fn encode_sse(frames: &[SseFrame]) -> Vec<u8> {
    let mut out = String::new();
    for f in frames {
        if let Some(e) = &f.event {
            out.push_str("event: ");
            out.push_str(e);
            out.push('\n');
        }
        for line in f.data.split('\n') {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lf_and_crlf_and_cr() {
        let lf = parse_sse(b"event: a\ndata: 1\n\ndata: 2\n\n");
        let crlf = parse_sse(b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n");
        let cr = parse_sse(b"event: a\rdata: 1\r\rdata: 2\r\r");
        let want = vec![SseFrame::named("a", "1"), SseFrame::data("2")];
        assert_eq!(lf, want);
        assert_eq!(crlf, want);
        assert_eq!(cr, want);
    }

    #[test]
    fn multiline_data_comments_and_empty_frames() {
        let frames = parse_sse(
            b": keepalive\n\ndata: a\ndata:b\ndata\n\nevent: lonely\n\nid: 7\nretry: 5\n\n",
        );
        assert_eq!(frames, vec![SseFrame::data("a\nb\n")]);
    }

    #[test]
    fn only_one_space_is_stripped_and_bom_ignored() {
        let frames = parse_sse(b"\xEF\xBB\xBFdata:  x \n\n");
        assert_eq!(frames, vec![SseFrame::data(" x ")]);
    }

    #[test]
    fn last_frame_without_blank_line_is_dispatched() {
        let frames = parse_sse(b"data: 1\n\nevent: e\ndata: 2");
        assert_eq!(frames, vec![SseFrame::data("1"), SseFrame::named("e", "2")]);
        let frames = parse_sse(b"data: 1\n\ndata: 2\n");
        assert_eq!(frames, vec![SseFrame::data("1"), SseFrame::data("2")]);
    }

    #[test]
    fn event_name_does_not_leak_into_next_frame() {
        let frames = parse_sse(b"event: x\ndata: 1\n\ndata: 2\n\n");
        assert_eq!(frames[1].event, None);
    }

    #[test]
    fn encode_round_trips() {
        let frames = vec![
            SseFrame::named("response.created", "{\"a\":1}"),
            SseFrame::data("two\nlines"),
            SseFrame::data("[DONE]"),
        ];
        assert_eq!(parse_sse(&encode_sse(&frames)), frames);
    }
}
