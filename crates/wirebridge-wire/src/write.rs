//! JSON written by hand where the keys are known in advance.
//!
//! `serde_json` escapes every key as it writes it, one byte at a time, and
//! the bridge's own bodies have dozens of keys: on the 3 KB Codex turn that
//! was most of what writing the Chat request and the `Response` cost. The
//! writers built on this write the same bytes serde does (compact, fields in
//! declaration order, the same numbers), the keys as the literals they are;
//! their tests hold them to serde's output.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::raw::JsonText;

/// An object being written: its members, then [`Object::close`].
pub(crate) struct Object<'o> {
    out: &'o mut Vec<u8>,
    empty: bool,
}

impl<'o> Object<'o> {
    /// Opens an object at the end of `out`.
    pub(crate) fn open(out: &'o mut Vec<u8>) -> Self {
        out.push(b'{');
        Self { out, empty: true }
    }

    /// Writes the key of the next member and hands back the output for its
    /// value. `key` is written as it is: it must need no escaping.
    // Inlined, so that a literal key's length is known where it is copied
    // and the copy can be a few moves rather than a call to `memcpy`: a
    // request has about a hundred keys.
    #[inline(always)]
    pub(crate) fn key(&mut self, key: &'static str) -> &mut Vec<u8> {
        debug_assert!(
            key.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\'),
            "{key:?} needs escaping"
        );
        let out = &mut *self.out;
        out.reserve(key.len() + 4);
        if !self.empty {
            out.push(b',');
        }
        self.empty = false;
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        out
    }

    /// A member whose value is a string known here, which needs no
    /// escaping: written as it is.
    #[inline(always)]
    pub(crate) fn name(&mut self, key: &'static str, value: &'static str) {
        debug_assert!(
            value.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\'),
            "{value:?} needs escaping"
        );
        let out = self.key(key);
        out.reserve(value.len() + 2);
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    }

    /// A member whose value is a string, escaped as serde escapes it.
    #[inline]
    pub(crate) fn str(&mut self, key: &'static str, value: &str) {
        string(self.key(key), value);
    }

    /// The value of the member whose key was just written
    /// ([`key`](Self::key)): a string, escaped as serde escapes it.
    #[inline]
    pub(crate) fn str_value(&mut self, value: &str) {
        string(self.out, value);
    }

    /// A member whose value is JSON text, copied as it is.
    #[inline]
    pub(crate) fn raw(&mut self, key: &'static str, value: &RawValue) {
        raw(self.key(key), value);
    }

    /// A member whose value is a string literal, copied as it is.
    #[inline]
    pub(crate) fn text(&mut self, key: &'static str, value: &JsonText<'_>) {
        raw(self.key(key), value.raw());
    }

    /// A member whose value is `null`.
    #[inline]
    pub(crate) fn null(&mut self, key: &'static str) {
        self.key(key).extend_from_slice(b"null");
    }

    /// A member whose value is `true` or `false`.
    #[inline]
    pub(crate) fn bool(&mut self, key: &'static str, value: bool) {
        let literal: &[u8] = if value { b"true" } else { b"false" };
        self.key(key).extend_from_slice(literal);
    }

    /// A member whose value serde writes: numbers and the rare nested
    /// value whose keys are not worth writing by hand.
    pub(crate) fn value<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) {
        serialized(self.key(key), value);
    }

    /// How many bytes the output holds: where the value just written ends.
    pub(crate) fn written(&self) -> usize {
        self.out.len()
    }

    /// Ends the object.
    pub(crate) fn close(self) {
        self.out.push(b'}');
    }
}

/// Writes `value` as a JSON string.
pub(crate) fn string(out: &mut Vec<u8>, value: &str) {
    serialized(out, value);
}

/// Copies JSON text.
pub(crate) fn raw(out: &mut Vec<u8>, value: &RawValue) {
    out.extend_from_slice(value.get().as_bytes());
}

/// Writes `items` as a JSON array, each with `write`.
pub(crate) fn array<T>(out: &mut Vec<u8>, items: &[T], mut write: impl FnMut(&T, &mut Vec<u8>)) {
    out.push(b'[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write(item, out);
    }
    out.push(b']');
}

/// Writes `value` with serde.
pub(crate) fn serialized<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing into a `Vec` cannot fail, and no value written here has a
    // `Serialize` that can.
    serde_json::to_writer(out, value).expect("the values written here always serialize");
}

/// Holds a writer to serde in debug builds and under the fuzzers: `written`
/// must be what serde writes for `value`. Every test of the crates above
/// that writes a request or a response checks this on the way. Serde's
/// output is compared as it is written, not kept: the allocation tests
/// count the same with the check as without it.
#[cfg(any(test, debug_assertions, fuzzing))]
pub(crate) fn agrees_with_serde<T: Serialize + ?Sized>(written: &[u8], value: &T) {
    /// Compares what is written to it with the text it was given.
    struct Compare<'a> {
        rest: &'a [u8],
        differs_at: Option<usize>,
        at: usize,
    }

    impl std::io::Write for Compare<'_> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.differs_at.is_none() {
                match self.rest.strip_prefix(bytes) {
                    Some(rest) => self.rest = rest,
                    None => {
                        let same = bytes.iter().zip(self.rest).take_while(|(a, b)| a == b);
                        self.differs_at = Some(self.at + same.count());
                    }
                }
            }
            self.at += bytes.len();
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let mut compare = Compare {
        rest: written,
        differs_at: None,
        at: 0,
    };
    serde_json::to_writer(&mut compare, value).expect("the values written here always serialize");
    if compare.differs_at.is_none() && !compare.rest.is_empty() {
        compare.differs_at = Some(compare.at);
    }
    if let Some(at) = compare.differs_at {
        let serde = serde_json::to_vec(value).expect("the values written here always serialize");
        panic!(
            "the JSON written by hand differs from serde's at byte {at}:\n{}\n{}",
            String::from_utf8_lossy(written),
            String::from_utf8_lossy(&serde),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_written_as_serde_writes_them() {
        let mut out = Vec::new();
        let mut object = Object::open(&mut out);
        object.str("name", "a \"quoted\"\nline\u{1}");
        object.raw(
            "schema",
            &RawValue::from_string(r#"{"a":[1,2]}"#.into()).unwrap(),
        );
        object.bool("yes", true);
        object.bool("no", false);
        object.value("float", &0.1_f64);
        object.value("nan", &f64::NAN);
        object.value("count", &u64::MAX);
        array(object.key("list"), &[1, 2, 3], |n, out| serialized(out, n));
        array(object.key("none"), &[] as &[u8], |n, out| {
            serialized(out, n)
        });
        object.close();
        let expected = serde_json::json!({
            "name": "a \"quoted\"\nline\u{1}",
            "schema": {"a": [1, 2]},
            "yes": true,
            "no": false,
            "float": 0.1,
            "nan": null,
            "count": u64::MAX,
            "list": [1, 2, 3],
            "none": [],
        });
        let serde = r#"{"name":"a \"quoted\"\nline\u0001","schema":{"a":[1,2]},"yes":true,"no":false,"float":0.1,"nan":null,"count":18446744073709551615,"list":[1,2,3],"none":[]}"#;
        assert_eq!(std::str::from_utf8(&out).unwrap(), serde);
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&out).unwrap(),
            expected
        );
    }

    #[test]
    fn the_check_finds_a_difference_anywhere() {
        let value = serde_json::json!({"a": [1, 2], "b": "text"});
        agrees_with_serde(br#"{"a":[1,2],"b":"text"}"#, &value);
        for wrong in [
            &br#"{"a":[1,2],"b":"texT"}"#[..],
            br#"{"a":[1,2],"b":"text"}}"#,
            br#"{"a":[1,2],"b":"tex"#,
            br#"{"a":[1,3],"b":"text"}"#,
            b"",
        ] {
            let caught = std::panic::catch_unwind(|| agrees_with_serde(wrong, &value));
            assert!(
                caught.is_err(),
                "{:?} passed",
                String::from_utf8_lossy(wrong)
            );
        }
    }

    #[test]
    fn an_empty_object_is_two_braces() {
        let mut out = Vec::new();
        Object::open(&mut out).close();
        assert_eq!(out, b"{}");
    }
}
