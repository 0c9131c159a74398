//! A small JSON tree whose objects keep their keys in insertion order, so
//! the payloads read like the ones OpenAI sends (`id` first, `type` first…).
//! Values echoed from a request are kept as `serde_json::Value`.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

/// A JSON value built by the demo.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    /// A scalar, or a subtree echoed from a request.
    Value(Value),
    /// An array.
    Arr(Vec<Json>),
    /// An object with ordered keys.
    Obj(Obj),
}

/// A JSON object whose keys serialize in insertion order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Obj(Vec<(&'static str, Json)>);

impl Obj {
    /// An empty object.
    pub(crate) fn new() -> Self {
        Obj(Vec::new())
    }

    /// Append `key: value` (builder form).
    pub(crate) fn with(mut self, key: &'static str, value: impl Into<Json>) -> Self {
        self.set(key, value);
        self
    }

    /// Replace the value of `key`, or append it when absent.
    pub(crate) fn set(&mut self, key: &'static str, value: impl Into<Json>) {
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// Append every entry of `other`.
    pub(crate) fn extend(&mut self, other: Obj) {
        for (k, v) in other.0 {
            self.set(k, v);
        }
    }

    /// Serialize to a compact JSON string.
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// `null`.
pub(crate) fn null() -> Json {
    Json::Value(Value::Null)
}

/// An array of anything convertible to [`Json`].
pub(crate) fn arr<T: Into<Json>>(items: impl IntoIterator<Item = T>) -> Json {
    Json::Arr(items.into_iter().map(Into::into).collect())
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Value(v) => v.serialize(s),
            Json::Arr(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Obj(o) => o.serialize(s),
        }
    }
}

impl Serialize for Obj {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl From<Obj> for Json {
    fn from(o: Obj) -> Self {
        Json::Obj(o)
    }
}

impl From<Vec<Json>> for Json {
    fn from(items: Vec<Json>) -> Self {
        Json::Arr(items)
    }
}

impl From<Value> for Json {
    fn from(v: Value) -> Self {
        Json::Value(v)
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Self {
        Json::Value(Value::String(s.to_string()))
    }
}

impl From<&String> for Json {
    fn from(s: &String) -> Self {
        Json::Value(Value::String(s.clone()))
    }
}

impl From<String> for Json {
    fn from(s: String) -> Self {
        Json::Value(Value::String(s))
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Self {
        Json::Value(Value::Bool(b))
    }
}

impl From<u64> for Json {
    fn from(n: u64) -> Self {
        Json::Value(Value::from(n))
    }
}

impl From<usize> for Json {
    fn from(n: usize) -> Self {
        Json::Value(Value::from(n as u64))
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(v: Option<T>) -> Self {
        v.map_or_else(null, Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_insertion_order_and_set_replaces() {
        let mut o = Obj::new()
            .with("type", "x")
            .with("id", 3u64)
            .with("list", arr(["a", "b"]))
            .with("none", None::<String>)
            .with("echo", serde_json::json!({"b": 1, "a": 2}));
        o.set("id", "y");
        assert_eq!(
            o.to_json(),
            r#"{"type":"x","id":"y","list":["a","b"],"none":null,"echo":{"a":2,"b":1}}"#
        );
    }
}
