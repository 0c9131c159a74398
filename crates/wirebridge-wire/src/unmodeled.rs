//! A walk over a request body that names the fields its types do not model.
//!
//! serde ignores the keys a type does not declare, and so do the
//! single-pass readers: a field a client sends that the bridge has never
//! heard of would otherwise vanish without a word. Each dialect lists the
//! fields its request types model (a [`Field`] list per type, held to the
//! type's own serde fields by a test); the walk follows those lists
//! through a body and names every other key by its JSON path, for the
//! translator to report as its loss policy says.
//!
//! A body with nothing to report is walked once, allocating nothing; the
//! paths are written out only when something was found, in a second walk.

use serde_json::Value;

use crate::cursor::JsonCursor;

/// What a field holds, as far as the walk looks into it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// A value read whole (a scalar, or kept raw): not looked into.
    Whole,
    /// An object with these fields (anything else is not looked into).
    Object(&'static [Field]),
    /// An array of objects with these fields (a string, or any other
    /// value, is not looked into).
    Objects(&'static [Field]),
    /// An array of objects of a type that holds itself (a namespace's
    /// tools are tools): its fields, given by a function so that a list
    /// can name itself.
    ObjectsOf(fn() -> &'static [Field]),
}

/// One field a type models: its name and what it holds.
pub(crate) type Field = (&'static str, Shape);

/// The JSON paths of the fields in `body` that the types behind `fields`
/// do not model (`input[3].foo`, `tools[1].bar`), in the order they come.
/// A field set to `null` is absent, as everywhere in the readers. A value
/// of a shape the types do not take is not looked into: parsing the body
/// refuses it.
pub(crate) fn unmodeled_fields(body: &[u8], fields: &'static [Field]) -> Vec<String> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Vec::new();
    };
    let mut found = false;
    let mut cursor = JsonCursor::new(text);
    let walked = Walk::noting(&mut found)
        .object(&mut cursor, fields)
        .and_then(|()| cursor.end())
        .is_some();
    if walked && !found {
        return Vec::new();
    }
    let mut paths = Vec::new();
    if walked {
        let mut walk = Walk::naming(&mut paths);
        let mut cursor = JsonCursor::new(text);
        if walk
            .object(&mut cursor, fields)
            .and_then(|()| cursor.end())
            .is_some()
        {
            return paths;
        }
        paths.clear();
    }
    // The cursor gives up on what it does not handle (an escaped key);
    // serde's tree takes anything that is JSON. What is not is refused
    // when the body is parsed.
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        Walk::naming(&mut paths).value_object(&value, fields);
    }
    paths
}

/// Steps over one value of `shape`, telling whether it holds a field the
/// types do not model; `None` when the cursor does not handle the value
/// (the reader then leaves the body to serde).
pub(crate) fn skip_noting(c: &mut JsonCursor<'_>, shape: Shape) -> Option<bool> {
    let mut found = false;
    Walk::noting(&mut found).value(c, shape)?;
    Some(found)
}

/// Where a walk writes what it finds.
enum Found<'w> {
    /// Only whether anything was found: no path is kept.
    Any(&'w mut bool),
    /// Each path.
    Paths(&'w mut Vec<String>),
}

/// A walk's place in the body, and what it found. The path is one buffer
/// grown and cut back as the walk goes in and out; a walk that only
/// notes never writes it.
struct Walk<'w> {
    path: String,
    found: Found<'w>,
}

impl<'w> Walk<'w> {
    fn noting(found: &'w mut bool) -> Self {
        Self {
            path: String::new(),
            found: Found::Any(found),
        }
    }

    fn naming(paths: &'w mut Vec<String>) -> Self {
        Self {
            path: String::new(),
            found: Found::Paths(paths),
        }
    }

    /// Runs `inside` with `.key` (or `key` at the top) added to the path.
    fn member<T>(&mut self, key: &str, inside: impl FnOnce(&mut Self) -> T) -> T {
        if matches!(self.found, Found::Any(_)) {
            return inside(self);
        }
        let len = self.path.len();
        if len > 0 {
            self.path.push('.');
        }
        self.path.push_str(key);
        let out = inside(self);
        self.path.truncate(len);
        out
    }

    /// Runs `inside` with `[index]` added to the path.
    fn element<T>(&mut self, index: usize, inside: impl FnOnce(&mut Self) -> T) -> T {
        use std::fmt::Write;
        if matches!(self.found, Found::Any(_)) {
            return inside(self);
        }
        let len = self.path.len();
        write!(self.path, "[{index}]").expect("writing to a String cannot fail");
        let out = inside(self);
        self.path.truncate(len);
        out
    }

    /// Records the field at `key`.
    fn unmodeled(&mut self, key: &str) {
        match &mut self.found {
            Found::Any(found) => **found = true,
            Found::Paths(_) => self.member(key, |walk| {
                if let Found::Paths(paths) = &mut walk.found {
                    paths.push(walk.path.clone());
                }
            }),
        }
    }

    fn object(&mut self, c: &mut JsonCursor<'_>, fields: &'static [Field]) -> Option<()> {
        c.object(
            |c, key| match fields.iter().find(|(name, _)| *name == key) {
                // Most of a body: stepped over without touching the path.
                Some((_, Shape::Whole)) => c.skip_value(),
                Some((_, shape)) => self.member(key, |walk| walk.value(c, *shape)),
                None => {
                    if !c.null()? {
                        self.unmodeled(key);
                        c.skip_value()?;
                    }
                    Some(())
                }
            },
        )
    }

    fn value(&mut self, c: &mut JsonCursor<'_>, shape: Shape) -> Option<()> {
        match (shape, c.peek()?) {
            (Shape::Object(fields), b'{') => self.object(c, fields),
            (Shape::Objects(fields), b'[') => self.objects(c, fields),
            (Shape::ObjectsOf(fields), b'[') => self.objects(c, fields()),
            _ => c.skip_value(),
        }
    }

    fn objects(&mut self, c: &mut JsonCursor<'_>, fields: &'static [Field]) -> Option<()> {
        let mut index = 0;
        c.array(|c| {
            index += 1;
            match c.peek()? {
                b'{' => self.element(index - 1, |walk| walk.object(c, fields)),
                _ => c.skip_value(),
            }
        })
    }

    fn value_object(&mut self, value: &Value, fields: &'static [Field]) {
        let Value::Object(map) = value else { return };
        for (key, inner) in map {
            match fields.iter().find(|(name, _)| name == key) {
                Some((_, shape)) => self.member(key, |walk| walk.value_shaped(inner, *shape)),
                None if inner.is_null() => {}
                None => self.unmodeled(key),
            }
        }
    }

    fn value_shaped(&mut self, value: &Value, shape: Shape) {
        let fields = match shape {
            Shape::Whole => return,
            Shape::Object(fields) => return self.value_object(value, fields),
            Shape::Objects(fields) => fields,
            Shape::ObjectsOf(fields) => fields(),
        };
        if let Value::Array(list) = value {
            for (i, element) in list.iter().enumerate() {
                self.element(i, |walk| walk.value_object(element, fields));
            }
        }
    }
}

/// What the field-list tests compare: the fields serde derives for a type,
/// and the names a list gives.
#[cfg(test)]
pub(crate) mod probe {
    use serde::de::{value::Error, Deserialize, Deserializer, Error as _, Visitor};

    use super::Field;

    /// A deserializer that only asks a type for the fields it declares:
    /// what serde's derive hands `deserialize_struct`.
    struct Probe<'f>(&'f mut &'static [&'static str]);

    impl<'de> Deserializer<'de> for Probe<'_> {
        type Error = Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
            Err(Error::custom("a struct was expected"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Error> {
            *self.0 = fields;
            Err(Error::custom("probed"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            enum identifier ignored_any
        }
    }

    /// The fields serde derives for `T`, sorted.
    pub(crate) fn declared<'de, T: Deserialize<'de>>() -> Vec<&'static str> {
        let mut fields: &'static [&'static str] = &[];
        let _ = T::deserialize(Probe(&mut fields));
        let mut fields = fields.to_vec();
        fields.sort_unstable();
        fields
    }

    /// The names `fields` gives, sorted.
    pub(crate) fn listed(fields: &[Field]) -> Vec<&'static str> {
        let mut names: Vec<_> = fields.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names
    }

    /// Panics unless each type declares exactly the fields its list names.
    pub(crate) fn assert_lists(pairs: &[(&str, Vec<&'static str>, &[Field])]) {
        for (name, declared, fields) in pairs {
            assert!(!declared.is_empty(), "{name} declares no fields");
            assert_eq!(declared, &listed(fields), "{name}");
        }
    }
}
