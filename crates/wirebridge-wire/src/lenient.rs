//! Readers for values servers write in more than one way.

use serde::{Deserialize, Deserializer};

/// A count written as an integer, a float (`12.0`) or `null`; negative and
/// non-finite values read as absent.
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<f64>::deserialize(d)?;
    Ok(value
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v as u64))
}
