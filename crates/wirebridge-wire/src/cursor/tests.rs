//! The cursor against serde, value by value.

use super::*;
use wirebridge_testkit::mutate::{edit, Rng};

/// Steps over any scalar, object or array the cursor can read.
fn skip_any(c: &mut JsonCursor<'_>) -> Option<()> {
    match c.peek()? {
        b'{' => c.object(|c, _| skip_any(c)),
        b'[' => c.array(skip_any),
        _ => c.skip_scalar(),
    }
}

/// The cast's one assumption, checked on the serde_json in use: the raw
/// value is the input's own bytes (same address, same length), and it
/// is what serde_json's own borrowing parse makes of the same text.
#[test]
fn raw_unchecked_keeps_the_text() {
    let body = r#"{"a":[1,{"b":"\u00e9\n"}],"c":null} "#;
    let inner = &body[5..25];
    for json in [
        "0",
        "null",
        "\"x\"",
        "[1,2,3]",
        &body[..body.len() - 1],
        inner,
    ] {
        let raw = raw_unchecked(json);
        assert_eq!(raw.get(), json);
        assert_eq!(raw.get().as_ptr(), json.as_ptr(), "{json}");
        assert_eq!(raw.get().len(), json.len(), "{json}");
        let parsed: &RawValue = serde_json::from_str(json).expect(json);
        assert_eq!(parsed.get().as_ptr(), json.as_ptr(), "{json}");
        assert_eq!(parsed.get(), raw.get());
    }
    assert_eq!(
        std::mem::size_of::<&RawValue>(),
        std::mem::size_of::<&str>()
    );
}

fn accepts(text: &str) -> bool {
    let mut c = JsonCursor::new(text);
    skip_any(&mut c).and_then(|()| c.end()).is_some()
}

#[test]
fn reads_what_it_handles() {
    for text in [
        r#"{"a":1,"b":"x\n\u00e9\"\ud83d\ude00","c":[true,false,null],"d":{}}"#,
        " [ -0.5e+3 , 10 , 0 , \"\" ] ",
        r#"{"k":{"n":[[],{}]}}"#,
    ] {
        assert!(accepts(text), "{text}");
    }
}

#[test]
fn gives_up_on_what_serde_rejects_or_it_does_not_handle() {
    for text in [
        r#"{"a":01}"#,
        r#"{"a":1.}"#,
        r#"{"a":-}"#,
        r#"{"a":"x\q"}"#,
        r#"{"a":"\ud800"}"#,
        r#"{"a":"\udc00\ud800"}"#,
        r#"{"a":"\ud800\u0041"}"#,
        "{\"a\":\"tab\there\"}",
        r#"{"a\"b":1}"#,
        r#"{"a":1,}"#,
        r#"[1,]"#,
        r#"{"a":nul}"#,
        r#"{"a":1} x"#,
        r#"{"a":1"#,
        r#"{"a" 1}"#,
    ] {
        assert!(!accepts(text), "{text}");
    }
}

#[test]
fn accepts_only_what_serde_accepts() {
    // Mutations of a chunk: wherever the cursor reads one through,
    // serde_json must read it too.
    let base = r#"{"id":"c-1","created":17,"x":[1.5e3,-2,true],"s":"a\"b\u00e9","n":null,"o":{"k":false}}"#;
    let alphabet = b"{}[]\":,\\ 0123456789.eE+-tfnulrsabx\x01";
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15_u64);
    let mut accepted = 0;
    for _ in 0..50_000 {
        let edits = 1 + rng.below(3);
        let bytes = edit(base.as_bytes(), alphabet, edits, &mut rng);
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if accepts(text) {
            assert!(
                serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok(),
                "{text}"
            );
            accepted += 1;
        }
    }
    assert!(accepted > 5_000, "{accepted}");
}

#[test]
fn reads_strings_and_counts() {
    let mut c = JsonCursor::new(r#" "plain" "esc\"aped" 1234 0 01 "#);
    assert_eq!(c.plain_str(), Some("plain"));
    assert_eq!(c.clone().plain_str(), None);
    assert_eq!(c.str_literal(), Some(r#""esc\"aped""#));
    assert_eq!(c.u64(), Some(1234));
    assert_eq!(c.u64(), Some(0));
    assert_eq!(c.u64(), None);
    let long = format!("\"{}\"", "x".repeat(37));
    assert_eq!(JsonCursor::new(&long).plain_str().map(str::len), Some(37));
    assert_eq!(JsonCursor::new("18446744073709551616").u64(), None);
}

#[test]
fn reads_empty_arrays_only() {
    assert_eq!(
        JsonCursor::new("[]").empty_array().map(RawValue::get),
        Some("[]")
    );
    assert_eq!(
        JsonCursor::new(" [ \n] ").empty_array().map(RawValue::get),
        Some("[ \n]")
    );
    for text in ["[1]", "[", "{}", "[,]", "null"] {
        assert!(JsonCursor::new(text).empty_array().is_none(), "{text}");
    }
}

#[test]
fn skips_plain_bytes_as_a_byte_walk_does() {
    // Every stop byte at every offset of a word, after plain ASCII and
    // after bytes that are not ASCII (whose high bit the word test
    // must not take for a match).
    let walk = |bytes: &[u8], i: usize| {
        (i..bytes.len())
            .find(|&j| matches!(bytes[j], b'"' | b'\\' | 0..=0x1f))
            .unwrap_or(bytes.len())
    };
    for filler in [b'a', 0xc3, 0x7f, 0x20, 0x5b, 0x5d, 0xff] {
        for stop in [b'"', b'\\', 0x00, 0x0a, 0x1f] {
            for len in 0..40 {
                for at in 0..=len {
                    let mut bytes = vec![filler; len];
                    if at < len {
                        bytes[at] = stop;
                    }
                    for from in [0, 1.min(len), 3.min(len)] {
                        assert_eq!(skip_plain(&bytes, from), walk(&bytes, from));
                    }
                }
            }
        }
    }
}
#[test]
fn steps_over_known_values_and_passes_by_what_is_not_one() {
    let text = r#"{"a":{"x":[1,2]},"b":"s\"t","c":[3,{"d":null}]}"#;
    let at = |value: &str| {
        let start = text.find(value).unwrap();
        start..start + value.len()
    };
    let read = |known: &[std::ops::Range<usize>]| {
        let mut c = JsonCursor::knowing(text, known);
        let mut values = Vec::new();
        c.object(|c, key| {
            let value = match key {
                "b" => c.json_str().map(|s| s.raw().get().to_owned()),
                _ => c.raw().map(|r| r.get().to_owned()),
            };
            values.push(value?);
            Some(())
        })?;
        c.end()?;
        Some((values, c.known.len()))
    };
    let (looked, _) = read(&[]).unwrap();
    assert_eq!(looked, [r#"{"x":[1,2]}"#, r#""s\"t""#, r#"[3,{"d":null}]"#]);
    // Each known value stepped over, and used up.
    let known = [
        at(r#"{"x":[1,2]}"#),
        at(r#""s\"t""#),
        at(r#"[3,{"d":null}]"#),
    ];
    assert_eq!(read(&known), Some((looked.clone(), 0)));
    // One where no value starts and one inside a value: passed by; one
    // past the text: never reached.
    let inner = at(r#"[1,2]"#);
    let beyond = text.len() + 1..text.len() + 9;
    assert_eq!(read(&[at(":"), inner, beyond]), Some((looked.clone(), 1)));
    // One that ends inside a character: passed by (and one past the text,
    // never reached).
    let multibyte = "{\"a\":\"é\"}";
    let inside = [5..7, 20..30];
    let mut c = JsonCursor::knowing(multibyte, &inside);
    let mut value = None;
    c.object(|c, _| c.json_str().map(|s| value = Some(s.raw().get())))
        .unwrap();
    assert_eq!(value, Some("\"é\""));
    // A known value is trusted: told short, the reader sees less.
    let short = at(r#"{"x":[1,2]}"#);
    let told_short = short.start..short.end - 1;
    assert_eq!(read(&[told_short, beyond_all(text)]), None);
}

/// A range past the end of `text`.
fn beyond_all(text: &str) -> std::ops::Range<usize> {
    text.len() + 1..text.len() + 2
}
