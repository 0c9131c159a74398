//! Counts written in decimal straight into a buffer.
//!
//! The stream writers put an index or two and a sequence number into every
//! event; through `write!` each goes through the formatter's machinery,
//! which cost a Messages backend's text delta about 880 instructions of
//! its 6.1 K (callgrind, 500-chunk stream, 2026-12-07), and through serde
//! its serializer's.
//!
//! ```
//! use wirebridge_wire::decimal::push_decimal;
//!
//! let mut out = b"\"index\":".to_vec();
//! push_decimal(&mut out, 1280);
//! assert_eq!(out, b"\"index\":1280");
//! ```

/// Appends `n` in decimal.
pub fn push_decimal(out: &mut Vec<u8>, n: u64) {
    // An index is most of what is written, and most are one digit.
    if n < 10 {
        out.push(b'0' + n as u8);
        return;
    }
    let mut digits = [0u8; 20];
    out.extend_from_slice(digits_of(n, &mut digits));
}

/// Appends `n` in decimal to text.
pub fn push_decimal_str(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    // Only ASCII digits are written, so this cannot fail.
    out.push_str(std::str::from_utf8(digits_of(n, &mut digits)).unwrap_or_default());
}

/// `n`'s digits, written at the end of `digits` (20 hold any `u64`).
fn digits_of(mut n: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &digits[at..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_display_writes() {
        for n in [0, 1, 9, 10, 99, 100, 1_280, 65_535, u64::MAX - 1, u64::MAX] {
            let mut bytes = b"x".to_vec();
            push_decimal(&mut bytes, n);
            assert_eq!(bytes, format!("x{n}").into_bytes());
            let mut text = String::from("y");
            push_decimal_str(&mut text, n);
            assert_eq!(text, format!("y{n}"));
        }
    }
}
