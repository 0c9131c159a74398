//! Parsing of the `id:` and `retry:` field values.

use std::str;

/// Replaces the last event ID, reusing the string's allocation.
pub(super) fn set_id(id: &mut String, value: &[u8]) {
    id.clear();
    match str::from_utf8(value) {
        Ok(s) => id.push_str(s),
        // The specification decodes the whole stream with replacement
        // characters; IDs are opaque tokens, so doing it here is harmless.
        Err(_) => id.push_str(&String::from_utf8_lossy(value)),
    }
}

/// Parses a `retry:` value: ASCII digits only, and it must fit in a `u64`.
pub(super) fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::parse_retry;

    #[test]
    fn retry_parsing() {
        assert_eq!(parse_retry(b"0"), Some(0));
        assert_eq!(parse_retry(b"3000"), Some(3000));
        assert_eq!(parse_retry(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_retry(b"18446744073709551616"), None);
        assert_eq!(parse_retry(b""), None);
        assert_eq!(parse_retry(b" 1"), None);
        assert_eq!(parse_retry(b"1.5"), None);
        assert_eq!(parse_retry(b"-1"), None);
    }
}
