//! Readers for values servers write in more than one way.

use std::fmt;

use serde::de::{self, Visitor};
use serde::Deserializer;

/// A count written as an integer (exact up to `u64::MAX`), a float (`12.0`)
/// or `null`; negative and non-finite values read as absent, floats beyond
/// the range saturate.
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Count;

    impl<'de> Visitor<'de> for Count {
        type Value = Option<u64>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a count")
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(u64::try_from(v).ok())
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            // `as` saturates: 1e30 reads as u64::MAX.
            Ok((v.is_finite() && v >= 0.0).then_some(v as u64))
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    d.deserialize_option(Count)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "super::count")]
        n: Option<u64>,
    }

    fn read(json: &str) -> Option<u64> {
        serde_json::from_str::<Probe>(json).unwrap().n
    }

    #[test]
    fn reads_every_spelling_of_a_count() {
        assert_eq!(read(r#"{"n":7}"#), Some(7));
        assert_eq!(read(r#"{"n":18446744073709551614}"#), Some(u64::MAX - 1));
        assert_eq!(read(r#"{"n":12.0}"#), Some(12));
        assert_eq!(read(r#"{"n":1e30}"#), Some(u64::MAX));
        assert_eq!(read(r#"{"n":-3}"#), None);
        assert_eq!(read(r#"{"n":null}"#), None);
        assert_eq!(read("{}"), None);
        assert!(serde_json::from_str::<Probe>(r#"{"n":"7"}"#).is_err());
    }
}
