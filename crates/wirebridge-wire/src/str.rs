//! [`Str`]: a string read from the input, borrowed when it can be.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A string field of a lenient type: borrowed from the input when it holds
/// no escapes, decoded into an owned `String` when it does.
///
/// serde borrows a `Cow<'a, str>` only when a field's type is literally
/// `Cow<'a, str>`; inside an `Option` or a `Vec` it always copies. Fields
/// read on every stream chunk (event types, ids, model names) are
/// `Option<Str<'a>>` instead, which borrows in every position.
///
/// ```
/// use wirebridge_wire::Str;
///
/// #[derive(serde::Deserialize)]
/// struct Event<'a> {
///     #[serde(borrow)]
///     kind: Option<Str<'a>>,
/// }
///
/// let event: Event<'_> = serde_json::from_str(r#"{"kind":"delta"}"#).unwrap();
/// let kind = event.kind.unwrap();
/// assert_eq!(kind, "delta");
/// assert!(kind.is_borrowed());
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Str<'a>(Cow<'a, str>);

impl<'a> Str<'a> {
    /// The string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the string points into the input (it held no escapes).
    pub fn is_borrowed(&self) -> bool {
        matches!(self.0, Cow::Borrowed(_))
    }

    /// The string as a `Cow`, still borrowed if it was.
    pub fn into_cow(self) -> Cow<'a, str> {
        self.0
    }

    /// An owned copy that no longer borrows the input.
    pub fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl Deref for Str<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Str<'_> {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Str<'_> {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'a> From<&'a str> for Str<'a> {
    fn from(s: &'a str) -> Self {
        Str(Cow::Borrowed(s))
    }
}

impl From<String> for Str<'_> {
    fn from(s: String) -> Self {
        Str(Cow::Owned(s))
    }
}

impl<'a> From<Cow<'a, str>> for Str<'a> {
    fn from(s: Cow<'a, str>) -> Self {
        Str(s)
    }
}

impl<'a> From<Str<'a>> for Cow<'a, str> {
    fn from(s: Str<'a>) -> Self {
        s.0
    }
}

impl PartialEq<str> for Str<'_> {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Str<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Str<'_>> for str {
    fn eq(&self, other: &Str<'_>) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Str<'_>> for &str {
    fn eq(&self, other: &Str<'_>) -> bool {
        **self == *other.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// The one position in which serde borrows a `Cow`: a field whose
        /// type is literally `Cow<'a, str>`.
        #[derive(Deserialize)]
        #[serde(transparent)]
        struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);

        Borrowed::deserialize(d).map(|b| Str(b.0))
    }
}

impl Serialize for Str<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow)]
        s: Option<Str<'a>>,
        #[serde(borrow, default)]
        list: Vec<Str<'a>>,
    }

    #[test]
    fn borrows_plain_strings_and_decodes_escaped_ones() {
        let p: Probe<'_> = serde_json::from_str(r#"{"s":"plain","list":["a","b\tc"]}"#).unwrap();
        let s = p.s.unwrap();
        assert!(s.is_borrowed());
        assert_eq!(s, "plain");
        assert!(p.list[0].is_borrowed());
        assert!(!p.list[1].is_borrowed());
        assert_eq!(p.list[1], "b\tc");
        let p: Probe<'_> = serde_json::from_str(r#"{"s":"a\nb"}"#).unwrap();
        let s = p.s.unwrap();
        assert!(!s.is_borrowed());
        assert_eq!(s.as_str(), "a\nb");
        let p: Probe<'_> = serde_json::from_str(r#"{"s":null}"#).unwrap();
        assert!(p.s.is_none());
        let p: Probe<'_> = serde_json::from_str("{}").unwrap();
        assert!(p.s.is_none());
        let err = serde_json::from_str::<Probe<'_>>(r#"{"s":5}"#)
            .err()
            .unwrap();
        assert!(err.to_string().contains("expected a string"), "{err}");
    }

    #[test]
    fn reads_and_writes_like_a_string() {
        let s = Str::from("héllo");
        assert_eq!(s.len(), "héllo".len());
        assert_eq!(format!("{s} {s:?}"), "héllo \"héllo\"");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"héllo\"");
        assert_eq!(Cow::from(s.clone()), "héllo");
        assert_eq!(s.into_owned(), "héllo");
    }
}
