//! [`RawObject`]: a JSON object patched without decoding its values.

use std::borrow::Cow;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::cursor::JsonCursor;
use crate::Str;

/// A JSON object as its keys and raw values, in order.
///
/// Echoing what a client sent with a key filled in or removed needs no
/// `serde_json::Value`: the values stay the borrowed JSON text they were,
/// and only the keys are read.
///
/// ```
/// use serde_json::value::RawValue;
/// use wirebridge_wire::RawObject;
///
/// let raw: &RawValue = serde_json::from_str(r#"{"type":"function","name":"f","strict":null}"#).unwrap();
/// let mut tool = RawObject::parse(raw).unwrap();
/// assert_eq!(tool.str("type"), Some("function"));
/// tool.set_if_null("strict", "false");
/// tool.set_if_absent("parameters", "null");
/// assert_eq!(
///     tool.to_raw().get(),
///     r#"{"type":"function","name":"f","strict":false,"parameters":null}"#
/// );
/// ```
#[derive(Debug, Clone, Default)]
pub struct RawObject<'a> {
    fields: Vec<(Str<'a>, Cow<'a, RawValue>)>,
}

impl<'a> RawObject<'a> {
    /// Reads an object; anything else is an error.
    pub fn parse(raw: &'a RawValue) -> Result<Self, serde_json::Error> {
        match Self::read(raw.get()) {
            Some(object) => Ok(object),
            None => serde_json::from_str(raw.get()),
        }
    }

    /// Reads an object from JSON text not yet known to be JSON; anything
    /// else is an error, serde's (a syntax error, or a value of another
    /// type).
    pub fn parse_str(text: &'a str) -> Result<Self, serde_json::Error> {
        match Self::read(text) {
            Some(object) => Ok(object),
            None => serde_json::from_str(text),
        }
    }

    /// Reads an object in one pass with the [`JsonCursor`], its values
    /// stepped over rather than parsed; `None` for serde to read (a key with
    /// an escape, nesting past the limit, anything but an object). A
    /// backend's `Response` is read this way on every turn the bridge keeps
    /// state for: with serde's raw values it cost 39 K instructions of the
    /// turn's 309 K (see docs/performance-journal.md, "The stateful engine").
    fn read(text: &'a str) -> Option<Self> {
        let mut cursor = JsonCursor::new(text);
        let mut fields = Vec::with_capacity(8);
        cursor.object(|c, key| {
            fields.push((Str::from(key), Cow::Borrowed(c.raw()?)));
            Some(())
        })?;
        cursor.end()?;
        Some(RawObject { fields })
    }

    /// An empty object with room for `fields` fields.
    pub(crate) fn with_capacity(fields: usize) -> Self {
        RawObject {
            fields: Vec::with_capacity(fields),
        }
    }

    /// Appends `key` without looking for an earlier one: for a reader that
    /// keeps every field as it comes, as [`RawObject::parse`] does.
    pub(crate) fn push(&mut self, key: &'a str, value: &'a RawValue) {
        self.fields.push((Str::from(key), Cow::Borrowed(value)));
    }

    /// The raw value of `key` (the first, if the key is repeated).
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// The value of `key`, if it is a string without escapes.
    pub fn str(&self, key: &str) -> Option<&str> {
        let value = self.get(key)?.get();
        let inner = value.strip_prefix('"')?.strip_suffix('"')?;
        (!inner.contains('\\')).then_some(inner)
    }

    /// The value of `key`, if it is a string without escapes, borrowed
    /// from the text the object was read from (not from the object), so
    /// that it outlives the object: `None` as well for a value set since.
    pub fn borrowed_str(&self, key: &str) -> Option<&'a str> {
        let (_, value) = self.fields.iter().find(|(k, _)| k == key)?;
        let Cow::Borrowed(value) = value else {
            return None;
        };
        let inner = value.get().strip_prefix('"')?.strip_suffix('"')?;
        (!inner.contains('\\')).then_some(inner)
    }

    /// Sets `key` to `json` (a JSON text, such as `false` or `{}`),
    /// replacing its value or adding it at the end.
    ///
    /// # Panics
    ///
    /// If `json` is not valid JSON: values come from the code, not input.
    pub fn set(&mut self, key: &'a str, json: &str) {
        let value = Cow::Owned(RawValue::from_string(json.to_owned()).expect("valid JSON"));
        self.put(key, value);
    }

    /// Puts `value` at the first `key`, and removes any repeat of it: JSON
    /// readers differ on which of two equal keys wins (serde_json keeps
    /// the last, this type reads the first), so a value set here must be
    /// the only one.
    fn put(&mut self, key: &'a str, value: Cow<'a, RawValue>) {
        match self.fields.iter().position(|(k, _)| k == key) {
            Some(at) => {
                self.fields[at].1 = value;
                let mut n = 0;
                self.fields.retain(|(k, _)| {
                    n += 1;
                    n <= at + 1 || k != key
                });
            }
            None => self.fields.push((Str::from(key), value)),
        }
    }

    /// Sets `key` to `json` unless it is there already.
    pub fn set_if_absent(&mut self, key: &'a str, json: &str) {
        if self.get(key).is_none() {
            self.set(key, json);
        }
    }

    /// Sets `key` to `json` when it is absent or `null`.
    pub fn set_if_null(&mut self, key: &'a str, json: &str) {
        if self.get(key).is_none_or(|v| v.get() == "null") {
            self.set(key, json);
        }
    }

    /// Sets `key` to a value written elsewhere.
    pub fn set_raw(&mut self, key: &'a str, value: Box<RawValue>) {
        self.put(key, Cow::Owned(value));
    }

    /// Sets `key` to a value borrowed from elsewhere.
    pub fn set_borrowed(&mut self, key: &'a str, value: &'a RawValue) {
        self.put(key, Cow::Borrowed(value));
    }

    /// The keys and their raw values, in the order they were written.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &RawValue)> {
        self.fields.iter().map(|(k, v)| (k.as_str(), v.as_ref()))
    }

    /// Removes every `key`.
    pub fn remove(&mut self, key: &str) {
        self.fields.retain(|(k, _)| k != key);
    }

    /// Writes the object as JSON text, as serde_json writes it (values as
    /// they are, no whitespace between fields).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        self.write_fields(out, None);
    }

    /// [`write_json`](Self::write_json) with `key` written as `json`: in the
    /// place of its first occurrence (repeats left out), or last when the
    /// object has none. `json` is written as it is, not read: the caller
    /// vouches that it is one JSON value (a body the bridge has just
    /// assembled from values it read whole), which debug builds check.
    ///
    /// ```
    /// use wirebridge_wire::RawObject;
    ///
    /// let raw = serde_json::from_str(r#"{"model":"m","input":"hi","n":1}"#).unwrap();
    /// let request = RawObject::parse(raw).unwrap();
    /// let mut body = Vec::new();
    /// request.write_with(&mut body, "input", r#"[{"role":"user","content":"hi"}]"#);
    /// assert_eq!(body, br#"{"model":"m","input":[{"role":"user","content":"hi"}],"n":1}"#);
    /// ```
    pub fn write_with(&self, out: &mut Vec<u8>, key: &str, json: &str) {
        debug_assert!(
            serde_json::from_str::<&RawValue>(json).is_ok(),
            "not one JSON value: {json}"
        );
        self.write_fields(out, Some((key, json)));
    }

    fn write_fields(&self, out: &mut Vec<u8>, replaced: Option<(&str, &str)>) {
        out.push(b'{');
        let mut pending = replaced;
        for (key, value) in &self.fields {
            let value = match replaced {
                Some((name, _)) if key == name => match pending.take() {
                    Some((_, json)) => json,
                    None => continue,
                },
                _ => value.get(),
            };
            if out.len() > 1 {
                out.push(b',');
            }
            write_key(out, key.as_str());
            out.extend_from_slice(value.as_bytes());
        }
        if let Some((key, json)) = pending {
            if out.len() > 1 {
                out.push(b',');
            }
            write_key(out, key);
            out.extend_from_slice(json.as_bytes());
        }
        out.push(b'}');
    }

    /// The object as JSON text.
    pub fn to_raw(&self) -> Box<RawValue> {
        serde_json::value::to_raw_value(self).expect("raw objects always serialize")
    }
}

/// `"key":`, escaped as serde_json escapes it.
fn write_key(out: &mut Vec<u8>, key: &str) {
    if key.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        serde_json::to_writer(&mut *out, key).expect("strings serialize");
    } else {
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.push(b'"');
    }
    out.push(b':');
}

impl Serialize for RawObject<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.fields.len()))?;
        for (key, value) in &self.fields {
            map.serialize_entry(key.as_str(), value.as_ref())?;
        }
        map.end()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawObject<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;

        impl<'de> Visitor<'de> for Fields {
            type Value = RawObject<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some((key, value)) = map.next_entry::<Str<'de>, &'de RawValue>()? {
                    fields.push((key, Cow::Borrowed(value)));
                }
                Ok(RawObject { fields })
            }
        }

        d.deserialize_map(Fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(json: &str) -> RawObject<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_borrowed_str_outlives_its_object_and_a_set_value_is_none() {
        let text = r#"{"type":"response.output_text.delta","item_id":"m\u0031","n":1}"#;
        let kind = {
            let mut event = RawObject::parse_str(text).unwrap();
            event.set("n", "2");
            assert_eq!(event.borrowed_str("n"), None);
            // Escaped: read as `str` reads it, not at all.
            assert_eq!(event.borrowed_str("item_id"), None);
            event.borrowed_str("type").unwrap()
        };
        assert_eq!(kind, "response.output_text.delta");
    }

    #[test]
    fn keeps_order_values_and_escapes() {
        let o = object(r#"{ "b" : [1, 2], "a\"k": {"x": "y\n"}, "n": null }"#);
        assert_eq!(
            o.to_raw().get(),
            r#"{"b":[1, 2],"a\"k":{"x": "y\n"},"n":null}"#
        );
        assert_eq!(o.get("n").map(RawValue::get), Some("null"));
        assert_eq!(o.str("b"), None);
    }

    #[test]
    fn patches_keys() {
        let mut o = object(r#"{"type":"approximate","city":"Paris","strict":null}"#);
        o.remove("type");
        o.set_if_null("strict", "false");
        o.set_if_absent("city", "\"Lyon\"");
        o.set("extra", "{}");
        assert_eq!(
            o.to_raw().get(),
            r#"{"city":"Paris","strict":false,"extra":{}}"#
        );
    }

    #[test]
    fn a_value_set_is_the_only_one_of_its_key() {
        // Which of two equal keys counts depends on the reader: a value
        // the bridge sets replaces every one.
        let raw = r#"{"item_id":"a","x":1,"item_id":"b","item_id":"c"}"#;
        let mut o = object(raw);
        o.set("item_id", r#""mine""#);
        assert_eq!(o.to_raw().get(), r#"{"item_id":"mine","x":1}"#);
        let mut o = object(raw);
        o.set_raw("item_id", RawValue::from_string("2".into()).unwrap());
        assert_eq!(o.to_raw().get(), r#"{"item_id":2,"x":1}"#);
        let value = RawValue::from_string("3".into()).unwrap();
        let mut o = object(raw);
        o.set_borrowed("item_id", &value);
        assert_eq!(o.to_raw().get(), r#"{"item_id":3,"x":1}"#);
    }

    fn show(object: RawObject<'_>) -> String {
        format!("{:?}", object.fields().collect::<Vec<_>>())
    }

    #[test]
    fn reads_what_serde_reads() {
        // An escaped key is serde's to read, and reads the same.
        let escaped = r#"{"k\u0065y":true,"a":1}"#;
        assert!(RawObject::read(escaped).is_none());
        let raw: &RawValue = serde_json::from_str(escaped).unwrap();
        assert_eq!(show(RawObject::parse(raw).unwrap()), show(object(escaped)));
        // Whatever the cursor reads, serde reads the same, for mutations of
        // a backend's reply.
        let base = r#"{"id":"resp_1","output":[{"type":"message","content":[{"text":"a\"b"}]}],"usage":{"input_tokens":3},"n":null,"n":1.5e3, "t" : [ ] }"#;
        let alphabet = b"{}[]\":,\\ 0123456789.eE+-tfnulrsax";
        let mut rng = wirebridge_testkit::mutate::Rng(0x853c_49e6_748f_ea9b);
        let mut read = 0;
        for round in 0..20_000 {
            let bytes = match round {
                0 => base.as_bytes().to_vec(),
                _ => wirebridge_testkit::mutate::edit(
                    base.as_bytes(),
                    alphabet,
                    1 + rng.below(3),
                    &mut rng,
                ),
            };
            let Ok(text) = std::str::from_utf8(&bytes) else {
                continue;
            };
            let Some(fast) = RawObject::read(text) else {
                continue;
            };
            let serde = serde_json::from_str::<RawObject<'_>>(text)
                .unwrap_or_else(|e| panic!("read what serde refuses ({e}): {text}"));
            assert_eq!(show(fast), show(serde), "{text}");
            read += 1;
        }
        assert!(read > 2_000, "{read}");
    }

    #[test]
    fn writes_what_serde_writes() {
        for json in [
            "{}",
            r#"{ "b" : [1, 2], "a\"k": {"x": "y\n"}, "\u0001": null, "n": null }"#,
            r#"{"input":1,"x":2,"input":3}"#,
        ] {
            let o = object(json);
            let mut written = Vec::new();
            o.write_json(&mut written);
            assert_eq!(written, serde_json::to_vec(&o).unwrap(), "{json}");
        }
        // The value written in place of a key is its only one, where the
        // first was, or last.
        let o = object(r#"{"input":1,"x":2,"input":3}"#);
        let mut written = Vec::new();
        o.write_with(&mut written, "input", "[true]");
        assert_eq!(written, br#"{"input":[true],"x":2}"#);
        written.clear();
        o.write_with(&mut written, "y", "\"z\"");
        assert_eq!(written, br#"{"input":1,"x":2,"input":3,"y":"z"}"#);
        written.clear();
        object("{}").write_with(&mut written, "y", "0");
        assert_eq!(written, br#"{"y":0}"#);
    }

    #[test]
    fn only_objects_parse() {
        assert!(serde_json::from_str::<RawObject<'_>>("[1]").is_err());
        assert!(
            serde_json::from_str::<RawObject<'_>>("{}")
                .unwrap()
                .to_raw()
                .get()
                == "{}"
        );
    }
}
