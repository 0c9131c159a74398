//! Borrowing optional strings from the input.
//!
//! serde borrows a `Cow<'a, str>` field only when the field's type is
//! literally `Cow<'a, str>`; an `Option<Cow<'a, str>>` is always copied into
//! a fresh `String`. Fields read on every stream chunk (event types, ids,
//! model names) use [`opt_cow`] instead, which borrows whenever the string
//! holds no escapes.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};

/// A string field serde borrows, since its type is `Cow<'a, str>`.
#[derive(Deserialize)]
#[serde(transparent)]
struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);

/// Reads an optional string (absent, `null` or a string), borrowing it from
/// the input when it has no escapes.
pub(crate) fn opt_cow<'de: 'a, 'a, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Cow<'a, str>>, D::Error> {
    Ok(Option::<Borrowed<'a>>::deserialize(d)?.map(|b| b.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow, default, deserialize_with = "opt_cow")]
        s: Option<Cow<'a, str>>,
    }

    #[test]
    fn borrows_plain_strings_and_decodes_escaped_ones() {
        let p: Probe<'_> = serde_json::from_str(r#"{"s":"plain"}"#).unwrap();
        assert!(matches!(p.s, Some(Cow::Borrowed("plain"))));
        let p: Probe<'_> = serde_json::from_str(r#"{"s":"a\nb"}"#).unwrap();
        assert!(matches!(p.s, Some(Cow::Owned(ref s)) if s == "a\nb"));
        let p: Probe<'_> = serde_json::from_str(r#"{"s":null}"#).unwrap();
        assert!(p.s.is_none());
        let p: Probe<'_> = serde_json::from_str("{}").unwrap();
        assert!(p.s.is_none());
        let err = serde_json::from_str::<Probe<'_>>(r#"{"s":5}"#)
            .err()
            .unwrap();
        assert!(err.to_string().contains("expected a string"), "{err}");
    }
}
