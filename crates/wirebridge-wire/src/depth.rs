//! How deep a JSON text nests, without parsing it.
//!
//! serde_json stops at 128 levels for the values it parses into types, but
//! not for values it keeps raw (a tool's JSON Schema, `metadata`, arguments
//! sent as objects): those would be forwarded however deep they are, to
//! upstream parsers that may not stop. [`too_deep`] checks a whole body in
//! one pass over its bytes; [`survey`] does the same and, in that pass, also
//! tells whether the body is compact, so that its raw values need no
//! compacting of their own.

use std::fmt::Write as _;

/// The nesting limit the translators enforce, as serde_json does for the
/// values it parses.
pub const MAX_DEPTH: usize = 128;

/// The path of the first value in `json` that nests deeper than `limit`
/// arrays and objects (`tools[0].parameters.properties…`), or `None` when
/// nothing does. The path is built only when the limit is exceeded.
///
/// ```
/// use wirebridge_wire::depth::too_deep;
///
/// assert_eq!(too_deep(br#"{"a":[1,{"b":"[[[["}]}"#, 3), None);
/// let deep = format!(r#"{{"tools":[{{"parameters":{}}}]}}"#, "[".repeat(10) + &"]".repeat(10));
/// assert_eq!(too_deep(deep.as_bytes(), 8).as_deref(), Some("tools[0].parameters[0][0][0][0][0]"));
/// ```
pub fn too_deep(json: &[u8], limit: usize) -> Option<String> {
    survey(json, limit).too_deep
}

/// What one pass over a JSON text finds: how deep it nests, and whether it
/// holds whitespace outside its strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Survey {
    /// The path of the first value nesting deeper than the limit, as
    /// [`too_deep`] names it, or `None`.
    pub too_deep: Option<String>,
    /// Whether the text holds no whitespace outside its strings, so that
    /// every value in it is already compact. Only known for a text within
    /// the limit (`false` otherwise).
    pub compact: bool,
}

/// Checks `json` against `limit` as [`too_deep`] does and, in the same
/// pass, whether it is compact.
///
/// ```
/// use wirebridge_wire::depth::survey;
///
/// assert!(survey(br#"{"a":["x y"]}"#, 8).compact);
/// assert!(!survey(br#"{"a": 1}"#, 8).compact);
/// ```
pub fn survey(json: &[u8], limit: usize) -> Survey {
    match scan(json, limit) {
        Some(padded) => Survey {
            too_deep: None,
            compact: !padded,
        },
        None => Survey {
            too_deep: Some(path_at_limit(json, limit)),
            compact: false,
        },
    }
}

/// Whether `json` nests deeper than `limit`.
#[cfg(test)]
fn exceeds(json: &[u8], limit: usize) -> bool {
    scan(json, limit).is_none()
}

/// Walks `json`, strings skipped and brackets counted: `None` when it nests
/// deeper than `limit`, else whether it has whitespace outside its strings.
fn scan(json: &[u8], limit: usize) -> Option<bool> {
    let mut depth = 0usize;
    let mut padded = false;
    let mut at = 0;
    while let Some(&b) = json.get(at) {
        at += 1;
        match b {
            b'"' => at = string_end(json, at),
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return None;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b' ' | b'\n' | b'\r' | b'\t' => padded = true,
            _ => {}
        }
    }
    Some(padded)
}

/// Where the string whose text starts at `at` ends: just past its closing
/// quote (or the end of `json`, for one that is not closed).
fn string_end(json: &[u8], mut at: usize) -> usize {
    loop {
        at = quote_or_backslash(json, at);
        match json.get(at) {
            Some(b'"') => return at + 1,
            // A backslash: the byte after it is escaped.
            Some(_) => at += 2,
            None => return json.len(),
        }
    }
}

/// The first `"` or `\` at or after `at`, or the end of `json`.
///
/// Strings are most of a request (prompts, tool output, schemas' text), so
/// they are skipped eight bytes at a time: a word holds one of the two
/// bytes when XOR with that byte repeated leaves a zero byte, which the
/// classic `(x - 0x01…) & !x & 0x80…` finds. That expression flags the
/// lowest zero byte exactly (bytes above it may be flagged spuriously), so
/// the lowest flag, read in little-endian order, is the first match.
fn quote_or_backslash(json: &[u8], mut at: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    while let Some(chunk) = json.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let found = zero_byte(word ^ QUOTES) | zero_byte(word ^ BACKSLASHES);
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let rest = json.get(at..).unwrap_or_default();
    match rest.iter().position(|&b| b == b'"' || b == b'\\') {
        Some(n) => at + n,
        None => json.len(),
    }
}

/// Where a container sits in its parent.
enum Step {
    /// In an object, under the last key read (none yet at first).
    Object(Option<String>),
    /// In an array, at this element.
    Array(usize),
}

/// Walks `json` again, keeping the path, up to the first container past
/// `limit` (the slow path: only for a body already known to be too deep).
fn path_at_limit(json: &[u8], limit: usize) -> String {
    let mut stack: Vec<Step> = Vec::new();
    let mut i = 0;
    // In an object, whether the next string is a key.
    let mut expect_key = false;
    while i < json.len() {
        match json[i] {
            b'"' => {
                let start = i + 1;
                let mut end = start;
                while end < json.len() && json[end] != b'"' {
                    end += if json[end] == b'\\' { 2 } else { 1 };
                }
                if expect_key {
                    if let Some(Step::Object(key)) = stack.last_mut() {
                        let raw = &json[start..end.min(json.len())];
                        *key = Some(String::from_utf8_lossy(raw).into_owned());
                    }
                    expect_key = false;
                }
                i = end;
            }
            open @ (b'{' | b'[') => {
                if stack.len() == limit {
                    return render(&stack);
                }
                let step = if open == b'{' {
                    expect_key = true;
                    Step::Object(None)
                } else {
                    Step::Array(0)
                };
                stack.push(step);
            }
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
            }
            b',' => match stack.last_mut() {
                Some(Step::Array(n)) => *n += 1,
                Some(Step::Object(_)) => expect_key = true,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    render(&stack)
}

/// A path as a client names a field: `a.b[2].c`, the start of a very deep
/// one only.
fn render(stack: &[Step]) -> String {
    const SHOWN: usize = 12;
    let mut out = String::new();
    for step in stack.iter().take(SHOWN) {
        match step {
            Step::Object(Some(key)) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Object(None) => {}
            Step::Array(n) => {
                let _ = write!(out, "[{n}]");
            }
        }
    }
    if stack.len() > SHOWN {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_in_strings_and_escapes_do_not_count() {
        let json = br#"{"s":"{{{{\"[[[[","t":["\\",{"u":1}]}"#;
        assert!(!exceeds(json, 3));
        assert!(exceeds(json, 2));
        assert_eq!(too_deep(json, 2).as_deref(), Some("t[1]"));
    }

    #[test]
    fn strings_end_where_a_byte_scan_says_at_every_alignment() {
        // The same walk, one byte at a time.
        fn byte_by_byte(json: &[u8], mut at: usize) -> usize {
            while at < json.len() {
                match json[at] {
                    b'"' => return at + 1,
                    b'\\' => at += 2,
                    _ => at += 1,
                }
            }
            json.len()
        }
        let texts: [&[u8]; 6] = [
            br#"plain text that runs past a word" tail"#,
            br#"esc\"aped \\" quote"#,
            br#"\\\\\\\\\"#,
            "multi-byte ☃ é \\\" and more\"".as_bytes(),
            b"unclosed and long, longer than a word",
            br#"ends on a backslash\"#,
        ];
        for text in texts {
            for pad in 0..9 {
                let mut json = vec![b' '; pad];
                json.extend_from_slice(text);
                for start in 0..json.len() {
                    assert_eq!(
                        string_end(&json, start),
                        byte_by_byte(&json, start),
                        "{:?} from {start}",
                        String::from_utf8_lossy(&json)
                    );
                }
            }
        }
    }

    #[test]
    fn names_the_path_of_a_deep_schema() {
        let mut schema = String::from(r#"{"type":"object","properties":{"x":"#);
        for _ in 0..200 {
            schema.push_str(r#"{"items":"#);
        }
        schema.push_str("null");
        schema.push_str(&"}".repeat(200));
        schema.push_str("}}");
        let body = format!(
            r#"{{"model":"m","tools":[{{"type":"function","name":"f"}},{{"type":"function","name":"g","parameters":{schema}}}]}}"#
        );
        let path = too_deep(body.as_bytes(), MAX_DEPTH).unwrap();
        assert!(
            path.starts_with("tools[1].parameters.properties.x.items.items"),
            "{path}"
        );
        assert!(path.ends_with('…'), "{path}");
        assert_eq!(too_deep(body.as_bytes(), 300), None);
    }

    #[test]
    fn tells_compact_text_from_padded() {
        assert!(survey(br#"{"s":" \n\t","t":[1,{"u":"a b"}]}"#, 8).compact);
        for padded in [&br#"{"a": 1}"#[..], b"[1,\n2]", b"\t[]", b"[]\r\n"] {
            let found = survey(padded, 8);
            assert_eq!((found.too_deep, found.compact), (None, false));
        }
        let deep = survey(b"[[[]]]", 2);
        assert_eq!(
            (deep.too_deep.as_deref(), deep.compact),
            (Some("[0][0]"), false)
        );
    }

    #[test]
    fn a_hundred_thousand_levels_take_one_pass() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(
            too_deep(deep.as_bytes(), MAX_DEPTH).as_deref(),
            Some("[0][0][0][0][0][0][0][0][0][0][0][0]…")
        );
    }
}
